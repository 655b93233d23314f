//! `harness model providers` and `harness model test`: the providers listed, and each way a
//! provider refuses the test request said in words, against a server on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::thread;

/// Answers one request with `status` and the JSON `body`; hands back the request's
/// Authorization header.
fn answering_once(
    status: &'static str,
    body: &'static str,
) -> (String, thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
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
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.parse().unwrap();
                }
                if name.eq_ignore_ascii_case("authorization") {
                    authorization = value.to_owned();
                }
            }
        }
        let mut request = vec![0; length];
        reader.read_exact(&mut request).unwrap();
        let reply = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        reader.into_inner().write_all(reply.as_bytes()).unwrap();
        authorization
    });
    (endpoint, server)
}

fn harness(data: &Path, args: &[&str]) -> (String, String, bool) {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env("HARNESS_API_KEY", "sk-model-test-1234")
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.success(),
    )
}

#[test]
fn providers_lists_each_with_its_endpoint_models_and_key_page() {
    let data = tempfile::tempdir().unwrap();
    let (out, err, ok) = harness(data.path(), &["model", "providers"]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with(
            "deepseek  DeepSeek 深度求索 / DeepSeek\n    endpoint: https://api.deepseek.com/v1\n    models: deepseek-chat, deepseek-reasoner\n    key: https://platform.deepseek.com/api_keys\n    context: 131072 tokens\n"
        ),
        "{out}"
    );
    for id in [
        "qwen",
        "kimi",
        "zhipu",
        "doubao",
        "siliconflow",
        "openrouter",
        "openai",
        "custom",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{id}  "))),
            "{id}: {out}"
        );
    }
}

#[test]
fn test_says_each_refusal_in_words_and_a_working_provider_succeeds() {
    let data = tempfile::tempdir().unwrap();
    let cases = [
        (
            "401 Unauthorized",
            r#"{"error":{"message":"Authentication Fails"}}"#,
            "harness: Wrong key: http://ENDPOINT refused this API key. Check that \"API key\" was copied whole.\n",
        ),
        (
            "402 Payment Required",
            r#"{"error":{"message":"Insufficient Balance"}}"#,
            "harness: No balance: your http://ENDPOINT account has run out. Top it up and try again.\n",
        ),
        (
            "404 Not Found",
            r#"{"error":{"message":"Not Found"}}"#,
            "harness: http://ENDPOINT has no model called m-1. Pick a suggested one in \"Model name\".\n",
        ),
    ];
    for (status, body, said) in cases {
        let (endpoint, server) = answering_once(status, body);
        let (out, err, ok) = harness(
            data.path(),
            &["model", "test", "--endpoint", &endpoint, "--model", "m-1"],
        );
        assert!(!ok, "{status}: {out}");
        let host = endpoint.trim_start_matches("http://");
        assert_eq!(err, said.replace("ENDPOINT", host), "{status}");
        assert_eq!(server.join().unwrap(), "Bearer sk-model-test-1234");
        assert!(!out.contains("sk-model") && !err.contains("sk-model"));
    }
    let (endpoint, server) = answering_once(
        "200 OK",
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#,
    );
    let (out, err, ok) = harness(
        data.path(),
        &["model", "test", "--endpoint", &endpoint, "--model", "m-1"],
    );
    assert!(ok, "{err}");
    assert_eq!(out, format!("Connected: {endpoint} answered.\n"));
    server.join().unwrap();
}

#[test]
fn test_of_a_closed_port_says_no_network() {
    let data = tempfile::tempdir().unwrap();
    // Bound and never listening: the port is held, and a connection to it is refused.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let endpoint = format!("http://{}/v1", socket.local_addr().unwrap());
    let (_, err, ok) = harness(
        data.path(),
        &["model", "test", "--endpoint", &endpoint, "--model", "m-1"],
    );
    assert!(!ok);
    assert_eq!(
        err,
        format!(
            "harness: Cannot reach {endpoint}: check the network, and for your own provider the \"Endpoint\".\n"
        )
    );
}
