//! The `Harness` object: the core's engine behind the FFI. Every method converts its
//! arguments, delegates to the engine in one line, and converts the result (STYLE.md §1).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use harness_core::consent::{Permission, PermissionState, SetupStep};
use harness_core::invoke::Call;
use harness_core::plugins::samples;
use harness_core::policy::{self, Actor, Mode};
use harness_core::registry::Effect;
use harness_core::screens::TurnNotice;
use harness_core::screens::{
    Acted, Action, ActivityFilter, ActivityScreen, AllowancesScreen, CampusAccountScreen,
    CampusCheck, CampusCheckScreen, ChatScreen, ConsentScreen, ConversationListScreen,
    ConversationSettingsScreen, FirstRunScreen, JobDraft, JobWords, JobsScreen, Live, MemoryInbox,
    ModelSettingsScreen, Navigation, PayCodeScreen, PluginDetail, PluginScreen, PluginsScreen,
    RideCodeScreen, Route, Screens, SpendingScreen, TodayScreen, UndoBar, WidgetModel,
    WidgetSource, route_for,
};
use harness_core::screens::{CloudScreen, PairingScan};
use harness_core::store::rows::AuditRow;
use harness_core::turn::ConversationSettings;
use harness_core::{Engine, Options};
use harness_core::{scheduler, settings};

use crate::consent::Consent;
use crate::conversations::{ConversationInfo, Scope};
use crate::decisions::{Decision, Invocation, ModelTool, Rule, core_rules};
use crate::development::{self, DevelopmentOptions};
use crate::error::{HarnessError, parse_json};
use crate::events::{EventListener, EventSubscription, HarnessEvent, Listeners};
use crate::jobs::JobRun;
use crate::memories::MemoryInfo;
use crate::platform::{Platform, PlatformBroker, PlatformEvents, PlatformSecrets, PlatformWake};
use crate::plugins::PluginInfo;
use crate::turns::{HistoryMessage, TurnResult};
use crate::{run_on_caller, runtime};

/// The PKU harness core: plugins, modes, rules, conversations, consent, the one invoke path and
/// the audit log. Open one per data directory and keep it for the app's life; every method is
/// safe to call from any thread. After `close()` every method fails with
/// `HarnessError.Closed`.
///
/// A tool call (`invoke_as_*`, `use_tool_data`) runs on the thread that awaits it, as a
/// screen's read does, and writes the audit log there: await it off the main thread. A call
/// whose caller stops waiting still ends (asked, run and audited).
#[derive(uniffi::Object)]
pub struct Harness {
    open: RwLock<Option<Open>>,
    data_dir: PathBuf,
    events: Arc<Listeners>,
    /// Opened with the sample plugins' code (`open_for_development`): only then can they be
    /// installed.
    samples: bool,
    /// The approval broker, for `show_undo`.
    broker: Arc<PlatformBroker>,
}

/// What `close()` lets go of.
#[derive(Clone)]
struct Open {
    engine: Arc<Engine>,
    screens: Arc<Screens>,
    platform: Arc<dyn Platform>,
}

/// The PKU harness Cloud address a phone build offers on the 云端 screen before one is set up:
/// `PKU_HARNESS_CLOUD_URL` when the library was built (README, "The cloud address"). Only `open` (the
/// app) offers it; `open_for_development` (the shells' tests) never does.
const BUILD_CLOUD_ADDRESS: Option<&str> = option_env!("PKU_HARNESS_CLOUD_URL");

/// The app's engine options: the TypeScript plugins it ships (`plugins/<id>/`), the campus
/// hosts themselves.
pub(crate) fn app_options(broker: Arc<dyn harness_core::invoke::ApprovalBroker>) -> Options {
    let mut options = Options::new(broker);
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    options
}

