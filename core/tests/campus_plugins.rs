//! Plugins reaching the campus through the core (DESIGN.md §10), against the campus simulator
//! on 127.0.0.1: a document's campus request through the one invoke path, the requirement met
//! only by a real sign-in, a service the plugin did not declare refused, a session ending
//! mid-turn (signed in again once, never in a loop; otherwise the student asked), and the
//! password and sessions found nowhere but the keystore.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use harness_campus_sim::{DEMO, Fault, Simulator, Vary};
use harness_core::campus::wire::{Origin, Service};
use harness_core::campus::{SignInStep, keys};
use harness_core::events::{Event, EventSink};
use harness_core::gates::LineKind;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::policy::{Actor, Answer, Code};
use harness_core::screens::{Action, CampusCheck, Live, Route, Screens};
use harness_core::secrets::{MemorySecrets, SecretStore};
use harness_core::{Engine, Options};

use common::model_server::{ModelServer, Part, Reply, data, done};
use serde_json::{Value, json};

const SOURCE: &str = "https://plugins.pku-harness.cn/card/PLUGIN.md";

/// A card plugin as a document: its balance read from the card service with the session.
fn card_document(scopes: &str) -> String {
    format!(
        r#"---
id: card
title: 校园卡
requires: [campus-session]
scopes: [{scopes}]
grants:
  allow_network: true
  url_allowlist: ["bdcard.pku.edu.cn"]
tools:
  - name: balance
    title: 校园卡余额
    description: The campus card's balance in fen.
    effect: read
    request:
      method: GET
      url: https://bdcard.pku.edu.cn/berserker-app/ykt/tsm/queryCard?synAccessSource=h5
      campus: true
      returns: ["/data/card/0/elec_accamt", "/data/card/0/sno"]
---
# 校园卡
"#
    )
}

struct Allow;

#[async_trait]
impl ApprovalBroker for Allow {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Allow
    }
}

#[derive(Default)]
struct Recorded(Mutex<Vec<String>>);

impl EventSink for Recorded {
    fn emit(&self, event: Event) {
        self.0.lock().unwrap().push(format!("{event:?}"));
    }
}

struct World {
    sim: Simulator,
    secrets: Arc<MemorySecrets>,
    events: Arc<Recorded>,
    engine: Engine,
    dir: tempfile::TempDir,
}

async fn world(scopes: &str) -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecrets::default());
    let events = Arc::new(Recorded::default());
    let mut options = Options::new(Arc::new(Allow));
    options.secrets = secrets.clone();
    options.events = events.clone();
    options.campus = Origin::development(&sim.origin()).unwrap();
    let engine = Engine::open(dir.path(), options).unwrap();
    engine.accept_terms().unwrap();
    engine
        .install_document(&card_document(scopes), SOURCE)
        .unwrap();
    World {
        sim,
        secrets,
        events,
        engine,
        dir,
    }
}

fn balance() -> Call {
    Call {
        tool: "card.balance".into(),
        actor: Actor::Agent,
        input: json!({}),
        conversation: None,
    }
}

async fn sign_in(engine: &Engine, remember: bool) {
    let step = engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, remember)
        .await
        .unwrap();
    assert!(matches!(step, SignInStep::SignedIn { .. }), "{step:?}");
}

fn iaaa_logins(sim: &Simulator) -> usize {
    sim.seen()
        .iter()
        .filter(|r| r.target == "/iaaa/oauthlogin.do")
        .count()
}

fn ran(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Ran { result, .. } => result,
        other => panic!("the call did not run: {other:?}"),
    }
}

#[tokio::test]
async fn a_card_plugin_reads_the_balance_only_once_the_student_has_signed_in() {
    let w = world("card").await;
    let before = w.engine.invoke(balance()).await;
    assert_eq!(
        before.outcome,
        Outcome::Refused {
            code: Code::Unavailable,
            message: "Plugin \"card\" needs campus-session, which this phone does not provide now. The user sets it up in Settings → Plugins → card.".into()
        }
    );
    assert!(w.sim.seen().iter().all(|r| r.host != "bdcard.pku.edu.cn"));

    sign_in(&w.engine, false).await;
    assert!(w.engine.consent().campus_session);
    let result = ran(w.engine.invoke(balance()).await.outcome);
    assert_eq!(
        result,
        json!({"/data/card/0/elec_accamt": 4250, "/data/card/0/sno": DEMO.id})
    );

    w.engine.campus().sign_out().unwrap();
    assert!(!w.engine.consent().campus_session);
    let after = w.engine.invoke(balance()).await;
    assert!(matches!(
        after.outcome,
        Outcome::Refused {
            code: Code::Unavailable,
            ..
        }
    ));
}

