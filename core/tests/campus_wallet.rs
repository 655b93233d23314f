//! The shipped `wallet` plugin (校园卡, plugins/wallet) against the campus simulator on
//! 127.0.0.1, every call through the one invoke path: each tool as the agent and as the
//! student's tap with its exact result, the ask before the digital card, the pay code refused
//! to the agent and never a result (seed 004), the scheduler's reads, a session ending
//! mid-call, the card answering garbage, and fen → yuan exactly.

mod common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use harness_campus_sim::{DEMO, Fault, Simulator};
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::events::{Event, EventSink};
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::policy::{Actor, Answer, Code};
use harness_core::registry::{Effect, PluginKind};
use harness_core::scheduler::{Owner, RunOutcome};
use harness_core::screens::{Acted, Action, CampusCheck, Live, Route, Screens, ShellEffect};
use harness_core::secrets::MemorySecrets;
use harness_core::settings::{Change, Language};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// Answers each prompt with the next scripted answer (Deny when none is left) and keeps it.
#[derive(Default)]
struct Broker {
    answers: Mutex<VecDeque<Answer>>,
    asked: Mutex<Vec<Prompt>>,
}

impl Broker {
    fn will(&self, answer: Answer) {
        self.answers.lock().unwrap().push_back(answer);
    }

    fn asked(&self) -> Vec<Prompt> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

#[async_trait]
impl ApprovalBroker for Broker {
    async fn ask(&self, prompt: Prompt) -> Answer {
        self.asked.lock().unwrap().push(prompt);
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Answer::Deny)
    }
}

struct World {
    sim: Simulator,
    broker: Arc<Broker>,
    engine: Arc<Engine>,
    events: Arc<Recorded>,
    dir: tempfile::TempDir,
}

#[derive(Default)]
struct Recorded(Mutex<Vec<String>>);

impl EventSink for Recorded {
    fn emit(&self, event: Event) {
        self.0.lock().unwrap().push(format!("{event:?}"));
    }
}

/// The app's catalog on a data directory of its own, signed in to the simulator as DEMO.
async fn world(remember: bool) -> World {
    world_at(remember, None).await
}

/// A fixed time, for what the plugin works out from the local date.
struct At(i64);

impl harness_core::clock::Clock for At {
    fn now_ms(&self) -> i64 {
        self.0
    }
}

/// The world with the clock at `now_ms`, or the system's.
async fn world_at(remember: bool, now_ms: Option<i64>) -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let broker = Arc::new(Broker::default());
    let mut options = Options::new(broker.clone());
    if let Some(now_ms) = now_ms {
        options.clock = Arc::new(At(now_ms));
    }
    options.secrets = Arc::new(MemorySecrets::default());
    options.campus = Origin::development(&sim.origin()).unwrap();
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let events = Arc::new(Recorded::default());
    options.events = events.clone();
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    let step = engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, remember)
        .await
        .unwrap();
    assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
    World {
        sim,
        broker,
        engine,
        events,
        dir,
    }
}

fn call(tool: &str, actor: Actor, input: Value) -> Call {
    Call {
        tool: format!("wallet.{tool}"),
        actor,
        input,
        conversation: (actor == Actor::Agent).then(|| "c1".to_owned()),
    }
}

impl World {
    async fn run(&self, tool: &str, actor: Actor, input: Value) -> Outcome {
        self.engine.invoke(call(tool, actor, input)).await.outcome
    }

    /// The result of the tool as the agent and as the student's tap, which must be the same.
    async fn both(&self, tool: &str, input: Value) -> Value {
        let agent = ran(self.run(tool, Actor::Agent, input.clone()).await);
        let user = ran(self.run(tool, Actor::User, input).await);
        assert_eq!(
            agent, user,
            "{tool}: the agent and the student were answered alike"
        );
        agent
    }

    fn card_requests(&self, path: &str) -> Vec<harness_campus_sim::Seen> {
        self.sim
            .seen()
            .into_iter()
            .filter(|r| r.host == "bdcard.pku.edu.cn" && r.target.starts_with(path))
            .collect()
    }
}

fn ran(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("the call did not run: {other:?}"),
    }
}

fn refusal(outcome: Outcome) -> Code {
    match outcome {
        Outcome::Refused { code, .. } => code,
        other => panic!("the call was not refused: {other:?}"),
    }
}

fn failed(outcome: Outcome) -> String {
    match outcome {
        Outcome::Failed { message } => message,
        other => panic!("the call did not fail: {other:?}"),
    }
}

fn demo_balance() -> Value {
    json!({
        "balanceYuan": 42.5,
        "spentTodayYuan": 18.3,
        "dailyLimitYuan": 300,
        "accounts": [{"name": "校园卡账户", "balanceYuan": 42.5, "spentTodayYuan": 18.3, "dailyLimitYuan": 300}],
        "lost": false,
        "frozen": false
    })
}

