//! The jobs screen's "new job" form: what to check (a data source of an installed, available
//! plugin, shown by its title), when (a few plain choices, written as the scheduler's own
//! schedule), the condition (a result field, a comparison, a value) and the notification's
//! words. A submitted draft is turned into a job spec and added through the scheduler, so it
//! is checked by exactly the scheduler's checks; a refusal writes nothing and names the form's
//! field to change, in the student's language.

use serde_json::{Value, json};

use super::texts::{title, tr};
use crate::engine::{Engine, EngineError};
use crate::scheduler::{Owner, SchedulerError};
use crate::settings::Language;

/// One thing a job can check: a data source, by its title. `plugin` and `source` are what the
/// draft carries back.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobSourceOption {
    pub title: String,
    pub plugin: String,
    pub source: String,
    /// The result's fields a condition can compare, as the last read had them (none before
    /// the first read).
    pub fields: Vec<String>,
}

/// When a new job runs, as the form offers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum JobScheduleKind {
    /// Every day at a time of day, "HH:mm".
    DailyAt,
    /// Every N hours.
    EveryHours,
    /// Once, at a local time "YYYY-MM-DD HH:mm".
    Once,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobScheduleOption {
    pub kind: JobScheduleKind,
    pub label: String,
    /// What to type, e.g. "08:00".
    pub value_hint: String,
}

/// How the result's field is compared with the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum JobComparison {
    Below,
    AtMost,
    Above,
    AtLeast,
    Equals,
    Contains,
    /// No condition: notify after every run.
    EveryRun,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobComparisonOption {
    pub comparison: JobComparison,
    pub label: String,
}

/// The form's words and choices; the first of each list is the one chosen at first.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobForm {
    pub title: String,
    pub name_label: String,
    pub source_label: String,
    pub sources: Vec<JobSourceOption>,
    /// Said instead of the form when no installed, available plugin offers anything to check.
    pub no_sources_label: String,
    pub schedule_label: String,
    pub schedules: Vec<JobScheduleOption>,
    pub field_label: String,
    pub comparison_label: String,
    pub comparisons: Vec<JobComparisonOption>,
    pub value_label: String,
    pub notify_title_label: String,
    pub notify_body_label: String,
    pub submit_label: String,
}

/// What the student chose and typed, as `Action::AddJob` carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobDraft {
    pub name: String,
    pub plugin: String,
    pub source: String,
    pub schedule: JobScheduleKind,
    pub schedule_value: String,
    pub field: String,
    pub comparison: JobComparison,
    pub value: String,
    pub notify_title: String,
    pub notify_body: String,
}

