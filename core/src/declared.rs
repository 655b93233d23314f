//! Declarative HTTP tools of plugin documents (docs/PLUGIN.md): a tool names the request it
//! makes — method, URL template, query, JSON body, headers — and what it returns. Checked
//! whole when the plugin loads, so a document that cannot be honoured is a load error naming
//! the field, never a surprise at call time. The interpreter that sends them is
//! `plugins::interpreter`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use crate::campus::wire::Service;

/// A tool's `request`, as written by the document's author.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestManifest {
    pub method: String,
    /// `https://host/path/{field}`: placeholders only in the path and query.
    pub url: String,
    /// Query parameter → input field.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, String>,
    /// JSON body key → input field. No body when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<BTreeMap<String, String>>,
    /// Header → value; the value may hold `{{secret:name}}`, read from the keystore at call
    /// time.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Attach the campus session (only for a plugin that `requires: campus-session`, only to
    /// the hosts of the `campus.hosts` setting).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub campus: bool,
    /// `json` (the default), `text`, or a list of JSON Pointers into the JSON answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<Value>,
}

/// An HTTP method a declarative tool may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// What the tool hands back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Returns {
    Json,
    Text,
    /// An object with one entry per pointer (null where the answer has nothing there).
    Pointers(Vec<String>),
}

/// One piece of a header value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderPart {
    Text(String),
    /// A secret of this plugin, by the name the document gives it.
    Secret(String),
}

/// A checked request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: Method,
    pub url: String,
    /// Every `{field}` of the URL template, in order.
    pub url_fields: Vec<String>,
    /// The host the request goes to, fixed by the document.
    pub host: String,
    pub query: Vec<(String, String)>,
    pub body: Option<Vec<(String, String)>>,
    pub headers: Vec<(String, Vec<HeaderPart>)>,
    pub campus: bool,
    pub returns: Returns,
}

impl Request {
    /// The names of the secrets this request reads.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.headers.iter().flat_map(|(_, parts)| {
            parts.iter().filter_map(|p| match p {
                HeaderPart::Secret(name) => Some(name.as_str()),
                HeaderPart::Text(_) => None,
            })
        })
    }
}

/// Headers the client itself sets: a document writing them would describe a request other
/// than the one sent (Host) or smuggle the campus session around its rule (Cookie).
const RESERVED_HEADERS: [&str; 5] = [
    "host",
    "content-length",
    "transfer-encoding",
    "cookie",
    "connection",
];

