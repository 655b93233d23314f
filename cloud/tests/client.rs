//! The core's cloud client end to end (issue 39, done-when): two data directories joined by a
//! recovery code share a TypeScript plugin's cloud values through `ctx.services.cloud`, on a
//! server over each backend; the database holds no plaintext value, key or plugin name; the
//! codes a plugin sees (consent_required, unavailable, conflict, quota_exceeded); the audit
//! records cloud calls without values.

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use common::{Server, databases};
use harness_cloud::server::Limits;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::plugins::script::{self, Limits as ScriptLimits};
use harness_core::policy::{Actor, Answer};
use harness_core::secrets::MemorySecrets;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// A plugin whose tools are its `ctx.services.cloud`, each answering what the cloud answered
/// or the CloudError's code.
const NOTES: &str = r#""use strict";var __pkuBundle=(()=>{
const n=globalThis.__pkuModules["@pku-harness/sdk"];const {z}=globalThis.__pkuModules.zod;
const run=(f)=>async(input,ctx)=>{try{return {ok:(await f(input,ctx))??null};}catch(e){
  if(e instanceof n.CloudError)return {code:e.code};return {error:String(e.message)};}};
const tool=(title,input,f)=>n.defineTool({title,description:title+'.',input,effect:'read',execute:run(f)});
return {default:n.definePlugin({id:"notes",title:"笔记",description:"Keeps notes in the cloud.",
 disclosure:["你的笔记（加密）"],
 tools:{
  save:tool("存",z.object({key:z.string(),text:z.any(),ifVersion:z.number().optional()}),
    ({key,text,ifVersion},ctx)=>ctx.services.cloud.set(key,text,ifVersion===undefined?undefined:{ifVersion})),
  read:tool("读",z.object({key:z.string()}),({key},ctx)=>ctx.services.cloud.get(key)),
  list:tool("列",z.object({}),(_i,ctx)=>ctx.services.cloud.list()),
  drop:tool("删",z.object({key:z.string()}),({key},ctx)=>ctx.services.cloud.delete(key)),
 }})};})();"#;

struct Allow;

#[async_trait]
impl ApprovalBroker for Allow {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Allow
    }
}

/// A phone: a data directory with its own keystore, the notes plugin installed.
fn phone(dir: &std::path::Path) -> Engine {
    let mut options = Options::new(Arc::new(Allow));
    options.builtin_plugins = false;
    options.secrets = Arc::new(MemorySecrets::default());
    let engine = Engine::open(dir, options).unwrap();
    let (plugin, handler) = script::load(NOTES, ScriptLimits::default()).unwrap();
    engine.install(plugin, "bundled", handler).unwrap();
    engine.accept_terms().unwrap();
    engine
}

async fn tap(engine: &Engine, tool: &str, input: Value) -> Value {
    let outcome = engine
        .invoke(Call {
            tool: format!("notes.{tool}"),
            actor: Actor::User,
            input,
            conversation: None,
        })
        .await;
    match outcome.outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("notes.{tool}: {other:?}"),
    }
}

/// Every byte the database holds, as text: SQLite's files, or PostgreSQL's tables.
async fn database_text(db: &str) -> String {
    if let Some(path) = db.strip_prefix("sqlite:") {
        let mut bytes = Vec::new();
        for suffix in ["", "-wal", "-shm"] {
            bytes.extend(std::fs::read(format!("{path}{suffix}")).unwrap_or_default());
        }
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let (client, connection) = tokio_postgres::connect(db, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut text = String::new();
    for table in [
        "accounts", "devices", "nonces", "pairings", "records", "requests",
    ] {
        for row in client
            .query(&format!("SELECT t::text FROM {table} t"), &[])
            .await
            .unwrap()
        {
            text.push_str(&row.get::<_, String>(0));
            text.push('\n');
        }
    }
    text
}

// Issue 39, done-when: two data directories joined by a recovery code share a plugin's cloud
// values through a server on each backend, and the database holds no plaintext.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_devices_joined_by_the_recovery_code_share_a_plugin_s_values_and_the_server_reads_none()
{
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, Limits::default()).await;
        let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (phone(a_dir.path()), phone(b_dir.path()));

        // seed 000: without the plugin's switch, consent_required; with it and no cloud set up,
        // unavailable.
        assert_eq!(
            tap(&a, "read", json!({ "key": "x" })).await,
            json!({ "code": "consent_required" })
        );
        a.set_cloud_consent("notes", true).unwrap();
        assert_eq!(
            tap(&a, "read", json!({ "key": "x" })).await,
            json!({ "code": "unavailable" })
        );

        let code = a.cloud_setup(&server.base).await.unwrap();
        assert_eq!(code.split('-').count(), 14);
        let saved = tap(
            &a,
            "save",
            json!({ "key": "宿舍-note", "text": { "words": "PLAINTEXT-紫荆公寓" } }),
        )
        .await;
        assert_eq!(saved, json!({ "ok": { "version": 1 } }));
        assert_eq!(
            tap(&a, "save", json!({ "key": "other-key", "text": "second" })).await,
            json!({ "ok": { "version": 1 } })
        );

        // The second phone joins by the code, and reads what the first wrote.
        b.cloud_join(&server.base, &code.to_lowercase().replace('-', " "))
            .await
            .unwrap();
        b.set_cloud_consent("notes", true).unwrap();
        let read = tap(&b, "read", json!({ "key": "宿舍-note" })).await;
        assert_eq!(
            read,
            json!({ "ok": { "value": { "words": "PLAINTEXT-紫荆公寓" }, "version": 1 } })
        );
        let listed = tap(&b, "list", json!({})).await;
        assert_eq!(
            listed,
            json!({ "ok": [{ "key": "other-key", "version": 1 }, { "key": "宿舍-note", "version": 1 }] })
        );
        // It writes; the first reads that. A write from the version it had is a conflict.
        assert_eq!(
            tap(
                &b,
                "save",
                json!({ "key": "宿舍-note", "text": "from b", "ifVersion": 1 })
            )
            .await,
            json!({ "ok": { "version": 2 } })
        );
        assert_eq!(
            tap(
                &a,
                "save",
                json!({ "key": "宿舍-note", "text": "stale", "ifVersion": 1 })
            )
            .await,
            json!({ "code": "conflict" })
        );
        assert_eq!(
            tap(&a, "read", json!({ "key": "宿舍-note" })).await,
            json!({ "ok": { "value": "from b", "version": 2 } })
        );
        assert_eq!(
            tap(&a, "drop", json!({ "key": "other-key" })).await,
            json!({ "ok": null })
        );
        assert_eq!(
            tap(&b, "read", json!({ "key": "other-key" })).await,
            json!({ "ok": null })
        );
        let status = b.cloud_status().await.unwrap().unwrap();
        assert_eq!(
            (status.devices, status.server.as_str()),
            (2, server.base.as_str())
        );

        // The server holds no plaintext: no value, no key name, no plugin id.
        let held = database_text(&db).await;
        for plain in [
            "PLAINTEXT",
            "紫荆公寓",
            "宿舍-note",
            "other-key",
            "from b",
            "second",
            "notes",
        ] {
            assert!(!held.contains(plain), "{db} holds {plain:?}");
        }
        // The audit records each cloud call without its value.
        let audit: Vec<String> = a
            .audit(100)
            .unwrap()
            .into_iter()
            .filter(|r| r.event == "cloud")
            .map(|r| format!("{} {}", r.tool, r.detail.unwrap_or_default()))
            .collect();
        assert_eq!(
            audit,
            [
                "notes.read cloud.get \"x\" → consent_required",
                "notes.read cloud.get \"x\" → unavailable",
                "notes.save cloud.set \"宿舍-note\" → version 1",
                "notes.save cloud.set \"other-key\" → version 1",
                "notes.save cloud.set \"宿舍-note\" → conflict",
                "notes.read cloud.get \"宿舍-note\" → version 2",
                "notes.drop cloud.delete \"other-key\" → version 2",
            ]
        );
        server.stop().await;
    }
}

