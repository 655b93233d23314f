//! `harness demo`: a scripted agent session over the sample plugins that shows each kind of
//! outcome — a read that runs, a write that asks, a money call blocked by off, a scheduled
//! write refused, and a turn tainted by forum posts asking before it spends.

use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Call, Outcome, Prompt};
use harness_core::plugins::samples::{self, Samples};
use harness_core::policy::{Actor, Answer, Mode, PromptKind};
use harness_core::registry::Effect;
use harness_core::store::DATABASE_FILE;
use harness_core::{Engine, Options};
use serde_json::{Value, json};

const CONVERSATION: &str = "demo";

/// Opens a data directory with the sample plugins' code available.
pub fn open(data_dir: &Path, broker: Arc<dyn ApprovalBroker>) -> Result<Engine, String> {
    let mut options = Options::new(broker);
    options.catalog = Arc::new(Samples);
    Engine::open(data_dir, options).map_err(|e| e.to_string())
}

/// Starts the demo's data directory afresh — only the files the demo itself made — and installs
/// the sample plugins the way a user would.
fn fresh_demo(data_dir: &Path, broker: Arc<dyn ApprovalBroker>) -> Result<Engine, String> {
    for name in [
        DATABASE_FILE.to_owned(),
        format!("{DATABASE_FILE}-wal"),
        format!("{DATABASE_FILE}-shm"),
    ] {
        match std::fs::remove_file(data_dir.join(&name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("cannot reset {name}: {e}"));
            }
            _ => {}
        }
    }
    let folder = data_dir.join("plugins").join("canteen");
    std::fs::create_dir_all(&folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let document = folder.join("PLUGIN.md");
    std::fs::write(&document, samples::CANTEEN_DOCUMENT)
        .map_err(|e| format!("cannot write {}: {e}", document.display()))?;
    let document = std::fs::canonicalize(&document).map_err(|e| e.to_string())?;
    let engine = open(data_dir, broker)?;
    samples::install(&engine, &format!("file://{}", document.display()))
        .map_err(|e| e.to_string())?;
    engine.accept_terms().map_err(|e| e.to_string())?;
    engine.set_campus_session(true).map_err(|e| e.to_string())?;
    Ok(engine)
}

/// Answers prompts on the terminal, or always the same way when `--answer` was given.
pub(crate) struct TerminalAnswers {
    pub(crate) fixed: Option<Answer>,
}

impl TerminalAnswers {
    fn keys(kind: PromptKind) -> &'static [(&'static str, Answer, &'static str)] {
        match kind {
            PromptKind::Ordinary => &[
                ("a", Answer::Allow, "Allow"),
                ("d", Answer::Deny, "Deny"),
                ("A", Answer::AlwaysAllow, "Always allow"),
            ],
            PromptKind::Grant => &[
                ("o", Answer::AllowOnce, "Allow once"),
                ("A", Answer::AlwaysAllow, "Always allow"),
                ("n", Answer::DontAllow, "Don't allow"),
            ],
            PromptKind::Confirm => &[("a", Answer::Allow, "Allow"), ("d", Answer::Deny, "Deny")],
            PromptKind::GrantOnce => &[
                ("o", Answer::AllowOnce, "Allow once"),
                ("n", Answer::DontAllow, "Don't allow"),
            ],
        }
    }

    /// `--answer` speaks of the ordinary prompt; a grant or confirm prompt takes its nearest.
    fn fixed_for(answer: Answer, kind: PromptKind) -> Answer {
        match (kind, answer) {
            (PromptKind::Grant | PromptKind::GrantOnce, Answer::Allow) => Answer::AllowOnce,
            (PromptKind::Grant | PromptKind::GrantOnce, Answer::Deny) => Answer::DontAllow,
            (PromptKind::GrantOnce, Answer::AlwaysAllow) => Answer::AllowOnce,
            (PromptKind::Confirm, Answer::AlwaysAllow) => Answer::Allow,
            _ => answer,
        }
    }
}

#[async_trait]
impl ApprovalBroker for TerminalAnswers {
    async fn ask(&self, prompt: Prompt) -> Answer {
        let keys = Self::keys(prompt.kind);
        outln!("    ┌ approval needed: {}", prompt.headline);
        outln!(
            "    │ plugin {} ({}), tool {} ({}), effect {}",
            prompt.plugin_title,
            prompt.plugin,
            prompt.tool_title,
            prompt.tool,
            prompt.effect
        );
        outln!("    │ inputs {}", prompt.input);
        outln!("    │ why: {}", prompt.reason);
        let menu: Vec<String> = keys
            .iter()
            .map(|(k, _, label)| format!("[{k}] {label}"))
            .collect();
        if let Some(answer) = self.fixed {
            let answer = Self::fixed_for(answer, prompt.kind);
            outln!("    └ {} → {} (--answer)", menu.join("  "), answer.as_str());
            return answer;
        }
        let stdin = std::io::stdin();
        loop {
            out!("    └ {} ? ", menu.join("  "));
            crate::output::flush();
            let mut line = String::new();
            // No answer (end of input) is no consent.
            if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
                outln!("(no answer: deny)");
                return Answer::Deny;
            }
            if !stdin.is_terminal() {
                outln!("{}", line.trim());
            }
            if let Some((_, answer, _)) = keys.iter().find(|(k, _, _)| *k == line.trim()) {
                return *answer;
            }
        }
    }
}

