//! The owner of the installed plugins (seed 004, DESIGN.md §2): the registry of their tools,
//! the code behind each (its handler), whether it is on, its capability gates, the grant row and
//! warnings the load-time checks computed, the modes the user set, each plugin's preferences,
//! and the plugins that could not be loaded at open. Install, uninstall, the switch and the
//! modes are changed here, each written to the store before it takes effect.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::Transaction;
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::clock::Clock;
use crate::consent::ConsentState;
use crate::error::EngineError;
use crate::gates::{GrantError, Grants, ToolCatalog};
use crate::handler::{PluginHandler, ToolContext};
use crate::policy::{Mode, ModeSource, UserModes};
use crate::registry::{
    Effect, LoadError, McpTool, Plugin, PluginKind, Registry, Tool, ToolManifest, model_name,
};
use crate::services::{PluginGates, catalog_of};
use crate::settings::SettingsError;
use crate::store::plugins::{self as rows, PluginRow};
use crate::store::values::{Table, put_value, values};
use crate::store::{Store, StoreError};

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

    /// As [`handler`](Self::handler), told where the plugin was installed from (a remote
    /// server's URL).
    fn handler_at(&self, plugin: &Plugin, _source: &str) -> Option<Arc<dyn PluginHandler>> {
        self.handler(plugin)
    }
}

/// A catalog with nothing in it.
pub struct NoCatalog;

impl Catalog for NoCatalog {}

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

/// One data source, as `dashboard.sources` lists it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    pub plugin: String,
    pub key: String,
    pub title: String,
    /// The tool id, `plugin.tool`.
    pub tool: String,
    /// The name the model calls it by.
    pub model_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    pub ttl_ms: u64,
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

/// The state under the lock; readers outside this module see it only through
/// [`InstalledPlugins::read`], which never lets it out across an await.
#[derive(Default)]
pub(crate) struct State {
    pub registry: Registry,
    pub installed: FxHashMap<String, Installed>,
    pub modes: UserModes,
    pub preferences: FxHashMap<String, Value>,
    /// Per remote plugin, the list its server gave last where it changed tools the student
    /// had seen: held until they agree (`update_remote`).
    pub held: FxHashMap<String, HeldList>,
}

/// A remote server's tool list that changed the definition of tools the student had seen:
/// the list as the server gave it, and what changed in each of those tools. Kept in memory
/// only: after a restart the old definitions stand, and the next listing holds the change
/// again.
#[derive(Clone, Debug)]
pub struct HeldList {
    pub tools: Vec<McpTool>,
    pub changed: Vec<ToolChange>,
}

/// What a server changed in one tool the student had seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolChange {
    /// The tool's id (`mcp-<name>.<tool>`).
    pub tool: String,
    pub title: bool,
    pub description: bool,
    pub input: bool,
}

impl State {
    fn modes_of(&self, plugin: &Plugin) -> Vec<(Effect, Mode, ModeSource)> {
        Effect::ALL
            .into_iter()
            .map(|effect| {
                let (mode, source) = self.modes.effective(plugin, effect);
                (effect, mode, source)
            })
            .collect()
    }
}

pub struct InstalledPlugins {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    catalog: Arc<dyn Catalog>,
    state: Mutex<State>,
    load_errors: Mutex<Vec<String>>,
}

/// The core's own plugins the app cannot do without, so none of them can be turned off: the
/// settings plugin is how the assistant opens the screens only the student's hands complete
/// (the campus sign-in, an API key, a permission), and campus time is read through `time` by
/// the other plugins (`Services::resolve_time`). The others may be turned off safely.
pub const REQUIRED: [&str; 2] = ["settings", "time"];

/// Bundled plugins earlier versions of the app installed and this one does not: the sample
/// `wallet`, a fixed balance whose "recharge" moved nothing (the campus card is reached through
/// the campus client now). A data directory that has one loses it at open — unless the catalog
/// ships a plugin of that id: the app's does (校园卡, [`REPLACED`]), which takes the row over.
pub const NO_LONGER_SHIPPED: [&str; 1] = ["wallet"];

