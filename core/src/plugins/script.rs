//! TypeScript plugins (DESIGN.md §11): a bundle built from `plugins/<id>/` with the SDK
//! (`sdk/`), run in QuickJS through rquickjs.
//!
//! - The manifest is read from the bundle when it loads and goes through [`Plugin::load`] like
//!   every other kind's; a bundle that throws while it is defined is a load error naming the
//!   field the SDK names (`tools[1].input`), or `bundle`.
//! - One runtime per plugin, created on the first call and kept; a memory limit and a stack
//!   limit per runtime; an interrupt that ends a call at its deadline (the call-tool gate's
//!   30 s) with an error in the user's words. A runtime a call overran or exhausted is dropped,
//!   and the next call starts a fresh one.
//! - No ambient authority: the context has QuickJS's language built-ins and nothing else — no
//!   module loader, no I/O, and of timers only `setTimeout`/`clearTimeout`, a request to the
//!   host like a service's, during a tool call only, 16 at once, ended with the call. What a tool reaches is `ctx.services`, whose every
//!   method is one request to the host served by this call's [`Services`] (the gates of §5).
//!   `console.log` goes to the host log through the running call's services (seed 001).
//! - No lock of the core is held while JavaScript runs: a request to the host is queued by the
//!   script and served by the call's future outside the runtime, between two entries into it.
//! - A request is served only for the call whose entry is running when it is made: services a
//!   plugin kept from another call (or past their call) reach nothing. What the host holds for
//!   a script is bounded apart from the runtime's memory: 64 requests and 4 MiB of their
//!   arguments in flight per call, 4 KiB of a logged line, 1 MiB of a call's answer.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::stream::{FuturesUnordered, StreamExt};
use rquickjs::{Context, Ctx, Function, Object, Runtime, Value as JsValue};
use serde_json::{Value, json};

use crate::consent::Permission;
use crate::gates::ToolCallGate;
use crate::handler::{Asker, Assessment, PluginHandler, ToolContext};
use crate::installed::Catalog;
use crate::picked::FilePick;
use crate::plugins::bounded::ANSWER_CAP;
use crate::policy::Actor;
use crate::policy::ToolCheck;
use crate::registry::{LoadError, Plugin, PluginKind, Tool, parse_manifest_text};
use crate::services::Services;
use crate::turn::Scope;

/// The bounds of one plugin's runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most memory the runtime may allocate; an allocation past it fails the call.
    pub memory_bytes: usize,
    /// The most native stack the interpreter may use; deeper recursion is a RangeError.
    pub stack_bytes: usize,
    /// How long one call (or the bundle's loading) may take, waits on services included.
    pub deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: 32 * 1024 * 1024,
            // Counted from where the runtime is entered: the calling thread must have this much
            // stack left (tokio's workers have 2 MiB, a secondary iOS thread 512 KiB).
            stack_bytes: 256 * 1024,
            // DESIGN.md §5: the call-tool gate's bound, so a nested call ends no later.
            deadline: ToolCallGate::DEFAULT_DEADLINE,
        }
    }
}

/// A TypeScript plugin that ships inside the library: its bundle stored deflated by build.rs
/// (docs/size.md), its manifest as text, which every open reads (53 KB for the nine; inflating
/// them was a sixth of what the shipped plugins add to a whole process's open).
#[derive(Debug, Clone, Copy)]
pub struct Bundle {
    pub id: &'static str,
    source: &'static [u8],
    manifest: &'static str,
}

impl Bundle {
    /// `plugins/<id>/bundle.js`.
    pub fn source(&self) -> String {
        inflate(self.source)
    }

    /// `plugins/<id>/manifest.json`: the JSON the bundle's `__pku.manifest()` gives, written
    /// beside it at build time, so opening reads JSON and runs no JavaScript
    /// (`each_shipped_manifest_is_what_its_bundle_gives`).
    pub fn manifest(&self) -> &'static str {
        self.manifest
    }
}

/// Text build.rs deflated from a file of the repository (UTF-8: JavaScript and JSON).
fn inflate(deflated: &[u8]) -> String {
    String::from_utf8(inflate_bytes(deflated))
        .unwrap_or_else(|e| unreachable!("build.rs deflated this UTF-8 text: {e}"))
}

macro_rules! shipped {
    ($($id:literal),* $(,)?) => {
        &[$(Bundle {
            id: $id,
            source: include_bytes!(concat!(env!("OUT_DIR"), "/plugins/", $id, "/bundle.js.deflate")),
            manifest: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../plugins/", $id, "/manifest.json")),
        }),*]
    };
}

/// The TypeScript plugins that ship inside the library: `plugins/<id>/bundle.js` and its
/// `manifest.json`, built by `sdk/build.mjs` and checked fresh by `scripts/check-bundles.sh`.
pub const BUNDLES: &[Bundle] = shipped![
    "canteen",
    "classrooms",
    "library",
    "wallet",
    "treehole",
    "notices",
    "grades",
    "bus",
    "course",
];

/// Loads a bundle: its manifest checked as every kind's, and the handler that runs its tools.
pub fn load(source: &str, limits: Limits) -> Result<(Plugin, Arc<dyn PluginHandler>), LoadError> {
    let (plugin, handler) = load_script(source, limits)?;
    Ok((plugin, handler))
}

/// As [`load`], with the handler as itself (its runtime's memory can be read).
pub fn load_script(source: &str, limits: Limits) -> Result<(Plugin, Arc<ScriptPlugin>), LoadError> {
    let text = read_manifest(source, limits)?;
    from_manifest(&text, source, limits)
}