#[tokio::test]
async fn the_balance_is_the_cards_in_yuan_with_todays_spending_and_the_daily_limit() {
    let w = world(false).await;
    assert_eq!(w.both("cardBalance", json!({})).await, demo_balance());
    // The widget's data source: the same read, kept two minutes.
    let read = w.engine.use_tool_data("wallet", "balance").await.unwrap();
    assert_eq!((read.value, read.cached), (demo_balance(), false));
    let again = w.engine.use_tool_data("wallet", "balance").await.unwrap();
    assert!(again.cached);
    let plugin = w
        .engine
        .plugins()
        .into_iter()
        .find(|p| p.plugin.id == "wallet")
        .unwrap();
    let sources: Vec<(&str, &str, &str, u64)> = plugin
        .plugin
        .data_sources
        .iter()
        .map(|d| (d.key.as_str(), d.title.as_str(), d.tool.as_str(), d.ttl_ms))
        .collect();
    assert_eq!(sources, [("balance", "校园卡余额", "cardBalance", 120_000)]);
}

#[tokio::test]
async fn the_records_between_two_dates_come_paged_in_local_time_and_yuan() {
    let w = world(false).await;
    let first = w
        .both(
            "transactions",
            json!({"from": "2026-11-28", "to": "2026-12-01", "limit": 3}),
        )
        .await;
    assert_eq!(
        first,
        json!({
            "from": "2026-11-28", "to": "2026-12-01", "page": 1, "pages": 3, "total": 7,
            "records": [
                {"time": "2026-12-01 11:32", "merchant": "学一食堂", "kind": "消费", "amountYuan": -12.5, "balanceAfterYuan": 42.5},
                {"time": "2026-12-01 07:45", "merchant": "燕南食堂", "kind": "消费", "amountYuan": -5.8, "balanceAfterYuan": 55},
                {"time": "2026-11-30 18:05", "merchant": "农园食堂", "kind": "消费", "amountYuan": -16.3, "balanceAfterYuan": 60.8}
            ]
        })
    );
    let last = w
        .both(
            "transactions",
            json!({"from": "2026-11-28", "to": "2026-12-01", "limit": 3, "page": 3}),
        )
        .await;
    assert_eq!(
        last["records"],
        json!([{"time": "2026-11-28 12:02", "merchant": "学五食堂", "kind": "消费", "amountYuan": -11.2, "balanceAfterYuan": 54}])
    );
    let top_up = w
        .both(
            "transactions",
            json!({"from": "2026-11-29", "to": "2026-11-29"}),
        )
        .await;
    assert_eq!(
        top_up,
        json!({"from": "2026-11-29", "to": "2026-11-29", "page": 1, "pages": 1, "total": 1, "records": [
            {"time": "2026-11-29 09:20", "merchant": "支付宝充值", "kind": "充值", "amountYuan": 50, "balanceAfterYuan": 101}
        ]})
    );
    // The card was asked for exactly that page of that period.
    let asked = w.card_requests("/berserker-search/search/personal/turnover");
    assert_eq!(
        asked[0].target,
        "/berserker-search/search/personal/turnover?size=3&current=1&type=&timeFrom=2026-11-28&timeTo=2026-12-01&synAccessSource=h5"
    );
}

#[tokio::test]
async fn a_date_that_is_not_a_day_is_refused_naming_the_field_and_nothing_is_sent() {
    let w = world(false).await;
    let sent = w.sim.seen().len();
    assert_eq!(
        failed(
            w.run(
                "transactions",
                Actor::User,
                json!({"from": "2026-02-30", "to": "2026-03-01"})
            )
            .await
        ),
        "from：2026-02-30 不是有效日期，例如 2026-12-04 · from: 2026-02-30 is not a date; write it like 2026-12-04"
    );
    assert_eq!(
        failed(
            w.run(
                "spending",
                Actor::Agent,
                json!({"from": "2026-12-01", "to": "2026-11-01"})
            )
            .await
        ),
        "to（2026-11-01）早于 from（2026-12-01）· to (2026-11-01) is before from (2026-12-01)"
    );
    let outcome = w
        .run(
            "transactions",
            Actor::Agent,
            json!({"from": "2026/11/01", "to": "2026-11-30"}),
        )
        .await;
    assert_eq!(
        outcome,
        Outcome::Refused {
            code: Code::InvalidInput,
            // issue 44: a format error gives an example, not the regex.
            message:
                r#"The input is invalid: input.from: "2026/11/01" is not written like 2026-12-04"#
                    .into()
        }
    );
    assert_eq!(w.sim.seen().len(), sent);
}

#[tokio::test]
async fn spending_gives_the_totals_of_a_period_and_each_day_of_its_month() {
    let w = world(false).await;
    assert_eq!(
        w.both(
            "spending",
            json!({"from": "2026-11-01", "to": "2026-11-30"})
        )
        .await,
        json!({
            "from": "2026-11-01", "to": "2026-11-30", "incomeYuan": 50, "spentYuan": 79.4,
            "month": "2026-11",
            "spentPerDay": [
                {"date": "2026-11-26", "spentYuan": 9.6},
                {"date": "2026-11-27", "spentYuan": 15.4},
                {"date": "2026-11-28", "spentYuan": 14.2},
                {"date": "2026-11-30", "spentYuan": 40.2}
            ]
        })
    );
    let december = w
        .both(
            "spending",
            json!({"from": "2026-12-01", "to": "2026-12-01", "month": "2026-12"}),
        )
        .await;
    assert_eq!(
        december,
        json!({"from": "2026-12-01", "to": "2026-12-01", "incomeYuan": 0, "spentYuan": 18.3,
               "month": "2026-12", "spentPerDay": [{"date": "2026-12-01", "spentYuan": 18.3}]})
    );
}

