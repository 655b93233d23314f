//! Time to the first text of a streamed answer, through the provider client and by reading the
//! same bytes from a raw socket, against the loopback model server answering at once. The
//! difference is what the client adds to the first token (the target is at most 1 ms).

#[path = "../tests/common/model_server.rs"]
mod model_server;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use harness_core::agent::{
    ApiKey, CancellationToken, ChatRequest, Limits, Message, Provider, ProviderEvent,
};
use model_server::{ModelServer, Reply, data, done};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const FIRST_TEXT: &str = "Hello";

fn answer() -> Reply {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        data(&json!({"id": "c", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
    };
    Reply::events([
        chunk(json!({"role": "assistant", "content": FIRST_TEXT}), None),
        chunk(json!({"content": " there"}), None),
        chunk(json!({}), Some("stop")),
        done(),
    ])
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "deepseek-chat".into(),
        messages: vec![Message::User {
            content: "Hi".into(),
        }],
        tools: vec![],
        reasoning_effort: None,
    }
}

/// Through the client: from the call to the first `Text` event.
async fn through_client(provider: &Provider, request: &ChatRequest) -> Duration {
    let started = Instant::now();
    let mut first = None;
    provider
        .complete(request, &CancellationToken::new(), |event| {
            if first.is_none() && matches!(event, ProviderEvent::Text(_)) {
                first = Some(started.elapsed());
            }
        })
        .await
        .unwrap();
    first.expect("the answer has text")
}

/// From a raw socket: the same request, up to the first byte of the first text.
async fn through_socket(server: &ModelServer, body: &[u8]) -> Duration {
    let started = Instant::now();
    let mut socket = TcpStream::connect(server.addr()).await.unwrap();
    socket.set_nodelay(true).unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer sk-bench\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        server.addr(),
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(body).await.unwrap();
    let needle = format!("\"content\":\"{FIRST_TEXT}\"");
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let n = socket.read(&mut buffer).await.unwrap();
        assert!(n > 0, "the server closed before the first text");
        received.extend_from_slice(&buffer[..n]);
        if received
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
        {
            return started.elapsed();
        }
    }
}

fn first_text(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(ModelServer::always(answer()));
    let provider = Provider::new(
        &server.endpoint(),
        ApiKey::new("sk-bench"),
        Limits::default(),
    )
    .unwrap();
    let request = request();
    let body = serde_json::to_vec(&json!({"model": "deepseek-chat",
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": true, "stream_options": {"include_usage": true}}))
    .unwrap();

    let mut group = c.benchmark_group("provider_first_text");
    group.bench_function("client", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += black_box(through_client(&provider, &request).await);
                }
                total
            })
        })
    });
    group.bench_function("raw_socket", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += black_box(through_socket(&server, &body).await);
                }
                total
            })
        })
    });
    group.finish();

    // Both side by side, as medians of the same number of runs.
    let (client, socket) = runtime.block_on(async {
        let mut client = Vec::new();
        let mut socket = Vec::new();
        for _ in 0..200 {
            client.push(through_client(&provider, &request).await);
            socket.push(through_socket(&server, &body).await);
        }
        (median(client), median(socket))
    });
    println!(
        "first text: client {client:?}, raw socket {socket:?}, added by the client {:?} \
         (target: at most 1 ms)",
        client.saturating_sub(socket)
    );
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

criterion_group!(benches, first_text);
criterion_main!(benches);
