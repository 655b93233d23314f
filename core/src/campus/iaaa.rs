//! IAAA's calls and each service's exchange of an IAAA token for its session, as
//! `../shared/campus/SERVICES.md` §1–3 describe them. Each wire fact sits in one function, so a
//! change in a real service is one edit here.

use base64::Engine as _;
use rsa::Generate as _;
use rsa::PublicKey;
use rsa::pkcs8::DecodePublicKey;
use serde_json::Value;
use url::Url;

use super::wire::{self, IAAA, Origin, Service};
use super::{CampusError, Session};

const IAAA_BASE: &str = "https://iaaa.pku.edu.cn/iaaa";
const REFERER: &str = "https://iaaa.pku.edu.cn/iaaa/oauth.jsp";

/// The second factor IAAA named.
pub(super) enum Mode {
    Sms,
    Otp,
}

/// A second factor's code, as the student typed it.
pub(super) enum Code {
    Sms(String),
    Otp(String),
}

/// An IAAA sign-in's one-use token, and the device-trust cookie IAAA set, if it did.
pub(super) struct Signed {
    pub token: String,
    pub trust: Option<String>,
}

/// This install's Treehole device (SERVICES.md §7): a random v4 UUID, made once and kept. The
/// `uuid` of Treehole's sign-in URLs is its last group; the `uuid` header carries all of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Device(String);

