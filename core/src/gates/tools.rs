//! The call-tool gate: a plugin calling another tool through the host's invoke path (seed 001,
//! "allow_tools"). The grant is a list of tool ids, not a switch, because one dangerous tool
//! makes every other grant decorative.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::{GrantError, Grants, LineKind, Outbox, human_duration};
use crate::registry::{Effect, plugin_id};

/// What the gates know of a callable tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolInfo {
    /// Supplied by a bundled plugin (Rust code in the core). Only these may be called.
    pub bundled: bool,
    pub effect: Effect,
    /// Only the user may start it (hidden from the model; a plugin's call is refused).
    pub user_only: bool,
}

/// Every known tool, by tool id (`plugin.tool`).
pub type ToolCatalog = BTreeMap<String, ToolInfo>;

/// The outcome of a call through the host's invoke path.
#[derive(Debug, Clone, PartialEq)]
pub enum Dispatched {
    /// The tool ran; its result.
    Ran(Value),
    /// The tool ran and failed; its message.
    Failed(String),
    /// The user's policy refused the call (e.g. `blocked by policy: <code>: <message>` is
    /// rendered from `<code>: <message>`); the tool did not run.
    Refused(String),
}

/// The host's invoke path, implemented by the engine: the plugin's call goes through the same
/// decision, hooks and audit as the model's (seed 001: a plugin does not outrank the user's
/// policy).
#[async_trait]
pub trait ToolDispatch: Send + Sync {
    /// Calls `tool_id` for a plugin's call running within `chain` (outermost first, ending with
    /// the calling tool), which the nested call carries on.
    async fn dispatch(&self, chain: &[String], tool_id: &str, args: Value) -> Dispatched;
}

/// `host-call-tool` for one plugin.
pub struct ToolCallGate {
    plugin_id: String,
    /// The plugin's `allow_tools`, each with what the catalog said of it at load.
    allowed: BTreeMap<String, ToolInfo>,
    dispatcher: Option<Arc<dyn ToolDispatch>>,
    outbox: Outbox,
    deadline: Duration,
    /// The calls this plugin's call runs within, outermost first, ending with its own tool:
    /// carried by each call, never kept globally, so two calls never share a depth.
    chain: Vec<String>,
}

impl ToolCallGate {
    /// seed 001: above host-http-get's 10 s, because a legitimate tool needs more; far below
    /// the model's wait, because a plugin's call runs with nothing on screen.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

    /// How deep plugins' calls may nest below the call the student, the agent or the scheduler
    /// made. The load-time checks refuse a plugin calling itself and plugins calling each other
    /// in a circle; this bounds whatever got past them (a stack overflow aborts the app).
    pub const MAX_NESTING: usize = 4;

    /// The gate of `plugin_id`, whose `allow_tools` must all be in `catalog` (else the first
    /// unknown name is the load error). `dispatcher` is `None` where nothing can dispatch.
    /// Each call that reaches the dispatcher is disclosed in `outbox`.
    pub fn new(
        plugin_id: &str,
        grants: &Grants,
        catalog: &ToolCatalog,
        dispatcher: Option<Arc<dyn ToolDispatch>>,
        outbox: Outbox,
    ) -> Result<Self, GrantError> {
        if let Some(unknown) = unknown_tools(plugin_id, grants, catalog).into_iter().next() {
            return Err(unknown);
        }
        let allowed = grants
            .allow_tools
            .iter()
            .filter_map(|id| catalog.get(id).map(|info| (id.clone(), info.clone())))
            .collect();
        Ok(Self {
            plugin_id: plugin_id.to_owned(),
            allowed,
            dispatcher,
            outbox,
            deadline: Self::DEFAULT_DEADLINE,
            chain: Vec::new(),
        })
    }

    /// The same gate with another deadline.
    pub fn with_deadline(self, deadline: Duration) -> Self {
        Self { deadline, ..self }
    }

