//! The PKU harness core: the plugin registry, the permission decision, the one invoke path, the
//! capability gates every plugin goes through, consent, settings, memory and persistence. No
//! FFI code lives here (STYLE.md §1): the records and enums that cross the FFI as they are
//! derive UniFFI's traits only under the `uniffi` feature, which only harness-ffi turns on.

pub mod agent;
pub mod audit;
pub mod campus;
pub mod campus_time;
pub mod clock;
pub mod cloud;
pub mod consent;
pub mod conversations;
pub mod datasource;
pub mod declared;
pub mod engine;
pub mod error;
pub mod events;
pub mod gates;
pub mod handler;
pub mod history;
pub mod installed;
pub mod invoke;
pub mod memories;
pub mod picked;
pub mod plugins;
pub mod policy;
pub(crate) mod redact;
pub mod registry;
pub mod scheduler;
pub mod schema;
pub mod screens;
pub mod secrets;
pub mod services;
pub mod settings;
pub mod store;
pub(crate) mod text;
pub mod turn;
pub mod why;
pub mod zone;

pub use engine::{Engine, EngineError, Options};

// The UniFFI component of the types above that cross as they are (Kotlin package
// `edu.pku.harness.core`, Swift module `Harness`: uniffi.toml).
#[cfg(feature = "uniffi")]
uniffi::setup_scaffolding!();

/// Locks a concern's state. Every change is one assignment after its write committed, so a
/// panic elsewhere cannot leave the state half-changed: a poisoned lock is taken as it is.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
