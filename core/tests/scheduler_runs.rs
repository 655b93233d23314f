//! Scheduled runs through the invoke path (seed 004: "Scheduled runs only read"): a write tool
//! scheduled by any path never runs, an ask mode is declined without a prompt, refusals are
//! recorded and pause the job, agent jobs are offered only reads, and the shell's alarm follows
//! the next wake time.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::*;
use harness_core::consent::{Permission, PermissionState};
use harness_core::invoke::{Call, Outcome, PluginHandler, ToolContext};
use harness_core::policy::{Actor, Code, Mode};
use harness_core::registry::{Effect, PluginKind, Tool};
use harness_core::scheduler::{
    AgentJob, AgentReply, JobRunner, JobState, Notification, Owner, PAUSE_AFTER_REFUSALS,
    RunOutcome,
};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const T0: &str = "2026-05-01 08:00";
const MIN: i64 = 60_000;

fn balance_check(limit: f64) -> Value {
    json!({
        "name": "余额提醒",
        "schedule": {"everyMinutes": 30},
        "check": {
            "tool": "campus.balance",
            "when": {"path": "balanceYuan", "op": "lt", "value": limit},
            "notify": {"title": "校园卡余额不足", "body": "余额还剩 {balanceYuan} 元"}
        }
    })
}

fn audit_refusals(engine: &Engine, tool: &str) -> Vec<String> {
    engine
        .audit(1000)
        .unwrap()
        .into_iter()
        .filter(|r| r.tool == tool && r.actor == "scheduler" && r.event == "decided")
        .filter_map(|r| r.detail)
        .collect()
}

#[tokio::test]
async fn a_check_notifies_with_the_result_filled_in_when_its_condition_holds() {
    let (engine, _, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    counter.answer("campus.balance", json!({"balanceYuan": 12.5}));
    let job = engine.add_job(&balance_check(20.0), Owner::User).unwrap();
    let due = job.next_due_ms.unwrap();
    let reports = engine.run_due(due).await.unwrap();
    let expected = Notification {
        title: "校园卡余额不足".into(),
        body: "余额还剩 12.5 元".into(),
    };
    assert_eq!(
        reports[0].outcome,
        RunOutcome::Notified {
            notification: expected.clone()
        }
    );
    assert_eq!(reports[0].outcome.notification(), Some(&expected));

    counter.answer("campus.balance", json!({"balanceYuan": 42}));
    let reports = engine.run_due(due + 30 * MIN).await.unwrap();
    assert_eq!(reports[0].outcome, RunOutcome::Quiet);
    assert_eq!(counter.count("campus.balance"), 2);
}

#[tokio::test]
async fn a_user_cannot_schedule_a_non_read_tool_and_it_never_runs() {
    let (engine, _, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    for (tool, effect) in [
        ("campus.reserve", "write"),
        ("campus.post", "public"),
        ("campus.pay", "money"),
    ] {
        let err = engine
            .add_job(&check_every(30, tool), Owner::User)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("check.tool: scheduled runs only read, and \"{tool}\" has the {effect} effect")
        );
    }
    let err = engine
        .add_job(&check_every(30, "campus.peek"), Owner::User)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "check.tool: \"campus.peek\" asks the user on every call, and nobody is there to ask during a scheduled run"
    );
    assert!(engine.jobs().is_empty());
    assert_eq!(counter.total(), 0);
}

