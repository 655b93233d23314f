//! The call-tool gate: a plugin calling another tool through the host's invoke path (seed 001,
//! "allow_tools"). The grant is a list of tool ids, not a switch, because one dangerous tool
//! makes every other grant decorative.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::{GrantError, Grants, LineKind, Outbox, human_duration};
use crate::registry::Effect;

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
    async fn dispatch(&self, caller_plugin: &str, tool_id: &str, args: Value) -> Dispatched;
}

/// `host-call-tool` for one plugin.
pub struct ToolCallGate {
    plugin_id: String,
    /// The plugin's `allow_tools`, each with what the catalog said of it at load.
    allowed: BTreeMap<String, ToolInfo>,
    dispatcher: Option<Arc<dyn ToolDispatch>>,
    outbox: Outbox,
    deadline: Duration,
}

impl ToolCallGate {
    /// seed 001: above host-http-get's 10 s, because a legitimate tool needs more; far below
    /// the model's wait, because a plugin's call runs with nothing on screen.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

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
        })
    }

    /// The same gate with another deadline.
    pub fn with_deadline(self, deadline: Duration) -> Self {
        Self { deadline, ..self }
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
            // seed 001: two plugins each granted the other's tool would deadlock; only bundled
            // tools are callable, which removes the cycle by construction.
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
        let Some(dispatcher) = &self.dispatcher else {
            return "error: tool calls are not available right now".to_owned();
        };
        // seed 001: the call is not part of the conversation; a one-line disclosure is.
        self.outbox.push(
            &self.plugin_id,
            LineKind::ToolCalled,
            format!("plugin \"{}\" called tool \"{tool_id}\"", self.plugin_id),
        );
        let dispatched = dispatcher.dispatch(&self.plugin_id, tool_id, args);
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
        async fn dispatch(&self, caller: &str, tool_id: &str, args: Value) -> Dispatched {
            self.calls
                .lock()
                .unwrap()
                .push((caller.into(), tool_id.into(), args.clone()));
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
        ToolCallGate::new("helper", &grants, &catalog(), dispatcher, Outbox::new()).unwrap()
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
                "helper".into(),
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
