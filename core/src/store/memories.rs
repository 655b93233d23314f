//! The `memories` table. A memory's state is stored by name and read back as a
//! [`MemoryState`]; a row whose state does not parse is [`StoreError::Corrupt`] naming it.

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use super::StoreError;
use super::plugins::{corrupt, unknown};

/// A memory's state: the agent's memory in a tainted turn waits for the user (seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryState {
    Active,
    Pending,
    Rejected,
}

impl MemoryState {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryState::Active => "active",
            MemoryState::Pending => "pending",
            MemoryState::Rejected => "rejected",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [
            MemoryState::Active,
            MemoryState::Pending,
            MemoryState::Rejected,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

impl std::fmt::Display for MemoryState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToSql for MemoryState {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for MemoryState {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        MemoryState::parse(text).ok_or_else(|| unknown("state", text))
    }
}

/// A memory as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryRow {
    pub id: i64,
    pub text: String,
    pub state: MemoryState,
    pub conversation: Option<String>,
    pub turn: Option<i64>,
    pub created_at: i64,
    pub decided_at: Option<i64>,
}

pub fn insert_memory(
    tx: &Transaction<'_>,
    text: &str,
    state: MemoryState,
    conversation: Option<&str>,
    turn: Option<i64>,
    at_ms: i64,
) -> Result<i64, StoreError> {
    tx.execute(
        "INSERT INTO memories (text, state, conversation, turn, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![text, state, conversation, turn, at_ms],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Moves a memory from `from` to `to`; returns whether it was in `from`.
pub fn decide_memory(
    tx: &Transaction<'_>,
    id: i64,
    from: MemoryState,
    to: MemoryState,
    at_ms: i64,
) -> Result<bool, StoreError> {
    let changed = tx.execute(
        "UPDATE memories SET state = ?3, decided_at = ?4 WHERE id = ?1 AND state = ?2",
        params![id, from, to, at_ms],
    )?;
    Ok(changed == 1)
}

pub fn memory(conn: &Connection, id: i64) -> Result<Option<MemoryRow>, StoreError> {
    let row = conn
        .query_row(
            "SELECT id, text, state, conversation, turn, created_at, decided_at FROM memories WHERE id = ?1",
            [id],
            memory_row,
        )
        .optional()?;
    row.transpose()
}

pub fn memories(conn: &Connection) -> Result<Vec<MemoryRow>, StoreError> {
    let mut stmt = conn.prepare("SELECT id, text, state, conversation, turn, created_at, decided_at FROM memories ORDER BY id")?;
    let rows = stmt.query_map([], memory_row)?;
    rows.map(|row| row?).collect()
}

/// One memory; the outer error is SQLite's, the inner one a state that does not parse.
fn memory_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<MemoryRow, StoreError>> {
    let id: i64 = r.get(0)?;
    let state: MemoryState = match r.get(2).map_err(corrupt(format!("memories row {id}"))) {
        Ok(state) => state,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(MemoryRow {
        id,
        text: r.get(1)?,
        state,
        conversation: r.get(3)?,
        turn: r.get(4)?,
        created_at: r.get(5)?,
        decided_at: r.get(6)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn a_memory_row_with_an_unknown_state_is_corrupt_and_names_the_row() {
        let store = Store::open_in_memory().unwrap();
        store
            .write(|tx| {
                tx.execute_batch(
                    "PRAGMA ignore_check_constraints = ON;
                     INSERT INTO memories (id, text, state, created_at) VALUES (7, 'x', 'forgotten', 0);",
                )?;
                Ok(())
            })
            .unwrap();
        let err = store.read(memories).unwrap_err();
        assert_eq!(
            err.to_string(),
            "stored data is not valid: memories row 7: unknown state \"forgotten\""
        );
        assert_eq!(
            store.read(|c| memory(c, 7)).unwrap_err().to_string(),
            err.to_string()
        );
    }
}
