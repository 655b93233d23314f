//! How every command opens a data directory: the OS keyring for its secrets (filed under the
//! directory), the campus reached as `HARNESS_CAMPUS_ORIGIN` says (the simulator, in
//! development), MCP servers on this machine accepted (a plugin author's), and the plugins
//! the app ships — no sample or fake plugin in any data directory (DESIGN.md §10).

use std::path::Path;
use std::sync::Arc;

use harness_core::invoke::ApprovalBroker;
use harness_core::plugins::script::WithAuthored;
use harness_core::{Engine, Options};

use crate::secrets::KeyringSecrets;

/// The engine's options for `data_dir`, with `broker` answering its prompts.
pub fn options(data_dir: &Path, broker: Arc<dyn ApprovalBroker>) -> Result<Options, String> {
    // Made first, so its keyring scope is its canonical path from the first run on.
    std::fs::create_dir_all(data_dir).map_err(|e| {
        format!(
            "cannot create the data directory {}: {e}",
            data_dir.display()
        )
    })?;
    let mut options = Options::new(broker);
    options.secrets = Arc::new(KeyringSecrets::for_data_dir(data_dir));
    options.campus = crate::campus::origin()?;
    // A development tool: an MCP server on this machine, which a plugin author runs, is
    // accepted; the app never accepts one (DESIGN.md §5).
    options.development_servers = true;
    // The plugins the app ships (plugins/<id>/bundle.js), and a plugin author's own.
    options.catalog = Arc::new(WithAuthored::load(authored_bundles()?)?);
    Ok(options)
}

/// The TypeScript plugins a plugin author runs beside the shipped ones: the bundles
/// `HARNESS_PLUGIN_BUNDLES` names (paths separated as in `PATH`), each as `sdk/build.mjs` built it.
fn authored_bundles() -> Result<Vec<(String, String)>, String> {
    let Some(paths) = std::env::var_os("HARNESS_PLUGIN_BUNDLES") else {
        return Ok(Vec::new());
    };
    std::env::split_paths(&paths)
        .filter(|path| !path.as_os_str().is_empty())
        .map(|path| {
            let at = path.display().to_string();
            std::fs::read_to_string(&path)
                .map(|source| (at.clone(), source))
                .map_err(|e| format!("HARNESS_PLUGIN_BUNDLES: cannot read {at}: {e}"))
        })
        .collect()
}

/// Opens `data_dir` with [`options`].
pub fn engine(data_dir: &Path, broker: Arc<dyn ApprovalBroker>) -> Result<Engine, String> {
    Engine::open(data_dir, options(data_dir, broker)?).map_err(|e| e.to_string())
}
