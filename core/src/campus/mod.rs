//! The campus account (DESIGN.md §10): the student's sign-in to the university's IAAA, one
//! session per campus service kept in the keystore, and the client plugins reach the services
//! through. Nothing else in the core speaks to a campus host.
//!
//! Sign-in: IAAA's public key is fetched and the password RSA-encrypted (PKCS#1 v1.5) before it
//! leaves the core; the second factor IAAA asks for (SMS or OTP) is asked once — the first
//! sign-in asks IAAA to trust the device (`remTrustChk`), so the next ones need no new code;
//! then one IAAA sign-in per service: the portal (`SESSION`), the campus card through the
//! portal's redirect chain (`synjones-auth`), Treehole (its token, cookies and device uuid).
//! The password is kept (in the keystore) only when the student asks for it, to sign in again
//! when a session ends; it is never written anywhere else, nor shown in an error.
//!
//! Who may change the account is decided in one place, [`Turns`]: one sign-in at a time, the
//! requests that meet an ended session share the sign-in that runs, and a sign-out wins over
//! any sign-in started before it.

mod iaaa;
pub mod wire;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use url::Url;

use crate::clock::Clock;
use crate::redact::Redact;
use crate::secrets::{SecretError, SecretStore};
use wire::{Origin, Public, Service};

/// The keystore's names for the campus account's secrets.
pub mod keys {
    /// The student id the sessions belong to.
    pub const ACCOUNT: &str = "campus.account";
    /// The password, only when the student asked to remember it on this phone.
    pub const PASSWORD: &str = "campus.password";
    /// IAAA's cookie that lets this device skip the second factor.
    pub const TRUST: &str = "campus.iaaaTrust";
    /// This install's Treehole device id (SERVICES.md §7), made once: the phone's, not the
    /// account's, so a sign-out keeps it.
    pub const DEVICE: &str = "campus.treeholeDevice";

    /// A service's session.
    pub fn session(service: super::Service) -> String {
        format!("campus.session.{}", service.as_str())
    }
}

/// The second factor IAAA asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "method")]
pub enum SecondFactor {
    /// A code sent to the phone number IAAA shows masked.
    Sms { mobile_mask: String },
    /// The 6-digit code of the student's authenticator (手机令牌).
    Otp,
}

/// Where a sign-in stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "step")]
pub enum SignInStep {
    /// Every service has its session.
    SignedIn { services: Vec<String> },
    /// IAAA asks for the second factor: give it with [`Campus::submit_code`].
    NeedsCode { factor: SecondFactor },
}

/// Why a sign-in or a campus request failed, in words for the student.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CampusError {
    /// IAAA refused: its code (E01…E21) and the student's words for it.
    #[error("{message}")]
    Iaaa { code: String, message: String },
    #[error(
        "IAAA asks for a picture captcha, which the app cannot show: sign in once on the portal's web page (portal.pku.edu.cn), then try again"
    )]
    Captcha,
    #[error("the campus services could not be reached: {0}")]
    Unreachable(String),
    /// A sign-in chain answered other than the services do.
    #[error("{0}")]
    Chain(String),
    #[error("no sign-in is waiting for a code; start the sign-in again")]
    NoPendingSignIn,
    #[error("an SMS code was sent {0} s ago; a new one can be sent after 60 s")]
    TooSoon(u64),
    #[error("not signed in to the campus account")]
    NotSignedIn,
    #[error("the keystore failed ({0}); nothing was signed in")]
    Keystore(String),
    /// Treehole's own check refused, in its words.
    #[error("Treehole: {0}")]
    Treehole(String),
}

impl From<SecretError> for CampusError {
    fn from(e: SecretError) -> Self {
        CampusError::Keystore(e.0)
    }
}

/// One service's session as the keystore keeps it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Session {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cookies: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
    /// Treehole's per-device `uuid` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// When the session is known to end (epoch ms), if the service says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<i64>,
}

impl Session {
    /// The session as the keystore keeps it.
    fn kept(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Every value of the session, to be redacted from what a plugin is answered.
    fn secrets(&self) -> Redact {
        let mut all: Vec<String> = self.cookies.iter().map(|(_, v)| v.clone()).collect();
        all.extend(self.bearer.clone());
        all.retain(|v| v.len() >= 6);
        Redact::new(all)
    }
}

/// The campus account as it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The student id, while signed in.
    pub account: Option<String>,
    /// Each service with a session, and when it is known to end (epoch ms).
    pub services: Vec<(Service, Option<i64>)>,
}