impl Harness {
    /// `options` makes the engine's options from its approval broker; the app's are
    /// [`app_options`]: the plugins the app ships, no sample, the campus hosts themselves.
    /// `samples`: the catalog is the sample plugins' (`install_sample_plugins` may add theirs).
    fn open_with(
        data_dir: String,
        platform: Arc<dyn Platform>,
        samples: bool,
        options: impl FnOnce(Arc<dyn harness_core::invoke::ApprovalBroker>) -> Options,
    ) -> Result<Arc<Self>, HarnessError> {
        if data_dir.is_empty() {
            return Err(HarnessError::invalid("data_dir: must not be empty"));
        }
        let data_dir = PathBuf::from(data_dir);
        std::fs::create_dir_all(&data_dir).map_err(|e| {
            HarnessError::invalid(format!("data_dir: cannot create it ({})", e.kind()))
        })?;
        runtime()?;
        let events = Arc::new(Listeners::default());
        let broker = Arc::new(PlatformBroker::new(platform.clone(), events.clone()));
        let live = Live::new();
        // The app: `development_links` and `development_servers` stay off, so plugin links are
        // https only and no MCP server on this phone or a private network is added.
        let mut options = options(broker.clone());
        options.browser = Some(broker.clone());
        options.secrets = Arc::new(PlatformSecrets(platform.clone()));
        options.wake = Arc::new(PlatformWake {
            platform: platform.clone(),
            events: events.clone(),
        });
        options.events = live.sink(Arc::new(PlatformEvents {
            platform: platform.clone(),
            events: events.clone(),
        }));
        let engine = Arc::new(Engine::open(&data_dir, options)?);
        let screens = Arc::new(Screens::new(engine.clone(), live));
        broker.show_sheets_from(&screens);
        // The 撤销 bar is read again whenever a public call is held or its window ends. The
        // task ends with the engine (its sender dropped).
        let mut held = engine.watch_held_calls();
        let held_events = events.clone();
        runtime()?.spawn(async move {
            while held.changed().await.is_ok() {
                held_events.emit(HarnessEvent::HeldCallsChanged);
            }
        });
        Ok(Arc::new(Harness {
            open: RwLock::new(Some(Open {
                engine,
                screens,
                platform,
            })),
            data_dir,
            events,
            samples,
            broker,
        }))
    }

    /// The engine and platform, or `Closed`. The lock is held only to clone the `Arc`s.
    fn open_parts(&self) -> Result<Open, HarnessError> {
        self.open
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(HarnessError::closed)
    }

    pub(crate) fn engine(&self) -> Result<Arc<Engine>, HarnessError> {
        self.open_parts().map(|open| open.engine)
    }

    pub(crate) fn screens(&self) -> Result<Arc<Screens>, HarnessError> {
        self.open_parts().map(|open| open.screens)
    }

