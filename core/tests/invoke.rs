//! The invoke path through the public API: prompts and their answers, what reaches the tool,
//! what the model and the audit see.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use harness_core::invoke::{
    ApprovalBroker, Call, Grant, Outcome, PluginHandler, Prompt, ToolContext,
};
use harness_core::policy::{
    Actor, Answer, Code, Mode, ModeSource, PromptKind, Rule, RuleKind, Step, Verdict,
};
use harness_core::registry::{Effect, Plugin, PluginKind, Tool, parse_manifest};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// seq, actor, event, detail, step of one audit row.
type AuditColumns = (i64, String, String, Option<String>, Option<String>);

/// Answers prompts from a queue and keeps every prompt it was shown.
#[derive(Default)]
struct Answers {
    queue: Mutex<Vec<Answer>>,
    shown: Mutex<Vec<Prompt>>,
}

impl Answers {
    fn with(answers: &[Answer]) -> Arc<Self> {
        let me = Self::default();
        *me.queue.lock().unwrap() = answers.iter().rev().copied().collect();
        Arc::new(me)
    }
}

#[async_trait]
impl ApprovalBroker for Answers {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.shown.lock().unwrap().push(prompt);
        self.queue
            .lock()
            .unwrap()
            .pop()
            .expect("a prompt nobody scripted an answer for")
    }
}

/// Records what each run received, and answers with a result of a chosen size.
#[derive(Default)]
struct Recorder {
    runs: Mutex<Vec<(String, Value, ToolContext)>>,
    result: Mutex<Option<Result<Value, String>>>,
}

#[async_trait]
impl PluginHandler for Recorder {
    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        self.runs
            .lock()
            .unwrap()
            .push((tool.id.clone(), input, ctx));
        self.result
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| Ok(json!({"ok": true})))
    }
}

fn plugin(json: Value, kind: PluginKind) -> Plugin {
    Plugin::load(parse_manifest(&json).unwrap(), kind).unwrap()
}

fn shop() -> Plugin {
    plugin(
        json!({"id": "shop", "title": "小卖部", "tools": [
            {"name": "stock", "title": "库存", "effect": "read"},
            {"name": "order", "title": "下单", "effect": "write",
             "input": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}},
            {"name": "pay", "title": "付款", "effect": "money"},
            {"name": "review", "title": "评价", "effect": "public"},
            {"name": "hidden", "title": "审核", "effect": "write", "userOnly": true},
            {"name": "unlock", "title": "授权", "effect": "write", "grant": true},
            {"name": "rumours", "title": "传闻", "effect": "read", "untrusted": true}
        ]}),
        PluginKind::Community,
    )
}

fn bare_engine(answers: Arc<Answers>) -> (Engine, Arc<Recorder>) {
    let mut options = Options::new(answers);
    options.builtin_plugins = false;
    let engine = Engine::in_memory(options).unwrap();
    let recorder = Arc::new(Recorder::default());
    engine
        .install(
            shop(),
            "https://example.org/shop/PLUGIN.md",
            recorder.clone(),
        )
        .unwrap();
    engine.open_conversation("c").unwrap();
    (engine, recorder)
}

fn engine(answers: Arc<Answers>) -> (Engine, Arc<Recorder>) {
    let (engine, recorder) = bare_engine(answers);
    engine.accept_terms().unwrap();
    (engine, recorder)
}

fn agent(tool: &str, input: Value) -> Call {
    Call {
        tool: tool.into(),
        actor: Actor::Agent,
        input,
        conversation: Some("c".into()),
    }
}

