//! The chat reads like a conversation: each tool call by its title and its plugin's title, one
//! line of what happened, its result as labelled rows, a status answer as a card with the tap
//! that fixes it, a refusal with the setting to change — and no id or JSON except the raw data
//! behind its tap. Read from a real engine after a real turn against the scripted model server.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::model_server::{ModelServer, Part, Reply, data, done};
use harness_core::events::NoEvents;
use harness_core::invoke::{ApprovalBroker, PluginHandler, Prompt, ToolContext};
use harness_core::policy::Answer;
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::screens::{
    Action, Button, ButtonRole, CallCard, ChatItemKind, ChatScreen, LabelValue, Live, Route,
    Screens, ToolCallView,
};
use harness_core::settings::{Change, Language};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const KEY: &str = "sk-chat-0123456789-secret";

struct Answers(Mutex<Vec<Answer>>);

#[async_trait]
impl ApprovalBroker for Answers {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        self.0.lock().unwrap().pop().unwrap_or(Answer::Deny)
    }
}

/// A campus card as a plugin would answer: data, each status object, a failure.
struct Card;

#[async_trait]
impl PluginHandler for Card {
    async fn run(&self, tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        match tool.name.as_str() {
            "cardBalance" => Ok(json!({
                "balanceYuan": 52.3,
                "spentTodayYuan": 12,
                "accounts": [{"name": "主账户", "balanceYuan": 52.3}],
                "lost": false,
            })),
            "transactions" => Ok(json!({"status": "signin_required"})),
            "recharge" => Ok(
                json!({"status": "open_in_browser", "url": "https://bdcard.pku.edu.cn/recharge"}),
            ),
            "posts" => Ok(json!({"status": "verification_required", "methods": ["sms"]})),
            _ => Err("校园卡服务暂时没有回应，请稍后再试".into()),
        }
    }
}

fn card() -> Plugin {
    let manifest = json!({"id": "wallet", "title": "校园卡",
        "i18n": {"en": {"title": "Campus card", "tools": {
            "cardBalance": {"title": "Card balance"}, "transactions": {"title": "Card records"},
            "recharge": {"title": "Recharge the card"}, "posts": {"title": "Posts"},
            "freeze": {"title": "Freeze the card"}, "spending": {"title": "Card spending"}}}},
        "defaultModes": {"write": "off", "money": "ask"},
        "tools": [
        {"name": "cardBalance", "title": "校园卡余额", "effect": "read",
         "labels": {"balanceYuan": {"zh": "余额（元）", "en": "Balance (yuan)"},
                    "lost": {"zh": "已挂失", "en": "Reported lost"}}},
        {"name": "transactions", "title": "校园卡流水", "effect": "read"},
        {"name": "recharge", "title": "充值", "effect": "money"},
        {"name": "posts", "title": "帖子", "effect": "read"},
        {"name": "freeze", "title": "冻结校园卡", "effect": "write"},
        {"name": "spending", "title": "校园卡消费统计", "effect": "read"}
    ]});
    Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Community).unwrap()
}

struct World {
    screens: Screens,
    _server: ModelServer,
}

async fn world(dir: &Path, script: Vec<Reply>, answers: &[Answer]) -> World {
    let server = ModelServer::start(script).await;
    let live = Live::new();
    let mut options = Options::new(Arc::new(Answers(Mutex::new(
        answers.iter().rev().copied().collect(),
    ))));
    options.builtin_plugins = false;
    options.events = live.sink(Arc::new(NoEvents));
    let engine = Arc::new(Engine::open(dir, options).unwrap());
    engine
        .install(
            card(),
            "https://example.org/wallet/PLUGIN.md",
            Arc::new(Card),
        )
        .unwrap();
    engine.accept_terms().unwrap();
    server.configure(&engine, KEY);
    World {
        screens: Screens::new(engine, live),
        _server: server,
    }
}

fn chunk(delta: Value) -> Part {
    data(&json!({"choices": [{"index": 0, "delta": delta}]}))
}

fn call(id: &str, name: &str) -> Reply {
    Reply::events([
        chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
            "function": {"name": name, "arguments": "{}"}}]}),
        ),
        done(),
    ])
}