/// Bundled plugins of earlier versions that a shipped plugin of the same id replaces: the
/// sample `wallet` by the TypeScript 校园卡 (plugins/wallet). A data directory that has the
/// old one keeps its row (switched on or off), its preferences and its jobs (a check on
/// `wallet.cardBalance` reads the same tool and `balanceYuan` of the real card now), but not a
/// stored mode looser than the new plugin's default: the sample's "recharge" moved nothing, so
/// an `auto` given to it is no consent to the real card's money tool (seed 000: money asks).
/// A stricter mode stays. Once done, the row is marked with [`REPLACEMENT_SOURCE`]; a fresh row
/// of the new plugin gets the mark at once, so the student's own later choices are never
/// touched.
pub const REPLACED: [&str; 1] = ["wallet"];

/// The source of the row of a plugin in [`REPLACED`] once it is the new one's.
pub const REPLACEMENT_SOURCE: &str = "bundled:replaces-sample";

/// A plugin of [`REPLACED`] found in the old version at open, and the modes it lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replaced {
    pub plugin: String,
    /// Each dropped mode and the default it gave way to.
    pub dropped: Vec<(Effect, Mode, Mode)>,
}

/// What opening the installed plugins did to rows of earlier versions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Upgraded {
    /// Ids of [`NO_LONGER_SHIPPED`] plugins removed.
    pub retired: Vec<String>,
    pub replaced: Vec<Replaced>,
}

/// Whether `plugin` is the new plugin of a [`REPLACED`] id: the shipped 校园卡 reaches the
/// card through the campus session, the sample held its card in memory and required nothing.
fn replaces_a_sample(plugin: &Plugin) -> bool {
    REPLACED.contains(&plugin.id.as_str()) && plugin.requires.iter().any(|r| r == "campus-session")
}

/// The source of a fresh bundled row.
fn bundled_source(plugin: &Plugin) -> &'static str {
    match replaces_a_sample(plugin) {
        true => REPLACEMENT_SOURCE,
        false => "bundled",
    }
}

