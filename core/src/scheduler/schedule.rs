//! When a job is due (DESIGN.md §6, §7): a one-shot local time, every N minutes, or a cron
//! expression, each in an IANA time zone.
//!
//! The DST rules, all pinned by tests (core/tests/scheduler_time.rs):
//! - A local time in a gap (spring forward) fires at the first valid instant after the gap:
//!   Europe/London 2026-03-29 01:30 fires at 02:00 BST (01:00 UTC). DESIGN.md §6: "DST gaps skip
//!   forward".
//! - A local time in an overlap (fall back) fires once, at its first occurrence: America/New_York
//!   2026-11-01 01:30 fires at 01:30 EDT (05:30 UTC), never again at 01:30 EST. DESIGN.md §6:
//!   "overlaps take the first occurrence".
//! - An interval counts absolute minutes from its first due instant; a DST change does not move
//!   it, so a 60-minute job stays 3,600,000 ms apart through every change.
//! - A cron expression follows croner's OCPS rules (a fixed time in a gap fires at the first
//!   valid instant after it; a fixed time in an overlap fires at the first occurrence), and on
//!   top of them the core never fires a cron job twice for one local time: each fire's local
//!   wall time is later than the one before, so `*/30 * * * *` pauses for the repeated hour of
//!   a fall-back night instead of running it twice.

use std::fmt;

use crate::zone::Zone as Tz;
use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, TimeZone, Timelike, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JobError;

/// How local times are written everywhere in the app (seed 004: "local time YYYY-MM-DD HH:mm").
pub const LOCAL_TIME_FORMAT: &str = "YYYY-MM-DD HH:mm";

const MINUTE_MS: i64 = 60_000;

/// How far ahead a cron expression must fire to be accepted: one that has no time in five
/// years (`0 0 31 2 *`) never fires. A leap day fires within every five years.
const CRON_HORIZON_MS: i64 = 5 * 366 * 24 * 60 * MINUTE_MS;
const CRON_HORIZON_YEARS: u32 = 5;

/// The instants a cron schedule computes with: years 0000 to 9999 UTC, the years a local time
/// "YYYY-MM-DD HH:mm" can name. Beyond them a time-zone offset can carry a local time past
/// what chrono holds, so an instant outside has no next run rather than an overflow.
const SCHEDULABLE_MS: std::ops::RangeInclusive<i64> = -62_167_219_200_000..=253_402_300_799_999;

/// The longest gap searched for its end. Real gaps are an hour or two; Samoa skipped a whole
/// day in 2011, so two days bound every gap on record.
const GAP_SEARCH_MINUTES: i64 = 2 * 24 * 60;

/// How many cron occurrences are skipped looking for a later local time before giving up; a
/// repeated hour of `* * * * *` skips 60.
const CRON_SKIP_LIMIT: usize = 4 * 60;

/// A schedule as written in a job spec: `{"at": "YYYY-MM-DD HH:mm"}`, `{"everyMinutes": N}` or
/// `{"cron": "m h dom mon dow"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ScheduleSpec {
    At(String),
    EveryMinutes(u32),
    Cron(String),
}

impl fmt::Display for ScheduleSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleSpec::At(at) => write!(f, "once at {at}"),
            ScheduleSpec::EveryMinutes(n) => write!(f, "every {n} min"),
            ScheduleSpec::Cron(expr) => write!(f, "cron \"{expr}\""),
        }
    }
}

/// A checked schedule, ready to compute due instants.
#[derive(Clone, Debug)]
pub enum Timing {
    At(NaiveDateTime),
    Every { minutes: u32 },
    Cron(Box<Cron>),
}

/// The longest interval: a year. Longer ones are better written as a one-shot or cron.
pub const MAX_INTERVAL_MINUTES: u32 = 366 * 24 * 60;

