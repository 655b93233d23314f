//! The interpreter of plugin documents' declarative tools (module `declared`, docs/PLUGIN.md):
//! it fills the request from the validated input and sends it through the plugin's network
//! gate, so a document reaches only what its grants allow, with every check of the gate.
//!
//! Secrets (`{{secret:name}}` headers) are read from the keystore at call time and go only into
//! the request's headers: never into the result, an error, the audit or a log line. A campus
//! request (`campus: true`) goes through `services.campus`, which adds the session itself. The gate's refusals never repeat a header, and a service that echoes a
//! secret back has it redacted from the result and the error (module `redact`).

use std::sync::Arc;

use async_trait::async_trait;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use crate::campus::wire::Service;
use crate::declared::{HeaderPart, Method, Request, Returns, secret_key};
use crate::handler::{Assessment, PluginHandler, ToolContext};
use crate::installed::Catalog;
use crate::redact::Redact;
use crate::registry::{Plugin, PluginKind, Tool};
use crate::secrets::SecretStore;
use crate::settings::AppSettings;
use crate::turn::Scope;

/// RFC 3986 unreserved characters stay; everything else in a value is percent-encoded, so a
/// value cannot add a path segment, a query or a fragment.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Runs the declared requests of a document's tools.
pub struct Interpreter {
    secrets: Arc<dyn SecretStore>,
    settings: Arc<AppSettings>,
}

impl Interpreter {
    pub fn new(secrets: Arc<dyn SecretStore>, settings: Arc<AppSettings>) -> Self {
        Self { secrets, settings }
    }

    /// Whether `plugin` is a document this interpreter runs: one that declares requests.
    pub fn runs(plugin: &Plugin) -> bool {
        plugin.tools.iter().any(|t| t.request.is_some())
    }

    fn secret(&self, key: &str, missing: impl FnOnce() -> String) -> Result<String, String> {
        match self.secrets.get(key) {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(missing()),
            // The store's own message names no value; the key is ours.
            Err(e) => Err(format!("could not read the secret {key}: {e}")),
        }
    }

    /// The request's headers, and every secret value they carry (to redact from the answer).
    fn headers(&self, plugin: &str, request: &Request) -> Result<Headers, String> {
        let mut out = Vec::with_capacity(request.headers.len() + 1);
        let mut carried = Vec::new();
        for (name, parts) in &request.headers {
            let mut value = String::new();
            for part in parts {
                match part {
                    HeaderPart::Text(text) => value.push_str(text),
                    HeaderPart::Secret(secret) => {
                        let secret = self.secret(&secret_key(plugin, secret), || {
                            format!(
                                "the secret \"{secret}\" of plugin \"{plugin}\" is not set; set it \
                                 on the plugin's page"
                            )
                        })?;
                        value.push_str(&secret);
                        carried.push(secret);
                    }
                }
            }
            out.push((name.clone(), value));
        }
        Ok((out, Redact::new(carried)))
    }
}

#[async_trait]
impl PluginHandler for Interpreter {
    /// A document's request goes to the one host it declares, so the conversation's scope is
    /// checked at the decision (step 8b), ahead of any prompt; the gate checks it again as it
    /// sends.
    fn assess(&self, tool: &Tool, _input: &Value, scope: &Scope) -> Assessment {
        match tool.request.as_ref().map(|r| url::Url::parse(&r.url)) {
            Some(Ok(url)) => Assessment::reaching(&url, scope),
            // No request: run says so. A URL that does not parse is refused as it is filled.
            _ => Assessment::default(),
        }
    }

    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let Some(request) = &tool.request else {
            return Err(format!(
                "tool \"{}\" declares no request, and its plugin has no other code on this device",
                tool.id
            ));
        };
        let url = fill_url(request, &input)?;
        let body = request.body.as_ref().map(|fields| {
            Value::Object(
                fields
                    .iter()
                    .filter_map(|(key, field)| input.get(field).map(|v| (key.clone(), v.clone())))
                    .collect::<Map<String, Value>>(),
            )
        });
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
            Method::Patch => reqwest::Method::PATCH,
            Method::Delete => reqwest::Method::DELETE,
        };
        if request.campus {
            return self.campus(request, &method, &url, body, &ctx).await;
        }
        let (headers, redact) = self.headers(&tool.plugin, request)?;
        let answer = ctx
            .services
            .http_request(&method, &url, &headers, body.as_ref())
            .await
            .map_err(|e| redact.text(e.strip_prefix("error: ").unwrap_or(&e)))?;
        // Redacted here, where the answer is first a result: everything downstream (the model's
        // copy, the UI's whole result, history, audit, events) gets it from this one value.
        shape(&request.returns, answer)
            .map(|result| redact.value(result))
            .map_err(|e| redact.text(&e))
    }
}

