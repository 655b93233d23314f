//! Every word on a screen in the student's language (seed 004, issue 36's fourth part): the
//! approval sheet's inputs by the words the plugin gives its fields, their values by type, and
//! every shipped plugin giving those words for each field it takes and returns.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Call, PluginHandler, Prompt, ToolContext};
use harness_core::plugins::script::BUNDLES;
use harness_core::policy::{Actor, Answer, Rule};
use harness_core::registry::{Plugin, PluginKind, Tool, parse_manifest};
use harness_core::screens::{Live, Screens};
use harness_core::settings::{Change, Language};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// Keeps each prompt shown and denies it.
#[derive(Default)]
struct Shown(Mutex<Vec<Prompt>>);

#[async_trait]
impl ApprovalBroker for Shown {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.0.lock().unwrap().push(prompt);
        Answer::Deny
    }
}

struct Never;

#[async_trait]
impl PluginHandler for Never {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Err("denied calls never run".into())
    }
}

/// A top-up whose amount is declared in yuan, labelled by the plugin; its note titled in its
/// input schema; a time in milliseconds; a yes-or-no; a field given no words at all; a choice
/// whose value the plugin gives words.
fn card() -> Plugin {
    let manifest = json!({"id": "topup", "title": "充值",
    "i18n": {"en": {"title": "Top-up", "tools": {"topUp": {"title": "Top up"}}}},
    "tools": [{
        "name": "topUp", "title": "充值", "effect": "money",
        "amount": {"field": "amountYuan", "unit": "yuan"},
        "labels": {
            "amountYuan": {"zh": "金额", "en": "Amount"},
            "remindAtMs": {"zh": "提醒时间", "en": "Reminder at"},
            "receipt": {"zh": "要收据", "en": "Receipt wanted"},
            "channel": {"zh": "渠道", "en": "Channel",
                        "values": {"alipay": {"zh": "支付宝", "en": "Alipay"}}}
        },
        "input": {"type": "object", "properties": {
            "amountYuan": {"type": "number"},
            "note": {"type": "string", "title": "备注"},
            "remindAtMs": {"type": "integer"},
            "receipt": {"type": "boolean"},
            "pid": {"type": "integer"},
            "channel": {"type": "string", "enum": ["alipay", "bank"]}
        }, "additionalProperties": false}
    }]});
    Plugin::load(parse_manifest(&manifest).unwrap(), PluginKind::Community).unwrap()
}

// Issue 36 (4): the sheet reads "金额 50.00 元", never `amountYuan 50`; a time is the student's
// clock; a field the plugin gave no words keeps its name made readable (the shipped plugins
// give every field words: the test below).
#[tokio::test]
async fn approval_inputs_read_the_plugins_words_and_their_values_by_type() {
    let shown = Arc::new(Shown::default());
    let mut options = Options::new(shown.clone());
    options.builtin_plugins = false;
    let engine = Arc::new(Engine::in_memory(options).unwrap());
    engine
        .install(
            card(),
            "https://example.org/topup/PLUGIN.md",
            Arc::new(Never),
        )
        .unwrap();
    engine.open_conversation("c").unwrap();
    engine.accept_terms().unwrap();
    // 2026-09-01 08:30 in Beijing.
    let remind = 1_788_222_600_000_i64;
    let input = json!({"amountYuan": 50, "note": "饭卡", "remindAtMs": remind,
        "receipt": true, "pid": 7, "channel": "alipay"});
    engine
        .invoke(Call {
            tool: "topup.topUp".into(),
            actor: Actor::Agent,
            input,
            conversation: Some("c".into()),
        })
        .await;
    let prompt = shown.0.lock().unwrap()[0].clone();
    let screens = Screens::new(engine.clone(), Live::new());
    let rows = |screens: &Screens| {
        screens
            .approval(&prompt)
            .inputs
            .into_iter()
            .map(|r| (r.name, r.value))
            .collect::<Vec<_>>()
    };
    let pair = |l: &str, v: &str| (l.to_owned(), v.to_owned());
    assert_eq!(
        rows(&screens),
        [
            pair("金额", "50.00 元"),
            pair("渠道", "支付宝"),
            pair("备注", "饭卡"),
            pair("Pid", "7"),
            pair("要收据", "是"),
            pair("提醒时间", "2026-09-01 08:30"),
        ]
    );
    engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    assert_eq!(
        rows(&screens),
        [
            pair("Amount", "50.00 yuan"),
            pair("Channel", "Alipay"),
            pair("Note", "饭卡"),
            pair("Pid", "7"),
            pair("Receipt wanted", "Yes"),
            pair("Reminder at", "2026-09-01 08:30"),
        ]
    );
}

