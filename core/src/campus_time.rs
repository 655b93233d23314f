//! Campus time: the words PKU students say times in (今天, 明天下午3点, 下周三, 第12周星期二,
//! 第3-4节, 单双周) turned into exact local times in Beijing, from PKU's period table and the
//! semester's first Monday (`campus.semesterStart`). A model gets these wrong without help, so
//! the core answers them: the built-in read tool `time.resolve` and a TypeScript plugin's
//! `ctx.services.time.resolve`. No clock is read here: the caller gives the moment.

use crate::zone::Zone;
use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Weekday};
use serde::Serialize;

/// The zone campus times are said in: the period table is Beijing's.
pub fn zone() -> Zone {
    Zone::campus()
}

/// The first Monday of the current semester, unless the settings say otherwise
/// (`campus.semesterStart`). An assumption for the 2026 autumn term, to verify against PKU's
/// 校历 (the university publishes it each spring); a student corrects it in the settings.
pub const DEFAULT_SEMESTER_START: &str = "2026-09-07";

/// PKU's class periods (作息时间表), as (start, end) in `HH:MM`, local: 第1节 is the first.
/// Source: 北京大学教务部 作息时间表 (the published timetable in force since the autumn term
/// of 2019; read 2026-12). A change to it is a new table here with its date.
pub const PERIODS: [(&str, &str); 12] = [
    ("08:00", "08:50"),
    ("09:00", "09:50"),
    ("10:10", "11:00"),
    ("11:10", "12:00"),
    ("13:00", "13:50"),
    ("14:00", "14:50"),
    ("15:10", "16:00"),
    ("16:10", "17:00"),
    ("17:10", "18:00"),
    ("18:40", "19:30"),
    ("19:40", "20:30"),
    ("20:40", "21:30"),
];

/// The periods a part of the day covers when no clock time is said: 上午 is the morning's
/// classes, 下午 the afternoon's, 晚上 the evening's.
const MORNING: (u8, u8) = (1, 4);
const AFTERNOON: (u8, u8) = (5, 9);
const EVENING: (u8, u8) = (10, 12);

/// What a text means, in Beijing time. `end` equals `start` for a moment (明天8点); a whole day
/// runs to the next day's 00:00.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    /// `YYYY-MM-DD HH:mm`, local.
    pub start: String,
    /// `YYYY-MM-DD HH:mm`, local.
    pub end: String,
    pub start_ms: i64,
    pub end_ms: i64,
    /// `YYYY-MM-DD`, the day `start` falls on.
    pub date: String,
    /// ISO weekday of `date`: 1 (Monday) to 7 (Sunday).
    pub weekday: u32,
    /// The semester's teaching week `date` falls in (1 from its first Monday); none before it.
    pub week: Option<u32>,
    /// The class periods the time covers, when it was said in periods or a part of the day.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub periods: Vec<u8>,
    pub all_day: bool,
    pub time_zone: &'static str,
}

/// Why a text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    #[error(
        "could not read \"{rest}\" in \"{text}\" as a time; say it like 明天下午3点, 下周三第3-4节, 第12周星期二, 单周周四第5-6节 or 2026-12-05 08:00"
    )]
    Unreadable { text: String, rest: String },
    #[error("{0}")]
    Invalid(String),
}

/// The start and end of period `n` (1 to 12).
pub fn period(n: u8) -> Option<(NaiveTime, NaiveTime)> {
    let (start, end) = PERIODS.get(usize::from(n).checked_sub(1)?)?;
    let at = |t: &str| NaiveTime::parse_from_str(t, "%H:%M").expect("period table");
    Some((at(start), at(end)))
}

/// The Monday of teaching week `week` (1 is the semester's first): start + 7(week − 1).
pub fn week_monday(semester_start: NaiveDate, week: u32) -> Option<NaiveDate> {
    semester_start.checked_add_days(Days::new(7 * u64::from(week.checked_sub(1)?)))
}

/// The teaching week `date` falls in; none before the semester's first Monday.
pub fn week_of(semester_start: NaiveDate, date: NaiveDate) -> Option<u32> {
    let days = (date - semester_start).num_days();
    (days >= 0).then(|| u32::try_from(days / 7 + 1).unwrap_or(u32::MAX))
}

