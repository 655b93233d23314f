//! App settings (seed 000, "Settings, including the modes themselves"): appearance, language,
//! time zone, the model, and each plugin's switch, modes and preferences. The agent changes
//! them through the bundled `settings` plugin; every change is checked here first, and every
//! error names the key.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::{Mode, Rule};
use crate::registry::Effect;
use crate::store::values::{Table, delete_value, put_value, values};
use crate::store::{Store, StoreError};

/// The host official plugin documents come from, unless the settings say otherwise.
pub const DEFAULT_OFFICIAL_HOST: &str = "plugins.pku-harness.cn";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Appearance {
    Light,
    Dark,
    #[default]
    System,
}

/// The languages the app speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "lowercase")]
pub enum Language {
    #[default]
    Zh,
    En,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelSettings {
    pub name: String,
    /// The provider's endpoint. Its API key is a secret, kept in the keystore.
    pub endpoint: String,
    /// `model.temperature`: replaces the provider's (`agent::providers`) when set.
    pub temperature: Option<Temperature>,
    /// `model.maxTokens`: the longest answer, in tokens; replaces the provider's when set.
    pub max_tokens: Option<u32>,
    /// `model.contextTokens`: the budget of one request, in tokens; replaces the provider's
    /// context size (`agent::providers`) when set.
    pub context_tokens: Option<u32>,
    /// `model.monthlyCapYuan`: past this month's spend on the model, in whole 元, no new turn
    /// starts; none (the default) is no cap.
    pub monthly_cap_yuan: Option<u32>,
    /// `model.priceYuanPerMillion`: the configured provider's price, replacing the table's
    /// (`agent::prices`).
    pub price_yuan_per_million: Option<crate::agent::prices::Price>,
}

/// A sampling temperature, 0 to 2 as every provider takes it; never NaN ([`parse_change`]
/// checks it), so it is `Eq`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Temperature(pub f64);

impl Eq for Temperature {}

/// The bounds of `model.temperature`.
pub const TEMPERATURES: std::ops::RangeInclusive<f64> = 0.0..=2.0;
/// The bounds of `model.maxTokens`.
pub const MAX_TOKENS: std::ops::RangeInclusive<u32> = 16..=131_072;
/// The bounds of `model.contextTokens`.
pub const CONTEXT_TOKENS: std::ops::RangeInclusive<u32> = 2048..=2_000_000;

/// The campus services a plugin that `requires: campus-session` may send the session to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CampusSettings {
    pub hosts: Vec<String>,
    /// `campus.semesterStart`: the Monday of the semester's week 1, `YYYY-MM-DD`, from which
    /// campus time counts 第N周 (`campus_time`).
    pub semester_start: String,
}

impl Default for CampusSettings {
    fn default() -> Self {
        Self {
            hosts: DEFAULT_CAMPUS_HOSTS
                .iter()
                .map(|h| (*h).to_owned())
                .collect(),
            semester_start: crate::campus_time::DEFAULT_SEMESTER_START.to_owned(),
        }
    }
}

/// The campus hosts the session goes to, unless the settings say otherwise (`campus.hosts`):
/// every campus service's (DESIGN.md §10). The setting only narrows: a host that is no campus
/// service's never gets a session.
pub const DEFAULT_CAMPUS_HOSTS: [&str; 5] = [
    crate::campus::wire::PORTAL,
    crate::campus::wire::CARD,
    crate::campus::wire::TREEHOLE,
    crate::campus::wire::BUS,
    crate::campus::wire::COURSE,
];

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    pub appearance: Appearance,
    pub language: Language,
    /// An IANA time zone name; schedules and local times use it.
    pub time_zone: String,
    pub model: ModelSettings,
    pub official_host: String,
    pub campus: CampusSettings,
    /// The agent's guards: how far one turn may go before it is stopped.
    pub agent: AgentLimits,
    /// The student's money limits, across plugins (DESIGN.md §3 8e).
    pub money: MoneyLimits,
    /// How a public call waits before it is sent (`public.undoSeconds`).
    pub public: PublicSettings,
    /// How long an ask waits for the student (`approvals.timeoutMinutes`).
    pub approvals: ApprovalSettings,
    /// What Today shows (`today.tiles`).
    pub today: TodaySettings,
}

/// Today's tiles, in the order shown: each a plugin's data source as `plugin.source`
/// (`today.tiles`). The student adds, removes and reorders them from Today's edit mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TodaySettings {
    pub tiles: Vec<String>,
}

/// Today's tiles until the student chooses (issue 36): the card's balance, the canteens'
/// crowding, the newest notices, the Treehole posts the student follows.
pub const TODAY_DEFAULT: [&str; 4] = [
    "wallet.balance",
    "canteen.crowd",
    "notices.latest",
    "treehole.following",
];

/// The most tiles Today holds.
pub const TODAY_TILES: usize = 12;

