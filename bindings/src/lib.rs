//! The UniFFI surface of the PKU harness core (DESIGN.md §8): one `Harness` object opened on a
//! data directory with the shell's `Platform`, an event listener, one error enum, and the
//! records that carry core values across, one module per feature. The core's plain enums cross
//! as they are (`#[uniffi::remote]`); only records and enums whose shape differs are
//! redeclared here, with their conversions beside them. Proc-macros only, no UDL (STYLE.md §3).
//!
//! Kotlin package `edu.pku.harness`, Swift module `Harness` (uniffi.toml at the repo top).

use std::sync::LazyLock;

mod audit;
mod consent;
mod conversations;
mod decisions;
mod error;
mod events;
mod harness;
mod jobs;
mod links;
mod memories;
mod platform;
mod plugins;
mod screens;
mod turns;

pub use audit::AuditEntry;
pub use consent::Consent;
pub use conversations::{ConversationInfo, ConversationSettings, Scope};
pub use decisions::{
    ApprovalPrompt, Decision, Invocation, ModelTool, Outcome, Rule, Verdict, refusal_code_string,
};
pub use error::HarnessError;
pub use events::{EventListener, EventSubscription, HarnessEvent};
pub use harness::Harness;
pub use jobs::JobRun;
pub use links::{PluginPreview, PluginUpdate, PreviewTool, StartingMode};
pub use memories::MemoryInfo;
pub use platform::{AppNotification, Platform};
pub use plugins::{ModeRow, PluginInfo, ToolInfo};
pub use turns::{HistoryMessage, TurnResult};
// The core's plain enums, exported as they are.
pub use harness_core::consent::{Permission, PermissionState};
pub use harness_core::policy::{
    Actor, Answer, Code, Mode, ModeSource, Preset, PromptKind, RuleKind, RuleRef, RuleScope, Step,
};
pub use harness_core::registry::{Effect, PluginKind};
pub use harness_core::screens::{
    Acted, Action, AddPluginScreen, AnswerButton, ApprovalSheet, AuditFilter, AuditRowView,
    AuditScreen, Button, ButtonRole, ChatItem, ChatItemKind, ChatScreen, Choice, CloudRow,
    ConsentScreen, ConversationSettingsScreen, InputRow, JobRow, JobsScreen, LabelValue,
    MemoryInbox, MemoryRowView, ModeRowView, ModelSettingsScreen, NavItem, Navigation,
    PermissionRow, PluginDetail, PluginRow, PluginsScreen, Route, RuleRow, ShellEffect,
    ToolCallView, ToolRowView,
};
pub use harness_core::settings::Language;

uniffi::setup_scaffolding!();

/// The library's one tokio runtime (STYLE.md §5). Every call that runs tools or waits for a
/// prompt is spawned here, so the work runs on its workers whatever thread awaits it.
static RUNTIME: LazyLock<Result<tokio::runtime::Runtime, String>> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("harness-tokio")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
});

pub(crate) fn runtime() -> Result<&'static tokio::runtime::Runtime, HarnessError> {
    RUNTIME.as_ref().map_err(|reason| HarnessError::Other {
        reason: reason.clone(),
    })
}
