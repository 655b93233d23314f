//! `harness chat`: talk to the agent from a terminal — one turn with `--message`, else a prompt
//! that reads a line per turn — against any OpenAI-compatible endpoint. Each step of a turn is
//! printed as it streams: the answer, each tool call, what the core decided and why, the result.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use harness_core::events::{Event, EventSink};
use harness_core::history::TurnState;
use harness_core::plugins::samples::Samples;
use harness_core::policy::Answer;
use harness_core::secrets::{SecretError, SecretStore};
use harness_core::settings::parse_change;
use harness_core::{Engine, Options};
use serde_json::json;

use crate::demo::TerminalAnswers;
use crate::secrets::KeyringSecrets;

/// The conversation the terminal talks in.
const CONVERSATION: &str = "terminal";

/// Where the API key comes from: `HARNESS_API_KEY` when it is set, else the keyring
/// (`harness secret set model.apiKey`). The key is only ever read, never printed.
struct KeySource {
    from_env: Option<String>,
    keyring: KeyringSecrets,
}

impl SecretStore for KeySource {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        match (&self.from_env, key) {
            (Some(value), "model.apiKey") => Ok(Some(value.clone())),
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
    pub answer: Option<Answer>,
}

pub async fn run(args: ChatArgs<'_>) -> Result<(), String> {
    let mut options = Options::new(Arc::new(TerminalAnswers { fixed: args.answer }));
    options.catalog = Arc::new(Samples);
    // A development tool: an MCP server on this machine, which a plugin author runs, is
    // accepted; the app never accepts one (DESIGN.md §5).
    options.development_servers = true;
    options.secrets = Arc::new(KeySource {
        from_env: std::env::var("HARNESS_API_KEY")
            .ok()
            .filter(|k| !k.is_empty()),
        keyring: KeyringSecrets::new(),
    });
    options.events = Arc::new(Printer);
    let engine = Engine::open(args.data_dir, options).map_err(|e| e.to_string())?;
    // The same checks as the settings screen: https (or http to this machine), no key in it.
    for (key, value) in [
        ("model.endpoint", args.endpoint),
        ("model.name", args.model),
    ] {
        if let Some(value) = value {
            let change = parse_change(key, &json!(value)).map_err(|e| e.to_string())?;
            engine.change_setting(change).map_err(|e| e.to_string())?;
        }
    }
    if !engine.consent().terms_accepted() {
        return Err(
            "the terms have not been accepted: run `harness consent accept-terms` first".into(),
        );
    }
    engine
        .open_conversation(CONVERSATION)
        .map_err(|e| e.to_string())?;
    if let Some(message) = args.message {
        let ended = turn(&engine, &message).await;
        // No remote plugin's session is left open on its server when the process exits.
        engine.shutdown().await;
        return ended;
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
            engine.shutdown().await;
            return Ok(());
        }
        if !line.trim().is_empty() {
            turn(&engine, line.trim()).await?;
        }
    }
}

/// One turn; its steps print as they stream, then how it ended.
async fn turn(engine: &Engine, text: &str) -> Result<(), String> {
    let summary = engine
        .send_message(CONVERSATION, text)
        .await
        .map_err(|e| e.to_string())?;
    let usage = &summary.usage;
    outln!(
        "\n[{} — {} model requests, {} tokens]",
        summary.state.as_str(),
        usage.model_requests,
        usage.total_tokens
    );
    match (summary.state, summary.message) {
        (TurnState::Done, _) => Ok(()),
        (_, Some(why)) => Err(why),
        (state, None) => Err(format!("the turn ended {}", state.as_str())),
    }
}
