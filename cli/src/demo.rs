//! `harness demo`: an agent session over the sample plugins, with a scripted model on
//! 127.0.0.1 (module `script`) in place of a provider, that shows each kind of outcome — a read
//! that runs, a write that asks, a money call blocked by off, a scheduled write refused, and a
//! turn tainted by forum posts asking before it spends. The turns run the agent's real loop.

use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::sync::Arc;

use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use harness_campus_sim::{DEMO, Simulator};
use harness_core::Engine;
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::events::{Event, EventSink};
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::plugins::samples;
use harness_core::policy::{Actor, Answer, Mode, PromptKind};
use harness_core::registry::Effect;
use harness_core::scheduler::schedule::{format_local, parse_tz};
use harness_core::secrets::keys;
use harness_core::settings::parse_change;
use harness_core::store::DATABASE_FILE;
use serde_json::{Value, json};

use crate::script::{Reply, ScriptedModel};

const CONVERSATION: &str = "demo";

/// Opens the demo's data directory: marked as the demo's, so the sample plugins' code runs in
/// it (module `open`), with the campus at the demo's simulator.
fn open_with(
    data_dir: &Path,
    broker: Arc<dyn ApprovalBroker>,
    events: Arc<dyn EventSink>,
    campus: &str,
) -> Result<Engine, String> {
    std::fs::create_dir_all(data_dir)
        .map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
    let marker = data_dir.join(crate::open::DEMO_MARKER);
    std::fs::write(
        &marker,
        "Made by `harness demo`: the sample plugins' code runs in this data directory.\n",
    )
    .map_err(|e| format!("cannot write {}: {e}", marker.display()))?;
    let mut options = crate::open::options(data_dir, broker)?;
    options.campus = Origin::development(campus)?;
    options.events = events;
    Engine::open(data_dir, options).map_err(|e| e.to_string())
}

