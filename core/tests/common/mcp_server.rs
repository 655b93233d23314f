//! A small MCP server on 127.0.0.1, for what the real test server (server-everything) cannot be
//! made to do: a tool list that changes when the test says so and is announced with
//! `notifications/tools/list_changed` on the Streamable HTTP GET stream (server-everything
//! announces only at `initialized`, before rmcp opens that stream), a bearer token it requires,
//! `tools/list` answers that are slow or fail, and — in its HTTP+SSE form — an `endpoint` event
//! naming any URL.
//!
//! It can also stand for a server that asks its users to sign in (`McpServer::signing_in`): an
//! OAuth 2.1 authorization server and protected resource on its own address, as the MCP
//! authorization specification has a client meet them — a 401 with `WWW-Authenticate`, the
//! protected resource's metadata (RFC 9728), the authorization server's (RFC 8414 or OpenID
//! discovery), dynamic registration, an authorization page that sends the browser straight back
//! with a code, and a token endpoint that checks PKCE (S256), the resource indicator (RFC 8707)
//! and refresh tokens.
//!
//! Real HTTP/1.1, one request per connection. Streamable HTTP answers are JSON bodies, which
//! the transport allows; the GET stream is chunked `text/event-stream`. Every request is
//! recorded.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::model_server::{Request, read_request};

/// A tool as `tools/list` gives it; `read` sets `readOnlyHint: true`.
pub fn tool(name: &str, read: bool) -> Value {
    json!({
        "name": name,
        "description": format!("the {name} tool"),
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
        "annotations": {"readOnlyHint": read},
    })
}

#[derive(Default)]
struct State {
    tools: Mutex<Vec<Value>>,
    /// The bearer token every request must carry, when set.
    token: Mutex<Option<String>>,
    sessions: Mutex<Vec<String>>,
    next_session: AtomicU64,
    /// The open GET streams of Streamable HTTP sessions.
    streams: Mutex<Vec<mpsc::UnboundedSender<String>>>,
    /// How long each coming `tools/list` waits (after taking the list as it is then).
    list_delays: Mutex<VecDeque<Duration>>,
    /// How long each coming `tools/call` waits before it answers.
    call_delays: Mutex<VecDeque<Duration>>,
    list_fails: AtomicBool,
    requests: Mutex<Vec<Request>>,
    connections: Mutex<Vec<JoinHandle<()>>>,
    /// The HTTP+SSE form: the data of the `endpoint` event that opens GET /sse.
    endpoint: Option<String>,
    /// `tools/call` answers with one text block of this many bytes, when set.
    result_bytes: Mutex<Option<usize>>,
    /// Answers to POSTed requests come as a `text/event-stream` body rather than JSON.
    answer_events: AtomicBool,
    /// The sessions clients ended with DELETE.
    deleted: Mutex<Vec<String>>,
    /// Requests to `/mcp` need an access token of this authorization server, when set.
    oauth: Option<OAuth>,
    /// Speaks only MCP 2026-07-28: stateless, `server/discover`, no `initialize`.
    modern: bool,
    /// Answers a method it does not know (`server/discover` too) with an empty result rather
    /// than JSON-RPC's "method not found", as the official conformance suite's 2025 servers do.
    empty_unknown: AtomicBool,
}

/// How the authorization server of a signing-in server behaves.
#[derive(Clone, Debug)]
pub struct OAuthConfig {
    /// The PKCE methods its metadata lists (`code_challenge_methods_supported`).
    pub pkce_methods: Vec<&'static str>,
    /// Whether the 401's `WWW-Authenticate` names the resource metadata's URL (else the client
    /// finds it at the well-known path).
    pub challenge_names_metadata: bool,
    /// Whether its metadata is at OpenID discovery's path rather than RFC 8414's.
    pub openid: bool,
    /// The `expires_in` of each access token, in seconds.
    pub expires_in: u64,
    /// The scope the 401 asks for.
    pub scope: &'static str,
    /// No metadata at all, as a server of the 2025-03-26 revision: the client is to use the
    /// default endpoints `/authorize`, `/token` and `/register` of the server's origin.
    pub no_metadata: bool,
    /// Tools a call of which needs a scope beyond the 401's (tool, scope): without it the call
    /// is answered 403 `insufficient_scope`, asking for both.
    pub scoped_tools: Vec<(&'static str, &'static str)>,
    /// Clients issued beforehand (any redirect URI); with some, there is no dynamic
    /// registration.
    pub issued_clients: Vec<&'static str>,
    /// The resource its protected resource metadata names instead of the server's own URL: a
    /// server that points the client at another resource's sign-in.
    pub names_resource: Option<&'static str>,
    /// It reads client ID metadata documents (`client_id_metadata_document_supported`): a
    /// client id that is an https address is taken as the app's document.
    pub reads_client_documents: bool,
    /// It lets the handshake (`server/discover`, `initialize`, `notifications/initialized`) and
    /// the session's GET and DELETE through without a token, and asks for a sign-in only at
    /// `tools/list` and `tools/call`.
    pub open_handshake: bool,
    /// Its clients are confidential: each has a secret (`secret-of-<client id>`, issued
    /// clients too, and given at registration), which every token request must carry by this
    /// method, `client_secret_post` or `client_secret_basic` (the only one its metadata lists).
    pub client_auth: Option<&'static str>,
    /// The grants its metadata lists (`grant_types_supported`; empty: the authorization code
    /// and refresh). It takes `client_credentials` from an issued client and a JWT bearer grant
    /// of an ID-JAG its identity provider issued, giving no refresh token for either.
    pub grants: Vec<&'static str>,
    /// With `client_auth` `private_key_jwt`: the public key (uncompressed P-256) an issued
    /// client's ES256 assertion must verify with.
    pub client_key: Option<Vec<u8>>,
    /// An enterprise identity provider at `/idp` of the same address, which exchanges this ID
    /// token (RFC 8693) for an ID-JAG for the app's client.
    pub id_token: Option<&'static str>,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        Self {
            pkce_methods: vec!["S256"],
            challenge_names_metadata: true,
            openid: false,
            expires_in: 3600,
            scope: "tools:read",
            no_metadata: false,
            scoped_tools: Vec::new(),
            issued_clients: Vec::new(),
            names_resource: None,
            reads_client_documents: false,
            open_handshake: false,
            client_auth: None,
            grants: Vec::new(),
            client_key: None,
            id_token: None,
        }
    }
}

