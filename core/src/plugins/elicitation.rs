//! A remote server asking the student for something while one of its tools runs (MCP
//! elicitation, the 2025-11-25 specification): a form of a few plain fields, or a page to open
//! (URL mode). What this product decides:
//!
//! - Only a call someone is there for may ask: the student's own tap or the agent's turn. A
//!   scheduled call, or a request that comes with no call running, is declined.
//! - A form never asks for a password or another secret: the specification says such things go
//!   through URL mode, so a form whose message or field names one, in any spelling (split,
//!   joined, invisible characters, full-width, traditional, lookalike letters), is refused
//!   before the student sees it ([`Elicitation::form`]); the field's title the student reads is
//!   the text that was checked.
//! - The server's words are third-party text: cleaned and cut like a remote tool's
//!   description; a page is shown with its host plainly, and only an https page (or, for a
//!   development tool, a page on this machine) is offered at all.
//! - An accepted form is checked against the server's own schema before it is sent back.
//! - A turn that has read untrusted content says so on the form.

use serde_json::{Map, Value};
use url::Url;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use crate::schema::InputSchema;
use crate::text::{is_invisible, one_line};

/// The most characters of a server's message kept.
const MESSAGE_CAP: usize = 1024;
/// The most characters of a field's title or description kept.
const FIELD_CAP: usize = 256;

/// What a remote server asks for, as the shell shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Elicitation {
    /// The remote plugin whose server asks, and its title.
    pub plugin: String,
    pub plugin_title: String,
    /// The server's own words, cleaned and cut.
    pub message: String,
    pub kind: ElicitationKind,
    /// The conversation whose call is running, if any.
    pub conversation: Option<String>,
    /// The turn has read untrusted content: the form says so.
    pub tainted: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationKind {
    /// Fields to fill in; `schema` is the server's, which an answer is checked against.
    Form { fields: Vec<Field>, schema: Value },
    /// A page to open in the browser; `host` is shown plainly.
    Page { url: String, host: String },
}

/// One field of a form.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The key the answer is sent under.
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    pub input: Input,
    pub required: bool,
    /// The server's default, filled in.
    pub default: Option<Value>,
}

/// What kind of input a field takes.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// Text; `format` is the schema's (`email`, `uri`, `date`, `date-time`), if any.
    Text {
        format: Option<String>,
    },
    Number {
        integer: bool,
    },
    Boolean,
    /// One of `options` (value, label), or several when `multiple`.
    Choice {
        options: Vec<(String, String)>,
        multiple: bool,
    },
}

/// How the student answered.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationAnswer {
    /// The form's values, or (a page) that the student opened it.
    Accept(Map<String, Value>),
    /// The student would rather not; the tool goes on without it.
    Decline,
    /// The student stopped the whole operation.
    Cancel,
}

/// Words that name a secret wherever they stand in what a form says, once it is read as
/// [`Said::joined`] (folded, no space or punctuation): long and distinctive enough that an
/// ordinary word does not hold them. The campus's own secrets (SERVICES.md §1: the password,
/// the SMS code, 手机令牌/OTP, the captcha, IAAA's token, the `SESSION` cookie) and the common
/// credentials, in zh and en.
const SECRET_PARTS: &[&str] = &[
    "password",
    "passwd",
    "passcode",
    "passphrase",
    "passkey",
    "pwd",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "clientsecret",
    "appsecret",
    "accesstoken",
    "refreshtoken",
    "authtoken",
    "bearertoken",
    "sessiontoken",
    "csrftoken",
    "sessionid",
    "sessionkey",
    "cookie",
    "credential",
    "onetimecode",
    "onetimepin",
    "verificationcode",
    "verifycode",
    "securitycode",
    "authcode",
    "authorizationcode",
    "authenticationcode",
    "authenticator",
    "smscode",
    "otpcode",
    "randcode",
    "captcha",
    "synjones",
    "pincode",
    "pinnumber",
    "pin码",
    "密码",
    "口令",
    "验证码",
    "校验码",
    "动态码",
    "令牌",
    "密钥",
    "秘钥",
    "私钥",
    "凭证",
    "凭据",
    "授权码",
    "认证码",
    "安全码",
    "短信码",
    "付款码",
    "支付码",
    "パスワード",
    "暗証番号",
    "비밀번호",
];

