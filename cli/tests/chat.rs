//! `harness chat --message` runs a whole turn with a tool call against an OpenAI-compatible
//! server: here a scripted one on 127.0.0.1, speaking the real streaming wire format.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::thread;

/// What the scripted server answers one request with.
enum Response {
    /// `200 OK`, an event stream of these `data:` events.
    Stream(Vec<String>),
    /// A refusal: this status with this JSON body.
    Refuse(u16, serde_json::Value),
}

/// Serves one response per connection, in order, and returns each request's Authorization
/// header and JSON body.
fn scripted_server(
    responses: Vec<Response>,
) -> (String, thread::JoinHandle<Vec<(String, String)>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        let mut seen = Vec::new();
        for response in responses {
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
            let reply = match response {
                Response::Stream(events) => {
                    let mut reply = String::from(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
                    );
                    for event in events {
                        reply.push_str(&format!("data: {event}\n\n"));
                    }
                    reply
                }
                Response::Refuse(status, body) => {
                    let body = body.to_string();
                    format!(
                        "HTTP/1.1 {status} Refused\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                }
            };
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
        Response::Stream(vec![
            chunk(call, None),
            chunk(serde_json::json!({}), Some("tool_calls")),
            "[DONE]".into(),
        ]),
        Response::Stream(vec![
            chunk(serde_json::json!({"content": "语言是中文。"}), None),
            chunk(serde_json::json!({}), Some("stop")),
            "[DONE]".into(),
        ]),
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
    // The history ends with the student's words; the time comes after it (DESIGN.md §13).
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(
        messages[messages.len() - 2]["content"],
        "我的语言设置是什么？"
    );
    assert!(
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .starts_with("The local date and time is ")
    );
    // The tool's result went back to the model as the tool message answering call_1.
    let second: serde_json::Value = serde_json::from_str(&seen[1].1).unwrap();
    let second = second["messages"].as_array().unwrap();
    let answer = second[second.len() - 2].clone();
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
    // The server sent no usage: the summary says so instead of "0 tokens".
    assert!(
        stdout.contains("语言是中文。\n[done — 2 model requests, usage not reported]\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("sk-test-1234") && !stderr.contains("sk-test-1234"));
}

/// An answer that says `text` and, when given, the usage of its request.
fn says(text: &str, usage: Option<serde_json::Value>) -> Response {
    let mut last: serde_json::Value =
        serde_json::from_str(&chunk(serde_json::json!({}), Some("stop"))).unwrap();
    if let Some(usage) = usage {
        last["usage"] = usage;
    }
    Response::Stream(vec![
        chunk(serde_json::json!({"content": text}), None),
        last.to_string(),
        "[DONE]".into(),
    ])
}

/// A data directory with the terms accepted.
fn accepted_data_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let accepted = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["consent", "--data-dir"])
        .arg(dir.path())
        .arg("accept-terms")
        .output()
        .unwrap();
    assert!(accepted.status.success(), "{accepted:?}");
    dir
}

/// `harness chat` on `data` with these arguments and these lines on standard input.
fn chat(data: &Path, args: &[&str], input: &str) -> (String, String, Option<i32>) {
    let data = data.to_str().unwrap();
    let args: Vec<&str> = ["chat", "--data-dir", data]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    let output = common::run_with_input(&args, &[("HARNESS_API_KEY", "sk-test-1234")], input);
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code(),
    )
}

/// The value `harness settings` lists for `key`.
fn setting(data: &Path, key: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["settings", "--data-dir"])
        .arg(data)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&output.stdout).into_owned();
    listing
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in {listing}"))
        .to_owned()
}

