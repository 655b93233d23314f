//! What only the phone can do, implemented by each shell (STYLE.md §4), and the bridges from
//! the core's traits to it: approvals, secrets, the wake-up alarm, and the core's events
//! (notifications to post, screens to open, events for the listeners).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use harness_core::consent::{Permission, PermissionState};
use harness_core::events::{Event, EventSink};
use harness_core::invoke::{ApprovalBroker, Elicitation, ElicitationAnswer, Prompt};
use harness_core::picked::{FilePick, PickedFile};
use harness_core::plugins::oauth::{Browser, SignInPage};
use harness_core::policy::{self, Answer};
use harness_core::scheduler::WakeScheduler;
use harness_core::screens::{
    ElicitationAction, ElicitationSheet, FieldValue, Screens, SignInSheet,
};
use harness_core::secrets::{SecretError, SecretStore};

use crate::decisions::ApprovalPrompt;
use crate::error::HarnessError;
use crate::events::{HarnessEvent, Listeners};

/// A notification to post. (Not `Notification`: Swift shells import Foundation's.)
// The Platform's argument: the core's `Event::Notification` with the id the shell replaces by.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct AppNotification {
    /// `job-<id>` for a scheduled job's notification: stable per job, so that a later run's
    /// notification replaces the earlier one.
    pub id: String,
    pub title: String,
    pub body: String,
    /// The plugin it comes from, if any; the shell shows it as the source.
    pub plugin: Option<String>,
}

/// Where an authorization server sends the student back after signing in to a remote server:
/// the app's own link (RFC 8252's private-use scheme, the app's id), which the shell's browser
/// session hands back to `Platform::sign_in`'s caller.
pub const SIGN_IN_REDIRECT: &str = "edu.pku.harness:/oauth/callback";

/// The student's answer to a remote server's question: how, and what they typed in each field
/// (a toggle `true` or `false`, a choice its option's value, several choices one per line).
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ElicitationReply {
    pub action: ElicitationAction,
    pub values: Vec<FieldValue>,
}

