//! The audit log: every decision, answer and outcome, with the deciding step and rule and a
//! digest of the inputs. The store keeps it (`store::rows::AuditRow`).

use crate::policy::{Answer, Decision, RuleScope, Verdict};

#[derive(Debug, Clone, PartialEq)]
pub enum AuditEvent {
    Decided {
        decision: Decision,
    },
    Answered {
        answer: Answer,
    },
    Ran,
    Failed {
        message: String,
    },
    /// The call was stopped after the decision: declined at the prompt, or an answer the
    /// prompt did not offer.
    Stopped {
        code: String,
    },
}

impl AuditEvent {
    /// (event, detail, step, rule) as stored.
    pub fn columns(self) -> (&'static str, Option<String>, Option<String>, Option<String>) {
        match self {
            AuditEvent::Decided { decision } => {
                let verdict = match decision.verdict {
                    Verdict::Run => "run".to_owned(),
                    Verdict::Ask(kind) => format!(
                        "ask:{}",
                        serde_json::to_value(kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default()
                    ),
                    Verdict::Refuse(code) => format!("refuse:{}", code.as_str()),
                };
                let rule = decision.rule.map(|r| {
                    let scope = match r.scope {
                        RuleScope::Global => "global",
                        RuleScope::Conversation => "conversation",
                    };
                    format!("{scope}[{}]", r.index)
                });
                (
                    "decided",
                    Some(verdict),
                    Some(decision.step.label().to_owned()),
                    rule,
                )
            }
            AuditEvent::Answered { answer } => {
                ("answered", Some(answer.as_str().to_owned()), None, None)
            }
            AuditEvent::Ran => ("ran", None, None, None),
            AuditEvent::Failed { message } => ("failed", Some(message), None, None),
            AuditEvent::Stopped { code } => ("stopped", Some(code), None, None),
        }
    }
}