/// Reads a semester's first Monday as the setting holds it (`YYYY-MM-DD`).
pub fn parse_semester_start(text: &str) -> Result<NaiveDate, String> {
    let date = NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .map_err(|_| format!("expected a date as YYYY-MM-DD, got \"{text}\""))?;
    if date.weekday() != Weekday::Mon {
        return Err(format!(
            "{date} is a {}; the semester's first day is the Monday of its week 1 (校历)",
            date.weekday()
        ));
    }
    Ok(date)
}

/// [`resolve`] with the semester's first Monday as the setting `campus.semesterStart` holds it.
pub fn resolve_setting(
    text: &str,
    now_ms: i64,
    semester_start: &str,
) -> Result<Resolved, TimeError> {
    let start = parse_semester_start(semester_start)
        .map_err(|e| TimeError::Invalid(format!("the setting campus.semesterStart: {e}")))?;
    resolve(text, now_ms, start)
}

/// The local moment `ms` in Beijing.
pub fn local(ms: i64) -> NaiveDateTime {
    DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .with_timezone(&zone())
        .naive_local()
}

/// Reads `text` as a campus time, `now_ms` being now and `semester_start` the semester's first
/// Monday.
pub fn resolve(text: &str, now_ms: i64, semester_start: NaiveDate) -> Result<Resolved, TimeError> {
    let cleaned = normalize(text);
    let today = local(now_ms).date();
    let mut reader = Reader {
        rest: &cleaned,
        today,
        semester_start,
    };
    let day = reader.day()?;
    let time = reader.time()?;
    if !reader.rest.is_empty() || (day.is_none() && time.is_none()) {
        let rest = if reader.rest.is_empty() {
            cleaned.clone()
        } else {
            reader.rest.to_owned()
        };
        return Err(TimeError::Unreadable {
            text: text.to_owned(),
            rest,
        });
    }
    let date = day.unwrap_or(Day::One(today));
    let (start, end, periods, all_day) = match (date, time) {
        (Day::One(date), None) => (
            date.and_time(NaiveTime::MIN),
            next_day(date)?.and_time(NaiveTime::MIN),
            Vec::new(),
            true,
        ),
        (Day::Week(monday), None) => (
            monday.and_time(NaiveTime::MIN),
            monday
                .checked_add_days(Days::new(7))
                .ok_or_else(|| TimeError::Invalid("that week is out of range".into()))?
                .and_time(NaiveTime::MIN),
            Vec::new(),
            true,
        ),
        (Day::Week(_), Some(_)) => {
            return Err(TimeError::Invalid(format!(
                "\"{text}\" names a week and a time but no day of it; add the day, as 第12周星期二第3-4节"
            )));
        }
        (Day::One(date), Some(Time::At(at))) => {
            (date.and_time(at), date.and_time(at), Vec::new(), false)
        }
        (Day::One(date), Some(Time::Periods(from, to))) => {
            let (start, _) = period(from).expect("checked when read");
            let (_, end) = period(to).expect("checked when read");
            (
                date.and_time(start),
                date.and_time(end),
                (from..=to).collect(),
                false,
            )
        }
    };
    let ms = |at: NaiveDateTime| {
        zone()
            .from_local_datetime(&at)
            .earliest()
            .map(|t| t.timestamp_millis())
            .ok_or_else(|| TimeError::Invalid(format!("{at} does not exist in Beijing time")))
    };
    Ok(Resolved {
        start: start.format("%Y-%m-%d %H:%M").to_string(),
        end: end.format("%Y-%m-%d %H:%M").to_string(),
        start_ms: ms(start)?,
        end_ms: ms(end)?,
        date: start.date().format("%Y-%m-%d").to_string(),
        weekday: start.weekday().number_from_monday(),
        week: week_of(semester_start, start.date()),
        periods,
        all_day,
        time_zone: "Asia/Shanghai",
    })
}

fn next_day(date: NaiveDate) -> Result<NaiveDate, TimeError> {
    date.succ_opt()
        .ok_or_else(|| TimeError::Invalid("that day is out of range".into()))
}

