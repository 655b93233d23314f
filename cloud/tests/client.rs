//! The core's cloud client end to end (issue 39, done-when): two data directories joined by a
//! recovery code share a TypeScript plugin's cloud values through `ctx.services.cloud`, on a
//! server over each backend; the database holds no plaintext value, key or plugin name; the
//! codes a plugin sees (consent_required, unavailable, conflict, quota_exceeded); the audit
//! records cloud calls without values.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use common::{Server, databases, open_phone, phone_options};
use harness_cloud::server::Limits;
use harness_core::Engine;
use harness_core::clock::{Clock, SystemClock};
use harness_core::cloud::Cloud;
use harness_core::cloud::backup::{Backup, Restored};
use harness_core::invoke::{Call, Outcome};
use harness_core::plugins::script::{self, Limits as ScriptLimits};
use harness_core::policy::Actor;
use harness_core::scheduler::Owner;
use harness_core::secrets::MemorySecrets;
use harness_core::settings::parse_change;
use serde_json::{Value, json};

/// A plugin whose tools are its `ctx.services.cloud` (and its own store on the phone), each
/// answering what the cloud answered or the CloudError's code.
const NOTES: &str = r#""use strict";var __pkuBundle=(()=>{
const n=globalThis.__pkuModules["@pku-harness/sdk"];const {z}=globalThis.__pkuModules.zod;
const run=(f)=>async(input,ctx)=>{try{return {ok:(await f(input,ctx))??null};}catch(e){
  if(e instanceof n.CloudError)return {code:e.code};return {error:String(e.message)};}};
const tool=(title,input,f)=>n.defineTool({title,description:title+'.',input,effect:'read',execute:run(f)});
return {default:n.definePlugin({id:"notes",title:"笔记",description:"Keeps notes in the cloud.",
 cloud:{disclosures:["你的笔记（加密）"]},
 grants:{allow_store:true},
 tools:{
  keep:tool("记",z.object({key:z.string(),text:z.string()}),({key,text},ctx)=>ctx.services.store.set(key,text)),
  recall:tool("忆",z.object({key:z.string()}),({key},ctx)=>ctx.services.store.get(key)),
  save:tool("存",z.object({key:z.string(),text:z.any(),ifVersion:z.number().optional()}),
    ({key,text,ifVersion},ctx)=>ctx.services.cloud.set(key,text,ifVersion===undefined?undefined:{ifVersion})),
  read:tool("读",z.object({key:z.string()}),({key},ctx)=>ctx.services.cloud.get(key)),
  list:tool("列",z.object({}),(_i,ctx)=>ctx.services.cloud.list()),
  drop:tool("删",z.object({key:z.string()}),({key},ctx)=>ctx.services.cloud.delete(key)),
 }})};})();"#;