// Issue 36 (4): "the shipped plugins label every field". A field without the plugin's words
// is shown by its English name made readable, an English word on a Chinese screen: so each
// field a shipped tool takes or declares it returns has words in zh (no Latin letters) and en.
#[test]
fn every_shipped_plugin_gives_words_in_zh_and_en_for_each_field_it_takes_and_returns() {
    let mut missing = Vec::new();
    for bundle in BUNDLES {
        let manifest: Value = serde_json::from_str(bundle.manifest()).unwrap();
        for tool in manifest["tools"].as_array().unwrap() {
            let labels = &tool["labels"];
            let fields = ["input", "output"].into_iter().flat_map(|part| {
                tool[part]["properties"]
                    .as_object()
                    .into_iter()
                    .flat_map(|p| p.keys())
            });
            for field in fields {
                let zh = labels[field]["zh"].as_str().unwrap_or_default();
                let en = labels[field]["en"].as_str().unwrap_or_default();
                if zh.is_empty() || en.is_empty() || zh.chars().any(|c| c.is_ascii_alphabetic()) {
                    missing.push(format!(
                        "{}.{}: {field}",
                        bundle.id,
                        tool["name"].as_str().unwrap()
                    ));
                }
            }
        }
    }
    missing.dedup();
    assert_eq!(missing, Vec::<String>::new());
}

struct Quiet;

#[async_trait]
impl PluginHandler for Quiet {
    async fn run(&self, _tool: &Tool, _input: Value, _ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({}))
    }
}

// Issue 36 (4): a plugin page said "notices  no grants", seed 001's row for the CLI. The
// student reads what the plugin may reach in words, in seed 001's order, a tool another
// plugin's grant names by its title; the hosts are data.
#[test]
fn a_plugin_page_says_what_the_plugin_may_reach_in_the_students_words() {
    let mut options = Options::new(Arc::new(Shown::default()));
    options.builtin_plugins = false;
    let engine = Arc::new(Engine::in_memory(options).unwrap());
    engine
        .install(
            card(),
            "https://example.org/topup/PLUGIN.md",
            Arc::new(Never),
        )
        .unwrap();
    let reaching = json!({"id": "feeds", "title": "订阅",
        "grants": {"allow_network": true, "url_allowlist": ["news.pku.edu.cn"],
                   "allow_store": true, "allow_tools": ["topup.topUp"]},
        "tools": [{"name": "latest", "title": "最新", "effect": "read"}]});
    let reaching = Plugin::load(parse_manifest(&reaching).unwrap(), PluginKind::Community);
    engine
        .install(
            reaching.unwrap(),
            "https://example.org/feeds/PLUGIN.md",
            Arc::new(Quiet),
        )
        .unwrap();
    let screens = Screens::new(engine.clone(), Live::new());
    let rows = |screens: &Screens| {
        ["feeds", "topup"].map(|id| screens.plugin_detail(id).unwrap().grant_row)
    };
    // The developers' exact row, token for token, in the page's language too.
    let developer_rows = |screens: &Screens| {
        ["feeds", "topup"].map(|id| screens.plugin_detail(id).unwrap().developer_grant_row)
    };
    assert_eq!(
        rows(&screens),
        [
            "可以使用：联网（news.pku.edu.cn）、自己的存储、调用其他插件的工具（充值）",
            "不需要额外的访问权限",
        ]
    );
    assert_eq!(
        developer_rows(&screens),
        [
            "feeds               联网（news.pku.edu.cn）、存储、调用工具（topup.topUp）",
            "topup               无授权",
        ]
    );
    engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    assert_eq!(
        rows(&screens),
        [
            "May use: the network (news.pku.edu.cn), its own storage, other plugins' tools (Top up)",
            "Needs no extra access",
        ]
    );
    assert_eq!(
        developer_rows(&screens),
        [
            "feeds               allow_network(news.pku.edu.cn), allow_store, allow_tools(topup.topUp)",
            "topup               no grants",
        ]
    );
}

