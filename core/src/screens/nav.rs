//! Where a student can go: the app's destinations with their names and what waits in each,
//! and the screen each of the settings plugin's `openScreen` routes lands on.

use super::texts::tr;
use crate::engine::{Engine, EngineError};
use crate::settings::Language;
use crate::store::memories::MemoryState;

/// A screen of the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum Route {
    Chat,
    ConversationSettings,
    Plugins,
    Memory,
    Jobs,
    Audit,
    Consent,
    Model,
    /// The campus account: sign-in, its code, the sessions (DESIGN.md §10).
    CampusAccount,
    /// Treehole's own SMS check.
    TreeholeCheck,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct NavItem {
    pub route: Route,
    pub label: String,
    /// How many things wait there for the user (pending memories), if any.
    pub badge: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct Navigation {
    pub items: Vec<NavItem>,
}

pub(super) fn build(engine: &Engine, lang: Language) -> Result<Navigation, EngineError> {
    let pending = engine
        .memories()?
        .iter()
        .filter(|m| m.state == MemoryState::Pending)
        .count() as u32;
    let item = |route, label: &str, badge| NavItem {
        route,
        label: label.to_owned(),
        badge,
    };
    Ok(Navigation {
        items: vec![
            item(Route::Chat, tr(lang, "对话", "Chat"), None),
            item(Route::Plugins, tr(lang, "插件", "Plugins"), None),
            item(
                Route::Memory,
                tr(lang, "记忆", "Memory"),
                (pending > 0).then_some(pending),
            ),
            item(Route::Jobs, tr(lang, "定时任务", "Scheduled jobs"), None),
            item(Route::Audit, tr(lang, "操作记录", "Activity log"), None),
            item(
                Route::Consent,
                tr(lang, "同意与权限", "Consent and permissions"),
                None,
            ),
            item(Route::Model, tr(lang, "模型", "Model"), None),
        ],
    })
}

/// The screen a `settings.openScreen` route opens (`Platform::open_screen`), where the user
/// does what only their hands may (seed 000: secrets and hands-on steps are uiOnly).
pub fn route_for(screen: &str) -> Option<Route> {
    match screen {
        "api-keys" => Some(Route::Model),
        "campus-account" => Some(Route::CampusAccount),
        "treehole-verification" => Some(Route::TreeholeCheck),
        "system-permissions" | "cloud" => Some(Route::Consent),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::builtin::SCREENS;

    #[test]
    fn every_route_the_agent_may_open_lands_on_a_screen() {
        let routes: Vec<Option<Route>> = SCREENS.iter().map(|s| route_for(s)).collect();
        assert_eq!(
            routes,
            [
                Some(Route::Model),
                Some(Route::CampusAccount),
                Some(Route::Consent),
                Some(Route::Consent),
                Some(Route::TreeholeCheck)
            ]
        );
        assert_eq!(route_for("settings"), None);
    }
}
