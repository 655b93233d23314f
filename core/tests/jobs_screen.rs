//! The jobs screen's "new job" form and what it says about notifications: the form offers the
//! data sources by their titles and the fields their last read had, a draft becomes the
//! scheduler's own job (checked by the scheduler alone), a refused draft writes nothing and
//! names the form's field in the student's language, and while the phone's notifications are
//! off the screen, the row and the run's record say so instead of "notified".

mod common;

use std::sync::Arc;

use common::{ManualClock, NobodyThere, utc};
use harness_core::consent::{Permission, PermissionState};
use harness_core::plugins::samples::Samples;
use harness_core::scheduler::{
    AgentJob, AgentReply, JobRunner, Notification, Owner, RunOutcome, Task,
};
use harness_core::screens::{
    Action, ButtonRole, JobComparison, JobDraft, JobFieldOption, JobKind, JobScheduleKind,
    JobsScreen, Live, Route, Screens,
};
use harness_core::settings::{Change, Language};
use harness_core::{Engine, Options};
use serde_json::json;

const T0: &str = "2026-05-01 00:00";

/// The app on the sample catalog (its campus card holds 42.5 yuan), the terms accepted, at T0
/// (08:00 in Asia/Shanghai, the default zone).
fn screens() -> Screens {
    let mut options = Options::new(Arc::new(NobodyThere));
    options.clock = ManualClock::at(utc(T0));
    options.catalog = Arc::new(Samples);
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    Screens::new(Arc::new(engine), Live::new())
}

fn set_language(s: &Screens, language: Language) {
    s.engine()
        .change_setting(Change::Language(language))
        .unwrap();
}

/// A balance check every day at 09:00, notifying below 50 yuan.
fn low_balance() -> JobDraft {
    JobDraft {
        kind: JobKind::Check,
        name: "余额提醒".into(),
        plugin: "wallet".into(),
        source: "balance".into(),
        schedule: JobScheduleKind::DailyAt,
        schedule_value: "09:00".into(),
        field: "balanceYuan".into(),
        comparison: JobComparison::Below,
        value: "50".into(),
        notify_title: "余额不足".into(),
        notify_body: "校园卡还剩 {balanceYuan} 元".into(),
    }
}

async fn refusal(s: &Screens, draft: JobDraft) -> String {
    match s.act(Action::AddJob { draft }).await {
        Err(e) => e.to_string(),
        Ok(acted) => panic!("the draft was accepted: {acted:?}"),
    }
}

/// Every text of the jobs screen a student reads.
fn read_on_the_screen(screen: &JobsScreen) -> Vec<String> {
    let f = &screen.form;
    let mut texts = vec![
        screen.title.clone(),
        screen.wake_note.clone(),
        screen.empty_label.clone(),
        f.title.clone(),
        f.name_label.clone(),
        f.source_label.clone(),
        f.no_sources_label.clone(),
        f.schedule_label.clone(),
        f.field_label.clone(),
        f.comparison_label.clone(),
        f.value_label.clone(),
        f.notify_title_label.clone(),
        f.notify_body_label.clone(),
        f.submit_label.clone(),
    ];
    texts.extend(screen.notifications_note.clone());
    texts.extend(screen.notifications_fix.iter().map(|b| b.label.clone()));
    for source in &f.sources {
        texts.push(source.title.clone());
        texts.extend(source.fields.iter().map(|f| f.label.clone()));
    }
    for s in &f.schedules {
        texts.extend([s.label.clone(), s.value_hint.clone()]);
    }
    texts.extend(f.comparisons.iter().map(|c| c.label.clone()));
    for row in &screen.jobs {
        texts.extend([
            row.name.clone(),
            row.state_label.clone(),
            row.next_run.clone(),
            row.last_outcome.clone(),
            row.remove.label.clone(),
        ]);
        texts.extend(row.notice.clone());
        texts.extend(row.pause_or_resume.iter().map(|b| b.label.clone()));
    }
    texts
}

fn assert_no_ids(screen: &JobsScreen) {
    for text in read_on_the_screen(screen) {
        for id in ["wallet", "cardBalance", "{", "}"] {
            assert!(!text.contains(id), "{text:?} holds {id:?}");
        }
    }
}

