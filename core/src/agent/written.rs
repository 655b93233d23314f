//! What an answer the model wrote in words really is. Small and some hosted models write a tool
//! call as text — a ```json block, bare JSON, Qwen's `<tool_call>` — instead of the API's
//! `tool_calls`, or echo a `<tool_response>`; shown as prose, the student would read the JSON.
//! Pure: the turn loop decides what to do with what this finds.

use serde_json::{Map, Value};

/// An answer's text, read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Written {
    /// Words for the student (or nothing at all).
    Words,
    /// Wholly one tool call: the name the model wrote and its input.
    Call { name: String, input: Value },
    /// Raw data or a tool protocol's tags where an answer should be: never shown as one.
    Unreadable,
}

/// The names a written call's name may be under, and its input's.
const NAME_KEYS: [&str; 3] = ["name", "tool", "tool_name"];
const INPUT_KEYS: [&str; 4] = ["arguments", "parameters", "args", "input"];
/// Keys a call may carry beside its name and input without being anything more than a call.
const CALL_KEYS: [&str; 2] = ["type", "id"];
/// Tags of the tool protocols models are trained on: an answer holding one is no answer.
const TAGS: [&str; 4] = [
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
];

/// Reads `text`: a call when it is wholly one (in a fence or `<tool_call>` tags, or bare), data
/// when it is wholly a JSON object or array or holds a tool protocol's tags, words otherwise.
pub(crate) fn read(text: &str) -> Written {
    let inner = unwrapped(text.trim());
    if let Ok(value) = serde_json::from_str::<Value>(inner) {
        return match value {
            Value::Object(object) => call_of(object).unwrap_or(Written::Unreadable),
            Value::Array(_) => Written::Unreadable,
            // A number, a quoted word, `true`: an answer, however terse.
            _ => Written::Words,
        };
    }
    if TAGS.iter().any(|tag| text.contains(tag)) {
        return Written::Unreadable;
    }
    Written::Words
}

/// The text inside one ``` fence (its language tag dropped) or one `<tool_call>` pair that
/// make up the whole of `text`; `text` itself otherwise.
fn unwrapped(text: &str) -> &str {
    if let Some(body) = text
        .strip_prefix("<tool_call>")
        .and_then(|t| t.strip_suffix("</tool_call>"))
    {
        return body.trim();
    }
    let Some(body) = text.strip_prefix("```").and_then(|t| t.strip_suffix("```")) else {
        return text;
    };
    // The fence's first line is its language tag (`json`), possibly empty.
    match body.split_once('\n') {
        Some((tag, rest)) if !tag.contains(['{', '[']) => rest.trim(),
        _ => body.trim(),
    }
}

/// `{"name": …, "arguments": {…}}` and its usual spellings (`parameters`, `args`, `input`;
/// `tool`; arguments as a JSON string; the API's own `{"type": "function", "function": {…}}`),
/// and nothing else beside them.
fn call_of(mut object: Map<String, Value>) -> Option<Written> {
    if let Some(Value::Object(function)) = object.remove("function") {
        let rest_is_bare = object.keys().all(|k| CALL_KEYS.contains(&k.as_str()));
        return rest_is_bare.then(|| call_of(function)).flatten();
    }
    let name_key = NAME_KEYS.iter().find(|k| object.contains_key(**k))?;
    let Some(Value::String(name)) = object.remove(*name_key) else {
        return None;
    };
    let input = match INPUT_KEYS.iter().find(|k| object.contains_key(**k)) {
        Some(key) => match object.remove(*key)? {
            Value::Object(input) => Value::Object(input),
            Value::String(text) => match serde_json::from_str(&text).ok()? {
                Value::Object(input) => Value::Object(input),
                _ => return None,
            },
            _ => return None,
        },
        None => Value::Object(Map::new()),
    };
    let bare = object.keys().all(|k| CALL_KEYS.contains(&k.as_str()));
    bare.then_some(Written::Call { name, input })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, input: Value) -> Written {
        Written::Call {
            name: name.into(),
            input,
        }
    }

    #[test]
    fn a_call_written_as_text_is_read_in_each_usual_spelling() {
        let card = json!({"card": 1});
        for text in [
            "```json\n{\"name\": \"wallet__cardBalance\", \"arguments\": {\"card\": 1}}\n```",
            "```\n{\"name\": \"wallet__cardBalance\", \"parameters\": {\"card\": 1}}\n```",
            "{\"name\": \"wallet__cardBalance\", \"arguments\": \"{\\\"card\\\": 1}\"}",
            "<tool_call>\n{\"name\": \"wallet__cardBalance\", \"arguments\": {\"card\": 1}}\n</tool_call>",
            "{\"type\": \"function\", \"function\": {\"name\": \"wallet__cardBalance\", \"arguments\": {\"card\": 1}}}",
            "  {\"tool\": \"wallet__cardBalance\", \"args\": {\"card\": 1}}  ",
        ] {
            assert_eq!(
                read(text),
                call("wallet__cardBalance", card.clone()),
                "{text}"
            );
        }
        assert_eq!(
            read("{\"name\": \"wallet__cardBalance\"}"),
            call("wallet__cardBalance", json!({}))
        );
    }

    #[test]
    fn data_and_protocol_tags_are_unreadable_and_words_are_words() {
        for text in [
            "{\"balance\": 12.5}",
            "```json\n[1, 2]\n```",
            "{\"name\": \"wallet__cardBalance\", \"arguments\": {}, \"note\": \"extra\"}",
            "{\"name\": \"wallet__cardBalance\", \"arguments\": [1]}",
            "<tool_response>{\"balance\": 12.5}</tool_response>",
            "余额是 12.5 元。<tool_call>",
        ] {
            assert_eq!(read(text), Written::Unreadable, "{text}");
        }
        for text in [
            "",
            "余额是 12.5 元。",
            "42",
            "Here it is:\n```json\n{\"balance\": 12.5}\n```",
        ] {
            assert_eq!(read(text), Written::Words, "{text}");
        }
    }
}