#[tokio::test]
async fn the_agent_cannot_schedule_a_write_through_scheduler_create_and_it_never_runs() {
    let (engine, _, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    engine.open_conversation("c").unwrap();
    let call = Call {
        tool: "scheduler.create".into(),
        actor: Actor::Agent,
        input: check_every(30, "campus.reserve"),
        conversation: Some("c".into()),
    };
    let invocation = engine.invoke(call).await;
    assert_eq!(
        invocation.outcome,
        Outcome::Failed {
            message:
                "check.tool: scheduled runs only read, and \"campus.reserve\" has the write effect"
                    .into()
        }
    );
    assert!(engine.jobs().is_empty());
    assert_eq!(
        engine.run_due(utc(T0) + 365 * 24 * 60 * MIN).await.unwrap(),
        vec![]
    );
    assert_eq!(counter.count("campus.reserve"), 0);
}

#[tokio::test]
async fn a_read_check_created_by_the_agent_is_owned_by_the_scheduler_plugin_and_follows_its_write_mode()
 {
    let denies = Arc::new(Denies::default());
    let (engine, _, _) = engine_at(utc(T0), denies.clone());
    engine.open_conversation("c").unwrap();
    let create = || Call {
        tool: "scheduler.create".into(),
        actor: Actor::Agent,
        input: balance_check(20.0),
        conversation: Some("c".into()),
    };

    let invocation = engine.invoke(create()).await;
    assert!(
        matches!(invocation.outcome, Outcome::Ran { .. }),
        "{:?}",
        invocation.outcome
    );
    let jobs = engine.jobs();
    assert_eq!(
        jobs[0].owner,
        Owner::Plugin {
            plugin: "scheduler".into(),
            conversation: Some("c".into())
        }
    );

    // The user wants to confirm each new job: the scheduler plugin's write mode is ask.
    engine
        .set_mode("scheduler", Effect::Write, Mode::Ask)
        .unwrap();
    let invocation = engine.invoke(create()).await;
    assert!(matches!(
        invocation.outcome,
        Outcome::Refused {
            code: Code::Declined,
            ..
        }
    ));
    assert_eq!(denies.0.lock().unwrap().len(), 1);
    assert_eq!(engine.jobs().len(), 1);
}

#[tokio::test]
async fn a_tool_that_became_a_write_is_refused_at_run_time_recorded_and_paused_after_three() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    let first = Arc::new(Counter::default());
    engine
        .install(
            campus_doc("read"),
            "https://example.org/campus",
            first.clone(),
        )
        .unwrap();
    let job = engine
        .add_job(&check_every(30, "campus-doc.notices"), Owner::User)
        .unwrap();
    // The document is updated and now declares notices as a write.
    engine.uninstall("campus-doc").unwrap();
    let second = Arc::new(Counter::default());
    engine
        .install(
            campus_doc("write"),
            "https://example.org/campus",
            second.clone(),
        )
        .unwrap();

    let mut due = job.next_due_ms.unwrap();
    for run in 1..=PAUSE_AFTER_REFUSALS {
        let reports = engine.run_due(due).await.unwrap();
        let RunOutcome::Refused { code, .. } = &reports[0].outcome else {
            panic!("{:?}", reports[0].outcome)
        };
        assert_eq!(code, "scheduler_read_only");
        let recorded = engine.job(job.id).unwrap();
        assert_eq!((recorded.refusals_in_row, recorded.refusals), (run, run));
        assert_eq!(reports[0].paused.is_some(), run == PAUSE_AFTER_REFUSALS);
        due += 30 * MIN;
    }
    let paused = engine.job(job.id).unwrap();
    assert_eq!(paused.state, JobState::Paused);
    assert_eq!(
        paused.paused_reason.as_deref(),
        Some(
            "paused after 3 refusals in a row: scheduler_read_only: Scheduled runs only read, and \"campus-doc.notices\" has the write effect. It can only run from a conversation or a tap."
        )
    );
    assert!(
        engine
            .run_due(due + 24 * 60 * MIN)
            .await
            .unwrap()
            .is_empty(),
        "a paused job does not run"
    );
    assert_eq!(first.total() + second.total(), 0);
    assert_eq!(
        audit_refusals(&engine, "campus-doc.notices"),
        vec!["refuse:scheduler_read_only"; 3]
    );
}

fn campus_doc(notices_effect: &str) -> harness_core::registry::Plugin {
    let mut manifest = campus_manifest(notices_effect);
    manifest["id"] = json!("campus-doc");
    harness_core::registry::Plugin::load(
        harness_core::registry::parse_manifest(&manifest).unwrap(),
        PluginKind::Official,
    )
    .unwrap()
}

