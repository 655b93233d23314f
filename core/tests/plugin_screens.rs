//! The campus plugins' declared screens (DESIGN.md §2, seed 004: "a screen calls it with
//! invoke when the user taps") and Today, read from the campus simulator on 127.0.0.1 through
//! the shipped plugins: each section's exact words, the states the core gives, and that
//! reading a screen never runs a tool that is not a read.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::ManualClock;
use harness_campus_sim::{DEMO, SMS_CODE, Simulator};
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::plugins::script::Shipped;
use harness_core::policy::Answer;
use harness_core::registry::{Manifest, Plugin, PluginKind};
use harness_core::screens::{
    Acted, Action, FieldValue, LabelValue, Live, Route, Screens, SectionKind, SectionState,
    WidgetState,
};
use harness_core::secrets::MemorySecrets;
use harness_core::settings::{Change, Language};
use harness_core::{Engine, Options};
use serde_json::json;

/// Keeps every prompt and denies it: reading a screen must ask nothing.
#[derive(Default)]
struct Broker(Mutex<Vec<Prompt>>);

#[async_trait]
impl ApprovalBroker for Broker {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.0.lock().unwrap().push(prompt);
        Answer::Deny
    }
}

/// Beijing time (UTC+8) on 2026-12-02, a Wednesday, as milliseconds.
fn beijing(hour: i64, minute: i64) -> i64 {
    const MIDNIGHT_UTC: i64 = 1_796_169_600_000; // 2026-12-02 00:00 UTC
    MIDNIGHT_UTC + ((hour - 8) * 60 + minute) * 60_000
}

struct World {
    sim: Simulator,
    broker: Arc<Broker>,
    clock: Arc<ManualClock>,
    screens: Screens,
    _dir: tempfile::TempDir,
}

/// The shipped plugins on a data directory of their own at Wednesday 11:50 in Beijing, in
/// `lang`, signed in to the simulator as DEMO when `signed_in`.
async fn world(lang: Language, signed_in: bool) -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let broker = Arc::new(Broker::default());
    let clock = ManualClock::at(beijing(11, 50));
    let mut options = Options::new(broker.clone());
    options.catalog = Arc::new(Shipped);
    options.clock = clock.clone();
    options.secrets = Arc::new(MemorySecrets::default());
    options.campus = Origin::development(&sim.origin()).unwrap();
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    engine.change_setting(Change::Language(lang)).unwrap();
    if signed_in {
        let step = engine
            .campus()
            .sign_in(DEMO.id, DEMO.password, false)
            .await
            .unwrap();
        assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
    }
    World {
        sim,
        broker,
        clock,
        screens: Screens::new(engine, Live::new()),
        _dir: dir,
    }
}

fn lv(label: &str, value: &str) -> LabelValue {
    LabelValue {
        label: label.into(),
        value: value.into(),
    }
}

fn cells(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect()
}

