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

pub use crate::store::conversations::TITLE_CHARS;
/// A title the student gives is cut to this many characters.
pub const RENAMED_CHARS: usize = 60;
/// A list row's preview of the newest message is cut to this many characters.
pub const PREVIEW_CHARS: usize = 60;
/// How long a deleted conversation can be brought back (the screen's undo).
pub const UNDO_MS: i64 = 5_000;
/// The conversation a data directory starts with, as the phone's shells always named it.
pub const FIRST: &str = "main";
/// The agent jobs' conversations (`job-<id>`): the scheduler's, never in the chat's list.
const JOB_PREFIX: &str = "job-";

/// The settings row that holds the defaults for new conversations.
const DEFAULTS_KEY: &str = "conversationDefaults";
/// The rules scope of the global rules.
const GLOBAL_SCOPE: &str = "";

#[derive(Default)]
struct State {
    conversations: FxHashMap<String, Conversation>,
    rules: Arc<RuleSet>,
    defaults: ConversationSettings,
    /// conversation → the lines sent to the agent's turn running in it and not read yet. A
    /// conversation is here exactly while an agent's turn runs in it (DESIGN.md §3: one turn at
    /// a time). Not stored: a turn does not outlive the process that ran it.
    running: FxHashMap<String, Vec<Line>>,
    /// conversation → its title, for those that have one.
    titles: FxHashMap<String, String>,
    /// The conversation deleted last, kept in memory to be put back by an undo until
    /// [`UNDO_MS`] pass or another is deleted. Not stored: the database holds none of it from
    /// the delete on, so a restart ends the undo as the window's end does.
    deleted: Option<Deleted>,
}

struct Deleted {
    conversation: Conversation,
    title: Option<String>,
    taken: rows::Taken,
    at_ms: i64,
}

/// A conversation as the list shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    /// Written from the first message, or the student's; none before the first message.
    pub title: Option<String>,
    /// When its newest message was written, or it was made, without one.
    pub last_active_ms: i64,
    /// The newest of the student's or the agent's words, on one line and cut.
    pub preview: Option<String>,
}

/// A message for the agent's turn in a conversation: the student's words, or a plugin's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// Who waits for the turn that reads it (the agent's own numbering).
    pub waiter: u64,
    pub text: String,
    /// Third-party words (a community or remote plugin's message): reading them taints the turn.
    pub taints: bool,
}

/// The turn that lines which came too late for the one that ended begin.
pub(crate) struct Follow {
    pub turn: Result<u64, EngineError>,
    pub lines: Vec<Line>,
}

