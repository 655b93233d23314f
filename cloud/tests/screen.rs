//! The 云端 screen (issue 39.6) driven through its actions against a real server on 127.0.0.1:
//! setup shows the recovery code once, a second data directory joins by it, a backup and a
//! restore go through the screen's buttons, and the restore's pending choices are in words.

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use common::{Server, databases};
use harness_cloud::server::Limits;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;
use harness_core::screens::{Action, CloudState, LabelValue, Live, Screens};
use harness_core::secrets::MemorySecrets;
use harness_core::settings::parse_change;
use harness_core::{Engine, Options};
use serde_json::json;

struct Allow;

#[async_trait]
impl ApprovalBroker for Allow {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Allow
    }
}

/// A phone's screens over its own data directory and keystore, in English.
fn phone(dir: &std::path::Path) -> Screens {
    let mut options = Options::new(Arc::new(Allow));
    options.builtin_plugins = false;
    options.secrets = Arc::new(MemorySecrets::default());
    let engine = Engine::open(dir, options).unwrap();
    engine.accept_terms().unwrap();
    let language = parse_change("language", &json!("en")).unwrap();
    engine.change_setting(language).unwrap();
    Screens::new(Arc::new(engine), Live::new())
}

async fn tap(screens: &Screens, action: Action) {
    screens.act(action).await.unwrap();
}

// DESIGN §12: the recovery code is shown once, right after setup, and kept nowhere; a second
// device joins by it; the app's backup has its own switch (seed 000) and a restore leaves a
// looser value for the student, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cloud_screen_sets_up_shows_the_code_once_joins_by_it_backs_up_and_restores() {
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, Limits::default()).await;
        let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (phone(a_dir.path()), phone(b_dir.path()));

        let before = a.cloud().await;
        assert_eq!(before.state, CloudState::NotSetUp);
        assert_eq!(before.address, "");
        assert_eq!(before.setup_label.as_deref(), Some("Make a cloud account"));
        assert_eq!(before.restore, None);
        assert_eq!(before.devices, None);

        let typed = format!(" {} ", server.base);
        tap(&a, Action::CloudSetup { server: typed }).await;
        let first = a.cloud().await;
        assert_eq!(first.state, CloudState::SetUp);
        assert_eq!(first.address, server.base);
        assert_eq!(first.setup_label, None);
        assert_eq!(first.join_label, None);
        let code = first
            .recovery_code
            .clone()
            .expect("the code, right after setup");
        assert_eq!(code.split('-').count(), 14, "{code}");
        assert_eq!(
            first.devices,
            Some(LabelValue {
                label: "This account's devices".into(),
                value: "1".into()
            })
        );
        // A second open: the code is gone for good.
        assert_eq!(a.cloud().await.recovery_code, None);

        // The backup switch is off until the student turns it on; no 立即备份 before.
        assert!(!first.backup_on);
        assert_eq!(first.backup_now, None);
        assert_eq!(first.last_backup.value, "Never");
        assert_eq!(first.disclosure.len(), 3);
        tap(&a, Action::SetCloudBackup { allowed: true }).await;
        let on = a.cloud().await;
        assert!(on.backup_on);
        let backup_now = on.backup_now.expect("立即备份 with the switch on");
        assert_eq!(backup_now.action, Action::CloudBackupNow);
        // 连同对话内容: its own choice and disclosure line under the switch, off until chosen.
        assert!(!on.histories_on);
        assert_eq!(on.histories_label, "Include conversation histories");
        assert_eq!(
            on.histories_disclosure,
            "When on, every conversation's messages (your words, the answers and the tools' results) are stored too, encrypted"
        );
        tap(&a, Action::SetCloudBackupHistories { included: true }).await;
        assert!(a.cloud().await.histories_on);
        for (key, value) in [("agent.maxToolCalls", 80), ("money.perPaymentYuan", 500)] {
            let limit = parse_change(key, &json!(value)).unwrap();
            a.engine().change_setting(limit).unwrap();
        }
        tap(&a, backup_now.action).await;
        let last = a.cloud().await.last_backup.value;
        assert_ne!(last, "Never");
        assert_eq!(last.len(), "2026-12-04 16:30".len(), "{last}");

        // A wrong code names the field to change, and joins nothing.
        let wrong = b
            .act(Action::CloudJoin {
                server: server.base.clone(),
                code: "not-a-code".into(),
            })
            .await
            .unwrap_err()
            .to_string();
        assert!(wrong.starts_with("Recovery code: "), "{wrong}");
        assert_eq!(b.cloud().await.state, CloudState::NotSetUp);

        tap(
            &b,
            Action::CloudJoin {
                server: server.base.clone(),
                code: code.to_lowercase(),
            },
        )
        .await;
        let joined = b.cloud().await;
        assert_eq!(joined.state, CloudState::SetUp);
        assert_eq!(joined.recovery_code, None);
        assert_eq!(joined.devices.unwrap().value, "2");
        let restore = joined.restore.expect("恢复 once joined");
        tap(&b, restore.action).await;
        let after = b.cloud().await;
        assert_eq!(
            after.restored,
            vec![
                "Restored: 0 settings, 0 memories, 0 jobs, 0 conversation titles".to_owned(),
                "For you to decide: agent.maxToolCalls is 80 in the backup, looser than now, so it was not changed; tap Apply on its row below if you want it".to_owned(),
                "For you to decide: money.perPaymentYuan is 500 in the backup, looser than now, so it was not changed; tap Apply on its row below if you want it".to_owned(),
            ]
        );
        // The pending values stay on the screen as rows, each applied or dismissed.
        assert_eq!(
            after.pending_title.as_deref(),
            Some("Restored values not made (looser than now): yours to decide")
        );
        let rows: Vec<(&str, &str, &str)> = after
            .pending
            .iter()
            .map(|r| {
                (
                    r.words.as_str(),
                    r.apply.label.as_str(),
                    r.dismiss.label.as_str(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("agent.maxToolCalls: 80 in the backup", "Apply", "Dismiss"),
                (
                    "money.perPaymentYuan: 500 in the backup",
                    "Apply",
                    "Dismiss"
                ),
            ]
        );
        tap(&b, after.pending[0].apply.action.clone()).await;
        assert_eq!(b.engine().settings().agent.max_tool_calls, 80);
        let left = b.cloud().await;
        assert_eq!(left.pending.len(), 1);
        assert_eq!(
            left.pending[0].words,
            "money.perPaymentYuan: 500 in the backup"
        );
        tap(&b, left.pending[0].dismiss.action.clone()).await;
        let done = b.cloud().await;
        assert_eq!(done.pending, []);
        assert_eq!(done.pending_title, None);
        assert_eq!(b.engine().settings().money.per_payment_yuan, 100);
        server.stop().await;
    }
}