#[tokio::test]
async fn a_service_the_plugin_does_not_name_in_its_scopes_is_refused_before_anything_is_sent() {
    let w = world("treehole").await;
    sign_in(&w.engine, false).await;
    let sent = w.sim.seen().len();
    let outcome = w.engine.invoke(balance()).await.outcome;
    assert_eq!(
        outcome,
        Outcome::Failed {
            message: "plugin \"card\" does not name the campus service \"card\"; add \"card\" to its scopes".into()
        }
    );
    assert_eq!(w.sim.seen().len(), sent);
}

#[tokio::test]
async fn a_session_ending_mid_turn_signs_in_again_once_with_the_remembered_password() {
    let w = world("card").await;
    sign_in(&w.engine, true).await;
    let logins = iaaa_logins(&w.sim);
    w.sim.expire_sessions();
    let result = ran(w.engine.invoke(balance()).await.outcome);
    assert_eq!(result["/data/card/0/elec_accamt"], 4250);
    // One silent sign-in: one IAAA sign-in for each service IAAA signs into (the portal, Treehole, the bus, 教学网).
    assert_eq!(iaaa_logins(&w.sim), logins + 4);
    assert!(w.engine.consent().campus_session);

    // A session that ends again right after the new sign-in is not chased in a loop.
    w.sim.add_fault(Fault::CardAlwaysExpired);
    let logins = iaaa_logins(&w.sim);
    let result = ran(w.engine.invoke(balance()).await.outcome);
    assert_eq!(
        result,
        json!({"status": "signin_required", "service": "card"})
    );
    assert_eq!(iaaa_logins(&w.sim), logins + 4);
    // DESIGN §10: the card's session is dropped; the consent's campus session stays met while
    // the portal, Treehole, the bus and 教学网 are signed in.
    let status = w.engine.campus().status().unwrap();
    assert_eq!(
        status.services.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        [
            Service::Portal,
            Service::Treehole,
            Service::Bus,
            Service::Course
        ]
    );
    assert!(w.engine.consent().campus_session);
}

#[tokio::test]
async fn concurrent_requests_on_an_ended_session_share_one_sign_in() {
    // DESIGN §10: one sign-in at a time per account; requests meeting an ended session share it.
    let w = world("card").await;
    sign_in(&w.engine, true).await;
    let logins = iaaa_logins(&w.sim);
    w.sim.expire_sessions();
    let calls = (0..10).map(|_| w.engine.invoke(balance()));
    let results = futures_util::future::join_all(calls).await;
    for invoked in results {
        assert_eq!(
            ran(invoked.outcome),
            json!({"/data/card/0/elec_accamt": 4250, "/data/card/0/sno": DEMO.id})
        );
    }
    // One silent sign-in for all ten: one IAAA sign-in for each service IAAA signs into.
    assert_eq!(iaaa_logins(&w.sim), logins + 4);
    assert!(w.engine.consent().campus_session);
}

#[tokio::test]
async fn a_session_ending_without_a_remembered_password_asks_the_student_to_sign_in() {
    let w = world("card").await;
    sign_in(&w.engine, false).await;
    let logins = iaaa_logins(&w.sim);
    w.sim.expire_sessions();
    let result = ran(w.engine.invoke(balance()).await.outcome);
    assert_eq!(
        result,
        json!({"status": "signin_required", "service": "card"})
    );
    assert_eq!(iaaa_logins(&w.sim), logins);
    // The student's notice; the card is no longer signed in, so the next read is answered
    // the same without anything sent (DESIGN §10: the consent stays met while the portal and
    // Treehole are signed in).
    let lines = w.engine.drain_host_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].kind, LineKind::SignInRequired);
    assert_eq!(lines[0].plugin_id, "card");
    assert!(w.engine.consent().campus_session);
    let seen = w.sim.seen().len();
    assert_eq!(
        ran(w.engine.invoke(balance()).await.outcome),
        json!({"status": "signin_required", "service": "card"})
    );
    assert_eq!(w.sim.seen().len(), seen);
}

