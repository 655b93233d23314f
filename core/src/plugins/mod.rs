//! The three kinds of plugin: bundled code, plugin documents, and remote (MCP) servers. They
//! all load into one `registry::Plugin` and run through one invoke path.

pub mod bounded;
pub mod builtin;
pub mod document;
pub mod elicitation;
pub(crate) mod grants;
pub mod interpreter;
pub mod link;
pub mod oauth;
pub mod remote;
pub mod samples;
pub mod script;
