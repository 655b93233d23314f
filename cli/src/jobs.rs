//! `harness jobs` (list, add, remove, pause, resume) and `harness tick --now "YYYY-MM-DD HH:mm"`:
//! the scheduler from a terminal, on a data directory. A terminal has no alarm, so `tick` is
//! what wakes the scheduler: it runs what is due at the given local time (settings time zone).

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use clap::{Args, Subcommand};
use harness_core::Engine;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;
use harness_core::scheduler::schedule::{format_local, parse_local, parse_tz, resolve_local};
use harness_core::scheduler::{Job, JobState, Owner, RunOutcome, RunReport};
use serde_json::{Value, json};

/// Scheduled runs never ask; anything else these commands do is the user's own tap.
struct NobodyAsks;

#[async_trait]
impl ApprovalBroker for NobodyAsks {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

#[derive(Subcommand)]
pub enum JobsCommand {
    /// Every job with its schedule, state, next due time and last outcome (the default).
    List,
    /// Add a reminder (--title, --body), a check (--tool, --when, --title, --body) or an agent
    /// job (--prompt).
    Add(Box<AddArgs>),
    /// Remove a job.
    Remove { id: i64 },
    /// Pause a job until it is resumed.
    Pause {
        id: i64,
        #[arg(long, default_value = "paused by the user")]
        reason: String,
    },
    /// Resume a paused job from now on.
    Resume { id: i64 },
}

#[derive(Args)]
pub struct AddArgs {
    /// What the jobs list shows.
    #[arg(long)]
    name: String,
    /// Once, at a local time "YYYY-MM-DD HH:mm".
    #[arg(long, group = "schedule", required_unless_present_any = ["every", "cron"])]
    at: Option<String>,
    /// Every N minutes.
    #[arg(long, group = "schedule")]
    every: Option<u32>,
    /// A five-field cron expression, e.g. "30 7 * * 1-5".
    #[arg(long, group = "schedule")]
    cron: Option<String>,
    /// An IANA time zone (default: the settings time zone).
    #[arg(long)]
    tz: Option<String>,
    /// A check's read tool, e.g. wallet.cardBalance.
    #[arg(long, conflicts_with = "prompt")]
    tool: Option<String>,
    /// The tool's arguments as a JSON object.
    #[arg(long, requires = "tool")]
    args: Option<String>,
    /// The condition as JSON, e.g. '{"path": "balanceYuan", "op": "lt", "value": 20}'.
    #[arg(long, requires = "tool")]
    when: Option<String>,
    /// The notification's title: a reminder's words, or a check's with {path} placeholders
    /// filled from the result.
    #[arg(long)]
    title: Option<String>,
    /// The notification's body, as the title.
    #[arg(long)]
    body: Option<String>,
    /// An agent job's prompt, run with read tools only.
    #[arg(long)]
    prompt: Option<String>,
}

fn json_arg(flag: &str, text: &Option<String>) -> Result<Option<Value>, String> {
    text.as_deref()
        .map(|t| serde_json::from_str(t).map_err(|e| format!("--{flag}: not JSON: {e}")))
        .transpose()
}

impl AddArgs {
    fn spec(&self) -> Result<Value, String> {
        let schedule = match (&self.at, self.every, &self.cron) {
            (Some(at), _, _) => json!({"at": at}),
            (_, Some(n), _) => json!({"everyMinutes": n}),
            (_, _, Some(expr)) => json!({"cron": expr}),
            _ => return Err("give one of --at, --every, --cron".into()),
        };
        let mut spec = json!({"name": self.name, "schedule": schedule});
        if let Some(tz) = &self.tz {
            spec["timeZone"] = json!(tz);
        }
        match (&self.tool, &self.prompt) {
            (Some(tool), None) => {
                let mut check = json!({"tool": tool, "notify": {"title": self.title.clone().unwrap_or_else(|| self.name.clone()), "body": self.body.clone().unwrap_or_else(|| self.name.clone())}});
                if let Some(args) = json_arg("args", &self.args)? {
                    check["args"] = args;
                }
                if let Some(when) = json_arg("when", &self.when)? {
                    check["when"] = when;
                }
                spec["check"] = check;
            }
            (None, Some(prompt)) => spec["agent"] = json!({"prompt": prompt}),
            // Neither a tool nor a prompt: a plain reminder, which posts its own words.
            (None, None) => {
                let Some(title) = &self.title else {
                    return Err(
                        "give --title (a reminder), --tool (a check) or --prompt (an agent job)"
                            .into(),
                    );
                };
                spec["reminder"] =
                    json!({"title": title, "body": self.body.clone().unwrap_or_default()});
            }
            _ => return Err("give --tool (a check) or --prompt (an agent job), not both".into()),
        }
        Ok(spec)
    }
}

pub fn run(data_dir: &Path, command: Option<JobsCommand>) -> Result<(), String> {
    let engine = crate::open::engine(data_dir, Arc::new(NobodyAsks))?;
    match command.unwrap_or(JobsCommand::List) {
        JobsCommand::List => {
            let jobs = engine.jobs();
            outln!("Jobs ({}) in {}", jobs.len(), data_dir.display());
            for job in &jobs {
                print_job(job);
            }
        }
        JobsCommand::Add(args) => {
            let job = engine
                .add_job(&args.spec()?, Owner::User)
                .map_err(|e| e.to_string())?;
            outln!("added job {}", job.id);
            print_job(&job);
        }
        JobsCommand::Remove { id } => {
            engine.remove_job(id).map_err(|e| e.to_string())?;
            outln!("removed job {id}");
        }
        JobsCommand::Pause { id, reason } => {
            print_job(&engine.pause_job(id, &reason).map_err(|e| e.to_string())?)
        }
        JobsCommand::Resume { id } => print_job(&engine.resume_job(id).map_err(|e| e.to_string())?),
    }
    Ok(())
}

fn print_job(job: &Job) {
    let what = match &job.spec.task {
        harness_core::scheduler::Task::Check(check) => format!("check {}", check.tool),
        harness_core::scheduler::Task::Agent(_) => "agent job".to_owned(),
        harness_core::scheduler::Task::Reminder(reminder) => {
            format!("reminder \"{}\"", reminder.title)
        }
    };
    let state = match &job.paused_reason {
        Some(reason) => format!("paused ({reason})"),
        None => format!("{:?}", job.state).to_lowercase(),
    };
    outln!(
        "  {:>3}  {}  · {what} · {} in {} · {state}",
        job.id,
        job.spec.name,
        job.spec.schedule,
        job.spec.time_zone
    );
    if let Some(next) = job
        .next_due_local()
        .filter(|_| job.state == JobState::Active)
    {
        outln!("       next {next}");
    }
    if let Some(last) = &job.last {
        outln!(
            "       last {} · refusals {} ({} in a row)",
            outcome_line(&last.outcome),
            job.refusals,
            job.refusals_in_row
        );
    }
}

fn outcome_line(outcome: &RunOutcome) -> String {
    match outcome {
        RunOutcome::Notified { notification } => {
            format!("notified: {} — {}", notification.title, notification.body)
        }
        RunOutcome::NotShown { notification } => format!(
            "not shown (notifications are off): {} — {}",
            notification.title, notification.body
        ),
        RunOutcome::Quiet => "ran; the condition did not hold".into(),
        RunOutcome::Refused { code, message } => format!("refused {code}: {message}"),
        RunOutcome::Failed { message } => format!("failed: {message}"),
        RunOutcome::ConditionError { message } => format!("condition error: {message}"),
        RunOutcome::AgentRan { reply, refused, .. } => {
            format!("agent replied ({refused} calls refused): {reply}")
        }
        RunOutcome::SignInRequired { service } => {
            format!("the {service} sign-in has ended: sign in again (harness campus sign-in)")
        }
        RunOutcome::Interrupted => "interrupted (the app stopped mid-run; not run again)".into(),
    }
}

/// Prints one run as `harness tick` and the demo show it.
pub fn print_report(engine: &Engine, report: &RunReport) {
    let due = match parse_tz("timeZone", &engine.settings().time_zone) {
        Ok(tz) => format_local(tz, report.due_ms),
        Err(_) => format!("{} ms", report.due_ms),
    };
    outln!(
        "  job {} {} (due {due}): {}",
        report.job,
        report.name,
        outcome_line(&report.outcome)
    );
    if let Some(reason) = &report.paused {
        outln!("    the job is now {reason}");
    }
    if let Some(notice) = &report.notice {
        outln!("    notified: {} — {}", notice.title, notice.body);
    }
}

pub async fn tick(data_dir: &Path, now: &str) -> Result<(), String> {
    let engine = crate::open::engine(data_dir, Arc::new(NobodyAsks))?;
    let zone = engine.settings().time_zone;
    let tz = parse_tz("timeZone", &zone).map_err(|e| e.to_string())?;
    let local = parse_local("--now", now).map_err(|e| e.to_string())?;
    let at = resolve_local(tz, local).timestamp_millis();
    // The jobs due, then the app's backup when its switch is on and something changed since
    // it was written (the core's wake, as the phones'); a cloud out of reach leaves the jobs'
    // tick done and says so.
    let wake = engine.wake(at).await.map_err(|e| e.to_string())?;
    outln!("{} job(s) ran at {now} ({zone})", wake.runs.len());
    for report in &wake.runs {
        print_report(&engine, report);
    }
    match wake.backup {
        Ok(None) => {}
        Ok(Some(written)) => outln!("Backed up to the cloud: {} bytes.", written.bytes),
        Err(e) => outln!("The app's backup was not written: {e}"),
    }
    Ok(())
}
