//! The network gate: `allow_network`, then the host allowlist, then the request (seed 001,
//! "allow_network + url_allowlist").
//!
//! The URL is parsed once, with `url::Url`; the allowlist is checked against that parse's host
//! and the same `Url` is handed to reqwest, so the check and the request cannot disagree about
//! where the request goes. For community and remote plugins the addresses are checked too
//! (DESIGN.md §5): an IP literal before sending, a name inside the client's own resolver, which
//! returns only the addresses it checked, so the connection goes where the check looked.

use std::error::Error;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::scope::CallScope;
use super::{GrantError, Grants, MIB, PluginKind, decode_capped, denied, human_duration};

/// One `url_allowlist` entry, in one of seed 001's three spellings and only those.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// `*`: any http/https host.
    Any,
    /// `example.com`: the host and its subdomains.
    Domain(String),
    /// `*.example.com`: the subdomains only.
    Subdomains(String),
    /// An IP address matches only itself: a dot-boundary suffix of an address (`0.0.1` in
    /// `127.0.0.1`) names nothing anyone meant.
    Address(IpAddr),
}

/// Why an entry is in none of the three spellings.
enum BadEntry {
    MisplacedWildcard,
    NotAHost(String),
}

impl HostPattern {
    fn parse(plugin: &str, entry: &str) -> Result<Self, GrantError> {
        Self::read(entry).map_err(|bad| match bad {
            BadEntry::MisplacedWildcard => GrantError::MisplacedWildcard {
                plugin: plugin.to_owned(),
                entry: entry.trim().to_owned(),
            },
            BadEntry::NotAHost(reason) => GrantError::NotAHost {
                plugin: plugin.to_owned(),
                entry: entry.trim().to_owned(),
                reason,
            },
        })
    }

    fn read(entry: &str) -> Result<Self, BadEntry> {
        let entry = entry.trim();
        if entry == "*" {
            return Ok(Self::Any);
        }
        // seed 001: a star anywhere else (api.*.com) is refused rather than widened.
        let (subdomains_only, rest) = match entry.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, entry),
        };
        if rest.contains('*') {
            return Err(BadEntry::MisplacedWildcard);
        }
        let not_a_host = |reason: &str| BadEntry::NotAHost(reason.to_owned());
        if subdomains_only && rest.is_empty() {
            return Err(not_a_host(
                "\"*.\" must be followed by a domain name, as in *.example.com",
            ));
        }
        let checked = |domain: &str| check_host_name(domain).map_err(|reason| not_a_host(&reason));
        match (
            normalize_host(rest).map_err(|reason| not_a_host(&reason))?,
            subdomains_only,
        ) {
            (Host::Domain(domain), false) => Ok(Self::Domain(checked(&domain)?)),
            (Host::Domain(domain), true) => Ok(Self::Subdomains(checked(&domain)?)),
            (Host::Ipv4(ip), false) => Ok(Self::Address(ip.into())),
            (Host::Ipv6(ip), false) => Ok(Self::Address(ip.into())),
            (_, true) => Err(not_a_host(
                "\"*.\" must be followed by a domain name, not an address",
            )),
        }
    }

    /// seed 001, rule 5: match when host == entry or host ends with ".{entry}".
    fn matches(&self, host: &Host<&str>) -> bool {
        match (self, host) {
            (Self::Any, _) => true,
            (Self::Domain(entry), Host::Domain(host)) => {
                *host == entry || is_dot_suffix(host, entry)
            }
            (Self::Subdomains(entry), Host::Domain(host)) => is_dot_suffix(host, entry),
            (Self::Address(entry), Host::Ipv4(host)) => *entry == IpAddr::V4(*host),
            (Self::Address(entry), Host::Ipv6(host)) => *entry == IpAddr::V6(*host),
            _ => false,
        }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Domain(domain) => f.write_str(domain),
            Self::Subdomains(domain) => write!(f, "*.{domain}"),
            Self::Address(IpAddr::V4(ip)) => write!(f, "{ip}"),
            Self::Address(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
        }
    }
}

fn is_dot_suffix(host: &str, entry: &str) -> bool {
    host.strip_suffix(entry)
        .is_some_and(|head| head.ends_with('.'))
}

/// seed 001: "config entries are normalized the same way a host is", so
/// `https://api.github.com/` means `api.github.com`. The entry goes through the same URL parser
/// as the requests it will be compared with (lowercase, IDNA, IPv4 forms, IPv6 brackets).
fn normalize_host(entry: &str) -> Result<Host<String>, String> {
    if entry.is_empty() {
        return Err(
            "it is empty; write a host such as example.com, or remove the entry".to_owned(),
        );
    }
    // A bare IPv6 address has no brackets, so it cannot be read as a URL authority.
    if let Ok(ip) = entry.parse::<Ipv6Addr>() {
        return Ok(Host::Ipv6(ip));
    }
    let as_url = if entry.contains("://") {
        entry.to_owned()
    } else {
        format!("http://{entry}")
    };
    let url = Url::parse(&as_url).map_err(|e| e.to_string())?;
    // Other schemes' hosts are not normalised (nor lowercased) the way http's are.
    if !matches!(url.scheme(), "http" | "https") {
        return Err("a URL entry must be http or https".to_owned());
    }
    url.host()
        .map(|host| host.to_owned())
        .ok_or_else(|| "it names no host".to_owned())
}

