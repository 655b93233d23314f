//! What of a conversation one model request carries (DESIGN.md §13): the system prompt, the
//! tools and the current turn always; older turns from the newest back while they fit the
//! budget (`model.contextTokens`, else the provider's context size), their tool results
//! shortened to a line first. Tokens are estimated without a tokenizer ([`estimate`]).

/// The tokens `text` costs, estimated without a tokenizer: a token for every three ASCII
/// bytes (English words and JSON run three to four characters a token in the BPE tokenizers of
/// DeepSeek, Qwen, Kimi and OpenAI) and one for every other character (a Chinese character is
/// 0.6 to 1.5 tokens). It errs high, so a request it lets through fits.
pub fn estimate(text: &str) -> u32 {
    let mut ascii: u32 = 0;
    let mut other: u32 = 0;
    for &b in text.as_bytes() {
        if b < 0x80 {
            ascii += 1;
        } else if b & 0xC0 != 0x80 {
            // The first byte of a character outside ASCII; continuation bytes are not counted.
            other += 1;
        }
    }
    ascii.div_ceil(3) + other
}

/// One message of the history as a request may carry it.
pub(crate) struct Entry {
    /// The turn whose row wrote it.
    pub turn: u64,
    /// The id of the row it comes from.
    pub row: i64,
    pub json: String,
    pub tokens: u32,
    /// A tool result's one line (what ran and its outcome) and its tokens: what an older
    /// turn carries once the whole history does not fit.
    pub short: Option<(String, u32)>,
}

impl Entry {
    pub(crate) fn new(turn: u64, row: i64, json: String, short: Option<String>) -> Self {
        let tokens = estimate(&json);
        Self {
            turn,
            row,
            json,
            tokens,
            short: short.map(|s| {
                let t = estimate(&s);
                (s, t)
            }),
        }
    }

    pub(crate) fn short_tokens(&self) -> u32 {
        self.short.as_ref().map_or(self.tokens, |(_, t)| *t)
    }
}

/// The history a request carries.
#[derive(Debug, PartialEq)]
pub(crate) struct Window<'a> {
    pub messages: Vec<&'a str>,
    /// The id of the first row carried, when older rows of the conversation are left out.
    pub starts_at: Option<i64>,
    /// The estimated tokens of `messages`.
    pub tokens: u32,
}

/// The messages of `entries` a request carries in `available` tokens. `entries` are the
/// history in order; `earlier` says rows before them exist (and are left out). The newest
/// turn is carried whole whatever it costs; when all the older turns do not fit whole, every
/// older tool result is shortened to its line, and older turns are taken newest first while
/// they fit. A turn is taken whole or not at all, so a call is never sent without its result.
pub(crate) fn fit(entries: &[Entry], available: u32, earlier: bool) -> Window<'_> {
    let Some(last) = entries.last() else {
        return Window {
            messages: Vec::new(),
            starts_at: None,
            tokens: 0,
        };
    };
    let current = entries.partition_point(|e| e.turn < last.turn);
    let (older, newest) = entries.split_at(current);
    let newest_tokens: u32 = newest.iter().map(|e| e.tokens).sum();
    let room = available.saturating_sub(newest_tokens);
    let whole: u64 = older.iter().map(|e| u64::from(e.tokens)).sum();
    let (start, shorten) = if whole <= u64::from(room) {
        (0, false)
    } else {
        // Older turns newest first, shortened, while they fit.
        let mut start = older.len();
        let mut used: u32 = 0;
        let mut end = older.len();
        while end > 0 {
            let turn = older[end - 1].turn;
            let begin = older[..end].partition_point(|e| e.turn < turn);
            let cost: u32 = older[begin..end].iter().map(Entry::short_tokens).sum();
            if used.saturating_add(cost) > room {
                break;
            }
            used += cost;
            start = begin;
            end = begin;
        }
        (start, true)
    };
    let mut tokens = newest_tokens;
    let mut messages: Vec<&str> = Vec::with_capacity(entries.len() - start);
    for e in &older[start..] {
        match (&e.short, shorten) {
            (Some((line, t)), true) => {
                messages.push(line);
                tokens += t;
            }
            _ => {
                messages.push(&e.json);
                tokens += e.tokens;
            }
        }
    }
    messages.extend(newest.iter().map(|e| e.json.as_str()));
    let left_out = start > 0 || earlier;
    Window {
        messages,
        starts_at: left_out.then(|| entries[start].row),
        tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_counts_three_ascii_bytes_a_token_and_each_other_character_one() {
        // DESIGN.md §13: the budget is counted with a tokenizer-free estimate the tests pin.
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("abc"), 1);
        assert_eq!(estimate("abcd"), 2);
        assert_eq!(estimate("{\"role\":\"user\"}"), 5);
        assert_eq!(estimate("校园卡余额"), 5);
        assert_eq!(estimate("余额 is 12.5 元"), 3 + 3);
        // A character outside the BMP is one character, not four.
        assert_eq!(estimate("😀"), 1);
    }

    fn turn(n: u64, row: i64, tokens: u32, tool: bool) -> Vec<Entry> {
        let text = |t: u32| "x".repeat(t as usize * 3);
        let mut out = vec![Entry::new(n, row, text(tokens), None)];
        if tool {
            out.push(Entry::new(n, row + 1, text(tokens), Some("r".into())));
        }
        out
    }

    #[test]
    fn everything_fits_whole_and_nothing_is_left_out() {
        let entries: Vec<Entry> = (1..=3)
            .flat_map(|n| turn(n, n as i64 * 10, 10, true))
            .collect();
        let w = fit(&entries, 60, false);
        assert_eq!(w.messages.len(), 6);
        assert_eq!(w.starts_at, None);
        assert_eq!(w.tokens, 60);
    }

    #[test]
    fn older_tool_results_are_shortened_before_a_turn_is_left_out() {
        // DESIGN.md §13: older tool results shortened first.
        let entries: Vec<Entry> = (1..=3)
            .flat_map(|n| turn(n, n as i64 * 10, 10, true))
            .collect();
        let w = fit(&entries, 59, false);
        assert_eq!(w.messages.len(), 6);
        assert_eq!(w.messages[1], "r");
        assert_eq!(w.messages[3], "r");
        assert_eq!(
            w.messages[5].len(),
            30,
            "the current turn's result stays whole"
        );
        assert_eq!(w.starts_at, None);
        assert_eq!(w.tokens, 20 + 11 + 11);
    }

    #[test]
    fn older_turns_go_newest_first_while_they_fit_and_the_current_turn_always() {
        let entries: Vec<Entry> = (1..=3)
            .flat_map(|n| turn(n, n as i64 * 10, 10, true))
            .collect();
        let w = fit(&entries, 31, false);
        assert_eq!(w.messages.len(), 4);
        assert_eq!(w.starts_at, Some(20));
        // Not even the current turn fits: it is sent anyway, alone.
        let w = fit(&entries, 5, false);
        assert_eq!(w.messages.len(), 2);
        assert_eq!(w.starts_at, Some(30));
        // Rows before those read are left out too.
        assert_eq!(fit(&entries, 1000, true).starts_at, Some(10));
    }
}
