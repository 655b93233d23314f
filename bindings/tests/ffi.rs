//! The exported API from Rust: a `Platform` implemented here, calls from several threads, a
//! prompt answered from another thread, events, and close / use-after-close (STYLE.md §8).

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

use async_trait::async_trait;
use harness_core::screens::{Action, WidgetState};
use harness_ffi::*;
use tokio::sync::oneshot;

#[path = "../../core/tests/common/model_server.rs"]
mod model_server;

/// A prompt waiting for the approver thread.
type Pending = (u64, ApprovalPrompt, oneshot::Sender<Answer>);

/// A prompt the approver answered, with the name of the thread it answered on.
type Seen = (u64, ApprovalPrompt, String);

/// A `Platform` whose prompts are answered by another thread, from a script of answers.
struct RustPlatform {
    to_approver: Mutex<mpsc::Sender<Pending>>,
    asked_on: Mutex<Vec<String>>,
    /// Every call other than `ask_approval` and the secrets, in order.
    calls: Mutex<Vec<String>>,
}

impl RustPlatform {
    /// Starts the approver thread; it answers each prompt with the next scripted answer and
    /// reports every prompt it answered on the returned receiver.
    fn with_answers(answers: Vec<Answer>) -> (Arc<Self>, mpsc::Receiver<Seen>) {
        let (tx, rx) = mpsc::channel::<Pending>();
        let (seen_tx, seen_rx) = mpsc::channel();
        thread::Builder::new()
            .name("approver".into())
            .spawn(move || {
                let mut answers = answers.into_iter();
                for (id, prompt, reply) in rx {
                    let _ = seen_tx.send((
                        id,
                        prompt,
                        thread::current().name().unwrap_or("").to_owned(),
                    ));
                    match answers.next() {
                        Some(answer) => {
                            let _ = reply.send(answer);
                        }
                        None => drop(reply), // no scripted answer: the platform fails
                    }
                }
            })
            .unwrap();
        (
            Arc::new(Self {
                to_approver: Mutex::new(tx),
                asked_on: Mutex::default(),
                calls: Mutex::default(),
            }),
            seen_rx,
        )
    }
}

#[async_trait]
impl Platform for RustPlatform {
    async fn ask_approval(&self, id: u64, prompt: ApprovalPrompt) -> Result<Answer, HarnessError> {
        self.asked_on
            .lock()
            .unwrap()
            .push(thread::current().name().unwrap_or("").to_owned());
        let (reply, answer) = oneshot::channel();
        self.to_approver
            .lock()
            .unwrap()
            .send((id, prompt, reply))
            .unwrap();
        answer.await.map_err(|_| HarnessError::Platform {
            reason: "the approval sheet was dismissed".into(),
        })
    }
    fn post_notification(&self, n: AppNotification) -> Result<(), HarnessError> {
        self.record(format!(
            "post {} {:?} {} / {}",
            n.id, n.plugin, n.title, n.body
        ));
        Ok(())
    }
    fn arm_wake_up(&self, at: i64, exact: bool) -> Result<(), HarnessError> {
        self.record(format!("arm {at} exact={exact}"));
        Ok(())
    }
    fn cancel_wake_up(&self) -> Result<(), HarnessError> {
        self.record("cancel".into());
        Ok(())
    }
    fn open_screen(&self, route: String) -> Result<(), HarnessError> {
        self.record(format!("open {route}"));
        Ok(())
    }
    fn read_secret(&self, key: String) -> Result<Option<String>, HarnessError> {
        Ok((key == "model.apiKey").then(|| "sk-ffi-test".to_owned()))
    }
    fn write_secret(&self, _: String, _: Option<String>) -> Result<(), HarnessError> {
        Ok(())
    }
    fn permission_state(&self, permission: Permission) -> Result<PermissionState, HarnessError> {
        self.record(format!("permission {permission:?}"));
        match permission {
            Permission::Notifications => Ok(PermissionState::Granted),
            Permission::ExactAlarm => Err(HarnessError::Platform {
                reason: "no such setting".into(),
            }),
        }
    }
    async fn sign_in(&self, _: SignInSheet, _: String) -> Result<String, HarnessError> {
        Err(HarnessError::Platform {
            reason: "no browser here".into(),
        })
    }
    async fn ask_elicitation(
        &self,
        _: u64,
        _: ElicitationSheet,
    ) -> Result<ElicitationReply, HarnessError> {
        Err(HarnessError::Platform {
            reason: "no sheet here".into(),
        })
    }

    async fn pick_file(&self, _: String) -> Result<Option<PickedDocument>, HarnessError> {
        Ok(None)
    }

