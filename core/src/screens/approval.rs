//! The approval sheet: what the user is asked, about which call, and exactly the answers the
//! decision offers (DESIGN.md §3 8c and 8i: a tainted turn's prompt offers no "Always allow").

use serde_json::Value;

use super::ButtonRole;
use super::allowances::scope_words;
use super::results::{declared_value_words, field_label, split_words, value_words};
use super::texts::{answer_words, effect_words, local_time, possessive, title, tr};
use crate::engine::Engine;
use crate::invoke::{Prompt, yuan};
use crate::policy::{AllowanceScope, Answer, PromptKind};
use crate::registry::{Effect, PluginKind, Tool};
use crate::settings::Language;
use crate::text::{json_shown, one_line};
use crate::why::Why;

/// One answer the sheet offers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct AnswerButton {
    pub answer: Answer,
    pub label: String,
    pub role: ButtonRole,
    /// What this answer changes beyond this call, in words ("Always allow" only).
    pub consequence: Option<String>,
}

/// One top-level input field of the call, as shown.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct InputRow {
    pub name: String,
    /// The value as JSON text (a string without its quotes).
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ApprovalSheet {
    pub kind: PromptKind,
    /// The sheet's question.
    pub title: String,
    /// The target for alwaysAsk and targeted tools; the tool's title otherwise.
    pub headline: String,
    pub plugin_title: String,
    pub tool_title: String,
    pub effect: Effect,
    pub effect_label: String,
    /// The call's exact inputs, field by field, and whole (pretty JSON).
    pub inputs: Vec<InputRow>,
    pub input_json: String,
    pub reason_label: String,
    /// Why the user is asked, in their language.
    pub reason: String,
    /// Exactly the answers the decision offers, in order.
    pub answers: Vec<AnswerButton>,
    /// Where "Always allow" is offered on an ordinary prompt, how long it holds: 本次对话
    /// (when the call is in one) / 今天 / 一直, each saying what it changes (DESIGN.md §3). A
    /// grant's and a tainted turn's prompt offer none.
    pub always_scopes: Vec<AnswerButton>,
    /// The tool's title comes from a remote (MCP) server, third-party text (DESIGN.md §5): the
    /// sheet shows `words_from_server_label` beside it.
    pub words_from_server: bool,
    pub words_from_server_label: String,
    /// In a tainted turn only: that this conversation read text written by others, and that
    /// this is why "Always allow" is not offered (DESIGN.md §3 8e, 8i).
    pub tainted_note: Option<String>,
    /// The server says the tool may delete or overwrite what it acts on (MCP's
    /// `destructiveHint`, which is the default for a tool that is not read-only).
    pub destructive_note: Option<String>,
}

/// The notification an ask posts when the app is not in front (issue 41.3): what waits and
/// for which tool, never the call's inputs, since it may show on a locked screen. Its tap opens
/// the sheet only after unlock (Android `setAuthenticationRequired(true)`, iOS
/// `.authenticationRequired`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ApprovalNotice {
    pub title: String,
    pub body: String,
    /// Whether the notification may carry Allow / Deny of its own. A money or public call, and
    /// any prompt that offers more than Allow / Deny, is answered on the sheet only.
    pub answerable_there: bool,
}

pub(super) fn notice(engine: &Engine, lang: Language, prompt: &Prompt) -> ApprovalNotice {
    let sheet = build(engine, lang, prompt);
    ApprovalNotice {
        title: match lang {
            Language::Zh => format!(
                "助手在等你确认：{} · {}",
                sheet.plugin_title, sheet.tool_title
            ),
            Language::En => format!(
                "The assistant is waiting for you: {} · {}",
                sheet.plugin_title, sheet.tool_title
            ),
        },
        body: tr(lang, "解锁后查看并回答", "Unlock to see and answer").into(),
        answerable_there: !matches!(prompt.effect, Effect::Money | Effect::Public)
            && prompt.kind == PromptKind::Confirm,
    }
}