#[tokio::test]
async fn the_form_offers_each_data_source_by_its_title_and_the_fields_its_last_read_had() {
    let s = screens();
    let form = s.jobs().form;
    let offered: Vec<_> = form
        .sources
        .iter()
        .map(|o| (o.title.as_str(), o.plugin.as_str(), o.source.as_str()))
        .collect();
    assert_eq!(offered, [("校园卡余额", "wallet", "balance")]);
    // The tool declares its result's fields (`output`): offered before any read, by their words.
    let fields: Vec<_> = form.sources[0]
        .fields
        .iter()
        .map(|f| (f.label.as_str(), f.unit.as_deref()))
        .collect();
    assert_eq!(
        fields,
        [
            ("余额", Some("元")),
            ("每日限额", Some("元")),
            ("今日消费", Some("元"))
        ]
    );
    assert_eq!(
        (form.title.as_str(), form.submit_label.as_str()),
        ("新建定时任务", "添加任务")
    );

    s.engine().use_tool_data("wallet", "balance").await.unwrap();
    set_language(&s, Language::En);
    let form = s.jobs().form;
    assert_eq!(form.sources[0].title, "Card balance");
    let labels: Vec<_> = form.sources[0]
        .fields
        .iter()
        .map(|f| (f.label.as_str(), f.unit.as_deref()))
        .collect();
    assert_eq!(
        labels,
        [
            ("Balance", Some("yuan")),
            ("Daily limit", Some("yuan")),
            ("Spent today", Some("yuan"))
        ]
    );
    let fields: Vec<_> = form.sources[0]
        .fields
        .iter()
        .map(|f| f.key.as_str())
        .collect();
    assert_eq!(fields, ["balanceYuan", "dailyLimitYuan", "spentTodayYuan"]);
    let schedules: Vec<_> = form.schedules.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(schedules, ["Every day at", "Every few hours", "Once, at"]);
    assert_eq!(form.comparisons[0].comparison, JobComparison::Below);
    assert_eq!(form.comparisons[0].label, "is below");
}

#[tokio::test]
async fn a_job_added_on_the_form_is_the_schedulers_own_check_and_notifies_when_it_holds() {
    let s = screens();
    let e = s.engine();
    e.report_permission(Permission::Notifications, PermissionState::Granted)
        .unwrap();
    s.act(Action::AddJob {
        draft: low_balance(),
    })
    .await
    .unwrap();
    let job = e.jobs().pop().unwrap();
    assert_eq!(
        job.spec.schedule,
        harness_core::scheduler::schedule::ScheduleSpec::Cron("0 9 * * *".into())
    );
    let Task::Check(check) = &job.spec.task else {
        panic!("not a check: {:?}", job.spec.task);
    };
    assert_eq!(
        (check.tool.as_str(), check.when.clone()),
        (
            "wallet.cardBalance",
            Some(json!({"path": "balanceYuan", "op": "lt", "value": 50.0}))
        )
    );
    let row = &s.jobs().jobs[0];
    assert_eq!(
        (row.name.as_str(), row.next_run.as_str(), row.notice.clone()),
        ("余额提醒", "2026-05-01 09:00", None)
    );
    assert_eq!(s.jobs().notifications_note, None);

    let reports = e.run_due(job.next_due_ms.unwrap()).await.unwrap();
    assert_eq!(
        reports[0].outcome,
        RunOutcome::Notified {
            notification: Notification {
                title: "余额不足".into(),
                body: "校园卡还剩 42.5 元".into()
            }
        }
    );
    assert_eq!(s.jobs().jobs[0].last_outcome, "已提醒");

    let every = JobDraft {
        schedule: JobScheduleKind::EveryHours,
        schedule_value: "6".into(),
        ..low_balance()
    };
    s.act(Action::AddJob { draft: every }).await.unwrap();
    assert_eq!(
        e.jobs()[1].spec.schedule,
        harness_core::scheduler::schedule::ScheduleSpec::EveryMinutes(360)
    );
}

