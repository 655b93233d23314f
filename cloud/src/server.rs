//! The HTTP surface: axum routes over a [`Storage`], each request signed by a device
//! ([`crate::auth`]), limited in size and rate per account, counted for `/metrics`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, MatchedPath, Path, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

use crate::auth::{self, AuthError, Signed};
use crate::metrics::Metrics;
use crate::storage::{MAX_VALUE_BYTES, QUOTA_BYTES, Storage, StorageError, Write, Written};

/// A request's body: a 64 KiB value in base64 with its JSON around it fits.
pub const MAX_BODY_BYTES: usize = 96 * 1024;

/// A pairing token (the QR another device scans) lasts ten minutes and is used once.
pub const PAIRING_SECS: i64 = 600;

/// Request ids and nonces are remembered a day (far longer than a timestamp stays fresh).
const REMEMBER_SECS: i64 = 24 * 3600;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Requests an account (or a device without one) may make per second, sustained.
    pub per_second: f64,
    /// And in a burst.
    pub burst: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            per_second: 50.0,
            burst: 200.0,
        }
    }
}

pub struct App {
    storage: Box<dyn Storage>,
    limits: Limits,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
    pub metrics: Metrics,
}

impl App {
    pub fn new(storage: Box<dyn Storage>, limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            storage,
            limits,
            buckets: Mutex::default(),
            metrics: Metrics::default(),
        })
    }

    /// One token from the caller's bucket; false when it is empty. Each replica keeps its own
    /// buckets, so N replicas allow N times the rate: the limit is against floods, not billing.
    fn take_token(&self, who: &str) -> bool {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() > 100_000 {
            buckets.retain(|_, (_, last)| now.duration_since(*last) < Duration::from_secs(60));
        }
        let (tokens, last) = buckets
            .entry(who.to_owned())
            .or_insert((self.limits.burst, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * self.limits.per_second)
            .min(self.limits.burst);
        *last = now;
        if *tokens < 1.0 {
            return false;
        }
        *tokens -= 1.0;
        true
    }

    /// The device that signed the request, after its timestamp, signature and nonce are checked.
    async fn authenticate(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Signed, ApiError> {
        let signed = Signed::parse(|name| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })?;
        let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
        signed.verify(method.as_str(), path, body, now())?;
        if !self
            .storage
            .first_use_of_nonce(&signed.device, &signed.nonce, signed.timestamp)
            .await?
        {
            return Err(AuthError::Replayed.into());
        }
        Ok(signed)
    }

    /// An authenticated device's account, within its rate.
    async fn account(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<(Signed, String), ApiError> {
        let signed = self.authenticate(method, uri, headers, body).await?;
        let account = match self.storage.account_of_device(&signed.device).await? {
            Some(account) => account,
            None if self.storage.was_removed(&signed.device).await? => {
                return Err(ApiError::Removed);
            }
            None => return Err(ApiError::NoAccount),
        };
        if !self.take_token(&account) {
            return Err(ApiError::RateLimited);
        }
        Ok((signed, account))
    }
}

pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Why a request was refused, as the client reads it: a status and a `code`.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Auth(#[from] AuthError),
    #[error("this device belongs to no account: set one up or join one")]
    NoAccount,
    #[error(
        "this device was removed from its account by another of the account's devices: join again with the recovery code"
    )]
    Removed,
    #[error("this device already belongs to an account")]
    AlreadyRegistered,
    #[error("the pairing token or recovery code is unknown, used or expired")]
    BadJoin,
    #[error("too many requests: slow down")]
    RateLimited,
    #[error("{0}")]
    BadRequest(String),
    #[error("the value is over {MAX_VALUE_BYTES} bytes")]
    TooLarge,
    #[error("no such record")]
    NotFound,
    #[error("this account has no device with that key")]
    NoSuchDevice,
    #[error("database: {0}")]
    Storage(#[from] StorageError),
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = match &self {
            Self::Auth(AuthError::Replayed) => (StatusCode::UNAUTHORIZED, "replayed"),
            Self::Auth(AuthError::Stale) => (StatusCode::UNAUTHORIZED, "stale"),
            Self::Auth(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            Self::NoAccount => (StatusCode::FORBIDDEN, "no_account"),
            Self::Removed => (StatusCode::FORBIDDEN, "device_removed"),
            Self::AlreadyRegistered => (StatusCode::CONFLICT, "already_registered"),
            Self::BadJoin => (StatusCode::FORBIDDEN, "bad_join"),
            Self::RateLimited => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            Self::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
            Self::NotFound => (StatusCode::NOT_FOUND, "not_found"),
            Self::NoSuchDevice => (StatusCode::NOT_FOUND, "no_such_device"),
            Self::Storage(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        };
        // A database error's words stay in the server's log: they may name tables, not values.
        let message = match &self {
            Self::Storage(e) => {
                eprintln!("harness-cloud: {e}");
                "the cloud's database is unavailable".to_owned()
            }
            other => other.to_string(),
        };
        (status, Json(json!({ "code": code, "message": message }))).into_response()
    }
}

/// The router, with the body limit and the metrics around every route.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics))
        .route("/v1/accounts", post(create_account))
        .route("/v1/pairings", post(create_pairing))
        .route("/v1/join", post(join))
        .route("/v1/account", get(account))
        .route("/v1/devices/{device}", delete(remove_device))
        .route("/v1/records/{plugin}", get(list))
        .route("/v1/records/{plugin}/{key}", get(read).put(write))
        .layer(middleware::from_fn_with_state(app.clone(), track))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(app)
}