/// The ongoing notification while a turn runs with the app not in front (issue 41.5): that the
/// assistant is working, and nothing of what it works on. A conversation's title is the
/// headline of the student's first message unless they renamed it, so neither it nor any
/// message or input is in it: a locked screen shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct TurnNotice {
    pub title: String,
    pub body: String,
}

pub(super) fn turn_notice(lang: Language) -> TurnNotice {
    TurnNotice {
        title: tr(
            lang,
            "助手正在处理你的请求",
            "The assistant is working on your request",
        )
        .into(),
        body: tr(lang, "点开应用查看进度", "Open the app to follow it").into(),
    }
}

pub(super) fn build(engine: &Engine, lang: Language, prompt: &Prompt) -> ApprovalSheet {
    let tool = engine.tool(&prompt.tool);
    // One lookup in the registry: a prompt needs its plugin's titles, not every plugin's view.
    let plugin = engine
        .installed()
        .read(|s| s.registry.plugin(&prompt.plugin).cloned());
    let words_from_server = plugin
        .as_ref()
        .map_or(prompt.plugin.starts_with("mcp-"), |p| {
            p.kind == PluginKind::Remote
        });
    // Every text a plugin, a server or a call wrote is shown on one line with nothing invisible
    // (`text::one_line`), so none can add a line to the sheet or make it read backwards.
    let plugin_title = one_line(
        &plugin.map_or(prompt.plugin_title.clone(), |p| {
            title(lang, &p.title, p.title_en.as_deref())
        }),
        usize::MAX,
    );
    let tool_title = one_line(
        &tool.as_ref().map_or(prompt.tool_title.clone(), |t| {
            title(lang, &t.title, t.title_en.as_deref())
        }),
        usize::MAX,
    );
    // DESIGN.md §3 8e: a payment's headline is its amount in 元 and its payee. Otherwise a
    // target is the call's own words, and without one the headline is the tool's title.
    let headline = match (prompt.amount_fen, &prompt.payee) {
        (Some(fen), Some(payee)) => match lang {
            Language::Zh => format!("付款 {} 元给 {}", yuan(fen), one_line(payee, usize::MAX)),
            Language::En => format!("Pay {} yuan to {}", yuan(fen), one_line(payee, usize::MAX)),
        },
        (Some(fen), None) => match lang {
            Language::Zh => format!("付款 {} 元", yuan(fen)),
            Language::En => format!("Pay {} yuan", yuan(fen)),
        },
        _ if prompt.headline == prompt.tool_title => tool_title.clone(),
        _ => one_line(&prompt.headline, usize::MAX),
    };
    // Each input by the words the plugin gives its field, its value by its type: money in 元,
    // a time on the student's clock (never a JSON key or a raw number of milliseconds).
    let zone = engine.settings().time_zone;
    let schema = tool.as_ref().map(|t| t.input.source());
    let inputs = match &prompt.input {
        Value::Object(fields) => fields
            .iter()
            .map(|(name, value)| InputRow {
                name: one_line(
                    &field_label(lang, name, tool.as_deref(), schema),
                    usize::MAX,
                ),
                value: one_line(
                    &input_value(lang, &zone, tool.as_deref(), &prompt.input, name, value),
                    usize::MAX,
                ),
            })
            .collect(),
        _ => Vec::new(),
    };
    let question = match prompt.kind {
        PromptKind::Grant | PromptKind::GrantOnce => {
            tr(lang, "要授予这项访问吗？", "Grant this access?")
        }
        _ => tr(lang, "允许这次操作吗？", "Allow this action?"),
    };
    // Allow is the primary answer, Deny a plain one; "Always allow" has a role of its own and
    // says what it changes, so that one slip cannot set a permission for good unawares.
    let answers = prompt
        .offers
        .iter()
        .map(|&answer| AnswerButton {
            answer,
            label: answer_words(lang, answer).into(),
            role: match answer {
                Answer::Deny | Answer::DontAllow => ButtonRole::Normal,
                Answer::AlwaysAllow
                | Answer::AlwaysAllowConversation
                | Answer::AlwaysAllowToday => ButtonRole::Permanent,
                Answer::Allow | Answer::AllowOnce => ButtonRole::Primary,
            },
            consequence: (answer == Answer::AlwaysAllow)
                .then(|| always_allow_changes(lang, prompt, &plugin_title)),
        })
        .collect();
    let always_scopes = match prompt.kind {
        PromptKind::Ordinary if prompt.offers.contains(&Answer::AlwaysAllow) => AllowanceScope::ALL
            .into_iter()
            .filter(|s| *s != AllowanceScope::Conversation || prompt.conversation.is_some())
            .map(|scope| AnswerButton {
                answer: scope.answer(),
                label: scope_words(lang, scope).into(),
                role: ButtonRole::Permanent,
                consequence: Some(match scope {
                    AllowanceScope::Always => always_allow_changes(lang, prompt, &plugin_title),
                    _ => scoped_changes(lang, scope, prompt.effect, &plugin_title),
                }),
            })
            .collect(),
        _ => Vec::new(),
    };
    // The student reads the plugin's title; the agent and the audit keep `prompt.reason`.
    let reason = prompt.why.text_for_user(lang, &plugin_title);
    ApprovalSheet {
        kind: prompt.kind,
        title: question.into(),
        headline,
        plugin_title,
        tool_title,
        effect: prompt.effect,
        effect_label: effect_words(lang, prompt.effect).into(),
        inputs,
        input_json: json_shown(&prompt.input),
        reason_label: tr(lang, "为什么询问你", "Why you are asked").into(),
        reason,
        answers,
        always_scopes,
        words_from_server,
        words_from_server_label: tr(
            lang,
            "以下文字来自服务器",
            "These words come from the server",
        )
        .into(),
        tainted_note: prompt
            .tainted
            .then(|| tainted_note(lang, &prompt.why).into()),
        destructive_note: tool.as_ref().filter(|t| t.destructive).map(|_| {
            tr(
                lang,
                "服务器说明：这个工具可能删除或覆盖数据",
                "The server says this tool may delete or overwrite data",
            )
            .into()
        }),
    }
}