/// A file the student picked for a tool they tapped: its name and its bytes, which the core
/// reads by the same rule as a conversation's documents.
#[derive(Clone, PartialEq, Eq, uniffi::Record)]
pub struct PickedDocument {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What the shell does for the core. Every method may fail with `HarnessError` (an exception
/// the shell throws that is not a `HarnessError` arrives as `HarnessError::Platform`). The
/// core never calls these while it holds a lock, so an implementation may call back into the
/// Harness. Each method says when it is called.
#[uniffi::export(with_foreign)]
#[async_trait]
pub trait Platform: Send + Sync {
    /// Shows an approval prompt and returns the user's answer, one of `prompt.offers`. `id`
    /// matches the `ApprovalRequested` / `ApprovalAnswered` / `ApprovalWithdrawn` events. An
    /// error declines the call (fail closed).
    async fn ask_approval(&self, id: u64, prompt: ApprovalPrompt) -> Result<Answer, HarnessError>;

    /// Posts a notification: called for each notification a scheduled run produces, during
    /// `Harness::run_due`. An error is ignored (the run's report still carries it).
    fn post_notification(&self, notification: AppNotification) -> Result<(), HarnessError>;

    /// Arms the one wake-up at `at_epoch_ms` (milliseconds since 1970 UTC), replacing any armed
    /// one: an exact alarm when `exact` (the shell reported the exact-alarm permission), else
    /// inexact work. When it fires, the shell calls `run_due`.
    fn arm_wake_up(&self, at_epoch_ms: i64, exact: bool) -> Result<(), HarnessError>;

    /// Cancels the armed wake-up, if any.
    fn cancel_wake_up(&self) -> Result<(), HarnessError>;

    /// Opens a screen of the app where the user does what only they can do: called when the
    /// agent runs `settings.openScreen`. `route` is one of `api-keys`, `campus-account`,
    /// `system-permissions`, `cloud`. An error is ignored (the agent is told the screen opens).
    fn open_screen(&self, route: String) -> Result<(), HarnessError>;

    /// Reads a secret from the keystore; `None` when there is none.
    fn read_secret(&self, key: String) -> Result<Option<String>, HarnessError>;

    /// Writes a secret to the keystore; `None` deletes it.
    fn write_secret(&self, key: String, value: Option<String>) -> Result<(), HarnessError>;

    /// Reports a permission's state now: called for each permission by
    /// `Harness::refresh_permissions`.
    fn permission_state(&self, permission: Permission) -> Result<PermissionState, HarnessError>;

    /// Shows the sheet of a remote server that asks the student to sign in; on its Continue,
    /// opens `sheet.page` in the system's browser (Custom Tabs, ASWebAuthenticationSession) and
    /// returns the address the browser was sent back to, which begins with `redirect_uri`.
    /// Called while a server is being added. An error is the student's cancel: nothing is
    /// added.
    async fn sign_in(
        &self,
        sheet: SignInSheet,
        redirect_uri: String,
    ) -> Result<String, HarnessError>;

    /// Shows a remote server's question while its tool runs and returns the student's answer
    /// with what they typed; `sheet.error`, when set, says why the last answer was not sent.
    /// The call waits for it. An error declines the question.
    async fn ask_elicitation(
        &self,
        id: u64,
        sheet: ElicitationSheet,
    ) -> Result<ElicitationReply, HarnessError>;

    /// Shows the system's file picker for a tool the student tapped (its plugin's
    /// `services.files.pick`; `plugin_title` says whose), offering the kinds a conversation takes
    /// (text, Markdown, PDF: the chat's own picker), and returns the file picked — one over
    /// 16 MiB (harness_core::picked::FILE_BYTES) refused before it is read whole — or `None`
    /// when the student picked nothing. An error picks nothing.
    async fn pick_file(&self, plugin_title: String)
    -> Result<Option<PickedDocument>, HarnessError>;

    /// Shows the system's dialog for `permission` for a tool the student tapped (its plugin's
    /// `services.notify.fix`) and returns what it answered; the core records it. An error is
    /// `Unknown`.
    async fn request_permission(
        &self,
        permission: Permission,
    ) -> Result<PermissionState, HarnessError>;
}

/// The core's approval broker, answered by the platform's approval sheet.
pub(crate) struct PlatformBroker {
    pub(crate) platform: Arc<dyn Platform>,
    pub(crate) events: Arc<Listeners>,
    next_id: AtomicU64,
    /// Builds each prompt's sheet; weak, since the screens hold the engine that holds this.
    screens: OnceLock<Weak<Screens>>,
    /// Whether the shell draws the 撤销 bar now (`Harness::show_undo`): only then is a public
    /// call held in its undo window.
    pub(crate) shows_undo: AtomicBool,
}

impl PlatformBroker {
    pub(crate) fn new(platform: Arc<dyn Platform>, events: Arc<Listeners>) -> Self {
        Self {
            platform,
            events,
            next_id: AtomicU64::new(1),
            screens: OnceLock::new(),
            shows_undo: AtomicBool::new(false),
        }
    }

    /// Set once, right after the engine opens and before any call can ask.
    pub(crate) fn show_sheets_from(&self, screens: &Arc<Screens>) {
        let _ = self.screens.set(Arc::downgrade(screens));
    }
}

/// A prompt being shown: if the ask is dropped before an answer (the turn was cancelled), the
/// shell is told to close its sheet.
struct Showing<'a> {
    id: u64,
    events: &'a Listeners,
    answered: bool,
}

impl Drop for Showing<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.events
                .emit(HarnessEvent::ApprovalWithdrawn { id: self.id });
        }
    }
}