/// A phone: a data directory with its own keystore, the notes plugin installed.
fn phone(dir: &std::path::Path) -> Engine {
    phone_with(dir, Arc::default())
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
            (status.devices.len(), status.server.as_str()),
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
        // Not a URI, so no app claims it as a link: text no phone's camera opens.
        assert!(qr.starts_with("PKUHARNESS-PAIR-1 "), "{qr}");
        assert!(!qr.contains("://") && !qr.contains(&server.base), "{qr}");
        // Not a pairing code (the form before it, a link): the clear refusal, nothing joined.
        let old_form = format!("harness-cloud:pair?server={}&token=t&key=k", server.base);
        assert_eq!(
            phones[2]
                .cloud_join_paired(&old_form)
                .await
                .unwrap_err()
                .to_string(),
            "the scanned code is not a PKU harness Cloud pairing code"
        );
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

/// A phone whose keystore the test holds too, to reach its cloud as another client would.
fn phone_with(dir: &std::path::Path, secrets: Arc<MemorySecrets>) -> Engine {
    let engine = open_phone(dir, phone_options(secrets));
    let (plugin, handler) = script::load(NOTES, ScriptLimits::default()).unwrap();
    engine.install(plugin, "bundled", handler).unwrap();
    engine
}

fn set(engine: &Engine, key: &str, value: Value) {
    engine
        .change_setting(parse_change(key, &value).unwrap())
        .unwrap();
}

// Issue 39.5, done-when: backup and restore bring settings, rules, approved memories and jobs
// to a new data directory joined by the recovery code; a value looser than the one in effect
// waits for the student (DESIGN §3 8e); no secret travels; the database holds no plaintext.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_restored_on_a_device_joined_by_the_recovery_code_brings_the_app_back_without_secrets_or_loosening()
 {
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, Limits::default()).await;
        let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (phone(a_dir.path()), phone(b_dir.path()));
        let code = a.cloud_setup(&server.base).await.unwrap();

        // The backup has its own switch, off until the student turns it on.
        assert_eq!(
            a.cloud_backup().await.unwrap_err().to_string(),
            "the app's backup is off: turn on Settings → 云端 → 备份到云端 (harness cloud backup --allow)"
        );
        a.set_cloud_backup(true).unwrap();

        set(&a, "language", json!("en"));
        set(&a, "timeZone", json!("Europe/Berlin"));
        set(&a, "money.perDayYuan", json!(50));
        set(&a, "money.perPaymentYuan", json!(500));
        set(&a, "agent.maxToolCalls", json!(80));
        set(&a, "plugins.notes.modes.read", json!("ask"));
        let rules = json!([{ "kind": "deny", "tool": "notes.drop" }]);
        set(&a, "rules", rules.clone());
        a.write_memory("我住在燕园 32 楼", None, None, false)
            .unwrap();
        a.write_memory("待批准的记忆", None, None, true).unwrap();
        let rejected = a.write_memory("被拒绝的记忆", None, None, true).unwrap();
        a.decide_memory(rejected.id, false).unwrap();
        let job = json!({"name": "带伞提醒", "schedule": {"everyMinutes": 60}, "agent": {"prompt": "看看天气，下雨就提醒我带伞"}});
        a.add_job(&job, Owner::User).unwrap();
        let conversation = a.conversations().create().unwrap();
        a.conversations()
            .rename(&conversation, "期中复习计划")
            .unwrap();
        // Secrets on the first phone: the model's key and a campus password.
        a.set_model_api_key(Some("sk-backup-secret-4242")).unwrap();
        a.set_secret("campus.password", "pku-password-4242")
            .unwrap();
        a.set_cloud_consent("notes", true).unwrap();
        // Its store on the phone goes in the backup with its consent (DESIGN.md §12).
        tap(
            &a,
            "keep",
            json!({"key": "draft", "text": "周五交实验报告"}),
        )
        .await;

        let written = a.cloud_backup().await.unwrap();
        assert_eq!(written.parts, 1);

        b.cloud_join(&server.base, &code).await.unwrap();
        let restored = b.cloud_restore().await.unwrap();
        let keys = |list: &[&str]| list.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        assert_eq!(
            restored,
            Restored {
                applied: keys(&[
                    "language",
                    "money.perDayYuan",
                    "plugins.notes.modes.read",
                    "rules",
                    "timeZone"
                ]),
                // Raised limits let the agent go further: the student makes them, or not.
                pending: vec![
                    ("agent.maxToolCalls".into(), json!(80)),
                    ("money.perPaymentYuan".into(), json!(500)),
                ],
                refused: vec![],
                memories: 1,
                jobs: 1,
                conversations: 1,
                messages: 0,
                // seed 000: a plugin's cloud switch is the student's to turn on here.
                cloud_consents_pending: vec!["notes".into()],
                plugin_values: 1,
            }
        );
        assert_eq!(
            tap(&b, "recall", json!({"key": "draft"})).await,
            json!({"ok": "周五交实验报告"})
        );
        let settings = b.settings();
        assert_eq!(settings.language, harness_core::settings::Language::En);
        assert_eq!(settings.time_zone, "Europe/Berlin");
        assert_eq!(settings.money.per_day_yuan, 50);
        assert_eq!(settings.money.per_payment_yuan, 100);
        assert_eq!(settings.agent.max_tool_calls, 50);
        assert_eq!(serde_json::to_value(b.rules()).unwrap(), rules);
        assert_eq!(b.memories_in_effect().unwrap(), ["我住在燕园 32 楼"]);
        assert_eq!(b.memories().unwrap().len(), 1);
        let jobs = b.jobs();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].spec.name, "带伞提醒");
        assert_eq!(jobs[0].owner, Owner::User);
        let titles: Vec<_> = b
            .conversations()
            .list()
            .unwrap()
            .into_iter()
            .map(|c| c.title)
            .collect();
        assert_eq!(titles, [Some("期中复习计划".to_owned())]);
        // No secret came back.
        assert!(!b.has_secret("model.apiKey").unwrap());
        assert!(!b.has_secret("campus.password").unwrap());
        assert!(b.check_cloud("notes").is_err());

        // A second restore brings nothing twice, and still leaves the looser values pending.
        let again = b.cloud_restore().await.unwrap();
        assert_eq!(again.applied, Vec::<String>::new());
        assert_eq!(again.pending.len(), 2);
        assert_eq!(
            (
                again.memories,
                again.jobs,
                again.conversations,
                again.plugin_values
            ),
            (0, 0, 0, 0)
        );

        // The backup as the account reads it holds no secret; the server holds no plaintext.
        let b_cloud = Cloud::new(
            Arc::new(MemorySecrets::default()),
            None,
            Arc::new(SystemClock),
        );
        assert!(
            b_cloud.read_backup().await.is_err(),
            "a cloud not set up reads nothing"
        );
        let stored = database_text(&db).await;
        for plain in [
            "我住在燕园 32 楼",
            "带伞提醒",
            "期中复习计划",
            "周五交实验报告",
            "Europe/Berlin",
            "notes.drop",
            "maxToolCalls",
            "@harness/backup",
            "manifest",
            "sk-backup-secret-4242",
            "pku-password-4242",
        ] {
            assert!(
                !stored.contains(plain),
                "{db}: the database holds {plain:?}"
            );
        }
        server.stop().await;
    }
}

