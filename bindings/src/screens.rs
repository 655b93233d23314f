//! The screens' models, exactly as the core builds them (`harness_core::screens`): each screen
//! read whole in one call, every text in the user's language, and each tap an `Action` handed
//! back to `Harness::act`. Shells render these and nothing else.

use harness_core::consent::{Permission, PermissionState};
use harness_core::policy::{Answer, Mode, Preset, PromptKind};
use harness_core::registry::{Effect, PluginKind};
use harness_core::screens::{
    Acted, Action, AddPluginScreen, AnswerButton, ApprovalSheet, AuditFilter, AuditRowView,
    AuditScreen, Button, ButtonRole, ChatItem, ChatItemKind, ChatScreen, Choice, CloudRow,
    ConsentScreen, ConversationSettingsScreen, InputRow, JobRow, JobsScreen, LabelValue,
    MemoryInbox, MemoryRowView, ModeRowView, ModelSettingsScreen, NavItem, Navigation,
    PermissionRow, PluginDetail, PluginRow, PluginsScreen, Route, RuleRow, ShellEffect,
    ToolCallView, ToolRowView,
};
use harness_core::settings::Language;

/// The languages the app speaks.
#[uniffi::remote(Enum)]
pub enum Language {
    Zh,
    En,
}

#[uniffi::remote(Enum)]
pub enum ButtonRole {
    Primary,
    Normal,
    Destructive,
}

#[uniffi::remote(Record)]
pub struct Choice {
    pub label: String,
    pub selected: bool,
    pub action: Action,
}

#[uniffi::remote(Record)]
pub struct Button {
    pub label: String,
    pub role: ButtonRole,
    pub action: Action,
}

#[uniffi::remote(Record)]
pub struct LabelValue {
    pub label: String,
    pub value: String,
}

#[uniffi::remote(Enum)]
pub enum Action {
    SendMessage {
        conversation: String,
        text: String,
    },
    CancelTurn {
        turn: String,
    },
    SetMode {
        plugin: String,
        effect: Effect,
        mode: Mode,
    },
    SetEnabled {
        plugin: String,
        enabled: bool,
    },
    RemovePlugin {
        plugin: String,
    },
    UpdatePlugin {
        plugin: String,
    },
    ReclassTool {
        tool: String,
        effect: Effect,
    },
    PreviewLink {
        link: String,
    },
    InstallPreview {
        preview: String,
    },
    SetPreset {
        conversation: String,
        preset: Preset,
    },
    SetPlanMode {
        conversation: String,
        on: bool,
    },
    SetThinkingEffort {
        conversation: String,
        effort: Option<String>,
    },
    SetConversationModel {
        conversation: String,
        model: Option<String>,
    },
    RemoveRule {
        conversation: Option<String>,
        rule: String,
    },
    AcceptTerms,
    SetCampusSession {
        signed_in: bool,
    },
    SetCloudConsent {
        plugin: String,
        allowed: bool,
    },
    RequestPermission {
        permission: Permission,
    },
    OpenPermissionSettings {
        permission: Permission,
    },
    DecideMemory {
        memory: i64,
        approve: bool,
    },
    PauseJob {
        job: i64,
    },
    ResumeJob {
        job: i64,
    },
    RemoveJob {
        job: i64,
    },
    SetModelEndpoint {
        endpoint: String,
    },
    SetModelName {
        name: String,
    },
    SetApiKey {
        key: String,
    },
    ClearApiKey,
    SetLanguage {
        language: Language,
    },
    PickDocument {
        conversation: String,
    },
    AttachDocument {
        conversation: String,
        name: String,
        text: String,
    },
}

#[uniffi::remote(Enum)]
pub enum ShellEffect {
    RequestPermission { permission: Permission },
    OpenPermissionSettings { permission: Permission },
    PickDocument { conversation: String },
}

#[uniffi::remote(Enum)]
pub enum Acted {
    Done,
    Shell(ShellEffect),
    Preview(AddPluginScreen),
    TurnEnded { turn: String },
}

// ---- the approval sheet

