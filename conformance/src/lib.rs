//! Conformance scenarios (shared/conformance/FORMAT.md): JSON files that state a situation,
//! a call and the expected decision, run through the real engine — registry, policy, invoke
//! and gates — never a copy of their logic.
//!
//! Beyond FORMAT.md, a step may also be `{"setPlanMode": true}`, `{"beginTurn": true}` (a new
//! turn: its taint starts clear) or `{"setEnabled": {"plugin": "wallet", "enabled": false}}`,
//! and `conversation.rules` holds rules of the conversation's own.

mod gate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use harness_core::consent::{Permission, PermissionState};
use harness_core::engine::{Engine, Options};
use harness_core::invoke::{ApprovalBroker, Assessment, Call, PluginHandler, Prompt, ToolContext};
use harness_core::policy::{Actor, Answer, Code, Decision, Mode, Preset, Rule, ToolCheck, Verdict};
use harness_core::registry::{Effect, Plugin, PluginKind, Tool, parse_manifest, tool_id};
use harness_core::turn::{ConversationSettings, Scope};

/// The conversation agent calls in a scenario take place in.
const CONVERSATION: &str = "scenario";

/// One scenario's name and result: `Err` holds `expected …, got …`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioResult {
    pub name: String,
    pub result: Result<(), String>,
}

/// Runs every `*.json` file under `paths` (files or folders, recursively, in name order).
pub async fn run_paths(paths: &[PathBuf]) -> Vec<ScenarioResult> {
    let mut results = Vec::new();
    for path in paths {
        match json_files(path) {
            Ok(files) => {
                for file in files {
                    results.extend(run_file(&file).await);
                }
            }
            Err(e) => results.push(ScenarioResult {
                name: path.display().to_string(),
                result: Err(e),
            }),
        }
    }
    results
}

fn json_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            files.extend(json_files(&entry)?);
        } else if entry.extension().is_some_and(|e| e == "json") {
            files.push(entry);
        }
    }
    Ok(files)
}

/// Runs one file holding a scenario or an array of them. A file that cannot be read or parsed
/// is one failure named after the file, never a skip.
pub async fn run_file(path: &Path) -> Vec<ScenarioResult> {
    let name = path.display().to_string();
    let parsed = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
    let scenarios = match parsed {
        Ok(Value::Array(items)) => items,
        Ok(single @ Value::Object(_)) => vec![single],
        Ok(_) => {
            return vec![ScenarioResult {
                name,
                result: Err("not a scenario object or an array of them".into()),
            }];
        }
        Err(e) => {
            return vec![ScenarioResult {
                name,
                result: Err(format!("cannot parse: {e}")),
            }];
        }
    };
    let mut results = Vec::with_capacity(scenarios.len());
    for (index, scenario) in scenarios.iter().enumerate() {
        let name = match scenario.get("name").and_then(Value::as_str) {
            Some(n) => n.to_owned(),
            None => format!("{name}[{index}]"),
        };
        results.push(ScenarioResult {
            name,
            result: run_scenario(scenario).await,
        });
    }
    results
}

