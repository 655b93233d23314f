//! TypeScript plugins (DESIGN.md §11) through the real invoke path: bundles built with the SDK
//! from `sdk/test-plugins/` and `plugins/`, their manifests checked at load, their services the
//! gates, and the runtime's bounds (deadline, memory, stack, isolation).

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::model_server::{ModelServer, calls, text};
use harness_core::consent::{Permission, PermissionState};
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::picked::{FilePick, PickedFile};
use harness_core::plugins::script::{self, Limits};
use harness_core::policy::{Actor, Answer};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const ECHO: &str = include_str!("../../sdk/test-plugins/echo/bundle.js");
const PROBE: &str = include_str!("../../sdk/test-plugins/probe/bundle.js");
const HOSTILE: &str = include_str!("../../sdk/test-plugins/hostile/bundle.js");
const BAD_SCHEMA: &str = include_str!("../../sdk/test-plugins/badschema/bundle.js");

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

/// Short enough that a test of the deadline waits well under a second.
fn quick() -> Limits {
    Limits {
        deadline: Duration::from_millis(300),
        ..Limits::default()
    }
}

fn engine(dir: &std::path::Path, hostile: Limits) -> Engine {
    let mut options = Options::new(Arc::new(Deny));
    options.builtin_plugins = false;
    let engine = Engine::open(dir, options).unwrap();
    for (source, limits) in [
        (ECHO, Limits::default()),
        (PROBE, Limits::default()),
        (HOSTILE, hostile),
    ] {
        let (plugin, handler) = script::load(source, limits).unwrap();
        engine.install(plugin, "bundled", handler).unwrap();
    }
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    engine
}

/// An engine in a data directory of its own, kept as long as the directory is.
fn fresh(hostile: Limits) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), hostile);
    (dir, engine)
}

async fn call(engine: &Engine, tool: &str, actor: Actor, input: Value) -> Outcome {
    let conversation = (actor == Actor::Agent).then(|| "c".to_owned());
    engine
        .invoke(Call {
            tool: tool.into(),
            actor,
            input,
            conversation,
        })
        .await
        .outcome
}

async fn ran(engine: &Engine, tool: &str, input: Value) -> Value {
    match call(engine, tool, Actor::Agent, input).await {
        Outcome::Ran { result, .. } => result,
        other => panic!("{tool}: {other:?}"),
    }
}

async fn failed(engine: &Engine, tool: &str, actor: Actor, input: Value) -> String {
    match call(engine, tool, actor, input).await {
        Outcome::Failed { message } => message,
        other => panic!("{tool}: {other:?}"),
    }
}

#[tokio::test]
async fn a_typescript_tool_answers_through_the_invoke_path() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        ran(&engine, "echo.say", json!({"text": "你好"})).await,
        json!({"text": "你好"})
    );
}

#[tokio::test]
async fn the_model_sees_the_json_schema_zod_made_with_each_describe() {
    let (_dir, engine) = fresh(quick());
    let tool = engine.installed().tool("echo.say").unwrap();
    assert_eq!(
        tool.input.source(),
        &json!({
            "type": "object",
            "properties": {"text": {"description": "The text to answer with", "type": "string", "maxLength": 1000}},
            "required": ["text"],
            // issue 44: the SDK's objects are strict, so a call meant for another tool is refused.
            "additionalProperties": false
        })
    );
    assert_eq!(tool.title_en.as_deref(), Some("Echo a text"));
    // The core validates against that schema before the script runs (seed 000, step 3).
    match call(&engine, "echo.say", Actor::Agent, json!({"text": 5})).await {
        Outcome::Refused { message, .. } => assert!(message.contains("text"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_thrown_error_is_the_tool_s_failure_with_its_message() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        failed(
            &engine,
            "probe.fail",
            Actor::Agent,
            json!({"message": "校园卡服务暂时不可用"})
        )
        .await,
        "校园卡服务暂时不可用"
    );
}

#[tokio::test]
async fn a_returned_status_object_is_a_result() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        ran(&engine, "probe.verify", json!({})).await,
        json!({"status": "verification_required", "methods": ["sms"], "message": "请输入短信验证码"})
    );
}

#[tokio::test]
async fn a_tool_is_told_its_actor_and_turn() {
    let (_dir, engine) = fresh(quick());
    let agent = ran(&engine, "probe.whoami", json!({})).await;
    assert_eq!(agent["actor"], "agent");
    assert_eq!(agent["turn"]["sessionId"], "c");
    assert_eq!(agent["grant"], Value::Null);
    for (actor, name) in [(Actor::User, "user"), (Actor::Scheduler, "scheduler")] {
        match call(&engine, "probe.whoami", actor, json!({})).await {
            Outcome::Ran { result, .. } => {
                assert_eq!(result, json!({"actor": name, "turn": null, "grant": null}))
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn a_tool_gets_its_input_with_zods_defaults_filled_in() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        ran(&engine, "probe.page", json!({"size": 5})).await,
        json!({"page": 1, "size": 5})
    );
}

struct At(i64);

impl harness_core::clock::Clock for At {
    fn now_ms(&self) -> i64 {
        self.0
    }
}

#[tokio::test]
async fn a_tool_is_told_the_cores_time_in_the_settings_time_zone() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Deny));
    options.builtin_plugins = false;
    // 2026-12-01 23:30 UTC: already Wednesday in Beijing.
    options.clock = Arc::new(At(1_796_167_800_000));
    let engine = Engine::open(dir.path(), options).unwrap();
    for source in [ECHO, PROBE] {
        let (plugin, handler) = script::load(source, Limits::default()).unwrap();
        engine.install(plugin, "bundled", handler).unwrap();
    }
    engine.accept_terms().unwrap();
    assert_eq!(
        ran(&engine, "probe.clock", json!({})).await,
        json!({"ms": 1_796_167_800_000_i64, "timeZone": "Asia/Shanghai", "offsetMinutes": 480,
               "local": "2026-12-02 07:30", "date": "2026-12-02", "weekday": 3})
    );
}