impl Timing {
    /// Checks a schedule; errors name the field (`schedule.at`, `schedule.cron`…).
    pub fn parse(spec: &ScheduleSpec) -> Result<Timing, JobError> {
        match spec {
            ScheduleSpec::At(text) => parse_local("schedule.at", text).map(Timing::At),
            ScheduleSpec::EveryMinutes(0) => {
                Err(JobError::new("schedule.everyMinutes", "must be at least 1"))
            }
            ScheduleSpec::EveryMinutes(n) if *n > MAX_INTERVAL_MINUTES => Err(JobError::new(
                "schedule.everyMinutes",
                format!(
                    "{n} is longer than a year ({MAX_INTERVAL_MINUTES} minutes); use a cron expression or a one-shot time"
                ),
            )),
            ScheduleSpec::EveryMinutes(n) => Ok(Timing::Every { minutes: *n }),
            ScheduleSpec::Cron(text) => parse_cron(text).map(|c| Timing::Cron(Box::new(c))),
        }
    }

    /// The first due instant of a job created at `created_ms`. A one-shot time already past is
    /// an error: it would never fire.
    pub fn first_due(&self, tz: Tz, created_ms: i64) -> Result<Option<i64>, JobError> {
        match self {
            Timing::At(local) => {
                let at = resolve_local(tz, *local).timestamp_millis();
                if at <= created_ms {
                    let now = format_local(tz, created_ms);
                    return Err(JobError::new(
                        "schedule.at",
                        format!(
                            "\"{}\" is not in the future (it is now {now} in {tz})",
                            local.format("%Y-%m-%d %H:%M")
                        ),
                    ));
                }
                Ok(Some(at))
            }
            Timing::Every { minutes } => interval_ms(*minutes)
                .and_then(|step| created_ms.checked_add(step))
                .map(Some)
                .ok_or_else(|| {
                    JobError::new(
                        "schedule.everyMinutes",
                        format!(
                            "{minutes} minutes from now is past the last time the app can count; use a shorter interval"
                        ),
                    )
                }),
            Timing::Cron(cron) => {
                let horizon = created_ms.saturating_add(CRON_HORIZON_MS);
                match cron_after(cron, tz, created_ms, None) {
                    Some(first) if first <= horizon => Ok(Some(first)),
                    _ => Err(JobError::new(
                        "schedule.cron",
                        format!(
                            "\"{}\" never fires: it has no time in the next {CRON_HORIZON_YEARS} years",
                            cron.as_str()
                        ),
                    )),
                }
            }
        }
    }

    /// The next due instant after a run for `due_ms` that happened at `now_ms`: the first one
    /// later than both, so that runs missed while the phone slept coalesce into the one that
    /// just ran. `anchor_ms` is the interval's first due instant. `None`: nothing more is due.
    pub fn next_due(&self, tz: Tz, anchor_ms: i64, due_ms: i64, now_ms: i64) -> Option<i64> {
        let after = due_ms.max(now_ms);
        match self {
            Timing::At(_) => None,
            Timing::Every { minutes } => {
                // Every step is checked: `now` comes from the shell, and an instant past what
                // can be counted means no next run, never a wrapped time.
                let step = interval_ms(*minutes)?;
                if after < anchor_ms {
                    return Some(anchor_ms);
                }
                let steps = after.checked_sub(anchor_ms)? / step + 1;
                anchor_ms.checked_add(steps.checked_mul(step)?)
            }
            Timing::Cron(cron) => cron_after(cron, tz, after, Some(due_ms)),
        }
    }
}

/// An interval in milliseconds; `None` when it cannot be counted.
fn interval_ms(minutes: u32) -> Option<i64> {
    i64::from(minutes).checked_mul(MINUTE_MS)
}

/// Parses an IANA time zone name.
pub fn parse_tz(field: &str, name: &str) -> Result<Tz, JobError> {
    name.parse::<Tz>().map_err(|_| {
        JobError::new(
            field,
            format!("\"{name}\" is not an IANA time zone name (for example Asia/Shanghai)"),
        )
    })
}

