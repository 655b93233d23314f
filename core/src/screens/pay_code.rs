//! The campus card's pay code (SERVICES.md §2): a screen only the student's tap opens — the
//! `wallet.showPayCode` tool is `userOnly` and answers nothing but which screen to open. The
//! code is a secret (seed 004: "The campus-card payment code is only ever shown on a screen,
//! never in a tool result"), so the core reads its payload itself through the campus client,
//! not through a tool: it is never a tool result, an event, an audit row or in the model's
//! context. The shell draws the payload as a QR code and a barcode and reads the screen again
//! every [`REFRESH_AFTER_MS`] while it is open; a screen read while closed is never cached.

use barcoders::sym::code128::Code128;
use qrcode::{Color, QrCode};
use serde_json::Value;

use super::texts::tr;
use super::{Action, Button, ButtonRole, Route};
use crate::campus::CampusRequest;
use crate::campus::wire::Service;
use crate::engine::Engine;
use crate::settings::Language;

/// The card service's code is good for about a minute (SERVICES.md §2): the shell reads the
/// screen again this long after it drew a code.
pub const REFRESH_AFTER_MS: i64 = 60_000;

/// The pay code, or why there is none and the tap that mends it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PayCodeScreen {
    pub title: String,
    /// What to do with the code, and that it renews itself.
    pub explanation: String,
    /// The code to draw, when there is one.
    pub code: Option<PayCode>,
    /// Why there is no code: the account is not signed in, the card is not the digital one,
    /// or the card service could not be read.
    pub problem: Option<String>,
    /// The tap that mends the problem (sign in; switch to the digital card), if one does.
    pub fix: Option<Button>,
    /// The card service's recharge page, in the browser: the card cannot be recharged in the
    /// app (SERVICES.md §2: its orders are signed by the school's own app).
    pub recharge: Button,
    /// Read the screen again after this long while it is open.
    pub refresh_after_ms: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PayCode {
    /// What the QR code and the barcode encode. Shown on this screen only.
    pub payload: String,
    /// The account the payment draws on, e.g. 校园卡账户.
    pub account: String,
    /// The account's balance in yuan, as the student reads it ("余额 42.50 元").
    pub balance: String,
    /// The payload's QR code, `qr_width` modules to a row, row after row: true is dark. The
    /// shell paints each module a square, with a quiet zone of four around them.
    pub qr_modules: Vec<bool>,
    pub qr_width: u32,
    /// The payload's Code 128 barcode, one module wide each, left to right: true is a bar.
    pub barcode_modules: Vec<bool>,
}

/// What stopped the code from being read.
enum Stop {
    SignIn,
    NotDigital,
    Unreadable,
}

pub(super) async fn build(engine: &Engine, lang: Language) -> PayCodeScreen {
    let mut screen = PayCodeScreen {
        title: tr(lang, "校园卡付款码", "Campus card pay code").into(),
        explanation: tr(
            lang,
            "向收银员出示付款码，扫码即付款。付款码每分钟自动更新，请勿截图或发给他人。",
            "Show this code at the till; scanning it pays. It renews itself every minute: do not screenshot it or send it to anyone.",
        )
        .into(),
        code: None,
        problem: None,
        fix: None,
        recharge: Button::new(
            tr(lang, "去充值", "Recharge").into(),
            ButtonRole::Normal,
            Action::RunTool {
                tool: "wallet.recharge".into(),
            },
        ),
        refresh_after_ms: REFRESH_AFTER_MS,
    };
    match read(engine).await.and_then(|code| with_words(code, lang)) {
        Ok(code) => screen.code = Some(code),
        Err(stop) => {
            let (problem, fix) = stop_words(stop, lang);
            screen.problem = Some(problem.into());
            screen.fix = fix;
        }
    }
    screen
}

/// The code as read: the payload, the account's name and its balance in fen.
struct Read {
    payload: String,
    account: String,
    balance_fen: i64,
}

fn with_words(read: Read, lang: Language) -> Result<PayCode, Stop> {
    let yuan = yuan_text(read.balance_fen);
    let (qr_modules, qr_width) = qr_modules(&read.payload).ok_or(Stop::Unreadable)?;
    Ok(PayCode {
        qr_width,
        qr_modules,
        barcode_modules: code128(&read.payload).ok_or(Stop::Unreadable)?,
        payload: read.payload,
        account: read.account,
        balance: match lang {
            Language::Zh => format!("余额 {yuan} 元"),
            Language::En => format!("Balance ¥{yuan}"),
        },
    })
}

/// The payload's QR code: its modules row after row (true is dark) and how many to a row. The
/// ride code (`ride_code`) is drawn by the same.
pub(super) fn qr_modules(payload: &str) -> Option<(Vec<bool>, u32)> {
    let qr = QrCode::new(payload.as_bytes()).ok()?;
    let width = u32::try_from(qr.width()).ok()?;
    let modules = qr
        .to_colors()
        .into_iter()
        .map(|c| c == Color::Dark)
        .collect();
    Some((modules, width))
}

