//! What a tool answered besides data: the pictures and links an MCP server's result carries as
//! content blocks (`image`, `resource_link`). The result keeps them for the chat, which draws the
//! picture and offers the link; the model reads a line of words for a picture instead of its
//! bytes (`handler::model_copy`). A picture reaches the phone's decoder only when its header
//! says a size the app draws ([`MAX_SIDE`]); another stays in the result as words saying why.

use base64::Engine as _;
use serde_json::Value;

use super::tap::https_page;
use crate::settings::Language;

/// The picture formats a shell draws; another kind of image stays words.
const DRAWN: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The most pixels a side of a picture the chat draws: so at most 4096×4096, 16 Mi pixels, a
/// 64 MiB bitmap at four bytes a pixel. A picture's header says its size in a few bytes, and the
/// phone's decoder allocates what it says before it reads a pixel: a 45-byte PNG can ask for
/// 60000×60000 (14 GB).
const MAX_SIDE: u32 = 4096;

/// A picture a tool answered with, for the shell to draw.
#[derive(Clone, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CallImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// The encoded picture, as the server sent it (base64 decoded).
    pub bytes: Vec<u8>,
    /// Words for it, for a screen reader and for a picture that does not decode.
    pub description: String,
}

impl std::fmt::Debug for CallImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallImage")
            .field("mime_type", &self.mime_type)
            .field("bytes", &self.bytes.len())
            .field("description", &self.description)
            .finish()
    }
}

/// A link a tool answered with (a server's resource link).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct CallLink {
    /// Its title, else its name, else its address.
    pub title: String,
    /// What the server says it is, if it says.
    pub detail: Option<String>,
    /// The address as the server gave it, shown in small print.
    pub address: String,
    /// The tap that opens it in the browser: only for an `https` page; a server's own
    /// resource (`file:`, `demo://…`) is shown, never opened.
    pub open: Option<super::Action>,
}

/// Takes the pictures and links out of a result's `content` blocks (an MCP result without
/// structured content is `{"content": [...]}`), leaving the rest for the rows.
pub(super) fn take(lang: Language, result: &mut Value) -> (Vec<CallImage>, Vec<CallLink>) {
    let mut images = Vec::new();
    let mut links = Vec::new();
    let Some(blocks) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return (images, links);
    };
    let mut kept = Vec::with_capacity(blocks.len());
    for block in blocks.drain(..) {
        match block["type"].as_str() {
            Some("image") => match image(lang, &block) {
                Picture::Drawn(picture) => images.push(picture),
                Picture::Refused(why) => kept.push(Value::String(why)),
                Picture::NotOne => kept.push(block),
            },
            Some("resource_link") => links.push(link(&block)),
            _ => kept.push(block),
        }
    }
    *blocks = kept;
    (images, links)
}

/// What becomes of an image block.
enum Picture {
    /// The shell draws it.
    Drawn(CallImage),
    /// A picture the app does not draw, and why, in the student's words: the block's place.
    Refused(String),
    /// No picture a shell draws (another format, or no base64): the block stays as it is.
    NotOne,
}

fn image(lang: Language, block: &Value) -> Picture {
    let Some(mime_type) = block["mimeType"].as_str().filter(|m| DRAWN.contains(m)) else {
        return Picture::NotOne;
    };
    let Some(bytes) = block["data"]
        .as_str()
        .and_then(|data| base64::engine::general_purpose::STANDARD.decode(data).ok())
    else {
        return Picture::NotOne;
    };
    let kind = mime_type.trim_start_matches("image/").to_uppercase();
    match dimensions(&bytes) {
        None => {
            return Picture::Refused(match lang {
                Language::Zh => format!("图片没有显示：读不出它的尺寸（{kind}）"),
                Language::En => format!("Picture not shown: its size cannot be read ({kind})"),
            });
        }
        Some((w, h)) if w > MAX_SIDE || h > MAX_SIDE => {
            return Picture::Refused(match lang {
                Language::Zh => format!(
                    "图片没有显示：它有 {w}×{h} 像素，超过了应用能显示的大小（每边最多 {MAX_SIDE} 像素）"
                ),
                Language::En => format!(
                    "Picture not shown: it is {w}×{h} pixels, larger than the app shows (at most \
                     {MAX_SIDE} pixels a side)"
                ),
            });
        }
        Some(_) => {}
    }
    let size = size_words(bytes.len());
    let description = match lang {
        Language::Zh => format!("图片（{kind}，{size}）"),
        Language::En => format!("Picture ({kind}, {size})"),
    };
    Picture::Drawn(CallImage {
        mime_type: mime_type.to_owned(),
        bytes,
        description,
    })
}

/// Whether a picture's header says a size the phones may decode (at most [`MAX_SIDE`] a side):
/// what may reach a shell's decoder.
pub(super) fn drawable(bytes: &[u8]) -> bool {
    dimensions(bytes).is_some_and(|(w, h)| w <= MAX_SIDE && h <= MAX_SIDE)
}

