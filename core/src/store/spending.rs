//! The `spending` table: what each money call that declared its amount paid, when and to whom
//! (DESIGN.md §3 8e). The day's total and "a payee never paid before" are read from it.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::StoreError;

/// One payment that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    pub at_ms: i64,
    pub plugin: String,
    pub tool: String,
    /// `user`, `agent` or `scheduler`.
    pub actor: String,
    pub payee: Option<String>,
    pub amount_fen: u64,
}

pub fn record_payment(tx: &Transaction<'_>, payment: &Payment) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO spending (at_ms, plugin, tool, actor, payee, amount_fen)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        payment.at_ms,
        payment.plugin,
        payment.tool,
        payment.actor,
        payment.payee,
        i64::try_from(payment.amount_fen).unwrap_or(i64::MAX)
    ])?;
    Ok(())
}

/// The fen paid from `from_ms` (inclusive) to `to_ms` (exclusive).
pub fn spent_between(conn: &Connection, from_ms: i64, to_ms: i64) -> Result<u64, StoreError> {
    let total: i64 = conn
        .prepare_cached(
            "SELECT coalesce(sum(amount_fen), 0) FROM spending WHERE at_ms >= ?1 AND at_ms < ?2",
        )?
        .query_row(params![from_ms, to_ms], |r| r.get(0))?;
    Ok(u64::try_from(total).unwrap_or(0))
}

/// Whether `plugin` has paid `payee` before.
pub fn paid_before(conn: &Connection, plugin: &str, payee: &str) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM spending WHERE plugin = ?1 AND payee = ?2 LIMIT 1")?
        .query_row(params![plugin, payee], |_| Ok(()))
        .optional()?
        .is_some())
}
