//! Where the student goes (issue 36's navigation): the bar opens on Today, a Today tile's tap
//! lands on its plugin's declared screen, and a plugin's page lists each screen it declares,
//! each of which opens. Against the campus simulator on 127.0.0.1 through the shipped plugins.

use std::sync::Arc;

use async_trait::async_trait;
use harness_campus_sim::{DEMO, Simulator};
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::plugins::script::Shipped;
use harness_core::policy::Answer;
use harness_core::screens::{Acted, Action, Live, Route, Screens};
use harness_core::secrets::MemorySecrets;
use harness_core::settings::{Change, Language};
use harness_core::{Engine, Options};

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

struct World {
    _sim: Simulator,
    screens: Screens,
    _dir: tempfile::TempDir,
}

/// The shipped plugins on a data directory of their own, in `lang`, signed in as DEMO.
async fn world(lang: Language) -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Deny));
    options.catalog = Arc::new(Shipped);
    options.secrets = Arc::new(MemorySecrets::default());
    options.campus = Origin::development(&sim.origin()).unwrap();
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    engine.change_setting(Change::Language(lang)).unwrap();
    let step = engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
    World {
        _sim: sim,
        screens: Screens::new(engine, Live::new()),
        _dir: dir,
    }
}

/// Taps `action` and reads the plugin screen it opens: its plugin, id and title.
async fn land(screens: &Screens, action: Action) -> (String, String, String) {
    let Acted::OpenPluginScreen { plugin, screen } = screens.act(action).await.unwrap() else {
        panic!("the tap opens no plugin screen");
    };
    let shown = screens.plugin_screen(&plugin, &screen).await.unwrap();
    assert_eq!((&shown.plugin, &shown.screen), (&plugin, &screen));
    (plugin, screen, shown.title)
}

#[tokio::test]
async fn the_bar_opens_on_today_and_keeps_five_items_with_jobs_under_more() {
    // issue 36.2: Today is the first tab; the bar stays at five, 定时任务 under 更多.
    let w = world(Language::Zh).await;
    let nav = w.screens.navigation().unwrap();
    let bar: Vec<(Route, &str)> = nav
        .items
        .iter()
        .map(|i| (i.route, i.label.as_str()))
        .collect();
    assert_eq!(
        bar,
        [
            (Route::Today, "今天"),
            (Route::Chat, "对话"),
            (Route::Plugins, "插件"),
            (Route::Memory, "记忆"),
            (Route::More, "更多")
        ]
    );
    assert_eq!(
        (nav.more[0].route, nav.more[0].label.as_str()),
        (Route::Jobs, "定时任务")
    );
    assert_eq!(nav.tab_of(Route::Jobs), Route::More);
    assert_eq!(nav.tab_of(Route::PluginScreen), Route::Plugins);
}

#[tokio::test]
async fn a_today_tiles_tap_lands_on_its_plugins_screen() {
    // issue 36.2: "a tap opening the plugin's screen"; the shell follows the core's Acted.
    let w = world(Language::Zh).await;
    let today = w.screens.today().await;
    let mut landed = Vec::new();
    for tile in today.tiles {
        landed.push(
            land(
                &w.screens,
                tile.open.expect("a tile of a plugin that is on"),
            )
            .await,
        );
    }
    let landed: Vec<(&str, &str, &str)> = landed
        .iter()
        .map(|(p, s, t)| (p.as_str(), s.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        landed,
        [
            ("wallet", "card", "校园卡"),
            ("canteen", "canteens", "食堂"),
            ("notices", "notices", "通知"),
            ("treehole", "feed", "树洞")
        ]
    );
}

#[tokio::test]
async fn a_plugins_page_lists_its_screens_and_each_opens() {
    // issue 36 (navigation): from a plugin's page, a route to each of its declared screens.
    let w = world(Language::En).await;
    let mut seen = Vec::new();
    for plugin in [
        "wallet",
        "canteen",
        "classrooms",
        "notices",
        "treehole",
        "library",
    ] {
        let detail = w.screens.plugin_detail(plugin).unwrap();
        for link in detail.screens {
            let (p, s, title) = land(&w.screens, link.action).await;
            assert_eq!(title, link.label, "the link reads as the screen's title");
            seen.push(format!("{p}/{s}: {title}"));
        }
    }
    assert_eq!(
        seen,
        [
            "wallet/card: Campus card",
            "canteen/canteens: Canteens",
            "classrooms/free: Free classrooms",
            "notices/notices: Notices",
            "treehole/feed: Treehole",
            "treehole/search: Search Treehole",
            "library/search: Search the catalogue"
        ]
    );
}

#[tokio::test]
async fn a_plugin_turned_off_lists_no_screen_and_an_undeclared_screen_does_not_open() {
    let w = world(Language::Zh).await;
    w.screens
        .act(Action::SetEnabled {
            plugin: "canteen".into(),
            enabled: false,
        })
        .await
        .unwrap();
    assert_eq!(w.screens.plugin_detail("canteen").unwrap().screens, []);
    let refused = w
        .screens
        .act(Action::OpenPluginScreen {
            plugin: "wallet".into(),
            screen: "nowhere".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "插件「wallet」没有名为「nowhere」的页面"
    );
}