/// An input's value as the student reads it: the declared amount in 元, a number in a field
/// named in yuan or fen as 元, a time in milliseconds (a field named `…AtMs`) on the student's
/// clock, yes or no, a list or an object in words; text as it is.
fn input_value(
    lang: Language,
    zone: &str,
    tool: Option<&Tool>,
    input: &Value,
    name: &str,
    value: &Value,
) -> String {
    let in_yuan = |fen: u64| match lang {
        Language::Zh => format!("{} 元", yuan(fen)),
        Language::En => format!("{} yuan", yuan(fen)),
    };
    let declared = tool.filter(|t| t.amount.as_ref().is_some_and(|a| a.field == name));
    if let Some(Some(Ok(fen))) = declared.map(|t| t.amount_fen(input)) {
        return in_yuan(fen);
    }
    let words = split_words(name);
    let last = words.last().map(String::as_str);
    match (value, last) {
        (Value::Number(n), Some("yuan")) if n.as_f64().is_some_and(|y| y >= 0.0) => {
            let fen = (n.as_f64().unwrap_or_default() * 100.0).round();
            in_yuan(fen as u64)
        }
        (Value::Number(n), Some("fen")) if n.as_u64().is_some() => {
            in_yuan(n.as_u64().unwrap_or_default())
        }
        (Value::Number(n), Some("ms"))
            if words.len() >= 2 && words[words.len() - 2] == "at" && n.as_i64().is_some() =>
        {
            local_time(zone, n.as_i64().unwrap_or_default())
        }
        (Value::String(text), _) => {
            declared_value_words(lang, tool, name, text).unwrap_or_else(|| text.clone())
        }
        _ => value_words(lang, value),
    }
}

