//! Consent beyond tools (seed 000, DESIGN.md §4): first-run terms, the campus session, cloud
//! consent per plugin, and the system permissions the shell reports.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::store::values::{Table, put_value, values};
use crate::store::{Store, StoreError};

/// The terms a user accepts at first run. A new version must be accepted again.
pub const TERMS_VERSION: u32 = 2;

/// A system permission's state, as the shell reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "snake_case")]
pub enum PermissionState {
    /// Not reported yet, or the user has not been asked yet.
    #[default]
    Unknown,
    Granted,
    Denied,
}

/// The system permissions plugins may need; requested only from a tap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "kebab-case")]
pub enum Permission {
    Notifications,
    /// Android's SCHEDULE_EXACT_ALARM. iOS has none: it reports `Denied` and the capability
    /// `exact-alarm-unsupported` (`Harness::report_capabilities`).
    ExactAlarm,
}

impl Permission {
    pub const ALL: [Permission; 2] = [Permission::Notifications, Permission::ExactAlarm];

    /// The `requires` name a plugin uses for it.
    pub fn requirement(self) -> &'static str {
        match self {
            Permission::Notifications => "notifications",
            Permission::ExactAlarm => "exact-alarm",
        }
    }
}

/// The first run's steps (seed 000: the terms are accepted "during first-run setup"): the terms,
/// then the model, the campus sign-in and the notification permission, each of those three
/// skippable and reachable again from the settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[serde(rename_all = "camelCase")]
pub enum SetupStep {
    Terms,
    Model,
    Campus,
    Notifications,
}

impl SetupStep {
    pub const ALL: [SetupStep; 4] = [
        SetupStep::Terms,
        SetupStep::Model,
        SetupStep::Campus,
        SetupStep::Notifications,
    ];
}

/// Everything the user consented to, and what the phone provides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ConsentState {
    /// The terms version accepted, and when.
    pub terms_version: Option<u32>,
    pub terms_accepted_at: Option<i64>,
    /// Signed in to the campus account: plugins that require `campus-session` can reach
    /// campus services.
    pub campus_session: bool,
    /// Plugins whose "Allow cloud" switch is on.
    pub cloud: BTreeSet<String>,
    /// The app's own "Back up to the cloud" switch (issue 39.5): its settings, rules, approved
    /// memories, jobs and conversation titles, sealed, in PKU harness Cloud.
    pub cloud_backup: bool,
    /// The backup's second choice, under its switch: the conversations' histories go with
    /// their titles (issue 39.5, "— if chosen — histories"). Off until the student chooses it.
    pub cloud_backup_histories: bool,
    pub notifications: PermissionState,
    pub exact_alarm: PermissionState,
    /// Other capabilities the shell reports the phone has (`nfc`, `camera`, …).
    pub capabilities: BTreeSet<String>,
    /// The first run's steps after the terms the student has done or skipped.
    pub setup_passed: BTreeSet<SetupStep>,
}

impl ConsentState {
    pub fn terms_accepted(&self) -> bool {
        self.terms_version.is_some_and(|v| v >= TERMS_VERSION)
    }

    /// Whether a plugin's `requires` entry is met.
    pub fn meets(&self, requirement: &str) -> bool {
        match requirement {
            "campus-session" => self.campus_session,
            "notifications" => self.notifications == PermissionState::Granted,
            "exact-alarm" => self.exact_alarm == PermissionState::Granted,
            other => self.capabilities.contains(other),
        }
    }

    pub fn permission(&self, permission: Permission) -> PermissionState {
        match permission {
            Permission::Notifications => self.notifications,
            Permission::ExactAlarm => self.exact_alarm,
        }
    }

    pub fn set_permission(&mut self, permission: Permission, state: PermissionState) {
        match permission {
            Permission::Notifications => self.notifications = state,
            Permission::ExactAlarm => self.exact_alarm = state,
        }
    }

