//! The plugins: the list, one plugin's detail (its mode for each effect with where it came
//! from and the choices the user has, grants and warnings, data sources, what it needs), and
//! the preview and consent screen of a plugin about to be added.

use super::markdown::{self, TextBlock};
use super::texts::{effect_words, grant_words, kind_words, mode_words, source_words, title, tr};
use super::{Action, Button, ButtonRole, Choice, LabelValue, Route};
use crate::engine::{Engine, EngineError};
use crate::installed::{PluginView, ToolChange};
use crate::plugins::link::Preview;
use crate::policy::{Mode, ModeSource, kind_default};
use crate::registry::{Effect, PluginKind};
use crate::settings::Language;
use crate::text::one_line;

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PluginRow {
    pub id: String,
    pub title: String,
    /// What the plugin is for, in the student's language (never the instructions for the
    /// model), as plain words: its Markdown is on the plugin's page.
    pub description: String,
    pub kind: PluginKind,
    pub kind_label: String,
    pub enabled: bool,
    /// The row's switch: turns the plugin off, or on again. None for a plugin the app needs
    /// (`installed::REQUIRED`), which has no switch: `fixed` says why.
    pub toggle: Option<Action>,
    /// Why the plugin has no switch, in words; none when it has one.
    pub fixed: Option<String>,
    /// `On`, `Off`, or what it needs and the phone lacks.
    pub state_label: String,
    /// The tap that provides what it lacks (the campus sign-in, a permission), while it is on.
    pub fix: Option<Button>,
}

/// The plugins of one origin, under a heading: 校园 (the campus plugins that come with the
/// app), then the student's own, then 系统 (the app's own plugins).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PluginGroup {
    pub title: String,
    pub plugins: Vec<PluginRow>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PluginsScreen {
    pub title: String,
    /// 校园, then what the student added, then 系统; a group with no plugin is left out.
    pub groups: Vec<PluginGroup>,
    /// Plugins that could not be loaded, and why.
    pub load_errors: Vec<String>,
    pub add_label: String,
    pub link_placeholder: String,
    /// Adding a remote MCP server: its address, a name, and its token if it needs one.
    pub remote_label: String,
    pub remote_url_placeholder: String,
    pub remote_name_placeholder: String,
    pub remote_token_placeholder: String,
    /// A client id its authorization server issued for the app, for a server whose sign-in
    /// registers no app by itself (rarely needed; empty is usual).
    pub remote_client_placeholder: String,
    /// The secret issued with that client id, for a confidential client (a secret field: kept
    /// in the keystore only).
    pub remote_client_secret_placeholder: String,
    pub remote_add_label: String,
}

/// One effect's mode: where it came from and the modes the user may choose.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ModeRowView {
    pub effect: Effect,
    pub effect_label: String,
    pub mode: Mode,
    pub mode_label: String,
    pub source_label: String,
    /// Why a default the plugin asked for did not take effect (a community plugin can only
    /// make its defaults stricter, seed 000).
    pub note: Option<String>,
    pub choices: Vec<Choice>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ToolRowView {
    pub id: String,
    pub title: String,
    /// A remote server's description of the tool, marked as the server's; empty for other
    /// plugins, whose tool descriptions are written for the model.
    pub description: String,
    pub effect_label: String,
    /// A remote tool's effect may be made stricter, never looser (seed 004): only those
    /// choices are offered. Empty for other plugins' tools.
    pub reclass: Vec<Choice>,
}

