//! The shell's reports of consent and the agent's calls in a conversation, as the FFI passes
//! them through: one report sorts what the phone provides, a refresh reads every permission,
//! and an agent call names a conversation that exists.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use harness_core::EngineError;
use harness_core::consent::{Permission, PermissionState};

#[test]
fn one_consent_report_accepts_the_terms_and_replaces_what_the_phone_provides() {
    let (engine, _, _) = engine_at(utc("2026-05-01 08:00"), Arc::new(NobodyThere));
    // The campus session is not the phone's to report (DESIGN.md §4): refused, nothing taken.
    let refused = engine
        .report_consent(true, vec!["campus-session".into(), "nfc".into()])
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "met: campus-session is not the phone's to report; the student signs in on the campus account screen"
    );
    assert!(engine.consent().capabilities.is_empty());
    engine
        .report_consent(true, vec!["exact-alarm".into(), "nfc".into()])
        .unwrap();
    let consent = engine.consent();
    assert!(consent.terms_accepted());
    assert!(!consent.campus_session);
    assert_eq!(consent.exact_alarm, PermissionState::Granted);
    assert_eq!(consent.notifications, PermissionState::Denied);
    assert_eq!(consent.capabilities, ["nfc".to_owned()].into());

    engine.report_consent(false, vec![]).unwrap();
    let consent = engine.consent();
    assert!(consent.terms_accepted(), "acceptance is never withdrawn");
    assert!(!consent.campus_session);
    assert_eq!(consent.exact_alarm, PermissionState::Denied);
    assert!(consent.capabilities.is_empty());
}

#[test]
fn a_refresh_records_every_permission_it_can_read_and_returns_the_failure() {
    let (engine, _, _) = engine_at(utc("2026-05-01 08:00"), Arc::new(NobodyThere));
    engine
        .report_permission(Permission::ExactAlarm, PermissionState::Granted)
        .unwrap();
    let asked = Mutex::new(Vec::new());
    let result = engine.refresh_permissions(|p| {
        // Nothing is locked while the shell is asked: it may read the engine.
        let _ = engine.consent();
        asked.lock().unwrap().push(p);
        match p {
            Permission::Notifications => Ok(PermissionState::Granted),
            Permission::ExactAlarm => Err(EngineError::NoSuchPlugin("platform".into())),
        }
    });
    assert_eq!(
        result.unwrap_err().to_string(),
        "no plugin \"platform\" is installed"
    );
    assert_eq!(
        *asked.lock().unwrap(),
        [Permission::Notifications, Permission::ExactAlarm]
    );
    let consent = engine.consent();
    assert_eq!(consent.notifications, PermissionState::Granted);
    assert_eq!(
        consent.exact_alarm,
        PermissionState::Granted,
        "unread: kept"
    );
}

#[tokio::test]
async fn an_agent_call_in_an_unknown_conversation_is_an_error_and_runs_nothing() {
    let (engine, _, counter) = engine_at(utc("2026-05-01 08:00"), Arc::new(NobodyThere));
    let err = engine
        .invoke_in_conversation("nope", "campus.balance".into(), serde_json::json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "no conversation \"nope\"");
    assert_eq!(counter.total(), 0);
    assert!(engine.audit_log().unwrap().is_empty());

    engine.open_conversation("c").unwrap();
    let done = engine
        .invoke_in_conversation("c", "campus.balance".into(), serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(done.decision.verdict, harness_core::policy::Verdict::Run);
    assert_eq!(counter.count("campus.balance"), 1);
}
