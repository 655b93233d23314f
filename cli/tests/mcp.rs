//! `harness mcp tools URL` and `harness mcp add URL --name NAME` against the real MCP test
//! server (server-everything in Streamable HTTP mode on a loopback port, started by each test),
//! and the remote plugin as `harness tools` lists it afterwards.

#[path = "../../core/tests/common/everything.rs"]
mod everything;

use std::process::{Command, Output};

use everything::Everything;

fn harness(args: &[&str]) -> (String, Output) {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .env_remove("HARNESS_DATA_DIR")
        .env_remove("HARNESS_MCP_TOKEN")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (stdout, output)
}

#[test]
fn mcp_tools_lists_a_servers_tools_with_their_effects_and_installs_nothing() {
    let server = Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let url = server.url();
    let (stdout, _) = harness(&["mcp", "--data-dir", data, "tools", &url]);
    let lines: Vec<&str> = stdout.lines().collect();
    // The count is the server's (it registers some tools just after the session starts).
    assert!(lines[0].ends_with(&format!(" tools at {url}")), "{stdout}");
    for line in [
        "  echo                             read   Echoes back the input string",
        "  get-sum                          read   Returns the sum of two numbers",
        "  toggle-simulated-logging         write  Toggles simulated, random-leveled logging on or off.",
    ] {
        assert!(lines.contains(&line), "{line:?} missing from:\n{stdout}");
    }
    let (listed, _) = harness(&["tools", "--data-dir", data]);
    assert!(!listed.contains("mcp-everything"), "{listed}");
}

#[test]
fn mcp_add_installs_the_server_as_a_remote_plugin_that_tools_lists() {
    let server = Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (stdout, _) = harness(&[
        "mcp",
        "--data-dir",
        data,
        "add",
        &server.url(),
        "--name",
        "everything",
    ]);
    assert!(
        stdout.starts_with("Installed mcp-everything with ") && stdout.ends_with(" tools.\n"),
        "{stdout}"
    );
    let (listed, _) = harness(&["tools", "--data-dir", data]);
    let lines: Vec<&str> = listed.lines().collect();
    for line in [
        "  mcp-everything remote · enabled",
        "    mcp-everything.echo          read   Echo Tool [untrusted]",
        "    mcp-everything.get-sum       read   Get Sum Tool [untrusted]",
    ] {
        assert!(lines.contains(&line), "{line:?} missing from:\n{listed}");
    }
}
