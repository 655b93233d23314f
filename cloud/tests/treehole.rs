//! The shipped 树洞 plugin keeps the posts the student follows in PKU harness Cloud once its
//! Allow cloud switch is on (seed 000), on a server over each backend: two phones joined by the
//! recovery code, each signed in to the campus simulator as the same student, list the same
//! followed posts; those followed before the switch, kept on the phone, move to the cloud at the
//! next change; the database holds no pid in the clear.

mod common;

use std::sync::Arc;

use common::{Allow, Server, databases};
use harness_campus_sim::{DEMO, SMS_CODE, Simulator};
use harness_cloud::server::Limits;
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::invoke::{Call, Outcome};
use harness_core::policy::Actor;
use harness_core::secrets::MemorySecrets;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// A phone with the app's shipped plugins, signed in to the simulator as the demo student with
/// Treehole's SMS check done.
async fn phone(dir: &std::path::Path, sim: &Simulator) -> Engine {
    let mut options = Options::new(Arc::new(Allow));
    options.secrets = Arc::new(MemorySecrets::default());
    options.campus = Origin::development(&sim.origin()).unwrap();
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = Engine::open(dir, options).unwrap();
    engine.accept_terms().unwrap();
    let step = engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
    engine.campus().treehole_send_code().await.unwrap();
    engine.campus().treehole_verify(SMS_CODE).await.unwrap();
    engine
}

async fn tap(engine: &Engine, tool: &str, input: Value) -> Value {
    let outcome = engine
        .invoke(Call {
            tool: tool.into(),
            actor: Actor::User,
            input,
            conversation: None,
        })
        .await;
    match outcome.outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("{tool}: {other:?}"),
    }
}

fn pids(listed: &Value) -> Vec<i64> {
    listed["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_i64().unwrap())
        .collect()
}

// seed 000: with its Allow cloud switch on, a plugin's records are in the cloud, shared by the
// student's devices; a post followed before the switch was on moves there at the next change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn followed_treehole_posts_are_shared_by_two_phones_through_the_cloud_with_allow_cloud_on() {
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let server = Server::start(&db, Limits::default()).await;
        let sim = Simulator::start(0).await.unwrap();
        let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let a = phone(a_dir.path(), &sim).await;
        let code = a.cloud_setup(&server.base).await.unwrap();

        // The switch off: kept on this phone.
        assert_eq!(
            tap(&a, "treehole.follow", json!({"pid": 7_001_198})).await,
            json!({"pid": 7_001_198, "following": true, "keptIn": "phone"})
        );
        a.set_cloud_consent("treehole", true).unwrap();
        // Read with the switch on, the phone's pid is listed with the cloud's (none yet).
        let listed = tap(&a, "treehole.following", json!({})).await;
        assert_eq!(
            (pids(&listed), &listed["keptIn"]),
            (vec![7_001_198], &json!("cloud"))
        );
        assert_eq!(
            tap(&a, "treehole.follow", json!({"pid": 7_001_234})).await,
            json!({"pid": 7_001_234, "following": true, "keptIn": "cloud"})
        );
        // The phone's pid moved to the cloud: the phone's store keeps none.
        let stored = std::fs::read_to_string(harness_core::gates::StoreGate::file(
            &a_dir.path().join("plugins").join("stores"),
            "treehole",
        ))
        .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&stored).unwrap(),
            json!({"following": "[]"})
        );

        // The second phone joins by the code: with its own switch off it sees nothing of the
        // cloud; with it on, the posts the first phone followed, newest follow first.
        let b = phone(b_dir.path(), &sim).await;
        b.cloud_join(&server.base, &code).await.unwrap();
        assert_eq!(
            tap(&b, "treehole.following", json!({})).await,
            json!({"posts": [], "keptIn": "phone"})
        );
        b.set_cloud_consent("treehole", true).unwrap();
        let listed = tap(&b, "treehole.following", json!({})).await;
        assert_eq!(
            listed,
            json!({"posts": [
                {"pid": 7_001_234, "time": "2026-12-01 11:33", "text": "今天农园的烤鸭排到门口了",
                 "replyCount": 2, "newestReply": "2026-12-01 11:45"},
                {"pid": 7_001_198, "time": "2026-12-01 08:46",
                 "text": "有人周六下午一起去未名湖滑冰吗？", "replyCount": 1,
                 "newestReply": "2026-12-01 09:10"}
            ], "keptIn": "cloud"})
        );

        // An unfollow on the second phone: the first phone lists it no more.
        assert_eq!(
            tap(
                &b,
                "treehole.follow",
                json!({"pid": 7_001_234, "follow": false})
            )
            .await,
            json!({"pid": 7_001_234, "following": false, "keptIn": "cloud"})
        );
        let listed = tap(&a, "treehole.following", json!({})).await;
        assert_eq!(
            (pids(&listed), &listed["keptIn"]),
            (vec![7_001_198], &json!("cloud"))
        );

        // The server holds the pids sealed: neither number is in the database in the clear.
        server.stop().await;
        let held = database_text(&db).await;
        for pid in ["7001198", "7001234"] {
            assert!(!held.contains(pid), "{pid} in the clear in {db}");
        }
    }
}

/// Every byte the database holds, as text: SQLite's files, or PostgreSQL's records.
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
    for row in client
        .query("SELECT t::text FROM records t", &[])
        .await
        .unwrap()
    {
        text.push_str(&row.get::<_, String>(0));
        text.push('\n');
    }
    text
}
