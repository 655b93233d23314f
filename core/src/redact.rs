//! Secrets taken out of what a service answered before anyone else reads it. A service that
//! echoes its request (an error page, a debug endpoint, a body sent back as an object's keys)
//! must not hand the secret it was sent to a plugin, the model or a log: every place it appears
//! becomes `[redacted]`. One rule for each answer that crossed a secret: a declared request's
//! `{{secret:name}}` headers and the campus client's sessions.

use serde_json::Value;

/// The secret values one request carried.
pub(crate) struct Redact(Vec<String>);

impl Redact {
    const MARK: &'static str = "[redacted]";

    pub(crate) fn new(mut secrets: Vec<String>) -> Self {
        secrets.retain(|s| !s.is_empty());
        // Longest first, so a secret that holds another is removed whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        // In a text answer a secret may stand JSON-escaped.
        let escaped: Vec<String> = secrets
            .iter()
            .filter_map(|s| serde_json::to_string(s).ok())
            .map(|quoted| quoted[1..quoted.len() - 1].to_owned())
            .filter(|e| !secrets.contains(e))
            .collect();
        secrets.extend(escaped);
        Self(secrets)
    }

    /// `text` with every secret in it replaced.
    pub(crate) fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.0 {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), Self::MARK);
            }
        }
        out
    }

    /// `value` with every secret replaced wherever it holds one: its strings, its objects'
    /// keys, and its numbers (a secret of digits; the number then becomes a string).
    pub(crate) fn value(&self, value: Value) -> Value {
        if self.0.is_empty() {
            return value;
        }
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Number(n) => {
                let shown = n.to_string();
                let redacted = self.text(&shown);
                if redacted == shown {
                    Value::Number(n)
                } else {
                    Value::String(redacted)
                }
            }
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.value(v)).collect()),
            Value::Object(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (self.text(&k), self.value(v)))
                    .collect(),
            ),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_secret_is_redacted_from_strings_keys_numbers_and_escaped_text() {
        let redact = Redact::new(vec!["123456".into(), "a\"b".into(), String::new()]);
        assert_eq!(
            redact.value(json!({"pin": 123456, "123456": ["x a\"b y", 7]})),
            json!({"pin": "[redacted]", "[redacted]": ["x [redacted] y", 7]})
        );
        assert_eq!(redact.text(r#"{"k": "a\"b"}"#), r#"{"k": "[redacted]"}"#);
    }

    #[test]
    fn a_secret_holding_another_is_redacted_whole() {
        let redact = Redact::new(vec!["tok".into(), "tok.signature".into()]);
        assert_eq!(redact.text("Bearer tok.signature"), "Bearer [redacted]");
    }
}
