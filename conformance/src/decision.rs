//! Decision scenarios (FORMAT.md, "Decision scenarios"): plugins, modes, rules, a conversation
//! and consent, then steps that call tools and check what the real engine decided.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use harness_core::campus::keys;
use harness_core::campus::wire::Service;
use harness_core::consent::{Permission, PermissionState};
use harness_core::invoke::{ApprovalBroker, Assessment, Call, PluginHandler, Prompt, ToolContext};
use harness_core::plugins::{document, script};
use harness_core::policy::{Actor, Answer, Code, Decision, Mode, Preset, Rule, ToolCheck, Verdict};
use harness_core::registry::{Effect, McpTool, Plugin, PluginKind, Tool, parse_manifest, tool_id};
use harness_core::secrets::{SecretError, SecretStore};
use harness_core::settings::Change;
use harness_core::turn::{ConversationSettings, Scope};
use harness_core::{Engine, EngineError, Options};
use serde::Deserialize;
use serde::de::{Deserializer, Error as _};
use serde_json::{Map, Value, json};

use crate::{numbered, one_kind, typed, yes};

/// The conversation agent calls in a scenario take place in.
const CONVERSATION: &str = "scenario";

/// TypeScript plugins a scenario may name beside the shipped ones: the SDK's smallest plugin.
const TEST_BUNDLES: &[(&str, &str)] = &[(
    "echo",
    include_str!("../../sdk/test-plugins/echo/bundle.js"),
)];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Scenario {
    #[serde(default, deserialize_with = "plugins")]
    plugins: Vec<PluginSpec>,
    #[serde(default)]
    modes: BTreeMap<String, BTreeMap<Effect, Mode>>,
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    conversation: ConversationSpec,
    #[serde(default)]
    consent: ConsentSpec,
    /// The student's money limits (DESIGN.md §3 8e), in whole yuan; absent, the defaults.
    #[serde(default)]
    money: MoneySpec,
    #[serde(deserialize_with = "steps")]
    steps: Vec<Step>,
}

fn plugins<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PluginSpec>, D::Error> {
    numbered(d, "plugin", 0)
}

fn steps<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Step>, D::Error> {
    numbered(d, "step", 1)
}

