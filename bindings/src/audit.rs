//! The audit log as the audit screen shows it.

use harness_core::store::rows::AuditRow;

/// One audit log row.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct AuditEntry {
    /// Increasing, in the order written.
    pub seq: i64,
    pub at_ms: i64,
    /// `user`, `agent` or `scheduler`.
    pub actor: String,
    pub conversation: Option<String>,
    pub tool: String,
    pub effect: Option<String>,
    /// `decided`, `answered`, `ran`, `failed` or `stopped`.
    pub event: String,
    /// The verdict (`run`, `ask:ordinary`, `refuse:blocked`), the answer, the failure or the code.
    pub detail: Option<String>,
    /// The deciding step of the decision (`8i`).
    pub step: Option<String>,
    /// The deciding rule (`global[0]`).
    pub rule: Option<String>,
    /// A digest of the call's inputs (never the inputs).
    pub input_digest: Option<String>,
}

impl From<AuditRow> for AuditEntry {
    fn from(r: AuditRow) -> Self {
        AuditEntry {
            seq: r.seq,
            at_ms: r.at_ms,
            actor: r.actor,
            conversation: r.conversation,
            tool: r.tool,
            effect: r.effect,
            event: r.event,
            detail: r.detail,
            step: r.step,
            rule: r.rule,
            input_digest: r.input_digest,
        }
    }
}
