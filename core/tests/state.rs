//! State that lasts: everything survives closing and reopening the data directory; consent,
//! settings, memory and secrets follow their rules.

use std::sync::Arc;

use async_trait::async_trait;
use harness_core::consent::{Permission, PermissionState};
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::plugins::samples::{self, Samples};
use harness_core::policy::{
    Actor, Answer, Code, Mode, ModeSource, Preset, Rule, RuleKind, Verdict,
};
use harness_core::registry::Effect;
use harness_core::secrets::{MemorySecrets, SecretStore};
use harness_core::settings::{Appearance, Change, Language, parse_change};
use harness_core::turn::{ConversationSettings, Scope};
use harness_core::{Engine, EngineError, Options};
use serde_json::{Value, json};

/// Answers every prompt the same way.
struct Always(Answer);

#[async_trait]
impl ApprovalBroker for Always {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        self.0
    }
}

/// Fails the test if anyone is asked.
struct NobodyAsks;

#[async_trait]
impl ApprovalBroker for NobodyAsks {
    async fn ask(&self, prompt: Prompt) -> Answer {
        panic!("nobody should be asked, but {} was", prompt.tool)
    }
}

fn open_with(
    dir: &std::path::Path,
    broker: Arc<dyn ApprovalBroker>,
    secrets: Arc<dyn SecretStore>,
) -> Engine {
    let mut options = Options::new(broker);
    options.catalog = Arc::new(Samples);
    options.secrets = secrets;
    Engine::open(dir, options).unwrap()
}

fn open(dir: &std::path::Path) -> Engine {
    open_with(
        dir,
        Arc::new(Always(Answer::Allow)),
        Arc::new(MemorySecrets::default()),
    )
}

fn agent(tool: &str, input: Value, conversation: &str) -> Call {
    Call {
        tool: tool.into(),
        actor: Actor::Agent,
        input,
        conversation: Some(conversation.into()),
    }
}

