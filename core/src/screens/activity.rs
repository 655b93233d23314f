//! The "活动" screen (issue 41.5): what the agent and the student's taps did today, in words,
//! grouped by conversation — what ran, what asked and the answer, what was refused and by
//! which rule, what a scheduled check read — filterable by plugin and effect, with the day's
//! spend. Read from the audit log, which records each call's decision, answer and end.

use super::LabelValue;
use super::inbox::FilterChoice;
use super::texts::{answer_words, effect_words, local_time, refusal_words, title, tr};
use crate::engine::{Engine, EngineError};
use crate::invoke::{local_day, yuan};
use crate::policy::{Answer, Code};
use crate::registry::Effect;
use crate::scheduler::{RunOutcome, Task};
use crate::settings::Language;
use crate::store::audit::AuditRow;
use crate::text::one_line;

/// What the screen shows: one plugin's calls, one effect's, or all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ActivityFilter {
    pub plugin: Option<String>,
    pub effect: Option<Effect>,
}

/// An effect the screen can be filtered by, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct EffectChoice {
    pub effect: Effect,
    pub label: String,
}

/// One call, in a sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ActivityCall {
    pub when: String,
    /// "树洞 · 发树洞".
    pub tool: String,
    pub effect_label: String,
    /// What happened: "问了你，你选了「允许」，已运行".
    pub what: String,
}

/// The calls of one conversation, of the student's taps, or of scheduled checks.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ActivityGroup {
    pub title: String,
    pub calls: Vec<ActivityCall>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ActivityScreen {
    pub title: String,
    /// The day shown, on the student's calendar.
    pub day: String,
    pub filter: ActivityFilter,
    /// The plugins to filter by, by their titles.
    pub plugins: Vec<FilterChoice>,
    /// The effects to filter by, in words.
    pub effects: Vec<EffectChoice>,
    pub groups: Vec<ActivityGroup>,
    /// Today's spend beside the day's limit.
    pub spent: LabelValue,
    pub empty: Option<String>,
}

/// How many audit rows a day's screen reads at most.
const ROWS_READ: usize = 2_000;

pub(super) fn build(
    engine: &Engine,
    lang: Language,
    filter: &ActivityFilter,
) -> Result<ActivityScreen, EngineError> {
    let settings = engine.settings();
    let zone = settings.time_zone.clone();
    let (from, to) = local_day(engine.now_ms(), &zone);
    let rows: Vec<AuditRow> = engine
        .audit(ROWS_READ)?
        .into_iter()
        .filter(|r| r.at_ms >= from && r.at_ms < to)
        .filter(|r| {
            let plugin = r.tool.split_once('.').map_or(r.tool.as_str(), |(p, _)| p);
            filter.plugin.as_deref().is_none_or(|p| p == plugin)
                && filter
                    .effect
                    .is_none_or(|e| r.effect.as_deref() == Some(e.as_str()))
        })
        .collect();
    // A call's rows follow its "decided" row; a row joins the open call of its tool, actor
    // and conversation.
    let mut calls: Vec<Vec<AuditRow>> = Vec::new();
    for row in rows {
        let open = calls.iter_mut().rev().find(|c| {
            let first = &c[0];
            first.tool == row.tool
                && first.actor == row.actor
                && first.conversation == row.conversation
        });
        match open {
            Some(call) if row.event != "decided" => call.push(row),
            _ if row.event == "decided" => calls.push(vec![row]),
            _ => {}
        }
    }
    let found = checks_found(engine, lang, &calls, from);
    let mut groups: Vec<(String, ActivityGroup)> = Vec::new();
    for (call, found) in calls.into_iter().zip(found) {
        let first = &call[0];
        let key = match (first.actor.as_str(), &first.conversation) {
            ("scheduler", _) => "scheduler".to_owned(),
            (_, Some(c)) => format!("c:{c}"),
            (_, None) => "taps".to_owned(),
        };
        let view = ActivityCall {
            when: local_time(&zone, first.at_ms),
            tool: tool_words(engine, lang, &first.tool),
            effect_label: first
                .effect
                .as_deref()
                .and_then(Effect::parse)
                .map_or(String::new(), |e| effect_words(lang, e).into()),
            what: found.unwrap_or_else(|| what_happened(lang, &call)),
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.calls.push(view),
            None => {
                let title = match (first.actor.as_str(), &first.conversation) {
                    ("scheduler", _) => tr(lang, "定时检查", "Scheduled checks").to_owned(),
                    (_, Some(c)) => engine
                        .conversations()
                        .title(c)
                        .map_or_else(|| c.clone(), |t| one_line(&t, usize::MAX)),
                    (_, None) => tr(lang, "你自己点的", "Your own taps").to_owned(),
                };
                groups.push((
                    key,
                    ActivityGroup {
                        title,
                        calls: vec![view],
                    },
                ));
            }
        }
    }
    let spent = engine.spent_today_fen()?;
    let groups: Vec<ActivityGroup> = groups.into_iter().map(|(_, g)| g).collect();
    Ok(ActivityScreen {
        title: tr(lang, "活动", "Activity").into(),
        day: local_time(&zone, from).chars().take(10).collect(),
        filter: filter.clone(),
        plugins: engine
            .plugins()
            .iter()
            .map(|v| FilterChoice {
                id: v.plugin.id.clone(),
                label: title(lang, &v.plugin.title, v.plugin.title_en.as_deref()),
            })
            .collect(),
        effects: Effect::ALL
            .map(|effect| EffectChoice {
                effect,
                label: effect_words(lang, effect).into(),
            })
            .to_vec(),
        empty: groups
            .is_empty()
            .then(|| tr(lang, "今天还没有操作", "Nothing done today").into()),
        groups,
        spent: LabelValue {
            label: tr(lang, "今天已花", "Spent today").into(),
            value: match lang {
                Language::Zh => format!("{} 元", yuan(spent)),
                Language::En => format!("{} yuan", yuan(spent)),
            },
        },
    })
}

