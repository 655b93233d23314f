//! Plugin documents (PLUGIN.md): a manifest in front matter, then the plugin's instructions.
//!
//! ```text
//! ---
//! { "id": "canteen", "title": "食堂", "tools": [ … ] }
//! ---
//! # 食堂
//! Instructions for the model…
//! ```
//!
//! The front matter is YAML (docs/PLUGIN.md) or JSON; a key written twice is a load error in
//! either. The body becomes the plugin's instructions. Whether a document is official or
//! community is decided by where it was installed from, never by anything it says
//! (DESIGN.md §2).

use url::Url;

use crate::registry::{
    JsonTextError, LoadError, Manifest, PluginKind, json_with_unique_keys, parse_manifest,
    yaml_with_unique_keys,
};

/// A parsed plugin document: the manifest and the Markdown body.
#[derive(Debug, Clone)]
pub struct Document {
    pub manifest: Manifest,
    pub body: String,
}

/// Parses a PLUGIN.md. Errors name the document and what is wrong with it.
pub fn parse(text: &str) -> Result<Document, LoadError> {
    let missing = |message: &str| LoadError {
        plugin: "?".into(),
        field: "front matter".into(),
        message: message.into(),
    };
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(|| missing("a plugin document starts with a line \"---\", then its YAML or JSON manifest, then \"---\""))?;
    let end = rest
        .find("\n---\n")
        .or_else(|| rest.find("\n---\r\n"))
        .or_else(|| rest.strip_suffix("\n---").map(str::len))
        .ok_or_else(|| missing("the front matter has no closing \"---\" line"))?;
    let header = &rest[..end];
    let body = rest[end + 4..]
        .trim_start_matches(['\r', '\n', '-'])
        .to_owned();
    let json = if header.trim_start().starts_with('{') {
        json_with_unique_keys(header).map_err(|e| match e {
            JsonTextError::Syntax(e) => LoadError {
                message: format!("the front matter is not JSON: {e}"),
                ..missing("")
            },
            JsonTextError::DuplicateKey(e) => e,
        })?
    } else {
        yaml_with_unique_keys(header).map_err(|e| match e {
            Ok(duplicate) => duplicate,
            Err(syntax) => LoadError {
                message: format!("the front matter is not YAML: {syntax}"),
                ..missing("")
            },
        })?
    };
    let mut manifest = parse_manifest(&json)?;
    if manifest.instructions.is_some() {
        return Err(LoadError {
            plugin: manifest.id.clone(),
            field: "instructions".into(),
            message: "write the instructions as the Markdown body after the front matter, not \
                      as a key"
                .into(),
        });
    }
    if manifest.description.is_empty() {
        manifest.description = body.clone();
    }
    if !body.trim().is_empty() {
        manifest.instructions = Some(body.clone());
    }
    Ok(Document { manifest, body })
}

/// Official when installed over https from the official catalogue host (a setting);
/// community otherwise — a file, another host, or plain http.
pub fn kind_for_source(source: &str, official_host: &str) -> PluginKind {
    match Url::parse(source) {
        Ok(url)
            if url.scheme() == "https"
                && url
                    .host_str()
                    .is_some_and(|h| h.eq_ignore_ascii_case(official_host)) =>
        {
            PluginKind::Official
        }
        _ => PluginKind::Community,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_front_matter_and_a_body() {
        let doc = parse(
            "---\n{\"id\": \"canteen\", \"title\": \"食堂\"}\n---\n# 食堂\nUse canteen__openNow.\n",
        )
        .unwrap();
        assert_eq!(doc.manifest.id, "canteen");
        assert_eq!(doc.manifest.title, "食堂");
        assert_eq!(doc.body, "# 食堂\nUse canteen__openNow.\n");
    }

    #[test]
    fn a_document_without_front_matter_is_a_load_error() {
        let err = parse("# 食堂\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"?\": front matter: a plugin document starts with a line \"---\", then its YAML or JSON manifest, then \"---\""
        );
        let err = parse("---\n{\"id\": \"x\"}\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"?\": front matter: the front matter has no closing \"---\" line"
        );
    }

    #[test]
    fn official_is_decided_by_the_source_never_by_the_document() {
        let host = "plugins.pku-harness.cn";
        assert_eq!(
            kind_for_source("https://plugins.pku-harness.cn/canteen/PLUGIN.md", host),
            PluginKind::Official
        );
        assert_eq!(
            kind_for_source("https://PLUGINS.pku-harness.cn/x", host),
            PluginKind::Official
        );
        assert_eq!(
            kind_for_source("http://plugins.pku-harness.cn/x", host),
            PluginKind::Community
        );
        assert_eq!(
            kind_for_source("https://plugins.pku-harness.cn.evil.com/x", host),
            PluginKind::Community
        );
        assert_eq!(
            kind_for_source("https://plugins.pku-harness.cn@evil.com/x", host),
            PluginKind::Community
        );
        assert_eq!(
            kind_for_source("file:///sdcard/PLUGIN.md", host),
            PluginKind::Community
        );
        assert_eq!(kind_for_source("not a url", host), PluginKind::Community);
    }

    #[test]
    fn a_key_written_twice_in_the_front_matter_is_a_load_error() {
        let err = parse(
            "---\n{\"id\": \"wallet\", \"tools\": [{\"name\": \"pay\", \"effect\": \"money\", \"effect\": \"read\"}]}\n---\n# 钱包\n",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"wallet\": tools[0].effect: the key \"effect\" appears more than once; write each key once"
        );
    }

    #[test]
    fn a_yaml_front_matter_loads_and_the_body_becomes_the_instructions() {
        let doc = parse(
            "---\nid: menu\ntitle: 菜单\ntools:\n  - name: today\n    effect: read\n---\n# 菜单\nUse menu__today.\n",
        )
        .unwrap();
        assert_eq!(doc.manifest.id, "menu");
        assert_eq!(doc.manifest.tools[0].name, "today");
        assert_eq!(
            doc.manifest.instructions.as_deref(),
            Some("# 菜单\nUse menu__today.\n")
        );
        let plugin = crate::registry::Plugin::load(doc.manifest, PluginKind::Community).unwrap();
        assert_eq!(
            plugin.instructions.as_deref(),
            Some("# 菜单\nUse menu__today.\n")
        );
    }

    #[test]
    fn a_key_written_twice_in_yaml_front_matter_is_a_load_error() {
        let err = parse(
            "---\nid: wallet\ntools:\n  - name: pay\n    effect: money\n    effect: read\n---\n# 钱包\n",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"wallet\": tools[0].effect: the key \"effect\" appears more than once; write each key once"
        );
    }

    #[test]
    fn front_matter_that_is_not_yaml_names_the_front_matter() {
        let err = parse("---\nid: [unclosed\n---\n").unwrap_err();
        assert_eq!(err.field, "front matter");
        assert!(
            err.message.starts_with("the front matter is not YAML: "),
            "{err}"
        );
    }

    #[test]
    fn instructions_written_as_a_key_are_a_load_error() {
        let err = parse("---\nid: x\ninstructions: obey\n---\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "plugin \"x\": instructions: write the instructions as the Markdown body after the front matter, not as a key"
        );
    }
}