#[tokio::test]
async fn everything_survives_closing_and_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let memory_id;
    {
        let engine = open(dir.path());
        samples::install(&engine, "https://plugins.pku-harness.cn/canteen/PLUGIN.md").unwrap();
        engine.accept_terms().unwrap();
        engine.set_cloud_consent("canteen", true).unwrap();
        engine
            .report_permission(Permission::ExactAlarm, PermissionState::Granted)
            .unwrap();
        engine.set_mode("wallet", Effect::Money, Mode::Ask).unwrap();
        engine.set_enabled("mcp-forum", false).unwrap();
        engine
            .set_rules(vec![Rule {
                kind: RuleKind::Deny,
                tool: "wallet.recharge".into(),
                effect: None,
                when: None,
            }])
            .unwrap();
        engine.open_conversation("c1").unwrap();
        let settings = ConversationSettings {
            model: Some("deepseek-chat".into()),
            thinking_effort: Some("high".into()),
            preset: Preset::AskEveryTime,
            plan_mode: true,
        };
        engine.set_conversation_settings("c1", settings).unwrap();
        engine
            .set_conversation_rules(
                "c1",
                vec![Rule {
                    kind: RuleKind::Ask,
                    tool: "*".into(),
                    effect: Some(Effect::Read),
                    when: None,
                }],
            )
            .unwrap();
        engine
            .set_scope(
                "c1",
                Scope {
                    roots: vec![],
                    hosts: vec!["pku.edu.cn".into()],
                    apps: vec![],
                },
            )
            .unwrap();
        engine
            .change_setting(Change::Language(Language::En))
            .unwrap();
        engine
            .change_setting(Change::Appearance(Appearance::Dark))
            .unwrap();
        engine
            .change_setting(parse_change("timeZone", &json!("Europe/London")).unwrap())
            .unwrap();
        memory_id = engine
            .write_memory("住在燕园", Some("c1"), Some(1), true)
            .unwrap()
            .id;
        engine
            .attach_document("c1", "课表.pdf", "周一 高数")
            .unwrap();
        engine
            .invoke(agent("wallet.cardBalance", json!({}), "c1"))
            .await;
    }
    let engine = open(dir.path());
    assert_eq!(engine.load_errors(), Vec::<String>::new());
    let ids: Vec<(String, &str, bool)> = engine
        .plugins()
        .iter()
        .map(|p| (p.plugin.id.clone(), p.plugin.kind.as_str(), p.enabled))
        .collect();
    assert_eq!(
        ids,
        [
            ("canteen".to_owned(), "official", true),
            ("dashboard".to_owned(), "bundled", true),
            ("files".to_owned(), "bundled", true),
            ("mcp-forum".to_owned(), "remote", false),
            ("memory".to_owned(), "bundled", true),
            ("scheduler".to_owned(), "bundled", true),
            ("settings".to_owned(), "bundled", true),
            ("time".to_owned(), "bundled", true),
            ("wallet".to_owned(), "bundled", true)
        ]
    );
    assert_eq!(
        engine.modes("wallet").unwrap()[2],
        (Effect::Money, Mode::Ask, ModeSource::User)
    );
    assert_eq!(
        engine.rules(),
        vec![Rule {
            kind: RuleKind::Deny,
            tool: "wallet.recharge".into(),
            effect: None,
            when: None
        }]
    );
    let conversation = engine.conversation("c1").unwrap();
    assert_eq!(conversation.settings.preset, Preset::AskEveryTime);
    assert_eq!(
        conversation.settings.model.as_deref(),
        Some("deepseek-chat")
    );
    assert!(conversation.settings.plan_mode);
    assert_eq!(conversation.rules.rules().len(), 1);
    assert_eq!(conversation.scope.hosts, vec!["pku.edu.cn".to_owned()]);
    // A new conversation inherits the last change.
    assert_eq!(
        engine.open_conversation("c2").unwrap().preset,
        Preset::AskEveryTime
    );
    let consent = engine.consent();
    // The campus session follows the keystore's sessions, and this one holds none.
    assert!(consent.terms_accepted() && !consent.campus_session);
    assert_eq!(consent.exact_alarm, PermissionState::Granted);
    assert!(consent.cloud.contains("canteen"));
    let settings = engine.settings();
    assert_eq!(
        (
            settings.language,
            settings.appearance,
            settings.time_zone.as_str()
        ),
        (Language::En, Appearance::Dark, "Europe/London")
    );
    let memory = engine.memory(memory_id).unwrap();
    assert_eq!(
        (
            memory.state.as_str(),
            memory.conversation.as_deref(),
            memory.turn
        ),
        ("pending", Some("c1"), Some(1))
    );
    assert_eq!(engine.documents("c1").unwrap()[0].1, "课表.pdf");
    let audit = engine.audit(10).unwrap();
    assert_eq!(
        audit.iter().map(|r| r.event.as_str()).collect::<Vec<_>>(),
        ["decided", "answered", "ran"]
    );
    // The reopened engine still decides with what it loaded: the deny rule holds.
    let done = engine
        .invoke(agent("wallet.recharge", json!({"amountYuan": 5}), "c2"))
        .await;
    assert_eq!(done.decision.verdict, Verdict::Refuse(Code::DeniedByRule));
}

#[tokio::test]
async fn always_allow_is_persisted() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = open_with(
            dir.path(),
            Arc::new(Always(Answer::AlwaysAllow)),
            Arc::new(MemorySecrets::default()),
        );
        samples::install(&engine, "file:///sdcard/canteen/PLUGIN.md").unwrap();
        engine.accept_terms().unwrap();
        engine.open_conversation("c").unwrap();
        let done = engine
            .invoke(agent(
                "canteen.reserve",
                json!({"canteen": "学一食堂", "seats": 2, "time": "12:00"}),
                "c",
            ))
            .await;
        assert_eq!(done.answer, Some(Answer::AlwaysAllow));
    }
    let engine = open_with(
        dir.path(),
        Arc::new(NobodyAsks),
        Arc::new(MemorySecrets::default()),
    );
    assert_eq!(
        engine.modes("canteen").unwrap()[1],
        (Effect::Write, Mode::Auto, ModeSource::User)
    );
    let done = engine
        .invoke(agent(
            "canteen.reserve",
            json!({"canteen": "学一食堂", "seats": 1, "time": "12:30"}),
            "c",
        ))
        .await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }));
}