/// Runs a bundle's definition in a runtime of its own and reads its manifest's JSON: what an
/// author's bundle is loaded by, and what each shipped `manifest.json` must equal.
pub fn read_manifest(source: &str, limits: Limits) -> Result<String, LoadError> {
    let load_error = |field: &str, message: String| LoadError {
        plugin: "?".into(),
        field: field.into(),
        message,
    };
    // A runtime of its own, dropped once the manifest is read: the plugin's runtime proper is
    // made on its first call, so a plugin nobody uses costs no memory.
    let instance = Instance::new(source, limits).map_err(|e| match e {
        Start::Definition { field, message } => load_error(&field, message),
        Start::Failed(message) => load_error("bundle", message),
    })?;
    instance
        .enter(Instant::now() + limits.deadline, |cx| {
            let pku: Object = cx.globals().get("__pku")?;
            let manifest: Function = pku.get("manifest")?;
            manifest.call::<_, String>(())
        })
        .map_err(|e| load_error("bundle", instance.describe(e)))
}

/// The plugin a bundle's manifest (the JSON its `__pku.manifest()` gave) describes, checked as
/// every kind's, with the handler that runs the bundle's tools.
fn from_manifest(
    text: &str,
    source: &str,
    limits: Limits,
) -> Result<(Plugin, Arc<ScriptPlugin>), LoadError> {
    let plugin = Plugin::load(parse_manifest_text(text)?, PluginKind::Bundled)?;
    let handler = ScriptPlugin::new(&plugin, Source::Text(source.into()), limits);
    Ok((plugin, Arc::new(handler)))
}

/// The plugins the app ships ([`BUNDLES`]): every shell's catalog, the app's and the CLI's.
/// Each bundle's manifest is its `manifest.json`, read as JSON: opening runs no JavaScript;
/// each engine gets handlers of its own, whose runtimes are made on their first call.
pub struct Shipped;

impl Catalog for Shipped {
    fn bundled(&self) -> Vec<(Plugin, Arc<dyn PluginHandler>)> {
        BUNDLES
            .iter()
            .map(|bundle| {
                // Each manifest is checked whole — each key once, its schemas compiled, its
                // examples validated — by the tests (`the_shipped_bundles_load`), as the
                // library is built: a failure here is a manifest committed without its check.
                // So opening reads it as JSON.stringify wrote it (no key twice), and compiles
                // a schema on its tool's first call, as for a plugin installed before
                // (`Plugin::reload`), not all of them at every open.
                let manifest = serde_json::from_str(bundle.manifest())
                    .unwrap_or_else(|e| panic!("shipped bundle {}: {e}", bundle.id));
                let plugin = Plugin::reload(manifest, PluginKind::Bundled)
                    .unwrap_or_else(|e| panic!("shipped bundle {}: {e}", bundle.id));
                let handler =
                    ScriptPlugin::new(&plugin, Source::Shipped(*bundle), Limits::default());
                let handler: Arc<dyn PluginHandler> = Arc::new(handler);
                (plugin, handler)
            })
            .collect()
    }
}

/// The shipped plugins ([`Shipped`]) and, beside them, TypeScript plugins a plugin author runs
/// on their own machine: the CLI's `HARNESS_PLUGIN_BUNDLES`, a development library's
/// `DevelopmentOptions.bundles`. No phone build has a way to add one (DESIGN.md §2: bundled
/// plugins ship inside the app).
pub struct WithAuthored {
    /// Each bundle's manifest JSON, read once, and its source.
    authored: Vec<(String, Arc<str>)>,
}

impl WithAuthored {
    /// Reads each bundle's manifest (`(where, source)`: `where` names the bundle in an error)
    /// and checks it as every kind's; a bundle that does not load, one with the id of a
    /// shipped plugin or of one of the core's own (`builtin::IDS`: the engine would drop it
    /// unsaid), or two of one id, is an error naming the bundle. The CLI and the development
    /// library both make their catalog here.
    pub fn load(bundles: Vec<(String, String)>) -> Result<Self, String> {
        let mut ids: Vec<String> = Vec::new();
        let mut authored = Vec::new();
        for (at, source) in bundles {
            let manifest = read_manifest(&source, Limits::default())
                .and_then(|text| {
                    from_manifest(&text, &source, Limits::default()).map(|(p, _)| (text, p))
                })
                .map_err(|e| format!("{at}: {e}"))?;
            let (text, plugin) = manifest;
            // BUNDLES names each shipped plugin by its id (`the_shipped_bundles_load`).
            let shipped = BUNDLES.iter().any(|bundle| bundle.id == plugin.id);
            let core = crate::plugins::builtin::IDS.contains(&plugin.id.as_str());
            if shipped || core || ids.contains(&plugin.id) {
                return Err(format!(
                    "{at}: a plugin \"{}\" is already there; give the bundle's plugin an id of its own",
                    plugin.id
                ));
            }
            ids.push(plugin.id);
            authored.push((text, Arc::from(source)));
        }
        Ok(Self { authored })
    }
}

impl Catalog for WithAuthored {
    fn bundled(&self) -> Vec<(Plugin, Arc<dyn PluginHandler>)> {
        let mut bundled = Shipped::bundled(&Shipped);
        for (manifest, source) in &self.authored {
            let (plugin, handler) = from_manifest(manifest, source, Limits::default())
                .expect("checked when the catalog was made");
            bundled.push((plugin, handler));
        }
        bundled
    }
}

/// A catalog with the shipped TypeScript plugins ([`Shipped`]) beside another's bundled
/// plugins: the demo's samples, or a test's. Where both have a plugin of one id (the samples'
/// in-memory `wallet` and the shipped 校园卡), the other catalog's is the one listed: a test
/// chose it.
pub struct WithBundles<C>(pub C);

impl<C: Catalog> Catalog for WithBundles<C> {
    fn bundled(&self) -> Vec<(Plugin, Arc<dyn PluginHandler>)> {
        let mut bundled = self.0.bundled();
        let shipped: Vec<_> = Shipped::bundled(&Shipped)
            .into_iter()
            .filter(|(p, _)| !bundled.iter().any(|(own, _)| own.id == p.id))
            .collect();
        bundled.extend(shipped);
        bundled
    }

    fn handler(&self, plugin: &Plugin) -> Option<Arc<dyn PluginHandler>> {
        self.0.handler(plugin)
    }

