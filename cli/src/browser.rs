//! Signing in to a remote MCP server from the terminal: the authorization page is opened with
//! the desktop's browser (`$BROWSER`, else `xdg-open` or `open`) and printed too, and the
//! authorization server sends the browser back to a port of this machine's loopback address,
//! where this command takes the code (RFC 8252's loopback redirect for native apps).

use std::process::{Command, Stdio};
use std::time::Duration;

use async_trait::async_trait;
use harness_core::plugins::oauth::{Browser, SignInPage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How long the command waits for the browser to come back.
const WAIT: Duration = Duration::from_secs(300);

/// The path on the loopback port the authorization server sends the browser back to.
const CALLBACK: &str = "/callback";

/// The desktop's browser, and the loopback port it comes back to.
pub struct DesktopBrowser {
    listener: TcpListener,
    port: u16,
}

impl DesktopBrowser {
    /// Listens on a free port of 127.0.0.1 for the browser's return.
    pub async fn listen() -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("could not listen on 127.0.0.1 for the sign-in's return: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("could not listen on 127.0.0.1: {e}"))?
            .port();
        Ok(Self { listener, port })
    }

    /// The first request to the callback path: its path and query. Other requests (a browser's
    /// favicon) are answered 404 and waited past.
    async fn returned(&self) -> Result<String, String> {
        loop {
            let (mut socket, _) = self
                .listener
                .accept()
                .await
                .map_err(|e| format!("the sign-in's return could not be taken: {e}"))?;
            let mut head = Vec::new();
            let mut buffer = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
                match socket.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buffer[..n]),
                }
            }
            let head = String::from_utf8_lossy(&head);
            let target = head
                .lines()
                .next()
                .and_then(|line| line.split_whitespace().nth(1))
                .unwrap_or_default()
                .to_owned();
            if target.split('?').next() != Some(CALLBACK) {
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let page = "<!doctype html><meta charset=utf-8><title>PKU Harness</title>\
                        <p>The sign-in is back with the harness command; you can close this tab.";
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \
                 {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = socket.write_all(answer.as_bytes()).await;
            let _ = socket.shutdown().await;
            return Ok(target);
        }
    }
}

/// Opens `url` with `$BROWSER` (its first command, as the convention lists several with `:`),
/// else the desktop's opener. Whether one was started.
pub(crate) fn open(url: &str) -> bool {
    let configured = std::env::var("BROWSER").ok();
    let chosen = configured
        .as_deref()
        .and_then(|list| list.split(':').map(str::trim).find(|c| !c.is_empty()));
    let openers: Vec<&str> = match chosen {
        Some(browser) => vec![browser],
        None if cfg!(target_os = "macos") => vec!["open"],
        None => vec!["xdg-open"],
    };
    openers.into_iter().any(|opener| {
        let mut words = opener.split_whitespace();
        let Some(program) = words.next() else {
            return false;
        };
        let started = Command::new(program)
            .args(words)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match started {
            Ok(mut child) => {
                // Reaped when it ends, without holding the command up.
                std::thread::spawn(move || child.wait());
                true
            }
            Err(_) => false,
        }
    })
}

#[async_trait]
impl Browser for DesktopBrowser {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK}", self.port)
    }

    /// `HARNESS_OAUTH_CLIENT_METADATA`: the https address of a client ID metadata document a
    /// plugin author publishes for the CLI (listing `http://127.0.0.1/callback`; RFC 8252 lets
    /// the port vary), used where an authorization server reads such documents.
    fn client_metadata_url(&self) -> Option<String> {
        std::env::var("HARNESS_OAUTH_CLIENT_METADATA")
            .ok()
            .filter(|url| !url.trim().is_empty())
    }

    async fn sign_in(&self, page: &SignInPage) -> Result<String, String> {
        let scopes = match page.scopes.is_empty() {
            true => String::new(),
            false => format!(" (asking for: {})", page.scopes.join(", ")),
        };
        outln!(
            "{} asks you to sign in on {}{scopes}.",
            page.server,
            page.authorization_server
        );
        let opened = open(&page.url);
        outln!(
            "{} this page to sign in:\n  {}",
            if opened {
                "Opening"
            } else {
                "No browser could be opened; open"
            },
            page.url
        );
        let target = tokio::time::timeout(WAIT, self.returned())
            .await
            .map_err(|_| {
                "no sign-in came back within 5 minutes; run the command again to sign in".to_owned()
            })??;
        Ok(format!("http://127.0.0.1:{}{target}", self.port))
    }
}
