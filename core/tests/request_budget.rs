//! What a model request carries of a conversation (DESIGN.md §13), against the scripted model
//! server on 127.0.0.1 with the data directory on disk: a prefix that stays the same from one
//! request to the next, the provider's cached tokens recorded, and a request that stays within
//! `model.contextTokens` however long the history grows.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use async_trait::async_trait;
use common::model_server::{ModelServer, Reply, calls, chunk, data, done, text};
use harness_campus_sim::{DEMO, Simulator};
use harness_core::agent::budget::estimate;
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::clock::Clock;
use harness_core::invoke::{PluginHandler, ToolContext};
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::screens::{ChatItemKind, Live, Screens};
use harness_core::settings::parse_change;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const KEY: &str = "sk-budget-0123456789-secret";

/// A clock a minute and a second later at every reading: the time a request states changes
/// from each request to the next.
struct Ticking(AtomicI64);

impl Clock for Ticking {
    fn now_ms(&self) -> i64 {
        self.0.fetch_add(61_000, Ordering::SeqCst)
    }
}

/// The shop's stock answers with `stock` characters of text.
struct Stock(usize);

#[async_trait]
impl PluginHandler for Stock {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({"items": "x".repeat(self.0)}))
    }
}

fn shop() -> Plugin {
    let manifest = json!({"id": "shop", "title": "小卖部", "tools": [
        {"name": "stock", "title": "库存", "effect": "read"},
        {"name": "order", "title": "下单", "effect": "write",
         "input": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}}
    ]});
    Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Community).unwrap()
}

struct World {
    engine: Arc<Engine>,
    server: ModelServer,
    _dir: tempfile::TempDir,
}

fn world(server: ModelServer, stock: usize) -> World {
    world_with(server, stock, false)
}

/// `builtin`: the app's own plugins installed too, whose tools alone cost more than a request
/// sends whole.
fn world_with(server: ModelServer, stock: usize, builtin: bool) -> World {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(common::Denies::default()));
    options.builtin_plugins = builtin;
    options.clock = Arc::new(Ticking(AtomicI64::new(1_780_000_000_000)));
    let engine = Engine::open(dir.path(), options).unwrap();
    engine.accept_terms().unwrap();
    engine
        .install(
            shop(),
            "https://example.org/shop/PLUGIN.md",
            Arc::new(Stock(stock)),
        )
        .unwrap();
    engine.open_conversation("c").unwrap();
    server.configure(&engine, KEY);
    World {
        engine: Arc::new(engine),
        server,
        _dir: dir,
    }
}

fn set(w: &World, key: &str, value: Value) {
    w.engine
        .change_setting(parse_change(key, &value).unwrap())
        .unwrap();
}

fn messages(w: &World, request: usize) -> Vec<Value> {
    w.server.requests()[request].body["messages"]
        .as_array()
        .unwrap()
        .clone()
}

fn is_facts(message: &Value) -> bool {
    message["role"] == "system"
        && message["content"]
            .as_str()
            .unwrap()
            .starts_with("The local date and time is ")
}

#[tokio::test]
async fn two_consecutive_requests_share_their_prefix_up_to_the_historys_end() {
    // DESIGN.md §13: what changes (the time, the turn's facts) comes after the history, and
    // the tools are the same bytes, so a provider's prefix cache hits on every request.
    let server = ModelServer::start(vec![
        calls(&[("c1", "shop__stock", "{}")]),
        text("有货"),
        text("不客气"),
    ])
    .await;
    let w = world(server, 10);
    w.engine.send_message("c", "还有货吗？").await.unwrap();
    w.engine.send_message("c", "谢谢").await.unwrap();
    let requests = w.server.requests();
    assert_eq!(requests.len(), 3);
    for i in 0..2 {
        let (a, b) = (messages(&w, i), messages(&w, i + 1));
        let history_end = a.len() - 1;
        assert!(is_facts(&a[history_end]), "request {i}: {:?}", a.last());
        assert!(is_facts(b.last().unwrap()), "request {}", i + 1);
        assert_eq!(
            b[..history_end],
            a[..history_end],
            "requests {i} and {} differ before the history's end",
            i + 1
        );
        assert_eq!(
            requests[i].body["tools"].to_string(),
            requests[i + 1].body["tools"].to_string()
        );
    }
    // The stable system prompt states no time.
    let system = messages(&w, 0)[0]["content"].as_str().unwrap().to_owned();
    assert!(!system.contains("local date and time"), "{system}");
}

