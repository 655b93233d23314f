//! The owner of conversations and their turns (seed 003): each conversation's settings, own
//! rules, scope, turn count and taint; the defaults new conversations start with; the global
//! rules; and the documents the user attached. The global rules live here rather than in an
//! owner of their own: they are read together with a conversation's rules on every call, and
//! stored in the same `rules` table under the empty scope.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::clock::Clock;
use crate::error::EngineError;
use crate::policy::{Rule, RuleSet};
use crate::store::conversations::{self as rows, ConversationRow};
use crate::store::values::{Table, put_value, values};
use crate::store::{Store, StoreError};
use crate::turn::{Conversation, ConversationSettings, Scope};

/// The settings row that holds the defaults for new conversations.
const DEFAULTS_KEY: &str = "conversationDefaults";
/// The rules scope of the global rules.
const GLOBAL_SCOPE: &str = "";

#[derive(Default)]
struct State {
    conversations: FxHashMap<String, Conversation>,
    rules: Arc<RuleSet>,
    defaults: ConversationSettings,
}

/// What a call is decided with from its conversation (or the defaults, without one).
pub(crate) struct CallView {
    pub settings: ConversationSettings,
    pub scope: Scope,
    pub tainted: bool,
    pub turn: Option<u64>,
    /// The current turn started from the user's own words.
    pub user_asked: bool,
    pub global_rules: Arc<RuleSet>,
    pub conversation_rules: Arc<RuleSet>,
}

pub struct Conversations {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
}