impl InstalledPlugins {
    pub(crate) fn new(store: Arc<Store>, clock: Arc<dyn Clock>, catalog: Arc<dyn Catalog>) -> Self {
        Self {
            store,
            clock,
            catalog,
            state: Mutex::new(State::default()),
            load_errors: Mutex::new(Vec::new()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        crate::lock(&self.state)
    }

    /// Reads the state under the lock. `f` must not wait or call out: it runs with the lock
    /// held (engine.rs, the lock rule).
    pub(crate) fn read<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        f(&self.state())
    }

    /// Loads the installed plugins at open: `builtin` (the core's own) and the catalog's
    /// bundled ones first, then every stored document and remote plugin, then the modes and
    /// preferences. A plugin that cannot be loaded is left out and listed in
    /// [`load_errors`](Self::load_errors); a row that does not parse is an error.
    ///
    /// A bundled plugin the app no longer ships ([`NO_LONGER_SHIPPED`], unless the catalog
    /// still has it) is deleted with its modes and preferences; its ids are returned, for the
    /// engine to remove its jobs and say so in the audit. A plugin of [`REPLACED`] that the
    /// catalog ships anew is taken over by it, without the stored modes looser than its
    /// defaults; what it lost is returned too, for the audit.
    pub(crate) fn load(
        &self,
        builtin: Vec<(Plugin, Arc<dyn PluginHandler>)>,
    ) -> Result<Upgraded, EngineError> {
        let store = &self.store;
        let mut bundled = builtin;
        bundled.extend(self.catalog.bundled());
        let retired: Vec<String> = store
            .read(rows::plugins)?
            .into_iter()
            .filter(|r| r.kind == PluginKind::Bundled && NO_LONGER_SHIPPED.contains(&r.id.as_str()))
            .filter(|r| !bundled.iter().any(|(p, _)| p.id == r.id))
            .map(|r| r.id)
            .collect();
        if !retired.is_empty() {
            // Its modes and preferences go with its row (ON DELETE CASCADE).
            store.write(|tx| {
                retired
                    .iter()
                    .try_for_each(|id| rows::delete_plugin(tx, id))
            })?;
        }
        let replaced = self.take_over(&bundled)?;
        let plugin_rows = store.read(rows::plugins)?;
        let mode_rows = store.read(rows::modes)?;
        let preference_rows = store.read(|c| values(c, Table::Preferences))?;

        let now = self.clock.now_ms();
        let mut errors = Vec::new();
        let mut row_errors = Vec::new();
        let mut pending = Vec::new();
        for row in plugin_rows.iter().filter(|r| r.kind != PluginKind::Bundled) {
            match self.load_row(row) {
                Ok((plugin, handler)) => pending.push((plugin, handler, row.enabled)),
                Err(e) => row_errors.push(e.to_string()),
            }
        }
        let loading = bundled.iter().map(|(p, _)| p);
        let mut circled = circles(loading.chain(pending.iter().map(|(p, ..)| p)));
        let mut state = self.state();
        for (plugin, handler) in bundled {
            let row = plugin_rows.iter().find(|r| r.id == plugin.id);
            if row.is_none() {
                let fresh = PluginRow {
                    id: plugin.id.clone(),
                    kind: PluginKind::Bundled,
                    source: bundled_source(&plugin).into(),
                    manifest: None,
                    enabled: true,
                };
                store.write(|tx| rows::put_plugin(tx, &fresh, now))?;
            }
            // A plugin the app needs is on, even where an earlier version stored it off.
            let enabled = row.is_none_or(|r| r.enabled) || REQUIRED.contains(&plugin.id.as_str());
            if let Some(circle) = circled.remove(&plugin.id) {
                errors.push(circle);
            } else if let Err(e) = register(&mut state, plugin, handler, enabled) {
                errors.push(e.to_string());
            }
        }
        errors.extend(row_errors);
        pending.retain(|(plugin, ..)| match circled.remove(&plugin.id) {
            Some(circle) => {
                errors.push(circle);
                false
            }
            None => true,
        });
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
            state.modes.set(&plugin, effect, mode);
        }
        state.preferences = preference_rows.into_iter().collect();
        drop(state);
        *crate::lock(&self.load_errors) = errors;
        Ok(Upgraded { retired, replaced })
    }

    /// Hands each old row of a [`REPLACED`] plugin that `bundled` ships anew to the new plugin:
    /// its stored modes looser than the new defaults are cleared, and the row is marked, in
    /// one transaction.
    fn take_over(
        &self,
        bundled: &[(Plugin, Arc<dyn PluginHandler>)],
    ) -> Result<Vec<Replaced>, EngineError> {
        let store = &self.store;
        let old: Vec<PluginRow> = store
            .read(rows::plugins)?
            .into_iter()
            .filter(|r| r.kind == PluginKind::Bundled && REPLACED.contains(&r.id.as_str()))
            .filter(|r| r.source != REPLACEMENT_SOURCE)
            .collect();
        if old.is_empty() {
            return Ok(Vec::new());
        }
        let modes = store.read(rows::modes)?;
        let mut replaced = Vec::new();
        for row in old {
            let Some((plugin, _)) = bundled
                .iter()
                .find(|(p, _)| p.id == row.id && replaces_a_sample(p))
            else {
                continue;
            };
            let dropped: Vec<(Effect, Mode, Mode)> = modes
                .iter()
                .filter(|(id, _, _)| *id == row.id)
                .filter_map(|&(_, effect, mode)| {
                    let (default, _) = crate::policy::default_mode(plugin, effect);
                    (mode < default).then_some((effect, mode, default))
                })
                .collect();
            let marked = PluginRow {
                source: REPLACEMENT_SOURCE.into(),
                ..row.clone()
            };
            store.write(|tx| {
                for (effect, _, _) in &dropped {
                    rows::clear_mode(tx, &row.id, *effect)?;
                }
                rows::put_plugin(tx, &marked, self.clock.now_ms())
            })?;
            replaced.push(Replaced {
                plugin: row.id,
                dropped,
            });
        }
        Ok(replaced)
    }

