//! Data sources (seed 004, DESIGN.md §2): a widget's read is served from the cache while fresh,
//! refreshed once through the invoke path (actor scheduler) when stale, shared by concurrent
//! readers, kept across restarts, and declined — never prompted — under an ask mode.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use common::*;
use harness_core::datasource::SourceError;
use harness_core::invoke::{PluginHandler, ToolContext};
use harness_core::policy::{Code, Mode};
use harness_core::registry::{Effect, Tool};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const T0: &str = "2026-05-01 08:00";
const TTL: i64 = 60_000;

#[tokio::test]
async fn a_fresh_value_is_served_from_the_cache_and_a_stale_one_refreshed_once() {
    let (engine, clock, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    counter.answer("campus.balance", json!({"balanceYuan": 42.5}));
    let first = engine.use_tool_data("campus", "balance").await.unwrap();
    assert_eq!(
        (first.value.clone(), first.fetched_at_ms, first.cached),
        (json!({"balanceYuan": 42.5}), utc(T0), false)
    );
    assert_eq!(counter.count("campus.balance"), 1);

    // Fresh until ttlMs has passed: no call.
    clock.set(utc(T0) + TTL - 1);
    let again = engine.use_tool_data("campus", "balance").await.unwrap();
    assert_eq!(
        (again.value, again.cached),
        (json!({"balanceYuan": 42.5}), true)
    );
    assert_eq!(counter.count("campus.balance"), 1);

    // Stale: one refresh, then fresh again.
    counter.answer("campus.balance", json!({"balanceYuan": 30}));
    clock.set(utc(T0) + TTL);
    let refreshed = engine.use_tool_data("campus", "balance").await.unwrap();
    assert_eq!(
        (refreshed.value, refreshed.fetched_at_ms, refreshed.cached),
        (json!({"balanceYuan": 30}), utc(T0) + TTL, false)
    );
    let cached = engine.use_tool_data("campus", "balance").await.unwrap();
    assert!(cached.cached);
    assert_eq!(counter.count("campus.balance"), 2);
    // The refresh went through the invoke path as a scheduled read.
    let ran: Vec<_> = engine
        .audit(100)
        .unwrap()
        .into_iter()
        .filter(|r| r.tool == "campus.balance" && r.event == "ran")
        .collect();
    assert_eq!(ran.len(), 2);
    assert!(ran.iter().all(|r| r.actor == "scheduler"));
}

/// Counts its calls and holds each until the test opens the gate.
#[derive(Default)]
struct Held {
    calls: AtomicUsize,
    open: AtomicBool,
}

#[async_trait]
impl PluginHandler for Held {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        while !self.open.load(Ordering::SeqCst) {
            tokio::task::yield_now().await;
        }
        Ok(json!({"call": n}))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn ten_concurrent_reads_of_a_stale_source_make_one_call() {
    let held = Arc::new(Held::default());
    let clock = ManualClock::at(utc(T0));
    let mut options = Options::new(Arc::new(NobodyThere));
    options.clock = clock.clone();
    options.catalog = Arc::new(CampusCatalog(held.clone()));
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();

    let readers: Vec<_> = (0..10)
        .map(|_| {
            let engine = engine.clone();
            tokio::spawn(async move { engine.use_tool_data("campus", "balance").await.unwrap() })
        })
        .collect();
    // Let every reader run up to where it waits: the first in the tool, the others on the lock.
    // (Without the per-source lock, each of the ten would be in the tool by now.)
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert_eq!(held.calls.load(Ordering::SeqCst), 1);
    held.open.store(true, Ordering::SeqCst);
    let mut values = Vec::new();
    for reader in readers {
        values.push(reader.await.unwrap());
    }
    assert_eq!(held.calls.load(Ordering::SeqCst), 1);
    assert!(values.iter().all(|v| v.value == json!({"call": 1})));
    assert_eq!(
        values.iter().filter(|v| !v.cached).count(),
        1,
        "one reader refreshed, nine were served what it fetched"
    );
}

#[tokio::test]
async fn the_cache_survives_reopening_the_data_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let open = |counter: Arc<Counter>| {
        let mut options = Options::new(Arc::new(NobodyThere));
        options.clock = ManualClock::at(utc(T0));
        options.catalog = Arc::new(CampusCatalog(counter));
        Engine::open(tmp.path(), options).unwrap()
    };
    let before = Arc::new(Counter::default());
    before.answer("campus.balance", json!({"balanceYuan": 42.5}));
    {
        let engine = open(before.clone());
        engine.accept_terms().unwrap();
        assert!(
            !engine
                .use_tool_data("campus", "balance")
                .await
                .unwrap()
                .cached
        );
    }
    let after = Arc::new(Counter::default());
    let engine = open(after.clone());
    let read = engine.use_tool_data("campus", "balance").await.unwrap();
    assert_eq!(
        (read.value, read.fetched_at_ms, read.cached),
        (json!({"balanceYuan": 42.5}), utc(T0), true)
    );
    assert_eq!((before.total(), after.total()), (1, 0));
}

#[tokio::test]
async fn an_ask_mode_source_is_declined_never_prompted() {
    // NobodyThere fails the test if anything asks.
    let (engine, _, counter) = engine_at(utc(T0), Arc::new(NobodyThere));
    engine.set_mode("campus", Effect::Read, Mode::Ask).unwrap();
    match engine.use_tool_data("campus", "balance").await {
        Err(SourceError::Refused {
            code: Code::Declined,
            message,
        }) => {
            assert!(
                message.starts_with("\"campus.balance\" would need the user's approval"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(counter.total(), 0);
}

#[tokio::test]
async fn an_unknown_source_is_named() {
    let (engine, _, _) = engine_at(utc(T0), Arc::new(NobodyThere));
    let err = engine.use_tool_data("campus", "weather").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin \"campus\" has no data source \"weather\""
    );
}
