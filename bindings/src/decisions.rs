//! The permission decision and the one invoke path as the shells see them: who calls, the
//! verdict and its deciding step and rule, the approval prompt, the outcome, and the rules.
//!
//! JSON values (inputs, results, schemas, rule conditions) cross as strings whose field names
//! end in `_json`.

use harness_core::invoke;
use harness_core::policy::{self, Answer, Code, PromptKind, RuleKind, RuleRef, Step};
use harness_core::registry::Effect;
use harness_core::screens::{ApprovalNotice, ApprovalSheet};

use crate::error::{HarnessError, parse_json};

/// What the decision says about a call.
// Not the core's `policy::Verdict`: its `Ask` carries only the prompt kind, and the shells are
// given the offers with it.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Verdict {
    Run,
    /// The user is asked, with these offers.
    Ask {
        kind: PromptKind,
        offers: Vec<Answer>,
    },
    Refuse {
        code: Code,
    },
}

/// What was decided, at which step, and by which rule (if a rule decided).
// Not the core's `policy::Decision`: it carries the `Verdict` above.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Decision {
    pub verdict: Verdict,
    pub step: Step,
    pub rule: Option<RuleRef>,
}

/// `{kind, tool: "<plugin>.<tool>" | "<plugin>.*" | "*", effect?, when?}`. `when_json`, if
/// given, is a JSON object of top-level input fields that must all equal the call's.
// Not the core's `policy::Rule`: its `when` is a JSON object, and crosses as text.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Rule {
    pub kind: RuleKind,
    pub tool: String,
    #[uniffi(default = None)]
    pub effect: Option<Effect>,
    #[uniffi(default = None)]
    pub when_json: Option<String>,
}

/// An approval prompt, as the shell shows it.
// Not the core's `invoke::Prompt`: its input is JSON, and crosses as text; the sheet is added.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ApprovalPrompt {
    pub plugin: String,
    pub plugin_title: String,
    /// `<plugin id>.<tool name>`
    pub tool: String,
    pub tool_title: String,
    pub effect: Effect,
    /// The call's inputs, shown to the user.
    pub input_json: String,
    pub kind: PromptKind,
    /// The answers to offer, in the order to show them.
    pub offers: Vec<Answer>,
    /// The target for alwaysAsk and targeted tools; the tool's title otherwise.
    pub headline: String,
    /// Why the user is asked.
    pub reason: String,
    pub conversation: Option<String>,
    /// What the approval sheet shows, in the user's language: present in every prompt the
    /// Platform is asked to show; none in an `Invocation`'s record of a prompt.
    pub sheet: Option<ApprovalSheet>,
    /// The notification to post when the app is not in front (issue 41.3): never the inputs;
    /// its tap opens the sheet only after unlock. Present with `sheet`.
    #[uniffi(default)]
    pub notice: Option<ApprovalNotice>,
}

/// How a call ended.
// Not the core's `invoke::Outcome`: its result is JSON, and crosses as text.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum Outcome {
    /// The tool ran: the whole result for the UI, and the model's copy (cut to 12,000 chars).
    Ran {
        result_json: String,
        for_model: String,
    },
    /// The tool ran and failed; the message is for the user.
    Failed { message: String },
    /// The call did not run; the message says which setting to change, and where.
    Refused { code: Code, message: String },
}

/// The decision, the prompt and answer if the user was asked, and the outcome.
// Not the core's `invoke::Invocation`: it carries the records above, and `for_model` computed.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Invocation {
    pub decision: Decision,
    /// Why the deciding step decided, in words.
    pub reason: String,
    pub prompt: Option<ApprovalPrompt>,
    pub answer: Option<Answer>,
    pub outcome: Outcome,
    /// What the agent receives: the (cut) result, or `{"error": {"code", "message"}}`.
    pub for_model: String,
}

/// A tool as the model is offered it.
// Not the core's `invoke::ModelTool`: its input schema is JSON, and crosses as text.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ModelTool {
    pub name: String,
    pub description: String,
    pub input_schema_json: String,
}

impl From<policy::Verdict> for Verdict {
    fn from(v: policy::Verdict) -> Self {
        match v {
            policy::Verdict::Run => Verdict::Run,
            policy::Verdict::Ask(kind) => Verdict::Ask {
                kind,
                offers: kind.offers().to_vec(),
            },
            policy::Verdict::Refuse(code) => Verdict::Refuse { code },
        }
    }
}

impl From<policy::Decision> for Decision {
    fn from(d: policy::Decision) -> Self {
        Decision {
            verdict: d.verdict.into(),
            step: d.step,
            rule: d.rule,
        }
    }
}

impl From<invoke::Prompt> for ApprovalPrompt {
    fn from(p: invoke::Prompt) -> Self {
        ApprovalPrompt {
            plugin: p.plugin,
            plugin_title: p.plugin_title,
            tool: p.tool,
            tool_title: p.tool_title,
            effect: p.effect,
            input_json: p.input.to_string(),
            kind: p.kind,
            offers: p.offers,
            headline: p.headline,
            reason: p.reason,
            conversation: p.conversation,
            sheet: None,
            notice: None,
        }
    }
}

impl ApprovalPrompt {
    pub(crate) fn new(
        prompt: invoke::Prompt,
        sheet: ApprovalSheet,
        notice: ApprovalNotice,
    ) -> Self {
        ApprovalPrompt {
            sheet: Some(sheet),
            notice: Some(notice),
            ..prompt.into()
        }
    }
}

impl From<invoke::Outcome> for Outcome {
    fn from(o: invoke::Outcome) -> Self {
        match o {
            invoke::Outcome::Ran { result, for_model } => Outcome::Ran {
                result_json: result.to_string(),
                for_model,
            },
            invoke::Outcome::Failed { message } => Outcome::Failed { message },
            invoke::Outcome::Refused { code, message } => Outcome::Refused { code, message },
        }
    }
}

impl From<invoke::Invocation> for Invocation {
    fn from(i: invoke::Invocation) -> Self {
        let for_model = i.for_model();
        Invocation {
            decision: i.decision.into(),
            reason: i.reason,
            prompt: i.prompt.map(Into::into),
            answer: i.answer,
            outcome: i.outcome.into(),
            for_model,
        }
    }
}

impl From<invoke::ModelTool> for ModelTool {
    fn from(t: invoke::ModelTool) -> Self {
        ModelTool {
            name: t.name,
            description: t.description,
            input_schema_json: t.input_schema.to_string(),
        }
    }
}

/// Converts rules, parsing each `when_json`; an error names the rule by its index.
pub(crate) fn core_rules(rules: Vec<Rule>) -> Result<Vec<policy::Rule>, HarnessError> {
    rules
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let when = match r.when_json {
                None => None,
                Some(text) => match parse_json(&format!("rules[{i}].when_json"), &text)? {
                    serde_json::Value::Object(fields) => Some(fields),
                    _ => {
                        return Err(HarnessError::invalid(format!(
                            "rules[{i}].when_json: must be a JSON object"
                        )));
                    }
                },
            };
            Ok(policy::Rule {
                kind: r.kind,
                tool: r.tool,
                effect: r.effect,
                when,
            })
        })
        .collect()
}

/// The code string the agent sees for a refusal (`"blocked"`, `"declined"`, …).
#[uniffi::export]
pub fn refusal_code_string(code: Code) -> String {
    code.as_str().to_owned()
}
