//! The audit log: every decision, answer and outcome, with the deciding step and rule and a
//! digest of the inputs. [`Audit`] owns it; its rows are in `store::audit`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::policy::{Answer, Decision, RuleScope, Verdict};
use crate::store::audit::{self as rows, AuditRow};
use crate::store::{AUDIT_PRUNE_EVERY, Store, StoreError};

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
    /// Nobody answered the prompt within `approvals.timeoutMinutes`: it counts as declined.
    Unanswered {
        minutes: u32,
    },
    /// The student took a public call back (撤销) in its undo window: nothing was sent.
    Undone,
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
            AuditEvent::Unanswered { minutes } => {
                ("unanswered", Some(minutes.to_string()), None, None)
            }
            AuditEvent::Undone => ("undone", None, None, None),
        }
    }
}

/// The owner of the audit log: appends (pruning every [`AUDIT_PRUNE_EVERY`] appends), prunes
/// and reads.
pub struct Audit {
    store: Arc<Store>,
    appends: AtomicU64,
}

impl Audit {
    pub(crate) fn new(store: Arc<Store>) -> Self {
        Self {
            store,
            appends: AtomicU64::new(0),
        }
    }

    /// The newest `limit` audit rows, oldest first.
    pub fn read(&self, limit: usize) -> Result<Vec<AuditRow>, StoreError> {
        self.store.read(|c| rows::audit(c, limit))
    }

    pub fn append(&self, row: &AuditRow) -> Result<(), StoreError> {
        let n = self.appends.fetch_add(1, Ordering::Relaxed) + 1;
        self.store.write(|tx| {
            rows::append_audit(tx, row)?;
            if n.is_multiple_of(AUDIT_PRUNE_EVERY) {
                rows::prune_audit(tx)?;
            }
            Ok(())
        })
    }

    /// Drops all but the newest rows; done at open.
    pub fn prune(&self) -> Result<(), StoreError> {
        self.store.write(rows::prune_audit).map(drop)
    }

    /// The audit screen's rows: the newest [`SHOWN_ROWS`], oldest first.
    pub fn shown(&self) -> Result<Vec<AuditRow>, StoreError> {
        self.read(SHOWN_ROWS)
    }
}

/// How many of the newest rows the audit screen shows: enough for months of use, few enough
/// to cross the FFI in one list.
pub const SHOWN_ROWS: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_audit_screen_shows_the_newest_ten_thousand_rows_oldest_first() {
        let audit = Audit::new(Arc::new(Store::open_in_memory().unwrap()));
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
            audit.append(&row).unwrap();
        }
        let shown = audit.shown().unwrap();
        assert_eq!(shown.len(), 10_000);
        let first = audit.read(SHOWN_ROWS + 1).unwrap()[0].seq;
        assert_eq!(shown[0].seq, first + 1);
        assert!(shown.windows(2).all(|w| w[0].seq < w[1].seq));
    }
}