/// Short words that name a secret only as a whole word of [`Said::words`]: `pin` is a secret,
/// `shipping` and `pinyin` are not; `otp` is, `hotpot` is not.
const SECRET_WORDS: &[&str] = &[
    "pin", "pins", "pw", "otp", "otps", "totp", "hotp", "cvv", "cvv2", "cvc", "cvc2", "mfa", "2fa",
    "token", "tokens", "secret", "secrets", "mima", "yzm",
];

/// What a form says, read the way its words would be read by the student, so that no spelling
/// hides a secret's name from [`names_a_secret`]: nothing invisible, compatibility forms and
/// accents as their plain letters (NFKD, marks dropped), lowercase, a Cyrillic or Greek letter
/// that looks like a Latin one as that letter, a traditional character of a secret's name as
/// its simplified one.
struct Said {
    /// Its words, split at anything that is no letter or digit, at a Chinese character and at
    /// a change of case (`userPwd`); a run of one-letter words is one word (`P-I-N`).
    words: Vec<String>,
    /// Its letters and digits, every space, punctuation and symbol between them gone
    /// (`pass_code`, `Pass-word`, `密 码`); `@` and `$` are read as the letters they stand for
    /// (`P@$$word`).
    joined: String,
}

impl Said {
    fn read(text: &str) -> Said {
        let plain: Vec<char> = text
            .chars()
            .filter(|c| !is_invisible(*c))
            .nfkd()
            .filter(|c| {
                !matches!(
                    get_general_category(*c),
                    GeneralCategory::NonspacingMark | GeneralCategory::EnclosingMark
                ) && !is_invisible(*c)
            })
            .collect();
        let mut words: Vec<String> = Vec::new();
        let mut word = String::new();
        let mut joined = String::new();
        for (i, &c) in plain.iter().enumerate() {
            let letter = c.is_alphanumeric() || c == '@' || c == '$';
            let han = is_han(c);
            // A capital after a small letter, or a capital before one after a capital
            // (`PINCode`), starts a word.
            let previous = i.checked_sub(1).map(|p| plain[p]);
            let next = plain.get(i + 1).copied();
            let starts = c.is_uppercase()
                && previous.is_some_and(|p| {
                    p.is_lowercase() || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
                });
            if !letter || han || starts {
                words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            }
            if !letter {
                continue;
            }
            for c in c.to_lowercase().map(plain_letter) {
                joined.push(c);
                if !han {
                    word.push(c);
                }
            }
        }
        words.extend((!word.is_empty()).then_some(word));
        Said {
            words: one_letter_runs_joined(words),
            joined,
        }
    }
}

/// `p i n` → `pin`: consecutive one-letter words as one.
fn one_letter_runs_joined(words: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut single = false;
    for word in words {
        let one = word.chars().count() == 1;
        match out.last_mut() {
            Some(last) if one && single => last.push_str(&word),
            _ => out.push(word),
        }
        single = one;
    }
    out
}

/// Whether `c` is a Chinese character (CJK unified ideographs and their extensions, the
/// compatibility ideographs).
fn is_han(c: char) -> bool {
    matches!(c,
        '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}'
        | '\u{20000}'..='\u{3134f}')
}

/// A lowercase letter as the letter it is read as: a Cyrillic or Greek lookalike of a Latin
/// letter as the Latin one, and a traditional character of a secret's Chinese name as the
/// simplified one (`密碼` is `密码`).
fn plain_letter(c: char) -> char {
    match c {
        'а' | 'α' => 'a',
        'с' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' => 'e',
        'һ' => 'h',
        'і' | 'ι' => 'i',
        'ј' => 'j',
        'к' | 'κ' => 'k',
        'о' | 'ο' | 'σ' => 'o',
        'р' | 'ρ' => 'p',
        'ѕ' => 's',
        'т' | 'τ' => 't',
        'υ' => 'u',
        'ν' => 'v',
        'ԝ' | 'ω' => 'w',
        'х' | 'χ' => 'x',
        // Small capitals, which have no compatibility decomposition.
        'ᴀ' => 'a',
        'ʙ' => 'b',
        'ᴄ' => 'c',
        'ᴅ' => 'd',
        'ᴇ' => 'e',
        'ɢ' => 'g',
        'ʜ' => 'h',
        'ɪ' => 'i',
        'ᴊ' => 'j',
        'ᴋ' => 'k',
        'ʟ' => 'l',
        'ᴍ' => 'm',
        'ɴ' => 'n',
        'ᴏ' => 'o',
        'ᴘ' => 'p',
        'ʀ' => 'r',
        'ꜱ' => 's',
        'ᴛ' => 't',
        'ᴜ' => 'u',
        'ᴠ' => 'v',
        'ᴡ' => 'w',
        'ʏ' => 'y',
        'ᴢ' => 'z',
        // Symbols written for the letters they look like.
        '@' => 'a',
        '$' => 's',
        'у' | 'γ' => 'y',
        '碼' => '码',
        '驗' => '验',
        '證' => '证',
        '鑰' => '钥',
        '祕' => '秘',
        '憑' => '凭',
        '據' => '据',
        '動' => '动',
        '態' => '态',
        '權' => '权',
        '認' => '认',
        '簡' => '简',
        '訊' => '讯',
        '錄' => '录',
        '號' => '号',
        '機' => '机',
        '記' => '记',
        '紀' => '纪',
        '護' => '护',
        '帳' => '账',
        '賬' => '账',
        '戶' => '户',
        '確' => '确',
        _ => c,
    }
}

