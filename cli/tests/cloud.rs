//! `harness cloud` end to end (issue 39.6): one data directory sets up an account on the cloud's
//! server (on 127.0.0.1 over SQLite) and backs the app up; another joins by the printed recovery
//! code and restores it.

mod common;

use std::process::Output;

use harness_cloud::server::{self, App, Limits};
use harness_cloud::storage;

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The cloud's server on 127.0.0.1, over SQLite in `dir`, until [`Cloud::stop`].
struct Cloud {
    base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Cloud {
    async fn start(dir: &std::path::Path) -> Cloud {
        let db = format!("sqlite:{}", dir.join("cloud.db").display());
        let app = App::new(storage::open(&db).await.unwrap(), Limits::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = tokio::spawn(server::serve(listener, app, async {
            let _ = stopped.await;
        }));
        Cloud { base, stop, served }
    }

    /// Stops the server and waits until it has, failing the test on the server's error.
    async fn stop(self) {
        self.stop.send(()).unwrap();
        self.served.await.unwrap().unwrap();
    }
}

/// `harness ARGS --data-dir DIR` on a blocking thread, so the server on the test's runtime
/// keeps answering.
async fn harness(args: &[&str], dir: &std::path::Path) -> Output {
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.extend(["--data-dir".to_owned(), dir.display().to_string()]);
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = all.iter().map(String::as_str).collect();
        common::run_with_input(&args, &[], "")
    })
    .await
    .unwrap()
}

// Issue 39.5 and .6: setup → backup → (a change, written at the next tick) → join → restore
// through the binary; a looser value is
// printed with the command that makes it, never made (DESIGN §3 8e).
#[tokio::test(flavor = "multi_thread")]
async fn setup_backup_join_and_restore_bring_the_settings_to_another_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let cloud = Cloud::start(dir.path()).await;
    let base = cloud.base.clone();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));

    let setup = stdout(&harness(&["cloud", "setup", "--server", &base], &a).await);
    let lines: Vec<&str> = setup.lines().collect();
    assert_eq!(lines[0], format!("This device's account is on {base}."));
    let code = lines[2].to_owned();
    assert_eq!(code.split('-').count(), 14, "{setup}");

    stdout(&harness(&["settings", "set", "language", "en"], &a).await);
    stdout(&harness(&["settings", "set", "agent.maxToolCalls", "80"], &a).await);
    let refused = harness(&["cloud", "backup"], &a).await;
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        "harness: the app's backup is off: turn on Settings → 云端 → 备份到云端 (harness cloud backup --allow)"
    );
    let backup = stdout(&harness(&["cloud", "backup", "--allow"], &a).await);
    assert!(
        backup.starts_with(
            "The app's backup is on:\n  Settings, rules, approved memories, jobs, conversations' titles and settings, and what the plugins you allowed the cloud keep on the phone, encrypted, in PKU harness Cloud\n  Never passwords, sign-in sessions or the model's API key\n  The cloud cannot read them; only a device with the recovery code can\nBacked up: "
        ),
        "{backup}"
    );
    assert!(backup.ends_with(" bytes in 1 part(s), sealed with the account key.\n"));
    // 连同对话内容: its own choice, shown by status.
    let histories = stdout(&harness(&["cloud", "backup", "--histories", "on"], &a).await);
    assert!(
        histories.starts_with("Conversation histories go in the backup: When on, every conversation's messages (your words, the answers and the tools' results) are stored too, encrypted\nBacked up: "),
        "{histories}"
    );
    let status = stdout(&harness(&["cloud", "status"], &a).await);
    assert!(
        status.ends_with("\nbackup: on\nhistories: on\n"),
        "{status}"
    );

    // After a change, the next tick writes the backup once.
    let tick = ["tick", "--now", "2099-01-01 08:00"];
    assert_eq!(
        stdout(&harness(&tick, &a).await),
        "0 job(s) ran at 2099-01-01 08:00 (Asia/Shanghai)\n"
    );
    stdout(&harness(&["settings", "set", "timeZone", "Europe/Berlin"], &a).await);
    let ticked = stdout(&harness(&tick, &a).await);
    assert!(
        ticked.starts_with(
            "0 job(s) ran at 2099-01-01 08:00 (Europe/Berlin)\nBacked up to the cloud: "
        ),
        "{ticked}"
    );
    assert_eq!(
        stdout(&harness(&tick, &a).await),
        "0 job(s) ran at 2099-01-01 08:00 (Europe/Berlin)\n"
    );

    let joined = stdout(&harness(&["cloud", "join", "--server", &base, "--code", &code], &b).await);
    assert_eq!(
        joined,
        format!("This device joined the account on {base}.\n")
    );
    let restored = stdout(&harness(&["cloud", "restore"], &b).await);
    assert_eq!(
        restored,
        "Restored 2 setting(s), 0 memory(ies), 0 job(s), 0 conversation title(s).\n  set language\n  set timeZone\nNot made: each would loosen a permission here. Make one yourself with:\n  harness cloud pending --apply agent.maxToolCalls\n"
    );
    let settings = stdout(&harness(&["settings"], &b).await);
    assert!(settings.contains("\nlanguage = \"en\"\n"), "{settings}");
    assert!(
        settings.contains("\nagent.maxToolCalls = 50\n"),
        "{settings}"
    );

    cloud.stop().await;
}

// Issue 39: `harness cloud pair` prints the pairing QR's text (not a URI, so no app opens it
// as a link) and `join-paired` on another data directory joins by it, once; a text that is not
// a pairing code is refused in words.
#[tokio::test(flavor = "multi_thread")]
async fn pair_prints_a_code_no_app_opens_and_join_paired_joins_by_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let cloud = Cloud::start(dir.path()).await;
    let base = cloud.base.clone();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    stdout(&harness(&["cloud", "setup", "--server", &base], &a).await);

    let printed = stdout(&harness(&["cloud", "pair"], &a).await);
    let payload = printed.trim_end();
    assert!(payload.starts_with("PKUHARNESS-PAIR-1 "), "{printed}");
    assert_eq!(printed.lines().count(), 1, "{printed}");
    assert!(!payload.contains("://"), "{printed}");

    let refused = harness(&["cloud", "join-paired", "https://example.com/"], &b).await;
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim_end(),
        "harness: the scanned code is not a PKU harness Cloud pairing code"
    );

    let joined = stdout(&harness(&["cloud", "join-paired", payload], &b).await);
    assert_eq!(joined, "This device joined the account.\n");
    let status = stdout(&harness(&["cloud", "status"], &b).await);
    assert!(status.contains("\ndevices: 2\n"), "{status}");
    let again = harness(&["cloud", "join-paired", payload], &c).await;
    assert!(!again.status.success());
    assert_eq!(
        String::from_utf8_lossy(&again.stderr).trim_end(),
        "harness: the pairing code is used or expired: show a new one on the other device"
    );

    cloud.stop().await;
}