#[async_trait]
impl ApprovalBroker for PlatformBroker {
    // The core calls this outside its locks, so the platform may call back into the Harness.
    async fn ask(&self, prompt: Prompt) -> policy::Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let no = prompt.kind.no();
        // Fail closed: without the screens there is no sheet to show, and no consent.
        let Some(screens) = self.screens.get().and_then(Weak::upgrade) else {
            return no;
        };
        let sheet = screens.approval(&prompt);
        let notice = screens.approval_notice(&prompt);
        drop(screens);
        let prompt = ApprovalPrompt::new(prompt, sheet, notice);
        self.events.emit(HarnessEvent::ApprovalRequested {
            id,
            prompt: prompt.clone(),
        });
        let mut showing = Showing {
            id,
            events: &self.events,
            answered: false,
        };
        let answered = self.platform.ask_approval(id, prompt).await;
        showing.answered = true;
        match answered {
            Ok(answer) => {
                self.events
                    .emit(HarnessEvent::ApprovalAnswered { id, answer });
                answer
            }
            Err(_) => {
                // Fail closed: no answer is no consent. Answer with the prompt's own "no".
                self.events.emit(HarnessEvent::ApprovalWithdrawn { id });
                no
            }
        }
    }

    async fn elicit(&self, request: Elicitation) -> ElicitationAnswer {
        self.ask_question(request).await
    }

    fn shows_undo(&self) -> bool {
        self.shows_undo.load(Ordering::Relaxed)
    }

    async fn pick_file(&self, request: FilePick) -> Option<PickedFile> {
        let picked = self.platform.pick_file(request.plugin_title).await;
        picked.ok().flatten().map(|file| PickedFile {
            name: file.name,
            bytes: file.bytes,
        })
    }

    async fn request_permission(&self, permission: Permission) -> PermissionState {
        self.platform
            .request_permission(permission)
            .await
            .unwrap_or(PermissionState::Unknown)
    }
}

/// A server's question is asked again while its answer does not fit its form, at most this
/// many times; then it is declined.
const ELICITATION_TRIES: usize = 5;

impl PlatformBroker {
    fn screens(&self) -> Option<Arc<Screens>> {
        self.screens.get().and_then(Weak::upgrade)
    }
}

/// The phone's browser for signing in to a remote server: the platform's sign-in sheet.
#[async_trait]
impl Browser for PlatformBroker {
    fn redirect_uri(&self) -> String {
        SIGN_IN_REDIRECT.to_owned()
    }

    // `client_metadata_url`: none. The app publishes no client ID metadata document yet (it
    // would list SIGN_IN_REDIRECT at an https address of the app's own); until it does, a
    // server signs the app in with a client id it issued, or by dynamic registration.

    async fn sign_in(&self, page: &SignInPage) -> Result<String, String> {
        let screens = self
            .screens()
            .ok_or("the app is closing; sign in again once it is open")?;
        let sheet = screens.sign_in_sheet(page);
        drop(screens);
        self.platform
            .sign_in(sheet, SIGN_IN_REDIRECT.to_owned())
            .await
            .map_err(|e| match e {
                HarnessError::Platform { reason } => reason,
                other => other.to_string(),
            })
    }
}