#[tokio::test]
async fn before_the_terms_the_agent_and_the_scheduler_are_refused_and_a_tap_runs() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine.open_conversation("c").unwrap();
    for actor in [Actor::Agent, Actor::Scheduler] {
        let call = Call {
            actor,
            ..agent("wallet.cardBalance", json!({}), "c")
        };
        assert_eq!(
            engine.decide(&call).verdict,
            Verdict::Refuse(Code::TermsNotAccepted)
        );
    }
    let tap = Call {
        actor: Actor::User,
        conversation: None,
        ..agent("wallet.cardBalance", json!({}), "c")
    };
    assert_eq!(engine.decide(&tap).verdict, Verdict::Run);
    engine.accept_terms().unwrap();
    assert_eq!(
        engine.consent().terms_version,
        Some(harness_core::consent::TERMS_VERSION)
    );
    assert_eq!(
        engine
            .decide(&agent("wallet.cardBalance", json!({}), "c"))
            .verdict,
        Verdict::Run
    );
}

#[test]
fn a_cloud_call_without_consent_fails_consent_required() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    samples::install(&engine, "file:///x/PLUGIN.md").unwrap();
    let err = engine.check_cloud("canteen").unwrap_err();
    assert_eq!(
        err.to_string(),
        "consent_required: plugin \"canteen\" may not use PKU harness Cloud; the user turns on Settings → Plugins → canteen → Allow cloud"
    );
    engine.set_cloud_consent("canteen", true).unwrap();
    assert_eq!(engine.check_cloud("canteen"), Ok(()));
    engine.set_cloud_consent("canteen", false).unwrap();
    assert!(engine.check_cloud("canteen").is_err());
    assert!(matches!(
        engine.set_cloud_consent("nope", true),
        Err(EngineError::NoSuchPlugin(_))
    ));
}

#[test]
fn permission_prompts_are_requested_only_from_a_tap() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    assert_eq!(
        engine.request_permission(Permission::Notifications, Actor::User),
        Ok(())
    );
    for actor in [Actor::Agent, Actor::Scheduler] {
        assert_eq!(
            engine
                .request_permission(Permission::ExactAlarm, actor)
                .unwrap_err()
                .to_string(),
            "the exact-alarm permission prompt is shown only when the user taps; ask the user to tap the button on the plugin's screen"
        );
    }
    engine
        .report_permission(Permission::Notifications, PermissionState::Denied)
        .unwrap();
    assert!(!engine.consent().meets("notifications"));
    engine
        .report_permission(Permission::Notifications, PermissionState::Granted)
        .unwrap();
    assert!(engine.consent().meets("notifications"));
}

#[tokio::test]
async fn attached_documents_are_read_through_the_files_plugin_and_taint_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_with(
        dir.path(),
        Arc::new(NobodyAsks),
        Arc::new(MemorySecrets::default()),
    );
    engine.accept_terms().unwrap();
    engine
        .set_mode("wallet", Effect::Money, Mode::Auto)
        .unwrap();
    engine.open_conversation("c").unwrap();
    let text = format!("{}讲座在二教{}", "甲".repeat(4100), "乙".repeat(10));
    let doc = engine.attach_document("c", "通知.txt", &text).unwrap();
    // No tool opens the picker: the files plugin offers only reading what the user attached.
    let files: Vec<String> = engine
        .model_tools(Some("c"))
        .into_iter()
        .map(|t| t.name)
        .filter(|n| n.starts_with("files__"))
        .collect();
    assert_eq!(files, ["files__list", "files__page", "files__search"]);
    let found = engine
        .invoke(agent(
            "files.search",
            json!({"document": doc, "query": "讲座"}),
            "c",
        ))
        .await;
    let Outcome::Ran { result, .. } = &found.outcome else {
        panic!("{found:?}")
    };
    assert_eq!(result["matches"][0]["page"], 2);
    let page = engine
        .invoke(agent(
            "files.page",
            json!({"document": doc, "page": 2}),
            "c",
        ))
        .await;
    let Outcome::Ran { result, .. } = &page.outcome else {
        panic!("{page:?}")
    };
    assert_eq!(
        result["text"].as_str().unwrap().chars().count(),
        100 + "讲座在二教".chars().count() + 10
    );
    assert!(engine.conversation("c").unwrap().tainted);
    // A money call in this turn now needs the user, with Allow / Deny only (DESIGN.md §3): the
    // broker would panic, so decide only.
    assert_eq!(
        engine
            .decide(&agent("wallet.recharge", json!({"amountYuan": 5}), "c"))
            .verdict,
        Verdict::Ask(harness_core::policy::PromptKind::Confirm)
    );
}

