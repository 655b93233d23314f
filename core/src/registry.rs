//! Plugins and their tools (seed 004, DESIGN.md §2): the three kinds share this one registry.
//!
//! A plugin arrives as a [`Manifest`] (a bundled plugin's definition, a plugin document's
//! header, or the tool list of an MCP server) and is loaded into a [`Plugin`]: every field is
//! checked here, once, and every problem is a [`LoadError`] naming the plugin and the field.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::declared::{Request, RequestManifest};
use crate::gates::{Grants, NetworkPolicy};
use crate::schema::InputSchema;
use crate::text::{folded, one_line};

/// What a tool changes. Ordered from the weakest to the strongest (seed 004: "if more than one
/// effect applies, pick the strongest").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
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
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
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

    pub fn parse(name: &str) -> Option<Self> {
        [
            PluginKind::Bundled,
            PluginKind::Official,
            PluginKind::Community,
            PluginKind::Remote,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
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
    /// The plugin's own screens, declared as data (DESIGN.md §2): the core draws them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screens: Vec<ScreenManifest>,
    #[serde(default)]
    pub grants: Grants,
    /// PKU harness Cloud: what the plugin stores online (`cloud.disclosures`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud: Option<CloudManifest>,
    /// The single list `cloud.disclosures` replaced: a new manifest with it is refused, naming
    /// `cloud.disclosures`; a plugin installed before reads it as its `cloud.disclosures`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disclosure: Vec<String>,
    /// Requests a student might make of it, in Chinese (`我的校园卡还有多少钱？`); the English
    /// ones in `i18n.en.examples`. The empty chat offers a few, each a tap that sends it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// A JSON Schema for the plugin's preferences object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferences: Option<Value>,
    /// A plugin document's Markdown body: what the agent is told while the plugin is enabled.
    /// Set from the body by `plugins::document::parse`, never written in the front matter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct I18n {
    #[serde(default)]
    pub title: Option<String>,
    /// What the plugin is for, as the student reads it, in this language.
    #[serde(default)]
    pub description: Option<String>,
    /// The example requests, in this language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<Vec<String>>,
    #[serde(default)]
    pub tools: BTreeMap<String, I18nTool>,
    /// `cloud.disclosures` in this language, one line for each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud: Option<CloudManifest>,
}

/// A plugin's PKU harness Cloud declaration (seed 000).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CloudManifest {
    /// What the plugin stores online, in plain words, one line each: listed beside its Allow
    /// cloud switch and on the consent screen.
    #[serde(default)]
    pub disclosures: Vec<String>,
}

/// The most disclosure lines a plugin lists, and the longest line, in characters.
const MAX_DISCLOSURES: usize = 8;
const MAX_DISCLOSURE_CHARS: usize = 200;

/// `lines` as the student reads them, or the load error naming `field` and the line at fault.
fn disclosure_lines(plugin: &str, field: &str, lines: &[String]) -> Result<Vec<String>, LoadError> {
    if lines.len() > MAX_DISCLOSURES {
        return Err(LoadError::new(
            plugin,
            field,
            format!("has {} lines; at most {MAX_DISCLOSURES}", lines.len()),
        ));
    }
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let words = line.trim();
            let fault = if words.is_empty() {
                Some("is empty: say in plain words what the plugin stores online".to_owned())
            } else if words.contains(['\n', '\r']) {
                Some("is more than one line: write each on its own".to_owned())
            } else if words.chars().count() > MAX_DISCLOSURE_CHARS {
                Some(format!("is over {MAX_DISCLOSURE_CHARS} characters"))
            } else {
                None
            };
            match fault {
                Some(m) => Err(LoadError::new(plugin, format!("{field}[{i}]"), m)),
                None => Ok(one_line(words, usize::MAX)),
            }
        })
        .collect()
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
    /// The JSON Schema of the result: an MCP server's `outputSchema` (a result must match it),
    /// a TypeScript tool's `output` or a document's `returns` (what the job tool, the jobs
    /// form and a job's condition read its fields from; a result is not checked against it).
    #[serde(default, alias = "returns", skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    #[serde(default)]
    pub untrusted: bool,
    #[serde(default)]
    pub user_only: bool,
    #[serde(default)]
    pub grant: bool,
    #[serde(default)]
    pub always_ask: bool,
    /// The tool may delete or overwrite what it acts on: an MCP server's `destructiveHint`,
    /// said on the approval sheet. A hint only: it never makes a call looser.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub destructive: bool,
    /// The resolveEffect target: what the call acts on, shown as the prompt's headline.
    /// `{field}` is replaced by that top-level input field.
    #[serde(default)]
    pub target: Option<String>,
    /// A money tool's amount: the top-level input field that holds it and its unit (DESIGN.md
    /// §3 8e: the student's limits are checked against it, and the sheet's headline says it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<AmountManifest>,
    /// A money tool's payee: the top-level input field that names whom the money goes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payee: Option<PayeeManifest>,
    /// The plugin's code names each call's target itself (a TypeScript tool's `resolveEffect`
    /// function, run by its handler's assessment); only a bundled plugin has code to run it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resolves_effect: bool,
    /// The plugin's code writes the description the model reads, from the plugin's store, as
    /// each turn offers the tool (a TypeScript tool's `description` function); `description`
    /// is what it wrote with nothing stored. Only a bundled plugin has code to run it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub describes: bool,
    /// A plugin document's declarative HTTP request (module `declared`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestManifest>,
    /// Words for the result's top-level fields, as the chat labels them:
    /// `{"balanceYuan": {"zh": "余额（元）", "en": "Balance (yuan)"}}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, FieldLabel>,
}

/// `amount: {field, unit}` of a money tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AmountManifest {
    pub field: String,
    pub unit: AmountUnit,
}

/// The unit a money tool's amount field is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AmountUnit {
    Yuan,
    Fen,
}

/// `payee: {field}` of a money tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PayeeManifest {
    pub field: String,
}

/// A result field's label in the two languages the app speaks; `en` falls back to `zh`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FieldLabel {
    pub zh: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub en: Option<String>,
    /// An input field's values in words, by the value the tool takes
    /// (`{today: {zh: 今天, en: Today}}`): a form's choices and the approval sheet show these,
    /// never the value itself, on a Chinese screen.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, FieldLabel>,
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

/// One screen a plugin declares (DESIGN.md §2, seed 004: "a screen calls it with invoke when
/// the user taps"): its sections, drawn by the core's one renderer in each shell.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScreenManifest {
    /// Unique in the plugin; what Today's tiles and a plugin page open.
    pub id: String,
    pub title: FieldLabel,
    pub sections: Vec<SectionManifest>,
}

/// How a section shows its tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SectionShow {
    /// The result's `fields`, each a labelled value with its unit.
    Value,
    /// The result's `items` array, one line per item of its `fields`.
    List,
    /// The result's `items` array as a table whose columns are its `fields`.
    Table,
    /// Inputs typed by the tool's schema, and a send button: the student's own call.
    Form,
    /// A button that calls a tool taking no input: the student's own call.
    Action,
}

