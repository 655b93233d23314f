//! Modes, presets, rules and the decision (seeds 000 and 003, merged in DESIGN.md §3).
//!
//! [`decide`] is a pure function over plain data: no I/O, no clock, no locks (STYLE.md §7).
//! Everything that waits — prompts, the network, the disk — lives around it, in `invoke`.

use std::fmt;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::registry::{Effect, Plugin, PluginKind, Tool, current_tool_id};

/// What happens when the agent calls a tool of one effect of one plugin. Ordered by
/// strictness: `Auto < Ask < Off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Auto,
    Ask,
    Off,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Ask => "ask",
            Mode::Off => "off",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [Mode::Auto, Mode::Ask, Mode::Off]
            .into_iter()
            .find(|m| m.as_str() == name)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a plugin's mode for one effect came from, for `harness tools` and the settings screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "snake_case")]
pub enum ModeSource {
    KindDefault,
    PluginDefault,
    User,
}

impl ModeSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ModeSource::KindDefault => "kind default",
            ModeSource::PluginDefault => "plugin default",
            ModeSource::User => "user",
        }
    }
}

/// seed 000, "Default modes": the table by plugin kind.
pub fn kind_default(kind: PluginKind, effect: Effect) -> Mode {
    match (kind, effect) {
        (PluginKind::Bundled | PluginKind::Official, _) => Mode::Auto,
        (PluginKind::Community | PluginKind::Remote, Effect::Read) => Mode::Auto,
        (PluginKind::Community | PluginKind::Remote, _) => Mode::Ask,
    }
}

/// The mode a plugin starts with: bundled and official `defaultModes` apply as declared;
/// community ones only where stricter than the table; remote plugins cannot set any.
pub fn default_mode(plugin: &Plugin, effect: Effect) -> (Mode, ModeSource) {
    let table = kind_default(plugin.kind, effect);
    match (plugin.kind, plugin.default_modes.get(&effect)) {
        (PluginKind::Bundled | PluginKind::Official, Some(&declared)) => {
            (declared, ModeSource::PluginDefault)
        }
        (PluginKind::Community, Some(&declared)) if declared > table => {
            (declared, ModeSource::PluginDefault)
        }
        _ => (table, ModeSource::KindDefault),
    }
}

/// The modes the user set. A mode the user set wins over every default.
#[derive(Debug, Clone, Default)]
pub struct UserModes {
    by_plugin: FxHashMap<String, [Option<Mode>; 4]>,
}

impl UserModes {
    pub fn set(&mut self, plugin: &str, effect: Effect, mode: Mode) {
        self.by_plugin.entry(plugin.to_owned()).or_default()[effect as usize] = Some(mode);
    }

    /// Forgets the mode the user set for one effect of `plugin`: its default applies again.
    pub fn unset(&mut self, plugin: &str, effect: Effect) {
        if let Some(modes) = self.by_plugin.get_mut(plugin) {
            modes[effect as usize] = None;
        }
    }

    /// Forgets every mode the user set for `plugin` (it was removed).
    pub fn forget(&mut self, plugin: &str) {
        self.by_plugin.remove(plugin);
    }

    pub fn get(&self, plugin: &str, effect: Effect) -> Option<Mode> {
        self.by_plugin
            .get(plugin)
            .and_then(|modes| modes[effect as usize])
    }

    /// The mode in force and where it came from.
    pub fn effective(&self, plugin: &Plugin, effect: Effect) -> (Mode, ModeSource) {
        match self.get(&plugin.id, effect) {
            Some(mode) => (mode, ModeSource::User),
            None => default_mode(plugin, effect),
        }
    }

    /// Every mode the user set, as (plugin, effect, mode).
    pub fn iter(&self) -> impl Iterator<Item = (&str, Effect, Mode)> {
        self.by_plugin.iter().flat_map(|(plugin, modes)| {
            Effect::ALL
                .into_iter()
                .filter_map(move |e| modes[e as usize].map(|m| (plugin.as_str(), e, m)))
        })
    }
}

/// The three rungs over the plugin modes (DESIGN.md §3). Ordered by strictness.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    SkipAll,
    #[default]
    AutoEdit,
    AskEveryTime,
}

impl Preset {
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::SkipAll => "skip_all",
            Preset::AutoEdit => "auto_edit",
            Preset::AskEveryTime => "ask_every_time",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Preset::SkipAll => "Skip all permissions",
            Preset::AutoEdit => "Auto-edit",
            Preset::AskEveryTime => "Ask every time",
        }
    }
}