#[tokio::test]
async fn the_canteen_screen_lists_the_least_crowded_first_and_the_canteens_open_now() {
    // DESIGN §2: a declared screen's table of a data source, sorted as declared; lists of a
    // read tool's result with their item fields labelled.
    let w = world(Language::Zh, false).await;
    let screen = w
        .screens
        .plugin_screen("canteen", "canteens")
        .await
        .unwrap();
    assert_eq!(screen.title, "食堂");
    let crowd = &screen.sections[0];
    assert_eq!(
        (crowd.kind, crowd.state, crowd.title.as_str()),
        (
            SectionKind::Table,
            SectionState::Ready,
            "就餐人数（人少的在前）"
        )
    );
    assert_eq!(crowd.columns, ["食堂", "满座（%）", "在场人数", "座位"]);
    assert_eq!(
        crowd.rows,
        cells(&[
            &["燕南食堂", "18", "105", "600"],
            &["农园食堂", "27", "318", "1200"],
            &["学一食堂", "87", "692", "800"],
        ])
    );
    assert_eq!(crowd.age.as_deref(), Some("刚刚更新"));
    let open = &screen.sections[1];
    assert_eq!(
        (open.kind, open.state),
        (SectionKind::List, SectionState::Ready)
    );
    assert_eq!(open.columns, ["食堂", "餐次", "关门时间"]);
    assert!(!open.rows.is_empty(), "{open:?}");
    assert!(w.broker.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_canteen_screen_reads_in_english_with_the_english_labels() {
    let w = world(Language::En, false).await;
    let screen = w
        .screens
        .plugin_screen("canteen", "canteens")
        .await
        .unwrap();
    assert_eq!(screen.title, "Canteens");
    assert_eq!(
        screen.sections[0].columns,
        ["Canteen", "Full (%)", "People", "Seats"]
    );
    assert_eq!(screen.sections[0].age.as_deref(), Some("Updated just now"));
}

#[tokio::test]
async fn the_card_screen_shows_the_balance_and_records_and_runs_no_tool_but_reads() {
    // DESIGN §2: reading a screen never runs a non-read tool; the pay code stays on its own
    // screen, one tap away (seed 004).
    let w = world(Language::Zh, true).await;
    let screen = w.screens.plugin_screen("wallet", "card").await.unwrap();
    let kinds: Vec<SectionKind> = screen.sections.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            SectionKind::Value,
            SectionKind::Action,
            SectionKind::Table,
            SectionKind::Action,
            SectionKind::Action
        ]
    );
    let balance = &screen.sections[0];
    assert_eq!(balance.state, SectionState::Ready);
    assert_eq!(
        balance.values,
        [
            lv("余额（元）", "42.5"),
            lv("今日消费（元）", "18.3"),
            lv("每日限额（元）", "300"),
            lv("已挂失", "否"),
            lv("已冻结", "否"),
        ]
    );
    let records = &screen.sections[2];
    assert_eq!(
        records.columns,
        ["时间", "商户", "金额（元）", "余额（元）"]
    );
    assert_eq!(records.state, SectionState::Ready, "{records:?}");
    // Only reads reached the card service: no switch to the digital card, no pay code.
    let seen: Vec<String> = w.sim.seen().iter().map(|s| s.target.clone()).collect();
    assert!(
        !seen
            .iter()
            .any(|t| t.contains("BarCode") || t.contains("Switch")),
        "{seen:?}"
    );
    assert!(w.broker.0.lock().unwrap().is_empty());
    // The pay code's button opens its own screen, nothing of the code on this one.
    let pay = screen.sections[1].button.clone().unwrap();
    assert_eq!(pay.label, "付款码");
    assert_eq!(
        w.screens.act(pay.action).await.unwrap(),
        Acted::Open {
            route: Route::PayCode
        }
    );
}

#[tokio::test]
async fn signed_out_the_card_screen_asks_to_sign_in_and_the_canteens_still_show() {
    let w = world(Language::Zh, false).await;
    let screen = w.screens.plugin_screen("wallet", "card").await.unwrap();
    let balance = &screen.sections[0];
    assert_eq!(balance.state, SectionState::SignInRequired, "{balance:?}");
    assert_eq!(balance.message.as_deref(), Some("校园账号需要登录"));
    assert_eq!(
        balance.button.as_ref().map(|b| b.action.clone()),
        Some(Action::Open {
            route: Route::CampusAccount
        })
    );
    let canteens = w
        .screens
        .plugin_screen("canteen", "canteens")
        .await
        .unwrap();
    assert_eq!(canteens.sections[0].state, SectionState::Ready);
    let today = w.screens.today().await;
    let states: Vec<SectionState> = today.tiles.iter().map(|t| t.state).collect();
    assert_eq!(
        states,
        [
            SectionState::SignInRequired,
            SectionState::Ready,
            SectionState::SignInRequired,
            SectionState::SignInRequired
        ]
    );
    assert_eq!(
        today.tiles[0].fix.as_ref().map(|b| b.action.clone()),
        Some(Action::Open {
            route: Route::CampusAccount
        })
    );
}

