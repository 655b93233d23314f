//! The `allowances` table: each "Always allow" the student gave, with its scope and its end
//! (DESIGN.md §3: this conversation, today, or always), until it ends by itself or is revoked.

use rusqlite::{Connection, Transaction, params};

use super::StoreError;

/// One allowance as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowanceRow {
    pub id: i64,
    pub plugin: String,
    /// `read`, `write`, `money` or `public`.
    pub effect: String,
    /// `conversation`, `today` or `always`.
    pub scope: String,
    /// The conversation a `conversation` allowance holds in.
    pub conversation: Option<String>,
    /// The tool whose prompt it was given on, for the screen.
    pub tool: String,
    pub since_ms: i64,
    /// When it ends by itself; none for `conversation` and `always`.
    pub until_ms: Option<i64>,
    /// The mode an `always` allowance replaced, put back when it is revoked.
    pub mode_before: Option<String>,
}

pub fn insert_allowance(tx: &Transaction<'_>, row: &AllowanceRow) -> Result<i64, StoreError> {
    tx.prepare_cached(
        "INSERT INTO allowances (plugin, effect, scope, conversation, tool, since_ms, until_ms, mode_before)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        row.plugin,
        row.effect,
        row.scope,
        row.conversation,
        row.tool,
        row.since_ms,
        row.until_ms,
        row.mode_before
    ])?;
    Ok(tx.last_insert_rowid())
}

/// Every allowance not ended at `now_ms`, oldest first.
pub fn allowances_in_force(
    conn: &Connection,
    now_ms: i64,
) -> Result<Vec<AllowanceRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, plugin, effect, scope, conversation, tool, since_ms, until_ms, mode_before
         FROM allowances WHERE until_ms IS NULL OR until_ms > ?1 ORDER BY id",
    )?;
    let rows = stmt
        .query_map([now_ms], |r| {
            Ok(AllowanceRow {
                id: r.get(0)?,
                plugin: r.get(1)?,
                effect: r.get(2)?,
                scope: r.get(3)?,
                conversation: r.get(4)?,
                tool: r.get(5)?,
                since_ms: r.get(6)?,
                until_ms: r.get(7)?,
                mode_before: r.get(8)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Deletes allowance `id`; the row it was, if there was one.
pub fn delete_allowance(tx: &Transaction<'_>, id: i64) -> Result<Option<AllowanceRow>, StoreError> {
    let row = allowances_in_force(tx, i64::MIN)?
        .into_iter()
        .find(|r| r.id == id);
    tx.execute("DELETE FROM allowances WHERE id = ?1", [id])?;
    Ok(row)
}

/// Deletes what has ended by `now_ms`, so the table holds only what is in force.
pub fn prune_allowances(tx: &Transaction<'_>, now_ms: i64) -> Result<usize, StoreError> {
    Ok(tx.execute(
        "DELETE FROM allowances WHERE until_ms IS NOT NULL AND until_ms <= ?1",
        [now_ms],
    )?)
}
