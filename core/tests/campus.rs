//! The campus account against the campus simulator on 127.0.0.1 (SERVICES.md): IAAA's sign-in
//! with each second factor and each refusal, the service sessions kept in the keystore only,
//! a plugin's request with the session added and redacted out, expiry, and each fault.

use std::sync::{Arc, Mutex};

use harness_campus_sim::{
    ACCOUNTS, CAPTCHA_CODE, CAPTCHA_IMAGE, CARD_TOKEN_EXP, DEMO, Fault, MOBILE_MASK, OTP_CODE,
    SMS_CODE, Simulator, TRUST_COOKIE, Vary,
};
use harness_core::campus::wire::{Origin, Public, Service};
use harness_core::campus::{
    Campus, CampusError, CampusRequest, Failure, SecondFactor, SignInStep, keys,
};
use harness_core::clock::SystemClock;
use harness_core::secrets::{MemorySecrets, SecretError, SecretStore};
use serde_json::{Value, json};

/// A keystore that keeps what it is given and can be told to fail after some writes.
#[derive(Default)]
struct Keystore {
    inner: MemorySecrets,
    writes_left: Mutex<Option<usize>>,
    keys: Mutex<Vec<String>>,
}

impl SecretStore for Keystore {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        self.inner.get(key)
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        if let Some(left) = self.writes_left.lock().unwrap().as_mut() {
            if *left == 0 {
                return Err(SecretError("the keystore is locked".into()));
            }
            *left -= 1;
        }
        self.keys.lock().unwrap().push(key.to_owned());
        self.inner.set(key, value)
    }

    fn delete(&self, key: &str) -> Result<(), SecretError> {
        self.inner.delete(key)
    }
}

impl Keystore {
    fn held(&self) -> Vec<String> {
        let mut held: Vec<String> = self
            .keys
            .lock()
            .unwrap()
            .iter()
            .filter(|k| matches!(self.inner.get(k), Ok(Some(_))))
            .cloned()
            .collect();
        held.sort();
        held.dedup();
        held
    }
}

async fn world() -> (Simulator, Arc<Keystore>, Campus) {
    world_within(harness_core::campus::wire::TIMEOUT).await
}

/// The world with the campus client's requests bounded by `timeout` (a service the simulator
/// holds past it is met without waiting 10 s).
async fn world_within(timeout: std::time::Duration) -> (Simulator, Arc<Keystore>, Campus) {
    let sim = Simulator::start(0).await.unwrap();
    let keystore = Arc::new(Keystore::default());
    let campus = Campus::new(
        keystore.clone(),
        Arc::new(SystemClock),
        Origin::development(&sim.origin())
            .unwrap()
            .with_timeout(timeout),
        Box::new(|_| {}),
    );
    (sim, keystore, campus)
}

/// The client's bound in the tests of a slow service: well past any answer of the simulator,
/// short of the 10 s the simulator holds a slow one (it is released as soon as the client gave
/// up).
const SLOW_TEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

fn balance() -> CampusRequest {
    CampusRequest {
        path: "/berserker-app/ykt/tsm/queryCard?synAccessSource=h5".into(),
        ..CampusRequest::default()
    }
}

fn signed_in() -> SignInStep {
    SignInStep::SignedIn {
        services: vec![
            "portal".into(),
            "card".into(),
            "treehole".into(),
            "bus".into(),
            "course".into(),
        ],
    }
}

/// What a sign-in keeps: the account, each service's session and this install's Treehole
/// device id.
fn every_session() -> Vec<String> {
    let mut all = vec![
        keys::ACCOUNT.to_owned(),
        keys::session(Service::Portal),
        keys::session(Service::Card),
        keys::session(Service::Treehole),
        keys::session(Service::Bus),
        keys::session(Service::Course),
        keys::DEVICE.to_owned(),
    ];
    all.sort();
    all
}

/// Whether the card has its session (the others may still have theirs).
fn card_signed_in(campus: &Campus) -> bool {
    campus
        .status()
        .unwrap()
        .services
        .iter()
        .any(|(s, _)| *s == Service::Card)
}

#[tokio::test]
async fn the_demo_student_signs_in_and_the_card_answers_its_balance_in_fen_without_the_session() {
    let (sim, keystore, campus) = world().await;
    let step = campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    assert_eq!(step, signed_in());
    assert!(campus.signed_in());
    assert_eq!(keystore.held(), every_session());
    let answer = campus.request(Service::Card, &balance()).await.unwrap();
    assert_eq!(answer["status"], 200);
    assert_eq!(answer["body"]["data"]["card"][0]["elec_accamt"], 4250);
    assert_eq!(answer["body"]["data"]["card"][0]["sno"], DEMO.id);
    // The password left the core sealed: no request carried it in the clear.
    let seen = sim.seen();
    assert!(
        seen.iter()
            .all(|r| !r.body.contains(DEMO.password) && !r.target.contains(DEMO.password))
    );
    // One IAAA sign-in per service that IAAA signs into: the portal, Treehole, the bus and
    // 教学网.
    let logins = seen
        .iter()
        .filter(|r| r.target == "/iaaa/oauthlogin.do")
        .count();
    assert_eq!(logins, 4);
    // The card request carried the session; the answer carries none of it.
    let card = seen
        .iter()
        .rfind(|r| r.host == "bdcard.pku.edu.cn")
        .unwrap();
    let jwt = card
        .headers
        .iter()
        .find(|(n, _)| n == "synjones-auth")
        .map(|(_, v)| v.trim_start_matches("bearer ").to_owned())
        .unwrap();
    assert!(!answer.to_string().contains(&jwt));
    campus.sign_out().unwrap();
    assert!(!campus.signed_in());
    // Only the install's Treehole device id stays: nothing of the account.
    assert_eq!(keystore.held(), [keys::DEVICE]);
    assert_eq!(
        campus.request(Service::Card, &balance()).await.unwrap(),
        json!({"status": "signin_required", "service": "card"})
    );
}

