//! Remote plugins: MCP servers reached with `rmcp`, the official Rust MCP SDK, as the client. A
//! server's tools become plugin `mcp-<name>` (`Plugin::from_mcp`: `readOnlyHint: true` is read,
//! anything else write; every result untrusted), and each call goes through the one invoke path
//! to [`RemoteServer`], the plugin's handler.
//!
//! Where a server may be (DESIGN.md §5, [`check_url`]): in the app, `https://` to a public
//! address only — the address guard of remote plugins applies, in the client's own resolver, so
//! a name that resolves to loopback or a private network is refused, like a literal one. A
//! development tool (the CLI, `Options::development_servers`) also reaches a server on this
//! machine: `localhost` (connected only when every address it resolves to is loopback),
//! `127.0.0.0/8` or `[::1]`, over http or https. Nothing else: no plain http to any other host,
//! no private address, no redirects.
//!
//! Revisions. A server is first asked `server/discover` (MCP 2026-07-28: no session, each
//! request carries its revision in `_meta` and in the `MCP-Protocol-Version` header, rmcp's
//! `ClientLifecycleMode::Auto`); one that answers it as a server of an earlier revision does
//! (a 4xx, a JSON-RPC error) is spoken to with `initialize` offering 2025-11-25, and is kept
//! as such ([`RemoteServer::lifecycle`]) so its later connects skip the probe. The probe costs
//! a server of 2025 one more round trip at its first connect.
//!
//! Transports. A server is first spoken to over Streamable HTTP (rmcp's client). One that
//! answers the `initialize` POST with 400, 404 or 405 is taken for a server of the older
//! HTTP+SSE transport (protocol 2024-11-05), as the MCP specification's backwards-compatibility
//! section says: its URL is opened with GET as an event stream whose first event, `endpoint`,
//! names where each message is POSTed, and the answers arrive as `message` events on that
//! stream. rmcp dropped its client for that transport (0.11, rust-sdk PR #562), so
//! [`LegacySse`] is ours, on the same guarded HTTP client and bearer token. The endpoint must be
//! on the server's own origin and pass [`check_url`]: a server may not send the client's
//! messages, token included, anywhere else.
//!
//! A bearer token is sent on every request; one kept in the keystore is read at each connect
//! (and each re-initialised session), so a changed token is used from the next connect on. A
//! server that refuses it (HTTP 401) is reported as such, naming what to change.
//!
//! A server that announces `notifications/tools/list_changed` has its plugin's tool list
//! installed again by itself ([`Remotes`]), listed on the session that announced it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientJsonRpcMessage, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ErrorData as McpError, FormElicitationCapability, NumberOrString, PingRequest,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestParamsMeta,
    ServerJsonRpcMessage, ServerResult, UrlElicitationCapability,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RoleClient,
    RunningService, ServiceError, TxJsonRpcMessage,
};
use rmcp::transport::common::client_side_sse::{BoxedSseResponse, NeverRetry};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use rmcp::{ClientHandler, Peer, ServiceExt};
use rustc_hash::FxHashMap;
use serde_json::{Value, json};
use sse_stream::SseStream;
use url::{Host, Url};

use super::elicitation::{Elicitation, ElicitationAnswer, ElicitationKind};
use super::{bounded, oauth};
use crate::error::EngineError;
use crate::handler::{Asker, Assessment, PluginHandler, Progress, ProgressUpdate, ToolContext};
use crate::installed::InstalledPlugins;
use crate::registry::{LoadError, McpTool, Plugin, PluginKind, Tool};
use crate::secrets::SecretStore;
use crate::turn::Scope;

/// seed: a remote call must not hang a turn; longer than the gate's 10 s since a server may
/// itself call out.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How long closing a session waits for the server to take its end.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The keystore key of a remote server's bearer token.
pub fn token_key(name: &str) -> String {
    format!("mcp.{name}.token")
}

/// Where remote servers may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Servers {
    /// The app: `https://` to a public address only (DESIGN.md §5).
    PublicOnly,
    /// A development tool (the CLI) also reaches a server on this machine: `http://` or
    /// `https://` to `localhost`, `127.0.0.1` (any of 127.0.0.0/8) or `[::1]`, the addresses a
    /// plugin author types.
    AlsoLoopback,
}

/// What to tell someone who gave the app a server on this machine or a private network.
const PUBLIC_ONLY: &str = "the app adds a remote server only at a public https:// address; give \
                           the server's public address (a server on this computer can be tried \
                           with the harness CLI, a development tool)";

/// Checks where a server is before anything is sent; returns the URL and whether it is the
/// loopback development case (reached with [`crate::gates::loopback_client`], not the address
/// guard).
pub fn check_url(raw: &str, servers: Servers) -> Result<(Url, bool), String> {
    let url = Url::parse(raw).map_err(|e| format!("{raw} is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "{raw}: {} is not https; give the server's https:// address",
            url.scheme()
        ));
    }
    // A name for this machine; the resolver of the loopback client checks what it resolves to.
    let localhost = |d: &str| d.eq_ignore_ascii_case("localhost");
    let address = match url.host() {
        Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        Some(Host::Domain(d)) if localhost(d) => None,
        Some(Host::Domain(_)) => {
            // Any other name: a public server over https, whose addresses the guarded
            // resolver checks as it connects (a name resolving to a private one is refused).
            if url.scheme() != "https" {
                return Err(format!(
                    "{raw}: a remote server is reached over https; write the URL with https://"
                ));
            }
            return Ok((url, false));
        }
        None => return Err(format!("{raw} names no host")),
    };
    let loopback = address.is_none_or(|ip| ip.is_loopback());
    match (address, servers) {
        (_, Servers::AlsoLoopback) if loopback => Ok((url, true)),
        (Some(ip), _) if crate::gates::refused_address(ip) => Err(format!(
            "{raw}: {ip} is a private or local address, which remote servers may not be at; {}",
            if servers == Servers::AlsoLoopback {
                "a server on this machine is reached at localhost, 127.0.0.1 or [::1]"
            } else {
                PUBLIC_ONLY
            }
        )),
        (Some(_), _) if url.scheme() == "https" => Ok((url, false)),
        (Some(_), _) => Err(format!(
            "{raw}: a remote server is reached over https; write the URL with https://"
        )),
        (None, _) => Err(format!("{raw}: localhost is this device; {PUBLIC_ONLY}")),
    }
}

type Session = RunningService<RoleClient, Listener>;

/// Told that a server's tool list changed, with the session that said so.
type ToolsChanged = Arc<dyn Fn(Peer<RoleClient>) + Send + Sync>;

/// The client's side of a session. It offers elicitation (forms and pages, asked of the
/// student through the running call's broker: [`Questions`]) and nothing else (no roots or
/// sampling: the app does not let a server use its files or its model); a changed tool list is
/// passed up.
struct Listener {
    tools_changed: Option<ToolsChanged>,
    questions: Arc<Questions>,
    /// A development tool's server on this machine: a page on this machine may be offered.
    loopback: bool,
}

/// Who answers a server's question for one running call.
#[derive(Clone)]
struct Questioner {
    asker: Asker,
    plugin: String,
    plugin_title: String,
    conversation: Option<String>,
    tainted: bool,
    /// Where the call's progress goes (the chat's running call).
    progress: Option<Progress>,
}

/// A server's questions (MCP elicitation) and the calls that may be asked them: a question
/// goes to the newest running call with someone to answer, and while one is open the calls'
/// deadlines stand still (the turn waits for the student).
#[derive(Default)]
struct Questions {
    calls: Mutex<Vec<(u64, Questioner)>>,
    next: std::sync::atomic::AtomicU64,
    open: tokio::sync::watch::Sender<usize>,
}

impl Questions {
    /// Registers a running call; it is forgotten when the returned guard drops.
    fn running(self: &Arc<Self>, who: Questioner) -> RunningCall {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        crate::lock(&self.calls).push((id, who));
        RunningCall {
            questions: self.clone(),
            id,
        }
    }

    /// A running call's progress, by the id its request carried as its progress token; a
    /// token no running call has (a call that ended, or a server's invention) is dropped.
    fn report(&self, id: u64, update: ProgressUpdate) {
        let progress = crate::lock(&self.calls)
            .iter()
            .find(|(call, _)| *call == id)
            .and_then(|(_, who)| who.progress.clone());
        if let Some(progress) = progress {
            (progress.0)(update);
        }
    }

    fn newest(&self) -> Option<Questioner> {
        crate::lock(&self.calls).last().map(|(_, who)| who.clone())
    }

    /// Waits out `timeout` with no question open; a question opened meanwhile starts it
    /// again once answered.
    async fn deadline(&self, timeout: Duration) {
        let mut open = self.open.subscribe();
        loop {
            let _ = open.wait_for(|n| *n == 0).await;
            tokio::select! {
                () = tokio::time::sleep(timeout) => return,
                _ = open.wait_for(|n| *n > 0) => {}
            }
        }
    }
}

struct RunningCall {
    questions: Arc<Questions>,
    id: u64,
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        crate::lock(&self.questions.calls).retain(|(id, _)| *id != self.id);
    }
}

