//! The campus client's HTTP, one owner per wire concern (STYLE.md §11): a sign-in's cookies
//! kept per RFC 6265 in one store ([`Jar`]), redirects followed by the HTTP rules without ever
//! leaving the campus hosts ([`Walk::follow`]), and answers read whatever their encoding (gzip)
//! and charset ([`Walk::send`]). Every request of the campus client goes through here.

use std::io::Read as _;

use cookie_store::CookieStore;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use url::Url;

use super::CampusError;
use super::wire::{HOSTS, MAX_BODY, Origin, without_query};

/// The most redirects one chain follows (DESIGN.md §10).
pub const MAX_HOPS: usize = 10;

/// Cookies as the campus hosts set them (RFC 6265: Domain, Path, Secure, Expires/Max-Age),
/// matched against the campus URL a request is for, never the development origin it is sent to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Jar(CookieStore);

impl Jar {
    /// Keeps the cookies an answer to `url` set.
    fn store(&mut self, url: &Url, headers: &reqwest::header::HeaderMap) {
        for raw in headers
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
        {
            // A cookie the RFC says to ignore (a Domain that is not the host's) is ignored.
            let _ = self.0.parse(raw, url);
        }
    }

    /// The `Cookie` header a request to `url` carries, none when no cookie matches.
    pub fn header(&self, url: &Url) -> Option<String> {
        let pairs: Vec<String> = self
            .0
            .get_request_values(url)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }

    /// The value of cookie `name` as a request to `url` would carry it.
    pub fn value(&self, url: &Url, name: &str) -> Option<String> {
        self.0
            .get_request_values(url)
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_owned())
    }

    /// The unexpired cookies `host` is sent, whatever their path: what a service's session, or
    /// IAAA's part of the keystore, keeps of a sign-in's store.
    pub fn for_host(&self, host: &str) -> Jar {
        let Ok(url) = Url::parse(&format!("https://{host}/")) else {
            return Jar::default();
        };
        let kept = self
            .0
            .iter_unexpired()
            .filter(|c| c.domain.matches(&url))
            .cloned()
            .map(Ok::<_, ()>);
        Jar(CookieStore::from_cookies(kept, false).unwrap_or_default())
    }

    /// Adds every cookie of `other` (a kept store a sign-in starts from).
    pub fn extend(&mut self, other: &Jar) {
        for cookie in other.0.iter_unexpired() {
            if let Ok(url) = Url::parse(&format!(
                "https://{}{}",
                String::from(&cookie.domain).trim_start_matches('.'),
                String::from(&cookie.path)
            )) {
                let _ = self.0.insert(cookie.clone(), &url);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter_unexpired().next().is_none()
    }

    /// Every cookie's value, to be redacted from what a plugin is answered.
    pub fn values(&self) -> Vec<String> {
        self.0
            .iter_unexpired()
            .map(|c| c.value().to_owned())
            .collect()
    }

    /// The store as the keystore keeps it (JSON).
    pub fn kept(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A store the keystore kept; an unreadable one is an empty store.
    pub fn from_kept(kept: &str) -> Jar {
        serde_json::from_str(kept).unwrap_or_default()
    }
}

impl Serialize for Jar {
    /// Every unexpired cookie, those without Expires too: the keystore keeps a sign-in's
    /// cookies until the student signs out (SERVICES.md §6.3: IAAA's are kept whole).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter_unexpired())
    }
}

impl<'de> Deserialize<'de> for Jar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        CookieStore::deserialize(deserializer).map(Jar)
    }
}

/// A request of the campus client: what is sent, to which campus URL.
#[derive(Clone, Debug)]
pub(super) struct Ask {
    pub method: reqwest::Method,
    pub url: Url,
    pub headers: Vec<(&'static str, String)>,
    /// The content type and the body.
    pub body: Option<(&'static str, String)>,
}

impl Ask {
    pub fn get(url: Url) -> Self {
        Self {
            method: reqwest::Method::GET,
            url,
            headers: Vec::new(),
            body: None,
        }
    }
}

/// An answer read whole: its status, its `Location` resolved against the request's URL (when
/// it has one), its body decoded to text, and the body's bytes (a picture's).
#[derive(Debug)]
pub(super) struct Reply {
    pub status: u16,
    pub location: Option<Url>,
    pub text: String,
    pub bytes: Vec<u8>,
}

impl Reply {
    /// A redirect the HTTP rules follow (RFC 9110 §15.4).
    fn redirects(&self) -> bool {
        matches!(self.status, 301 | 302 | 303 | 307 | 308)
    }
}

/// One sign-in's (or one request's) walk over the campus hosts with its cookie store.
pub(super) struct Walk<'a> {
    client: &'a reqwest::Client,
    origin: &'a Origin,
    pub jar: Jar,
}

impl<'a> Walk<'a> {
    pub fn new(client: &'a reqwest::Client, origin: &'a Origin, jar: Jar) -> Self {
        Self {
            client,
            origin,
            jar,
        }
    }