impl Default for TodaySettings {
    fn default() -> Self {
        Self {
            tiles: TODAY_DEFAULT.iter().map(|t| (*t).to_owned()).collect(),
        }
    }
}

/// A Today tile's `plugin.source`, split; none when it is not one.
pub fn today_tile(tile: &str) -> Option<(&str, &str)> {
    let (plugin, source) = tile.split_once('.')?;
    let plugin_ok = !plugin.is_empty()
        && plugin
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let source_ok = !source.is_empty()
        && source
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (plugin_ok && source_ok).then_some((plugin, source))
}

/// A public call the student allowed or tapped waits `undo_seconds` with a visible 撤销 before
/// anything is sent; 0 sends at once (issue 41.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PublicSettings {
    pub undo_seconds: u32,
}

impl Default for PublicSettings {
    fn default() -> Self {
        Self { undo_seconds: 10 }
    }
}

/// An ask nobody answers within `timeout_minutes` is declined, and the turn told so
/// (issue 41.3): a phone left in a pocket never keeps a turn waiting for good.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ApprovalSettings {
    pub timeout_minutes: u32,
}

impl Default for ApprovalSettings {
    fn default() -> Self {
        Self {
            timeout_minutes: 10,
        }
    }
}

/// How much the agent may spend: per payment and per local day in the settings time zone,
/// in whole yuan (`money.perPaymentYuan`, `money.perDayYuan`). A payment past either is
/// refused `over_limit`; raising one is a protected change (DESIGN.md §3 8e).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MoneyLimits {
    pub per_payment_yuan: u32,
    pub per_day_yuan: u32,
}

impl Default for MoneyLimits {
    fn default() -> Self {
        Self {
            per_payment_yuan: 100,
            per_day_yuan: 200,
        }
    }
}

impl MoneyLimits {
    /// Sets the limit named by `key` (as [`parse_change`] checked it).
    pub fn set(&mut self, key: &str, value: u32) {
        match key {
            "money.perPaymentYuan" => self.per_payment_yuan = value,
            "money.perDayYuan" => self.per_day_yuan = value,
            _ => {}
        }
    }
}

/// How far one turn of the agent may go. Each is a setting (`agent.maxModelRequests`, …), so a
/// student whose tasks are long can raise them; a turn that reaches one stops and says which.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentLimits {
    pub max_model_requests: u32,
    pub max_tool_calls: u32,
    pub max_tokens_per_turn: u64,
}

impl Default for AgentLimits {
    fn default() -> Self {
        Self {
            max_model_requests: 25,
            max_tool_calls: 50,
            max_tokens_per_turn: 200_000,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            appearance: Appearance::System,
            language: Language::Zh,
            time_zone: "Asia/Shanghai".into(),
            model: ModelSettings::default(),
            official_host: DEFAULT_OFFICIAL_HOST.into(),
            agent: AgentLimits::default(),
            campus: CampusSettings::default(),
            money: MoneyLimits::default(),
            public: PublicSettings::default(),
            approvals: ApprovalSettings::default(),
            today: TodaySettings::default(),
        }
    }
}

impl Settings {
    /// Each setting as the row it is stored in, keyed as the settings keys are named
    /// (`model.endpoint`): a change writes its own key and nothing else.
    pub fn rows(&self) -> Vec<(String, Value)> {
        flatten(serde_json::to_value(self).expect("settings serialise"))
    }

    /// The settings from their stored rows; a key missing keeps its default, a key this
    /// version does not know is ignored. An error names the key that does not parse.
    pub fn from_rows(rows: &[(String, Value)]) -> Result<Self, String> {
        let mut value = serde_json::to_value(Settings::default()).expect("settings serialise");
        let known: Vec<String> = Settings::default()
            .rows()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        for (key, stored) in rows.iter().filter(|(k, _)| known.contains(k)) {
            let mut slot = &mut value;
            for part in key.split('.') {
                slot = &mut slot[part];
            }
            *slot = stored.clone();
            let check: Result<Settings, _> = serde_json::from_value(value.clone());
            check.map_err(|e| format!("settings.{key}: {e}"))?;
        }
        serde_json::from_value(value).map_err(|e| format!("settings: {e}"))
    }
}

/// The settings table's row of the values a restore left pending (no setting's key).
const RESTORE_PENDING_KEY: &str = "cloudRestorePending";

/// The settings whose stored row is keyed otherwise than the change that sets them (the row
/// predates the key).
const ROW_KEYS: [(&str, &str); 1] = [("officialHost", "plugins.officialHost")];

impl Settings {
    /// Each setting under the key [`parse_change`] takes, with its value.
    pub fn keyed(&self) -> Vec<(String, Value)> {
        self.rows()
            .into_iter()
            .map(|(row, value)| {
                let key = ROW_KEYS
                    .iter()
                    .find(|(stored, _)| *stored == row)
                    .map_or(row, |(_, key)| (*key).to_owned());
                (key, value)
            })
            .collect()
    }
}

