//! `campus.hosts` and `plugins.officialHost` through `change_setting`: each value checked as a
//! bare host name (the error names the key), persisted, and a protected change when it loosens
//! what plugins may reach (DESIGN.md §3 step 8e).

use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::policy::{Actor, Answer, Preset, Verdict};
use harness_core::settings::{DEFAULT_OFFICIAL_HOST, parse_change};
use harness_core::turn::ConversationSettings;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

struct Allows;

#[async_trait]
impl ApprovalBroker for Allows {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Allow
    }
}

fn err(key: &str, value: Value) -> String {
    parse_change(key, &value).unwrap_err().to_string()
}

#[test]
fn a_value_that_is_not_a_bare_host_name_is_refused_naming_the_key() {
    assert_eq!(
        err("campus.hosts", json!("portal.pku.edu.cn")),
        "settings key \"campus.hosts\": expected a JSON array of host names, got \"portal.pku.edu.cn\""
    );
    assert_eq!(
        err("campus.hosts", json!(["portal.pku.edu.cn", 7])),
        "settings key \"campus.hosts\": item 1: expected a host name string, got 7"
    );
    assert_eq!(
        err("campus.hosts", json!(["https://portal.pku.edu.cn"])),
        "settings key \"campus.hosts\": item 0: \"https://portal.pku.edu.cn\" has a scheme; give the host name only (e.g. portal.pku.edu.cn)"
    );
    assert_eq!(
        err(
            "campus.hosts",
            json!(["bdcard.pku.edu.cn", "portal.pku.edu.cn/login"])
        ),
        "settings key \"campus.hosts\": item 1: \"portal.pku.edu.cn/login\" has a path ('/'); give the host name only (e.g. portal.pku.edu.cn)"
    );
    assert_eq!(
        err("campus.hosts", json!(["bdcard.pku.edu.cn:8443"])),
        "settings key \"campus.hosts\": item 0: \"bdcard.pku.edu.cn:8443\" has a port (':'); give the host name only (e.g. portal.pku.edu.cn)"
    );
    assert_eq!(
        err(
            "campus.hosts",
            json!(["bdcard.pku.edu.cn", "BDCARD.pku.edu.cn"])
        ),
        "settings key \"campus.hosts\": item 1: \"bdcard.pku.edu.cn\" is listed twice"
    );
    assert_eq!(
        err("campus.hosts", json!(["card pku"])),
        "settings key \"campus.hosts\": item 0: \"card pku\" is not a host name: use letters, digits and hyphens between dots"
    );
    assert_eq!(
        err(
            "plugins.officialHost",
            json!("https://plugins.example.org/")
        ),
        "settings key \"plugins.officialHost\": \"https://plugins.example.org/\" has a scheme; give the host name only (e.g. portal.pku.edu.cn)"
    );
    assert_eq!(
        err("plugins.officialHost", json!(["plugins.example.org"])),
        "settings key \"plugins.officialHost\": expected a string, got [\"plugins.example.org\"]"
    );
}

#[test]
fn both_are_kept_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = Engine::open(dir.path(), Options::new(Arc::new(Allows))).unwrap();
        for (key, value) in [
            (
                "campus.hosts",
                json!(["Portal.pku.edu.cn", "elective.pku.edu.cn"]),
            ),
            ("plugins.officialHost", json!("plugins.example.org")),
        ] {
            engine
                .change_setting(parse_change(key, &value).unwrap())
                .unwrap();
        }
    }
    let engine = Engine::open(dir.path(), Options::new(Arc::new(Allows))).unwrap();
    let settings = engine.settings();
    assert_eq!(
        settings.campus.hosts,
        ["portal.pku.edu.cn", "elective.pku.edu.cn"]
    );
    assert_eq!(settings.official_host, "plugins.example.org");
}

#[test]
fn adding_a_campus_host_or_changing_the_official_host_loosens_removing_a_host_does_not() {
    let engine = Engine::in_memory(Options::new(Arc::new(Allows))).unwrap();
    let loosens = |key: &str, value: Value| engine.loosens(&parse_change(key, &value).unwrap());
    assert_eq!(
        engine.settings().campus.hosts,
        [
            "portal.pku.edu.cn",
            "bdcard.pku.edu.cn",
            "treehole.pku.edu.cn",
            "wproc.pku.edu.cn",
            "course.pku.edu.cn"
        ]
    );
    assert!(loosens(
        "campus.hosts",
        json!(["portal.pku.edu.cn", "bdcard.pku.edu.cn", "evil.example.org"])
    ));
    assert!(!loosens("campus.hosts", json!(["bdcard.pku.edu.cn"])));
    assert!(!loosens(
        "campus.hosts",
        json!(["bdcard.pku.edu.cn", "portal.pku.edu.cn"])
    ));
    assert!(loosens(
        "plugins.officialHost",
        json!("plugins.example.org")
    ));
    assert!(!loosens(
        "plugins.officialHost",
        json!(DEFAULT_OFFICIAL_HOST)
    ));
}

#[tokio::test]
async fn the_agent_adding_a_campus_host_asks_even_skipping_permissions_and_is_refused_when_tainted()
{
    let engine = Engine::in_memory(Options::new(Arc::new(Allows))).unwrap();
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    engine
        .set_conversation_settings(
            "c",
            ConversationSettings {
                preset: Preset::SkipAll,
                ..ConversationSettings::default()
            },
        )
        .unwrap();
    let call = |key: &str, value: Value| Call {
        tool: "settings.change".into(),
        actor: Actor::Agent,
        input: json!({"key": key, "value": value}),
        conversation: Some("c".into()),
    };
    let add = || {
        call(
            "campus.hosts",
            json!(["portal.pku.edu.cn", "bdcard.pku.edu.cn", "evil.example.org"]),
        )
    };
    engine.begin_turn("c").unwrap();
    let decision = engine.decide(&add());
    assert!(matches!(decision.verdict, Verdict::Ask(_)), "{decision:?}");
    // Removing a host narrows: under "Skip all permissions" it runs without a prompt.
    let narrowed = engine
        .invoke(call("campus.hosts", json!(["bdcard.pku.edu.cn"])))
        .await;
    assert!(narrowed.prompt.is_none());
    assert!(
        matches!(narrowed.outcome, Outcome::Ran { .. }),
        "{narrowed:?}"
    );
    assert_eq!(engine.settings().campus.hosts, ["bdcard.pku.edu.cn"]);

    engine.taint("c").unwrap();
    for refused in [
        add(),
        call("plugins.officialHost", json!("plugins.example.org")),
    ] {
        let invocation = engine.invoke(refused).await;
        match &invocation.outcome {
            Outcome::Refused { code, .. } => assert_eq!(code.as_str(), "tainted"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(engine.settings().campus.hosts, ["bdcard.pku.edu.cn"]);
    assert_eq!(engine.settings().official_host, DEFAULT_OFFICIAL_HOST);
}
