//! Plugin documents from outside: installed by link (preview, install exactly what was
//! previewed, update with re-consent, remove) and their declarative HTTP tools, against
//! loopback servers standing in for the link's host and for the service.
//!
//! Links are `http://127.0.0.1` with `Options::development_links` (the app accepts https only);
//! a tool reaching the loopback service is in an official document, since the address guard
//! refuses loopback to community documents — which one test checks stays so.

mod common;

use std::sync::Arc;

use common::model_server::{ModelServer, Reply, data, done};
use common::{Denies, tap};
use harness_core::invoke::Outcome;
use harness_core::plugins::link::Update;
use harness_core::policy::{Mode, ModeSource};
use harness_core::registry::{Effect, PluginKind};
use harness_core::secrets::{MemorySecrets, SecretStore};
use harness_core::{Engine, Options};
use serde_json::json;

const OFFICIAL: &str = "https://plugins.pku-harness.cn/menu/PLUGIN.md";

fn engine_with(development_links: bool, secrets: Arc<MemorySecrets>) -> Engine {
    let mut options = Options::new(Arc::new(Denies::default()));
    options.development_links = development_links;
    options.secrets = secrets;
    Engine::in_memory(options).unwrap()
}

fn engine() -> Engine {
    engine_with(true, Arc::new(MemorySecrets::default()))
}

fn doc(version_extra: &str) -> String {
    format!(
        "---\nid: menu\ntitle: 菜单\ntools:\n  - name: today\n    title: 今日菜单\n    effect: read\n{version_extra}---\n# 菜单\nUse menu__today for today's menu.\n"
    )
}

fn served(text: &str) -> Reply {
    Reply::whole(200, "text/markdown", text)
}

fn link(server: &ModelServer) -> String {
    format!("http://{}/menu/PLUGIN.md", server.addr())
}

#[tokio::test]
async fn a_previewed_document_is_installed_exactly_as_previewed() {
    let text = doc("");
    let server = ModelServer::start(vec![served(&text), served(&text)]).await;
    let engine = engine();
    let preview = engine.preview_link(&link(&server)).await.unwrap();
    assert_eq!(preview.plugin, "menu");
    assert_eq!(preview.title, "菜单");
    assert_eq!(preview.kind, PluginKind::Community);
    assert_eq!(preview.tools.len(), 1);
    assert_eq!(preview.tools[0].id, "menu.today");
    assert_eq!(preview.tools[0].effect, Effect::Read);
    assert_eq!(preview.modes, [(Effect::Read, Mode::Auto)]);
    assert_eq!(
        preview.instructions.as_deref(),
        Some("# 菜单\nUse menu__today for today's menu.\n")
    );
    assert!(
        engine.tool("menu.today").is_none(),
        "a preview installs nothing"
    );

    let id = engine.install_preview(&preview.id).await.unwrap();
    assert_eq!(id, "menu");
    let installed = engine.tool("menu.today").unwrap();
    assert_eq!(installed.effect, Effect::Read);
    let plugin = engine
        .plugins()
        .into_iter()
        .find(|v| v.plugin.id == "menu")
        .unwrap();
    assert_eq!(plugin.plugin.kind, PluginKind::Community);
    assert_eq!(
        plugin.plugin.instructions.as_deref(),
        Some("# 菜单\nUse menu__today for today's menu.\n")
    );
}

#[tokio::test]
async fn a_document_that_changed_after_its_preview_is_refused() {
    let before = doc("");
    let after = doc("  - name: pay\n    effect: money\n");
    let server = ModelServer::start(vec![served(&before), served(&after)]).await;
    let engine = engine();
    let preview = engine.preview_link(&link(&server)).await.unwrap();
    let err = engine.install_preview(&preview.id).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "plugin link {}: the document changed since it was previewed; preview it again and \
             read what it asks for now",
            link(&server)
        )
    );
    assert!(engine.tool("menu.today").is_none());
    assert!(engine.tool("menu.pay").is_none());
}