    /// The same gate for a call running within `chain`: the tool ids of the calls it is nested
    /// in, outermost first, ending with the calling plugin's own tool.
    pub fn within(self, chain: Vec<String>) -> Self {
        Self { chain, ..self }
    }

    /// Calls `tool_id` with `args_json`. A call that ran returns the JSON frame
    /// `{"content":"…","is_error":false}` (`true`, with `tool error: …`, when the tool failed);
    /// a call that did not run returns a bare `error: ` string (seed 001: three states).
    pub async fn call(&self, tool_id: &str, args_json: &str) -> String {
        let Some(info) = self.allowed.get(tool_id) else {
            let listing = if self.allowed.is_empty() {
                "it is empty".to_owned()
            } else {
                let ids: Vec<&str> = self.allowed.keys().map(String::as_str).collect();
                format!("it lists {}", ids.join(", "))
            };
            return format!(
                "error: tool \"{tool_id}\" is not in this plugin's allow_tools ({listing}) — add \
                 it to allow_tools in this plugin's grants"
            );
        };
        if !info.bundled {
            // seed 001: only bundled tools are callable. It no longer removes cycles by
            // construction (TypeScript plugins are bundled): the load-time checks and the bound
            // on nesting do.
            let supplier = tool_id
                .split_once('.')
                .map_or(tool_id, |(plugin, _)| plugin);
            return format!(
                "error: tool \"{tool_id}\" is supplied by plugin \"{supplier}\", which is not \
                 bundled; plugins may call only bundled tools"
            );
        }
        let args: Value = match serde_json::from_str(args_json) {
            Ok(args) => args,
            Err(err) => return format!("error: args-json is not valid JSON: {err}"),
        };
        if self.chain.len() > Self::MAX_NESTING {
            let chain: Vec<&str> = self
                .chain
                .iter()
                .map(String::as_str)
                .chain([tool_id])
                .collect();
            return format!(
                "error: tool \"{tool_id}\" would be the call nested {} deep; plugins' calls \
                 nest at most {} deep: {}",
                self.chain.len(),
                Self::MAX_NESTING,
                chain.join(" -> ")
            );
        }
        let Some(dispatcher) = &self.dispatcher else {
            return "error: tool calls are not available right now".to_owned();
        };
        // seed 001: the call is not part of the conversation; a one-line disclosure is.
        self.outbox.push(
            &self.plugin_id,
            LineKind::ToolCalled,
            format!("plugin \"{}\" called tool \"{tool_id}\"", self.plugin_id),
        );
        let dispatched = dispatcher.dispatch(&self.chain, tool_id, args);
        match tokio::time::timeout(self.deadline, dispatched).await {
            Ok(Dispatched::Ran(result)) => frame(text_of(result), false),
            Ok(Dispatched::Failed(message)) => frame(format!("tool error: {message}"), true),
            Ok(Dispatched::Refused(reason)) => format!("error: blocked by policy: {reason}"),
            Err(_elapsed) => format!(
                "error: tool call exceeded the {} plugin deadline",
                human_duration(self.deadline)
            ),
        }
    }
}

