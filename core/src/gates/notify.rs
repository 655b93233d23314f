//! `host-notify` and `host-log`: ungated, because output is not access, but bounded, because
//! output can flood attention (seed 001, "Ungated: host-notify and host-log").
//!
//! Each takes one line: the host applies the `[<plugin id>] ` prefix and flattens line breaks,
//! so a plugin cannot pose as another. Each plugin has 10 lines per turn on each channel; past
//! that a line is dropped, the call says so, and one `… <N> more suppressed` line is emitted
//! when the turn ends. Log lines go to the debug log, not the scrollback, so they have their own
//! budget and cannot use up the notify one.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use super::{LineKind, Outbox, split_lines};
use crate::text::one_line;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Channel {
    Notify,
    Log,
}

impl Channel {
    fn name(self) -> &'static str {
        match self {
            Channel::Notify => "notify",
            Channel::Log => "log",
        }
    }

    fn kinds(self) -> (LineKind, LineKind) {
        match self {
            Channel::Notify => (LineKind::Notify, LineKind::NotifySuppressed),
            Channel::Log => (LineKind::Log, LineKind::LogSuppressed),
        }
    }
}

#[derive(Debug, Default)]
struct Tally {
    delivered: usize,
    suppressed: usize,
}

/// The notify and log service of one host, shared by every plugin.
#[derive(Debug)]
pub struct Notifier {
    /// This turn's lines per plugin and channel; cleared by [`Notifier::end_turn`].
    tallies: Mutex<BTreeMap<(String, Channel), Tally>>,
    outbox: Outbox,
}

impl Notifier {
    /// seed 001: 10 lines per plugin per turn.
    pub const LINES_PER_TURN: usize = 10;
    /// seed 001: the same cap a command action's payload has, in bytes.
    pub const PAYLOAD_CAP: usize = 64 * 1024;

    pub fn new(outbox: Outbox) -> Self {
        Self {
            tallies: Mutex::new(BTreeMap::new()),
            outbox,
        }
    }

    /// One line in the user's scrollback. Returns `""` when delivered whole.
    pub fn notify(&self, plugin_id: &str, text: &str) -> String {
        self.emit(Channel::Notify, plugin_id, text)
    }

    /// One line in the debug log. Returns `""` when delivered whole.
    pub fn log(&self, plugin_id: &str, text: &str) -> String {
        self.emit(Channel::Log, plugin_id, text)
    }

    /// Ends the turn: emits one `[<plugin id>] … <N> more suppressed` line per plugin and
    /// channel that went over, and starts every budget afresh.
    pub fn end_turn(&self) {
        let tallies =
            std::mem::take(&mut *self.tallies.lock().unwrap_or_else(PoisonError::into_inner));
        for ((plugin_id, channel), tally) in tallies {
            if tally.suppressed > 0 {
                let text = format!("[{plugin_id}] … {} more suppressed", tally.suppressed);
                self.outbox.push(&plugin_id, channel.kinds().1, text);
            }
        }
    }

    fn emit(&self, channel: Channel, plugin_id: &str, text: &str) -> String {
        let mut tallies = self.tallies.lock().unwrap_or_else(PoisonError::into_inner);
        let tally = tallies.entry((plugin_id.to_owned(), channel)).or_default();
        if tally.delivered >= Self::LINES_PER_TURN {
            tally.suppressed += 1;
            // seed 001: a plugin is never told it spoke when it did not.
            return format!(
                "error: {} suppressed — this plugin is over its limit of {} lines per turn",
                channel.name(),
                Self::LINES_PER_TURN
            );
        }
        tally.delivered += 1;
        // seed 001: one call is one line; the prefix covers the first line only, so a second
        // could otherwise pose as another plugin's notice. Nothing invisible stays in it (no
        // bidirectional control reorders it) and no other control character (`text::one_line`).
        let line = one_line(&split_lines(text).join(" "), usize::MAX);
        let (line, reply) = if line.len() > Self::PAYLOAD_CAP {
            let reply = format!(
                "error: {} payload exceeds 64 KiB ({} bytes, limit {}); the line was delivered \
                 truncated",
                channel.name(),
                line.len(),
                Self::PAYLOAD_CAP
            );
            (truncate_at_char(&line, Self::PAYLOAD_CAP), reply)
        } else {
            (line.as_str(), String::new())
        };
        // The host applies the prefix; the payload is never parsed for one.
        self.outbox.push(
            plugin_id,
            channel.kinds().0,
            format!("[{plugin_id}] {line}"),
        );
        reply
    }
}