/// Parses a local time written exactly `YYYY-MM-DD HH:mm`.
pub fn parse_local(field: &str, text: &str) -> Result<NaiveDateTime, JobError> {
    let fail = || {
        JobError::new(
            field,
            format!("\"{text}\" is not a local time \"{LOCAL_TIME_FORMAT}\""),
        )
    };
    let b = text.as_bytes();
    let shape = b.len() == 16
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 => *c == b':',
            _ => c.is_ascii_digit(),
        });
    if !shape {
        return Err(fail());
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").map_err(|_| fail())
}

/// Writes an instant as local time in `tz`.
pub fn format_local(tz: Tz, at_ms: i64) -> String {
    match DateTime::<Utc>::from_timestamp_millis(at_ms) {
        Some(t) => t.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string(),
        None => format!("{at_ms} ms"),
    }
}

/// The instant of a local time in `tz`: the first occurrence of an ambiguous one, and for one
/// in a gap the first valid instant after the gap (DESIGN.md §6).
pub fn resolve_local(tz: Tz, local: NaiveDateTime) -> DateTime<Tz> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) => t,
        LocalResult::Ambiguous(first, _) => first,
        LocalResult::None => {
            // The gap's end is the transition instant, which every zone places on a whole
            // minute: the first local minute after `local` that exists is that instant.
            let start = local
                .with_second(0)
                .and_then(|t| t.with_nanosecond(0))
                .unwrap_or(local);
            (1..=GAP_SEARCH_MINUTES)
                .map_while(|m| start.checked_add_signed(Duration::minutes(m)))
                .find_map(|t| match tz.from_local_datetime(&t) {
                    LocalResult::Single(t) => Some(t),
                    LocalResult::Ambiguous(first, _) => Some(first),
                    LocalResult::None => None,
                })
                // No zone has a gap this long; fall back to reading the time as UTC.
                .unwrap_or_else(|| tz.from_utc_datetime(&local))
        }
    }
}

fn parse_cron(text: &str) -> Result<Cron, JobError> {
    let fields = text.split_whitespace().count();
    if fields != 5 && !text.trim_start().starts_with('@') {
        return Err(JobError::new(
            "schedule.cron",
            format!(
                "\"{text}\" has {fields} fields; a cron expression has five: minute hour day-of-month month day-of-week"
            ),
        ));
    }
    // Minute granularity, like every other time in the app: no seconds or years field.
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(text)
        .map_err(|e| {
            JobError::new(
                "schedule.cron",
                format!("\"{text}\" is not a cron expression: {e}"),
            )
        })
}

/// The first occurrence of `cron` in `tz` strictly after `after_ms` whose local wall time is
/// later than that of `previous_ms` (a cron job never fires twice for one local time).
fn cron_after(cron: &Cron, tz: Tz, after_ms: i64, previous_ms: Option<i64>) -> Option<i64> {
    if !SCHEDULABLE_MS.contains(&after_ms) {
        return None;
    }
    let local_of = |ms: i64| {
        SCHEDULABLE_MS
            .contains(&ms)
            .then(|| DateTime::<Utc>::from_timestamp_millis(ms))
            .flatten()
            .map(|t| t.with_timezone(&tz).naive_local())
    };
    let floor = previous_ms.and_then(local_of);
    let mut from = DateTime::<Utc>::from_timestamp_millis(after_ms)?.with_timezone(&tz);
    for _ in 0..CRON_SKIP_LIMIT {
        let next = cron.find_next_occurrence(&from, false).ok()?;
        if floor.is_none_or(|f| next.naive_local() > f) {
            return Some(next.timestamp_millis());
        }
        from = next;
    }
    None
}

