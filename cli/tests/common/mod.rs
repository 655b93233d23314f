//! What the CLI's tests share: the built `harness` binary run with lines on standard input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `harness` with `args` and `env`, writes `input` to its standard input, and waits.
pub fn run_with_input(args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `harness ARGS --data-dir DATA` with every campus request sent to the simulator at `origin`,
/// run on a blocking thread so that the simulator, on the test's runtime, keeps answering.
#[allow(dead_code)] // not every test binary signs in to the campus
pub fn campus_runner(
    origin: String,
    data: String,
) -> impl Fn(Vec<&'static str>, &'static str) -> tokio::task::JoinHandle<Output> {
    move |args, stdin| {
        let (origin, data) = (origin.clone(), data.clone());
        tokio::task::spawn_blocking(move || {
            let mut all = args;
            all.extend(["--data-dir", data.as_str()]);
            run_with_input(&all, &[("HARNESS_CAMPUS_ORIGIN", origin.as_str())], stdin)
        })
    }
}