/// How a label is written, for every refusal of one.
const LABEL_RULE: &str =
    "a label is 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen";

/// `domain` (as the URL parser left it: lowercase, IDNA applied) as an allowlist entry, or why
/// it is not a host name. The URL parser accepts what browsers accept (`.a.com`, `a..b`, `-`,
/// `a_b`), but no server answers to such a name: an entry spelled so is a mistake that would
/// load as a grant reaching nothing it meant, and seed 001 makes a grant that does not do what
/// was asked a load error. The rules are RFC 1123's: labels of letters, digits and hyphens, no
/// hyphen first or last, 1 to 63 characters each, at most 253 in all.
///
/// A single trailing dot is the fully qualified spelling of the same name (`example.com.` is
/// `example.com`), so it is accepted and dropped: the author gets the host they meant.
fn check_host_name(domain: &str) -> Result<String, String> {
    if domain.starts_with('.') {
        return Err(
            "it starts with a dot; write example.com for the host and its subdomains, or \
             *.example.com for its subdomains only"
                .to_owned(),
        );
    }
    let name = domain.strip_suffix('.').unwrap_or(domain);
    if name.len() > 253 {
        return Err(format!(
            "it is {} characters long, over the limit of 253 for a host name",
            name.len()
        ));
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err(format!("it has two dots in a row; {LABEL_RULE}"));
        }
        if let Some(c) = label
            .chars()
            .find(|c| !c.is_ascii_alphanumeric() && *c != '-')
        {
            return Err(format!("label \"{label}\" contains \"{c}\"; {LABEL_RULE}"));
        }
        if label.starts_with('-') {
            return Err(format!(
                "label \"{label}\" starts with a hyphen; {LABEL_RULE}"
            ));
        }
        if label.ends_with('-') {
            return Err(format!(
                "label \"{label}\" ends with a hyphen; {LABEL_RULE}"
            ));
        }
        if label.len() > 63 {
            return Err(format!(
                "label \"{label}\" is {} characters long; {LABEL_RULE}",
                label.len()
            ));
        }
    }
    Ok(name.to_owned())
}

/// The checks of the network gate, without the HTTP client: what a plugin's grants allow, and
/// nothing else. The conformance runner uses it alone (no request is sent).
#[derive(Debug, Clone)]
pub struct NetworkPolicy {
    allow_network: bool,
    allowlist: Vec<HostPattern>,
    trust: PluginKind,
}

impl NetworkPolicy {
    /// Reads `allow_network` and `url_allowlist`. An entry in none of the three spellings is a
    /// load error, even with `allow_network` off: a misspelled grant must not pass unnoticed.
    pub fn new(plugin_id: &str, grants: &Grants, trust: PluginKind) -> Result<Self, GrantError> {
        let allowlist = grants
            .url_allowlist
            .iter()
            .map(|entry| HostPattern::parse(plugin_id, entry))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            allow_network: grants.allow_network,
            allowlist,
            trust,
        })
    }

    /// The allowlist as the grant row shows it: `*` when any entry is a star, since a star
    /// covers everything the other entries name.
    pub(crate) fn describe_allowlist(&self) -> Option<String> {
        if self.allowlist.is_empty() {
            None
        } else if self.allowlist.contains(&HostPattern::Any) {
            Some("*".to_owned())
        } else {
            let hosts: Vec<String> = self.allowlist.iter().map(ToString::to_string).collect();
            Some(hosts.join(", "))
        }
    }

    pub(crate) fn reaches_anything(&self) -> bool {
        self.allow_network && !self.allowlist.is_empty()
    }

    pub(crate) fn allows_any_host(&self) -> bool {
        self.allow_network && self.allowlist.contains(&HostPattern::Any)
    }

    /// Decides whether `raw` may be fetched, in seed 001's order: the switch, then the
    /// allowlist (empty, scheme, host), then — for community and remote plugins — an IP-literal
    /// host's address. Returns the parsed URL to send, or the `error: ` string.
    pub fn check(&self, raw: &str) -> Result<Url, String> {
        if !self.allow_network {
            // seed 001: checking the allowlist first would send an author to the wrong knob.
            return Err(denied("network access", "allow_network"));
        }
        let add_it = " — add its host to url_allowlist in this plugin's grants";
        if self.allowlist.is_empty() {
            // seed 001: an empty allowlist denies everything; allow_network alone is off.
            return Err(not_permitted(
                raw,
                "an empty allowlist denies everything",
                add_it,
            ));
        }
        let Ok(url) = Url::parse(raw) else {
            return Err(not_permitted(raw, "not an absolute http or https URL", ""));
        };
        // seed 001: http/https only, or the network grant becomes a file read past allow_fs.
        if !matches!(url.scheme(), "http" | "https") {
            return Err(not_permitted(
                raw,
                "only http and https URLs can be fetched",
                "",
            ));
        }
        let Some(host) = url.host() else {
            return Err(not_permitted(raw, "not an absolute http or https URL", ""));
        };
        if !self.allowlist.iter().any(|pattern| pattern.matches(&host)) {
            let reason = format!("host \"{host}\" is not in url_allowlist");
            return Err(not_permitted(raw, &reason, add_it));
        }
        if self.trust.guards_addresses() {
            let literal = match host {
                Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
                Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
                Host::Domain(_) => None,
            };
            if let Some(ip) = literal.filter(|ip| is_private_or_local(*ip)) {
                return Err(format!(
                    "error: {ip} is a private or local address, which community and remote \
                     plugins may not reach"
                ));
            }
        }
        Ok(url)
    }
}

