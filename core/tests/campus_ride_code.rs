//! The shuttle bus's ride code (乘车码, SERVICES.md §11) against the campus simulator on
//! 127.0.0.1: a boarding credential shown only on its own screen, opened by the student's tap
//! under the bus plugin's bookings, and in no tool result, audit row, stored value (the data
//! sources' cache included) or model request (seed 004, as the card's pay code).

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::model_server::{ModelServer, calls, text};
use harness_campus_sim::{DEMO, Simulator, ride_code};
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::policy::{Actor, Answer, Code};
use harness_core::screens::{Acted, Action, Live, Route, Screens, SectionState};
use harness_core::secrets::MemorySecrets;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// Allows every prompt (the booking's), and keeps them.
#[derive(Default)]
struct Allow {
    shown: Mutex<Vec<Prompt>>,
}

#[async_trait]
impl ApprovalBroker for Allow {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.shown.lock().unwrap().push(prompt);
        Answer::Allow
    }
}

struct World {
    sim: Simulator,
    engine: Arc<Engine>,
    screens: Screens,
    dir: tempfile::TempDir,
}

async fn world() -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Allow::default()));
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
    let bus = match &step {
        SignInStep::SignedIn { services } | SignInStep::Partly { services, .. } => {
            services.iter().any(|s| s == "bus")
        }
        _ => false,
    };
    assert!(bus, "{step:?}");
    let screens = Screens::new(engine.clone(), Live::new());
    World {
        sim,
        engine,
        screens,
        dir,
    }
}

fn ran(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("the call did not run: {other:?}"),
    }
}

/// Every byte the app keeps on disk (the database and its write-ahead log: results, the
/// audit, the data sources' cache) as text, lossily.
fn everything_stored(dir: &std::path::Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(path).unwrap()));
        }
    }
    all
}

#[tokio::test]
async fn the_ride_code_is_on_its_screen_only_never_in_a_result_the_audit_a_cache_or_the_model() {
    // SERVICES.md §11: "The QR is a boarding credential: on screen only."
    let w = world().await;
    let book = Call {
        tool: "bus.book".into(),
        actor: Actor::Agent,
        input: json!({"route": "燕园校区→新校区", "date": "2026-12-07", "time": "16:30"}),
        conversation: Some("c".into()),
    };
    let booked = ran(w.engine.invoke(book).await.outcome);
    assert_eq!(booked["booking"], 880_001);
    let code = ride_code(880_001, DEMO.id);

    // The bus plugin's screen lists the booking, with the ride code one tap under it.
    let page = w.screens.plugin_screen("bus", "bookings").await.unwrap();
    let bookings = &page.sections[0];
    assert_eq!(bookings.state, SectionState::Ready);
    assert_eq!(
        bookings.rows,
        [["2026-12-07 16:30", "燕园校区→新校区", "已预约"]]
    );
    let tap = page.sections[1].button.clone().unwrap();
    assert_eq!(
        tap.action,
        Action::RunTool {
            tool: "bus.showRideCode".into()
        }
    );
    assert_eq!(
        w.screens.act(tap.action).await.unwrap(),
        Acted::Open {
            route: Route::RideCode
        }
    );

    let screen = w.screens.ride_code().await;
    assert_eq!(screen.title, "班车乘车码");
    assert_eq!(screen.problem, None);
    let rides: Vec<(&str, &str, &str)> = screen
        .rides
        .iter()
        .map(|r| (r.route.as_str(), r.departure.as_str(), r.payload.as_str()))
        .collect();
    assert_eq!(
        rides,
        [("燕园校区→新校区", "2026-12-07 16:30", code.as_str())]
    );
    let ride = &screen.rides[0];
    assert_eq!(
        ride.qr_modules.len(),
        (ride.qr_width * ride.qr_width) as usize
    );

    // A turn that reads the bookings: the model reads them, never the code.
    let model = ModelServer::start(vec![
        calls(&[("c1", "bus__mine", "{}")]),
        text("你预约了 12 月 7 日 16:30 的班车。"),
    ])
    .await;
    model.configure(&w.engine, "sk-bus-0123456789");
    w.engine
        .send_message("c", "我约了哪些班车？")
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body.to_string().contains("2026-12-07 16:30"));
    for request in &requests {
        assert!(!request.body.to_string().contains(&code));
    }
    // Read again after the turn: still only on the screen.
    assert_eq!(w.screens.ride_code().await.rides[0].payload, code);
    let audit = w.engine.audit_log().unwrap();
    assert!(!audit.is_empty());
    assert!(!format!("{audit:?}").contains(&code));
    let stored = everything_stored(w.dir.path());
    assert!(stored.contains("燕园校区→新校区"));
    assert!(!stored.contains(&code));
}

#[tokio::test]
async fn with_no_booking_the_ride_code_screen_says_so_and_signed_out_it_offers_the_sign_in() {
    let w = world().await;
    let screen = w.screens.ride_code().await;
    assert_eq!(screen.rides, []);
    assert_eq!(
        screen.problem.as_deref(),
        Some("还没有班车预约：预约后，乘车码显示在这里")
    );
    assert_eq!(screen.fix, None);

    w.engine.campus().sign_out().unwrap();
    let screen = w.screens.ride_code().await;
    assert_eq!(
        screen.problem.as_deref(),
        Some("校园账号需要重新登录后才能显示乘车码")
    );
    assert_eq!(
        screen.fix.map(|b| b.action),
        Some(Action::Open {
            route: Route::CampusAccount
        })
    );
}

#[tokio::test]
async fn the_ride_code_opens_only_from_the_students_tap_and_its_tool_reads_no_code() {
    // seed 004: a screen only the student's tap opens; the model is not even shown its tool.
    let w = world().await;
    let call = |actor| Call {
        tool: "bus.showRideCode".into(),
        actor,
        input: json!({}),
        conversation: Some("c".into()),
    };
    for actor in [Actor::Agent, Actor::Scheduler] {
        match w.engine.invoke(call(actor)).await.outcome {
            Outcome::Refused { code, .. } => assert_eq!(code, Code::UserOnly),
            other => panic!("{actor:?}: {other:?}"),
        }
    }
    let tapped = ran(w.engine.invoke(call(Actor::User)).await.outcome);
    assert_eq!(tapped, json!({"status": "opened", "screen": "rideCode"}));
    let asked_for_a_code = w
        .sim
        .seen()
        .iter()
        .any(|r| r.target.starts_with("/site/reservation/get-sign-qrcode"));
    assert!(!asked_for_a_code);
    let names: Vec<String> = w
        .engine
        .model_tools(Some("c"))
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.contains(&"bus__mine".to_owned()), "{names:?}");
    assert!(
        !names.contains(&"bus__showRideCode".to_owned()),
        "{names:?}"
    );
}
