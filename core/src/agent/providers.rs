//! The model providers a PKU student uses, as data: what the model screen offers and what a
//! request carries. Each is an OpenAI-compatible Chat Completions endpoint; the student picks
//! one and enters its key, or any other address.
//!
//! Written 2026-12 from each provider's own documentation as it stood then (base URLs, model
//! names, context sizes and sampling advice change: check them when a provider's page does).
//! The sampling values are the provider's documented advice for chat and tool use where it gives
//! one, else a lower temperature than its default: a model that calls tools does better
//! steady, and llama.cpp's own default (0.8, no bound on the answer) is what a request without
//! them gets (issue 44, item 7).

use url::Url;

use crate::secrets::{SecretError, SecretStore, keys};
use crate::settings::ModelSettings;

/// What a request carries to sample the answer; `None` is left to the provider.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sampling {
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `max_tokens`: the longest answer, in tokens.
    pub max_tokens: Option<u32>,
}

/// One provider, as the model screen lists it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProviderInfo {
    /// A stable id, e.g. `deepseek`.
    pub id: &'static str,
    pub name_zh: &'static str,
    pub name_en: &'static str,
    /// The OpenAI-compatible base URL (`model.endpoint`); empty for an address the student
    /// gives.
    pub base_url: &'static str,
    /// Models to suggest, the first the default.
    pub models: &'static [&'static str],
    /// Where the student gets a key; none where no key is needed or the address is theirs.
    pub key_url: Option<&'static str>,
    /// The context window of the suggested models, in tokens (the smallest among them).
    pub context_tokens: u32,
    /// How long the provider may send nothing before the call is given up, in seconds.
    pub idle_secs: u32,
    pub sampling: Sampling,
}

/// The id of the entry for a model served on the phone or computer itself.
pub const LOCAL: &str = "local";
/// The id of the entry for any other address.
pub const CUSTOM: &str = "custom";

/// The providers, in the order the model screen lists them.
pub const PROVIDERS: &[ProviderInfo] = &[
    ProviderInfo {
        id: "deepseek",
        name_zh: "DeepSeek 深度求索",
        name_en: "DeepSeek",
        base_url: "https://api.deepseek.com/v1",
        models: &["deepseek-chat", "deepseek-reasoner"],
        key_url: Some("https://platform.deepseek.com/api_keys"),
        context_tokens: 131_072,
        // The API keeps the connection open with keep-alive lines while it is busy.
        idle_secs: 120,
        // DeepSeek's temperature guide: 1.0 for data analysis, 0.0 for code, 1.3 for chat; a
        // tool-calling assistant sits with the data.
        sampling: Sampling {
            temperature: Some(1.0),
            max_tokens: Some(4096),
        },
    },
    ProviderInfo {
        id: "qwen",
        name_zh: "通义千问（阿里云百炼）",
        name_en: "Qwen (Alibaba Cloud Model Studio)",
        base_url: "https://dashscope.aliyuncs.com/compatible-mode/v1",
        models: &["qwen-plus", "qwen-max", "qwen-turbo"],
        key_url: Some("https://bailian.console.aliyun.com/?apiKey=1"),
        context_tokens: 131_072,
        idle_secs: 120,
        // DashScope's default for qwen-plus.
        sampling: Sampling {
            temperature: Some(0.7),
            max_tokens: Some(4096),
        },
    },
    ProviderInfo {
        id: "kimi",
        name_zh: "Kimi（月之暗面）",
        name_en: "Kimi (Moonshot AI)",
        base_url: "https://api.moonshot.cn/v1",
        models: &[
            "kimi-k2-0905-preview",
            "kimi-k2-turbo-preview",
            "moonshot-v1-32k",
        ],
        key_url: Some("https://platform.moonshot.cn/console/api-keys"),
        context_tokens: 32_768,
        idle_secs: 120,
        // Moonshot recommends 0.6 for Kimi K2.
        sampling: Sampling {
            temperature: Some(0.6),
            max_tokens: Some(4096),
        },
    },
    ProviderInfo {
        id: "zhipu",
        name_zh: "智谱 GLM",
        name_en: "Zhipu GLM",
        base_url: "https://open.bigmodel.cn/api/paas/v4",
        models: &["glm-4.6", "glm-4.5-air", "glm-4-flash"],
        key_url: Some("https://open.bigmodel.cn/usercenter/apikeys"),
        context_tokens: 131_072,
        idle_secs: 120,
        // Zhipu's default for GLM-4.5.
        sampling: Sampling {
            temperature: Some(0.6),
            max_tokens: Some(4096),
        },
    },
    ProviderInfo {
        id: "doubao",
        name_zh: "豆包（火山方舟）",
        name_en: "Doubao (Volcengine Ark)",
        base_url: "https://ark.cn-beijing.volces.com/api/v3",
        models: &["doubao-seed-1-6-250615", "doubao-1-5-pro-32k-250115"],
        key_url: Some("https://console.volcengine.com/ark/region:ark+cn-beijing/apiKey"),
        context_tokens: 32_768,
        idle_secs: 120,
        sampling: Sampling {
            temperature: Some(0.7),
            max_tokens: Some(4096),
        },
    },
    ProviderInfo {
        id: "siliconflow",
        name_zh: "硅基流动",
        name_en: "SiliconFlow",
        base_url: "https://api.siliconflow.cn/v1",
        models: &[
            "deepseek-ai/DeepSeek-V3",
            "Qwen/Qwen2.5-72B-Instruct",
            "Qwen/Qwen3-8B",
        ],
        key_url: Some("https://cloud.siliconflow.cn/account/ak"),
        context_tokens: 32_768,
        idle_secs: 120,
        // SiliconFlow's own default answer is 512 tokens: too short for a summary of results.
        sampling: Sampling {
            temperature: Some(0.7),
            max_tokens: Some(4096),
        },
    },
    ProviderInfo {
        id: "openrouter",
        name_zh: "OpenRouter",
        name_en: "OpenRouter",
        base_url: "https://openrouter.ai/api/v1",
        models: &[
            "deepseek/deepseek-chat-v3.1",
            "qwen/qwen3-235b-a22b-2507",
            "openai/gpt-4o-mini",
        ],
        key_url: Some("https://openrouter.ai/settings/keys"),
        context_tokens: 128_000,
        idle_secs: 120,
        sampling: Sampling {
            temperature: Some(0.7),
            max_tokens: Some(4096),
        },
    },
    ProviderInfo {
        id: "openai",
        name_zh: "OpenAI",
        name_en: "OpenAI",
        base_url: "https://api.openai.com/v1",
        models: &["gpt-4.1-mini", "gpt-4o-mini", "gpt-5-mini"],
        key_url: Some("https://platform.openai.com/api-keys"),
        context_tokens: 128_000,
        idle_secs: 120,
        // OpenAI's reasoning models (gpt-5, o-series) refuse a temperature other than 1 and
        // `max_tokens` itself (they take `max_completion_tokens`): nothing is sent.
        sampling: Sampling {
            temperature: None,
            max_tokens: None,
        },
    },
    ProviderInfo {
        id: LOCAL,
        name_zh: "本地模型",
        name_en: "Local model",
        // llama.cpp's server; Ollama's is http://127.0.0.1:11434/v1. Any loopback address is
        // this entry.
        base_url: "http://127.0.0.1:8080/v1",
        models: &["qwen2.5-7b-instruct", "qwen3-8b"],
        key_url: None,
        context_tokens: 8192,
        // A phone or laptop may take minutes over a long prompt before the first token.
        idle_secs: 300,
        // A small model keeps to the tools' schemas only when it samples steadily, and its
        // answers to a student are short.
        sampling: Sampling {
            temperature: Some(0.2),
            max_tokens: Some(1024),
        },
    },
    ProviderInfo {
        id: CUSTOM,
        name_zh: "其他（自定义地址）",
        name_en: "Other (your own address)",
        base_url: "",
        models: &[],
        key_url: None,
        context_tokens: 32_768,
        idle_secs: 60,
        sampling: Sampling {
            temperature: Some(0.7),
            max_tokens: Some(2048),
        },
    },
];