#[tokio::test]
async fn an_sms_student_is_asked_once_a_wrong_code_keeps_the_sign_in_and_the_right_one_finishes() {
    let (sim, keystore, campus) = world().await;
    let student = ACCOUNTS[1];
    let step = campus
        .sign_in(student.id, student.password, true)
        .await
        .unwrap();
    assert_eq!(
        step,
        SignInStep::NeedsCode {
            factor: SecondFactor::Sms {
                mobile_mask: MOBILE_MASK.into()
            }
        }
    );
    assert!(matches!(
        campus.resend_sms().await,
        Err(CampusError::TooSoon(0))
    ));
    let wrong = campus.submit_code("000000").await.unwrap_err();
    assert_eq!(
        wrong.to_string(),
        "the SMS code is wrong or has expired: send a new one (E04)"
    );
    assert_eq!(campus.submit_code(SMS_CODE).await.unwrap(), signed_in());
    let mut expected = every_session();
    expected.extend([keys::PASSWORD.to_owned(), keys::IAAA.to_owned()]);
    expected.sort();
    assert_eq!(keystore.held(), expected);
    // The second factor was asked once: Treehole's sign-in went through on the trusted device.
    let sms = sim
        .seen()
        .iter()
        .filter(|r| r.target.starts_with("/iaaa/sendSMSCode.do"))
        .count();
    assert_eq!(sms, 1);
}

#[tokio::test]
async fn an_otp_student_gives_the_authenticators_code() {
    let (_sim, _keystore, campus) = world().await;
    let student = ACCOUNTS[2];
    assert_eq!(
        campus
            .sign_in(student.id, student.password, false)
            .await
            .unwrap(),
        SignInStep::NeedsCode {
            factor: SecondFactor::Otp
        }
    );
    assert_eq!(
        campus.submit_code("111111").await.unwrap_err().to_string(),
        "the authenticator (手机令牌) code is wrong or missing (E05)"
    );
    assert_eq!(campus.submit_code(OTP_CODE).await.unwrap(), signed_in());
}

#[tokio::test]
async fn a_wrong_password_keeps_nothing_and_a_captcha_is_shown_and_answered() {
    let (sim, keystore, campus) = world().await;
    let wrong = campus.sign_in(DEMO.id, "not-it", true).await.unwrap_err();
    assert_eq!(
        wrong.to_string(),
        "the student id or password is wrong (E01)"
    );
    assert_eq!(keystore.held(), Vec::<String>::new());
    // SERVICES.md §6.1: IAAA's picture is fetched and shown; characters it does not take keep
    // the sign-in waiting with a new picture; the right ones sign in.
    let captcha = ACCOUNTS[3];
    let step = campus.sign_in(captcha.id, captcha.password, true).await;
    assert_eq!(step, Ok(SignInStep::NeedsCaptcha));
    assert_eq!(
        campus.captcha(),
        Some((captcha.id.to_owned(), CAPTCHA_IMAGE.to_vec()))
    );
    assert!(!campus.signed_in());
    assert_eq!(
        campus.submit_captcha("zzzz").await,
        Err(CampusError::CaptchaWrong)
    );
    assert!(campus.captcha().is_some());
    assert_eq!(
        campus.submit_captcha(&CAPTCHA_CODE.to_uppercase()).await,
        Ok(signed_in())
    );
    assert_eq!(campus.captcha(), None);
    let drawn = sim
        .seen()
        .into_iter()
        .filter(|r| r.target.starts_with("/iaaa/servlet/DrawServlet?Rand="))
        .count();
    assert_eq!(drawn, 2);
    // The captcha answered the IAAA sign-in it was drawn for, in the same IAAA session.
    let logins: Vec<_> = sim
        .seen()
        .into_iter()
        .filter(|r| r.target == "/iaaa/oauthlogin.do")
        .collect();
    // The last four: the portal's (the first), Treehole's, the bus's and 教学网's.
    let last = &logins[logins.len() - 4..];
    assert!(last[0].body.contains("randCode=P4K7"), "{}", last[0].body);
    for later in &last[1..] {
        assert!(later.body.contains("randCode=&"), "{}", later.body);
    }
}

#[tokio::test]
async fn iaaa_asking_a_captcha_after_a_wrong_password_shows_it_and_a_new_one_on_refresh() {
    let (sim, _keystore, campus) = world().await;
    sim.vary(Vary::CaptchaAfterWrongPassword);
    let wrong = campus.sign_in(DEMO.id, "not-it", false).await;
    assert_eq!(
        wrong.unwrap_err().to_string(),
        "the student id or password is wrong (E01)"
    );
    assert_eq!(
        campus.sign_in(DEMO.id, DEMO.password, false).await,
        Ok(SignInStep::NeedsCaptcha)
    );
    campus.refresh_captcha().await.unwrap();
    assert_eq!(campus.submit_captcha(CAPTCHA_CODE).await, Ok(signed_in()));
    let drawn = sim
        .seen()
        .into_iter()
        .filter(|r| r.target.starts_with("/iaaa/servlet/DrawServlet"))
        .count();
    assert_eq!(drawn, 2);
}