pub(super) fn build(engine: &Engine, lang: Language) -> JobForm {
    let available: Vec<String> = engine
        .plugins()
        .into_iter()
        .filter(|v| v.enabled && v.unmet.is_none())
        .map(|v| v.plugin.id.clone())
        .collect();
    let sources = engine
        .data_sources()
        .into_iter()
        .filter(|s| available.contains(&s.plugin))
        .map(|s| {
            let tool = engine.tool(&s.tool);
            let en = tool.as_ref().and_then(|t| t.title_en.clone());
            JobSourceOption {
                title: title(lang, &s.title, en.as_deref()),
                fields: engine
                    .last_tool_data(&s.plugin, &s.key)
                    .as_ref()
                    .and_then(Value::as_object)
                    .map(|o| {
                        o.iter()
                            .filter(|(_, v)| v.is_number() || v.is_string() || v.is_boolean())
                            .map(|(k, _)| k.clone())
                            .collect()
                    })
                    .unwrap_or_default(),
                plugin: s.plugin,
                source: s.key,
            }
        })
        .collect();
    let schedule = |kind| JobScheduleOption {
        kind,
        label: schedule_label(lang, kind).into(),
        value_hint: match kind {
            JobScheduleKind::DailyAt => "08:00",
            JobScheduleKind::EveryHours => "6",
            JobScheduleKind::Once => "2026-12-24 18:00",
        }
        .into(),
    };
    let comparison = |comparison| JobComparisonOption {
        comparison,
        label: comparison_label(lang, comparison).into(),
    };
    JobForm {
        title: tr(lang, "新建定时任务", "New job").into(),
        name_label: tr(lang, "名称", "Name").into(),
        source_label: tr(lang, "检查什么", "What to check").into(),
        sources,
        no_sources_label: tr(
            lang,
            "已安装的插件里没有可以定时检查的数据",
            "No installed plugin offers anything to check on a schedule",
        )
        .into(),
        schedule_label: tr(lang, "什么时候", "When").into(),
        schedules: [
            JobScheduleKind::DailyAt,
            JobScheduleKind::EveryHours,
            JobScheduleKind::Once,
        ]
        .map(schedule)
        .to_vec(),
        field_label: tr(lang, "结果里的字段", "Field of the result").into(),
        comparison_label: tr(lang, "条件", "Condition").into(),
        comparisons: [
            JobComparison::Below,
            JobComparison::AtMost,
            JobComparison::Above,
            JobComparison::AtLeast,
            JobComparison::Equals,
            JobComparison::Contains,
            JobComparison::EveryRun,
        ]
        .map(comparison)
        .to_vec(),
        value_label: tr(lang, "值", "Value").into(),
        notify_title_label: tr(lang, "提醒标题", "Notification title").into(),
        notify_body_label: tr(lang, "提醒内容", "Notification text").into(),
        submit_label: tr(lang, "添加任务", "Add job").into(),
    }
}

fn schedule_label(lang: Language, kind: JobScheduleKind) -> &'static str {
    match kind {
        JobScheduleKind::DailyAt => tr(lang, "每天的某个时刻", "Every day at"),
        JobScheduleKind::EveryHours => tr(lang, "每隔几小时", "Every few hours"),
        JobScheduleKind::Once => tr(lang, "只一次", "Once, at"),
    }
}

fn comparison_label(lang: Language, comparison: JobComparison) -> &'static str {
    match comparison {
        JobComparison::Below => tr(lang, "低于", "is below"),
        JobComparison::AtMost => tr(lang, "不高于", "is at most"),
        JobComparison::Above => tr(lang, "高于", "is above"),
        JobComparison::AtLeast => tr(lang, "不低于", "is at least"),
        JobComparison::Equals => tr(lang, "等于", "equals"),
        JobComparison::Contains => tr(lang, "包含", "contains"),
        JobComparison::EveryRun => tr(lang, "每次都提醒", "every run, no condition"),
    }
}

/// Adds the draft as the student's job. The spec is the scheduler's own form and is checked by
/// the scheduler alone (`Scheduler::add`: the spec field by field, and seed 000's "scheduled
/// runs only read" on the tool); the form only words its refusal.
pub(super) fn add(engine: &Engine, lang: Language, draft: &JobDraft) -> Result<(), EngineError> {
    let spec = spec_of(lang, engine, draft)?;
    engine
        .add_job(&spec, Owner::User)
        .map(drop)
        .map_err(|e| match e {
            SchedulerError::Invalid(error) => field_error(lang, draft, &error.field),
            other => EngineError::Invalid(other.to_string()),
        })
}