#[tokio::test]
async fn a_period_the_student_names_is_an_input_with_a_default_and_its_dates_are_worked_out_locally()
 {
    // issue 44: "this month", "last week" are a period the model picks, not two dates it must
    // compute; the plugin works them out from the local date. 2026-12-02 12:00 in Beijing is a
    // Wednesday.
    const NOON_DEC_2_BEIJING: i64 = 1_796_169_600_000 + 4 * 3_600_000;
    let w = world_at(false, Some(NOON_DEC_2_BEIJING)).await;
    let this_month = w.both("spending", json!({})).await;
    assert_eq!(
        (
            &this_month["period"],
            &this_month["from"],
            &this_month["to"],
            &this_month["month"]
        ),
        (
            &json!("thisMonth"),
            &json!("2026-12-01"),
            &json!("2026-12-02"),
            &json!("2026-12")
        )
    );
    assert_eq!(
        w.both("spending", json!({"period": "lastMonth"})).await,
        json!({
            "period": "lastMonth", "from": "2026-11-01", "to": "2026-11-30", "incomeYuan": 50,
            "spentYuan": 79.4, "month": "2026-11",
            "spentPerDay": [
                {"date": "2026-11-26", "spentYuan": 9.6},
                {"date": "2026-11-27", "spentYuan": 15.4},
                {"date": "2026-11-28", "spentYuan": 14.2},
                {"date": "2026-11-30", "spentYuan": 40.2}
            ]
        })
    );
    let last_week = w
        .both("transactions", json!({"period": "lastWeek", "limit": 2}))
        .await;
    assert_eq!(
        (&last_week["period"], &last_week["from"], &last_week["to"]),
        (
            &json!("lastWeek"),
            &json!("2026-11-23"),
            &json!("2026-11-29")
        )
    );
    assert_eq!(
        w.card_requests("/berserker-search/search/personal/turnover")[0].target,
        "/berserker-search/search/personal/turnover?size=2&current=1&type=&timeFrom=2026-11-23&timeTo=2026-11-29&synAccessSource=h5"
    );
    // Dates the student names win over the period, and are echoed without one.
    let named = w
        .both(
            "transactions",
            json!({"from": "2026-11-29", "to": "2026-11-29"}),
        )
        .await;
    assert_eq!(named.get("period"), None);
    assert_eq!(
        (&named["from"], &named["to"]),
        (&json!("2026-11-29"), &json!("2026-11-29"))
    );
}

#[tokio::test]
async fn the_agent_is_asked_before_the_digital_card_and_it_switches_only_after_allow() {
    let w = world(false).await;
    let switch = "/berserker-app/useCard/setUseCardConfig";

    w.broker.will(Answer::Deny);
    let denied = w.run("useDigitalCard", Actor::Agent, json!({})).await;
    assert_eq!(refusal(denied), Code::Declined);
    let prompts = w.broker.asked();
    assert_eq!(prompts.len(), 1);
    assert_eq!(
        (
            prompts[0].effect,
            prompts[0].headline.as_str(),
            prompts[0].plugin_title.as_str()
        ),
        (Effect::Money, "把校园卡的付款方式切换为数字卡", "校园卡")
    );
    assert!(w.card_requests(switch).is_empty());

    w.broker.will(Answer::Allow);
    let allowed = ran(w.run("useDigitalCard", Actor::Agent, json!({})).await);
    assert_eq!(
        allowed,
        json!({"status": "switched", "cardType": 1, "cardTypeName": "数字卡"})
    );
    assert_eq!(w.broker.asked().len(), 1);
    let sent = w.card_requests(switch);
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].method.as_str(), sent[0].body.as_str()),
        ("POST", r#"{"cardType":1,"synAccessSource":"h5"}"#)
    );

    // The student's own tap is never asked.
    let tapped = ran(w.run("useDigitalCard", Actor::User, json!({})).await);
    assert_eq!(tapped, allowed);
    assert!(w.broker.asked().is_empty());
}

