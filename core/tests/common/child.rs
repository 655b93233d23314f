//! The crash tests' second process. A test that kills a process mid-write runs its own test
//! binary again as that process: an `#[ignore]`d test of the same file, run alone, which prints
//! a marker on stdout when it reaches the point where it is to be killed.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};

/// Starts test `name` of this test binary in a process of its own with `envs`, stdout piped.
pub fn rerun<K, V>(name: &str, envs: impl IntoIterator<Item = (K, V)>) -> Child
where
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .envs(envs)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The child's stdout, line by line.
pub fn lines(child: &mut Child) -> Lines<BufReader<ChildStdout>> {
    BufReader::new(child.stdout.take().unwrap()).lines()
}

/// Reads on until a line holds `marker`; false when the child's stdout ended first.
pub fn reached(lines: &mut Lines<BufReader<ChildStdout>>, marker: &str) -> bool {
    lines.any(|line| line.is_ok_and(|line| line.contains(marker)))
}

/// SIGKILL: nothing runs in the child after it — no destructor, no flush, no rollback.
pub fn kill(child: &mut Child) {
    child.kill().unwrap();
    assert!(
        !child.wait().unwrap().success(),
        "the child ended by itself"
    );
}