    fn handler_at(&self, plugin: &Plugin, source: &str) -> Option<Arc<dyn PluginHandler>> {
        self.0.handler_at(plugin, source)
    }
}

/// The handler of one TypeScript plugin.
pub struct ScriptPlugin {
    title: String,
    source: Source,
    limits: Limits,
    /// The runtime, made on first use.
    instance: Mutex<Option<Arc<Instance>>>,
}

/// A plugin's JavaScript: an author's text, or a shipped bundle's, inflated only when its
/// runtime is made (an open that calls no tool of it reads none of it).
enum Source {
    Text(Arc<str>),
    Shipped(Bundle),
}

impl ScriptPlugin {
    fn new(plugin: &Plugin, source: Source, limits: Limits) -> Self {
        Self {
            title: plugin.title.clone(),
            source,
            limits,
            instance: Mutex::new(None),
        }
    }

    fn instance(&self) -> Result<Arc<Instance>, String> {
        let mut slot = crate::lock(&self.instance);
        if let Some(instance) = &*slot {
            return Ok(instance.clone());
        }
        let source = match &self.source {
            Source::Text(text) => text.clone(),
            Source::Shipped(bundle) => bundle.source().into(),
        };
        let instance = Arc::new(Instance::new(&source, self.limits).map_err(|e| {
            let message = match e {
                Start::Definition { field, message } => format!("{field}: {message}"),
                Start::Failed(message) => message,
            };
            format!("{} could not start: {message}", self.title)
        })?);
        *slot = Some(instance.clone());
        Ok(instance)
    }

    /// Drops `instance` if it is still the plugin's runtime, so the next call starts afresh.
    fn discard(&self, instance: &Arc<Instance>) {
        let mut slot = crate::lock(&self.instance);
        if slot
            .as_ref()
            .is_some_and(|kept| Arc::ptr_eq(kept, instance))
        {
            *slot = None;
        }
    }

    /// The bytes the plugin's runtime holds now; none before its first call.
    pub fn memory_used(&self) -> Option<i64> {
        let instance = crate::lock(&self.instance).clone()?;
        Some(instance.runtime.memory_usage().memory_used_size)
    }
}

/// The longest a `setTimeout` waits: the call-tool gate's deadline, which ends the call anyway.
const TIMER_MS: u64 = 30_000;

/// How long a tool's `resolveEffect` may take: it runs in the decision, before every call.
const RESOLVE_DEADLINE: Duration = Duration::from_millis(100);

/// The most characters of a target a plugin's code names kept for the prompt's headline.
const TARGET_CHARS: usize = 200;

#[async_trait]
impl PluginHandler for ScriptPlugin {
    /// seed 000: a tool's `resolveEffect` names what the call acts on — the prompt's headline,
    /// and a call that names one asks the agent with no "always allow". A function that throws
    /// or overruns refuses the call (fail closed).
    fn assess(&self, tool: &Tool, input: &Value, _scope: &Scope) -> Assessment {
        if !tool.resolves_effect {
            return Assessment::default();
        }
        match self.resolve(&tool.name, input) {
            Ok(target) => Assessment {
                target,
                ..Assessment::default()
            },
            Err(why) => Assessment {
                check: ToolCheck::Deny,
                reason: Some(format!(
                    "{} could not say what this call acts on: {why}",
                    self.title
                )),
                ..Assessment::default()
            },
        }
    }

    /// A tool whose `description` is a function of the services: run with the plugin's store
    /// to read (DESIGN.md §11, Dynamic<string>). One that throws or overruns keeps the
    /// manifest's text.
    fn describe(&self, tool: &Tool, services: &Services) -> Option<String> {
        if !tool.describes {
            return None;
        }
        let instance = self.instance().ok()?;
        let written = self.quick_answer(&instance, "describe", &tool.name, "", Some(services));
        match written {
            Ok(text) => text.filter(|t| !t.trim().is_empty()),
            Err(why) => {
                services.log(&format!(
                    "the description of {} was not written: {why}",
                    tool.name
                ));
                None
            }
        }
    }

    async fn run(&self, tool: &Tool, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let instance = self.instance()?;
        let mut deadline = Instant::now() + self.limits.deadline;
        // The requests waiting on the student (the picker, a permission's dialog): while one
        // is open the call's deadline stands still, as for a server's question — the script
        // does not run meanwhile.
        let mut with_student: Vec<u64> = Vec::new();
        let call = instance.begin();
        let told = json!({
            "actor": ctx.actor.as_str(),
            "turn": ctx.turn,
            "grant": ctx.grant,
            "now": ctx.now,
        });
        let mut first = Some((tool.name.clone(), input.to_string(), told.to_string()));
        let mut settled: Option<(u64, Result<Value, Refusal>)> = None;
        let mut waiting: FuturesUnordered<Served> = FuturesUnordered::new();
        loop {
            let (entered, lines) = off_the_executor(|| {
                instance.enter_call(&call, deadline, |cx| {
                    let pku: Object = cx.globals().get("__pku")?;
                    if let Some((name, input, told)) = first.take() {
                        let start: Function = pku.get("start")?;
                        start.call::<_, ()>((call.id as f64, name, input, told))?;
                    }
                    if let Some((request, answer)) = settled.take() {
                        call.settled(request);
                        let settle: Function = pku.get("settle")?;
                        match answer {
                            Ok(value) => settle.call::<_, ()>((
                                call.id as f64,
                                request as f64,
                                true,
                                value.to_string(),
                                "",
                            ))?,
                            Err(Refusal { message, code }) => settle.call::<_, ()>((
                                call.id as f64,
                                request as f64,
                                false,
                                message,
                                code,
                            ))?,
                        }
                    }
                    while cx.execute_pending_job() {}
                    let take: Function = pku.get("take")?;
                    take.call::<_, Option<String>>((call.id as f64,))
                })
            });
            // seed 001: console.log is host-log, told the plugin by the host; the lines of
            // this call's entry, the last one's too.
            for line in &lines {
                ctx.services.log(line);
            }
            let outcome = match entered {
                Ok(outcome) => outcome,
                Err(error) => {
                    let stopped = self.stopped(&instance, deadline, error);
                    self.discard(&instance);
                    return Err(stopped);
                }
            };
            if let Some(outcome) = outcome {
                return self.outcome(&instance, &outcome);
            }
            for request in call.take_requests() {
                if matches!(request.op.as_str(), "files.pick" | "notify.fix") {
                    with_student.push(request.id);
                }
                waiting.push(Box::pin(serve(
                    ctx.services.clone(),
                    ctx.actor,
                    ctx.asker.clone(),
                    request,
                )));
            }
            // A promise nothing can settle any more waits here until the deadline too.
            let next = async {
                match waiting.next().await {
                    Some(done) => done,
                    None => std::future::pending().await,
                }
            };
            let done = if with_student.is_empty() {
                match tokio::time::timeout_at(deadline.into(), next).await {
                    Ok(done) => done,
                    Err(_) => {
                        self.discard(&instance);
                        return Err(self.too_long());
                    }
                }
            } else {
                let began = Instant::now();
                let done = next.await;
                deadline += began.elapsed();
                done
            };
            with_student.retain(|id| *id != done.0);
            settled = Some(done);
        }
    }
}

