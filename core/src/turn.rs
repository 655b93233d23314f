//! Conversations and their turns: the settings that belong to each conversation (seed 003), its
//! own rules, its writable scope, and whether the current turn has taken in untrusted content.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::policy::{Preset, RuleSet};

/// Model, thinking effort, preset and plan mode belong to each conversation. A change applies
/// at the next tool call and becomes the default for new conversations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSettings {
    pub model: Option<String>,
    pub thinking_effort: Option<String>,
    pub preset: Preset,
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
    pub fn begin_turn(&mut self) {
        self.turns += 1;
        self.tainted = false;
    }
}

impl crate::Engine {
    /// A conversation by id, or `NoSuchConversation`.
    pub fn existing_conversation(&self, id: &str) -> Result<Conversation, crate::EngineError> {
        self.conversation(id)
            .ok_or_else(|| crate::EngineError::NoSuchConversation(id.to_owned()))
    }

    /// The agent's call in `conversation`, which must exist: in an unknown one the call would
    /// be decided with the default settings, no conversation rules and no taint.
    pub async fn invoke_in_conversation(
        &self,
        conversation: &str,
        tool: String,
        input: serde_json::Value,
    ) -> Result<crate::invoke::Invocation, crate::EngineError> {
        self.existing_conversation(conversation)?;
        Ok(self
            .invoke(crate::invoke::Call {
                tool,
                actor: crate::policy::Actor::Agent,
                input,
                conversation: Some(conversation.to_owned()),
            })
            .await)
    }
}
