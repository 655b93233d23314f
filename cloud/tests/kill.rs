//! Standards (issue 39): the server killed with SIGKILL mid-write and restarted loses no
//! acknowledged write, and a client's retry of the write the kill cut off (the same request id)
//! applies once. The real binary, on each backend; the kill comes after a count of
//! acknowledgements, never after a time.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{Device, databases};
use harness_cloud::server::now;
use serde_json::{Value, json};
use tokio::sync::mpsc;

const WRITERS: usize = 8;
const ACKS_BEFORE_KILL: usize = 200;

/// The server process, killed when dropped: a failing assertion leaves no server behind.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The server binary on `db`, with its address read from the line it prints.
fn spawn(db: &str) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness-cloud"))
        .args([
            "serve",
            "--db",
            db,
            "--listen",
            "127.0.0.1:0",
            "--rate",
            "100000",
            "--burst",
            "100000",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_owned();
    (Running(child), base)
}

fn value(writer: usize, version: i64) -> Vec<u8> {
    format!("writer {writer} version {version}").into_bytes()
}

/// Sends one write with its request id, freshly signed (a retry is a new signature and nonce
/// around the same id and body).
async fn put(device: &Device, writer: usize, version: i64) -> Result<Value, String> {
    let path = "/v1/records/p/k";
    let body = serde_json::to_vec(
        &json!({ "version": version, "value": common::b64(&value(writer, version)) }),
    )
    .unwrap();
    let mut headers = device.headers("PUT", path, &body, now());
    headers.push(("x-harness-request-id", format!("w{writer}-v{version}")));
    let mut request = device.http.put(format!("{}{path}", device.base)).body(body);
    for (name, v) in &headers {
        request = request.header(*name, v);
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let text = response.text().await.map_err(|e| e.to_string())?;
    let body: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    match status {
        200 => Ok(body),
        _ => Err(format!("{status} {body}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_write_loses_no_acknowledged_write_and_a_retry_applies_once() {
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let (mut server, base) = spawn(&db);
        let mut devices = Vec::new();
        for _ in 0..WRITERS {
            let device = Device::new(&base);
            device.create_account().await;
            devices.push(device);
        }
        let (acked, mut acks) = mpsc::unbounded_channel();
        let mut writers = Vec::new();
        for (writer, device) in devices.into_iter().enumerate() {
            let acked = acked.clone();
            writers.push(tokio::spawn(async move {
                // Writes versions 1, 2, … until one fails: (device, last acknowledged, cut off).
                let mut version = 1;
                loop {
                    match put(&device, writer, version).await {
                        Ok(answer) => {
                            assert_eq!(answer, json!({ "version": version }));
                            let _ = acked.send(());
                            version += 1;
                        }
                        Err(_) => return (device, version - 1, version),
                    }
                }
            }));
        }
        drop(acked);
        for _ in 0..ACKS_BEFORE_KILL {
            acks.recv().await.unwrap();
        }
        server.0.kill().unwrap(); // SIGKILL
        server.0.wait().unwrap();

        let (_restarted, base) = spawn(&db);
        let mut total = 0;
        for (writer, handle) in writers.into_iter().enumerate() {
            let (mut device, last_acked, cut_off) = handle.await.unwrap();
            device.base = base.clone();
            total += last_acked;
            let read = device
                .send("GET", "/v1/records/p/k", Value::Null)
                .await
                .body;
            let stored = read["version"].as_i64().unwrap_or(0);
            // Every acknowledged write is there; the cut-off one may or may not have committed.
            assert!(
                stored == last_acked || stored == cut_off,
                "writer {writer}: acked {last_acked}, stored {read}"
            );
            // The client retries the cut-off write with its request id: it applies once, and
            // either way the record ends at that version with that value.
            assert_eq!(
                put(&device, writer, cut_off).await,
                Ok(json!({ "version": cut_off })),
                "writer {writer}"
            );
            let read = device
                .send("GET", "/v1/records/p/k", Value::Null)
                .await
                .body;
            assert_eq!(
                read,
                json!({ "version": cut_off, "value": common::b64(&value(writer, cut_off)) })
            );
        }
        assert!(total >= ACKS_BEFORE_KILL as i64);
    }
}
