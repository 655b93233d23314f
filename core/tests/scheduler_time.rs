//! Each schedule kind across DST changes (DESIGN.md §6) with an injected clock: Europe/London
//! and America/New_York change, Asia/Shanghai does not. 2026: London springs forward on 29 March
//! (01:00 → 02:00) and falls back on 25 October; New York springs forward on 8 March
//! (02:00 → 03:00) and falls back on 1 November (02:00 → 01:00).

mod common;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use common::*;
use harness_core::scheduler::{JobState, RunOutcome};
use harness_core::zone::Zone as Tz;
use serde_json::{Value, json};

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

fn check(schedule: Value, tz: &str) -> Value {
    json!({"name": "检查", "schedule": schedule, "timeZone": tz,
           "check": {"tool": "campus.balance", "notify": {"title": "余额", "body": "{ok}"}}})
}

fn wall(tz: &str, ms: i64) -> String {
    let tz: Tz = tz.parse().unwrap();
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap()
        .with_timezone(&tz)
        .format("%Y-%m-%d %H:%M %Z")
        .to_string()
}

#[tokio::test]
async fn a_one_shot_in_the_spring_gap_fires_at_the_first_valid_instant_after_it() {
    let (engine, clock, counter) = engine_at(utc("2026-03-28 12:00"), Arc::new(NobodyThere));
    // 01:30 does not exist in London on 29 March; 02:00 BST (01:00 UTC) is the first instant after.
    let job = engine
        .add_job(
            &check(json!({"at": "2026-03-29 01:30"}), "Europe/London"),
            harness_core::scheduler::Owner::User,
        )
        .unwrap();
    assert_eq!(job.next_due_ms, Some(utc("2026-03-29 01:00")));
    assert_eq!(
        wall("Europe/London", job.next_due_ms.unwrap()),
        "2026-03-29 02:00 BST"
    );

    assert!(
        engine
            .run_due(utc("2026-03-29 00:59"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        fire_until(&engine, &clock, utc("2026-03-31 00:00")).await,
        vec![utc("2026-03-29 01:00")]
    );
    assert_eq!(counter.count("campus.balance"), 1);
    assert_eq!(engine.job(job.id).unwrap().state, JobState::Done);
    assert_eq!(engine.next_wake_ms(), None);
}

#[tokio::test]
async fn a_one_shot_in_the_autumn_overlap_fires_once_at_the_first_occurrence() {
    for (tz, at, first) in [
        ("America/New_York", "2026-11-01 01:30", "2026-11-01 05:30"),
        ("Europe/London", "2026-10-25 01:30", "2026-10-25 00:30"),
    ] {
        let (engine, clock, counter) = engine_at(utc("2026-10-20 00:00"), Arc::new(NobodyThere));
        let job = engine
            .add_job(
                &check(json!({"at": at}), tz),
                harness_core::scheduler::Owner::User,
            )
            .unwrap();
        assert_eq!(job.next_due_ms, Some(utc(first)), "{tz}");
        // Both occurrences of the local time pass, and a day more: it ran once, at the first.
        assert_eq!(
            fire_until(&engine, &clock, utc(first) + 2 * DAY).await,
            vec![utc(first)],
            "{tz}"
        );
        assert!(
            engine.run_due(utc(first) + HOUR).await.unwrap().is_empty(),
            "{tz}: the second 01:30"
        );
        assert_eq!(counter.count("campus.balance"), 1, "{tz}");
    }
}

#[tokio::test]
async fn an_interval_keeps_its_absolute_spacing_across_each_change() {
    for (tz, from, to) in [
        ("Europe/London", "2026-03-28 22:10", "2026-03-29 04:00"),
        ("Europe/London", "2026-10-24 22:10", "2026-10-25 04:00"),
        ("America/New_York", "2026-03-08 04:10", "2026-03-08 10:00"),
        ("America/New_York", "2026-11-01 03:10", "2026-11-01 09:00"),
        ("Asia/Shanghai", "2026-03-28 22:10", "2026-03-29 04:00"),
    ] {
        let (engine, clock, _) = engine_at(utc(from), Arc::new(NobodyThere));
        engine
            .add_job(
                &check(json!({"everyMinutes": 60}), tz),
                harness_core::scheduler::Owner::User,
            )
            .unwrap();
        let fired = fire_until(&engine, &clock, utc(to)).await;
        assert_eq!(fired.len(), 5, "{tz} {from}");
        assert_eq!(fired[0], utc(from) + HOUR, "{tz} {from}");
        assert!(
            fired.windows(2).all(|w| w[1] - w[0] == HOUR),
            "{tz} {from}: {fired:?}"
        );
    }
}

#[tokio::test]
async fn cron_at_01_30_in_new_york_fires_once_on_the_fall_back_night() {
    let (engine, clock, _) = engine_at(utc("2026-10-30 12:00"), Arc::new(NobodyThere));
    engine
        .add_job(
            &check(json!({"cron": "30 1 * * *"}), "America/New_York"),
            harness_core::scheduler::Owner::User,
        )
        .unwrap();
    let fired = fire_until(&engine, &clock, utc("2026-11-03 00:00")).await;
    let walls: Vec<String> = fired
        .iter()
        .map(|ms| wall("America/New_York", *ms))
        .collect();
    assert_eq!(
        walls,
        [
            "2026-10-31 01:30 EDT",
            "2026-11-01 01:30 EDT",
            "2026-11-02 01:30 EST"
        ]
    );
}

#[tokio::test]
async fn cron_on_spring_forward_days_fires_at_the_first_valid_instant_after_the_gap() {
    // In New York 01:30 exists on 8 March (the gap is 02:00–03:00): it fires as usual. 02:30 is
    // in the gap and fires at 03:00 EDT. In London the gap is 01:00–02:00, so 01:30 fires at
    // 02:00 BST. None is skipped; each fires once that day.
    for (tz, expr, from, expected) in [
        (
            "America/New_York",
            "30 1 * * *",
            "2026-03-07 12:00",
            ["2026-03-08 01:30 EST", "2026-03-09 01:30 EDT"],
        ),
        (
            "America/New_York",
            "30 2 * * *",
            "2026-03-07 12:00",
            ["2026-03-08 03:00 EDT", "2026-03-09 02:30 EDT"],
        ),
        (
            "Europe/London",
            "30 1 * * *",
            "2026-03-28 12:00",
            ["2026-03-29 02:00 BST", "2026-03-30 01:30 BST"],
        ),
    ] {
        let (engine, clock, _) = engine_at(utc(from), Arc::new(NobodyThere));
        engine
            .add_job(
                &check(json!({"cron": expr}), tz),
                harness_core::scheduler::Owner::User,
            )
            .unwrap();
        let fired = fire_until(&engine, &clock, utc(from) + 2 * DAY).await;
        let walls: Vec<String> = fired.iter().map(|ms| wall(tz, *ms)).collect();
        assert_eq!(walls, expected, "{tz} {expr}");
    }
}

#[tokio::test]
async fn a_cron_job_never_fires_twice_for_one_local_time() {
    // Every 30 minutes through New York's fall-back night: the repeated hour 01:00–01:59 EST is
    // not run a second time; the next run after 01:30 EDT is 02:00 EST.
    let (engine, clock, _) = engine_at(utc("2026-11-01 04:10"), Arc::new(NobodyThere));
    engine
        .add_job(
            &check(json!({"cron": "*/30 * * * *"}), "America/New_York"),
            harness_core::scheduler::Owner::User,
        )
        .unwrap();
    let fired = fire_until(&engine, &clock, utc("2026-11-01 08:00")).await;
    let walls: Vec<String> = fired
        .iter()
        .map(|ms| wall("America/New_York", *ms))
        .collect();
    assert_eq!(
        walls,
        [
            "2026-11-01 00:30 EDT",
            "2026-11-01 01:00 EDT",
            "2026-11-01 01:30 EDT",
            "2026-11-01 02:00 EST",
            "2026-11-01 02:30 EST",
            "2026-11-01 03:00 EST"
        ]
    );
}

#[tokio::test]
async fn shanghai_has_no_change_so_every_kind_runs_on_the_same_wall_clock() {
    let (engine, clock, _) = engine_at(utc("2026-03-06 00:00"), Arc::new(NobodyThere));
    let tz = "Asia/Shanghai";
    engine
        .add_job(
            &check(json!({"cron": "30 1 * * *"}), tz),
            harness_core::scheduler::Owner::User,
        )
        .unwrap();
    engine
        .add_job(
            &check(json!({"at": "2026-03-29 01:30"}), tz),
            harness_core::scheduler::Owner::User,
        )
        .unwrap();
    let fired = fire_until(&engine, &clock, utc("2026-04-01 00:00")).await;
    let one_shot = local(tz, "2026-03-29 01:30");
    assert_eq!(
        fired.iter().filter(|ms| **ms == one_shot).count(),
        2,
        "the cron run and the one-shot at the same instant"
    );
    let mut cron: Vec<i64> = fired.clone();
    cron.dedup();
    assert_eq!(cron.len(), 26, "one cron run a day, 6 March to 31 March");
    assert!(cron.windows(2).all(|w| w[1] - w[0] == DAY));
    assert!(cron.iter().all(|ms| wall(tz, *ms).ends_with("01:30 CST")));
}

#[tokio::test]
async fn a_job_missed_over_three_days_of_sleep_runs_once() {
    let start = utc("2026-05-01 08:00");
    let (engine, clock, counter) = engine_at(start, Arc::new(NobodyThere));
    let job = engine
        .add_job(
            &check(json!({"everyMinutes": 60}), "Asia/Shanghai"),
            harness_core::scheduler::Owner::User,
        )
        .unwrap();
    let woke = start + 3 * DAY + 20 * 60_000;
    clock.set(woke);
    let reports = engine.run_due(woke).await.unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(
        reports[0].due_ms,
        start + HOUR,
        "the run is for the first missed due instant"
    );
    assert_eq!(counter.count("campus.balance"), 1);
    // The next one is on the hourly grid, after now: the 71 other missed runs are gone.
    assert_eq!(
        engine.job(job.id).unwrap().next_due_ms,
        Some(start + 3 * DAY + HOUR)
    );
    assert!(engine.run_due(woke).await.unwrap().is_empty());
    assert_eq!(counter.count("campus.balance"), 1);
    assert!(matches!(
        engine.job(job.id).unwrap().last.unwrap().outcome,
        RunOutcome::Notified { .. }
    ));
}

#[tokio::test]
async fn schedule_errors_name_the_field() {
    let (engine, _, _) = engine_at(utc("2026-05-01 08:00"), Arc::new(NobodyThere));
    let cases = [
        (
            json!({"at": "2026-13-01 08:00"}),
            "Asia/Shanghai",
            "schedule.at: \"2026-13-01 08:00\" is not a local time \"YYYY-MM-DD HH:mm\"",
        ),
        (
            json!({"at": "2026-04-01 08:00"}),
            "Asia/Shanghai",
            "schedule.at: \"2026-04-01 08:00\" is not in the future (it is now 2026-05-01 16:00 in Asia/Shanghai)",
        ),
        (
            json!({"everyMinutes": 0}),
            "Asia/Shanghai",
            "schedule.everyMinutes: must be at least 1",
        ),
        (
            json!({"cron": "30 1 * *"}),
            "Asia/Shanghai",
            "schedule.cron: \"30 1 * *\" has 4 fields; a cron expression has five: minute hour day-of-month month day-of-week",
        ),
        (
            json!({"every": 5}),
            "Asia/Shanghai",
            "schedule.every: unknown schedule; use at, everyMinutes or cron",
        ),
        (
            json!({"everyMinutes": 5}),
            "Mars/Olympus",
            "timeZone: \"Mars/Olympus\" is not an IANA time zone name (for example Asia/Shanghai)",
        ),
    ];
    for (schedule, tz, message) in cases {
        assert_eq!(
            engine
                .add_job(&check(schedule, tz), harness_core::scheduler::Owner::User)
                .unwrap_err()
                .to_string(),
            message
        );
    }
    assert!(engine.jobs().is_empty());
}

#[tokio::test]
async fn the_time_zone_defaults_to_the_settings_time_zone() {
    let (engine, _, _) = engine_at(utc("2026-05-01 08:00"), Arc::new(NobodyThere));
    let spec = json!({"name": "n", "schedule": {"at": "2026-05-02 08:00"}, "check": {"tool": "campus.balance", "notify": {"title": "t", "body": "b"}}});
    let job = engine
        .add_job(&spec, harness_core::scheduler::Owner::User)
        .unwrap();
    assert_eq!(job.spec.time_zone, "Asia/Shanghai");
    assert_eq!(
        job.next_due_ms,
        Some(local("Asia/Shanghai", "2026-05-02 08:00"))
    );
}

#[tokio::test]
async fn running_due_jobs_at_the_end_of_time_ends_them_without_overflow() {
    let (engine, _clock, _counter) = engine_at(utc("2026-03-01 12:00"), Arc::new(NobodyThere));
    let owner = || harness_core::scheduler::Owner::User;
    let every = engine
        .add_job(
            &check(json!({"everyMinutes": 366 * 24 * 60}), "Asia/Shanghai"),
            owner(),
        )
        .unwrap();
    let cron = engine
        .add_job(
            &check(json!({"cron": "*/5 * * * *"}), "America/New_York"),
            owner(),
        )
        .unwrap();
    let reports = engine.run_due(i64::MAX).await.unwrap();
    assert_eq!(reports.len(), 2);
    for id in [every.id, cron.id] {
        let job = engine.job(id).unwrap();
        assert_eq!(job.next_due_ms, None, "job {id}");
        assert_eq!(job.state, JobState::Done, "job {id}");
    }
}

#[tokio::test]
async fn a_cron_job_that_never_fires_is_refused_at_creation() {
    let (engine, _clock, _counter) = engine_at(utc("2026-03-01 12:00"), Arc::new(NobodyThere));
    let err = engine
        .add_job(
            &check(json!({"cron": "0 0 31 2 *"}), "Asia/Shanghai"),
            harness_core::scheduler::Owner::User,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "schedule.cron: \"0 0 31 2 *\" never fires: it has no time in the next 5 years"
    );
    assert!(engine.jobs().is_empty());
}
