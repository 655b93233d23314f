//! Remote plugins against a real MCP server: `@modelcontextprotocol/server-everything` in its
//! Streamable HTTP mode on a loopback port, started by each test.
//!
//! The server is found through `PKU_HARNESS_MCP_EVERYTHING` (its `dist/index.js`; scripts/test.sh
//! installs it and sets the variable) or at the install location scripts/test.sh uses. When it
//! is in neither place the tests fail, saying how to install it: they never skip.

mod common;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Denies;
use harness_core::invoke::{Call, Outcome};
use harness_core::plugins::remote::RemoteServer;
use harness_core::policy::Actor;
use harness_core::registry::Effect;
use harness_core::{Engine, Options};
use serde_json::json;

const INSTALL: &str = "npm install --prefix ~/.cache/pku-harness/mcp \
                       @modelcontextprotocol/server-everything@2026.8.31";

fn server_script() -> PathBuf {
    if let Ok(path) = std::env::var("PKU_HARNESS_MCP_EVERYTHING") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "PKU_HARNESS_MCP_EVERYTHING is {}, which is not a file; install the server with: {INSTALL}",
            path.display()
        );
        return path;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let path = PathBuf::from(home).join(
        ".cache/pku-harness/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        path.is_file(),
        "the MCP test server is not installed; run scripts/test.sh, or install it with: {INSTALL} \
         (or set PKU_HARNESS_MCP_EVERYTHING to its dist/index.js)"
    );
    path
}

/// server-everything on a loopback port; killed when dropped.
struct Everything {
    child: Child,
    port: u16,
}

impl Everything {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(port)
    }

    fn start_on(port: u16) -> Self {
        let child = Command::new("node")
            .arg(server_script())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs the MCP test server");
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < until, "the MCP test server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        self.kill();
    }
}

fn text_of(result: &serde_json::Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_server_lists_its_tools_and_answers_echo_and_get_sum() {
    let server = Everything::start();
    let client = RemoteServer::new(&server.url(), None, Duration::from_secs(30)).unwrap();
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"echo"), "{names:?}");
    assert!(names.contains(&"get-sum"), "{names:?}");
    let echo = client
        .call("echo", json!({"message": "你好"}))
        .await
        .unwrap();
    assert_eq!(text_of(&echo), "Echo: 你好");
    let sum = client
        .call("get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(text_of(&sum).contains('5'), "{sum}");
}

#[tokio::test]
async fn an_added_server_is_a_remote_plugin_whose_effects_follow_read_only_hint() {
    let server = Everything::start();
    let engine = Engine::in_memory(Options::new(Arc::new(Denies::default()))).unwrap();
    let id = engine
        .add_remote(&server.url(), "everything", None)
        .await
        .unwrap();
    assert_eq!(id, "mcp-everything");
    let echo = engine.tool("mcp-everything.echo").unwrap();
    assert_eq!((echo.effect, echo.untrusted), (Effect::Read, true));
    let toggle = engine
        .tool("mcp-everything.toggle-simulated-logging")
        .unwrap();
    assert_eq!(toggle.effect, Effect::Write, "no readOnlyHint: write");

    let outcome = engine
        .invoke(Call {
            tool: "mcp-everything.echo".into(),
            actor: Actor::User,
            input: json!({"message": "tap"}),
            conversation: None,
        })
        .await
        .outcome;
    let Outcome::Ran { result, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(text_of(&result), "Echo: tap");
}

#[tokio::test]
async fn a_call_past_the_timeout_is_the_tools_error() {
    let server = Everything::start();
    let client = RemoteServer::new(&server.url(), None, Duration::from_secs(1)).unwrap();
    let started = Instant::now();
    let err = client
        .call(
            "trigger-long-running-operation",
            json!({"duration": 5, "steps": 5}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        format!("the server at {} did not answer within 1 s", server.url())
    );
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn a_server_killed_mid_call_fails_the_call_and_the_next_call_reconnects() {
    let mut server = Everything::start();
    let port = server.port;
    let client = Arc::new(RemoteServer::new(&server.url(), None, Duration::from_secs(15)).unwrap());
    client.list_tools().await.unwrap();
    let calling = client.clone();
    let call = tokio::spawn(async move {
        calling
            .call(
                "trigger-long-running-operation",
                json!({"duration": 10, "steps": 10}),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    server.kill();
    let started = Instant::now();
    let err = call.await.unwrap().unwrap_err();
    assert!(
        err.starts_with(&format!("the server at {} ", server.url())),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(14),
        "the death was noticed only by the timeout: {err}"
    );

    // The network is back: the next call opens a new session.
    let _again = Everything::start_on(port);
    let echo = client
        .call("echo", json!({"message": "back"}))
        .await
        .unwrap();
    assert_eq!(text_of(&echo), "Echo: back");
}

#[tokio::test]
async fn a_remote_tool_is_made_stricter_never_looser_and_it_stays_so_across_refresh_and_reopen() {
    let server = Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let open = || Engine::open(dir.path(), Options::new(Arc::new(Denies::default()))).unwrap();
    let engine = open();
    engine
        .add_remote(&server.url(), "everything", None)
        .await
        .unwrap();
    engine
        .reclass_remote_tool("mcp-everything.echo", Effect::Money)
        .unwrap();
    assert_eq!(
        engine.tool("mcp-everything.echo").unwrap().effect,
        Effect::Money
    );
    let err = engine
        .reclass_remote_tool("mcp-everything.echo", Effect::Write)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings key \"tools.mcp-everything.echo.effect\": mcp-everything.echo is a money tool; \
         it can be made stricter (a stronger effect), never write"
    );

    let added = engine.refresh_remote("mcp-everything").await.unwrap();
    assert!(added.is_empty(), "{added:?}");
    assert_eq!(
        engine.tool("mcp-everything.echo").unwrap().effect,
        Effect::Money,
        "a refresh keeps the user's re-class"
    );

    drop(engine);
    let engine = open();
    assert_eq!(
        engine.tool("mcp-everything.echo").unwrap().effect,
        Effect::Money
    );
    // Reopened, the plugin reaches its server again (its URL was kept as its source).
    let outcome = engine
        .invoke(Call {
            tool: "mcp-everything.get-sum".into(),
            actor: Actor::User,
            input: json!({"a": 1, "b": 1}),
            conversation: None,
        })
        .await
        .outcome;
    let Outcome::Ran { result, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert!(text_of(&result).contains('2'), "{result}");
}
