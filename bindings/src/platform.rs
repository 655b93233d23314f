//! What only the phone can do, implemented by each shell (STYLE.md §4), and the bridge from
//! the core's `ApprovalBroker` to the platform's approval sheet.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy;
use harness_core::scheduler::WakeScheduler;
use harness_core::secrets::{SecretError, SecretStore};

use crate::error::HarnessError;
use crate::events::{HarnessEvent, Listeners};
use crate::types::{Answer, ApprovalPrompt};

/// A notification to post. (Not `Notification`: Swift shells import Foundation's.)
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct AppNotification {
    /// Stable for one notification, so that posting it again replaces it.
    pub id: String,
    pub title: String,
    pub body: String,
    /// The plugin it comes from, if any; the shell shows it as the source.
    pub plugin: Option<String>,
}

/// A permission the shell reports and requests (only on a tap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Permission {
    Notifications,
    /// Android's SCHEDULE_EXACT_ALARM; iOS has no such permission and reports `Granted`.
    ExactAlarm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum PermissionState {
    Granted,
    Denied,
    /// The user has not been asked yet.
    NotDetermined,
}

/// What the shell does for the core. Every method may fail with `HarnessError` (an exception
/// the shell throws that is not a `HarnessError` arrives as `HarnessError::Platform`). The
/// core never calls these while it holds a lock, so an implementation may call back into the
/// Harness.
///
/// Today the core calls `ask_approval` only; the other methods are the contract for the
/// notifications, scheduler, uiOnly screens and secret store that come next.
#[uniffi::export(with_foreign)]
#[async_trait]
pub trait Platform: Send + Sync {
    /// Shows an approval prompt and returns the user's answer, one of `prompt.offers`. `id`
    /// matches the `ApprovalRequested` / `ApprovalAnswered` / `ApprovalWithdrawn` events. An
    /// error declines the call (fail closed).
    async fn ask_approval(&self, id: u64, prompt: ApprovalPrompt) -> Result<Answer, HarnessError>;

    /// Posts a notification.
    fn post_notification(&self, notification: AppNotification) -> Result<(), HarnessError>;

    /// Arms the one wake-up at `at_epoch_ms` (milliseconds since 1970 UTC), replacing any armed
    /// one: an exact alarm when `exact` (the shell reported the exact-alarm permission), else
    /// inexact work. When it fires, the shell calls `run_due`.
    fn arm_wake_up(&self, at_epoch_ms: i64, exact: bool) -> Result<(), HarnessError>;

    /// Cancels the armed wake-up, if any.
    fn cancel_wake_up(&self) -> Result<(), HarnessError>;

    /// Opens a screen of the app (the target of a uiOnly step, e.g. `settings/plugins/wallet`).
    fn open_screen(&self, route: String) -> Result<(), HarnessError>;

    /// Reads a secret from the keystore; `None` when there is none.
    fn read_secret(&self, key: String) -> Result<Option<String>, HarnessError>;

    /// Writes a secret to the keystore; `None` deletes it.
    fn write_secret(&self, key: String, value: Option<String>) -> Result<(), HarnessError>;

    /// Reports a permission's state now.
    fn permission_state(&self, permission: Permission) -> Result<PermissionState, HarnessError>;
}

/// The core's approval broker, answered by the platform's approval sheet.
pub(crate) struct PlatformBroker {
    pub(crate) platform: Arc<dyn Platform>,
    pub(crate) events: Arc<Listeners>,
    next_id: AtomicU64,
}

impl PlatformBroker {
    pub(crate) fn new(platform: Arc<dyn Platform>, events: Arc<Listeners>) -> Self {
        Self {
            platform,
            events,
            next_id: AtomicU64::new(1),
        }
    }
}

#[async_trait]
impl ApprovalBroker for PlatformBroker {
    // The core calls this outside its locks, so the platform may call back into the Harness.
    async fn ask(&self, prompt: Prompt) -> policy::Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let kind = prompt.kind;
        let prompt = ApprovalPrompt::from(prompt);
        self.events.emit(HarnessEvent::ApprovalRequested {
            id,
            prompt: prompt.clone(),
        });
        match self.platform.ask_approval(id, prompt).await {
            Ok(answer) => {
                self.events
                    .emit(HarnessEvent::ApprovalAnswered { id, answer });
                answer.into()
            }
            Err(_) => {
                // Fail closed: no answer is no consent. Answer with the prompt's own "no".
                self.events.emit(HarnessEvent::ApprovalWithdrawn { id });
                match kind {
                    policy::PromptKind::Grant => policy::Answer::DontAllow,
                    policy::PromptKind::Ordinary | policy::PromptKind::Confirm => {
                        policy::Answer::Deny
                    }
                }
            }
        }
    }
}

/// The core's secret store: the platform keystore (DESIGN.md §6).
pub(crate) struct PlatformSecrets(pub(crate) Arc<dyn Platform>);

impl SecretStore for PlatformSecrets {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        self.0
            .read_secret(key.to_owned())
            .map_err(|e| SecretError(e.to_string()))
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        self.0
            .write_secret(key.to_owned(), Some(value.to_owned()))
            .map_err(|e| SecretError(e.to_string()))
    }

    fn delete(&self, key: &str) -> Result<(), SecretError> {
        self.0
            .write_secret(key.to_owned(), None)
            .map_err(|e| SecretError(e.to_string()))
    }
}

/// The scheduler's alarm: the platform's wake-up.
pub(crate) struct PlatformWake(pub(crate) Arc<dyn Platform>);

impl WakeScheduler for PlatformWake {
    fn arm(&self, at_ms: i64, exact: bool) -> Result<(), String> {
        self.0.arm_wake_up(at_ms, exact).map_err(|e| e.to_string())
    }

    fn cancel(&self) -> Result<(), String> {
        self.0.cancel_wake_up().map_err(|e| e.to_string())
    }
}

impl From<Permission> for harness_core::consent::Permission {
    fn from(p: Permission) -> Self {
        match p {
            Permission::Notifications => harness_core::consent::Permission::Notifications,
            Permission::ExactAlarm => harness_core::consent::Permission::ExactAlarm,
        }
    }
}

impl From<PermissionState> for harness_core::consent::PermissionState {
    fn from(s: PermissionState) -> Self {
        match s {
            PermissionState::Granted => harness_core::consent::PermissionState::Granted,
            PermissionState::Denied => harness_core::consent::PermissionState::Denied,
            PermissionState::NotDetermined => harness_core::consent::PermissionState::Unknown,
        }
    }
}
