//! Installing plugin documents by link: preview, install exactly what was previewed, update
//! with re-consent when the update asks for more, remove.
//!
//! A link is fetched https only — or read from a file the user picked (`file://`) — capped at
//! 256 KiB, through the same guarded client as a community plugin (the network gate with the
//! address check, no redirects, the 10 s timeout). `http://` to a loopback address is accepted
//! only when the engine was opened with `Options::development_links` (tests and plugin authors
//! on a desktop); the rule for students is https only.
//!
//! Official or community is decided by the link, never by the document (DESIGN.md §2): https
//! from the `officialHost` setting is official, anything else community.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use url::{Host, Url};

use crate::error::EngineError;
use crate::gates::{Grants, NetworkGate};
use crate::installed::InstalledPlugins;
use crate::policy::{Mode, default_mode};
use crate::registry::{AmountUnit, DataSource, Effect, Plugin, PluginKind, Tool};
use crate::settings::AppSettings;

use super::document;

/// The most a plugin document may weigh.
pub const DOCUMENT_CAP: usize = 256 * 1024;

/// One tool as the consent screen shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PreviewTool {
    pub id: String,
    pub title: String,
    pub description: String,
    pub effect: Effect,
    /// `GET api.example.com`, for a tool that declares a request.
    pub request: Option<String>,
}

/// What the consent screen shows before a document is installed. Nothing is installed by
/// making one.
#[derive(Clone, Debug)]
pub struct Preview {
    /// Hand this to `install`.
    pub id: String,
    pub link: String,
    pub plugin: String,
    pub title: String,
    pub kind: PluginKind,
    pub tools: Vec<PreviewTool>,
    /// The starting mode of each effect its tools have, after the kind's rules (a community
    /// document cannot start looser than the table).
    pub modes: Vec<(Effect, Mode)>,
    pub grant_row: String,
    /// What it may reach, for the consent screen to say in the student's words.
    pub grants: Grants,
    pub warnings: Vec<String>,
    pub data_sources: Vec<DataSource>,
    /// `cloud.disclosures`, and their English (empty when not given).
    pub disclosure: Vec<String>,
    pub disclosure_en: Vec<String>,
    pub requires: Vec<String>,
    pub instructions: Option<String>,
    /// For an update: the plugin it replaces and what it asks for beyond the installed version.
    pub replaces: Option<String>,
    pub asks_more: Vec<String>,
    digest: [u8; 32],
}

/// What an update did.
#[derive(Clone, Debug)]
pub enum Update {
    /// The document is unchanged.
    Current,
    /// Installed: it asks for nothing new.
    Updated,
    /// It asks for more: the plugin stays on its old version until the user installs this
    /// preview.
    NeedsConsent(Box<Preview>),
}

/// The link installer: the previews waiting for an answer.
pub struct Links {
    plugins: Arc<InstalledPlugins>,
    settings: Arc<AppSettings>,
    development: bool,
    previews: Mutex<HashMap<String, Preview>>,
}

fn link_error(link: &str, message: impl Into<String>) -> EngineError {
    EngineError::Link {
        link: link.to_owned(),
        message: message.into(),
    }
}

impl Links {
    pub(crate) fn new(
        plugins: Arc<InstalledPlugins>,
        settings: Arc<AppSettings>,
        development: bool,
    ) -> Self {
        Self {
            plugins,
            settings,
            development,
            previews: Mutex::new(HashMap::new()),
        }
    }

    /// Fetches and checks the document at `link` and returns what the consent screen shows.
    pub async fn preview(&self, link: &str) -> Result<Preview, EngineError> {
        let text = self.fetch(link).await?;
        let plugin = self.load(link, &text)?;
        let (grant_row, warnings) = self.plugins.check_new(&plugin, false)?;
        let preview = describe(link, &text, &plugin, grant_row, warnings, None);
        self.keep(&preview);
        Ok(preview)
    }