/// Checks `request` of a tool whose input schema is `input`. Errors are `(field under
/// "request", message)`.
pub fn load(request: &RequestManifest, input: &Value) -> Result<Request, (String, String)> {
    let err = |field: &str, message: String| Err((field.to_owned(), message));
    let method = match request.method.to_ascii_uppercase().as_str() {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "PATCH" => Method::Patch,
        "DELETE" => Method::Delete,
        _ => {
            return err(
                "method",
                format!(
                    "unknown method \"{}\"; use GET, POST, PUT, PATCH or DELETE",
                    request.method
                ),
            );
        }
    };
    let declared = |field: &str| input.get("properties").and_then(|p| p.get(field)).is_some();
    let (url_fields, filled) = match placeholders(&request.url) {
        Ok(found) => found,
        Err(message) => return err("url", message),
    };
    let authority_end = request
        .url
        .find("://")
        .map(|i| i + 3)
        .and_then(|start| {
            request.url[start..]
                .find(['/', '?', '#'])
                .map(|end| start + end)
                .or(Some(request.url.len()))
        })
        .unwrap_or(0);
    if request.url[..authority_end].contains('{') {
        return err(
            "url",
            "a {field} may stand only in the path or the query, never in the scheme or host: \
             the host a tool reaches is fixed by the document and shown before install"
                .into(),
        );
    }
    let parsed = match Url::parse(&filled) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        _ => {
            return err(
                "url",
                format!("\"{}\" is not an absolute http or https URL", request.url),
            );
        }
    };
    let Some(host) = parsed.host_str() else {
        return err("url", format!("\"{}\" names no host", request.url));
    };
    for field in &url_fields {
        if !declared(field) {
            return err(
                "url",
                format!(
                    "names input field \"{field}\", which the tool's input does not declare; \
                     add it to input.properties"
                ),
            );
        }
    }
    for (key, source) in [("query", &request.query)]
        .into_iter()
        .chain(request.body.as_ref().map(|b| ("body", b)))
    {
        for (name, field) in source {
            if !declared(field) {
                return err(
                    &format!("{key}.{name}"),
                    format!(
                        "names input field \"{field}\", which the tool's input does not \
                         declare; add it to input.properties"
                    ),
                );
            }
        }
    }
    if request.campus && parsed.scheme() != "https" {
        return err(
            "campus",
            "the campus session is sent over https only; write the URL with https://".into(),
        );
    }
    // DESIGN.md §10: a campus request goes to one campus service, which the core reaches with
    // the session's own headers.
    let campus_host = parsed.host_str().unwrap_or_default();
    if request.campus && Service::at_host(campus_host).is_none() {
        let hosts: Vec<&str> = Service::ALL.iter().map(|s| s.host()).collect();
        return err(
            "campus",
            format!(
                "{campus_host} is not a campus service; a campus request goes to one of {}",
                hosts.join(", ")
            ),
        );
    }
    if request.campus && !request.headers.is_empty() {
        return err(
            "headers",
            "a campus request carries the session's own headers only; remove headers".into(),
        );
    }
    if method == Method::Get && request.body.is_some() {
        return err(
            "body",
            "a GET request has no body; send the fields as query parameters".into(),
        );
    }
    let mut headers = Vec::new();
    for (name, value) in &request.headers {
        let field = format!("headers.{name}");
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        {
            return err(&field, "not a header name".into());
        }
        if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return err(
                &field,
                "the app sets this header itself; remove it (the campus session is attached \
                 with campus: true)"
                    .into(),
            );
        }
        match header_parts(value) {
            Ok(parts) => headers.push((name.clone(), parts)),
            Err(message) => return err(&field, message),
        }
    }
    let returns = match &request.returns {
        None => Returns::Json,
        Some(Value::String(s)) if s == "json" => Returns::Json,
        Some(Value::String(s)) if s == "text" => Returns::Text,
        Some(Value::Array(items)) => {
            let mut pointers = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item.as_str() {
                    Some(p) if p.is_empty() || p.starts_with('/') => pointers.push(p.to_owned()),
                    _ => {
                        return err(
                            &format!("returns[{i}]"),
                            format!("{item} is not a JSON Pointer; write one as \"/a/0/b\""),
                        );
                    }
                }
            }
            Returns::Pointers(pointers)
        }
        Some(other) => {
            return err(
                "returns",
                format!("{other} is not json, text or a list of JSON Pointers"),
            );
        }
    };
    Ok(Request {
        method,
        url: request.url.clone(),
        url_fields,
        host: host.to_owned(),
        query: request
            .query
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        body: request
            .body
            .as_ref()
            .map(|b| b.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        headers,
        campus: request.campus,
        returns,
    })
}

/// The `{field}` names of a URL template, and the template with each replaced by `x` (to
/// check the rest of it parses).
fn placeholders(template: &str) -> Result<(Vec<String>, String), String> {
    let mut fields = Vec::new();
    let mut filled = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        filled.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| "a \"{\" has no closing \"}\"".to_owned())?;
        let name = &after[..close];
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(format!(
                "\"{{{name}}}\" is not a placeholder; write {{field}} with an input field's name"
            ));
        }
        fields.push(name.to_owned());
        filled.push('x');
        rest = &after[close + 1..];
    }
    if rest.contains('}') {
        return Err("a \"}\" has no opening \"{\"".into());
    }
    filled.push_str(rest);
    Ok((fields, filled))
}

/// A header value: text and `{{secret:name}}`.
fn header_parts(value: &str) -> Result<Vec<HeaderPart>, String> {
    let mut parts = Vec::new();
    let mut rest = value;
    while let Some(open) = rest.find("{{") {
        if open > 0 {
            parts.push(HeaderPart::Text(rest[..open].to_owned()));
        }
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| "a \"{{\" has no closing \"}}\"".to_owned())?;
        let inner = &after[..close];
        let name = inner.strip_prefix("secret:").ok_or_else(|| {
            format!("\"{{{{{inner}}}}}\" is not a secret reference; write {{{{secret:name}}}}")
        })?;
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        {
            return Err(format!(
                "secret name \"{name}\" may hold only letters, digits, '.', '_' and '-'"
            ));
        }
        parts.push(HeaderPart::Secret(name.to_owned()));
        rest = &after[close + 2..];
    }
    if !rest.is_empty() {
        parts.push(HeaderPart::Text(rest.to_owned()));
    }
    if parts.iter().any(|p| match p {
        HeaderPart::Text(t) => t.chars().any(|c| c.is_control()),
        HeaderPart::Secret(_) => false,
    }) {
        return Err("a header value may not hold a line break or control character".into());
    }
    Ok(parts)
}

