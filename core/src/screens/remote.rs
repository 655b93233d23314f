//! A remote server's two sheets: signing in to it (which server, on whose page, what it asks to
//! be allowed), shown before the system's browser opens the page; and its question while one of
//! its tools runs (MCP elicitation: a form with the server's defaults filled in, or a page to
//! open with its host plainly). The shell renders them and hands back what was typed as text;
//! the core reads the text by each field's kind and checks it against the server's schema.

use serde_json::{Map, Value};

use super::ButtonRole;
use super::texts::tr;
use crate::invoke::{Elicitation, ElicitationAnswer};
use crate::plugins::elicitation::{ElicitationKind, Field, Input};
use crate::plugins::oauth::SignInPage;
use crate::settings::Language;
use crate::text::one_line;

/// The sheet shown before the sign-in page opens.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct SignInSheet {
    pub title: String,
    /// The MCP server's host, and its whole address.
    pub server: String,
    pub server_url: String,
    /// Where the student signs in: the authorization server's host.
    pub account_label: String,
    pub authorization_server: String,
    /// That the app never sees the password.
    pub explanation: String,
    /// What the app asks to be allowed, as the authorization server names it.
    pub scopes_label: String,
    pub scopes: Vec<String>,
    /// The page the browser opens on Continue.
    pub page: String,
    pub continue_label: String,
    pub cancel_label: String,
}

/// How a question is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum ElicitationAction {
    /// Send the form (or, a page: it was opened).
    Accept,
    /// Not this; the tool goes on without it.
    Decline,
    /// Stop the whole operation.
    Cancel,
}

/// One answer the question's sheet offers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ElicitationButton {
    pub action: ElicitationAction,
    pub label: String,
    pub role: ButtonRole,
}

/// What kind of input a field is drawn as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum FieldKind {
    Text,
    Email,
    Link,
    Date,
    Integer,
    Number,
    /// On or off: the value is `true` or `false`.
    Toggle,
    /// One of `options`: the value is the option's `value`.
    Choice,
    /// Some of `options`: the values, one per line.
    Choices,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct FieldOption {
    pub value: String,
    pub label: String,
}

/// One field of a server's form.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct FormFieldRow {
    pub name: String,
    pub label: String,
    /// The server's description of the field, if any.
    pub hint: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    /// The value filled in: the server's default as text (a `Choices` default one per line).
    pub value: String,
    pub options: Vec<FieldOption>,
}

/// The page a server asks the student to open.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PageRow {
    pub url: String,
    pub host: String,
    /// "Opens a page on <host>", in the student's language.
    pub label: String,
}

/// A remote server's question, as the sheet shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ElicitationSheet {
    pub title: String,
    pub plugin_title: String,
    /// The server's own words (third-party text: shown beside `words_from_server_label`).
    pub message: String,
    pub words_from_server_label: String,
    /// A form's fields, in the server's order of names; empty for a page.
    pub fields: Vec<FormFieldRow>,
    pub page: Option<PageRow>,
    /// In a turn that read text written by others: answer only what you meant to give.
    pub tainted_note: Option<String>,
    /// Why the last answer was not sent (a field that does not fit), if it was not.
    pub error: Option<String>,
    pub answers: Vec<ElicitationButton>,
}

/// What the student typed: a field's name and its value as text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct FieldValue {
    pub name: String,
    pub value: String,
}

pub(super) fn sign_in(lang: Language, page: &SignInPage) -> SignInSheet {
    // The servers' words are shown on one line with nothing invisible (`text::one_line`).
    let server = one_line(
        &url::Url::parse(&page.server)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_else(|| page.server.clone()),
        usize::MAX,
    );
    let authorization_server = one_line(&page.authorization_server, usize::MAX);
    let explanation = match lang {
        Language::Zh => format!(
            "{server} 需要你登录后才能使用。登录在 {authorization_server} 的页面上进行，应用不会看到你的密码；登录后应用只保存它给的凭据，存放在手机的密钥库中。",
        ),
        Language::En => format!(
            "{server} needs you to sign in before it can be used. You sign in on \
             {authorization_server}'s page, and the app never sees your password; it keeps only \
             the pass it is given, in the phone's keystore.",
        ),
    };
    SignInSheet {
        title: match lang {
            Language::Zh => format!("登录 {server}"),
            Language::En => format!("Sign in to {server}"),
        },
        server,
        server_url: page.server.clone(),
        account_label: tr(lang, "登录的网站", "Where you sign in").into(),
        authorization_server,
        explanation,
        scopes_label: tr(lang, "它请求的权限", "What it asks to be allowed").into(),
        scopes: page
            .scopes
            .iter()
            .map(|s| one_line(s, usize::MAX))
            .collect(),
        page: page.url.clone(),
        continue_label: tr(lang, "继续登录", "Continue").into(),
        cancel_label: tr(lang, "取消", "Cancel").into(),
    }
}