fn text(words: &str) -> Reply {
    Reply::events([chunk(json!({"content": words})), done()])
}

/// The turn that asks the card for everything: its balance, its records (the campus sign-in
/// has ended), a recharge (allowed on the sheet), Treehole-like posts (the SMS check), a
/// freeze (writes are off), its spending (the service fails), and a tool no plugin has.
async fn the_whole_card(dir: &Path) -> World {
    let w = world(
        dir,
        vec![
            call("c1", "wallet__cardBalance"),
            call("c2", "wallet__transactions"),
            call("c3", "wallet__recharge"),
            call("c4", "wallet__posts"),
            call("c5", "wallet__freeze"),
            call("c6", "wallet__spending"),
            call("c7", "wallet__nothing"),
            text("都查好了"),
        ],
        &[Answer::Allow],
    )
    .await;
    w.screens
        .act(Action::SendMessage {
            conversation: "c".into(),
            text: "看看我的校园卡".into(),
        })
        .await
        .unwrap();
    w
}

fn chat_in(w: &World, language: Language) -> ChatScreen {
    w.screens
        .engine()
        .change_setting(Change::Language(language))
        .unwrap();
    w.screens.chat("c").unwrap()
}

fn calls(chat: &ChatScreen) -> Vec<ToolCallView> {
    chat.items
        .iter()
        .filter_map(|i| i.tool_call.clone())
        .collect()
}

fn row(label: &str, value: &str) -> LabelValue {
    LabelValue {
        label: label.into(),
        value: value.into(),
    }
}

fn card_of(text: &str, button: Option<(&str, ButtonRole, Action)>) -> Option<CallCard> {
    Some(CallCard {
        text: text.into(),
        button: button.map(|(label, role, action)| Button {
            label: label.into(),
            role,
            action,
        }),
    })
}

/// What each call reads as: title, plugin, summary, rows, card, ok.
type Read = (
    String,
    String,
    String,
    Vec<LabelValue>,
    Option<CallCard>,
    Option<bool>,
);

fn read(view: &ToolCallView) -> Read {
    (
        view.title.clone(),
        view.plugin_title.clone(),
        view.summary.clone(),
        view.rows.clone(),
        view.card.clone(),
        view.ok,
    )
}

fn expect(
    title: &str,
    plugin: &str,
    summary: &str,
    rows: Vec<LabelValue>,
    card: Option<CallCard>,
    ok: bool,
) -> Read {
    (
        title.into(),
        plugin.into(),
        summary.into(),
        rows,
        card,
        Some(ok),
    )
}

#[tokio::test]
async fn each_call_reads_as_its_title_a_summary_rows_and_the_card_that_fixes_it_in_chinese() {
    let dir = tempfile::tempdir().unwrap();
    let w = the_whole_card(dir.path()).await;
    let chat = chat_in(&w, Language::Zh);
    let kinds: Vec<ChatItemKind> = chat.items.iter().map(|i| i.kind).collect();
    assert_eq!(kinds.len(), 9, "{kinds:?}");
    let read: Vec<Read> = calls(&chat).iter().map(read).collect();
    let open = |route| Action::Open { route };
    assert_eq!(
        read,
        [
            expect(
                "校园卡余额",
                "校园卡",
                "已运行",
                vec![
                    row("Accounts", "1 项"),
                    row("余额（元）", "52.3"),
                    row("已挂失", "否"),
                    row("Spent today（元）", "12"),
                ],
                None,
                true
            ),
            expect(
                "校园卡流水",
                "校园卡",
                "已运行",
                vec![],
                card_of(
                    "需要先登录校园账号",
                    Some((
                        "登录校园账号",
                        ButtonRole::Primary,
                        open(Route::CampusAccount)
                    ))
                ),
                true
            ),
            expect(
                "充值",
                "校园卡",
                "你允许后运行了",
                vec![],
                card_of(
                    "这一步在网页上完成",
                    Some((
                        "在浏览器中打开 bdcard.pku.edu.cn",
                        ButtonRole::Primary,
                        Action::OpenInBrowser {
                            url: "https://bdcard.pku.edu.cn/recharge".into()
                        }
                    ))
                ),
                true
            ),
            expect(
                "帖子",
                "校园卡",
                "已运行",
                vec![],
                card_of(
                    "树洞需要先用短信验证",
                    Some(("去验证", ButtonRole::Primary, open(Route::TreeholeCheck)))
                ),
                true
            ),
            expect(
                "冻结校园卡",
                "校园卡",
                "被拒绝：这类操作已关闭",
                vec![],
                card_of(
                    "在「插件 › 校园卡」里把「写入」从「关闭」改为「询问」，它就会先问你",
                    Some(("打开「插件」", ButtonRole::Normal, open(Route::Plugins)))
                ),
                false
            ),
            expect(
                "校园卡消费统计",
                "校园卡",
                "没有完成：校园卡服务暂时没有回应，请稍后再试",
                vec![],
                None,
                false
            ),
            expect("未知工具", "", "没有完成", vec![], None, false),
        ]
    );
    let balance = &calls(&chat)[0];
    assert_eq!(
        (
            balance.show_raw_label.as_str(),
            balance.hide_raw_label.as_str()
        ),
        ("显示原始数据", "隐藏原始数据")
    );
    // The raw data behind the tap is the result the agent read, laid out.
    let raw: Value = serde_json::from_str(balance.raw_json.as_deref().unwrap()).unwrap();
    assert_eq!(raw["balanceYuan"], json!(52.3));
    assert_eq!(balance.input_json, "{}");
}

