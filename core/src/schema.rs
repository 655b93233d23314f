//! Input validation against a tool's JSON Schema (what zod emits), with a maintained validator
//! (DESIGN.md §2): @cfworker/json-schema, run in the library's ECMAScript engine
//! (sdk/src/validator.ts). JSON Schema's `pattern` is an ECMA-262 regular expression, the
//! engine's own; a validator in Rust links two regex engines, 2 MB of the library's 10 MiB
//! budget (docs/size.md). The validator says which keyword failed where; the words are written
//! here, and every problem names the field it is about, so the agent and the user know what to
//! fix.

use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use rquickjs::{Context, Ctx, Function, Object, Runtime};
use serde::Deserialize;
use serde_json::Value;

/// A tool's schema; it is checked against the meta-schema when compiled, and validating is
/// one call into the engine.
#[derive(Debug)]
pub struct InputSchema {
    source: Value,
    /// `source` as JSON text, the form the engine takes (and its key for compiled validators),
    /// written on first use: opening a data directory writes none.
    text: OnceLock<String>,
    checked: OnceLock<Result<(), String>>,
}

impl InputSchema {
    /// Checks `schema` now; an invalid schema is described in the error.
    pub fn compile(schema: Value) -> Result<Self, String> {
        let compiled = Self::deferred(schema);
        compiled.check().map_err(str::to_owned)?;
        Ok(compiled)
    }

    /// A schema that was checked once already (when its plugin was installed), checked again
    /// on its first use, so that opening a data directory runs no JavaScript.
    pub fn deferred(schema: Value) -> Self {
        Self {
            source: schema,
            text: OnceLock::new(),
            checked: OnceLock::new(),
        }
    }

    fn text(&self) -> &str {
        self.text.get_or_init(|| self.source.to_string())
    }

    fn check(&self) -> Result<(), &str> {
        self.checked
            .get_or_init(|| {
                let units = engine_call("check", &[self.text()])?;
                // The deepest unit is the value at fault (the ones above it only contain it).
                match units.iter().max_by_key(|u| u.instance_location.len()) {
                    None => Ok(()),
                    Some(unit) => {
                        let at = pointer(&unit.instance_location);
                        let value = self.source.pointer(at).cloned().unwrap_or(Value::Null);
                        let at = if at.is_empty() { "/" } else { at };
                        let what = match unit.keyword.as_str() {
                            "format" => " (not a regular expression)",
                            _ => "",
                        };
                        Err(format!("{at}: {value} is not valid JSON Schema{what}"))
                    }
                }
            })
            .as_ref()
            .map(|_| ())
            .map_err(String::as_str)
    }

    /// The schema as written, for the model's tool list.
    pub fn source(&self) -> &Value {
        &self.source
    }

    /// `Ok` when `input` is valid; otherwise every problem, each naming its field, joined by `; `.
    pub fn validate(&self, input: &Value) -> Result<(), String> {
        let units = self.units(input)?;
        let problems = Problems::new(&self.source, input).read(&units);
        match problems.is_empty() {
            true => Ok(()),
            false => Err(problems.join("; ")),
        }
    }

    /// The first problem of `input`, with its field as a path (`seats`, `a/b`), for a form's
    /// answer; `None` when it is valid.
    pub fn first_problem(&self, input: &Value) -> Result<Option<(String, String)>, String> {
        let units = self.units(input)?;
        let problems = Problems::new(&self.source, input);
        Ok(problems.read_placed(&units).into_iter().next())
    }

    /// The validator's units for `input`. Fails closed: a schema that no longer checks accepts
    /// nothing, nor does an input the validator could not check.
    fn units(&self, input: &Value) -> Result<Vec<Unit>, String> {
        self.check()
            .map_err(|e| format!("the tool's schema is not valid: {e}"))?;
        engine_call("validate", &[self.text(), &input.to_string()])
            .map_err(|e| format!("input: {e}"))
    }
}

