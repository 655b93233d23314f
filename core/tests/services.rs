//! The gates as plugin code meets them, through the invoke path: what a running tool may call,
//! fetch and store, the grant rows shown for it, and the grants refused at install.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, PluginHandler, Prompt, ToolContext};
use harness_core::policy::{Actor, Answer, Mode};
use harness_core::registry::{Effect, Plugin, PluginKind, Tool, parse_manifest};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

/// A plugin whose one tool does what its input says through the services it was given.
struct Probe;

#[async_trait]
impl PluginHandler for Probe {
    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let s = &ctx.services;
        let out = match tool.name.as_str() {
            "callTool" => {
                s.call_tool(input["tool"].as_str().unwrap(), &input["args"].to_string())
                    .await
            }
            "fetch" => s.http_get(input["url"].as_str().unwrap()).await,
            "remember" => s.store_set("k", input["value"].as_str().unwrap()),
            "recall" => s.store_get("k"),
            "say" => s.notify(input["text"].as_str().unwrap()),
            other => return Err(format!("no {other}")),
        };
        Ok(Value::String(out))
    }
}

struct Card;

#[async_trait]
impl PluginHandler for Card {
    async fn run(&self, tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({"tool": tool.id, "balanceYuan": 42.5}))
    }
}

fn probe(id: &str, kind: PluginKind, grants: Value) -> Plugin {
    let manifest = parse_manifest(&json!({"id": id, "grants": grants, "tools": [
        {"name": "callTool", "effect": "read"}, {"name": "fetch", "effect": "read"},
        {"name": "remember", "effect": "write"}, {"name": "recall", "effect": "read"}, {"name": "say", "effect": "read"}
    ]}))
    .unwrap();
    Plugin::load(manifest, kind).unwrap()
}

fn wallet() -> Plugin {
    let manifest = parse_manifest(&json!({"id": "wallet", "tools": [{"name": "cardBalance", "effect": "read"}, {"name": "recharge", "effect": "money"}]})).unwrap();
    Plugin::load(manifest, PluginKind::Bundled).unwrap()
}

fn engine(dir: &std::path::Path) -> Engine {
    let mut options = Options::new(Arc::new(Deny));
    options.builtin_plugins = false;
    let engine = Engine::open(dir, options).unwrap();
    engine.install(wallet(), "bundled", Arc::new(Card)).unwrap();
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    engine
}

async fn run(engine: &Engine, tool: &str, input: Value) -> String {
    let done = engine
        .invoke(Call {
            tool: tool.into(),
            actor: Actor::Agent,
            input,
            conversation: Some("c".into()),
        })
        .await;
    match done.outcome {
        Outcome::Ran { result, .. } => result.as_str().unwrap().to_owned(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_plugin_calls_only_the_tools_it_was_granted_through_the_invoke_path() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    engine
        .install(
            probe(
                "indexer",
                PluginKind::Bundled,
                json!({"allow_tools": ["wallet.cardBalance"]}),
            ),
            "bundled",
            Arc::new(Probe),
        )
        .unwrap();
    let ran = run(
        &engine,
        "indexer.callTool",
        json!({"tool": "wallet.cardBalance", "args": {}}),
    )
    .await;
    let frame: Value = serde_json::from_str(&ran).unwrap();
    assert_eq!(frame["is_error"], false);
    assert!(
        frame["content"]
            .as_str()
            .unwrap()
            .contains("\"balanceYuan\":42.5"),
        "{ran}"
    );
    let refused = run(
        &engine,
        "indexer.callTool",
        json!({"tool": "wallet.recharge", "args": {}}),
    )
    .await;
    assert!(
        refused.starts_with("error: tool \"wallet.recharge\" is not in this plugin's allow_tools"),
        "{refused}"
    );
    // The user's modes still outrank the plugin: with reads off, the granted call is refused.
    engine.set_mode("wallet", Effect::Read, Mode::Off).unwrap();
    let blocked = run(
        &engine,
        "indexer.callTool",
        json!({"tool": "wallet.cardBalance", "args": {}}),
    )
    .await;
    assert!(
        blocked.starts_with("error: blocked by policy: blocked: "),
        "{blocked}"
    );
    // Each plugin-initiated call went through the audit like any other.
    let audited: Vec<String> = engine
        .audit(100)
        .unwrap()
        .into_iter()
        .filter(|r| r.tool == "wallet.cardBalance")
        .map(|r| r.event)
        .collect();
    assert_eq!(audited, ["decided", "ran", "decided"]);
}

#[tokio::test]
async fn a_community_plugin_cannot_reach_loopback_and_a_bundled_one_can() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0u8; 1024];
        let _ = stream.read(&mut buf);
        stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
            .unwrap();
    });
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let grants = json!({"allow_network": true, "url_allowlist": ["127.0.0.1"]});
    engine
        .install(
            probe("local", PluginKind::Bundled, grants.clone()),
            "bundled",
            Arc::new(Probe),
        )
        .unwrap();
    engine
        .install(
            probe("stranger", PluginKind::Community, grants),
            "https://example.org/PLUGIN.md",
            Arc::new(Probe),
        )
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/");
    let refused = run(&engine, "stranger.fetch", json!({"url": url})).await;
    assert!(refused.starts_with("error: "), "{refused}");
    assert!(refused.contains("127.0.0.1"), "{refused}");
    assert_eq!(
        run(&engine, "local.fetch", json!({"url": url})).await,
        "hello"
    );
    server.join().unwrap();
}

