//! The model provider client against a scripted OpenAI-compatible server on 127.0.0.1: the
//! exact request it sends, the events it makes of what the providers students use send back,
//! and the error a student sees for each way a call goes wrong.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::model_server::{ModelServer, Part, Reply, data, done};
use harness_core::agent::{
    ApiKey, CancellationToken, ChatRequest, Limits, Message, Provider, ProviderError,
    ProviderEvent, ToolCall, ToolSpec, Usage,
};
use serde_json::{Value, json};

const KEY: &str = "sk-test-0123456789abcdef";

/// Waits shrunk so that no test waits for a real provider's.
fn limits() -> Limits {
    Limits {
        connect_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(5),
        max_tries: 3,
        retry_budget: Duration::from_secs(30),
        first_backoff: Duration::from_millis(10),
    }
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

/// Waits for `condition`, polling; fails only after a minute, which no loaded machine needs.
async fn wait_until(condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(Instant::now() < deadline, "the condition never held");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn provider(server: &ModelServer, limits: Limits) -> Provider {
    Provider::new(&server.endpoint(), ApiKey::new(KEY), limits).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "deepseek-chat".into(),
        messages: vec![
            Message::System {
                content: "You help a student.".into(),
            },
            Message::User {
                content: "Weather in Beijing?".into(),
            },
        ],
        tools: vec![ToolSpec {
            name: "weather__forecast".into(),
            description: "The forecast for a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        }],
        reasoning_effort: None,
    }
}

async fn call(
    provider: &Provider,
    request: &ChatRequest,
) -> (Vec<ProviderEvent>, Result<(), ProviderError>) {
    let mut events = Vec::new();
    let result = provider
        .complete(request, &CancellationToken::new(), |event| {
            events.push(event)
        })
        .await;
    (events, result)
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> Part {
    data(&json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "deepseek-chat",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }))
}

fn text(content: &str) -> Part {
    chunk(json!({"content": content}), None)
}

fn usage_chunk(prompt: u64, completion: u64) -> Part {
    data(&json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    }))
}

fn finished(reason: &str) -> ProviderEvent {
    ProviderEvent::Finished {
        finish_reason: Some(reason.into()),
    }
}

fn tool_call(id: &str, name: &str, arguments: &str) -> ProviderEvent {
    ProviderEvent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    })
}