#[tokio::test]
async fn a_draft_the_scheduler_refuses_writes_nothing_and_names_the_field_to_change() {
    let s = screens();
    let cases = [
        (
            JobDraft {
                name: "  ".into(),
                ..low_balance()
            },
            "请修改「名称」：写一个 1 到 100 个字的名称",
            "Change “Name”: give it a name of 1 to 100 characters",
        ),
        (
            JobDraft {
                schedule_value: "25:00".into(),
                ..low_balance()
            },
            "请修改「什么时候」：写一天中的时刻，如 08:00",
            "Change “When”: write a time of day such as 08:00",
        ),
        (
            JobDraft {
                schedule: JobScheduleKind::EveryHours,
                schedule_value: "0".into(),
                ..low_balance()
            },
            "请修改「什么时候」：写 1 到 8784 之间的整小时数",
            "Change “When”: write a whole number of hours from 1 to 8784",
        ),
        (
            JobDraft {
                schedule: JobScheduleKind::Once,
                schedule_value: "2026-05-01 07:00".into(),
                ..low_balance()
            },
            "请修改「什么时候」：写一个以后的时间，如 2026-12-24 18:00",
            "Change “When”: write a later time such as 2026-12-24 18:00",
        ),
        (
            JobDraft {
                value: "五十".into(),
                ..low_balance()
            },
            "请修改「值」：写一个数字，如 50",
            "Change “Value”: write a number such as 50",
        ),
        (
            JobDraft {
                field: "".into(),
                ..low_balance()
            },
            "请修改「看哪一项」：选其中的一项",
            "Change “Which of it”: choose one of its fields",
        ),
        (
            JobDraft {
                kind: JobKind::Reminder,
                name: "".into(),
                ..low_balance()
            },
            "请修改「名称」：写一个 1 到 100 个字的名称",
            "Change “Name”: give it a name of 1 to 100 characters",
        ),
        (
            JobDraft {
                source: "recharge".into(),
                ..low_balance()
            },
            "请修改「盯着什么」：选一项可以定时检查的数据",
            "Change “What to watch”: choose something that can be checked on a schedule",
        ),
    ];
    for (draft, zh, en) in cases {
        set_language(&s, Language::Zh);
        assert_eq!(refusal(&s, draft.clone()).await, zh);
        set_language(&s, Language::En);
        assert_eq!(refusal(&s, draft).await, en);
    }
    assert!(s.engine().jobs().is_empty());
}

#[tokio::test]
async fn with_notifications_off_the_screen_says_so_and_a_run_is_not_recorded_as_notified() {
    let s = screens();
    let e = s.engine();
    set_language(&s, Language::En);
    let note = s.jobs();
    assert_eq!(
        note.notifications_note.as_deref(),
        Some("Notifications are not allowed yet: a job's notification may not be shown.")
    );
    e.report_permission(Permission::Notifications, PermissionState::Denied)
        .unwrap();
    s.act(Action::AddJob {
        draft: low_balance(),
    })
    .await
    .unwrap();
    let screen = s.jobs();
    assert_eq!(
        screen.notifications_note.as_deref(),
        Some(
            "Notifications are off: a job's notification is not shown, and is not recorded as notified."
        )
    );
    let fix = screen.notifications_fix.clone().unwrap();
    assert_eq!(
        (fix.label.as_str(), fix.role, fix.action),
        (
            "Turn on notifications",
            ButtonRole::Primary,
            Action::Open {
                route: Route::Consent
            }
        )
    );
    assert_eq!(
        screen.jobs[0].notice.as_deref(),
        Some("Its notification will not be shown: notifications are off")
    );

    let due = e.jobs()[0].next_due_ms.unwrap();
    let reports = e.run_due(due).await.unwrap();
    let words = Notification {
        title: "余额不足".into(),
        body: "校园卡还剩 42.5 元".into(),
    };
    assert_eq!(
        reports[0].outcome,
        RunOutcome::NotShown {
            notification: words.clone()
        }
    );
    assert_eq!(reports[0].outcome.notification(), None);
    assert_eq!(
        e.jobs()[0].last.as_ref().map(|l| l.outcome.clone()),
        Some(RunOutcome::NotShown {
            notification: words
        })
    );
    let screen = s.jobs();
    assert_eq!(
        screen.jobs[0].last_outcome,
        "Condition met, but the notification was not shown: notifications are off"
    );
    assert_no_ids(&screen);
    set_language(&s, Language::Zh);
    let screen = s.jobs();
    assert_eq!(
        (
            screen.notifications_note.as_deref(),
            screen.jobs[0].notice.as_deref(),
            screen.jobs[0].last_outcome.as_str()
        ),
        (
            Some("通知已关闭：任务的提醒不会显示，也不会记为已提醒。"),
            Some("提醒不会显示：通知已关闭"),
            "条件满足，但没有显示提醒：通知已关闭"
        )
    );
    assert_no_ids(&screen);

    // Turned back on, the next run notifies.
    e.report_permission(Permission::Notifications, PermissionState::Granted)
        .unwrap();
    let reports = e.run_due(due + 24 * 3_600_000).await.unwrap();
    assert!(matches!(reports[0].outcome, RunOutcome::Notified { .. }));
    assert_eq!(s.jobs().jobs[0].notice, None);
}

