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
        let engine = with_samples(dir.path());
        engine
            .set_mode("wallet", Effect::Money, Mode::Auto)
            .unwrap();
        engine.add_job(&balance_job(), Owner::User).unwrap();
        engine
            .add_job(
                &json!({"name": "记忆", "schedule": {"everyMinutes": 60}, "check": {"tool": "memory.list", "notify": {"title": "记忆", "body": "有新记忆"}}}),
                Owner::User,
            )
            .unwrap();
        assert_eq!(engine.jobs().len(), 2);
    }
    // A catalog without any `wallet` (the app's ships 校园卡 under that id, which takes the row
    // over instead: the tests below).
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
    let engine = with_samples(dir.path());
    let money = engine
        .modes("wallet")
        .unwrap()
        .into_iter()
        .find(|(effect, _, _)| *effect == Effect::Money)
        .map(|(_, _, source)| source);
    assert_eq!(money, Some(ModeSource::KindDefault));
}

/// A data directory as an earlier version left it: the sample catalog with its wallet.
fn with_samples(dir: &std::path::Path) -> Engine {
    let mut options = Options::new(Arc::new(NoBroker));
    options.catalog = Arc::new(Samples);
    Engine::open(dir, options).unwrap()
}

fn balance_job() -> serde_json::Value {
    json!({"name": "余额", "schedule": {"everyMinutes": 60}, "check": {"tool": "wallet.cardBalance", "notify": {"title": "余额", "body": "{balanceYuan}"}}})
}

/// The money mode of `plugin` and where it comes from.
fn money(engine: &Engine, plugin: &str) -> Option<(Mode, ModeSource)> {
    engine
        .modes(plugin)
        .unwrap()
        .into_iter()
        .find(|(effect, _, _)| *effect == Effect::Money)
        .map(|(_, mode, source)| (mode, source))
}

fn shipped(dir: &std::path::Path) -> Engine {
    let mut options = Options::new(Arc::new(NoBroker));
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    Engine::open(dir, options).unwrap()
}

/// The student chooses money `auto` for the new plugin; the next open keeps it as theirs.
fn keeps_a_later_choice(engine: Engine, dir: &std::path::Path) -> Engine {
    engine
        .set_mode("wallet", Effect::Money, Mode::Auto)
        .unwrap();
    drop(engine);
    let engine = shipped(dir);
    assert_eq!(
        money(&engine, "wallet"),
        Some((Mode::Auto, ModeSource::User))
    );
    engine
}

fn replaced(engine: &Engine) -> Vec<(String, String, Option<String>)> {
    engine
        .audit(100)
        .unwrap()
        .into_iter()
        .filter(|r| r.event == "replaced" || r.event == "removed")
        .map(|r| (r.event, r.tool, r.detail))
        .collect()
}

#[test]
fn the_shipped_card_plugin_replaces_the_old_sample_wallet_and_its_money_mode_is_never_looser() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = with_samples(dir.path());
        engine
            .set_mode("wallet", Effect::Money, Mode::Auto)
            .unwrap();
        engine.set_mode("wallet", Effect::Read, Mode::Ask).unwrap();
        engine.add_job(&balance_job(), Owner::User).unwrap();
    }
    // The app of this version ships 校园卡 with the id `wallet`.
    let engine = shipped(dir.path());
    let wallet = engine
        .plugins()
        .into_iter()
        .find(|p| p.plugin.id == "wallet")
        .unwrap();
    assert!(
        wallet
            .plugin
            .tools
            .iter()
            .any(|t| t.name == "useDigitalCard")
    );
    // "auto" was given to a sample whose recharge moved nothing: it is no consent to the real
    // card's money tool, so the new plugin's own default applies. A stricter choice stays.
    assert_eq!(
        money(&engine, "wallet"),
        Some((Mode::Ask, ModeSource::PluginDefault))
    );
    assert_eq!(
        engine.modes("wallet").unwrap()[0],
        (Effect::Read, Mode::Ask, ModeSource::User)
    );
    // The check on the balance reads the same tool and field of the real card now.
    let jobs: Vec<String> = engine.jobs().into_iter().map(|j| j.spec.name).collect();
    assert_eq!(jobs, ["余额"]);
    assert_eq!(
        replaced(&engine),
        [(
            "replaced".to_owned(),
            "wallet".to_owned(),
            Some(
                "plugin \"wallet\" is now the app's 校园卡 in place of the sample of earlier versions; it kept its jobs and preferences, and the modes looser than its defaults were dropped: money auto → ask"
                    .to_owned()
            )
        )]
    );
    // Once: the student's later choice for the new plugin is theirs, and nothing more is said.
    let engine = keeps_a_later_choice(engine, dir.path());
    assert_eq!(replaced(&engine).len(), 1);
}

#[test]
fn a_stricter_money_mode_of_the_old_sample_wallet_stays_with_the_shipped_one() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = with_samples(dir.path());
        engine.set_mode("wallet", Effect::Money, Mode::Off).unwrap();
    }
    let engine = shipped(dir.path());
    assert_eq!(
        money(&engine, "wallet"),
        Some((Mode::Off, ModeSource::User))
    );
    assert_eq!(
        replaced(&engine),
        [(
            "replaced".to_owned(),
            "wallet".to_owned(),
            Some(
                "plugin \"wallet\" is now the app's 校园卡 in place of the sample of earlier versions; it kept its jobs, preferences and modes"
                    .to_owned()
            )
        )]
    );
}

#[test]
fn a_fresh_data_directory_gets_the_shipped_card_plugin_with_nothing_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let engine = shipped(dir.path());
    assert_eq!(
        money(&engine, "wallet"),
        Some((Mode::Ask, ModeSource::PluginDefault))
    );
    let engine = keeps_a_later_choice(engine, dir.path());
    assert!(replaced(&engine).is_empty());
}
