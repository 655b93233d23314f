//! The one invoke path (seed 000: "Whether a call runs is decided in one place only"). Every
//! call — a tap, the agent, a scheduled run, a plugin's own call — comes through
//! [`Invoker::invoke`]: gather the facts from the owners of the state, [`decide`], ask the user
//! through the [`ApprovalBroker`] when the decision says so, run the plugin's handler, shape the
//! result, and write each step to the audit log.
//!
//! The facts are copied out of each owner under its lock, one lock at a time, and every lock is
//! released before a prompt waits or plugin code runs (engine.rs, the lock rule).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::audit::{Audit, AuditEvent};
use crate::clock::Clock;
use crate::consent::{Consent, ConsentError, Permission, PermissionState};
use crate::conversations::Conversations;
use crate::error::EngineError;
use crate::gates::{CallScope, Dispatched, StoreGate, ToolCatalog, out_of_scope};
use crate::installed::InstalledPlugins;
use crate::picked::{FilePick, PickedFile};
use crate::policy::{
    Actor, AllowanceScope, Answer, Availability, Code, Decision, Facts, Limit, Mode, MoneyFacts,
    PromptKind, RuleSet, Rules, Standing, Verdict, decide, precheck,
};
use crate::registry::{Effect, MCP_DESCRIPTION_CAP, Plugin, Tool, current_tool_id, plugin_id};
use crate::services::{FILES_DIR, Host, PluginGates, PluginHost, Services};
use crate::settings::{AppSettings, Language};
use crate::store::Store;
use crate::store::StoreError;
pub use crate::store::allowances::AllowanceRow;
use crate::store::allowances::{
    allowances_in_force, delete_allowance, insert_allowance, prune_allowances,
};
use crate::store::audit::AuditRow;
use crate::store::spending::{Payment, paid_before, record_payment, spent_between};
use crate::text::one_line;
use crate::turn::{ConversationSettings, Scope};
use crate::why::{RuleAt, Why};

pub use crate::handler::{
    Asker, Assessment, Grant, LocalNow, PluginHandler, Progress, ToolContext, TurnContext,
};
pub use crate::plugins::elicitation::{Elicitation, ElicitationAnswer};

/// The model's history keeps at most this many characters of each result (seed 004).
pub const MODEL_RESULT_CHARS: usize = 12_000;

/// An approval prompt, as the shell shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prompt {
    pub plugin: String,
    pub plugin_title: String,
    pub tool: String,
    pub tool_title: String,
    pub effect: Effect,
    pub input: Value,
    pub kind: PromptKind,
    pub offers: Vec<Answer>,
    /// The target for alwaysAsk and targeted tools; the tool's title otherwise.
    pub headline: String,
    /// Why the user is asked (the deciding step), in English.
    pub reason: String,
    /// The same, as a value: `why.text(language)` in the user's language.
    #[serde(skip)]
    pub why: Why,
    pub conversation: Option<String>,
    /// The turn has read untrusted content (DESIGN.md §3): the reason "Always allow" is not
    /// offered, which the sheet says.
    pub tainted: bool,
    /// A money tool's declared amount, in fen: the sheet's headline (DESIGN.md §3 8e).
    pub amount_fen: Option<u64>,
    /// A money tool's declared payee, as the call names it.
    pub payee: Option<String>,
}

/// Whoever shows prompts to the user and waits for the answer.
#[async_trait]
pub trait ApprovalBroker: Send + Sync {
    async fn ask(&self, prompt: Prompt) -> Answer;

    /// A remote server asks the student for something while its tool runs (MCP elicitation):
    /// the shell shows the form or the page and waits for the answer. A shell that shows none
    /// declines.
    async fn elicit(&self, _request: Elicitation) -> ElicitationAnswer {
        ElicitationAnswer::Decline
    }

    /// Resolves once the turn a call of `conversation` runs in is stopped (the student's
    /// Stop); never while it runs, nor for a conversation with no turn running. The engine's
    /// own broker knows the turns; a shell's never resolves it.
    async fn turn_stopped(&self, _conversation: &str) {
        std::future::pending().await
    }

    /// Whether this shell shows a held public call with its 撤销 (issue 41.4): only then does
    /// a public call wait out `public.undoSeconds`, since a window nobody sees only delays it.
    fn shows_undo(&self) -> bool {
        false
    }

    /// A tool the student tapped opens the file picker (seed 000: only the user chooses files,
    /// from a screen): the shell shows its picker for the kinds [`crate::picked`] reads and
    /// returns the file picked, `None` when the student picked nothing. A shell with no picker
    /// picks nothing.
    async fn pick_file(&self, _request: FilePick) -> Option<PickedFile> {
        None
    }

    /// A tool the student tapped asks for a system permission (seed 000:
    /// `services.notify.fix(kind)`): the shell shows the system's dialog and returns its answer.
    /// A shell with no such dialog answers `Unknown`.
    async fn request_permission(&self, _permission: Permission) -> PermissionState {
        PermissionState::Unknown
    }
}

/// One call.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The tool id, `plugin.tool`.
    pub tool: String,
    pub actor: Actor,
    pub input: Value,
    pub conversation: Option<String>,
}

/// How a call ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The tool ran: the whole result for the UI, and the model's copy.
    Ran { result: Value, for_model: String },
    /// The tool ran and failed.
    Failed { message: String },
    /// The call did not run.
    Refused { code: Code, message: String },
}

/// The decision, the answer if one was asked for, and the outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub decision: Decision,
    /// Why the deciding step decided, in words.
    pub reason: String,
    pub prompt: Option<Prompt>,
    pub answer: Option<Answer>,
    pub outcome: Outcome,
}

impl Invocation {
    /// What the agent receives: the (cut) result, or `{"error": {"code", "message"}}` with the
    /// message cut the same way (DESIGN.md §5: every text that reaches the model from a tool is
    /// cut to 12,000 characters — a tool's error and a refusal as much as a result).
    pub fn for_model(&self) -> String {
        match &self.outcome {
            Outcome::Ran { for_model, .. } => for_model.clone(),
            Outcome::Failed { message } => {
                json!({"error": {"code": "tool_failed", "message": cut_for_model(message)}})
                    .to_string()
            }
            Outcome::Refused { code, message } => {
                json!({"error": {"code": code.as_str(), "message": cut_for_model(message)}})
                    .to_string()
            }
        }
    }
}

/// A tool as the model is offered it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// See [`Tool::schema_as_declared`].
    #[serde(skip)]
    pub schema_as_declared: bool,
}

/// Everything gathered under the lock for one call, so the lock is released before any
/// plugin code runs or any prompt waits.
struct Snapshot {
    target: Target,
    availability: Availability,
    unmet: Option<String>,
    terms_accepted: bool,
    mode: Mode,
    settings: ConversationSettings,
    scope: Scope,
    tainted: bool,
    turn: Option<u64>,
    user_asked: bool,
    global_rules: Arc<RuleSet>,
    conversation_rules: Arc<RuleSet>,
}