#[tokio::test]
async fn iaaa_answering_html_is_unavailable_and_a_chain_off_the_campus_hosts_is_refused() {
    let (sim, keystore, campus) = world().await;
    sim.add_fault(Fault::IaaaHtml(503));
    let down = campus
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap_err();
    assert_eq!(
        down.to_string(),
        "the campus services could not be reached: iaaa.pku.edu.cn answered 503 Service Unavailable without its JSON: it may be down for maintenance; try again later"
    );
    assert_eq!(keystore.held(), Vec::<String>::new());
    // DESIGN §10: the card's chain failing fails the card alone; the portal and Treehole stay
    // signed in, and the card's failure is said in words.
    let card_failed = |reason: &str| SignInStep::Partly {
        services: vec![
            "portal".into(),
            "treehole".into(),
            "bus".into(),
            "course".into(),
        ],
        failed: vec![Failure {
            service: Service::Card,
            error: CampusError::Chain(reason.into()),
        }],
    };
    sim.clear_faults();
    sim.add_fault(Fault::CardRedirectTo(
        "https://evil.example.org/steal?t=1".into(),
    ));
    let off = campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    assert_eq!(
        off,
        card_failed(
            "the sign-in was redirected off the campus hosts, to https://evil.example.org/steal; nothing was sent there"
        )
    );
    assert!(sim.seen().iter().all(|r| !r.host.contains("evil")));
    sim.clear_faults();
    sim.add_fault(Fault::NoCardToken);
    let no_token = campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    assert_eq!(
        no_token,
        card_failed(
            "the campus card's sign-in ended at an answer (401) without its synjones-auth token: the service may be down for maintenance; try again later"
        )
    );
    assert!(!keystore.held().contains(&keys::session(Service::Card)));
    assert!(keystore.held().contains(&keys::session(Service::Portal)));
}

#[tokio::test]
async fn an_expired_session_signs_in_again_once_with_the_remembered_password_else_asks() {
    let (sim, _keystore, campus) = world().await;
    campus.sign_in(DEMO.id, DEMO.password, true).await.unwrap();
    sim.expire_sessions();
    let answer = campus.request(Service::Card, &balance()).await.unwrap();
    assert_eq!(answer["body"]["data"]["card"][0]["elec_accamt"], 4250);
    let (sim2, _keystore2, forgetful) = world().await;
    forgetful
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap();
    sim2.expire_sessions();
    assert_eq!(
        forgetful.request(Service::Card, &balance()).await.unwrap(),
        json!({"status": "signin_required", "service": "card"})
    );
    // The ended session is gone: the card is no longer signed in.
    assert!(!card_signed_in(&forgetful));
    drop(sim);
}

#[tokio::test]
async fn treeholes_sms_check_is_a_status_object() {
    let (_sim, _keystore, campus) = world().await;
    campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    let feed = CampusRequest {
        path: "/chapi/api/v3/hole/list_comments?page=1&limit=10".into(),
        ..CampusRequest::default()
    };
    assert_eq!(
        campus.request(Service::Treehole, &feed).await.unwrap(),
        json!({"status": "verification_required", "methods": ["sms", "otp"]})
    );
    // The verification screen's two taps: send the code, then the wrong one, then the right.
    campus.treehole_send_code().await.unwrap();
    assert_eq!(
        campus
            .treehole_verify("000000")
            .await
            .unwrap_err()
            .to_string(),
        "Treehole: 验证码错误"
    );
    campus.treehole_verify(SMS_CODE).await.unwrap();
    let answer = campus.request(Service::Treehole, &feed).await.unwrap();
    assert_eq!(answer["status"], 200);
    assert_eq!(answer["body"]["data"]["list"][0]["pid"], 7_001_234);
}

#[tokio::test]
async fn a_failing_keystore_leaves_no_session_behind() {
    let (_sim, keystore, campus) = world().await;
    *keystore.writes_left.lock().unwrap() = Some(2);
    let failed = campus
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .unwrap_err();
    assert_eq!(
        failed.to_string(),
        "the keystore failed (the keystore is locked); nothing was signed in"
    );
    assert_eq!(keystore.held(), Vec::<String>::new());
    assert!(!campus.signed_in());
}

#[tokio::test]
async fn an_answer_over_one_mib_is_refused() {
    let (sim, _keystore, campus) = world().await;
    campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    sim.add_fault(Fault::HugeCard(1024 * 1024 + 10));
    let refused = campus.request(Service::Card, &balance()).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the campus services could not be reached: the campus service answered more than 1 MiB; it was refused"
    );
    let _: Value = json!(null);
}

