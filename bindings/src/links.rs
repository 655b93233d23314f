//! Plugins from outside (DESIGN.md §2): plugin documents previewed, installed, updated and
//! removed by link, and remote MCP servers added by URL.

use harness_core::plugins::link::{Preview, PreviewTool, Update};
use harness_core::policy::Mode;
use harness_core::registry::{Effect, PluginKind};

use crate::error::HarnessError;
use crate::harness::Harness;
use crate::runtime;

/// The mode an effect's tools start in.
// The core's `link::Preview` holds these as `(Effect, Mode)` pairs, which UniFFI cannot carry.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct StartingMode {
    pub effect: Effect,
    pub mode: Mode,
}

/// What the consent screen shows before a plugin document is installed.
// Not the core's `link::Preview`: its starting modes are pairs and its data sources whole
// records; they cross as `StartingMode`s and titles.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct PluginPreview {
    /// Hand this to `install_plugin_preview`.
    pub id: String,
    pub link: String,
    pub plugin: String,
    pub title: String,
    pub kind: PluginKind,
    pub tools: Vec<PreviewTool>,
    pub starting_modes: Vec<StartingMode>,
    pub grant_row: String,
    pub warnings: Vec<String>,
    /// Data sources' titles.
    pub data_sources: Vec<String>,
    pub disclosure: Vec<String>,
    pub requires: Vec<String>,
    pub instructions: Option<String>,
    /// For an update: the plugin it replaces, and what it asks for beyond it.
    pub replaces: Option<String>,
    pub asks_more: Vec<String>,
}

impl From<Preview> for PluginPreview {
    fn from(p: Preview) -> Self {
        Self {
            starting_modes: p
                .modes
                .into_iter()
                .map(|(effect, mode)| StartingMode { effect, mode })
                .collect(),
            data_sources: p.data_sources.into_iter().map(|s| s.title).collect(),
            id: p.id,
            link: p.link,
            plugin: p.plugin,
            title: p.title,
            kind: p.kind,
            tools: p.tools,
            grant_row: p.grant_row,
            warnings: p.warnings,
            disclosure: p.disclosure,
            requires: p.requires,
            instructions: p.instructions,
            replaces: p.replaces,
            asks_more: p.asks_more,
        }
    }
}

/// What updating a plugin document did.
// Not the core's `link::Update`: its preview crosses as the `PluginPreview` above.
// A record crosses the FFI by value; boxing the large variant would buy nothing there.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum PluginUpdate {
    /// The document is unchanged.
    Current,
    /// Installed: it asks for nothing new.
    Updated,
    /// It asks for more: the plugin stays on its old version until the user installs this
    /// preview.
    NeedsConsent { preview: PluginPreview },
}

#[uniffi::export(async_runtime = "tokio")]
impl Harness {
    /// Fetches the plugin document at `link` (https, or a `file://` the user picked) and
    /// returns what the consent screen shows. Installs nothing.
    pub async fn preview_plugin(&self, link: String) -> Result<PluginPreview, HarnessError> {
        let engine = self.engine()?;
        let preview = runtime()?
            .spawn(async move { engine.preview_link(&link).await })
            .await??;
        Ok(preview.into())
    }

    /// Installs exactly what preview `id` showed; refused if the document changed since.
    /// Returns the plugin id.
    pub async fn install_plugin_preview(&self, id: String) -> Result<String, HarnessError> {
        let engine = self.engine()?;
        Ok(runtime()?
            .spawn(async move { engine.install_preview(&id).await })
            .await??)
    }

    /// Fetches an installed document's link again.
    pub async fn update_plugin(&self, plugin: String) -> Result<PluginUpdate, HarnessError> {
        let engine = self.engine()?;
        let update = runtime()?
            .spawn(async move { engine.update_document(&plugin).await })
            .await??;
        Ok(match update {
            Update::Current => PluginUpdate::Current,
            Update::Updated => PluginUpdate::Updated,
            Update::NeedsConsent(preview) => PluginUpdate::NeedsConsent {
                preview: (*preview).into(),
            },
        })
    }

    /// Connects to the MCP server at `url` (https; http only to a loopback address while
    /// developing), lists its tools and installs them as plugin `mcp-<name>`. A bearer `token`
    /// goes to the Platform's keystore. Returns the plugin id.
    pub async fn add_remote_server(
        &self,
        url: String,
        name: String,
        token: Option<String>,
    ) -> Result<String, HarnessError> {
        let engine = self.engine()?;
        Ok(runtime()?
            .spawn(async move { engine.add_remote(&url, &name, token.as_deref()).await })
            .await??)
    }

    /// Lists a remote server's tools again and installs the list; new tools start under the
    /// remote defaults, a tool the user made stricter stays so. Returns the new tools' ids.
    pub async fn refresh_remote_server(&self, plugin: String) -> Result<Vec<String>, HarnessError> {
        let engine = self.engine()?;
        Ok(runtime()?
            .spawn(async move { engine.refresh_remote(&plugin).await })
            .await??)
    }

    /// Re-classes a remote tool (`mcp-<name>.<tool>`) to a stricter effect; a looser one is
    /// refused, naming the tool.
    pub fn reclass_remote_tool(&self, tool: String, effect: Effect) -> Result<(), HarnessError> {
        Ok(self.engine()?.reclass_remote_tool(&tool, effect)?)
    }
}