// DESIGN §3 8e and §6: a backup is read as the settings screen's changes are checked, so one
// written with a secret or a secret-shaped value (by a device of the account, or a client of
// its own) sets neither, and the refusal does not repeat the value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crafted_backup_cannot_set_a_secret_or_a_secret_shaped_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("cloud.db").display());
    let server = Server::start(&db, Limits::default()).await;
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a_secrets = Arc::new(MemorySecrets::default());
    let (a, b) = (
        phone_with(a_dir.path(), a_secrets.clone()),
        phone(b_dir.path()),
    );
    let code = a.cloud_setup(&server.base).await.unwrap();
    // Another client of the same account, as a crafted app would be.
    let crafted = Cloud::new(
        a_secrets,
        Some(a_dir.path().to_path_buf()),
        Arc::new(SystemClock),
    );
    crafted
        .write_backup(&Backup {
            settings: vec![
                ("model.apiKey".into(), json!("sk-crafted-7777")),
                (
                    "model.endpoint".into(),
                    json!("https://me:sk-crafted-7777@model.example/v1"),
                ),
                ("plugins.missing.modes.read".into(), json!("auto")),
                ("campus.hosts".into(), json!(["evil.example"])),
            ],
            ..Backup::default()
        })
        .await
        .unwrap();
    b.cloud_join(&server.base, &code).await.unwrap();
    let restored = b.cloud_restore().await.unwrap();
    assert_eq!(restored.applied, Vec::<String>::new());
    // A campus host added is one more place the session may go: the student's to add.
    assert_eq!(
        restored.pending,
        [("campus.hosts".to_owned(), json!(["evil.example"]))]
    );
    let refused: Vec<&str> = restored.refused.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        refused,
        [
            "model.apiKey",
            "model.endpoint",
            "plugins.missing.modes.read"
        ]
    );
    for (key, why) in &restored.refused {
        assert!(!why.contains("sk-crafted-7777"), "{key}: {why}");
    }
    assert!(!b.has_secret("model.apiKey").unwrap());
    assert_eq!(
        b.settings().model.endpoint,
        harness_core::settings::Settings::default().model.endpoint
    );
    server.stop().await;
}

