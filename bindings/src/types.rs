//! The records and enums that cross the boundary, mirroring core types, and every conversion
//! between the two: this is the one place they are converted (STYLE.md §1). The matches are
//! exhaustive, so a variant added in core fails to compile here until it is mirrored.
//!
//! JSON values (inputs, results, schemas, rule conditions) cross as strings whose field names
//! end in `_json`.

use harness_core::engine::PluginView;
use harness_core::invoke;
use harness_core::policy;
use harness_core::registry;
use harness_core::scheduler;
use harness_core::store::rows::{AuditRow, MemoryRow};
use harness_core::turn;

use crate::error::{HarnessError, parse_json};

/// What a tool changes, from the weakest to the strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, uniffi::Enum)]
pub enum Effect {
    Read,
    Write,
    Money,
    Public,
}

/// What happens when the agent calls a tool of one effect of one plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, uniffi::Enum)]
pub enum Mode {
    Auto,
    Ask,
    Off,
}

/// Where a plugin's mode for one effect came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum ModeSource {
    KindDefault,
    PluginDefault,
    User,
}

/// Where a plugin came from: bundled code, an official or community plugin document, or a
/// remote (MCP) server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum PluginKind {
    Bundled,
    Official,
    Community,
    Remote,
}

/// The three rungs over the plugin modes: "Skip all permissions", "Auto-edit" (the default),
/// "Ask every time".
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Preset {
    SkipAll,
    AutoEdit,
    AskEveryTime,
}

/// Who made a call: a tap, the model inside a turn, or a scheduled run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Actor {
    User,
    Agent,
    Scheduler,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum RuleKind {
    Deny,
    Ask,
    Allow,
}

/// Why a call was refused; `code()` strings are what the agent sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum RefusalCode {
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
    /// A change that loosens a permission, asked for in a turn that read untrusted content.
    Tainted,
}

/// An answer to an approval prompt. Ordinary prompts offer Allow / Deny / AlwaysAllow, grant
/// prompts AllowOnce / AlwaysAllow / DontAllow, confirm prompts Allow / Deny; an answer the
/// prompt did not offer is refused as `declined`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Answer {
    Allow,
    Deny,
    AlwaysAllow,
    AllowOnce,
    DontAllow,
}

/// The three prompt shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum PromptKind {
    /// Allow / Deny / Always allow (Always allow sets the plugin's mode for the effect to auto).
    Ordinary,
    /// A grant tool: Allow once / Always allow / Don't allow; never changes a mode.
    Grant,
    /// An alwaysAsk or targeted tool: Allow / Deny, with the target as the headline.
    Confirm,
}

/// The step of the decision (DESIGN.md §3) that decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum DecisionStep {
    /// 1: the tool exists and can be reached; the terms are accepted.
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
    SkipAll,
    /// 8f
    Sensitive,
    /// 8g
    Allowance,
    /// 8h
    AskEveryTime,
    /// 8i
    Mode,
}

/// Which rule set a deciding rule came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum RuleScope {
    Global,
    Conversation,
}

/// A deciding rule: its set and its index in that set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Record)]
pub struct RuleRef {
    pub scope: RuleScope,
    pub index: u32,
}

/// What the decision says about a call.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Verdict {
    Run,
    /// The user is asked, with these offers.
    Ask {
        kind: PromptKind,
        offers: Vec<Answer>,
    },
    Refuse {
        code: RefusalCode,
    },
}

/// What was decided, at which step, and by which rule (if a rule decided).
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Decision {
    pub verdict: Verdict,
    pub step: DecisionStep,
    pub rule: Option<RuleRef>,
}

/// `{kind, tool: "<plugin>.<tool>" | "<plugin>.*" | "*", effect?, when?}`. `when_json`, if
/// given, is a JSON object of top-level input fields that must all equal the call's.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Rule {
    pub kind: RuleKind,
    pub tool: String,
    #[uniffi(default = None)]
    pub effect: Option<Effect>,
    #[uniffi(default = None)]
    pub when_json: Option<String>,
}

/// One effect's mode and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ModeRow {
    pub effect: Effect,
    pub mode: Mode,
    pub source: ModeSource,
}

