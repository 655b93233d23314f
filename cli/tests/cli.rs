//! The built `harness` binary, run as a user runs it.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use harness_core::store::Store;

fn harness(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
    command.args(args).env_remove("HARNESS_DATA_DIR");
    command
}

fn run(args: &[&str]) -> Output {
    harness(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a command whose standard output's reader is gone before it writes a line: the read
/// end of the pipe is closed as soon as the process starts.
fn run_with_closed_stdout(args: &[&str]) -> Output {
    let mut child = harness(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn every_command_ends_quietly_with_status_141_when_its_reader_has_gone() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/scenarios");
    for args in [
        vec!["jobs", "--data-dir", data],
        vec!["tools", "--data-dir", data],
        vec!["settings", "--data-dir", data],
        vec!["conformance", scenarios.to_str().unwrap()],
    ] {
        let output = run_with_closed_stdout(&args);
        let stderr = text(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
        assert_eq!(output.status.code(), Some(141), "{args:?}");
    }
}

#[test]
fn a_second_process_on_an_open_data_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let output = run(&["settings", "--data-dir", data, "show"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "harness: the data directory {data} is in use by another process of the app; close that one and try again\n"
        )
    );
    drop(store);
    let output = run(&["settings", "--data-dir", data, "show"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
}

#[test]
fn a_credential_in_the_model_endpoint_is_refused_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let before = run(&["settings", "--data-dir", data, "show"]);
    assert!(before.status.success(), "{}", text(&before.stderr));
    let output = run(&[
        "settings",
        "--data-dir",
        data,
        "set",
        "model.endpoint",
        "https://user:sk-secret@api.example.com/v1",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "harness: settings key \"model.endpoint\": the URL holds a credential (user:password@ before the host); an API key goes in Settings → Model → API key, which keeps it in the keystore, never in the URL\n"
    );
    let after = run(&["settings", "--data-dir", data, "show"]);
    assert_eq!(text(&after.stdout), text(&before.stdout));
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(
            !bytes.windows(9).any(|w| w == b"sk-secret"),
            "the key reached the data directory"
        );
    }
}

#[test]
fn a_plugin_document_from_a_file_is_previewed_installed_tapped_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let file = dir.path().join("PLUGIN.md");
    std::fs::write(
        &file,
        "---\nid: menu\ntitle: 菜单\ntools:\n  - name: today\n    title: 今日菜单\n    effect: read\n---\n# 菜单\n",
    )
    .unwrap();
    let added = run(&[
        "plugins",
        "--data-dir",
        data,
        "add",
        file.to_str().unwrap(),
        "--yes",
    ]);
    assert_eq!(text(&added.stderr), "");
    let shown = text(&added.stdout);
    assert!(
        shown.starts_with("菜单 (menu) · community plugin from file://"),
        "{shown}"
    );
    assert!(shown.contains("menu.today"), "{shown}");
    assert!(shown.ends_with("Installed menu.\n"), "{shown}");

    // A document without a request has no code on this device: the tap fails, saying so.
    let tapped = run(&["call", "menu.today", "{}", "--data-dir", data]);
    assert_eq!(
        text(&tapped.stderr),
        "harness: menu.today failed: the code behind plugin \"menu\" is not available on this device\n"
    );

    let removed = run(&["plugins", "--data-dir", data, "remove", "menu"]);
    assert_eq!(text(&removed.stdout), "Removed menu.\n");
    let again = run(&["call", "menu.today", "{}", "--data-dir", data]);
    assert!(!again.status.success());
}

#[test]
fn a_data_directory_of_ones_own_has_no_sample_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let listed = run(&["tools", "--data-dir", data]);
    assert_eq!(text(&listed.stderr), "");
    let plugins: Vec<String> = text(&listed.stdout)
        .lines()
        .take_while(|l| !l.starts_with("Plugin grants"))
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    // The core's own and the shipped TypeScript plugins; no sample (canteen document, forum,
    // card document).
    assert_eq!(
        plugins,
        [
            "bus",
            "canteen",
            "classrooms",
            "course",
            "dashboard",
            "files",
            "grades",
            "library",
            "memory",
            "notices",
            "scheduler",
            "settings",
            "time",
            "treehole",
            "wallet"
        ]
    );
    // The shipped 校园卡, not the sample's in-memory card: nothing without a campus sign-in.
    let called = run(&["call", "wallet.cardBalance", "{}", "--data-dir", data]);
    assert!(!called.status.success());
    assert!(
        text(&called.stderr).starts_with(
            "harness: wallet.cardBalance was refused (unavailable): Plugin \"wallet\" needs campus-session"
        ),
        "{}",
        text(&called.stderr)
    );
}

#[test]
fn data_dir_means_the_same_before_and_after_the_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let added = run(&[
        "jobs",
        "add",
        "--name",
        "提醒",
        "--every",
        "60",
        "--tool",
        "memory.list",
        "--data-dir",
        data,
    ]);
    assert!(added.status.success(), "{}", text(&added.stderr));
    let after = run(&["jobs", "list", "--data-dir", data]);
    let before = run(&["--data-dir", data, "jobs", "list"]);
    let between = run(&["jobs", "--data-dir", data, "list"]);
    assert_eq!(text(&after.stderr), "");
    assert!(
        text(&after.stdout).starts_with(&format!("Jobs (1) in {data}\n")),
        "{}",
        text(&after.stdout)
    );
    assert_eq!(text(&before.stdout), text(&after.stdout));
    assert_eq!(text(&between.stdout), text(&after.stdout));
    let settings = run(&["settings", "set", "language", "en", "--data-dir", data]);
    assert_eq!(text(&settings.stdout), "language = \"en\"\n");
    let shown = run(&["--data-dir", data, "settings", "show"]);
    assert!(
        text(&shown.stdout).contains("\nlanguage = \"en\"\n"),
        "{}",
        text(&shown.stdout)
    );
}

#[test]
fn settings_lists_every_key_as_settings_set_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let shown = run(&["settings", "--data-dir", data]);
    assert_eq!(text(&shown.stderr), "");
    let listing = text(&shown.stdout);
    let keys: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split(" = ").next())
        .collect();
    assert!(keys.is_sorted(), "{listing}");
    for line in [
        "plugins.officialHost = \"plugins.pku-harness.cn\"",
        "campus.hosts = [\"portal.pku.edu.cn\",\"bdcard.pku.edu.cn\",\"treehole.pku.edu.cn\",\"wproc.pku.edu.cn\",\"course.pku.edu.cn\"]",
        "agent.maxToolCalls = 50",
        "plugins.settings.enabled = true",
        "plugins.dashboard.modes.money = \"auto\"",
        "timeZone = \"Asia/Shanghai\"",
        "rules = []",
    ] {
        assert!(
            listing.lines().any(|l| l == line),
            "{line} not in {listing}"
        );
    }
    // Each line, given back to `settings set`, is taken (an empty model name or endpoint is
    // listed as it is and refused as a value, naming why).
    for line in listing.lines() {
        let (key, value) = line.split_once(" = ").unwrap();
        let set = run(&["settings", "--data-dir", data, "set", key, value]);
        if value == "\"\"" {
            assert!(
                text(&set.stderr).starts_with(&format!("harness: settings key \"{key}\": ")),
                "{line}: {}",
                text(&set.stderr)
            );
            assert!(!text(&set.stderr).contains("unknown key"), "{line}");
        } else {
            assert_eq!(text(&set.stderr), "", "{line}");
            assert_eq!(text(&set.stdout), format!("{line}\n"));
        }
    }
}

