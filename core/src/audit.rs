//! The audit log: every decision, answer and outcome, with its reason code. Kept in memory
//! here; the store makes it last.

use serde::Serialize;

use crate::policy::{Actor, Answer, Decision};
use crate::registry::Effect;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AuditEvent {
    Decided { decision: Decision },
    Answered { answer: Answer },
    Ran,
    Failed { message: String },
    /// The call was stopped after the decision: declined at the prompt, or a refusal found
    /// outside the decision (an answer the prompt did not offer).
    Stopped { code: String },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditEntry {
    pub seq: u64,
    pub actor: Actor,
    pub conversation: Option<String>,
    pub tool: String,
    pub effect: Option<Effect>,
    #[serde(flatten)]
    pub event: AuditEvent,
}

#[derive(Debug, Default)]
pub struct AuditLog {
    entries: Vec<AuditEntry>,
}

impl AuditLog {
    pub fn append(&mut self, mut entry: AuditEntry) {
        entry.seq = self.entries.len() as u64 + 1;
        self.entries.push(entry);
    }

    pub fn entries(&self) -> &[AuditEntry] {
        &self.entries
    }
}
