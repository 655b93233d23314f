//! Time zones read from the device's own time-zone database, for chrono's date arithmetic.
//!
//! The zone data is the operating system's, which it keeps up to date: Android's tzdata file
//! (`/apex/com.android.tzdata/etc/tz/tzdata`, else `/system/usr/share/zoneinfo/tzdata`, found
//! from `ANDROID_ROOT`/`ANDROID_DATA`), iOS's and a Unix host's `/usr/share/zoneinfo` (or
//! `TZDIR`). The library carries no zone tables of its own (a bundled copy of the database
//! was a megabyte of the phone library: docs/size.md). Without a database — a host that has
//! none installed — the two zones the product cannot work without still resolve: UTC, and
//! campus time's Asia/Shanghai, which has kept UTC+8 without daylight saving since 1991
//! (DESIGN.md §7: campus times are Beijing's); every other name is then refused as unknown.
//!
//! A [`Zone`] is `Copy`, as chrono's own zones are: each zone is loaded once per process and
//! kept (there are a few hundred names, so the set is bounded).

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};

use chrono::{
    Datelike, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone, Timelike,
};

/// The zone campus times are said in (DESIGN.md §7).
pub const CAMPUS: &str = "Asia/Shanghai";

/// Asia/Shanghai's rule when the device has no zone database: China Standard Time, UTC+8, no
/// daylight saving (none since 1991).
const CAMPUS_WITHOUT_DATABASE: &str = "CST-8";

/// A named time zone with the device's rules.
#[derive(Clone, Copy)]
pub struct Zone {
    name: &'static str,
    rules: &'static jiff::tz::TimeZone,
}

/// A name that no time-zone database on this device knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownZone(pub String);

impl fmt::Display for UnknownZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\" is not an IANA time zone name", self.0)
    }
}

impl std::error::Error for UnknownZone {}

impl Zone {
    /// UTC.
    pub fn utc() -> Zone {
        Zone::named("UTC").unwrap_or_else(|_| unreachable!("UTC is built in"))
    }

    /// Asia/Shanghai, the zone of campus time.
    pub fn campus() -> Zone {
        Zone::named(CAMPUS).unwrap_or_else(|_| unreachable!("Asia/Shanghai has a built-in rule"))
    }

    /// The zone called `name` (an IANA name such as `Europe/London`, matched as the database
    /// spells it).
    pub fn named(name: &str) -> Result<Zone, UnknownZone> {
        static LOADED: OnceLock<Mutex<HashMap<String, Zone>>> = OnceLock::new();
        let loaded = LOADED.get_or_init(Default::default);
        let mut loaded = loaded
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(zone) = loaded.get(name) {
            return Ok(*zone);
        }
        let rules = load(name).ok_or_else(|| UnknownZone(name.to_owned()))?;
        // Leaked on purpose: one per distinct zone name for the life of the process.
        let zone = Zone {
            name: Box::leak(name.to_owned().into_boxed_str()),
            rules: Box::leak(Box::new(rules)),
        };
        loaded.insert(name.to_owned(), zone);
        Ok(zone)
    }

    /// The zone called `name`, or campus time's when the name is unknown here.
    pub fn named_or_campus(name: &str) -> Zone {
        Zone::named(name).unwrap_or_else(|_| Zone::campus())
    }

    /// The zone's IANA name as it was asked for.
    pub fn name(&self) -> &'static str {
        self.name
    }

    fn offset_at(&self, timestamp: jiff::Timestamp) -> ZoneOffset {
        let info = self.rules.to_offset_info(timestamp);
        ZoneOffset {
            zone: *self,
            fixed: fixed(info.offset()),
            abbreviation: Abbreviation::new(info.abbreviation()),
        }
    }
}

/// The rules for `name`: the device's database; without one, UTC and Asia/Shanghai only.
fn load(name: &str) -> Option<jiff::tz::TimeZone> {
    load_from(database(), name)
}

/// Android's updatable tzdata (the time-zone APEX, Android 10+), else the copy an update
/// downloaded, else the system image's.
#[cfg(target_os = "android")]
const ANDROID_TZDATA: [&str; 3] = [
    "/apex/com.android.tzdata/etc/tz/tzdata",
    "/data/misc/zoneinfo/current/tzdata",
    "/system/usr/share/zoneinfo/tzdata",
];

