//! The job tool teaches the truth (issue 37): `scheduler.create`'s description is written from
//! the installed plugins at each request — the read tools a check may run, their labelled
//! fields, an example built from a real one — and a condition on a field the tool does not
//! return is refused at creation, naming the fields it does.

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use common::model_server::{ModelServer, calls, text};
use common::{Counter, engine_at, local};
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;
use harness_core::registry::{Plugin, PluginKind, parse_manifest};
use harness_core::scheduler::{Owner, RunOutcome, Task};
use serde_json::{Value, json};

/// The student allows the job the agent asks to create.
struct Allows;

#[async_trait]
impl ApprovalBroker for Allows {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Allow
    }
}

/// A card plugin whose balance tool labels its fields, with a data source on it.
fn card() -> Plugin {
    let manifest = json!({
        "id": "card", "title": "校园卡",
        "tools": [
            {"name": "balance", "title": "校园卡余额", "effect": "read",
             "labels": {"balanceYuan": {"zh": "余额（元）", "en": "Balance (yuan)"},
                        "spentTodayYuan": {"zh": "今日消费（元）"}}},
            {"name": "recharge", "title": "充值", "effect": "money"}
        ],
        "dataSources": {"balance": {"title": "校园卡余额", "tool": "balance", "ttlMs": 60000}}
    });
    Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Bundled).unwrap()
}

/// The description the model was offered for `name` in a request.
fn offered(request: &Value, name: &str) -> String {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == name)
        .unwrap_or_else(|| panic!("{name} was not offered"))["function"]["description"]
        .as_str()
        .unwrap()
        .to_owned()
}

// issue 37: a model copies the example it is given, so the example must be one that works.
#[tokio::test]
async fn a_model_that_follows_the_job_tools_example_makes_a_working_balance_check() {
    let (engine, clock, _) =
        engine_at(local("Asia/Shanghai", "2026-12-04 20:00"), Arc::new(Allows));
    let counter = Arc::new(Counter::default());
    engine.install(card(), "bundled", counter.clone()).unwrap();
    engine.open_conversation("c").unwrap();

    // The first turn shows what the job tool says now.
    let first = ModelServer::start(vec![text("好的")]).await;
    first.configure(&engine, "key");
    engine
        .send_message("c", "你能设置什么检查？")
        .await
        .unwrap();
    let description = offered(&first.requests()[0].body, "scheduler__create");
    assert!(description.chars().count() <= 1024, "{description}");
    assert!(
        !description.contains("card[0]") && !description.contains("card.recharge"),
        "{description}"
    );
    assert!(
        description.contains(
            "card.balance 校园卡余额: balanceYuan (余额（元）), spentTodayYuan (今日消费（元）)."
        ),
        "{description}"
    );
    let at = description.find("Example check: ").expect("an example") + "Example check: ".len();
    let example: Value = serde_json::Deserializer::from_str(&description[at..])
        .into_iter::<Value>()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(
        example,
        json!({"tool": "card.balance", "when": {"path": "balanceYuan", "op": "lt", "value": 50},
               "notify": {"title": "校园卡余额", "body": "余额（元）: {balanceYuan}"}})
    );

    // A model that follows it: "每天晚上检查一下余额，低于50元提醒我".
    let create = json!({"name": "余额提醒", "schedule": {"cron": "0 21 * * *"}, "check": example});
    let second = ModelServer::start(vec![
        calls(&[("call_1", "scheduler__create", &create.to_string())]),
        text("已设置：每天21点检查余额。"),
    ])
    .await;
    second.configure(&engine, "key");
    engine
        .send_message("c", "每天晚上检查一下余额，低于50元提醒我")
        .await
        .unwrap();
    let jobs = engine.jobs();
    assert_eq!(jobs.len(), 1);
    assert!(matches!(&jobs[0].spec.task, Task::Check(c) if c.tool == "card.balance"));

    // It runs, and notifies with the balance when it is under 50 元.
    counter.answer(
        "card.balance",
        json!({"balanceYuan": 42.5, "spentTodayYuan": 12}),
    );
    let due = local("Asia/Shanghai", "2026-12-04 21:00");
    assert_eq!(engine.next_wake_ms(), Some(due));
    clock.set(due);
    let reports = engine.run_due(due).await.unwrap();
    assert_eq!(
        reports[0].outcome,
        RunOutcome::Notified {
            notification: harness_core::scheduler::Notification {
                title: "校园卡余额".into(),
                body: "余额（元）: 42.5".into()
            }
        }
    );
}

