//! Approvals that wait and a post that can be taken back (issue 41.3, 41.4), against the
//! campus simulator on 127.0.0.1 with the shipped Treehole plugin: a public call the student
//! allowed or tapped waits `public.undoSeconds` with a 撤销 before anything is sent, and an
//! ask nobody answers within `approvals.timeoutMinutes` is declined. Every wait is driven by
//! the test's clock and the core's own change notices, never by time passing.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{ManualClock, local};
use harness_campus_sim::{DEMO, SMS_CODE, Simulator};
use harness_core::campus::wire::Origin;
use harness_core::invoke::{ApprovalBroker, Call, HeldCall, Invocation, Outcome, Prompt};
use harness_core::policy::{Actor, Answer, Code};
use harness_core::secrets::MemorySecrets;
use harness_core::settings::parse_change;
use harness_core::{Engine, Options};
use serde_json::{Value, json};
use tokio::sync::Notify;

const TREEHOLE: &str = "treehole.pku.edu.cn";
const POST: &str = "/chapi/api/v3/hole/post";
const REPLY: &str = "/chapi/api/v3/comment/post";

/// A shell that shows the 撤销 bar. It answers prompts from a queue; with none queued it
/// leaves the prompt unanswered, as a phone in a pocket does.
#[derive(Default)]
struct Shell {
    answers: Mutex<Vec<Answer>>,
    shown: Mutex<Vec<Prompt>>,
    asked: Notify,
}

#[async_trait]
impl ApprovalBroker for Shell {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.shown.lock().unwrap().push(prompt);
        self.asked.notify_one();
        let queued = self.answers.lock().unwrap().pop();
        match queued {
            Some(answer) => answer,
            None => std::future::pending().await,
        }
    }

    fn shows_undo(&self) -> bool {
        true
    }
}

struct World {
    sim: Simulator,
    shell: Arc<Shell>,
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    _dir: tempfile::TempDir,
}

/// The shipped plugins on disk, signed in to the simulator with Treehole's check done.
async fn world() -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let shell = Arc::new(Shell::default());
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-01 12:00"));
    let mut options = Options::new(shell.clone());
    options.secrets = Arc::new(MemorySecrets::default());
    options.campus = Origin::development(&sim.origin()).unwrap();
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    options.clock = clock.clone();
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    engine.campus().treehole_send_code().await.unwrap();
    engine.campus().treehole_verify(SMS_CODE).await.unwrap();
    World {
        sim,
        shell,
        clock,
        engine,
        _dir: dir,
    }
}

fn agent(tool: &str, input: Value) -> Call {
    Call {
        tool: tool.into(),
        actor: Actor::Agent,
        input,
        conversation: Some("c".into()),
    }
}

fn tap(tool: &str, input: Value) -> Call {
    Call {
        tool: tool.into(),
        actor: Actor::User,
        input,
        conversation: None,
    }
}

fn sent(sim: &Simulator, path: &str) -> Vec<Value> {
    sim.seen()
        .into_iter()
        .filter(|r| r.host == TREEHOLE && r.target == path)
        .map(|r| serde_json::from_str(&r.body).unwrap_or(Value::Null))
        .collect()
}

/// Starts `call` and waits, on the core's notice, until it is held in its undo window.
async fn held(w: &World, call: Call) -> (HeldCall, tokio::task::JoinHandle<Invocation>) {
    let mut watch = w.engine.watch_held_calls();
    let engine = w.engine.clone();
    let mut running = tokio::spawn(async move { engine.invoke(call).await });
    let held = tokio::select! {
        held = watch.wait_for(|held| !held.is_empty()) => held.unwrap().clone(),
        done = &mut running => panic!("the call ended without waiting out a window: {done:?}"),
    };
    assert_eq!(held.len(), 1, "{held:?}");
    (held[0].clone(), running)
}

/// The audit's events for `tool`, in order.
fn audited(engine: &Engine, tool: &str) -> Vec<String> {
    engine
        .audit(100)
        .unwrap()
        .into_iter()
        .filter(|r| r.tool == tool)
        .map(|r| r.event)
        .collect()
}

#[tokio::test]
async fn an_undone_treehole_post_sends_nothing_to_the_campus_simulator_and_the_audit_says_so() {
    // Issue 41.4: an allowed public call waits with a visible 撤销 before anything is sent;
    // undo means nothing was sent, the turn is told so, and the audit says so.
    let w = world().await;
    w.shell.answers.lock().unwrap().push(Answer::Allow);
    let now = w.clock.now();
    let (call, running) = held(
        &w,
        agent("treehole.publish", json!({"text": "周五一起自习？"})),
    )
    .await;
    assert_eq!(
        (
            call.tool.as_str(),
            call.conversation.as_deref(),
            call.until_ms
        ),
        ("treehole.publish", Some("c"), now + 10_000)
    );
    assert!(sent(&w.sim, POST).is_empty());
    assert!(w.engine.undo_call(call.id));
    let done = running.await.unwrap();
    assert_eq!(
        done.outcome,
        Outcome::Refused {
            code: Code::Declined,
            message: "The student took this back (撤销) before it was sent: nothing was sent."
                .into()
        }
    );
    assert!(sent(&w.sim, POST).is_empty());
    assert!(w.engine.held_calls().is_empty());
    assert_eq!(
        audited(&w.engine, "treehole.publish"),
        ["decided", "answered", "undone", "stopped"]
    );
    // The window is over: a late undo finds nothing.
    assert!(!w.engine.undo_call(call.id));
}

