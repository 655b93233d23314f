//! Plugins and their tools (seed 004, DESIGN.md §2): the three kinds share this one registry.
//!
//! A plugin arrives as a [`Manifest`] (a bundled plugin's definition, a plugin document's
//! header, or the tool list of an MCP server) and is loaded into a [`Plugin`]: every field is
//! checked here, once, and every problem is a [`LoadError`] naming the plugin and the field.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::gates::Grants;
use crate::schema::InputSchema;

/// What a tool changes. Ordered from the weakest to the strongest (seed 004: "if more than one
/// effect applies, pick the strongest").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Read,
    Write,
    Money,
    Public,
}

impl Effect {
    pub const ALL: [Effect; 4] = [Effect::Read, Effect::Write, Effect::Money, Effect::Public];

    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Money => "money",
            Effect::Public => "public",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a plugin came from. Official or community is decided by where a document was
/// installed from, never by anything the document says (DESIGN.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginKind {
    Bundled,
    Official,
    Community,
    Remote,
}

impl PluginKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Bundled => "bundled",
            PluginKind::Official => "official",
            PluginKind::Community => "community",
            PluginKind::Remote => "remote",
        }
    }
}

/// A problem found while loading a plugin. It names the plugin and the field to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin \"{plugin}\": {field}: {message}")]
pub struct LoadError {
    pub plugin: String,
    pub field: String,
    pub message: String,
}