/// What the called id names.
enum Target {
    /// The tool, its plugin and the code and gates behind it.
    Found {
        tool: Arc<Tool>,
        plugin: Arc<Plugin>,
        handler: Arc<dyn PluginHandler>,
        gates: Arc<PluginGates>,
    },
    /// No such tool; its plugin when that is installed, for the refusal's words.
    Missing { plugin: Option<Arc<Plugin>> },
}

impl Target {
    fn tool(&self) -> Option<&Arc<Tool>> {
        match self {
            Target::Found { tool, .. } => Some(tool),
            Target::Missing { .. } => None,
        }
    }

    fn plugin(&self) -> Option<&Arc<Plugin>> {
        match self {
            Target::Found { plugin, .. } => Some(plugin),
            Target::Missing { plugin } => plugin.as_ref(),
        }
    }
}

/// The invoke path and what it reads: the owners of the state a decision needs, the broker
/// that asks the user, and the audit it writes to.
/// A public call waiting out its undo window (issue 41.4): nothing of it is sent before the
/// window ends, and an undo means it never is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldCall {
    pub id: i64,
    pub conversation: Option<String>,
    pub plugin: String,
    pub tool: String,
    /// When it is sent unless undone.
    pub until_ms: i64,
}

/// How a held call's window ended before its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Release {
    Undo,
    SendNow,
}

pub struct Invoker {
    pub(crate) plugins: Arc<InstalledPlugins>,
    pub(crate) conversations: Arc<Conversations>,
    pub(crate) consent: Arc<Consent>,
    pub(crate) audit: Arc<Audit>,
    pub(crate) host: Arc<Host>,
    /// The spending ledger's database (DESIGN.md §3 8e: the day's total, payees paid before).
    store: Arc<Store>,
    broker: Arc<dyn ApprovalBroker>,
    clock: Arc<dyn Clock>,
    /// The time zone a tool is told its local time in.
    settings: Arc<AppSettings>,
    /// The data directory; none for an in-memory engine.
    data_dir: Option<PathBuf>,
    /// Handed to running tools, so a plugin's own calls come back here without a cycle of
    /// strong references.
    me: Weak<Invoker>,
    /// The public calls in their undo window, for the screens and whoever waits on them.
    held: tokio::sync::watch::Sender<Vec<HeldCall>>,
    releases: Mutex<HashMap<i64, tokio::sync::oneshot::Sender<Release>>>,
    last_held: AtomicI64,
}