/// A question open, for as long as it lives.
struct Open<'a>(&'a Questions);

impl<'a> Open<'a> {
    fn new(questions: &'a Questions) -> Self {
        questions.open.send_modify(|n| *n += 1);
        Self(questions)
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.open.send_modify(|n| *n -= 1);
    }
}

impl Listener {
    /// The question `request` as the student is shown it, or why the app refuses it.
    fn question(
        &self,
        who: &Questioner,
        request: ElicitRequestParams,
    ) -> Result<Elicitation, String> {
        let (message, kind) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(&requested_schema)
                    .map_err(|e| format!("the requested schema is unreadable: {e}"))?;
                let fields = Elicitation::form(&message, &schema)?;
                (message, ElicitationKind::Form { fields, schema })
            }
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                let (url, host) = Elicitation::page(&url, self.loopback)?;
                (message, ElicitationKind::Page { url, host })
            }
            _ => return Err("the app answers forms and pages only".into()),
        };
        Ok(Elicitation {
            plugin: who.plugin.clone(),
            plugin_title: who.plugin_title.clone(),
            message: Elicitation::message(&message),
            kind,
            conversation: who.conversation.clone(),
            tainted: who.tainted,
        })
    }
}

impl ClientHandler for Listener {
    /// The client introduces itself as the app, not as the SDK it is built with, and offers
    /// elicitation in both its modes.
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.client_info =
            rmcp::model::Implementation::new("pku-harness", env!("CARGO_PKG_VERSION"));
        // MCP 2026-07-28 has no `initialize`: it is offered through `server/discover` only, and
        // the handshake offers the newest revision that has one.
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        let mut form = FormElicitationCapability::new();
        form.schema_validation = Some(true);
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(form);
        elicitation.url = Some(UrlElicitationCapability::new());
        info.capabilities.elicitation = Some(elicitation);
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        // No call with someone to answer (a scheduled one, or none running): declined.
        let Some(who) = self.questions.newest() else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let question = self
            .question(&who, request)
            .map_err(|why| McpError::invalid_params(why, None))?;
        let answer = {
            let _open = Open::new(&self.questions);
            who.asker.0.elicit(question.clone()).await
        };
        Ok(match (answer, &question.kind) {
            (ElicitationAnswer::Accept(content), ElicitationKind::Form { schema, .. }) => {
                // A shell's answer is checked too, before the server is sent it.
                Elicitation::check(schema, &content)
                    .map_err(|why| McpError::invalid_params(why, None))?;
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            (ElicitationAnswer::Accept(_), ElicitationKind::Page { .. }) => {
                ElicitResult::new(ElicitationAction::Accept)
            }
            (ElicitationAnswer::Decline, _) => ElicitResult::new(ElicitationAction::Decline),
            (ElicitationAnswer::Cancel, _) => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    /// MCP progress: a call's request carries its progress token (the running call's id);
    /// what the server reports for it goes to that call's chat.
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let NumberOrString::Number(id) = params.progress_token.0
            && let Ok(id) = u64::try_from(id)
        {
            self.questions.report(
                id,
                ProgressUpdate {
                    progress: params.progress,
                    total: params.total,
                    message: params.message,
                },
            );
        }
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Some(changed) = &self.tools_changed {
            changed(context.peer);
        }
    }
}

/// Where a server's bearer token comes from.
enum Token {
    None,
    Given(String),
    /// The keystore's, read at each connect and never held under a lock: the bearer token
    /// given when the server was added (`key`), else the access token of the sign-in to it
    /// (plugins::oauth), refreshed when it has expired.
    Keystore {
        secrets: Arc<dyn SecretStore>,
        key: String,
        access: Box<oauth::Access>,
    },
}

impl Token {
    async fn read(&self) -> Result<Option<String>, String> {
        match self {
            Token::None => Ok(None),
            Token::Given(token) => Ok(Some(token.clone())),
            Token::Keystore {
                secrets,
                key,
                access,
            } => match secrets
                .get(key)
                .map_err(|e| format!("could not read the server's token {key}: {e}"))?
            {
                Some(token) => Ok(Some(token)),
                None if access.signed_in()? => access.token().await.map(Some),
                None => Ok(None),
            },
        }
    }

    /// After the server refused the token mid-session with `challenge`: a sign-in's access
    /// token is refreshed (a bearer token is read again from the keystore at the next connect
    /// anyway).
    async fn refresh(&self, challenge: Option<&str>) -> Result<(), String> {
        match self {
            Token::Keystore {
                secrets,
                key,
                access,
            } => match secrets.get(key) {
                Ok(None) if access.signed_in()? => access.refresh(challenge).await,
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// A 401 from the server at `url`, saying what to change; never the token itself.
    fn refused(&self, url: &Url, sent: bool) -> String {
        match (self, sent) {
            (_, false) => format!(
                "the server at {url} refused the connection (HTTP 401 Unauthorized): it needs \
                 a bearer token or a sign-in; give the server's token when adding it"
            ),
            (Token::Keystore { access, .. }, true) if access.signed_in().unwrap_or(false) => {
                format!(
                    "the server at {url} refused the app's sign-in (HTTP 401 Unauthorized); \
                     sign in to the server again"
                )
            }
            (Token::Keystore { key, .. }, true) => format!(
                "the server at {url} refused its token, kept in the keystore as {key} (HTTP 401 \
                 Unauthorized); remove the plugin and add the server again with its current \
                 token"
            ),
            _ => format!(
                "the server at {url} refused the token (HTTP 401 Unauthorized); check the \
                 bearer token given for it"
            ),
        }
    }
}

/// A server's refusal of the app for want of a sign-in or a token (HTTP 401).
#[derive(Clone, Debug)]
pub(crate) struct Unauthorized {
    /// Its `WWW-Authenticate` header, where the sign-in's discovery begins.
    pub(crate) challenge: Option<String>,
}

/// One MCP server: its URL, token and open session, reconnected after the session ends.
pub struct RemoteServer {
    url: Url,
    servers: Servers,
    loopback: bool,
    token: Arc<Token>,
    timeout: Duration,
    tools_changed: Option<ToolsChanged>,
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
    /// The running calls that may be asked the server's questions.
    questions: Arc<Questions>,
    /// The server's last 401, if its last connect ended in one.
    unauthorized: Mutex<Option<Unauthorized>>,
    /// An open session's request was answered 401 (set by the session's [`Probe`]).
    rejected: Arc<Mutex<Option<Rejection>>>,
    /// An open session's request was answered 403 `insufficient_scope`: its challenge.
    insufficient: Arc<Mutex<Option<String>>>,
    /// The shell's browser, to sign in again for more scopes (a step-up).
    browser: Option<Arc<dyn oauth::Browser>>,
    /// The server spoke a revision with `initialize` (2025 and before) at its last connect:
    /// the next connect begins with `initialize`, not `server/discover`, so a server that
    /// never answers `server/discover` costs rmcp's wait for it (10 s) once, not every time.
    initializes: AtomicBool,
    /// The open session has listed the tools, so rmcp knows each tool's schema.
    listed: AtomicBool,
}

impl RemoteServer {
    /// Checks `url` against where `servers` may be, without connecting.
    pub fn new(
        url: &str,
        token: Option<String>,
        timeout: Duration,
        servers: Servers,
    ) -> Result<Self, String> {
        let (url, loopback) = check_url(url, servers)?;
        Ok(Self {
            url,
            servers,
            loopback,
            token: Arc::new(token.map_or(Token::None, Token::Given)),
            timeout,
            tools_changed: None,
            session: tokio::sync::Mutex::new(None),
            questions: Arc::default(),
            unauthorized: Mutex::new(None),
            rejected: Arc::default(),
            insufficient: Arc::default(),
            browser: None,
            initializes: AtomicBool::new(false),
            listed: AtomicBool::new(false),
        })
    }

    /// Remote server `name`, whose token (if any) is the keystore's: the bearer token given
    /// for it ([`token_key`]), else the access token of the sign-in to it
    /// ([`oauth::credentials_key`]).
    pub(crate) fn with_keystore(
        url: &str,
        secrets: Arc<dyn SecretStore>,
        name: &str,
        timeout: Duration,
        servers: Servers,
    ) -> Result<Self, String> {
        let mut server = Self::new(url, None, timeout, servers)?;
        let access = Box::new(oauth::Access::new(
            server.url.clone(),
            servers,
            secrets.clone(),
            oauth::credentials_key(name),
        ));
        server.token = Arc::new(Token::Keystore {
            secrets,
            key: token_key(name),
            access,
        });
        Ok(server)
    }

    /// A server whose student may sign in again through `browser` when it asks for more
    /// access (403 `insufficient_scope`).
    pub(crate) fn with_browser(mut self, browser: Option<Arc<dyn oauth::Browser>>) -> Self {
        self.browser = browser;
        self
    }

    /// Where a session's [`Probe`] tells of a 401 or a 403 `insufficient_scope`.
    fn refusals(&self) -> Refusals {
        Refusals {
            rejected: self.rejected.clone(),
            insufficient: self.insufficient.clone(),
        }
    }

    /// Signs in again for the scopes `challenge` asks for, when the student can (a sign-in is
    /// kept and the shell has a browser); else the call's refusal in words.
    async fn step_up(&self, challenge: &str) -> Result<(), String> {
        match (&self.browser, &*self.token) {
            (
                Some(browser),
                Token::Keystore {
                    secrets,
                    key,
                    access,
                },
            ) if matches!(secrets.get(key), Ok(None)) && access.signed_in()? => {
                access.step_up(challenge, browser.as_ref()).await
            }
            _ => Err(self.asks_more(challenge)),
        }
    }

    /// Whether the student can sign in again to this server: the shell has a browser, and the
    /// server was added with no bearer token of its own (a sign-in, or nothing, is kept).
    fn can_sign_in_again(&self) -> bool {
        match (&self.browser, &*self.token) {
            (Some(_), Token::Keystore { secrets, key, .. }) => matches!(secrets.get(key), Ok(None)),
            _ => false,
        }
    }

    /// Signs in again after a 401 with `challenge` (the MCP authorization specification: the
    /// 401's `WWW-Authenticate` begins the sign-in): with the client registered at the first
    /// sign-in when one is kept, else as a new sign-in.
    async fn sign_in_again(&self, challenge: Option<&str>) -> Result<(), String> {
        match (&self.browser, &*self.token) {
            (Some(browser), Token::Keystore { access, .. }) => {
                access.sign_in_again(challenge, browser.as_ref()).await
            }
            _ => Err(self.token.refused(&self.url, true)),
        }
    }

    /// A 403 `insufficient_scope` the app could not meet, in words: the scopes it asked for.
    fn asks_more(&self, challenge: &str) -> String {
        let asked = challenge
            .split("scope=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("more");
        format!(
            "the server at {} refused the call: it asks for more access ({asked}) than the app \
             was given; remove the plugin and add the server again to sign in for it",
            self.url
        )
    }

    /// The server's refusal of the app at its last connect (HTTP 401), if it refused it.
    pub(crate) fn unauthorized(&self) -> Option<Unauthorized> {
        crate::lock(&self.unauthorized).clone()
    }

    /// Calls `changed` with the announcing session whenever the server says its tool list
    /// changed. It runs on the session's task: it must hand the work off, not wait for it.
    pub(crate) fn on_tools_changed(
        mut self,
        changed: impl Fn(Peer<RoleClient>) + Send + Sync + 'static,
    ) -> Self {
        self.tools_changed = Some(Arc::new(changed));
        self
    }

    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    fn listener(&self) -> Listener {
        Listener {
            tools_changed: self.tools_changed.clone(),
            questions: self.questions.clone(),
            loopback: self.loopback,
        }
    }

    async fn connect(&self) -> Result<Session, String> {
        let client = if self.loopback {
            crate::gates::loopback_client()
        } else {
            crate::gates::guarded_client(PluginKind::Remote)
        }
        .map_err(|e| format!("the HTTP client could not start: {e}"))?;
        let connecting = async {
            let probe = Probe::new(client.clone(), self.token.clone(), self.refusals());
            let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
            // A broken stream ends the session at once rather than being retried behind the
            // call's back: the call fails now, and the next one connects anew.
            config.retry_config = Arc::new(NeverRetry::default());
            let transport = StreamableHttpClientTransport::with_client(probe.clone(), config);
            let error = match self
                .listener()
                .serve_with_lifecycle(transport, self.lifecycle())
                .await
            {
                Ok(session) => {
                    let initializes = session
                        .peer()
                        .peer_info()
                        .is_some_and(|info| info.protocol_version.has_initialize());
                    self.initializes.store(initializes, Ordering::SeqCst);
                    return Ok(session);
                }
                Err(e) => e,
            };
            // A server may change what it speaks: the next connect asks it anew.
            self.initializes.store(false, Ordering::SeqCst);
            match probe.answer() {
                Some(Ok(StatusCode::UNAUTHORIZED)) => {
                    let challenge = probe.challenge();
                    // A token refused at the connect is refused as one refused mid-session is:
                    // a call refreshes it and goes once more (the CLI connects for every call).
                    if probe.sent_token() {
                        *crate::lock(&self.rejected) = Some(Rejection {
                            challenge: challenge.clone(),
                            sent: true,
                        });
                    }
                    *crate::lock(&self.unauthorized) = Some(Unauthorized { challenge });
                    Err(self.token.refused(&self.url, probe.sent_token()))
                }
                // MCP spec, backwards compatibility: a 4xx to the initialize POST is a server
                // of the older HTTP+SSE transport, or none at all (the GET says which).
                Some(Ok(
                    status @ (StatusCode::BAD_REQUEST
                    | StatusCode::NOT_FOUND
                    | StatusCode::METHOD_NOT_ALLOWED),
                )) => self.connect_legacy(client, status).await,
                Some(Err(keystore)) => Err(keystore),
                _ => Err(format!(
                    "could not connect to {}: {}",
                    self.url,
                    opening_words(&error)
                )),
            }
        };
        match tokio::time::timeout(self.timeout, connecting).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "could not connect to {}: no answer within {} s",
                self.url,
                self.timeout.as_secs()
            )),
        }
    }

    /// MCP 2026-07-28, backward compatibility: `server/discover` first, and `initialize`
    /// (offering 2025-11-25) when the server answers it as a server of 2025 does; straight to
    /// `initialize` when the server spoke such a revision at its last connect.
    fn lifecycle(&self) -> ClientLifecycleMode {
        if self.initializes.load(Ordering::SeqCst) {
            return ClientLifecycleMode::Initialize;
        }
        ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        }
    }

    /// Connects over HTTP+SSE, after the initialize POST was answered with `posted`.
    async fn connect_legacy(
        &self,
        client: reqwest::Client,
        posted: StatusCode,
    ) -> Result<Session, String> {
        let token = self.token.read().await?;
        let sent = token.is_some();
        let opened = LegacySse::open(client, &self.url, token, self.servers, self.refusals());
        let transport = match opened.await {
            Ok(transport) => transport,
            Err(Opening::Unauthorized(challenge)) => {
                // As a 401 to Streamable HTTP's opening POST: a token refused at the connect
                // is refreshed by the call, which goes once more.
                if sent {
                    *crate::lock(&self.rejected) = Some(Rejection {
                        challenge: challenge.clone(),
                        sent,
                    });
                }
                *crate::lock(&self.unauthorized) = Some(Unauthorized { challenge });
                return Err(self.token.refused(&self.url, sent));
            }
            Err(Opening::NotSse(what)) => {
                return Err(format!(
                    "could not connect to {}: it answered the initialize POST with HTTP {} and \
                     the GET for an event stream with {what}, so it speaks neither Streamable \
                     HTTP nor HTTP+SSE at this URL; check the server's URL",
                    self.url,
                    posted.as_u16()
                ));
            }
            Err(Opening::Failed(message)) => return Err(message),
        };
        let session = self.listener().serve(transport).await.map_err(|e| {
            format!(
                "could not connect to {} over HTTP+SSE: {}",
                self.url,
                opening_words(&e)
            )
        })?;
        self.initializes.store(true, Ordering::SeqCst);
        Ok(session)
    }

    /// The open session, connecting (again) when there is none or it ended.
    async fn session(&self) -> Result<Arc<Session>, String> {
        let mut slot = self.session.lock().await;
        if let Some(session) = slot.as_ref().filter(|s| !s.is_closed()) {
            return Ok(session.clone());
        }
        let session = Arc::new(self.connect().await?);
        self.listed.store(false, Ordering::SeqCst);
        *slot = Some(session.clone());
        Ok(session)
    }

    /// Ends the open session, if there is one, and tells the server so (Streamable HTTP: the
    /// DELETE of the session, within 5 s), so no session is left open on it when the app is
    /// done with the server.
    pub async fn close(&self) {
        let Some(session) = self.session.lock().await.take() else {
            return;
        };
        match Arc::try_unwrap(session) {
            Ok(mut session) => {
                let _ = session.close_with_timeout(CLOSE_TIMEOUT).await;
            }
            // A call still holds it: cancelled, the session ends, and tells the server, as soon
            // as that call lets go of it.
            Err(shared) => shared.cancellation_token().cancel(),
        }
    }

    /// Forgets the session, so the next call connects anew (after a failure of the transport).
    async fn drop_session(&self) {
        self.session.lock().await.take();
    }

    /// Connects if needed and lists every tool (all pages).
    pub async fn list_tools(&self) -> Result<Vec<McpTool>, String> {
        let session = self.session().await?;
        match list(session.peer(), self.timeout).await {
            Ok(tools) => {
                self.listed.store(true, Ordering::SeqCst);
                Ok(tools)
            }
            Err(Listing::TooLarge) => {
                self.drop_session().await;
                Err(self.too_large())
            }
            Err(Listing::Failed(e)) => {
                self.drop_session().await;
                // MCP authorization: a 401 to any request, not only to the handshake, is the
                // server asking for a sign-in (or a token), as at the connect.
                match crate::lock(&self.rejected).take() {
                    Some(rejection) => Err(self.refusal(rejection)),
                    None => Err(format!("{} did not list its tools: {e}", self.url)),
                }
            }
            Err(Listing::Late) => {
                self.drop_session().await;
                Err(format!("{} did not list its tools in time", self.url))
            }
            Err(Listing::Unreadable(e)) => Err(e),
        }
    }

    /// A 401 of the open session in words, kept (with its challenge) as the server's refusal
    /// of the app, where a sign-in begins ([`RemoteServer::unauthorized`]).
    fn refusal(&self, rejection: Rejection) -> String {
        *crate::lock(&self.unauthorized) = Some(Unauthorized {
            challenge: rejection.challenge,
        });
        self.token.refused(&self.url, rejection.sent)
    }

    /// The error of an answer past the cap: refused, not cut (DESIGN.md §5).
    fn too_large(&self) -> String {
        format!(
            "the server at {} sent an answer larger than 1 MiB ({} bytes), the most the app \
             takes from a remote server; it was refused, not cut",
            self.url,
            bounded::ANSWER_CAP
        )
    }

    /// Calls tool `name` with `input`; the result as JSON, or the tool's error.
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, String> {
        self.call_asking(name, input, None).await
    }

    /// [`RemoteServer::call`], with the server's questions during it asked through `who`.
    async fn call_asking(
        &self,
        name: &str,
        input: Value,
        who: Option<Questioner>,
    ) -> Result<Value, String> {
        let running = who.map(|who| self.questions.running(who));
        let token = running.as_ref().map(|call| call.id);
        let first = self.call_once(name, input.clone(), token).await;
        let rejected = crate::lock(&self.rejected).take();
        let insufficient = crate::lock(&self.insufficient).take();
        match (first, rejected, insufficient) {
            // HTTP 401 on an open session: the server no longer takes the token it began with
            // (a new one in the keystore, a revoked or expired sign-in). It did not run the
            // call, so the call goes once more on a new session, after a refresh of a sign-in;
            // when the refresh is refused, or its token is too, the student signs in again.
            (Err(_), Some(rejection), _) => {
                let refreshed = self.token.refresh(rejection.challenge.as_deref()).await;
                let rejection = match refreshed {
                    Ok(()) => {
                        let again = self.call_once(name, input.clone(), token).await;
                        match crate::lock(&self.rejected).take() {
                            None => return again,
                            Some(rejection) => rejection,
                        }
                    }
                    Err(_) if self.can_sign_in_again() => rejection,
                    Err(ended) => return Err(ended),
                };
                if !self.can_sign_in_again() {
                    return Err(self.refusal(rejection));
                }
                self.sign_in_again(rejection.challenge.as_deref()).await?;
                let again = self.call_once(name, input, token).await;
                match crate::lock(&self.rejected).take() {
                    Some(rejection) => Err(self.refusal(rejection)),
                    None => again,
                }
            }
            // HTTP 403 `insufficient_scope`: the student signs in again for the scopes it asks
            // for (a step-up), and the call goes once more; a second refusal is the call's.
            (Err(_), None, Some(challenge)) => {
                self.step_up(&challenge).await?;
                let again = self.call_once(name, input, token).await;
                let left = crate::lock(&self.insufficient).take();
                match (again, left) {
                    (Err(_), Some(challenge)) => Err(self.asks_more(&challenge)),
                    (again, _) => again,
                }
            }
            (outcome, ..) => outcome,
        }
    }

    /// One `tools/call`; `progress`: the running call's id, sent as its progress token.
    async fn call_once(
        &self,
        name: &str,
        input: Value,
        progress: Option<u64>,
    ) -> Result<Value, String> {
        let session = self.session().await?;
        // SEP-2243: a 2026-07-28 server reads the arguments a tool's schema designates
        // (`x-mcp-header`) from `Mcp-Param-*` headers, which rmcp fills from the schemas of a
        // listing on the session: a session that has not listed lists first (once).
        let modern = session
            .peer()
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize());
        if modern
            && !self.listed.load(Ordering::SeqCst)
            && list(session.peer(), self.timeout).await.is_ok()
        {
            self.listed.store(true, Ordering::SeqCst);
        }
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Some(id) = progress.and_then(|id| i64::try_from(id).ok()) {
            params.set_progress_token(ProgressToken(NumberOrString::Number(id)));
        }
        if let Value::Object(arguments) = input {
            params = params.with_arguments(arguments);
        }
        // The session's own `call_tool`, not its peer's: a server of 2026-07-28 may answer with
        // questions (MRTR, SEP-2322: `input_required`), which it asks through the listener's
        // question sheet and sends back with the call made again, for at most 10 rounds.
        let call = session.call_tool(params);
        // The deadline stands still while the student answers the server's question.
        let outcome = tokio::select! {
            result = call => Ok(result),
            () = self.questions.deadline(self.timeout) => Err(()),
            e = watch(&session) => {
                self.drop_session().await;
                return Err(format!("the server at {} stopped answering: {e}", self.url));
            }
        };
        match outcome {
            Ok(Ok(result)) => shape(result),
            Ok(Err(e)) => {
                // The session may be gone (the server died, the network dropped): the next
                // call connects anew.
                self.drop_session().await;
                Err(match too_large(&e) {
                    true => self.too_large(),
                    false => format!(
                        "the server at {} failed the call: {}",
                        self.url,
                        service_words(&e)
                    ),
                })
            }
            Err(_) => Err(format!(
                "the server at {} did not answer within {} s",
                self.url,
                self.timeout.as_secs()
            )),
        }
    }
}

/// A failed request in words for a person: the server's own message, or what went wrong with
/// the connection — never the SDK's type names.
fn service_words(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(data) => data.message.to_string(),
        ServiceError::TransportSend(_) => {
            "the request could not be sent; the connection failed".into()
        }
        ServiceError::TransportClosed => "the connection to the server closed".into(),
        ServiceError::UnexpectedResponse => {
            "it answered with something other than an answer to the request".into()
        }
        ServiceError::Cancelled { .. } => "the request was cancelled".into(),
        ServiceError::Timeout { .. } => "it did not answer in time".into(),
        ServiceError::InputRequiredRoundsExceeded { max_rounds } => {
            format!("it asked {max_rounds} rounds of questions and still gave no answer")
        }
        _ => "the request failed".into(),
    }
}