// Issue 36 (4): the activity log's chips read `wallet`, `agent`, its rows `decided ask:…` and
// tool ids. 活动 (which replaced that log, issue 41.5) filters by the same values, its chips
// showing the plugin's title and each effect in words; a call is its tool's title and what
// happened in a sentence.
#[tokio::test]
async fn the_activity_screen_reads_in_the_students_words() {
    let shown = Arc::new(Shown::default());
    let mut options = Options::new(shown.clone());
    options.builtin_plugins = false;
    let engine = Arc::new(Engine::in_memory(options).unwrap());
    engine
        .install(
            card(),
            "https://example.org/topup/PLUGIN.md",
            Arc::new(Never),
        )
        .unwrap();
    engine.open_conversation("c").unwrap();
    engine.accept_terms().unwrap();
    engine
        .invoke(Call {
            tool: "topup.topUp".into(),
            actor: Actor::Agent,
            input: json!({"amountYuan": 5}),
            conversation: Some("c".into()),
        })
        .await;
    let screens = Screens::new(engine.clone(), Live::new());
    let read = |screens: &Screens| {
        let activity = screens.activity(&Default::default()).unwrap();
        let chips: Vec<String> = activity
            .plugins
            .iter()
            .map(|c| format!("{}={}", c.id, c.label))
            .chain(activity.effects.iter().map(|e| e.label.clone()))
            .collect();
        let calls: Vec<String> = activity
            .groups
            .into_iter()
            .flat_map(|g| g.calls)
            .map(|c| format!("{} | {} | {}", c.tool, c.effect_label, c.what))
            .collect();
        (chips, calls)
    };
    let (chips, calls) = read(&screens);
    assert_eq!(chips, ["topup=充值", "读取", "写入", "花钱", "公开发布"]);
    assert_eq!(calls, ["充值 · 充值 | 花钱 | 问了你，你选了「拒绝」"]);
    engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    let (chips, calls) = read(&screens);
    assert_eq!(chips, ["topup=Top-up", "read", "write", "money", "public"]);
    assert_eq!(
        calls,
        ["Top-up · Top up | money | Asked you; you chose Deny"]
    );
}

// Issue 36 (4): the conversation settings said "自动编辑" and showed bare headings. Each preset
// is said in a sentence, the empty scope and the empty rules say what they are, and a rule
// reads in words, its tools by their titles.
#[test]
fn the_conversation_settings_explain_the_preset_the_scope_and_the_rules_in_words() {
    let mut options = Options::new(Arc::new(Shown::default()));
    options.builtin_plugins = false;
    let engine = Arc::new(Engine::in_memory(options).unwrap());
    engine
        .install(
            card(),
            "https://example.org/topup/PLUGIN.md",
            Arc::new(Never),
        )
        .unwrap();
    let screens = Screens::new(engine.clone(), Live::new());
    let zh = screens.conversation_settings("c").unwrap();
    // The default preset follows each plugin's permissions.
    assert_eq!(
        zh.preset_note,
        "助手按各插件的权限设置行事：设为「自动」的直接运行，设为「询问」的先问你。"
    );
    assert_eq!(
        zh.scope_note,
        "没有限定：每个插件只访问它获准的网站和文件夹。在这里添加网站或文件夹后，这个对话里的助手只能访问列出的那些。"
    );
    assert!(
        zh.no_rules_note
            .as_deref()
            .unwrap()
            .starts_with("还没有规则。")
    );
    let rules: Vec<Rule> = serde_json::from_value(json!([
        {"kind": "deny", "tool": "topup.*"},
        {"kind": "ask", "tool": "topup.topUp", "effect": "money"}
    ]))
    .unwrap();
    engine.set_rules(rules).unwrap();
    let zh = screens.conversation_settings("c").unwrap();
    let texts: Vec<&str> = zh.global_rules.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        ["禁止：充值 的所有工具", "询问：充值 · 充值（花钱）"]
    );
    assert_eq!(zh.no_rules_note, None);
    engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    let en = screens.conversation_settings("c").unwrap();
    let texts: Vec<&str> = en.global_rules.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "Block: every tool of Top-up",
            "Ask: Top-up · Top up (money)"
        ]
    );
    assert_eq!(
        en.preset_note,
        "The assistant follows each plugin's permissions: what is set to auto runs, what is set to ask asks you first."
    );
}