#[tokio::test]
async fn an_ask_mode_read_is_declined_never_prompted_and_three_in_a_row_pause_the_job() {
    // NobodyThere fails the test if anything asks.
    let (engine, _, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    let job = engine.add_job(&balance_check(20.0), Owner::User).unwrap();
    engine.set_mode("campus", Effect::Read, Mode::Ask).unwrap();
    let mut due = job.next_due_ms.unwrap();
    for _ in 0..PAUSE_AFTER_REFUSALS {
        let reports = engine.run_due(due).await.unwrap();
        assert!(
            matches!(&reports[0].outcome, RunOutcome::Refused { code, .. } if code == "declined"),
            "{:?}",
            reports[0].outcome
        );
        due += 30 * MIN;
    }
    let job = engine.job(job.id).unwrap();
    assert_eq!(job.state, JobState::Paused);
    assert!(job.paused_reason.unwrap().starts_with("paused after 3 refusals in a row: declined: \"campus.balance\" would need the user's approval"));
    assert_eq!(counter.total(), 0);
    assert_eq!(
        audit_refusals(&engine, "campus.balance"),
        vec!["refuse:declined"; 3]
    );

    // The user sets the mode back and resumes it: it runs again, the streak starts over.
    engine.set_mode("campus", Effect::Read, Mode::Auto).unwrap();
    let resumed = engine.resume_job(job.id).unwrap();
    assert_eq!(
        (resumed.state, resumed.refusals_in_row, resumed.refusals),
        (JobState::Active, 0, 3)
    );
    engine.run_due(resumed.next_due_ms.unwrap()).await.unwrap();
    assert_eq!(counter.count("campus.balance"), 1);
}

#[tokio::test]
async fn a_run_that_is_not_refused_breaks_the_streak() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    let job = engine
        .add_job(&check_every(30, "campus.balance"), Owner::User)
        .unwrap();
    let mut due = job.next_due_ms.unwrap();
    for mode in [Mode::Ask, Mode::Ask, Mode::Auto, Mode::Ask, Mode::Ask] {
        engine.set_mode("campus", Effect::Read, mode).unwrap();
        engine.run_due(due).await.unwrap();
        due += 30 * MIN;
    }
    let job = engine.job(job.id).unwrap();
    assert_eq!(
        (job.state, job.refusals_in_row, job.refusals),
        (JobState::Active, 2, 4)
    );
}