    async fn request_permission(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Unknown)
    }
}

impl RustPlatform {
    fn record(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }

    fn take_calls(&self) -> Vec<String> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<HarnessEvent>>,
}

impl EventListener for Recorder {
    fn on_event(&self, event: HarnessEvent) -> Result<(), HarnessError> {
        self.events.lock().unwrap().push(event);
        Ok(())
    }
}

const SEATS: &str = r#"{"canteen":"学一食堂","seats":2,"time":"12:00"}"#;

/// The sample plugins' code: this test build of the library has the development feature.
fn samples() -> DevelopmentOptions {
    DevelopmentOptions {
        sample_plugins: true,
        campus_origin: None,
        servers_on_this_machine: false,
        bundles: vec![],
    }
}

fn data_dir(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("harness-ffi-test-{}-{name}", std::process::id()));
    dir.to_string_lossy().into_owned()
}

fn open(
    name: &str,
    answers: Vec<Answer>,
) -> (Arc<Harness>, Arc<RustPlatform>, mpsc::Receiver<Seen>) {
    let (platform, seen) = RustPlatform::with_answers(answers);
    let harness =
        Harness::open_for_development(data_dir(name), platform.clone(), samples()).unwrap();
    harness.install_sample_plugins().unwrap();
    harness
        .set_consent(Consent {
            terms_accepted: true,
            met: vec![],
        })
        .unwrap();
    harness.open_conversation("c1".into()).unwrap();
    (harness, platform, seen)
}

fn refused(invocation: &Invocation) -> Option<Code> {
    match &invocation.outcome {
        Outcome::Refused { code, .. } => Some(*code),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_is_answered_by_the_platform_from_another_thread() {
    let (harness, platform, seen) = open("answered", vec![Answer::Allow]);
    let caller = thread::current().name().unwrap().to_owned();
    let invocation = harness
        .invoke_as_agent("c1".into(), "canteen.reserve".into(), SEATS.into())
        .await
        .unwrap();

    let (id, prompt, answered_on) = seen.recv().unwrap();
    assert_eq!(id, 1);
    assert_eq!(answered_on, "approver");
    assert_eq!(prompt.tool, "canteen.reserve");
    assert_eq!(prompt.kind, PromptKind::Ordinary);
    assert_eq!(
        prompt.offers,
        vec![Answer::Allow, Answer::Deny, Answer::AlwaysAllow]
    );
    assert_eq!(
        prompt.input_json,
        r#"{"canteen":"学一食堂","seats":2,"time":"12:00"}"#
    );
    assert_eq!(invocation.answer, Some(Answer::Allow));
    assert_eq!(
        invocation.outcome,
        Outcome::Ran {
            result_json: r#"{"canteen":"学一食堂","reservationId":"R-20261130-0042","seats":2,"status":"reserved","time":"12:00"}"#.into(),
            for_model: r#"{"canteen":"学一食堂","reservationId":"R-20261130-0042","seats":2,"status":"reserved","time":"12:00"}"#.into(),
        }
    );
    // The platform was asked on the thread that awaits the call, with no hop to a worker of
    // the library's runtime: from Kotlin, a worker would have to be attached to the JVM.
    assert_eq!(platform.asked_on.lock().unwrap().as_slice(), [caller]);
}

#[tokio::test]
async fn a_platform_that_fails_declines_the_call_and_withdraws_the_prompt() {
    let (harness, _platform, _seen) = open("fails", vec![]);
    let events = Arc::new(Recorder::default());
    let _subscription = harness.subscribe(events.clone()).unwrap();
    let invocation = harness
        .invoke_as_agent("c1".into(), "canteen.reserve".into(), SEATS.into())
        .await
        .unwrap();

    assert_eq!(invocation.answer, Some(Answer::Deny));
    assert_eq!(refused(&invocation), Some(Code::Declined));
    let events = events.events.lock().unwrap();
    assert!(
        matches!(&events[0], HarnessEvent::ApprovalRequested { id: 1, prompt } if prompt.tool == "canteen.reserve")
    );
    assert_eq!(events[1], HarnessEvent::ApprovalWithdrawn { id: 1 });
    assert_eq!(events.len(), 2);
}

#[test]
fn calls_from_several_threads_each_get_their_own_answer() {
    // Eight threads each ask once; the approver answers in arrival order, alternating.
    let answers: Vec<Answer> = (0..8)
        .map(|i| {
            if i % 2 == 0 {
                Answer::Allow
            } else {
                Answer::Deny
            }
        })
        .collect();
    let (harness, _platform, seen) = open("threads", answers);
    for i in 0..8 {
        harness.open_conversation(format!("t{i}")).unwrap();
    }
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let harness = harness.clone();
            thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    // A read that runs, a decision, then a write that asks.
                    let read = harness
                        .invoke_as_agent(format!("t{i}"), "wallet.cardBalance".into(), "{}".into())
                        .await
                        .unwrap();
                    assert!(matches!(read.outcome, Outcome::Ran { .. }));
                    let decided = harness
                        .decide(
                            Actor::Agent,
                            "canteen.reserve".into(),
                            SEATS.into(),
                            Some(format!("t{i}")),
                        )
                        .unwrap();
                    assert_eq!(decided.step, Step::Mode);
                    harness
                        .invoke_as_agent(format!("t{i}"), "canteen.reserve".into(), SEATS.into())
                        .await
                        .unwrap()
                })
            })
        })
        .collect();
    let results: Vec<Invocation> = handles.into_iter().map(|h| h.join().unwrap()).collect();

    let ran = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Ran { .. }))
        .count();
    let declined = results
        .iter()
        .filter(|r| refused(r) == Some(Code::Declined))
        .count();
    assert_eq!((ran, declined), (4, 4));
    // Every prompt got a distinct id, and each answer matches the outcome it produced.
    let mut ids: Vec<u64> = seen.try_iter().map(|(id, _, _)| id).collect();
    ids.sort();
    assert_eq!(ids, (1..=8).collect::<Vec<u64>>());
    for r in &results {
        match r.answer {
            Some(Answer::Allow) => assert!(matches!(r.outcome, Outcome::Ran { .. })),
            Some(Answer::Deny) => assert_eq!(refused(r), Some(Code::Declined)),
            other => panic!("unexpected answer {other:?}"),
        }
    }
    // 8 reads + 8 asks, each asked one answered: 8×(decided, ran) + 8×(decided, answered) + 4 ran + 4 stopped.
    assert_eq!(harness.audit_log().unwrap().len(), 16 + 16 + 8);
}