#[test]
fn a_failed_turn_in_a_piped_session_is_reported_and_the_next_line_still_runs() {
    let dir = accepted_data_dir();
    let (endpoint, server) = scripted_server(vec![
        Response::Refuse(
            400,
            serde_json::json!({"error": {"message": "bad request"}}),
        ),
        says(
            "还在。",
            Some(
                serde_json::json!({"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}),
            ),
        ),
    ]);
    let (stdout, stderr, status) = chat(
        dir.path(),
        &["--endpoint", &endpoint, "--model", "qwen-plus"],
        "第一句\n第二句\n",
    );
    assert_eq!(
        stderr,
        "harness: the model provider refused the request (HTTP 400): bad request\nharness: 1 of 2 turns failed\n"
    );
    assert!(
        stdout.contains("\n[failed — 1 model requests, usage not reported]\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("还在。\n[done — 1 model requests, 34 tokens]\n"),
        "{stdout}"
    );
    // A turn failed, so the session's exit status says so at the end of input.
    assert_eq!(status, Some(1), "{stdout}\n{stderr}");
    assert_eq!(server.join().unwrap().len(), 2);
}

#[test]
fn a_piped_session_whose_turns_all_ended_well_exits_zero() {
    let dir = accepted_data_dir();
    let (endpoint, server) = scripted_server(vec![says("好。", None), says("好的。", None)]);
    let (stdout, stderr, status) = chat(
        dir.path(),
        &["--endpoint", &endpoint, "--model", "qwen-plus"],
        "一\n二\n",
    );
    assert_eq!((stderr.as_str(), status), ("", Some(0)), "{stdout}");
    assert_eq!(server.join().unwrap().len(), 2);
}

/// An address nothing answers at: a socket bound there that never listens holds the port, so no
/// other test's listener is given it (a dropped listener's port can be handed out again at
/// once), and a connection to it is refused.
fn refusing_address() -> (tokio::net::TcpSocket, std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let address = socket.local_addr().unwrap();
    (socket, address)
}

#[test]
fn an_endpoint_that_never_answered_is_not_saved_and_one_that_answered_is() {
    let dir = accepted_data_dir();
    // A port nothing listens on: the turn cannot reach a server.
    let (_held, closed) = refusing_address();
    let unreachable = format!("http://{closed}/v1");
    let (stdout, stderr, status) = chat(
        dir.path(),
        &[
            "--endpoint",
            &unreachable,
            "--model",
            "qwen-plus",
            "--message",
            "你好",
        ],
        "",
    );
    assert_eq!(status, Some(1), "{stdout}");
    assert!(
        stderr.starts_with(&format!(
            "harness: could not reach the model provider at {unreachable}"
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!(
            "\nharness: model.endpoint and model.name were not saved, since no turn was answered; to save them anyway: `harness settings set model.endpoint {unreachable}` and `harness settings set model.name qwen-plus`\n"
        )),
        "{stderr}"
    );
    assert_eq!(setting(dir.path(), "model.endpoint"), "\"\"");
    assert_eq!(setting(dir.path(), "model.name"), "\"\"");

    let (endpoint, server) = scripted_server(vec![says("你好！", None)]);
    let (stdout, stderr, status) = chat(
        dir.path(),
        &[
            "--endpoint",
            &endpoint,
            "--model",
            "qwen-plus",
            "--message",
            "你好",
        ],
        "",
    );
    assert_eq!((stderr.as_str(), status), ("", Some(0)), "{stdout}");
    server.join().unwrap();
    assert!(
        stdout.ends_with(&format!(
            "[done — 1 model requests, usage not reported]\nSaved model.endpoint = {endpoint:?} and model.name = \"qwen-plus\".\n"
        )),
        "{stdout}"
    );
    assert_eq!(
        setting(dir.path(), "model.endpoint"),
        format!("{endpoint:?}")
    );
    assert_eq!(setting(dir.path(), "model.name"), "\"qwen-plus\"");
}

#[test]
fn with_no_api_key_chat_says_how_to_store_one_from_the_terminal() {
    let dir = accepted_data_dir();
    let harness = env!("CARGO_BIN_EXE_harness");
    let check = Command::new(harness)
        .args(["secret", "--data-dir"])
        .arg(dir.path())
        .args(["check", "model.apiKey"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        "model.apiKey: not stored\n",
        "this test needs the user keyring without a model.apiKey"
    );
    let output = Command::new(harness)
        .args([
            "chat",
            "--endpoint",
            "https://api.deepseek.com/v1",
            "--model",
            "deepseek-chat",
        ])
        .args(["--message", "你好", "--data-dir"])
        .arg(dir.path())
        .env_remove("HARNESS_API_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "harness: no API key is stored: run `harness secret set model.apiKey` (it reads the key from standard input and keeps it in the keyring), or set HARNESS_API_KEY\n"
        ),
        "{stderr}"
    );
}

#[test]
fn chat_help_says_what_the_exit_status_means() {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["chat", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        help.contains("A turn that fails prints why and the session reads the next line. The exit status is 0 when every turn ended done, 1 when any failed or the session could not start."),
        "{help}"
    );
}
