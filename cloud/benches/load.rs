//! The load check (issue 39): 500 simulated devices, each its own account, each making 100
//! requests (a set, then a get of what it set, 50 times) against the real server binary on
//! each backend; latency p50/p99 per operation and throughput, and every device's record
//! checked after (version 50, the last value: no write lost or applied twice). Not a test:
//! `cargo bench -p harness-cloud --bench load` prints the figures (docs/CLOUD.md).
//! HARNESS_CLOUD_TEST_POSTGRES (scripts/test-cloud-postgres.sh) adds PostgreSQL;
//! HARNESS_CLOUD_BENCH_DEVICES changes the number of devices.

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Device, databases};
use serde_json::{Value, json};

const PAIRS: usize = 50;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize)
        .saturating_sub(1)
        .min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let devices: usize = std::env::var("HARNESS_CLOUD_BENCH_DEVICES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    let dir = tempfile::tempdir().unwrap();
    for db in databases(dir.path()) {
        let backend = if db.starts_with("sqlite:") {
            "SQLite"
        } else {
            "PostgreSQL"
        };
        let mut server = Command::new(env!("CARGO_BIN_EXE_harness-cloud"))
            .args([
                "serve",
                "--db",
                &db,
                "--listen",
                "127.0.0.1:0",
                "--rate",
                "1000",
                "--burst",
                "1000",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = Arc::new(
            line.trim()
                .strip_prefix("listening on ")
                .unwrap()
                .to_owned(),
        );

        let mut accounts = Vec::new();
        for _ in 0..devices {
            let base = base.clone();
            accounts.push(tokio::spawn(async move {
                let device = Device::new(&base);
                device.create_account().await;
                device
            }));
        }
        let mut made = Vec::new();
        for a in accounts {
            made.push(a.await.unwrap());
        }

        let started = Instant::now();
        let mut runs = Vec::new();
        for (i, device) in made.into_iter().enumerate() {
            runs.push(tokio::spawn(async move {
                let (mut sets, mut gets) = (Vec::with_capacity(PAIRS), Vec::with_capacity(PAIRS));
                for version in 1..=PAIRS as i64 {
                    let value = format!("device {i} version {version}");
                    let t = Instant::now();
                    let put = device
                        .put("bench", "k", version, Some(value.as_bytes()))
                        .await;
                    sets.push(t.elapsed());
                    assert_eq!((put.status, put.body), (200, json!({ "version": version })));
                    let t = Instant::now();
                    let got = device.send("GET", "/v1/records/bench/k", Value::Null).await;
                    gets.push(t.elapsed());
                    assert_eq!(
                        got.body,
                        json!({ "version": version, "value": common::b64(value.as_bytes()) })
                    );
                }
                (device, sets, gets)
            }));
        }
        let (mut sets, mut gets, mut finished) = (Vec::new(), Vec::new(), Vec::new());
        for run in runs {
            let (device, s, g) = run.await.unwrap();
            sets.extend(s);
            gets.extend(g);
            finished.push(device);
        }
        let took = started.elapsed();
        // Every device's record is at its last version with its last value.
        for (i, device) in finished.iter().enumerate() {
            let got = device.send("GET", "/v1/records/bench/k", Value::Null).await;
            let last = format!("device {i} version {PAIRS}");
            assert_eq!(
                got.body,
                json!({ "version": PAIRS, "value": common::b64(last.as_bytes()) })
            );
        }
        sets.sort();
        gets.sort();
        let requests = sets.len() + gets.len();
        println!(
            "{backend}: {devices} devices x {} requests = {requests} in {:.1} s: {:.0} requests/s; \
             set p50 {} p99 {}; get p50 {} p99 {}; {} records checked, none lost or doubled",
            2 * PAIRS,
            took.as_secs_f64(),
            requests as f64 / took.as_secs_f64(),
            ms(percentile(&sets, 0.50)),
            ms(percentile(&sets, 0.99)),
            ms(percentile(&gets, 0.50)),
            ms(percentile(&gets, 0.99)),
            finished.len(),
        );
        server.kill().unwrap();
        server.wait().unwrap();
    }
}