fn not_permitted(raw: &str, reason: &str, hint: &str) -> String {
    format!("error: url_allowlist does not permit {raw} ({reason}){hint}")
}

/// The hosts a conversation's scope names (seed 003), written as url_allowlist entries are and
/// matched the same way (seed 001 rule 5: the host, or a subdomain at a dot boundary).
#[derive(Debug, Clone)]
pub(crate) struct HostScope {
    /// An entry in none of the spellings matches nothing: a scope fails closed.
    patterns: Vec<HostPattern>,
}

impl HostScope {
    pub(crate) fn new(entries: &[String]) -> Self {
        Self {
            patterns: entries
                .iter()
                .filter_map(|e| HostPattern::read(e).ok())
                .collect(),
        }
    }

    /// Whether the host of `url`, parsed once and sent as it is, is in the scope.
    pub(crate) fn admits(&self, url: &Url) -> bool {
        url.host()
            .is_some_and(|host| self.patterns.iter().any(|p| p.matches(&host)))
    }
}

/// Why `entry` cannot be a host of a conversation's scope, or `Ok` when it can be: the
/// spellings of url_allowlist (`example.com`, `*.example.com`, an address, `*`).
pub fn check_scope_host(entry: &str) -> Result<(), String> {
    match HostPattern::read(entry) {
        Ok(_) => Ok(()),
        Err(BadEntry::MisplacedWildcard) => Err(format!(
            "\"{}\" puts a star somewhere other than a leading \"*.\" or a lone \"*\"; write \
             example.com (the host and its subdomains), *.example.com (subdomains only) or * \
             (any host)",
            entry.trim()
        )),
        Err(BadEntry::NotAHost(reason)) => Err(format!(
            "\"{}\" is not a host name ({reason})",
            entry.trim()
        )),
    }
}

/// DESIGN.md §5: whether a community or remote plugin is refused this address. Judged by the
/// tables below, first match deciding; an IPv6 address in none of them is refused unless it is
/// global unicast (2000::/3, the only IPv6 space IANA has allocated for it).
fn is_private_or_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_or_local_v4(v4),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let row = SPECIAL_V6
                .iter()
                .find(|(net, len, _, _)| in_prefix(bits, u128::from(*net), *len, 128));
            match row {
                Some((_, _, V6::Refused, _)) => true,
                // Truncation keeps exactly the 32 bits the shift brought down.
                Some((_, _, V6::CarriesIpv4 { shift }, _)) => {
                    is_private_or_local_v4(Ipv4Addr::from((bits >> shift) as u32))
                }
                None => !in_prefix(bits, 0x2000 << 112, 3, 128),
            }
        }
    }
}

fn is_private_or_local_v4(ip: Ipv4Addr) -> bool {
    let bits = u128::from(u32::from(ip));
    REFUSED_V4
        .iter()
        .any(|(net, len, _)| in_prefix(bits, u128::from(u32::from(*net)), *len, 32))
}

/// Whether the `width`-bit address `bits` lies in `net/len`.
fn in_prefix(bits: u128, net: u128, len: u8, width: u32) -> bool {
    let shift = width - u32::from(len);
    bits.checked_shr(shift) == net.checked_shr(shift)
}

/// How an IPv6 block of [`SPECIAL_V6`] is judged.
enum V6 {
    Refused,
    /// The block carries an IPv4 address (the 32 bits `shift` bits up from the bottom) that
    /// its traffic is translated or tunnelled to, so it is refused exactly when that is.
    CarriesIpv4 {
        shift: u32,
    },
}

