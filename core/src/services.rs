//! What a running tool may reach, read, persist or spend: the capability gates (DESIGN.md §5),
//! handed to every plugin kind's code in its `ToolContext` (module `handler`), so
//! one code path enforces them for bundled code, documents and remote plugins alike.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use async_trait::async_trait;
use serde_json::Value;

use crate::campus::wire::{Public, Service};
use crate::campus::{Campus, CampusRequest};
use crate::cloud::{Cloud, CloudError};
use crate::consent::{ConsentError, Permission, PermissionState};
use crate::gates::{
    CallScope, ContextBoard, Dispatched, FsGate, LineKind, MessageGate, NetworkGate, Notifier,
    Outbox, PendingMessage, StoreGate, ToolCallGate, ToolCatalog, ToolDispatch, ToolInfo,
    TurnState,
};
use crate::policy::Actor;
use crate::registry::{Plugin, PluginKind};
use crate::settings::Language;

/// Beneath a plugin's own folder, the folder its file reads are confined to (seed 001,
/// `allow_fs`).
pub(crate) const FILES_DIR: &str = "files";

/// What a running tool's services reach beyond its own plugin. The invoke path implements it
/// and is held weakly: a tool still running as the app closes gets "the app is closing".
#[async_trait]
pub(crate) trait PluginHost: Send + Sync {
    fn host(&self) -> &Host;
    /// Every installed tool, for the call-tool gate.
    fn tool_catalog(&self) -> ToolCatalog;
    fn check_cloud(&self, plugin: &str) -> Result<(), ConsentError>;
    /// Records a plugin's cloud call in the audit: the operation, the key and the outcome,
    /// never the value (DESIGN.md §12).
    fn audit_cloud(&self, services: &Services, detail: String);
    /// The student's language, for what a tool they tapped is told.
    fn language(&self) -> Language;
    /// Records a system permission's state as the shell's dialog answered it.
    fn report_permission(
        &self,
        permission: Permission,
        state: PermissionState,
    ) -> Result<(), String>;
    /// A plugin's own call, through the one invoke path, as `actor`; a scheduled one within
    /// the scope of the conversation `made_in`. `chain`: the calls it is nested in, outermost
    /// first, which its own services carry on.
    async fn call(
        &self,
        tool: &str,
        actor: Actor,
        input: Value,
        conversation: Option<String>,
        made_in: Option<String>,
        chain: &[String],
    ) -> Dispatched;
}

/// The host-wide services every plugin shares, told the caller's id.
pub(crate) struct Host {
    pub outbox: Outbox,
    pub notifier: Notifier,
    pub context: ContextBoard,
    pub messages: Messages,
    /// The campus client (DESIGN.md §10): `services.campus`.
    pub campus: Arc<Campus>,
    /// The PKU harness Cloud client (DESIGN.md §12): `services.cloud`.
    pub cloud: Arc<Cloud>,
}

impl Host {
    pub fn new(campus: Arc<Campus>, cloud: Arc<Cloud>) -> Self {
        let outbox = Outbox::new();
        Self {
            cloud,
            notifier: Notifier::new(outbox.clone()),
            context: ContextBoard::new(outbox.clone()),
            messages: Messages::new(outbox.clone()),
            outbox,
            campus,
        }
    }
}

/// The send-message gates, one per session — a conversation, as a tool's `ctx.turn.sessionId`
/// names it (seed 001: the loop guards and the 20 turns count per session) — with what the turn
/// loop is doing in each, which the guards read.
pub(crate) struct Messages {
    outbox: Outbox,
    sessions: Mutex<HashMap<String, (Arc<MessageGate>, TurnState)>>,
}

impl Messages {
    fn new(outbox: Outbox) -> Self {
        Self {
            outbox,
            sessions: Mutex::default(),
        }
    }

    /// `host-send-user-message` from `plugin` in `conversation`.
    fn send(&self, conversation: &str, plugin: &Plugin, text: &str) -> String {
        let (gate, turn) = {
            let mut sessions = crate::lock(&self.sessions);
            let (gate, turn) = sessions.entry(conversation.to_owned()).or_insert_with(|| {
                (
                    Arc::new(MessageGate::new(self.outbox.clone())),
                    TurnState::default(),
                )
            });
            (gate.clone(), turn.clone())
        };
        gate.send(&plugin.id, &plugin.grants, text, &turn)
    }