    /// Runs one call through the invoke path, on the caller's thread inside the library's
    /// runtime (`run_on_caller`: no hop to a worker, and it ends even if the caller goes).
    async fn invoke(&self, call: Call) -> Result<Invocation, HarnessError> {
        let engine = self.engine()?;
        let invocation = run_on_caller(async move { engine.invoke(call).await }).await?;
        Ok(invocation.into())
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl Harness {
    /// Opens the core on a data directory (created if missing) with the shell's `Platform`:
    /// everything the core keeps lives in this directory (secrets excepted: they go to the
    /// Platform's keystore), so opening it again restores it.
    #[uniffi::constructor]
    pub fn open(data_dir: String, platform: Arc<dyn Platform>) -> Result<Arc<Self>, HarnessError> {
        Self::open_with(data_dir, platform, false, |broker| {
            let mut options = app_options(broker);
            options.cloud_address = BUILD_CLOUD_ADDRESS.map(str::to_owned);
            options
        })
    }

    /// Opens the core as `open` does, with what only the shells' tests and development builds
    /// use: the sample plugins' code, and the campus reached at a simulator on this machine.
    /// A phone build of the library has neither: there it fails, saying so.
    #[uniffi::constructor]
    pub fn open_for_development(
        data_dir: String,
        platform: Arc<dyn Platform>,
        options: DevelopmentOptions,
    ) -> Result<Arc<Self>, HarnessError> {
        let samples = options.sample_plugins;
        let configure = development::configure(options)?;
        Self::open_with(data_dir, platform, samples, configure)
    }

    /// Does nothing; measures the cost of one call across the boundary.
    pub fn ping(&self) -> Result<(), HarnessError> {
        self.engine().map(|_| ())
    }

    /// Installs the sample plugins `canteen` (a community plugin document, installed from this
    /// device) and `mcp-forum` (a remote forum), beside the sample `wallet`; only on a Harness
    /// opened with `open_for_development` and `sample_plugins`. Installing them a second time
    /// in one data directory fails: they are installed.
    pub fn install_sample_plugins(&self) -> Result<(), HarnessError> {
        if !self.samples {
            return Err(HarnessError::invalid(
                "sample_plugins: the samples are for tests; open the Harness with \
                 open_for_development and DevelopmentOptions.sample_plugins",
            ));
        }
        Ok(samples::install_on_device(
            &*self.engine()?,
            &self.data_dir,
        )?)
    }

    /// Installed plugins in id order, each with its modes per effect and its tools.
    pub fn plugins(&self) -> Result<Vec<PluginInfo>, HarnessError> {
        let engine = self.engine()?;
        Ok(engine.plugins().iter().map(PluginInfo::from).collect())
    }

    /// Sets a plugin's mode for one effect (Settings → Plugins → <plugin> → AI permissions).
    pub fn set_mode(&self, plugin: String, effect: Effect, mode: Mode) -> Result<(), HarnessError> {
        Ok(self.engine()?.set_mode(&plugin, effect, mode)?)
    }

    /// Turns a plugin on or off; a plugin that is off is refused `unavailable` for everyone.
    pub fn set_enabled(&self, plugin: String, enabled: bool) -> Result<(), HarnessError> {
        Ok(self.engine()?.set_enabled(&plugin, enabled)?)
    }

    /// Removes an installed plugin document or remote server with its tools, modes,
    /// preferences, jobs and store.
    pub fn remove_plugin(&self, plugin: String) -> Result<(), HarnessError> {
        Ok(self.engine()?.remove_plugin(&plugin)?)
    }

    /// Replaces the global rules. A malformed pattern or `when_json` fails naming the rule's
    /// index, and nothing is replaced.
    pub fn set_rules(&self, rules: Vec<Rule>) -> Result<(), HarnessError> {
        Ok(self.engine()?.set_rules(core_rules(rules)?)?)
    }

    /// Replaces one conversation's own rules (checked before the global ones).
    pub fn set_conversation_rules(
        &self,
        conversation: String,
        rules: Vec<Rule>,
    ) -> Result<(), HarnessError> {
        Ok(self
            .engine()?
            .set_conversation_rules(&conversation, core_rules(rules)?)?)
    }

    /// Opens a conversation with the current default settings and returns them; an existing
    /// conversation is kept as it is and its settings returned.
    pub fn open_conversation(
        &self,
        conversation: String,
    ) -> Result<ConversationSettings, HarnessError> {
        Ok(self.engine()?.open_conversation(&conversation)?)
    }

    /// A conversation's settings, scope, taint and turn count.
    pub fn conversation(&self, conversation: String) -> Result<ConversationInfo, HarnessError> {
        Ok(self.engine()?.existing_conversation(&conversation)?.into())
    }

    /// Changes a conversation's settings; they apply at its next call and become the default
    /// for new conversations. Other conversations keep theirs.
    pub fn set_conversation_settings(
        &self,
        conversation: String,
        settings: ConversationSettings,
    ) -> Result<(), HarnessError> {
        Ok(self
            .engine()?
            .set_conversation_settings(&conversation, settings)?)
    }

    /// Sets what a conversation may reach (folders, hosts, apps).
    pub fn set_conversation_scope(
        &self,
        conversation: String,
        scope: Scope,
    ) -> Result<(), HarnessError> {
        Ok(self.engine()?.set_scope(&conversation, scope.into())?)
    }

    /// Starts a turn of a conversation (its taint starts clear) and emits `TurnStarted`.
    pub fn begin_turn(&self, conversation: String) -> Result<(), HarnessError> {
        let turn = self.engine()?.begin_turn(&conversation)?;
        self.events
            .emit(HarnessEvent::TurnStarted { conversation, turn });
        Ok(())
    }

    /// A tap on a screen or widget button: runs `tool` (`<plugin>.<tool>`) with `input_json`
    /// unless it is unavailable, invalid or its effect is off. Never asks.
    pub async fn invoke_as_user(
        &self,
        tool: String,
        input_json: String,
    ) -> Result<Invocation, HarnessError> {
        let input = parse_json("input_json", &input_json)?;
        self.invoke(Call {
            tool,
            actor: policy::Actor::User,
            input,
            conversation: None,
        })
        .await
    }

    /// The agent's call in a conversation: decides, asks through `Platform::ask_approval` when
    /// the decision says so, runs, and returns everything. A refusal is an `Outcome.Refused`,
    /// not an error.
    pub async fn invoke_as_agent(
        &self,
        conversation: String,
        tool: String,
        input_json: String,
    ) -> Result<Invocation, HarnessError> {
        let input = parse_json("input_json", &input_json)?;
        let engine = self.engine()?;
        let invocation = run_on_caller(async move {
            engine
                .invoke_in_conversation(&conversation, tool, input)
                .await
        })
        .await??;
        Ok(invocation.into())
    }

    /// The student's words in a conversation: runs one whole turn of the agent — the model, each
    /// tool call through the one invoke path (prompts through `Platform::ask_approval`) — and
    /// returns how it ended. Each step streams to the event listener as it happens, starting
    /// with `TurnStarted`, whose turn id `cancel_turn` takes.
    pub async fn send_message(
        &self,
        conversation: String,
        text: String,
    ) -> Result<TurnResult, HarnessError> {
        let engine = self.engine()?;
        let summary = runtime()?
            .spawn(async move { engine.send_message(&conversation, &text).await })
            .await??;
        Ok(summary.into())
    }

    /// Stops a running turn: the stream, and any prompt waiting for the user (withdrawn).
    /// False when no turn with this id is running.
    pub fn cancel_turn(&self, turn: String) -> Result<bool, HarnessError> {
        Ok(self.engine()?.cancel_turn(&turn))
    }

    /// Up to `limit` messages of a conversation's history before message `before` (the newest
    /// when none), oldest first.
    pub fn history(
        &self,
        conversation: String,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<HistoryMessage>, HarnessError> {
        let page = self
            .engine()?
            .history(&conversation, before, limit as usize)?;
        Ok(page.into_iter().map(HistoryMessage::from).collect())
    }

    /// A scheduled job's call: only reads run, and nothing ever asks.
    pub async fn invoke_as_scheduler(
        &self,
        tool: String,
        input_json: String,
    ) -> Result<Invocation, HarnessError> {
        let input = parse_json("input_json", &input_json)?;
        self.invoke(Call {
            tool,
            actor: policy::Actor::Scheduler,
            input,
            conversation: None,
        })
        .await
    }

    /// What the invoke path would decide first for this call, without asking or running.
    pub fn decide(
        &self,
        actor: Actor,
        tool: String,
        input_json: String,
        conversation: Option<String>,
    ) -> Result<Decision, HarnessError> {
        let input = parse_json("input_json", &input_json)?;
        Ok(self
            .engine()?
            .decide(&Call {
                tool,
                actor,
                input,
                conversation,
            })
            .into())
    }

    /// The tools offered to the model in a conversation (or with no conversation): those that
    /// could run for it. Empty until the terms are accepted.
    pub fn model_tools(
        &self,
        conversation: Option<String>,
    ) -> Result<Vec<ModelTool>, HarnessError> {
        Ok(self
            .engine()?
            .model_tools(conversation.as_deref())
            .into_iter()
            .map(Into::into)
            .collect())
    }

    /// Records that the user accepted the first-run terms.
    pub fn accept_terms(&self) -> Result<(), HarnessError> {
        Ok(self.engine()?.accept_terms()?)
    }

    /// Records a first-run step after the terms as done or left for later, as its tap does.
    pub fn pass_setup_step(&self, step: SetupStep) -> Result<(), HarnessError> {
        Ok(self.engine()?.pass_setup_step(step)?)
    }

    /// What the phone provides now: `met` names the campus session (`campus-session`), granted
    /// system permissions (`notifications`, `exact-alarm`) and other capabilities. With
    /// `terms_accepted`, also records the terms as accepted (acceptance is never withdrawn here).
    pub fn set_consent(&self, consent: Consent) -> Result<(), HarnessError> {
        Ok(self
            .engine()?
            .report_consent(consent.terms_accepted, consent.met)?)
    }

    /// The newest audit rows (at most 10,000), oldest first: every decision, answer and
    /// outcome, with the deciding step and rule and a digest of the inputs.
    pub fn audit_log(&self) -> Result<Vec<AuditRow>, HarnessError> {
        Ok(self.engine()?.audit_log()?)
    }

    /// Registers a listener for `HarnessEvent`s. Delivery stops when the returned handle is
    /// cancelled or dropped, or when the Harness is closed: keep the handle for as long as you
    /// want events (in Kotlin, a handle left to the garbage collector stops delivery whenever
    /// it is collected).
    pub fn subscribe(
        &self,
        listener: Arc<dyn EventListener>,
    ) -> Result<Arc<EventSubscription>, HarnessError> {
        self.engine()?;
        Ok(Arc::new(self.events.add(listener)))
    }

    /// Closes the Harness: every later call fails with `HarnessError.Closed`, listeners are
    /// dropped, and the `Platform` is released once calls in flight have finished. Closing
    /// twice does nothing. (Kotlin: this is `shutdown()`, since `close()` frees the handle.)
    pub fn close(&self) {
        self.open.write().unwrap_or_else(|p| p.into_inner()).take();
        self.events.clear();
    }
}

/// Settings, memory, consent, documents, jobs and data sources: what the app's screens and
/// its alarm need. Each is one delegation to the core.
#[uniffi::export(async_runtime = "tokio")]
impl Harness {
    /// The app's settings (appearance, language, time zone, model) as JSON.
    pub fn settings_json(&self) -> Result<String, HarnessError> {
        Ok(serde_json::to_value(self.engine()?.settings())
            .map_err(|e| HarnessError::Other {
                reason: format!("the settings cannot be written as JSON ({e})"),
            })?
            .to_string())
    }

    /// Changes one setting from the settings screen (`timeZone`, `plugins.wallet.modes.money`,
    /// …); `value_json` is its new value. An invalid value fails naming the key.
    pub fn change_setting(&self, key: String, value_json: String) -> Result<(), HarnessError> {
        let value = parse_json("value_json", &value_json)?;
        let change = settings::parse_change(&key, &value)?;
        Ok(self.engine()?.change_setting(change)?)
    }

    /// Every memory with its state (`active`, `pending`, `rejected`) and where it came from.
    pub fn memories(&self) -> Result<Vec<MemoryInfo>, HarnessError> {
        Ok(self
            .engine()?
            .memories()?
            .into_iter()
            .map(Into::into)
            .collect())
    }

    /// The memory screen's Approve (or Reject) of a pending memory.
    pub fn decide_memory(&self, id: i64, approve: bool) -> Result<MemoryInfo, HarnessError> {
        Ok(self.engine()?.decide_memory(id, approve)?.into())
    }

    /// A plugin's "Allow cloud" switch.
    pub fn set_cloud_consent(&self, plugin: String, allowed: bool) -> Result<(), HarnessError> {
        Ok(self.engine()?.set_cloud_consent(&plugin, allowed)?)
    }

    /// The shell reports a system permission's state (after its prompt, or when it changed).
    pub fn report_permission(
        &self,
        permission: Permission,
        state: PermissionState,
    ) -> Result<(), HarnessError> {
        Ok(self.engine()?.report_permission(permission, state)?)
    }

    /// The phone's capabilities besides the system permissions, as the whole list (`nfc`,
    /// `camera`, …). iOS reports `exact-alarm-unsupported`: it has no exact alarms, so the
    /// consent screen offers no fix for them and the jobs screen says how the phone wakes.
    pub fn report_capabilities(&self, capabilities: Vec<String>) -> Result<(), HarnessError> {
        Ok(self.engine()?.report_capabilities(capabilities)?)
    }

    /// Asks the `Platform` for every permission's state (`Platform::permission_state`) and
    /// records what it says, e.g. when the app returns to the foreground. A permission the
    /// platform fails to read keeps its recorded state, and the first failure is returned.
    pub fn refresh_permissions(&self) -> Result<(), HarnessError> {
        let Open {
            engine, platform, ..
        } = self.open_parts()?;
        engine.refresh_permissions(|permission| platform.permission_state(permission))
    }

    /// A document the user picked on a screen, read into text on the phone; the agent reads it
    /// through the files plugin. The same rule as [`Self::attach_file`] decides whether it is
    /// taken. Returns its id.
    pub fn attach_document(
        &self,
        conversation: String,
        name: String,
        text: String,
    ) -> Result<i64, HarnessError> {
        Ok(self
            .screens()?
            .attach_file(&conversation, &name, text.into_bytes())?)
    }

    /// A file the user picked on a screen, as the phone read it: the core reads its text by the
    /// name's kind (plain text, Markdown, PDF) and attaches it, or refuses it naming the file
    /// and attaches nothing. Returns its id.
    pub fn attach_file(
        &self,
        conversation: String,
        name: String,
        bytes: Vec<u8>,
    ) -> Result<i64, HarnessError> {
        Ok(self.screens()?.attach_file(&conversation, &name, bytes)?)
    }

    /// Adds a scheduled job the user set up (`spec_json` as `harness jobs add` takes it);
    /// returns its id.
    pub fn add_job(&self, spec_json: String) -> Result<i64, HarnessError> {
        let spec = parse_json("spec_json", &spec_json)?;
        Ok(self.engine()?.add_job(&spec, scheduler::Owner::User)?.id)
    }

    /// Runs what is due at `now_epoch_ms`; the shell calls this when its wake-up fires. Each
    /// notification a run produces is posted through `Platform::post_notification` before
    /// this returns. Then the app's backup is written when its switch is on and something
    /// changed (`Engine::wake`); the 云端 screen's 上次备份 shows it, and a cloud out of reach
    /// is not an error of the wake.
    pub async fn run_due(&self, now_epoch_ms: i64) -> Result<Vec<JobRun>, HarnessError> {
        let engine = self.engine()?;
        let wake = runtime()?
            .spawn(async move { engine.wake(now_epoch_ms).await })
            .await??;
        Ok(wake.runs.into_iter().map(Into::into).collect())
    }

    /// A widget's read of a plugin's data source: the cached value while fresh, else refreshed
    /// as a scheduled read (never a prompt). Returns the value as JSON.
    pub async fn use_tool_data(&self, plugin: String, key: String) -> Result<String, HarnessError> {
        let engine = self.engine()?;
        let read =
            run_on_caller(async move { engine.use_tool_data(&plugin, &key).await }).await??;
        Ok(read.value.to_string())
    }
}

/// The screens: each read whole in one call, in the user's language; each tap an `Action`
/// from the screen's own model, done by `act` (see `harness_core::screens`).
#[uniffi::export(async_runtime = "tokio")]
impl Harness {
    /// The app's destinations, with what waits in each (pending memories).
    pub fn navigation(&self) -> Result<Navigation, HarnessError> {
        Ok(self.screens()?.navigation()?)
    }

    /// The bar item `route` is shown under: its own, or "More".
    pub fn tab_for(&self, route: Route) -> Result<Route, HarnessError> {
        Ok(self.screens()?.navigation()?.tab_of(route))
    }

    /// The screen a `Platform::open_screen` route opens; none for a route this app lacks.
    pub fn route_for(&self, screen: String) -> Option<Route> {
        route_for(&screen)
    }

    /// The conversation the chat tab opens on: the most recently active, or a new one when
    /// there is none.
    pub fn latest_conversation(&self) -> Result<String, HarnessError> {
        Ok(self.screens()?.latest_conversation()?)
    }

    /// The conversation list: newest first, with a new chat, rename, delete and its undo.
    pub fn conversation_list_screen(&self) -> Result<ConversationListScreen, HarnessError> {
        Ok(self.screens()?.conversation_list()?)
    }

    /// The chat of a conversation (opened with the current defaults if new).
    pub fn chat_screen(&self, conversation: String) -> Result<ChatScreen, HarnessError> {
        Ok(self.screens()?.chat(&conversation)?)
    }

    pub fn plugins_screen(&self) -> Result<PluginsScreen, HarnessError> {
        Ok(self.screens()?.plugins())
    }

    pub fn plugin_detail_screen(&self, plugin: String) -> Result<PluginDetail, HarnessError> {
        Ok(self.screens()?.plugin_detail(&plugin)?)
    }

    pub fn conversation_settings_screen(
        &self,
        conversation: String,
    ) -> Result<ConversationSettingsScreen, HarnessError> {
        Ok(self.screens()?.conversation_settings(&conversation)?)
    }

    /// The campus account: sign-in (student id, password, the second factor), the sessions,
    /// signing out (DESIGN.md §10).
    pub fn campus_account_screen(&self) -> Result<CampusAccountScreen, HarnessError> {
        Ok(self.screens()?.campus_account()?)
    }

    /// The screen that answers a campus check a plugin's request found a service asking for:
    /// Treehole's own SMS check (`Route::TreeholeCheck`) or the course API's authorization
    /// that reading grades needs (`Route::GradesCheck`).
    pub fn campus_check_screen(
        &self,
        check: CampusCheck,
    ) -> Result<CampusCheckScreen, HarnessError> {
        Ok(self.screens()?.campus_check(check))
    }

    /// The campus card's pay code, read from the card service now: the shell draws its
    /// payload as a QR code and a barcode and reads this again every `refresh_after_ms` while
    /// the screen is open (`wallet.showPayCode` answers `{status: "opened", screen: "payCode"}`).
    pub async fn pay_code_screen(&self) -> Result<PayCodeScreen, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.pay_code().await })
            .await?)
    }

    /// The shuttle bus's ride codes, one for each current booking, read from the bus service
    /// now: the shell draws each payload as a QR code, only while the screen is open
    /// (`bus.showRideCode` answers `{status: "opened", screen: "rideCode"}`).
    pub async fn ride_code_screen(&self) -> Result<RideCodeScreen, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.ride_code().await })
            .await?)
    }

    /// A plugin's declared screen (DESIGN.md §2), read now: its data sources through their
    /// cache, its read tools as the student's reads; the shell shows it loading until then.
    pub async fn plugin_screen(
        &self,
        plugin: String,
        screen: String,
    ) -> Result<PluginScreen, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.plugin_screen(&plugin, &screen).await })
            .await??)
    }

    /// A data source no declared screen shows (`Acted::OpenDataSource`), read through its
    /// cache: a plugin screen of one section, drawn by the same renderer.
    pub async fn source_screen(
        &self,
        plugin: String,
        source: String,
    ) -> Result<PluginScreen, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.source_screen(&plugin, &source).await })
            .await??)
    }

    /// 云端: PKU harness Cloud on this device, the account as its server answers now (its
    /// recovery code once, right after `Action::CloudSetup`); the shell renders it only.
    pub async fn cloud_screen(&self) -> Result<CloudScreen, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.cloud().await })
            .await?)
    }

    /// The texts of the QR codes the 扫码加入 scanner (`ShellEffect::ScanPairingQr`) decoded
    /// in one camera frame (none when it found none). A pairing code among them joins its
    /// account; the answer says whether to keep scanning, close the scanner, or show the
    /// refusal's words and keep scanning.
    pub async fn cloud_scanned(&self, texts: Vec<String>) -> Result<PairingScan, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.cloud_scanned(&texts).await })
            .await?)
    }

    /// A home-screen widget of one data source: Today's tile of it read through the same
    /// cache, 登录后显示 and no data while signed out, and how often to refresh it (`refresh_ms`,
    /// the source's TTL but never under the platforms' 30 minutes).
    pub async fn widget(
        &self,
        plugin: String,
        source: String,
    ) -> Result<WidgetModel, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.widget(&plugin, &source).await })
            .await??)
    }

    /// The data sources a student may put on a home-screen widget, in their language: what a
    /// widget's configure screen lists.
    pub fn widget_sources(&self) -> Result<Vec<WidgetSource>, HarnessError> {
        Ok(self.screens()?.widget_sources())
    }

    /// Today: a tile per data source the student chose (`today.tiles`) with its age, read
    /// through the cache by its TTL, and what its edit mode may add.
    pub async fn today_screen(&self) -> Result<TodayScreen, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.today().await })
            .await?)
    }

    /// The first run's next step (the terms, the model, the campus sign-in, notifications), or
    /// none once it is over: the shell shows it over the app while there is one.
    pub fn first_run_screen(&self) -> Result<FirstRunScreen, HarnessError> {
        Ok(self.screens()?.first_run()?)
    }

    pub fn consent_screen(&self) -> Result<ConsentScreen, HarnessError> {
        Ok(self.screens()?.consent())
    }

    pub fn model_settings_screen(&self) -> Result<ModelSettingsScreen, HarnessError> {
        Ok(self.screens()?.model_settings()?)
    }

    pub fn memory_inbox_screen(&self) -> Result<MemoryInbox, HarnessError> {
        Ok(self.screens()?.memory_inbox()?)
    }

    /// The 撤销 bar of each public call waiting out its undo window (`public.undoSeconds`),
    /// oldest first: its tap is `Action::UndoCall`. Read it again on `HeldCallsChanged`.
    pub fn held_calls_screen(&self) -> Result<Vec<UndoBar>, HarnessError> {
        Ok(self.screens()?.held_calls())
    }

    /// Tells the core whether the shell draws the 撤销 bar now: while it does, a public call
    /// the student allowed or tapped waits `public.undoSeconds` before anything is sent; while
    /// it does not (false at open), such a call is sent at once, since a window nobody sees
    /// only delays it.
    pub fn show_undo(&self, shown: bool) {
        self.broker
            .shows_undo
            .store(shown, std::sync::atomic::Ordering::Relaxed);
    }

    /// 已允许: every "Always allow" in force, with its revoke (`Action::RevokeAllowance`).
    pub fn allowances_screen(&self) -> Result<AllowancesScreen, HarnessError> {
        Ok(self.screens()?.allowances()?)
    }

    /// 花钱: the money limits (`Action::SetMoneyLimit`) and today's spend.
    pub fn spending_screen(&self) -> Result<SpendingScreen, HarnessError> {
        Ok(self.screens()?.spending()?)
    }

    /// The ongoing notification's words while a turn runs and the app is not in front: that
    /// the assistant is working, never the student's words or any input.
    pub fn turn_notice(&self) -> Result<TurnNotice, HarnessError> {
        Ok(self.screens()?.turn_notice())
    }

    /// 活动: today's calls in words, grouped by conversation, filtered as `filter` says. It is
    /// the app's screen of what was done (the audit log's own screen was replaced by it).
    pub fn activity_screen(&self, filter: ActivityFilter) -> Result<ActivityScreen, HarnessError> {
        Ok(self.screens()?.activity(&filter)?)
    }

    pub fn jobs_screen(&self) -> Result<JobsScreen, HarnessError> {
        Ok(self.screens()?.jobs())
    }

    /// The notification's words the core writes for the new-job form's choices: the form shows
    /// them, editable, and updates them as the choices change until the student edits them.
    pub fn job_words(&self, draft: JobDraft) -> Result<JobWords, HarnessError> {
        Ok(self.screens()?.job_words(&draft))
    }

    /// Does what a tap asks: the `action` of a button or choice of a screen model (or one
    /// carrying what the user typed). A bad value fails naming the field, and changes nothing.
    /// Sending a message returns when the turn ends; its steps arrive as events meanwhile.
    pub async fn act(&self, action: Action) -> Result<Acted, HarnessError> {
        let screens = self.screens()?;
        Ok(runtime()?
            .spawn(async move { screens.act(action).await })
            .await??)
    }
}
