//! A remote server asking the student for something while its tool runs (MCP elicitation),
//! against the real reference server (`@modelcontextprotocol/server-everything`, which offers
//! its elicitation tools only to a client that declares elicitation): its form with defaults,
//! accepted, declined and cancelled; its page (URL mode), shown with its host and never offered
//! when it is not https; and a turn that had read untrusted content saying so.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::everything::Everything;
use harness_core::invoke::{ApprovalBroker, Call, Elicitation, ElicitationAnswer, Outcome, Prompt};
use harness_core::plugins::elicitation::{ElicitationKind, Input};
use harness_core::policy::{Actor, Answer};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// How the student answers a server's question.
#[derive(Clone, Copy)]
enum Reply {
    /// The form's defaults, with a name typed in.
    Fill,
    Decline,
    Cancel,
}

/// The student: allows what they are asked, answers each question as `reply`, and the
/// questions are kept.
struct Student {
    reply: Reply,
    asked: Mutex<Vec<Elicitation>>,
}

impl Student {
    fn new(reply: Reply) -> Arc<Self> {
        Arc::new(Self {
            reply,
            asked: Mutex::default(),
        })
    }

    fn asked(&self) -> Vec<Elicitation> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl ApprovalBroker for Student {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Allow
    }

    async fn elicit(&self, request: Elicitation) -> ElicitationAnswer {
        self.asked.lock().unwrap().push(request.clone());
        match (self.reply, &request.kind) {
            (Reply::Fill, ElicitationKind::Form { fields, .. }) => {
                let mut answer = Elicitation::defaults(fields);
                answer.insert("name".into(), json!("李雷"));
                ElicitationAnswer::Accept(answer)
            }
            (Reply::Fill, ElicitationKind::Page { .. }) => {
                ElicitationAnswer::Accept(Default::default())
            }
            (Reply::Decline, _) => ElicitationAnswer::Decline,
            (Reply::Cancel, _) => ElicitationAnswer::Cancel,
        }
    }
}

/// An engine whose student is `student`, with server-everything added as `mcp-everything`.
async fn engine(server: &Everything, student: Arc<Student>) -> Engine {
    let mut options = Options::new(student);
    options.development_servers = true;
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    engine
        .add_remote(&server.url(), "everything", None)
        .await
        .unwrap();
    engine
}

fn call(tool: &str, input: Value, actor: Actor, conversation: Option<&str>) -> Call {
    Call {
        tool: format!("mcp-everything.{tool}"),
        actor,
        input,
        conversation: conversation.map(str::to_owned),
    }
}

/// The student's tap on the reference server's form tool.
async fn form(engine: &Engine) -> Outcome {
    let tap = call("trigger-elicitation-request", json!({}), Actor::User, None);
    engine.invoke(tap).await.outcome
}