/// One section of a declared screen. A value, list or table reads a data source (through its
/// cache) or a read tool; only a form's send or an action's tap calls anything else.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SectionManifest {
    pub show: SectionShow,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<FieldLabel>,
    /// A data source of this plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A tool of this plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The read tool's input (a value, list or table that reads a tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The result's fields a value shows, or each item's fields a list or table shows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// The result's array field a list or table shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<String>,
    /// The item field a list or table is sorted on, smallest first unless `descending`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_by: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub descending: bool,
    /// The item fields' labels (the tool's `labels` name its top-level fields).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, FieldLabel>,
    /// What an empty list or table says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty: Option<FieldLabel>,
    /// A list's or table's item tap: the screen it opens, given the item's values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opens: Option<OpensManifest>,
}

/// The screen an item of a list or table opens (a feed's post opens the post's screen): that
/// screen's form of a read tool is given `args`, each the tool's input named by the item's
/// field, as if the student had typed it there. A screen some item opens is reached from its
/// items only: a plugin's page lists the others.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpensManifest {
    pub screen: String,
    /// The read tool's input → the item's field that gives it.
    pub args: BTreeMap<String, String>,
}

impl ScreenManifest {
    /// The form whose read tool an item's tap fills (see [`OpensManifest`]).
    pub fn item_form(&self) -> Option<&SectionManifest> {
        self.sections
            .iter()
            .find(|s| s.show == SectionShow::Form && s.tool.is_some())
    }
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
    /// What a result must match (a remote server's `outputSchema`), compiled on first use.
    pub output: Option<InputSchema>,
    pub untrusted: bool,
    pub user_only: bool,
    pub grant: bool,
    pub always_ask: bool,
    /// It may delete or overwrite what it acts on (a remote server's `destructiveHint`).
    pub destructive: bool,
    pub target: Option<String>,
    /// A money tool's declared amount (see [`ToolManifest::amount`]).
    pub amount: Option<AmountManifest>,
    /// A money tool's declared payee field (see [`ToolManifest::payee`]).
    pub payee: Option<String>,
    /// Its handler names each call's target (see [`ToolManifest::resolves_effect`]).
    pub resolves_effect: bool,
    /// Its handler writes the model's description each turn (see [`ToolManifest::describes`]).
    pub describes: bool,
    /// The HTTP request a document's tool makes, checked at load.
    pub request: Option<Request>,
    /// The result fields' labels the plugin gives (see [`ToolManifest::labels`]).
    pub labels: BTreeMap<String, FieldLabel>,
    /// The model reads its input schema exactly as declared: a remote server's (MCP: a client
    /// passes a tool's JSON Schema on unchanged). Other plugins' schemas reach the model
    /// without the keywords only forms and checks need (`agent::wire`).
    pub schema_as_declared: bool,
}

impl Tool {
    /// The name the model sees.
    pub fn model_name(&self) -> String {
        model_name(&self.id)
    }

    /// The call's amount in fen, when the tool declares one: `None` for a tool that declares
    /// none, `Some(Err)` naming the field when the input does not hold a non-negative amount
    /// (a call whose amount cannot be read is never counted as nothing). A yuan amount is
    /// rounded up to the fen, so a limit is never passed by a fraction of one.
    pub fn amount_fen(&self, input: &Value) -> Option<Result<u64, String>> {
        let declared = self.amount.as_ref()?;
        let field = &declared.field;
        let unit = match declared.unit {
            AmountUnit::Yuan => "yuan",
            AmountUnit::Fen => "fen",
        };
        let bad = || format!("{field}: expected a non-negative number of {unit}");
        let Some(n) = input.get(field).and_then(Value::as_f64) else {
            return Some(Err(bad()));
        };
        let fen = match declared.unit {
            AmountUnit::Yuan => (n * 100.0 - 1e-6).ceil(),
            AmountUnit::Fen => n.ceil(),
        };
        // 2^53 fen is far above any payment; past it an f64 no longer counts single fen.
        if !(0.0..=9_007_199_254_740_992.0).contains(&fen) {
            return Some(Err(bad()));
        }
        Some(Ok(fen as u64))
    }

    /// The call's payee, when the tool declares one and the input names it: on one line with
    /// nothing invisible, as every sheet shows a call's words.
    pub fn payee(&self, input: &Value) -> Option<String> {
        let value = input.get(self.payee.as_deref()?)?;
        let shown = match value {
            Value::String(s) => s.clone(),
            Value::Null => return None,
            other => other.to_string(),
        };
        Some(one_line(&shown, usize::MAX))
    }

    /// The prompt headline this call acts on, if the tool names a target. The template is read
    /// once, left to right: a value is never itself read as a template, and the headline is put
    /// on one line with nothing invisible (`text::one_line`: no line break, no bidirectional
    /// control), so an input cannot make it say something its template does not.
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
                    out.push_str(&shown);
                    rest = tail;
                }
                None => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        Some(one_line(&out, usize::MAX))
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
    /// What the plugin is for, as the student reads it (never the instructions for the model).
    pub description: String,
    pub description_en: Option<String>,
    pub requires: Vec<String>,
    pub scopes: Vec<String>,
    /// Declared defaults that survived the kind's rules (see `policy::default_mode`).
    pub default_modes: BTreeMap<Effect, crate::policy::Mode>,
    pub tools: Vec<Arc<Tool>>,
    pub data_sources: Vec<DataSource>,
    /// The declared screens, checked at load: each section names what it reads or calls.
    pub screens: Vec<ScreenManifest>,
    pub grants: Grants,
    /// `cloud.disclosures`: what it stores online, in Chinese, one line each.
    pub disclosure: Vec<String>,
    /// The same lines in English (`i18n.en.cloud.disclosures`); empty when not given.
    pub disclosure_en: Vec<String>,
    pub preferences: Option<InputSchema>,
    /// A document's Markdown body, for the agent's context while the plugin is enabled.
    pub instructions: Option<String>,
    /// The manifest as loaded, kept so that an installed document or remote plugin can be
    /// stored and loaded again.
    pub manifest: Manifest,
    /// What loading it left out or could not honour, for the plugin page (a remote server's
    /// tool whose schema cannot compile, a schema's `$ref` to the network).
    pub load_warnings: Vec<String>,
}

