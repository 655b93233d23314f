//! A remote server's two sheets across the FFI, from a `Platform` implemented here as a shell
//! would: signing in to a server that asks for it (`Platform::sign_in`: the sheet, then the
//! browser, whose return is handed back) against the loopback test server's own OAuth
//! authorization server, and a server's question while its tool runs
//! (`Platform::ask_elicitation`) against the real reference server.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use harness_ffi::*;

#[path = "../../core/tests/common/everything.rs"]
mod everything;
#[path = "../../core/tests/common/mcp_server.rs"]
mod mcp_server;
#[path = "../../core/tests/common/model_server.rs"]
mod model_server;

/// The phone: a keystore, the sign-in sheets it was shown, the browser, and the questions it
/// was asked, each answered by `reply`.
struct Phone {
    secrets: Mutex<HashMap<String, String>>,
    sign_ins: Mutex<Vec<(SignInSheet, String)>>,
    questions: Mutex<Vec<ElicitationSheet>>,
    reply: fn(&ElicitationSheet, usize) -> ElicitationReply,
    /// Where the browser comes back to from a sign-in page, or why it does not.
    browser: fn(&str) -> Result<String, String>,
}

impl Phone {
    fn new(reply: fn(&ElicitationSheet, usize) -> ElicitationReply) -> Arc<Self> {
        Self::with_browser(reply, follow)
    }

    fn with_browser(
        reply: fn(&ElicitationSheet, usize) -> ElicitationReply,
        browser: fn(&str) -> Result<String, String>,
    ) -> Arc<Self> {
        Arc::new(Self {
            secrets: Mutex::default(),
            sign_ins: Mutex::default(),
            questions: Mutex::default(),
            reply,
            browser,
        })
    }
}

/// The browser: opens `page` and answers where the authorization server sends it (its
/// `Location`), as a browser follows it back to the app's link. A plain HTTP/1.1 GET to the
/// loopback test server.
fn follow(page: &str) -> Result<String, String> {
    let url = url::Url::parse(page).map_err(|e| e.to_string())?;
    let address = format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port().unwrap_or(80)
    );
    let mut socket = std::net::TcpStream::connect(address).map_err(|e| e.to_string())?;
    let target = &page[url.origin().ascii_serialization().len()..];
    write!(
        socket,
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        url.host_str().unwrap_or_default()
    )
    .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    socket
        .read_to_string(&mut answer)
        .map_err(|e| e.to_string())?;
    answer
        .lines()
        .find_map(|line| line.strip_prefix("Location: "))
        .map(str::to_owned)
        .ok_or_else(|| format!("no redirect in {answer:?}"))
}

#[async_trait]
impl Platform for Phone {
    async fn ask_approval(&self, _: u64, _: ApprovalPrompt) -> Result<Answer, HarnessError> {
        Ok(Answer::Allow)
    }
    fn post_notification(&self, _: AppNotification) -> Result<(), HarnessError> {
        Ok(())
    }
    fn arm_wake_up(&self, _: i64, _: bool) -> Result<(), HarnessError> {
        Ok(())
    }
    fn cancel_wake_up(&self) -> Result<(), HarnessError> {
        Ok(())
    }
    fn open_screen(&self, _: String) -> Result<(), HarnessError> {
        Ok(())
    }
    fn read_secret(&self, key: String) -> Result<Option<String>, HarnessError> {
        Ok(self.secrets.lock().unwrap().get(&key).cloned())
    }
    fn write_secret(&self, key: String, value: Option<String>) -> Result<(), HarnessError> {
        let mut secrets = self.secrets.lock().unwrap();
        match value {
            Some(value) => secrets.insert(key, value),
            None => secrets.remove(&key),
        };
        Ok(())
    }
    fn permission_state(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Granted)
    }
    async fn sign_in(
        &self,
        sheet: SignInSheet,
        redirect_uri: String,
    ) -> Result<String, HarnessError> {
        self.sign_ins
            .lock()
            .unwrap()
            .push((sheet.clone(), redirect_uri));
        (self.browser)(&sheet.page).map_err(|reason| HarnessError::Platform { reason })
    }
    async fn ask_elicitation(
        &self,
        _: u64,
        sheet: ElicitationSheet,
    ) -> Result<ElicitationReply, HarnessError> {
        let mut questions = self.questions.lock().unwrap();
        questions.push(sheet.clone());
        Ok((self.reply)(&sheet, questions.len()))
    }

    async fn pick_file(&self, _: String) -> Result<Option<PickedDocument>, HarnessError> {
        Ok(None)
    }

    async fn request_permission(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Unknown)
    }
}