/// The IPv4 blocks a community or remote plugin may not reach (DESIGN.md §5): every block of
/// the IANA IPv4 Special-Purpose Address Registry
/// (https://www.iana.org/assignments/iana-ipv4-special-registry) whose "Globally Reachable" is
/// False, plus multicast (IANA IPv4 Multicast Address Space Registry) and the deprecated 6to4
/// relay anycast block. The registry marks 192.0.0.9 (PCP) and 192.0.0.10 (TURN) reachable;
/// they are refused with their /24 all the same, since anycast is answered by the nearest
/// server, which is typically the user's own router.
#[rustfmt::skip] // a table: one block per line reads as the registry does
const REFUSED_V4: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0),      8,  "\"this network\" (0.0.0.0 reaches loopback)"),
    (Ipv4Addr::new(10, 0, 0, 0),     8,  "private-use"),
    (Ipv4Addr::new(100, 64, 0, 0),   10, "shared address space: the carrier's own network"),
    (Ipv4Addr::new(127, 0, 0, 0),    8,  "loopback"),
    (Ipv4Addr::new(169, 254, 0, 0),  16, "link-local, cloud metadata endpoints"),
    (Ipv4Addr::new(172, 16, 0, 0),   12, "private-use"),
    (Ipv4Addr::new(192, 0, 0, 0),    24, "IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0),    24, "documentation (TEST-NET-1)"),
    (Ipv4Addr::new(192, 88, 99, 0),  24, "deprecated 6to4 relay anycast"),
    (Ipv4Addr::new(192, 168, 0, 0),  16, "private-use"),
    (Ipv4Addr::new(198, 18, 0, 0),   15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation (TEST-NET-2)"),
    (Ipv4Addr::new(203, 0, 113, 0),  24, "documentation (TEST-NET-3)"),
    (Ipv4Addr::new(224, 0, 0, 0),    4,  "multicast"),
    (Ipv4Addr::new(240, 0, 0, 0),    4,  "reserved, and 255.255.255.255 limited broadcast"),
];

/// The IPv6 blocks judged specially (DESIGN.md §5): every block of the IANA IPv6
/// Special-Purpose Address Registry
/// (https://www.iana.org/assignments/iana-ipv6-special-registry) whose "Globally Reachable" is
/// False, or N/A as for Teredo, plus multicast and the deprecated site-local block — except the
/// forms that carry an IPv4 address, which are judged by it: IPv4-mapped (a dual-stack socket
/// connects to the IPv4 address itself), NAT64's well-known prefix (the carrier translates it
/// to the IPv4 address; on IPv6-only mobile networks public hosts are reached this way) and
/// 6to4. The registry's reachable exceptions inside 2001::/23 (PCP and TURN anycast, AMT,
/// AS112, ORCHIDv2, DET) are refused with it: none serves HTTP to a plugin, and anycast is
/// answered by the nearest server.
#[rustfmt::skip] // a table: one block per line reads as the registry does
const SPECIAL_V6: &[(Ipv6Addr, u8, V6, &str)] = &[
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96, V6::CarriesIpv4 { shift: 0 },  "IPv4-mapped"),
    (Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96, V6::CarriesIpv4 { shift: 0 }, "NAT64"),
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, V6::Refused, "local-use NAT64"),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0),       96, V6::Refused, "::, ::1, IPv4-compatible"),
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),   64, V6::Refused, "discard-only"),
    (Ipv6Addr::new(0x100, 0, 0, 1, 0, 0, 0, 0),   64, V6::Refused, "dummy prefix"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),  23, V6::Refused, "IETF: Teredo, benchmarking"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, V6::Refused, "documentation"),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0),  16, V6::CarriesIpv4 { shift: 80 }, "6to4"),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),  20, V6::Refused, "documentation"),
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0),  16, V6::Refused, "segment routing SIDs"),
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),  7,  V6::Refused, "unique-local"),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),  10, V6::Refused, "link-local"),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),  10, V6::Refused, "deprecated site-local"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),  8,  V6::Refused, "multicast"),
];

/// A name whose every address the gate refused; found again in reqwest's error chain so the
/// plugin gets the gate's own message.
#[derive(Debug)]
struct AddressRefused {
    host: String,
    addr: IpAddr,
}

impl fmt::Display for AddressRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error: {} resolves to a private or local address ({}), which community and remote \
             plugins may not reach",
            self.host, self.addr
        )
    }
}

impl Error for AddressRefused {}

/// A resolver that resolves once, keeps what `check` lets through of the addresses, and hands
/// the connector only those, so there is no second lookup an attacker's DNS could answer
/// differently.
struct CheckingResolver<E>(fn(String, Vec<SocketAddr>) -> Result<Vec<SocketAddr>, E>);

impl<E: Error + Send + Sync + 'static> Resolve for CheckingResolver<E> {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let check = self.0;
        Box::pin(async move {
            let resolved = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let checked = check(host, resolved)?;
            Ok(Box::new(checked.into_iter()) as Addrs)
        })
    }
}