/// An id under 开发者信息: what it names, and the id.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct DeveloperRow {
    pub label: String,
    pub id: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PluginDetail {
    pub id: String,
    pub title: String,
    /// What the plugin is for, as plain words (for reading aloud, and where no layout fits).
    pub description: String,
    /// The same, its Markdown laid out: headings, lists, emphasis, code, links to https pages.
    pub about: Vec<TextBlock>,
    pub kind_label: String,
    pub enabled: bool,
    pub enabled_label: String,
    /// The switch; none for a plugin the app needs, whose `fixed` says why.
    pub toggle: Option<Action>,
    pub fixed: Option<String>,
    pub modes_label: String,
    pub modes: Vec<ModeRowView>,
    pub tools_label: String,
    pub tools: Vec<ToolRowView>,
    /// A tap for each tool only the student may run (seed 004's `userOnly`, such as the card's
    /// pay code), while the plugin is on.
    pub actions: Vec<Button>,
    /// A tap for each screen the plugin declares (its data, its forms), while it is on.
    pub screens: Vec<Button>,
    /// What the plugin may reach, in seed 001's order.
    pub grant_row: String,
    pub warnings: Vec<String>,
    /// A tap for each data source it offers (`Action::OpenDataSource`), while it is on: the
    /// screen that shows it, else its value.
    pub data_sources_label: String,
    pub data_sources: Vec<Button>,
    /// What it needs that the phone does not provide now, in words.
    pub unmet: Option<String>,
    /// The tap that provides it: the campus sign-in, or the permissions screen.
    pub unmet_fix: Option<Button>,
    /// The plugin's Allow cloud switch (seed 000) and what it stores online beside it
    /// (`cloud.disclosures`, in the app's language): only for a plugin that declares some.
    pub cloud_label: Option<String>,
    pub cloud_allowed: bool,
    pub cloud_toggle: Option<Action>,
    pub disclosure: Vec<String>,
    /// The campus services it reaches, in words (seed 000: a plugin page lists them); empty
    /// for a plugin that reaches none.
    pub campus_label: String,
    pub campus: Vec<String>,
    /// For developers, apart: the plugin's and each tool's id and the exact grant row
    /// (seed 001's), which no other row of the page shows.
    pub developer_label: String,
    pub developer: Vec<DeveloperRow>,
    pub developer_grant_row: String,
    /// A remote server changed tools the student had seen: what changed, one line a tool, while
    /// the definitions they saw still stand.
    pub changed_tools: Vec<String>,
    /// Agree to the changed tools; none when nothing waits.
    pub accept_changes: Option<Button>,
    pub update: Option<Button>,
    pub remove: Option<Button>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct AddPluginScreen {
    pub preview: String,
    pub title: String,
    pub plugin: String,
    pub plugin_title: String,
    pub kind_label: String,
    pub link: String,
    /// For an update: what it asks for beyond the installed version.
    pub asks_more: Vec<String>,
    pub tools: Vec<ToolRowView>,
    /// The mode each effect starts with.
    pub modes: Vec<LabelValue>,
    pub grant_row: String,
    pub warnings: Vec<String>,
    pub data_sources: Vec<String>,
    pub disclosure: Vec<String>,
    pub requires: Vec<String>,
    pub install: Button,
    pub cancel_label: String,
}

pub(super) fn list(engine: &Engine, lang: Language) -> PluginsScreen {
    PluginsScreen {
        title: tr(lang, "插件", "Plugins").into(),
        groups: groups(engine, lang),
        load_errors: engine.load_errors(),
        add_label: tr(lang, "添加插件", "Add plugin").into(),
        link_placeholder: tr(lang, "插件链接（https://…）", "Plugin link (https://…)").into(),
        remote_label: tr(lang, "添加远程服务器（MCP）", "Add a remote server (MCP)").into(),
        remote_url_placeholder: tr(
            lang,
            "服务器地址（https://…）",
            "Server address (https://…)",
        )
        .into(),
        remote_name_placeholder: tr(
            lang,
            "名称（小写字母、数字和 -）",
            "Name (lowercase letters, digits and -)",
        )
        .into(),
        remote_token_placeholder: tr(
            lang,
            "访问令牌（需要时填写；只存在钥匙串里）",
            "Access token (if it needs one; kept in the keystore only)",
        )
        .into(),
        remote_client_placeholder: tr(
            lang,
            "客户端标识（服务器的登录要求时填写）",
            "Client ID (only if its sign-in asks for one)",
        )
        .into(),
        remote_client_secret_placeholder: tr(
            lang,
            "客户端密钥（与客户端标识 一同签发时填写；只存在钥匙串里）",
            "Client secret (if issued with the client ID; kept in the keystore only)",
        )
        .into(),
        remote_add_label: tr(lang, "连接并添加", "Connect and add").into(),
    }
}

impl PluginsScreen {
    /// Every plugin row, group after group.
    pub fn rows(&self) -> impl Iterator<Item = &PluginRow> {
        self.groups.iter().flat_map(|g| &g.plugins)
    }
}

/// The group a plugin is listed under.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Origin {
    /// Shipped with the app from plugins/: the campus services.
    Campus,
    /// What the student installed: a TypeScript or document plugin, a remote MCP server.
    Added,
    /// The core's own (`builtin::IDS`): settings, memory, files, jobs, the dashboard, time.
    System,
}

