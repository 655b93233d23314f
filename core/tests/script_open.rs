//! Opening a data directory with the shipped TypeScript plugins runs no JavaScript (issue: each
//! process spent most of its start in QuickJS reading manifests that never change): their
//! manifests are the JSON sdk/build.mjs wrote beside each bundle, and a plugin's runtime is made
//! on its first call; nor is the JSON Schema validator's runtime made before a first check. A
//! process of its own, so the count of runtimes is this test's alone.

use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Call, Prompt};
use harness_core::plugins::script::{self, BUNDLES, Shipped};
use harness_core::policy::{Actor, Answer};
use harness_core::schema;
use harness_core::{Engine, Options};
use serde_json::json;

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

#[tokio::test]
async fn opening_with_the_shipped_plugins_makes_no_runtime_until_a_first_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Deny));
    options.catalog = Arc::new(Shipped);
    let engine = Engine::open(dir.path(), options).unwrap();
    engine.accept_terms().unwrap();

    // Every shipped plugin is listed, with its tools, and no runtime was made to list them.
    let listed: Vec<String> = engine
        .plugins()
        .into_iter()
        .map(|v| v.plugin.id.clone())
        .collect();
    for bundle in BUNDLES {
        assert!(listed.iter().any(|id| id == bundle.id), "{listed:?}");
    }
    assert!(engine.tool("canteen.openNow").is_some());
    assert_eq!(script::runtimes_made(), 0);
    // Nor the JSON Schema validator's, the built-in plugins' schemas among them; not when the
    // directory opens again either.
    assert!(!schema::started());
    drop(engine);
    let mut options = Options::new(Arc::new(Deny));
    options.catalog = Arc::new(Shipped);
    let engine = Engine::open(dir.path(), options).unwrap();
    assert!(engine.tool("canteen.openNow").is_some());
    assert_eq!(script::runtimes_made(), 0);
    assert!(!schema::started());

    // A plugin's first call makes its runtime; its second reuses it.
    for _ in 0..2 {
        engine
            .invoke(Call {
                tool: "canteen.openNow".into(),
                actor: Actor::User,
                input: json!({}),
                conversation: None,
            })
            .await;
    }
    assert_eq!(script::runtimes_made(), 1);
    // The call's input was checked.
    assert!(schema::started());
}
