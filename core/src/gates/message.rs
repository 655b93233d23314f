//! The send-message gate: the only capability that spends the user's money, since every
//! message causes a billed turn (seed 001, "allow_send_message").
//!
//! A message is queued for the turn loop, which takes it with [`MessageGate::take_next`] when it
//! reaches a turn: as a fresh user message at the next iteration boundary of a running turn, or
//! as the start of the next turn. It is echoed to the user when accepted, on the host's budget.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use super::{Grants, LineKind, Outbox, denied};

/// What the turn loop is doing when a plugin sends, as plain data the loop fills in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnState {
    /// A turn is in flight.
    pub running: bool,
    /// The plugin whose message started the running turn, if one did.
    pub started_by: Option<String>,
}

/// A message waiting for a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingMessage {
    pub plugin_id: String,
    pub text: String,
}

#[derive(Debug, Default)]
struct Session {
    /// Oldest first; at most one per plugin (rule 2).
    pending: VecDeque<PendingMessage>,
    /// Messages accepted per plugin this session (rule 3).
    accepted: BTreeMap<String, u32>,
}

/// `host-send-user-message` for every plugin of one session.
#[derive(Debug)]
pub struct MessageGate {
    /// `None` without a turn loop (headless): every send is refused, never dropped.
    outbox: Option<Outbox>,
    session: Mutex<Session>,
}

impl MessageGate {
    /// seed 001: 20, per plugin, per session — a wall-clock window would let a patient loop run
    /// forever, and a shared budget would let one looping plugin spend another's.
    pub const TURNS_PER_SESSION: u32 = 20;

    /// The gate of a session with a turn loop; accepted messages are echoed to `outbox`. One
    /// gate per session: the per-session cap counts from its construction.
    pub fn new(outbox: Outbox) -> Self {
        Self {
            outbox: Some(outbox),
            session: Mutex::default(),
        }
    }

    /// The gate where there is no turn loop to reach.
    pub fn headless() -> Self {
        Self {
            outbox: None,
            session: Mutex::default(),
        }
    }

    /// Queues `text` from `plugin_id` and returns `""`, or an `error: ` string after queueing
    /// nothing. `turn` is the turn loop's state at the time of the call.
    pub fn send(&self, plugin_id: &str, grants: &Grants, text: &str, turn: &TurnState) -> String {
        if !grants.allow_send_message {
            return denied("sending messages", "allow_send_message");
        }
        let Some(outbox) = &self.outbox else {
            return "error: sending a message is not available right now".to_owned();
        };
        if text.trim().is_empty() {
            // A billed turn about nothing is never what a plugin meant.
            return "error: the message is empty; nothing was sent".to_owned();
        }
        let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        // seed 001: the three rules, in this order — "you are inside your own turn" is the more
        // specific diagnosis than "you already have a message pending".
        if turn.running && turn.started_by.as_deref() == Some(plugin_id) {
            return "error: this plugin cannot send during a turn its own message started"
                .to_owned();
        }
        if session
            .pending
            .iter()
            .any(|message| message.plugin_id == plugin_id)
        {
            return "error: a message from this plugin is already pending".to_owned();
        }
        let accepted = session.accepted.entry(plugin_id.to_owned()).or_default();
        if *accepted >= Self::TURNS_PER_SESSION {
            return format!(
                "error: this plugin has started too many turns in this session ({})",
                Self::TURNS_PER_SESSION
            );
        }
        // Counted when accepted: every message is a billed model call, whether it starts a turn
        // or steers the running one.
        *accepted += 1;
        session.pending.push_back(PendingMessage {
            plugin_id: plugin_id.to_owned(),
            text: text.to_owned(),
        });
        // seed 001: there is no quiet path; the user sees every message verbatim.
        outbox.push(
            plugin_id,
            LineKind::MessageSent,
            format!("plugin \"{plugin_id}\" sent a message to the agent:\n{text}"),
        );
        String::new()
    }

    /// Takes the oldest pending message as it reaches a turn, which clears that plugin's
    /// pending slot (seed 001: clearing it on return would make rule 2 decorative). The loop
    /// reads a human's queued line before this.
    pub fn take_next(&self) -> Option<PendingMessage> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pending
            .pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted() -> Grants {
        Grants {
            allow_send_message: true,
            ..Grants::default()
        }
    }

