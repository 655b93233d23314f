//! Consent beyond tools (seed 000): first-run terms, and what the phone provides now.

use harness_core::consent::{Permission, PermissionState};

/// First-run terms and what the phone provides now (`campus-session`, `notifications`, …).
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Consent {
    pub terms_accepted: bool,
    pub met: Vec<String>,
}

/// A system permission the shell reports and requests (only on a tap).
#[uniffi::remote(Enum)]
pub enum Permission {
    Notifications,
    /// Android's SCHEDULE_EXACT_ALARM. iOS has none: it reports `Denied` and the capability
    /// `exact-alarm-unsupported` (`Harness::report_capabilities`).
    ExactAlarm,
}

/// A system permission's state.
#[uniffi::remote(Enum)]
pub enum PermissionState {
    /// Not reported yet, or the user has not been asked yet.
    Unknown,
    Granted,
    Denied,
}