impl ScriptPlugin {
    /// The target the tool's `resolveEffect` names for `input`, on one line with nothing
    /// invisible (`text::one_line`) and at most [`TARGET_CHARS`] long; none when it names none.
    fn resolve(&self, name: &str, input: &Value) -> Result<Option<String>, String> {
        let instance = self.instance()?;
        let named = self.quick_answer(&instance, "resolve", name, &input.to_string(), None)?;
        Ok(named
            .map(|target| {
                crate::text::one_line(&target, TARGET_CHARS)
                    .trim()
                    .to_owned()
            })
            .filter(|target| !target.is_empty()))
    }

    /// `__pku[function](name, input)` in the runtime within [`RESOLVE_DEADLINE`]: the work a
    /// decision or a turn's request waits on (`resolveEffect`, a description). Its text, or
    /// why it gave none; a runtime that overran is dropped. A description reads the store
    /// through `reader`, only while its own entry runs, and its lines go to `reader`'s log; a
    /// resolveEffect has no services, and what it logs is dropped.
    fn quick_answer(
        &self,
        instance: &Arc<Instance>,
        function: &str,
        name: &str,
        input: &str,
        reader: Option<&Services>,
    ) -> Result<Option<String>, String> {
        let deadline = Instant::now() + RESOLVE_DEADLINE;
        let mut lines = Vec::new();
        let answered = off_the_executor(|| {
            instance.enter(deadline, |cx| {
                *crate::lock(&instance.reader) = reader.cloned();
                let answer = (|| {
                    let pku: Object = cx.globals().get("__pku")?;
                    let call: Function = pku.get(function)?;
                    call.call::<_, Option<String>>((name, input))
                })();
                *crate::lock(&instance.reader) = None;
                lines = std::mem::take(&mut *crate::lock(&instance.logs));
                answer
            })
        });
        if let Some(services) = reader {
            for line in &lines {
                services.log(line);
            }
        }
        answered.map_err(|error| {
            if Instant::now() >= deadline {
                self.discard(instance);
                format!("it took longer than {} ms", RESOLVE_DEADLINE.as_millis())
            } else {
                instance.describe(error)
            }
        })
    }

    fn too_long(&self) -> String {
        format!(
            "{} took longer than {} s and was stopped",
            self.title,
            self.limits.deadline.as_secs_f64()
        )
    }

    /// Why the runtime stopped a call with an uncaught engine error: the deadline's interrupt,
    /// exhausted memory, or something else the engine says.
    fn stopped(&self, instance: &Instance, deadline: Instant, error: rquickjs::Error) -> String {
        if Instant::now() >= deadline {
            return self.too_long();
        }
        let message = instance.describe(error);
        if message.contains("out of memory") {
            return self.out_of_memory();
        }
        format!("{} stopped: {message}", self.title)
    }

    fn out_of_memory(&self) -> String {
        format!(
            "{} needed more than the {} MiB a plugin may use and was stopped",
            self.title,
            self.limits.memory_bytes / (1024 * 1024)
        )
    }

    /// A settled tool call: its result, or its thrown Error's message (seed 004: "throw an
    /// Error with a clear message that the user can understand").
    fn outcome(&self, instance: &Arc<Instance>, outcome: &str) -> Result<Value, String> {
        // DESIGN.md §5: bounded like every other plugin input, refused, not cut.
        if outcome.len() > ANSWER_CAP {
            return Err(format!(
                "{} answered more than {} MiB, the most the app takes from a plugin; the answer was refused, not cut",
                self.title,
                ANSWER_CAP / (1024 * 1024)
            ));
        }
        let parsed: Value = serde_json::from_str(outcome)
            .map_err(|e| format!("{} answered something that is not JSON: {e}", self.title))?;
        if parsed["ok"] == true {
            return Ok(parsed["value"].clone());
        }
        let message = parsed["message"].as_str().unwrap_or("failed").to_owned();
        if message == "out of memory" {
            self.discard(instance);
            return Err(self.out_of_memory());
        }
        Err(message)
    }
}