/// A picture's width and height as its header says them, read by the bytes' own signature (as
/// the phones' decoders read them, whatever the type says): PNG's IHDR, the first frame header
/// (SOF) of a JPEG, a GIF's logical screen, a WebP's VP8, VP8L or VP8X chunk. None when the
/// bytes are none of these, end before the size, or say a side of 0.
fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let le16 = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let be32 = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let le24 = |at: usize| {
        let b = bytes.get(at..at + 3)?;
        Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
    };
    let (w, h) = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        if bytes.get(12..16)? != b"IHDR" {
            return None;
        }
        (be32(16)?, be32(20)?)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        (u32::from(le16(6)?), u32::from(le16(8)?))
    } else if bytes.starts_with(b"\xff\xd8") {
        jpeg_frame(bytes)?
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12)? == b"WEBP" {
        let data = 20;
        match bytes.get(12..16)? {
            b"VP8 " if bytes.get(data + 3..data + 6)? == b"\x9d\x01\x2a" => (
                u32::from(le16(data + 6)? & 0x3fff),
                u32::from(le16(data + 8)? & 0x3fff),
            ),
            b"VP8L" if *bytes.get(data)? == 0x2f => {
                let bits = u32::from_le_bytes(bytes.get(data + 1..data + 5)?.try_into().ok()?);
                ((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1)
            }
            b"VP8X" => (le24(data + 4)? + 1, le24(data + 7)? + 1),
            _ => return None,
        }
    } else {
        return None;
    };
    (w > 0 && h > 0).then_some((w, h))
}