#[test]
fn an_unknown_settings_key_names_the_key_it_is_close_to() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let output = run(&[
        "settings",
        "--data-dir",
        data,
        "set",
        "officialHost",
        "x.pku.edu.cn",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).starts_with(
            "harness: settings key \"officialHost\": unknown key; did you mean \"plugins.officialHost\"? The keys are appearance, "
        ),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn the_api_key_given_as_a_setting_is_refused_naming_harness_secret_set() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let output = run(&[
        "settings",
        "--data-dir",
        data,
        "set",
        "model.apiKey",
        "sk-secret-77",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "harness: model.apiKey is a secret, not a setting: run `harness secret set model.apiKey` (it reads the key from standard input and keeps it in the keyring), or set HARNESS_API_KEY\n"
    );
    assert!(!text(&output.stdout).contains("sk-secret-77"));
}

#[test]
fn audit_times_are_local_to_the_settings_zone_and_say_which() {
    use harness_core::scheduler::schedule::{format_local, parse_tz};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    // UTC+14: a time printed in UTC could not pass for it.
    let zone = "Pacific/Kiritimati";
    assert!(
        run(&["settings", "--data-dir", data, "set", "timeZone", zone])
            .status
            .success()
    );
    assert!(
        run(&["consent", "--data-dir", data, "accept-terms"])
            .status
            .success()
    );
    let start = chrono::Utc::now().timestamp_millis();
    let tapped = run(&["call", "settings.get", "{}", "--data-dir", data]);
    assert!(tapped.status.success(), "{}", text(&tapped.stderr));
    let end = chrono::Utc::now().timestamp_millis();
    let output = run(&["audit", "--data-dir", data]);
    let shown = text(&output.stdout);
    let mut lines = shown.lines();
    assert_eq!(
        lines.next(),
        Some("Times are in Pacific/Kiritimati (the settings time zone).")
    );
    let tz = parse_tz("timeZone", zone).unwrap();
    let expected = [format_local(tz, start), format_local(tz, end)];
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2, "{shown}");
    for row in rows {
        // "     1 YYYY-MM-DD HH:mm:ss user …": the minute is that of the call, in the zone.
        let minute = &row[7..23];
        assert!(
            expected.iter().any(|e| e == minute),
            "{row} vs {expected:?}"
        );
    }
}

