//! The 云端 screen (issue 39.6) driven through its actions against a real server on 127.0.0.1:
//! setup shows the recovery code once, a second data directory joins by it, a backup and a
//! restore go through the screen's buttons, and the restore's pending choices are in words.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use common::{Server, databases, open_phone, phone_options};
use harness_cloud::server::Limits;
use harness_core::Options;
use harness_core::clock::{Clock, SystemClock};
use harness_core::screens::{Action, CloudState, LabelValue, Live, PairingScan, Screens};
use harness_core::settings::parse_change;
use serde_json::json;

/// A phone's screens over its own data directory and keystore, in English.
fn phone(dir: &std::path::Path) -> Screens {
    phone_over(dir, phone_options(Arc::default()))
}

/// A phone's screens over its data directory, opened with `options`, in English.
fn phone_over(dir: &std::path::Path, options: Options) -> Screens {
    let engine = open_phone(dir, options);
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
    let mut options = phone_options(Arc::default());
    options.cloud_address = Some(format!(" {} ", server.base));
    let a = Screens::new(Arc::new(open_phone(a_dir.path(), options)), Live::new());
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

/// The system's clock, moved ahead by what the test says: a pairing code's ten minutes pass
/// without a wait.
#[derive(Default)]
struct Ahead(AtomicI64);

impl Clock for Ahead {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + self.0.load(Ordering::SeqCst)
    }
}

/// A luminance plane as Android's camera hands it: the QR `modules` (`width` to a row) at four
/// pixels a module with a quiet zone of four, rows `stride` bytes apart, the bytes past each
/// row's end grey. Returns (plane, side, stride).
fn frame_of(modules: &[bool], width: u32) -> (Vec<u8>, u32, u32) {
    let width = width as usize;
    let side = (width + 8) * 4;
    let stride = side + 24;
    let mut plane = vec![0x80u8; stride * side];
    for y in 0..side {
        for x in 0..side {
            let (mx, my) = ((x / 4).wrapping_sub(4), (y / 4).wrapping_sub(4));
            let dark = mx < width && my < width && modules[my * width + mx];
            plane[y * stride + x] = if dark { 0x10 } else { 0xF0 };
        }
    }
    (plane, side as u32, stride as u32)
}

/// A frame of any text's QR code, as [`frame_of`].
fn frame_of_text(text: &str) -> (Vec<u8>, u32, u32) {
    let qr = qrcode::QrCode::new(text.as_bytes()).unwrap();
    let modules: Vec<bool> = qr
        .to_colors()
        .into_iter()
        .map(|c| c == qrcode::Color::Dark)
        .collect();
    frame_of(&modules, qr.width() as u32)
}

/// The texts of the QR codes in a frame, as the phone's decoder hands them to the core.
fn codes_in((plane, side, stride): &(Vec<u8>, u32, u32)) -> Vec<String> {
    let (side, stride) = (*side as usize, *stride as usize);
    let mut picture =
        rqrr::PreparedImage::prepare_from_greyscale(side, side, |x, y| plane[y * stride + x]);
    picture
        .detect_grids()
        .into_iter()
        .map(|grid| grid.decode().unwrap().1)
        .collect()
}

/// One frame of the scanner: its codes read and handed to the core.
async fn scan(screens: &Screens, frame: &(Vec<u8>, u32, u32)) -> PairingScan {
    screens.cloud_scanned(&codes_in(frame)).await
}

