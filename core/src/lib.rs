//! The PKU harness core: the plugin registry, the permission decision, the one invoke path, and
//! the capability gates every plugin goes through. No FFI types live here (STYLE.md §1).

pub mod audit;
pub mod conformance;
pub mod gates;
pub mod invoke;
pub mod plugins;
pub mod policy;
pub mod registry;
pub mod schema;
pub mod turn;