#[tokio::test]
async fn the_store_keeps_json_values_through_the_store_gate() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        ran(&engine, "probe.recall", json!({"key": "memo"})).await,
        json!({"value": null})
    );
    ran(
        &engine,
        "probe.remember",
        json!({"key": "memo", "value": {"room": "理教 107", "at": "2026-12-02 08:00"}}),
    )
    .await;
    assert_eq!(
        ran(&engine, "probe.recall", json!({"key": "memo"})).await,
        json!({"value": {"room": "理教 107", "at": "2026-12-02 08:00"}})
    );
    // seed 001's bound is the gate's, and its refusal is the script's Error.
    let long = "k".repeat(129);
    let refused = failed(
        &engine,
        "probe.remember",
        Actor::Agent,
        json!({"key": long, "value": 1}),
    )
    .await;
    assert!(refused.contains("128"), "{refused}");
}

#[tokio::test]
async fn http_get_goes_through_the_network_gate_and_its_allowlist() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0u8; 2048];
        let _ = stream.read(&mut buf).unwrap();
        stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 14\r\nconnection: close\r\n\r\n{\"open\": true}")
            .unwrap();
    });
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        ran(
            &engine,
            "probe.fetch",
            json!({"url": format!("http://127.0.0.1:{port}/menu")})
        )
        .await,
        json!({"body": "{\"open\": true}"})
    );
    server.join().unwrap();
    let refused = failed(
        &engine,
        "probe.fetch",
        Actor::Agent,
        json!({"url": "http://example.com/"}),
    )
    .await;
    assert!(refused.contains("example.com"), "{refused}");
}

#[tokio::test]
async fn context_notify_and_messages_reach_the_host_s_gates() {
    let (_dir, engine) = fresh(quick());
    ran(
        &engine,
        "probe.setContext",
        json!({"text": "今天有课：高数"}),
    )
    .await;
    assert!(
        engine.render_context().contains("今天有课：高数"),
        "{}",
        engine.render_context()
    );
    ran(&engine, "probe.say", json!({"text": "已记下"})).await;
    let lines: Vec<String> = engine
        .drain_host_lines()
        .into_iter()
        .map(|l| l.text)
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("已记下") && l.contains("probe")),
        "{lines:?}"
    );
    // console.log is the host log, prefixed with the plugin's id by the host (seed 001).
    assert!(
        lines.iter().any(|l| l == "[probe] saying 已记下"),
        "{lines:?}"
    );
    assert_eq!(
        ran(&engine, "probe.send", json!({"text": "提醒我交作业"})).await,
        json!({"sent": true})
    );
}

#[tokio::test]
async fn tools_call_reaches_another_bundled_tool_through_the_invoke_path() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        ran(
            &engine,
            "probe.callTool",
            json!({"tool": "echo.say", "args": {"text": "嗨"}})
        )
        .await,
        json!({"got": {"text": "嗨"}})
    );
    let refused = failed(
        &engine,
        "probe.callTool",
        Actor::Agent,
        json!({"tool": "hostile.echo", "args": {"text": "x"}}),
    )
    .await;
    assert!(refused.contains("allow_tools"), "{refused}");
}

#[tokio::test]
async fn cloud_without_consent_is_a_cloud_error_consent_required() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        ran(&engine, "probe.cloud", json!({})).await,
        json!({"status": "cloud_refused", "code": "consent_required"})
    );
}

#[tokio::test]
async fn files_pick_and_notify_fix_are_refused_for_the_agent_s_call() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        failed(&engine, "probe.pick", Actor::Agent, json!({})).await,
        "files.pick needs the user's tap on a screen; a tool the agent calls cannot use it"
    );
    assert_eq!(
        failed(&engine, "probe.fix", Actor::Scheduler, json!({})).await,
        "notify.fix needs the user's tap on a screen; a tool the scheduler calls cannot use it"
    );
}

#[tokio::test]
async fn with_the_plugin_s_cloud_consent_a_cloud_call_is_a_cloud_error_unavailable() {
    let (_dir, engine) = fresh(quick());
    engine.set_cloud_consent("probe", true).unwrap();
    assert_eq!(
        ran(&engine, "probe.cloud", json!({})).await,
        json!({"status": "cloud_refused", "code": "unavailable"})
    );
}

/// The phone's side of a tap: the file the student picks and the permission dialog's answer,
/// with what it was asked.
struct Phone {
    file: Option<PickedFile>,
    answer: PermissionState,
    asked: Mutex<Vec<String>>,
    /// How long the student takes in the picker.
    takes: Duration,
}