// DESIGN §12: a set-up account whose server is gone reads as unreachable, saying why, and
// keeps its address; setting up on an address that is not one names the address field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cloud_screen_says_unreachable_and_names_the_address_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = databases(dir.path()).remove(0);
    let server = Server::start(&db, Limits::default()).await;
    let a_dir = tempfile::tempdir().unwrap();
    let a = phone(a_dir.path());
    let wrong = a
        .act(Action::CloudSetup {
            server: "ftp://cloud.example".into(),
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(wrong.starts_with("Server address: "), "{wrong}");
    tap(
        &a,
        Action::CloudSetup {
            server: server.base.clone(),
        },
    )
    .await;
    let base = server.base.clone();
    server.stop().await;
    let gone = a.cloud().await;
    assert_eq!(gone.state, CloudState::Unreachable);
    assert_eq!(gone.address, base);
    assert!(
        gone.state_words
            .starts_with("The server cannot be reached: unavailable: "),
        "{}",
        gone.state_words
    );
    assert_eq!(gone.devices, None);
}

// DESIGN §12: the 云端 screen lists the account's devices, oldest first, each with its kind
// and when it joined; this device is marked and offers no 移除 (the screen says how it leaves),
// each other device offers 移除, after which that device's next request is refused in words,
// and it forgets the account, says why and joins again by the recovery code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cloud_screen_lists_the_devices_and_removes_another_whose_requests_are_then_refused() {
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, Limits::default()).await;
        let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (phone(a_dir.path()), phone(b_dir.path()));
        tap(
            &a,
            Action::CloudSetup {
                server: server.base.clone(),
            },
        )
        .await;
        let code = a.cloud().await.recovery_code.unwrap();
        tap(
            &b,
            Action::CloudJoin {
                server: server.base.clone(),
                code: code.clone(),
            },
        )
        .await;

        let on_a = a.cloud().await;
        assert_eq!(on_a.device_rows.len(), 2);
        let this: Vec<bool> = on_a.device_rows.iter().map(|r| r.this_device).collect();
        // Both joined within the same second or two: this device's row is the one marked.
        assert_eq!(this.iter().filter(|t| **t).count(), 1);
        for row in &on_a.device_rows {
            // The tests run on a computer: each device said it is the command line.
            assert_eq!(row.name, "The harness command line on a computer");
            assert_eq!(row.joined.label, "Joined");
            assert_eq!(row.joined.value.len(), "2026-12-04 16:30".len());
            match row.this_device {
                true => {
                    assert_eq!(row.this_label.as_deref(), Some("This device"));
                    assert_eq!(row.remove, None);
                }
                false => {
                    assert_eq!(row.this_label, None);
                    let remove = row.remove.as_ref().unwrap();
                    assert_eq!(remove.label, "Remove");
                }
            }
        }
        assert_eq!(
            on_a.leave_note.as_deref(),
            Some(
                "This device cannot remove itself here: to take it out of the account, tap Remove on its row on another device of the account."
            )
        );

        // B's own row has no 移除; a removal of B's own key by hand is refused, naming how.
        let on_b = b.cloud().await;
        let own = on_b.device_rows.iter().find(|r| r.this_device).unwrap();
        assert_eq!(own.remove, None);
        let other = on_b.device_rows.iter().find(|r| !r.this_device).unwrap();
        let Some(Action::CloudRemoveDevice { device: a_key }) =
            other.remove.as_ref().map(|r| r.action.clone())
        else {
            panic!("移除 on A's row")
        };
        let row_on_a = on_a.device_rows.iter().find(|r| !r.this_device).unwrap();
        let Some(Action::CloudRemoveDevice { device: b_key }) =
            row_on_a.remove.as_ref().map(|r| r.action.clone())
        else {
            panic!("移除 on B's row")
        };
        let itself = b
            .act(Action::CloudRemoveDevice {
                device: b_key.clone(),
            })
            .await
            .unwrap_err()
            .to_string();
        assert!(
            itself.contains("this device cannot remove itself: remove it on another device of the account (云端 → 移除)"),
            "{itself}"
        );
        assert_ne!(a_key, b_key);

        // A removes B: A lists itself alone; B's next read is refused, saying why.
        tap(&a, row_on_a.remove.clone().unwrap().action).await;
        let after = a.cloud().await;
        assert_eq!(after.device_rows.len(), 1);
        assert!(after.device_rows[0].this_device);
        assert_eq!(after.devices.unwrap().value, "1");
        // B's next request is refused (403 device_removed): B forgets the account, says so,
        // keeps the address and offers joining again.
        let gone = b.cloud().await;
        assert_eq!(gone.state, CloudState::NotSetUp);
        assert_eq!(
            gone.state_words,
            "Another device of the account removed this one: to use the cloud again, join with the recovery code"
        );
        assert_eq!(gone.address, server.base);
        assert!(gone.device_rows.is_empty());
        assert_eq!(gone.restore, None);
        assert_eq!(
            gone.join_label.as_deref(),
            Some("Join with the recovery code")
        );
        tap(
            &b,
            Action::CloudJoin {
                server: server.base.clone(),
                code: code.clone(),
            },
        )
        .await;
        assert_eq!(b.cloud().await.state, CloudState::SetUp);
        assert_eq!(a.cloud().await.device_rows.len(), 2);
        // The key removed before is no device of the account now: said in words.
        let twice = a
            .act(Action::CloudRemoveDevice { device: b_key })
            .await
            .unwrap_err()
            .to_string();
        assert!(twice.contains("it was removed already"), "{twice}");
        server.stop().await;
    }
}

// DESIGN §12: a phone build offers its cloud address (PKU_HARNESS_CLOUD_URL at build time,
// Options::cloud_address): the 云端 field starts with it until a cloud is set up, and setting up
// on it makes it the account's server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cloud_field_starts_with_the_address_the_build_offers() {
    let dir = tempfile::tempdir().unwrap();
    let db = databases(dir.path()).remove(0);
    let server = Server::start(&db, Limits::default()).await;
    let a_dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Allow));
    options.builtin_plugins = false;
    options.secrets = Arc::new(MemorySecrets::default());
    options.cloud_address = Some(format!(" {} ", server.base));
    let engine = Engine::open(a_dir.path(), options).unwrap();
    engine.accept_terms().unwrap();
    let a = Screens::new(Arc::new(engine), Live::new());
    let offered = a.cloud().await;
    assert_eq!(offered.state, CloudState::NotSetUp);
    assert_eq!(offered.address, server.base);
    tap(
        &a,
        Action::CloudSetup {
            server: offered.address,
        },
    )
    .await;
    let set_up = a.cloud().await;
    assert_eq!(set_up.state, CloudState::SetUp);
    assert_eq!(set_up.address, server.base);
    server.stop().await;
}
