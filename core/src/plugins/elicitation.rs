//! A remote server asking the student for something while one of its tools runs (MCP
//! elicitation, the 2025-11-25 specification): a form of a few plain fields, or a page to open
//! (URL mode). What this product decides:
//!
//! - Only a call someone is there for may ask: the student's own tap or the agent's turn. A
//!   scheduled call, or a request that comes with no call running, is declined.
//! - A form never asks for a password or another secret: the specification says such things go
//!   through URL mode, so a form with a field that looks like one is refused before the student
//!   sees it ([`Elicitation::from_request`]).
//! - The server's words are third-party text: cleaned and cut like a remote tool's
//!   description; a page is shown with its host plainly, and only an https page (or, for a
//!   development tool, a page on this machine) is offered at all.
//! - An accepted form is checked against the server's own schema before it is sent back.
//! - A turn that has read untrusted content says so on the form.

use serde_json::{Map, Value};
use url::Url;

use crate::registry::server_words;

/// The most characters of a server's message kept.
const MESSAGE_CAP: usize = 1024;
/// The most characters of a field's title or description kept.
const FIELD_CAP: usize = 256;

/// What a remote server asks for, as the shell shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Elicitation {
    /// The remote plugin whose server asks, and its title.
    pub plugin: String,
    pub plugin_title: String,
    /// The server's own words, cleaned and cut.
    pub message: String,
    pub kind: ElicitationKind,
    /// The conversation whose call is running, if any.
    pub conversation: Option<String>,
    /// The turn has read untrusted content: the form says so.
    pub tainted: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationKind {
    /// Fields to fill in; `schema` is the server's, which an answer is checked against.
    Form { fields: Vec<Field>, schema: Value },
    /// A page to open in the browser; `host` is shown plainly.
    Page { url: String, host: String },
}

/// One field of a form.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The key the answer is sent under.
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    pub input: Input,
    pub required: bool,
    /// The server's default, filled in.
    pub default: Option<Value>,
}

/// What kind of input a field takes.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// Text; `format` is the schema's (`email`, `uri`, `date`, `date-time`), if any.
    Text {
        format: Option<String>,
    },
    Number {
        integer: bool,
    },
    Boolean,
    /// One of `options` (value, label), or several when `multiple`.
    Choice {
        options: Vec<(String, String)>,
        multiple: bool,
    },
}

/// How the student answered.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationAnswer {
    /// The form's values, or (a page) that the student opened it.
    Accept(Map<String, Value>),
    /// The student would rather not; the tool goes on without it.
    Decline,
    /// The student stopped the whole operation.
    Cancel,
}

/// Words that name a secret in a field's name, title or description.
const SECRETS: &[&str] = &[
    "password",
    "passwd",
    "passcode",
    "passphrase",
    "pin code",
    "secret",
    "api key",
    "apikey",
    "access token",
    "one-time code",
    "verification code",
    "密码",
    "口令",
    "验证码",
    "密钥",
];

impl Elicitation {
    /// Reads a form's schema (MCP: an object of primitive properties), refusing one that asks
    /// for a secret or that is not such a form, in words for the server.
    pub fn form(schema: &Value) -> Result<Vec<Field>, String> {
        let properties = schema["properties"]
            .as_object()
            .ok_or("the requested schema has no properties")?;
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::with_capacity(properties.len());
        for (name, property) in properties {
            let title = property["title"].as_str().unwrap_or(name);
            let description = property["description"].as_str();
            let words = format!("{name} {title} {}", description.unwrap_or_default())
                .to_lowercase()
                .replace(['_', '-'], " ");
            let secret = property["format"] == "password"
                || SECRETS.iter().any(|s| words.contains(s))
                || words.split_whitespace().any(|w| w == "pin" || w == "otp");
            if secret {
                return Err(format!(
                    "field {name} asks for a password or another secret, which the app never \
                     asks for in a form; use URL mode for it"
                ));
            }
            fields.push(Field {
                name: name.clone(),
                title: server_words(title, FIELD_CAP),
                description: description.map(|d| server_words(d, FIELD_CAP)),
                input: input(name, property)?,
                required: required.contains(&name.as_str()),
                default: property.get("default").cloned(),
            });
        }
        Ok(fields)
    }

