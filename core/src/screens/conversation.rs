//! A conversation's settings (seed 003): model, thinking effort, preset, plan mode, scope, and
//! the rules that apply to it (its own and the global ones).

use super::plugins::in_reading_order;
use super::texts::{effect_words, preset_words, title, tr};
use super::{Action, Choice};
use crate::engine::{Engine, EngineError};
use crate::policy::{Preset, Rule, RuleKind};
use crate::settings::Language;
use crate::turn::Scope;

/// The thinking efforts a conversation may ask the model for (`reasoning_effort`).
pub const EFFORTS: [&str; 3] = ["low", "medium", "high"];

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RuleRow {
    /// The rule in words: 禁止：校园卡 的所有工具, 询问：论坛 · 发帖（花钱）.
    pub text: String,
    pub remove: Action,
}

/// What a conversation's scope lists: folders, sites (hosts) and apps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum ScopeKind {
    Folder,
    Host,
    App,
}

/// One entry of a conversation's scope, with its kind in words and its removal.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ScopeRow {
    /// 文件夹, 网站 or 应用.
    pub kind: String,
    /// The folder's path, the host as written (`*.pku.edu.cn`) or the app.
    pub value: String,
    /// `Action::SetScopeEntry` with `on: false`.
    pub remove: Action,
}

/// The form that adds a rule: what it does, to which tools, and where it applies. The shell
/// keeps which choice of each list is picked and sends `Action::AddRule` with them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RuleForm {
    pub title: String,
    pub kind_label: String,
    /// 禁止, 每次询问, 允许: each with what it does, in a sentence.
    pub kinds: Vec<RuleKindChoice>,
    pub plugin_label: String,
    /// The installed plugins in the plugins screen's order, each with its tools.
    pub plugins: Vec<RulePluginChoice>,
    pub tool_label: String,
    pub place_label: String,
    /// 只在这个对话 (the conversation's own rules) or 所有对话 (the global ones).
    pub places: Vec<RulePlace>,
    pub add_label: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RuleKindChoice {
    pub kind: RuleKind,
    pub label: String,
    pub note: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RulePluginChoice {
    pub title: String,
    /// First 所有工具 (`plugin.*`), then each tool by its title with its effect in words.
    pub tools: Vec<RuleToolChoice>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RuleToolChoice {
    pub label: String,
    /// The rule's tool pattern (`wallet.*`, `wallet.recharge`): data for `Action::AddRule`.
    pub tool: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RulePlace {
    pub label: String,
    /// The conversation for its own rules; none for the global ones.
    pub conversation: Option<String>,
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
    /// The folders, sites and apps the conversation's scope lists, each with its removal.
    pub scope: Vec<ScopeRow>,
    /// What the scope does as it stands: a kind it lists none of is not narrowed.
    pub scope_note: String,
    /// The site field (`Action::SetScopeEntry` with `ScopeKind::Host` and what was typed) and
    /// how a site is written.
    pub add_host_label: String,
    pub host_hint: String,
    /// A plugin's own folder per plugin that may read files, to add to the scope; none while
    /// no plugin may read files.
    pub add_folders: Vec<Choice>,
    pub rules_label: String,
    pub rules: Vec<RuleRow>,
    pub global_rules_label: String,
    pub global_rules: Vec<RuleRow>,
    /// What rules do, said while there are none.
    pub no_rules_note: Option<String>,
    pub add_rule: RuleForm,
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
    let scope = scope_rows(lang, id, &c.scope);
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
        scope_note: scope_note(lang, &c.scope).into(),
        scope,
        add_host_label: tr(lang, "添加网站", "Add a site").into(),
        host_hint: tr(
            lang,
            "例如 pku.edu.cn（含它的子域名）、*.pku.edu.cn（只含子域名）",
            "such as pku.edu.cn (with its subdomains) or *.pku.edu.cn (subdomains only)",
        )
        .into(),
        add_folders: folder_choices(engine, lang, id, &c.scope),
        rules_label: tr(lang, "本对话的规则", "This conversation's rules").into(),
        no_rules_note: (c.rules.rules().is_empty() && engine.rules().is_empty()).then(|| {
            tr(
                lang,
                "还没有规则。规则可以禁止某个工具、每次询问或直接允许，优先于上面的预设；在下面添加，或让助手添加（放宽权限的规则会先问你）。",
                "No rules yet. A rule blocks a tool, asks every time or allows it, before the preset above; add one below, or ask the assistant to add one (one that loosens a permission asks you first).",
            )
            .into()
        }),
        rules: rows(engine, lang, c.rules.rules(), Some(id)),
        global_rules_label: tr(lang, "全局规则", "Global rules").into(),
        global_rules: rows(engine, lang, &engine.rules(), None),
        add_rule: rule_form(engine, lang, id),
    })
}

/// The scope's entries, folders first, then sites, then apps.
fn scope_rows(lang: Language, id: &str, scope: &Scope) -> Vec<ScopeRow> {
    let row = |kind: ScopeKind, value: String| ScopeRow {
        kind: match kind {
            ScopeKind::Folder => tr(lang, "文件夹", "Folder"),
            ScopeKind::Host => tr(lang, "网站", "Site"),
            ScopeKind::App => tr(lang, "应用", "App"),
        }
        .into(),
        remove: Action::SetScopeEntry {
            conversation: id.to_owned(),
            kind,
            value: value.clone(),
            on: false,
        },
        value,
    };
    scope
        .roots
        .iter()
        .map(|r| row(ScopeKind::Folder, r.display().to_string()))
        .chain(scope.hosts.iter().map(|h| row(ScopeKind::Host, h.clone())))
        .chain(scope.apps.iter().map(|a| row(ScopeKind::App, a.clone())))
        .collect()
}

/// What the scope does as it stands. An empty list narrows nothing (docs/ARCHITECTURE.md, "A
/// conversation's scope"): each plugin then reaches what its own grants allow.
fn scope_note(lang: Language, scope: &Scope) -> &'static str {
    match (scope.hosts.is_empty(), scope.roots.is_empty()) {
        (true, true) => tr(
            lang,
            "没有限定：每个插件只访问它获准的网站和文件夹。在这里添加网站或文件夹后，这个对话里的助手只能访问列出的那些。",
            "Not narrowed: each plugin reaches only the sites and folders it was granted. Once you add sites or folders here, the assistant in this conversation reaches only those listed.",
        ),
        (false, true) => tr(
            lang,
            "这个对话里的助手只能访问下面列出的网站（仍在各插件获准的范围内）；文件夹没有限定。",
            "The assistant in this conversation reaches only the sites below (still within what each plugin was granted); folders are not narrowed.",
        ),
        (true, false) => tr(
            lang,
            "这个对话里的助手只能读取下面列出的文件夹（仍在各插件获准的范围内）；网站没有限定。",
            "The assistant in this conversation reads only the folders below (still within what each plugin was granted); sites are not narrowed.",
        ),
        (false, false) => tr(
            lang,
            "这个对话里的助手只能访问下面列出的网站和文件夹（仍在各插件获准的范围内）。",
            "The assistant in this conversation reaches only the sites and folders below (still within what each plugin was granted).",
        ),
    }
}