/// The resolved addresses a community or remote plugin may connect to: the public ones. A
/// name with none left is refused, naming the first address that was dropped.
fn checked_addresses(
    host: String,
    resolved: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, AddressRefused> {
    let (allowed, refused): (Vec<SocketAddr>, Vec<SocketAddr>) = resolved
        .into_iter()
        .partition(|addr| !is_private_or_local(addr.ip()));
    match (allowed.is_empty(), refused.first()) {
        (true, Some(first)) => Err(AddressRefused {
            host,
            addr: first.ip(),
        }),
        _ => Ok(allowed),
    }
}

/// `host-http-get`: the policy plus the HTTP client that sends what the policy allowed.
#[derive(Debug)]
pub struct NetworkGate {
    policy: NetworkPolicy,
    /// Built only when `allow_network` is on: a plugin without the grant never needs one.
    client: Option<reqwest::Client>,
    timeout: Duration,
}

impl NetworkGate {
    /// seed 001: "a plugin must not hang a turn".
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
    /// seed 001: "sized to the guest-side arena".
    pub const BODY_CAP: usize = MIB;

    pub fn new(plugin_id: &str, grants: &Grants, trust: PluginKind) -> Result<Self, GrantError> {
        Self::with_timeout(plugin_id, grants, trust, Self::DEFAULT_TIMEOUT)
    }

    /// As [`NetworkGate::new`] with another timeout for the whole request, body included.
    pub fn with_timeout(
        plugin_id: &str,
        grants: &Grants,
        trust: PluginKind,
        timeout: Duration,
    ) -> Result<Self, GrantError> {
        let policy = NetworkPolicy::new(plugin_id, grants, trust)?;
        let client = if grants.allow_network {
            Some(build_client(trust).map_err(|e| GrantError::HttpClient {
                plugin: plugin_id.to_owned(),
                reason: error_chain(&e),
            })?)
        } else {
            None
        };
        Ok(Self {
            policy,
            client,
            timeout,
        })
    }

    /// Fetches `url` and returns its body, or an `error: ` string (seed 001: in band). Nothing
    /// is sent unless every check passed.
    pub async fn get(&self, url: &str) -> String {
        self.request(&reqwest::Method::GET, url, &[], None)
            .await
            .unwrap_or_else(|refusal| refusal)
    }

    /// Sends `method url` with `headers` and an optional JSON `body`, under every check `get`
    /// makes (the switch, the allowlist, the address guard, no redirects, the timeout, the body
    /// cap). The body, or the `error: ` string. A refusal never repeats a header: a header may
    /// carry a secret.
    pub async fn request(
        &self,
        method: &reqwest::Method,
        url: &str,
        headers: &[(String, String)],
        body: Option<&serde_json::Value>,
    ) -> Result<String, String> {
        self.request_within(&CallScope::unbounded(), method, url, headers, body)
            .await
    }

    /// [`NetworkGate::request`] for one call, also bounded by the calling conversation's
    /// hosts (seed 003): after the plugin's own checks (which name the grant to change) and
    /// before anything is sent.
    pub(crate) async fn request_within(
        &self,
        scope: &CallScope,
        method: &reqwest::Method,
        url: &str,
        headers: &[(String, String)],
        body: Option<&serde_json::Value>,
    ) -> Result<String, String> {
        let parsed = self.policy.check(url)?;
        scope.check_url(&parsed)?;
        // `check` refuses everything while allow_network is off, and the client exists
        // whenever it is on.
        let Some(client) = &self.client else {
            return Err(denied("network access", "allow_network"));
        };
        let mut builder = client.request(method.clone(), parsed);
        for (name, value) in headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if let Some(body) = body {
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string());
        }
        match tokio::time::timeout(self.timeout, fetch(builder, url)).await {
            Ok(answer) => answer,
            Err(_elapsed) => Err(format!(
                "error: request to {url} timed out after {}",
                human_duration(self.timeout)
            )),
        }
    }
}

/// The HTTP client a plugin of `trust` gets — no redirects, no proxy, and for community and
/// remote plugins the checked resolver — for a client that is not the gate's own request path
/// (the MCP transport of a remote server).
pub(crate) fn guarded_client(trust: PluginKind) -> reqwest::Result<reqwest::Client> {
    build_client(trust)
}

/// The HTTP client of an MCP server on this machine, for development only (the CLI): no
/// redirects, no proxy, and a resolver that connects only when every address the name resolves
/// to is loopback, so a `localhost` mapped elsewhere is refused.
pub(crate) fn loopback_client() -> reqwest::Result<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(CheckingResolver(loopback_only)))
        .build()
}

/// A name that resolves to an address off this machine, where only loopback was accepted.
#[derive(Debug)]
struct NotLoopback {
    host: String,
    addr: IpAddr,
}

impl fmt::Display for NotLoopback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} resolves to {}, which is not on this machine; a development server is reached \
             only at a loopback address (127.0.0.1 or [::1])",
            self.host, self.addr
        )
    }
}

impl Error for NotLoopback {}

/// `resolved` when every address is loopback (and there is one); else the first that is not.
fn loopback_only(host: String, resolved: Vec<SocketAddr>) -> Result<Vec<SocketAddr>, NotLoopback> {
    match resolved.iter().find(|a| !a.ip().is_loopback()) {
        Some(off) => Err(NotLoopback {
            host,
            addr: off.ip(),
        }),
        None => Ok(resolved),
    }
}

/// Whether `ip` is one a community or remote plugin may not reach (DESIGN.md §5).
pub(crate) fn refused_address(ip: IpAddr) -> bool {
    is_private_or_local(ip)
}

fn build_client(trust: PluginKind) -> reqwest::Result<reqwest::Client> {
    // reqwest is built without a crypto provider (its default, aws-lc-rs, needs cmake and a
    // heavy C build); ring is installed as the process default. An Err only says a provider is
    // already installed, which serves as well.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = reqwest::Client::builder()
        // seed 001: not following the hop IS the control; nothing re-checks a Location header.
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve the name itself, out of the address check's reach.
        .no_proxy();
    let builder = if trust.guards_addresses() {
        // A community or remote plugin's client: public addresses only.
        builder.dns_resolver(Arc::new(CheckingResolver(checked_addresses)))
    } else {
        builder
    };
    builder.build()
}