#[uniffi::remote(Record)]
pub struct AnswerButton {
    pub answer: Answer,
    pub label: String,
    pub role: ButtonRole,
}

#[uniffi::remote(Record)]
pub struct InputRow {
    pub name: String,
    pub value: String,
}

#[uniffi::remote(Record)]
pub struct ApprovalSheet {
    pub kind: PromptKind,
    pub title: String,
    pub headline: String,
    pub plugin_title: String,
    pub tool_title: String,
    pub effect: Effect,
    pub effect_label: String,
    pub inputs: Vec<InputRow>,
    pub input_json: String,
    pub reason_label: String,
    pub reason: String,
    pub answers: Vec<AnswerButton>,
    pub words_from_server: bool,
    pub words_from_server_label: String,
}

// ---- the chat

#[uniffi::remote(Enum)]
pub enum ChatItemKind {
    User,
    Assistant,
    Thinking,
    ToolCall,
    Notice,
}

#[uniffi::remote(Record)]
pub struct ToolCallView {
    pub call: String,
    pub title: String,
    pub tool: Option<String>,
    pub input_json: String,
    pub decision: String,
    pub result: Option<String>,
    pub ok: Option<bool>,
}

#[uniffi::remote(Record)]
pub struct ChatItem {
    pub kind: ChatItemKind,
    pub text: String,
    pub tool_call: Option<ToolCallView>,
}

#[uniffi::remote(Record)]
pub struct ChatScreen {
    pub conversation: String,
    pub title: String,
    pub items: Vec<ChatItem>,
    pub running_turn: Option<String>,
    pub status: String,
    pub plan_mode_note: Option<String>,
    pub placeholder: String,
    pub send_label: String,
    pub can_send: bool,
    pub cancel: Option<Button>,
    pub attach: Button,
    pub documents: Vec<String>,
}

// ---- navigation

#[uniffi::remote(Enum)]
pub enum Route {
    Chat,
    ConversationSettings,
    Plugins,
    Memory,
    Jobs,
    Audit,
    Consent,
    Model,
}

#[uniffi::remote(Record)]
pub struct NavItem {
    pub route: Route,
    pub label: String,
    pub badge: Option<u32>,
}

#[uniffi::remote(Record)]
pub struct Navigation {
    pub items: Vec<NavItem>,
}

// ---- plugins

#[uniffi::remote(Record)]
pub struct PluginRow {
    pub id: String,
    pub title: String,
    pub kind: PluginKind,
    pub kind_label: String,
    pub enabled: bool,
    pub state_label: String,
}

#[uniffi::remote(Record)]
pub struct PluginsScreen {
    pub title: String,
    pub plugins: Vec<PluginRow>,
    pub load_errors: Vec<String>,
    pub add_label: String,
    pub link_placeholder: String,
}

#[uniffi::remote(Record)]
pub struct ModeRowView {
    pub effect: Effect,
    pub effect_label: String,
    pub mode: Mode,
    pub mode_label: String,
    pub source_label: String,
    pub note: Option<String>,
    pub choices: Vec<Choice>,
}

#[uniffi::remote(Record)]
pub struct ToolRowView {
    pub id: String,
    pub title: String,
    pub description: String,
    pub effect_label: String,
    pub reclass: Vec<Choice>,
}

#[uniffi::remote(Record)]
pub struct PluginDetail {
    pub id: String,
    pub title: String,
    pub description: String,
    pub kind_label: String,
    pub enabled: bool,
    pub enabled_label: String,
    pub toggle: Action,
    pub modes_label: String,
    pub modes: Vec<ModeRowView>,
    pub tools_label: String,
    pub tools: Vec<ToolRowView>,
    pub grant_row: String,
    pub warnings: Vec<String>,
    pub data_sources: Vec<String>,
    pub unmet: Option<String>,
    pub disclosure: Vec<String>,
    pub update: Option<Button>,
    pub remove: Option<Button>,
}

