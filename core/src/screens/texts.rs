//! The words of the screens in the two languages the app speaks. Each label sits where it is
//! used, as a `tr(lang, zh, en)` pair, so a screen reads whole in either language.

use crate::consent::{Permission, PermissionState};
use crate::gates::Grants;
use crate::policy::{Answer, Code, ModeSource, Preset};
use crate::registry::PluginKind;
use crate::settings::Language;

pub(crate) use crate::why::{effect_words, mode_words, possessive};

/// The Chinese or the English of one label.
pub(crate) fn tr(lang: Language, zh: &'static str, en: &'static str) -> &'static str {
    match lang {
        Language::Zh => zh,
        Language::En => en,
    }
}

/// A title the plugin gives in Chinese, with its English one where it has one.
pub(crate) fn title(lang: Language, zh: &str, en: Option<&str>) -> String {
    match (lang, en) {
        (Language::En, Some(en)) => en.to_owned(),
        _ => zh.to_owned(),
    }
}

pub(crate) fn kind_words(lang: Language, kind: PluginKind) -> &'static str {
    match kind {
        PluginKind::Bundled => tr(lang, "内置", "Built in"),
        PluginKind::Official => tr(lang, "官方", "Official"),
        PluginKind::Community => tr(lang, "社区", "Community"),
        PluginKind::Remote => tr(lang, "远程服务", "Remote server"),
    }
}

pub(crate) fn source_words(lang: Language, source: ModeSource) -> &'static str {
    match source {
        ModeSource::KindDefault => tr(lang, "默认", "Default"),
        ModeSource::PluginDefault => tr(lang, "插件设定", "Set by the plugin"),
        ModeSource::User => tr(lang, "你设定的", "Set by you"),
    }
}

pub(crate) fn answer_words(lang: Language, answer: Answer) -> &'static str {
    match answer {
        Answer::Allow => tr(lang, "允许", "Allow"),
        Answer::Deny => tr(lang, "拒绝", "Deny"),
        Answer::AlwaysAllow => tr(lang, "始终允许", "Always allow"),
        Answer::AlwaysAllowConversation => tr(lang, "本次对话都允许", "Allow in this conversation"),
        Answer::AlwaysAllowToday => tr(lang, "今天都允许", "Allow for today"),
        Answer::AllowOnce => tr(lang, "仅允许这一次", "Allow once"),
        Answer::DontAllow => tr(lang, "不允许", "Don't allow"),
    }
}

pub(crate) fn preset_words(lang: Language, preset: Preset) -> &'static str {
    match preset {
        Preset::SkipAll => tr(lang, "跳过所有权限", "Skip all permissions"),
        Preset::AutoEdit => tr(lang, "自动编辑", "Auto-edit"),
        Preset::AskEveryTime => tr(lang, "每次都询问", "Ask every time"),
    }
}

pub(crate) fn permission_words(lang: Language, permission: Permission) -> &'static str {
    match permission {
        Permission::Notifications => tr(lang, "通知", "Notifications"),
        Permission::ExactAlarm => tr(
            lang,
            "准时提醒（精确闹钟）",
            "Exact reminders (exact alarms)",
        ),
    }
}

pub(crate) fn permission_state_words(lang: Language, state: PermissionState) -> &'static str {
    match state {
        PermissionState::Unknown => tr(lang, "尚未询问", "Not asked yet"),
        PermissionState::Granted => tr(lang, "已允许", "Allowed"),
        PermissionState::Denied => tr(lang, "已拒绝", "Denied"),
    }
}

