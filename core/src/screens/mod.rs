//! What each screen of the app shows and what each tap on it does, decided here once for every
//! shell (in the manner of Crux: the core owns the view model, the shells render it and perform
//! only what the phone must). A screen is read whole, in one call, as a plain value in the
//! user's language (settings `language`, zh or en); a tap is an [`Action`] the model handed
//! out, given back to [`Screens::act`]. After the core's events (see [`Live`]) a shell re-reads
//! the screen it shows.
//!
//! A client of the engine, like the CLI and the bindings: nothing below the engine imports it.

mod activity;
mod allowances;
mod approval;
mod campus;
mod chat;
mod cloud;
mod consent;
mod conversation;
mod conversation_list;
mod first_run;
mod held;
mod inbox;
mod job_form;
mod live;
mod markdown;
mod media;
mod nav;
mod pay_code;
mod plugin_screen;
mod plugins;
mod remote;
mod results;
mod ride_code;
mod spending;
mod tap;
mod texts;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

pub use crate::picked::{DOCUMENT_BYTES, DOCUMENT_KINDS, FILE_BYTES};
pub use activity::{ActivityCall, ActivityFilter, ActivityGroup, ActivityScreen, EffectChoice};
pub use allowances::{AllowanceRowView, AllowancesScreen};
pub use approval::{AnswerButton, ApprovalNotice, ApprovalSheet, InputRow, TurnNotice};
pub use campus::{
    CampusAccountScreen, CampusCheck, CampusCheckScreen, CodeStep, RESEND_AFTER_MS, SignInForm,
    SignedIn,
};
pub use chat::{ChatItem, ChatItemKind, ChatScreen, PlanCard, ToolCallView};
pub use cloud::{
    CloudDeviceRow, CloudPairing, CloudPendingRow, CloudScreen, CloudState, PairingScan,
};
pub use consent::{CloudRow, ConsentScreen, ModelSettingsScreen, PermissionRow, ProviderRow};
pub use conversation::{
    ConversationSettingsScreen, RuleForm, RuleKindChoice, RulePlace, RulePluginChoice, RuleRow,
    RuleToolChoice, ScopeKind, ScopeRow,
};
pub use conversation_list::{ConversationListScreen, ConversationRowView, UndoBar};
pub use first_run::{FirstRunPage, FirstRunScreen};
pub use inbox::{FilterChoice, JobRow, JobsScreen, MemoryInbox, MemoryRowView};
pub use job_form::{
    JobComparison, JobComparisonOption, JobDraft, JobFieldOption, JobForm, JobKind, JobKindOption,
    JobScheduleKind, JobScheduleOption, JobSourceOption, JobWords,
};
pub use live::Live;
pub use markdown::{BlockKind, TextBlock, TextSpan};
pub use media::{CallImage, CallLink};
pub use nav::{NavItem, Navigation, Route, route_for};
pub use pay_code::{PayCode, PayCodeScreen, REFRESH_AFTER_MS};
pub use plugin_screen::{
    PluginScreen, ScreenSection, SectionKind, SectionState, TodayScreen, TodayTile,
    WIDGET_REFRESH_FLOOR_MS, WidgetModel, WidgetSource, WidgetState,
};
pub use plugins::{
    AddPluginScreen, DeveloperRow, ModeRowView, PluginDetail, PluginGroup, PluginRow,
    PluginsScreen, ToolRowView,
};
pub use remote::{
    ElicitationAction, ElicitationButton, ElicitationSheet, FieldKind, FieldOption, FieldValue,
    FormFieldRow, PageRow, SignInSheet,
};
pub use results::CallCard;
pub use ride_code::{RideCode, RideCodeScreen};
pub use spending::{MoneyLimitRow, SpendingScreen};

use crate::consent::{Permission, SetupStep};
use crate::engine::{Engine, EngineError};
use crate::plugins::oauth::IssuedClient;
use crate::policy::{Mode, Preset, Rule, RuleKind};
use crate::registry::Effect;
use crate::settings::{Language, parse_change};
use texts::tr;

/// A choice among several (a mode, a preset, an effect): its words, whether it is the current
/// one, and what choosing it does.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct Choice {
    pub label: String,
    pub selected: bool,
    pub action: Action,
}

/// A label and its value, as a settings row shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct LabelValue {
    pub label: String,
    pub value: String,
}

/// How a button looks: the shells map these to their own styles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum ButtonRole {
    Primary,
    Normal,
    Destructive,
    /// An answer whose effect outlasts the call ("Always allow"): set apart from the others and
    /// never drawn like Primary, so one slip does not change a permission for good.
    Permanent,
}

/// A button: its words, its look, and what a tap does.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct Button {
    pub label: String,
    pub role: ButtonRole,
    pub action: Action,
}

impl Button {
    fn new(label: String, role: ButtonRole, action: Action) -> Self {
        Self {
            label,
            role,
            action,
        }
    }
}