#[tokio::test]
async fn the_public_services_answer_with_no_session_and_only_under_their_own_paths() {
    let (sim, _keystore, campus) = world().await;
    let crowd = CampusRequest {
        method: Some("POST".into()),
        path: "/publicQuery/canteenQuery/retrCarteenInfos.do".into(),
        ..CampusRequest::default()
    };
    let answer = campus.public_request(Public::Portal, &crowd).await.unwrap();
    assert_eq!(answer["status"], 200);
    assert_eq!(answer["body"]["rows"][0]["name"], "学一食堂");
    assert_eq!(answer["body"]["rows"][0]["ip"], 692);
    let rooms = CampusRequest {
        path: "/publicQuery/classroomQuery/retrClassRoomFree.do".into(),
        query: vec![
            ("buildingName".into(), "二教".into()),
            ("time".into(), "今天".into()),
        ],
        ..CampusRequest::default()
    };
    let answer = campus.public_request(Public::Portal, &rooms).await.unwrap();
    assert_eq!(answer["body"]["rows"][1]["room"], "二教203");
    let books = CampusRequest {
        path: "/BookAPI/new_opac/query?cc_all=算法&rows=10&start=0".into(),
        ..CampusRequest::default()
    };
    let answer = campus
        .public_request(Public::Library, &books)
        .await
        .unwrap();
    assert_eq!(answer["body"]["response"]["numFound"], 1);
    assert_eq!(answer["body"]["response"]["docs"][0]["title"], "算法导论");

    // Signed in, a public query still carries no session.
    campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    campus.public_request(Public::Portal, &crowd).await.unwrap();
    let last = sim.seen().pop().unwrap();
    assert_eq!(last.host, "portal.pku.edu.cn");
    assert!(
        last.headers
            .iter()
            .all(|(n, _)| n != "cookie" && n != "authorization")
    );
    // The portal's signed-in pages are not a public service's.
    let sent = sim.seen().len();
    let inside = CampusRequest {
        method: Some("POST".into()),
        path: "/portal2017/account/getBasicInfo.do".into(),
        ..CampusRequest::default()
    };
    assert_eq!(
        campus
            .public_request(Public::Portal, &inside)
            .await
            .unwrap_err()
            .to_string(),
        "the public service answers only paths under /publicQuery/"
    );
    assert_eq!(sim.seen().len(), sent);
}

/// The card's balance asked after every session ended, with the remembered password: the
/// silent sign-in runs.
async fn signed_in_then_expired(sim: &Simulator, campus: &Campus, student: usize) {
    let student = ACCOUNTS[student];
    let mut step = campus
        .sign_in(student.id, student.password, true)
        .await
        .unwrap();
    if step != signed_in() {
        let code = match step {
            SignInStep::NeedsCode {
                factor: SecondFactor::Otp,
            } => OTP_CODE,
            _ => SMS_CODE,
        };
        step = campus.submit_code(code).await.unwrap();
    }
    assert_eq!(step, signed_in());
    sim.expire_sessions();
}

#[tokio::test]
async fn a_sign_out_during_a_silent_sign_in_wins_and_leaves_nothing_of_the_account() {
    // DESIGN §10: a sign-out wins over any sign-in started before it.
    let (sim, keystore, campus) = world().await;
    signed_in_then_expired(&sim, &campus, 0).await;
    // The silent sign-in stops at its last hop, Treehole's callback, while the student signs out.
    let mut treehole = sim.hold("/chapi/cas_iaaa_login");
    let card = balance();
    let (answer, ()) = tokio::join!(campus.request(Service::Card, &card), async {
        let release = treehole.next().await;
        campus.sign_out().unwrap();
        drop(release);
    });
    assert_eq!(
        answer.unwrap(),
        json!({"status": "signin_required", "service": "card"})
    );
    // Only the install's Treehole device id stays: nothing of the account.
    assert_eq!(keystore.held(), [keys::DEVICE]);
    assert!(!campus.signed_in());
    assert_eq!(campus.status().unwrap().account, None);
}

#[tokio::test]
async fn a_sign_in_the_student_started_before_a_sign_out_is_not_kept() {
    // DESIGN §10: a sign-out wins over any sign-in started before it, the student's own too.
    let (sim, keystore, campus) = world().await;
    let mut treehole = sim.hold("/chapi/cas_iaaa_login");
    let (signed, ()) = tokio::join!(campus.sign_in(DEMO.id, DEMO.password, true), async {
        let release = treehole.next().await;
        campus.sign_out().unwrap();
        drop(release);
    });
    assert_eq!(signed, Err(CampusError::NotSignedIn));
    assert_eq!(keystore.held(), Vec::<String>::new());
    assert!(!campus.signed_in());
}

#[tokio::test]
async fn a_sign_in_waiting_for_its_code_is_not_left_behind_by_a_sign_out_that_came_first() {
    // DESIGN §10: a sign-out wins; the password stays in memory only while a sign-in waits.
    let (sim, _keystore, campus) = world().await;
    let student = ACCOUNTS[2];
    let mut asked = sim.hold("/iaaa/isMobileAuthen.do");
    let (signed, ()) = tokio::join!(campus.sign_in(student.id, student.password, true), async {
        let release = asked.next().await;
        campus.sign_out().unwrap();
        drop(release);
    });
    assert_eq!(signed, Err(CampusError::NotSignedIn));
    assert_eq!(campus.waiting_for(), None);
    assert_eq!(
        campus.submit_code(OTP_CODE).await,
        Err(CampusError::NoPendingSignIn)
    );
}

