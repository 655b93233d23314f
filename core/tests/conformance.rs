//! Runs every scenario under core/tests/conformance, and the shared examples when the shared
//! folder sits beside the checkout, through the real engine.

use std::path::PathBuf;

use harness_core::conformance::run_paths;

#[tokio::test]
async fn every_scenario_passes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("tests/conformance")];
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