#[tokio::test]
async fn today_shows_the_default_tiles_with_their_age_from_the_cache() {
    // issue 36.2: the card balance and the canteens' crowding, each with its age, read
    // through the cache within its TTL; a tap opens the plugin's screen; the pay code one tap.
    let w = world(Language::Zh, true).await;
    let today = w.screens.today().await;
    let tiles: Vec<(&str, &str, SectionState)> = today
        .tiles
        .iter()
        .map(|t| (t.plugin.as_str(), t.source.as_str(), t.state))
        .collect();
    assert_eq!(
        tiles,
        [
            ("wallet", "balance", SectionState::Ready),
            ("canteen", "crowd", SectionState::Ready),
            ("notices", "latest", SectionState::Ready),
            ("treehole", "following", SectionState::Empty)
        ]
    );
    // Nothing followed yet: the tile says it as Treehole's own screen does.
    assert_eq!(today.tiles[3].message.as_deref(), Some("还没有关注的树洞"));
    assert_eq!(today.tiles[0].lines[0], lv("余额（元）", "42.5"));
    assert_eq!(today.tiles[1].lines[0], lv("燕南食堂", "18 · 105 · 600"));
    assert_eq!(today.tiles[0].age.as_deref(), Some("刚刚更新"));
    assert_eq!(today.tiles[0].screen.as_deref(), Some("card"));
    assert_eq!(today.tiles[1].screen.as_deref(), Some("canteens"));
    let reads = w.sim.seen().len();
    w.clock.set(beijing(11, 51));
    let later = w.screens.today().await;
    assert_eq!(later.tiles[0].age.as_deref(), Some("1 分钟前更新"));
    assert_eq!(w.sim.seen().len(), reads, "served from the cache");
    assert_eq!(
        later.pay_code.map(|b| b.action),
        Some(Action::Open {
            route: Route::PayCode
        })
    );
}

#[test]
fn a_screen_section_that_would_run_a_write_tool_is_refused_at_load() {
    // DESIGN §2: reading a screen never runs a non-read tool.
    let manifest: Manifest = serde_json::from_value(json!({
        "id": "c", "title": "c",
        "tools": [{"name": "post", "title": "p", "description": "d", "effect": "write"}],
        "screens": [{"id": "s", "title": {"zh": "页"}, "sections": [
            {"show": "list", "tool": "post", "items": "posts"}
        ]}]
    }))
    .unwrap();
    let err = Plugin::load(manifest, PluginKind::Official).unwrap_err();
    assert_eq!(err.field, "screens[0].sections[0].tool");
    assert_eq!(
        err.message,
        "names \"post\", which has the write effect; reading a screen never runs it: call it \
         from a form or an action"
    );
}

