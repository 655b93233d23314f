//! The UniFFI surface of the PKU harness core (DESIGN.md §8): one `Harness` object opened on a
//! data directory with the shell's `Platform`, an event listener, one error enum, and the
//! records and enums that mirror core types. Proc-macros only, no UDL (STYLE.md §3).
//!
//! Kotlin package `edu.pku.harness`, Swift module `Harness` (uniffi.toml at the repo top).

use std::sync::LazyLock;

mod error;
mod events;
mod harness;
mod platform;
mod types;

pub use error::HarnessError;
pub use events::{EventListener, EventSubscription, HarnessEvent};
pub use harness::Harness;
pub use platform::{AppNotification, Permission, PermissionState, Platform};
pub use types::*;

uniffi::setup_scaffolding!();

/// The library's one tokio runtime (STYLE.md §5). Every call that runs tools or waits for a
/// prompt is spawned here, so the work runs on its workers whatever thread awaits it.
static RUNTIME: LazyLock<Result<tokio::runtime::Runtime, String>> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("harness-tokio")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
});

pub(crate) fn runtime() -> Result<&'static tokio::runtime::Runtime, HarnessError> {
    RUNTIME.as_ref().map_err(|reason| HarnessError::Other {
        reason: reason.clone(),
    })
}
