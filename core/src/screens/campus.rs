//! The campus account's screens (DESIGN.md §10): signing in with the student's PKU account —
//! student id and password, then the second factor IAAA asks for on the same screen — the
//! sessions it holds and signing out; and the second checks a service asks after it (Treehole's
//! SMS check, the course API's authorization for grades), hands-on steps the agent can only
//! open. The password is typed into the shell's secure field and handed to the core
//! in the tap's action; it is never part of a screen.

use super::texts::{local_time, tr};
use serde_json::Value;

use super::{Action, Button, ButtonRole, LabelValue, Route};
use crate::campus::wire::Service;
use crate::campus::{Campus, CampusError, Failure, SecondFactor};
use crate::engine::{Engine, EngineError};
use crate::settings::Language;

/// IAAA lets a new SMS code be sent this long after the last (SERVICES.md §1).
pub const RESEND_AFTER_MS: i64 = 60_000;

/// The campus account: the sign-in form, the code IAAA waits for, or the account signed in.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CampusAccountScreen {
    pub title: String,
    /// What signing in does and where the password goes.
    pub explanation: String,
    /// The student id and password form, when nothing is signed in or waiting.
    pub form: Option<SignInForm>,
    /// The second factor, while IAAA waits for it.
    pub code: Option<CodeStep>,
    /// IAAA's captcha picture, while IAAA waits for its characters.
    pub captcha: Option<CaptchaStep>,
    /// The account signed in: the student id, each service and until when.
    pub signed_in: Option<SignedIn>,
}

/// The form the shell renders; its button's action is `Action::CampusSignIn` with what the
/// student typed (the password in a secure field).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct SignInForm {
    pub student_id_label: String,
    pub password_label: String,
    pub remember_label: String,
    /// Why one would tick it, and what it keeps where.
    pub remember_hint: String,
    pub submit_label: String,
}

/// The code step; its button's action is `Action::CampusSubmitCode` with the code typed (the
/// field carries the platform's one-time-code autofill hint).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CodeStep {
    /// The student id the code is for.
    pub account: String,
    /// "Enter the code sent to 138****5678" or the authenticator's words.
    pub prompt: String,
    pub code_label: String,
    pub submit_label: String,
    /// Sends a new SMS code; none for an authenticator code, or until 60 s have passed.
    pub resend: Option<Button>,
    /// "A new code can be sent in 42 s", while the resend waits.
    pub resend_wait: Option<String>,
    pub cancel: Button,
}

/// IAAA's captcha (SERVICES.md §6.1); its button's action is `Action::CampusSubmitCaptcha`
/// with the characters typed in the `randCode` field.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CaptchaStep {
    /// The student id signing in.
    pub account: String,
    pub prompt: String,
    /// The picture (a JPEG as IAAA drew it); none when its header says a size no phone should
    /// decode, and `prompt` says so.
    pub image: Option<Vec<u8>>,
    pub code_label: String,
    pub submit_label: String,
    /// Draws a new picture (`Action::CampusRefreshCaptcha`).
    pub refresh: Button,
    pub cancel: Button,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct SignedIn {
    pub account_label: String,
    pub account: String,
    /// Each service and where it stands: signed in (until when, when known), or what failed.
    pub services: Vec<LabelValue>,
    /// Signs in again only the services that failed (`Action::CampusRetry`), while some did.
    pub retry: Option<Button>,
    pub sign_out: Button,
}

/// A second check a campus service asks after the sign-in (DESIGN.md §10), named by the
/// `check` of its `verification_required` status; each is answered on its own screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum CampusCheck {
    /// Treehole's own SMS check (SERVICES.md §3); its status names no check.
    Treehole,
    /// The course API's authorization that reading grades needs (SERVICES.md §9, 40077).
    Grades,
}

impl CampusCheck {
    /// The check a `verification_required` status asks for: the one its `check` names,
    /// Treehole's when it names none (DESIGN.md §10); none for any other result, or a check
    /// the app has no screen for.
    pub fn asked_by(result: &Value) -> Option<Self> {
        if result["status"] != "verification_required" {
            return None;
        }
        match result.get("check").map(Value::as_str) {
            None | Some(Some("treehole")) => Some(Self::Treehole),
            Some(Some("grades")) => Some(Self::Grades),
            Some(_) => None,
        }
    }

    /// The screen that answers it.
    pub fn route(self) -> Route {
        match self {
            Self::Treehole => Route::TreeholeCheck,
            Self::Grades => Route::GradesCheck,
        }
    }
}

