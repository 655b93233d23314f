//! The core over one data directory: a thin façade that builds the owners of the state, wires
//! them together, hands them out, and keeps the methods the shells and the CLI call as one-line
//! delegations.
//!
//! The owners (docs/ARCHITECTURE.md has the map): [`InstalledPlugins`] (registry, handlers,
//! modes, preferences, load errors), [`Conversations`] (conversations, their rules, scope and
//! taint, the defaults and the global rules, attached documents), [`Consent`], [`AppSettings`],
//! [`Memories`], [`Audit`] and [`Scheduler`] (the jobs); [`Invoker`] is the one invoke path
//! over them, and [`DataSources`] the widgets' cache. Each owner writes every change to the
//! store in one transaction before it takes effect in memory, so a refused or failed write
//! changes nothing and a killed process loses nothing it reported done.
//!
//! The lock rule. Each owner keeps its state behind its own lock and takes it only inside its
//! own methods. Nobody holds an owner's lock across an await, a prompt, a plugin's code or a
//! call into the platform (the wake alarm, the secret store): state is copied out first. When
//! something needs several owners (a call's facts, a settings change, the plugin list with
//! what consent meets), it takes their locks one at a time, never one inside another, so no
//! two locks are ever held together and no order between them can deadlock.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use crate::agent::turn::{AgentJobs, AgentParts, Running, WithdrawingBroker};
use crate::agent::{Agent, TurnSummary};
use crate::audit::Audit;
use crate::campus::Campus;
use crate::clock::{Clock, SystemClock};
use crate::cloud::backup::{self, BackedConversation, Backup, Restored};
use crate::cloud::{Cloud, CloudError, CloudStatus};
use crate::consent::{
    Consent, ConsentError, ConsentState, Permission, PermissionState, SetupStep, TERMS_VERSION,
};
use crate::conversations::Conversations;
use crate::datasource::{DataSources, SourceError, SourceInfo, SourceRead};
use crate::events::{Event, EventSink, NoEvents};
use crate::gates::ToolCatalog;
use crate::history::History;
use crate::installed::InstalledPlugins;
use crate::invoke::{ApprovalBroker, Call, Invocation, Invoker, ModelTool, PluginHandler};
use crate::memories::Memories;
use crate::plugins::builtin::{self, Owners, SettingsControl};
use crate::plugins::{document, interpreter, link, remote, samples};
use crate::policy::{Actor, Decision, Mode, ModeSource, Preset, Rule, RuleKind};
use crate::registry::{Effect, McpTool, Plugin, PluginKind, Tool};
use crate::scheduler::{Job, JobRunner, Owner, RunReport, Scheduler, SchedulerError};
use crate::secrets::{MemorySecrets, SecretStore};
use crate::services::Host;
use crate::settings::{AppSettings, Change, Settings, SettingsError};
use crate::store::Store;
use crate::store::history::MessageRow;
use crate::store::rows::{AuditRow, MemoryRow};
use crate::turn::{Conversation, ConversationSettings, Scope};

pub use crate::error::EngineError;
pub use crate::installed::{Catalog, NoCatalog, PluginView};
pub use crate::memories::MemoryState;

/// What an engine is built with.
pub struct Options {
    pub broker: Arc<dyn ApprovalBroker>,
    pub catalog: Arc<dyn Catalog>,
    pub secrets: Arc<dyn SecretStore>,
    pub clock: Arc<dyn Clock>,
    /// Install the core's own plugins (settings, memory, files). Conformance scenarios define
    /// every plugin themselves and turn this off.
    pub builtin_plugins: bool,
    /// The shell's alarm, told the scheduler's next wake time (DESIGN.md §7).
    pub wake: Arc<dyn crate::scheduler::WakeScheduler>,
    /// The shell's receiver of what happens outside its calls (module `events`).
    pub events: Arc<dyn EventSink>,
    /// Accept `http://` plugin links to a loopback address (plugin authors on a desktop, and
    /// the tests). Off in the app: students install from https links only.
    pub development_links: bool,
    /// Where campus requests go: the campus hosts, or in development (the CLI's
    /// `HARNESS_CAMPUS_ORIGIN`, the tests) the campus simulator. The phone library never sets
    /// it (DESIGN.md §10).
    pub campus: crate::campus::wire::Origin,
    /// Accept MCP servers on this machine: `localhost` (when every address it resolves to is
    /// loopback), `127.0.0.1` and `[::1]`, over http or https. The CLI (a development tool)
    /// sets it; the app never does: a student's phone adds a server only at a public https
    /// address (DESIGN.md §5).
    pub development_servers: bool,
    /// The shell's browser for signing in to a remote server that asks for it (OAuth 2.1): the
    /// phone's system browser. Without one, such a server is added only with a bearer token.
    pub browser: Option<Arc<dyn crate::plugins::oauth::Browser>>,
    /// The PKU harness Cloud address the 云端 screen's field starts with while no cloud is set
    /// up: the phone build's (`PKU_HARNESS_CLOUD_URL` at build time, harness-ffi's `open`);
    /// none in the tests and the CLI. Setting up still checks it as any typed address.
    pub cloud_address: Option<String>,
}

impl Options {
    pub fn new(broker: Arc<dyn ApprovalBroker>) -> Self {
        Self {
            broker,
            catalog: Arc::new(NoCatalog),
            secrets: Arc::new(MemorySecrets::default()),
            clock: Arc::new(SystemClock),
            builtin_plugins: true,
            wake: Arc::new(crate::scheduler::NoWake),
            events: Arc::new(NoEvents),
            development_links: false,
            campus: crate::campus::wire::Origin::campus(),
            development_servers: false,
            browser: None,
            cloud_address: None,
        }
    }
}

/// The owners, wired together.
pub(crate) struct Core {
    pub agent: Arc<Agent>,
    pub history: Arc<History>,
    pub plugins: Arc<InstalledPlugins>,
    pub conversations: Arc<Conversations>,
    pub consent: Arc<Consent>,
    pub campus: Arc<Campus>,
    pub settings: Arc<AppSettings>,
    pub memories: Arc<Memories>,
    pub audit: Arc<Audit>,
    pub invoker: Arc<Invoker>,
    pub scheduler: Arc<Scheduler>,
    pub sources: DataSources,
    pub host: Arc<Host>,
    pub secrets: Arc<dyn SecretStore>,
    pub clock: Arc<dyn Clock>,
    pub events: Arc<dyn EventSink>,
    pub links: link::Links,
    pub remotes: Arc<remote::Remotes>,
}

/// The core. Cheap to clone: clones share one state.
#[derive(Clone)]
pub struct Engine {
    core: Arc<Core>,
}

impl Engine {
    /// Opens the data directory `dir`, creating it and its database when missing.
    pub fn open(dir: &Path, options: Options) -> Result<Engine, EngineError> {
        Self::start(Store::open(dir)?, options)
    }

    /// An engine whose state lasts as long as the process.
    pub fn in_memory(options: Options) -> Result<Engine, EngineError> {
        Self::start(Store::open_in_memory()?, options)
    }

