//! Running due jobs: claim, call through the one invoke path with actor scheduler, record.
//! The two transactions and the crash rule are described in the module docs of `scheduler`.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::condition::Memory;
use super::notice;
use super::spec::{Compiled, Notification, Task};
use super::{Job, JobState, Owner, PAUSE_AFTER_REFUSALS, Scheduler, SchedulerError, to_row};
use crate::consent::PermissionState;
use crate::invoke::{Call, Invocation, Invoker, ModelTool, Outcome};
use crate::lock;
use crate::policy::Actor;
use crate::registry::{current_input, current_tool_id, tool_id};
use crate::store::jobs as rows;

/// How one run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum RunOutcome {
    /// The check's condition held: the notification to post.
    Notified { notification: Notification },
    /// The check's condition held, but the phone had reported its notifications off: nothing
    /// was posted, and the words it would have shown are kept.
    NotShown { notification: Notification },
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
        /// The notification the reply asked for, not posted: the phone's notifications were
        /// off.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        not_shown: Option<Notification>,
        calls: u32,
        refused: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        last_refusal: Option<String>,
    },
    /// The check's read answered that the campus service's sign-in has ended and could not be
    /// renewed silently (DESIGN.md §10): the job keeps its schedule, and the student is told
    /// once ([`notice`](super::notice)) to sign in again.
    SignInRequired { service: String },
    /// The process ended during the run for this due instant (found at the next open); that
    /// instant is not run again.
    Interrupted,
}

impl RunOutcome {
    /// Whether this run counts towards [`PAUSE_AFTER_REFUSALS`]: the call was refused, or an
    /// agent run had a call refused.
    pub(crate) fn refusal(&self) -> Option<String> {
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
    /// What the student is told besides the run's own notification, once: the job paused, or
    /// a campus sign-in ended (`notice::notice`). The shell posts it too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<Notification>,
    pub next_due_ms: Option<i64>,
}

/// What an agent job's runner is given. Its calls go through [`AgentJob::call`], which uses
/// actor scheduler, so only reads run and nothing asks (seed 004).
pub struct AgentJob {
    pub job: i64,
    pub name: String,
    pub prompt: String,
    pub due_ms: i64,
    /// The tools to offer the model: those a scheduled run could run ([`Scheduler::tools`]).
    pub tools: Vec<ModelTool>,
    invoker: Arc<Invoker>,
    /// The conversation that made the job, whose scope bounds its calls.
    made_in: Option<String>,
    tally: Mutex<(u32, u32, Option<String>)>,
}

impl AgentJob {
    /// The conversation that made the job, whose scope bounds its calls.
    pub(crate) fn made_in(&self) -> Option<&str> {
        self.made_in.as_deref()
    }

