//! The PKU harness core: the plugin registry, the permission decision, the one invoke path, the
//! capability gates every plugin goes through, consent, settings, memory and persistence. No
//! FFI types live here (STYLE.md §1).

pub mod agent;
pub mod audit;
pub mod clock;
pub mod consent;
pub mod datasource;
pub mod engine;
pub mod gates;
pub mod invoke;
pub mod plugins;
pub mod policy;
pub mod registry;
pub mod scheduler;
pub mod schema;
pub mod secrets;
pub mod services;
pub mod settings;
pub mod store;
pub mod turn;

pub use engine::{Engine, EngineError, Options};