impl Conversations {
    pub(crate) fn load(store: Arc<Store>, clock: Arc<dyn Clock>) -> Result<Self, EngineError> {
        let rule_rows: Vec<(String, Vec<Rule>)> = store.read(rows::rules)?;
        let conversation_rows: Vec<ConversationRow<ConversationSettings, Scope>> =
            store.read(rows::conversations)?;
        let settings_rows = store.read(|c| values(c, Table::Settings))?;
        let mut state = State::default();
        let mut conversation_rules = FxHashMap::default();
        for (scope, rules) in rule_rows {
            let set = Arc::new(RuleSet::new(rules)?);
            if scope == GLOBAL_SCOPE {
                state.rules = set;
            } else {
                conversation_rules.insert(scope, set);
            }
        }
        for row in conversation_rows {
            let mut conversation = Conversation::new(&row.id, row.settings);
            conversation.scope = row.scope;
            conversation.turns = row.turns;
            conversation.tainted = row.tainted;
            if let Some(rules) = conversation_rules.remove(&row.id) {
                conversation.rules = rules;
            }
            state.conversations.insert(row.id, conversation);
        }
        if let Some((_, value)) = settings_rows.into_iter().find(|(k, _)| k == DEFAULTS_KEY) {
            state.defaults = serde_json::from_value(value)
                .map_err(|e| StoreError::Corrupt(format!("settings.{DEFAULTS_KEY}: {e}")))?;
        }
        Ok(Self {
            store,
            clock,
            state: Mutex::new(state),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        crate::lock(&self.state)
    }

    /// A call's view of its conversation, copied out under the lock.
    pub(crate) fn for_call(&self, conversation: Option<&str>) -> CallView {
        let state = self.state();
        match conversation.and_then(|c| state.conversations.get(c)) {
            Some(c) => CallView {
                settings: c.settings.clone(),
                scope: c.scope.clone(),
                tainted: c.tainted,
                turn: Some(c.turns),
                user_asked: c.user_asked,
                global_rules: state.rules.clone(),
                conversation_rules: c.rules.clone(),
            },
            None => CallView {
                settings: state.defaults.clone(),
                scope: Scope::default(),
                tainted: false,
                turn: None,
                user_asked: false,
                global_rules: state.rules.clone(),
                conversation_rules: Arc::new(RuleSet::default()),
            },
        }
    }

    /// Replaces the global rules.
    pub fn set_rules(&self, rules: Vec<Rule>) -> Result<(), EngineError> {
        let set = RuleSet::new(rules)?;
        let mut state = self.state();
        self.store
            .write(|tx| rows::put_rules(tx, GLOBAL_SCOPE, set.rules()))?;
        state.rules = Arc::new(set);
        Ok(())
    }

    pub fn rules(&self) -> Vec<Rule> {
        self.state().rules.rules().to_vec()
    }

    /// Replaces one conversation's own rules.
    pub fn set_conversation_rules(
        &self,
        conversation: &str,
        rules: Vec<Rule>,
    ) -> Result<(), EngineError> {
        let set = RuleSet::new(rules)?;
        let mut state = self.state();
        let conv = state
            .conversations
            .get_mut(conversation)
            .ok_or_else(|| EngineError::NoSuchConversation(conversation.to_owned()))?;
        self.store
            .write(|tx| rows::put_rules(tx, conversation, set.rules()))?;
        conv.rules = Arc::new(set);
        Ok(())
    }

    /// Opens a conversation with the current defaults; an existing one is kept as it is.
    pub fn open(&self, id: &str) -> Result<ConversationSettings, EngineError> {
        let mut state = self.state();
        if let Some(existing) = state.conversations.get(id) {
            return Ok(existing.settings.clone());
        }
        let conversation = Conversation::new(id, state.defaults.clone());
        let now = self.clock.now_ms();
        self.store
            .write(|tx| rows::put_conversation(tx, &conversation.row(), now))?;
        let settings = conversation.settings.clone();
        state.conversations.insert(id.to_owned(), conversation);
        Ok(settings)
    }

    /// Changes one conversation's settings; they apply at its next call and become the default
    /// for new conversations. Other conversations keep theirs (seed 003).
    pub fn set_settings(
        &self,
        id: &str,
        settings: ConversationSettings,
    ) -> Result<(), EngineError> {
        let mut state = self.state();
        let defaults = settings.clone();
        self.change(
            &mut state,
            id,
            |c| c.settings = settings,
            |tx| put_value(tx, Table::Settings, DEFAULTS_KEY, &defaults),
        )?;
        state.defaults = defaults;
        Ok(())
    }

    /// Writes a changed copy of one conversation, with `also` in the same transaction, then
    /// puts it in place of the old one. Returns the conversation's turn count.
    fn change(
        &self,
        state: &mut State,
        id: &str,
        change: impl FnOnce(&mut Conversation),
        also: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<(), StoreError>,
    ) -> Result<u64, EngineError> {
        let mut next = state
            .conversations
            .get(id)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchConversation(id.to_owned()))?;
        change(&mut next);
        let now = self.clock.now_ms();
        self.store.write(|tx| {
            rows::put_conversation(tx, &next.row(), now)?;
            also(tx)
        })?;
        let turns = next.turns;
        state.conversations.insert(id.to_owned(), next);
        Ok(turns)
    }

    pub fn get(&self, id: &str) -> Option<Conversation> {
        self.state().conversations.get(id).cloned()
    }

    pub fn defaults(&self) -> ConversationSettings {
        self.state().defaults.clone()
    }

    /// Sets what a conversation may reach. Only the user does this, from the conversation's
    /// scope settings; approving a call never does.
    pub fn set_scope(&self, id: &str, scope: Scope) -> Result<(), EngineError> {
        self.change(&mut self.state(), id, |c| c.scope = scope, |_| Ok(()))?;
        Ok(())
    }

    /// Starts a turn: taint belongs to the turn that read untrusted content. Returns the turn's
    /// number.
    pub fn begin_turn(&self, id: &str) -> Result<u64, EngineError> {
        self.begin_turn_from(id, true)
    }

    /// A new turn; `user_asked` is false when it did not start from the user's own words.
    pub fn begin_turn_from(&self, id: &str, user_asked: bool) -> Result<u64, EngineError> {
        self.change(
            &mut self.state(),
            id,
            |c| c.begin_turn(user_asked),
            |_| Ok(()),
        )
    }

    /// Marks the current turn as having read untrusted content. The mark is saved with the
    /// conversation (DESIGN.md §3: taint outlives a restart); should saving fail, the mark still
    /// holds in memory, since a turn that read untrusted content must never act as a clean one.
    pub fn taint(&self, id: &str) -> Result<(), EngineError> {
        let mut state = self.state();
        let conv = state
            .conversations
            .get(id)
            .ok_or_else(|| EngineError::NoSuchConversation(id.to_owned()))?;
        if conv.tainted {
            return Ok(());
        }
        let saved = self.change(&mut state, id, |c| c.tainted = true, |_| Ok(()));
        if let Some(conv) = state.conversations.get_mut(id) {
            conv.tainted = true;
        }
        saved.map(drop)
    }

    /// A document the user attached from the file picker, read into text on the phone. Only
    /// the shell calls this, after the user chose the file on a screen: no tool can.
    pub fn attach_document(
        &self,
        conversation: &str,
        name: &str,
        text: &str,
    ) -> Result<i64, EngineError> {
        if !self.state().conversations.contains_key(conversation) {
            return Err(EngineError::NoSuchConversation(conversation.to_owned()));
        }
        let now = self.clock.now_ms();
        Ok(self
            .store
            .write(|tx| rows::insert_document(tx, conversation, name, text, now))?)
    }

    pub fn documents(&self, conversation: &str) -> Result<Vec<(i64, String, String)>, EngineError> {
        Ok(self.store.read(|c| rows::documents(c, conversation))?)
    }
}
