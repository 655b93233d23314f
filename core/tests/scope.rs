//! A conversation's scope through the one invoke path (seed 003: "Approving an operation does
//! not expand the conversation's file, network, or application scope"; DESIGN.md §3 steps 6 and
//! 8b), with the data directory on disk and real HTTP services on 127.0.0.1. The plugins' grants
//! reach two services, `127.0.0.1` and `localhost`; the conversation's scope only the first.
//! What is refused is refused `out_of_scope` before anything is sent, whatever was approved, for
//! the agent and for a job the conversation made; a tap is never bounded by it.

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::model_server::{ModelServer, Reply};
use harness_core::invoke::ToolContext;
use harness_core::invoke::{ApprovalBroker, Call, Invocation, Outcome, PluginHandler, Prompt};
use harness_core::policy::{Actor, Answer, Code, Mode, Verdict};
use harness_core::registry::{Effect, Plugin, PluginKind, Tool, parse_manifest};
use harness_core::scheduler::{AgentJob, AgentReply, JobRunner, Owner, RunOutcome};
use harness_core::turn::Scope;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const OFFICIAL: &str = "https://plugins.pku-harness.cn/menu/PLUGIN.md";

/// Allows every prompt, keeping each one shown.
#[derive(Default)]
struct AllowsAll(Mutex<Vec<Prompt>>);

#[async_trait]
impl ApprovalBroker for AllowsAll {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.0.lock().unwrap().push(prompt);
        Answer::Allow
    }
}

/// A bundled plugin's own code, whose URLs and paths come from the input, so only the gates
/// can see where a call goes.
struct Fetch;

#[async_trait]
impl PluginHandler for Fetch {
    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let answer = match tool.name.as_str() {
            "read" => ctx
                .services
                .read_file(input["path"].as_str().unwrap_or_default()),
            _ => {
                ctx.services
                    .http_get(input["url"].as_str().unwrap_or_default())
                    .await
            }
        };
        match answer.strip_prefix("error: ") {
            Some(error) => Err(error.to_owned()),
            None => Ok(Value::String(answer)),
        }
    }
}

fn fetch() -> Plugin {
    let url =
        json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]});
    let manifest = json!({"id": "fetch", "title": "Fetch",
    "grants": {"allow_network": true, "url_allowlist": ["127.0.0.1", "localhost"], "allow_fs": true},
    "tools": [
        {"name": "get", "effect": "read", "input": url},
        {"name": "post", "effect": "write", "input": url},
        {"name": "read", "effect": "read",
         "input": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
    ]});
    Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Bundled).unwrap()
}

/// An official document (loopback is refused to community ones) declaring a request to each
/// service.
fn menu(near: &str, far: &str) -> String {
    format!(
        r#"---
id: menu
title: 菜单
grants:
  allow_network: true
  url_allowlist: ["127.0.0.1", "localhost"]
tools:
  - name: near
    effect: read
    request: {{method: GET, url: "http://{near}/menu", returns: text}}
  - name: far
    effect: read
    request: {{method: GET, url: "http://{far}/menu", returns: text}}
  - name: order
    effect: write
    request: {{method: POST, url: "http://{far}/order", returns: text}}
---
# 菜单
"#
    )
}

struct World {
    engine: Arc<Engine>,
    prompts: Arc<AllowsAll>,
    /// Reached as `127.0.0.1:port`: in the conversation's scope.
    near: ModelServer,
    /// Reached as `localhost:port`: in the plugins' allowlist, outside the scope.
    far: ModelServer,
    files: PathBuf,
    _dir: tempfile::TempDir,
}

impl World {
    fn near_url(&self) -> String {
        format!("http://{}/x", self.near.addr())
    }

    fn far_url(&self) -> String {
        format!("http://localhost:{}/x", self.far.addr().port())
    }

    async fn agent(&self, conversation: &str, tool: &str, input: Value) -> Invocation {
        self.engine
            .invoke(Call {
                tool: tool.into(),
                actor: Actor::Agent,
                input,
                conversation: Some(conversation.into()),
            })
            .await
    }
}

