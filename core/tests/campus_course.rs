//! 教学网 (course.pku.edu.cn, Blackboard Learn) against the campus simulator on 127.0.0.1
//! (SERVICES.md §10): signed in from the student's one IAAA sign-in beside the other services
//! (appid `blackboard`, its redirects followed with their cookies), its session in the
//! keystore; an ended session — sent to IAAA or a login page, or answered with the login form —
//! signs in again once, silently, or tells the plugin to sign in; and the extra trust anchor its
//! incomplete certificate chain needs, believed for that host alone.

use std::sync::Arc;

use harness_campus_sim::{DEMO, Simulator};
use harness_core::campus::trust::{Anchored, PINNED};
use harness_core::campus::wire::{Origin, Service};
use harness_core::campus::{CampusRequest, SignInStep, keys};
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;
use harness_core::secrets::{MemorySecrets, SecretStore};
use harness_core::{Engine, Options};
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use serde_json::{Value, json};

const COURSE: &str = "course.pku.edu.cn";

struct Refuses;

#[async_trait::async_trait]
impl ApprovalBroker for Refuses {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

struct World {
    sim: Simulator,
    secrets: Arc<MemorySecrets>,
    engine: Arc<Engine>,
    _dir: tempfile::TempDir,
}

async fn world(remember: bool) -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecrets::default());
    let mut options = Options::new(Arc::new(Refuses));
    options.secrets = secrets.clone();
    options.campus = Origin::development(&sim.origin()).unwrap();
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    let step = engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, remember)
        .await
        .unwrap();
    assert_eq!(
        step,
        SignInStep::SignedIn {
            services: ["portal", "card", "treehole", "bus", "course"]
                .map(String::from)
                .to_vec()
        }
    );
    World {
        sim,
        secrets,
        engine,
        _dir: dir,
    }
}

fn get(path: &str) -> CampusRequest {
    CampusRequest {
        path: path.into(),
        ..CampusRequest::default()
    }
}

const HOME: &str = "/webapps/portal/execute/tabs/tabAction?tab_tab_group_id=_1_1";

fn iaaa_logins(sim: &Simulator) -> usize {
    sim.seen()
        .iter()
        .filter(|r| r.target == "/iaaa/oauthlogin.do")
        .count()
}

async fn home(w: &World) -> Value {
    let (path, query) = HOME.split_once('?').unwrap();
    let (name, value) = query.split_once('=').unwrap();
    let request = CampusRequest {
        query: vec![(name.into(), value.into())],
        ..get(path)
    };
    w.engine
        .campus()
        .request(Service::Course, &request)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_course_website_signs_in_with_iaaa_appid_blackboard_and_keeps_its_cookies_in_the_keystore()
 {
    // SERVICES.md §10: appid `blackboard`, the token spent at campusLogin, redirects followed
    // to the session cookies `s_session_id` and `JSESSIONID`.
    let w = world(false).await;
    let logins: Vec<String> = w
        .sim
        .seen()
        .iter()
        .filter(|r| r.target == "/iaaa/oauthlogin.do")
        .map(|r| r.body.clone())
        .collect();
    assert!(
        logins.iter().any(|b| b.contains("appid=blackboard")),
        "{logins:?}"
    );
    let kept = w
        .secrets
        .get(&keys::session(Service::Course))
        .unwrap()
        .unwrap();
    assert!(kept.contains("s_session_id"), "{kept}");
    assert!(kept.contains("JSESSIONID"), "{kept}");
    let page = home(&w).await;
    assert_eq!(page["status"], 200);
    let body = page["body"].as_str().unwrap();
    assert!(body.contains("00132301: 高等数学 (B) (一)"), "{body}");
    // The session's values never reach the plugin.
    let session: Value = serde_json::from_str(&kept).unwrap();
    for cookie in session["jar"].as_array().unwrap() {
        let value = cookie["raw_cookie"].as_str().unwrap_or("");
        let value = value.split(';').next().unwrap().split_once('=').unwrap().1;
        assert!(!page.to_string().contains(value), "{value}");
    }
}

#[tokio::test]
async fn an_ended_course_session_signs_in_again_once_with_the_remembered_password() {
    // SERVICES.md §10: ended when sent to IAAA, to a path with `login`, or answered the login
    // form; each is read as ended, and the remembered password signs in again once.
    let w = world(true).await;
    for path in [
        // The guest home with its login form (a 200).
        HOME,
        // The calendar sends to /webapps/login/.
        "/webapps/calendar/calendarData/selectedCalendarEvents?start=0&end=0&course_id=&mode=personal",
        // Any other page sends to IAAA.
        "/webapps/blackboard/execute/announcement?method=search&course_id=_80001_1",
    ] {
        w.sim.expire_sessions();
        let before = iaaa_logins(&w.sim);
        let (p, q) = path.split_once('?').unwrap();
        let request = CampusRequest {
            query: url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect(),
            ..get(p)
        };
        let answer = w
            .engine
            .campus()
            .request(Service::Course, &request)
            .await
            .unwrap();
        assert_eq!(answer["status"], 200, "{path}: {answer}");
        assert!(iaaa_logins(&w.sim) > before, "{path}: no sign-in again");
    }
}

#[tokio::test]
async fn an_ended_course_session_without_a_remembered_password_is_signin_required() {
    let w = world(false).await;
    w.sim.expire_sessions();
    assert_eq!(
        home(&w).await,
        json!({"status": "signin_required", "service": "course"})
    );
    let status = w.engine.campus().status().unwrap();
    assert!(
        !status.services.iter().any(|(s, _)| *s == Service::Course),
        "{status:?}"
    );
}

/// A certificate for course.pku.edu.cn and portal.pku.edu.cn issued by a test CA, and the CA.
fn test_chain() -> (CertificateDer<'static>, &'static [u8]) {
    let leaf = CertificateDer::from_pem_slice(include_bytes!("fixtures/tls/course-and-portal.pem"))
        .unwrap();
    (leaf, include_bytes!("fixtures/tls/test-ca.pem"))
}

fn believed(verifier: &Anchored, leaf: &CertificateDer<'_>, host: &str) -> Result<(), String> {
    verifier
        .verify_server_cert(
            leaf,
            &[],
            &ServerName::try_from(host.to_owned()).unwrap(),
            &[],
            UnixTime::now(),
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn an_extra_anchor_pinned_to_the_course_host_is_not_trusted_for_another_host() {
    // SERVICES.md §10 TLS: the AlphaSSL anchor completes course.pku.edu.cn's chain only.
    let (leaf, ca) = test_chain();
    let pinned = Anchored::new(&[(COURSE, ca)]).unwrap();
    assert_eq!(believed(&pinned, &leaf, COURSE), Ok(()));
    // The same certificate names portal.pku.edu.cn too: there, the platform's roots alone.
    assert!(
        believed(&pinned, &leaf, "portal.pku.edu.cn")
            .unwrap_err()
            .contains("UnknownIssuer"),
    );
    // Without the pin, course.pku.edu.cn is not believed either.
    let unpinned = Anchored::new(&[]).unwrap();
    assert!(believed(&unpinned, &leaf, COURSE).is_err());
}

#[test]
fn the_bundled_alphassl_anchors_are_for_the_course_host_alone() {
    assert_eq!(PINNED.map(|(host, _)| host), [COURSE, COURSE]);
    // They are certificates the verifier takes.
    assert!(Anchored::new(&PINNED).is_ok());
}
