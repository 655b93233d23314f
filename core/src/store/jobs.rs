//! The `jobs` table: the scheduler's jobs, their state, counters and the claim of a run in
//! progress (module `scheduler::run` says how a claim is taken and resolved). The scheduler
//! turns its jobs into [`JobRow`]s and back; the spec, owner, last run and condition memory are
//! stored as JSON.

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::StoreError;
use super::plugins::{corrupt, unknown};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Active,
    Paused,
    /// A one-shot that has run.
    Done,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Active => "active",
            JobState::Paused => "paused",
            JobState::Done => "done",
        }
    }

    pub fn parse(s: &str) -> Option<JobState> {
        [JobState::Active, JobState::Paused, JobState::Done]
            .into_iter()
            .find(|j| j.as_str() == s)
    }
}

impl ToSql for JobState {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for JobState {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        JobState::parse(text).ok_or_else(|| unknown("state", text))
    }
}

/// One job as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    /// 0 for a job not written yet.
    pub id: i64,
    pub spec: String,
    pub owner: String,
    pub state: JobState,
    pub paused_reason: Option<String>,
    pub anchor_ms: i64,
    pub next_due_ms: Option<i64>,
    /// The due instant of a run in progress (the claim).
    pub claim_due_ms: Option<i64>,
    pub last: Option<String>,
    pub refusals_in_row: u32,
    pub refusals: u32,
    pub memory: String,
    pub created_at_ms: i64,
}

/// Writes a job; one with id 0 is new and gets the next id, never one used before (ids are
/// what the user types to remove or pause a job). Returns the id.
pub fn put_job(tx: &Transaction<'_>, job: &JobRow) -> Result<i64, StoreError> {
    tx.execute(
        "INSERT INTO jobs (id, spec, owner, state, paused_reason, anchor_ms, next_due_ms, claim_due_ms, claim_at_ms, last, refusals_in_row, refusals, memory, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (id) DO UPDATE SET state = ?4, paused_reason = ?5, next_due_ms = ?7, claim_due_ms = ?8,
             claim_at_ms = CASE WHEN ?8 IS NULL THEN NULL ELSE claim_at_ms END, last = ?9, refusals_in_row = ?10, refusals = ?11, memory = ?12",
        params![
            (job.id != 0).then_some(job.id),
            job.spec,
            job.owner,
            job.state,
            job.paused_reason,
            job.anchor_ms,
            job.next_due_ms,
            job.claim_due_ms,
            job.last,
            job.refusals_in_row,
            job.refusals,
            job.memory,
            job.created_at_ms
        ],
    )?;
    Ok(if job.id == 0 {
        tx.last_insert_rowid()
    } else {
        job.id
    })
}

pub fn delete_job(tx: &Transaction<'_>, id: i64) -> Result<(), StoreError> {
    tx.execute("DELETE FROM jobs WHERE id = ?1", [id])?;
    Ok(())
}

/// Claims the runs of `claims` (job id, due instant) at `now_ms`, each only if no claim is set.
pub fn claim(tx: &Transaction<'_>, claims: &[(i64, i64)], now_ms: i64) -> Result<(), StoreError> {
    let mut stmt = tx.prepare(
        "UPDATE jobs SET claim_due_ms = ?2, claim_at_ms = ?3 WHERE id = ?1 AND claim_due_ms IS NULL",
    )?;
    for (id, due) in claims {
        stmt.execute(params![id, due, now_ms])?;
    }
    Ok(())
}

/// Every job, by id.
pub fn jobs(conn: &Connection) -> Result<Vec<JobRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, spec, owner, state, paused_reason, anchor_ms, next_due_ms, claim_due_ms, last, refusals_in_row, refusals, memory, created_at FROM jobs ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        out.push(JobRow {
            id,
            spec: r.get(1)?,
            owner: r.get(2)?,
            state: r.get(3).map_err(corrupt(format!("jobs row {id}")))?,
            paused_reason: r.get(4)?,
            anchor_ms: r.get(5)?,
            next_due_ms: r.get(6)?,
            claim_due_ms: r.get(7)?,
            last: r.get(8)?,
            refusals_in_row: r.get(9)?,
            refusals: r.get(10)?,
            memory: r.get(11)?,
            created_at_ms: r.get(12)?,
        });
    }
    Ok(out)
}