pub use crate::store::schema::flatten;

/// The owner of the app settings: one row per key in the `settings` table.
pub struct AppSettings {
    store: Arc<Store>,
    settings: Mutex<Held>,
}

/// The settings as saved, and as in effect: the same, unless a shell put a value in effect for
/// now ([`AppSettings::use_for_now`]) that is not saved yet.
struct Held {
    saved: Settings,
    in_effect: Settings,
}

/// The rows of `next` that differ from `before`'s.
fn changed_rows(before: &Settings, next: &Settings) -> Vec<(String, Value)> {
    let before = before.rows();
    next.rows()
        .into_iter()
        .filter(|row| !before.contains(row))
        .collect()
}

impl AppSettings {
    pub(crate) fn load(store: Arc<Store>) -> Result<Self, StoreError> {
        let rows = store.read(|c| values(c, Table::Settings))?;
        let settings = Settings::from_rows(&rows).map_err(StoreError::Corrupt)?;
        Ok(Self {
            store,
            settings: Mutex::new(Held {
                saved: settings.clone(),
                in_effect: settings,
            }),
        })
    }

    /// The settings in effect.
    pub fn get(&self) -> Settings {
        crate::lock(&self.settings).in_effect.clone()
    }

    /// Applies `f` to a copy of the saved settings, writes the rows of the keys that changed,
    /// then puts the copy in place, and applies `f` to the settings in effect too. Only those
    /// rows are written, so a change never carries a stale copy of another key over a newer
    /// one, nor a value that is only in effect for now.
    pub fn change(&self, f: impl Fn(&mut Settings)) -> Result<(), StoreError> {
        let mut held = crate::lock(&self.settings);
        let mut next = held.saved.clone();
        f(&mut next);
        self.write(&changed_rows(&held.saved, &next))?;
        held.saved = next;
        f(&mut held.in_effect);
        Ok(())
    }

    /// Applies `f` to the settings in effect only: nothing is written, and the value lasts
    /// until [`Self::save_in_effect`] saves it or the settings are loaded again.
    pub fn use_for_now(&self, f: impl FnOnce(&mut Settings)) {
        f(&mut crate::lock(&self.settings).in_effect);
    }

    /// Saves the values [`Self::use_for_now`] put in effect.
    pub fn save_in_effect(&self) -> Result<(), StoreError> {
        let mut held = crate::lock(&self.settings);
        self.write(&changed_rows(&held.saved, &held.in_effect))?;
        held.saved = held.in_effect.clone();
        Ok(())
    }

    /// What restores of the app's backup left for the student (issue 39.5): each value the
    /// backup holds looser than the one in effect, as its key and value, until the student
    /// applies or dismisses it on the 云端 screen. Kept in the settings table under its own
    /// row, which no setting reads.
    pub fn restore_pending(&self) -> Result<Vec<(String, Value)>, StoreError> {
        let _held = crate::lock(&self.settings);
        self.read_restore_pending()
    }

    fn read_restore_pending(&self) -> Result<Vec<(String, Value)>, StoreError> {
        let rows = self.store.read(|c| values(c, Table::Settings))?;
        match rows.into_iter().find(|(k, _)| k == RESTORE_PENDING_KEY) {
            Some((_, value)) => serde_json::from_value(value)
                .map_err(|e| StoreError::Corrupt(format!("settings.{RESTORE_PENDING_KEY}: {e}"))),
            None => Ok(Vec::new()),
        }
    }

    /// Changes the restore's pending values by `f`, read and written under the settings' lock.
    pub(crate) fn change_restore_pending(
        &self,
        f: impl FnOnce(&mut Vec<(String, Value)>),
    ) -> Result<(), StoreError> {
        let _held = crate::lock(&self.settings);
        let mut pending = self.read_restore_pending()?;
        f(&mut pending);
        self.store.write(|tx| {
            if pending.is_empty() {
                delete_value(tx, Table::Settings, RESTORE_PENDING_KEY)
            } else {
                put_value(tx, Table::Settings, RESTORE_PENDING_KEY, &pending)
            }
        })
    }

    fn write(&self, rows: &[(String, Value)]) -> Result<(), StoreError> {
        self.store.write(|tx| {
            rows.iter()
                .try_for_each(|(key, value)| put_value(tx, Table::Settings, key, value))
        })
    }
}