    /// Takes `met`, every `requires` name the phone provides now, as the whole truth: the
    /// system permissions it names are on, those it leaves out are off (denied), and the rest
    /// are the phone's other capabilities. The campus session is not among them: it follows
    /// the campus account's sessions (DESIGN.md §4).
    pub fn provide(&mut self, met: impl IntoIterator<Item = String>) {
        let met: BTreeSet<String> = met.into_iter().collect();
        for permission in Permission::ALL {
            let state = match met.contains(permission.requirement()) {
                true => PermissionState::Granted,
                false => PermissionState::Denied,
            };
            self.set_permission(permission, state);
        }
        let named = |m: &String| {
            m == "campus-session" || Permission::ALL.iter().any(|p| p.requirement() == m)
        };
        self.capabilities = met.into_iter().filter(|m| !named(m)).collect();
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConsentError {
    /// seed 000: a cloud call without consent throws `CloudError('consent_required')`.
    #[error(
        "consent_required: plugin \"{0}\" may not use PKU harness Cloud; the user turns on Settings → Plugins → {0} → Allow cloud"
    )]
    CloudConsentRequired(String),
    #[error(
        "the {0} permission prompt is shown only when the user taps; ask the user to tap the button on the plugin's screen"
    )]
    PromptNeedsATap(&'static str),
}

/// The owner of the consent state: loaded at open, written through on every change.
pub struct Consent {
    store: Arc<Store>,
    state: Mutex<ConsentState>,
}

const CONSENT_KEY: &str = "state";

impl Consent {
    pub(crate) fn load(store: Arc<Store>) -> Result<Self, StoreError> {
        let rows = store.read(|c| values(c, Table::Consent))?;
        let state = match rows.into_iter().find(|(k, _)| k == CONSENT_KEY) {
            Some((_, value)) => serde_json::from_value(value)
                .map_err(|e| StoreError::Corrupt(format!("consent: {e}")))?,
            None => ConsentState::default(),
        };
        Ok(Self {
            store,
            state: Mutex::new(state),
        })
    }

    pub fn get(&self) -> ConsentState {
        crate::lock(&self.state).clone()
    }

    /// Reads the state under the lock; `f` must not wait or call out.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&ConsentState) -> R) -> R {
        f(&crate::lock(&self.state))
    }

    /// Writes a changed copy, then puts it in place (write before assign).
    pub fn change(&self, f: impl FnOnce(&mut ConsentState)) -> Result<(), StoreError> {
        let mut state = crate::lock(&self.state);
        let mut next = state.clone();
        f(&mut next);
        self.store
            .write(|tx| put_value(tx, Table::Consent, CONSENT_KEY, &next))?;
        *state = next;
        Ok(())
    }

    /// Checked before every PKU harness Cloud call a plugin makes: without the plugin's cloud
    /// consent the call fails `consent_required`.
    pub fn check_cloud(&self, plugin: &str) -> Result<(), ConsentError> {
        match crate::lock(&self.state).cloud.contains(plugin) {
            true => Ok(()),
            false => Err(ConsentError::CloudConsentRequired(plugin.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provided_names_are_sorted_into_permissions_and_capabilities() {
        let mut consent = ConsentState {
            exact_alarm: PermissionState::Granted,
            capabilities: ["camera".to_owned()].into(),
            ..ConsentState::default()
        };
        consent.provide(["nfc", "campus-session", "notifications"].map(String::from));
        // The campus session follows the sessions, not a report.
        assert!(!consent.campus_session);
        assert_eq!(consent.notifications, PermissionState::Granted);
        // Left out of the report: no longer provided.
        assert_eq!(consent.exact_alarm, PermissionState::Denied);
        assert_eq!(consent.capabilities, ["nfc".to_owned()].into());

        consent.provide(Vec::new());
        assert!(!consent.campus_session);
        assert_eq!(consent.notifications, PermissionState::Denied);
        assert!(consent.capabilities.is_empty());
    }

    #[test]
    fn terms_of_an_older_version_are_not_accepted() {
        let mut consent = ConsentState::default();
        assert!(!consent.terms_accepted());
        consent.terms_version = Some(TERMS_VERSION - 1);
        assert!(!consent.terms_accepted());
        consent.terms_version = Some(TERMS_VERSION);
        assert!(consent.terms_accepted());
    }

    #[test]
    fn requirements_are_met_by_consent_and_reported_capabilities() {
        let mut consent = ConsentState::default();
        for r in ["campus-session", "notifications", "exact-alarm", "nfc"] {
            assert!(!consent.meets(r), "{r}");
        }
        consent.campus_session = true;
        consent.notifications = PermissionState::Granted;
        consent.exact_alarm = PermissionState::Denied;
        consent.capabilities.insert("nfc".into());
        assert!(consent.meets("campus-session"));
        assert!(consent.meets("notifications"));
        assert!(!consent.meets("exact-alarm"));
        assert!(consent.meets("nfc"));
    }
}
