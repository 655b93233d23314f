//! A plugin author's TypeScript plugin on the command line: the SDK's test plugins (`echo`,
//! `probe`, sdk/test-plugins) named by `HARNESS_PLUGIN_BUNDLES` run beside the shipped ones,
//! each service reached from `harness call` — the student's tap — with the picker and the
//! permission dialog answered on the terminal or by the command's flags.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

fn bundles() -> String {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/test-plugins");
    std::env::join_paths([sdk.join("echo/bundle.js"), sdk.join("probe/bundle.js")])
        .unwrap()
        .into_string()
        .unwrap()
}

/// `harness <args> --data-dir <data>` with the test plugins' bundles, `input` on its stdin.
fn harness(data: &Path, args: &[&str], input: &str) -> Output {
    let mut all = args.to_vec();
    all.extend(["--data-dir", data.to_str().unwrap()]);
    common::run_with_input(&all, &[("HARNESS_PLUGIN_BUNDLES", &bundles())], input)
}

fn printed(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The JSON result is the last thing printed, after the terminal's questions (a question
    // ends without a line break where the answer was typed).
    stdout
        .char_indices()
        .filter(|(_, c)| matches!(c, '{' | 'n'))
        .find_map(|(i, _)| serde_json::from_str(&stdout[i..]).ok())
        .unwrap_or_else(|| panic!("no JSON result: {stdout}"))
}

fn accepted() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = harness(dir.path(), &["consent", "accept-terms"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

#[test]
fn a_plugin_s_services_run_from_a_tap_on_the_command_line() {
    let dir = accepted();
    let data = dir.path();
    let call = |tool: &str, input: &str| printed(&harness(data, &["call", tool, input], ""));
    assert_eq!(
        call("probe.remember", r#"{"key":"k","value":{"n":1}}"#),
        json!({"stored": "k"})
    );
    // A second process: the store is on disk.
    assert_eq!(
        call("probe.recall", r#"{"key":"k"}"#),
        json!({"value": {"n": 1}})
    );
    assert_eq!(
        call(
            "probe.callTool",
            r#"{"tool":"echo.say","args":{"text":"你好"}}"#
        ),
        json!({"got": {"text": "你好"}})
    );
    assert_eq!(
        call("probe.cloud", "{}"),
        json!({"status": "cloud_refused", "code": "consent_required"})
    );
    assert_eq!(
        call("probe.setContext", r#"{"text":"常去燕南"}"#),
        json!({"set": true})
    );
    assert_eq!(
        call("probe.say", r#"{"text":"饭好了"}"#),
        json!({"said": true})
    );
    // http.get through the network gate, to the allowlisted 127.0.0.1.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 2048];
        let read = stream.read(&mut request).unwrap();
        stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 14\r\nconnection: close\r\n\r\n{\"open\": true}")
            .unwrap();
        String::from_utf8_lossy(&request[..read]).into_owned()
    });
    assert_eq!(
        call(
            "probe.fetch",
            &format!(r#"{{"url":"http://127.0.0.1:{port}/menu"}}"#)
        ),
        json!({"body": "{\"open\": true}"})
    );
    assert!(server.join().unwrap().starts_with("GET /menu HTTP/1.1\r\n"));
}

#[test]
fn the_picker_and_the_permission_dialog_are_answered_by_flags_or_on_the_terminal() {
    let dir = accepted();
    let data = dir.path();
    let file: PathBuf = data.join("课表.md");
    std::fs::write(&file, "周一 高等数学").unwrap();
    let picked = harness(
        data,
        &["call", "probe.pick", "{}", "--pick", file.to_str().unwrap()],
        "",
    );
    assert_eq!(
        printed(&picked),
        json!({"name": "课表.md", "text": "周一 高等数学"})
    );
    // On the terminal: the path typed, or nothing for none.
    let typed = harness(
        data,
        &["call", "probe.pick", "{}"],
        &format!("{}\n", file.display()),
    );
    assert_eq!(
        printed(&typed),
        json!({"name": "课表.md", "text": "周一 高等数学"})
    );
    assert_eq!(
        printed(&harness(data, &["call", "probe.pick", "{}"], "\n")),
        Value::Null
    );

    let fixed = harness(
        data,
        &["call", "probe.fix", "{}", "--permission", "granted"],
        "",
    );
    assert_eq!(printed(&fixed), json!({"state": "granted"}));
    // Recorded: the consent the app keeps says so.
    let shown =
        String::from_utf8_lossy(&harness(data, &["consent", "show"], "").stdout).into_owned();
    assert!(shown.contains(r#""notifications": "granted","#), "{shown}");
    let denied = harness(data, &["call", "probe.fix", "{}"], "n\n");
    assert_eq!(printed(&denied), json!({"state": "denied"}));
}

#[test]
fn a_bundle_that_cannot_be_read_or_takes_a_shipped_plugin_s_id_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing.js");
    let out = common::run_with_input(
        &["tools", "--data-dir", dir.path().to_str().unwrap()],
        &[("HARNESS_PLUGIN_BUNDLES", missing.to_str().unwrap())],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "harness: HARNESS_PLUGIN_BUNDLES: cannot read {}",
            missing.display()
        )),
        "{stderr}"
    );
    let wallet = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/wallet/bundle.js");
    let out = common::run_with_input(
        &["tools", "--data-dir", dir.path().to_str().unwrap()],
        &[("HARNESS_PLUGIN_BUNDLES", wallet.to_str().unwrap())],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "harness: {}: a plugin \"wallet\" is already there; give the bundle's plugin an id of its own\n",
            wallet.display()
        )
    );
}

// Issue 34, item 12 (sdk/README.md): a bundle may not take the id of one of the core's own
// plugins either; the engine would open and drop it unsaid.
#[test]
fn a_bundle_that_takes_a_core_plugin_s_id_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.js");
    let manifest =
        json!({"id": "settings", "title": "设置", "tools": [{"name": "set", "effect": "write"}]});
    std::fs::write(
        &settings,
        format!("var __pkuBundle = {{ default: {{ manifest: {manifest}, execute: async () => null }} }};"),
    )
    .unwrap();
    let out = common::run_with_input(
        &["tools", "--data-dir", dir.path().to_str().unwrap()],
        &[("HARNESS_PLUGIN_BUNDLES", settings.to_str().unwrap())],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "harness: {}: a plugin \"settings\" is already there; give the bundle's plugin an id of its own\n",
            settings.display()
        )
    );
}