/// The keystore key of a document plugin's secret `name`: each plugin has its own names, so
/// one cannot read another's key (or the model's) by naming it.
pub fn secret_key(plugin: &str, name: &str) -> String {
    format!("plugins.{plugin}.{name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(request: Value) -> RequestManifest {
        serde_json::from_value(request).unwrap()
    }

    fn input() -> Value {
        json!({"type": "object", "properties": {"day": {"type": "string"}, "q": {"type": "string"}}})
    }

    #[test]
    fn a_placeholder_in_the_host_is_refused() {
        let (field, message) = load(
            &spec(json!({"method": "GET", "url": "https://{day}.example.com/menu"})),
            &input(),
        )
        .unwrap_err();
        assert_eq!(field, "url");
        assert!(
            message.starts_with("a {field} may stand only in the path"),
            "{message}"
        );
    }

    #[test]
    fn a_field_the_input_does_not_declare_is_refused() {
        let (field, message) = load(
            &spec(json!({"method": "GET", "url": "https://api.example.com/menu/{week}"})),
            &input(),
        )
        .unwrap_err();
        assert_eq!(field, "url");
        assert_eq!(
            message,
            "names input field \"week\", which the tool's input does not declare; add it to input.properties"
        );
        let (field, _) = load(
            &spec(json!({"method": "GET", "url": "https://api.example.com/menu", "query": {"w": "week"}})),
            &input(),
        )
        .unwrap_err();
        assert_eq!(field, "query.w");
    }

    #[test]
    fn a_header_may_reference_a_secret_and_nothing_else() {
        let loaded = load(
            &spec(
                json!({"method": "GET", "url": "https://api.example.com/menu/{day}",
                         "headers": {"Authorization": "Bearer {{secret:token}}"}}),
            ),
            &input(),
        )
        .unwrap();
        assert_eq!(
            loaded.headers,
            [(
                "Authorization".to_owned(),
                vec![
                    HeaderPart::Text("Bearer ".into()),
                    HeaderPart::Secret("token".into())
                ]
            )]
        );
        assert_eq!(loaded.host, "api.example.com");
        let (field, message) = load(
            &spec(json!({"method": "GET", "url": "https://api.example.com/",
                         "headers": {"X-Day": "{{day}}"}})),
            &input(),
        )
        .unwrap_err();
        assert_eq!(field, "headers.X-Day");
        assert_eq!(
            message,
            "\"{{day}}\" is not a secret reference; write {{secret:name}}"
        );
        let (field, _) = load(
            &spec(json!({"method": "GET", "url": "https://api.example.com/",
                         "headers": {"Cookie": "a=b"}})),
            &input(),
        )
        .unwrap_err();
        assert_eq!(field, "headers.Cookie");
    }

    #[test]
    fn a_campus_request_over_plain_http_is_refused() {
        let (field, message) = load(
            &spec(json!({"method": "GET", "url": "http://portal.pku.edu.cn/x", "campus": true})),
            &input(),
        )
        .unwrap_err();
        assert_eq!(field, "campus");
        assert_eq!(
            message,
            "the campus session is sent over https only; write the URL with https://"
        );
    }

    #[test]
    fn returns_is_json_text_or_pointers() {
        let base = json!({"method": "GET", "url": "https://api.example.com/"});
        let with = |r: Value| {
            let mut m = base.clone();
            m["returns"] = r;
            load(&spec(m), &input())
        };
        assert_eq!(
            load(&spec(base.clone()), &input()).unwrap().returns,
            Returns::Json
        );
        assert_eq!(with(json!("text")).unwrap().returns, Returns::Text);
        assert_eq!(
            with(json!(["/a", "/b/0"])).unwrap().returns,
            Returns::Pointers(vec!["/a".into(), "/b/0".into()])
        );
        assert_eq!(with(json!(["a"])).unwrap_err().0, "returns[0]");
        assert_eq!(with(json!("xml")).unwrap_err().0, "returns");
    }
}