/// The size a JPEG's first frame header (SOF0–SOF15, which are not DHT, JPG or DAC) says,
/// walking the segments before it by their lengths.
fn jpeg_frame(bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |at: usize| {
        Some(usize::from(u16::from_be_bytes(
            bytes.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let mut at = 2;
    loop {
        if *bytes.get(at)? != 0xff {
            return None;
        }
        // Fill bytes before a marker.
        while *bytes.get(at + 1)? == 0xff {
            at += 1;
        }
        let marker = *bytes.get(at + 1)?;
        match marker {
            // Markers without a segment.
            0x01 | 0xd0..=0xd8 => at += 2,
            // The image's end or its scan before any frame header: no size.
            0xd9 | 0xda => return None,
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                return Some((be16(at + 7)? as u32, be16(at + 5)? as u32));
            }
            _ => at += 2 + be16(at + 2)?,
        }
    }
}

fn link(block: &Value) -> CallLink {
    let address = block["uri"].as_str().unwrap_or_default().to_owned();
    let title = ["title", "name"]
        .iter()
        .find_map(|key| block[*key].as_str().filter(|t| !t.trim().is_empty()))
        .unwrap_or(&address)
        .to_owned();
    CallLink {
        title,
        detail: block["description"]
            .as_str()
            .filter(|d| !d.trim().is_empty())
            .map(str::to_owned),
        open: https_page(&address).map(|page| super::Action::OpenInBrowser { url: page.into() }),
        address,
    }
}

/// `512 B`, `1.2 KB`, `3.4 MB`.
fn size_words(bytes: usize) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A PNG's signature and header chunk saying `w`×`h`, and an end: what a decoder reads first.
    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(w.to_be_bytes());
        b.extend(h.to_be_bytes());
        b.extend([8, 6, 0, 0, 0, 0, 0, 0, 0]);
        b.extend(b"\0\0\0\0IEND\xaeB`\x82");
        b
    }

    /// A JPEG with an APP0 segment, then a baseline frame header (SOF0) saying `w`×`h`.
    fn jpeg(w: u16, h: u16) -> Vec<u8> {
        let mut b = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0".to_vec();
        b.extend(b"\xff\xc0\0\x11\x08");
        b.extend(h.to_be_bytes());
        b.extend(w.to_be_bytes());
        b.extend(b"\x03\x01\x22\0\x02\x11\x01\x03\x11\x01\xff\xd9");
        b
    }

    fn gif(w: u16, h: u16) -> Vec<u8> {
        let mut b = b"GIF89a".to_vec();
        b.extend(w.to_le_bytes());
        b.extend(h.to_le_bytes());
        b.extend(b"\0\0\0;");
        b
    }

    /// A WebP of one chunk, `fourcc` with `data`.
    fn webp(fourcc: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut b = b"RIFF".to_vec();
        b.extend((4 + 8 + data.len() as u32).to_le_bytes());
        b.extend(b"WEBP");
        b.extend(fourcc);
        b.extend((data.len() as u32).to_le_bytes());
        b.extend(data);
        b
    }

    fn vp8(w: u16, h: u16) -> Vec<u8> {
        let mut data = vec![0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a];
        data.extend(w.to_le_bytes());
        data.extend(h.to_le_bytes());
        webp(b"VP8 ", &data)
    }

    fn vp8l(w: u32, h: u32) -> Vec<u8> {
        let bits = (w - 1) | ((h - 1) << 14);
        let mut data = vec![0x2f];
        data.extend(bits.to_le_bytes());
        webp(b"VP8L", &data)
    }

    fn vp8x(w: u32, h: u32) -> Vec<u8> {
        let mut data = vec![0x10, 0, 0, 0];
        data.extend(&(w - 1).to_le_bytes()[..3]);
        data.extend(&(h - 1).to_le_bytes()[..3]);
        webp(b"VP8X", &data)
    }

    /// A result of one picture block of `mime_type` holding `bytes`.
    fn one_picture(mime_type: &str, bytes: &[u8]) -> Value {
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        json!({"content": [{"type": "image", "mimeType": mime_type, "data": data}]})
    }

    #[test]
    fn a_picture_larger_than_the_app_draws_never_reaches_the_phone_and_says_why() {
        // A PNG of a few dozen bytes that says 60000×60000 would have the phone's decoder
        // allocate 14 GB.
        let claimed = png(60000, 60000);
        let mut result = one_picture("image/png", &claimed);
        let (images, _) = take(Language::Zh, &mut result);
        assert_eq!(images, []);
        assert_eq!(
            result,
            json!({"content": [
                "图片没有显示：它有 60000×60000 像素，超过了应用能显示的大小（每边最多 4096 像素）"
            ]})
        );
        for (mime_type, bytes, size) in [
            ("image/png", png(4097, 1), "4097×1"),
            ("image/png", png(1, 4097), "1×4097"),
            ("image/jpeg", jpeg(5000, 10), "5000×10"),
            ("image/gif", gif(65535, 65535), "65535×65535"),
            ("image/webp", vp8(16383, 16383), "16383×16383"),
            ("image/webp", vp8l(16384, 2), "16384×2"),
            ("image/webp", vp8x(20000, 20000), "20000×20000"),
            // The bytes say what they are, whatever the type says: the phone's decoder reads them.
            ("image/png", jpeg(9000, 9000), "9000×9000"),
        ] {
            let mut result = one_picture(mime_type, &bytes);
            let (images, _) = take(Language::En, &mut result);
            assert_eq!(images, [], "{size}");
            assert_eq!(
                result,
                json!({"content": [format!(
                    "Picture not shown: it is {size} pixels, larger than the app shows (at most \
                     4096 pixels a side)"
                )]})
            );
        }
    }

    #[test]
    fn a_picture_within_the_bounds_is_drawn_and_one_whose_size_cannot_be_read_says_so() {
        for (mime_type, bytes) in [
            ("image/png", png(4096, 4096)),
            ("image/jpeg", jpeg(640, 480)),
            ("image/gif", gif(1, 1)),
            ("image/webp", vp8(4096, 1)),
            ("image/webp", vp8l(1, 4096)),
            ("image/webp", vp8x(300, 200)),
        ] {
            let mut result = one_picture(mime_type, &bytes);
            let (images, _) = take(Language::En, &mut result);
            assert_eq!(images.len(), 1, "{mime_type} {bytes:?}");
            assert_eq!(images[0].bytes, bytes);
            assert_eq!(result, json!({"content": []}));
        }
        for bytes in [
            b"GIF89a".to_vec(),
            png(60000, 60000)[..20].to_vec(),
            b"\xff\xd8\xff\xd9".to_vec(),
            jpeg(0, 0),
            b"not a picture".to_vec(),
        ] {
            let mut result = one_picture("image/gif", &bytes);
            let (images, _) = take(Language::Zh, &mut result);
            assert_eq!(images, [], "{bytes:?}");
            assert_eq!(
                result,
                json!({"content": ["图片没有显示：读不出它的尺寸（GIF）"]})
            );
        }
    }

    #[test]
    fn an_https_link_opens_in_the_browser_and_a_picture_that_does_not_decode_stays_a_block() {
        let mut result = json!({"content": [
            "看这里",
            {"type": "resource_link", "uri": "https://www.pku.edu.cn/notice/1", "name": "notice-1",
             "title": "停水通知"},
            {"type": "resource_link", "uri": "javascript:alert(1)", "name": "x"},
            {"type": "image", "mimeType": "image/png", "data": "not base64!"},
            {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
            {"type": "image", "mimeType": "image/gif", "data": "R0lGODlhAQABAAAAADs="}
        ]});
        let (images, links) = take(Language::En, &mut result);
        assert_eq!(
            links,
            [
                CallLink {
                    title: "停水通知".into(),
                    detail: None,
                    address: "https://www.pku.edu.cn/notice/1".into(),
                    open: Some(crate::screens::Action::OpenInBrowser {
                        url: "https://www.pku.edu.cn/notice/1".into()
                    }),
                },
                CallLink {
                    title: "x".into(),
                    detail: None,
                    address: "javascript:alert(1)".into(),
                    open: None,
                },
            ]
        );
        assert_eq!(
            images,
            [CallImage {
                mime_type: "image/gif".into(),
                bytes: gif(1, 1),
                description: "Picture (GIF, 14 B)".into(),
            }]
        );
        // What is not drawn stays in the result, for the rows and the raw data.
        assert_eq!(
            result,
            json!({"content": [
                "看这里",
                {"type": "image", "mimeType": "image/png", "data": "not base64!"},
                {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="}
            ]})
        );
    }
}
