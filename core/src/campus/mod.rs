//! The campus account (DESIGN.md §10): the student's sign-in to the university's IAAA, one
//! session per campus service kept in the keystore, and the client plugins reach the services
//! through. Nothing else in the core speaks to a campus host.
//!
//! Sign-in: IAAA's public key is fetched and the password RSA-encrypted (PKCS#1 v1.5) before it
//! leaves the core; the second factor IAAA asks for (SMS or OTP) is asked once — the first
//! sign-in asks IAAA to trust the device (`remTrustChk`), so the next ones need no new code;
//! then, one after the other, one IAAA sign-in per service: the portal (`SESSION`), the campus
//! card through the portal's redirect chain (`synjones-auth`), Treehole (its token, cookies and
//! device uuid). Each service's session is kept as it comes: one failing leaves the others
//! signed in, and [`Campus::retry`] signs in only the failed ones with the password held for
//! that sign-in (until the sign-in screen closes) or remembered. One cookie store per sign-in
//! ([`chain::Jar`]); IAAA's cookies are kept with the sessions, so whatever IAAA set to trust
//! the device goes back to it. The password is kept (in the keystore) only when the student
//! asks for it, to sign in again when a session ends; it is never written anywhere else, nor
//! shown in an error.
//!
//! Who may change the account is decided in one place, [`Turns`]: one sign-in at a time, the
//! requests that meet an ended session share the sign-in that runs, and a sign-out wins over
//! any sign-in started before it.

mod chain;
mod iaaa;
pub mod trust;
pub mod wire;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};
use url::Url;

use crate::clock::Clock;
use crate::redact::Redact;
use crate::secrets::{SecretError, SecretStore};
use chain::{Ask, Jar, Walk};
use wire::{Origin, Public, Service};

/// The keystore's names for the campus account's secrets.
pub mod keys {
    /// The student id the sessions belong to.
    pub const ACCOUNT: &str = "campus.account";
    /// The password, only when the student asked to remember it on this phone.
    pub const PASSWORD: &str = "campus.password";
    /// The cookies IAAA set (RFC 6265, whichever they are: among them what lets this device
    /// skip the second factor), sent back to it by the next sign-in.
    pub const IAAA: &str = "campus.iaaaCookies";
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
    /// Some services have their session and some failed, each in words: [`Campus::retry`]
    /// signs in only those.
    Partly {
        services: Vec<String>,
        failed: Vec<Failure>,
    },
    /// IAAA asks for the second factor: give it with [`Campus::submit_code`].
    NeedsCode { factor: SecondFactor },
    /// IAAA asks for the characters of its captcha picture ([`Campus::captcha`]): give them
    /// with [`Campus::submit_captcha`].
    NeedsCaptcha,
}

/// A service whose sign-in failed, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub service: Service,
    pub error: CampusError,
}

impl Serialize for Failure {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        json!({"service": self.service.as_str(), "reason": self.error.to_string()})
            .serialize(serializer)
    }
}

/// Why a sign-in or a campus request failed, in words for the student.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CampusError {
    /// IAAA refused: its code (E01…E21) and the student's words for it.
    #[error("{message}")]
    Iaaa { code: String, message: String },
    /// IAAA asks for its captcha where no one can answer it (a silent sign-in).
    #[error(
        "IAAA asks for a picture captcha: sign in on the campus account screen, which shows it"
    )]
    Captcha,
    #[error("the captcha's characters were not right: type those of the new picture")]
    CaptchaWrong,
    #[error("the campus services could not be reached: {0}")]
    Unreachable(String),
    /// A campus service did not answer within the client's bound (10 s, `wire::TIMEOUT`).
    #[error("the campus service did not answer within {0} s: try again later")]
    TimedOut(u64),
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
    #[error("there is no failed sign-in to retry; sign in again")]
    NoRetry,
    /// The card is reached through the portal's session, which there is not.
    #[error("the campus card is reached through the portal, which is not signed in: retry")]
    CardNeedsPortal,
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
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Session {
    /// The cookies the service's chain set, as RFC 6265 keeps them.
    #[serde(default, skip_serializing_if = "Jar::is_empty")]
    pub jar: Jar,
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
        let mut all: Vec<String> = self.jar.values();
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
    /// The services the last sign-in could not sign in, while [`Campus::retry`] can.
    pub failed: Vec<Failure>,
}