/// One checked change.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    Appearance(Appearance),
    Language(Language),
    TimeZone(String),
    ModelName(String),
    ModelEndpoint(String),
    /// `model.temperature`; none leaves it to the provider's.
    ModelTemperature(Option<Temperature>),
    /// `model.maxTokens`; none leaves it to the provider's.
    ModelMaxTokens(Option<u32>),
    /// `model.contextTokens`; none leaves it to the provider's context size.
    ModelContextTokens(Option<u32>),
    /// `model.monthlyCapYuan`; none is no cap.
    ModelMonthlyCap(Option<u32>),
    /// `model.priceYuanPerMillion`; none gives the price table's back.
    ModelPrice(Option<crate::agent::prices::Price>),
    /// One of the agent's guards, by its key (`agent.maxToolCalls`); at least 1.
    AgentLimit {
        key: String,
        value: u64,
    },
    /// One of the money limits, by its key (`money.perDayYuan`), in whole yuan; 0 lets the
    /// agent pay nothing.
    MoneyLimit {
        key: String,
        value: u32,
    },
    /// `public.undoSeconds` (0 turns the undo window off) or `approvals.timeoutMinutes` (at
    /// least 1).
    Wait {
        key: String,
        value: u32,
    },
    PluginEnabled {
        plugin: String,
        enabled: bool,
    },
    PluginMode {
        plugin: String,
        effect: Effect,
        mode: Mode,
    },
    PluginPreferences {
        plugin: String,
        value: Value,
    },
    /// The global rules, replaced whole.
    Rules(Vec<Rule>),
    /// The campus services the session may be sent to (`campus.hosts`), replaced whole.
    CampusHosts(Vec<String>),
    /// The semester's first Monday (`campus.semesterStart`), checked to be a Monday.
    SemesterStart(String),
    /// The host official plugin documents are installed from (`plugins.officialHost`).
    OfficialHost(String),
    /// Today's tiles (`today.tiles`), replaced whole, each `plugin.source`; that each names a
    /// plugin's data source is checked by the engine, which knows the plugins.
    TodayTiles(Vec<String>),
}

/// A change that cannot be made, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("settings key \"{key}\": {message}")]
pub struct SettingsError {
    pub key: String,
    pub message: String,
}

impl SettingsError {
    pub fn new(key: &str, message: impl Into<String>) -> Self {
        Self {
            key: key.to_owned(),
            message: message.into(),
        }
    }
}

/// The keys the agent may change, for the tool's description and the error that lists them.
pub const KEYS: &str = "appearance, language, timeZone, model.name, model.endpoint, model.temperature, model.maxTokens, model.contextTokens, model.monthlyCapYuan, model.priceYuanPerMillion, agent.maxModelRequests, agent.maxToolCalls, agent.maxTokensPerTurn, money.perPaymentYuan, money.perDayYuan, public.undoSeconds, approvals.timeoutMinutes, campus.hosts, campus.semesterStart, today.tiles, plugins.officialHost, plugins.<id>.enabled, plugins.<id>.modes.<effect>, plugins.<id>.preferences, rules";

/// Checks that `text` is a bare host name — what the campus list and the official host hold,
/// and what the network gate compares a URL's host with — and returns it lowercased. A scheme,
/// path, port or user part would never match a host, so each is refused with what to remove.
fn host_name(text: &str) -> Result<String, String> {
    let host = text.trim();
    if host.is_empty() {
        return Err("a host name is empty".into());
    }
    if host.contains("://") {
        return Err(format!(
            "\"{host}\" has a scheme; give the host name only (e.g. portal.pku.edu.cn)"
        ));
    }
    for (what, mark) in [
        ("a path", '/'),
        ("a port", ':'),
        ("a user part", '@'),
        ("a query", '?'),
        ("a fragment", '#'),
    ] {
        if host.contains(mark) {
            return Err(format!(
                "\"{host}\" has {what} ('{mark}'); give the host name only (e.g. portal.pku.edu.cn)"
            ));
        }
    }
    let lower = host.to_ascii_lowercase();
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    if lower.len() > 253 || !lower.split('.').all(label_ok) {
        return Err(format!(
            "\"{host}\" is not a host name: use letters, digits and hyphens between dots"
        ));
    }
    Ok(lower)
}

/// Query parameters that carry a credential in the URLs of model providers.
const CREDENTIAL_PARAMETERS: [&str; 8] = [
    "key",
    "api_key",
    "api-key",
    "apikey",
    "token",
    "access_token",
    "secret",
    "password",
];

/// What in an endpoint URL is a credential: a user name or password before the host, or a
/// query parameter that providers use for a key. Settings are stored in SQLite and shown on
/// screens and in the audit log; a key there leaks (DESIGN.md §6: secrets go to the keystore).
fn credential_in(endpoint: &str) -> Option<&'static str> {
    let url = url::Url::parse(endpoint).ok()?;
    if !url.username().is_empty() || url.password().is_some() {
        return Some("user:password@ before the host");
    }
    url.query_pairs()
        .any(|(name, _)| {
            CREDENTIAL_PARAMETERS
                .iter()
                .any(|p| name.eq_ignore_ascii_case(p))
        })
        .then_some("a key= or token= query parameter")
}