/// The longest prefix of `text` within `max` bytes that ends on a character boundary.
fn truncate_at_char(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(outbox: &Outbox) -> Vec<String> {
        outbox.drain().into_iter().map(|l| l.text).collect()
    }

    #[test]
    fn ten_lines_then_suppressed_then_one_notice_at_turn_end() {
        let outbox = Outbox::new();
        let notifier = Notifier::new(outbox.clone());
        for i in 0..10 {
            assert_eq!(notifier.notify("memory", &format!("line {i}")), "");
        }
        for _ in 0..3 {
            assert_eq!(
                notifier.notify("memory", "more"),
                "error: notify suppressed — this plugin is over its limit of 10 lines per turn"
            );
        }
        // Another plugin's budget is its own.
        assert_eq!(notifier.notify("other", "hello"), "");
        notifier.end_turn();
        let lines = outbox.drain();
        assert_eq!(lines.len(), 12);
        assert_eq!(lines[0].text, "[memory] line 0");
        assert_eq!(lines[11].text, "[memory] … 3 more suppressed");
        assert_eq!(lines[11].kind, LineKind::NotifySuppressed);
        // The next turn starts afresh.
        assert_eq!(notifier.notify("memory", "again"), "");
        notifier.end_turn();
        assert_eq!(texts(&outbox), ["[memory] again"]);
    }

    #[test]
    fn the_prefix_is_the_hosts_and_newlines_flatten() {
        let outbox = Outbox::new();
        let notifier = Notifier::new(outbox.clone());
        notifier.notify("memory", "[other] rm -rf /");
        notifier.notify("memory", "one\ntwo\r\n[other] three\rfour");
        assert_eq!(
            texts(&outbox),
            [
                "[memory] [other] rm -rf /",
                "[memory] one two [other] three four"
            ]
        );
    }

    #[test]
    fn a_line_keeps_no_bidirectional_control_or_escape() {
        // seed 001: one line as the plugin wrote it, after the host's prefix: no character
        // that reorders it (so it cannot read as another plugin's) or drives a terminal.
        let outbox = Outbox::new();
        let notifier = Notifier::new(outbox.clone());
        notifier.notify("memory", "\u{202e}]rehto[\u{2066} hi\u{1b}[2J\u{200b}");
        assert_eq!(texts(&outbox), ["[memory] ]rehto[ hi [2J"]);
    }

    #[test]
    fn payloads_over_64_kib_are_delivered_truncated_and_say_so() {
        let outbox = Outbox::new();
        let notifier = Notifier::new(outbox.clone());
        assert_eq!(notifier.notify("p", &"x".repeat(65536)), "");
        assert_eq!(
            notifier.notify("p", &"é".repeat(32769)),
            "error: notify payload exceeds 64 KiB (65538 bytes, limit 65536); the line was \
             delivered truncated"
        );
        let lines = texts(&outbox);
        assert_eq!(lines[0].len(), "[p] ".len() + 65536);
        assert_eq!(lines[1], format!("[p] {}", "é".repeat(32768)));
    }

    #[test]
    fn log_has_its_own_budget_and_kind() {
        let outbox = Outbox::new();
        let notifier = Notifier::new(outbox.clone());
        for _ in 0..10 {
            notifier.log("p", "debug");
        }
        assert_eq!(
            notifier.log("p", "debug"),
            "error: log suppressed — this plugin is over its limit of 10 lines per turn"
        );
        assert_eq!(notifier.notify("p", "still heard"), "");
        notifier.end_turn();
        let lines = outbox.drain();
        assert_eq!(lines.last().unwrap().text, "[p] … 1 more suppressed");
        assert_eq!(lines.last().unwrap().kind, LineKind::LogSuppressed);
        assert_eq!(lines[10].kind, LineKind::Notify);
    }
}
