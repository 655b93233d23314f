//! The scheduler (DESIGN.md §7): jobs that run unattended — checks (a read tool, its arguments,
//! a condition on the result, and the notification to post when it holds) and agent jobs (a
//! prompt the agent loop runs with actor scheduler) — on a one-shot, interval or cron schedule.
//!
//! Every scheduled call goes through [`Engine::invoke`] with actor scheduler, so the one
//! decision refuses whatever is not a plain read (seed 004: "Scheduled runs only read"); each
//! refusal is recorded on the job, and [`PAUSE_AFTER_REFUSALS`] in a row pause it with the reason.
//!
//! Jobs live in the `jobs` table and in memory, written through like the engine's other state.
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
pub mod plugin;
pub mod schedule;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use chrono_tz::Tz;
use rusqlite::{Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::consent::PermissionState;
use crate::engine::Engine;
use crate::invoke::{Call, Invocation, ModelTool, Outcome};
use crate::policy::{Actor, Mode};
use crate::registry::{Effect, tool_id};
use crate::store::StoreError;

use condition::{Condition, Memory, Template};
use schedule::{ScheduleSpec, Timing};

/// A job whose call is refused this many runs in a row is paused, with the reason shown.
pub const PAUSE_AFTER_REFUSALS: u32 = 3;

/// A problem with a job spec, naming the field (`schedule.at: "2026-13-01 08:00" is not a local
/// time "YYYY-MM-DD HH:mm"`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct JobError {
    pub field: String,
    pub message: String,
}

impl JobError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

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

/// The shell's alarm: the core tells it when to wake next (DESIGN.md §7). Exact when the user
/// granted the exact-alarm permission, otherwise inexact work the system may delay.
pub trait WakeScheduler: Send + Sync {
    /// Wake the app at `at_ms` (possibly already past: then at once) and call `run_due`.
    fn arm(&self, at_ms: i64, exact: bool) -> Result<(), String>;
    /// Nothing is scheduled.
    fn cancel(&self) -> Result<(), String>;
}

/// A shell without alarms (the CLI, tests): `harness tick` runs what is due.
pub struct NoWake;

impl WakeScheduler for NoWake {
    fn arm(&self, _at_ms: i64, _exact: bool) -> Result<(), String> {
        Ok(())
    }
    fn cancel(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Who made a job: the user (a screen, the CLI), or a plugin through the bundled `scheduler`
/// plugin's `scheduler.create` (the agent's jobs are `scheduler`'s, with the conversation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Owner {
    User,
    Plugin {
        plugin: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conversation: Option<String>,
    },
}

/// What a check posts when its condition holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    pub title: String,
    pub body: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckSpec {
    /// A read tool's id, `plugin.tool`.
    pub tool: String,
    pub args: Value,
    /// A condition (module `condition`); absent: notify after every run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<Value>,
    pub notify: Notification,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpec {
    pub prompt: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Task {
    Check(CheckSpec),
    Agent(AgentSpec),
}

/// A job as written:
/// `{"name", "schedule": {"at"|"everyMinutes"|"cron"}, "timeZone"?, "check": {"tool", "args"?,
/// "when"?, "notify": {"title", "body"}} | "agent": {"prompt"}}`. The time zone defaults to the
/// settings time zone at creation and is then stored with the job.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    pub name: String,
    pub schedule: ScheduleSpec,
    pub time_zone: String,
    #[serde(flatten)]
    pub task: Task,
}

/// What a spec compiles to.
#[derive(Debug)]
pub(crate) struct Compiled {
    timing: Timing,
    tz: Tz,
    condition: Option<Condition>,
    title: Option<Template>,
    body: Option<Template>,
}

impl JobSpec {
    /// Reads and checks a spec; `default_tz` fills a missing `timeZone`. Every error names the
    /// field. Whether the tool exists and only reads is checked by [`Engine::add_job`].
    pub fn parse(json: &Value, default_tz: &str) -> Result<JobSpec, JobError> {
        let object = json
            .as_object()
            .ok_or_else(|| JobError::new("job", format!("expected an object, got {json}")))?;
        if let Some(unknown) = object.keys().find(|k| {
            !matches!(
                k.as_str(),
                "name" | "schedule" | "timeZone" | "check" | "agent"
            )
        }) {
            return Err(JobError::new(
                unknown,
                "unknown field; a job has name, schedule, timeZone and check or agent",
            ));
        }
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(JobError::new(
                "name",
                "expected a name of 1 to 100 characters",
            ));
        }
        let schedule = schedule::parse_spec(object.get("schedule").unwrap_or(&Value::Null))?;
        Timing::parse(&schedule)?;
        let time_zone = match object.get("timeZone") {
            None | Some(Value::Null) => default_tz.to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(JobError::new(
                    "timeZone",
                    format!("expected an IANA time zone name, got {other}"),
                ));
            }
        };
        schedule::parse_tz("timeZone", &time_zone)?;
        let task = match (object.get("check"), object.get("agent")) {
            (Some(check), None) => Task::Check(parse_check(check)?),
            (None, Some(agent)) => {
                let prompt = agent
                    .get("prompt")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .unwrap_or_default();
                if prompt.is_empty() || prompt.chars().count() > 4000 {
                    return Err(JobError::new(
                        "agent.prompt",
                        "expected a prompt of 1 to 4000 characters",
                    ));
                }
                if let Some(unknown) = agent
                    .as_object()
                    .and_then(|o| o.keys().find(|k| *k != "prompt"))
                {
                    return Err(JobError::new(
                        &format!("agent.{unknown}"),
                        "unknown field; an agent job has a prompt",
                    ));
                }
                Task::Agent(AgentSpec {
                    prompt: prompt.to_owned(),
                })
            }
            _ => {
                return Err(JobError::new(
                    "check",
                    "give exactly one of check (a read tool and a condition) or agent (a prompt)",
                ));
            }
        };
        let spec = JobSpec {
            name: name.to_owned(),
            schedule,
            time_zone,
            task,
        };
        spec.compile()?;
        Ok(spec)
    }

