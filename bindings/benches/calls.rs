//! The Rust side of the calls scripts/bench-kotlin.sh measures from Kotlin: the same exported
//! methods on the same sample data, called from Rust with no FFI in between, so that the
//! Kotlin figure minus this one minus its floor is what crossing costs beyond UniFFI's own work.
//! Async methods are driven as UniFFI drives them: polled on the caller's thread, outside any
//! tokio runtime.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use harness_ffi::*;

/// Answers every prompt Allow at once, as the Kotlin bench's Platform does.
struct AllowAll;

#[async_trait]
impl Platform for AllowAll {
    async fn ask_approval(&self, _: u64, _: ApprovalPrompt) -> Result<Answer, HarnessError> {
        Ok(Answer::Allow)
    }
    fn post_notification(&self, _: AppNotification) -> Result<(), HarnessError> {
        Ok(())
    }
    fn arm_wake_up(&self, _: i64, _: bool) -> Result<(), HarnessError> {
        Ok(())
    }
    fn cancel_wake_up(&self) -> Result<(), HarnessError> {
        Ok(())
    }
    fn open_screen(&self, _: String) -> Result<(), HarnessError> {
        Ok(())
    }
    fn read_secret(&self, _: String) -> Result<Option<String>, HarnessError> {
        Ok(None)
    }
    fn write_secret(&self, _: String, _: Option<String>) -> Result<(), HarnessError> {
        Ok(())
    }
    fn permission_state(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Granted)
    }
    async fn sign_in(&self, _: SignInSheet, _: String) -> Result<String, HarnessError> {
        Err(HarnessError::Platform {
            reason: "no browser here".into(),
        })
    }
    async fn ask_elicitation(
        &self,
        _: u64,
        _: ElicitationSheet,
    ) -> Result<ElicitationReply, HarnessError> {
        Err(HarnessError::Platform {
            reason: "no sheet here".into(),
        })
    }

    async fn pick_file(&self, _: String) -> Result<Option<PickedDocument>, HarnessError> {
        Ok(None)
    }

    async fn request_permission(&self, _: Permission) -> Result<PermissionState, HarnessError> {
        Ok(PermissionState::Unknown)
    }
}

/// Wakes the thread that polls, as the foreign side's continuation does.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls on this thread until ready, parking in between.
fn block_on<T>(future: impl Future<Output = T>) -> T {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        thread::park();
    }
}

const SEATS: &str = r#"{"canteen":"学一食堂","seats":2,"time":"12:00"}"#;

fn calls(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("harness-ffi-bench-{}", std::process::id()));
    let harness = Harness::open_for_development(
        dir.to_string_lossy().into_owned(),
        Arc::new(AllowAll),
        DevelopmentOptions {
            sample_plugins: true,
            campus_origin: None,
            servers_on_this_machine: false,
            bundles: vec![],
        },
    )
    .unwrap();
    harness.install_sample_plugins().unwrap();
    harness
        .set_consent(Consent {
            terms_accepted: true,
            met: vec![],
        })
        .unwrap();
    harness.open_conversation("bench".into()).unwrap();
    let prompted =
        block_on(harness.invoke_as_agent("bench".into(), "canteen.reserve".into(), SEATS.into()))
            .unwrap();
    assert_eq!(
        prompted.answer,
        Some(Answer::Allow),
        "the prompt must be asked"
    );

    c.bench_function("ffi/ping", |b| b.iter(|| harness.ping().unwrap()));
    c.bench_function("ffi/decide (agent, canteen.reserve → ask)", |b| {
        b.iter(|| {
            black_box(harness.decide(
                Actor::Agent,
                "canteen.reserve".into(),
                SEATS.into(),
                Some("bench".into()),
            ))
            .unwrap()
        })
    });
    c.bench_function("ffi/invoke_as_agent read, no prompt", |b| {
        b.iter(|| {
            block_on(harness.invoke_as_agent(
                "bench".into(),
                "wallet.cardBalance".into(),
                "{}".into(),
            ))
            .unwrap()
        })
    });
    c.bench_function("ffi/invoke_as_agent write, prompt answered Allow", |b| {
        b.iter(|| {
            block_on(harness.invoke_as_agent(
                "bench".into(),
                "canteen.reserve".into(),
                SEATS.into(),
            ))
            .unwrap()
        })
    });
    c.bench_function("ffi/chat_screen", |b| {
        b.iter(|| black_box(harness.chat_screen("bench".into())).unwrap())
    });
    c.bench_function("ffi/plugins_screen", |b| {
        b.iter(|| black_box(harness.plugins_screen()).unwrap())
    });
    harness.close();
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = calls
}
criterion_main!(benches);
