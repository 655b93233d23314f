//! Consent beyond tools (seed 000): first-run terms, and what the phone provides now.

/// First-run terms and what the phone provides now (`campus-session`, `notifications`, …).
// The FFI's own argument record: the core takes the two as `report_consent`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Consent {
    pub terms_accepted: bool,
    pub met: Vec<String>,
}