    /// The form's answer with nothing typed: each field's default.
    pub fn defaults(fields: &[Field]) -> Map<String, Value> {
        fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.default.clone()?)))
            .collect()
    }

    /// Whether `answer` fits the server's `schema`; the first misfit, naming the field.
    pub fn check(schema: &Value, answer: &Map<String, Value>) -> Result<(), String> {
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| format!("the server's form does not compile: {e}"))?;
        let answer = Value::Object(answer.clone());
        match validator.iter_errors(&answer).next() {
            None => Ok(()),
            Some(e) => {
                let at = e.instance_path().to_string();
                let field = at.trim_start_matches('/');
                Err(match field.is_empty() {
                    true => format!("the answer does not fit the form: {e}"),
                    false => format!("{field}: {e}"),
                })
            }
        }
    }

    /// The page of a URL-mode request, if the app may offer it: https (or, `loopback`, a page
    /// on this machine over http too), with a host.
    pub fn page(url: &str, loopback: bool) -> Result<(String, String), String> {
        let parsed = Url::parse(url).map_err(|e| format!("{url} is not a URL ({e})"))?;
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let local = matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]");
        match parsed.scheme() {
            "https" if !host.is_empty() => Ok((parsed.to_string(), host)),
            "http" if loopback && local => Ok((parsed.to_string(), host)),
            _ => Err(format!(
                "the app opens only https pages for a server, not {url}"
            )),
        }
    }

    /// The server's message as the app keeps it.
    pub fn message(text: &str) -> String {
        server_words(text, MESSAGE_CAP)
    }
}

/// The input of field `name`, from its schema.
fn input(name: &str, property: &Value) -> Result<Input, String> {
    let labels = |values: &[Value], titles: Option<&Vec<Value>>| -> Vec<(String, String)> {
        values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let value = v.as_str()?.to_owned();
                let label = titles
                    .and_then(|t| t.get(i))
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), |l| server_words(l, FIELD_CAP));
                Some((value, label))
            })
            .collect()
    };
    // Titled choices: `oneOf`/`anyOf` of `{const, title}`.
    let titled = |options: &Value| -> Option<Vec<(String, String)>> {
        let options = options.as_array()?;
        Some(
            options
                .iter()
                .filter_map(|o| {
                    let value = o["const"].as_str()?.to_owned();
                    let label = o["title"].as_str().unwrap_or(&value);
                    Some((value.clone(), server_words(label, FIELD_CAP)))
                })
                .collect(),
        )
    };
    match property["type"].as_str() {
        Some("string") => {
            if let Some(values) = property["enum"].as_array() {
                let titles = property["enumNames"].as_array();
                return Ok(Input::Choice {
                    options: labels(values, titles),
                    multiple: false,
                });
            }
            if let Some(options) = titled(&property["oneOf"]) {
                return Ok(Input::Choice {
                    options,
                    multiple: false,
                });
            }
            Ok(Input::Text {
                format: property["format"].as_str().map(str::to_owned),
            })
        }
        Some("number") => Ok(Input::Number { integer: false }),
        Some("integer") => Ok(Input::Number { integer: true }),
        Some("boolean") => Ok(Input::Boolean),
        Some("array") => {
            let items = &property["items"];
            let options = match items["enum"].as_array() {
                Some(values) => labels(values, None),
                None => titled(&items["anyOf"])
                    .or_else(|| titled(&items["oneOf"]))
                    .ok_or_else(|| format!("field {name} is a list with no choices"))?,
            };
            Ok(Input::Choice {
                options,
                multiple: true,
            })
        }
        other => Err(format!(
            "field {name} is of type {}, which a form does not take",
            other.unwrap_or("none")
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_field_that_asks_for_a_secret_refuses_the_form() {
        for property in [
            json!({"type": "string", "title": "Password"}),
            json!({"type": "string", "format": "password"}),
            json!({"type": "string", "title": "校园卡密码"}),
            json!({"type": "string", "description": "your PIN"}),
            json!({"type": "string", "title": "API key"}),
        ] {
            let schema = json!({"type": "object", "properties": {"x": property}});
            let refused = Elicitation::form(&schema).unwrap_err();
            assert_eq!(
                refused,
                "field x asks for a password or another secret, which the app never asks for \
                 in a form; use URL mode for it"
            );
        }
        // A word that only contains "pin" is not one.
        let schema = json!({"type": "object", "properties": {
            "shipping": {"type": "string", "title": "Shipping address"}}});
        assert_eq!(Elicitation::form(&schema).unwrap().len(), 1);
    }

    #[test]
    fn an_answer_is_checked_against_the_servers_schema_naming_the_field() {
        let schema = json!({"type": "object", "properties": {
            "seats": {"type": "integer", "minimum": 1, "maximum": 4}}, "required": ["seats"]});
        let answer = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            Elicitation::check(&schema, &answer(json!({"seats": 2}))),
            Ok(())
        );
        assert_eq!(
            Elicitation::check(&schema, &answer(json!({"seats": 9}))),
            Err("seats: 9 is greater than the maximum of 4".into())
        );
    }

    #[test]
    fn only_an_https_page_is_offered() {
        assert_eq!(
            Elicitation::page("https://pay.example.com/confirm?x=1", false),
            Ok((
                "https://pay.example.com/confirm?x=1".into(),
                "pay.example.com".into()
            ))
        );
        assert!(Elicitation::page("http://pay.example.com/", true).is_err());
        assert!(Elicitation::page("javascript:alert(1)", false).is_err());
        assert!(Elicitation::page("http://127.0.0.1:9/x", true).is_ok());
        assert!(Elicitation::page("http://127.0.0.1:9/x", false).is_err());
    }
}
