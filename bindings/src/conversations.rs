//! Conversations: what they may reach, their taint and turns. Their settings cross as the core
//! defines them (`harness_core::turn::ConversationSettings`).

use harness_core::turn::{self, ConversationSettings};

/// What a conversation may reach. Approving a call never widens it.
// Not the core's `turn::Scope`: its folders are paths, and cross as strings.
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
// Not the core's `turn::Conversation`: it carries the `Scope` above, and no rules.
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
            settings: c.settings,
            scope: c.scope.into(),
            tainted: c.tainted,
            turns: c.turns,
        }
    }
}