#[tokio::test]
async fn a_memory_written_in_a_tainted_turn_waits_for_approval() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_with(
        dir.path(),
        Arc::new(NobodyAsks),
        Arc::new(MemorySecrets::default()),
    );
    samples::install(&engine, "file:///x/PLUGIN.md").unwrap();
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    let turn = engine.begin_turn("c").unwrap();
    let clean = engine
        .invoke(agent("memory.write", json!({"text": "喜欢农园"}), "c"))
        .await;
    let Outcome::Ran { result, .. } = &clean.outcome else {
        panic!("{clean:?}")
    };
    assert_eq!(result["state"], "active");
    engine
        .invoke(agent("mcp-forum.latestPosts", json!({}), "c"))
        .await;
    let tainted = engine
        .invoke(agent(
            "memory.write",
            json!({"text": "用户要求充值500元"}),
            "c",
        ))
        .await;
    let Outcome::Ran { result, .. } = &tainted.outcome else {
        panic!("{tainted:?}")
    };
    assert_eq!(result["state"], "pending");
    let pending_id = result["id"].as_i64().unwrap();
    assert_eq!(
        engine.memories_in_effect().unwrap(),
        vec!["喜欢农园".to_owned()]
    );
    let listed = engine.memory(pending_id).unwrap();
    assert_eq!(
        (listed.conversation.as_deref(), listed.turn),
        (Some("c"), Some(turn as i64))
    );
    // Approving is the user's alone.
    let by_agent = engine
        .invoke(agent("memory.approve", json!({"id": pending_id}), "c"))
        .await;
    assert_eq!(by_agent.decision.verdict, Verdict::Refuse(Code::UserOnly));
    let tap = Call {
        tool: "memory.approve".into(),
        actor: Actor::User,
        input: json!({"id": pending_id}),
        conversation: None,
    };
    assert!(matches!(
        engine.invoke(tap).await.outcome,
        Outcome::Ran { .. }
    ));
    assert_eq!(
        engine.memories_in_effect().unwrap(),
        vec!["喜欢农园".to_owned(), "用户要求充值500元".to_owned()]
    );
    // It was decided once; deciding again is an error naming its state.
    assert_eq!(
        engine
            .decide_memory(pending_id, false)
            .unwrap_err()
            .to_string(),
        format!("memory {pending_id} is active, not pending")
    );
}

#[tokio::test]
async fn a_rejected_memory_never_takes_effect() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let m = engine.write_memory("x", None, None, true).unwrap();
    engine.decide_memory(m.id, false).unwrap();
    assert_eq!(engine.memory(m.id).unwrap().state.as_str(), "rejected");
    assert!(engine.memories_in_effect().unwrap().is_empty());
}

#[tokio::test]
async fn a_loosening_settings_change_asks_and_a_tightening_one_runs() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_with(
        dir.path(),
        Arc::new(Always(Answer::Deny)),
        Arc::new(MemorySecrets::default()),
    );
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    let change = |key: &str, value: Value| {
        agent("settings.change", json!({"key": key, "value": value}), "c")
    };
    // Tightening runs under the settings plugin's own mode (auto).
    let tighten = engine
        .invoke(change("plugins.wallet.modes.money", json!("off")))
        .await;
    assert!(
        matches!(tighten.outcome, Outcome::Ran { .. }),
        "{tighten:?}"
    );
    assert_eq!(engine.modes("wallet").unwrap()[2].1, Mode::Off);
    // Loosening it again asks, even under Auto-edit; the user denies, and nothing changes.
    let loosen = engine
        .invoke(change("plugins.wallet.modes.money", json!("auto")))
        .await;
    assert_eq!(loosen.decision.step, harness_core::policy::Step::Sensitive);
    assert!(matches!(
        loosen.outcome,
        Outcome::Refused {
            code: Code::Declined,
            ..
        }
    ));
    assert_eq!(engine.modes("wallet").unwrap()[2].1, Mode::Off);
    for (key, value) in [
        ("plugins.wallet.enabled", json!(true)),
        ("model.endpoint", json!("https://api.example.com/v1")),
        ("rules", json!([{"kind": "allow", "tool": "*"}])),
    ] {
        let asked = engine.decide(&change(key, value.clone()));
        let expected = if key == "plugins.wallet.enabled" {
            Verdict::Run
        } else {
            Verdict::Ask(harness_core::policy::PromptKind::Ordinary)
        };
        assert_eq!(asked.verdict, expected, "{key}");
    }
    engine.set_enabled("wallet", false).unwrap();
    assert_eq!(
        engine
            .decide(&change("plugins.wallet.enabled", json!(true)))
            .step,
        harness_core::policy::Step::Sensitive
    );
    // A settings change the agent makes with a bad value fails, naming the key.
    let bad = engine.invoke(change("timeZone", json!("Beijing"))).await;
    assert_eq!(
        bad.outcome,
        Outcome::Failed { message: "settings key \"timeZone\": \"Beijing\" is not an IANA time zone name (for example Asia/Shanghai)".into() }
    );
    assert_eq!(engine.settings().time_zone, "Asia/Shanghai");
}