// Issue 39: another device joins by scanning the QR the first shows (a one-time pairing token,
// ten minutes). The QR is drawn by the core, kept in the screen's memory only, gone after 隐藏
// and after its ten minutes by the engine's clock; the texts of the codes in a scanner's frame
// go to the core (the picture drawn from the model is read back here), a frame without a code
// says nothing, a code that is not a pairing code and a used or expired
// one are refused in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_joins_by_scanning_the_pairing_qr_the_first_shows_on_its_cloud_screen() {
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, Limits::default()).await;
        let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let clock = Arc::new(Ahead::default());
        let mut options = phone_options(Arc::default());
        options.clock = clock.clone();
        let a = phone_over(dirs[0].path(), options);
        let (b, c) = (phone(dirs[1].path()), phone(dirs[2].path()));

        // Not set up: no QR to show, 扫码加入 opens the shell's scanner with its words.
        let before = a.cloud().await;
        assert_eq!(before.show_pairing, None);
        assert_eq!(before.pairing, None);
        let scan_join = before.scan_join.expect("扫码加入 while not set up");
        assert_eq!(scan_join.label, "Join by scanning");
        assert_eq!(scan_join.action, Action::CloudScanToJoin);
        assert_eq!(
            b.act(scan_join.action).await.unwrap(),
            harness_core::screens::Acted::Shell(harness_core::screens::ShellEffect::ScanPairingQr {
                title: "Join by scanning".into(),
                hint: "Point the camera at the pairing QR on the other phone's Cloud page.".into(),
                camera_denied: "Scanning needs the camera: allow PKU harness to use it in the system settings, or join with the recovery code.".into(),
                cancel: "Cancel".into(),
            })
        );

        tap(
            &a,
            Action::CloudSetup {
                server: server.base.clone(),
            },
        )
        .await;
        // A's backup holds a stricter limit, for the joined phone to read back.
        tap(&a, Action::SetCloudBackup { allowed: true }).await;
        let limit = parse_change("money.perPaymentYuan", &json!(50)).unwrap();
        a.engine().change_setting(limit).unwrap();
        tap(&a, Action::CloudBackupNow).await;

        let set_up = a.cloud().await;
        assert_eq!(set_up.scan_join, None);
        assert_eq!(set_up.pairing, None);
        let show = set_up.show_pairing.expect("显示配对二维码 once set up");
        assert_eq!(show.label, "Show pairing QR");
        assert_eq!(show.action, Action::CloudShowPairing);
        tap(&a, show.action).await;
        let shown = a.cloud().await;
        assert_eq!(shown.show_pairing, None);
        let pairing = shown.pairing.expect("the pairing QR after 显示配对二维码");
        assert_eq!(pairing.expires.label, "Works until");
        // Ten minutes from the tap, to the minute, in the campus's time.
        let until = pairing.expires.value.clone();
        assert_eq!(until.len(), "2026-12-04 16:40".len(), "{until}");
        assert_eq!(
            pairing.note,
            "Scan this code with PKU harness on another phone and that phone joins this account and reads your cloud data. It works once, for 10 minutes; do not show it to anyone else or let it be photographed."
        );
        assert_eq!(pairing.hide.label, "Hide");
        assert_eq!(pairing.hide.action, Action::CloudHidePairing);
        // The shell reads the screen again when the ten minutes are over.
        assert!(
            (590_000..=600_000).contains(&pairing.refresh_after_ms),
            "{}",
            pairing.refresh_after_ms
        );
        assert_eq!(
            pairing.qr_modules.len(),
            (pairing.qr_width * pairing.qr_width) as usize
        );
        let qr = frame_of(&pairing.qr_modules, pairing.qr_width);

        // A frame without a code: keep scanning, nothing said, nothing joined.
        let (side, stride) = (qr.1, qr.2);
        let blank = (vec![0xF0u8; (stride * side) as usize], side, stride);
        assert_eq!(codes_in(&blank), Vec::<String>::new());
        assert_eq!(scan(&b, &blank).await, PairingScan::Nothing);
        assert_eq!(b.cloud().await.state, CloudState::NotSetUp);
        // A code that is not a pairing code (a link, here): refused in words, joins nothing.
        let link = frame_of_text("https://example.com/harness-cloud:pair");
        let not_pairing = PairingScan::Refused {
            words: "Pairing QR: the scanned code is not a PKU harness Cloud pairing code".into(),
        };
        assert_eq!(scan(&b, &link).await, not_pairing);
        assert_eq!(b.cloud().await.state, CloudState::NotSetUp);

        // B scans A's QR and is one of the account's devices: each lists the other. The code
        // drawn is the pairing text, whole.
        let read = codes_in(&qr);
        assert_eq!(read.len(), 1);
        assert!(read[0].starts_with("PKUHARNESS-PAIR-1 "), "{read:?}");
        // Beside another code in the same frame, the pairing code is the one taken.
        let beside = [
            "https://example.com/harness-cloud:pair".to_owned(),
            read[0].clone(),
        ];
        assert_eq!(b.cloud_scanned(&beside).await, PairingScan::Joined);
        let on_b = b.cloud().await;
        assert_eq!(on_b.state, CloudState::SetUp);
        assert_eq!(on_b.device_rows.len(), 2);
        assert_eq!(on_b.recovery_code, None);
        let on_a = a.cloud().await;
        assert_eq!(on_a.device_rows.len(), 2);
        let keys = |rows: &[harness_core::screens::CloudDeviceRow]| {
            let mut keys: Vec<Option<Action>> = rows
                .iter()
                .map(|r| r.remove.as_ref().map(|b| b.action.clone()))
                .collect();
            keys.sort_by_key(|k| format!("{k:?}"));
            keys
        };
        // Each removes the other alone: two devices, each one's own row without 移除.
        assert_eq!(keys(&on_a.device_rows).iter().flatten().count(), 1);
        assert_eq!(keys(&on_b.device_rows).iter().flatten().count(), 1);
        assert_ne!(keys(&on_a.device_rows), keys(&on_b.device_rows));
        // B opens what A sealed with the account key the QR carried: A's backup.
        tap(&b, Action::CloudRestore).await;
        assert_eq!(b.engine().settings().money.per_payment_yuan, 50);

        // The token is used: C scanning the same QR is refused in the words a used one has,
        // again on the next frame, and joins nothing.
        let spent = PairingScan::Refused {
            words: "Pairing QR: the pairing code is used or expired: show a new one on the other device".into(),
        };
        assert_eq!(scan(&c, &qr).await, spent);
        assert_eq!(scan(&c, &qr).await, spent);
        assert_eq!(c.cloud().await.state, CloudState::NotSetUp);

        // 隐藏 takes the QR off the screen, and 显示配对二维码 is offered again.
        tap(&a, Action::CloudHidePairing).await;
        let hidden = a.cloud().await;
        assert_eq!(hidden.pairing, None);
        assert!(hidden.show_pairing.is_some());

        // A new QR; on SQLite the test puts its token past its ten minutes on the server: the
        // scan is refused with the same words.
        tap(&a, Action::CloudShowPairing).await;
        let shown_by = clock.now_ms();
        let second = a.cloud().await.pairing.expect("a new QR");
        assert_ne!(second.qr_modules, pairing.qr_modules);
        if let Some(path) = db.strip_prefix("sqlite:") {
            let db = rusqlite::Connection::open(path).unwrap();
            assert_eq!(
                db.execute("UPDATE pairings SET expires_at = 0", [])
                    .unwrap(),
                1
            );
            let expired = frame_of(&second.qr_modules, second.qr_width);
            assert_eq!(scan(&c, &expired).await, spent);
            assert_eq!(c.cloud().await.state, CloudState::NotSetUp);
        }

        // The engine's clock past ten minutes after the tap: the QR is gone from the model, and
        // stays gone when the clock comes back.
        clock.0.store(
            shown_by + 10 * 60 * 1000 - SystemClock.now_ms() + 1_000,
            Ordering::SeqCst,
        );
        assert_eq!(a.cloud().await.pairing, None);
        clock.0.store(0, Ordering::SeqCst);
        let after = a.cloud().await;
        assert_eq!(after.state, CloudState::SetUp);
        assert_eq!(after.pairing, None);
        assert!(after.show_pairing.is_some());
        server.stop().await;
    }
}