    /// A turn of `conversation` runs; `started_by` is the plugin whose message started it.
    pub fn turn_started(&self, conversation: &str, started_by: Option<&str>) {
        let mut sessions = crate::lock(&self.sessions);
        let (_, turn) = sessions.entry(conversation.to_owned()).or_insert_with(|| {
            (
                Arc::new(MessageGate::new(self.outbox.clone())),
                TurnState::default(),
            )
        });
        *turn = TurnState {
            running: true,
            started_by: started_by.map(str::to_owned),
        };
    }

    pub fn turn_ended(&self, conversation: &str) {
        if let Some((_, turn)) = crate::lock(&self.sessions).get_mut(conversation) {
            *turn = TurnState::default();
        }
    }

    /// The oldest message waiting for a turn of `conversation`.
    pub fn take_next(&self, conversation: &str) -> Option<PendingMessage> {
        let gate = crate::lock(&self.sessions)
            .get(conversation)
            .map(|(gate, _)| gate.clone())?;
        gate.take_next()
    }
}

/// One plugin's gates, built on first use (the network gate starts an HTTP client) and kept
/// for the plugin's life.
pub(crate) struct PluginGates {
    network: OnceLock<Result<NetworkGate, String>>,
    store: OnceLock<Result<StoreGate, String>>,
}

impl PluginGates {
    pub fn new() -> Self {
        Self {
            network: OnceLock::new(),
            store: OnceLock::new(),
        }
    }

    /// `plugin`'s store gate, made on first use: its map under the data directory's `stores`
    /// beside the plugin's own `folder` (`<data>/plugins/<id>`). One gate per plugin, so every
    /// call and the app's backup read and write the same map.
    pub(crate) fn store(
        &self,
        plugin: &Plugin,
        folder: Option<&Path>,
    ) -> Result<&StoreGate, String> {
        self.store
            .get_or_init(|| match folder {
                Some(folder) => {
                    let dir = folder
                        .parent()
                        .map(|p| p.join("stores"))
                        .unwrap_or_else(|| folder.to_path_buf());
                    StoreGate::new(&plugin.id, &plugin.grants, &dir).map_err(|e| e.to_string())
                }
                None => Err("this app has no data directory to store in".into()),
            })
            .as_ref()
            .map_err(|e| format!("error: {e}"))
    }
}

/// A tool call's view of the host.
#[derive(Clone)]
pub struct Services {
    pub(crate) plugin: Arc<Plugin>,
    pub(crate) gates: Arc<PluginGates>,
    pub(crate) core: Weak<dyn PluginHost>,
    pub(crate) actor: Actor,
    pub(crate) conversation: Option<String>,
    /// The calling conversation's scope, for this call only (seed 003); a plugin's own calls
    /// are bounded by it too.
    pub(crate) scope: Arc<CallScope>,
    /// The conversation whose scope bounds a scheduled call: the one that made its job.
    pub(crate) made_in: Option<String>,
    /// `<data dir>/plugins/<id>`; none for an engine without a data directory.
    pub(crate) folder: Option<PathBuf>,
    /// The calls this one runs within, outermost first, ending with its own tool: how deep a
    /// plugin's call through the call-tool gate nests is carried by the call, not kept globally.
    pub(crate) chain: Vec<String>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("plugin", &self.plugin.id)
            .field("actor", &self.actor)
            .finish()
    }
}