    fn start(store: Store, options: Options) -> Result<Engine, EngineError> {
        let data_dir = store.path().and_then(Path::parent).map(Path::to_path_buf);
        let store = Arc::new(store);
        let clock = options.clock;
        let settings = Arc::new(AppSettings::load(store.clone())?);
        // The remote plugins' handlers reach back to the installed plugins (to install a tool
        // list their server announced), weakly: the installed plugins hold them.
        let mut remotes = None;
        let servers = if options.development_servers {
            remote::Servers::AlsoLoopback
        } else {
            remote::Servers::PublicOnly
        };
        let plugins = Arc::new_cyclic(|plugins: &Weak<InstalledPlugins>| {
            let made = Arc::new(remote::Remotes::new(
                plugins.clone(),
                options.secrets.clone(),
                servers,
                options.browser.clone(),
            ));
            remotes = Some(made.clone());
            let catalog = Arc::new(interpreter::WithInterpreter {
                inner: options.catalog,
                interpreter: Arc::new(interpreter::Interpreter::new(
                    options.secrets.clone(),
                    settings.clone(),
                )),
                remotes: made,
            });
            InstalledPlugins::new(store.clone(), clock.clone(), catalog)
        });
        // new_cyclic ran the closure, once, before returning.
        let remotes = remotes.expect("the remote plugins' handlers were built");
        let conversations = Arc::new(Conversations::load(store.clone(), clock.clone())?);
        let consent = Arc::new(Consent::load(store.clone())?);
        // The consent's "campus session" is whether sessions exist (DESIGN.md §4), nothing else.
        let follows = consent.clone();
        let campus = Arc::new(Campus::new(
            options.secrets.clone(),
            clock.clone(),
            options.campus,
            Box::new(move |signed_in| {
                if follows.get().campus_session != signed_in {
                    let _ = follows.change(|c| c.campus_session = signed_in);
                }
            }),
        ));
        let memories = Arc::new(Memories::new(
            store.clone(),
            clock.clone(),
            options.events.clone(),
        ));
        let audit = Arc::new(Audit::new(store.clone()));
        let history = Arc::new(History::load(store.clone(), clock.clone())?);
        let running = Arc::new(Running::default());
        let broker: Arc<dyn ApprovalBroker> = Arc::new(WithdrawingBroker {
            inner: options.broker,
            running: running.clone(),
        });
        let cloud = Arc::new(
            Cloud::new(options.secrets.clone(), data_dir.clone(), clock.clone())
                .offering(options.cloud_address.clone()),
        );
        let host = Arc::new(Host::new(campus.clone(), cloud));
        host.context.report_to(options.events.clone());
        let invoker = Invoker::new(
            plugins.clone(),
            conversations.clone(),
            consent.clone(),
            audit.clone(),
            host.clone(),
            store.clone(),
            broker,
            clock.clone(),
            settings.clone(),
            data_dir,
        );
        let scheduler = Arc::new(Scheduler::new(
            store.clone(),
            clock.clone(),
            invoker.clone(),
            plugins.clone(),
            consent.clone(),
            settings.clone(),
            options.wake,
        ));
        let sources = DataSources::new(store, clock.clone(), plugins.clone(), invoker.clone());
        let agent = Arc::new(Agent::new(AgentParts {
            invoker: invoker.clone(),
            conversations: conversations.clone(),
            plugins: plugins.clone(),
            memories: memories.clone(),
            settings: settings.clone(),
            history: history.clone(),
            host: host.clone(),
            secrets: options.secrets.clone(),
            clock: clock.clone(),
            events: options.events.clone(),
            running,
        }));
        let links = link::Links::new(plugins.clone(), settings.clone(), options.development_links);
        let core = Arc::new(Core {
            agent,
            history,
            plugins,
            conversations,
            consent,
            campus,
            settings,
            memories,
            audit,
            invoker,
            scheduler,
            sources,
            host,
            secrets: options.secrets,
            clock,
            events: options.events,
            links,
            remotes,
        });
        let builtin = if options.builtin_plugins {
            let settings: Weak<dyn SettingsControl> = Arc::downgrade(&core) as Weak<Core>;
            builtin::plugins(Owners {
                settings,
                memories: core.memories.clone(),
                conversations: core.conversations.clone(),
                scheduler: Arc::downgrade(&core.scheduler),
                plugins: Arc::downgrade(&core.plugins),
            })
        } else {
            Vec::new()
        };
        let upgraded = core.plugins.load(builtin)?;
        core.audit.prune()?;
        if !core.settings.get().model.endpoint.is_empty() {
            core.register_agent_jobs();
        }
        let errors = core.scheduler.load()?;
        core.plugins.add_load_errors(errors);
        core.retire(&upgraded.retired)?;
        core.replaced(&upgraded.replaced)?;
        Ok(Engine { core })
    }

    // ---- the owners, for code that works with one concern

    pub fn installed(&self) -> &Arc<InstalledPlugins> {
        &self.core.plugins
    }

    pub fn conversations(&self) -> &Arc<Conversations> {
        &self.core.conversations
    }

    pub fn scheduler(&self) -> &Arc<Scheduler> {
        &self.core.scheduler
    }

    pub fn agent(&self) -> &Agent {
        &self.core.agent
    }

    // ---- the agent

    /// One turn of the agent from the student's words; its steps stream to the event sink.
    pub async fn send_message(
        &self,
        conversation: &str,
        text: &str,
    ) -> Result<TurnSummary, EngineError> {
        self.core.agent.send(conversation, text).await
    }

    /// The turns plugins' messages queued in a conversation while no turn ran to take them
    /// (a message sent from a tap): the shell calls this when the conversation is idle.
    pub async fn run_queued_turns(
        &self,
        conversation: &str,
    ) -> Result<Vec<TurnSummary>, EngineError> {
        self.core.agent.run_queued(conversation).await
    }

    /// Cancels a running turn by its id (`TurnStarted`); false when none such runs.
    pub fn cancel_turn(&self, turn: &str) -> bool {
        self.core.agent.cancel(turn)
    }