/// A campus check's screen: send the SMS code, then type it, or type the authenticator's
/// (手机令牌) code instead (DESIGN.md §10: `methods: ["sms", "otp"]`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CampusCheckScreen {
    /// The check this screen answers: the shell puts it in the actions it makes from what the
    /// student typed.
    pub check: CampusCheck,
    pub title: String,
    pub explanation: String,
    pub send: Button,
    pub code_label: String,
    /// Its action is `Action::CampusCheckVerify` with the check and the code typed.
    pub submit_label: String,
    /// Confirms the code typed as the authenticator's (手机令牌) instead: its action is
    /// `Action::CampusCheckVerifyOtp` with the check and the code typed.
    pub otp_submit_label: String,
}

pub(super) fn account(engine: &Engine, lang: Language) -> Result<CampusAccountScreen, EngineError> {
    let campus = engine.campus();
    let status = campus.status().map_err(|e| words(lang, &e))?;
    let explanation = tr(
        lang,
        "用北京大学统一身份认证（IAAA）登录后，插件才能替你查询校园卡、门户和树洞。密码加密后只发给 IAAA，不会交给任何插件。",
        "Sign in with your PKU account (IAAA) so plugins can reach the campus card, the portal and Treehole for you. Your password is encrypted and sent only to IAAA; no plugin ever sees it.",
    )
    .to_owned();
    let title = tr(lang, "校园账号", "Campus account").to_owned();
    if let Some((account, image)) = campus.captcha() {
        return Ok(CampusAccountScreen {
            title,
            explanation,
            form: None,
            code: None,
            captcha: Some(captcha_step(lang, account, image)),
            signed_in: None,
        });
    }
    if let Some((account, factor, sent)) = campus.waiting_for() {
        return Ok(CampusAccountScreen {
            title,
            explanation,
            form: None,
            code: Some(code_step(engine, lang, account, factor, sent)),
            captcha: None,
            signed_in: None,
        });
    }
    if status.signed_in() || !status.failed.is_empty() {
        let zone = engine.settings().time_zone;
        let signed = status.services.iter().map(|(service, until)| LabelValue {
            label: service_words(lang, *service).to_owned(),
            value: match until {
                Some(ms) => match lang {
                    Language::Zh => format!("已登录，至 {}", local_time(&zone, *ms)),
                    Language::En => format!("Signed in until {}", local_time(&zone, *ms)),
                },
                None => tr(lang, "已登录", "Signed in").to_owned(),
            },
        });
        let failed = status.failed.iter().map(|failure| LabelValue {
            label: service_words(lang, failure.service).to_owned(),
            value: failure_words(lang, failure),
        });
        let mut services: Vec<LabelValue> = signed.chain(failed).collect();
        // The services in one order whatever stands: portal, card, Treehole.
        services.sort_by_key(|line| {
            Service::ALL
                .iter()
                .position(|s| service_words(lang, *s) == line.label)
        });
        let retry = (!status.failed.is_empty()).then(|| {
            Button::new(
                tr(lang, "重试未登录的服务", "Retry the services not signed in").into(),
                ButtonRole::Primary,
                Action::CampusRetry,
            )
        });
        return Ok(CampusAccountScreen {
            title,
            explanation,
            form: None,
            code: None,
            captcha: None,
            signed_in: Some(SignedIn {
                account_label: tr(lang, "学号", "Student id").into(),
                account: status.account.unwrap_or_default(),
                services,
                retry,
                sign_out: Button::new(
                    tr(lang, "退出登录", "Sign out").into(),
                    ButtonRole::Destructive,
                    Action::CampusSignOut,
                ),
            }),
        });
    }
    Ok(CampusAccountScreen {
        title,
        explanation,
        form: Some(SignInForm {
            student_id_label: tr(lang, "学号", "Student id").into(),
            password_label: tr(lang, "密码", "Password").into(),
            remember_label: tr(lang, "在这台手机上记住密码", "Remember my password on this phone")
                .into(),
            remember_hint: tr(
                lang,
                "密码只存在手机的钥匙串里，登录过期时用来自动重新登录。",
                "Kept only in this phone's keystore, to sign in again by itself when a session ends.",
            )
            .into(),
            submit_label: tr(lang, "登录", "Sign in").into(),
        }),
        code: None,
        captcha: None,
        signed_in: None,
    })
}

