//! Opening a data directory that holds 200 installed plugins (10 tools each), 100,000 audit
//! rows and 1,000 memories; opening a fresh one with the shipped TypeScript plugins
//! (`plugins::script::Shipped`, their manifests read as JSON) and without any; and appending to
//! the audit log, one transaction per row as the invoke path does.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::plugins::script::{self, Shipped};
use harness_core::policy::Answer;
use harness_core::store::Store;
use harness_core::store::rows::{self, AuditRow};
use harness_core::{Engine, Options};
use serde_json::json;

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

fn options() -> Options {
    Options::new(Arc::new(Deny))
}

fn audit_row(n: i64) -> AuditRow {
    AuditRow {
        seq: 0,
        at_ms: 1_764_000_000_000 + n,
        actor: "agent".into(),
        conversation: Some("c".into()),
        tool: format!("plugin{}.tool{}", n % 200, n % 10),
        effect: Some("read".into()),
        event: "decided".into(),
        detail: Some("run".into()),
        step: Some("8i".into()),
        rule: None,
        input_digest: Some("0123456789abcdef0123456789abcdef".into()),
    }
}

fn populate(dir: &std::path::Path) {
    let engine = Engine::open(dir, options()).unwrap();
    for p in 0..200 {
        let tools: Vec<serde_json::Value> = (0..10)
            .map(|t| {
                let effect = ["read", "write", "money", "public"][t % 4];
                json!({"name": format!("tool{t}"), "title": "工具", "effect": effect,
                       "input": {"type": "object", "properties": {"id": {"type": "string"}, "n": {"type": "integer", "minimum": 0}}, "required": ["id"]}})
            })
            .collect();
        let manifest = json!({"id": format!("plugin{p}"), "title": "插件", "tools": tools});
        let text = format!("---\n{manifest}\n---\n# plugin {p}\n");
        engine
            .install_document(&text, &format!("https://example.org/{p}/PLUGIN.md"))
            .unwrap();
    }
    for m in 0..1000 {
        engine
            .write_memory(&format!("memory {m}"), Some("c"), Some(m), m % 3 == 0)
            .unwrap();
    }
    drop(engine);
    let store = Store::open(dir).unwrap();
    store
        .write(|tx| {
            for n in 0..100_000 {
                rows::append_audit(tx, &audit_row(n))?;
            }
            Ok(())
        })
        .unwrap();
}

fn shipped() -> Options {
    let mut options = options();
    options.catalog = Arc::new(Shipped);
    options
}

/// The process's first open with the shipped plugins, and without any (first in this process:
/// nothing cached); and what reading the shipped manifests by running each bundle in QuickJS,
/// as opening did before they were JSON, costs in the same process.
fn first_opens() {
    let timed = |options: Options| {
        let dir = tempfile::tempdir().unwrap();
        let start = std::time::Instant::now();
        black_box(Engine::open(dir.path(), options).unwrap());
        start.elapsed()
    };
    // The process's one-time costs (SQLite's, the store's), paid by neither figure.
    timed(options());
    let with = timed(shipped());
    let without = timed(options());
    let start = std::time::Instant::now();
    for bundle in script::BUNDLES {
        black_box(script::read_manifest(&bundle.source(), script::Limits::default()).unwrap());
    }
    let quickjs = start.elapsed();
    println!(
        "first open of a fresh data directory in this process: with the shipped plugins \
         {with:?}, without any TypeScript plugin {without:?}; the shipped manifests read by \
         running their bundles in QuickJS (before manifest.json) {quickjs:?}"
    );
}

fn bench(c: &mut Criterion) {
    first_opens();
    // One engine at a time holds a data directory: each is dropped (timed too) before the next.
    let (with, without) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    c.bench_function(
        "Engine::open (a data directory, the shipped plugins)",
        |b| b.iter(|| Engine::open(black_box(with.path()), shipped()).unwrap()),
    );
    c.bench_function(
        "Engine::open (a data directory, no TypeScript plugin)",
        |b| b.iter(|| Engine::open(black_box(without.path()), options()).unwrap()),
    );

    let dir = tempfile::tempdir().unwrap();
    populate(dir.path());
    c.bench_function(
        "Engine::open (200 plugins × 10 tools, 100k audit rows, 1k memories)",
        |b| b.iter_with_large_drop(|| Engine::open(black_box(dir.path()), options()).unwrap()),
    );

    let fresh = tempfile::tempdir().unwrap();
    let store = Store::open(fresh.path()).unwrap();
    let mut group = c.benchmark_group("audit");
    group.throughput(Throughput::Elements(1));
    let mut n = 0;
    group.bench_function("append one row (one transaction)", |b| {
        b.iter(|| {
            n += 1;
            store
                .write(|tx| rows::append_audit(tx, &audit_row(n)))
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