    /// A page of a conversation's history, oldest first (see `History::page`).
    pub fn history(
        &self,
        conversation: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<MessageRow>, EngineError> {
        self.core.history.page(conversation, before, limit)
    }

    pub fn invoker(&self) -> &Arc<Invoker> {
        &self.core.invoker
    }

    /// Plugins that were installed but could not be loaded at open, with why.
    pub fn load_errors(&self) -> Vec<String> {
        self.core.plugins.load_errors()
    }

    // ---- plugins

    /// Installs a loaded plugin with the code behind its tools; `source` is where it came from.
    /// It starts enabled.
    pub fn install(
        &self,
        plugin: Plugin,
        source: &str,
        handler: Arc<dyn PluginHandler>,
    ) -> Result<(), EngineError> {
        self.core.plugins.install(plugin, source, handler)
    }

    /// Installs a plugin document from `source` (a link); official or community is decided
    /// by the source. Returns the plugin id.
    pub fn install_document(&self, text: &str, source: &str) -> Result<String, EngineError> {
        let doc = document::parse(text)?;
        let official_host = self.core.settings.get().official_host;
        let kind = document::kind_for_source(source, &official_host);
        self.core
            .plugins
            .install_from_catalog(Plugin::load(doc.manifest, kind)?, source)
    }

    /// Installs an MCP server's tools as remote plugin `mcp-<server>`. Returns the plugin id.
    pub fn install_remote(
        &self,
        server: &str,
        title: &str,
        tools: &[McpTool],
        url: &str,
    ) -> Result<String, EngineError> {
        self.core.plugins.install_remote(server, title, tools, url)
    }

    // ---- plugins from outside: documents by link

    /// Fetches the plugin document at `link` and returns what the consent screen shows,
    /// installing nothing.
    pub async fn preview_link(&self, link: &str) -> Result<link::Preview, EngineError> {
        self.core.links.preview(link).await
    }

    /// Installs exactly what preview `id` showed (refused if the document changed since).
    pub async fn install_preview(&self, id: &str) -> Result<String, EngineError> {
        self.core.links.install(id).await
    }

    /// Re-fetches an installed document's link; an update that asks for more waits for
    /// consent.
    pub async fn update_document(&self, plugin: &str) -> Result<link::Update, EngineError> {
        self.core.links.update(plugin).await
    }

    // ---- plugins from outside: remote MCP servers

    /// Connects to the MCP server at `url`, lists its tools and installs them as plugin
    /// `mcp-<name>`; a bearer `token` is kept in the keystore. Without a token, a server that
    /// asks the student to sign in is signed in to through the shell's browser
    /// ([`Options::browser`]), when it has one. Returns the plugin id.
    pub async fn add_remote(
        &self,
        url: &str,
        name: &str,
        token: Option<&str>,
    ) -> Result<String, EngineError> {
        self.add_remote_as(url, name, token, None).await
    }

    /// [`Engine::add_remote`], signing in (when the server asks for it) as `client`: a client
    /// the server's authorization server issued for the app beforehand (its id, and its secret
    /// for a confidential client, kept in the keystore with the sign-in).
    pub async fn add_remote_as(
        &self,
        url: &str,
        name: &str,
        token: Option<&str>,
        client: Option<&crate::plugins::oauth::IssuedClient>,
    ) -> Result<String, EngineError> {
        let credentials = crate::plugins::oauth::Credentials::default();
        self.core
            .remotes
            .add(url, name, token, None, client, &credentials)
            .await
    }

    /// [`Engine::add_remote`] for a server that may ask the student to sign in (OAuth 2.1, the
    /// MCP authorization specification): when it refuses the app (HTTP 401), the student signs
    /// in on its authorization server's page, which `browser` opens, and the sign-in is kept in
    /// the keystore. `client` is a client the server's authorization server issued for the
    /// app beforehand (its id, and its secret for a confidential client), for one that
    /// registers no app by itself. A server that needs no sign-in is added as `add_remote` adds
    /// it.
    pub async fn add_remote_signing_in(
        &self,
        url: &str,
        name: &str,
        browser: &dyn crate::plugins::oauth::Browser,
        client: Option<&crate::plugins::oauth::IssuedClient>,
    ) -> Result<String, EngineError> {
        let credentials = crate::plugins::oauth::Credentials::default();
        self.add_remote_signing_in_with(url, name, browser, client, &credentials)
            .await
    }

    /// [`Engine::add_remote_signing_in`] with `credentials` beside the issued `client`: its
    /// private key (`private_key_jwt`) and an enterprise sign-in (cross-app access). With an
    /// enterprise sign-in, or at an authorization server that issues tokens only to clients
    /// themselves (the client credentials grant), the app signs in as the client with no page
    /// to show, and signs in so again, unattended, whenever the token expires or is refused.
    pub async fn add_remote_signing_in_with(
        &self,
        url: &str,
        name: &str,
        browser: &dyn crate::plugins::oauth::Browser,
        client: Option<&crate::plugins::oauth::IssuedClient>,
        credentials: &crate::plugins::oauth::Credentials,
    ) -> Result<String, EngineError> {
        self.core
            .remotes
            .add(url, name, None, Some(browser), client, credentials)
            .await
    }

    /// Lists a remote plugin's tools again and installs the list (as after
    /// `notifications/tools/list_changed`, which the server's session acts on by itself): a
    /// new tool starts under the remote defaults, a tool the user made stricter stays so, a
    /// tool the server dropped is gone. Returns the ids of the tools that are new.
    pub async fn refresh_remote(&self, plugin: &str) -> Result<Vec<String>, EngineError> {
        self.core.remotes.refresh(plugin).await
    }

    /// The changed tool definitions of remote plugin `plugin` that wait for the student's
    /// agreement, if its server changed tools they had seen.
    pub fn held_tools(&self, plugin: &str) -> Option<crate::installed::HeldList> {
        self.core.plugins.held(plugin)
    }

    /// The student agreed to remote plugin `plugin`'s changed tools: the list its server gave
    /// is installed. Returns the ids of the tools that are new.
    pub fn accept_held_tools(&self, plugin: &str) -> Result<Vec<String>, EngineError> {
        self.core.plugins.accept_held(plugin)
    }

    /// Re-classes a remote tool to a stricter effect (seed 004: a remote server's hint can only
    /// be tightened by the user, never loosened). Kept across restarts and refreshes.
    pub fn reclass_remote_tool(&self, tool: &str, effect: Effect) -> Result<(), EngineError> {
        self.core.plugins.reclass_remote(tool, effect)
    }

    /// Ends what the engine holds open outside the device: each remote plugin's session is
    /// closed, and its server told (Streamable HTTP: the session's DELETE). Call it before the
    /// process exits; a remote plugin used afterwards connects anew.
    pub async fn shutdown(&self) {
        self.core.remotes.close_all().await;
    }

    /// Connects to the MCP server at `url` and lists its tools, installing nothing.
    pub async fn remote_tools(&self, url: &str) -> Result<Vec<McpTool>, EngineError> {
        self.core.remotes.tools_at(url).await
    }

    /// Removes a document or remote plugin with everything it left: its modes and
    /// preferences, its jobs, its store, and a remote server's bearer token or sign-in in the
    /// keystore.
    pub fn remove_plugin(&self, plugin: &str) -> Result<(), EngineError> {
        let remote = self.core.plugins.read(|state| {
            state
                .registry
                .plugin(plugin)
                .is_some_and(|p| p.kind == PluginKind::Remote)
        });
        self.core.plugins.uninstall(plugin)?;
        if let Some(name) = plugin.strip_prefix("mcp-").filter(|_| remote) {
            // A token left behind would be sent to whatever server is added under this name
            // next; the plugin is gone either way, so a keystore that fails here is reported.
            self.core
                .secrets
                .delete(&crate::plugins::remote::token_key(name))?;
            self.core
                .secrets
                .delete(&crate::plugins::oauth::credentials_key(name))?;
        }
        for job in self.core.scheduler.all() {
            let owned = matches!(&job.owner, crate::scheduler::Owner::Plugin { plugin: p, .. } if p == plugin);
            if owned {
                // The plugin is gone either way; a job that cannot be removed now fails its
                // next run on the missing tool and is listed then.
                let _ = self.core.scheduler.remove(job.id);
            }
        }
        self.core.plugins.delete_store(plugin);
        Ok(())
    }

    /// Removes an installed document or remote plugin, with its modes and preferences.
    pub fn uninstall(&self, plugin: &str) -> Result<(), EngineError> {
        self.core.plugins.uninstall(plugin)
    }

    pub fn set_enabled(&self, plugin: &str, enabled: bool) -> Result<(), EngineError> {
        self.core.plugins.set_enabled(plugin, enabled)
    }

    pub fn set_mode(&self, plugin: &str, effect: Effect, mode: Mode) -> Result<(), EngineError> {
        self.core.plugins.set_mode(plugin, effect, mode)
    }

    /// Every effect's mode for one plugin, with where it came from.
    pub fn modes(&self, plugin: &str) -> Result<Vec<(Effect, Mode, ModeSource)>, EngineError> {
        self.core.plugins.modes(plugin)
    }

    /// Every "Always allow" in force now, with its scope, since and until (DESIGN.md §3).
    pub fn allowances(&self) -> Result<Vec<crate::invoke::AllowanceRow>, EngineError> {
        Ok(self.core.invoker.allowances()?)
    }

    /// Revokes one "Always allow" (the "已允许" screen's revoke).
    pub fn revoke_allowance(&self, id: i64) -> Result<(), EngineError> {
        self.core.invoker.revoke_allowance(id)
    }

    /// What was paid today (the local day in the settings time zone), in fen.
    pub fn spent_today_fen(&self) -> Result<u64, EngineError> {
        Ok(self.core.invoker.spent_today_fen()?)
    }

    /// The public calls waiting out their undo window (issue 41.4), oldest first.
    pub fn held_calls(&self) -> Vec<crate::invoke::HeldCall> {
        self.core.invoker.held_calls()
    }

    /// Changes whenever a public call is held or its undo window ends.
    pub fn watch_held_calls(&self) -> tokio::sync::watch::Receiver<Vec<crate::invoke::HeldCall>> {
        self.core.invoker.watch_held_calls()
    }

    /// The student's 撤销: held call `id` is not sent. False once its window has ended.
    pub fn undo_call(&self, id: i64) -> bool {
        self.core.invoker.undo_call(id)
    }

    /// Sends held call `id` now, without waiting out its undo window.
    pub fn send_held_now(&self, id: i64) -> bool {
        self.core.invoker.send_held_now(id)
    }

    /// Installed plugins in id order.
    pub fn plugins(&self) -> Vec<PluginView> {
        self.core.plugins()
    }

    pub fn tool(&self, id: &str) -> Option<Arc<Tool>> {
        self.core.plugins.tool(id)
    }

    // ---- rules and conversations

    /// Replaces the global rules.
    pub fn set_rules(&self, rules: Vec<Rule>) -> Result<(), EngineError> {
        self.core.conversations.set_rules(rules)
    }

    pub fn rules(&self) -> Vec<Rule> {
        self.core.conversations.rules()
    }

    /// Replaces one conversation's own rules.
    pub fn set_conversation_rules(
        &self,
        conversation: &str,
        rules: Vec<Rule>,
    ) -> Result<(), EngineError> {
        self.core
            .conversations
            .set_conversation_rules(conversation, rules)
    }

    /// Removes the rule the user saw (see [`Conversations::remove_rule`]); false when it is
    /// gone.
    pub fn remove_rule(
        &self,
        conversation: Option<&str>,
        rule: &Rule,
    ) -> Result<bool, EngineError> {
        self.core.conversations.remove_rule(conversation, rule)
    }

    /// Adds a rule after the others, to a conversation's rules or the global ones (see
    /// [`Conversations::add_rule`]); false when that rule is already there.
    pub fn add_rule(&self, conversation: Option<&str>, rule: Rule) -> Result<bool, EngineError> {
        self.core.conversations.add_rule(conversation, rule)
    }

    /// Opens a conversation with the current defaults; an existing one is kept as it is.
    pub fn open_conversation(&self, id: &str) -> Result<ConversationSettings, EngineError> {
        self.core.conversations.open(id)
    }

    /// Changes one conversation's settings; they apply at its next call and become the default
    /// for new conversations. Other conversations keep theirs (seed 003).
    pub fn set_conversation_settings(
        &self,
        id: &str,
        settings: ConversationSettings,
    ) -> Result<(), EngineError> {
        self.core.conversations.set_settings(id, settings)
    }

    pub fn conversation(&self, id: &str) -> Option<Conversation> {
        self.core.conversations.get(id)
    }

    /// A conversation by id, or `NoSuchConversation`.
    pub fn existing_conversation(&self, id: &str) -> Result<Conversation, EngineError> {
        self.conversation(id)
            .ok_or_else(|| EngineError::NoSuchConversation(id.to_owned()))
    }

    /// The agent's call in `conversation`, which must exist: in an unknown one the call would
    /// be decided with the default settings, no conversation rules and no taint.
    pub async fn invoke_in_conversation(
        &self,
        conversation: &str,
        tool: String,
        input: Value,
    ) -> Result<Invocation, EngineError> {
        self.existing_conversation(conversation)?;
        Ok(self
            .invoke(Call {
                tool,
                actor: Actor::Agent,
                input,
                conversation: Some(conversation.to_owned()),
            })
            .await)
    }

    pub fn conversation_defaults(&self) -> ConversationSettings {
        self.core.conversations.defaults()
    }

    /// Sets what a conversation may reach. Only the user does this, from the conversation's
    /// scope settings; approving a call never does.
    pub fn set_scope(&self, id: &str, scope: Scope) -> Result<(), EngineError> {
        self.core.conversations.set_scope(id, scope)
    }

    /// Changes what a conversation may reach, on its scope as it stands (the user's tap on
    /// the conversation's scope settings; see [`Conversations::edit_scope`]).
    pub fn edit_scope(&self, id: &str, edit: impl FnOnce(&mut Scope)) -> Result<(), EngineError> {
        self.core.conversations.edit_scope(id, edit)
    }

    /// The folder a plugin's file reads are confined to (`host-fs-read`), when the app has a
    /// data directory.
    pub fn plugin_files_folder(&self, plugin: &str) -> Option<std::path::PathBuf> {
        self.core.invoker.plugin_files_folder(plugin)
    }

    /// Starts a turn: taint belongs to the turn that read untrusted content. Returns the turn's
    /// number.
    pub fn begin_turn(&self, id: &str) -> Result<u64, EngineError> {
        let turns = self.core.conversations.begin_turn(id)?;
        // seed 001: the notify budget is per turn.
        self.core.host.notifier.end_turn();
        Ok(turns)
    }

    /// Marks the current turn as having read untrusted content (see [`Conversations::taint`]).
    pub fn taint(&self, id: &str) -> Result<(), EngineError> {
        self.core.conversations.taint(id)
    }

    // ---- consent

    pub fn consent(&self) -> ConsentState {
        self.core.consent.get()
    }

    /// Records the first-run terms as accepted, at the current version.
    pub fn accept_terms(&self) -> Result<(), EngineError> {
        let now = self.core.clock.now_ms();
        Ok(self.core.consent.change(|c| {
            c.terms_version = Some(TERMS_VERSION);
            c.terms_accepted_at = Some(now);
        })?)
    }

    /// A first-run step after the terms done or skipped: the first run goes on to the next.
    /// The terms are accepted ([`Engine::accept_terms`]), never skipped.
    pub fn pass_setup_step(&self, step: SetupStep) -> Result<(), EngineError> {
        if step == SetupStep::Terms {
            return Err(EngineError::Invalid(
                "step: the terms cannot be skipped; accept them to go on".into(),
            ));
        }
        Ok(self.core.consent.change(|c| {
            c.setup_passed.insert(step);
        })?)
    }

    /// The engine's clock: what the screens count from (a code's resend wait).
    pub fn now_ms(&self) -> i64 {
        self.core.clock.now_ms()
    }

    /// The campus account (module `campus`): sign-in, sessions, requests.
    pub fn campus(&self) -> &Arc<Campus> {
        &self.core.campus
    }

    // ---- PKU harness Cloud (DESIGN.md §12)

    /// Makes a cloud account on `server` with this device as its first; returns the recovery
    /// code, which the caller shows once (it is kept nowhere).
    pub async fn cloud_setup(&self, server: &str) -> Result<String, CloudError> {
        self.core.host.cloud.setup(server).await
    }

    /// Joins the account whose recovery code the student typed.
    pub async fn cloud_join(&self, server: &str, code: &str) -> Result<(), CloudError> {
        self.core.host.cloud.join(server, code).await
    }

    /// The QR's payload another device scans to join this account: a one-time pairing token
    /// (ten minutes) and the account key. Shown, never kept.
    pub async fn cloud_pairing(&self) -> Result<String, CloudError> {
        self.core.host.cloud.pairing().await
    }

    /// Joins the account whose pairing QR was scanned.
    pub async fn cloud_join_paired(&self, payload: &str) -> Result<(), CloudError> {
        self.core.host.cloud.join_paired(payload).await
    }

    /// The account as the server counts it; none when this device has no cloud set up.
    pub async fn cloud_status(&self) -> Result<Option<CloudStatus>, CloudError> {
        self.core.host.cloud.status().await
    }

    /// The cloud address this build offers before one is set up (`Options::cloud_address`).
    pub fn cloud_offered_address(&self) -> Option<String> {
        self.core.host.cloud.offered().map(str::to_owned)
    }

    /// Removes another device from this device's cloud account (the 云端 screen's 移除).
    pub async fn cloud_remove_device(&self, key: &str) -> Result<(), CloudError> {
        self.core.host.cloud.remove_device(key).await
    }

    /// This device's cloud server and when it last wrote the app's backup (ms); none when no
    /// cloud is set up. Read from the device, with no request.
    pub fn cloud_kept(&self) -> Option<(String, Option<i64>)> {
        self.core.host.cloud.kept()
    }

    /// The app's own "Back up to the cloud" switch (issue 39.5); the shell shows
    /// [`backup::DISCLOSURE_ZH`] (or `_EN`) next to it.
    pub fn set_cloud_backup(&self, allowed: bool) -> Result<(), EngineError> {
        Ok(self.core.consent.change(|c| c.cloud_backup = allowed)?)
    }

    /// The backup's second choice, "连同对话内容": the conversations' histories go in it too.
    pub fn set_cloud_backup_histories(&self, included: bool) -> Result<(), EngineError> {
        Ok(self
            .core
            .consent
            .change(|c| c.cloud_backup_histories = included)?)
    }

    /// Writes the app's backup to the cloud, replacing the one there: the settings under their
    /// keys, the approved memories, the jobs and the conversations' titles. Nothing secret is in
    /// it: keys, sessions and passwords are in the keystore, which is never read for it.
    pub async fn cloud_backup(&self) -> Result<backup::Written, CloudError> {
        if !self.consent().cloud_backup {
            return Err(CloudError::Invalid(
                "the app's backup is off: turn on Settings → 云端 → 备份到云端 (harness cloud backup --allow)".into(),
            ));
        }
        let backup = self.gather_backup()?;
        self.core.host.cloud.write_backup(&backup).await
    }

    /// Writes the app's backup when the switch is on, a cloud is set up and something in it
    /// changed since this device last wrote it; the shell calls it when it wakes (`harness
    /// tick`), so a run of changes is written once. None when nothing was written.
    pub async fn cloud_backup_if_changed(&self) -> Result<Option<backup::Written>, CloudError> {
        let cloud = &self.core.host.cloud;
        if !self.consent().cloud_backup || cloud.ready().is_err() {
            return Ok(None);
        }
        let backup = self.gather_backup()?;
        if cloud.backup_unchanged(&backup) {
            return Ok(None);
        }
        cloud.write_backup(&backup).await.map(Some)
    }

    /// What the backup holds, in an order that changes only when they do.
    fn gather_backup(&self) -> Result<Backup, CloudError> {
        let conversations = self
            .core
            .conversations
            .list()
            .map_err(|e| CloudError::Invalid(e.to_string()))?;
        let memories = self
            .memories()
            .map_err(|e| CloudError::Invalid(e.to_string()))?;
        let histories = self.consent().cloud_backup_histories;
        let mut titles: Vec<String> = conversations
            .iter()
            .filter_map(|c| c.title.clone())
            .collect();
        titles.sort();
        let mut backed = Vec::new();
        for listed in conversations {
            let Some(c) = self.core.conversations.get(&listed.id) else {
                continue;
            };
            let history = if histories {
                self.core
                    .history
                    .all(&c.id)
                    .map_err(|e| CloudError::Invalid(e.to_string()))?
            } else {
                Vec::new()
            };
            backed.push(BackedConversation {
                id: c.id,
                title: listed.title,
                settings: c.settings,
                rules: c.rules.rules().to_vec(),
                scope_hosts: c.scope.hosts.clone(),
                scope_apps: c.scope.apps.clone(),
                // Counted only with the history they number, so that a turn alone does not
                // make a backup without histories differ.
                turns: if histories { c.turns } else { 0 },
                history,
            });
        }
        backed.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(Backup {
            settings: self.setting_values(),
            memories: memories
                .into_iter()
                .filter(|m| m.state == MemoryState::Active)
                .map(|m| m.text)
                .collect(),
            jobs: self
                .jobs()
                .into_iter()
                .map(|job| json!({ "spec": job.spec, "owner": job.owner, "pausedReason": job.paused_reason }))
                .collect(),
            conversation_titles: titles,
            conversations: backed,
            plugin_stores: self.consenting_stores(),
            cloud_plugins: self.consent().cloud.into_iter().collect(),
            ..Backup::default()
        })
    }

    /// Brings this account's backup to this device (one joined by the recovery code or a
    /// pairing QR). Each setting goes through [`parse_change`](crate::settings::parse_change),
    /// so a backup cannot set what the settings screen could not; one that would loosen a
    /// permission (DESIGN.md §3 8e) is left pending for the student, never applied. Memories,
    /// jobs and conversation titles this device already has are not added twice.
    pub async fn cloud_restore(&self) -> Result<Restored, CloudError> {
        let backup = self.core.host.cloud.read_backup().await?.ok_or_else(|| {
            CloudError::Invalid(
                "this account has no backup in the cloud: run harness cloud backup (Settings → 云端 → 备份到云端) on the device that has the data".into(),
            )
        })?;
        self.restore(backup)
            .map_err(|e| CloudError::Invalid(e.to_string()))
    }

    /// The values restores left pending, oldest first, for the 云端 screen: each applied or
    /// dismissed by the student, never by a restore.
    pub fn cloud_pending(&self) -> Result<Vec<(String, Value)>, EngineError> {
        Ok(self.core.settings.restore_pending()?)
    }

    /// Makes a pending restored value, as the student's own change: a setting through
    /// [`parse_change`](crate::settings::parse_change) and [`Engine::change_setting`], as the
    /// settings screen makes it; a conversation's preset or rules as its own screens set them.
    /// Then it is no longer pending.
    pub fn apply_cloud_pending(&self, key: &str) -> Result<(), EngineError> {
        let Some((_, value)) = self.cloud_pending()?.into_iter().find(|(k, _)| k == key) else {
            return Err(EngineError::Invalid(format!(
                "{key}: nothing restored is pending under this key"
            )));
        };
        let invalid = |e: serde_json::Error| EngineError::Invalid(format!("{key}: {e}"));
        let conversation = key
            .strip_prefix("conversations.")
            .and_then(|rest| rest.rsplit_once('.'));
        match conversation {
            Some((id, "preset")) => {
                let mut settings = self.existing_conversation(id)?.settings;
                settings.preset = serde_json::from_value(value).map_err(invalid)?;
                self.set_conversation_settings(id, settings)?;
            }
            Some((id, "rules")) => {
                self.existing_conversation(id)?;
                let rules: Vec<Rule> = serde_json::from_value(value).map_err(invalid)?;
                self.core.conversations.set_conversation_rules(id, rules)?;
            }
            _ => self.change_setting(crate::settings::parse_change(key, &value)?)?,
        }
        self.dismiss_cloud_pending(key)
    }

    /// Leaves a pending restored value unmade and no longer pending.
    pub fn dismiss_cloud_pending(&self, key: &str) -> Result<(), EngineError> {
        Ok(self
            .core
            .settings
            .change_restore_pending(|p| p.retain(|(k, _)| k != key))?)
    }

    /// The store of each plugin whose "Allow cloud" is on (DESIGN.md §12: the backup holds
    /// consenting plugins' stores), read through the gate its calls use; a plugin without a
    /// store, or with an empty one, has none.
    fn consenting_stores(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        self.consent()
            .cloud
            .into_iter()
            .filter_map(|plugin| {
                let entries = self
                    .core
                    .invoker
                    .with_plugin_store(&plugin, |store| store.entries())?
                    .ok()?
                    .ok()?;
                (!entries.is_empty()).then_some((plugin, entries))
            })
            .collect()
    }

    /// Puts a backup's plugin stores back, key by key through each plugin's own gate (its
    /// quota and caps hold); a key this device holds a value for keeps it.
    fn restore_stores(
        &self,
        stores: BTreeMap<String, BTreeMap<String, String>>,
        out: &mut Restored,
    ) {
        for (plugin, entries) in stores {
            let put = self.core.invoker.with_plugin_store(&plugin, |store| {
                let mut put = 0;
                for (key, value) in &entries {
                    if !store.get(key).is_empty() {
                        continue;
                    }
                    match store.set(key, value).strip_prefix("error: ") {
                        None => put += 1,
                        Some(why) => return Err(why.to_owned()),
                    }
                }
                Ok(put)
            });
            let what = format!("plugin \"{plugin}\"'s data");
            match put {
                None => out
                    .refused
                    .push((what, "the plugin is not installed here".into())),
                Some(Ok(Ok(put))) => out.plugin_values += put,
                Some(Ok(Err(why)) | Err(why)) => out.refused.push((what, why)),
            }
        }
    }

    fn restore(&self, backup: Backup) -> Result<Restored, EngineError> {
        let out = self.restore_parts(backup)?;
        // Kept for the 云端 screen: a value pending again replaces the one kept under its key.
        self.core.settings.change_restore_pending(|kept| {
            for (key, value) in &out.pending {
                match kept.iter_mut().find(|(k, _)| k == key) {
                    Some(slot) => slot.1 = value.clone(),
                    None => kept.push((key.clone(), value.clone())),
                }
            }
        })?;
        Ok(out)
    }

    fn restore_parts(&self, backup: Backup) -> Result<Restored, EngineError> {
        let mut out = Restored::default();
        let current = self.setting_values();
        for (key, value) in backup.settings {
            if current.iter().any(|(k, v)| *k == key && *v == value) {
                continue;
            }
            let change = match crate::settings::parse_change(&key, &value) {
                Ok(change) => change,
                Err(e) => {
                    out.refused.push((key, e.message));
                    continue;
                }
            };
            if self.loosens(&change) {
                out.pending.push((key, value));
                continue;
            }
            match self.change_setting(change) {
                Ok(()) => out.applied.push(key),
                Err(e) => out.refused.push((key, e.to_string())),
            }
        }
        let known: Vec<String> = self.memories()?.into_iter().map(|m| m.text).collect();
        for text in backup.memories {
            if !known.contains(&text) {
                self.write_memory(&text, None, None, false)?;
                out.memories += 1;
            }
        }
        out.jobs = self.restore_jobs(backup.jobs, &mut out.refused);
        self.restore_stores(backup.plugin_stores, &mut out);
        let allowed = self.consent().cloud;
        out.cloud_consents_pending = backup
            .cloud_plugins
            .into_iter()
            .filter(|p| self.core.plugins.contains(p) && !allowed.contains(p))
            .collect();
        let titles: Vec<String> = self
            .core
            .conversations
            .list()?
            .into_iter()
            .filter_map(|c| c.title)
            .collect();
        if !backup.conversations.is_empty() {
            for c in backup.conversations {
                self.restore_conversation(c, &titles, &mut out)?;
            }
            return Ok(out);
        }
        // A backup written before the conversations were in it: their titles only.
        for title in backup.conversation_titles.iter().rev() {
            if !titles.contains(title) {
                let id = self.core.conversations.create()?;
                self.core.conversations.rename(&id, title)?;
                out.conversations += 1;
            }
        }
        Ok(out)
    }

    /// Brings back one conversation of the backup under its id, with its history when the
    /// backup holds it. Nothing is loosened without the student (DESIGN.md §3 8e): a
    /// `skip_all` preset the defaults here do not have comes back as the defaults' preset, and
    /// allow rules are left out; each is left pending under `conversations.<id>.preset` or
    /// `conversations.<id>.rules`. One this device has already (by id, or a conversation
    /// without history by its title, from a restore of an older backup) is not added twice.
    fn restore_conversation(
        &self,
        c: BackedConversation,
        titles: &[String],
        out: &mut Restored,
    ) -> Result<(), EngineError> {
        let by_title = c.history.is_empty()
            && c.title.as_ref().is_some_and(|t| titles.contains(t))
            && self.core.conversations.get(&c.id).is_none();
        if by_title {
            return Ok(());
        }
        let mut settings = c.settings.clone();
        let defaults = self.core.conversations.defaults();
        let mut pending = Vec::new();
        if settings.preset == Preset::SkipAll && defaults.preset != Preset::SkipAll {
            settings.preset = defaults.preset;
            pending.push((
                format!("conversations.{}.preset", c.id),
                json!(Preset::SkipAll),
            ));
        }
        let strict: Vec<Rule> = c
            .rules
            .iter()
            .filter(|r| r.kind != RuleKind::Allow)
            .cloned()
            .collect();
        if strict.len() != c.rules.len() {
            let all = serde_json::to_value(&c.rules).expect("rules serialise");
            pending.push((format!("conversations.{}.rules", c.id), all));
        }
        // A scope only narrows what the conversation reaches: it comes back as it was, but for
        // an entry the gates would not read (a crafted backup's).
        let scope = Scope {
            roots: Vec::new(),
            hosts: c
                .scope_hosts
                .iter()
                .filter(|h| crate::gates::check_scope_host(h).is_ok())
                .cloned()
                .collect(),
            apps: c.scope_apps.clone(),
        };
        if !self.core.conversations.restore(
            &c.id,
            c.title.as_deref(),
            settings,
            strict,
            scope,
            c.turns,
        )? {
            return Ok(());
        }
        self.core.history.restore(&c.id, &c.history)?;
        out.conversations += 1;
        out.messages += c.history.len();
        out.pending.extend(pending);
        Ok(())
    }

    /// Adds the backup's jobs this device lacks, as the scheduler checks any job; returns how
    /// many. An agent's job comes back without its conversation, which is the other device's.
    fn restore_jobs(&self, jobs: Vec<Value>, refused: &mut Vec<(String, String)>) -> usize {
        let have: Vec<(Value, Owner)> = self
            .jobs()
            .into_iter()
            .map(|j| (json!(j.spec), j.owner))
            .collect();
        let mut added = 0;
        for job in jobs {
            let name = format!("job \"{}\"", job["spec"]["name"].as_str().unwrap_or("?"));
            let owner = match serde_json::from_value(job["owner"].clone()) {
                Ok(Owner::Plugin { plugin, .. }) if !self.core.plugins.contains(&plugin) => {
                    refused.push((
                        name,
                        format!("its plugin \"{plugin}\" is not installed here"),
                    ));
                    continue;
                }
                Ok(Owner::Plugin { plugin, .. }) => Owner::Plugin {
                    plugin,
                    conversation: None,
                },
                Ok(Owner::User) => Owner::User,
                Err(e) => {
                    refused.push((name, format!("owner: {e}")));
                    continue;
                }
            };
            let same_owner = |o: &Owner| match (o, &owner) {
                (Owner::User, Owner::User) => true,
                (Owner::Plugin { plugin: a, .. }, Owner::Plugin { plugin: b, .. }) => a == b,
                _ => false,
            };
            if have
                .iter()
                .any(|(spec, o)| *spec == job["spec"] && same_owner(o))
            {
                continue;
            }
            let paused = job["pausedReason"].as_str();
            match self.add_job(&job["spec"], owner.clone()) {
                Ok(restored) => {
                    added += 1;
                    if let Some(reason) = paused
                        && let Err(e) = self.pause_job(restored.id, reason)
                    {
                        refused.push((name, format!("added, but not paused as it was: {e}")));
                    }
                }
                Err(e) => refused.push((name, e.to_string())),
            }
        }
        added
    }

    /// The plugin's "Allow cloud" switch.
    pub fn set_cloud_consent(&self, plugin: &str, allowed: bool) -> Result<(), EngineError> {
        if !self.core.plugins.contains(plugin) {
            return Err(EngineError::NoSuchPlugin(plugin.to_owned()));
        }
        Ok(self.core.consent.change(|c| {
            if allowed {
                c.cloud.insert(plugin.to_owned());
            } else {
                c.cloud.remove(plugin);
            }
        })?)
    }

    /// Checked before every PKU harness Cloud call a plugin makes: without the plugin's cloud
    /// consent the call fails `consent_required`.
    pub fn check_cloud(&self, plugin: &str) -> Result<(), ConsentError> {
        self.core.consent.check_cloud(plugin)
    }

    /// The shell reports a system permission's state.
    pub fn report_permission(
        &self,
        permission: Permission,
        state: PermissionState,
    ) -> Result<(), EngineError> {
        self.core
            .consent
            .change(|c| c.set_permission(permission, state))?;
        // The scheduler's alarm is exact only while the exact-alarm permission is granted.
        self.rearm_wake();
        Ok(())
    }

    /// The shell's whole report of consent: the terms (when `terms_accepted`, recorded as
    /// accepted now; acceptance is never withdrawn here) and what the phone provides (see
    /// [`ConsentState::provide`]), written in one transaction.
    pub fn report_consent(
        &self,
        terms_accepted: bool,
        met: Vec<String>,
    ) -> Result<(), EngineError> {
        if met.iter().any(|m| m == "campus-session") {
            // DESIGN.md §4: met by the sessions themselves, never by a report.
            return Err(EngineError::Invalid(
                "met: campus-session is not the phone's to report; the student signs in on the \
                 campus account screen"
                    .into(),
            ));
        }
        let now = self.core.clock.now_ms();
        self.core.consent.change(|c| {
            if terms_accepted {
                c.terms_version = Some(TERMS_VERSION);
                c.terms_accepted_at = Some(now);
            }
            c.provide(met);
        })?;
        // The scheduler's alarm is exact only while the exact-alarm permission is granted.
        self.rearm_wake();
        Ok(())
    }

    /// Asks `read` for the state of every system permission and records what it says; a
    /// permission `read` cannot tell keeps its recorded state. `read` is called before anything
    /// is locked, so it may call back into the engine. The first failure is returned after the
    /// others were recorded.
    pub fn refresh_permissions<E: From<EngineError>>(
        &self,
        mut read: impl FnMut(Permission) -> Result<PermissionState, E>,
    ) -> Result<(), E> {
        let mut failure = None;
        let mut states = Vec::new();
        for permission in Permission::ALL {
            match read(permission) {
                Ok(state) => states.push((permission, state)),
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        for (permission, state) in states {
            self.report_permission(permission, state)?;
        }
        failure.map_or(Ok(()), Err)
    }

    /// The shell reports the phone's other capabilities (`nfc`, `camera`, …).
    pub fn report_capabilities(&self, capabilities: Vec<String>) -> Result<(), EngineError> {
        Ok(self
            .core
            .consent
            .change(|c| c.capabilities = capabilities.into_iter().collect())?)
    }

    /// Whether the shell may show the system prompt for `permission` now: only for a tap.
    pub fn request_permission(
        &self,
        permission: Permission,
        actor: Actor,
    ) -> Result<(), ConsentError> {
        match actor {
            Actor::User => Ok(()),
            _ => Err(ConsentError::PromptNeedsATap(permission.requirement())),
        }
    }

    // ---- settings

    pub fn settings(&self) -> Settings {
        self.core.settings.get()
    }

    pub fn preferences(&self, plugin: &str) -> Option<Value> {
        self.core.plugins.preferences(plugin)
    }

    /// Whether a change loosens a permission: a mode to a less strict value, a plugin turned
    /// on, a rule removed or an allow rule added, the model endpoint changed (DESIGN.md §3 8e).
    pub fn loosens(&self, change: &Change) -> bool {
        self.core.loosens(change)
    }

    /// Applies a checked change, from the settings screen or the settings plugin.
    pub fn change_setting(&self, change: Change) -> Result<(), EngineError> {
        self.core.apply(change)
    }

    /// Puts a checked `model.endpoint` or `model.name` change in effect without saving it, so
    /// that a shell can try a provider before keeping it: turns use it from now on, and it is
    /// saved by [`Engine::save_settings_in_effect`] or gone when the data directory is opened
    /// again. Any other change is refused: it is made with [`Engine::change_setting`].
    pub fn use_setting_for_now(&self, change: Change) -> Result<(), EngineError> {
        match change {
            Change::ModelEndpoint(v) => self.core.settings.use_for_now(|s| s.model.endpoint = v),
            Change::ModelName(v) => self.core.settings.use_for_now(|s| s.model.name = v),
            _ => {
                return Err(EngineError::Invalid(
                    "only model.endpoint and model.name can be used before they are saved".into(),
                ));
            }
        }
        Ok(())
    }

    /// Saves what [`Engine::use_setting_for_now`] put in effect.
    pub fn save_settings_in_effect(&self) -> Result<(), EngineError> {
        Ok(self.core.settings.save_in_effect()?)
    }

    /// Every setting under the key [`parse_change`](crate::settings::parse_change) takes, with
    /// its value in effect: the app's settings, each plugin's switch, modes and preferences
    /// (for a plugin that has them), and the global rules, in the order of their keys. Each
    /// pair parses back as a change.
    pub fn setting_values(&self) -> Vec<(String, Value)> {
        let mut values = self.settings().keyed();
        for view in self.plugins() {
            let id = &view.plugin.id;
            values.push((format!("plugins.{id}.enabled"), json!(view.enabled)));
            for (effect, mode, _) in &view.modes {
                values.push((format!("plugins.{id}.modes.{effect}"), json!(mode.as_str())));
            }
            if view.plugin.preferences.is_some() {
                let stored = self.preferences(id).unwrap_or_else(|| json!({}));
                values.push((format!("plugins.{id}.preferences"), stored));
            }
        }
        let rules = serde_json::to_value(self.rules()).expect("rules serialise");
        values.push(("rules".to_owned(), rules));
        values.sort_by(|(a, _), (b, _)| a.cmp(b));
        values
    }

    // ---- memories

    /// Saves a memory. One the agent writes in a tainted turn waits for the user's approval.
    pub fn write_memory(
        &self,
        text: &str,
        conversation: Option<&str>,
        turn: Option<u64>,
        tainted: bool,
    ) -> Result<MemoryRow, EngineError> {
        self.core.memories.write(text, conversation, turn, tainted)
    }

    pub fn memory(&self, id: i64) -> Result<MemoryRow, EngineError> {
        self.core.memories.get(id)
    }

    pub fn memories(&self) -> Result<Vec<MemoryRow>, EngineError> {
        self.core.memories.all()
    }

    /// The memories in effect: what the agent is told it remembers.
    pub fn memories_in_effect(&self) -> Result<Vec<String>, EngineError> {
        self.core.memories.in_effect()
    }

    /// The user approves (or rejects) a pending memory.
    pub fn decide_memory(&self, id: i64, approve: bool) -> Result<MemoryRow, EngineError> {
        self.core.memories.decide(id, approve)
    }

    // ---- documents

    /// A document the user attached from the file picker, read into text on the phone. Only
    /// the shell calls this, after the user chose the file on a screen: no tool can.
    pub fn attach_document(
        &self,
        conversation: &str,
        name: &str,
        text: &str,
    ) -> Result<i64, EngineError> {
        self.core
            .conversations
            .attach_document(conversation, name, text)
    }

    pub fn documents(&self, conversation: &str) -> Result<Vec<(i64, String, String)>, EngineError> {
        self.core.conversations.documents(conversation)
    }

    // ---- secrets

    /// Stores a secret in the platform keystore. Only a shell's screen calls this: secrets are
    /// uiOnly, and never reach SQLite, logs or the audit.
    pub fn set_secret(&self, key: &str, value: &str) -> Result<(), EngineError> {
        Ok(self.core.secrets.set(key, value)?)
    }

    pub fn delete_secret(&self, key: &str) -> Result<(), EngineError> {
        Ok(self.core.secrets.delete(key)?)
    }

    pub fn has_secret(&self, key: &str) -> Result<bool, EngineError> {
        Ok(self.core.secrets.get(key)?.is_some())
    }

    /// The API key of the configured model provider: each provider keeps its own (issue 42;
    /// see [`crate::agent::providers::api_key`]). Only the core reads it, to send it.
    pub(crate) fn model_api_key(&self) -> Result<Option<String>, EngineError> {
        let endpoint = self.settings().model.endpoint;
        Ok(crate::agent::providers::api_key(
            &*self.core.secrets,
            &endpoint,
        )?)
    }

    /// Stores `key` as the configured model provider's, or removes that provider's key. The
    /// single key kept before keys were per provider is moved first, so it cannot replace
    /// this one later.
    pub fn set_model_api_key(&self, key: Option<&str>) -> Result<(), EngineError> {
        self.model_api_key()?;
        let provider = crate::agent::providers::for_endpoint(&self.settings().model.endpoint);
        let name = crate::agent::providers::key_name(provider.id);
        match key {
            Some(key) => self.set_secret(&name, key),
            None => self.delete_secret(&name),
        }
    }

    // ---- audit

    /// The newest `limit` audit rows, oldest first.
    /// The audit screen's rows: the newest [`crate::audit::SHOWN_ROWS`], oldest first.
    pub fn audit_log(&self) -> Result<Vec<AuditRow>, EngineError> {
        Ok(self.core.audit.shown()?)
    }

    pub fn audit(&self, limit: usize) -> Result<Vec<AuditRow>, EngineError> {
        Ok(self.core.audit.read(limit)?)
    }

    // ---- the invoke path

    /// The tools the model is offered in a conversation (see [`Invoker::model_tools`]).
    pub fn model_tools(&self, conversation: Option<&str>) -> Vec<ModelTool> {
        self.core.invoker.model_tools(conversation)
    }

    /// Decides a call without running it or asking anyone: what `invoke` would do first.
    pub fn decide(&self, call: &Call) -> Decision {
        self.core.invoker.decide(call)
    }

    /// The one invoke path.
    pub async fn invoke(&self, call: Call) -> Invocation {
        // A tool the student tapped may ask for the exact-alarm permission
        // (`services.notify.fix`): the scheduler's alarm is exact only while it is granted.
        let exact = || self.core.consent.get().permission(Permission::ExactAlarm);
        let before = (call.actor == Actor::User).then(exact);
        let invocation = self.core.invoker.invoke(call).await;
        if before.is_some_and(|before| exact() != before) {
            self.rearm_wake();
        }
        invocation
    }

    /// Every installed tool, for the call-tool gate: only bundled ones may be called.
    pub fn tool_catalog(&self) -> ToolCatalog {
        self.core.plugins.tool_catalog()
    }

    /// The plugins' context contributions, folded into the system prompt once per turn.
    pub fn render_context(&self) -> String {
        self.core.host.context.render()
    }

    /// Lines the user must see (notifications, context changes, tool-call disclosures), in order.
    pub fn drain_host_lines(&self) -> Vec<crate::gates::HostLine> {
        self.core.host.outbox.drain()
    }

    // ---- data sources

    /// Every enabled plugin's data sources.
    pub fn data_sources(&self) -> Vec<SourceInfo> {
        self.core.plugins.data_sources()
    }

    /// A widget's read of `plugin`'s data source `key`: the cached value while fresh, else one
    /// refresh through the invoke path as a scheduled read.
    pub async fn use_tool_data(&self, plugin: &str, key: &str) -> Result<SourceRead, SourceError> {
        self.core.sources.read(plugin, key).await
    }

    /// The value last read for `plugin`'s data source `key`, fresh or not, without a call.
    pub fn last_tool_data(&self, plugin: &str, key: &str) -> Option<Value> {
        self.core.sources.last_value(plugin, key)
    }

    // ---- the scheduler

    /// Gives the scheduler the agent loop that runs agent jobs.
    pub fn set_job_runner(&self, runner: Arc<dyn JobRunner>) {
        self.core.scheduler.set_runner(runner)
    }

    /// Adds a job (see [`Scheduler::add`]).
    pub fn add_job(&self, spec: &Value, owner: Owner) -> Result<Job, SchedulerError> {
        self.core.scheduler.add(spec, owner)
    }

    /// Every job, by id.
    pub fn jobs(&self) -> Vec<Job> {
        self.core.scheduler.all()
    }

    pub fn job(&self, id: i64) -> Option<Job> {
        self.core.scheduler.get(id)
    }

    pub fn remove_job(&self, id: i64) -> Result<(), SchedulerError> {
        self.core.scheduler.remove(id)
    }

    /// Pauses a job; `reason` is shown with it.
    pub fn pause_job(&self, id: i64, reason: &str) -> Result<Job, SchedulerError> {
        self.core.scheduler.pause(id, reason)
    }

    /// Resumes a paused job from now on (see [`Scheduler::resume`]).
    pub fn resume_job(&self, id: i64) -> Result<Job, SchedulerError> {
        self.core.scheduler.resume(id)
    }

    /// The earliest due instant of an active job not running now: when the shell should wake.
    pub fn next_wake_ms(&self) -> Option<i64> {
        self.core.scheduler.next_wake_ms()
    }

    /// The ids of the jobs `run_due(now_ms)` would run.
    pub fn due_jobs(&self, now_ms: i64) -> Vec<i64> {
        self.core.scheduler.due_jobs(now_ms)
    }

    /// Tells the shell the next wake time when it changed (see [`Scheduler::rearm_wake`]).
    pub fn rearm_wake(&self) {
        self.core.scheduler.rearm_wake()
    }

    /// The tools a scheduled run can run, as the model is offered them.
    pub fn scheduler_tools(&self) -> Vec<ModelTool> {
        self.core.scheduler.tools()
    }

    /// Runs every job due at `now_ms` (see [`Scheduler::run_due`]).
    /// Runs what is due at `now_ms`; the shell is told of each notification a run produced,
    /// outside every lock, to post it.
    pub async fn run_due(&self, now_ms: i64) -> Result<Vec<RunReport>, SchedulerError> {
        let reports = self.core.scheduler.run_due(now_ms).await?;
        for report in &reports {
            let notices = report.outcome.notification().into_iter();
            for notification in notices.chain(report.notice.as_ref()) {
                self.core.events.emit(Event::Notification {
                    job: report.job,
                    title: notification.title.clone(),
                    body: notification.body.clone(),
                });
            }
        }
        Ok(reports)
    }

    /// What the shells call when the phone wakes them (Android's alarm, iOS's background
    /// refresh, `harness tick`): the jobs due at `now_ms`, then the app's backup when its switch
    /// is on and something in it changed since it was written (issue 39.5, "written after
    /// changes"), so both shells get it from the core. A backup that could not be written
    /// (offline) is reported, not an error of the wake.
    pub async fn wake(&self, now_ms: i64) -> Result<Wake, SchedulerError> {
        let runs = self.run_due(now_ms).await?;
        let backup = self.cloud_backup_if_changed().await;
        Ok(Wake { runs, backup })
    }
}

/// What [`Engine::wake`] did.
#[derive(Debug)]
pub struct Wake {
    pub runs: Vec<RunReport>,
    /// The backup written (none when the switch is off, no cloud is set up or nothing
    /// changed), or why it could not be.
    pub backup: Result<Option<backup::Written>, CloudError>,
}

impl samples::Installer for Engine {
    fn install_document(&self, text: &str, source: &str) -> Result<String, EngineError> {
        Engine::install_document(self, text, source)
    }

    fn install_remote(
        &self,
        server: &str,
        title: &str,
        tools: &[McpTool],
        url: &str,
    ) -> Result<String, EngineError> {
        Engine::install_remote(self, server, title, tools, url)
    }
}

impl Core {
    fn plugins(&self) -> Vec<PluginView> {
        let consent = self.consent.get();
        self.plugins.views(&consent)
    }

    /// Removes what a bundled plugin the app no longer ships left behind — its jobs and its
    /// store — and says so in the audit, one row per plugin.
    fn retire(&self, retired: &[String]) -> Result<(), EngineError> {
        for plugin in retired {
            let mut jobs = 0;
            for job in self.scheduler.all() {
                let owned = matches!(&job.owner, crate::scheduler::Owner::Plugin { plugin: p, .. } if p == plugin);
                let checks = matches!(&job.spec.task, crate::scheduler::spec::Task::Check(c) if crate::registry::plugin_id(&c.tool) == plugin);
                if owned || checks {
                    self.scheduler
                        .remove(job.id)
                        .map_err(|e| EngineError::Invalid(e.to_string()))?;
                    jobs += 1;
                }
            }
            self.plugins.delete_store(plugin);
            self.audit.append(&crate::store::audit::AuditRow {
                seq: 0,
                at_ms: self.clock.now_ms(),
                actor: "app".into(),
                conversation: None,
                tool: plugin.clone(),
                effect: None,
                event: "removed".into(),
                detail: Some(format!(
                    "this version of the app no longer ships plugin \"{plugin}\"; it was removed with its modes, preferences and {jobs} job(s)"
                )),
                step: None,
                rule: None,
                input_digest: None,
            })?;
        }
        Ok(())
    }

    /// Says in the audit, one row per plugin, that a shipped plugin took over the row of an
    /// earlier version's sample ([`crate::installed::REPLACED`]) and which modes it dropped.
    fn replaced(&self, replaced: &[crate::installed::Replaced]) -> Result<(), EngineError> {
        for r in replaced {
            let title = self
                .plugins
                .read(|s| s.registry.plugin(&r.plugin).map(|p| p.title.clone()))
                .unwrap_or_else(|| r.plugin.clone());
            let kept = match r.dropped.is_empty() {
                true => "it kept its jobs, preferences and modes".to_owned(),
                false => format!(
                    "it kept its jobs and preferences, and the modes looser than its defaults were dropped: {}",
                    r.dropped
                        .iter()
                        .map(|(effect, mode, default)| format!(
                            "{} {} → {}",
                            effect.as_str(),
                            mode.as_str(),
                            default.as_str()
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            self.audit.append(&crate::store::audit::AuditRow {
                seq: 0,
                at_ms: self.clock.now_ms(),
                actor: "app".into(),
                conversation: None,
                tool: r.plugin.clone(),
                effect: None,
                event: "replaced".into(),
                detail: Some(format!(
                    "plugin \"{}\" is now the app's {title} in place of the sample of earlier versions; {kept}",
                    r.plugin
                )),
                step: None,
                rule: None,
                input_digest: None,
            })?;
        }
        Ok(())
    }
}

/// The settings plugin's view of the core: a change reaches the settings, the installed
/// plugins or the rules, one owner at a time.
impl Core {
    /// Agent jobs run with the turn loop once a model provider is configured.
    fn register_agent_jobs(&self) {
        self.scheduler
            .set_runner(Arc::new(AgentJobs(Arc::downgrade(&self.agent))));
    }
}

impl SettingsControl for Core {
    fn settings(&self) -> Settings {
        self.settings.get()
    }

    fn plugins(&self) -> Vec<PluginView> {
        Core::plugins(self)
    }

    fn loosens(&self, change: &Change) -> bool {
        match change {
            Change::PluginMode {
                plugin,
                effect,
                mode,
            } => self
                .plugins
                .read(|state| match state.installed.get(plugin) {
                    Some(installed) => *mode < state.modes.effective(&installed.plugin, *effect).0,
                    None => false,
                }),
            Change::PluginEnabled { plugin, enabled } => {
                *enabled
                    && self
                        .plugins
                        .read(|state| state.installed.get(plugin).is_some_and(|i| !i.enabled))
            }
            // DESIGN.md §3 8e: only rules kept as they were, in their order, with deny or ask
            // rules added after them, leave the permission system as strict; a rule removed,
            // reordered or changed (widened) or an allow rule added is protected.
            Change::Rules(next) => {
                let current = self.conversations.rules();
                !next.starts_with(&current)
                    || next[current.len()..]
                        .iter()
                        .any(|r| r.kind == crate::policy::RuleKind::Allow)
            }
            // A plugin's preferences may widen what it does for the agent (DESIGN.md §3 8e).
            Change::PluginPreferences { .. } => true,
            Change::ModelEndpoint(endpoint) => *endpoint != self.settings.get().model.endpoint,
            // A campus host added is one more place the session may be sent; another official
            // host makes its documents official, with their declared defaults (DESIGN.md §2).
            // Removing a campus host only narrows.
            Change::CampusHosts(next) => {
                let current = self.settings.get().campus.hosts;
                next.iter().any(|h| !current.contains(h))
            }
            Change::OfficialHost(host) => *host != self.settings.get().official_host,
            // A raised guard lets the agent go further without the user: the user confirms it.
            Change::AgentLimit { key, value } => {
                let mut raised = self.settings.get().agent;
                let before = raised.clone();
                raised.set(key, *value);
                raised.max_model_requests > before.max_model_requests
                    || raised.max_tool_calls > before.max_tool_calls
                    || raised.max_tokens_per_turn > before.max_tokens_per_turn
            }
            // DESIGN.md §3 8e: a raised money limit lets the agent pay more.
            Change::MoneyLimit { key, value } => {
                let mut raised = self.settings.get().money;
                let before = raised.clone();
                raised.set(key, *value);
                raised.per_payment_yuan > before.per_payment_yuan
                    || raised.per_day_yuan > before.per_day_yuan
            }
            // A shorter undo window leaves the student less time to take a post back.
            Change::Wait { key, value } if key == "public.undoSeconds" => {
                *value < self.settings.get().public.undo_seconds
            }
            _ => false,
        }
    }

    fn open_screen(&self, screen: &str) {
        self.events.emit(Event::OpenScreen {
            screen: screen.to_owned(),
        });
    }

    fn apply(&self, change: Change) -> Result<(), EngineError> {
        let app = |f: &dyn Fn(&mut Settings)| -> Result<(), EngineError> {
            Ok(self.settings.change(|s| f(s))?)
        };
        match change {
            Change::Appearance(v) => app(&|s| s.appearance = v),
            Change::Language(v) => app(&|s| s.language = v),
            Change::TimeZone(v) => app(&|s| s.time_zone = v.clone()),
            Change::ModelName(v) => app(&|s| s.model.name = v.clone()),
            Change::ModelTemperature(v) => app(&|s| s.model.temperature = v),
            Change::ModelMaxTokens(v) => app(&|s| s.model.max_tokens = v),
            Change::ModelContextTokens(v) => app(&|s| s.model.context_tokens = v),
            Change::ModelMonthlyCap(v) => app(&|s| s.model.monthly_cap_yuan = v),
            Change::ModelPrice(v) => app(&|s| s.model.price_yuan_per_million = v),
            Change::ModelEndpoint(v) => {
                app(&|s| s.model.endpoint = v.clone())?;
                self.register_agent_jobs();
                Ok(())
            }
            Change::AgentLimit { key, value } => app(&|s| s.agent.set(&key, value)),
            Change::MoneyLimit { key, value } => app(&|s| s.money.set(&key, value)),
            Change::Wait { key, value } => app(&|s| match key.as_str() {
                "public.undoSeconds" => s.public.undo_seconds = value,
                _ => s.approvals.timeout_minutes = value,
            }),
            Change::PluginEnabled { plugin, enabled } => self
                .plugins
                .set_enabled(&plugin, enabled)
                .map_err(|e| named(&format!("plugins.{plugin}.enabled"), e)),
            Change::PluginMode {
                plugin,
                effect,
                mode,
            } => self
                .plugins
                .set_mode(&plugin, effect, mode)
                .map_err(|e| named(&format!("plugins.{plugin}.modes.{effect}"), e)),
            Change::PluginPreferences { plugin, value } => {
                self.plugins.set_preferences(&plugin, value)
            }
            Change::Rules(rules) => self
                .conversations
                .set_rules(rules)
                .map_err(|e| named("rules", e)),
            Change::CampusHosts(hosts) => app(&|s| s.campus.hosts = hosts.clone()),
            Change::SemesterStart(date) => app(&|s| s.campus.semester_start = date.clone()),
            Change::OfficialHost(host) => app(&|s| s.official_host = host.clone()),
            Change::TodayTiles(tiles) => {
                let offered: Vec<String> = self.plugins.read(|state| {
                    state
                        .registry
                        .plugins()
                        .filter(|p| state.installed.contains_key(&p.id))
                        .flat_map(|p| p.data_sources.iter().map(|d| format!("{}.{}", p.id, d.key)))
                        .collect()
                });
                // A tile kept whose plugin is gone stays (Today says so, and offers its
                // removal); only a tile added must name a data source a plugin offers.
                let kept = self.settings.get().today.tiles;
                let added = |t: &&String| !kept.contains(t);
                if let Some(unknown) = tiles.iter().filter(added).find(|t| !offered.contains(t)) {
                    return Err(SettingsError::new(
                        "today.tiles",
                        format!(
                            "\"{unknown}\" is no installed plugin's data source; use one of {}",
                            offered.join(", ")
                        ),
                    )
                    .into());
                }
                app(&|s| s.today.tiles = tiles.clone())
            }
        }
    }
}

fn named(key: &str, e: EngineError) -> EngineError {
    match e {
        EngineError::Store(_) => e,
        other => SettingsError::new(key, other.to_string()).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Answer;

    struct Deny;

    #[async_trait::async_trait]
    impl ApprovalBroker for Deny {
        async fn ask(&self, _prompt: crate::invoke::Prompt) -> Answer {
            Answer::Deny
        }
    }

    #[test]
    fn a_stored_mode_with_an_unknown_effect_stops_the_open_and_names_the_row() {
        let dir = tempfile::tempdir().unwrap();
        drop(Engine::open(dir.path(), Options::new(Arc::new(Deny))).unwrap());
        let store = Store::open(dir.path()).unwrap();
        store
            .write(|tx| {
                tx.execute_batch(
                    "PRAGMA ignore_check_constraints = ON;
                     INSERT INTO modes (plugin, effect, mode) VALUES ('settings', 'cash', 'auto');",
                )?;
                Ok(())
            })
            .unwrap();
        drop(store);
        let err = Engine::open(dir.path(), Options::new(Arc::new(Deny)))
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "stored data is not valid: modes row (plugin \"settings\", effect \"cash\"): unknown effect \"cash\""
        );
    }
}
