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
    Action, Button, ButtonRole, CallCard, ChatItem, ChatItemKind, ChatScreen, LabelValue, Live,
    PlanCard, Route, Screens, ToolCallView,
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

/// A conversation in plan mode whose agent answered `plan`; the replies after it follow.
async fn planned(dir: &Path, plan: &str, after: Vec<Reply>, answers: &[Answer]) -> World {
    let mut script = vec![text(plan)];
    script.extend(after);
    let w = world(dir, script, answers).await;
    w.screens.engine().open_conversation("c").unwrap();
    w.screens
        .act(Action::SetPlanMode {
            conversation: "c".into(),
            on: true,
        })
        .await
        .unwrap();
    w.screens
        .act(Action::SendMessage {
            conversation: "c".into(),
            text: "帮我充 50 元".into(),
        })
        .await
        .unwrap();
    w
}

fn plan_item(chat: &ChatScreen) -> Option<ChatItem> {
    chat.items
        .iter()
        .find(|i| i.kind == ChatItemKind::Plan)
        .cloned()
}

#[tokio::test]
async fn a_plan_is_a_card_the_student_accepts_in_either_language() {
    let dir = tempfile::tempdir().unwrap();
    let w = planned(dir.path(), "1. 查余额 2. 充值 50 元", vec![], &[]).await;
    let zh = chat_in(&w, Language::Zh);
    let item = plan_item(&zh).expect("the plan is a card");
    // The plan is the conversation's last item, and its words are the agent's.
    assert_eq!(zh.items.last(), Some(&item));
    assert_eq!(item.text, "1. 查余额 2. 充值 50 元");
    let card = item.plan.unwrap();
    let plan = match &card.accept.action {
        Action::AcceptPlan { conversation, plan } if conversation == "c" => *plan,
        other => panic!("the accept tap is {other:?}"),
    };
    assert_eq!(
        card,
        PlanCard {
            heading: "计划".into(),
            accept: Button {
                label: "按这个计划做".into(),
                role: ButtonRole::Primary,
                action: Action::AcceptPlan {
                    conversation: "c".into(),
                    plan,
                },
            },
            hint: "接受后计划模式关闭，每一步仍会照常检查、需要时问你；想修改计划，直接回复即可"
                .into(),
        }
    );
    let en = plan_item(&chat_in(&w, Language::En)).unwrap().plan.unwrap();
    assert_eq!(
        (
            en.heading.as_str(),
            en.accept.label.as_str(),
            en.hint.as_str()
        ),
        (
            "Plan",
            "Go ahead with this plan",
            "Accepting ends plan mode; every step is still checked and asks you where it must. To change the plan, just reply"
        )
    );
    // Out of plan mode the same answer is an answer.
    w.screens
        .act(Action::SetPlanMode {
            conversation: "c".into(),
            on: false,
        })
        .await
        .unwrap();
    let chat = chat_in(&w, Language::Zh);
    assert_eq!(plan_item(&chat), None);
    assert_eq!(chat.items.last().unwrap().kind, ChatItemKind::Assistant);
}

#[tokio::test]
async fn accepting_a_plan_ends_plan_mode_and_widens_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let w = planned(
        dir.path(),
        "先充值 50 元",
        vec![call("c1", "wallet__recharge"), text("充好了")],
        &[Answer::Allow],
    )
    .await;
    let engine = w.screens.engine().clone();
    let before = engine.existing_conversation("c").unwrap().settings;
    let accept = plan_item(&chat_in(&w, Language::Zh))
        .unwrap()
        .plan
        .unwrap()
        .accept
        .action;
    w.screens.act(accept).await.unwrap();

    let after = engine.existing_conversation("c").unwrap().settings;
    assert!(!after.plan_mode);
    assert_eq!(after.preset, before.preset);
    // The agent was told, in the student's words, and its instructions no longer hold plan mode.
    let history = engine.history("c", None, 10).unwrap();
    let said: Vec<_> = history
        .iter()
        .filter(|r| r.role == "user")
        .map(|r| r.content.clone().unwrap())
        .collect();
    assert_eq!(said, ["帮我充 50 元", "我同意这个计划，请开始执行。"]);
    let requests = w._server.requests();
    let system = |i: usize| {
        requests[i].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(system(0).contains("Plan mode is on"));
    assert!(!system(1).contains("Plan mode is on"));
    // The recharge the plan named still asked the student: money asks by default.
    let views = calls(&chat_in(&w, Language::Zh));
    assert_eq!(views.len(), 1);
    assert_eq!(views[0].summary, "你允许后运行了");
    // The chat now reads as a conversation again: no plan on offer.
    assert_eq!(plan_item(&chat_in(&w, Language::Zh)), None);
}

