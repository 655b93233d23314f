//! Scheduled jobs and their runs (seed 004).

use harness_core::scheduler;

/// One scheduled run.
// Not the core's `scheduler::RunReport`: its outcome is a value, and crosses as JSON text.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct JobRun {
    pub job: i64,
    pub name: String,
    pub due_epoch_ms: i64,
    /// The outcome as JSON: `{"notified": {"notification": {"title", "body"}}}`, `"quiet"`,
    /// `{"refused": {"code", "message"}}`, …
    pub outcome_json: String,
    /// Why this run paused the job, if it did.
    pub paused: Option<String>,
    pub next_due_epoch_ms: Option<i64>,
}

impl From<scheduler::RunReport> for JobRun {
    fn from(r: scheduler::RunReport) -> Self {
        JobRun {
            job: r.job,
            name: r.name,
            due_epoch_ms: r.due_ms,
            outcome_json: serde_json::to_string(&r.outcome).unwrap_or_default(),
            paused: r.paused,
            next_due_epoch_ms: r.next_due_ms,
        }
    }
}