impl Device {
    /// A new one, from the system's random numbers.
    pub fn new() -> Result<Self, CampusError> {
        let mut bytes = <[u8; 16]>::try_generate().map_err(|e| {
            CampusError::Chain(format!(
                "the phone gave no random numbers for Treehole's device id ({e})"
            ))
        })?;
        // RFC 9562: version 4, variant 10.
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Self(format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )))
    }

    /// One kept earlier, if it has the shape of one.
    pub fn parse(kept: &str) -> Option<Self> {
        let groups: Vec<&str> = kept.split('-').collect();
        let shaped = groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
            && groups.iter().all(|g| {
                g.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            });
        shaped.then(|| Self(kept.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 12 hex digits of the sign-in's `uuid` query.
    fn query(&self) -> &str {
        &self.0[24..]
    }

    /// The `uuid` header of every Treehole call.
    fn header(&self) -> String {
        format!("Web_PKUHOLE_2.0.0_WEB_UUID_{}", self.0)
    }
}

/// Each service's IAAA application and the page its token is spent at.
fn app(service: Service, device: &Device) -> (&'static str, String) {
    match service {
        Service::Portal | Service::Card => (
            "portal2017",
            "https://portal.pku.edu.cn/portal2017/ssoLogin.do".to_owned(),
        ),
        Service::Treehole => (
            "PKU Helper",
            format!(
                "https://treehole.pku.edu.cn/chapi/cas_iaaa_login?version=3&uuid={}&plat=web",
                device.query()
            ),
        ),
    }
}

/// IAAA's errors in the student's words (SERVICES.md §1.4).
pub(super) fn words(code: &str, msg: &str) -> String {
    let said = match code {
        "E01" => "the student id or password is wrong",
        "E02" => "the account needs activating first: activate it on the portal's web page",
        "E03" => {
            "IAAA asks for a picture captcha, which the app cannot show: sign in once on the portal's web page, then try again"
        }
        "E04" => "the SMS code is wrong or has expired: send a new one",
        "E05" => "the authenticator (手机令牌) code is wrong or missing",
        "E07" => "IAAA could not check the account: try again later",
        "E21" => "IAAA refuses this account's sign-in here",
        _ => "",
    };
    match (said, msg.is_empty()) {
        ("", true) => format!("IAAA refused the sign-in ({code})"),
        ("", false) => format!("IAAA refused the sign-in ({code}: {msg})"),
        (said, _) => format!("{said} ({code})"),
    }
}

pub(super) struct Iaaa<'a> {
    client: &'a reqwest::Client,
    origin: &'a Origin,
    trust: Option<&'a str>,
}

impl<'a> Iaaa<'a> {
    pub fn new(client: &'a reqwest::Client, origin: &'a Origin, trust: Option<&'a str>) -> Self {
        Self {
            client,
            origin,
            trust,
        }
    }

    fn request(
        &self,
        method: reqwest::Method,
        call: &str,
        query: &[(&str, &str)],
    ) -> Result<reqwest::RequestBuilder, CampusError> {
        let mut url = Url::parse(&format!("{IAAA_BASE}/{call}"))
            .map_err(|e| CampusError::Chain(e.to_string()))?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let (sent, host) = self.origin.route(&url).map_err(CampusError::Chain)?;
        let mut builder = self
            .client
            .request(method, sent)
            .header("X-Requested-With", "XMLHttpRequest")
            .header(reqwest::header::REFERER, REFERER);
        if let Some(host) = host {
            builder = builder.header(reqwest::header::HOST, host);
        }
        if let Some(trust) = self.trust {
            builder = builder.header(reqwest::header::COOKIE, format!("iaaa_trust={trust}"));
        }
        Ok(builder)
    }

    /// Sends and reads IAAA's JSON answer; HTML or a 5xx is IAAA being unavailable.
    async fn call(
        &self,
        builder: reqwest::RequestBuilder,
    ) -> Result<(Value, Vec<(String, String)>), CampusError> {
        let response = builder
            .send()
            .await
            .map_err(|e| CampusError::Unreachable(e.without_url().to_string()))?;
        let status = response.status();
        let cookies = wire::set_cookies(&response);
        let text = wire::body(response)
            .await
            .map_err(CampusError::Unreachable)?;
        match serde_json::from_str::<Value>(&text) {
            Ok(json) if status.is_success() && json.is_object() => Ok((json, cookies)),
            _ => Err(CampusError::Unreachable(format!(
                "{IAAA} answered {status} without its JSON: it may be down for maintenance; try again later"
            ))),
        }
    }

    /// A GET of one of IAAA's account checks, `call`, for `user` (SERVICES.md §1.2–3).
    async fn check(&self, call: &str, user: &str) -> Result<Value, CampusError> {
        let rand = wire::rand();
        let query = [
            ("userName", user),
            ("appId", "portal2017"),
            ("_rand", rand.as_str()),
        ];
        let (json, _) = self
            .call(self.request(reqwest::Method::GET, call, &query)?)
            .await?;
        Ok(json)
    }

    pub async fn captcha_required(&self, user: &str) -> Result<bool, CampusError> {
        Ok(self.check("isShowCode.do", user).await?["success"] == true)
    }

    /// The second factor IAAA wants for `user`, none when this device is trusted or the
    /// account has none.
    pub async fn second_factor(&self, user: &str) -> Result<Option<Mode>, CampusError> {
        let json = self.check("isMobileAuthen.do", user).await?;
        if json["isMobileAuthen"] != true {
            return Ok(None);
        }
        Ok(Some(if json["authenMode"] == "OTP" {
            Mode::Otp
        } else {
            Mode::Sms
        }))
    }

    /// Sends the SMS code; the masked phone number it went to.
    pub async fn send_sms(&self, user: &str) -> Result<String, CampusError> {
        let json = self.check("sendSMSCode.do", user).await?;
        if json["success"] != true {
            let said = json["message"].as_str().unwrap_or("");
            return Err(CampusError::Iaaa {
                code: "SMS".into(),
                message: format!("IAAA did not send the SMS code: {said}"),
            });
        }
        Ok(json["mobileMask"].as_str().unwrap_or("").to_owned())
    }

    /// IAAA's public key, and the password sealed with it (PKCS#1 v1.5, base64).
    async fn seal(&self, password: &str) -> Result<String, CampusError> {
        let (json, _) = self
            .call(self.request(reqwest::Method::GET, "getPublicKey.do", &[])?)
            .await?;
        let pem = json["key"].as_str().unwrap_or("");
        let key = PublicKey::from_public_key_pem(pem)
            .map_err(|_| CampusError::Unreachable(format!("{IAAA} sent no usable public key")))?;
        let sealed = key
            .pkcs1v15_encrypt(password.as_bytes())
            .map_err(|e| CampusError::Chain(format!("the password could not be sealed ({e})")))?;
        Ok(base64::engine::general_purpose::STANDARD.encode(sealed))
    }

    /// One IAAA sign-in, for `service`'s application.
    pub async fn sign_in(
        &self,
        service: Service,
        user: &str,
        password: &str,
        code: Option<Code>,
        device: &Device,
    ) -> Result<Signed, CampusError> {
        let sealed = self.seal(password).await?;
        let (appid, redir) = app(service, device);
        let (sms, otp) = match &code {
            Some(Code::Sms(c)) => (c.as_str(), ""),
            Some(Code::Otp(c)) => ("", c.as_str()),
            None => ("", ""),
        };
        let form = [
            ("appid", appid),
            ("userName", user),
            ("password", sealed.as_str()),
            ("randCode", ""),
            ("smsCode", sms),
            ("otpCode", otp),
            ("redirUrl", redir.as_str()),
            // Ask IAAA to trust this device, so the next service's sign-in needs no new code.
            ("remTrustChk", if code.is_some() { "true" } else { "false" }),
        ];
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let builder = self
            .request(reqwest::Method::POST, "oauthlogin.do", &[])?
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        let (json, cookies) = self.call(builder).await?;
        if json["success"] != true {
            let code = json["errors"]["code"].as_str().unwrap_or("").to_owned();
            if code == "E03" {
                return Err(CampusError::Captcha);
            }
            let message = words(&code, json["errors"]["msg"].as_str().unwrap_or(""));
            return Err(CampusError::Iaaa { code, message });
        }
        let token = json["token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| CampusError::Chain(format!("{IAAA} signed in but sent no token")))?
            .to_owned();
        let trust = cookies
            .into_iter()
            .find(|(n, _)| n == "iaaa_trust")
            .map(|(_, v)| v);
        Ok(Signed { token, trust })
    }
}

/// One hop of a chain: a GET of a campus URL, its answer read, no redirect followed.
async fn hop(
    client: &reqwest::Client,
    origin: &Origin,
    url: &Url,
    cookies: &[(String, String)],
) -> Result<reqwest::Response, CampusError> {
    let (sent, host) = origin.route(url).map_err(CampusError::Chain)?;
    let mut builder = client.get(sent);
    if let Some(host) = host {
        builder = builder.header(reqwest::header::HOST, host);
    }
    if !cookies.is_empty() {
        builder = builder.header(reqwest::header::COOKIE, wire::cookie_header(cookies));
    }
    builder
        .send()
        .await
        .map_err(|e| CampusError::Unreachable(e.without_url().to_string()))
}

/// Spends the token at the service's callback for its session.
pub(super) async fn exchange(
    client: &reqwest::Client,
    origin: &Origin,
    service: Service,
    device: &Device,
    token: &str,
) -> Result<Session, CampusError> {
    let (_, redir) = app(service, device);
    let mut url = Url::parse(&redir).map_err(|e| CampusError::Chain(e.to_string()))?;
    url.query_pairs_mut()
        .append_pair("_rand", &wire::rand())
        .append_pair("token", token);
    let response = hop(client, origin, &url, &[]).await?;
    let cookies = wire::set_cookies(&response);
    match service {
        Service::Portal | Service::Card => {
            let session = cookies
                .into_iter()
                .filter(|(n, _)| n == "SESSION")
                .collect::<Vec<_>>();
            if session.is_empty() {
                return Err(CampusError::Chain(
                    "the portal signed in but set no SESSION".into(),
                ));
            }
            Ok(Session {
                cookies: session,
                ..Session::default()
            })
        }
        Service::Treehole => {
            let to = wire::campus_location(&response).map_err(CampusError::Chain)?;
            let jwt = wire::query_param(&to, "token")
                .ok_or_else(|| CampusError::Chain("Treehole signed in but sent no token".into()))?;
            let expires_at_ms = wire::query_param(&to, "expires_in")
                .and_then(|s| s.parse::<i64>().ok())
                .map(|s| s * 1000);
            Ok(Session {
                cookies,
                bearer: Some(jwt),
                uuid: Some(device.header()),
                expires_at_ms,
            })
        }
    }
}

/// The card's session from the portal's: `redirectToCard.do` → bdcard's CAS login → the
/// `synjones-auth` token in the last `Location` (SERVICES.md §2), each hop checked to stay on
/// the campus hosts.
pub(super) async fn card_session(
    client: &reqwest::Client,
    origin: &Origin,
    portal: &Session,
) -> Result<Session, CampusError> {
    let start = Url::parse("https://portal.pku.edu.cn/portal2017/util/redirectToCard.do")
        .map_err(|e| CampusError::Chain(e.to_string()))?;
    let first = hop(client, origin, &start, &portal.cookies).await?;
    let cas = wire::campus_location(&first).map_err(CampusError::Chain)?;
    if cas.host_str() != Some(wire::CARD) {
        return Err(CampusError::Chain(
            "the portal did not hand over to the campus card; sign in again".into(),
        ));
    }
    let second = hop(client, origin, &cas, &[]).await?;
    let last = wire::campus_location(&second).map_err(CampusError::Chain)?;
    let jwt = wire::query_param(&last, "synjones-auth").ok_or_else(|| {
        CampusError::Chain(
            "the campus card signed in but its redirect carried no synjones-auth token".into(),
        )
    })?;
    Ok(Session {
        bearer: Some(jwt),
        // Clients treat the card's token as good for 24 h (SERVICES.md §2).
        expires_at_ms: None,
        ..Session::default()
    })
}
