//! The lists a student keeps an eye on: the memory inbox (pending first, approve or reject)
//! and the scheduled jobs (next run, last outcome, pause, resume, remove). What was done is
//! the 活动 screen's (`activity`).

use super::job_form::{self, JobForm};
use super::nav::Route;
use super::texts::{local_time, tr};
use super::{Action, Button, ButtonRole, EXACT_ALARM_UNSUPPORTED};
use crate::consent::PermissionState;
use crate::engine::{Engine, EngineError};
use crate::scheduler::RunOutcome;
use crate::scheduler::Task;
use crate::scheduler::notice::{Need, need_of, service_words};
use crate::settings::Language;
use crate::store::jobs::JobState;
use crate::store::memories::MemoryState;

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct MemoryRowView {
    pub id: i64,
    pub text: String,
    pub state_label: String,
    pub pending: bool,
    pub when: String,
    /// Approve and reject, for a pending memory.
    pub approve: Option<Button>,
    pub reject: Option<Button>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct MemoryInbox {
    pub title: String,
    /// Why some wait: written in a turn that read untrusted content (seed 000).
    pub explanation: String,
    pub pending_count: u32,
    /// Pending first, then the others, newest first within each.
    pub memories: Vec<MemoryRowView>,
    pub empty_label: String,
}

pub(super) fn memories(engine: &Engine, lang: Language) -> Result<MemoryInbox, EngineError> {
    let zone = engine.settings().time_zone;
    let mut rows = engine.memories()?;
    rows.sort_by_key(|m| (m.state != MemoryState::Pending, -m.created_at, -m.id));
    let memories: Vec<MemoryRowView> = rows
        .into_iter()
        .map(|m| {
            let pending = m.state == MemoryState::Pending;
            let button = |approve: bool| {
                Button::new(
                    if approve {
                        tr(lang, "保留", "Keep")
                    } else {
                        tr(lang, "丢弃", "Discard")
                    }
                    .into(),
                    if approve {
                        ButtonRole::Primary
                    } else {
                        ButtonRole::Destructive
                    },
                    Action::DecideMemory {
                        memory: m.id,
                        approve,
                    },
                )
            };
            MemoryRowView {
                id: m.id,
                text: m.text.clone(),
                state_label: match m.state {
                    MemoryState::Pending => tr(lang, "等待你确认", "Waiting for you"),
                    MemoryState::Active => tr(lang, "生效中", "In use"),
                    MemoryState::Rejected => tr(lang, "已丢弃", "Discarded"),
                }
                .into(),
                pending,
                when: local_time(&zone, m.created_at),
                approve: pending.then(|| button(true)),
                reject: pending.then(|| button(false)),
            }
        })
        .collect();
    Ok(MemoryInbox {
        title: tr(lang, "记忆", "Memory").into(),
        explanation: tr(
            lang,
            "助手在读取过不可信内容后写下的记忆，要你确认后才会使用。",
            "Memories the assistant wrote after reading untrusted content are used only once you keep them.",
        )
        .into(),
        pending_count: memories.iter().filter(|m| m.pending).count() as u32,
        memories,
        empty_label: tr(lang, "还没有记忆", "No memories yet").into(),
    })
}

/// One choice of a filter: what the filter takes (a plugin id, `user`…) and the words its
/// chip shows.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct FilterChoice {
    pub id: String,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobRow {
    pub id: i64,
    pub name: String,
    /// Its condition and schedule in a sentence: "每天 09:00 检查校园卡余额，校园卡余额低于 50
    /// 元时提醒".
    pub summary: String,
    pub state_label: String,
    pub next_run: String,
    pub last_outcome: String,
    /// Said on a check while the phone's notifications are off: its notification will not be
    /// shown; or what the job waits for the student to do (sign in again, turn its plugin on).
    pub notice: Option<String>,
    /// The tap that does what the job waits for: the campus sign-in, or the plugins.
    pub fix: Option<Button>,
    pub pause_or_resume: Option<Button>,
    pub remove: Button,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobsScreen {
    pub title: String,
    /// How the phone wakes for a job: exact alarms, or when the system lets the app run.
    pub wake_note: String,
    /// Said while the phone's notifications are not on: a job's notification would not be
    /// shown.
    pub notifications_note: Option<String>,
    /// The tap to the permissions screen, beside the note.
    pub notifications_fix: Option<Button>,
    pub jobs: Vec<JobRow>,
    pub empty_label: String,
    pub form: JobForm,
}

pub(super) fn jobs(engine: &Engine, lang: Language) -> JobsScreen {
    let zone = engine.settings().time_zone;
    let consent = engine.consent();
    let exact = consent.exact_alarm == PermissionState::Granted;
    // seed 000: the shell reports the permission; the core only says what it means here and
    // offers the tap to the screen where the student turns it on.
    let notifications_off = consent.notifications == PermissionState::Denied;
    let no_exact_alarms = consent.capabilities.contains(EXACT_ALARM_UNSUPPORTED);
    let jobs = engine
        .jobs()
        .into_iter()
        .map(|j| JobRow {
            id: j.id,
            name: j.spec.name.clone(),
            summary: job_form::summary(engine, lang, &j),
            state_label: match (j.state, &j.paused_reason) {
                (JobState::Active, _) => tr(lang, "运行中", "Active").into(),
                (JobState::Paused, Some(why)) => {
                    format!("{}{why}", tr(lang, "已暂停：", "Paused: "))
                }
                (JobState::Paused, None) => tr(lang, "已暂停", "Paused").into(),
                (JobState::Done, _) => tr(lang, "已完成", "Done").into(),
            },
            next_run: j
                .next_due_ms
                .filter(|_| j.state == JobState::Active)
                .map_or(String::new(), |at| local_time(&zone, at)),
            last_outcome: j
                .last
                .as_ref()
                .map_or(tr(lang, "尚未运行", "Not run yet").into(), |last| {
                    outcome_words(lang, &last.outcome)
                }),
            notice: need_of(&j).map(|need| need_words(lang, &need)).or_else(|| {
                (notifications_off && matches!(j.spec.task, Task::Check(_) | Task::Reminder(_)))
                    .then(|| {
                        tr(
                            lang,
                            "提醒不会显示：通知已关闭",
                            "Its notification will not be shown: notifications are off",
                        )
                        .into()
                    })
            }),
            fix: need_of(&j).map(|need| need_button(lang, &need)),
            pause_or_resume: match j.state {
                JobState::Active => Some(Button::new(
                    tr(lang, "暂停", "Pause").into(),
                    ButtonRole::Normal,
                    Action::PauseJob { job: j.id },
                )),
                JobState::Paused => Some(Button::new(
                    tr(lang, "恢复", "Resume").into(),
                    ButtonRole::Primary,
                    Action::ResumeJob { job: j.id },
                )),
                JobState::Done => None,
            },
            remove: Button::new(
                tr(lang, "删除", "Remove").into(),
                ButtonRole::Destructive,
                Action::RemoveJob { job: j.id },
            ),
        })
        .collect();
    JobsScreen {
        title: tr(lang, "定时任务", "Scheduled jobs").into(),
        wake_note: if no_exact_alarms {
            // iOS: the shell arms a local notification at the due time and asks for a
            // background refresh; due jobs run when either fires or the app is opened.
            tr(
                lang,
                "iPhone 没有精确闹钟：到点时会发一条提醒，任务在你打开提醒或应用、或系统给予后台时间时运行，可能稍晚。",
                "iPhone has no exact alarms: at the due time you get a notification, and due jobs run when you open it or the app, or when iOS gives the app background time, possibly late.",
            )
        } else if exact {
            tr(lang, "到点准时运行。", "Jobs run on time.")
        } else {
            tr(
                lang,
                "没有精确闹钟权限：任务会在系统允许时运行，可能稍晚。",
                "Without exact alarms, jobs run when the system lets the app run, possibly late.",
            )
        }
        .into(),
        notifications_note: match consent.notifications {
            PermissionState::Granted => None,
            PermissionState::Denied => Some(tr(
                lang,
                "通知已关闭：任务的提醒不会显示，也不会记为已提醒。",
                "Notifications are off: a job's notification is not shown, and is not recorded as notified.",
            )),
            PermissionState::Unknown => Some(tr(
                lang,
                "还没有允许通知：任务的提醒可能不会显示。",
                "Notifications are not allowed yet: a job's notification may not be shown.",
            )),
        }
        .map(str::to_owned),
        notifications_fix: (consent.notifications != PermissionState::Granted).then(|| {
            Button::new(
                tr(lang, "去开启通知", "Turn on notifications").into(),
                ButtonRole::Primary,
                Action::Open {
                    route: Route::Consent,
                },
            )
        }),
        jobs,
        empty_label: tr(lang, "没有定时任务", "No scheduled jobs").into(),
        form: job_form::build(engine, lang),
    }
}

/// What a job waits for, said on its card (DESIGN.md §7: a paused check says why).
fn need_words(lang: Language, need: &Need) -> String {
    match (lang, need) {
        (Language::Zh, Need::SignIn { service }) => format!(
            "{}登录已过期：重新登录后继续检查",
            service_words(lang, service)
        ),
        (Language::En, Need::SignIn { service }) => format!(
            "The {} sign-in has ended: it checks again once you sign in",
            service_words(lang, service)
        ),
        (Language::Zh, Need::Plugin { plugin }) => {
            format!("插件「{plugin}」关闭了或不让它在无人时读取：在插件设置里打开，再恢复")
        }
        (Language::En, Need::Plugin { plugin }) => format!(
            "The plugin “{plugin}” is off or may not read while nobody is there: turn it on in its settings, then resume"
        ),
    }
}

fn need_button(lang: Language, need: &Need) -> Button {
    let (label, route) = match need {
        Need::SignIn { .. } => (tr(lang, "重新登录", "Sign in again"), Route::CampusAccount),
        Need::Plugin { .. } => (
            tr(lang, "打开插件设置", "Open plugin settings"),
            Route::Plugins,
        ),
    };
    Button::new(label.into(), ButtonRole::Primary, Action::Open { route })
}

fn outcome_words(lang: Language, outcome: &RunOutcome) -> String {
    match outcome {
        RunOutcome::Notified { .. } => tr(lang, "已提醒", "Notified").into(),
        RunOutcome::NotShown { .. } => tr(
            lang,
            "条件满足，但没有显示提醒：通知已关闭",
            "Condition met, but the notification was not shown: notifications are off",
        )
        .into(),
        RunOutcome::Quiet => tr(
            lang,
            "条件未满足，未提醒",
            "Condition not met; no notification",
        )
        .into(),
        RunOutcome::Refused { message, .. } => {
            format!("{}{message}", tr(lang, "未运行：", "Not run: "))
        }
        RunOutcome::Failed { message } | RunOutcome::ConditionError { message } => {
            format!("{}{message}", tr(lang, "失败：", "Failed: "))
        }
        RunOutcome::AgentRan {
            reply,
            not_shown: Some(_),
            ..
        } => format!(
            "{reply}{}",
            tr(
                lang,
                "（没有显示提醒：通知已关闭）",
                " (the notification was not shown: notifications are off)"
            )
        ),
        RunOutcome::AgentRan { reply, .. } => reply.clone(),
        RunOutcome::SignInRequired { service } => match lang {
            Language::Zh => format!("未检查：{}登录已过期", service_words(lang, service)),
            Language::En => format!(
                "Not checked: the {} sign-in has ended",
                service_words(lang, service)
            ),
        },
        RunOutcome::Interrupted => tr(lang, "被中断", "Interrupted").into(),
    }
}