fn text_of(result: Value) -> String {
    match result {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

fn frame(content: String, is_error: bool) -> String {
    serde_json::json!({"content": content, "is_error": is_error}).to_string()
}

/// A plugin calling its own tool recurses until the stack gives out; refused at load, naming
/// each such name in allow_tools.
pub(crate) fn self_grants(plugin: &str, grants: &Grants) -> Vec<GrantError> {
    grants
        .allow_tools
        .iter()
        .filter(|id| plugin_id(id) == plugin)
        .map(|id| GrantError::SelfGrant {
            plugin: plugin.to_owned(),
            tool: id.clone(),
        })
        .collect()
}

/// A circle of plugins that may call each other, through `start`: the tool ids of the circle
/// (`a.x -> b.y -> a.x`: `a` may call `b.y`, whose plugin may call `a.x`), or `None`. Decided
/// at the plugin level, whatever tool calls what: a plugin granted a tool may call it from any
/// of its own. `grants` holds each plugin's grants by id. A plugin granting itself a tool is
/// refused by [`self_grants`] and is no circle here.
pub(crate) fn grant_cycle<'a>(
    start: &'a str,
    grants: &BTreeMap<&'a str, &'a Grants>,
) -> Option<Vec<String>> {
    fn walk<'a>(
        at: &'a str,
        start: &str,
        grants: &BTreeMap<&str, &'a Grants>,
        seen: &mut BTreeSet<&'a str>,
        path: &mut Vec<&'a str>,
    ) -> bool {
        let Some(&held) = grants.get(at) else {
            return false;
        };
        for tool in &held.allow_tools {
            let next = plugin_id(tool);
            if next == at {
                continue;
            }
            path.push(tool);
            if next == start || (seen.insert(next) && walk(next, start, grants, seen, path)) {
                return true;
            }
            path.pop();
        }
        false
    }
    let mut path = Vec::new();
    let mut seen = BTreeSet::new();
    if !walk(start, start, grants, &mut seen, &mut path) {
        return None;
    }
    let closing = path.last().map(|t| t.to_string());
    Some(
        closing
            .into_iter()
            .chain(path.iter().map(|t| t.to_string()))
            .collect(),
    )
}

