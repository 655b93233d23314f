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

/// How many of the newest rows the audit screen shows: enough for months of use, few enough
/// to cross the FFI in one list.
pub const SHOWN_ROWS: usize = 10_000;

impl crate::Engine {
    /// The audit screen's rows: the newest [`SHOWN_ROWS`], oldest first.
    pub fn audit_log(&self) -> Result<Vec<crate::store::rows::AuditRow>, crate::EngineError> {
        self.audit(SHOWN_ROWS)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::store::rows::AuditRow;
    use crate::{Engine, Options};

    struct NoBroker;

    #[async_trait::async_trait]
    impl crate::invoke::ApprovalBroker for NoBroker {
        async fn ask(&self, _prompt: crate::invoke::Prompt) -> Answer {
            Answer::Deny
        }
    }

    #[test]
    fn the_audit_screen_shows_the_newest_ten_thousand_rows_oldest_first() {
        let engine = Engine::in_memory(Options::new(Arc::new(NoBroker))).unwrap();
        for _ in 0..SHOWN_ROWS + 1 {
            let row = AuditRow {
                seq: 0,
                at_ms: 0,
                actor: "user".into(),
                conversation: None,
                tool: "wallet.balance".into(),
                effect: None,
                event: "ran".into(),
                detail: None,
                step: None,
                rule: None,
                input_digest: None,
            };
            engine.append_audit(&row).unwrap();
        }
        let shown = engine.audit_log().unwrap();
        assert_eq!(shown.len(), 10_000);
        let first = engine.audit(SHOWN_ROWS + 1).unwrap()[0].seq;
        assert_eq!(shown[0].seq, first + 1);
        assert!(shown.windows(2).all(|w| w[0].seq < w[1].seq));
    }
}
