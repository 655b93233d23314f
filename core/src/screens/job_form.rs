//! The jobs screen's "new job" form (issue 37.3): a plain reminder first, or a check — what to
//! watch (a data source of an installed, available plugin, shown by its title), a field from
//! its labelled fields, a comparison in words (低于/高于/等于/变化时/出现新的) and a value in the
//! field's unit — when (a few plain choices, written as the scheduler's own schedule), and the
//! notification's words, written by the core from these choices ([`words`]) and editable. No
//! path or template is typed. A submitted draft is turned into a job spec and added through the
//! scheduler, so it is checked by exactly the scheduler's checks; a refusal writes nothing and
//! names the form's field to change, in the student's language. [`summary`] says a job's
//! condition and schedule in a sentence, for its card.

use serde_json::{Value, json};

use super::results::readable_name;
use super::texts::{title, tr};
use crate::engine::{Engine, EngineError};
use crate::registry::Tool;
use crate::scheduler::schedule::ScheduleSpec;
use crate::scheduler::spec::result_fields;
use crate::scheduler::{Job, Owner, SchedulerError, Task};
use crate::settings::Language;

/// What a new job is: a plain reminder (its own words at a time, no tool, no model) or a check
/// of something to watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum JobKind {
    Reminder,
    Check,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobKindOption {
    pub kind: JobKind,
    pub label: String,
}

/// A field of what is watched, by its words: `key` is what the draft carries back, `label` the
/// field's name without its unit ("余额"), `unit` the unit the value is written in ("元").
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobFieldOption {
    pub key: String,
    pub label: String,
    pub unit: Option<String>,
}

/// One thing a job can check: a data source, by its title. `plugin` and `source` are what the
/// draft carries back.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobSourceOption {
    pub title: String,
    pub plugin: String,
    pub source: String,
    /// The result's fields a condition can compare: those the tool labels or declares
    /// (`labels`, `output`), else those the last read had (none before the first read).
    pub fields: Vec<JobFieldOption>,
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
    /// The field's value differs from the last run's (the first run records it).
    Changed,
    /// Something new appears in the field: a new entry of a list, a new value otherwise.
    AppearsNew,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobComparisonOption {
    pub comparison: JobComparison,
    pub label: String,
    /// Whether a value is typed for it (低于 50; not 变化时).
    pub takes_value: bool,
}

/// The notification's words the core writes for a draft's choices: the form shows them, and
/// the student may change them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobWords {
    pub title: String,
    /// A field's words in braces stand for its value at the run (`现在 {余额} 元`).
    pub body: String,
}

/// The form's words and choices; the first of each list is the one chosen at first.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobForm {
    pub title: String,
    /// A reminder first, then a check.
    pub kinds: Vec<JobKindOption>,
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
    /// Said under the notification's words: the core wrote them, and they may be changed.
    pub words_hint: String,
    pub submit_label: String,
}

/// What the student chose and typed, as `Action::AddJob` carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct JobDraft {
    pub kind: JobKind,
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
            let last = engine.last_tool_data(&s.plugin, &s.key);
            JobSourceOption {
                title: title(lang, &s.title, en.as_deref()),
                fields: field_options(lang, tool.as_deref(), last.as_ref()),
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
        takes_value: takes_value(comparison),
    };
    JobForm {
        title: tr(lang, "新建定时任务", "New job").into(),
        kinds: [JobKind::Reminder, JobKind::Check]
            .map(|kind| JobKindOption {
                kind,
                label: match kind {
                    JobKind::Reminder => tr(lang, "到点提醒我", "Remind me"),
                    JobKind::Check => tr(lang, "帮我盯着", "Watch something"),
                }
                .into(),
            })
            .to_vec(),
        name_label: tr(lang, "名称", "Name").into(),
        source_label: tr(lang, "盯着什么", "What to watch").into(),
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
        field_label: tr(lang, "看哪一项", "Which of it").into(),
        comparison_label: tr(lang, "什么时候提醒", "Notify when it").into(),
        comparisons: [
            JobComparison::Below,
            JobComparison::Above,
            JobComparison::Equals,
            JobComparison::Changed,
            JobComparison::AppearsNew,
            JobComparison::Contains,
            JobComparison::EveryRun,
        ]
        .map(comparison)
        .to_vec(),
        value_label: tr(lang, "值", "Value").into(),
        notify_title_label: tr(lang, "提醒标题", "Notification title").into(),
        notify_body_label: tr(lang, "提醒内容", "Notification text").into(),
        words_hint: tr(
            lang,
            "提醒的话按你的选择写好了，可以改；花括号里的一项会换成当时的值。",
            "The words are written from your choices and can be changed; an item in braces becomes its value at the time.",
        )
        .into(),
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
        JobComparison::Changed => tr(lang, "变化时", "changes"),
        JobComparison::AppearsNew => tr(lang, "出现新的", "has something new"),
    }
}