/// Sends the request for the plugin's `raw` URL and reads the body under the cap.
async fn fetch(request: reqwest::RequestBuilder, raw: &str) -> Result<String, String> {
    let transport = |e: reqwest::Error| match find_refusal(&e) {
        Some(refused) => refused.to_string(),
        // reqwest's own top message only repeats the URL; the cause is in its sources.
        None => format!(
            "error: could not fetch {raw}: {}",
            error_chain(e.source().unwrap_or(&e))
        ),
    };
    let mut response = request.send().await.map_err(transport)?;
    let status = response.status();
    if !status.is_success() {
        // seed 001: a 3xx comes back as `error: HTTP 30x` rather than being followed.
        return Err(format!("error: HTTP {}", status.as_u16()));
    }
    let too_big = || {
        format!(
            "error: response body exceeds 1 MiB (limit {} bytes)",
            NetworkGate::BODY_CAP
        )
    };
    if response
        .content_length()
        .is_some_and(|n| n > NetworkGate::BODY_CAP as u64)
    {
        return Err(too_big());
    }
    // Streamed, so a body past the cap is dropped at the cap rather than buffered first.
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > NetworkGate::BODY_CAP {
            return Err(too_big());
        }
        body.extend_from_slice(&chunk);
    }
    decode_capped(&body, NetworkGate::BODY_CAP).map_err(|decoded_len| {
        format!(
            "{} once its invalid UTF-8 is replaced ({decoded_len} bytes)",
            too_big()
        )
    })
}

fn find_refusal<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a AddressRefused> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(refused) = error.downcast_ref::<AddressRefused>() {
            return Some(refused);
        }
        next = error.source();
    }
    None
}

