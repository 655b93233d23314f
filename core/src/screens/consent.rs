//! Consent and permissions (DESIGN.md §4): the terms, the campus session, cloud consent per
//! plugin with its disclosure, and each system permission with the tap that fixes it; and the
//! model settings (endpoint, model, whether a key is set — never the key).

use super::texts::{permission_state_words, permission_words, title, tr};
use super::{Action, Button, ButtonRole, EXACT_ALARM_UNSUPPORTED, Route};
use crate::agent::check::{self, Connection};
use crate::agent::providers::{self, ProviderInfo};
use crate::consent::{Permission, PermissionState, TERMS_VERSION};
use crate::engine::{Engine, EngineError};
use crate::settings::Language;

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PermissionRow {
    pub permission: Permission,
    pub label: String,
    pub state: PermissionState,
    pub state_label: String,
    /// What the plugins that need it are: why the user would want it.
    pub needed_by: Vec<String>,
    /// The tap that fixes it, when it is not granted.
    pub fix: Option<Button>,
}

/// A plugin that reaches the PKU harness Cloud, with its switch.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CloudRow {
    pub plugin: String,
    pub title: String,
    pub allowed: bool,
    pub disclosure: Vec<String>,
    pub toggle: Action,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ConsentScreen {
    pub title: String,
    pub terms_label: String,
    /// `Accepted (version 2)`, or what to do.
    pub terms_state: String,
    /// The terms to read again, paragraph by paragraph, behind `read_terms_label`.
    pub read_terms_label: String,
    pub terms: Vec<String>,
    pub accept_terms: Option<Button>,
    pub campus_label: String,
    /// Whether every campus service has its session (DESIGN.md §4: the "campus session").
    pub campus_signed_in: bool,
    /// "Signed in as 2100012345", or "Not signed in".
    pub campus_state: String,
    /// Opens the campus account screen, to sign in or out.
    pub campus_open: Button,
    pub cloud_label: String,
    pub cloud: Vec<CloudRow>,
    pub permissions_label: String,
    pub permissions: Vec<PermissionRow>,
}

pub(super) fn build(engine: &Engine, lang: Language) -> ConsentScreen {
    let c = engine.consent();
    let plugins = engine.plugins();
    let accepted = c.terms_accepted();
    let no_exact_alarms = c.capabilities.contains(EXACT_ALARM_UNSUPPORTED);
    let permissions = Permission::ALL
        .into_iter()
        .map(|permission| {
            let state = match permission {
                Permission::Notifications => c.notifications,
                Permission::ExactAlarm => c.exact_alarm,
            };
            // seed 000: the system's prompt follows a tap; once denied (or for exact alarms,
            // which have no prompt) only the system settings can grant it.
            let unsupported = permission == Permission::ExactAlarm && no_exact_alarms;
            let fix = match (permission, state) {
                (_, PermissionState::Granted) => None,
                // No system setting grants what the phone does not have.
                _ if unsupported => None,
                (Permission::Notifications, PermissionState::Unknown) => Some(Button::new(
                    tr(lang, "允许通知", "Allow notifications").into(),
                    ButtonRole::Primary,
                    Action::RequestPermission { permission },
                )),
                _ => Some(Button::new(
                    tr(lang, "打开系统设置", "Open system settings").into(),
                    ButtonRole::Normal,
                    Action::OpenPermissionSettings { permission },
                )),
            };
            PermissionRow {
                permission,
                label: permission_words(lang, permission).into(),
                state,
                state_label: if unsupported {
                    tr(lang, "此手机不支持", "Not available on this phone").into()
                } else {
                    permission_state_words(lang, state).into()
                },
                needed_by: plugins
                    .iter()
                    .filter(|v| {
                        v.plugin
                            .requires
                            .iter()
                            .any(|r| r == permission.requirement())
                    })
                    .map(|v| title(lang, &v.plugin.title, v.plugin.title_en.as_deref()))
                    .collect(),
                fix,
            }
        })
        .collect();
    let cloud = plugins
        .iter()
        .filter(|v| !v.plugin.disclosure.is_empty())
        .map(|v| {
            let allowed = c.cloud.contains(&v.plugin.id);
            CloudRow {
                plugin: v.plugin.id.clone(),
                title: title(lang, &v.plugin.title, v.plugin.title_en.as_deref()),
                allowed,
                disclosure: v.plugin.disclosure_in(lang).to_vec(),
                toggle: Action::SetCloudConsent {
                    plugin: v.plugin.id.clone(),
                    allowed: !allowed,
                },
            }
        })
        .collect();
    ConsentScreen {
        title: tr(lang, "同意与权限", "Consent and permissions").into(),
        terms_label: tr(lang, "使用条款", "Terms of use").into(),
        terms_state: if accepted {
            match lang {
                Language::Zh => format!("已同意（第 {TERMS_VERSION} 版）"),
                Language::En => format!("Accepted (version {TERMS_VERSION})"),
            }
        } else {
            tr(
                lang,
                "尚未同意：同意前助手不能使用任何工具",
                "Not accepted: the assistant uses no tool until you accept",
            )
            .into()
        },
        read_terms_label: tr(lang, "阅读条款", "Read the terms").into(),
        terms: super::first_run::terms(lang),
        accept_terms: (!accepted).then(|| {
            Button::new(
                tr(lang, "同意条款", "Accept the terms").into(),
                ButtonRole::Primary,
                Action::AcceptTerms,
            )
        }),
        campus_label: tr(lang, "校园账号", "Campus account").into(),
        campus_signed_in: c.campus_session,
        campus_state: super::campus::status_words(lang, engine.campus()),
        campus_open: if c.campus_session {
            Button::new(
                tr(lang, "管理校园账号", "Manage the campus account").into(),
                ButtonRole::Normal,
                Action::Open {
                    route: Route::CampusAccount,
                },
            )
        } else {
            Button::new(
                tr(lang, "登录校园账号", "Sign in to the campus account").into(),
                ButtonRole::Primary,
                Action::Open {
                    route: Route::CampusAccount,
                },
            )
        },
        cloud_label: tr(lang, "云端处理", "Cloud processing").into(),
        cloud,
        permissions_label: tr(lang, "系统权限", "System permissions").into(),
        permissions,
    }
}