/// Each plugin that may read files offers its own folder, unless the scope lists it already.
fn folder_choices(engine: &Engine, lang: Language, id: &str, scope: &Scope) -> Vec<Choice> {
    in_reading_order(engine, lang)
        .into_iter()
        .filter(|v| v.plugin.grants.allow_fs)
        .filter_map(|v| {
            let folder = engine.plugin_files_folder(&v.plugin.id)?;
            if scope.roots.contains(&folder) {
                return None;
            }
            let name = title(lang, &v.plugin.title, v.plugin.title_en.as_deref());
            Some(Choice {
                label: match lang {
                    Language::Zh => format!("添加「{name}」的文件夹"),
                    Language::En => format!("Add {name}'s folder"),
                },
                selected: false,
                action: Action::SetScopeEntry {
                    conversation: id.to_owned(),
                    kind: ScopeKind::Folder,
                    value: folder.display().to_string(),
                    on: true,
                },
            })
        })
        .collect()
}

/// The form that adds a rule (seed 003: deny, ask and allow rules before the preset).
fn rule_form(engine: &Engine, lang: Language, id: &str) -> RuleForm {
    let kinds = [
        (
            RuleKind::Deny,
            tr(lang, "禁止", "Block"),
            tr(
                lang,
                "助手不能用这些工具，任何预设都不例外；你自己点按仍然可以。",
                "The assistant cannot use these tools, under any preset; your own taps still can.",
            ),
        ),
        (
            RuleKind::Ask,
            tr(lang, "每次询问", "Ask every time"),
            tr(
                lang,
                "助手每次用这些工具之前都先问你，即使选了「跳过所有权限」。",
                "The assistant asks you before each use of these tools, even under \"Skip all permissions\".",
            ),
        ),
        (
            RuleKind::Allow,
            tr(lang, "允许", "Allow"),
            tr(
                lang,
                "助手用这些工具不再问你；花钱的限额、敏感操作和禁止规则仍然有效。",
                "The assistant uses these tools without asking; money limits, sensitive calls and block rules still apply.",
            ),
        ),
    ]
    .into_iter()
    .map(|(kind, label, note)| RuleKindChoice {
        kind,
        label: label.into(),
        note: note.into(),
    })
    .collect();
    let plugins = in_reading_order(engine, lang)
        .into_iter()
        .filter(|v| !v.plugin.tools.is_empty())
        .map(|v| {
            let p = &v.plugin;
            let every = RuleToolChoice {
                label: tr(lang, "所有工具", "Every tool").into(),
                tool: format!("{}.*", p.id),
            };
            let tools = p.tools.iter().filter_map(|t| {
                let tool = format!("{}.{}", p.id, t.name);
                let found = engine.tool(&tool)?;
                let name = title(lang, &found.title, found.title_en.as_deref());
                let effect = effect_words(lang, found.effect);
                Some(RuleToolChoice {
                    label: match lang {
                        Language::Zh => format!("{name}（{effect}）"),
                        Language::En => format!("{name} ({effect})"),
                    },
                    tool,
                })
            });
            RulePluginChoice {
                title: title(lang, &p.title, p.title_en.as_deref()),
                tools: std::iter::once(every).chain(tools).collect(),
            }
        })
        .collect();
    RuleForm {
        title: tr(lang, "添加规则", "Add a rule").into(),
        kind_label: tr(lang, "规则", "Rule").into(),
        kinds,
        plugin_label: tr(lang, "插件", "Plugin").into(),
        plugins,
        tool_label: tr(lang, "工具", "Tool").into(),
        place_label: tr(lang, "适用于", "Applies to").into(),
        places: vec![
            RulePlace {
                label: tr(lang, "只在这个对话", "This conversation only").into(),
                conversation: Some(id.to_owned()),
            },
            RulePlace {
                label: tr(lang, "所有对话", "Every conversation").into(),
                conversation: None,
            },
        ],
        add_label: tr(lang, "添加", "Add").into(),
    }
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