/// Runs `f`, which runs JavaScript synchronously for up to a call's deadline: on a
/// multi-threaded runtime its worker first hands its other tasks to the other workers.
fn off_the_executor<R>(f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// A request from the script to the host: one method of `ctx.services`.
struct Request {
    id: u64,
    op: String,
    args: String,
}

/// Why the host refused a request, as the script's rejection: the message and, for a cloud
/// refusal, its code (seed 000: `CloudError('consent_required')`).
struct Refusal {
    message: String,
    code: String,
}

impl Refusal {
    /// A PKU harness Cloud refusal: `CloudError(code)` in the script.
    fn cloud(code: &str) -> Self {
        Self {
            message: code.into(),
            code: code.into(),
        }
    }

    fn new(message: impl Into<String>) -> Self {
        let message: String = message.into();
        Self {
            message: message
                .strip_prefix("error: ")
                .unwrap_or(&message)
                .to_owned(),
            code: String::new(),
        }
    }
}

type Served = Pin<Box<dyn Future<Output = (u64, Result<Value, Refusal>)> + Send>>;

/// An `error: ` string from a gate is a refusal; anything else is what it answered.
fn gate_answer(answer: String) -> Result<Value, Refusal> {
    if answer.starts_with("error: ") {
        Err(Refusal::new(answer))
    } else {
        Ok(Value::Null)
    }
}

/// Serves one request through the call's services: the gates decide, exactly as for every
/// other kind of plugin.
async fn serve(
    services: Services,
    actor: Actor,
    asker: Option<Asker>,
    request: Request,
) -> (u64, Result<Value, Refusal>) {
    let asker = asker.as_ref();
    let args: Vec<Value> = serde_json::from_str(&request.args).unwrap_or_default();
    let text = |i: usize| -> String {
        match args.get(i) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        }
    };
    let answer = match request.op.as_str() {
        "store.get" => {
            let stored = services.store_get(&text(0));
            if stored.starts_with("error: ") {
                Err(Refusal::new(stored))
            } else if stored.is_empty() {
                Ok(Value::Null)
            } else {
                // Values are stored as JSON text; an entry another kind wrote as plain text
                // reads back as that text.
                Ok(serde_json::from_str(&stored).unwrap_or(Value::String(stored)))
            }
        }
        "store.set" => {
            let value = args.get(1).cloned().unwrap_or(Value::Null);
            gate_answer(services.store_set(&text(0), &value.to_string()))
        }
        "http.get" => services
            .http_request(&reqwest::Method::GET, &text(0), &[], None)
            .await
            .map(Value::String)
            .map_err(Refusal::new),
        "context.set" => gate_answer(services.set_context(&text(0))),
        "time.resolve" => services.resolve_time(&text(0)).await.map_err(Refusal::new),
        // The one timer: it waits, and reaches nothing. The call's deadline bounds it (a wait
        // past it stops the call there).
        "timer" => {
            let ms = args.first().and_then(Value::as_u64).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms.min(TIMER_MS))).await;
            Ok(Value::Null)
        }
        "notify" => gate_answer(services.notify(&text(0))),
        "messages.send" => gate_answer(services.send_message(&text(0))),
        "tools.call" => {
            let input = args.get(1).cloned().unwrap_or_else(|| json!({}));
            let framed = services.call_tool(&text(0), &input.to_string()).await;
            called(framed)
        }
        // seed 000: a cloud call without the plugin's consent throws
        // CloudError('consent_required'); the cloud's own refusals carry their codes too.
        "cloud.call" => {
            let args = args.get(1).cloned().unwrap_or(Value::Null);
            services
                .cloud(&text(0), &args)
                .await
                .map_err(|e| match e.code() {
                    Some(code) => Refusal::cloud(code),
                    None => Refusal::new(e.to_string()),
                })
        }
        // seed 000: only the user chooses files, and a permission prompt follows a tap.
        "files.pick" | "notify.fix" if actor != Actor::User => Err(Refusal::new(format!(
            "{} needs the user's tap on a screen; a tool the {} calls cannot use it",
            request.op,
            actor.as_str()
        ))),
        "files.pick" | "notify.fix" if asker.is_none() => Err(Refusal::new(format!(
            "{} needs a screen to show it on; nothing here can",
            request.op
        ))),
        "files.pick" => {
            let shell = asker.expect("checked above");
            let asked = FilePick {
                plugin_title: services.plugin_title().to_owned(),
            };
            match shell.0.pick_file(asked).await {
                None => Ok(Value::Null),
                Some(file) => {
                    let name = file.name.clone();
                    crate::picked::read(services.language(), &file.name, file.bytes)
                        .map(|text| json!({"name": name, "text": text}))
                        .map_err(Refusal::new)
                }
            }
        }
        "notify.fix" => match serde_json::from_value::<Permission>(json!(text(0))) {
            Err(_) => Err(Refusal::new(format!(
                "notify.fix: \"{}\" is no permission the app asks for; use \"notifications\" or \"exact-alarm\"",
                text(0)
            ))),
            Ok(permission) => {
                let shell = asker.expect("checked above");
                let state = shell.0.request_permission(permission).await;
                match services.record_permission(permission, state) {
                    Ok(()) => Ok(json!(state)),
                    Err(e) => Err(Refusal::new(e)),
                }
            }
        },
        // DESIGN.md §10: the one campus client, with the plugin's scopes and the call's scope.
        "campus.request" => {
            let request = args.get(1).cloned().unwrap_or_else(|| json!({}));
            services
                .campus_request(&text(0), &request)
                .await
                .map_err(Refusal::new)
        }
        other => Err(Refusal::new(format!("ctx.services has no \"{other}\""))),
    };
    (request.id, answer)
}

/// The call-tool gate's framed answer as the script sees it: the tool's result (JSON when it is
/// JSON), or its error or refusal thrown.
fn called(framed: String) -> Result<Value, Refusal> {
    if framed.starts_with("error: ") {
        return Err(Refusal::new(framed));
    }
    let frame: Value = serde_json::from_str(&framed).unwrap_or(Value::Null);
    let content = frame["content"].as_str().unwrap_or_default().to_owned();
    if frame["is_error"] == true {
        return Err(Refusal::new(content));
    }
    Ok(serde_json::from_str(&content).unwrap_or(Value::String(content)))
}

/// Why a runtime could not be made.
enum Start {
    /// The SDK refused the plugin's definition, naming the field.
    Definition {
        field: String,
        message: String,
    },
    Failed(String),
}