/// One keyword that failed, as the validator reports it (its "basic" output unit).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Unit {
    instance_location: String,
    keyword: String,
    keyword_location: String,
    error: String,
}

/// `#/a/0` → `/a/0`, the JSON pointer the validator's locations carry.
fn pointer(location: &str) -> &str {
    location.strip_prefix('#').unwrap_or(location)
}

/// Keywords whose failure only says that something under them failed: what failed reports
/// itself in the units after it.
const ONLY_BELOW: &[&str] = &[
    "properties",
    "patternProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "$ref",
    "$recursiveRef",
    "allOf",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
];

/// Keywords that say in one problem why no alternative below them held; the units below
/// (each alternative's failures) are not told.
const ONE_FOR_ALL_BELOW: &[&str] = &["anyOf", "oneOf", "not", "contains"];

struct Problems<'a> {
    schema: &'a Value,
    input: &'a Value,
}

impl<'a> Problems<'a> {
    fn new(schema: &'a Value, input: &'a Value) -> Self {
        Self { schema, input }
    }

    /// Each problem as `input.field: what is wrong`.
    fn read(&self, units: &[Unit]) -> Vec<String> {
        self.read_placed(units)
            .into_iter()
            .map(|(at, problem)| format!("{}: {problem}", field_name(&at)))
            .collect()
    }