impl Interpreter {
    /// A campus request through `services.campus` (DESIGN.md §10): the host, checked at load
    /// to be a campus service's, names the service; the `campus.hosts` setting narrows further.
    async fn campus(
        &self,
        request: &Request,
        method: &reqwest::Method,
        url: &str,
        body: Option<Value>,
        ctx: &ToolContext,
    ) -> Result<Value, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("the request's URL: {e}"))?;
        let host = parsed.host_str().unwrap_or_default();
        let hosts = self.settings.get().campus.hosts;
        if !hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Err(format!(
                "the campus session goes only to the hosts of the campus.hosts setting ({}); \
                 {host} is not one of them",
                hosts.join(", ")
            ));
        }
        let service =
            Service::at_host(host).ok_or_else(|| format!("{host} is not a campus service"))?;
        let path = match parsed.query() {
            Some(query) => format!("{}?{query}", parsed.path()),
            None => parsed.path().to_owned(),
        };
        let asked = serde_json::json!({"method": method.as_str(), "path": path, "body": body});
        let answer = ctx
            .services
            .campus_request(service.as_str(), &asked)
            .await
            .map_err(|e| e.strip_prefix("error: ").unwrap_or(&e).to_owned())?;
        // A status object (`signin_required`, `verification_required`) is the tool's result.
        let Some(status) = answer["status"].as_u64() else {
            return Ok(answer);
        };
        if !(200..300).contains(&status) {
            return Err(format!("{host} answered HTTP {status}"));
        }
        let text = match &answer["body"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        shape(&request.returns, text)
    }
}

type Headers = (Vec<(String, String)>, Redact);

/// The URL with each `{field}` replaced by the input's value, percent-encoded, and the query
/// parameters of the fields present.
fn fill_url(request: &Request, input: &Value) -> Result<String, String> {
    let mut url = request.url.clone();
    let query_at = request.url.find('?').unwrap_or(request.url.len());
    for field in &request.url_fields {
        let value = input.get(field).ok_or_else(|| {
            format!("input field \"{field}\" is needed to build the request's URL")
        })?;
        let text = scalar(field, value)?;
        let placeholder = format!("{{{field}}}");
        let in_path = request
            .url
            .find(&placeholder)
            .is_some_and(|at| at < query_at);
        if in_path && !one_segment(&text) {
            return Err(format!(
                "input field \"{field}\" is \"{text}\", which cannot stand as one segment of the \
                 request's URL path (a path value may not be empty or only dots)"
            ));
        }
        url = url.replacen(
            &format!("{{{field}}}"),
            &utf8_percent_encode(&text, COMPONENT).to_string(),
            1,
        );
    }
    let mut parsed = url::Url::parse(&url).map_err(|e| format!("the request's URL: {e}"))?;
    let present: Vec<(String, String)> = request
        .query
        .iter()
        .filter_map(|(name, field)| input.get(field).map(|v| (name, field, v)))
        .map(|(name, field, v)| scalar(field, v).map(|text| (name.clone(), text)))
        .collect::<Result<_, _>>()?;
    if !present.is_empty() {
        parsed.query_pairs_mut().extend_pairs(present);
    }
    Ok(parsed.into())
}

/// Whether `value` stays one path segment wherever it is read. A value that is empty or only
/// dots — once percent-decoded, as often as it decodes — is refused rather than encoded: the URL
/// parser (WHATWG) takes `%2e` for `.` when it removes dot segments, so `..` encoded as `%2E%2E`
/// would still climb out (`/orders/{a}/{b}/cancel` with `..`, `..` is `/cancel` two levels
/// up, with the plugin's secret header), and a server that decodes once more would do the same
/// with `%252e`. An empty value would make `//`, which servers merge, moving the next segment
/// into its place.
fn one_segment(value: &str) -> bool {
    let mut text = value.to_owned();
    // Each round removes at least one `%XX`, so this ends; the bound keeps it cheap.
    for _ in 0..8 {
        let decoded = percent_encoding::percent_decode_str(&text)
            .decode_utf8_lossy()
            .into_owned();
        if decoded == text {
            break;
        }
        text = decoded;
    }
    !text.is_empty() && !text.bytes().all(|b| b == b'.')
}

