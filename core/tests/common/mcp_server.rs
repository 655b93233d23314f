//! A small MCP server on 127.0.0.1, for what the real test server (server-everything) cannot be
//! made to do: a tool list that changes when the test says so and is announced with
//! `notifications/tools/list_changed` on the Streamable HTTP GET stream (server-everything
//! announces only at `initialized`, before rmcp opens that stream), a bearer token it requires,
//! `tools/list` answers that are slow or fail, and — in its HTTP+SSE form — an `endpoint` event
//! naming any URL.
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
        let until = Instant::now() + Duration::from_secs(10);
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
    let known = request
        .header("mcp-session-id")
        .is_some_and(|s| state.sessions.lock().unwrap().iter().any(|k| k == s));
    if !known {
        return respond(404, &[], "text/plain", "no such session");
    }
    if id.is_null() {
        return respond(202, &[], "text/plain", "");
    }
    let body = match method {
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
    };
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
