//! Plain reminders (issue 37): a job kind that posts its own words at its time — once, every
//! N minutes or by cron, in a time zone — running no tool and no model (seed 000: a scheduled
//! run only reads; a reminder reads nothing at all).

mod common;

use std::sync::Arc;

use common::{NobodyThere, engine_at, fire_until, local};
use harness_core::consent::{Permission, PermissionState};
use harness_core::scheduler::{Notification, Owner, RunOutcome, Task};
use serde_json::json;

fn reminder(title: &str, body: &str) -> Notification {
    Notification {
        title: title.into(),
        body: body.into(),
    }
}

// seed 000: a reminder runs no tool and no model; it fires at its local time.
#[tokio::test]
async fn a_reminder_posts_its_words_at_its_time_and_calls_nothing() {
    let (engine, clock, _) = engine_at(
        local("Asia/Shanghai", "2026-12-04 21:00"),
        Arc::new(NobodyThere),
    );
    let job = engine
        .add_job(
            &json!({"name": "去图书馆", "schedule": {"at": "2026-12-05 08:00"},
                    "reminder": {"title": "去图书馆", "body": "带上借书证"}}),
            Owner::User,
        )
        .unwrap();
    assert_eq!(
        job.spec.task,
        Task::Reminder(reminder("去图书馆", "带上借书证"))
    );
    assert_eq!(
        engine.next_wake_ms(),
        Some(local("Asia/Shanghai", "2026-12-05 08:00"))
    );
    let audited = engine.audit_log().unwrap().len();

    let early = local("Asia/Shanghai", "2026-12-05 07:59");
    clock.set(early);
    assert!(engine.run_due(early).await.unwrap().is_empty());
    let at = local("Asia/Shanghai", "2026-12-05 08:00");
    clock.set(at);
    let reports = engine.run_due(at).await.unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(
        reports[0].outcome,
        RunOutcome::Notified {
            notification: reminder("去图书馆", "带上借书证")
        }
    );
    assert_eq!(
        engine.audit_log().unwrap().len(),
        audited,
        "a reminder called a tool"
    );
    assert_eq!(engine.next_wake_ms(), None);
}

// DESIGN §7: every N minutes and cron schedules, in the job's own time zone.
#[tokio::test]
async fn a_repeating_reminder_follows_its_time_zone() {
    let (engine, clock, _) = engine_at(
        local("Asia/Shanghai", "2026-12-04 21:00"),
        Arc::new(NobodyThere),
    );
    engine
        .add_job(
            &json!({"name": "喝水", "schedule": {"cron": "0 8 * * *"}, "timeZone": "Europe/London",
                    "reminder": {"title": "喝水"}}),
            Owner::User,
        )
        .unwrap();
    let fired = fire_until(&engine, &clock, local("Europe/London", "2026-12-06 09:00")).await;
    assert_eq!(
        fired,
        [
            local("Europe/London", "2026-12-05 08:00"),
            local("Europe/London", "2026-12-06 08:00")
        ]
    );
}

// seed 000: the shell reports the notification permission; a reminder it cannot show is kept
// as not shown, as a check's is.
#[tokio::test]
async fn a_reminder_is_not_shown_while_notifications_are_off() {
    let (engine, clock, _) = engine_at(
        local("Asia/Shanghai", "2026-12-04 21:00"),
        Arc::new(NobodyThere),
    );
    engine
        .report_permission(Permission::Notifications, PermissionState::Denied)
        .unwrap();
    engine
        .add_job(
            &json!({"name": "去图书馆", "schedule": {"at": "2026-12-05 08:00"},
                    "reminder": {"title": "去图书馆"}}),
            Owner::User,
        )
        .unwrap();
    let at = local("Asia/Shanghai", "2026-12-05 08:00");
    clock.set(at);
    let reports = engine.run_due(at).await.unwrap();
    assert_eq!(
        reports[0].outcome,
        RunOutcome::NotShown {
            notification: reminder("去图书馆", "")
        }
    );
}

#[tokio::test]
async fn a_reminder_spec_names_the_field_to_fix() {
    let (engine, _, _) = engine_at(
        local("Asia/Shanghai", "2026-12-04 21:00"),
        Arc::new(NobodyThere),
    );
    let refused =
        |spec: serde_json::Value| engine.add_job(&spec, Owner::User).unwrap_err().to_string();
    assert_eq!(
        refused(
            json!({"name": "x", "schedule": {"at": "2026-12-05 08:00"}, "reminder": {"title": " "}})
        ),
        "reminder.title: expected a non-empty text, e.g. \"去图书馆\""
    );
    assert_eq!(
        refused(
            json!({"name": "x", "schedule": {"at": "2026-12-05 08:00"}, "reminder": {"title": "t", "tool": "wallet.cardBalance"}})
        ),
        "reminder.tool: unknown field; a reminder has title and body"
    );
    assert!(
        refused(json!({"name": "x", "schedule": {"at": "2026-12-05 08:00"}, "reminder": {"title": "t"}, "agent": {"prompt": "p"}}))
            .starts_with("reminder: give exactly one of reminder"),
    );
}