/// The device's zone database: on Android the first of [`ANDROID_TZDATA`] that opens (jiff's
/// own search when none does); elsewhere jiff's (`TZDIR`, else `/usr/share/zoneinfo`: iOS and
/// Unix hosts).
fn database() -> &'static jiff::tz::TimeZoneDatabase {
    #[cfg(target_os = "android")]
    {
        static ANDROID: OnceLock<jiff::tz::TimeZoneDatabase> = OnceLock::new();
        ANDROID
            .get_or_init(|| first_tzdata(&ANDROID_TZDATA).unwrap_or_else(|| jiff::tz::db().clone()))
    }
    #[cfg(not(target_os = "android"))]
    jiff::tz::db()
}

/// The first of `paths` that is a tzdata file in Android's format (zones concatenated behind
/// an index) with at least one zone.
#[cfg_attr(not(target_os = "android"), allow(dead_code))]
fn first_tzdata(paths: &[&str]) -> Option<jiff::tz::TimeZoneDatabase> {
    paths.iter().find_map(|path| {
        jiff::tz::TimeZoneDatabase::from_concatenated_path(path)
            .ok()
            .filter(|database| !database.is_definitively_empty())
    })
}

fn load_from(database: &jiff::tz::TimeZoneDatabase, name: &str) -> Option<jiff::tz::TimeZone> {
    // Only exact spellings: the databases match names ignoring case, chrono-tz did not, and a
    // stored name is compared as written.
    let exact = |zone: jiff::tz::TimeZone| {
        (zone.iana_name() == Some(name) || name == "UTC").then_some(zone)
    };
    match database.get(name) {
        // jiff's stand-in for a zone it cannot name is no zone the student can pick.
        Ok(_) if name.eq_ignore_ascii_case("Etc/Unknown") => None,
        Ok(zone) => exact(zone),
        Err(_) if name == "UTC" => Some(jiff::tz::TimeZone::UTC),
        Err(_) if name == CAMPUS => jiff::tz::TimeZone::posix(CAMPUS_WITHOUT_DATABASE).ok(),
        Err(_) => None,
    }
}

impl FromStr for Zone {
    type Err = UnknownZone;

    fn from_str(name: &str) -> Result<Zone, UnknownZone> {
        Zone::named(name)
    }
}

impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for Zone {
    fn eq(&self, other: &Zone) -> bool {
        self.name == other.name
    }
}

impl Eq for Zone {}

/// A zone's offset at one instant, with the zone's abbreviation for it (`%Z`: CST, BST, EDT).
#[derive(Clone, Copy)]
pub struct ZoneOffset {
    zone: Zone,
    fixed: FixedOffset,
    abbreviation: Abbreviation,
}

impl Offset for ZoneOffset {
    fn fix(&self) -> FixedOffset {
        self.fixed
    }
}

impl fmt::Debug for ZoneOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.abbreviation, self.fixed)
    }
}

impl fmt::Display for ZoneOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.abbreviation, f)
    }
}

/// A zone abbreviation kept inline so that an offset stays `Copy`; the tz database's are at
/// most six bytes, and a longer one is cut at a character boundary.
#[derive(Clone, Copy)]
struct Abbreviation {
    bytes: [u8; 15],
    len: u8,
}

impl Abbreviation {
    fn new(text: &str) -> Abbreviation {
        let mut len = text.len().min(15);
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0; 15];
        bytes[..len].copy_from_slice(&text.as_bytes()[..len]);
        Abbreviation {
            bytes,
            len: len as u8,
        }
    }
}

impl fmt::Display for Abbreviation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or(""))
    }
}

fn fixed(offset: jiff::tz::Offset) -> FixedOffset {
    FixedOffset::east_opt(offset.seconds()).unwrap_or_else(|| FixedOffset::east_opt(0).unwrap())
}

/// An instant in jiff's range (years -9999 to 9999): one outside takes the offset at the
/// nearest end, where no zone has transitions.
fn timestamp(utc: &NaiveDateTime) -> jiff::Timestamp {
    let seconds = utc.and_utc().timestamp();
    jiff::Timestamp::from_second(seconds).unwrap_or(if seconds < 0 {
        jiff::Timestamp::MIN
    } else {
        jiff::Timestamp::MAX
    })
}