/// Parses `key` and `value` into a change, checking the value's shape. Whether the plugin
/// exists and its preferences schema are checked by the engine, which knows the plugins.
pub fn parse_change(key: &str, value: &Value) -> Result<Change, SettingsError> {
    let fail = |message: String| SettingsError::new(key, message);
    let text = || {
        value
            .as_str()
            .ok_or_else(|| fail(format!("expected a string, got {value}")))
    };
    match key {
        "appearance" => serde_json::from_value(value.clone())
            .map(Change::Appearance)
            .map_err(|_| {
                fail(format!(
                    "{value} is not an appearance; use light, dark or system"
                ))
            }),
        "language" => serde_json::from_value(value.clone())
            .map(Change::Language)
            .map_err(|_| fail(format!("{value} is not a language; use zh or en"))),
        "timeZone" => {
            let name = text()?;
            crate::zone::Zone::named(name)
                .map(|_| Change::TimeZone(name.to_owned()))
                .map_err(|_| {
                    fail(format!(
                        "\"{name}\" is not an IANA time zone name (for example Asia/Shanghai)"
                    ))
                })
        }
        "model.name" => {
            let name = text()?;
            if name.trim().is_empty() {
                return Err(fail("the model name is empty".into()));
            }
            Ok(Change::ModelName(name.to_owned()))
        }
        "model.endpoint" => {
            let endpoint = text()?;
            if let Some(what) = credential_in(endpoint) {
                // The message never repeats the URL: it holds the secret.
                return Err(fail(format!(
                    "the URL holds a credential ({what}); an API key goes in Settings → Model → API key, which keeps it in the keystore, never in the URL"
                )));
            }
            match url::Url::parse(endpoint) {
                Ok(url) if url.scheme() == "https" && url.host_str().is_some() => {
                    Ok(Change::ModelEndpoint(endpoint.to_owned()))
                }
                // A model served on the phone or computer itself (a local server, the demo's
                // scripted model) never crosses a network, so plain HTTP is allowed there only.
                Ok(url) if url.scheme() == "http" && is_loopback(&url) => {
                    Ok(Change::ModelEndpoint(endpoint.to_owned()))
                }
                _ => Err(fail(format!(
                    "\"{endpoint}\" is not an https URL (plain http only to 127.0.0.1, ::1 or localhost)"
                ))),
            }
        }
        // null gives the value back to the provider's (agent::providers).
        "model.temperature" => match value.as_f64() {
            _ if value.is_null() => Ok(Change::ModelTemperature(None)),
            Some(t) if TEMPERATURES.contains(&t) => Ok(Change::ModelTemperature(Some(Temperature(t)))),
            _ => Err(fail(format!(
                "expected a number from 0 to 2 (lower answers more steadily), or null for the provider's, got {value}"
            ))),
        },
        "model.maxTokens" => match value.as_u64().and_then(|n| u32::try_from(n).ok()) {
            _ if value.is_null() => Ok(Change::ModelMaxTokens(None)),
            Some(n) if MAX_TOKENS.contains(&n) => Ok(Change::ModelMaxTokens(Some(n))),
            _ => Err(fail(format!(
                "expected a whole number of tokens from 16 to 131072, or null for the provider's, got {value}"
            ))),
        },
        "model.contextTokens" => match value.as_u64().and_then(|n| u32::try_from(n).ok()) {
            _ if value.is_null() => Ok(Change::ModelContextTokens(None)),
            Some(n) if CONTEXT_TOKENS.contains(&n) => Ok(Change::ModelContextTokens(Some(n))),
            _ => Err(fail(format!(
                "expected a whole number of tokens from 2048 to 2000000 (the model's context size), or null for the provider's, got {value}"
            ))),
        },
        "model.monthlyCapYuan" => match value.as_u64().and_then(|n| u32::try_from(n).ok()) {
            _ if value.is_null() => Ok(Change::ModelMonthlyCap(None)),
            Some(n) => Ok(Change::ModelMonthlyCap(Some(n))),
            None => Err(fail(format!(
                "expected a whole number of yuan (0 or more), or null for no cap, got {value}"
            ))),
        },
        "model.priceYuanPerMillion" => {
            if value.is_null() {
                return Ok(Change::ModelPrice(None));
            }
            match serde_json::from_value::<crate::agent::prices::Price>(value.clone()) {
                Ok(p) if [p.input, p.cached_input, p.output]
                    .iter()
                    .all(|y| y.is_finite() && (0.0..=10_000.0).contains(y)) =>
                {
                    Ok(Change::ModelPrice(Some(p)))
                }
                _ => Err(fail(format!(
                    "expected {{\"input\": 元, \"cachedInput\": 元, \"output\": 元}} per million tokens (each 0 to 10000), or null for the price table's, got {value}"
                ))),
            }
        }
        "agent.maxModelRequests" | "agent.maxToolCalls" | "agent.maxTokensPerTurn" => {
            match value.as_u64() {
                Some(n)
                    if n >= 1 && (key == "agent.maxTokensPerTurn" || n <= u64::from(u32::MAX)) =>
                {
                    Ok(Change::AgentLimit {
                        key: key.to_owned(),
                        value: n,
                    })
                }
                _ => Err(fail(format!(
                    "expected a whole number of at least 1, got {value}"
                ))),
            }
        }
        "money.perPaymentYuan" | "money.perDayYuan" => {
            match value.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) => Ok(Change::MoneyLimit {
                    key: key.to_owned(),
                    value: n,
                }),
                None => Err(fail(format!(
                    "expected a whole number of yuan (0 or more), got {value}"
                ))),
            }
        }
        "public.undoSeconds" | "approvals.timeoutMinutes" => {
            let least = u64::from(key == "approvals.timeoutMinutes");
            match value
                .as_u64()
                .filter(|n| *n >= least)
                .and_then(|n| u32::try_from(n).ok())
            {
                Some(n) => Ok(Change::Wait {
                    key: key.to_owned(),
                    value: n,
                }),
                None => Err(fail(format!(
                    "expected a whole number of at least {least}, got {value}"
                ))),
            }
        }
        "rules" => serde_json::from_value(value.clone())
            .map(Change::Rules)
            .map_err(|e| fail(format!("not a list of rules: {e}"))),
        "campus.hosts" => {
            let list = value
                .as_array()
                .ok_or_else(|| fail(format!("expected a JSON array of host names, got {value}")))?;
            let mut hosts: Vec<String> = Vec::with_capacity(list.len());
            for (i, item) in list.iter().enumerate() {
                let text = item.as_str().ok_or_else(|| {
                    fail(format!("item {i}: expected a host name string, got {item}"))
                })?;
                let host = host_name(text).map_err(|e| fail(format!("item {i}: {e}")))?;
                if hosts.contains(&host) {
                    return Err(fail(format!("item {i}: \"{host}\" is listed twice")));
                }
                hosts.push(host);
            }
            Ok(Change::CampusHosts(hosts))
        }
        "today.tiles" => {
            let list = value.as_array().ok_or_else(|| {
                fail(format!(
                    "expected a JSON array of data sources (\"wallet.balance\"), got {value}"
                ))
            })?;
            if list.len() > TODAY_TILES {
                return Err(fail(format!(
                    "{} tiles; Today holds at most {TODAY_TILES}",
                    list.len()
                )));
            }
            let mut tiles: Vec<String> = Vec::with_capacity(list.len());
            for (i, item) in list.iter().enumerate() {
                let tile = item
                    .as_str()
                    .filter(|t| today_tile(t).is_some())
                    .ok_or_else(|| {
                        fail(format!(
                            "item {i}: expected a plugin's data source as plugin.source \
                             (\"wallet.balance\"), got {item}"
                        ))
                    })?;
                if tiles.iter().any(|t| t == tile) {
                    return Err(fail(format!("item {i}: \"{tile}\" is listed twice")));
                }
                tiles.push(tile.to_owned());
            }
            Ok(Change::TodayTiles(tiles))
        }
        "campus.semesterStart" => crate::campus_time::parse_semester_start(text()?)
            .map(|date| Change::SemesterStart(date.to_string()))
            .map_err(fail),
        "plugins.officialHost" => host_name(text()?).map(Change::OfficialHost).map_err(fail),
        // The message never repeats the value: it is the key.
        crate::secrets::keys::MODEL_API_KEY => Err(fail(
            "the API key is a secret, not a setting: the user enters it in Settings → Model → API key, which keeps it in the keystore".into(),
        )),
        _ => parse_plugin_change(key, value).unwrap_or_else(|| Err(fail(unknown_key(key)))),
    }
}

