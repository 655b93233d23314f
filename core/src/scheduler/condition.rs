//! The condition language of check jobs, and the notification templates filled from a result.
//!
//! A condition is JSON data:
//!
//! ```text
//! {"path": P, "op": "lt" | "le" | "gt" | "ge", "value": <number>, "new"?: bool}
//! {"path": P, "op": "eq" | "ne", "value": <any JSON>, "new"?: bool}
//! {"path": P, "op": "contains", "value": <string>, "new"?: bool}
//! {"path": P, "op": "exists", "new"?: bool}
//! {"path": P, "op": "changed"}
//! {"all": [<condition>, …]}   {"any": [<condition>, …]}   {"not": <condition>}
//! ```
//!
//! A path `P` selects values in the tool's result: keys joined by `.`, `[n]` for an array
//! element, `[*]` for every element (`balanceYuan`, `crowdPercent.学一食堂`, `posts[*].title`).
//! - Before any `[*]`, every step must exist: a missing key is an error naming the path (the
//!   tool answered with something else, e.g. a status object), not a quiet "false". After a
//!   `[*]`, elements without the rest of the path are skipped.
//! - A comparison holds when ANY selected value satisfies it (so `posts[*].title contains 讲座`
//!   means "some title contains 讲座"); `not` turns that into "none". A selected value of the
//!   wrong type (a string where `lt` needs a number) is an error naming the path.
//! - Numbers compare as numbers (`20` equals `20.0`); `contains` is a substring test on a
//!   string, or membership in an array.
//! - `"new": true` considers only values that the previous run did not select at this path:
//!   `{"path": "posts[*].title", "op": "contains", "value": "讲座", "new": true}` is "a new
//!   notice matching 讲座", and on `balanceYuan lt 20` it fires once per new low balance instead
//!   of on every run. On the first run every value is new.
//! - `changed` holds when the values selected at the path differ from the previous run's. On
//!   the first run nothing has changed: that run records the baseline.
//! - Every leaf is evaluated (no short-circuit), so each run records the values of every path
//!   that `changed` and `new` compare with next time.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::JobError;

/// The values each path selected at the previous run, by path text.
pub type Memory = BTreeMap<String, Vec<Value>>;

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
    Each,
}

/// A parsed path into a tool result.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    text: String,
    steps: Vec<Step>,
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Path {
    /// The top-level field of the result the path starts at, when it starts at one.
    pub fn first_key(&self) -> Option<&str> {
        match self.steps.first() {
            Some(Step::Key(key)) => Some(key),
            _ => None,
        }
    }

    pub fn parse(field: &str, text: &str) -> Result<Path, JobError> {
        let fail = |why: String| JobError::new(field, format!("\"{text}\" is not a path: {why}"));
        let mut steps = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        let mut expect_key = true;
        while i < chars.len() {
            match chars[i] {
                '[' => {
                    let close = chars[i..]
                        .iter()
                        .position(|c| *c == ']')
                        .map(|p| p + i)
                        .ok_or_else(|| {
                            fail(format!("\"[\" at character {} is not closed", i + 1))
                        })?;
                    let inner: String = chars[i + 1..close].iter().collect();
                    if inner == "*" {
                        steps.push(Step::Each);
                    } else {
                        let n = inner.parse::<usize>().map_err(|_| {
                            fail(format!("\"[{inner}]\" is neither [*] nor an index [n]"))
                        })?;
                        steps.push(Step::Index(n));
                    }
                    i = close + 1;
                    expect_key = false;
                }
                '.' if !expect_key => {
                    i += 1;
                    expect_key = true;
                    if i == chars.len() {
                        return Err(fail("it ends with \".\"".into()));
                    }
                }
                _ if expect_key => {
                    let end = chars[i..]
                        .iter()
                        .position(|c| matches!(c, '.' | '[' | ']' | '{' | '}'))
                        .map_or(chars.len(), |p| p + i);
                    if end == i {
                        return Err(fail(format!("an empty key at character {}", i + 1)));
                    }
                    steps.push(Step::Key(chars[i..end].iter().collect()));
                    i = end;
                    expect_key = false;
                }
                c => return Err(fail(format!("unexpected \"{c}\" at character {}", i + 1))),
            }
        }
        if steps.is_empty() {
            return Err(fail("it is empty".into()));
        }
        Ok(Path {
            text: text.to_owned(),
            steps,
        })
    }

    /// The values this path selects in `result`; `field` names the path in errors.
    pub fn select<'a>(&self, field: &str, result: &'a Value) -> Result<Vec<&'a Value>, JobError> {
        let mut current: Vec<&Value> = vec![result];
        let mut fanned = false;
        for step in &self.steps {
            let mut next = Vec::with_capacity(current.len());
            for value in current {
                let found = match step {
                    Step::Key(k) => value.get(k.as_str()),
                    Step::Index(n) => value.as_array().and_then(|a| a.get(*n)),
                    Step::Each => match value.as_array() {
                        Some(items) => {
                            next.extend(items.iter());
                            continue;
                        }
                        None if fanned => None,
                        None => {
                            return Err(JobError::new(
                                field,
                                format!("\"{}\": the result has no array here", self.text),
                            ));
                        }
                    },
                };
                match found {
                    Some(v) => next.push(v),
                    None if fanned => {}
                    None => {
                        return Err(JobError::new(
                            field,
                            format!("\"{}\" is not in the result", self.text),
                        ));
                    }
                }
            }
            fanned |= *step == Step::Each;
            current = next;
        }
        Ok(current)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Contains,
    Exists,
    Changed,
}