impl Status {
    /// Some service has its session: [`Campus::signed_in`] as of this status.
    pub fn signed_in(&self) -> bool {
        !self.services.is_empty()
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
    /// The services it signs in (all, or those a retry signs in again).
    services: Vec<Service>,
    /// Its cookies so far: IAAA binds the code to the sign-in's own session.
    jar: Jar,
    /// The captcha's characters the student typed, when IAAA drew one.
    rand: String,
}

/// A sign-in waiting for the student to read IAAA's captcha (SERVICES.md §6.1). The password
/// stays in memory only this long.
struct Captcha {
    user: String,
    password: String,
    remember: bool,
    services: Vec<Service>,
    /// Its cookies so far: the picture is bound to the sign-in's IAAA session.
    jar: Jar,
    /// The picture as IAAA drew it (a JPEG).
    image: Vec<u8>,
    epoch: u64,
}

/// What the student answered IAAA for one sign-in: the second factor's code, the captcha's
/// characters (empty when none was drawn).
#[derive(Default)]
struct Answers {
    code: Option<iaaa::Code>,
    rand: String,
}

/// The services a sign-in could not sign in, with the password held for the retry: in memory,
/// only until the sign-in screen closes ([`Campus::cancel_sign_in`]), a sign-out, a new
/// sign-in or a retry that signs every one in.
struct Retry {
    user: String,
    password: String,
    remember: bool,
    failed: Vec<Failure>,
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
    captcha: Mutex<Option<Captcha>>,
    retry: Mutex<Option<Retry>>,
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
            captcha: Mutex::new(None),
            retry: Mutex::new(None),
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

    /// Forgets a sign-in waiting for its code and the password held for a retry (the student
    /// went back, or closed the sign-in screen).
    pub fn cancel_sign_in(&self) {
        *crate::lock(&self.pending) = None;
        *crate::lock(&self.captcha) = None;
        *crate::lock(&self.retry) = None;
    }

    /// The sign-in waiting for its captcha, if one is: the student id and IAAA's picture.
    pub fn captcha(&self) -> Option<(String, Vec<u8>)> {
        crate::lock(&self.captcha)
            .as_ref()
            .map(|c| (c.user.clone(), c.image.clone()))
    }

    /// A new picture for the sign-in waiting for its captcha (the student could not read it).
    pub async fn refresh_captcha(&self) -> Result<(), CampusError> {
        let jar = crate::lock(&self.captcha)
            .as_ref()
            .map(|c| c.jar.clone())
            .ok_or(CampusError::NoPendingSignIn)?;
        let client = self.client()?;
        let mut walk = Walk::new(&client, &self.origin, jar);
        let image = iaaa::captcha_image(&mut walk).await?;
        if let Some(c) = crate::lock(&self.captcha).as_mut() {
            c.image = image;
            c.jar = walk.jar;
        }
        Ok(())
    }

    /// Goes on with the sign-in waiting for its captcha, with the characters the student read:
    /// the second factor IAAA asks for next, or the services signed in. Characters IAAA does not
    /// take keep the sign-in waiting, with a new picture.
    pub async fn submit_captcha(&self, characters: &str) -> Result<SignInStep, CampusError> {
        let waiting = crate::lock(&self.captcha)
            .take()
            .ok_or(CampusError::NoPendingSignIn)?;
        let turn = self.turns.take().await;
        let client = self.client()?;
        let walk = Walk::new(&client, &self.origin, waiting.jar.clone());
        let done = self
            .proceed(
                &turn,
                &waiting.user,
                &waiting.password,
                waiting.remember,
                waiting.services.clone(),
                walk,
                characters.trim(),
                waiting.epoch,
            )
            .await;
        match done {
            Err(CampusError::Captcha) => {
                let mut walk = Walk::new(&client, &self.origin, waiting.jar.clone());
                let image = iaaa::captcha_image(&mut walk).await?;
                self.wait_for_captcha(Captcha {
                    image,
                    jar: walk.jar,
                    ..waiting
                })?;
                Err(CampusError::CaptchaWrong)
            }
            done => done,
        }
    }