/// The authorization server's state: what it registered, granted and issued, and every request
/// it took.
#[derive(Default)]
struct OAuthState {
    clients: Vec<(String, Vec<String>)>,
    /// code → (client id, redirect URI, PKCE challenge, scope)
    codes: std::collections::HashMap<String, (String, String, String, String)>,
    access: Vec<String>,
    refresh: Vec<String>,
    /// The scope granted with each access and refresh token.
    granted: std::collections::HashMap<String, String>,
    next: u64,
    registrations: Vec<Value>,
    authorizations: Vec<Vec<(String, String)>>,
    token_requests: Vec<Vec<(String, String)>>,
    /// The form of each token request to the identity provider.
    idp_requests: Vec<Vec<(String, String)>>,
    /// The ID-JAGs the identity provider issued.
    jags: Vec<String>,
    /// The server moved to another authorization server (SEP-2352), at `/as2` of the same
    /// address; the first one no longer serves, and nothing it issued is accepted.
    moved: bool,
    /// It moves (as [`McpServer::move_authorization_server`]) at the next `tools/list` that
    /// carries a token it accepts, refusing that one 401.
    move_at_listing: bool,
}

impl OAuthState {
    /// The move to the authorization server at `/as2`: nothing the first one issued stands.
    fn move_away(&mut self) {
        self.moved = true;
        self.clients.clear();
        self.codes.clear();
        self.access.clear();
        self.refresh.clear();
    }
}

struct OAuth {
    config: OAuthConfig,
    state: Mutex<OAuthState>,
    /// The resource's path: `/mcp`, or `/sse` for an HTTP+SSE server.
    path: &'static str,
}

pub struct McpServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl McpServer {
    /// A Streamable HTTP server at `/mcp` listing `tools`.
    pub async fn streamable(tools: Vec<Value>) -> Self {
        let state = State {
            tools: Mutex::new(tools),
            ..State::default()
        };
        Self::serve(state).await
    }

    /// A Streamable HTTP server at `/mcp` that speaks only MCP 2026-07-28, listing `tools`: it
    /// answers `server/discover`, keeps no session, refuses `initialize` (HTTP 400, `-32022`
    /// naming the revision it speaks) and any request whose `MCP-Protocol-Version` and
    /// `Mcp-Method` headers do not match its body (HTTP 400, `-32020`).
    pub async fn modern(tools: Vec<Value>) -> Self {
        let state = State {
            tools: Mutex::new(tools),
            modern: true,
            ..State::default()
        };
        Self::serve(state).await
    }

    /// An HTTP+SSE server at `/sse` whose stream opens with `endpoint` as its endpoint event;
    /// a POST of `initialize` to `/sse` is answered 405, as such a server answers it.
    pub async fn sse(endpoint: &str) -> Self {
        let state = State {
            endpoint: Some(endpoint.to_owned()),
            ..State::default()
        };
        Self::serve(state).await
    }