impl Status {
    /// Every service has its session: [`Campus::signed_in`] as of this status.
    pub fn signed_in(&self) -> bool {
        self.services.len() == Service::ALL.len()
    }
}

/// A sign-in waiting for the second factor. The password stays in memory only this long.
struct Pending {
    user: String,
    password: String,
    remember: bool,
    factor: SecondFactor,
    sms_sent_ms: Option<i64>,
    /// The sign-outs counted when the student started it ([`Turns::epoch`]).
    epoch: u64,
}

/// Who may change the account (DESIGN.md §10): one sign-in at a time per account; requests
/// that meet an ended session share the sign-in that runs; a sign-out wins over any sign-in
/// started before it. Every sign-in, the student's or a silent one, goes through here.
#[derive(Default)]
struct Turns {
    /// Held by the one sign-in running, across its network and its keystore writes. It guards
    /// no data; nothing run under it calls back into the campus owner.
    running: tokio::sync::Mutex<()>,
    /// Sign-ins finished since the start: kept, or a silent one that failed and dropped the
    /// ended session. A request that met an ended session signs in again only when none
    /// finished since it read its session; otherwise it shares that one's outcome.
    finished: AtomicU64,
    /// Sign-outs since the start: a sign-in keeps nothing when one came after it started.
    sign_outs: AtomicU64,
}

/// The running sign-in's turn: what keeps a sign-in takes it, so only one runs.
type Turn<'a> = tokio::sync::MutexGuard<'a, ()>;

impl Turns {
    async fn take(&self) -> Turn<'_> {
        self.running.lock().await
    }

    /// The sign-outs so far: what a sign-in notes as it starts.
    fn epoch(&self) -> u64 {
        self.sign_outs.load(Ordering::SeqCst)
    }

    fn signed_out_since(&self, epoch: u64) -> bool {
        self.epoch() != epoch
    }

    /// Counted before a sign-out deletes anything, so a sign-in writing meanwhile finds it
    /// when it checks again after its writes.
    fn sign_out(&self) {
        self.sign_outs.fetch_add(1, Ordering::SeqCst);
    }

    fn finished(&self) -> u64 {
        self.finished.load(Ordering::SeqCst)
    }

    /// Called under the turn, as a sign-in finishes.
    fn finish(&self, _turn: &Turn<'_>) {
        self.finished.fetch_add(1, Ordering::SeqCst);
    }
}

/// What a campus request answers a plugin: the HTTP status and the body (JSON when it is
/// JSON), or a status object (`{status: "signin_required"}`, `{status:
/// "verification_required", methods}`).
pub type Answer = Value;

/// A plugin's request to a campus service.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct CampusRequest {
    #[serde(default)]
    pub method: Option<String>,
    pub path: String,
    #[serde(default)]
    pub query: Vec<(String, String)>,
    /// A JSON body, sent as `application/json`.
    #[serde(default)]
    pub body: Option<Value>,
    /// A form, sent as `application/x-www-form-urlencoded` in its order (the portal's notices
    /// take one, SERVICES.md §5). A request has a `body` or a `form`, never both.
    #[serde(default)]
    pub form: Vec<(String, String)>,
}

/// Told whether the account is signed in whenever that may have changed.
pub type Follow = Box<dyn Fn(bool) + Send + Sync>;

/// The owner of the campus account.
pub struct Campus {
    secrets: Arc<dyn SecretStore>,
    clock: Arc<dyn Clock>,
    origin: Origin,
    pending: Mutex<Option<Pending>>,
    turns: Turns,
    follow: Follow,
}

impl Campus {
    /// `follow` is told [`Campus::signed_in`] after every sign-in, sign-out and session found
    /// ended: the consent's "campus session" follows it (DESIGN.md §4), never a switch.
    pub fn new(
        secrets: Arc<dyn SecretStore>,
        clock: Arc<dyn Clock>,
        origin: Origin,
        follow: Follow,
    ) -> Self {
        let campus = Self {
            secrets,
            clock,
            origin,
            pending: Mutex::new(None),
            turns: Turns::default(),
            follow,
        };
        campus.changed();
        campus
    }

    fn changed(&self) {
        (self.follow)(self.signed_in());
    }