/// Who made a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "lowercase")]
pub enum Actor {
    /// A tap on a screen or a widget button.
    User,
    /// The model, inside a turn.
    Agent,
    /// A scheduled check or agent job.
    Scheduler,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::User => "user",
            Actor::Agent => "agent",
            Actor::Scheduler => "scheduler",
        }
    }
}

/// What a rule does to the calls it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    Deny,
    Ask,
    Allow,
}

impl RuleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Deny => "deny",
            RuleKind::Ask => "ask",
            RuleKind::Allow => "allow",
        }
    }
}

/// `{kind, tool: "<plugin>.<tool>" | "<plugin>.*" | "*", effect?, when?}`. `when` holds
/// top-level input fields that must all equal the call's for the rule to match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub kind: RuleKind,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Effect>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Map<String, Value>>,
}

impl Rule {
    fn matches(&self, tool: &Tool, input: &Value) -> bool {
        if self.effect.is_some_and(|e| e != tool.effect) {
            return false;
        }
        match &self.when {
            None => true,
            Some(fields) => fields
                .iter()
                .all(|(k, v)| input.get(k).is_some_and(|given| same_value(given, v))),
        }
    }
}

/// Whether a call's input value is the value a rule names. Numbers compare by value, however
/// they are written (`500`, `500.0`, `5e2` and `500.00000000000001` all reach the tool as 500),
/// so a deny rule cannot be stepped around by spelling; strings compare exactly.
fn same_value(given: &Value, wanted: &Value) -> bool {
    match (given, wanted) {
        (Value::Number(a), Value::Number(b)) => same_number(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, x)| b.get(k).is_some_and(|y| same_value(x, y)))
        }
        _ => given == wanted,
    }
}

fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    // An integer as i128 holds every i64 and u64 exactly.
    let int = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    // A float equals an integer only when it is that integer exactly: a whole, finite float
    // within i128 converts without loss, so no rounding through f64 makes two values meet.
    let whole = |f: f64| {
        (f.is_finite() && f.fract() == 0.0 && f.abs() < 2f64.powi(126)).then_some(f as i128)
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => x == y,
        (Some(x), None) => b.as_f64().and_then(whole) == Some(x),
        (None, Some(y)) => a.as_f64().and_then(whole) == Some(y),
        (None, None) => a.as_f64() == b.as_f64(),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "rules[{index}].tool: \"{pattern}\" is not a rule pattern; use \"<plugin>.<tool>\", \"<plugin>.*\" or \"*\""
)]
pub struct RuleError {
    pub index: usize,
    pub pattern: String,
}

/// Rules of one scope (global, or one conversation's), indexed by the tool id or plugin id
/// their pattern names, so a call looks up its few candidates instead of scanning every rule.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
    by_key: FxHashMap<String, Vec<u32>>,
    any: Vec<u32>,
}

impl RuleSet {
    pub fn new(rules: Vec<Rule>) -> Result<Self, RuleError> {
        let mut by_key: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        let mut any = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            let slot = index as u32;
            if rule.tool == "*" {
                any.push(slot);
                continue;
            }
            let key = match rule.tool.split_once('.') {
                // `plugin.*` is keyed by the plugin id, which never holds a dot; an exact
                // pattern by the tool id, which always does, so the two never collide.
                Some((plugin, "*")) if valid_part(plugin) => plugin,
                // A rule made before a shipped plugin renamed its tool still names that tool.
                Some((plugin, tool)) if valid_part(plugin) && valid_part(tool) => {
                    current_tool_id(&rule.tool)
                }
                _ => {
                    return Err(RuleError {
                        index,
                        pattern: rule.tool.clone(),
                    });
                }
            };
            by_key.entry(key.to_owned()).or_default().push(slot);
        }
        Ok(Self { rules, by_key, any })
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The lowest-numbered matching rule of each kind, found in one pass over the call's
    /// candidates.
    pub fn matches(&self, tool: &Tool, input: &Value) -> Matched<u32> {
        let mut found = Matched::default();
        for i in self.candidates(tool) {
            let rule = &self.rules[i as usize];
            let slot = found.of_kind(rule.kind);
            if slot.is_none_or(|j| i < j) && rule.matches(tool, input) {
                *slot = Some(i);
            }
        }
        found
    }

    /// The lowest-numbered rule of `kind` that matches this call.
    pub fn first_match(&self, kind: RuleKind, tool: &Tool, input: &Value) -> Option<u32> {
        *self.matches(tool, input).of_kind(kind)
    }

