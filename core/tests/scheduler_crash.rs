//! The crash rule (core/src/scheduler/mod.rs): a job killed mid-run is neither lost nor run
//! twice for the same due instant. A child process (this test binary, re-executed to run only
//! `scheduler_run_child`) opens the data directory and runs the due job, whose tool announces
//! itself and then hangs; the parent kills the child with SIGKILL inside the tool, reopens the
//! directory and checks what happens next.
#![cfg(unix)]

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use common::*;
use harness_core::invoke::{PluginHandler, ToolContext};
use harness_core::registry::Tool;
use harness_core::scheduler::{JobState, Owner, RunOutcome};
use harness_core::{Engine, Options};
use serde_json::Value;

const CHILD_DIR: &str = "HARNESS_SCHEDULER_CRASH_DIR";
const CHILD_NOW: &str = "HARNESS_SCHEDULER_CRASH_NOW";
const IN_TOOL: &str = "scheduler-child-in-tool";
const HOUR: i64 = 3_600_000;

fn open(dir: &Path, now: i64, handler: Arc<dyn PluginHandler>) -> (Engine, Arc<ManualClock>) {
    let clock = ManualClock::at(now);
    let mut options = Options::new(Arc::new(NobodyThere));
    options.clock = clock.clone();
    options.catalog = Arc::new(CampusCatalog(handler));
    (Engine::open(dir, options).unwrap(), clock)
}

/// Announces the call on stdout, then never returns.
struct Hangs;

#[async_trait]
impl PluginHandler for Hangs {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        println!("{IN_TOOL}");
        std::io::stdout().flush().unwrap();
        loop {
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    }
}

#[tokio::test]
#[ignore = "the child of a_job_killed_mid_run_is_not_lost_and_not_run_twice; runs only when re-executed"]
async fn scheduler_run_child() {
    let dir = std::env::var_os(CHILD_DIR)
        .expect("run by a_job_killed_mid_run_is_not_lost_and_not_run_twice");
    let now: i64 = std::env::var(CHILD_NOW).unwrap().parse().unwrap();
    let (engine, _) = open(Path::new(&dir), now, Arc::new(Hangs));
    engine.run_due(now).await.unwrap();
    unreachable!("the tool never returns");
}

#[tokio::test]
async fn a_job_killed_mid_run_is_not_lost_and_not_run_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let t0 = utc("2026-05-01 08:00");
    let due = {
        let (engine, _) = open(tmp.path(), t0, Arc::new(Counter::default()));
        engine.accept_terms().unwrap();
        engine
            .add_job(&check_every(60, "campus.balance"), Owner::User)
            .unwrap()
            .next_due_ms
            .unwrap()
    };
    assert_eq!(due, t0 + HOUR);

    let mut child = child::rerun(
        "scheduler_run_child",
        [
            (CHILD_DIR, tmp.path().as_os_str().to_owned()),
            (CHILD_NOW, due.to_string().into()),
        ],
    );
    assert!(
        child::reached(&mut child::lines(&mut child), IN_TOOL),
        "the child never reached the tool"
    );
    child::kill(&mut child); // inside the tool

    // The kill landed mid-run: the claim for `due` is in the database.
    {
        let conn = rusqlite::Connection::open(tmp.path().join(harness_core::store::DATABASE_FILE))
            .unwrap();
        let claim: Option<i64> = conn
            .query_row("SELECT claim_due_ms FROM jobs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(claim, Some(due));
    }

    let counter = Arc::new(Counter::default());
    let (engine, clock) = open(tmp.path(), due + 5 * 60_000, counter.clone());
    let jobs = engine.jobs();
    assert_eq!(jobs.len(), 1, "the job is not lost");
    let job = &jobs[0];
    assert_eq!(job.state, JobState::Active);
    assert_eq!(job.running_due_ms, None);
    let last = job.last.clone().unwrap();
    assert_eq!((last.due_ms, last.outcome), (due, RunOutcome::Interrupted));
    assert_eq!(job.next_due_ms, Some(due + HOUR));

    // Waking again for the interrupted instant runs nothing: it may already have run.
    assert!(engine.run_due(due + 5 * 60_000).await.unwrap().is_empty());
    assert_eq!(counter.total(), 0);
    // The next due instant runs, once.
    clock.set(due + HOUR);
    let reports = engine.run_due(due + HOUR).await.unwrap();
    assert_eq!(
        reports.iter().map(|r| r.due_ms).collect::<Vec<_>>(),
        vec![due + HOUR]
    );
    assert_eq!(counter.count("campus.balance"), 1);
    assert!(engine.run_due(due + HOUR).await.unwrap().is_empty());
    assert_eq!(counter.count("campus.balance"), 1);
    drop(engine);

    let conn =
        rusqlite::Connection::open(tmp.path().join(harness_core::store::DATABASE_FILE)).unwrap();
    let (claim, next): (Option<i64>, Option<i64>) = conn
        .query_row("SELECT claim_due_ms, next_due_ms FROM jobs", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((claim, next), (None, Some(due + 2 * HOUR)));
}
