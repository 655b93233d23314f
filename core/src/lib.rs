//! The PKU harness core: the plugin registry, the permission decision, the one invoke path, and
//! the capability gates every plugin goes through. No FFI types live here (STYLE.md §1).

pub mod gates;
