//! The sample plugins as the app installs them on a device.

use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::plugins::samples::{Samples, install_on_device};
use harness_core::policy::Answer;
use harness_core::registry::PluginKind;
use harness_core::{Engine, Options};

struct NoBroker;

#[async_trait]
impl ApprovalBroker for NoBroker {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

#[test]
fn samples_installed_on_the_device_make_the_canteen_a_community_plugin() {
    let mut options = Options::new(Arc::new(NoBroker));
    options.catalog = Arc::new(Samples);
    let engine = Engine::in_memory(options).unwrap();
    install_on_device(&engine, std::path::Path::new("/data/pku")).unwrap();
    let kinds: Vec<(String, PluginKind)> = engine
        .plugins()
        .iter()
        .filter(|p| p.plugin.kind != PluginKind::Bundled)
        .map(|p| (p.plugin.id.clone(), p.plugin.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("canteen".to_owned(), PluginKind::Community),
            ("mcp-forum".to_owned(), PluginKind::Remote)
        ]
    );
}