fn scalar(field: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(format!(
            "input field \"{field}\" must be a string, number or boolean to go into the URL"
        )),
    }
}

/// The tool's result from the answer's body.
fn shape(returns: &Returns, body: String) -> Result<Value, String> {
    let json = || {
        serde_json::from_str::<Value>(&body)
            .map_err(|e| format!("the service did not answer JSON: {e}"))
    };
    match returns {
        Returns::Text => Ok(Value::String(body)),
        Returns::Json => json(),
        Returns::Pointers(pointers) => {
            let answer = json()?;
            Ok(Value::Object(
                pointers
                    .iter()
                    .map(|p| (p.clone(), answer.pointer(p).cloned().unwrap_or(Value::Null)))
                    .collect(),
            ))
        }
    }
}

/// The app's catalog with the interpreter in front: a document that declares requests runs
/// them; anything else gets the code the catalog has for it.
pub(crate) struct WithInterpreter {
    pub inner: Arc<dyn Catalog>,
    pub interpreter: Arc<Interpreter>,
    /// The handlers of remote plugins.
    pub remotes: Arc<super::remote::Remotes>,
}

impl Catalog for WithInterpreter {
    fn bundled(&self) -> Vec<(Plugin, Arc<dyn PluginHandler>)> {
        self.inner.bundled()
    }

    fn handler(&self, plugin: &Plugin) -> Option<Arc<dyn PluginHandler>> {
        let document = matches!(plugin.kind, PluginKind::Official | PluginKind::Community);
        if document && Interpreter::runs(plugin) {
            Some(self.interpreter.clone())
        } else {
            self.inner.handler(plugin)
        }
    }

    /// A remote plugin the catalog has no code for is the MCP server at its source.
    fn handler_at(&self, plugin: &Plugin, source: &str) -> Option<Arc<dyn PluginHandler>> {
        self.handler(plugin).or_else(|| {
            if plugin.kind != PluginKind::Remote {
                return None;
            }
            let server = self.remotes.server(&plugin.id, source).ok()?;
            Some(server as Arc<dyn PluginHandler>)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::declared::{RequestManifest, load};
    use serde_json::json;

    fn request(spec: Value) -> Request {
        let input = json!({"type": "object", "properties": {
            "canteen": {"type": "string"}, "day": {"type": "string"}, "n": {"type": "integer"}}});
        load(
            &serde_json::from_value::<RequestManifest>(spec).unwrap(),
            &input,
        )
        .unwrap()
    }

    #[test]
    fn a_value_in_the_url_is_percent_encoded_and_cannot_leave_its_segment() {
        let r = request(
            json!({"method": "GET", "url": "https://api.example.com/c/{canteen}/menu",
                               "query": {"d": "day", "count": "n"}}),
        );
        let url = fill_url(
            &r,
            &json!({"canteen": "学一/../admin?x=1#f", "day": "a&b=c", "n": 3}),
        )
        .unwrap();
        assert_eq!(
            url,
            "https://api.example.com/c/%E5%AD%A6%E4%B8%80%2F..%2Fadmin%3Fx%3D1%23f/menu?count=3&d=a%26b%3Dc"
        );
        let url = fill_url(&r, &json!({"canteen": "x"})).unwrap();
        assert_eq!(url, "https://api.example.com/c/x/menu");
    }

    #[test]
    fn a_missing_url_field_is_the_tools_error() {
        let r = request(json!({"method": "GET", "url": "https://api.example.com/c/{canteen}"}));
        assert_eq!(
            fill_url(&r, &json!({})).unwrap_err(),
            "input field \"canteen\" is needed to build the request's URL"
        );
    }

    #[test]
    fn pointers_project_the_answer() {
        let shaped = shape(
            &Returns::Pointers(vec!["/a/0".into(), "/missing".into()]),
            r#"{"a": [7, 8], "b": 1}"#.into(),
        )
        .unwrap();
        assert_eq!(shaped, json!({"/a/0": 7, "/missing": null}));
        assert_eq!(
            shape(&Returns::Json, "not json".into()).unwrap_err(),
            "the service did not answer JSON: expected ident at line 1 column 2"
        );
    }
}