/// Whether `text` names a secret, in any spelling [`Said`] reads: by a long name anywhere, or,
/// in a `label` (a field's name or title: what the field is), by a short word too. Prose (the
/// message, a field's description) often names a short one only to warn ("do not give us your
/// phone number, pin, or other sensitive info": the reference server's own form), so there only
/// the long names count, which asking for any of the campus's secrets needs (`PIN code`, too).
fn names_a_secret(text: &str, label: bool) -> bool {
    let said = Said::read(text);
    let parts = |joined: &str| SECRET_PARTS.iter().any(|part| joined.contains(part));
    let words = |word: &str| SECRET_WORDS.contains(&word);
    parts(&said.joined)
        || parts(&digits_as_letters(&said.joined))
        || (label
            && said
                .words
                .iter()
                .any(|w| words(w) || words(&digits_as_letters(w))))
}

/// `passw0rd` → `password`: the digits written for the letters they look like.
fn digits_as_letters(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '0' => 'o',
            '1' => 'i',
            '3' => 'e',
            '4' => 'a',
            '5' => 's',
            '7' => 't',
            _ => c,
        })
        .collect()
}

/// A server's words on a form as the student reads them: the text the secret check read
/// (NFKC: a full-width title in plain letters), on one line with nothing invisible, cut.
fn shown(text: &str, cap: usize) -> String {
    one_line(&text.nfkc().collect::<String>(), cap)
}

impl Elicitation {
    /// Reads a form's schema (MCP: an object of primitive properties), refusing one that asks
    /// for a secret (in its message, or in a field's name, title or description) or that is not
    /// such a form, in words for the server.
    pub fn form(message: &str, schema: &Value) -> Result<Vec<Field>, String> {
        if names_a_secret(message, false) {
            return Err(
                "the message asks for a password or another secret, which the app \
                        never asks for in a form; use URL mode for it"
                    .into(),
            );
        }
        let properties = schema["properties"]
            .as_object()
            .ok_or("the requested schema has no properties")?;
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::with_capacity(properties.len());
        for (name, property) in properties {
            let title = property["title"].as_str().unwrap_or(name);
            let description = property["description"].as_str();
            // Each text is read on its own, so no word is made across two of them.
            let secret = property["format"] == "password"
                || names_a_secret(name, true)
                || names_a_secret(title, true)
                || description.is_some_and(|d| names_a_secret(d, false));
            if secret {
                return Err(format!(
                    "field {name} asks for a password or another secret, which the app never \
                     asks for in a form; use URL mode for it"
                ));
            }
            fields.push(Field {
                name: name.clone(),
                title: shown(title, FIELD_CAP),
                description: description.map(|d| shown(d, FIELD_CAP)),
                input: input(name, property)?,
                required: required.contains(&name.as_str()),
                default: property.get("default").cloned(),
            });
        }
        Ok(fields)
    }

    /// The form's answer with nothing typed: each field's default.
    pub fn defaults(fields: &[Field]) -> Map<String, Value> {
        fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.default.clone()?)))
            .collect()
    }

    /// Whether `answer` fits the server's `schema`; the first misfit, naming the field.
    pub fn check(schema: &Value, answer: &Map<String, Value>) -> Result<(), String> {
        let form = InputSchema::compile(schema.clone())
            .map_err(|e| format!("the server's form does not compile: {e}"))?;
        match form.first_problem(&Value::Object(answer.clone()))? {
            None => Ok(()),
            Some((at, problem)) => {
                let field = at.trim_start_matches('/');
                Err(match field.is_empty() {
                    true => format!("the answer does not fit the form: {problem}"),
                    false => format!("{field}: {problem}"),
                })
            }
        }
    }

    /// The page of a URL-mode request, if the app may offer it: https (or, `loopback`, a page
    /// on this machine over http too), with a host.
    pub fn page(url: &str, loopback: bool) -> Result<(String, String), String> {
        let parsed = Url::parse(url).map_err(|e| format!("{url} is not a URL ({e})"))?;
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let local = matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]");
        match parsed.scheme() {
            "https" if !host.is_empty() => Ok((parsed.to_string(), host)),
            "http" if loopback && local => Ok((parsed.to_string(), host)),
            _ => Err(format!(
                "the app opens only https pages for a server, not {url}"
            )),
        }
    }

    /// The server's message as the app keeps it.
    pub fn message(text: &str) -> String {
        one_line(text, MESSAGE_CAP)
    }
}