#[tokio::test]
async fn each_call_reads_the_same_in_english() {
    let dir = tempfile::tempdir().unwrap();
    let w = the_whole_card(dir.path()).await;
    let chat = chat_in(&w, Language::En);
    let read: Vec<(String, String, String)> = calls(&chat)
        .iter()
        .map(|c| (c.title.clone(), c.plugin_title.clone(), c.summary.clone()))
        .collect();
    let line = |t: &str, p: &str, s: &str| (t.to_owned(), p.to_owned(), s.to_owned());
    assert_eq!(
        read,
        [
            line("Card balance", "Campus card", "Ran"),
            line("Card records", "Campus card", "Ran"),
            line(
                "Recharge the card",
                "Campus card",
                "Ran after you allowed it"
            ),
            line("Posts", "Campus card", "Ran"),
            line(
                "Freeze the card",
                "Campus card",
                "Refused: this kind of action is turned off"
            ),
            line(
                "Card spending",
                "Campus card",
                "Did not finish: 校园卡服务暂时没有回应，请稍后再试"
            ),
            line("Unknown tool", "", "Did not finish"),
        ]
    );
    let views = calls(&chat);
    assert_eq!(
        views[0].rows,
        [
            row("Accounts", "1 item"),
            row("Balance (yuan)", "52.3"),
            row("Reported lost", "No"),
            row("Spent today (yuan)", "12"),
        ]
    );
    let labels: Vec<Option<String>> = views
        .iter()
        .map(|v| {
            v.card
                .as_ref()
                .and_then(|c| c.button.as_ref())
                .map(|b| b.label.clone())
        })
        .collect();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        labels,
        [
            None,
            some("Sign in to the campus account"),
            some("Open bdcard.pku.edu.cn in the browser"),
            some("Do the check"),
            some("Open Plugins"),
            None,
            None,
        ]
    );
    assert_eq!(
        views[4].card.as_ref().unwrap().text,
        "In Plugins › Campus card, set write from off to ask, and it will ask you first"
    );
    assert_eq!(
        (
            views[0].show_raw_label.as_str(),
            views[0].hide_raw_label.as_str()
        ),
        ("Show raw data", "Hide raw data")
    );
}

/// Every text of a call the student reads, all but the raw data behind its tap.
fn read_by_the_student(view: &ToolCallView) -> Vec<String> {
    let mut texts = vec![
        view.title.clone(),
        view.plugin_title.clone(),
        view.summary.clone(),
        view.show_raw_label.clone(),
        view.hide_raw_label.clone(),
    ];
    for row in &view.rows {
        texts.extend([row.label.clone(), row.value.clone()]);
    }
    if let Some(card) = &view.card {
        texts.push(card.text.clone());
        texts.extend(card.button.as_ref().map(|b| b.label.clone()));
    }
    texts
}