#[tokio::test]
async fn the_pay_code_opens_only_from_a_tap_and_is_never_a_result() {
    let w = world(false).await;
    let agent = w.run("showPayCode", Actor::Agent, json!({})).await;
    assert_eq!(refusal(agent), Code::UserOnly);
    let scheduler = w.run("showPayCode", Actor::Scheduler, json!({})).await;
    assert_eq!(refusal(scheduler), Code::UserOnly);
    // Even with the digital card on, the tap answers the screen to open, not the code.
    ran(w.run("useDigitalCard", Actor::User, json!({})).await);
    let tapped = ran(w.run("showPayCode", Actor::User, json!({})).await);
    assert_eq!(tapped, json!({"status": "opened", "screen": "payCode"}));
    assert!(
        w.card_requests("/berserker-app/ykt/tsm/batchGetBarCodeGet")
            .is_empty()
    );
    // The model is not even shown the tool.
    let names = w
        .engine
        .model_tools(Some("c1"))
        .into_iter()
        .map(|t| t.name)
        .collect::<Vec<_>>();
    assert!(
        names.contains(&"wallet__cardBalance".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"wallet__showPayCode".to_owned()),
        "{names:?}"
    );
}

#[tokio::test]
async fn recharge_answers_the_card_services_page_and_moves_no_money() {
    let w = world(false).await;
    let sent = w.sim.seen().len();
    assert_eq!(
        w.both("recharge", json!({})).await,
        json!({"status": "open_in_browser", "url": "https://bdcard.pku.edu.cn/plat/"})
    );
    assert_eq!(w.sim.seen().len(), sent);
    assert!(w.broker.asked().is_empty());
}

#[tokio::test]
async fn the_scheduler_reads_the_balance_and_is_refused_the_digital_card() {
    let w = world(false).await;
    assert_eq!(
        ran(w.run("cardBalance", Actor::Scheduler, json!({})).await),
        demo_balance()
    );
    let switch = w.run("useDigitalCard", Actor::Scheduler, json!({})).await;
    assert_eq!(refusal(switch), Code::SchedulerReadOnly);
    assert!(
        w.card_requests("/berserker-app/useCard/setUseCardConfig")
            .is_empty()
    );

    // Seed 004's reminder: a check on the balance that notifies below 50 yuan.
    let job = w
        .engine
        .add_job(
            &json!({"name": "校园卡余额低于 50 元", "schedule": {"everyMinutes": 60},
                    "check": {"tool": "wallet.cardBalance",
                              "when": {"path": "balanceYuan", "op": "lt", "value": 50},
                              "notify": {"title": "余额不足", "body": "校园卡还剩 {balanceYuan} 元"}}}),
            Owner::User,
        )
        .unwrap();
    let reports = w.engine.run_due(job.next_due_ms.unwrap()).await.unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(
        reports[0]
            .outcome
            .notification()
            .map(|n| (n.title.as_str(), n.body.as_str())),
        Some(("余额不足", "校园卡还剩 42.5 元")),
        "{:?}",
        reports[0].outcome
    );
    // Above the line, the same check stays quiet.
    w.sim.set_balance(DEMO.id, 12_000);
    let reports = w
        .engine
        .run_due(reports[0].next_due_ms.unwrap())
        .await
        .unwrap();
    assert_eq!(reports[0].outcome, RunOutcome::Quiet);
}

fn iaaa_logins(sim: &Simulator) -> usize {
    sim.seen()
        .iter()
        .filter(|r| r.target == "/iaaa/oauthlogin.do")
        .count()
}

#[tokio::test]
async fn a_session_ending_mid_call_signs_in_again_once_with_the_remembered_password() {
    let w = world(true).await;
    let logins = iaaa_logins(&w.sim);
    w.sim.expire_sessions();
    assert_eq!(
        ran(w.run("cardBalance", Actor::Agent, json!({})).await),
        demo_balance()
    );
    // One silent sign-in: one IAAA sign-in for each service IAAA signs into (the portal,
    // Treehole, the bus, 教学网).
    assert_eq!(iaaa_logins(&w.sim), logins + 4);
    assert!(w.engine.consent().campus_session);
}

#[tokio::test]
async fn a_session_ending_without_a_remembered_password_answers_signin_required() {
    let w = world(false).await;
    let logins = iaaa_logins(&w.sim);
    w.sim.expire_sessions();
    assert_eq!(
        ran(w
            .run(
                "transactions",
                Actor::Agent,
                json!({"from": "2026-11-01", "to": "2026-11-30"})
            )
            .await),
        json!({"status": "signin_required", "service": "card"})
    );
    assert_eq!(iaaa_logins(&w.sim), logins);
    // DESIGN §10: the consent stays met while the portal and Treehole are signed in.
    assert!(w.engine.consent().campus_session);
}

const UNREADABLE: &str = "校园卡服务的回答无法识别，请稍后再试 · The campus card service gave an answer the app cannot read; try again later";
const UNREACHABLE: &str = "校园卡服务暂时无法访问，请稍后再试 · The campus card service could not be reached; try again later";

