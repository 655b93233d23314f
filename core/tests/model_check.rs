//! The model screen's "Test connection" (issue 42, item 3) against a scripted OpenAI-compatible
//! server on 127.0.0.1: each way a provider refuses is said in words that name the field to
//! change, and the key is in the Authorization header only.

mod common;

use std::time::Duration;

use common::model_server::{ModelServer, Part, Reply};
use harness_core::agent::Limits;
use harness_core::agent::check::{self, Connection};
use harness_core::settings::Language;
use serde_json::json;

const KEY: &str = "sk-check-0123456789abcdef";

fn limits() -> Limits {
    Limits {
        idle_timeout: Duration::from_secs(5),
        ..check::limits()
    }
}

async fn test_against(reply: Reply) -> (Connection, Vec<common::model_server::Request>) {
    let server = ModelServer::start(vec![reply]).await;
    let found = check::test(&server.endpoint(), "deepseek-chat", KEY, limits()).await;
    (found, server.requests())
}

#[tokio::test]
async fn a_provider_that_answers_works_and_was_sent_one_tiny_request() {
    let (found, requests) = test_against(common::model_server::text("hi")).await;
    assert_eq!(found, Connection::Works);
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.body["model"], "deepseek-chat");
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "user", "content": "hi"}])
    );
    assert_eq!(
        found.words(Language::Zh, "DeepSeek", None),
        "连接成功：DeepSeek 已回答。"
    );
}

#[tokio::test]
async fn a_401_is_a_wrong_key_named_with_where_to_get_one() {
    let (found, _) = test_against(Reply::json(
        401,
        &json!({"error": {"message": format!("Authentication Fails, key {KEY} is invalid")}}),
    ))
    .await;
    assert_eq!(found, Connection::WrongKey);
    let zh = found.words(
        Language::Zh,
        "DeepSeek",
        Some("https://platform.deepseek.com/api_keys"),
    );
    assert_eq!(
        zh,
        "密钥不对：DeepSeek 拒绝了这个 API 密钥。请检查「API 密钥」是否完整复制。密钥在这里获取：https://platform.deepseek.com/api_keys"
    );
    let en = found.words(Language::En, "DeepSeek", None);
    assert_eq!(
        en,
        "Wrong key: DeepSeek refused this API key. Check that \"API key\" was copied whole."
    );
    assert!(!zh.contains(KEY) && !en.contains(KEY));
}

#[tokio::test]
async fn deepseeks_402_is_no_balance() {
    let (found, _) = test_against(Reply::json(
        402,
        &json!({"error": {"message": "Insufficient Balance", "type": "unknown_error"}}),
    ))
    .await;
    assert_eq!(found, Connection::NoBalance);
    assert_eq!(
        found.words(Language::En, "DeepSeek", None),
        "No balance: your DeepSeek account has run out. Top it up and try again."
    );
}

#[tokio::test]
async fn a_404_and_a_providers_own_code_are_an_unknown_model() {
    let (found, _) = test_against(Reply::json(
        404,
        &json!({"error": {"message": "The model does not exist"}}),
    ))
    .await;
    let unknown = Connection::UnknownModel {
        model: "deepseek-chat".into(),
    };
    assert_eq!(found, unknown);
    assert_eq!(
        found.words(Language::Zh, "DeepSeek", None),
        "DeepSeek 没有名为 deepseek-chat 的模型。请在「模型名称」中选一个建议的模型。"
    );
    // DeepSeek answers an unknown model with 400 "Model Not Exist"; Zhipu with code 1211.
    let (found, _) = test_against(Reply::json(
        400,
        &json!({"error": {"message": "Model Not Exist", "type": "invalid_request_error"}}),
    ))
    .await;
    assert_eq!(found, unknown);
    let (found, _) = test_against(Reply::json(
        400,
        &json!({"error": {"code": "1211", "message": "模型不存在，请检查模型代码。"}}),
    ))
    .await;
    assert_eq!(found, unknown);
}

#[tokio::test]
async fn a_closed_port_is_no_network() {
    // Bound and never listening: the port is held, and a connection to it is refused.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let endpoint = format!("http://{}/v1", socket.local_addr().unwrap());
    let found = check::test(&endpoint, "deepseek-chat", KEY, limits()).await;
    assert_eq!(found, Connection::NoNetwork);
    assert_eq!(
        found.words(Language::En, "DeepSeek", None),
        "Cannot reach DeepSeek: check the network, and for your own provider the \"Endpoint\"."
    );
}

#[tokio::test]
async fn a_provider_that_sends_nothing_is_a_timeout() {
    let server =
        ModelServer::start(vec![Reply::events([Part::Delay(Duration::from_secs(600))])]).await;
    let waits = Limits {
        idle_timeout: Duration::from_millis(200),
        ..check::limits()
    };
    let found = check::test(&server.endpoint(), "deepseek-chat", KEY, waits).await;
    assert_eq!(found, Connection::Timeout);
    assert_eq!(
        found.words(Language::Zh, "Kimi", None),
        "Kimi 没有及时回答（超时）。稍后再试，或换一个服务商。"
    );
}

#[tokio::test]
async fn no_key_is_said_before_anything_is_sent() {
    let server = ModelServer::start(vec![]).await;
    let found = check::test(&server.endpoint(), "deepseek-chat", "  ", limits()).await;
    assert_eq!(found, Connection::NoKey);
    assert!(server.requests().is_empty());
}