/// A tool as the settings screens show it.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ToolInfo {
    /// `<plugin id>.<tool name>`
    pub id: String,
    pub name: String,
    /// The name the model sees (`<plugin id>__<tool name>`).
    pub model_name: String,
    /// The Chinese title shown to users.
    pub title: String,
    pub title_en: Option<String>,
    pub description: String,
    pub effect: Effect,
    /// The input's JSON Schema.
    pub input_schema_json: String,
    /// Results are third-party content; reading them taints the turn.
    pub untrusted: bool,
    /// Only a tap may start it; hidden from the model.
    pub user_only: bool,
    pub grant: bool,
    pub always_ask: bool,
    /// The prompt headline template, `{field}` replaced by that input field.
    pub target: Option<String>,
}

/// An installed plugin, its modes and its tools.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct PluginInfo {
    pub id: String,
    pub kind: PluginKind,
    pub title: String,
    pub title_en: Option<String>,
    pub description: String,
    pub enabled: bool,
    /// The first `requires` entry the phone does not provide now.
    pub unmet: Option<String>,
    /// What the plugin may reach, e.g. `allow_network(api.pku.edu.cn)`, or `no grants`.
    pub grant_row: String,
    /// Dangerous combinations of grants, to show on the plugin's page.
    pub warnings: Vec<String>,
    /// What the phone must provide (`campus-session`, `notifications`, …).
    pub requires: Vec<String>,
    /// Campus sites and services the plugin reaches.
    pub scopes: Vec<String>,
    /// What the plugin stores online, in plain words.
    pub disclosure: Vec<String>,
    /// One row per effect, in the order read, write, money, public.
    pub modes: Vec<ModeRow>,
    pub tools: Vec<ToolInfo>,
}

/// Model, thinking effort, preset and plan mode of one conversation.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ConversationSettings {
    #[uniffi(default = None)]
    pub model: Option<String>,
    #[uniffi(default = None)]
    pub thinking_effort: Option<String>,
    pub preset: Preset,
    #[uniffi(default = false)]
    pub plan_mode: bool,
}

/// What a conversation may reach. Approving a call never widens it.
#[derive(Clone, Debug, Default, PartialEq, Eq, uniffi::Record)]
pub struct Scope {
    /// Folders the conversation may read from.
    pub roots: Vec<String>,
    /// Hosts the conversation may reach.
    pub hosts: Vec<String>,
    /// Apps Copilot may operate.
    pub apps: Vec<String>,
}

/// A conversation's state.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ConversationInfo {
    pub id: String,
    pub settings: ConversationSettings,
    pub scope: Scope,
    /// The current turn has read untrusted content.
    pub tainted: bool,
    /// Turns begun so far.
    pub turns: u64,
}

/// First-run terms and what the phone provides now (`campus-session`, `notifications`, …).
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Consent {
    pub terms_accepted: bool,
    pub met: Vec<String>,
}

/// An approval prompt, as the shell shows it.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ApprovalPrompt {
    pub plugin: String,
    pub plugin_title: String,
    /// `<plugin id>.<tool name>`
    pub tool: String,
    pub tool_title: String,
    pub effect: Effect,
    /// The call's inputs, shown to the user.
    pub input_json: String,
    pub kind: PromptKind,
    /// The answers to offer, in the order to show them.
    pub offers: Vec<Answer>,
    /// The target for alwaysAsk and targeted tools; the tool's title otherwise.
    pub headline: String,
    /// Why the user is asked.
    pub reason: String,
    pub conversation: Option<String>,
}

/// How a call ended.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Outcome {
    /// The tool ran: the whole result for the UI, and the model's copy (cut to 12,000 chars).
    Ran {
        result_json: String,
        for_model: String,
    },
    /// The tool ran and failed; the message is for the user.
    Failed { message: String },
    /// The call did not run; the message says which setting to change, and where.
    Refused { code: RefusalCode, message: String },
}

/// The decision, the prompt and answer if the user was asked, and the outcome.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Invocation {
    pub decision: Decision,
    /// Why the deciding step decided, in words.
    pub reason: String,
    pub prompt: Option<ApprovalPrompt>,
    pub answer: Option<Answer>,
    pub outcome: Outcome,
    /// What the agent receives: the (cut) result, or `{"error": {"code", "message"}}`.
    pub for_model: String,
}

/// A tool as the model is offered it.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ModelTool {
    pub name: String,
    pub description: String,
    pub input_schema_json: String,
}