/// Serves until `shutdown` completes, then finishes the requests under way (graceful).
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let pruner = tokio::spawn({
        let app = app.clone();
        async move {
            loop {
                tokio::time::sleep(Duration::from_secs(60)).await;
                let now = now();
                if let Err(e) = app.storage.prune(now - REMEMBER_SECS, now).await {
                    eprintln!("harness-cloud: prune: {e}");
                }
            }
        }
    });
    let served = axum::serve(listener, router(app))
        .with_graceful_shutdown(shutdown)
        .await;
    pruner.abort();
    served
}

async fn track(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    app.metrics
        .observe(&route, response.status().as_u16(), started.elapsed());
    response
}

async fn metrics(State(app): State<Arc<App>>) -> impl IntoResponse {
    (
        [("content-type", "text/plain; version=0.0.4")],
        app.metrics.render(),
    )
}

fn random_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the system's random source");
    B64.encode(bytes)
}

fn parse<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::BadRequest(format!("the body: {e}")))
}

/// The recovery key's signature letting `device` join (or create) its account.
fn check_recovery(
    device: &[u8; 32],
    timestamp: i64,
    key: &str,
    signature: &str,
) -> Result<[u8; 32], ApiError> {
    let key: [u8; 32] = auth::decode_array(key).ok_or(ApiError::BadJoin)?;
    let signature: [u8; 64] = auth::decode_array(signature).ok_or(ApiError::BadJoin)?;
    auth::verify(&key, &auth::join_message(device, timestamp), &signature)
        .map_err(|_| ApiError::BadJoin)?;
    Ok(key)
}

#[derive(Deserialize)]
struct RecoveryProof {
    recovery_key: String,
    recovery_signature: String,
}

/// What a device says it is at setup or join, for the account's device list: one of a few
/// words, never a name the student typed. Anything else (or nothing) is kept as empty.
fn device_kind(body: &[u8]) -> &'static str {
    #[derive(Deserialize)]
    struct Kind {
        device_kind: Option<String>,
    }
    let said = serde_json::from_slice::<Kind>(body)
        .ok()
        .and_then(|k| k.device_kind);
    match said.as_deref() {
        Some("android") => "android",
        Some("ios") => "ios",
        Some("terminal") => "terminal",
        _ => "",
    }
}

async fn create_account(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let signed = app.authenticate(&method, &uri, &headers, &body).await?;
    if !app.take_token(&B64.encode(signed.device)) {
        return Err(ApiError::RateLimited);
    }
    let proof: RecoveryProof = parse(&body)?;
    let recovery = check_recovery(
        &signed.device,
        signed.timestamp,
        &proof.recovery_key,
        &proof.recovery_signature,
    )?;
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).expect("the system's random source");
    let account = B64.encode(id);
    if !app
        .storage
        .create_account(
            &account,
            &signed.device,
            device_kind(&body),
            &recovery,
            now(),
        )
        .await?
    {
        return Err(ApiError::AlreadyRegistered);
    }
    Ok((StatusCode::CREATED, Json(json!({ "account": account }))).into_response())
}

async fn create_pairing(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (_, account) = app.account(&method, &uri, &headers, &body).await?;
    let token = random_token();
    let expires_at = now() + PAIRING_SECS;
    app.storage
        .create_pairing(&account, &Sha256::digest(token.as_bytes()), expires_at)
        .await?;
    Ok(Json(json!({ "token": token, "expires_at": expires_at })).into_response())
}

#[derive(Deserialize)]
struct Join {
    pairing_token: Option<String>,
    #[serde(flatten)]
    recovery: Option<RecoveryProof>,
}

async fn join(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let signed = app.authenticate(&method, &uri, &headers, &body).await?;
    if !app.take_token(&B64.encode(signed.device)) {
        return Err(ApiError::RateLimited);
    }
    let join: Join = parse(&body)?;
    let account = match (join.pairing_token, join.recovery) {
        (Some(token), _) => {
            app.storage
                .take_pairing(&Sha256::digest(token.as_bytes()), now())
                .await?
        }
        (None, Some(proof)) => {
            let key = check_recovery(
                &signed.device,
                signed.timestamp,
                &proof.recovery_key,
                &proof.recovery_signature,
            )?;
            app.storage.account_of_recovery_key(&key).await?
        }
        (None, None) => {
            return Err(ApiError::BadRequest(
                "the body names neither pairing_token nor recovery_key".into(),
            ));
        }
    };
    let account = account.ok_or(ApiError::BadJoin)?;
    if !app
        .storage
        .add_device(&account, &signed.device, device_kind(&body), now())
        .await?
    {
        return Err(ApiError::AlreadyRegistered);
    }
    Ok(Json(json!({ "account": account })).into_response())
}