    /// Keeps `captcha` waiting for its characters, unless the student signed out since it
    /// started (DESIGN.md §10: a sign-out wins).
    fn wait_for_captcha(&self, captcha: Captcha) -> Result<(), CampusError> {
        let mut waiting = crate::lock(&self.captcha);
        if self.turns.signed_out_since(captcha.epoch) {
            return Err(CampusError::NotSignedIn);
        }
        *waiting = Some(captcha);
        Ok(())
    }

    /// Signs in as `user`: each service's session as it comes (all, or some and the others'
    /// failures), or the second factor IAAA asks for (an SMS is sent as the step is returned).
    pub async fn sign_in(
        &self,
        user: &str,
        password: &str,
        remember: bool,
    ) -> Result<SignInStep, CampusError> {
        *crate::lock(&self.retry) = None;
        self.start(user, password, remember, Service::ALL.to_vec())
            .await
    }

    /// Signs in again only the services the last sign-in could not, without asking for the
    /// password: the one held for that sign-in, else the remembered one.
    pub async fn retry(&self) -> Result<SignInStep, CampusError> {
        let held = crate::lock(&self.retry).take();
        let (user, password, remember, services) = match held {
            Some(r) if !self.turns.signed_out_since(r.epoch) => (
                r.user,
                r.password,
                r.remember,
                r.failed.iter().map(|f| f.service).collect::<Vec<_>>(),
            ),
            _ => {
                let (Some(user), Some(password)) = (
                    self.secrets.get(keys::ACCOUNT)?,
                    self.secrets.get(keys::PASSWORD)?,
                ) else {
                    return Err(CampusError::NoRetry);
                };
                let status = self.status()?;
                let missing: Vec<Service> = Service::ALL
                    .into_iter()
                    .filter(|s| !status.services.iter().any(|(had, _)| had == s))
                    .collect();
                (user, password, true, missing)
            }
        };
        // The card is reached through the portal: a portal session that ended meanwhile is
        // signed in again with it.
        let mut services = services;
        if services.contains(&Service::Card)
            && !services.contains(&Service::Portal)
            && self.session(Service::Portal)?.is_none()
        {
            services.insert(0, Service::Portal);
        }
        self.start(&user, &password, remember, services).await
    }

    /// A sign-in of `services` the student asked for: the second factor when IAAA wants one,
    /// else the services signed in; what failed is held for [`Campus::retry`].
    async fn start(
        &self,
        user: &str,
        password: &str,
        remember: bool,
        services: Vec<Service>,
    ) -> Result<SignInStep, CampusError> {
        let epoch = self.turns.epoch();
        let turn = self.turns.take().await;
        *crate::lock(&self.captcha) = None;
        let client = self.client()?;
        let mut walk = Walk::new(&client, &self.origin, self.iaaa_cookies()?);
        if iaaa::captcha_required(&mut walk, user).await? {
            return self
                .ask_captcha(user, password, remember, services, walk, epoch)
                .await;
        }
        let done = self
            .proceed(
                &turn,
                user,
                password,
                remember,
                services.clone(),
                walk,
                "",
                epoch,
            )
            .await;
        match done {
            // IAAA wanted a captcha it had not said it would (SERVICES.md §6.1: after a wrong
            // password): it is drawn and asked.
            Err(CampusError::Captcha) => {
                let walk = Walk::new(&client, &self.origin, self.iaaa_cookies()?);
                self.ask_captcha(user, password, remember, services, walk, epoch)
                    .await
            }
            done => done,
        }
    }

    /// Draws IAAA's captcha and keeps the sign-in waiting for its characters.
    async fn ask_captcha(
        &self,
        user: &str,
        password: &str,
        remember: bool,
        services: Vec<Service>,
        mut walk: Walk<'_>,
        epoch: u64,
    ) -> Result<SignInStep, CampusError> {
        let image = iaaa::captcha_image(&mut walk).await?;
        self.wait_for_captcha(Captcha {
            user: user.to_owned(),
            password: password.to_owned(),
            remember,
            services,
            jar: walk.jar,
            image,
            epoch,
        })?;
        Ok(SignInStep::NeedsCaptcha)
    }