/// An agent loop that answers every job with a reply and a notification.
struct Replies;

#[async_trait::async_trait]
impl JobRunner for Replies {
    async fn run(&self, _job: &AgentJob) -> Result<AgentReply, String> {
        Ok(AgentReply {
            text: "余额 42.5 元".into(),
            notification: Some(Notification {
                title: "早报".into(),
                body: "余额 42.5 元".into(),
            }),
        })
    }
}

#[tokio::test]
async fn an_agent_jobs_notification_with_notifications_off_is_kept_apart_and_the_row_says_so() {
    let s = screens();
    let e = s.engine();
    e.set_job_runner(Arc::new(Replies));
    e.report_permission(Permission::Notifications, PermissionState::Denied)
        .unwrap();
    let spec =
        json!({"name": "早报", "schedule": {"cron": "0 9 * * *"}, "agent": {"prompt": "看看余额"}});
    let job = e.add_job(&spec, Owner::User).unwrap();
    let reports = e.run_due(job.next_due_ms.unwrap()).await.unwrap();
    let RunOutcome::AgentRan {
        notification,
        not_shown,
        ..
    } = &reports[0].outcome
    else {
        panic!("not an agent run: {:?}", reports[0].outcome);
    };
    assert_eq!(
        (notification, not_shown.as_ref().map(|n| n.title.as_str())),
        (&None, Some("早报"))
    );
    assert_eq!(reports[0].outcome.notification(), None);
    assert_eq!(
        s.jobs().jobs[0].last_outcome,
        "余额 42.5 元（没有显示提醒：通知已关闭）"
    );
    set_language(&s, Language::En);
    assert_eq!(
        s.jobs().jobs[0].last_outcome,
        "余额 42.5 元 (the notification was not shown: notifications are off)"
    );
}

/// The app on the shipped plugins (the wallet's balance declares its fields), signed in to the
/// campus simulator (the wallet needs the campus session to be offered).
async fn shipped_screens() -> (Screens, harness_campus_sim::Simulator) {
    let sim = harness_campus_sim::Simulator::start(0).await.unwrap();
    let mut options = Options::new(Arc::new(NobodyThere));
    options.clock = ManualClock::at(utc(T0));
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    options.secrets = Arc::new(harness_core::secrets::MemorySecrets::default());
    options.campus = harness_core::campus::wire::Origin::development(&sim.origin()).unwrap();
    let engine = Engine::in_memory(options).unwrap();
    engine.accept_terms().unwrap();
    let demo = harness_campus_sim::DEMO;
    engine
        .campus()
        .sign_in(demo.id, demo.password, false)
        .await
        .unwrap();
    (Screens::new(Arc::new(engine), Live::new()), sim)
}