/// Why a request to the server at `url` was not answered, in words: the address guard's
/// refusal as it is, or the connection's causes without the HTTP stack's own prefixes.
fn unreachable(url: &str, error: &reqwest::Error) -> String {
    if let Some(refused) = crate::gates::address_refusal(error) {
        return format!("could not connect to {url}: {refused}; give the server's public address");
    }
    let cause = crate::gates::error_chain(std::error::Error::source(error).unwrap_or(error));
    let cause = cause.strip_prefix("error: ").unwrap_or(&cause);
    let cause = cause
        .strip_prefix("client error (Connect): ")
        .unwrap_or(cause);
    format!("could not connect to {url}: {cause}; check the server's URL and that it is running")
}

/// Why a session could not begin, in words for a person.
fn opening_words(error: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match error {
        E::JsonRpcError(data) => format!("it refused to begin a session: {}", data.message),
        E::ConnectionClosed(_) => {
            "the server closed the connection before the session began".into()
        }
        E::TransportError { .. } => {
            "the connection failed; check the server's URL and that it is running".into()
        }
        E::Cancelled => "the connection was cancelled".into(),
        _ => {
            "it did not answer the initialize request as an MCP server does; check the server's URL"
                .into()
        }
    }
}

/// Whether `error` is the refusal the client put in place of an answer past the cap.
fn too_large(error: &ServiceError) -> bool {
    matches!(error, ServiceError::McpError(data) if data.message == bounded::TOO_LARGE)
}

