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

/// A title written from a conversation's first message is cut to this many characters (here:
/// the schema's upgrade names existing conversations by it too).
pub const TITLE_CHARS: usize = 24;

/// Names a conversation; `None` leaves it to be named from its first message.
pub fn set_title(tx: &Transaction<'_>, id: &str, title: Option<&str>) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE conversations SET title = ?2 WHERE id = ?1",
        params![id, title],
    )?;
    Ok(())
}

/// A conversation as the list shows it: its title, when it was made, and its newest message
/// (when it was written and, of the student's or the agent's words, the newest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedRow {
    pub id: String,
    pub title: Option<String>,
    pub created_at: i64,
    pub last_message_at: Option<i64>,
    pub preview: Option<String>,
}

/// Every conversation with what the list shows of it, in no particular order. Each reads its
/// newest messages through `messages_by_conversation`, so the list costs one indexed step per
/// conversation however long its history.
pub fn listed(conn: &Connection) -> Result<Vec<ListedRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT c.id, c.title, c.created_at,
            (SELECT m.created_at FROM messages m WHERE m.conversation = c.id
             ORDER BY m.id DESC LIMIT 1),
            (SELECT m.content FROM messages m WHERE m.conversation = c.id
             AND m.role IN ('user', 'assistant') AND coalesce(m.content, '') != ''
             ORDER BY m.id DESC LIMIT 1)
         FROM conversations c",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(ListedRow {
            id: r.get(0)?,
            title: r.get(1)?,
            created_at: r.get(2)?,
            last_message_at: r.get(3)?,
            preview: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The tables that hold a conversation's own rows, each with the column naming it. A deleted
/// conversation takes all of them with it; the audit keeps its record (DESIGN.md §13).
const OWNED: [(&str, &str); 5] = [
    ("conversations", "id"),
    ("rules", "scope"),
    ("documents", "conversation"),
    ("turns", "conversation"),
    ("messages", "conversation"),
];

/// What deleting a conversation took out of the database, exactly as it was, so that an undo
/// puts it back: each owned table's rows, and the pending memories it was the source of.
#[derive(Clone, Debug, Default)]
pub struct Taken {
    tables: Vec<TakenTable>,
    /// (memory id, turn) of each pending memory whose link to the conversation was cleared.
    memories: Vec<(i64, Option<i64>)>,
}

#[derive(Clone, Debug)]
struct TakenTable {
    table: &'static str,
    columns: Vec<String>,
    rows: Vec<Vec<rusqlite::types::Value>>,
}

/// Deletes a conversation — its row, rules, documents, turns and messages — and clears its
/// link from the pending memories it wrote, in the caller's transaction. Returns what it took.
pub fn take_conversation(tx: &Transaction<'_>, id: &str) -> Result<Taken, StoreError> {
    let mut taken = Taken::default();
    for (table, key) in OWNED {
        let mut stmt = tx.prepare(&format!("SELECT * FROM {table} WHERE {key} = ?1"))?;
        let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
        let width = columns.len();
        let rows = stmt.query_map([id], |r| {
            (0..width)
                .map(|i| r.get::<_, rusqlite::types::Value>(i))
                .collect::<Result<Vec<_>, _>>()
        })?;
        let rows = rows.collect::<Result<Vec<_>, _>>()?;
        tx.execute(&format!("DELETE FROM {table} WHERE {key} = ?1"), [id])?;
        taken.tables.push(TakenTable {
            table,
            columns,
            rows,
        });
    }
    let mut stmt = tx.prepare(
        "SELECT id, turn FROM memories WHERE conversation = ?1 AND state = 'pending' ORDER BY id",
    )?;
    taken.memories = stmt
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    tx.execute(
        "UPDATE memories SET conversation = NULL, turn = NULL
         WHERE conversation = ?1 AND state = 'pending'",
        [id],
    )?;
    Ok(taken)
}

/// Puts back what [`take_conversation`] took, rows as they were (their ids too); a memory is
/// linked again only while nothing else claimed it.
pub fn restore_conversation(
    tx: &Transaction<'_>,
    id: &str,
    taken: &Taken,
) -> Result<(), StoreError> {
    for t in &taken.tables {
        let marks = vec!["?"; t.columns.len()].join(", ");
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({marks})",
            t.table,
            t.columns.join(", ")
        );
        let mut stmt = tx.prepare(&sql)?;
        for row in &t.rows {
            stmt.execute(rusqlite::params_from_iter(row))?;
        }
    }
    for (memory, turn) in &taken.memories {
        tx.execute(
            "UPDATE memories SET conversation = ?2, turn = ?3
             WHERE id = ?1 AND conversation IS NULL",
            params![memory, id, turn],
        )?;
    }
    Ok(())
}
