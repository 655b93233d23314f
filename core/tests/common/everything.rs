//! `@modelcontextprotocol/server-everything`, the real MCP server the remote-plugin tests run
//! against, started on a loopback port in its Streamable HTTP or HTTP+SSE mode. Shared by
//! core/tests and cli/tests (which include this file by path).
//!
//! The server is found through `PKU_HARNESS_MCP_EVERYTHING` (its `dist/index.js`; scripts/test.sh
//! installs it and sets the variable) or at the install location scripts/test.sh uses. When it
//! is in neither place the tests fail, saying how to install it: they never skip.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const INSTALL: &str = "npm install --prefix ~/.cache/pku-harness/mcp \
                       @modelcontextprotocol/server-everything@2026.8.31";

pub fn server_script() -> PathBuf {
    if let Ok(path) = std::env::var("PKU_HARNESS_MCP_EVERYTHING") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "PKU_HARNESS_MCP_EVERYTHING is {}, which is not a file; install the server with: {INSTALL}",
            path.display()
        );
        return path;
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let path = PathBuf::from(home).join(
        ".cache/pku-harness/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        path.is_file(),
        "the MCP test server is not installed; run scripts/test.sh, or install it with: {INSTALL} \
         (or set PKU_HARNESS_MCP_EVERYTHING to its dist/index.js)"
    );
    path
}

/// server-everything on a loopback port; killed when dropped.
pub struct Everything {
    child: Child,
    pub port: u16,
    /// `/mcp` (Streamable HTTP) or `/sse` (HTTP+SSE).
    path: &'static str,
}

/// A free port for the server to listen on, below the kernel's ephemeral range: a port a
/// listener bound to `:0` was given and gave back can be handed to another test's listener or
/// connection before the server binds it, and one below the range never is. Each test process
/// starts at its own place in the range (by its id) and takes each next port once.
pub fn free_port() -> u16 {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let low: usize = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768);
    let (first, span) = (10_000, low.saturating_sub(10_000).max(1000));
    let start = std::process::id() as usize * 61;
    loop {
        let port = (first + (start + NEXT.fetch_add(1, Ordering::Relaxed)) % span) as u16;
        // Skipped when something else (another process's server) holds it.
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

impl Everything {
    pub fn start() -> Self {
        Self::start_on(free_port())
    }

    pub fn start_on(port: u16) -> Self {
        Self::start_mode(port, "streamableHttp", "/mcp")
    }

    /// In its HTTP+SSE mode: GET /sse opens the stream, messages go to POST /message.
    pub fn start_sse() -> Self {
        Self::start_mode(free_port(), "sse", "/sse")
    }

    pub fn start_mode(port: u16, mode: &str, path: &'static str) -> Self {
        let child = Command::new("node")
            .arg(server_script())
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs the MCP test server");
        let until = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < until, "the MCP test server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, port, path }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}{}", self.port, self.path)
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        self.kill();
    }
}