/// Full-width digits and punctuation as ASCII, ranges with one dash, no spaces.
fn normalize(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '０'..='９' => {
                char::from_u32(u32::from(c) - u32::from('０') + u32::from('0')).unwrap_or(c)
            }
            '：' => ':',
            '～' | '〜' | '~' | '—' | '–' | '－' | '至' | '到' => '-',
            '／' => '/',
            c => c,
        })
        .collect()
}

enum Day {
    One(NaiveDate),
    /// A whole teaching week, by its Monday (第12周).
    Week(NaiveDate),
}

enum Time {
    At(NaiveTime),
    /// From period to period, inclusive.
    Periods(u8, u8),
}

#[derive(Clone, Copy, PartialEq)]
enum Parity {
    Odd,
    Even,
}

struct Reader<'a> {
    rest: &'a str,
    today: NaiveDate,
    semester_start: NaiveDate,
}

impl Reader<'_> {
    /// Takes the first of `words` the text starts with.
    fn take(&mut self, words: &[&str]) -> bool {
        for word in words {
            if let Some(rest) = self.rest.strip_prefix(word) {
                self.rest = rest;
                return true;
            }
        }
        false
    }

    /// A number in digits or Chinese (三, 十二, 二十, 两).
    fn number(&mut self) -> Option<u32> {
        self.number_of(usize::MAX)
    }

    /// A number of at most `most` digits (a date's month and day have two, so the spaces
    /// taken out between a date and its time divide nothing).
    fn number_of(&mut self, most: usize) -> Option<u32> {
        let digits: String = self
            .rest
            .chars()
            .take_while(char::is_ascii_digit)
            .take(most)
            .collect();
        if !digits.is_empty() {
            self.rest = &self.rest[digits.len()..];
            return digits.parse().ok();
        }
        let value = |c: char| {
            "零一二三四五六七八九"
                .chars()
                .position(|d| d == c)
                .map(|p| p as u32)
                .or((c == '两').then_some(2))
        };
        let mut total = 0;
        let mut current = None;
        let mut used = 0;
        for c in self.rest.chars() {
            if let Some(v) = value(c) {
                current = Some(v);
            } else if c == '十' {
                total += current.unwrap_or(1) * 10;
                current = None;
            } else {
                break;
            }
            used += c.len_utf8();
        }
        if used == 0 {
            return None;
        }
        self.rest = &self.rest[used..];
        Some(total + current.unwrap_or(0))
    }

    /// A weekday after 周/星期/礼拜: 一 to 六, 日/天/七.
    fn weekday(&mut self) -> Option<u32> {
        let day = match self.rest.chars().next()? {
            '一' | '1' => 1,
            '二' | '2' => 2,
            '三' | '3' => 3,
            '四' | '4' => 4,
            '五' | '5' => 5,
            '六' | '6' => 6,
            '日' | '天' | '七' | '7' => 7,
            _ => return None,
        };
        self.rest = &self.rest[self.rest.chars().next()?.len_utf8()..];
        Some(day)
    }

    fn parity(&mut self) -> Option<Parity> {
        if self.take(&["单周"]) {
            Some(Parity::Odd)
        } else if self.take(&["双周"]) {
            Some(Parity::Even)
        } else {
            None
        }
    }

    fn day(&mut self) -> Result<Option<Day>, TimeError> {
        let invalid = |m: String| TimeError::Invalid(m);
        let parity = self.parity();
        let relative = [
            (&["大后天"][..], 3),
            (&["后天"][..], 2),
            (&["明天", "明日", "明早"][..], 1),
            (&["今天", "今日", "今早"][..], 0),
        ];
        for (words, days) in relative {
            if self.take(words) {
                let date = self.today + Days::new(days);
                return self.with_parity(date, parity).map(|d| Some(Day::One(d)));
            }
        }
        // 今晚 and 明晚 are a day and its evening; the evening is left for `time`.
        if self.rest.starts_with("今晚") || self.rest.starts_with("明晚") {
            let days = if self.rest.starts_with('明') { 1 } else { 0 };
            self.rest = &self.rest['今'.len_utf8()..];
            return Ok(Some(Day::One(self.today + Days::new(days))));
        }
        if let Some(date) = self.date()? {
            return self.with_parity(date, parity).map(|d| Some(Day::One(d)));
        }
        // 第N周; 第N节 is a period, read by `time`.
        let before = self.rest;
        if self.take(&["第"])
            && let Some(week) = self.number()
            && self.take(&["周"])
        {
            if week == 0 {
                return Err(invalid("teaching weeks count from 第1周".into()));
            }
            let monday = week_monday(self.semester_start, week)
                .ok_or_else(|| invalid("that week is out of range".into()))?;
            if parity.is_some_and(|p| p != parity_of(week)) {
                return Err(invalid(format!(
                    "第{week}周 is not a {} week",
                    if week % 2 == 0 {
                        "单 (odd)"
                    } else {
                        "双 (even)"
                    }
                )));
            }
            self.take(&["的"]);
            return Ok(Some(match self.weekday_word() {
                Some(day) => Day::One(monday + Days::new(u64::from(day - 1))),
                None => Day::Week(monday),
            }));
        }
        self.rest = before;
        let next = self.take(&["下周", "下星期", "下礼拜", "下个星期", "下个礼拜"]);
        let this = !next && self.take(&["本周", "这周", "这个星期", "这星期", "这礼拜", "本星期"]);
        let parity = parity.or_else(|| self.parity());
        let weekday = if next || this {
            self.weekday()
        } else {
            self.weekday_word()
        };
        let monday = self.today - Days::new(u64::from(self.today.weekday().num_days_from_monday()));
        let date = match (next, this, weekday) {
            (true, _, Some(day)) => monday + Days::new(7 + u64::from(day - 1)),
            (true, _, None) => return Ok(Some(Day::Week(monday + Days::new(7)))),
            (_, true, Some(day)) => monday + Days::new(u64::from(day - 1)),
            (_, true, None) => return Ok(Some(Day::Week(monday))),
            // A weekday alone is the next one to come, today included.
            (false, false, Some(day)) => {
                let ahead = (day + 7 - self.today.weekday().number_from_monday()) % 7;
                self.today + Days::new(u64::from(ahead))
            }
            (false, false, None) if parity.is_some() => {
                return Err(invalid(
                    "单周 and 双周 need a day, as in 单周周四 or 双周星期二".into(),
                ));
            }
            (false, false, None) => return Ok(None),
        };
        self.with_parity(date, parity).map(|d| Some(Day::One(d)))
    }

    /// 周X, 星期X or 礼拜X.
    fn weekday_word(&mut self) -> Option<u32> {
        let before = self.rest;
        if self.take(&["星期", "礼拜", "周"]) {
            if let Some(day) = self.weekday() {
                return Some(day);
            }
            self.rest = before;
        }
        None
    }

    /// YYYY-MM-DD, YYYY年M月D日, M月D日 (this year's), with 日 or 号.
    fn date(&mut self) -> Result<Option<NaiveDate>, TimeError> {
        let before = self.rest;
        let Some(first) = self.number() else {
            return Ok(None);
        };
        let (year, month) = if self.take(&["-", "/", "年"]) {
            match self.number_of(2) {
                Some(month) if first >= 1000 => (first as i32, month),
                _ => {
                    self.rest = before;
                    return Ok(None);
                }
            }
        } else {
            (self.today.year(), first)
        };
        if !self.take(&["-", "/", "月"]) {
            self.rest = before;
            return Ok(None);
        }
        let Some(day) = self.number_of(2) else {
            self.rest = before;
            return Ok(None);
        };
        self.take(&["日", "号"]);
        NaiveDate::from_ymd_opt(year, month, day)
            .map(Some)
            .ok_or_else(|| TimeError::Invalid(format!("{year}-{month}-{day} is not a date")))
    }

    /// Moves `date` ahead a week when its teaching week has the other parity.
    fn with_parity(&self, date: NaiveDate, parity: Option<Parity>) -> Result<NaiveDate, TimeError> {
        let Some(parity) = parity else {
            return Ok(date);
        };
        let week = week_of(self.semester_start, date).ok_or_else(|| {
            TimeError::Invalid(format!(
                "{date} is before the semester's first Monday ({}), so it is in no 单周 or 双周",
                self.semester_start
            ))
        })?;
        Ok(if parity_of(week) == parity {
            date
        } else {
            date + Days::new(7)
        })
    }

    fn time(&mut self) -> Result<Option<Time>, TimeError> {
        let invalid = |m: String| TimeError::Invalid(m);
        // 第3-4节, 3-4节, 第三节
        let before = self.rest;
        let ordinal = self.take(&["第"]);
        if let Some(from) = self.number() {
            let to = if self.take(&["-"]) {
                self.take(&["第"]);
                self.number()
            } else {
                Some(from)
            };
            if let Some(to) = to
                && self.take(&["节"])
            {
                let known = |n: u32| (1..=PERIODS.len() as u32).contains(&n);
                if !known(from) || !known(to) || to < from {
                    return Err(invalid(format!(
                        "第{from}-{to}节 is not a span of periods; a day has 第1节 to 第{}节",
                        PERIODS.len()
                    )));
                }
                return Ok(Some(Time::Periods(from as u8, to as u8)));
            }
            self.rest = before;
        } else if ordinal {
            self.rest = before;
        }
        let part = [
            (&["凌晨"][..], Part::Night),
            (&["早上", "早晨", "上午"][..], Part::Morning),
            (&["中午"][..], Part::Noon),
            (&["下午", "傍晚"][..], Part::Afternoon),
            (&["晚上", "晚", "夜里"][..], Part::Evening),
        ]
        .into_iter()
        .find_map(|(words, part)| self.take(words).then_some(part));
        let Some(clock) = self.clock()? else {
            return Ok(part.and_then(|part| {
                let (from, to) = match part {
                    Part::Morning => MORNING,
                    Part::Afternoon => AFTERNOON,
                    Part::Evening => EVENING,
                    Part::Night | Part::Noon => return None,
                };
                Some(Time::Periods(from, to))
            }));
        };
        let (hour, minute) = clock;
        let hour = match part {
            Some(Part::Afternoon | Part::Evening) if hour < 12 => hour + 12,
            Some(Part::Noon) if hour < 3 => hour + 12,
            _ => hour,
        };
        NaiveTime::from_hms_opt(hour, minute, 0)
            .map(|t| Some(Time::At(t)))
            .ok_or_else(|| invalid(format!("{hour}:{minute:02} is not a time of day")))
    }

    /// 8点, 8点半, 8点15(分), 8:15.
    fn clock(&mut self) -> Result<Option<(u32, u32)>, TimeError> {
        let before = self.rest;
        let Some(hour) = self.number() else {
            return Ok(None);
        };
        if self.take(&[":"]) {
            let minute = self.number().ok_or_else(|| {
                TimeError::Invalid(
                    "a time is missing its minutes after the colon, as in 8:15".into(),
                )
            })?;
            return Ok(Some((hour, minute)));
        }
        if !self.take(&["点", "時", "时"]) {
            self.rest = before;
            return Ok(None);
        }
        if self.take(&["半"]) {
            return Ok(Some((hour, 30)));
        }
        let minute = self.number().unwrap_or(0);
        self.take(&["分"]);
        Ok(Some((hour, minute)))
    }
}