    /// Sends `ask` with the store's cookies for its URL, keeps the cookies the answer sets and
    /// reads the answer under the 1 MiB bound, following no redirect.
    pub async fn send(&mut self, ask: &Ask) -> Result<Reply, CampusError> {
        let (sent, host) = self.origin.route(&ask.url).map_err(CampusError::Chain)?;
        let mut builder = self
            .client
            .request(ask.method.clone(), sent)
            .header(reqwest::header::ACCEPT_ENCODING, "gzip");
        if let Some(host) = host {
            builder = builder.header(reqwest::header::HOST, host);
        }
        if let Some(cookies) = self.jar.header(&ask.url) {
            builder = builder.header(reqwest::header::COOKIE, cookies);
        }
        for (name, value) in &ask.headers {
            builder = builder.header(*name, value);
        }
        if let Some((content_type, body)) = &ask.body {
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, *content_type)
                .body(body.clone());
        }
        let response = builder.send().await.map_err(|e| {
            if e.is_timeout() {
                CampusError::TimedOut(self.origin.timeout().as_secs())
            } else {
                CampusError::Unreachable(e.without_url().to_string())
            }
        })?;
        let status = response.status().as_u16();
        self.jar.store(&ask.url, response.headers());
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .map(|raw| {
                let raw = String::from_utf8_lossy(raw.as_bytes()).into_owned();
                // RFC 9110 §10.2.2: relative to the request's URL (a path, `//host`, or whole).
                ask.url.join(&raw).map_err(|_| {
                    CampusError::Chain(format!("the campus service redirected to {raw:?}"))
                })
            })
            .transpose()?;
        let (bytes, encoding) = read(response).await.map_err(CampusError::Unreachable)?;
        Ok(Reply {
            status,
            location,
            text: encoding.decode(&bytes).0.into_owned(),
            bytes,
        })
    }

    /// Follows the redirects from `ask` by the HTTP rules until `found` finds what the chain is
    /// for — in a redirect's `Location` (its query or fragment) or in the cookie store — or the
    /// chain ends: at most [`MAX_HOPS`] redirects, each checked to stay on a campus host over
    /// https before anything is sent there. A 303, and a 301 or 302 after a POST, turn the next
    /// request into a GET; a 307 or 308 keeps the method and the body.
    pub async fn follow<T>(
        &mut self,
        ask: Ask,
        found: impl Fn(Option<&Url>, &Jar) -> Option<T>,
    ) -> Result<T, Ended> {
        let mut ask = ask;
        for _ in 0..=MAX_HOPS {
            let reply = self.send(&ask).await.map_err(Ended::Failed)?;
            let location = reply.location.as_ref().filter(|_| reply.redirects());
            if let Some(it) = found(location, &self.jar) {
                return Ok(it);
            }
            let Some(next) = location else {
                return Err(Ended::Answered(reply.status));
            };
            on_campus(next).map_err(Ended::Failed)?;
            let keeps_method = matches!(reply.status, 307 | 308)
                || (ask.method == reqwest::Method::GET || ask.method == reqwest::Method::HEAD);
            if !keeps_method || reply.status == 303 {
                ask.method = reqwest::Method::GET;
                ask.body = None;
            }
            ask.url = next.clone();
        }
        Err(Ended::TooLong)
    }
}

/// How a chain ended without what it was for.
#[derive(Debug)]
pub(super) enum Ended {
    /// A request failed, or a redirect pointed off the campus hosts.
    Failed(CampusError),
    /// The chain stopped at an answer that is no redirect, with this status.
    Answered(u16),
    /// More than [`MAX_HOPS`] redirects.
    TooLong,
}

impl Ended {
    /// The error a chain of `service` (its name) that ended so is, in words naming it.
    pub fn error(self, service: &str, wanted: &str) -> CampusError {
        match self {
            Ended::Failed(e) => e,
            Ended::Answered(status) if status >= 500 => CampusError::Unreachable(format!(
                "{service} answered {status} while signing in: it may be down for maintenance; try again later"
            )),
            Ended::Answered(status) => CampusError::Chain(format!(
                "{service}'s sign-in ended at an answer ({status}) without its {wanted}: the service may be down for maintenance; try again later"
            )),
            Ended::TooLong => CampusError::Chain(format!(
                "{service}'s sign-in was redirected more than {MAX_HOPS} times; it was stopped"
            )),
        }
    }
}

