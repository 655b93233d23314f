//! The model screen's "Test connection" (issue 42): one tiny request to the chosen endpoint,
//! model and key, and what came of it in words a student can act on — a wrong key, no balance
//! left, a model the provider does not serve, no network, no answer in time — each naming the
//! field to change. The key goes in the `Authorization` header only, as in every model call
//! ([`Provider`]); no outcome carries it.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::provider::{ApiKey, Limits, Provider, ProviderError, says_balance_spent};
use super::providers;
use crate::settings::Language;

/// What one test request found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Connection {
    /// The provider answered the request.
    Works,
    /// No key to test with.
    NoKey,
    /// No endpoint or model to test.
    Unset,
    /// 401 or 403.
    WrongKey,
    /// 402 (DeepSeek: "Insufficient Balance"), or a refusal that says the balance is spent.
    NoBalance,
    /// 404, or the provider's own code for a model it does not serve (DeepSeek's 400 "Model
    /// Not Exist", Zhipu's 1211, SiliconFlow's 20012 …).
    UnknownModel { model: String },
    /// No connection could be made: no network, a wrong host, a closed port.
    NoNetwork,
    /// The provider sent nothing within the wait.
    Timeout,
    /// The provider is overloaded or limits the rate (429, 5xx).
    Busy,
    /// The endpoint is not an address, or answers as no model provider does.
    BadEndpoint,
    /// Any other refusal, with the provider's own message (the key never in it).
    Refused { status: u16, message: String },
}

/// The waits of a test: shorter than a turn's, and no retry (the student taps again).
pub fn limits() -> Limits {
    Limits {
        connect_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(20),
        max_tries: 1,
        retry_budget: Duration::ZERO,
        first_backoff: Duration::ZERO,
    }
}

/// Sends one request of one word to `model` at `endpoint` with `key`, asking for the shortest
/// answer the provider allows, and says what came of it.
pub async fn test(endpoint: &str, model: &str, key: &str, limits: Limits) -> Connection {
    if endpoint.trim().is_empty() || model.trim().is_empty() {
        return Connection::Unset;
    }
    if key.trim().is_empty() {
        return Connection::NoKey;
    }
    let provider = match Provider::new(endpoint.trim(), ApiKey::new(key.trim()), limits) {
        Ok(p) => p,
        Err(e) => return outcome(&e, model),
    };
    let mut body = json!({
        "model": model.trim(),
        "messages": [{"role": "user", "content": "hi"}],
        "stream": true,
    });
    // OpenAI's reasoning models refuse `max_tokens`: it is sent only where the provider takes it.
    if providers::for_endpoint(endpoint)
        .sampling
        .max_tokens
        .is_some()
    {
        body["max_tokens"] = json!(1);
    }
    let sent = provider
        .complete_body(
            body.to_string().into(),
            model.trim(),
            &CancellationToken::new(),
            |_| {},
        )
        .await;
    match sent {
        Ok(()) => Connection::Works,
        Err(e) => outcome(&e, model.trim()),
    }
}

/// What the student reads when a turn's model call failed (issue 42): a wrong key, no balance
/// or quota left, an unknown model, a busy provider — in the connection test's words, naming
/// the provider, where to get a key or top up and the field to change; any other failure as
/// the error says it.
pub fn turn_words(error: &ProviderError, endpoint: &str, model: &str, lang: Language) -> String {
    let provider = providers::for_endpoint(endpoint);
    let name = match lang {
        Language::Zh => provider.name_zh,
        Language::En => provider.name_en,
    };
    match outcome(error, model) {
        found @ (Connection::WrongKey
        | Connection::NoBalance
        | Connection::UnknownModel { .. }
        | Connection::Busy) => found.words(lang, name, provider.key_url),
        // The error itself names the address, the reason or how long nothing came.
        _ => error.to_string(),
    }
}

/// The outcome a model call's error stands for.
fn outcome(error: &ProviderError, model: &str) -> Connection {
    let unknown = || Connection::UnknownModel {
        model: model.to_owned(),
    };
    match error {
        ProviderError::KeyRefused { .. } => Connection::WrongKey,
        ProviderError::ModelNotFound { .. } => unknown(),
        ProviderError::Rejected { status: 402, .. } => Connection::NoBalance,
        ProviderError::Rejected { status, message } => {
            let said = message.to_lowercase();
            if MODEL_UNKNOWN.iter().any(|s| said.contains(s)) {
                unknown()
            } else if says_balance_spent(message) {
                Connection::NoBalance
            } else {
                Connection::Refused {
                    status: *status,
                    message: message.clone(),
                }
            }
        }
        ProviderError::ProviderFailed { message } if says_balance_spent(message) => {
            Connection::NoBalance
        }
        ProviderError::ProviderFailed { message } => Connection::Refused {
            status: 200,
            message: message.clone(),
        },
        ProviderError::Unreachable { .. } => Connection::NoNetwork,
        ProviderError::IdleTimeout { .. } => Connection::Timeout,
        ProviderError::Busy { .. } => Connection::Busy,
        ProviderError::BadEndpoint { .. } | ProviderError::UnexpectedContentType { .. } => {
            Connection::BadEndpoint
        }
        // An answer that began and then broke or could not be read still came from a provider
        // that knows the key and the model.
        ProviderError::StreamDropped { .. } | ProviderError::BadAnswer { .. } => Connection::Works,
        ProviderError::Cancelled => Connection::Timeout,
    }
}

