//! The plugins screen, a plugin's page and Today as the student shapes it (issue 36): the
//! plugins grouped 校园 / 你添加的 / 系统 with a switch only where turning off is safe, a page's
//! data sources and screens that open, and Today's tiles chosen, removed and reordered. Against
//! the campus simulator on 127.0.0.1 through the shipped plugins.

use std::sync::Arc;

use async_trait::async_trait;
use harness_campus_sim::{DEMO, SMS_CODE, Simulator};
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::plugins::script::Shipped;
use harness_core::policy::Answer;
use harness_core::screens::{Acted, Action, FieldValue, Live, Route, Screens, SectionState};
use harness_core::secrets::MemorySecrets;
use harness_core::settings::{Change, Language, parse_change};
use harness_core::store::DATABASE_FILE;
use harness_core::{Engine, Options};
use serde_json::json;

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

struct World {
    _sim: Simulator,
    engine: Arc<Engine>,
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
        engine: engine.clone(),
        screens: Screens::new(engine, Live::new()),
        _dir: dir,
    }
}

/// Each group's heading and its plugins' titles with their kinds, as the screen lists them.
fn listed(screens: &Screens) -> Vec<(String, Vec<String>)> {
    screens
        .plugins()
        .groups
        .iter()
        .map(|g| {
            let rows = g
                .plugins
                .iter()
                .map(|p| format!("{} ({})", p.title, p.kind_label))
                .collect();
            (g.title.clone(), rows)
        })
        .collect()
}

#[tokio::test]
async fn the_plugins_screen_groups_campus_then_system_the_card_first_then_by_title() {
    // issue 36 (plugins screen): 校园 first, 校园卡 leading it, then the student's own, then
    // 系统; within a group by the title the student reads, never by the English id.
    let w = world(Language::Zh).await;
    let s = |v: &[&str]| v.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        listed(&w.screens),
        [
            (
                "校园".to_owned(),
                s(&[
                    "校园卡 (校园)",
                    "图书馆 (校园)",
                    "成绩 (校园)",
                    "教学网 (校园)",
                    "树洞 (校园)",
                    "班车 (校园)",
                    "空闲教室 (校园)",
                    "通知公告 (校园)",
                    "食堂 (校园)"
                ])
            ),
            (
                "系统".to_owned(),
                s(&[
                    "仪表盘 (系统)",
                    "定时任务 (系统)",
                    "文件 (系统)",
                    "校园时间 (系统)",
                    "记忆 (系统)",
                    "设置 (系统)"
                ])
            )
        ]
    );
    w.engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    assert_eq!(
        listed(&w.screens),
        [
            (
                "Campus".to_owned(),
                s(&[
                    "Campus card (Campus)",
                    "Canteens (Campus)",
                    "Course website (Campus)",
                    "Free classrooms (Campus)",
                    "Grades (Campus)",
                    "Library (Campus)",
                    "School notices (Campus)",
                    "Shuttle bus (Campus)",
                    "Treehole (Campus)"
                ])
            ),
            (
                "System".to_owned(),
                s(&[
                    "Campus time (System)",
                    "Dashboard (System)",
                    "Files (System)",
                    "Memory (System)",
                    "Scheduled jobs (System)",
                    "Settings (System)"
                ])
            )
        ]
    );
}