    /// A sign-in past its captcha (`rand`, the characters read, empty when none was drawn):
    /// the second factor IAAA asks for, else the services signed in.
    #[allow(clippy::too_many_arguments)]
    async fn proceed(
        &self,
        turn: &Turn<'_>,
        user: &str,
        password: &str,
        remember: bool,
        services: Vec<Service>,
        mut walk: Walk<'_>,
        rand: &str,
        epoch: u64,
    ) -> Result<SignInStep, CampusError> {
        let factor = match iaaa::second_factor(&mut walk, user).await? {
            None => {
                let answers = Answers {
                    code: None,
                    rand: rand.to_owned(),
                };
                let done = self
                    .complete(
                        turn, user, password, remember, answers, epoch, &services, walk.jar,
                    )
                    .await;
                return self.held_for_retry(user, password, remember, epoch, done);
            }
            Some(iaaa::Mode::Otp) => SecondFactor::Otp,
            Some(iaaa::Mode::Sms) => SecondFactor::Sms {
                mobile_mask: iaaa::send_sms(&mut walk, user).await?,
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
            services,
            jar: walk.jar,
            rand: rand.to_owned(),
        })?;
        Ok(SignInStep::NeedsCode { factor })
    }

    /// Holds the password for a retry when the sign-in left services out (never for one a
    /// sign-out overtook), and hands the outcome on.
    fn held_for_retry(
        &self,
        user: &str,
        password: &str,
        remember: bool,
        epoch: u64,
        done: Result<SignInStep, CampusError>,
    ) -> Result<SignInStep, CampusError> {
        if let Ok(SignInStep::Partly { failed, .. }) = &done {
            let mut held = crate::lock(&self.retry);
            if !self.turns.signed_out_since(epoch) {
                *held = Some(Retry {
                    user: user.to_owned(),
                    password: password.to_owned(),
                    remember,
                    failed: failed.clone(),
                    epoch,
                });
            }
        }
        done
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
        let (user, sent, jar) = {
            let pending = crate::lock(&self.pending);
            let p = pending.as_ref().ok_or(CampusError::NoPendingSignIn)?;
            (p.user.clone(), p.sms_sent_ms, p.jar.clone())
        };
        let now = self.clock.now_ms();
        if let Some(at) = sent {
            let ago = (now - at).max(0) as u64 / 1000;
            if ago < 60 {
                return Err(CampusError::TooSoon(ago));
            }
        }
        let client = self.client()?;
        let mut walk = Walk::new(&client, &self.origin, jar);
        let mask = iaaa::send_sms(&mut walk, &user).await?;
        if let Some(p) = crate::lock(&self.pending).as_mut() {
            p.sms_sent_ms = Some(now);
            p.jar = walk.jar;
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
                Answers {
                    code: Some(code_for),
                    rand: pending.rand.clone(),
                },
                pending.epoch,
                &pending.services,
                pending.jar.clone(),
            )
            .await;
        drop(turn);
        if let Err(CampusError::Iaaa { code, .. }) = &done
            && (code == "E04" || code == "E05")
        {
            self.wait_for_code(pending)?;
            return done;
        }
        self.held_for_retry(
            &pending.user,
            &pending.password,
            pending.remember,
            pending.epoch,
            done,
        )
    }

