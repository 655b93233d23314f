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
