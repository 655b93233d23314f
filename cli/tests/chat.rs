//! `harness chat --message` runs a whole turn with a tool call against an OpenAI-compatible
//! server: here a scripted one on 127.0.0.1, speaking the real streaming wire format.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::thread;

/// Serves one streamed response per connection, in order, and returns each request's
/// Authorization header and JSON body.
fn scripted_server(
    responses: Vec<Vec<String>>,
) -> (String, thread::JoinHandle<Vec<(String, String)>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        let mut seen = Vec::new();
        for events in responses {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let (mut length, mut authorization) = (0, String::new());
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(": ") {
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.parse().unwrap(),
                        "authorization" => authorization = value.to_owned(),
                        _ => {}
                    }
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            seen.push((authorization, String::from_utf8(body).unwrap()));
            let mut stream = reader.into_inner();
            let mut reply = String::from(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
            );
            for event in events {
                reply.push_str(&format!("data: {event}\n\n"));
            }
            stream.write_all(reply.as_bytes()).unwrap();
        }
        seen
    });
    (endpoint, server)
}

fn chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
    serde_json::json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    .to_string()
}

#[test]
fn one_message_runs_a_whole_turn_with_a_tool_call_and_prints_each_step() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let harness = env!("CARGO_BIN_EXE_harness");
    let accepted = Command::new(harness)
        .args(["consent", "--data-dir", data, "accept-terms"])
        .output()
        .unwrap();
    assert!(accepted.status.success(), "{accepted:?}");

    let call = serde_json::json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1",
        "type": "function", "function": {"name": "settings__get", "arguments": "{}"}}]});
    let (endpoint, server) = scripted_server(vec![
        vec![
            chunk(call, None),
            chunk(serde_json::json!({}), Some("tool_calls")),
            "[DONE]".into(),
        ],
        vec![
            chunk(serde_json::json!({"content": "语言是中文。"}), None),
            chunk(serde_json::json!({}), Some("stop")),
            "[DONE]".into(),
        ],
    ]);
    let output = Command::new(harness)
        .args([
            "chat",
            "--data-dir",
            data,
            "--endpoint",
            &endpoint,
            "--model",
            "qwen-plus",
        ])
        .args(["--message", "我的语言设置是什么？"])
        .env("HARNESS_API_KEY", "sk-test-1234")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}\n{stderr}");

    let seen = server.join().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|(auth, _)| auth == "Bearer sk-test-1234"));
    let first: serde_json::Value = serde_json::from_str(&seen[0].1).unwrap();
    assert_eq!(first["model"], "qwen-plus");
    assert_eq!(first["stream"], true);
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"], "我的语言设置是什么？");
    // The tool's result went back to the model as the tool message answering call_1.
    let second: serde_json::Value = serde_json::from_str(&seen[1].1).unwrap();
    let answer = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (answer["role"].as_str(), answer["tool_call_id"].as_str()),
        (Some("tool"), Some("call_1"))
    );
    assert!(
        answer["content"]
            .as_str()
            .unwrap()
            .contains("\"language\":\"zh\""),
        "{answer}"
    );

    assert!(
        stdout.contains("\n  → settings__get {}\n    run: "),
        "{stdout}"
    );
    assert!(stdout.contains("    result: {\"plugins\""), "{stdout}");
    assert!(
        stdout.contains("语言是中文。\n[done — 2 model requests"),
        "{stdout}"
    );
    assert!(!stdout.contains("sk-test-1234") && !stderr.contains("sk-test-1234"));
}