/// The draft as a job spec (`scheduler::JobSpec`'s JSON). Only what the form's choices need
/// translating is read here: the time of day and the hours, which the scheduler takes as cron
/// and minutes.
fn spec_of(lang: Language, engine: &Engine, draft: &JobDraft) -> Result<Value, EngineError> {
    let source = engine
        .data_sources()
        .into_iter()
        .find(|s| s.plugin == draft.plugin && s.key == draft.source)
        .ok_or_else(|| field_error(lang, draft, "check.tool"))?;
    let when = draft.schedule_value.trim();
    let schedule = match draft.schedule {
        JobScheduleKind::DailyAt => {
            let (h, m) = when
                .split_once(':')
                .and_then(|(h, m)| {
                    Some((h.trim().parse::<u32>().ok()?, m.trim().parse::<u32>().ok()?))
                })
                .ok_or_else(|| field_error(lang, draft, "schedule"))?;
            json!({"cron": format!("{m} {h} * * *")})
        }
        JobScheduleKind::EveryHours => {
            let hours = when
                .parse::<u32>()
                .map_err(|_| field_error(lang, draft, "schedule"))?;
            json!({"everyMinutes": hours.saturating_mul(60)})
        }
        JobScheduleKind::Once => json!({"at": when}),
    };
    let value = draft.value.trim();
    let number = || {
        value
            .parse::<f64>()
            .ok()
            .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
            .unwrap_or_else(|| json!(value))
    };
    let op = match draft.comparison {
        JobComparison::Below => Some(("lt", number())),
        JobComparison::AtMost => Some(("le", number())),
        JobComparison::Above => Some(("gt", number())),
        JobComparison::AtLeast => Some(("ge", number())),
        JobComparison::Equals => Some(("eq", number())),
        JobComparison::Contains => Some(("contains", json!(value))),
        JobComparison::EveryRun => None,
    };
    let when = op.map(|(op, value)| json!({"path": draft.field.trim(), "op": op, "value": value}));
    Ok(json!({
        "name": draft.name,
        "schedule": schedule,
        "check": {
            "tool": source.tool,
            "args": source.args.unwrap_or_else(|| json!({})),
            "when": when,
            "notify": {"title": draft.notify_title, "body": draft.notify_body},
        },
    }))
}

/// A refusal as the student reads it: the form's field to change (`field` is the spec's, as
/// the scheduler names it) and what it takes.
fn field_error(lang: Language, draft: &JobDraft, field: &str) -> EngineError {
    let (label, what) = if field == "name" {
        (
            tr(lang, "名称", "Name"),
            tr(
                lang,
                "写一个 1 到 100 个字的名称",
                "give it a name of 1 to 100 characters",
            ),
        )
    } else if field.starts_with("schedule") || field == "timeZone" {
        (
            tr(lang, "什么时候", "When"),
            match draft.schedule {
                JobScheduleKind::DailyAt => tr(
                    lang,
                    "写一天中的时刻，如 08:00",
                    "write a time of day such as 08:00",
                ),
                JobScheduleKind::EveryHours => tr(
                    lang,
                    "写 1 到 8784 之间的整小时数",
                    "write a whole number of hours from 1 to 8784",
                ),
                JobScheduleKind::Once => tr(
                    lang,
                    "写一个以后的时间，如 2026-12-24 18:00",
                    "write a later time such as 2026-12-24 18:00",
                ),
            },
        )
    } else if field.ends_with(".value") {
        (
            tr(lang, "值", "Value"),
            match draft.comparison {
                JobComparison::Contains => tr(lang, "写要找的文字", "write the words to look for"),
                _ => tr(lang, "写一个数字，如 50", "write a number such as 50"),
            },
        )
    } else if field.starts_with("check.when") {
        (
            tr(lang, "结果里的字段", "Field of the result"),
            tr(
                lang,
                "写结果里的一个字段，如 balanceYuan",
                "write a field of the result such as balanceYuan",
            ),
        )
    } else if field == "check.notify.title" {
        (
            tr(lang, "提醒标题", "Notification title"),
            tr(lang, "写提醒的标题", "write the notification's title"),
        )
    } else if field == "check.notify.body" {
        (
            tr(lang, "提醒内容", "Notification text"),
            tr(lang, "写提醒的内容", "write the notification's text"),
        )
    } else {
        (
            tr(lang, "检查什么", "What to check"),
            tr(
                lang,
                "选一项可以定时检查的数据",
                "choose something that can be checked on a schedule",
            ),
        )
    };
    EngineError::Invalid(match lang {
        Language::Zh => format!("请修改「{label}」：{what}"),
        Language::En => format!("Change “{label}”: {what}"),
    })
}
