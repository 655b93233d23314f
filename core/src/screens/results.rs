//! A tool's result as the student reads it in the chat: its top-level fields as labelled rows,
//! in the plugin's words where it gives them, and a status answer (seed 004: `{status: …}` is
//! a result, not an error) as a card with the tap that fixes it. The JSON itself stays one tap
//! away, on the call.

use serde_json::{Map, Value};

use super::campus::CampusCheck;
use super::texts::{effect_words, tr};
use super::{Action, Button, ButtonRole, LabelValue, Route};
use crate::policy::Code;
use crate::registry::{Effect, FieldLabel, Tool};
use crate::settings::Language;
use crate::text::one_line;

/// How many entries of a list of plain values a row names before it only counts them.
const LISTED: usize = 3;

/// What the student can do about a call: a status answer's fix, or the setting a refusal names.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CallCard {
    pub text: String,
    /// The tap that fixes it; none when there is nothing to tap (`opened`).
    pub button: Option<Button>,
}

/// The result's rows: each top-level field of an object, labelled, by the field's name (the
/// stored result keeps no other order); any other value is one row.
pub(super) fn rows(lang: Language, result: &Value, tool: Option<&Tool>) -> Vec<LabelValue> {
    let declared = tool.and_then(|t| t.output.as_ref()).map(|o| o.source());
    match result {
        Value::Object(fields) => fields
            .iter()
            .map(|(name, value)| LabelValue {
                label: field_label(lang, name, tool, declared),
                value: value_words(lang, value),
            })
            .collect(),
        other => vec![LabelValue {
            label: tr(lang, "结果", "Result").into(),
            value: value_words(lang, other),
        }],
    }
}

/// A tool's top-level field (of its input or its result) as the student reads it: the
/// plugin's `labels` for it; else in Chinese the `title` its schema (`schema`, the input's or
/// the declared output's) gives the field; else the name made readable.
pub(super) fn field_label(
    lang: Language,
    name: &str,
    tool: Option<&Tool>,
    schema: Option<&Value>,
) -> String {
    match (tool.and_then(|t| t.labels.get(name)), lang) {
        (Some(FieldLabel { en: Some(en), .. }), Language::En) => return en.clone(),
        (Some(label), _) => return label.zh.clone(),
        (None, _) => {}
    }
    let titled = schema.and_then(|s| s["properties"][name]["title"].as_str());
    match (titled, lang) {
        (Some(title), Language::Zh) => one_line(title, usize::MAX),
        // A remote server's answer without structured data: its content blocks' words.
        _ if name == "content" => tr(lang, "内容", "Content").into(),
        _ => readable_name(lang, name),
    }
}

/// An input field's value in the words its plugin gives it (`labels.<field>.values`), in the
/// screen's language (`en` falls back to `zh`); none when the plugin gives none.
pub(super) fn declared_value_words(
    lang: Language,
    tool: Option<&Tool>,
    name: &str,
    value: &str,
) -> Option<String> {
    let words = tool?.labels.get(name)?.values.get(value)?;
    Some(match (lang, &words.en) {
        (Language::En, Some(en)) => en.clone(),
        _ => words.zh.clone(),
    })
}

/// A camelCase or snake_case field name as words, its unit suffix in brackets:
/// `spentTodayYuan` → "Spent today（元）" / "Spent today (yuan)" (seed 004: "put units in
/// field names, such as balanceYuan").
pub(super) fn readable_name(lang: Language, name: &str) -> String {
    let mut words = split_words(name);
    let unit = words.last().and_then(|w| unit_words(lang, w));
    if unit.is_some() && words.len() > 1 {
        words.pop();
    }
    let mut text = words.join(" ");
    if let Some(first) = text.chars().next() {
        text.replace_range(..first.len_utf8(), &first.to_uppercase().to_string());
    }
    match unit {
        Some(unit) if !text.is_empty() && text.to_lowercase() != unit => match lang {
            Language::Zh => format!("{text}（{unit}）"),
            Language::En => format!("{text} ({unit})"),
        },
        _ => text,
    }
}