    /// Each problem with the pointer of the value it is about.
    fn read_placed(&self, units: &[Unit]) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        let mut told: Vec<&str> = Vec::new();
        let mut required: Vec<(&str, &str)> = Vec::new();
        let mut unexpected: Vec<(String, &str, Vec<String>)> = Vec::new();
        let mut index = 0;
        while index < units.len() {
            let unit = &units[index];
            index += 1;
            let at = pointer(&unit.instance_location);
            if told.iter().any(|below| {
                unit.keyword_location.starts_with(below)
                    && unit.keyword_location[below.len()..].starts_with('/')
            }) {
                continue;
            }
            let keyword = unit.keyword.as_str();
            if ONLY_BELOW.contains(&keyword) {
                continue;
            }
            if ONE_FOR_ALL_BELOW.contains(&keyword) {
                told.push(&unit.keyword_location);
            }
            if matches!(keyword, "additionalProperties" | "unevaluatedProperties") {
                // With `false` the property's own unit follows ("False boolean schema"): the
                // problem is the property's name, told once for all such names of the object.
                let next = units.get(index);
                let own = next.filter(|n| {
                    n.keyword == "false" && n.instance_location.len() > unit.instance_location.len()
                });
                if let Some(own) = own {
                    index += 1;
                    let name =
                        unescaped(&own.instance_location[unit.instance_location.len() + 1..]);
                    match unexpected
                        .iter_mut()
                        .find(|(place, k, _)| place == at && *k == keyword)
                    {
                        Some((_, _, names)) => names.push(name),
                        None => unexpected.push((at.to_owned(), keyword, vec![name])),
                    }
                }
                continue;
            }
            if keyword == "required" {
                // Through a reference the names are the validator's to tell, a unit each.
                let Some(missing) = self.missing(unit) else {
                    problems.push((at.to_owned(), self.problem(unit)));
                    continue;
                };
                // One unit per missing name, all at one place: told once, each name.
                let place = (
                    unit.instance_location.as_str(),
                    unit.keyword_location.as_str(),
                );
                if required.contains(&place) {
                    continue;
                }
                required.push(place);
                for name in missing {
                    problems.push((at.to_owned(), format!("{name} is a required property")));
                }
                continue;
            }
            problems.push((at.to_owned(), self.problem(unit)));
        }
        for (at, keyword, names) in unexpected {
            let kind = match keyword {
                "additionalProperties" => "Additional",
                _ => "Unevaluated",
            };
            let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
            let verb = if names.len() == 1 { "was" } else { "were" };
            problems.push((
                at,
                format!(
                    "{kind} properties are not allowed ({} {verb} unexpected)",
                    quoted.join(", ")
                ),
            ));
        }
        problems
    }

    /// The names `required` lists that the object lacks, each as JSON (`"seats"`); `None`
    /// where the list cannot be read (through a reference).
    fn missing(&self, unit: &Unit) -> Option<Vec<String>> {
        let object = self
            .input
            .pointer(pointer(&unit.instance_location))?
            .as_object()?;
        let listed = self.keyword_value(unit)?.as_array()?;
        Some(
            listed
                .iter()
                .filter_map(Value::as_str)
                .filter(|name| !object.contains_key(*name))
                .map(|name| Value::from(name).to_string())
                .collect(),
        )
    }

    /// The keyword's value in the schema; `None` where the unit's location passes through a
    /// reference (`…/$ref/…`), which is no pointer into the schema as written.
    fn keyword_value(&self, unit: &Unit) -> Option<&'a Value> {
        let at = pointer(&unit.keyword_location);
        if at.split('/').any(|s| s == "$ref" || s == "$recursiveRef") {
            return None;
        }
        self.schema.pointer(at)
    }

    /// The words for one failed keyword, quoting the value (an excerpt when long) and the
    /// schema's limit; the validator's own words where the limit cannot be read.
    fn problem(&self, unit: &Unit) -> String {
        let value = self
            .input
            .pointer(pointer(&unit.instance_location))
            .map(quoted)
            .unwrap_or_default();
        let Some(limit) = self.keyword_value(unit) else {
            return unit.error.trim_end_matches('.').to_owned();
        };
        let count = |one: &str, many: &str| match limit.as_u64() {
            Some(1) => format!("{limit} {one}"),
            _ => format!("{limit} {many}"),
        };
        match unit.keyword.as_str() {
            "type" => match limit {
                Value::Array(types) => {
                    let types: Vec<String> = types.iter().map(Value::to_string).collect();
                    format!("{value} is not of types {}", types.join(", "))
                }
                one => format!("{value} is not of type {one}"),
            },
            "const" => format!("{limit} was expected"),
            "enum" => format!("{value} is not one of {}", options(limit)),
            "minimum" => format!("{value} is less than the minimum of {limit}"),
            "maximum" => format!("{value} is greater than the maximum of {limit}"),
            "exclusiveMinimum" => {
                format!("{value} is less than or equal to the minimum of {limit}")
            }
            "exclusiveMaximum" => {
                format!("{value} is greater than or equal to the maximum of {limit}")
            }
            "multipleOf" => format!("{value} is not a multiple of {limit}"),
            "minLength" => format!(
                "{value} is shorter than {}",
                count("character", "characters")
            ),
            "maxLength" => format!(
                "{value} is longer than {}",
                count("character", "characters")
            ),
            "minItems" => format!("{value} has less than {}", count("item", "items")),
            "maxItems" => format!("{value} has more than {}", count("item", "items")),
            "minProperties" => format!("{value} has less than {}", count("property", "properties")),
            "maxProperties" => format!("{value} has more than {}", count("property", "properties")),
            "uniqueItems" => format!("{value} has non-unique elements"),
            "pattern" => match self.pattern_example(unit) {
                // issue 44: a model copies an example (`2026-12-04`), where it misreads a
                // regex (`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`).
                Some(example) => format!("{value} is not written like {example}"),
                None => format!("{value} does not match {limit}"),
            },
            "format" => format!("{value} is not a {limit}"),
            "anyOf" => {
                format!(
                    "{value} is not valid under any of the schemas listed in the 'anyOf' keyword"
                )
            }
            "oneOf" if unit.error.contains("(0 matches)") => {
                format!(
                    "{value} is not valid under any of the schemas listed in the 'oneOf' keyword"
                )
            }
            "oneOf" => format!(
                "{value} is valid under more than one of the schemas listed in the 'oneOf' keyword"
            ),
            "not" => format!("{limit} is not allowed for {value}"),
            "contains" => format!("None of {value} are valid under the given schema"),
            "false" => format!("False schema does not allow {value}"),
            _ => unit.error.trim_end_matches('.').to_owned(),
        }
    }

    /// For a value that does not match a pattern, the first of the schema's `examples` beside
    /// that pattern. None for a pattern with no example.
    fn pattern_example(&self, unit: &Unit) -> Option<String> {
        let parent = pointer(&unit.keyword_location).strip_suffix("/pattern")?;
        match self.schema.pointer(parent)?.get("examples")?.get(0)? {
            Value::String(example) => Some(example.clone()),
            _ => None,
        }
    }
}