/// One runtime with the plugin's bundle evaluated in it.
struct Instance {
    context: Context,
    runtime: Runtime,
    /// When the call now running must end, in nanoseconds after `epoch`; 0 while none runs.
    deadline: Arc<AtomicU64>,
    epoch: Instant,
    requests: Arc<Requests>,
    next_call: AtomicU64,
    /// Lines the script logged, sent to the host log through the running call's services.
    logs: Arc<Mutex<Vec<String>>>,
    /// The services a tool's description function reads the store through, while it runs.
    reader: Arc<Mutex<Option<Services>>>,
}

/// The host requests of each running call, and which call's code runs now. A request is
/// queued only for the call whose code makes it: a call no longer here has ended (a service
/// kept past its call reaches nothing), and services another call kept are refused while this
/// one runs (they never act as that call, its actor or its screen).
#[derive(Default)]
struct Requests {
    calls: Mutex<HashMap<u64, Queue>>,
    next: AtomicU64,
    /// The call whose entry into the runtime is running; 0 outside a tool call's entry (the
    /// bundle's definition, a description, a resolveEffect).
    running: AtomicU64,
}

/// One running call's requests: those it made that the call has not taken yet, and every one
/// not yet settled with the bytes of its arguments (the host holds them meanwhile).
#[derive(Default)]
struct Queue {
    made: Vec<Request>,
    in_flight: HashMap<u64, usize>,
    bytes: usize,
}

/// The most requests one call has in flight, and the most bytes of their arguments: the
/// runtime's memory limit does not bound what the host holds for the script.
const REQUESTS_IN_FLIGHT: usize = 64;
const ARGUMENT_BYTES_IN_FLIGHT: usize = 4 * 1024 * 1024;

/// What `__pkuHost` answers for a request it did not queue (the prelude says why): the call
/// has ended, or the services are another call's than the one running.
const ENDED: f64 = 0.0;
const ANOTHER_CALLS: f64 = -1.0;

impl Requests {
    /// Queues `op` for `call`: its id, or [`ENDED`] / [`ANOTHER_CALLS`]; past the call's bound
    /// in flight, the RangeError's message.
    fn queue(&self, call: u64, op: String, args: String) -> Result<f64, String> {
        let mut calls = crate::lock(&self.calls);
        let Some(queue) = calls.get_mut(&call) else {
            return Ok(ENDED);
        };
        if call != self.running.load(Ordering::Relaxed) {
            return Ok(ANOTHER_CALLS);
        }
        let name = match op.as_str() {
            "timer" => "setTimeout".to_owned(),
            op => format!("ctx.services.{op}"),
        };
        if queue.in_flight.len() >= REQUESTS_IN_FLIGHT {
            return Err(format!(
                "{name}: at most {REQUESTS_IN_FLIGHT} requests wait at once in one tool call"
            ));
        }
        if queue.bytes + args.len() > ARGUMENT_BYTES_IN_FLIGHT {
            return Err(format!(
                "{name}: at most {} MiB of arguments wait at once in one tool call",
                ARGUMENT_BYTES_IN_FLIGHT / (1024 * 1024)
            ));
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        queue.in_flight.insert(id, args.len());
        queue.bytes += args.len();
        queue.made.push(Request { id, op, args });
        Ok(id as f64)
    }
}

/// A running call; dropping it (the call ended, or its future was dropped) ends its services.
struct Call<'a> {
    id: u64,
    requests: &'a Requests,
}

impl Call<'_> {
    fn take_requests(&self) -> Vec<Request> {
        crate::lock(&self.requests.calls)
            .get_mut(&self.id)
            .map(|queue| std::mem::take(&mut queue.made))
            .unwrap_or_default()
    }

    /// The request `id` is answered: it no longer counts against the call's bound.
    fn settled(&self, id: u64) {
        let mut calls = crate::lock(&self.requests.calls);
        if let Some(queue) = calls.get_mut(&self.id)
            && let Some(bytes) = queue.in_flight.remove(&id)
        {
            queue.bytes -= bytes;
        }
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        crate::lock(&self.requests.calls).remove(&self.id);
    }
}

/// The most lines a script's `console.log` keeps between two entries into its runtime.
const MAX_LOG_LINES: usize = 100;

/// The most bytes of one `console.log` line kept, the mark of a cut line included.
const LOG_LINE_BYTES: usize = 4 * 1024;
const LOG_LINE_CUT: &str = " … [cut at 4 KiB]";

/// A logged line as the host keeps it: at most [`LOG_LINE_BYTES`], cut on a character's
/// boundary and marked.
fn log_line(mut line: String) -> String {
    if line.len() <= LOG_LINE_BYTES {
        return line;
    }
    let mut end = LOG_LINE_BYTES - LOG_LINE_CUT.len();
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line.truncate(end);
    line.push_str(LOG_LINE_CUT);
    line
}

/// What the host adds to the runtime before the bundle: the protocol between a tool call and
/// its services. Everything the script reaches is here.
const PRELUDE: &str = include_str!("script_prelude.js");

/// How many plugin runtimes this process has made ([`runtimes_made`]).
static RUNTIMES_MADE: AtomicU64 = AtomicU64::new(0);

/// How many QuickJS runtimes this process has made for TypeScript plugins: none to open a data
/// directory with the shipped plugins (their manifests are JSON), one on a plugin's first call.
pub fn runtimes_made() -> u64 {
    RUNTIMES_MADE.load(Ordering::Relaxed)
}

/// The SDK and zod, which every bundle imports (sdk/src/runtime.ts, built by sdk/build.mjs),
/// compiled to QuickJS bytecode by build.rs (no source text, line numbers kept),
/// stored deflated: a plugin runtime loads it, a tenth of what parsing the SDK and zod costs.
const SDK_BYTECODE_DEFLATED: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/runtime.qjsbc.deflate"));

/// [`SDK_BYTECODE_DEFLATED`] inflated, once per process, by its first plugin runtime.
static SDK_BYTECODE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

