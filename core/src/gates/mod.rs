//! Capability gates (seed 001, DESIGN.md §5): everything a plugin reaches, reads, persists or
//! spends goes through one of these services, off by default.

use serde::{Deserialize, Serialize};

/// What a plugin asks to reach, as declared in its manifest under `grants`. The names are the
/// seed's, so that every `error: ` string that names a grant names a key the author can find.
/// An unknown key is a load error: a misspelled grant must not silently grant nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    #[serde(default)]
    pub allow_fs: bool,
    #[serde(default)]
    pub allow_network: bool,
    #[serde(default)]
    pub url_allowlist: Vec<String>,
    #[serde(default)]
    pub allow_store: bool,
    #[serde(default)]
    pub allow_context: bool,
    /// Tool ids (`plugin.tool`) this plugin may call through the call-tool gate.
    #[serde(default)]
    pub allow_tools: Vec<String>,
    #[serde(default)]
    pub allow_send_message: bool,
}