    fn load_row(&self, row: &PluginRow) -> Result<(Plugin, Arc<dyn PluginHandler>), LoadError> {
        let text = row.manifest.as_deref().unwrap_or("null");
        let json: Value = serde_json::from_str(text).map_err(|e| LoadError {
            plugin: row.id.clone(),
            field: "manifest".into(),
            message: e.to_string(),
        })?;
        let plugin = Plugin::reload(crate::registry::parse_manifest(&json)?, row.kind)?;
        let handler = self
            .catalog
            .handler_at(&plugin, &row.source)
            .unwrap_or_else(|| Arc::new(NoCode));
        Ok((plugin, handler))
    }

    /// Plugins that were installed but could not be loaded at open, with why.
    pub fn load_errors(&self) -> Vec<String> {
        crate::lock(&self.load_errors).clone()
    }

    /// Adds what another owner could not load at open (the scheduler's jobs).
    pub(crate) fn add_load_errors(&self, errors: Vec<String>) {
        crate::lock(&self.load_errors).extend(errors);
    }

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
            kind: plugin.kind,
            source: source.into(),
            manifest,
            enabled: true,
        };
        let now = self.clock.now_ms();
        self.store.write(|tx| rows::put_plugin(tx, &row, now))?;
        put(&mut state, plugin, handler, true, checked);
        Ok(())
    }

    /// Installs a plugin with the code the catalog has for it (or none). Returns its id.
    pub fn install_from_catalog(
        &self,
        plugin: Plugin,
        source: &str,
    ) -> Result<String, EngineError> {
        let id = plugin.id.clone();
        // Told the source: a remote plugin's code is the server at its URL.
        let handler = self
            .catalog
            .handler_at(&plugin, source)
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
        self.install_from_catalog(Plugin::from_mcp(server, title, tools)?, url)
    }

    /// The load-time checks of `plugin` against the installed ones, installing nothing: its
    /// grant row and warnings, for a consent screen. With `replacing`, an installed plugin of
    /// the same id is set aside for the check (an update).
    pub(crate) fn check_new(
        &self,
        plugin: &Plugin,
        replacing: bool,
    ) -> Result<(String, Vec<String>), LoadError> {
        let mut state = self.state();
        let old = if replacing {
            state.registry.plugin(&plugin.id).cloned()
        } else {
            None
        };
        if old.is_some() {
            state.registry.remove(&plugin.id);
        }
        let checked = check(&state, plugin);
        if let Some(old) = old {
            state.registry.insert_checked(old);
        }
        checked.map(|c| (c.grant_row, c.warnings))
    }

    /// An installed document and the link it came from.
    pub(crate) fn document(&self, plugin: &str) -> Result<(Arc<Plugin>, String), EngineError> {
        let (installed, source) = self.installed(plugin)?;
        if !matches!(installed.kind, PluginKind::Official | PluginKind::Community) {
            return Err(EngineError::Link {
                link: plugin.to_owned(),
                message: "only a plugin document is updated from its link".into(),
            });
        }
        Ok((installed, source))
    }

    /// Puts a new version of installed plugin `old` in its place, with the code the catalog
    /// has for it; its switch, modes and preferences stay. Nothing changes if the new version
    /// does not pass the checks.
    pub(crate) fn replace_from_catalog(
        &self,
        old: &str,
        plugin: Plugin,
        source: &str,
    ) -> Result<(), EngineError> {
        let handler = self
            .catalog
            .handler_at(&plugin, source)
            .unwrap_or_else(|| Arc::new(NoCode));
        self.replace(old, plugin, source, Some(handler))
    }

    /// An installed plugin and where it came from.
    pub(crate) fn installed(&self, plugin: &str) -> Result<(Arc<Plugin>, String), EngineError> {
        let installed = self
            .state()
            .registry
            .plugin(plugin)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchPlugin(plugin.to_owned()))?;
        Ok((installed, self.source(plugin)?))
    }

    /// Puts a new version of installed plugin `old` in its place with `handler` (or the one it
    /// has); its switch, modes and preferences stay. Nothing changes if the new version does
    /// not pass the checks.
    pub(crate) fn replace(
        &self,
        old: &str,
        plugin: Plugin,
        source: &str,
        handler: Option<Arc<dyn PluginHandler>>,
    ) -> Result<(), EngineError> {
        if plugin.id != old {
            return Err(EngineError::NoSuchPlugin(plugin.id.clone()));
        }
        let mut state = self.state();
        let handler = match handler {
            Some(handler) => handler,
            None => state
                .installed
                .get(old)
                .map(|i| i.handler.clone())
                .ok_or_else(|| EngineError::NoSuchPlugin(old.to_owned()))?,
        };
        self.swap(&mut state, plugin, source, handler, |_| Ok(()))
    }

    /// Puts the tool list remote server `plugin` gave last (`tools/list`, after
    /// `notifications/tools/list_changed` or the user's refresh) in place of the plugin's, in
    /// one transaction under the lock, so that whatever the user changed while the list was
    /// being fetched is merged rather than overwritten:
    ///
    /// - a tool the user made stricter stays so (seed 004: a server's hint is only tightened);
    /// - a tool the server no longer lists is gone, and a call to it is refused as unknown;
    /// - a new tool starts under the remote defaults. Modes are kept per plugin and effect
    ///   (DESIGN.md §3), so where the user had loosened the mode of a new tool's effect (an
    ///   "Always allow"), that mode is withdrawn: the user allowed the tools they had seen, not
    ///   whatever the server adds later;
    /// - with `hold`, a tool whose title, description or input schema changed keeps the
    ///   definition the student saw, and the list is held (`held`) until they agree to it
    ///   (`accept_held`, which installs it with `hold` off).
    ///
    /// The code stays (the same server, its session kept). Returns the new tools' ids.
    pub(crate) fn update_remote(
        &self,
        plugin: &str,
        tools: &[McpTool],
        hold: bool,
    ) -> Result<Vec<String>, EngineError> {
        let no_such = || EngineError::NoSuchPlugin(plugin.to_owned());
        let mut state = self.state();
        let (old, handler) = state
            .installed
            .get(plugin)
            .filter(|i| i.plugin.kind == PluginKind::Remote)
            .map(|i| (i.plugin.clone(), i.handler.clone()))
            .ok_or_else(no_such)?;
        let name = plugin.strip_prefix("mcp-").ok_or_else(no_such)?;
        let fresh = Plugin::from_mcp(name, &old.title, tools)?;
        let mut manifest = fresh.manifest.clone();
        let mut changed = Vec::new();
        for tool in &mut manifest.tools {
            let (Some(before), Some(offered)) = (old.tool(&tool.name), fresh.tool(&tool.name))
            else {
                continue;
            };
            // The student agreed to the tools they saw: a changed title, description or input
            // schema waits for their agreement, and until then the definition they saw stands
            // for the model and the sheet.
            if let Some(seen) = old.manifest.tools.iter().find(|t| t.name == tool.name) {
                let change = ToolChange {
                    tool: before.id.clone(),
                    title: seen.title != tool.title,
                    description: seen.description != tool.description,
                    input: seen.input != tool.input,
                };
                if hold && (change.title || change.description || change.input) {
                    *tool = ToolManifest {
                        effect: tool.effect.take(),
                        ..seen.clone()
                    };
                    changed.push(change);
                }
            }
            // seed 004: a server's hint is only ever tightened; a stricter one applies at once.
            tool.destructive |= before.destructive;
            if before.effect > offered.effect {
                tool.effect = Some(Value::String(before.effect.as_str().into()));
            }
        }
        let mut now = Plugin::load(manifest, PluginKind::Remote)?;
        now.load_warnings = fresh.load_warnings.clone();
        let added: Vec<&Arc<Tool>> = now
            .tools
            .iter()
            .filter(|t| old.tool(&t.name).is_none())
            .collect();
        let mut withdrawn: Vec<Effect> = Vec::new();
        for tool in &added {
            let looser = state
                .modes
                .get(plugin, tool.effect)
                .is_some_and(|mode| mode < crate::policy::default_mode(&now, tool.effect).0);
            if looser && !withdrawn.contains(&tool.effect) {
                withdrawn.push(tool.effect);
            }
        }
        let added: Vec<String> = added.iter().map(|t| t.id.clone()).collect();
        let source = self.source(plugin)?;
        self.swap(&mut state, now, &source, handler, |tx| {
            withdrawn
                .iter()
                .try_for_each(|&effect| rows::clear_mode(tx, plugin, effect))
        })?;
        for effect in withdrawn {
            state.modes.unset(plugin, effect);
        }
        if changed.is_empty() {
            state.held.remove(plugin);
        } else {
            let held = HeldList {
                tools: tools.to_vec(),
                changed,
            };
            state.held.insert(plugin.to_owned(), held);
        }
        Ok(added)
    }

    /// The tool list remote plugin `plugin`'s server gave that changed tools the student had
    /// seen, if one waits for their agreement.
    pub fn held(&self, plugin: &str) -> Option<HeldList> {
        self.state().held.get(plugin).cloned()
    }

    /// The student agreed to the changed tools of `plugin`: its held list is installed as the
    /// server gave it. Refused when no list is held (it was agreed to, or the server went back).
    pub(crate) fn accept_held(&self, plugin: &str) -> Result<Vec<String>, EngineError> {
        let held = self.held(plugin).ok_or_else(|| {
            EngineError::Invalid(format!(
                "{plugin}: no changed tool definitions wait for agreement; read the plugin's page as it is now"
            ))
        })?;
        self.update_remote(plugin, &held.tools, false)
    }

    /// Re-classes remote tool `tool` to `effect`, never to a looser one (seed 004: a remote
    /// server's hint can only be tightened by the user). Under the lock, so a tool list
    /// installed meanwhile is kept.
    pub(crate) fn reclass_remote(&self, tool: &str, effect: Effect) -> Result<(), EngineError> {
        let mut state = self.state();
        let current = state
            .registry
            .tool(tool)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchPlugin(tool.to_owned()))?;
        let (plugin, handler) = state
            .installed
            .get(&current.plugin)
            .map(|i| (i.plugin.clone(), i.handler.clone()))
            .ok_or_else(|| EngineError::NoSuchPlugin(tool.to_owned()))?;
        if plugin.kind != PluginKind::Remote {
            return Err(SettingsError::new(
                &format!("tools.{tool}.effect"),
                "only a remote server's tools are re-classed; a document's effects are its author's",
            )
            .into());
        }
        if effect < current.effect {
            return Err(SettingsError::new(
                &format!("tools.{tool}.effect"),
                format!(
                    "{tool} is a {} tool; it can be made stricter (a stronger effect), never \
                     {effect}",
                    current.effect
                ),
            )
            .into());
        }
        let mut manifest = plugin.manifest.clone();
        for t in &mut manifest.tools {
            if t.name == current.name {
                t.effect = Some(Value::String(effect.as_str().into()));
            }
        }
        let reloaded = Plugin::load(manifest, PluginKind::Remote)?;
        let source = self.source(&plugin.id)?;
        self.swap(&mut state, reloaded, &source, handler, |_| Ok(()))
    }

    /// Where installed plugin `plugin` came from, as stored.
    fn source(&self, plugin: &str) -> Result<String, EngineError> {
        self.store
            .read(rows::plugins)?
            .into_iter()
            .find(|r| r.id == plugin)
            .map(|r| r.source)
            .ok_or_else(|| EngineError::NoSuchPlugin(plugin.to_owned()))
    }

    /// Puts `plugin` in the place of the installed plugin of its id, keeping its switch, modes
    /// and preferences: checked, then written with `also` in one transaction, then swapped in
    /// memory. Nothing changes if the check or the write fails.
    fn swap(
        &self,
        state: &mut State,
        plugin: Plugin,
        source: &str,
        handler: Arc<dyn PluginHandler>,
        also: impl FnOnce(&Transaction<'_>) -> Result<(), StoreError>,
    ) -> Result<(), EngineError> {
        let old = plugin.id.clone();
        let previous = state
            .installed
            .get(&old)
            .map(|i| (i.plugin.clone(), i.enabled))
            .ok_or_else(|| EngineError::NoSuchPlugin(old.clone()))?;
        state.registry.remove(&old);
        let checked = match check(state, &plugin) {
            Ok(checked) => checked,
            Err(e) => {
                state.registry.insert_checked(previous.0);
                return Err(e.into());
            }
        };
        let row = PluginRow {
            id: plugin.id.clone(),
            kind: plugin.kind,
            source: source.into(),
            manifest: Some(
                serde_json::to_string(&plugin.manifest)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            ),
            enabled: previous.1,
        };
        let now = self.clock.now_ms();
        let written = self.store.write(|tx| {
            rows::put_plugin(tx, &row, now)?;
            also(tx)
        });
        if let Err(e) = written {
            state.registry.insert_checked(previous.0);
            return Err(e.into());
        }
        state.installed.remove(&old);
        put(state, plugin, handler, previous.1, checked);
        Ok(())
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
        self.store.write(|tx| rows::delete_plugin(tx, plugin))?;
        state.registry.remove(plugin);
        state.installed.remove(plugin);
        state.preferences.remove(plugin);
        state.held.remove(plugin);
        // The rows went with the plugin's (ON DELETE CASCADE); a reinstall starts afresh.
        state.modes.forget(plugin);
        Ok(())
    }

    /// Deletes a removed plugin's store (`allow_store`) from the data directory.
    pub(crate) fn delete_store(&self, plugin: &str) {
        if let Some(data_dir) = self.store.path().and_then(std::path::Path::parent) {
            let dir = crate::gates::store_dir(&data_dir.join("plugins").join("stores"), plugin);
            // Absent when the plugin never stored anything.
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    pub fn contains(&self, plugin: &str) -> bool {
        self.state().installed.contains_key(plugin)
    }

    pub fn set_enabled(&self, plugin: &str, enabled: bool) -> Result<(), EngineError> {
        let mut state = self.state();
        if !state.installed.contains_key(plugin) {
            return Err(EngineError::NoSuchPlugin(plugin.to_owned()));
        }
        if !enabled && REQUIRED.contains(&plugin) {
            return Err(EngineError::Required(plugin.to_owned()));
        }
        self.store
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
        self.store
            .write(|tx| rows::set_mode(tx, plugin, effect, mode))?;
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
        Ok(state.modes_of(&installed.plugin))
    }

    /// Installed plugins in id order; `consent` says which requirements the phone meets.
    pub fn views(&self, consent: &ConsentState) -> Vec<PluginView> {
        let state = self.state();
        state
            .registry
            .plugins()
            .map(|p| PluginView {
                plugin: p.clone(),
                enabled: state.installed[&p.id].enabled,
                unmet: p.requires.iter().find(|r| !consent.meets(r)).cloned(),
                modes: state.modes_of(p),
                grant_row: state.installed[&p.id].grant_row.clone(),
                warnings: state.installed[&p.id].warnings.clone(),
            })
            .collect()
    }

    pub fn tool(&self, id: &str) -> Option<Arc<Tool>> {
        self.state().registry.tool(id).cloned()
    }

    /// Every installed tool, for the call-tool gate: only bundled ones may be called.
    pub fn tool_catalog(&self) -> ToolCatalog {
        catalog_of(self.state().registry.plugins().map(|p| &**p))
    }

    pub fn preferences(&self, plugin: &str) -> Option<Value> {
        self.state().preferences.get(plugin).cloned()
    }

    /// Replaces a plugin's preferences, checked against its schema.
    pub fn set_preferences(&self, plugin: &str, value: Value) -> Result<(), EngineError> {
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
        self.store
            .write(|tx| put_value(tx, Table::Preferences, plugin, &value))?;
        state.preferences.insert(plugin.to_owned(), value);
        Ok(())
    }

    /// Every enabled plugin's data sources.
    pub fn data_sources(&self) -> Vec<SourceInfo> {
        let state = self.state();
        state
            .registry
            .plugins()
            .filter(|p| state.installed.get(&p.id).is_some_and(|i| i.enabled))
            .flat_map(|p| {
                p.data_sources.iter().map(|s| {
                    let tool = format!("{}.{}", p.id, s.tool);
                    SourceInfo {
                        plugin: p.id.clone(),
                        key: s.key.clone(),
                        title: s.title.clone(),
                        model_name: model_name(&tool),
                        tool,
                        args: s.args.clone(),
                        ttl_ms: s.ttl_ms,
                    }
                })
            })
            .collect()
    }
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
    let grant_error = |e| grant_load_error(id, e);
    // Only a plugin that calls tools needs the catalog of every tool; building it for each
    // plugin would make opening a data directory quadratic in its plugins.
    let catalog = if plugin.grants.allow_tools.is_empty() {
        crate::gates::ToolCatalog::new()
    } else {
        let mut catalog = catalog_of(state.registry.plugins().map(|p| &**p));
        catalog.extend(catalog_of([plugin]));
        catalog
    };
    if let Some(e) = crate::gates::check_grants(id, &plugin.grants, &catalog)
        .into_iter()
        .next()
    {
        return Err(grant_error(e));
    }
    if !plugin.grants.allow_tools.is_empty() {
        let mut grants: BTreeMap<&str, &Grants> = state
            .registry
            .plugins()
            .map(|p| (p.id.as_str(), &p.grants))
            .collect();
        grants.insert(id, &plugin.grants);
        if let Some(e) = circle_error(id, &grants) {
            return Err(grant_error(e));
        }
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
    warnings.extend(plugin.load_warnings.iter().cloned());
    Ok(Checked {
        grant_row: crate::gates::grant_row(id, &plugin.grants),
        warnings,
    })
}

/// A grant of `plugin` that cannot be honoured, as its load error: one about `allow_tools`
/// names that field.
fn grant_load_error(plugin: &str, e: GrantError) -> LoadError {
    let field = match e {
        GrantError::UnknownTool { .. }
        | GrantError::SelfGrant { .. }
        | GrantError::Cycle { .. } => "grants.allow_tools",
        _ => "grants",
    };
    LoadError {
        plugin: plugin.to_owned(),
        field: field.into(),
        message: e.to_string(),
    }
}

/// Plugins that may call each other in a circle recurse until the app aborts: a circle of
/// `allow_tools` grants through `plugin` among `grants` (each plugin's, by id, `plugin`'s among
/// them) is its load error, naming the circle.
fn circle_error(plugin: &str, grants: &BTreeMap<&str, &Grants>) -> Option<GrantError> {
    let chain = crate::gates::grant_cycle(plugin, grants)?;
    Some(GrantError::Cycle {
        plugin: plugin.to_owned(),
        granted: chain[1].clone(),
        chain: chain.join(" -> "),
    })
}

/// The load errors of the plugins among `loading` whose grants close a circle: they would
/// each wait for the other's tools to be known, and fail naming a tool, not the circle.
fn circles<'a>(loading: impl Iterator<Item = &'a Plugin> + Clone) -> BTreeMap<String, String> {
    let grants: BTreeMap<&str, &Grants> = loading
        .clone()
        .map(|p| (p.id.as_str(), &p.grants))
        .collect();
    loading
        .filter_map(|p| {
            let e = circle_error(&p.id, &grants)?;
            Some((p.id.clone(), grant_load_error(&p.id, e).to_string()))
        })
        .collect()
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
    async fn run(&self, tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Err(format!(
            "the code behind plugin \"{}\" is not available on this device",
            tool.plugin
        ))
    }
}