/// The provider serving `endpoint`: the one whose base URL has its host, [`LOCAL`] for a
/// loopback address, else [`CUSTOM`].
pub fn for_endpoint(endpoint: &str) -> &'static ProviderInfo {
    let by_id = |id: &str| {
        PROVIDERS
            .iter()
            .find(|p| p.id == id)
            .expect("the list has it")
    };
    let host = |url: &str| {
        Url::parse(url.trim())
            .ok()
            .and_then(|u| u.host().map(|h| h.to_owned()))
    };
    let Some(wanted) = host(endpoint) else {
        return by_id(CUSTOM);
    };
    let loopback = match &wanted {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(a) => a.is_loopback(),
        url::Host::Ipv6(a) => a.is_loopback(),
    };
    if loopback {
        return by_id(LOCAL);
    }
    PROVIDERS
        .iter()
        .filter(|p| p.id != LOCAL)
        .find(|p| host(p.base_url).as_ref() == Some(&wanted))
        .unwrap_or_else(|| by_id(CUSTOM))
}

/// The keystore name of `provider`'s API key (`model.apiKey.deepseek`): each provider keeps
/// its own, so choosing another and back does not lose one (issue 42).
pub fn key_name(provider: &str) -> String {
    format!("{}.{provider}", keys::MODEL_API_KEY)
}

/// The API key of the provider serving `endpoint`. The single key kept under
/// [`keys::MODEL_API_KEY`] (before keys were per provider, and what `harness secret set
/// model.apiKey` still writes) becomes that provider's key the first time it is read.
pub fn api_key(secrets: &dyn SecretStore, endpoint: &str) -> Result<Option<String>, SecretError> {
    let own = key_name(for_endpoint(endpoint).id);
    if let Some(single) = secrets.get(keys::MODEL_API_KEY)? {
        let moved = !single.trim().is_empty();
        if moved {
            secrets.set(&own, &single)?;
        }
        secrets.delete(keys::MODEL_API_KEY)?;
        if moved {
            // The key moved is the one used now, whatever the keystore answers next.
            return Ok(Some(single));
        }
    }
    Ok(secrets.get(&own)?.filter(|k| !k.trim().is_empty()))
}