fn captcha_step(lang: Language, account: String, image: Vec<u8>) -> CaptchaStep {
    let drawable = super::media::drawable(&image);
    let prompt = match drawable {
        true => tr(
            lang,
            "统一身份认证要求输入图片验证码：请输入图片上的字符",
            "IAAA asks for its captcha: type the characters in the picture",
        ),
        false => tr(
            lang,
            "统一身份认证发来的验证码图片无法显示：请换一张",
            "IAAA's captcha picture cannot be shown: get a new one",
        ),
    };
    CaptchaStep {
        account,
        prompt: prompt.into(),
        image: drawable.then_some(image),
        code_label: tr(lang, "图片验证码", "Captcha").into(),
        submit_label: tr(lang, "确认", "Confirm").into(),
        refresh: Button::new(
            tr(lang, "换一张", "New picture").into(),
            ButtonRole::Normal,
            Action::CampusRefreshCaptcha,
        ),
        cancel: Button::new(
            tr(lang, "返回", "Back").into(),
            ButtonRole::Normal,
            Action::CampusCancelSignIn,
        ),
    }
}

fn code_step(
    engine: &Engine,
    lang: Language,
    account: String,
    factor: SecondFactor,
    sent: Option<i64>,
) -> CodeStep {
    let (prompt, resend, resend_wait) = match factor {
        SecondFactor::Sms { mobile_mask } => {
            let waited = sent.map_or(RESEND_AFTER_MS, |at| engine.now_ms() - at);
            let left_s = (RESEND_AFTER_MS - waited + 999) / 1000;
            let prompt = match lang {
                Language::Zh => format!("请输入发送到 {mobile_mask} 的短信验证码"),
                Language::En => format!("Enter the SMS code sent to {mobile_mask}"),
            };
            if left_s > 0 {
                let wait = match lang {
                    Language::Zh => format!("{left_s} 秒后可以重新发送"),
                    Language::En => format!("A new code can be sent in {left_s} s"),
                };
                (prompt, None, Some(wait))
            } else {
                let resend = Button::new(
                    tr(lang, "重新发送验证码", "Send a new code").into(),
                    ButtonRole::Normal,
                    Action::CampusResendCode,
                );
                (prompt, Some(resend), None)
            }
        }
        SecondFactor::Otp => (
            tr(
                lang,
                "请输入手机令牌（北大身份认证应用）上的 6 位动态码",
                "Enter the 6-digit code of your authenticator (手机令牌)",
            )
            .to_owned(),
            None,
            None,
        ),
    };
    CodeStep {
        account,
        prompt,
        code_label: tr(lang, "验证码", "Code").into(),
        submit_label: tr(lang, "确认", "Confirm").into(),
        resend,
        resend_wait,
        cancel: Button::new(
            tr(lang, "返回", "Back").into(),
            ButtonRole::Normal,
            Action::CampusCancelSignIn,
        ),
    }
}

pub(super) fn check(lang: Language, check: CampusCheck) -> CampusCheckScreen {
    let (title, explanation) = match check {
        CampusCheck::Treehole => (
            tr(lang, "树洞短信验证", "Treehole SMS check"),
            tr(
                lang,
                "树洞要求定期验证（大约每 30 天一次）：发送短信验证码，收到后填在下面；或者填手机令牌上的 6 位动态码。",
                "Treehole asks you to confirm it is you now and then (about every 30 days): send the SMS code and enter it below, or enter the 6-digit code of your authenticator (手机令牌).",
            ),
        ),
        CampusCheck::Grades => (
            tr(lang, "成绩查询授权", "Grades authorization"),
            tr(
                lang,
                "查看成绩前，课程系统要求先完成授权（获取授权码）：发送短信验证码，收到后填在下面；或者填手机令牌上的 6 位动态码。",
                "Before your grades can be read, the course system asks for its authorization (获取授权码): send the SMS code and enter it below, or enter the 6-digit code of your authenticator (手机令牌).",
            ),
        ),
    };
    CampusCheckScreen {
        check,
        title: title.into(),
        explanation: explanation.into(),
        send: Button::new(
            tr(lang, "发送验证码", "Send the code").into(),
            ButtonRole::Primary,
            Action::CampusCheckSendCode { check },
        ),
        code_label: tr(lang, "验证码", "Code").into(),
        submit_label: tr(lang, "确认", "Confirm").into(),
        otp_submit_label: tr(
            lang,
            "用手机令牌的动态码确认",
            "Confirm with my authenticator's (手机令牌) code",
        )
        .into(),
    }
}

/// Sends `check`'s SMS code.
pub(super) async fn send_check_code(
    campus: &Campus,
    check: CampusCheck,
) -> Result<(), CampusError> {
    match check {
        CampusCheck::Treehole => campus.treehole_send_code().await,
        CampusCheck::Grades => campus.grades_send_code().await,
    }
}