impl Plugin {
    /// What the plugin stores online, in `lang` (Chinese where no English was given).
    pub fn disclosure_in(&self, lang: crate::settings::Language) -> &[String] {
        match lang {
            crate::settings::Language::En if !self.disclosure_en.is_empty() => &self.disclosure_en,
            _ => &self.disclosure,
        }
    }

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
        if !manifest.disclosure.is_empty() && compile == Compile::Now {
            return Err(LoadError::new(
                id,
                "disclosure",
                "replaced by cloud.disclosures: write these lines there, and their English in i18n.en.cloud.disclosures",
            ));
        }
        let declared = match &manifest.cloud {
            Some(cloud) => cloud.disclosures.as_slice(),
            None => manifest.disclosure.as_slice(),
        };
        let disclosure = disclosure_lines(id, "cloud.disclosures", declared)?;
        let disclosure_en = match manifest.i18n.get("en").and_then(|en| en.cloud.as_ref()) {
            None => Vec::new(),
            Some(en) => {
                let field = "i18n.en.cloud.disclosures";
                let lines = disclosure_lines(id, field, &en.disclosures)?;
                if lines.len() != disclosure.len() {
                    return Err(LoadError::new(
                        id,
                        field,
                        format!(
                            "has {} lines and cloud.disclosures {}: one English line for each",
                            lines.len(),
                            disclosure.len()
                        ),
                    ));
                }
                lines
            }
        };
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
            if tool.resolves_effect && kind != PluginKind::Bundled {
                return Err(LoadError::new(
                    id,
                    format!("tools[{index}].resolvesEffect"),
                    "only a plugin shipped with the app has code to name a call's target; \
                     use `target`, a template of the input's fields",
                ));
            }
            if tool.describes && kind != PluginKind::Bundled {
                return Err(LoadError::new(
                    id,
                    format!("tools[{index}].describes"),
                    "only a plugin shipped with the app has code to write its description; \
                     write `description` as text",
                ));
            }
            let loaded = load_tool(id, index, tool, en, compile, kind)?;
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
                Some(t) => {
                    // A data source is refreshed with these args by the scheduler, where a
                    // refusal reaches nobody: a misfit must show when the plugin is installed.
                    let input = source.args.clone().unwrap_or_else(|| serde_json::json!({}));
                    let checked = match compile {
                        Compile::Now => t.input.validate(&input),
                        Compile::OnFirstUse => Ok(()),
                    };
                    if let Err(e) = checked {
                        return Err(LoadError::new(
                            id,
                            format!("dataSources.{key}.args"),
                            format!("does not fit the input of tool \"{}\": {e}", t.name),
                        ));
                    }
                }
            }
            data_sources.push(DataSource {
                key,
                title: one_line(&source.title, usize::MAX),
                tool: source.tool,
                args: source.args,
                ttl_ms: source.ttl_ms,
            });
        }
        check_screens(id, &manifest.screens, &tools, &data_sources, compile)?;
        let preferences = match (manifest.preferences, compile) {
            (Some(schema), Compile::Now) => Some(InputSchema::compile(schema).map_err(|e| {
                LoadError::new(id, "preferences", format!("not a valid JSON Schema: {e}"))
            })?),
            (Some(schema), Compile::OnFirstUse) => Some(InputSchema::deferred(schema)),
            (None, _) => None,
        };
        for (index, tool) in tools.iter().enumerate() {
            if let Some(request) = &tool.request {
                check_request(
                    id,
                    index,
                    request,
                    kind,
                    &manifest.requires,
                    &manifest.grants,
                )?;
            }
        }
        Ok(Plugin {
            id: manifest.id.clone(),
            kind,
            // A title is a label every screen shows: one line, nothing invisible (`one_line`).
            title: one_line(&manifest.title, usize::MAX),
            title_en: en
                .and_then(|e| e.title.as_deref())
                .map(|t| one_line(t, usize::MAX)),
            description_en: en.and_then(|e| e.description.clone()),
            description: manifest.description,
            requires: manifest.requires,
            scopes: manifest.scopes,
            default_modes,
            tools,
            data_sources,
            screens: manifest.screens,
            grants: manifest.grants,
            disclosure,
            disclosure_en,
            preferences,
            instructions: manifest.instructions,
            manifest: original,
            load_warnings: Vec::new(),
        })
    }

    /// A remote plugin from an MCP server's `tools/list` answer. The plugin id is
    /// `mcp-<server>`; `readOnlyHint: true` makes a read tool, anything else a write tool
    /// (DESIGN.md §2), and every result is untrusted third-party content.
    ///
    /// One tool never costs the server its other tools: a tool that cannot be loaded (its name,
    /// its schema) is left out, and a schema's `$ref` to a document elsewhere is never fetched
    /// (it accepts anything there); each is a load warning on the plugin page.
    pub fn from_mcp(server: &str, title: &str, tools: &[McpTool]) -> Result<Plugin, LoadError> {
        let manifest = |tools: Vec<ToolManifest>| Manifest {
            id: format!("mcp-{server}"),
            title: title.to_owned(),
            tools,
            ..Manifest::default()
        };
        let mut kept = Vec::new();
        let mut warnings = Vec::new();
        for t in tools {
            let mut input = t.input_schema.clone();
            let elsewhere = local_refs_only(&mut input);
            let tool = ToolManifest {
                name: t.name.clone(),
                title: one_line(t.title.as_deref().unwrap_or(&t.name), MCP_TITLE_CAP),
                description: one_line(
                    t.description.as_deref().unwrap_or_default(),
                    MCP_DESCRIPTION_CAP,
                ),
                effect: Some(Value::String(
                    if t.annotations.read_only_hint == Some(true) {
                        "read"
                    } else {
                        "write"
                    }
                    .into(),
                )),
                input: Some(input),
                output: t.output_schema.clone(),
                // The MCP default: a tool that is not read-only may destroy, unless the
                // server says it does not.
                destructive: t.annotations.read_only_hint != Some(true)
                    && t.annotations.destructive_hint != Some(false),
                ..ToolManifest::default()
            };
            let name = one_line(&t.name, MCP_TITLE_CAP);
            match Plugin::load(manifest(vec![tool.clone()]), PluginKind::Remote) {
                Ok(_) => {
                    kept.push(tool);
                    warnings.extend(elsewhere.iter().map(|target| {
                        format!(
                            "tool {name}: its input schema refers to {}, which the app does not \
                             fetch; anything is accepted there",
                            one_line(target, MCP_TITLE_CAP)
                        )
                    }));
                }
                Err(e) => warnings.push(format!(
                    "tool {name} was left out: {}: {}",
                    e.field.trim_start_matches("tools[0]."),
                    e.message
                )),
            }
        }
        let mut plugin = Plugin::load(manifest(kept), PluginKind::Remote)?;
        plugin.load_warnings = warnings;
        Ok(plugin)
    }

    pub fn tool(&self, name: &str) -> Option<&Arc<Tool>> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The manifest as JSON, to tell two versions of a document apart.
    pub fn manifest_json(&self) -> Value {
        serde_json::to_value(&self.manifest).unwrap_or(Value::Null)
    }
}

/// Takes every `$ref` of `schema` that points outside it (any but `#…`) out, so the schema
/// compiles without the network and accepts anything there; returns where they pointed.
fn local_refs_only(schema: &mut Value) -> Vec<String> {
    let mut elsewhere = Vec::new();
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref")
                && !target.starts_with('#')
            {
                elsewhere.push(target.clone());
                map.remove("$ref");
            }
            for value in map.values_mut() {
                elsewhere.extend(local_refs_only(value));
            }
        }
        Value::Array(items) => {
            for item in items {
                elsewhere.extend(local_refs_only(item));
            }
        }
        _ => {}
    }
    elsewhere
}