#[test]
fn taps_from_several_threads_all_reach_the_card() {
    let (harness, _platform, _seen) = open("taps", vec![]);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let harness = harness.clone();
            thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                for _ in 0..5 {
                    let r =
                        rt.block_on(harness.invoke_as_user(
                            "wallet.recharge".into(),
                            r#"{"amountYuan":1}"#.into(),
                        ))
                        .unwrap();
                    assert!(matches!(r.outcome, Outcome::Ran { .. }));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let balance = rt
        .block_on(harness.invoke_as_user("wallet.cardBalance".into(), "{}".into()))
        .unwrap();
    assert_eq!(
        balance.outcome,
        Outcome::Ran {
            result_json: r#"{"balanceYuan":62.5,"dailyLimitYuan":200.0,"spentTodayYuan":18.5}"#
                .into(),
            for_model: r#"{"balanceYuan":62.5,"dailyLimitYuan":200.0,"spentTodayYuan":18.5}"#
                .into(),
        }
    );
}

#[tokio::test]
async fn after_close_every_method_fails_with_closed() {
    let (harness, _platform, _seen) = open("closed", vec![]);
    harness.close();
    harness.close(); // twice does nothing

    let closed = |r: Result<(), HarnessError>| {
        assert!(matches!(r, Err(HarnessError::Closed { .. })), "{r:?}")
    };
    closed(harness.ping());
    closed(harness.install_sample_plugins());
    closed(harness.plugins().map(drop));
    closed(harness.set_mode("wallet".into(), Effect::Money, Mode::Off));
    closed(harness.set_enabled("wallet".into(), false));
    closed(harness.remove_plugin("wallet".into()));
    closed(harness.set_rules(vec![]));
    closed(harness.set_conversation_rules("c1".into(), vec![]));
    closed(harness.open_conversation("c2".into()).map(drop));
    closed(harness.conversation("c1".into()).map(drop));
    let settings = ConversationSettings {
        model: None,
        thinking_effort: None,
        preset: Preset::AutoEdit,
        plan_mode: false,
    };
    closed(harness.set_conversation_settings("c1".into(), settings));
    closed(harness.set_conversation_scope("c1".into(), Scope::default()));
    closed(harness.begin_turn("c1".into()));
    closed(
        harness
            .invoke_as_user("wallet.cardBalance".into(), "{}".into())
            .await
            .map(drop),
    );
    closed(
        harness
            .invoke_as_agent("c1".into(), "wallet.cardBalance".into(), "{}".into())
            .await
            .map(drop),
    );
    closed(
        harness
            .invoke_as_scheduler("wallet.cardBalance".into(), "{}".into())
            .await
            .map(drop),
    );
    closed(
        harness
            .decide(Actor::User, "wallet.cardBalance".into(), "{}".into(), None)
            .map(drop),
    );
    closed(harness.model_tools(None).map(drop));
    closed(harness.accept_terms());
    closed(harness.set_consent(Consent {
        terms_accepted: true,
        met: vec![],
    }));
    closed(harness.audit_log().map(drop));
    closed(harness.subscribe(Arc::new(Recorder::default())).map(drop));
}

#[tokio::test]
async fn close_from_another_thread_while_calls_run_never_crashes() {
    let (harness, _platform, _seen) = open("race", vec![]);
    // The other thread closes once a call has run (an event, not a sleep: on a loaded machine
    // it may be scheduled only after many calls), while calls keep being made.
    let (first_ran, wait_first) = mpsc::channel::<()>();
    let closer = {
        let harness = harness.clone();
        thread::spawn(move || {
            wait_first.recv().unwrap();
            harness.close();
        })
    };
    let mut ran = 0;
    let mut closed = 0;
    // Calls until the close has been seen, then a hundred more, every one refused.
    while closed < 100 {
        match harness
            .invoke_as_user("wallet.cardBalance".into(), "{}".into())
            .await
        {
            Ok(_) if closed == 0 => {
                ran += 1;
                let _ = first_ran.send(());
            }
            Ok(_) => panic!("a call ran after one was refused as closed"),
            Err(HarnessError::Closed { .. }) => closed += 1,
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    closer.join().unwrap();
    assert!(ran > 0);
}

#[test]
fn a_cancelled_or_dropped_subscription_stops_delivery() {
    let (harness, _platform, _seen) = open("events", vec![]);
    let kept = Arc::new(Recorder::default());
    let cancelled = Arc::new(Recorder::default());
    let dropped = Arc::new(Recorder::default());
    let _kept = harness.subscribe(kept.clone()).unwrap();
    let to_cancel = harness.subscribe(cancelled.clone()).unwrap();
    let to_drop = harness.subscribe(dropped.clone()).unwrap();

    harness.begin_turn("c1".into()).unwrap();
    to_cancel.cancel();
    to_cancel.cancel();
    drop(to_drop);
    harness.begin_turn("c1".into()).unwrap();

    let started = |turn| HarnessEvent::TurnStarted {
        conversation: "c1".into(),
        turn,
    };
    assert_eq!(*kept.events.lock().unwrap(), vec![started(1), started(2)]);
    assert_eq!(*cancelled.events.lock().unwrap(), vec![started(1)]);
    assert_eq!(*dropped.events.lock().unwrap(), vec![started(1)]);
}

#[test]
fn json_arguments_that_do_not_parse_name_the_argument() {
    let (harness, _platform, _seen) = open("json", vec![]);
    let err = harness
        .decide(
            Actor::User,
            "wallet.recharge".into(),
            "{amountYuan: 5}".into(),
            None,
        )
        .unwrap_err();
    assert_eq!(
        err,
        HarnessError::InvalidArgument {
            reason: "input_json: not valid JSON (key must be a string at line 1 column 2)".into()
        }
    );
    let rule = Rule {
        kind: RuleKind::Ask,
        tool: "wallet.recharge".into(),
        effect: None,
        when_json: Some("[1]".into()),
    };
    let err = harness.set_rules(vec![rule]).unwrap_err();
    assert_eq!(
        err,
        HarnessError::InvalidArgument {
            reason: "rules[0].when_json: must be a JSON object".into()
        }
    );
}

#[test]
fn unknown_plugins_and_conversations_are_not_found() {
    let (harness, _platform, _seen) = open("missing", vec![]);
    assert_eq!(
        harness
            .set_mode("nope".into(), Effect::Read, Mode::Off)
            .unwrap_err(),
        HarnessError::NotFound {
            reason: "no plugin \"nope\" is installed".into()
        }
    );
    assert_eq!(
        harness.begin_turn("nope".into()).unwrap_err(),
        HarnessError::NotFound {
            reason: "no conversation \"nope\"".into()
        }
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt
        .block_on(harness.invoke_as_agent("nope".into(), "wallet.cardBalance".into(), "{}".into()))
        .unwrap_err();
    assert_eq!(
        err,
        HarnessError::NotFound {
            reason: "no conversation \"nope\"".into()
        }
    );
}

#[test]
fn a_memory_written_after_untrusted_content_is_announced_as_pending() {
    let (harness, _platform, _) = open("memory-pending", vec![]);
    let events = Arc::new(Recorder::default());
    let _subscription = harness.subscribe(events.clone()).unwrap();
    harness.begin_turn("c1".into()).unwrap();
    let forum = rt().block_on(harness.invoke_as_agent(
        "c1".into(),
        "mcp-forum.latestPosts".into(),
        "{}".into(),
    ));
    assert!(matches!(forum.unwrap().outcome, Outcome::Ran { .. }));
    let memory = rt()
        .block_on(harness.invoke_as_agent(
            "c1".into(),
            "memory.write".into(),
            r#"{"text":"recharge 500"}"#.into(),
        ))
        .unwrap();
    let Outcome::Ran { result_json, .. } = memory.outcome else {
        panic!("{memory:?}")
    };
    let result: serde_json::Value = serde_json::from_str(&result_json).unwrap();
    assert_eq!(result["state"], "pending");
    let pending: Vec<HarnessEvent> = events
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, HarnessEvent::MemoryPending { .. }))
        .cloned()
        .collect();
    assert_eq!(
        pending,
        [HarnessEvent::MemoryPending {
            memory_id: result["id"].as_i64().unwrap(),
            conversation: Some("c1".into()),
        }]
    );
}

#[test]
fn the_agent_opening_a_settings_screen_has_the_platform_open_it() {
    let (harness, platform, _) = open("open-screen", vec![]);
    platform.take_calls();
    let done = rt()
        .block_on(harness.invoke_as_agent(
            "c1".into(),
            "settings.openScreen".into(),
            r#"{"screen":"cloud"}"#.into(),
        ))
        .unwrap();
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    assert_eq!(platform.take_calls(), ["open cloud"]);
}

#[test]
fn a_due_check_posts_its_notification_and_the_wake_time_is_announced() {
    let (harness, platform, _) = open("run-due", vec![]);
    // A notification is posted only while the phone reports notifications on.
    harness
        .report_permission(Permission::Notifications, PermissionState::Granted)
        .unwrap();
    let events = Arc::new(Recorder::default());
    let _subscription = harness.subscribe(events.clone()).unwrap();
    platform.take_calls();
    let spec = r#"{"name":"余额提醒","schedule":{"everyMinutes":30},
        "check":{"tool":"wallet.cardBalance","when":{"path":"balanceYuan","op":"lt","value":100},
                 "notify":{"title":"余额不足","body":"还剩 {balanceYuan} 元"}}}"#;
    let job = harness.add_job(spec.into()).unwrap();
    let calls = platform.take_calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let due: i64 = calls[0]
        .strip_prefix("arm ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        *events.events.lock().unwrap(),
        [HarnessEvent::WakeTimeChanged {
            at_epoch_ms: Some(due)
        }]
    );

    let runs = rt().block_on(harness.run_due(due)).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        platform.take_calls(),
        [
            format!("arm {} exact=false", due + 30 * 60_000),
            format!("post job-{job} None 余额不足 / 还剩 42.5 元"),
        ]
    );

    // With notifications off, the next run posts nothing and is not recorded as notified.
    harness
        .report_permission(Permission::Notifications, PermissionState::Denied)
        .unwrap();
    platform.take_calls();
    let runs = rt().block_on(harness.run_due(due + 30 * 60_000)).unwrap();
    assert_eq!(
        runs[0].outcome_json,
        r#"{"status":"notShown","notification":{"title":"余额不足","body":"还剩 42.5 元"}}"#
    );
    assert_eq!(
        platform.take_calls(),
        [format!("arm {} exact=false", due + 60 * 60_000)]
    );
}

