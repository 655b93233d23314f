//! PKU harness Cloud (DESIGN.md §12): the server that plugins (through `services.cloud`) and
//! the app's backup store to. It holds only what the client sealed: values are
//! XChaCha20-Poly1305 ciphertext under an account key that never leaves the student's devices,
//! and plugin and key names are HMACs. Never linked into the phone library.

pub mod auth;
pub mod metrics;
pub mod server;
pub mod storage;