impl Services {
    fn network(&self) -> Result<&NetworkGate, String> {
        self.gates
            .network
            .get_or_init(|| {
                NetworkGate::new(&self.plugin.id, &self.plugin.grants, self.plugin.kind)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| format!("error: {e}"))
    }

    /// `host-http-get`: the body, or an `error: ` string.
    pub async fn http_get(&self, url: &str) -> String {
        self.http_request(&reqwest::Method::GET, url, &[], None)
            .await
            .unwrap_or_else(|refusal| refusal)
    }

    /// A request of any method through the same network gate as `http_get`, with every one of
    /// its checks: the body, or an `error: ` string that never repeats a header.
    pub async fn http_request(
        &self,
        method: &reqwest::Method,
        url: &str,
        headers: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<String, String> {
        self.network()?
            .request_within(&self.scope, method, url, headers, body)
            .await
    }

    /// `services.campus.request(service, {method, path, query, body})` (DESIGN.md §10): the
    /// service's answer `{status, body}` with the session added by the core and redacted from
    /// the answer, or a status object (`{status: "signin_required"}`, `{status:
    /// "verification_required", methods}`); an `error: ` string when the plugin may not reach
    /// the service or the service could not be reached. Only a plugin that requires the campus
    /// session and names the service in its scopes reaches it, and only within the calling
    /// conversation's hosts: refused `out_of_scope` before the session is added or anything is
    /// sent.
    pub async fn campus_request(&self, service: &str, request: &Value) -> Result<Value, String> {
        let target = campus_service(&self.plugin, service).map_err(|e| format!("error: {e}"))?;
        let at = url::Url::parse(&format!("https://{}/", target.host()))
            .map_err(|e| format!("error: {e}"))?;
        self.scope.check_url(&at)?;
        let request: CampusRequest = serde_json::from_value(request.clone())
            .map_err(|e| format!("error: services.campus.request: {e}"))?;
        let Some(core) = self.core.upgrade() else {
            return Err("error: the app is closing".into());
        };
        let host = core.host();
        let answer = match target {
            CampusTarget::Signed(service) => host.campus.request(service, &request).await,
            CampusTarget::Public(service) => host.campus.public_request(service, &request).await,
        }
        .map_err(|e| format!("error: {e}"))?;
        // The student's notice, with the tap that opens the sign-in (DESIGN.md §10). A
        // scheduled read says it once through its job instead (`scheduler::notice`), not a
        // line at every run.
        if answer["status"] == "signin_required" && self.actor != Actor::Scheduler {
            host.outbox.push(
                &self.plugin.id,
                LineKind::SignInRequired,
                format!(
                    "[{}] 校园账号需要重新登录 · The campus account needs you to sign in again",
                    self.plugin.id
                ),
            );
        }
        Ok(answer)
    }

    fn store(&self) -> Result<&StoreGate, String> {
        self.gates.store(&self.plugin, self.folder.as_deref())
    }

    /// `host-store-get`: the value, `""` for an absent key, or an `error: ` string.
    pub fn store_get(&self, key: &str) -> String {
        self.store().map_or_else(|e| e, |s| s.get(key))
    }

    /// `host-store-set`: `""` once the value is on disk, or an `error: ` string.
    pub fn store_set(&self, key: &str, value: &str) -> String {
        self.store().map_or_else(|e| e, |s| s.set(key, value))
    }

    /// `host-fs-read`, confined to the plugin's own folder.
    pub fn read_file(&self, path: &str) -> String {
        match &self.folder {
            Some(folder) => FsGate::new(&self.plugin.grants, folder.join(FILES_DIR))
                .read_within(&self.scope, path),
            None => "error: this app has no data directory to read from".into(),
        }
    }

    /// `host-notify`: one line, prefixed with the plugin's id by the host.
    pub fn notify(&self, text: &str) -> String {
        match self.core.upgrade() {
            Some(core) => core.host().notifier.notify(&self.plugin.id, text),
            None => "error: the app is closing".into(),
        }
    }

    /// `host-log`: one line in the debug log, prefixed with the plugin's id by the host, bounded
    /// as notify is (seed 001).
    pub fn log(&self, text: &str) -> String {
        match self.core.upgrade() {
            Some(core) => core.host().notifier.log(&self.plugin.id, text),
            None => "error: the app is closing".into(),
        }
    }

    /// `host-send-user-message`: queues `text` for the agent as a new turn of this call's
    /// conversation, started once the running turn ends. `""`, or an `error: ` string.
    pub fn send_message(&self, text: &str) -> String {
        let Some(conversation) = &self.conversation else {
            return "error: sending a message needs a conversation; this call was made outside one"
                .into();
        };
        match self.core.upgrade() {
            Some(core) => core.host().messages.send(conversation, &self.plugin, text),
            None => "error: the app is closing".into(),
        }
    }

    /// `host-set-context`: replaces this plugin's contribution to the next turn's prompt.
    pub fn set_context(&self, text: &str) -> String {
        match self.core.upgrade() {
            Some(core) => core
                .host()
                .context
                .set(&self.plugin.id, &self.plugin.grants, text),
            None => "error: the app is closing".into(),
        }
    }

    /// `host-call-tool`: calls another tool through the invoke path in the same conversation,
    /// never as the user (see [`nested_actor`]), so the user's modes, rules and prompts still
    /// outrank the plugin.
    pub async fn call_tool(&self, tool_id: &str, args_json: &str) -> String {
        let Some(core) = self.core.upgrade() else {
            return "error: tool calls are not available right now".into();
        };
        let catalog = core.tool_catalog();
        let dispatcher = Arc::new(Dispatcher {
            core: self.core.clone(),
            actor: self.actor,
            conversation: self.conversation.clone(),
            made_in: self.made_in.clone(),
        });
        match ToolCallGate::new(
            &self.plugin.id,
            &self.plugin.grants,
            &catalog,
            Some(dispatcher),
            core.host().outbox.clone(),
        ) {
            Ok(gate) => {
                gate.within(self.chain.clone())
                    .call(tool_id, args_json)
                    .await
            }
            Err(e) => format!("error: {e}"),
        }
    }

    /// Campus time (`ctx.services.time.resolve`): the core's `time.resolve`, through the one
    /// invoke path as the plugin's own call, so its clock and the semester setting are the
    /// core's, as the model's are.
    pub async fn resolve_time(&self, text: &str) -> Result<Value, String> {
        let core = self.core.upgrade().ok_or("the app is closing")?;
        let called = core
            .call(
                "time.resolve",
                nested_actor(self.actor),
                serde_json::json!({ "text": text }),
                self.conversation.clone(),
                self.made_in.clone(),
                &self.chain,
            )
            .await;
        match called {
            Dispatched::Ran(resolved) => Ok(resolved),
            Dispatched::Failed(message) => Err(message),
            Dispatched::Refused(reason) => Err(format!("blocked by policy: {reason}")),
        }
    }

    /// The calling plugin's title, as the student knows it.
    pub fn plugin_title(&self) -> &str {
        &self.plugin.title
    }

    /// The student's language, for what a tool they tapped is told; Chinese once the core has
    /// closed (the settings' default).
    pub fn language(&self) -> Language {
        self.core
            .upgrade()
            .map_or_else(Language::default, |core| core.language())
    }

    /// Records what the system's permission dialog answered, shown from a tool the student
    /// tapped (seed 000: `services.notify.fix(kind)`).
    pub fn record_permission(
        &self,
        permission: Permission,
        state: PermissionState,
    ) -> Result<(), String> {
        match self.core.upgrade() {
            Some(core) => core.report_permission(permission, state),
            None => Err("the app is closing; nothing was recorded".into()),
        }
    }

    /// A PKU harness Cloud call, `services.cloud.<op>(args)`: without the plugin's cloud consent
    /// it fails `consent_required` (seed 000), and with it reaches the plugin's own records only
    /// (DESIGN.md §12). The audit records the operation, the key and the outcome.
    pub async fn cloud(&self, op: &str, args: &Value) -> Result<Value, CloudError> {
        let Some(core) = self.core.upgrade() else {
            return Err(CloudError::Unavailable("the app is closing".into()));
        };
        let key = args.get("key").and_then(Value::as_str).unwrap_or_default();
        let answer = match core.check_cloud(&self.plugin.id) {
            Err(_) => Err(CloudError::ConsentRequired(self.plugin.id.clone())),
            Ok(()) => self.cloud_op(&core.host().cloud, op, key, args).await,
        };
        let outcome = match &answer {
            Ok(Value::Object(o)) if o.contains_key("version") => {
                format!("version {}", o["version"])
            }
            Ok(Value::Array(a)) => format!("{} records", a.len()),
            Ok(Value::Null) if op == "get" => "none".to_owned(),
            Ok(_) => "done".to_owned(),
            Err(e) => e.code().unwrap_or("refused").to_owned(),
        };
        let detail = match op {
            "list" => format!("cloud.list → {outcome}"),
            _ => format!("cloud.{op} {} → {outcome}", serde_json::Value::from(key)),
        };
        core.audit_cloud(self, crate::text::one_line(&detail, 256));
        answer
    }

    async fn cloud_op(
        &self,
        cloud: &Cloud,
        op: &str,
        key: &str,
        args: &Value,
    ) -> Result<Value, CloudError> {
        cloud.ready()?;
        let plugin = &self.plugin.id;
        let if_version = args.get("ifVersion").and_then(Value::as_i64);
        let key_needed = || match key.chars().count() {
            1..=128 => Ok(key),
            _ => Err(CloudError::Invalid(format!(
                "ctx.services.cloud.{op}: the key is a string of 1 to 128 characters"
            ))),
        };
        match op {
            "get" => Ok(cloud.get(plugin, key_needed()?).await?.map_or(
                Value::Null,
                |e| serde_json::json!({ "value": e.value, "version": e.version }),
            )),
            "set" => {
                let value = args.get("value").unwrap_or(&Value::Null);
                let version = cloud
                    .set(plugin, key_needed()?, Some(value), if_version)
                    .await?;
                Ok(serde_json::json!({ "version": version }))
            }
            "delete" => {
                let version = cloud.set(plugin, key_needed()?, None, if_version).await?;
                Ok(serde_json::json!({ "version": version }))
            }
            "list" => Ok(cloud
                .list(plugin)
                .await?
                .into_iter()
                .map(|(key, version)| serde_json::json!({ "key": key, "version": version }))
                .collect()),
            _ => Err(CloudError::Invalid(format!(
                "ctx.services.cloud has get, set, list and delete; not {op:?}"
            ))),
        }
    }
}

/// A campus service a plugin names: one with the student's session, or a public one.
enum CampusTarget {
    Signed(Service),
    Public(Public),
}

impl CampusTarget {
    fn host(&self) -> &'static str {
        match self {
            CampusTarget::Signed(s) => s.host(),
            CampusTarget::Public(s) => s.host(),
        }
    }
}

/// The service `name` as `plugin` may reach it: named (or its host) in the plugin's `scopes`,
/// and for a service with the student's session, `requires: [campus-session]` (DESIGN.md §10;
/// seed 000: the plugin page shows both).
fn campus_service(plugin: &Plugin, name: &str) -> Result<CampusTarget, String> {
    let target = match (Service::parse(name), Public::parse(name)) {
        (Some(service), _) => CampusTarget::Signed(service),
        (None, Some(service)) => CampusTarget::Public(service),
        (None, None) => {
            let names: Vec<&str> = Service::ALL
                .iter()
                .map(|s| s.as_str())
                .chain(Public::ALL.iter().map(|s| s.as_str()))
                .collect();
            return Err(format!(
                "services.campus.request: there is no campus service \"{name}\"; name one of {}",
                names.join(", ")
            ));
        }
    };
    let signed = matches!(target, CampusTarget::Signed(_));
    if signed && !plugin.requires.iter().any(|r| r == "campus-session") {
        return Err(format!(
            "plugin \"{}\" does not require the campus session; add \"campus-session\" to its requires",
            plugin.id
        ));
    }
    let named = plugin
        .scopes
        .iter()
        .any(|s| s == name || s.eq_ignore_ascii_case(target.host()));
    if !named {
        return Err(format!(
            "plugin \"{}\" does not name the campus service \"{name}\"; add \"{name}\" to its scopes",
            plugin.id
        ));
    }
    Ok(target)
}

struct Dispatcher {
    core: Weak<dyn PluginHost>,
    actor: Actor,
    conversation: Option<String>,
    made_in: Option<String>,
}

#[async_trait]
impl ToolDispatch for Dispatcher {
    async fn dispatch(&self, chain: &[String], tool_id: &str, args: Value) -> Dispatched {
        let Some(core) = self.core.upgrade() else {
            return Dispatched::Refused("the app is closing".into());
        };
        core.call(
            tool_id,
            nested_actor(self.actor),
            args,
            self.conversation.clone(),
            self.made_in.clone(),
            chain,
        )
        .await
    }
}

/// The actor a plugin's own call is decided as. DESIGN.md §3: a call a plugin makes is never
/// the user's tap — under a tap or a turn it is the agent's (userOnly refuses it; rules, modes
/// and prompts apply), under the scheduler it stays the scheduler's (reads only, never a prompt).
fn nested_actor(outer: Actor) -> Actor {
    match outer {
        Actor::User | Actor::Agent => Actor::Agent,
        Actor::Scheduler => Actor::Scheduler,
    }
}

/// What the call-tool gate knows of each tool of `plugins`.
pub(crate) fn catalog_of<'a>(plugins: impl IntoIterator<Item = &'a Plugin>) -> ToolCatalog {
    plugins
        .into_iter()
        .flat_map(|p| {
            p.tools.iter().map(move |t| {
                (
                    t.id.clone(),
                    ToolInfo {
                        bundled: p.kind == PluginKind::Bundled,
                        effect: t.effect,
                        user_only: t.user_only,
                    },
                )
            })
        })
        .collect()
}
