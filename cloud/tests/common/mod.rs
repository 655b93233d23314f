//! A signing test client and the servers the tests run: in-process on 127.0.0.1 over SQLite,
//! and over the PostgreSQL that scripts/test-cloud-postgres.sh starts (its URL in
//! HARNESS_CLOUD_TEST_POSTGRES).

#![allow(dead_code)]

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::{Signer, SigningKey};
use harness_cloud::auth;
use harness_cloud::server::{self, App, Limits};
use harness_cloud::storage;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer as Decision;
use harness_core::secrets::MemorySecrets;
use harness_core::{Engine, Options};
use serde_json::Value;

/// The student who says yes to every question.
pub struct Allow;

#[async_trait]
impl ApprovalBroker for Allow {
    async fn ask(&self, _prompt: Prompt) -> Decision {
        Decision::Allow
    }
}

/// A test phone's options: every question answered yes, no built-in plugins, the keystore
/// `secrets` (a test that reaches the phone's cloud as another client holds it too).
pub fn phone_options(secrets: Arc<MemorySecrets>) -> Options {
    let mut options = Options::new(Arc::new(Allow));
    options.builtin_plugins = false;
    options.secrets = secrets;
    options
}

/// A phone's engine over its data directory `dir`, its terms accepted.
pub fn open_phone(dir: &std::path::Path, options: Options) -> Engine {
    let engine = Engine::open(dir, options).unwrap();
    engine.accept_terms().unwrap();
    engine
}

pub fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).unwrap();
    bytes
}

/// The databases to run against: SQLite in `dir`, and PostgreSQL when the script started one.
pub fn databases(dir: &std::path::Path) -> Vec<String> {
    let mut urls = vec![format!("sqlite:{}", dir.join("cloud.db").display())];
    match std::env::var("HARNESS_CLOUD_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => urls.push(url),
        _ => eprintln!(
            "HARNESS_CLOUD_TEST_POSTGRES unset: PostgreSQL is not tested (scripts/test-cloud-postgres.sh sets it)"
        ),
    }
    urls
}

pub struct Server {
    pub base: String,
    pub app: Arc<App>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub async fn start(db: &str, limits: Limits) -> Self {
        let storage = storage::open(db).await.unwrap();
        let app = App::new(storage, limits);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(server::serve(listener, app.clone(), async {
            let _ = stopped.await;
        }));
        Self {
            base,
            app,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Graceful shutdown: returns once the server has finished.
    pub async fn stop(mut self) {
        self.stop.take().unwrap().send(()).unwrap();
        self.task.take().unwrap().await.unwrap().unwrap();
    }
}

/// A device: its key pair, and the headers it signs each request with.
pub struct Device {
    pub key: SigningKey,
    pub http: reqwest::Client,
    pub base: String,
}

pub struct Answer {
    pub status: u16,
    pub body: Value,
}

/// An HTTP client for the tests: loopback, plain HTTP.
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

impl Device {
    pub fn new(base: &str) -> Self {
        Self {
            key: SigningKey::from_bytes(&random()),
            http: http(),
            base: base.to_owned(),
        }
    }

    pub fn public(&self) -> String {
        B64.encode(self.key.verifying_key().as_bytes())
    }

    /// The signed headers for a request, with a fresh nonce at `timestamp`.
    pub fn headers(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
        timestamp: i64,
    ) -> Vec<(&'static str, String)> {
        let nonce = B64.encode(random::<16>());
        let signature = self
            .key
            .sign(&auth::signed_message(method, path, body, timestamp, &nonce));
        vec![
            (auth::DEVICE, self.public()),
            (auth::TIMESTAMP, timestamp.to_string()),
            (auth::NONCE, nonce),
            (auth::SIGNATURE, B64.encode(signature.to_bytes())),
        ]
    }

    pub async fn send_with(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
        headers: &[(&'static str, String)],
    ) -> Answer {
        let mut request = self
            .http
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_vec());
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        Answer {
            status,
            body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        }
    }

    pub async fn send(&self, method: &str, path: &str, body: Value) -> Answer {
        let body = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(&body).unwrap()
        };
        let headers = self.headers(method, path, &body, server::now());
        self.send_with(method, path, &body, &headers).await
    }

    /// The recovery key's proof that this device may join (or create) its account.
    pub fn recovery_proof(&self, recovery: &SigningKey, timestamp: i64) -> Value {
        let signature = recovery.sign(&auth::join_message(
            self.key.verifying_key().as_bytes(),
            timestamp,
        ));
        serde_json::json!({
            "recovery_key": B64.encode(recovery.verifying_key().as_bytes()),
            "recovery_signature": B64.encode(signature.to_bytes()),
        })
    }

    /// Signs and sends a request whose body proves the recovery key, at one timestamp.
    pub async fn send_with_recovery(&self, path: &str, recovery: &SigningKey) -> Answer {
        let now = server::now();
        let body = serde_json::to_vec(&self.recovery_proof(recovery, now)).unwrap();
        let headers = self.headers("POST", path, &body, now);
        self.send_with("POST", path, &body, &headers).await
    }

    /// A new account with this device as its first: (the account id, its recovery key).
    pub async fn create_account(&self) -> (String, SigningKey) {
        let recovery = SigningKey::from_bytes(&random());
        let answer = self.send_with_recovery("/v1/accounts", &recovery).await;
        assert_eq!(answer.status, 201, "{}", answer.body);
        (
            answer.body["account"].as_str().unwrap().to_owned(),
            recovery,
        )
    }

    pub async fn put(&self, plugin: &str, key: &str, version: i64, value: Option<&[u8]>) -> Answer {
        let body = serde_json::json!({ "version": version, "value": value.map(|v| B64.encode(v)) });
        self.send("PUT", &format!("/v1/records/{plugin}/{key}"), body)
            .await
    }
}

pub fn b64(bytes: &[u8]) -> String {
    B64.encode(bytes)
}