/// What a request to the configured model carries: its provider's values, each replaced by
/// the setting that sets it (`model.temperature`, `model.maxTokens`).
pub fn sampling(model: &ModelSettings) -> Sampling {
    let provider = for_endpoint(&model.endpoint).sampling;
    Sampling {
        temperature: model.temperature.map(|t| t.0).or(provider.temperature),
        max_tokens: model.max_tokens.or(provider.max_tokens),
    }
}

/// The budget of one request to the configured model, in tokens: `model.contextTokens`, else
/// its provider's context size.
pub fn context_tokens(model: &ModelSettings) -> u32 {
    model
        .context_tokens
        .unwrap_or_else(|| for_endpoint(&model.endpoint).context_tokens)
}

/// How long the configured model's provider may send nothing before the call is given up.
pub fn idle_limit(model: &ModelSettings) -> std::time::Duration {
    std::time::Duration::from_secs(u64::from(for_endpoint(&model.endpoint).idle_secs))
}

/// The waits of a call to the configured model: its provider's idle limit (a reasoning model
/// or a busy provider may be silent for minutes while it reads), the rest the client's.
pub fn limits(model: &ModelSettings) -> super::Limits {
    super::Limits {
        idle_timeout: idle_limit(model),
        ..super::Limits::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_finds_its_provider_by_host_and_a_loopback_one_is_local() {
        assert_eq!(for_endpoint("https://api.deepseek.com/v1").id, "deepseek");
        assert_eq!(for_endpoint("https://api.deepseek.com").id, "deepseek");
        assert_eq!(
            for_endpoint("https://dashscope.aliyuncs.com/compatible-mode/v1").id,
            "qwen"
        );
        assert_eq!(for_endpoint("http://localhost:11434/v1").id, LOCAL);
        assert_eq!(for_endpoint("http://[::1]:8080/v1").id, LOCAL);
        assert_eq!(for_endpoint("https://llm.example.edu.cn/v1").id, CUSTOM);
        assert_eq!(for_endpoint("").id, CUSTOM);
    }

    #[test]
    fn the_single_key_becomes_the_chosen_providers_and_each_provider_keeps_its_own() {
        let secrets = crate::secrets::MemorySecrets::default();
        secrets.set(keys::MODEL_API_KEY, "sk-old").unwrap();
        let deepseek = "https://api.deepseek.com/v1";
        assert_eq!(
            api_key(&secrets, deepseek).unwrap().as_deref(),
            Some("sk-old")
        );
        assert_eq!(secrets.get(keys::MODEL_API_KEY).unwrap(), None);
        assert_eq!(
            secrets.get("model.apiKey.deepseek").unwrap().as_deref(),
            Some("sk-old")
        );
        let qwen = "https://dashscope.aliyuncs.com/compatible-mode/v1";
        assert_eq!(api_key(&secrets, qwen).unwrap(), None);
        secrets.set(&key_name("qwen"), "sk-qwen").unwrap();
        assert_eq!(api_key(&secrets, qwen).unwrap().as_deref(), Some("sk-qwen"));
        assert_eq!(
            api_key(&secrets, deepseek).unwrap().as_deref(),
            Some("sk-old")
        );
    }

    #[test]
    fn a_call_waits_as_long_as_its_provider_may_be_silent() {
        // Issue 42: the idle limit is per provider, not one minute for all.
        let model = |endpoint: &str| ModelSettings {
            endpoint: endpoint.to_owned(),
            ..ModelSettings::default()
        };
        let secs = |endpoint: &str| limits(&model(endpoint)).idle_timeout.as_secs();
        assert_eq!(secs("https://api.deepseek.com/v1"), 120);
        assert_eq!(secs("http://127.0.0.1:8080/v1"), 300);
        assert_eq!(secs("https://llm.example.edu.cn/v1"), 60);
        assert_eq!(
            limits(&model("https://api.moonshot.cn/v1")).connect_timeout,
            super::super::Limits::default().connect_timeout
        );
    }

    #[test]
    fn every_provider_has_both_names_a_url_and_the_local_one_samples_low_and_short() {
        for p in PROVIDERS {
            assert!(!p.name_zh.is_empty() && !p.name_en.is_empty(), "{}", p.id);
            if p.id != CUSTOM {
                assert!(Url::parse(p.base_url).is_ok(), "{}", p.id);
                assert!(!p.models.is_empty(), "{}", p.id);
            }
            assert!(p.context_tokens >= 8192 && p.idle_secs >= 60, "{}", p.id);
        }
        // issue 44: a local model samples at 0.3 or less and answers in about 1,024 tokens.
        let local = for_endpoint("http://127.0.0.1:8080/v1").sampling;
        assert!(local.temperature.is_some_and(|t| t <= 0.3));
        assert_eq!(local.max_tokens, Some(1024));
    }
}
