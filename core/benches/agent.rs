//! The core's own cost per agent step, model time excluded, with 200 plugins of 5 tools
//! installed and a history of 200 messages, against the loopback model server answering at
//! once (the targets: context assembly ≤ 2 ms, one tool round trip ≤ 1 ms):
//!
//! - `context_assembly`: the body of a turn's first model request, byte for byte as sent (the
//!   system prompt, the history read and converted, every offered tool's spec);
//! - `tool_round_trip`: one parsed tool call decided, run through the invoke path as the agent,
//!   cut for the model and appended to the history;
//! - `whole_turn`: a whole turn (one tool call, then the answer: two model requests) in a
//!   conversation holding a copy of the same 200 messages, and for the floor two requests of
//!   the same weight sent by the provider client alone.
//!
//! `cargo bench -p harness-core --bench agent`.

#[path = "../tests/common/model_server.rs"]
mod model_server;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use harness_core::agent::{
    ApiKey, CancellationToken, ChatRequest, Limits, Message, Provider, ToolCall, ToolSpec,
};
use harness_core::invoke::{ApprovalBroker, PluginHandler, Prompt, ToolContext};
use harness_core::policy::Answer;
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::secrets::{MemorySecrets, SecretStore};
use harness_core::settings::parse_change;
use harness_core::store::DATABASE_FILE;
use harness_core::{Engine, Options};
use model_server::{ModelServer, Reply, data, done};
use serde_json::{Value, json};

const PLUGINS: usize = 200;
const TOOLS: usize = 5;
/// Plain turns of the history: a question and its answer each.
const HISTORY_TURNS: usize = 100;
/// Replies the whole-turn server holds: more than criterion's runs ever take.
const SCRIPTED_TURNS: usize = 5_000;

struct Never;

#[async_trait]
impl ApprovalBroker for Never {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

struct Balance;

#[async_trait]
impl PluginHandler for Balance {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({"balanceYuan": 42.5, "spentTodayYuan": 18.5}))
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> model_server::Part {
    data(&json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

fn tool_call() -> Reply {
    let call = json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "p0__t0", "arguments": "{\"day\":\"2025-03-01\"}"}}]});
    Reply::events([
        chunk(call, None),
        chunk(json!({}), Some("tool_calls")),
        done(),
    ])
}

fn answer() -> Reply {
    Reply::events([
        chunk(json!({"content": "余额 42.5 元。"}), Some("stop")),
        done(),
    ])
}

struct World {
    runtime: tokio::runtime::Runtime,
    engine: Engine,
    dir: tempfile::TempDir,
}

/// An engine on disk with 200 plugins × 5 tools and the conversation `bench` holding a history
/// of 200 messages.
fn world() -> World {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecrets::default());
    secrets.set("model.apiKey", "sk-bench").unwrap();
    let mut options = Options::new(Arc::new(Never));
    options.secrets = secrets;
    let engine = Engine::open(dir.path(), options).unwrap();
    engine.accept_terms().unwrap();
    for p in 0..PLUGINS {
        let tools: Vec<Value> = (0..TOOLS)
            .map(|t| {
                json!({"name": format!("t{t}"), "effect": "read",
                "description": "The card's balance and what was spent today, in yuan.",
                "input": {"type": "object", "properties": {"day": {"type": "string",
                    "description": "The day, as YYYY-MM-DD; today when left out."}}}})
            })
            .collect();
        let manifest = parse_manifest(&json!({"id": format!("p{p}"), "title": format!("插件 {p}"),
            "tools": tools}))
        .unwrap();
        let plugin = Plugin::load(manifest, PluginKind::Bundled).unwrap();
        engine
            .install(plugin, "bundled", Arc::new(Balance))
            .unwrap();
    }
    engine.open_conversation("bench").unwrap();
    let warm = runtime.block_on(ModelServer::start(
        (0..HISTORY_TURNS).map(|_| answer()).collect(),
    ));
    set(&engine, "model.endpoint", json!(warm.endpoint()));
    set(&engine, "model.name", json!("deepseek-chat"));
    for i in 0..HISTORY_TURNS {
        runtime
            .block_on(engine.send_message("bench", &format!("第 {i} 个问题：今天食堂几点关门？")))
            .unwrap();
    }
    assert_eq!(
        engine.history("bench", None, 10_000).unwrap().len(),
        2 * HISTORY_TURNS
    );
    World {
        runtime,
        engine,
        dir,
    }
}

fn set(engine: &Engine, key: &str, value: Value) {
    engine
        .change_setting(parse_change(key, &value).unwrap())
        .unwrap();
}