/// An enum's options as a problem lists them: `"a", "b" or "c"`, the first two and how many
/// more when there are over three.
fn options(listed: &Value) -> String {
    let Some(all) = listed.as_array() else {
        return listed.to_string();
    };
    let shown: Vec<String> = all.iter().map(Value::to_string).collect();
    match shown.len() {
        0 | 1 => shown.concat(),
        2 | 3 => format!(
            "{} or {}",
            shown[..shown.len() - 1].join(", "),
            shown[shown.len() - 1]
        ),
        n => format!("{} or {} other candidates", shown[..2].join(", "), n - 2),
    }
}

/// The longest value a problem quotes whole, in characters of its JSON.
const QUOTED_CHARS: usize = 80;

/// The value's JSON, or, when longer than [`QUOTED_CHARS`], its first characters and how long
/// it is (issue: a refusal must not echo a 40,000-character argument back to the model).
fn quoted(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(QUOTED_CHARS) {
        None => text,
        Some((byte, _)) => {
            let total = text.chars().count();
            format!("{}… ({total} characters)", &text[..byte])
        }
    }
}

/// `/items/0/name` → `input.items.0.name`; the root is `input`.
fn field_name(pointer: &str) -> String {
    let mut name = String::from("input");
    for segment in pointer.split('/').skip(1) {
        name.push('.');
        name.push_str(&unescaped(segment));
    }
    name
}

