//! The conformance runner (../shared/conformance/FORMAT.md): JSON files that state a situation,
//! a call and the expected decision, or a gate, its inputs and the expected return, run
//! through the real engine — registry, policy, invoke and gates — never a copy of their logic.
//! It is its own crate so the phone library does not ship it.
//!
//! This project's additions to FORMAT.md:
//!
//! - Decision scenarios: a step may also be `{"setPlanMode": true}`, `{"beginTurn": true}` (a
//!   new turn: its taint starts clear) or `{"setEnabled": {"plugin": "wallet", "enabled":
//!   false}}`; `conversation.rules` holds rules of the conversation's own and
//!   `conversation.scope` its scope.
//! - Decision scenarios: a plugin may be given, instead of its manifest fields, as
//!   `"mcpTools": [{"name", "title"?, "description"?, "inputSchema"?, "annotations"?: {"readOnlyHint"}}]`
//!   — a remote server's `tools/list` answer, with the plugin's `id` `mcp-<server>`; each tool's
//!   effect comes from `readOnlyHint` (true → read, anything else → write) as
//!   `Plugin::from_mcp` maps it — or as `"document": "<the whole PLUGIN.md text>"`, loaded as
//!   the plugin's `kind` (official or community) the way an installed document is — or as
//!   `"bundle": "<id>"`, a TypeScript plugin the library ships (`plugins::script::BUNDLES`)
//!   or the SDK's `echo` (sdk/test-plugins/echo),
//!   of kind bundled with no manifest keys: its manifest is read from the bundle and its calls
//!   run in the engine. A plugin has one of the three at most.
//! - Decision scenarios: money with numbers (DESIGN.md §3 8e). A money tool may declare
//!   `"amount": {"field": "amountYuan", "unit": "yuan" | "fen"}` and `"payee": {"field":
//!   "shop"}` (manifest keys, checked by the core), so a call's `input` carries its amount and
//!   payee; `"money": {"perPaymentYuan": 100, "perDayYuan": 200}` sets the student's limits
//!   (whole yuan; each absent key keeps its default, the values shown). The day's spent total
//!   is what the scenario's earlier calls paid: a `user` call that runs is never questioned but
//!   counts, so a tap step sets it. `{"decision": "refuse", "code": "over_limit"}` is the
//!   refusal past a limit.
//! - Gate scenarios: the shapes of every gate, listed at the top of `gate.rs`.
//!
//! The runner passes only what it checked, so it is stricter than FORMAT.md says:
//!
//! - Every key is known: a misspelled key (`errorPrefx`) is a failure naming the file, the
//!   scenario, the step or op, and the key — never ignored.
//! - Every scenario has a `name` and checks something: a decision scenario has a call step
//!   (which needs its `expect`); a store, context or sendMessage scenario an op with an
//!   expectation; a notify scenario `expectDelivered`, `expectSuppressed` or `expectReturns`.
//! - A step is exactly one kind (`call`, `setMode`, `setPreset`, `setPlanMode`, `beginTurn`,
//!   `setEnabled`); so is an op. `answer` belongs to a call, and only to a call that raised a
//!   prompt: an answer on a call decided run or refuse is a failure naming the step, never
//!   silently dropped (nor left to answer a later step's prompt).
//! - `{"decision": "refuse"}` needs its `code`; `run` and `ask` take no `code`.
//! - Files are `*.json` in any case. Folders are walked without following symbolic links: a
//!   link inside a folder is a failure ("is a symbolic link; name the file itself"); a link
//!   named on the command line is followed. A file reached twice runs once.

mod decision;
mod gate;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde_json::{Map, Value};

/// One scenario's name and result: `Err` holds `expected …, got …`, or what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioResult {
    pub name: String,
    pub result: Result<(), String>,
}

/// Runs every `*.json` file under `paths` (files or folders, recursively, in name order), each
/// file once however often it is reached.
pub async fn run_paths(paths: &[PathBuf]) -> Vec<ScenarioResult> {
    let mut found = Vec::new();
    for path in paths {
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, &mut found),
            Ok(_) => found.push(Ok(path.to_owned())),
            Err(e) => found.push(Err(failure(path, format!("cannot read it: {e}")))),
        }
    }
    let mut seen = HashSet::new();
    let mut results = Vec::new();
    for file in found {
        match file {
            Ok(file) => {
                let same = fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
                if seen.insert(same) {
                    results.extend(run_file(&file).await);
                }
            }
            Err(failed) => results.push(failed),
        }
    }
    results
}

fn failure(path: &Path, why: String) -> ScenarioResult {
    ScenarioResult {
        name: path.display().to_string(),
        result: Err(why),
    }
}

