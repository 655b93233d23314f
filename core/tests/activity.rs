//! The 活动 screen (issue 41.5): a day's calls in words, grouped by conversation, filterable by
//! plugin and effect, with the day's spend; read from the audit on the core's clock.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{ManualClock, local};
use harness_core::invoke::{ApprovalBroker, Call, PluginHandler, Prompt, ToolContext};
use harness_core::policy::{Actor, Answer};
use harness_core::registry::{Effect, Plugin, PluginKind, Tool, parse_manifest};
use harness_core::scheduler::Owner;
use harness_core::screens::{ActivityFilter, Live, Screens};
use harness_core::settings::parse_change;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// A call as the screen says it: when, the tool, its effect, what became of it.
type Said = (String, String, String, String);

#[derive(Default)]
struct Answers(Mutex<Vec<Answer>>);

#[async_trait]
impl ApprovalBroker for Answers {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        self.0.lock().unwrap().remove(0)
    }
}

struct Runs;

#[async_trait]
impl PluginHandler for Runs {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({"ok": true}))
    }
}

fn notes() -> Plugin {
    let manifest = parse_manifest(&json!({"id": "notes", "title": "笔记", "tools": [
        {"name": "save", "title": "保存", "effect": "write"},
        {"name": "look", "title": "查看", "effect": "read"}
    ]}))
    .unwrap();
    Plugin::load(manifest, PluginKind::Community).unwrap()
}

fn call(tool: &str, actor: Actor, conversation: Option<&str>) -> Call {
    Call {
        tool: tool.into(),
        actor,
        input: json!({}),
        conversation: conversation.map(str::to_owned),
    }
}

#[tokio::test]
async fn the_activity_screen_says_a_days_calls_in_words_grouped_by_conversation() {
    // Issue 41.5: what ran, what asked and the answer, what was refused and by which rule.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-03 23:00"));
    let answers = Arc::new(Answers::default());
    let mut options = Options::new(answers.clone());
    options.builtin_plugins = false;
    options.clock = clock.clone();
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
    // Yesterday's call is not today's.
    engine
        .invoke(call("notes.look", Actor::Agent, Some("c")))
        .await;
    clock.set(local("Asia/Shanghai", "2026-12-04 09:00"));
    *answers.0.lock().unwrap() = vec![Answer::Allow, Answer::Deny];
    engine
        .invoke(call("notes.save", Actor::Agent, Some("c")))
        .await;
    engine
        .invoke(call("notes.save", Actor::Agent, Some("c")))
        .await;
    engine.invoke(call("notes.save", Actor::User, None)).await;
    let rules = json!([{"kind": "deny", "tool": "notes.save"}]);
    engine
        .change_setting(parse_change("rules", &rules).unwrap())
        .unwrap();
    clock.set(local("Asia/Shanghai", "2026-12-04 09:05"));
    engine
        .invoke(call("notes.save", Actor::Agent, Some("c")))
        .await;
    let screens = Screens::new(Arc::new(engine), Live::new());

    let screen = screens.activity(&ActivityFilter::default()).unwrap();
    assert_eq!(
        (screen.title.as_str(), screen.day.as_str()),
        ("活动", "2026-12-04")
    );
    let said: Vec<(String, Vec<Said>)> = screen
        .groups
        .iter()
        .map(|g| {
            let calls = g
                .calls
                .iter()
                .map(|c| {
                    (
                        c.when.clone(),
                        c.tool.clone(),
                        c.effect_label.clone(),
                        c.what.clone(),
                    )
                })
                .collect();
            (g.title.clone(), calls)
        })
        .collect();
    let row = |when: &str, what: &str| {
        (
            format!("2026-12-04 {when}"),
            "笔记 · 保存".to_owned(),
            "写入".to_owned(),
            what.to_owned(),
        )
    };
    assert_eq!(
        said,
        [
            (
                "c".to_owned(),
                vec![
                    row("09:00", "问了你，你选了「允许」，已运行"),
                    row("09:00", "问了你，你选了「拒绝」"),
                    row("09:05", "没有运行：被禁止规则拦下（全局第 1 条规则）"),
                ]
            ),
            ("你自己点的".to_owned(), vec![row("09:00", "已运行")]),
        ]
    );
    assert_eq!(
        (screen.spent.label.as_str(), screen.spent.value.as_str()),
        ("今天已花", "0.00 元")
    );

    // Filtered by effect: today's reads are none.
    let reads = screens
        .activity(&ActivityFilter {
            plugin: Some("notes".into()),
            effect: Some(Effect::Read),
        })
        .unwrap();
    assert_eq!(reads.groups, []);
    assert_eq!(reads.empty.as_deref(), Some("今天还没有操作"));
}