/// Reads a schedule object, naming the field of each problem.
pub fn parse_spec(value: &Value) -> Result<ScheduleSpec, JobError> {
    let object = value
        .as_object()
        .ok_or_else(|| JobError::new("schedule", "expected an object: {\"at\": \"YYYY-MM-DD HH:mm\"}, {\"everyMinutes\": N} or {\"cron\": \"…\"}"))?;
    if object.len() != 1 {
        return Err(JobError::new(
            "schedule",
            "give exactly one of at, everyMinutes, cron",
        ));
    }
    let (key, v) = object.iter().next().expect("one entry");
    let field = format!("schedule.{key}");
    match key.as_str() {
        "at" => v
            .as_str()
            .map(|s| ScheduleSpec::At(s.to_owned()))
            .ok_or_else(|| {
                JobError::new(
                    &field,
                    format!("expected a local time \"{LOCAL_TIME_FORMAT}\", got {v}"),
                )
            }),
        "everyMinutes" => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(ScheduleSpec::EveryMinutes)
            .ok_or_else(|| {
                JobError::new(
                    &field,
                    format!("expected a whole number of minutes, got {v}"),
                )
            }),
        "cron" => v
            .as_str()
            .map(|s| ScheduleSpec::Cron(s.to_owned()))
            .ok_or_else(|| JobError::new(&field, format!("expected a cron expression, got {v}"))),
        _ => Err(JobError::new(
            &field,
            "unknown schedule; use at, everyMinutes or cron",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_time_must_be_written_exactly() {
        for bad in [
            "2026-13-01 08:00",
            "2026-3-01 08:00",
            "2026-03-01T08:00",
            "2026-03-01 8:00",
            "2026-02-30 08:00",
            "2026-03-01 24:00",
        ] {
            assert_eq!(
                parse_local("schedule.at", bad).unwrap_err().to_string(),
                format!("schedule.at: \"{bad}\" is not a local time \"YYYY-MM-DD HH:mm\"")
            );
        }
        assert!(parse_local("schedule.at", "2026-03-01 08:00").is_ok());
    }

    #[test]
    fn a_cron_expression_has_five_fields() {
        let err = Timing::parse(&ScheduleSpec::Cron("0 30 1 * * *".into())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "schedule.cron: \"0 30 1 * * *\" has 6 fields; a cron expression has five: minute hour day-of-month month day-of-week"
        );
        assert!(
            Timing::parse(&ScheduleSpec::Cron("61 1 * * *".into()))
                .unwrap_err()
                .to_string()
                .starts_with("schedule.cron: \"61 1 * * *\" is not a cron expression")
        );
    }

    #[test]
    fn an_interval_of_zero_is_refused() {
        assert_eq!(
            Timing::parse(&ScheduleSpec::EveryMinutes(0))
                .unwrap_err()
                .to_string(),
            "schedule.everyMinutes: must be at least 1"
        );
    }

    #[test]
    fn an_interval_coalesces_missed_runs_onto_its_grid() {
        let t = Timing::Every { minutes: 10 };
        let anchor = 1_000_000;
        // Due at anchor, run 35 minutes late: the next is the first grid point after now.
        assert_eq!(
            t.next_due(Tz::utc(), anchor, anchor, anchor + 35 * MINUTE_MS),
            Some(anchor + 40 * MINUTE_MS)
        );
        // Run on time: the next grid point.
        assert_eq!(
            t.next_due(Tz::utc(), anchor, anchor, anchor),
            Some(anchor + 10 * MINUTE_MS)
        );
    }

    /// The last instant chrono can hold, in milliseconds.
    fn last_instant_ms() -> i64 {
        DateTime::<Utc>::MAX_UTC.timestamp_millis()
    }

    #[test]
    fn an_interval_at_the_end_of_time_has_no_next_run() {
        let longest = Timing::Every { minutes: u32::MAX };
        assert_eq!(
            longest.next_due(Tz::utc(), i64::MAX - 1, i64::MAX - 1, i64::MAX),
            None
        );
        assert_eq!(
            longest.next_due(Tz::utc(), i64::MIN, i64::MIN, i64::MAX),
            None
        );
        assert_eq!(longest.next_due(Tz::utc(), 0, 0, i64::MAX), None);
        let short = Timing::Every { minutes: 10 };
        assert_eq!(short.next_due(Tz::utc(), 0, 0, i64::MAX), None);
        assert_eq!(short.next_due(Tz::utc(), i64::MIN, i64::MIN, 0), None);
        // Far but countable times still work.
        assert_eq!(
            longest.next_due(Tz::utc(), 0, 0, 0),
            Some(i64::from(u32::MAX) * MINUTE_MS)
        );
    }

    #[test]
    fn an_interval_whose_first_run_cannot_be_counted_is_refused_at_creation() {
        for (minutes, created) in [(u32::MAX, i64::MAX), (10, i64::MAX - 1), (1, i64::MAX)] {
            assert_eq!(
                Timing::Every { minutes }
                    .first_due(Tz::utc(), created)
                    .unwrap_err()
                    .to_string(),
                format!(
                    "schedule.everyMinutes: {minutes} minutes from now is past the last time the app can count; use a shorter interval"
                )
            );
        }
    }

    #[test]
    fn a_cron_job_at_the_end_of_time_has_no_next_run() {
        let cron = Timing::parse(&ScheduleSpec::Cron("* * * * *".into())).unwrap();
        for now in [i64::MAX, last_instant_ms(), last_instant_ms() - MINUTE_MS] {
            assert_eq!(cron.next_due(Tz::utc(), 0, now, now), None, "{now}");
            assert_eq!(cron.next_due(Tz::campus(), 0, now, now), None, "{now}");
        }
        assert_eq!(
            cron.first_due(Tz::utc(), i64::MAX).unwrap_err().to_string(),
            "schedule.cron: \"* * * * *\" never fires: it has no time in the next 5 years"
        );
    }

    #[test]
    fn a_one_shot_far_in_the_future_or_the_past_is_counted_without_overflow() {
        let at = |text: &str| Timing::parse(&ScheduleSpec::At(text.into())).unwrap();
        assert_eq!(
            at("9999-12-31 23:59").first_due(Tz::utc(), 0).unwrap(),
            Some(253_402_300_740_000)
        );
        assert_eq!(
            at("0000-01-01 00:00")
                .first_due(Tz::utc(), i64::MIN)
                .unwrap(),
            Some(-62_167_219_200_000)
        );
        assert_eq!(
            at("9999-12-31 23:59")
                .first_due(Tz::named("Pacific/Kiritimati").unwrap(), i64::MAX)
                .unwrap_err()
                .to_string(),
            format!(
                "schedule.at: \"9999-12-31 23:59\" is not in the future (it is now {} ms in Pacific/Kiritimati)",
                i64::MAX
            )
        );
        assert_eq!(
            at("9999-12-31 23:59").next_due(Tz::utc(), 0, i64::MAX, i64::MAX),
            None
        );
    }

    #[test]
    fn a_local_time_at_the_end_of_the_calendar_resolves_without_panicking() {
        let last = NaiveDateTime::MAX;
        // Read as UTC when the zone has no such local time and nothing follows it.
        assert_eq!(
            resolve_local(Tz::named("America/New_York").unwrap(), last).naive_utc(),
            last
        );
    }

    #[test]
    fn a_cron_expression_that_never_fires_is_refused_at_creation() {
        for expr in ["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"] {
            let timing = Timing::parse(&ScheduleSpec::Cron(expr.into())).unwrap();
            assert_eq!(
                timing
                    .first_due(Tz::campus(), 1_767_225_600_000)
                    .unwrap_err()
                    .to_string(),
                format!(
                    "schedule.cron: \"{expr}\" never fires: it has no time in the next 5 years"
                )
            );
        }
        // A leap day fires within every five years.
        let leap = Timing::parse(&ScheduleSpec::Cron("0 0 29 2 *".into())).unwrap();
        assert!(
            leap.first_due(Tz::utc(), 1_767_225_600_000)
                .unwrap()
                .is_some()
        );
    }
}
