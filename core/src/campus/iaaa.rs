//! IAAA's calls and each service's exchange of an IAAA token for its session, as
//! `../shared/campus/SERVICES.md` §1–3 describe them. Each wire fact sits in one function, so a
//! change in a real service is one edit here.

use base64::Engine as _;
use rsa::Generate as _;
use rsa::PublicKey;
use rsa::pkcs8::DecodePublicKey;
use serde_json::Value;
use url::Url;

use super::chain::{self, Ask, Walk};
use super::wire::{self, IAAA, Service};
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
        Service::Bus => ("wproc", BUS_LOGIN.to_owned()),
        Service::Course => ("blackboard", COURSE_REDIR.to_owned()),
    }
}

/// 教学网's sign-in page, where its IAAA token is spent (SERVICES.md §10: IAAA is told the
/// plain-http `redirUrl` the public clients register; the token is spent there over https), and
/// the cookie its signed-in session has.
const COURSE_REDIR: &str =
    "http://course.pku.edu.cn/webapps/bb-sso-BBLEARN/execute/authValidate/campusLogin";
const COURSE_SESSION: &str = "s_session_id";

/// The shuttle bus's sign-in page, where its IAAA token is spent, and the page it lands on
/// signed in (SERVICES.md §11).
const BUS_LOGIN: &str = "https://wproc.pku.edu.cn/site/login/cas-login?redirect_url=https://wproc.pku.edu.cn/v2/site/index";
const BUS_HOME: &str = "/v2/site/index";

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

/// A request to one of IAAA's calls, with the headers its page sends (SERVICES.md §1).
fn ask(method: reqwest::Method, call: &str, query: &[(&str, &str)]) -> Result<Ask, CampusError> {
    let mut url = Url::parse(&format!("{IAAA_BASE}/{call}"))
        .map_err(|e| CampusError::Chain(e.to_string()))?;
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    Ok(Ask {
        method,
        url,
        headers: vec![
            ("X-Requested-With", "XMLHttpRequest".to_owned()),
            ("Referer", REFERER.to_owned()),
        ],
        body: None,
    })
}

/// Sends and reads IAAA's JSON answer, its cookies kept in the walk's store (whatever IAAA
/// sets, to trust the device or bind a captcha, goes back to it: no cookie name is assumed);
/// HTML or a 5xx is IAAA being unavailable.
async fn call(walk: &mut Walk<'_>, ask: &Ask) -> Result<Value, CampusError> {
    let reply = walk.send(ask).await?;
    match serde_json::from_str::<Value>(&reply.text) {
        Ok(json) if (200..300).contains(&reply.status) && json.is_object() => Ok(json),
        _ => Err(CampusError::Unreachable(format!(
            "{IAAA} answered {} without its JSON: it may be down for maintenance; try again later",
            status_line(reply.status)
        ))),
    }
}

/// `503 Service Unavailable`: a status with its reason phrase.
fn status_line(status: u16) -> String {
    reqwest::StatusCode::from_u16(status).map_or(status.to_string(), |s| s.to_string())
}

/// A GET of one of IAAA's account checks, `call`, for `user` (SERVICES.md §1.2–3).
async fn check(walk: &mut Walk<'_>, call_name: &str, user: &str) -> Result<Value, CampusError> {
    let rand = wire::rand();
    let query = [
        ("userName", user),
        ("appId", "portal2017"),
        ("_rand", rand.as_str()),
    ];
    call(walk, &ask(reqwest::Method::GET, call_name, &query)?).await
}

pub(super) async fn captcha_required(walk: &mut Walk<'_>, user: &str) -> Result<bool, CampusError> {
    Ok(check(walk, "isShowCode.do", user).await?["success"] == true)
}

/// A new captcha picture (SERVICES.md §6.1: `DrawServlet`, bound to the sign-in's own IAAA
/// session cookie, which the walk's store carries).
pub(super) async fn captcha_image(walk: &mut Walk<'_>) -> Result<Vec<u8>, CampusError> {
    let rand = wire::rand();
    let reply = walk
        .send(&ask(
            reqwest::Method::GET,
            "servlet/DrawServlet",
            &[("Rand", rand.as_str())],
        )?)
        .await?;
    if !(200..300).contains(&reply.status) || reply.bytes.is_empty() {
        return Err(CampusError::Unreachable(format!(
            "{IAAA} answered {} without the captcha's picture: try again later",
            status_line(reply.status)
        )));
    }
    Ok(reply.bytes)
}