async fn world() -> World {
    let near = ModelServer::always(Reply::whole(200, "text/plain", "near")).await;
    let far = ModelServer::always(Reply::whole(200, "text/plain", "far")).await;
    let dir = tempfile::tempdir().unwrap();
    let prompts = Arc::new(AllowsAll::default());
    let mut options = Options::new(prompts.clone());
    options.builtin_plugins = false;
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    engine.install(fetch(), "bundled", Arc::new(Fetch)).unwrap();
    let far_host = format!("localhost:{}", far.addr().port());
    engine
        .install_document(&menu(&near.addr().to_string(), &far_host), OFFICIAL)
        .unwrap();
    let files = dir.path().join("plugins/fetch/files");
    std::fs::create_dir_all(files.join("notes")).unwrap();
    std::fs::create_dir_all(files.join("private")).unwrap();
    std::fs::write(files.join("notes/a.txt"), "notes").unwrap();
    std::fs::write(files.join("private/b.txt"), "private").unwrap();
    std::os::unix::fs::symlink("../private/b.txt", files.join("notes/link.txt")).unwrap();
    for id in ["c", "open"] {
        engine.open_conversation(id).unwrap();
        engine.begin_turn(id).unwrap();
    }
    engine
        .set_scope(
            "c",
            Scope {
                roots: vec![files.join("notes")],
                hosts: vec!["127.0.0.1".into()],
                apps: vec![],
            },
        )
        .unwrap();
    World {
        engine,
        prompts,
        near,
        far,
        files,
        _dir: dir,
    }
}

