//! The `turns` and `messages` tables: the agent's history of each conversation, one row per
//! message as it completed, and each turn's state. A turn still `running` when the data
//! directory opens was interrupted by a killed process.

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use super::StoreError;

/// A tool call as the model wrote it, stored with the assistant message that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of a conversation's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageRow {
    pub id: i64,
    pub conversation: String,
    pub turn: u64,
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// The user's words, the model's text, or a tool's whole result (the UI's copy).
    pub content: Option<String>,
    pub tool_calls: Vec<StoredCall>,
    pub tool_call_id: Option<String>,
    /// The tool id (`plugin.tool`) a tool result answers, when the name resolved to one.
    pub tool: Option<String>,
    /// What the model is given of a tool result: cut to `invoke::MODEL_RESULT_CHARS`.
    pub for_model: Option<String>,
    pub created_at: i64,
    /// The model's thinking (`reasoning_content`) before an assistant message: shown in the
    /// history, never sent back to the model.
    pub thinking: Option<String>,
}

/// A message to append; the id is given by the database.
#[derive(Debug, Clone, Default)]
pub struct NewMessage<'a> {
    pub conversation: &'a str,
    pub turn: u64,
    pub role: &'a str,
    pub content: Option<&'a str>,
    pub tool_calls: &'a [StoredCall],
    pub tool_call_id: Option<&'a str>,
    pub tool: Option<&'a str>,
    pub for_model: Option<&'a str>,
    pub created_at: i64,
    pub thinking: Option<&'a str>,
}

pub fn insert_message(tx: &Transaction<'_>, m: &NewMessage<'_>) -> Result<i64, StoreError> {
    let calls = if m.tool_calls.is_empty() {
        None
    } else {
        Some(super::to_json(&m.tool_calls)?)
    };
    tx.execute(
        "INSERT INTO messages (conversation, turn, role, content, tool_calls, tool_call_id, \
         tool, for_model, created_at, thinking) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            m.conversation,
            m.turn as i64,
            m.role,
            m.content,
            calls,
            m.tool_call_id,
            m.tool,
            m.for_model,
            m.created_at,
            m.thinking
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// The newest `limit` messages of `conversation` with an id below `before` (all, without
/// one), oldest first.
pub fn messages(
    conn: &Connection,
    conversation: &str,
    before: Option<i64>,
    limit: usize,
) -> Result<Vec<MessageRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, conversation, turn, role, content, tool_calls, tool_call_id, tool, \
         for_model, created_at, thinking FROM messages WHERE conversation = ?1 AND id < ?2 \
         ORDER BY id DESC LIMIT ?3",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(
        params![conversation, before.unwrap_or(i64::MAX), limit],
        message_row,
    )?;
    let mut out = parse_calls(rows)?;
    out.reverse();
    Ok(out)
}

/// The messages of `conversation` with an id above `after`, oldest first: what a running turn
/// reads to bring the history it holds up to date.
pub fn messages_after(
    conn: &Connection,
    conversation: &str,
    after: i64,
) -> Result<Vec<MessageRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, conversation, turn, role, content, tool_calls, tool_call_id, tool, \
         for_model, created_at, thinking FROM messages WHERE conversation = ?1 AND id > ?2 \
         ORDER BY id",
    )?;
    let rows = stmt.query_map(params![conversation, after], message_row)?;
    parse_calls(rows)
}

/// Whether the row `id` of `conversation` is still there (a deleted conversation's are not).
pub fn holds(conn: &Connection, conversation: &str, id: i64) -> Result<bool, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT 1 FROM messages WHERE id = ?1 AND conversation = ?2")?;
    Ok(stmt.exists(params![id, conversation])?)
}

/// A row, with its tool calls still as the stored JSON.
fn message_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(MessageRow, Option<String>)> {
    Ok((
        MessageRow {
            id: r.get(0)?,
            conversation: r.get(1)?,
            turn: r.get::<_, i64>(2)? as u64,
            role: r.get(3)?,
            content: r.get(4)?,
            tool_calls: Vec::new(),
            tool_call_id: r.get(6)?,
            tool: r.get(7)?,
            for_model: r.get(8)?,
            created_at: r.get(9)?,
            thinking: r.get(10)?,
        },
        r.get::<_, Option<String>>(5)?,
    ))
}

fn parse_calls(
    rows: impl Iterator<Item = rusqlite::Result<(MessageRow, Option<String>)>>,
) -> Result<Vec<MessageRow>, StoreError> {
    let mut out = Vec::new();
    for row in rows {
        let (mut row, calls) = row?;
        if let Some(calls) = calls {
            row.tool_calls = serde_json::from_str(&calls).map_err(|e| {
                StoreError::Corrupt(format!("messages row {}: tool_calls: {e}", row.id))
            })?;
        }
        out.push(row);
    }
    Ok(out)
}

/// A turn's state as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnRow {
    pub conversation: String,
    pub turn: u64,
    pub state: String,
    pub reason: Option<String>,
}

pub fn start_turn(
    tx: &Transaction<'_>,
    conversation: &str,
    turn: u64,
    now: i64,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT OR REPLACE INTO turns (conversation, turn, state, started_at) \
         VALUES (?1, ?2, 'running', ?3)",
        params![conversation, turn as i64, now],
    )?;
    Ok(())
}

pub fn end_turn(
    tx: &Transaction<'_>,
    conversation: &str,
    turn: u64,
    state: &str,
    reason: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE turns SET state = ?3, reason = ?4, ended_at = ?5 \
         WHERE conversation = ?1 AND turn = ?2",
        params![conversation, turn as i64, state, reason, now],
    )?;
    Ok(())
}

/// Marks every turn still `running` as `interrupted`: at open, no turn is running.
pub fn interrupt_running(tx: &Transaction<'_>, now: i64) -> Result<usize, StoreError> {
    Ok(tx.execute(
        "UPDATE turns SET state = 'interrupted', \
         reason = 'the app stopped during this turn; the calls that had run are kept, nothing was run again', \
         ended_at = ?1 WHERE state = 'running'",
        params![now],
    )?)
}

pub fn turn(
    conn: &Connection,
    conversation: &str,
    turn: u64,
) -> Result<Option<TurnRow>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT conversation, turn, state, reason FROM turns \
             WHERE conversation = ?1 AND turn = ?2",
            params![conversation, turn as i64],
            |r| {
                Ok(TurnRow {
                    conversation: r.get(0)?,
                    turn: r.get::<_, i64>(1)? as u64,
                    state: r.get(2)?,
                    reason: r.get(3)?,
                })
            },
        )
        .optional()?)
}
