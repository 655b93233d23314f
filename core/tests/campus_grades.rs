//! The shipped 成绩 plugin (`grades`) against the campus simulator on 127.0.0.1, through the one
//! invoke path after a real sign-in (SERVICES.md §9): the course API's authorization (40077) as
//! a `verification_required` status until an SMS or authenticator code answers it; the scores by
//! term with what is not graded yet apart; the GPA by PKU's formula computed here from the
//! fixture and labelled as computed, or the school's own when the API gives one; and a check on
//! `grades.scores` that tells the student once when a new grade is published.

mod common;

use std::sync::Arc;

use harness_campus_sim::{ACCOUNTS, DEMO, OTP_CODE, SCHOOL_GPA, SCORES, SMS_CODE, Simulator};
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::invoke::{Call, Outcome};
use harness_core::policy::Actor;
use harness_core::scheduler::{Notification, Owner, RunOutcome};
use harness_core::secrets::MemorySecrets;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

/// What the plugin says of the course API's authorization, for the model.
const GRADES_CHECK: &str = "查询成绩需要先完成树洞的课程授权（获取授权码）：学生在“成绩查询授权”页面（settings__openScreen 的 grades-verification；终端：harness campus verify grades）用短信验证码或手机令牌完成授权后再试 · Reading grades needs Treehole's course authorization (获取授权码) first: the student completes it with an SMS or authenticator code on the Grades authorization screen (settings__openScreen grades-verification; terminal: harness campus verify grades), then asks again";

struct World {
    sim: Simulator,
    engine: Arc<Engine>,
    _dir: tempfile::TempDir,
}

/// The shipped plugins on a data directory on disk, signed in to the simulator as `account`
/// (its SMS code given when IAAA asks), Treehole's own SMS check done; with `authorized`, the
/// course API's authorization answered too.
async fn world(account: usize, authorized: bool) -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(common::NobodyThere));
    options.secrets = Arc::new(MemorySecrets::default());
    options.campus = Origin::development(&sim.origin()).unwrap();
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
    let student = ACCOUNTS[account];
    let mut step = engine
        .campus()
        .sign_in(student.id, student.password, false)
        .await
        .unwrap();
    if let SignInStep::NeedsCode { .. } = step {
        step = engine.campus().submit_code(SMS_CODE).await.unwrap();
    }
    assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
    engine.campus().treehole_send_code().await.unwrap();
    engine.campus().treehole_verify(SMS_CODE).await.unwrap();
    if authorized {
        engine.campus().grades_send_code().await.unwrap();
        engine.campus().grades_verify(SMS_CODE).await.unwrap();
    }
    World {
        sim,
        engine,
        _dir: dir,
    }
}

async fn agent_reads(w: &World, tool: &str, input: Value) -> Value {
    let call = Call {
        tool: tool.into(),
        actor: Actor::Agent,
        input,
        conversation: Some("c".into()),
    };
    match w.engine.invoke(call).await.outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("{tool} did not run: {other:?}"),
    }
}

/// PKU's grade point (SERVICES.md §9, rules Article 13): 4 − 3(100 − x)²/1600 from 60, else 0.
fn grade_point(x: f64) -> f64 {
    if x < 60.0 {
        0.0
    } else {
        4.0 - 3.0 * (100.0 - x).powi(2) / 1600.0
    }
}

/// The fixture's GPA by §9's rule, from the simulator's fixture itself: numeric scores with
/// credits above 0, neither 毕业论文 nor 综合性考试, every retake counted; to 3 decimals.
fn fixture_gpa() -> f64 {
    let (mut points, mut credits) = (0.0, 0.0);
    for s in SCORES {
        let (Ok(x), Ok(c)) = (s.score.parse::<f64>(), s.credits.parse::<f64>()) else {
            continue;
        };
        if c <= 0.0 || s.course.contains("毕业论文") || s.course.contains("综合性考试") {
            continue;
        }
        points += grade_point(x) * c;
        credits += c;
    }
    (points / credits * 1000.0).round() / 1000.0
}