fn origin(p: &crate::registry::Plugin) -> Origin {
    match p.kind {
        PluginKind::Bundled if crate::plugins::builtin::IDS.contains(&p.id.as_str()) => {
            Origin::System
        }
        PluginKind::Bundled => Origin::Campus,
        _ => Origin::Added,
    }
}

/// The campus card leads the campus plugins: the one a student opens most (its balance, its
/// pay code).
const FIRST: &str = "wallet";

/// The installed plugins in the order the student reads them everywhere: 校园 (the campus
/// card first), then what the student added, then 系统; within each, by the title in the
/// student's language, never by the English id.
pub(super) fn in_reading_order(engine: &Engine, lang: Language) -> Vec<PluginView> {
    let mut views = engine.plugins();
    views.sort_by_cached_key(|v| {
        let p = &v.plugin;
        (
            origin(p),
            p.id != FIRST,
            title(lang, &p.title, p.title_en.as_deref()),
        )
    });
    views
}

fn groups(engine: &Engine, lang: Language) -> Vec<PluginGroup> {
    let views = in_reading_order(engine, lang);
    [
        (Origin::Campus, tr(lang, "校园", "Campus")),
        (Origin::Added, tr(lang, "你添加的", "Added by you")),
        (Origin::System, tr(lang, "系统", "System")),
    ]
    .into_iter()
    .map(|(group, heading)| PluginGroup {
        title: heading.into(),
        plugins: views
            .iter()
            .filter(|v| origin(&v.plugin) == group)
            .map(|v| row(lang, v))
            .collect(),
    })
    .filter(|g| !g.plugins.is_empty())
    .collect()
}

/// A plugin's kind as the student reads it: a campus plugin or one of the app's own by its
/// group, the others by where they came from.
fn kind_label(lang: Language, p: &crate::registry::Plugin) -> String {
    match origin(p) {
        Origin::Campus => tr(lang, "校园", "Campus").into(),
        Origin::System => tr(lang, "系统", "System").into(),
        Origin::Added => kind_words(lang, p.kind).into(),
    }
}

/// The switch of a plugin that may be turned off, else none and why it stays on.
fn switch(lang: Language, v: &PluginView) -> (Option<Action>, Option<String>) {
    let p = &v.plugin;
    match required_words(lang, &p.id) {
        Some(why) if v.enabled => (None, Some(why.into())),
        _ => (
            Some(Action::SetEnabled {
                plugin: p.id.clone(),
                enabled: !v.enabled,
            }),
            None,
        ),
    }
}

/// Why one of the app's own plugins stays on (`installed::REQUIRED`), in words.
pub(super) fn required_words(lang: Language, plugin: &str) -> Option<&'static str> {
    match plugin {
        "settings" => Some(tr(
            lang,
            "应用需要它，不能关闭：助手靠它请你登录校园账号、填写密钥和授权",
            "The app needs it, so it stays on: the assistant asks you to sign in, enter a key \
             or grant a permission through it",
        )),
        "time" => Some(tr(
            lang,
            "应用需要它，不能关闭：其他插件靠它换算第几周、第几节",
            "The app needs it, so it stays on: other plugins work out teaching weeks and class \
             periods through it",
        )),
        _ => None,
    }
}