/// The most characters of a remote tool's title and description kept (DESIGN.md §5).
pub const MCP_TITLE_CAP: usize = 64;
pub const MCP_DESCRIPTION_CAP: usize = 1024;

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
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub annotations: McpAnnotations,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpAnnotations {
    #[serde(default)]
    pub read_only_hint: Option<bool>,
    #[serde(default)]
    pub destructive_hint: Option<bool>,
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
    kind: PluginKind,
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
    // DESIGN.md §3 8e: an amount and a payee are what a money call moves and to whom; each
    // names a top-level input field the schema declares, so the limits read what the tool gets.
    let declared = [
        ("amount", tool.amount.as_ref().map(|a| &a.field)),
        ("payee", tool.payee.as_ref().map(|p| &p.field)),
    ];
    for (key, name) in declared {
        let Some(name) = name else { continue };
        if effect != Effect::Money {
            return Err(LoadError::new(
                plugin,
                field(key),
                format!("only a money tool declares {key}; this tool has the {effect} effect"),
            ));
        }
        if schema
            .pointer(&format!(
                "/properties/{}",
                name.replace('~', "~0").replace('/', "~1")
            ))
            .is_none()
        {
            return Err(LoadError::new(
                plugin,
                field(&format!("{key}.field")),
                format!("names \"{name}\", which is not a top-level field of the tool's input"),
            ));
        }
    }
    let request = match &tool.request {
        Some(request) => Some(crate::declared::load(request, &schema).map_err(
            |(name, message)| LoadError::new(plugin, field(&format!("request.{name}")), message),
        )?),
        None => None,
    };
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
    // A title is a label every screen shows: one line, nothing invisible (`one_line`).
    let title_en = en
        .and_then(|e| e.tools.get(&tool.name))
        .map(|t| one_line(&t.title, usize::MAX));
    let labelled = tool.labels.iter().flat_map(|(name, label)| {
        std::iter::once((format!("labels.{name}"), label)).chain(
            label
                .values
                .iter()
                .map(move |(value, words)| (format!("labels.{name}.values.{value}"), words)),
        )
    });
    for (path, label) in labelled {
        if label.zh.trim().is_empty() || label.en.as_deref().is_some_and(|e| e.trim().is_empty()) {
            return Err(LoadError::new(
                plugin,
                field(&path),
                "a label needs its words: give zh (and en, or leave en out)",
            ));
        }
    }
    Ok(Tool {
        id,
        plugin: plugin.to_owned(),
        title: if tool.title.is_empty() {
            tool.name.clone()
        } else {
            one_line(&tool.title, usize::MAX)
        },
        name: tool.name,
        title_en,
        description: tool.description,
        effect,
        input,
        output: tool.output.map(InputSchema::deferred),
        untrusted: tool.untrusted,
        user_only: tool.user_only,
        grant: tool.grant,
        always_ask: tool.always_ask,
        destructive: tool.destructive && effect != Effect::Read,
        target: tool.target,
        amount: tool.amount,
        payee: tool.payee.map(|p| p.field),
        resolves_effect: tool.resolves_effect,
        describes: tool.describes,
        request,
        labels: tool.labels,
        schema_as_declared: kind == PluginKind::Remote,
    })
}

/// Checks a plugin's declared screens against its tools and data sources (DESIGN.md §2):
/// reading a screen never runs a tool that is not a read, so a value, list or table names a
/// data source or a read tool; a form or an action names a tool of the plugin, and an action's
/// tool takes no input.
fn check_screens(
    id: &str,
    screens: &[ScreenManifest],
    tools: &[Arc<Tool>],
    sources: &[DataSource],
    compile: Compile,
) -> Result<(), LoadError> {
    for (i, screen) in screens.iter().enumerate() {
        if screen.id.is_empty() || screens[..i].iter().any(|s| s.id == screen.id) {
            return Err(LoadError::new(
                id,
                format!("screens[{i}].id"),
                format!("\"{}\" is empty or another screen's id", screen.id),
            ));
        }
        for (j, section) in screen.sections.iter().enumerate() {
            let at = |field: &str| format!("screens[{i}].sections[{j}].{field}");
            let tool = |name: &str| {
                tools.iter().find(|t| t.name == name).ok_or_else(|| {
                    LoadError::new(
                        id,
                        at("tool"),
                        format!("names \"{name}\", which is not a tool of this plugin"),
                    )
                })
            };
            let reads = matches!(
                section.show,
                SectionShow::Value | SectionShow::List | SectionShow::Table
            );
            match (reads, &section.source, &section.tool) {
                (true, Some(_), Some(_)) | (true, None, None) => {
                    return Err(LoadError::new(
                        id,
                        at("source"),
                        "a section shows one data source or one read tool: name either",
                    ));
                }
                (true, Some(key), None) => {
                    if !sources.iter().any(|s| &s.key == key) {
                        return Err(LoadError::new(
                            id,
                            at("source"),
                            format!("names \"{key}\", which is not a data source of this plugin"),
                        ));
                    }
                }
                (true, None, Some(name)) => {
                    let t = tool(name)?;
                    if t.effect != Effect::Read {
                        return Err(LoadError::new(
                            id,
                            at("tool"),
                            format!(
                                "names \"{name}\", which has the {} effect; reading a screen \
                                 never runs it: call it from a form or an action",
                                t.effect
                            ),
                        ));
                    }
                    // A form on the screen for the same tool gives the rest of its input.
                    let asked = screen.sections.iter().any(|s| {
                        s.show == SectionShow::Form && s.tool.as_deref() == Some(name.as_str())
                    });
                    let input = section
                        .args
                        .clone()
                        .unwrap_or_else(|| serde_json::json!({}));
                    let checked = match (compile, asked) {
                        (Compile::Now, false) => t.input.validate(&input),
                        _ => Ok(()),
                    };
                    if let Err(e) = checked {
                        return Err(LoadError::new(
                            id,
                            at("args"),
                            format!("does not fit the input of tool \"{name}\": {e}"),
                        ));
                    }
                }
                (false, Some(_), _) => {
                    return Err(LoadError::new(
                        id,
                        at("source"),
                        "a form or an action calls a tool: name it in `tool`",
                    ));
                }
                (false, None, None) => {
                    return Err(LoadError::new(id, at("tool"), "names no tool to call"));
                }
                (false, None, Some(name)) => {
                    let t = tool(name)?;
                    let none = serde_json::json!({});
                    let takes_input = section.show == SectionShow::Action
                        && compile == Compile::Now
                        && t.input.validate(&none).is_err();
                    if takes_input {
                        return Err(LoadError::new(
                            id,
                            at("tool"),
                            format!(
                                "\"{name}\" needs input, which a button cannot give: show it as a form"
                            ),
                        ));
                    }
                }
            }
            let lists = matches!(section.show, SectionShow::List | SectionShow::Table);
            if lists && section.items.is_none() {
                return Err(LoadError::new(
                    id,
                    at("items"),
                    "a list or table names the result's array field it shows",
                ));
            }
            if let Some(opens) = &section.opens {
                check_opens(screens, tools, opens, lists)
                    .map_err(|message| LoadError::new(id, at("opens"), message))?;
            }
        }
    }
    Ok(())
}

/// An item's tap: only a list's or table's, to another declared screen whose first form
/// reads, with inputs that tool takes.
fn check_opens(
    screens: &[ScreenManifest],
    tools: &[Arc<Tool>],
    opens: &OpensManifest,
    lists: bool,
) -> Result<(), String> {
    if !lists {
        return Err("only a list's or table's items open a screen".into());
    }
    let target = screens
        .iter()
        .find(|s| s.id == opens.screen)
        .ok_or_else(|| {
            format!(
                "names \"{}\", which is not a screen of this plugin",
                opens.screen
            )
        })?;
    let tool = target
        .item_form()
        .and_then(|f| {
            tools
                .iter()
                .find(|t| Some(t.name.as_str()) == f.tool.as_deref())
        })
        .filter(|t| t.effect == Effect::Read)
        .ok_or_else(|| {
            format!(
                "screen \"{}\" has no form of a read tool for the item's values to fill",
                opens.screen
            )
        })?;
    let takes = &tool.input.source()["properties"];
    match opens.args.keys().find(|k| takes.get(k.as_str()).is_none()) {
        Some(k) => Err(format!(
            "gives \"{k}\", which is not an input of tool \"{}\"",
            tool.name
        )),
        None if opens.args.is_empty() => Err("gives the screen no input: name one in args".into()),
        None => Ok(()),
    }
}