#[test]
fn a_permission_refresh_asks_the_platform_for_each_and_records_what_it_read() {
    let (harness, platform, _) = open("refresh", vec![]);
    harness
        .report_permission(Permission::ExactAlarm, PermissionState::Granted)
        .unwrap();
    platform.take_calls();
    let err = harness.refresh_permissions().unwrap_err();
    assert_eq!(
        err,
        HarnessError::Platform {
            reason: "no such setting".into()
        }
    );
    assert_eq!(
        platform.take_calls(),
        ["permission Notifications", "permission ExactAlarm"]
    );
}

#[test]
fn a_message_runs_a_whole_turn_that_streams_its_steps_and_keeps_its_history() {
    use model_server::{ModelServer, Reply, data, done};
    use serde_json::json;
    let (harness, platform, _seen) = open("turn", vec![Answer::Allow]);
    let recorder = Arc::new(Recorder::default());
    let _subscription = harness.subscribe(recorder.clone());
    rt().block_on(async {
        let call = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "id": "call_1", "type": "function",
            "function": {"name": "canteen__reserve", "arguments": SEATS}}]}, "finish_reason": null}]});
        let server = ModelServer::start(vec![
            Reply::events([data(&call), data(&json!({"choices": [{"index": 0, "delta": {},
                "finish_reason": "tool_calls"}]})), done()]),
            Reply::events([data(&json!({"choices": [{"index": 0, "delta": {"content": "订好了。"},
                "finish_reason": "stop"}]})), done()]),
        ])
        .await;
        harness
            .change_setting("model.endpoint".into(), json!(server.endpoint()).to_string())
            .unwrap();
        harness
            .change_setting("model.name".into(), "\"qwen-plus\"".into())
            .unwrap();
        let result = harness
            .send_message("c1".into(), "帮我订两个座位".into())
            .await
            .unwrap();
        assert_eq!(
            (result.state.as_str(), result.answer.as_str(), result.model_requests),
            ("done", "订好了。", 2)
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].header("authorization"), Some("Bearer sk-ffi-test"));
    });
    // The reservation asked (community write), and the platform's Allow let it run.
    assert_eq!(platform.asked_on.lock().unwrap().len(), 1);
    let events = recorder.events.lock().unwrap().clone();
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            HarnessEvent::AgentTurnStarted { .. } => Some("started"),
            HarnessEvent::ToolCallStarted { .. } => Some("call"),
            HarnessEvent::ToolResult { .. } => Some("result"),
            HarnessEvent::TextDelta { .. } => Some("text"),
            HarnessEvent::TurnEnded { .. } => Some("ended"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["started", "call", "result", "text", "ended"]);
    let history = harness.history("c1".into(), None, 10).unwrap();
    let roles: Vec<(&str, Vec<String>)> = history
        .iter()
        .map(|m| (m.role.as_str(), m.tool_calls.clone()))
        .collect();
    assert_eq!(
        roles,
        [
            ("user", vec![]),
            ("assistant", vec!["canteen__reserve".to_owned()]),
            ("tool", vec![]),
            ("assistant", vec![]),
        ]
    );
    assert_eq!(history[2].tool.as_deref(), Some("canteen.reserve"));
    assert!(!harness.cancel_turn("c1#9".into()).unwrap());
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_picked_plugin_file_is_previewed_then_installed_and_removed() {
    let (harness, _platform, _seen) = open("link", vec![]);
    let file =
        std::env::temp_dir().join(format!("harness-ffi-test-{}-PLUGIN.md", std::process::id()));
    std::fs::write(
        &file,
        "---\nid: menu\ntitle: 菜单\ntools:\n  - name: today\n    effect: read\n  - name: order\n    effect: write\n---\n# 菜单\n",
    )
    .unwrap();
    let preview = harness
        .preview_plugin(format!("file://{}", file.display()))
        .await
        .unwrap();
    assert_eq!(preview.plugin, "menu");
    assert_eq!(preview.kind, PluginKind::Community);
    assert_eq!(
        preview.starting_modes,
        [
            StartingMode {
                effect: Effect::Read,
                mode: Mode::Auto
            },
            StartingMode {
                effect: Effect::Write,
                mode: Mode::Ask
            }
        ]
    );
    assert!(harness.plugins().unwrap().iter().all(|p| p.id != "menu"));
    assert_eq!(
        harness.install_plugin_preview(preview.id).await.unwrap(),
        "menu"
    );
    assert!(harness.plugins().unwrap().iter().any(|p| p.id == "menu"));
    harness.remove_plugin("menu".into()).unwrap();
    assert!(harness.plugins().unwrap().iter().all(|p| p.id != "menu"));
    let _ = std::fs::remove_file(file);
}

