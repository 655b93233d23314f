//! What the chat shows of a turn while it runs: the text and thinking streamed so far and what
//! was decided about each call. The history keeps each message once it is complete; this keeps
//! the rest, fed by the engine's events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::events::{Event, EventSink};
use crate::lock;

/// One running (or just ended) turn of a conversation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LiveTurn {
    pub turn: String,
    pub running: bool,
    /// The answer streamed since the last complete message.
    pub text: String,
    pub thinking: String,
    /// How it ended, when it did not end with an answer.
    pub ended: Option<(String, Option<String>)>,
}

/// A call's decision as the turn loop announced it: `run`, `ask` or `refused`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LiveDecision {
    pub verdict: String,
    pub reason: String,
    /// How far the call has come as its server last said: `3/5` and its words.
    pub progress: Option<(String, Option<String>)>,
}

#[derive(Default)]
struct State {
    /// conversation → its latest turn
    turns: HashMap<String, LiveTurn>,
    /// turn id → conversation
    conversation_of: HashMap<String, String>,
    /// call id → decision
    decisions: HashMap<String, LiveDecision>,
    /// A plugin's campus request found the session ended (DESIGN.md §10): the student is
    /// asked to sign in again until they do.
    signin_asked: bool,
}

/// The live state of the turns, kept from the engine's events.
#[derive(Default)]
pub struct Live {
    state: Mutex<State>,
}

impl Live {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A sink that keeps the live state and hands every event on to `next` (the shell's).
    pub fn sink(self: &Arc<Self>, next: Arc<dyn EventSink>) -> Arc<dyn EventSink> {
        Arc::new(Tee {
            live: self.clone(),
            next,
        })
    }

    pub(crate) fn turn(&self, conversation: &str) -> Option<LiveTurn> {
        lock(&self.state).turns.get(conversation).cloned()
    }

    pub(crate) fn decision(&self, call: &str) -> Option<LiveDecision> {
        lock(&self.state).decisions.get(call).cloned()
    }

    /// Whether the student is still to be asked to sign in to the campus again; `signed_in`
    /// (the account as it stands, read from the keystore only while asking) ends the asking.
    pub(crate) fn signin_asked(&self, signed_in: impl FnOnce() -> bool) -> bool {
        // The lock is not held across the keystore read.
        let asked = lock(&self.state).signin_asked;
        if asked && signed_in() {
            lock(&self.state).signin_asked = false;
            return false;
        }
        asked
    }

    fn observe(&self, event: &Event) {
        let mut s = lock(&self.state);
        let s = &mut *s;
        match event {
            Event::TurnStarted { conversation, turn } => {
                s.conversation_of.insert(turn.clone(), conversation.clone());
                s.turns.insert(
                    conversation.clone(),
                    LiveTurn {
                        turn: turn.clone(),
                        running: true,
                        ..LiveTurn::default()
                    },
                );
            }
            Event::TextDelta { turn, text } => {
                if let Some(t) = turn_of(s, turn) {
                    t.text.push_str(text);
                }
            }
            Event::ThinkingDelta { turn, text } => {
                if let Some(t) = turn_of(s, turn) {
                    t.thinking.push_str(text);
                }
            }
            Event::AnswerRestarted { turn } => {
                // The cut attempt's words give way to the next attempt's.
                if let Some(t) = turn_of(s, turn) {
                    t.text.clear();
                    t.thinking.clear();
                }
            }
            Event::ToolCallStarted { turn, .. } | Event::MessageJoined { turn, .. } => {
                // The answer before the call or the joined words is in the history now.
                if let Some(t) = turn_of(s, turn) {
                    t.text.clear();
                    t.thinking.clear();
                }
            }
            Event::ToolDecision {
                call,
                verdict,
                reason,
                ..
            } => {
                s.decisions.insert(
                    call.clone(),
                    LiveDecision {
                        verdict: verdict.clone(),
                        reason: reason.clone(),
                        progress: None,
                    },
                );
            }
            Event::ToolProgress {
                call,
                done,
                message,
                ..
            } => {
                if let Some(decision) = s.decisions.get_mut(call) {
                    decision.progress = Some((done.clone(), message.clone()));
                }
            }
            Event::TurnEnded {
                turn,
                state,
                message,
                ..
            } => {
                if let Some(t) = turn_of(s, turn) {
                    t.running = false;
                    t.text.clear();
                    t.thinking.clear();
                    t.ended = (state != "done").then(|| (state.clone(), message.clone()));
                }
            }
            Event::HostLine { kind, .. } if kind == "signinRequired" => {
                s.signin_asked = true;
            }
            _ => {}
        }
    }
}

fn turn_of<'s>(s: &'s mut State, turn: &str) -> Option<&'s mut LiveTurn> {
    let conversation = s.conversation_of.get(turn)?;
    s.turns.get_mut(conversation).filter(|t| t.turn == turn)
}

struct Tee {
    live: Arc<Live>,
    next: Arc<dyn EventSink>,
}

impl EventSink for Tee {
    fn emit(&self, event: Event) {
        self.live.observe(&event);
        self.next.emit(event);
    }
}
