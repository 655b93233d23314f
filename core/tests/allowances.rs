//! "Always" that says how long (DESIGN.md §3): the sheet's "Always allow" holds for this
//! conversation, today, or always; each allowance is kept with its scope and end, ends by
//! itself (tested on the core's clock), is listed while in force and can be revoked.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{ManualClock, local};
use harness_core::invoke::{ApprovalBroker, Call, Outcome, PluginHandler, Prompt, ToolContext};
use harness_core::policy::{Actor, Answer, Code, Mode, ModeSource, PromptKind, Verdict};
use harness_core::registry::{Effect, Plugin, PluginKind, Tool, parse_manifest};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// Answers prompts from a queue (a prompt nobody scripted fails the test) and keeps them.
#[derive(Default)]
struct Answers {
    queue: Mutex<Vec<Answer>>,
    shown: Mutex<Vec<Prompt>>,
}

impl Answers {
    fn next(&self, answer: Answer) {
        self.queue.lock().unwrap().push(answer);
    }

    fn asked(&self) -> usize {
        self.shown.lock().unwrap().len()
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

struct Runs;

#[async_trait]
impl PluginHandler for Runs {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({"ok": true}))
    }
}

/// A community plugin: its writes ask (seed 000's table).
fn notes() -> Plugin {
    let manifest = parse_manifest(&json!({"id": "notes", "title": "笔记", "tools": [
        {"name": "save", "title": "保存", "effect": "write"}
    ]}))
    .unwrap();
    Plugin::load(manifest, PluginKind::Community).unwrap()
}

fn open(clock: Arc<ManualClock>) -> (Engine, Arc<Answers>) {
    let answers = Arc::new(Answers::default());
    let mut options = Options::new(answers.clone());
    options.builtin_plugins = false;
    options.clock = clock;
    let engine = Engine::in_memory(options).unwrap();
    engine
        .install(
            notes(),
            "https://example.org/notes/PLUGIN.md",
            Arc::new(Runs),
        )
        .unwrap();
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    engine.open_conversation("d").unwrap();
    (engine, answers)
}

fn save(conversation: &str) -> Call {
    Call {
        tool: "notes.save".into(),
        actor: Actor::Agent,
        input: json!({}),
        conversation: Some(conversation.into()),
    }
}

fn ran(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Ran { .. })
}

fn write_mode(engine: &Engine) -> (Mode, ModeSource) {
    let modes = engine.modes("notes").unwrap();
    let (_, mode, source) = modes.into_iter().find(|m| m.0 == Effect::Write).unwrap();
    (mode, source)
}

#[tokio::test]
async fn an_allowance_for_today_ends_by_itself_when_the_local_day_ends() {
    // DESIGN.md §3: "today" is kept with its end, the local day's end in the settings time
    // zone, and ends by itself; the mode the student set is not changed.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 21:00"));
    let (engine, answers) = open(clock.clone());
    answers.next(Answer::AlwaysAllowToday);
    let first = engine.invoke(save("c")).await;
    assert_eq!(first.decision.verdict, Verdict::Ask(PromptKind::Ordinary));
    assert!(ran(&first.outcome), "{first:?}");
    assert_eq!(write_mode(&engine), (Mode::Ask, ModeSource::KindDefault));
    // In force: another conversation's call runs unasked too, and the screen lists it.
    assert!(ran(&engine.invoke(save("d")).await.outcome));
    assert_eq!(answers.asked(), 1);
    let listed = engine.allowances().unwrap();
    assert_eq!(listed.len(), 1);
    let row = &listed[0];
    assert_eq!(
        (row.plugin.as_str(), row.effect.as_str(), row.scope.as_str()),
        ("notes", "write", "today")
    );
    assert_eq!(row.tool, "notes.save");
    assert_eq!(row.since_ms, local("Asia/Shanghai", "2026-12-04 21:00"));
    assert_eq!(
        row.until_ms,
        Some(local("Asia/Shanghai", "2026-12-05 00:00"))
    );
    // A minute before midnight it holds; at midnight it has ended.
    clock.set(local("Asia/Shanghai", "2026-12-04 23:59"));
    assert!(ran(&engine.invoke(save("c")).await.outcome));
    assert_eq!(answers.asked(), 1);
    clock.set(local("Asia/Shanghai", "2026-12-05 00:00"));
    answers.next(Answer::Deny);
    let after = engine.invoke(save("c")).await;
    assert_eq!(after.decision.verdict, Verdict::Ask(PromptKind::Ordinary));
    assert!(matches!(
        after.outcome,
        Outcome::Refused {
            code: Code::Declined,
            ..
        }
    ));
    assert_eq!(engine.allowances().unwrap(), []);
}

