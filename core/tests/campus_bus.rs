//! The shuttle bus (班车, wproc) against the campus simulator on 127.0.0.1 (SERVICES.md §11):
//! signed in from the student's one IAAA sign-in beside the other services; the shipped `bus`
//! plugin's departures with seats left, a booking asked first with the departure as the
//! headline and booked only after Allow, the bookings and a cancel; an expired session
//! (`e: "10042"`) read as ended; the ride code never in a result.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use harness_campus_sim::{DEMO, Simulator, ride_code};
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::policy::{Actor, Answer};
use harness_core::secrets::MemorySecrets;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const BUS: &str = "wproc.pku.edu.cn";

/// Answers prompts from a queue (Deny once it is empty) and keeps every prompt shown.
#[derive(Default)]
struct Broker {
    answers: Mutex<Vec<Answer>>,
    shown: Mutex<Vec<Prompt>>,
}

#[async_trait]
impl ApprovalBroker for Broker {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.shown.lock().unwrap().push(prompt);
        self.answers.lock().unwrap().pop().unwrap_or(Answer::Deny)
    }
}

struct World {
    sim: Simulator,
    broker: Arc<Broker>,
    engine: Arc<Engine>,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let broker = Arc::new(Broker::default());
    let mut options = Options::new(broker.clone());
    options.secrets = Arc::new(MemorySecrets::default());
    options.campus = Origin::development(&sim.origin()).unwrap();
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    let step = engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    assert_eq!(
        step,
        SignInStep::SignedIn {
            services: vec![
                "portal".into(),
                "card".into(),
                "treehole".into(),
                "bus".into(),
                "course".into()
            ]
        }
    );
    World {
        sim,
        broker,
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

fn ran(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("the call did not run: {other:?}"),
    }
}

fn failed(outcome: Outcome) -> String {
    match outcome {
        Outcome::Failed { message } => message,
        other => panic!("the call did not fail: {other:?}"),
    }
}

/// Every request the simulator was sent to the bus at `path` (no query).
fn sent_to_bus(sim: &Simulator, path: &str) -> usize {
    sim.seen()
        .iter()
        .filter(|r| r.host == BUS && r.target.split('?').next() == Some(path))
        .count()
}

#[tokio::test]
async fn a_days_departures_list_each_route_with_seats_left_and_the_full_ones() {
    let w = world().await;
    let slots = ran(w
        .engine
        .invoke(agent("bus.slots", json!({"date": "2026-12-07"})))
        .await
        .outcome);
    let dep = |period: i64, time: &str, left: i64| json!({"period": period, "time": time, "seatsLeft": left, "seats": 45, "full": left == 0});
    assert_eq!(
        slots,
        json!({"date": "2026-12-07", "routes": [
            {"routeId": 2, "route": "新校区→燕园校区",
             "departures": [dep(101, "07:00", 0), dep(102, "08:30", 12), dep(103, "12:00", 30)]},
            {"routeId": 5, "route": "燕园校区→新校区",
             "departures": [dep(201, "16:30", 3), dep(202, "18:00", 0), dep(203, "21:00", 40)]},
        ]})
    );
    assert!(w.broker.shown.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_booking_asks_with_the_departure_as_headline_books_after_allow_and_cancels() {
    // Issue 43: book is a write, asked first, its target "班车 <route> <date time>".
    let w = world().await;
    let book = json!({"route": "燕园校区→新校区", "date": "2026-12-07", "time": "16:30"});
    let denied = w.engine.invoke(agent("bus.book", book.clone())).await;
    assert!(
        matches!(denied.outcome, Outcome::Refused { .. }),
        "{:?}",
        denied.outcome
    );
    assert_eq!(sent_to_bus(&w.sim, "/site/reservation/launch"), 0);
    let headline = w.broker.shown.lock().unwrap()[0].headline.clone();
    assert_eq!(headline, "班车 燕园校区→新校区 2026-12-07 16:30");

    w.broker.answers.lock().unwrap().push(Answer::Allow);
    let booked = ran(w.engine.invoke(agent("bus.book", book)).await.outcome);
    assert_eq!(
        booked,
        json!({"booked": true, "booking": 880_001, "route": "燕园校区→新校区",
               "departure": "2026-12-07 16:30"})
    );
    let seats = ran(w
        .engine
        .invoke(agent("bus.slots", json!({"date": "2026-12-07"})))
        .await
        .outcome);
    assert_eq!(seats["routes"][1]["departures"][0]["seatsLeft"], 2);
    let mine = ran(w.engine.invoke(agent("bus.mine", json!({}))).await.outcome);
    assert_eq!(
        mine,
        json!({"bookings": [{"booking": 880_001, "route": "燕园校区→新校区",
                             "departure": "2026-12-07 16:30", "state": "已预约"}]})
    );
    // The ride code is a boarding credential: no tool asked for it, no result holds it.
    assert_eq!(sent_to_bus(&w.sim, "/site/reservation/get-sign-qrcode"), 0);
    let code = ride_code(880_001, DEMO.id);
    for result in [&booked, &mine] {
        assert!(!result.to_string().contains(&code));
    }

    w.broker.answers.lock().unwrap().push(Answer::Allow);
    let cancelled = ran(w
        .engine
        .invoke(agent("bus.cancel", json!({"booking": 880_001})))
        .await
        .outcome);
    assert_eq!(
        cancelled,
        json!({"cancelled": true, "booking": 880_001, "route": "燕园校区→新校区",
               "departure": "2026-12-07 16:30"})
    );
    let headlines: Vec<String> = w
        .broker
        .shown
        .lock()
        .unwrap()
        .iter()
        .map(|p| p.headline.clone())
        .collect();
    assert_eq!(headlines[2], "取消班车预约 #880001");
    let mine = ran(w.engine.invoke(agent("bus.mine", json!({}))).await.outcome);
    assert_eq!(mine, json!({"bookings": []}));
}

#[tokio::test]
async fn a_full_departure_or_an_unknown_route_is_the_students_error_and_nothing_is_booked() {
    let w = world().await;
    w.broker.answers.lock().unwrap().push(Answer::Allow);
    let full = w
        .engine
        .invoke(agent(
            "bus.book",
            json!({"route": "新校区→燕园校区", "date": "2026-12-07", "time": "07:00"}),
        ))
        .await;
    assert_eq!(
        failed(full.outcome),
        "新校区→燕园校区 2026-12-07 07:00 的班车已约满 · The 07:00 bus on 2026-12-07 (新校区→燕园校区) is full"
    );
    w.broker.answers.lock().unwrap().push(Answer::Allow);
    let unknown = w
        .engine
        .invoke(agent(
            "bus.book",
            json!({"route": "燕园→昌平", "date": "2026-12-07", "time": "07:00"}),
        ))
        .await;
    assert_eq!(
        failed(unknown.outcome),
        "没有叫“燕园→昌平”的班车线路，可选：新校区→燕园校区、燕园校区→新校区 · No shuttle bus route is named \"燕园→昌平\"; the routes: 新校区→燕园校区、燕园校区→新校区"
    );
    assert_eq!(sent_to_bus(&w.sim, "/site/reservation/launch"), 0);
}

#[tokio::test]
async fn an_expired_bus_session_answering_10042_is_ended_and_the_plugin_told_to_sign_in() {
    // SERVICES.md §11: e:"10042" = not signed in or expired, still HTTP 200.
    let w = world().await;
    w.sim.expire_sessions();
    let slots = ran(w
        .engine
        .invoke(agent("bus.slots", json!({"date": "2026-12-07"})))
        .await
        .outcome);
    assert_eq!(
        slots,
        json!({"status": "signin_required", "service": "bus"})
    );
    let status = w.engine.campus().status().unwrap();
    assert!(
        !status.services.iter().any(|(s, _)| s.as_str() == "bus"),
        "{status:?}"
    );
}