    /// The sign-in waiting for its second factor, if one is: what the sign-in screen asks.
    pub fn waiting_for(&self) -> Option<(String, SecondFactor, Option<i64>)> {
        crate::lock(&self.pending)
            .as_ref()
            .map(|p| (p.user.clone(), p.factor.clone(), p.sms_sent_ms))
    }

    /// Forgets a sign-in waiting for its code (the student went back).
    pub fn cancel_sign_in(&self) {
        *crate::lock(&self.pending) = None;
    }

    /// Signs in as `user`: either every service's session at once, or the second factor IAAA
    /// asks for (an SMS is sent as the step is returned).
    pub async fn sign_in(
        &self,
        user: &str,
        password: &str,
        remember: bool,
    ) -> Result<SignInStep, CampusError> {
        let epoch = self.turns.epoch();
        let turn = self.turns.take().await;
        let client = self.client()?;
        let trust = self.secrets.get(keys::TRUST)?;
        let iaaa = iaaa::Iaaa::new(&client, &self.origin, trust.as_deref());
        let factor = match second_factor(&iaaa, user).await? {
            None => {
                return self
                    .complete(&turn, user, password, remember, None, epoch)
                    .await;
            }
            Some(iaaa::Mode::Otp) => SecondFactor::Otp,
            Some(iaaa::Mode::Sms) => SecondFactor::Sms {
                mobile_mask: iaaa.send_sms(user).await?,
            },
        };
        let sms_sent_ms = matches!(factor, SecondFactor::Sms { .. }).then(|| self.clock.now_ms());
        self.wait_for_code(Pending {
            user: user.to_owned(),
            password: password.to_owned(),
            remember,
            factor: factor.clone(),
            sms_sent_ms,
            epoch,
        })?;
        Ok(SignInStep::NeedsCode { factor })
    }

    /// Keeps `pending` waiting for its code, unless the student signed out since it started
    /// (DESIGN.md §10: a sign-out wins; the password is not kept waiting).
    fn wait_for_code(&self, pending: Pending) -> Result<(), CampusError> {
        let mut waiting = crate::lock(&self.pending);
        if self.turns.signed_out_since(pending.epoch) {
            return Err(CampusError::NotSignedIn);
        }
        *waiting = Some(pending);
        Ok(())
    }

    /// Sends the waiting sign-in's SMS code again, no sooner than 60 s after the last.
    pub async fn resend_sms(&self) -> Result<String, CampusError> {
        let (user, sent) = {
            let pending = crate::lock(&self.pending);
            let p = pending.as_ref().ok_or(CampusError::NoPendingSignIn)?;
            (p.user.clone(), p.sms_sent_ms)
        };
        let now = self.clock.now_ms();
        if let Some(at) = sent {
            let ago = (now - at).max(0) as u64 / 1000;
            if ago < 60 {
                return Err(CampusError::TooSoon(ago));
            }
        }
        let client = self.client()?;
        let trust = self.secrets.get(keys::TRUST)?;
        let mask = iaaa::Iaaa::new(&client, &self.origin, trust.as_deref())
            .send_sms(&user)
            .await?;
        if let Some(p) = crate::lock(&self.pending).as_mut() {
            p.sms_sent_ms = Some(now);
        }
        Ok(mask)
    }

    /// Finishes the waiting sign-in with the code the student entered. A wrong code keeps the
    /// sign-in waiting, so the student can type it again.
    pub async fn submit_code(&self, code: &str) -> Result<SignInStep, CampusError> {
        let pending = crate::lock(&self.pending)
            .take()
            .ok_or(CampusError::NoPendingSignIn)?;
        let code_for = match pending.factor {
            SecondFactor::Sms { .. } => iaaa::Code::Sms(code.trim().to_owned()),
            SecondFactor::Otp => iaaa::Code::Otp(code.trim().to_owned()),
        };
        let turn = self.turns.take().await;
        let done = self
            .complete(
                &turn,
                &pending.user,
                &pending.password,
                pending.remember,
                Some(code_for),
                pending.epoch,
            )
            .await;
        if let Err(CampusError::Iaaa { code, .. }) = &done
            && (code == "E04" || code == "E05")
        {
            self.wait_for_code(pending)?;
        }
        done
    }

