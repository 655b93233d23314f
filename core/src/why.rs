//! Why a call was decided as it was, as a value, and its words in the user's language: the
//! approval sheet, the chat, the CLI and the audit all say the same (zh and en).

use crate::policy::{Limit, Mode, RuleKind, RuleScope};
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
    /// A money call past the student's limit (DESIGN.md §3 8e).
    OverLimit {
        limit: Limit,
    },
    /// A money call to a payee never paid before (DESIGN.md §3 8e).
    NewPayee,
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

/// A name with the English possessive: "Kiosk's", "Canteens'".
pub fn possessive(name: &str) -> String {
    if name.ends_with('s') {
        format!("{name}'")
    } else {
        format!("{name}'s")
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

/// How the words name the call's plugin and the rule that decided.
#[derive(Clone, Copy)]
enum Naming<'a> {
    /// By ids and patterns, as the agent and the audit read them.
    Ids,
    /// As the user reads them on a screen: the plugin by its title, a rule by what it covers,
    /// never an id (a student does not know the plugin `canteen` by its id).
    Titles { plugin: &'a str },
}

impl Naming<'_> {
    fn plugin<'s>(&'s self, id: &'s str) -> &'s str {
        match self {
            Naming::Ids => id,
            Naming::Titles { plugin } => plugin,
        }
    }

    /// The plugin's English possessive; the audit's words keep their old form.
    fn plugins(&self, id: &str) -> String {
        match self {
            Naming::Ids => format!("{id}'s"),
            Naming::Titles { plugin } => possessive(plugin),
        }
    }
}

impl Why {
    /// The words for the agent and the audit: plugins and rules by their ids. English is the
    /// audit's language.
    pub fn text(&self, lang: Language) -> String {
        self.words(lang, Naming::Ids)
    }

    /// The words the user reads on a screen, naming the call's plugin by `plugin_title` (its
    /// title in the user's language) and a rule by what it covers: no id, no pattern.
    pub fn text_for_user(&self, lang: Language, plugin_title: &str) -> String {
        self.words(
            lang,
            Naming::Titles {
                plugin: plugin_title,
            },
        )
    }

    fn words(&self, lang: Language, naming: Naming<'_>) -> String {
        match lang {
            Language::En => self.english(naming),
            Language::Zh => self.chinese(naming),
        }
    }

    fn english(&self, naming: Naming<'_>) -> String {
        match self {
            Why::Unreachable => "the tool cannot be reached".into(),
            Why::UserOnly => "only the user may start this tool".into(),
            Why::InvalidInput => "the input does not match the tool's schema".into(),
            Why::Rule { kind, rule } => {
                let article = if *kind == RuleKind::Deny { "a" } else { "an" };
                match (rule, naming) {
                    (Some(at), Naming::Titles { plugin }) => {
                        let place = match at.scope {
                            RuleScope::Global => "global",
                            RuleScope::Conversation => "this conversation's",
                        };
                        let covers = match covered(&at.pattern) {
                            Covered::Tool => "this tool".to_owned(),
                            Covered::Plugin => format!("every tool of {plugin}"),
                            Covered::Every => "every tool".to_owned(),
                        };
                        format!(
                            "{article} {} rule ({place} rule {}) covers {covers}",
                            kind.as_str().to_lowercase(),
                            at.index + 1
                        )
                    }
                    (Some(at), Naming::Ids) => format!(
                        "{article} {} rule {} ({} rules[{}])",
                        kind.as_str(),
                        at.pattern,
                        scope_name(at.scope),
                        at.index
                    )
                    .to_lowercase(),
                    (None, _) => format!("{article} {} tool check", kind.as_str()),
                }
            }
            Why::ModeOff { plugin, effect } => {
                format!("{} mode for {effect} is off", naming.plugins(plugin))
            }
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
            Why::OverLimit { limit } => match limit {
                Limit::PerPayment => "this payment is over your limit per payment".into(),
                Limit::PerDay => "this payment would pass your limit per day".into(),
            },
            Why::NewPayee => "this payee has never been paid before".into(),
            Why::TaintedCall { effect } => {
                format!("this turn has read untrusted content, and this is a {effect} call")
            }
            Why::OwnCheckAllows => "the tool's own check allows it".into(),
            Why::AskEveryTime => "the preset is \"Ask every time\"".into(),
            Why::Mode {
                plugin,
                effect,
                mode,
            } => format!("{} mode for {effect} is {mode}", naming.plugins(plugin)),
        }
    }

    fn chinese(&self, naming: Naming<'_>) -> String {
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
                let scope = |at: &RuleAt| match at.scope {
                    RuleScope::Global => "全局",
                    RuleScope::Conversation => "本对话",
                };
                match (rule, naming) {
                    (Some(at), Naming::Titles { plugin }) => {
                        let rule = format!("{}的{kind}规则（第 {} 条）", scope(at), at.index + 1);
                        match covered(&at.pattern) {
                            Covered::Tool => format!("{rule}适用于这个工具"),
                            Covered::Plugin => format!("{rule}适用于 {plugin} 的所有工具"),
                            Covered::Every => format!("{rule}适用于所有工具"),
                        }
                    }
                    (Some(at), Naming::Ids) => {
                        let scope = scope(at);
                        format!(
                            "{scope}的{kind}规则 {}（第 {} 条）",
                            at.pattern,
                            at.index + 1
                        )
                    }
                    (None, _) => format!("工具自身的{kind}检查"),
                }
            }
            Why::ModeOff { plugin, effect } => {
                format!(
                    "{} 的「{}」权限已关闭",
                    naming.plugin(plugin),
                    effect_words(zh, *effect)
                )
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
            Why::OverLimit { limit } => match limit {
                Limit::PerPayment => "这笔付款超过了你设的单笔限额".into(),
                Limit::PerDay => "这笔付款会超过你设的每天限额".into(),
            },
            Why::NewPayee => "以前从没付款给这个收款方".into(),
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
                "{} 的「{}」权限为「{}」",
                naming.plugin(plugin),
                effect_words(zh, *effect),
                mode_words(zh, *mode)
            ),
        }
    }
}