#[tokio::test]
async fn a_plain_http_link_is_refused_unless_developing() {
    let server = ModelServer::always(served(&doc(""))).await;
    let engine = engine_with(false, Arc::new(MemorySecrets::default()));
    let err = engine.preview_link(&link(&server)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "plugin link {}: plugin documents are installed from https:// links only (or a file \
             you pick)",
            link(&server)
        )
    );
    assert!(server.requests().is_empty(), "nothing is fetched");
}

#[tokio::test]
async fn a_broken_document_is_a_load_error_naming_the_link_and_field_and_installs_nothing() {
    let broken = "---\nid: menu\ntools:\n  - name: today\n    effect: sometimes\n---\n";
    let server = ModelServer::always(served(broken)).await;
    let engine = engine();
    let err = engine.preview_link(&link(&server)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "plugin link {}: plugin \"menu\": tools[0].effect: unknown effect \"sometimes\"; use \
             read, write, money or public",
            link(&server)
        )
    );
    assert!(engine.plugins().iter().all(|v| v.plugin.id != "menu"));
}

#[tokio::test]
async fn an_update_that_asks_for_more_waits_for_consent_and_one_that_does_not_is_installed() {
    let v1 = doc("");
    let v2 = doc("    description: Today's menu, by canteen.\n");
    let v3 = doc("  - name: pay\n    effect: money\n");
    let server = ModelServer::start(vec![
        served(&v1),
        served(&v1),
        served(&v2),
        served(&v3),
        served(&v3),
    ])
    .await;
    let engine = engine();
    let preview = engine.preview_link(&link(&server)).await.unwrap();
    engine.install_preview(&preview.id).await.unwrap();

    match engine.update_document("menu").await.unwrap() {
        Update::Updated => {}
        other => panic!("a description change asks for nothing: {other:?}"),
    }
    assert_eq!(
        engine.tool("menu.today").unwrap().description,
        "Today's menu, by canteen."
    );

    let Update::NeedsConsent(preview) = engine.update_document("menu").await.unwrap() else {
        panic!("a money tool asks for more");
    };
    assert_eq!(preview.asks_more, ["a money tool: menu.pay"]);
    assert_eq!(preview.replaces.as_deref(), Some("menu"));
    assert!(
        engine.tool("menu.pay").is_none(),
        "the plugin stays on its old version until the user accepts"
    );
    engine.install_preview(&preview.id).await.unwrap();
    assert_eq!(engine.tool("menu.pay").unwrap().effect, Effect::Money);
}

#[tokio::test]
async fn an_update_that_drops_user_only_waits_and_the_old_version_stays() {
    let v1 = doc("    userOnly: true\n");
    let v2 = doc("");
    let server = ModelServer::start(vec![served(&v1), served(&v1), served(&v2), served(&v2)]).await;
    let engine = engine();
    let preview = engine.preview_link(&link(&server)).await.unwrap();
    engine.install_preview(&preview.id).await.unwrap();

    let Update::NeedsConsent(preview) = engine.update_document("menu").await.unwrap() else {
        panic!("dropping userOnly lets the AI call the tool: it must ask");
    };
    assert_eq!(
        preview.asks_more,
        ["tool menu.today is no longer for the user only: the AI may call it"]
    );
    assert!(
        engine.tool("menu.today").unwrap().user_only,
        "the old version stays until the user installs the update"
    );
    engine.install_preview(&preview.id).await.unwrap();
    assert!(!engine.tool("menu.today").unwrap().user_only);
}

#[tokio::test]
async fn removing_a_plugin_forgets_its_modes() {
    let engine = engine();
    engine.install_document(&doc(""), OFFICIAL).unwrap();
    engine.set_mode("menu", Effect::Read, Mode::Off).unwrap();
    engine.remove_plugin("menu").unwrap();
    engine.install_document(&doc(""), OFFICIAL).unwrap();
    let modes = engine.modes("menu").unwrap();
    let read = modes.iter().find(|(e, _, _)| *e == Effect::Read).unwrap();
    assert_eq!(read.2, ModeSource::KindDefault, "{modes:?}");
}