#[tokio::test]
async fn a_plugin_store_lasts_across_reopening_and_is_gated() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = engine(dir.path());
        engine
            .install(
                probe("notes", PluginKind::Bundled, json!({"allow_store": true})),
                "bundled",
                Arc::new(Probe),
            )
            .unwrap();
        engine
            .install(
                probe("nostore", PluginKind::Bundled, json!({})),
                "bundled",
                Arc::new(Probe),
            )
            .unwrap();
        assert_eq!(
            run(&engine, "notes.remember", json!({"value": "{\"seat\":12}"})).await,
            ""
        );
        let refused = run(&engine, "nostore.remember", json!({"value": "x"})).await;
        assert!(
            refused.starts_with("error: ") && refused.contains("allow_store"),
            "{refused}"
        );
    }
    // Bundled code is installed again at every start; what it stored is still there.
    let engine = engine(dir.path());
    engine
        .install(
            probe("notes", PluginKind::Bundled, json!({"allow_store": true})),
            "bundled",
            Arc::new(Probe),
        )
        .unwrap();
    assert_eq!(
        run(&engine, "notes.recall", json!({})).await,
        "{\"seat\":12}"
    );
}

#[test]
fn grant_rows_are_shown_for_every_plugin_and_bad_grants_refuse_the_install() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    engine
        .install(
            probe(
                "feeds",
                PluginKind::Bundled,
                json!({"allow_network": true, "url_allowlist": ["*"], "allow_store": true}),
            ),
            "bundled",
            Arc::new(Probe),
        )
        .unwrap();
    let views = engine.plugins();
    let feeds = views.iter().find(|v| v.plugin.id == "feeds").unwrap();
    assert!(
        feeds.grant_row.contains("allow_network(*)"),
        "{}",
        feeds.grant_row
    );
    assert!(
        feeds.grant_row.contains("allow_store"),
        "{}",
        feeds.grant_row
    );
    assert!(!feeds.warnings.is_empty());
    let wallet = views.iter().find(|v| v.plugin.id == "wallet").unwrap();
    assert!(
        wallet.grant_row.ends_with("no grants"),
        "{}",
        wallet.grant_row
    );
    let err = engine
        .install(
            probe(
                "wild",
                PluginKind::Community,
                json!({"allow_network": true, "url_allowlist": ["api.*.com"]}),
            ),
            "x",
            Arc::new(Probe),
        )
        .unwrap_err();
    assert!(
        err.to_string().starts_with("plugin \"wild\": grants: "),
        "{err}"
    );
    let err = engine
        .install(
            probe(
                "typo",
                PluginKind::Bundled,
                json!({"allow_tools": ["wallet.balance"]}),
            ),
            "x",
            Arc::new(Probe),
        )
        .unwrap_err();
    assert!(err.to_string().contains("wallet.balance"), "{err}");
    // A namesake differing only in case cannot even load: plugin ids are lowercase.
    let err = Plugin::load(
        parse_manifest(&json!({"id": "FEEDS"})).unwrap(),
        PluginKind::Bundled,
    )
    .unwrap_err();
    assert_eq!(err.plugin, "FEEDS");
    assert_eq!(err.field, "id");
    assert!(
        engine
            .plugins()
            .iter()
            .all(|v| !["wild", "typo", "FEEDS"].contains(&v.plugin.id.as_str()))
    );
}