/// The name's words, lowercased: split at `_`, `-`, spaces and a lowercase letter or digit
/// followed by a capital.
pub(super) fn split_words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c.is_whitespace() {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// The unit a field name ends with, as the label writes it.
fn unit_words(lang: Language, word: &str) -> Option<&'static str> {
    Some(match word {
        "yuan" => tr(lang, "元", "yuan"),
        "fen" => tr(lang, "分", "fen"),
        "percent" => "%",
        "ms" => tr(lang, "毫秒", "ms"),
        _ => return None,
    })
}

/// A field's value in words: text as it is, yes/no, a list counted or named, an object's plain
/// values in a line — never JSON.
pub(super) fn value_words(lang: Language, value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        Value::Bool(yes) => if *yes {
            tr(lang, "是", "Yes")
        } else {
            tr(lang, "否", "No")
        }
        .into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.is_empty() => tr(lang, "无", "None").into(),
        Value::Array(items) if items.len() <= LISTED && items.iter().all(is_plain) => items
            .iter()
            .map(|v| value_words(lang, v))
            .collect::<Vec<_>>()
            .join(tr(lang, "、", ", ")),
        Value::Array(items) => count_words(lang, items.len()),
        Value::Object(fields) => object_line(lang, fields),
    }
}

fn is_plain(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

fn count_words(lang: Language, n: usize) -> String {
    match (lang, n) {
        (Language::Zh, n) => format!("{n} 项"),
        (Language::En, 1) => "1 item".into(),
        (Language::En, n) => format!("{n} items"),
    }
}

/// A nested object as one line: its plain fields' values, then how many others it holds.
fn object_line(lang: Language, fields: &Map<String, Value>) -> String {
    let plain: Vec<String> = fields
        .values()
        .filter(|v| is_plain(v))
        .map(|v| value_words(lang, v))
        .collect();
    let nested = fields.len() - plain.len();
    match (plain.is_empty(), nested) {
        (true, _) => count_words(lang, fields.len()),
        (false, 0) => plain.join(" · "),
        (false, n) => format!("{} · {}", plain.join(" · "), count_words(lang, n)),
    }
}

/// The card a status answer shows, with its fix (the same screens [`super::tap::follow`]
/// leads a tap's answer to); none for a result that is no status the app knows.
pub(super) fn status_card(lang: Language, result: &Value) -> Option<CallCard> {
    let button =
        |label: String, action: Action| Some(Button::new(label, ButtonRole::Primary, action));
    let (text, button) = match result.get("status")?.as_str()? {
        "signin_required" => return Some(signin_card(lang)),
        // DESIGN.md §10: the fix is the screen of the check the status names.
        "verification_required" => match CampusCheck::asked_by(result) {
            Some(check @ CampusCheck::Treehole) => (
                tr(
                    lang,
                    "树洞需要先用短信验证",
                    "Treehole needs an SMS check first",
                )
                .to_owned(),
                button(
                    tr(lang, "去验证", "Do the check").into(),
                    Action::Open {
                        route: check.route(),
                    },
                ),
            ),
            Some(check @ CampusCheck::Grades) => (
                tr(
                    lang,
                    "查看成绩需要先完成课程系统的授权",
                    "Reading grades needs the course system's authorization first",
                )
                .to_owned(),
                button(
                    tr(lang, "去授权", "Authorize").into(),
                    Action::Open {
                        route: check.route(),
                    },
                ),
            ),
            None => (
                tr(lang, "需要先完成验证", "A verification is needed first").to_owned(),
                None,
            ),
        },
        "open_in_browser" => {
            let url = result
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let host = super::tap::https_page(url).and_then(|p| p.host_str().map(str::to_owned));
            match host {
                Some(host) => (
                    tr(lang, "这一步在网页上完成", "This is done on a web page").to_owned(),
                    button(
                        match lang {
                            Language::Zh => format!("在浏览器中打开 {host}"),
                            Language::En => format!("Open {host} in the browser"),
                        },
                        Action::OpenInBrowser { url: url.into() },
                    ),
                ),
                // seed 004's pages open only as https: any other address gets no tap.
                None => (
                    tr(
                        lang,
                        "这个网页不是 https 网址，不能打开",
                        "This page is not an https address, so it does not open",
                    )
                    .to_owned(),
                    None,
                ),
            }
        }
        "opened" => (tr(lang, "已打开", "Opened").to_owned(), None),
        _ => return None,
    };
    Some(CallCard { text, button })
}

/// The campus sign-in a call needs, and the tap that opens it: for a `signin_required` answer,
/// and for a plugin that is unavailable until the student signs in (DESIGN.md §10).
pub(super) fn signin_card(lang: Language) -> CallCard {
    CallCard {
        text: tr(
            lang,
            "需要先登录校园账号",
            "This needs your campus sign-in first",
        )
        .into(),
        button: Some(Button::new(
            tr(lang, "登录校园账号", "Sign in to the campus account").into(),
            ButtonRole::Primary,
            Action::Open {
                route: Route::CampusAccount,
            },
        )),
    }
}

/// The setting a refusal can be changed at, named as the student finds it, with the tap that
/// opens its screen; none for a refusal no setting undoes (the student's own no, a scheduled
/// run's read-only rule, a tainted turn, an input that does not fit).
pub(super) fn refusal_card(
    lang: Language,
    code: Code,
    plugin: &str,
    effect: Effect,
) -> Option<CallCard> {
    let open = |route: Route| {
        let label = match route {
            Route::Plugins => tr(lang, "打开「插件」", "Open Plugins"),
            Route::Consent => tr(lang, "打开「同意与权限」", "Open Consent and permissions"),
            _ => tr(lang, "打开「对话设置」", "Open Conversation settings"),
        };
        Some(Button::new(
            label.into(),
            ButtonRole::Normal,
            Action::Open { route },
        ))
    };
    let effect = effect_words(lang, effect);
    let (text, button) = match (code, lang) {
        (Code::Blocked, Language::Zh) => (
            format!("在「插件 › {plugin}」里把「{effect}」从「关闭」改为「询问」，它就会先问你"),
            open(Route::Plugins),
        ),
        (Code::Blocked, Language::En) => (
            format!(
                "In Plugins › {plugin}, set {effect} from off to ask, and it will ask you first"
            ),
            open(Route::Plugins),
        ),
        (Code::Unavailable, Language::Zh) => (
            format!("在「插件 › {plugin}」里看它为什么不可用"),
            open(Route::Plugins),
        ),
        (Code::Unavailable, Language::En) => (
            format!("See why it is not available in Plugins › {plugin}"),
            open(Route::Plugins),
        ),
        (Code::UserOnly, Language::Zh) => (
            format!("在「插件 › {plugin}」里由你亲自点它"),
            open(Route::Plugins),
        ),
        (Code::UserOnly, Language::En) => (
            format!("Start it yourself in Plugins › {plugin}"),
            open(Route::Plugins),
        ),
        (Code::TermsNotAccepted, _) => (
            tr(
                lang,
                "在「同意与权限」里同意使用条款",
                "Accept the terms in Consent and permissions",
            )
            .to_owned(),
            open(Route::Consent),
        ),
        (Code::PlanMode, _) => (
            tr(
                lang,
                "在「对话设置」里关闭「计划模式」",
                "Turn plan mode off in Conversation settings",
            )
            .to_owned(),
            open(Route::ConversationSettings),
        ),
        (Code::OutOfScope, _) => (
            tr(
                lang,
                "在「对话设置」里改「可访问范围」",
                "Change the scope in Conversation settings",
            )
            .to_owned(),
            open(Route::ConversationSettings),
        ),
        (Code::DeniedByRule, _) => (
            tr(
                lang,
                "在「对话设置」里看拦下它的规则",
                "See the rule that blocked it in Conversation settings",
            )
            .to_owned(),
            open(Route::ConversationSettings),
        ),
        // DESIGN.md §3 8e: nothing here allows the payment; the card says which settings
        // only the student can raise.
        (Code::OverLimit, _) => (
            tr(
                lang,
                "只有你能提高限额：设置项 money.perPaymentYuan（单笔）和 money.perDayYuan（每天）",
                "Only you can raise the limits: the settings money.perPaymentYuan (per payment) and money.perDayYuan (per day)",
            )
            .to_owned(),
            None,
        ),
        (Code::Declined | Code::SchedulerReadOnly | Code::Tainted | Code::InvalidInput, _) => {
            return None;
        }
    };
    Some(CallCard { text, button })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::registry::{Plugin, PluginKind, parse_manifest};

    #[test]
    fn a_unit_suffix_is_written_as_the_unit_in_brackets() {
        let cases = [
            ("balanceYuan", "Balance（元）", "Balance (yuan)"),
            ("spentTodayYuan", "Spent today（元）", "Spent today (yuan)"),
            ("fullPercent", "Full（%）", "Full (%)"),
            ("balance_fen", "Balance（分）", "Balance (fen)"),
            ("waitMs", "Wait（毫秒）", "Wait (ms)"),
        ];
        for (name, zh, en) in cases {
            assert_eq!(readable_name(Language::Zh, name), zh, "{name}");
            assert_eq!(readable_name(Language::En, name), en, "{name}");
        }
    }

    #[test]
    fn a_name_without_a_unit_is_its_words() {
        let cases = [
            ("takenAt", "Taken at"),
            ("minutesUntil", "Minutes until"),
            ("card_type_name", "Card type name"),
            ("pages", "Pages"),
            ("yuan", "Yuan"),
        ];
        for (name, words) in cases {
            assert_eq!(readable_name(Language::En, name), words, "{name}");
        }
    }

    #[test]
    fn the_plugins_label_wins_and_english_falls_back_to_chinese() {
        let manifest = json!({"id": "card", "title": "卡", "tools": [{
            "name": "balance", "title": "余额", "effect": "read",
            "labels": {
                "balanceYuan": {"zh": "余额（元）", "en": "Balance (yuan)"},
                "limitYuan": {"zh": "限额"}
            }
        }]});
        let plugin = Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Community);
        let tool = plugin.unwrap().tools[0].clone();
        let label = |lang, name| field_label(lang, name, Some(&tool), None);
        assert_eq!(label(Language::Zh, "balanceYuan"), "余额（元）");
        assert_eq!(label(Language::En, "balanceYuan"), "Balance (yuan)");
        assert_eq!(label(Language::En, "limitYuan"), "限额");
    }

    #[test]
    fn values_read_as_words_never_json() {
        let en = |v: Value| value_words(Language::En, &v);
        let zh = |v: Value| value_words(Language::Zh, &v);
        assert_eq!(
            (en(json!(true)), zh(json!(false))),
            ("Yes".into(), "否".into())
        );
        assert_eq!(en(json!(null)), "—");
        assert_eq!(en(json!(12.5)), "12.5");
        assert_eq!((en(json!([])), zh(json!([]))), ("None".into(), "无".into()));
        assert_eq!(en(json!(["sms", "email"])), "sms, email");
        assert_eq!(zh(json!(["sms", "email"])), "sms、email");
        assert_eq!(en(json!([1, 2, 3, 4])), "4 items");
        assert_eq!(en(json!([{"a": 1}])), "1 item");
        assert_eq!(zh(json!([{"a": 1}, {"a": 2}])), "2 项");
        assert_eq!(en(json!({"name": "一食堂", "seats": 800})), "一食堂 · 800");
        assert_eq!(en(json!({"name": "x", "more": [1]})), "x · 1 item");
        assert_eq!(zh(json!({"a": {}, "b": []})), "2 项");
    }

    /// A tool labelling `balanceYuan` and giving `lost` a title in its declared output.
    fn card_tool() -> Arc<Tool> {
        let manifest = json!({"id": "card", "title": "卡", "tools": [{
            "name": "balance", "title": "余额", "effect": "read",
            "labels": {"balanceYuan": {"zh": "余额（元）", "en": "Balance (yuan)"}},
            "output": {"type": "object", "properties": {
                "balanceYuan": {"type": "number"},
                "lost": {"type": "boolean", "title": "已挂失"}
            }}
        }]});
        let plugin = Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Community);
        plugin.unwrap().tools[0].clone()
    }

    #[test]
    fn rows_follow_the_field_names_with_the_plugins_labels_then_the_declared_titles() {
        let tool = card_tool();
        let read = |lang| {
            rows(
                lang,
                &json!({"zeta": 1, "balanceYuan": 12.5, "lost": false}),
                Some(&tool),
            )
            .into_iter()
            .map(|r| (r.label, r.value))
            .collect::<Vec<_>>()
        };
        let pair = |l: &str, v: &str| (l.to_owned(), v.to_owned());
        // A declared output's `title` is Chinese: the English screen makes the name readable.
        assert_eq!(
            read(Language::Zh),
            [
                pair("余额（元）", "12.5"),
                pair("已挂失", "否"),
                pair("Zeta", "1")
            ]
        );
        assert_eq!(
            read(Language::En),
            [
                pair("Balance (yuan)", "12.5"),
                pair("Lost", "No"),
                pair("Zeta", "1")
            ]
        );
    }

    #[test]
    fn a_result_that_is_no_object_is_one_row() {
        let rows = rows(Language::Zh, &json!([1, 2]), None);
        assert_eq!(
            rows,
            [LabelValue {
                label: "结果".into(),
                value: "1、2".into()
            }]
        );
    }

    #[test]
    fn each_status_leads_to_its_fix() {
        let card = |v: Value| status_card(Language::Zh, &v);
        let action = |v: Value| card(v).and_then(|c| c.button).map(|b| (b.label, b.action));
        assert_eq!(
            action(json!({"status": "signin_required"})),
            Some((
                "登录校园账号".into(),
                Action::Open {
                    route: Route::CampusAccount
                }
            ))
        );
        assert_eq!(
            action(json!({"status": "verification_required", "methods": ["sms"]})),
            Some((
                "去验证".into(),
                Action::Open {
                    route: Route::TreeholeCheck
                }
            ))
        );
        // DESIGN.md §10: a check is mended on its own screen, by the `check` its status names.
        assert_eq!(
            action(json!({"status": "verification_required", "check": "grades",
                          "methods": ["sms", "otp"]})),
            Some((
                "去授权".into(),
                Action::Open {
                    route: Route::GradesCheck
                }
            ))
        );
        let unknown = card(json!({"status": "verification_required", "check": "library"}));
        assert_eq!(
            unknown,
            Some(CallCard {
                text: "需要先完成验证".into(),
                button: None
            })
        );
        assert_eq!(
            action(
                json!({"status": "open_in_browser", "url": "https://bdcard.pku.edu.cn/recharge"})
            ),
            Some((
                "在浏览器中打开 bdcard.pku.edu.cn".into(),
                Action::OpenInBrowser {
                    url: "https://bdcard.pku.edu.cn/recharge".into()
                }
            ))
        );
        let plain = card(json!({"status": "open_in_browser", "url": "http://bdcard.pku.edu.cn"}));
        assert_eq!(plain.map(|c| c.button), Some(None));
        let opened = card(json!({"status": "opened", "screen": "payCode"}));
        assert_eq!(
            opened,
            Some(CallCard {
                text: "已打开".into(),
                button: None
            })
        );
        assert_eq!(card(json!({"status": "switched"})), None);
        assert_eq!(card(json!({"balanceYuan": 1})), None);
    }
}
