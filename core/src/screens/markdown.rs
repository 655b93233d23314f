//! A plugin's description as the student reads it: its Markdown laid out as blocks of styled
//! spans, which each shell draws with its own text styles. The core decides what a description
//! shows — raw HTML is dropped, an image is its alt text, a link is a tap only when it leads to
//! an `https` page — so the two phones show the same words.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::Action;
use super::tap::https_page;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum BlockKind {
    Paragraph,
    Heading,
    /// A list's item; `TextBlock::marker` holds its bullet or number.
    Item,
    /// A code block: drawn in a fixed-width face, as it is.
    Code,
}

/// A run of text in one style.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct TextSpan {
    pub text: String,
    pub bold: bool,
    pub italic: bool,
    pub code: bool,
    /// What a tap on the span does: open its `https` page in the browser.
    pub link: Option<Action>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct TextBlock {
    pub kind: BlockKind,
    /// How deep a list item sits (0 for the outer list and for every other block).
    pub level: u32,
    /// A list item's `•` or `1.`; empty for other blocks.
    pub marker: String,
    pub spans: Vec<TextSpan>,
}

/// `text` read as Markdown.
pub fn blocks(text: &str) -> Vec<TextBlock> {
    let mut out = Layout::default();
    for event in Parser::new_ext(text, Options::ENABLE_STRIKETHROUGH) {
        out.event(event);
    }
    out.blocks
}

/// `text` read as Markdown and written out plain: its blocks' words, one block a line.
pub fn plain(text: &str) -> String {
    blocks(text)
        .iter()
        .map(|b| {
            let words: String = b.spans.iter().map(|s| s.text.as_str()).collect();
            if b.marker.is_empty() {
                words
            } else {
                format!("{} {words}", b.marker)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Default)]
struct Layout {
    blocks: Vec<TextBlock>,
    bold: u32,
    italic: u32,
    link: Option<Option<Action>>,
    /// The next number of each open list; none for a bulleted one.
    lists: Vec<Option<u64>>,
    /// A list item's marker waiting for the item's first block.
    marker: Option<String>,
    kind: Option<BlockKind>,
}

impl Layout {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.push(&text, false),
            Event::Code(text) => self.push(&text, true),
            Event::SoftBreak => self.push(" ", false),
            Event::HardBreak => self.push("\n", false),
            // Raw HTML, rules, footnotes, task boxes and math are not a description's words.
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.open(BlockKind::Paragraph),
            Tag::Heading { .. } => self.open(BlockKind::Heading),
            Tag::CodeBlock(_) => self.open(BlockKind::Code),
            Tag::List(first) => self.lists.push(first),
            Tag::Item => {
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}.", *n - 1)
                    }
                    _ => "•".to_owned(),
                };
                self.marker = Some(marker);
                self.kind = None;
            }
            Tag::Emphasis => self.italic += 1,
            Tag::Strong => self.bold += 1,
            Tag::Link { dest_url, .. } => {
                self.link = Some(https_page(&dest_url).map(|url| Action::OpenInBrowser {
                    url: url.to_string(),
                }));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::CodeBlock | TagEnd::Item => {
                self.kind = None;
            }
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Link => self.link = None,
            _ => {}
        }
    }

    /// A new block of `kind`; a list item's first block takes its marker.
    fn open(&mut self, kind: BlockKind) {
        let (kind, marker) = match self.marker.take() {
            Some(marker) if kind == BlockKind::Paragraph => (BlockKind::Item, marker),
            Some(marker) => {
                self.new_block(BlockKind::Item, marker);
                (kind, String::new())
            }
            None => (kind, String::new()),
        };
        self.new_block(kind, marker);
    }

    fn new_block(&mut self, kind: BlockKind, marker: String) {
        let level = match kind {
            BlockKind::Item => self.lists.len().saturating_sub(1) as u32,
            _ => 0,
        };
        self.blocks.push(TextBlock {
            kind,
            level,
            marker,
            spans: Vec::new(),
        });
        self.kind = Some(kind);
    }

    fn push(&mut self, text: &str, code: bool) {
        // A tight list's item holds its words with no paragraph around them.
        if self.kind.is_none() {
            self.open(BlockKind::Paragraph);
        }
        let span = TextSpan {
            text: text.to_owned(),
            bold: self.bold > 0,
            italic: self.italic > 0,
            code: code || self.kind == Some(BlockKind::Code),
            link: self.link.clone().flatten(),
        };
        let block = self.blocks.last_mut().expect("a block is open");
        match block.spans.last_mut() {
            Some(last) if same_style(last, &span) => last.text.push_str(&span.text),
            _ => block.spans.push(span),
        }
    }
}

fn same_style(a: &TextSpan, b: &TextSpan) -> bool {
    (a.bold, a.italic, a.code, &a.link) == (b.bold, b.italic, b.code, &b.link)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(text: &str) -> TextSpan {
        TextSpan {
            text: text.into(),
            ..TextSpan::default()
        }
    }

    fn block(kind: BlockKind, level: u32, marker: &str, spans: Vec<TextSpan>) -> TextBlock {
        TextBlock {
            kind,
            level,
            marker: marker.into(),
            spans,
        }
    }

    #[test]
    fn a_description_is_laid_out_as_blocks_of_styled_spans() {
        let text = "# 食堂\n\n查 **哪个食堂** 开着、*排队* 多长，用 `canteen` 时\n看 [菜单](https://dining.pku.edu.cn/menu)。\n\n- 学一\n- 农园\n  1. 二楼\n\n```\nraw <b>\n```\n\n<script>alert(1)</script>\n\n![地图](https://x/map.png) [旧站](http://old.example)";
        assert_eq!(
            blocks(text),
            vec![
                block(BlockKind::Heading, 0, "", vec![span("食堂")]),
                block(
                    BlockKind::Paragraph,
                    0,
                    "",
                    vec![
                        span("查 "),
                        TextSpan {
                            bold: true,
                            ..span("哪个食堂")
                        },
                        span(" 开着、"),
                        TextSpan {
                            italic: true,
                            ..span("排队")
                        },
                        span(" 多长，用 "),
                        TextSpan {
                            code: true,
                            ..span("canteen")
                        },
                        span(" 时 看 "),
                        TextSpan {
                            link: Some(Action::OpenInBrowser {
                                url: "https://dining.pku.edu.cn/menu".into()
                            }),
                            ..span("菜单")
                        },
                        span("。"),
                    ]
                ),
                block(BlockKind::Item, 0, "•", vec![span("学一")]),
                block(BlockKind::Item, 0, "•", vec![span("农园")]),
                block(BlockKind::Item, 1, "1.", vec![span("二楼")]),
                block(
                    BlockKind::Code,
                    0,
                    "",
                    vec![TextSpan {
                        code: true,
                        ..span("raw <b>\n")
                    }]
                ),
                // The image is its alt text; a link to a page that is not https is words only.
                block(BlockKind::Paragraph, 0, "", vec![span("地图 旧站")]),
            ]
        );
    }

    #[test]
    fn plain_text_is_the_words_one_block_a_line() {
        assert_eq!(
            plain("Finds a **free** classroom.\n\n1. Pick a building\n2. Pick a time"),
            "Finds a free classroom.\n1. Pick a building\n2. Pick a time"
        );
        assert_eq!(plain("no markdown at all"), "no markdown at all");
    }
}
