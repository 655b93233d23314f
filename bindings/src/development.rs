//! What only the shells' tests and development builds use: the sample plugins' code and the
//! campus simulator on this machine. It is compiled in only with the `development` feature —
//! the host library the Kotlin tests load (scripts/gen-bindings.sh) has it; the phone builds
//! (scripts/lib/android-core-lib.sh, scripts/build-ios.sh) do not, and there every call here
//! fails saying so. The calls exist in every build, so the generated Kotlin and Swift match
//! every library (DESIGN.md §10: the phone library reaches no campus host but the real ones).

use std::sync::Arc;

use harness_core::Options;
use harness_core::invoke::ApprovalBroker;

use crate::error::HarnessError;

/// How `Harness::open_for_development` differs from `Harness::open`.
#[derive(Clone, Debug, uniffi::Record)]
pub struct DevelopmentOptions {
    /// The sample plugins' code: the in-memory `wallet`, the canteen's and the forum's answers.
    pub sample_plugins: bool,
    /// Every campus request to this origin instead of the campus hosts: `http://127.0.0.1:P`,
    /// a campus simulator (`start_campus_simulator`, `harness campus simulate`).
    pub campus_origin: Option<String>,
    /// Remote (MCP) servers on this machine too (`http://127.0.0.1:P`), as the CLI reaches
    /// them: a test's server. The app adds servers at public https addresses only.
    #[uniffi(default = false)]
    pub servers_on_this_machine: bool,
    /// TypeScript plugins a plugin author runs beside the shipped ones: each bundle's source,
    /// as `sdk/build.mjs` built it (its manifest checked as it loads). Not with
    /// `sample_plugins`.
    #[uniffi(default = [])]
    pub bundles: Vec<String>,
}

/// The engine's options for `options`, or why this library cannot have them.
pub(crate) fn configure(
    options: DevelopmentOptions,
) -> Result<impl FnOnce(Arc<dyn ApprovalBroker>) -> Options, HarnessError> {
    #[cfg(feature = "development")]
    {
        let campus = match &options.campus_origin {
            Some(origin) => Some(
                harness_core::campus::wire::Origin::development(origin)
                    .map_err(HarnessError::invalid)?,
            ),
            None => None,
        };
        if options.sample_plugins && !options.bundles.is_empty() {
            return Err(HarnessError::invalid(
                "bundles: run a plugin's bundle with the shipped plugins, not with sample_plugins",
            ));
        }
        let bundles: Vec<(String, String)> = options
            .bundles
            .iter()
            .enumerate()
            .map(|(i, source)| (format!("bundles[{i}]"), source.clone()))
            .collect();
        let authored = if bundles.is_empty() {
            None
        } else {
            Some(
                harness_core::plugins::script::WithAuthored::load(bundles)
                    .map_err(HarnessError::invalid)?,
            )
        };
        Ok(move |broker: Arc<dyn ApprovalBroker>| {
            let mut engine = crate::harness::app_options(broker);
            if options.sample_plugins {
                engine.catalog = Arc::new(harness_core::plugins::samples::Samples);
            }
            if let Some(authored) = authored {
                engine.catalog = Arc::new(authored);
            }
            if let Some(campus) = campus {
                engine.campus = campus;
            }
            engine.development_servers = options.servers_on_this_machine;
            engine
        })
    }
    #[cfg(not(feature = "development"))]
    {
        let _ = options;
        Err::<fn(Arc<dyn ApprovalBroker>) -> Options, _>(not_here())
    }
}

/// Starts a campus simulator on 127.0.0.1 for the life of the process and answers its origin,
/// for `DevelopmentOptions.campus_origin`. Its accounts are the simulator's fixtures
/// (`harness campus simulate` lists them).
#[uniffi::export]
pub fn start_campus_simulator() -> Result<String, HarnessError> {
    #[cfg(feature = "development")]
    {
        use std::sync::Mutex;
        static RUNNING: Mutex<Vec<harness_campus_sim::Simulator>> = Mutex::new(Vec::new());
        let simulator = crate::runtime()?
            .block_on(harness_campus_sim::Simulator::start(0))
            .map_err(|e| HarnessError::Other {
                reason: format!("the campus simulator could not start: {e}"),
            })?;
        let origin = simulator.origin();
        RUNNING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(simulator);
        Ok(origin)
    }
    #[cfg(not(feature = "development"))]
    Err(not_here())
}

#[cfg(not(feature = "development"))]
fn not_here() -> HarnessError {
    HarnessError::invalid(
        "this library is built for phones: it has no sample plugins and reaches only the real campus hosts",
    )
}