    /// Calls a tool, by id (`wallet.cardBalance`) or model name (`wallet__cardBalance`), with
    /// actor scheduler.
    pub async fn call(&self, tool: &str, input: Value) -> Invocation {
        let id = if tool.contains("__") {
            tool_id(tool).unwrap_or_else(|| tool.to_owned())
        } else {
            tool.to_owned()
        };
        let call = Call {
            tool: id.clone(),
            actor: Actor::Scheduler,
            input,
            conversation: None,
        };
        let invocation = self
            .invoker
            .invoke_made_in(call, self.made_in.clone())
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

impl Scheduler {
    /// The tools a scheduled run can run, as the model is offered them: those that could run
    /// for actor scheduler (`policy::precheck`; seed 004: scheduled runs only read, and an ask
    /// mode, an ask rule, a grant, alwaysAsk or targeted tool would only be declined).
    pub fn tools(&self) -> Vec<ModelTool> {
        self.invoker.offered(Actor::Scheduler, None)
    }

    /// Runs every job due at `now_ms`, once each however many runs were missed, one after
    /// another, and returns what each did. The shell posts each report's notification.
    pub async fn run_due(&self, now_ms: i64) -> Result<Vec<RunReport>, SchedulerError> {
        let claimed = self.claim_due(now_ms)?;
        let mut reports = Vec::with_capacity(claimed.len());
        for (job, due) in claimed {
            let (outcome, memory) = self.run_job(&job, due).await;
            let outcome = self.unless_notifications_off(outcome);
            reports.push(self.record_run(job.id, due, now_ms, outcome, memory)?);
        }
        self.rearm_wake();
        Ok(reports)
    }

    /// A notification the phone will not show is not recorded as shown: while the shell
    /// reports the notification permission denied (seed 000: the shell reports it, the core
    /// never asks), a check whose condition held ends [`RunOutcome::NotShown`], and nothing is
    /// posted; an agent job's reply is kept, its notification moved to `not_shown`.
    fn unless_notifications_off(&self, outcome: RunOutcome) -> RunOutcome {
        let off = self
            .consent
            .read(|c| c.notifications == PermissionState::Denied);
        match outcome {
            RunOutcome::Notified { notification } if off => RunOutcome::NotShown { notification },
            RunOutcome::AgentRan {
                reply,
                notification: Some(notification),
                calls,
                refused,
                last_refusal,
                ..
            } if off => RunOutcome::AgentRan {
                reply,
                notification: None,
                not_shown: Some(notification),
                calls,
                refused,
                last_refusal,
            },
            other => other,
        }
    }

    /// Claims every due job in one transaction (module docs, step 1).
    fn claim_due(&self, now_ms: i64) -> Result<Vec<(Job, i64)>, SchedulerError> {
        let mut jobs = lock(&self.jobs);
        let ids = jobs.due(now_ms);
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let claims: Vec<(i64, i64)> = ids
            .iter()
            .map(|id| (*id, jobs.by_id[id].next_due_ms.expect("due")))
            .collect();
        self.store.write(|tx| rows::claim(tx, &claims, now_ms))?;
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
                // invoke path, which refuses anything but a plain read. A check stored before a
                // shipped plugin renamed the tool or its inputs runs under the names now.
                let call = Call {
                    tool: current_tool_id(&check.tool).to_owned(),
                    actor: Actor::Scheduler,
                    input: current_input(&check.tool, check.args.clone()),
                    conversation: None,
                };
                match self
                    .invoker
                    .invoke_made_in(call, made_in(job))
                    .await
                    .outcome
                {
                    Outcome::Refused { code, message } => (
                        RunOutcome::Refused {
                            code: code.as_str().to_owned(),
                            message,
                        },
                        None,
                    ),
                    Outcome::Failed { message } => (RunOutcome::Failed { message }, None),
                    // DESIGN.md §10: the session ended and no remembered password renewed it.
                    Outcome::Ran { result, .. } if result["status"] == "signin_required" => (
                        RunOutcome::SignInRequired {
                            service: result["service"].as_str().unwrap_or_default().to_owned(),
                        },
                        None,
                    ),
                    Outcome::Ran { result, .. } => evaluate(&job.compiled, &job.memory, &result),
                }
            }
            // seed 000: a reminder runs no tool and no model; it posts its own words.
            Task::Reminder(notification) => (
                RunOutcome::Notified {
                    notification: notification.clone(),
                },
                None,
            ),
            Task::Agent(agent) => {
                let runner = lock(&self.runner).clone();
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
                    tools: self.tools(),
                    invoker: self.invoker.clone(),
                    made_in: made_in(job),
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
                            not_shown: None,
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
        let mut jobs = lock(&self.jobs);
        let Some(current) = jobs.by_id.get(&id) else {
            // Removed while it ran: nothing to record on.
            return Ok(RunReport {
                job: id,
                name: String::new(),
                due_ms: due,
                outcome,
                paused: None,
                notice: None,
                next_due_ms: None,
            });
        };
        let mut job = current.clone();
        let before = job.last.take().map(|last| last.outcome);
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
        self.store.write(|tx| rows::put_job(tx, &to_row(&job)?))?;
        let lang = self.settings.get().language;
        let report = RunReport {
            job: id,
            name: job.spec.name.clone(),
            due_ms: due,
            outcome,
            notice: notice::notice(lang, &job, before.as_ref(), paused.is_some()),
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

/// The conversation whose scope bounds a job's calls: the one it was made in (seed 003: a
/// scheduled run is no wider than the conversation that asked for it). A job the user made is
/// bounded by the plugins' grants alone.
fn made_in(job: &Job) -> Option<String> {
    match &job.owner {
        Owner::Plugin { conversation, .. } => conversation.clone(),
        Owner::User => None,
    }
}
