//! `harness demo`: an agent session over the app's shipped campus plugins (校园卡, 食堂, 树洞),
//! signed in to the campus simulator on 127.0.0.1 as its demo student, with a scripted model on
//! 127.0.0.1 (module `script`) in place of a provider, that shows each kind of outcome — reads
//! that run, a post that asks first, a scheduled check that reads the balance and a scheduled
//! post refused, and a turn tainted by Treehole asking before it spends. The turns run the
//! agent's real loop.

use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::sync::Arc;

use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use harness_campus_sim::{DEMO, SMS_CODE, Simulator};
use harness_core::Engine;
use harness_core::campus::SignInStep;
use harness_core::campus::wire::Origin;
use harness_core::events::{Event, EventSink};
use harness_core::invoke::{ApprovalBroker, Elicitation, ElicitationAnswer, Prompt};
use harness_core::policy::{Actor, Answer, PromptKind};
use harness_core::scheduler::schedule::{format_local, parse_tz};
use harness_core::secrets::keys;
use harness_core::settings::parse_change;
use harness_core::store::DATABASE_FILE;
use serde_json::{Value, json};

use crate::script::{Reply, ScriptedModel};

const CONVERSATION: &str = "demo";

/// Opens the demo's data directory with the campus at the demo's simulator.
fn open_with(
    data_dir: &Path,
    broker: Arc<dyn ApprovalBroker>,
    events: Arc<dyn EventSink>,
    campus: &str,
) -> Result<Engine, String> {
    let mut options = crate::open::options(data_dir, broker)?;
    options.campus = Origin::development(campus)?;
    options.events = events;
    Engine::open(data_dir, options).map_err(|e| e.to_string())
}

/// Starts the demo's data directory afresh — only the files the demo itself made — accepts
/// the terms and signs in to the campus simulator as its demo student, who then passes
/// Treehole's own SMS check as on its check screen.
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
    let engine = open_with(data_dir, broker, events, campus)?;
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
    let check = async {
        engine.campus().treehole_send_code().await?;
        engine.campus().treehole_verify(SMS_CODE).await
    };
    check
        .await
        .map_err(|e| format!("Treehole's SMS check did not pass: {e}"))?;
    Ok(engine)
}

/// Answers prompts on the terminal, or always the same way when `--answer` was given; a remote
/// server's questions likewise, with `--elicitation`.
pub(crate) struct TerminalAnswers {
    pub(crate) fixed: Option<Answer>,
    pub(crate) elicitation: Option<crate::elicit::Reply>,
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

    async fn elicit(&self, request: Elicitation) -> ElicitationAnswer {
        crate::elicit::on_terminal(&request, self.elicitation)
    }
}

/// What the model says in the demo, request by request: the real agent loop sends each request
/// to the scripted model on 127.0.0.1 and runs the calls it answers with.
fn script() -> Vec<Reply> {
    vec![
        // Turn 1: reads that run.
        Reply::Calls(vec![
            ("wallet__cardBalance", json!({})),
            ("canteen__crowd", json!({})),
        ]),
        Reply::Says(
            "Your card has 42.50 yuan left. 燕南食堂 is the quietest now (18% full); 学一 is crowded.",
        ),
        // Turn 2: a post on Treehole is public: it asks first, with the words as the headline.
        Reply::Calls(vec![(
            "treehole__publish",
            json!({"text": "有人一起去燕南吃午饭吗？"}),
        )]),
        Reply::Hears {
            ran: "Posted on Treehole.",
            declined: "You declined, so nothing was posted on Treehole.",
        },
        // Overnight, the agent job: a read runs, a post is refused (scheduled runs only read).
        Reply::Calls(vec![
            ("canteen__crowd", json!({})),
            ("treehole__publish", json!({"text": "燕南食堂现在人很少。"})),
        ]),
        Reply::Says(
            "燕南 is quiet; a scheduled job cannot post on Treehole, so the post is left to you.",
        ),
        // Turn 3: Treehole's posts taint the turn; a post's instruction to spend asks first.
        Reply::Calls(vec![("treehole__feed", json!({}))]),
        Reply::Calls(vec![("wallet__useDigitalCard", json!({}))]),
        Reply::Hears {
            ran: "Treehole has new posts. One asked me to switch your card to the digital card; you allowed it, so it was switched.",
            declined: "Treehole has new posts. One asked me to switch your card to the digital card; you declined, so nothing changed.",
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
        Arc::new(TerminalAnswers {
            fixed: answer,
            elicitation: None,
        }),
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

    outln!("  Treehole's SMS check passed on its check screen");
    turn(
        &engine,
        1,
        "How much is left on my card, and which canteen is not crowded?",
    )
    .await?;
    turn(&engine, 2, "Post on Treehole: 有人一起去燕南吃午饭吗？").await?;

    outln!("\n— overnight, two scheduled jobs —");
    printer.set_actor(Actor::Scheduler);
    // Both are due at the next 07:00 of the settings zone: the phone wakes once for both.
    overnight(
        &engine,
        &[
            json!({
                "name": "燕南人少就发树洞",
                "schedule": {"cron": "0 7 * * *"},
                "agent": {"prompt": "If 燕南 is quiet, post on Treehole that it is."}
            }),
            // seed 004's reminder: the balance under 50 yuan.
            json!({
                "name": "校园卡余额低于 50 元",
                "schedule": {"cron": "0 7 * * *"},
                "check": {
                    "tool": "wallet.cardBalance",
                    "when": {"path": "balanceYuan", "op": "lt", "value": 50},
                    "notify": {"title": "余额不足", "body": "校园卡余额还剩 {balanceYuan} 元"}
                }
            }),
        ],
    )
    .await?;
    printer.set_actor(Actor::Agent);

    note("a Treehole post asks the agent to switch the card; reading it taints the turn");
    turn(&engine, 3, "What's new on Treehole?").await?;

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