/// The values typed into a form, by field name.
fn typed(values: &[(&str, &str)]) -> Vec<FieldValue> {
    values
        .iter()
        .map(|(name, value)| FieldValue {
            name: name.to_string(),
            value: value.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn the_free_classrooms_form_asks_and_the_table_shows_each_rooms_free_periods() {
    // DESIGN §2: a form typed by its tool's schema; a read tool's form only asks, the screen
    // read again runs the read and shows its answer.
    let w = world(Language::Zh, false).await;
    let before = w.screens.plugin_screen("classrooms", "free").await.unwrap();
    let form = &before.sections[0];
    let names: Vec<(&str, &str)> = form
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.label.as_str()))
        .collect();
    assert_eq!(
        names,
        [("building", "教学楼"), ("day", "哪天"), ("period", "节次")]
    );
    // Issue 36 (4): the schema's descriptions are the model's English words, and a day's choice
    // showed `dayAfterTomorrow`: a Chinese form shows no hint and each day by the plugin's words.
    let hints: Vec<Option<&str>> = form.fields.iter().map(|f| f.hint.as_deref()).collect();
    assert_eq!(hints, [None, None, None]);
    let days: Vec<(&str, &str)> = form.fields[1]
        .options
        .iter()
        .map(|o| (o.value.as_str(), o.label.as_str()))
        .collect();
    assert_eq!(
        days,
        [
            ("today", "今天"),
            ("tomorrow", "明天"),
            ("dayAfterTomorrow", "后天")
        ]
    );
    assert_eq!(before.sections[1].state, SectionState::Empty);
    assert_eq!(
        before.sections[1].message.as_deref(),
        Some("填写上面的表单后显示")
    );
    let send = form.button.clone().unwrap();
    let Action::SubmitScreenForm { plugin, tool, .. } = send.action else {
        panic!("{send:?}")
    };
    let acted = w
        .screens
        .act(Action::SubmitScreenForm {
            plugin,
            tool,
            values: typed(&[("building", "三教"), ("day", "tomorrow")]),
        })
        .await
        .unwrap();
    assert_eq!(acted, Acted::Done);
    let after = w.screens.plugin_screen("classrooms", "free").await.unwrap();
    let table = &after.sections[1];
    assert_eq!(table.state, SectionState::Ready, "{table:?}");
    assert_eq!(table.columns, ["教室", "座位", "空闲节次"]);
    assert_eq!(
        table.rows,
        cells(&[
            &["三教101", "120", "1、2、5、6、7、8、9、10、11、12"],
            &["三教203", "60", "3、4、5、6、9、10、11、12"],
        ])
    );
    assert_eq!(after.sections[0].fields[0].value, "三教");
}

#[tokio::test]
async fn the_library_search_lists_the_books_found() {
    let w = world(Language::En, false).await;
    w.screens
        .act(Action::SubmitScreenForm {
            plugin: "library".into(),
            tool: "search".into(),
            values: typed(&[("query", "算法")]),
        })
        .await
        .unwrap();
    let screen = w.screens.plugin_screen("library", "search").await.unwrap();
    let results = &screen.sections[1];
    assert_eq!(
        results.columns,
        ["Title", "Author", "Publisher", "Year", "Call number"]
    );
    assert_eq!(
        results.rows,
        cells(&[&[
            "算法导论",
            "Thomas H. Cormen",
            "机械工业出版社",
            "2013",
            "TP301.6/C81"
        ]])
    );
}

#[tokio::test]
async fn the_notices_screen_lists_the_newest_and_today_shows_them_with_their_age() {
    let w = world(Language::Zh, true).await;
    let notices = w.screens.plugin_screen("notices", "notices").await.unwrap();
    let newest = &notices.sections[0];
    assert_eq!(newest.columns, ["标题", "发布单位", "时间", "编号"]);
    assert_eq!(
        newest.rows[0],
        [
            "关于2027年寒假放假安排的通知",
            "学校办公室",
            "2026-11-30 09:12",
            "90412"
        ]
    );
    assert_eq!(newest.rows.len(), 4);
    assert_eq!(newest.age.as_deref(), Some("刚刚更新"));
    let today = w.screens.today().await;
    let tile = &today.tiles[2];
    assert_eq!(
        (tile.title.as_str(), tile.state),
        ("最新通知", SectionState::Ready)
    );
    assert_eq!(
        tile.lines[0],
        lv(
            "关于2027年寒假放假安排的通知",
            "学校办公室 · 2026-11-30 09:12 · 90412"
        )
    );
    assert_eq!(tile.screen.as_deref(), Some("notices"));
    assert!(w.broker.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn treehole_before_its_check_asks_for_it_and_after_it_shows_the_newest_posts() {
    let w = world(Language::Zh, true).await;
    let before = w.screens.plugin_screen("treehole", "feed").await.unwrap();
    // Nothing followed yet: the followed posts need no read of Treehole.
    assert_eq!(before.sections[0].state, SectionState::Empty);
    assert_eq!(before.sections[1].state, SectionState::VerificationRequired);
    assert_eq!(
        before.sections[1].button.as_ref().map(|b| b.action.clone()),
        Some(Action::Open {
            route: Route::TreeholeCheck
        })
    );
    let engine = w.screens.engine();
    engine.campus().treehole_send_code().await.unwrap();
    engine.campus().treehole_verify(SMS_CODE).await.unwrap();
    let after = w.screens.plugin_screen("treehole", "feed").await.unwrap();
    let feed = &after.sections[1];
    assert_eq!(feed.state, SectionState::Ready, "{feed:?}");
    assert_eq!(feed.columns, ["洞号", "时间", "内容", "回复数"]);
    assert!(!feed.rows.is_empty());
}

#[tokio::test]
async fn the_treehole_composer_sends_the_students_post_as_their_own_call() {
    // seed 000: the send button is the student's own act.
    let w = world(Language::Zh, true).await;
    let engine = w.screens.engine();
    engine.campus().treehole_send_code().await.unwrap();
    engine.campus().treehole_verify(SMS_CODE).await.unwrap();
    let seen = w.sim.seen().len();
    let acted = w
        .screens
        .act(Action::SubmitScreenForm {
            plugin: "treehole".into(),
            tool: "publish".into(),
            values: typed(&[("text", "有人一起去图书馆吗")]),
        })
        .await;
    assert_eq!(acted.unwrap(), Acted::Done);
    assert!(w.broker.0.lock().unwrap().is_empty(), "never questioned");
    let sent: Vec<(String, String)> = w.sim.seen()[seen..]
        .iter()
        .map(|s| (s.method.clone(), s.target.clone()))
        .collect();
    assert_eq!(sent, [("POST".into(), "/chapi/api/v3/hole/post".into())]);
}

#[tokio::test]
async fn a_sign_in_answer_is_not_kept_in_the_cache_so_today_shows_the_balance_once_signed_in_again()
{
    // DESIGN §2: a data source's cache keeps values; "sign in again" is no value, and kept for
    // its TTL it would hide the balance for minutes after the student signed in.
    let w = world(Language::Zh, true).await;
    w.sim.expire_sessions();
    let ended = w.screens.today().await;
    assert_eq!(ended.tiles[0].state, SectionState::SignInRequired);
    let step = w
        .screens
        .engine()
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
    let again = w.screens.today().await;
    assert_eq!(again.tiles[0].state, SectionState::Ready);
    assert_eq!(again.tiles[0].lines[0], lv("余额（元）", "42.5"));
}

#[tokio::test]
async fn a_widget_shows_todays_tile_of_its_source_and_refreshes_no_oftener_than_the_platform_allows()
 {
    // seed 004: "A widget reads it with host.useToolData": the same tile as Today, through
    // the same cache; Android raises an updatePeriodMillis under 30 minutes to 30 minutes.
    let w = world(Language::Zh, true).await;
    let card = w.screens.widget("wallet", "balance").await.unwrap();
    let today = w.screens.today().await;
    assert_eq!(card.title, today.tiles[0].title);
    assert_eq!(card.state, WidgetState::Shown);
    assert_eq!(card.lines, today.tiles[0].lines);
    assert_eq!(card.lines[0], lv("余额（元）", "42.5"));
    assert_eq!(card.age.as_deref(), Some("刚刚更新"));
    assert_eq!(card.message, None);
    assert_eq!(
        card.open,
        Some(Action::OpenDataSource {
            plugin: "wallet".into(),
            source: "balance".into()
        })
    );
    // The balance's TTL is 2 minutes, the grades' an hour.
    assert_eq!(card.refresh_ms, 30 * 60_000);
    let grades = w.screens.widget("grades", "scores").await.unwrap();
    assert_eq!(grades.refresh_ms, 60 * 60_000);
    let reads = w.sim.seen().len();
    w.clock.set(beijing(11, 51));
    let later = w.screens.widget("wallet", "balance").await.unwrap();
    assert_eq!(later.age.as_deref(), Some("1 分钟前更新"));
    assert_eq!(w.sim.seen().len(), reads, "served from the cache");
    let sources: Vec<String> = w
        .screens
        .widget_sources()
        .into_iter()
        .map(|s| format!("{}.{} {}", s.plugin, s.source, s.title))
        .collect();
    assert!(
        sources.contains(&"wallet.balance 校园卡 · 校园卡余额".to_owned()),
        "{sources:?}"
    );
    let err = w.screens.widget("wallet", "nothing").await.unwrap_err();
    assert!(err.to_string().contains("nothing"), "{err}");
}

#[tokio::test]
async fn a_signed_out_widget_shows_no_data_only_sign_in_to_see_it() {
    // The task's rule: nothing shown while signed out but 登录后显示.
    let w = world(Language::Zh, false).await;
    let card = w.screens.widget("wallet", "balance").await.unwrap();
    assert_eq!(card.state, WidgetState::SignedOut);
    assert_eq!(card.lines, []);
    assert_eq!(card.age, None);
    assert_eq!(card.message.as_deref(), Some("登录后显示"));
    let en = world(Language::En, false).await;
    let card = en.screens.widget("wallet", "balance").await.unwrap();
    assert_eq!(card.message.as_deref(), Some("Sign in to see this"));
}