fn sdk_bytecode() -> &'static [u8] {
    SDK_BYTECODE.get_or_init(|| inflate_bytes(SDK_BYTECODE_DEFLATED))
}

/// Bytes build.rs deflated.
pub(crate) fn inflate_bytes(deflated: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut bytes = Vec::new();
    flate2::read::DeflateDecoder::new(deflated)
        .read_to_end(&mut bytes)
        .unwrap_or_else(|e| unreachable!("build.rs deflated these bytes: {e}"));
    bytes
}

/// Evaluates the SDK runtime in `cx`, from its bytecode.
fn load_sdk<'js>(cx: &Ctx<'js>) -> rquickjs::Result<()> {
    // SAFETY: build.rs wrote these bytes with the QuickJS this library links (the same
    // rquickjs version), from the SDK runtime committed beside it (sdk/runtime.js): they are
    // the bytecode JS_ReadObject expects, never input from outside.
    let module = unsafe { rquickjs::Module::load(cx.clone(), sdk_bytecode())? };
    let (_, evaluated) = module.eval()?;
    evaluated.finish::<()>()
}

impl Instance {
    fn new(source: &str, limits: Limits) -> Result<Self, Start> {
        let failed = |e: rquickjs::Error| Start::Failed(e.to_string());
        RUNTIMES_MADE.fetch_add(1, Ordering::Relaxed);
        let runtime = Runtime::new().map_err(failed)?;
        runtime.set_memory_limit(limits.memory_bytes);
        runtime.set_max_stack_size(limits.stack_bytes);
        let deadline = Arc::new(AtomicU64::new(0));
        let epoch = Instant::now();
        {
            let deadline = deadline.clone();
            runtime.set_interrupt_handler(Some(Box::new(move || {
                let at = deadline.load(Ordering::Relaxed);
                at != 0 && epoch.elapsed().as_nanos() as u64 >= at
            })));
        }
        let context = Context::full(&runtime).map_err(failed)?;
        let instance = Self {
            context,
            runtime,
            deadline,
            epoch,
            requests: Arc::default(),
            next_call: AtomicU64::new(1),
            logs: Arc::default(),
            reader: Arc::default(),
        };
        let logs = instance.logs.clone();
        let reader = instance.reader.clone();
        let requests = instance.requests.clone();
        let evaluated = instance.enter(Instant::now() + limits.deadline, |cx| {
            let host = Function::new(
                cx.clone(),
                move |cx: Ctx<'_>, call: f64, op: String, args: String| {
                    requests
                        .queue(call as u64, op, args)
                        .map_err(|bound| rquickjs::Exception::throw_range(&cx, &bound))
                },
            )?;
            let log = Function::new(cx.clone(), move |line: String| {
                let mut logs = crate::lock(&logs);
                // Bounded until the entry ends and its call sends them on; the host log then
                // keeps its own bound.
                if logs.len() < MAX_LOG_LINES {
                    logs.push(log_line(line));
                }
            })?;
            // The store as a description function reads it: the stored JSON text, "" for
            // none, or the gate's `error: ` refusal; refused outside a description.
            let read = Function::new(cx.clone(), move |key: String| {
                match &*crate::lock(&reader) {
                    Some(services) => services.store_get(&key),
                    None => "error: the store is read this way only while a description is written"
                        .into(),
                }
            })?;
            cx.globals().set("__pkuRead", read)?;
            cx.globals().set("__pkuHost", host)?;
            cx.globals().set("__pkuLog", log)?;
            cx.eval::<(), _>(PRELUDE)?;
            load_sdk(cx)?;
            cx.eval::<(), _>(source)?;
            let pku: Object = cx.globals().get("__pku")?;
            let check: Function = pku.get("check")?;
            check.call::<_, ()>(())
        });
        if let Err(error) = evaluated {
            let (field, message) = instance.definition_error(error);
            return Err(match field {
                Some(field) => Start::Definition { field, message },
                None => Start::Failed(message),
            });
        }
        Ok(instance)
    }

    /// Runs `f` in the runtime with the interrupt armed for `deadline`, as no call's code
    /// (a request made meanwhile is refused).
    fn enter<R>(
        &self,
        deadline: Instant,
        f: impl FnOnce(&Ctx) -> rquickjs::Result<R>,
    ) -> rquickjs::Result<R> {
        let at = deadline.saturating_duration_since(self.epoch).as_nanos() as u64;
        self.context.with(|cx| {
            self.requests.running.store(0, Ordering::Relaxed);
            self.deadline.store(at.max(1), Ordering::Relaxed);
            let result = f(&cx);
            self.deadline.store(0, Ordering::Relaxed);
            result
        })
    }

    /// As [`enter`](Self::enter), running `call`'s code: a request made meanwhile is that
    /// call's alone (bound here, at the native boundary, whatever services object made it).
    /// With the lines logged meanwhile, which are that call's.
    fn enter_call<R>(
        &self,
        call: &Call,
        deadline: Instant,
        f: impl FnOnce(&Ctx) -> rquickjs::Result<R>,
    ) -> (rquickjs::Result<R>, Vec<String>) {
        let mut lines = Vec::new();
        let entered = self.enter(deadline, |cx| {
            self.requests.running.store(call.id, Ordering::Relaxed);
            let result = f(cx);
            self.requests.running.store(0, Ordering::Relaxed);
            lines = std::mem::take(&mut *crate::lock(&self.logs));
            result
        });
        (entered, lines)
    }

    fn begin(&self) -> Call<'_> {
        let id = self.next_call.fetch_add(1, Ordering::Relaxed);
        crate::lock(&self.requests.calls).insert(id, Queue::default());
        Call {
            id,
            requests: &self.requests,
        }
    }

    /// The message of an engine error, with the thrown value's own message for an exception.
    fn describe(&self, error: rquickjs::Error) -> String {
        self.definition_error(error).1
    }

    /// The field a thrown DefinitionError names (SDK), and the message of any error.
    fn definition_error(&self, error: rquickjs::Error) -> (Option<String>, String) {
        if !matches!(error, rquickjs::Error::Exception) {
            return (None, error.to_string());
        }
        // Reading the thrown value may run the script's getters: bounded like any entry.
        let read = self.enter(Instant::now() + Duration::from_secs(1), |cx| {
            let thrown: JsValue = cx.catch();
            let Some(object) = thrown.as_object() else {
                let text = thrown
                    .as_string()
                    .and_then(|s| s.to_string().ok())
                    .unwrap_or_else(|| "the script threw".into());
                return Ok((None, text));
            };
            let field: Option<String> = object.get("field").ok();
            let message: Option<String> = object.get("message").ok();
            let message = message.unwrap_or_else(|| "the script threw".into());
            // The SDK's message starts with the field it names; the load error names it once.
            let message = match &field {
                Some(f) => message
                    .strip_prefix(&format!("{f}: "))
                    .unwrap_or(&message)
                    .to_owned(),
                None => message,
            };
            Ok((field, message))
        });
        read.unwrap_or_else(|_| {
            (
                None,
                "the script threw, and what it threw could not be read".into(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_sdk_bytecode_is_sdk_runtime_js_compiled_and_a_fraction_of_it() {
        // docs/size.md: the SDK runtime ships as deflated bytecode; it is the file's.
        let file =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../sdk/runtime.js"))
                .unwrap();
        let runtime = Runtime::new().unwrap();
        let context = Context::full(&runtime).unwrap();
        let compiled = context
            .with(|cx| {
                rquickjs::Module::declare(cx.clone(), "@pku-harness/runtime", file.clone())?.write(
                    rquickjs::WriteOptions {
                        endianness: rquickjs::WriteOptionsEndianness::Little,
                        strip_source: true,
                        ..rquickjs::WriteOptions::default()
                    },
                )
            })
            .unwrap();
        assert!(
            sdk_bytecode() == compiled,
            "the stored bytecode is not runtime.js's"
        );
        // Bytecode is larger than its source (324 KB against 241 KB), deflated under half of it.
        assert!(
            SDK_BYTECODE_DEFLATED.len() * 2 < file.len(),
            "{}",
            SDK_BYTECODE_DEFLATED.len()
        );
        // Loaded, it gives the modules a bundle imports.
        context
            .with(|cx| {
                load_sdk(&cx)?;
                cx.eval::<bool, _>(
                    "typeof __pkuModules.zod.object === 'function' \
                     && typeof __pkuModules['@pku-harness/sdk'].definePlugin === 'function'",
                )
            })
            .map(|both| assert!(both))
            .unwrap();
    }

    #[test]
    fn each_stored_bundle_inflates_to_its_files() {
        // docs/size.md: the shipped plugins' files ship deflated; what runs is the file.
        for bundle in BUNDLES {
            let dir = format!("{}/../plugins/{}", env!("CARGO_MANIFEST_DIR"), bundle.id);
            let source = std::fs::read_to_string(format!("{dir}/bundle.js")).unwrap();
            let manifest = std::fs::read_to_string(format!("{dir}/manifest.json")).unwrap();
            assert_eq!(bundle.source(), source, "{}", bundle.id);
            assert_eq!(bundle.manifest(), manifest, "{}", bundle.id);
            assert!(bundle.source.len() < source.len(), "{}", bundle.id);
        }
    }

    /// Each shipped manifest passes every check of a plugin's load (`Plugin::load`: its
    /// schemas compiled, its examples validated against them), which [`Shipped`] leaves to
    /// this test and to each tool's first call.
    #[test]
    fn the_shipped_bundles_load() {
        for bundle in BUNDLES {
            let (plugin, _) = load(&bundle.source(), Limits::default()).unwrap();
            assert_eq!(plugin.id, bundle.id);
            let manifest = parse_manifest_text(bundle.manifest()).unwrap();
            // Opening reads the same text without the duplicate-key pass: the same manifest.
            let opened: crate::registry::Manifest =
                serde_json::from_str(bundle.manifest()).unwrap();
            assert_eq!(
                serde_json::to_value(&opened).unwrap(),
                serde_json::to_value(&manifest).unwrap()
            );
            Plugin::load(manifest, PluginKind::Bundled).unwrap();
        }
        let shipped = Shipped.bundled();
        let ids: Vec<&str> = shipped.iter().map(|(p, _)| p.id.as_str()).collect();
        let bundles: Vec<&str> = BUNDLES.iter().map(|b| b.id).collect();
        assert_eq!(ids, bundles);
    }

    /// Node (sdk/build.mjs, which writes each manifest.json) and QuickJS (which runs the
    /// bundle) never disagree silently: the manifest the core reads at open is, byte for byte,
    /// the one the bundle gives when it runs.
    #[test]
    fn each_shipped_manifest_is_what_its_bundle_gives() {
        for bundle in BUNDLES {
            let read = read_manifest(&bundle.source(), Limits::default()).unwrap();
            assert_eq!(
                read,
                bundle.manifest(),
                "plugins/{}/manifest.json differs from what its bundle gives: run \
                 scripts/check-bundles.sh --write",
                bundle.id
            );
        }
    }

    #[test]
    fn a_catalog_beside_the_shipped_plugins_lists_each_id_once_its_own_first() {
        let bundled = WithBundles(crate::plugins::samples::Samples).bundled();
        let mut ids: Vec<&str> = bundled.iter().map(|(p, _)| p.id.as_str()).collect();
        // The samples' in-memory wallet, not the shipped 校园卡 of the same id.
        let wallet = bundled.iter().find(|(p, _)| p.id == "wallet").unwrap();
        assert!(wallet.0.requires.is_empty());
        // Every shipped id once (the samples' own wallet standing for the shipped one).
        ids.sort_unstable();
        let mut shipped: Vec<&str> = BUNDLES.iter().map(|bundle| bundle.id).collect();
        shipped.sort_unstable();
        assert_eq!(ids, shipped);
    }
}
