//! What one model request costs as a conversation grows (DESIGN.md §13), with every shipped
//! plugin on: the body of a turn's first request built for a history of 100 and of 10,000
//! messages, its size in bytes and in estimated tokens (`agent::budget::estimate`), against
//! the budget (`model.contextTokens`: DeepSeek's 131,072 by default, and 32,768). The request
//! must stop growing once the history passes the budget.
//!
//! `cargo bench -p harness-core --bench request`.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use harness_core::agent::budget::estimate;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;
use harness_core::settings::parse_change;
use harness_core::store::DATABASE_FILE;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

struct Never;

#[async_trait]
impl ApprovalBroker for Never {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

fn set(engine: &Engine, key: &str, value: Value) {
    engine
        .change_setting(parse_change(key, &value).unwrap())
        .unwrap();
}

/// A conversation `id` of `messages` messages: a question, a call of the card's balance, its
/// result and an answer, over and over.
fn fill(dir: &std::path::Path, engine: &Engine, id: &str, messages: usize) {
    engine.open_conversation(id).unwrap();
    let mut db = rusqlite::Connection::open(dir.join(DATABASE_FILE)).unwrap();
    db.busy_timeout(std::time::Duration::from_secs(5)).unwrap();
    let tx = db.transaction().unwrap();
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO messages (conversation, turn, role, content, tool_calls, \
                 tool_call_id, tool, for_model, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)",
            )
            .unwrap();
        for i in 0..messages {
            let turn = (i / 4 + 1) as i64;
            let call = format!("call_{turn}");
            let result = json!({"balanceYuan": 23.5, "spentTodayYuan": 18.0}).to_string();
            let calls =
                json!([{"id": call, "name": "wallet__balance", "arguments": "{}"}]).to_string();
            let row: (
                &str,
                Option<String>,
                Option<String>,
                Option<String>,
                Option<&str>,
            ) = match i % 4 {
                0 => (
                    "user",
                    Some(format!("第 {turn} 个问题：校园卡还有多少钱？")),
                    None,
                    None,
                    None,
                ),
                1 => ("assistant", None, Some(calls), None, None),
                2 => (
                    "tool",
                    Some(result),
                    None,
                    Some(call),
                    Some("wallet.balance"),
                ),
                _ => (
                    "assistant",
                    Some("校园卡余额 23.5 元，今天花了 18 元。".to_owned()),
                    None,
                    None,
                    None,
                ),
            };
            let for_model = (row.0 == "tool").then(|| row.1.clone()).flatten();
            insert
                .execute(rusqlite::params![
                    id,
                    turn,
                    row.0,
                    row.1,
                    row.2.unwrap_or_else(|| "[]".into()),
                    row.3,
                    row.4,
                    for_model
                ])
                .unwrap();
        }
    }
    tx.commit().unwrap();
}

fn request(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Options::new(Arc::new(Never))).unwrap();
    engine.accept_terms().unwrap();
    set(
        &engine,
        "model.endpoint",
        json!("https://api.deepseek.com/v1"),
    );
    set(&engine, "model.name", json!("deepseek-chat"));
    engine.open_conversation("empty").unwrap();
    let first = engine.agent().request_body("empty").unwrap();
    let sent: Value = serde_json::from_slice(&first).unwrap();
    let system = sent["messages"][0]["content"].as_str().unwrap();
    let tools = sent["tools"].to_string();
    println!(
        "first request, every shipped plugin on: {} bytes, ~{} tokens estimated (system prompt ~{}, {} tools ~{})",
        first.len(),
        estimate(std::str::from_utf8(&first).unwrap()),
        estimate(system),
        sent["tools"].as_array().map_or(0, Vec::len),
        estimate(&tools),
    );
    for messages in [100, 10_000] {
        let id = format!("c{messages}");
        fill(dir.path(), &engine, &id, messages);
        for budget in [None, Some(32_768)] {
            set(
                &engine,
                "model.contextTokens",
                budget.map_or(Value::Null, Value::from),
            );
            let body = engine.agent().request_body(&id).unwrap();
            let sent: Value = serde_json::from_slice(&body).unwrap();
            let label = budget.map_or("131072 (deepseek)".to_owned(), |b| b.to_string());
            println!(
                "{messages} messages, budget {label}: {} bytes, ~{} tokens estimated, {} messages sent",
                body.len(),
                estimate(std::str::from_utf8(&body).unwrap()),
                sent["messages"].as_array().unwrap().len(),
            );
            c.bench_function(
                &format!("request ({messages} messages, budget {label})"),
                |b| b.iter(|| black_box(engine.agent().request_body(black_box(&id)).unwrap())),
            );
        }
    }
}

criterion_group!(benches, request);
criterion_main!(benches);