#[derive(Clone, Copy)]
enum Part {
    Night,
    Morning,
    Noon,
    Afternoon,
    Evening,
}

fn parity_of(week: u32) -> Parity {
    if week % 2 == 1 {
        Parity::Odd
    } else {
        Parity::Even
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-12-04 (a Friday) 09:30 in Beijing.
    const NOW: i64 = 1_796_347_800_000;

    fn start() -> NaiveDate {
        parse_semester_start(DEFAULT_SEMESTER_START).unwrap()
    }

    fn at(text: &str) -> (String, String) {
        let r = resolve(text, NOW, start()).unwrap();
        (r.start, r.end)
    }

    fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_owned(), b.to_owned())
    }

    #[test]
    fn now_is_a_friday_morning_in_week_13() {
        assert_eq!(local(NOW).to_string(), "2026-12-04 09:30:00");
        assert_eq!(week_of(start(), local(NOW).date()), Some(13));
    }

    #[test]
    fn days_said_in_words() {
        assert_eq!(at("今天"), pair("2026-12-04 00:00", "2026-12-05 00:00"));
        assert_eq!(at("明天"), pair("2026-12-05 00:00", "2026-12-06 00:00"));
        assert_eq!(at("后天"), pair("2026-12-06 00:00", "2026-12-07 00:00"));
        assert_eq!(at("下周三"), pair("2026-12-09 00:00", "2026-12-10 00:00"));
        assert_eq!(at("周三"), pair("2026-12-09 00:00", "2026-12-10 00:00"));
        assert_eq!(at("星期五"), pair("2026-12-04 00:00", "2026-12-05 00:00"));
        assert_eq!(at("本周一"), pair("2026-11-30 00:00", "2026-12-01 00:00"));
        assert_eq!(at("12月25日"), pair("2026-12-25 00:00", "2026-12-26 00:00"));
    }

    #[test]
    fn times_of_day() {
        assert_eq!(
            at("明天下午3点"),
            pair("2026-12-05 15:00", "2026-12-05 15:00")
        );
        assert_eq!(at("明天8点"), pair("2026-12-05 08:00", "2026-12-05 08:00"));
        assert_eq!(
            at("今晚7点半"),
            pair("2026-12-04 19:30", "2026-12-04 19:30")
        );
        assert_eq!(
            at("明天 14:05"),
            pair("2026-12-05 14:05", "2026-12-05 14:05")
        );
        assert_eq!(
            at("2026-12-05 08:00"),
            pair("2026-12-05 08:00", "2026-12-05 08:00")
        );
        assert_eq!(at("中午12点"), pair("2026-12-04 12:00", "2026-12-04 12:00"));
        assert_eq!(at("明天下午"), pair("2026-12-05 13:00", "2026-12-05 18:00"));
    }

    #[test]
    fn weeks_and_periods() {
        assert_eq!(
            at("明天第3-4节"),
            pair("2026-12-05 10:10", "2026-12-05 12:00")
        );
        assert_eq!(
            at("第12周星期二"),
            pair("2026-11-24 00:00", "2026-11-25 00:00")
        );
        assert_eq!(
            at("第1周周一第1节"),
            pair("2026-09-07 08:00", "2026-09-07 08:50")
        );
        assert_eq!(
            at("第十二周周二第十到十二节"),
            pair("2026-11-24 18:40", "2026-11-24 21:30")
        );
        assert_eq!(at("第12周"), pair("2026-11-23 00:00", "2026-11-30 00:00"));
        let r = resolve("下周三第5-6节", NOW, start()).unwrap();
        assert_eq!((r.week, r.periods, r.weekday), (Some(14), vec![5, 6], 3));
    }

    #[test]
    fn odd_and_even_weeks_move_to_the_next_such_week() {
        // The next Thursday is week 14's (even); an odd week's is the week after.
        assert_eq!(
            at("双周周四第5-6节"),
            pair("2026-12-10 13:00", "2026-12-10 14:50")
        );
        assert_eq!(
            at("单周周四第5-6节"),
            pair("2026-12-17 13:00", "2026-12-17 14:50")
        );
        assert!(matches!(
            resolve("单周第12周周一", NOW, start()),
            Err(TimeError::Invalid(_))
        ));
    }

    #[test]
    fn unreadable_words_are_named_with_examples() {
        let err = resolve("明天去图书馆", NOW, start()).unwrap_err();
        assert_eq!(
            err,
            TimeError::Unreadable {
                text: "明天去图书馆".into(),
                rest: "去图书馆".into()
            }
        );
        assert!(err.to_string().contains("明天下午3点"));
        assert!(matches!(
            resolve("第13节", NOW, start()),
            Err(TimeError::Invalid(_))
        ));
    }

    #[test]
    fn a_semester_starts_on_a_monday() {
        assert!(parse_semester_start("2026-09-08").is_err());
        assert_eq!(week_monday(start(), 12).unwrap().to_string(), "2026-11-23");
    }
}