/// Answers `check` with the code typed: the SMS code, or with `otp` the authenticator's.
pub(super) async fn verify_check(
    campus: &Campus,
    check: CampusCheck,
    code: &str,
    otp: bool,
) -> Result<(), CampusError> {
    match (check, otp) {
        (CampusCheck::Treehole, false) => campus.treehole_verify(code).await,
        (CampusCheck::Treehole, true) => campus.treehole_verify_otp(code).await,
        (CampusCheck::Grades, false) => campus.grades_verify(code).await,
        (CampusCheck::Grades, true) => campus.grades_verify_otp(code).await,
    }
}

/// What failed of a service's sign-in, in the student's language: "Not signed in: …" and the
/// reason, which names the service when it is the service's own.
fn failure_words(lang: Language, failure: &Failure) -> String {
    let reason = match (&failure.error, lang) {
        (CampusError::TimedOut(s), Language::Zh) => format!(
            "{} {s} 秒内没有回答，请稍后重试",
            service_words(lang, failure.service)
        ),
        (CampusError::TimedOut(s), Language::En) => format!(
            "{} did not answer within {s} s; retry later",
            service_words(lang, failure.service)
        ),
        (CampusError::Unreachable(_) | CampusError::Chain(_), Language::Zh) => format!(
            "{}暂时无法登录（可能在维护），请稍后重试",
            service_words(lang, failure.service)
        ),
        (error, _) => match words(lang, error) {
            EngineError::Invalid(reason) => reason,
            other => other.to_string(),
        },
    };
    match lang {
        Language::Zh => format!("未登录：{reason}"),
        Language::En => format!("Not signed in: {reason}"),
    }
}

pub(super) fn service_words(lang: Language, service: Service) -> &'static str {
    match service {
        Service::Portal => tr(lang, "校内门户", "Campus portal"),
        Service::Card => tr(lang, "校园卡", "Campus card"),
        Service::Treehole => tr(lang, "树洞", "Treehole"),
        Service::Bus => tr(lang, "班车", "Shuttle bus"),
        Service::Course => tr(lang, "教学网", "Course website"),
    }
}

/// A campus failure in the student's words, in their language (IAAA's E-codes included).
pub(super) fn words(lang: Language, error: &CampusError) -> EngineError {
    let zh = match error {
        CampusError::Iaaa { code, .. } => match code.as_str() {
            "E01" => Some("学号或密码不正确".to_owned()),
            "E02" => Some("账号需要先激活：请先在门户网页上激活".to_owned()),
            "E03" => Some(CAPTCHA_ZH.to_owned()),
            "E04" => Some("短信验证码不正确或已过期：请重新发送".to_owned()),
            "E05" => Some("手机令牌动态码不正确或未填写".to_owned()),
            "E07" => Some("统一身份认证暂时无法核对账号，请稍后再试".to_owned()),
            "E21" => Some("统一身份认证不允许这个账号在这里登录".to_owned()),
            _ => None,
        }
        .map(|said| format!("{said}（{code}）")),
        CampusError::Captcha => Some(CAPTCHA_ZH.to_owned()),
        CampusError::Unreachable(_) => Some("连不上校园服务，请检查网络后再试".to_owned()),
        CampusError::TimedOut(s) => Some(format!("校园服务 {s} 秒内没有回答，请稍后再试")),
        CampusError::NoPendingSignIn => Some("没有等待验证码的登录，请重新登录".to_owned()),
        CampusError::TooSoon(s) => Some(format!("验证码 {s} 秒前刚发送，60 秒后才能重新发送")),
        CampusError::NotSignedIn => Some("还没有登录校园账号".to_owned()),
        CampusError::Keystore(_) => Some("手机的钥匙串出错，没有登录任何服务".to_owned()),
        CampusError::NoRetry => Some("没有可以重试的登录，请重新登录".to_owned()),
        CampusError::CaptchaWrong => Some("图片验证码不正确，请输入新图片上的字符".to_owned()),
        CampusError::CardNeedsPortal => {
            Some("校园卡要经由校内门户登录，门户还没有登录：请重试".to_owned())
        }
        CampusError::Chain(_) | CampusError::Treehole(_) => None,
    };
    let message = match (lang, zh) {
        (Language::Zh, Some(zh)) => zh,
        _ => error.to_string(),
    };
    EngineError::Invalid(message)
}

const CAPTCHA_ZH: &str = "统一身份认证要求输入图片验证码：请在校园账号页面登录，按图片输入";

/// Whether `campus` holds every service's session: the consent screen's line.
pub(super) fn status_words(lang: Language, campus: &Campus) -> String {
    match campus.status() {
        Ok(status) if status.signed_in() => match lang {
            Language::Zh => format!("已登录：{}", status.account.unwrap_or_default()),
            Language::En => format!("Signed in as {}", status.account.unwrap_or_default()),
        },
        _ => tr(lang, "未登录", "Not signed in").into(),
    }
}