/// Why `key` is not a settings key: the keys it is close to first — the same last part
/// (`officialHost` for `plugins.officialHost`), another case, or at most two letters off — then
/// every key.
fn unknown_key(key: &str) -> String {
    let mut keys: Vec<String> = KEYS.split(", ").map(str::to_owned).collect();
    // A plugin's keys, for the plugin the key names (`plugins.wallet.mode.money`).
    if let Some((plugin, _)) = key.strip_prefix("plugins.").and_then(|r| r.split_once('.')) {
        keys.push(format!("plugins.{plugin}.enabled"));
        for effect in Effect::ALL {
            keys.push(format!("plugins.{plugin}.modes.{effect}"));
        }
        keys.push(format!("plugins.{plugin}.preferences"));
    }
    let folded = key.to_lowercase();
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_lowercase();
    let close: Vec<String> = keys
        .into_iter()
        .filter(|k| {
            let k_folded = k.to_lowercase();
            last(k) == last(key) || edit_distance(&k_folded, &folded) <= 2
        })
        .map(|k| format!("\"{k}\""))
        .collect();
    if close.is_empty() {
        format!("unknown key; the keys are {KEYS}")
    } else {
        format!(
            "unknown key; did you mean {}? The keys are {KEYS}",
            close.join(" or ")
        )
    }
}

