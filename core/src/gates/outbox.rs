//! The lines the gates hand to the host for the user: a plugin's notify and log lines, and the
//! host's own announcements about a plugin. The host drains the queue and shows each line.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

/// What a line is, so a shell can route and style it: `Log` lines go to the debug log, the rest
/// to the user's scrollback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A plugin's `notify` line, prefixed by the host.
    Notify,
    /// `… <N> more suppressed` for a plugin's notify lines past the per-turn limit.
    NotifySuppressed,
    /// A plugin's `log` line, prefixed by the host.
    Log,
    /// `… <N> more suppressed` for a plugin's log lines past the per-turn limit.
    LogSuppressed,
    /// The host announcing that a plugin changed its context contribution (seed 001: every
    /// change is announced, on the host's own budget).
    ContextChanged,
    /// The host echoing a message a plugin sent to the agent (seed 001: there is no quiet path).
    MessageSent,
    /// The host disclosing a tool call a plugin made (seed 001: not part of the conversation,
    /// so told in one line instead).
    ToolCalled,
    /// A plugin's campus request found the session ended: the student is asked to sign in
    /// again (DESIGN.md §10), with a tap that opens the campus sign-in.
    SignInRequired,
}

/// One line for the user, attributed to the plugin it is about. `text` is the whole line as it
/// should be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLine {
    pub plugin_id: String,
    pub kind: LineKind,
    pub text: String,
}

/// A queue of [`HostLine`]s shared by the gates of one host; clones share the queue.
#[derive(Debug, Clone, Default)]
pub struct Outbox {
    lines: Arc<Mutex<VecDeque<HostLine>>>,
}

impl Outbox {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes every queued line, oldest first.
    pub fn drain(&self) -> Vec<HostLine> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect()
    }

    pub(crate) fn push(&self, plugin_id: &str, kind: LineKind, text: String) {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(HostLine {
                plugin_id: plugin_id.to_owned(),
                kind,
                text,
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_returns_lines_oldest_first_and_empties_the_queue() {
        let outbox = Outbox::new();
        let shared = outbox.clone();
        outbox.push("a", LineKind::Notify, "[a] one".into());
        shared.push("b", LineKind::MessageSent, "two".into());
        let texts: Vec<_> = outbox.drain().into_iter().map(|l| l.text).collect();
        assert_eq!(texts, ["[a] one", "two"]);
        assert!(shared.drain().is_empty());
    }
}
