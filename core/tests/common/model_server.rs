//! A scripted OpenAI-compatible model server on 127.0.0.1, speaking real HTTP/1.1: each
//! request it receives is recorded (so a test can assert on the exact JSON sent) and answered
//! with the next [`Reply`] of its script — an event stream sent as chunked `text/event-stream`
//! (with delays between events, or cut in the middle), or a whole body.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One piece of an event stream.
#[derive(Debug, Clone)]
pub enum Part {
    /// An event `data: {payload}` followed by its blank line, in one chunk.
    Data(String),
    /// Bytes as they are, in one chunk: half an event, a comment, a keep-alive.
    Raw(String),
    /// A pause before the next part.
    Delay(Duration),
    /// The connection closes here, without the body's end.
    Cut,
}

/// `data: <the JSON>`.
pub fn data(json: &Value) -> Part {
    Part::Data(json.to_string())
}

/// `data: [DONE]`.
pub fn done() -> Part {
    Part::Data("[DONE]".to_owned())
}

/// One streamed chunk of the first choice: `delta`.
pub fn chunk(delta: Value) -> Part {
    data(&serde_json::json!({"choices": [{"index": 0, "delta": delta}]}))
}

/// A whole answer in words, ending the turn.
pub fn text(words: &str) -> Reply {
    Reply::events([
        chunk(serde_json::json!({"content": words})),
        data(&serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        done(),
    ])
}

/// The model calls these tools, each `(call id, tool name, arguments JSON)`, in one answer.
pub fn calls(list: &[(&str, &str, &str)]) -> Reply {
    let mut parts: Vec<Part> = list
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| {
            chunk(
                serde_json::json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                "function": {"name": name, "arguments": args}}]}),
            )
        })
        .collect();
    parts.push(data(
        &serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ));
    parts.push(done());
    Reply::events(parts)
}

#[derive(Debug, Clone)]
pub enum Body {
    Events(Vec<Part>),
    Whole {
        content_type: String,
        text: String,
    },
    /// JSON `{"path": …, "headers": {name: value}}` of the request being answered, as a
    /// service that echoes what it was sent.
    Echo,
}

/// One response of the script.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl Reply {
    /// 200 with a `text/event-stream` body of `parts`.
    pub fn events(parts: impl IntoIterator<Item = Part>) -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            body: Body::Events(parts.into_iter().collect()),
        }
    }

    /// `status` with a JSON body.
    pub fn json(status: u16, json: &Value) -> Self {
        Self::whole(status, "application/json", &json.to_string())
    }

    /// `status` with any body.
    pub fn whole(status: u16, content_type: &str, text: &str) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::Whole {
                content_type: content_type.to_owned(),
                text: text.to_owned(),
            },
        }
    }

    /// 200 with the request's path and headers as JSON.
    pub fn echo() -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            body: Body::Echo,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (a JSON string holding the text, if it was not JSON).
    pub body: Value,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Script {
    replies: VecDeque<Reply>,
    /// Answer every request with this one once the script is spent (benchmarks).
    again: Option<Reply>,
}

pub struct ModelServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    task: JoinHandle<()>,
}

impl ModelServer {
    /// Points `engine`'s agent at this server: its endpoint, model `test-model`, API key `key`.
    pub fn configure(&self, engine: &harness_core::Engine, key: &str) {
        for (name, value) in [
            ("model.endpoint", Value::from(self.endpoint())),
            ("model.name", Value::from("test-model")),
        ] {
            engine
                .change_setting(harness_core::settings::parse_change(name, &value).unwrap())
                .unwrap();
        }
        engine.set_secret("model.apiKey", key).unwrap();
    }

    /// A server answering its requests with `script`, in order; a request past the end gets
    /// a 599 the client reports as busy.
    pub async fn start(script: Vec<Reply>) -> Self {
        Self::serve(Script {
            replies: script.into(),
            again: None,
        })
        .await
    }

    /// A server answering every request with `reply`.
    pub async fn always(reply: Reply) -> Self {
        Self::serve(Script {
            replies: VecDeque::new(),
            again: Some(reply),
        })
        .await
    }

    async fn serve(script: Script) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script));
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let recorded = recorded.clone();
                let script = script.clone();
                tokio::spawn(async move {
                    let _ = answer(socket, recorded, script).await;
                });
            }
        });
        Self {
            addr,
            requests,
            task,
        }
    }

    /// The base URL to give the client.
    pub fn endpoint(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request, records it, sends the next reply, closes.
async fn answer(
    mut socket: TcpStream,
    recorded: Arc<Mutex<Vec<Request>>>,
    script: Arc<Mutex<Script>>,
) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    let request = read_request(&mut socket).await?;
    let echo = serde_json::json!({
        "path": request.path,
        "headers": request
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), Value::from(value.as_str())))
            .collect::<serde_json::Map<String, Value>>(),
    });
    recorded.lock().unwrap().push(request);
    let reply = {
        let mut script = script.lock().unwrap();
        script.replies.pop_front().or_else(|| script.again.clone())
    }
    .unwrap_or_else(|| Reply::whole(599, "text/plain", "the script has no reply left"));
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\nConnection: close\r\n",
        reply.status
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = match reply.body {
        Body::Echo => Body::Whole {
            content_type: "application/json".into(),
            text: echo.to_string(),
        },
        other => other,
    };
    match body {
        Body::Whole { content_type, text } => {
            head.push_str(&format!(
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{text}",
                text.len()
            ));
            socket.write_all(head.as_bytes()).await?;
        }
        Body::Events(parts) => {
            head.push_str("Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
            socket.write_all(head.as_bytes()).await?;
            for part in parts {
                let bytes = match part {
                    Part::Data(payload) => format!("data: {payload}\n\n"),
                    Part::Raw(bytes) => bytes,
                    Part::Delay(pause) => {
                        tokio::time::sleep(pause).await;
                        continue;
                    }
                    Part::Cut => return socket.shutdown().await,
                };
                let chunk = format!("{:x}\r\n{bytes}\r\n", bytes.len());
                socket.write_all(chunk.as_bytes()).await?;
            }
            socket.write_all(b"0\r\n\r\n").await?;
        }
        Body::Echo => {}
    }
    socket.shutdown().await
}

pub async fn read_request(socket: &mut TcpStream) -> std::io::Result<Request> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_owned();
    let path = first.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    Ok(Request {
        method,
        path,
        headers,
        body,
    })
}