#[tokio::test]
async fn no_text_the_student_reads_names_a_tool_id_a_plugin_id_or_shows_json() {
    let dir = tempfile::tempdir().unwrap();
    let w = the_whole_card(dir.path()).await;
    for language in [Language::Zh, Language::En] {
        let chat = chat_in(&w, language);
        let views = calls(&chat);
        assert_eq!(views.len(), 7);
        for view in &views {
            for text in read_by_the_student(view) {
                for forbidden in ["wallet.", "wallet__", "wallet", "{", "}"] {
                    assert!(
                        !text.contains(forbidden),
                        "{language:?}: {text:?} holds {forbidden:?}"
                    );
                }
            }
            // The raw data keeps what the student may want to check: the JSON itself.
            assert!(view.raw_json.as_deref().unwrap().starts_with('{'));
        }
    }
}

#[tokio::test]
async fn a_declined_call_says_so_and_offers_no_setting() {
    let dir = tempfile::tempdir().unwrap();
    let w = world(
        dir.path(),
        vec![call("c1", "wallet__recharge"), text("没有充值")],
        &[Answer::Deny],
    )
    .await;
    w.screens
        .act(Action::SendMessage {
            conversation: "c".into(),
            text: "充值".into(),
        })
        .await
        .unwrap();
    let zh = calls(&chat_in(&w, Language::Zh)).remove(0);
    assert_eq!(
        (zh.summary.as_str(), zh.card.clone(), zh.ok),
        ("你拒绝了这次操作", None, Some(false))
    );
    let en = calls(&chat_in(&w, Language::En)).remove(0);
    assert_eq!(en.summary, "You declined this");
}

#[test]
fn the_shipped_card_and_canteen_label_their_results() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Answers(Mutex::new(Vec::new()))));
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = Engine::open(dir.path(), options).unwrap();
    let label = |tool: &str, field: &str| {
        let tool = engine.tool(tool).unwrap_or_else(|| panic!("{tool} ships"));
        let label = tool.labels.get(field).cloned();
        label.map(|l| (l.zh, l.en.unwrap_or_default()))
    };
    let words = |zh: &str, en: &str| Some((zh.to_owned(), en.to_owned()));
    assert_eq!(
        label("wallet.cardBalance", "balanceYuan"),
        words("余额（元）", "Balance (yuan)")
    );
    assert_eq!(
        label("wallet.transactions", "records"),
        words("流水", "Records on this page")
    );
    assert_eq!(
        label("wallet.spending", "spentYuan"),
        words("消费（元）", "Spent (yuan)")
    );
    assert_eq!(
        label("canteen.crowd", "takenAt"),
        words("统计时间", "As of")
    );
}

#[tokio::test]
async fn a_tool_unavailable_until_the_campus_sign_in_offers_the_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![call("c1", "dorm__fees"), text("要先登录")]).await;
    let live = Live::new();
    let mut options = Options::new(Arc::new(Answers(Mutex::new(Vec::new()))));
    options.builtin_plugins = false;
    options.events = live.sink(Arc::new(NoEvents));
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    let manifest = json!({"id": "dorm", "title": "宿舍", "requires": ["campus-session"],
        "tools": [{"name": "fees", "title": "电费", "effect": "read"}]});
    let plugin = Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Community).unwrap();
    engine
        .install(plugin, "https://example.org/dorm/PLUGIN.md", Arc::new(Card))
        .unwrap();
    engine.accept_terms().unwrap();
    server.configure(&engine, KEY);
    let w = World {
        screens: Screens::new(engine, live),
        _server: server,
    };
    w.screens
        .act(Action::SendMessage {
            conversation: "c".into(),
            text: "电费还有多少".into(),
        })
        .await
        .unwrap();
    let fees = calls(&chat_in(&w, Language::Zh)).remove(0);
    assert_eq!(
        read(&fees),
        expect(
            "电费",
            "宿舍",
            "被拒绝：工具不可用",
            vec![],
            card_of(
                "需要先登录校园账号",
                Some((
                    "登录校园账号",
                    ButtonRole::Primary,
                    Action::Open {
                        route: Route::CampusAccount
                    }
                ))
            ),
            false
        )
    );
}