/// One provider on the model screen's list (issue 42: a model in one tap).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ProviderRow {
    pub id: String,
    pub name: String,
    pub chosen: bool,
    /// Sets the provider's address and its first suggested model.
    pub choose: Action,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ModelSettingsScreen {
    pub title: String,
    pub provider_label: String,
    /// The providers a student picks from, in the core's order ([`providers::PROVIDERS`]).
    pub providers: Vec<ProviderRow>,
    pub endpoint_label: String,
    pub endpoint: String,
    /// Whether the address is the student's to type: only for "other (your own address)" and
    /// a local model; every listed provider's is filled in.
    pub endpoint_editable: bool,
    pub model_label: String,
    pub model: String,
    /// The chosen provider's suggested models, each a tap that sets `model.name`.
    pub suggested_models: Vec<Button>,
    pub key_label: String,
    /// Whether the chosen provider's key is in the keystore; the key itself never leaves it.
    pub key_set: bool,
    pub key_state: String,
    /// Opens the page where the chosen provider hands out keys.
    pub get_key: Option<Button>,
    pub clear_key: Option<Button>,
    pub save_label: String,
    /// Sends one tiny request with what is set now.
    pub test: Button,
    /// What the last test found, for the address and model set now (a change clears it).
    pub test_result: Option<String>,
    pub test_works: bool,
    /// This month's spend in 元 with the cap (`model.monthlyCapYuan`) or that none is set.
    pub month_spend: String,
}

/// What the model screen holds between taps that no setting does: "other" chosen before its
/// address is typed, and the last test.
#[derive(Debug, Default)]
pub(super) struct ModelDraft {
    pub custom_chosen: bool,
    pub tested: Option<Tested>,
}

/// A test of the connection, and what it was of.
#[derive(Debug)]
pub(super) struct Tested {
    pub endpoint: String,
    pub model: String,
    pub outcome: Connection,
}

impl ModelDraft {
    /// The last test's outcome, when it was of the address and model set now.
    pub fn outcome(&self, engine: &Engine) -> Option<&Connection> {
        let m = engine.settings().model;
        self.tested
            .as_ref()
            .filter(|t| t.endpoint == m.endpoint && t.model == m.name)
            .map(|t| &t.outcome)
    }

    /// Whether the student may go on from the model's first-run step with "Next".
    pub fn works(&self, engine: &Engine) -> bool {
        self.outcome(engine).is_some_and(Connection::works)
    }
}

/// The provider the screen shows chosen.
fn chosen(engine: &Engine, draft: &ModelDraft) -> &'static ProviderInfo {
    let by_endpoint = providers::for_endpoint(&engine.settings().model.endpoint);
    match draft.custom_chosen {
        true => providers::PROVIDERS
            .iter()
            .find(|p| p.id == providers::CUSTOM)
            .unwrap_or(by_endpoint),
        false => by_endpoint,
    }
}