    pub(crate) fn compile(&self) -> Result<Compiled, JobError> {
        let timing = Timing::parse(&self.schedule)?;
        let tz = schedule::parse_tz("timeZone", &self.time_zone)?;
        let (condition, title, body) = match &self.task {
            Task::Check(check) => (
                check
                    .when
                    .as_ref()
                    .map(|w| Condition::parse("check.when", w))
                    .transpose()?,
                Some(Template::parse("check.notify.title", &check.notify.title)?),
                Some(Template::parse("check.notify.body", &check.notify.body)?),
            ),
            Task::Agent(_) => (None, None, None),
        };
        Ok(Compiled {
            timing,
            tz,
            condition,
            title,
            body,
        })
    }

    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

fn parse_check(check: &Value) -> Result<CheckSpec, JobError> {
    let object = check
        .as_object()
        .ok_or_else(|| JobError::new("check", format!("expected an object, got {check}")))?;
    if let Some(unknown) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "tool" | "args" | "when" | "notify"))
    {
        return Err(JobError::new(
            &format!("check.{unknown}"),
            "unknown field; a check has tool, args, when and notify",
        ));
    }
    let tool = object.get("tool").and_then(Value::as_str).ok_or_else(|| {
        JobError::new(
            "check.tool",
            "expected a tool id, e.g. \"wallet.cardBalance\"",
        )
    })?;
    let args = match object.get("args") {
        None | Some(Value::Null) => json!({}),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => {
            return Err(JobError::new(
                "check.args",
                format!("expected an object of the tool's inputs, got {other}"),
            ));
        }
    };
    let notify = object
        .get("notify")
        .and_then(Value::as_object)
        .ok_or_else(|| JobError::new("check.notify", "expected {\"title\": …, \"body\": …}"))?;
    let text = |key: &str| {
        notify
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                JobError::new(&format!("check.notify.{key}"), "expected a non-empty text")
            })
    };
    Ok(CheckSpec {
        tool: tool.to_owned(),
        args,
        when: object.get("when").filter(|w| !w.is_null()).cloned(),
        notify: Notification {
            title: text("title")?,
            body: text("body")?,
        },
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Active,
    Paused,
    /// A one-shot that has run.
    Done,
}

impl JobState {
    fn as_str(self) -> &'static str {
        match self {
            JobState::Active => "active",
            JobState::Paused => "paused",
            JobState::Done => "done",
        }
    }

    fn parse(s: &str) -> Option<JobState> {
        [JobState::Active, JobState::Paused, JobState::Done]
            .into_iter()
            .find(|j| j.as_str() == s)
    }
}

