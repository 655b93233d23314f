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