pub async fn run(data_dir: &Path, answer: Option<Answer>) -> Result<(), String> {
    let engine = fresh_demo(data_dir, Arc::new(TerminalAnswers { fixed: answer }))?;
    outln!("PKU harness demo — data directory {}", data_dir.display());
    for view in engine.plugins() {
        let plugin = &view.plugin;
        outln!(
            "  installed {} ({}, {} tools)",
            plugin.id,
            plugin.kind.as_str(),
            plugin.tools.len()
        );
    }
    outln!("  terms accepted; campus session signed in");
    engine
        .open_conversation(CONVERSATION)
        .map_err(|e| e.to_string())?;

    turn(
        &engine,
        1,
        "How much is left on my card, and can I get a table for two at 学一 at 12:00?",
    );
    call(&engine, Actor::Agent, "wallet.cardBalance", json!({})).await;
    call(
        &engine,
        Actor::Agent,
        "canteen.reserve",
        json!({"canteen": "学一食堂", "seats": 2, "time": "12:00"}),
    )
    .await;

    turn(&engine, 2, "Top up my card with 50 yuan.");
    note("the user has set Settings → Plugins → wallet → AI permissions → money to off");
    engine
        .set_mode("wallet", Effect::Money, Mode::Off)
        .map_err(|e| e.to_string())?;
    call(
        &engine,
        Actor::Agent,
        "wallet.recharge",
        json!({"amountYuan": 50}),
    )
    .await;

    outln!("\n— overnight, a scheduled job —");
    call(&engine, Actor::Scheduler, "canteen.crowd", json!({})).await;
    call(
        &engine,
        Actor::Scheduler,
        "canteen.reserve",
        json!({"canteen": "农园食堂", "seats": 1, "time": "11:30"}),
    )
    .await;
    scheduled_check(&engine).await?;

    turn(&engine, 3, "What's new on the forum?");
    note("the user has set wallet's money mode back to auto");
    engine
        .set_mode("wallet", Effect::Money, Mode::Auto)
        .map_err(|e| e.to_string())?;
    call(
        &engine,
        Actor::Agent,
        "mcp-forum.latestPosts",
        json!({"limit": 2}),
    )
    .await;
    note("a post asks the agent to recharge the card; the turn is tainted");
    call(
        &engine,
        Actor::Agent,
        "wallet.recharge",
        json!({"amountYuan": 500}),
    )
    .await;

    let audit = engine.audit(10_000).map_err(|e| e.to_string())?;
    outln!(
        "\n{} audit entries recorded (harness audit --data-dir {} lists them).",
        audit.len(),
        data_dir.display()
    );
    Ok(())
}

fn turn(engine: &Engine, n: u32, user_says: &str) {
    let _ = engine.begin_turn(CONVERSATION);
    outln!("\n— turn {n} — the user: “{user_says}”");
}

fn note(text: &str) {
    outln!("  ({text})");
}

async fn call(engine: &Engine, actor: Actor, tool: &str, input: Value) {
    outln!("  {} → {tool} {input}", actor.as_str());
    let conversation = (actor == Actor::Agent).then(|| CONVERSATION.to_owned());
    let invocation = engine
        .invoke(Call {
            tool: tool.to_owned(),
            actor,
            input,
            conversation,
        })
        .await;
    let headline = invocation.prompt.as_ref().map(|p| p.headline.as_str());
    outln!(
        "    decision: {} — {}",
        invocation.decision.describe(headline),
        invocation.reason
    );
    if let Some(answer) = invocation.answer {
        outln!("    answer: {}", answer.as_str());
    }
    match &invocation.outcome {
        Outcome::Ran { result, .. } => outln!("    ran: {result}"),
        Outcome::Failed { message } => outln!("    failed: {message}"),
        Outcome::Refused { .. } if actor == Actor::Scheduler => {
            outln!("    the job records: {}", invocation.for_model())
        }
        Outcome::Refused { .. } => outln!("    the agent is told: {}", invocation.for_model()),
    }
}

/// The scheduled check of the demo: the user adds "balance below 50 yuan" on wallet.cardBalance,
/// every hour, and the scheduler wakes at its due time and runs it — as a read, with actor
/// scheduler (seed 004: scheduled runs only read).
async fn scheduled_check(engine: &Engine) -> Result<(), String> {
    use harness_core::scheduler::Owner;
    outln!("\n— a scheduled check —");
    let spec = json!({
        "name": "校园卡余额低于 50 元",
        "schedule": {"everyMinutes": 60},
        "check": {
            "tool": "wallet.cardBalance",
            "when": {"path": "balanceYuan", "op": "lt", "value": 50},
            "notify": {"title": "校园卡余额不足", "body": "余额还剩 {balanceYuan} 元"}
        }
    });
    let job = engine
        .add_job(&spec, Owner::User)
        .map_err(|e| e.to_string())?;
    let due = job.next_due_ms.ok_or("the job has no due time")?;
    outln!(
        "  the user adds job {}: {} — {}, next at {}",
        job.id,
        job.spec.name,
        job.spec.schedule,
        job.next_due_local().unwrap_or_default()
    );
    outln!(
        "  the phone wakes at {} and runs what is due",
        job.next_due_local().unwrap_or_default()
    );
    for report in engine.run_due(due).await.map_err(|e| e.to_string())? {
        crate::jobs::print_report(engine, &report);
    }
    Ok(())
}
