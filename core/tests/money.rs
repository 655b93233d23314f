//! Money with numbers (DESIGN.md §3 8e): a money tool that declares its amount and payee is
//! held to the student's limits per payment and per local day, a payee never paid before is
//! asked with Allow / Deny only, a tap is never questioned but counts, and the day's total
//! outlives a restart.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{ManualClock, local};
use harness_core::invoke::{ApprovalBroker, Call, Outcome, PluginHandler, Prompt, ToolContext};
use harness_core::policy::{Actor, Answer, Code, Preset, PromptKind, Verdict};
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::settings::Change;
use harness_core::turn::ConversationSettings;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// Answers prompts from a queue (a prompt nobody scripted fails the test) and keeps them.
#[derive(Default)]
struct Answers {
    queue: Mutex<Vec<Answer>>,
    shown: Mutex<Vec<Prompt>>,
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

/// Runs every call it is given and keeps the tools' ids.
#[derive(Default)]
struct Ran(Mutex<Vec<String>>);

#[async_trait]
impl PluginHandler for Ran {
    async fn run(&self, tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        self.0.lock().unwrap().push(tool.id.clone());
        Ok(json!({"ok": true}))
    }
}

/// A shipped plugin (money runs unasked by default) whose `pay` declares its amount in yuan
/// and its payee, and whose `tip` declares an amount in fen and no payee.
fn canteen() -> Plugin {
    let manifest = parse_manifest(&json!({"id": "canteen", "title": "食堂", "tools": [
        {"name": "pay", "title": "付款", "effect": "money",
         "amount": {"field": "amountYuan", "unit": "yuan"}, "payee": {"field": "shop"},
         "input": {"type": "object", "properties": {
             "amountYuan": {"type": "number"}, "shop": {"type": "string"}},
             "required": ["amountYuan", "shop"]}},
        {"name": "tip", "title": "打赏", "effect": "money",
         "amount": {"field": "fen", "unit": "fen"},
         "input": {"type": "object", "properties": {"fen": {"type": "integer"}},
             "required": ["fen"]}}
    ]}))
    .unwrap();
    Plugin::load(manifest, PluginKind::Bundled).unwrap()
}

fn open(dir: Option<&std::path::Path>, clock: Arc<ManualClock>) -> (Engine, Arc<Answers>) {
    let answers = Arc::new(Answers::default());
    let mut options = Options::new(answers.clone());
    options.builtin_plugins = false;
    options.clock = clock;
    let engine = match dir {
        Some(dir) => Engine::open(dir, options).unwrap(),
        None => Engine::in_memory(options).unwrap(),
    };
    if !engine.plugins().iter().any(|p| p.plugin.id == "canteen") {
        engine
            .install(canteen(), "bundled", Arc::new(Ran::default()))
            .unwrap();
    }
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    (engine, answers)
}

fn call(actor: Actor, tool: &str, input: Value) -> Call {
    Call {
        tool: format!("canteen.{tool}"),
        actor,
        input,
        conversation: (actor == Actor::Agent).then(|| "c".to_owned()),
    }
}

fn pay(actor: Actor, yuan: f64, shop: &str) -> Call {
    call(actor, "pay", json!({"amountYuan": yuan, "shop": shop}))
}

fn refusal(outcome: &Outcome) -> (Code, String) {
    match outcome {
        Outcome::Refused { code, message } => (*code, message.clone()),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn an_agent_payment_over_the_limit_per_payment_is_refused_naming_the_limit() {
    // DESIGN.md §3 8e: refused `over_limit`, naming the limit and where to change it, with
    // nothing that allows it — under "Skip all permissions" too, and no prompt is raised.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, answers) = open(None, clock);
    engine
        .set_conversation_settings(
            "c",
            ConversationSettings {
                preset: Preset::SkipAll,
                ..ConversationSettings::default()
            },
        )
        .unwrap();
    let done = engine.invoke(pay(Actor::Agent, 100.01, "一食堂")).await;
    assert_eq!(done.decision.verdict, Verdict::Refuse(Code::OverLimit));
    assert_eq!(done.prompt, None);
    let (code, message) = refusal(&done.outcome);
    assert_eq!(code, Code::OverLimit);
    assert_eq!(
        message,
        "This payment of 100.01 yuan is over the student's limit of 100.00 yuan per payment, so \
         \"canteen.pay\" was not run. Only the student can raise the limit: the setting \
         money.perPaymentYuan (a protected change the student confirms)."
    );
    assert!(answers.shown.lock().unwrap().is_empty());
    // Exactly the limit is within it (the payee is new, so it is asked).
    answers.queue.lock().unwrap().push(Answer::Allow);
    let done = engine.invoke(pay(Actor::Agent, 100.0, "一食堂")).await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
}

#[tokio::test]
async fn a_tap_is_never_questioned_but_counts_toward_the_local_day() {
    // seed 000: a tap is never questioned; DESIGN.md §3 8e: it counts toward the day's total,
    // kept per local day in the settings time zone.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 23:30"));
    let (engine, _answers) = open(None, clock.clone());
    let tapped = engine.invoke(pay(Actor::User, 150.0, "一食堂")).await;
    assert!(matches!(tapped.outcome, Outcome::Ran { .. }), "{tapped:?}");
    // 150 + 60 > 200: the agent's payment to a payee paid before passes the day's limit.
    let done = engine.invoke(pay(Actor::Agent, 60.0, "一食堂")).await;
    let (code, message) = refusal(&done.outcome);
    assert_eq!(code, Code::OverLimit);
    assert!(
        message.contains(
            "bring today's spending to 210.00 yuan, over the student's limit of 200.00 yuan per day"
        ) && message.contains("money.perDayYuan"),
        "{message}"
    );
    // 50 more is within it, and runs unasked: the payee was paid before.
    let done = engine.invoke(pay(Actor::Agent, 50.0, "一食堂")).await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    // The next local day in Shanghai (16:10 UTC the same date) starts a new total.
    clock.set(local("Asia/Shanghai", "2026-12-05 00:10"));
    let done = engine.invoke(pay(Actor::Agent, 60.0, "一食堂")).await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    // In London it is still 4 December: the same payments are that day's.
    engine
        .change_setting(Change::TimeZone("Europe/London".into()))
        .unwrap();
    let done = engine.invoke(pay(Actor::Agent, 1.0, "一食堂")).await;
    assert_eq!(refusal(&done.outcome).0, Code::OverLimit);
}

#[tokio::test]
async fn a_payee_never_paid_is_asked_allow_or_deny_with_the_amount_as_headline() {
    // DESIGN.md §3 8e: no auto, no "always": the sheet's headline is the amount and the payee.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, answers) = open(None, clock);
    answers.queue.lock().unwrap().push(Answer::Deny);
    let done = engine.invoke(pay(Actor::Agent, 12.5, "农园")).await;
    assert_eq!(done.decision.verdict, Verdict::Ask(PromptKind::Confirm));
    let prompt = done.prompt.clone().unwrap();
    assert_eq!(prompt.offers, [Answer::Allow, Answer::Deny]);
    assert_eq!(prompt.headline, "12.50 元 · 农园");
    assert_eq!(
        (prompt.amount_fen, prompt.payee.as_deref()),
        (Some(1250), Some("农园"))
    );
    assert_eq!(refusal(&done.outcome).0, Code::Declined);
    // Declined is not paid: the payee is still new.
    answers.queue.lock().unwrap().push(Answer::Allow);
    let done = engine.invoke(pay(Actor::Agent, 12.5, "农园")).await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    // Paid once, the payee is known: the mode (auto) decides.
    let done = engine.invoke(pay(Actor::Agent, 3.0, "农园")).await;
    assert_eq!(done.prompt, None);
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    // A tool with no payee declared is not asked for one; its fen count toward the day.
    let done = engine
        .invoke(call(Actor::Agent, "tip", json!({"fen": 9_000})))
        .await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    // 15.50 + 90.00 + 94.50 is exactly the day's 200.
    let done = engine
        .invoke(call(Actor::Agent, "tip", json!({"fen": 9_450})))
        .await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    let done = engine
        .invoke(call(Actor::Agent, "tip", json!({"fen": 1})))
        .await;
    assert_eq!(refusal(&done.outcome).0, Code::OverLimit);
}

#[tokio::test]
async fn an_amount_that_cannot_be_read_is_an_invalid_input_not_nothing() {
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, _answers) = open(None, clock);
    let done = engine
        .invoke(call(Actor::Agent, "tip", json!({"fen": -5})))
        .await;
    assert_eq!(
        refusal(&done.outcome),
        (
            Code::InvalidInput,
            "The input is invalid: fen: expected a non-negative number of fen".to_owned()
        )
    );
}

#[tokio::test]
async fn raising_a_money_limit_is_a_protected_change_and_lowering_is_not() {
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, _answers) = open(None, clock);
    let limit = |key: &str, value: u32| Change::MoneyLimit {
        key: key.into(),
        value,
    };
    assert!(engine.loosens(&limit("money.perPaymentYuan", 101)));
    assert!(engine.loosens(&limit("money.perDayYuan", 201)));
    assert!(!engine.loosens(&limit("money.perDayYuan", 200)));
    assert!(!engine.loosens(&limit("money.perPaymentYuan", 0)));
    // A lower limit takes effect at the next call.
    engine
        .change_setting(limit("money.perPaymentYuan", 10))
        .unwrap();
    let done = engine.invoke(pay(Actor::Agent, 10.01, "一食堂")).await;
    assert_eq!(refusal(&done.outcome).0, Code::OverLimit);
}

#[tokio::test]
async fn the_days_total_and_the_payees_paid_outlive_a_restart() {
    // DESIGN.md §6: nothing is lost on a killed process; the ledger is in SQLite.
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    {
        let (engine, _answers) = open(Some(dir.path()), clock.clone());
        let tapped = engine.invoke(pay(Actor::User, 190.0, "一食堂")).await;
        assert!(matches!(tapped.outcome, Outcome::Ran { .. }), "{tapped:?}");
    }
    let (engine, answers) = open(Some(dir.path()), clock);
    // Known payee: no prompt; 190 + 20 passes the day's 200.
    let done = engine.invoke(pay(Actor::Agent, 20.0, "一食堂")).await;
    assert_eq!(refusal(&done.outcome).0, Code::OverLimit);
    let done = engine.invoke(pay(Actor::Agent, 10.0, "一食堂")).await;
    assert!(matches!(done.outcome, Outcome::Ran { .. }), "{done:?}");
    assert!(answers.shown.lock().unwrap().is_empty());
}

#[test]
fn an_amount_or_payee_is_declared_only_on_a_money_tool_and_names_an_input_field() {
    let load = |tool: Value| {
        parse_manifest(&json!({"id": "shop", "tools": [tool]}))
            .and_then(|m| Plugin::load(m, PluginKind::Community))
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let input = json!({"type": "object", "properties": {"n": {"type": "number"}}});
    let on_write = load(json!({"name": "t", "effect": "write", "input": input,
        "amount": {"field": "n", "unit": "yuan"}}));
    assert!(
        on_write.as_ref().unwrap_err().contains("tools[0].amount")
            && on_write
                .unwrap_err()
                .contains("only a money tool declares amount; this tool has the write effect"),
    );
    let missing = load(json!({"name": "t", "effect": "money", "input": input,
        "payee": {"field": "to"}}));
    assert!(
        missing
            .unwrap_err()
            .contains("names \"to\", which is not a top-level field of the tool's input"),
    );
    let unit = load(json!({"name": "t", "effect": "money", "input": input,
        "amount": {"field": "n", "unit": "dollar"}}));
    assert!(unit.is_err());
}