impl Invoker {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        plugins: Arc<InstalledPlugins>,
        conversations: Arc<Conversations>,
        consent: Arc<Consent>,
        audit: Arc<Audit>,
        host: Arc<Host>,
        store: Arc<Store>,
        broker: Arc<dyn ApprovalBroker>,
        clock: Arc<dyn Clock>,
        settings: Arc<AppSettings>,
        data_dir: Option<PathBuf>,
    ) -> Arc<Invoker> {
        Arc::new_cyclic(|me| Invoker {
            plugins,
            conversations,
            consent,
            audit,
            host,
            store,
            broker,
            clock,
            settings,
            data_dir,
            me: me.clone(),
            held: tokio::sync::watch::Sender::new(Vec::new()),
            releases: Mutex::new(HashMap::new()),
            last_held: AtomicI64::new(0),
        })
    }

    /// The public calls waiting out their undo window now, oldest first.
    pub fn held_calls(&self) -> Vec<HeldCall> {
        self.held.borrow().clone()
    }

    /// Changes whenever a call is held or its window ends: a screen re-reads on it.
    pub fn watch_held_calls(&self) -> tokio::sync::watch::Receiver<Vec<HeldCall>> {
        self.held.subscribe()
    }

    /// The student's 撤销 on held call `id`: nothing of it is sent. False when its window has
    /// already ended.
    pub fn undo_call(&self, id: i64) -> bool {
        self.release(id, Release::Undo)
    }

    /// Sends held call `id` now, without waiting out its window.
    pub fn send_held_now(&self, id: i64) -> bool {
        self.release(id, Release::SendNow)
    }

    fn release(&self, id: i64, how: Release) -> bool {
        let sender = self.releases.lock().ok().and_then(|mut r| r.remove(&id));
        sender.is_some_and(|s| s.send(how).is_ok())
    }

    /// Issue 41.4: a public call waits `public.undoSeconds` on the core's clock with a visible
    /// 撤销 before anything is sent. Whether it may be sent: not after an undo, nor once its
    /// turn was stopped while it waited.
    async fn wait_out_undo(&self, call: &Call, tool: &Tool) -> bool {
        let seconds = self.settings.get().public.undo_seconds;
        if seconds == 0 || !self.broker.shows_undo() {
            return true;
        }
        let id = self.last_held.fetch_add(1, Ordering::SeqCst) + 1;
        let until_ms = self.clock.now_ms() + i64::from(seconds) * 1000;
        let (release, released) = tokio::sync::oneshot::channel();
        if let Ok(mut releases) = self.releases.lock() {
            releases.insert(id, release);
        }
        self.held.send_modify(|held| {
            held.push(HeldCall {
                id,
                conversation: call.conversation.clone(),
                plugin: tool.plugin.clone(),
                tool: tool.id.clone(),
                until_ms,
            })
        });
        let stopped = async {
            match call.conversation.as_deref() {
                Some(conversation) => self.broker.turn_stopped(conversation).await,
                None => std::future::pending().await,
            }
        };
        let send = tokio::select! {
            how = released => how != Ok(Release::Undo),
            () = self.clock.until(until_ms) => true,
            () = stopped => false,
        };
        if let Ok(mut releases) = self.releases.lock() {
            releases.remove(&id);
        }
        self.held.send_modify(|held| held.retain(|h| h.id != id));
        send
    }

    /// The tools the model is offered in a conversation: those that could run for it
    /// (`policy::precheck` with actor agent). A tool whose effect is off, that a deny rule
    /// refuses outright, that is userOnly, or whose plugin cannot be reached is left out — and
    /// still refused if called by name. Plan mode leaves the writes in the list, so the model
    /// can plan with them; they are refused if called while it is on.
    pub fn model_tools(&self, conversation: Option<&str>) -> Vec<ModelTool> {
        self.offered(Actor::Agent, conversation)
    }

    /// Every installed tool that could run for `actor` in `conversation`, whatever the input
    /// (`policy::precheck`), as the model is offered it.
    pub fn offered(&self, actor: Actor, conversation: Option<&str>) -> Vec<ModelTool> {
        let tools = self.offered_tools(actor, conversation);
        let written = self.descriptions(&tools);
        tools
            .iter()
            .zip(written)
            .map(|(tool, written)| ModelTool {
                name: tool.model_name(),
                description: written.unwrap_or_else(|| tool.description.clone()),
                input_schema: tool.input.source().clone(),
                schema_as_declared: tool.schema_as_declared,
            })
            .collect()
    }

    /// The tools `offered` lists, as the registry holds them: the turn loop keeps their specs
    /// written as JSON while the same tools (the same `Arc`s) are offered.
    pub(crate) fn offered_tools(&self, actor: Actor, conversation: Option<&str>) -> Vec<Arc<Tool>> {
        let consent = self.consent.get();
        let view = self.conversations.for_call(conversation);
        let rules = Rules {
            global: &view.global_rules,
            conversation: &view.conversation_rules,
        };
        self.plugins.read(|state| {
            let mut tools = Vec::new();
            for plugin in state.registry.plugins() {
                let installed = &state.installed[&plugin.id];
                let availability = match plugin.requires.iter().any(|r| !consent.meets(r)) {
                    _ if !installed.enabled => Availability::Disabled,
                    true => Availability::Unmet,
                    false => Availability::Ready,
                };
                for tool in &plugin.tools {
                    let standing = Standing {
                        actor,
                        tool: Some(tool),
                        availability,
                        terms_accepted: consent.terms_accepted(),
                        mode: state.modes.effective(plugin, tool.effect).0,
                        plan_mode: false,
                    };
                    if precheck(&standing, rules).is_ok() {
                        tools.push(tool.clone());
                    }
                }
            }
            tools
        })
    }

    /// The description the model reads for each of `tools`, where its plugin's code writes it
    /// ([`Tool::describes`]) — `None` for the manifest's. The plugin's code runs outside the
    /// lock, with services that reach its store only. What it wrote reaches every request of a
    /// turn, so it is kept as a remote server's description is: one line, at most
    /// [`MCP_DESCRIPTION_CAP`] characters.
    pub(crate) fn descriptions(&self, tools: &[Arc<Tool>]) -> Vec<Option<String>> {
        if !tools.iter().any(|t| t.describes) {
            return vec![None; tools.len()];
        }
        let writers: Vec<_> = self.plugins.read(|state| {
            tools
                .iter()
                .map(|tool| {
                    let installed = state
                        .installed
                        .get(&tool.plugin)
                        .filter(|_| tool.describes)?;
                    Some((
                        installed.plugin.clone(),
                        installed.handler.clone(),
                        installed.gates.clone(),
                    ))
                })
                .collect()
        });
        tools
            .iter()
            .zip(writers)
            .map(|(tool, writer)| {
                let (plugin, handler, gates) = writer?;
                let unbounded = Arc::new(CallScope::unbounded());
                let chain = vec![tool.id.clone()];
                let services =
                    self.services(plugin, gates, Actor::Agent, None, unbounded, None, chain);
                let written = handler.describe(tool, &services)?;
                Some(one_line(&written, MCP_DESCRIPTION_CAP))
            })
            .collect()
    }

    /// A plugin's own folder in the data directory (its store, and its files beneath
    /// [`FILES_DIR`]).
    fn plugin_folder(&self, plugin: &str) -> Option<PathBuf> {
        self.data_dir
            .as_ref()
            .map(|d| d.join("plugins").join(plugin))
    }

    /// Runs `f` on installed `plugin`'s store gate, the one its calls use; none when no such
    /// plugin is installed, the `error: ` string when it has no store.
    pub(crate) fn with_plugin_store<T>(
        &self,
        plugin: &str,
        f: impl FnOnce(&StoreGate) -> T,
    ) -> Option<Result<T, String>> {
        let (installed, gates) = self.plugins.read(|state| {
            let i = state.installed.get(plugin)?;
            Some((i.plugin.clone(), i.gates.clone()))
        })?;
        let folder = self.plugin_folder(plugin);
        Some(gates.store(&installed, folder.as_deref()).map(f))
    }

    /// The folder a plugin's file reads are confined to.
    pub(crate) fn plugin_files_folder(&self, plugin: &str) -> Option<PathBuf> {
        self.plugin_folder(plugin).map(|f| f.join(FILES_DIR))
    }

    /// What a plugin's code may reach when `actor` runs it in `conversation`: its gates and
    /// folder, the core weakly, bounded by `scope` (and for a scheduled call by the scope of
    /// the conversation `made_in`). `chain`: the calls it runs within, ending with its own.
    #[allow(clippy::too_many_arguments)]
    fn services(
        &self,
        plugin: Arc<Plugin>,
        gates: Arc<PluginGates>,
        actor: Actor,
        conversation: Option<String>,
        scope: Arc<CallScope>,
        made_in: Option<String>,
        chain: Vec<String>,
    ) -> Services {
        Services {
            folder: self.plugin_folder(&plugin.id),
            plugin,
            gates,
            core: self.me.clone(),
            actor,
            conversation,
            scope,
            made_in,
            chain,
        }
    }

    /// `made_in`: the conversation whose scope bounds a scheduled call (the one that made its
    /// job); an agent's call is bounded by its own conversation's, a tap by none.
    fn snapshot(&self, call: &Call, made_in: Option<&str>) -> Snapshot {
        // One owner at a time, never nested (engine.rs, the lock rule).
        let view = self.conversations.for_call(call.conversation.as_deref());
        // seed 003: the scope applies to the agent (step 8b) and the scheduler (step 6); a tap
        // is never questioned (step 7).
        let scope = match call.actor {
            Actor::Agent => view.scope.clone(),
            Actor::Scheduler => made_in.map_or_else(Scope::default, |c| {
                self.conversations.for_call(Some(c)).scope
            }),
            Actor::User => Scope::default(),
        };
        let plugin_id = plugin_id(&call.tool);
        let (tool, installed, mode) = self.plugins.read(|state| {
            let tool = state.registry.tool(&call.tool).cloned();
            let installed = state.installed.get(plugin_id);
            let mode = match (installed, &tool) {
                (Some(i), Some(t)) => state.modes.effective(&i.plugin, t.effect).0,
                _ => Mode::Off,
            };
            let installed = installed.map(|i| {
                (
                    i.plugin.clone(),
                    i.handler.clone(),
                    i.gates.clone(),
                    i.enabled,
                )
            });
            (tool, installed, mode)
        });
        let (terms_accepted, missing) = self.consent.read(|consent| {
            let missing = installed
                .as_ref()
                .and_then(|(p, ..)| p.requires.iter().find(|r| !consent.meets(r)).cloned());
            (consent.terms_accepted(), missing)
        });
        let mut unmet = None;
        let availability = match (&installed, &tool) {
            (None, _) => Availability::NotInstalled,
            (Some(_), None) => Availability::NoSuchTool,
            (Some((.., enabled)), Some(_)) if !enabled => Availability::Disabled,
            (Some(_), Some(_)) => match missing {
                Some(r) => {
                    unmet = Some(r);
                    Availability::Unmet
                }
                None => Availability::Ready,
            },
        };
        let target = match (tool, installed) {
            (Some(tool), Some((plugin, handler, gates, _))) => Target::Found {
                tool,
                plugin,
                handler,
                gates,
            },
            (_, installed) => Target::Missing {
                plugin: installed.map(|(plugin, ..)| plugin),
            },
        };
        // DESIGN.md §3: an "Always allow" for this conversation or today makes the mode auto
        // within its scope while it is in force; off still blocks, and a tap is never asked.
        let mode = match (&target, mode, call.actor) {
            (Target::Found { tool, .. }, Mode::Ask, Actor::Agent | Actor::Scheduler)
                if self.allowed_now(tool, call.conversation.as_deref()) =>
            {
                Mode::Auto
            }
            _ => mode,
        };
        Snapshot {
            target,
            availability,
            unmet,
            terms_accepted,
            mode,
            settings: view.settings,
            scope,
            tainted: view.tainted,
            turn: view.turn,
            user_asked: view.user_asked,
            global_rules: view.global_rules,
            conversation_rules: view.conversation_rules,
        }
    }

    /// The offered tool whose inputs a refused call's input looks like, as `Title (name)`: a
    /// call meant for another tool (classrooms' `building` and `day` sent to canteen__crowd)
    /// is told which one. It names a tool only when every field the called tool does not have
    /// is one of that tool's, and more than half of the input's fields are.
    fn looks_like(&self, call: &Call, snap: &Snapshot) -> Option<String> {
        let called = snap.target.tool()?;
        let fields: Vec<&String> = call.input.as_object()?.keys().collect();
        let has = |tool: &Tool, field: &str| {
            tool.input.source()["properties"]
                .as_object()
                .is_some_and(|p| p.contains_key(field))
        };
        if fields.iter().all(|f| has(called, f)) {
            return None;
        }
        let best = self
            .offered_tools(call.actor, call.conversation.as_deref())
            .into_iter()
            .filter(|tool| tool.id != called.id)
            .filter(|tool| fields.iter().all(|f| has(called, f) || has(tool, f)))
            .map(|tool| (fields.iter().filter(|f| has(&tool, f)).count(), tool))
            .filter(|(shared, _)| shared * 2 > fields.len())
            // The most fields shared; the first offered of equals.
            .reduce(|best, next| if next.0 > best.0 { next } else { best })?
            .1;
        let name = match call.actor {
            Actor::Agent => best.model_name(),
            _ => best.id.clone(),
        };
        let title = best.title_en.as_deref().unwrap_or(&best.title);
        Some(format!("{title} ({name})"))
    }

    /// Decides a call without running it or asking anyone: what `invoke` would do first.
    pub fn decide(&self, call: &Call) -> Decision {
        self.decide_made_in(call, None)
    }

    /// What `invoke_made_in` would decide first.
    pub fn decide_made_in(&self, call: &Call, made_in: Option<&str>) -> Decision {
        let snap = self.snapshot(call, made_in);
        self.decide_snapshot(call, &snap).0
    }

    fn decide_snapshot(
        &self,
        call: &Call,
        snap: &Snapshot,
    ) -> (Decision, Option<String>, Assessment, Option<MoneyFacts>) {
        let tool = snap.target.tool().map(|t| &**t);
        let mut input_error = tool.and_then(|t| t.input.validate(&call.input).err());
        // DESIGN.md §3 8e: a money call's declared amount against the student's limits. An
        // amount that cannot be read is an invalid input, never an amount of nothing.
        let money = match tool.filter(|_| input_error.is_none()) {
            Some(t) => match t.amount_fen(&call.input) {
                Some(Ok(fen)) => Some(self.money_facts(t, &call.input, fen)),
                Some(Err(e)) => {
                    input_error = Some(e);
                    None
                }
                None => None,
            },
            None => None,
        };
        let assessment = match &snap.target {
            Target::Found { tool, handler, .. } if input_error.is_none() => {
                handler.assess(tool, &call.input, &snap.scope)
            }
            _ => Assessment::default(),
        };
        let facts = Facts {
            actor: call.actor,
            tool,
            availability: snap.availability,
            terms_accepted: snap.terms_accepted,
            input: &call.input,
            input_valid: input_error.is_none(),
            mode: snap.mode,
            preset: snap.settings.preset,
            plan_mode: snap.settings.plan_mode,
            tainted: snap.tainted,
            check: assessment.check,
            sensitive: assessment.sensitive,
            has_target: tool.is_some_and(|t| t.target.is_some()) || assessment.target.is_some(),
            money,
        };
        let rules = Rules {
            global: &snap.global_rules,
            conversation: &snap.conversation_rules,
        };
        (decide(&facts, rules), input_error, assessment, money)
    }

    /// The decision's money facts for a call of `tool` paying `amount_fen` now. A ledger that
    /// cannot be read fails closed: the day counts as spent and the payee as new.
    fn money_facts(&self, tool: &Tool, input: &Value, amount_fen: u64) -> MoneyFacts {
        let settings = self.settings.get();
        let (from, to) = local_day(self.clock.now_ms(), &settings.time_zone);
        let payee = tool.payee(input);
        let ledger = self.store.read(|c| {
            let spent = spent_between(c, from, to)?;
            let known = match &payee {
                Some(p) => Some(paid_before(c, &tool.plugin, p)?),
                None => None,
            };
            Ok((spent, known))
        });
        let (spent_today_fen, payee_known) = match ledger {
            Ok((spent, known)) => (spent, known.or(tool.payee.as_ref().map(|_| false))),
            Err(e) => {
                eprintln!("harness: the spending ledger could not be read: {e}");
                (u64::MAX, tool.payee.as_ref().map(|_| false))
            }
        };
        MoneyFacts {
            amount_fen,
            per_payment_fen: u64::from(settings.money.per_payment_yuan) * 100,
            per_day_fen: u64::from(settings.money.per_day_yuan) * 100,
            spent_today_fen,
            payee_known,
        }
    }

    /// Counts a money call that ran toward the day's total, and its payee as paid (a tap
    /// too: it is never questioned, but it counts — DESIGN.md §3 8e).
    fn record_payment(&self, call: &Call, snap: &Snapshot, tool: &Tool) {
        let Some(Ok(amount_fen)) = tool.amount_fen(&call.input) else {
            return;
        };
        let payment = Payment {
            at_ms: self.clock.now_ms(),
            plugin: tool.plugin.clone(),
            tool: tool.id.clone(),
            actor: call.actor.as_str().to_owned(),
            payee: tool.payee(&call.input),
            amount_fen,
        };
        if let Err(e) = self.store.write(|tx| record_payment(tx, &payment)) {
            let message = format!("the payment was not counted toward the day's total: {e}");
            self.record(call, snap, AuditEvent::Failed { message });
        }
    }

    /// Whether an allowance in force now lets `tool`'s effect run unasked in `conversation`:
    /// one for today until the local day ends, one for a conversation in that conversation. A
    /// store that cannot be read allows nothing (fail closed).
    fn allowed_now(&self, tool: &Tool, conversation: Option<&str>) -> bool {
        let now = self.clock.now_ms();
        let rows = self
            .store
            .read(|c| allowances_in_force(c, now))
            .unwrap_or_default();
        rows.iter().any(|row| {
            row.plugin == tool.plugin
                && row.effect == tool.effect.as_str()
                && match AllowanceScope::parse(&row.scope) {
                    Some(AllowanceScope::Today) => true,
                    Some(AllowanceScope::Conversation) => {
                        conversation.is_some() && row.conversation.as_deref() == conversation
                    }
                    // "Always" is the mode itself (seed 000); its row is for the list.
                    _ => false,
                }
        })
    }

    /// Every "Always allow" in force now, oldest first: the "已允许" screen's rows (DESIGN.md
    /// §3). Only the student's screens read them; no tool lists or changes them (uiOnly).
    pub fn allowances(&self) -> Result<Vec<AllowanceRow>, StoreError> {
        let now = self.clock.now_ms();
        self.store.read(|c| allowances_in_force(c, now))
    }

    /// What the agent and the student's taps paid today, in fen: the local day in the
    /// settings time zone, as the per-day limit counts it (DESIGN.md §3 8e).
    pub fn spent_today_fen(&self) -> Result<u64, StoreError> {
        let (from, to) = local_day(self.clock.now_ms(), &self.settings.get().time_zone);
        self.store.read(|c| spent_between(c, from, to))
    }

    /// Revokes allowance `id`: it holds no more. Revoking an "always" one puts back the mode it
    /// replaced, unless the student has set another mode since.
    pub fn revoke_allowance(&self, id: i64) -> Result<(), EngineError> {
        let Some(row) = self.store.write(|tx| delete_allowance(tx, id))? else {
            return Ok(());
        };
        let before = row.mode_before.as_deref().and_then(Mode::parse);
        let effect = Effect::parse(&row.effect);
        if let (Some(before), Some(effect)) = (before, effect) {
            let now = self.plugins.read(|s| {
                s.installed
                    .get(&row.plugin)
                    .map(|i| s.modes.effective(&i.plugin, effect).0)
            });
            if now == Some(Mode::Auto) {
                self.plugins.set_mode(&row.plugin, effect, before)?;
            }
        }
        Ok(())
    }

    /// Keeps an "Always allow" of `scope` for `tool`'s plugin and effect, with its end: the end
    /// of the local day for today, none for a conversation (it holds there only) or for always,
    /// which also sets the mode to auto as seed 000 says, remembering the mode it replaced.
    fn allow_within(
        &self,
        tool: &Tool,
        scope: AllowanceScope,
        call: &Call,
        mode_before: Mode,
    ) -> Result<(), String> {
        let now = self.clock.now_ms();
        let until_ms = match scope {
            AllowanceScope::Today => Some(local_day(now, &self.settings.get().time_zone).1),
            AllowanceScope::Conversation | AllowanceScope::Always => None,
        };
        if scope == AllowanceScope::Always {
            self.plugins
                .set_mode(&tool.plugin, tool.effect, Mode::Auto)
                .map_err(|e| e.to_string())?;
        }
        let row = AllowanceRow {
            id: 0,
            plugin: tool.plugin.clone(),
            effect: tool.effect.as_str().to_owned(),
            scope: scope.as_str().to_owned(),
            conversation: match scope {
                AllowanceScope::Conversation => call.conversation.clone(),
                _ => None,
            },
            tool: tool.id.clone(),
            since_ms: now,
            until_ms,
            mode_before: (scope == AllowanceScope::Always).then(|| mode_before.as_str().to_owned()),
        };
        self.store
            .write(|tx| {
                prune_allowances(tx, now)?;
                insert_allowance(tx, &row)
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// The one invoke path.
    pub async fn invoke(&self, call: Call) -> Invocation {
        self.invoke_made_in(call, None).await
    }

    /// The one invoke path, for a scheduled call of a job that conversation `made_in` made: it
    /// is bounded by that conversation's scope (seed 003; DESIGN.md §3 step 6), as it stands
    /// when the call is decided. A job the user made (`None`) is bounded by no conversation's.
    pub async fn invoke_made_in(&self, call: Call, made_in: Option<String>) -> Invocation {
        self.invoke_with(call, made_in, None, &[]).await
    }

    /// The one invoke path, with the running call's progress reported to `progress` (the
    /// agent's turn shows it on the call).
    pub async fn invoke_reporting(&self, call: Call, progress: Progress) -> Invocation {
        self.invoke_with(call, None, Some(progress), &[]).await
    }

    /// `outer`: the calls a plugin's call is nested in, outermost first (empty for every other).
    async fn invoke_with(
        &self,
        call: Call,
        made_in: Option<String>,
        progress: Option<Progress>,
        outer: &[String],
    ) -> Invocation {
        // A tool a shipped plugin renamed is called, audited and asked about by its id now.
        let call = Call {
            tool: current_tool_id(&call.tool).to_owned(),
            ..call
        };
        let snap = self.snapshot(&call, made_in.as_deref());
        let (decision, mut input_error, assessment, money) = self.decide_snapshot(&call, &snap);
        if decision.verdict == Verdict::Refuse(Code::InvalidInput) {
            input_error = input_error.map(|problems| match self.looks_like(&call, &snap) {
                Some(other) => format!("{problems}. These look like the inputs of {other}"),
                None => problems,
            });
        }
        let why = explain(&decision, &snap, &assessment, money);
        let reason = why.text(Language::En);
        self.record(&call, &snap, AuditEvent::Decided { decision });

        let mut prompt = None;
        let mut answer = None;
        let found = match &snap.target {
            Target::Found {
                tool,
                plugin,
                handler,
                gates,
            } => Some((tool.clone(), plugin.clone(), handler.clone(), gates.clone())),
            Target::Missing { .. } => None,
        };
        let (grant, (tool, plugin, handler, gates)) = match (decision.verdict, found) {
            // decide runs or asks only about a tool it found (step 1); should that ever not
            // hold, the call fails closed as unavailable.
            (verdict, None) | (verdict @ Verdict::Refuse(_), Some(_)) => {
                let code = match verdict {
                    Verdict::Refuse(code) => code,
                    _ => Code::Unavailable,
                };
                let message = refusal_message(
                    code,
                    &call,
                    &snap,
                    input_error.as_deref(),
                    &assessment,
                    &decision,
                    money,
                );
                return Invocation {
                    decision,
                    reason,
                    prompt,
                    answer,
                    outcome: Outcome::Refused { code, message },
                };
            }
            (Verdict::Run, Some(found)) => (None, found),
            (Verdict::Ask(kind), Some(found)) => {
                let (tool, plugin, ..) = &found;
                let amount = tool.amount_fen(&call.input).unwrap_or(Err(String::new()));
                // DESIGN.md §3 8e: a payment's headline is its amount in 元 and its payee.
                let money_headline =
                    amount
                        .as_ref()
                        .ok()
                        .map(|fen| match tool.payee(&call.input) {
                            Some(payee) => format!("{} 元 · {payee}", yuan(*fen)),
                            None => format!("{} 元", yuan(*fen)),
                        });
                let asked = Prompt {
                    plugin: plugin.id.clone(),
                    plugin_title: plugin.title.clone(),
                    tool: tool.id.clone(),
                    tool_title: tool.title.clone(),
                    effect: tool.effect,
                    input: call.input.clone(),
                    kind,
                    offers: kind.offers().to_vec(),
                    headline: money_headline
                        .or_else(|| assessment.target.clone())
                        .or_else(|| tool.resolve_target(&call.input))
                        .unwrap_or_else(|| tool.title.clone()),
                    reason: reason.clone(),
                    why: why.clone(),
                    conversation: call.conversation.clone(),
                    tainted: snap.tainted,
                    amount_fen: amount.ok(),
                    payee: tool.payee(&call.input),
                };
                // Issue 41.3: an ask nobody answers within approvals.timeoutMinutes is
                // declined (fail closed), and the turn is told why.
                let minutes = self.settings.get().approvals.timeout_minutes.max(1);
                let deadline = self.clock.now_ms() + i64::from(minutes) * 60_000;
                let answered = tokio::select! {
                    given = self.broker.ask(asked.clone()) => Some(given),
                    () = self.clock.until(deadline) => None,
                };
                prompt = Some(asked);
                let Some(given) = answered else {
                    answer = Some(kind.no());
                    self.record(&call, &snap, AuditEvent::Unanswered { minutes });
                    let message = format!(
                        "The student did not answer within {minutes} minutes (setting \
                         approvals.timeoutMinutes), so the call was declined and not run; ask \
                         again when they are back."
                    );
                    return self.stopped(
                        call,
                        &snap,
                        (decision, reason),
                        prompt,
                        answer,
                        Code::Declined,
                        message,
                    );
                };
                answer = Some(given);
                self.record(&call, &snap, AuditEvent::Answered { answer: given });
                // Fail closed: an answer the prompt did not offer is no consent.
                if !kind.accepts(given) {
                    let message = format!(
                        "the answer \"{}\" was not one this prompt offered; the call was not run",
                        given.as_str()
                    );
                    return self.stopped(
                        call,
                        &snap,
                        (decision, reason),
                        prompt,
                        answer,
                        Code::Declined,
                        message,
                    );
                }
                let grant = match (kind, given) {
                    (_, Answer::Deny | Answer::DontAllow) => {
                        let message = "The user declined this call.".to_owned();
                        return self.stopped(
                            call,
                            &snap,
                            (decision, reason),
                            prompt,
                            answer,
                            Code::Declined,
                            message,
                        );
                    }
                    (PromptKind::Grant | PromptKind::GrantOnce, Answer::AllowOnce) => {
                        Some(Grant::Once)
                    }
                    (PromptKind::Grant, Answer::AlwaysAllow) => Some(Grant::Always),
                    (PromptKind::Ordinary, given) if given.allowance_scope().is_some() => {
                        // seed 000: Always allow sets that plugin's mode for that effect to auto,
                        // persisted; DESIGN.md §3: within the scope the sheet named, kept with
                        // its end. If it cannot be saved, the call still runs (the user allowed
                        // it) but nothing lasting changes.
                        let scope = given.allowance_scope().expect("matched a scoped answer");
                        if let Err(e) = self.allow_within(tool, scope, &call, snap.mode) {
                            self.record(
                                &call,
                                &snap,
                                AuditEvent::Failed {
                                    message: format!("always allow was not saved: {e}"),
                                },
                            );
                        }
                        None
                    }
                    _ => None,
                };
                (grant, found)
            }
        };

        // Issue 41.4: a public call the student allowed or tapped waits out its undo window
        // before anything is sent; undone, nothing is, and the audit says so.
        if tool.effect == Effect::Public
            && call.actor != Actor::Scheduler
            && !self.wait_out_undo(&call, &tool).await
        {
            self.record(&call, &snap, AuditEvent::Undone);
            let message = "The student took this back (撤销) before it was sent: nothing was sent."
                .to_owned();
            let stop = (decision, reason);
            return self.stopped(call, &snap, stop, prompt, answer, Code::Declined, message);
        }

        // The gates learn the scope for this call only: what they refuse for it is read back
        // below, so the agent is told `out_of_scope` and where to widen it.
        let scope = Arc::new(match call.actor {
            Actor::User => CallScope::unbounded(),
            Actor::Agent | Actor::Scheduler => CallScope::new(&snap.scope.hosts, &snap.scope.roots),
        });
        let conversation = call.conversation.clone();
        let chain = outer.iter().cloned().chain([call.tool.clone()]).collect();
        let services = self.services(
            plugin,
            gates,
            call.actor,
            conversation,
            scope.clone(),
            made_in,
            chain,
        );
        let ctx = ToolContext {
            actor: call.actor,
            grant,
            conversation: call.conversation.clone(),
            // seed 004: ctx.turn is { sessionId, tainted, userAsked }.
            turn: call
                .conversation
                .clone()
                .zip(snap.turn)
                .map(|(session_id, number)| TurnContext {
                    session_id,
                    number,
                    tainted: snap.tainted,
                    user_asked: snap.user_asked,
                }),
            tainted: snap.tainted,
            now: LocalNow::at(self.clock.now_ms(), &self.settings.get().time_zone),
            services,
            // Someone is there to answer a server's question only for a tap or a turn.
            asker: match call.actor {
                Actor::User | Actor::Agent => Some(Asker(self.broker.clone())),
                Actor::Scheduler => None,
            },
            progress,
        };
        let ran = handler.run(&tool, call.input.clone(), ctx).await;
        // seed 000: third-party content taints the turn it enters — an error text too, since it
        // reaches the model just the same and may carry injected instructions.
        if tool.untrusted
            && call.actor == Actor::Agent
            && let Some(conv) = call.conversation.as_deref()
            && let Err(e) = self.conversations.taint(conv)
        {
            let message = format!("the turn's taint was not saved: {e}");
            self.record(&call, &snap, AuditEvent::Failed { message });
        }
        let outcome = match (ran, scope.refusal()) {
            // The tool failed on a gate's refusal for the scope: the call was out of scope,
            // whatever prompt was answered before it ran.
            (Err(_), Some(message)) => {
                let stop = (decision, reason);
                return self.stopped(call, &snap, stop, prompt, answer, Code::OutOfScope, message);
            }
            (Ok(result), _) => {
                self.record(&call, &snap, AuditEvent::Ran);
                self.record_payment(&call, &snap, &tool);
                // The model reads a picture as words; most results carry none and are as
                // they are.
                let for_model = match crate::handler::carries_media(&result) {
                    true => cut_for_model(&crate::handler::model_copy(&result).to_string()),
                    false => cut_for_model(&result.to_string()),
                };
                Outcome::Ran { result, for_model }
            }
            (Err(message), None) => {
                self.record(
                    &call,
                    &snap,
                    AuditEvent::Failed {
                        message: message.clone(),
                    },
                );
                Outcome::Failed { message }
            }
        };
        Invocation {
            decision,
            reason,
            prompt,
            answer,
            outcome,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn stopped(
        &self,
        call: Call,
        snap: &Snapshot,
        (decision, reason): (Decision, String),
        prompt: Option<Prompt>,
        answer: Option<Answer>,
        code: Code,
        message: String,
    ) -> Invocation {
        self.record(
            &call,
            snap,
            AuditEvent::Stopped {
                code: code.as_str().to_owned(),
            },
        );
        Invocation {
            decision,
            reason,
            prompt,
            answer,
            outcome: Outcome::Refused { code, message },
        }
    }

    /// Appends to the audit log. A failure to write it must not change what the user decided,
    /// so it is reported on stderr and the call goes on.
    fn record(&self, call: &Call, snap: &Snapshot, event: AuditEvent) {
        let (event, detail, step, rule) = event.columns();
        let row = AuditRow {
            seq: 0,
            at_ms: self.clock.now_ms(),
            actor: call.actor.as_str().to_owned(),
            conversation: call.conversation.clone(),
            tool: call.tool.clone(),
            effect: snap.target.tool().map(|t| t.effect.as_str().to_owned()),
            event: event.to_owned(),
            detail,
            step,
            rule,
            input_digest: Some(input_digest(&call.input)),
        };
        if let Err(e) = self.audit.append(&row) {
            eprintln!("harness: the audit log could not be written: {e}");
        }
    }
}

#[async_trait]
impl PluginHost for Invoker {
    fn host(&self) -> &Host {
        &self.host
    }

    fn tool_catalog(&self) -> ToolCatalog {
        self.plugins.tool_catalog()
    }

    fn check_cloud(&self, plugin: &str) -> Result<(), ConsentError> {
        self.consent.check_cloud(plugin)
    }

    fn audit_cloud(&self, services: &Services, detail: String) {
        let row = AuditRow {
            seq: 0,
            at_ms: self.clock.now_ms(),
            actor: services.actor.as_str().to_owned(),
            conversation: services.conversation.clone(),
            tool: services
                .chain
                .last()
                .cloned()
                .unwrap_or_else(|| services.plugin.id.clone()),
            effect: None,
            event: "cloud".to_owned(),
            detail: Some(detail),
            step: None,
            rule: None,
            input_digest: None,
        };
        if let Err(e) = self.audit.append(&row) {
            eprintln!("harness: the audit log could not be written: {e}");
        }
    }

    fn language(&self) -> Language {
        self.settings.get().language
    }

    fn report_permission(
        &self,
        permission: Permission,
        state: PermissionState,
    ) -> Result<(), String> {
        self.consent
            .change(|c| c.set_permission(permission, state))
            .map_err(|e| e.to_string())
    }

    async fn call(
        &self,
        tool: &str,
        actor: Actor,
        input: Value,
        conversation: Option<String>,
        made_in: Option<String>,
        chain: &[String],
    ) -> Dispatched {
        let call = Call {
            tool: tool.to_owned(),
            actor,
            input,
            conversation,
        };
        match self.invoke_with(call, made_in, None, chain).await.outcome {
            Outcome::Ran { result, .. } => Dispatched::Ran(result),
            Outcome::Failed { message } => Dispatched::Failed(message),
            Outcome::Refused { code, message } => {
                Dispatched::Refused(format!("{}: {message}", code.as_str()))
            }
        }
    }
}

/// An amount in fen as yuan with two decimals: 15000 → "150.00".
pub fn yuan(fen: u64) -> String {
    format!("{}.{:02}", fen / 100, fen % 100)
}

/// The local day `now_ms` falls in, in `time_zone` (the settings'; Shanghai if it does not
/// parse), as milliseconds `[start, end)`. A day that starts in a DST gap starts at its first
/// instant that exists.
pub(crate) fn local_day(now_ms: i64, time_zone: &str) -> (i64, i64) {
    use chrono::{Days, TimeZone};
    let zone = crate::zone::Zone::named_or_campus(time_zone);
    let Some(now) = zone.timestamp_millis_opt(now_ms).single() else {
        return (now_ms, now_ms + 1);
    };
    let start_of = |date: chrono::NaiveDate| -> Option<i64> {
        let midnight = date.and_hms_opt(0, 0, 0)?;
        (0..=24 * 4).find_map(|quarter| {
            let local = midnight + chrono::Duration::minutes(15 * quarter);
            zone.from_local_datetime(&local)
                .earliest()
                .map(|t| t.timestamp_millis())
        })
    };
    let today = now.date_naive();
    let start = start_of(today).unwrap_or(now_ms);
    let end = today
        .checked_add_days(Days::new(1))
        .and_then(start_of)
        .unwrap_or(now_ms + 1);
    (start, end)
}

/// The audit keeps a digest of a call's inputs, never the inputs: they may hold personal data.
pub fn input_digest(input: &Value) -> String {
    let digest = Sha256::digest(input.to_string().as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The model's copy of a result: at most [`MODEL_RESULT_CHARS`] characters, cut on a char
/// boundary, with a marker saying how much was cut. The UI keeps the whole.
pub fn cut_for_model(text: &str) -> String {
    match text.char_indices().nth(MODEL_RESULT_CHARS) {
        None => text.to_owned(),
        Some((byte, _)) => {
            let cut = text[byte..].chars().count();
            let total = MODEL_RESULT_CHARS + cut;
            format!(
                "{}\n[… {cut} of {total} characters cut; page or filter the request to see the rest]",
                &text[..byte]
            )
        }
    }
}

/// The rule that decided, if one did.
fn deciding_rule<'s>(decision: &Decision, snap: &'s Snapshot) -> Option<&'s crate::policy::Rule> {
    let at = decision.rule?;
    let set = match at.scope {
        crate::policy::RuleScope::Global => &snap.global_rules,
        crate::policy::RuleScope::Conversation => &snap.conversation_rules,
    };
    set.rules().get(at.index as usize)
}

/// Why the deciding step decided, for prompts, the demo and the audit.
fn explain(
    decision: &Decision,
    snap: &Snapshot,
    assessment: &Assessment,
    money: Option<MoneyFacts>,
) -> Why {
    use crate::policy::{RuleKind, Step};
    let effect = snap.target.tool().map_or(Effect::Read, |t| t.effect);
    let plugin = || {
        snap.target
            .plugin()
            .map_or("", |p| p.id.as_str())
            .to_owned()
    };
    let rule = |kind: RuleKind| Why::Rule {
        kind,
        rule: deciding_rule(decision, snap).map(|r| {
            let at = decision.rule.expect("a deciding rule has a reference");
            RuleAt {
                pattern: r.tool.clone(),
                scope: at.scope,
                index: at.index,
            }
        }),
    };
    match decision.step {
        Step::Availability => Why::Unreachable,
        Step::UserOnly => Why::UserOnly,
        Step::Input => Why::InvalidInput,
        Step::DenyRule => rule(RuleKind::Deny),
        Step::ModeOff => Why::ModeOff {
            plugin: plugin(),
            effect,
        },
        Step::Scheduler => match decision.verdict {
            Verdict::Run => Why::ScheduledRead,
            Verdict::Refuse(Code::SchedulerReadOnly) => Why::SchedulerReadOnly { effect },
            Verdict::Refuse(Code::OutOfScope) => Why::OwnScopeCheck,
            _ => Why::NobodyToAsk,
        },
        Step::UserTap => Why::UserTap,
        Step::PlanMode => Why::PlanMode,
        Step::Scope => Why::OwnScopeCheck,
        Step::AlwaysAsks => Why::AlwaysAsks,
        Step::AskRule => rule(RuleKind::Ask),
        Step::SkipAll => Why::SkipAll,
        Step::Sensitive if assessment.sensitive => Why::Loosens {
            tainted: snap.tainted,
        },
        Step::Sensitive => match (decision.verdict, money.and_then(|m| m.over())) {
            (Verdict::Refuse(Code::OverLimit), Some(limit)) => Why::OverLimit { limit },
            (Verdict::Ask(_), _) if money.is_some_and(|m| m.payee_known == Some(false)) => {
                Why::NewPayee
            }
            _ => Why::TaintedCall { effect },
        },
        Step::Allowance if decision.rule.is_some() => rule(RuleKind::Allow),
        Step::Allowance => Why::OwnCheckAllows,
        Step::AskEveryTime => Why::AskEveryTime,
        Step::Mode => Why::Mode {
            plugin: plugin(),
            effect,
            mode: snap.mode,
        },
    }
}

/// The refusal the agent reads: what happened and which setting to change, where.
fn refusal_message(
    code: Code,
    call: &Call,
    snap: &Snapshot,
    input_error: Option<&str>,
    assessment: &Assessment,
    decision: &Decision,
    money: Option<MoneyFacts>,
) -> String {
    // A plugin that is not installed is named as the call named it (`nosuch` of `nosuch.x`).
    let plugin = snap
        .target
        .plugin()
        .map_or_else(|| plugin_id(&call.tool), |p| p.id.as_str());
    let effect = snap.target.tool().map_or("", |t| t.effect.as_str());
    match code {
        Code::TermsNotAccepted => {
            "The terms have not been accepted yet. The user accepts them in first-run setup (Settings → About → Terms).".into()
        }
        Code::Unavailable => match (snap.availability, &snap.unmet) {
            (Availability::NotInstalled, _) => {
                format!("No plugin \"{plugin}\" is installed (tool \"{}\"). The user installs plugins in Settings → Plugins.", call.tool)
            }
            (Availability::NoSuchTool, _) => format!("Plugin \"{plugin}\" has no tool \"{}\".", call.tool),
            (Availability::Disabled, _) => {
                format!("Plugin \"{plugin}\" is turned off. The user turns it on in Settings → Plugins → {plugin}.")
            }
            (_, Some(requirement)) => format!(
                "Plugin \"{plugin}\" needs {requirement}, which this phone does not provide now. The user sets it up in Settings → Plugins → {plugin}."
            ),
            _ => format!("Tool \"{}\" is not available.", call.tool),
        },
        Code::UserOnly => format!("\"{}\" can only be started by the user, from its screen.", call.tool),
        Code::InvalidInput => format!("The input is invalid: {}", input_error.unwrap_or("it does not match the tool's schema")),
        Code::DeniedByRule => {
            let pattern = deciding_rule(decision, snap).map_or("", |r| r.tool.as_str());
            format!("A deny rule ({pattern}) blocks this call. The user can change it in Settings → Permissions → Rules.")
        }
        Code::Blocked => format!(
            "Plugin \"{plugin}\" has its {effect} tools turned off. The user can change this in Settings → Plugins → {plugin} → AI permissions."
        ),
        Code::SchedulerReadOnly => format!(
            "Scheduled runs only read, and \"{}\" has the {effect} effect. It can only run from a conversation or a tap.",
            call.tool
        ),
        Code::Declined if call.actor == Actor::Scheduler => format!(
            "\"{}\" would need the user's approval, and nobody is there to ask during a scheduled run. To let it run unattended, set Settings → Plugins → {plugin} → AI permissions → {effect} to auto.",
            call.tool
        ),
        Code::Declined => "The user declined this call.".into(),
        Code::PlanMode => {
            "Plan mode is on: only read tools run while planning. The user turns plan mode off in the conversation's composer.".into()
        }
        Code::Tainted => format!(
            "\"{}\" would loosen a permission, and this turn has read untrusted content, so the \
             agent may not make this change. The user can make it in Settings.",
            call.tool
        ),
        Code::OverLimit => over_limit_message(call, money),
        Code::OutOfScope => out_of_scope(
            assessment
                .reason
                .as_deref()
                .unwrap_or("This call reaches outside the conversation's scope."),
        ),
    }
}

/// An `over_limit` refusal: the amount, the limit it passes and where the student changes it
/// (DESIGN.md §3 8e). Nothing in it allows the call.
fn over_limit_message(call: &Call, money: Option<MoneyFacts>) -> String {
    let Some(facts) = money else {
        return format!(
            "\"{}\" is over the student's money limits. Only the student can raise them: the \
             settings money.perPaymentYuan and money.perDayYuan.",
            call.tool
        );
    };
    let amount = yuan(facts.amount_fen);
    match facts.over() {
        Some(Limit::PerPayment) => format!(
            "This payment of {amount} yuan is over the student's limit of {} yuan per payment, so \
             \"{}\" was not run. Only the student can raise the limit: the setting {} (a \
             protected change the student confirms).",
            yuan(facts.per_payment_fen),
            call.tool,
            Limit::PerPayment.key()
        ),
        _ => format!(
            "This payment of {amount} yuan would bring today's spending to {} yuan, over the \
             student's limit of {} yuan per day, so \"{}\" was not run. Only the student can \
             raise the limit: the setting {} (a protected change the student confirms).",
            yuan(facts.spent_today_fen.saturating_add(facts.amount_fen)),
            yuan(facts.per_day_fen),
            call.tool,
            Limit::PerDay.key()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_result_is_kept_whole() {
        assert_eq!(
            cut_for_model("{\"balanceYuan\":42.5}"),
            "{\"balanceYuan\":42.5}"
        );
    }

    #[test]
    fn a_long_result_is_cut_on_a_char_boundary_with_a_marker() {
        let text = "食".repeat(12_005);
        let cut = cut_for_model(&text);
        let (kept, marker) = cut.split_once('\n').unwrap();
        assert_eq!(kept.chars().count(), 12_000);
        assert!(kept.chars().all(|c| c == '食'));
        assert_eq!(
            marker,
            "[… 5 of 12005 characters cut; page or filter the request to see the rest]"
        );
    }

    #[test]
    fn exactly_the_limit_is_not_cut() {
        let text = "x".repeat(12_000);
        assert_eq!(cut_for_model(&text), text);
    }
}