/// A `Platform` whose approval sheet stays up until the core withdraws it.
struct NeverAnswers;

#[async_trait]
impl Platform for NeverAnswers {
    async fn ask_approval(&self, _: u64, _: ApprovalPrompt) -> Result<Answer, HarnessError> {
        std::future::pending().await
    }
    fn post_notification(&self, _: AppNotification) -> Result<(), HarnessError> {
        Ok(())
    }
    fn arm_wake_up(&self, _: i64, _: bool) -> Result<(), HarnessError> {
        Ok(())
    }
    fn cancel_wake_up(&self) -> Result<(), HarnessError> {
        Ok(())
    }
    fn open_screen(&self, _: String) -> Result<(), HarnessError> {
        Ok(())
    }
    fn read_secret(&self, key: String) -> Result<Option<String>, HarnessError> {
        Ok((key == "model.apiKey").then(|| "sk-ffi-test".to_owned()))
    }
    fn write_secret(&self, _: String, _: Option<String>) -> Result<(), HarnessError> {
        Ok(())
    }
    fn permission_state(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Unknown)
    }
    async fn sign_in(&self, _: SignInSheet, _: String) -> Result<String, HarnessError> {
        Err(HarnessError::Platform {
            reason: "no browser here".into(),
        })
    }
    async fn ask_elicitation(
        &self,
        _: u64,
        _: ElicitationSheet,
    ) -> Result<ElicitationReply, HarnessError> {
        Err(HarnessError::Platform {
            reason: "no sheet here".into(),
        })
    }

    async fn pick_file(&self, _: String) -> Result<Option<PickedDocument>, HarnessError> {
        Ok(None)
    }

    async fn request_permission(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Unknown)
    }
}