/// A plugin as the scenario states it: its kind and whether it is enabled, beside the manifest
/// the core parses (which refuses unknown keys itself).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PluginSpec {
    kind: PluginKind,
    #[serde(default = "yes")]
    enabled: bool,
    /// A remote plugin as its server's `tools/list` gives it (with `id` `mcp-<server>`): the
    /// effects come from `readOnlyHint`, as `Plugin::from_mcp` maps them.
    #[serde(default)]
    mcp_tools: Option<Vec<McpTool>>,
    /// A plugin document's whole text (PLUGIN.md), loaded as its `kind`.
    #[serde(default)]
    document: Option<String>,
    /// The id of a TypeScript plugin the library ships (`plugins::script::BUNDLES`), its
    /// manifest read from the bundle and its tools run by the engine.
    #[serde(default)]
    bundle: Option<String>,
    #[serde(flatten)]
    manifest: Map<String, Value>,
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

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MoneySpec {
    per_payment_yuan: Option<u32>,
    per_day_yuan: Option<u32>,
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

/// One step: exactly one kind.
enum Step {
    Call {
        call: CallSpec,
        expect: Expect,
        answer: Option<Answer>,
    },
    SetMode(SetMode),
    SetPreset(Preset),
    SetPlanMode(bool),
    BeginTurn,
    SetEnabled(SetEnabled),
}

const STEP_KINDS: &[&str] = &[
    "call",
    "setMode",
    "setPreset",
    "setPlanMode",
    "beginTurn",
    "setEnabled",
];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CallStep {
    call: CallSpec,
    expect: Expect,
    answer: Option<Answer>,
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(d)?;
        let kind = one_kind(&map, STEP_KINDS, "a step").map_err(D::Error::custom)?;
        if kind == "call" {
            let step: CallStep = typed(Value::Object(map))?;
            return Ok(Step::Call {
                call: step.call,
                expect: step.expect,
                answer: step.answer,
            });
        }
        let value = map.remove(kind).expect("the kind's key is present");
        if let Some(other) = map.keys().next() {
            return Err(D::Error::custom(format!(
                "unknown field `{other}` beside `{kind}`: a {kind} step has no other key"
            )));
        }
        Ok(match kind {
            "setMode" => Step::SetMode(typed(value)?),
            "setPreset" => Step::SetPreset(typed(value)?),
            "setPlanMode" => Step::SetPlanMode(typed(value)?),
            "beginTurn" => match value {
                Value::Bool(true) => Step::BeginTurn,
                other => {
                    return Err(D::Error::custom(format!(
                        "beginTurn is true or absent, got {other}"
                    )));
                }
            },
            "setEnabled" => Step::SetEnabled(typed(value)?),
            _ => unreachable!("one_kind returns one of STEP_KINDS"),
        })
    }
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

/// What a call must decide. A refusal names its code: "refused, for any reason" would pass a
/// scenario whose call was refused for the wrong one.
#[derive(Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case", deny_unknown_fields)]
enum Expect {
    Run {},
    Ask {
        offers: Option<Vec<Answer>>,
        headline: Option<String>,
    },
    Refuse {
        code: Code,
    },
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
    /// A scenario passes only by checking something: without a call there is nothing to check.
    pub(crate) fn validate(&self, scenario: &str) -> Result<(), String> {
        if self.steps.iter().any(|s| matches!(s, Step::Call { .. })) {
            Ok(())
        } else {
            Err(format!(
                "{scenario} has no step that checks anything (a call with its expect)"
            ))
        }
    }

    pub(crate) async fn run(self) -> Result<(), String> {
        let answers = Arc::new(ScriptedAnswers::default());
        let tools = Arc::new(ScenarioTools::default());
        let mut options = Options::new(answers.clone());
        options.builtin_plugins = false;
        if self.consent.met.iter().any(|m| m == "campus-session") {
            signed_in(&*options.secrets).map_err(|e| e.to_string())?;
        }
        let engine = Engine::in_memory(options).map_err(|e| e.to_string())?;
        for spec in self.plugins {
            let mut handler: Arc<dyn PluginHandler> = tools.clone();
            let plugin = match (spec.mcp_tools, spec.document, spec.bundle) {
                (Some(tools), None, None) => {
                    let id = spec.manifest.get("id").and_then(Value::as_str).unwrap_or("");
                    let server = id.strip_prefix("mcp-").ok_or_else(|| {
                        format!("bad scenario: a plugin with mcpTools has the id mcp-<server>, not \"{id}\"")
                    })?;
                    Plugin::from_mcp(server, server, &tools)
                }
                (None, Some(text), None) => document::parse(&text)
                    .and_then(|doc| Plugin::load(doc.manifest, spec.kind)),
                (None, None, Some(id)) => {
                    if spec.kind != PluginKind::Bundled || !spec.manifest.is_empty() {
                        return Err(format!(
                            "bad scenario: the bundle \"{id}\" is a plugin of kind bundled with no other key beside kind and enabled"
                        ));
                    }
                    let source = script::BUNDLES
                        .iter()
                        .find(|bundle| bundle.id == id)
                        .map(|bundle| bundle.source())
                        .or_else(|| {
                            TEST_BUNDLES
                                .iter()
                                .find(|(shipped, _)| *shipped == id)
                                .map(|(_, source)| source.to_string())
                        })
                        .ok_or_else(|| format!("bad scenario: the library ships no bundle \"{id}\""))?;
                    script::load(&source, script::Limits::default()).map(|(plugin, script)| {
                        handler = script;
                        plugin
                    })
                }
                (None, None, None) => parse_manifest(&Value::Object(spec.manifest))
                    .and_then(|manifest| Plugin::load(manifest, spec.kind)),
                _ => {
                    return Err(
                        "bad scenario: a plugin has at most one of mcpTools, document and bundle".into(),
                    );
                }
            }
            .map_err(|e| format!("load error: {e}"))?;
            let id = plugin.id.clone();
            engine
                .install(plugin, "scenario", handler)
                .map_err(|e| format!("load error: {e}"))?;
            engine
                .set_enabled(&id, spec.enabled)
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
        let limits = [
            ("money.perPaymentYuan", self.money.per_payment_yuan),
            ("money.perDayYuan", self.money.per_day_yuan),
        ];
        for (key, value) in limits {
            if let Some(value) = value {
                engine
                    .change_setting(Change::MoneyLimit {
                        key: key.to_owned(),
                        value,
                    })
                    .map_err(|e| format!("bad scenario: money: {e}"))?;
            }
        }
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
            match step {
                Step::SetMode(set) => engine
                    .set_mode(&set.plugin, set.effect, set.mode)
                    .map_err(|e| at(e.to_string()))?,
                Step::SetPreset(preset) => {
                    settings.preset = preset;
                    engine
                        .set_conversation_settings(CONVERSATION, settings.clone())
                        .map_err(|e| at(e.to_string()))?;
                }
                Step::SetPlanMode(plan_mode) => {
                    settings.plan_mode = plan_mode;
                    engine
                        .set_conversation_settings(CONVERSATION, settings.clone())
                        .map_err(|e| at(e.to_string()))?;
                }
                Step::BeginTurn => {
                    engine
                        .begin_turn(CONVERSATION)
                        .map_err(|e| at(e.to_string()))?;
                }
                Step::SetEnabled(set) => engine
                    .set_enabled(&set.plugin, set.enabled)
                    .map_err(|e| at(e.to_string()))?,
                Step::Call {
                    call,
                    expect,
                    answer,
                } => {
                    let tool = match (call.tool, call.model_name) {
                        (Some(id), None) => id,
                        (None, Some(name)) => tool_id(&name).ok_or_else(|| {
                            at(format!("model name \"{name}\" maps to no tool id"))
                        })?,
                        _ => {
                            return Err(
                                at("a call names exactly one of tool and modelName".into()),
                            );
                        }
                    };
                    *tools.next.lock().unwrap() = Assessment {
                        check: call.tool_check,
                        reason: (call.tool_check == ToolCheck::Deny)
                            .then(|| "The tool's own check refused this call.".to_owned()),
                        sensitive: call.sensitive,
                        target: None,
                    };
                    *answers.next.lock().unwrap() = answer;
                    let conversation =
                        (call.actor == Actor::Agent).then(|| CONVERSATION.to_owned());
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
                    // An answer nobody was asked for would be dropped here, or answer a later
                    // step's prompt: either way the scenario does not test what it says.
                    if let (Some(given), None) = (answer, &invocation.prompt) {
                        return Err(at(format!(
                            "it gives the answer \"{}\", but the call raised no prompt to answer: \
                             it was decided {}; remove the answer or make the call ask",
                            given.as_str(),
                            invocation.decision.describe(None)
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The keystore as a campus sign-in leaves it — the account and every service's session — so
/// the engine opens signed in and the consent's campus session is met (DESIGN.md §4). The
/// sign-in itself is tested against the campus simulator (core/tests/campus.rs).
fn signed_in(secrets: &dyn SecretStore) -> Result<(), SecretError> {
    secrets.set(keys::ACCOUNT, "2100012345")?;
    for service in Service::ALL {
        secrets.set(&keys::session(service), "{}")?;
    }
    Ok(())
}

/// The scenario's consent, given the way the shell gives it.
fn give_consent(engine: &Engine, consent: ConsentSpec) -> Result<(), EngineError> {
    if consent.terms_accepted {
        engine.accept_terms()?;
    }
    let mut capabilities = Vec::new();
    for requirement in consent.met {
        match requirement.as_str() {
            // Met by the sessions in the keystore (see `signed_in`).
            "campus-session" => {}
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
    let ok = match (expect, got.verdict) {
        (Expect::Run {}, Verdict::Run) => true,
        (
            Expect::Ask {
                offers,
                headline: h,
            },
            Verdict::Ask(kind),
        ) => {
            offers.as_deref().is_none_or(|o| o == kind.offers())
                && h.as_deref().is_none_or(|h| Some(h) == headline)
        }
        (Expect::Refuse { code }, Verdict::Refuse(got)) => *code == got,
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let wanted = match expect {
        Expect::Run {} => "run".to_owned(),
        Expect::Ask { offers, headline } => {
            let mut s = "ask".to_owned();
            if let Some(offers) = offers {
                let names: Vec<&str> = offers.iter().map(|a| a.as_str()).collect();
                s += &format!(" [{}]", names.join(", "));
            }
            if let Some(h) = headline {
                s += &format!(" \"{h}\"");
            }
            s
        }
        Expect::Refuse { code } => format!("refuse {}", code.as_str()),
    };
    Err(format!("expected {wanted}, got {}", got.describe(headline)))
}
