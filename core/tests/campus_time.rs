//! Campus time (`campus_time`, the built-in `time.resolve`, `ctx.services.time`): PKU's times
//! said in words — 明天第3-4节, 第12周星期二, 单双周 — as exact Beijing times, from the period
//! table and the semester's first Monday (`campus.semesterStart`), on the core's clock.

mod common;

use chrono::{Datelike, Days, NaiveDate, NaiveTime};
use common::{NobodyThere, engine_at, local};
use harness_core::campus_time::{
    self, DEFAULT_SEMESTER_START, PERIODS, parse_semester_start, resolve, week_monday,
};
use harness_core::invoke::{Call, Outcome};
use harness_core::plugins::script::{self, Limits};
use harness_core::policy::Actor;
use harness_core::settings::parse_change;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::Arc;

const WEEKDAYS: [&str; 7] = ["一", "二", "三", "四", "五", "六", "日"];

/// A semester's first Monday: any Monday from 2000 to 2099.
fn monday() -> impl Strategy<Value = NaiveDate> {
    (0u64..5200)
        .prop_map(|weeks| NaiveDate::from_ymd_opt(2000, 1, 3).unwrap() + Days::new(7 * weeks))
}

proptest! {
    // Every class period of every day of a semester maps inside that day, at the table's times.
    #[test]
    fn every_period_of_a_semester_maps_inside_its_day(
        start in monday(),
        week in 1u32..=20,
        day in 1u32..=7,
        from in 1u8..=12,
        span in 0u8..3,
    ) {
        let to = (from + span).min(12);
        let text = format!("第{week}周星期{}第{from}-{to}节", WEEKDAYS[day as usize - 1]);
        let now = local("Asia/Shanghai", "2026-12-04 09:30");
        let r = resolve(&text, now, start).unwrap();
        let date = week_monday(start, week).unwrap() + Days::new(u64::from(day - 1));
        prop_assert_eq!(&r.date, &date.format("%Y-%m-%d").to_string());
        prop_assert_eq!(&r.start, &format!("{} {}", r.date, PERIODS[from as usize - 1].0));
        prop_assert_eq!(&r.end, &format!("{} {}", r.date, PERIODS[to as usize - 1].1));
        prop_assert!(r.start_ms < r.end_ms);
        prop_assert_eq!(r.end_ms - r.start_ms < 24 * 3600 * 1000, true);
        prop_assert_eq!((r.week, r.weekday), (Some(week), day));
        prop_assert_eq!(r.periods, (from..=to).collect::<Vec<u8>>());
    }

    // Week N's Monday is the semester's first Monday + 7(N − 1), in words and in digits.
    #[test]
    fn week_n_starts_seven_days_per_week_after_the_first_monday(
        start in monday(),
        week in 1u32..=30,
        chinese in any::<bool>(),
    ) {
        let number = if chinese { chinese_number(week) } else { week.to_string() };
        let r = resolve(&format!("第{number}周周一"), 0, start).unwrap();
        let expected = start + Days::new(7 * u64::from(week - 1));
        prop_assert_eq!(r.date, expected.format("%Y-%m-%d").to_string());
        prop_assert_eq!(r.week, Some(week));
        prop_assert_eq!(r.weekday, 1);
    }

    // 明天 is the next Beijing day whatever the hour, and 下周X is in the next ISO week.
    #[test]
    fn tomorrow_and_next_week_follow_the_beijing_day(
        minutes in 0i64..(200 * 24 * 60),
        day in 1u32..=7,
    ) {
        let now = local("Asia/Shanghai", "2026-09-01 00:00") + minutes * 60_000;
        let today = campus_time::local(now).date();
        let start = parse_semester_start(DEFAULT_SEMESTER_START).unwrap();
        let tomorrow = resolve("明天", now, start).unwrap();
        prop_assert_eq!(tomorrow.date, today.succ_opt().unwrap().format("%Y-%m-%d").to_string());
        let next = resolve(&format!("下周{}", WEEKDAYS[day as usize - 1]), now, start).unwrap();
        let date = NaiveDate::parse_from_str(&next.date, "%Y-%m-%d").unwrap();
        prop_assert_eq!(date.iso_week().week0(), (today + Days::new(7)).iso_week().week0());
        prop_assert_eq!(date.weekday().number_from_monday(), day);
    }
}

fn chinese_number(n: u32) -> String {
    let digit = |d: u32| "零一二三四五六七八九".chars().nth(d as usize).unwrap();
    match n {
        0..=9 => digit(n).to_string(),
        10 => "十".into(),
        11..=19 => format!("十{}", digit(n - 10)),
        _ if n.is_multiple_of(10) => format!("{}十", digit(n / 10)),
        _ => format!("{}十{}", digit(n / 10), digit(n % 10)),
    }
}