/// An agent loop played from a script: checks what it is offered, then makes its calls.
struct Scripted {
    calls: Vec<(&'static str, Value)>,
    offered: Mutex<Vec<String>>,
    outcomes: Mutex<Vec<Outcome>>,
}

#[async_trait]
impl JobRunner for Scripted {
    async fn run(&self, job: &AgentJob) -> Result<AgentReply, String> {
        *self.offered.lock().unwrap() = job.tools.iter().map(|t| t.name.clone()).collect();
        for (tool, input) in &self.calls {
            let invocation = job.call(tool, input.clone()).await;
            self.outcomes.lock().unwrap().push(invocation.outcome);
        }
        Ok(AgentReply {
            text: format!("done: {}", job.prompt),
            notification: Some(Notification {
                title: "早报".into(),
                body: "ok".into(),
            }),
        })
    }
}

#[tokio::test]
async fn an_agent_job_is_offered_only_reads_and_its_writes_are_refused() {
    let (engine, _, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    let runner = Arc::new(Scripted {
        calls: vec![
            ("campus__balance", json!({})),
            ("campus__reserve", json!({})),
            ("campus.post", json!({})),
            ("scheduler__create", check_every(30, "campus.balance")),
        ],
        offered: Mutex::default(),
        outcomes: Mutex::default(),
    });
    engine.set_job_runner(runner.clone());
    let spec =
        json!({"name": "早报", "schedule": {"cron": "0 7 * * *"}, "agent": {"prompt": "看看余额"}});
    let job = engine.add_job(&spec, Owner::User).unwrap();
    let reports = engine.run_due(job.next_due_ms.unwrap()).await.unwrap();

    // Offered: the model's tool list filtered to what a scheduled run can run — reads only.
    let offered = runner.offered.lock().unwrap().clone();
    let all: Vec<String> = engine
        .model_tools(None)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        all.contains(&"campus__reserve".to_owned())
            && all.contains(&"scheduler__create".to_owned())
    );
    for name in &offered {
        let tool = engine
            .tool(&harness_core::registry::tool_id(name).unwrap())
            .unwrap();
        assert_eq!(tool.effect, Effect::Read, "{name} was offered");
        assert!(!tool.always_ask, "{name} was offered");
    }
    assert!(
        offered.contains(&"campus__balance".to_owned())
            && offered.contains(&"dashboard__sources".to_owned())
    );
    assert!(!offered.contains(&"campus__peek".to_owned()));

    let codes: Vec<Option<Code>> = runner
        .outcomes
        .lock()
        .unwrap()
        .iter()
        .map(|o| match o {
            Outcome::Refused { code, .. } => Some(*code),
            _ => None,
        })
        .collect();
    assert_eq!(
        codes,
        [
            None,
            Some(Code::SchedulerReadOnly),
            Some(Code::SchedulerReadOnly),
            Some(Code::SchedulerReadOnly)
        ]
    );
    assert_eq!(counter.count("campus.balance"), 1);
    assert_eq!(
        counter.count("campus.reserve") + counter.count("campus.post"),
        0
    );
    assert_eq!(engine.jobs().len(), 1, "scheduler.create did not run");
    match &reports[0].outcome {
        RunOutcome::AgentRan {
            reply,
            calls,
            refused,
            last_refusal,
            ..
        } => {
            assert_eq!((reply.as_str(), *calls, *refused), ("done: 看看余额", 4, 3));
            assert!(
                last_refusal
                    .as_deref()
                    .unwrap()
                    .starts_with("scheduler_read_only: scheduler.create: ")
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        engine.job(job.id).unwrap().refusals_in_row,
        1,
        "a run with refused calls counts towards the pause"
    );
}

#[tokio::test]
async fn an_agent_job_without_an_agent_loop_fails_and_is_kept() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    let spec =
        json!({"name": "早报", "schedule": {"everyMinutes": 60}, "agent": {"prompt": "看看余额"}});
    let job = engine.add_job(&spec, Owner::User).unwrap();
    let reports = engine.run_due(job.next_due_ms.unwrap()).await.unwrap();
    assert_eq!(
        reports[0].outcome,
        RunOutcome::Failed {
            message: "no agent loop is available to run agent jobs on this device".into()
        }
    );
    assert_eq!(engine.job(job.id).unwrap().state, JobState::Active);
}

/// Holds its call until the test lets it go.
#[derive(Default)]
struct Gate {
    entered: AtomicBool,
    open: tokio::sync::Notify,
    calls: Mutex<u32>,
}

#[async_trait]
impl PluginHandler for Gate {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        *self.calls.lock().unwrap() += 1;
        self.entered.store(true, Ordering::SeqCst);
        self.open.notified().await;
        Ok(json!({"ok": true}))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_job_never_runs_twice_concurrently() {
    let gate = Arc::new(Gate::default());
    let clock = ManualClock::at(utc(T0));
    let mut options = Options::new(Arc::new(NobodyThere));
    options.clock = clock.clone();
    options.catalog = Arc::new(CampusCatalog(gate.clone()));
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    let job = engine
        .add_job(&check_every(30, "campus.balance"), Owner::User)
        .unwrap();
    let due = job.next_due_ms.unwrap();

    let first = tokio::spawn({
        let engine = engine.clone();
        async move { engine.run_due(due).await.unwrap() }
    });
    while !gate.entered.load(Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    // The first run is inside the tool: a second wake-up finds the job claimed.
    assert_eq!(engine.job(job.id).unwrap().running_due_ms, Some(due));
    assert_eq!(engine.due_jobs(due + 60 * MIN), Vec::<i64>::new());
    assert!(engine.run_due(due + 60 * MIN).await.unwrap().is_empty());
    gate.open.notify_one();
    let reports = first.await.unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(*gate.calls.lock().unwrap(), 1);
    assert_eq!(engine.job(job.id).unwrap().running_due_ms, None);
}

#[tokio::test]
async fn the_shell_alarm_follows_the_next_wake_time_and_the_exact_alarm_permission() {
    let wake = Arc::new(RecordingWake::default());
    let clock = ManualClock::at(utc(T0));
    let mut options = Options::new(Arc::new(NobodyThere));
    options.clock = clock.clone();
    options.catalog = Arc::new(CampusCatalog(Arc::new(Counter::default())));
    options.wake = wake.clone();
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    // At open the core does not know what the shell armed before, so it tells it once.
    assert_eq!(
        *wake.0.lock().unwrap(),
        vec![None],
        "no jobs: nothing armed"
    );

    let a = engine
        .add_job(&check_every(30, "campus.balance"), Owner::User)
        .unwrap();
    let b = engine
        .add_job(&check_every(10, "campus.balance"), Owner::User)
        .unwrap();
    let (at_a, at_b) = (a.next_due_ms.unwrap(), b.next_due_ms.unwrap());
    engine
        .report_permission(Permission::ExactAlarm, PermissionState::Granted)
        .unwrap();
    engine.run_due(at_b).await.unwrap();
    engine.remove_job(b.id).unwrap();
    engine.pause_job(a.id, "paused by the user").unwrap();
    assert_eq!(
        *wake.0.lock().unwrap(),
        vec![
            None,
            Some((at_a, false)),
            Some((at_b, false)),
            Some((at_b, true)),
            Some((at_b + 10 * MIN, true)),
            Some((at_a, true)),
            None
        ]
    );
}

#[tokio::test]
async fn a_check_with_a_missing_result_field_records_an_error_naming_it() {
    let (engine, _, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    counter.answer("campus.balance", json!({"status": "verification_required"}));
    let job = engine.add_job(&balance_check(20.0), Owner::User).unwrap();
    let reports = engine.run_due(job.next_due_ms.unwrap()).await.unwrap();
    assert_eq!(
        reports[0].outcome,
        RunOutcome::ConditionError {
            message: "check.when.path: \"balanceYuan\" is not in the result".into()
        }
    );
}

#[tokio::test]
async fn job_spec_errors_name_the_field() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    let base = balance_check(20.0);
    let with = |pointer: &str, value: Value| {
        let mut spec = base.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        spec.pointer_mut(parent).unwrap()[key] = value;
        spec
    };
    let cases = [
        (
            with("/check/tool", json!("campus.nothing")),
            "check.tool: no tool \"campus.nothing\" is installed",
        ),
        (
            with(
                "/check/when",
                json!({"path": "balanceYuan", "op": "lt", "value": "20"}),
            ),
            "check.when.value: \"lt\" compares with a number, got \"20\"",
        ),
        (
            with("/check/notify/body", json!("余额 {balanceYuan")),
            "check.notify.body: \"{\" at character 4 is not closed; write {{ for a brace",
        ),
        (
            with("/name", json!("")),
            "name: expected a name of 1 to 100 characters",
        ),
    ];
    for (spec, message) in cases {
        assert_eq!(
            engine.add_job(&spec, Owner::User).unwrap_err().to_string(),
            message
        );
    }
    let notices = json!({"name": "n", "schedule": {"everyMinutes": 5}, "check": {"tool": "campus.notices", "args": {"limit": 0}, "notify": {"title": "t", "body": "b"}}});
    // The tool's own schema checks the arguments, naming the field inside them.
    assert_eq!(
        engine
            .add_job(&notices, Owner::User)
            .unwrap_err()
            .to_string(),
        "check.args: input.limit: 0 is less than the minimum of 1"
    );
}

#[tokio::test]
async fn dashboard_sources_lists_each_enabled_plugins_data_sources() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    let invocation = engine
        .invoke(Call {
            tool: "dashboard.sources".into(),
            actor: Actor::Scheduler,
            input: json!({}),
            conversation: None,
        })
        .await;
    let Outcome::Ran { result, .. } = invocation.outcome else {
        panic!("{:?}", invocation.outcome)
    };
    assert_eq!(
        result,
        json!({"sources": [{"plugin": "campus", "key": "balance", "title": "余额", "tool": "campus.balance", "modelName": "campus__balance", "ttlMs": 60000}]})
    );
    engine.set_enabled("campus", false).unwrap();
    assert!(engine.data_sources().is_empty());
}

#[tokio::test]
async fn scheduler_list_pause_and_remove_through_the_plugin() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    let job = engine.add_job(&balance_check(20.0), Owner::User).unwrap();
    let call = |tool: &str, input: Value| Call {
        tool: tool.into(),
        actor: Actor::User,
        input,
        conversation: None,
    };
    let Outcome::Ran { result, .. } = engine
        .invoke(call("scheduler.list", json!({})))
        .await
        .outcome
    else {
        panic!()
    };
    assert_eq!(result["jobs"][0]["name"], "余额提醒");
    assert_eq!(result["jobs"][0]["nextDue"], "2026-05-01 16:30");
    let Outcome::Ran { result, .. } = engine
        .invoke(call("scheduler.pause", json!({"id": job.id})))
        .await
        .outcome
    else {
        panic!()
    };
    assert_eq!(
        (
            result["job"]["state"].as_str(),
            result["job"]["pausedReason"].as_str()
        ),
        (Some("paused"), Some("paused by the user"))
    );
    let Outcome::Ran { .. } = engine
        .invoke(call("scheduler.remove", json!({"id": job.id})))
        .await
        .outcome
    else {
        panic!()
    };
    assert!(engine.jobs().is_empty());
    let outcome = engine
        .invoke(call("scheduler.remove", json!({"id": job.id})))
        .await
        .outcome;
    assert_eq!(
        outcome,
        Outcome::Failed {
            message: format!("no job {}", job.id)
        }
    );
}

#[tokio::test]
async fn a_tool_that_became_always_ask_is_declined_at_run_time_without_a_prompt() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    engine
        .install(
            campus_doc("read"),
            "https://example.org/campus",
            Arc::new(Counter::default()),
        )
        .unwrap();
    let job = engine
        .add_job(&check_every(30, "campus-doc.notices"), Owner::User)
        .unwrap();
    engine.uninstall("campus-doc").unwrap();
    let mut manifest = campus_manifest("read");
    manifest["id"] = json!("campus-doc");
    manifest["tools"][1]["alwaysAsk"] = json!(true);
    let updated = harness_core::registry::Plugin::load(
        harness_core::registry::parse_manifest(&manifest).unwrap(),
        PluginKind::Official,
    )
    .unwrap();
    let counter = Arc::new(Counter::default());
    engine
        .install(updated, "https://example.org/campus", counter.clone())
        .unwrap();

    let reports = engine.run_due(job.next_due_ms.unwrap()).await.unwrap();
    assert!(
        matches!(&reports[0].outcome, RunOutcome::Refused { code, .. } if code == "declined"),
        "{:?}",
        reports[0].outcome
    );
    assert_eq!(counter.total(), 0);
    assert_eq!(engine.job(job.id).unwrap().refusals, 1);
}

#[tokio::test]
async fn a_removed_jobs_id_is_never_given_to_another() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    let first = engine
        .add_job(&check_every(30, "campus.balance"), Owner::User)
        .unwrap();
    engine.remove_job(first.id).unwrap();
    let second = engine
        .add_job(&check_every(30, "campus.balance"), Owner::User)
        .unwrap();
    assert_eq!((first.id, second.id), (1, 2));
}

