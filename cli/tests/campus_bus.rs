//! The shipped 班车 plugin (`bus`) from the command line against the campus simulator on
//! 127.0.0.1 (SERVICES.md §11): `harness campus sign-in` signs the bus in with the other
//! services; a day's departures, a booking (the student's own tap), the bookings and a cancel
//! print their results, and the ride code is in none of them.

mod common;

use std::process::Output;

use harness_campus_sim::{DEMO, Simulator, ride_code};
use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bus_is_signed_in_with_the_others_and_a_seat_is_booked_listed_and_cancelled() {
    let sim = Simulator::start(0).await.unwrap();
    let origin = sim.origin();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap().to_owned();
    let run = common::campus_runner(origin, data);
    let call = |out: &Output| -> Value {
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };

    let accepted = run(vec!["consent", "accept-terms"], "").await.unwrap();
    assert!(accepted.status.success());
    let signed = run(
        vec!["campus", "sign-in", "--user", DEMO.id],
        "pku-demo-password\n",
    )
    .await
    .unwrap();
    assert_eq!(
        text(&signed.stdout),
        "signed in as 2100012345: portal, card, treehole, bus, course\n"
    );

    let slots = call(
        &run(vec!["call", "bus.slots", r#"{"date":"2026-12-08"}"#], "")
            .await
            .unwrap(),
    );
    assert_eq!(slots["routes"][0]["route"], "新校区→燕园校区");
    assert_eq!(
        slots["routes"][0]["departures"][1],
        json!({"period": 102, "time": "08:30", "seatsLeft": 12, "seats": 45, "full": false})
    );
    let booked = call(
        &run(
            vec![
                "call",
                "bus.book",
                r#"{"route":"新校区→燕园校区","date":"2026-12-08","time":"08:30"}"#,
            ],
            "",
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        booked,
        json!({"booked": true, "booking": 880_001, "route": "新校区→燕园校区",
               "departure": "2026-12-08 08:30"})
    );
    let mine = call(&run(vec!["call", "bus.mine", "{}"], "").await.unwrap());
    assert_eq!(
        mine,
        json!({"bookings": [{"booking": 880_001, "route": "新校区→燕园校区",
                             "departure": "2026-12-08 08:30", "state": "已预约"}]})
    );
    let code = ride_code(880_001, DEMO.id);
    assert!(!booked.to_string().contains(&code) && !mine.to_string().contains(&code));
    let cancelled = call(
        &run(vec!["call", "bus.cancel", r#"{"booking":880001}"#], "")
            .await
            .unwrap(),
    );
    assert_eq!(cancelled["cancelled"], true);
    let mine = call(&run(vec!["call", "bus.mine", "{}"], "").await.unwrap());
    assert_eq!(mine, json!({"bookings": []}));
}
