//! The decision with 200 plugins × 20 tools and 1,000 rules: the pure `decide` alone, and the
//! engine's whole pre-run path (lookups under the lock, schema validation, the tool's check).

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use harness_core::invoke::{ApprovalBroker, Call, PluginHandler, Prompt, ToolContext};
use harness_core::policy::{
    Actor, Answer, Availability, Facts, Preset, Rule, RuleKind, RuleSet, Rules, ToolCheck,
    UserModes, decide,
};
use harness_core::registry::{Effect, Plugin, PluginKind, Tool, parse_manifest};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const PLUGINS: usize = 200;
const TOOLS: usize = 20;
const RULES: usize = 1000;
const CALLS: usize = 1024;

/// A fixed pseudo-random sequence, so every run measures the same work.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below
    }
}

fn plugins(rng: &mut Lcg) -> Vec<Plugin> {
    let kinds = [
        PluginKind::Bundled,
        PluginKind::Official,
        PluginKind::Community,
        PluginKind::Remote,
    ];
    (0..PLUGINS)
        .map(|p| {
            let kind = kinds[rng.next(4)];
            let tools: Vec<Value> = (0..TOOLS)
                .map(|t| {
                    json!({"name": format!("tool{t}"), "effect": Effect::ALL[rng.next(4)].as_str(),
                           "input": {"type": "object", "properties": {"n": {"type": "integer"}}}})
                })
                .collect();
            let id = if kind == PluginKind::Remote {
                format!("mcp-server{p}")
            } else {
                format!("plugin{p}")
            };
            Plugin::load(
                parse_manifest(&json!({"id": id, "tools": tools})).unwrap(),
                kind,
            )
            .unwrap()
        })
        .collect()
}

fn rules(rng: &mut Lcg, plugins: &[Plugin]) -> Vec<Rule> {
    let kinds = [RuleKind::Deny, RuleKind::Ask, RuleKind::Allow];
    (0..RULES)
        .map(|_| {
            let plugin = &plugins[rng.next(PLUGINS)];
            let tool = match rng.next(10) {
                0 => format!("{}.*", plugin.id),
                _ => plugin.tools[rng.next(TOOLS)].id.clone(),
            };
            let when = (rng.next(4) == 0).then(|| json!({"n": 7}).as_object().unwrap().clone());
            Rule {
                kind: kinds[rng.next(3)],
                tool,
                effect: None,
                when,
            }
        })
        .collect()
}

struct Idle;

#[async_trait]
impl PluginHandler for Idle {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(Value::Null)
    }
}

#[async_trait]
impl ApprovalBroker for Idle {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

fn bench(c: &mut Criterion) {
    let mut rng = Lcg(0x5eed);
    let plugins = plugins(&mut rng);
    let rule_list = rules(&mut rng, &plugins);
    let global = RuleSet::new(rule_list.clone()).unwrap();
    let conversation = RuleSet::default();
    let modes = UserModes::default();
    let input = json!({"n": 7});
    let picks: Vec<(usize, usize)> = (0..CALLS)
        .map(|_| (rng.next(PLUGINS), rng.next(TOOLS)))
        .collect();

    c.bench_function(
        "policy::decide (200 plugins × 20 tools, 1000 rules)",
        |b| {
            let mut i = 0;
            b.iter(|| {
                let (p, t) = picks[i % CALLS];
                i += 1;
                let plugin = &plugins[p];
                let tool = &plugin.tools[t];
                let facts = Facts {
                    actor: Actor::Agent,
                    tool: Some(tool),
                    availability: Availability::Ready,
                    terms_accepted: true,
                    input: &input,
                    input_valid: true,
                    mode: modes.effective(plugin, tool.effect).0,
                    preset: Preset::AutoEdit,
                    plan_mode: false,
                    tainted: false,
                    check: ToolCheck::Pass,
                    sensitive: false,
                    has_target: false,
                    money: None,
                };
                black_box(decide(
                    black_box(&facts),
                    Rules {
                        global: &global,
                        conversation: &conversation,
                    },
                ))
            })
        },
    );

    let mut options = Options::new(Arc::new(Idle));
    options.builtin_plugins = false;
    let engine = Engine::in_memory(options).unwrap();
    let handler: Arc<dyn PluginHandler> = Arc::new(Idle);
    let ids: Vec<String> = picks
        .iter()
        .map(|&(p, t)| plugins[p].tools[t].id.clone())
        .collect();
    for plugin in plugins {
        engine.install(plugin, "bench", handler.clone()).unwrap();
    }
    engine.set_rules(rule_list).unwrap();
    engine.accept_terms().unwrap();
    engine.open_conversation("bench").unwrap();
    let calls: Vec<Call> = ids
        .into_iter()
        .map(|tool| Call {
            tool,
            actor: Actor::Agent,
            input: input.clone(),
            conversation: Some("bench".into()),
        })
        .collect();
    c.bench_function("Engine::decide (lookups, schema, check, decide)", |b| {
        let mut i = 0;
        b.iter(|| {
            let call = &calls[i % CALLS];
            i += 1;
            black_box(engine.decide(black_box(call)))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