fn service_doc(host: &str, extra_grants: &str) -> String {
    format!(
        r#"---
id: menu
title: 菜单
grants:
  allow_network: true
  url_allowlist: ["{host}"{extra_grants}]
tools:
  - name: today
    effect: read
    input:
      type: object
      properties:
        canteen: {{type: string}}
        day: {{type: string}}
      required: [canteen]
      additionalProperties: false
    request:
      method: GET
      url: http://{host}/canteens/{{canteen}}/menu
      query: {{day: day}}
      headers:
        Authorization: "Bearer {{{{secret:token}}}}"
      returns: ["/dishes", "/closesAt"]
---
# 菜单
"#
    )
}

#[tokio::test]
async fn a_declared_tool_calls_the_service_with_its_secret_and_returns_the_projection() {
    let service = ModelServer::always(Reply::json(
        200,
        &json!({"dishes": ["宫保鸡丁"], "closesAt": "13:30", "internal": "x"}),
    ))
    .await;
    let secrets = Arc::new(MemorySecrets::default());
    secrets.set("plugins.menu.token", "s3cret-value").unwrap();
    let engine = engine_with(false, secrets);
    let host = service.addr().to_string();
    engine
        .install_document(&service_doc(&host, ""), OFFICIAL)
        .unwrap();
    let outcome = tap(
        &engine,
        "menu.today",
        json!({"canteen": "学一 食堂", "day": "mon"}),
    )
    .await;
    let Outcome::Ran { result, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        result,
        json!({"/dishes": ["宫保鸡丁"], "/closesAt": "13:30"})
    );
    let request = &service.requests()[0];
    assert_eq!(request.method, "GET");
    assert_eq!(
        request.path,
        "/canteens/%E5%AD%A6%E4%B8%80%20%E9%A3%9F%E5%A0%82/menu?day=mon"
    );
    assert_eq!(request.header("authorization"), Some("Bearer s3cret-value"));
    let audit = format!("{:?}", engine.audit_log().unwrap());
    assert!(!audit.contains("s3cret"), "the secret reached the audit");
}

fn orders_doc(host: &str) -> String {
    format!(
        r#"---
id: orders
title: 订单
grants:
  allow_network: true
  url_allowlist: ["{host}"]
tools:
  - name: cancel
    effect: read
    input:
      type: object
      properties:
        a: {{type: string}}
        b: {{type: string}}
      required: [a, b]
    request:
      method: GET
      url: http://{host}/api/v1/users/me/orders/{{a}}/{{b}}/cancel
      headers:
        Authorization: "Bearer {{{{secret:token}}}}"
      returns: text
---
"#
    )
}

#[tokio::test]
async fn a_dot_value_cannot_climb_out_of_its_url_segment() {
    let service = ModelServer::always(Reply::whole(200, "text/plain", "ok")).await;
    let secrets = Arc::new(MemorySecrets::default());
    secrets.set("plugins.orders.token", "s3cret-value").unwrap();
    let engine = engine_with(false, secrets);
    engine
        .install_document(&orders_doc(&service.addr().to_string()), OFFICIAL)
        .unwrap();
    for spelling in [
        ".",
        "..",
        "...",
        "%2e",
        "%2E",
        "%2e%2e",
        "%2E%2e",
        ".%2e",
        "%2e.",
        "%252e%252e",
        "",
    ] {
        let outcome = tap(
            &engine,
            "orders.cancel",
            json!({"a": spelling, "b": spelling}),
        )
        .await;
        assert_eq!(
            outcome,
            Outcome::Failed {
                message: format!(
                    "input field \"a\" is \"{spelling}\", which cannot stand as one segment of \
                     the request's URL path (a path value may not be empty or only dots)"
                )
            },
            "value {spelling:?}"
        );
    }
    assert_eq!(
        service
            .requests()
            .iter()
            .map(|r| r.path.clone())
            .collect::<Vec<_>>(),
        Vec::<String>::new(),
        "no dot value is sent"
    );
    let outcome = tap(&engine, "orders.cancel", json!({"a": "7.1", "b": ".x"})).await;
    assert!(matches!(outcome, Outcome::Ran { .. }), "{outcome:?}");
    assert_eq!(
        service.requests()[0].path,
        "/api/v1/users/me/orders/7.1/.x/cancel",
        "a dot inside a value stays"
    );
}