/// A redirect's target, only when it is on a campus host over https — a chain that points
/// elsewhere is refused before anything is sent there.
pub(super) fn on_campus(url: &Url) -> Result<(), CampusError> {
    let host = url.host_str().unwrap_or("");
    if url.scheme() != "https" || !HOSTS.contains(&host) || url.port().is_some() {
        return Err(CampusError::Chain(format!(
            "the sign-in was redirected off the campus hosts, to {}; nothing was sent there",
            without_query(url)
        )));
    }
    Ok(())
}

/// A parameter of `url` wherever a service puts it: its query, or its fragment (`#a=b`, or
/// an app route's `#/path?a=b`).
pub(super) fn param(url: &Url, name: &str) -> Option<String> {
    let in_query = url
        .query_pairs()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned());
    in_query.or_else(|| {
        let fragment = url.fragment()?;
        let pairs = fragment.split_once('?').map_or(fragment, |(_, q)| q);
        url::form_urlencoded::parse(pairs.as_bytes())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    })
}

/// Reads an answer's body under [`MAX_BODY`] (after decompression too; a larger one is refused,
/// not cut): gunzipped when its `Content-Encoding` is gzip; with the encoding of the `charset`
/// its `Content-Type` names (UTF-8 when none), which its text is decoded from.
async fn read(
    mut response: reqwest::Response,
) -> Result<(Vec<u8>, &'static encoding_rs::Encoding), String> {
    let gzip = response
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("gzip"));
    let charset = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(charset)
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()));
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("the campus service's answer broke off ({e})"))?
    {
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    if gzip {
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .take(MAX_BODY as u64 + 1)
            .read_to_end(&mut plain)
            .map_err(|e| format!("the campus service's gzip answer could not be read ({e})"))?;
        if plain.len() > MAX_BODY {
            return Err(too_large());
        }
        bytes = plain;
    }
    Ok((bytes, charset.unwrap_or(encoding_rs::UTF_8)))
}

fn too_large() -> String {
    "the campus service answered more than 1 MiB; it was refused".into()
}

/// The `charset` parameter of a `Content-Type`.
fn charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_token_is_found_in_the_query_or_the_fragment() {
        let query = url("https://bdcard.pku.edu.cn/plat/?synjones-auth=abc&name=user");
        assert_eq!(param(&query, "synjones-auth").as_deref(), Some("abc"));
        let fragment = url("https://bdcard.pku.edu.cn/plat/#/home?synjones-auth=def");
        assert_eq!(param(&fragment, "synjones-auth").as_deref(), Some("def"));
        let plain = url("https://treehole.pku.edu.cn/web/#token=ghi");
        assert_eq!(param(&plain, "token").as_deref(), Some("ghi"));
        assert_eq!(param(&plain, "other"), None);
    }

    #[test]
    fn the_charset_of_a_content_type_is_read() {
        assert_eq!(charset("text/html; charset=GBK").as_deref(), Some("GBK"));
        assert_eq!(
            charset("application/json;charset=\"utf-8\"").as_deref(),
            Some("utf-8")
        );
        assert_eq!(charset("application/json"), None);
    }

    #[test]
    fn a_cookie_store_sends_by_domain_path_and_secure_and_keeps_per_host() {
        // RFC 6265: a Domain cookie reaches every host under it, a Path cookie only its paths,
        // an expired one none; an unrelated host's cookie stays with it.
        let mut jar = Jar::default();
        let mut set = reqwest::header::HeaderMap::new();
        for raw in [
            "pku_token=t1; Domain=.pku.edu.cn; Path=/; Secure; SameSite=Lax",
            "SESSION=s1; Path=/portal2017; HttpOnly",
            "gone=x; Path=/; Max-Age=0",
        ] {
            set.append(reqwest::header::SET_COOKIE, raw.parse().unwrap());
        }
        jar.store(
            &url("https://portal.pku.edu.cn/portal2017/ssoLogin.do"),
            &set,
        );
        let portal = jar
            .header(&url("https://portal.pku.edu.cn/portal2017/x.do"))
            .unwrap();
        let mut sent: Vec<&str> = portal.split("; ").collect();
        sent.sort();
        assert_eq!(sent, ["SESSION=s1", "pku_token=t1"]);
        assert_eq!(
            jar.header(&url("https://treehole.pku.edu.cn/chapi/api/x"))
                .as_deref(),
            Some("pku_token=t1")
        );
        assert_eq!(jar.header(&url("http://treehole.pku.edu.cn/")), None);
        let treehole = jar.for_host("treehole.pku.edu.cn");
        assert_eq!(treehole.values(), ["t1"]);
        let kept = Jar::from_kept(&jar.kept());
        assert_eq!(
            kept.value(&url("https://portal.pku.edu.cn/portal2017/"), "SESSION")
                .as_deref(),
            Some("s1")
        );
    }
}