#[tokio::test]
async fn the_password_and_the_sessions_are_nowhere_but_the_keystore() {
    let w = world("card").await;
    sign_in(&w.engine, true).await;
    w.sim.expire_sessions();
    // A silent sign-in again, then a read: everything that is written about a call is written.
    ran(w.engine.invoke(balance()).await.outcome);
    ran(w.engine.invoke(balance()).await.outcome);

    let mut secrets = vec![DEMO.password.to_owned()];
    assert_eq!(
        w.secrets.get(keys::PASSWORD).unwrap().as_deref(),
        Some(DEMO.password)
    );
    for service in Service::ALL {
        let session: Value =
            serde_json::from_str(&w.secrets.get(&keys::session(service)).unwrap().unwrap())
                .unwrap();
        // The session's cookies as RFC 6265 keeps them: each one's `name=value; attributes`.
        for value in session["jar"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let raw = c["raw_cookie"].as_str()?;
                let pair = raw.split(';').next()?;
                Some(pair.split_once('=')?.1.to_owned())
            })
        {
            if value.len() >= 8 {
                secrets.push(value);
            }
        }
        if let Some(bearer) = session["bearer"].as_str() {
            secrets.push(bearer.to_owned());
        }
    }
    // The password, the card's and Treehole's tokens and the portal's cookie at least.
    assert!(secrets.len() >= 4, "{secrets:?}");

    w.engine.shutdown().await;
    let written = common::files(w.dir.path());
    assert!(!written.is_empty());
    let audit = format!("{:?}", w.engine.audit(10_000).unwrap());
    let events = w.events.0.lock().unwrap().join("\n");
    assert!(events.contains("card.balance") || audit.contains("card.balance"));
    for secret in &secrets {
        for (path, bytes) in &written {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds a secret",
                path.display()
            );
        }
        assert!(!audit.contains(secret.as_str()), "the audit holds a secret");
        assert!(!events.contains(secret.as_str()), "an event holds a secret");
    }
}

fn chunk(delta: Value) -> Part {
    data(&json!({"choices": [{"index": 0, "delta": delta}]}))
}

#[tokio::test]
async fn the_chat_asks_the_student_to_sign_in_again_once_a_plugin_finds_the_session_ended() {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let live = Live::new();
    let mut options = Options::new(Arc::new(Allow));
    options.secrets = Arc::new(MemorySecrets::default());
    options.events = live.sink(Arc::new(harness_core::events::NoEvents));
    options.campus = Origin::development(&sim.origin()).unwrap();
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    engine
        .install_document(&card_document("card"), SOURCE)
        .unwrap();
    sign_in(&engine, false).await;
    let model = ModelServer::start(vec![
        Reply::events([
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "card__balance", "arguments": "{}"}}]}),
            ),
            done(),
        ]),
        Reply::events([chunk(json!({"content": "请重新登录校园账号。"})), done()]),
    ])
    .await;
    model.configure(&engine, "sk-campus-0123456789");
    let screens = Screens::new(engine.clone(), live);
    assert_eq!(screens.chat("c").unwrap().campus_notice, None);

    sim.expire_sessions();
    screens
        .act(Action::SendMessage {
            conversation: "c".into(),
            text: "卡里还有多少钱？".into(),
        })
        .await
        .unwrap();
    let notice = screens.chat("c").unwrap().campus_notice.unwrap();
    assert_eq!(
        notice.action,
        Action::Open {
            route: Route::CampusAccount
        }
    );
    assert_eq!(notice.label, "校园账号的登录已过期，点这里重新登录");

    sign_in(&engine, false).await;
    assert_eq!(screens.chat("c").unwrap().campus_notice, None);
}

async fn screens_at(sim: &Simulator, clock: Arc<common::ManualClock>) -> Screens {
    let live = Live::new();
    let mut options = Options::new(Arc::new(Allow));
    options.clock = clock;
    options.events = live.sink(Arc::new(harness_core::events::NoEvents));
    options.campus = Origin::development(&sim.origin()).unwrap();
    Screens::new(Arc::new(Engine::in_memory(options).unwrap()), live)
}

fn refusal(result: Result<harness_core::screens::Acted, harness_core::EngineError>) -> String {
    result.unwrap_err().to_string()
}