#[tokio::test]
async fn a_secret_the_service_echoes_back_is_redacted_from_the_result() {
    let service = ModelServer::always(Reply::echo()).await;
    let secrets = Arc::new(MemorySecrets::default());
    secrets.set("plugins.menu.token", "s3cret-value").unwrap();
    secrets.set("plugins.menu2.token", "s3cret-value").unwrap();
    let engine = engine_with(false, secrets);
    let host = service.addr().to_string();
    for (id, returns) in [("menu", "json"), ("menu2", "text")] {
        let text = service_doc(&host, "")
            .replace("id: menu", &format!("id: {id}"))
            .replace(
                r#"returns: ["/dishes", "/closesAt"]"#,
                &format!("returns: {returns}"),
            );
        engine.install_document(&text, OFFICIAL).unwrap();
    }
    let json_outcome = tap(&engine, "menu.today", json!({"canteen": "a"})).await;
    let Outcome::Ran { result, for_model } = &json_outcome else {
        panic!("{json_outcome:?}");
    };
    assert_eq!(
        result["headers"]["authorization"],
        json!("Bearer [redacted]"),
        "{result}"
    );
    assert_eq!(
        service.requests()[0].header("authorization"),
        Some("Bearer s3cret-value"),
        "the service itself got the secret"
    );
    let text_outcome = tap(&engine, "menu2.today", json!({"canteen": "a"})).await;
    for (what, shown) in [
        ("the UI's result", result.to_string()),
        ("the model's result", for_model.clone()),
        ("the text result", format!("{text_outcome:?}")),
        ("the audit", format!("{:?}", engine.audit_log().unwrap())),
    ] {
        assert!(
            !shown.contains("s3cret"),
            "the secret reached {what}: {shown}"
        );
    }
    assert!(
        format!("{text_outcome:?}").contains("Bearer [redacted]"),
        "{text_outcome:?}"
    );
}

#[tokio::test]
async fn an_echoed_secret_reaches_neither_the_model_nor_the_history() {
    let service = ModelServer::always(Reply::echo()).await;
    let call = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
        "id": "c1", "type": "function",
        "function": {"name": "menu__today", "arguments": "{\"canteen\":\"a\"}"}}]}}]});
    let stop = |reason: &str| {
        data(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}))
    };
    let model = ModelServer::start(vec![
        Reply::events([data(&call), stop("tool_calls"), done()]),
        Reply::events([
            data(&json!({"choices": [{"index": 0, "delta": {"content": "好"}}]})),
            stop("stop"),
            done(),
        ]),
    ])
    .await;
    let secrets = Arc::new(MemorySecrets::default());
    secrets.set("plugins.menu.token", "s3cret-value").unwrap();
    let engine = engine_with(false, secrets);
    engine.accept_terms().unwrap();
    let text = service_doc(&service.addr().to_string(), "")
        .replace(r#"returns: ["/dishes", "/closesAt"]"#, "returns: json");
    engine.install_document(&text, OFFICIAL).unwrap();
    model.configure(&engine, "key");
    engine.open_conversation("c").unwrap();
    engine.send_message("c", "今天吃什么").await.unwrap();

    let requests = model.requests();
    assert_eq!(
        requests.len(),
        2,
        "the tool's result went back to the model"
    );
    let sent = requests[1].body.to_string();
    assert!(sent.contains("Bearer [redacted]"), "{sent}");
    let history = format!("{:?}", engine.history("c", None, 100).unwrap());
    for (what, shown) in [("the model", sent), ("the history", history)] {
        assert!(
            !shown.contains("s3cret"),
            "the secret reached {what}: {shown}"
        );
    }
}