#[test]
fn the_period_table_is_pkus_twelve_periods_in_order() {
    assert_eq!(PERIODS.len(), 12);
    assert_eq!(PERIODS[0], ("08:00", "08:50"));
    assert_eq!(PERIODS[11], ("20:40", "21:30"));
    let times: Vec<NaiveTime> = PERIODS
        .iter()
        .flat_map(|(a, b)| [*a, *b])
        .map(|t| NaiveTime::parse_from_str(t, "%H:%M").unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]));
}

async fn tap(engine: &harness_core::Engine, tool: &str, input: Value) -> Outcome {
    engine
        .invoke(Call {
            tool: tool.into(),
            actor: Actor::User,
            input,
            conversation: None,
        })
        .await
        .outcome
}

fn ran(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("expected the call to run, got {other:?}"),
    }
}

#[tokio::test]
async fn time_resolve_reads_the_core_clock_and_the_semester_setting() {
    // Friday 2026-12-04 at 23:30 in Beijing is still Friday 15:30 UTC: 明天 is Beijing's.
    let (engine, clock, _) = engine_at(
        local("Asia/Shanghai", "2026-12-04 23:30"),
        Arc::new(NobodyThere),
    );
    let answer = ran(tap(&engine, "time.resolve", json!({"text": "明天第3-4节"})).await);
    assert_eq!(
        answer,
        json!({
            "start": "2026-12-05 10:10", "end": "2026-12-05 12:00",
            "startMs": local("Asia/Shanghai", "2026-12-05 10:10"),
            "endMs": local("Asia/Shanghai", "2026-12-05 12:00"),
            "date": "2026-12-05", "weekday": 6, "week": 13, "periods": [3, 4],
            "allDay": false, "timeZone": "Asia/Shanghai"
        })
    );
    clock.set(local("Asia/Shanghai", "2026-12-05 00:10"));
    let answer = ran(tap(&engine, "time.resolve", json!({"text": "明天8点"})).await);
    assert_eq!(answer["start"], "2026-12-06 08:00");

    // A spring semester set by the student moves 第N周 with it.
    engine
        .change_setting(parse_change("campus.semesterStart", &json!("2027-02-22")).unwrap())
        .unwrap();
    let answer = ran(tap(&engine, "time.resolve", json!({"text": "第2周星期三第1节"})).await);
    assert_eq!(
        (&answer["start"], &answer["week"]),
        (&json!("2027-03-03 08:00"), &json!(2))
    );
}

#[test]
fn a_semester_start_that_is_no_monday_is_refused_naming_the_setting() {
    let err = parse_change("campus.semesterStart", &json!("2027-02-23")).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("campus.semesterStart"), "{text}");
    assert!(text.contains("Monday"), "{text}");
}

#[tokio::test]
async fn words_it_cannot_read_fail_the_call_naming_them() {
    let (engine, _, _) = engine_at(
        local("Asia/Shanghai", "2026-12-04 09:30"),
        Arc::new(NobodyThere),
    );
    match tap(&engine, "time.resolve", json!({"text": "明天去图书馆"})).await {
        Outcome::Failed { message } => {
            assert!(message.contains("\"去图书馆\""), "{message}");
            assert!(message.contains("明天下午3点"), "{message}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// A plugin that answers with `ctx.services.time.resolve` of its input.
const TIMETABLE: &str = r#""use strict";var __pkuBundle=(()=>{
const {defineTool,definePlugin}=globalThis.__pkuModules["@pku-harness/sdk"];
const {z}=globalThis.__pkuModules.zod;
const when=defineTool({title:"上课时间",description:"When a class said in words takes place.",
  input:z.object({text:z.string()}),effect:"read",
  execute:async({text},ctx)=>ctx.services.time.resolve(text)});
return {default:definePlugin({id:"timetable",title:"课表",description:"Class times.",
  i18n:{en:{title:"Timetable",tools:{when:{title:"Class time"}}}},tools:{when}})};})();"#;

#[tokio::test]
async fn a_typescript_plugin_resolves_campus_time_through_its_services() {
    let (engine, _, _) = engine_at(
        local("Asia/Shanghai", "2026-12-04 09:30"),
        Arc::new(NobodyThere),
    );
    let (plugin, handler) = script::load(TIMETABLE, Limits::default()).unwrap();
    engine.install(plugin, "bundled", handler).unwrap();
    let answer = ran(tap(&engine, "timetable.when", json!({"text": "下周三第5-6节"})).await);
    assert_eq!(
        (&answer["start"], &answer["end"], &answer["week"]),
        (
            &json!("2026-12-09 13:00"),
            &json!("2026-12-09 14:50"),
            &json!(14)
        )
    );
    match tap(&engine, "timetable.when", json!({"text": "第13节"})).await {
        Outcome::Failed { message } => assert!(message.contains("第1节 to 第12节"), "{message}"),
        other => panic!("expected a failure, got {other:?}"),
    }
}