#[tokio::test]
async fn an_allowance_for_this_conversation_holds_there_only_until_revoked() {
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, answers) = open(clock);
    answers.next(Answer::AlwaysAllowConversation);
    assert!(ran(&engine.invoke(save("c")).await.outcome));
    assert!(ran(&engine.invoke(save("c")).await.outcome));
    assert_eq!(answers.asked(), 1);
    // Another conversation is asked.
    answers.next(Answer::Deny);
    let other = engine.invoke(save("d")).await;
    assert_eq!(other.decision.verdict, Verdict::Ask(PromptKind::Ordinary));
    let listed = engine.allowances().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].scope.as_str(),
            listed[0].conversation.as_deref(),
            listed[0].until_ms
        ),
        ("conversation", Some("c"), None)
    );
    // Revoked, it holds no more.
    engine.revoke_allowance(listed[0].id).unwrap();
    answers.next(Answer::Deny);
    let again = engine.invoke(save("c")).await;
    assert_eq!(again.decision.verdict, Verdict::Ask(PromptKind::Ordinary));
    assert_eq!(engine.allowances().unwrap(), []);
}

#[tokio::test]
async fn always_sets_the_mode_as_seed_000_says_and_revoking_it_puts_the_mode_back() {
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, answers) = open(clock);
    answers.next(Answer::AlwaysAllow);
    assert!(ran(&engine.invoke(save("c")).await.outcome));
    assert_eq!(write_mode(&engine), (Mode::Auto, ModeSource::User));
    let listed = engine.allowances().unwrap();
    assert_eq!(
        (listed[0].scope.as_str(), listed[0].until_ms),
        ("always", None)
    );
    engine.revoke_allowance(listed[0].id).unwrap();
    assert_eq!(write_mode(&engine).0, Mode::Ask);
    answers.next(Answer::Deny);
    let after = engine.invoke(save("c")).await;
    assert_eq!(after.decision.verdict, Verdict::Ask(PromptKind::Ordinary));
}

#[tokio::test]
async fn a_scoped_always_does_not_answer_a_prompt_that_offers_no_always() {
    // DESIGN.md §3: a tainted turn's prompt offers Allow / Deny only; an "always" of any
    // scope given to it is no consent (fail closed), and nothing is kept.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, answers) = open(clock);
    engine.begin_turn("c").unwrap();
    engine.taint("c").unwrap();
    answers.next(Answer::AlwaysAllowToday);
    let done = engine.invoke(save("c")).await;
    assert_eq!(done.decision.verdict, Verdict::Ask(PromptKind::Confirm));
    assert!(matches!(
        done.outcome,
        Outcome::Refused {
            code: Code::Declined,
            ..
        }
    ));
    assert_eq!(engine.allowances().unwrap(), []);
}

fn screens(engine: Engine) -> harness_core::screens::Screens {
    harness_core::screens::Screens::new(Arc::new(engine), harness_core::screens::Live::new())
}

