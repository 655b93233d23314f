//! Files the student picked, read into text: one rule for both phones and for every reader — a
//! conversation's attached documents and a plugin's `services.files.pick` — so a shell hands
//! over the file's bytes and nothing else. Plain text and Markdown are UTF-8; a PDF gives the
//! text of its pages (lopdf), and one without any (a scan) is refused rather than read empty.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::settings::Language;

/// A file the student picked in the shell's picker: its name and its bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct PickedFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for PickedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PickedFile")
            .field("name", &self.name)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// A tool the student tapped asks them to pick a file (seed 000: "A plugin may call
/// services.files.pick from a screen").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePick {
    /// The plugin that asks, by its title, as the picker's heading says.
    pub plugin_title: String,
}

/// The kinds a conversation takes, by the file name's extension (any case).
pub const DOCUMENT_KINDS: [&str; 4] = ["txt", "md", "markdown", "pdf"];
/// The most text one document gives a conversation, in bytes: the agent reads it whole.
pub const DOCUMENT_BYTES: usize = 1024 * 1024;
/// The largest file read, in bytes. A PDF carries its fonts and images beside its text, so its
/// file is often many times the text it gives; past this it is refused before it is parsed,
/// which also bounds what a hostile file makes the phone hold. A text file is bounded by
/// `DOCUMENT_BYTES` itself.
pub const FILE_BYTES: usize = 16 * 1024 * 1024;

/// The text of the document `name`, read from the file's `bytes`; refused naming the file, in
/// the student's language, when the kind is not one the conversation takes, the file or its
/// text is too large, the text is not UTF-8, the PDF does not parse or has no text.
pub fn read(lang: Language, name: &str, bytes: Vec<u8>) -> Result<String, String> {
    let refuse = |zh: String, en: String| match lang {
        Language::Zh => zh,
        Language::En => en,
    };
    let kind = name
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .filter(|k| DOCUMENT_KINDS.contains(&k.as_str()));
    let Some(kind) = kind else {
        return Err(refuse(
            format!(
                "文件“{name}”不能添加：只能添加纯文本（.txt）、Markdown（.md）和 PDF（.pdf）文件"
            ),
            format!(
                "document \"{name}\": only plain text (.txt), Markdown (.md) and PDF (.pdf) files can be attached"
            ),
        ));
    };
    if bytes.len() > FILE_BYTES {
        return Err(refuse(
            format!(
                "文件“{name}”超过 {} MiB，太大了，不能添加",
                FILE_BYTES >> 20
            ),
            format!(
                "document \"{name}\": the file is larger than the {} MiB a conversation reads",
                FILE_BYTES >> 20
            ),
        ));
    }
    let text = if kind == "pdf" {
        match extract_text(&bytes) {
            Some(text) => text,
            None => {
                return Err(refuse(
                    format!("文件“{name}”不是能读取的 PDF，没有添加"),
                    format!("document \"{name}\": this is not a PDF that can be read"),
                ));
            }
        }
    } else {
        match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => {
                return Err(refuse(
                    format!("文件“{name}”不是 UTF-8 编码的文本，没有添加"),
                    format!("document \"{name}\": the file is not UTF-8 text"),
                ));
            }
        }
    };
    if kind == "pdf" && text.trim().is_empty() {
        return Err(refuse(
            format!("PDF“{name}”里没有可以读取的文字（可能是扫描件），没有添加"),
            format!(
                "PDF \"{name}\" has no text to read (perhaps it is a scan); nothing was attached"
            ),
        ));
    }
    if text.len() > DOCUMENT_BYTES {
        return Err(refuse(
            format!(
                "文件“{name}”的文字有 {} 字节，超过一个对话能读的 {} MiB",
                text.len(),
                DOCUMENT_BYTES >> 20
            ),
            format!(
                "document \"{name}\": {} bytes of text is more than the {} MiB a conversation takes",
                text.len(),
                DOCUMENT_BYTES >> 20
            ),
        ));
    }
    Ok(text)
}

/// The text of every page, in order; `None` when the file does not parse as a PDF. A page or a
/// font whose text cannot be decoded gives none (a scanned page has none either), and the rest
/// is kept. The parser is run inside `catch_unwind`: it reads untrusted bytes, and its panic on
/// a malformed file is a refusal, never a crash of the app.
fn extract_text(bytes: &[u8]) -> Option<String> {
    catch_unwind(AssertUnwindSafe(|| {
        let pdf = lopdf::Document::load_mem(bytes).ok()?;
        let pages: Vec<u32> = pdf.get_pages().into_keys().collect();
        let text: String = pdf
            .extract_text_chunks(&pages)
            .into_iter()
            .filter_map(Result::ok)
            .collect();
        Some(text)
    }))
    .ok()
    .flatten()
}
