//! The `model_usage` table: the tokens each turn used, by provider and model (DESIGN.md §13).
//! Rows outlive their conversation, so deleting a chat does not lower the month's spend.

use rusqlite::{Connection, Transaction, params};

use super::StoreError;

/// One turn's usage, as the provider reported it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UsageRow {
    pub at_ms: i64,
    pub conversation: String,
    pub turn: u64,
    /// The provider's id (`agent::providers`).
    pub provider: String,
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub fn record(tx: &Transaction<'_>, row: &UsageRow) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO model_usage (at_ms, conversation, turn, provider, model, prompt_tokens,
         completion_tokens, cached_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        row.at_ms,
        row.conversation,
        int(row.turn),
        row.provider,
        row.model,
        int(row.prompt_tokens),
        int(row.completion_tokens),
        int(row.cached_tokens)
    ])?;
    Ok(())
}

/// The rows from `from_ms` (inclusive) to `to_ms` (exclusive), oldest first; `conversation`
/// narrows them to one.
pub fn between(
    conn: &Connection,
    from_ms: i64,
    to_ms: i64,
    conversation: Option<&str>,
) -> Result<Vec<UsageRow>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT at_ms, conversation, turn, provider, model, prompt_tokens, completion_tokens,
         cached_tokens FROM model_usage
         WHERE at_ms >= ?1 AND at_ms < ?2 AND (?3 IS NULL OR conversation = ?3)
         ORDER BY id",
    )?;
    let rows = statement
        .query_map(params![from_ms, to_ms, conversation], |r| {
            let n = |i: usize| -> rusqlite::Result<u64> {
                Ok(u64::try_from(r.get::<_, i64>(i)?).unwrap_or(0))
            };
            Ok(UsageRow {
                at_ms: r.get(0)?,
                conversation: r.get(1)?,
                turn: n(2)?,
                provider: r.get(3)?,
                model: r.get(4)?,
                prompt_tokens: n(5)?,
                completion_tokens: n(6)?,
                cached_tokens: n(7)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}
