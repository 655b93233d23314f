//! What a job tells the student when it cannot go on without them: a check whose read met an
//! ended campus sign-in (DESIGN.md §10), or a job paused after [`PAUSE_AFTER_REFUSALS`]
//! refusals in a row. Each is said once, as a notification with the words of why and the tap
//! that fixes it ([`Need`]); the jobs screen shows the same need on the job's card.

use super::run::RunOutcome;
use super::{Job, JobState, PAUSE_AFTER_REFUSALS, Task};
use crate::policy::Code;
use crate::settings::Language;

use super::spec::Notification;

/// What the student does for a job to go on, as the tap that does it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Need {
    /// Sign in to a campus service again (`card`, `portal`, `treehole`).
    SignIn { service: String },
    /// Turn the plugin on, or let its reads run unattended, in its settings.
    Plugin { plugin: String },
}

/// The need a job shows now: a check whose last read met an ended sign-in, or a job paused by
/// refusals that a plugin's settings can lift.
pub fn need_of(job: &Job) -> Option<Need> {
    let last = &job.last.as_ref()?.outcome;
    match (job.state, last) {
        (JobState::Active, RunOutcome::SignInRequired { service }) => Some(Need::SignIn {
            service: service.clone(),
        }),
        (JobState::Paused, outcome) if job.paused_reason.as_deref().is_some_and(by_refusals) => {
            plugin_need(job, outcome)
        }
        _ => None,
    }
}

/// Whether a pause was the scheduler's, after refusals (not the student's own pause).
fn by_refusals(reason: &str) -> bool {
    reason.starts_with(&format!("paused after {PAUSE_AFTER_REFUSALS} refusals"))
}

/// A refusal the plugin's settings lift: the plugin is off or unavailable, or its mode or a
/// rule keeps the read from running unattended.
fn plugin_need(job: &Job, outcome: &RunOutcome) -> Option<Need> {
    let code = match outcome {
        RunOutcome::Refused { code, .. } => Code::parse(code)?,
        _ => return None,
    };
    let plugin = match &job.spec.task {
        Task::Check(check) => check.tool.split_once('.').map(|(p, _)| p.to_owned())?,
        _ => return None,
    };
    matches!(
        code,
        Code::Unavailable | Code::Blocked | Code::Declined | Code::DeniedByRule
    )
    .then_some(Need::Plugin { plugin })
}

/// The notification a run posts besides its own, once: when it met an ended sign-in after a
/// run that did not, or when it paused the job.
pub(super) fn notice(
    lang: Language,
    job: &Job,
    before: Option<&RunOutcome>,
    paused: bool,
) -> Option<Notification> {
    let name = &job.spec.name;
    let last = &job.last.as_ref()?.outcome;
    if let RunOutcome::SignInRequired { service } = last {
        if before == Some(last) {
            return None;
        }
        let what = service_words(lang, service);
        return Some(Notification {
            title: match lang {
                Language::Zh => format!("{what}登录已过期，点此重新登录"),
                Language::En => format!("The {what} sign-in has ended: tap to sign in again"),
            },
            body: match lang {
                Language::Zh => format!("定时任务「{name}」在你重新登录后才能继续检查。"),
                Language::En => format!("The job “{name}” checks again once you sign in."),
            },
        });
    }
    if !paused {
        return None;
    }
    let why = match plugin_need(job, last) {
        Some(Need::Plugin { plugin }) => match (lang, last) {
            (Language::Zh, RunOutcome::Refused { code, .. }) if code == "unavailable" => {
                format!("插件「{plugin}」已关闭或不可用。点此打开它，再恢复任务。")
            }
            (Language::En, RunOutcome::Refused { code, .. }) if code == "unavailable" => {
                format!(
                    "The plugin “{plugin}” is off or unavailable. Tap to turn it on, then resume the job."
                )
            }
            (Language::Zh, _) => {
                format!("插件「{plugin}」的助手权限不让它在无人时读取。点此修改，再恢复任务。")
            }
            (Language::En, _) => format!(
                "The plugin “{plugin}”'s AI permissions keep it from reading while nobody is there. Tap to change them, then resume the job."
            ),
        },
        _ => match lang {
            Language::Zh => {
                format!("连续 {PAUSE_AFTER_REFUSALS} 次没有运行。点此查看原因。")
            }
            Language::En => {
                format!("It was not run {PAUSE_AFTER_REFUSALS} times in a row. Tap to see why.")
            }
        },
    };
    Some(Notification {
        title: match lang {
            Language::Zh => format!("定时任务「{name}」已暂停"),
            Language::En => format!("The job “{name}” is paused"),
        },
        body: why,
    })
}

/// A campus service as the student knows it.
pub fn service_words(lang: Language, service: &str) -> &'static str {
    match (lang, service) {
        (Language::Zh, "card") => "校园卡",
        (Language::En, "card") => "campus card",
        (Language::Zh, "portal") => "校园门户",
        (Language::En, "portal") => "campus portal",
        (Language::Zh, "treehole") => "树洞",
        (Language::En, "treehole") => "Treehole",
        (Language::Zh, "bus") => "班车",
        (Language::En, "bus") => "shuttle bus",
        (Language::Zh, "course") => "教学网",
        (Language::En, "course") => "course website",
        (Language::Zh, _) => "校园账号",
        (Language::En, _) => "campus account",
    }
}
