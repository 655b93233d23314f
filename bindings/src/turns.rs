//! The agent's turns as the chat screen reads them: how a turn ended, and the history.

use harness_core::agent::turn::TurnSummary;
use harness_core::store::history::MessageRow;

/// How a turn of the agent ended. Its steps streamed to the event listener while it ran.
// Not the core's `TurnSummary`: its state crosses as its string, its usage flattened.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct TurnResult {
    /// The id `cancel_turn` takes.
    pub turn: String,
    /// `done`, `cancelled`, `interrupted` or `failed`.
    pub state: String,
    /// The model's final answer.
    pub answer: String,
    /// Why the turn ended other than with an answer.
    pub message: Option<String>,
    pub model_requests: u32,
    pub total_tokens: u64,
}

impl From<TurnSummary> for TurnResult {
    fn from(s: TurnSummary) -> Self {
        TurnResult {
            turn: s.turn,
            state: s.state.as_str().to_owned(),
            answer: s.answer,
            message: s.message,
            model_requests: s.usage.model_requests,
            total_tokens: s.usage.total_tokens,
        }
    }
}

/// One message of a conversation's history.
// Not the core's `MessageRow`: the calls cross as their names, without the model's copy.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct HistoryMessage {
    pub id: i64,
    pub turn: u64,
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// The user's words, the model's text, or a tool's whole result (the UI's copy).
    pub content: Option<String>,
    /// The tools an assistant message called, by name as the model wrote it.
    pub tool_calls: Vec<String>,
    /// The tool id a tool result answers.
    pub tool: Option<String>,
    pub created_at_ms: i64,
}

impl From<MessageRow> for HistoryMessage {
    fn from(m: MessageRow) -> Self {
        HistoryMessage {
            id: m.id,
            turn: m.turn,
            role: m.role,
            content: m.content,
            tool_calls: m.tool_calls.into_iter().map(|c| c.name).collect(),
            tool: m.tool,
            created_at_ms: m.created_at,
        }
    }
}