/// A switch the core refused, in the student's words: one of the app's own plugins it needs
/// is named with why it stays on.
pub(super) fn switch_error(lang: Language, engine: &Engine, err: EngineError) -> EngineError {
    let EngineError::Required(plugin) = &err else {
        return err;
    };
    let name = engine
        .plugins()
        .into_iter()
        .find(|v| v.plugin.id == *plugin)
        .map_or_else(
            || plugin.clone(),
            |v| title(lang, &v.plugin.title, v.plugin.title_en.as_deref()),
        );
    let why = required_words(lang, plugin).unwrap_or_default();
    EngineError::Invalid(match lang {
        Language::Zh => format!("「{name}」没有关闭：{why}"),
        Language::En => format!("{name} was not turned off. {why}"),
    })
}

fn row(lang: Language, v: &PluginView) -> PluginRow {
    let p = &v.plugin;
    let (toggle, fixed) = switch(lang, v);
    PluginRow {
        id: p.id.clone(),
        title: title(lang, &p.title, p.title_en.as_deref()),
        description: markdown::plain(&title(lang, &p.description, p.description_en.as_deref())),
        kind: p.kind,
        kind_label: kind_label(lang, p),
        enabled: v.enabled,
        toggle,
        fixed,
        state_label: state_words(lang, v),
        fix: v
            .unmet
            .as_deref()
            .filter(|_| v.enabled)
            .and_then(|need| need_fix(lang, need)),
    }
}

/// "服务器改了「发帖」的说明和输入，同意前仍按你看过的版本" / "The server changed Post's
/// description and input; until you agree, the version you saw stands".
fn change_words(lang: Language, p: &crate::registry::Plugin, c: &ToolChange) -> String {
    let tool = p.tools.iter().find(|t| t.id == c.tool).map_or_else(
        || c.tool.clone(),
        |t| title(lang, &t.title, t.title_en.as_deref()),
    );
    let parts: Vec<&str> = [
        (c.title, tr(lang, "标题", "title")),
        (c.description, tr(lang, "说明", "description")),
        (c.input, tr(lang, "输入", "input")),
    ]
    .into_iter()
    .filter_map(|(on, word)| on.then_some(word))
    .collect();
    match lang {
        Language::Zh => format!(
            "服务器改了「{tool}」的{}，同意前仍按你看过的版本",
            parts.join("和")
        ),
        Language::En => format!(
            "The server changed {tool}'s {}; until you agree, the version you saw stands",
            parts.join(" and ")
        ),
    }
}

fn state_words(lang: Language, v: &PluginView) -> String {
    match (&v.unmet, v.enabled) {
        (_, false) => tr(lang, "已关闭", "Off").into(),
        (Some(need), true) => need_words(lang, need),
        (None, true) => tr(lang, "已开启", "On").into(),
    }
}

