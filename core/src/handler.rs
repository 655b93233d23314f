//! The code behind a plugin's tools, as the core calls it: [`PluginHandler`], and what a
//! running tool is told about its call ([`ToolContext`]). Bundled Rust, the document
//! interpreter and MCP clients all implement it; the invoke path is its only caller.

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use url::Url;

use crate::gates::CallScope;
use crate::policy::{Actor, ToolCheck};
use crate::registry::Tool;
use crate::services::Services;
use crate::turn::Scope;

/// How a grant prompt was answered; it reaches the tool and never changes a mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grant {
    Once,
    Always,
}

/// What a tool's own check says about one call, before anything runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assessment {
    pub check: ToolCheck,
    /// Why the check refused, shown to the agent.
    pub reason: Option<String>,
    /// A settings change that loosens a permission (DESIGN.md §3 step 8e).
    pub sensitive: bool,
    /// What this call acts on, as its plugin's code names it (seed 000's resolveEffect): the
    /// prompt's headline, and a call with one always asks the agent, with no "always allow".
    pub target: Option<String>,
}

impl Assessment {
    /// The scope check of a call that reaches `url` (DESIGN.md §3 step 8b): refused when its
    /// host is outside the conversation's hosts, before any prompt, so no answer can widen it.
    pub fn reaching(url: &Url, scope: &Scope) -> Self {
        match CallScope::new(&scope.hosts, &[]).url_outside(url) {
            None => Self::default(),
            Some(reason) => Self {
                check: ToolCheck::Deny,
                reason: Some(reason),
                ..Self::default()
            },
        }
    }
}

/// What a running tool is told about its call, and the gated services it may use.
#[derive(Clone, Debug)]
pub struct ToolContext {
    pub actor: Actor,
    pub grant: Option<Grant>,
    pub conversation: Option<String>,
    /// The conversation's current turn, for a call made in a conversation.
    pub turn: Option<TurnContext>,
    pub tainted: bool,
    /// The core's clock, in the settings' time zone.
    pub now: LocalNow,
    pub services: Services,
    /// Who answers a remote server's question during this call (MCP elicitation): the
    /// shell's broker for the student's tap or the agent's turn, none for a scheduled call.
    pub asker: Option<Asker>,
    /// Where the call says how far it has come (an MCP server's progress notifications): the
    /// chat's running call, for a call of the agent's turn; none otherwise.
    pub progress: Option<Progress>,
}

/// How far a running call has come, as its server says.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressUpdate {
    /// Grows as the work goes on; a count of `total` when that is known.
    pub progress: f64,
    pub total: Option<f64>,
    /// The server's words, if it gives any.
    pub message: Option<String>,
}

/// Where a running call reports its progress.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(ProgressUpdate) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// The shell's broker, as a running call may reach it.
#[derive(Clone)]
pub struct Asker(pub std::sync::Arc<dyn crate::invoke::ApprovalBroker>);

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Asker")
    }
}

/// The time a tool is told it is: the core's clock (so a test's clock is the tool's too) and
/// the local time in the settings' time zone, which a plugin's own code cannot work out (the
/// script engine has no time-zone data).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalNow {
    /// Milliseconds since the Unix epoch.
    pub ms: i64,
    /// The IANA zone, e.g. `Asia/Shanghai`.
    pub time_zone: String,
    /// The zone's offset from UTC now, in minutes (480 in Beijing).
    pub offset_minutes: i32,
    /// `YYYY-MM-DD HH:mm`, local.
    pub local: String,
    /// `YYYY-MM-DD`, local.
    pub date: String,
    /// ISO weekday, 1 (Monday) to 7 (Sunday).
    pub weekday: u32,
}

impl LocalNow {
    /// `now_ms` in `time_zone`; a zone that does not parse is read as Beijing's (the settings
    /// refuse one when it is set).
    pub fn at(now_ms: i64, time_zone: &str) -> Self {
        use chrono::{Datelike, Offset};
        let zone = crate::zone::Zone::named_or_campus(time_zone);
        let local = chrono::DateTime::from_timestamp_millis(now_ms)
            .unwrap_or_default()
            .with_timezone(&zone);
        Self {
            ms: now_ms,
            time_zone: zone.name().into(),
            offset_minutes: local.offset().fix().local_minus_utc() / 60,
            local: local.format("%Y-%m-%d %H:%M").to_string(),
            date: local.format("%Y-%m-%d").to_string(),
            weekday: local.weekday().number_from_monday(),
        }
    }
}

/// The turn a call is made in, as the tool is told it (seed 004: "ctx.turn is set to
/// { sessionId, tainted, userAsked }").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnContext {
    /// The conversation.
    pub session_id: String,
    /// The turn's number in its conversation.
    #[serde(skip)]
    pub number: u64,
    /// The turn has taken in untrusted content, as of this call.
    pub tainted: bool,
    /// The turn started from the user's own words — not from a scheduled job or a plugin's
    /// message.
    pub user_asked: bool,
}

/// The code behind a plugin's tools: bundled Rust, the document interpreter, or an MCP client.
#[async_trait]
pub trait PluginHandler: Send + Sync {
    /// The tool's own scope check. It must not wait: it runs on every call before the decision.
    fn assess(&self, _tool: &Tool, _input: &Value, _scope: &Scope) -> Assessment {
        Assessment::default()
    }

    /// The description the model reads for a tool that writes its own ([`Tool::describes`]),
    /// as the turn offers it; `services` reach the plugin's store. It must not wait: it runs
    /// as each request to the model is written. `None` keeps the manifest's.
    fn describe(&self, _tool: &Tool, _services: &Services) -> Option<String> {
        None
    }

    /// Runs an allowed call. An `Err` is a failure the user can understand; expected,
    /// recoverable states are status objects in `Ok` (seed 004).
    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String>;
}

/// A result as the model is given it: a picture or a sound a server sent as content
/// (`{"type": "image", "data": …}`) becomes a line of words saying what it was — the model
/// reads text, and the bytes stay in the UI's copy for the chat to draw.
pub fn model_copy(result: &Value) -> Value {
    match result {
        Value::Object(fields) => {
            let kind = fields.get("type").and_then(Value::as_str);
            let data = fields.get("data").and_then(Value::as_str);
            match (kind, data) {
                (Some(kind @ ("image" | "audio")), Some(data)) => {
                    let mime = fields
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("?");
                    Value::String(format!(
                        "[{kind}: {mime}, about {} bytes]",
                        data.len() / 4 * 3
                    ))
                }
                _ => Value::Object(
                    fields
                        .iter()
                        .map(|(k, v)| (k.clone(), model_copy(v)))
                        .collect(),
                ),
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(model_copy).collect()),
        other => other.clone(),
    }
}

/// Whether `value` holds a picture or a sound with its bytes, anywhere.
pub fn carries_media(value: &Value) -> bool {
    match value {
        Value::Object(fields) => {
            let media = matches!(
                fields.get("type").and_then(Value::as_str),
                Some("image" | "audio")
            ) && fields.get("data").is_some_and(Value::is_string);
            media || fields.values().any(carries_media)
        }
        Value::Array(items) => items.iter().any(carries_media),
        _ => false,
    }
}
