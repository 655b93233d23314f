//! Conversations and their turns: the settings that belong to each conversation (seed 003), its
//! own rules, its writable scope, and whether the current turn has taken in untrusted content.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::policy::{Preset, RuleSet};

/// Model, thinking effort, preset and plan mode belong to each conversation. A change applies
/// at the next tool call and becomes the default for new conversations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
#[serde(rename_all = "camelCase")]
pub struct ConversationSettings {
    #[cfg_attr(feature = "uniffi", uniffi(default = None))]
    pub model: Option<String>,
    #[cfg_attr(feature = "uniffi", uniffi(default = None))]
    pub thinking_effort: Option<String>,
    pub preset: Preset,
    #[cfg_attr(feature = "uniffi", uniffi(default = false))]
    pub plan_mode: bool,
}

/// What a conversation may reach. Approving a call never widens it (seed 003); only a grant
/// tool's answer does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// Folders the conversation may read from.
    pub roots: Vec<PathBuf>,
    /// Hosts the conversation may reach.
    pub hosts: Vec<String>,
    /// Apps Copilot may operate.
    pub apps: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Conversation {
    pub id: String,
    pub settings: ConversationSettings,
    pub rules: Arc<RuleSet>,
    pub scope: Scope,
    /// The current turn has read untrusted content (seed 000: memory and money/public calls
    /// after that need the user).
    pub tainted: bool,
    /// Turns begun so far.
    pub turns: u64,
    /// The current turn started from the user's own words (seed 004: `ctx.turn.userAsked`).
    /// Not stored: a turn does not outlive the process that ran it.
    pub user_asked: bool,
}

impl Conversation {
    pub fn new(id: impl Into<String>, settings: ConversationSettings) -> Self {
        Self {
            id: id.into(),
            settings,
            rules: Arc::new(RuleSet::default()),
            scope: Scope::default(),
            tainted: false,
            turns: 0,
            user_asked: false,
        }
    }

    /// The row it is stored as.
    pub fn row(&self) -> crate::store::rows::ConversationRow<&ConversationSettings, &Scope> {
        crate::store::rows::ConversationRow {
            id: self.id.clone(),
            settings: &self.settings,
            scope: &self.scope,
            turns: self.turns,
            tainted: self.tainted,
        }
    }

    /// A new turn starts clean: taint belongs to the turn that read the content.
    pub fn begin_turn(&mut self, user_asked: bool) {
        self.turns += 1;
        self.tainted = false;
        self.user_asked = user_asked;
    }
}
