//! Opening a data directory that holds 200 installed plugins (10 tools each), 100,000 audit
//! rows and 1,000 memories; opening a fresh one with the shipped TypeScript plugins
//! (`plugins::script::Shipped`, their manifests read as JSON) and without any; and appending to
//! the audit log, one transaction per row as the invoke path does. And what `harness tools`
//! does as a whole process — open a data directory, list the tools, exit — with the shipped
//! plugins and without any TypeScript plugin: this bench runs itself as that process
//! ([`CHILD`]), so the two differ in the catalog alone.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, Throughput, criterion_group};
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

/// Set in the environment of this bench run as a child process: `shipped` or `none`, the
/// catalog it opens [`CHILD_DIR`] with before it lists the tools and exits.
const CHILD: &str = "STATE_BENCH_CHILD";
const CHILD_DIR: &str = "STATE_BENCH_CHILD_DIR";

/// The child's whole life: open, list the tools (what `harness tools` prints), exit.
fn child(catalog: &str) -> ! {
    let dir = std::env::var_os(CHILD_DIR).expect("the parent names the data directory");
    let options = match catalog {
        "shipped" => shipped(),
        _ => options(),
    };
    let engine = Engine::open(std::path::Path::new(&dir), options).unwrap();
    black_box(engine.tool_catalog());
    std::process::exit(0)
}

/// The CPU time (user + system) and wall time of `runs` child processes with `catalog`, each
/// opening the same data directory (made by the first), as their medians and minimums.
fn whole_processes(catalog: &str, runs: usize) -> String {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children_cpu = || {
        // SAFETY: getrusage writes the struct it is given and nothing else.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        seconds(usage.ru_utime) + seconds(usage.ru_stime)
    };
    let (mut cpu, mut wall) = (Vec::new(), Vec::new());
    for _ in 0..=runs {
        let before = children_cpu();
        let start = std::time::Instant::now();
        let status = std::process::Command::new(&exe)
            .env(CHILD, catalog)
            .env(CHILD_DIR, dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        wall.push(start.elapsed().as_secs_f64() * 1e3);
        cpu.push((children_cpu() - before) * 1e3);
    }
    // The first run made the data directory: a reopen is what is measured.
    let (mut cpu, mut wall) = (cpu.split_off(1), wall.split_off(1));
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0])
    };
    let ((cpu_p50, cpu_min), (wall_p50, wall_min)) = (median(&mut cpu), median(&mut wall));
    format!(
        "CPU p50 {cpu_p50:.1} ms (min {cpu_min:.1}), wall p50 {wall_p50:.1} ms (min {wall_min:.1})"
    )
}

fn bench(c: &mut Criterion) {
    first_opens();
    let runs = 30;
    println!(
        "a whole process opening a data directory and listing the tools, {runs} runs: with the \
         shipped plugins {}; without any TypeScript plugin {}",
        whole_processes("shipped", runs),
        whole_processes("none", runs)
    );
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

fn main() {
    if let Ok(catalog) = std::env::var(CHILD) {
        child(&catalog);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
