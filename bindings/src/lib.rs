//! The UniFFI surface of the PKU harness core (DESIGN.md §8): one `Harness` object opened on a
//! data directory with the shell's `Platform`, an event listener, one error enum, and the
//! records whose shape differs from the core's (JSON as text, paths as strings), one module per
//! feature, each with its conversion beside it. The core's records and enums that cross as they
//! are (the screens' models, the decision's enums) derive UniFFI's traits in harness-core under
//! its `uniffi` feature (STYLE.md §1), and are not restated here. Proc-macros only, no UDL
//! (STYLE.md §3).
//!
//! Kotlin package `edu.pku.harness` (the core's types: `edu.pku.harness.core`), Swift module
//! `Harness` (uniffi.toml at the repo top).

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

mod consent;
mod conversations;
mod decisions;
mod development;
mod error;
mod events;
mod harness;
mod jobs;
mod links;
mod memories;
mod platform;
mod plugins;
mod turns;

pub use consent::Consent;
pub use conversations::{ConversationInfo, Scope};
pub use decisions::{
    ApprovalPrompt, Decision, Invocation, ModelTool, Outcome, Rule, Verdict, refusal_code_string,
};
pub use development::{DevelopmentOptions, start_campus_simulator};
pub use error::HarnessError;
pub use events::{EventListener, EventSubscription, HarnessEvent};
pub use harness::Harness;
pub use jobs::JobRun;
pub use links::{PluginPreview, PluginUpdate, StartingMode};
pub use memories::MemoryInfo;
pub use platform::{AppNotification, ElicitationReply, PickedDocument, Platform, SIGN_IN_REDIRECT};
pub use plugins::{ModeRow, PluginInfo, ToolInfo};
pub use turns::{HistoryMessage, TurnResult};
// The core's records and enums that cross as they are (their UniFFI derives are in harness-core).
pub use harness_core::consent::{Permission, PermissionState};
pub use harness_core::plugins::link::PreviewTool;
pub use harness_core::policy::{
    Actor, Answer, Code, Mode, ModeSource, Preset, PromptKind, RuleKind, RuleRef, RuleScope, Step,
};
pub use harness_core::registry::{Effect, PluginKind};
pub use harness_core::screens::{
    Acted, Action, AddPluginScreen, AnswerButton, ApprovalSheet, Button, ButtonRole, ChatItem,
    ChatItemKind, ChatScreen, Choice, CloudRow, ConsentScreen, ConversationSettingsScreen,
    DeveloperRow, ElicitationAction, ElicitationButton, ElicitationSheet, FieldKind, FieldOption,
    FieldValue, FilterChoice, FormFieldRow, InputRow, JobComparison, JobComparisonOption, JobDraft,
    JobFieldOption, JobForm, JobKind, JobKindOption, JobRow, JobScheduleKind, JobScheduleOption,
    JobSourceOption, JobWords, JobsScreen, LabelValue, MemoryInbox, MemoryRowView, ModeRowView,
    ModelSettingsScreen, NavItem, Navigation, PageRow, PermissionRow, PluginDetail, PluginRow,
    PluginsScreen, Route, RuleRow, ShellEffect, SignInSheet, ToolCallView, ToolRowView,
};
// What a student can see and bound: allowances, spending, activity, an ask's notification,
// the ongoing notification while a turn runs.
pub use harness_core::screens::{
    ActivityCall, ActivityFilter, ActivityGroup, ActivityScreen, AllowanceRowView,
    AllowancesScreen, ApprovalNotice, EffectChoice, MoneyLimitRow, SpendingScreen, TurnNotice,
};
pub use harness_core::settings::Language;
pub use harness_core::store::rows::AuditRow;
pub use harness_core::turn::ConversationSettings;

uniffi::setup_scaffolding!();

/// The library's one tokio runtime (STYLE.md §5). A call that streams or fetches (a turn of
/// the agent, a document by link, due jobs, a tap) is spawned here, so its many wake-ups stay
/// on its workers; a single tool call runs inside it on the caller's thread (`run_on_caller`).
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

/// Runs one tool call on the thread that awaits it, inside the library's runtime (its reactor,
/// timers and spawns), and to its end even when the caller stops waiting.
///
/// Why not spawn it: a spawned call ends on a runtime worker, and the worker's wake-up is the
/// foreign side's continuation callback, which JNA can only run after attaching that thread to
/// the JVM (and detaches it again after); so does a prompt sent to the Platform from a worker.
/// From Kotlin that hop cost an agent's read about 150 µs (scripts/bench-kotlin.sh: 330 µs
/// before, 190 µs after). Polled here, a call that needs nothing from the network finishes in
/// the caller's own polls, and a prompt's answer wakes it from the Platform's own thread.
///
/// What a spawn gave is kept: a call the caller stops awaiting (a cancelled coroutine or Task)
/// is handed to the runtime and finishes there, prompt, run and audit included; a panic stays
/// on this side as `HarnessError::Other`.
pub(crate) async fn run_on_caller<F>(work: F) -> Result<F::Output, HarnessError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    OnCaller {
        runtime: runtime()?,
        work: Some(Box::pin(work)),
    }
    .await
}

/// The future `run_on_caller` awaits: `work` until it is done or has panicked.
struct OnCaller<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    runtime: &'static tokio::runtime::Runtime,
    work: Option<Pin<Box<F>>>,
}

impl<F> Future for OnCaller<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    type Output = Result<F::Output, HarnessError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let _inside = self.runtime.enter();
        let Some(work) = self.work.as_mut() else {
            return Poll::Ready(Err(HarnessError::Other {
                reason: "the call was polled after it ended".to_owned(),
            }));
        };
        // A panicked future is never polled again: it is dropped here, not handed on.
        match catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => {
                self.work = None;
                Poll::Ready(Ok(output))
            }
            Err(_) => {
                self.work = None;
                Poll::Ready(Err(HarnessError::Other {
                    reason: "the call panicked inside the core".to_owned(),
                }))
            }
        }
    }
}

impl<F> Drop for OnCaller<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn drop(&mut self) {
        // The caller stopped waiting: the call still ends as it would have, on the runtime.
        if let Some(work) = self.work.take() {
            self.runtime.spawn(work);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::task::{Wake, Waker};
    use std::thread::{self, Thread};
    use std::time::Duration;

    use super::*;

    struct Unpark(Thread);

    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    /// Polls on this thread, outside any runtime, as the foreign side does.
    fn block_on<T>(future: impl Future<Output = T>) -> T {
        let waker = Waker::from(Arc::new(Unpark(thread::current())));
        let mut future = std::pin::pin!(future);
        loop {
            if let Poll::Ready(value) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
                return value;
            }
            thread::park();
        }
    }

    #[test]
    fn a_call_run_on_the_caller_reaches_the_librarys_timers_and_workers() {
        let caller = thread::current().id();
        let (polled_on, spawned_on) = block_on(run_on_caller(async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let spawned = tokio::spawn(async { thread::current().name().map(str::to_owned) });
            (thread::current().id(), spawned.await.unwrap())
        }))
        .unwrap();
        assert_eq!(polled_on, caller);
        assert_eq!(spawned_on.as_deref(), Some("harness-tokio"));
    }

    #[test]
    fn a_panic_in_a_call_run_on_the_caller_is_an_error_not_an_unwind() {
        fn a_bug_in_the_core() {
            panic!("a bug in the core");
        }
        let ended = block_on(run_on_caller(async { a_bug_in_the_core() }));
        assert_eq!(
            ended,
            Err(HarnessError::Other {
                reason: "the call panicked inside the core".to_owned()
            })
        );
    }
}
