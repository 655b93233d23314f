//! The `audit` table: appended on every step of every call, pruned to the newest
//! [`AUDIT_RETENTION_ROWS`] rows.

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{AUDIT_RETENTION_ROWS, StoreError};

/// One audit row. `seq` is assigned by the database. (Kotlin and Swift name it `AuditEntry`:
/// uniffi.toml.)
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
#[serde(rename_all = "camelCase")]
pub struct AuditRow {
    /// Increasing, in the order written.
    pub seq: i64,
    pub at_ms: i64,
    /// `user`, `agent` or `scheduler`.
    pub actor: String,
    pub conversation: Option<String>,
    pub tool: String,
    pub effect: Option<String>,
    /// `decided`, `answered`, `ran`, `failed` or `stopped`.
    pub event: String,
    /// The verdict (`run`, `ask:ordinary`, `refuse:blocked`), the answer, the failure or the code.
    pub detail: Option<String>,
    /// The deciding step of the decision (`8i`).
    pub step: Option<String>,
    /// The deciding rule (`global[0]`).
    pub rule: Option<String>,
    /// A digest of the call's inputs (never the inputs).
    pub input_digest: Option<String>,
}

pub fn append_audit(tx: &Transaction<'_>, row: &AuditRow) -> Result<i64, StoreError> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO audit (at_ms, actor, conversation, tool, effect, event, detail, step, rule, input_digest)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    stmt.execute(params![
        row.at_ms,
        row.actor,
        row.conversation,
        row.tool,
        row.effect,
        row.event,
        row.detail,
        row.step,
        row.rule,
        row.input_digest
    ])?;
    Ok(tx.last_insert_rowid())
}

/// Drops all but the newest [`AUDIT_RETENTION_ROWS`] rows.
pub fn prune_audit(tx: &Transaction<'_>) -> Result<usize, StoreError> {
    Ok(tx.execute(
        "DELETE FROM audit WHERE seq <= (SELECT max(seq) FROM audit) - ?1",
        [AUDIT_RETENTION_ROWS],
    )?)
}

/// The newest `limit` rows, oldest first.
pub fn audit(conn: &Connection, limit: usize) -> Result<Vec<AuditRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT seq, at_ms, actor, conversation, tool, effect, event, detail, step, rule, input_digest
         FROM (SELECT * FROM audit ORDER BY seq DESC LIMIT ?1) ORDER BY seq",
    )?;
    let rows = stmt.query_map([limit as i64], |r| {
        Ok(AuditRow {
            seq: r.get(0)?,
            at_ms: r.get(1)?,
            actor: r.get(2)?,
            conversation: r.get(3)?,
            tool: r.get(4)?,
            effect: r.get(5)?,
            event: r.get(6)?,
            detail: r.get(7)?,
            step: r.get(8)?,
            rule: r.get(9)?,
            input_digest: r.get(10)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
