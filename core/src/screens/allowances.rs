//! The "已允许" screen: every "Always allow" in force, with its tool, scope, since and until,
//! each with its revoke (DESIGN.md §3). Only this screen reads or changes them: no tool lists
//! or revokes an allowance (uiOnly).

use super::texts::{effect_words, local_time, title, tr};
use super::{Action, Button, ButtonRole};
use crate::engine::{Engine, EngineError};
use crate::policy::AllowanceScope;
use crate::registry::Effect;
use crate::settings::Language;
use crate::text::one_line;

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct AllowanceRowView {
    pub plugin_title: String,
    pub tool_title: String,
    pub effect_label: String,
    /// 本次对话 / 今天 / 一直.
    pub scope_label: String,
    /// When it was given, on the student's clock.
    pub since: String,
    /// When it ends, in words.
    pub until: String,
    pub revoke: Button,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct AllowancesScreen {
    pub title: String,
    /// That the agent can neither see nor change this list.
    pub note: String,
    pub rows: Vec<AllowanceRowView>,
    /// Shown when nothing is allowed beyond the modes.
    pub empty: Option<String>,
}

pub(super) fn build(engine: &Engine, lang: Language) -> Result<AllowancesScreen, EngineError> {
    let zone = engine.settings().time_zone;
    let rows = engine
        .allowances()?
        .into_iter()
        .map(|row| {
            let plugin = engine
                .plugins()
                .into_iter()
                .find(|p| p.plugin.id == row.plugin)
                .map_or(row.plugin.clone(), |p| {
                    title(lang, &p.plugin.title, p.plugin.title_en.as_deref())
                });
            let tool = engine.tool(&row.tool).map_or(row.tool.clone(), |t| {
                title(lang, &t.title, t.title_en.as_deref())
            });
            let effect = Effect::parse(&row.effect).unwrap_or(Effect::Public);
            let scope = AllowanceScope::parse(&row.scope).unwrap_or(AllowanceScope::Always);
            AllowanceRowView {
                plugin_title: one_line(&plugin, usize::MAX),
                tool_title: one_line(&tool, usize::MAX),
                effect_label: effect_words(lang, effect).into(),
                scope_label: scope_words(lang, scope).into(),
                since: local_time(&zone, row.since_ms),
                until: match (scope, row.until_ms) {
                    (AllowanceScope::Today, Some(until)) => local_time(&zone, until),
                    (AllowanceScope::Conversation, _) => tr(
                        lang,
                        "这次对话里一直有效",
                        "For as long as this conversation",
                    )
                    .into(),
                    _ => tr(lang, "一直，直到你撤销", "Until you revoke it").into(),
                },
                revoke: Button::new(
                    tr(lang, "撤销", "Revoke").into(),
                    ButtonRole::Destructive,
                    Action::RevokeAllowance { allowance: row.id },
                ),
            }
        })
        .collect::<Vec<_>>();
    Ok(AllowancesScreen {
        title: tr(lang, "已允许", "Allowed").into(),
        note: tr(
            lang,
            "这里列出你给过的「始终允许」。助手看不到也改不了这个列表。",
            "The \"Always allow\" answers you gave. The assistant can neither see nor change this list.",
        )
        .into(),
        empty: rows.is_empty().then(|| {
            tr(
                lang,
                "现在没有「始终允许」：需要时都会先问你",
                "Nothing is always allowed now: you are asked when it matters",
            )
            .into()
        }),
        rows,
    })
}

/// How long an "Always allow" holds, as the sheet and this screen name it.
pub(super) fn scope_words(lang: Language, scope: AllowanceScope) -> &'static str {
    match scope {
        AllowanceScope::Conversation => tr(lang, "本次对话", "This conversation"),
        AllowanceScope::Today => tr(lang, "今天", "Today"),
        AllowanceScope::Always => tr(lang, "一直", "Always"),
    }
}