#[tokio::test]
async fn a_card_answering_garbage_or_an_html_page_gives_an_error_in_the_students_words() {
    let w = world(false).await;
    w.sim.add_fault(Fault::CardGarbage);
    for (tool, input) in [
        ("cardBalance", json!({})),
        (
            "transactions",
            json!({"from": "2026-11-01", "to": "2026-11-30"}),
        ),
        (
            "spending",
            json!({"from": "2026-11-01", "to": "2026-11-30"}),
        ),
        ("useDigitalCard", json!({})),
    ] {
        assert_eq!(
            failed(w.run(tool, Actor::User, input).await),
            UNREADABLE,
            "{tool}"
        );
    }
    w.sim.clear_faults();
    w.sim.add_fault(Fault::CardHtml(502));
    assert_eq!(
        failed(w.run("cardBalance", Actor::Agent, json!({})).await),
        UNREACHABLE
    );
    w.sim.clear_faults();
    w.sim.add_fault(Fault::HugeCard(64));
    assert_eq!(
        failed(w.run("cardBalance", Actor::User, json!({})).await),
        UNREADABLE
    );
    w.sim.clear_faults();
    assert_eq!(
        ran(w.run("cardBalance", Actor::User, json!({})).await),
        demo_balance()
    );
}

/// Yuan as the decimal text of `fen` / 100, built with integers only.
fn decimal_yuan(fen: i64) -> String {
    format!("{}.{:02}", fen / 100, fen % 100)
}

#[test]
fn any_fen_balance_is_answered_in_yuan_exactly() {
    use proptest::prelude::*;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let w = rt.block_on(world(false));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    });
    let fens = prop_oneof![
        0i64..=1_000_000_000,
        0i64..=10_000,
        Just(0),
        Just(1_000_000_000)
    ];
    runner
        .run(&fens, |fen| {
            w.sim.set_balance(DEMO.id, fen);
            let result = rt.block_on(w.run("cardBalance", Actor::User, json!({})));
            let yuan = ran(result)["balanceYuan"].as_f64().unwrap();
            // The number is the decimal fen / 100 (the double nearest it, as the student
            // reads it back) and its hundredfold is the fen again.
            let exact: f64 = decimal_yuan(fen).parse().unwrap();
            prop_assert_eq!(yuan, exact);
            prop_assert_eq!((yuan * 100.0).round() as i64, fen);
            prop_assert_eq!(format!("{:.2}", yuan), decimal_yuan(fen));
            Ok(())
        })
        .unwrap();
}

#[tokio::test]
async fn the_pay_code_screen_shows_a_new_code_on_the_digital_card_and_the_code_is_nowhere_else() {
    let w = world(false).await;
    let screens = Screens::new(w.engine.clone(), Live::new());
    let codes = "/berserker-app/ykt/tsm/batchGetBarCodeGet";

    // The physical card first: no code, and the tap that switches (the student's own call).
    let before = screens.pay_code().await;
    assert_eq!(before.code, None);
    assert_eq!(
        before.problem.as_deref(),
        Some("付款码要用数字卡：切换后，付款会从校园卡扣款")
    );
    let fix = before.fix.unwrap();
    assert_eq!(
        (fix.label.as_str(), &fix.action),
        (
            "切换为数字卡",
            &Action::RunTool {
                tool: "wallet.useDigitalCard".into()
            }
        )
    );
    assert!(w.card_requests(codes).is_empty());
    assert_eq!(screens.act(fix.action).await.unwrap(), Acted::Done);
    assert!(w.broker.asked().is_empty());

    let first = screens.pay_code().await;
    assert_eq!((first.problem.clone(), first.fix.clone()), (None, None));
    assert_eq!(first.refresh_after_ms, 60_000);
    let code = first.code.unwrap();
    assert_eq!(
        (code.account.as_str(), code.balance.as_str()),
        ("校园卡账户", "余额 42.50 元")
    );
    assert!(
        code.payload.len() == 18 && code.payload.chars().all(|c| c.is_ascii_digit()),
        "{}",
        code.payload
    );
    assert_eq!(
        w.card_requests(codes)[0].target,
        "/berserker-app/ykt/tsm/batchGetBarCodeGet?account=300123&payacc=000&paytype=1&synAccessSource=h5"
    );
    // What the shell draws is the payload: the QR code decodes to it, and the barcode is its
    // Code 128 (set C: a start, nine digit pairs, a check symbol of 11 modules each, the stop).
    assert_eq!(qr_text(&code.qr_modules, code.qr_width), code.payload);
    assert_eq!(code.barcode_modules.len(), 11 * 11 + 13);
    assert_eq!(
        code.barcode_modules[..11],
        [
            true, true, false, true, false, false, true, true, true, false, false
        ]
    );
    // Read again (the shell's refresh): a new code.
    let second = screens.pay_code().await.code.unwrap();
    assert_ne!(second.payload, code.payload);

    // The codes are on the screen only: not in any file, the audit or an event.
    let payloads = [code.payload, second.payload];
    w.engine.shutdown().await;
    let audit = format!("{:?}", w.engine.audit(10_000).unwrap());
    let events = w.events.0.lock().unwrap().join("\n");
    for payload in &payloads {
        for (path, bytes) in common::files(w.dir.path()) {
            assert!(
                !bytes
                    .windows(payload.len())
                    .any(|b| b == payload.as_bytes()),
                "{} holds the pay code",
                path.display()
            );
        }
        assert!(!audit.contains(payload.as_str()));
        assert!(!events.contains(payload.as_str()));
    }
}