pub(super) fn detail(
    engine: &Engine,
    lang: Language,
    id: &str,
) -> Result<PluginDetail, EngineError> {
    let views = engine.plugins();
    let v = views
        .iter()
        .find(|v| v.plugin.id == id)
        .ok_or_else(|| EngineError::NoSuchPlugin(id.to_owned()))?;
    let p = &v.plugin;
    let effects: Vec<Effect> = Effect::ALL
        .into_iter()
        .filter(|e| p.tools.iter().any(|t| t.effect == *e))
        .collect();
    let modes = v
        .modes
        .iter()
        .filter(|(e, ..)| effects.contains(e))
        .map(|&(effect, mode, source)| ModeRowView {
            effect,
            effect_label: effect_words(lang, effect).into(),
            mode,
            mode_label: mode_words(lang, mode).into(),
            source_label: source_words(lang, source).into(),
            note: clamp_note(lang, v, effect, source),
            choices: [Mode::Auto, Mode::Ask, Mode::Off]
                .into_iter()
                .map(|m| Choice {
                    label: mode_words(lang, m).into(),
                    selected: m == mode,
                    action: Action::SetMode {
                        plugin: p.id.clone(),
                        effect,
                        mode: m,
                    },
                })
                .collect(),
        })
        .collect();
    let remote = p.kind == PluginKind::Remote;
    let tools = p
        .tools
        .iter()
        .map(|t| ToolRowView {
            id: t.id.clone(),
            title: title(lang, &t.title, t.title_en.as_deref()),
            // A tool's description is written for the model; only a remote server's, which
            // is all the student has to judge its tools by, is shown, marked as the server's.
            description: if remote && !t.description.is_empty() {
                format!(
                    "{}{}",
                    tr(lang, "服务器的说明：", "The server says: "),
                    t.description
                )
            } else {
                String::new()
            },
            effect_label: effect_words(lang, t.effect).into(),
            reclass: if remote {
                stricter(lang, &t.id, t.effect)
            } else {
                Vec::new()
            },
        })
        .collect();
    let from_link = engine
        .installed()
        .installed(id)
        .is_ok_and(|(_, source)| source.starts_with("https://"));
    let removable = p.kind != PluginKind::Bundled;
    let description = title(lang, &p.description, p.description_en.as_deref());
    let changed = engine.held_tools(id).map(|h| h.changed).unwrap_or_default();
    let (toggle, fixed) = switch(lang, v);
    Ok(PluginDetail {
        id: p.id.clone(),
        title: title(lang, &p.title, p.title_en.as_deref()),
        description: markdown::plain(&description),
        about: markdown::blocks(&description),
        kind_label: kind_label(lang, p),
        enabled: v.enabled,
        enabled_label: tr(lang, "启用", "Enabled").into(),
        toggle,
        fixed,
        modes_label: tr(lang, "助手权限", "AI permissions").into(),
        modes,
        tools_label: tr(lang, "工具", "Tools").into(),
        tools,
        actions: p
            .tools
            .iter()
            .filter(|t| t.user_only && v.enabled)
            .map(|t| {
                Button::new(
                    title(lang, &t.title, t.title_en.as_deref()),
                    ButtonRole::Primary,
                    Action::RunTool { tool: t.id.clone() },
                )
            })
            .collect(),
        screens: if v.enabled {
            super::plugin_screen::links(lang, p)
        } else {
            Vec::new()
        },
        grant_row: grant_words(lang, &p.grants, &|id| tool_title(engine, lang, id)),
        warnings: v.warnings.clone(),
        data_sources_label: tr(lang, "提供的数据", "Data it offers").into(),
        data_sources: if v.enabled {
            super::plugin_screen::source_links(lang, p)
        } else {
            Vec::new()
        },
        unmet: v.unmet.as_deref().map(|need| need_words(lang, need)),
        unmet_fix: v.unmet.as_deref().and_then(|need| need_fix(lang, need)),
        cloud_label: (!p.disclosure.is_empty())
            .then(|| tr(lang, "允许云端", "Allow cloud").to_owned()),
        cloud_allowed: engine.consent().cloud.contains(&p.id),
        cloud_toggle: (!p.disclosure.is_empty()).then(|| Action::SetCloudConsent {
            plugin: p.id.clone(),
            allowed: !engine.consent().cloud.contains(&p.id),
        }),
        disclosure: p.disclosure_in(lang).to_vec(),
        campus_label: tr(lang, "用到的校园服务", "Campus services it uses").into(),
        campus: p
            .scopes
            .iter()
            .map(|s| campus_words(lang, s).to_owned())
            .collect(),
        developer_label: tr(lang, "开发者信息", "Developer info").into(),
        developer: [(tr(lang, "插件标识", "Plugin id").to_owned(), p.id.clone())]
            .into_iter()
            .chain(
                p.tools
                    .iter()
                    .map(|t| (title(lang, &t.title, t.title_en.as_deref()), t.id.clone())),
            )
            .map(|(label, id)| DeveloperRow { label, id })
            .collect(),
        developer_grant_row: match lang {
            Language::Zh => crate::gates::grant_row_zh(&p.id, &p.grants),
            Language::En => v.grant_row.clone(),
        },
        changed_tools: changed.iter().map(|c| change_words(lang, p, c)).collect(),
        accept_changes: (!changed.is_empty()).then(|| {
            Button::new(
                tr(lang, "同意这些改动", "Agree to these changes").into(),
                ButtonRole::Normal,
                Action::AcceptToolChanges {
                    plugin: p.id.clone(),
                },
            )
        }),
        update: (from_link && matches!(p.kind, PluginKind::Official | PluginKind::Community)).then(
            || {
                Button::new(
                    tr(lang, "检查更新", "Check for updates").into(),
                    ButtonRole::Normal,
                    Action::UpdatePlugin {
                        plugin: p.id.clone(),
                    },
                )
            },
        ),
        remove: removable.then(|| {
            Button::new(
                tr(lang, "移除插件", "Remove plugin").into(),
                ButtonRole::Destructive,
                Action::RemovePlugin {
                    plugin: p.id.clone(),
                },
            )
        }),
    })
}

