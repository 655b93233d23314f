//! Which tools a model request sends whole (issue 42: fewer tokens a request). While the tools
//! offered cost at most [`WHOLE`] estimated tokens, every one is sent. Past it (many plugins
//! installed) a request sends the find step ([`FIND`]), whose description lists each plugin
//! with its tools' names, and whole only the tools of the app's own plugins ([`AT_HAND`]) and
//! of the plugins the conversation has found: named by a find, or one of whose tools the model
//! called. A find is answered in the turn loop
//! (it reads nothing of the student's and runs no plugin) and its plugins' tools are sent from
//! the next request on; a tool called without being found still goes through the invoke path
//! like any other. The list is the same bytes from one request to the next until a find adds a
//! plugin, so a provider's prefix cache still hits.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use super::budget::estimate;
use crate::registry::{Tool, tool_id};

/// The find step's name as the model calls it. It holds no `__`, so no plugin's tool has it.
pub const FIND: &str = "find_tools";

/// What the tools may cost, estimated, before a request sends the find step instead: with the
/// system prompt and the request's own fields a first request stays near 2,000 tokens.
pub(crate) const WHOLE: u32 = 1_500;

/// The app's own plugins whose tools every request sends whole: the time, reminders and checks,
/// and memory are what the student asks of the app itself ("提醒我明天8点…", "记住…"), so they
/// are never a find away. The find step is for the rest: the plugins that reach a service, and
/// the settings and files the student rarely asks the agent for.
const AT_HAND: [&str; 3] = ["time", "scheduler", "memory"];

fn at_hand(plugin: &str) -> bool {
    AT_HAND.contains(&plugin)
}

/// The plugins a call of the model finds: those a find names, or the plugin of the tool called.
pub(crate) fn found_by(name: &str, arguments: &str) -> Vec<String> {
    if name == FIND {
        return serde_json::from_str::<Value>(arguments)
            .ok()
            .and_then(|v| v.get("plugins").and_then(Value::as_array).cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    tool_id(name)
        .and_then(|id| id.split_once('.').map(|(plugin, _)| plugin.to_owned()))
        .into_iter()
        .collect()
}

/// The tools array of a request: every spec while they cost at most [`WHOLE`], else the find
/// step (`catalog`, the spec [`find_spec`] wrote for `tools`) and the specs of the tools whose
/// plugin is [`AT_HAND`] or in `found`. `specs` are `tools`' in order.
pub(crate) fn select(
    tools: &[Arc<Tool>],
    specs: &[Arc<str>],
    found: &BTreeSet<String>,
    catalog: impl FnOnce() -> String,
) -> String {
    let tokens: u32 = specs.iter().map(|s| estimate(s)).sum();
    if tokens <= WHOLE {
        return specs.join(",");
    }
    let catalog = catalog();
    let chosen = tools
        .iter()
        .zip(specs)
        .filter(|(tool, _)| at_hand(&tool.plugin) || found.contains(&tool.plugin))
        .map(|(_, spec)| &**spec);
    std::iter::once(catalog.as_str())
        .chain(chosen)
        .collect::<Vec<_>>()
        .join(",")
}

/// The find step's spec: each plugin offering tools but not [`AT_HAND`] (`plugins`: id and
/// title, in the order offered) with its tools' names.
pub(crate) fn find_spec(tools: &[Arc<Tool>], title: impl Fn(&str) -> String) -> String {
    let mut lines: Vec<(String, Vec<&str>)> = Vec::new();
    for tool in tools.iter().filter(|t| !at_hand(&t.plugin)) {
        let name = tool.name.as_str();
        match lines.last_mut() {
            Some((plugin, names)) if *plugin == tool.plugin => names.push(name),
            _ => lines.push((tool.plugin.clone(), vec![name])),
        }
    }
    let mut description = String::from(
        "Gives you the tools of the plugins named, from your next step on. Before acting for the student, find the plugins whose tools you need; besides the app's own (time, reminders, memory) you were given only the tools of plugins found in this conversation. Plugins (id title: tools):",
    );
    for (plugin, names) in &lines {
        description.push_str(&format!(
            "\n{plugin} {}: {}",
            title(plugin),
            names.join(", ")
        ));
    }
    let parameters = json!({"type": "object", "properties": {"plugins": {"type": "array",
        "items": {"type": "string"}, "description": "Plugin ids, e.g. [\"wallet\"]"}},
        "required": ["plugins"]});
    json!({"type": "function", "function": {"name": FIND, "description": description,
        "parameters": parameters}})
    .to_string()
}

/// The find step's answer for the model: the tools it is given from the next step on, by the
/// model's names, and the ids that name no plugin offering tools.
pub(crate) fn answer(arguments: &str, offered: &[Arc<Tool>]) -> String {
    let asked = found_by(FIND, arguments);
    if asked.is_empty() {
        return json!({"error": {"code": "invalid_arguments",
            "message": "name the plugins by their ids, as {\"plugins\": [\"wallet\"]}"}})
        .to_string();
    }
    let given: Vec<String> = offered
        .iter()
        .filter(|t| asked.contains(&t.plugin))
        .map(|t| t.model_name())
        .collect();
    let unknown: Vec<&String> = asked
        .iter()
        .filter(|id| !offered.iter().any(|t| t.plugin == **id))
        .collect();
    let mut out = json!({"given": given, "note": "call them from your next step"});
    if !unknown.is_empty() {
        out["unknown"] = json!(unknown);
    }
    out.to_string()
}
