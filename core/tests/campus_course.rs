//! 教学网 (course.pku.edu.cn, Blackboard Learn) against the campus simulator on 127.0.0.1
//! (SERVICES.md §10): signed in from the student's one IAAA sign-in beside the other services
//! (appid `blackboard`, its redirects followed with their cookies), its session in the
//! keystore; an ended session — sent to IAAA or a login page, or answered with the login form —
//! signs in again once, silently, or tells the plugin to sign in; the extra trust anchor its
//! incomplete certificate chain needs, believed for that host alone; and the shipped `course`
//! plugin: this term's courses, the teachers' announcements (untrusted), the DDLs of the next
//! seven days in local time with their submission and grade, an assignment's page, and the
//! check "明天有作业截止时提醒我".

mod common;

use std::sync::Arc;

use harness_campus_sim::{ANNOUNCEMENTS, ASSIGNMENTS, COURSES, DEMO, Simulator};
use harness_core::campus::trust::{Anchored, PINNED};
use harness_core::campus::wire::{Origin, Service};
use harness_core::campus::{CampusRequest, SignInStep, keys};
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::policy::{Actor, Answer};
use harness_core::scheduler::{Notification, Owner, RunOutcome};
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

/// Friday 2026-12-04 10:00 in Beijing: the fixture's DDLs lie from Thursday to the next
/// Saturday.
const FRIDAY_10: i64 = 1_796_349_600_000;

async fn world(remember: bool) -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecrets::default());
    let mut options = Options::new(Arc::new(Refuses));
    options.secrets = secrets.clone();
    options.campus = Origin::development(&sim.origin()).unwrap();
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    options.clock = common::ManualClock::at(FRIDAY_10);
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    engine.open_conversation("c").unwrap();
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

async fn read(w: &World, tool: &str, input: Value) -> Value {
    let call = Call {
        tool: tool.into(),
        actor: Actor::Agent,
        input,
        conversation: Some("c".into()),
    };
    match w.engine.invoke(call).await.outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("{tool} did not run: {other:?}"),
    }
}

#[tokio::test]
async fn the_courses_of_this_term_are_listed_with_id_code_name_and_term() {
    let w = world(false).await;
    let courses: Vec<Value> = COURSES
        .iter()
        .map(|c| json!({"id": c.id, "code": c.code, "name": c.name, "term": c.term}))
        .collect();
    assert_eq!(
        read(&w, "course.courses", json!({})).await,
        json!({ "courses": courses })
    );
    // Course names are the school's, not a teacher's: the turn stays clean.
    assert!(!w.engine.conversation("c").unwrap().tainted);
}

#[tokio::test]
async fn announcements_are_the_teachers_text_newest_first_and_taint_the_turn() {
    // Issue 43: announcements are teachers' text, untrusted.
    let w = world(false).await;
    let all = read(&w, "course.announcements", json!({})).await;
    let course = |id: &str| COURSES.iter().find(|c| c.id == id).unwrap().name;
    let expected: Vec<Value> = ANNOUNCEMENTS
        .iter()
        .map(|n| json!({"id": n.id, "course": course(n.course), "title": n.title, "by": n.by, "text": n.body}))
        .collect();
    let posted: Vec<&str> = all["announcements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["posted"].as_str().unwrap())
        .collect();
    assert_eq!(
        posted,
        ["2026-12-02 15:10", "2026-11-30 09:30", "2026-11-20 08:00"]
    );
    let without_time: Vec<Value> = all["announcements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let mut n = n.clone();
            n.as_object_mut().unwrap().remove("posted");
            n
        })
        .collect();
    assert_eq!(without_time, expected);
    assert!(w.engine.conversation("c").unwrap().tainted);
    // One course by words of its name.
    let one = read(
        &w,
        "course.announcements",
        json!({"course": "数据结构", "limit": 5}),
    )
    .await;
    assert_eq!(one["announcements"].as_array().unwrap().len(), 1);
    assert_eq!(one["announcements"][0]["title"], "作业4 截止时间说明");
}

/// The fixture's assignments due from `from` to seven days on, earliest first, as the plugin
/// should list them: the due time in Beijing's local "YYYY-MM-DD HH:mm".
fn due_within_a_week(from: i64) -> Vec<Value> {
    let course = |id: &str| COURSES.iter().find(|c| c.id == id).unwrap().name;
    let mut due: Vec<_> = ASSIGNMENTS
        .iter()
        .filter(|a| a.due_ms >= from && a.due_ms <= from + 7 * 86_400_000)
        .collect();
    due.sort_by_key(|a| a.due_ms);
    due.iter()
        .map(|a| {
            json!({
                "id": a.event, "title": a.title, "course": course(a.course), "due": a.due_local,
                "submitted": a.submitted, "graded": a.grade.is_some(),
                "score": a.grade.map(|(s, p)| format!("{s}/{p}")),
                "courseId": a.course, "contentId": a.content,
            })
        })
        .collect()
}

#[tokio::test]
async fn deadlines_of_the_next_seven_days_are_in_local_time_with_submission_state() {
    // Issue 43: course.deadlines lists the fixture's DDLs in local time, across the week's end.
    let w = world(false).await;
    let listed = read(&w, "course.deadlines", json!({})).await;
    let expected = due_within_a_week(FRIDAY_10);
    let dues: Vec<&str> = expected
        .iter()
        .map(|d| d["due"].as_str().unwrap())
        .collect();
    assert_eq!(
        dues,
        ["2026-12-05 23:59", "2026-12-06 12:00", "2026-12-08 08:00"]
    );
    assert_eq!(listed["deadlines"], json!(expected));
    // Tomorrow (Saturday 2026-12-05) has one DDL not submitted.
    assert_eq!(listed["tomorrow"], json!([expected[0]]));
    // The graded one, past: its page says submitted, graded and the score.
    let graded = read(
        &w,
        "course.assignment",
        json!({"courseId": "_80002_1", "contentId": "_7001_1"}),
    )
    .await;
    assert_eq!(
        graded,
        json!({"title": "作业3：链表", "due": "2026-12-03 23:59", "instructions": "实现双向链表。",
               "submitted": true, "graded": true, "score": "92/100"})
    );
}

#[tokio::test]
async fn a_check_for_tomorrows_deadlines_tells_once() {
    // Issue 43: "明天有作业截止时提醒我" works out of the box: a check on course.deadlines.
    let w = world(false).await;
    let spec = json!({
        "name": "明天的 DDL",
        "schedule": {"everyMinutes": 60},
        "check": {
            "tool": "course.deadlines",
            "when": {"path": "tomorrow[*].id", "op": "exists", "new": true},
            "notify": {"title": "明天有 DDL", "body": "有作业明天截止"}
        }
    });
    let job = w.engine.add_job(&spec, Owner::User).unwrap();
    let due = job.next_due_ms.unwrap();
    let told = RunOutcome::Notified {
        notification: Notification {
            title: "明天有 DDL".into(),
            body: "有作业明天截止".into(),
        },
    };
    assert_eq!(w.engine.run_due(due).await.unwrap()[0].outcome, told);
    assert_eq!(
        w.engine.run_due(due + 60 * 60_000).await.unwrap()[0].outcome,
        RunOutcome::Quiet
    );
}
