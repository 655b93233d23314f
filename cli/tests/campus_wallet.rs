//! The shipped 校园卡 plugin (`wallet`) from the command line against the campus simulator on
//! 127.0.0.1: after `harness campus sign-in`, `harness call wallet.cardBalance` prints the
//! balance in yuan, and seed 004's reminder ("余额不足" below 50 yuan) fires through
//! `harness tick`.

mod common;

use std::process::Output;

use harness_campus_sim::{DEMO, Simulator};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_balance_reminder_fires_through_tick_against_the_campus() {
    let sim = Simulator::start(0).await.unwrap();
    let origin = sim.origin();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap().to_owned();
    let run = common::campus_runner(origin, data);
    let ok = |out: &Output| assert!(out.status.success(), "{}", text(&out.stderr));

    ok(&run(vec!["consent", "accept-terms"], "").await.unwrap());
    let signed = run(
        vec!["campus", "sign-in", "--user", DEMO.id],
        "pku-demo-password\n",
    )
    .await
    .unwrap();
    ok(&signed);

    let called = run(vec!["call", "wallet.cardBalance", "{}"], "")
        .await
        .unwrap();
    ok(&called);
    let balance: serde_json::Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(balance["balanceYuan"], 42.5, "{}", text(&called.stdout));

    let added = run(
        vec![
            "jobs",
            "add",
            "--name",
            "校园卡余额提醒",
            "--every",
            "60",
            "--tool",
            "wallet.cardBalance",
            "--when",
            r#"{"path":"balanceYuan","op":"lt","value":50}"#,
            "--title",
            "余额不足",
            "--body",
            "校园卡还剩 {balanceYuan} 元",
        ],
        "",
    )
    .await
    .unwrap();
    ok(&added);
    let ticked = run(vec!["tick", "--now", "2099-01-01 08:00"], "")
        .await
        .unwrap();
    ok(&ticked);
    let out = text(&ticked.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "1 job(s) ran at 2099-01-01 08:00 (Asia/Shanghai)");
    assert!(
        lines[1].starts_with("  job 1 校园卡余额提醒 (due ")
            && lines[1].ends_with("): notified: 余额不足 — 校园卡还剩 42.5 元"),
        "{out}"
    );
    assert_eq!(lines.len(), 2, "{out}");
    // The check read the card itself.
    assert!(
        sim.seen()
            .iter()
            .filter(|r| r.target.starts_with("/berserker-app/ykt/tsm/queryCard"))
            .count()
            >= 2
    );
    ok(&run(vec!["campus", "sign-out"], "").await.unwrap());
}
