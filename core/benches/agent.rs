//! The core's own cost per agent step, model time excluded: whole turns (one tool call, then
//! the answer) with 200 plugins of 5 tools installed and a history of 200 messages and more,
//! against the loopback model server answering at once; and, for the floor, the same two
//! requests sent by the provider client alone. The difference is what the turn loop adds:
//! context assembly twice, one tool round trip (parse, invoke, cut, append), history writes.
//!
//! `cargo bench -p harness-core --bench agent` prints the figures.

#[path = "../tests/common/model_server.rs"]
mod model_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use harness_core::agent::{
    ApiKey, CancellationToken, ChatRequest, Limits, Message, Provider, ToolSpec,
};
use harness_core::invoke::{ApprovalBroker, PluginHandler, Prompt, ToolContext};
use harness_core::policy::Answer;
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::secrets::{MemorySecrets, SecretStore};
use harness_core::settings::parse_change;
use harness_core::{Engine, Options};
use model_server::{ModelServer, Reply, data, done};
use serde_json::{Value, json};

const PLUGINS: usize = 200;
const TURNS: usize = 50;

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
        "function": {"name": "p0__t0", "arguments": "{}"}}]});
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

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
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
        let tools: Vec<Value> = (0..5)
            .map(|t| {
                json!({"name": format!("t{t}"), "effect": "read",
                "description": "The card's balance and what was spent today, in yuan.",
                "input": {"type": "object", "properties": {"day": {"type": "string"}}}})
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

    // A history of 200 messages: 100 plain turns.
    let warm = runtime.block_on(ModelServer::start((0..100).map(|_| answer()).collect()));
    let endpoint = warm.endpoint();
    let set = |key: &str, value: Value| {
        engine
            .change_setting(parse_change(key, &value).unwrap())
            .unwrap()
    };
    set("model.endpoint", json!(endpoint));
    set("model.name", json!("deepseek-chat"));
    for i in 0..100 {
        runtime
            .block_on(engine.send_message("bench", &format!("第 {i} 个问题")))
            .unwrap();
    }
    let history = engine.history("bench", None, 10_000).unwrap().len();

    // Whole turns: a tool call, then the answer.
    let server = runtime.block_on(ModelServer::start(
        (0..TURNS).flat_map(|_| [tool_call(), answer()]).collect(),
    ));
    set("model.endpoint", json!(server.endpoint()));
    let mut turns = Vec::with_capacity(TURNS);
    for _ in 0..TURNS {
        let started = Instant::now();
        let summary = runtime
            .block_on(engine.send_message("bench", "我的校园卡余额是多少？"))
            .unwrap();
        turns.push(started.elapsed());
        assert_eq!(summary.usage.model_requests, 2);
    }

    // The floor: the same two exchanges through the provider client alone.
    let floor_server = runtime.block_on(ModelServer::start(
        (0..TURNS).flat_map(|_| [tool_call(), answer()]).collect(),
    ));
    let provider = Provider::new(
        &floor_server.endpoint(),
        ApiKey::new("sk-bench"),
        Limits::default(),
    )
    .unwrap();
    // The same weight on the wire: every tool offered, and as many messages as the history.
    let tools = engine
        .model_tools(Some("bench"))
        .into_iter()
        .map(|t| ToolSpec {
            name: t.name,
            description: t.description,
            parameters: t.input_schema,
        })
        .collect();
    let messages = (0..history + 2 * TURNS)
        .map(|i| Message::User {
            content: format!("第 {i} 个问题"),
        })
        .collect();
    let request = ChatRequest {
        model: "deepseek-chat".into(),
        messages,
        tools,
        reasoning_effort: None,
    };
    let mut floors = Vec::with_capacity(TURNS);
    for _ in 0..TURNS {
        let started = Instant::now();
        for _ in 0..2 {
            runtime
                .block_on(provider.complete(&request, &CancellationToken::new(), |_| {}))
                .unwrap();
        }
        floors.push(started.elapsed());
    }

    let turn = median(turns);
    let floor = median(floors);
    println!(
        "agent turn (1 tool call, 2 model requests; {PLUGINS} plugins × 5 tools, history {history}→{} messages): median {:.2} ms",
        history + 4 * TURNS,
        turn.as_secs_f64() * 1e3
    );
    println!(
        "floor: 2 requests of the same size (every tool, as many messages) through the provider alone: median {:.2} ms",
        floor.as_secs_f64() * 1e3
    );
    println!(
        "the turn loop's own cost per turn (2 context assemblies, 1 tool round trip, history writes): {:.2} ms",
        (turn.saturating_sub(floor)).as_secs_f64() * 1e3
    );
}