// Issue 39.5: with the switch on, the app is written after changes, once for a run of them
// (when the shell wakes), and not again while nothing changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_is_backed_up_again_only_after_a_change_and_only_with_its_switch_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("cloud.db").display());
    let server = Server::start(&db, Limits::default()).await;
    let a_dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecrets::default());
    let a = phone_with(a_dir.path(), secrets.clone());
    a.set_cloud_backup(true).unwrap();
    // No cloud set up: nothing to write to, and no error.
    assert_eq!(a.cloud_backup_if_changed().await.unwrap(), None);
    a.cloud_setup(&server.base).await.unwrap();
    a.set_cloud_backup(false).unwrap();
    assert_eq!(a.cloud_backup_if_changed().await.unwrap(), None);

    a.set_cloud_backup(true).unwrap();
    let first = a.cloud_backup_if_changed().await.unwrap().unwrap();
    assert_eq!(first.parts, 1);
    assert_eq!(a.cloud_backup_if_changed().await.unwrap(), None);
    set(&a, "language", json!("en"));
    a.write_memory("周三下午有实验课", None, None, false)
        .unwrap();
    assert_eq!(
        a.cloud_backup_if_changed().await.unwrap().map(|w| w.parts),
        Some(1)
    );
    assert_eq!(a.cloud_backup_if_changed().await.unwrap(), None);
    // The data directory opened again remembers what it wrote.
    drop(a);
    let a = phone_with(a_dir.path(), secrets);
    assert_eq!(a.cloud_backup_if_changed().await.unwrap(), None);
    server.stop().await;
}

/// A clock one second further on at each reading, from the wall clock's now.
struct Ticking(AtomicI64);

impl Clock for Ticking {
    fn now_ms(&self) -> i64 {
        self.0.fetch_add(1000, Ordering::SeqCst)
    }
}

// A recovery join (and an account's setup) signs its proof and its request at one instant: read
// from the clock twice, a second boundary between the readings had the server refuse the proof
// ("the recovery code is no account's") for a code that was right.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_and_a_recovery_join_hold_when_the_clock_moves_between_readings() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("cloud.db").display());
    let server = Server::start(&db, Limits::default()).await;
    let ticking = || -> Arc<dyn Clock> { Arc::new(Ticking(AtomicI64::new(SystemClock.now_ms()))) };
    let first = Cloud::new(Arc::new(MemorySecrets::default()), None, ticking());
    let code = first.setup(&server.base).await.unwrap();
    let second = Cloud::new(Arc::new(MemorySecrets::default()), None, ticking());
    second.join(&server.base, &code).await.unwrap();
    assert_eq!(second.status().await.unwrap().unwrap().devices.len(), 2);
    server.stop().await;
}

#[path = "../../core/tests/common/model_server.rs"]
mod model_server;

/// The history rows as both devices compare them: who spoke, in which turn, and what.
fn said(engine: &Engine, conversation: &str) -> Vec<(u64, String, Option<String>)> {
    engine
        .history(conversation, None, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|m| (m.turn, m.role, m.content))
        .collect()
}

