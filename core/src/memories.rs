//! Memories (seed 000): what the agent is told it remembers. One the agent writes in a tainted
//! turn waits as pending until the user approves it. Memories live only in the store: every
//! read goes to the `memories` table, so there is no copy in memory to keep in step.

use std::sync::Arc;

use crate::clock::Clock;
use crate::error::EngineError;
use crate::events::{Event, EventSink};
use crate::store::Store;
use crate::store::memories::{self as rows, MemoryRow};

pub use crate::store::memories::MemoryState;

/// The owner of the memories.
pub struct Memories {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    events: Arc<dyn EventSink>,
}

impl Memories {
    pub(crate) fn new(
        store: Arc<Store>,
        clock: Arc<dyn Clock>,
        events: Arc<dyn EventSink>,
    ) -> Self {
        Self {
            store,
            clock,
            events,
        }
    }

    /// Saves a memory. One the agent writes in a tainted turn waits for the user's approval.
    pub fn write(
        &self,
        text: &str,
        conversation: Option<&str>,
        turn: Option<u64>,
        tainted: bool,
    ) -> Result<MemoryRow, EngineError> {
        let state = if tainted {
            MemoryState::Pending
        } else {
            MemoryState::Active
        };
        let now = self.clock.now_ms();
        let id = self.store.write(|tx| {
            rows::insert_memory(tx, text, state, conversation, turn.map(|t| t as i64), now)
        })?;
        if state == MemoryState::Pending {
            // The memory inbox shows it at once (seed 000: it waits for the user).
            self.events.emit(Event::MemoryPending {
                memory: id,
                conversation: conversation.map(str::to_owned),
            });
        }
        self.get(id)
    }

    pub fn get(&self, id: i64) -> Result<MemoryRow, EngineError> {
        self.store
            .read(|c| rows::memory(c, id))?
            .ok_or(EngineError::NoSuchMemory(id))
    }

    pub fn all(&self) -> Result<Vec<MemoryRow>, EngineError> {
        Ok(self.store.read(rows::memories)?)
    }

    /// The memories in effect: what the agent is told it remembers.
    pub fn in_effect(&self) -> Result<Vec<String>, EngineError> {
        Ok(self
            .all()?
            .into_iter()
            .filter(|m| m.state == MemoryState::Active)
            .map(|m| m.text)
            .collect())
    }

    /// The user approves (or rejects) a pending memory.
    pub fn decide(&self, id: i64, approve: bool) -> Result<MemoryRow, EngineError> {
        let to = if approve {
            MemoryState::Active
        } else {
            MemoryState::Rejected
        };
        let now = self.clock.now_ms();
        let moved = self
            .store
            .write(|tx| rows::decide_memory(tx, id, MemoryState::Pending, to, now))?;
        let memory = self.get(id)?;
        if !moved {
            return Err(EngineError::MemoryNotPending {
                id,
                state: memory.state,
            });
        }
        Ok(memory)
    }
}