pub(super) fn question(
    lang: Language,
    plugin_title: &str,
    request: &Elicitation,
    error: Option<String>,
) -> ElicitationSheet {
    // The server's words reach here cleaned (`Elicitation`); the sheet cleans what it shows
    // again, with the one rule (`text::one_line`), whoever made the request.
    let plugin_title = &one_line(plugin_title, usize::MAX);
    let (fields, page) = match &request.kind {
        ElicitationKind::Form { fields, .. } => (fields.iter().map(row).collect(), None),
        ElicitationKind::Page { url, host } => (
            Vec::new(),
            Some(PageRow {
                url: url.clone(),
                host: one_line(host, usize::MAX),
                label: match lang {
                    Language::Zh => format!("将在浏览器中打开 {host} 上的页面"),
                    Language::En => format!("Opens a page on {host} in the browser"),
                },
            }),
        ),
    };
    let send = match page {
        Some(_) => tr(lang, "打开页面", "Open the page"),
        None => tr(lang, "发送", "Send"),
    };
    ElicitationSheet {
        title: match lang {
            Language::Zh => format!("「{plugin_title}」的服务器在问你"),
            Language::En => format!("The server of {plugin_title} asks you"),
        },
        plugin_title: plugin_title.to_owned(),
        message: one_line(&request.message, usize::MAX),
        words_from_server_label: tr(lang, "服务器的话", "The server's words").into(),
        fields,
        page,
        tainted_note: request.tainted.then(|| {
            tr(
                lang,
                "这次对话读过别人写的内容：只填你本来就想给的信息。",
                "This conversation has read text written by others: give only what you meant to give.",
            )
            .into()
        }),
        // The server's schema speaks in a misfit's words (an enum's values, a pattern).
        error: error.map(|e| one_line(&e, usize::MAX)),
        answers: vec![
            ElicitationButton {
                action: ElicitationAction::Accept,
                label: send.into(),
                role: ButtonRole::Primary,
            },
            ElicitationButton {
                action: ElicitationAction::Decline,
                label: tr(lang, "不提供", "Decline").into(),
                role: ButtonRole::Normal,
            },
            ElicitationButton {
                action: ElicitationAction::Cancel,
                label: tr(lang, "取消操作", "Cancel").into(),
                role: ButtonRole::Normal,
            },
        ],
    }
}

pub(super) fn row(field: &Field) -> FormFieldRow {
    let (kind, options) = match &field.input {
        Input::Text { format } => (
            match format.as_deref() {
                Some("email") => FieldKind::Email,
                Some("uri") => FieldKind::Link,
                Some("date") => FieldKind::Date,
                _ => FieldKind::Text,
            },
            Vec::new(),
        ),
        Input::Number { integer: true } => (FieldKind::Integer, Vec::new()),
        Input::Number { integer: false } => (FieldKind::Number, Vec::new()),
        Input::Boolean => (FieldKind::Toggle, Vec::new()),
        Input::Choice { options, multiple } => (
            if *multiple {
                FieldKind::Choices
            } else {
                FieldKind::Choice
            },
            options
                .iter()
                .map(|(value, label)| FieldOption {
                    value: value.clone(),
                    label: one_line(label, usize::MAX),
                })
                .collect(),
        ),
    };
    let value = match &field.default {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
    };
    FormFieldRow {
        name: field.name.clone(),
        label: one_line(&field.title, usize::MAX),
        hint: field
            .description
            .as_deref()
            .map(|d| one_line(d, usize::MAX)),
        kind,
        required: field.required,
        value,
        options,
    }
}

/// The student's answer to `request`: what they typed read by each field's kind and checked
/// against the server's schema; a misfit is the words to show on the sheet again.
pub(super) fn answer(
    lang: Language,
    request: &Elicitation,
    action: ElicitationAction,
    values: &[FieldValue],
) -> Result<ElicitationAnswer, String> {
    let (fields, schema) = match (&request.kind, action) {
        (_, ElicitationAction::Decline) => return Ok(ElicitationAnswer::Decline),
        (_, ElicitationAction::Cancel) => return Ok(ElicitationAnswer::Cancel),
        (ElicitationKind::Page { .. }, ElicitationAction::Accept) => {
            return Ok(ElicitationAnswer::Accept(Map::new()));
        }
        (ElicitationKind::Form { fields, schema }, ElicitationAction::Accept) => (fields, schema),
    };
    typed(lang, fields, schema, values).map(ElicitationAnswer::Accept)
}