/// What a plugin may reach (seed 001's grants, in its fixed order: files, network, store,
/// context, tools, starting conversations), in the student's words; the exact row
/// (`allow_store, allow_context`) stays the CLI's and the developers'. `tool` names a tool
/// another plugin's grant lets it call.
pub(crate) fn grant_words(
    lang: Language,
    grants: &Grants,
    tool: &dyn Fn(&str) -> String,
) -> String {
    let mut reach: Vec<String> = Vec::new();
    if grants.allow_fs {
        reach.push(tr(lang, "读写文件", "files").into());
    }
    if grants.allow_network {
        // seed 001: an empty list and a star must not look the same to someone scanning.
        let hosts = grants.url_allowlist.join(tr(lang, "、", ", "));
        reach.push(
            match (
                grants.url_allowlist.is_empty(),
                grants.url_allowlist.iter().any(|h| h == "*"),
            ) {
                (true, _) => tr(
                    lang,
                    "联网（未列出地址，哪里也去不了）",
                    "the network (no address listed: it reaches nothing)",
                )
                .into(),
                (_, true) => tr(lang, "联网（任何网站）", "the network (any site)").into(),
                _ => match lang {
                    Language::Zh => format!("联网（{hosts}）"),
                    Language::En => format!("the network ({hosts})"),
                },
            },
        );
    }
    if grants.allow_store {
        reach.push(tr(lang, "自己的存储", "its own storage").into());
    }
    if grants.allow_context {
        reach.push(tr(lang, "当前对话的内容", "the conversation it is called in").into());
    }
    if !grants.allow_tools.is_empty() {
        let tools: Vec<String> = grants.allow_tools.iter().map(|id| tool(id)).collect();
        reach.push(match lang {
            Language::Zh => format!("调用其他插件的工具（{}）", tools.join("、")),
            Language::En => format!("other plugins' tools ({})", tools.join(", ")),
        });
    }
    if grants.allow_send_message {
        reach.push(
            tr(
                lang,
                "代你发起对话（会产生模型费用）",
                "starting conversations for you (billed model turns)",
            )
            .into(),
        );
    }
    match (reach.is_empty(), lang) {
        (true, _) => tr(lang, "不需要额外的访问权限", "Needs no extra access").into(),
        (false, Language::Zh) => format!("可以使用：{}", reach.join("、")),
        (false, Language::En) => format!("May use: {}", reach.join(", ")),
    }
}

/// A refusal as the user reads it in the chat; the agent reads the longer message.
pub(crate) fn refusal_words(lang: Language, code: Code) -> &'static str {
    match code {
        Code::Unavailable => tr(lang, "工具不可用", "The tool is not available"),
        Code::TermsNotAccepted => tr(lang, "尚未同意使用条款", "The terms are not accepted yet"),
        Code::UserOnly => tr(lang, "只能由你亲自操作", "Only you can start this"),
        Code::InvalidInput => tr(lang, "输入无效", "The input is invalid"),
        Code::DeniedByRule => tr(lang, "被禁止规则拦下", "Blocked by a deny rule"),
        Code::Blocked => tr(lang, "这类操作已关闭", "This kind of action is turned off"),
        Code::SchedulerReadOnly => tr(lang, "定时任务只能读取", "Scheduled runs only read"),
        Code::Declined => tr(lang, "你拒绝了这次操作", "You declined this"),
        Code::PlanMode => tr(lang, "计划模式下只运行读取", "Plan mode runs only reads"),
        Code::OutOfScope => tr(
            lang,
            "超出了本对话的范围",
            "Outside this conversation's scope",
        ),
        Code::Tainted => tr(
            lang,
            "本轮读取过不可信内容，不能放宽权限",
            "This turn read untrusted content; it may not loosen a permission",
        ),
        Code::OverLimit => tr(lang, "超出了你设的花钱限额", "Over your money limit"),
    }
}

/// A time as the user's clock shows it, in the settings' time zone.
pub(crate) fn local_time(zone: &str, at_ms: i64) -> String {
    use chrono::TimeZone;
    let tz = crate::zone::Zone::named_or_campus(zone);
    match tz.timestamp_millis_opt(at_ms) {
        chrono::LocalResult::Single(t) => t.format("%Y-%m-%d %H:%M").to_string(),
        _ => String::new(),
    }
}