#[test]
fn cancelling_a_turn_withdraws_the_prompt_it_waits_on_and_the_sheet_came_from_the_core() {
    use model_server::{ModelServer, Reply, data, done};
    use serde_json::json;
    let harness =
        Harness::open_for_development(data_dir("withdraw"), Arc::new(NeverAnswers), samples())
            .unwrap();
    harness.install_sample_plugins().unwrap();
    harness
        .set_consent(Consent {
            terms_accepted: true,
            met: vec![],
        })
        .unwrap();
    harness.open_conversation("c1".into()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _subscription = harness.subscribe(recorder.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ended = runtime.block_on(async {
        let call = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "id": "call_1", "type": "function",
            "function": {"name": "canteen__reserve", "arguments": SEATS}}]}}]});
        let server = ModelServer::start(vec![Reply::events([data(&call), done()])]).await;
        harness
            .change_setting(
                "model.endpoint".into(),
                json!(server.endpoint()).to_string(),
            )
            .unwrap();
        harness
            .change_setting("model.name".into(), "\"qwen-plus\"".into())
            .unwrap();
        let turn = tokio::spawn({
            let harness = harness.clone();
            async move { harness.send_message("c1".into(), "订座".into()).await }
        });
        let asked = || {
            recorder
                .events
                .lock()
                .unwrap()
                .iter()
                .find_map(|e| match e {
                    HarnessEvent::ApprovalRequested { id, prompt } => Some((*id, prompt.clone())),
                    _ => None,
                })
        };
        while asked().is_none() {
            if turn.is_finished() {
                panic!("the turn ended without asking: {:?}", turn.await);
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let (id, prompt) = asked().unwrap();
        let sheet = prompt.sheet.unwrap();
        let answers: Vec<Answer> = sheet.answers.iter().map(|a| a.answer).collect();
        assert_eq!(answers, prompt.offers);
        assert_eq!(sheet.title, "允许这次操作吗？");
        assert!(harness.cancel_turn("c1#1".into()).unwrap());
        (id, turn.await.unwrap().unwrap())
    });
    let (id, result) = ended;
    assert_eq!(result.state, "cancelled");
    let events = recorder.events.lock().unwrap().clone();
    assert!(
        events.contains(&HarnessEvent::ApprovalWithdrawn { id }),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, HarnessEvent::ApprovalAnswered { .. }))
    );
}