#[tokio::test]
async fn the_sign_in_screen_asks_for_the_sms_code_on_the_same_screen_and_a_new_one_after_60_s() {
    let sim = Simulator::start(0).await.unwrap();
    let clock = common::ManualClock::at(1_764_560_000_000);
    let screens = screens_at(&sim, clock.clone()).await;
    let form = screens.campus_account().unwrap().form.unwrap();
    assert_eq!(form.remember_label, "在这台手机上记住密码");
    let sign_in = |user: &str, password: &str| Action::CampusSignIn {
        user: user.into(),
        password: password.into(),
        remember: false,
    };
    assert_eq!(
        refusal(screens.act(sign_in(DEMO.id, "wrong")).await),
        "学号或密码不正确（E01）"
    );
    screens
        .act(sign_in("2100023456", "pku-sms-password"))
        .await
        .unwrap();
    let screen = screens.campus_account().unwrap();
    assert!(screen.form.is_none() && screen.signed_in.is_none());
    let code = screen.code.unwrap();
    assert_eq!(code.prompt, "请输入发送到 138****0000 的短信验证码");
    assert_eq!(code.resend, None);
    assert_eq!(code.resend_wait.as_deref(), Some("60 秒后可以重新发送"));
    assert_eq!(
        refusal(screens.act(Action::CampusResendCode).await),
        "验证码 0 秒前刚发送，60 秒后才能重新发送"
    );

    clock.set(1_764_560_061_000);
    let code = screens.campus_account().unwrap().code.unwrap();
    assert_eq!(code.resend_wait, None);
    assert_eq!(
        code.resend.map(|b| b.action),
        Some(Action::CampusResendCode)
    );
    // (The simulator itself keeps IAAA's 60 s by its own clock, so no second code is sent here.)
    assert_eq!(
        refusal(
            screens
                .act(Action::CampusSubmitCode {
                    code: "000000".into()
                })
                .await
        ),
        "短信验证码不正确或已过期：请重新发送（E04）"
    );
    // A wrong code keeps the code step, so the student types it again.
    assert!(screens.campus_account().unwrap().code.is_some());
    screens
        .act(Action::CampusSubmitCode {
            code: harness_campus_sim::SMS_CODE.into(),
        })
        .await
        .unwrap();
    let signed = screens.campus_account().unwrap().signed_in.unwrap();
    assert_eq!(signed.account, "2100023456");
    assert!(screens.engine().consent().campus_session);
}

#[tokio::test]
async fn the_authenticators_code_has_no_resend_and_a_captcha_is_shown_with_a_new_picture_on_request()
 {
    let sim = Simulator::start(0).await.unwrap();
    let screens = screens_at(&sim, common::ManualClock::at(0)).await;
    screens
        .engine()
        .change_setting(harness_core::settings::Change::Language(
            harness_core::settings::Language::En,
        ))
        .unwrap();
    let sign_in = |user: &str, password: &str| Action::CampusSignIn {
        user: user.into(),
        password: password.into(),
        remember: true,
    };
    // SERVICES.md §6.1: IAAA's captcha picture on the same screen, with its field and a new
    // picture on request.
    screens
        .act(sign_in("2100045678", "pku-captcha-password"))
        .await
        .unwrap();
    let screen = screens.campus_account().unwrap();
    assert!(screen.form.is_none() && screen.code.is_none() && screen.signed_in.is_none());
    let captcha = screen.captcha.unwrap();
    assert_eq!(captcha.account, "2100045678");
    assert_eq!(
        captcha.prompt,
        "IAAA asks for its captcha: type the characters in the picture"
    );
    assert_eq!(
        captcha.image.as_deref(),
        Some(harness_campus_sim::CAPTCHA_IMAGE)
    );
    assert_eq!(captcha.code_label, "Captcha");
    assert_eq!(captcha.refresh.action, Action::CampusRefreshCaptcha);
    screens.act(Action::CampusRefreshCaptcha).await.unwrap();
    assert_eq!(
        refusal(
            screens
                .act(Action::CampusSubmitCaptcha {
                    code: "zzzz".into()
                })
                .await
        ),
        "the captcha's characters were not right: type those of the new picture"
    );
    screens.act(captcha.cancel.action).await.unwrap();
    assert!(screens.campus_account().unwrap().form.is_some());
    assert_eq!(
        refusal(screens.act(sign_in(" ", "")).await),
        "Enter your student id and password"
    );
    screens
        .act(sign_in("2100034567", "pku-otp-password"))
        .await
        .unwrap();
    let code = screens.campus_account().unwrap().code.unwrap();
    assert_eq!(
        code.prompt,
        "Enter the 6-digit code of your authenticator (手机令牌)"
    );
    assert_eq!((code.resend, code.resend_wait), (None, None));
    screens.act(code.cancel.action).await.unwrap();
    assert!(screens.campus_account().unwrap().form.is_some());
    assert_eq!(
        refusal(
            screens
                .act(Action::CampusSubmitCode {
                    code: harness_campus_sim::OTP_CODE.into()
                })
                .await
        ),
        "no sign-in is waiting for a code; start the sign-in again"
    );
}