/// Runs one scenario object.
pub async fn run_scenario(scenario: &Value) -> Result<(), String> {
    if scenario.get("gate").is_some() {
        return gate::run_gate_scenario(scenario);
    }
    let spec: Scenario =
        serde_json::from_value(scenario.clone()).map_err(|e| format!("bad scenario: {e}"))?;
    spec.run().await
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Scenario {
    #[allow(dead_code)]
    name: String,
    #[serde(default)]
    plugins: Vec<Value>,
    #[serde(default)]
    modes: BTreeMap<String, BTreeMap<Effect, Mode>>,
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    conversation: ConversationSpec,
    #[serde(default)]
    consent: ConsentSpec,
    steps: Vec<StepSpec>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConversationSpec {
    #[serde(default)]
    preset: Preset,
    #[serde(default)]
    plan_mode: bool,
    #[serde(default)]
    tainted: bool,
    #[serde(default)]
    scope: Scope,
    #[serde(default)]
    rules: Vec<Rule>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConsentSpec {
    #[serde(default = "yes")]
    terms_accepted: bool,
    #[serde(default)]
    met: Vec<String>,
}

impl Default for ConsentSpec {
    fn default() -> Self {
        Self {
            terms_accepted: true,
            met: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StepSpec {
    call: Option<CallSpec>,
    expect: Option<Expect>,
    answer: Option<Answer>,
    set_mode: Option<SetMode>,
    set_preset: Option<Preset>,
    set_plan_mode: Option<bool>,
    begin_turn: Option<bool>,
    set_enabled: Option<SetEnabled>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CallSpec {
    tool: Option<String>,
    model_name: Option<String>,
    actor: Actor,
    #[serde(default = "empty_object")]
    input: Value,
    #[serde(default)]
    tool_check: ToolCheck,
    #[serde(default)]
    sensitive: bool,
}

fn empty_object() -> Value {
    json!({})
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    decision: String,
    offers: Option<Vec<Answer>>,
    headline: Option<String>,
    code: Option<Code>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetMode {
    plugin: String,
    effect: Effect,
    mode: Mode,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetEnabled {
    plugin: String,
    enabled: bool,
}

/// Stands in for the tools' own code: it runs every allowed call and reports, per call, the
/// scope check and sensitivity the scenario states.
#[derive(Default)]
struct ScenarioTools {
    next: Mutex<Assessment>,
}

#[async_trait]
impl PluginHandler for ScenarioTools {
    fn assess(&self, _tool: &Tool, _input: &Value, _scope: &Scope) -> Assessment {
        self.next.lock().unwrap().clone()
    }

    async fn run(&self, tool: &Tool, _input: Value, ctx: ToolContext) -> Result<Value, String> {
        Ok(json!({"ran": tool.id, "grant": ctx.grant}))
    }
}

/// Answers each prompt with the step's `answer` (Deny when the step gives none, so an
/// unanswered prompt never runs anything).
#[derive(Default)]
struct ScriptedAnswers {
    next: Mutex<Option<Answer>>,
}

#[async_trait]
impl ApprovalBroker for ScriptedAnswers {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        self.next.lock().unwrap().take().unwrap_or(Answer::Deny)
    }
}

impl Scenario {
    async fn run(self) -> Result<(), String> {
        let answers = Arc::new(ScriptedAnswers::default());
        let tools = Arc::new(ScenarioTools::default());
        let mut options = Options::new(answers.clone());
        options.builtin_plugins = false;
        let engine = Engine::in_memory(options).map_err(|e| e.to_string())?;
        for (index, spec) in self.plugins.into_iter().enumerate() {
            let Value::Object(mut fields) = spec else {
                return Err(format!("bad scenario: plugins[{index}] is not an object"));
            };
            let kind: PluginKind = match fields.remove("kind") {
                Some(kind) => serde_json::from_value(kind)
                    .map_err(|e| format!("bad scenario: plugins[{index}].kind: {e}"))?,
                None => return Err(format!("bad scenario: plugins[{index}].kind is missing")),
            };
            let enabled = fields.remove("enabled").map_or(Ok(true), |v| {
                v.as_bool().ok_or("plugins[].enabled must be a boolean")
            })?;
            let manifest =
                parse_manifest(&Value::Object(fields)).map_err(|e| format!("load error: {e}"))?;
            let plugin = Plugin::load(manifest, kind).map_err(|e| format!("load error: {e}"))?;
            let id = plugin.id.clone();
            engine
                .install(plugin, "scenario", tools.clone())
                .map_err(|e| format!("load error: {e}"))?;
            engine
                .set_enabled(&id, enabled)
                .map_err(|e| e.to_string())?;
        }
        for (plugin, modes) in self.modes {
            for (effect, mode) in modes {
                engine
                    .set_mode(&plugin, effect, mode)
                    .map_err(|e| format!("bad scenario: modes: {e}"))?;
            }
        }
        engine
            .set_rules(self.rules)
            .map_err(|e| format!("bad scenario: {e}"))?;
        give_consent(&engine, self.consent).map_err(|e| e.to_string())?;
        engine
            .open_conversation(CONVERSATION)
            .map_err(|e| e.to_string())?;
        let mut settings = ConversationSettings {
            preset: self.conversation.preset,
            plan_mode: self.conversation.plan_mode,
            ..ConversationSettings::default()
        };
        engine
            .set_conversation_settings(CONVERSATION, settings.clone())
            .map_err(|e| e.to_string())?;
        engine
            .set_scope(CONVERSATION, self.conversation.scope)
            .map_err(|e| e.to_string())?;
        engine
            .set_conversation_rules(CONVERSATION, self.conversation.rules)
            .map_err(|e| format!("bad scenario: conversation.{e}"))?;
        engine.begin_turn(CONVERSATION).map_err(|e| e.to_string())?;
        if self.conversation.tainted {
            engine.taint(CONVERSATION).map_err(|e| e.to_string())?;
        }

        for (index, step) in self.steps.into_iter().enumerate() {
            let at = |msg: String| format!("step {}: {msg}", index + 1);
            if let Some(set) = step.set_mode {
                engine
                    .set_mode(&set.plugin, set.effect, set.mode)
                    .map_err(|e| at(e.to_string()))?;
            } else if let Some(preset) = step.set_preset {
                settings.preset = preset;
                engine
                    .set_conversation_settings(CONVERSATION, settings.clone())
                    .map_err(|e| at(e.to_string()))?;
            } else if let Some(plan_mode) = step.set_plan_mode {
                settings.plan_mode = plan_mode;
                engine
                    .set_conversation_settings(CONVERSATION, settings.clone())
                    .map_err(|e| at(e.to_string()))?;
            } else if step.begin_turn == Some(true) {
                engine
                    .begin_turn(CONVERSATION)
                    .map_err(|e| at(e.to_string()))?;
            } else if let Some(set) = step.set_enabled {
                engine
                    .set_enabled(&set.plugin, set.enabled)
                    .map_err(|e| at(e.to_string()))?;
            } else if let Some(call) = step.call {
                let expect = step
                    .expect
                    .ok_or_else(|| at("a call step needs an expect".into()))?;
                let tool = match (call.tool, call.model_name) {
                    (Some(id), None) => id,
                    (None, Some(name)) => tool_id(&name)
                        .ok_or_else(|| at(format!("model name \"{name}\" maps to no tool id")))?,
                    _ => return Err(at("a call names exactly one of tool and modelName".into())),
                };
                *tools.next.lock().unwrap() = Assessment {
                    check: call.tool_check,
                    reason: (call.tool_check == ToolCheck::Deny)
                        .then(|| "The tool's own check refused this call.".to_owned()),
                    sensitive: call.sensitive,
                };
                *answers.next.lock().unwrap() = step.answer;
                let conversation = (call.actor == Actor::Agent).then(|| CONVERSATION.to_owned());
                let invocation = engine
                    .invoke(Call {
                        tool,
                        actor: call.actor,
                        input: call.input,
                        conversation,
                    })
                    .await;
                let headline = invocation.prompt.as_ref().map(|p| p.headline.as_str());
                check(&expect, &invocation.decision, headline).map_err(at)?;
            } else {
                return Err(at("a step is a call or one of setMode, setPreset, setPlanMode, beginTurn, setEnabled".into()));
            }
        }
        Ok(())
    }
}

/// The scenario's consent, given the way the shell gives it.
fn give_consent(engine: &Engine, consent: ConsentSpec) -> Result<(), harness_core::EngineError> {
    if consent.terms_accepted {
        engine.accept_terms()?;
    }
    let mut capabilities = Vec::new();
    for requirement in consent.met {
        match requirement.as_str() {
            "campus-session" => engine.set_campus_session(true)?,
            "notifications" => {
                engine.report_permission(Permission::Notifications, PermissionState::Granted)?
            }
            "exact-alarm" => {
                engine.report_permission(Permission::ExactAlarm, PermissionState::Granted)?
            }
            _ => capabilities.push(requirement),
        }
    }
    engine.report_capabilities(capabilities)
}

fn check(expect: &Expect, got: &Decision, headline: Option<&str>) -> Result<(), String> {
    let ok = match (expect.decision.as_str(), got.verdict) {
        ("run", Verdict::Run) => true,
        ("ask", Verdict::Ask(kind)) => {
            expect.offers.as_deref().is_none_or(|o| o == kind.offers())
                && expect
                    .headline
                    .as_deref()
                    .is_none_or(|h| Some(h) == headline)
        }
        ("refuse", Verdict::Refuse(code)) => expect.code.is_none_or(|c| c == code),
        ("run" | "ask" | "refuse", _) => false,
        (other, _) => {
            return Err(format!(
                "expect.decision \"{other}\" is not run, ask or refuse"
            ));
        }
    };
    if ok {
        return Ok(());
    }
    let wanted = match expect.decision.as_str() {
        "ask" => {
            let mut s = "ask".to_owned();
            if let Some(offers) = &expect.offers {
                s += &format!(" {}", offers_text(offers));
            }
            if let Some(h) = &expect.headline {
                s += &format!(" \"{h}\"");
            }
            s
        }
        "refuse" => format!("refuse {}", expect.code.map_or("(any code)", Code::as_str)),
        other => other.to_owned(),
    };
    Err(format!("expected {wanted}, got {}", got.describe(headline)))
}

fn offers_text(offers: &[Answer]) -> String {
    let names: Vec<&str> = offers.iter().map(|a| a.as_str()).collect();
    format!("[{}]", names.join(", "))
}