fn refused(invocation: &Invocation) -> (Code, &str) {
    match &invocation.outcome {
        Outcome::Refused { code, message } => (*code, message.as_str()),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

const WIDEN: &str = "Approving a call never widens the conversation's scope; the user widens it \
                     in the conversation's settings → Scope.";

#[tokio::test]
async fn a_documents_request_to_a_host_outside_the_scope_is_refused_at_the_decision_and_not_sent() {
    let w = world().await;

    let near = w.agent("c", "menu.near", json!({})).await;
    assert!(
        matches!(&near.outcome, Outcome::Ran { result, .. } if result == "near"),
        "{near:?}"
    );
    assert_eq!(w.near.requests().len(), 1);

    let far = w.agent("c", "menu.far", json!({})).await;
    assert_eq!(far.decision.verdict, Verdict::Refuse(Code::OutOfScope));
    let message = format!(
        "Host \"localhost\" is outside this conversation's network scope (127.0.0.1). {WIDEN}"
    );
    assert_eq!(refused(&far), (Code::OutOfScope, message.as_str()));
    assert_eq!(
        far.for_model(),
        json!({"error": {"code": "out_of_scope", "message": message}}).to_string()
    );
    assert!(w.far.requests().is_empty(), "the request was sent");

    // The same call in a conversation whose scope lists no host reaches the service: the
    // plugin's allowlist was never what refused it.
    let open = w.agent("open", "menu.far", json!({})).await;
    assert!(matches!(open.outcome, Outcome::Ran { .. }), "{open:?}");
    assert_eq!(w.far.requests().len(), 1);
}

#[tokio::test]
async fn a_plugins_own_request_to_a_host_outside_the_scope_is_refused_by_the_network_gate() {
    let w = world().await;

    let near = w
        .agent("c", "fetch.get", json!({"url": w.near_url()}))
        .await;
    assert!(
        matches!(&near.outcome, Outcome::Ran { result, .. } if result == "near"),
        "{near:?}"
    );

    let far = w.agent("c", "fetch.get", json!({"url": w.far_url()})).await;
    assert_eq!(
        refused(&far),
        (
            Code::OutOfScope,
            format!(
                "Host \"localhost\" is outside this conversation's network scope (127.0.0.1). \
                 {WIDEN}"
            )
            .as_str()
        )
    );
    assert!(w.far.requests().is_empty(), "the request was sent");
    let stopped: Vec<Option<String>> = w
        .engine
        .audit(100)
        .unwrap()
        .into_iter()
        .filter(|r| r.tool == "fetch.get" && r.event == "stopped")
        .map(|r| r.detail)
        .collect();
    assert_eq!(stopped, [Some("out_of_scope".to_owned())]);

    // A tap is never questioned (step 7): the scope bounds the agent, not the user.
    let tap = w
        .engine
        .invoke(Call {
            tool: "fetch.get".into(),
            actor: Actor::User,
            input: json!({"url": w.far_url()}),
            conversation: None,
        })
        .await;
    assert!(matches!(tap.outcome, Outcome::Ran { .. }), "{tap:?}");
    assert_eq!(w.far.requests().len(), 1);
}

#[tokio::test]
async fn approving_a_prompt_does_not_widen_the_scope() {
    let w = world().await;
    w.engine
        .set_mode("fetch", Effect::Write, Mode::Ask)
        .unwrap();
    w.engine.set_mode("menu", Effect::Write, Mode::Ask).unwrap();

    // The plugin's own code: asked, allowed, and still refused as it reaches out.
    let post = w
        .agent("c", "fetch.post", json!({"url": w.far_url()}))
        .await;
    assert!(matches!(post.decision.verdict, Verdict::Ask(_)));
    assert_eq!(post.answer, Some(Answer::Allow));
    assert_eq!(refused(&post).0, Code::OutOfScope);
    // A document's declared host is known at the decision: refused before any prompt.
    let order = w.agent("c", "menu.order", json!({})).await;
    assert_eq!(order.decision.verdict, Verdict::Refuse(Code::OutOfScope));
    assert_eq!(order.prompt, None);

    let asked: Vec<String> = w
        .prompts
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|p| p.tool.clone())
        .collect();
    assert_eq!(asked, ["fetch.post"]);
    assert!(w.far.requests().is_empty(), "the request was sent");
    // Nothing was widened by the answer: the next call is refused the same.
    let again = w.agent("c", "fetch.get", json!({"url": w.far_url()})).await;
    assert_eq!(refused(&again).0, Code::OutOfScope);
    assert!(w.far.requests().is_empty());
}

#[tokio::test]
async fn a_file_outside_the_conversations_folders_is_refused_out_of_scope() {
    let w = world().await;

    let inside = w
        .agent("c", "fetch.read", json!({"path": "notes/a.txt"}))
        .await;
    assert!(
        matches!(&inside.outcome, Outcome::Ran { result, .. } if result == "notes"),
        "{inside:?}"
    );
    let roots = w.files.join("notes").display().to_string();
    for path in ["private/b.txt", "notes/link.txt", "notes/../private/b.txt"] {
        let outside = w.agent("c", "fetch.read", json!({"path": path})).await;
        assert_eq!(
            refused(&outside),
            (
                Code::OutOfScope,
                format!(
                    "Path \"{path}\" is outside this conversation's folders ({roots}). {WIDEN}"
                )
                .as_str()
            ),
            "{path}"
        );
    }
    // Without folders in its scope, the conversation reads what the plugin's root holds.
    let open = w
        .agent("open", "fetch.read", json!({"path": "notes/link.txt"}))
        .await;
    assert!(
        matches!(&open.outcome, Outcome::Ran { result, .. } if result == "private"),
        "{open:?}"
    );
}

/// An agent job's loop, scripted: it makes one call and reports its outcome.
struct OneCall {
    url: String,
    outcome: Mutex<Option<Outcome>>,
}

#[async_trait]
impl JobRunner for OneCall {
    async fn run(&self, job: &AgentJob) -> Result<AgentReply, String> {
        let invocation = job.call("fetch.get", json!({"url": self.url})).await;
        *self.outcome.lock().unwrap() = Some(invocation.outcome);
        Ok(AgentReply {
            text: "done".into(),
            notification: None,
        })
    }
}

#[tokio::test]
async fn a_scheduled_run_of_a_job_the_conversation_made_is_bounded_by_its_scope() {
    let w = world().await;
    let check = |url: String| {
        json!({"name": "menu", "schedule": {"everyMinutes": 30},
               "check": {"tool": "fetch.get", "args": {"url": url},
                         "notify": {"title": "菜单", "body": "ok"}}})
    };
    let made_in_c = Owner::Plugin {
        plugin: "scheduler".into(),
        conversation: Some("c".into()),
    };
    let job = w
        .engine
        .add_job(&check(w.far_url()), made_in_c.clone())
        .unwrap();
    let reports = w.engine.run_due(job.next_due_ms.unwrap()).await.unwrap();
    assert_eq!(
        reports[0].outcome,
        RunOutcome::Refused {
            code: "out_of_scope".into(),
            message: format!(
                "Host \"localhost\" is outside this conversation's network scope (127.0.0.1). \
                 {WIDEN}"
            ),
        }
    );
    assert!(w.far.requests().is_empty(), "the request was sent");
    w.engine.remove_job(job.id).unwrap();

    // An agent job's calls are bounded the same.
    let runner = Arc::new(OneCall {
        url: w.far_url(),
        outcome: Mutex::default(),
    });
    w.engine.set_job_runner(runner.clone());
    let spec =
        json!({"name": "早报", "schedule": {"everyMinutes": 30}, "agent": {"prompt": "看看菜单"}});
    let job = w.engine.add_job(&spec, made_in_c).unwrap();
    w.engine.run_due(job.next_due_ms.unwrap()).await.unwrap();
    let outcome = runner.outcome.lock().unwrap().take().unwrap();
    assert!(
        matches!(
            outcome,
            Outcome::Refused {
                code: Code::OutOfScope,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert!(w.far.requests().is_empty(), "the request was sent");
    w.engine.remove_job(job.id).unwrap();

    // A job the user made is bounded by no conversation's scope.
    let job = w.engine.add_job(&check(w.far_url()), Owner::User).unwrap();
    let reports = w.engine.run_due(job.next_due_ms.unwrap()).await.unwrap();
    assert!(
        matches!(reports[0].outcome, RunOutcome::Notified { .. }),
        "{:?}",
        reports[0].outcome
    );
    assert_eq!(w.far.requests().len(), 1);
}

#[tokio::test]
async fn a_scope_entry_that_is_no_host_or_no_absolute_folder_is_refused_naming_it() {
    let w = world().await;
    let err = w
        .engine
        .set_scope(
            "open",
            Scope {
                roots: vec![],
                hosts: vec!["pku.edu.cn".into(), "api.*.com".into()],
                apps: vec![],
            },
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "scope.hosts[1]: \"api.*.com\" puts a star somewhere other than a leading \"*.\" or a \
         lone \"*\"; write example.com (the host and its subdomains), *.example.com (subdomains \
         only) or * (any host)"
    );
    let err = w
        .engine
        .set_scope(
            "open",
            Scope {
                roots: vec!["notes".into()],
                hosts: vec![],
                apps: vec![],
            },
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "scope.roots[0]: \"notes\" is not an absolute path; give the folder's full path"
    );
    // Nothing was changed: the conversation still reaches every host its plugins may.
    let open = w.agent("open", "menu.far", json!({})).await;
    assert!(matches!(open.outcome, Outcome::Ran { .. }), "{open:?}");
}

#[tokio::test]
async fn the_student_narrows_and_widens_the_scope_on_the_conversation_settings_screen_and_the_next_call_follows()
 {
    use harness_core::screens::{Action, Live, ScopeKind, Screens};

    let w = world().await;
    let s = Screens::new(w.engine.clone(), Live::new());
    let screen = s.conversation_settings("open").unwrap();
    assert!(screen.scope.is_empty());
    assert_eq!(
        screen.scope_note,
        "没有限定：每个插件只访问它获准的网站和文件夹。在这里添加网站或文件夹后，这个对话里的助手只能访问列出的那些。"
    );
    // The one plugin that may read files offers its own folder.
    let folders: Vec<&str> = screen
        .add_folders
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(folders, ["添加「Fetch」的文件夹"]);

    let site = |value: &str, on: bool| Action::SetScopeEntry {
        conversation: "open".into(),
        kind: ScopeKind::Host,
        value: value.into(),
        on,
    };
    // A site written so that it would match nothing is refused, naming the field, and nothing
    // is written.
    let bad = s.act(site("exa*mple.com", true)).await.unwrap_err();
    assert_eq!(
        bad.to_string(),
        "添加网站：「exa*mple.com」不是网站的写法；写 pku.edu.cn（含子域名）、*.pku.edu.cn（只含子域名）或 *（任何网站）"
    );
    assert_eq!(
        w.engine.existing_conversation("open").unwrap().scope,
        Scope::default()
    );

    s.act(site(" 127.0.0.1 ", true)).await.unwrap();
    s.act(screen.add_folders[0].action.clone()).await.unwrap();
    let screen = s.conversation_settings("open").unwrap();
    let rows: Vec<(String, String)> = screen
        .scope
        .iter()
        .map(|r| (r.kind.clone(), r.value.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            ("文件夹".into(), w.files.display().to_string()),
            ("网站".into(), "127.0.0.1".into()),
        ]
    );
    assert_eq!(
        screen.scope_note,
        "这个对话里的助手只能访问下面列出的网站和文件夹（仍在各插件获准的范围内）。"
    );
    assert!(
        screen.add_folders.is_empty(),
        "the folder is listed already"
    );

    // The next call follows the scope the screen set: the far service is out of it now.
    let far = w
        .agent("open", "fetch.get", json!({"url": w.far_url()}))
        .await;
    assert_eq!(refused(&far).0, Code::OutOfScope);
    assert!(w.far.requests().is_empty(), "the request was sent");
    let near = w
        .agent("open", "fetch.get", json!({"url": w.near_url()}))
        .await;
    assert!(matches!(near.outcome, Outcome::Ran { .. }), "{near:?}");

    // Removing the site from its row widens it again: sites are no longer narrowed.
    s.act(screen.scope[1].remove.clone()).await.unwrap();
    let screen = s.conversation_settings("open").unwrap();
    assert_eq!(
        screen.scope_note,
        "这个对话里的助手只能读取下面列出的文件夹（仍在各插件获准的范围内）；网站没有限定。"
    );
    let far = w
        .agent("open", "fetch.get", json!({"url": w.far_url()}))
        .await;
    assert!(matches!(far.outcome, Outcome::Ran { .. }), "{far:?}");
    assert_eq!(w.far.requests().len(), 1);
}
