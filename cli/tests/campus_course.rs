//! The shipped 教学网 plugin (`course`) from the command line against the campus simulator on
//! 127.0.0.1 (SERVICES.md §10): `harness campus sign-in` signs 教学网 in with the other
//! services, and `harness call course.deadlines '{}'` prints the fixture's DDLs of the next
//! seven days in local time. The terminal runs on the real clock, so the simulator moves its
//! fixture week to the week around now; the expected DDLs are worked out here from the fixture.

mod common;

use std::process::Output;

use chrono::{FixedOffset, TimeZone as _};
use harness_campus_sim::{ASSIGNMENTS, COURSES, DAY_MS, DEMO, Simulator};
use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Friday 2026-12-04 10:00 in Beijing, where the fixture's week is laid out from.
const FIXTURE_FRIDAY_10: i64 = 1_796_349_600_000;
const WEEK_MS: i64 = 7 * DAY_MS;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The fixture's assignments, moved `shift` ms, due from `now` to seven days on, earliest first:
/// each with its due time in Beijing's "YYYY-MM-DD HH:mm".
fn expected(shift: i64, now: i64) -> Vec<Value> {
    let beijing = FixedOffset::east_opt(8 * 3600).unwrap();
    let mut due: Vec<_> = ASSIGNMENTS
        .iter()
        .map(|a| (a, a.due_ms + shift))
        .filter(|(_, at)| *at >= now && *at <= now + WEEK_MS)
        .collect();
    due.sort_by_key(|(_, at)| *at);
    due.iter()
        .map(|(a, at)| {
            let local = beijing.timestamp_millis_opt(*at).unwrap();
            let course = COURSES.iter().find(|c| c.id == a.course).unwrap().name;
            json!({
                "id": a.event, "title": a.title, "course": course,
                "due": local.format("%Y-%m-%d %H:%M").to_string(),
                "submitted": a.submitted, "graded": a.grade.is_some(),
                "score": a.grade.map(|(s, p)| format!("{s}/{p}")),
                "courseId": a.course, "contentId": a.content,
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn course_is_signed_in_with_the_others_and_the_deadlines_print_in_local_time() {
    let sim = Simulator::start(0).await.unwrap();
    // The fixture's week moved to the one whose Friday 10:00 is the last before now: some
    // fixture DDL is always within the next seven days.
    let weeks = (now_ms() - FIXTURE_FRIDAY_10).div_euclid(WEEK_MS);
    sim.move_course_fixture(weeks);
    let shift = weeks * WEEK_MS;
    let origin = sim.origin();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap().to_owned();
    let run = common::campus_runner(origin, data);

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

    let before = now_ms();
    let out: Output = run(vec!["call", "course.deadlines", "{}"], "")
        .await
        .unwrap();
    let after = now_ms();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The plugin read the clock between `before` and `after`: its list is one of theirs.
    let (early, late) = (expected(shift, before), expected(shift, after));
    assert!(!early.is_empty() || !late.is_empty());
    assert!(
        printed["deadlines"] == json!(early) || printed["deadlines"] == json!(late),
        "{printed}\nexpected {early:?}"
    );
}