/// What a rule's pattern covers: `<plugin>.<tool>`, `<plugin>.*` or `*` (DESIGN.md §3). A rule
/// that decided a call covers that call's tool, so these say all the user needs.
enum Covered {
    Tool,
    Plugin,
    Every,
}

fn covered(pattern: &str) -> Covered {
    if pattern == "*" {
        Covered::Every
    } else if pattern.ends_with(".*") {
        Covered::Plugin
    } else {
        Covered::Tool
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

    #[test]
    fn the_users_words_name_the_plugin_by_its_title_and_a_rule_by_what_it_covers() {
        let mode = Why::Mode {
            plugin: "canteen".into(),
            effect: Effect::Write,
            mode: Mode::Ask,
        };
        assert_eq!(
            mode.text_for_user(Language::Zh, "食堂"),
            "食堂 的「写入」权限为「询问」"
        );
        assert_eq!(
            mode.text_for_user(Language::En, "Canteen"),
            "Canteen's mode for write is ask"
        );
        assert_eq!(
            mode.text_for_user(Language::En, "Canteens"),
            "Canteens' mode for write is ask"
        );
        let off = Why::ModeOff {
            plugin: "canteen".into(),
            effect: Effect::Money,
        };
        assert_eq!(
            off.text_for_user(Language::Zh, "食堂"),
            "食堂 的「花钱」权限已关闭"
        );
        let rule = |pattern: &str, scope| Why::Rule {
            kind: RuleKind::Ask,
            rule: Some(RuleAt {
                pattern: pattern.into(),
                scope,
                index: 1,
            }),
        };
        let cases = [
            (
                rule("canteen.reserve", RuleScope::Global),
                "全局的询问规则（第 2 条）适用于这个工具",
                "an ask rule (global rule 2) covers this tool",
            ),
            (
                rule("canteen.*", RuleScope::Conversation),
                "本对话的询问规则（第 2 条）适用于 食堂 的所有工具",
                "an ask rule (this conversation's rule 2) covers every tool of Canteen",
            ),
            (
                rule("*", RuleScope::Global),
                "全局的询问规则（第 2 条）适用于所有工具",
                "an ask rule (global rule 2) covers every tool",
            ),
        ];
        for (why, zh, en) in cases {
            assert_eq!(why.text_for_user(Language::Zh, "食堂"), zh);
            assert_eq!(why.text_for_user(Language::En, "Canteen"), en);
        }
        // The audit keeps the id and the pattern.
        assert_eq!(mode.text(Language::En), "canteen's mode for write is ask");
    }
}