    async fn serve(state: State) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(state);
        let serving = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let state = serving.clone();
                let connection = tokio::spawn(async move {
                    let _ = answer(socket, state).await;
                });
                serving.connections.lock().unwrap().push(connection);
            }
        });
        Self { addr, state, task }
    }

    /// A Streamable HTTP server at `/mcp` listing `tools` to those signed in to its
    /// authorization server, which is on the same address and behaves as `config` says.
    pub async fn signing_in(tools: Vec<Value>, config: OAuthConfig) -> Self {
        let state = State {
            tools: Mutex::new(tools),
            oauth: Some(OAuth {
                config,
                state: Mutex::default(),
                path: "/mcp",
            }),
            ..State::default()
        };
        Self::serve(state).await
    }

    /// An HTTP+SSE server (MCP 2024-11-05) at `/sse` listing `tools` to those signed in to its
    /// authorization server, as `config` says: the event stream and the messages POSTed to
    /// `/messages` (each answered 202, its answer sent on the stream) need an access token; a
    /// POST to `/sse` is answered 405 whatever it carries, as such a server's router answers
    /// it before its authorization does.
    pub async fn sse_signing_in(tools: Vec<Value>, config: OAuthConfig) -> Self {
        let state = State {
            tools: Mutex::new(tools),
            endpoint: Some("/messages".to_owned()),
            oauth: Some(OAuth {
                config,
                state: Mutex::default(),
                path: "/sse",
            }),
            ..State::default()
        };
        Self::serve(state).await
    }

    /// The client registrations the authorization server took (their JSON bodies).
    pub fn registrations(&self) -> Vec<Value> {
        self.oauth().registrations.clone()
    }

    /// The query of each authorization page opened.
    pub fn authorizations(&self) -> Vec<Vec<(String, String)>> {
        self.oauth().authorizations.clone()
    }

    /// The form of each token request.
    pub fn token_requests(&self) -> Vec<Vec<(String, String)>> {
        self.oauth().token_requests.clone()
    }

    /// The form of each token request to the identity provider.
    pub fn identity_provider_requests(&self) -> Vec<Vec<(String, String)>> {
        self.oauth().idp_requests.clone()
    }

    /// The access tokens issued so far, oldest first.
    pub fn access_tokens(&self) -> Vec<String> {
        self.oauth().access.clone()
    }

    /// The access tokens issued so far are no longer accepted; refresh tokens still are.
    pub fn revoke_access_tokens(&self) {
        self.oauth().access.clear();
    }

    /// The server moves to another authorization server (SEP-2352): its protected resource
    /// metadata names `{base}/as2` from now on, where no client is registered yet; the old
    /// authorization server no longer answers, and no token it issued is accepted.
    pub fn move_authorization_server(&self) {
        self.oauth().move_away();
    }

    /// The server moves to another authorization server at the next `tools/list` a signed-in
    /// client sends (SEP-2352's mid-session move, as a server behind a new identity provider
    /// does right after a sign-in).
    pub fn move_authorization_server_at_next_listing(&self) {
        self.oauth().move_at_listing = true;
    }

    /// Every token issued is no longer accepted, refresh tokens included (the sign-in ended).
    pub fn revoke_all(&self) {
        let mut state = self.oauth();
        state.access.clear();
        state.refresh.clear();
    }

    fn oauth(&self) -> std::sync::MutexGuard<'_, OAuthState> {
        let oauth = self.state.oauth.as_ref().expect("a signing-in server");
        oauth.state.lock().unwrap()
    }

    pub fn url(&self) -> String {
        match self.state.endpoint {
            Some(_) => format!("http://{}/sse", self.addr),
            None => format!("http://{}/mcp", self.addr),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn set_tools(&self, tools: Vec<Value>) {
        *self.state.tools.lock().unwrap() = tools;
    }

    pub fn require_token(&self, token: Option<&str>) {
        *self.state.token.lock().unwrap() = token.map(str::to_owned);
    }

    /// Forgets every session, as a restarted server does.
    pub fn forget_sessions(&self) {
        self.state.sessions.lock().unwrap().clear();
    }

    /// The coming `tools/list` requests wait these long, in turn.
    pub fn delay_lists(&self, delays: impl IntoIterator<Item = Duration>) {
        self.state.list_delays.lock().unwrap().extend(delays);
    }

    pub fn delay_calls(&self, delays: impl IntoIterator<Item = Duration>) {
        self.state.call_delays.lock().unwrap().extend(delays);
    }

    /// Each `tools/call` answers with a text block of `bytes` bytes (`x` repeated).
    pub fn answer_calls_with(&self, bytes: usize) {
        *self.state.result_bytes.lock().unwrap() = Some(bytes);
    }

    /// Answers POSTed requests with an event stream (true) or a JSON body (false, the default).
    pub fn answer_as_events(&self, events: bool) {
        self.state.answer_events.store(events, Ordering::SeqCst);
    }

    /// The sessions clients ended with DELETE, in order.
    pub fn deleted_sessions(&self) -> Vec<String> {
        self.state.deleted.lock().unwrap().clone()
    }

    /// `tools/list` answers with a JSON-RPC error while set.
    /// A method it does not know is answered with an empty result from now on.
    pub fn answer_unknown_methods_with_empty_results(&self) {
        self.state.empty_unknown.store(true, Ordering::SeqCst);
    }

    pub fn fail_lists(&self, fail: bool) {
        self.state.list_fails.store(fail, Ordering::SeqCst);
    }

    /// Sends `notifications/tools/list_changed` on every open GET stream; returns how many.
    pub fn announce(&self) -> usize {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let mut streams = self.state.streams.lock().unwrap();
        streams.retain(|s| s.send(note.to_string()).is_ok());
        streams.len()
    }

    /// The GET streams clients hold open.
    fn open_streams(&self) -> usize {
        let mut streams = self.state.streams.lock().unwrap();
        streams.retain(|s| !s.is_closed());
        streams.len()
    }

    /// Waits until exactly one client holds a GET stream open (a session that ended, such as
    /// the one that listed the tools when the server was added, has hung up its own).
    pub async fn stream_opened(&self) {
        let until = Instant::now() + Duration::from_secs(60);
        while self.open_streams() != 1 {
            assert!(
                Instant::now() < until,
                "not one GET stream open but {}",
                self.open_streams()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }

    /// How many JSON-RPC requests of `method` arrived.
    pub fn count(&self, method: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.body["method"] == method)
            .count()
    }

    /// The server goes away: the listener and every connection, open streams and requests in
    /// progress included.
    pub fn kill(&self) {
        self.task.abort();
        self.state.streams.lock().unwrap().clear();
        for connection in self.state.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn respond(status: u16, headers: &[(&str, String)], content_type: &str, body: &str) -> String {
    let mut head = format!("HTTP/1.1 {status} Loopback\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    format!(
        "{head}Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn result(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

async fn answer(mut socket: TcpStream, state: Arc<State>) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    let request = read_request(&mut socket).await?;
    state.requests.lock().unwrap().push(request.clone());
    let legacy_open =
        state.endpoint.is_some() && request.method == "POST" && request.path == "/sse";
    if let Some(oauth) = state.oauth.as_ref().filter(|_| !legacy_open) {
        let base = format!("http://{}", socket.local_addr()?);
        let text = match oauth.answer(&base, &request) {
            Some(text) => Some(text),
            None if oauth.moves_now(&request) => Some(respond(
                401,
                &[("WWW-Authenticate", oauth.challenge(&base))],
                "application/json",
                r#"{"error":"invalid_token"}"#,
            )),
            None if oauth.admits(&request) => oauth.forbids(&base, &request),
            None if oauth.lets_through(&request) => None,
            None => Some(respond(
                401,
                &[("WWW-Authenticate", oauth.challenge(&base))],
                "application/json",
                r#"{"error":"invalid_token"}"#,
            )),
        };
        if let Some(text) = text {
            socket.write_all(text.as_bytes()).await?;
            return socket.shutdown().await;
        }
    }
    let required = state.token.lock().unwrap().clone();
    if let Some(token) = required
        && request.header("authorization") != Some(format!("Bearer {token}").as_str())
    {
        let text = respond(401, &[], "application/json", r#"{"error":"invalid_token"}"#);
        socket.write_all(text.as_bytes()).await?;
        return socket.shutdown().await;
    }
    let path = request
        .path
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    let text = match (
        state.endpoint.as_deref(),
        request.method.as_str(),
        path.as_str(),
    ) {
        (Some(endpoint), "GET", "/sse") => {
            let endpoint = endpoint.to_owned();
            return stream(socket, state, Some(endpoint)).await;
        }
        // HTTP+SSE: a message POSTed to the endpoint is accepted, its answer sent on the stream.
        (Some(endpoint), "POST", path) if endpoint.split('?').next() == Some(path) => {
            let message = &request.body;
            if !message["id"].is_null() {
                let answer = if message["method"] == "initialize" {
                    result(
                        &message["id"],
                        json!({"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                               "serverInfo": {"name": "loopback-sse", "version": "1"}}),
                    )
                } else {
                    answer_request(message, &state).await
                };
                let mut streams = state.streams.lock().unwrap();
                streams.retain(|s| s.send(answer.clone()).is_ok());
            }
            respond(202, &[], "text/plain", "Accepted")
        }
        (Some(_), _, _) => respond(405, &[], "text/plain", "Method Not Allowed"),
        (None, "GET", "/mcp") => {
            let known = request
                .header("mcp-session-id")
                .is_some_and(|s| state.sessions.lock().unwrap().iter().any(|k| k == s));
            if !known {
                respond(404, &[], "text/plain", "no such session")
            } else {
                return stream(socket, state, None).await;
            }
        }
        (None, "DELETE", "/mcp") => {
            if let Some(session) = request.header("mcp-session-id") {
                state.deleted.lock().unwrap().push(session.to_owned());
            }
            respond(200, &[], "text/plain", "")
        }
        (None, "POST", "/mcp") => post(&request, &state).await,
        _ => respond(404, &[], "text/plain", "not found"),
    };
    socket.write_all(text.as_bytes()).await?;
    socket.shutdown().await
}

/// One JSON-RPC message POSTed to `/mcp`.
async fn post(request: &Request, state: &State) -> String {
    let message = &request.body;
    let id = &message["id"];
    let method = message["method"].as_str().unwrap_or_default();
    if state.modern {
        return modern(request, state).await;
    }
    if method == "initialize" {
        let session = format!(
            "session-{}",
            state.next_session.fetch_add(1, Ordering::SeqCst)
        );
        state.sessions.lock().unwrap().push(session.clone());
        let body = result(
            id,
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "loopback", "version": "1"},
            }),
        );
        return respond(
            200,
            &[("Mcp-Session-Id", session)],
            "application/json",
            &body,
        );
    }
    let knows = matches!(method, "tools/list" | "tools/call" | "ping");
    if !knows && !id.is_null() && state.empty_unknown.load(Ordering::SeqCst) {
        // As the suite's 2025 servers do: with or without a session, and naming one.
        let session = ("Mcp-Session-Id", "session-unknown".to_owned());
        return respond(200, &[session], "application/json", &result(id, json!({})));
    }
    let known = request
        .header("mcp-session-id")
        .is_some_and(|s| state.sessions.lock().unwrap().iter().any(|k| k == s));
    if !known {
        return respond(404, &[], "text/plain", "no such session");
    }
    if id.is_null() {
        return respond(202, &[], "text/plain", "");
    }
    let body = answer_request(message, state).await;
    if state.answer_events.load(Ordering::SeqCst) {
        return respond(
            200,
            &[],
            "text/event-stream",
            &format!("event: message\ndata: {body}\n\n"),
        );
    }
    respond(200, &[], "application/json", &body)
}

/// A JSON-RPC error answered with HTTP `status`.
fn refuse(status: u16, id: &Value, code: i64, message: &str, data: Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": id,
                      "error": {"code": code, "message": message, "data": data}});
    respond(status, &[], "application/json", &body.to_string())
}

/// One message POSTed to a server that speaks only 2026-07-28: no session, every request
/// self-contained (its revision in `_meta` and in the `MCP-Protocol-Version` header).
async fn modern(request: &Request, state: &State) -> String {
    let message = &request.body;
    let id = &message["id"];
    let method = message["method"].as_str().unwrap_or_default();
    if method == "initialize" {
        return refuse(
            400,
            id,
            -32022,
            "unsupported protocol version: this server has no initialize",
            json!({"supported": [MODERN]}),
        );
    }
    if id.is_null() {
        return respond(202, &[], "text/plain", "");
    }
    let in_meta = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str();
    if in_meta != Some(MODERN) {
        return refuse(
            400,
            id,
            -32022,
            "unsupported protocol version",
            json!({"supported": [MODERN]}),
        );
    }
    if request.header("mcp-protocol-version") != Some(MODERN)
        || request.header("mcp-method") != Some(method)
    {
        return refuse(
            400,
            id,
            -32020,
            "the headers do not match the body",
            json!({}),
        );
    }
    if method == "tools/call" && !params_in_headers(request, state) {
        return refuse(
            400,
            id,
            -32020,
            "a designated parameter's header is missing",
            json!({}),
        );
    }
    let body = if method == "server/discover" {
        result(
            id,
            json!({
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {"listChanged": false}},
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "loopback", "version": "1"}},
            }),
        )
    } else if let Some(body) = asking(message, state) {
        body
    } else {
        let mut answer: Value =
            serde_json::from_str(&answer_request(message, state).await).unwrap();
        if let Some(result) = answer["result"].as_object_mut() {
            result.insert("resultType".into(), json!("complete"));
        }
        answer.to_string()
    };
    respond(200, &[], "application/json", &body)
}