// Issue 39.5, "— if chosen — histories": with 连同对话内容 on, a conversation comes to a new
// data directory under its id with its title, settings, own rules and history; the model's key
// that its turns were sent with is in neither the backup nor the database; a restore twice adds
// nothing; a skip_all preset and an allow rule wait for the student (DESIGN §3 8e), kept until
// applied or dismissed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn histories_chosen_come_back_with_their_conversations_and_nothing_looser_is_made() {
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, Limits::default()).await;
        let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let a_secrets = Arc::new(MemorySecrets::default());
        let (a, b) = (
            phone_with(a_dir.path(), a_secrets.clone()),
            phone(b_dir.path()),
        );
        let model = model_server::ModelServer::start(vec![
            model_server::text("好的，周五前交。"),
            model_server::text("已记下。"),
        ])
        .await;
        model.configure(&a, "sk-history-secret-5151");
        let code = a.cloud_setup(&server.base).await.unwrap();
        a.set_cloud_backup(true).unwrap();

        let id = a.conversations().create().unwrap();
        a.send_message(&id, "提醒我交数据结构作业").await.unwrap();
        a.send_message(&id, "还有实验报告").await.unwrap();
        a.conversations().rename(&id, "作业").unwrap();
        let mut settings = a.conversation(&id).unwrap().settings;
        settings.preset = harness_core::policy::Preset::SkipAll;
        a.set_conversation_settings(&id, settings).unwrap();
        let rules = json!([
            { "kind": "deny", "tool": "notes.drop" },
            { "kind": "allow", "tool": "notes.save" }
        ]);
        a.conversations()
            .set_conversation_rules(&id, serde_json::from_value(rules.clone()).unwrap())
            .unwrap();
        // The sites its scope narrows it to travel; its folders are paths of this device.
        let files = a_dir.path().join("plugins/notes/files");
        a.set_scope(
            &id,
            harness_core::turn::Scope {
                roots: vec![files],
                hosts: vec!["*.pku.edu.cn".into()],
                apps: vec![],
            },
        )
        .unwrap();
        let history = said(&a, &id);
        assert_eq!(
            history,
            [
                (
                    1,
                    "user".to_owned(),
                    Some("提醒我交数据结构作业".to_owned())
                ),
                (
                    1,
                    "assistant".to_owned(),
                    Some("好的，周五前交。".to_owned())
                ),
                (2, "user".to_owned(), Some("还有实验报告".to_owned())),
                (2, "assistant".to_owned(), Some("已记下。".to_owned())),
            ]
        );

        // Off by default: the conversation travels without its history.
        assert!(!a.consent().cloud_backup_histories);
        a.cloud_backup().await.unwrap();
        let reader = Cloud::new(
            a_secrets.clone(),
            Some(a_dir.path().to_path_buf()),
            Arc::new(SystemClock),
        );
        let without = reader.read_backup().await.unwrap().unwrap();
        assert_eq!(without.conversations.len(), 1);
        assert_eq!(without.conversations[0].history, []);

        a.set_cloud_backup_histories(true).unwrap();
        a.cloud_backup().await.unwrap();
        let backup = reader.read_backup().await.unwrap().unwrap();
        let c = &backup.conversations[0];
        assert_eq!(
            (c.id.as_str(), c.title.as_deref(), c.turns, c.history.len()),
            (id.as_str(), Some("作业"), 2, 4)
        );
        let document = serde_json::to_string(&backup).unwrap();
        assert!(!document.contains("sk-history-secret-5151"));

        b.cloud_join(&server.base, &code).await.unwrap();
        let restored = b.cloud_restore().await.unwrap();
        assert_eq!((restored.conversations, restored.messages), (1, 4));
        // The model's address is a protected change too (the key would be sent there).
        let pending = vec![
            ("model.endpoint".to_owned(), json!(model.endpoint())),
            (format!("conversations.{id}.preset"), json!("skip_all")),
            (format!("conversations.{id}.rules"), rules.clone()),
        ];
        assert_eq!(restored.pending, pending);
        assert_eq!(said(&b, &id), history);
        let here = b.conversation(&id).unwrap();
        assert_eq!(here.turns, 2);
        assert_eq!(here.settings.preset, harness_core::policy::Preset::AutoEdit);
        assert_eq!(
            serde_json::to_value(here.rules.rules()).unwrap(),
            json!([{ "kind": "deny", "tool": "notes.drop" }])
        );
        assert_eq!(b.conversations().title(&id).as_deref(), Some("作业"));
        assert_eq!(
            here.scope,
            harness_core::turn::Scope {
                roots: vec![],
                hosts: vec!["*.pku.edu.cn".into()],
                apps: vec![],
            }
        );
        assert!(!b.has_secret("model.apiKey").unwrap());

        // A second restore adds no conversation and no message.
        let again = b.cloud_restore().await.unwrap();
        assert_eq!((again.conversations, again.messages), (0, 0));
        assert_eq!(b.conversations().list().unwrap().len(), 1);
        assert_eq!(said(&b, &id).len(), 4);

        // What waits is kept (SQLite) across an open of the data directory, then applied or
        // dismissed by the student.
        drop(b);
        let b = phone(b_dir.path());
        assert_eq!(b.cloud_pending().unwrap(), pending);
        b.apply_cloud_pending(&pending[2].0).unwrap();
        assert_eq!(
            serde_json::to_value(b.conversation(&id).unwrap().rules.rules()).unwrap(),
            rules
        );
        b.dismiss_cloud_pending(&pending[1].0).unwrap();
        assert_eq!(b.cloud_pending().unwrap(), pending[..1]);
        b.apply_cloud_pending("model.endpoint").unwrap();
        assert_eq!(b.settings().model.endpoint, model.endpoint());
        assert_eq!(b.cloud_pending().unwrap(), []);
        assert_eq!(
            b.conversation(&id).unwrap().settings.preset,
            harness_core::policy::Preset::AutoEdit
        );

        let stored = database_text(&db).await;
        for plain in ["提醒我交数据结构作业", "已记下", "sk-history-secret-5151"] {
            assert!(
                !stored.contains(plain),
                "{db}: the database holds {plain:?}"
            );
        }
        server.stop().await;
    }
}