#[tokio::test]
async fn allow_runs_the_call_with_exactly_the_inputs_shown() {
    let answers = Answers::with(&[Answer::Allow]);
    let (engine, recorder) = engine(answers.clone());
    let input = json!({"item": "酸奶", "note": "两瓶"});
    let done = engine.invoke(agent("shop.order", input.clone())).await;
    assert_eq!(done.decision.verdict, Verdict::Ask(PromptKind::Ordinary));
    assert_eq!(done.answer, Some(Answer::Allow));
    let shown = answers.shown.lock().unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].input, input);
    assert_eq!(shown[0].plugin, "shop");
    assert_eq!(shown[0].tool_title, "下单");
    assert_eq!(shown[0].effect, Effect::Write);
    assert_eq!(
        shown[0].offers,
        vec![Answer::Allow, Answer::Deny, Answer::AlwaysAllow]
    );
    let runs = recorder.runs.lock().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].1, input);
    assert_eq!(runs[0].2.grant, None);
    // Allow answers one call: the mode is still the kind default.
    assert_eq!(
        engine.modes("shop").unwrap()[1],
        (Effect::Write, Mode::Ask, ModeSource::KindDefault)
    );
}

#[tokio::test]
async fn deny_declines_without_running_and_tells_the_agent() {
    let (engine, recorder) = engine(Answers::with(&[Answer::Deny]));
    let done = engine
        .invoke(agent("shop.order", json!({"item": "x"})))
        .await;
    assert_eq!(
        done.outcome,
        Outcome::Refused {
            code: Code::Declined,
            message: "The user declined this call.".into()
        }
    );
    assert_eq!(
        done.for_model(),
        r#"{"error":{"code":"declined","message":"The user declined this call."}}"#
    );
    assert!(recorder.runs.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_call_to_a_plugin_not_installed_names_that_plugin() {
    let (engine, recorder) = engine(Answers::with(&[]));
    let done = engine.invoke(agent("nosuch.x", json!({}))).await;
    assert_eq!(
        done.outcome,
        Outcome::Refused {
            code: Code::Unavailable,
            message: "No plugin \"nosuch\" is installed (tool \"nosuch.x\"). The user installs plugins in Settings → Plugins.".into()
        }
    );
    assert!(recorder.runs.lock().unwrap().is_empty());
}

#[tokio::test]
async fn always_allow_sets_the_mode_to_auto_for_that_effect() {
    let (engine, recorder) = engine(Answers::with(&[Answer::AlwaysAllow]));
    engine
        .invoke(agent("shop.order", json!({"item": "x"})))
        .await;
    let modes = engine.modes("shop").unwrap();
    assert_eq!(modes[1], (Effect::Write, Mode::Auto, ModeSource::User));
    assert_eq!(
        modes[2],
        (Effect::Money, Mode::Ask, ModeSource::KindDefault)
    );
    // The next write runs with no prompt (the queue is empty: a prompt would panic).
    let done = engine
        .invoke(agent("shop.order", json!({"item": "y"})))
        .await;
    assert_eq!(done.decision.verdict, Verdict::Run);
    assert_eq!(recorder.runs.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn grant_answers_reach_the_tool_and_change_no_mode() {
    let (engine, recorder) = engine(Answers::with(&[
        Answer::AllowOnce,
        Answer::AlwaysAllow,
        Answer::DontAllow,
    ]));
    for _ in 0..3 {
        engine.invoke(agent("shop.unlock", json!({}))).await;
    }
    let grants: Vec<Option<Grant>> = recorder
        .runs
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.2.grant)
        .collect();
    assert_eq!(grants, vec![Some(Grant::Once), Some(Grant::Always)]);
    assert_eq!(engine.modes("shop").unwrap()[1].2, ModeSource::KindDefault);
}

#[tokio::test]
async fn an_answer_the_prompt_did_not_offer_runs_nothing() {
    let (engine, recorder) = engine(Answers::with(&[Answer::AllowOnce]));
    let done = engine
        .invoke(agent("shop.order", json!({"item": "x"})))
        .await;
    assert!(matches!(
        done.outcome,
        Outcome::Refused {
            code: Code::Declined,
            ..
        }
    ));
    assert!(recorder.runs.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_untrusted_result_taints_the_turn_until_the_next_one() {
    let (engine, _) = engine(Answers::with(&[]));
    engine.set_mode("shop", Effect::Money, Mode::Auto).unwrap();
    assert_eq!(
        engine
            .invoke(agent("shop.pay", json!({})))
            .await
            .decision
            .verdict,
        Verdict::Run
    );
    engine.invoke(agent("shop.rumours", json!({}))).await;
    assert!(engine.conversation("c").unwrap().tainted);
    assert_eq!(
        engine.decide(&agent("shop.pay", json!({}))).step,
        Step::Sensitive
    );
    engine.begin_turn("c").unwrap();
    assert!(!engine.conversation("c").unwrap().tainted);
    assert_eq!(
        engine.decide(&agent("shop.pay", json!({}))).verdict,
        Verdict::Run
    );
}

#[tokio::test]
async fn the_model_gets_a_cut_copy_and_the_ui_the_whole_result() {
    let (engine, recorder) = engine(Answers::with(&[]));
    let long = "帖".repeat(20_000);
    *recorder.result.lock().unwrap() = Some(Ok(json!({"text": long})));
    let done = engine.invoke(agent("shop.stock", json!({}))).await;
    let Outcome::Ran { result, for_model } = &done.outcome else {
        panic!("{done:?}")
    };
    assert_eq!(result["text"].as_str().unwrap().chars().count(), 20_000);
    let (kept, marker) = for_model.split_once('\n').unwrap();
    assert_eq!(kept.chars().count(), 12_000);
    assert_eq!(
        marker,
        "[… 8011 of 20011 characters cut; page or filter the request to see the rest]"
    );
    assert_eq!(done.for_model(), *for_model);
}

#[tokio::test]
async fn a_tool_failure_reaches_the_agent_as_an_error() {
    let (engine, recorder) = engine(Answers::with(&[]));
    *recorder.result.lock().unwrap() = Some(Err("校园卡服务暂时不可用".into()));
    let done = engine.invoke(agent("shop.stock", json!({}))).await;
    assert_eq!(
        done.for_model(),
        r#"{"error":{"code":"tool_failed","message":"校园卡服务暂时不可用"}}"#
    );
}

#[tokio::test]
async fn a_refusal_names_the_setting_to_change() {
    let (engine, _) = engine(Answers::with(&[]));
    engine.set_mode("shop", Effect::Money, Mode::Off).unwrap();
    let done = engine.invoke(agent("shop.pay", json!({}))).await;
    assert_eq!(
        done.for_model(),
        r#"{"error":{"code":"blocked","message":"Plugin \"shop\" has its money tools turned off. The user can change this in Settings → Plugins → shop → AI permissions."}}"#
    );
    let done = engine.invoke(agent("shop.order", json!({"item": 3}))).await;
    assert_eq!(
        done.for_model(),
        r#"{"error":{"code":"invalid_input","message":"The input is invalid: input.item: 3 is not of type \"string\""}}"#
    );
}

#[tokio::test]
async fn the_model_is_offered_only_tools_that_could_run() {
    let (engine, _) = engine(Answers::with(&[]));
    engine.set_mode("shop", Effect::Public, Mode::Off).unwrap();
    engine
        .set_rules(vec![
            Rule {
                kind: RuleKind::Deny,
                tool: "shop.pay".into(),
                effect: None,
                when: None,
            },
            // Conditional: it refuses some calls, so the tool is still offered.
            Rule {
                kind: RuleKind::Deny,
                tool: "shop.order".into(),
                effect: None,
                when: Some(json!({"item": "烟"}).as_object().unwrap().clone()),
            },
        ])
        .unwrap();
    let names: Vec<String> = engine
        .model_tools(Some("c"))
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        [
            "shop__stock",
            "shop__order",
            "shop__unlock",
            "shop__rumours"
        ]
    );
    // Still refused when called by name.
    let done = engine.invoke(agent("shop.review", json!({}))).await;
    assert_eq!(done.decision.verdict, Verdict::Refuse(Code::Blocked));
    // Nothing is offered before the terms are accepted.
    let (fresh, _) = bare_engine(Answers::with(&[]));
    assert!(fresh.model_tools(Some("c")).is_empty());
}

#[tokio::test]
async fn every_decision_answer_and_outcome_is_audited() {
    let (engine, _) = engine(Answers::with(&[Answer::Deny, Answer::Allow]));
    engine
        .invoke(agent("shop.order", json!({"item": "a"})))
        .await;
    engine
        .invoke(agent("shop.order", json!({"item": "b"})))
        .await;
    engine
        .invoke(Call {
            tool: "shop.pay".into(),
            actor: Actor::Scheduler,
            input: json!({}),
            conversation: None,
        })
        .await;
    let rows: Vec<AuditColumns> = engine
        .audit(100)
        .unwrap()
        .into_iter()
        .map(|r| (r.seq, r.actor, r.event, r.detail, r.step))
        .collect();
    let row = |seq: i64, actor: &str, event: &str, detail: Option<&str>, step: Option<&str>| {
        (
            seq,
            actor.to_owned(),
            event.to_owned(),
            detail.map(str::to_owned),
            step.map(str::to_owned),
        )
    };
    assert_eq!(
        rows,
        vec![
            row(1, "agent", "decided", Some("ask:ordinary"), Some("8i")),
            row(2, "agent", "answered", Some("deny"), None),
            row(3, "agent", "stopped", Some("declined"), None),
            row(4, "agent", "decided", Some("ask:ordinary"), Some("8i")),
            row(5, "agent", "answered", Some("allow"), None),
            row(6, "agent", "ran", None, None),
            row(
                7,
                "scheduler",
                "decided",
                Some("refuse:scheduler_read_only"),
                Some("6")
            ),
        ]
    );
    // The audit keeps a digest of the inputs, never the inputs.
    let audit = engine.audit(100).unwrap();
    assert_eq!(
        audit[0].input_digest.as_deref(),
        Some(harness_core::invoke::input_digest(&json!({"item": "a"})).as_str())
    );
    assert_ne!(audit[0].input_digest, audit[3].input_digest);
}

#[tokio::test]
async fn a_settings_change_applies_at_the_next_call_and_becomes_the_default() {
    let (engine, _) = engine(Answers::with(&[]));
    engine.open_conversation("other").unwrap();
    let mut settings = engine.conversation("c").unwrap().settings;
    settings.preset = harness_core::policy::Preset::SkipAll;
    engine.set_conversation_settings("c", settings).unwrap();
    assert_eq!(
        engine
            .decide(&agent("shop.order", json!({"item": "x"})))
            .verdict,
        Verdict::Run
    );
    // Other conversations keep theirs; new ones inherit the change.
    let other = Call {
        conversation: Some("other".into()),
        ..agent("shop.order", json!({"item": "x"}))
    };
    assert_eq!(
        engine.decide(&other).verdict,
        Verdict::Ask(PromptKind::Ordinary)
    );
    assert_eq!(
        engine.open_conversation("new").unwrap().preset,
        harness_core::policy::Preset::SkipAll
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_each_get_their_own_answer() {
    let answers: Vec<Answer> = (0..32)
        .map(|i| {
            if i % 2 == 0 {
                Answer::Allow
            } else {
                Answer::Deny
            }
        })
        .collect();
    let (engine, recorder) = engine(Answers::with(&answers));
    let engine = Arc::new(engine);
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let engine = engine.clone();
            tokio::spawn(async move {
                engine
                    .invoke(agent("shop.order", json!({"item": format!("#{i}")})))
                    .await
            })
        })
        .collect();
    let mut ran = 0;
    for task in tasks {
        if matches!(task.await.unwrap().outcome, Outcome::Ran { .. }) {
            ran += 1;
        }
    }
    assert_eq!(ran, 16);
    assert_eq!(recorder.runs.lock().unwrap().len(), 16);
    assert_eq!(engine.audit(1000).unwrap().len(), 32 * 3);
}