/// A `tools/call` of a tool listed with `asks` (a question), by MCP 2026-07-28's questions
/// inside a call (MRTR, SEP-2322): without answers, an `input_required` result asking for a
/// name as form `q`, its state `state-1`; with them, the tool's answer naming the answer to
/// `q` and the state echoed back.
fn asking(message: &Value, state: &State) -> Option<String> {
    let id = &message["id"];
    let params = &message["params"];
    if message["method"] != "tools/call" {
        return None;
    }
    let name = params["name"].as_str()?;
    let question = state
        .tools
        .lock()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .and_then(|t| t["asks"].as_str().map(str::to_owned))?;
    let body = match params.get("inputResponses") {
        None => json!({
            "resultType": "input_required",
            "inputRequests": {"q": {"method": "elicitation/create", "params": {
                "mode": "form",
                "message": question,
                "requestedSchema": {"type": "object",
                                    "properties": {"name": {"type": "string"}},
                                    "required": ["name"]},
            }}},
            "requestState": "state-1",
        }),
        Some(answers) => {
            let answer = &answers["q"];
            let text = format!(
                "{name}: {} {} ({})",
                answer["action"].as_str().unwrap_or_default(),
                answer["content"],
                params["requestState"].as_str().unwrap_or("no state")
            );
            json!({"resultType": "complete", "content": [{"type": "text", "text": text}]})
        }
    };
    Some(result(id, body))
}