#[async_trait]
impl ApprovalBroker for Phone {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }

    async fn pick_file(&self, request: FilePick) -> Option<PickedFile> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("pick for {}", request.plugin_title));
        tokio::time::sleep(self.takes).await;
        self.file.clone()
    }

    async fn request_permission(&self, permission: Permission) -> PermissionState {
        self.asked
            .lock()
            .unwrap()
            .push(format!("permission {}", permission.requirement()));
        self.answer
    }
}

fn tapped_on(dir: &std::path::Path, phone: Arc<Phone>) -> Engine {
    tapped_on_within(dir, phone, Limits::default())
}

fn tapped_on_within(dir: &std::path::Path, phone: Arc<Phone>, limits: Limits) -> Engine {
    let mut options = Options::new(phone);
    options.builtin_plugins = false;
    let engine = Engine::open(dir, options).unwrap();
    // The probe may call echo's tool (allow_tools), so echo is there first.
    for source in [ECHO, PROBE] {
        let (plugin, handler) = script::load(source, limits).unwrap();
        engine.install(plugin, "bundled", handler).unwrap();
    }
    engine.accept_terms().unwrap();
    engine
}

async fn tap(engine: &Engine, tool: &str) -> Outcome {
    call(engine, tool, Actor::User, json!({})).await
}

