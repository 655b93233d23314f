//! Plugins calling plugins through the call-tool gate (seed 001, `allow_tools`) are bounded:
//! a plugin granted its own tool and plugins granted each other's tools in a circle are refused
//! at load, naming the field and the circle, and a chain of calls deeper than four is refused at
//! run time naming the chain, never recursing until the process aborts. The plugins are
//! TypeScript bundles, the kind that is bundled and so may be called.

use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::plugins::script::{self, Limits, WithAuthored};
use harness_core::policy::{Actor, Answer};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

/// A bundle written by hand: plugin `id` with one read tool `go`, granted `calls`. Its tool
/// calls the first of them and answers `{got}` with what came back, or `{refused}` with the
/// message the call was refused with.
fn caller(id: &str, calls: &[&str]) -> String {
    let manifest = json!({"id": id, "title": id, "grants": {"allow_tools": calls},
        "tools": [{"name": "go", "effect": "read"}]});
    let next = calls.first().map_or(Value::Null, |t| json!(t));
    format!(
        "var __pkuBundle = {{ default: {{ manifest: {manifest}, execute: async (name, input, ctx) \
         => {{ const next = {next}; if (next === null) return {{ leaf: true }}; try {{ return {{ \
         got: await ctx.services.tools.call(next, {{}}) }}; }} catch (e) {{ return {{ refused: \
         e.message }}; }} }} }} }};"
    )
}

fn open(dir: &std::path::Path) -> Engine {
    let mut options = Options::new(Arc::new(Deny));
    options.builtin_plugins = false;
    Engine::open(dir, options).unwrap()
}

fn install(engine: &Engine, source: &str) -> Result<(), String> {
    let (plugin, handler) = script::load(source, Limits::default()).map_err(|e| e.to_string())?;
    engine
        .install(plugin, "bundled", handler)
        .map_err(|e| e.to_string())
}

// issue 34, item 4: a plugin granted its own tool called itself until the stack overflowed
// (SIGABRT); seed 001's "only bundled tools" no longer breaks the loop, since TypeScript plugins
// are bundled. It is refused at load, naming allow_tools.
#[test]
fn a_plugin_granted_its_own_tool_is_refused_at_load_naming_allow_tools() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    assert_eq!(
        install(&engine, &caller("selfish", &["selfish.go"])),
        Err(
            "plugin \"selfish\": grants.allow_tools: plugin \"selfish\": allow_tools names \
             \"selfish.go\", a tool of this plugin itself; a plugin may not call its own tools — \
             remove \"selfish.go\" from allow_tools"
                .into()
        )
    );
    assert!(engine.plugins().is_empty());
}

// issue 34, item 4: plugins that may call each other are a circle, decided at the plugin level
// (a may call b's tool and b may call a's); each on it is refused at load naming the circle,
// and a plugin that only calls into the circle is not taken for one of it.
#[test]
fn plugins_granted_each_other_s_tools_are_refused_at_open_naming_the_circle() {
    let authored = WithAuthored::load(vec![
        ("a/bundle.js".into(), caller("a", &["b.go"])),
        ("b/bundle.js".into(), caller("b", &["c.go"])),
        ("c/bundle.js".into(), caller("c", &["a.go"])),
        ("d/bundle.js".into(), caller("d", &[])),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Deny));
    options.builtin_plugins = false;
    options.catalog = Arc::new(authored);
    let engine = Engine::open(dir.path(), options).unwrap();
    let circle = |plugin: &str, chain: &str, granted: &str| {
        format!(
            "plugin \"{plugin}\": grants.allow_tools: plugin \"{plugin}\": allow_tools closes a \
             circle of plugins calling each other ({chain}); remove \"{granted}\" from \
             allow_tools, or the grant of another plugin in the circle"
        )
    };
    assert_eq!(
        engine.load_errors(),
        [
            circle("a", "a.go -> b.go -> c.go -> a.go", "b.go"),
            circle("b", "b.go -> c.go -> a.go -> b.go", "c.go"),
            circle("c", "c.go -> a.go -> b.go -> c.go", "a.go"),
        ]
    );
    let ids: Vec<String> = engine
        .plugins()
        .into_iter()
        .map(|view| view.plugin.id.clone())
        .filter(|id| ["a", "b", "c", "d"].contains(&id.as_str()))
        .collect();
    assert_eq!(ids, ["d"]);
}

// issue 34, item 4: whatever got past the load-time checks, plugins' calls nest at most four
// deep below the agent's; the fifth is refused before it runs, naming the chain, and the
// calls above it answer as usual.
#[tokio::test]
async fn a_chain_of_plugins_calls_is_refused_at_depth_five_naming_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    // Each is installed after the plugin whose tool it may call (allow_tools names known tools).
    for (id, next) in [
        ("p6", None),
        ("p5", Some("p6.go")),
        ("p4", Some("p5.go")),
        ("p3", Some("p4.go")),
        ("p2", Some("p3.go")),
        ("p1", Some("p2.go")),
    ] {
        let calls: Vec<&str> = next.into_iter().collect();
        install(&engine, &caller(id, &calls)).unwrap();
    }
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    let ran = engine
        .invoke(Call {
            tool: "p1.go".into(),
            actor: Actor::Agent,
            input: json!({}),
            conversation: Some("c".into()),
        })
        .await
        .outcome;
    let Outcome::Ran { result, .. } = ran else {
        panic!("{ran:?}");
    };
    let refused = "tool \"p6.go\" would be the call nested 5 deep; plugins' calls nest at most 4 \
                   deep: p1.go -> p2.go -> p3.go -> p4.go -> p5.go -> p6.go";
    assert_eq!(
        result,
        json!({"got": {"got": {"got": {"got": {"refused": refused}}}}})
    );
    // The same call to p6 from a shallower chain runs: only the depth refused it.
    let p5 = engine
        .invoke(Call {
            tool: "p5.go".into(),
            actor: Actor::Agent,
            input: json!({}),
            conversation: Some("c".into()),
        })
        .await
        .outcome;
    let Outcome::Ran { result, .. } = p5 else {
        panic!("{p5:?}");
    };
    assert_eq!(result, json!({"got": {"leaf": true}}));
}