/// Whether a `tools/call` carries each top-level argument its tool's schema designates with
/// `x-mcp-header` in its `Mcp-Param-<name>` header (SEP-2243), as a 2026-07-28 server checks.
fn params_in_headers(request: &Request, state: &State) -> bool {
    let params = &request.body["params"];
    let schema = state
        .tools
        .lock()
        .unwrap()
        .iter()
        .find(|t| t["name"] == params["name"])
        .map(|t| t["inputSchema"].clone())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return true;
    };
    properties.iter().all(|(name, property)| {
        let Some(header) = property["x-mcp-header"].as_str() else {
            return true;
        };
        let sent = request.header(&format!("mcp-param-{}", header.to_ascii_lowercase()));
        match &params["arguments"][name] {
            Value::String(value) => sent == Some(value.as_str()),
            Value::Null => sent.is_none(),
            other => sent == Some(other.to_string().as_str()),
        }
    })
}

/// The revision a modern server speaks.
const MODERN: &str = "2026-07-28";

/// The JSON-RPC answer to request `message` (a method other than the lifecycle's).
async fn answer_request(message: &Value, state: &State) -> String {
    let id = &message["id"];
    let method = message["method"].as_str().unwrap_or_default();
    match method {
        "tools/list" => {
            // The list as it is when the request arrives: a slow answer is an old list.
            let tools = state.tools.lock().unwrap().clone();
            let delay = state.list_delays.lock().unwrap().pop_front();
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            if state.list_fails.load(Ordering::SeqCst) {
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": -32603, "message": "the tool list is unavailable"}})
                .to_string()
            } else {
                result(id, json!({"tools": tools}))
            }
        }
        "tools/call" => {
            let delay = state.call_delays.lock().unwrap().pop_front();
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            let name = message["params"]["name"].as_str().unwrap_or_default();
            let text = message["params"]["arguments"]["message"]
                .as_str()
                .unwrap_or_default();
            let definition = state
                .tools
                .lock()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .cloned();
            let listed = definition.is_some();
            // A tool listed with `structuredAnswer` answers with it as its structured content.
            let structured = definition.and_then(|t| t.get("structuredAnswer").cloned());
            let size = *state.result_bytes.lock().unwrap();
            if let Some(structured) = structured {
                result(
                    id,
                    json!({"content": [{"type": "text", "text": structured.to_string()}],
                           "structuredContent": structured}),
                )
            } else if let Some(bytes) = size.filter(|_| listed) {
                result(
                    id,
                    json!({"content": [{"type": "text", "text": "x".repeat(bytes)}]}),
                )
            } else if listed {
                result(
                    id,
                    json!({"content": [{"type": "text", "text": format!("{name}: {text}")}]}),
                )
            } else {
                result(
                    id,
                    json!({"content": [{"type": "text", "text": format!("no tool {name}")}],
                           "isError": true}),
                )
            }
        }
        "ping" => result(id, json!({})),
        _ => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": format!("no method {method}")}})
        .to_string(),
    }
}