/// How providers say, in their own words, that they do not serve a model (lowercased).
const MODEL_UNKNOWN: &[&str] = &[
    // DeepSeek (400), SiliconFlow (20012), DashScope.
    "model not exist",
    "model does not exist",
    "model_not_found",
    "model not found",
    // Moonshot.
    "not found the model",
    // Zhipu (1211).
    "模型不存在",
    // OpenRouter.
    "not a valid model",
    // Volcengine Ark.
    "invalidendpointormodel",
];

impl Connection {
    pub fn works(&self) -> bool {
        *self == Connection::Works
    }

    /// What the student reads, naming the field to change; `provider` is the provider's name
    /// and `key_url` where its keys are made.
    pub fn words(&self, lang: Language, provider: &str, key_url: Option<&str>) -> String {
        let zh = lang == Language::Zh;
        let page = |zh_before: &str, en_before: &str| match key_url {
            Some(url) if zh => format!("{zh_before}{url}"),
            Some(url) => format!("{en_before}{url}"),
            None => String::new(),
        };
        match self {
            Connection::Works if zh => format!("连接成功：{provider} 已回答。"),
            Connection::Works => format!("Connected: {provider} answered."),
            Connection::NoKey if zh => "请先在「API 密钥」中粘贴密钥。".into(),
            Connection::NoKey => "Paste your key into \"API key\" first.".into(),
            Connection::Unset if zh => "请先选择服务商并填写「模型名称」。".into(),
            Connection::Unset => "Choose a provider and fill in \"Model name\" first.".into(),
            Connection::WrongKey if zh => format!(
                "密钥不对：{provider} 拒绝了这个 API 密钥。请检查「API 密钥」是否完整复制。{}",
                page("密钥在这里获取：", "")
            ),
            Connection::WrongKey => format!(
                "Wrong key: {provider} refused this API key. Check that \"API key\" was copied whole. {}",
                page("", "Get a key at ")
            ),
            Connection::NoBalance if zh => format!(
                "余额不足：{provider} 的账户没有余额了。充值后再试。{}",
                page("账户页面：", "")
            ),
            Connection::NoBalance => format!(
                "No balance: your {provider} account has run out. Top it up and try again. {}",
                page("", "Your account: ")
            ),
            Connection::UnknownModel { model } if zh => format!(
                "{provider} 没有名为 {model} 的模型。请在「模型名称」中选一个建议的模型。"
            ),
            Connection::UnknownModel { model } => format!(
                "{provider} has no model called {model}. Pick a suggested one in \"Model name\"."
            ),
            Connection::NoNetwork if zh => format!(
                "连不上 {provider}：请检查网络；若是自定义服务商，检查「接口地址」。"
            ),
            Connection::NoNetwork => format!(
                "Cannot reach {provider}: check the network, and for your own provider the \"Endpoint\"."
            ),
            Connection::Timeout if zh => {
                format!("{provider} 没有及时回答（超时）。稍后再试，或换一个服务商。")
            }
            Connection::Timeout => format!(
                "{provider} did not answer in time. Try again later or choose another provider."
            ),
            Connection::Busy if zh => format!("{provider} 现在很忙或限制了请求频率。稍后再试。"),
            Connection::Busy => {
                format!("{provider} is busy or limiting requests. Try again in a minute.")
            }
            Connection::BadEndpoint if zh => {
                "「接口地址」不是模型服务的地址：请填写服务商文档中 OpenAI 兼容接口的地址（以 /v1 结尾的那种）。".into()
            }
            Connection::BadEndpoint => "\"Endpoint\" is not a model service's address: enter the OpenAI-compatible address from your provider's documentation (the one ending in /v1).".into(),
            Connection::Refused { status, message } if zh => {
                format!("{provider} 拒绝了请求（HTTP {status}）：{message}")
            }
            Connection::Refused { status, message } => {
                format!("{provider} refused the request (HTTP {status}): {message}")
            }
        }
        .trim_end()
        .to_owned()
    }
}
