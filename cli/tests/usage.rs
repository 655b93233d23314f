//! `harness usage`: this month's model spend, the cap and the price it is counted at.

use std::path::Path;
use std::process::Command;

fn harness(data: &Path, args: &[&str]) -> (String, String, bool) {
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.success(),
    )
}

#[test]
fn usage_says_the_months_spend_the_cap_and_the_price_with_its_source() {
    // DESIGN.md §13: usage per month in 元, a cap, prices dated with their source.
    let data = tempfile::tempdir().unwrap();
    for (key, value) in [
        ("model.endpoint", "https://api.deepseek.com/v1"),
        ("model.monthlyCapYuan", "5"),
    ] {
        let (_, err, ok) = harness(data.path(), &["settings", "set", key, value]);
        assert!(ok, "{err}");
    }
    let (out, err, ok) = harness(data.path(), &["usage"]);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "This month: 0 turns, 0 prompt tokens (0 cached), 0 answer tokens, 0.00 元\n\
         Cap: 5 元 a month (model.monthlyCapYuan)\n\
         Price of deepseek: 2 / 0.2 cached / 3 answer 元 per million tokens (read 2025-10 from https://api-docs.deepseek.com/zh-cn/quick_start/pricing)\n"
    );
}