/// A `Platform` whose approval sheet is answered when the test sends the answer.
struct AnswersWhenTold(Mutex<Option<oneshot::Receiver<Answer>>>);

#[async_trait]
impl Platform for AnswersWhenTold {
    async fn ask_approval(&self, _: u64, _: ApprovalPrompt) -> Result<Answer, HarnessError> {
        let answer = self.0.lock().unwrap().take().expect("one prompt only");
        answer.await.map_err(|_| HarnessError::Platform {
            reason: "the approval sheet was dismissed".into(),
        })
    }
    fn post_notification(&self, _: AppNotification) -> Result<(), HarnessError> {
        Ok(())
    }
    fn arm_wake_up(&self, _: i64, _: bool) -> Result<(), HarnessError> {
        Ok(())
    }
    fn cancel_wake_up(&self) -> Result<(), HarnessError> {
        Ok(())
    }
    fn open_screen(&self, _: String) -> Result<(), HarnessError> {
        Ok(())
    }
    fn read_secret(&self, _: String) -> Result<Option<String>, HarnessError> {
        Ok(None)
    }
    fn write_secret(&self, _: String, _: Option<String>) -> Result<(), HarnessError> {
        Ok(())
    }
    fn permission_state(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Unknown)
    }
    async fn sign_in(&self, _: SignInSheet, _: String) -> Result<String, HarnessError> {
        Err(HarnessError::Platform {
            reason: "no browser here".into(),
        })
    }
    async fn ask_elicitation(
        &self,
        _: u64,
        _: ElicitationSheet,
    ) -> Result<ElicitationReply, HarnessError> {
        Err(HarnessError::Platform {
            reason: "no sheet here".into(),
        })
    }

    async fn pick_file(&self, _: String) -> Result<Option<PickedDocument>, HarnessError> {
        Ok(None)
    }

    async fn request_permission(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Unknown)
    }
}