impl Op {
    fn parse(name: &str) -> Option<Op> {
        Some(match name {
            "lt" => Op::Lt,
            "le" => Op::Le,
            "gt" => Op::Gt,
            "ge" => Op::Ge,
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "contains" => Op::Contains,
            "exists" => Op::Exists,
            "changed" => Op::Changed,
            _ => return None,
        })
    }
}

/// A checked condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    Leaf {
        field: String,
        path: Path,
        op: Op,
        value: Value,
        new: bool,
    },
    All(Vec<Condition>),
    Any(Vec<Condition>),
    Not(Box<Condition>),
}

impl Condition {
    /// Each leaf's field (`check.when.all[0]`) and path.
    pub fn paths(&self) -> Vec<(&str, &Path)> {
        match self {
            Condition::Leaf { field, path, .. } => vec![(field.as_str(), path)],
            Condition::All(items) | Condition::Any(items) => {
                items.iter().flat_map(Condition::paths).collect()
            }
            Condition::Not(inner) => inner.paths(),
        }
    }

    /// Checks a condition written at `field` (e.g. `check.when`); errors name the exact field.
    pub fn parse(field: &str, json: &Value) -> Result<Condition, JobError> {
        let object = json.as_object().ok_or_else(|| {
            JobError::new(field, format!("expected a condition object, got {json}"))
        })?;
        for combinator in ["all", "any", "not"] {
            if let Some(inner) = object.get(combinator) {
                if object.len() != 1 {
                    return Err(JobError::new(
                        field,
                        format!("\"{combinator}\" stands alone in its object"),
                    ));
                }
                let here = format!("{field}.{combinator}");
                if combinator == "not" {
                    return Ok(Condition::Not(Box::new(Condition::parse(&here, inner)?)));
                }
                let items = inner.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
                    JobError::new(&here, "expected a non-empty array of conditions")
                })?;
                let parsed = items
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Condition::parse(&format!("{here}[{i}]"), c))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(if combinator == "all" {
                    Condition::All(parsed)
                } else {
                    Condition::Any(parsed)
                });
            }
        }
        if let Some(unknown) = object
            .keys()
            .find(|k| !matches!(k.as_str(), "path" | "op" | "value" | "new"))
        {
            return Err(JobError::new(
                &format!("{field}.{unknown}"),
                "unknown field; a condition has path, op, value and new, or is one of all, any, not",
            ));
        }
        let path_field = format!("{field}.path");
        let path_text = object.get("path").and_then(Value::as_str).ok_or_else(|| {
            JobError::new(&path_field, "expected a path string, e.g. \"balanceYuan\"")
        })?;
        let path = Path::parse(&path_field, path_text)?;
        let op_field = format!("{field}.op");
        let op_name = object.get("op").and_then(Value::as_str).ok_or_else(|| {
            JobError::new(
                &op_field,
                "expected one of lt, le, gt, ge, eq, ne, contains, exists, changed",
            )
        })?;
        let op = Op::parse(op_name).ok_or_else(|| {
            JobError::new(
                &op_field,
                format!(
                    "\"{op_name}\" is not one of lt, le, gt, ge, eq, ne, contains, exists, changed"
                ),
            )
        })?;
        let value_field = format!("{field}.value");
        let value = object.get("value").cloned();
        let value = match (op, value) {
            (Op::Lt | Op::Le | Op::Gt | Op::Ge, Some(v)) if v.is_number() => v,
            (Op::Lt | Op::Le | Op::Gt | Op::Ge, v) => {
                return Err(JobError::new(
                    &value_field,
                    format!(
                        "\"{op_name}\" compares with a number, got {}",
                        shown(v.as_ref())
                    ),
                ));
            }
            (Op::Contains, Some(Value::String(s))) => Value::String(s),
            (Op::Contains, v) => {
                return Err(JobError::new(
                    &value_field,
                    format!("\"contains\" looks for a string, got {}", shown(v.as_ref())),
                ));
            }
            (Op::Eq | Op::Ne, Some(v)) => v,
            (Op::Eq | Op::Ne, None) => {
                return Err(JobError::new(
                    &value_field,
                    format!("\"{op_name}\" needs a value"),
                ));
            }
            (Op::Exists | Op::Changed, None) => Value::Null,
            (Op::Exists | Op::Changed, Some(_)) => {
                return Err(JobError::new(
                    &value_field,
                    format!("\"{op_name}\" takes no value"),
                ));
            }
        };
        let new_field = format!("{field}.new");
        let new = match object.get("new") {
            None => false,
            Some(Value::Bool(_)) if op == Op::Changed => {
                return Err(JobError::new(
                    &new_field,
                    "\"changed\" already compares with the previous run",
                ));
            }
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(JobError::new(
                    &new_field,
                    format!("expected true or false, got {other}"),
                ));
            }
        };
        Ok(Condition::Leaf {
            field: path_field,
            path,
            op,
            value,
            new,
        })
    }

    /// Whether the condition holds for `result`, given what the previous run selected.
    /// Records in `next` what this run selected, for `changed` and `new` next time.
    pub fn eval(
        &self,
        result: &Value,
        previous: &Memory,
        next: &mut Memory,
    ) -> Result<bool, JobError> {
        match self {
            Condition::All(items) => {
                let mut all = true;
                for c in items {
                    all &= c.eval(result, previous, next)?;
                }
                Ok(all)
            }
            Condition::Any(items) => {
                let mut any = false;
                for c in items {
                    any |= c.eval(result, previous, next)?;
                }
                Ok(any)
            }
            Condition::Not(inner) => Ok(!inner.eval(result, previous, next)?),
            Condition::Leaf {
                field,
                path,
                op,
                value,
                new,
            } => {
                let selected: Vec<Value> = match (op, path.select(field, result)) {
                    (Op::Exists, Err(_)) => Vec::new(),
                    (_, found) => found?.into_iter().cloned().collect(),
                };
                let before = previous.get(&path.text);
                next.insert(path.text.clone(), selected.clone());
                if *op == Op::Changed {
                    return Ok(before.is_some_and(|b| *b != selected));
                }
                let mut candidates: Vec<&Value> = selected.iter().collect();
                if *new && let Some(before) = before {
                    candidates.retain(|v| !before.contains(v));
                }
                let mut holds = false;
                for v in candidates {
                    holds |= compare(field, path, *op, v, value)?;
                }
                Ok(holds)
            }
        }
    }
}