/// How [`Conversations::start_or_join`] placed a line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Placed {
    /// No turn was running: this one began, with this number.
    Began(u64),
    /// A turn runs: the line waits to be read at its next step.
    Joined,
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
        let listed = store.read(rows::listed)?;
        let mut state = State {
            titles: listed
                .into_iter()
                .filter_map(|row| Some((row.id, row.title?)))
                .collect(),
            ..State::default()
        };
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

    /// Removes `rule` — the rule itself, as the user saw it, not a position that a change made
    /// meanwhile may have moved — from a conversation's rules, or the global ones without a
    /// conversation. False, changing nothing, when no such rule is there any more.
    pub fn remove_rule(
        &self,
        conversation: Option<&str>,
        rule: &Rule,
    ) -> Result<bool, EngineError> {
        self.edit_rules(conversation, |rules| {
            let at = rules.iter().position(|r| r == rule)?;
            rules.remove(at);
            Some(())
        })
    }

    /// Adds `rule` after the rules already there, to a conversation's rules or, without a
    /// conversation, the global ones. False, changing nothing, when that very rule is there.
    pub fn add_rule(&self, conversation: Option<&str>, rule: Rule) -> Result<bool, EngineError> {
        self.edit_rules(conversation, |rules| {
            (!rules.contains(&rule)).then(|| rules.push(rule))
        })
    }

    /// Changes a conversation's rules, or the global ones without a conversation, as `edit`
    /// says on the rules as they stand; `edit` answers none to change nothing (then false).
    fn edit_rules(
        &self,
        conversation: Option<&str>,
        edit: impl FnOnce(&mut Vec<Rule>) -> Option<()>,
    ) -> Result<bool, EngineError> {
        let mut state = self.state();
        let current = match conversation {
            Some(id) => state
                .conversations
                .get(id)
                .ok_or_else(|| EngineError::NoSuchConversation(id.to_owned()))?
                .rules
                .clone(),
            None => state.rules.clone(),
        };
        let mut rules = current.rules().to_vec();
        if edit(&mut rules).is_none() {
            return Ok(false);
        }
        let set = Arc::new(RuleSet::new(rules)?);
        let scope = conversation.unwrap_or(GLOBAL_SCOPE);
        self.store
            .write(|tx| rows::put_rules(tx, scope, set.rules()))?;
        match conversation.and_then(|id| state.conversations.get_mut(id)) {
            Some(conv) => conv.rules = set,
            None => state.rules = set,
        }
        Ok(true)
    }

    /// Opens a conversation with the current defaults; an existing one is kept as it is.
    pub fn open(&self, id: &str) -> Result<ConversationSettings, EngineError> {
        let mut state = self.state();
        if let Some(existing) = state.conversations.get(id) {
            return Ok(existing.settings.clone());
        }
        // A conversation that an undo may still bring back is not made anew under its id.
        if state
            .deleted
            .as_ref()
            .is_some_and(|d| d.conversation.id == id)
        {
            return Err(EngineError::NoSuchConversation(id.to_owned()));
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

    /// Starts a new conversation with the current defaults (seed 003: the last change of any
    /// conversation's model, effort or preset) and returns its id.
    pub fn create(&self) -> Result<String, EngineError> {
        let now = self.clock.now_ms();
        let id = {
            let state = self.state();
            let taken = |id: &str| {
                state.conversations.contains_key(id)
                    || state
                        .deleted
                        .as_ref()
                        .is_some_and(|d| d.conversation.id == id)
            };
            let mut id = format!("chat-{now}");
            let mut n = 1;
            while taken(&id) {
                n += 1;
                id = format!("chat-{now}-{n}");
            }
            id
        };
        self.open(&id)?;
        Ok(id)
    }

    /// Brings back a conversation from the app's backup (issue 39.5) under the id it had, with
    /// its title, settings, own rules, scope and turn count; its messages are the history's. A
    /// conversation here under that id is kept as it is (so a restore twice adds nothing),
    /// unless it was never used (no turn, no title): a new phone's first conversation gives way
    /// to the one the backup holds. True when the conversation was written.
    pub(crate) fn restore(
        &self,
        id: &str,
        title: Option<&str>,
        settings: ConversationSettings,
        rules: Vec<Rule>,
        scope: Scope,
        turns: u64,
    ) -> Result<bool, EngineError> {
        let set = Arc::new(RuleSet::new(rules)?);
        check_scope(&scope)?;
        let mut state = self.state();
        let unused = |c: &Conversation| c.turns == 0 && !state.titles.contains_key(&c.id);
        if state.conversations.get(id).is_some_and(|c| !unused(c))
            || state
                .deleted
                .as_ref()
                .is_some_and(|d| d.conversation.id == id)
            || id.starts_with(JOB_PREFIX)
        {
            return Ok(false);
        }
        let mut conversation = Conversation::new(id, settings);
        conversation.turns = turns;
        conversation.rules = set;
        conversation.scope = scope;
        let now = self.clock.now_ms();
        self.store.write(|tx| {
            rows::put_conversation(tx, &conversation.row(), now)?;
            rows::put_rules(tx, id, conversation.rules.rules())?;
            rows::set_title(tx, id, title)
        })?;
        match title {
            Some(title) => state.titles.insert(id.to_owned(), title.to_owned()),
            None => state.titles.remove(id),
        };
        state.conversations.insert(id.to_owned(), conversation);
        Ok(true)
    }

    /// The conversations a student chats in, the most recently active first. An agent job's
    /// conversation is the scheduler's and is not among them.
    pub fn list(&self) -> Result<Vec<Listed>, EngineError> {
        let rows = self.store.read(rows::listed)?;
        let mut listed: Vec<Listed> = rows
            .into_iter()
            .filter(|row| !row.id.starts_with(JOB_PREFIX))
            .map(|row| Listed {
                last_active_ms: row
                    .last_message_at
                    .unwrap_or(row.created_at)
                    .max(row.created_at),
                preview: row
                    .preview
                    .and_then(|p| crate::text::headline(&p, PREVIEW_CHARS)),
                title: row.title,
                id: row.id,
            })
            .collect();
        listed.sort_by(|a, b| {
            b.last_active_ms
                .cmp(&a.last_active_ms)
                .then_with(|| b.id.cmp(&a.id))
        });
        Ok(listed)
    }

    /// The conversation the chat opens on: the most recently active; with none, the data
    /// directory's first conversation, [`FIRST`] (a new one while an undo may bring `main`
    /// back).
    pub fn latest(&self) -> Result<String, EngineError> {
        if let Some(latest) = self.list()?.into_iter().next() {
            return Ok(latest.id);
        }
        match self.open(FIRST) {
            Ok(_) => Ok(FIRST.to_owned()),
            Err(EngineError::NoSuchConversation(_)) => self.create(),
            Err(e) => Err(e),
        }
    }

    pub fn title(&self, id: &str) -> Option<String> {
        self.state().titles.get(id).cloned()
    }

    /// Names a conversation as the student typed it, on one line and cut to
    /// [`RENAMED_CHARS`].
    pub fn rename(&self, id: &str, title: &str) -> Result<String, EngineError> {
        let title = crate::text::headline(title, RENAMED_CHARS).ok_or_else(|| {
            EngineError::Invalid(
                "title: a conversation's name needs at least one visible character".into(),
            )
        })?;
        let mut state = self.state();
        if !state.conversations.contains_key(id) {
            return Err(EngineError::NoSuchConversation(id.to_owned()));
        }
        self.store
            .write(|tx| rows::set_title(tx, id, Some(&title)))?;
        state.titles.insert(id.to_owned(), title.clone());
        Ok(title)
    }

    /// Deletes a conversation — its history, documents, rules and scope, and the link of the
    /// pending memories it wrote — in one transaction. Only the student does this, from the
    /// conversation list or the CLI: no tool reaches it. What was deleted can be put back by
    /// [`Conversations::undo_delete`] for [`UNDO_MS`], until the next delete. Refused while
    /// the agent's turn runs in it.
    pub fn delete(&self, id: &str) -> Result<(), EngineError> {
        let mut state = self.state();
        if state.running.contains_key(id) {
            return Err(EngineError::TurnRunning(id.to_owned()));
        }
        let conversation = state
            .conversations
            .get(id)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchConversation(id.to_owned()))?;
        let taken = self.store.write(|tx| rows::take_conversation(tx, id))?;
        state.conversations.remove(id);
        let title = state.titles.remove(id);
        state.deleted = Some(Deleted {
            conversation,
            title,
            taken,
            at_ms: self.clock.now_ms(),
        });
        Ok(())
    }

    /// The conversation deleted last and until when it can be brought back, while it can.
    pub fn undoable(&self) -> Option<(String, i64)> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let until = state.deleted.as_ref().map(|d| d.at_ms + UNDO_MS)?;
        if now > until {
            state.deleted = None;
            return None;
        }
        state
            .deleted
            .as_ref()
            .map(|d| (d.conversation.id.clone(), until))
    }

    /// Puts back the conversation deleted last, as it was, and returns its id; refused once
    /// [`UNDO_MS`] have passed.
    pub fn undo_delete(&self) -> Result<String, EngineError> {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let deleted = state.deleted.take().ok_or_else(|| {
            EngineError::Invalid("no deleted conversation can be brought back".into())
        })?;
        if now > deleted.at_ms + UNDO_MS {
            return Err(EngineError::Invalid(format!(
                "the conversation was deleted more than {} seconds ago and cannot be brought back",
                UNDO_MS / 1000
            )));
        }
        let id = deleted.conversation.id.clone();
        if let Err(e) = self
            .store
            .write(|tx| rows::restore_conversation(tx, &id, &deleted.taken))
        {
            state.deleted = Some(deleted);
            return Err(e.into());
        }
        if let Some(title) = deleted.title {
            state.titles.insert(id.clone(), title);
        }
        state.conversations.insert(id.clone(), deleted.conversation);
        Ok(id)
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
        check_scope(&scope)?;
        self.change(&mut self.state(), id, |c| c.scope = scope, |_| Ok(()))?;
        Ok(())
    }

    /// Changes what a conversation may reach as `edit` says, on the scope as it stands (a
    /// change made meanwhile is kept); refused whole, changing nothing, when an entry would
    /// not be valid.
    pub fn edit_scope(&self, id: &str, edit: impl FnOnce(&mut Scope)) -> Result<(), EngineError> {
        let mut state = self.state();
        let mut scope = state
            .conversations
            .get(id)
            .ok_or_else(|| EngineError::NoSuchConversation(id.to_owned()))?
            .scope
            .clone();
        edit(&mut scope);
        check_scope(&scope)?;
        self.change(&mut state, id, |c| c.scope = scope, |_| Ok(()))?;
        Ok(())
    }

    /// Starts a turn: taint belongs to the turn that read untrusted content. Returns the turn's
    /// number. Refused while the agent's turn runs in the conversation: starting another would
    /// clear the running turn's taint (DESIGN.md §3).
    pub fn begin_turn(&self, id: &str) -> Result<u64, EngineError> {
        let mut state = self.state();
        if state.running.contains_key(id) {
            return Err(EngineError::TurnRunning(id.to_owned()));
        }
        self.change(&mut state, id, |c| c.begin_turn(true), |_| Ok(()))
    }

    /// The agent's turn for `line` (DESIGN.md §3, one turn at a time per conversation): when
    /// none runs in the conversation, a new one begins (clean; `user_asked` says whether it
    /// started from the student's words) and the conversation is marked running; when one
    /// runs, the line joins it, to be read at its next step — it never clears that turn's
    /// taint. `join` false refuses instead of joining (an agent job's run).
    pub(crate) fn start_or_join(
        &self,
        id: &str,
        user_asked: bool,
        line: Line,
        join: bool,
    ) -> Result<Placed, EngineError> {
        let mut state = self.state();
        if let Some(waiting) = state.running.get_mut(id) {
            if !join {
                return Err(EngineError::TurnRunning(id.to_owned()));
            }
            waiting.push(line);
            return Ok(Placed::Joined);
        }
        // The student's first words name the conversation, in the same write (no model call).
        let title = match state.titles.contains_key(id) {
            false if user_asked => crate::text::headline(&line.text, TITLE_CHARS),
            _ => None,
        };
        let turn = self.change(
            &mut state,
            id,
            |c| c.begin_turn(user_asked),
            |tx| match &title {
                Some(title) => rows::set_title(tx, id, Some(title)),
                None => Ok(()),
            },
        )?;
        if let Some(title) = title {
            state.titles.insert(id.to_owned(), title);
        }
        state.running.insert(id.to_owned(), Vec::new());
        Ok(Placed::Began(turn))
    }

    /// The lines that joined the running turn since it last looked, in the order they were
    /// sent (the student's before a plugin's: a plugin's message waits in its gate until the
    /// turn ends).
    pub(crate) fn take_joined(&self, id: &str) -> Vec<Line> {
        self.state()
            .running
            .get_mut(id)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Whether lines wait for the running turn.
    pub(crate) fn has_joined(&self, id: &str) -> bool {
        self.state().running.get(id).is_some_and(|l| !l.is_empty())
    }

    /// The agent's turn in `id` ended. Lines that joined too late for it to read begin the next
    /// turn (the conversation stays running); without them the conversation is free. Should
    /// the next turn fail to begin, the conversation is freed and the lines come back with the
    /// error, so their senders hear of it.
    pub(crate) fn end_turn(&self, id: &str) -> Option<Follow> {
        let mut state = self.state();
        let lines = state.running.remove(id).filter(|l| !l.is_empty())?;
        let turn = self.change(&mut state, id, |c| c.begin_turn(true), |_| Ok(()));
        if turn.is_ok() {
            state.running.insert(id.to_owned(), Vec::new());
        }
        Some(Follow { turn, lines })
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

    /// Frees a conversation whose agent's turn stopped without ending; the lines that waited
    /// for it come back unread.
    pub(crate) fn abandon(&self, id: &str) -> Vec<Line> {
        self.state().running.remove(id).unwrap_or_default()
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

/// Whether every entry of `scope` is one the gates read as written: a scope entry that matches
/// nothing as written would narrow to nothing unnoticed.
fn check_scope(scope: &Scope) -> Result<(), EngineError> {
    for (i, host) in scope.hosts.iter().enumerate() {
        crate::gates::check_scope_host(host)
            .map_err(|why| EngineError::Invalid(format!("scope.hosts[{i}]: {why}")))?;
    }
    for (i, root) in scope.roots.iter().enumerate() {
        if !root.is_absolute() {
            return Err(EngineError::Invalid(format!(
                "scope.roots[{i}]: \"{}\" is not an absolute path; give the folder's full path",
                root.display()
            )));
        }
    }
    Ok(())
}
