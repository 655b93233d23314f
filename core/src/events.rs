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
    /// A turn of the agent began; `turn` is the id `cancel_turn` takes.
    TurnStarted { conversation: String, turn: String },
    /// Text of the model's answer, as it streams.
    TextDelta { turn: String, text: String },
    /// Words the student sent while the turn ran joined it here (DESIGN.md §3): the chat shows
    /// them at this point of the turn; the answer streamed before them is complete.
    MessageJoined { turn: String, text: String },
    /// The model's reasoning, as it streams: shown as thinking, never as the answer.
    ThinkingDelta { turn: String, text: String },
    /// The model's answer was cut off before it finished and is asked for again: the text and
    /// thinking streamed since the last complete message are void, and what streams next
    /// replaces them.
    AnswerRestarted { turn: String },
    /// The model called a tool: its name as the model wrote it, the tool id it resolved to
    /// (none for a name no tool has), and the arguments as written.
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
    /// How far a running call has come, as its server says: `done` is "3/5" (or "3" when the
    /// server gives no total), `message` the server's words, cut and on one line.
    ToolProgress {
        turn: String,
        call: String,
        done: String,
        message: Option<String>,
    },
    /// A call's outcome: the whole result (the UI's copy), or the error the model is given.
    ToolResult {
        turn: String,
        call: String,
        ok: bool,
        result: String,
    },
    /// A line a plugin's gates hand to the user (a notify line, a context change announced).
    HostLine {
        plugin: String,
        kind: String,
        text: String,
    },
    /// A turn ended: `state` is done, cancelled, interrupted or failed; `message` says why
    /// when it did not end with the model's answer.
    TurnEnded {
        turn: String,
        state: String,
        message: Option<String>,
        usage: TurnUsage,
    },
}

/// The tokens a turn used, summed over its model requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TurnUsage {
    pub model_requests: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// The prompt tokens the provider served from its cache of an earlier request's prefix.
    pub cached_tokens: u64,
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