#[tokio::test]
async fn the_sheets_always_allow_offers_this_conversation_today_and_always_saying_what_each_does() {
    // DESIGN.md §3: "始终允许" names how long it holds; each scope says what it changes.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, answers) = open(clock);
    answers.next(Answer::Deny);
    engine.invoke(save("c")).await;
    let prompt = answers.shown.lock().unwrap()[0].clone();
    let screens = screens(engine);
    let sheet = screens.approval(&prompt);
    let scopes: Vec<(Answer, &str, Option<&str>)> = sheet
        .always_scopes
        .iter()
        .map(|b| (b.answer, b.label.as_str(), b.consequence.as_deref()))
        .collect();
    assert_eq!(
        scopes,
        [
            (
                Answer::AlwaysAllowConversation,
                "本次对话",
                Some("只在这次对话里，笔记 的「写入」操作不再询问；别的对话照常询问")
            ),
            (
                Answer::AlwaysAllowToday,
                "今天",
                Some("今天之内 笔记 的「写入」操作不再询问；明天起照常询问")
            ),
            (
                Answer::AlwaysAllow,
                "一直",
                Some("以后 笔记 的写入操作不再询问（「写入」权限设为「自动」）")
            ),
        ]
    );
}

#[tokio::test]
async fn the_allowed_screen_lists_each_allowance_with_tool_scope_since_until_and_revokes_it() {
    // DESIGN.md §3: the 已允许 screen lists every allowance in force; its revoke is a tap
    // (uiOnly).
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 21:00"));
    let (engine, answers) = open(clock);
    answers.next(Answer::AlwaysAllowToday);
    assert!(ran(&engine.invoke(save("c")).await.outcome));
    let screens = screens(engine);
    let screen = screens.allowances().unwrap();
    assert_eq!(screen.title, "已允许");
    assert_eq!(screen.empty, None);
    let row = &screen.rows[0];
    assert_eq!(
        (
            row.plugin_title.as_str(),
            row.tool_title.as_str(),
            row.effect_label.as_str(),
            row.scope_label.as_str(),
            row.since.as_str(),
            row.until.as_str(),
            row.revoke.label.as_str()
        ),
        (
            "笔记",
            "保存",
            "写入",
            "今天",
            "2026-12-04 21:00",
            "2026-12-05 00:00",
            "撤销"
        )
    );
    screens.act(row.revoke.action.clone()).await.unwrap();
    let after = screens.allowances().unwrap();
    assert_eq!(after.rows, []);
    assert_eq!(
        after.empty.as_deref(),
        Some("现在没有「始终允许」：需要时都会先问你")
    );
}

#[tokio::test]
async fn the_spending_screen_shows_the_limits_and_sets_them_from_what_the_student_typed() {
    // DESIGN.md §3 8e: the 花钱 screen edits money.perPaymentYuan and money.perDayYuan.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 12:00"));
    let (engine, _answers) = open(clock);
    let screens = screens(engine);
    let screen = screens.spending().unwrap();
    let limits: Vec<(&str, &str, &str)> = screen
        .limits
        .iter()
        .map(|l| (l.key.as_str(), l.label.as_str(), l.yuan.as_str()))
        .collect();
    assert_eq!(
        limits,
        [
            ("money.perPaymentYuan", "每笔最多（元）", "100"),
            ("money.perDayYuan", "每天最多（元）", "200")
        ]
    );
    assert_eq!(
        (screen.today.label.as_str(), screen.today.value.as_str()),
        ("今天已花", "0.00 元 / 200 元")
    );
    let set = |yuan: &str| harness_core::screens::Action::SetMoneyLimit {
        key: "money.perDayYuan".into(),
        yuan: yuan.into(),
    };
    screens.act(set(" 300 ")).await.unwrap();
    assert_eq!(screens.engine().settings().money.per_day_yuan, 300);
    let typo = screens.act(set("三百")).await.unwrap_err();
    assert_eq!(
        typo.to_string(),
        "money.perDayYuan：请填写整数元，例如 100（填的是「三百」）"
    );
}