/// One audit log row.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct AuditEntry {
    /// Increasing, in the order written.
    pub seq: i64,
    pub at_ms: i64,
    /// `user`, `agent` or `scheduler`.
    pub actor: String,
    pub conversation: Option<String>,
    pub tool: String,
    pub effect: Option<String>,
    /// `decided`, `answered`, `ran`, `failed` or `stopped`.
    pub event: String,
    /// The verdict (`run`, `ask:ordinary`, `refuse:blocked`), the answer, the failure or the code.
    pub detail: Option<String>,
    /// The deciding step of the decision (`8i`).
    pub step: Option<String>,
    /// The deciding rule (`global[0]`).
    pub rule: Option<String>,
    /// A digest of the call's inputs (never the inputs).
    pub input_digest: Option<String>,
}

/// A memory and its state.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct MemoryInfo {
    pub id: i64,
    pub text: String,
    /// `active`, `pending` (waits for the user) or `rejected`.
    pub state: String,
    pub conversation: Option<String>,
    pub turn: Option<i64>,
}

/// One scheduled run.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct JobRun {
    pub job: i64,
    pub name: String,
    pub due_epoch_ms: i64,
    /// The outcome as JSON: `{"notified": {"notification": {"title", "body"}}}`, `"quiet"`,
    /// `{"refused": {"code", "message"}}`, …
    pub outcome_json: String,
    /// Why this run paused the job, if it did.
    pub paused: Option<String>,
    pub next_due_epoch_ms: Option<i64>,
}

// ---- conversions: core → FFI -------------------------------------------------------------

impl From<registry::Effect> for Effect {
    fn from(e: registry::Effect) -> Self {
        match e {
            registry::Effect::Read => Effect::Read,
            registry::Effect::Write => Effect::Write,
            registry::Effect::Money => Effect::Money,
            registry::Effect::Public => Effect::Public,
        }
    }
}

impl From<Effect> for registry::Effect {
    fn from(e: Effect) -> Self {
        match e {
            Effect::Read => registry::Effect::Read,
            Effect::Write => registry::Effect::Write,
            Effect::Money => registry::Effect::Money,
            Effect::Public => registry::Effect::Public,
        }
    }
}

impl From<policy::Mode> for Mode {
    fn from(m: policy::Mode) -> Self {
        match m {
            policy::Mode::Auto => Mode::Auto,
            policy::Mode::Ask => Mode::Ask,
            policy::Mode::Off => Mode::Off,
        }
    }
}

impl From<Mode> for policy::Mode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::Auto => policy::Mode::Auto,
            Mode::Ask => policy::Mode::Ask,
            Mode::Off => policy::Mode::Off,
        }
    }
}

impl From<policy::ModeSource> for ModeSource {
    fn from(s: policy::ModeSource) -> Self {
        match s {
            policy::ModeSource::KindDefault => ModeSource::KindDefault,
            policy::ModeSource::PluginDefault => ModeSource::PluginDefault,
            policy::ModeSource::User => ModeSource::User,
        }
    }
}

impl From<registry::PluginKind> for PluginKind {
    fn from(k: registry::PluginKind) -> Self {
        match k {
            registry::PluginKind::Bundled => PluginKind::Bundled,
            registry::PluginKind::Official => PluginKind::Official,
            registry::PluginKind::Community => PluginKind::Community,
            registry::PluginKind::Remote => PluginKind::Remote,
        }
    }
}

impl From<policy::Preset> for Preset {
    fn from(p: policy::Preset) -> Self {
        match p {
            policy::Preset::SkipAll => Preset::SkipAll,
            policy::Preset::AutoEdit => Preset::AutoEdit,
            policy::Preset::AskEveryTime => Preset::AskEveryTime,
        }
    }
}

impl From<Preset> for policy::Preset {
    fn from(p: Preset) -> Self {
        match p {
            Preset::SkipAll => policy::Preset::SkipAll,
            Preset::AutoEdit => policy::Preset::AutoEdit,
            Preset::AskEveryTime => policy::Preset::AskEveryTime,
        }
    }
}

impl From<policy::Actor> for Actor {
    fn from(a: policy::Actor) -> Self {
        match a {
            policy::Actor::User => Actor::User,
            policy::Actor::Agent => Actor::Agent,
            policy::Actor::Scheduler => Actor::Scheduler,
        }
    }
}