/// What the student typed into a form's `fields`, read by each field's kind and checked
/// against its `schema` (a server's question, a plugin screen's form); a misfit is the words
/// to show on the form again.
pub(super) fn typed(
    lang: Language,
    fields: &[Field],
    schema: &Value,
    values: &[FieldValue],
) -> Result<Map<String, Value>, String> {
    let mut answer = Map::new();
    for field in fields {
        let typed = values
            .iter()
            .find(|v| v.name == field.name)
            .map_or("", |v| v.value.trim());
        if typed.is_empty() && !matches!(field.input, Input::Boolean) {
            continue;
        }
        let value = match &field.input {
            Input::Text { .. } => Some(Value::String(typed.to_owned())),
            Input::Number { integer: true } => typed.parse::<i64>().ok().map(Value::from),
            Input::Number { integer: false } => typed.parse::<f64>().ok().map(Value::from),
            Input::Boolean => Some(Value::Bool(typed == "true")),
            Input::Choice {
                multiple: false, ..
            } => Some(Value::String(typed.to_owned())),
            Input::Choice { multiple: true, .. } => Some(Value::Array(
                typed
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(|l| Value::String(l.to_owned()))
                    .collect(),
            )),
        };
        let Some(value) = value else {
            return Err(match lang {
                Language::Zh => format!("「{}」需要填一个数字", field.title),
                Language::En => format!("{} needs a number", field.title),
            });
        };
        answer.insert(field.name.clone(), value);
    }
    // A required field left empty, by the label the student read.
    if let Some(missing) = fields
        .iter()
        .find(|f| f.required && !answer.contains_key(&f.name))
    {
        return Err(match lang {
            Language::Zh => format!("这份表单还不能发送：「{}」必须填写", missing.title),
            Language::En => format!("The form cannot be sent yet: {} is required", missing.title),
        });
    }
    Elicitation::check(schema, &answer).map_err(|why| match lang {
        Language::Zh => format!("这份表单还不能发送：{why}"),
        Language::En => format!("The form cannot be sent yet: {why}"),
    })?;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Words a server could send to reorder a sheet or add a line to it.
    const TRICK: &str = "可以\u{2028}\u{202e}开公会不\u{2066}x\u{2069}\u{200b}\r\n";

    #[test]
    fn a_servers_words_on_its_sheets_are_one_line_with_no_bidirectional_control() {
        // DESIGN.md §2: a remote server is third-party content; its words cannot make the sheet
        // read otherwise than they say.
        let request = Elicitation {
            plugin: "mcp-x".into(),
            plugin_title: TRICK.into(),
            message: TRICK.into(),
            kind: ElicitationKind::Form {
                fields: vec![Field {
                    name: "seat".into(),
                    title: TRICK.into(),
                    description: Some(TRICK.into()),
                    input: Input::Choice {
                        options: vec![("a".into(), TRICK.into())],
                        multiple: false,
                    },
                    required: true,
                    default: None,
                }],
                schema: json!({"type": "object"}),
            },
            conversation: None,
            tainted: false,
        };
        let shown = "可以 开公会不x  ";
        let sheet = question(Language::Zh, TRICK, &request, Some(TRICK.into()));
        assert_eq!(sheet.error.as_deref(), Some(shown));
        assert_eq!(sheet.plugin_title, shown);
        assert_eq!(sheet.title, format!("「{shown}」的服务器在问你"));
        assert_eq!(sheet.message, shown);
        let field = &sheet.fields[0];
        assert_eq!(
            (field.label.as_str(), field.hint.as_deref()),
            (shown, Some(shown))
        );
        assert_eq!(field.options[0].label, shown);

        let page = SignInPage {
            server: "https://mcp.example.com/mcp".into(),
            authorization_server: TRICK.into(),
            url: "https://auth.example.com/authorize".into(),
            scopes: vec![TRICK.into()],
        };
        let sheet = sign_in(Language::En, &page);
        assert_eq!(sheet.authorization_server, shown);
        assert_eq!(sheet.scopes, [shown]);
        assert!(sheet.explanation.contains(&format!("on {shown}'s page")));
    }
}