// A backup an older app wrote (no `conversations`, only their titles) still restores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_written_before_the_conversations_were_in_it_still_restores() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("cloud.db").display());
    let server = Server::start(&db, Limits::default()).await;
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a_secrets = Arc::new(MemorySecrets::default());
    let (a, b) = (
        phone_with(a_dir.path(), a_secrets.clone()),
        phone(b_dir.path()),
    );
    let code = a.cloud_setup(&server.base).await.unwrap();
    let older = Cloud::new(
        a_secrets,
        Some(a_dir.path().to_path_buf()),
        Arc::new(SystemClock),
    );
    // The document and manifest exactly as format 1 was written before.
    let document = r#"{"format":1,"settings":[["language","en"]],"memories":["周三有实验课"],"jobs":[],"conversationTitles":["旧的对话"],"cloudPlugins":[]}"#;
    older
        .set(
            harness_core::cloud::backup::PLUGIN,
            "part/00112233aabbccdd/0",
            Some(&json!(document)),
            None,
        )
        .await
        .unwrap();
    older
        .set(
            harness_core::cloud::backup::PLUGIN,
            "manifest",
            Some(&json!({"format": 1, "generation": "00112233aabbccdd", "parts": 1})),
            None,
        )
        .await
        .unwrap();
    b.cloud_join(&server.base, &code).await.unwrap();
    let restored = b.cloud_restore().await.unwrap();
    assert_eq!(
        restored,
        Restored {
            applied: vec!["language".into()],
            memories: 1,
            conversations: 1,
            ..Restored::default()
        }
    );
    let titles: Vec<_> = b
        .conversations()
        .list()
        .unwrap()
        .into_iter()
        .map(|c| c.title)
        .collect();
    assert_eq!(titles, [Some("旧的对话".to_owned())]);
    assert_eq!(b.cloud_restore().await.unwrap().conversations, 0);
    server.stop().await;
}

// Issue 39.5, "written after changes": the wake the shells call (Engine::wake, the FFI's
// run_due, `harness tick`) writes the backup once after a change and not again without one;
// a cloud out of reach is reported, not an error of the wake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wake_writes_the_backup_once_after_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("cloud.db").display());
    let server = Server::start(&db, Limits::default()).await;
    let a_dir = tempfile::tempdir().unwrap();
    let a = phone_with(a_dir.path(), Arc::new(MemorySecrets::default()));
    a.cloud_setup(&server.base).await.unwrap();
    a.set_cloud_backup(true).unwrap();
    let now = SystemClock.now_ms();
    let first = a.wake(now).await.unwrap();
    assert_eq!(first.runs.len(), 0);
    assert_eq!(first.backup.unwrap().map(|w| w.parts), Some(1));
    assert_eq!(a.wake(now).await.unwrap().backup.unwrap(), None);
    set(&a, "timeZone", json!("Europe/Berlin"));
    assert_eq!(
        a.wake(now).await.unwrap().backup.unwrap().map(|w| w.parts),
        Some(1)
    );
    assert_eq!(a.wake(now).await.unwrap().backup.unwrap(), None);
    server.stop().await;
    set(&a, "timeZone", json!("Asia/Shanghai"));
    let offline = a.wake(now).await.unwrap();
    assert!(
        matches!(
            offline.backup,
            Err(harness_core::cloud::CloudError::Unavailable(_))
        ),
        "{:?}",
        offline.backup
    );
}