/// An event stream: the Streamable HTTP GET stream (messages the test announces), or the
/// HTTP+SSE stream opening with its `endpoint` event.
async fn stream(
    mut socket: TcpStream,
    state: Arc<State>,
    endpoint: Option<String>,
) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
    socket.write_all(head.as_bytes()).await?;
    let chunk = |event: String| format!("{:x}\r\n{event}\r\n", event.len());
    if let Some(endpoint) = endpoint {
        let event = format!("event: endpoint\ndata: {endpoint}\n\n");
        socket.write_all(chunk(event).as_bytes()).await?;
    }
    let (sender, mut messages) = mpsc::unbounded_channel();
    state.streams.lock().unwrap().push(sender);
    let (mut reader, mut writer) = socket.split();
    let mut ignored = [0u8; 256];
    loop {
        tokio::select! {
            message = messages.recv() => {
                let Some(message) = message else { break };
                let event = format!("event: message\ndata: {message}\n\n");
                writer.write_all(chunk(event).as_bytes()).await?;
            }
            // The client hung up (its session ended): the stream is no longer counted open.
            read = reader.read(&mut ignored) => {
                if matches!(read, Ok(0) | Err(_)) {
                    return Ok(());
                }
            }
        }
    }
    writer.write_all(b"0\r\n\r\n").await?;
    writer.shutdown().await
}

/// `key=value&…` as its pairs.
fn form(text: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(text.as_bytes())
        .into_owned()
        .collect()
}

fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The secret of a confidential client.
pub fn secret_of(client: &str) -> String {
    format!("secret-of-{client}")
}

