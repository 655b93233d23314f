//! The scheduler (DESIGN.md §7): jobs that run unattended — checks (a read tool, its arguments,
//! a condition on the result, and the notification to post when it holds) and agent jobs (a
//! prompt the agent loop runs with actor scheduler) — on a one-shot, interval or cron schedule.
//!
//! Every scheduled call goes through the one invoke path with actor scheduler, so the one
//! decision refuses whatever is not a plain read (seed 004: "Scheduled runs only read"); each
//! refusal is recorded on the job, and [`PAUSE_AFTER_REFUSALS`] in a row pause it with the reason.
//!
//! [`Scheduler`] owns the jobs: they live in the `jobs` table (`store::jobs`) and in memory,
//! written through like the core's other state. Specs and their parsing are in [`spec`],
//! running due jobs in [`run`], and the shell's alarm in [`wake`].
//!
//! Running a due job is two transactions around the call:
//! 1. claim: `claim_due_ms` = the due instant being run, `claim_at_ms` = now, only if no claim is
//!    set (so a job never runs twice concurrently, even from two `run_due` calls);
//! 2. record: the outcome, the counters, the next due instant, and the claim cleared, together.
//!
//! The crash rule: a claim found when the data directory is opened belongs to a process that
//! died mid-run. Its due instant is never run again — the call may already have happened — so
//! the claim is resolved as outcome `interrupted` for that instant and the job's next due
//! instant is computed after it, exactly as if the run had ended. A job is therefore never lost
//! and never runs twice for one due instant (at most once per due instant).

pub mod condition;
pub mod notice;
pub mod plugin;
pub mod run;
pub mod schedule;
pub mod spec;
pub mod wake;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use crate::clock::Clock;
use crate::consent::Consent;
use crate::installed::InstalledPlugins;
use crate::invoke::Invoker;
use crate::lock;
use crate::registry::current_input;
use crate::settings::AppSettings;
use crate::store::jobs::{self as rows, JobRow};
use crate::store::{Store, StoreError};

use condition::Memory;
use schedule::Timing;

pub use crate::store::jobs::JobState;
pub use run::{AgentJob, AgentReply, JobRunner, LastRun, RunOutcome, RunReport};
pub(crate) use spec::Compiled;
pub use spec::{AgentSpec, CheckSpec, JobError, JobSpec, Notification, Owner, Task};
pub use wake::{NoWake, WakeScheduler};