fn harness(phone: Arc<Phone>, name: &str) -> Arc<Harness> {
    let dir =
        std::env::temp_dir().join(format!("harness-ffi-remote-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let harness = Harness::open_for_development(
        dir.to_string_lossy().into_owned(),
        phone,
        DevelopmentOptions {
            sample_plugins: false,
            campus_origin: None,
            servers_on_this_machine: true,
            bundles: vec![],
        },
    )
    .unwrap();
    harness
        .set_consent(Consent {
            terms_accepted: true,
            met: vec![],
        })
        .unwrap();
    harness
}

fn declines(_: &ElicitationSheet, _: usize) -> ElicitationReply {
    ElicitationReply {
        action: ElicitationAction::Decline,
        values: vec![],
    }
}

#[test]
fn a_server_that_asks_for_a_sign_in_is_signed_in_to_through_the_phones_sheet_and_browser() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcp_server::McpServer::signing_in(
        vec![mcp_server::tool("echo", true)],
        mcp_server::OAuthConfig::default(),
    ));
    let url = server.url();
    let phone = Phone::new(declines);
    let harness = harness(phone.clone(), "sign-in");
    harness
        .change_setting("language".into(), "\"en\"".into())
        .unwrap();

    let id = runtime
        .block_on(harness.add_remote_server(url.clone(), "notes".into(), None))
        .unwrap();
    assert_eq!(id, "mcp-notes");

    let sign_ins = phone.sign_ins.lock().unwrap().clone();
    assert_eq!(sign_ins.len(), 1);
    let (sheet, redirect) = &sign_ins[0];
    assert_eq!(redirect, SIGN_IN_REDIRECT);
    assert_eq!(sheet.title, "Sign in to 127.0.0.1");
    assert_eq!(sheet.server_url, url);
    assert_eq!(sheet.authorization_server, "127.0.0.1");
    assert_eq!(sheet.scopes, vec!["tools:read".to_owned()]);
    assert_eq!(sheet.continue_label, "Continue");
    assert!(
        sheet
            .explanation
            .contains("the app never sees your password"),
        "{}",
        sheet.explanation
    );
    assert_eq!(
        server.registrations()[0]["redirect_uris"],
        serde_json::json!([SIGN_IN_REDIRECT])
    );

    // The plugin's call carries the sign-in's token, which only the phone's keystore holds.
    let ran = runtime
        .block_on(harness.invoke_as_user("mcp-notes.echo".into(), r#"{"message":"hi"}"#.into()))
        .unwrap();
    let Outcome::Ran { result_json, .. } = ran.outcome else {
        panic!("{:?}", ran.outcome);
    };
    assert!(result_json.contains("echo: hi"), "{result_json}");
    let access = server.access_tokens()[0].clone();
    let kept = phone
        .secrets
        .lock()
        .unwrap()
        .get("mcp.notes.oauth")
        .cloned();
    assert!(kept.unwrap().contains(&access));
}

#[test]
fn a_sign_in_the_student_cancels_adds_nothing() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcp_server::McpServer::signing_in(
        vec![mcp_server::tool("echo", true)],
        mcp_server::OAuthConfig::default(),
    ));
    // The student taps Cancel on the sign-in sheet.
    let phone = Phone::with_browser(declines, |_| Err("the student cancelled".into()));
    let harness = harness(phone.clone(), "cancel");
    let url = server.url();
    let refused = runtime
        .block_on(harness.add_remote_server(url.clone(), "notes".into(), None))
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!("invalid argument: the sign-in to {url} was not finished: the student cancelled")
    );
    assert!(phone.secrets.lock().unwrap().is_empty(), "nothing is kept");
    assert!(server.token_requests().is_empty());
}

/// The reference server's form, filled: first with a name that is not given (the core says
/// why on the sheet again), then with it.
fn fills(sheet: &ElicitationSheet, asked: usize) -> ElicitationReply {
    let mut values: Vec<FieldValue> = sheet
        .fields
        .iter()
        .map(|f| FieldValue {
            name: f.name.clone(),
            value: f.value.clone(),
        })
        .collect();
    if asked > 1 {
        values.retain(|v| v.name != "name");
        values.push(FieldValue {
            name: "name".into(),
            value: "李雷".into(),
        });
    }
    ElicitationReply {
        action: ElicitationAction::Accept,
        values,
    }
}

#[test]
fn a_servers_question_is_asked_on_the_phones_sheet_and_asked_again_while_the_answer_does_not_fit() {
    let server = everything::Everything::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let phone = Phone::new(fills);
    let harness = harness(phone.clone(), "question");
    harness
        .change_setting("language".into(), "\"en\"".into())
        .unwrap();
    runtime
        .block_on(harness.add_remote_server(server.url(), "everything".into(), None))
        .unwrap();
    let ran = runtime
        .block_on(harness.invoke_as_user(
            "mcp-everything.trigger-elicitation-request".into(),
            "{}".into(),
        ))
        .unwrap();
    let Outcome::Ran { result_json, .. } = ran.outcome else {
        panic!("{:?}", ran.outcome);
    };
    assert!(result_json.contains("- Name: 李雷"), "{result_json}");
    assert!(
        result_json.contains("- Favorite Integer: 42"),
        "{result_json}"
    );

    let questions = phone.questions.lock().unwrap().clone();
    assert_eq!(questions.len(), 2);
    let first = &questions[0];
    assert_eq!(first.title, "The server of everything asks you");
    assert_eq!(
        first.message,
        "Please provide inputs for the following fields:"
    );
    assert_eq!(first.words_from_server_label, "The server's words");
    assert_eq!(first.error, None);
    let field = |name: &str| first.fields.iter().find(|f| f.name == name).unwrap();
    assert_eq!(field("integer").kind, FieldKind::Integer);
    assert_eq!(field("integer").value, "42");
    assert_eq!(field("check").kind, FieldKind::Toggle);
    assert_eq!(field("untitledMultipleSelectEnum").kind, FieldKind::Choices);
    assert_eq!(field("untitledMultipleSelectEnum").value, "Guitar");
    assert_eq!(field("titledSingleSelectEnum").options[0].label, "Superman");
    assert!(field("name").required);
    let actions: Vec<_> = first
        .answers
        .iter()
        .map(|a| (a.action, a.label.as_str()))
        .collect();
    assert_eq!(
        actions,
        [
            (ElicitationAction::Accept, "Send"),
            (ElicitationAction::Decline, "Decline"),
            (ElicitationAction::Cancel, "Cancel"),
        ]
    );
    // The first answer left the required name empty: asked again, saying why.
    assert_eq!(
        questions[1].error.as_deref(),
        Some("The form cannot be sent yet: String is required")
    );
}