    /// Whether a rule of `kind` matches every call of this tool, whatever its input.
    pub fn covers(&self, kind: RuleKind, tool: &Tool) -> bool {
        self.candidates(tool).any(|i| {
            let rule = &self.rules[i as usize];
            rule.kind == kind && rule.when.is_none() && rule.effect.is_none_or(|e| e == tool.effect)
        })
    }

    fn candidates<'s>(&'s self, tool: &Tool) -> impl Iterator<Item = u32> + 's {
        let exact = self
            .by_key
            .get(tool.id.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let plugin = self
            .by_key
            .get(tool.plugin.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        exact.iter().chain(plugin).chain(&self.any).copied()
    }
}

fn valid_part(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The matching rule of each kind, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Matched<T> {
    pub deny: Option<T>,
    pub ask: Option<T>,
    pub allow: Option<T>,
}

impl<T> Default for Matched<T> {
    fn default() -> Self {
        Self {
            deny: None,
            ask: None,
            allow: None,
        }
    }
}

impl<T> Matched<T> {
    fn of_kind(&mut self, kind: RuleKind) -> &mut Option<T> {
        match kind {
            RuleKind::Deny => &mut self.deny,
            RuleKind::Ask => &mut self.ask,
            RuleKind::Allow => &mut self.allow,
        }
    }
}

/// Which rule set a deciding rule came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "snake_case")]
pub enum RuleScope {
    Global,
    Conversation,
}

/// A deciding rule: its set and its index in that set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RuleRef {
    pub scope: RuleScope,
    pub index: u32,
}

/// The tool's own scope check (a path outside the conversation's roots, a host outside the
/// allowlist, an app outside Copilot's scope) — or its explicit allowance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCheck {
    #[default]
    Pass,
    Deny,
    Allow,
}

/// Whether the tool can be reached at all (step 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Availability {
    Ready,
    NoSuchTool,
    NotInstalled,
    Disabled,
    /// A `requires` entry the phone does not provide.
    Unmet,
}

/// Everything the decision looks at, as plain values.
#[derive(Clone, Copy, Debug)]
pub struct Facts<'a> {
    pub actor: Actor,
    /// `None` when no tool has the called id.
    pub tool: Option<&'a Tool>,
    pub availability: Availability,
    pub terms_accepted: bool,
    pub input: &'a Value,
    pub input_valid: bool,
    /// The mode in force for the tool's plugin and effect.
    pub mode: Mode,
    pub preset: Preset,
    pub plan_mode: bool,
    /// The turn has taken in untrusted content.
    pub tainted: bool,
    pub check: ToolCheck,
    /// A settings change that loosens a permission.
    pub sensitive: bool,
    /// The tool's resolveEffect named a target for this call.
    pub has_target: bool,
    /// A money tool's declared amount against the student's limits; `None` when the tool
    /// declares no amount.
    pub money: Option<MoneyFacts>,
}

/// A money call's amount, the student's limits and what was paid today, in fen; and whether its
/// payee was paid before (DESIGN.md §3 8e). Gathered by `invoke`, so the decision stays pure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoneyFacts {
    pub amount_fen: u64,
    pub per_payment_fen: u64,
    pub per_day_fen: u64,
    /// Paid today (the local day in the settings time zone), before this call.
    pub spent_today_fen: u64,
    /// `None` when the tool declares no payee; `Some(false)` for a payee never paid before.
    pub payee_known: Option<bool>,
}

impl MoneyFacts {
    /// The limit this call would pass, if any: per payment first, then per day.
    pub fn over(&self) -> Option<Limit> {
        if self.amount_fen > self.per_payment_fen {
            Some(Limit::PerPayment)
        } else if self.spent_today_fen.saturating_add(self.amount_fen) > self.per_day_fen {
            Some(Limit::PerDay)
        } else {
            None
        }
    }
}

/// One of the student's money limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// `money.perPaymentYuan`
    PerPayment,
    /// `money.perDayYuan`
    PerDay,
}

impl Limit {
    /// The settings key that sets it.
    pub fn key(self) -> &'static str {
        match self {
            Limit::PerPayment => "money.perPaymentYuan",
            Limit::PerDay => "money.perDayYuan",
        }
    }
}

/// The reason a call is refused; the strings are the codes the agent sees. (Kotlin and Swift
/// name it `RefusalCode`: uniffi.toml.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "snake_case")]
pub enum Code {
    Unavailable,
    TermsNotAccepted,
    UserOnly,
    InvalidInput,
    DeniedByRule,
    Blocked,
    SchedulerReadOnly,
    Declined,
    PlanMode,
    OutOfScope,
    /// A protected change asked for in a tainted turn (DESIGN.md §3 8e).
    Tainted,
    /// A money call past the student's limit per payment or per day (DESIGN.md §3 8e).
    OverLimit,
}