/// Every tap a screen offers. Shells never build these from their own logic except for the
/// ones that carry text the user typed (a message, a link, a setting's value).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum Action {
    SendMessage {
        conversation: String,
        text: String,
    },
    /// Start a new conversation with the defaults the last change set (seed 003), and open it.
    NewConversation,
    /// Open this conversation in the chat.
    OpenConversation {
        conversation: String,
    },
    /// Name a conversation as the student typed it.
    RenameConversation {
        conversation: String,
        title: String,
    },
    /// Delete a conversation; the list offers its undo for a few seconds.
    DeleteConversation {
        conversation: String,
    },
    /// Bring back the conversation deleted last, while its undo lasts.
    UndoDeleteConversation,
    CancelTurn {
        turn: String,
    },
    SetMode {
        plugin: String,
        effect: Effect,
        mode: Mode,
    },
    SetEnabled {
        plugin: String,
        enabled: bool,
    },
    RemovePlugin {
        plugin: String,
    },
    UpdatePlugin {
        plugin: String,
    },
    /// The student agreed to the tools a remote server changed after they had seen them.
    AcceptToolChanges {
        plugin: String,
    },
    /// A remote tool made stricter (seed 004: never looser).
    ReclassTool {
        tool: String,
        effect: Effect,
    },
    PreviewLink {
        link: String,
    },
    /// Add a remote MCP server as a plugin: its address, the name the student gives it, and
    /// the bearer token its provider gave them, if it needs one (kept in the keystore only).
    AddRemoteServer {
        url: String,
        name: String,
        token: Option<String>,
        /// A client id the server's authorization server issued for the app, if its sign-in
        /// asks for one.
        #[cfg_attr(feature = "uniffi", uniffi(default))]
        client_id: Option<String>,
        /// The secret issued with that client id, for a confidential client (kept in the
        /// keystore only).
        #[cfg_attr(feature = "uniffi", uniffi(default))]
        client_secret: Option<String>,
    },
    InstallPreview {
        preview: String,
    },
    SetPreset {
        conversation: String,
        preset: Preset,
    },
    SetPlanMode {
        conversation: String,
        on: bool,
    },
    /// Accept the plan a conversation in plan mode ended with (`plan`: its message): plan mode
    /// ends and the agent is asked to carry it out, under every check as before.
    AcceptPlan {
        conversation: String,
        plan: i64,
    },
    SetThinkingEffort {
        conversation: String,
        effort: Option<String>,
    },
    SetConversationModel {
        conversation: String,
        model: Option<String>,
    },
    /// Removes one rule: of the conversation, or a global one when `conversation` is none.
    /// `rule` is the rule as the screen showed it (its JSON): a tap removes that rule wherever
    /// it has moved, and nothing when it is gone.
    RemoveRule {
        conversation: Option<String>,
        rule: String,
    },
    /// Adds a rule from the conversation settings' form: of the conversation, or a global one
    /// when `conversation` is none; `tool` is a pattern the form offered (`wallet.*`).
    AddRule {
        conversation: Option<String>,
        kind: RuleKind,
        tool: String,
    },
    /// Adds (`on`) or removes an entry of a conversation's scope: a folder's path, a site as
    /// typed (`pku.edu.cn`, `*.pku.edu.cn`) or an app.
    SetScopeEntry {
        conversation: String,
        kind: ScopeKind,
        value: String,
        on: bool,
    },
    AcceptTerms,
    /// Revoke one "Always allow" (the 已允许 screen's tap; uiOnly: no tool can).
    RevokeAllowance {
        allowance: i64,
    },
    /// Set a money limit (`money.perPaymentYuan`, `money.perDayYuan`) to the whole 元 the
    /// student typed on the 花钱 screen.
    SetMoneyLimit {
        key: String,
        yuan: String,
    },
    /// 撤销 on a public call waiting out its undo window: nothing of it is sent.
    UndoCall {
        call: i64,
    },
    /// A first-run step after the terms done or left for later.
    PassSetupStep {
        step: SetupStep,
    },
    /// Open one of the app's screens.
    Open {
        route: Route,
    },
    /// Open a plugin's declared screen (a Today tile, a link on the plugin's page).
    OpenPluginScreen {
        plugin: String,
        screen: String,
    },
    /// An item of a plugin screen's list (a feed's post): opens the screen its section
    /// declares, given the item's values (`ScreenSection::row_opens`).
    OpenScreenItem {
        plugin: String,
        screen: String,
        values: Vec<FieldValue>,
    },
    /// Open a plugin's data source (a link on the plugin's page): the core answers with the
    /// plugin screen that shows it, or the source's own value (`Acted::OpenDataSource`).
    OpenDataSource {
        plugin: String,
        source: String,
    },
    /// Today's edit mode: add a plugin's data source as the last tile (`today.tiles`).
    AddTodayTile {
        plugin: String,
        source: String,
    },
    /// Today's edit mode: take a tile off Today.
    RemoveTodayTile {
        plugin: String,
        source: String,
    },
    /// Today's edit mode: move a tile to place `to` (0 is first).
    MoveTodayTile {
        plugin: String,
        source: String,
        to: u32,
    },
    /// Sign in to the campus account with what the student typed (DESIGN.md §10).
    CampusSignIn {
        user: String,
        password: String,
        remember: bool,
    },
    /// The second factor's code the student typed.
    CampusSubmitCode {
        code: String,
    },
    CampusResendCode,
    CampusCancelSignIn,
    /// Signs in again only the services the last sign-in could not (DESIGN.md §10), with the
    /// password held for it or remembered.
    CampusRetry,
    /// The characters of IAAA's captcha picture the student typed (`randCode`).
    CampusSubmitCaptcha {
        code: String,
    },
    /// A new captcha picture.
    CampusRefreshCaptcha,
    CampusSignOut,
    /// A campus check (Treehole's SMS check, the course API's authorization): send its SMS
    /// code, then verify the one typed.
    CampusCheckSendCode {
        check: CampusCheck,
    },
    CampusCheckVerify {
        check: CampusCheck,
        code: String,
    },
    /// A campus check answered with the authenticator's (手机令牌) code.
    CampusCheckVerifyOtp {
        check: CampusCheck,
        code: String,
    },
    /// Run a tool with no input as the student's own call (a plugin page's button, a screen's
    /// fix such as switching to the digital card), then follow its status answer.
    RunTool {
        tool: String,
    },
    /// Send a plugin screen's form (DESIGN.md §2): its tool called as the student's own call
    /// with what they typed, one value per field the screen showed.
    SubmitScreenForm {
        plugin: String,
        tool: String,
        values: Vec<FieldValue>,
    },
    /// Open an `https` page in the system's browser (a status card's tap).
    OpenInBrowser {
        url: String,
    },
    SetCloudConsent {
        plugin: String,
        allowed: bool,
    },
    /// Make a PKU harness Cloud account on the server address the student typed (the 云端
    /// screen); the screen shows its recovery code once.
    CloudSetup {
        server: String,
    },
    /// Join the account whose recovery code the student typed, on the typed address.
    CloudJoin {
        server: String,
        code: String,
    },
    /// The app's own "Back up to the cloud" switch (its consent, seed 000).
    SetCloudBackup {
        allowed: bool,
    },
    /// Write the app's backup to the cloud now.
    CloudBackupNow,
    /// Bring this account's backup to this device; the screen says what it left pending.
    CloudRestore,
    /// Remove another device (its key, from the 云端 screen's row) from the cloud account.
    CloudRemoveDevice {
        device: String,
    },
    /// The backup's second choice, 连同对话内容: the conversations' histories go in it too.
    SetCloudBackupHistories {
        included: bool,
    },
    /// Make a value a restore left pending (its key, from the 云端 screen's row), as the
    /// student's own change.
    CloudApplyPending {
        key: String,
    },
    /// Leave a value a restore left pending unmade, and no longer pending.
    CloudDismissPending {
        key: String,
    },
    /// Ask the server for a pairing token and show its QR on 云端 (ten minutes, one use).
    CloudShowPairing,
    /// Take the pairing QR off 云端.
    CloudHidePairing,
    /// 扫码加入: open the shell's scanner (`ShellEffect::ScanPairingQr`).
    CloudScanToJoin,
    /// Join by the text of a QR code the shell's scanner read (iOS's AVFoundation gives it
    /// whole); Android hands the texts of each frame's codes to `Screens::cloud_scanned`.
    CloudJoinScanned {
        payload: String,
    },
    /// Ask the system for a permission (its dialog), from the user's tap (seed 000).
    RequestPermission {
        permission: Permission,
    },
    /// Open the system's settings page where the user grants a permission the app cannot ask
    /// for again (a denied notification permission, exact alarms).
    OpenPermissionSettings {
        permission: Permission,
    },
    DecideMemory {
        memory: i64,
        approve: bool,
    },
    /// Add the job the student set up on the jobs screen's form.
    AddJob {
        draft: JobDraft,
    },
    PauseJob {
        job: i64,
    },
    ResumeJob {
        job: i64,
    },
    RemoveJob {
        job: i64,
    },
    SetModelEndpoint {
        endpoint: String,
    },
    /// Pick a provider from the model screen's list: its address and first suggested model are
    /// set ("other" leaves the address to be typed).
    ChooseProvider {
        provider: String,
    },
    /// Send one tiny request with the address, model and key set now, and show what came of it.
    TestModelConnection,
    SetModelName {
        name: String,
    },
    SetApiKey {
        key: String,
    },
    ClearApiKey,
    SetLanguage {
        language: Language,
    },
    /// Open the system's document picker, from the user's tap (seed 000: files are chosen only
    /// by the user, only from a screen).
    PickDocument {
        conversation: String,
    },
    /// The document the user picked, read into text by the shell. Taken as the file
    /// `AttachFile` would be, by the same rule.
    AttachDocument {
        conversation: String,
        name: String,
        text: String,
    },
    /// The file the user picked, as the phone read it: the core decides by the name's
    /// extension what it is and reads its text (plain text, Markdown, PDF), or refuses it
    /// naming it; nothing is attached then.
    AttachFile {
        conversation: String,
        name: String,
        bytes: Vec<u8>,
    },
}

