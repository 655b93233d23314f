//! The owner of the agent's history: each conversation's messages and each turn's state, in
//! SQLite (`store::history`). Every message is written as it completes, before the loop goes
//! on, so a process killed mid-turn leaves the calls that ran in the history and re-runs
//! nothing: at open, a turn still running is marked interrupted.

use std::sync::Arc;

use crate::clock::Clock;
use crate::error::EngineError;
use crate::store::Store;
use crate::store::history::{self as rows, MessageRow, NewMessage, StoredCall, TurnRow};
use crate::store::usage::{self, UsageRow};

/// How a turn ended, as stored and as the shell is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnState {
    Done,
    Cancelled,
    Interrupted,
    /// The model could not be reached or a guard stopped the turn.
    Failed,
}

impl TurnState {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnState::Done => "done",
            TurnState::Cancelled => "cancelled",
            TurnState::Interrupted => "interrupted",
            TurnState::Failed => "failed",
        }
    }
}

pub struct History {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
}

impl History {
    /// The history over `store`; a turn left running by a killed process becomes interrupted.
    pub(crate) fn load(store: Arc<Store>, clock: Arc<dyn Clock>) -> Result<Self, EngineError> {
        let now = clock.now_ms();
        store.write(|tx| rows::interrupt_running(tx, now))?;
        Ok(Self { store, clock })
    }

    pub(crate) fn open_turn(&self, conversation: &str, turn: u64) -> Result<(), EngineError> {
        let now = self.clock.now_ms();
        Ok(self
            .store
            .write(|tx| rows::start_turn(tx, conversation, turn, now))?)
    }

    pub(crate) fn close_turn(
        &self,
        conversation: &str,
        turn: u64,
        state: TurnState,
        reason: Option<&str>,
    ) -> Result<(), EngineError> {
        let now = self.clock.now_ms();
        Ok(self
            .store
            .write(|tx| rows::end_turn(tx, conversation, turn, state.as_str(), reason, now))?)
    }

    pub(crate) fn user(
        &self,
        conversation: &str,
        turn: u64,
        text: &str,
    ) -> Result<i64, EngineError> {
        self.append(NewMessage {
            conversation,
            turn,
            role: "user",
            content: Some(text),
            ..NewMessage::default()
        })
    }

    /// What the model said: its text, its thinking (kept for the history screen only) and
    /// its tool calls.
    pub(crate) fn assistant(
        &self,
        conversation: &str,
        turn: u64,
        text: Option<&str>,
        thinking: Option<&str>,
        calls: &[StoredCall],
    ) -> Result<i64, EngineError> {
        self.append(NewMessage {
            conversation,
            turn,
            role: "assistant",
            content: text,
            tool_calls: calls,
            thinking,
            ..NewMessage::default()
        })
    }

    /// A tool's result: `whole` is the UI's copy, `for_model` what the model is given.
    pub(crate) fn tool_result(
        &self,
        conversation: &str,
        turn: u64,
        call_id: &str,
        tool: Option<&str>,
        whole: &str,
        for_model: &str,
    ) -> Result<i64, EngineError> {
        self.append(NewMessage {
            conversation,
            turn,
            role: "tool",
            content: Some(whole),
            tool_call_id: Some(call_id),
            tool,
            for_model: Some(for_model),
            ..NewMessage::default()
        })
    }

    fn append(&self, mut message: NewMessage<'_>) -> Result<i64, EngineError> {
        message.created_at = self.clock.now_ms();
        Ok(self.store.write(|tx| rows::insert_message(tx, &message))?)
    }

    /// Writes the messages of a conversation brought back by the app's backup, as they were
    /// kept (their turns and times), in one transaction; the database gives them new ids.
    pub(crate) fn restore(
        &self,
        conversation: &str,
        messages: &[MessageRow],
    ) -> Result<(), EngineError> {
        Ok(self.store.write(|tx| {
            for m in messages {
                rows::insert_message(
                    tx,
                    &NewMessage {
                        conversation,
                        turn: m.turn,
                        role: &m.role,
                        content: m.content.as_deref(),
                        tool_calls: &m.tool_calls,
                        tool_call_id: m.tool_call_id.as_deref(),
                        tool: m.tool.as_deref(),
                        for_model: m.for_model.as_deref(),
                        created_at: m.created_at,
                        thinking: m.thinking.as_deref(),
                    },
                )?;
            }
            Ok(())
        })?)
    }

    /// The newest `limit` messages before the message `before` (the newest, without one),
    /// oldest first: the history screen pages back with the first id it holds.
    pub fn page(
        &self,
        conversation: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<MessageRow>, EngineError> {
        Ok(self
            .store
            .read(|c| rows::messages(c, conversation, before, limit))?)
    }

    /// The whole history of a conversation, oldest first.
    pub fn all(&self, conversation: &str) -> Result<Vec<MessageRow>, EngineError> {
        self.page(conversation, None, usize::MAX)
    }

    /// The messages of a conversation newer than the message `after`, oldest first.
    pub fn after(&self, conversation: &str, after: i64) -> Result<Vec<MessageRow>, EngineError> {
        Ok(self
            .store
            .read(|c| rows::messages_after(c, conversation, after))?)
    }

    /// Whether the row `id` of `conversation` is still kept: rows are only appended, so a
    /// copy of a history read earlier stays true while its first row is.
    pub(crate) fn holds(&self, conversation: &str, id: i64) -> Result<bool, EngineError> {
        Ok(self.store.read(|c| rows::holds(c, conversation, id))?)
    }

    /// Keeps what a turn used (`at_ms` is now).
    pub(crate) fn record_usage(&self, mut row: UsageRow) -> Result<(), EngineError> {
        row.at_ms = self.clock.now_ms();
        Ok(self.store.write(|tx| usage::record(tx, &row))?)
    }

    /// The turns' usage from `from_ms` to `to_ms`, of one conversation or all.
    pub fn usage_between(
        &self,
        from_ms: i64,
        to_ms: i64,
        conversation: Option<&str>,
    ) -> Result<Vec<UsageRow>, EngineError> {
        Ok(self
            .store
            .read(|c| usage::between(c, from_ms, to_ms, conversation))?)
    }

    pub fn turn(&self, conversation: &str, turn: u64) -> Result<Option<TurnRow>, EngineError> {
        Ok(self.store.read(|c| rows::turn(c, conversation, turn))?)
    }
}
