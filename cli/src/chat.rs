//! `harness chat`: talk to the agent from a terminal — one turn with `--message`, else a prompt
//! that reads a line per turn — against any OpenAI-compatible endpoint. Each step of a turn is
//! printed as it streams: the answer, each tool call, what the core decided and why, the result.

use std::io::BufRead;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use harness_core::error::Unset;
use harness_core::events::{Event, EventSink};
use harness_core::history::TurnState;
use harness_core::policy::Answer;
use harness_core::secrets::{SecretError, SecretStore};
use harness_core::settings::parse_change;
use harness_core::{Engine, EngineError};
use serde_json::json;

use crate::demo::TerminalAnswers;
use crate::secrets::KeyringSecrets;

/// The conversation the terminal talks in without `--conversation`.
const CONVERSATION: &str = "terminal";

/// Where the API key comes from: `HARNESS_API_KEY` when it is set, else the keyring
/// (`harness secret set model.apiKey`). The key is only ever read, never printed.
struct KeySource {
    from_env: Option<String>,
    keyring: KeyringSecrets,
}

impl SecretStore for KeySource {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        // The variable stands for whichever provider's key is asked (`model.apiKey.<id>`);
        // the single key of the keyring is not read beside it, so it is never moved there.
        match &self.from_env {
            Some(value) if key.starts_with("model.apiKey.") => Ok(Some(value.clone())),
            Some(_) if key == "model.apiKey" => Ok(None),
            _ => self.keyring.get(key),
        }
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        self.keyring.set(key, value)
    }

    fn delete(&self, key: &str) -> Result<(), SecretError> {
        self.keyring.delete(key)
    }
}

/// Prints a turn's steps as they happen.
struct Printer;

impl EventSink for Printer {
    fn emit(&self, event: Event) {
        match event {
            Event::TextDelta { text, .. } => {
                out!("{text}");
                crate::output::flush();
            }
            // What was printed of the cut answer stays on the terminal; say that it is void.
            Event::AnswerRestarted { .. } => {
                outln!("\n  (the answer was cut off; asking the model again)")
            }
            Event::ToolCallStarted { name, input, .. } => outln!("\n  → {name} {input}"),
            Event::ToolDecision {
                verdict, reason, ..
            } => outln!("    {verdict}: {reason}"),
            Event::ToolResult { ok, result, .. } => {
                let shown: String = result.chars().take(300).collect();
                let more = if result.chars().count() > 300 {
                    " …"
                } else {
                    ""
                };
                let label = if ok { "result" } else { "error" };
                outln!("    {label}: {shown}{more}");
            }
            Event::HostLine { plugin, text, .. } => outln!("    [{plugin}] {text}"),
            Event::MemoryPending { memory, .. } => {
                outln!("    memory {memory} waits for your approval (harness memory)")
            }
            _ => {}
        }
    }
}

pub struct ChatArgs<'a> {
    pub data_dir: &'a Path,
    pub endpoint: Option<String>,
    pub model: Option<String>,
    pub message: Option<String>,
    /// An existing conversation's id, `new` for a new one, or none for [`CONVERSATION`].
    pub conversation: Option<String>,
    pub answer: Option<Answer>,
    pub elicitation: Option<crate::elicit::Reply>,
}

/// Where a terminal user stores the API key; the core's words speak of the app's screen.
pub const API_KEY_HELP: &str = "run `harness secret set model.apiKey` (it reads the key from standard input and keeps it in the keyring), or set HARNESS_API_KEY";