impl Code {
    pub const ALL: [Code; 12] = [
        Code::Unavailable,
        Code::TermsNotAccepted,
        Code::UserOnly,
        Code::InvalidInput,
        Code::DeniedByRule,
        Code::Blocked,
        Code::SchedulerReadOnly,
        Code::Declined,
        Code::PlanMode,
        Code::OutOfScope,
        Code::Tainted,
        Code::OverLimit,
    ];

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Code::Unavailable => "unavailable",
            Code::TermsNotAccepted => "terms_not_accepted",
            Code::UserOnly => "user_only",
            Code::InvalidInput => "invalid_input",
            Code::DeniedByRule => "denied_by_rule",
            Code::Blocked => "blocked",
            Code::SchedulerReadOnly => "scheduler_read_only",
            Code::Declined => "declined",
            Code::PlanMode => "plan_mode",
            Code::OutOfScope => "out_of_scope",
            Code::Tainted => "tainted",
            Code::OverLimit => "over_limit",
        }
    }
}

/// An answer the user can give to a prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Allow,
    Deny,
    /// "Always allow" for good (一直): the mode is set to auto.
    AlwaysAllow,
    AllowOnce,
    DontAllow,
    /// "Always allow" in this conversation only (本次对话).
    AlwaysAllowConversation,
    /// "Always allow" until the local day ends (今天).
    AlwaysAllowToday,
}

/// How long an "Always allow" holds (DESIGN.md §3): the sheet names it, the allowance is stored
/// with it, and one for this conversation or today ends by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "snake_case")]
pub enum AllowanceScope {
    Conversation,
    Today,
    Always,
}

impl AllowanceScope {
    pub const ALL: [AllowanceScope; 3] = [
        AllowanceScope::Conversation,
        AllowanceScope::Today,
        AllowanceScope::Always,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AllowanceScope::Conversation => "conversation",
            AllowanceScope::Today => "today",
            AllowanceScope::Always => "always",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The answer that gives an allowance of this scope.
    pub fn answer(self) -> Answer {
        match self {
            AllowanceScope::Conversation => Answer::AlwaysAllowConversation,
            AllowanceScope::Today => Answer::AlwaysAllowToday,
            AllowanceScope::Always => Answer::AlwaysAllow,
        }
    }
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Allow => "allow",
            Answer::Deny => "deny",
            Answer::AlwaysAllow => "always_allow",
            Answer::AllowOnce => "allow_once",
            Answer::DontAllow => "dont_allow",
            Answer::AlwaysAllowConversation => "always_allow_conversation",
            Answer::AlwaysAllowToday => "always_allow_today",
        }
    }

    /// The scope of an ordinary prompt's "Always allow", in any of its three forms.
    pub fn allowance_scope(self) -> Option<AllowanceScope> {
        match self {
            Answer::AlwaysAllow => Some(AllowanceScope::Always),
            Answer::AlwaysAllowConversation => Some(AllowanceScope::Conversation),
            Answer::AlwaysAllowToday => Some(AllowanceScope::Today),
            _ => None,
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [
            Answer::Allow,
            Answer::Deny,
            Answer::AlwaysAllow,
            Answer::AllowOnce,
            Answer::DontAllow,
            Answer::AlwaysAllowConversation,
            Answer::AlwaysAllowToday,
        ]
        .into_iter()
        .find(|a| a.as_str() == name)
    }
}

/// The three prompt shapes of seed 000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "snake_case")]
pub enum PromptKind {
    /// Allow / Deny / Always allow.
    Ordinary,
    /// A grant tool: Allow once / Always allow / Don't allow; the answer never changes modes.
    Grant,
    /// An alwaysAsk or targeted tool, or any ordinary prompt in a tainted turn: Allow / Deny,
    /// never "always".
    Confirm,
    /// A grant tool's prompt in a tainted turn: Allow once / Don't allow, never "always".
    GrantOnce,
}