#[tokio::test]
async fn a_tapped_tool_picks_a_file_and_reads_its_text_by_the_documents_rule() {
    let dir = tempfile::tempdir().unwrap();
    let phone = Arc::new(Phone {
        file: Some(PickedFile {
            name: "课表.md".into(),
            bytes: "周一 高等数学".as_bytes().to_vec(),
        }),
        answer: PermissionState::Unknown,
        asked: Mutex::default(),
        takes: Duration::ZERO,
    });
    let engine = tapped_on(dir.path(), phone.clone());
    match tap(&engine, "probe.pick").await {
        Outcome::Ran { result, .. } => {
            assert_eq!(result, json!({"name": "课表.md", "text": "周一 高等数学"}))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(*phone.asked.lock().unwrap(), ["pick for 探针"]);
}

#[tokio::test]
async fn a_picked_file_the_documents_rule_refuses_fails_the_call_naming_it_and_none_picked_is_null()
{
    let dir = tempfile::tempdir().unwrap();
    let phone = Arc::new(Phone {
        file: Some(PickedFile {
            name: "photo.png".into(),
            bytes: vec![0x89, b'P', b'N', b'G'],
        }),
        answer: PermissionState::Unknown,
        asked: Mutex::default(),
        takes: Duration::ZERO,
    });
    let engine = tapped_on(dir.path(), phone);
    match tap(&engine, "probe.pick").await {
        Outcome::Failed { message } => assert_eq!(
            message,
            "文件“photo.png”不能添加：只能添加纯文本（.txt）、Markdown（.md）和 PDF（.pdf）文件"
        ),
        other => panic!("{other:?}"),
    }
    let dir = tempfile::tempdir().unwrap();
    let nothing = Arc::new(Phone {
        file: None,
        answer: PermissionState::Unknown,
        asked: Mutex::default(),
        takes: Duration::ZERO,
    });
    let engine = tapped_on(dir.path(), nothing);
    match tap(&engine, "probe.pick").await {
        Outcome::Ran { result, .. } => assert_eq!(result, Value::Null),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_call_s_deadline_stands_still_while_the_student_is_in_the_picker() {
    let dir = tempfile::tempdir().unwrap();
    let phone = Arc::new(Phone {
        file: Some(PickedFile {
            name: "a.txt".into(),
            bytes: b"slow".to_vec(),
        }),
        answer: PermissionState::Unknown,
        asked: Mutex::default(),
        // Longer than the whole call may take.
        takes: Duration::from_millis(900),
    });
    let engine = tapped_on_within(dir.path(), phone, quick());
    match tap(&engine, "probe.pick").await {
        Outcome::Ran { result, .. } => assert_eq!(result, json!({"name": "a.txt", "text": "slow"})),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_tapped_tool_shows_the_permission_dialog_and_its_answer_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let phone = Arc::new(Phone {
        file: None,
        answer: PermissionState::Granted,
        asked: Mutex::default(),
        takes: Duration::ZERO,
    });
    let engine = tapped_on(dir.path(), phone.clone());
    assert_eq!(
        engine.consent().permission(Permission::Notifications),
        PermissionState::Unknown
    );
    match tap(&engine, "probe.fix").await {
        Outcome::Ran { result, .. } => assert_eq!(result, json!({"state": "granted"})),
        other => panic!("{other:?}"),
    }
    assert_eq!(*phone.asked.lock().unwrap(), ["permission notifications"]);
    assert_eq!(
        engine.consent().permission(Permission::Notifications),
        PermissionState::Granted
    );
}

/// Answers every prompt Allow, keeping what it was asked.
#[derive(Default)]
struct Recorded(Mutex<Vec<Prompt>>);

#[async_trait]
impl ApprovalBroker for Recorded {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.0.lock().unwrap().push(prompt);
        Answer::Allow
    }
}

fn asking_on(dir: &std::path::Path, broker: Arc<Recorded>) -> Engine {
    let mut options = Options::new(broker);
    options.builtin_plugins = false;
    let engine = Engine::open(dir, options).unwrap();
    for source in [ECHO, PROBE] {
        let (plugin, handler) = script::load(source, Limits::default()).unwrap();
        engine.install(plugin, "bundled", handler).unwrap();
    }
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    engine
}

#[tokio::test]
async fn a_target_resolve_effect_names_is_the_headline_and_the_call_asks_without_always_allow() {
    let dir = tempfile::tempdir().unwrap();
    let broker = Arc::new(Recorded::default());
    let engine = asking_on(dir.path(), broker.clone());
    // probe's writes are auto (a bundled plugin's default): only the target makes it ask.
    let pressed = ran(&engine, "probe.press", json!({"button": "付款"})).await;
    assert_eq!(pressed, json!({"pressed": "付款"}));
    let prompts = broker.0.lock().unwrap().clone();
    assert_eq!(prompts.len(), 1);
    // zod's default for `app` filled in before resolveEffect read it.
    assert_eq!(prompts[0].headline, "在支付宝中点按「付款」");
    assert_eq!(prompts[0].offers, [Answer::Allow, Answer::Deny]);
    // A call whose resolveEffect names nothing is decided by the modes: it runs unasked.
    assert_eq!(
        ran(&engine, "probe.press", json!({"button": ""})).await,
        json!({"pressed": ""})
    );
    assert_eq!(broker.0.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_resolve_effect_that_throws_or_loops_refuses_the_agent_s_call_and_the_plugin_runs_again()
{
    let dir = tempfile::tempdir().unwrap();
    let broker = Arc::new(Recorded::default());
    let engine = asking_on(dir.path(), broker.clone());
    for (button, why) in [
        ("throw", "no such button"),
        ("loop", "it took longer than 100 ms"),
    ] {
        match call(
            &engine,
            "probe.press",
            Actor::Agent,
            json!({"button": button}),
        )
        .await
        {
            Outcome::Refused { message, .. } => assert!(
                message.contains(&format!("探针 could not say what this call acts on: {why}")),
                "{message}"
            ),
            other => panic!("{button}: {other:?}"),
        }
    }
    assert!(broker.0.lock().unwrap().is_empty());
    // The student's own tap is never questioned (seed 000, step 7).
    match call(
        &engine,
        "probe.press",
        Actor::User,
        json!({"button": "throw"}),
    )
    .await
    {
        Outcome::Ran { result, .. } => assert_eq!(result, json!({"pressed": "throw"})),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        ran(&engine, "probe.press", json!({"button": "确定"})).await,
        json!({"pressed": "确定"})
    );
}

#[test]
fn only_a_bundled_plugin_may_declare_that_its_code_names_the_target() {
    let manifest = json!({
        "id": "doc", "title": "Doc",
        "tools": [{"name": "tap", "effect": "write", "resolvesEffect": true}]
    });
    let manifest = harness_core::registry::parse_manifest_text(&manifest.to_string()).unwrap();
    let err = harness_core::registry::Plugin::load(
        manifest,
        harness_core::registry::PluginKind::Community,
    )
    .unwrap_err();
    assert_eq!(err.field, "tools[0].resolvesEffect");
    let manifest = json!({
        "id": "doc", "title": "Doc",
        "tools": [{"name": "tap", "effect": "read", "describes": true}]
    });
    let manifest = harness_core::registry::parse_manifest_text(&manifest.to_string()).unwrap();
    let err = harness_core::registry::Plugin::load(
        manifest,
        harness_core::registry::PluginKind::Community,
    )
    .unwrap_err();
    assert_eq!(err.field, "tools[0].describes");
}

#[tokio::test]
async fn a_description_function_writes_what_the_model_reads_from_the_plugin_s_store() {
    let (_dir, engine) = fresh(quick());
    let described = |engine: &Engine| {
        engine
            .model_tools(Some("c"))
            .into_iter()
            .find(|t| t.name == "probe__favourite")
            .map(|t| t.description)
    };
    // With nothing stored: the text the manifest holds too.
    let none = "The student has no favourite canteen yet.";
    assert_eq!(described(&engine).as_deref(), Some(none));
    assert_eq!(
        engine
            .installed()
            .tool("probe.favourite")
            .unwrap()
            .description,
        none
    );
    ran(
        &engine,
        "probe.remember",
        json!({"key": "favourite", "value": "农园"}),
    )
    .await;
    assert_eq!(
        described(&engine).as_deref(),
        Some("The student's favourite canteen is 农园.")
    );
}

#[tokio::test]
async fn each_request_of_a_turn_carries_the_description_as_the_store_stands_then() {
    // With every shipped plugin installed the probe is a find away (agent::finding): the model
    // finds it first, and each request from then on carries its description as it stands.
    let server = ModelServer::start(vec![
        calls(&[("0", "find_tools", r#"{"plugins":["probe"]}"#)]),
        calls(&[(
            "1",
            "probe__remember",
            r#"{"key":"favourite","value":"燕南"}"#,
        )]),
        text("记住了"),
    ])
    .await;
    let (_dir, engine) = fresh(quick());
    server.configure(&engine, "sk-test-description");
    engine.send_message("c", "我最喜欢燕南食堂").await.unwrap();
    let described: Vec<String> = server
        .requests()
        .iter()
        .skip(1)
        .map(|request| {
            let tools = request.body["tools"].as_array().unwrap();
            let favourite = tools
                .iter()
                .find(|t| t["function"]["name"] == "probe__favourite")
                .unwrap();
            favourite["function"]["description"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        described,
        [
            "The student has no favourite canteen yet.",
            "The student's favourite canteen is 燕南."
        ]
    );
}

#[tokio::test]
async fn a_service_kept_past_its_call_is_refused() {
    let (_dir, engine) = fresh(quick());
    ran(&engine, "probe.keep", json!({})).await;
    let late = ran(&engine, "probe.useKept", json!({})).await;
    assert_eq!(late["refused"], true);
    assert_eq!(
        late["message"],
        "ctx.services.store.set: this tool call has ended; a service works only during its own call"
    );
    assert_eq!(
        ran(&engine, "probe.recall", json!({"key": "late"})).await,
        json!({"value": null})
    );
}

#[tokio::test]
async fn an_infinite_loop_is_ended_at_the_deadline_and_the_plugin_runs_again() {
    let (_dir, engine) = fresh(quick());
    let started = std::time::Instant::now();
    assert_eq!(
        failed(&engine, "hostile.spin", Actor::Agent, json!({})).await,
        "捣乱 took longer than 0.3 s and was stopped"
    );
    // Ended, not run forever: a bound no loaded machine misses.
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(
        ran(&engine, "hostile.echo", json!({"text": "again"})).await,
        json!({"text": "again"})
    );
}

#[tokio::test]
async fn a_promise_that_never_settles_is_ended_at_the_deadline() {
    let (_dir, engine) = fresh(quick());
    assert_eq!(
        failed(&engine, "hostile.hang", Actor::Agent, json!({})).await,
        "捣乱 took longer than 0.3 s and was stopped"
    );
}

#[tokio::test]
async fn a_memory_bomb_is_refused_and_the_plugin_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        memory_bytes: 16 * 1024 * 1024,
        ..quick()
    };
    let engine = engine(
        dir.path(),
        Limits {
            deadline: Duration::from_secs(10),
            ..limits
        },
    );
    assert_eq!(
        failed(&engine, "hostile.hog", Actor::Agent, json!({})).await,
        "捣乱 needed more than the 16 MiB a plugin may use and was stopped"
    );
    assert_eq!(
        ran(&engine, "hostile.echo", json!({"text": "again"})).await,
        json!({"text": "again"})
    );
}

#[tokio::test]
async fn deep_recursion_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(
        dir.path(),
        Limits {
            deadline: Duration::from_secs(10),
            ..quick()
        },
    );
    let message = failed(&engine, "hostile.dive", Actor::Agent, json!({})).await;
    assert!(message.contains("stack"), "{message}");
    assert_eq!(
        ran(&engine, "hostile.echo", json!({"text": "again"})).await,
        json!({"text": "again"})
    );
}

#[tokio::test]
async fn the_one_timer_fires_during_its_call_and_a_cleared_one_does_not() {
    // The probe itself within the short deadline (the shared engine gives it the default).
    let dir = tempfile::tempdir().unwrap();
    let phone = Arc::new(Phone {
        file: None,
        answer: PermissionState::Unknown,
        asked: Mutex::default(),
        takes: Duration::ZERO,
    });
    let engine = tapped_on_within(dir.path(), phone, quick());
    let wait = |ms: u64, clear: bool| {
        call(
            &engine,
            "probe.wait",
            Actor::User,
            json!({"ms": ms, "clear": clear}),
        )
    };
    let ran = |outcome: Outcome| match outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("{other:?}"),
    };
    assert_eq!(ran(wait(30, false).await), json!({"fired": true}));
    assert_eq!(ran(wait(30, true).await), json!({"fired": false}));
    // A wait past the call's deadline ends the call there, as any other wait does.
    assert_eq!(
        wait(5000, false).await,
        Outcome::Failed {
            message: "探针 took longer than 0.3 s and was stopped".into()
        }
    );
}

#[tokio::test]
async fn at_most_sixteen_timers_wait_at_once_in_one_call() {
    let (_dir, engine) = fresh(quick());
    let code = "let n = 0; try { for (;;) { setTimeout(() => {}, 1); n++; } } catch (e) { n + ': ' + e.message }";
    assert_eq!(
        ran(&engine, "probe.evaluate", json!({"code": code})).await,
        json!({"value": "16: at most 16 timers wait at once in one tool call"})
    );
}

#[tokio::test]
async fn one_plugin_cannot_see_another_s_globals() {
    let (_dir, engine) = fresh(quick());
    ran(&engine, "hostile.plant", json!({"value": "窃取"})).await;
    assert_eq!(
        ran(&engine, "probe.peek", json!({})).await,
        json!({"planted": null})
    );
}

#[tokio::test]
async fn eval_of_attacker_text_reaches_nothing_the_plugin_could_not() {
    let (_dir, engine) = fresh(quick());
    let names = [
        "__pkuHost",
        "__pkuLog",
        "__pkuRead",
        "require",
        "process",
        "fetch",
        "XMLHttpRequest",
        "setInterval",
        "std",
        "os",
    ];
    let code = names
        .iter()
        .map(|n| format!("typeof {n}"))
        .collect::<Vec<_>>()
        .join(" + ',' + ");
    assert_eq!(
        ran(&engine, "probe.evaluate", json!({"code": code})).await,
        json!({"value": vec!["undefined"; names.len()].join(",")})
    );
    // The host's protocol object cannot be replaced to forge another call's answers.
    let replaced = ran(
        &engine,
        "probe.evaluate",
        json!({"code": "globalThis.__pku = 1; delete globalThis.__pku; typeof globalThis.__pku.settle"}),
    )
    .await;
    assert_eq!(replaced, json!({"value": "function"}));
}

#[test]
fn a_zod_schema_without_a_json_schema_is_a_load_error_naming_the_tool_s_input() {
    let err = script::load(BAD_SCHEMA, Limits::default()).err().unwrap();
    assert_eq!(err.field, "tools[1].input");
    assert_eq!(
        err.message,
        "the zod schema of tool \"when\" has no JSON Schema: Date cannot be represented in JSON Schema"
    );
}

/// A bundle written by hand, as a build that skipped the SDK's checks could make one.
fn bundle(manifest: Value) -> String {
    format!(
        "var __pkuBundle = {{ default: {{ manifest: {manifest}, execute: async () => null }} }};"
    )
}

#[test]
fn a_manifest_that_names_a_tool_twice_is_a_load_error_naming_it() {
    let source = bundle(json!({"id": "twice", "title": "两次", "tools": [
        {"name": "list", "effect": "read"}, {"name": "list", "effect": "read"}
    ]}));
    let err = script::load(&source, Limits::default()).err().unwrap();
    assert_eq!(
        err.to_string(),
        "plugin \"twice\": tools[1].name: duplicate tool id \"twice.list\""
    );
}

#[test]
fn a_bad_manifest_is_the_same_load_error_as_for_every_kind() {
    let source = bundle(json!({"id": "noeffect", "tools": [{"name": "list"}]}));
    let err = script::load(&source, Limits::default()).err().unwrap();
    assert_eq!(err.field, "tools[0].effect");
    let source = bundle(
        json!({"id": "src", "tools": [{"name": "pay", "effect": "money"}],
        "dataSources": {"x": {"title": "x", "tool": "pay", "ttlMs": 1000}}}),
    );
    let err = script::load(&source, Limits::default()).err().unwrap();
    assert_eq!(err.field, "dataSources.x.tool");
}

#[test]
fn a_bundle_that_loops_while_it_loads_is_ended_at_the_deadline() {
    let err = script::load("for (;;) {}", quick()).err().unwrap();
    assert_eq!(err.field, "bundle");
    assert!(err.message.contains("interrupted"), "{err}");
}

#[test]
fn a_bundle_without_a_plugin_is_a_load_error_saying_what_to_write() {
    let err = script::load("var x = 1;", Limits::default()).err().unwrap();
    assert_eq!(
        err.to_string(),
        "plugin \"?\": bundle: the bundle does not export a plugin: write `export default definePlugin({…})`"
    );
}

/// One worker: the echo call is a task on the very worker the loop runs on, so it answers only
/// because that worker handed its tasks on before running the script.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn another_call_runs_while_a_script_loops() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(engine(
        dir.path(),
        Limits {
            // Long enough that a loaded machine's echo still answers before it.
            deadline: Duration::from_secs(10),
            ..Limits::default()
        },
    ));
    let spinning = {
        let engine = engine.clone();
        tokio::spawn(async move { failed(&engine, "hostile.spin", Actor::Agent, json!({})).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Another plugin's call — the registry, the decision, the audit — answers meanwhile: no
    // lock of the core is held while the script runs.
    let echo = {
        let engine = engine.clone();
        tokio::spawn(async move { ran(&engine, "echo.say", json!({"text": "并行"})).await })
    };
    assert_eq!(echo.await.unwrap(), json!({"text": "并行"}));
    // The echo answered while the loop still ran: no clock, the loop's task tells.
    assert!(!spinning.is_finished());
    assert_eq!(
        spinning.await.unwrap(),
        "捣乱 took longer than 10 s and was stopped"
    );
}

#[tokio::test]
async fn a_declared_default_mode_and_target_apply_as_for_any_bundled_plugin() {
    let (_dir, engine) = fresh(quick());
    // probe declares defaultModes {public: 'ask'}; post's target is '发帖：{text}'.
    let done = engine
        .invoke(Call {
            tool: "probe.post".into(),
            actor: Actor::Agent,
            input: json!({"text": "明天停水"}),
            conversation: Some("c".into()),
        })
        .await;
    let prompt = done.prompt.expect("asked");
    assert_eq!(prompt.headline, "发帖：明天停水");
    assert!(
        matches!(done.outcome, Outcome::Refused { .. }),
        "{:?}",
        done.outcome
    );
    // Effects it does not mention stay auto (seed 000's bundled row).
    assert_eq!(
        ran(&engine, "probe.remember", json!({"key": "k", "value": 1})).await,
        json!({"stored": "k"})
    );
}

#[tokio::test]
async fn campus_request_is_the_core_s_campus_client_with_its_checks() {
    let (_dir, engine) = fresh(quick());
    // probe neither requires the campus session nor names a campus service in its scopes.
    assert_eq!(
        failed(
            &engine,
            "probe.campus",
            Actor::Agent,
            json!({"service": "card", "path": "/berserker-app/ykt/tsm/queryCard"})
        )
        .await,
        "plugin \"probe\" does not require the campus session; add \"campus-session\" to its requires"
    );
    let unknown = failed(
        &engine,
        "probe.campus",
        Actor::Agent,
        json!({"service": "bank", "path": "/"}),
    )
    .await;
    assert!(
        unknown.starts_with("services.campus.request: there is no campus service \"bank\""),
        "{unknown}"
    );
}

/// A phone whose picker stays open until the test closes it: it says when it opened, and
/// counts how often it was opened.
#[derive(Default)]
struct HeldPicker {
    opened: tokio::sync::Notify,
    close: tokio::sync::Notify,
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl ApprovalBroker for HeldPicker {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }

    async fn pick_file(&self, request: FilePick) -> Option<PickedFile> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("pick for {}", request.plugin_title));
        self.opened.notify_one();
        self.close.notified().await;
        Some(PickedFile {
            name: "课表.txt".into(),
            bytes: "周一 高等数学".as_bytes().to_vec(),
        })
    }
}

fn held_on(dir: &std::path::Path, phone: Arc<HeldPicker>) -> Engine {
    let mut options = Options::new(phone);
    options.builtin_plugins = false;
    let engine = Engine::open(dir, options).unwrap();
    for source in [ECHO, PROBE] {
        let (plugin, handler) = script::load(source, quick()).unwrap();
        engine.install(plugin, "bundled", handler).unwrap();
    }
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    engine
}

// Issue 34, item 3: a request is served only for the call whose code is running when it is
// made. A tap keeps its services in a global and waits in the picker; the agent's call, with
// those services, must not open the picker (seed 000: only the user chooses files) nor write
// as the tap.
#[tokio::test]
async fn services_another_running_call_kept_are_refused_in_the_call_that_uses_them() {
    let dir = tempfile::tempdir().unwrap();
    let phone = Arc::new(HeldPicker::default());
    let engine = held_on(dir.path(), phone.clone());
    let (tapped, used) = tokio::join!(
        call(&engine, "probe.pickKeeping", Actor::User, json!({})),
        async {
            phone.opened.notified().await;
            let used = call(
                &engine,
                "probe.useKeptWhileRunning",
                Actor::Agent,
                json!({}),
            )
            .await;
            phone.close.notify_one();
            used
        }
    );
    let another =
        "these services are another tool call's; a service works only during its own call";
    match used {
        Outcome::Ran { result, .. } => assert_eq!(
            result,
            json!({"refusals": [
                format!("ctx.services.files.pick: {another}"),
                format!("ctx.services.store.set: {another}"),
            ]})
        ),
        other => panic!("{other:?}"),
    }
    match tapped {
        Outcome::Ran { result, .. } => {
            assert_eq!(result, json!({"name": "课表.txt", "text": "周一 高等数学"}))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(*phone.asked.lock().unwrap(), ["pick for 探针"]);
    assert_eq!(
        ran(&engine, "probe.recall", json!({"key": "stolen"})).await,
        json!({"value": null})
    );
}

// Issue 34, item 3, the same class: a resolveEffect runs in no call's entry, so services a
// running tap kept reach nothing from it either (before, its request joined the tap's queue
// and was served as the student's).
#[tokio::test]
async fn services_a_running_call_kept_reach_nothing_from_a_resolve_effect() {
    let dir = tempfile::tempdir().unwrap();
    let phone = Arc::new(HeldPicker::default());
    let engine = held_on(dir.path(), phone.clone());
    let (tapped, pressed) = tokio::join!(
        call(&engine, "probe.pickKeeping", Actor::User, json!({})),
        async {
            phone.opened.notified().await;
            let pressed = engine
                .invoke(Call {
                    tool: "probe.pressKept".into(),
                    actor: Actor::Agent,
                    input: json!({}),
                    conversation: Some("c".into()),
                })
                .await;
            phone.close.notify_one();
            pressed
        }
    );
    assert_eq!(pressed.prompt.unwrap().headline, "用留下的服务点按");
    assert!(
        matches!(pressed.outcome, Outcome::Refused { .. }),
        "{:?}",
        pressed.outcome
    );
    assert!(matches!(tapped, Outcome::Ran { .. }), "{tapped:?}");
    assert_eq!(
        ran(&engine, "probe.recall", json!({"key": "fromResolve"})).await,
        json!({"value": null})
    );
}

// DESIGN.md §5: a plugin's answer is bounded like every other plugin input (1 MiB), refused,
// not cut — what a script answers is held by the host, the chat and the history.
#[tokio::test]
async fn a_tool_s_answer_past_1_mib_is_refused_not_cut() {
    let (_dir, engine) = fresh(quick());
    for code in [
        "return 'x'.repeat(1 << 20);",
        "throw new Error('x'.repeat(1 << 20));",
    ] {
        assert_eq!(
            failed(&engine, "probe.run", Actor::Agent, json!({"code": code})).await,
            "探针 answered more than 1 MiB, the most the app takes from a plugin; the answer was refused, not cut"
        );
    }
    let within = "return 'x'.repeat(1000);";
    assert_eq!(
        ran(&engine, "probe.run", json!({"code": within})).await,
        json!({"value": "x".repeat(1000)})
    );
}

// Issue 34, item 7: the runtime's memory limit does not bound what the host holds for the
// script, so the requests a call has in flight are bounded: 64 of them, 4 MiB of arguments.
// Past either, the service throws a RangeError; a settled request frees its place.
#[tokio::test]
async fn at_most_64_requests_and_4_mib_of_arguments_wait_at_once_in_one_call() {
    let (_dir, engine) = fresh(quick());
    let count = "const waiting = []; let refused;
        try { for (;;) waiting.push(ctx.services.store.get('k')); }
        catch (e) { refused = waiting.length + ': ' + e.name + ': ' + e.message; }
        await Promise.all(waiting);
        for (let i = 0; i < 64; i++) waiting.push(ctx.services.store.get('k'));
        await Promise.all(waiting);
        return refused;";
    assert_eq!(
        ran(&engine, "probe.run", json!({"code": count})).await,
        json!({"value": "64: RangeError: ctx.services.store.get: at most 64 requests wait at once in one tool call"})
    );
    let bytes = "const big = 'x'.repeat(3 << 20);
        const first = ctx.services.store.set('a', big).catch(() => 'settled');
        let refused;
        try { ctx.services.store.set('b', big); } catch (e) { refused = e.name + ': ' + e.message; }
        await first;
        const again = await ctx.services.store.set('c', big).catch(() => 'settled');
        return [refused, again];";
    assert_eq!(
        ran(&engine, "probe.run", json!({"code": bytes})).await,
        json!({"value": [
            "RangeError: ctx.services.store.set: at most 4 MiB of arguments wait at once in one tool call",
            "settled"
        ]})
    );
}

// Issue 34, item 7: each console.log line is cut at 4 KiB (on a character's boundary) and
// marked, so a script cannot make the host hold its memory's worth of log; a line logged as
// the call ends still reaches the host log.
#[tokio::test]
async fn a_log_line_past_4_kib_is_cut_and_marked() {
    let (_dir, engine) = fresh(quick());
    engine.drain_host_lines();
    let code = "console.log('x'.repeat(100000)); console.log('汉'.repeat(2000)); console.log('短'); return null;";
    ran(&engine, "probe.run", json!({"code": code})).await;
    let lines: Vec<String> = engine
        .drain_host_lines()
        .into_iter()
        .map(|l| l.text)
        .collect();
    let mark = " … [cut at 4 KiB]";
    // 4096 bytes at most, the mark's included; a Chinese character is 3 bytes.
    let ascii = 4096 - mark.len();
    let chinese = (4096 - mark.len()) / 3;
    assert_eq!(
        lines,
        [
            format!("[probe] {}{mark}", "x".repeat(ascii)),
            format!("[probe] {}{mark}", "汉".repeat(chinese)),
            "[probe] 短".to_owned(),
        ]
    );
}

// Issue 34, item 10: a description a plugin's code writes reaches every request to the model,
// so it is cut as a remote server's is (registry::MCP_DESCRIPTION_CAP characters, one line).
#[tokio::test]
async fn a_description_the_plugin_s_code_writes_is_cut_as_a_remote_server_s() {
    let (_dir, engine) = fresh(quick());
    ran(
        &engine,
        "probe.remember",
        json!({"key": "favourite", "value": format!("农园\n{}", "很".repeat(200_000))}),
    )
    .await;
    let described = engine
        .model_tools(Some("c"))
        .into_iter()
        .find(|t| t.name == "probe__favourite")
        .map(|t| t.description)
        .unwrap();
    let opening = "The student's favourite canteen is 农园 ";
    let cap = harness_core::registry::MCP_DESCRIPTION_CAP;
    assert_eq!(
        described,
        format!("{opening}{}", "很".repeat(cap - opening.chars().count()))
    );
}

// Issue 34, item 12 (sdk/README.md): an author's bundle may not take the id of one of the
// core's own plugins; it is refused by name, in the CLI and the development library alike.
#[test]
fn an_authored_bundle_with_a_core_plugin_s_id_is_refused_naming_it() {
    for id in ["settings", "memory", "files", "scheduler", "dashboard"] {
        let source = bundle(
            json!({"id": id, "title": "冒名", "tools": [{"name": "list", "effect": "read"}]}),
        );
        let refused = script::WithAuthored::load(vec![("mine/bundle.js".into(), source)])
            .err()
            .unwrap();
        assert_eq!(
            refused,
            format!(
                "mine/bundle.js: a plugin \"{id}\" is already there; give the bundle's plugin an id of its own"
            )
        );
    }
}

#[test]
fn the_core_s_own_plugins_are_the_ids_an_authored_bundle_may_not_take() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Options::new(Arc::new(Deny))).unwrap();
    let mut ids: Vec<String> = engine
        .plugins()
        .into_iter()
        .map(|view| view.plugin.id.clone())
        .collect();
    ids.sort_unstable();
    let mut core = harness_core::plugins::builtin::IDS.to_vec();
    core.sort_unstable();
    assert_eq!(ids, core);
}

#[tokio::test]
async fn a_target_resolve_effect_names_is_one_line_with_no_bidirectional_control() {
    // seed 000: resolveEffect names the target, the prompt's headline; a plugin's words cannot add
    // a line to the approval sheet or make it read
    // backwards; the target its resolveEffect names is put on one line with nothing invisible.
    let dir = tempfile::tempdir().unwrap();
    let broker = Arc::new(Recorded::default());
    let engine = asking_on(dir.path(), broker.clone());
    let button = "付款\u{2028}\u{202e}开公会不\u{2069}\u{200b}";
    ran(&engine, "probe.press", json!({"button": button})).await;
    let prompts = broker.0.lock().unwrap().clone();
    assert_eq!(prompts[0].headline, "在支付宝中点按「付款 开公会不」");
}