// issue 37.3: the form offers a reminder first, then what to watch by its title, a field by
// its words and unit, comparisons in words; the core writes the notification's words and the
// job's card says its condition and schedule in a sentence. Nothing is typed but a value.
#[tokio::test]
async fn the_form_builds_a_check_from_words_without_a_typed_field_or_template() {
    let (s, _sim) = shipped_screens().await;
    let form = s.jobs().form;
    let kinds: Vec<_> = form
        .kinds
        .iter()
        .map(|k| (k.kind, k.label.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (JobKind::Reminder, "到点提醒我"),
            (JobKind::Check, "帮我盯着")
        ]
    );
    let balance = form
        .sources
        .iter()
        .find(|o| o.plugin == "wallet")
        .expect("the card balance is offered");
    assert_eq!(balance.title, "校园卡余额");
    assert_eq!(
        balance.fields[..3],
        [
            JobFieldOption {
                key: "accounts".into(),
                label: "账户".into(),
                unit: None
            },
            JobFieldOption {
                key: "balanceYuan".into(),
                label: "余额".into(),
                unit: Some("元".into())
            },
            JobFieldOption {
                key: "dailyLimitYuan".into(),
                label: "每日限额".into(),
                unit: Some("元".into())
            },
        ]
    );
    let comparisons: Vec<_> = form
        .comparisons
        .iter()
        .map(|c| (c.label.as_str(), c.takes_value))
        .collect();
    assert_eq!(
        comparisons[..5],
        [
            ("低于", true),
            ("高于", true),
            ("等于", true),
            ("变化时", false),
            ("出现新的", false)
        ]
    );

    // The student picks 校园卡余额 → 余额 → 低于 → 50; the core writes the words.
    let draft = JobDraft {
        kind: JobKind::Check,
        name: "余额提醒".into(),
        plugin: "wallet".into(),
        source: "balance".into(),
        schedule: JobScheduleKind::DailyAt,
        schedule_value: "09:00".into(),
        field: "balanceYuan".into(),
        comparison: JobComparison::Below,
        value: "50".into(),
        notify_title: String::new(),
        notify_body: String::new(),
    };
    let words = s.job_words(&draft);
    assert_eq!(
        (words.title.as_str(), words.body.as_str()),
        ("校园卡余额", "校园卡余额低于 50 元：现在 {余额} 元")
    );
    // Shown and left as they are, they are the job's words.
    s.act(Action::AddJob {
        draft: JobDraft {
            notify_title: words.title,
            notify_body: words.body,
            ..draft.clone()
        },
    })
    .await
    .unwrap();
    let job = s.engine().jobs().pop().unwrap();
    let Task::Check(check) = &job.spec.task else {
        panic!("{:?}", job.spec.task)
    };
    assert_eq!(
        (check.notify.title.as_str(), check.notify.body.as_str()),
        ("校园卡余额", "校园卡余额低于 50 元：现在 {balanceYuan} 元")
    );
    let reports = s.engine().run_due(job.next_due_ms.unwrap()).await.unwrap();
    assert_eq!(
        reports[0].outcome.notification().map(|n| n.body.as_str()),
        Some("校园卡余额低于 50 元：现在 42.5 元"),
        "{:?}",
        reports[0].outcome
    );
    let row = &s.jobs().jobs[0];
    assert_eq!(
        row.summary,
        "每天 09:00 检查校园卡余额，校园卡余额低于 50 元时提醒"
    );
    set_language(&s, Language::En);
    assert_eq!(
        s.jobs().jobs[0].summary,
        "Every day at 09:00: check Card balance, notify when Card balance is below 50 yuan"
    );

    // 出现新的 on a list field watches its entries; 变化时 takes no value.
    set_language(&s, Language::Zh);
    s.act(Action::AddJob {
        draft: JobDraft {
            name: "账户".into(),
            field: "accounts".into(),
            comparison: JobComparison::AppearsNew,
            value: String::new(),
            ..draft.clone()
        },
    })
    .await
    .unwrap();
    let job = s.engine().jobs().pop().unwrap();
    let Task::Check(check) = &job.spec.task else {
        panic!("{:?}", job.spec.task)
    };
    assert_eq!(
        check.when,
        Some(json!({"path": "accounts[*]", "op": "exists", "new": true}))
    );
    assert_eq!(check.notify.body, "账户有新的了");

    // A reminder: its words at its time, no tool.
    s.act(Action::AddJob {
        draft: JobDraft {
            kind: JobKind::Reminder,
            name: "去图书馆".into(),
            schedule: JobScheduleKind::Once,
            schedule_value: "2026-05-02 08:00".into(),
            notify_title: String::new(),
            ..draft
        },
    })
    .await
    .unwrap();
    let job = s.engine().jobs().pop().unwrap();
    assert_eq!(
        job.spec.task,
        Task::Reminder(Notification {
            title: "去图书馆".into(),
            body: String::new()
        })
    );
    assert_eq!(
        s.jobs().jobs.last().unwrap().summary,
        "2026-05-02 08:00 提醒：去图书馆"
    );
}