/// The plugin-level checks of a tool's declared request: a document may declare one (not a
/// remote server, whose tools are its own), a campus request needs `requires: campus-session`,
/// and the URL must pass the plugin's own network grants — so the consent screen's grant row
/// names every host a tool reaches, and a request that could never be sent is a load error.
fn check_request(
    plugin: &str,
    index: usize,
    request: &Request,
    kind: PluginKind,
    requires: &[String],
    grants: &Grants,
) -> Result<(), LoadError> {
    let field = |name: &str| format!("tools[{index}].request.{name}");
    if kind == PluginKind::Remote {
        return Err(LoadError::new(
            plugin,
            field("url"),
            "a remote server's tools are its own; only plugin documents declare requests",
        ));
    }
    if request.campus && !requires.iter().any(|r| r == "campus-session") {
        return Err(LoadError::new(
            plugin,
            field("campus"),
            "a campus request needs the campus session; add campus-session to requires",
        ));
    }
    let sample = request
        .url_fields
        .iter()
        .fold(request.url.clone(), |url, f| {
            url.replace(&format!("{{{f}}}"), "x")
        });
    // A bad allowlist entry is reported by the grants' own check, with its own field.
    if let Ok(policy) = NetworkPolicy::new(plugin, grants, kind)
        && let Err(refusal) = policy.check(&sample)
    {
        let reason = refusal.strip_prefix("error: ").unwrap_or(&refusal);
        return Err(LoadError::new(
            plugin,
            field("url"),
            format!("the plugin's grants do not let this request out: {reason}"),
        ));
    }
    Ok(())
}

/// Model APIs accept `^[a-zA-Z0-9_-]{1,64}$` as a tool name.
const MODEL_NAME_MAX: usize = 64;

/// The longest plugin id. 48 leaves room in a model name (at most 64) for `__` and a tool name.
pub const PLUGIN_ID_MAX: usize = 48;

const PLUGIN_ID_RULE: &str = "a plugin id is 1 to 48 lowercase ASCII letters, digits and '-', not starting or ending with '-'";