// Issue 39: over the account's quota, a plugin's set is CloudError('quota_exceeded'); a value
// over 64 KiB is refused before it is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_over_the_quota_gets_quota_exceeded() {
    let dir = tempfile::tempdir().unwrap();
    let db = databases(dir.path()).remove(0);
    let server = Server::start(
        &db,
        Limits {
            per_second: 1000.0,
            burst: 1000.0,
        },
    )
    .await;
    let phone_dir = tempfile::tempdir().unwrap();
    let a = phone(phone_dir.path());
    a.set_cloud_consent("notes", true).unwrap();
    a.cloud_setup(&server.base).await.unwrap();
    let text = "x".repeat(60 * 1024);
    let mut i = 0;
    let refused = loop {
        let answer = tap(&a, "save", json!({ "key": format!("k{i}"), "text": text })).await;
        if answer.get("ok").is_none() {
            break answer;
        }
        i += 1;
    };
    assert_eq!(refused, json!({ "code": "quota_exceeded" }));
    // Each sealed value: the JSON of key and value, a 24-byte nonce and a 16-byte tag.
    let (mut used, mut fits) = (0, 0);
    loop {
        let sealed = json!({ "key": format!("k{fits}"), "value": text })
            .to_string()
            .len()
            + 40;
        if used + sealed > harness_cloud::storage::QUOTA_BYTES as usize {
            break;
        }
        used += sealed;
        fits += 1;
    }
    assert_eq!(i, fits);
    let too_large = tap(
        &a,
        "save",
        json!({ "key": "big", "text": "x".repeat(64 * 1024) }),
    )
    .await;
    assert_eq!(
        too_large["error"]
            .as_str()
            .map(|e| e.starts_with("a cloud value is at most 65496 bytes")),
        Some(true),
        "{too_large}"
    );
    server.stop().await;
}

// Issue 39: another device joins by scanning the QR the first shows: a one-time pairing token
// (ten minutes) and the account key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_joins_by_the_pairing_qr_once() {
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, Limits::default()).await;
        let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let phones: Vec<_> = dirs.iter().map(|d| phone(d.path())).collect();
        for p in &phones {
            p.set_cloud_consent("notes", true).unwrap();
        }
        phones[0].cloud_setup(&server.base).await.unwrap();
        let saved = tap(&phones[0], "save", json!({ "key": "k", "text": "shared" })).await;
        assert_eq!(saved, json!({ "ok": { "version": 1 } }));

        let qr = phones[0].cloud_pairing().await.unwrap();
        assert!(qr.starts_with("harness-cloud:pair?server="), "{qr}");
        phones[1].cloud_join_paired(&qr).await.unwrap();
        let read = tap(&phones[1], "read", json!({ "key": "k" })).await;
        assert_eq!(read, json!({ "ok": { "value": "shared", "version": 1 } }));
        // The token is used: the same QR joins nothing more.
        let again = phones[2].cloud_join_paired(&qr).await.unwrap_err();
        assert_eq!(
            again.to_string(),
            "the pairing code is used or expired: show a new one on the other device"
        );
        assert_eq!(
            tap(&phones[2], "read", json!({ "key": "k" })).await,
            json!({ "code": "unavailable" })
        );
        server.stop().await;
    }
}