/// A `requires` entry the phone does not meet, as the student reads it: what is missing, never
/// the requirement's name.
fn need_words(lang: Language, need: &str) -> String {
    match need {
        "campus-session" => tr(lang, "需要登录校园账号", "Needs the campus sign-in").into(),
        "notifications" => tr(lang, "需要允许通知", "Needs permission to notify").into(),
        "exact-alarm" => tr(
            lang,
            "需要允许精确闹钟",
            "Needs permission for exact alarms",
        )
        .into(),
        other => match lang {
            Language::Zh => format!("这台手机没有它需要的功能（{other}）"),
            Language::En => format!("Needs a feature this phone lacks ({other})"),
        },
    }
}

/// The tap that meets a `requires` entry, where one can: the campus account's sign-in, or the
/// permissions screen (where the system's dialog is asked for, seed 000: only from a tap).
fn need_fix(lang: Language, need: &str) -> Option<Button> {
    let (label, route) = match need {
        "campus-session" => (
            tr(lang, "登录校园账号", "Sign in to the campus account"),
            Route::CampusAccount,
        ),
        "notifications" | "exact-alarm" => (
            tr(lang, "去设置权限", "Open the permissions"),
            Route::Consent,
        ),
        _ => return None,
    };
    Some(Button::new(
        label.into(),
        ButtonRole::Primary,
        Action::Open { route },
    ))
}

/// seed 000: a community document's `defaultModes` take effect only where stricter than the
/// table; say so where one did not.
fn clamp_note(
    lang: Language,
    v: &PluginView,
    effect: Effect,
    source: ModeSource,
) -> Option<String> {
    let p = &v.plugin;
    let declared = *p.default_modes.get(&effect)?;
    let ignored = match p.kind {
        PluginKind::Community => declared < kind_default(p.kind, effect),
        PluginKind::Remote => true,
        _ => false,
    };
    (ignored && source != ModeSource::User).then(|| match lang {
        Language::Zh => format!(
            "插件请求默认「{}」；{}插件的默认值只能更严格",
            mode_words(lang, declared),
            kind_words(lang, p.kind)
        ),
        Language::En => format!(
            "The plugin asks for {} by default; a {} plugin's defaults can only be stricter",
            mode_words(lang, declared),
            kind_words(lang, p.kind).to_lowercase()
        ),
    })
}