/// A JSON pointer's segment as the name it escapes (`a~1b` → `a/b`).
fn unescaped(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// How long one check or validation may take: a `pattern` that backtracks without end on a
/// value (the engine's regular expressions backtrack) is stopped here, and the input refused.
const DEADLINE: Duration = Duration::from_secs(1);

/// The validator's memory: its compiled schemas and one input at a time.
const MEMORY_BYTES: usize = 64 << 20;

/// The validator's stack: the deepest input serde_json reads (128 levels) fits, with each level
/// a few calls deep in the validator; anything deeper is refused, not a crash.
const STACK_BYTES: usize = 6 << 20;

/// The validator thread's own stack, above [`STACK_BYTES`] by room for the host's frames.
const THREAD_STACK_BYTES: usize = 8 << 20;

/// sdk/validator.js (sdk/src/validator.ts built by sdk/build.mjs), compiled to QuickJS bytecode
/// and deflated by build.rs.
const VALIDATOR_BYTECODE_DEFLATED: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/validator.qjsbc.deflate"));

/// The process's one validator runtime, on its own thread with a stack of known size, made on
/// the first check or validation: opening a data directory runs none (issue 40).
struct Engine {
    context: Context,
    deadline: Arc<Mutex<Option<Instant>>>,
}

/// A call for the validator thread: a function's name, its texts, where the answer goes.
type Request = (
    &'static str,
    Vec<String>,
    mpsc::Sender<Result<String, String>>,
);

static VALIDATOR: OnceLock<mpsc::Sender<Request>> = OnceLock::new();

impl Engine {
    fn new() -> Result<Self, String> {
        let failed = |e: rquickjs::Error| format!("the schema validator did not start: {e}");
        let runtime = Runtime::new().map_err(failed)?;
        runtime.set_memory_limit(MEMORY_BYTES);
        runtime.set_max_stack_size(STACK_BYTES);
        let deadline: Arc<Mutex<Option<Instant>>> = Arc::default();
        {
            let deadline = deadline.clone();
            runtime.set_interrupt_handler(Some(Box::new(move || {
                crate::lock(&deadline).is_some_and(|at| Instant::now() >= at)
            })));
        }
        let context = Context::full(&runtime).map_err(failed)?;
        let bytecode = crate::plugins::script::inflate_bytes(VALIDATOR_BYTECODE_DEFLATED);
        context
            .with(|cx| {
                let join = Function::new(
                    cx.clone(),
                    |cx: Ctx<'_>, reference: String, base: String| {
                        url_join(&reference, &base)
                            .map_err(|e| rquickjs::Exception::throw_type(&cx, &e))
                    },
                )?;
                cx.globals().set("__pkuUrlJoin", join)?;
                // SAFETY: build.rs wrote these bytes with the QuickJS this library links (the
                // same rquickjs version), from sdk/validator.js committed beside it: the bytecode
                // JS_ReadObject expects, never input from outside.
                let module = unsafe { rquickjs::Module::load(cx.clone(), &bytecode)? };
                let (_, evaluated) = module.eval()?;
                evaluated.finish::<()>()
            })
            .map_err(|e| context.with(|cx| thrown(&cx, e)))
            .map_err(|e| format!("the schema validator did not start: {e}"))?;
        Ok(Self { context, deadline })
    }

    fn call(&self, name: &str, args: &[&str]) -> Result<String, String> {
        *crate::lock(&self.deadline) = Some(Instant::now() + DEADLINE);
        let answer = self.context.with(|cx| {
            let call = || -> rquickjs::Result<String> {
                let checks: Object = cx.globals().get("__pkuSchema")?;
                let function: Function = checks.get(name)?;
                match args {
                    [one] => function.call((*one,)),
                    [one, two] => function.call((*one, *two)),
                    _ => unreachable!("the validator's functions take one or two texts"),
                }
            };
            call().map_err(|e| thrown(&cx, e))
        });
        let timed_out = crate::lock(&self.deadline)
            .take()
            .is_some_and(|at| Instant::now() >= at);
        answer.map_err(|e| match timed_out {
            true => format!(
                "checking it took over {} s (a pattern too slow for this value)",
                DEADLINE.as_secs()
            ),
            false => format!("it could not be checked ({e})"),
        })
    }
}

/// `reference` resolved against `base` (none: `reference` is absolute), as the validator's
/// `URL` gives it (sdk/src/url.ts).
fn url_join(reference: &str, base: &str) -> Result<String, String> {
    let joined = match base {
        "" => url::Url::parse(reference),
        base => url::Url::parse(base).and_then(|base| base.join(reference)),
    };
    joined
        .map(String::from)
        .map_err(|e| format!("Invalid URL {reference:?} ({e})"))
}

/// What the engine threw, in its words.
fn thrown(cx: &rquickjs::Ctx<'_>, error: rquickjs::Error) -> String {
    match error {
        rquickjs::Error::Exception => {
            let thrown = cx.catch();
            thrown
                .as_exception()
                .and_then(|e| e.message())
                .unwrap_or_else(|| format!("{thrown:?}"))
        }
        other => other.to_string(),
    }
}

/// Whether this process has started the validator: not to open a data directory or list its
/// tools (issue 40: no JavaScript at open), only on a first check or validation.
pub fn started() -> bool {
    VALIDATOR.get().is_some()
}