#[tokio::test]
async fn the_pay_code_screen_asks_to_sign_in_again_once_the_session_has_ended() {
    let w = world(false).await;
    let screens = Screens::new(w.engine.clone(), Live::new());
    w.engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    ran(w.run("useDigitalCard", Actor::User, json!({})).await);
    w.sim.expire_sessions();
    let screen = screens.pay_code().await;
    assert_eq!(screen.title, "Campus card pay code");
    assert_eq!(screen.code, None);
    assert_eq!(
        screen.problem.as_deref(),
        Some("Sign in to the campus account again to show the pay code")
    );
    assert_eq!(
        screen.fix.map(|b| b.action),
        Some(Action::Open {
            route: Route::CampusAccount
        })
    );
    w.sim.add_fault(Fault::CardHtml(502));
    w.engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    let screen = screens.pay_code().await;
    assert_eq!(
        (screen.problem.as_deref(), screen.fix),
        (
            Some("The campus card service could not be reached; the pay code tries again shortly"),
            None
        )
    );
}

/// The text a QR code's modules (row after row, `width` to a row) decode to, read back from a
/// picture of them: four pixels a module, a quiet zone of four modules.
fn qr_text(modules: &[bool], width: u32) -> String {
    let width = width as usize;
    assert_eq!(modules.len(), width * width);
    let side = (width + 8) * 4;
    let mut picture = rqrr::PreparedImage::prepare_from_greyscale(side, side, |x, y| {
        let (mx, my) = ((x / 4).wrapping_sub(4), (y / 4).wrapping_sub(4));
        let dark = mx < width && my < width && modules[my * width + mx];
        if dark { 0 } else { 255 }
    });
    let grids = picture.detect_grids();
    assert_eq!(grids.len(), 1);
    grids[0].decode().unwrap().1
}

#[tokio::test]
async fn the_wallet_page_opens_the_pay_code_and_the_pay_code_the_recharge_page_by_taps() {
    let w = world(false).await;
    let screens = Screens::new(w.engine.clone(), Live::new());
    let page = screens.plugin_detail("wallet").unwrap();
    let taps: Vec<(&str, &Action)> = page
        .actions
        .iter()
        .map(|b| (b.label.as_str(), &b.action))
        .collect();
    let pay_code = Action::RunTool {
        tool: "wallet.showPayCode".into(),
    };
    assert_eq!(taps, [("付款码", &pay_code)]);
    assert_eq!(
        screens.act(pay_code).await.unwrap(),
        Acted::Open {
            route: Route::PayCode
        }
    );
    let recharge = screens.pay_code().await.recharge;
    assert_eq!(recharge.label, "去充值");
    assert_eq!(
        screens.act(recharge.action).await.unwrap(),
        Acted::Shell(ShellEffect::OpenBrowser {
            url: "https://bdcard.pku.edu.cn/plat/".into()
        })
    );
    assert!(w.broker.asked().is_empty());
    // A page for the browser is https, or nothing opens.
    for url in [
        "javascript:alert(1)",
        "http://bdcard.pku.edu.cn/plat/",
        "intent://x",
    ] {
        let refused = screens
            .act(Action::OpenInBrowser { url: url.into() })
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            refused,
            format!("只能在浏览器中打开 https 网页，不能打开 {url}")
        );
    }
    // The tap of a tool that is no screen's is the tool's own outcome.
    assert_eq!(
        screens
            .act(Action::RunTool {
                tool: "wallet.cardBalance".into()
            })
            .await
            .unwrap(),
        Acted::Done
    );
    // A plugin that is off offers no taps.
    w.engine.set_enabled("wallet", false).unwrap();
    assert_eq!(screens.plugin_detail("wallet").unwrap().actions, []);
}

#[tokio::test]
async fn a_plugin_waiting_for_the_campus_sign_in_says_so_in_words_with_the_tap_that_signs_in() {
    let w = world(false).await;
    let screens = Screens::new(w.engine.clone(), Live::new());
    w.engine.campus().sign_out().unwrap();
    let row = |lang: Language| {
        w.engine.change_setting(Change::Language(lang)).unwrap();
        let list = screens.plugins();
        let wallet = list.rows().find(|p| p.id == "wallet").unwrap();
        let detail = screens.plugin_detail("wallet").unwrap();
        let fix = detail.unmet_fix.unwrap();
        // The list's row offers the same tap as the plugin's page.
        assert_eq!(wallet.fix.as_ref(), Some(&fix));
        (
            wallet.state_label.clone(),
            detail.unmet.unwrap(),
            fix.label,
            fix.action,
        )
    };
    let open = Action::Open {
        route: Route::CampusAccount,
    };
    assert_eq!(
        row(Language::Zh),
        (
            "需要登录校园账号".to_owned(),
            "需要登录校园账号".to_owned(),
            "登录校园账号".to_owned(),
            open.clone()
        )
    );
    assert_eq!(
        row(Language::En),
        (
            "Needs the campus sign-in".to_owned(),
            "Needs the campus sign-in".to_owned(),
            "Sign in to the campus account".to_owned(),
            open
        )
    );
    // The public canteens need nothing.
    let canteen = screens.plugin_detail("canteen").unwrap();
    assert_eq!((canteen.unmet, canteen.unmet_fix), (None, None));
}