#[tokio::test]
async fn the_account_screen_shows_each_services_state_and_retries_only_the_failed_one() {
    // DESIGN §10: a failure of one service is shown per service in words, with "retry"; the
    // retry signs in only it, without the password typed again.
    let sim = Simulator::start(0).await.unwrap();
    sim.vary(Vary::Flaky("treehole".into()));
    let screens = screens_at(&sim, common::ManualClock::at(0)).await;
    screens
        .act(Action::CampusSignIn {
            user: DEMO.id.into(),
            password: DEMO.password.into(),
            remember: false,
        })
        .await
        .unwrap();
    let signed = screens.campus_account().unwrap().signed_in.unwrap();
    let lines: Vec<(String, String)> = signed
        .services
        .iter()
        .map(|l| (l.label.clone(), l.value.clone()))
        .collect();
    assert_eq!(
        lines,
        [
            ("校内门户".to_owned(), "已登录".to_owned()),
            (
                "校园卡".to_owned(),
                "已登录，至 2100-01-01 08:00".to_owned()
            ),
            (
                "树洞".to_owned(),
                "未登录：树洞暂时无法登录（可能在维护），请稍后重试".to_owned()
            ),
            ("班车".to_owned(), "已登录".to_owned()),
            ("教学网".to_owned(), "已登录".to_owned()),
        ]
    );
    let retry = signed.retry.unwrap();
    assert_eq!(retry.label, "重试未登录的服务");
    assert_eq!(retry.action, Action::CampusRetry);
    assert!(screens.engine().consent().campus_session);
    let logins = iaaa_logins(&sim);
    screens.act(retry.action).await.unwrap();
    assert_eq!(iaaa_logins(&sim), logins + 1);
    let signed = screens.campus_account().unwrap().signed_in.unwrap();
    assert_eq!(signed.retry, None);
    assert_eq!(signed.services[2].value, "已登录，至 2100-01-01 08:00");
}

#[tokio::test]
async fn a_service_answering_past_the_timeout_is_said_in_words_and_the_others_stay_signed_in() {
    // issue 35 / DESIGN §10: Treehole holding its sign-in's answer past the client's bound is
    // said per service, in words; the portal and the card stay signed in, and a retry signs in
    // Treehole alone.
    let sim = Simulator::start(0).await.unwrap();
    sim.vary(Vary::Slow("treehole".into()));
    let live = Live::new();
    let mut options = Options::new(Arc::new(Allow));
    options.clock = common::ManualClock::at(0);
    options.events = live.sink(Arc::new(harness_core::events::NoEvents));
    options.campus = Origin::development(&sim.origin())
        .unwrap()
        .with_timeout(std::time::Duration::from_secs(2));
    let screens = Screens::new(Arc::new(Engine::in_memory(options).unwrap()), live);
    screens
        .act(Action::CampusSignIn {
            user: DEMO.id.into(),
            password: DEMO.password.into(),
            remember: false,
        })
        .await
        .unwrap();
    sim.release_slow();
    let signed = screens.campus_account().unwrap().signed_in.unwrap();
    let lines: Vec<(String, String)> = signed
        .services
        .iter()
        .map(|l| (l.label.clone(), l.value.clone()))
        .collect();
    // Treehole says why in words; every other service stays signed in.
    for (label, value) in &lines {
        if label == "树洞" {
            assert_eq!(value, "未登录：树洞 2 秒内没有回答，请稍后重试");
        } else {
            assert!(value.starts_with("已登录"), "{label}: {value}");
        }
    }
    assert!(lines.iter().any(|(label, _)| label == "树洞"), "{lines:?}");
    assert!(screens.engine().consent().campus_session);
    screens.act(signed.retry.unwrap().action).await.unwrap();
    let signed = screens.campus_account().unwrap().signed_in.unwrap();
    assert_eq!(signed.retry, None);
}

#[tokio::test]
async fn treeholes_check_screen_confirms_with_the_authenticators_code() {
    // DESIGN §10: the verification screen answers `methods: ["sms", "otp"]`, either.
    let sim = Simulator::start(0).await.unwrap();
    let screens = screens_at(&sim, common::ManualClock::at(0)).await;
    screens
        .act(Action::CampusSignIn {
            user: DEMO.id.into(),
            password: DEMO.password.into(),
            remember: false,
        })
        .await
        .unwrap();
    let check = screens.campus_check(CampusCheck::Treehole);
    assert_eq!(check.otp_submit_label, "用手机令牌的动态码确认");
    assert_eq!(
        refusal(
            screens
                .act(Action::CampusCheckVerifyOtp {
                    check: CampusCheck::Treehole,
                    code: "000000".into()
                })
                .await
        ),
        "Treehole: 令牌验证码错误"
    );
    screens
        .act(Action::CampusCheckVerifyOtp {
            check: CampusCheck::Treehole,
            code: harness_campus_sim::OTP_CODE.into(),
        })
        .await
        .unwrap();
    assert!(
        sim.seen()
            .iter()
            .all(|r| r.target != "/chapi/api/jwt_send_msg")
    );
}
