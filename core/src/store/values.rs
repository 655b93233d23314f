//! The key-value tables: `settings` (one row per settings key), `consent` and `preferences`.

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{StoreError, from_json, to_json};

/// The key-value tables: `settings`, `consent`, `preferences`.
#[derive(Clone, Copy, Debug)]
pub enum Table {
    Settings,
    Consent,
    Preferences,
}

impl Table {
    fn sql(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Table::Settings => (
                "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2",
                "SELECT key, value FROM settings ORDER BY key",
                "DELETE FROM settings WHERE key = ?1",
            ),
            Table::Consent => (
                "INSERT INTO consent (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2",
                "SELECT key, value FROM consent ORDER BY key",
                "DELETE FROM consent WHERE key = ?1",
            ),
            Table::Preferences => (
                "INSERT INTO preferences (plugin, value) VALUES (?1, ?2) ON CONFLICT (plugin) DO UPDATE SET value = ?2",
                "SELECT plugin, value FROM preferences ORDER BY plugin",
                "DELETE FROM preferences WHERE plugin = ?1",
            ),
        }
    }
}

pub fn put_value<T: Serialize>(
    tx: &Transaction<'_>,
    table: Table,
    key: &str,
    value: &T,
) -> Result<(), StoreError> {
    tx.execute(table.sql().0, params![key, to_json(value)?])?;
    Ok(())
}

pub fn delete_value(tx: &Transaction<'_>, table: Table, key: &str) -> Result<(), StoreError> {
    tx.execute(table.sql().2, [key])?;
    Ok(())
}

pub fn values(
    conn: &Connection,
    table: Table,
) -> Result<Vec<(String, serde_json::Value)>, StoreError> {
    let mut stmt = conn.prepare(table.sql().1)?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let key: String = row.get(0)?;
        let value = from_json(&key, &row.get::<_, String>(1)?)?;
        out.push((key, value));
    }
    Ok(out)
}