#[tokio::test]
async fn the_plugin_list_says_what_each_shipped_plugin_is_for_in_the_students_language() {
    let w = world(false).await;
    let screens = Screens::new(w.engine.clone(), Live::new());
    let described = |lang: Language| {
        w.engine.change_setting(Change::Language(lang)).unwrap();
        let list = screens.plugins();
        let row = list.rows().find(|p| p.id == "wallet").unwrap();
        let page = screens.plugin_detail("wallet").unwrap();
        assert_eq!(page.description, row.description);
        row.description.clone()
    };
    assert_eq!(
        described(Language::Zh),
        "校园卡：余额、消费记录和统计、数字卡与付款码，以及校园卡服务的充值页面。"
    );
    assert_eq!(
        described(Language::En),
        "The campus card: the balance, records and spending, the digital card and its pay code, and the card service's recharge page."
    );
    // Every shipped plugin says it in both languages, and never in the model's words.
    for row in screens.plugins().rows().cloned().collect::<Vec<_>>() {
        assert!(!row.description.is_empty(), "{}", row.id);
        assert!(!row.description.contains("__"), "{}", row.id);
    }
}

#[tokio::test]
async fn the_card_is_first_of_the_campus_plugins_with_a_switch() {
    let w = world(false).await;
    let screens = Screens::new(w.engine.clone(), Live::new());
    w.engine.campus().sign_out().unwrap();
    let list = screens.plugins();
    let titles: Vec<_> = list.groups.iter().map(|g| g.title.as_str()).collect();
    // Nothing was added: the campus plugins, then the app's own.
    assert_eq!(titles, ["校园", "系统"]);
    assert!(list.rows().all(|r| r.kind == PluginKind::Bundled));
    let wallet = list.groups[0].plugins[0].clone();
    assert_eq!(
        (wallet.id.as_str(), wallet.kind_label.as_str()),
        ("wallet", "校园")
    );
    assert!(wallet.enabled);
    let off = Action::SetEnabled {
        plugin: "wallet".into(),
        enabled: false,
    };
    assert_eq!((wallet.toggle.clone(), wallet.fixed), (Some(off), None));
    screens.act(wallet.toggle.unwrap()).await.unwrap();
    let list = screens.plugins();
    let wallet = list.rows().find(|r| r.id == "wallet").unwrap();
    // Off: it says so, and a plugin that is off is offered no sign-in.
    assert_eq!(
        (
            wallet.enabled,
            wallet.state_label.as_str(),
            wallet.fix.clone()
        ),
        (false, "已关闭", None)
    );
    assert_eq!(
        wallet.toggle,
        Some(Action::SetEnabled {
            plugin: "wallet".into(),
            enabled: true
        })
    );
    w.engine
        .change_setting(Change::Language(Language::En))
        .unwrap();
    assert_eq!(screens.plugins().groups[0].title, "Campus");
}

/// The strings of a screen model's fields whose name says a student reads them (a label, a
/// title, a description, …), from its `Debug` form: `(field, text)`.
fn read_texts(model: &impl std::fmt::Debug) -> Vec<(String, String)> {
    const READ: [&str; 16] = [
        "label",
        "title",
        "text",
        "description",
        "summary",
        "hint",
        "note",
        "heading",
        "headline",
        "reason",
        "words",
        "placeholder",
        "message",
        "consequence",
        "when",
        "value",
    ];
    let debug = format!("{model:?}");
    let mut out = Vec::new();
    let mut rest = debug.as_str();
    while let Some(at) = rest.find(": \"") {
        let field: String = rest[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let body = &rest[at + 3..];
        let mut text = String::new();
        let mut chars = body.char_indices();
        let mut end = body.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, next)) = chars.next() {
                        text.push(match next {
                            'n' => '\n',
                            other => other,
                        });
                    }
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                other => text.push(other),
            }
        }
        if READ.iter().any(|r| field.ends_with(r)) {
            out.push((field, text));
        }
        rest = &body[end..];
    }
    out
}