/// PKCE's S256: the challenge a verifier answers to.
fn s256(verifier: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

impl OAuth {
    fn challenge(&self, base: &str) -> String {
        let scope = self.config.scope;
        if self.config.challenge_names_metadata {
            format!(
                "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource{}\", scope=\"{scope}\"",
                self.path
            )
        } else {
            format!("Bearer error=\"invalid_token\", scope=\"{scope}\"")
        }
    }

    /// Whether `request` carries an access token issued and not revoked.
    fn admits(&self, request: &Request) -> bool {
        let state = self.state.lock().unwrap();
        request
            .header("authorization")
            .and_then(|h| h.strip_prefix("Bearer "))
            .is_some_and(|token| state.access.iter().any(|t| t == token))
    }

    /// Whether the server moves to another authorization server at `request` (a signed-in
    /// `tools/list` after [`McpServer::move_authorization_server_at_next_listing`]): it has.
    fn moves_now(&self, request: &Request) -> bool {
        let listing = request.body["method"] == "tools/list";
        if !listing || !self.admits(request) {
            return false;
        }
        let mut state = self.state.lock().unwrap();
        if !state.move_at_listing {
            return false;
        }
        state.move_at_listing = false;
        state.move_away();
        true
    }

    /// Whether `request` is one of the handshake's, let through without a token
    /// (`open_handshake`).
    fn lets_through(&self, request: &Request) -> bool {
        let method = request.body["method"].as_str().unwrap_or_default();
        self.config.open_handshake && !matches!(method, "tools/list" | "tools/call")
    }

    /// A 403 `insufficient_scope` for a call of a scoped tool whose token lacks its scope.
    fn forbids(&self, base: &str, request: &Request) -> Option<String> {
        let tool = request.body["params"]["name"].as_str()?;
        let (_, needed) = self.config.scoped_tools.iter().find(|(t, _)| *t == tool)?;
        let token = request.header("authorization")?.strip_prefix("Bearer ")?;
        let state = self.state.lock().unwrap();
        let granted = state
            .granted
            .get(token)
            .map(String::as_str)
            .unwrap_or_default();
        if granted.split_whitespace().any(|s| s == *needed) {
            return None;
        }
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{} {needed}\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"",
            self.config.scope
        );
        Some(respond(
            403,
            &[("WWW-Authenticate", challenge)],
            "application/json",
            r#"{"error":"insufficient_scope"}"#,
        ))
    }

    /// The client a token request authenticates as: for a confidential client, its id and
    /// secret as `client_auth` says (`client_secret_basic`: RFC 6749 §2.3.1's HTTP Basic of the
    /// form-encoded id and secret); for a public one, the `client_id` it names.
    fn authenticated(
        &self,
        base: &str,
        request: &Request,
        pairs: &[(String, String)],
    ) -> Option<String> {
        match self.config.client_auth {
            None => field(pairs, "client_id").map(str::to_owned),
            Some("client_secret_post") => {
                let client = field(pairs, "client_id")?;
                (field(pairs, "client_secret") == Some(secret_of(client).as_str()))
                    .then(|| client.to_owned())
            }
            Some("private_key_jwt") => {
                use base64::Engine;
                let jwt = base64::engine::general_purpose::URL_SAFE_NO_PAD;
                let typed = field(pairs, "client_assertion_type")
                    == Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
                let assertion = field(pairs, "client_assertion")?;
                let (signed, signature) = assertion.rsplit_once('.')?;
                let key = ring::signature::UnparsedPublicKey::new(
                    &ring::signature::ECDSA_P256_SHA256_FIXED,
                    self.config.client_key.clone()?,
                );
                let verified = key.verify(signed.as_bytes(), &jwt.decode(signature).ok()?);
                let claims: Value =
                    serde_json::from_slice(&jwt.decode(signed.split('.').nth(1)?).ok()?).ok()?;
                let client = claims["iss"].as_str()?;
                let good = typed
                    && verified.is_ok()
                    && claims["sub"] == client
                    && claims["aud"] == base
                    && self.config.issued_clients.contains(&client)
                    && field(pairs, "client_id").is_none_or(|id| id == client);
                good.then(|| client.to_owned())
            }
            Some(_) => {
                use base64::Engine;
                let basic = request.header("authorization")?.strip_prefix("Basic ")?;
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(basic)
                    .ok()?;
                let pairs = form(&String::from_utf8(decoded).ok()?.replacen(':', "=", 1));
                let (client, secret) = pairs.first()?;
                (*secret == secret_of(client)).then(|| client.clone())
            }
        }
    }

    /// The answer of the authorization server and the resource's metadata, for their paths.
    fn answer(&self, base: &str, request: &Request) -> Option<String> {
        let (path, query) = request
            .path
            .split_once('?')
            .unwrap_or((request.path.as_str(), ""));
        let json = |status: u16, body: Value| {
            Some(respond(status, &[], "application/json", &body.to_string()))
        };
        let resource = format!("{base}{}", self.path);
        let mut state = self.state.lock().unwrap();
        // The authorization server's own paths: after a move, those under `/as2` (its metadata
        // at RFC 8414's path with the issuer's path appended); the first one's answer nothing.
        let (issuer, path) = match (state.moved, path.strip_prefix("/as2")) {
            (true, Some(rest)) => (format!("{base}/as2"), rest.to_owned()),
            (true, None) if matches!(path, "/authorize" | "/token" | "/register") => {
                return Some(respond(404, &[], "text/plain", "not found"));
            }
            (true, None) => (
                format!("{base}/as2"),
                match path {
                    "/.well-known/oauth-authorization-server/as2" => {
                        "/.well-known/oauth-authorization-server".to_owned()
                    }
                    "/.well-known/oauth-authorization-server" => "/.well-known/moved".to_owned(),
                    p => p.to_owned(),
                },
            ),
            (false, _) => (base.to_owned(), path.to_owned()),
        };
        let path = path.as_str();
        let methods = match self.config.client_auth {
            Some(method) => vec![method],
            None => vec!["none"],
        };
        let mut metadata = json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": if self.config.grants.is_empty() {
                vec!["authorization_code", "refresh_token"]
            } else {
                self.config.grants.clone()
            },
            "code_challenge_methods_supported": self.config.pkce_methods,
            "token_endpoint_auth_methods_supported": methods,
            "scopes_supported": ["tools:read", "tools:write"],
        });
        if self.config.reads_client_documents {
            metadata["client_id_metadata_document_supported"] = json!(true);
        }
        if self.config.client_key.is_some() {
            metadata["token_endpoint_auth_signing_alg_values_supported"] = json!(["ES256"]);
        }
        let registers = self.config.issued_clients.is_empty();
        if !registers {
            metadata
                .as_object_mut()
                .unwrap()
                .remove("registration_endpoint");
        }
        if self.config.no_metadata && path.starts_with("/.well-known/") {
            return Some(respond(404, &[], "text/plain", "not found"));
        }
        let idp = format!("{base}/idp");
        match (request.method.as_str(), path) {
            ("GET", "/idp/.well-known/openid-configuration") if self.config.id_token.is_some() => {
                json(
                    200,
                    json!({"issuer": idp, "token_endpoint": format!("{idp}/token"),
                       "grant_types_supported": ["urn:ietf:params:oauth:grant-type:token-exchange"]}),
                )
            }
            // RFC 8693 for SEP-990: the ID token, for an ID-JAG meant for this authorization
            // server and this resource, for the issued client.
            ("POST", "/idp/token") if self.config.id_token.is_some() => {
                use base64::Engine;
                let pairs = form(request.body.as_str().unwrap_or_default());
                state.idp_requests.push(pairs.clone());
                let good = field(&pairs, "grant_type")
                    == Some("urn:ietf:params:oauth:grant-type:token-exchange")
                    && field(&pairs, "subject_token") == self.config.id_token
                    && field(&pairs, "subject_token_type")
                        == Some("urn:ietf:params:oauth:token-type:id_token")
                    && field(&pairs, "requested_token_type")
                        == Some("urn:ietf:params:oauth:token-type:id-jag")
                    && field(&pairs, "audience") == Some(base)
                    && field(&pairs, "resource") == Some(resource.as_str());
                if !good {
                    return json(400, json!({"error": "invalid_request"}));
                }
                state.next += 1;
                let jwt = base64::engine::general_purpose::URL_SAFE_NO_PAD;
                let claims = json!({"iss": idp, "aud": base, "sub": "student",
                    "client_id": self.config.issued_clients.first(), "resource": resource,
                    "jti": state.next.to_string(), "iat": 0, "exp": u64::MAX / 2});
                let jag = format!(
                    "{}.{}.c2lnbmVk",
                    jwt.encode(r#"{"alg":"ES256","typ":"oauth-id-jag+jwt"}"#),
                    jwt.encode(claims.to_string())
                );
                state.jags.push(jag.clone());
                json(
                    200,
                    json!({"access_token": jag, "token_type": "N_A",
                       "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}),
                )
            }
            ("GET", p)
                if p == format!("/.well-known/oauth-protected-resource{}", self.path)
                    || p == "/.well-known/oauth-protected-resource" =>
            {
                json(
                    200,
                    json!({
                        "resource": self.config.names_resource.map_or(resource.clone(), str::to_owned),
                        "authorization_servers": [issuer],
                        "scopes_supported": ["tools:read", "tools:write"],
                    }),
                )
            }
            ("GET", "/.well-known/oauth-authorization-server") if !self.config.openid => {
                json(200, metadata)
            }
            ("GET", "/.well-known/openid-configuration") if self.config.openid => {
                json(200, metadata)
            }
            ("GET", p) if p.starts_with("/.well-known/") => {
                Some(respond(404, &[], "text/plain", "not found"))
            }
            ("POST", "/register") if registers => {
                state.next += 1;
                let client = format!("client-{}", state.next);
                let uris: Vec<String> = request.body["redirect_uris"]
                    .as_array()
                    .map(|u| {
                        u.iter()
                            .filter_map(|u| u.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                state.registrations.push(request.body.clone());
                state.clients.push((client.clone(), uris.clone()));
                let mut registered = json!({"client_id": client, "redirect_uris": uris,
                                            "token_endpoint_auth_method": "none"});
                if let Some(method) = self.config.client_auth {
                    registered["client_secret"] = json!(secret_of(&client));
                    registered["token_endpoint_auth_method"] = json!(method);
                }
                json(201, registered)
            }
            ("GET", "/authorize") => {
                let pairs = form(query);
                state.authorizations.push(pairs.clone());
                let client = field(&pairs, "client_id").unwrap_or_default().to_owned();
                let redirect = field(&pairs, "redirect_uri").unwrap_or_default().to_owned();
                // A document's address: a real server fetches it and checks the redirect URI
                // it lists; this one takes an https address as read.
                let document = self.config.reads_client_documents && client.starts_with("https://");
                let known = document
                    || self.config.issued_clients.contains(&client.as_str())
                    || state
                        .clients
                        .iter()
                        .any(|(id, uris)| *id == client && uris.contains(&redirect));
                let pkce = field(&pairs, "code_challenge_method") == Some("S256");
                if !known || !pkce || field(&pairs, "resource") != Some(resource.as_str()) {
                    return json(400, json!({"error": "invalid_request"}));
                }
                state.next += 1;
                let code = format!("code-{}", state.next);
                let challenge = field(&pairs, "code_challenge")
                    .unwrap_or_default()
                    .to_owned();
                let scope = field(&pairs, "scope").unwrap_or_default().to_owned();
                state
                    .codes
                    .insert(code.clone(), (client, redirect.clone(), challenge, scope));
                let back = format!(
                    "{redirect}?code={code}&state={}",
                    field(&pairs, "state").unwrap_or_default()
                );
                Some(respond(302, &[("Location", back)], "text/plain", ""))
            }
            ("POST", "/token") => {
                let pairs = form(request.body.as_str().unwrap_or_default());
                state.token_requests.push(pairs.clone());
                let authenticated = self.authenticated(&issuer, request, &pairs);
                if self.config.client_auth.is_some() && authenticated.is_none() {
                    return json(401, json!({"error": "invalid_client"}));
                }
                let granted = match field(&pairs, "grant_type") {
                    Some("authorization_code") => {
                        let code = field(&pairs, "code").unwrap_or_default();
                        state
                            .codes
                            .remove(code)
                            .and_then(|(client, redirect, challenge, scope)| {
                                let verifier = field(&pairs, "code_verifier").unwrap_or_default();
                                let good = authenticated.as_deref() == Some(client.as_str())
                                    && field(&pairs, "redirect_uri") == Some(redirect.as_str())
                                    && s256(verifier) == challenge
                                    && field(&pairs, "resource") == Some(resource.as_str());
                                good.then_some(scope)
                            })
                    }
                    Some("refresh_token") => {
                        let old = field(&pairs, "refresh_token")
                            .unwrap_or_default()
                            .to_owned();
                        let known = state.refresh.iter().position(|t| *t == old);
                        known.map(|at| {
                            state.refresh.remove(at);
                            state.granted.get(&old).cloned().unwrap_or_default()
                        })
                    }
                    Some("client_credentials")
                        if self.config.grants.contains(&"client_credentials") =>
                    {
                        let issued = authenticated
                            .as_deref()
                            .is_some_and(|c| self.config.issued_clients.contains(&c));
                        let scope = field(&pairs, "scope").unwrap_or(self.config.scope);
                        (issued && field(&pairs, "resource") == Some(resource.as_str()))
                            .then(|| scope.to_owned())
                    }
                    Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => {
                        let assertion = field(&pairs, "assertion").unwrap_or_default();
                        let known = state.jags.iter().position(|j| j == assertion);
                        known.map(|at| {
                            state.jags.remove(at);
                            self.config.scope.to_owned()
                        })
                    }
                    _ => None,
                };
                let Some(scope) = granted else {
                    return json(400, json!({"error": "invalid_grant"}));
                };
                let unattended = !matches!(
                    field(&pairs, "grant_type"),
                    Some("authorization_code" | "refresh_token")
                );
                state.next += 1;
                let (access, refresh) = (
                    format!("access-{}", state.next),
                    format!("refresh-{}", state.next),
                );
                state.access.push(access.clone());
                state.granted.insert(access.clone(), scope.clone());
                let mut tokens = json!({"access_token": access, "token_type": "Bearer",
                       "expires_in": self.config.expires_in, "scope": scope});
                if !unattended {
                    state.refresh.push(refresh.clone());
                    state.granted.insert(refresh.clone(), scope.clone());
                    tokens["refresh_token"] = json!(refresh);
                }
                json(200, tokens)
            }
            _ => None,
        }
    }
}