    /// One IAAA sign-in per service, then every session written, or none: none either when
    /// the student signed out after the sign-in started (`epoch`).
    async fn complete(
        &self,
        turn: &Turn<'_>,
        user: &str,
        password: &str,
        remember: bool,
        code: Option<iaaa::Code>,
        epoch: u64,
    ) -> Result<SignInStep, CampusError> {
        let client = self.client()?;
        let mut trust = self.secrets.get(keys::TRUST)?;
        let (device, made) = self.device()?;
        // What the sign-in keeps, in the order it is written.
        let mut writes = Vec::new();
        let mut code = code;
        for service in [Service::Portal, Service::Treehole] {
            let iaaa = iaaa::Iaaa::new(&client, &self.origin, trust.as_deref());
            let signed = iaaa
                .sign_in(service, user, password, code.take(), &device)
                .await?;
            if signed.trust.is_some() {
                trust = signed.trust;
            }
            let session =
                iaaa::exchange(&client, &self.origin, service, &device, &signed.token).await?;
            if service == Service::Portal {
                let card = iaaa::card_session(&client, &self.origin, &session).await?;
                writes.push((keys::session(Service::Card), card.kept()));
            }
            writes.push((keys::session(service), session.kept()));
        }
        writes.push((keys::ACCOUNT.to_owned(), user.to_owned()));
        if remember {
            writes.push((keys::PASSWORD.to_owned(), password.to_owned()));
        }
        if let Some(trust) = trust {
            writes.push((keys::TRUST.to_owned(), trust));
        }
        if made {
            writes.push((keys::DEVICE.to_owned(), device.as_str().to_owned()));
        }
        let kept = self.keep(turn, epoch, &writes, remember);
        self.changed();
        kept?;
        Ok(SignInStep::SignedIn {
            services: Service::ALL.iter().map(|s| s.as_str().to_owned()).collect(),
        })
    }

    /// This install's Treehole device id (SERVICES.md §7): the kept one, or a new one (true),
    /// kept with the first sign-in that is kept.
    fn device(&self) -> Result<(iaaa::Device, bool), CampusError> {
        match self
            .secrets
            .get(keys::DEVICE)?
            .and_then(|kept| iaaa::Device::parse(&kept))
        {
            Some(kept) => Ok((kept, false)),
            None => Ok((iaaa::Device::new()?, true)),
        }
    }

    /// Writes what a sign-in keeps (the sessions, the account, the password when `remember`,
    /// IAAA's trust, a Treehole device id made for it); should the keystore fail, what was
    /// written is taken back, so there is no session without its service. Nothing is kept when
    /// the student signed out after the sign-in started (`epoch`), not even when the sign-out
    /// comes while the writes run: they are checked again after, and taken back.
    fn keep(
        &self,
        turn: &Turn<'_>,
        epoch: u64,
        writes: &[(String, String)],
        remember: bool,
    ) -> Result<(), CampusError> {
        if self.turns.signed_out_since(epoch) {
            return Err(CampusError::NotSignedIn);
        }
        for (i, (key, value)) in writes.iter().enumerate() {
            if let Err(e) = self.secrets.set(key, value) {
                for (written, _) in &writes[..i] {
                    let _ = self.secrets.delete(written);
                }
                return Err(e.into());
            }
        }
        if self.turns.signed_out_since(epoch) {
            for (written, _) in writes {
                let _ = self.secrets.delete(written);
            }
            return Err(CampusError::NotSignedIn);
        }
        if !remember {
            self.secrets.delete(keys::PASSWORD)?;
        }
        self.turns.finish(turn);
        Ok(())
    }

    /// Signs out: every session, the account, the remembered password and IAAA's trust of
    /// this device are deleted, and a sign-in still running keeps nothing (DESIGN.md §10: a
    /// sign-out wins over any sign-in started before it).
    pub fn sign_out(&self) -> Result<(), CampusError> {
        self.turns.sign_out();
        *crate::lock(&self.pending) = None;
        for service in Service::ALL {
            self.secrets.delete(&keys::session(service))?;
        }
        self.secrets.delete(keys::PASSWORD)?;
        self.secrets.delete(keys::ACCOUNT)?;
        self.secrets.delete(keys::TRUST)?;
        self.changed();
        Ok(())
    }

    /// Whether a session exists: the consent's "campus session" (DESIGN.md §4).
    pub fn signed_in(&self) -> bool {
        Service::ALL
            .iter()
            .all(|s| matches!(self.secrets.get(&keys::session(*s)), Ok(Some(_))))
    }