fn answered_with_usage(usage: Value) -> Reply {
    Reply::events([
        chunk(json!({"content": "好"})),
        data(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        data(&json!({"choices": [], "usage": usage})),
        done(),
    ])
}

#[tokio::test]
async fn the_cached_tokens_the_provider_reports_are_recorded_with_the_turn() {
    // DESIGN.md §13: the cached share is recorded, in OpenAI's field and in DeepSeek's.
    let server = ModelServer::start(vec![
        answered_with_usage(json!({"prompt_tokens": 1000, "completion_tokens": 5,
            "total_tokens": 1005, "prompt_tokens_details": {"cached_tokens": 896}})),
        answered_with_usage(json!({"prompt_tokens": 1100, "completion_tokens": 5,
            "total_tokens": 1105, "prompt_cache_hit_tokens": 640, "prompt_cache_miss_tokens": 460})),
    ])
    .await;
    let w = world(server, 10);
    let first = w.engine.send_message("c", "一").await.unwrap();
    assert_eq!(first.usage.prompt_tokens, 1000);
    assert_eq!(first.usage.cached_tokens, 896);
    let second = w.engine.send_message("c", "二").await.unwrap();
    assert_eq!(second.usage.cached_tokens, 640);
}

/// A student's message of `n` Chinese characters, numbered.
fn long_words(i: usize, n: usize) -> String {
    format!("第{i}条：{}", "图".repeat(n))
}

#[tokio::test]
async fn a_long_conversation_sends_its_newest_turns_within_the_budget_and_the_chat_shows_where_the_models_view_begins()
 {
    // DESIGN.md §13: the system prompt, the tools and the current turn always; older turns
    // newest first while they fit; the chat shows where the model's view begins.
    let server = ModelServer::always(text("好")).await;
    let w = world(server, 10);
    set(&w, "model.contextTokens", json!(4096));
    set(&w, "language", json!("zh"));
    for i in 0..30 {
        w.engine
            .send_message("c", &long_words(i, 200))
            .await
            .unwrap();
    }
    let requests = w.server.requests();
    let last = requests.last().unwrap();
    let body = last.body.to_string();
    assert!(estimate(&body) <= 4096, "{} tokens", estimate(&body));
    let sent: Vec<String> = messages(&w, requests.len() - 1)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(sent.last(), Some(&long_words(29, 200)));
    assert!(!sent.contains(&long_words(0, 200)));
    // Newest back without a gap: the turns sent are the last ones.
    let first_sent = 30 - sent.len();
    assert!(first_sent > 0);
    let expected: Vec<String> = (first_sent..30).map(|i| long_words(i, 200)).collect();
    assert_eq!(sent, expected);
    // The chat draws the divider just above the first message the model was sent.
    let screens = Screens::new(w.engine.clone(), Live::new());
    let chat = screens.chat("c").unwrap();
    let divider = chat
        .items
        .iter()
        .position(|item| item.text == "更早的消息不再发送给模型")
        .expect("a divider");
    assert_eq!(chat.items[divider].kind, ChatItemKind::Notice);
    assert_eq!(chat.items[divider + 1].text, long_words(first_sent, 200));
    assert_eq!(
        chat.items
            .iter()
            .filter(|item| item.kind == ChatItemKind::Notice)
            .count(),
        1
    );
}

#[tokio::test]
async fn an_older_tool_result_is_shortened_to_a_line_before_its_turn_is_left_out() {
    // DESIGN.md §13: older tool results shortened first, to a line saying what ran and its
    // outcome; the current turn's result is whole.
    let server = ModelServer::start(vec![
        calls(&[("c1", "shop__stock", "{}")]),
        text("有很多"),
        text("好"),
    ])
    .await;
    let w = world(server, 11_000);
    set(&w, "model.contextTokens", json!(4096));
    w.engine.send_message("c", "库存？").await.unwrap();
    w.engine.send_message("c", "好的").await.unwrap();
    let result = |m: &Vec<Value>| {
        m.iter()
            .find(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert!(result(&messages(&w, 1)).len() > 11_000);
    let later = messages(&w, 2);
    assert_eq!(
        result(&later),
        "(earlier result, shortened) shop.stock succeeded"
    );
    assert_eq!(later[1], json!({"role": "user", "content": "库存？"}));
    let screens = Screens::new(w.engine.clone(), Live::new());
    assert!(
        !screens
            .chat("c")
            .unwrap()
            .items
            .iter()
            .any(|i| i.text == "更早的消息不再发送给模型")
    );
}

#[tokio::test]
async fn each_turns_usage_is_kept_and_the_monthly_cap_refuses_a_new_turn_naming_the_setting() {
    // DESIGN.md §13: usage is recorded per turn and a monthly cap in 元 can refuse a new turn.
    let usage = json!({"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100,
        "prompt_tokens_details": {"cached_tokens": 500}});
    let server = ModelServer::always(answered_with_usage(usage)).await;
    let w = world(server, 10);
    // The scripted server is a local model, free by the table: the student prices it.
    set(
        &w,
        "model.priceYuanPerMillion",
        json!({"input": 1000, "cachedInput": 200, "output": 2000}),
    );
    w.engine.send_message("c", "一").await.unwrap();
    let settings = w.engine.settings();
    let spend = w.engine.agent().month_spend(&settings).unwrap();
    assert_eq!(
        (
            spend.turns,
            spend.prompt_tokens,
            spend.cached_tokens,
            spend.completion_tokens
        ),
        (1, 1000, 500, 100)
    );
    // 500 × 1000 + 500 × 200 + 100 × 2000 per million: 0.5 + 0.1 + 0.2 元.
    assert!((spend.yuan - 0.8).abs() < 1e-9, "{}", spend.yuan);
    // Off by default: a second turn runs, and the month reaches 1.6 元.
    w.engine.send_message("c", "二").await.unwrap();
    // The conversation list shows each conversation's month, the model screen the month's
    // total and the cap's setting.
    set(&w, "language", json!("zh"));
    let screens = Screens::new(w.engine.clone(), Live::new());
    let list = screens.conversation_list().unwrap();
    let row = list.rows.iter().find(|r| r.conversation == "c").unwrap();
    assert_eq!(row.spend, "本月 2 轮 · 1.60 元");
    // Issue 42: each turn's usage on its answer, for the chat to show on request.
    let usage: Vec<(ChatItemKind, Option<String>)> = screens
        .chat("c")
        .unwrap()
        .items
        .into_iter()
        .map(|i| (i.kind, i.usage))
        .collect();
    let turn = Some("本轮：输入 1000 tokens（缓存 500）· 输出 100 · 0.8000 元".to_owned());
    assert_eq!(
        usage,
        [
            (ChatItemKind::User, None),
            (ChatItemKind::Assistant, turn.clone()),
            (ChatItemKind::User, None),
            (ChatItemKind::Assistant, turn),
        ]
    );
    assert_eq!(
        screens.model_settings().unwrap().month_spend,
        "本月 2 轮 · 1.60 元（未设上限：model.monthlyCapYuan）"
    );
    set(&w, "model.monthlyCapYuan", json!(1));
    let refused = w
        .engine
        .send_message("c", "三")
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("model.monthlyCapYuan"), "{refused}");
    assert!(refused.contains("1.60 yuan"), "{refused}");
    assert_eq!(
        w.server.requests().len(),
        2,
        "the refused turn sent nothing"
    );
    // Clearing the cap lets the next turn run.
    set(&w, "model.monthlyCapYuan", Value::Null);
    w.engine.send_message("c", "四").await.unwrap();
    assert_eq!(w.server.requests().len(), 3);
}

#[test]
fn the_budget_the_cap_and_the_price_settings_take_their_range_or_null_and_name_the_key() {
    use harness_core::agent::prices::Price;
    use harness_core::settings::Change;
    assert_eq!(
        parse_change("model.contextTokens", &json!(32768)),
        Ok(Change::ModelContextTokens(Some(32768)))
    );
    assert_eq!(
        parse_change("model.contextTokens", &Value::Null),
        Ok(Change::ModelContextTokens(None))
    );
    let small = parse_change("model.contextTokens", &json!(100))
        .unwrap_err()
        .to_string();
    assert!(
        small.contains("model.contextTokens") && small.contains("2048"),
        "{small}"
    );
    assert_eq!(
        parse_change("model.monthlyCapYuan", &json!(30)),
        Ok(Change::ModelMonthlyCap(Some(30)))
    );
    assert_eq!(
        parse_change("model.monthlyCapYuan", &Value::Null),
        Ok(Change::ModelMonthlyCap(None))
    );
    assert_eq!(
        parse_change(
            "model.priceYuanPerMillion",
            &json!({"input": 2, "cachedInput": 0.2, "output": 3})
        ),
        Ok(Change::ModelPrice(Some(Price {
            input: 2.0,
            cached_input: 0.2,
            output: 3.0
        })))
    );
    let bad = parse_change(
        "model.priceYuanPerMillion",
        &json!({"input": -1, "cachedInput": 0, "output": 0}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("model.priceYuanPerMillion") && bad.contains("cachedInput"),
        "{bad}"
    );
}

#[tokio::test]
async fn until_its_first_word_the_chat_says_the_model_is_reading() {
    // Issue 42: a provider may be silent for minutes while it reads; the chat says so rather
    // than "Working…".
    use harness_core::events::{Event, NoEvents};
    let w = world(ModelServer::start(vec![]).await, 10);
    set(&w, "language", json!("zh"));
    let live = Live::new();
    let sink = live.sink(Arc::new(NoEvents));
    let screens = Screens::new(w.engine.clone(), live.clone());
    sink.emit(Event::TurnStarted {
        conversation: "c".into(),
        turn: "c#1".into(),
    });
    assert_eq!(
        screens.chat("c").unwrap().status,
        "模型正在阅读，慢的模型可能要几分钟…"
    );
    sink.emit(Event::TextDelta {
        turn: "c#1".into(),
        text: "好".into(),
    });
    assert_eq!(screens.chat("c").unwrap().status, "处理中…");
}

/// Issue 42: what a first request costs with every shipped plugin on, before the student says
/// anything — the system prompt and the tools, estimated ([`estimate`], which errs high).
/// `cargo test -p harness-core --test request_budget first_request -- --nocapture` prints it by
/// tool; the ceiling is today's figure, so a change that adds to it is seen.
#[tokio::test]
async fn first_request_with_every_shipped_plugin_on_stays_under_its_ceiling() {
    use harness_core::plugins::script::{self, BUNDLES, Limits};
    // The campus signed in against the simulator, so the campus plugins' tools are offered.
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(common::Denies::default()));
    options.campus = Origin::development(&sim.origin()).unwrap();
    let engine = Engine::open(dir.path(), options).unwrap();
    engine.accept_terms().unwrap();
    let step = engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
    for bundle in BUNDLES {
        let (plugin, handler) = script::load(&bundle.source(), Limits::default())
            .unwrap_or_else(|e| panic!("{}: {e}", bundle.id));
        engine.install(plugin, "bundled", handler).unwrap();
    }
    engine.open_conversation("c").unwrap();
    set_on(
        &engine,
        "model.endpoint",
        json!("https://api.deepseek.com/v1"),
    );
    set_on(&engine, "model.name", json!("deepseek-chat"));
    let body = engine.agent().request_body("c").unwrap();
    let sent: Value = serde_json::from_slice(&body).unwrap();
    // DESIGN.md §13: the tools (scheduler.create's description is written at each request)
    // and the system prompt are the same bytes at the next request.
    let again: Value = serde_json::from_slice(&engine.agent().request_body("c").unwrap()).unwrap();
    assert_eq!(again["tools"].to_string(), sent["tools"].to_string());
    assert_eq!(again["messages"][0], sent["messages"][0]);
    let system = sent["messages"][0]["content"].as_str().unwrap();
    let tools = sent["tools"].as_array().unwrap();
    let mut by_tool: Vec<(u32, String)> = tools
        .iter()
        .map(|t| {
            (
                estimate(&t.to_string()),
                t["function"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    by_tool.sort();
    for (tokens, name) in &by_tool {
        println!("{tokens:>6}  {name}");
    }
    if let Ok(path) = std::env::var("REQUEST_DUMP") {
        std::fs::write(path, &body).unwrap();
    }
    let total = estimate(std::str::from_utf8(&body).unwrap());
    println!(
        "first request: {} bytes, ~{total} tokens (system prompt ~{}, {} tools ~{})",
        body.len(),
        estimate(system),
        tools.len(),
        by_tool.iter().map(|(t, _)| t).sum::<u32>()
    );
    // Issue 42: ≤ 2,500. 2026-12: ~2,043 estimated, the find step (the other 12 plugins
    // offering tools signed in; Treehole's list names its followed posts, +4) and the app's own
    // time, reminders and memory whole (8 tools); before the find step every tool was sent
    // whole: ~7,994 signed in (38 tools), ~3,553 signed out.
    assert!(total <= 2_043, "~{total} tokens");
}

fn set_on(engine: &Engine, key: &str, value: Value) {
    engine
        .change_setting(parse_change(key, &value).unwrap())
        .unwrap();
}

fn tool_names(w: &World, request: usize) -> Vec<String> {
    w.server.requests()[request].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn with_many_tools_a_request_sends_the_find_step_and_then_the_tools_of_the_plugins_found() {
    // Issue 42: when many plugins are installed, the model finds the tools it needs instead of
    // being handed every one; what it found stays offered, the same bytes, in the conversation.
    let server = ModelServer::start(vec![
        calls(&[("c1", "find_tools", r#"{"plugins":["shop","nosuch"]}"#)]),
        calls(&[("c2", "shop__stock", "{}")]),
        text("有货"),
        text("不客气"),
    ])
    .await;
    let w = world_with(server, 10, true);
    w.engine.send_message("c", "还有货吗？").await.unwrap();
    let first = &w.server.requests()[0].body["tools"];
    // The app's own time, reminders and memory are at hand; the rest is a find away.
    let at_hand = [
        "memory__write",
        "memory__list",
        "scheduler__create",
        "scheduler__list",
        "scheduler__pause",
        "scheduler__resume",
        "scheduler__remove",
        "time__resolve",
    ];
    assert_eq!(tool_names(&w, 0), [&["find_tools"][..], &at_hand].concat());
    let catalog = first[0]["function"]["description"].as_str().unwrap();
    assert!(catalog.contains("\nshop 小卖部: stock, order"), "{catalog}");
    assert!(
        catalog.contains("\nsettings 设置: get, change, openScreen"),
        "{catalog}"
    );
    assert!(!catalog.contains("\nmemory "), "{catalog}");
    // The find is answered in the loop, naming the tools given.
    let found = messages(&w, 1)
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&found).unwrap(),
        json!({"given": ["shop__stock", "shop__order"], "note": "call them from your next step",
            "unknown": ["nosuch"]})
    );
    assert_eq!(
        tool_names(&w, 1),
        [
            &["find_tools"][..],
            &at_hand[..7],
            &["shop__stock", "shop__order"],
            &at_hand[7..]
        ]
        .concat()
    );
    // The next turn is offered what the conversation found, the same bytes.
    w.engine.send_message("c", "谢谢").await.unwrap();
    let requests = w.server.requests();
    assert_eq!(requests.len(), 4);
    for i in 2..4 {
        assert_eq!(
            requests[i].body["tools"].to_string(),
            requests[1].body["tools"].to_string()
        );
    }
    // The shop's tool ran; the find is no card in the chat.
    let screens = Screens::new(w.engine.clone(), Live::new());
    let cards: Vec<String> = screens
        .chat("c")
        .unwrap()
        .items
        .iter()
        .filter(|i| i.kind == ChatItemKind::ToolCall)
        .map(|i| i.tool_call.as_ref().unwrap().title.clone())
        .collect();
    assert_eq!(cards, ["库存"]);
}

#[tokio::test]
async fn a_request_from_the_history_kept_between_turns_is_the_one_read_afresh() {
    // Issue 42: the history is read once and kept between turns (its oldest turns let go past
    // twice the budget); what a request carries is the same as from a history read afresh.
    let server = ModelServer::always(text("好")).await;
    let w = world(server, 10);
    set(&w, "model.contextTokens", json!(4096));
    for i in 0..45 {
        w.engine
            .send_message("c", &long_words(i, 200))
            .await
            .unwrap();
    }
    let agent = w.engine.agent();
    let kept: Value = serde_json::from_slice(&agent.request_body("c").unwrap()).unwrap();
    // Four other conversations asked about: "c"'s history is no longer kept.
    for other in ["d0", "d1", "d2", "d3"] {
        w.engine.open_conversation(other).unwrap();
        agent.request_body(other).unwrap();
    }
    let afresh: Value = serde_json::from_slice(&agent.request_body("c").unwrap()).unwrap();
    let before_facts = |body: &Value| {
        let messages = body["messages"].as_array().unwrap();
        messages[..messages.len() - 1].to_vec()
    };
    assert!(before_facts(&kept).len() > 2);
    assert_eq!(before_facts(&kept), before_facts(&afresh));
    assert_eq!(kept["tools"], afresh["tools"]);
}
