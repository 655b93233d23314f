//! Properties of the decision over random registries, modes, rules and calls.

use harness_core::policy::{
    Actor, Answer, Availability, Decision, Facts, Mode, Preset, Rule, RuleKind, RuleSet, Rules,
    Standing, ToolCheck, UserModes, Verdict, decide, precheck,
};
use harness_core::registry::{Effect, Plugin, PluginKind, parse_manifest};
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct ToolSpec {
    effect: Effect,
    user_only: bool,
    grant: bool,
    always_ask: bool,
    target: bool,
}

#[derive(Debug, Clone)]
struct PluginSpec {
    kind: PluginKind,
    defaults: Vec<(Effect, Mode)>,
    tools: Vec<ToolSpec>,
}

#[derive(Debug, Clone)]
struct RuleSpec {
    kind: RuleKind,
    /// 0: `*`, 1: `<plugin>.*`, 2: `<plugin>.<tool>`
    pattern: u8,
    plugin: usize,
    tool: usize,
    effect: Option<Effect>,
    when: bool,
}

#[derive(Debug, Clone)]
struct CallSpec {
    plugin: usize,
    tool: usize,
    actor: Actor,
    terms: bool,
    availability: Availability,
    input_valid: bool,
    plan_mode: bool,
    tainted: bool,
    check: ToolCheck,
    sensitive: bool,
    /// Whether the input matches rules' `when` condition.
    flagged: bool,
}

