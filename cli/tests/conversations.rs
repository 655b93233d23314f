//! `harness chat --conversation ID|new` and `harness conversations [list|rename|delete]`: the
//! conversation list's actions from a terminal, on a real data directory, against a scripted
//! OpenAI-compatible server on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::thread;

/// Answers one request per connection with each of `answers`, in order.
fn scripted_server(answers: Vec<&'static str>) -> (String, thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        for answer in answers {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(": ")
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let chunk = |delta: serde_json::Value, finish: Option<&str>| {
                serde_json::json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
                chunk(serde_json::json!({"content": answer}), None),
                chunk(serde_json::json!({}), Some("stop")),
            );
            reader.into_inner().write_all(reply.as_bytes()).unwrap();
        }
    });
    (endpoint, server)
}

fn harness(data: &Path, args: &[&str]) -> (String, String, bool) {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env("HARNESS_API_KEY", "sk-conversations-1234")
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.success(),
    )
}

#[test]
fn a_new_conversation_is_listed_by_its_first_words_renamed_continued_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    assert!(harness(data, &["consent", "accept-terms"]).2);
    assert_eq!(
        harness(data, &["conversations"]).0,
        "No conversations: `harness chat --conversation new` starts one.\n"
    );
    let (endpoint, server) = scripted_server(vec!["余额 52.3 元。", "今天花了 12 元。"]);
    let model = ["--endpoint", endpoint.as_str(), "--model", "qwen-plus"];

    let (out, err, ok) = harness(
        data,
        &[
            &["chat", "--conversation", "new"],
            &model[..],
            &["--message", "帮我查校园卡余额"],
        ]
        .concat(),
    );
    assert!(ok, "{out}\n{err}");
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("New conversation "))
        .and_then(|l| l.strip_suffix('.'))
        .unwrap()
        .to_owned();
    assert!(id.starts_with("chat-"), "{id}");

    // The same conversation again: its history goes with the request.
    let (out, err, ok) = harness(
        data,
        &[
            &["chat", "--conversation", &id],
            &model[..],
            &["--message", "今天花了多少"],
        ]
        .concat(),
    );
    assert!(ok, "{out}\n{err}");
    assert!(!out.contains("New conversation"), "{out}");
    server.join().unwrap();

    let (out, _, ok) = harness(data, &["conversations", "list"]);
    assert!(ok);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with(&format!("{id}  ")) && lines[0].ends_with("  帮我查校园卡余额"),
        "{out}"
    );
    assert_eq!(lines[1], "    今天花了 12 元。");

    let (out, _, ok) = harness(data, &["conversations", "rename", &id, "校园卡"]);
    assert!(ok);
    assert_eq!(out, format!("conversation {id} is now titled 校园卡\n"));
    assert!(
        harness(data, &["conversations"])
            .0
            .lines()
            .next()
            .unwrap()
            .ends_with("  校园卡")
    );

    let (out, _, ok) = harness(data, &["conversations", "delete", &id]);
    assert!(ok);
    assert_eq!(out, format!("conversation {id} deleted\n"));
    assert_eq!(
        harness(data, &["conversations"]).0,
        "No conversations: `harness chat --conversation new` starts one.\n"
    );
}

#[test]
fn a_conversation_that_does_not_exist_is_named_with_the_option_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    assert!(harness(data, &["consent", "accept-terms"]).2);
    let (_, err, ok) = harness(
        data,
        &[
            "chat",
            "--conversation",
            "nope",
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--message",
            "hi",
        ],
    );
    assert!(!ok);
    assert_eq!(
        err,
        "harness: --conversation: there is no conversation \"nope\"; `harness conversations` lists them, `--conversation new` starts one\n"
    );
    let (_, err, ok) = harness(data, &["conversations", "delete", "nope"]);
    assert!(!ok);
    assert_eq!(err, "harness: no conversation \"nope\"\n");
}
