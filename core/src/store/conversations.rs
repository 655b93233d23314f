//! The `conversations`, `rules` and `documents` tables: each conversation's settings, scope,
//! turn count and taint, the global and per-conversation rules, and attached documents.

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{StoreError, from_json, to_json};

/// Replaces the rules of one scope: `""` is global, otherwise a conversation id.
pub fn put_rules<T: Serialize>(
    tx: &Transaction<'_>,
    scope: &str,
    rules: &[T],
) -> Result<(), StoreError> {
    tx.execute("DELETE FROM rules WHERE scope = ?1", [scope])?;
    let mut stmt = tx.prepare("INSERT INTO rules (scope, position, rule) VALUES (?1, ?2, ?3)")?;
    for (position, rule) in rules.iter().enumerate() {
        stmt.execute(params![scope, position as i64, to_json(rule)?])?;
    }
    Ok(())
}

/// Every scope's rules, in order.
pub fn rules<T: DeserializeOwned>(conn: &Connection) -> Result<Vec<(String, Vec<T>)>, StoreError> {
    let mut stmt = conn.prepare("SELECT scope, rule FROM rules ORDER BY scope, position")?;
    let mut out: Vec<(String, Vec<T>)> = Vec::new();
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let scope: String = row.get(0)?;
        let rule: T = from_json("rules.rule", &row.get::<_, String>(1)?)?;
        match out.last_mut() {
            Some((s, list)) if *s == scope => list.push(rule),
            _ => out.push((scope, vec![rule])),
        }
    }
    Ok(out)
}

/// One conversation's row: its settings, scope, turn count and whether the current turn
/// is tainted.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversationRow<S, C> {
    pub id: String,
    pub settings: S,
    pub scope: C,
    pub turns: u64,
    pub tainted: bool,
}

pub fn put_conversation<S: Serialize, C: Serialize>(
    tx: &Transaction<'_>,
    row: &ConversationRow<&S, &C>,
    at_ms: i64,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO conversations (id, settings, scope, turns, tainted, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (id) DO UPDATE SET settings = ?2, scope = ?3, turns = ?4, tainted = ?5",
        params![
            row.id,
            to_json(row.settings)?,
            to_json(row.scope)?,
            row.turns as i64,
            row.tainted,
            at_ms
        ],
    )?;
    Ok(())
}

pub fn conversations<S: DeserializeOwned, C: DeserializeOwned>(
    conn: &Connection,
) -> Result<Vec<ConversationRow<S, C>>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, settings, scope, turns, tainted FROM conversations ORDER BY created_at, id",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(ConversationRow {
            id: row.get(0)?,
            settings: from_json("conversations.settings", &row.get::<_, String>(1)?)?,
            scope: from_json("conversations.scope", &row.get::<_, String>(2)?)?,
            turns: row.get::<_, i64>(3)? as u64,
            tainted: row.get(4)?,
        });
    }
    Ok(out)
}

pub fn insert_document(
    tx: &Transaction<'_>,
    conversation: &str,
    name: &str,
    text: &str,
    at_ms: i64,
) -> Result<i64, StoreError> {
    tx.execute(
        "INSERT INTO documents (conversation, name, text, attached_at) VALUES (?1, ?2, ?3, ?4)",
        params![conversation, name, text, at_ms],
    )?;
    Ok(tx.last_insert_rowid())
}

/// A conversation's attached documents as (id, name, text).
pub fn documents(
    conn: &Connection,
    conversation: &str,
) -> Result<Vec<(i64, String, String)>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT id, name, text FROM documents WHERE conversation = ?1 ORDER BY id")?;
    let rows = stmt.query_map([conversation], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
