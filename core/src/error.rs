//! The error of the core's state changes, shared by the concerns that own the state and by the
//! engine that hands them out (re-exported as `engine::EngineError`).

use crate::consent::ConsentError;
use crate::policy::RuleError;
use crate::registry::LoadError;
use crate::secrets::SecretError;
use crate::settings::SettingsError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Consent(#[from] ConsentError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error("no plugin \"{0}\" is installed")]
    NoSuchPlugin(String),
    #[error("plugin \"{0}\" ships with the app and cannot be removed; turn it off instead")]
    Bundled(String),
    #[error("plugin link {link}: {message}")]
    Link { link: String, message: String },
    #[error("no preview \"{0}\" is waiting; preview the link again")]
    NoSuchPreview(String),
    #[error("no conversation \"{0}\"")]
    NoSuchConversation(String),
    /// DESIGN.md §3: one turn at a time per conversation.
    #[error("a turn is running in conversation \"{0}\"; wait for it to end or stop it")]
    TurnRunning(String),
    /// The agent cannot start a turn: what to set, named (`model.endpoint`, `model.apiKey`).
    #[error("{0}")]
    Agent(String),
    /// A value the user gave that cannot be used: the message names the field to change.
    #[error("{0}")]
    Invalid(String),
    #[error("no memory {0}")]
    NoSuchMemory(i64),
    #[error("memory {id} is {state}, not pending")]
    MemoryNotPending {
        id: i64,
        state: crate::store::memories::MemoryState,
    },
}
