//! The floor of the FFI cost: a UniFFI library whose calls do nothing, each with the shape of a
//! harness-ffi call, so that scripts/bench-kotlin.sh can measure, in one run on one JVM, what
//! UniFFI and JNA cost by themselves beside what harness-ffi's calls cost. Whatever a floor
//! call costs, its harness-ffi twin pays too; the difference is ours.
//!
//! Never shipped: the phone builds (build-android.sh, build-ios.sh, check-targets.sh) build
//! only `-p harness-ffi`. Same uniffi, same features, same release profile as harness-ffi.

use std::sync::Arc;

uniffi::setup_scaffolding!();

/// The floor of the floor: a top-level function that takes nothing and returns nothing.
#[uniffi::export]
pub fn noop() {}

/// `Actor`'s shape: a plain enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FloorActor {
    User,
    Agent,
    Scheduler,
}

/// `PromptKind`'s shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FloorPromptKind {
    Ordinary,
    Grant,
    Confirm,
    GrantOnce,
}

/// `Answer`'s shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FloorAnswer {
    Allow,
    Deny,
    AlwaysAllow,
    AllowOnce,
    DontAllow,
}

/// `Verdict`'s shape: an enum with data.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FloorVerdict {
    Run,
    Ask {
        kind: FloorPromptKind,
        offers: Vec<FloorAnswer>,
    },
    Refuse {
        code: u32,
    },
}

/// `RuleRef`'s shape.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FloorRuleRef {
    pub global: bool,
    pub index: u32,
}

/// `Decision`'s shape: the small record `decide` returns.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FloorDecision {
    pub verdict: FloorVerdict,
    pub step: u32,
    pub rule: Option<FloorRuleRef>,
}

/// `HarnessError`'s shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum FloorError {
    #[error("invalid argument: {reason}")]
    InvalidArgument { reason: String },
    #[error("{reason}")]
    Other { reason: String },
}

/// `Effect`'s shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FloorEffect {
    Read,
    Write,
    Money,
    Public,
}

/// `ButtonRole`'s shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FloorRole {
    Primary,
    Secondary,
    Destructive,
}

/// `InputRow`'s shape.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FloorInputRow {
    pub name: String,
    pub value: String,
}

/// `AnswerButton`'s shape.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FloorAnswerButton {
    pub answer: FloorAnswer,
    pub label: String,
    pub role: FloorRole,
}

/// `ApprovalSheet`'s shape.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FloorSheet {
    pub kind: FloorPromptKind,
    pub title: String,
    pub headline: String,
    pub plugin_title: String,
    pub tool_title: String,
    pub effect: FloorEffect,
    pub effect_label: String,
    pub inputs: Vec<FloorInputRow>,
    pub input_json: String,
    pub reason_label: String,
    pub reason: String,
    pub answers: Vec<FloorAnswerButton>,
}

/// `ApprovalPrompt`'s shape: what crosses to the Platform with each prompt.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FloorPrompt {
    pub plugin: String,
    pub plugin_title: String,
    pub tool: String,
    pub tool_title: String,
    pub effect: FloorEffect,
    pub input_json: String,
    pub kind: FloorPromptKind,
    pub offers: Vec<FloorAnswer>,
    pub headline: String,
    pub reason: String,
    pub conversation: Option<String>,
    pub sheet: Option<FloorSheet>,
}

/// `Outcome`'s shape.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FloorOutcome {
    Ran {
        result_json: String,
        for_model: String,
    },
    Failed {
        message: String,
    },
    Refused {
        code: u32,
        message: String,
    },
}

/// `Invocation`'s shape: what an agent's call returns.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FloorInvocation {
    pub decision: FloorDecision,
    pub reason: String,
    pub prompt: Option<FloorPrompt>,
    pub answer: Option<FloorAnswer>,
    pub outcome: FloorOutcome,
    pub for_model: String,
}

/// `Platform`'s prompt, alone: the one foreign method a prompt round trip calls.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait FloorPlatform: Send + Sync {
    async fn ask_approval(&self, id: u64, prompt: FloorPrompt) -> Result<FloorAnswer, FloorError>;
}

/// A foreign implementation threw something its method does not declare.
impl From<uniffi::UnexpectedUniFFICallbackError> for FloorError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        FloorError::Other { reason: e.reason }
    }
}

/// An object like `Harness`, opened with the shell's platform: its methods are called through
/// a cloned handle, as `Harness`'s.
#[derive(uniffi::Object)]
pub struct Floor {
    platform: Arc<dyn FloorPlatform>,
}

/// The sample data's texts, so that what crosses is as long as what `Harness` sends.
const SEATS: &str = r#"{"canteen":"学一食堂","seats":2,"time":"12:00"}"#;
const RESERVED: &str = r#"{"reserved":true,"canteen":"学一食堂","seats":2,"time":"12:00"}"#;