    /// Which services have a session, and the student id they belong to.
    pub fn status(&self) -> Result<Status, CampusError> {
        let account = self.secrets.get(keys::ACCOUNT)?;
        let mut services = Vec::new();
        for service in Service::ALL {
            if let Some(session) = self.session(service)? {
                services.push((service, session.expires_at_ms));
            }
        }
        Ok(Status { account, services })
    }

    fn session(&self, service: Service) -> Result<Option<Session>, CampusError> {
        Ok(self
            .secrets
            .get(&keys::session(service))?
            .and_then(|raw| serde_json::from_str(&raw).ok()))
    }

    fn client(&self) -> Result<reqwest::Client, CampusError> {
        wire::client().map_err(CampusError::Unreachable)
    }

    /// A plugin's request to `service` with the student's session (DESIGN.md §10): sent to that
    /// service's https host only, no redirect followed, answered `{status, body}`. An expired
    /// session signs in again once, silently, when the password is remembered (requests that
    /// meet it ended meanwhile share that sign-in); otherwise the answer is `{status:
    /// "signin_required"}`. The plugin never sees the session: what it gets back is redacted
    /// of it.
    pub async fn request(
        &self,
        service: Service,
        request: &CampusRequest,
    ) -> Result<Answer, CampusError> {
        let finished = self.turns.finished();
        let Some(session) = self.session(service)? else {
            return Ok(json!({"status": "signin_required"}));
        };
        let (status, body) = self.send(service, &session, request).await?;
        let answer = match expired(service, status, &body) {
            false => (status, body, session),
            true => {
                // Once, never in a loop: a session that ends again right after a fresh
                // sign-in is the student's to sign in again.
                let Some(session) = self.renewed(service, finished).await? else {
                    return Ok(json!({"status": "signin_required"}));
                };
                let finished = self.turns.finished();
                let (status, body) = self.send(service, &session, request).await?;
                if expired(service, status, &body) {
                    return self.ended(service, finished).await;
                }
                (status, body, session)
            }
        };
        let (status, body, session) = answer;
        if service == Service::Treehole && body["code"] == 40002 {
            return Ok(json!({"status": "verification_required", "methods": ["sms", "otp"]}));
        }
        Ok(session
            .secrets()
            .value(json!({"status": status, "body": body})))
    }

    /// `service`'s session once a request found it ended, having read it when `finished`
    /// sign-ins had finished (DESIGN.md §10: one sign-in at a time per account; requests
    /// meeting an ended session share it). A sign-in that finished since is shared: its
    /// session, or none. Otherwise this request's one silent sign-in runs; when it cannot, the
    /// ended session is dropped (the account is no longer signed in) and there is none.
    async fn renewed(
        &self,
        service: Service,
        finished: u64,
    ) -> Result<Option<Session>, CampusError> {
        let turn = self.turns.take().await;
        if self.turns.finished() == finished && !self.sign_in_again(&turn).await {
            let dropped = self.secrets.delete(&keys::session(service));
            self.turns.finish(&turn);
            drop(turn);
            self.changed();
            dropped?;
            return Ok(None);
        }
        drop(turn);
        self.session(service)
    }

    /// A service's session has ended right after a sign-in and is not renewed again: it is
    /// dropped (the account is no longer signed in) and the plugin told so — unless a newer
    /// sign-in finished since `finished`, whose session stays.
    async fn ended(&self, service: Service, finished: u64) -> Result<Answer, CampusError> {
        let turn = self.turns.take().await;
        if self.turns.finished() == finished {
            let dropped = self.secrets.delete(&keys::session(service));
            drop(turn);
            self.changed();
            dropped?;
        }
        Ok(json!({"status": "signin_required"}))
    }

    /// Sends Treehole's own SMS check code (SERVICES.md §3, the answer to
    /// `verification_required`); the student types it on the verification screen.
    pub async fn treehole_send_code(&self) -> Result<(), CampusError> {
        self.treehole_check("/chapi/api/jwt_send_msg", json!({}))
            .await
    }

    /// Answers Treehole's SMS check with the code the student received.
    pub async fn treehole_verify(&self, code: &str) -> Result<(), CampusError> {
        self.treehole_check(
            "/chapi/api/jwt_msg_verify",
            json!({"valid_code": code.trim()}),
        )
        .await
    }