/// The name a test's words give the provider: a listed one's, else its address.
pub(super) fn provider_name(lang: Language, provider: &ProviderInfo, endpoint: &str) -> String {
    match provider.id {
        providers::CUSTOM | providers::LOCAL if !endpoint.trim().is_empty() => {
            endpoint.trim().to_owned()
        }
        _ => tr(lang, provider.name_zh, provider.name_en).to_owned(),
    }
}

pub(super) fn model(
    engine: &Engine,
    lang: Language,
    draft: &ModelDraft,
) -> Result<ModelSettingsScreen, EngineError> {
    let s = engine.settings();
    let provider = chosen(engine, draft);
    let key_set = engine.model_api_key()?.is_some();
    let outcome = draft.outcome(engine);
    let month_spend = month_spend(engine, lang, &s)?;
    Ok(ModelSettingsScreen {
        title: tr(lang, "模型", "Model").into(),
        provider_label: tr(lang, "服务商", "Provider").into(),
        providers: providers::PROVIDERS
            .iter()
            .map(|p| ProviderRow {
                id: p.id.into(),
                name: tr(lang, p.name_zh, p.name_en).into(),
                chosen: p.id == provider.id,
                choose: Action::ChooseProvider {
                    provider: p.id.into(),
                },
            })
            .collect(),
        endpoint_label: tr(lang, "接口地址", "Endpoint").into(),
        endpoint: if draft.custom_chosen {
            String::new()
        } else {
            s.model.endpoint.clone()
        },
        endpoint_editable: matches!(provider.id, providers::CUSTOM | providers::LOCAL),
        model_label: tr(lang, "模型名称", "Model name").into(),
        model: s.model.name.clone(),
        suggested_models: provider
            .models
            .iter()
            .map(|m| {
                Button::new(
                    (*m).into(),
                    ButtonRole::Normal,
                    Action::SetModelName { name: (*m).into() },
                )
            })
            .collect(),
        key_label: tr(lang, "API 密钥", "API key").into(),
        key_set,
        key_state: if key_set {
            tr(lang, "已保存在钥匙串中", "Saved in the keystore")
        } else {
            tr(lang, "未设置", "Not set")
        }
        .into(),
        get_key: provider.key_url.map(|url| {
            Button::new(
                tr(lang, "获取密钥", "Get a key").into(),
                ButtonRole::Normal,
                Action::OpenInBrowser { url: url.into() },
            )
        }),
        clear_key: key_set.then(|| {
            Button::new(
                tr(lang, "删除密钥", "Remove the key").into(),
                ButtonRole::Destructive,
                Action::ClearApiKey,
            )
        }),
        save_label: tr(lang, "保存", "Save").into(),
        test: Button::new(
            tr(lang, "测试连接", "Test connection").into(),
            ButtonRole::Primary,
            Action::TestModelConnection,
        ),
        test_result: outcome.map(|o| {
            o.words(
                lang,
                &provider_name(lang, provider, &s.model.endpoint),
                provider.key_url,
            )
        }),
        test_works: outcome.is_some_and(Connection::works),
        month_spend,
    })
}

/// "本月 3 轮 · 1.23 元（上限 30 元）": the month's spend, and the cap or where to set one.
fn month_spend(
    engine: &Engine,
    lang: Language,
    settings: &crate::settings::Settings,
) -> Result<String, EngineError> {
    let spend = engine.agent().month_spend(settings)?;
    let line = super::conversation_list::spend_line(lang, &spend);
    Ok(match (settings.model.monthly_cap_yuan, lang) {
        (Some(cap), Language::Zh) => format!("{line}（上限 {cap} 元，model.monthlyCapYuan）"),
        (Some(cap), Language::En) => format!("{line} (cap {cap} 元, model.monthlyCapYuan)"),
        (None, Language::Zh) => format!("{line}（未设上限：model.monthlyCapYuan）"),
        (None, Language::En) => format!("{line} (no cap: model.monthlyCapYuan)"),
    })
}

/// "Test connection": one tiny request with the address, model and key set now.
pub(super) async fn test(engine: &Engine) -> Result<Tested, EngineError> {
    let m = engine.settings().model;
    let key = engine.model_api_key()?.unwrap_or_default();
    let outcome = check::test(&m.endpoint, &m.name, &key, check::limits()).await;
    Ok(Tested {
        endpoint: m.endpoint,
        model: m.name,
        outcome,
    })
}
