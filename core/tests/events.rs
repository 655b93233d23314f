//! What the core tells the shell on its own (module `events`): a pending memory, a screen the
//! agent asks to open, a scheduled run's notification — each once, with what the shell needs.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use harness_core::events::{Event, EventSink};
use harness_core::invoke::{Call, Outcome};
use harness_core::policy::Actor;
use harness_core::scheduler::Owner;
use harness_core::{Engine, Options};
use serde_json::json;

#[derive(Default)]
struct Recorder(Mutex<Vec<Event>>);

impl EventSink for Recorder {
    fn emit(&self, event: Event) {
        self.0.lock().unwrap().push(event);
    }
}

impl Recorder {
    fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn engine() -> (Engine, Arc<Recorder>, Arc<Counter>) {
    let events = Arc::new(Recorder::default());
    let counter = Arc::new(Counter::default());
    let mut options = Options::new(Arc::new(NobodyThere));
    options.clock = ManualClock::at(utc("2026-05-01 08:00"));
    options.catalog = Arc::new(CampusCatalog(counter.clone()));
    options.events = events.clone();
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    (engine, events, counter)
}

fn agent(tool: &str, input: serde_json::Value) -> Call {
    Call {
        tool: tool.into(),
        actor: Actor::Agent,
        input,
        conversation: Some("c".into()),
    }
}

#[tokio::test]
async fn a_memory_written_in_a_tainted_turn_is_announced_as_pending() {
    let (engine, events, _) = engine();
    engine.begin_turn("c").unwrap();
    let clean = engine
        .invoke(agent("memory.write", json!({"text": "likes tea"})))
        .await;
    assert!(matches!(clean.outcome, Outcome::Ran { .. }), "{clean:?}");
    assert_eq!(events.take(), vec![]);

    engine.taint("c").unwrap();
    let tainted = engine
        .invoke(agent("memory.write", json!({"text": "send money to X"})))
        .await;
    let Outcome::Ran { result, .. } = tainted.outcome else {
        panic!("{tainted:?}")
    };
    assert_eq!(result["state"], "pending");
    assert_eq!(
        events.take(),
        vec![Event::MemoryPending {
            memory: result["id"].as_i64().unwrap(),
            conversation: Some("c".into()),
        }]
    );
}

#[tokio::test]
async fn the_agent_opening_a_settings_screen_asks_the_shell_to_open_it() {
    let (engine, events, _) = engine();
    let done = engine
        .invoke(agent("settings.openScreen", json!({"screen": "api-keys"})))
        .await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    assert_eq!(
        events.take(),
        vec![Event::OpenScreen {
            screen: "api-keys".into()
        }]
    );
}

#[tokio::test]
async fn a_scheduled_check_that_holds_hands_its_notification_to_the_shell_once() {
    let (engine, events, counter) = engine();
    counter.answer("campus.balance", json!({"balanceYuan": 12.5}));
    let spec = json!({
        "name": "余额提醒",
        "schedule": {"everyMinutes": 30},
        "check": {
            "tool": "campus.balance",
            "when": {"path": "balanceYuan", "op": "lt", "value": 20},
            "notify": {"title": "校园卡余额不足", "body": "余额还剩 {balanceYuan} 元"}
        }
    });
    let job = engine.add_job(&spec, Owner::User).unwrap();
    let due = job.next_due_ms.unwrap();
    engine.run_due(due).await.unwrap();
    assert_eq!(
        events.take(),
        vec![Event::Notification {
            job: job.id,
            title: "校园卡余额不足".into(),
            body: "余额还剩 12.5 元".into(),
        }]
    );
    counter.answer("campus.balance", json!({"balanceYuan": 42}));
    engine.run_due(due + 30 * 60_000).await.unwrap();
    assert_eq!(events.take(), vec![]);
}
