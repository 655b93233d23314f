//! The first run (seed 000: the terms are accepted "during first-run setup"; DESIGN.md §4: shown
//! in full before they are accepted): the terms, then the model, the campus sign-in and the
//! notification permission. The core says which step is next; the shell shows it over the app
//! until there is none, with the model's and the campus account's own screens inside their
//! steps. Each step after the terms may be skipped, and each is reachable again from the
//! settings (the model, the campus account, the permissions).

use super::texts::tr;
use super::{Action, Button, ButtonRole};
use crate::consent::{Permission, PermissionState, SetupStep, TERMS_VERSION};
use crate::engine::{Engine, EngineError};
use crate::settings::Language;

/// The terms' full text, of version [`TERMS_VERSION`], in the app's two languages: paragraphs
/// parted by a blank line.
const TERMS_ZH: &str = include_str!("terms/v2.zh.txt");
const TERMS_EN: &str = include_str!("terms/v2.en.txt");

/// The step the first run is at, or none once it is over.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct FirstRunScreen {
    pub page: Option<FirstRunPage>,
}

/// One step: what it is for, and its taps. For `Model` and `Campus` the shell shows that
/// screen's own model (model settings, the campus account) between the words and the taps.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct FirstRunPage {
    pub step: SetupStep,
    /// "第 1 步，共 4 步" / "Step 1 of 4".
    pub progress: String,
    pub title: String,
    pub explanation: String,
    /// The terms' full text, paragraph by paragraph, on the terms' step only (empty on the
    /// others).
    pub terms: Vec<String>,
    /// Accept the terms; go on from the model or the campus account (done: "Next", else
    /// "Skip for now"); or allow notifications (the system's prompt follows this tap alone,
    /// seed 000).
    pub next: Button,
    /// Leave the notifications for later.
    pub skip: Option<Button>,
}

/// `model_works`: whether the model screen's last test, of the address and model set now,
/// was answered (issue 42: "Next" needs a connection that worked, else the tap says "later").
pub(super) fn build(
    engine: &Engine,
    lang: Language,
    model_works: bool,
) -> Result<FirstRunScreen, EngineError> {
    let consent = engine.consent();
    // The terms end with their acceptance and the notifications with the system's answer; the
    // model and the campus account with the student's "Next" (or "Skip"), so that a key saved
    // or a sign-in done inside the step does not take the step away under their finger.
    let over = |step: SetupStep| match step {
        SetupStep::Terms => consent.terms_accepted(),
        SetupStep::Notifications => consent.notifications != PermissionState::Unknown,
        SetupStep::Model | SetupStep::Campus => false,
    };
    let Some((index, step)) = SetupStep::ALL
        .into_iter()
        .enumerate()
        .find(|&(_, s)| !over(s) && !consent.setup_passed.contains(&s))
    else {
        return Ok(FirstRunScreen { page: None });
    };
    let progress = match lang {
        Language::Zh => format!("第 {} 步，共 {} 步", index + 1, SetupStep::ALL.len()),
        Language::En => format!("Step {} of {}", index + 1, SetupStep::ALL.len()),
    };
    let pass =
        |label: &'static str, role| Button::new(label.into(), role, Action::PassSetupStep { step });
    // "Next" once the step's thing is done, else the same tap says it leaves it for later.
    let go_on = |done: bool| match done {
        true => pass(tr(lang, "下一步", "Next"), ButtonRole::Primary),
        false => pass(
            tr(lang, "跳过，以后再设置", "Skip for now"),
            ButtonRole::Normal,
        ),
    };
    let page = match step {
        SetupStep::Terms => FirstRunPage {
            step,
            progress,
            title: tr(lang, "用户协议", "Terms of use").into(),
            explanation: match lang {
                Language::Zh => format!(
                    "请读完第 {TERMS_VERSION} 版用户协议。同意之前，助手什么也不会做。"
                ),
                Language::En => format!(
                    "Read version {TERMS_VERSION} of the terms. Until you accept them, the assistant does nothing."
                ),
            },
            terms: terms(lang),
            next: Button::new(
                tr(lang, "同意并继续", "Accept and continue").into(),
                ButtonRole::Primary,
                Action::AcceptTerms,
            ),
            skip: None,
        },
        SetupStep::Model => FirstRunPage {
            step,
            progress,
            title: tr(lang, "选择模型", "Choose the model").into(),
            explanation: tr(
                lang,
                "助手用你选择的模型服务来理解你的话。选一个服务商，粘贴它给你的 API 密钥，再点「测试连接」；密钥只保存在手机的钥匙串里。",
                "The assistant understands you through the model service you choose. Pick a provider, paste the API key it gave you, then tap \"Test connection\"; the key is kept in the phone's keystore only.",
            )
            .into(),
            terms: Vec::new(),
            next: go_on(model_works),
            skip: None,
        },
        SetupStep::Campus => FirstRunPage {
            step,
            progress,
            title: tr(lang, "登录校园账号", "Sign in to the campus account").into(),
            explanation: tr(
                lang,
                "校园卡、通知和树洞需要你的校园账号。密码直接发给学校的统一身份认证，只保存在手机的钥匙串里。",
                "The campus card, the notices and Treehole need your campus account. The password goes straight to the university's sign-in and is kept in the phone's keystore only.",
            )
            .into(),
            terms: Vec::new(),
            next: go_on(consent.campus_session),
            skip: None,
        },
        SetupStep::Notifications => FirstRunPage {
            step,
            progress,
            title: tr(lang, "通知", "Notifications").into(),
            explanation: tr(
                lang,
                "定时任务（例如余额不足提醒）通过通知告诉你它发现了什么。点「允许通知」后，系统会询问你。",
                "Scheduled jobs (such as a low-balance reminder) tell you what they found by a notification. Tap \"Allow notifications\" and the system asks you.",
            )
            .into(),
            terms: Vec::new(),
            next: Button::new(
                tr(lang, "允许通知", "Allow notifications").into(),
                ButtonRole::Primary,
                Action::RequestPermission {
                    permission: Permission::Notifications,
                },
            ),
            skip: Some(pass(tr(lang, "以后再说", "Not now"), ButtonRole::Normal)),
        },
    };
    Ok(FirstRunScreen { page: Some(page) })
}

/// The terms the student agrees to, paragraph by paragraph, in their language: on the first
/// run's page, and to read again from the consent screen.
pub(super) fn terms(lang: Language) -> Vec<String> {
    tr(lang, TERMS_ZH, TERMS_EN)
        .split("\n\n")
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}
