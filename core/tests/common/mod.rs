//! What the scheduler and data-source tests share: a clock the test moves, a broker that fails
//! the test if anything asks, a plugin whose handler counts its calls, and an alarm that
//! records what it was told.
#![allow(dead_code)]

pub mod child;
pub mod everything;
pub mod mcp_server;
pub mod model_server;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::TimeZone;
use harness_core::clock::Clock;
use harness_core::engine::Catalog;
use harness_core::invoke::{ApprovalBroker, PluginHandler, Prompt, ToolContext};
use harness_core::policy::Answer;
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::scheduler::WakeScheduler;
use harness_core::zone::Zone as Tz;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// A clock the test sets. What waits on it (`Clock::until`) ends when the test moves it past
/// the instant, never by time passing.
pub struct ManualClock(tokio::sync::watch::Sender<i64>);

impl Default for ManualClock {
    fn default() -> Self {
        Self(tokio::sync::watch::Sender::new(0))
    }
}

impl ManualClock {
    pub fn at(ms: i64) -> Arc<Self> {
        Arc::new(Self(tokio::sync::watch::Sender::new(ms)))
    }
    pub fn set(&self, ms: i64) {
        self.0.send_replace(ms);
    }
    pub fn now(&self) -> i64 {
        *self.0.borrow()
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        *self.0.borrow()
    }

    fn until(&self, at_ms: i64) -> harness_core::clock::Until {
        let mut now = self.0.subscribe();
        Box::pin(async move {
            // The sender lives as long as the engine holding this clock.
            let _ = now.wait_for(|ms| *ms >= at_ms).await;
        })
    }
}

/// Nothing unattended may ever ask (seed 004): a prompt fails the test.
pub struct NobodyThere;

#[async_trait]
impl ApprovalBroker for NobodyThere {
    async fn ask(&self, prompt: Prompt) -> Answer {
        panic!(
            "a prompt was raised for {} during an unattended run",
            prompt.tool
        );
    }
}

/// Answers every prompt with Deny and keeps what it was shown.
#[derive(Default)]
pub struct Denies(pub Mutex<Vec<Prompt>>);

#[async_trait]
impl ApprovalBroker for Denies {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.0.lock().unwrap().push(prompt);
        Answer::Deny
    }
}

/// Counts each tool's calls and answers with a result the test sets.
#[derive(Default)]
pub struct Counter {
    pub calls: Mutex<Vec<String>>,
    pub results: Mutex<std::collections::BTreeMap<String, Value>>,
}

impl Counter {
    pub fn count(&self, tool: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|t| *t == tool)
            .count()
    }
    pub fn total(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
    pub fn answer(&self, tool: &str, result: Value) {
        self.results.lock().unwrap().insert(tool.to_owned(), result);
    }
}

#[async_trait]
impl PluginHandler for Counter {
    async fn run(&self, tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        self.calls.lock().unwrap().push(tool.id.clone());
        Ok(self
            .results
            .lock()
            .unwrap()
            .get(&tool.id)
            .cloned()
            .unwrap_or_else(|| json!({"ok": true})))
    }
}

/// A tap on `tool` with `input`: the user's call through the one invoke path.
pub async fn tap(engine: &Engine, tool: &str, input: Value) -> harness_core::invoke::Outcome {
    engine
        .invoke(harness_core::invoke::Call {
            tool: tool.into(),
            actor: harness_core::policy::Actor::User,
            input,
            conversation: None,
        })
        .await
        .outcome
}

/// A campus plugin with a tool of each kind the scheduler must tell apart.
pub fn campus_manifest(notices_effect: &str) -> Value {
    json!({
        "id": "campus",
        "title": "校园",
        "tools": [
            {"name": "balance", "title": "余额", "effect": "read"},
            {"name": "notices", "title": "通知", "effect": notices_effect,
             "input": {"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1}}, "additionalProperties": false}},
            {"name": "reserve", "title": "预订", "effect": "write"},
            {"name": "post", "title": "发帖", "effect": "public"},
            {"name": "pay", "title": "付款", "effect": "money"},
            {"name": "peek", "title": "每次都问", "effect": "read", "alwaysAsk": true}
        ],
        "dataSources": {"balance": {"title": "余额", "tool": "balance", "ttlMs": 60000}}
    })
}

pub fn campus(notices_effect: &str, kind: PluginKind) -> Plugin {
    Plugin::load(
        parse_manifest(&campus_manifest(notices_effect)).unwrap(),
        kind,
    )
    .unwrap()
}

/// Supplies the campus plugin as a bundled plugin with `handler` behind it.
pub struct CampusCatalog(pub Arc<dyn PluginHandler>);

impl Catalog for CampusCatalog {
    fn bundled(&self) -> Vec<(Plugin, Arc<dyn PluginHandler>)> {
        vec![(campus("read", PluginKind::Bundled), self.0.clone())]
    }
}

/// What the shell's alarm was told, in order.
#[derive(Default)]
pub struct RecordingWake(pub Mutex<Vec<Option<(i64, bool)>>>);

impl WakeScheduler for RecordingWake {
    fn arm(&self, at_ms: i64, exact: bool) -> Result<(), String> {
        self.0.lock().unwrap().push(Some((at_ms, exact)));
        Ok(())
    }
    fn cancel(&self) -> Result<(), String> {
        self.0.lock().unwrap().push(None);
        Ok(())
    }
}

/// An in-memory engine with the built-in plugins and the campus plugin (bundled), terms
/// accepted, at `now`.
pub fn engine_at(
    now: i64,
    broker: Arc<dyn ApprovalBroker>,
) -> (Engine, Arc<ManualClock>, Arc<Counter>) {
    let clock = ManualClock::at(now);
    let counter = Arc::new(Counter::default());
    let mut options = Options::new(broker);
    options.clock = clock.clone();
    options.catalog = Arc::new(CampusCatalog(counter.clone()));
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    (engine, clock, counter)
}

/// An instant given as local time in `tz` (the first occurrence if ambiguous).
pub fn local(tz: &str, text: &str) -> i64 {
    let tz: Tz = tz.parse().unwrap();
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap();
    tz.from_local_datetime(&naive)
        .earliest()
        .unwrap()
        .timestamp_millis()
}

/// An instant given as UTC.
pub fn utc(text: &str) -> i64 {
    local("UTC", text)
}

/// Runs every due job at each wake time up to `until`, as a shell woken by its alarm would,
/// and returns the due instants that ran.
pub async fn fire_until(engine: &Engine, clock: &ManualClock, until: i64) -> Vec<i64> {
    let mut fired = Vec::new();
    while let Some(at) = engine.next_wake_ms().filter(|at| *at <= until) {
        clock.set(at);
        for report in engine.run_due(at).await.unwrap() {
            fired.push(report.due_ms);
        }
    }
    fired
}

pub fn check_every(minutes: u32, tool: &str) -> Value {
    json!({"name": "每时检查", "schedule": {"everyMinutes": minutes}, "check": {"tool": tool, "notify": {"title": "t", "body": "b"}}})
}

/// Every file under `dir`, read whole: what a test greps for a secret.
pub fn files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            out.push((path, bytes));
        }
    }
    out
}