#[tokio::test]
async fn a_plugin_the_app_needs_has_no_switch_and_turning_it_off_is_refused_with_words() {
    // issue 36: the switch only where turning off is safe; the core refuses the rest.
    let w = world(Language::Zh).await;
    let list = w.screens.plugins();
    let switches: Vec<(&str, bool, Option<&str>)> = list
        .rows()
        .filter(|r| ["settings", "time", "memory"].contains(&r.id.as_str()))
        .map(|r| (r.id.as_str(), r.toggle.is_some(), r.fixed.as_deref()))
        .collect();
    assert_eq!(
        switches,
        [
            (
                "time",
                false,
                Some("应用需要它，不能关闭：其他插件靠它换算第几周、第几节")
            ),
            ("memory", true, None),
            (
                "settings",
                false,
                Some("应用需要它，不能关闭：助手靠它请你登录校园账号、填写密钥和授权")
            )
        ]
    );
    let page = w.screens.plugin_detail("settings").unwrap();
    assert_eq!((page.toggle, page.fixed.is_some()), (None, true));
    // A tap built anyway is refused in words, and the plugin stays on.
    let refused = w
        .screens
        .act(Action::SetEnabled {
            plugin: "settings".into(),
            enabled: false,
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "「设置」没有关闭：应用需要它，不能关闭：助手靠它请你登录校园账号、填写密钥和授权"
    );
    // So is the same change through the settings, naming its key (the agent's path).
    let change = parse_change("plugins.time.enabled", &json!(false)).unwrap();
    assert_eq!(
        w.engine.change_setting(change).unwrap_err().to_string(),
        "settings key \"plugins.time.enabled\": plugin \"time\" is part of the app and cannot be turned off"
    );
    let on: Vec<bool> = w
        .engine
        .plugins()
        .iter()
        .filter(|v| ["settings", "time"].contains(&v.plugin.id.as_str()))
        .map(|v| v.enabled)
        .collect();
    assert_eq!(on, [true, true]);
}

/// Today's tiles as `plugin.source` with their state, in order.
async fn tiles(screens: &Screens) -> Vec<(String, SectionState)> {
    screens
        .today()
        .await
        .tiles
        .iter()
        .map(|t| (format!("{}.{}", t.plugin, t.source), t.state))
        .collect()
}

fn ready(tiles: &[&str]) -> Vec<(String, SectionState)> {
    tiles
        .iter()
        .map(|t| ((*t).to_owned(), SectionState::Ready))
        .collect()
}

#[tokio::test]
async fn today_shows_exactly_the_chosen_tiles_and_its_edit_mode_adds_moves_and_removes_them() {
    // issue 36: Today's tiles are the student's to choose, each change an Action of the core.
    let w = world(Language::Zh).await;
    let mut defaults = ready(&["wallet.balance", "canteen.crowd", "notices.latest"]);
    // Nothing followed yet.
    defaults.push(("treehole.following".into(), SectionState::Empty));
    assert_eq!(tiles(&w.screens).await, defaults);
    let remove = w.screens.today().await.tiles[3].remove.clone();
    assert_eq!(
        remove,
        Action::RemoveTodayTile {
            plugin: "treehole".into(),
            source: "following".into()
        }
    );
    w.screens.act(remove).await.unwrap();
    assert_eq!(
        tiles(&w.screens).await,
        ready(&["wallet.balance", "canteen.crowd", "notices.latest"])
    );
    let today = w.screens.today().await;
    let addable: Vec<&str> = today.addable.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(
        addable,
        [
            "教学网 · 未来 7 天的作业截止",
            "成绩 · 我的成绩",
            "树洞 · 关注的树洞"
        ]
    );
    assert_eq!(
        (
            today.tiles[0].move_up.clone(),
            today.tiles[2].move_down.clone()
        ),
        (None, None)
    );
    let add = today.addable[0].action.clone();
    assert_eq!(
        add,
        Action::AddTodayTile {
            plugin: "course".into(),
            source: "deadlines".into()
        }
    );
    w.screens.act(add).await.unwrap();
    assert_eq!(
        tiles(&w.screens).await,
        ready(&[
            "wallet.balance",
            "canteen.crowd",
            "notices.latest",
            "course.deadlines"
        ])
    );
    // The new last tile moves up to the front, one tap per place or straight there.
    let last = w.screens.today().await.tiles[3].move_up.clone().unwrap();
    assert_eq!(
        last,
        Action::MoveTodayTile {
            plugin: "course".into(),
            source: "deadlines".into(),
            to: 2
        }
    );
    w.screens.act(last).await.unwrap();
    w.screens
        .act(Action::MoveTodayTile {
            plugin: "course".into(),
            source: "deadlines".into(),
            to: 0,
        })
        .await
        .unwrap();
    let canteen = w.screens.today().await.tiles[2].remove.clone();
    w.screens.act(canteen).await.unwrap();
    assert_eq!(
        tiles(&w.screens).await,
        ready(&["course.deadlines", "wallet.balance", "notices.latest"])
    );
    assert_eq!(
        w.engine.settings().today.tiles,
        ["course.deadlines", "wallet.balance", "notices.latest"]
    );
    // A chosen tile whose plugin is turned off stays, saying so, with the way to turn it on.
    w.screens
        .act(Action::SetEnabled {
            plugin: "notices".into(),
            enabled: false,
        })
        .await
        .unwrap();
    let today = w.screens.today().await;
    let off = &today.tiles[2];
    assert_eq!(
        (
            off.title.as_str(),
            off.state,
            off.message.as_deref(),
            off.open.clone()
        ),
        (
            "最新通知",
            SectionState::Error,
            Some("「通知公告」已关闭：在「插件」里打开它，这里就会显示"),
            None
        )
    );
    assert_eq!(
        off.fix.as_ref().map(|b| b.action.clone()),
        Some(Action::Open {
            route: Route::Plugins
        })
    );
    // A source of a plugin that is off cannot be added.
    let refused = w
        .screens
        .act(Action::AddTodayTile {
            plugin: "notices".into(),
            source: "latest".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "插件「notices」没有开启名为「latest」的数据"
    );
}

#[tokio::test]
async fn a_bad_today_tiles_value_is_refused_naming_the_setting() {
    // issue 36: a validated value; bad input names the setting.
    let w = world(Language::En).await;
    let err = |value: serde_json::Value| match parse_change("today.tiles", &value) {
        Ok(change) => w.engine.change_setting(change).unwrap_err().to_string(),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        err(json!("wallet.balance")),
        "settings key \"today.tiles\": expected a JSON array of data sources (\"wallet.balance\"), got \"wallet.balance\""
    );
    assert_eq!(
        err(json!(["wallet"])),
        "settings key \"today.tiles\": item 0: expected a plugin's data source as plugin.source (\"wallet.balance\"), got \"wallet\""
    );
    assert_eq!(
        err(json!(["wallet.balance", "wallet.balance"])),
        "settings key \"today.tiles\": item 1: \"wallet.balance\" is listed twice"
    );
    assert_eq!(
        err(json!(["wallet.balance", "treehole.follows"])),
        "settings key \"today.tiles\": \"treehole.follows\" is no installed plugin's data source; use one of canteen.crowd, course.deadlines, grades.scores, notices.latest, treehole.following, wallet.balance"
    );
    // Nothing of a refused value was kept.
    assert_eq!(
        w.engine.settings().today.tiles,
        [
            "wallet.balance",
            "canteen.crowd",
            "notices.latest",
            "treehole.following"
        ]
    );
}

#[tokio::test]
async fn a_data_source_on_a_plugins_page_opens_the_screen_that_shows_it_else_its_value() {
    // issue 36: a page's data sources are tappable; where a tap lands is the core's decision.
    let w = world(Language::Zh).await;
    let wallet = w.screens.plugin_detail("wallet").unwrap();
    let links: Vec<(&str, &Action)> = wallet
        .data_sources
        .iter()
        .map(|b| (b.label.as_str(), &b.action))
        .collect();
    let balance = Action::OpenDataSource {
        plugin: "wallet".into(),
        source: "balance".into(),
    };
    assert_eq!(links, [("校园卡余额", &balance)]);
    assert_eq!(
        w.screens.act(balance).await.unwrap(),
        Acted::OpenPluginScreen {
            plugin: "wallet".into(),
            screen: "card".into()
        }
    );
    // 成绩 declares no screen: its source opens as its own value.
    let grades = w.screens.plugin_detail("grades").unwrap();
    let scores = grades.data_sources[0].action.clone();
    assert_eq!(
        w.screens.act(scores).await.unwrap(),
        Acted::OpenDataSource {
            plugin: "grades".into(),
            source: "scores".into()
        }
    );
    let shown = w.screens.source_screen("grades", "scores").await.unwrap();
    let section = &shown.sections[0];
    // It shows its own state with the tap that mends it: 成绩 is read on Treehole's host,
    // whose SMS check comes first (SERVICES.md §9).
    assert_eq!(
        (shown.title.as_str(), section.title.as_str(), section.state),
        ("我的成绩", "我的成绩", SectionState::VerificationRequired)
    );
    assert_eq!(
        section.button.as_ref().map(|b| b.action.clone()),
        Some(Action::Open {
            route: Route::TreeholeCheck
        })
    );
}

#[tokio::test]
async fn a_feeds_post_opens_its_thread_and_the_page_lists_no_screen_that_needs_a_post() {
    // issue 36: the post screen is reached from a feed item's tap with its pid; the plugin's
    // page lists only the screens that need nothing.
    let w = world(Language::Zh).await;
    let page = w.screens.plugin_detail("treehole").unwrap();
    let links: Vec<&str> = page.screens.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(links, ["树洞", "搜索树洞"]);
    w.engine.campus().treehole_send_code().await.unwrap();
    w.engine.campus().treehole_verify(SMS_CODE).await.unwrap();
    let feed = w.screens.plugin_screen("treehole", "feed").await.unwrap();
    let newest = feed.sections.iter().find(|s| s.title == "最新").unwrap();
    assert_eq!(newest.state, SectionState::Ready);
    assert_eq!(newest.row_opens.len(), newest.rows.len());
    let pid = newest.rows[0][0].clone();
    let tap = newest.row_opens[0].clone();
    assert_eq!(
        tap,
        Action::OpenScreenItem {
            plugin: "treehole".into(),
            screen: "thread".into(),
            values: vec![FieldValue {
                name: "pid".into(),
                value: pid.clone()
            }]
        }
    );
    // Before any post is chosen, the thread screen has nothing to show.
    let unchosen = w.screens.plugin_screen("treehole", "thread").await.unwrap();
    assert_eq!(unchosen.sections[1].state, SectionState::Empty);
    assert_eq!(
        w.screens.act(tap).await.unwrap(),
        Acted::OpenPluginScreen {
            plugin: "treehole".into(),
            screen: "thread".into()
        }
    );
    let thread = w.screens.plugin_screen("treehole", "thread").await.unwrap();
    assert_eq!(thread.sections[0].fields[0].value, pid);
    assert_eq!(
        (thread.sections[1].title.as_str(), thread.sections[1].state),
        ("回复", SectionState::Ready)
    );
    // Only a screen a declared list's items open takes an item's values.
    let refused = w
        .screens
        .act(Action::OpenScreenItem {
            plugin: "treehole".into(),
            screen: "search".into(),
            values: vec![FieldValue {
                name: "query".into(),
                value: "食堂".into(),
            }],
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "插件「treehole」没有名为「search」的页面"
    );
}

#[tokio::test]
async fn a_plugin_the_app_needs_found_off_in_an_older_data_directory_opens_on() {
    // issue 36: the app's needed plugins stay on, whatever an earlier version let be stored.
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let mut options = Options::new(Arc::new(Deny));
        options.catalog = Arc::new(Shipped);
        options.secrets = Arc::new(MemorySecrets::default());
        Engine::open(dir.path(), options).unwrap()
    };
    drop(open());
    let raw = rusqlite::Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    raw.execute(
        "UPDATE plugins SET enabled = 0 WHERE id IN ('settings', 'memory')",
        [],
    )
    .unwrap();
    drop(raw);
    let engine = open();
    let on: Vec<(String, bool)> = engine
        .plugins()
        .iter()
        .filter(|v| ["settings", "memory"].contains(&v.plugin.id.as_str()))
        .map(|v| (v.plugin.id.clone(), v.enabled))
        .collect();
    assert_eq!(
        on,
        [("memory".to_owned(), false), ("settings".to_owned(), true)]
    );
}
