//! A tool the student runs with a tap — a plugin page's button, a screen's fix — and where its
//! answer leads. The call is the user's own (seed 000: `actor: user`) through the engine's
//! invoke path, so every gate still decides it; a tool that answers with a status object
//! (seed 004: `{status: …}` is a result, not an error) points at the screen that follows:
//! a screen of the app, the campus sign-in, the check its status names, or a page for the browser.

use serde_json::{Value, json};

use super::campus::CampusCheck;
use super::nav::route_for;
use super::{Acted, Route, ShellEffect};
use crate::engine::{Engine, EngineError};
use crate::invoke::{Call, Outcome};
use crate::policy::Actor;
use crate::settings::Language;

/// Runs `tool` with no input as the student's tap, and says what the shell does next.
pub(super) async fn run(engine: &Engine, lang: Language, tool: &str) -> Result<Acted, EngineError> {
    let call = Call {
        tool: tool.into(),
        actor: Actor::User,
        input: json!({}),
        conversation: None,
    };
    match engine.invoke(call).await.outcome {
        Outcome::Ran { result, .. } => follow(lang, &result),
        Outcome::Failed { message } | Outcome::Refused { message, .. } => {
            Err(EngineError::Invalid(message))
        }
    }
}

/// Where a tool's status answer leads; [`Acted::Done`] for an answer that is no status.
pub(super) fn follow(lang: Language, result: &Value) -> Result<Acted, EngineError> {
    let route = match result["status"].as_str() {
        Some("opened") => screen_route(result["screen"].as_str().unwrap_or_default()),
        Some("open_in_browser") => {
            let url = result["url"].as_str().unwrap_or_default();
            return open_in_browser(lang, url);
        }
        Some("signin_required") => Some(Route::CampusAccount),
        // DESIGN.md §10: each check is answered on its own screen, never another service's.
        Some("verification_required") => CampusCheck::asked_by(result).map(CampusCheck::route),
        _ => None,
    };
    Ok(route.map_or(Acted::Done, |route| Acted::Open { route }))
}

/// The screens a tool of the user's tap may open: the pay code and the bus's ride code (seed
/// 004: shown only on a screen, opened only by the student's tap) and the settings plugin's
/// routes.
fn screen_route(screen: &str) -> Option<Route> {
    match screen {
        "payCode" => Some(Route::PayCode),
        "rideCode" => Some(Route::RideCode),
        other => route_for(other),
    }
}

/// A page for the system's browser: `https` only, so a tap never hands the browser a scheme
/// that runs something on the phone (`intent:`, `javascript:`, a file).
pub(super) fn open_in_browser(lang: Language, url: &str) -> Result<Acted, EngineError> {
    match https_page(url) {
        Some(page) => Ok(Acted::Shell(ShellEffect::OpenBrowser { url: page.into() })),
        None => Err(EngineError::Invalid(match lang {
            Language::Zh => format!("只能在浏览器中打开 https 网页，不能打开 {url}"),
            Language::En => format!("Only https pages open in the browser, not {url}"),
        })),
    }
}

/// An `https` address with a host: the only kind of page the browser is handed (the chat's
/// card offers its tap for no other).
pub(super) fn https_page(url: &str) -> Option<url::Url> {
    url::Url::parse(url)
        .ok()
        .filter(|page| page.scheme() == "https" && page.host_str().is_some())
}
