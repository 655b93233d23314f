//! Capability gates (seed 001, DESIGN.md §5): everything a plugin reaches, reads, persists or
//! spends goes through one of these services, off by default.
//!
//! Every plugin kind uses the same services, so one code path enforces them. At the gate surface
//! a refusal is a string starting `error: ` (seed 001: refusals are in-band, not traps), so a
//! plugin can relay the reason to the model; validation at load time returns [`GrantError`].
//!
//! One service per gate. Per plugin, holding its grants: [`FsGate`], [`NetworkGate`],
//! [`StoreGate`], [`ToolCallGate`]. Per host, shared by every plugin and told the caller's id:
//! [`ContextBoard`], [`MessageGate`] and the ungated [`Notifier`]. Lines the user must see
//! (notify, suppression notices, context changes, sent messages, tool calls) are queued in an
//! [`Outbox`] the host drains.

mod context;
mod fs;
mod message;
mod network;
mod notify;
mod outbox;
mod rows;
mod scope;
mod store;
mod tools;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use context::ContextBoard;
pub use fs::FsGate;
pub use message::{MessageGate, PendingMessage, TurnState};
pub use network::{NetworkGate, NetworkPolicy, check_scope_host};
pub(crate) use network::{
    address_refusal, error_chain, guarded_client, loopback_client, refused_address,
};
pub use notify::Notifier;
pub use outbox::{HostLine, LineKind, Outbox};
pub use rows::{check_grants, grant_row, grant_row_zh, startup_warnings};
pub use scope::{CallScope, out_of_scope};
pub(crate) use store::store_dir;
pub use store::{StoreGate, check_store_names};
pub(crate) use tools::grant_cycle;
pub use tools::{Dispatched, ToolCallGate, ToolCatalog, ToolDispatch, ToolInfo};

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

pub use crate::registry::PluginKind;

impl PluginKind {
    /// Whether the network gate also checks addresses. DESIGN.md §5: a community document
    /// writes its own allowlist, and a remote server is third-party, so neither may reach
    /// loopback, private, link-local or unique-local addresses.
    fn guards_addresses(self) -> bool {
        matches!(self, PluginKind::Community | PluginKind::Remote)
    }
}

/// A grant that cannot be honoured as written. Each is a load error for the plugin it names
/// (seed 001: a grant you asked for and did not get is loud, never silently nothing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    #[error(
        "plugin \"{plugin}\": url_allowlist entry \"{entry}\" puts a star somewhere other than \
         a leading \"*.\" or a lone \"*\"; write example.com (the host and its subdomains), \
         *.example.com (subdomains only) or * (any host)"
    )]
    MisplacedWildcard { plugin: String, entry: String },
    #[error("plugin \"{plugin}\": url_allowlist entry \"{entry}\" is not a host name ({reason})")]
    NotAHost {
        plugin: String,
        entry: String,
        reason: String,
    },
    #[error(
        "plugin \"{plugin}\": allow_tools names \"{tool}\", which is not a known tool; known \
         tools: {known}"
    )]
    UnknownTool {
        plugin: String,
        tool: String,
        known: String,
    },
    /// A plugin calling its own tool recurses without end (seed 001's rule that only bundled
    /// tools may be called no longer breaks the loop: TypeScript plugins are bundled).
    #[error(
        "plugin \"{plugin}\": allow_tools names \"{tool}\", a tool of this plugin itself; a \
         plugin may not call its own tools — remove \"{tool}\" from allow_tools"
    )]
    SelfGrant { plugin: String, tool: String },
    /// Plugins that may call each other in a circle: `chain` is `a.x -> b.y -> a.x`, each tool
    /// granted to the plugin of the one before it.
    #[error(
        "plugin \"{plugin}\": allow_tools closes a circle of plugins calling each other \
         ({chain}); remove \"{granted}\" from allow_tools, or the grant of another plugin in \
         the circle"
    )]
    Cycle {
        plugin: String,
        chain: String,
        /// The plugin's own grant that leads into the circle.
        granted: String,
    },
    #[error(
        "plugin \"{plugin}\" and plugin \"{other}\" share the store name \"{store}\" and at least \
         one of them has allow_store; rename one of them (store names ignore case)"
    )]
    SharedStore {
        plugin: String,
        other: String,
        store: String,
    },
    #[error(
        "plugin \"{plugin}\": its id cannot name a store directory for allow_store (it is empty, \
         \".\", \"..\", or contains \"/\", \"\\\" or a NUL byte); rename the plugin"
    )]
    BadStoreName { plugin: String },
    #[error("plugin \"{plugin}\": the HTTP client for allow_network could not start: {reason}")]
    HttpClient { plugin: String, reason: String },
}