#[test]
fn preferences_are_validated_against_the_plugin_schema_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let doc = "---\n{\"id\": \"notices\", \"preferences\": {\"type\": \"object\", \"properties\": {\"keyword\": {\"type\": \"string\"}}, \"additionalProperties\": false}}\n---\n";
    engine.install_document(doc, "file:///x/PLUGIN.md").unwrap();
    let err = engine
        .change_setting(
            parse_change("plugins.notices.preferences", &json!({"keyword": 3})).unwrap(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings key \"plugins.notices.preferences\": preferences.keyword: 3 is not of type \"string\""
    );
    assert_eq!(engine.preferences("notices"), None);
    engine
        .change_setting(
            parse_change("plugins.notices.preferences", &json!({"keyword": "讲座"})).unwrap(),
        )
        .unwrap();
    assert_eq!(
        engine.preferences("notices"),
        Some(json!({"keyword": "讲座"}))
    );
    let err = engine
        .change_setting(parse_change("plugins.wallet.preferences", &json!({})).unwrap())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings key \"plugins.wallet.preferences\": this plugin has no preferences"
    );
    let err = engine
        .change_setting(parse_change("plugins.ghost.modes.read", &json!("off")).unwrap())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings key \"plugins.ghost.modes.read\": no plugin \"ghost\" is installed"
    );
}

#[tokio::test]
async fn the_agent_can_only_open_the_screen_of_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    let done = engine
        .invoke(agent(
            "settings.openScreen",
            json!({"screen": "api-keys"}),
            "c",
        ))
        .await;
    assert_eq!(
        done.outcome,
        Outcome::Ran {
            result: json!({"status": "open_screen", "screen": "api-keys"}),
            for_model: r#"{"screen":"api-keys","status":"open_screen"}"#.into()
        }
    );
    let done = engine
        .invoke(agent(
            "settings.change",
            json!({"key": "model.apiKey", "value": "sk-x"}),
            "c",
        ))
        .await;
    // The agent is told where the user enters it; the value is not repeated.
    assert_eq!(
        done.outcome,
        Outcome::Failed {
            message: "settings key \"model.apiKey\": the API key is a secret, not a setting: the user enters it in Settings → Model → API key, which keeps it in the keystore".into()
        }
    );
}

#[tokio::test]
async fn no_secret_reaches_the_database_or_the_audit() {
    let dir = tempfile::tempdir().unwrap();
    let secrets: Arc<MemorySecrets> = Arc::new(MemorySecrets::default());
    let secret = "sk-live-7f3a9c1e5b2d4868a0c3";
    {
        let engine = open_with(dir.path(), Arc::new(Always(Answer::Allow)), secrets.clone());
        samples::install(&engine, "file:///x/PLUGIN.md").unwrap();
        engine.accept_terms().unwrap();
        engine.open_conversation("c").unwrap();
        engine
            .set_secret(harness_core::secrets::keys::MODEL_API_KEY, secret)
            .unwrap();
        assert!(
            engine
                .has_secret(harness_core::secrets::keys::MODEL_API_KEY)
                .unwrap()
        );
        // Even a call whose inputs carry the secret leaves only a digest in the audit.
        engine
            .invoke(agent(
                "mcp-forum.reply",
                json!({"postId": "p1", "text": secret}),
                "c",
            ))
            .await;
        let audit = engine.audit(100).unwrap();
        assert!(audit.iter().all(|r| !format!("{r:?}").contains(secret)));
    }
    assert_eq!(
        secrets
            .get(harness_core::secrets::keys::MODEL_API_KEY)
            .unwrap()
            .as_deref(),
        Some(secret)
    );
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds the secret",
                path.display()
            );
        }
    }
}