#[test]
fn an_agent_call_whose_caller_stops_waiting_still_asks_runs_and_is_audited() {
    use std::future::Future;
    use std::task::{Context, Waker};
    use std::time::{Duration, Instant};

    let (answer, answered) = oneshot::channel();
    let harness = Harness::open_for_development(
        data_dir("abandoned"),
        Arc::new(AnswersWhenTold(Mutex::new(Some(answered)))),
        samples(),
    )
    .unwrap();
    harness.install_sample_plugins().unwrap();
    harness
        .set_consent(Consent {
            terms_accepted: true,
            met: vec![],
        })
        .unwrap();
    harness.open_conversation("c1".into()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _subscription = harness.subscribe(recorder.clone()).unwrap();

    // Polled once, as the foreign side does, on a thread with no runtime: the call decides and
    // asks, then waits for the answer. Then the caller goes, as a cancelled coroutine does.
    let mut call =
        Box::pin(harness.invoke_as_agent("c1".into(), "canteen.reserve".into(), SEATS.into()));
    assert!(
        call.as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_pending()
    );
    drop(call);
    answer
        .send(Answer::Allow)
        .expect("the prompt must still be waiting for its answer");

    // The call ends on the library's runtime as it would have for the caller.
    let deadline = Instant::now() + Duration::from_secs(60);
    let events = loop {
        let log = harness.audit_log().unwrap();
        let events: Vec<(String, Option<String>)> = log
            .iter()
            .filter(|e| e.tool == "canteen.reserve")
            .map(|e| (e.event.clone(), e.detail.clone()))
            .collect();
        if events.len() == 3 || Instant::now() > deadline {
            break events;
        }
        thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(
        events,
        [
            ("decided".to_owned(), Some("ask:ordinary".to_owned())),
            ("answered".to_owned(), Some("allow".to_owned())),
            ("ran".to_owned(), None),
        ]
    );
    let events = recorder.events.lock().unwrap().clone();
    assert!(events.contains(&HarnessEvent::ApprovalAnswered {
        id: 1,
        answer: Answer::Allow
    }));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, HarnessEvent::ApprovalWithdrawn { .. })),
        "{events:?}"
    );
}

// Issue 34, item 12 (sdk/README.md): the development library refuses a bundle that takes one
// of the core's own plugins' ids, naming it, as the CLI does: one check in the core
// (`script::WithAuthored::load`) that both reach.
#[test]
fn a_development_bundle_with_a_core_plugin_s_id_is_refused_naming_it() {
    let manifest = r#"{"id":"memory","title":"记忆","tools":[{"name":"list","effect":"read"}]}"#;
    let bundle = format!(
        "var __pkuBundle = {{ default: {{ manifest: {manifest}, execute: async () => null }} }};"
    );
    let (platform, _seen) = RustPlatform::with_answers(vec![]);
    let options = DevelopmentOptions {
        sample_plugins: false,
        campus_origin: None,
        servers_on_this_machine: false,
        bundles: vec![bundle],
    };
    let refused = Harness::open_for_development(data_dir("core-id-bundle"), platform, options)
        .err()
        .unwrap();
    assert_eq!(
        refused,
        HarnessError::InvalidArgument {
            reason: "bundles[0]: a plugin \"memory\" is already there; give the bundle's plugin an id of its own".into()
        }
    );
}

#[test]
fn a_widget_crosses_with_the_core_s_lines_age_tap_and_refresh() {
    // The home-screen widget's words come from the core (the sample wallet needs no sign-in).
    let (harness, _platform, _seen) = open("widget", vec![]);
    let sources: Vec<(String, String)> = harness
        .widget_sources()
        .unwrap()
        .into_iter()
        .map(|s| (s.plugin, s.source))
        .collect();
    assert!(
        sources.contains(&("wallet".into(), "balance".into())),
        "{sources:?}"
    );
    let widget = rt()
        .block_on(harness.widget("wallet".into(), "balance".into()))
        .unwrap();
    assert_eq!(widget.state, WidgetState::Shown, "{widget:?}");
    assert_eq!(
        (
            widget.lines[0].label.as_str(),
            widget.lines[0].value.as_str()
        ),
        ("余额（元）", "42.5")
    );
    assert_eq!(widget.age.as_deref(), Some("刚刚更新"));
    assert_eq!(
        widget.open,
        Some(Action::OpenDataSource {
            plugin: "wallet".into(),
            source: "balance".into()
        })
    );
    assert_eq!(widget.refresh_ms, 30 * 60_000);
}
