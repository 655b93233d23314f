//! Why a call was decided as it was, as a value, and its words in the user's language: the
//! approval sheet, the chat, the CLI and the audit all say the same (zh and en).

use crate::policy::{Mode, RuleKind, RuleScope};
use crate::registry::Effect;
use crate::settings::Language;

/// The rule that decided, as the user wrote it, and where it sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleAt {
    pub pattern: String,
    pub scope: RuleScope,
    pub index: u32,
}

/// The deciding step of a decision (DESIGN.md §3), with the facts its words need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    Unreachable,
    UserOnly,
    InvalidInput,
    /// A rule of this kind decided; without one, the tool's own check did.
    Rule {
        kind: RuleKind,
        rule: Option<RuleAt>,
    },
    ModeOff {
        plugin: String,
        effect: Effect,
    },
    ScheduledRead,
    SchedulerReadOnly {
        effect: Effect,
    },
    OwnScopeCheck,
    NobodyToAsk,
    UserTap,
    PlanMode,
    AlwaysAsks,
    SkipAll,
    /// A protected change (DESIGN.md §3 8e), in a tainted turn or not.
    Loosens {
        tainted: bool,
    },
    /// A money or public call after untrusted content.
    TaintedCall {
        effect: Effect,
    },
    OwnCheckAllows,
    AskEveryTime,
    Mode {
        plugin: String,
        effect: Effect,
        mode: Mode,
    },
}

/// An effect as the user reads it.
pub fn effect_words(lang: Language, effect: Effect) -> &'static str {
    match (lang, effect) {
        (Language::Zh, Effect::Read) => "读取",
        (Language::Zh, Effect::Write) => "写入",
        (Language::Zh, Effect::Money) => "花钱",
        (Language::Zh, Effect::Public) => "公开发布",
        (Language::En, effect) => effect.as_str(),
    }
}

/// A mode as the user reads it.
pub fn mode_words(lang: Language, mode: Mode) -> &'static str {
    match (lang, mode) {
        (Language::Zh, Mode::Auto) => "自动",
        (Language::Zh, Mode::Ask) => "询问",
        (Language::Zh, Mode::Off) => "关闭",
        (Language::En, mode) => mode.as_str(),
    }
}

impl Why {
    /// The words for the user and the audit. English is the audit's language.
    pub fn text(&self, lang: Language) -> String {
        match lang {
            Language::En => self.english(),
            Language::Zh => self.chinese(),
        }
    }

    fn english(&self) -> String {
        match self {
            Why::Unreachable => "the tool cannot be reached".into(),
            Why::UserOnly => "only the user may start this tool".into(),
            Why::InvalidInput => "the input does not match the tool's schema".into(),
            Why::Rule { kind, rule } => {
                let article = if *kind == RuleKind::Deny { "a" } else { "an" };
                match rule {
                    Some(at) => format!(
                        "{article} {} rule {} ({} rules[{}])",
                        kind.as_str(),
                        at.pattern,
                        scope_name(at.scope),
                        at.index
                    )
                    .to_lowercase(),
                    None => format!("{article} {} tool check", kind.as_str()),
                }
            }
            Why::ModeOff { plugin, effect } => format!("{plugin}'s mode for {effect} is off"),
            Why::ScheduledRead => "a scheduled read that needs nobody's approval".into(),
            Why::SchedulerReadOnly { effect } => {
                format!("scheduled runs only read, and this is a {effect} tool")
            }
            Why::OwnScopeCheck => "the tool's own scope check refused".into(),
            Why::NobodyToAsk => {
                "this call would need the user's approval, and nobody is there to ask".into()
            }
            Why::UserTap => "a tap is never questioned".into(),
            Why::PlanMode => "plan mode runs only reads".into(),
            Why::AlwaysAsks => "this tool asks on every call".into(),
            Why::SkipAll => "the preset is \"Skip all permissions\"".into(),
            Why::Loosens { tainted: true } => {
                "this change loosens a permission, and this turn has read untrusted content".into()
            }
            Why::Loosens { tainted: false } => "this change loosens a permission".into(),
            Why::TaintedCall { effect } => {
                format!("this turn has read untrusted content, and this is a {effect} call")
            }
            Why::OwnCheckAllows => "the tool's own check allows it".into(),
            Why::AskEveryTime => "the preset is \"Ask every time\"".into(),
            Why::Mode {
                plugin,
                effect,
                mode,
            } => format!("{plugin}'s mode for {effect} is {mode}"),
        }
    }

