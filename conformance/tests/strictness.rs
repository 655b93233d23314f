//! The runner passes only what it checked: a scenario that checks nothing, a key it does not
//! know, a step of two kinds or a refusal without its code is a failure that names the file and
//! the key or step; files are found whatever the case of `.json`, symbolic links inside a
//! folder are not followed, and a file named twice runs once.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use harness_conformance::{ScenarioResult, run_paths, run_scenario};
use serde_json::{Value, json};

/// A scenario that passes: an agent's read of a bundled plugin runs.
fn passing(name: &str) -> Value {
    json!({"name": name,
        "plugins": [{"id": "wallet", "kind": "bundled", "tools": [{"name": "balance", "effect": "read"}]}],
        "steps": [{"call": {"tool": "wallet.balance", "actor": "agent"}, "expect": {"decision": "run"}}]})
}

fn write(path: &Path, scenario: &Value) {
    std::fs::write(path, serde_json::to_string(scenario).unwrap()).unwrap();
}

/// The results in the order the runner gave them, each as `ok name` or `FAIL name: why`.
fn lines(results: &[ScenarioResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| match &r.result {
            Ok(()) => format!("ok {}", r.name),
            Err(why) => format!("FAIL {}: {why}", r.name),
        })
        .collect()
}

fn run(paths: Vec<PathBuf>) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    lines(&runtime.block_on(run_paths(&paths)))
}

#[tokio::test]
async fn a_scenario_without_steps_checks_nothing_and_fails() {
    let scenario = json!({"name": "nothing", "steps": []});
    assert_eq!(
        run_scenario(&scenario).await,
        Err(
            "scenario \"nothing\" has no step that checks anything (a call with its expect)".into()
        )
    );
    let only_setup = json!({"name": "setup only", "steps": [{"setPreset": "skip_all"}]});
    assert_eq!(
        run_scenario(&only_setup).await,
        Err(
            "scenario \"setup only\" has no step that checks anything (a call with its expect)"
                .into()
        )
    );
}

#[tokio::test]
async fn a_gate_scenario_that_checks_nothing_fails() {
    let store = json!({"name": "sets only", "gate": "store", "ops": [{"set": ["k", "v"]}]});
    assert_eq!(
        run_scenario(&store).await,
        Err(
            "scenario \"sets only\" has no op that checks anything (an expect, expectPrefix, \
             rendered, announced, deliver or echoed)"
                .into()
        )
    );
    let notify = json!({"name": "no expectations", "gate": "notify", "turns": [3]});
    assert_eq!(
        run_scenario(&notify).await,
        Err(
            "scenario \"no expectations\" checks nothing (give it expectDelivered, \
             expectSuppressed or expectReturns)"
                .into()
        )
    );
}

#[tokio::test]
async fn a_step_of_two_kinds_is_refused_naming_its_index_and_keys() {
    let mut scenario = passing("two kinds");
    scenario["steps"].as_array_mut().unwrap().push(json!({
        "call": {"tool": "wallet.balance", "actor": "agent"}, "expect": {"decision": "ask"},
        "setMode": {"plugin": "wallet", "effect": "read", "mode": "off"}}));
    assert_eq!(
        run_scenario(&scenario).await,
        Err(
            "scenario \"two kinds\": step 2: a step is exactly one of call, setMode, setPreset, \
             setPlanMode, beginTurn, setEnabled; this one has call and setMode"
                .into()
        )
    );
}

#[tokio::test]
async fn a_refusal_expected_without_its_code_is_an_error() {
    let scenario = json!({"name": "any refusal",
        "steps": [{"call": {"tool": "nobody.nothing", "actor": "agent"}, "expect": {"decision": "refuse"}}]});
    assert_eq!(
        run_scenario(&scenario).await,
        Err("scenario \"any refusal\": step 1: missing field `code`".into())
    );
}

#[test]
fn misspelled_keys_fail_naming_the_file_the_scenario_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("typos.json");
    let scenarios = json!([
        {"name": "prefix typo", "gate": "network", "allowNetwork": true, "allowlist": [],
         "url": "https://pku.edu.cn/", "expect": "refuse", "errorPrefx": "error: nothing like it"},
        {"name": "grant typo", "gate": "network", "allowNetwrok": true, "allowlist": ["pku.edu.cn"],
         "url": "https://pku.edu.cn/", "expect": "refuse"},
        {"name": "content typo", "gate": "fs", "files": [{"path": "root/a.txt", "content": "a"}],
         "read": "a.txt", "expect": "allow", "expectContnet": "b"},
        {"name": "step typo", "plugins": [{"id": "wallet", "kind": "bundled",
         "tools": [{"name": "balance", "effect": "read"}]}],
         "steps": [{"call": {"tool": "wallet.balance", "actor": "agent"},
                    "expect": {"decision": "run", "headlin": "x"}}]}
    ]);
    write(&file, &scenarios);
    let got = run(vec![file.clone()]);
    let file = file.display();
    let starts = [
        format!("FAIL prefix typo: {file}: scenario \"prefix typo\": unknown field `errorPrefx`"),
        format!("FAIL grant typo: {file}: scenario \"grant typo\": unknown field `allowNetwrok`"),
        format!(
            "FAIL content typo: {file}: scenario \"content typo\": unknown field `expectContnet`"
        ),
        format!("FAIL step typo: {file}: scenario \"step typo\": step 1: unknown field `headlin`"),
    ];
    assert_eq!(got.len(), starts.len(), "{got:#?}");
    for (line, start) in got.iter().zip(&starts) {
        assert!(
            line.starts_with(start.as_str()),
            "{line}\ndoes not start\n{start}"
        );
    }
}