/// What "Always allow" changes, in words. A grant tool's answer reaches the tool as a standing
/// grant and changes no mode (DESIGN.md §3 8c); an ordinary prompt's sets the plugin's mode for
/// the effect to auto (8i), which stops the asking only when the mode was what asked: an ask
/// rule, the "Ask every time" preset or a protected change still asks.
fn always_allow_changes(lang: Language, prompt: &Prompt, plugin: &str) -> String {
    if matches!(prompt.kind, PromptKind::Grant | PromptKind::GrantOnce) {
        return match lang {
            Language::Zh => format!("一直授予 {plugin} 这项访问，不只这一次；不改变任何权限设置"),
            Language::En => format!(
                "Grants {plugin} this access for good, not just this once; no permission setting changes"
            ),
        };
    }
    let effect = prompt.effect;
    let name = effect_words(lang, effect);
    if !matches!(prompt.why, Why::Mode { .. }) {
        return match lang {
            Language::Zh => {
                format!("{plugin} 的「{name}」权限将设为「自动」；符合上面原因的操作仍会询问你")
            }
            Language::En => format!(
                "Sets {} {name} permission to auto; calls the reason above covers still ask you",
                possessive(plugin)
            ),
        };
    }
    match lang {
        Language::Zh => {
            let asked = match effect {
                Effect::Read => format!("以后 {plugin} 的读取操作不再询问"),
                Effect::Write => format!("以后 {plugin} 的写入操作不再询问"),
                Effect::Money => format!("以后 {plugin} 花钱不再询问"),
                Effect::Public => format!("以后 {plugin} 公开发布内容不再询问"),
            };
            format!("{asked}（「{name}」权限设为「自动」）")
        }
        Language::En => {
            let whose = possessive(plugin);
            let asked = match effect {
                Effect::Read => format!("Don't ask again for {whose} reads"),
                Effect::Write => format!("Don't ask again for {whose} writes"),
                Effect::Money => format!("Don't ask again for {whose} payments"),
                Effect::Public => format!("Don't ask again for {whose} public posts"),
            };
            format!("{asked} (its {name} permission becomes auto)")
        }
    }
}

/// What an "Always allow" for this conversation or today changes, in words: no mode changes,
/// and it ends by itself.
fn scoped_changes(lang: Language, scope: AllowanceScope, effect: Effect, plugin: &str) -> String {
    let name = effect_words(lang, effect);
    match (lang, scope) {
        (Language::Zh, AllowanceScope::Conversation) => {
            format!("只在这次对话里，{plugin} 的「{name}」操作不再询问；别的对话照常询问")
        }
        (Language::Zh, _) => format!("今天之内 {plugin} 的「{name}」操作不再询问；明天起照常询问"),
        (Language::En, AllowanceScope::Conversation) => format!(
            "In this conversation only, {} {name} calls stop asking; other conversations still ask",
            possessive(plugin)
        ),
        (Language::En, _) => format!(
            "Until today ends, {} {name} calls stop asking; from tomorrow they ask again",
            possessive(plugin)
        ),
    }
}

/// Why a tainted turn's sheet offers nothing lasting (DESIGN.md §3): an injected instruction
/// must never be one tap away from a permanent change. A money or public call asks for that
/// reason alone (8e); any other asked for its own reason, and the taint only took "Always
/// allow" away.
fn tainted_note(lang: Language, why: &Why) -> &'static str {
    match why {
        Why::TaintedCall { .. } => tr(
            lang,
            "这轮对话读过别人写的文字（网页、帖子或文档），其中可能藏着冒充你的指令：所以花钱或公开发布之前都会问你，也不提供「始终允许」。",
            "This conversation has read text written by others (a page, a post or a document) that may carry instructions posing as yours: so you are asked before it spends money or posts in public, and \"Always allow\" is not offered.",
        ),
        _ => tr(
            lang,
            "这轮对话读过别人写的文字（网页、帖子或文档），其中可能藏着冒充你的指令：所以这里不提供「始终允许」。",
            "This conversation has read text written by others (a page, a post or a document) that may carry instructions posing as yours: so \"Always allow\" is not offered.",
        ),
    }
}