#[tokio::test]
async fn the_activity_screen_says_what_each_scheduled_check_found() {
    // Issue 41.5: 活动 says what a scheduled check found, on the call that read for it.
    let clock = ManualClock::at(local("Asia/Shanghai", "2026-12-04 09:00"));
    let mut options = Options::new(Arc::new(Answers::default()));
    options.builtin_plugins = false;
    options.clock = clock.clone();
    let engine = Engine::in_memory(options).unwrap();
    engine
        .install(
            notes(),
            "https://example.org/notes/PLUGIN.md",
            Arc::new(Runs),
        )
        .unwrap();
    engine.accept_terms().unwrap();
    let check = |name: &str, minutes: u32, holds: bool| {
        json!({
            "name": name,
            "schedule": {"everyMinutes": minutes},
            "check": {
                "tool": "notes.look",
                "when": {"path": "ok", "op": "eq", "value": holds},
                "notify": {"title": "笔记有更新", "body": "去看看"}
            }
        })
    };
    let found = engine
        .add_job(&check("笔记更新", 30, true), Owner::User)
        .unwrap();
    let quiet = engine
        .add_job(&check("笔记清空", 45, false), Owner::User)
        .unwrap();
    for due in [found.next_due_ms.unwrap(), quiet.next_due_ms.unwrap()] {
        clock.set(due);
        assert_eq!(engine.run_due(due).await.unwrap().len(), 1);
    }
    let screens = Screens::new(Arc::new(engine), Live::new());

    let screen = screens.activity(&ActivityFilter::default()).unwrap();
    let said: Vec<(String, Vec<(String, String)>)> = screen
        .groups
        .iter()
        .map(|g| {
            let calls = g
                .calls
                .iter()
                .map(|c| (c.when.clone(), c.what.clone()))
                .collect();
            (g.title.clone(), calls)
        })
        .collect();
    assert_eq!(
        said,
        [(
            "定时检查".to_owned(),
            vec![
                (
                    "2026-12-04 09:30".to_owned(),
                    "定时检查「笔记更新」：有新情况，已提醒你「笔记有更新」".to_owned()
                ),
                (
                    "2026-12-04 09:45".to_owned(),
                    "定时检查「笔记清空」：没有变化，没有提醒你".to_owned()
                ),
            ]
        )]
    );
}

#[tokio::test]
async fn the_ongoing_notice_of_a_running_turn_says_the_assistant_works_and_none_of_the_students_words()
 {
    // Issue 41.5: while a turn runs with the app away, an ongoing notification says so; a
    // locked screen shows it, so it carries no message, title or input of the student's.
    let mut options = Options::new(Arc::new(Answers::default()));
    options.builtin_plugins = false;
    let engine = Arc::new(Engine::in_memory(options).unwrap());
    let screens = Screens::new(engine.clone(), Live::new());
    let notice = screens.turn_notice();
    assert_eq!(
        (notice.title.as_str(), notice.body.as_str()),
        ("助手正在处理你的请求", "点开应用查看进度")
    );
    engine
        .change_setting(parse_change("language", &json!("en")).unwrap())
        .unwrap();
    let notice = screens.turn_notice();
    assert_eq!(
        (notice.title.as_str(), notice.body.as_str()),
        (
            "The assistant is working on your request",
            "Open the app to follow it"
        )
    );
}