#[tokio::test]
async fn a_code_the_student_submitted_before_a_sign_out_signs_nothing_in() {
    // DESIGN §10: a sign-out wins over any sign-in started before it, one finishing with its
    // code too.
    let (sim, keystore, campus) = world().await;
    let student = ACCOUNTS[1];
    let step = campus
        .sign_in(student.id, student.password, true)
        .await
        .unwrap();
    assert!(matches!(step, SignInStep::NeedsCode { .. }), "{step:?}");
    let mut treehole = sim.hold("/chapi/cas_iaaa_login");
    let (signed, ()) = tokio::join!(campus.submit_code(SMS_CODE), async {
        let release = treehole.next().await;
        campus.sign_out().unwrap();
        drop(release);
    });
    assert_eq!(signed, Err(CampusError::NotSignedIn));
    assert_eq!(keystore.held(), Vec::<String>::new());
    assert_eq!(campus.waiting_for(), None);
    assert!(!campus.signed_in());
}

#[tokio::test]
async fn a_silent_sign_in_never_sends_an_sms_nor_waits_for_a_code() {
    // DESIGN §10: a silent re-sign-in never sends an SMS; when IAAA wants a code again the
    // plugin is answered signin_required and nothing keeps the password waiting.
    for student in [1, 2] {
        let (sim, _keystore, campus) = world().await;
        signed_in_then_expired(&sim, &campus, student).await;
        sim.forget_trusted_devices();
        let sms = |sim: &Simulator| {
            sim.seen()
                .iter()
                .filter(|r| r.target.starts_with("/iaaa/sendSMSCode.do"))
                .count()
        };
        let sent = sms(&sim);
        let logins = sim
            .seen()
            .iter()
            .filter(|r| r.target == "/iaaa/oauthlogin.do")
            .count();
        assert_eq!(
            campus.request(Service::Card, &balance()).await.unwrap(),
            json!({"status": "signin_required", "service": "card"}),
            "{student}"
        );
        assert_eq!(sms(&sim), sent, "{student}");
        assert_eq!(campus.waiting_for(), None, "{student}");
        // Nor was the password tried without the code IAAA wants.
        let tried = sim
            .seen()
            .iter()
            .filter(|r| r.target == "/iaaa/oauthlogin.do")
            .count();
        assert_eq!(tried, logins, "{student}");
        assert!(!card_signed_in(&campus));
    }
}

/// Treehole's device id as one install's last sign-in and feed request sent it: the `uuid` of
/// the `redirUrl` IAAA was given, of the callback, and the `uuid` header.
async fn treehole_device(sim: &Simulator, campus: &Campus) -> (String, String, String) {
    let from = sim.seen().len();
    campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    let feed = CampusRequest {
        path: "/chapi/api/v3/hole/list_comments?page=1&limit=10".into(),
        ..CampusRequest::default()
    };
    campus.request(Service::Treehole, &feed).await.unwrap();
    let seen = sim.seen().split_off(from);
    let uuid_of = |url: &str| {
        let url = url::Url::parse(url).unwrap();
        url.query_pairs()
            .find(|(n, _)| n == "uuid")
            .map(|(_, v)| v.into_owned())
            .unwrap()
    };
    let login = seen
        .iter()
        .find(|r| r.target == "/iaaa/oauthlogin.do" && r.body.contains("PKU+Helper"))
        .unwrap();
    let redir = url::form_urlencoded::parse(login.body.as_bytes())
        .find(|(n, _)| n == "redirUrl")
        .map(|(_, v)| uuid_of(&v))
        .unwrap();
    let callback = seen
        .iter()
        .find(|r| r.target.starts_with("/chapi/cas_iaaa_login"))
        .map(|r| uuid_of(&format!("https://{}{}", r.host, r.target)))
        .unwrap();
    let header = seen
        .iter()
        .find(|r| r.target.starts_with("/chapi/api/v3/"))
        .and_then(|r| r.headers.iter().find(|(n, _)| n == "uuid"))
        .map(|(_, v)| v.clone())
        .unwrap();
    (redir, callback, header)
}

#[tokio::test]
async fn each_install_makes_its_own_treehole_device_id_once_and_sends_it_in_query_and_header() {
    // SERVICES.md §7: the uuid is the last group of a random v4 UUID made once per device and
    // kept; the header carries the whole UUID.
    let (sim, keystore, campus) = world().await;
    let (redir, callback, header) = treehole_device(&sim, &campus).await;
    assert_eq!(redir, callback);
    assert_eq!(redir.len(), 12);
    assert!(
        redir
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
        "{redir}"
    );
    let whole = header
        .strip_prefix("Web_PKUHOLE_2.0.0_WEB_UUID_")
        .unwrap_or_else(|| panic!("{header}"));
    let groups: Vec<&str> = whole.split('-').collect();
    assert_eq!(
        groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
        [8, 4, 4, 4, 12],
        "{whole}"
    );
    assert!(groups[2].starts_with('4'), "a v4 UUID: {whole}");
    assert_eq!(groups[4], redir);
    assert_eq!(keystore.get(keys::DEVICE).unwrap().as_deref(), Some(whole));

    // The same install keeps it across a sign-out and a new sign-in.
    campus.sign_out().unwrap();
    assert_eq!(
        treehole_device(&sim, &campus).await,
        (redir.clone(), callback, header.clone())
    );

    // Another install has its own.
    let other = Campus::new(
        Arc::new(Keystore::default()),
        Arc::new(SystemClock),
        Origin::development(&sim.origin()).unwrap(),
        Box::new(|_| {}),
    );
    let (theirs, _, their_header) = treehole_device(&sim, &other).await;
    assert_ne!(theirs, redir);
    assert_ne!(their_header, header);
}