/// Why a `tools/list` gave no list.
enum Listing {
    TooLarge,
    Failed(String),
    Late,
    Unreadable(String),
}

/// Every tool `peer`'s server lists (all pages), within `timeout`.
async fn list(peer: &Peer<RoleClient>, timeout: Duration) -> Result<Vec<McpTool>, Listing> {
    let tools = match tokio::time::timeout(timeout, peer.list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) if too_large(&e) => return Err(Listing::TooLarge),
        Ok(Err(e)) => return Err(Listing::Failed(service_words(&e))),
        Err(_) => return Err(Listing::Late),
    };
    tools
        .into_iter()
        .map(|t| {
            serde_json::to_value(&t)
                .and_then(serde_json::from_value)
                .map_err(|e| Listing::Unreadable(format!("tool {} is not readable: {e}", t.name)))
        })
        .collect()
}

/// rmcp's Streamable HTTP client with our hand on two things. It sends the bearer token of the
/// session on every request, read from its source at each opening request (`server/discover`
/// or `initialize`: a session rmcp re-initialises after a 404 uses the keystore's token of
/// now). And it sends the opening requests itself, so that the HTTP status of the answer is
/// known: a 401 is a refused token; to `initialize`, a 400, 404 or 405 is a server of the
/// older transport; to `server/discover`, any other 4xx is a server of a revision before
/// 2026-07-28, answered to rmcp as that server's JSON-RPC error so that it falls back to
/// `initialize`. Everything else is rmcp's own code.
#[derive(Clone)]
struct Probe {
    http: reqwest::Client,
    source: Arc<Token>,
    token: Arc<Mutex<Option<String>>>,
    /// The status of the last opening answer, or why there was none (no token could be read,
    /// or the request could not be sent), in words.
    answer: Arc<Mutex<Option<Result<StatusCode, String>>>>,
    /// The `WWW-Authenticate` header of the last opening answer.
    challenge: Arc<Mutex<Option<String>>>,
    /// Told when a request of the open session is refused.
    refusals: Refusals,
}