impl PromptKind {
    pub fn offers(self) -> &'static [Answer] {
        match self {
            PromptKind::Ordinary => &[Answer::Allow, Answer::Deny, Answer::AlwaysAllow],
            PromptKind::Grant => &[Answer::AllowOnce, Answer::AlwaysAllow, Answer::DontAllow],
            PromptKind::Confirm => &[Answer::Allow, Answer::Deny],
            PromptKind::GrantOnce => &[Answer::AllowOnce, Answer::DontAllow],
        }
    }

    /// Whether `given` answers this prompt: one of its offers, or, where an ordinary prompt
    /// offers "Always allow", that answer with a narrower scope (this conversation, today). A
    /// grant's "always" has no scope.
    pub fn accepts(self, given: Answer) -> bool {
        self.offers().contains(&given)
            || (self == PromptKind::Ordinary
                && matches!(
                    given,
                    Answer::AlwaysAllowConversation | Answer::AlwaysAllowToday
                ))
    }

    /// The prompt's own "no": what a prompt nobody answered counts as (fail closed).
    pub fn no(self) -> Answer {
        match self {
            PromptKind::Grant | PromptKind::GrantOnce => Answer::DontAllow,
            PromptKind::Ordinary | PromptKind::Confirm => Answer::Deny,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", content = "detail", rename_all = "snake_case")]
pub enum Verdict {
    Run,
    Ask(PromptKind),
    Refuse(Code),
}

/// The step of DESIGN.md §3 that decided. (Kotlin and Swift name it `DecisionStep`:
/// uniffi.toml.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum Step {
    /// 1: exists, installed, available, enabled; terms accepted.
    Availability,
    /// 2
    UserOnly,
    /// 3
    Input,
    /// 4
    DenyRule,
    /// 5
    ModeOff,
    /// 6
    Scheduler,
    /// 7
    UserTap,
    /// 8a
    PlanMode,
    /// 8b
    Scope,
    /// 8c
    AlwaysAsks,
    /// 8d
    AskRule,
    /// 8e
    Sensitive,
    /// 8f
    SkipAll,
    /// 8g
    Allowance,
    /// 8h
    AskEveryTime,
    /// 8i
    Mode,
}

impl Step {
    pub fn label(self) -> &'static str {
        match self {
            Step::Availability => "1",
            Step::UserOnly => "2",
            Step::Input => "3",
            Step::DenyRule => "4",
            Step::ModeOff => "5",
            Step::Scheduler => "6",
            Step::UserTap => "7",
            Step::PlanMode => "8a",
            Step::Scope => "8b",
            Step::AlwaysAsks => "8c",
            Step::AskRule => "8d",
            Step::Sensitive => "8e",
            Step::SkipAll => "8f",
            Step::Allowance => "8g",
            Step::AskEveryTime => "8h",
            Step::Mode => "8i",
        }
    }
}

/// What was decided, at which step, and by which rule (if a rule decided).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub verdict: Verdict,
    pub step: Step,
    pub rule: Option<RuleRef>,
}

impl Decision {
    fn by(step: Step, verdict: Verdict) -> Self {
        Self {
            verdict,
            step,
            rule: None,
        }
    }

    fn by_rule(step: Step, verdict: Verdict, rule: RuleRef) -> Self {
        Self {
            verdict,
            step,
            rule: Some(rule),
        }
    }

    /// The decision for people, as the demo prints it and conformance failures show it:
    /// `run (step 8i)`, `ask [allow, deny, always_allow] "校园卡充值" (step 8i)`,
    /// `refuse blocked (step 5)`. `headline` is the prompt's, when there was one.
    pub fn describe(&self, headline: Option<&str>) -> String {
        let verdict = match self.verdict {
            Verdict::Run => "run".to_owned(),
            Verdict::Ask(kind) => {
                let offers: Vec<&str> = kind.offers().iter().map(|a| a.as_str()).collect();
                format!("ask [{}] \"{}\"", offers.join(", "), headline.unwrap_or(""))
            }
            Verdict::Refuse(code) => format!("refuse {}", code.as_str()),
        };
        format!("{verdict} (step {})", self.step.label())
    }
}

/// The rule sets a call is checked against: the global rules and the conversation's own.
#[derive(Clone, Copy, Debug)]
pub struct Rules<'a> {
    pub global: &'a RuleSet,
    pub conversation: &'a RuleSet,
}

impl Rules<'_> {
    /// The deciding rule of each kind for this call: the conversation's own rules first.
    fn matches(&self, tool: &Tool, input: &Value) -> Matched<RuleRef> {
        let scoped = |set: &RuleSet, scope| -> Matched<RuleRef> {
            if set.is_empty() {
                return Matched::default();
            }
            let m = set.matches(tool, input);
            let at = |index: Option<u32>| index.map(|index| RuleRef { scope, index });
            Matched {
                deny: at(m.deny),
                ask: at(m.ask),
                allow: at(m.allow),
            }
        };
        let conversation = scoped(self.conversation, RuleScope::Conversation);
        let global = scoped(self.global, RuleScope::Global);
        Matched {
            deny: conversation.deny.or(global.deny),
            ask: conversation.ask.or(global.ask),
            allow: conversation.allow.or(global.allow),
        }
    }

    /// Whether a rule of `kind` matches every call of this tool, whatever its input.
    fn cover(&self, kind: RuleKind, tool: &Tool) -> bool {
        self.global.covers(kind, tool) || self.conversation.covers(kind, tool)
    }

    /// Whether a deny rule refuses this tool whatever the input, so it is never offered.
    pub fn denies_outright(&self, tool: &Tool) -> bool {
        self.cover(RuleKind::Deny, tool)
    }
}