impl PlatformBroker {
    /// A remote server's question on the platform's sheet, asked again (saying why) while the
    /// answer does not fit the server's form.
    pub(crate) async fn ask_question(&self, request: Elicitation) -> ElicitationAnswer {
        let Some(screens) = self.screens() else {
            return ElicitationAnswer::Decline;
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // A question its call stopped waiting for (the turn stopped) leaves the screen.
        let mut showing = Showing {
            id,
            events: &self.events,
            answered: false,
        };
        let mut error = None;
        for _ in 0..ELICITATION_TRIES {
            let sheet = screens.elicitation_sheet(&request, error.take());
            let Ok(reply) = self.platform.ask_elicitation(id, sheet).await else {
                showing.answered = true;
                return ElicitationAnswer::Decline;
            };
            match screens.elicitation_answer(&request, reply.action, &reply.values) {
                Ok(answer) => {
                    showing.answered = true;
                    return answer;
                }
                Err(why) => error = Some(why),
            }
        }
        showing.answered = true;
        ElicitationAnswer::Decline
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

/// The scheduler's alarm: the platform's wake-up. The core calls it only when the wake time
/// changed; the listeners hear of it once the platform took it.
pub(crate) struct PlatformWake {
    pub(crate) platform: Arc<dyn Platform>,
    pub(crate) events: Arc<Listeners>,
}

impl WakeScheduler for PlatformWake {
    fn arm(&self, at_ms: i64, exact: bool) -> Result<(), String> {
        self.platform
            .arm_wake_up(at_ms, exact)
            .map_err(|e| e.to_string())?;
        self.events.emit(HarnessEvent::WakeTimeChanged {
            at_epoch_ms: Some(at_ms),
        });
        Ok(())
    }

    fn cancel(&self) -> Result<(), String> {
        self.platform.cancel_wake_up().map_err(|e| e.to_string())?;
        self.events
            .emit(HarnessEvent::WakeTimeChanged { at_epoch_ms: None });
        Ok(())
    }
}

/// The core's events: some go to the listeners, some are the platform's to act on.
pub(crate) struct PlatformEvents {
    pub(crate) platform: Arc<dyn Platform>,
    pub(crate) events: Arc<Listeners>,
}

impl EventSink for PlatformEvents {
    // The core emits outside its locks, so the platform may call back into the Harness. A
    // platform error has nobody to go to: the core's own record (the run report, the agent's
    // result) stands either way.
    fn emit(&self, event: Event) {
        match event {
            Event::MemoryPending {
                memory,
                conversation,
            } => self.events.emit(HarnessEvent::MemoryPending {
                memory_id: memory,
                conversation,
            }),
            Event::ContextChanged { plugin } => {
                self.events.emit(HarnessEvent::ContextChanged { plugin })
            }
            Event::Notification { job, title, body } => {
                let _ = self.platform.post_notification(AppNotification {
                    id: format!("job-{job}"),
                    title,
                    body,
                    plugin: None,
                });
            }
            Event::TurnStarted { conversation, turn } => self
                .events
                .emit(HarnessEvent::AgentTurnStarted { conversation, turn }),
            Event::MessageJoined { turn, text } => {
                self.events.emit(HarnessEvent::MessageJoined { turn, text })
            }
            Event::TextDelta { turn, text } => {
                self.events.emit(HarnessEvent::TextDelta { turn, text })
            }
            Event::ThinkingDelta { turn, text } => {
                self.events.emit(HarnessEvent::ThinkingDelta { turn, text })
            }
            Event::AnswerRestarted { turn } => {
                self.events.emit(HarnessEvent::AnswerRestarted { turn })
            }
            Event::ToolCallStarted {
                turn,
                call,
                name,
                tool,
                input,
            } => self.events.emit(HarnessEvent::ToolCallStarted {
                turn,
                call,
                name,
                tool,
                input,
            }),
            Event::ToolDecision {
                turn,
                call,
                verdict,
                reason,
            } => self.events.emit(HarnessEvent::ToolDecision {
                turn,
                call,
                verdict,
                reason,
            }),
            Event::ToolProgress {
                turn,
                call,
                done,
                message,
            } => self.events.emit(HarnessEvent::ToolProgress {
                turn,
                call,
                done,
                message,
            }),
            Event::ToolResult {
                turn,
                call,
                ok,
                result,
            } => self.events.emit(HarnessEvent::ToolResult {
                turn,
                call,
                ok,
                result,
            }),
            Event::HostLine { plugin, kind, text } => {
                self.events
                    .emit(HarnessEvent::HostLine { plugin, kind, text })
            }
            Event::TurnEnded {
                turn,
                state,
                message,
                usage,
            } => self.events.emit(HarnessEvent::TurnEnded {
                turn,
                state,
                message,
                model_requests: usage.model_requests,
                total_tokens: usage.total_tokens,
            }),
            Event::OpenScreen { screen } => {
                let _ = self.platform.open_screen(screen);
            }
        }
    }
}