#[tokio::test]
async fn the_gpa_is_pkus_formula_over_the_fixture_labelled_computed_with_what_it_left_out() {
    // SERVICES.md §9: no school GPA in the answer, so it is computed and labelled so.
    let w = world(0, true).await;
    let gpa = agent_reads(&w, "grades.gpa", json!({})).await;
    assert_eq!(gpa["gpa"].as_f64().unwrap(), fixture_gpa());
    assert_eq!(gpa["gpa"], json!(2.939));
    assert_eq!(gpa["source"], "computed");
    assert_eq!(
        gpa["note"],
        "按北大绩点公式计算，非官方 · computed by PKU's formula, not official"
    );
    assert_eq!(gpa["credits"], json!(16));
    assert_eq!(gpa["courses"], 5);
    assert_eq!(
        gpa["excluded"],
        json!([
            {"term": "24-25-1", "course": "体育（一）", "score": "合格",
             "reason": "非百分制成绩 · not a numeric score"},
            {"term": "24-25-1", "course": "形势与政策", "score": "90",
             "reason": "没有学分 · no credits"},
            {"term": "24-25-2", "course": "大学英语（二）", "score": "W",
             "reason": "非百分制成绩 · not a numeric score"},
            {"term": "25-26-1", "course": "毕业论文", "score": "85",
             "reason": "毕业论文和综合性考试不计入 · the thesis and comprehensive exams are left out"},
            {"term": "25-26-1", "course": "数据结构与算法（A）", "score": "--",
             "reason": "尚未出分 · not graded yet"},
        ])
    );
    // One term: the failed attempt counts with its 0 (every retake counts).
    let term = agent_reads(&w, "grades.gpa", json!({"term": "24-25-1"})).await;
    let expected = (grade_point(95.5) * 5.0 + grade_point(88.0) * 3.0) / 11.0;
    assert_eq!(
        term["gpa"].as_f64().unwrap(),
        (expected * 1000.0).round() / 1000.0
    );
    assert_eq!(term["term"], "24-25-1");
}

#[tokio::test]
async fn the_schools_own_gpa_is_shown_when_the_course_api_gives_one() {
    // SERVICES.md §9: show the school's `gpa` when present.
    let w = world(1, true).await;
    assert_eq!(ACCOUNTS[1].id, SCHOOL_GPA.0);
    let gpa = agent_reads(&w, "grades.gpa", json!({})).await;
    assert_eq!(gpa["gpa"], json!(3.456));
    assert_eq!(gpa["source"], "school");
    assert_eq!(gpa["note"], "学校给出的绩点 · the school's own GPA");
}