/// What is known of a call before its input is: every fact [`decide`] looks at that does not
/// depend on the input.
#[derive(Clone, Copy, Debug)]
pub struct Standing<'a> {
    pub actor: Actor,
    pub tool: Option<&'a Tool>,
    pub availability: Availability,
    pub terms_accepted: bool,
    pub mode: Mode,
    pub plan_mode: bool,
}

/// Could this tool ever run for this actor? `Err(code)` when every call of it would be refused
/// whatever the input, with the code [`decide`] would give first; `Ok` when some call might run
/// (or ask). The tool lists offered to the model and to scheduled runs, and a scheduled check's
/// creation, all ask this — never a copy of its steps.
pub fn precheck(s: &Standing<'_>, rules: Rules<'_>) -> Result<(), Code> {
    // 1.
    if s.actor != Actor::User && !s.terms_accepted {
        return Err(Code::TermsNotAccepted);
    }
    let tool = match (s.tool, s.availability) {
        (Some(tool), Availability::Ready) => tool,
        _ => return Err(Code::Unavailable),
    };
    // 2.
    if tool.user_only && s.actor != Actor::User {
        return Err(Code::UserOnly);
    }
    // 4. Only a rule without `when` refuses whatever the input.
    if s.actor != Actor::User && rules.cover(RuleKind::Deny, tool) {
        return Err(Code::DeniedByRule);
    }
    // 5.
    if s.mode == Mode::Off {
        return Err(Code::Blocked);
    }
    match s.actor {
        // 6. seed 000: unattended runs only read, and nobody is there to ask.
        Actor::Scheduler if tool.effect != Effect::Read => Err(Code::SchedulerReadOnly),
        Actor::Scheduler
            if tool.grant
                || tool.always_ask
                || tool.target.is_some()
                || s.mode == Mode::Ask
                || rules.cover(RuleKind::Ask, tool) =>
        {
            Err(Code::Declined)
        }
        // 8a.
        Actor::Agent if s.plan_mode && tool.effect != Effect::Read => Err(Code::PlanMode),
        _ => Ok(()),
    }
}

/// The decision of DESIGN.md §3. The first step that decides, decides.
pub fn decide(f: &Facts<'_>, rules: Rules<'_>) -> Decision {
    let mut decision = decide_step(f, rules);
    // DESIGN.md §3: a prompt in a tainted turn offers no "Always allow", so an injected
    // instruction is never one tap away from a permanent change: neither a mode set to auto
    // (an ordinary prompt) nor a standing grant (a grant tool's prompt).
    if f.tainted {
        decision.verdict = match decision.verdict {
            Verdict::Ask(PromptKind::Ordinary) => Verdict::Ask(PromptKind::Confirm),
            Verdict::Ask(PromptKind::Grant) => Verdict::Ask(PromptKind::GrantOnce),
            verdict => verdict,
        };
    }
    decision
}

