//! The chat: the conversation's messages, the answer as it streams, each tool call with what
//! was decided about it and its result, the turn's state, and cancel.

use serde_json::Value;

use super::live::Live;
use super::texts::{refusal_words, title, tr};
use super::{Action, Button, ButtonRole};
use crate::engine::{Engine, EngineError};
use crate::policy::Code;
use crate::registry::tool_id;
use crate::settings::Language;
use crate::store::history::MessageRow;

/// How many messages the chat reads back.
const SHOWN: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum ChatItemKind {
    User,
    Assistant,
    Thinking,
    ToolCall,
    /// A line about the turn itself (it was cancelled, it failed).
    Notice,
}

/// A tool call as the chat shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ToolCallView {
    pub call: String,
    /// The tool's title, or the name the model wrote when no tool has it.
    pub title: String,
    pub tool: Option<String>,
    pub input_json: String,
    /// What was decided, in words (`Ran`, `Asked you`, `Refused: …`); empty before a decision.
    pub decision: String,
    /// The result (the UI's whole copy), or why it did not run; none while it runs.
    pub result: Option<String>,
    pub ok: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ChatItem {
    pub kind: ChatItemKind,
    pub text: String,
    pub tool_call: Option<ToolCallView>,
}

impl ChatItem {
    fn text(kind: ChatItemKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            tool_call: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ChatScreen {
    pub conversation: String,
    pub title: String,
    pub items: Vec<ChatItem>,
    /// The running turn's id, if one runs.
    pub running_turn: Option<String>,
    /// `Thinking…`, `Working…`, or empty when no turn runs.
    pub status: String,
    /// Plan mode's note when it is on.
    pub plan_mode_note: Option<String>,
    pub placeholder: String,
    pub send_label: String,
    /// False while a turn runs: one turn at a time per conversation.
    pub can_send: bool,
    pub cancel: Option<Button>,
    /// Attach a text or Markdown file: opens the system's picker.
    pub attach: Button,
    /// The names of the documents attached to this conversation.
    pub documents: Vec<String>,
    /// "Sign in to the campus again", after a plugin found the campus session ended; opens
    /// the campus account screen.
    pub campus_notice: Option<Button>,
}

pub(super) fn build(
    engine: &Engine,
    live: &Live,
    lang: Language,
    conversation: &str,
) -> Result<ChatScreen, EngineError> {
    let settings = engine.open_conversation(conversation)?;
    let rows = engine.history(conversation, None, SHOWN)?;
    let mut items = Vec::new();
    for row in &rows {
        push_row(engine, live, lang, row, &mut items);
    }
    let turn = live.turn(conversation);
    let running = turn.as_ref().filter(|t| t.running);
    if let Some(t) = running {
        if !t.thinking.is_empty() {
            items.push(ChatItem::text(ChatItemKind::Thinking, t.thinking.clone()));
        }
        if !t.text.is_empty() {
            items.push(ChatItem::text(ChatItemKind::Assistant, t.text.clone()));
        }
    }
    if let Some((state, message)) = turn.as_ref().and_then(|t| t.ended.clone()) {
        let what = match state.as_str() {
            "cancelled" => tr(lang, "已取消", "Cancelled"),
            "interrupted" => tr(lang, "已中断", "Interrupted"),
            _ => tr(lang, "这一轮没有完成", "This turn did not finish"),
        };
        let text = match message {
            Some(m) => format!("{what}: {m}"),
            None => what.to_owned(),
        };
        items.push(ChatItem::text(ChatItemKind::Notice, text));
    }
    let status = match running {
        None => "",
        Some(t) if t.text.is_empty() && !t.thinking.is_empty() => tr(lang, "思考中…", "Thinking…"),
        Some(_) => tr(lang, "处理中…", "Working…"),
    };
    let documents = engine
        .documents(conversation)?
        .into_iter()
        .map(|(_, name, _)| name)
        .collect();
    let campus_notice = live.signin_asked(|| engine.campus().signed_in()).then(|| {
        Button::new(
            tr(
                lang,
                "校园账号的登录已过期，点这里重新登录",
                "Your campus sign-in has ended: tap to sign in again",
            )
            .into(),
            ButtonRole::Primary,
            Action::Open {
                route: super::Route::CampusAccount,
            },
        )
    });
    Ok(ChatScreen {
        campus_notice,
        conversation: conversation.to_owned(),
        title: tr(lang, "对话", "Chat").into(),
        items,
        running_turn: running.map(|t| t.turn.clone()),
        status: status.into(),
        plan_mode_note: settings.plan_mode.then(|| {
            tr(
                lang,
                "计划模式：只运行读取，其他操作先列入计划",
                "Plan mode: only reads run; other actions are planned, not done",
            )
            .into()
        }),
        placeholder: tr(lang, "输入消息", "Message").into(),
        send_label: tr(lang, "发送", "Send").into(),
        // DESIGN.md §3: words sent while a turn runs join it at its next step.
        can_send: true,
        cancel: running.map(|t| {
            Button::new(
                tr(lang, "停止", "Stop").into(),
                ButtonRole::Destructive,
                Action::CancelTurn {
                    turn: t.turn.clone(),
                },
            )
        }),
        attach: Button::new(
            tr(lang, "添加文件", "Attach a file").into(),
            ButtonRole::Normal,
            Action::PickDocument {
                conversation: conversation.to_owned(),
            },
        ),
        documents,
    })
}

fn push_row(
    engine: &Engine,
    live: &Live,
    lang: Language,
    row: &MessageRow,
    items: &mut Vec<ChatItem>,
) {
    match row.role.as_str() {
        "user" => items.push(ChatItem::text(
            ChatItemKind::User,
            row.content.clone().unwrap_or_default(),
        )),
        "assistant" => {
            if let Some(thinking) = row.thinking.as_ref().filter(|t| !t.is_empty()) {
                items.push(ChatItem::text(ChatItemKind::Thinking, thinking.clone()));
            }
            if let Some(text) = row.content.as_ref().filter(|t| !t.is_empty()) {
                items.push(ChatItem::text(ChatItemKind::Assistant, text.clone()));
            }
            for call in &row.tool_calls {
                let tool = tool_id(&call.name).and_then(|id| engine.tool(&id));
                let decision = live.decision(&call.id).map_or(String::new(), |d| {
                    match d.verdict.as_str() {
                        "run" => tr(lang, "已运行", "Ran"),
                        "ask" => tr(lang, "询问了你", "Asked you"),
                        _ => tr(lang, "未运行", "Not run"),
                    }
                    .to_owned()
                });
                let input_json = serde_json::from_str::<Value>(&call.arguments)
                    .ok()
                    .and_then(|v| serde_json::to_string_pretty(&v).ok())
                    .unwrap_or_else(|| call.arguments.clone());
                items.push(ChatItem {
                    kind: ChatItemKind::ToolCall,
                    text: String::new(),
                    tool_call: Some(ToolCallView {
                        call: call.id.clone(),
                        title: tool.as_ref().map_or(call.name.clone(), |t| {
                            title(lang, &t.title, t.title_en.as_deref())
                        }),
                        tool: tool.map(|t| t.id.clone()),
                        input_json,
                        decision,
                        result: None,
                        ok: None,
                    }),
                });
            }
        }
        "tool" => {
            let Some(id) = row.tool_call_id.as_deref() else {
                return;
            };
            let content = row.content.clone().unwrap_or_default();
            let refused = refusal(&content);
            let view = items
                .iter_mut()
                .rev()
                .filter_map(|item| item.tool_call.as_mut())
                .find(|view| view.call == id);
            if let Some(view) = view {
                match refused {
                    Some(code) => {
                        let words =
                            code.map_or(tr(lang, "失败", "Failed"), |c| refusal_words(lang, c));
                        view.result = Some(words.to_owned());
                        view.ok = Some(false);
                        if view.decision.is_empty() || code.is_some() {
                            view.decision = words.to_owned();
                        }
                    }
                    None => {
                        view.result = Some(content);
                        view.ok = Some(true);
                    }
                }
            }
        }
        _ => {}
    }
}

/// A result that is an error: `Some(Some(code))` for a refusal the core made, `Some(None)` for
/// a tool that failed or a call the loop rejected.
fn refusal(content: &str) -> Option<Option<Code>> {
    let value: Value = serde_json::from_str(content).ok()?;
    let error = value.as_object()?.get("error")?;
    if value.as_object()?.len() != 1 {
        return None;
    }
    Some(
        error
            .get("code")
            .and_then(Value::as_str)
            .and_then(Code::parse),
    )
}