#[tokio::test]
async fn scores_are_by_term_newest_first_with_the_ungraded_apart_and_filter_by_term_and_course() {
    let w = world(0, true).await;
    let term = agent_reads(&w, "grades.scores", json!({"term": "24-25-1"})).await;
    let row = |id: &str,
               course: &str,
               credits: i64,
               score: &str,
               state: &str,
               gp: Value,
               grading: &str,
               category: &str| {
        json!({"id": id, "term": "24-25-1", "course": course, "credits": credits, "score": score,
               "state": state, "gradePoint": gp, "category": category, "grading": grading})
    };
    assert_eq!(
        term,
        json!({
            "scores": [
                row("2024100001", "高等数学（B）(一)", 5, "95.5", "graded", json!(3.962), "百分制", "专业必修"),
                row("2024100002", "计算概论（B）", 3, "88", "graded", json!(3.73), "百分制", "专业必修"),
                row("2024100003", "线性代数（B）", 3, "58", "graded", json!(0), "百分制", "专业必修"),
                row("2024100004", "体育（一）", 1, "合格", "passed", Value::Null, "合格制", "全校必修"),
                row("2024100005", "形势与政策", 0, "90", "graded", json!(3.813), "百分制", "全校必修"),
            ],
            "pending": [],
            "terms": ["25-26-1", "24-25-2", "24-25-1"],
        })
    );
    let all = agent_reads(&w, "grades.scores", json!({})).await;
    let terms: Vec<&str> = all["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["term"].as_str().unwrap())
        .collect();
    assert_eq!(
        terms,
        [
            "25-26-1", "25-26-1", "24-25-2", "24-25-2", "24-25-1", "24-25-1", "24-25-1", "24-25-1",
            "24-25-1"
        ]
    );
    assert_eq!(
        all["pending"],
        json!([{"term": "25-26-1", "course": "数据结构与算法（A）", "credits": 3}])
    );
    // Both attempts at the retaken course.
    let retaken = agent_reads(&w, "grades.scores", json!({"course": "线性代数"})).await;
    let scores: Vec<&str> = retaken["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["score"].as_str().unwrap())
        .collect();
    assert_eq!(scores, ["82", "58"]);
}

#[tokio::test]
async fn the_course_apis_authorization_is_a_status_until_an_sms_or_authenticator_code_answers_it() {
    // SERVICES.md §9: 40077 "获取授权码" is the course API's own check; seed 004's
    // verification_required status, never an error.
    let w = world(0, false).await;
    let check = json!({"status": "verification_required", "check": "grades",
                       "methods": ["sms", "otp"], "message": GRADES_CHECK});
    assert_eq!(agent_reads(&w, "grades.gpa", json!({})).await, check);
    assert_eq!(agent_reads(&w, "grades.scores", json!({})).await, check);

    // A wrong authenticator code is Treehole's words; the right one authorizes.
    let wrong = w
        .engine
        .campus()
        .grades_verify_otp("000000")
        .await
        .unwrap_err();
    assert_eq!(wrong.to_string(), "Treehole: 令牌验证码错误");
    // An SMS code before any SMS was sent is not taken.
    let unsent = w.engine.campus().grades_verify(SMS_CODE).await.unwrap_err();
    assert_eq!(unsent.to_string(), "Treehole: 授权码错误");
    w.engine.campus().grades_verify_otp(OTP_CODE).await.unwrap();
    let gpa = agent_reads(&w, "grades.gpa", json!({})).await;
    assert_eq!(gpa["gpa"].as_f64().unwrap(), fixture_gpa());
}

#[tokio::test]
async fn a_check_on_new_scores_tells_once_when_a_grade_is_published() {
    // Issue: "成绩出来时告诉我" is a check on grades.scores with the condition "new".
    let w = world(0, true).await;
    let spec = json!({
        "name": "成绩提醒",
        "schedule": {"everyMinutes": 60},
        "check": {
            "tool": "grades.scores",
            "when": {"path": "scores[*].id", "op": "exists", "new": true},
            "notify": {"title": "成绩出来了", "body": "有新的成绩"}
        }
    });
    let job = w.engine.add_job(&spec, Owner::User).unwrap();
    let due = job.next_due_ms.unwrap();
    let told = RunOutcome::Notified {
        notification: Notification {
            title: "成绩出来了".into(),
            body: "有新的成绩".into(),
        },
    };
    // The first run sees every score as new; the next, with nothing published, is quiet.
    assert_eq!(w.engine.run_due(due).await.unwrap()[0].outcome, told);
    let hour = 60 * 60_000;
    assert_eq!(
        w.engine.run_due(due + hour).await.unwrap()[0].outcome,
        RunOutcome::Quiet
    );
    w.sim.publish_score("2025200010", "91");
    assert_eq!(
        w.engine.run_due(due + 2 * hour).await.unwrap()[0].outcome,
        told
    );
    assert_eq!(
        w.engine.run_due(due + 3 * hour).await.unwrap()[0].outcome,
        RunOutcome::Quiet
    );
    assert_eq!(DEMO.id, ACCOUNTS[0].id);
}