/// The second factor IAAA wants for `user`, none when this device is trusted or the account
/// has none.
pub(super) async fn second_factor(
    walk: &mut Walk<'_>,
    user: &str,
) -> Result<Option<Mode>, CampusError> {
    let json = check(walk, "isMobileAuthen.do", user).await?;
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
pub(super) async fn send_sms(walk: &mut Walk<'_>, user: &str) -> Result<String, CampusError> {
    let json = check(walk, "sendSMSCode.do", user).await?;
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
async fn seal(walk: &mut Walk<'_>, password: &str) -> Result<String, CampusError> {
    let json = call(walk, &ask(reqwest::Method::GET, "getPublicKey.do", &[])?).await?;
    let pem = json["key"].as_str().unwrap_or("");
    let key = PublicKey::from_public_key_pem(pem)
        .map_err(|_| CampusError::Unreachable(format!("{IAAA} sent no usable public key")))?;
    let sealed = key
        .pkcs1v15_encrypt(password.as_bytes())
        .map_err(|e| CampusError::Chain(format!("the password could not be sealed ({e})")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(sealed))
}

/// One IAAA sign-in, for `service`'s application: its one-use token.
pub(super) async fn sign_in(
    walk: &mut Walk<'_>,
    service: Service,
    user: &str,
    password: &str,
    code: Option<Code>,
    rand_code: &str,
    device: &Device,
) -> Result<String, CampusError> {
    let sealed = seal(walk, password).await?;
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
        ("randCode", rand_code),
        ("smsCode", sms),
        ("otpCode", otp),
        ("redirUrl", redir.as_str()),
        // Ask IAAA to trust this device, so the next service's sign-in needs no new code.
        ("remTrustChk", if code.is_some() { "true" } else { "false" }),
    ];
    let mut login = ask(reqwest::Method::POST, "oauthlogin.do", &[])?;
    login.body = Some((
        "application/x-www-form-urlencoded",
        url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish(),
    ));
    let json = call(walk, &login).await?;
    if json["success"] != true {
        let code = json["errors"]["code"].as_str().unwrap_or("").to_owned();
        if code == "E03" {
            return Err(CampusError::Captcha);
        }
        let message = words(&code, json["errors"]["msg"].as_str().unwrap_or(""));
        return Err(CampusError::Iaaa { code, message });
    }
    json["token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| CampusError::Chain(format!("{IAAA} signed in but sent no token")))
}

/// Spends the token at the service's callback and follows its chain (SERVICES.md §1, §3, §7)
/// to the service's session: the portal's `SESSION` cookie; Treehole's token from wherever the
/// chain put it (the redirect's query or fragment, else its `pku_token` cookie) with its end.
pub(super) async fn exchange(
    walk: &mut Walk<'_>,
    service: Service,
    device: &Device,
    token: &str,
    now_ms: i64,
) -> Result<Session, CampusError> {
    let (_, redir) = app(service, device);
    let mut url = Url::parse(&redir).map_err(|e| CampusError::Chain(e.to_string()))?;
    // Only over https: 教学网's registered redirUrl is plain http.
    url.set_scheme("https")
        .map_err(|()| CampusError::Chain(format!("{redir} cannot be reached over https")))?;
    url.query_pairs_mut()
        .append_pair("_rand", &wire::rand())
        .append_pair("token", token);
    match service {
        Service::Portal | Service::Card => {
            let portal = Url::parse("https://portal.pku.edu.cn/portal2017/")
                .map_err(|e| CampusError::Chain(e.to_string()))?;
            walk.follow(Ask::get(url), |_, jar| jar.value(&portal, "SESSION"))
                .await
                .map_err(|e| e.error("the portal", "SESSION cookie"))?;
            Ok(Session {
                jar: walk.jar.for_host(wire::PORTAL),
                ..Session::default()
            })
        }
        Service::Treehole => {
            let home = Url::parse("https://treehole.pku.edu.cn/")
                .map_err(|e| CampusError::Chain(e.to_string()))?;
            let (jwt, expires) = walk
                .follow(Ask::get(url), |to, jar| {
                    let from_location = to.and_then(|to| {
                        Some((chain::param(to, "token")?, chain::param(to, "expires_in")))
                    });
                    from_location.or_else(|| {
                        Some((
                            jar.value(&home, "pku_token")?,
                            jar.value(&home, "pku_expires_in"),
                        ))
                    })
                })
                .await
                .map_err(|e| e.error("Treehole", "token"))?;
            // Its `expires_in` (unix s), else the JWT's `exp`, else the 7 days clients assume
            // (SERVICES.md §7).
            let expires_at_ms = expires
                .and_then(|s| s.parse::<i64>().ok())
                .map(|s| s * 1000)
                .or_else(|| jwt_end(&jwt))
                .or(Some(now_ms + TREEHOLE_ASSUMED_MS));
            Ok(Session {
                jar: walk.jar.for_host(wire::TREEHOLE),
                bearer: Some(jwt),
                uuid: Some(device.header()),
                expires_at_ms,
            })
        }
        Service::Course => {
            // SERVICES.md §10: several redirects, each setting cookies (`s_session_id`,
            // `JSESSIONID`), followed to the page they end at; the whole course jar is the
            // session. Its end is not said: an ended session is sent to sign in (`expired`).
            let home = Url::parse("https://course.pku.edu.cn/webapps/")
                .map_err(|e| CampusError::Chain(e.to_string()))?;
            walk.follow(Ask::get(url), |to, jar| {
                (to.is_none() && jar.value(&home, COURSE_SESSION).is_some()).then_some(())
            })
            .await
            .map_err(|e| e.error("教学网 (course.pku.edu.cn)", "s_session_id cookie"))?;
            Ok(Session {
                jar: walk.jar.for_host(wire::COURSE),
                ..Session::default()
            })
        }
        Service::Bus => {
            // SERVICES.md §11: the redirects are followed, cookies kept, to the landing page;
            // the cookies' names are not known, so the whole wproc jar is the session. Its end
            // is not said: an expired session answers `e: "10042"`.
            walk.follow(Ask::get(url), |to, jar| {
                let landed = to?.host_str() == Some(wire::BUS) && to?.path() == BUS_HOME;
                (landed && !jar.for_host(wire::BUS).is_empty()).then_some(())
            })
            .await
            .map_err(|e| e.error("the shuttle bus", "session cookie"))?;
            Ok(Session {
                jar: walk.jar.for_host(wire::BUS),
                ..Session::default()
            })
        }
    }
}

/// The card's session from the portal's: `redirectToCard.do` and the redirects after it, up to
/// the `synjones-auth` token in a `Location` (SERVICES.md §2, §8), each hop checked to stay on
/// the campus hosts.
pub(super) async fn card_session(
    walk: &mut Walk<'_>,
    portal: &Session,
    now_ms: i64,
) -> Result<Session, CampusError> {
    let start = Url::parse("https://portal.pku.edu.cn/portal2017/util/redirectToCard.do")
        .map_err(|e| CampusError::Chain(e.to_string()))?;
    walk.jar.extend(&portal.jar);
    let jwt = walk
        .follow(Ask::get(start), |to, _| chain::param(to?, "synjones-auth"))
        .await
        .map_err(|e| e.error("the campus card", "synjones-auth token"))?;
    Ok(Session {
        jar: walk.jar.for_host(wire::CARD),
        // The JWT's `exp`, else the 24 h clients treat it as good for (SERVICES.md §2, §8).
        expires_at_ms: jwt_end(&jwt).or(Some(now_ms + CARD_ASSUMED_MS)),
        bearer: Some(jwt),
        ..Session::default()
    })
}

/// How long clients treat a card token as good when it says nothing (SERVICES.md §2, §8).
const CARD_ASSUMED_MS: i64 = 24 * 3600 * 1000;
/// How long clients treat a Treehole token as good when the chain said nothing (SERVICES.md §7).
const TREEHOLE_ASSUMED_MS: i64 = 7 * 24 * 3600 * 1000;

/// When a token that is a JWT ends: its payload's `exp` (unix s) as epoch ms; none for a token
/// that is not a JWT or has no `exp`.
pub(super) fn jwt_end(token: &str) -> Option<i64> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims["exp"].as_i64().map(|s| s * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jwts_end_is_its_exp_and_a_token_that_is_no_jwt_has_none() {
        // {"alg":"HS256"} . {"sub":"2100012345","exp":1796140800} . signature
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIyMTAwMDEyMzQ1IiwiZXhwIjoxNzk2MTQwODAwfQ.c2ln";
        assert_eq!(jwt_end(jwt), Some(1_796_140_800_000));
        assert_eq!(jwt_end("eyJ0eXAiOiJKV1QifQ.hole.6a99b4b1"), None);
        assert_eq!(jwt_end("not-a-jwt"), None);
    }
}