impl LoadError {
    fn new(plugin: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            plugin: plugin.to_owned(),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A plugin as written by its author. Field names are the SDK's (`defaultModes`, `userOnly`…).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    pub id: String,
    /// The Chinese title shown to users.
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// `{"en": {"title": "…", "tools": {"<name>": {"title": "…"}}}}`
    #[serde(default)]
    pub i18n: BTreeMap<String, I18n>,
    /// What the phone must provide (`campus-session`, `notifications`, `exact-alarm`…).
    #[serde(default)]
    pub requires: Vec<String>,
    /// Campus sites and services the plugin reaches, shown on its page.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Effect name → mode name; checked at load.
    #[serde(default)]
    pub default_modes: BTreeMap<String, String>,
    #[serde(default)]
    pub tools: Vec<ToolManifest>,
    #[serde(default)]
    pub data_sources: BTreeMap<String, DataSourceManifest>,
    #[serde(default)]
    pub grants: Grants,
    /// What the plugin stores online, in plain words, shown beside its cloud switch.
    #[serde(default)]
    pub disclosure: Vec<String>,
    /// A JSON Schema for the plugin's preferences object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferences: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct I18n {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub tools: BTreeMap<String, I18nTool>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct I18nTool {
    pub title: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolManifest {
    pub name: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// Kept loose so that a missing effect, two effects or an unknown one each get their own
    /// load error rather than a serde message.
    #[serde(default)]
    pub effect: Option<Value>,
    #[serde(default)]
    pub input: Option<Value>,
    #[serde(default)]
    pub untrusted: bool,
    #[serde(default)]
    pub user_only: bool,
    #[serde(default)]
    pub grant: bool,
    #[serde(default)]
    pub always_ask: bool,
    /// The resolveEffect target: what the call acts on, shown as the prompt's headline.
    /// `{field}` is replaced by that top-level input field.
    #[serde(default)]
    pub target: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DataSourceManifest {
    pub title: String,
    pub tool: String,
    #[serde(default)]
    pub args: Option<Value>,
    pub ttl_ms: u64,
}

/// A loaded tool. Everything the decision needs is a plain field.
#[derive(Debug)]
pub struct Tool {
    /// `<plugin id>.<tool name>`
    pub id: String,
    pub plugin: String,
    pub name: String,
    pub title: String,
    pub title_en: Option<String>,
    pub description: String,
    pub effect: Effect,
    pub input: InputSchema,
    pub untrusted: bool,
    pub user_only: bool,
    pub grant: bool,
    pub always_ask: bool,
    pub target: Option<String>,
}

impl Tool {
    /// The name the model sees.
    pub fn model_name(&self) -> String {
        model_name(&self.id)
    }

    /// The prompt headline this call acts on, if the tool names a target. The template is read
    /// once, left to right: a value is never itself read as a template, and a line break or other
    /// control character in a value becomes a space, so an input cannot make the headline say
    /// something its template does not.
    pub fn resolve_target(&self, input: &Value) -> Option<String> {
        let mut rest = self.target.as_deref()?;
        let mut out = String::with_capacity(rest.len());
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let field = after
                .find('}')
                .map(|close| (&after[..close], &after[close + 1..]));
            match field.and_then(|(name, tail)| input.get(name).map(|v| (v, tail))) {
                Some((value, tail)) => {
                    let shown = match value {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    out.extend(shown.chars().map(|c| if c.is_control() { ' ' } else { c }));
                    rest = tail;
                }
                None => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        Some(out)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataSource {
    pub key: String,
    pub title: String,
    pub tool: String,
    pub args: Option<Value>,
    pub ttl_ms: u64,
}

/// A loaded plugin.
#[derive(Debug)]
pub struct Plugin {
    pub id: String,
    pub kind: PluginKind,
    pub title: String,
    pub title_en: Option<String>,
    pub description: String,
    pub requires: Vec<String>,
    pub scopes: Vec<String>,
    /// Declared defaults that survived the kind's rules (see `policy::default_mode`).
    pub default_modes: BTreeMap<Effect, crate::policy::Mode>,
    pub tools: Vec<Arc<Tool>>,
    pub data_sources: Vec<DataSource>,
    pub grants: Grants,
    pub disclosure: Vec<String>,
    pub preferences: Option<InputSchema>,
    /// The manifest as loaded, kept so that an installed document or remote plugin can be
    /// stored and loaded again.
    pub manifest: Manifest,
}

impl Plugin {
    /// Checks `manifest` and builds the plugin. Remote plugins get their ids from
    /// [`Plugin::from_mcp`], which calls this.
    pub fn load(manifest: Manifest, kind: PluginKind) -> Result<Plugin, LoadError> {
        Self::load_with(manifest, kind, Compile::Now)
    }

    /// Loads a plugin that was installed — and so checked whole — before: its schemas are
    /// compiled on first use rather than all at once when the data directory opens.
    pub fn reload(manifest: Manifest, kind: PluginKind) -> Result<Plugin, LoadError> {
        Self::load_with(manifest, kind, Compile::OnFirstUse)
    }

    fn load_with(
        manifest: Manifest,
        kind: PluginKind,
        compile: Compile,
    ) -> Result<Plugin, LoadError> {
        let original = manifest.clone();
        let id = manifest.id.as_str();
        check_plugin_id(id)?;
        if kind == PluginKind::Remote && !manifest.default_modes.is_empty() {
            return Err(LoadError::new(
                id,
                "defaultModes",
                "remote plugins cannot set default modes",
            ));
        }
        let mut default_modes = BTreeMap::new();
        for (effect_name, mode_name) in &manifest.default_modes {
            let field = format!("defaultModes.{effect_name}");
            let effect = Effect::parse(effect_name).ok_or_else(|| {
                LoadError::new(
                    id,
                    &field,
                    "unknown effect; use read, write, money or public",
                )
            })?;
            let mode = crate::policy::Mode::parse(mode_name).ok_or_else(|| {
                LoadError::new(
                    id,
                    &field,
                    format!("unknown mode \"{mode_name}\"; use auto, ask or off"),
                )
            })?;
            default_modes.insert(effect, mode);
        }
        let en = manifest.i18n.get("en");
        let mut tools: Vec<Arc<Tool>> = Vec::with_capacity(manifest.tools.len());
        for (index, mut tool) in manifest.tools.into_iter().enumerate() {
            // DESIGN.md §2: a remote server is third-party content, whatever it declares.
            tool.untrusted |= kind == PluginKind::Remote;
            let loaded = load_tool(id, index, tool, en, compile)?;
            if tools.iter().any(|t| t.name == loaded.name) {
                return Err(LoadError::new(
                    id,
                    format!("tools[{index}].name"),
                    format!("duplicate tool id \"{}\"", loaded.id),
                ));
            }
            tools.push(Arc::new(loaded));
        }
        let mut data_sources = Vec::with_capacity(manifest.data_sources.len());
        for (key, source) in manifest.data_sources {
            let field = format!("dataSources.{key}.tool");
            match tools.iter().find(|t| t.name == source.tool) {
                None => {
                    return Err(LoadError::new(
                        id,
                        field,
                        format!(
                            "names \"{}\", which is not a tool of this plugin",
                            source.tool
                        ),
                    ));
                }
                // seed 004: data sources feed widgets and scheduled checks, which only read.
                Some(t) if t.effect != Effect::Read => {
                    return Err(LoadError::new(
                        id,
                        field,
                        format!(
                            "names \"{}\", which has the {} effect; a data source must be a read tool",
                            t.name, t.effect
                        ),
                    ));
                }
                Some(_) => {}
            }
            data_sources.push(DataSource {
                key,
                title: source.title,
                tool: source.tool,
                args: source.args,
                ttl_ms: source.ttl_ms,
            });
        }
        let preferences = match (manifest.preferences, compile) {
            (Some(schema), Compile::Now) => Some(InputSchema::compile(schema).map_err(|e| {
                LoadError::new(id, "preferences", format!("not a valid JSON Schema: {e}"))
            })?),
            (Some(schema), Compile::OnFirstUse) => Some(InputSchema::deferred(schema)),
            (None, _) => None,
        };
        Ok(Plugin {
            id: manifest.id.clone(),
            kind,
            title: manifest.title,
            title_en: en.and_then(|e| e.title.clone()),
            description: manifest.description,
            requires: manifest.requires,
            scopes: manifest.scopes,
            default_modes,
            tools,
            data_sources,
            grants: manifest.grants,
            disclosure: manifest.disclosure,
            preferences,
            manifest: original,
        })
    }

    /// A remote plugin from an MCP server's `tools/list` answer. The plugin id is
    /// `mcp-<server>`; `readOnlyHint: true` makes a read tool, anything else a write tool
    /// (DESIGN.md §2), and every result is untrusted third-party content.
    pub fn from_mcp(server: &str, title: &str, tools: &[McpTool]) -> Result<Plugin, LoadError> {
        let manifest = Manifest {
            id: format!("mcp-{server}"),
            title: title.to_owned(),
            tools: tools
                .iter()
                .map(|t| ToolManifest {
                    name: t.name.clone(),
                    title: t.title.clone().unwrap_or_else(|| t.name.clone()),
                    description: t.description.clone().unwrap_or_default(),
                    effect: Some(Value::String(
                        if t.annotations.read_only_hint == Some(true) {
                            "read"
                        } else {
                            "write"
                        }
                        .into(),
                    )),
                    input: Some(t.input_schema.clone()),
                    ..ToolManifest::default()
                })
                .collect(),
            ..Manifest::default()
        };
        Plugin::load(manifest, PluginKind::Remote)
    }

    pub fn tool(&self, name: &str) -> Option<&Arc<Tool>> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// One entry of an MCP `tools/list` result.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    #[serde(default)]
    pub annotations: McpAnnotations,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpAnnotations {
    #[serde(default)]
    pub read_only_hint: Option<bool>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Compile {
    Now,
    OnFirstUse,
}

fn load_tool(
    plugin: &str,
    index: usize,
    tool: ToolManifest,
    en: Option<&I18n>,
    compile: Compile,
) -> Result<Tool, LoadError> {
    let field = |name: &str| format!("tools[{index}].{name}");
    check_tool_name(plugin, &field("name"), &tool.name)?;
    let id = format!("{plugin}.{}", tool.name);
    // DESIGN.md §2: both directions are total and checked.
    let model = model_name(&id);
    if tool_id(&model).as_deref() != Some(id.as_str()) {
        return Err(LoadError::new(
            plugin,
            field("name"),
            format!("tool id \"{id}\" does not round-trip through its model name \"{model}\""),
        ));
    }
    if model.len() > MODEL_NAME_MAX {
        return Err(LoadError::new(
            plugin,
            field("name"),
            format!("model name \"{model}\" is longer than {MODEL_NAME_MAX} characters"),
        ));
    }
    let effect = match tool.effect {
        None | Some(Value::Null) => {
            return Err(LoadError::new(
                plugin,
                field("effect"),
                "declares no effect; declare exactly one of read, write, money, public",
            ));
        }
        Some(Value::String(name)) => Effect::parse(&name).ok_or_else(|| {
            LoadError::new(
                plugin,
                field("effect"),
                format!("unknown effect \"{name}\"; use read, write, money or public"),
            )
        })?,
        Some(Value::Array(names)) if names.len() == 1 => {
            match names[0].as_str().and_then(Effect::parse) {
                Some(e) => e,
                None => {
                    return Err(LoadError::new(
                        plugin,
                        field("effect"),
                        format!(
                            "unknown effect {}; use read, write, money or public",
                            names[0]
                        ),
                    ));
                }
            }
        }
        Some(Value::Array(names)) if names.len() > 1 => {
            return Err(LoadError::new(
                plugin,
                field("effect"),
                format!(
                    "declares {} effects; a tool has exactly one (pick the strongest)",
                    names.len()
                ),
            ));
        }
        Some(other) => {
            return Err(LoadError::new(
                plugin,
                field("effect"),
                format!("{other} is not an effect; use read, write, money or public"),
            ));
        }
    };
    let schema = tool.input.unwrap_or_else(empty_object_schema);
    let input = match compile {
        Compile::Now => InputSchema::compile(schema).map_err(|e| {
            LoadError::new(
                plugin,
                field("input"),
                format!("not a valid JSON Schema: {e}"),
            )
        })?,
        Compile::OnFirstUse => InputSchema::deferred(schema),
    };
    let title_en = en
        .and_then(|e| e.tools.get(&tool.name))
        .map(|t| t.title.clone());
    Ok(Tool {
        id,
        plugin: plugin.to_owned(),
        title: if tool.title.is_empty() {
            tool.name.clone()
        } else {
            tool.title
        },
        name: tool.name,
        title_en,
        description: tool.description,
        effect,
        input,
        untrusted: tool.untrusted,
        user_only: tool.user_only,
        grant: tool.grant,
        always_ask: tool.always_ask,
        target: tool.target,
    })
}

/// Model APIs accept `^[a-zA-Z0-9_-]{1,64}$` as a tool name.
const MODEL_NAME_MAX: usize = 64;

fn name_chars_ok(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn check_plugin_id(id: &str) -> Result<(), LoadError> {
    // A plugin id may not hold `__` or end in `_`: either would make the first `__` of the
    // model name fall inside the plugin id, and the name would map back to another tool.
    if !name_chars_ok(id) || id.contains("__") || id.ends_with('_') {
        return Err(LoadError::new(
            id,
            "id",
            "a plugin id is letters, digits, '-' and '_', without \"__\" and not ending in '_'",
        ));
    }
    Ok(())
}

fn check_tool_name(plugin: &str, field: &str, name: &str) -> Result<(), LoadError> {
    if !name_chars_ok(name) {
        return Err(LoadError::new(
            plugin,
            field,
            format!("tool name \"{name}\" may hold only letters, digits, '-' and '_'"),
        ));
    }
    Ok(())
}

/// `wallet.cardBalance` → `wallet__cardBalance`: the first `.` becomes `__`.
pub fn model_name(tool_id: &str) -> String {
    tool_id.replacen('.', "__", 1)
}

/// `wallet__cardBalance` → `wallet.cardBalance`; `None` when the name holds no `__`.
pub fn tool_id(model_name: &str) -> Option<String> {
    model_name
        .contains("__")
        .then(|| model_name.replacen("__", ".", 1))
}

/// Every installed plugin, and an index from tool id to tool.
#[derive(Debug, Default)]
pub struct Registry {
    plugins: BTreeMap<String, Arc<Plugin>>,
    tools: FxHashMap<String, Arc<Tool>>,
}

impl Registry {
    /// Adds a loaded plugin; a plugin id already installed is a load error.
    pub fn insert(&mut self, plugin: Plugin) -> Result<(), LoadError> {
        if self.plugins.contains_key(&plugin.id) {
            return Err(LoadError::new(
                &plugin.id,
                "id",
                "duplicate plugin id: a plugin with this id is already installed",
            ));
        }
        for tool in &plugin.tools {
            self.tools.insert(tool.id.clone(), tool.clone());
        }
        self.plugins.insert(plugin.id.clone(), Arc::new(plugin));
        Ok(())
    }

    /// Adds a plugin whose id the caller checked is new.
    pub(crate) fn insert_checked(&mut self, plugin: Arc<Plugin>) {
        debug_assert!(!self.plugins.contains_key(&plugin.id));
        for tool in &plugin.tools {
            self.tools.insert(tool.id.clone(), tool.clone());
        }
        self.plugins.insert(plugin.id.clone(), plugin);
    }

    /// Removes a plugin and its tools; returns whether it was installed.
    pub fn remove(&mut self, plugin_id: &str) -> bool {
        match self.plugins.remove(plugin_id) {
            Some(plugin) => {
                for tool in &plugin.tools {
                    self.tools.remove(&tool.id);
                }
                true
            }
            None => false,
        }
    }

    pub fn plugin(&self, id: &str) -> Option<&Arc<Plugin>> {
        self.plugins.get(id)
    }

    pub fn tool(&self, id: &str) -> Option<&Arc<Tool>> {
        self.tools.get(id)
    }

    pub fn plugins(&self) -> impl Iterator<Item = &Arc<Plugin>> {
        self.plugins.values()
    }
}

/// Parses a JSON manifest, naming the field serde could not read.
pub fn parse_manifest(json: &Value) -> Result<Manifest, LoadError> {
    let id = json
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    serde_json::from_value(json.clone()).map_err(|e| LoadError::new(&id, "manifest", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(json: Value, kind: PluginKind) -> Result<Plugin, LoadError> {
        Plugin::load(parse_manifest(&json)?, kind)
    }

    #[test]
    fn ids_and_model_names_map_both_ways() {
        assert_eq!(model_name("wallet.cardBalance"), "wallet__cardBalance");
        assert_eq!(
            tool_id("wallet__cardBalance").as_deref(),
            Some("wallet.cardBalance")
        );
        assert_eq!(model_name("mcp-treehole.search"), "mcp-treehole__search");
        assert_eq!(
            tool_id("mcp-treehole__search").as_deref(),
            Some("mcp-treehole.search")
        );
        assert_eq!(tool_id("nodots"), None);
    }

    #[test]
    fn a_tool_without_an_effect_is_a_load_error() {
        let err = load(
            json!({"id": "wallet", "tools": [{"name": "cardBalance"}]}),
            PluginKind::Bundled,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"wallet\": tools[0].effect: declares no effect; declare exactly one of read, write, money, public"
        );
    }

    #[test]
    fn an_unknown_effect_is_a_load_error() {
        let err = load(
            json!({"id": "wallet", "tools": [{"name": "pay", "effect": "spend"}]}),
            PluginKind::Bundled,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"wallet\": tools[0].effect: unknown effect \"spend\"; use read, write, money or public"
        );
    }

    #[test]
    fn two_effects_are_a_load_error() {
        let err = load(
            json!({"id": "treehole", "tools": [{"name": "post", "effect": ["write", "public"]}]}),
            PluginKind::Community,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"treehole\": tools[0].effect: declares 2 effects; a tool has exactly one (pick the strongest)"
        );
    }

    #[test]
    fn a_duplicate_tool_id_is_a_load_error() {
        let err = load(
            json!({"id": "wallet", "tools": [{"name": "a", "effect": "read"}, {"name": "a", "effect": "write"}]}),
            PluginKind::Bundled,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"wallet\": tools[1].name: duplicate tool id \"wallet.a\""
        );
    }

    #[test]
    fn a_duplicate_plugin_id_is_a_load_error() {
        let mut registry = Registry::default();
        registry
            .insert(load(json!({"id": "wallet"}), PluginKind::Bundled).unwrap())
            .unwrap();
        let err = registry
            .insert(load(json!({"id": "wallet"}), PluginKind::Community).unwrap())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"wallet\": id: duplicate plugin id: a plugin with this id is already installed"
        );
    }

    #[test]
    fn a_plugin_id_that_cannot_round_trip_is_a_load_error() {
        for id in ["my__plugin", "plugin_", "has.dot", ""] {
            let err = load(json!({"id": id}), PluginKind::Community).unwrap_err();
            assert_eq!(err.field, "id", "{id}");
            assert!(err.message.contains("without \"__\""), "{err}");
        }
    }

    #[test]
    fn a_tool_name_with_a_dot_is_a_load_error() {
        let err = Plugin::from_mcp(
            "forum",
            "Forum",
            &[McpTool {
                name: "posts.search".into(),
                ..McpTool::default()
            }],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"mcp-forum\": tools[0].name: tool name \"posts.search\" may hold only letters, digits, '-' and '_'"
        );
    }

    #[test]
    fn a_tool_name_with_double_underscores_still_round_trips() {
        let plugin = load(
            json!({"id": "x", "tools": [{"name": "a__b", "effect": "read"}]}),
            PluginKind::Bundled,
        )
        .unwrap();
        let tool = &plugin.tools[0];
        assert_eq!(tool.model_name(), "x__a__b");
        assert_eq!(tool_id(&tool.model_name()).as_deref(), Some("x.a__b"));
    }

    #[test]
    fn a_model_name_past_64_characters_is_a_load_error() {
        let name = "t".repeat(62);
        let err = load(
            json!({"id": "x", "tools": [{"name": name, "effect": "read"}]}),
            PluginKind::Bundled,
        )
        .unwrap_err();
        assert_eq!(err.field, "tools[0].name");
        assert!(
            err.message.ends_with("is longer than 64 characters"),
            "{err}"
        );
    }

    #[test]
    fn a_data_source_naming_a_missing_tool_is_a_load_error() {
        let err = load(
            json!({"id": "canteen", "tools": [{"name": "crowd", "effect": "read"}],
                   "dataSources": {"menu": {"title": "菜单", "tool": "menu", "ttlMs": 60000}}}),
            PluginKind::Community,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"canteen\": dataSources.menu.tool: names \"menu\", which is not a tool of this plugin"
        );
    }

    #[test]
    fn a_data_source_naming_a_non_read_tool_is_a_load_error() {
        let err = load(
            json!({"id": "canteen", "tools": [{"name": "reserve", "effect": "write"}],
                   "dataSources": {"seat": {"title": "座位", "tool": "reserve", "ttlMs": 60000}}}),
            PluginKind::Community,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"canteen\": dataSources.seat.tool: names \"reserve\", which has the write effect; a data source must be a read tool"
        );
    }

    #[test]
    fn an_unknown_default_mode_is_a_load_error() {
        let err = load(
            json!({"id": "wallet", "defaultModes": {"money": "sometimes"}}),
            PluginKind::Bundled,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"wallet\": defaultModes.money: unknown mode \"sometimes\"; use auto, ask or off"
        );
        let err = load(
            json!({"id": "wallet", "defaultModes": {"cash": "ask"}}),
            PluginKind::Bundled,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"wallet\": defaultModes.cash: unknown effect; use read, write, money or public"
        );
    }

    #[test]
    fn a_remote_plugin_cannot_set_default_modes() {
        let err = load(
            json!({"id": "mcp-x", "defaultModes": {"write": "auto"}}),
            PluginKind::Remote,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"mcp-x\": defaultModes: remote plugins cannot set default modes"
        );
    }

    #[test]
    fn an_invalid_input_schema_is_a_load_error() {
        let err = load(
            json!({"id": "x", "tools": [{"name": "t", "effect": "read", "input": {"type": 5}}]}),
            PluginKind::Bundled,
        )
        .unwrap_err();
        assert_eq!(err.field, "tools[0].input");
        assert!(
            err.message.starts_with("not a valid JSON Schema: "),
            "{err}"
        );
    }

    #[test]
    fn a_misspelled_manifest_field_is_a_load_error() {
        let err = parse_manifest(&json!({"id": "x", "defaultMode": {}})).unwrap_err();
        assert_eq!(err.plugin, "x");
        assert_eq!(err.field, "manifest");
        assert!(err.message.contains("unknown field `defaultMode`"), "{err}");
    }

    #[test]
    fn mcp_read_only_hint_makes_a_read_tool_and_anything_else_a_write_tool() {
        let tools: Vec<McpTool> = serde_json::from_value(json!([
            {"name": "search", "annotations": {"readOnlyHint": true}},
            {"name": "reply", "annotations": {"readOnlyHint": false}},
            {"name": "like"}
        ]))
        .unwrap();
        let plugin = Plugin::from_mcp("treehole", "树洞", &tools).unwrap();
        let effects: Vec<_> = plugin
            .tools
            .iter()
            .map(|t| (t.id.as_str(), t.effect, t.untrusted))
            .collect();
        assert_eq!(
            effects,
            [
                ("mcp-treehole.search", Effect::Read, true),
                ("mcp-treehole.reply", Effect::Write, true),
                ("mcp-treehole.like", Effect::Write, true)
            ]
        );
    }

    #[test]
    fn titles_come_in_chinese_with_an_english_translation() {
        let plugin = load(
            json!({"id": "wallet", "title": "校园卡", "i18n": {"en": {"title": "Campus card", "tools": {"cardBalance": {"title": "Card balance"}}}},
                   "tools": [{"name": "cardBalance", "title": "校园卡余额", "effect": "read"}]}),
            PluginKind::Bundled,
        )
        .unwrap();
        assert_eq!(plugin.title_en.as_deref(), Some("Campus card"));
        assert_eq!(plugin.tools[0].title, "校园卡余额");
        assert_eq!(plugin.tools[0].title_en.as_deref(), Some("Card balance"));
    }

    #[test]
    fn a_target_template_takes_the_call_inputs() {
        let plugin = load(
            json!({"id": "copilot", "tools": [{"name": "tap", "effect": "write", "alwaysAsk": true, "target": "Tap \"{button}\" in {app}"}]}),
            PluginKind::Bundled,
        )
        .unwrap();
        let target = plugin.tools[0].resolve_target(&json!({"button": "Pay", "app": "Alipay"}));
        assert_eq!(target.as_deref(), Some("Tap \"Pay\" in Alipay"));
    }

    #[test]
    fn a_target_value_is_never_read_as_a_template_and_cannot_break_the_line() {
        let plugin = load(
            json!({"id": "copilot", "tools": [{"name": "tap", "effect": "write", "alwaysAsk": true, "target": "Tap \"{button}\" in {app}"}]}),
            PluginKind::Bundled,
        )
        .unwrap();
        let twice = plugin.tools[0].resolve_target(&json!({"button": "Pay", "app": "{button}"}));
        assert_eq!(twice.as_deref(), Some("Tap \"Pay\" in {button}"));
        let broken = plugin.tools[0]
            .resolve_target(&json!({"button": "Pay", "app": "Alipay\nAllow every payment"}));
        assert_eq!(
            broken.as_deref(),
            Some("Tap \"Pay\" in Alipay Allow every payment")
        );
        let unknown = plugin.tools[0].resolve_target(&json!({"button": "Pay"}));
        assert_eq!(unknown.as_deref(), Some("Tap \"Pay\" in {app}"));
    }
}