/// seed 001: the network body cap is "sized to the guest-side arena"; the store quota and the
/// fs read cap use the same arena, so the same number.
const MIB: usize = 1024 * 1024;

/// `bytes` as the text a plugin receives (invalid UTF-8 replaced by U+FFFD), or, when that text
/// would be longer than `cap` bytes, its length. The caps are on what reaches the plugin (seed
/// 001: "sized to the guest-side arena"), and each invalid byte becomes three bytes of text, so
/// a capped read could otherwise deliver three times the cap. The length is counted before
/// anything is allocated.
fn decode_capped(bytes: &[u8], cap: usize) -> Result<String, usize> {
    let decoded_len: usize = bytes
        .utf8_chunks()
        .map(|chunk| {
            let replacement = if chunk.invalid().is_empty() {
                0
            } else {
                '\u{fffd}'.len_utf8()
            };
            chunk.valid().len() + replacement
        })
        .sum();
    if decoded_len > cap {
        return Err(decoded_len);
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// The refusal for a grant that is off, naming the key to set (seed 001: "the host's messages
/// name the specific config knob to change").
fn denied(what: &str, grant: &str) -> String {
    format!("error: {what} denied (set {grant} = true in this plugin's grants)")
}

/// `10s`, `300ms`: the form the seed's messages use (`the 30s plugin deadline`).
fn human_duration(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

/// Splits `text` at every line break a renderer might honour (`\r\n`, `\n`, `\r`, vertical tab,
/// form feed, NEL, U+2028, U+2029), so a line that only looks like it starts mid-line is seen
/// as the line it will show as.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if matches!(
            c,
            '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
        ) {
            lines.push(&text[start..at]);
            start = at + c.len_utf8();
            if c == '\r' && chars.next_if(|&(_, next)| next == '\n').is_some() {
                start += 1;
            }
        }
    }
    lines.push(&text[start..]);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denied_names_the_grant_to_set() {
        assert_eq!(
            denied("network access", "allow_network"),
            "error: network access denied (set allow_network = true in this plugin's grants)"
        );
    }

    #[test]
    fn every_line_break_splits() {
        assert_eq!(
            split_lines("a\r\nb\nc\rd\u{2028}e\u{85}f"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(split_lines("one"), ["one"]);
        assert_eq!(split_lines("a\n"), ["a", ""]);
    }

    #[test]
    fn the_decoded_length_is_what_the_cap_measures() {
        assert_eq!(decode_capped(b"abc", 3).unwrap(), "abc");
        assert_eq!(decode_capped(b"abcd", 3), Err(4));
        assert_eq!(decode_capped(&[0xff], 3).unwrap(), "\u{fffd}");
        assert_eq!(decode_capped(&[0xff], 2), Err(3));
        // A truncated sequence is one replacement, as from_utf8_lossy makes it.
        assert_eq!(decode_capped(&[b'a', 0xe2, 0x82], 4).unwrap(), "a\u{fffd}");
        assert_eq!(decode_capped(&[0xff, 0xfe, b'x'], 6), Err(7));
    }

    #[test]
    fn durations_read_like_the_seed() {
        assert_eq!(human_duration(Duration::from_secs(30)), "30s");
        assert_eq!(human_duration(Duration::from_millis(300)), "300ms");
    }

    #[test]
    fn only_community_and_remote_plugins_have_their_addresses_checked() {
        assert!(!PluginKind::Bundled.guards_addresses());
        assert!(!PluginKind::Official.guards_addresses());
        assert!(PluginKind::Community.guards_addresses());
        assert!(PluginKind::Remote.guards_addresses());
    }

    #[test]
    fn every_gate_can_be_shared_across_the_engines_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<FsGate>();
        shareable::<NetworkGate>();
        shareable::<StoreGate>();
        shareable::<ContextBoard>();
        shareable::<ToolCallGate>();
        shareable::<MessageGate>();
        shareable::<Notifier>();
        shareable::<Outbox>();
    }

    #[test]
    fn an_unknown_grant_key_is_a_load_error() {
        let err = serde_json::from_value::<Grants>(serde_json::json!({"allow_netwrok": true}))
            .unwrap_err();
        assert!(err.to_string().contains("allow_netwrok"), "{err}");
    }
}