#[tokio::test]
async fn a_check_paused_after_refusals_notifies_once_with_why_and_its_card_offers_the_fix() {
    // DESIGN §7 / issue 37.4: a check paused after refusals tells the student once, in words,
    // with the tap that fixes it (the plugin turned off → its settings).
    let (engine, _, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    let engine = Arc::new(engine);
    let job = engine.add_job(&balance_check(20.0), Owner::User).unwrap();
    engine.set_enabled("campus", false).unwrap();
    let mut due = job.next_due_ms.unwrap();
    let mut notices = Vec::new();
    for _ in 0..PAUSE_AFTER_REFUSALS + 1 {
        for report in engine.run_due(due).await.unwrap() {
            notices.push(report.notice);
        }
        due += 30 * MIN;
    }
    // Three runs refused, the third pausing; the fourth does not run. One notice, at the pause.
    assert_eq!(
        notices,
        vec![
            None,
            None,
            Some(Notification {
                title: "定时任务「余额提醒」已暂停".into(),
                body: "插件「campus」已关闭或不可用。点此打开它，再恢复任务。".into(),
            })
        ]
    );
    assert_eq!(counter.total(), 0);
    let screens =
        harness_core::screens::Screens::new(engine.clone(), harness_core::screens::Live::new());
    let row = &screens.jobs().jobs[0];
    assert_eq!(
        row.notice.as_deref(),
        Some("插件「campus」关闭了或不让它在无人时读取：在插件设置里打开，再恢复")
    );
    let fix = row.fix.as_ref().expect("a fix");
    assert_eq!(
        (fix.label.as_str(), &fix.action),
        (
            "打开插件设置",
            &harness_core::screens::Action::Open {
                route: harness_core::screens::Route::Plugins
            }
        )
    );
    // The student's own pause offers no fix.
    engine.set_enabled("campus", true).unwrap();
    engine.resume_job(job.id).unwrap();
    engine.pause_job(job.id, "paused by the user").unwrap();
    assert_eq!(screens.jobs().jobs[0].fix, None);
}