#[tokio::test]
async fn only_the_plan_on_offer_can_be_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let w = planned(dir.path(), "第一版计划", vec![text("第二版计划")], &[]).await;
    let first = plan_item(&chat_in(&w, Language::Zh))
        .unwrap()
        .plan
        .unwrap()
        .accept
        .action;
    // The student answered the plan: the agent wrote another.
    w.screens
        .act(Action::SendMessage {
            conversation: "c".into(),
            text: "不要充值，先查余额".into(),
        })
        .await
        .unwrap();
    let engine = w.screens.engine().clone();
    let messages = engine.history("c", None, 50).unwrap().len();
    let err = w.screens.act(first).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "这个计划已经不是最新的，没有开始执行；请看对话里现在的内容"
    );
    assert_eq!(engine.history("c", None, 50).unwrap().len(), messages);
    assert!(
        engine
            .existing_conversation("c")
            .unwrap()
            .settings
            .plan_mode
    );
    let second = plan_item(&chat_in(&w, Language::Zh)).unwrap();
    assert_eq!(second.text, "第二版计划");
}

/// The screens of an engine in `dir` with the reference server added as `everything` and the
/// model `server`, the student's answers to its prompts `answers`, in order.
async fn with_everything(
    dir: &Path,
    everything: &common::everything::Everything,
    server: &ModelServer,
    answers: &[Answer],
) -> Arc<Screens> {
    let live = Live::new();
    let mut options = Options::new(Arc::new(Answers(Mutex::new(
        answers.iter().rev().copied().collect(),
    ))));
    options.builtin_plugins = false;
    options.development_servers = true;
    options.events = live.sink(Arc::new(NoEvents));
    let engine = Arc::new(Engine::open(dir, options).unwrap());
    engine.accept_terms().unwrap();
    engine
        .add_remote(&everything.url(), "everything", None)
        .await
        .unwrap();
    server.configure(&engine, KEY);
    Arc::new(Screens::new(engine, live))
}

/// A remote server's picture and links: drawn and offered by the chat, read by the model as
/// words, never as the picture's bytes.
#[tokio::test]
async fn a_server_s_picture_is_drawn_and_its_links_offered_while_the_model_reads_words() {
    let everything = common::everything::Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        call("c1", "mcp-everything__get-tiny-image"),
        call("c2", "mcp-everything__get-resource-links"),
        text("好了"),
    ])
    .await;
    let screens = with_everything(dir.path(), &everything, &server, &[Answer::Allow; 2]).await;
    screens
        .act(Action::SendMessage {
            conversation: "c".into(),
            text: "给我看图".into(),
        })
        .await
        .unwrap();
    let chat = screens.chat("c").unwrap();
    let views = calls(&chat);
    let image = &views[0];
    assert_eq!(image.ok, Some(true), "{image:?}");
    assert_eq!(image.images.len(), 1);
    assert_eq!(image.images[0].mime_type, "image/png");
    assert_eq!(&image.images[0].bytes[..4], b"\x89PNG");
    assert_eq!(
        image.images[0].description,
        format!(
            "图片（PNG，{:.1} KB）",
            image.images[0].bytes.len() as f64 / 1024.0
        )
    );
    // The words around it stay rows; the picture is not one of them.
    assert_eq!(
        image.rows,
        [row(
            "内容",
            "Here's the image you requested:、The image above is the MCP logo."
        )]
    );
    // The base64 text's length, read back as bytes: what the model is told.
    let about = image.images[0].bytes.len().div_ceil(3) * 3;
    let words = format!("[image: image/png, about {about} bytes]");
    let raw = image.raw_json.as_deref().unwrap();
    assert!(raw.contains(&words), "{raw}");
    assert!(!raw.contains("iVBORw0KGgo"), "the raw data shows no bytes");
    let links = &views[1].links;
    assert_eq!(links.len(), 3);
    assert_eq!(links[0].title, "Blob Resource 1");
    assert_eq!(
        links[0].detail.as_deref(),
        Some("Resource 1: plaintext resource")
    );
    assert!(
        links[0].address.starts_with("demo://resource/"),
        "{}",
        links[0].address
    );
    // A server's own resource is shown, never handed to the browser.
    assert!(links.iter().all(|l| l.open.is_none()));
    // What the model was sent: the picture as words.
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(sent.contains(&words), "{sent}");
    assert!(!sent.contains("iVBORw0KGgo"));
}