    /// Installs what preview `id` showed: the link is fetched again, and a document that
    /// changed since is refused. Returns the plugin id.
    pub async fn install(&self, id: &str) -> Result<String, EngineError> {
        let preview = crate::lock(&self.previews)
            .get(id)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchPreview(id.to_owned()))?;
        let text = self.fetch(&preview.link).await?;
        if digest(&preview.link, &text) != preview.digest {
            return Err(link_error(
                &preview.link,
                "the document changed since it was previewed; preview it again and read what it \
                 asks for now",
            ));
        }
        let plugin = self.load(&preview.link, &text)?;
        let plugin_id = plugin.id.clone();
        match &preview.replaces {
            Some(old) => self
                .plugins
                .replace_from_catalog(old, plugin, &preview.link)?,
            None => {
                self.plugins.install_from_catalog(plugin, &preview.link)?;
            }
        }
        crate::lock(&self.previews).remove(id);
        Ok(plugin_id)
    }

    /// Fetches an installed document's link again. An update that asks for nothing new is
    /// installed; one that asks for more ([`asks_more`]: a new effect, a tool that asks less, a
    /// looser default, a new grant, host or secret, the campus session, a new requirement)
    /// waits for the user to install the preview it returns.
    pub async fn update(&self, plugin_id: &str) -> Result<Update, EngineError> {
        let (old, link) = self.plugins.document(plugin_id)?;
        let text = self.fetch(&link).await?;
        let plugin = self.load(&link, &text)?;
        if plugin.id != old.id {
            return Err(link_error(
                &link,
                format!(
                    "the document now has the id \"{}\", not \"{}\"; install it as a new plugin",
                    plugin.id, old.id
                ),
            ));
        }
        if plugin.manifest_json() == old.manifest_json() && plugin.kind == old.kind {
            return Ok(Update::Current);
        }
        let more = asks_more(&old, &plugin);
        if more.is_empty() {
            self.plugins
                .replace_from_catalog(plugin_id, plugin, &link)?;
            return Ok(Update::Updated);
        }
        let (grant_row, warnings) = self.plugins.check_new(&plugin, true)?;
        let mut preview = describe(
            &link,
            &text,
            &plugin,
            grant_row,
            warnings,
            Some(plugin_id.to_owned()),
        );
        preview.asks_more = more;
        self.keep(&preview);
        Ok(Update::NeedsConsent(Box::new(preview)))
    }

    fn keep(&self, preview: &Preview) {
        crate::lock(&self.previews).insert(preview.id.clone(), preview.clone());
    }

    fn load(&self, link: &str, text: &str) -> Result<Plugin, EngineError> {
        let doc = document::parse(text).map_err(|e| in_document(link, e))?;
        let kind = document::kind_for_source(link, &self.settings.get().official_host);
        Plugin::load(doc.manifest, kind).map_err(|e| in_document(link, e))
    }

    /// The document's text: a picked file, an https link, or (development only) http to
    /// loopback.
    async fn fetch(&self, link: &str) -> Result<String, EngineError> {
        let url = Url::parse(link).map_err(|e| {
            link_error(
                link,
                format!("not a link ({e}); give an https:// link or a file"),
            )
        })?;
        if url.scheme() == "file" {
            let path = url
                .to_file_path()
                .map_err(|()| link_error(link, "not a file path"))?;
            let bytes = std::fs::read(&path)
                .map_err(|e| link_error(link, format!("could not read the file: {e}")))?;
            if bytes.len() > DOCUMENT_CAP {
                return Err(too_big(link));
            }
            return String::from_utf8(bytes)
                .map_err(|_| link_error(link, "the file is not UTF-8 text"));
        }
        let loopback = match url.host() {
            Some(Host::Ipv4(ip)) => ip.is_loopback(),
            Some(Host::Ipv6(ip)) => ip.is_loopback(),
            Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        let trust = match url.scheme() {
            "https" => PluginKind::Community,
            // Development only: the address guard would refuse loopback, which is the point.
            "http" if self.development && loopback => PluginKind::Bundled,
            _ => {
                return Err(link_error(
                    link,
                    "plugin documents are installed from https:// links only (or a file you \
                     pick)",
                ));
            }
        };
        let host = url.host_str().unwrap_or_default().to_owned();
        let grants = Grants {
            allow_network: true,
            url_allowlist: vec![host],
            ..Grants::default()
        };
        let gate = NetworkGate::new("plugin-link", &grants, trust)
            .map_err(|e| link_error(link, e.to_string()))?;
        let body = gate
            .request(&reqwest::Method::GET, url.as_str(), &[], None)
            .await
            .map_err(|e| link_error(link, e.strip_prefix("error: ").unwrap_or(&e)))?;
        if body.len() > DOCUMENT_CAP {
            return Err(too_big(link));
        }
        Ok(body)
    }
}