/// A wall time in jiff's range, clamped like [`timestamp`].
fn civil(local: &NaiveDateTime) -> jiff::civil::DateTime {
    let year = local.year();
    if year < -9999 {
        return jiff::civil::DateTime::MIN;
    }
    if year > 9999 {
        return jiff::civil::DateTime::MAX;
    }
    // chrono's leap second (a nanosecond count past 999,999,999) is the second's last instant.
    let nanosecond = local.nanosecond().min(999_999_999);
    jiff::civil::DateTime::new(
        year as i16,
        local.month() as i8,
        local.day() as i8,
        local.hour() as i8,
        local.minute() as i8,
        local.second() as i8,
        nanosecond as i32,
    )
    .unwrap_or(jiff::civil::DateTime::MAX)
}

impl TimeZone for Zone {
    type Offset = ZoneOffset;

    fn from_offset(offset: &ZoneOffset) -> Zone {
        offset.zone
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<ZoneOffset> {
        self.offset_from_local_datetime(&local.and_time(chrono::NaiveTime::MIN))
    }

    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<ZoneOffset> {
        use jiff::tz::AmbiguousOffset;
        let wall = civil(local);
        let at = |offset: jiff::tz::Offset| {
            offset
                .to_timestamp(wall)
                .map(|t| self.offset_at(t))
                .unwrap_or_else(|_| self.offset_at(timestamp(local)))
        };
        match self.rules.to_ambiguous_timestamp(wall).offset() {
            AmbiguousOffset::Unambiguous { offset } => LocalResult::Single(at(offset)),
            // The earlier instant first, as chrono orders them.
            AmbiguousOffset::Fold { before, after } => {
                LocalResult::Ambiguous(at(before), at(after))
            }
            AmbiguousOffset::Gap { .. } => LocalResult::None,
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> ZoneOffset {
        self.offset_from_utc_datetime(&utc.and_time(chrono::NaiveTime::MIN))
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> ZoneOffset {
        self.offset_at(timestamp(utc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn campus_time_is_utc_plus_8_and_utc_is_built_in() {
        let noon = NaiveDate::from_ymd_opt(2026, 7, 1)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap();
        let campus = Zone::campus().from_utc_datetime(&noon);
        assert_eq!(
            campus.format("%Y-%m-%d %H:%M %Z").to_string(),
            "2026-07-01 20:00 CST"
        );
        let utc = Zone::utc().from_utc_datetime(&noon);
        assert_eq!(utc.format("%H:%M %Z").to_string(), "12:00 UTC");
    }

    #[test]
    fn the_campus_rule_without_a_database_matches_the_database() {
        // DESIGN §7: campus time works on a device with no zone database; its rule must give
        // the same offsets as the database's Asia/Shanghai for every instant since 1992.
        let rule = jiff::tz::TimeZone::posix(CAMPUS_WITHOUT_DATABASE).unwrap();
        let database = jiff::tz::db().get(CAMPUS).unwrap();
        for year in [1992, 2000, 2026, 2100] {
            for month in 1..=12 {
                let noon = jiff::civil::date(year, month, 15).at(12, 0, 0, 0);
                let t = jiff::tz::TimeZone::UTC.to_timestamp(noon).unwrap();
                assert_eq!(rule.to_offset(t), database.to_offset(t), "{year}-{month}");
            }
        }
    }

    #[test]
    fn without_a_zone_database_utc_and_campus_time_still_resolve() {
        // DESIGN §7: a device with no zone database still has campus time; other names are
        // refused, never silently taken as another zone.
        let none = jiff::tz::TimeZoneDatabase::none();
        let campus = load_from(&none, CAMPUS).unwrap();
        let july = jiff::civil::date(2026, 7, 1).at(12, 0, 0, 0);
        let t = jiff::tz::TimeZone::UTC.to_timestamp(july).unwrap();
        assert_eq!(campus.to_offset(t).seconds(), 8 * 3600);
        assert_eq!(load_from(&none, "UTC").unwrap().to_offset(t).seconds(), 0);
        assert!(load_from(&none, "Europe/London").is_none());
    }

    /// An Android tzdata file holding `zones`, each copied from this host's zoneinfo: the
    /// header (`tzdata` and a version, the index's and the data's offsets, the zone tab's),
    /// the index (a 40-byte name, the zone's offset in the data and its length, 4 unused
    /// bytes, each big-endian) and the zones' TZif data.
    fn android_tzdata(zones: &[&str]) -> Vec<u8> {
        let header = 24;
        let index_len = 52 * zones.len();
        let (mut index, mut data) = (Vec::new(), Vec::new());
        for zone in zones {
            let tzif = std::fs::read(format!("/usr/share/zoneinfo/{zone}")).unwrap();
            let mut name = [0u8; 40];
            name[..zone.len()].copy_from_slice(zone.as_bytes());
            index.extend_from_slice(&name);
            index.extend_from_slice(&(data.len() as u32).to_be_bytes());
            index.extend_from_slice(&(tzif.len() as u32).to_be_bytes());
            index.extend_from_slice(&0u32.to_be_bytes());
            data.extend_from_slice(&tzif);
        }
        let mut file = b"tzdata2026a\0".to_vec();
        file.extend_from_slice(&(header as u32).to_be_bytes());
        file.extend_from_slice(&((header + index_len) as u32).to_be_bytes());
        file.extend_from_slice(&((header + index_len + data.len()) as u32).to_be_bytes());
        file.extend_from_slice(&index);
        file.extend_from_slice(&data);
        file
    }

    #[test]
    fn android_tzdata_is_read_from_the_first_path_that_holds_one() {
        // DESIGN §7: on a phone the zones are Android's own tzdata; a missing APEX file falls
        // through to the next path.
        let dir = std::env::temp_dir().join(format!("harness-zone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tzdata = dir.join("tzdata");
        std::fs::write(&tzdata, android_tzdata(&["Asia/Shanghai", "Europe/London"])).unwrap();
        let missing = dir.join("missing");
        let database = first_tzdata(&[missing.to_str().unwrap(), tzdata.to_str().unwrap()])
            .expect("the second path holds a tzdata file");
        let london = load_from(&database, "Europe/London").unwrap();
        let july = jiff::civil::date(2026, 7, 1).at(12, 0, 0, 0);
        let t = jiff::tz::TimeZone::UTC.to_timestamp(july).unwrap();
        assert_eq!(london.to_offset(t).seconds(), 3600);
        assert_eq!(
            load_from(&database, CAMPUS).unwrap().iana_name(),
            Some(CAMPUS)
        );
        assert!(load_from(&database, "America/New_York").is_none());
        assert!(first_tzdata(&[missing.to_str().unwrap()]).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_are_matched_as_spelled_and_unknown_ones_refused() {
        assert_eq!(
            Zone::named("Europe/London").unwrap().name(),
            "Europe/London"
        );
        assert_eq!(
            Zone::named("europe/london").unwrap_err(),
            UnknownZone("europe/london".into())
        );
        assert!(Zone::named("Mars/Olympus_Mons").is_err());
        assert_eq!(Zone::named_or_campus("Mars/Olympus_Mons"), Zone::campus());
    }

    #[test]
    fn a_fold_gives_both_instants_earlier_first_and_a_gap_none() {
        let new_york = Zone::named("America/New_York").unwrap();
        let at = |d: u32, h: u32, m: u32| {
            NaiveDate::from_ymd_opt(2026, 11, d)
                .unwrap()
                .and_hms_opt(h, m, 0)
                .unwrap()
        };
        match new_york.from_local_datetime(&at(1, 1, 30)) {
            LocalResult::Ambiguous(first, second) => {
                assert_eq!(first.format("%H:%M %Z").to_string(), "01:30 EDT");
                assert_eq!(second.format("%H:%M %Z").to_string(), "01:30 EST");
                assert_eq!((second - first).num_minutes(), 60);
            }
            other => panic!("expected a fold, got {other:?}"),
        }
        let spring = NaiveDate::from_ymd_opt(2026, 3, 8)
            .unwrap()
            .and_hms_opt(2, 30, 0)
            .unwrap();
        assert!(matches!(
            new_york.from_local_datetime(&spring),
            LocalResult::None
        ));
    }
}
