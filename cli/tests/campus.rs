//! `harness campus` against the campus simulator on 127.0.0.1, through the development origin:
//! sign in, the card's balance, status, sign out — and the password and sessions nowhere in the
//! data directory. One test: the desktop keyring the CLI keeps secrets in is the user's.

mod common;

use std::process::Output;

use harness_campus_sim::{DEMO, Simulator};

/// The card's balance, as SERVICES.md §2 names it.
const CARD_BALANCE: &str = "/berserker-app/ykt/tsm/queryCard?synAccessSource=h5";

fn campus(origin: &str, data: &str, args: &[&str], stdin: &str) -> Output {
    let args: Vec<&str> = ["campus", "--data-dir", data]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    common::run_with_input(&args, &[("HARNESS_CAMPUS_ORIGIN", origin)], stdin)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file's bytes under `dir`, as text.
fn everything_in(dir: &std::path::Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            all.push_str(&everything_in(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            all.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn a_student_signs_in_reads_the_card_and_signs_out_and_no_secret_is_in_the_data_directory() {
    let sim = Simulator::start(0).await.unwrap();
    let origin = sim.origin();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap().to_owned();
    let run = move |args: Vec<&'static str>, stdin: &'static str| {
        let (origin, data) = (origin.clone(), data.clone());
        tokio::task::spawn_blocking(move || campus(&origin, &data, &args, stdin))
    };
    let signed = run(vec!["sign-in", "--user", DEMO.id], "pku-demo-password\n")
        .await
        .unwrap();
    assert_eq!(
        (text(&signed.stdout).as_str(), signed.status.code()),
        (
            "signed in as 2100012345: portal, card, treehole, bus, course\n",
            Some(0)
        ),
        "{}",
        text(&signed.stderr)
    );
    let card = run(vec!["request", "card", CARD_BALANCE], "")
        .await
        .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&card.stdout).unwrap();
    assert_eq!(
        (
            answer["status"].as_u64(),
            answer["body"]["data"]["card"][0]["elec_accamt"].as_i64()
        ),
        (Some(200), Some(DEMO.balance_fen))
    );
    // The portal's notices take a form.
    let notices = run(
        vec![
            "request",
            "portal",
            "/portal2017/notice/retrAllSchoolNotice.do",
            "--method",
            "POST",
            "--form",
            "keyword=ALL",
            "--form",
            "limit=1",
        ],
        "",
    )
    .await
    .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&notices.stdout).unwrap();
    assert_eq!(
        answer["body"]["rows"],
        serde_json::json!([{"Number": 90_412, "Title": "关于2027年寒假放假安排的通知",
            "Time": "2026-11-30 09:12", "Department": "学校办公室"}])
    );
    let status = run(vec!["status"], "").await.unwrap();
    assert_eq!(
        text(&status.stdout),
        "signed in as 2100012345\n  portal: signed in\n  card: until 2100-01-01 00:00 UTC\n  treehole: until 2100-01-01 00:00 UTC\n  bus: signed in\n  course: signed in\n"
    );
    // The password and the sessions live in the keyring only.
    let kept = everything_in(dir.path());
    let sessions: Vec<String> = sim
        .seen()
        .iter()
        .flat_map(|r| r.headers.clone())
        .filter(|(n, _)| n == "synjones-auth" || n == "authorization" || n == "cookie")
        .map(|(_, v)| v.rsplit([' ', '=']).next().unwrap_or("").to_owned())
        .filter(|v| v.len() > 8)
        .collect();
    assert!(!sessions.is_empty());
    assert!(!kept.contains(DEMO.password));
    for session in &sessions {
        assert!(
            !kept.contains(session.as_str()),
            "{session} is in the data directory"
        );
    }
    let out = run(vec!["sign-out"], "").await.unwrap();
    assert_eq!(text(&out.stdout), "signed out of the campus account\n");
    let after = run(vec!["request", "card", CARD_BALANCE], "")
        .await
        .unwrap();
    assert_eq!(
        text(&after.stdout),
        "{\n  \"service\": \"card\",\n  \"status\": \"signin_required\"\n}\n"
    );

    // SERVICES.md §6.1: IAAA's captcha written to a file and asked on the terminal; characters
    // it does not take are said, with a new picture.
    let captcha = run(
        vec!["sign-in", "--user", "2100045678"],
        "pku-captcha-password\nzzzz\np4k7\n",
    )
    .await
    .unwrap();
    let asked = text(&captcha.stderr);
    let picture = dir.path().join("captcha.jpg");
    assert_eq!(
        (text(&captcha.stdout).as_str(), captcha.status.code()),
        (
            "signed in as 2100045678: portal, card, treehole, bus, course\n",
            Some(0)
        ),
        "{asked}"
    );
    let prompt = format!(
        "IAAA asks for its captcha: open {} and type its characters: ",
        picture.display()
    );
    assert_eq!(asked.matches(&prompt).count(), 2, "{asked}");
    assert!(asked.contains("the captcha's characters were not right; here is a new picture"));
    assert!(!picture.exists());
    let out = run(vec!["sign-out"], "").await.unwrap();
    assert_eq!(text(&out.stdout), "signed out of the campus account\n");
}