/// What only the phone can do, asked of the shell after a tap.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum ShellEffect {
    /// Show the system's permission dialog, then report its answer (`report_permission`).
    RequestPermission { permission: Permission },
    /// Open the system settings page for this permission.
    OpenPermissionSettings { permission: Permission },
    /// Show the system's document picker; hand the bytes of what the user picks to
    /// `Action::AttachFile`.
    PickDocument { conversation: String },
    /// Open this `https` page in the system's browser (Custom Tabs, Safari).
    OpenBrowser { url: String },
    /// Open the in-app scanner of a pairing QR (asking for the camera there): Android hands
    /// the texts of each frame's QR codes to `cloud_scanned`, iOS each QR text to
    /// `Action::CloudJoinScanned`. The
    /// words it shows: its title, what to point at, why it cannot scan without the camera, and
    /// its cancel button.
    ScanPairingQr {
        title: String,
        hint: String,
        camera_denied: String,
        cancel: String,
    },
}

/// What a tap did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
#[allow(
    clippy::large_enum_variant,
    reason = "read once per tap; it crosses the FFI by value"
)]
pub enum Acted {
    /// Done: re-read the screen.
    Done,
    /// The shell has something to do that only the phone can.
    Shell(ShellEffect),
    /// A plugin link was read: show its preview and consent screen.
    Preview(AddPluginScreen),
    /// The agent's turn started; its steps arrive as events.
    TurnEnded { turn: String },
    /// Show this screen.
    Open { route: Route },
    /// Show this plugin's declared screen (`Screens::plugin_screen`) under `Route::PluginScreen`.
    OpenPluginScreen { plugin: String, screen: String },
    /// Show this plugin's data source, which no declared screen shows
    /// (`Screens::source_screen`), under `Route::PluginScreen`.
    OpenDataSource { plugin: String, source: String },
    /// Show the chat of this conversation.
    OpenConversation { conversation: String },
}

/// The key the model's API key is kept under in the keystore.
pub const API_KEY: &str = "model.apiKey";

/// The capability a shell reports (`Harness::report_capabilities`) when its phone has no exact
/// alarms at all (iOS): the exact-alarm permission stays denied, no screen offers a fix that
/// cannot exist, and the jobs screen says how the phone wakes instead.
pub const EXACT_ALARM_UNSUPPORTED: &str = "exact-alarm-unsupported";