    /// The services of `services` signed in one after the other (DESIGN.md §10): one IAAA
    /// sign-in per service from the walk's cookies (`jar`), each session kept as it comes. The
    /// first IAAA sign-in's refusal (a wrong password or code, IAAA down) keeps nothing and is
    /// the answer; after it, a service that fails is one failure in the answer and leaves the
    /// others. Nothing is kept when the student signed out after the sign-in started
    /// (`epoch`).
    #[allow(clippy::too_many_arguments)]
    async fn complete(
        &self,
        turn: &Turn<'_>,
        user: &str,
        password: &str,
        remember: bool,
        answers: Answers,
        epoch: u64,
        services: &[Service],
        jar: Jar,
    ) -> Result<SignInStep, CampusError> {
        let client = self.client()?;
        let mut walk = Walk::new(&client, &self.origin, jar);
        let (device, mut made) = self.device()?;
        let now = self.clock.now_ms();
        let mut code = answers.code;
        let mut first = true;
        let mut failed = Vec::new();
        // The services whose session this sign-in kept.
        let mut kept = Vec::new();
        for service in Service::ALL.into_iter().filter(|s| services.contains(s)) {
            let signed = match service {
                Service::Portal | Service::Treehole | Service::Bus | Service::Course => {
                    // The captcha answers the first IAAA sign-in, the one it was drawn for.
                    let rand = if first { answers.rand.as_str() } else { "" };
                    match iaaa::sign_in(
                        &mut walk,
                        service,
                        user,
                        password,
                        code.take(),
                        rand,
                        &device,
                    )
                    .await
                    {
                        Err(e) if first => return Err(e),
                        Err(e) => Err(e),
                        Ok(token) => iaaa::exchange(&mut walk, service, &device, &token, now).await,
                    }
                }
                Service::Card => match self.session(Service::Portal)? {
                    Some(portal) if self.account_is(user)? => {
                        iaaa::card_session(&mut walk, &portal, now).await
                    }
                    _ => Err(CampusError::CardNeedsPortal),
                },
            };
            if service != Service::Card {
                first = false;
            }
            let session = match signed {
                Ok(session) => session,
                Err(error) => {
                    failed.push(Failure { service, error });
                    continue;
                }
            };
            // What this service's sign-in keeps, in the order it is written.
            let mut writes = vec![(keys::ACCOUNT.to_owned(), user.to_owned())];
            if made && service == Service::Treehole {
                writes.push((keys::DEVICE.to_owned(), device.as_str().to_owned()));
                made = false;
            }
            let iaaa_cookies = walk.jar.for_host(wire::IAAA);
            if !iaaa_cookies.is_empty() {
                writes.push((keys::IAAA.to_owned(), iaaa_cookies.kept()));
            }
            if remember {
                writes.push((keys::PASSWORD.to_owned(), password.to_owned()));
            }
            writes.push((keys::session(service), session.kept()));
            if kept.is_empty() {
                self.forget_other_account(user)?;
            }
            match self.keep(epoch, &writes) {
                Ok(()) => kept.push(service),
                Err(CampusError::Keystore(e)) => {
                    // "Nothing was signed in": what this sign-in kept before is taken back.
                    self.take_back(&kept);
                    if !kept.is_empty() {
                        self.turns.finish(turn);
                        self.changed();
                    }
                    return Err(CampusError::Keystore(e));
                }
                Err(e) => return Err(e),
            }
        }
        let kept_any = !kept.is_empty();
        if kept_any {
            if !remember {
                self.secrets.delete(keys::PASSWORD)?;
            }
            self.turns.finish(turn);
            self.changed();
        }
        let services: Vec<String> = self
            .status()?
            .services
            .iter()
            .map(|(s, _)| s.as_str().to_owned())
            .collect();
        if failed.is_empty() {
            return Ok(SignInStep::SignedIn { services });
        }
        Ok(SignInStep::Partly { services, failed })
    }

    /// Takes back the sessions a sign-in kept when a later write of it failed; with no session
    /// left, the account goes too.
    fn take_back(&self, kept: &[Service]) {
        for service in kept {
            let _ = self.secrets.delete(&keys::session(*service));
        }
        if !Service::ALL
            .iter()
            .any(|s| matches!(self.secrets.get(&keys::session(*s)), Ok(Some(_))))
        {
            let _ = self.secrets.delete(keys::ACCOUNT);
            let _ = self.secrets.delete(keys::PASSWORD);
            let _ = self.secrets.delete(keys::IAAA);
        }
    }

    /// Whether the sessions kept are `user`'s.
    fn account_is(&self, user: &str) -> Result<bool, CampusError> {
        Ok(self.secrets.get(keys::ACCOUNT)?.as_deref() == Some(user))
    }

    /// Before a sign-in of `user` keeps its first session: another account's sessions go, so
    /// no service stays signed in as someone else.
    fn forget_other_account(&self, user: &str) -> Result<(), CampusError> {
        if self
            .secrets
            .get(keys::ACCOUNT)?
            .is_some_and(|kept| kept != user)
        {
            for service in Service::ALL {
                self.secrets.delete(&keys::session(service))?;
            }
        }
        Ok(())
    }