impl From<Actor> for policy::Actor {
    fn from(a: Actor) -> Self {
        match a {
            Actor::User => policy::Actor::User,
            Actor::Agent => policy::Actor::Agent,
            Actor::Scheduler => policy::Actor::Scheduler,
        }
    }
}

impl From<RuleKind> for policy::RuleKind {
    fn from(k: RuleKind) -> Self {
        match k {
            RuleKind::Deny => policy::RuleKind::Deny,
            RuleKind::Ask => policy::RuleKind::Ask,
            RuleKind::Allow => policy::RuleKind::Allow,
        }
    }
}

impl From<policy::Code> for RefusalCode {
    fn from(c: policy::Code) -> Self {
        match c {
            policy::Code::Unavailable => RefusalCode::Unavailable,
            policy::Code::TermsNotAccepted => RefusalCode::TermsNotAccepted,
            policy::Code::UserOnly => RefusalCode::UserOnly,
            policy::Code::InvalidInput => RefusalCode::InvalidInput,
            policy::Code::DeniedByRule => RefusalCode::DeniedByRule,
            policy::Code::Blocked => RefusalCode::Blocked,
            policy::Code::SchedulerReadOnly => RefusalCode::SchedulerReadOnly,
            policy::Code::Declined => RefusalCode::Declined,
            policy::Code::PlanMode => RefusalCode::PlanMode,
            policy::Code::OutOfScope => RefusalCode::OutOfScope,
            policy::Code::Tainted => RefusalCode::Tainted,
        }
    }
}

impl From<RefusalCode> for policy::Code {
    fn from(c: RefusalCode) -> Self {
        match c {
            RefusalCode::Unavailable => policy::Code::Unavailable,
            RefusalCode::TermsNotAccepted => policy::Code::TermsNotAccepted,
            RefusalCode::UserOnly => policy::Code::UserOnly,
            RefusalCode::InvalidInput => policy::Code::InvalidInput,
            RefusalCode::DeniedByRule => policy::Code::DeniedByRule,
            RefusalCode::Blocked => policy::Code::Blocked,
            RefusalCode::SchedulerReadOnly => policy::Code::SchedulerReadOnly,
            RefusalCode::Declined => policy::Code::Declined,
            RefusalCode::PlanMode => policy::Code::PlanMode,
            RefusalCode::OutOfScope => policy::Code::OutOfScope,
            RefusalCode::Tainted => policy::Code::Tainted,
        }
    }
}

impl From<policy::Answer> for Answer {
    fn from(a: policy::Answer) -> Self {
        match a {
            policy::Answer::Allow => Answer::Allow,
            policy::Answer::Deny => Answer::Deny,
            policy::Answer::AlwaysAllow => Answer::AlwaysAllow,
            policy::Answer::AllowOnce => Answer::AllowOnce,
            policy::Answer::DontAllow => Answer::DontAllow,
        }
    }
}

impl From<Answer> for policy::Answer {
    fn from(a: Answer) -> Self {
        match a {
            Answer::Allow => policy::Answer::Allow,
            Answer::Deny => policy::Answer::Deny,
            Answer::AlwaysAllow => policy::Answer::AlwaysAllow,
            Answer::AllowOnce => policy::Answer::AllowOnce,
            Answer::DontAllow => policy::Answer::DontAllow,
        }
    }
}

impl From<policy::PromptKind> for PromptKind {
    fn from(k: policy::PromptKind) -> Self {
        match k {
            policy::PromptKind::Ordinary => PromptKind::Ordinary,
            policy::PromptKind::Grant => PromptKind::Grant,
            policy::PromptKind::Confirm => PromptKind::Confirm,
        }
    }
}