/// A server's progress on the running call: the chat says how far it has come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_call_shows_how_far_its_server_has_come() {
    let everything = common::everything::Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let server = ModelServer::start(vec![
        Reply::events([
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "mcp-everything__trigger-long-running-operation",
                             "arguments": "{\"duration\": 60, \"steps\": 60}"}}]}),
            ),
            done(),
        ]),
        text("好了"),
    ])
    .await;
    let screens = with_everything(dir.path(), &everything, &server, &[Answer::Allow]).await;
    let engine = screens.engine().clone();
    let running = {
        let screens = screens.clone();
        tokio::spawn(async move {
            screens
                .act(Action::SendMessage {
                    conversation: "c".into(),
                    text: "跑一下".into(),
                })
                .await
        })
    };
    // One step a second: the first one's words reach the chat's call.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let summary = loop {
        let summary = screens
            .chat("c")
            .ok()
            .and_then(|chat| calls(&chat).first().map(|c| c.summary.clone()))
            .unwrap_or_default();
        if summary.starts_with("运行中… ") && summary.contains("/60") {
            break summary;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no progress shown: {summary:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let done: u32 = summary
        .trim_start_matches("运行中… ")
        .trim_end_matches("/60")
        .parse()
        .unwrap_or_else(|_| panic!("{summary}"));
    assert!((1..=60).contains(&done), "{summary}");
    assert!(engine.cancel_turn("c#1"));
    running.await.unwrap().unwrap();
}

// A real model's answers, 2 and 3: what the student reads in the chat when the model repeats a
// read it already made (a card saying so, no second run) and answers with bare JSON (words
// saying the answer could not be read, never the JSON).
#[tokio::test]
async fn a_repeated_call_and_an_answer_of_bare_json_read_as_words_in_the_chat() {
    let dir = tempfile::tempdir().unwrap();
    let w = world(
        dir.path(),
        vec![
            call("c1", "wallet__cardBalance"),
            call("c2", "wallet__cardBalance"),
            text("{\"balanceYuan\": 52.3}"),
        ],
        &[],
    )
    .await;
    w.screens
        .act(Action::SendMessage {
            conversation: "c".into(),
            text: "余额多少".into(),
        })
        .await
        .unwrap();
    let zh = chat_in(&w, Language::Zh);
    let summaries: Vec<(String, Option<bool>)> =
        calls(&zh).into_iter().map(|v| (v.summary, v.ok)).collect();
    assert_eq!(
        summaries,
        [
            ("已运行".to_owned(), Some(true)),
            ("和上面的一次调用相同，没有再做".to_owned(), Some(false)),
        ]
    );
    let said: Vec<&str> = zh
        .items
        .iter()
        .filter(|i| i.kind == ChatItemKind::Assistant)
        .map(|i| i.text.as_str())
        .collect();
    assert_eq!(
        said,
        ["模型的回答无法读取：它写的是一段数据，不是给你的回答。可以再问一次。"]
    );
    let en = chat_in(&w, Language::En);
    assert_eq!(
        calls(&en)[1].summary,
        "The same as a call above: not done again"
    );
}