fn shown(v: Option<&Value>) -> String {
    v.map_or("nothing".to_owned(), Value::to_string)
}

fn compare(
    field: &str,
    path: &Path,
    op: Op,
    actual: &Value,
    expected: &Value,
) -> Result<bool, JobError> {
    let number = |v: &Value| {
        v.as_f64().ok_or_else(|| {
            JobError::new(
                field,
                format!("\"{path}\" is {v} in the result, not a number"),
            )
        })
    };
    Ok(match op {
        Op::Lt => number(actual)? < number(expected)?,
        Op::Le => number(actual)? <= number(expected)?,
        Op::Gt => number(actual)? > number(expected)?,
        Op::Ge => number(actual)? >= number(expected)?,
        Op::Eq => same(actual, expected),
        Op::Ne => !same(actual, expected),
        Op::Contains => match actual {
            Value::String(s) => s.contains(expected.as_str().unwrap_or_default()),
            Value::Array(items) => items.iter().any(|i| same(i, expected)),
            other => {
                return Err(JobError::new(
                    field,
                    format!(
                        "\"{path}\" is {other} in the result; contains looks in a string or an array"
                    ),
                ));
            }
        },
        Op::Exists => true,
        Op::Changed => unreachable!("handled by the caller"),
    })
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(String),
    Value(Path),
}

