//! The campus plugins that need no sign-in — 食堂 (canteen), 空闲教室 (classrooms) and
//! 图书馆 (library), shipped TypeScript plugins — against the campus simulator on 127.0.0.1,
//! each tool through the one invoke path as the agent and as the student's tap.

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use common::model_server::{ModelServer, calls, text};
use harness_campus_sim::{Fault, Simulator};
use harness_core::campus::wire::Origin;
use harness_core::clock::Clock;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::plugins::script::Shipped;
use harness_core::policy::{Actor, Answer};
use harness_core::{Engine, Options};
use serde_json::{Value, json};

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, prompt: Prompt) -> Answer {
        panic!("a read of a public campus service asked: {prompt:?}")
    }
}

/// A fixed time: the simulator's figures do not move, and `openNow` is told this.
struct At(i64);

impl Clock for At {
    fn now_ms(&self) -> i64 {
        self.0
    }
}

/// Beijing time (UTC+8) on 2026-12-02, a Wednesday, as milliseconds.
fn beijing(hour: i64, minute: i64) -> i64 {
    const MIDNIGHT_UTC: i64 = 1_796_169_600_000; // 2026-12-02 00:00 UTC
    MIDNIGHT_UTC + ((hour - 8) * 60 + minute) * 60_000
}

struct World {
    sim: Simulator,
    engine: Engine,
    _dir: tempfile::TempDir,
}

async fn world(now_ms: i64) -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Deny));
    options.catalog = Arc::new(Shipped);
    options.clock = Arc::new(At(now_ms));
    options.campus = Origin::development(&sim.origin()).unwrap();
    let engine = Engine::open(dir.path(), options).unwrap();
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    World {
        sim,
        engine,
        _dir: dir,
    }
}

async fn call(engine: &Engine, tool: &str, actor: Actor, input: Value) -> Outcome {
    engine
        .invoke(Call {
            tool: tool.into(),
            actor,
            input,
            conversation: (actor == Actor::Agent).then(|| "c".to_owned()),
        })
        .await
        .outcome
}

/// The same result for the agent and for the student's tap.
async fn ran(engine: &Engine, tool: &str, input: Value) -> Value {
    let mut results = Vec::new();
    for actor in [Actor::Agent, Actor::User] {
        match call(engine, tool, actor, input.clone()).await {
            Outcome::Ran { result, .. } => results.push(result),
            other => panic!("{tool} as {actor:?}: {other:?}"),
        }
    }
    assert_eq!(results[0], results[1], "{tool}");
    results.remove(0)
}

async fn failed(engine: &Engine, tool: &str, input: Value) -> String {
    match call(engine, tool, Actor::Agent, input).await {
        Outcome::Failed { message } => message,
        other => panic!("{tool}: {other:?}"),
    }
}

#[tokio::test]
async fn the_canteens_crowding_in_people_seats_and_percent() {
    let w = world(beijing(11, 50)).await;
    assert_eq!(
        ran(&w.engine, "canteen.crowd", json!({})).await,
        json!({"takenAt": "2026-12-01 11:50", "canteens": [
            {"name": "学一食堂", "seats": 800, "present": 692, "fullPercent": 87, "warning": "拥挤"},
            {"name": "农园食堂", "seats": 1200, "present": 318, "fullPercent": 27},
            {"name": "燕南食堂", "seats": 600, "present": 105, "fullPercent": 18}
        ]})
    );
    // The portal's public query, asked from its own page (SERVICES.md §4).
    let asked = w.sim.seen();
    let crowd = asked
        .iter()
        .find(|s| s.target == "/publicQuery/canteenQuery/retrCarteenInfos.do")
        .unwrap();
    assert_eq!(
        (crowd.host.as_str(), crowd.method.as_str()),
        ("portal.pku.edu.cn", "POST")
    );
}

#[tokio::test]
async fn the_canteens_data_source_is_seed_004s() {
    let w = world(beijing(11, 50)).await;
    let sources: Vec<_> = w
        .engine
        .data_sources()
        .into_iter()
        .filter(|s| s.plugin == "canteen")
        .map(|s| (s.key, s.title, s.tool, s.args, s.ttl_ms))
        .collect();
    assert_eq!(
        sources,
        [(
            "crowd".to_owned(),
            "食堂就餐人数".to_owned(),
            "canteen.crowd".to_owned(),
            None,
            120_000
        )]
    );
}

#[tokio::test]
async fn which_canteens_are_open_at_lunch_on_a_wednesday() {
    let w = world(beijing(12, 40)).await;
    assert_eq!(
        ran(&w.engine, "canteen.openNow", json!({})).await,
        json!({
            "now": "2026-12-02 12:40",
            "open": [
                {"name": "学一食堂", "meal": "午餐", "closesAt": "2026-12-02 13:00"},
                {"name": "学五食堂", "meal": "午餐", "closesAt": "2026-12-02 13:00"},
                {"name": "农园食堂", "meal": "午餐", "closesAt": "2026-12-02 13:30"},
                {"name": "燕南食堂", "meal": "午餐", "closesAt": "2026-12-02 13:00"},
                {"name": "家园食堂", "meal": "午餐", "closesAt": "2026-12-02 13:30"},
                {"name": "勺园食堂", "meal": "午餐", "closesAt": "2026-12-02 13:30"}
            ],
            "opensNext": [],
            "hoursAsOf": "2026-09"
        })
    );
}

