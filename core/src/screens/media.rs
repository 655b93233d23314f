//! What a tool answered besides data: the pictures and links an MCP server's result carries as
//! content blocks (`image`, `resource_link`). The result keeps them for the chat, which draws the
//! picture and offers the link; the model reads a line of words for a picture instead of its
//! bytes (`handler::model_copy`).

use base64::Engine as _;
use serde_json::Value;

use super::tap::https_page;
use crate::settings::Language;

/// The picture formats a shell draws; another kind of image stays words.
const DRAWN: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

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
    blocks.retain(|block| match block["type"].as_str() {
        Some("image") => match image(lang, block) {
            Some(picture) => {
                images.push(picture);
                false
            }
            None => true,
        },
        Some("resource_link") => {
            links.push(link(block));
            false
        }
        _ => true,
    });
    (images, links)
}

fn image(lang: Language, block: &Value) -> Option<CallImage> {
    let mime_type = block["mimeType"].as_str()?;
    if !DRAWN.contains(&mime_type) {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(block["data"].as_str()?)
        .ok()?;
    let kind = mime_type.trim_start_matches("image/").to_uppercase();
    let size = size_words(bytes.len());
    let description = match lang {
        Language::Zh => format!("图片（{kind}，{size}）"),
        Language::En => format!("Picture ({kind}, {size})"),
    };
    Some(CallImage {
        mime_type: mime_type.to_owned(),
        bytes,
        description,
    })
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

    #[test]
    fn an_https_link_opens_in_the_browser_and_a_picture_that_does_not_decode_stays_a_block() {
        let mut result = json!({"content": [
            "看这里",
            {"type": "resource_link", "uri": "https://www.pku.edu.cn/notice/1", "name": "notice-1",
             "title": "停水通知"},
            {"type": "resource_link", "uri": "javascript:alert(1)", "name": "x"},
            {"type": "image", "mimeType": "image/png", "data": "not base64!"},
            {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
            {"type": "image", "mimeType": "image/gif", "data": "R0lGODlh"}
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
                bytes: b"GIF89a".to_vec(),
                description: "Picture (GIF, 6 B)".into(),
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