fn effect() -> impl Strategy<Value = Effect> {
    prop_oneof![
        Just(Effect::Read),
        Just(Effect::Write),
        Just(Effect::Money),
        Just(Effect::Public)
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![Just(Mode::Auto), Just(Mode::Ask), Just(Mode::Off)]
}

fn kind() -> impl Strategy<Value = PluginKind> {
    prop_oneof![
        Just(PluginKind::Bundled),
        Just(PluginKind::Official),
        Just(PluginKind::Community),
        Just(PluginKind::Remote)
    ]
}

fn tool_spec() -> impl Strategy<Value = ToolSpec> {
    (
        effect(),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(effect, user_only, grant, always_ask, target)| ToolSpec {
            effect,
            user_only,
            grant,
            always_ask,
            target,
        })
}

fn plugin_spec() -> impl Strategy<Value = PluginSpec> {
    (
        kind(),
        prop::collection::vec((effect(), mode()), 0..3),
        prop::collection::vec(tool_spec(), 1..5),
    )
        .prop_map(|(kind, defaults, tools)| PluginSpec {
            kind,
            defaults: if kind == PluginKind::Remote {
                Vec::new()
            } else {
                defaults
            },
            tools,
        })
}

fn rule_spec() -> impl Strategy<Value = RuleSpec> {
    (
        prop_oneof![
            Just(RuleKind::Deny),
            Just(RuleKind::Ask),
            Just(RuleKind::Allow)
        ],
        0u8..3,
        0usize..8,
        0usize..8,
        prop::option::of(effect()),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(kind, pattern, plugin, tool, effect, when)| RuleSpec {
            kind,
            pattern,
            plugin,
            tool,
            effect,
            when,
        })
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    (
        (
            0usize..8,
            0usize..8,
            prop_oneof![
                Just(Actor::User),
                Just(Actor::Agent),
                Just(Actor::Scheduler)
            ],
        ),
        (
            prop::bool::weighted(0.9),
            prop_oneof![
                8 => Just(Availability::Ready),
                1 => Just(Availability::Disabled),
                1 => Just(Availability::Unmet)
            ],
        ),
        (prop::bool::weighted(0.9), any::<bool>(), any::<bool>()),
        (
            prop_oneof![
                Just(ToolCheck::Pass),
                Just(ToolCheck::Deny),
                Just(ToolCheck::Allow)
            ],
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (plugin, tool, actor),
                (terms, availability),
                (input_valid, plan_mode, tainted),
                (check, sensitive, flagged),
            )| {
                CallSpec {
                    plugin,
                    tool,
                    actor,
                    terms,
                    availability,
                    input_valid,
                    plan_mode,
                    tainted,
                    check,
                    sensitive,
                    flagged,
                }
            },
        )
}

fn load(specs: &[PluginSpec]) -> Vec<Plugin> {
    specs
        .iter()
        .enumerate()
        .map(|(p, spec)| {
            let defaults: serde_json::Map<String, Value> =
                spec.defaults.iter().map(|(e, m)| (e.as_str().to_owned(), json!(m.as_str()))).collect();
            let tools: Vec<Value> = spec
                .tools
                .iter()
                .enumerate()
                .map(|(t, tool)| {
                    json!({"name": format!("t{t}"), "effect": tool.effect.as_str(), "userOnly": tool.user_only,
                           "grant": tool.grant, "alwaysAsk": tool.always_ask,
                           "target": if tool.target { json!("the target") } else { Value::Null }})
                })
                .collect();
            let id = if spec.kind == PluginKind::Remote { format!("mcp-p{p}") } else { format!("p{p}") };
            let manifest = parse_manifest(&json!({"id": id, "defaultModes": defaults, "tools": tools})).unwrap();
            Plugin::load(manifest, spec.kind).unwrap()
        })
        .collect()
}

fn rules(specs: &[RuleSpec], plugins: &[Plugin]) -> RuleSet {
    let rules = specs
        .iter()
        .map(|r| {
            let plugin = &plugins[r.plugin % plugins.len()];
            let tool = match r.pattern {
                0 => "*".to_owned(),
                1 => format!("{}.*", plugin.id),
                _ => plugin.tools[r.tool % plugin.tools.len()].id.clone(),
            };
            let when = r
                .when
                .then(|| json!({"flagged": true}).as_object().unwrap().clone());
            Rule {
                kind: r.kind,
                tool,
                effect: r.effect,
                when,
            }
        })
        .collect();
    RuleSet::new(rules).unwrap()
}

#[derive(Debug)]
struct World {
    plugins: Vec<Plugin>,
    modes: UserModes,
    global: RuleSet,
    conversation: RuleSet,
}

fn world() -> impl Strategy<Value = World> {
    (
        prop::collection::vec(plugin_spec(), 1..6),
        prop::collection::vec((0usize..8, effect(), mode()), 0..8),
        prop::collection::vec(rule_spec(), 0..10),
        prop::collection::vec(rule_spec(), 0..4),
    )
        .prop_map(|(plugin_specs, mode_specs, global, conversation)| {
            let plugins = load(&plugin_specs);
            let mut modes = UserModes::default();
            for (p, effect, mode) in mode_specs {
                modes.set(&plugins[p % plugins.len()].id, effect, mode);
            }
            let global = rules(&global, &plugins);
            let conversation = rules(&conversation, &plugins);
            World {
                plugins,
                modes,
                global,
                conversation,
            }
        })
}

/// Decides `call` in `world` under `preset`, returning the decision and whether a deny rule
/// matches the call.
fn decide_in(world: &World, call: &CallSpec, preset: Preset) -> (Decision, Effect, Mode, bool) {
    let plugin = &world.plugins[call.plugin % world.plugins.len()];
    let tool = &plugin.tools[call.tool % plugin.tools.len()];
    let (mode, _) = world.modes.effective(plugin, tool.effect);
    let input = if call.flagged {
        json!({"flagged": true})
    } else {
        json!({})
    };
    let facts = Facts {
        actor: call.actor,
        tool: Some(tool),
        availability: call.availability,
        terms_accepted: call.terms,
        input: &input,
        input_valid: call.input_valid,
        mode,
        preset,
        plan_mode: call.plan_mode,
        tainted: call.tainted,
        check: call.check,
        sensitive: call.sensitive,
        has_target: tool.target.is_some(),
        money: None,
    };
    let rules = Rules {
        global: &world.global,
        conversation: &world.conversation,
    };
    let denied = world
        .global
        .first_match(RuleKind::Deny, tool, &input)
        .is_some()
        || world
            .conversation
            .first_match(RuleKind::Deny, tool, &input)
            .is_some();
    (decide(&facts, rules), tool.effect, mode, denied)
}

const PRESETS: [Preset; 3] = [Preset::SkipAll, Preset::AutoEdit, Preset::AskEveryTime];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn a_user_call_is_never_asked(world in world(), calls in prop::collection::vec(call_spec(), 1..8)) {
        for call in calls.iter().map(|c| CallSpec { actor: Actor::User, ..c.clone() }) {
            for preset in PRESETS {
                let (decision, ..) = decide_in(&world, &call, preset);
                prop_assert!(!matches!(decision.verdict, Verdict::Ask(_)), "{decision:?}");
            }
        }
    }

    #[test]
    fn a_scheduler_call_is_never_asked_and_runs_only_reads(world in world(), calls in prop::collection::vec(call_spec(), 1..8)) {
        for call in calls.iter().map(|c| CallSpec { actor: Actor::Scheduler, ..c.clone() }) {
            for preset in PRESETS {
                let (decision, effect, ..) = decide_in(&world, &call, preset);
                prop_assert!(!matches!(decision.verdict, Verdict::Ask(_)), "{decision:?}");
                if decision.verdict == Verdict::Run {
                    prop_assert_eq!(effect, Effect::Read);
                }
            }
        }
    }

    #[test]
    fn nothing_runs_that_a_deny_rule_or_mode_off_refuses(world in world(), calls in prop::collection::vec(call_spec(), 1..8)) {
        for call in &calls {
            for preset in PRESETS {
                let (decision, _, mode, denied) = decide_in(&world, call, preset);
                if mode == Mode::Off || (denied && call.actor != Actor::User) {
                    prop_assert!(matches!(decision.verdict, Verdict::Refuse(_)), "{decision:?}");
                }
            }
        }
    }

    #[test]
    fn a_stricter_preset_never_turns_an_ask_or_refusal_into_a_run(world in world(), calls in prop::collection::vec(call_spec(), 1..8)) {
        for call in &calls {
            for (i, looser) in PRESETS.iter().enumerate() {
                for stricter in &PRESETS[i + 1..] {
                    let (loose, ..) = decide_in(&world, call, *looser);
                    let (strict, ..) = decide_in(&world, call, *stricter);
                    if loose.verdict != Verdict::Run {
                        prop_assert!(strict.verdict != Verdict::Run, "{looser:?} {loose:?} but {stricter:?} {strict:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn plan_mode_never_runs_an_agent_write(world in world(), calls in prop::collection::vec(call_spec(), 1..8)) {
        for call in calls.iter().map(|c| CallSpec { actor: Actor::Agent, plan_mode: true, ..c.clone() }) {
            for preset in PRESETS {
                let (decision, effect, ..) = decide_in(&world, &call, preset);
                if effect != Effect::Read {
                    prop_assert!(decision.verdict != Verdict::Run, "{decision:?}");
                }
            }
        }
    }

    #[test]
    fn a_protected_change_never_runs_for_the_agent_and_is_refused_in_a_tainted_turn(world in world(), calls in prop::collection::vec(call_spec(), 1..8)) {
        for call in calls.iter().map(|c| CallSpec { actor: Actor::Agent, sensitive: true, ..c.clone() }) {
            for preset in PRESETS {
                let (decision, ..) = decide_in(&world, &call, preset);
                prop_assert!(decision.verdict != Verdict::Run, "{preset:?} {decision:?}");
                if call.tainted {
                    prop_assert!(matches!(decision.verdict, Verdict::Refuse(_)), "{preset:?} {decision:?}");
                }
            }
        }
    }

    #[test]
    fn a_tainted_turn_never_offers_always_allow(world in world(), calls in prop::collection::vec(call_spec(), 1..8)) {
        for call in calls.iter().map(|c| CallSpec { tainted: true, ..c.clone() }) {
            for preset in PRESETS {
                let (decision, ..) = decide_in(&world, &call, preset);
                if let Verdict::Ask(kind) = decision.verdict {
                    prop_assert!(!kind.offers().contains(&Answer::AlwaysAllow), "{preset:?} {decision:?}");
                }
            }
        }
    }

    #[test]
    fn whenever_precheck_refuses_decide_refuses_every_input(world in world(), calls in prop::collection::vec(call_spec(), 1..8)) {
        let rules = Rules { global: &world.global, conversation: &world.conversation };
        for call in &calls {
            let plugin = &world.plugins[call.plugin % world.plugins.len()];
            let tool = &plugin.tools[call.tool % plugin.tools.len()];
            let standing = Standing {
                actor: call.actor,
                tool: Some(tool),
                availability: call.availability,
                terms_accepted: call.terms,
                mode: world.modes.effective(plugin, tool.effect).0,
                plan_mode: call.plan_mode,
            };
            let Err(code) = precheck(&standing, rules) else { continue };
            // Every input-dependent fact, every way.
            for preset in PRESETS {
                for (input_valid, flagged, tainted, sensitive) in (0..16).map(|b| (b & 1 != 0, b & 2 != 0, b & 4 != 0, b & 8 != 0)) {
                    for check in [ToolCheck::Pass, ToolCheck::Deny, ToolCheck::Allow] {
                        let varied = CallSpec { input_valid, flagged, tainted, sensitive, check, ..call.clone() };
                        let (decision, ..) = decide_in(&world, &varied, preset);
                        prop_assert!(matches!(decision.verdict, Verdict::Refuse(_)), "precheck {code:?} but {decision:?} for {varied:?}");
                    }
                }
            }
        }
    }
}
