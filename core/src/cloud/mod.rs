//! PKU harness Cloud's client (DESIGN.md §12): the device's account on a server of the
//! project's own (cloud/), and the end-to-end encrypted records plugins keep there through
//! `services.cloud`. The device key (Ed25519) and the account key (256 bits) are in the
//! keystore only; the server address and the account's id, which are not secrets, are in
//! `<data dir>/cloud.json`. The server sees signed requests, HMACs of names and sealed values.

pub mod backup;
pub mod seal;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::{Signer, SigningKey};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::clock::Clock;
use crate::secrets::SecretStore;
use seal::{AccountKey, Bound, SEAL_OVERHEAD, random};

/// What a pairing code starts with, a space and then the base64url of its fields. It is not a
/// URI: no app (this one included) claims it as a link, so a phone's own camera shows it as
/// text and opens nothing; only this app's scanner reads it, for it carries the account key.
pub const PAIRING_PREFIX: &str = "PKUHARNESS-PAIR-1 ";
/// The refusal of a scanned or typed text that is not a pairing code.
pub const NOT_A_PAIRING_CODE: &str = "the scanned code is not a PKU harness Cloud pairing code";
/// The refusal of a pairing code whose token the server no longer has: used once, or past its
/// ten minutes.
pub const PAIRING_CODE_SPENT: &str =
    "the pairing code is used or expired: show a new one on the other device";
/// How long a pairing token lasts on the server (cloud/src/server.rs's `PAIRING_SECS`).
pub const PAIRING_MS: i64 = 10 * 60 * 1000;

/// The server's bound on a stored value; what a plugin may store is this less the seal.
const MAX_SEALED_BYTES: usize = 64 * 1024;
/// What a plugin's value may be, as JSON text with its key around it.
pub const MAX_VALUE_BYTES: usize = MAX_SEALED_BYTES - SEAL_OVERHEAD;
const TIMEOUT: Duration = Duration::from_secs(10);
/// A plain `set` that meets another device's write reads the new version and tries again.
const SET_TRIES: usize = 3;

/// The keystore's names for the cloud's secrets.
pub mod keys {
    /// This device's Ed25519 signing key (base64url), the account's device key.
    pub const DEVICE: &str = "cloud.deviceKey";
    /// The account key (base64url): seals values, names records, carries the recovery code.
    pub const ACCOUNT: &str = "cloud.accountKey";
}

/// A cloud call's failure; [`CloudError::code`] is what a plugin's `CloudError` carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloudError {
    /// seed 000: the plugin's "Allow cloud" switch is off.
    #[error(
        "consent_required: plugin \"{0}\" may not use PKU harness Cloud; the user turns on Settings → Plugins → {0} → Allow cloud"
    )]
    ConsentRequired(String),
    /// No cloud set up on this device, or the server cannot be reached or refused the device.
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error("quota_exceeded: {0}")]
    QuotaExceeded(String),
    /// A write from an older version: another write came first.
    #[error("conflict: the record is at version {current}; read it again and write from there")]
    Conflict { current: i64 },
    /// A request the caller should not have made (a bad code, a value too large, a bad name).
    #[error("{0}")]
    Invalid(String),
    /// Another device of the account removed this one: the server refuses it, and this device
    /// has forgotten the account (it joins again with the recovery code).
    #[error(
        "unavailable: this device was removed from its cloud account by another of the account's devices; join again with the recovery code (云端)"
    )]
    Removed,
}

impl CloudError {
    /// The code a plugin's `CloudError` carries; none for a plain refusal.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Self::ConsentRequired(_) => Some("consent_required"),
            // A plugin reads a removed device as a cloud it cannot reach.
            Self::Unavailable(_) | Self::Removed => Some("unavailable"),
            Self::QuotaExceeded(_) => Some("quota_exceeded"),
            Self::Conflict { .. } => Some("conflict"),
            Self::Invalid(_) => None,
        }
    }
}

/// Where this device's account is: not secrets.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Config {
    server: String,
    account: String,
    /// The SHA-256 of the app's backup this device wrote last (`backup`), so that an unchanged
    /// app is not written again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backup_digest: Option<String>,
    /// When this device last wrote the app's backup (ms since the epoch, the engine's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backup_at_ms: Option<i64>,
}

/// What `harness cloud status` and the 云端 screen show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudStatus {
    pub server: String,
    pub account: String,
    /// The account's devices, the order the server keeps (oldest first).
    pub devices: Vec<CloudDevice>,
    pub used_bytes: i64,
    pub quota_bytes: i64,
}