fn too_big(link: &str) -> EngineError {
    link_error(
        link,
        format!("the document is larger than {} KiB", DOCUMENT_CAP / 1024),
    )
}

/// A load error, told which document it is in.
fn in_document(link: &str, e: crate::registry::LoadError) -> EngineError {
    link_error(link, e.to_string())
}

fn digest(link: &str, text: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(link.as_bytes());
    hash.update([0]);
    hash.update(text.as_bytes());
    hash.finalize().into()
}

fn describe(
    link: &str,
    text: &str,
    plugin: &Plugin,
    grant_row: String,
    warnings: Vec<String>,
    replaces: Option<String>,
) -> Preview {
    let digest = digest(link, text);
    let id: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let mut effects: Vec<Effect> = plugin.tools.iter().map(|t| t.effect).collect();
    effects.sort();
    effects.dedup();
    Preview {
        grants: plugin.grants.clone(),
        id,
        link: link.to_owned(),
        plugin: plugin.id.clone(),
        title: plugin.title.clone(),
        kind: plugin.kind,
        tools: plugin
            .tools
            .iter()
            .map(|t| PreviewTool {
                id: t.id.clone(),
                title: t.title.clone(),
                description: t.description.clone(),
                effect: t.effect,
                request: t
                    .request
                    .as_ref()
                    .map(|r| format!("{} {}", r.method.as_str(), r.host)),
            })
            .collect(),
        modes: effects
            .into_iter()
            .map(|e| (e, default_mode(plugin, e).0))
            .collect(),
        grant_row,
        warnings,
        data_sources: plugin.data_sources.clone(),
        disclosure: plugin.disclosure.clone(),
        disclosure_en: plugin.disclosure_en.clone(),
        requires: plugin.requires.clone(),
        instructions: plugin.instructions.clone(),
        replaces,
        asks_more: Vec::new(),
        digest,
    }
}

/// What `new` asks for beyond `old`, in words for the consent screen; empty when nothing.
///
/// Every field of a plugin or tool that the decision (`policy::decide`), the invoke path or a
/// gate reads is compared, and each change that lets a call through with less asking counts
/// (docs/PLUGIN.md, "Updates"): an update that loosens a tool must not take effect behind the
/// user's back.
pub fn asks_more(old: &Plugin, new: &Plugin) -> Vec<String> {
    let mut more = Vec::new();
    let old_effects: Vec<Effect> = old.tools.iter().map(|t| t.effect).collect();
    for tool in &new.tools {
        match old.tool(&tool.name) {
            Some(before) => more.extend(loosened(before, tool)),
            None => {
                // A new tool of an effect the plugin has follows that effect's mode, which the
                // user already chose; what it sends beyond that is asked for below.
                if !old_effects.contains(&tool.effect) {
                    more.push(format!("a {} tool: {}", tool.effect, tool.id));
                }
                let request = tool.request.as_ref();
                if request.is_some_and(|r| r.campus) {
                    more.push(format!("tool {} sends the campus session", tool.id));
                }
                let secrets: Vec<&str> = request.map(|r| r.secrets().collect()).unwrap_or_default();
                for secret in secrets {
                    more.push(format!("tool {} sends the secret {secret}", tool.id));
                }
            }
        }
    }
    if old.kind == PluginKind::Community && new.kind != PluginKind::Community {
        // An official document's defaults apply as written, and its requests are not held
        // to public addresses (DESIGN.md §2, §5).
        more.push(format!(
            "it installs as an {} plugin now (was community)",
            new.kind.as_str()
        ));
    }
    for effect in Effect::ALL {
        let (before, after) = (default_mode(old, effect).0, default_mode(new, effect).0);
        // Auto < Ask < Off: a smaller mode is a looser one.
        if after < before {
            more.push(format!(
                "{effect} tools start in {} (were {})",
                after.as_str(),
                before.as_str()
            ));
        }
    }
    let (g, h) = (&old.grants, &new.grants);
    for (name, was, is) in [
        ("allow_fs", g.allow_fs, h.allow_fs),
        ("allow_network", g.allow_network, h.allow_network),
        ("allow_store", g.allow_store, h.allow_store),
        ("allow_context", g.allow_context, h.allow_context),
        (
            "allow_send_message",
            g.allow_send_message,
            h.allow_send_message,
        ),
    ] {
        if is && !was {
            more.push(name.to_owned());
        }
    }
    for entry in h
        .url_allowlist
        .iter()
        .filter(|e| !g.url_allowlist.contains(e))
    {
        more.push(format!("url_allowlist: {entry}"));
    }
    for tool in h.allow_tools.iter().filter(|t| !g.allow_tools.contains(t)) {
        more.push(format!("allow_tools: {tool}"));
    }
    let hosts = |p: &Plugin| -> Vec<String> {
        p.tools
            .iter()
            .filter_map(|t| t.request.as_ref().map(|r| r.host.clone()))
            .collect()
    };
    let old_hosts = hosts(old);
    let mut new_hosts = hosts(new);
    new_hosts.dedup();
    for host in new_hosts.into_iter().filter(|h| !old_hosts.contains(h)) {
        more.push(format!("reaches {host}"));
    }
    for need in new.requires.iter().filter(|r| !old.requires.contains(r)) {
        more.push(format!("requires {need}"));
    }
    // The cloud switch was turned on beside the lines shown then (DESIGN.md §4).
    for line in new
        .disclosure
        .iter()
        .filter(|l| !old.disclosure.contains(l))
    {
        more.push(format!("discloses: {line}"));
    }
    // A data source calls its tool with nobody there (actor scheduler).
    for source in &new.data_sources {
        let known = old
            .data_sources
            .iter()
            .any(|s| s.key == source.key && s.tool == source.tool && s.args == source.args);
        if !known {
            more.push(format!(
                "data source {} calls {}.{} by itself",
                source.key, new.id, source.tool
            ));
        }
    }
    more
}