/// A notification title or body: text with `{path}` placeholders filled from the result.
/// `{{` and `}}` write a literal brace.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    field: String,
    parts: Vec<Part>,
}

impl Template {
    /// The field it was written at (`check.notify.body`) and the paths of its placeholders.
    pub fn paths(&self) -> Vec<(&str, &Path)> {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Value(path) => Some((self.field.as_str(), path)),
                Part::Text(_) => None,
            })
            .collect()
    }

    pub fn parse(field: &str, text: &str) -> Result<Template, JobError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().enumerate().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().is_some_and(|(_, n)| *n == '{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().is_some_and(|(_, n)| *n == '}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let mut inner = String::new();
                    let mut closed = false;
                    for (_, c) in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        inner.push(c);
                    }
                    if !closed {
                        return Err(JobError::new(
                            field,
                            format!(
                                "\"{{\" at character {} is not closed; write {{{{ for a brace",
                                i + 1
                            ),
                        ));
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Value(Path::parse(field, inner.trim())?));
                }
                '}' => {
                    return Err(JobError::new(
                        field,
                        format!(
                            "\"}}\" at character {} has no \"{{\"; write }}}} for a brace",
                            i + 1
                        ),
                    ));
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Ok(Template {
            field: field.to_owned(),
            parts,
        })
    }

    /// Fills the placeholders; a `[*]` placeholder lists every value, separated by "、".
    pub fn render(&self, result: &Value) -> Result<String, JobError> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Value(path) => {
                    let values = path.select(&self.field, result)?;
                    let shown: Vec<String> = values
                        .into_iter()
                        .map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect();
                    out.push_str(&shown.join("、"));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cond(json: Value) -> Condition {
        Condition::parse("check.when", &json).unwrap()
    }

    fn holds(c: &Condition, result: Value) -> bool {
        c.eval(&result, &Memory::new(), &mut Memory::new()).unwrap()
    }

    #[test]
    fn a_number_below_the_limit_holds() {
        let c = cond(json!({"path": "balanceYuan", "op": "lt", "value": 20}));
        assert!(holds(&c, json!({"balanceYuan": 19.99})));
        assert!(!holds(&c, json!({"balanceYuan": 20})));
    }

    #[test]
    fn a_wildcard_holds_when_any_element_matches() {
        let c = cond(json!({"path": "posts[*].title", "op": "contains", "value": "讲座"}));
        assert!(holds(
            &c,
            json!({"posts": [{"title": "招新"}, {"title": "周五讲座"}]})
        ));
        assert!(!holds(&c, json!({"posts": [{"title": "招新"}]})));
        assert!(!holds(&c, json!({"posts": []})));
    }

    #[test]
    fn a_missing_path_is_an_error_naming_the_field() {
        let c = cond(
            json!({"all": [{"path": "x", "op": "exists"}, {"path": "balanceYuan", "op": "lt", "value": 20}]}),
        );
        let err = c
            .eval(
                &json!({"status": "verification_required"}),
                &Memory::new(),
                &mut Memory::new(),
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "check.when.all[1].path: \"balanceYuan\" is not in the result"
        );
    }

    #[test]
    fn a_wrong_type_in_the_result_is_an_error_naming_the_path() {
        let c = cond(json!({"path": "balanceYuan", "op": "lt", "value": 20}));
        let err = c
            .eval(
                &json!({"balanceYuan": "很多"}),
                &Memory::new(),
                &mut Memory::new(),
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "check.when.path: \"balanceYuan\" is \"很多\" in the result, not a number"
        );
    }

    #[test]
    fn parse_errors_name_the_field() {
        let cases = [
            (
                json!({"path": "a", "op": "lt", "value": "20"}),
                "check.when.value: \"lt\" compares with a number, got \"20\"",
            ),
            (
                json!({"path": "a", "op": "below", "value": 1}),
                "check.when.op: \"below\" is not one of lt, le, gt, ge, eq, ne, contains, exists, changed",
            ),
            (
                json!({"path": "a..b", "op": "exists"}),
                "check.when.path: \"a..b\" is not a path: an empty key at character 3",
            ),
            (
                json!({"any": [{"path": "a", "op": "exists", "value": 1}]}),
                "check.when.any[0].value: \"exists\" takes no value",
            ),
            (
                json!({"path": "a", "op": "eq", "value": 1, "when": 2}),
                "check.when.when: unknown field; a condition has path, op, value and new, or is one of all, any, not",
            ),
            (
                json!({"all": []}),
                "check.when.all: expected a non-empty array of conditions",
            ),
            (
                json!({"path": "a", "op": "changed", "new": true}),
                "check.when.new: \"changed\" already compares with the previous run",
            ),
        ];
        for (json, message) in cases {
            assert_eq!(
                Condition::parse("check.when", &json)
                    .unwrap_err()
                    .to_string(),
                message
            );
        }
    }

    #[test]
    fn changed_compares_with_the_previous_run_and_records_a_baseline_first() {
        let c = cond(json!({"path": "crowdPercent.学一食堂", "op": "changed"}));
        let mut memory = Memory::new();
        let mut next = Memory::new();
        assert!(
            !c.eval(
                &json!({"crowdPercent": {"学一食堂": 85}}),
                &memory,
                &mut next
            )
            .unwrap()
        );
        memory = std::mem::take(&mut next);
        assert!(
            !c.eval(
                &json!({"crowdPercent": {"学一食堂": 85}}),
                &memory,
                &mut next
            )
            .unwrap()
        );
        memory = std::mem::take(&mut next);
        assert!(
            c.eval(
                &json!({"crowdPercent": {"学一食堂": 40}}),
                &memory,
                &mut next
            )
            .unwrap()
        );
    }

    #[test]
    fn new_considers_only_values_the_previous_run_did_not_see() {
        let c =
            cond(json!({"path": "posts[*].title", "op": "contains", "value": "讲座", "new": true}));
        let first = json!({"posts": [{"title": "周五讲座"}]});
        let mut memory = Memory::new();
        let mut next = Memory::new();
        assert!(
            c.eval(&first, &memory, &mut next).unwrap(),
            "on the first run every value is new"
        );
        memory = std::mem::take(&mut next);
        assert!(
            !c.eval(&first, &memory, &mut next).unwrap(),
            "the same notice is not new"
        );
        memory = std::mem::take(&mut next);
        let second = json!({"posts": [{"title": "周五讲座"}, {"title": "招新"}]});
        assert!(
            !c.eval(&second, &memory, &mut next).unwrap(),
            "a new notice that does not match"
        );
        memory = std::mem::take(&mut next);
        let third = json!({"posts": [{"title": "周六讲座"}, {"title": "周五讲座"}]});
        assert!(c.eval(&third, &memory, &mut next).unwrap());
    }

    #[test]
    fn a_template_fills_placeholders_and_keeps_escaped_braces() {
        let t = Template::parse(
            "check.notify.body",
            "余额 {balanceYuan} 元 {{ok}} {posts[*].title}",
        )
        .unwrap();
        let result = json!({"balanceYuan": 12.5, "posts": [{"title": "a"}, {"title": "b"}]});
        assert_eq!(t.render(&result).unwrap(), "余额 12.5 元 {ok} a、b");
        assert_eq!(
            Template::parse("check.notify.title", "余额 {balanceYuan")
                .unwrap_err()
                .to_string(),
            "check.notify.title: \"{\" at character 4 is not closed; write {{ for a brace"
        );
        assert_eq!(
            t.render(&json!({"posts": []})).unwrap_err().to_string(),
            "check.notify.body: \"balanceYuan\" is not in the result"
        );
    }
}