/// Code 128's bars for the payload: code set C (two digits a symbol) for the card's all-digit
/// payloads of even length, set B for anything else printable.
fn code128(payload: &str) -> Option<Vec<bool>> {
    let set = if payload.len().is_multiple_of(2) && payload.bytes().all(|b| b.is_ascii_digit()) {
        'Ć'
    } else {
        'Ɓ'
    };
    let bars = Code128::new(format!("{set}{payload}")).ok()?.encode();
    Some(bars.into_iter().map(|bar| bar == 1).collect())
}

/// Fen as yuan with two decimals, by integer arithmetic alone.
fn yuan_text(fen: i64) -> String {
    let sign = if fen < 0 { "-" } else { "" };
    let fen = fen.unsigned_abs();
    format!("{sign}{}.{:02}", fen / 100, fen % 100)
}

fn stop_words(stop: Stop, lang: Language) -> (&'static str, Option<Button>) {
    match stop {
        Stop::SignIn => (
            tr(
                lang,
                "校园账号需要重新登录后才能显示付款码",
                "Sign in to the campus account again to show the pay code",
            ),
            Some(Button::new(
                tr(lang, "登录校园账号", "Sign in").into(),
                ButtonRole::Primary,
                Action::Open {
                    route: Route::CampusAccount,
                },
            )),
        ),
        Stop::NotDigital => (
            tr(
                lang,
                "付款码要用数字卡：切换后，付款会从校园卡扣款",
                "The pay code needs the digital card: once switched, payments are taken from the campus card",
            ),
            Some(Button::new(
                tr(lang, "切换为数字卡", "Switch to the digital card").into(),
                ButtonRole::Primary,
                Action::RunTool {
                    tool: "wallet.useDigitalCard".into(),
                },
            )),
        ),
        Stop::Unreadable => (
            tr(
                lang,
                "校园卡服务暂时无法访问，付款码稍后自动重试",
                "The campus card service could not be reached; the pay code tries again shortly",
            ),
            None,
        ),
    }
}

/// One GET to the card service: its envelope's `data`.
async fn card(engine: &Engine, path: &str, query: Vec<(String, String)>) -> Result<Value, Stop> {
    let request = CampusRequest {
        path: path.into(),
        query,
        ..CampusRequest::default()
    };
    let answer = engine
        .campus()
        .request(Service::Card, &request)
        .await
        .map_err(|_| Stop::Unreadable)?;
    if answer["status"] == "signin_required" {
        return Err(Stop::SignIn);
    }
    let body = &answer["body"];
    match (answer["status"].as_u64(), body["code"].as_i64()) {
        (Some(200), Some(200)) if !body["data"].is_null() => Ok(body["data"].clone()),
        _ => Err(Stop::Unreadable),
    }
}

/// SERVICES.md §2: the digital card must be the one in use; the card's account number, the
/// pay account, then a fresh code for them.
async fn read(engine: &Engine) -> Result<Read, Stop> {
    if !engine.campus().signed_in() {
        return Err(Stop::SignIn);
    }
    let config = card(
        engine,
        "/berserker-app/useCard/getUseCardConfig",
        Vec::new(),
    )
    .await?;
    if config["cardType"].as_i64() != Some(1) {
        return Err(Stop::NotDigital);
    }
    let cards = card(engine, "/berserker-app/ykt/tsm/queryCard", Vec::new()).await?;
    let number = text(&cards["card"][0]["account"]).ok_or(Stop::Unreadable)?;
    let accounts = card(engine, "/berserker-app/ykt/tsm/codebarPayinfo", Vec::new()).await?;
    let pay = &accounts[0];
    let (payacc, paytype) = (
        text(&pay["payacc"]).ok_or(Stop::Unreadable)?,
        text(&pay["paytype"]).ok_or(Stop::Unreadable)?,
    );
    let codes = card(
        engine,
        "/berserker-app/ykt/tsm/batchGetBarCodeGet",
        vec![
            ("account".into(), number),
            ("payacc".into(), payacc),
            ("paytype".into(), paytype),
        ],
    )
    .await?;
    let payload = codes["barcode"][0]
        .as_str()
        .filter(|p| !p.is_empty())
        .ok_or(Stop::Unreadable)?;
    Ok(Read {
        payload: payload.to_owned(),
        account: text(&pay["name"]).unwrap_or_default(),
        balance_fen: pay["elec_accamt"].as_i64().ok_or(Stop::Unreadable)?,
    })
}

/// A string, or a number as its text (the card service sends either).
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{code128, yuan_text};

    #[test]
    fn the_barcode_is_code_128_set_c_for_the_cards_digits() {
        // Start C (11010011100), "12" (10110011100), "34" (10001011000), the check symbol
        // (105 + 12 + 2·34 = 185, mod 103 = 82: 10010011110), stop (1100011101011).
        let bars: String = code128("1234")
            .unwrap()
            .into_iter()
            .map(|b| if b { '1' } else { '0' })
            .collect();
        assert_eq!(
            bars,
            "11010011100101100111001000101100010010011110\
             1100011101011"
        );
    }

    #[test]
    fn a_balance_is_shown_in_yuan_with_two_decimals_from_its_fen() {
        let shown: Vec<String> = [0, 1, 29, 4250, 100_000, -5]
            .into_iter()
            .map(yuan_text)
            .collect();
        assert_eq!(shown, ["0.00", "0.01", "0.29", "42.50", "1000.00", "-0.05"]);
    }
}