/// A 401 to a request of an open session: its `WWW-Authenticate`, and whether a token was
/// sent.
#[derive(Clone, Debug)]
struct Rejection {
    challenge: Option<String>,
    sent: bool,
}

/// A session's refusals, told to its server: a 401, and a 403 `insufficient_scope`'s
/// challenge.
#[derive(Clone)]
struct Refusals {
    rejected: Arc<Mutex<Option<Rejection>>>,
    insufficient: Arc<Mutex<Option<String>>>,
}

impl Refusals {
    /// Keeps a request's refusal: a 401 with its challenge (and whether a token was `sent`),
    /// a 403 `insufficient_scope`'s challenge.
    fn tell(&self, status: StatusCode, challenge: Option<String>, sent: bool) {
        match (status, challenge) {
            (StatusCode::UNAUTHORIZED, challenge) => {
                *crate::lock(&self.rejected) = Some(Rejection { challenge, sent });
            }
            (StatusCode::FORBIDDEN, Some(challenge))
                if challenge.contains("insufficient_scope") =>
            {
                *crate::lock(&self.insufficient) = Some(challenge);
            }
            _ => {}
        }
    }
}

impl Probe {
    fn new(http: reqwest::Client, source: Arc<Token>, refusals: Refusals) -> Self {
        Self {
            http,
            source,
            token: Arc::default(),
            answer: Arc::default(),
            challenge: Arc::default(),
            refusals,
        }
    }

    fn challenge(&self) -> Option<String> {
        crate::lock(&self.challenge).clone()
    }

    fn answer(&self) -> Option<Result<StatusCode, String>> {
        crate::lock(&self.answer).clone()
    }

    fn sent_token(&self) -> bool {
        crate::lock(&self.token).is_some()
    }

    fn token(&self) -> Option<String> {
        crate::lock(&self.token).clone()
    }

    /// Sends an opening request (`server/discover` or `initialize`) without a session.
    async fn open(
        &self,
        uri: &str,
        message: ClientJsonRpcMessage,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let token = match self.source.read().await {
            Ok(token) => token,
            Err(e) => {
                *crate::lock(&self.answer) = Some(Err(e.clone()));
                return Err(StreamableHttpError::UnexpectedServerResponse(e.into()));
            }
        };
        crate::lock(&self.token).clone_from(&token);
        let mut request = self
            .http
            .post(uri)
            .header(ACCEPT, "application/json, text/event-stream")
            .json(&message);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => {
                // Kept in words (reqwest's causes, not rmcp's wrapping of them) for the error.
                *crate::lock(&self.answer) = Some(Err(unreachable(uri, &e)));
                return Err(e.into());
            }
        };
        let status = response.status();
        *crate::lock(&self.answer) = Some(Ok(status));
        *crate::lock(&self.challenge) = header(&response, "www-authenticate");
        if let Some(id) = discovering(&message, status) {
            return Ok(StreamableHttpPostResponse::Json(
                earlier_revision(id, status, response).await,
                None,
            ));
        }
        if !status.is_success() {
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!("HTTP {status}").into(),
            ));
        }
        let session = header(&response, SESSION_ID);
        let content_type = header(&response, CONTENT_TYPE.as_str()).unwrap_or_default();
        let answer = if content_type.starts_with("text/event-stream") {
            // The opening request's answer is the first answer on the stream; a log line may
            // come before it.
            let refused = Arc::new(AtomicBool::new(false));
            let mut events = SseStream::from_bytes_stream(bounded::events(response, refused));
            loop {
                let data = match events.next().await {
                    Some(Ok(event)) => event.data.unwrap_or_default(),
                    Some(Err(e)) => {
                        return Err(StreamableHttpError::UnexpectedServerResponse(
                            e.to_string().into(),
                        ));
                    }
                    None => {
                        return Err(StreamableHttpError::UnexpectedServerResponse(
                            "the stream ended before the opening request's answer".into(),
                        ));
                    }
                };
                if data.trim().is_empty() {
                    continue;
                }
                let message: ServerJsonRpcMessage = serde_json::from_str(&data)?;
                if matches!(
                    message,
                    ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
                ) {
                    break message;
                }
            }
        } else if content_type.starts_with("application/json") {
            let body = bounded::read(response).await.map_err(body_error)?;
            serde_json::from_slice(&body)?
        } else {
            return Err(StreamableHttpError::UnexpectedContentType(Some(
                content_type,
            )));
        };
        if let Some(id) = not_discovered(&message, &answer) {
            return Ok(StreamableHttpPostResponse::Json(id, None));
        }
        Ok(StreamableHttpPostResponse::Json(answer, session))
    }
}

/// A server that answers `server/discover` with a result that is not a discover result (a
/// server of an earlier revision answering a method it does not know with some result, rather
/// than JSON-RPC's "method not found"): the error rmcp takes for an earlier revision, so it
/// falls back to `initialize`.
fn not_discovered(
    message: &ClientJsonRpcMessage,
    answer: &ServerJsonRpcMessage,
) -> Option<ServerJsonRpcMessage> {
    let (ClientJsonRpcMessage::Request(request), ServerJsonRpcMessage::Response(response)) =
        (message, answer)
    else {
        return None;
    };
    let discovering = matches!(request.request, ClientRequest::DiscoverRequest(_));
    if !discovering || matches!(response.result, ServerResult::DiscoverResult(_)) {
        return None;
    }
    let error = McpError::invalid_request("server/discover answered with no discover result", None);
    Some(ServerJsonRpcMessage::error(
        error,
        Some(response.id.clone()),
    ))
}

/// The session header of Streamable HTTP.
const SESSION_ID: &str = "mcp-session-id";

/// Whether `message` is a `server/discover` whose answer `status` says the server speaks a
/// revision before 2026-07-28 (a 4xx other than a refusal of the app): its request id.
fn discovering(
    message: &ClientJsonRpcMessage,
    status: StatusCode,
) -> Option<rmcp::model::RequestId> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let refused = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    (matches!(request.request, ClientRequest::DiscoverRequest(_))
        && status.is_client_error()
        && !refused)
        .then(|| request.id.clone())
}

/// The answer to `server/discover` (request `id`) of a server of an earlier revision: its own
/// JSON-RPC error when its body is one, else an invalid request naming the status; either
/// way an error rmcp takes for an earlier revision, so it falls back to `initialize`.
async fn earlier_revision(
    id: rmcp::model::RequestId,
    status: StatusCode,
    response: reqwest::Response,
) -> ServerJsonRpcMessage {
    let error = bounded::read(response)
        .await
        .ok()
        .and_then(|body| serde_json::from_slice::<ServerJsonRpcMessage>(&body).ok())
        .and_then(|message| match message {
            ServerJsonRpcMessage::Error(error) => Some(error.error),
            _ => None,
        })
        .unwrap_or_else(|| {
            McpError::invalid_request(format!("server/discover answered with HTTP {status}"), None)
        });
    ServerJsonRpcMessage::error(error, Some(id))
}

/// Header `name` of `response`, when it is text.
fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn body_error(e: bounded::BodyError) -> StreamableHttpError<reqwest::Error> {
    match e {
        bounded::BodyError::Http(e) => e.into(),
        too_large => StreamableHttpError::UnexpectedServerResponse(too_large.to_string().into()),
    }
}

