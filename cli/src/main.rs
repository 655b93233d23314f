//! `harness`: the terminal shell over the core — the demo, the conformance runner, and views of
//! the plugins and their modes.

#[macro_use]
mod output;

mod browser;
mod campus;
mod chat;
mod cloud;
mod conversations;
mod demo;
mod elicit;
mod jobs;
mod model;
mod open;
mod plugins;
mod script;
mod secrets;
mod state;
mod tap;
mod tools;
mod usage;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use harness_core::policy::Answer;

#[derive(Parser)]
#[command(
    name = "harness",
    version,
    about = "The PKU harness core, from a terminal"
)]
struct Cli {
    /// The data directory to use, before or after the command (default: $HARNESS_DATA_DIR,
    /// else $XDG_DATA_HOME/pku-harness, else ~/.local/share/pku-harness; the demo uses its
    /// `demo` folder).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play a scripted agent session on the app's shipped campus plugins against the campus
    /// simulator, printing each decision and why. It starts its database afresh on every run
    /// (in the data directory's `demo` folder, unless --data-dir names another).
    Demo {
        /// Answer every approval prompt this way instead of asking on the terminal.
        #[arg(long, value_enum)]
        answer: Option<DemoAnswer>,
    },
    /// Run conformance scenarios: every *.json file (any case) under the given files and
    /// folders, each once; a symbolic link inside a folder is a failure, never followed.
    Conformance {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// List every plugin with its mode per effect and where each mode came from.
    Tools,
    /// See and change the app's settings.
    Settings {
        #[command(subcommand)]
        command: Option<state::SettingsCommand>,
    },
    /// List memories; approve or reject pending ones.
    Memory {
        #[command(subcommand)]
        command: Option<state::MemoryCommand>,
    },
    /// See and change consent: terms, campus session, cloud, system permissions.
    Consent {
        #[command(subcommand)]
        command: Option<state::ConsentCommand>,
    },
    /// Print the audit log: every decision, answer and outcome.
    Audit {
        /// How many of the newest rows.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Store secrets (API keys) in the desktop keyring.
    Secret {
        #[command(subcommand)]
        command: state::SecretCommand,
    },
    /// Scheduled jobs: list (the default), add, remove, pause, resume.
    Jobs {
        #[command(subcommand)]
        action: Option<jobs::JobsCommand>,
    },
    /// Talk to the agent: one turn with --message, else a line a turn until end of input. The
    /// API key comes from HARNESS_API_KEY or `harness secret set model.apiKey`.
    ///
    /// A turn that fails prints why and the session reads the next line. The exit status is 0
    /// when every turn ended done, 1 when any failed or the session could not start.
    Chat {
        /// The provider's OpenAI-compatible base URL, used for this session and saved as the
        /// model.endpoint setting once the model has answered a turn.
        #[arg(long)]
        endpoint: Option<String>,
        /// The model's name, used and saved like --endpoint (the model.name setting).
        #[arg(long)]
        model: Option<String>,
        /// Run this one turn and exit.
        #[arg(long)]
        message: Option<String>,
        /// The conversation to talk in: an id from `harness conversations`, or `new` for a new
        /// one. Without it, the terminal's own conversation.
        #[arg(long)]
        conversation: Option<String>,
        /// Answer every approval prompt this way instead of asking on the terminal.
        #[arg(long, value_enum)]
        answer: Option<DemoAnswer>,
        /// Answer every remote server's question this way instead of asking on the terminal
        /// (accept takes the form's defaults).
        #[arg(long, value_enum)]
        elicitation: Option<elicit::Reply>,
    },
    /// The model providers, and a test of the model's connection.
    Model {
        #[command(subcommand)]
        command: model::ModelCommand,
    },
    /// What the model cost this month, in tokens and 元, the cap, and each conversation's share.
    Usage,
    /// The conversations, newest first; rename or delete one.
    Conversations {
        #[command(subcommand)]
        command: Option<conversations::ConversationsCommand>,
    },
    /// Plugin documents: add by link or file (preview, then install), update, remove.
    Plugins {
        #[command(subcommand)]
        command: plugins::PluginsCommand,
    },
    /// Remote plugins: add an MCP server by URL, or list a server's tools.
    Mcp {
        #[command(subcommand)]
        command: plugins::McpCommand,
    },
    /// Call a tool as the user tapping it: TOOL is plugin.tool, JSON its input.
    Call {
        tool: String,
        json: String,
        /// Answer a remote server's question this way instead of asking on the terminal
        /// (accept takes the form's defaults).
        #[arg(long, value_enum)]
        elicitation: Option<elicit::Reply>,
        /// The file picked if the tool opens the picker, instead of asking on the terminal.
        #[arg(long, value_name = "FILE")]
        pick: Option<PathBuf>,
        /// The permission dialog's answer if the tool asks for one, instead of asking.
        #[arg(long, value_enum)]
        permission: Option<state::PermissionStateArg>,
    },
    /// The campus account: sign in, status, a plugin's request, sign out; the simulator.
    Campus {
        #[command(subcommand)]
        command: campus::CampusCommand,
    },
    /// PKU harness Cloud: set up an account (printing the recovery code once), join one by
    /// its code, see its status.
    Cloud {
        #[command(subcommand)]
        command: cloud::CloudCommand,
    },
    /// Run the jobs due at a local time "YYYY-MM-DD HH:mm" in the settings time zone.
    Tick {
        #[arg(long)]
        now: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum DemoAnswer {
    Allow,
    Deny,
    Always,
}

impl From<DemoAnswer> for Answer {
    fn from(a: DemoAnswer) -> Self {
        match a {
            DemoAnswer::Allow => Answer::Allow,
            DemoAnswer::Deny => Answer::Deny,
            DemoAnswer::Always => Answer::AlwaysAllow,
        }
    }
}

/// `$HARNESS_DATA_DIR`, else `$XDG_DATA_HOME/pku-harness`, else `~/.local/share/pku-harness`.
fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HARNESS_DATA_DIR") {
        return dir.into();
    }
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share")));
    base.unwrap_or_else(|| PathBuf::from("."))
        .join("pku-harness")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let data_dir = || cli.data_dir.clone().unwrap_or_else(default_data_dir);
    let result = match cli.command {
        Command::Demo { answer } => {
            let dir = cli
                .data_dir
                .clone()
                .unwrap_or_else(|| default_data_dir().join("demo"));
            demo::run(&dir, answer.map(Answer::from)).await
        }
        Command::Campus { command } => campus::run(&data_dir(), command).await,
        Command::Cloud { command } => cloud::run(&data_dir(), command).await,
        Command::Tools => tools::run(&data_dir()),
        Command::Settings { command } => {
            state::settings(&data_dir(), command.unwrap_or(state::SettingsCommand::Show))
        }
        Command::Memory { command } => {
            state::memory(&data_dir(), command.unwrap_or(state::MemoryCommand::List))
        }
        Command::Consent { command } => {
            state::consent(&data_dir(), command.unwrap_or(state::ConsentCommand::Show))
        }
        Command::Audit { limit } => state::audit(&data_dir(), limit),
        Command::Secret { command } => state::secret(&data_dir(), command),
        Command::Jobs { action } => jobs::run(&data_dir(), action),
        Command::Tick { now } => jobs::tick(&data_dir(), &now).await,
        Command::Chat {
            endpoint,
            model,
            message,
            conversation,
            answer,
            elicitation,
        } => {
            return chat::run(chat::ChatArgs {
                data_dir: &data_dir(),
                endpoint,
                model,
                message,
                conversation,
                answer: answer.map(Answer::from),
                elicitation,
            })
            .await;
        }
        Command::Model { command } => model::run(&data_dir(), command).await,
        Command::Usage => usage::run(&data_dir()),
        Command::Conversations { command } => conversations::run(
            &data_dir(),
            command.unwrap_or(conversations::ConversationsCommand::List),
        ),
        Command::Plugins { command } => plugins::plugins(&data_dir(), command).await,
        Command::Mcp { command } => plugins::mcp(&data_dir(), command).await,
        Command::Call {
            tool,
            json,
            elicitation,
            pick,
            permission,
        } => {
            let answers = tap::TapAnswers {
                elicitation,
                pick,
                permission,
            };
            plugins::call(&data_dir(), &tool, &json, answers).await
        }
        Command::Conformance { .. } if cli.data_dir.is_some() => {
            Err("conformance runs every scenario in memory and takes no --data-dir".into())
        }
        Command::Conformance { paths } => return run_conformance(&paths).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("harness: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run_conformance(paths: &[PathBuf]) -> ExitCode {
    let results = harness_conformance::run_paths(paths).await;
    let mut failed = 0;
    for r in &results {
        match &r.result {
            Ok(()) => outln!("ok {}", r.name),
            Err(why) => {
                failed += 1;
                outln!("FAIL {}: {why}", r.name);
            }
        }
    }
    outln!("{} passed, {failed} failed", results.len() - failed);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