#[tokio::test]
async fn a_missing_secret_and_an_http_error_are_the_tools_errors() {
    let service = ModelServer::always(Reply::json(404, &json!({"error": "no"}))).await;
    let secrets = Arc::new(MemorySecrets::default());
    let engine = engine_with(false, secrets.clone());
    engine
        .install_document(&service_doc(&service.addr().to_string(), ""), OFFICIAL)
        .unwrap();
    let outcome = tap(&engine, "menu.today", json!({"canteen": "a"})).await;
    assert_eq!(
        outcome,
        Outcome::Failed {
            message: "the secret \"token\" of plugin \"menu\" is not set; set it on the plugin's \
                      page"
                .into()
        }
    );
    assert!(service.requests().is_empty());
    secrets.set("plugins.menu.token", "t").unwrap();
    let outcome = tap(&engine, "menu.today", json!({"canteen": "a"})).await;
    assert_eq!(
        outcome,
        Outcome::Failed {
            message: "HTTP 404".into()
        }
    );
}

#[tokio::test]
async fn a_community_document_may_not_reach_loopback() {
    let engine = engine();
    let err = engine
        .install_document(
            &service_doc("127.0.0.1:9", ""),
            "https://example.com/PLUGIN.md",
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin \"menu\": tools[0].request.url: the plugin's grants do not let this request out: \
         127.0.0.1 is a private or local address, which community and remote plugins may not \
         reach"
    );
    assert!(engine.tool("menu.today").is_none());
}

#[tokio::test]
async fn a_request_to_a_host_outside_the_allowlist_is_a_load_error() {
    let text = service_doc("api.example.com", "").replace(
        "url: http://api.example.com/",
        "url: https://evil.example.net/",
    );
    let err = engine().install_document(&text, OFFICIAL).unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin \"menu\": tools[0].request.url: the plugin's grants do not let this request out: \
         url_allowlist does not permit https://evil.example.net/canteens/x/menu (host \
         \"evil.example.net\" is not in url_allowlist) — add its host to url_allowlist in this \
         plugin's grants"
    );
}

#[test]
fn a_campus_request_goes_to_a_campus_service_with_the_session_alone() {
    let engine = engine_with(false, Arc::new(MemorySecrets::default()));
    let campus = |host: &str| {
        service_doc(host, "")
            .replace("title: 菜单\n", "title: 菜单\nrequires: [campus-session]\n")
            .replace("url: http://", "url: https://")
            .replace("      returns:", "      campus: true\n      returns:")
    };
    let refused = |text: &str| {
        engine
            .install_document(text, OFFICIAL)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(&campus("127.0.0.1")),
        "plugin \"menu\": tools[0].request.campus: 127.0.0.1 is not a campus service; a campus \
         request goes to one of portal.pku.edu.cn, bdcard.pku.edu.cn, treehole.pku.edu.cn, wproc.pku.edu.cn, course.pku.edu.cn"
    );
    // The core adds the session's own headers; a document's would go beside them.
    assert_eq!(
        refused(&campus("bdcard.pku.edu.cn")),
        "plugin \"menu\": tools[0].request.headers: a campus request carries the session's own \
         headers only; remove headers"
    );
    let bare = |text: String| {
        text.replace(
            "      headers:\n        Authorization: \"Bearer {{secret:token}}\"\n",
            "",
        )
    };
    let without = bare(campus("bdcard.pku.edu.cn")).replace("requires: [campus-session]\n", "");
    assert_eq!(
        refused(&without),
        "plugin \"menu\": tools[0].request.campus: a campus request needs the campus session; \
         add campus-session to requires"
    );
    engine
        .install_document(&bare(campus("bdcard.pku.edu.cn")), OFFICIAL)
        .unwrap();
}