/// One device of the account, as the server lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudDevice {
    /// Its public key (base64url): what [`Cloud::remove_device`] names.
    pub key: String,
    /// What it said it is when it joined: "android", "ios", "terminal", or empty.
    pub kind: String,
    /// When it joined, seconds since the epoch.
    pub added_at: i64,
    /// This device.
    pub this_device: bool,
}

/// What this device tells the server it is at setup or join (the 云端 screen's rows name it).
pub const DEVICE_KIND: &str = if cfg!(target_os = "android") {
    "android"
} else if cfg!(target_os = "ios") {
    "ios"
} else {
    "terminal"
};

/// One plugin's record as a plugin reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub value: Value,
    pub version: i64,
}

/// The account as one request needs it.
struct Session {
    server: String,
    account: String,
    device: SigningKey,
    key: AccountKey,
}

pub struct Cloud {
    secrets: Arc<dyn SecretStore>,
    /// `<data dir>/cloud.json`; none for an in-memory engine, whose setup lasts the process.
    path: Option<PathBuf>,
    config: Mutex<Option<Config>>,
    http: Mutex<Option<reqwest::Client>>,
    clock: Arc<dyn Clock>,
    /// The address the build offers before a cloud is set up (`Options::cloud_address`).
    offered: Option<String>,
}

fn unavailable(e: impl std::fmt::Display) -> CloudError {
    CloudError::Unavailable(e.to_string())
}