/// The screens over one engine, and the live state of running turns.
pub struct Screens {
    engine: Arc<Engine>,
    live: Arc<Live>,
    /// The model screen's choice and last test, between taps.
    model: std::sync::Mutex<consent::ModelDraft>,
    /// What the plugin screens' forms last asked of their read tools.
    asked: plugin_screen::Asked,
    /// The 云端 screen's recovery code to show once and its last restore's words.
    cloud: std::sync::Mutex<cloud::CloudDraft>,
}

impl Screens {
    /// `live` is the one the engine's event sink feeds (see [`Live::sink`]).
    pub fn new(engine: Arc<Engine>, live: Arc<Live>) -> Self {
        Self {
            engine,
            live,
            model: Default::default(),
            asked: Default::default(),
            cloud: Default::default(),
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The language every text is in: the settings' `language`.
    pub fn language(&self) -> Language {
        self.engine.settings().language
    }

    /// The app's destinations, with what waits in each.
    pub fn navigation(&self) -> Result<Navigation, EngineError> {
        nav::build(&self.engine, self.language())
    }

    /// The conversation the chat tab opens on: the most recently active, or a new one.
    pub fn latest_conversation(&self) -> Result<String, EngineError> {
        self.engine.conversations().latest()
    }

    pub fn conversation_list(&self) -> Result<ConversationListScreen, EngineError> {
        conversation_list::build(&self.engine, self.language())
    }

    pub fn chat(&self, conversation: &str) -> Result<ChatScreen, EngineError> {
        chat::build(&self.engine, &self.live, self.language(), conversation)
    }

    pub fn approval(&self, prompt: &crate::invoke::Prompt) -> ApprovalSheet {
        approval::build(&self.engine, self.language(), prompt)
    }

    /// The sheet shown before a remote server's sign-in page opens.
    pub fn sign_in_sheet(&self, page: &crate::plugins::oauth::SignInPage) -> SignInSheet {
        remote::sign_in(self.language(), page)
    }

    /// A remote server's question; `error` says why the last answer was not sent.
    pub fn elicitation_sheet(
        &self,
        request: &crate::invoke::Elicitation,
        error: Option<String>,
    ) -> ElicitationSheet {
        let lang = self.language();
        let plugin = self
            .engine
            .installed()
            .read(|s| s.registry.plugin(&request.plugin).cloned());
        let plugin_title = plugin.map_or(request.plugin_title.clone(), |p| {
            texts::title(lang, &p.title, p.title_en.as_deref())
        });
        remote::question(lang, &plugin_title, request, error)
    }

    /// The student's answer to a server's question, read from what they typed and checked
    /// against the server's form; a misfit is the words to show on the sheet.
    pub fn elicitation_answer(
        &self,
        request: &crate::invoke::Elicitation,
        action: ElicitationAction,
        values: &[FieldValue],
    ) -> Result<crate::invoke::ElicitationAnswer, String> {
        remote::answer(self.language(), request, action, values)
    }

    pub fn plugins(&self) -> PluginsScreen {
        plugins::list(&self.engine, self.language())
    }

    pub fn plugin_detail(&self, plugin: &str) -> Result<PluginDetail, EngineError> {
        plugins::detail(&self.engine, self.language(), plugin)
    }

    pub fn conversation_settings(
        &self,
        conversation: &str,
    ) -> Result<ConversationSettingsScreen, EngineError> {
        conversation::build(&self.engine, self.language(), conversation)
    }

    pub fn campus_account(&self) -> Result<CampusAccountScreen, EngineError> {
        campus::account(&self.engine, self.language())
    }

    /// The screen that answers a campus check (`CampusCheck::asked_by` a status).
    pub fn campus_check(&self, check: CampusCheck) -> CampusCheckScreen {
        campus::check(self.language(), check)
    }

    /// The campus card's pay code, read from the card service now (the shell reads it again
    /// every `refresh_after_ms` while the screen is open).
    pub async fn pay_code(&self) -> PayCodeScreen {
        pay_code::build(&self.engine, self.language()).await
    }

    /// The shuttle bus's ride codes, one for each current booking, read from the bus service
    /// now and only while the screen is open (SERVICES.md §11: on screen only).
    pub async fn ride_code(&self) -> RideCodeScreen {
        ride_code::build(&self.engine, self.language()).await
    }

    /// A plugin's declared screen, read now: its data sources through their cache, its read
    /// tools as the student's own reads (the shell shows it loading until this answers).
    pub async fn plugin_screen(
        &self,
        plugin: &str,
        screen: &str,
    ) -> Result<PluginScreen, EngineError> {
        plugin_screen::build(&self.engine, self.language(), &self.asked, plugin, screen).await
    }

    /// A data source no declared screen shows (`Acted::OpenDataSource`): its value read
    /// through the cache, as a plugin screen of one section.
    pub async fn source_screen(
        &self,
        plugin: &str,
        source: &str,
    ) -> Result<PluginScreen, EngineError> {
        plugin_screen::source_screen(&self.engine, self.language(), plugin, source).await
    }

    /// Today: a tile per default data source, read through its cache, with its age.
    pub async fn today(&self) -> TodayScreen {
        plugin_screen::today(&self.engine, self.language()).await
    }

    /// A home-screen widget of one data source: Today's tile of it through the same cache,
    /// 登录后显示 and no data while signed out, and how often to refresh it.
    pub async fn widget(&self, plugin: &str, source: &str) -> Result<WidgetModel, EngineError> {
        plugin_screen::widget(&self.engine, self.language(), plugin, source).await
    }

    /// The data sources a student may put on a home-screen widget, in their language.
    pub fn widget_sources(&self) -> Vec<WidgetSource> {
        plugin_screen::widget_sources(&self.engine, self.language())
    }

    /// The first run's next step, or none once it is over.
    pub fn first_run(&self) -> Result<FirstRunScreen, EngineError> {
        let works = self.model_draft().works(&self.engine);
        first_run::build(&self.engine, self.language(), works)
    }

    pub fn consent(&self) -> ConsentScreen {
        consent::build(&self.engine, self.language())
    }

    pub fn model_settings(&self) -> Result<ModelSettingsScreen, EngineError> {
        consent::model(&self.engine, self.language(), &self.model_draft())
    }

    fn model_draft(&self) -> std::sync::MutexGuard<'_, consent::ModelDraft> {
        self.model.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn memory_inbox(&self) -> Result<MemoryInbox, EngineError> {
        inbox::memories(&self.engine, self.language())
    }

    /// The notification an ask posts while the app is not in front: never the inputs.
    pub fn approval_notice(&self, prompt: &crate::invoke::Prompt) -> ApprovalNotice {
        approval::notice(&self.engine, self.language(), prompt)
    }

    /// The ongoing notification's words while a turn runs with the app not in front.
    pub fn turn_notice(&self) -> TurnNotice {
        approval::turn_notice(self.language())
    }

    /// The "活动" screen: today's calls in words, grouped by conversation, with the spend.
    pub fn activity(&self, filter: &ActivityFilter) -> Result<ActivityScreen, EngineError> {
        activity::build(&self.engine, self.language(), filter)
    }

    /// The 撤销 bar of each public call waiting out its undo window, oldest first; empty when
    /// none waits. Read it again on `Engine::watch_held_calls`.
    pub fn held_calls(&self) -> Vec<UndoBar> {
        held::build(&self.engine, self.language())
    }

    /// The "已允许" screen: every "Always allow" in force, with revoke.
    pub fn allowances(&self) -> Result<AllowancesScreen, EngineError> {
        allowances::build(&self.engine, self.language())
    }

    /// The "花钱" screen: the money limits and today's spend.
    /// The 云端 screen: asks the server for the account (none when not set up).
    pub async fn cloud(&self) -> CloudScreen {
        cloud::build(&self.engine, self.language(), &self.cloud).await
    }

    /// The texts of the QR codes the 扫码加入 scanner found in one camera frame (Android's
    /// decoder, in the shell: the camera's pictures never reach the core): a pairing code among
    /// them joins its account, as `Action::CloudJoinScanned` does; none is nothing to do.
    pub async fn cloud_scanned(&self, texts: &[String]) -> PairingScan {
        // A pairing code among other codes in the frame is the one read.
        let pairing = texts
            .iter()
            .find(|t| t.trim_start().starts_with(crate::cloud::PAIRING_PREFIX));
        let Some(payload) = pairing.or(texts.first()) else {
            return PairingScan::Nothing;
        };
        match cloud::join_scanned(&self.engine, self.language(), &self.cloud, payload).await {
            Ok(()) => PairingScan::Joined,
            Err(words) => PairingScan::Refused { words },
        }
    }

    pub fn spending(&self) -> Result<SpendingScreen, EngineError> {
        spending::build(&self.engine, self.language())
    }

    pub fn jobs(&self) -> JobsScreen {
        inbox::jobs(&self.engine, self.language())
    }

    /// The notification's words the core writes for the new-job form's choices, shown in the
    /// form and editable (issue 37.3).
    pub fn job_words(&self, draft: &JobDraft) -> JobWords {
        job_form::words(&self.engine, self.language(), draft)
    }

    /// Does what a tap asks. Every change goes through the engine's own checked path, so a tap
    /// can do nothing the engine would refuse.
    pub async fn act(&self, action: Action) -> Result<Acted, EngineError> {
        let e = &self.engine;
        match action {
            Action::SendMessage { conversation, text } => {
                return self.send(&conversation, &text).await;
            }
            Action::NewConversation => {
                let conversation = e.conversations().create()?;
                return Ok(Acted::OpenConversation { conversation });
            }
            Action::OpenConversation { conversation } => {
                e.existing_conversation(&conversation)?;
                return Ok(Acted::OpenConversation { conversation });
            }
            Action::RenameConversation {
                conversation,
                title,
            } => {
                e.conversations().rename(&conversation, &title)?;
            }
            Action::DeleteConversation { conversation } => {
                e.conversations().delete(&conversation)?;
            }
            Action::UndoDeleteConversation => {
                let conversation = e.conversations().undo_delete()?;
                return Ok(Acted::OpenConversation { conversation });
            }
            Action::CancelTurn { turn } => {
                e.cancel_turn(&turn);
            }
            Action::SetMode {
                plugin,
                effect,
                mode,
            } => e.set_mode(&plugin, effect, mode)?,
            Action::SetEnabled { plugin, enabled } => e
                .set_enabled(&plugin, enabled)
                .map_err(|err| plugins::switch_error(self.language(), e, err))?,
            Action::RemovePlugin { plugin } => e.remove_plugin(&plugin)?,
            Action::UpdatePlugin { plugin } => {
                let update = e.update_document(&plugin).await?;
                if let crate::plugins::link::Update::NeedsConsent(preview) = update {
                    let screen = plugins::add(e, self.language(), &preview);
                    return Ok(Acted::Preview(screen));
                }
            }
            Action::AcceptToolChanges { plugin } => {
                e.accept_held_tools(&plugin)?;
            }
            Action::ReclassTool { tool, effect } => e.reclass_remote_tool(&tool, effect)?,
            Action::PreviewLink { link } => {
                let preview = e.preview_link(link.trim()).await?;
                let screen = plugins::add(e, self.language(), &preview);
                return Ok(Acted::Preview(screen));
            }
            Action::AddRemoteServer {
                url,
                name,
                token,
                client_id,
                client_secret,
            } => {
                let given = |v: &Option<String>| {
                    v.as_deref()
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned)
                };
                let token = given(&token);
                let client = match (given(&client_id), given(&client_secret)) {
                    (Some(id), secret) => Some(IssuedClient { id, secret }),
                    (None, None) => None,
                    (None, Some(_)) => {
                        let why = tr(
                            self.language(),
                            "客户端密钥需要与它一同签发的客户端标识：请同时填写客户端标识",
                            "a client secret goes with the client ID it was issued with: fill \
                             in the Client ID too",
                        );
                        return Err(EngineError::Invalid(why.into()));
                    }
                };
                // The list read again shows it, under the remote defaults (seed 000).
                e.add_remote_as(url.trim(), name.trim(), token.as_deref(), client.as_ref())
                    .await?;
            }
            Action::InstallPreview { preview } => {
                e.install_preview(&preview).await?;
            }
            Action::SetPreset {
                conversation,
                preset,
            } => self.change_conversation(&conversation, |s| s.preset = preset)?,
            Action::SetPlanMode { conversation, on } => {
                self.change_conversation(&conversation, |s| s.plan_mode = on)?
            }
            Action::AcceptPlan { conversation, plan } => {
                return self.accept_plan(&conversation, plan).await;
            }
            Action::SetThinkingEffort {
                conversation,
                effort,
            } => self.change_conversation(&conversation, |s| s.thinking_effort = effort)?,
            Action::SetConversationModel {
                conversation,
                model,
            } => self.change_conversation(&conversation, |s| s.model = model)?,
            Action::RemoveRule { conversation, rule } => {
                self.remove_rule(conversation.as_deref(), &rule)?
            }
            Action::AddRule {
                conversation,
                kind,
                tool,
            } => self.add_rule(conversation.as_deref(), kind, tool)?,
            Action::SetScopeEntry {
                conversation,
                kind,
                value,
                on,
            } => self.set_scope_entry(&conversation, kind, &value, on)?,
            Action::AcceptTerms => e.accept_terms()?,
            Action::RevokeAllowance { allowance } => e.revoke_allowance(allowance)?,
            Action::SetMoneyLimit { key, yuan } => {
                let typed = yuan.trim();
                let value = typed.parse::<u32>().map_err(|_| {
                    let why = match self.language() {
                        Language::Zh => {
                            format!("{key}：请填写整数元，例如 100（填的是「{typed}」）")
                        }
                        Language::En => {
                            format!("{key}: enter whole yuan, such as 100 (got \"{typed}\")")
                        }
                    };
                    EngineError::Invalid(why)
                })?;
                e.change_setting(parse_change(&key, &json!(value))?)?
            }
            Action::UndoCall { call } => {
                e.undo_call(call);
            }
            Action::PassSetupStep { step } => e.pass_setup_step(step)?,
            Action::Open { route } => return Ok(Acted::Open { route }),
            Action::OpenPluginScreen { plugin, screen } => {
                return plugin_screen::open(e, self.language(), &plugin, &screen);
            }
            Action::OpenScreenItem {
                plugin,
                screen,
                values,
            } => {
                let lang = self.language();
                return plugin_screen::open_item(e, lang, &self.asked, &plugin, &screen, &values);
            }
            Action::OpenDataSource { plugin, source } => {
                return plugin_screen::open_source(e, self.language(), &plugin, &source);
            }
            Action::AddTodayTile { plugin, source } => {
                let edit = plugin_screen::TodayEdit::Add { plugin, source };
                plugin_screen::edit_today(e, self.language(), edit)?
            }
            Action::RemoveTodayTile { plugin, source } => {
                let edit = plugin_screen::TodayEdit::Remove { plugin, source };
                plugin_screen::edit_today(e, self.language(), edit)?
            }
            Action::MoveTodayTile { plugin, source, to } => {
                let edit = plugin_screen::TodayEdit::Move { plugin, source, to };
                plugin_screen::edit_today(e, self.language(), edit)?
            }
            Action::CampusSignIn {
                user,
                password,
                remember,
            } => {
                let user = user.trim();
                if user.is_empty() || password.is_empty() {
                    return Err(EngineError::Invalid(
                        tr(
                            self.language(),
                            "请填写学号和密码",
                            "Enter your student id and password",
                        )
                        .into(),
                    ));
                }
                e.campus()
                    .sign_in(user, &password, remember)
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::CampusSubmitCode { code } => {
                e.campus()
                    .submit_code(&code)
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::CampusResendCode => {
                e.campus()
                    .resend_sms()
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::CampusCancelSignIn => e.campus().cancel_sign_in(),
            Action::CampusSubmitCaptcha { code } => {
                e.campus()
                    .submit_captcha(&code)
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::CampusRefreshCaptcha => {
                e.campus()
                    .refresh_captcha()
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::CampusRetry => {
                e.campus()
                    .retry()
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::RunTool { tool } => return tap::run(e, self.language(), &tool).await,
            Action::OpenInBrowser { url } => return tap::open_in_browser(self.language(), &url),
            Action::SubmitScreenForm {
                plugin,
                tool,
                values,
            } => {
                let lang = self.language();
                return plugin_screen::submit(e, lang, &self.asked, &plugin, &tool, &values).await;
            }
            Action::CampusSignOut => e
                .campus()
                .sign_out()
                .map_err(|err| campus::words(self.language(), &err))?,
            Action::CampusCheckSendCode { check } => {
                campus::send_check_code(e.campus(), check)
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::CampusCheckVerify { check, code } => {
                campus::verify_check(e.campus(), check, &code, false)
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::CampusCheckVerifyOtp { check, code } => {
                campus::verify_check(e.campus(), check, &code, true)
                    .await
                    .map_err(|err| campus::words(self.language(), &err))?;
            }
            Action::SetCloudConsent { plugin, allowed } => e.set_cloud_consent(&plugin, allowed)?,
            Action::CloudSetup { server } => {
                let lang = self.language();
                let code = e
                    .cloud_setup(server.trim())
                    .await
                    .map_err(|err| EngineError::Invalid(cloud::field_error(lang, false, &err)))?;
                cloud::keep_code(&self.cloud, code);
            }
            Action::CloudJoin { server, code } => {
                let lang = self.language();
                e.cloud_join(server.trim(), code.trim())
                    .await
                    .map_err(|err| EngineError::Invalid(cloud::field_error(lang, true, &err)))?;
            }
            Action::SetCloudBackup { allowed } => e.set_cloud_backup(allowed)?,
            Action::CloudBackupNow => {
                e.cloud_backup()
                    .await
                    .map_err(|err| EngineError::Invalid(err.to_string()))?;
            }
            Action::CloudRestore => {
                let restored = e
                    .cloud_restore()
                    .await
                    .map_err(|err| EngineError::Invalid(err.to_string()))?;
                cloud::keep_restored(&self.cloud, self.language(), &restored);
            }
            Action::CloudRemoveDevice { device } => {
                e.cloud_remove_device(&device)
                    .await
                    .map_err(|err| EngineError::Invalid(err.to_string()))?;
            }
            Action::SetCloudBackupHistories { included } => {
                e.set_cloud_backup_histories(included)?
            }
            Action::CloudApplyPending { key } => e.apply_cloud_pending(&key)?,
            Action::CloudDismissPending { key } => e.dismiss_cloud_pending(&key)?,
            Action::CloudShowPairing => {
                let lang = self.language();
                cloud::show_pairing(e, &self.cloud)
                    .await
                    .map_err(|err| EngineError::Invalid(cloud::field_error(lang, false, &err)))?;
            }
            Action::CloudHidePairing => cloud::hide_pairing(&self.cloud),
            Action::CloudScanToJoin => {
                return Ok(Acted::Shell(cloud::scanner(self.language())));
            }
            Action::CloudJoinScanned { payload } => {
                cloud::join_scanned(e, self.language(), &self.cloud, &payload)
                    .await
                    .map_err(EngineError::Invalid)?;
            }
            Action::RequestPermission { permission } => {
                e.request_permission(permission, crate::policy::Actor::User)
                    .map_err(|err| EngineError::Invalid(err.to_string()))?;
                return Ok(Acted::Shell(ShellEffect::RequestPermission { permission }));
            }
            Action::OpenPermissionSettings { permission } => {
                return Ok(Acted::Shell(ShellEffect::OpenPermissionSettings {
                    permission,
                }));
            }
            Action::DecideMemory { memory, approve } => {
                e.decide_memory(memory, approve)?;
            }
            Action::AddJob { draft } => job_form::add(e, self.language(), &draft)?,
            Action::PauseJob { job } => {
                let reason = tr(self.language(), "你暂停了它", "paused by you");
                e.pause_job(job, reason).map_err(job_error)?;
            }
            Action::ResumeJob { job } => {
                e.resume_job(job).map_err(job_error)?;
            }
            Action::RemoveJob { job } => e.remove_job(job).map_err(job_error)?,
            Action::SetModelEndpoint { endpoint } => {
                e.change_setting(parse_change("model.endpoint", &json!(endpoint.trim()))?)?;
                self.model_draft().custom_chosen = false;
            }
            Action::ChooseProvider { provider } => {
                let Some(p) = crate::agent::providers::PROVIDERS
                    .iter()
                    .find(|p| p.id == provider)
                else {
                    return Err(EngineError::Invalid(format!(
                        "provider: there is no provider \"{provider}\""
                    )));
                };
                let custom = p.base_url.is_empty();
                if !custom {
                    e.change_setting(parse_change("model.endpoint", &json!(p.base_url))?)?;
                    if !p.models.contains(&e.settings().model.name.as_str()) {
                        e.change_setting(parse_change("model.name", &json!(p.models[0]))?)?;
                    }
                }
                self.model_draft().custom_chosen = custom;
            }
            Action::TestModelConnection => {
                let tested = consent::test(e).await?;
                self.model_draft().tested = Some(tested);
            }
            Action::SetModelName { name } => {
                e.change_setting(parse_change("model.name", &json!(name.trim()))?)?
            }
            Action::SetApiKey { key } => {
                let key = key.trim();
                if key.is_empty() {
                    return Err(EngineError::Invalid(format!(
                        "{API_KEY}: paste the key your provider gave you"
                    )));
                }
                e.set_model_api_key(Some(key))?
            }
            Action::ClearApiKey => e.set_model_api_key(None)?,
            Action::SetLanguage { language } => {
                e.change_setting(crate::settings::Change::Language(language))?
            }
            Action::PickDocument { conversation } => {
                return Ok(Acted::Shell(ShellEffect::PickDocument { conversation }));
            }
            Action::AttachDocument {
                conversation,
                name,
                text,
            } => {
                self.attach_file(&conversation, &name, text.into_bytes())?;
            }
            Action::AttachFile {
                conversation,
                name,
                bytes,
            } => {
                self.attach_file(&conversation, &name, bytes)?;
            }
        }
        Ok(Acted::Done)
    }

    /// The file the user picked on the chat screen, attached to `conversation` as its text
    /// (see [`DOCUMENT_KINDS`]); returns the document's id. Only the shell calls this, with a
    /// file the user chose: no tool can.
    pub fn attach_file(
        &self,
        conversation: &str,
        name: &str,
        bytes: Vec<u8>,
    ) -> Result<i64, EngineError> {
        let text =
            crate::picked::read(self.language(), name, bytes).map_err(EngineError::Invalid)?;
        self.engine.open_conversation(conversation)?;
        self.engine.attach_document(conversation, name, &text)
    }

    /// The student's words to the agent: a turn, or the running turn's next step.
    async fn send(&self, conversation: &str, text: &str) -> Result<Acted, EngineError> {
        let e = &self.engine;
        if text.trim().is_empty() {
            return Err(EngineError::Invalid(
                "message: write something to send".into(),
            ));
        }
        // seed 000: the agent acts for the student only once the terms are accepted.
        if !e.consent().terms_accepted() {
            return Err(EngineError::Invalid(
                tr(
                    self.language(),
                    "助手还不能开始：请先在首次设置中阅读并同意用户协议",
                    "The assistant cannot start yet: read and accept the terms in the first-run setup first",
                )
                .into(),
            ));
        }
        // The chat is where a conversation starts.
        e.open_conversation(conversation)?;
        let summary = e.send_message(conversation, text).await?;
        Ok(Acted::TurnEnded { turn: summary.turn })
    }

    /// seed 003: after the plan is accepted, execution still goes through every check. Accepting
    /// ends plan mode for the next turn and says so to the agent; no preset, mode or rule
    /// changes. Only the plan the chat offers now can be accepted: one the student has replied
    /// to, or one from before plan mode was turned off, starts nothing.
    async fn accept_plan(&self, conversation: &str, plan: i64) -> Result<Acted, EngineError> {
        let lang = self.language();
        let settings = self.engine.existing_conversation(conversation)?.settings;
        let rows = self.engine.history(conversation, None, 1)?;
        let offered = settings.plan_mode && chat::plan_of(&rows).is_some_and(|row| row.id == plan);
        if !offered {
            return Err(EngineError::Invalid(
                tr(
                    lang,
                    "这个计划已经不是最新的，没有开始执行；请看对话里现在的内容",
                    "This plan is no longer the one on offer, so nothing was started; read the conversation as it is now",
                )
                .into(),
            ));
        }
        self.change_conversation(conversation, |s| s.plan_mode = false)?;
        let words = tr(
            lang,
            "我同意这个计划，请开始执行。",
            "I accept this plan: go ahead.",
        );
        let sent = self.send(conversation, words).await;
        if sent.is_err() {
            // Nothing started: the plan stays on offer.
            self.change_conversation(conversation, |s| s.plan_mode = true)?;
        }
        sent
    }

    fn change_conversation(
        &self,
        conversation: &str,
        change: impl FnOnce(&mut crate::turn::ConversationSettings),
    ) -> Result<(), EngineError> {
        let mut settings = self.engine.existing_conversation(conversation)?.settings;
        change(&mut settings);
        self.engine
            .set_conversation_settings(conversation, settings)
    }

    /// The user's own rule, made on the screen: never asked about (DESIGN.md §3 8e: the user
    /// can make a protected change on the screen), but only with a tool pattern the form
    /// offered, so a rule never names a tool that is not there.
    fn add_rule(
        &self,
        conversation: Option<&str>,
        kind: RuleKind,
        tool: String,
    ) -> Result<(), EngineError> {
        let lang = self.language();
        let known = match tool.split_once('.') {
            Some((plugin, "*")) => self.engine.plugins().iter().any(|v| v.plugin.id == plugin),
            _ => self.engine.tool(&tool).is_some(),
        };
        if !known {
            let why = match lang {
                Language::Zh => format!("工具：没有「{tool}」这个工具或插件；请从列表里选"),
                Language::En => {
                    format!("tool: there is no tool or plugin \"{tool}\"; pick one from the list")
                }
            };
            return Err(EngineError::Invalid(why));
        }
        let rule = Rule {
            kind,
            tool,
            effect: None,
            when: None,
        };
        if !self.engine.add_rule(conversation, rule)? {
            let why = tr(
                lang,
                "这条规则已经有了，没有重复添加",
                "This rule is already there; nothing was added",
            );
            return Err(EngineError::Invalid(why.into()));
        }
        Ok(())
    }

    /// The user's own change to a conversation's scope (seed 003: approving a call never widens
    /// it; only this screen does). A site is checked as the gates will read it.
    fn set_scope_entry(
        &self,
        conversation: &str,
        kind: ScopeKind,
        value: &str,
        on: bool,
    ) -> Result<(), EngineError> {
        let lang = self.language();
        let value = value.trim();
        if on && kind == ScopeKind::Host {
            if value.is_empty() {
                let why = tr(
                    lang,
                    "添加网站：请填写网站，例如 pku.edu.cn",
                    "Add a site: type a site, such as pku.edu.cn",
                );
                return Err(EngineError::Invalid(why.into()));
            }
            if crate::gates::check_scope_host(value).is_err() {
                let why = match lang {
                    Language::Zh => format!(
                        "添加网站：「{value}」不是网站的写法；写 pku.edu.cn（含子域名）、*.pku.edu.cn（只含子域名）或 *（任何网站）"
                    ),
                    Language::En => format!(
                        "Add a site: \"{value}\" is not how a site is written; write pku.edu.cn (with its subdomains), *.pku.edu.cn (subdomains only) or * (any site)"
                    ),
                };
                return Err(EngineError::Invalid(why));
            }
        }
        self.engine.edit_scope(conversation, |scope| match kind {
            ScopeKind::Folder => edit_list(&mut scope.roots, PathBuf::from(value), on),
            ScopeKind::Host => edit_list(&mut scope.hosts, value.to_owned(), on),
            ScopeKind::App => edit_list(&mut scope.apps, value.to_owned(), on),
        })
    }

    fn remove_rule(&self, conversation: Option<&str>, rule: &str) -> Result<(), EngineError> {
        let gone = || {
            EngineError::Invalid(
                tr(
                    self.language(),
                    "这条规则已经变了，没有删除任何规则；请看一下现在的规则",
                    "This rule has changed since it was shown, so nothing was removed; look at the rules as they are now",
                )
                .into(),
            )
        };
        let rule: Rule = serde_json::from_str(rule).map_err(|_| gone())?;
        if self.engine.remove_rule(conversation, &rule)? {
            Ok(())
        } else {
            Err(gone())
        }
    }
}

/// A job that cannot be changed: the scheduler's message names the job and why.
fn job_error(e: crate::scheduler::SchedulerError) -> EngineError {
    EngineError::Invalid(e.to_string())
}

/// Adds `value` once (`on`), or removes it where it is.
fn edit_list<T: PartialEq>(list: &mut Vec<T>, value: T, on: bool) {
    match (on, list.iter().position(|v| *v == value)) {
        (true, None) => list.push(value),
        (false, Some(at)) => {
            list.remove(at);
        }
        _ => {}
    }
}
