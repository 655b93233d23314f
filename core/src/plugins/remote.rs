//! Remote plugins: MCP servers reached over Streamable HTTP with `rmcp`, the official Rust MCP
//! SDK, as the client. A server's tools become plugin `mcp-<name>` (`Plugin::from_mcp`:
//! `readOnlyHint: true` is read, anything else write; every result untrusted), and each call
//! goes through the one invoke path to [`RemoteServer`], the plugin's handler.
//!
//! Where a server may be (DESIGN.md §5): `https://` to a public address — the address guard of
//! remote plugins applies, in the client's own resolver, so a name that resolves to loopback or
//! a private network is refused — or `http://` to a loopback IP literal (127.0.0.0/8, [::1]),
//! for a server the user runs on the same machine while developing. Nothing else: no plain
//! http to any other host, no https to a private address, no redirects.
//!
//! rmcp 2.2 has no client for the older HTTP+SSE transport (it was removed from the SDK), so a
//! server that speaks only that is reported as unreachable by Streamable HTTP.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientRequest, PingRequest};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::NeverRetry;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use url::{Host, Url};

use crate::handler::{PluginHandler, ToolContext};
use crate::registry::{McpTool, PluginKind, Tool};
use crate::secrets::SecretStore;

/// seed: a remote call must not hang a turn; longer than the gate's 10 s since a server may
/// itself call out.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The keystore key of a remote server's bearer token.
pub fn token_key(name: &str) -> String {
    format!("mcp.{name}.token")
}

/// Checks where a server is before anything is sent; returns the URL and whether it is the
/// loopback development case (no address guard).
pub fn check_url(raw: &str) -> Result<(Url, bool), String> {
    let url = Url::parse(raw).map_err(|e| format!("{raw} is not a URL ({e})"))?;
    let literal = match url.host() {
        Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        Some(Host::Domain(_)) => None,
        None => return Err(format!("{raw} names no host")),
    };
    match url.scheme() {
        "https" => match literal {
            Some(ip) if crate::gates::refused_address(ip) => Err(format!(
                "{ip} is a private or local address, which remote servers may not be at; \
                 use http://127.0.0.1 only for a server on this machine"
            )),
            _ => Ok((url, false)),
        },
        "http" if literal.is_some_and(|ip| ip.is_loopback()) => Ok((url, true)),
        "http" => Err(format!(
            "{raw}: a remote server is reached over https; plain http only to a loopback \
             address (127.0.0.1 or [::1]) for development"
        )),
        other => Err(format!("{raw}: {other} is not https")),
    }
}

type Session = RunningService<RoleClient, ()>;

/// Where a server's bearer token comes from.
enum Token {
    None,
    Given(String),
    /// Read from the keystore at each connect, never held under a lock.
    Keystore(Arc<dyn SecretStore>, String),
}

/// One MCP server: its URL, token and open session, reconnected after the session ends.
pub struct RemoteServer {
    url: Url,
    loopback: bool,
    token: Token,
    timeout: Duration,
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
    /// The tool list the server gave last.
    tools: Mutex<Vec<McpTool>>,
}

impl RemoteServer {
    /// Checks `url`, without connecting.
    pub fn new(url: &str, token: Option<String>, timeout: Duration) -> Result<Self, String> {
        let (url, loopback) = check_url(url)?;
        Ok(Self {
            url,
            loopback,
            token: token.map_or(Token::None, Token::Given),
            timeout,
            session: tokio::sync::Mutex::new(None),
            tools: Mutex::new(Vec::new()),
        })
    }

    /// A server whose token (if any) is the keystore's `key`.
    pub(crate) fn with_keystore(
        url: &str,
        secrets: Arc<dyn SecretStore>,
        key: String,
        timeout: Duration,
    ) -> Result<Self, String> {
        let mut server = Self::new(url, None, timeout)?;
        server.token = Token::Keystore(secrets, key);
        Ok(server)
    }

    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    async fn connect(&self) -> Result<Session, String> {
        let trust = if self.loopback {
            PluginKind::Bundled
        } else {
            PluginKind::Remote
        };
        let client = crate::gates::guarded_client(trust)
            .map_err(|e| format!("the HTTP client could not start: {e}"))?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
        // A broken stream ends the session at once rather than being retried behind the call's
        // back: the call fails now, and the next one connects anew.
        config.retry_config = Arc::new(NeverRetry::default());
        let token = match &self.token {
            Token::None => None,
            Token::Given(token) => Some(token.clone()),
            Token::Keystore(secrets, key) => secrets
                .get(key)
                .map_err(|e| format!("could not read the server's token: {e}"))?,
        };
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let connecting = ().serve(transport);
        match tokio::time::timeout(self.timeout, connecting).await {
            Ok(Ok(session)) => Ok(session),
            Ok(Err(e)) => Err(format!("could not connect to {}: {e}", self.url)),
            Err(_) => Err(format!(
                "could not connect to {}: no answer within {} s",
                self.url,
                self.timeout.as_secs()
            )),
        }
    }