/// The input of field `name`, from its schema.
fn input(name: &str, property: &Value) -> Result<Input, String> {
    let labels = |values: &[Value], titles: Option<&Vec<Value>>| -> Vec<(String, String)> {
        values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let value = v.as_str()?.to_owned();
                let label = titles
                    .and_then(|t| t.get(i))
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), |l| one_line(l, FIELD_CAP));
                Some((value, label))
            })
            .collect()
    };
    // Titled choices: `oneOf`/`anyOf` of `{const, title}`.
    let titled = |options: &Value| -> Option<Vec<(String, String)>> {
        let options = options.as_array()?;
        Some(
            options
                .iter()
                .filter_map(|o| {
                    let value = o["const"].as_str()?.to_owned();
                    let label = o["title"].as_str().unwrap_or(&value);
                    Some((value.clone(), one_line(label, FIELD_CAP)))
                })
                .collect(),
        )
    };
    match property["type"].as_str() {
        Some("string") => {
            if let Some(values) = property["enum"].as_array() {
                let titles = property["enumNames"].as_array();
                return Ok(Input::Choice {
                    options: labels(values, titles),
                    multiple: false,
                });
            }
            if let Some(options) = titled(&property["oneOf"]) {
                return Ok(Input::Choice {
                    options,
                    multiple: false,
                });
            }
            Ok(Input::Text {
                format: property["format"].as_str().map(str::to_owned),
            })
        }
        Some("number") => Ok(Input::Number { integer: false }),
        Some("integer") => Ok(Input::Number { integer: true }),
        Some("boolean") => Ok(Input::Boolean),
        Some("array") => {
            let items = &property["items"];
            let options = match items["enum"].as_array() {
                Some(values) => labels(values, None),
                None => titled(&items["anyOf"])
                    .or_else(|| titled(&items["oneOf"]))
                    .ok_or_else(|| format!("field {name} is a list with no choices"))?,
            };
            Ok(Input::Choice {
                options,
                multiple: true,
            })
        }
        other => Err(format!(
            "field {name} is of type {}, which a form does not take",
            other.unwrap_or("none")
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_field_that_asks_for_a_secret_refuses_the_form() {
        for property in [
            json!({"type": "string", "title": "Password"}),
            json!({"type": "string", "format": "password"}),
            json!({"type": "string", "title": "校园卡密码"}),
            json!({"type": "string", "description": "your PIN code"}),
            json!({"type": "string", "title": "API key"}),
        ] {
            let schema = json!({"type": "object", "properties": {"x": property}});
            let refused = Elicitation::form("", &schema).unwrap_err();
            assert_eq!(
                refused,
                "field x asks for a password or another secret, which the app never asks for \
                 in a form; use URL mode for it"
            );
        }
        // A word that only contains "pin" is not one.
        let schema = json!({"type": "object", "properties": {
            "shipping": {"type": "string", "title": "Shipping address"}}});
        assert_eq!(Elicitation::form("", &schema).unwrap().len(), 1);
    }

    /// A form of one field `x` with `property`.
    fn one_field(property: Value) -> Value {
        json!({"type": "object", "properties": {"x": property}})
    }

    #[test]
    fn a_secret_named_in_any_spelling_refuses_the_form() {
        // MCP elicitation: a form never asks for a secret (URL mode does). Each spelling below
        // once reached the student's sheet: split, joined, invisible, full-width, traditional,
        // lookalike, and the campus's own secrets (SERVICES.md §1: the password, the SMS code,
        // 手机令牌/OTP, the captcha, the token, the SESSION cookie).
        let titles = [
            "Pass-word",
            "pass_code",
            "Pass\u{200b}word",
            "Pass\u{00ad}word",
            "Pass\u{202e}word",
            "Ｐａｓｓｗｏｒｄ",
            "P a s s w o r d",
            "pässwörd",
            "P@ssw0rd",
            "pa$$word",
            "ᴘᴀssᴡᴏʀᴅ",
            "𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝",
            "p1n",
            "p\u{0430}ssword",
            "密碼",
            "密\u{200b}码",
            "手机令牌",
            "PIN码",
            "P-I-N",
            "短信动态码",
            "驗證碼",
            "token",
            "Access_Token",
            "Cookie",
            "登录凭证",
            "pwd",
            "userPwd",
            "OTP",
            "otpCode",
            "smsCode",
            "randCode",
            "Captcha",
            "client_secret",
            "API key",
            "One-time code",
            "口令",
            "秘钥",
        ];
        for title in titles {
            let refused =
                Elicitation::form("", &one_field(json!({"type": "string", "title": title})));
            assert_eq!(
                refused,
                Err(
                    "field x asks for a password or another secret, which the app never asks \
                     for in a form; use URL mode for it"
                        .into()
                ),
                "{title:?}"
            );
        }
        // The field's name and description are read the same way, and so is the message.
        for property in [
            json!({"type": "string", "format": "password"}),
            json!({"type": "string", "description": "your IAAA pass word"}),
        ] {
            assert!(Elicitation::form("", &one_field(property)).is_err());
        }
        let named = json!({"type": "object", "properties": {"smsCode": {"type": "string"}}});
        assert!(Elicitation::form("", &named).is_err());
        let answer = one_field(json!({"type": "string", "title": "答案"}));
        assert_eq!(
            Elicitation::form("请输入你的校园网密码以继续", &answer),
            Err(
                "the message asks for a password or another secret, which the app never asks \
                 for in a form; use URL mode for it"
                    .into()
            )
        );
    }

    #[test]
    fn an_ordinary_form_is_not_taken_for_one_that_asks_for_a_secret() {
        // A short word (pin, otp, token) counts only whole; a long one (password) anywhere.
        let titles = [
            "Shipping address",
            "Passenger name",
            "Passport number",
            "Tokenize the text",
            "Spin the wheel",
            "Hotpot flavour",
            "Pinyin name",
            "Secretary",
            "Session (morning or afternoon)",
            "Keyword",
            "取餐码",
            "学号",
            "座位",
            "Room 101",
            "Email (name@pku.edu.cn)",
            "2024年的学期",
            "Price ($)",
        ];
        for title in titles {
            let form = one_field(json!({"type": "string", "title": title}));
            let fields = Elicitation::form("订座需要这些信息", &form).unwrap();
            assert_eq!(fields[0].title, title);
        }
        // Prose that names a short word only to warn: the reference server's own form.
        let warned = one_field(json!({"type": "integer", "title": "Integer",
            "description": "Your favorite integer (do not give us your phone number, pin, or \
                            other sensitive info)"}));
        assert_eq!(
            Elicitation::form("Please provide inputs", &warned)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn the_student_reads_the_title_the_check_read() {
        let form = one_field(
            json!({"type": "string", "title": "Ｎａｍｅ\u{200b}\u{202e}\n（中文）",
                                    "description": "姓\u{2028}名"}),
        );
        let fields = Elicitation::form("", &form).unwrap();
        assert_eq!(fields[0].title, "Name (中文)");
        assert_eq!(fields[0].description.as_deref(), Some("姓 名"));
    }

    #[test]
    fn an_answer_is_checked_against_the_servers_schema_naming_the_field() {
        let schema = json!({"type": "object", "properties": {
            "seats": {"type": "integer", "minimum": 1, "maximum": 4}}, "required": ["seats"]});
        let answer = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            Elicitation::check(&schema, &answer(json!({"seats": 2}))),
            Ok(())
        );
        assert_eq!(
            Elicitation::check(&schema, &answer(json!({"seats": 9}))),
            Err("seats: 9 is greater than the maximum of 4".into())
        );
    }

    #[test]
    fn only_an_https_page_is_offered() {
        assert_eq!(
            Elicitation::page("https://pay.example.com/confirm?x=1", false),
            Ok((
                "https://pay.example.com/confirm?x=1".into(),
                "pay.example.com".into()
            ))
        );
        assert!(Elicitation::page("http://pay.example.com/", true).is_err());
        assert!(Elicitation::page("javascript:alert(1)", false).is_err());
        assert!(Elicitation::page("http://127.0.0.1:9/x", true).is_ok());
        assert!(Elicitation::page("http://127.0.0.1:9/x", false).is_err());
    }
}
