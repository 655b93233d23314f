//! The core's state over one data directory: installed plugins, modes, rules, conversations,
//! consent, settings, memories and attached documents. Every change is written to the store in
//! one transaction before it takes effect in memory, so a refused or failed write changes
//! nothing and a killed process loses nothing it reported done.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::clock::{Clock, SystemClock};
use crate::consent::{ConsentError, ConsentState, Permission, PermissionState, TERMS_VERSION};
use crate::invoke::{ApprovalBroker, PluginHandler};
use crate::plugins::{builtin, document};
use crate::policy::{Actor, Mode, ModeSource, Rule, RuleError, RuleSet, UserModes};
use crate::registry::{Effect, LoadError, McpTool, Plugin, PluginKind, Registry, Tool};
use crate::secrets::{MemorySecrets, SecretError, SecretStore};
use crate::services::{Host, PluginGates};
use crate::settings::{Change, Settings, SettingsError};
use crate::store::rows::{self, MemoryRow, PluginRow, Table};
use crate::store::{AUDIT_PRUNE_EVERY, Store, StoreError};
use crate::turn::{Conversation, ConversationSettings, Scope};

/// Where the code behind installed plugins comes from, beyond the core's own plugins.
pub trait Catalog: Send + Sync {
    /// Bundled plugins that ship with the app.
    fn bundled(&self) -> Vec<(Plugin, Arc<dyn PluginHandler>)> {
        Vec::new()
    }

    /// The code behind an installed document or remote plugin, when this device has it.
    fn handler(&self, _plugin: &Plugin) -> Option<Arc<dyn PluginHandler>> {
        None
    }
}

/// A catalog with nothing in it.
pub struct NoCatalog;

impl Catalog for NoCatalog {}

/// What an engine is built with.
pub struct Options {
    pub broker: Arc<dyn ApprovalBroker>,
    pub catalog: Arc<dyn Catalog>,
    pub secrets: Arc<dyn SecretStore>,
    pub clock: Arc<dyn Clock>,
    /// Install the core's own plugins (settings, memory, files). Conformance scenarios define
    /// every plugin themselves and turn this off.
    pub builtin_plugins: bool,
    /// The shell's alarm, told the scheduler's next wake time (DESIGN.md §7).
    pub wake: Arc<dyn crate::scheduler::WakeScheduler>,
    /// The shell's receiver of what happens outside its calls (module `events`).
    pub events: Arc<dyn crate::events::EventSink>,
}

impl Options {
    pub fn new(broker: Arc<dyn ApprovalBroker>) -> Self {
        Self {
            broker,
            catalog: Arc::new(NoCatalog),
            secrets: Arc::new(MemorySecrets::default()),
            clock: Arc::new(SystemClock),
            builtin_plugins: true,
            wake: Arc::new(crate::scheduler::NoWake),
            events: Arc::new(crate::events::NoEvents),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Consent(#[from] ConsentError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error("no plugin \"{0}\" is installed")]
    NoSuchPlugin(String),
    #[error("plugin \"{0}\" ships with the app and cannot be removed; turn it off instead")]
    Bundled(String),
    #[error("no conversation \"{0}\"")]
    NoSuchConversation(String),
    #[error("no memory {0}")]
    NoSuchMemory(i64),
    #[error("memory {id} is {state}, not pending")]
    MemoryNotPending { id: i64, state: String },
}

/// A memory's state: the agent's memory in a tainted turn waits for the user (seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryState {
    Active,
    Pending,
    Rejected,
}

impl MemoryState {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryState::Active => "active",
            MemoryState::Pending => "pending",
            MemoryState::Rejected => "rejected",
        }
    }
}

pub(crate) struct Installed {
    pub plugin: Arc<Plugin>,
    pub handler: Arc<dyn PluginHandler>,
    pub enabled: bool,
    pub gates: Arc<PluginGates>,
    /// seed 001: the grant row, baked at load so it describes what the running plugin holds.
    pub grant_row: String,
    pub warnings: Vec<String>,
}

#[derive(Default)]
pub(crate) struct State {
    pub registry: Registry,
    pub installed: FxHashMap<String, Installed>,
    pub modes: UserModes,
    pub rules: Arc<RuleSet>,
    pub conversations: FxHashMap<String, Conversation>,
    pub defaults: ConversationSettings,
    pub consent: ConsentState,
    pub settings: Settings,
    pub preferences: FxHashMap<String, Value>,
}