/// The Levenshtein distance between two texts, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    }
}

impl AgentLimits {
    /// Sets the guard named by `key` (as [`parse_change`] checked it).
    pub fn set(&mut self, key: &str, value: u64) {
        let small = u32::try_from(value).unwrap_or(u32::MAX);
        match key {
            "agent.maxModelRequests" => self.max_model_requests = small,
            "agent.maxToolCalls" => self.max_tool_calls = small,
            "agent.maxTokensPerTurn" => self.max_tokens_per_turn = value,
            _ => {}
        }
    }
}

fn parse_plugin_change(key: &str, value: &Value) -> Option<Result<Change, SettingsError>> {
    let rest = key.strip_prefix("plugins.")?;
    let (plugin, field) = rest.split_once('.')?;
    let plugin = plugin.to_owned();
    let fail = |message: String| SettingsError::new(key, message);
    Some(match field {
        "enabled" => value
            .as_bool()
            .map(|enabled| Change::PluginEnabled { plugin, enabled })
            .ok_or_else(|| fail(format!("expected true or false, got {value}"))),
        "preferences" if value.is_object() => Ok(Change::PluginPreferences {
            plugin,
            value: value.clone(),
        }),
        "preferences" => Err(fail(format!("expected an object, got {value}"))),
        _ => {
            let effect_name = field.strip_prefix("modes.")?;
            let effect = match Effect::parse(effect_name) {
                Some(e) => e,
                None => {
                    return Some(Err(fail(format!(
                        "\"{effect_name}\" is not an effect; use read, write, money or public"
                    ))));
                }
            };
            value
                .as_str()
                .and_then(Mode::parse)
                .map(|mode| Change::PluginMode {
                    plugin,
                    effect,
                    mode,
                })
                .ok_or_else(|| fail(format!("{value} is not a mode; use auto, ask or off")))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(key: &str, value: Value) -> String {
        parse_change(key, &value).unwrap_err().to_string()
    }

    #[test]
    fn each_valid_key_parses() {
        assert_eq!(
            parse_change("appearance", &json!("dark")),
            Ok(Change::Appearance(Appearance::Dark))
        );
        assert_eq!(
            parse_change("language", &json!("en")),
            Ok(Change::Language(Language::En))
        );
        assert_eq!(
            parse_change("timeZone", &json!("Europe/London")),
            Ok(Change::TimeZone("Europe/London".into()))
        );
        assert_eq!(
            parse_change("model.name", &json!("deepseek-chat")),
            Ok(Change::ModelName("deepseek-chat".into()))
        );
        assert_eq!(
            parse_change("plugins.wallet.modes.money", &json!("ask")),
            Ok(Change::PluginMode {
                plugin: "wallet".into(),
                effect: Effect::Money,
                mode: Mode::Ask
            })
        );
        assert_eq!(
            parse_change("plugins.wallet.enabled", &json!(false)),
            Ok(Change::PluginEnabled {
                plugin: "wallet".into(),
                enabled: false
            })
        );
    }

    #[test]
    fn each_validation_error_names_the_key() {
        assert_eq!(
            err("appearance", json!("neon")),
            "settings key \"appearance\": \"neon\" is not an appearance; use light, dark or system"
        );
        assert_eq!(
            err("language", json!("fr")),
            "settings key \"language\": \"fr\" is not a language; use zh or en"
        );
        assert_eq!(
            err("timeZone", json!("Mars/Olympus_Mons")),
            "settings key \"timeZone\": \"Mars/Olympus_Mons\" is not an IANA time zone name (for example Asia/Shanghai)"
        );
        assert_eq!(
            err("timeZone", json!(8)),
            "settings key \"timeZone\": expected a string, got 8"
        );
        assert_eq!(
            err("model.name", json!("  ")),
            "settings key \"model.name\": the model name is empty"
        );
        assert_eq!(
            err("model.endpoint", json!("http://api.example.com")),
            "settings key \"model.endpoint\": \"http://api.example.com\" is not an https URL (plain http only to 127.0.0.1, ::1 or localhost)"
        );
        assert_eq!(
            parse_change("model.endpoint", &json!("http://127.0.0.1:8080/v1")),
            Ok(Change::ModelEndpoint("http://127.0.0.1:8080/v1".into()))
        );
        assert_eq!(
            err("agent.maxToolCalls", json!(0)),
            "settings key \"agent.maxToolCalls\": expected a whole number of at least 1, got 0"
        );
        assert_eq!(
            err("plugins.wallet.enabled", json!("yes")),
            "settings key \"plugins.wallet.enabled\": expected true or false, got \"yes\""
        );
        assert_eq!(
            err("plugins.wallet.modes.cash", json!("ask")),
            "settings key \"plugins.wallet.modes.cash\": \"cash\" is not an effect; use read, write, money or public"
        );
        assert_eq!(
            err("plugins.wallet.modes.money", json!("never")),
            "settings key \"plugins.wallet.modes.money\": \"never\" is not a mode; use auto, ask or off"
        );
        assert_eq!(
            err("plugins.wallet.preferences", json!(3)),
            "settings key \"plugins.wallet.preferences\": expected an object, got 3"
        );
        assert!(
            err("rules", json!([{"kind": "maybe", "tool": "*"}]))
                .starts_with("settings key \"rules\": not a list of rules: ")
        );
        assert_eq!(
            err("fontSize", json!(12)),
            format!("settings key \"fontSize\": unknown key; the keys are {KEYS}")
        );
    }

    #[test]
    fn an_unknown_key_names_the_keys_close_to_it() {
        for (given, meant) in [
            ("officialHost", "\"plugins.officialHost\""),
            ("timezone", "\"timeZone\""),
            ("model.endpont", "\"model.endpoint\""),
            ("maxToolCalls", "\"agent.maxToolCalls\""),
            (
                "plugins.wallet.mode.money",
                "\"plugins.wallet.modes.money\"",
            ),
            ("enabled", "\"plugins.<id>.enabled\""),
        ] {
            assert_eq!(
                err(given, json!("x")),
                format!(
                    "settings key \"{given}\": unknown key; did you mean {meant}? The keys are {KEYS}"
                )
            );
        }
    }

    #[test]
    fn the_api_key_is_refused_as_a_setting_without_repeating_it() {
        assert_eq!(
            err("model.apiKey", json!("sk-secret")),
            "settings key \"model.apiKey\": the API key is a secret, not a setting: the user enters it in Settings → Model → API key, which keeps it in the keystore"
        );
    }

    #[test]
    fn each_keyed_setting_parses_back_with_its_value() {
        // The model's name and endpoint are empty until set, and an empty one is refused: only
        // whether the key is one `parse_change` takes is asked of them.
        for (key, value) in Settings::default().keyed() {
            match parse_change(&key, &value) {
                Ok(_) => {}
                Err(e) if key.starts_with("model.") => {
                    assert!(!e.message.starts_with("unknown key"), "{key}: {e}")
                }
                Err(e) => panic!("{key} = {value}: {e}"),
            }
        }
    }

    #[test]
    fn a_credential_in_the_model_endpoint_is_refused_without_repeating_it() {
        for url in [
            "https://user:sk-secret@api.example.com/v1",
            "https://sk-secret@api.example.com/v1",
            "https://:sk-secret@api.example.com/v1",
            "http://user:sk-secret@api.example.com/v1",
        ] {
            let message = err("model.endpoint", json!(url));
            assert_eq!(
                message,
                "settings key \"model.endpoint\": the URL holds a credential (user:password@ before the host); an API key goes in Settings → Model → API key, which keeps it in the keystore, never in the URL",
                "{url}"
            );
        }
        for url in [
            "https://api.example.com/v1?key=sk-secret",
            "https://api.example.com/v1?API_KEY=sk-secret",
            "https://api.example.com/v1?x=1&token=sk-secret",
            "https://api.example.com/v1?access_token=sk-secret",
        ] {
            let message = err("model.endpoint", json!(url));
            assert_eq!(
                message,
                "settings key \"model.endpoint\": the URL holds a credential (a key= or token= query parameter); an API key goes in Settings → Model → API key, which keeps it in the keystore, never in the URL",
                "{url}"
            );
        }
        assert_eq!(
            parse_change(
                "model.endpoint",
                &json!("https://api.example.com/v1?api-version=2024")
            ),
            Ok(Change::ModelEndpoint(
                "https://api.example.com/v1?api-version=2024".into()
            ))
        );
    }

    #[test]
    fn the_models_sampling_settings_take_their_range_or_null_for_the_providers() {
        // issue 44, item 7: the provider's values are editable, each by its own key.
        assert_eq!(
            parse_change("model.temperature", &json!(0.3)),
            Ok(Change::ModelTemperature(Some(Temperature(0.3))))
        );
        assert_eq!(
            parse_change("model.temperature", &Value::Null),
            Ok(Change::ModelTemperature(None))
        );
        assert_eq!(
            parse_change("model.maxTokens", &json!(1024)),
            Ok(Change::ModelMaxTokens(Some(1024)))
        );
        assert_eq!(
            err("model.temperature", json!(3)),
            "settings key \"model.temperature\": expected a number from 0 to 2 (lower answers more steadily), or null for the provider's, got 3"
        );
        assert_eq!(
            err("model.maxTokens", json!(0.5)),
            "settings key \"model.maxTokens\": expected a whole number of tokens from 16 to 131072, or null for the provider's, got 0.5"
        );
    }
}
