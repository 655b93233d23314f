//! A conversation's settings (seed 003): model, thinking effort, preset, plan mode, scope, and
//! the rules that apply to it (its own and the global ones).

use super::texts::{preset_words, tr};
use super::{Action, Choice};
use crate::engine::{Engine, EngineError};
use crate::policy::{Preset, Rule, RuleKind};
use crate::settings::Language;

/// The thinking efforts a conversation may ask the model for (`reasoning_effort`).
pub const EFFORTS: [&str; 3] = ["low", "medium", "high"];

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RuleRow {
    /// `deny wallet.*`, `ask forum.post (money)`.
    pub text: String,
    pub remove: Action,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ConversationSettingsScreen {
    pub conversation: String,
    pub title: String,
    pub model_label: String,
    /// The conversation's own model; none uses the app's (`model.name`).
    pub model: Option<String>,
    pub default_model: String,
    pub thinking_label: String,
    pub thinking: Vec<Choice>,
    pub preset_label: String,
    pub presets: Vec<Choice>,
    pub plan_mode_label: String,
    pub plan_mode: bool,
    pub plan_mode_toggle: Action,
    pub scope_label: String,
    /// Folders, hosts and apps the conversation may reach; empty when it reaches none.
    pub scope: Vec<String>,
    pub rules_label: String,
    pub rules: Vec<RuleRow>,
    pub global_rules_label: String,
    pub global_rules: Vec<RuleRow>,
}

pub(super) fn build(
    engine: &Engine,
    lang: Language,
    id: &str,
) -> Result<ConversationSettingsScreen, EngineError> {
    engine.open_conversation(id)?;
    let c = engine.existing_conversation(id)?;
    let s = &c.settings;
    let mut thinking = vec![Choice {
        label: tr(lang, "模型默认", "Model default").into(),
        selected: s.thinking_effort.is_none(),
        action: Action::SetThinkingEffort {
            conversation: id.to_owned(),
            effort: None,
        },
    }];
    thinking.extend(EFFORTS.into_iter().map(|effort| {
        Choice {
            label: match effort {
                "low" => tr(lang, "低", "Low"),
                "medium" => tr(lang, "中", "Medium"),
                _ => tr(lang, "高", "High"),
            }
            .into(),
            selected: s.thinking_effort.as_deref() == Some(effort),
            action: Action::SetThinkingEffort {
                conversation: id.to_owned(),
                effort: Some(effort.to_owned()),
            },
        }
    }));
    let presets = [Preset::AskEveryTime, Preset::AutoEdit, Preset::SkipAll]
        .into_iter()
        .map(|preset| Choice {
            label: preset_words(lang, preset).into(),
            selected: s.preset == preset,
            action: Action::SetPreset {
                conversation: id.to_owned(),
                preset,
            },
        })
        .collect();
    let scope = c
        .scope
        .roots
        .iter()
        .map(|r| r.display().to_string())
        .chain(c.scope.hosts.iter().cloned())
        .chain(c.scope.apps.iter().cloned())
        .collect();
    Ok(ConversationSettingsScreen {
        conversation: id.to_owned(),
        title: tr(lang, "对话设置", "Conversation settings").into(),
        model_label: tr(lang, "模型", "Model").into(),
        model: s.model.clone(),
        default_model: engine.settings().model.name,
        thinking_label: tr(lang, "思考强度", "Thinking effort").into(),
        thinking,
        preset_label: tr(lang, "权限预设", "Permission preset").into(),
        presets,
        plan_mode_label: tr(lang, "计划模式", "Plan mode").into(),
        plan_mode: s.plan_mode,
        plan_mode_toggle: Action::SetPlanMode {
            conversation: id.to_owned(),
            on: !s.plan_mode,
        },
        scope_label: tr(lang, "可访问范围", "Scope").into(),
        scope,
        rules_label: tr(lang, "本对话的规则", "This conversation's rules").into(),
        rules: rows(c.rules.rules(), Some(id)),
        global_rules_label: tr(lang, "全局规则", "Global rules").into(),
        global_rules: rows(&engine.rules(), None),
    })
}

fn rows(rules: &[Rule], conversation: Option<&str>) -> Vec<RuleRow> {
    rules
        .iter()
        .map(|r| RuleRow {
            text: rule_text(r),
            remove: Action::RemoveRule {
                conversation: conversation.map(str::to_owned),
                rule: serde_json::to_string(r).unwrap_or_default(),
            },
        })
        .collect()
}

fn rule_text(r: &Rule) -> String {
    let kind = match r.kind {
        RuleKind::Deny => "deny",
        RuleKind::Ask => "ask",
        RuleKind::Allow => "allow",
    };
    let mut text = format!("{kind} {}", r.tool);
    if let Some(effect) = r.effect {
        text.push_str(&format!(" ({effect})"));
    }
    if let Some(when) = &r.when {
        text.push_str(&format!(
            " when {}",
            serde_json::Value::Object(when.clone())
        ));
    }
    text
}