fn stricter(lang: Language, tool: &str, current: Effect) -> Vec<Choice> {
    Effect::ALL
        .into_iter()
        .filter(|e| *e >= current)
        .map(|e| Choice {
            label: effect_words(lang, e).into(),
            selected: e == current,
            action: Action::ReclassTool {
                tool: tool.to_owned(),
                effect: e,
            },
        })
        .collect()
}

pub(super) fn add(_engine: &Engine, lang: Language, preview: &Preview) -> AddPluginScreen {
    // A document from a link is third-party text: each of its words on the sheet is one line
    // with nothing invisible (`text::one_line`), as are the core's lines that name its parts.
    let lines = |texts: &[String]| -> Vec<String> {
        texts.iter().map(|t| one_line(t, usize::MAX)).collect()
    };
    AddPluginScreen {
        preview: preview.id.clone(),
        title: match preview.replaces {
            Some(_) => tr(lang, "更新插件", "Update plugin"),
            None => tr(lang, "添加插件", "Add plugin"),
        }
        .into(),
        plugin: preview.plugin.clone(),
        plugin_title: one_line(&preview.title, usize::MAX),
        kind_label: kind_words(lang, preview.kind).into(),
        link: preview.link.clone(),
        asks_more: lines(&preview.asks_more),
        tools: preview
            .tools
            .iter()
            .map(|t| ToolRowView {
                id: t.id.clone(),
                title: one_line(&t.title, usize::MAX),
                description: one_line(
                    &match &t.request {
                        Some(request) => format!("{} · {request}", t.description),
                        None => t.description.clone(),
                    },
                    usize::MAX,
                ),
                effect_label: effect_words(lang, t.effect).into(),
                reclass: Vec::new(),
            })
            .collect(),
        modes: preview
            .modes
            .iter()
            .map(|&(e, m)| LabelValue {
                label: effect_words(lang, e).into(),
                value: mode_words(lang, m).into(),
            })
            .collect(),
        grant_row: one_line(
            &grant_words(lang, &preview.grants, &|id| tool_title(_engine, lang, id)),
            usize::MAX,
        ),
        warnings: lines(&preview.warnings),
        data_sources: preview
            .data_sources
            .iter()
            .map(|d| one_line(&d.title, usize::MAX))
            .collect(),
        disclosure: lines(match lang {
            Language::En if !preview.disclosure_en.is_empty() => &preview.disclosure_en,
            _ => &preview.disclosure,
        }),
        requires: lines(&preview.requires),
        install: Button::new(
            match preview.replaces {
                Some(_) => tr(lang, "同意并更新", "Agree and update"),
                None => tr(lang, "同意并安装", "Agree and install"),
            }
            .into(),
            ButtonRole::Primary,
            Action::InstallPreview {
                preview: preview.id.clone(),
            },
        ),
        cancel_label: tr(lang, "取消", "Cancel").into(),
    }
}

/// A tool another plugin's grant names, by its title where it is installed, else its id.
fn tool_title(engine: &Engine, lang: Language, id: &str) -> String {
    engine.tool(id).map_or_else(
        || id.to_owned(),
        |t| title(lang, &t.title, t.title_en.as_deref()),
    )
}

/// A campus service a plugin's scope names, in words.
fn campus_words(lang: Language, scope: &str) -> &'static str {
    match scope {
        "public" => tr(lang, "公开信息（无需登录）", "public pages (no sign-in)"),
        "library" => tr(lang, "图书馆", "the library"),
        other => crate::scheduler::notice::service_words(lang, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_tool_is_offered_only_stricter_effects() {
        let choices = stricter(Language::En, "mcp-forum.post", Effect::Write);
        let shown: Vec<(&str, bool)> = choices
            .iter()
            .map(|c| (c.label.as_str(), c.selected))
            .collect();
        assert_eq!(
            shown,
            [("write", true), ("money", false), ("public", false)]
        );
        assert_eq!(
            choices[2].action,
            Action::ReclassTool {
                tool: "mcp-forum.post".into(),
                effect: Effect::Public
            }
        );
    }
}
