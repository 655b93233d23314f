//! The model screen's "Test connection" (issue 42, item 3) against a scripted OpenAI-compatible
//! server on 127.0.0.1: each way a provider refuses is said in words that name the field to
//! change, and the key is in the Authorization header only.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::model_server::{ModelServer, Part, Reply};
use harness_core::agent::Limits;
use harness_core::agent::check::{self, Connection};
use harness_core::events::NoEvents;
use harness_core::screens::{Action, Live, Screens};
use harness_core::settings::Language;
use harness_core::{Engine, Options};
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

struct Deny;

#[async_trait::async_trait]
impl harness_core::invoke::ApprovalBroker for Deny {
    async fn ask(&self, _: harness_core::invoke::Prompt) -> harness_core::policy::Answer {
        harness_core::policy::Answer::Deny
    }
}

fn screens(dir: &std::path::Path) -> Screens {
    let live = Live::new();
    let mut options = Options::new(Arc::new(Deny));
    options.builtin_plugins = false;
    options.events = live.sink(Arc::new(NoEvents));
    Screens::new(Arc::new(Engine::open(dir, options).unwrap()), live)
}

#[tokio::test]
async fn the_model_screen_picks_a_provider_and_its_model_and_shows_where_to_get_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let s = screens(dir.path());
    let m = s.model_settings().unwrap();
    let names: Vec<&str> = m.providers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "DeepSeek 深度求索",
            "通义千问（阿里云百炼）",
            "Kimi（月之暗面）",
            "智谱 GLM",
            "豆包（火山方舟）",
            "硅基流动",
            "OpenRouter",
            "OpenAI",
            "本地模型",
            "其他（自定义地址）"
        ]
    );
    let deepseek = m.providers[0].choose.clone();
    s.act(deepseek).await.unwrap();
    let m = s.model_settings().unwrap();
    assert_eq!(
        (m.endpoint.as_str(), m.model.as_str(), m.endpoint_editable),
        ("https://api.deepseek.com/v1", "deepseek-chat", false)
    );
    assert!(m.providers[0].chosen);
    let suggested: Vec<&str> = m
        .suggested_models
        .iter()
        .map(|b| b.label.as_str())
        .collect();
    assert_eq!(suggested, ["deepseek-chat", "deepseek-reasoner"]);
    assert_eq!(
        m.get_key.map(|b| (b.label, b.action)),
        Some((
            "获取密钥".into(),
            Action::OpenInBrowser {
                url: "https://platform.deepseek.com/api_keys".into()
            }
        ))
    );
    // "Other" leaves the address to be typed.
    s.act(Action::ChooseProvider {
        provider: "custom".into(),
    })
    .await
    .unwrap();
    let m = s.model_settings().unwrap();
    assert_eq!((m.endpoint.as_str(), m.endpoint_editable), ("", true));
    assert!(m.providers.last().unwrap().chosen && m.get_key.is_none());
}

#[tokio::test]
async fn the_model_screen_tests_the_connection_in_words_and_next_waits_for_one_that_worked() {
    let dir = tempfile::tempdir().unwrap();
    let s = screens(dir.path());
    s.engine().accept_terms().unwrap();
    let server = ModelServer::start(vec![
        Reply::json(401, &json!({"error": {"message": "bad key"}})),
        Reply::json(402, &json!({"error": {"message": "Insufficient Balance"}})),
        common::model_server::text("hi"),
    ])
    .await;
    for action in [
        Action::ChooseProvider {
            provider: "custom".into(),
        },
        Action::SetModelEndpoint {
            endpoint: server.endpoint(),
        },
        Action::SetModelName { name: "m-1".into() },
        Action::SetApiKey { key: KEY.into() },
    ] {
        s.act(action).await.unwrap();
    }
    let next = || s.first_run().unwrap().page.unwrap().next.label;
    // DESIGN: "下一步" only after a test that worked; until then the tap says "later".
    assert_eq!(next(), "跳过，以后再设置");
    let tested = |s: &Screens| {
        let m = s.model_settings().unwrap();
        (m.test_result.unwrap_or_default(), m.test_works)
    };
    let host = server.endpoint();
    s.act(Action::TestModelConnection).await.unwrap();
    assert_eq!(
        tested(&s),
        (
            format!("密钥不对：{host} 拒绝了这个 API 密钥。请检查「API 密钥」是否完整复制。"),
            false
        )
    );
    assert_eq!(next(), "跳过，以后再设置");
    s.act(Action::TestModelConnection).await.unwrap();
    assert_eq!(
        tested(&s),
        (
            format!("余额不足：{host} 的账户没有余额了。充值后再试。"),
            false
        )
    );
    s.act(Action::TestModelConnection).await.unwrap();
    assert_eq!(tested(&s), (format!("连接成功：{host} 已回答。"), true));
    assert_eq!(next(), "下一步");
    // The key went in the header of each test, to this provider, and is nowhere on the screen.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests
            .iter()
            .all(|r| r.header("authorization") == Some(format!("Bearer {KEY}").as_str()))
    );
    assert!(!format!("{:?}", s.model_settings().unwrap()).contains(KEY));
    // Another model is another connection: its test is still to be made.
    s.act(Action::SetModelName { name: "m-2".into() })
        .await
        .unwrap();
    assert_eq!(tested(&s), (String::new(), false));
    assert_eq!(next(), "跳过，以后再设置");
}

