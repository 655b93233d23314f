//! Plugins as the settings screens show them: their kind, modes per effect and tools.

use harness_core::engine::PluginView;
use harness_core::policy::{Mode, ModeSource};
use harness_core::registry::{self, Effect, PluginKind};

/// One effect's mode and where it came from.
// The core's `PluginView` holds these as `(Effect, Mode, ModeSource)` triples.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ModeRow {
    pub effect: Effect,
    pub mode: Mode,
    pub source: ModeSource,
}

/// A tool as the settings screens show it.
// Not the core's `registry::Tool`: that holds the compiled schema and the handler; the schema
// crosses as JSON text, the model's name computed.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ToolInfo {
    /// `<plugin id>.<tool name>`
    pub id: String,
    pub name: String,
    /// The name the model sees (`<plugin id>__<tool name>`).
    pub model_name: String,
    /// The Chinese title shown to users.
    pub title: String,
    pub title_en: Option<String>,
    pub description: String,
    pub effect: Effect,
    /// The input's JSON Schema.
    pub input_schema_json: String,
    /// Results are third-party content; reading them taints the turn.
    pub untrusted: bool,
    /// Only a tap may start it; hidden from the model.
    pub user_only: bool,
    pub grant: bool,
    pub always_ask: bool,
    /// The prompt headline template, `{field}` replaced by that input field.
    pub target: Option<String>,
}

/// An installed plugin, its modes and its tools.
// Not the core's `PluginView`: the view and its plugin, flattened into one record.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct PluginInfo {
    pub id: String,
    pub kind: PluginKind,
    pub title: String,
    pub title_en: Option<String>,
    pub description: String,
    pub enabled: bool,
    /// The first `requires` entry the phone does not provide now.
    pub unmet: Option<String>,
    /// What the plugin may reach, e.g. `allow_network(api.pku.edu.cn)`, or `no grants`.
    pub grant_row: String,
    /// Dangerous combinations of grants, to show on the plugin's page.
    pub warnings: Vec<String>,
    /// What the phone must provide (`campus-session`, `notifications`, …).
    pub requires: Vec<String>,
    /// Campus sites and services the plugin reaches.
    pub scopes: Vec<String>,
    /// What the plugin stores online, in plain words.
    pub disclosure: Vec<String>,
    /// One row per effect, in the order read, write, money, public.
    pub modes: Vec<ModeRow>,
    pub tools: Vec<ToolInfo>,
}

impl From<&(Effect, Mode, ModeSource)> for ModeRow {
    fn from(&(effect, mode, source): &(Effect, Mode, ModeSource)) -> Self {
        ModeRow {
            effect,
            mode,
            source,
        }
    }
}

impl From<&registry::Tool> for ToolInfo {
    fn from(t: &registry::Tool) -> Self {
        ToolInfo {
            id: t.id.clone(),
            name: t.name.clone(),
            model_name: t.model_name(),
            title: t.title.clone(),
            title_en: t.title_en.clone(),
            description: t.description.clone(),
            effect: t.effect,
            input_schema_json: t.input.source().to_string(),
            untrusted: t.untrusted,
            user_only: t.user_only,
            grant: t.grant,
            always_ask: t.always_ask,
            target: t.target.clone(),
        }
    }
}

impl From<&PluginView> for PluginInfo {
    fn from(view: &PluginView) -> Self {
        let plugin = &view.plugin;
        PluginInfo {
            id: plugin.id.clone(),
            kind: plugin.kind,
            title: plugin.title.clone(),
            title_en: plugin.title_en.clone(),
            description: plugin.description.clone(),
            enabled: view.enabled,
            unmet: view.unmet.clone(),
            grant_row: view.grant_row.clone(),
            warnings: view.warnings.clone(),
            requires: plugin.requires.clone(),
            scopes: plugin.scopes.clone(),
            disclosure: plugin.disclosure.clone(),
            modes: view.modes.iter().map(Into::into).collect(),
            tools: plugin.tools.iter().map(|t| ToolInfo::from(&**t)).collect(),
        }
    }
}
