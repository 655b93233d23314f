//! The scheduler with 10,000 jobs (a third each one-shot, interval and cron, in three time
//! zones): computing the next wake time and selecting what is due, as the shell's alarm and
//! `run_due` do on every wake-up (budget: under 1 ms); and, for scale, computing one cron
//! job's next due instant, which happens once per run.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use harness_core::clock::Clock;
use harness_core::engine::Catalog;
use harness_core::invoke::{ApprovalBroker, PluginHandler, Prompt, ToolContext};
use harness_core::policy::Answer;
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::scheduler::Owner;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const JOBS: usize = 10_000;
/// 2026-05-01 00:00 UTC.
const T0: i64 = 1_777_593_600_000;

struct Fixed;

impl Clock for Fixed {
    fn now_ms(&self) -> i64 {
        T0
    }
}

struct Never;

#[async_trait]
impl ApprovalBroker for Never {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

#[async_trait]
impl PluginHandler for Never {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({"balanceYuan": 10}))
    }
}

struct One;

impl Catalog for One {
    fn bundled(&self) -> Vec<(Plugin, Arc<dyn PluginHandler>)> {
        let manifest = json!({"id": "campus", "title": "校园", "tools": [{"name": "balance", "title": "余额", "effect": "read"}]});
        vec![(
            Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Bundled).unwrap(),
            Arc::new(Never),
        )]
    }
}

fn engine() -> Engine {
    let mut options = Options::new(Arc::new(Never));
    options.clock = Arc::new(Fixed);
    options.catalog = Arc::new(One);
    let engine = Engine::in_memory(options).unwrap();
    let zones = ["Asia/Shanghai", "Europe/London", "America/New_York"];
    for i in 0..JOBS {
        let schedule = match i % 3 {
            0 => json!({"everyMinutes": 1 + i % 600}),
            1 => json!({"cron": format!("{} {} * * *", i % 60, (i / 60) % 24)}),
            _ => {
                json!({"at": format!("2026-05-{:02} {:02}:{:02}", 2 + i % 27, (i / 60) % 24, i % 60)})
            }
        };
        let spec = json!({"name": format!("job {i}"), "schedule": schedule, "timeZone": zones[i % 3],
                          "check": {"tool": "campus.balance", "when": {"path": "balanceYuan", "op": "lt", "value": 20},
                                    "notify": {"title": "余额", "body": "{balanceYuan}"}}});
        engine.add_job(&spec, Owner::User).unwrap();
    }
    engine
}

fn bench(c: &mut Criterion) {
    let engine = engine();
    let now = T0 + 60 * 60_000;
    let due = engine.due_jobs(now).len();
    eprintln!("{JOBS} jobs; {due} due an hour later");
    c.bench_function("next_wake_ms over 10,000 jobs", |b| {
        b.iter(|| black_box(engine.next_wake_ms()))
    });
    c.bench_function("due_jobs over 10,000 jobs", |b| {
        b.iter(|| black_box(engine.due_jobs(black_box(now))))
    });
    c.bench_function("next wake + due selection over 10,000 jobs", |b| {
        b.iter(|| {
            black_box(engine.next_wake_ms());
            black_box(engine.due_jobs(black_box(now)))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