#[test]
fn json_files_are_found_whatever_the_case_of_their_extension() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("LOUD.JSON"), &passing("upper case"));
    write(&dir.path().join("mixed.Json"), &passing("mixed case"));
    std::fs::write(dir.path().join("notes.txt"), "not a scenario").unwrap();
    assert_eq!(
        run(vec![dir.path().to_owned()]),
        ["ok upper case", "ok mixed case"]
    );
}

#[test]
fn symbolic_links_inside_a_folder_are_failures_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.json"), &passing("a"));
    std::os::unix::fs::symlink(".", dir.path().join("loop1")).unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("loop2")).unwrap();
    std::os::unix::fs::symlink("a.json", dir.path().join("b.json")).unwrap();
    let root = dir.path().to_owned();
    // Following the links never ends: run on a thread, and fail rather than hang.
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || send.send(run(vec![root])));
    let got = receive
        .recv_timeout(Duration::from_secs(60))
        .expect("the runner did not finish within 60 s");
    let at = |name: &str| dir.path().join(name).display().to_string();
    assert_eq!(
        got,
        [
            "ok a".to_owned(),
            format!(
                "FAIL {}: is a symbolic link; name the file itself",
                at("b.json")
            ),
            format!(
                "FAIL {}: is a symbolic link; name the file itself",
                at("loop1")
            ),
            format!(
                "FAIL {}: is a symbolic link; name the file itself",
                at("loop2")
            ),
        ]
    );
}

#[test]
fn a_file_named_twice_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.json");
    write(&file, &passing("a"));
    let same = dir.path().join(".").join("a.json");
    assert_eq!(
        run(vec![file.clone(), same, dir.path().to_owned(), file]),
        ["ok a"]
    );
}

#[test]
fn a_file_that_does_not_parse_is_a_failure_named_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.json");
    std::fs::write(&file, "{\"name\": ").unwrap();
    let got = run(vec![file.clone()]);
    assert_eq!(got.len(), 1);
    let start = format!("FAIL {}: cannot parse: ", file.display());
    assert!(got[0].starts_with(&start), "{}", got[0]);
}

#[tokio::test]
async fn a_run_expectation_with_a_code_is_an_error() {
    let mut scenario = passing("run with a code");
    scenario["steps"][0]["expect"] = json!({"decision": "run", "code": "blocked"});
    let failure = run_scenario(&scenario).await.unwrap_err();
    assert!(
        failure.starts_with("scenario \"run with a code\": step 1: unknown field `code`"),
        "{failure}"
    );
}

#[tokio::test]
async fn an_answer_on_a_step_that_raised_no_prompt_is_a_scenario_error() {
    // The read runs without a prompt, so the answer would be silently dropped: the scenario's
    // author meant a prompt that never came.
    let mut scenario = passing("answered but never asked");
    scenario["steps"][0]["answer"] = json!("allow");
    assert_eq!(
        run_scenario(&scenario).await,
        Err(
            "step 1: it gives the answer \"allow\", but the call raised no prompt to answer: \
             it was decided run (step 8i); remove the answer or make the call ask"
                .into()
        )
    );
    // The same step without its answer passes, so the answer alone made it fail.
    assert_eq!(run_scenario(&passing("not answered")).await, Ok(()));
}

#[tokio::test]
async fn a_bundle_is_one_the_library_ships_of_kind_bundled_with_no_manifest_beside_it() {
    let step = json!([{"call": {"tool": "echo.say", "actor": "agent", "input": {"text": "x"}}, "expect": {"decision": "run"}}]);
    let with = |plugin: Value| json!({"name": "b", "plugins": [plugin], "steps": step});
    assert_eq!(
        run_scenario(&with(json!({"kind": "bundled", "bundle": "nosuch"}))).await,
        Err("bad scenario: the library ships no bundle \"nosuch\"".into())
    );
    for plugin in [
        json!({"kind": "community", "bundle": "echo"}),
        json!({"kind": "bundled", "bundle": "echo", "id": "echo"}),
    ] {
        assert_eq!(
            run_scenario(&with(plugin)).await,
            Err("bad scenario: the bundle \"echo\" is a plugin of kind bundled with no other key beside kind and enabled".into())
        );
    }
    assert_eq!(
        run_scenario(&with(json!({"kind": "bundled", "bundle": "echo"}))).await,
        Ok(())
    );
}