// issue 37: a condition on a field the tool does not return never holds; it is refused.
#[tokio::test]
async fn a_condition_on_a_field_the_tool_does_not_return_is_refused_naming_its_fields() {
    let (engine, _, _) = engine_at(local("Asia/Shanghai", "2026-12-04 20:00"), Arc::new(Allows));
    engine
        .install(card(), "bundled", Arc::new(Counter::default()))
        .unwrap();
    let job = |when: Value, body: &str| {
        json!({"name": "余额", "schedule": {"everyMinutes": 60},
               "check": {"tool": "card.balance", "when": when, "notify": {"title": "余额", "body": body}}})
    };
    let refused = engine
        .add_job(
            &job(
                json!({"path": "data.card[0].elec_accamt", "op": "lt", "value": 2000}),
                "低",
            ),
            Owner::User,
        )
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "check.when.path: \"card.balance\" returns no field \"data\"; it returns balanceYuan, spentTodayYuan"
    );
    let refused = engine
        .add_job(
            &job(json!({"all": [{"path": "balanceYuan", "op": "lt", "value": 50}, {"path": "balance", "op": "lt", "value": 50}]}), "低"),
            Owner::User,
        )
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("check.when.all[1].path: \"card.balance\" returns no field \"balance\""),
        "{refused}"
    );
    let refused = engine
        .add_job(
            &job(
                json!({"path": "balanceYuan", "op": "lt", "value": 50}),
                "还剩 {balance} 元",
            ),
            Owner::User,
        )
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("check.notify.body: \"card.balance\" returns no field \"balance\""),
        "{refused}"
    );
    // A tool that declares no fields is taken at its word on none.
    assert!(
        engine
            .add_job(&json!({"name": "x", "schedule": {"everyMinutes": 60},
                "check": {"tool": "campus.balance", "when": {"path": "anything", "op": "exists"}, "notify": {"title": "t", "body": "b"}}}), Owner::User)
            .is_ok()
    );
}

// issue 37.1: a plugin document declares its tool's result with `returns` (JSON Schema), and
// a check on it is held to those fields as a labelled tool's is.
#[tokio::test]
async fn a_documents_returns_names_the_fields_a_check_may_use() {
    let (engine, _, _) = engine_at(local("Asia/Shanghai", "2026-12-04 20:00"), Arc::new(Allows));
    engine
        .install_document(
            r#"---
id: gym
title: 体育馆
tools:
  - name: slots
    title: 体育馆空位
    effect: read
    returns:
      type: object
      properties:
        freeCourts: {type: number, description: courts free now}
        takenAt: {type: string}
---
# 体育馆
"#,
            "https://plugins.example.org/gym",
        )
        .unwrap();
    let job = |path: &str| {
        json!({"name": "空场", "schedule": {"everyMinutes": 60},
               "check": {"tool": "gym.slots", "when": {"path": path, "op": "gt", "value": 0},
                         "notify": {"title": "有空场", "body": "{freeCourts} 片"}}})
    };
    assert_eq!(
        engine
            .add_job(&job("courts"), Owner::User)
            .unwrap_err()
            .to_string(),
        "check.when.path: \"gym.slots\" returns no field \"courts\"; it returns freeCourts, takenAt"
    );
    engine.add_job(&job("freeCourts"), Owner::User).unwrap();
}

// issue 37.1: the shipped read tools declare their results (the SDK's `output`, turned into
// JSON Schema in the manifest), so a check on a field one does not return is refused when it
// is made, naming what it returns, instead of failing at every run.
#[tokio::test]
async fn the_shipped_read_tools_declare_their_results_fields() {
    let mut options = harness_core::Options::new(Arc::new(Allows));
    options.clock = common::ManualClock::at(local("Asia/Shanghai", "2026-12-04 20:00"));
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = harness_core::Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    let balance = engine.tool("wallet.cardBalance").unwrap();
    let output = balance
        .output
        .as_ref()
        .expect("cardBalance declares its output");
    assert_eq!(
        output.source()["properties"]["balanceYuan"],
        json!({"type": "number", "description": "The card balance, in yuan"})
    );
    for (tool, args, fields) in [
        (
            "canteen.openNow",
            json!({}),
            "hoursAsOf, now, open, opensNext",
        ),
        (
            "classrooms.free",
            json!({"building": "三教"}),
            "building, date, day, periodTimes, rooms",
        ),
        (
            "library.search",
            json!({"query": "高数"}),
            "books, page, total",
        ),
        // The words a tool gives a field it takes (`limit`) name no field it returns.
        (
            "wallet.transactions",
            json!({}),
            "from, page, pages, period, records, to, total",
        ),
    ] {
        let refused = engine
            .add_job(
                &json!({"name": "看看", "schedule": {"everyMinutes": 60},
                        "check": {"tool": tool, "args": args,
                                  "when": {"path": "count", "op": "gt", "value": 0},
                                  "notify": {"title": "有了", "body": "有了"}}}),
                Owner::User,
            )
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!("check.when.path: \"{tool}\" returns no field \"count\"; it returns {fields}"),
            "{tool}"
        );
    }
}