// Issue 36 (4) and seed 000: a plugin page lists the campus services the plugin reaches, in
// words; the ids (the plugin's, each tool's) and seed 001's exact grant row are only under
// 开发者信息, where a developer looks for them.
#[test]
fn a_plugin_page_names_its_campus_services_and_keeps_the_ids_under_developer_info() {
    let mut options = Options::new(Arc::new(Shown::default()));
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = Arc::new(Engine::in_memory(options).unwrap());
    let screens = Screens::new(engine.clone(), Live::new());
    let wallet = screens.plugin_detail("wallet").unwrap();
    assert_eq!(wallet.campus_label, "用到的校园服务");
    assert_eq!(wallet.campus, ["校园卡", "校园门户"]);
    assert_eq!(wallet.developer_label, "开发者信息");
    let developer: Vec<(&str, &str)> = wallet
        .developer
        .iter()
        .map(|r| (r.label.as_str(), r.id.as_str()))
        .collect();
    assert_eq!(developer[0], ("插件标识", "wallet"));
    assert_eq!(developer[1], ("校园卡余额", "wallet.cardBalance"));
    assert!(wallet.developer_grant_row.starts_with("wallet "));
    // Every tool's id is there, and nowhere else on the page a student reads.
    for tool in &wallet.tools {
        assert!(
            developer.iter().any(|(_, id)| *id == tool.id),
            "{}",
            tool.id
        );
    }
    let canteen = screens.plugin_detail("canteen").unwrap();
    assert_eq!(canteen.campus, ["公开信息（无需登录）"]);
    engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    let wallet = screens.plugin_detail("wallet").unwrap();
    assert_eq!(
        (wallet.campus_label.as_str(), wallet.campus.as_slice()),
        (
            "Campus services it uses",
            ["campus card", "campus portal"]
                .map(String::from)
                .as_slice()
        )
    );
    assert_eq!(wallet.developer_label, "Developer info");
}

// Issue 36 (4): the terms can be read again from the consent screen, after they were
// accepted, in the student's language: the same paragraphs the first run showed.
#[test]
fn the_consent_screen_shows_the_terms_to_read_again_once_accepted() {
    let mut options = Options::new(Arc::new(Shown::default()));
    options.builtin_plugins = false;
    let engine = Arc::new(Engine::in_memory(options).unwrap());
    engine.accept_terms().unwrap();
    let screens = Screens::new(engine.clone(), Live::new());
    let paragraphs = |text: &str| -> Vec<String> {
        text.split("\n\n")
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect()
    };
    let zh = screens.consent();
    assert_eq!(zh.read_terms_label, "阅读条款");
    assert_eq!(
        zh.terms,
        paragraphs(include_str!("../src/screens/terms/v2.zh.txt"))
    );
    assert_eq!(zh.accept_terms, None);
    engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    let en = screens.consent();
    assert_eq!(en.read_terms_label, "Read the terms");
    assert_eq!(
        en.terms,
        paragraphs(include_str!("../src/screens/terms/v2.en.txt"))
    );
}