/// The address guard's refusal among `error`'s causes, in words (without `error: `).
pub(crate) fn address_refusal(error: &(dyn Error + 'static)) -> Option<String> {
    let refused = find_refusal(error)?.to_string();
    Some(
        refused
            .strip_prefix("error: ")
            .unwrap_or(&refused)
            .to_owned(),
    )
}

/// An error with its causes, `outer: inner: …`.
pub(crate) fn error_chain(error: &(dyn Error + 'static)) -> String {
    let mut parts = vec![error.to_string()];
    let mut next = error.source();
    while let Some(error) = next {
        parts.push(error.to_string());
        next = error.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allowlist: &[&str], trust: PluginKind) -> NetworkPolicy {
        let grants = Grants {
            allow_network: true,
            url_allowlist: allowlist.iter().map(|s| s.to_string()).collect(),
            ..Grants::default()
        };
        NetworkPolicy::new("probe", &grants, trust).unwrap()
    }

    fn verdict(allowlist: &[&str], url: &str) -> Result<String, String> {
        policy(allowlist, PluginKind::Bundled)
            .check(url)
            .map(String::from)
    }

    #[test]
    fn switch_off_is_reported_before_the_allowlist() {
        let grants = Grants {
            url_allowlist: vec![],
            ..Grants::default()
        };
        let policy = NetworkPolicy::new("probe", &grants, PluginKind::Bundled).unwrap();
        assert_eq!(
            policy.check("https://api.github.com/").unwrap_err(),
            "error: network access denied (set allow_network = true in this plugin's grants)"
        );
    }

    #[test]
    fn an_empty_allowlist_denies_everything() {
        assert_eq!(
            verdict(&[], "https://api.github.com/").unwrap_err(),
            "error: url_allowlist does not permit https://api.github.com/ (an empty allowlist \
             denies everything) — add its host to url_allowlist in this plugin's grants"
        );
    }

    #[test]
    fn a_host_off_the_list_is_named_with_the_knob() {
        assert_eq!(
            verdict(&["api.github.com"], "https://evil.com/?x=api.github.com").unwrap_err(),
            "error: url_allowlist does not permit https://evil.com/?x=api.github.com (host \
             \"evil.com\" is not in url_allowlist) — add its host to url_allowlist in this \
             plugin's grants"
        );
    }

    #[test]
    fn contains_bypasses_are_refused() {
        for url in [
            "https://evil.com/?x=api.github.com",
            "https://api.github.com@evil.com/",
            "https://api.github.com.evil.com/",
        ] {
            assert!(verdict(&["api.github.com"], url).is_err(), "{url}");
        }
    }

    #[test]
    fn dot_boundary_rows() {
        assert!(verdict(&["github.com"], "https://github.com/").is_ok());
        assert!(verdict(&["github.com"], "https://api.github.com/").is_ok());
        assert!(verdict(&["github.com"], "https://evilgithub.com/").is_err());
        assert!(verdict(&["github.com"], "https://github.com.evil.com/").is_err());
    }

    #[test]
    fn only_http_and_https_with_a_scheme() {
        let scheme = "error: url_allowlist does not permit file:///etc/passwd (only http and \
                      https URLs can be fetched)";
        assert_eq!(verdict(&["*"], "file:///etc/passwd").unwrap_err(), scheme);
        assert_eq!(
            verdict(&["api.github.com"], "api.github.com/x").unwrap_err(),
            "error: url_allowlist does not permit api.github.com/x (not an absolute http or \
             https URL)"
        );
        assert!(verdict(&["api.github.com"], "HTTPS://API.GITHUB.COM/x").is_ok());
    }

    #[test]
    fn ports_do_not_participate_and_ipv6_literals_are_hosts() {
        assert!(verdict(&["127.0.0.1"], "http://127.0.0.1:8899/x").is_ok());
        assert!(verdict(&["[::1]"], "http://[::1]:8080/").is_ok());
        assert!(verdict(&["::1"], "http://[::1]/").is_ok());
        assert!(verdict(&["::1"], "http://[::2]/").is_err());
    }

    #[test]
    fn an_address_entry_matches_only_itself() {
        assert!(verdict(&["0.0.1"], "http://127.0.0.1/").is_err());
        assert!(verdict(&["0.0.0.1"], "http://127.0.0.1/").is_err());
    }

    #[test]
    fn the_three_spellings() {
        assert!(verdict(&["*.example.com"], "https://a.example.com/").is_ok());
        assert!(verdict(&["*.example.com"], "https://example.com/").is_err());
        assert!(verdict(&["*"], "http://anything.test/").is_ok());
        assert!(verdict(&["example.com"], "https://example.com:444/").is_ok());
    }

    #[test]
    fn a_misplaced_star_is_a_load_error() {
        let grants = Grants {
            url_allowlist: vec!["api.*.com".into()],
            ..Grants::default()
        };
        let err = NetworkPolicy::new("probe", &grants, PluginKind::Bundled).unwrap_err();
        assert_eq!(
            err,
            GrantError::MisplacedWildcard {
                plugin: "probe".into(),
                entry: "api.*.com".into()
            }
        );
        assert!(
            err.to_string()
                .starts_with("plugin \"probe\": url_allowlist entry \"api.*.com\"")
        );
    }

    #[test]
    fn entries_are_normalised_like_hosts() {
        let policy = policy(
            &[
                "https://API.GitHub.com/",
                "127.0.0.1:8080",
                "*.Example.COM",
                "::1",
            ],
            PluginKind::Bundled,
        );
        assert_eq!(
            policy.describe_allowlist().unwrap(),
            "api.github.com, 127.0.0.1, *.example.com, [::1]"
        );
        assert!(policy.check("https://api.github.com/").is_ok());
    }

    #[test]
    fn entries_that_name_no_host_are_load_errors() {
        for entry in [
            "",
            "file:///etc",
            "foo://Example.com",
            "*.127.0.0.1",
            "http://",
        ] {
            let grants = Grants {
                url_allowlist: vec![entry.into()],
                ..Grants::default()
            };
            let err = NetworkPolicy::new("probe", &grants, PluginKind::Bundled).unwrap_err();
            assert!(matches!(err, GrantError::NotAHost { .. }), "{entry}: {err}");
        }
    }

    fn load_error(entry: &str) -> String {
        let grants = Grants {
            url_allowlist: vec![entry.into()],
            ..Grants::default()
        };
        NetworkPolicy::new("probe", &grants, PluginKind::Bundled)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn entries_that_can_never_match_are_load_errors_saying_how_to_write_them() {
        let labels = "a label is 1 to 63 letters, digits and hyphens, not starting or ending \
                      with a hyphen";
        let long_label = "a".repeat(64);
        let long_name = format!("{}.com", vec!["a".repeat(62); 4].join("."));
        for (entry, reason) in [
            (
                "",
                "it is empty; write a host such as example.com, or remove the entry".to_owned(),
            ),
            (
                ".example.com",
                "it starts with a dot; write example.com for the host and its subdomains, or \
                 *.example.com for its subdomains only"
                    .to_owned(),
            ),
            ("a..b", format!("it has two dots in a row; {labels}")),
            (
                "example.com..",
                format!("it has two dots in a row; {labels}"),
            ),
            ("-", format!("label \"-\" starts with a hyphen; {labels}")),
            (
                "-a.com",
                format!("label \"-a\" starts with a hyphen; {labels}"),
            ),
            (
                "a-.com",
                format!("label \"a-\" ends with a hyphen; {labels}"),
            ),
            (
                "*.-a.com",
                format!("label \"-a\" starts with a hyphen; {labels}"),
            ),
            ("a_b.com", format!("label \"a_b\" contains \"_\"; {labels}")),
            ("a!.com", format!("label \"a!\" contains \"!\"; {labels}")),
            (
                &format!("{long_label}.com"),
                format!("label \"{long_label}\" is 64 characters long; {labels}"),
            ),
            (
                &long_name,
                "it is 255 characters long, over the limit of 253 for a host name".to_owned(),
            ),
            (
                "*.",
                "\"*.\" must be followed by a domain name, as in *.example.com".to_owned(),
            ),
            (
                ".",
                "it starts with a dot; write example.com for the host and its subdomains, or \
                 *.example.com for its subdomains only"
                    .to_owned(),
            ),
        ] {
            assert_eq!(
                load_error(entry),
                format!(
                    "plugin \"probe\": url_allowlist entry \"{entry}\" is not a host name \
                     ({reason})"
                ),
                "{entry}"
            );
        }
    }

    #[test]
    fn a_trailing_dot_names_the_same_host() {
        let policy = policy(&["example.com.", "*.pku.edu.cn."], PluginKind::Bundled);
        assert_eq!(
            policy.describe_allowlist().unwrap(),
            "example.com, *.pku.edu.cn"
        );
        assert!(policy.check("https://example.com/").is_ok());
        assert!(policy.check("https://www.pku.edu.cn/").is_ok());
    }

    #[test]
    fn names_at_the_length_limits_load() {
        let label = "a".repeat(63);
        // 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 characters.
        let name = format!("{label}.{label}.{label}.{}", "b".repeat(61));
        assert_eq!(name.len(), 253);
        let policy = policy(
            &[
                &format!("{label}.com"),
                &name,
                "xn--bcher-kva.de",
                "a-b.c0m",
            ],
            PluginKind::Bundled,
        );
        assert!(policy.check(&format!("https://{name}/")).is_ok());
        assert!(policy.check("https://bücher.de/").is_ok());
    }

    #[test]
    fn community_plugins_may_not_name_private_literals() {
        let community = policy(&["*"], PluginKind::Community);
        assert_eq!(
            community.check("http://127.0.0.1:8080/").unwrap_err(),
            "error: 127.0.0.1 is a private or local address, which community and remote plugins \
             may not reach"
        );
        for url in [
            "http://10.1.2.3/",
            "http://0x7f.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::1]/",
            "http://[::ffff:192.168.0.1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://0.0.0.0/",
            "http://100.64.0.1/",
        ] {
            assert!(community.check(url).is_err(), "{url}");
        }
        assert!(community.check("http://93.184.215.14/").is_ok());
        assert!(community.check("http://[2606:4700::1111]/").is_ok());
        assert!(
            policy(&["*"], PluginKind::Official)
                .check("http://127.0.0.1/")
                .is_ok()
        );
    }

    #[test]
    fn every_special_purpose_block_is_refused_and_public_addresses_pass() {
        // One address in each block of the table, then the ways an IPv6 address can carry a
        // refused IPv4 address.
        for refused in [
            "0.1.2.3",
            "0.0.0.0",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.1",
            "192.0.0.8",
            "192.0.0.9",
            "192.0.0.170",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::a00:1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:198.18.0.1",
            "::ffff:192.0.0.170",
            "64:ff9b::a00:1",
            "64:ff9b::7f00:1",
            "64:ff9b::c612:1",
            "64:ff9b:1::808:808",
            "100::1",
            "100:0:0:1::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:2::1",
            "2001:10::1",
            "2001:db8::1",
            "2002:a00:1::1",
            "2002:7f00:1::",
            "2002:c612::1",
            "3fff::1",
            "5f00::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "4000::1",
        ] {
            assert!(
                is_private_or_local(refused.parse().unwrap()),
                "{refused} must be refused"
            );
        }
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "192.0.1.1",
            "192.31.196.1",
            "198.20.0.1",
            "223.255.255.255",
            "2001:4860:4860::8888",
            "2606:4700::1111",
            "2620:4f:8000::1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(
                !is_private_or_local(public.parse().unwrap()),
                "{public} must pass"
            );
        }
    }

    #[test]
    fn a_resolved_name_keeps_only_its_public_addresses() {
        let addrs = |list: &[&str]| -> Vec<SocketAddr> {
            list.iter().map(|a| a.parse().unwrap()).collect()
        };
        let mixed = addrs(&["127.0.0.1:0", "93.184.215.14:0", "[fd00::1]:0"]);
        assert_eq!(
            checked_addresses("mixed.test".into(), mixed).unwrap(),
            addrs(&["93.184.215.14:0"])
        );
        let private = addrs(&["[::1]:0", "127.0.0.1:0"]);
        assert_eq!(
            checked_addresses("localhost".into(), private)
                .unwrap_err()
                .to_string(),
            "error: localhost resolves to a private or local address (::1), which community and \
             remote plugins may not reach"
        );
    }

    #[test]
    fn a_development_localhost_is_accepted_only_when_every_address_is_loopback() {
        let addrs = |list: &[&str]| -> Vec<SocketAddr> {
            list.iter().map(|a| a.parse().unwrap()).collect()
        };
        let local = addrs(&["[::1]:0", "127.0.0.1:0"]);
        assert_eq!(
            loopback_only("localhost".into(), local.clone()).unwrap(),
            local
        );
        assert_eq!(
            loopback_only("localhost".into(), addrs(&["127.0.0.1:0", "10.0.0.7:0"]))
                .unwrap_err()
                .to_string(),
            "localhost resolves to 10.0.0.7, which is not on this machine; a development server \
             is reached only at a loopback address (127.0.0.1 or [::1])"
        );
    }

    #[test]
    fn the_default_timeout_is_ten_seconds() {
        let gate = NetworkGate::new("probe", &Grants::default(), PluginKind::Bundled).unwrap();
        assert_eq!(gate.timeout, Duration::from_secs(10));
        assert!(gate.client.is_none());
    }
}