async fn account(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (_, account) = app.account(&method, &uri, &headers, &body).await?;
    let devices: Vec<_> = app
        .storage
        .devices(&account)
        .await?
        .into_iter()
        .map(|d| json!({ "key": B64.encode(d.key), "added_at": d.added_at, "kind": d.kind }))
        .collect();
    let used = app.storage.used_bytes(&account).await?;
    Ok(Json(json!({ "account": account, "devices": devices, "used_bytes": used, "quota_bytes": QUOTA_BYTES })).into_response())
}

/// Removes another device (its public key, base64url) from the caller's account: that device's
/// next request is refused `device_removed`. A device may remove itself (it leaves).
async fn remove_device(
    State(app): State<Arc<App>>,
    Path(device): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (_, account) = app.account(&method, &uri, &headers, &body).await?;
    let key: [u8; 32] = auth::decode_array(&device).ok_or_else(|| {
        ApiError::BadRequest("the device is its public key in base64url (32 bytes)".into())
    })?;
    if !app.storage.remove_device(&account, &key, now()).await? {
        return Err(ApiError::NoSuchDevice);
    }
    Ok(Json(json!({ "removed": device })).into_response())
}

/// Plugin and key names arrive HMAC'd by the client: short, URL-safe, never words.
fn check_name(name: &str) -> Result<(), ApiError> {
    match !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        true => Ok(()),
        false => Err(ApiError::BadRequest(
            "a plugin or key name is 1 to 128 of A-Z a-z 0-9 - _".into(),
        )),
    }
}

async fn list(
    State(app): State<Arc<App>>,
    Path(plugin): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (_, account) = app.account(&method, &uri, &headers, &body).await?;
    check_name(&plugin)?;
    let records: Vec<_> = app
        .storage
        .list(&account, &plugin)
        .await?
        .into_iter()
        .map(|(key, version, value)| json!({ "key": key, "version": version, "value": B64.encode(value) }))
        .collect();
    Ok(Json(json!({ "records": records })).into_response())
}

async fn read(
    State(app): State<Arc<App>>,
    Path((plugin, key)): Path<(String, String)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (_, account) = app.account(&method, &uri, &headers, &body).await?;
    check_name(&plugin)?;
    check_name(&key)?;
    let record = app
        .storage
        .get(&account, &plugin, &key)
        .await?
        .ok_or(ApiError::NotFound)?;
    let value = record.value.map(|v| B64.encode(v));
    Ok(Json(json!({ "version": record.version, "value": value })).into_response())
}

#[derive(Deserialize)]
struct Put {
    version: i64,
    value: Option<String>,
}

async fn write(
    State(app): State<Arc<App>>,
    Path((plugin, key)): Path<(String, String)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (_, account) = app.account(&method, &uri, &headers, &body).await?;
    check_name(&plugin)?;
    check_name(&key)?;
    let put: Put = parse(&body)?;
    let value = put
        .value
        .map(|v| {
            B64.decode(v)
                .map_err(|_| ApiError::BadRequest("value is not base64url".into()))
        })
        .transpose()?;
    if value.as_ref().is_some_and(|v| v.len() > MAX_VALUE_BYTES) {
        return Err(ApiError::TooLarge);
    }
    let request_id = headers.get(auth::REQUEST_ID).and_then(|v| v.to_str().ok());
    if request_id.is_some_and(|id| id.is_empty() || id.len() > 64) {
        return Err(ApiError::BadRequest(format!(
            "{} is 1 to 64 characters",
            auth::REQUEST_ID
        )));
    }
    let written = app
        .storage
        .write(&Write {
            account: &account,
            plugin: &plugin,
            key: &key,
            version: put.version,
            value: value.as_deref(),
            request_id,
            now: now(),
        })
        .await?;
    Ok(match written {
        Written::Stored { version } => Json(json!({ "version": version })).into_response(),
        Written::Conflict { current } => (
            StatusCode::CONFLICT,
            Json(json!({ "code": "conflict", "message": "another write came first", "version": current })),
        )
            .into_response(),
        Written::QuotaExceeded { used } => (
            StatusCode::INSUFFICIENT_STORAGE,
            Json(json!({
                "code": "quota_exceeded",
                "message": format!("the account holds {used} of {QUOTA_BYTES} bytes"),
            })),
        )
            .into_response(),
    })
}