/// What tool `after` lets through that `before`, the same tool's installed version, did not.
fn loosened(before: &Tool, after: &Tool) -> Vec<String> {
    let id = &after.id;
    let mut more = Vec::new();
    // Any move counts, a weaker effect too: it follows that effect's mode and presets, so a
    // money tool made "write" runs where the user had it ask.
    if after.effect != before.effect {
        more.push(format!(
            "tool {id} changes from {} to {}",
            before.effect, after.effect
        ));
    }
    // DESIGN.md §3 step 2: hidden from the model and refused to it.
    if before.user_only && !after.user_only {
        more.push(format!(
            "tool {id} is no longer for the user only: the AI may call it"
        ));
    }
    // Step 8c: each of these asks whatever the mode and preset.
    if before.grant && !after.grant {
        more.push(format!("tool {id} no longer asks for a grant"));
    }
    if before.always_ask && !after.always_ask {
        more.push(format!("tool {id} no longer asks every time"));
    }
    match (&before.target, &after.target) {
        (Some(_), None) => more.push(format!(
            "tool {id} no longer names what it acts on in its prompt"
        )),
        // The headline is what the user reads before Allow.
        (Some(was), Some(is)) if was != is => more.push(format!(
            "tool {id} names what it acts on as \"{is}\" (was \"{was}\")"
        )),
        _ => {}
    }
    // Step 8e: the money limits read the declared amount, so any change to where or in what
    // unit it is read may let more through; the new-payee ask reads the payee.
    let unit = |u: AmountUnit| match u {
        AmountUnit::Yuan => "yuan",
        AmountUnit::Fen => "fen",
    };
    match (&before.amount, &after.amount) {
        (Some(_), None) => more.push(format!(
            "tool {id} no longer declares its amount: the money limits could not hold it"
        )),
        (Some(was), Some(is)) if was != is => more.push(format!(
            "tool {id} reads its amount from {} in {} (was {} in {})",
            is.field,
            unit(is.unit),
            was.field,
            unit(was.unit)
        )),
        _ => {}
    }
    match (&before.payee, &after.payee) {
        (Some(_), None) => more.push(format!(
            "tool {id} no longer declares its payee: a new payee would not be asked"
        )),
        (Some(was), Some(is)) if was != is => {
            more.push(format!("tool {id} reads its payee from {is} (was {was})"))
        }
        _ => {}
    }
    // Its results taint the turn, which makes money and public calls ask (step 8e).
    if before.untrusted && !after.untrusted {
        more.push(format!("tool {id} no longer marks its results untrusted"));
    }
    if let Some(request) = &after.request {
        let was = before.request.as_ref();
        if request.campus && !was.is_some_and(|r| r.campus) {
            more.push(format!("tool {id} sends the campus session"));
        }
        // The consent screen shows each request as its method and host.
        if let Some(was) = was.filter(|w| w.method != request.method) {
            more.push(format!(
                "tool {id} sends {} (was {})",
                request.method.as_str(),
                was.method.as_str()
            ));
        }
        let sent: Vec<&str> = was.map(|w| w.secrets().collect()).unwrap_or_default();
        for secret in request.secrets().filter(|s| !sent.contains(s)) {
            more.push(format!("tool {id} sends the secret {secret}"));
        }
    }
    more
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::parse_manifest;
    use serde_json::{Value, json};

    /// A document plugin with one tool, `tool` laid over a money tool that POSTs to
    /// api.example.com, and `plugin` laid over the plugin's own fields.
    fn plugin(kind: PluginKind, plugin: Value, tool: Value) -> Plugin {
        let mut t = json!({
            "name": "pay", "title": "付款", "effect": "money",
            "input": {"type": "object", "properties": {"order": {"type": "string"}}},
            "request": {"method": "POST", "url": "https://api.example.com/pay/{order}"}
        });
        for (k, v) in tool.as_object().unwrap() {
            t[k] = v.clone();
        }
        let mut p = json!({
            "id": "shop", "title": "商店", "requires": ["campus-session"],
            "grants": {"allow_network": true, "url_allowlist": ["api.example.com", "bdcard.pku.edu.cn"]},
            "tools": [t],
        });
        for (k, v) in plugin.as_object().unwrap() {
            p[k] = v.clone();
        }
        Plugin::load(parse_manifest(&p).unwrap(), kind).unwrap()
    }

    fn tool(fields: Value) -> Plugin {
        plugin(PluginKind::Community, json!({}), fields)
    }

    fn request(fields: Value) -> Value {
        let mut r = json!({"method": "POST", "url": "https://api.example.com/pay/{order}"});
        for (k, v) in fields.as_object().unwrap() {
            r[k] = v.clone();
        }
        json!({ "request": r })
    }

    #[test]
    fn every_loosening_of_a_tool_or_plugin_asks_again() {
        let cases: Vec<(&str, Plugin, Plugin, &str)> = vec![
            (
                "dropping userOnly",
                tool(json!({"userOnly": true})),
                tool(json!({})),
                "tool shop.pay is no longer for the user only: the AI may call it",
            ),
            (
                "dropping alwaysAsk",
                tool(json!({"alwaysAsk": true})),
                tool(json!({})),
                "tool shop.pay no longer asks every time",
            ),
            (
                "dropping grant",
                tool(json!({"grant": true})),
                tool(json!({})),
                "tool shop.pay no longer asks for a grant",
            ),
            // DESIGN.md §3 8e: the limits read the declared amount; the new-payee ask its payee.
            (
                "dropping amount",
                tool(json!({"amount": {"field": "order", "unit": "yuan"}})),
                tool(json!({})),
                "tool shop.pay no longer declares its amount: the money limits could not hold it",
            ),
            (
                "amount in fen instead of yuan",
                tool(json!({"amount": {"field": "order", "unit": "yuan"}})),
                tool(json!({"amount": {"field": "order", "unit": "fen"}})),
                "tool shop.pay reads its amount from order in fen (was order in yuan)",
            ),
            (
                "dropping payee",
                tool(json!({"payee": {"field": "order"}})),
                tool(json!({})),
                "tool shop.pay no longer declares its payee: a new payee would not be asked",
            ),
            (
                "dropping target",
                tool(json!({"target": "订单 {order}"})),
                tool(json!({})),
                "tool shop.pay no longer names what it acts on in its prompt",
            ),
            (
                "rewording target",
                tool(json!({"target": "订单 {order}"})),
                tool(json!({"target": "查看 {order}"})),
                "tool shop.pay names what it acts on as \"查看 {order}\" (was \"订单 {order}\")",
            ),
            (
                "dropping untrusted",
                tool(json!({"untrusted": true})),
                tool(json!({})),
                "tool shop.pay no longer marks its results untrusted",
            ),
            (
                "adding campus to a request",
                tool(request(
                    json!({"url": "https://bdcard.pku.edu.cn/pay/{order}"}),
                )),
                tool(request(
                    json!({"url": "https://bdcard.pku.edu.cn/pay/{order}", "campus": true}),
                )),
                "tool shop.pay sends the campus session",
            ),
            (
                "money to write",
                tool(json!({})),
                tool(json!({"effect": "write"})),
                "tool shop.pay changes from money to write",
            ),
            (
                "public to write",
                tool(json!({"effect": "public"})),
                tool(json!({"effect": "write"})),
                "tool shop.pay changes from public to write",
            ),
            (
                "write to read",
                tool(json!({"effect": "write"})),
                tool(json!({"effect": "read"})),
                "tool shop.pay changes from write to read",
            ),
            (
                "another method",
                tool(json!({})),
                tool(request(json!({"method": "DELETE"}))),
                "tool shop.pay sends DELETE (was POST)",
            ),
            (
                "another secret",
                tool(json!({})),
                tool(request(json!({"headers": {"X-Key": "{{secret:key}}"}}))),
                "tool shop.pay sends the secret key",
            ),
            (
                "a new campus tool",
                tool(json!({})),
                plugin(
                    PluginKind::Community,
                    json!({"tools": [
                        {"name": "pay", "title": "付款", "effect": "money",
                         "input": {"type": "object", "properties": {"order": {"type": "string"}}},
                         "request": {"method": "POST", "url": "https://api.example.com/pay/{order}"}},
                        {"name": "peek", "effect": "money",
                         "request": {"method": "GET", "url": "https://bdcard.pku.edu.cn/peek", "campus": true}}
                    ]}),
                    json!({}),
                ),
                "tool shop.peek sends the campus session",
            ),
            (
                "a new disclosure line",
                tool(json!({})),
                plugin(
                    PluginKind::Community,
                    json!({"cloud": {"disclosures": ["Your orders are kept online."]}}),
                    json!({}),
                ),
                "discloses: Your orders are kept online.",
            ),
            (
                "a new data source",
                plugin(PluginKind::Community, json!({}), json!({"effect": "read"})),
                plugin(
                    PluginKind::Community,
                    json!({"dataSources": {"orders": {"title": "订单", "tool": "pay", "ttlMs": 60000}}}),
                    json!({"effect": "read"}),
                ),
                "data source orders calls shop.pay by itself",
            ),
            (
                "community to official",
                tool(json!({})),
                plugin(PluginKind::Official, json!({}), json!({})),
                "it installs as an official plugin now (was community)",
            ),
        ];
        let mut failed = Vec::new();
        for (name, old, new, expected) in cases {
            let more = asks_more(&old, &new);
            if !more.iter().any(|m| m == expected) {
                failed.push(format!("{name}: expected {expected:?} among {more:?}"));
            }
            let same = asks_more(&new, &new);
            if !same.is_empty() {
                failed.push(format!("{name}: the same version asks for {same:?}"));
            }
        }
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }

    #[test]
    fn tightening_a_tool_asks_for_nothing() {
        let cases: Vec<(&str, Plugin, Plugin)> = vec![
            (
                "adding userOnly",
                tool(json!({})),
                tool(json!({"userOnly": true})),
            ),
            (
                "adding alwaysAsk",
                tool(json!({})),
                tool(json!({"alwaysAsk": true})),
            ),
            (
                "adding untrusted",
                tool(json!({})),
                tool(json!({"untrusted": true})),
            ),
            (
                "dropping campus",
                tool(request(
                    json!({"url": "https://bdcard.pku.edu.cn/pay/{order}", "campus": true}),
                )),
                tool(request(
                    json!({"url": "https://bdcard.pku.edu.cn/pay/{order}"}),
                )),
            ),
            (
                "a new description",
                tool(json!({})),
                tool(json!({"description": "Pays an order."})),
            ),
        ];
        for (name, old, new) in cases {
            let more = asks_more(&old, &new);
            assert!(more.is_empty(), "{name}: asks for {more:?}");
        }
    }
}
