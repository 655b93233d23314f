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

use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JobError;

/// How local times are written everywhere in the app (seed 004: "local time YYYY-MM-DD HH:mm").
pub const LOCAL_TIME_FORMAT: &str = "YYYY-MM-DD HH:mm";

const MINUTE_MS: i64 = 60_000;

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
            Timing::Every { minutes } => Ok(Some(created_ms + i64::from(*minutes) * MINUTE_MS)),
            Timing::Cron(cron) => Ok(cron_after(cron, tz, created_ms, None)),
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
                let step = i64::from(*minutes) * MINUTE_MS;
                if after < anchor_ms {
                    return Some(anchor_ms);
                }
                Some(anchor_ms + ((after - anchor_ms) / step + 1) * step)
            }
            Timing::Cron(cron) => cron_after(cron, tz, after, Some(due_ms)),
        }
    }
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
                .find_map(
                    |m| match tz.from_local_datetime(&(start + Duration::minutes(m))) {
                        LocalResult::Single(t) => Some(t),
                        LocalResult::Ambiguous(first, _) => Some(first),
                        LocalResult::None => None,
                    },
                )
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
    let local_of = |ms: i64| {
        DateTime::<Utc>::from_timestamp_millis(ms).map(|t| t.with_timezone(&tz).naive_local())
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
            t.next_due(Tz::UTC, anchor, anchor, anchor + 35 * MINUTE_MS),
            Some(anchor + 40 * MINUTE_MS)
        );
        // Run on time: the next grid point.
        assert_eq!(
            t.next_due(Tz::UTC, anchor, anchor, anchor),
            Some(anchor + 10 * MINUTE_MS)
        );
    }
}