fn ask_decision() -> FloorDecision {
    FloorDecision {
        verdict: FloorVerdict::Ask {
            kind: FloorPromptKind::Ordinary,
            offers: vec![
                FloorAnswer::Allow,
                FloorAnswer::Deny,
                FloorAnswer::AlwaysAllow,
            ],
        },
        step: 15,
        rule: None,
    }
}

fn prompt() -> FloorPrompt {
    let button = |answer, label: &str, role| FloorAnswerButton {
        answer,
        label: label.to_owned(),
        role,
    };
    let row = |name: &str, value: &str| FloorInputRow {
        name: name.to_owned(),
        value: value.to_owned(),
    };
    FloorPrompt {
        plugin: "canteen".into(),
        plugin_title: "食堂".into(),
        tool: "canteen.reserve".into(),
        tool_title: "预订餐位".into(),
        effect: FloorEffect::Write,
        input_json: SEATS.into(),
        kind: FloorPromptKind::Ordinary,
        offers: vec![
            FloorAnswer::Allow,
            FloorAnswer::Deny,
            FloorAnswer::AlwaysAllow,
        ],
        headline: "预订餐位".into(),
        reason: "canteen's mode for write is ask".into(),
        conversation: Some("bench".into()),
        sheet: Some(FloorSheet {
            kind: FloorPromptKind::Ordinary,
            title: "允许 食堂 预订餐位？".into(),
            headline: "预订餐位".into(),
            plugin_title: "食堂".into(),
            tool_title: "预订餐位".into(),
            effect: FloorEffect::Write,
            effect_label: "写入".into(),
            inputs: vec![
                row("canteen", "学一食堂"),
                row("seats", "2"),
                row("time", "12:00"),
            ],
            input_json:
                "{\n  \"canteen\": \"学一食堂\",\n  \"seats\": 2,\n  \"time\": \"12:00\"\n}".into(),
            reason_label: "为什么询问".into(),
            reason: "canteen 的「写入」权限为「询问」".into(),
            answers: vec![
                button(FloorAnswer::Allow, "允许", FloorRole::Primary),
                button(FloorAnswer::Deny, "拒绝", FloorRole::Secondary),
                button(FloorAnswer::AlwaysAllow, "始终允许", FloorRole::Secondary),
            ],
        }),
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl Floor {
    #[uniffi::constructor]
    pub fn new(platform: Arc<dyn FloorPlatform>) -> Arc<Self> {
        Arc::new(Floor { platform })
    }

    /// `Harness::ping`'s shape: a method returning `Result<(), _>` that does nothing.
    pub fn ping(&self) -> Result<(), FloorError> {
        Ok(())
    }

    /// `Harness::decide`'s shape: an enum and three strings (one optional) in, the decision
    /// record of an ordinary prompt out (what the bench's `decide` returns), no work.
    pub fn decide(
        &self,
        actor: FloorActor,
        tool: String,
        input_json: String,
        conversation: Option<String>,
    ) -> Result<FloorDecision, FloorError> {
        let _ = (actor, tool, input_json, conversation);
        Ok(ask_decision())
    }

    /// `Harness::invoke_as_agent`'s shape for a read that runs unasked: ready at the first poll,
    /// returning an invocation as long as the wallet's.
    pub async fn invoke_read(
        &self,
        conversation: String,
        tool: String,
        input_json: String,
    ) -> Result<FloorInvocation, FloorError> {
        let _ = (conversation, tool, input_json);
        let balance = r#"{"balance":128.5,"currency":"CNY"}"#;
        Ok(FloorInvocation {
            decision: FloorDecision {
                verdict: FloorVerdict::Run,
                step: 15,
                rule: None,
            },
            reason: "wallet's mode for read is auto".into(),
            prompt: None,
            answer: None,
            outcome: FloorOutcome::Ran {
                result_json: balance.into(),
                for_model: balance.into(),
            },
            for_model: balance.into(),
        })
    }

    /// `Harness::invoke_as_agent`'s shape for a call that asks: sends the prompt (with its
    /// sheet) to the Platform, awaits its answer, and returns the invocation with the prompt.
    pub async fn invoke_prompted(
        &self,
        conversation: String,
        tool: String,
        input_json: String,
    ) -> Result<FloorInvocation, FloorError> {
        let _ = (conversation, tool, input_json);
        let answer = self.platform.ask_approval(1, prompt()).await?;
        Ok(FloorInvocation {
            decision: ask_decision(),
            reason: "canteen's mode for write is ask".into(),
            prompt: Some(FloorPrompt {
                sheet: None,
                ..prompt()
            }),
            answer: Some(answer),
            outcome: FloorOutcome::Ran {
                result_json: RESERVED.into(),
                for_model: RESERVED.into(),
            },
            for_model: RESERVED.into(),
        })
    }
}