#[tokio::test]
async fn a_held_post_has_its_undo_bar_whose_tap_sends_nothing() {
    // Issue 41.4: the shells draw the 撤销 bar from the core's model alone: the call in the
    // student's words, when its window ends, and the tap that takes it back.
    let w = world().await;
    let screens =
        harness_core::screens::Screens::new(w.engine.clone(), harness_core::screens::Live::new());
    assert!(screens.held_calls().is_empty());
    w.shell.answers.lock().unwrap().push(Answer::Allow);
    let now = w.clock.now();
    let (call, running) = held(
        &w,
        agent("treehole.publish", json!({"text": "周末谁去爬香山"})),
    )
    .await;
    let bars = screens.held_calls();
    assert_eq!(
        bars.iter()
            .map(|b| (b.text.as_str(), b.undo.label.as_str(), b.until_ms))
            .collect::<Vec<_>>(),
        [("树洞 · 发树洞 即将发出", "撤销", now + 10_000)]
    );
    assert_eq!(
        bars[0].undo.action,
        harness_core::screens::Action::UndoCall { call: call.id }
    );
    screens.act(bars[0].undo.action.clone()).await.unwrap();
    let done = running.await.unwrap();
    assert!(
        matches!(
            done.outcome,
            Outcome::Refused {
                code: Code::Declined,
                ..
            }
        ),
        "{done:?}"
    );
    assert!(sent(&w.sim, POST).is_empty());
    assert!(screens.held_calls().is_empty());
}

#[tokio::test]
async fn a_tapped_reply_waits_its_window_on_the_clock_and_is_sent_when_it_ends() {
    // Issue 41.4: the student's own tap waits too; nothing is sent until the clock reaches
    // the window's end, then the reply is sent once.
    let w = world().await;
    let now = w.clock.now();
    let reply = json!({"pid": 7_001_234, "text": "我也排了半小时"});
    let (call, running) = held(&w, tap("treehole.reply", reply)).await;
    assert_eq!(call.until_ms, now + 10_000);
    w.clock.set(now + 9_999);
    tokio::task::yield_now().await;
    assert!(sent(&w.sim, REPLY).is_empty());
    assert!(!running.is_finished());
    w.clock.set(now + 10_000);
    let done = running.await.unwrap();
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    assert_eq!(
        sent(&w.sim, REPLY),
        [json!({"pid": 7_001_234, "text": "我也排了半小时", "anonymous": 1})]
    );
    assert!(w.shell.shown.lock().unwrap().is_empty());
}

#[tokio::test]
async fn with_public_undo_seconds_zero_a_post_is_sent_at_once() {
    // Issue 41.4: 0 turns the window off.
    let w = world().await;
    w.engine
        .change_setting(parse_change("public.undoSeconds", &json!(0)).unwrap())
        .unwrap();
    let done = w
        .engine
        .invoke(tap("treehole.publish", json!({"text": "求二手自行车"})))
        .await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    assert_eq!(sent(&w.sim, POST).len(), 1);
    // Shortening the window is the student's to do: the agent's settings tool is refused.
    assert!(
        parse_change("public.undoSeconds", &json!(-1)).is_err(),
        "a negative window is no window"
    );
}

#[tokio::test]
async fn an_ask_unanswered_for_ten_minutes_is_declined_and_the_turn_told_so() {
    // Issue 41.3: an ask nobody answers within approvals.timeoutMinutes (10) is declined,
    // nothing is sent, and the agent reads why.
    let w = world().await;
    let now = w.clock.now();
    let engine = w.engine.clone();
    let asked = w.shell.asked.notified();
    let running = tokio::spawn(async move {
        engine
            .invoke(agent("treehole.publish", json!({"text": "有人吗"})))
            .await
    });
    asked.await;
    w.clock.set(now + 10 * 60_000 - 1);
    tokio::task::yield_now().await;
    assert!(!running.is_finished());
    w.clock.set(now + 10 * 60_000);
    let done = running.await.unwrap();
    assert_eq!(done.answer, Some(Answer::Deny));
    assert_eq!(
        done.outcome,
        Outcome::Refused {
            code: Code::Declined,
            message: "The student did not answer within 10 minutes (setting \
                      approvals.timeoutMinutes), so the call was declined and not run; ask \
                      again when they are back."
                .into()
        }
    );
    assert!(sent(&w.sim, POST).is_empty());
    assert_eq!(
        audited(&w.engine, "treehole.publish"),
        ["decided", "unanswered", "stopped"]
    );
}

#[tokio::test]
async fn an_asks_notification_names_the_tool_never_the_inputs_and_a_public_ask_is_answered_on_the_sheet_only()
 {
    // Issue 41.3: the lock screen may show it: "助手在等你确认：树洞 · 发树洞", without the post.
    let w = world().await;
    w.shell.answers.lock().unwrap().push(Answer::Deny);
    let text = "周五晚上一起去二教自习";
    w.engine
        .invoke(agent("treehole.publish", json!({"text": text})))
        .await;
    let prompt = w.shell.shown.lock().unwrap()[0].clone();
    let screens =
        harness_core::screens::Screens::new(w.engine.clone(), harness_core::screens::Live::new());
    let notice = screens.approval_notice(&prompt);
    assert_eq!(
        (
            notice.title.as_str(),
            notice.body.as_str(),
            notice.answerable_there
        ),
        ("助手在等你确认：树洞 · 发树洞", "解锁后查看并回答", false)
    );
    assert!(!notice.title.contains(text) && !notice.body.contains(text));
}
