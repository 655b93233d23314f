//! The sample plugins as the app installs them on a device.

use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::plugins::samples::{Samples, install_on_device};
use harness_core::policy::{Answer, Mode, ModeSource};
use harness_core::registry::{Effect, PluginKind};
use harness_core::scheduler::Owner;
use harness_core::{Engine, Options};
use serde_json::json;

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

#[test]
fn a_data_directory_with_the_old_sample_wallet_loses_it_with_its_modes_and_jobs_and_the_audit_says_so()
 {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut options = Options::new(Arc::new(NoBroker));
        options.catalog = Arc::new(Samples);
        let engine = Engine::open(dir.path(), options).unwrap();
        engine
            .set_mode("wallet", Effect::Money, Mode::Auto)
            .unwrap();
        engine
            .add_job(
                &json!({"name": "余额", "schedule": {"everyMinutes": 60}, "check": {"tool": "wallet.cardBalance", "notify": {"title": "余额", "body": "{balanceYuan}"}}}),
                Owner::User,
            )
            .unwrap();
        engine
            .add_job(
                &json!({"name": "记忆", "schedule": {"everyMinutes": 60}, "check": {"tool": "memory.list", "notify": {"title": "记忆", "body": "有新记忆"}}}),
                Owner::User,
            )
            .unwrap();
        assert_eq!(engine.jobs().len(), 2);
    }
    // The app of this version: no sample catalog.
    let engine = Engine::open(dir.path(), Options::new(Arc::new(NoBroker))).unwrap();
    assert!(engine.plugins().iter().all(|p| p.plugin.id != "wallet"));
    let jobs: Vec<String> = engine.jobs().into_iter().map(|j| j.spec.name).collect();
    assert_eq!(jobs, ["记忆"]);
    let removed: Vec<(String, String, Option<String>)> = engine
        .audit(100)
        .unwrap()
        .into_iter()
        .filter(|r| r.event == "removed")
        .map(|r| (r.actor, r.tool, r.detail))
        .collect();
    assert_eq!(
        removed,
        [(
            "app".to_owned(),
            "wallet".to_owned(),
            Some(
                "this version of the app no longer ships plugin \"wallet\"; it was removed with its modes, preferences and 1 job(s)"
                    .to_owned()
            )
        )]
    );
    drop(engine);
    // Once: opening again removes nothing more and says nothing more.
    let engine = Engine::open(dir.path(), Options::new(Arc::new(NoBroker))).unwrap();
    assert_eq!(
        engine
            .audit(100)
            .unwrap()
            .iter()
            .filter(|r| r.event == "removed")
            .count(),
        1
    );
    // The sample catalog brings it back afresh, its modes the defaults again.
    drop(engine);
    let mut options = Options::new(Arc::new(NoBroker));
    options.catalog = Arc::new(Samples);
    let engine = Engine::open(dir.path(), options).unwrap();
    let money = engine
        .modes("wallet")
        .unwrap()
        .into_iter()
        .find(|(effect, _, _)| *effect == Effect::Money)
        .map(|(_, _, source)| source);
    assert_eq!(money, Some(ModeSource::KindDefault));
}