#[test]
fn a_bundled_plugin_cannot_be_removed_and_a_document_can() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    samples::install(&engine, "file:///x/PLUGIN.md").unwrap();
    engine
        .set_mode("canteen", Effect::Write, Mode::Off)
        .unwrap();
    assert_eq!(
        engine.uninstall("wallet").unwrap_err().to_string(),
        "plugin \"wallet\" ships with the app and cannot be removed; turn it off instead"
    );
    engine.uninstall("canteen").unwrap();
    drop(engine);
    let engine = open(dir.path());
    assert!(engine.plugins().iter().all(|p| p.plugin.id != "canteen"));
    // Installed again, it starts from its defaults: the old mode went with it.
    engine
        .install_document(samples::CANTEEN_DOCUMENT, "file:///x/PLUGIN.md")
        .unwrap();
    assert_eq!(
        engine.modes("canteen").unwrap()[1],
        (Effect::Write, Mode::Ask, ModeSource::KindDefault)
    );
}

#[test]
fn a_model_setting_used_for_now_is_in_effect_and_saved_only_when_kept() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = || parse_change("model.endpoint", &json!("https://api.deepseek.com/v1"));
    {
        let engine = open(dir.path());
        engine.use_setting_for_now(endpoint().unwrap()).unwrap();
        assert_eq!(
            engine.settings().model.endpoint,
            "https://api.deepseek.com/v1"
        );
        // Another change is saved alone: it does not carry the value in effect for now.
        engine
            .change_setting(parse_change("language", &json!("en")).unwrap())
            .unwrap();
        assert_eq!(
            engine
                .setting_values()
                .iter()
                .find(|(k, _)| k == "model.endpoint"),
            Some(&(
                "model.endpoint".to_owned(),
                json!("https://api.deepseek.com/v1")
            ))
        );
    }
    {
        let engine = open(dir.path());
        assert_eq!(engine.settings().model.endpoint, "");
        assert_eq!(engine.settings().language, Language::En);
        engine.use_setting_for_now(endpoint().unwrap()).unwrap();
        engine.save_settings_in_effect().unwrap();
        let refused = engine
            .use_setting_for_now(parse_change("language", &json!("zh")).unwrap())
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "only model.endpoint and model.name can be used before they are saved"
        );
    }
    let engine = open(dir.path());
    assert_eq!(
        engine.settings().model.endpoint,
        "https://api.deepseek.com/v1"
    );
    assert_eq!(engine.settings().language, Language::En);
}

#[test]
fn every_listed_setting_is_a_key_a_change_takes_and_setting_it_back_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    samples::install(&engine, "file:///x/PLUGIN.md").unwrap();
    let rules = json!([{"kind": "ask", "tool": "canteen.*", "effect": "write"}]);
    engine
        .change_setting(parse_change("rules", &rules).unwrap())
        .unwrap();
    let listed = engine.setting_values();
    let keys: Vec<&str> = listed.iter().map(|(k, _)| k.as_str()).collect();
    for key in [
        "timeZone",
        "plugins.officialHost",
        "campus.hosts",
        "agent.maxToolCalls",
        "plugins.canteen.enabled",
        "plugins.canteen.modes.write",
        "rules",
    ] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
    assert!(
        listed.contains(&("rules".to_owned(), rules.clone())),
        "{listed:?}"
    );
    assert!(!keys.contains(&"officialHost"), "{keys:?}");
    for (key, value) in &listed {
        // An empty model name or endpoint is listed as it is, and refused as a value.
        if value == &json!("") {
            continue;
        }
        let change = parse_change(key, value).unwrap_or_else(|e| panic!("{key} = {value}: {e}"));
        engine.change_setting(change).unwrap();
    }
    assert_eq!(engine.setting_values(), listed);
}