impl From<policy::Step> for DecisionStep {
    fn from(s: policy::Step) -> Self {
        use policy::Step;
        match s {
            Step::Availability => DecisionStep::Availability,
            Step::UserOnly => DecisionStep::UserOnly,
            Step::Input => DecisionStep::Input,
            Step::DenyRule => DecisionStep::DenyRule,
            Step::ModeOff => DecisionStep::ModeOff,
            Step::Scheduler => DecisionStep::Scheduler,
            Step::UserTap => DecisionStep::UserTap,
            Step::PlanMode => DecisionStep::PlanMode,
            Step::Scope => DecisionStep::Scope,
            Step::AlwaysAsks => DecisionStep::AlwaysAsks,
            Step::AskRule => DecisionStep::AskRule,
            Step::SkipAll => DecisionStep::SkipAll,
            Step::Sensitive => DecisionStep::Sensitive,
            Step::Allowance => DecisionStep::Allowance,
            Step::AskEveryTime => DecisionStep::AskEveryTime,
            Step::Mode => DecisionStep::Mode,
        }
    }
}

impl From<policy::RuleRef> for RuleRef {
    fn from(r: policy::RuleRef) -> Self {
        let scope = match r.scope {
            policy::RuleScope::Global => RuleScope::Global,
            policy::RuleScope::Conversation => RuleScope::Conversation,
        };
        RuleRef {
            scope,
            index: r.index,
        }
    }
}

impl From<policy::Verdict> for Verdict {
    fn from(v: policy::Verdict) -> Self {
        match v {
            policy::Verdict::Run => Verdict::Run,
            policy::Verdict::Ask(kind) => Verdict::Ask {
                kind: kind.into(),
                offers: kind.offers().iter().map(|&a| a.into()).collect(),
            },
            policy::Verdict::Refuse(code) => Verdict::Refuse { code: code.into() },
        }
    }
}

impl From<policy::Decision> for Decision {
    fn from(d: policy::Decision) -> Self {
        Decision {
            verdict: d.verdict.into(),
            step: d.step.into(),
            rule: d.rule.map(Into::into),
        }
    }
}

impl From<&(registry::Effect, policy::Mode, policy::ModeSource)> for ModeRow {
    fn from(
        &(effect, mode, source): &(registry::Effect, policy::Mode, policy::ModeSource),
    ) -> Self {
        ModeRow {
            effect: effect.into(),
            mode: mode.into(),
            source: source.into(),
        }
    }
}

impl From<&registry::Tool> for ToolInfo {
    fn from(t: &registry::Tool) -> Self {
        ToolInfo {
            id: t.id.clone(),
            name: t.name.clone(),
            model_name: t.model_name(),
            title: t.title.clone(),
            title_en: t.title_en.clone(),
            description: t.description.clone(),
            effect: t.effect.into(),
            input_schema_json: t.input.source().to_string(),
            untrusted: t.untrusted,
            user_only: t.user_only,
            grant: t.grant,
            always_ask: t.always_ask,
            target: t.target.clone(),
        }
    }
}

impl From<&PluginView> for PluginInfo {
    fn from(view: &PluginView) -> Self {
        let plugin = &view.plugin;
        PluginInfo {
            id: plugin.id.clone(),
            kind: plugin.kind.into(),
            title: plugin.title.clone(),
            title_en: plugin.title_en.clone(),
            description: plugin.description.clone(),
            enabled: view.enabled,
            unmet: view.unmet.clone(),
            grant_row: view.grant_row.clone(),
            warnings: view.warnings.clone(),
            requires: plugin.requires.clone(),
            scopes: plugin.scopes.clone(),
            disclosure: plugin.disclosure.clone(),
            modes: view.modes.iter().map(Into::into).collect(),
            tools: plugin.tools.iter().map(|t| ToolInfo::from(&**t)).collect(),
        }
    }
}

impl From<turn::ConversationSettings> for ConversationSettings {
    fn from(s: turn::ConversationSettings) -> Self {
        ConversationSettings {
            model: s.model,
            thinking_effort: s.thinking_effort,
            preset: s.preset.into(),
            plan_mode: s.plan_mode,
        }
    }
}

impl From<ConversationSettings> for turn::ConversationSettings {
    fn from(s: ConversationSettings) -> Self {
        turn::ConversationSettings {
            model: s.model,
            thinking_effort: s.thinking_effort,
            preset: s.preset.into(),
            plan_mode: s.plan_mode,
        }
    }
}

impl From<turn::Scope> for Scope {
    fn from(s: turn::Scope) -> Self {
        Scope {
            roots: s
                .roots
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            hosts: s.hosts,
            apps: s.apps,
        }
    }
}