#[tokio::test]
async fn tool_call_arguments_split_mid_value_are_assembled_to_the_text_the_model_wrote() {
    let arguments = r#"{"city":"北京","days":3}"#;
    let pieces = [r#"{"ci"#, r#"ty":"北"#, r#"京","da"#, r#"ys":3}"#];
    assert_eq!(pieces.concat(), arguments);
    let mut parts = vec![chunk(
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
            "id": "call_abc", "type": "function",
            "function": {"name": "weather__forecast", "arguments": ""}}]}),
        None,
    )];
    for piece in pieces {
        parts.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        ));
    }
    // One event split across two writes: the SSE parser, not the client, joins the halves.
    let Part::Data(last) = chunk(json!({}), Some("tool_calls")) else {
        unreachable!()
    };
    let event = format!("data: {last}\n\n");
    let (head, tail) = event.split_at(20);
    parts.push(Part::Raw(head.to_owned()));
    parts.push(Part::Raw(tail.to_owned()));
    parts.push(done());
    let server = ModelServer::start(vec![Reply::events(parts)]).await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    result.unwrap();
    assert_eq!(
        events,
        vec![
            tool_call("call_abc", "weather__forecast", arguments),
            finished("tool_calls"),
        ]
    );
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.body,
        json!({
            "model": "deepseek-chat",
            "messages": [
                {"role": "system", "content": "You help a student."},
                {"role": "user", "content": "Weather in Beijing?"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "weather__forecast",
                "description": "The forecast for a city",
                "parameters": {"type": "object",
                               "properties": {"city": {"type": "string"}}},
            }}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn two_tool_calls_in_one_answer_come_out_as_two_calls_in_index_order() {
    let server = ModelServer::start(vec![Reply::events([
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "weather__forecast", "arguments": "{\"city\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                "function": {"name": "calendar__today", "arguments": "{"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"上海\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        done(),
    ])])
    .await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    result.unwrap();
    assert_eq!(
        events,
        vec![
            tool_call("call_1", "weather__forecast", "{\"city\":\"上海\"}"),
            tool_call("call_2", "calendar__today", "{}"),
            finished("tool_calls"),
        ]
    );
}

#[tokio::test]
async fn reasoning_content_comes_out_as_thinking_and_never_as_text() {
    let server = ModelServer::start(vec![Reply::events([
        chunk(
            json!({"role": "assistant", "content": null, "reasoning_content": "The user"}),
            None,
        ),
        chunk(
            json!({"content": null, "reasoning_content": " asks."}),
            None,
        ),
        chunk(
            json!({"content": "Sunny.", "reasoning_content": null}),
            None,
        ),
        chunk(json!({"content": ""}), Some("stop")),
        done(),
    ])])
    .await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    result.unwrap();
    assert_eq!(
        events,
        vec![
            ProviderEvent::Thinking("The user".into()),
            ProviderEvent::Thinking(" asks.".into()),
            ProviderEvent::Text("Sunny.".into()),
            finished("stop"),
        ]
    );
}

#[tokio::test]
async fn the_usage_chunk_without_choices_and_done_end_the_answer_and_effort_is_sent_when_set() {
    let server = ModelServer::start(vec![Reply::events([
        text("Hel"),
        text("lo"),
        chunk(json!({}), Some("stop")),
        usage_chunk(12, 2),
        done(),
    ])])
    .await;
    let mut request = request();
    request.model = "qwen-plus".into();
    request.reasoning_effort = Some("high".into());
    request.tools.clear();

    let (events, result) = call(&provider(&server, limits()), &request).await;

    result.unwrap();
    assert_eq!(
        events,
        vec![
            ProviderEvent::Text("Hel".into()),
            ProviderEvent::Text("lo".into()),
            ProviderEvent::Usage(Usage {
                prompt_tokens: 12,
                completion_tokens: 2,
                total_tokens: 14,
                cached_tokens: 0,
            }),
            finished("stop"),
        ]
    );
    let body = &server.requests()[0].body;
    assert_eq!(body["model"], "qwen-plus");
    assert_eq!(body["reasoning_effort"], "high");
    assert_eq!(body.get("tools"), None, "an empty tools array is not sent");
}

#[tokio::test]
async fn a_busy_provider_is_tried_again_after_the_wait_it_asked_for() {
    let server = ModelServer::start(vec![
        Reply::json(
            429,
            &json!({"error": {"message": "Rate limit reached", "type": "rate_limit"}}),
        )
        .header("Retry-After", "1"),
        Reply::events([text("ok"), chunk(json!({}), Some("stop")), done()]),
    ])
    .await;
    let started = Instant::now();

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    result.unwrap();
    assert_eq!(
        events,
        vec![ProviderEvent::Text("ok".into()), finished("stop")]
    );
    assert_eq!(server.requests().len(), 2);
    // The backoff of these limits is 10 ms: only Retry-After makes it a second.
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn a_provider_failing_three_times_is_reported_busy_after_exactly_three_requests() {
    let failing = Reply::json(500, &json!({"error": {"message": "internal error"}}));
    let server = ModelServer::start(vec![
        failing.clone(),
        failing.clone(),
        failing.clone(),
        failing,
    ])
    .await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    assert_eq!(events, vec![]);
    assert_eq!(
        result.unwrap_err().to_string(),
        format!(
            "the model provider at {} is busy or unavailable (HTTP 500, tried 3 times) — \
             try again in a minute",
            server.endpoint()
        )
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_retry_after_past_the_budget_is_not_waited_for() {
    let server = ModelServer::start(vec![
        Reply::json(503, &json!({})).header("Retry-After", "120"),
    ])
    .await;
    let started = Instant::now();

    let (_, result) = call(&provider(&server, limits()), &request()).await;

    assert!(matches!(
        result,
        Err(ProviderError::Busy {
            status: 503,
            tries: 1,
            ..
        })
    ));
    // Not the 120 s asked for: a bound no loaded machine misses, far under it.
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[tokio::test]
async fn a_refused_key_says_where_to_fix_it_and_the_key_is_shown_nowhere() {
    let server = ModelServer::start(vec![Reply::json(
        401,
        &json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}),
    )])
    .await;
    let provider = provider(&server, limits());

    let (_, result) = call(&provider, &request()).await;

    let error = result.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the API key was refused — Settings → Model"
    );
    assert!(!format!("{error:?}").contains(KEY));
    assert!(!format!("{provider:?}").contains(KEY));
    assert_eq!(format!("{:?}", ApiKey::new(KEY)), "***");
}

#[tokio::test]
async fn an_unknown_model_is_named_with_the_endpoint() {
    let server = ModelServer::start(vec![Reply::json(
        404,
        &json!({"error": {"message": "Model Not Exist"}}),
    )])
    .await;
    let mut request = request();
    request.model = "deepseek-chatt".into();

    let (_, result) = call(&provider(&server, limits()), &request).await;

    assert_eq!(
        result.unwrap_err().to_string(),
        format!(
            "model \"deepseek-chatt\" was not found at {} — check Settings → Model",
            server.endpoint()
        )
    );
}

#[tokio::test]
async fn another_refusal_carries_the_providers_message_with_the_key_blanked() {
    let server = ModelServer::start(vec![Reply::json(
        402,
        &json!({"error": {"message": format!("Insufficient Balance for {KEY}")}}),
    )])
    .await;

    let (_, result) = call(&provider(&server, limits()), &request()).await;

    assert_eq!(
        result.unwrap_err().to_string(),
        "the model provider refused the request (HTTP 402): Insufficient Balance for ***"
    );
}

#[tokio::test]
async fn a_stream_cut_in_the_middle_on_every_try_keeps_the_last_tries_text_and_says_it_was_cut() {
    let server = ModelServer::always(Reply::events([
        text("The forecast"),
        text(" for Bei"),
        Part::Cut,
    ]))
    .await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    // Each cut try is asked again (max_tries 3); each retry voids what the cut one gave.
    let one_try = [
        ProviderEvent::Text("The forecast".into()),
        ProviderEvent::Text(" for Bei".into()),
    ];
    let mut expected = Vec::new();
    for try_number in 1..=3 {
        expected.extend(one_try.iter().cloned());
        if try_number < 3 {
            expected.push(ProviderEvent::Restarted);
        }
    }
    assert_eq!(events, expected);
    assert_eq!(server.requests().len(), 3);
    let error = result.unwrap_err();
    assert!(
        matches!(error, ProviderError::StreamDropped { tries: 3, .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("the model's answer was cut off: the connection broke (")
    );
    assert!(
        error
            .to_string()
            .ends_with(" (tried 3 times) — what arrived is kept; ask again to go on")
    );
}

#[tokio::test]
async fn a_stream_that_ends_without_a_finish_reason_or_done_is_a_cut_too() {
    let server = ModelServer::always(Reply::events([text("Half")])).await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    assert_eq!(
        events,
        vec![
            ProviderEvent::Text("Half".into()),
            ProviderEvent::Restarted,
            ProviderEvent::Text("Half".into()),
            ProviderEvent::Restarted,
            ProviderEvent::Text("Half".into()),
        ]
    );
    assert_eq!(
        result.unwrap_err().to_string(),
        "the model's answer was cut off: the connection closed before the answer finished \
         (tried 3 times) — what arrived is kept; ask again to go on"
    );
}

#[tokio::test]
async fn a_stream_cut_once_is_asked_again_and_the_second_answer_replaces_the_first() {
    let server = ModelServer::start(vec![
        Reply::events([text("The forec")]),
        Reply::events([text("Sunny, 12°C."), chunk(json!({}), Some("stop")), done()]),
    ])
    .await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    result.unwrap();
    assert_eq!(
        events,
        vec![
            ProviderEvent::Text("The forec".into()),
            ProviderEvent::Restarted,
            ProviderEvent::Text("Sunny, 12°C.".into()),
            finished("stop"),
        ]
    );
    // The same request was sent again, byte for byte.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn a_cut_stream_is_not_asked_again_past_the_retry_budget() {
    let server = ModelServer::always(Reply::events([
        text("Slow"),
        Part::Delay(Duration::from_millis(300)),
    ]))
    .await;
    let limits = Limits {
        retry_budget: Duration::from_millis(100),
        ..limits()
    };

    let (events, result) = call(&provider(&server, limits), &request()).await;

    assert_eq!(events, vec![ProviderEvent::Text("Slow".into())]);
    assert_eq!(server.requests().len(), 1);
    assert!(matches!(
        result.unwrap_err(),
        ProviderError::StreamDropped { tries: 1, .. }
    ));
}

#[tokio::test]
async fn a_stream_silent_past_the_idle_timeout_fails_with_the_idle_error() {
    let server = ModelServer::start(vec![Reply::events([
        text("Thinking"),
        // Silent for longer than the test could run: only the idle timeout ends the call.
        Part::Delay(Duration::from_secs(600)),
        text(" more"),
        chunk(json!({}), Some("stop")),
        done(),
    ])])
    .await;
    let limits = Limits {
        idle_timeout: Duration::from_millis(100),
        ..limits()
    };
    let started = Instant::now();

    let (events, result) = call(&provider(&server, limits), &request()).await;

    assert_eq!(events, vec![ProviderEvent::Text("Thinking".into())]);
    assert_eq!(
        result.unwrap_err().to_string(),
        "the model provider sent nothing for 100 ms — try again"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[tokio::test]
async fn keep_alive_comments_count_as_life_for_the_idle_timeout() {
    // 1.2 s of keep-alives, each 100 ms after the last, past a 1 s idle timeout: a gap ten
    // times the usual one still keeps the stream alive on a loaded machine.
    let mut parts = vec![text("a")];
    for _ in 0..12 {
        parts.push(Part::Delay(Duration::from_millis(100)));
        parts.push(Part::Raw(": keep-alive\n\n".into()));
    }
    parts.extend([text("b"), chunk(json!({}), Some("stop")), done()]);
    let server = ModelServer::start(vec![Reply::events(parts)]).await;
    let limits = Limits {
        idle_timeout: Duration::from_secs(1),
        ..limits()
    };

    let (events, result) = call(&provider(&server, limits), &request()).await;

    result.unwrap();
    assert_eq!(
        events,
        vec![
            ProviderEvent::Text("a".into()),
            ProviderEvent::Text("b".into()),
            finished("stop"),
        ]
    );
}

#[tokio::test]
async fn an_answer_neither_json_nor_an_event_stream_names_its_content_type() {
    let server = ModelServer::start(vec![Reply::whole(
        200,
        "text/html; charset=utf-8",
        "<html><body>Welcome to nginx!</body></html>",
    )])
    .await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    assert_eq!(events, vec![]);
    assert_eq!(
        result.unwrap_err().to_string(),
        "the model endpoint answered with content type \"text/html; charset=utf-8\", which is \
         neither JSON nor an event stream — check model.endpoint in Settings → Model"
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_answers_in_one_json_body_with_its_tool_calls() {
    let server = ModelServer::start(vec![Reply::json(
        200,
        &json!({
            "id": "chatcmpl-2",
            "object": "chat.completion",
            "model": "glm-4-flash",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Let me look.",
                    "reasoning_content": "Two lookups.",
                    "tool_calls": [
                        {"id": "call_a", "type": "function", "function":
                            {"name": "weather__forecast", "arguments": "{\"city\":\"北京\"}"}},
                        {"id": "call_b", "type": "function", "function":
                            {"name": "calendar__today", "arguments": "{}"}},
                    ],
                },
                "finish_reason": "tool_calls",
            }],
            "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
        }),
    )])
    .await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    result.unwrap();
    assert_eq!(
        events,
        vec![
            ProviderEvent::Thinking("Two lookups.".into()),
            ProviderEvent::Text("Let me look.".into()),
            tool_call("call_a", "weather__forecast", "{\"city\":\"北京\"}"),
            tool_call("call_b", "calendar__today", "{}"),
            ProviderEvent::Usage(Usage {
                prompt_tokens: 40,
                completion_tokens: 9,
                total_tokens: 49,
                cached_tokens: 0,
            }),
            finished("tool_calls"),
        ]
    );
}

#[tokio::test]
async fn an_error_inside_the_stream_is_the_providers_error() {
    let server = ModelServer::start(vec![Reply::events([
        text("Hi"),
        data(&json!({"error": {"message": "content filtered", "code": "data_inspection_failed"}})),
    ])])
    .await;

    let (events, result) = call(&provider(&server, limits()), &request()).await;

    assert_eq!(events, vec![ProviderEvent::Text("Hi".into())]);
    assert_eq!(
        result.unwrap_err().to_string(),
        "the model provider reported an error: content filtered"
    );
}

#[tokio::test]
async fn cancelling_mid_stream_ends_the_call_at_once() {
    let server = ModelServer::start(vec![Reply::events([
        text("Start"),
        // Silent for longer than the test could run: only the cancel ends the call.
        Part::Delay(Duration::from_secs(600)),
        text(" never"),
        chunk(json!({}), Some("stop")),
        done(),
    ])])
    .await;
    let provider = provider(&server, limits());
    let cancel = CancellationToken::new();
    let mut events = Vec::new();
    let started = Instant::now();

    let result = provider
        .complete(&request(), &cancel, |event| {
            // The user taps Stop as soon as the first words show.
            cancel.cancel();
            events.push(event);
        })
        .await;

    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert_eq!(
        result.unwrap_err().to_string(),
        "the model call was cancelled"
    );
    assert_eq!(events, vec![ProviderEvent::Text("Start".into())]);
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[tokio::test]
async fn cancelling_during_the_backoff_does_not_wait_it_out() {
    // A 600 s backoff within a budget that allows it: only the cancel ends the call.
    let server = ModelServer::start(vec![
        Reply::json(429, &json!({})).header("Retry-After", "600"),
    ])
    .await;
    let limits = Limits {
        retry_budget: Duration::from_secs(3600),
        ..limits()
    };
    let provider = Arc::new(provider(&server, limits));
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let call = tokio::spawn({
        let (provider, cancel) = (provider.clone(), cancel.clone());
        async move { provider.complete(&request(), &cancel, |_| {}).await }
    });
    // The user taps Stop once the server has answered 429: the call is in its backoff.
    wait_until(|| server.requests().len() == 1).await;
    cancel.cancel();

    let result = call.await.unwrap();

    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert_eq!(server.requests().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[tokio::test]
async fn an_endpoint_nobody_answers_at_is_unreachable_and_named() {
    let (_held, address) = refusing_address();
    let endpoint = format!("http://{address}/v1");
    let provider = Provider::new(&endpoint, ApiKey::new(KEY), limits()).unwrap();

    let (events, result) = call(&provider, &request()).await;

    assert_eq!(events, vec![]);
    let error = result.unwrap_err();
    assert!(
        matches!(&error, ProviderError::Unreachable { endpoint: named, .. } if *named == endpoint),
        "{error:?}"
    );
    assert!(
        error.to_string().starts_with(&format!(
            "could not reach the model provider at {endpoint}: "
        )),
        "{error}"
    );
}