/// What each scheduled check run today found, said on the scheduler's call that read for it:
/// a check's job keeps its last run, which is the latest scheduler call of its tool made no
/// later than the run was recorded.
fn checks_found(
    engine: &Engine,
    lang: Language,
    calls: &[Vec<AuditRow>],
    from: i64,
) -> Vec<Option<String>> {
    let mut found = vec![None; calls.len()];
    for job in engine.jobs() {
        let (Task::Check(check), Some(last)) = (&job.spec.task, &job.last) else {
            continue;
        };
        if last.at_ms < from {
            continue;
        }
        let Some(words) = run_words(lang, &last.outcome) else {
            continue;
        };
        let call = calls.iter().rposition(|c| {
            c[0].actor == "scheduler" && c[0].tool == check.tool && c[0].at_ms <= last.at_ms
        });
        if let Some(i) = call {
            let name = one_line(&job.spec.name, usize::MAX);
            found[i] = Some(match lang {
                Language::Zh => format!("定时检查「{name}」：{words}"),
                Language::En => format!("Scheduled check \"{name}\": {words}"),
            });
        }
    }
    found
}

/// What a check's run found, or `None` where the audit's words say it (refused, failed).
fn run_words(lang: Language, outcome: &RunOutcome) -> Option<String> {
    Some(match (outcome, lang) {
        (RunOutcome::Notified { notification }, Language::Zh) => {
            format!(
                "有新情况，已提醒你「{}」",
                one_line(&notification.title, usize::MAX)
            )
        }
        (RunOutcome::Notified { notification }, Language::En) => format!(
            "found something; you were notified \"{}\"",
            one_line(&notification.title, usize::MAX)
        ),
        (RunOutcome::NotShown { .. }, _) => tr(
            lang,
            "有新情况，但通知已关闭，没有提醒你",
            "found something, but notifications are off, so you were not notified",
        )
        .into(),
        (RunOutcome::Quiet, _) => {
            tr(lang, "没有变化，没有提醒你", "nothing new; no notification").into()
        }
        _ => return None,
    })
}

/// "树洞 · 发树洞": the plugin's and the tool's titles, or the id of a tool no longer there.
pub(super) fn tool_words(engine: &Engine, lang: Language, id: &str) -> String {
    let Some(tool) = engine.tool(id) else {
        return id.to_owned();
    };
    let plugin = engine
        .plugins()
        .into_iter()
        .find(|p| p.plugin.id == tool.plugin)
        .map_or(tool.plugin.clone(), |p| {
            title(lang, &p.plugin.title, p.plugin.title_en.as_deref())
        });
    let tool = title(lang, &tool.title, tool.title_en.as_deref());
    one_line(&format!("{plugin} · {tool}"), usize::MAX)
}

/// One call's rows in a sentence: asked and the answer, and how it ended.
fn what_happened(lang: Language, call: &[AuditRow]) -> String {
    let decided = call[0].detail.as_deref().unwrap_or_default();
    let mut said: Vec<String> = Vec::new();
    if let Some(code) = decided.strip_prefix("refuse:") {
        let why = serde_json::from_value::<Code>(serde_json::json!(code))
            .map_or(code, |c| refusal_words(lang, c));
        let rule = call[0].rule.as_deref().map(|r| rule_words(lang, r));
        return match (lang, rule) {
            (Language::Zh, Some(rule)) => format!("没有运行：{why}（{rule}）"),
            (Language::Zh, None) => format!("没有运行：{why}"),
            (Language::En, Some(rule)) => format!("Not run: {why} ({rule})"),
            (Language::En, None) => format!("Not run: {why}"),
        };
    }
    for row in &call[1..] {
        let detail = row.detail.as_deref().unwrap_or_default();
        let words = match row.event.as_str() {
            "answered" => Answer::parse(detail).map(|a| match lang {
                Language::Zh => format!("问了你，你选了「{}」", answer_words(lang, a)),
                Language::En => format!("Asked you; you chose {}", answer_words(lang, a)),
            }),
            "unanswered" => Some(match lang {
                Language::Zh => format!("问了你，{detail} 分钟没有回答，算作拒绝"),
                Language::En => format!("Asked you; no answer in {detail} minutes, so declined"),
            }),
            "undone" => Some(
                tr(
                    lang,
                    "你撤销了，什么都没发出",
                    "You took it back; nothing was sent",
                )
                .into(),
            ),
            "ran" => Some(tr(lang, "已运行", "Ran").into()),
            "failed" => Some(tr(lang, "运行失败", "Failed").into()),
            "stopped" if detail == "declined" && said.is_empty() => {
                Some(tr(lang, "没有运行", "Not run").into())
            }
            _ => None,
        };
        said.extend(words);
    }
    if said.is_empty() {
        said.push(tr(lang, "正在进行", "In progress").into());
    }
    said.join(tr(lang, "，", "; "))
}

/// Which rule decided, as the audit names it (`global[0]`, `conversation[2]`).
fn rule_words(lang: Language, rule: &str) -> String {
    let (scope, index) = rule
        .trim_end_matches(']')
        .split_once('[')
        .unwrap_or((rule, "0"));
    let n = index.parse::<usize>().map_or(0, |i| i + 1);
    match (lang, scope) {
        (Language::Zh, "conversation") => format!("本对话的第 {n} 条规则"),
        (Language::Zh, _) => format!("全局第 {n} 条规则"),
        (Language::En, "conversation") => format!("this conversation's rule {n}"),
        (Language::En, _) => format!("global rule {n}"),
    }
}
