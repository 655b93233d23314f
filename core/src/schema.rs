//! Input validation against a tool's JSON Schema (what zod emits), with a maintained validator.
//! Every error names the field it is about, so the agent and the user know what to fix.

use std::sync::OnceLock;

use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// A compiled input schema; validating is allocation-free for valid input.
#[derive(Debug)]
pub struct InputSchema {
    source: Value,
    validator: OnceLock<Result<Validator, String>>,
}

impl InputSchema {
    /// Compiles `schema` now; an invalid schema is described in the error.
    pub fn compile(schema: Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string())?;
        Ok(Self {
            source: schema,
            validator: OnceLock::from(Ok(validator)),
        })
    }

    /// A schema that was compiled once already (when its plugin was installed), compiled again
    /// on its first use, so that opening a data directory does not compile every schema.
    pub fn deferred(schema: Value) -> Self {
        Self {
            source: schema,
            validator: OnceLock::new(),
        }
    }

    fn validator(&self) -> Result<&Validator, &str> {
        self.validator
            .get_or_init(|| jsonschema::validator_for(&self.source).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }

    /// The schema as written, for the model's tool list.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// `Ok` when `input` is valid; otherwise every problem, each naming its field, joined by `; `.
    pub fn validate(&self, input: &Value) -> Result<(), String> {
        // Fail closed: a schema that no longer compiles accepts nothing.
        let validator = self
            .validator()
            .map_err(|e| format!("the tool's schema is not valid: {e}"))?;
        if validator.is_valid(input) {
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(input)
            .map(|e| {
                let field = field_name(e.instance_path().as_str());
                // The value is the caller's (the model's) and may be huge: a problem quotes at
                // most an excerpt of it (issue: a refusal must not echo a 40,000-character
                // argument back to the model).
                let value = excerpt(e.instance());
                if let Some(example) = self.pattern_example(&e) {
                    let value = value.unwrap_or_else(|| e.instance().to_string());
                    return format!("{field}: {value} is not written like {example}");
                }
                match value {
                    None => format!("{field}: {e}"),
                    Some(short) => format!("{field}: {}", e.masked_with(short)),
                }
            })
            .collect();
        Err(problems.join("; "))
    }
}

impl InputSchema {
    /// For a value that does not match a pattern, the first of the schema's `examples` beside
    /// that pattern: a model copies an example, where it misreads a regex (`2026-12-04`, not
    /// `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`). None for any other problem, or a pattern with no example.
    fn pattern_example(&self, error: &jsonschema::ValidationError<'_>) -> Option<String> {
        if !matches!(error.kind(), ValidationErrorKind::Pattern { .. }) {
            return None;
        }
        let path = error.schema_path().as_str();
        let parent = path.strip_suffix("/pattern")?;
        match self.source.pointer(parent)?.get("examples")?.get(0)? {
            Value::String(example) => Some(example.clone()),
            _ => None,
        }
    }
}

/// The longest value a problem quotes whole, in characters of its JSON.
const QUOTED_CHARS: usize = 80;

/// `None` when the value's JSON is short enough to quote whole; else its first characters and
/// how long it is.
fn excerpt(value: &Value) -> Option<String> {
    let text = value.to_string();
    let (byte, _) = text.char_indices().nth(QUOTED_CHARS)?;
    let total = text.chars().count();
    Some(format!("{}… ({total} characters)", &text[..byte]))
}

/// `/items/0/name` → `input.items.0.name`; the root is `input`.
fn field_name(pointer: &str) -> String {
    let mut name = String::from("input");
    for segment in pointer.split('/').skip(1) {
        name.push('.');
        name.push_str(&segment.replace("~1", "/").replace("~0", "~"));
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn amount_schema() -> InputSchema {
        InputSchema::compile(json!({
            "type": "object",
            "properties": {"amountYuan": {"type": "number", "minimum": 1, "maximum": 500}},
            "required": ["amountYuan"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn valid_input_passes() {
        assert_eq!(amount_schema().validate(&json!({"amountYuan": 50})), Ok(()));
    }

    #[test]
    fn a_bad_value_names_its_field() {
        let err = amount_schema()
            .validate(&json!({"amountYuan": 900}))
            .unwrap_err();
        assert_eq!(
            err,
            "input.amountYuan: 900 is greater than the maximum of 500"
        );
    }

    #[test]
    fn a_problem_quotes_a_long_value_as_an_excerpt() {
        let schema = InputSchema::compile(json!({
            "type": "object",
            "properties": {"item": {"type": "string", "maxLength": 10}}
        }))
        .unwrap();
        let long = "x".repeat(40_000);
        let err = schema.validate(&json!({"item": long})).unwrap_err();
        assert_eq!(
            err,
            format!(
                "input.item: \"{}… (40002 characters) is longer than 10 characters",
                "x".repeat(79)
            )
        );
    }

    #[test]
    fn a_value_off_its_pattern_is_told_the_schemas_example_not_the_regex() {
        // issue 44: a format error gives an example (2026-12-04) rather than quoting a regex.
        let schema = InputSchema::compile(json!({
            "type": "object",
            "properties": {
                "from": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
                         "examples": ["2026-12-04"]},
                "code": {"type": "string", "pattern": "^[0-9]{6}$"}
            }
        }))
        .unwrap();
        assert_eq!(
            schema.validate(&json!({"from": "2026/11/01"})).unwrap_err(),
            "input.from: \"2026/11/01\" is not written like 2026-12-04"
        );
        // Without an example the pattern is all there is to say.
        assert_eq!(
            schema.validate(&json!({"code": "12a"})).unwrap_err(),
            "input.code: \"12a\" does not match \"^[0-9]{6}$\""
        );
    }

    #[test]
    fn a_missing_field_is_named() {
        let err = amount_schema().validate(&json!({})).unwrap_err();
        assert_eq!(err, "input: \"amountYuan\" is a required property");
    }

    #[test]
    fn a_nested_field_is_named_by_its_path() {
        let schema = InputSchema::compile(json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {
                "type": "object", "properties": {"name": {"type": "string"}}}}}
        }))
        .unwrap();
        let err = schema
            .validate(&json!({"items": [{"name": 3}]}))
            .unwrap_err();
        assert_eq!(err, "input.items.0.name: 3 is not of type \"string\"");
    }

    #[test]
    fn a_deferred_schema_validates_the_same_and_a_broken_one_accepts_nothing() {
        let deferred = InputSchema::deferred(amount_schema().source().clone());
        assert_eq!(deferred.validate(&json!({"amountYuan": 50})), Ok(()));
        assert_eq!(
            deferred.validate(&json!({})),
            Err("input: \"amountYuan\" is a required property".into())
        );
        let broken = InputSchema::deferred(json!({"type": "no-such-type"}));
        assert!(
            broken
                .validate(&json!({}))
                .unwrap_err()
                .starts_with("the tool's schema is not valid: ")
        );
    }

    #[test]
    fn an_invalid_schema_does_not_compile() {
        let err = InputSchema::compile(json!({"type": "no-such-type"})).unwrap_err();
        assert!(err.contains("no-such-type"), "{err}");
    }
}