#[tokio::test]
async fn a_service_echoing_the_session_as_keys_hands_the_plugin_none_of_it() {
    // DESIGN §10: the plugin never sees the session, wherever the answer holds it.
    let (sim, keystore, campus) = world().await;
    campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    let kept: Value = serde_json::from_str(
        &keystore
            .get(&keys::session(Service::Card))
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    let jwt = kept["bearer"].as_str().unwrap().to_owned();
    let echo = json!({
        jwt.clone(): {"synjones-auth": format!("bearer {jwt}")},
        "headers": [{format!("bearer {jwt}"): 1}],
    });
    sim.add_fault(Fault::Answer {
        path: "/berserker-app/ykt/tsm/queryCard".into(),
        status: 200,
        content_type: "application/json".into(),
        body: echo.to_string(),
    });
    let answer = campus.request(Service::Card, &balance()).await.unwrap();
    assert_eq!(
        answer,
        json!({"status": 200, "body": {
            "[redacted]": {"synjones-auth": "bearer [redacted]"},
            "headers": [{"bearer [redacted]": 1}],
        }})
    );
}

/// The services a sign-in under `vary` fails at first, and the failures as the student reads
/// them (DESIGN §10: each service on its own; the card is reached through the portal).
fn failed_first(vary: &Vary) -> Vec<Failure> {
    let down = |service: &str| {
        CampusError::Unreachable(format!(
            "{service} answered 502 while signing in: it may be down for maintenance; try again later"
        ))
    };
    let maintenance = |service: &str, wanted: &str| {
        CampusError::Chain(format!(
            "{service}'s sign-in ended at an answer (200) without its {wanted}: the service may be down for maintenance; try again later"
        ))
    };
    let failure = |service, error| Failure { service, error };
    match vary {
        Vary::Flaky(s) if s == "portal" => vec![
            failure(Service::Portal, down("the portal")),
            failure(Service::Card, CampusError::CardNeedsPortal),
        ],
        Vary::Flaky(s) if s == "card" => vec![failure(Service::Card, down("the campus card"))],
        Vary::Flaky(_) => vec![failure(Service::Treehole, down("Treehole"))],
        Vary::Maintenance(s) if s == "portal" => vec![
            failure(Service::Portal, maintenance("the portal", "SESSION cookie")),
            failure(Service::Card, CampusError::CardNeedsPortal),
        ],
        Vary::Maintenance(s) if s == "card" => vec![failure(
            Service::Card,
            maintenance("the campus card", "synjones-auth token"),
        )],
        Vary::Maintenance(_) => vec![failure(Service::Treehole, maintenance("Treehole", "token"))],
        // issue 35: an answer held just past the client's timeout is said as such, per service.
        Vary::Slow(s) if s == "portal" => vec![
            failure(Service::Portal, CampusError::TimedOut(2)),
            failure(Service::Card, CampusError::CardNeedsPortal),
        ],
        Vary::Slow(s) if s == "card" => vec![failure(Service::Card, CampusError::TimedOut(2))],
        Vary::Slow(_) => vec![failure(Service::Treehole, CampusError::TimedOut(2))],
        _ => Vec::new(),
    }
}

#[tokio::test]
async fn the_sign_in_and_a_read_of_each_service_pass_under_every_variation_of_the_wire() {
    // DESIGN §10: redirects by the HTTP rules (relative Locations, 303, one more hop), cookies
    // per RFC 6265 (Domain, Secure, SameSite, Expires, unrelated ones), gzip answers, and a
    // service failing once leaving the others signed in until a retry signs in only it.
    for vary in Vary::every() {
        let slow = matches!(vary, Vary::Slow(_));
        let (sim, _keystore, campus) = if slow {
            world_within(SLOW_TEST_TIMEOUT).await
        } else {
            world().await
        };
        sim.vary(vary.clone());
        let step = campus.sign_in(DEMO.id, DEMO.password, false).await;
        // The held answer goes once the client has given up on it.
        sim.release_slow();
        let failed = failed_first(&vary);
        if failed.is_empty() {
            assert_eq!(step, Ok(signed_in()), "{vary:?}");
        } else {
            let services = Service::ALL
                .into_iter()
                .filter(|s| !failed.iter().any(|f| f.service == *s))
                .map(|s| s.as_str().to_owned())
                .collect();
            assert_eq!(
                step,
                Ok(SignInStep::Partly { services, failed }),
                "{vary:?}"
            );
            let logins = iaaa_logins(&sim);
            assert_eq!(campus.retry().await, Ok(signed_in()), "{vary:?}");
            // Only the failed services signed in again: one IAAA sign-in each for the portal
            // or Treehole, none for the card alone (it comes through the portal's session).
            let again = match vary {
                Vary::Flaky(ref s) | Vary::Maintenance(ref s) | Vary::Slow(ref s)
                    if s == "card" =>
                {
                    0
                }
                _ => 1,
            };
            assert_eq!(iaaa_logins(&sim), logins + again, "{vary:?}");
        }
        let card = campus.request(Service::Card, &balance()).await.unwrap();
        assert_eq!(
            card["body"]["data"]["card"][0]["elec_accamt"], 4250,
            "{vary:?}"
        );
        let basic = CampusRequest {
            method: Some("POST".into()),
            path: "/portal2017/account/getBasicInfo.do".into(),
            body: Some(json!({})),
            ..CampusRequest::default()
        };
        let portal = campus.request(Service::Portal, &basic).await.unwrap();
        assert_eq!(portal["body"]["name"], DEMO.name, "{vary:?}");
        campus.treehole_send_code().await.unwrap();
        campus.treehole_verify(SMS_CODE).await.unwrap();
        let feed = CampusRequest {
            path: "/chapi/api/v3/hole/list_comments?page=1&limit=10".into(),
            ..CampusRequest::default()
        };
        let treehole = campus.request(Service::Treehole, &feed).await.unwrap();
        assert_eq!(
            treehole["body"]["data"]["list"][0]["pid"], 7_001_234,
            "{vary:?}"
        );
        // Every request asked for gzip, and nothing went anywhere but a campus host.
        let seen = sim.seen();
        assert!(
            seen.iter().all(|r| r
                .headers
                .iter()
                .any(|(n, v)| n == "accept-encoding" && v == "gzip")),
            "{vary:?}"
        );
        if vary == Vary::CookieAttrs {
            // An unrelated cookie set with Domain went back to every campus host; the one
            // already expired went nowhere.
            let cookies = |host: &str| {
                seen.iter()
                    .filter(|r| r.host == host)
                    .filter_map(|r| r.headers.iter().find(|(n, _)| n == "cookie"))
                    .map(|(_, v)| v.clone())
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            assert!(cookies("treehole.pku.edu.cn").contains("Hm_lvt_sim=1796000000"));
            assert!(seen.iter().all(|r| {
                !r.headers
                    .iter()
                    .any(|(n, v)| n == "cookie" && v.contains("stale="))
            }));
        }
    }
}

fn iaaa_logins(sim: &Simulator) -> usize {
    sim.seen()
        .iter()
        .filter(|r| r.target == "/iaaa/oauthlogin.do")
        .count()
}

#[tokio::test]
async fn a_service_that_fails_leaves_the_others_signed_in_and_a_retry_signs_in_only_it() {
    // DESIGN §10: each service kept as it comes; one failing leaves the others; a retry signs
    // in only the failed ones without the password again, while it is held for that sign-in.
    let (sim, keystore, campus) = world().await;
    sim.vary(Vary::Flaky("treehole".into()));
    let step = campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    let failure = Failure {
        service: Service::Treehole,
        error: CampusError::Unreachable(
            "Treehole answered 502 while signing in: it may be down for maintenance; try again later".into(),
        ),
    };
    assert_eq!(
        step,
        SignInStep::Partly {
            services: vec![
                "portal".into(),
                "card".into(),
                "bus".into(),
                "course".into(),
            ],
            failed: vec![failure.clone()],
        }
    );
    // The consent's campus session is met while any service is signed in.
    assert!(campus.signed_in());
    assert!(!campus.signed_in_everywhere());
    assert_eq!(campus.status().unwrap().failed, [failure]);
    let card = campus.request(Service::Card, &balance()).await.unwrap();
    assert_eq!(card["body"]["data"]["card"][0]["elec_accamt"], 4250);
    let feed = CampusRequest {
        path: "/chapi/api/v3/hole/list_comments?page=1&limit=10".into(),
        ..CampusRequest::default()
    };
    assert_eq!(
        campus.request(Service::Treehole, &feed).await.unwrap(),
        json!({"status": "signin_required", "service": "treehole"})
    );
    // The password was not remembered and is not in the keystore; the retry needs it not.
    assert!(!keystore.held().contains(&keys::PASSWORD.to_owned()));
    let logins = iaaa_logins(&sim);
    assert_eq!(campus.retry().await, Ok(signed_in()));
    let after: Vec<_> = sim
        .seen()
        .into_iter()
        .filter(|r| r.target == "/iaaa/oauthlogin.do")
        .skip(logins)
        .collect();
    assert_eq!(after.len(), 1);
    assert!(
        after[0].body.contains("appid=PKU+Helper"),
        "{}",
        after[0].body
    );
    assert!(campus.status().unwrap().failed.is_empty());
    assert!(campus.signed_in_everywhere());
}

#[tokio::test]
async fn the_password_held_for_a_retry_goes_when_the_sign_in_screen_closes() {
    // DESIGN §10: held for that sign-in, never longer than the sign-in screen is open, unless
    // remembered.
    let (sim, _keystore, campus) = world().await;
    sim.vary(Vary::Flaky("treehole".into()));
    let step = campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    assert!(matches!(step, SignInStep::Partly { .. }), "{step:?}");
    campus.cancel_sign_in();
    assert_eq!(campus.retry().await, Err(CampusError::NoRetry));
    assert!(campus.status().unwrap().failed.is_empty());
    // Remembered, the retry reads it from the keystore whenever it is asked.
    let (sim, _keystore, campus) = world().await;
    sim.vary(Vary::Flaky("treehole".into()));
    campus.sign_in(DEMO.id, DEMO.password, true).await.unwrap();
    campus.cancel_sign_in();
    assert_eq!(campus.retry().await, Ok(signed_in()));
}

#[tokio::test]
async fn iaaas_cookies_are_kept_with_the_sessions_and_sent_back_whatever_their_name() {
    // DESIGN §10: IAAA's cookies go back to it as it set them; the core names none of them.
    let (sim, keystore, campus) = world().await;
    let student = ACCOUNTS[1];
    campus
        .sign_in(student.id, student.password, false)
        .await
        .unwrap();
    campus.submit_code(SMS_CODE).await.unwrap();
    assert!(keystore.held().contains(&keys::IAAA.to_owned()));
    let kept = keystore.get(keys::IAAA).unwrap().unwrap();
    assert!(kept.contains(TRUST_COOKIE), "{kept}");
    sim.expire_sessions();
    let sms = |sim: &Simulator| {
        sim.seen()
            .iter()
            .filter(|r| r.target.starts_with("/iaaa/sendSMSCode.do"))
            .count()
    };
    let sent = sms(&sim);
    // The next sign-in is trusted: no code asked, no SMS sent.
    assert_eq!(
        campus.sign_in(student.id, student.password, false).await,
        Ok(signed_in())
    );
    assert_eq!(sms(&sim), sent);
    let last = sim
        .seen()
        .into_iter()
        .rfind(|r| r.target == "/iaaa/oauthlogin.do")
        .unwrap();
    let cookie = last.headers.iter().find(|(n, _)| n == "cookie").unwrap();
    assert!(
        cookie.1.contains(&format!("{TRUST_COOKIE}=")),
        "{}",
        cookie.1
    );
}

/// A clock the test sets.
struct Clocked(std::sync::atomic::AtomicI64);

impl harness_core::clock::Clock for Clocked {
    fn now_ms(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[tokio::test]
async fn each_session_records_its_end_and_one_past_it_is_ended_without_asking_the_service() {
    // DESIGN §10 / SERVICES.md §2, §7, §8: the card's end is its JWT's `exp`, Treehole's its
    // `expires_in`; the portal says none. Past its end a session is not sent.
    let sim = Simulator::start(0).await.unwrap();
    let clock = Arc::new(Clocked(std::sync::atomic::AtomicI64::new(
        1_796_000_000_000,
    )));
    let campus = Campus::new(
        Arc::new(MemorySecrets::default()),
        clock.clone(),
        Origin::development(&sim.origin()).unwrap(),
        Box::new(|_| {}),
    );
    campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    let end = CARD_TOKEN_EXP * 1000;
    assert_eq!(
        campus.status().unwrap().services,
        [
            (Service::Portal, None),
            (Service::Card, Some(end)),
            (Service::Treehole, Some(4_102_444_800_000)),
            // The bus says no end: its `e: "10042"` tells (SERVICES.md §11).
            (Service::Bus, None),
            // Nor does 教学网: it sends an ended session to sign in (SERVICES.md §10).
            (Service::Course, None),
        ]
    );
    let card = campus.request(Service::Card, &balance()).await.unwrap();
    assert_eq!(card["body"]["data"]["card"][0]["elec_accamt"], 4250);
    clock.0.store(end, std::sync::atomic::Ordering::SeqCst);
    let sent = sim.seen().len();
    assert_eq!(
        campus.request(Service::Card, &balance()).await.unwrap(),
        json!({"status": "signin_required", "service": "card"})
    );
    assert_eq!(sim.seen().len(), sent);
    assert!(!card_signed_in(&campus));
}

#[tokio::test]
async fn treeholes_check_takes_the_authenticators_code_as_well_as_an_sms_one() {
    // DESIGN §10: `verification_required` offers `methods: ["sms", "otp"]`; the OTP answers it
    // through Treehole's `check_otp` (SERVICES.md §3), with no SMS sent.
    let (sim, _keystore, campus) = world().await;
    campus.sign_in(DEMO.id, DEMO.password, false).await.unwrap();
    let feed = CampusRequest {
        path: "/chapi/api/v3/hole/list_comments?page=1&limit=10".into(),
        ..CampusRequest::default()
    };
    assert_eq!(
        campus.request(Service::Treehole, &feed).await.unwrap(),
        json!({"status": "verification_required", "methods": ["sms", "otp"]})
    );
    assert_eq!(
        campus.treehole_verify_otp("000000").await,
        Err(CampusError::Treehole("令牌验证码错误".into()))
    );
    campus.treehole_verify_otp(OTP_CODE).await.unwrap();
    let answer = campus.request(Service::Treehole, &feed).await.unwrap();
    assert_eq!(answer["body"]["data"]["list"][0]["pid"], 7_001_234);
    let checks: Vec<String> = sim
        .seen()
        .into_iter()
        .filter(|r| r.target.starts_with("/chapi/api/") && !r.target.contains("/v3/"))
        .map(|r| format!("{} {}", r.target, r.body))
        .collect();
    assert_eq!(
        checks,
        [
            "/chapi/api/check_otp {\"code\":\"000000\"}".to_owned(),
            format!("/chapi/api/check_otp {{\"code\":\"{OTP_CODE}\"}}"),
        ]
    );
}
