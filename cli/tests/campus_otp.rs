//! The authenticator (手机令牌) from the command line against the campus simulator on 127.0.0.1:
//! a student whose IAAA sign-in asks for it gives its code with `--otp`, and Treehole's own check
//! (SERVICES.md §3, `/chapi/api/check_otp`) is answered with `harness campus verify treehole
//! --code C --otp`; a wrong code is refused in the service's words and verifies nothing.

mod common;

use std::process::Output;

use harness_campus_sim::{ACCOUNTS, OTP_CODE, Simulator};
use serde_json::Value;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_authenticator_student_signs_in_and_answers_treeholes_check_with_the_authenticator() {
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
    let student = ACCOUNTS[2];
    assert_eq!(student.password, "pku-otp-password");

    ok(&run(vec!["consent", "accept-terms"], "").await.unwrap());
    ok(&run(
        vec![
            "campus",
            "sign-in",
            "--user",
            "2100034567",
            "--otp",
            OTP_CODE,
        ],
        "pku-otp-password\n",
    )
    .await
    .unwrap());
    let status = ok(&run(vec!["campus", "status"], "").await.unwrap());
    assert!(status.contains("2100034567"), "{status}");

    // Treehole asks its own check before its first read.
    let first = call(&run(vec!["call", "treehole.feed", "{}"], "").await.unwrap());
    assert_eq!(first["status"], "verification_required", "{first}");
    assert_eq!(first["methods"], serde_json::json!(["sms", "otp"]));

    let wrong = run(
        vec!["campus", "verify", "treehole", "--code", "000000", "--otp"],
        "",
    )
    .await
    .unwrap();
    assert!(!wrong.status.success());
    assert_eq!(text(&wrong.stderr), "harness: Treehole: 令牌验证码错误\n");
    let still = call(&run(vec!["call", "treehole.feed", "{}"], "").await.unwrap());
    assert_eq!(still["status"], "verification_required");

    assert_eq!(
        ok(&run(
            vec!["campus", "verify", "treehole", "--code", OTP_CODE, "--otp"],
            ""
        )
        .await
        .unwrap()),
        "Treehole's check is done\n"
    );
    let feed = call(&run(vec!["call", "treehole.feed", "{}"], "").await.unwrap());
    assert!(feed.get("status").is_none(), "{feed}");
    assert!(!feed["posts"].as_array().unwrap().is_empty(), "{feed}");
}
