//! A conversation's settings (seed 003): model, thinking effort, preset, plan mode, scope, and
//! the rules that apply to it (its own and the global ones).

use super::texts::{effect_words, preset_words, title, tr};
use super::{Action, Choice};
use crate::engine::{Engine, EngineError};
use crate::policy::{Preset, Rule, RuleKind};
use crate::settings::Language;

/// The thinking efforts a conversation may ask the model for (`reasoning_effort`).
pub const EFFORTS: [&str; 3] = ["low", "medium", "high"];

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RuleRow {
    /// The rule in words: 禁止：校园卡 的所有工具, 询问：论坛 · 发帖（花钱）.
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
    /// What the chosen preset does, in a sentence.
    pub preset_note: String,
    pub plan_mode_label: String,
    pub plan_mode: bool,
    pub plan_mode_toggle: Action,
    pub scope_label: String,
    /// Folders, hosts and apps the conversation may reach; empty when it reaches none.
    pub scope: Vec<String>,
    /// What the scope is, and that it reaches nothing while empty.
    pub scope_note: String,
    pub rules_label: String,
    pub rules: Vec<RuleRow>,
    pub global_rules_label: String,
    pub global_rules: Vec<RuleRow>,
    /// What rules do, said while there are none.
    pub no_rules_note: Option<String>,
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
    let scope: Vec<String> = c
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
        preset_note: preset_note(lang, s.preset).into(),
        plan_mode_label: tr(lang, "计划模式", "Plan mode").into(),
        plan_mode: s.plan_mode,
        plan_mode_toggle: Action::SetPlanMode {
            conversation: id.to_owned(),
            on: !s.plan_mode,
        },
        scope_label: tr(lang, "可访问范围", "Scope").into(),
        scope_note: if scope.is_empty() {
            tr(
                lang,
                "这个对话不能访问任何文件夹、网站或应用；助手需要时会请你授予。",
                "This conversation reaches no folder, site or app; the assistant asks you to grant one when it needs it.",
            )
        } else {
            tr(
                lang,
                "这个对话可以访问下面的文件夹、网站和应用。",
                "This conversation may reach the folders, sites and apps below.",
            )
        }
        .into(),
        scope,
        rules_label: tr(lang, "本对话的规则", "This conversation's rules").into(),
        no_rules_note: (c.rules.rules().is_empty() && engine.rules().is_empty()).then(|| {
            tr(
                lang,
                "还没有规则。规则可以禁止某个工具、每次询问或直接允许，优先于上面的预设；在审批时选择「始终允许」或让助手添加。",
                "No rules yet. A rule blocks a tool, asks every time or allows it, before the preset above; choose \"Always allow\" on an approval or ask the assistant to add one.",
            )
            .into()
        }),
        rules: rows(engine, lang, c.rules.rules(), Some(id)),
        global_rules_label: tr(lang, "全局规则", "Global rules").into(),
        global_rules: rows(engine, lang, &engine.rules(), None),
    })
}

/// What a preset does, in a sentence.
fn preset_note(lang: Language, preset: Preset) -> &'static str {
    match preset {
        Preset::AskEveryTime => tr(
            lang,
            "助手每次写入、花钱或公开发布之前都先问你；读取按各插件的权限设置。",
            "The assistant asks you before each write, payment or public post; reads follow each plugin's permissions.",
        ),
        Preset::AutoEdit => tr(
            lang,
            "助手按各插件的权限设置行事：设为「自动」的直接运行，设为「询问」的先问你。",
            "The assistant follows each plugin's permissions: what is set to auto runs, what is set to ask asks you first.",
        ),
        Preset::SkipAll => tr(
            lang,
            "助手用工具不再问你；只有你的规则、关闭的权限和敏感操作（如放宽权限）仍会拦下或询问。只在你信任这个对话时使用。",
            "The assistant uses tools without asking; only your rules, permissions turned off and sensitive calls (such as loosening a permission) still stop it or ask. Use it only for a conversation you trust.",
        ),
    }
}

fn rows(
    engine: &Engine,
    lang: Language,
    rules: &[Rule],
    conversation: Option<&str>,
) -> Vec<RuleRow> {
    rules
        .iter()
        .map(|r| RuleRow {
            text: rule_words(engine, lang, r),
            remove: Action::RemoveRule {
                conversation: conversation.map(str::to_owned),
                rule: serde_json::to_string(r).unwrap_or_default(),
            },
        })
        .collect()
}

/// A rule in words: what it does, to which tools (by their titles), for which effect; a
/// condition on the input stays as its JSON, which is what it compares.
fn rule_words(engine: &Engine, lang: Language, r: &Rule) -> String {
    let kind = match r.kind {
        RuleKind::Deny => tr(lang, "禁止", "Block"),
        RuleKind::Ask => tr(lang, "询问", "Ask"),
        RuleKind::Allow => tr(lang, "允许", "Allow"),
    };
    let plugin_title = |id: &str| {
        engine
            .plugins()
            .into_iter()
            .find(|v| v.plugin.id == id)
            .map_or(id.to_owned(), |v| {
                title(lang, &v.plugin.title, v.plugin.title_en.as_deref())
            })
    };
    let tools = match r.tool.split_once('.') {
        _ if r.tool == "*" => tr(lang, "所有工具", "every tool").to_owned(),
        Some((plugin, "*")) => match lang {
            Language::Zh => format!("{} 的所有工具", plugin_title(plugin)),
            Language::En => format!("every tool of {}", plugin_title(plugin)),
        },
        Some((plugin, _)) => engine.tool(&r.tool).map_or(r.tool.clone(), |t| {
            format!(
                "{} · {}",
                plugin_title(plugin),
                title(lang, &t.title, t.title_en.as_deref())
            )
        }),
        None => r.tool.clone(),
    };
    let mut text = match lang {
        Language::Zh => format!("{kind}：{tools}"),
        Language::En => format!("{kind}: {tools}"),
    };
    if let Some(effect) = r.effect {
        text.push_str(&match lang {
            Language::Zh => format!("（{}）", effect_words(lang, effect)),
            Language::En => format!(" ({})", effect_words(lang, effect)),
        });
    }
    if let Some(when) = &r.when {
        let when = serde_json::Value::Object(when.clone());
        text.push_str(&match lang {
            Language::Zh => format!("，条件 {when}"),
            Language::En => format!(", when {when}"),
        });
    }
    text
}