/// seed 001: a name in allow_tools that is not a known tool is a load error, listing the
/// known ones — a misspelled grant is refused rather than silently granting nothing.
pub(crate) fn unknown_tools(
    plugin_id: &str,
    grants: &Grants,
    catalog: &ToolCatalog,
) -> Vec<GrantError> {
    grants
        .allow_tools
        .iter()
        .filter(|id| !catalog.contains_key(*id))
        .map(|id| GrantError::UnknownTool {
            plugin: plugin_id.to_owned(),
            tool: id.clone(),
            known: catalog
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", "),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Answers by tool name, and records what reached it.
    #[derive(Default)]
    struct Engine {
        calls: Mutex<Vec<(String, String, Value)>>,
    }

    #[async_trait]
    impl ToolDispatch for Engine {
        async fn dispatch(&self, chain: &[String], tool_id: &str, args: Value) -> Dispatched {
            self.calls
                .lock()
                .unwrap()
                .push((chain.join(" -> "), tool_id.into(), args.clone()));
            match tool_id {
                "wallet.cardBalance" => Dispatched::Ran(serde_json::json!({"yuan": 12.5})),
                "wallet.recharge" => Dispatched::Refused("blocked: money is off for wallet".into()),
                "canteen.menu" => Dispatched::Ran(Value::String("rice \"and\" tofu".into())),
                "canteen.broken" => Dispatched::Failed("upstream 503".into()),
                _ => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Dispatched::Ran(Value::Null)
                }
            }
        }
    }

    fn catalog() -> ToolCatalog {
        let bundled = |effect| ToolInfo {
            bundled: true,
            effect,
            user_only: false,
        };
        ToolCatalog::from([
            ("wallet.cardBalance".into(), bundled(Effect::Read)),
            ("wallet.recharge".into(), bundled(Effect::Money)),
            ("canteen.menu".into(), bundled(Effect::Read)),
            ("canteen.broken".into(), bundled(Effect::Read)),
            ("canteen.slow".into(), bundled(Effect::Read)),
            (
                "forum.post".into(),
                ToolInfo {
                    bundled: false,
                    effect: Effect::Public,
                    user_only: false,
                },
            ),
        ])
    }

    fn gate(allow: &[&str], engine: Option<Arc<Engine>>) -> ToolCallGate {
        let grants = Grants {
            allow_tools: allow.iter().map(|s| s.to_string()).collect(),
            ..Grants::default()
        };
        let dispatcher = engine.map(|e| e as Arc<dyn ToolDispatch>);
        ToolCallGate::new("helper", &grants, &catalog(), dispatcher, Outbox::new())
            .unwrap()
            .within(vec!["helper.go".into()])
    }

    #[tokio::test]
    async fn absent_or_empty_refuses_everything_naming_the_grant() {
        let gate = gate(&[], Some(Arc::default()));
        assert_eq!(
            gate.call("wallet.recharge", "{}").await,
            "error: tool \"wallet.recharge\" is not in this plugin's allow_tools (it is empty) — \
             add it to allow_tools in this plugin's grants"
        );
    }

    #[tokio::test]
    async fn a_tool_not_listed_is_refused_listing_what_is() {
        let engine = Arc::new(Engine::default());
        let gate = gate(
            &["wallet.cardBalance", "canteen.menu"],
            Some(engine.clone()),
        );
        assert_eq!(
            gate.call("wallet.recharge", "{}").await,
            "error: tool \"wallet.recharge\" is not in this plugin's allow_tools (it lists \
             canteen.menu, wallet.cardBalance) — add it to allow_tools in this plugin's grants"
        );
        assert!(engine.calls.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn the_three_states() {
        let engine = Arc::new(Engine::default());
        let gate = gate(
            &[
                "wallet.cardBalance",
                "wallet.recharge",
                "canteen.menu",
                "canteen.broken",
            ],
            Some(engine.clone()),
        );
        assert_eq!(
            gate.call("wallet.cardBalance", "{\"card\":1}").await,
            r#"{"content":"{\"yuan\":12.5}","is_error":false}"#
        );
        assert_eq!(
            gate.call("canteen.menu", "{}").await,
            r#"{"content":"rice \"and\" tofu","is_error":false}"#
        );
        assert_eq!(
            gate.call("canteen.broken", "{}").await,
            r#"{"content":"tool error: upstream 503","is_error":true}"#
        );
        assert_eq!(
            gate.call("wallet.recharge", "{}").await,
            "error: blocked by policy: blocked: money is off for wallet"
        );
        let calls = engine.calls.lock().unwrap();
        assert_eq!(
            calls[0],
            (
                "helper.go".into(),
                "wallet.cardBalance".into(),
                serde_json::json!({"card": 1})
            )
        );
    }

    #[tokio::test]
    async fn invalid_args_and_no_dispatcher() {
        let gate_with = gate(&["canteen.menu"], Some(Arc::default()));
        assert!(
            gate_with
                .call("canteen.menu", "{nope")
                .await
                .starts_with("error: args-json is not valid JSON: key must be a string")
        );
        assert_eq!(
            gate(&["canteen.menu"], None)
                .call("canteen.menu", "{}")
                .await,
            "error: tool calls are not available right now"
        );
    }

    #[tokio::test]
    async fn other_plugins_tools_are_refused_naming_the_plugin() {
        let engine = Arc::new(Engine::default());
        assert_eq!(
            gate(&["forum.post"], Some(engine.clone()))
                .call("forum.post", "{}")
                .await,
            "error: tool \"forum.post\" is supplied by plugin \"forum\", which is not bundled; \
             plugins may call only bundled tools"
        );
        assert!(engine.calls.lock().unwrap().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_ends_a_slow_call() {
        let gate = gate(&["canteen.slow"], Some(Arc::default()));
        assert_eq!(ToolCallGate::DEFAULT_DEADLINE, Duration::from_secs(30));
        assert_eq!(
            gate.call("canteen.slow", "{}").await,
            "error: tool call exceeded the 30s plugin deadline"
        );
        let short = gate.with_deadline(Duration::from_millis(50));
        assert_eq!(
            short.call("canteen.slow", "{}").await,
            "error: tool call exceeded the 50ms plugin deadline"
        );
    }

    #[tokio::test]
    async fn dispatched_calls_are_disclosed() {
        let outbox = Outbox::new();
        let grants = Grants {
            allow_tools: vec!["canteen.menu".into()],
            ..Grants::default()
        };
        let dispatcher: Arc<dyn ToolDispatch> = Arc::new(Engine::default());
        let gate = ToolCallGate::new(
            "helper",
            &grants,
            &catalog(),
            Some(dispatcher),
            outbox.clone(),
        )
        .unwrap();
        gate.call("canteen.menu", "{}").await;
        gate.call("wallet.recharge", "{}").await;
        let lines = outbox.drain();
        assert_eq!(lines.len(), 1);
        assert_eq!(
            lines[0].text,
            "plugin \"helper\" called tool \"canteen.menu\""
        );
        assert_eq!(lines[0].kind, LineKind::ToolCalled);
    }

    // issue 34: a call nested past the bound is refused before the dispatcher, naming the
    // chain; one at the bound runs.
    #[tokio::test]
    async fn a_call_nested_past_four_deep_is_refused_naming_the_chain() {
        let engine = Arc::new(Engine::default());
        let grants = Grants {
            allow_tools: vec!["canteen.menu".into()],
            ..Grants::default()
        };
        let within = |depth: usize| {
            let dispatcher: Arc<dyn ToolDispatch> = engine.clone();
            let chain = (1..=depth).map(|n| format!("p{n}.go")).collect();
            ToolCallGate::new("p9", &grants, &catalog(), Some(dispatcher), Outbox::new())
                .unwrap()
                .within(chain)
        };
        assert_eq!(
            within(4).call("canteen.menu", "{}").await,
            r#"{"content":"rice \"and\" tofu","is_error":false}"#
        );
        assert_eq!(
            within(5).call("canteen.menu", "{}").await,
            "error: tool \"canteen.menu\" would be the call nested 5 deep; plugins' calls nest \
             at most 4 deep: p1.go -> p2.go -> p3.go -> p4.go -> p5.go -> canteen.menu"
        );
        let calls = engine.calls.lock().unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].0, "p1.go -> p2.go -> p3.go -> p4.go");
    }

    fn granting(allow: &[&str]) -> Grants {
        Grants {
            allow_tools: allow.iter().map(|s| s.to_string()).collect(),
            ..Grants::default()
        }
    }

    #[test]
    fn a_plugin_granted_its_own_tool_is_a_load_error_naming_allow_tools() {
        let errors = self_grants("a", &granting(&["b.y", "a.x"]));
        assert_eq!(
            errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [
                "plugin \"a\": allow_tools names \"a.x\", a tool of this plugin itself; a plugin \
              may not call its own tools — remove \"a.x\" from allow_tools"
            ]
        );
    }

    #[test]
    fn plugins_that_may_call_each_other_in_a_circle_are_found_through_any_of_them() {
        let (a, b, c, d) = (
            granting(&["b.y"]),
            granting(&["c.z", "d.w"]),
            granting(&[]),
            granting(&["a.x"]),
        );
        let grants = BTreeMap::from([("a", &a), ("b", &b), ("c", &c), ("d", &d)]);
        assert_eq!(
            grant_cycle("a", &grants).unwrap().join(" -> "),
            "a.x -> b.y -> d.w -> a.x"
        );
        assert_eq!(
            grant_cycle("d", &grants).unwrap().join(" -> "),
            "d.w -> a.x -> b.y -> d.w"
        );
        assert_eq!(grant_cycle("c", &grants), None);
        // A circle elsewhere is not this plugin's: e calls into it and is not on it.
        let e = granting(&["a.x"]);
        let with_e = BTreeMap::from([("a", &a), ("b", &b), ("d", &d), ("e", &e)]);
        assert_eq!(grant_cycle("e", &with_e), None);
        // A self-grant is refused on its own, not taken for a circle.
        let own = granting(&["s.t"]);
        assert_eq!(grant_cycle("s", &BTreeMap::from([("s", &own)])), None);
    }

    #[test]
    fn an_unknown_name_is_a_load_error_listing_the_known() {
        let grants = Grants {
            allow_tools: vec!["wallet.balance".into()],
            ..Grants::default()
        };
        let err = ToolCallGate::new("helper", &grants, &catalog(), None, Outbox::new())
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "plugin \"helper\": allow_tools names \"wallet.balance\", which is not a known tool; \
             known tools: canteen.broken, canteen.menu, canteen.slow, forum.post, \
             wallet.cardBalance, wallet.recharge"
        );
    }
}
