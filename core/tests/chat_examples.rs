//! The empty chat says what the app can do (issue 42, item 5): up to four of the example
//! requests the enabled plugins whose requirements are met declare, each a tap that sends it.

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use common::model_server::{ModelServer, text};
use harness_core::events::NoEvents;
use harness_core::invoke::{ApprovalBroker, PluginHandler, Prompt, ToolContext};
use harness_core::policy::Answer;
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::screens::{Action, Live, Screens};
use harness_core::settings::{Change, Language, parse_change};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _: Prompt) -> Answer {
        Answer::Deny
    }
}

struct Nothing;

#[async_trait]
impl PluginHandler for Nothing {
    async fn run(&self, _: &Tool, _: Value, _: ToolContext) -> Result<Value, String> {
        Ok(json!({}))
    }
}

fn plugin(manifest: Value) -> Plugin {
    Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Community).unwrap()
}

fn screens(dir: &std::path::Path, shipped: bool) -> Screens {
    let live = Live::new();
    let mut options = Options::new(Arc::new(Deny));
    if shipped {
        options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    }
    options.events = live.sink(Arc::new(NoEvents));
    Screens::new(Arc::new(Engine::open(dir, options).unwrap()), live)
}

fn shown(s: &Screens, conversation: &str) -> (String, Vec<String>) {
    let chat = s.chat(conversation).unwrap();
    (
        chat.examples_label,
        chat.examples.into_iter().map(|b| b.label).collect(),
    )
}

#[tokio::test]
async fn an_empty_chat_offers_four_examples_of_the_usable_plugins_in_turn_each_a_tap_that_sends_it()
{
    let dir = tempfile::tempdir().unwrap();
    let s = screens(dir.path(), false);
    let e = s.engine().clone();
    let tool = json!([{"name": "look", "title": "看", "effect": "read"}]);
    for manifest in [
        json!({"id": "alpha", "title": "甲", "tools": tool,
               "examples": ["甲一", "甲二", "甲三"],
               "i18n": {"en": {"title": "Alpha", "examples": ["Alpha one", "Alpha two", "Alpha three"]}}}),
        // Its requirement is not met: the campus is not signed in.
        json!({"id": "beta", "title": "乙", "tools": tool, "requires": ["campus-session"],
               "examples": ["乙一"]}),
        json!({"id": "gamma", "title": "丙", "tools": tool, "examples": ["丙一", "丙二"]}),
        json!({"id": "delta", "title": "丁", "tools": tool, "examples": ["丁一"]}),
    ] {
        let id = manifest["id"].as_str().unwrap().to_owned();
        e.install(
            plugin(manifest),
            &format!("https://example.org/{id}/PLUGIN.md"),
            Arc::new(Nothing),
        )
        .unwrap();
    }
    // Turned off: not offered.
    e.change_setting(parse_change("plugins.delta.enabled", &json!(false)).unwrap())
        .unwrap();
    e.open_conversation("c").unwrap();
    assert_eq!(
        shown(&s, "c"),
        (
            "你可以这样问".into(),
            vec!["甲一".into(), "丙一".into(), "甲二".into(), "丙二".into()]
        )
    );
    e.change_setting(Change::Language(Language::En)).unwrap();
    assert_eq!(
        shown(&s, "c"),
        (
            "You can ask".into(),
            vec![
                "Alpha one".into(),
                "丙一".into(),
                "Alpha two".into(),
                "丙二".into()
            ]
        )
    );
    // A tap sends it as the student's words; the chat then has them and offers none.
    let server = ModelServer::start(vec![text("好的")]).await;
    e.accept_terms().unwrap();
    server.configure(&e, "sk-examples");
    let tap = s.chat("c").unwrap().examples[0].action.clone();
    assert_eq!(
        tap,
        Action::SendMessage {
            conversation: "c".into(),
            text: "Alpha one".into()
        }
    );
    s.act(tap).await.unwrap();
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    let messages = sent[0].body["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "user" && m["content"] == "Alpha one"),
        "{messages:?}"
    );
    assert_eq!(shown(&s, "c"), (String::new(), Vec::<String>::new()));
}

#[tokio::test]
async fn the_shipped_plugins_examples_show_when_their_requirements_are_met() {
    let dir = tempfile::tempdir().unwrap();
    let s = screens(dir.path(), true);
    s.engine().open_conversation("c").unwrap();
    // Not signed in to the campus: only the canteens, which need no sign-in, are offered.
    assert_eq!(shown(&s, "c").1, ["现在哪个食堂人少？", "哪些食堂还开着？"]);
}
