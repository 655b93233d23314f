//! Documents a student attaches to a conversation from the phone's picker: the core reads the
//! file's bytes by the name's kind (text, Markdown, PDF) and refuses, naming the file in the
//! student's language, what it cannot read; a refused file attaches nothing.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use harness_core::events::NoEvents;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;
use harness_core::screens::{Action, DOCUMENT_BYTES, FILE_BYTES, Live, Screens};
use harness_core::settings::{Change, Language};
use harness_core::{Engine, Options};
use lopdf::{Dictionary, Document, Object, Stream, dictionary};

struct NoPrompts;

#[async_trait]
impl ApprovalBroker for NoPrompts {
    async fn ask(&self, prompt: Prompt) -> Answer {
        panic!("attaching a document asked about {}", prompt.tool);
    }
}

fn open(dir: &Path) -> Screens {
    let live = Live::new();
    let mut options = Options::new(Arc::new(NoPrompts));
    options.builtin_plugins = false;
    options.events = live.sink(Arc::new(NoEvents));
    Screens::new(Arc::new(Engine::open(dir, options).unwrap()), live)
}

async fn attach(s: &Screens, name: &str, bytes: Vec<u8>) -> Result<(), String> {
    let file = Action::AttachFile {
        conversation: "c".into(),
        name: name.into(),
        bytes,
    };
    s.act(file).await.map(drop).map_err(|e| e.to_string())
}

/// The documents of conversation `c`: each name with its text.
fn documents(s: &Screens) -> Vec<(String, String)> {
    let rows = s.engine().documents("c").unwrap();
    rows.into_iter()
        .map(|(_, name, text)| (name, text))
        .collect()
}

/// A PDF of one page per content stream, each page with the resources `resources` adds (a
/// stream is its own object, so they are added to the document).
fn pdf(resources: impl FnOnce(&mut Document) -> Dictionary, pages: &[&[u8]]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let tree = doc.new_object_id();
    let resources = resources(&mut doc);
    let resources = doc.add_object(resources);
    let kids: Vec<Object> = pages
        .iter()
        .map(|content| {
            let content = doc.add_object(Stream::new(Dictionary::new(), content.to_vec()));
            doc.add_object(dictionary! {
                "Type" => "Page",
                "Parent" => tree,
                "Contents" => content,
                "Resources" => resources,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            })
            .into()
        })
        .collect();
    let count = kids.len() as i64;
    doc.objects.insert(
        tree,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => tree });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

/// The standard Helvetica, as F1.
fn helvetica(_: &mut Document) -> Dictionary {
    dictionary! { "Font" => dictionary! { "F1" => dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    }}}
}

/// A page that is one picture and nothing else: what a scanner makes.
fn scan() -> Vec<u8> {
    let picture = |doc: &mut Document| {
        let image = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => 1, "Height" => 1,
                "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
            },
            vec![0x80],
        ));
        dictionary! { "XObject" => dictionary! { "Im1" => image } }
    };
    pdf(picture, &[b"q 100 0 0 100 72 600 cm /Im1 Do Q"])
}

#[tokio::test]
async fn a_pdf_is_attached_as_the_text_of_its_pages() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let file = pdf(
        helvetica,
        &[
            b"BT /F1 12 Tf 72 720 Td (Lecture on Wednesday) Tj T* (Room 2-101) Tj ET",
            b"BT /F1 12 Tf 72 720 Td (Bring the notes) Tj ET",
        ],
    );
    attach(&s, "Notice.PDF", file).await.unwrap();
    assert_eq!(
        documents(&s),
        [(
            "Notice.PDF".to_owned(),
            "Lecture on Wednesday\nRoom 2-101\nBring the notes\n".to_owned()
        )]
    );
    assert_eq!(s.chat("c").unwrap().documents, ["Notice.PDF"]);
}

#[tokio::test]
async fn a_chinese_pdf_is_read_through_its_fonts_unicode_map() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    // Two-byte glyph codes, mapped to 课 (U+8BFE) and 表 (U+8868) by the font's ToUnicode.
    let cmap = b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n\
2 beginbfchar\n<0001> <8BFE>\n<0002> <8868>\nendbfchar\n\
endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n";
    let font = |doc: &mut Document| {
        let to_unicode = doc.add_object(Stream::new(Dictionary::new(), cmap.to_vec()));
        dictionary! { "Font" => dictionary! { "F1" => dictionary! {
            "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "STSong-Light",
            "Encoding" => "Identity-H", "ToUnicode" => to_unicode,
        }}}
    };
    let file = pdf(font, &[b"BT /F1 12 Tf 72 720 Td <00010002> Tj ET"]);
    attach(&s, "课表.pdf", file).await.unwrap();
    assert_eq!(
        documents(&s),
        [("课表.pdf".to_owned(), "课表\n".to_owned())]
    );
}