pub(crate) struct Shared {
    pub state: Mutex<State>,
    pub store: Store,
    pub broker: Arc<dyn ApprovalBroker>,
    pub catalog: Arc<dyn Catalog>,
    pub secrets: Arc<dyn SecretStore>,
    pub clock: Arc<dyn Clock>,
    pub audit_appends: AtomicU64,
    pub load_errors: Mutex<Vec<String>>,
    pub host: Host,
    /// The data directory; none for an in-memory engine.
    pub data_dir: Option<PathBuf>,
    pub wake: Arc<dyn crate::scheduler::WakeScheduler>,
    pub scheduler: crate::scheduler::SchedulerState,
    pub sources: crate::datasource::SourceLocks,
    pub events: Arc<dyn crate::events::EventSink>,
}

/// The core. Cheap to clone: clones share one state.
#[derive(Clone)]
pub struct Engine {
    pub(crate) shared: Arc<Shared>,
}

/// One plugin as the settings screen and `harness tools` show it.
#[derive(Clone, Debug)]
pub struct PluginView {
    pub plugin: Arc<Plugin>,
    pub enabled: bool,
    /// The first `requires` entry the phone does not provide.
    pub unmet: Option<String>,
    pub modes: Vec<(Effect, Mode, ModeSource)>,
    /// What the plugin may reach, in seed 001's fixed order, e.g. `allow_network(api.pku.edu.cn)`.
    pub grant_row: String,
    /// Dangerous combinations of grants, shown at load.
    pub warnings: Vec<String>,
}

const CONSENT_KEY: &str = "state";
const DEFAULTS_KEY: &str = "conversationDefaults";
const GLOBAL_SCOPE: &str = "";

impl Engine {
    /// Opens the data directory `dir`, creating it and its database when missing.
    pub fn open(dir: &Path, options: Options) -> Result<Engine, EngineError> {
        Self::start(Store::open(dir)?, options)
    }

    /// An engine whose state lasts as long as the process.
    pub fn in_memory(options: Options) -> Result<Engine, EngineError> {
        Self::start(Store::open_in_memory()?, options)
    }

    fn start(store: Store, options: Options) -> Result<Engine, EngineError> {
        let builtin_plugins = options.builtin_plugins;
        let data_dir = store.path().and_then(Path::parent).map(Path::to_path_buf);
        let shared = Arc::new_cyclic(|_: &Weak<Shared>| Shared {
            state: Mutex::new(State::default()),
            store,
            broker: options.broker,
            catalog: options.catalog,
            secrets: options.secrets,
            clock: options.clock,
            audit_appends: AtomicU64::new(0),
            load_errors: Mutex::new(Vec::new()),
            host: Host::new(),
            data_dir,
            wake: options.wake,
            scheduler: Default::default(),
            sources: Default::default(),
            events: options.events,
        });
        shared.host.context.report_to(shared.events.clone());
        let engine = Engine { shared };
        engine.load(builtin_plugins)?;
        engine.load_jobs()?;
        Ok(engine)
    }