/// The text blocks of a call that ran.
fn text(outcome: Outcome) -> String {
    match outcome {
        Outcome::Ran { result, .. } => result["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("the call did not run: {other:?}"),
    }
}

#[tokio::test]
async fn the_servers_form_is_shown_with_its_defaults_and_the_filled_form_reaches_the_server() {
    let server = Everything::start();
    let student = Student::new(Reply::Fill);
    let engine = engine(&server, student.clone()).await;
    let outcome = form(&engine).await;
    let said = text(outcome);
    assert!(
        said.contains("✅ User provided the requested information!"),
        "{said}"
    );
    assert!(said.contains("- Name: 李雷"), "{said}");
    assert!(said.contains("- Favorite Integer: 42"), "{said}");

    let asked = student.asked();
    assert_eq!(asked.len(), 1);
    let form = &asked[0];
    assert_eq!(form.plugin, "mcp-everything");
    assert_eq!(
        form.message,
        "Please provide inputs for the following fields:"
    );
    assert!(!form.tainted);
    let ElicitationKind::Form { fields, .. } = &form.kind else {
        panic!("{form:?}");
    };
    let field = |name: &str| fields.iter().find(|f| f.name == name).unwrap();
    assert!(field("name").required);
    assert_eq!(field("name").input, Input::Text { format: None });
    assert_eq!(field("check").input, Input::Boolean);
    assert_eq!(
        field("email").input,
        Input::Text {
            format: Some("email".into())
        }
    );
    assert_eq!(field("integer").input, Input::Number { integer: true });
    assert_eq!(field("integer").default, Some(json!(42)));
    assert_eq!(
        field("firstLine").default,
        Some(json!("It was a dark and stormy night."))
    );
    let Input::Choice { options, multiple } = &field("titledSingleSelectEnum").input else {
        panic!("{:?}", field("titledSingleSelectEnum"));
    };
    assert!(!multiple);
    assert_eq!(options[0], ("hero-1".to_owned(), "Superman".to_owned()));
    let Input::Choice { options, multiple } = &field("untitledMultipleSelectEnum").input else {
        panic!("{:?}", field("untitledMultipleSelectEnum"));
    };
    assert!(*multiple);
    assert_eq!(options[0], ("Guitar".to_owned(), "Guitar".to_owned()));
    let Input::Choice { options, .. } = &field("legacyTitledEnum").input else {
        panic!("{:?}", field("legacyTitledEnum"));
    };
    assert_eq!(options[0], ("pet-1".to_owned(), "Cats".to_owned()));
    let Input::Choice { options, multiple } = &field("titledMultipleSelectEnum").input else {
        panic!("{:?}", field("titledMultipleSelectEnum"));
    };
    assert!(*multiple);
    assert_eq!(options[1], ("fish-2".to_owned(), "Salmon".to_owned()));
}

#[tokio::test]
async fn a_declined_or_cancelled_form_is_told_to_the_server_as_such() {
    let server = Everything::start();
    for (reply, words) in [
        (
            Reply::Decline,
            "❌ User declined to provide the requested information.",
        ),
        (Reply::Cancel, "⚠️ User cancelled the elicitation dialog."),
    ] {
        let student = Student::new(reply);
        let engine = engine(&server, student.clone()).await;
        let said = text(form(&engine).await);
        assert!(said.contains(words), "{said}");
        assert_eq!(student.asked().len(), 1);
        engine.shutdown().await;
    }
}

#[tokio::test]
async fn a_page_is_shown_with_its_host_and_a_page_that_is_not_https_is_never_offered() {
    let server = Everything::start();
    let student = Student::new(Reply::Fill);
    let engine = engine(&server, student.clone()).await;
    let input = json!({"url": "https://pay.example.com/confirm?order=7", "message": "Confirm"});
    let said = text(
        engine
            .invoke(call("trigger-url-elicitation", input, Actor::User, None))
            .await
            .outcome,
    );
    assert!(
        said.contains("✅ User completed the URL elicitation flow."),
        "{said}"
    );
    assert_eq!(
        student.asked()[0].kind,
        ElicitationKind::Page {
            url: "https://pay.example.com/confirm?order=7".into(),
            host: "pay.example.com".into()
        }
    );

    // A plain-http page off this machine: the server is told no, the student is not asked.
    let input = json!({"url": "http://pay.example.com/confirm", "message": "Confirm"});
    let outcome = engine
        .invoke(call("trigger-url-elicitation", input, Actor::User, None))
        .await
        .outcome;
    assert_eq!(student.asked().len(), 1, "{outcome:?}");
    let shown = format!("{outcome:?}");
    assert!(
        shown.contains("the app opens only https pages for a server"),
        "{shown}"
    );
}

#[tokio::test]
async fn a_form_in_a_turn_that_read_untrusted_content_says_so() {
    let server = Everything::start();
    let student = Student::new(Reply::Decline);
    let engine = engine(&server, student.clone()).await;
    engine.open_conversation("c").unwrap();
    // A remote result is untrusted: the agent's echo taints the turn.
    let echoed = engine
        .invoke(call(
            "echo",
            json!({"message": "hi"}),
            Actor::Agent,
            Some("c"),
        ))
        .await
        .outcome;
    assert!(matches!(echoed, Outcome::Ran { .. }), "{echoed:?}");
    let outcome = engine
        .invoke(call(
            "trigger-elicitation-request",
            json!({}),
            Actor::Agent,
            Some("c"),
        ))
        .await
        .outcome;
    assert!(matches!(outcome, Outcome::Ran { .. }), "{outcome:?}");
    let asked = student.asked();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].tainted);
    assert_eq!(asked[0].conversation.as_deref(), Some("c"));
}

#[tokio::test]
async fn a_question_inside_a_call_of_a_2026_server_is_asked_on_the_sheet_and_its_answer_sent_back()
{
    // MCP 2026-07-28, questions inside a call (MRTR, SEP-2322): the call's `input_required`
    // result is answered through the same question sheet, and the call made again with the
    // answer and the server's state.
    let mut book = common::mcp_server::tool("book", false);
    book["asks"] = json!("Whose name is the room booked under?");
    let server = common::mcp_server::McpServer::modern(vec![book]).await;
    let student = Student::new(Reply::Fill);
    let mut options = Options::new(student.clone());
    options.development_servers = true;
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    engine
        .add_remote(&server.url(), "rooms", None)
        .await
        .unwrap();
    let tap = Call {
        tool: "mcp-rooms.book".into(),
        actor: Actor::User,
        input: json!({}),
        conversation: None,
    };
    let said = text(engine.invoke(tap).await.outcome);
    assert_eq!(said, r#"book: accept {"name":"李雷"} (state-1)"#);
    let asked = student.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].message, "Whose name is the room booked under?");
    assert_eq!(server.count("tools/call"), 2);
}