/// A job whose call is refused this many runs in a row is paused, with the reason shown.
pub const PAUSE_AFTER_REFUSALS: u32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error(transparent)]
    Invalid(#[from] JobError),
    #[error("no job {0}")]
    NoSuchJob(i64),
    #[error("job {0} has already run once and is done; add a new job instead")]
    Done(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for SchedulerError {
    fn from(e: rusqlite::Error) -> Self {
        SchedulerError::Store(e.into())
    }
}

/// A job with its state, as the jobs screen shows it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub id: i64,
    #[serde(flatten)]
    pub spec: JobSpec,
    pub owner: Owner,
    pub state: JobState,
    /// Why the job is paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
    pub next_due_ms: Option<i64>,
    /// The due instant a run is in progress for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_due_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<LastRun>,
    /// Refusals in a row; [`PAUSE_AFTER_REFUSALS`] pause the job.
    pub refusals_in_row: u32,
    /// Refusals since the job was created.
    pub refusals: u32,
    pub created_at_ms: i64,
    /// An interval's first due instant: every later one is a whole number of steps after it.
    #[serde(skip)]
    pub(crate) anchor_ms: i64,
    #[serde(skip)]
    pub(crate) memory: Memory,
    #[serde(skip)]
    pub(crate) compiled: Arc<Compiled>,
}

impl Job {
    /// The next due instant written as local time in the job's zone.
    pub fn next_due_local(&self) -> Option<String> {
        self.next_due_ms
            .map(|ms| schedule::format_local(self.compiled.tz, ms))
    }
}

/// The jobs in memory, with an index of the active, not running ones by due instant, so that
/// the next wake time is the index's first entry and the due jobs a range of it.
#[derive(Default)]
struct Jobs {
    by_id: BTreeMap<i64, Job>,
    by_due: BTreeSet<(i64, i64)>,
}

impl Jobs {
    fn due_key(job: &Job) -> Option<(i64, i64)> {
        match (job.state, job.running_due_ms, job.next_due_ms) {
            (JobState::Active, None, Some(due)) => Some((due, job.id)),
            _ => None,
        }
    }

    fn put(&mut self, job: Job) {
        self.remove(job.id);
        if let Some(key) = Self::due_key(&job) {
            self.by_due.insert(key);
        }
        self.by_id.insert(job.id, job);
    }

    fn remove(&mut self, id: i64) -> Option<Job> {
        let old = self.by_id.remove(&id)?;
        if let Some(key) = Self::due_key(&old) {
            self.by_due.remove(&key);
        }
        Some(old)
    }

    fn next_wake(&self) -> Option<i64> {
        self.by_due.first().map(|(due, _)| *due)
    }

    /// The ids due at `now_ms`, earliest due first.
    fn due(&self, now_ms: i64) -> Vec<i64> {
        self.by_due
            .range(..=(now_ms, i64::MAX))
            .map(|(_, id)| *id)
            .collect()
    }
}

/// The owner of the jobs: their state in memory and in the `jobs` table, the agent loop that
/// runs agent jobs, and what the shell's alarm was last told.
pub struct Scheduler {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    invoker: Arc<Invoker>,
    plugins: Arc<InstalledPlugins>,
    consent: Arc<Consent>,
    settings: Arc<AppSettings>,
    wake: Arc<dyn WakeScheduler>,
    jobs: Mutex<Jobs>,
    /// What the shell was last told: `None` unknown (at start, or after a failed call),
    /// `Some(None)` nothing armed, `Some(Some((at, exact)))`.
    armed: Mutex<Option<Option<(i64, bool)>>>,
    runner: Mutex<Option<Arc<dyn JobRunner>>>,
}

fn to_text<T: Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// A job as its row.
fn to_row(job: &Job) -> Result<JobRow, StoreError> {
    Ok(JobRow {
        id: job.id,
        spec: to_text(&job.spec.to_json())?,
        owner: to_text(&job.owner)?,
        state: job.state,
        paused_reason: job.paused_reason.clone(),
        anchor_ms: job.anchor_ms,
        next_due_ms: job.next_due_ms,
        claim_due_ms: job.running_due_ms,
        last: job.last.as_ref().map(to_text).transpose()?,
        refusals_in_row: job.refusals_in_row,
        refusals: job.refusals,
        memory: to_text(&job.memory)?,
        created_at_ms: job.created_at_ms,
    })
}

fn job_from_row(row: JobRow) -> Result<Job, String> {
    let JobRow {
        id,
        spec,
        owner,
        state,
        paused_reason,
        anchor_ms,
        next_due_ms,
        claim_due_ms,
        last,
        refusals_in_row,
        refusals,
        memory,
        created_at_ms,
    } = row;
    let spec_json: Value =
        serde_json::from_str(&spec).map_err(|e| format!("job {id}: spec: {e}"))?;
    let spec = JobSpec::parse(&spec_json, "").map_err(|e| format!("job {id}: {e}"))?;
    let compiled = Arc::new(spec.compile().map_err(|e| format!("job {id}: {e}"))?);
    Ok(Job {
        id,
        spec,
        owner: serde_json::from_str(&owner).map_err(|e| format!("job {id}: owner: {e}"))?,
        state,
        paused_reason,
        next_due_ms,
        running_due_ms: claim_due_ms,
        last: last
            .map(|l| serde_json::from_str(&l))
            .transpose()
            .map_err(|e| format!("job {id}: last: {e}"))?,
        refusals_in_row,
        refusals,
        created_at_ms,
        anchor_ms,
        memory: serde_json::from_str(&memory).map_err(|e| format!("job {id}: memory: {e}"))?,
        compiled,
    })
}

impl Scheduler {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        store: Arc<Store>,
        clock: Arc<dyn Clock>,
        invoker: Arc<Invoker>,
        plugins: Arc<InstalledPlugins>,
        consent: Arc<Consent>,
        settings: Arc<AppSettings>,
        wake: Arc<dyn WakeScheduler>,
    ) -> Self {
        Self {
            store,
            clock,
            invoker,
            plugins,
            consent,
            settings,
            wake,
            jobs: Mutex::new(Jobs::default()),
            armed: Mutex::new(None),
            runner: Mutex::new(None),
        }
    }

    /// Loads the jobs at open, resolving claims left by a process that died mid-run (module
    /// docs: the crash rule).
    pub(crate) fn load(&self) -> Result<Vec<String>, StoreError> {
        let rows = self.store.read(rows::jobs)?;
        let now = self.clock.now_ms();
        let mut jobs = Jobs::default();
        let mut errors = Vec::new();
        let mut interrupted = Vec::new();
        for row in rows {
            match job_from_row(row) {
                Ok(mut job) => {
                    if let Some(due) = job.running_due_ms.take() {
                        // The run for `due` may have called the tool: never run it again.
                        job.next_due_ms =
                            job.compiled
                                .timing
                                .next_due(job.compiled.tz, job.anchor_ms, due, due);
                        if job.next_due_ms.is_none() && job.state == JobState::Active {
                            job.state = JobState::Done;
                        }
                        job.last = Some(LastRun {
                            due_ms: due,
                            at_ms: now,
                            outcome: RunOutcome::Interrupted,
                        });
                        interrupted.push(job.clone());
                    }
                    jobs.put(job);
                }
                Err(e) => errors.push(format!("scheduler: {e}")),
            }
        }
        if !interrupted.is_empty() {
            self.store.write(|tx| {
                interrupted
                    .iter()
                    .try_for_each(|job| rows::put_job(tx, &to_row(job)?).map(drop))
            })?;
        }
        *lock(&self.jobs) = jobs;
        self.rearm_wake();
        Ok(errors)
    }

    /// Gives the scheduler the agent loop that runs agent jobs.
    pub fn set_runner(&self, runner: Arc<dyn JobRunner>) {
        *lock(&self.runner) = Some(runner);
    }

    /// Adds a job. The spec is checked field by field; a check's tool must be an installed
    /// read tool that needs nobody's approval, with valid arguments (seed 004: scheduled runs
    /// only read). Whether each run may go ahead is still decided by the invoke path.
    pub fn add(&self, spec: &Value, owner: Owner) -> Result<Job, SchedulerError> {
        let default_tz = self.settings.get().time_zone;
        let spec = JobSpec::parse(spec, &default_tz)?;
        if let Task::Check(check) = &spec.task {
            let tool = self.plugins.tool(&check.tool).ok_or_else(|| {
                JobError::new(
                    "check.tool",
                    format!("no tool \"{}\" is installed", check.tool),
                )
            })?;
            // A check written with an input a shipped plugin renamed runs under its name now.
            spec::check_tool(&tool, &current_input(&check.tool, check.args.clone()))?;
        }
        let compiled = Arc::new(spec.compile()?);
        if let Task::Check(check) = &spec.task
            && let Some(tool) = self.plugins.tool(&check.tool)
        {
            spec::check_fields(&tool, &compiled)?;
        }
        let now = self.clock.now_ms();
        let first = compiled.timing.first_due(compiled.tz, now)?;
        let mut job = Job {
            id: 0,
            spec,
            owner,
            state: JobState::Active,
            paused_reason: None,
            next_due_ms: first,
            running_due_ms: None,
            last: None,
            refusals_in_row: 0,
            refusals: 0,
            created_at_ms: now,
            anchor_ms: first.unwrap_or(now),
            memory: Memory::new(),
            compiled,
        };
        {
            let mut jobs = lock(&self.jobs);
            job.id = self.store.write(|tx| rows::put_job(tx, &to_row(&job)?))?;
            jobs.put(job.clone());
        }
        self.rearm_wake();
        Ok(job)
    }

    /// Every job, by id.
    pub fn all(&self) -> Vec<Job> {
        lock(&self.jobs).by_id.values().cloned().collect()
    }

    pub fn get(&self, id: i64) -> Option<Job> {
        lock(&self.jobs).by_id.get(&id).cloned()
    }

    pub fn remove(&self, id: i64) -> Result<(), SchedulerError> {
        {
            let mut jobs = lock(&self.jobs);
            if !jobs.by_id.contains_key(&id) {
                return Err(SchedulerError::NoSuchJob(id));
            }
            self.store.write(|tx| rows::delete_job(tx, id))?;
            jobs.remove(id);
        }
        self.rearm_wake();
        Ok(())
    }

    /// Pauses a job; `reason` is shown with it.
    pub fn pause(&self, id: i64, reason: &str) -> Result<Job, SchedulerError> {
        self.change(id, |job, _| {
            if job.state == JobState::Done {
                return Err(SchedulerError::Done(job.id));
            }
            job.state = JobState::Paused;
            job.paused_reason = Some(reason.to_owned());
            Ok(())
        })
    }

    /// Resumes a paused job from now on: runs missed while paused are not made up, and the
    /// refusal streak starts again.
    pub fn resume(&self, id: i64) -> Result<Job, SchedulerError> {
        self.change(id, |job, now| {
            if job.state == JobState::Done {
                return Err(SchedulerError::Done(job.id));
            }
            job.state = JobState::Active;
            job.paused_reason = None;
            job.refusals_in_row = 0;
            let c = &job.compiled;
            let due = job.next_due_ms.unwrap_or(now);
            job.next_due_ms = match c.timing {
                // A one-shot keeps its time; one that passed while paused runs at once.
                Timing::At(_) => Some(due),
                _ if due > now => Some(due),
                _ => c.timing.next_due(c.tz, job.anchor_ms, now, now),
            };
            Ok(())
        })
    }

    fn change(
        &self,
        id: i64,
        f: impl FnOnce(&mut Job, i64) -> Result<(), SchedulerError>,
    ) -> Result<Job, SchedulerError> {
        let now = self.clock.now_ms();
        let job = {
            let mut jobs = lock(&self.jobs);
            let mut job = jobs
                .by_id
                .get(&id)
                .cloned()
                .ok_or(SchedulerError::NoSuchJob(id))?;
            f(&mut job, now)?;
            self.store.write(|tx| rows::put_job(tx, &to_row(&job)?))?;
            jobs.put(job.clone());
            job
        };
        self.rearm_wake();
        Ok(job)
    }
}