impl From<Scope> for turn::Scope {
    fn from(s: Scope) -> Self {
        turn::Scope {
            roots: s.roots.into_iter().map(Into::into).collect(),
            hosts: s.hosts,
            apps: s.apps,
        }
    }
}

impl From<turn::Conversation> for ConversationInfo {
    fn from(c: turn::Conversation) -> Self {
        ConversationInfo {
            id: c.id,
            settings: c.settings.into(),
            scope: c.scope.into(),
            tainted: c.tainted,
            turns: c.turns,
        }
    }
}

impl From<invoke::Prompt> for ApprovalPrompt {
    fn from(p: invoke::Prompt) -> Self {
        ApprovalPrompt {
            plugin: p.plugin,
            plugin_title: p.plugin_title,
            tool: p.tool,
            tool_title: p.tool_title,
            effect: p.effect.into(),
            input_json: p.input.to_string(),
            kind: p.kind.into(),
            offers: p.offers.into_iter().map(Into::into).collect(),
            headline: p.headline,
            reason: p.reason,
            conversation: p.conversation,
        }
    }
}

impl From<invoke::Outcome> for Outcome {
    fn from(o: invoke::Outcome) -> Self {
        match o {
            invoke::Outcome::Ran { result, for_model } => Outcome::Ran {
                result_json: result.to_string(),
                for_model,
            },
            invoke::Outcome::Failed { message } => Outcome::Failed { message },
            invoke::Outcome::Refused { code, message } => Outcome::Refused {
                code: code.into(),
                message,
            },
        }
    }
}

impl From<invoke::Invocation> for Invocation {
    fn from(i: invoke::Invocation) -> Self {
        let for_model = i.for_model();
        Invocation {
            decision: i.decision.into(),
            reason: i.reason,
            prompt: i.prompt.map(Into::into),
            answer: i.answer.map(Into::into),
            outcome: i.outcome.into(),
            for_model,
        }
    }
}

impl From<invoke::ModelTool> for ModelTool {
    fn from(t: invoke::ModelTool) -> Self {
        ModelTool {
            name: t.name,
            description: t.description,
            input_schema_json: t.input_schema.to_string(),
        }
    }
}

impl From<MemoryRow> for MemoryInfo {
    fn from(m: MemoryRow) -> Self {
        MemoryInfo {
            id: m.id,
            text: m.text,
            state: m.state,
            conversation: m.conversation,
            turn: m.turn,
        }
    }
}

impl From<scheduler::RunReport> for JobRun {
    fn from(r: scheduler::RunReport) -> Self {
        JobRun {
            job: r.job,
            name: r.name,
            due_epoch_ms: r.due_ms,
            outcome_json: serde_json::to_string(&r.outcome).unwrap_or_default(),
            paused: r.paused,
            next_due_epoch_ms: r.next_due_ms,
        }
    }
}

impl From<AuditRow> for AuditEntry {
    fn from(r: AuditRow) -> Self {
        AuditEntry {
            seq: r.seq,
            at_ms: r.at_ms,
            actor: r.actor,
            conversation: r.conversation,
            tool: r.tool,
            effect: r.effect,
            event: r.event,
            detail: r.detail,
            step: r.step,
            rule: r.rule,
            input_digest: r.input_digest,
        }
    }
}

// ---- conversions: FFI → core that can fail ----------------------------------------------

/// Converts rules, parsing each `when_json`; an error names the rule by its index.
pub(crate) fn core_rules(rules: Vec<Rule>) -> Result<Vec<policy::Rule>, HarnessError> {
    rules
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let when = match r.when_json {
                None => None,
                Some(text) => match parse_json(&format!("rules[{i}].when_json"), &text)? {
                    serde_json::Value::Object(fields) => Some(fields),
                    _ => {
                        return Err(HarnessError::invalid(format!(
                            "rules[{i}].when_json: must be a JSON object"
                        )));
                    }
                },
            };
            Ok(policy::Rule {
                kind: r.kind.into(),
                tool: r.tool,
                effect: r.effect.map(Into::into),
                when,
            })
        })
        .collect()
}

// ---- small helpers exported as functions --------------------------------------------------

/// The code string the agent sees for a refusal (`"blocked"`, `"declined"`, …).
#[uniffi::export]
pub fn refusal_code_string(code: RefusalCode) -> String {
    policy::Code::from(code).as_str().to_owned()
}