    /// IAAA's cookies kept by the last sign-in: what a new one starts from.
    fn iaaa_cookies(&self) -> Result<Jar, CampusError> {
        Ok(self
            .secrets
            .get(keys::IAAA)?
            .map(|kept| Jar::from_kept(&kept))
            .unwrap_or_default())
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

    /// Writes what a service's sign-in keeps (its session, the account, the password when
    /// remembered, IAAA's cookies, a Treehole device id made for it); should the keystore fail,
    /// what was written is taken back, so there is no session without its account. Nothing is
    /// kept when the student signed out after the sign-in started (`epoch`), not even when the
    /// sign-out comes while the writes run: they are checked again after, and taken back.
    fn keep(&self, epoch: u64, writes: &[(String, String)]) -> Result<(), CampusError> {
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
        Ok(())
    }

    /// Signs out: every session, the account, the remembered password and IAAA's trust of
    /// this device are deleted, and a sign-in still running keeps nothing (DESIGN.md §10: a
    /// sign-out wins over any sign-in started before it).
    pub fn sign_out(&self) -> Result<(), CampusError> {
        self.turns.sign_out();
        *crate::lock(&self.pending) = None;
        *crate::lock(&self.captcha) = None;
        *crate::lock(&self.retry) = None;
        for service in Service::ALL {
            self.secrets.delete(&keys::session(service))?;
        }
        self.secrets.delete(keys::PASSWORD)?;
        self.secrets.delete(keys::ACCOUNT)?;
        self.secrets.delete(keys::IAAA)?;
        self.changed();
        Ok(())
    }

    /// Whether any service's session exists: the consent's "campus session" (DESIGN.md §4,
    /// §10: met while any service is signed in).
    pub fn signed_in(&self) -> bool {
        Service::ALL
            .iter()
            .any(|s| matches!(self.secrets.get(&keys::session(*s)), Ok(Some(_))))
    }

    /// Whether every service has its session: what ends the chat's "sign in again" notice,
    /// which a plugin's `signin_required` raised for a service that had none.
    pub fn signed_in_everywhere(&self) -> bool {
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
        let failed = crate::lock(&self.retry)
            .as_ref()
            .map(|r| r.failed.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|f| !services.iter().any(|(s, _)| *s == f.service))
            .collect();
        Ok(Status {
            account,
            services,
            failed,
        })
    }

    fn session(&self, service: Service) -> Result<Option<Session>, CampusError> {
        Ok(self
            .secrets
            .get(&keys::session(service))?
            .and_then(|raw| serde_json::from_str(&raw).ok()))
    }

    fn client(&self) -> Result<reqwest::Client, CampusError> {
        wire::client(self.origin.timeout()).map_err(CampusError::Unreachable)
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
            return Ok(signin_required(service));
        };
        // A session past the end it recorded is ended without asking the service.
        let first = match session.expires_at_ms {
            Some(end) if end <= self.clock.now_ms() => None,
            _ => Some(self.send(service, &session, request).await?),
        };
        let answer = match first {
            Some(answered) if !expired(service, &answered) => (answered, session),
            _ => {
                // Once, never in a loop: a session that ends again right after a fresh
                // sign-in is the student's to sign in again.
                let Some(session) = self.renewed(service, finished).await? else {
                    return Ok(signin_required(service));
                };
                let finished = self.turns.finished();
                let answered = self.send(service, &session, request).await?;
                if expired(service, &answered) {
                    return self.ended(service, finished).await;
                }
                (answered, session)
            }
        };
        let (answered, session) = answer;
        let body = &answered.body;
        if service == Service::Treehole && body["code"] == 40002 {
            return Ok(json!({"status": "verification_required", "methods": ["sms", "otp"]}));
        }
        // The course API's second authorization (SERVICES.md §9, 40077 "获取授权码"): its own
        // check, answered by `grades_send_code`/`grades_verify`/`grades_verify_otp`.
        if service == Service::Treehole && body["code"] == 40077 {
            return Ok(json!({
                "status": "verification_required",
                "check": "grades",
                "methods": ["sms", "otp"],
            }));
        }
        Ok(session.secrets().value(answered.shown(service.host())))
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
        if self.turns.finished() == finished && !self.sign_in_again(&turn, service).await {
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
        Ok(signin_required(service))
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

    /// Answers Treehole's check with the authenticator's (手机令牌) code instead of an SMS one
    /// (SERVICES.md §3, §7: `check_otp`; its body is not documented, so it is this one
    /// function's guess, `{"code"}`).
    pub async fn treehole_verify_otp(&self, code: &str) -> Result<(), CampusError> {
        self.treehole_check("/chapi/api/check_otp", json!({"code": code.trim()}))
            .await
    }

    /// Sends the SMS of the course API's authorization (SERVICES.md §9, the answer to a
    /// `verification_required` whose `check` is `grades`).
    pub async fn grades_send_code(&self) -> Result<(), CampusError> {
        self.treehole_check("/chapi/api/course/send_get_token_message", json!({}))
            .await
    }

    /// Answers the course API's authorization with the SMS code the student received.
    pub async fn grades_verify(&self, code: &str) -> Result<(), CampusError> {
        self.treehole_check(
            "/chapi/api/course/mobile_message_get_token",
            json!({"code": code.trim()}),
        )
        .await
    }

    /// Answers the course API's authorization with the authenticator's (手机令牌) code.
    pub async fn grades_verify_otp(&self, code: &str) -> Result<(), CampusError> {
        self.treehole_check(
            "/chapi/api/course/password_get_token",
            json!({"code": code.trim()}),
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
        let answered = self.send(Service::Treehole, &session, &request).await?;
        if expired(Service::Treehole, &answered) {
            self.ended(Service::Treehole, finished).await?;
            return Err(CampusError::NotSignedIn);
        }
        let body = answered.body;
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
    /// cannot, or `service` is still not signed in. DESIGN.md §10: a silent sign-in never sends
    /// an SMS nor leaves a sign-in waiting with the password — when IAAA wants a second factor,
    /// it stops there and the password read for it is dropped.
    async fn sign_in_again(&self, turn: &Turn<'_>, service: Service) -> bool {
        let epoch = self.turns.epoch();
        let (Ok(Some(user)), Ok(Some(password))) = (
            self.secrets.get(keys::ACCOUNT),
            self.secrets.get(keys::PASSWORD),
        ) else {
            return false;
        };
        let (Ok(client), Ok(jar)) = (self.client(), self.iaaa_cookies()) else {
            return false;
        };
        let mut walk = Walk::new(&client, &self.origin, jar);
        match second_factor(&mut walk, &user).await {
            Ok(None) => {
                let signed = self
                    .complete(
                        turn,
                        &user,
                        &password,
                        true,
                        Answers::default(),
                        epoch,
                        &Service::ALL,
                        walk.jar,
                    )
                    .await;
                match signed {
                    Ok(SignInStep::SignedIn { services } | SignInStep::Partly { services, .. }) => {
                        services.iter().any(|s| s == service.as_str())
                    }
                    _ => false,
                }
            }
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
        let mut ask = ask_for(url, request)?;
        if service == Public::Portal {
            // SERVICES.md §4: the public queries want the page they are asked from.
            ask.headers.push((
                "Referer",
                "https://portal.pku.edu.cn/publicQuery/".to_owned(),
            ));
        }
        Ok(self
            .answer(Jar::default(), &ask)
            .await?
            .shown(service.host()))
    }

    async fn send(
        &self,
        service: Service,
        session: &Session,
        request: &CampusRequest,
    ) -> Result<Answered, CampusError> {
        let mut url = url_for(service.host(), request)?;
        if service == Service::Card && wire::query_param(&url, "synAccessSource").is_none() {
            url.query_pairs_mut().append_pair("synAccessSource", "h5");
        }
        let mut ask = ask_for(url, request)?;
        let bearer = session.bearer.as_deref().unwrap_or("");
        match service {
            Service::Card => {
                ask.headers
                    .push(("synjones-auth", format!("bearer {bearer}")));
                ask.headers.push(("synaccesssource", "h5".to_owned()));
            }
            Service::Treehole => {
                ask.headers
                    .push(("Authorization", format!("Bearer {bearer}")));
                ask.headers
                    .push(("uuid", session.uuid.clone().unwrap_or_default()));
            }
            Service::Portal | Service::Bus | Service::Course => {}
        }
        self.answer(session.jar.clone(), &ask).await
    }

    /// Sends `ask` with the cookies of `jar` (no redirect followed) and reads the answer under
    /// the 1 MiB bound: its status, its body (JSON when it is JSON) and where it redirects.
    async fn answer(&self, jar: Jar, ask: &Ask) -> Result<Answered, CampusError> {
        let client = self.client()?;
        let reply = Walk::new(&client, &self.origin, jar).send(ask).await?;
        let body = serde_json::from_str(&reply.text).unwrap_or(Value::String(reply.text));
        Ok(Answered {
            status: reply.status,
            body,
            location: reply
                .location
                .filter(|_| (300..400).contains(&reply.status)),
        })
    }
}

/// A campus service's answer to one request, no redirect followed.
struct Answered {
    status: u16,
    body: Value,
    /// Where a redirect points.
    location: Option<Url>,
}

impl Answered {
    /// What a plugin is answered: `{status, body}`, with `location` (its path and query) when
    /// the answer redirects within `host` — a plugin asks for paths on its service's host only
    /// (教学网's calendar entries redirect to their assignment's page, SERVICES.md §10).
    fn shown(&self, host: &str) -> Answer {
        let mut shown = json!({"status": self.status, "body": self.body});
        if let Some(to) = self
            .location
            .as_ref()
            .filter(|to| to.host_str() == Some(host))
        {
            let path = match to.query() {
                Some(query) => format!("{}?{query}", to.path()),
                None => to.path().to_owned(),
            };
            shown["location"] = json!(path);
        }
        shown
    }
}

/// `{status: "signin_required", service}`: what a plugin's request to a service that is not
/// signed in answers (DESIGN.md §10).
fn signin_required(service: Service) -> Answer {
    json!({"status": "signin_required", "service": service.as_str()})
}

/// The second factor IAAA wants of `user`, none when it wants none; a picture captcha is
/// refused, as the app cannot show one.
async fn second_factor(walk: &mut Walk<'_>, user: &str) -> Result<Option<iaaa::Mode>, CampusError> {
    if iaaa::captcha_required(walk, user).await? {
        return Err(CampusError::Captcha);
    }
    iaaa::second_factor(walk, user).await
}

/// The request to `url` with the plugin's method and body.
fn ask_for(url: Url, request: &CampusRequest) -> Result<Ask, CampusError> {
    let method = request
        .method
        .as_deref()
        .unwrap_or("GET")
        .to_ascii_uppercase();
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| CampusError::Chain(format!("{method} is not an HTTP method")))?;
    Ok(Ask {
        method,
        url,
        headers: Vec::new(),
        body: payload(request)?,
    })
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

/// Whether an answer says the session ended (SERVICES.md: HTTP 401; the card's `{code: 401}`;
/// the shuttle bus's `e: "10042"`, a string or a number, §11; 教学网 sending the request to
/// IAAA or to a login page, or answering its login form, §10).
fn expired(service: Service, answered: &Answered) -> bool {
    let body = &answered.body;
    answered.status == 401
        || match service {
            Service::Card => body["code"] == 401,
            Service::Bus => body["e"] == "10042" || body["e"] == 10042,
            Service::Course => course_signed_out(answered),
            Service::Portal | Service::Treehole => false,
        }
}

/// 教学网 signed out (SERVICES.md §10): a redirect to IAAA or to a path with `login` in it, or a
/// page with its login form (`name="loginForm"`, `id="loginBox"`) — a signed-out home can be a
/// 200 guest page.
fn course_signed_out(answered: &Answered) -> bool {
    let to_login = answered.location.as_ref().is_some_and(|to| {
        to.host_str() == Some(wire::IAAA) || to.path().to_ascii_lowercase().contains("login")
    });
    let form = answered.body.as_str().is_some_and(|page| {
        page.contains("name=\"loginForm\"") || page.contains("id=\"loginBox\"")
    });
    to_login || form
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