fn context_assembly(c: &mut Criterion, w: &World) {
    let body = w.engine.agent().request_body("bench").unwrap();
    let sent: Value = serde_json::from_slice(&body).unwrap();
    let tools = sent["tools"].as_array().unwrap().len();
    // With the bundled plugins' own tools.
    assert!(tools >= PLUGINS * TOOLS, "every tool is offered: {tools}");
    // The system prompt, the history and the time after it.
    assert_eq!(
        sent["messages"].as_array().unwrap().len(),
        2 + 2 * HISTORY_TURNS
    );
    println!(
        "context_assembly: request body of {} bytes ({tools} tools, {} messages)",
        body.len(),
        2 + 2 * HISTORY_TURNS
    );
    c.bench_function(
        "context_assembly (200 plugins × 5 tools, 200 messages)",
        |b| b.iter(|| black_box(w.engine.agent().request_body(black_box("bench")).unwrap())),
    );
}

fn tool_round_trip(c: &mut Criterion, w: &World) {
    // Its own conversation, so the results it appends do not grow the history measured above.
    w.engine.open_conversation("calls").unwrap();
    let call = ToolCall {
        id: "call_1".into(),
        name: "p0__t0".into(),
        arguments: "{\"day\":\"2025-03-01\"}".into(),
    };
    let agent = w.engine.agent();
    assert!(
        w.runtime
            .block_on(agent.answer_call("calls", 1, &call))
            .unwrap(),
        "the call runs"
    );
    c.bench_function(
        "tool_round_trip (parse, invoke as agent, cut, append)",
        |b| {
            b.iter_custom(|iters| {
                w.runtime.block_on(async {
                    let started = Instant::now();
                    for _ in 0..iters {
                        black_box(agent.answer_call("calls", 1, &call).await.unwrap());
                    }
                    started.elapsed()
                })
            })
        },
    );
}

fn whole_turn(c: &mut Criterion, w: &World) {
    let server = w.runtime.block_on(ModelServer::start(
        (0..SCRIPTED_TURNS)
            .flat_map(|_| [tool_call(), answer()])
            .collect(),
    ));
    set(&w.engine, "model.endpoint", json!(server.endpoint()));
    // The floor: two requests of the same weight (every tool, as many messages) through the
    // provider client alone.
    let floor_server = w.runtime.block_on(ModelServer::start(
        (0..SCRIPTED_TURNS)
            .flat_map(|_| [tool_call(), answer()])
            .collect(),
    ));
    let provider = Provider::new(
        &floor_server.endpoint(),
        ApiKey::new("sk-bench"),
        Limits::default(),
    )
    .unwrap();
    let tools = w
        .engine
        .model_tools(Some("bench"))
        .into_iter()
        .map(|t| ToolSpec {
            name: t.name,
            description: t.description,
            parameters: t.input_schema,
        })
        .collect();
    let messages = (0..2 * HISTORY_TURNS + 3)
        .map(|i| Message::User {
            content: format!("第 {i} 个问题：今天食堂几点关门？"),
        })
        .collect();
    let request = ChatRequest {
        model: "deepseek-chat".into(),
        messages,
        tools,
        reasoning_effort: None,
    };

    // Each turn in a conversation of its own holding a copy of the 200 messages of `bench`,
    // copied before the clock starts: the history every turn reads stays the same size.
    let db = rusqlite::Connection::open(w.dir.path().join(DATABASE_FILE)).unwrap();
    db.busy_timeout(Duration::from_secs(5)).unwrap();
    let mut copies = 0;
    let mut copy = || {
        copies += 1;
        let id = format!("turn{copies}");
        w.engine.open_conversation(&id).unwrap();
        db.execute(
            "INSERT INTO messages (conversation, turn, role, content, tool_calls, tool_call_id, \
             tool, for_model, created_at) SELECT ?1, turn, role, content, tool_calls, \
             tool_call_id, tool, for_model, created_at FROM messages \
             WHERE conversation = 'bench' ORDER BY id",
            [&id],
        )
        .unwrap();
        id
    };

    let mut group = c.benchmark_group("whole_turn");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("engine (1 tool call, 2 model requests)", |b| {
        b.iter_custom(|iters| {
            let conversations: Vec<String> = (0..iters).map(|_| copy()).collect();
            w.runtime.block_on(async {
                let started = Instant::now();
                for conversation in &conversations {
                    let summary = w
                        .engine
                        .send_message(conversation, "我的校园卡余额是多少？")
                        .await
                        .unwrap();
                    assert_eq!(summary.usage.model_requests, 2);
                }
                started.elapsed()
            })
        })
    });
    group.bench_function("provider alone (2 requests of the same size)", |b| {
        b.iter_custom(|iters| {
            w.runtime.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    for _ in 0..2 {
                        provider
                            .complete(&request, &CancellationToken::new(), |_| {})
                            .await
                            .unwrap();
                    }
                }
                started.elapsed()
            })
        })
    });
    group.finish();
    if copies == 0 {
        return; // filtered out
    }
    let last = format!("turn{copies}");
    assert_eq!(
        w.engine.history(&last, None, 10_000).unwrap().len(),
        2 * HISTORY_TURNS + 4,
        "each turn read the 200 messages and added its 4"
    );
}

fn agent(c: &mut Criterion) {
    let w = world();
    context_assembly(c, &w);
    tool_round_trip(c, &w);
    whole_turn(c, &w);
}

criterion_group!(benches, agent);
criterion_main!(benches);