fn name_chars_ok(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// An id as an error may show it: a long one is cut, so a 10,000-character id does not fill
/// the screen that reports it.
fn shown_id(id: &str) -> String {
    match id.char_indices().nth(PLUGIN_ID_MAX) {
        Some((end, _)) => format!("{}…", &id[..end]),
        None => id.to_owned(),
    }
}

fn check_plugin_id(id: &str) -> Result<(), LoadError> {
    // Lowercase only, so that "Settings" cannot stand beside the bundled "settings". No '_'
    // at all, so the first `__` of a model name always ends the plugin id and the name maps
    // back to exactly one tool. No '-' at either end: `mcp-<server>` joins with one, and an
    // id read as a command-line argument must not look like an option.
    let ok = (1..=PLUGIN_ID_MAX).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-');
    if !ok {
        return Err(LoadError::new(&shown_id(id), "id", PLUGIN_ID_RULE));
    }
    Ok(())
}

fn check_tool_name(plugin: &str, field: &str, name: &str) -> Result<(), LoadError> {
    if name.len() > MODEL_NAME_MAX {
        return Err(LoadError::new(
            plugin,
            field,
            format!("a tool name is at most {MODEL_NAME_MAX} characters"),
        ));
    }
    if !name_chars_ok(name) {
        return Err(LoadError::new(
            plugin,
            field,
            format!("tool name \"{name}\" may hold only letters, digits, '-' and '_'"),
        ));
    }
    Ok(())
}

/// A warning for the consent screen when `plugin` passes itself off as one of the app's own:
/// its title (Chinese or English) reads the same as a bundled plugin's once case, width,
/// spaces and invisible characters are set aside, or its id equals a bundled id but for case,
/// '-' and '_'. A warning, not a load error: a lookalike may be honest, but the user must
/// see that it is not the app's.
pub fn impersonation_warning(plugin: &Plugin, bundled: &[&Plugin]) -> Option<String> {
    if plugin.kind == PluginKind::Bundled {
        return None;
    }
    let id = fold_id(&plugin.id);
    let titles = [
        ("title", plugin.title.as_str()),
        ("English title", plugin.title_en.as_deref().unwrap_or("")),
    ];
    for own in bundled {
        let own_titles = [
            fold_title(&own.title),
            fold_title(own.title_en.as_deref().unwrap_or("")),
        ];
        let matched = if !id.is_empty() && id == fold_id(&own.id) {
            Some(("id", plugin.id.as_str()))
        } else {
            titles.into_iter().find(|(_, title)| {
                let folded = fold_title(title);
                !folded.is_empty() && own_titles.contains(&folded)
            })
        };
        if let Some((what, value)) = matched {
            let article = if plugin.kind == PluginKind::Official {
                "an"
            } else {
                "a"
            };
            return Some(format!(
                "looks like the app's own plugin \"{}\" ({}): its {what} \"{value}\" is the same; it is {article} {} plugin, not part of the app",
                own.id,
                own.title,
                plugin.kind.as_str()
            ));
        }
    }
    None
}

fn fold_id(id: &str) -> String {
    id.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// A title as it is compared with the app's own: folded (`text::folded`: NFKC, case, nothing
/// invisible) and without spaces, so a full-width or zero-width variant is the same title.
fn fold_title(title: &str) -> String {
    folded(title)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// `wallet.cardBalance` → `wallet`: a tool id's plugin is the part before its first `.` (a plugin
/// id holds none); a text without a `.` is all plugin.
pub fn plugin_id(tool_id: &str) -> &str {
    tool_id
        .split_once('.')
        .map_or(tool_id, |(plugin, _)| plugin)
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

/// Tools the shipped plugins renamed, old id → new id. A scheduled job's check and a rule
/// name a tool by its id, stored when they were made: the old id still names the tool they
/// meant, and the model is offered only the new one. (`treehole.post` read a thread, and
/// students say 发帖 for publishing.)
const RENAMED_TOOLS: &[(&str, &str)] = &[("treehole.post", "treehole.thread")];

/// Inputs the shipped read tools renamed to one vocabulary across the plugins (`query`, not
/// `keyword`; `limit`, not `size` or `pageSize`): tool id, old name, new name. Only a scheduled
/// job's check stores a read tool's input for later (seed 000: scheduled runs only read), so
/// only its calls are read through this.
const RENAMED_INPUTS: &[(&str, &str, &str)] = &[
    ("notices.list", "keyword", "query"),
    ("treehole.search", "keyword", "query"),
    ("library.search", "size", "limit"),
    ("wallet.transactions", "pageSize", "limit"),
];

/// The id a tool has now: `id` itself, or what a shipped plugin renamed it to.
pub fn current_tool_id(id: &str) -> &str {
    RENAMED_TOOLS
        .iter()
        .find(|(old, _)| *old == id)
        .map_or(id, |(_, new)| new)
}

/// `input` of a stored call of `tool_id` with its renamed fields under their names now; a field
/// given under both names keeps the new one's value.
pub fn current_input(tool_id: &str, mut input: Value) -> Value {
    let tool_id = current_tool_id(tool_id);
    if let Value::Object(fields) = &mut input {
        for (_, old, new) in RENAMED_INPUTS.iter().filter(|(t, ..)| *t == tool_id) {
            if let Some(value) = fields.remove(*old) {
                fields.entry(*new).or_insert(value);
            }
        }
    }
    input
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

    /// The tool `id` names, by its id now or by one a shipped plugin renamed
    /// ([`current_tool_id`]).
    pub fn tool(&self, id: &str) -> Option<&Arc<Tool>> {
        self.tools.get(current_tool_id(id))
    }

    pub fn plugins(&self) -> impl Iterator<Item = &Arc<Plugin>> {
        self.plugins.values()
    }
}

/// Why manifest text did not become JSON.
#[derive(Debug)]
pub enum JsonTextError {
    /// Not JSON at all.
    Syntax(serde_json::Error),
    /// A key appears twice in one object: the plugin, the key's path and the key.
    DuplicateKey(LoadError),
}

/// Parses manifest text, refusing a key written twice in one object. serde_json keeps the
/// last of two, so `{"effect": "money", "effect": "read"}` would read as a read tool while a
/// reviewer who sees the first believes it spends money: the text must mean one thing.
pub fn json_with_unique_keys(text: &str) -> Result<Value, JsonTextError> {
    let seen = Seen::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = UniqueKeys {
        path: String::new(),
        seen: &seen,
    }
    .deserialize(&mut de)
    .and_then(|value| de.end().map(|()| value));
    match (parsed, seen.duplicate.into_inner()) {
        (_, Some((path, key))) => Err(JsonTextError::DuplicateKey(LoadError::new(
            seen.id.into_inner().as_deref().unwrap_or("?"),
            path,
            format!("the key \"{key}\" appears more than once; write each key once"),
        ))),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(JsonTextError::Syntax(e)),
    }
}

/// Parses YAML front matter into JSON, refusing a key written twice in one mapping as
/// [`json_with_unique_keys`] does for JSON (YAML parsers keep one of the two, and the text
/// must mean one thing). `Err(Ok(e))` is the duplicate key; `Err(Err(message))` is not YAML.
pub fn yaml_with_unique_keys(text: &str) -> Result<Value, Result<LoadError, String>> {
    let seen = Seen::default();
    let parsed = UniqueKeys {
        path: String::new(),
        seen: &seen,
    }
    .deserialize(serde_yaml_ng::Deserializer::from_str(text));
    match (parsed, seen.duplicate.into_inner()) {
        (_, Some((path, key))) => Err(Ok(LoadError::new(
            seen.id.into_inner().as_deref().unwrap_or("?"),
            path,
            format!("the key \"{key}\" appears more than once; write each key once"),
        ))),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(Err(e.to_string())),
    }
}

/// Parses manifest text into a manifest; see [`json_with_unique_keys`].
pub fn parse_manifest_text(text: &str) -> Result<Manifest, LoadError> {
    match json_with_unique_keys(text) {
        Ok(json) => parse_manifest(&json),
        Err(JsonTextError::DuplicateKey(e)) => Err(e),
        Err(JsonTextError::Syntax(e)) => {
            Err(LoadError::new("?", "manifest", format!("not JSON: {e}")))
        }
    }
}

#[derive(Default)]
struct Seen {
    /// The path and name of the first key found twice.
    duplicate: std::cell::RefCell<Option<(String, String)>>,
    /// The top-level "id", once read, so that an error can name the plugin.
    id: std::cell::RefCell<Option<String>>,
}

/// Builds a [`Value`] as serde_json does, knowing where it is so that a repeated key can be
/// named by its path (`tools[0].effect`).
struct UniqueKeys<'a> {
    path: String,
    seen: &'a Seen,
}

impl<'de> DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(UniqueKeys {
            path: format!("{}[{}]", self.path, items.len()),
            seen: self.seen,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if object.contains_key(&key) {
                *self.seen.duplicate.borrow_mut() = Some((path, key.clone()));
                return Err(de::Error::custom(format!("duplicate key \"{key}\"")));
            }
            let value = map.next_value_seed(UniqueKeys {
                path,
                seen: self.seen,
            })?;
            if self.path.is_empty()
                && key == "id"
                && let Value::String(id) = &value
            {
                *self.seen.id.borrow_mut() = Some(shown_id(id));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
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

    // seed 000: a plugin's disclosure lines are `cloud.disclosures` (zh) with
    // `i18n.en.cloud.disclosures`; the single `disclosure` list is refused naming the new field,
    // and a bad line is refused naming the line.
    #[test]
    fn cloud_disclosures_load_in_both_languages_and_the_old_field_names_the_new_one() {
        let notes = |extra: Value| {
            let mut m = json!({"id": "notes", "title": "笔记", "tools": []});
            for (k, v) in extra.as_object().unwrap() {
                m[k] = v.clone();
            }
            m
        };
        let p = load(
            notes(json!({"cloud": {"disclosures": ["你的笔记（加密）"]},
                         "i18n": {"en": {"cloud": {"disclosures": ["Your notes (encrypted)"]}}}})),
            PluginKind::Community,
        )
        .unwrap();
        assert_eq!(
            p.disclosure_in(crate::settings::Language::Zh),
            ["你的笔记（加密）"]
        );
        assert_eq!(
            p.disclosure_in(crate::settings::Language::En),
            ["Your notes (encrypted)"]
        );
        let zh_only = load(
            notes(json!({"cloud": {"disclosures": ["你的笔记（加密）"]}})),
            PluginKind::Community,
        )
        .unwrap();
        assert_eq!(
            zh_only.disclosure_in(crate::settings::Language::En),
            ["你的笔记（加密）"]
        );

        let refused = |extra: Value| {
            load(notes(extra), PluginKind::Community)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refused(json!({"disclosure": ["你的笔记"]})),
            "plugin \"notes\": disclosure: replaced by cloud.disclosures: write these lines there, and their English in i18n.en.cloud.disclosures"
        );
        assert_eq!(
            refused(json!({"cloud": {"disclosures": ["你的笔记", " "]}})),
            "plugin \"notes\": cloud.disclosures[1]: is empty: say in plain words what the plugin stores online"
        );
        assert_eq!(
            refused(json!({"cloud": {"disclosures": ["一\n二"]}})),
            "plugin \"notes\": cloud.disclosures[0]: is more than one line: write each on its own"
        );
        assert_eq!(
            refused(json!({"cloud": {"disclosures": ["你的笔记", "你的标签"]},
                           "i18n": {"en": {"cloud": {"disclosures": ["Your notes"]}}}})),
            "plugin \"notes\": i18n.en.cloud.disclosures: has 1 lines and cloud.disclosures 2: one English line for each"
        );
        assert!(
            refused(json!({"cloud": {"disclosure": ["x"]}})).contains("unknown field `disclosure`"),
        );
        // A plugin installed before the change keeps its lines.
        let stored = parse_manifest(&notes(json!({"disclosure": ["你的笔记"]}))).unwrap();
        let kept = Plugin::reload(stored, PluginKind::Community).unwrap();
        assert_eq!(kept.disclosure, ["你的笔记"]);
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
            assert_eq!(err.message, PLUGIN_ID_RULE, "{id}");
        }
    }

    #[test]
    fn a_remote_tool_that_cannot_load_is_left_out_with_a_warning_and_the_others_stay() {
        // issue: one tool's name or schema never costs a server every tool.
        let tools = [
            McpTool {
                name: "posts.search".into(),
                ..McpTool::default()
            },
            McpTool {
                name: "broken".into(),
                input_schema: json!({"type": "object", "properties": {"n": {"type": 5}}}),
                ..McpTool::default()
            },
            McpTool {
                name: "elsewhere".into(),
                input_schema: json!({"type": "object", "properties": {
                    "place": {"$ref": "https://schemas.example.com/place.json"},
                    "day": {"$ref": "#/$defs/day"}},
                    "$defs": {"day": {"type": "string"}}}),
                ..McpTool::default()
            },
        ];
        let plugin = Plugin::from_mcp("forum", "Forum", &tools).unwrap();
        let names: Vec<&str> = plugin.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["elsewhere"]);
        assert_eq!(
            plugin.load_warnings,
            [
                "tool posts.search was left out: name: tool name \"posts.search\" may hold only \
                 letters, digits, '-' and '_'"
                    .to_owned(),
                format!(
                    "tool broken was left out: input: {}",
                    load(
                        json!({"id": "x", "tools": [{"name": "b", "effect": "read",
                               "input": {"type": "object", "properties": {"n": {"type": 5}}}}]}),
                        PluginKind::Remote
                    )
                    .unwrap_err()
                    .message
                ),
                "tool elsewhere: its input schema refers to https://schemas.example.com/place.json, \
                 which the app does not fetch; anything is accepted there"
                    .to_owned(),
            ]
        );
        // The reference to the network accepts anything; the local one still checks.
        let tool = plugin.tool("elsewhere").unwrap();
        assert_eq!(
            tool.input.validate(&json!({"place": [1, {"a": null}]})),
            Ok(())
        );
        assert!(tool.input.validate(&json!({"day": 3})).is_err());
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
    fn a_tools_result_labels_load_with_their_words() {
        let plugin = load(
            json!({"id": "wallet", "tools": [{"name": "cardBalance", "effect": "read",
                "labels": {"balanceYuan": {"zh": "余额（元）", "en": "Balance (yuan)"},
                           "lost": {"zh": "已挂失"}}}]}),
            PluginKind::Bundled,
        )
        .unwrap();
        let labels = &plugin.tools[0].labels;
        assert_eq!(
            labels["balanceYuan"],
            FieldLabel {
                zh: "余额（元）".into(),
                en: Some("Balance (yuan)".into()),
                values: BTreeMap::new(),
            }
        );
        assert_eq!(labels["lost"].en, None);
    }

    #[test]
    fn an_input_fields_values_load_with_their_words_and_none_without() {
        let plugin = load(
            json!({"id": "rooms", "tools": [{"name": "free", "effect": "read",
                "labels": {"day": {"zh": "哪天", "en": "Day",
                    "values": {"today": {"zh": "今天", "en": "Today"}}}}}]}),
            PluginKind::Bundled,
        )
        .unwrap();
        let day = &plugin.tools[0].labels["day"];
        assert_eq!(day.values["today"].zh, "今天");
        assert_eq!(day.values["today"].en.as_deref(), Some("Today"));
        let empty = load(
            json!({"id": "rooms", "tools": [{"name": "free", "effect": "read",
                "labels": {"day": {"zh": "哪天", "values": {"today": {"zh": " "}}}}}]}),
            PluginKind::Bundled,
        );
        assert_eq!(
            empty.unwrap_err().to_string(),
            "plugin \"rooms\": tools[0].labels.day.values.today: a label needs its words: give zh (and en, or leave en out)"
        );
    }

    #[test]
    fn a_label_without_words_is_a_load_error_naming_its_field() {
        for label in [json!({"zh": " "}), json!({"zh": "余额", "en": ""})] {
            let err = load(
                json!({"id": "wallet", "tools": [{"name": "cardBalance", "effect": "read",
                    "labels": {"balanceYuan": label}}]}),
                PluginKind::Bundled,
            )
            .unwrap_err();
            assert_eq!(
                err.to_string(),
                "plugin \"wallet\": tools[0].labels.balanceYuan: a label needs its words: give zh (and en, or leave en out)"
            );
        }
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
        // seed 000: the target is the headline; nor a line or paragraph separator, nor a
        // bidirectional control, can make it say something else.
        let reordered = plugin.tools[0].resolve_target(
            &json!({"button": "Pay", "app": "Alipay\u{2028}\u{202e}tnemyap yreve wollA\u{2069}"}),
        );
        assert_eq!(
            reordered.as_deref(),
            Some("Tap \"Pay\" in Alipay tnemyap yreve wollA")
        );
        let unknown = plugin.tools[0].resolve_target(&json!({"button": "Pay"}));
        assert_eq!(unknown.as_deref(), Some("Tap \"Pay\" in {app}"));
    }

    #[test]
    fn a_plugins_titles_are_one_line_with_nothing_invisible() {
        // A plugin's title is third-party content (DESIGN.md §2), a label every screen shows:
        // no line break makes a second label and no bidirectional control makes it read
        // backwards.
        let trick = "菜单\u{2028}\u{202e}开公会不\u{200b}\n";
        let plugin = load(
            json!({"id": "canteen", "title": trick,
                   "i18n": {"en": {"title": trick, "tools": {"crowd": {"title": trick}}}},
                   "tools": [{"name": "crowd", "title": trick, "effect": "read",
                              "target": "看\u{202e}{x}"}],
                   "dataSources": {"menu": {"title": trick, "tool": "crowd", "ttlMs": 60000}}}),
            PluginKind::Community,
        )
        .unwrap();
        let shown = "菜单 开公会不 ";
        assert_eq!(plugin.title, shown);
        assert_eq!(plugin.title_en.as_deref(), Some(shown));
        assert_eq!(plugin.tools[0].title, shown);
        assert_eq!(plugin.tools[0].title_en.as_deref(), Some(shown));
        assert_eq!(plugin.data_sources[0].title, shown);
        // A target's template is the plugin's words too.
        assert_eq!(
            plugin.tools[0].resolve_target(&json!({"x": 1})).as_deref(),
            Some("看1")
        );
    }

    #[test]
    fn a_plugin_id_with_capitals_is_a_load_error() {
        for id in ["Settings", "SETTINGS", "wAllet", "mcp-Forum"] {
            let err = load(json!({"id": id}), PluginKind::Community).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "plugin \"{id}\": id: a plugin id is 1 to 48 lowercase ASCII letters, digits and '-', not starting or ending with '-'"
                )
            );
        }
    }

    #[test]
    fn a_plugin_id_outside_lowercase_letters_digits_and_hyphens_is_a_load_error() {
        for id in [
            "my_plugin",
            "-wallet",
            "wallet-",
            "has.dot",
            "设置",
            "ｓｅｔｔｉｎｇｓ",
            "",
        ] {
            let err = load(json!({"id": id}), PluginKind::Community).unwrap_err();
            assert_eq!(err.field, "id", "{id}");
            assert_eq!(
                err.message,
                "a plugin id is 1 to 48 lowercase ASCII letters, digits and '-', not starting or ending with '-'",
                "{id}"
            );
        }
        for id in ["wallet", "mcp-forum", "a", "x2", "a-b-c"] {
            assert!(
                load(json!({"id": id}), PluginKind::Community).is_ok(),
                "{id}"
            );
        }
    }

    #[test]
    fn a_plugin_id_longer_than_48_characters_is_a_load_error_that_does_not_repeat_it() {
        assert!(load(json!({"id": "a".repeat(48)}), PluginKind::Community).is_ok());
        let err = load(json!({"id": "a".repeat(49)}), PluginKind::Community).unwrap_err();
        assert_eq!(err.field, "id");
        let err = load(json!({"id": "a".repeat(10_000)}), PluginKind::Community).unwrap_err();
        assert_eq!(err.field, "id");
        assert_eq!(err.plugin, format!("{}…", "a".repeat(48)));
    }

    #[test]
    fn a_tool_name_longer_than_64_characters_is_a_load_error_that_does_not_repeat_it() {
        let err = load(
            json!({"id": "x", "tools": [{"name": "t".repeat(10_000), "effect": "read"}]}),
            PluginKind::Community,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"x\": tools[0].name: a tool name is at most 64 characters"
        );
    }

    fn bundled(id: &str, title: &str, title_en: &str) -> Plugin {
        load(
            json!({"id": id, "title": title, "i18n": {"en": {"title": title_en}}}),
            PluginKind::Bundled,
        )
        .unwrap()
    }

    #[test]
    fn a_title_confusable_with_a_bundled_plugin_is_an_impersonation_warning() {
        let settings = bundled("settings", "设置", "Settings");
        let wallet = bundled("wallet", "校园卡", "Campus card");
        let bundled = [&settings, &wallet];
        for (id, title) in [
            ("my-settings", "设置"),
            ("s1", " 设置\u{200b} "),
            ("s2", "ＳＥＴＴＩＮＧＳ"),
            ("s3", "Set tings"),
            ("c1", "campus\u{3000}CARD"),
        ] {
            let plugin = load(json!({"id": id, "title": title}), PluginKind::Community).unwrap();
            let warning =
                impersonation_warning(&plugin, &bundled).unwrap_or_else(|| panic!("{title}"));
            assert!(
                warning.starts_with("looks like the app's own plugin \""),
                "{warning}"
            );
        }
        let plugin = load(
            json!({"id": "fake", "title": "设置"}),
            PluginKind::Community,
        )
        .unwrap();
        assert_eq!(
            impersonation_warning(&plugin, &bundled).as_deref(),
            Some(
                "looks like the app's own plugin \"settings\" (设置): its title \"设置\" is the same; it is a community plugin, not part of the app"
            )
        );
        let plugin = load(
            json!({"id": "fake", "title": "钱包", "i18n": {"en": {"title": "Campus Card"}}}),
            PluginKind::Official,
        )
        .unwrap();
        assert_eq!(
            impersonation_warning(&plugin, &bundled).as_deref(),
            Some(
                "looks like the app's own plugin \"wallet\" (校园卡): its English title \"Campus Card\" is the same; it is an official plugin, not part of the app"
            )
        );
    }

    #[test]
    fn an_id_equal_to_a_bundled_id_but_for_hyphens_is_an_impersonation_warning() {
        let settings = bundled("settings", "设置", "Settings");
        let plugin = load(
            json!({"id": "set-tings", "title": "工具"}),
            PluginKind::Community,
        )
        .unwrap();
        assert_eq!(
            impersonation_warning(&plugin, &[&settings]).as_deref(),
            Some(
                "looks like the app's own plugin \"settings\" (设置): its id \"set-tings\" is the same; it is a community plugin, not part of the app"
            )
        );
    }

    #[test]
    fn a_distinct_plugin_or_a_bundled_one_gets_no_impersonation_warning() {
        let settings = bundled("settings", "设置", "Settings");
        let plugin = load(
            json!({"id": "canteen", "title": "食堂", "i18n": {"en": {"title": "Canteen"}}}),
            PluginKind::Community,
        )
        .unwrap();
        assert_eq!(impersonation_warning(&plugin, &[&settings]), None);
        let plugin = load(json!({"id": "noname"}), PluginKind::Remote).unwrap();
        assert_eq!(
            impersonation_warning(&plugin, &[&bundled("x", "", "")]),
            None
        );
        assert_eq!(impersonation_warning(&settings, &[&settings]), None);
    }

    #[test]
    fn a_duplicate_key_in_a_manifest_is_a_load_error_at_every_depth() {
        let cases = [
            (
                r#"{"id": "wallet", "title": "a", "title": "b"}"#,
                "wallet",
                "title",
                "title",
            ),
            (
                r#"{"id": "wallet", "tools": [{"name": "pay", "effect": "money", "effect": "read"}]}"#,
                "wallet",
                "tools[0].effect",
                "effect",
            ),
            (
                r#"{"id": "net", "grants": {"allow_network": false, "allow_network": true}}"#,
                "net",
                "grants.allow_network",
                "allow_network",
            ),
            (
                r#"{"id": "c", "dataSources": {"m": {"args": {"day": 1, "day": 2}}}}"#,
                "c",
                "dataSources.m.args.day",
                "day",
            ),
            (r#"{"id": "a", "id": "b"}"#, "a", "id", "id"),
            (
                r#"{"title": "t", "title": "u", "id": "late"}"#,
                "?",
                "title",
                "title",
            ),
        ];
        for (text, plugin, path, key) in cases {
            let err = parse_manifest_text(text).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "plugin \"{plugin}\": {path}: the key \"{key}\" appears more than once; write each key once"
                ),
                "{text}"
            );
        }
        let manifest = parse_manifest_text(r#"{"id": "w", "tools": [{"name": "a", "effect": "read"}, {"name": "b", "effect": "read"}]}"#).unwrap();
        assert_eq!(manifest.tools.len(), 2);
    }

    #[test]
    fn a_manifest_that_is_not_json_is_a_load_error() {
        let err = parse_manifest_text("{\"id\": ").unwrap_err();
        assert_eq!(err.plugin, "?");
        assert_eq!(err.field, "manifest");
        assert!(err.message.starts_with("not JSON: "), "{err}");
    }

    #[test]
    fn data_source_args_that_break_the_tool_schema_are_a_load_error() {
        let manifest = |args: Value| {
            json!({"id": "canteen", "tools": [{"name": "menu", "effect": "read",
                      "input": {"type": "object", "properties": {"day": {"type": "integer"}},
                                "required": ["day"], "additionalProperties": false}}],
                   "dataSources": {"today": {"title": "菜单", "tool": "menu", "args": args, "ttlMs": 60000}}})
        };
        let err = load(manifest(json!({"day": "monday"})), PluginKind::Community).unwrap_err();
        assert_eq!(err.plugin, "canteen");
        assert_eq!(err.field, "dataSources.today.args");
        assert!(
            err.message
                .starts_with("does not fit the input of tool \"menu\": "),
            "{err}"
        );
        let err = load(manifest(Value::Null), PluginKind::Community).unwrap_err();
        assert_eq!(err.field, "dataSources.today.args");
        assert!(load(manifest(json!({"day": 3})), PluginKind::Community).is_ok());
    }
}
