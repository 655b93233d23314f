//! What the core tells the shell as it happens, outside any call the shell made: a memory that
//! waits for the user, a plugin's changed context, a scheduled run's notification, a screen the
//! agent asks to open. The shell gives an [`EventSink`] at construction ([`Options::events`]).
//!
//! [`Options::events`]: crate::Options::events

/// One thing the shell should know about now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The agent wrote a memory in a tainted turn; it waits for the user's approval (seed 000).
    MemoryPending {
        memory: i64,
        conversation: Option<String>,
    },
    /// A plugin changed (or cleared) its contribution to the agent's system prompt (seed 001:
    /// every change is announced).
    ContextChanged { plugin: String },
    /// A scheduled run produced a notification to post; `job` keeps one notification per job.
    Notification {
        job: i64,
        title: String,
        body: String,
    },
    /// The agent asked to open one of [`SCREENS`](crate::plugins::builtin::SCREENS): a step only
    /// the user's hands can take (seed 000: secrets and hands-on steps are uiOnly).
    OpenScreen { screen: String },
}

/// Receives the core's events. The core calls it outside its locks, so an implementation may
/// call back into the engine; it should return quickly.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: Event);
}

/// A sink that drops every event (the CLI and tests that do not look).
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: Event) {}
}