#[tokio::test]
async fn each_provider_keeps_its_own_key_and_the_single_old_key_becomes_the_chosen_ones() {
    let dir = tempfile::tempdir().unwrap();
    let s = screens(dir.path());
    let e = s.engine();
    // A data directory from before: one key, under model.apiKey, and DeepSeek's address.
    s.act(Action::ChooseProvider {
        provider: "deepseek".into(),
    })
    .await
    .unwrap();
    e.set_secret("model.apiKey", "sk-old").unwrap();
    assert!(s.model_settings().unwrap().key_set);
    assert!(!e.has_secret("model.apiKey").unwrap());
    assert!(e.has_secret("model.apiKey.deepseek").unwrap());
    // Qwen has none until one is pasted; DeepSeek's stays.
    s.act(Action::ChooseProvider {
        provider: "qwen".into(),
    })
    .await
    .unwrap();
    assert!(!s.model_settings().unwrap().key_set);
    s.act(Action::SetApiKey {
        key: "sk-qwen".into(),
    })
    .await
    .unwrap();
    assert!(e.has_secret("model.apiKey.qwen").unwrap());
    s.act(Action::ChooseProvider {
        provider: "deepseek".into(),
    })
    .await
    .unwrap();
    let m = s.model_settings().unwrap();
    assert!(m.key_set);
    s.act(m.clear_key.unwrap().action).await.unwrap();
    assert!(!e.has_secret("model.apiKey.deepseek").unwrap());
    assert!(e.has_secret("model.apiKey.qwen").unwrap());
}

/// What a turn's failure says in the chat when the scripted server answers `reply`, in `lang`.
async fn turn_fails_with(reply: Reply, lang: &str) -> (String, usize) {
    let server = ModelServer::start(vec![reply]).await;
    let dir = tempfile::tempdir().unwrap();
    let screens = screens(dir.path());
    let engine = screens.engine();
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    server.configure(engine, KEY);
    engine
        .change_setting(harness_core::settings::parse_change("language", &json!(lang)).unwrap())
        .unwrap();
    let ended = engine.send_message("c", "你好").await.unwrap();
    assert_eq!(ended.state, harness_core::history::TurnState::Failed);
    let said = ended.message.unwrap();
    assert!(!said.contains(KEY), "{said}");
    // The chat says it in the same words.
    let notice = screens
        .chat("c")
        .unwrap()
        .items
        .last()
        .unwrap()
        .text
        .clone();
    assert!(notice.ends_with(&said), "{notice}");
    (said, server.requests().len())
}

#[tokio::test]
async fn a_402_inside_a_turn_says_the_balance_is_spent_and_to_top_up() {
    // Issue 42: a turn's own failures in the connection test's words.
    let (said, sent) = turn_fails_with(
        Reply::json(
            402,
            &json!({"error": {"message": "Insufficient Balance", "type": "unknown_error"}}),
        ),
        "zh",
    )
    .await;
    assert_eq!(said, "余额不足：本地模型 的账户没有余额了。充值后再试。");
    assert_eq!(sent, 1);
}

#[tokio::test]
async fn a_429_for_a_spent_quota_is_no_balance_and_is_not_asked_again() {
    let (said, sent) = turn_fails_with(
        Reply::json(
            429,
            &json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                "type": "insufficient_quota", "code": "insufficient_quota"}}),
        ),
        "en",
    )
    .await;
    assert_eq!(
        said,
        "No balance: your Local model account has run out. Top it up and try again."
    );
    assert_eq!(sent, 1, "a spent quota is not asked again");
}

#[tokio::test]
async fn a_429_for_too_many_requests_is_a_busy_provider() {
    let (said, _) = turn_fails_with(
        Reply::json(
            429,
            &json!({"error": {"message": "Rate limit reached for requests per minute"}}),
        )
        .header("Retry-After", "600"),
        "zh",
    )
    .await;
    assert_eq!(said, "本地模型 现在很忙或限制了请求频率。稍后再试。");
}