/// Calls the validator's `name` with `args` on its thread; the units of the keywords that
/// failed.
fn engine_call(name: &'static str, args: &[&str]) -> Result<Vec<Unit>, String> {
    let validator = VALIDATOR.get_or_init(|| {
        let (requests, calls) = mpsc::channel::<Request>();
        let spawned = std::thread::Builder::new()
            .name("schema-validator".into())
            .stack_size(THREAD_STACK_BYTES)
            .spawn(move || {
                let engine = Engine::new();
                for (name, args, answer) in calls {
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let _ = answer.send(match &engine {
                        Ok(engine) => engine.call(name, &args),
                        Err(e) => Err(e.clone()),
                    });
                }
            });
        // A thread that did not start took the receiver with it: each call is then refused
        // ("not running"), failing closed.
        drop(spawned);
        requests
    });
    let (answer, answered) = mpsc::channel();
    let args = args.iter().map(|a| (*a).to_owned()).collect();
    validator
        .send((name, args, answer))
        .map_err(|_| "the schema validator is not running".to_owned())?;
    let answer = answered
        .recv()
        .map_err(|_| "the schema validator stopped".to_owned())??;
    serde_json::from_str(&answer).map_err(|e| format!("the validator's answer is not units: {e}"))
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
    fn a_pattern_is_an_ecmascript_regular_expression() {
        // JSON Schema's `pattern` is ECMA-262's: `\p{…}` classes and lookahead hold.
        let schema = InputSchema::compile(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": "^\\p{Script=Han}+$"},
                "code": {"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]{4}$"}
            }
        }))
        .unwrap();
        assert_eq!(
            schema.validate(&json!({"name": "北大", "code": "ab12"})),
            Ok(())
        );
        assert_eq!(
            schema
                .validate(&json!({"name": "PKU", "code": "abcd"}))
                .unwrap_err(),
            "input.code: \"abcd\" does not match \"^(?=.*[0-9])[a-z0-9]{4}$\"; \
             input.name: \"PKU\" does not match \"^\\\\p{Script=Han}+$\""
        );
    }

    #[test]
    fn a_missing_field_is_named() {
        let err = amount_schema().validate(&json!({})).unwrap_err();
        assert_eq!(err, "input: \"amountYuan\" is a required property");
    }

    #[test]
    fn every_missing_field_and_every_unexpected_one_is_told_once() {
        let schema = InputSchema::compile(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a", "b"],
            "additionalProperties": false
        }))
        .unwrap();
        assert_eq!(
            schema.validate(&json!({"x": 1, "y/z": 2})).unwrap_err(),
            "input: \"a\" is a required property; input: \"b\" is a required property; \
             input: Additional properties are not allowed ('x', 'y/z' were unexpected)"
        );
        assert_eq!(
            schema
                .validate(&json!({"a": "1", "b": "2", "c": 3}))
                .unwrap_err(),
            "input: Additional properties are not allowed ('c' was unexpected)"
        );
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
    fn each_keyword_is_told_in_words_with_the_schemas_limit() {
        let schema = InputSchema::compile(json!({
            "type": "object",
            "properties": {
                "kind": {"enum": ["a", "b", "c", "d"]},
                "one": {"enum": ["x", "y"]},
                "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 5},
                "tags": {"type": "array", "minItems": 2, "uniqueItems": true},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "id": {"type": ["string", "null"]},
                "fixed": {"const": 1}
            }
        }))
        .unwrap();
        let err = schema
            .validate(&json!({
                "kind": "e", "one": "z", "n": -3, "tags": [1], "either": 1.5, "id": 7, "fixed": 2
            }))
            .unwrap_err();
        assert_eq!(
            err.split("; ").collect::<Vec<_>>(),
            // In the order of the fields' names, as the input's object keeps them.
            [
                "input.either: 1.5 is not valid under any of the schemas listed in the 'anyOf' keyword",
                "input.fixed: 1 was expected",
                "input.id: 7 is not of types \"string\", \"null\"",
                "input.kind: \"e\" is not one of \"a\", \"b\" or 2 other candidates",
                "input.n: -3 is less than or equal to the minimum of 0",
                "input.n: -3 is not a multiple of 5",
                "input.one: \"z\" is not one of \"x\" or \"y\"",
                "input.tags: [1] has less than 2 items",
            ]
        );
    }

    #[test]
    fn formats_are_asserted_in_draft_7_and_only_annotate_from_2019_09() {
        let email =
            json!({"type": "object", "properties": {"to": {"type": "string", "format": "email"}}});
        let mut draft7 = email.clone();
        draft7["$schema"] = json!("http://json-schema.org/draft-07/schema#");
        let input = json!({"to": "not an address"});
        assert_eq!(
            InputSchema::compile(email).unwrap().validate(&input),
            Ok(())
        );
        assert_eq!(
            InputSchema::compile(draft7)
                .unwrap()
                .validate(&input)
                .unwrap_err(),
            "input.to: \"not an address\" is not a \"email\""
        );
    }

    #[test]
    fn a_reference_is_followed_and_its_problem_still_names_the_field() {
        let schema = InputSchema::compile(json!({
            "type": "object",
            "$defs": {"seats": {"type": "integer", "maximum": 4}},
            "properties": {"seats": {"$ref": "#/$defs/seats"}}
        }))
        .unwrap();
        assert_eq!(schema.validate(&json!({"seats": 3})), Ok(()));
        // Through a reference the limit is the validator's to tell.
        assert_eq!(
            schema.validate(&json!({"seats": 9})).unwrap_err(),
            "input.seats: 9 is greater than 4"
        );
        // So are the names a referenced `required` lists, each in its own problem.
        let schema = InputSchema::compile(json!({
            "$defs": {"seat": {"type": "object", "required": ["row", "number"]}},
            "$ref": "#/$defs/seat"
        }))
        .unwrap();
        assert_eq!(
            schema.validate(&json!({})).unwrap_err(),
            "input: Instance does not have required property \"row\"; \
             input: Instance does not have required property \"number\""
        );
    }

    #[test]
    fn a_pattern_that_backtracks_without_end_is_stopped_and_the_input_refused() {
        let schema = InputSchema::compile(json!({
            "type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}
        }))
        .unwrap();
        let err = schema
            .validate(&json!({"s": format!("{}!", "a".repeat(40))}))
            .unwrap_err();
        assert_eq!(
            err,
            "input: checking it took over 1 s (a pattern too slow for this value)"
        );
        // The validator is whole again for the next input.
        assert_eq!(schema.validate(&json!({"s": "aaa"})), Ok(()));
    }

    #[test]
    fn the_deepest_input_a_model_can_send_is_checked_within_the_validators_stack() {
        // serde_json reads JSON nested at most 128 deep; the schema recurses as deep.
        let schema = InputSchema::compile(json!({
            "anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}}]
        }))
        .unwrap();
        let text = format!("{}1{}", "[".repeat(127), "]".repeat(127));
        let deep: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(schema.validate(&deep), Ok(()));
        let text = format!("{}\"x\"{}", "[".repeat(127), "]".repeat(127));
        let deep: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            schema.validate(&deep).unwrap_err(),
            format!(
                "input: {}… (257 characters) is not valid under any of the schemas listed in \
                 the 'anyOf' keyword",
                "[".repeat(80)
            )
        );
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
        assert_eq!(
            broken.validate(&json!({})).unwrap_err(),
            "the tool's schema is not valid: /type: \"no-such-type\" is not valid JSON Schema"
        );
    }

    #[test]
    fn an_invalid_schema_does_not_compile() {
        let err = InputSchema::compile(json!({"type": "no-such-type"})).unwrap_err();
        assert!(err.contains("no-such-type"), "{err}");
        let err = InputSchema::compile(json!({"type": "string", "pattern": "(("})).unwrap_err();
        assert_eq!(
            err,
            "/pattern: \"((\" is not valid JSON Schema (not a regular expression)"
        );
    }
}