/// How one run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum RunOutcome {
    /// The check's condition held: the notification to post.
    Notified { notification: Notification },
    /// The check ran and its condition did not hold.
    Quiet,
    /// The invoke path refused the call; it did not run (also in the audit).
    Refused { code: String, message: String },
    /// The tool ran and failed, or no agent loop could run the job.
    Failed { message: String },
    /// The tool ran, but the condition or a template could not be evaluated on its result.
    ConditionError { message: String },
    /// An agent job finished. `refused` counts the calls the invoke path refused.
    AgentRan {
        reply: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        notification: Option<Notification>,
        calls: u32,
        refused: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        last_refusal: Option<String>,
    },
    /// The process ended during the run for this due instant (found at the next open); that
    /// instant is not run again.
    Interrupted,
}

impl RunOutcome {
    /// Whether this run counts towards [`PAUSE_AFTER_REFUSALS`]: the call was refused, or an
    /// agent run had a call refused.
    fn refusal(&self) -> Option<String> {
        match self {
            RunOutcome::Refused { code, message } => Some(format!("{code}: {message}")),
            RunOutcome::AgentRan {
                refused,
                last_refusal,
                ..
            } if *refused > 0 => last_refusal.clone(),
            _ => None,
        }
    }

    pub fn notification(&self) -> Option<&Notification> {
        match self {
            RunOutcome::Notified { notification } => Some(notification),
            RunOutcome::AgentRan { notification, .. } => notification.as_ref(),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastRun {
    pub due_ms: i64,
    pub at_ms: i64,
    pub outcome: RunOutcome,
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
    anchor_ms: i64,
    #[serde(skip)]
    memory: Memory,
    #[serde(skip)]
    compiled: Arc<Compiled>,
}

impl Job {
    /// The next due instant written as local time in the job's zone.
    pub fn next_due_local(&self) -> Option<String> {
        self.next_due_ms
            .map(|ms| schedule::format_local(self.compiled.tz, ms))
    }
}

/// One run, as `run_due` reports it. The shell posts `outcome.notification()`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub job: i64,
    pub name: String,
    pub due_ms: i64,
    pub outcome: RunOutcome,
    /// Set when this run paused the job: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<String>,
    pub next_due_ms: Option<i64>,
}

/// What an agent job's runner is given. Its calls go through [`AgentJob::call`], which uses
/// actor scheduler, so only reads run and nothing asks (seed 004).
pub struct AgentJob {
    pub job: i64,
    pub name: String,
    pub prompt: String,
    pub due_ms: i64,
    /// The tools to offer the model: those a scheduled run could run ([`Engine::scheduler_tools`]).
    pub tools: Vec<ModelTool>,
    engine: Engine,
    tally: Mutex<(u32, u32, Option<String>)>,
}

impl AgentJob {
    /// Calls a tool, by id (`wallet.cardBalance`) or model name (`wallet__cardBalance`), with
    /// actor scheduler.
    pub async fn call(&self, tool: &str, input: Value) -> Invocation {
        let id = if tool.contains("__") {
            tool_id(tool).unwrap_or_else(|| tool.to_owned())
        } else {
            tool.to_owned()
        };
        let invocation = self
            .engine
            .invoke(Call {
                tool: id.clone(),
                actor: Actor::Scheduler,
                input,
                conversation: None,
            })
            .await;
        let mut tally = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        tally.0 += 1;
        if let Outcome::Refused { code, message } = &invocation.outcome {
            tally.1 += 1;
            tally.2 = Some(format!("{}: {id}: {message}", code.as_str()));
        }
        invocation
    }
}

/// The agent loop, as the scheduler uses it: runs one agent job's prompt to its reply.
#[async_trait]
pub trait JobRunner: Send + Sync {
    async fn run(&self, job: &AgentJob) -> Result<AgentReply, String>;
}

#[derive(Clone, Debug, PartialEq)]
pub struct AgentReply {
    pub text: String,
    pub notification: Option<Notification>,
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

/// The scheduler's part of the engine's shared state.
#[derive(Default)]
pub struct SchedulerState {
    jobs: Mutex<Jobs>,
    /// What the shell was last told: `None` unknown (at start, or after a failed call),
    /// `Some(None)` nothing armed, `Some(Some((at, exact)))`.
    armed: Mutex<Option<Option<(i64, bool)>>>,
    runner: Mutex<Option<Arc<dyn JobRunner>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each change is one assignment after its write committed: a panic elsewhere cannot leave
    // a half-changed value.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn to_text<T: Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Writes a job; one with id 0 is new and gets the next id, never one used before (ids are
/// what the user types to remove or pause a job). Returns the id.
fn put_job(tx: &Transaction<'_>, job: &Job) -> Result<i64, StoreError> {
    tx.execute(
        "INSERT INTO jobs (id, spec, owner, state, paused_reason, anchor_ms, next_due_ms, claim_due_ms, claim_at_ms, last, refusals_in_row, refusals, memory, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (id) DO UPDATE SET state = ?4, paused_reason = ?5, next_due_ms = ?7, claim_due_ms = ?8,
             claim_at_ms = CASE WHEN ?8 IS NULL THEN NULL ELSE claim_at_ms END, last = ?9, refusals_in_row = ?10, refusals = ?11, memory = ?12",
        params![
            (job.id != 0).then_some(job.id),
            to_text(&job.spec.to_json())?,
            to_text(&job.owner)?,
            job.state.as_str(),
            job.paused_reason,
            job.anchor_ms,
            job.next_due_ms,
            job.running_due_ms,
            job.last.as_ref().map(to_text).transpose()?,
            job.refusals_in_row,
            job.refusals,
            to_text(&job.memory)?,
            job.created_at_ms
        ],
    )?;
    Ok(if job.id == 0 {
        tx.last_insert_rowid()
    } else {
        job.id
    })
}

type JobRow = (
    i64,
    String,
    String,
    String,
    Option<String>,
    i64,
    Option<i64>,
    Option<i64>,
    Option<String>,
    u32,
    u32,
    String,
    i64,
);

fn job_rows(conn: &Connection) -> Result<Vec<JobRow>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, spec, owner, state, paused_reason, anchor_ms, next_due_ms, claim_due_ms, last, refusals_in_row, refusals, memory, created_at FROM jobs ORDER BY id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
            r.get(8)?,
            r.get(9)?,
            r.get(10)?,
            r.get(11)?,
            r.get(12)?,
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn job_from_row(row: JobRow) -> Result<Job, String> {
    let (
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
    ) = row;
    let spec_json: Value =
        serde_json::from_str(&spec).map_err(|e| format!("job {id}: spec: {e}"))?;
    let spec = JobSpec::parse(&spec_json, "").map_err(|e| format!("job {id}: {e}"))?;
    let compiled = Arc::new(spec.compile().map_err(|e| format!("job {id}: {e}"))?);
    Ok(Job {
        id,
        spec,
        owner: serde_json::from_str(&owner).map_err(|e| format!("job {id}: owner: {e}"))?,
        state: JobState::parse(&state).ok_or_else(|| format!("job {id}: state: \"{state}\""))?,
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

impl Engine {
    fn scheduler(&self) -> &SchedulerState {
        &self.shared.scheduler
    }

    /// Loads the jobs at open, resolving claims left by a process that died mid-run (module
    /// docs: the crash rule).
    pub(crate) fn load_jobs(&self) -> Result<(), StoreError> {
        let rows = self.shared.store.read(job_rows)?;
        let now = self.now_ms();
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
            self.shared.store.write(|tx| {
                interrupted
                    .iter()
                    .try_for_each(|job| put_job(tx, job).map(drop))
            })?;
        }
        *lock(&self.scheduler().jobs) = jobs;
        if !errors.is_empty() {
            self.shared
                .load_errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(errors);
        }
        self.rearm_wake();
        Ok(())
    }

    /// Gives the scheduler the agent loop that runs agent jobs.
    pub fn set_job_runner(&self, runner: Arc<dyn JobRunner>) {
        *lock(&self.scheduler().runner) = Some(runner);
    }

    /// Adds a job. The spec is checked field by field; a check's tool must be an installed
    /// read tool that needs nobody's approval, with valid arguments (seed 004: scheduled runs
    /// only read). Whether each run may go ahead is still decided by the invoke path.
    pub fn add_job(&self, spec: &Value, owner: Owner) -> Result<Job, SchedulerError> {
        let default_tz = self.settings().time_zone;
        let spec = JobSpec::parse(spec, &default_tz)?;
        if let Task::Check(check) = &spec.task {
            let tool = self.tool(&check.tool).ok_or_else(|| {
                JobError::new(
                    "check.tool",
                    format!("no tool \"{}\" is installed", check.tool),
                )
            })?;
            if tool.effect != Effect::Read {
                return Err(JobError::new(
                    "check.tool",
                    format!(
                        "scheduled runs only read, and \"{}\" has the {} effect",
                        tool.id, tool.effect
                    ),
                )
                .into());
            }
            if tool.user_only {
                return Err(JobError::new(
                    "check.tool",
                    format!(
                        "\"{}\" can only be started by the user, from its screen",
                        tool.id
                    ),
                )
                .into());
            }
            if tool.grant || tool.always_ask {
                return Err(JobError::new(
                    "check.tool",
                    format!("\"{}\" asks the user on every call, and nobody is there to ask during a scheduled run", tool.id),
                )
                .into());
            }
            tool.input
                .validate(&check.args)
                .map_err(|e| JobError::new("check.args", e))?;
        }
        let compiled = Arc::new(spec.compile()?);
        let now = self.now_ms();
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
            let mut jobs = lock(&self.scheduler().jobs);
            job.id = self.shared.store.write(|tx| put_job(tx, &job))?;
            jobs.put(job.clone());
        }
        self.rearm_wake();
        Ok(job)
    }

    /// Every job, by id.
    pub fn jobs(&self) -> Vec<Job> {
        lock(&self.scheduler().jobs)
            .by_id
            .values()
            .cloned()
            .collect()
    }

    pub fn job(&self, id: i64) -> Option<Job> {
        lock(&self.scheduler().jobs).by_id.get(&id).cloned()
    }

    pub fn remove_job(&self, id: i64) -> Result<(), SchedulerError> {
        {
            let mut jobs = lock(&self.scheduler().jobs);
            if !jobs.by_id.contains_key(&id) {
                return Err(SchedulerError::NoSuchJob(id));
            }
            self.shared
                .store
                .write(|tx| Ok(tx.execute("DELETE FROM jobs WHERE id = ?1", [id])?))?;
            jobs.remove(id);
        }
        self.rearm_wake();
        Ok(())
    }

    /// Pauses a job; `reason` is shown with it.
    pub fn pause_job(&self, id: i64, reason: &str) -> Result<Job, SchedulerError> {
        self.change_job(id, |job, _| {
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
    pub fn resume_job(&self, id: i64) -> Result<Job, SchedulerError> {
        self.change_job(id, |job, now| {
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

    fn change_job(
        &self,
        id: i64,
        f: impl FnOnce(&mut Job, i64) -> Result<(), SchedulerError>,
    ) -> Result<Job, SchedulerError> {
        let now = self.now_ms();
        let job = {
            let mut jobs = lock(&self.scheduler().jobs);
            let mut job = jobs
                .by_id
                .get(&id)
                .cloned()
                .ok_or(SchedulerError::NoSuchJob(id))?;
            f(&mut job, now)?;
            self.shared.store.write(|tx| put_job(tx, &job))?;
            jobs.put(job.clone());
            job
        };
        self.rearm_wake();
        Ok(job)
    }

    /// The earliest due instant of an active job not running now: when the shell should wake.
    pub fn next_wake_ms(&self) -> Option<i64> {
        lock(&self.scheduler().jobs).next_wake()
    }

    /// The ids of the jobs `run_due(now_ms)` would run.
    pub fn due_jobs(&self, now_ms: i64) -> Vec<i64> {
        lock(&self.scheduler().jobs).due(now_ms)
    }

    /// Tells the shell the next wake time when it changed: exact when the exact-alarm permission
    /// is granted (DESIGN.md §7). Called after every change to the jobs; the shell calls it after
    /// reporting the exact-alarm permission. Never called holding a core lock (STYLE.md §4).
    pub fn rearm_wake(&self) {
        let next = self.next_wake_ms();
        let exact = self.consent().exact_alarm == PermissionState::Granted;
        let want = next.map(|at| (at, exact));
        {
            let mut armed = lock(&self.scheduler().armed);
            if *armed == Some(want) {
                return;
            }
            *armed = Some(want);
        }
        let result = match want {
            Some((at, exact)) => self.shared.wake.arm(at, exact),
            None => self.shared.wake.cancel(),
        };
        if let Err(e) = result {
            eprintln!("harness: the wake-up alarm could not be set: {e}");
            // Unknown again, so the next change tries once more.
            *lock(&self.scheduler().armed) = None;
        }
    }

    /// The tools a scheduled run can run, as the model is offered them: the model tool list
    /// filtered to read tools that need nobody's approval (seed 004: scheduled runs only read;
    /// an ask mode, a grant or an alwaysAsk tool would only be declined).
    pub fn scheduler_tools(&self) -> Vec<ModelTool> {
        let offered = self.model_tools(None);
        let state = self.state();
        offered
            .into_iter()
            .filter(|t| {
                let Some(tool) = tool_id(&t.name).and_then(|id| state.registry.tool(&id).cloned())
                else {
                    return false;
                };
                let Some(installed) = state.installed.get(&tool.plugin) else {
                    return false;
                };
                tool.effect == Effect::Read
                    && !tool.grant
                    && !tool.always_ask
                    && state.modes.effective(&installed.plugin, Effect::Read).0 == Mode::Auto
            })
            .collect()
    }

    /// Runs every job due at `now_ms`, once each however many runs were missed, one after
    /// another, and returns what each did. The shell posts each report's notification.
    pub async fn run_due(&self, now_ms: i64) -> Result<Vec<RunReport>, SchedulerError> {
        let claimed = self.claim_due(now_ms)?;
        let mut reports = Vec::with_capacity(claimed.len());
        for (job, due) in claimed {
            let (outcome, memory) = self.run_job(&job, due).await;
            reports.push(self.record_run(job.id, due, now_ms, outcome, memory)?);
        }
        self.rearm_wake();
        // The shell posts what the runs produced; told outside every lock.
        for report in &reports {
            if let Some(notification) = report.outcome.notification() {
                self.shared.events.emit(crate::events::Event::Notification {
                    job: report.job,
                    notification: notification.clone(),
                });
            }
        }
        Ok(reports)
    }

    /// Claims every due job in one transaction (module docs, step 1).
    fn claim_due(&self, now_ms: i64) -> Result<Vec<(Job, i64)>, SchedulerError> {
        let mut jobs = lock(&self.scheduler().jobs);
        let ids = jobs.due(now_ms);
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let claims: Vec<(i64, i64)> = ids
            .iter()
            .map(|id| (*id, jobs.by_id[id].next_due_ms.expect("due")))
            .collect();
        self.shared.store.write(|tx| {
            let mut stmt = tx.prepare("UPDATE jobs SET claim_due_ms = ?2, claim_at_ms = ?3 WHERE id = ?1 AND claim_due_ms IS NULL")?;
            for (id, due) in &claims {
                stmt.execute(params![id, due, now_ms])?;
            }
            Ok(())
        })?;
        Ok(claims
            .into_iter()
            .map(|(id, due)| {
                let mut job = jobs.by_id[&id].clone();
                job.running_due_ms = Some(due);
                jobs.put(job.clone());
                (job, due)
            })
            .collect())
    }

    async fn run_job(&self, job: &Job, due: i64) -> (RunOutcome, Option<Memory>) {
        match &job.spec.task {
            Task::Check(check) => {
                // seed 004: a scheduled check runs its tool with actor scheduler, through the one
                // invoke path, which refuses anything but a plain read.
                let call = Call {
                    tool: check.tool.clone(),
                    actor: Actor::Scheduler,
                    input: check.args.clone(),
                    conversation: None,
                };
                match self.invoke(call).await.outcome {
                    Outcome::Refused { code, message } => (
                        RunOutcome::Refused {
                            code: code.as_str().to_owned(),
                            message,
                        },
                        None,
                    ),
                    Outcome::Failed { message } => (RunOutcome::Failed { message }, None),
                    Outcome::Ran { result, .. } => evaluate(&job.compiled, &job.memory, &result),
                }
            }
            Task::Agent(agent) => {
                let runner = lock(&self.scheduler().runner).clone();
                let Some(runner) = runner else {
                    return (
                        RunOutcome::Failed {
                            message: "no agent loop is available to run agent jobs on this device"
                                .into(),
                        },
                        None,
                    );
                };
                let ctx = AgentJob {
                    job: job.id,
                    name: job.spec.name.clone(),
                    prompt: agent.prompt.clone(),
                    due_ms: due,
                    tools: self.scheduler_tools(),
                    engine: self.clone(),
                    tally: Mutex::new((0, 0, None)),
                };
                let reply = runner.run(&ctx).await;
                let (calls, refused, last_refusal) =
                    ctx.tally.into_inner().unwrap_or_else(|p| p.into_inner());
                match reply {
                    Ok(reply) => (
                        RunOutcome::AgentRan {
                            reply: reply.text,
                            notification: reply.notification,
                            calls,
                            refused,
                            last_refusal,
                        },
                        None,
                    ),
                    Err(message) => (RunOutcome::Failed { message }, None),
                }
            }
        }
    }

    /// Records a run and the job's next due instant, clearing the claim, in one transaction
    /// (module docs, step 2).
    fn record_run(
        &self,
        id: i64,
        due: i64,
        now_ms: i64,
        outcome: RunOutcome,
        memory: Option<Memory>,
    ) -> Result<RunReport, SchedulerError> {
        let mut jobs = lock(&self.scheduler().jobs);
        let Some(current) = jobs.by_id.get(&id) else {
            // Removed while it ran: nothing to record on.
            return Ok(RunReport {
                job: id,
                name: String::new(),
                due_ms: due,
                outcome,
                paused: None,
                next_due_ms: None,
            });
        };
        let mut job = current.clone();
        job.running_due_ms = None;
        if let Some(memory) = memory {
            job.memory = memory;
        }
        let mut paused = None;
        match outcome.refusal() {
            Some(why) => {
                job.refusals += 1;
                job.refusals_in_row += 1;
                if job.refusals_in_row >= PAUSE_AFTER_REFUSALS && job.state == JobState::Active {
                    let reason =
                        format!("paused after {PAUSE_AFTER_REFUSALS} refusals in a row: {why}");
                    job.state = JobState::Paused;
                    job.paused_reason = Some(reason.clone());
                    paused = Some(reason);
                }
            }
            None if outcome != RunOutcome::Interrupted => job.refusals_in_row = 0,
            None => {}
        }
        let c = &job.compiled;
        job.next_due_ms = c.timing.next_due(c.tz, job.anchor_ms, due, now_ms);
        if job.next_due_ms.is_none() && job.state == JobState::Active {
            job.state = JobState::Done;
        }
        job.last = Some(LastRun {
            due_ms: due,
            at_ms: now_ms,
            outcome: outcome.clone(),
        });
        self.shared.store.write(|tx| put_job(tx, &job))?;
        let report = RunReport {
            job: id,
            name: job.spec.name.clone(),
            due_ms: due,
            outcome,
            paused,
            next_due_ms: job.next_due_ms,
        };
        jobs.put(job);
        Ok(report)
    }
}

/// A check's condition and notification on a result.
fn evaluate(
    compiled: &Compiled,
    previous: &Memory,
    result: &Value,
) -> (RunOutcome, Option<Memory>) {
    let mut next = Memory::new();
    let holds = match &compiled.condition {
        Some(condition) => condition.eval(result, previous, &mut next),
        None => Ok(true),
    };
    let rendered = holds.and_then(|holds| {
        if !holds {
            return Ok(None);
        }
        let (Some(title), Some(body)) = (&compiled.title, &compiled.body) else {
            return Ok(None);
        };
        Ok(Some(Notification {
            title: title.render(result)?,
            body: body.render(result)?,
        }))
    });
    match rendered {
        Ok(Some(notification)) => (RunOutcome::Notified { notification }, Some(next)),
        Ok(None) => (RunOutcome::Quiet, Some(next)),
        // Keep the previous values: this run compared nothing.
        Err(e) => (
            RunOutcome::ConditionError {
                message: e.to_string(),
            },
            None,
        ),
    }
}
