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
    /// One of the core's own plugins the app needs (`builtin::REQUIRED`): it stays on.
    #[error("plugin \"{0}\" is part of the app and cannot be turned off")]
    Required(String),
    #[error("plugin link {link}: {message}")]
    Link { link: String, message: String },
    /// A remote (MCP) server that could not be added or listed; every message names its URL.
    #[error("{message}")]
    Server { url: String, message: String },
    #[error("no preview \"{0}\" is waiting; preview the link again")]
    NoSuchPreview(String),
    #[error("no conversation \"{0}\"")]
    NoSuchConversation(String),
    /// DESIGN.md §3: one turn at a time per conversation.
    #[error("a turn is running in conversation \"{0}\"; wait for it to end or stop it")]
    TurnRunning(String),
    /// The agent cannot start a turn: a model setting or the API key is not set.
    #[error(transparent)]
    Unset(#[from] Unset),
    /// The agent cannot start a turn: the provider refuses its settings (the message names
    /// the setting).
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

/// What a turn needs that is not set. The words are the app's (Settings → Model); a shell whose
/// user sets these elsewhere (a terminal's commands) words them itself from the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unset {
    #[error(
        "no model provider is set: set model.endpoint (Settings → Model) to your provider's base URL"
    )]
    Endpoint,
    #[error("no model is named: set model.name (Settings → Model)")]
    ModelName,
    #[error(
        "no API key is stored: set model.apiKey in Settings → Model (it is kept in the keystore)"
    )]
    ApiKey,
}
