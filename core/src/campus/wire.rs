//! How the campus hosts are reached: the hosts of each service, the one HTTP client (HTTP/1.1,
//! no redirects followed by it, 10 s, 1 MiB) and the development origin that stands in for
//! every campus host (`../shared/campus/SERVICES.md`). Cookies, redirects and the reading of an
//! answer are the `chain` module's.

use std::time::Duration;

use url::Url;

/// The services a plugin may name in `services.campus.request` and its `scopes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Service {
    Portal,
    Card,
    Treehole,
    /// The shuttle bus's booking service (班车, wproc, SERVICES.md §11).
    Bus,
    /// 教学网, the courses' Blackboard Learn (SERVICES.md §10).
    Course,
}

impl Service {
    pub const ALL: [Service; 5] = [
        Service::Portal,
        Service::Card,
        Service::Treehole,
        Service::Bus,
        Service::Course,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Service::Portal => "portal",
            Service::Card => "card",
            Service::Treehole => "treehole",
            Service::Bus => "bus",
            Service::Course => "course",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The service whose host `host` is.
    pub fn at_host(host: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.host() == host)
    }

    /// The https host every request of the service goes to.
    pub fn host(self) -> &'static str {
        match self {
            Service::Portal => PORTAL,
            Service::Card => CARD,
            Service::Treehole => TREEHOLE,
            Service::Bus => BUS,
            Service::Course => COURSE,
        }
    }
}

/// The services anyone may query, with no session (SERVICES.md §4); a plugin names them in
/// `services.campus.request` and its `scopes` as it names the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Public {
    /// The portal's public queries: canteen crowding, free classrooms.
    Portal,
    /// The library's catalogue.
    Library,
}

impl Public {
    pub const ALL: [Public; 2] = [Public::Portal, Public::Library];

    pub fn as_str(self) -> &'static str {
        match self {
            Public::Portal => "public",
            Public::Library => "library",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    pub fn host(self) -> &'static str {
        match self {
            Public::Portal => PORTAL,
            Public::Library => LIBRARY,
        }
    }

    /// The paths it answers: the portal's public part only, never its signed-in pages.
    pub fn prefix(self) -> &'static str {
        match self {
            Public::Portal => "/publicQuery/",
            Public::Library => "/BookAPI/",
        }
    }
}

pub const IAAA: &str = "iaaa.pku.edu.cn";
pub const PORTAL: &str = "portal.pku.edu.cn";
pub const CARD: &str = "bdcard.pku.edu.cn";
pub const TREEHOLE: &str = "treehole.pku.edu.cn";
pub const LIBRARY: &str = "opac.lib.pku.edu.cn";
pub const BUS: &str = "wproc.pku.edu.cn";
/// 教学网's host, whose incomplete certificate chain the `trust` module completes.
pub const COURSE: &str = "course.pku.edu.cn";

/// Every host the sign-in chains speak to; a redirect elsewhere is refused.
pub const HOSTS: [&str; 6] = [IAAA, PORTAL, CARD, TREEHOLE, BUS, COURSE];

/// The bound on an answer's body (DESIGN.md §10).
pub const MAX_BODY: usize = 1024 * 1024;
/// The bound on a request's time (DESIGN.md §10).
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// What the card service wants to see (SERVICES.md §2: a mobile user agent).
const USER_AGENT: &str =
    "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36";

/// Where campus requests go: the real hosts, or — in development only — one loopback origin
/// that answers for all of them, told the host by the `Host` header.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    development: Option<Url>,
    /// The bound on a request's time, when not [`TIMEOUT`] (tests: a service the simulator
    /// holds past it).
    timeout: Option<Duration>,
}

impl Origin {
    /// The campus hosts themselves, over https.
    pub fn campus() -> Self {
        Self::default()
    }

    /// Every campus request to `origin` (`http://127.0.0.1:P`), path and query unchanged: the
    /// campus simulator. Only loopback over http is taken; the phone library never calls this.
    pub fn development(origin: &str) -> Result<Self, String> {
        let url = Url::parse(origin).map_err(|e| format!("HARNESS_CAMPUS_ORIGIN {origin}: {e}"))?;
        let loopback = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d == "localhost",
            None => false,
        };
        if url.scheme() != "http" || !loopback || url.path() != "/" {
            return Err(format!(
                "HARNESS_CAMPUS_ORIGIN {origin}: give http://127.0.0.1:PORT, the campus simulator on this machine"
            ));
        }
        Ok(Self {
            development: Some(url),
            timeout: None,
        })
    }

    /// The same origin with requests bounded by `timeout` instead of [`TIMEOUT`]: a test meets
    /// a service that answers too late without waiting 10 s.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The bound on a request's time.
    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(TIMEOUT)
    }

    /// The URL to send for `campus` (an https URL on a campus host) and the `Host` header to
    /// send with it, if it must be set.
    pub fn route(&self, campus: &Url) -> Result<(Url, Option<String>), String> {
        let host = campus.host_str().unwrap_or("");
        let known = HOSTS.contains(&host) || host == LIBRARY;
        if campus.scheme() != "https" || !known || campus.port().is_some() {
            return Err(format!("{} is not a campus service", without_query(campus)));
        }
        match &self.development {
            None => Ok((campus.clone(), None)),
            Some(origin) => {
                let mut sent = origin.clone();
                sent.set_path(campus.path());
                sent.set_query(campus.query());
                Ok((sent, Some(host.to_owned())))
            }
        }
    }
}

/// A URL named without its query, which may hold a token.
pub fn without_query(url: &Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.to_string()
}

/// The campus client: HTTP/1.1 (the card refuses HTTP/2), no redirect followed by it (the
/// chains are walked hop by hop by `chain::Walk`, each Location checked), `timeout` (10 s,
/// [`Origin::timeout`]), a mobile user agent, the platform's roots plus 教学网's pinned anchor
/// (`trust`).
pub fn client(timeout: Duration) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tls_backend_preconfigured(super::trust::config()?)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .http1_only()
        .timeout(timeout)
        .user_agent(USER_AGENT)
        .build()
        .map_err(|e| format!("the campus client could not start: {e}"))
}

/// A query parameter of `url`.
pub fn query_param(url: &Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
}

/// `_rand`'s value: a float the services use to defeat caches.
pub fn rand() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("0.{nanos:09}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_development_origin_takes_only_http_to_loopback() {
        assert!(Origin::development("http://127.0.0.1:8080").is_ok());
        assert!(Origin::development("http://localhost:8080").is_ok());
        for bad in [
            "https://127.0.0.1:8080",
            "http://10.0.0.1:8080",
            "http://example.org",
            "http://127.0.0.1:8080/base",
        ] {
            assert!(Origin::development(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_campus_url_goes_to_the_development_origin_with_its_host() {
        let origin = Origin::development("http://127.0.0.1:9000").unwrap();
        let campus = Url::parse(
            "https://bdcard.pku.edu.cn/berserker-app/ykt/tsm/queryCard?synAccessSource=h5",
        )
        .unwrap();
        let (sent, host) = origin.route(&campus).unwrap();
        assert_eq!(
            (sent.as_str(), host.as_deref()),
            (
                "http://127.0.0.1:9000/berserker-app/ykt/tsm/queryCard?synAccessSource=h5",
                Some("bdcard.pku.edu.cn")
            )
        );
        let off = Url::parse("https://evil.example.org/x").unwrap();
        assert_eq!(
            origin.route(&off).unwrap_err(),
            "https://evil.example.org/x is not a campus service"
        );
    }
}