#[tokio::test]
async fn late_at_night_only_the_late_canteen_is_open_and_the_rest_open_tomorrow() {
    let w = world(beijing(21, 15)).await;
    let result = ran(&w.engine, "canteen.openNow", json!({})).await;
    assert_eq!(
        result["open"],
        json!([{"name": "农园食堂", "meal": "夜宵", "closesAt": "2026-12-02 23:00"}])
    );
    assert_eq!(
        result["opensNext"][0],
        json!({"name": "学一食堂", "meal": "早餐", "opensAt": "2026-12-03 06:30"})
    );
    assert_eq!(result["opensNext"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn free_classrooms_with_their_free_periods_and_capacity() {
    let w = world(beijing(9, 0)).await;
    let result = ran(
        &w.engine,
        "classrooms.free",
        json!({"building": "三教", "day": "tomorrow"}),
    )
    .await;
    assert_eq!(
        result["rooms"],
        json!([
            {"room": "三教101", "capacity": 120, "freePeriods": [1, 2, 5, 6, 7, 8, 9, 10, 11, 12]},
            {"room": "三教203", "capacity": 60, "freePeriods": [3, 4, 5, 6, 9, 10, 11, 12]}
        ])
    );
    assert_eq!(
        (result["building"].clone(), result["day"].clone()),
        // A result echoes the input's own value (issue 44: the model copied 今天 into a call).
        (json!("三教"), json!("tomorrow"))
    );
    // issue 37.5: the periods are the core's campus time (ctx.services.time) on the day asked.
    assert_eq!(result["date"], "2026-12-03");
    assert_eq!(result["periodTimes"]["1"], "08:00-08:50");
    assert_eq!(result["periodTimes"]["12"], "20:40-21:30");
    // The portal was asked as it spells the building and the day.
    assert!(w.sim.seen().iter().any(|s| s.target
        == "/publicQuery/classroomQuery/retrClassRoomFree.do?buildingName=%E4%B8%89%E6%95%99&time=%E6%98%8E%E5%A4%A9"));
    // Only the rooms free in a given period; the day defaults to today.
    let third = ran(
        &w.engine,
        "classrooms.free",
        json!({"building": "三教", "period": 3}),
    )
    .await;
    // The result echoes the input's own value, which the model copies into its next call.
    assert_eq!(third["day"], "today");
    assert_eq!(
        third["rooms"],
        json!([{"room": "三教203", "capacity": 60, "freePeriods": [3, 4, 5, 6, 9, 10, 11, 12]}])
    );
}

#[tokio::test]
async fn a_building_the_portal_does_not_know_is_refused_before_anything_is_sent() {
    let w = world(beijing(9, 0)).await;
    match call(
        &w.engine,
        "classrooms.free",
        Actor::Agent,
        json!({"building": "五教"}),
    )
    .await
    {
        Outcome::Refused { message, .. } => assert!(message.contains("building"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(w.sim.seen().is_empty());
}

#[tokio::test]
async fn the_library_catalogue_answers_books_with_call_numbers() {
    let w = world(beijing(9, 0)).await;
    assert_eq!(
        ran(&w.engine, "library.search", json!({"query": "算法"})).await,
        json!({"total": 1, "page": 1, "books": [{
            "id": "1002", "title": "算法导论", "author": "Thomas H. Cormen",
            "publisher": "机械工业出版社", "year": "2013", "callNumber": "TP301.6/C81"
        }]})
    );
    assert!(w.sim.seen().iter().any(|s| s.host == "opac.lib.pku.edu.cn"
        && s.target == "/BookAPI/new_opac/query?cc_all=%E7%AE%97%E6%B3%95&rows=10&start=0"));
    let second = ran(
        &w.engine,
        "library.search",
        json!({"query": "系统", "page": 2, "limit": 5}),
    )
    .await;
    assert_eq!(
        (second["page"].clone(), second["total"].clone()),
        (json!(2), json!(1))
    );
    assert!(
        w.sim
            .seen()
            .iter()
            .any(|s| s.target.ends_with("&rows=5&start=5"))
    );
}

#[tokio::test]
async fn a_service_answering_a_page_or_garbage_is_the_students_error() {
    let w = world(beijing(11, 50)).await;
    for (path, content_type, body, tool, input, message) in [
        (
            "/publicQuery/canteenQuery/retrCarteenInfos.do",
            "text/html",
            "<html><body>系统维护中</body></html>",
            "canteen.crowd",
            json!({}),
            "食堂人数暂时查不到 · The canteen figures could not be read",
        ),
        (
            "/publicQuery/classroomQuery/retrClassRoomFree.do",
            "application/json",
            r#"{"rows": "none"}"#,
            "classrooms.free",
            json!({"building": "一教"}),
            "空闲教室暂时查不到 · The free classrooms could not be read",
        ),
        (
            "/BookAPI/new_opac/query",
            "text/plain",
            "Service Unavailable",
            "library.search",
            json!({"query": "算法"}),
            "图书馆目录暂时查不到 · The library catalogue could not be read",
        ),
    ] {
        w.sim.add_fault(Fault::Answer {
            path: path.into(),
            status: 503,
            content_type: content_type.into(),
            body: body.into(),
        });
        assert_eq!(failed(&w.engine, tool, input).await, message, "{tool}");
        w.sim.clear_faults();
    }
}

#[tokio::test]
async fn the_scheduler_reads_them_too() {
    let w = world(beijing(11, 50)).await;
    match call(&w.engine, "canteen.crowd", Actor::Scheduler, json!({})).await {
        Outcome::Ran { result, .. } => assert_eq!(result["canteens"][0]["present"], 692),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_stray_argument_is_refused_naming_the_tool_whose_inputs_it_looks_like() {
    // issue 44: canteen__crowd ran with classrooms' `building` and `day`. Every object of an
    // SDK schema is strict, and the refusal names the offered tool those inputs belong to.
    let w = world(beijing(12, 0)).await;
    let sent = w.sim.seen().len();
    assert_eq!(
        call(
            &w.engine,
            "canteen.crowd",
            Actor::Agent,
            json!({"building": "三教", "day": "today"})
        )
        .await,
        Outcome::Refused {
            code: harness_core::policy::Code::InvalidInput,
            message: "The input is invalid: input: Additional properties are not allowed ('building', 'day' were unexpected). These look like the inputs of Free classrooms (classrooms__free)".into()
        }
    );
    // A stray field that is no other tool's is refused without a guess.
    assert_eq!(
        call(&w.engine, "canteen.crowd", Actor::Agent, json!({"hungry": true})).await,
        Outcome::Refused {
            code: harness_core::policy::Code::InvalidInput,
            message: "The input is invalid: input: Additional properties are not allowed ('hungry' was unexpected)".into()
        }
    );
    assert_eq!(w.sim.seen().len(), sent, "nothing reached the campus");
}

#[tokio::test]
async fn a_call_the_model_meant_for_another_tool_runs_nothing_and_the_model_is_told_which_tool() {
    // issue 44: the model sent classrooms' inputs to canteen__crowd; the turn refuses it, the
    // model reads which tool those inputs belong to, and the campus is asked nothing.
    let w = world(beijing(12, 0)).await;
    let server = ModelServer::start(vec![
        calls(&[(
            "c1",
            "canteen__crowd",
            r#"{"building":"三教","day":"today"}"#,
        )]),
        text("我查一下三教的空教室。"),
    ])
    .await;
    server.configure(&w.engine, "sk-test");
    let sent = w.sim.seen().len();
    let summary = w
        .engine
        .send_message("c", "三教今天有空教室吗？")
        .await
        .unwrap();
    assert_eq!(summary.answer, "我查一下三教的空教室。");
    let second = &server.requests()[1].body["messages"];
    let tool_message = second
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the refusal went back to the model");
    let refusal: Value = serde_json::from_str(tool_message["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        refusal["error"]["message"],
        "The input is invalid: input: Additional properties are not allowed ('building', 'day' were unexpected). These look like the inputs of Free classrooms (classrooms__free)"
    );
    assert_eq!(w.sim.seen().len(), sent, "nothing reached the campus");
}

/// Every JSON Schema node under `value`, with its path.
fn nodes<'v>(path: String, value: &'v Value, out: &mut Vec<(String, &'v Value)>) {
    match value {
        Value::Object(map) => {
            out.push((path.clone(), value));
            for (k, v) in map {
                nodes(format!("{path}/{k}"), v, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                nodes(format!("{path}/{i}"), v, out);
            }
        }
        _ => {}
    }
}

#[test]
fn no_shipped_schema_has_a_2_53_bound_or_a_backslash_d_and_every_object_is_strict() {
    // issue 44: `.int()`'s 9007199254740991 is ~100 tokens of noise; llama.cpp's schema grammar
    // refuses `\d`; an object that allows other properties lets a call meant for another tool run.
    use harness_core::installed::Catalog;
    let mut checked = 0;
    for (plugin, _) in Shipped.bundled() {
        for tool in &plugin.tools {
            let schema = tool.input.source();
            let text = schema.to_string();
            assert!(!text.contains("9007199254740991"), "{}: {text}", tool.id);
            assert!(!text.contains("\\\\d"), "{}: {text}", tool.id);
            let mut all = Vec::new();
            nodes(String::new(), schema, &mut all);
            for (path, node) in all {
                if node.get("type") == Some(&json!("object")) {
                    assert_eq!(
                        node.get("additionalProperties"),
                        Some(&json!(false)),
                        "{} at {path:?}: {text}",
                        tool.id
                    );
                    checked += 1;
                }
            }
        }
    }
    // The nine shipped campus plugins' 30 tools (grades 2, the bus 5 and 教学网 4 beside the six
    // others' 19: 树洞's seven with its followed posts), each input one object.
    assert_eq!(checked, 30);
}
