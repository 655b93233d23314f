//! The one public error of the FFI surface (STYLE.md §2), converted from every core error here
//! and nowhere else. A reason names what to fix (an argument, a plugin id, a conversation id) and
//! never carries personal data: no inputs, no results, no secrets.

use harness_core::EngineError;
use harness_core::datasource::SourceError;
use harness_core::scheduler::SchedulerError;
use harness_core::settings::SettingsError;

/// What went wrong, in the few kinds a shell acts on differently. Kotlin sees it as
/// `HarnessException`, Swift as `HarnessError`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum HarnessError {
    /// An argument is malformed: JSON that does not parse, a rule pattern that is not one, a
    /// plugin that cannot be loaded. The reason names the argument. Fix the call; retrying the
    /// same call fails the same way.
    #[error("invalid argument: {reason}")]
    InvalidArgument { reason: String },
    /// The plugin, conversation, memory, job or data source the call names does not exist.
    #[error("not found: {reason}")]
    NotFound { reason: String },
    /// `close()` (Kotlin: `shutdown()`) was called on this Harness; open a new one.
    #[error("closed: {reason}")]
    Closed { reason: String },
    /// The shell's `Platform` failed (a foreign exception or an error it returned).
    #[error("platform: {reason}")]
    Platform { reason: String },
    /// Anything else; a bug to report.
    #[error("{reason}")]
    Other { reason: String },
}

impl HarnessError {
    pub(crate) fn closed() -> Self {
        HarnessError::Closed {
            reason: "this Harness was closed; open a new one".to_owned(),
        }
    }

    pub(crate) fn invalid(reason: impl Into<String>) -> Self {
        HarnessError::InvalidArgument {
            reason: reason.into(),
        }
    }
}

impl From<EngineError> for HarnessError {
    fn from(e: EngineError) -> Self {
        let reason = e.to_string();
        match e {
            EngineError::Load(_)
            | EngineError::Rule(_)
            | EngineError::Settings(_)
            | EngineError::Consent(_)
            | EngineError::Bundled(_)
            | EngineError::Required(_)
            | EngineError::MemoryNotPending { .. }
            | EngineError::Agent(_)
            | EngineError::Unset(_)
            | EngineError::Invalid(_)
            | EngineError::TurnRunning(_)
            | EngineError::Link { .. }
            | EngineError::Server { .. } => HarnessError::InvalidArgument { reason },
            EngineError::NoSuchPlugin(_)
            | EngineError::NoSuchPreview(_)
            | EngineError::NoSuchConversation(_)
            | EngineError::NoSuchMemory(_) => HarnessError::NotFound { reason },
            EngineError::Store(_) | EngineError::Secret(_) => HarnessError::Other { reason },
        }
    }
}

/// A setting's key or value that is not one: the reason names the key.
impl From<SettingsError> for HarnessError {
    fn from(e: SettingsError) -> Self {
        HarnessError::invalid(e.to_string())
    }
}

impl From<SchedulerError> for HarnessError {
    fn from(e: SchedulerError) -> Self {
        let reason = e.to_string();
        match e {
            SchedulerError::NoSuchJob(_) => HarnessError::NotFound { reason },
            SchedulerError::Store(_) => HarnessError::Other { reason },
            _ => HarnessError::InvalidArgument { reason },
        }
    }
}

impl From<SourceError> for HarnessError {
    fn from(e: SourceError) -> Self {
        let reason = e.to_string();
        match e {
            SourceError::NoSuchSource { .. } => HarnessError::NotFound { reason },
            _ => HarnessError::Other { reason },
        }
    }
}

/// A foreign implementation threw something its method does not declare.
impl From<uniffi::UnexpectedUniFFICallbackError> for HarnessError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        HarnessError::Platform { reason: e.reason }
    }
}

/// A task on the library's runtime panicked or was cancelled; the panic stays on this side.
impl From<tokio::task::JoinError> for HarnessError {
    fn from(e: tokio::task::JoinError) -> Self {
        let reason = if e.is_panic() {
            "the call panicked inside the core"
        } else {
            "the call was cancelled"
        };
        HarnessError::Other {
            reason: reason.to_owned(),
        }
    }
}

/// Parses a JSON argument; the error names the argument and where the JSON breaks, never its
/// content.
pub(crate) fn parse_json(argument: &str, text: &str) -> Result<serde_json::Value, HarnessError> {
    serde_json::from_str(text)
        .map_err(|e| HarnessError::invalid(format!("{argument}: not valid JSON ({e})")))
}