    fn chinese(&self) -> String {
        let zh = Language::Zh;
        match self {
            Why::Unreachable => "无法使用这个工具".into(),
            Why::UserOnly => "这个工具只能由你亲自启动".into(),
            Why::InvalidInput => "输入不符合工具的格式要求".into(),
            Why::Rule { kind, rule } => {
                let kind = match kind {
                    RuleKind::Deny => "禁止",
                    RuleKind::Ask => "询问",
                    RuleKind::Allow => "允许",
                };
                match rule {
                    Some(at) => {
                        let scope = match at.scope {
                            RuleScope::Global => "全局",
                            RuleScope::Conversation => "本对话",
                        };
                        format!(
                            "{scope}的{kind}规则 {}（第 {} 条）",
                            at.pattern,
                            at.index + 1
                        )
                    }
                    None => format!("工具自身的{kind}检查"),
                }
            }
            Why::ModeOff { plugin, effect } => {
                format!("{plugin} 的「{}」权限已关闭", effect_words(zh, *effect))
            }
            Why::ScheduledRead => "定时任务的读取无需批准".into(),
            Why::SchedulerReadOnly { effect } => format!(
                "定时任务只能读取，而这是一个「{}」工具",
                effect_words(zh, *effect)
            ),
            Why::OwnScopeCheck => "超出了工具自身的范围检查".into(),
            Why::NobodyToAsk => "这次调用需要你批准，但定时任务运行时没有人可以询问".into(),
            Why::UserTap => "你亲自点击的操作不会被询问".into(),
            Why::PlanMode => "计划模式下只运行读取".into(),
            Why::AlwaysAsks => "这个工具每次调用都会询问".into(),
            Why::SkipAll => "当前预设为「跳过所有权限」".into(),
            Why::Loosens { tainted: true } => {
                "这项更改会放宽权限，而本轮对话读取过不可信的内容".into()
            }
            Why::Loosens { tainted: false } => "这项更改会放宽权限".into(),
            Why::TaintedCall { effect } => format!(
                "本轮对话读取过不可信的内容，而这是一次「{}」调用",
                effect_words(zh, *effect)
            ),
            Why::OwnCheckAllows => "工具自身的检查允许这次调用".into(),
            Why::AskEveryTime => "当前预设为「每次都询问」".into(),
            Why::Mode {
                plugin,
                effect,
                mode,
            } => format!(
                "{plugin} 的「{}」权限为「{}」",
                effect_words(zh, *effect),
                mode_words(zh, *mode)
            ),
        }
    }
}

fn scope_name(scope: RuleScope) -> &'static str {
    match scope {
        RuleScope::Global => "global",
        RuleScope::Conversation => "conversation",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_reason_names_the_pattern_and_its_place_in_both_languages() {
        let why = Why::Rule {
            kind: RuleKind::Ask,
            rule: Some(RuleAt {
                pattern: "wallet.Recharge".into(),
                scope: RuleScope::Conversation,
                index: 0,
            }),
        };
        assert_eq!(
            why.text(Language::En),
            "an ask rule wallet.recharge (conversation rules[0])"
        );
        assert_eq!(
            why.text(Language::Zh),
            "本对话的询问规则 wallet.Recharge（第 1 条）"
        );
    }

    #[test]
    fn a_mode_reason_reads_in_the_users_language() {
        let why = Why::Mode {
            plugin: "wallet".into(),
            effect: Effect::Money,
            mode: Mode::Ask,
        };
        assert_eq!(why.text(Language::En), "wallet's mode for money is ask");
        assert_eq!(why.text(Language::Zh), "wallet 的「花钱」权限为「询问」");
    }
}