#[test]
fn a_call_to_a_plugin_not_installed_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    assert!(
        run(&["consent", "--data-dir", data, "accept-terms"])
            .status
            .success()
    );
    let output = run(&["call", "nosuch.x", "{}", "--data-dir", data]);
    assert_eq!(
        text(&output.stderr),
        "harness: nosuch.x was refused (unavailable): No plugin \"nosuch\" is installed (tool \"nosuch.x\"). The user installs plugins in Settings → Plugins.\n"
    );
}

#[test]
fn a_typescript_plugin_the_library_ships_runs_on_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    // A data directory of one's own (no demo marker): the app's shipped plugins are there.
    assert!(
        run(&["consent", "--data-dir", data, "accept-terms"])
            .status
            .success()
    );
    // The canteens' opening hours are the plugin's own table: nothing is sent anywhere.
    let output = run(&["call", "canteen.openNow", "{}", "--data-dir", data]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result: serde_json::Value = serde_json::from_str(&text(&output.stdout)).unwrap();
    assert_eq!(result["hoursAsOf"], "2026-09");
    let output = run(&[
        "call",
        "classrooms.free",
        r#"{"building": 5}"#,
        "--data-dir",
        data,
    ]);
    assert!(
        text(&output.stderr).starts_with("harness: classrooms.free was refused (invalid_input): "),
        "{}",
        text(&output.stderr)
    );
}

// Issue 37 (campus time): `harness call time.resolve` prints the Beijing times of a time said
// in PKU's weeks and periods, from the period table and the semester's first Monday.
#[test]
fn time_resolve_prints_the_beijing_times_of_weeks_and_periods() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let output = run(&[
        "call",
        "time.resolve",
        r#"{"text":"第1周星期一第3-4节"}"#,
        "--data-dir",
        data,
    ]);
    assert_eq!(text(&output.stderr), "");
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        printed,
        serde_json::json!({
            "start": "2026-09-07 10:10", "end": "2026-09-07 12:00",
            "startMs": 1_788_747_000_000_i64, "endMs": 1_788_753_600_000_i64,
            "date": "2026-09-07", "weekday": 1, "week": 1, "periods": [3, 4],
            "allDay": false, "timeZone": "Asia/Shanghai"
        })
    );
    // 明天 is the next Beijing day on the system's clock: only its periods' times are fixed.
    let output = run(&[
        "call",
        "time.resolve",
        r#"{"text":"明天第3-4节"}"#,
        "--data-dir",
        data,
    ]);
    let printed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        printed["start"].as_str().unwrap().ends_with(" 10:10"),
        "{printed}"
    );
    assert!(
        printed["end"].as_str().unwrap().ends_with(" 12:00"),
        "{printed}"
    );
}
