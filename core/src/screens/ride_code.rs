//! The shuttle bus's ride code (乘车码, SERVICES.md §11): a boarding credential, shown only on
//! this screen, like the card's pay code (seed 004: a code that pays or boards is never a tool
//! result). No tool fetches it: the core reads the student's bookings and each one's code
//! itself through the campus client, so the code is never a tool result, an event, an audit
//! row, a data source's cached value or in the model's context. The screen is read only while
//! it is open; nothing read here is kept.

use serde_json::Value;

use super::pay_code::qr_modules;
use super::texts::tr;
use super::{Action, Button, ButtonRole, Route};
use crate::campus::CampusRequest;
use crate::campus::wire::Service;
use crate::engine::Engine;
use crate::settings::Language;

/// The student's current bookings, each with its ride code, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RideCodeScreen {
    pub title: String,
    /// What to do with the code, and that it is not to be passed on.
    pub explanation: String,
    /// Each current booking's code, the earliest departure first.
    pub rides: Vec<RideCode>,
    /// Why there is no code: the account is not signed in, there is no booking, or the bus
    /// service could not be read.
    pub problem: Option<String>,
    /// The tap that mends the problem (sign in), if one does.
    pub fix: Option<Button>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RideCode {
    /// The route as the bus service names it (燕园校区→新校区).
    pub route: String,
    /// The departure, local "YYYY-MM-DD HH:mm".
    pub departure: String,
    /// What the QR code encodes. Shown on this screen only.
    pub payload: String,
    /// The payload's QR code, `qr_width` modules to a row, row after row: true is dark. The
    /// shell paints each module a square, with a quiet zone of four around them.
    pub qr_modules: Vec<bool>,
    pub qr_width: u32,
}

/// What stopped the codes from being read.
enum Stop {
    SignIn,
    NoBooking,
    Unreadable,
}

pub(super) async fn build(engine: &Engine, lang: Language) -> RideCodeScreen {
    let mut screen = RideCodeScreen {
        title: tr(lang, "班车乘车码", "Shuttle bus ride code").into(),
        explanation: tr(
            lang,
            "上车时向司机出示乘车码扫码签到。乘车码只在这里显示，请勿截图或发给他人。",
            "Show the ride code to the driver when you board; scanning it signs you in. It is shown only here: do not screenshot it or send it to anyone.",
        )
        .into(),
        rides: Vec::new(),
        problem: None,
        fix: None,
    };
    match read(engine).await {
        Ok(rides) => screen.rides = rides,
        Err(stop) => {
            let (problem, fix) = stop_words(stop, lang);
            screen.problem = Some(problem.into());
            screen.fix = fix;
        }
    }
    screen
}

fn stop_words(stop: Stop, lang: Language) -> (&'static str, Option<Button>) {
    match stop {
        Stop::SignIn => (
            tr(
                lang,
                "校园账号需要重新登录后才能显示乘车码",
                "Sign in to the campus account again to show the ride code",
            ),
            Some(Button::new(
                tr(lang, "登录校园账号", "Sign in").into(),
                ButtonRole::Primary,
                Action::Open {
                    route: Route::CampusAccount,
                },
            )),
        ),
        Stop::NoBooking => (
            tr(
                lang,
                "还没有班车预约：预约后，乘车码显示在这里",
                "No shuttle bus booking yet: once you book, its ride code shows here",
            ),
            None,
        ),
        Stop::Unreadable => (
            tr(
                lang,
                "班车预约服务暂时无法访问，请稍后再试",
                "The shuttle bus service could not be reached; try again later",
            ),
            None,
        ),
    }
}

/// One GET to the bus service: its envelope's `d` when `e` is 0 (SERVICES.md §11: failures are
/// HTTP 200 with `{e, m}`; an ended session, `e: "10042"`, the campus client answers as
/// `signin_required`).
async fn wproc(engine: &Engine, path: &str, query: &[(&str, String)]) -> Result<Value, Stop> {
    let request = CampusRequest {
        path: path.into(),
        query: query
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        ..CampusRequest::default()
    };
    let answer = engine
        .campus()
        .request(Service::Bus, &request)
        .await
        .map_err(|_| Stop::Unreadable)?;
    if answer["status"] == "signin_required" {
        return Err(Stop::SignIn);
    }
    let body = &answer["body"];
    let ok = matches!(&body["e"], Value::Number(n) if n.as_i64() == Some(0)) || body["e"] == "0";
    match answer["status"].as_u64() {
        Some(200) if ok => Ok(body["d"].clone()),
        _ => Err(Stop::Unreadable),
    }
}

/// The current bookings (SERVICES.md §11 "My bookings"), then each one's ride QR.
async fn read(engine: &Engine) -> Result<Vec<RideCode>, Stop> {
    if !engine.campus().signed_in() {
        return Err(Stop::SignIn);
    }
    let mine = wproc(
        engine,
        "/site/reservation/my-list-time",
        &[
            ("p", "1".into()),
            ("page_size", "0".into()),
            ("status", "2".into()),
            ("sort_time", "true".into()),
            ("sort", "asc".into()),
        ],
    )
    .await?;
    let bookings = mine["data"].as_array().ok_or(Stop::Unreadable)?;
    if bookings.is_empty() {
        return Err(Stop::NoBooking);
    }
    let mut rides = Vec::with_capacity(bookings.len());
    for booking in bookings {
        let (id, hid) = (
            text(&booking["id"]).ok_or(Stop::Unreadable)?,
            text(&booking["hall_appointment_data_id"]).ok_or(Stop::Unreadable)?,
        );
        let sign = wproc(
            engine,
            "/site/reservation/get-sign-qrcode",
            &[
                ("type", "0".into()),
                ("id", id),
                ("hall_appointment_data_id", hid),
            ],
        )
        .await?;
        let payload = sign["code"]
            .as_str()
            .filter(|p| !p.is_empty())
            .ok_or(Stop::Unreadable)?;
        let (qr_modules, qr_width) = qr_modules(payload).ok_or(Stop::Unreadable)?;
        rides.push(RideCode {
            route: text(&booking["resource_name"]).unwrap_or_default(),
            // SERVICES.md §11: `appointment_tim` comes with a trailing space; trim it.
            departure: text(&booking["appointment_tim"])
                .map(|t| t.trim().to_owned())
                .unwrap_or_default(),
            payload: payload.to_owned(),
            qr_modules,
            qr_width,
        });
    }
    Ok(rides)
}

/// A string, or a number as its text (the bus service sends either).
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
