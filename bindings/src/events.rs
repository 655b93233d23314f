//! Events for the shells: a listener registered with `Harness::subscribe`, and a handle that
//! stops delivery when it is cancelled or dropped (STYLE.md §5).

use std::sync::{Arc, Mutex, Weak};

use crate::error::HarnessError;
use harness_core::policy::Answer;

use crate::decisions::ApprovalPrompt;

/// Something a shell may want to show, as it happens.
// Not the core's `events::Event`: the listener's one union of the core's turn events and the
// FFI's own (approvals, wake time, begun turns); notifications and screens go to the Platform.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
#[allow(
    clippy::large_enum_variant,
    reason = "crosses the FFI by value, once per event"
)]
pub enum HarnessEvent {
    /// A prompt is about to be shown through `Platform::ask_approval` with this id.
    ApprovalRequested { id: u64, prompt: ApprovalPrompt },
    /// The prompt with this id was answered.
    ApprovalAnswered { id: u64, answer: Answer },
    /// The prompt with this id is gone without the user's answer: the platform failed to show
    /// it, so the call was declined (fail closed), or its turn stopped. Also a remote server's
    /// question (`Platform::ask_elicitation`'s id) whose call stopped waiting: its sheet closes.
    ApprovalWithdrawn { id: u64 },
    /// A memory the agent wrote in a tainted turn waits for the user's approval on the memory
    /// screen (`Harness::decide_memory`).
    MemoryPending {
        memory_id: i64,
        conversation: Option<String>,
    },
    /// A plugin changed (or cleared) its contribution to the agent's system prompt.
    ContextChanged { plugin: String },
    /// The scheduler's wake-up was armed at `at_epoch_ms` through `Platform::arm_wake_up`, or
    /// cancelled (`None`: nothing is scheduled).
    WakeTimeChanged { at_epoch_ms: Option<i64> },
    /// A public call was held in its undo window, or its window ended: read
    /// `held_calls_screen` again (the 撤销 bar).
    HeldCallsChanged,
    /// `begin_turn` started turn number `turn` of a conversation.
    TurnStarted { conversation: String, turn: u64 },
    /// The agent began a turn; `turn` is the id `cancel_turn` takes.
    AgentTurnStarted { conversation: String, turn: String },
    /// Text of the model's answer, as it streams.
    TextDelta { turn: String, text: String },
    /// Words the student sent while the turn ran joined it here: show them at this point of
    /// the turn (the answer streamed before them is complete).
    MessageJoined { turn: String, text: String },
    /// The model's reasoning, as it streams: shown as thinking, never as the answer.
    ThinkingDelta { turn: String, text: String },
    /// The model's answer was cut off and is asked for again: drop the text and thinking
    /// streamed since the last complete message; what streams next replaces them.
    AnswerRestarted { turn: String },
    /// The model called a tool (`name` as the model wrote it; `tool` the id, if one matched).
    ToolCallStarted {
        turn: String,
        call: String,
        name: String,
        tool: Option<String>,
        input: String,
    },
    /// What the core decided about a call: `run`, `ask` or `refused`, and why.
    ToolDecision {
        turn: String,
        call: String,
        verdict: String,
        reason: String,
    },
    /// How far a running call has come, as its server says: `done` is `3/5` (or `3`),
    /// `message` the server's words, cut and on one line. The chat's call shows it.
    ToolProgress {
        turn: String,
        call: String,
        done: String,
        message: Option<String>,
    },
    /// A call's outcome: the whole result (the UI's copy), or the error the model was given.
    ToolResult {
        turn: String,
        call: String,
        ok: bool,
        result: String,
    },
    /// A line a plugin's gates hand to the user (`notify`, `log`, `contextChanged`, …).
    HostLine {
        plugin: String,
        kind: String,
        text: String,
    },
    /// A turn ended: `state` is done, cancelled, interrupted or failed; `message` says why.
    TurnEnded {
        turn: String,
        state: String,
        message: Option<String>,
        model_requests: u32,
        total_tokens: u64,
    },
}

/// Receives events. It is called on the thread that caused the event (a caller's thread or a
/// worker of the library's runtime), never while the core holds a lock, so it may call back
/// into the Harness. Keep it quick: hand the event to the UI thread and return. An error it
/// returns is ignored.
#[uniffi::export(with_foreign)]
pub trait EventListener: Send + Sync {
    fn on_event(&self, event: HarnessEvent) -> Result<(), HarnessError>;
}

/// The registered listeners.
#[derive(Default)]
pub(crate) struct Listeners {
    inner: Mutex<ListenerList>,
}

#[derive(Default)]
struct ListenerList {
    next_id: u64,
    listeners: Vec<(u64, Arc<dyn EventListener>)>,
}

impl Listeners {
    fn lock(&self) -> std::sync::MutexGuard<'_, ListenerList> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn add(self: &Arc<Self>, listener: Arc<dyn EventListener>) -> EventSubscription {
        let mut list = self.lock();
        list.next_id += 1;
        let id = list.next_id;
        list.listeners.push((id, listener));
        EventSubscription {
            id,
            listeners: Arc::downgrade(self),
        }
    }

    fn remove(&self, id: u64) {
        self.lock().listeners.retain(|(i, _)| *i != id);
    }

    pub(crate) fn clear(&self) {
        self.lock().listeners.clear();
    }

    /// Delivers one event to every listener, outside the lock.
    pub(crate) fn emit(&self, event: HarnessEvent) {
        let listeners: Vec<Arc<dyn EventListener>> = self
            .lock()
            .listeners
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        for listener in listeners {
            let _ = listener.on_event(event.clone());
        }
    }
}

/// A registered listener. Delivery stops when `cancel()` is called or the handle is dropped
/// (Kotlin: `close()`/`destroy()` or garbage collection; Swift: the last reference goes), and
/// when the Harness is closed.
#[derive(uniffi::Object)]
pub struct EventSubscription {
    id: u64,
    listeners: Weak<Listeners>,
}

#[uniffi::export]
impl EventSubscription {
    /// Stops delivery to this listener. Calling it again does nothing.
    pub fn cancel(&self) {
        if let Some(listeners) = self.listeners.upgrade() {
            listeners.remove(self.id);
        }
    }
}

impl Drop for EventSubscription {
    fn drop(&mut self) {
        self.cancel();
    }
}
