//! Conversations: their settings (seed 003), what they may reach, their taint and turns.

use harness_core::policy::Preset;
use harness_core::turn;

/// The three rungs over the plugin modes: "Skip all permissions", "Auto-edit" (the default),
/// "Ask every time".
#[uniffi::remote(Enum)]
pub enum Preset {
    SkipAll,
    AutoEdit,
    AskEveryTime,
}

/// Model, thinking effort, preset and plan mode of one conversation.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ConversationSettings {
    #[uniffi(default = None)]
    pub model: Option<String>,
    #[uniffi(default = None)]
    pub thinking_effort: Option<String>,
    pub preset: Preset,
    #[uniffi(default = false)]
    pub plan_mode: bool,
}

/// What a conversation may reach. Approving a call never widens it.
#[derive(Clone, Debug, Default, PartialEq, Eq, uniffi::Record)]
pub struct Scope {
    /// Folders the conversation may read from.
    pub roots: Vec<String>,
    /// Hosts the conversation may reach.
    pub hosts: Vec<String>,
    /// Apps Copilot may operate.
    pub apps: Vec<String>,
}

/// A conversation's state.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ConversationInfo {
    pub id: String,
    pub settings: ConversationSettings,
    pub scope: Scope,
    /// The current turn has read untrusted content.
    pub tainted: bool,
    /// Turns begun so far.
    pub turns: u64,
}

impl From<turn::ConversationSettings> for ConversationSettings {
    fn from(s: turn::ConversationSettings) -> Self {
        ConversationSettings {
            model: s.model,
            thinking_effort: s.thinking_effort,
            preset: s.preset,
            plan_mode: s.plan_mode,
        }
    }
}

impl From<ConversationSettings> for turn::ConversationSettings {
    fn from(s: ConversationSettings) -> Self {
        turn::ConversationSettings {
            model: s.model,
            thinking_effort: s.thinking_effort,
            preset: s.preset,
            plan_mode: s.plan_mode,
        }
    }
}

impl From<turn::Scope> for Scope {
    fn from(s: turn::Scope) -> Self {
        Scope {
            roots: s
                .roots
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            hosts: s.hosts,
            apps: s.apps,
        }
    }
}

impl From<Scope> for turn::Scope {
    fn from(s: Scope) -> Self {
        turn::Scope {
            roots: s.roots.into_iter().map(Into::into).collect(),
            hosts: s.hosts,
            apps: s.apps,
        }
    }
}

impl From<turn::Conversation> for ConversationInfo {
    fn from(c: turn::Conversation) -> Self {
        ConversationInfo {
            id: c.id,
            settings: c.settings.into(),
            scope: c.scope.into(),
            tainted: c.tainted,
            turns: c.turns,
        }
    }
}