/// The bytes a device signs for a request; the server's half is cloud/src/auth.rs, and the two
/// must agree byte for byte.
fn signed_message(method: &str, path: &str, body: &[u8], timestamp: i64, nonce: &str) -> Vec<u8> {
    let digest: String = Sha256::digest(body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("harness-cloud-v1\n{method}\n{path}\n{digest}\n{timestamp}\n{nonce}").into_bytes()
}

/// What the recovery key signs to let `device` join (or create) its account.
fn recovery_proof(key: &AccountKey, device: &SigningKey, timestamp: i64) -> Value {
    let recovery = key.recovery_signing_key();
    let message = format!(
        "harness-cloud-join-v1\n{}\n{timestamp}",
        B64.encode(device.verifying_key().as_bytes())
    );
    json!({
        "recovery_key": B64.encode(recovery.verifying_key().as_bytes()),
        "recovery_signature": B64.encode(recovery.sign(message.as_bytes()).to_bytes()),
        "device_kind": DEVICE_KIND,
    })
}

/// A server address the app may use: https, or http to this machine (a development server).
fn check_server(server: &str) -> Result<String, CloudError> {
    let url = url::Url::parse(server).map_err(|e| {
        CloudError::Invalid(format!("the cloud's address (--server) {server:?}: {e}"))
    })?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    match (url.scheme(), loopback) {
        ("https", _) | ("http", true) => Ok(server.trim_end_matches('/').to_owned()),
        _ => Err(CloudError::Invalid(format!(
            "the cloud's address (--server) {server:?} must be https:// (http:// only to this machine)"
        ))),
    }
}

impl Cloud {
    pub fn new(
        secrets: Arc<dyn SecretStore>,
        data_dir: Option<PathBuf>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let path = data_dir.map(|dir| dir.join("cloud.json"));
        let config = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        Self {
            secrets,
            path,
            config: Mutex::new(config),
            http: Mutex::new(None),
            clock,
            offered: None,
        }
    }

    /// Offers `server` (trimmed; none when empty) as the address to set up or join on.
    pub fn offering(mut self, server: Option<String>) -> Self {
        self.offered = server
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        self
    }

    /// The address the build offers before a cloud is set up.
    pub fn offered(&self) -> Option<&str> {
        self.offered.as_deref()
    }

    fn http(&self) -> Result<reqwest::Client, CloudError> {
        let mut http = crate::lock(&self.http);
        if let Some(client) = &*http {
            return Ok(client.clone());
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(TIMEOUT)
            .build()
            .map_err(unavailable)?;
        *http = Some(client.clone());
        Ok(client)
    }

    /// The server this device's account is on, and when this device last wrote the app's
    /// backup (ms); none when no cloud is set up.
    pub fn kept(&self) -> Option<(String, Option<i64>)> {
        crate::lock(&self.config)
            .as_ref()
            .map(|c| (c.server.clone(), c.backup_at_ms))
    }

    /// `unavailable` unless this device has a cloud set up (before a request is even read).
    pub fn ready(&self) -> Result<(), CloudError> {
        self.session().map(drop)
    }

    fn session(&self) -> Result<Session, CloudError> {
        let not_set_up = || {
            CloudError::Unavailable(
                "PKU harness Cloud is not set up on this device: Settings → 云端 (harness cloud setup or join)".into(),
            )
        };
        let config = crate::lock(&self.config).clone().ok_or_else(not_set_up)?;
        let secret = |name| {
            self.secrets
                .get(name)
                .map_err(unavailable)?
                .ok_or_else(not_set_up)
        };
        let device: [u8; 32] = B64
            .decode(secret(keys::DEVICE)?)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| unavailable("the keystore's cloud device key is unreadable"))?;
        let key = AccountKey::from_keystore(&secret(keys::ACCOUNT)?)
            .ok_or_else(|| unavailable("the keystore's cloud account key is unreadable"))?;
        Ok(Session {
            server: config.server,
            account: config.account,
            device: SigningKey::from_bytes(&device),
            key,
        })
    }

    /// Seconds since the Unix epoch, as requests are signed.
    fn now(&self) -> i64 {
        self.clock.now_ms().div_euclid(1000)
    }

    /// One signed request: (status, body). A transport failure is `unavailable`.
    async fn send(
        &self,
        server: &str,
        device: &SigningKey,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        request_id: Option<&str>,
    ) -> Result<(u16, Value), CloudError> {
        let at = self.now();
        self.send_at(at, server, device, method, path, body, request_id)
            .await
    }

    /// [`Cloud::send`] signed at `timestamp`: a request whose body carries a proof signed at
    /// an instant (a recovery join) is signed at that same instant, read from the clock once,
    /// or the server finds the two apart and refuses the join.
    #[allow(clippy::too_many_arguments)]
    async fn send_at(
        &self,
        timestamp: i64,
        server: &str,
        device: &SigningKey,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        request_id: Option<&str>,
    ) -> Result<(u16, Value), CloudError> {
        let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let nonce = B64.encode(random::<16>());
        let signature = device.sign(&signed_message(
            method.as_str(),
            path,
            &body,
            timestamp,
            &nonce,
        ));
        let mut request = self
            .http()?
            .request(method, format!("{server}{path}"))
            .header("content-type", "application/json")
            .header(
                "x-harness-device",
                B64.encode(device.verifying_key().as_bytes()),
            )
            .header("x-harness-timestamp", timestamp.to_string())
            .header("x-harness-nonce", nonce)
            .header("x-harness-signature", B64.encode(signature.to_bytes()))
            .body(body);
        if let Some(id) = request_id {
            request = request.header("x-harness-request-id", id);
        }
        let response = request
            .send()
            .await
            .map_err(|e| unavailable(format!("the cloud at {server} cannot be reached: {e}")))?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(unavailable)?;
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        if status == 403 && body["code"] == "device_removed" {
            self.forget()?;
            return Err(CloudError::Removed);
        }
        Ok((status, body))
    }

    /// Forgets the account this device was removed from: `cloud.json` goes, so the device is
    /// not set up and may join again. The keystore's keys stay until a setup or join replaces
    /// them: a server's word never deletes a key.
    fn forget(&self) -> Result<(), CloudError> {
        if let Some(path) = &self.path {
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(unavailable(format!("{}: {e}", path.display())));
                }
                _ => {}
            }
        }
        *crate::lock(&self.config) = None;
        Ok(())
    }

    fn saved(
        &self,
        server: String,
        account: String,
        device: &SigningKey,
        key: &AccountKey,
    ) -> Result<(), CloudError> {
        self.secrets
            .set(keys::DEVICE, &B64.encode(device.to_bytes()))
            .map_err(unavailable)?;
        self.secrets
            .set(keys::ACCOUNT, &key.to_keystore())
            .map_err(unavailable)?;
        self.keep(Config {
            server,
            account,
            backup_digest: None,
            backup_at_ms: None,
        })
    }

    /// Writes `config` to `<data dir>/cloud.json` (whole, or not at all) and puts it in effect.
    fn keep(&self, config: Config) -> Result<(), CloudError> {
        if let Some(path) = &self.path {
            let temp = path.with_extension("json.tmp");
            std::fs::write(&temp, serde_json::to_vec(&config).expect("plain strings"))
                .and_then(|()| std::fs::rename(&temp, path))
                .map_err(|e| unavailable(format!("{}: {e}", path.display())))?;
        }
        *crate::lock(&self.config) = Some(config);
        Ok(())
    }

    fn refuse_if_set_up(&self) -> Result<(), CloudError> {
        match &*crate::lock(&self.config) {
            Some(config) => Err(CloudError::Invalid(format!(
                "this device already uses the cloud at {} (account {})",
                config.server, config.account
            ))),
            None => Ok(()),
        }
    }

    /// Makes an account with this device as its first, and returns the recovery code: the
    /// caller shows it once, and it is kept nowhere else.
    pub async fn setup(&self, server: &str) -> Result<String, CloudError> {
        let server = check_server(server)?;
        self.refuse_if_set_up()?;
        let device = SigningKey::from_bytes(&random());
        let key = AccountKey::generate();
        let at = self.now();
        let proof = recovery_proof(&key, &device, at);
        let (status, body) = self
            .send_at(
                at,
                &server,
                &device,
                reqwest::Method::POST,
                "/v1/accounts",
                Some(&proof),
                None,
            )
            .await?;
        let account = match (status, body["account"].as_str()) {
            (201, Some(account)) => account.to_owned(),
            _ => return Err(refused(status, &body)),
        };
        self.saved(server, account, &device, &key)?;
        Ok(key.recovery_code())
    }

    /// Joins the account whose recovery code the student typed, as a new device of it.
    pub async fn join(&self, server: &str, code: &str) -> Result<(), CloudError> {
        let server = check_server(server)?;
        self.refuse_if_set_up()?;
        let key = AccountKey::from_recovery_code(code).ok_or_else(|| {
            CloudError::Invalid(
                "the recovery code (--code) is not one: 14 groups of four letters and digits, as shown at setup".into(),
            )
        })?;
        let device = SigningKey::from_bytes(&random());
        let at = self.now();
        let proof = recovery_proof(&key, &device, at);
        let (status, body) = self
            .send_at(
                at,
                &server,
                &device,
                reqwest::Method::POST,
                "/v1/join",
                Some(&proof),
                None,
            )
            .await?;
        let account = match (status, body["account"].as_str()) {
            (200, Some(account)) => account.to_owned(),
            (403, _) => {
                return Err(CloudError::Invalid(format!(
                    "the recovery code (--code) is no account's on {server}"
                )));
            }
            _ => return Err(refused(status, &body)),
        };
        self.saved(server, account, &device, &key)
    }

    /// What the QR another device scans carries: the server, a one-time pairing token that
    /// lasts ten minutes, and the account key, as [`PAIRING_PREFIX`] and the base64url of a
    /// small JSON object. It is shown, never kept.
    pub async fn pairing(&self) -> Result<String, CloudError> {
        let s = self.session()?;
        let (status, body) = self
            .send(
                &s.server,
                &s.device,
                reqwest::Method::POST,
                "/v1/pairings",
                None,
                None,
            )
            .await?;
        let token = match (status, body["token"].as_str()) {
            (200, Some(token)) => token.to_owned(),
            _ => return Err(refused(status, &body)),
        };
        let fields = json!({ "server": s.server, "token": token, "key": s.key.to_keystore() });
        Ok(format!(
            "{PAIRING_PREFIX}{}",
            B64.encode(fields.to_string())
        ))
    }

    /// Joins the account whose QR (see [`Cloud::pairing`]) this device scanned.
    pub async fn join_paired(&self, payload: &str) -> Result<(), CloudError> {
        let bad = || CloudError::Invalid(NOT_A_PAIRING_CODE.into());
        let fields: Value = payload
            .trim()
            .strip_prefix(PAIRING_PREFIX)
            .and_then(|rest| B64.decode(rest.trim()).ok())
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or_else(bad)?;
        let field = |name: &str| fields[name].as_str().map(str::to_owned).ok_or_else(bad);
        let (server, token) = (field("server")?, field("token")?);
        let key = AccountKey::from_keystore(&field("key")?).ok_or_else(bad)?;
        let server = check_server(&server)?;
        self.refuse_if_set_up()?;
        let device = SigningKey::from_bytes(&random());
        let body = json!({ "pairing_token": token, "device_kind": DEVICE_KIND });
        let (status, body) = self
            .send(
                &server,
                &device,
                reqwest::Method::POST,
                "/v1/join",
                Some(&body),
                None,
            )
            .await?;
        let account = match (status, body["account"].as_str()) {
            (200, Some(account)) => account.to_owned(),
            (403, _) => {
                return Err(CloudError::Invalid(PAIRING_CODE_SPENT.into()));
            }
            _ => return Err(refused(status, &body)),
        };
        self.saved(server, account, &device, &key)
    }

    /// The account as the server counts it; none when this device has no cloud set up.
    pub async fn status(&self) -> Result<Option<CloudStatus>, CloudError> {
        if crate::lock(&self.config).is_none() {
            return Ok(None);
        }
        let s = self.session()?;
        let (status, body) = self
            .send(
                &s.server,
                &s.device,
                reqwest::Method::GET,
                "/v1/account",
                None,
                None,
            )
            .await?;
        if status != 200 {
            return Err(refused(status, &body));
        }
        let this = B64.encode(s.device.verifying_key().as_bytes());
        let devices = body["devices"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|d| {
                let key = d["key"].as_str()?.to_owned();
                Some(CloudDevice {
                    this_device: key == this,
                    key,
                    kind: d["kind"].as_str().unwrap_or_default().to_owned(),
                    added_at: d["added_at"].as_i64().unwrap_or(0),
                })
            })
            .collect();
        Ok(Some(CloudStatus {
            server: s.server,
            account: s.account,
            devices,
            used_bytes: body["used_bytes"].as_i64().unwrap_or(0),
            quota_bytes: body["quota_bytes"].as_i64().unwrap_or(0),
        }))
    }

    /// Removes another device of the account (its key from [`CloudStatus::devices`]): the
    /// server refuses that device's next request. This device is not removed here: it leaves
    /// when another device removes it.
    pub async fn remove_device(&self, key: &str) -> Result<(), CloudError> {
        let s = self.session()?;
        if key == B64.encode(s.device.verifying_key().as_bytes()) {
            return Err(CloudError::Invalid(
                "this device cannot remove itself: remove it on another device of the account (云端 → 移除)".into(),
            ));
        }
        if B64.decode(key).map_or(true, |k| k.len() != 32) {
            return Err(CloudError::Invalid(format!(
                "{key:?} is not a device key of this account"
            )));
        }
        let (status, body) = self
            .send(
                &s.server,
                &s.device,
                reqwest::Method::DELETE,
                &format!("/v1/devices/{key}"),
                None,
                None,
            )
            .await?;
        match status {
            200 => Ok(()),
            404 => Err(CloudError::Invalid(
                "that device is no longer one of this account's: it was removed already".into(),
            )),
            _ => Err(refused(status, &body)),
        }
    }

    fn record_path(s: &Session, plugin: &str, name: &str) -> String {
        format!("/v1/records/{}/{name}", s.key.plugin_name(plugin))
    }

    /// Opens a record's sealed value filed under the key name `name`: (key, value). The seal
    /// is bound to the account, the plugin, the key's name and the version, and the key inside
    /// must be the one named: a record the server moved, swapped or kept back from an older
    /// version does not open, and is refused.
    fn open(
        s: &Session,
        plugin: &str,
        name: &str,
        version: i64,
        sealed: &str,
    ) -> Result<(String, Value), CloudError> {
        let tampered =
            || unavailable("a record the cloud returned does not open with this account's key");
        let sealed = B64.decode(sealed).map_err(|_| tampered())?;
        let bound = Bound {
            account: &s.account,
            plugin,
            key: name,
            version,
        };
        let plain = s.key.open(&bound, &sealed).ok_or_else(tampered)?;
        let inner: Value = serde_json::from_slice(&plain).map_err(|_| tampered())?;
        match (inner["key"].as_str(), inner.get("value")) {
            (Some(key), Some(value)) if s.key.key_name(plugin, key) == name => {
                Ok((key.to_owned(), value.clone()))
            }
            _ => Err(tampered()),
        }
    }

    /// A plugin's record, or none.
    pub async fn get(&self, plugin: &str, key: &str) -> Result<Option<Entry>, CloudError> {
        let s = self.session()?;
        let name = s.key.key_name(plugin, key);
        let path = Self::record_path(&s, plugin, &name);
        let (status, body) = self
            .send(
                &s.server,
                &s.device,
                reqwest::Method::GET,
                &path,
                None,
                None,
            )
            .await?;
        match status {
            404 => Ok(None),
            200 => {
                let version = body["version"].as_i64().unwrap_or(0);
                match body["value"].as_str() {
                    None => Ok(None),
                    Some(sealed) => {
                        let (_, value) = Self::open(&s, plugin, &name, version, sealed)?;
                        Ok(Some(Entry { value, version }))
                    }
                }
            }
            _ => Err(refused(status, &body)),
        }
    }

    /// A plugin's records: (key, version), by key.
    pub async fn list(&self, plugin: &str) -> Result<Vec<(String, i64)>, CloudError> {
        let s = self.session()?;
        let path = format!("/v1/records/{}", s.key.plugin_name(plugin));
        let (status, body) = self
            .send(
                &s.server,
                &s.device,
                reqwest::Method::GET,
                &path,
                None,
                None,
            )
            .await?;
        if status != 200 {
            return Err(refused(status, &body));
        }
        let mut out = Vec::new();
        for record in body["records"].as_array().into_iter().flatten() {
            let version = record["version"].as_i64().unwrap_or(0);
            let name = record["key"].as_str().unwrap_or_default();
            let sealed = record["value"].as_str().unwrap_or_default();
            let (key, _) = Self::open(&s, plugin, name, version, sealed)?;
            out.push((key, version));
        }
        out.sort();
        Ok(out)
    }

    /// Writes a plugin's record (none deletes it). With `if_version`, only over that version
    /// (`conflict` otherwise); without, over whatever is there. Returns the version written.
    pub async fn set(
        &self,
        plugin: &str,
        key: &str,
        value: Option<&Value>,
        if_version: Option<i64>,
    ) -> Result<i64, CloudError> {
        let s = self.session()?;
        let plain = value.map(|v| json!({ "key": key, "value": v }).to_string().into_bytes());
        if let Some(plain) = &plain
            && plain.len() > MAX_VALUE_BYTES
        {
            return Err(CloudError::Invalid(format!(
                "a cloud value is at most {MAX_VALUE_BYTES} bytes as JSON; this one is {}",
                plain.len()
            )));
        }
        let name = s.key.key_name(plugin, key);
        let path = Self::record_path(&s, plugin, &name);
        let mut current = match if_version {
            Some(v) => v,
            None => self.current_version(&s, &path).await?,
        };
        for _ in 0..SET_TRIES {
            let version = current + 1;
            let sealed = plain.as_ref().map(|p| {
                B64.encode(s.key.seal(
                    &Bound {
                        account: &s.account,
                        plugin,
                        key: &name,
                        version,
                    },
                    p,
                ))
            });
            let body = json!({ "version": version, "value": sealed });
            let request_id = B64.encode(random::<16>());
            // A write whose answer was lost goes again with the same request id: the server
            // applies it once.
            let mut sent = self
                .send(
                    &s.server,
                    &s.device,
                    reqwest::Method::PUT,
                    &path,
                    Some(&body),
                    Some(&request_id),
                )
                .await;
            if matches!(sent, Err(CloudError::Unavailable(_))) {
                sent = self
                    .send(
                        &s.server,
                        &s.device,
                        reqwest::Method::PUT,
                        &path,
                        Some(&body),
                        Some(&request_id),
                    )
                    .await;
            }
            let (status, answer) = sent?;
            match status {
                200 => return Ok(version),
                409 => {
                    let at = answer["version"].as_i64().unwrap_or(0);
                    if if_version.is_some() {
                        return Err(CloudError::Conflict { current: at });
                    }
                    current = at;
                }
                _ => return Err(refused(status, &answer)),
            }
        }
        Err(CloudError::Conflict { current })
    }

    async fn current_version(&self, s: &Session, path: &str) -> Result<i64, CloudError> {
        let (status, body) = self
            .send(&s.server, &s.device, reqwest::Method::GET, path, None, None)
            .await?;
        match status {
            404 => Ok(0),
            200 => Ok(body["version"].as_i64().unwrap_or(0)),
            _ => Err(refused(status, &body)),
        }
    }
}

/// A server's refusal as the plugin's code.
fn refused(status: u16, body: &Value) -> CloudError {
    let message = body["message"]
        .as_str()
        .unwrap_or("no reason given")
        .to_owned();
    match (status, body["code"].as_str()) {
        (507, _) | (_, Some("quota_exceeded")) => CloudError::QuotaExceeded(message),
        (409, Some("conflict")) => CloudError::Conflict {
            current: body["version"].as_i64().unwrap_or(0),
        },
        _ => CloudError::Unavailable(format!("the cloud answered {status}: {message}")),
    }
}