#[tokio::test]
async fn no_screen_a_student_reads_names_a_tool_id_or_shows_json() {
    let w = world(false).await;
    let screens = Screens::new(w.engine.clone(), Live::new());
    // Something in the activity log, the inbox and the chat's history.
    w.run("cardBalance", Actor::User, json!({})).await;
    w.engine.open_conversation("c1").unwrap();
    let plugins: Vec<_> = w.engine.plugins().into_iter().map(|v| v.plugin).collect();
    let mut forbidden: Vec<String> = vec!["{".into(), "}".into()];
    for p in &plugins {
        for t in &p.tools {
            forbidden.push(t.id.clone());
            forbidden.push(t.id.replace('.', "__"));
        }
    }
    for lang in [Language::Zh, Language::En] {
        w.engine.change_setting(Change::Language(lang)).unwrap();
        let mut models: Vec<(String, Vec<(String, String)>)> = vec![
            (
                "navigation".into(),
                read_texts(&screens.navigation().unwrap()),
            ),
            ("plugins".into(), read_texts(&screens.plugins())),
            ("consent".into(), read_texts(&screens.consent())),
            (
                "model".into(),
                read_texts(&screens.model_settings().unwrap()),
            ),
            ("jobs".into(), read_texts(&screens.jobs())),
            (
                "memory".into(),
                read_texts(&screens.memory_inbox().unwrap()),
            ),
            (
                "activity".into(),
                read_texts(&screens.activity(&Default::default()).unwrap()),
            ),
            (
                "allowances".into(),
                read_texts(&screens.allowances().unwrap()),
            ),
            ("spending".into(), read_texts(&screens.spending().unwrap())),
            (
                "campus".into(),
                read_texts(&screens.campus_account().unwrap()),
            ),
            (
                "treehole".into(),
                read_texts(&screens.campus_check(CampusCheck::Treehole)),
            ),
            (
                "first run".into(),
                read_texts(&screens.first_run().unwrap()),
            ),
            ("chat".into(), read_texts(&screens.chat("c1").unwrap())),
            (
                "conversation".into(),
                read_texts(&screens.conversation_settings("c1").unwrap()),
            ),
        ];
        for p in &plugins {
            models.push((
                p.id.clone(),
                read_texts(&screens.plugin_detail(&p.id).unwrap()),
            ));
        }
        for (screen, texts) in &models {
            assert!(!texts.is_empty(), "{screen}: nothing read");
            for (field, text) in texts {
                for word in &forbidden {
                    assert!(
                        !text.contains(word.as_str()),
                        "{lang:?} {screen}.{field}: {text:?} holds {word:?}"
                    );
                }
                // In Chinese no Latin plugin id stands among the words.
                if lang == Language::Zh {
                    for p in &plugins {
                        assert!(
                            !text
                                .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                                .any(|w| w == p.id),
                            "{screen}.{field}: {text:?} names the plugin {:?}",
                            p.id
                        );
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn a_check_meeting_an_ended_card_sign_in_notifies_once_and_again_only_after_it_worked() {
    // DESIGN §10 / issue 35.4: a scheduled check that meets an ended session it cannot renew
    // (no remembered password) tells the student once — not a line at every run — with the tap
    // that opens the campus sign-in; the job keeps its schedule.
    let w = world(false).await;
    let job = w
        .engine
        .add_job(
            &json!({"name": "余额检查", "schedule": {"everyMinutes": 60},
                    "check": {"tool": "wallet.cardBalance",
                              "when": {"path": "balanceYuan", "op": "lt", "value": 50},
                              "notify": {"title": "余额不足", "body": "校园卡还剩 {balanceYuan} 元"}}}),
            Owner::User,
        )
        .unwrap();
    w.sim.expire_sessions();
    let mut due = job.next_due_ms.unwrap();
    let mut runs = Vec::new();
    for _ in 0..3 {
        let report = w.engine.run_due(due).await.unwrap().remove(0);
        due = report.next_due_ms.unwrap();
        runs.push((report.outcome, report.notice));
    }
    let ended = RunOutcome::SignInRequired {
        service: "card".into(),
    };
    let notice = harness_core::scheduler::Notification {
        title: "校园卡登录已过期，点此重新登录".into(),
        body: "定时任务「余额检查」在你重新登录后才能继续检查。".into(),
    };
    assert_eq!(
        runs,
        vec![
            (ended.clone(), Some(notice.clone())),
            (ended.clone(), None),
            (ended.clone(), None),
        ]
    );
    assert_eq!(
        w.events
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.contains("Notification"))
            .count(),
        1
    );
    assert!(
        w.engine.drain_host_lines().is_empty(),
        "no sign-in line at each scheduled run"
    );
    let screens = Screens::new(w.engine.clone(), Live::new());
    let row = &screens.jobs().jobs[0];
    assert_eq!(
        row.notice.as_deref(),
        Some("校园卡登录已过期：重新登录后继续检查")
    );
    let fix = row.fix.as_ref().unwrap();
    assert_eq!(
        (fix.label.as_str(), &fix.action),
        (
            "重新登录",
            &Action::Open {
                route: Route::CampusAccount
            }
        )
    );

    // Signed in again, the check works; a later end is told once more.
    let step = w
        .engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
    let report = w.engine.run_due(due).await.unwrap().remove(0);
    assert!(
        matches!(report.outcome, RunOutcome::Notified { .. }),
        "{:?}",
        report.outcome
    );
    assert_eq!(screens.jobs().jobs[0].fix, None);
    w.sim.expire_sessions();
    let report = w
        .engine
        .run_due(report.next_due_ms.unwrap())
        .await
        .unwrap()
        .remove(0);
    assert_eq!((report.outcome, report.notice), (ended, Some(notice)));
}