fn takes_value(comparison: JobComparison) -> bool {
    !matches!(
        comparison,
        JobComparison::EveryRun | JobComparison::Changed | JobComparison::AppearsNew
    )
}

/// The fields a condition can compare: those the tool labels or declares, else the last read's
/// plain values; each by its words.
fn field_options(lang: Language, tool: Option<&Tool>, last: Option<&Value>) -> Vec<JobFieldOption> {
    let declared = tool.map(result_fields).unwrap_or_default();
    let keys = if declared.is_empty() {
        last.and_then(Value::as_object)
            .map(|o| {
                o.iter()
                    .filter(|(_, v)| v.is_number() || v.is_string() || v.is_boolean())
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default()
    } else {
        declared
    };
    keys.into_iter()
        .map(|key| {
            let (label, unit) = field_words(lang, tool, &key);
            JobFieldOption { key, label, unit }
        })
        .collect()
}

/// A field's name and unit in the student's language: its label split at the unit in brackets
/// ("余额（元）" → 余额, 元; "Balance (yuan)" → Balance, yuan), or in Chinese its declared output's
/// `title`; else its name made readable (`spentTodayYuan` → Spent today, yuan).
fn field_words(lang: Language, tool: Option<&Tool>, key: &str) -> (String, Option<String>) {
    let label = tool.and_then(|t| t.labels.get(key)).map(|l| match lang {
        Language::Zh => l.zh.clone(),
        Language::En => l.en.clone().unwrap_or_else(|| l.zh.clone()),
    });
    // Else the Chinese `title` its declared output gives the field.
    let label = label.or_else(|| {
        let titled = tool?.output.as_ref()?.source()["properties"][key]["title"].as_str()?;
        (lang == Language::Zh).then(|| titled.to_owned())
    });
    // A field without the plugin's words is said by its name made readable, as the chat does.
    let label = label.unwrap_or_else(|| readable_name(lang, key));
    for (open, close) in [("（", "）"), (" (", ")"), ("(", ")")] {
        if let Some(inner) = label.strip_suffix(close)
            && let Some((name, unit)) = inner.rsplit_once(open)
            && !name.trim().is_empty()
        {
            return (name.trim().to_owned(), Some(unit.trim().to_owned()));
        }
    }
    (label, None)
}

/// Whether the tool declares `key` as a list (its output schema's `array`), or the last read
/// had one there.
fn is_list(tool: Option<&Tool>, key: &str, last: Option<&Value>) -> bool {
    let declared = tool
        .and_then(|t| t.output.as_ref())
        .map(|o| o.source()["properties"][key]["type"] == "array");
    declared.unwrap_or_else(|| last.is_some_and(|v| v[key].is_array()))
}

/// The notification's words for a draft's choices (issue 37.3: "校园卡余额低于 50 元：现在 42.5
/// 元"): the title is what is watched, the body the condition and the value at the run.
pub(super) fn words(engine: &Engine, lang: Language, draft: &JobDraft) -> JobWords {
    if draft.kind == JobKind::Reminder {
        return JobWords {
            title: draft.name.trim().to_owned(),
            body: String::new(),
        };
    }
    let source = engine
        .data_sources()
        .into_iter()
        .find(|s| s.plugin == draft.plugin && s.key == draft.source);
    let Some(source) = source else {
        return JobWords {
            title: draft.name.trim().to_owned(),
            body: String::new(),
        };
    };
    let tool = engine.tool(&source.tool);
    let en = tool.as_ref().and_then(|t| t.title_en.clone());
    let watched = title(lang, &source.title, en.as_deref());
    let key = draft.field.trim();
    let (label, unit) = field_words(lang, tool.as_deref(), key);
    // The value at the run, by the field's words: `{余额}` (`add` writes it as `{balanceYuan}`).
    let placeholder = format!("{{{label}}}");
    // "余额" of 校园卡余额 is said as the whole: 校园卡余额低于 50 元.
    let subject = if said_within(&watched, &label) {
        watched.clone()
    } else {
        label
    };
    let unit = unit.map_or(String::new(), |u| format!(" {u}"));
    let value = draft.value.trim();
    let now = match lang {
        Language::Zh => format!("现在 {placeholder}{unit}"),
        Language::En => format!("now {placeholder}{unit}"),
    };
    let said = |zh: &str, en: &str| match lang {
        Language::Zh => format!("{subject}{zh} {value}{unit}：{now}"),
        Language::En => format!("{subject} {en} {value}{unit}: {now}"),
    };
    let body = match draft.comparison {
        JobComparison::Below => said("低于", "is below"),
        JobComparison::AtMost => said("不高于", "is at most"),
        JobComparison::Above => said("高于", "is above"),
        JobComparison::AtLeast => said("不低于", "is at least"),
        JobComparison::Equals => said("等于", "equals"),
        JobComparison::Contains => match lang {
            Language::Zh => format!("{subject}包含「{value}」"),
            Language::En => format!("{subject} contains “{value}”"),
        },
        JobComparison::Changed => match lang {
            Language::Zh => format!("{subject}变了：{now}"),
            Language::En => format!("{subject} changed: {now}"),
        },
        JobComparison::AppearsNew => match lang {
            Language::Zh => format!("{subject}有新的了"),
            Language::En => format!("Something new in {subject}"),
        },
        JobComparison::EveryRun if key.is_empty() => watched.clone(),
        JobComparison::EveryRun => match lang {
            Language::Zh => format!("{subject}：{now}"),
            Language::En => format!("{subject}: {now}"),
        },
    };
    JobWords {
        title: watched,
        body,
    }
}

/// Whether a field's words are part of what is watched ("余额" of 校园卡余额, "Balance" of
/// "Card balance"), so that the whole is said instead.
fn said_within(watched: &str, label: &str) -> bool {
    !label.is_empty() && watched.to_lowercase().contains(&label.to_lowercase())
}

/// A job's condition and schedule in a sentence, for its card: "每天 09:00 检查校园卡余额，低于
/// 50 元时提醒", "2026-12-05 08:00 提醒：去图书馆".
pub(super) fn summary(engine: &Engine, lang: Language, job: &Job) -> String {
    let when = schedule_words(lang, &job.spec.schedule);
    match &job.spec.task {
        Task::Reminder(n) => match lang {
            Language::Zh => format!("{when}提醒：{}", n.title),
            Language::En => format!("{when}: remind “{}”", n.title),
        },
        Task::Agent(a) => match lang {
            Language::Zh => format!("{when}让助手：{}", a.prompt),
            Language::En => format!("{when}: the assistant does “{}”", a.prompt),
        },
        Task::Check(check) => {
            let tool = engine.tool(check.tool.as_str());
            let watched = tool.as_ref().map_or(check.tool.clone(), |t| {
                title(lang, &t.title, t.title_en.as_deref())
            });
            let condition = check
                .when
                .as_ref()
                .map(|w| condition_words(lang, tool.as_deref(), &watched, w));
            match (lang, condition) {
                (Language::Zh, None) => format!("{when}检查{watched}，每次都提醒"),
                (Language::En, None) => format!("{when}: check {watched} and notify every time"),
                (Language::Zh, Some(c)) => format!("{when}检查{watched}，{c}时提醒"),
                (Language::En, Some(c)) => format!("{when}: check {watched}, notify when {c}"),
            }
        }
    }
}

fn schedule_words(lang: Language, schedule: &ScheduleSpec) -> String {
    let daily = |cron: &str| {
        let parts: Vec<&str> = cron.split_whitespace().collect();
        match parts.as_slice() {
            [m, h, "*", "*", "*"] => {
                let (h, m) = (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?);
                Some(format!("{h:02}:{m:02}"))
            }
            _ => None,
        }
    };
    match (lang, schedule) {
        (Language::Zh, ScheduleSpec::At(at)) => format!("{at} "),
        (Language::En, ScheduleSpec::At(at)) => format!("At {at}"),
        (Language::Zh, ScheduleSpec::EveryMinutes(n)) if n % 60 == 0 => {
            format!("每 {} 小时", n / 60)
        }
        (Language::En, ScheduleSpec::EveryMinutes(n)) if n % 60 == 0 => {
            format!("Every {} h", n / 60)
        }
        (Language::Zh, ScheduleSpec::EveryMinutes(n)) => format!("每 {n} 分钟"),
        (Language::En, ScheduleSpec::EveryMinutes(n)) => format!("Every {n} min"),
        (Language::Zh, ScheduleSpec::Cron(c)) => daily(c)
            .map(|t| format!("每天 {t} "))
            .unwrap_or_else(|| format!("按「{c}」")),
        (Language::En, ScheduleSpec::Cron(c)) => daily(c)
            .map(|t| format!("Every day at {t}"))
            .unwrap_or_else(|| format!("On cron “{c}”")),
    }
}

/// A condition in words when it is one comparison on a field (as the form makes them), else
/// "its condition holds".
fn condition_words(lang: Language, tool: Option<&Tool>, watched: &str, when: &Value) -> String {
    let path = when["path"].as_str().unwrap_or_default();
    let key = path.trim_end_matches("[*]");
    let (label, unit) = field_words(lang, tool, key);
    let subject = if said_within(watched, &label) {
        watched.to_owned()
    } else {
        label
    };
    let unit = unit.map_or(String::new(), |u| format!(" {u}"));
    let value = match &when["value"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        // 50.0 is said 50.
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    };
    let op = when["op"].as_str().unwrap_or_default();
    let compared = |zh: &str, en: &str| match lang {
        Language::Zh => format!("{subject}{zh} {value}{unit}"),
        Language::En => format!("{subject} {en} {value}{unit}"),
    };
    match op {
        _ if path.is_empty() => tr(lang, "条件满足", "its condition holds").to_owned(),
        "lt" => compared("低于", "is below"),
        "le" => compared("不高于", "is at most"),
        "gt" => compared("高于", "is above"),
        "ge" => compared("不低于", "is at least"),
        "eq" => compared("等于", "equals"),
        "ne" => compared("不等于", "is not"),
        "contains" => match lang {
            Language::Zh => format!("{subject}包含「{value}」"),
            Language::En => format!("{subject} contains “{value}”"),
        },
        "changed" => match lang {
            Language::Zh => format!("{subject}变化"),
            Language::En => format!("{subject} changes"),
        },
        "exists" if when["new"] == true => match lang {
            Language::Zh => format!("{subject}出现新的"),
            Language::En => format!("{subject} has something new"),
        },
        _ => tr(lang, "条件满足", "its condition holds").to_owned(),
    }
}

/// Adds the draft as the student's job. The spec is the scheduler's own form and is checked by
/// the scheduler alone (`Scheduler::add`: the spec field by field, and seed 000's "scheduled
/// runs only read" on the tool); the form only words its refusal.
pub(super) fn add(engine: &Engine, lang: Language, draft: &JobDraft) -> Result<(), EngineError> {
    let spec = match draft.kind {
        JobKind::Reminder => reminder_of(lang, draft)?,
        JobKind::Check => spec_of(lang, engine, draft)?,
    };
    engine
        .add_job(&spec, Owner::User)
        .map(drop)
        .map_err(|e| match e {
            SchedulerError::Invalid(error) => field_error(lang, draft, &error.field),
            other => EngineError::Invalid(other.to_string()),
        })
}

/// The schedule the form's choice and value stand for, as the scheduler writes it: the time of
/// day and the hours are taken as cron and minutes.
fn schedule_of(lang: Language, draft: &JobDraft) -> Result<Value, EngineError> {
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
    Ok(schedule)
}

/// A reminder draft as a job spec: its words at its time, no tool (seed 000).
fn reminder_of(lang: Language, draft: &JobDraft) -> Result<Value, EngineError> {
    let title = draft.notify_title.trim();
    let title = if title.is_empty() {
        draft.name.trim()
    } else {
        title
    };
    let body = draft.notify_body.trim();
    let mut reminder = json!({"title": title});
    if !body.is_empty() {
        reminder["body"] = json!(body);
    }
    Ok(json!({
        "name": draft.name,
        "schedule": schedule_of(lang, draft)?,
        "reminder": reminder,
    }))
}

/// The draft as a job spec (`scheduler::JobSpec`'s JSON). Only what the form's choices need
/// translating is read here: the schedule, the comparison as the condition language's, and
/// the words the core writes when the student left them empty.
fn spec_of(lang: Language, engine: &Engine, draft: &JobDraft) -> Result<Value, EngineError> {
    let source = engine
        .data_sources()
        .into_iter()
        .find(|s| s.plugin == draft.plugin && s.key == draft.source)
        .ok_or_else(|| field_error(lang, draft, "check.tool"))?;
    let schedule = schedule_of(lang, draft)?;
    let tool = engine.tool(&source.tool);
    let last = engine.last_tool_data(&source.plugin, &source.key);
    let key = draft.field.trim();
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
        JobComparison::EveryRun | JobComparison::Changed | JobComparison::AppearsNew => None,
    };
    let when = match draft.comparison {
        JobComparison::Changed => Some(json!({"path": key, "op": "changed"})),
        JobComparison::AppearsNew if is_list(tool.as_deref(), key, last.as_ref()) => {
            Some(json!({"path": format!("{key}[*]"), "op": "exists", "new": true}))
        }
        JobComparison::AppearsNew => Some(json!({"path": key, "op": "exists", "new": true})),
        _ => op.map(|(op, value)| json!({"path": key, "op": op, "value": value})),
    };
    // The core's words where the student left them empty (issue 37.3), each field's words in
    // braces written as the field (`{余额}` → `{balanceYuan}`).
    let written = words(engine, lang, draft);
    let fields = field_options(lang, tool.as_deref(), last.as_ref());
    let or_written = |typed: &str, written: String| {
        let typed = typed.trim();
        let text = if typed.is_empty() {
            written
        } else {
            typed.to_owned()
        };
        fields.iter().fold(text, |text, f| {
            text.replace(&format!("{{{}}}", f.label), &format!("{{{}}}", f.key))
        })
    };
    Ok(json!({
        "name": draft.name,
        "schedule": schedule,
        "check": {
            "tool": source.tool,
            "args": source.args.unwrap_or_else(|| json!({})),
            "when": when,
            "notify": {
                "title": or_written(&draft.notify_title, written.title),
                "body": or_written(&draft.notify_body, written.body),
            },
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
            tr(lang, "看哪一项", "Which of it"),
            tr(lang, "选其中的一项", "choose one of its fields"),
        )
    } else if field == "check.notify.title" || field == "reminder.title" {
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
            tr(lang, "盯着什么", "What to watch"),
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
