//! The `source_cache` table: the last value of each data source, with when it was fetched.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::StoreError;

pub fn put_cached(
    tx: &Transaction<'_>,
    plugin: &str,
    key: &str,
    value: &str,
    at_ms: i64,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO source_cache (plugin, key, value, fetched_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (plugin, key) DO UPDATE SET value = ?3, fetched_at = ?4",
        params![plugin, key, value, at_ms],
    )?;
    Ok(())
}

/// The cached value's text and when it was fetched.
pub fn cached(
    conn: &Connection,
    plugin: &str,
    key: &str,
) -> Result<Option<(String, i64)>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT value, fetched_at FROM source_cache WHERE plugin = ?1 AND key = ?2",
            [plugin, key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}