/// The scenario files under `dir`, in name order. Links are not followed: two links to `.`
/// would walk forever, and one would run every file again under each name.
fn walk(dir: &Path, found: &mut Vec<Result<PathBuf, ScenarioResult>>) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return found.push(Err(failure(dir, format!("cannot read it: {e}")))),
    };
    let mut entries: Vec<_> = entries
        .map(|entry| entry.and_then(|e| Ok((e.path(), e.file_type()?))))
        .collect();
    entries.sort_by(|a, b| match (a, b) {
        (Ok((a, _)), Ok((b, _))) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    });
    for entry in entries {
        let (path, kind) = match entry {
            Ok(entry) => entry,
            Err(e) => {
                found.push(Err(failure(dir, format!("cannot read an entry: {e}"))));
                continue;
            }
        };
        let json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if kind.is_symlink() {
            found.push(Err(failure(
                &path,
                "is a symbolic link; name the file itself".to_owned(),
            )));
        } else if kind.is_dir() {
            walk(&path, found);
        } else if json && kind.is_file() {
            found.push(Ok(path));
        } else if json {
            found.push(Err(failure(&path, "is not a regular file".to_owned())));
        }
    }
}

/// Runs one file holding a scenario or an array of them. A file that cannot be read or parsed
/// is one failure named after the file, never a skip; a scenario that is not what FORMAT.md
/// describes is a failure naming the file.
pub async fn run_file(path: &Path) -> Vec<ScenarioResult> {
    let file = path.display().to_string();
    let parsed = fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
    let scenarios = match parsed {
        Ok(Value::Array(items)) => items,
        Ok(single @ Value::Object(_)) => vec![single],
        Ok(_) => {
            return vec![failure(
                path,
                "not a scenario object or an array of them".into(),
            )];
        }
        Err(e) => return vec![failure(path, format!("cannot parse: {e}"))],
    };
    let mut results = Vec::with_capacity(scenarios.len());
    for (index, value) in scenarios.iter().enumerate() {
        let name = match value.get("name").and_then(Value::as_str) {
            Some(n) => n.to_owned(),
            None => format!("{file}[{index}]"),
        };
        let result = match Scenario::parse(value, index) {
            Ok(scenario) => scenario.run().await,
            Err(e) => Err(format!("{file}: {e}")),
        };
        results.push(ScenarioResult { name, result });
    }
    results
}

/// Runs one scenario object.
pub async fn run_scenario(scenario: &Value) -> Result<(), String> {
    Scenario::parse(scenario, 0)?.run().await
}

enum Scenario {
    Decision(decision::Scenario),
    Gate(gate::Scenario),
}

impl Scenario {
    /// The scenario at `index` of its file, typed and checked to check something.
    fn parse(value: &Value, index: usize) -> Result<Self, String> {
        let Value::Object(fields) = value else {
            return Err(format!("scenario {}: not an object", index + 1));
        };
        let mut fields = fields.clone();
        let name = match fields.remove("name") {
            Some(Value::String(name)) => format!("scenario \"{name}\""),
            Some(other) => {
                return Err(format!(
                    "scenario {}: name {other} is not a string",
                    index + 1
                ));
            }
            None => return Err(format!("scenario {}: missing field `name`", index + 1)),
        };
        let fields = Value::Object(fields);
        let scenario = if fields.get("gate").is_some() {
            let gate = gate::Scenario::deserialize(fields).map_err(|e| format!("{name}: {e}"))?;
            gate.validate(&name)?;
            Scenario::Gate(gate)
        } else {
            let decision =
                decision::Scenario::deserialize(fields).map_err(|e| format!("{name}: {e}"))?;
            decision.validate(&name)?;
            Scenario::Decision(decision)
        };
        Ok(scenario)
    }

    async fn run(self) -> Result<(), String> {
        match self {
            Scenario::Decision(decision) => decision.run().await,
            Scenario::Gate(gate) => gate.run(),
        }
    }
}

/// The one key of `kinds` that `map` holds. None, or several, is an error naming them: a step
/// or op of two kinds would otherwise run as one and drop the other.
fn one_kind<'k>(
    map: &Map<String, Value>,
    kinds: &[&'k str],
    what: &str,
) -> Result<&'k str, String> {
    let present: Vec<&'k str> = kinds
        .iter()
        .copied()
        .filter(|k| map.contains_key(*k))
        .collect();
    match present.as_slice() {
        [one] => Ok(one),
        [] => {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            Err(format!(
                "{what} is one of {}; this one has none of them (its keys: {})",
                kinds.join(", "),
                if keys.is_empty() {
                    "none".to_owned()
                } else {
                    keys.join(", ")
                }
            ))
        }
        several => {
            let (last, rest) = several.split_last().expect("several keys");
            Err(format!(
                "{what} is exactly one of {}; this one has {} and {last}",
                kinds.join(", "),
                rest.join(", ")
            ))
        }
    }
}

/// `value` as a `T`, with an error `D` can carry.
fn typed<T: DeserializeOwned, E: serde::de::Error>(value: Value) -> Result<T, E> {
    T::deserialize(value).map_err(E::custom)
}

/// A list whose items' errors name their place: `step 2: …` (from 1) or `op 0: …` (from 0).
fn numbered<'de, D, T>(deserializer: D, what: &str, first: usize) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    Vec::<Value>::deserialize(deserializer)?
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            T::deserialize(item).map_err(|e| D::Error::custom(format!("{what} {}: {e}", i + first)))
        })
        .collect()
}

fn yes() -> bool {
    true
}
