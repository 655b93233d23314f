//! The agent: the model the turn loop talks to. [`provider`] is the client of an
//! OpenAI-compatible Chat Completions endpoint (the settings `model.endpoint` and `model.name`,
//! the secret `model.apiKey`); [`providers`] the providers a student picks from, with what a
//! request to each carries; [`check`] the model screen's connection test;
//! [`budget`] what of a conversation a request carries; [`finding`] which tools it sends whole
//! and the find step for the rest; [`prices`] what a provider charges; [`wire`] holds what is sent and what comes back.

pub mod budget;
pub mod check;
pub mod finding;
pub mod prices;
pub mod provider;
pub mod providers;
pub mod turn;
pub mod wire;
mod written;

pub use provider::{ApiKey, Limits, Provider, ProviderError};
pub use tokio_util::sync::CancellationToken;
pub use turn::{Agent, TurnSummary, turn_id};
pub use wire::{ChatRequest, Message, ProviderEvent, ToolCall, ToolSpec, Usage};
