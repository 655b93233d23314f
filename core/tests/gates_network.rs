//! The network gate against real HTTP servers on 127.0.0.1, each a thread that answers a bounded
//! number of connections and stops by itself (one never reached waits until the tests end: no
//! clock decides whether a slow client is still answered).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use harness_core::gates::{Grants, NetworkGate, PluginKind};

/// A server on an ephemeral port of 127.0.0.1; `hits` counts the requests it received.
struct Server {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Server {
    /// Answers each request with `respond`, for `max` requests.
    fn start(max: usize, respond: impl Fn(&mut TcpStream) + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        thread::spawn(move || {
            for mut stream in listener.incoming().take(max).flatten() {
                read_request(&mut stream);
                counted.fetch_add(1, Ordering::SeqCst);
                respond(&mut stream);
            }
        });
        Self { port, hits }
    }

    /// A server answering every request with `response` as it stands.
    fn answering(response: &'static str) -> Self {
        Self::start(4, move |stream| {
            let _ = stream.write_all(response.as_bytes());
        })
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

fn read_request(stream: &mut TcpStream) {
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
        if line == "\r\n" {
            break;
        }
        line.clear();
    }
}

fn gate(allowlist: &[&str], trust: PluginKind) -> NetworkGate {
    NetworkGate::new("probe", &grants(allowlist), trust).unwrap()
}

fn grants(allowlist: &[&str]) -> Grants {
    Grants {
        allow_network: true,
        url_allowlist: allowlist.iter().map(|s| s.to_string()).collect(),
        ..Grants::default()
    }
}

const HELLO: &str = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

#[tokio::test]
async fn a_200_returns_the_body() {
    let server = Server::answering(HELLO);
    assert_eq!(
        gate(&["127.0.0.1"], PluginKind::Bundled)
            .get(&server.url("/x"))
            .await,
        "hello"
    );
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_non_2xx_status_is_an_error_with_its_number() {
    let server = Server::answering(
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops",
    );
    assert_eq!(
        gate(&["127.0.0.1"], PluginKind::Bundled)
            .get(&server.url("/"))
            .await,
        "error: HTTP 500"
    );
    let server = Server::answering("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(
        gate(&["127.0.0.1"], PluginKind::Bundled)
            .get(&server.url("/"))
            .await,
        "error: HTTP 404"
    );
}

#[tokio::test]
async fn nothing_is_sent_when_a_check_refuses() {
    let server = Server::answering(HELLO);
    let off = NetworkGate::new("probe", &Grants::default(), PluginKind::Bundled).unwrap();
    assert_eq!(
        off.get(&server.url("/")).await,
        "error: network access denied (set allow_network = true in this plugin's grants)"
    );
    let empty = gate(&[], PluginKind::Bundled);
    assert!(
        empty
            .get(&server.url("/"))
            .await
            .starts_with("error: url_allowlist does not permit")
    );
    assert_eq!(server.hits(), 0);
}

#[tokio::test]
async fn a_redirect_off_the_allowlist_is_not_followed() {
    let target = Server::answering(HELLO);
    let location = format!("http://localhost:{}/metadata", target.port);
    let redirector = Server::start(1, move |stream| {
        let response = format!(
            "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let _ = stream.write_all(response.as_bytes());
    });
    let got = gate(&["127.0.0.1"], PluginKind::Bundled)
        .get(&redirector.url("/"))
        .await;
    assert_eq!(got, "error: HTTP 302");
    assert_eq!(redirector.hits(), 1);
    assert_eq!(target.hits(), 0, "the redirect target was reached");
}

#[tokio::test]
async fn a_redirect_reports_its_own_status() {
    let server = Server::answering(
        "HTTP/1.1 307 Temporary Redirect\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(
        gate(&["127.0.0.1"], PluginKind::Bundled)
            .get(&server.url("/"))
            .await,
        "error: HTTP 307"
    );
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_slow_server_hits_the_timeout() {
    // Silent for longer than the test could run: only the gate's timeout ends the request.
    let server = Server::start(1, |_stream| thread::sleep(Duration::from_secs(600)));
    let gate = NetworkGate::with_timeout(
        "probe",
        &grants(&["127.0.0.1"]),
        PluginKind::Bundled,
        Duration::from_millis(300),
    )
    .unwrap();
    let url = server.url("/slow");
    let started = Instant::now();
    assert_eq!(
        gate.get(&url).await,
        format!("error: request to {url} timed out after 300ms")
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_timeout_covers_a_body_that_trickles() {
    let server = Server::start(1, |stream| {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nstart");
        thread::sleep(Duration::from_secs(600));
    });
    let gate = NetworkGate::with_timeout(
        "probe",
        &grants(&["127.0.0.1"]),
        PluginKind::Bundled,
        Duration::from_millis(300),
    )
    .unwrap();
    let url = server.url("/");
    assert_eq!(
        gate.get(&url).await,
        format!("error: request to {url} timed out after 300ms")
    );
}

fn body_of(len: usize, with_length: bool) -> impl Fn(&mut TcpStream) + Send + 'static {
    move |stream| {
        let head = if with_length {
            format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
        } else {
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_owned()
        };
        let _ = stream.write_all(head.as_bytes());
        // The client hangs up past the cap; a failed write ends the response.
        let _ = stream.write_all(&vec![b'x'; len]);
    }
}

#[tokio::test]
async fn a_2_mib_body_is_refused_with_or_without_a_length() {
    let refusal = "error: response body exceeds 1 MiB (limit 1048576 bytes)";
    for with_length in [true, false] {
        let server = Server::start(1, body_of(2 * 1024 * 1024, with_length));
        assert_eq!(
            gate(&["127.0.0.1"], PluginKind::Bundled)
                .get(&server.url("/"))
                .await,
            refusal
        );
    }
}

#[tokio::test]
async fn a_body_of_exactly_1_mib_is_returned() {
    let server = Server::start(1, body_of(1024 * 1024, false));
    let body = gate(&["127.0.0.1"], PluginKind::Bundled)
        .get(&server.url("/"))
        .await;
    assert_eq!(body.len(), 1024 * 1024);
}

fn bytes_of(body: Vec<u8>) -> impl Fn(&mut TcpStream) + Send + 'static {
    move |stream| {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(&body);
    }
}

#[tokio::test]
async fn a_1_mib_body_of_invalid_utf8_is_refused_once_decoded() {
    // Each 0xFF becomes U+FFFD, three bytes: 1 MiB on the wire would reach the plugin as 3 MiB.
    let server = Server::start(1, bytes_of(vec![0xff; 1024 * 1024]));
    assert_eq!(
        gate(&["127.0.0.1"], PluginKind::Bundled)
            .get(&server.url("/"))
            .await,
        "error: response body exceeds 1 MiB (limit 1048576 bytes) once its invalid UTF-8 is \
         replaced (3145728 bytes)"
    );
}

#[tokio::test]
async fn invalid_utf8_that_decodes_within_1_mib_is_returned_replaced() {
    // 349525 × 3 = 1048575 bytes of text: one byte under the cap.
    let server = Server::start(1, bytes_of(vec![0xff; 349_525]));
    let body = gate(&["127.0.0.1"], PluginKind::Bundled)
        .get(&server.url("/"))
        .await;
    assert_eq!(body, "\u{fffd}".repeat(349_525));
}

#[tokio::test]
async fn community_plugins_may_not_reach_an_allowlisted_loopback_literal() {
    let server = Server::answering(HELLO);
    assert_eq!(
        gate(&["127.0.0.1"], PluginKind::Community)
            .get(&server.url("/"))
            .await,
        "error: 127.0.0.1 is a private or local address, which community and remote plugins may \
         not reach"
    );
    assert_eq!(server.hits(), 0);
    assert_eq!(
        gate(&["127.0.0.1"], PluginKind::Bundled)
            .get(&server.url("/"))
            .await,
        "hello"
    );
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_name_that_resolves_to_loopback_is_refused_after_resolution() {
    let server = Server::answering(HELLO);
    let url = format!("http://localhost:{}/", server.port);
    let got = gate(&["localhost"], PluginKind::Community).get(&url).await;
    assert!(
        got.starts_with("error: localhost resolves to a private or local address (")
            && got.ends_with("), which community and remote plugins may not reach"),
        "{got}"
    );
    assert_eq!(server.hits(), 0);
    // The same name is reachable for a bundled plugin: the refusal is the address check's.
    assert_eq!(
        gate(&["localhost"], PluginKind::Bundled).get(&url).await,
        "hello"
    );
}

/// An address nothing answers at: a socket bound there that never listens holds the port, so no
/// other test's listener is given it (a dropped listener's port can be handed out again at
/// once), and a connection to it is refused.
fn refusing_address() -> (tokio::net::TcpSocket, std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let address = socket.local_addr().unwrap();
    (socket, address)
}

#[tokio::test]
async fn a_connection_failure_is_an_error_naming_the_url() {
    let (_held, address) = refusing_address();
    let url = format!("http://{address}/");
    let got = gate(&["127.0.0.1"], PluginKind::Bundled).get(&url).await;
    assert!(
        got.starts_with(&format!(
            "error: could not fetch {url}: client error (Connect)"
        )),
        "{got}"
    );
    assert!(got.contains("Connection refused"), "{got}");
}