    fn idle() -> TurnState {
        TurnState::default()
    }

    fn started_by(plugin: &str) -> TurnState {
        TurnState {
            running: true,
            started_by: Some(plugin.to_owned()),
        }
    }

    const OWN_TURN: &str = "error: this plugin cannot send during a turn its own message started";
    const PENDING: &str = "error: a message from this plugin is already pending";
    const TOO_MANY: &str = "error: this plugin has started too many turns in this session (20)";

    #[test]
    fn off_names_the_grant_and_headless_is_unavailable() {
        let gate = MessageGate::new(Outbox::new());
        assert_eq!(
            gate.send("a", &Grants::default(), "hi", &idle()),
            "error: sending messages denied (set allow_send_message = true in this plugin's grants)"
        );
        assert_eq!(
            MessageGate::headless().send("a", &granted(), "hi", &idle()),
            "error: sending a message is not available right now"
        );
        assert_eq!(
            gate.send("a", &granted(), " \n", &idle()),
            "error: the message is empty; nothing was sent"
        );
    }

    #[test]
    fn pending_clears_when_the_message_reaches_a_turn() {
        let gate = MessageGate::new(Outbox::new());
        assert_eq!(gate.send("a", &granted(), "one", &idle()), "");
        assert_eq!(gate.send("a", &granted(), "two", &idle()), PENDING);
        assert_eq!(gate.send("b", &granted(), "other", &idle()), "");
        assert_eq!(
            gate.take_next(),
            Some(PendingMessage {
                plugin_id: "a".into(),
                text: "one".into()
            })
        );
        assert_eq!(gate.send("a", &granted(), "two", &idle()), "");
        assert_eq!(gate.take_next().unwrap().plugin_id, "b");
    }

    #[test]
    fn no_replying_to_yourself_but_others_may_speak() {
        let gate = MessageGate::new(Outbox::new());
        assert_eq!(gate.send("a", &granted(), "x", &started_by("a")), OWN_TURN);
        assert_eq!(gate.send("b", &granted(), "x", &started_by("a")), "");
        // A turn that has ended no longer binds its starter.
        let ended = TurnState {
            running: false,
            started_by: Some("a".into()),
        };
        assert_eq!(gate.send("a", &granted(), "x", &ended), "");
    }

    #[test]
    fn own_turn_is_reported_before_pending_and_pending_before_the_cap() {
        let gate = MessageGate::new(Outbox::new());
        assert_eq!(gate.send("a", &granted(), "x", &idle()), "");
        assert_eq!(gate.send("a", &granted(), "x", &started_by("a")), OWN_TURN);
        // The twentieth message still pending: rules 2 and 3 both apply, and 1 too in its turn.
        let capped = MessageGate::new(Outbox::new());
        for i in 0..20 {
            assert_eq!(capped.send("a", &granted(), "x", &idle()), "");
            if i < 19 {
                capped.take_next();
            }
        }
        assert_eq!(
            capped.send("a", &granted(), "x", &started_by("a")),
            OWN_TURN
        );
        assert_eq!(capped.send("a", &granted(), "x", &idle()), PENDING);
        capped.take_next();
        assert_eq!(capped.send("a", &granted(), "x", &idle()), TOO_MANY);
    }

    #[test]
    fn twenty_per_plugin_per_session() {
        let gate = MessageGate::new(Outbox::new());
        for _ in 0..20 {
            assert_eq!(gate.send("a", &granted(), "again", &idle()), "");
            gate.take_next();
        }
        assert_eq!(gate.send("a", &granted(), "again", &idle()), TOO_MANY);
        assert_eq!(gate.send("b", &granted(), "mine", &idle()), "");
    }

    #[test]
    fn every_accepted_message_is_echoed_and_refusals_are_not() {
        let outbox = Outbox::new();
        let gate = MessageGate::new(outbox.clone());
        gate.send("autofix", &granted(), "fix it\nplease", &idle());
        gate.send("autofix", &granted(), "again", &idle());
        let lines = outbox.drain();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].kind, LineKind::MessageSent);
        assert_eq!(
            lines[0].text,
            "plugin \"autofix\" sent a message to the agent:\nfix it\nplease"
        );
    }
}
