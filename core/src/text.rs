//! Text written outside the app (a plugin's or a remote server's words, a call's inputs) as the
//! app shows it and compares it. One rule for everything a sheet shows (DESIGN.md §2: a remote
//! server's words, like a document's, are third-party content): one line, and nothing invisible
//! in it, so no line break makes a second headline and no bidirectional control makes
//! `不会公开` read backwards.

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// Whether `c` renders as nothing: a format character (general category Cf: zero-width spaces
/// and joiners, the soft hyphen, the bidirectional controls, tag characters), or one of the few
/// other default-ignorable code points that are invisible too (fillers, variation selectors,
/// the combining grapheme joiner).
pub(crate) fn is_invisible(c: char) -> bool {
    get_general_category(c) == GeneralCategory::Format
        || matches!(
            c,
            '\u{34f}'                   // combining grapheme joiner
            | '\u{115f}'..='\u{1160}'   // Hangul fillers
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180d}'   // Mongolian variation selectors
            | '\u{180f}'
            | '\u{3164}'                // Hangul filler
            | '\u{fe00}'..='\u{fe0f}'   // variation selectors
            | '\u{ffa0}'                // half-width Hangul filler
            | '\u{e0100}'..='\u{e01ef}' // variation selectors supplement
        )
}

/// Whether a renderer may start a new line at `c`: a control character (a line feed, a carriage
/// return, NEL, an escape) or the line and paragraph separators (U+2028, U+2029).
fn breaks_line(c: char) -> bool {
    c.is_control()
        || matches!(
            get_general_category(c),
            GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator
        )
}

/// Text written outside the app as a sheet shows it: on one line (each control character and
/// line or paragraph separator a space), with no invisible character, cut to `cap` characters
/// on a char boundary.
pub(crate) fn one_line(text: &str, cap: usize) -> String {
    text.chars()
        .filter(|c| !is_invisible(*c))
        .map(|c| if breaks_line(c) { ' ' } else { c })
        .take(cap)
        .collect()
}

/// A line of words cut to at most `cap` characters for a label (a conversation's title from its
/// first message, a list's preview): one line as [`one_line`] makes it, runs of spaces as one,
/// trimmed, and `…` in place of what was cut. `None` when nothing visible is left.
pub(crate) fn headline(text: &str, cap: usize) -> Option<String> {
    let line = one_line(text, usize::MAX);
    let words: Vec<&str> = line.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.is_empty() {
        return None;
    }
    if joined.chars().count() <= cap {
        return Some(joined);
    }
    let kept: String = joined.chars().take(cap.saturating_sub(1)).collect();
    Some(format!("{}…", kept.trim_end()))
}

/// `value` as pretty JSON a sheet shows whole: exact, every character that [`one_line`] would
/// change (bar the layout's own line feeds) written as its `\u` escape, so the value reads as
/// it is, visibly, and nothing in it breaks or reorders the text around it.
pub(crate) fn json_shown(value: &serde_json::Value) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = String::with_capacity(pretty.len());
    for c in pretty.chars() {
        if c != '\n' && (breaks_line(c) || is_invisible(c)) {
            // Only inside a string can such a character be: JSON's own syntax is ASCII.
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as it is compared with other text: no invisible character, compatibility forms as
/// their plain letters (NFKC: a full-width `Ｐ` is `P`, `ﬁ` is `fi`), lowercase.
pub(crate) fn folded(text: &str) -> String {
    text.chars()
        .filter(|c| !is_invisible(*c))
        .nfkc()
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_turns_every_line_break_into_a_space_and_drops_what_is_invisible() {
        // Third-party words (DESIGN.md §2) cannot start a line or reorder the sheet.
        assert_eq!(
            one_line("a\nb\r\nc\u{85}d\u{2028}e\u{2029}f\u{1b}[0m", usize::MAX),
            "a b  c d e f [0m"
        );
        assert_eq!(
            one_line(
                "\u{202e}开公会不\u{202c} \u{2066}x\u{2069}\u{200b}\u{ad}\u{feff}\u{e0041}",
                usize::MAX
            ),
            "开公会不 x"
        );
        assert_eq!(one_line("一二三四", 2), "一二");
    }

    #[test]
    fn json_shown_writes_what_would_break_the_line_as_its_escape() {
        let value = serde_json::json!({"a": "x\u{2028}\u{202e}y\u{85}\u{e0041}"});
        assert_eq!(
            json_shown(&value),
            "{\n  \"a\": \"x\\u2028\\u202ey\\u0085\\udb40\\udc41\"\n}"
        );
    }

    #[test]
    fn folded_text_is_plain_lowercase_letters() {
        assert_eq!(folded("Ｐａｓｓ\u{200b}Ｗｏｒｄ"), "password");
        assert_eq!(folded("ﬁle"), "file");
    }
}