#[tokio::test]
async fn removing_a_plugin_removes_its_jobs_and_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Options::new(Arc::new(Denies::default()))).unwrap();
    engine.install_document(&doc(""), OFFICIAL).unwrap();
    let job = engine
        .add_job(
            &common::check_every(30, "menu.today"),
            harness_core::scheduler::Owner::Plugin {
                plugin: "menu".into(),
                conversation: None,
            },
        )
        .unwrap();
    let mine = engine
        .add_job(
            &common::check_every(30, "menu.today"),
            harness_core::scheduler::Owner::User,
        )
        .unwrap();
    let store = dir.path().join("plugins").join("stores").join("menu");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("store.json"), "{}").unwrap();

    engine.remove_plugin("menu").unwrap();
    assert!(engine.job(job.id).is_none(), "the plugin's job is gone");
    assert!(engine.job(mine.id).is_some(), "the user's own job stays");
    assert!(!store.exists(), "the plugin's store is gone");
}

#[tokio::test]
async fn the_add_plugin_sheet_shows_a_documents_words_on_one_line_with_no_bidirectional_control() {
    // DESIGN.md §2: the words of a document from a link are third-party content; on the sheet
    // that asks to install it they cannot add a line or make it read backwards.
    let text = "---\nid: menu\ntitle: \"菜单\\u2028\\u202e开公会不\"\ntools:\n  - name: today\n    title: \"今日\\u2066菜单\\u2069\"\n    description: \"读\\u2029取\\u200b\"\n    effect: read\n---\n# 菜单\n";
    let server = ModelServer::start(vec![served(text)]).await;
    let screens =
        harness_core::screens::Screens::new(Arc::new(engine()), harness_core::screens::Live::new());
    let acted = screens
        .act(harness_core::screens::Action::PreviewLink {
            link: link(&server),
        })
        .await
        .unwrap();
    let harness_core::screens::Acted::Preview(sheet) = acted else {
        panic!("no preview: {acted:?}");
    };
    assert_eq!(sheet.plugin_title, "菜单 开公会不");
    assert_eq!(
        (
            sheet.tools[0].title.as_str(),
            sheet.tools[0].description.as_str()
        ),
        ("今日菜单", "读 取")
    );
}

// Plugins calling plugins are bounded (seed 001's allow_tools): an update that would close a
// circle with an installed plugin — the caller may call menu's tool, and menu's new version
// asks to call the caller's — is refused naming the circle, and the old version stays.
#[tokio::test]
async fn an_update_that_closes_a_circle_of_plugins_calling_each_other_is_refused() {
    let v1 = doc("");
    let v2 = "---\nid: menu\ntitle: 菜单\ngrants:\n  allow_tools: [caller.go]\ntools:\n  - name: today\n    title: 今日菜单\n    effect: read\n---\n# 菜单\n";
    let server = ModelServer::start(vec![served(&v1), served(&v1), served(v2)]).await;
    let engine = engine();
    let preview = engine.preview_link(&link(&server)).await.unwrap();
    engine.install_preview(&preview.id).await.unwrap();
    let caller = harness_core::registry::Plugin::load(
        harness_core::registry::parse_manifest(&json!({"id": "caller",
            "grants": {"allow_tools": ["menu.today"]},
            "tools": [{"name": "go", "effect": "read"}]}))
        .unwrap(),
        PluginKind::Bundled,
    )
    .unwrap();
    engine
        .install(caller, "bundled", Arc::new(common::Counter::default()))
        .unwrap();

    let err = engine.update_document("menu").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin \"menu\": grants.allow_tools: plugin \"menu\": allow_tools closes a circle of \
         plugins calling each other (menu.today -> caller.go -> menu.today); remove \
         \"caller.go\" from allow_tools, or the grant of another plugin in the circle"
    );
    let menu = engine
        .plugins()
        .into_iter()
        .find(|v| v.plugin.id == "menu")
        .unwrap();
    assert!(menu.plugin.grants.allow_tools.is_empty());
}
