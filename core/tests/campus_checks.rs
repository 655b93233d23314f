//! The second checks a campus service asks after the sign-in, each answered on its own screen
//! (DESIGN.md §10): Treehole's SMS check and the course API's authorization that reading grades
//! needs (SERVICES.md §9, 40077). A status answer names its check, and every tap that mends it
//! opens that check's screen, never another service's.

mod common;

use std::sync::Arc;

use harness_campus_sim::{ACCOUNTS, OTP_CODE, SMS_CODE, Simulator};
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::screens::{Acted, Action, CampusCheck, Live, Route, Screens};
use harness_core::secrets::MemorySecrets;
use harness_core::{Engine, Options};

struct World {
    _sim: Simulator,
    engine: Arc<Engine>,
    screens: Screens,
    _dir: tempfile::TempDir,
}

/// The shipped plugins signed in to the simulator, Treehole's own SMS check done, the course
/// API's authorization not yet.
async fn world() -> World {
    let sim = Simulator::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(common::NobodyThere));
    options.secrets = Arc::new(MemorySecrets::default());
    options.campus = Origin::development(&sim.origin()).unwrap();
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    let student = ACCOUNTS[0];
    let mut step = engine
        .campus()
        .sign_in(student.id, student.password, false)
        .await
        .unwrap();
    if let SignInStep::NeedsCode { .. } = step {
        step = engine.campus().submit_code(SMS_CODE).await.unwrap();
    }
    // Treehole's session is what both checks are answered through.
    let treehole = match &step {
        SignInStep::SignedIn { .. } => true,
        SignInStep::Partly { services, .. } => services.iter().any(|s| s == "treehole"),
        _ => false,
    };
    assert!(treehole, "{step:?}");
    engine.campus().treehole_send_code().await.unwrap();
    engine.campus().treehole_verify(SMS_CODE).await.unwrap();
    let screens = Screens::new(engine.clone(), Live::new());
    World {
        _sim: sim,
        engine,
        screens,
        _dir: dir,
    }
}

fn tap(tool: &str) -> Action {
    Action::RunTool { tool: tool.into() }
}

#[tokio::test]
async fn a_tap_on_the_grades_authorization_opens_its_screen_not_treeholes() {
    // DESIGN.md §10 and SERVICES.md §9: 40077 is the course API's own check
    // (`check: "grades"`), answered with its own codes; Treehole's SMS check would not clear it.
    let w = world().await;
    assert_eq!(
        w.screens.act(tap("grades.scores")).await.unwrap(),
        Acted::Open {
            route: Route::GradesCheck
        }
    );
    assert_eq!(
        w.screens.act(tap("grades.gpa")).await.unwrap(),
        Acted::Open {
            route: Route::GradesCheck
        }
    );
    // Once answered the same tap reads the grades.
    w.engine.campus().grades_verify_otp(OTP_CODE).await.unwrap();
    assert_eq!(w.screens.act(tap("grades.gpa")).await.unwrap(), Acted::Done);
}

#[tokio::test]
async fn the_grades_authorization_is_answered_on_its_own_screen_by_sms_or_authenticator() {
    // SERVICES.md §9: the course API's authorization takes an SMS code it sends, or the
    // authenticator's (手机令牌) code; its screen sends and answers that check, not Treehole's.
    let w = world().await;
    let screen = w.screens.campus_check(CampusCheck::Grades);
    assert_eq!(screen.check, CampusCheck::Grades);
    assert_eq!(screen.title, "成绩查询授权");
    assert_eq!(
        screen.explanation,
        "查看成绩前，课程系统要求先完成授权（获取授权码）：发送短信验证码，收到后填在下面；或者填手机令牌上的 6 位动态码。"
    );
    assert_eq!(
        screen.send.action,
        Action::CampusCheckSendCode {
            check: CampusCheck::Grades
        }
    );
    // An SMS code before its SMS was sent is the course API's refusal.
    let unsent = w
        .screens
        .act(Action::CampusCheckVerify {
            check: CampusCheck::Grades,
            code: SMS_CODE.into(),
        })
        .await
        .unwrap_err();
    assert_eq!(unsent.to_string(), "Treehole: 授权码错误");
    w.screens.act(screen.send.action).await.unwrap();
    assert_eq!(
        w.screens
            .act(Action::CampusCheckVerify {
                check: CampusCheck::Grades,
                code: SMS_CODE.into(),
            })
            .await
            .unwrap(),
        Acted::Done
    );
    assert_eq!(
        w.screens.act(tap("grades.scores")).await.unwrap(),
        Acted::Done
    );
}

#[tokio::test]
async fn the_grades_authorizations_screen_takes_the_authenticators_code() {
    let w = world().await;
    let wrong = w
        .screens
        .act(Action::CampusCheckVerifyOtp {
            check: CampusCheck::Grades,
            code: "000000".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(wrong.to_string(), "Treehole: 令牌验证码错误");
    w.screens
        .act(Action::CampusCheckVerifyOtp {
            check: CampusCheck::Grades,
            code: OTP_CODE.into(),
        })
        .await
        .unwrap();
    assert_eq!(w.screens.act(tap("grades.gpa")).await.unwrap(), Acted::Done);
}
