//! Memories and their states (seed 000: one written after untrusted content waits for the user).

use harness_core::store::rows::MemoryRow;

/// A memory and its state.
// Not the core's `MemoryRow`: its state crosses as its string, without the row's times.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct MemoryInfo {
    pub id: i64,
    pub text: String,
    /// `active`, `pending` (waits for the user) or `rejected`.
    pub state: String,
    pub conversation: Option<String>,
    pub turn: Option<i64>,
}

impl From<MemoryRow> for MemoryInfo {
    fn from(m: MemoryRow) -> Self {
        MemoryInfo {
            id: m.id,
            text: m.text,
            state: m.state.to_string(),
            conversation: m.conversation,
            turn: m.turn,
        }
    }
}