fn decide_step(f: &Facts<'_>, rules: Rules<'_>) -> Decision {
    use Verdict::{Ask, Refuse, Run};

    // 1. Before the terms are accepted the agent acts for nobody, and nothing is scheduled.
    if f.actor != Actor::User && !f.terms_accepted {
        return Decision::by(Step::Availability, Refuse(Code::TermsNotAccepted));
    }
    let tool = match (f.tool, f.availability) {
        (Some(tool), Availability::Ready) => tool,
        _ => return Decision::by(Step::Availability, Refuse(Code::Unavailable)),
    };
    // 2.
    if tool.user_only && f.actor != Actor::User {
        return Decision::by(Step::UserOnly, Refuse(Code::UserOnly));
    }
    // 3.
    if !f.input_valid {
        return Decision::by(Step::Input, Refuse(Code::InvalidInput));
    }
    // Rules speak for the user; they do not question the user's own taps.
    let Matched {
        deny: deny_rule,
        ask: ask_rule,
        allow: allow_rule,
    } = match f.actor {
        Actor::User => Matched::default(),
        _ => rules.matches(tool, f.input),
    };
    // 4.
    if let Some(rule) = deny_rule {
        return Decision::by_rule(Step::DenyRule, Refuse(Code::DeniedByRule), rule);
    }
    // 5. Off disables this effect of this plugin for every actor.
    if f.mode == Mode::Off {
        return Decision::by(Step::ModeOff, Refuse(Code::Blocked));
    }
    // 6. seed 000: unattended runs only read, and nobody is there to ask.
    if f.actor == Actor::Scheduler {
        if tool.effect != Effect::Read {
            return Decision::by(Step::Scheduler, Refuse(Code::SchedulerReadOnly));
        }
        if tool.grant || tool.always_ask || f.has_target || f.mode == Mode::Ask {
            return Decision::by(Step::Scheduler, Refuse(Code::Declined));
        }
        if let Some(rule) = ask_rule {
            return Decision::by_rule(Step::Scheduler, Refuse(Code::Declined), rule);
        }
        if f.check == ToolCheck::Deny {
            return Decision::by(Step::Scheduler, Refuse(Code::OutOfScope));
        }
        return Decision::by(Step::Scheduler, Run);
    }
    // 7. A tap is never questioned.
    if f.actor == Actor::User {
        return Decision::by(Step::UserTap, Run);
    }
    // 8. The agent.
    if f.plan_mode && tool.effect != Effect::Read {
        return Decision::by(Step::PlanMode, Refuse(Code::PlanMode));
    }
    // seed 003: approving a call never widens a scope, so this comes before every prompt.
    if f.check == ToolCheck::Deny {
        return Decision::by(Step::Scope, Refuse(Code::OutOfScope));
    }
    // 8e, taken before any prompt: a protected change in a tainted turn is refused outright,
    // so no ask rule or prompt puts it one tap away from an injected instruction. The user can
    // still make it on the screen.
    if f.sensitive && f.tainted {
        return Decision::by(Step::Sensitive, Refuse(Code::Tainted));
    }
    // 8e, money limits under every preset, before any prompt: a payment past the student's
    // limit is refused with nothing that allows it (only the student raises a limit).
    let money = f.money.filter(|_| tool.effect == Effect::Money);
    if money.is_some_and(|m| m.over().is_some()) {
        return Decision::by(Step::Sensitive, Refuse(Code::OverLimit));
    }
    if tool.grant {
        return Decision::by(Step::AlwaysAsks, Ask(PromptKind::Grant));
    }
    if tool.always_ask || f.has_target {
        return Decision::by(Step::AlwaysAsks, Ask(PromptKind::Confirm));
    }
    // 8e: a payee never paid before is always asked, Allow / Deny only: no mode, rule or
    // preset makes a first payment to someone new run unasked, nor one tap set it for good.
    if money.is_some_and(|m| m.payee_known == Some(false)) {
        return Decision::by(Step::Sensitive, Ask(PromptKind::Confirm));
    }
    if let Some(rule) = ask_rule {
        return Decision::by_rule(Step::AskRule, Ask(PromptKind::Ordinary), rule);
    }
    // 8e, sensitive under every preset (DESIGN.md §3): loosening the permission system itself,
    // and a money or public call in a tainted turn. It comes before "Skip all permissions": the
    // user skipped their own prompts, not a third party's instructions (seed 003 puts the
    // sensitive checks after the preset; DESIGN.md puts them first).
    if f.sensitive || (f.tainted && matches!(tool.effect, Effect::Money | Effect::Public)) {
        return Decision::by(Step::Sensitive, Ask(PromptKind::Ordinary));
    }
    // 8f.
    if f.preset == Preset::SkipAll {
        return Decision::by(Step::SkipAll, Run);
    }
    if let Some(rule) = allow_rule {
        return Decision::by_rule(Step::Allowance, Run, rule);
    }
    if f.check == ToolCheck::Allow {
        return Decision::by(Step::Allowance, Run);
    }
    if f.preset == Preset::AskEveryTime && tool.effect != Effect::Read {
        return Decision::by(Step::AskEveryTime, Ask(PromptKind::Ordinary));
    }
    match f.mode {
        Mode::Auto => Decision::by(Step::Mode, Run),
        _ => Decision::by(Step::Mode, Ask(PromptKind::Ordinary)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Plugin, parse_manifest};
    use serde_json::json;

    fn plugin(kind: PluginKind, defaults: Value) -> Plugin {
        let manifest = parse_manifest(&json!({"id": "p", "defaultModes": defaults,
            "tools": [{"name": "t", "effect": "money"}]}))
        .unwrap();
        Plugin::load(manifest, kind).unwrap()
    }

    #[test]
    fn the_default_table_by_kind() {
        use Effect::*;
        use Mode::*;
        let rows = [
            (PluginKind::Bundled, [Auto, Auto, Auto, Auto]),
            (PluginKind::Official, [Auto, Auto, Auto, Auto]),
            (PluginKind::Community, [Auto, Ask, Ask, Ask]),
            (PluginKind::Remote, [Auto, Ask, Ask, Ask]),
        ];
        for (kind, modes) in rows {
            let got: Vec<Mode> = [Read, Write, Money, Public]
                .into_iter()
                .map(|e| kind_default(kind, e))
                .collect();
            assert_eq!(got, modes, "{kind:?}");
        }
    }

    #[test]
    fn bundled_and_official_defaults_apply_as_declared() {
        for kind in [PluginKind::Bundled, PluginKind::Official] {
            let p = plugin(kind, json!({"money": "ask", "public": "off"}));
            assert_eq!(
                default_mode(&p, Effect::Money),
                (Mode::Ask, ModeSource::PluginDefault)
            );
            assert_eq!(
                default_mode(&p, Effect::Public),
                (Mode::Off, ModeSource::PluginDefault)
            );
            assert_eq!(
                default_mode(&p, Effect::Write),
                (Mode::Auto, ModeSource::KindDefault)
            );
        }
    }

    #[test]
    fn community_defaults_apply_only_where_stricter() {
        let p = plugin(
            PluginKind::Community,
            json!({"read": "ask", "write": "auto", "money": "off", "public": "ask"}),
        );
        assert_eq!(
            default_mode(&p, Effect::Read),
            (Mode::Ask, ModeSource::PluginDefault)
        );
        assert_eq!(
            default_mode(&p, Effect::Write),
            (Mode::Ask, ModeSource::KindDefault)
        );
        assert_eq!(
            default_mode(&p, Effect::Money),
            (Mode::Off, ModeSource::PluginDefault)
        );
        assert_eq!(
            default_mode(&p, Effect::Public),
            (Mode::Ask, ModeSource::KindDefault)
        );
    }

    #[test]
    fn a_user_mode_wins_over_every_default() {
        let p = plugin(PluginKind::Bundled, json!({"money": "ask"}));
        let mut modes = UserModes::default();
        modes.set("p", Effect::Money, Mode::Auto);
        assert_eq!(
            modes.effective(&p, Effect::Money),
            (Mode::Auto, ModeSource::User)
        );
    }

    #[test]
    fn a_malformed_rule_pattern_is_refused_naming_the_rule() {
        let rule = |tool: &str| Rule {
            kind: RuleKind::Deny,
            tool: tool.into(),
            effect: None,
            when: None,
        };
        let err = RuleSet::new(vec![rule("wallet.*"), rule("wallet")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "rules[1].tool: \"wallet\" is not a rule pattern; use \"<plugin>.<tool>\", \"<plugin>.*\" or \"*\""
        );
        for bad in ["*.recharge", "wallet.re*", ".x", "a.b.c"] {
            assert!(RuleSet::new(vec![rule(bad)]).is_err(), "{bad}");
        }
    }

    #[test]
    fn rules_match_by_tool_plugin_and_wildcard_with_effect_and_when() {
        let p = plugin(PluginKind::Bundled, json!({}));
        let tool = &p.tools[0];
        let set = RuleSet::new(vec![
            Rule {
                kind: RuleKind::Ask,
                tool: "other.t".into(),
                effect: None,
                when: None,
            },
            Rule {
                kind: RuleKind::Ask,
                tool: "p.*".into(),
                effect: Some(Effect::Read),
                when: None,
            },
            Rule {
                kind: RuleKind::Ask,
                tool: "*".into(),
                effect: None,
                when: Some(json!({"amountYuan": 500}).as_object().unwrap().clone()),
            },
            Rule {
                kind: RuleKind::Ask,
                tool: "p.t".into(),
                effect: Some(Effect::Money),
                when: None,
            },
        ])
        .unwrap();
        assert_eq!(
            set.first_match(RuleKind::Ask, tool, &json!({"amountYuan": 500})),
            Some(2)
        );
        assert_eq!(
            set.first_match(RuleKind::Ask, tool, &json!({"amountYuan": 5})),
            Some(3)
        );
        assert_eq!(set.first_match(RuleKind::Deny, tool, &json!({})), None);
        assert!(set.covers(RuleKind::Ask, tool));
    }
}