/// A simple font that renames some of its codes by `/Differences` (what TeX's fonts do for
/// ligatures): each name is looked up in the Adobe Glyph List (`exclam` near its start,
/// `wonmonospace` its last), and the rest of the codes keep the base encoding.
#[tokio::test]
async fn a_pdf_whose_font_renames_its_codes_is_read_through_the_glyph_names() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let font = |_: &mut Document| {
        let differences: Vec<Object> = vec![
            1.into(),
            "fi".into(),
            "fl".into(),
            "Alpha".into(),
            65.into(),
            "exclam".into(),
            90.into(),
            "wonmonospace".into(),
        ];
        dictionary! { "Font" => dictionary! { "F1" => dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "CMR10",
            "Encoding" => dictionary! {
                "Type" => "Encoding", "BaseEncoding" => "WinAnsiEncoding",
                "Differences" => differences,
            },
        }}}
    };
    let file = pdf(
        font,
        &[b"BT /F1 12 Tf 72 720 Td (\\001nd the \\002oor, \\003 A Z) Tj ET"],
    );
    attach(&s, "tex.pdf", file).await.unwrap();
    assert_eq!(
        documents(&s),
        [(
            "tex.pdf".to_owned(),
            "\u{fb01}nd the \u{fb02}oor, \u{391} ! \u{ffe6}\n".to_owned()
        )]
    );
}

#[tokio::test]
async fn a_scanned_pdf_with_no_text_is_refused_in_the_students_language() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    assert_eq!(
        attach(&s, "扫描.pdf", scan()).await.unwrap_err(),
        "PDF“扫描.pdf”里没有可以读取的文字（可能是扫描件），没有添加"
    );
    // Text that is only blanks is no text either.
    let blank = pdf(helvetica, &[b"BT /F1 12 Tf 72 720 Td (   ) Tj ET"]);
    s.engine()
        .change_setting(Change::Language(Language::En))
        .unwrap();
    assert_eq!(
        attach(&s, "blank.pdf", blank).await.unwrap_err(),
        "PDF \"blank.pdf\" has no text to read (perhaps it is a scan); nothing was attached"
    );
    assert_eq!(documents(&s), []);
}

#[tokio::test]
async fn a_file_named_pdf_that_is_not_one_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let refusal = "文件“课表.pdf”不是能读取的 PDF，没有添加";
    let not_pdf = b"%PDF-1.7\n".to_vec();
    assert_eq!(attach(&s, "课表.pdf", not_pdf).await.unwrap_err(), refusal);
    // A real PDF cut short is no better.
    let mut cut = pdf(helvetica, &[b"BT /F1 12 Tf 72 720 Td (Hello) Tj ET"]);
    cut.truncate(cut.len() / 2);
    assert_eq!(attach(&s, "课表.pdf", cut).await.unwrap_err(), refusal);
    assert_eq!(documents(&s), []);
}

#[tokio::test]
async fn a_file_over_the_bound_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let mut big = pdf(helvetica, &[b"BT /F1 12 Tf 72 720 Td (Hello) Tj ET"]);
    big.resize(FILE_BYTES + 1, b' ');
    assert_eq!(
        attach(&s, "大.pdf", big).await.unwrap_err(),
        "文件“大.pdf”超过 16 MiB，太大了，不能添加"
    );
    // A text file's bound is the text's: 1 MiB.
    let text = vec![b'a'; DOCUMENT_BYTES + 1];
    assert_eq!(
        attach(&s, "长.txt", text).await.unwrap_err(),
        "文件“长.txt”的文字有 1048577 字节，超过一个对话能读的 1 MiB"
    );
    attach(&s, "满.txt", vec![b'a'; DOCUMENT_BYTES])
        .await
        .unwrap();
    let names: Vec<String> = documents(&s).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["满.txt"]);
}

#[tokio::test]
async fn a_text_file_that_is_not_utf8_is_refused_and_other_kinds_too() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    // 讲座 in GBK, as an old Windows editor saves it.
    let gbk = vec![0xBD, 0xB2, 0xD7, 0xF9];
    assert_eq!(
        attach(&s, "讲座.txt", gbk).await.unwrap_err(),
        "文件“讲座.txt”不是 UTF-8 编码的文本，没有添加"
    );
    s.engine()
        .change_setting(Change::Language(Language::En))
        .unwrap();
    assert_eq!(
        attach(&s, "课表.docx", b"PK".to_vec()).await.unwrap_err(),
        "document \"课表.docx\": only plain text (.txt), Markdown (.md) and PDF (.pdf) files can be attached"
    );
    assert_eq!(documents(&s), []);
    // The text a shell read itself is taken by the same rule.
    let read = Action::AttachDocument {
        conversation: "c".into(),
        name: "通知.md".into(),
        text: "# 讲座\n周三 二教".into(),
    };
    s.act(read).await.unwrap();
    assert_eq!(
        documents(&s),
        [("通知.md".to_owned(), "# 讲座\n周三 二教".to_owned())]
    );
}

#[tokio::test]
async fn a_damaged_pdf_is_attached_or_refused_and_never_takes_the_app_down() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let good = pdf(
        helvetica,
        &[b"BT /F1 12 Tf 72 720 Td (Lecture on Wednesday) Tj T* (Room 2-101) Tj ET"],
    );
    // Each file the good one with a few bytes overwritten, where a deterministic sequence says.
    let mut seed: u64 = 0x2026_1202;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    for _ in 0..500 {
        let mut file = good.clone();
        for _ in 0..1 + next() % 4 {
            let at = next() % file.len();
            file[at] = next() as u8;
        }
        // Attached or refused; either way the call returns.
        let _ = attach(&s, "damaged.pdf", file).await;
    }
}