    pub(crate) fn from_weak(weak: &Weak<Shared>) -> Option<Engine> {
        weak.upgrade().map(|shared| Engine { shared })
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        // Every change below is one assignment after its write committed, so a panic elsewhere
        // cannot leave the state half-changed.
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn now_ms(&self) -> i64 {
        self.shared.clock.now_ms()
    }

    fn store(&self) -> &Store {
        &self.shared.store
    }

    fn load(&self, builtin_plugins: bool) -> Result<(), EngineError> {
        let store = self.store();
        let plugin_rows = store.read(rows::plugins)?;
        let mode_rows = store.read(rows::modes)?;
        let rule_rows: Vec<(String, Vec<Rule>)> = store.read(rows::rules)?;
        let conversation_rows: Vec<rows::ConversationRow<ConversationSettings, Scope>> =
            store.read(rows::conversations)?;
        let settings_rows = store.read(|c| rows::values(c, Table::Settings))?;
        let consent_rows = store.read(|c| rows::values(c, Table::Consent))?;
        let preference_rows = store.read(|c| rows::values(c, Table::Preferences))?;

        let mut bundled = if builtin_plugins {
            builtin::plugins(&Arc::downgrade(&self.shared))
        } else {
            Vec::new()
        };
        bundled.extend(self.shared.catalog.bundled());
        let now = self.now_ms();
        let mut errors = Vec::new();
        let mut state = self.state();
        for (plugin, handler) in bundled {
            let row = plugin_rows.iter().find(|r| r.id == plugin.id);
            if row.is_none() {
                let fresh = PluginRow {
                    id: plugin.id.clone(),
                    kind: "bundled".into(),
                    source: "bundled".into(),
                    manifest: None,
                    enabled: true,
                };
                store.write(|tx| rows::put_plugin(tx, &fresh, now))?;
            }
            let enabled = row.is_none_or(|r| r.enabled);
            if let Err(e) = register(&mut state, plugin, handler, enabled) {
                errors.push(e.to_string());
            }
        }
        let mut pending = Vec::new();
        for row in plugin_rows.iter().filter(|r| r.kind != "bundled") {
            match self.load_row(row) {
                Ok((plugin, handler)) => pending.push((plugin, handler, row.enabled)),
                Err(e) => errors.push(e.to_string()),
            }
        }
        // Rows come in id order, but a plugin's allow_tools may name a tool of one that sorts
        // after it: register in passes until one adds nothing, so every plugin that can load
        // does, whatever its id.
        loop {
            let before = pending.len();
            let mut waiting = Vec::new();
            let mut failures = Vec::new();
            for (plugin, handler, enabled) in pending {
                match check(&state, &plugin) {
                    Ok(checked) => put(&mut state, plugin, handler, enabled, checked),
                    Err(e) => {
                        failures.push(e.to_string());
                        waiting.push((plugin, handler, enabled));
                    }
                }
            }
            if waiting.is_empty() || waiting.len() == before {
                errors.extend(failures);
                break;
            }
            pending = waiting;
        }
        for (plugin, effect, mode) in mode_rows {
            if let (Some(effect), Some(mode)) = (Effect::parse(&effect), Mode::parse(&mode)) {
                state.modes.set(&plugin, effect, mode);
            }
        }
        let mut conversation_rules = FxHashMap::default();
        for (scope, rules) in rule_rows {
            let set = Arc::new(RuleSet::new(rules)?);
            if scope == GLOBAL_SCOPE {
                state.rules = set;
            } else {
                conversation_rules.insert(scope, set);
            }
        }
        for row in conversation_rows {
            let mut conversation = Conversation::new(&row.id, row.settings);
            conversation.scope = row.scope;
            conversation.turns = row.turns;
            conversation.tainted = row.tainted;
            if let Some(rules) = conversation_rules.remove(&row.id) {
                conversation.rules = rules;
            }
            state.conversations.insert(row.id, conversation);
        }
        state.settings = Settings::from_rows(&settings_rows).map_err(StoreError::Corrupt)?;
        if let Some((_, value)) = settings_rows.into_iter().find(|(k, _)| k == DEFAULTS_KEY) {
            state.defaults = serde_json::from_value(value)
                .map_err(|e| StoreError::Corrupt(format!("settings.{DEFAULTS_KEY}: {e}")))?;
        }
        if let Some((_, value)) = consent_rows.into_iter().find(|(k, _)| k == CONSENT_KEY) {
            state.consent = serde_json::from_value(value)
                .map_err(|e| StoreError::Corrupt(format!("consent: {e}")))?;
        }
        state.preferences = preference_rows.into_iter().collect();
        drop(state);
        store.write(rows::prune_audit)?;
        *self
            .shared
            .load_errors
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = errors;
        Ok(())
    }

    fn load_row(&self, row: &PluginRow) -> Result<(Plugin, Arc<dyn PluginHandler>), LoadError> {
        let kind: PluginKind =
            serde_json::from_value(Value::String(row.kind.clone())).map_err(|_| LoadError {
                plugin: row.id.clone(),
                field: "kind".into(),
                message: format!("unknown kind \"{}\"", row.kind),
            })?;
        let text = row.manifest.as_deref().unwrap_or("null");
        let json: Value = serde_json::from_str(text).map_err(|e| LoadError {
            plugin: row.id.clone(),
            field: "manifest".into(),
            message: e.to_string(),
        })?;
        let plugin = Plugin::reload(crate::registry::parse_manifest(&json)?, kind)?;
        let handler = self
            .shared
            .catalog
            .handler(&plugin)
            .unwrap_or_else(|| Arc::new(NoCode));
        Ok((plugin, handler))
    }

    /// Plugins that were installed but could not be loaded at open, with why.
    pub fn load_errors(&self) -> Vec<String> {
        self.shared
            .load_errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    // ---- plugins

    /// Installs a loaded plugin with the code behind its tools; `source` is where it came from.
    /// It starts enabled.
    pub fn install(
        &self,
        plugin: Plugin,
        source: &str,
        handler: Arc<dyn PluginHandler>,
    ) -> Result<(), EngineError> {
        let mut state = self.state();
        // Nothing is written until the plugin is known to load: a refused install leaves no row
        // behind to fail at the next start.
        let checked = check(&state, &plugin)?;
        let manifest = match plugin.kind {
            PluginKind::Bundled => None,
            _ => Some(
                serde_json::to_string(&plugin.manifest)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            ),
        };
        let row = PluginRow {
            id: plugin.id.clone(),
            kind: plugin.kind.as_str().into(),
            source: source.into(),
            manifest,
            enabled: true,
        };
        let now = self.now_ms();
        self.store().write(|tx| rows::put_plugin(tx, &row, now))?;
        put(&mut state, plugin, handler, true, checked);
        Ok(())
    }

    /// Installs a plugin document from `source` (a link); official or community is decided
    /// by the source. Returns the plugin id.
    pub fn install_document(&self, text: &str, source: &str) -> Result<String, EngineError> {
        let doc = document::parse(text)?;
        let official_host = self.state().settings.official_host.clone();
        let plugin = Plugin::load(
            doc.manifest,
            document::kind_for_source(source, &official_host),
        )?;
        let id = plugin.id.clone();
        let handler = self
            .shared
            .catalog
            .handler(&plugin)
            .unwrap_or_else(|| Arc::new(NoCode));
        self.install(plugin, source, handler)?;
        Ok(id)
    }

    /// Installs an MCP server's tools as remote plugin `mcp-<server>`. Returns the plugin id.
    pub fn install_remote(
        &self,
        server: &str,
        title: &str,
        tools: &[McpTool],
        url: &str,
    ) -> Result<String, EngineError> {
        let plugin = Plugin::from_mcp(server, title, tools)?;
        let id = plugin.id.clone();
        let handler = self
            .shared
            .catalog
            .handler(&plugin)
            .unwrap_or_else(|| Arc::new(NoCode));
        self.install(plugin, url, handler)?;
        Ok(id)
    }

    /// Removes an installed document or remote plugin, with its modes and preferences.
    pub fn uninstall(&self, plugin: &str) -> Result<(), EngineError> {
        let mut state = self.state();
        let installed = state
            .installed
            .get(plugin)
            .ok_or_else(|| EngineError::NoSuchPlugin(plugin.to_owned()))?;
        if installed.plugin.kind == PluginKind::Bundled {
            return Err(EngineError::Bundled(plugin.to_owned()));
        }
        self.store().write(|tx| rows::delete_plugin(tx, plugin))?;
        state.registry.remove(plugin);
        state.installed.remove(plugin);
        state.preferences.remove(plugin);
        Ok(())
    }

    pub fn set_enabled(&self, plugin: &str, enabled: bool) -> Result<(), EngineError> {
        let mut state = self.state();
        if !state.installed.contains_key(plugin) {
            return Err(EngineError::NoSuchPlugin(plugin.to_owned()));
        }
        self.store()
            .write(|tx| rows::set_enabled(tx, plugin, enabled))?;
        state
            .installed
            .get_mut(plugin)
            .expect("checked above")
            .enabled = enabled;
        Ok(())
    }

    pub fn set_mode(&self, plugin: &str, effect: Effect, mode: Mode) -> Result<(), EngineError> {
        let mut state = self.state();
        if !state.installed.contains_key(plugin) {
            return Err(EngineError::NoSuchPlugin(plugin.to_owned()));
        }
        self.store()
            .write(|tx| rows::set_mode(tx, plugin, effect.as_str(), mode.as_str()))?;
        state.modes.set(plugin, effect, mode);
        Ok(())
    }

    /// Every effect's mode for one plugin, with where it came from.
    pub fn modes(&self, plugin: &str) -> Result<Vec<(Effect, Mode, ModeSource)>, EngineError> {
        let state = self.state();
        let installed = state
            .installed
            .get(plugin)
            .ok_or_else(|| EngineError::NoSuchPlugin(plugin.to_owned()))?;
        Ok(modes_of(&state, &installed.plugin))
    }

    /// Installed plugins in id order.
    pub fn plugins(&self) -> Vec<PluginView> {
        let state = self.state();
        state
            .registry
            .plugins()
            .map(|p| PluginView {
                plugin: p.clone(),
                enabled: state.installed[&p.id].enabled,
                unmet: p.requires.iter().find(|r| !state.consent.meets(r)).cloned(),
                modes: modes_of(&state, p),
                grant_row: state.installed[&p.id].grant_row.clone(),
                warnings: state.installed[&p.id].warnings.clone(),
            })
            .collect()
    }

    pub fn tool(&self, id: &str) -> Option<Arc<Tool>> {
        self.state().registry.tool(id).cloned()
    }

    // ---- rules and conversations

    /// Replaces the global rules.
    pub fn set_rules(&self, rules: Vec<Rule>) -> Result<(), EngineError> {
        let set = RuleSet::new(rules)?;
        let mut state = self.state();
        self.store()
            .write(|tx| rows::put_rules(tx, GLOBAL_SCOPE, set.rules()))?;
        state.rules = Arc::new(set);
        Ok(())
    }

    pub fn rules(&self) -> Vec<Rule> {
        self.state().rules.rules().to_vec()
    }

    /// Replaces one conversation's own rules.
    pub fn set_conversation_rules(
        &self,
        conversation: &str,
        rules: Vec<Rule>,
    ) -> Result<(), EngineError> {
        let set = RuleSet::new(rules)?;
        let mut state = self.state();
        let conv = state
            .conversations
            .get_mut(conversation)
            .ok_or_else(|| EngineError::NoSuchConversation(conversation.to_owned()))?;
        self.store()
            .write(|tx| rows::put_rules(tx, conversation, set.rules()))?;
        conv.rules = Arc::new(set);
        Ok(())
    }

    /// Opens a conversation with the current defaults; an existing one is kept as it is.
    pub fn open_conversation(&self, id: &str) -> Result<ConversationSettings, EngineError> {
        let mut state = self.state();
        if let Some(existing) = state.conversations.get(id) {
            return Ok(existing.settings.clone());
        }
        let conversation = Conversation::new(id, state.defaults.clone());
        let now = self.now_ms();
        self.store()
            .write(|tx| rows::put_conversation(tx, &conversation.row(), now))?;
        let settings = conversation.settings.clone();
        state.conversations.insert(id.to_owned(), conversation);
        Ok(settings)
    }

    /// Changes one conversation's settings; they apply at its next call and become the default
    /// for new conversations. Other conversations keep theirs (seed 003).
    pub fn set_conversation_settings(
        &self,
        id: &str,
        settings: ConversationSettings,
    ) -> Result<(), EngineError> {
        let mut state = self.state();
        let defaults = settings.clone();
        self.change_conversation(
            &mut state,
            id,
            |c| c.settings = settings,
            |tx| rows::put_value(tx, Table::Settings, DEFAULTS_KEY, &defaults),
        )?;
        state.defaults = defaults;
        Ok(())
    }

    /// Writes a changed copy of one conversation, with `also` in the same transaction, then
    /// puts it in place of the old one. Returns the conversation's turn count.
    fn change_conversation(
        &self,
        state: &mut State,
        id: &str,
        change: impl FnOnce(&mut Conversation),
        also: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<(), StoreError>,
    ) -> Result<u64, EngineError> {
        let mut next = state
            .conversations
            .get(id)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchConversation(id.to_owned()))?;
        change(&mut next);
        let now = self.now_ms();
        self.store().write(|tx| {
            rows::put_conversation(tx, &next.row(), now)?;
            also(tx)
        })?;
        let turns = next.turns;
        state.conversations.insert(id.to_owned(), next);
        Ok(turns)
    }

    pub fn conversation(&self, id: &str) -> Option<Conversation> {
        self.state().conversations.get(id).cloned()
    }

    pub fn conversation_defaults(&self) -> ConversationSettings {
        self.state().defaults.clone()
    }

    /// Sets what a conversation may reach. Only the user does this, from the conversation's
    /// scope settings; approving a call never does.
    pub fn set_scope(&self, id: &str, scope: Scope) -> Result<(), EngineError> {
        self.change_conversation(&mut self.state(), id, |c| c.scope = scope, |_| Ok(()))?;
        Ok(())
    }

    /// Starts a turn: taint belongs to the turn that read untrusted content. Returns the turn's
    /// number.
    pub fn begin_turn(&self, id: &str) -> Result<u64, EngineError> {
        let turns =
            self.change_conversation(&mut self.state(), id, Conversation::begin_turn, |_| Ok(()))?;
        // seed 001: the notify budget is per turn.
        self.shared.host.notifier.end_turn();
        Ok(turns)
    }

    /// Marks the current turn as having read untrusted content. The mark is saved with the
    /// conversation (DESIGN.md §3: taint outlives a restart); should saving fail, the mark still
    /// holds in memory, since a turn that read untrusted content must never act as a clean one.
    pub fn taint(&self, id: &str) -> Result<(), EngineError> {
        let mut state = self.state();
        let conv = state
            .conversations
            .get(id)
            .ok_or_else(|| EngineError::NoSuchConversation(id.to_owned()))?;
        if conv.tainted {
            return Ok(());
        }
        let saved = self.change_conversation(&mut state, id, |c| c.tainted = true, |_| Ok(()));
        if let Some(conv) = state.conversations.get_mut(id) {
            conv.tainted = true;
        }
        saved.map(drop)
    }

    // ---- consent

    pub fn consent(&self) -> ConsentState {
        self.state().consent.clone()
    }

    pub(crate) fn change_consent(
        &self,
        f: impl FnOnce(&mut ConsentState),
    ) -> Result<(), EngineError> {
        let mut state = self.state();
        let mut next = state.consent.clone();
        f(&mut next);
        self.store()
            .write(|tx| rows::put_value(tx, Table::Consent, CONSENT_KEY, &next))?;
        state.consent = next;
        Ok(())
    }

    /// Records the first-run terms as accepted, at the current version.
    pub fn accept_terms(&self) -> Result<(), EngineError> {
        let now = self.now_ms();
        self.change_consent(|c| {
            c.terms_version = Some(TERMS_VERSION);
            c.terms_accepted_at = Some(now);
        })
    }

    /// The shell reports signing in to (or out of) the campus account.
    pub fn set_campus_session(&self, signed_in: bool) -> Result<(), EngineError> {
        self.change_consent(|c| c.campus_session = signed_in)
    }

    /// The plugin's "Allow cloud" switch.
    pub fn set_cloud_consent(&self, plugin: &str, allowed: bool) -> Result<(), EngineError> {
        if !self.state().installed.contains_key(plugin) {
            return Err(EngineError::NoSuchPlugin(plugin.to_owned()));
        }
        self.change_consent(|c| {
            if allowed {
                c.cloud.insert(plugin.to_owned());
            } else {
                c.cloud.remove(plugin);
            }
        })
    }

    /// Checked before every PKU harness Cloud call a plugin makes: without the plugin's cloud
    /// consent the call fails `consent_required`.
    pub fn check_cloud(&self, plugin: &str) -> Result<(), ConsentError> {
        match self.state().consent.cloud.contains(plugin) {
            true => Ok(()),
            false => Err(ConsentError::CloudConsentRequired(plugin.to_owned())),
        }
    }

    /// The shell reports a system permission's state.
    pub fn report_permission(
        &self,
        permission: Permission,
        state: PermissionState,
    ) -> Result<(), EngineError> {
        self.change_consent(|c| c.set_permission(permission, state))?;
        // The scheduler's alarm is exact only while the exact-alarm permission is granted.
        self.rearm_wake();
        Ok(())
    }

    /// The shell reports the phone's other capabilities (`nfc`, `camera`, …).
    pub fn report_capabilities(&self, capabilities: Vec<String>) -> Result<(), EngineError> {
        self.change_consent(|c| c.capabilities = capabilities.into_iter().collect())
    }

    /// Whether the shell may show the system prompt for `permission` now: only for a tap.
    pub fn request_permission(
        &self,
        permission: Permission,
        actor: Actor,
    ) -> Result<(), ConsentError> {
        match actor {
            Actor::User => Ok(()),
            _ => Err(ConsentError::PromptNeedsATap(permission.requirement())),
        }
    }

    // ---- settings

    pub fn settings(&self) -> Settings {
        self.state().settings.clone()
    }

    pub fn preferences(&self, plugin: &str) -> Option<Value> {
        self.state().preferences.get(plugin).cloned()
    }

    /// Whether a change loosens a permission: a mode to a less strict value, a plugin turned
    /// on, a rule removed or an allow rule added, the model endpoint changed (DESIGN.md §3 8f).
    pub fn loosens(&self, change: &Change) -> bool {
        let state = self.state();
        match change {
            Change::PluginMode {
                plugin,
                effect,
                mode,
            } => match state.installed.get(plugin) {
                Some(installed) => *mode < state.modes.effective(&installed.plugin, *effect).0,
                None => false,
            },
            Change::PluginEnabled { plugin, enabled } => {
                *enabled && state.installed.get(plugin).is_some_and(|i| !i.enabled)
            }
            Change::Rules(next) => {
                let current = state.rules.rules();
                current.iter().any(|r| !next.contains(r))
                    || next
                        .iter()
                        .any(|r| r.kind == crate::policy::RuleKind::Allow && !current.contains(r))
            }
            Change::ModelEndpoint(endpoint) => *endpoint != state.settings.model.endpoint,
            _ => false,
        }
    }

    /// Applies a checked change, from the settings screen or the settings plugin.
    pub fn change_setting(&self, change: Change) -> Result<(), EngineError> {
        // Only the rows of the keys that changed are written, so a change never carries a
        // stale copy of another key over a newer one.
        let app = |f: &dyn Fn(&mut Settings)| -> Result<(), EngineError> {
            let mut state = self.state();
            let mut next = state.settings.clone();
            f(&mut next);
            let before = state.settings.rows();
            let changed: Vec<(String, Value)> = next
                .rows()
                .into_iter()
                .filter(|row| !before.contains(row))
                .collect();
            self.store().write(|tx| {
                changed
                    .iter()
                    .try_for_each(|(key, value)| rows::put_value(tx, Table::Settings, key, value))
            })?;
            state.settings = next;
            Ok(())
        };
        match change {
            Change::Appearance(v) => app(&|s| s.appearance = v),
            Change::Language(v) => app(&|s| s.language = v),
            Change::TimeZone(v) => app(&|s| s.time_zone = v.clone()),
            Change::ModelName(v) => app(&|s| s.model.name = v.clone()),
            Change::ModelEndpoint(v) => app(&|s| s.model.endpoint = v.clone()),
            Change::PluginEnabled { plugin, enabled } => self
                .set_enabled(&plugin, enabled)
                .map_err(|e| named(&format!("plugins.{plugin}.enabled"), e)),
            Change::PluginMode {
                plugin,
                effect,
                mode,
            } => self
                .set_mode(&plugin, effect, mode)
                .map_err(|e| named(&format!("plugins.{plugin}.modes.{effect}"), e)),
            Change::PluginPreferences { plugin, value } => self.set_preferences(&plugin, value),
            Change::Rules(rules) => self.set_rules(rules).map_err(|e| named("rules", e)),
        }
    }

    fn set_preferences(&self, plugin: &str, value: Value) -> Result<(), EngineError> {
        let key = format!("plugins.{plugin}.preferences");
        let mut state = self.state();
        let installed = state.installed.get(plugin).ok_or_else(|| {
            SettingsError::new(&key, format!("no plugin \"{plugin}\" is installed"))
        })?;
        let schema = installed
            .plugin
            .preferences
            .as_ref()
            .ok_or_else(|| SettingsError::new(&key, "this plugin has no preferences"))?;
        schema
            .validate(&value)
            .map_err(|e| SettingsError::new(&key, e.replace("input", "preferences")))?;
        self.store()
            .write(|tx| rows::put_value(tx, Table::Preferences, plugin, &value))?;
        state.preferences.insert(plugin.to_owned(), value);
        Ok(())
    }

    // ---- memories

    /// Saves a memory. One the agent writes in a tainted turn waits for the user's approval.
    pub fn write_memory(
        &self,
        text: &str,
        conversation: Option<&str>,
        turn: Option<u64>,
        tainted: bool,
    ) -> Result<MemoryRow, EngineError> {
        let state = if tainted {
            MemoryState::Pending
        } else {
            MemoryState::Active
        };
        let now = self.now_ms();
        let id = self.store().write(|tx| {
            rows::insert_memory(
                tx,
                text,
                state.as_str(),
                conversation,
                turn.map(|t| t as i64),
                now,
            )
        })?;
        if state == MemoryState::Pending {
            self.shared
                .events
                .emit(crate::events::Event::MemoryPending {
                    memory: id,
                    conversation: conversation.map(str::to_owned),
                });
        }
        self.memory(id)
    }

    pub fn memory(&self, id: i64) -> Result<MemoryRow, EngineError> {
        self.store()
            .read(|c| rows::memory(c, id))?
            .ok_or(EngineError::NoSuchMemory(id))
    }

    pub fn memories(&self) -> Result<Vec<MemoryRow>, EngineError> {
        Ok(self.store().read(rows::memories)?)
    }

    /// The memories in effect: what the agent is told it remembers.
    pub fn memories_in_effect(&self) -> Result<Vec<String>, EngineError> {
        Ok(self
            .memories()?
            .into_iter()
            .filter(|m| m.state == "active")
            .map(|m| m.text)
            .collect())
    }

    /// The user approves (or rejects) a pending memory.
    pub fn decide_memory(&self, id: i64, approve: bool) -> Result<MemoryRow, EngineError> {
        let to = if approve {
            MemoryState::Active
        } else {
            MemoryState::Rejected
        };
        let now = self.now_ms();
        let moved = self
            .store()
            .write(|tx| rows::decide_memory(tx, id, "pending", to.as_str(), now))?;
        let memory = self.memory(id)?;
        if !moved {
            return Err(EngineError::MemoryNotPending {
                id,
                state: memory.state,
            });
        }
        Ok(memory)
    }

    // ---- documents

    /// A document the user attached from the file picker, read into text on the phone. Only
    /// the shell calls this, after the user chose the file on a screen: no tool can.
    pub fn attach_document(
        &self,
        conversation: &str,
        name: &str,
        text: &str,
    ) -> Result<i64, EngineError> {
        if !self.state().conversations.contains_key(conversation) {
            return Err(EngineError::NoSuchConversation(conversation.to_owned()));
        }
        let now = self.now_ms();
        Ok(self
            .store()
            .write(|tx| rows::insert_document(tx, conversation, name, text, now))?)
    }

    pub fn documents(&self, conversation: &str) -> Result<Vec<(i64, String, String)>, EngineError> {
        Ok(self.store().read(|c| rows::documents(c, conversation))?)
    }

    // ---- secrets

    /// Stores a secret in the platform keystore. Only a shell's screen calls this: secrets are
    /// uiOnly, and never reach SQLite, logs or the audit.
    pub fn set_secret(&self, key: &str, value: &str) -> Result<(), EngineError> {
        Ok(self.shared.secrets.set(key, value)?)
    }

    pub fn has_secret(&self, key: &str) -> Result<bool, EngineError> {
        Ok(self.shared.secrets.get(key)?.is_some())
    }

    // ---- audit

    /// The newest `limit` audit rows, oldest first.
    pub fn audit(&self, limit: usize) -> Result<Vec<rows::AuditRow>, EngineError> {
        Ok(self.store().read(|c| rows::audit(c, limit))?)
    }

    pub(crate) fn append_audit(&self, row: &rows::AuditRow) -> Result<(), StoreError> {
        let n = self.shared.audit_appends.fetch_add(1, Ordering::Relaxed) + 1;
        self.store().write(|tx| {
            rows::append_audit(tx, row)?;
            if n % AUDIT_PRUNE_EVERY == 0 {
                rows::prune_audit(tx)?;
            }
            Ok(())
        })
    }
}

fn named(key: &str, e: EngineError) -> EngineError {
    match e {
        EngineError::Store(_) => e,
        other => SettingsError::new(key, other.to_string()).into(),
    }
}

fn modes_of(state: &State, plugin: &Plugin) -> Vec<(Effect, Mode, ModeSource)> {
    Effect::ALL
        .into_iter()
        .map(|effect| {
            let (mode, source) = state.modes.effective(plugin, effect);
            (effect, mode, source)
        })
        .collect()
}

/// Adds a loaded plugin to the state, after the load-time checks of its grants (seed 001: a
/// grant asked for and not honoured is loud).
fn register(
    state: &mut State,
    plugin: Plugin,
    handler: Arc<dyn PluginHandler>,
    enabled: bool,
) -> Result<(), LoadError> {
    let checked = check(state, &plugin)?;
    put(state, plugin, handler, enabled, checked);
    Ok(())
}

/// What the load-time checks computed for a plugin that passed them.
struct Checked {
    grant_row: String,
    warnings: Vec<String>,
}

/// The load-time checks of a plugin against the installed ones: a new id, grants that can be
/// honoured, no store-name clash. Changes nothing.
fn check(state: &State, plugin: &Plugin) -> Result<Checked, LoadError> {
    let id = plugin.id.as_str();
    if state.registry.plugin(id).is_some() {
        return Err(LoadError {
            plugin: id.to_owned(),
            field: "id".into(),
            message: "duplicate plugin id: a plugin with this id is already installed".into(),
        });
    }
    let grant_error = |e: crate::gates::GrantError| LoadError {
        plugin: id.to_owned(),
        field: "grants".into(),
        message: e.to_string(),
    };
    // Only a plugin that calls tools needs the catalog of every tool; building it for each
    // plugin would make opening a data directory quadratic in its plugins.
    let catalog = if plugin.grants.allow_tools.is_empty() {
        crate::gates::ToolCatalog::new()
    } else {
        let mut catalog = crate::services::catalog_of(state.registry.plugins().map(|p| &**p));
        catalog.extend(crate::services::catalog_of([plugin]));
        catalog
    };
    if let Some(e) = crate::gates::check_grants(id, &plugin.grants, &catalog)
        .into_iter()
        .next()
    {
        return Err(grant_error(e));
    }
    // Store names are plugin ids lowercased: only a plugin whose id differs in case can clash.
    let namesakes = state
        .registry
        .plugins()
        .filter(|p| p.id.eq_ignore_ascii_case(id))
        .map(|p| (p.id.as_str(), &p.grants));
    let clash = crate::gates::check_store_names(namesakes.chain([(id, &plugin.grants)]))
        .into_iter()
        .next();
    if let Some(e) = clash {
        return Err(grant_error(e));
    }
    let mut warnings = crate::gates::startup_warnings(id, &plugin.grants, &catalog);
    // Bundled plugins are registered first, so every one a newcomer could pass for is here.
    let bundled: Vec<&Plugin> = state
        .registry
        .plugins()
        .filter(|p| p.kind == PluginKind::Bundled)
        .map(|p| &**p)
        .collect();
    warnings.extend(crate::registry::impersonation_warning(plugin, &bundled));
    Ok(Checked {
        grant_row: crate::gates::grant_row(id, &plugin.grants),
        warnings,
    })
}

/// Puts a checked plugin in the state.
fn put(
    state: &mut State,
    plugin: Plugin,
    handler: Arc<dyn PluginHandler>,
    enabled: bool,
    checked: Checked,
) {
    let id = plugin.id.clone();
    let plugin = Arc::new(plugin);
    state.registry.insert_checked(plugin.clone());
    state.installed.insert(
        id,
        Installed {
            plugin,
            handler,
            enabled,
            gates: Arc::new(PluginGates::new()),
            grant_row: checked.grant_row,
            warnings: checked.warnings,
        },
    );
}

/// Stands behind an installed plugin whose code this device does not have.
struct NoCode;

#[async_trait::async_trait]
impl PluginHandler for NoCode {
    async fn run(
        &self,
        tool: &Tool,
        _input: Value,
        _ctx: crate::invoke::ToolContext,
    ) -> Result<Value, String> {
        Err(format!(
            "the code behind plugin \"{}\" is not available on this device",
            tool.plugin
        ))
    }
}
