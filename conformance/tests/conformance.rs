//! Runs every scenario under conformance/scenarios, and the shared examples when the shared
//! folder sits beside the checkout, through the real engine.

use std::path::PathBuf;

use harness_conformance::run_paths;

#[tokio::test]
async fn every_scenario_passes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("scenarios")];
    let shared = root.join("../../shared/conformance/examples");
    if shared.is_dir() {
        paths.push(shared);
    }
    let results = run_paths(&paths).await;
    let failures: Vec<String> = results
        .iter()
        .filter_map(|r| r.result.as_ref().err().map(|e| format!("{}: {e}", r.name)))
        .collect();
    assert!(results.len() >= 100, "only {} scenarios ran", results.len());
    assert_eq!(failures, Vec::<String>::new());
}

#[tokio::test]
async fn a_wrong_expectation_is_a_failure_never_a_skip() {
    let decision = serde_json::json!({"name": "wrong on purpose",
        "plugins": [{"id": "canteen", "kind": "community", "tools": [{"name": "reserve", "effect": "write"}]}],
        "steps": [{"call": {"tool": "canteen.reserve", "actor": "agent"}, "expect": {"decision": "run"}}]});
    assert_eq!(
        harness_conformance::run_scenario(&decision).await,
        Err(
            "step 1: expected run, got ask [allow, deny, always_allow] \"reserve\" (step 8i)"
                .to_owned()
        )
    );
    let gate = serde_json::json!({"name": "wrong on purpose", "gate": "network",
        "allowNetwork": true, "allowlist": [], "url": "https://pku.edu.cn/", "expect": "allow"});
    let failure = harness_conformance::run_scenario(&gate).await.unwrap_err();
    assert!(
        failure.starts_with("expected allow, got \"error: url_allowlist does not permit"),
        "{failure}"
    );
}
