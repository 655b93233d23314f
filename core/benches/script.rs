//! TypeScript plugins (DESIGN.md §11, and their budgets): an echo tool through `invoke` as a
//! TypeScript plugin and as a Rust handler, the same manifest, the same engine; loading a bundle
//! (a runtime made, the bundle evaluated, its manifest read and checked); and, printed, what a
//! process pays once (its first plugin runtime, the schema validator's start), a plugin's first
//! call (issue 40: within 10 ms), and the memory an idle plugin's runtime holds after it.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use harness_core::invoke::{ApprovalBroker, Call, Outcome, PluginHandler, Prompt, ToolContext};
use harness_core::plugins::script::{self, Limits, ScriptPlugin};
use harness_core::policy::{Actor, Answer};
use harness_core::registry::{Plugin, PluginKind, Tool};
use harness_core::schema::InputSchema;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const ECHO: &str = include_str!("../../sdk/test-plugins/echo/bundle.js");

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

/// The Rust twin of the TypeScript echo tool.
struct RustEcho;

#[async_trait]
impl PluginHandler for RustEcho {
    async fn run(&self, _tool: &Tool, input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({"text": input["text"]}))
    }
}

fn engine(dir: &std::path::Path) -> (Engine, Arc<ScriptPlugin>) {
    let mut options = Options::new(Arc::new(Deny));
    options.builtin_plugins = false;
    let engine = Engine::open(dir, options).unwrap();
    let (plugin, handler) = script::load_script(ECHO, Limits::default()).unwrap();
    // The same manifest under another id, run by Rust.
    let mut manifest = plugin.manifest.clone();
    manifest.id = "rustecho".into();
    engine.install(plugin, "bundled", handler.clone()).unwrap();
    engine
        .install(
            Plugin::load(manifest, PluginKind::Bundled).unwrap(),
            "bundled",
            Arc::new(RustEcho),
        )
        .unwrap();
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    (engine, handler)
}

async fn echo(engine: &Engine, tool: &str) {
    let done = engine
        .invoke(Call {
            tool: tool.into(),
            actor: Actor::Agent,
            input: json!({"text": "你好"}),
            conversation: Some("c".into()),
        })
        .await;
    assert!(
        matches!(done.outcome, Outcome::Ran { .. }),
        "{:?}",
        done.outcome
    );
}

fn benches(c: &mut Criterion) {
    // The process's first plugin runtime: the SDK runtime (the SDK and zod) inflated and
    // loaded from the bytecode build.rs compiled, the bundle evaluated, its manifest read.
    let start = std::time::Instant::now();
    black_box(script::read_manifest(ECHO, Limits::default()).unwrap());
    println!(
        "the first plugin runtime in this process (the SDK from build-time bytecode): {:?}",
        start.elapsed()
    );
    // A process's first check of an input starts the JSON Schema validator (its own runtime),
    // once for every tool of every kind; timed alone.
    let start = std::time::Instant::now();
    black_box(InputSchema::compile(json!({"type": "object"})).unwrap());
    println!(
        "the schema validator started in this process: {:?}",
        start.elapsed()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (engine, handler) = engine(dir.path());
    // A plugin's first call: its runtime made (no JavaScript ran for it before), the input
    // checked, the tool run, the audit written.
    let start = std::time::Instant::now();
    rt.block_on(echo(&engine, "echo.say"));
    println!("a bundle's first call: {:?}", start.elapsed());
    let idle = handler.memory_used().unwrap();
    println!(
        "an idle TypeScript plugin's runtime after its first call: {idle} bytes ({:.2} MiB)",
        idle as f64 / (1024.0 * 1024.0)
    );
    // The budgets speak of medians; criterion reports means, which the audit's disk writes
    // on a shared machine scatter. The medians of the same calls, printed beside them:
    let median = |tool: &str| {
        let mut times: Vec<std::time::Duration> = (0..400)
            .map(|_| {
                let start = std::time::Instant::now();
                rt.block_on(echo(&engine, tool));
                start.elapsed()
            })
            .collect();
        times.sort();
        times[times.len() / 2]
    };
    let (ts, rust) = (median("echo.say"), median("rustecho.say"));
    println!("invoke p50: TypeScript echo {ts:?}, Rust echo {rust:?}");
    let mut loads: Vec<std::time::Duration> = (0..30)
        .map(|_| {
            let start = std::time::Instant::now();
            black_box(script::load(ECHO, Limits::default()).unwrap());
            start.elapsed()
        })
        .collect();
    loads.sort();
    println!(
        "load a bundle (a runtime made, the SDK loaded from bytecode) p50: {:?}",
        loads[loads.len() / 2]
    );
    c.bench_function("invoke: echo as a TypeScript plugin", |b| {
        b.iter(|| rt.block_on(echo(&engine, "echo.say")))
    });
    c.bench_function("invoke: echo as a Rust handler", |b| {
        b.iter(|| rt.block_on(echo(&engine, "rustecho.say")))
    });
    c.bench_function(
        "load a bundle: runtime, evaluation, manifest checked",
        |b| b.iter(|| black_box(script::load(ECHO, Limits::default()).unwrap())),
    );
}

criterion_group! {
    name = script_benches;
    config = Criterion::default().sample_size(30);
    targets = benches
}
criterion_main!(script_benches);