#[uniffi::remote(Record)]
pub struct AddPluginScreen {
    pub preview: String,
    pub title: String,
    pub plugin: String,
    pub plugin_title: String,
    pub kind_label: String,
    pub link: String,
    pub asks_more: Vec<String>,
    pub tools: Vec<ToolRowView>,
    pub modes: Vec<LabelValue>,
    pub grant_row: String,
    pub warnings: Vec<String>,
    pub data_sources: Vec<String>,
    pub disclosure: Vec<String>,
    pub requires: Vec<String>,
    pub install: Button,
    pub cancel_label: String,
}

// ---- conversation settings

#[uniffi::remote(Record)]
pub struct RuleRow {
    pub text: String,
    pub remove: Action,
}

#[uniffi::remote(Record)]
pub struct ConversationSettingsScreen {
    pub conversation: String,
    pub title: String,
    pub model_label: String,
    pub model: Option<String>,
    pub default_model: String,
    pub thinking_label: String,
    pub thinking: Vec<Choice>,
    pub preset_label: String,
    pub presets: Vec<Choice>,
    pub plan_mode_label: String,
    pub plan_mode: bool,
    pub plan_mode_toggle: Action,
    pub scope_label: String,
    pub scope: Vec<String>,
    pub rules_label: String,
    pub rules: Vec<RuleRow>,
    pub global_rules_label: String,
    pub global_rules: Vec<RuleRow>,
}

// ---- consent, permissions, the model

#[uniffi::remote(Record)]
pub struct PermissionRow {
    pub permission: Permission,
    pub label: String,
    pub state: PermissionState,
    pub state_label: String,
    pub needed_by: Vec<String>,
    pub fix: Option<Button>,
}

#[uniffi::remote(Record)]
pub struct CloudRow {
    pub plugin: String,
    pub title: String,
    pub allowed: bool,
    pub disclosure: Vec<String>,
    pub toggle: Action,
}

#[uniffi::remote(Record)]
pub struct ConsentScreen {
    pub title: String,
    pub terms_label: String,
    pub terms_state: String,
    pub accept_terms: Option<Button>,
    pub campus_label: String,
    pub campus_signed_in: bool,
    pub campus_toggle: Button,
    pub cloud_label: String,
    pub cloud: Vec<CloudRow>,
    pub permissions_label: String,
    pub permissions: Vec<PermissionRow>,
}

#[uniffi::remote(Record)]
pub struct ModelSettingsScreen {
    pub title: String,
    pub endpoint_label: String,
    pub endpoint: String,
    pub model_label: String,
    pub model: String,
    pub key_label: String,
    pub key_set: bool,
    pub key_state: String,
    pub clear_key: Option<Button>,
    pub save_label: String,
}

// ---- memory, audit, jobs

#[uniffi::remote(Record)]
pub struct MemoryRowView {
    pub id: i64,
    pub text: String,
    pub state_label: String,
    pub pending: bool,
    pub when: String,
    pub approve: Option<Button>,
    pub reject: Option<Button>,
}

#[uniffi::remote(Record)]
pub struct MemoryInbox {
    pub title: String,
    pub explanation: String,
    pub pending_count: u32,
    pub memories: Vec<MemoryRowView>,
    pub empty_label: String,
}

#[uniffi::remote(Record)]
pub struct AuditFilter {
    pub plugin: Option<String>,
    pub actor: Option<String>,
    pub verdict: Option<String>,
}

#[uniffi::remote(Record)]
pub struct AuditRowView {
    pub when: String,
    pub actor: String,
    pub tool: String,
    pub event: String,
    pub detail: Option<String>,
}

#[uniffi::remote(Record)]
pub struct AuditScreen {
    pub title: String,
    pub filter: AuditFilter,
    pub plugins: Vec<String>,
    pub actors: Vec<String>,
    pub rows: Vec<AuditRowView>,
    pub empty_label: String,
}

#[uniffi::remote(Record)]
pub struct JobRow {
    pub id: i64,
    pub name: String,
    pub state_label: String,
    pub next_run: String,
    pub last_outcome: String,
    pub pause_or_resume: Option<Button>,
    pub remove: Button,
}

#[uniffi::remote(Record)]
pub struct JobsScreen {
    pub title: String,
    pub wake_note: String,
    pub jobs: Vec<JobRow>,
    pub empty_label: String,
}