/// The session, then its exit status: 0 when every turn ended done, 1 when one failed (its
/// error printed as it happened) or the session could not start.
pub async fn run(args: ChatArgs<'_>) -> ExitCode {
    match session(args).await {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("harness: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the turns and returns how many failed.
async fn session(args: ChatArgs<'_>) -> Result<usize, String> {
    let mut options = crate::open::options(
        args.data_dir,
        Arc::new(TerminalAnswers {
            fixed: args.answer,
            elicitation: args.elicitation,
        }),
    )?;
    options.secrets = Arc::new(KeySource {
        from_env: std::env::var("HARNESS_API_KEY")
            .ok()
            .filter(|k| !k.is_empty()),
        keyring: KeyringSecrets::for_data_dir(args.data_dir),
    });
    options.events = Arc::new(Printer);
    let engine = Engine::open(args.data_dir, options).map_err(|e| e.to_string())?;
    // The same checks as the settings screen: https (or http to this machine), no key in it.
    // The values are used for now and saved once the model has answered a turn: an endpoint
    // or name with a typo, or one that never answered, does not replace a saved one.
    let mut trying = Vec::new();
    for (key, value) in [
        ("model.endpoint", args.endpoint),
        ("model.name", args.model),
    ] {
        if let Some(value) = value {
            let change = parse_change(key, &json!(value)).map_err(|e| e.to_string())?;
            engine
                .use_setting_for_now(change)
                .map_err(|e| e.to_string())?;
            trying.push((key, value));
        }
    }
    if !engine.consent().terms_accepted() {
        return Err(
            "the terms have not been accepted: run `harness consent accept-terms` first".into(),
        );
    }
    let conversation = match args.conversation.as_deref() {
        None => {
            engine
                .open_conversation(CONVERSATION)
                .map_err(|e| e.to_string())?;
            CONVERSATION.to_owned()
        }
        Some("new") => {
            let id = engine.conversations().create().map_err(|e| e.to_string())?;
            outln!("New conversation {id}.");
            id
        }
        Some(id) => {
            engine.existing_conversation(id).map_err(|_| {
                format!(
                    "--conversation: there is no conversation \"{id}\"; `harness conversations` lists them, `--conversation new` starts one"
                )
            })?;
            id.to_owned()
        }
    };
    let mut session = Session {
        engine: &engine,
        conversation,
        trying,
        turns: 0,
        failed: 0,
    };
    if let Some(message) = args.message {
        session.turn(&message).await;
        // No remote plugin's session is left open on its server when the process exits.
        engine.shutdown().await;
        return session.end();
    }
    outln!(
        "Talking in {} — one line a turn; end with Ctrl-D.",
        args.data_dir.display()
    );
    let stdin = std::io::stdin();
    loop {
        out!("> ");
        crate::output::flush();
        let mut line = String::new();
        if stdin
            .lock()
            .read_line(&mut line)
            .map_err(|e| e.to_string())?
            == 0
        {
            outln!();
            if session.failed > 0 {
                eprintln!(
                    "harness: {} of {} turns failed",
                    session.failed, session.turns
                );
            }
            engine.shutdown().await;
            return session.end();
        }
        if !line.trim().is_empty() {
            session.turn(line.trim()).await;
        }
    }
}

/// The turns of one session, and the model settings it uses but has not saved yet.
struct Session<'a> {
    engine: &'a Engine,
    conversation: String,
    trying: Vec<(&'static str, String)>,
    turns: usize,
    failed: usize,
}

impl Session<'_> {
    /// One turn; its steps print as they stream, then how it ended. A turn that failed prints
    /// why; the session goes on.
    async fn turn(&mut self, text: &str) {
        self.turns += 1;
        let ended = match self.engine.send_message(&self.conversation, text).await {
            Ok(summary) => {
                let usage = &summary.usage;
                let tokens = match usage.total_tokens {
                    // A provider that sends no usage leaves it at zero; no request costs nothing.
                    0 => "usage not reported".to_owned(),
                    n => format!("{n} tokens"),
                };
                outln!(
                    "\n[{} — {} model requests, {tokens}]",
                    summary.state.as_str(),
                    usage.model_requests,
                );
                match (summary.state, summary.message) {
                    (TurnState::Done, _) => Ok(()),
                    (_, Some(why)) => Err(why),
                    (state, None) => Err(format!("the turn ended {}", state.as_str())),
                }
            }
            Err(EngineError::Unset(Unset::ApiKey)) => {
                Err(format!("no API key is stored: {API_KEY_HELP}"))
            }
            Err(EngineError::Unset(Unset::Endpoint)) => Err(
                "no model provider is set: give --endpoint with your provider's base URL, or run `harness settings set model.endpoint URL`".into(),
            ),
            Err(EngineError::Unset(Unset::ModelName)) => Err(
                "no model is named: give --model, or run `harness settings set model.name NAME`"
                    .into(),
            ),
            Err(e) => Err(e.to_string()),
        };
        match ended {
            Ok(()) => self.save_what_answered(),
            Err(why) => {
                self.failed += 1;
                eprintln!("harness: {why}");
            }
        }
    }

    /// The model answered: the endpoint and name it answered at are kept.
    fn save_what_answered(&mut self) {
        if self.trying.is_empty() {
            return;
        }
        match self.engine.save_settings_in_effect() {
            Ok(()) => {
                let saved: Vec<String> = self
                    .trying
                    .drain(..)
                    .map(|(key, value)| format!("{key} = {}", json!(value)))
                    .collect();
                outln!("Saved {}.", saved.join(" and "));
            }
            Err(e) => eprintln!("harness: the model settings could not be saved: {e}"),
        }
    }

    /// How many turns failed, after saying what was not saved and how to save it.
    fn end(self) -> Result<usize, String> {
        if !self.trying.is_empty() {
            let keys: Vec<&str> = self.trying.iter().map(|(key, _)| *key).collect();
            let commands: Vec<String> = self
                .trying
                .iter()
                .map(|(key, value)| format!("`harness settings set {key} {value}`"))
                .collect();
            let (were, them) = if keys.len() == 1 {
                ("was", "it")
            } else {
                ("were", "them")
            };
            eprintln!(
                "harness: {} {were} not saved, since no turn was answered; to save {them} anyway: {}",
                keys.join(" and "),
                commands.join(" and ")
            );
        }
        Ok(self.failed)
    }
}