    async fn treehole_check(&self, path: &str, body: Value) -> Result<(), CampusError> {
        let finished = self.turns.finished();
        let session = self
            .session(Service::Treehole)?
            .ok_or(CampusError::NotSignedIn)?;
        let request = CampusRequest {
            method: Some("POST".into()),
            path: path.into(),
            body: Some(body),
            ..CampusRequest::default()
        };
        let (status, body) = self.send(Service::Treehole, &session, &request).await?;
        if expired(Service::Treehole, status, &body) {
            self.ended(Service::Treehole, finished).await?;
            return Err(CampusError::NotSignedIn);
        }
        match body["code"].as_i64() {
            Some(20000) => Ok(()),
            _ => Err(CampusError::Treehole(
                body["message"]
                    .as_str()
                    .unwrap_or("Treehole did not take the code")
                    .to_owned(),
            )),
        }
    }

    /// Signs in again with the remembered password, under the caller's turn; false when it
    /// cannot. DESIGN.md §10: a silent sign-in never sends an SMS nor leaves a sign-in waiting
    /// with the password — when IAAA wants a second factor, it stops there and the password
    /// read for it is dropped.
    async fn sign_in_again(&self, turn: &Turn<'_>) -> bool {
        let epoch = self.turns.epoch();
        let (Ok(Some(user)), Ok(Some(password))) = (
            self.secrets.get(keys::ACCOUNT),
            self.secrets.get(keys::PASSWORD),
        ) else {
            return false;
        };
        let (Ok(client), Ok(trust)) = (self.client(), self.secrets.get(keys::TRUST)) else {
            return false;
        };
        let iaaa = iaaa::Iaaa::new(&client, &self.origin, trust.as_deref());
        match second_factor(&iaaa, &user).await {
            Ok(None) => self
                .complete(turn, &user, &password, true, None, epoch)
                .await
                .is_ok(),
            Ok(Some(_)) | Err(_) => false,
        }
    }

    /// A query to a public service (SERVICES.md §4): the same client, no session; only under
    /// the service's own paths. Answered `{status, body}`.
    pub async fn public_request(
        &self,
        service: Public,
        request: &CampusRequest,
    ) -> Result<Answer, CampusError> {
        let url = url_for(service.host(), request)?;
        if !url.path().starts_with(service.prefix()) {
            return Err(CampusError::Chain(format!(
                "the {} service answers only paths under {}",
                service.as_str(),
                service.prefix()
            )));
        }
        let mut builder = self.builder(&url, request)?;
        if service == Public::Portal {
            // SERVICES.md §4: the public queries want the page they are asked from.
            builder = builder.header(
                reqwest::header::REFERER,
                "https://portal.pku.edu.cn/publicQuery/",
            );
        }
        let (status, body) = answer(builder).await?;
        Ok(json!({"status": status, "body": body}))
    }

    async fn send(
        &self,
        service: Service,
        session: &Session,
        request: &CampusRequest,
    ) -> Result<(u16, Value), CampusError> {
        let mut url = url_for(service.host(), request)?;
        if service == Service::Card && wire::query_param(&url, "synAccessSource").is_none() {
            url.query_pairs_mut().append_pair("synAccessSource", "h5");
        }
        let mut builder = self.builder(&url, request)?;
        if !session.cookies.is_empty() {
            builder = builder.header(
                reqwest::header::COOKIE,
                wire::cookie_header(&session.cookies),
            );
        }
        builder = match service {
            Service::Card => builder
                .header(
                    "synjones-auth",
                    format!("bearer {}", session.bearer.as_deref().unwrap_or("")),
                )
                .header("synaccesssource", "h5"),
            Service::Treehole => builder
                .header(
                    reqwest::header::AUTHORIZATION,
                    format!("Bearer {}", session.bearer.as_deref().unwrap_or("")),
                )
                .header("uuid", session.uuid.as_deref().unwrap_or("")),
            Service::Portal => builder,
        };
        answer(builder).await
    }

    /// The request to `url` (routed to the development origin when there is one) with the
    /// plugin's method and body.
    fn builder(
        &self,
        url: &Url,
        request: &CampusRequest,
    ) -> Result<reqwest::RequestBuilder, CampusError> {
        let (sent, host) = self.origin.route(url).map_err(CampusError::Chain)?;
        let method = request
            .method
            .as_deref()
            .unwrap_or("GET")
            .to_ascii_uppercase();
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| CampusError::Chain(format!("{method} is not an HTTP method")))?;
        let mut builder = self.client()?.request(method, sent);
        if let Some(host) = host {
            builder = builder.header(reqwest::header::HOST, host);
        }
        if let Some((content_type, body)) = payload(request)? {
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(body);
        }
        Ok(builder)
    }
}

