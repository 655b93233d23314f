//! Runs every gate scenario in tests/conformance/gates through the real gates, and the gate
//! entries of the shared examples as a check that the runner reads FORMAT.md's shape.

use std::fs;
use std::path::{Path, PathBuf};

use harness_core::gates::run_gate_scenario;
use serde_json::Value;

/// Runs each scenario in `file` (one object or an array) that `select` keeps; returns how many
/// ran and the failures, `<file>: <name>: <failure>`. A file that does not parse is a failure.
fn run_file(file: &Path, select: impl Fn(&Value) -> bool) -> (usize, Vec<String>) {
    let shown = file.display();
    let parsed = fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
    let scenarios = match parsed {
        Ok(Value::Array(scenarios)) => scenarios,
        Ok(scenario) => vec![scenario],
        Err(err) => return (0, vec![format!("{shown}: could not be read: {err}")]),
    };
    let mut ran = 0;
    let mut failures = Vec::new();
    for scenario in scenarios.iter().filter(|s| select(s)) {
        ran += 1;
        let name = scenario
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)");
        if let Err(failure) = run_gate_scenario(scenario) {
            failures.push(format!("{shown}: {name}: {failure}"));
        }
    }
    (ran, failures)
}

#[test]
fn every_gate_scenario_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/gates");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let gates: Vec<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        gates,
        [
            "context",
            "fs",
            "network",
            "notify",
            "send_message",
            "store"
        ]
    );
    let mut ran = 0;
    let mut failures = Vec::new();
    for file in &files {
        let (n, mut failed) = run_file(file, |_| true);
        ran += n;
        failures.append(&mut failed);
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran >= 120, "only {ran} scenarios ran");
}

#[test]
fn the_shared_examples_gate_entries_pass() {
    // shared/ sits beside the repository, for developers and CI alike.
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/conformance/examples/examples.json");
    assert!(
        file.is_file(),
        "{} is missing: shared/ should sit beside the repository",
        file.display()
    );
    // Decision scenarios are the engine's; only the gate entries are run here.
    let (ran, failures) = run_file(&file, |s| s.get("gate").is_some());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(ran, 2);
}

#[test]
fn a_failing_scenario_is_reported_not_skipped() {
    let scenario = serde_json::json!({"name": "wrong on purpose", "gate": "network",
        "allowNetwork": true, "allowlist": [], "url": "https://pku.edu.cn/", "expect": "allow"});
    let failure = run_gate_scenario(&scenario).unwrap_err();
    assert!(
        failure.starts_with("expected allow, got \"error: url_allowlist does not permit"),
        "{failure}"
    );
}