    /// The open session, connecting (again) when there is none or it ended.
    async fn session(&self) -> Result<Arc<Session>, String> {
        let mut slot = self.session.lock().await;
        if let Some(session) = slot.as_ref().filter(|s| !s.is_closed()) {
            return Ok(session.clone());
        }
        let session = Arc::new(self.connect().await?);
        *slot = Some(session.clone());
        Ok(session)
    }

    /// Forgets the session, so the next call connects anew (after a failure of the transport).
    async fn drop_session(&self) {
        self.session.lock().await.take();
    }

    /// Connects if needed and lists every tool (all pages).
    pub async fn list_tools(&self) -> Result<Vec<McpTool>, String> {
        let session = self.session().await?;
        let listing = session.peer().list_all_tools();
        let tools = match tokio::time::timeout(self.timeout, listing).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => {
                self.drop_session().await;
                return Err(format!("{} did not list its tools: {e}", self.url));
            }
            Err(_) => {
                self.drop_session().await;
                return Err(format!("{} did not list its tools in time", self.url));
            }
        };
        let tools: Vec<McpTool> = tools
            .into_iter()
            .map(|t| {
                serde_json::to_value(&t)
                    .and_then(serde_json::from_value)
                    .map_err(|e| format!("tool {} is not readable: {e}", t.name))
            })
            .collect::<Result<_, _>>()?;
        *crate::lock(&self.tools) = tools.clone();
        Ok(tools)
    }

    /// Calls tool `name` with `input`; the result as JSON, or the tool's error.
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, String> {
        let session = self.session().await?;
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Value::Object(arguments) = input {
            params = params.with_arguments(arguments);
        }
        let call = session.peer().call_tool(params);
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(self.timeout, call) => outcome,
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
                Err(format!("the server at {} failed the call: {e}", self.url))
            }
            Err(_) => Err(format!(
                "the server at {} did not answer within {} s",
                self.url,
                self.timeout.as_secs()
            )),
        }
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
    async fn run(&self, tool: &Tool, input: Value, _ctx: ToolContext) -> Result<Value, String> {
        self.call(&tool.name, input).await
    }
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
            Some(kind @ ("image" | "audio")) => {
                let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("?");
                let size = block
                    .get("data")
                    .and_then(Value::as_str)
                    .map_or(0, str::len)
                    / 4
                    * 3;
                Value::String(format!("[{kind}: {mime}, about {size} bytes]"))
            }
            Some(other) => Value::String(format!("[{other}]")),
            None => Value::Null,
        })
        .collect();
    if result.is_error == Some(true) {
        let text: Vec<String> = blocks
            .iter()
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
        assert_eq!(
            shape(result(json!({"content": [
                {"type": "text", "text": "a picture"},
                {"type": "image", "data": "AAAAAAAA", "mimeType": "image/png"}
            ]}))),
            Ok(json!({"content": ["a picture", "[image: image/png, about 6 bytes]"]}))
        );
    }

    #[test]
    fn a_server_is_https_or_http_to_loopback_only() {
        assert!(!check_url("https://mcp.example.com/mcp").unwrap().1);
        assert!(check_url("http://127.0.0.1:3001/mcp").unwrap().1);
        assert!(check_url("http://[::1]:3001/mcp").unwrap().1);
        assert_eq!(
            check_url("http://mcp.example.com/mcp").unwrap_err(),
            "http://mcp.example.com/mcp: a remote server is reached over https; plain http only \
             to a loopback address (127.0.0.1 or [::1]) for development"
        );
        assert!(check_url("http://localhost:3001/mcp").is_err());
        assert_eq!(
            check_url("https://192.168.1.2/mcp").unwrap_err(),
            "192.168.1.2 is a private or local address, which remote servers may not be at; use \
             http://127.0.0.1 only for a server on this machine"
        );
        assert!(check_url("https://127.0.0.1/mcp").is_err());
        assert!(check_url("ftp://mcp.example.com/").is_err());
    }
}