/// The second factor IAAA wants of `user`, none when it wants none; a picture captcha is
/// refused, as the app cannot show one.
async fn second_factor(
    iaaa: &iaaa::Iaaa<'_>,
    user: &str,
) -> Result<Option<iaaa::Mode>, CampusError> {
    if iaaa.captcha_required(user).await? {
        return Err(CampusError::Captcha);
    }
    iaaa.second_factor(user).await
}

/// A request's body and its content type: its JSON `body`, or its `form` encoded in order.
fn payload(request: &CampusRequest) -> Result<Option<(&'static str, String)>, CampusError> {
    match (&request.body, request.form.is_empty()) {
        (Some(_), false) => Err(CampusError::Chain(
            "services.campus.request: give either `body` (sent as JSON) or `form` (sent form-encoded), not both".into(),
        )),
        (Some(body), true) => Ok(Some(("application/json", body.to_string()))),
        (None, false) => Ok(Some((
            "application/x-www-form-urlencoded",
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&request.form)
                .finish(),
        ))),
        (None, true) => Ok(None),
    }
}

/// The https URL on `host` of a plugin's request: its path as given, its query kept.
fn url_for(host: &str, request: &CampusRequest) -> Result<Url, CampusError> {
    let path = if request.path.starts_with('/') {
        request.path.clone()
    } else {
        format!("/{}", request.path)
    };
    let mut url =
        Url::parse(&format!("https://{host}")).map_err(|e| CampusError::Chain(e.to_string()))?;
    // `Url::join` would let `//host` or `..` leave the host.
    let (only_path, query) = match path.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (path, None),
    };
    url.set_path(&only_path);
    url.set_query(query.as_deref());
    if !request.query.is_empty() {
        url.query_pairs_mut().extend_pairs(&request.query);
    }
    Ok(url)
}

/// Sends, and reads the answer under the 1 MiB bound: its status and its body (JSON when it is
/// JSON).
async fn answer(builder: reqwest::RequestBuilder) -> Result<(u16, Value), CampusError> {
    let response = builder
        .send()
        .await
        .map_err(|e| CampusError::Unreachable(e.without_url().to_string()))?;
    let status = response.status().as_u16();
    let text = wire::body(response)
        .await
        .map_err(CampusError::Unreachable)?;
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Ok((status, body))
}

/// Whether an answer says the session ended (SERVICES.md: HTTP 401; the card's `{code: 401}`).
fn expired(service: Service, status: u16, body: &Value) -> bool {
    status == 401 || (service == Service::Card && body["code"] == 401)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(value: Value) -> CampusRequest {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_form_is_sent_form_encoded_in_its_order() {
        let notices = request(json!({"path": "/portal2017/notice/retrAllSchoolNotice.do",
            "method": "POST", "form": [["keyword", "ALL"], ["limit", "20"], ["start", "0"]]}));
        assert_eq!(
            payload(&notices).unwrap(),
            Some((
                "application/x-www-form-urlencoded",
                "keyword=ALL&limit=20&start=0".to_owned()
            ))
        );
        let words = request(json!({"path": "/x", "form": [["keyword", "选课 & 考试"]]}));
        assert_eq!(
            payload(&words).unwrap().unwrap().1,
            "keyword=%E9%80%89%E8%AF%BE+%26+%E8%80%83%E8%AF%95"
        );
    }

    #[test]
    fn a_json_body_is_sent_as_json_and_no_body_as_none() {
        let post = request(json!({"path": "/x", "body": {"pid": 1}}));
        assert_eq!(
            payload(&post).unwrap(),
            Some(("application/json", r#"{"pid":1}"#.to_owned()))
        );
        assert_eq!(payload(&request(json!({"path": "/x"}))).unwrap(), None);
    }

    #[test]
    fn a_request_with_both_a_body_and_a_form_is_refused_naming_them() {
        let both = request(json!({"path": "/x", "body": {}, "form": [["a", "b"]]}));
        assert_eq!(
            payload(&both).unwrap_err().to_string(),
            "services.campus.request: give either `body` (sent as JSON) or `form` (sent form-encoded), not both"
        );
    }
}
