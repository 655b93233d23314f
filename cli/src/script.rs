//! The demo's model: a server on 127.0.0.1 that speaks the OpenAI-compatible Chat Completions
//! wire format the agent uses with any provider (a streamed `text/event-stream` of
//! `chat.completion.chunk` events ending with `data: [DONE]`), answering each request with the
//! next reply of a fixed script. The demo thus runs the agent's real loop — the request, the
//! stream, each tool call through the one invoke path — without a network or an API key of a
//! real provider.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One reply of the script: the model's text, or the tools it calls (name as the model sees
/// it, arguments as JSON).
pub enum Reply {
    Says(&'static str),
    /// The model's text after calls that asked the user: `declined` when a tool message it is
    /// sent is the user's refusal (`declined`), `ran` otherwise — told apart, as a model
    /// would, by reading the request.
    Hears {
        ran: &'static str,
        declined: &'static str,
    },
    Calls(Vec<(&'static str, Value)>),
}

/// Whether a tool message answering the model's last calls is the user's refusal.
fn user_declined(request: &Value) -> bool {
    let messages = request["messages"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    // The time comes after the history (DESIGN.md §13): the results are the last before it.
    messages
        .iter()
        .rev()
        .skip_while(|m| m["role"] == "system")
        .take_while(|m| m["role"] == "tool")
        .filter_map(|m| serde_json::from_str::<Value>(m["content"].as_str()?).ok())
        .any(|result| result["error"]["code"] == "declined")
}

/// A running scripted model; it stops serving when the process ends.
pub struct ScriptedModel {
    endpoint: String,
}

impl ScriptedModel {
    /// Listens on a free port of 127.0.0.1 and answers requests with `script`, in order; a
    /// request past its end gets a 503 the agent reports.
    pub fn start(script: Vec<Reply>) -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot start the demo's model on 127.0.0.1: {e}"))?;
        let endpoint = format!(
            "http://{}/v1",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let calls = Arc::new(Mutex::new(0u32));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let next = script.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let _ = answer(stream, next, &calls);
            }
        });
        Ok(Self { endpoint })
    }

    /// The base URL for `model.endpoint`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

/// Reads one request whole (head and body), then sends the reply and closes.
fn answer(stream: TcpStream, reply: Option<Reply>, calls: &Mutex<u32>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut stream = reader.into_inner();
    let Some(reply) = reply else {
        let text = "the demo's script has no reply left";
        return stream.write_all(
            format!(
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            )
            .as_bytes(),
        );
    };
    let mut events = Vec::new();
    let says = |text: &str| chunk(json!({"role": "assistant", "content": text}), None);
    let finish = match reply {
        Reply::Says(text) => {
            events.push(says(text));
            "stop"
        }
        Reply::Hears { ran, declined } => {
            let request = serde_json::from_slice(&body).unwrap_or(Value::Null);
            events.push(says(if user_declined(&request) {
                declined
            } else {
                ran
            }));
            "stop"
        }
        Reply::Calls(list) => {
            let mut n = calls.lock().unwrap_or_else(|p| p.into_inner());
            let tool_calls: Vec<Value> = list
                .into_iter()
                .enumerate()
                .map(|(index, (name, arguments))| {
                    *n += 1;
                    json!({"index": index, "id": format!("call_{n}"), "type": "function",
                        "function": {"name": name, "arguments": arguments.to_string()}})
                })
                .collect();
            events.push(chunk(
                json!({"role": "assistant", "tool_calls": tool_calls}),
                None,
            ));
            "tool_calls"
        }
    };
    events.push(chunk(json!({}), Some(finish)));
    let mut out = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    );
    for event in events {
        out.push_str(&format!("data: {event}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    stream.write_all(out.as_bytes())?;
    stream.flush()
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "demo", "object": "chat.completion.chunk", "model": "demo-script",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}