/// Starts the demo's data directory afresh — only the files the demo itself made — and installs
/// the sample plugins the way a user would.
async fn fresh_demo(
    data_dir: &Path,
    broker: Arc<dyn ApprovalBroker>,
    events: Arc<dyn EventSink>,
    campus: &str,
) -> Result<Engine, String> {
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
    let engine = open_with(data_dir, broker, events, campus)?;
    samples::install(&engine, &format!("file://{}", document.display()))
        .map_err(|e| e.to_string())?;
    engine.accept_terms().map_err(|e| e.to_string())?;
    // The demo student signs in to the simulator as a student signs in to IAAA.
    let signed = engine
        .campus()
        .sign_in(DEMO.id, DEMO.password, false)
        .await
        .map_err(|e| format!("the demo student could not sign in to the campus simulator: {e}"))?;
    if !matches!(signed, SignInStep::SignedIn { .. }) {
        return Err("the campus simulator asked the demo student for a code".into());
    }
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

/// What the model says in the demo, request by request: the real agent loop sends each request
/// to the scripted model on 127.0.0.1 and runs the calls it answers with.
fn script() -> Vec<Reply> {
    vec![
        // Turn 1: a read that runs, a write that asks.
        Reply::Calls(vec![
            ("wallet__cardBalance", json!({})),
            (
                "canteen__reserve",
                json!({"canteen": "学一食堂", "seats": 2, "time": "12:00"}),
            ),
        ]),
        Reply::Hears {
            ran: "Your card has 42.5 yuan left, and a table for two at 学一 is reserved for 12:00.",
            declined: "Your card has 42.5 yuan left. You declined the booking, so no table at 学一 is reserved.",
        },
        // Turn 2: the money effect is off, so recharge is not even offered; called by name it
        // is refused.
        Reply::Calls(vec![("wallet__recharge", json!({"amountYuan": 50}))]),
        Reply::Says(
            "I cannot top up your card: money calls of the campus card are off in Settings.",
        ),
        // Overnight, the agent job: a read runs, a write is refused (scheduled runs only read).
        Reply::Calls(vec![
            ("canteen__crowd", json!({})),
            (
                "canteen__reserve",
                json!({"canteen": "农园食堂", "seats": 1, "time": "11:30"}),
            ),
        ]),
        Reply::Says(
            "农园 is quiet at 11:30; a scheduled job cannot book a table, so please book it yourself.",
        ),
        // Turn 3: the forum's posts taint the turn; a post's instruction to spend asks first.
        Reply::Calls(vec![("mcp-forum__latestPosts", json!({"limit": 2}))]),
        Reply::Calls(vec![("wallet__recharge", json!({"amountYuan": 500}))]),
        Reply::Hears {
            ran: "Two new posts. One asked me to recharge your card with 500 yuan; you allowed it, so the card was recharged.",
            declined: "Two new posts. One asked me to recharge your card with 500 yuan; you declined, so nothing was charged.",
        },
    ]
}

pub async fn run(data_dir: &Path, answer: Option<Answer>) -> Result<(), String> {
    let printer = Arc::new(Printer::default());
    let campus = Simulator::start(0)
        .await
        .map_err(|e| format!("the campus simulator could not start: {e}"))?;
    let engine = fresh_demo(
        data_dir,
        Arc::new(TerminalAnswers { fixed: answer }),
        printer.clone(),
        &campus.origin(),
    )
    .await?;
    let model = ScriptedModel::start(script())?;
    for (key, value) in [
        ("model.endpoint", model.endpoint()),
        ("model.name", "demo-script"),
    ] {
        let change = parse_change(key, &json!(value)).map_err(|e| e.to_string())?;
        engine.change_setting(change).map_err(|e| e.to_string())?;
    }
    // The scripted model checks no key; the agent sends one as it does to any provider.
    engine
        .set_secret(keys::MODEL_API_KEY, "demo")
        .map_err(|e| e.to_string())?;
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
    outln!(
        "  terms accepted; signed in to the campus (the campus simulator on this machine) as {}",
        DEMO.id
    );
    outln!("  the model: a scripted one at {}", model.endpoint());
    engine
        .open_conversation(CONVERSATION)
        .map_err(|e| e.to_string())?;

    turn(
        &engine,
        1,
        "How much is left on my card, and can I get a table for two at 学一 at 12:00?",
    )
    .await?;

    note("the user has set Settings → Plugins → wallet → AI permissions → money to off");
    engine
        .set_mode("wallet", Effect::Money, Mode::Off)
        .map_err(|e| e.to_string())?;
    turn(&engine, 2, "Top up my card with 50 yuan.").await?;

    outln!("\n— overnight, two scheduled jobs —");
    printer.set_actor(Actor::Scheduler);
    // Both are due at the next 07:00 of the settings zone: the phone wakes once for both.
    overnight(
        &engine,
        &[
            json!({
                "name": "农园午饭",
                "schedule": {"cron": "0 7 * * *"},
                "agent": {"prompt": "Book me a seat at 农园 for 11:30 if it is quiet."}
            }),
            json!({
                "name": "校园卡余额低于 50 元",
                "schedule": {"cron": "0 7 * * *"},
                "check": {
                    "tool": "wallet.cardBalance",
                    "when": {"path": "balanceYuan", "op": "lt", "value": 50},
                    "notify": {"title": "校园卡余额不足", "body": "余额还剩 {balanceYuan} 元"}
                }
            }),
        ],
    )
    .await?;
    printer.set_actor(Actor::Agent);

    note("the user has set wallet's money mode back to auto");
    engine
        .set_mode("wallet", Effect::Money, Mode::Auto)
        .map_err(|e| e.to_string())?;
    note("a forum post asks the agent to recharge the card; reading it taints the turn");
    turn(&engine, 3, "What's new on the forum?").await?;

    let audit = engine.audit(10_000).map_err(|e| e.to_string())?;
    outln!(
        "\n{} audit entries recorded (harness audit --data-dir {} lists them).",
        audit.len(),
        data_dir.display()
    );
    Ok(())
}

/// One turn of the agent from the user's words; its steps print as they happen.
async fn turn(engine: &Engine, n: u32, user_says: &str) -> Result<(), String> {
    outln!("\n— turn {n} — the user: “{user_says}”");
    let summary = engine
        .send_message(CONVERSATION, user_says)
        .await
        .map_err(|e| e.to_string())?;
    match summary.message {
        None => outln!("  the agent answers: “{}”", summary.answer),
        Some(why) => outln!("  the turn ended {}: {why}", summary.state.as_str()),
    }
    Ok(())
}

fn note(text: &str) {
    outln!("  ({text})");
}

/// Prints the steps of the agent's turns as the core reports them: each call, what was decided
/// and why, and what came of it.
#[derive(Default)]
struct Printer {
    scheduled: AtomicBool,
}

impl Printer {
    fn set_actor(&self, actor: Actor) {
        self.scheduled
            .store(actor == Actor::Scheduler, Ordering::Relaxed);
    }
}

impl EventSink for Printer {
    fn emit(&self, event: Event) {
        let scheduled = self.scheduled.load(Ordering::Relaxed);
        match event {
            Event::ToolCallStarted {
                name, tool, input, ..
            } => {
                let actor = if scheduled { "scheduler" } else { "agent" };
                outln!("  {actor} → {} {input}", tool.unwrap_or(name));
            }
            Event::ToolDecision {
                verdict, reason, ..
            } => outln!("    decision: {verdict} ({reason})"),
            Event::ToolResult {
                ok: true, result, ..
            } => outln!("    ran: {result}"),
            Event::ToolResult { result, .. } if scheduled => {
                outln!("    the job records: {result}")
            }
            Event::ToolResult { result, .. } => outln!("    the agent is told: {result}"),
            Event::HostLine { plugin, text, .. } => outln!("    [{plugin}] {text}"),
            _ => {}
        }
    }
}

/// Jobs the user adds; the phone wakes when they are due and runs them — with actor
/// scheduler, so only reads (seed 004). Every time printed is local to the settings zone, in
/// the order it comes.
async fn overnight(engine: &Engine, specs: &[Value]) -> Result<(), String> {
    use harness_core::scheduler::Owner;
    let mut due = Vec::new();
    for spec in specs {
        let job = engine
            .add_job(spec, Owner::User)
            .map_err(|e| e.to_string())?;
        due.push(job.next_due_ms.ok_or("the job has no due time")?);
        outln!(
            "  the user adds job {}: {} — {}, next at {}",
            job.id,
            job.spec.name,
            job.spec.schedule,
            job.next_due_local().unwrap_or_default()
        );
    }
    let wake = due.into_iter().max().ok_or("no job was added")?;
    let tz = parse_tz("timeZone", &engine.settings().time_zone).map_err(|e| e.to_string())?;
    outln!(
        "  the phone wakes at {} and runs what is due",
        format_local(tz, wake)
    );
    for report in engine.run_due(wake).await.map_err(|e| e.to_string())? {
        crate::jobs::print_report(engine, &report);
    }
    Ok(())
}