impl StreamableHttpClient for Probe {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let opening = matches!(
            &message,
            ClientJsonRpcMessage::Request(request)
                if matches!(
                    request.request,
                    ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_)
                )
        );
        if opening && session_id.is_none() {
            return self.open(&uri, message, custom_headers).await;
        }
        // rmcp's own reqwest client, but with every body read under the cap (module
        // `bounded`): rmcp would take an answer of any size whole.
        let mut request = self
            .http
            .post(uri.as_ref())
            .header(ACCEPT, "text/event-stream, application/json")
            .json(&message);
        if let Some(token) = self.token() {
            request = request.bearer_auth(token);
        }
        let had_session = session_id.is_some();
        if let Some(session) = session_id {
            request = request.header(SESSION_ID, session.as_ref());
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        let response = request.send().await?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && had_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        self.refusals.tell(
            status,
            header(&response, "www-authenticate"),
            self.token().is_some(),
        );
        let session = header(&response, SESSION_ID);
        let content_type = header(&response, CONTENT_TYPE.as_str()).unwrap_or_default();
        let id = bounded::request_id(&message);
        // As rmcp: some servers answer a notification with an empty 200.
        if status.is_success() && id.is_none() && response.content_length() == Some(0) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            // A JSON-RPC error in the body is the server's answer; anything else, its status
            // (never the body's text, which could be of any size).
            if content_type.starts_with("application/json") {
                let error = bounded::read(response)
                    .await
                    .ok()
                    .and_then(|body| serde_json::from_slice::<ServerJsonRpcMessage>(&body).ok())
                    .filter(|m| matches!(m, ServerJsonRpcMessage::Error(_)));
                if let Some(error) = error {
                    return Ok(StreamableHttpPostResponse::Json(error, session));
                }
            }
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!("HTTP {status}").into(),
            ));
        }
        if content_type.starts_with("text/event-stream") {
            let refused = Arc::new(AtomicBool::new(false));
            let events = rmcp_sse_stream::SseStream::from_bytes_stream(bounded::events(
                response,
                refused.clone(),
            ));
            // The stream's one request fails with the cap's error in place of its answer.
            let refusal = bounded::refusal(&id.unwrap_or(Value::Null)).to_string();
            let events = events.map(move |event| match event {
                Err(_) if refused.load(Ordering::SeqCst) => Ok(rmcp_sse_stream::Sse {
                    event: None,
                    data: Some(refusal.clone()),
                    id: None,
                    retry: None,
                }),
                other => other,
            });
            return Ok(StreamableHttpPostResponse::Sse(events.boxed(), session));
        }
        if !content_type.starts_with("application/json") {
            return Err(StreamableHttpError::UnexpectedContentType(Some(
                content_type,
            )));
        }
        let answer = match bounded::read(response).await {
            Ok(body) => serde_json::from_slice(&body),
            Err(bounded::BodyError::TooLarge) => {
                serde_json::from_value(bounded::refusal(&id.unwrap_or(Value::Null)))
            }
            Err(bounded::BodyError::Http(e)) => return Err(e.into()),
        };
        match answer {
            Ok(message) => Ok(StreamableHttpPostResponse::Json(message, session)),
            // As rmcp: a body that is no message (a 200 to a notification) is taken as accepted.
            Err(_) => Ok(StreamableHttpPostResponse::Accepted),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        let token = self.token();
        self.http
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, StreamableHttpError<reqwest::Error>> {
        // rmcp's own, with the stream's events bounded (module `bounded`).
        let mut request = self
            .http
            .get(uri.as_ref())
            .header(ACCEPT, "text/event-stream, application/json");
        // The 2026-07-28 revision's servers may keep no session.
        if let Some(session) = session_id {
            request = request.header(SESSION_ID, session.as_ref());
        }
        if let Some(last) = last_event_id {
            request = request.header("last-event-id", last);
        }
        if let Some(token) = self.token() {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        let response = request.send().await?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        let response = response.error_for_status()?;
        let content_type = header(&response, CONTENT_TYPE.as_str());
        if !content_type.as_deref().is_some_and(|ct| {
            ct.starts_with("text/event-stream") || ct.starts_with("application/json")
        }) {
            return Err(StreamableHttpError::UnexpectedContentType(content_type));
        }
        // A message past the cap ends the stream; nothing waits on it but the notifications
        // the server would send there.
        let refused = Arc::new(AtomicBool::new(false));
        Ok(
            rmcp_sse_stream::SseStream::from_bytes_stream(bounded::events(response, refused))
                .boxed(),
        )
    }
}

/// Why the event stream of an HTTP+SSE server did not open.
enum Opening {
    /// HTTP 401, with the answer's `WWW-Authenticate`.
    Unauthorized(Option<String>),
    /// The GET was answered, but not with an event stream: what it was answered with.
    NotSse(String),
    Failed(String),
}

/// A failure of the HTTP+SSE transport.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct LegacyError(String);

/// The client side of the HTTP+SSE transport (MCP 2024-11-05): messages are POSTed to the
/// endpoint the server named, and everything the server sends arrives on the one event stream.
struct LegacySse {
    http: reqwest::Client,
    endpoint: Url,
    token: Option<String>,
    /// Told when a message is refused 401 (or 403 `insufficient_scope`), as [`Probe`] tells.
    refusals: Refusals,
    /// The ids of the requests sent and not yet answered: an answer past the cap cannot say
    /// which one it was, so each fails with the cap's error.
    unanswered: Arc<Mutex<Vec<Value>>>,
    incoming: tokio::sync::mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

impl LegacySse {
    /// Opens the event stream at `url` and reads its `endpoint` event.
    async fn open(
        http: reqwest::Client,
        url: &Url,
        token: Option<String>,
        servers: Servers,
        refusals: Refusals,
    ) -> Result<Self, Opening> {
        let mut request = http.get(url.as_str()).header(ACCEPT, "text/event-stream");
        if let Some(token) = &token {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Opening::Failed(unreachable(url.as_str(), &e)))?;
        match response.status() {
            StatusCode::UNAUTHORIZED => {
                return Err(Opening::Unauthorized(header(&response, "www-authenticate")));
            }
            status if !status.is_success() => {
                return Err(Opening::NotSse(format!("HTTP {}", status.as_u16())));
            }
            _ => {}
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("no content type")
            .to_owned();
        if !content_type.starts_with("text/event-stream") {
            return Err(Opening::NotSse(content_type));
        }
        let refused = Arc::new(AtomicBool::new(false));
        let mut events = SseStream::from_bytes_stream(bounded::events(response, refused.clone()));
        let named = loop {
            match events.next().await {
                Some(Ok(event)) if event.data.is_none() => continue,
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    break event.data.unwrap_or_default();
                }
                Some(Ok(event)) => {
                    return Err(Opening::Failed(format!(
                        "the server at {url} began its event stream with {} instead of the \
                         `endpoint` event of HTTP+SSE",
                        event.event.as_deref().unwrap_or("a message")
                    )));
                }
                Some(Err(e)) => {
                    return Err(Opening::Failed(format!(
                        "the event stream of {url} is not readable: {e}"
                    )));
                }
                None => {
                    return Err(Opening::Failed(format!(
                        "the event stream of {url} ended before its `endpoint` event"
                    )));
                }
            }
        };
        let endpoint = url.join(named.trim()).map_err(|e| {
            Opening::Failed(format!(
                "the server at {url} named {named:?} as its message endpoint, which is not a URL \
                 ({e})"
            ))
        })?;
        // The endpoint is where every message goes, token included: a server naming another
        // origin would have the client send them to a host the user never added (SSRF).
        if endpoint.origin() != url.origin() {
            return Err(Opening::Failed(format!(
                "the server at {url} named {endpoint} as its message endpoint, which is not on \
                 its own origin ({}); messages are only sent to the server that was added",
                url.origin().ascii_serialization()
            )));
        }
        check_url(endpoint.as_str(), servers).map_err(Opening::Failed)?;
        let (sender, incoming) = tokio::sync::mpsc::channel(64);
        let unanswered = Arc::new(Mutex::new(Vec::new()));
        let waiting = unanswered.clone();
        let reader = tokio::spawn(async move {
            while let Some(Ok(event)) = events.next().await {
                if !matches!(event.event.as_deref(), None | Some("message")) {
                    continue;
                }
                let Some(data) = event.data else { continue };
                // A message this client cannot read is dropped, as rmcp drops one.
                let Ok(value) = serde_json::from_str::<Value>(&data) else {
                    continue;
                };
                if value.get("method").is_none()
                    && let Some(id) = value.get("id")
                {
                    crate::lock(&waiting).retain(|w| w != id);
                }
                let Ok(message) = serde_json::from_value::<ServerJsonRpcMessage>(value) else {
                    continue;
                };
                if sender.send(message).await.is_err() {
                    return;
                }
            }
            if refused.load(Ordering::SeqCst) {
                let ids = std::mem::take(&mut *crate::lock(&waiting));
                for id in ids {
                    let Ok(refusal) = serde_json::from_value(bounded::refusal(&id)) else {
                        continue;
                    };
                    if sender.send(refusal).await.is_err() {
                        return;
                    }
                }
            }
            // The stream ended: `receive` answers None, and rmcp closes the session.
        });
        Ok(Self {
            http,
            endpoint,
            token,
            refusals,
            unanswered,
            incoming,
            reader,
        })
    }
}

impl Transport<RoleClient> for LegacySse {
    type Error = LegacyError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), LegacyError>> + Send + 'static {
        if let Some(id) = bounded::request_id(&item) {
            crate::lock(&self.unanswered).push(id);
        }
        let mut request = self.http.post(self.endpoint.as_str()).json(&item);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let (refusals, sent) = (self.refusals.clone(), self.token.is_some());
        async move {
            let response = request
                .send()
                .await
                .map_err(|e| LegacyError(format!("could not send a message: {e}")))?;
            let status = response.status();
            // MCP authorization: a 401 to any request is the server asking for a sign-in (or
            // a new token); a 403 `insufficient_scope`, for more access.
            refusals.tell(status, header(&response, "www-authenticate"), sent);
            if status.is_success() {
                Ok(())
            } else {
                Err(LegacyError(format!(
                    "the server answered a message with HTTP {}",
                    status.as_u16()
                )))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), LegacyError> {
        self.reader.abort();
        Ok(())
    }
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The remote plugins' servers: adding one, and keeping each plugin's tool list as its server
/// last gave it — when the user refreshes, and by itself when the server announces
/// `notifications/tools/list_changed`. Holds the installed plugins weakly: it is reached from
/// their handlers.
pub(crate) struct Remotes {
    plugins: Weak<InstalledPlugins>,
    secrets: Arc<dyn SecretStore>,
    servers: Servers,
    /// The shell's browser, for a server that asks the student to sign in.
    browser: Option<Arc<dyn oauth::Browser>>,
    /// The installed plugins' handlers, to close their sessions at shutdown.
    handlers: Mutex<Vec<Weak<RemoteServer>>>,
    refreshes: Mutex<FxHashMap<String, Arc<Refreshes>>>,
}

/// The refreshes of one plugin. They run one at a time, in the order they began (tokio's lock
/// is fair), so a list fetched earlier is never installed over one fetched later. This lock is
/// held across the listing by design: it orders refreshes and guards no state.
#[derive(Default)]
struct Refreshes {
    running: tokio::sync::Mutex<()>,
    /// The session of the latest announcement no refresh has taken yet: a burst of
    /// announcements makes one refresh, on the newest session.
    announced: Mutex<Option<Peer<RoleClient>>>,
}

impl Remotes {
    pub(crate) fn new(
        plugins: Weak<InstalledPlugins>,
        secrets: Arc<dyn SecretStore>,
        servers: Servers,
        browser: Option<Arc<dyn oauth::Browser>>,
    ) -> Self {
        Self {
            plugins,
            secrets,
            servers,
            browser,
            handlers: Mutex::default(),
            refreshes: Mutex::default(),
        }
    }

    fn plugins(&self, plugin: &str) -> Result<Arc<InstalledPlugins>, EngineError> {
        self.plugins
            .upgrade()
            .ok_or_else(|| EngineError::NoSuchPlugin(plugin.to_owned()))
    }

    fn refreshes(&self, plugin: &str) -> Arc<Refreshes> {
        crate::lock(&self.refreshes)
            .entry(plugin.to_owned())
            .or_default()
            .clone()
    }

    /// The handler of remote plugin `plugin` (`mcp-<name>`): the server at `url`, with the
    /// keystore's token, whose announced tool-list changes refresh the plugin.
    pub(crate) fn server(
        self: &Arc<Self>,
        plugin: &str,
        url: &str,
    ) -> Result<Arc<RemoteServer>, String> {
        let name = plugin
            .strip_prefix("mcp-")
            .ok_or_else(|| format!("{plugin} is not a remote plugin (mcp-<name>)"))?;
        let remotes = Arc::downgrade(self);
        let id = plugin.to_owned();
        let server = RemoteServer::with_keystore(
            url,
            self.secrets.clone(),
            name,
            CALL_TIMEOUT,
            self.servers,
        )?;
        let server = Arc::new(server.with_browser(self.browser.clone()).on_tools_changed(
            move |peer| {
                if let Some(remotes) = remotes.upgrade() {
                    remotes.announced(&id, peer);
                }
            },
        ));
        let mut handlers = crate::lock(&self.handlers);
        handlers.retain(|h| h.strong_count() > 0);
        handlers.push(Arc::downgrade(&server));
        Ok(server)
    }

    /// Closes every remote plugin's open session, telling each server (at the engine's
    /// shutdown).
    pub(crate) async fn close_all(&self) {
        let open: Vec<Arc<RemoteServer>> = crate::lock(&self.handlers)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for server in open {
            server.close().await;
        }
    }

    /// Connects to the MCP server at `url`, lists its tools and installs them as plugin
    /// `mcp-<name>`; a bearer `token` is kept in the keystore as [`token_key`]. A server that
    /// refuses the app for want of a sign-in (HTTP 401), when no token was given and the shell
    /// can show a sign-in page (`browser`, else the shell's own), is signed in to with OAuth
    /// ([`oauth::sign_in_with`], as `client` with `credentials` when given) and listed with that sign-in, which the keystore keeps as [`oauth::credentials_key`].
    /// Nothing is installed or kept when the server cannot be listed.
    pub(crate) async fn add(
        self: &Arc<Self>,
        url: &str,
        name: &str,
        token: Option<&str>,
        browser: Option<&dyn oauth::Browser>,
        client: Option<&oauth::IssuedClient>,
        credentials: &oauth::Credentials,
    ) -> Result<String, EngineError> {
        let link = |message: String| EngineError::Server {
            url: url.to_owned(),
            message,
        };
        let id = format!("mcp-{name}");
        let plugins = self.plugins(&id)?;
        if plugins.contains(&id) {
            return Err(LoadError {
                plugin: id,
                field: "id".into(),
                message: "duplicate plugin id: a plugin with this id is already installed; \
                          remove it first or choose another name"
                    .into(),
            }
            .into());
        }
        let (key, signed) = (token_key(name), oauth::credentials_key(name));
        // What an earlier server of this name left must not go to this one.
        self.secrets.delete(&signed)?;
        let server = RemoteServer::new(url, token.map(str::to_owned), CALL_TIMEOUT, self.servers)
            .map_err(link)?;
        let mut listed = server.list_tools().await;
        server.close().await;
        let browser = browser.or(self.browser.as_deref());
        if let (Err(_), None, Some(browser), Some(refused)) =
            (&listed, token, browser, server.unauthorized())
        {
            self.secrets.delete(&key)?;
            let secrets = self.secrets.clone();
            oauth::sign_in_with(
                url,
                refused.challenge.as_deref(),
                self.servers,
                secrets.clone(),
                &signed,
                browser,
                client,
                credentials,
            )
            .await
            .map_err(link)?;
            let refused;
            (listed, refused) = self.list_signed_in(url, name).await.map_err(link)?;
            // SEP-2352: refused again by a server that now names another authorization server
            // (it moved after the sign-in): the app registers there and the student signs in
            // again, once; nothing of the first sign-in goes there.
            if let (Err(_), Some(again)) = (&listed, refused)
                && oauth::moved(
                    url,
                    again.challenge.as_deref(),
                    self.servers,
                    &secrets,
                    &signed,
                )
                .await
                .map_err(link)?
                .is_some()
            {
                oauth::sign_in(
                    url,
                    again.challenge.as_deref(),
                    self.servers,
                    secrets.clone(),
                    &signed,
                    browser,
                    None,
                )
                .await
                .map_err(link)?;
                (listed, _) = self.list_signed_in(url, name).await.map_err(link)?;
            }
        }
        let installed = match listed {
            Ok(tools) => self.install(&plugins, url, name, token, &tools),
            Err(message) => Err(link(message)),
        };
        if installed.is_err() {
            // Nothing was installed: nor is a token or a sign-in kept.
            let _ = self.secrets.delete(&signed);
        }
        installed
    }

    /// Lists the tools of the server at `url` with the sign-in kept for remote server `name`:
    /// the list (or why not), and the 401 that refused it, if one did.
    async fn list_signed_in(
        &self,
        url: &str,
        name: &str,
    ) -> Result<(Result<Vec<McpTool>, String>, Option<Unauthorized>), String> {
        let server = RemoteServer::with_keystore(
            url,
            self.secrets.clone(),
            name,
            CALL_TIMEOUT,
            self.servers,
        )?;
        let listed = server.list_tools().await;
        server.close().await;
        Ok((listed, server.unauthorized()))
    }

    /// Installs `tools` as remote plugin `mcp-<name>` at `url`, keeping `token` (or keeping
    /// none).
    fn install(
        self: &Arc<Self>,
        plugins: &InstalledPlugins,
        url: &str,
        name: &str,
        token: Option<&str>,
        tools: &[McpTool],
    ) -> Result<String, EngineError> {
        let plugin = Plugin::from_mcp(name, name, tools)?;
        let id = plugin.id.clone();
        let key = token_key(name);
        match token {
            Some(token) => self.secrets.set(&key, token)?,
            None => self.secrets.delete(&key)?,
        }
        let handler = self
            .server(&id, url)
            .map_err(|message| EngineError::Server {
                url: url.to_owned(),
                message,
            })?;
        if let Err(e) = plugins.install(plugin, url, handler) {
            let _ = self.secrets.delete(&key);
            return Err(e);
        }
        Ok(id)
    }

    /// Connects to the MCP server at `url` and lists its tools, installing nothing.
    pub(crate) async fn tools_at(&self, url: &str) -> Result<Vec<McpTool>, EngineError> {
        let link = |message: String| EngineError::Server {
            url: url.to_owned(),
            message,
        };
        let server = RemoteServer::new(url, None, CALL_TIMEOUT, self.servers).map_err(link)?;
        let listed = server.list_tools().await;
        server.close().await;
        listed.map_err(link)
    }

    /// Lists remote plugin `plugin`'s tools again, on a new session, and installs the list
    /// ([`InstalledPlugins::update_remote`]). Returns the ids of the tools that are new.
    pub(crate) async fn refresh(&self, plugin: &str) -> Result<Vec<String>, EngineError> {
        let plugins = self.plugins(plugin)?;
        let (installed, url) = plugins.installed(plugin)?;
        let name = match (installed.kind, plugin.strip_prefix("mcp-")) {
            (PluginKind::Remote, Some(name)) => name,
            _ => return Err(EngineError::NoSuchPlugin(plugin.to_owned())),
        };
        let link = |message: String| EngineError::Server {
            url: url.clone(),
            message,
        };
        let server = RemoteServer::with_keystore(
            &url,
            self.secrets.clone(),
            name,
            CALL_TIMEOUT,
            self.servers,
        )
        .map_err(link)?;
        let refreshes = self.refreshes(plugin);
        let _in_turn = refreshes.running.lock().await;
        let listed = server.list_tools().await;
        server.close().await;
        plugins.update_remote(plugin, &listed.map_err(link)?, true)
    }

    /// The server of `plugin` announced a changed tool list on session `peer`: refresh in the
    /// background.
    fn announced(self: &Arc<Self>, plugin: &str, peer: Peer<RoleClient>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let refreshes = self.refreshes(plugin);
        if crate::lock(&refreshes.announced).replace(peer).is_some() {
            // A refresh is already waiting to start; it takes this newer session.
            return;
        }
        let remotes = Arc::downgrade(self);
        let plugin = plugin.to_owned();
        runtime.spawn(async move {
            let _in_turn = refreshes.running.lock().await;
            let Some(peer) = crate::lock(&refreshes.announced).take() else {
                return;
            };
            // Listed on the session that announced the change, never on a new connection, and
            // not retried: a failed refresh leaves the installed list whole, and a server that
            // announces on every connect and fails its list cannot make this loop.
            let Ok(tools) = list(&peer, CALL_TIMEOUT).await else {
                return;
            };
            let Some(plugins) = remotes.upgrade().and_then(|r| r.plugins.upgrade()) else {
                return;
            };
            // Refused only when the plugin is gone or the new list does not load; the old list
            // then stays, as it is.
            let _ = plugins.update_remote(&plugin, &tools, true);
        });
    }
}

/// How often a call in progress checks that its server is still there.
const PING_EVERY: Duration = Duration::from_secs(2);

/// Pings the server while a call waits, and returns the first failure. A server that dies
/// mid-call leaves its answer stream open on the client's side (rmcp does not report the
/// break), so without this the call would wait out its whole timeout.
async fn watch(session: &Session) -> String {
    loop {
        tokio::time::sleep(PING_EVERY).await;
        let ping = session
            .peer()
            .send_request(ClientRequest::PingRequest(PingRequest::default()));
        match tokio::time::timeout(PING_EVERY * 2, ping).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return e.to_string(),
            Err(_) => return "no answer to a ping".to_owned(),
        }
    }
}

#[async_trait]
impl PluginHandler for RemoteServer {
    /// Every call goes to the server's host: outside the conversation's hosts it is refused at
    /// step 8b, before anything is sent.
    fn assess(&self, _tool: &Tool, _input: &Value, scope: &Scope) -> Assessment {
        Assessment::reaching(&self.url, scope)
    }

    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        // MCP: a client no longer interested in a request cancels it. A call given up when
        // its turn is stopped drops the request, and rmcp sends the server
        // notifications/cancelled naming it; the call is the tool's failure, said so.
        let stopped = {
            let asker = ctx.asker.clone();
            let conversation = ctx.conversation.clone();
            async move {
                match (asker, conversation) {
                    (Some(asker), Some(conversation)) => asker.0.turn_stopped(&conversation).await,
                    _ => std::future::pending().await,
                }
            }
        };
        let who = ctx.asker.map(|asker| Questioner {
            asker,
            plugin: ctx.services.plugin.id.clone(),
            plugin_title: ctx.services.plugin.title.clone(),
            conversation: ctx.conversation.clone(),
            tainted: ctx.tainted,
            progress: ctx.progress.clone(),
        });
        let result = tokio::select! {
            // A turn stopped already sends nothing.
            biased;
            () = stopped => {
                return Err(format!(
                    "the turn was stopped, so the app asked the server at {} to cancel the \
                     call; it may have taken effect there already",
                    self.url
                ));
            }
            result = self.call_asking(&tool.name, input, who) => result?,
        };
        // MCP: a tool with an output schema answers with structured content that matches it;
        // a result that does not is refused, never handed to the model as the tool's data.
        if let Some(schema) = &tool.output {
            schema.validate(&result).map_err(|problems| {
                format!("the server's result does not match the tool's output schema: {problems}")
            })?;
        }
        Ok(result)
    }
}

/// The fields `names` of a content block, and nothing else it carries (annotations, `_meta`).
fn keep(block: &Value, names: &[&str]) -> Value {
    Value::Object(
        names
            .iter()
            .filter_map(|name| Some(((*name).to_owned(), block.get(*name)?.clone())))
            .collect(),
    )
}

/// A `tools/call` result as the tool's result: `structuredContent` when there is one, else the
/// content blocks (text as text, an image or audio as a short description); `isError` becomes
/// the tool's error.
fn shape(result: CallToolResult) -> Result<Value, String> {
    let blocks: Vec<Value> = result
        .content
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .map(|block| match block.get("type").and_then(Value::as_str) {
            Some("text") => block.get("text").cloned().unwrap_or(Value::Null),
            // Kept for the chat to draw and offer; the model reads a picture as words
            // (handler::model_copy).
            Some("image") => keep(&block, &["type", "mimeType", "data"]),
            Some("resource_link") => keep(
                &block,
                &["type", "uri", "name", "title", "description", "mimeType"],
            ),
            Some("audio") => {
                let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("?");
                let size = block
                    .get("data")
                    .and_then(Value::as_str)
                    .map_or(0, str::len)
                    / 4
                    * 3;
                Value::String(format!("[audio: {mime}, about {size} bytes]"))
            }
            Some(other) => Value::String(format!("[{other}]")),
            None => Value::Null,
        })
        .collect();
    if result.is_error == Some(true) {
        // An error is words: a picture in it is said, not sent.
        let text: Vec<String> = blocks
            .iter()
            .map(crate::handler::model_copy)
            .map(|b| b.as_str().map_or_else(|| b.to_string(), str::to_owned))
            .collect();
        return Err(text.join("\n"));
    }
    Ok(match result.structured_content {
        Some(structured) => structured,
        None => json!({ "content": blocks }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(json: Value) -> CallToolResult {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn is_error_is_the_tools_error_and_structured_content_is_the_result() {
        assert_eq!(
            shape(result(
                json!({"content": [{"type": "text", "text": "no such post"}],
                                 "isError": true})
            )),
            Err("no such post".to_owned())
        );
        assert_eq!(
            shape(result(
                json!({"content": [{"type": "text", "text": "{\"n\": 1}"}],
                                 "structuredContent": {"n": 1}})
            )),
            Ok(json!({"n": 1}))
        );
        // A picture stays in the result for the chat; the model's copy says it in words.
        let pictured = shape(result(json!({"content": [
            {"type": "text", "text": "a picture"},
            {"type": "image", "data": "AAAAAAAA", "mimeType": "image/png",
             "annotations": {"audience": ["user"]}}
        ]})))
        .unwrap();
        assert_eq!(
            pictured,
            json!({"content": ["a picture",
                {"type": "image", "mimeType": "image/png", "data": "AAAAAAAA"}]})
        );
        assert_eq!(
            crate::handler::model_copy(&pictured),
            json!({"content": ["a picture", "[image: image/png, about 6 bytes]"]})
        );
    }

    #[test]
    fn the_app_reaches_public_https_servers_only() {
        let app = |url: &str| check_url(url, Servers::PublicOnly);
        assert!(!app("https://mcp.example.com/mcp").unwrap().1);
        assert_eq!(
            app("http://mcp.example.com/mcp").unwrap_err(),
            "http://mcp.example.com/mcp: a remote server is reached over https; write the URL \
             with https://"
        );
        assert_eq!(
            app("https://192.168.1.2/mcp").unwrap_err(),
            format!(
                "https://192.168.1.2/mcp: 192.168.1.2 is a private or local address, which remote \
                 servers may not be at; {PUBLIC_ONLY}"
            )
        );
        for url in [
            "http://127.0.0.1:3001/mcp",
            "https://127.0.0.1/mcp",
            "http://[::1]:3001/mcp",
            "https://localhost/mcp",
            "http://LOCALHOST:3001/mcp",
        ] {
            let err = app(url).unwrap_err();
            assert!(err.ends_with(PUBLIC_ONLY), "{url}: {err}");
        }
        assert!(app("ftp://mcp.example.com/").is_err());
    }

    #[test]
    fn a_development_tool_also_reaches_this_machine() {
        let dev = |url: &str| check_url(url, Servers::AlsoLoopback);
        for url in [
            "http://127.0.0.1:3001/mcp",
            "http://127.8.9.1:3001/mcp",
            "http://[::1]:3001/mcp",
            "https://[::1]/mcp",
            "http://localhost:3001/mcp",
        ] {
            assert!(dev(url).unwrap().1, "{url}");
        }
        assert!(!dev("https://mcp.example.com/mcp").unwrap().1);
        assert_eq!(
            dev("http://10.0.0.2/mcp").unwrap_err(),
            "http://10.0.0.2/mcp: 10.0.0.2 is a private or local address, which remote servers \
             may not be at; a server on this machine is reached at localhost, 127.0.0.1 or [::1]"
        );
        assert!(dev("http://mcp.example.com/mcp").is_err());
    }
}
