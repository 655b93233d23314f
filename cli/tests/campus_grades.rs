//! The shipped 成绩 plugin (`grades`) from the command line against the campus simulator on
//! 127.0.0.1 (SERVICES.md §9): after `harness campus sign-in`, Treehole's SMS check and the
//! course API's authorization are answered with `harness campus verify`, and `harness call
//! grades.gpa '{}'` prints the GPA PKU's formula gives for the fixture.

mod common;

use std::process::Output;

use harness_campus_sim::{DEMO, SCORES, SMS_CODE, Simulator};
use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The fixture's GPA by SERVICES.md §9's rule, computed here from the simulator's fixture:
/// grade point 4 − 3(100 − x)²/1600 from 60 (0 below), credit-weighted over numeric scores with
/// credits, neither 毕业论文 nor 综合性考试, every retake counted; to 3 decimals.
fn fixture_gpa() -> f64 {
    let (mut points, mut credits) = (0.0, 0.0);
    for s in SCORES {
        let (Ok(x), Ok(c)) = (s.score.parse::<f64>(), s.credits.parse::<f64>()) else {
            continue;
        };
        if c <= 0.0 || s.course.contains("毕业论文") || s.course.contains("综合性考试") {
            continue;
        }
        let point = if x < 60.0 {
            0.0
        } else {
            4.0 - 3.0 * (100.0 - x).powi(2) / 1600.0
        };
        points += point * c;
        credits += c;
    }
    (points / credits * 1000.0).round() / 1000.0
}

#[tokio::test(flavor = "multi_thread")]
async fn grades_gpa_prints_pkus_formula_for_the_fixture_once_both_checks_are_answered() {
    let sim = Simulator::start(0).await.unwrap();
    let origin = sim.origin();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap().to_owned();
    let run = common::campus_runner(origin, data);
    let ok = |out: &Output| {
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let call = |out: &Output| -> Value {
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };

    ok(&run(vec!["consent", "accept-terms"], "").await.unwrap());
    ok(&run(
        vec!["campus", "sign-in", "--user", DEMO.id],
        "pku-demo-password\n",
    )
    .await
    .unwrap());

    // Treehole's own check first, then the course API's authorization (40077).
    let first = call(&run(vec!["call", "grades.gpa", "{}"], "").await.unwrap());
    assert_eq!(first["status"], "verification_required");
    assert_eq!(first.get("check"), Some(&json!("treehole")));
    assert_eq!(
        ok(&run(vec!["campus", "verify", "treehole", "--send"], "")
            .await
            .unwrap()),
        "the SMS code was sent: answer with `harness campus verify treehole --code C`\n"
    );
    assert_eq!(
        ok(
            &run(vec!["campus", "verify", "treehole", "--code", SMS_CODE], "")
                .await
                .unwrap()
        ),
        "Treehole's check is done\n"
    );
    let second = call(&run(vec!["call", "grades.gpa", "{}"], "").await.unwrap());
    assert_eq!(second["status"], "verification_required");
    assert_eq!(second["check"], "grades");
    let wrong = run(vec!["campus", "verify", "grades", "--code", "000000"], "")
        .await
        .unwrap();
    assert!(!wrong.status.success());
    assert_eq!(text(&wrong.stderr), "harness: Treehole: 授权码错误\n");
    ok(&run(vec!["campus", "verify", "grades", "--send"], "")
        .await
        .unwrap());
    assert_eq!(
        ok(
            &run(vec!["campus", "verify", "grades", "--code", SMS_CODE], "")
                .await
                .unwrap()
        ),
        "the course API's authorization is done: grades can be read\n"
    );

    let gpa = call(&run(vec!["call", "grades.gpa", "{}"], "").await.unwrap());
    assert_eq!(gpa["gpa"].as_f64().unwrap(), fixture_gpa());
    assert_eq!(gpa["source"], "computed");
    let scores = call(
        &run(vec!["call", "grades.scores", r#"{"term":"24-25-2"}"#], "")
            .await
            .unwrap(),
    );
    let courses: Vec<&str> = scores["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["course"].as_str().unwrap())
        .collect();
    assert_eq!(courses, ["线性代数（B）", "大学英语（二）"]);

    let unknown = run(vec!["campus", "verify", "card", "--send"], "")
        .await
        .unwrap();
    assert_eq!(
        text(&unknown.stderr),
        "harness: card is not a check: give treehole (its SMS check) or grades (the course API's authorization)\n"
    );
}
