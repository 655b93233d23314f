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
    /// 今天: the student's data at a glance (issue 36.2), the bar's first tab and where the app opens.
    Today,
    Chat,
    /// The conversation list, under the chat.
    Conversations,
    ConversationSettings,
    Plugins,
    Memory,
    Jobs,
    /// 活动: today's calls in words (issue 41.5). It replaced the audit log's screen: both read
    /// the audit, and the student asks what the agent did, not which rows were written.
    Activity,
    /// 已允许: every "Always allow" in force, with its revoke.
    Allowances,
    /// 花钱: the money limits and today's spend.
    Spending,
    /// 云端: PKU harness Cloud on this device, its account and the app's backup (`CloudScreen`).
    Cloud,
    Consent,
    Model,
    /// The campus account: sign-in, its code, the sessions (DESIGN.md §10).
    CampusAccount,
    /// Treehole's own SMS check (`CampusCheckScreen` for `CampusCheck::Treehole`).
    TreeholeCheck,
    /// The course API's authorization that reading grades needs (SERVICES.md §9, 40077):
    /// `CampusCheckScreen` for `CampusCheck::Grades`.
    GradesCheck,
    /// The campus card's pay code (`PayCodeScreen`): opened from the wallet's plugin page, by
    /// the student's tap alone (seed 004), so it is in no bar.
    PayCode,
    /// The shuttle bus's ride codes (`RideCodeScreen`): opened from the bus plugin's bookings
    /// by the student's tap alone (SERVICES.md §11: on screen only), so it is in no bar.
    RideCode,
    /// A plugin's declared screen, opened by a Today tile or a link on the plugin's page
    /// (`Acted::OpenPluginScreen` names which), or a data source no declared screen shows
    /// (`Acted::OpenDataSource`); under the plugins, where each is listed.
    PluginScreen,
    /// The destinations that do not fit the bar.
    More,
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
    /// The bar: at most five destinations, Today first (where the app opens), the last "More".
    pub items: Vec<NavItem>,
    /// What "More" lists.
    pub more: Vec<NavItem>,
}

impl Navigation {
    /// The bar item a route is shown under: its own, or "More" for the rest (the campus
    /// screens under More as the consent screen that opens them; a conversation's settings
    /// and the conversation list under the chat; the pay code under the plugins, whose wallet page opens it).
    pub fn tab_of(&self, route: Route) -> Route {
        match route {
            _ if self.items.iter().any(|i| i.route == route) => route,
            Route::ConversationSettings | Route::Conversations => Route::Chat,
            Route::PayCode | Route::RideCode | Route::PluginScreen => Route::Plugins,
            _ => Route::More,
        }
    }
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
    // Today takes the bar's first place; 定时 moves under More: a job is set up once and then
    // runs by itself (its notices arrive on their own), while the memories' badge asks for the
    // student's review and stays in sight.
    Ok(Navigation {
        items: vec![
            item(Route::Today, tr(lang, "今天", "Today"), None),
            item(Route::Chat, tr(lang, "对话", "Chat"), None),
            item(Route::Plugins, tr(lang, "插件", "Plugins"), None),
            item(
                Route::Memory,
                tr(lang, "记忆", "Memory"),
                (pending > 0).then_some(pending),
            ),
            item(Route::More, tr(lang, "更多", "More"), None),
        ],
        more: vec![
            item(Route::Jobs, tr(lang, "定时任务", "Scheduled jobs"), None),
            item(
                Route::Consent,
                tr(lang, "同意与权限", "Consent and permissions"),
                None,
            ),
            item(
                Route::CampusAccount,
                tr(lang, "校园账号", "Campus account"),
                None,
            ),
            item(Route::Model, tr(lang, "模型", "Model"), None),
            item(Route::Activity, tr(lang, "活动", "Activity"), None),
            item(Route::Allowances, tr(lang, "已允许", "Allowed"), None),
            item(Route::Spending, tr(lang, "花钱", "Spending"), None),
            item(Route::Cloud, tr(lang, "云端", "Cloud"), None),
        ],
    })
}

pub fn route_for(screen: &str) -> Option<Route> {
    match screen {
        "api-keys" => Some(Route::Model),
        "campus-account" => Some(Route::CampusAccount),
        "treehole-verification" => Some(Route::TreeholeCheck),
        "grades-verification" => Some(Route::GradesCheck),
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
                Some(Route::TreeholeCheck),
                // DESIGN.md §10: each campus check has its own screen the agent may open.
                Some(Route::GradesCheck)
            ]
        );
        assert_eq!(route_for("settings"), None);
    }

    #[test]
    fn the_bar_has_at_most_five_destinations_and_every_route_lands_under_one() {
        struct Deny;
        #[async_trait::async_trait]
        impl crate::invoke::ApprovalBroker for Deny {
            async fn ask(&self, _prompt: crate::invoke::Prompt) -> crate::policy::Answer {
                crate::policy::Answer::Deny
            }
        }
        let engine =
            crate::Engine::in_memory(crate::Options::new(std::sync::Arc::new(Deny))).unwrap();
        let nav = build(&engine, Language::En).unwrap();
        let bar: Vec<Route> = nav.items.iter().map(|i| i.route).collect();
        assert_eq!(
            bar,
            [
                Route::Today,
                Route::Chat,
                Route::Plugins,
                Route::Memory,
                Route::More
            ]
        );
        let more: Vec<Route> = nav.more.iter().map(|i| i.route).collect();
        assert_eq!(
            more,
            [
                Route::Jobs,
                Route::Consent,
                Route::CampusAccount,
                Route::Model,
                Route::Activity,
                Route::Allowances,
                Route::Spending,
                Route::Cloud
            ]
        );
        assert_eq!(nav.tab_of(Route::Activity), Route::More);
        assert_eq!(nav.tab_of(Route::Spending), Route::More);
        assert_eq!(nav.tab_of(Route::TreeholeCheck), Route::More);
        assert_eq!(nav.tab_of(Route::ConversationSettings), Route::Chat);
        assert_eq!(nav.tab_of(Route::Jobs), Route::More);
        assert_eq!(nav.tab_of(Route::Today), Route::Today);
        assert_eq!(nav.tab_of(Route::PayCode), Route::Plugins);
        assert_eq!(nav.tab_of(Route::PluginScreen), Route::Plugins);
    }
}
