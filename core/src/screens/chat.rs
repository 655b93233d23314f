//! The chat: the conversation's messages, the answer as it streams, each tool call with what
//! was decided about it and its result, the turn's state, and cancel.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::live::Live;
use super::media::{self, CallImage, CallLink};
use super::results::{CallCard, refusal_card, rows, signin_card, status_card};
use super::texts::{refusal_words, title, tr};
use super::{Action, Button, ButtonRole, LabelValue};
use crate::agent::finding::FIND;
use crate::engine::{Engine, EngineError};
use crate::handler::model_copy;
use crate::policy::Code;
use crate::registry::{Tool, tool_id};
use crate::settings::Language;
use crate::store::history::{MessageRow, StoredCall};
use crate::store::usage::UsageRow;
use crate::text::one_line;

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
    /// Plan mode's plan: the agent's answer while plan mode is on, with the tap that accepts it.
    Plan,
}

/// A tool call as the chat shows it: a conversation's words, never an id or JSON, except the
/// raw data behind its tap.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ToolCallView {
    pub call: String,
    /// The tool's title; "Unknown tool" when no tool has the name the model wrote.
    pub title: String,
    /// The title of the plugin the tool belongs to; empty for an unknown tool.
    pub plugin_title: String,
    /// One line of what happened: `Ran`, `Ran after you allowed it`, `Refused: …`, `Running…`;
    /// empty before a decision.
    pub summary: String,
    /// The result's top-level fields, labelled in the plugin's words or the name made readable.
    pub rows: Vec<LabelValue>,
    /// A status answer's fix (sign in, Treehole's check, a page for the browser), or the
    /// setting that would let a refused call run.
    pub card: Option<CallCard>,
    /// The pictures the result carries (a server's image content), drawn below the rows.
    pub images: Vec<CallImage>,
    /// The links the result carries (a server's resource links), below the pictures.
    pub links: Vec<CallLink>,
    /// Whether it ran; none while it runs.
    pub ok: Option<bool>,
    /// "Show raw data" and "Hide raw data": the toggle of the JSON below.
    pub show_raw_label: String,
    pub hide_raw_label: String,
    /// The input the model wrote, as JSON, shown behind the toggle.
    pub input_json: String,
    /// The result as JSON (what the agent read), shown behind the toggle; none while it runs.
    pub raw_json: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ChatItem {
    pub kind: ChatItemKind,
    pub text: String,
    pub tool_call: Option<ToolCallView>,
    pub plan: Option<PlanCard>,
    /// On a turn's last answer, what the turn used as the provider reported it, in words
    /// ("本轮：输入 1000 tokens（缓存 500）· 输出 100 · 0.0008 元"): the shells show it when the
    /// student asks (a tap on the answer), never unasked.
    pub usage: Option<String>,
}

impl ChatItem {
    fn text(kind: ChatItemKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            tool_call: None,
            plan: None,
            usage: None,
        }
    }
}

/// A turn's usage in words: its tokens, the cached share, and its cost where a price is known.
fn usage_words(lang: Language, row: &UsageRow, yuan: Option<f64>) -> String {
    let cost = yuan.map(|y| format!(" · {y:.4} 元")).unwrap_or_default();
    match lang {
        Language::Zh => format!(
            "本轮：输入 {} tokens（缓存 {}）· 输出 {}{cost}",
            row.prompt_tokens, row.cached_tokens, row.completion_tokens
        ),
        Language::En => format!(
            "This turn: {} tokens in ({} cached) · {} out{cost}",
            row.prompt_tokens, row.cached_tokens, row.completion_tokens
        ),
    }
}

/// What a plan offers besides its words (seed 003: plan mode investigates and discusses
/// without doing; a plan has a workflow of its own, and once it is accepted every step still
/// goes through the checks).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct PlanCard {
    /// "计划" / "Plan".
    pub heading: String,
    /// Ends plan mode and asks the agent to carry the plan out; nothing else changes.
    pub accept: Button,
    /// That accepting widens nothing, and that a reply changes the plan.
    pub hint: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ChatScreen {
    pub conversation: String,
    /// The conversation's title, or "新对话" before its first message.
    pub title: String,
    /// Start a new conversation and open it.
    pub new_chat: Button,
    /// Open the conversation list.
    pub conversations: Button,
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
    /// Attach a text, Markdown or PDF file: opens the system's picker.
    pub attach: Button,
    /// The names of the documents attached to this conversation.
    pub documents: Vec<String>,
    /// "Sign in to the campus again", after a plugin found the campus session ended; opens
    /// the campus account screen.
    pub campus_notice: Option<Button>,
    /// On an empty chat, "你可以这样问" / "You can ask"; empty otherwise.
    pub examples_label: String,
    /// On an empty chat, up to [`EXAMPLES`] requests the enabled plugins whose requirements
    /// are met declare, each a tap that sends it (issue 42); none once the chat has anything.
    pub examples: Vec<Button>,
}

/// How many example requests an empty chat offers.
pub const EXAMPLES: usize = 4;

/// Up to [`EXAMPLES`] of the usable plugins' example requests in `lang`, taken in turn from
/// each plugin (its first, then its second …) so that one plugin does not fill the list.
fn examples(engine: &Engine, lang: Language, conversation: &str) -> Vec<Button> {
    let lists: Vec<Vec<String>> = engine
        .plugins()
        .iter()
        .filter(|v| v.enabled && v.unmet.is_none())
        .map(|v| {
            let m = &v.plugin.manifest;
            let translated = match lang {
                Language::En => m.i18n.get("en").and_then(|t| t.examples.clone()),
                Language::Zh => None,
            };
            translated
                .unwrap_or_else(|| m.examples.clone())
                .into_iter()
                .map(|e| e.trim().to_owned())
                .filter(|e| !e.is_empty())
                .collect()
        })
        .collect();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .flat_map(|i| lists.iter().filter_map(move |l| l.get(i)))
        .take(EXAMPLES)
        .map(|text| {
            Button::new(
                text.clone(),
                ButtonRole::Normal,
                Action::SendMessage {
                    conversation: conversation.to_owned(),
                    text: text.clone(),
                },
            )
        })
        .collect()
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
    let mut tools = HashMap::new();
    // DESIGN.md §13: where the model's view begins, when older messages are no longer sent.
    let window = engine.agent().window_start(conversation).ok().flatten();
    let usage = engine
        .agent()
        .usage_by_turn(conversation, &engine.settings())?;
    // Each turn's usage goes on its last answer, once the turn's rows are all in.
    let mut answer_of_turn: Option<(u64, usize)> = None;
    let said = |items: &mut Vec<ChatItem>, ended: Option<(u64, usize)>| {
        let Some((turn, at)) = ended else { return };
        if let Some((row, yuan)) = usage
            .iter()
            .find(|(u, _)| u.turn == turn && u.prompt_tokens + u.completion_tokens > 0)
        {
            items[at].usage = Some(usage_words(lang, row, *yuan));
        }
    };
    for row in &rows {
        if answer_of_turn.is_some_and(|(turn, _)| turn != row.turn) {
            said(&mut items, answer_of_turn.take());
        }
        if window == Some(row.id) {
            items.push(ChatItem::text(
                ChatItemKind::Notice,
                tr(
                    lang,
                    "更早的消息不再发送给模型",
                    "Earlier messages are no longer sent to the model",
                ),
            ));
        }
        push_row(engine, live, lang, row, &mut items, &mut tools);
        if items
            .last()
            .is_some_and(|i| i.kind == ChatItemKind::Assistant)
        {
            answer_of_turn = Some((row.turn, items.len() - 1));
        }
    }
    said(&mut items, answer_of_turn);
    if let Some(plan) = settings.plan_mode.then(|| plan_of(&rows)).flatten() {
        // The plan is the last item: the answer the turn ended with.
        if let Some(last) = items.last_mut() {
            last.kind = ChatItemKind::Plan;
            last.plan = Some(plan_card(lang, conversation, plan.id));
        }
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
    // A call still running is the app's work; otherwise, until its first word, the model is
    // reading the request, which a slow provider or a local model can take minutes over.
    let call_running = items
        .last()
        .is_some_and(|i| i.tool_call.as_ref().is_some_and(|c| c.ok.is_none()));
    let status = match running {
        None => "",
        Some(t) if t.text.is_empty() && !t.thinking.is_empty() => tr(lang, "思考中…", "Thinking…"),
        Some(t) if t.text.is_empty() && !call_running => tr(
            lang,
            "模型正在阅读，慢的模型可能要几分钟…",
            "The model is reading; a slow one can take minutes…",
        ),
        Some(_) => tr(lang, "处理中…", "Working…"),
    };
    let documents = engine
        .documents(conversation)?
        .into_iter()
        .map(|(_, name, _)| name)
        .collect();
    let campus_notice = live
        .signin_asked(|| engine.campus().signed_in_everywhere())
        .then(|| {
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
    let examples = match items.is_empty() && running.is_none() {
        true => examples(engine, lang, conversation),
        false => Vec::new(),
    };
    Ok(ChatScreen {
        examples_label: match examples.is_empty() {
            true => String::new(),
            false => tr(lang, "你可以这样问", "You can ask").into(),
        },
        examples,
        campus_notice,
        conversation: conversation.to_owned(),
        title: super::conversation_list::title_of(engine, lang, conversation),
        new_chat: super::conversation_list::new_chat(lang),
        conversations: Button::new(
            tr(lang, "全部对话", "All chats").into(),
            ButtonRole::Normal,
            Action::Open {
                route: super::Route::Conversations,
            },
        ),
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
    tools: &mut HashMap<String, Arc<Tool>>,
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
            // The find step gives the model tools; it is no call the student sees.
            for call in row.tool_calls.iter().filter(|c| c.name != FIND) {
                let tool = tool_id(&call.name).and_then(|id| engine.tool(&id));
                let view = call_view(engine, live, lang, call, tool.as_deref());
                if let Some(tool) = tool {
                    tools.insert(call.id.clone(), tool);
                }
                items.push(ChatItem {
                    kind: ChatItemKind::ToolCall,
                    text: String::new(),
                    tool_call: Some(view),
                    plan: None,
                    usage: None,
                });
            }
        }
        "tool" => {
            let Some(id) = row.tool_call_id.as_deref() else {
                return;
            };
            let content = row.content.clone().unwrap_or_default();
            let view = items
                .iter_mut()
                .rev()
                .filter_map(|item| item.tool_call.as_mut())
                .find(|view| view.call == id);
            if let Some(view) = view {
                let tool = tools.get(id).map(|t| &**t);
                // What the phone still lacks for the tool's plugin, as it stands now.
                let unmet = tool.and_then(|t| {
                    engine
                        .plugins()
                        .into_iter()
                        .find(|p| p.plugin.id == t.plugin)
                        .and_then(|p| p.unmet)
                });
                fill_result(live, lang, tool, unmet.as_deref(), view, &content);
            }
        }
        _ => {}
    }
}

/// The plan on offer in a conversation in plan mode: the agent's last message, when it is an
/// answer (words, no call) that ended its turn. A plan the student has replied to, or one a
/// running turn is still writing, is none.
pub(super) fn plan_of(rows: &[MessageRow]) -> Option<&MessageRow> {
    rows.last().filter(|row| {
        row.role == "assistant"
            && row.tool_calls.is_empty()
            && row.content.as_ref().is_some_and(|t| !t.trim().is_empty())
    })
}

fn plan_card(lang: Language, conversation: &str, plan: i64) -> PlanCard {
    PlanCard {
        heading: tr(lang, "计划", "Plan").into(),
        accept: Button::new(
            tr(lang, "按这个计划做", "Go ahead with this plan").into(),
            ButtonRole::Primary,
            Action::AcceptPlan {
                conversation: conversation.to_owned(),
                plan,
            },
        ),
        hint: tr(
            lang,
            "接受后计划模式关闭，每一步仍会照常检查、需要时问你；想修改计划，直接回复即可",
            "Accepting ends plan mode; every step is still checked and asks you where it must. To change the plan, just reply",
        )
        .into(),
    }
}

/// A call as it is asked for, before its result: its titles and what was decided so far.
fn call_view(
    engine: &Engine,
    live: &Live,
    lang: Language,
    call: &StoredCall,
    tool: Option<&Tool>,
) -> ToolCallView {
    let plugin = tool.and_then(|t| plugin_title(engine, lang, &t.plugin));
    let decision = live.decision(&call.id);
    let summary = match decision.as_ref().map(|d| (d.verdict.as_str(), &d.progress)) {
        // A server's progress: how far, and its words, while the call runs.
        Some(("run", Some((done, message)))) => {
            let running = tr(lang, "运行中…", "Running…");
            match message {
                Some(words) => format!("{running} {done} · {words}"),
                None => format!("{running} {done}"),
            }
        }
        Some(("run", None)) => tr(lang, "运行中…", "Running…").into(),
        Some(("ask", _)) => tr(lang, "已询问你…", "Asked you…").into(),
        _ => String::new(),
    };
    ToolCallView {
        call: call.id.clone(),
        title: tool.map_or_else(
            || tr(lang, "未知工具", "Unknown tool").to_owned(),
            |t| title(lang, &t.title, t.title_en.as_deref()),
        ),
        plugin_title: plugin.unwrap_or_default(),
        summary,
        rows: Vec::new(),
        card: None,
        images: Vec::new(),
        links: Vec::new(),
        ok: None,
        show_raw_label: tr(lang, "显示原始数据", "Show raw data").into(),
        hide_raw_label: tr(lang, "隐藏原始数据", "Hide raw data").into(),
        input_json: pretty(&call.arguments),
        raw_json: None,
    }
}

/// The call's result: rows and a status card when it ran, the refusal in the student's words
/// with the setting to change when it did not (`unmet`: what the phone still lacks for the
/// tool's plugin).
fn fill_result(
    live: &Live,
    lang: Language,
    tool: Option<&Tool>,
    unmet: Option<&str>,
    view: &mut ToolCallView,
    content: &str,
) {
    // What the agent read: a picture as its words, not its bytes.
    view.raw_json = Some(pretty_for_model(content));
    match refusal(content) {
        Some(Some(code)) => {
            let words = refusal_words(lang, code);
            view.ok = Some(false);
            view.summary = match code {
                // The student's own no needs no "refused".
                Code::Declined => words.to_owned(),
                _ => match lang {
                    Language::Zh => format!("被拒绝：{words}"),
                    Language::En => format!("Refused: {}", lowercase_first(words)),
                },
            };
            view.card = match (code, unmet) {
                // DESIGN.md §10: the campus plugins wait for the student's sign-in.
                (Code::Unavailable, Some("campus-session")) => Some(signin_card(lang)),
                _ => tool.and_then(|t| refusal_card(lang, code, &view.plugin_title, t.effect)),
            };
        }
        // The turn loop's answer to a call identical to one it already made (agent::turn).
        Some(None) if error_code(content).as_deref() == Some("repeated_call") => {
            view.ok = Some(false);
            view.summary = tr(
                lang,
                "和上面的一次调用相同，没有再做",
                "The same as a call above: not done again",
            )
            .to_owned();
        }
        Some(None) => {
            view.ok = Some(false);
            view.summary = match failure_message(content) {
                Some(message) => format!("{}{message}", tr(lang, "没有完成：", "Did not finish: ")),
                None => tr(lang, "没有完成", "Did not finish").to_owned(),
            };
        }
        None => {
            view.ok = Some(true);
            let asked = live
                .decision(&view.call)
                .is_some_and(|d| d.verdict == "ask");
            view.summary = if asked {
                tr(lang, "你允许后运行了", "Ran after you allowed it")
            } else {
                tr(lang, "已运行", "Ran")
            }
            .to_owned();
            let mut result = serde_json::from_str::<Value>(content)
                .unwrap_or_else(|_| Value::String(content.to_owned()));
            (view.images, view.links) = media::take(lang, &mut result);
            view.card = status_card(lang, &result);
            // A status the card explains is no data to list.
            if view.card.is_none() {
                view.rows = rows(lang, &result, tool);
            }
        }
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

/// The code of an error answer (`{"error": {"code": …}}`).
fn error_code(content: &str) -> Option<String> {
    let value: Value = serde_json::from_str(content).ok()?;
    value["error"]["code"].as_str().map(str::to_owned)
}

/// A tool-failed error's message, which the plugin writes for the student (seed 004: "throw an
/// Error with a clear message that the user can understand"), on one line with nothing
/// invisible (`text::one_line`); none for the loop's own errors (an unknown tool, input that is
/// no JSON), whose words are for the model.
fn failure_message(content: &str) -> Option<String> {
    let value: Value = serde_json::from_str(content).ok()?;
    let error = &value["error"];
    (error["code"] == "tool_failed")
        .then(|| error["message"].as_str().map(|m| one_line(m, usize::MAX)))
        .flatten()
}

/// JSON laid out to read, or the text as it is when it is no JSON.
fn pretty(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}

/// A plugin's title in the student's language.
fn plugin_title(engine: &Engine, lang: Language, plugin: &str) -> Option<String> {
    engine
        .installed()
        .read(|s| s.registry.plugin(plugin).cloned())
        .map(|p| title(lang, &p.title, p.title_en.as_deref()))
}

/// "This kind…" as it reads after "Refused: ".
fn lowercase_first(words: &str) -> String {
    let mut chars = words.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// A stored result laid out to read as the model read it: a picture as its words (see
/// [`model_copy`]), parsed once.
fn pretty_for_model(content: &str) -> String {
    match serde_json::from_str::<Value>(content) {
        Ok(result) => {
            let read = match crate::handler::carries_media(&result) {
                true => model_copy(&result),
                false => result,
            };
            serde_json::to_string_pretty(&read).unwrap_or_else(|_| content.to_owned())
        }
        Err(_) => content.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_failure_is_one_line_with_no_bidirectional_control_in_the_summary() {
        // seed 004: a tool's error is written for the student; on the call's one-line summary
        // it cannot add a line or make the line read backwards.
        let content = serde_json::json!({"error": {"code": "tool_failed",
            "message": "付款失败\n\u{202e}功成款付\u{2069}\u{200b}"}})
        .to_string();
        assert_eq!(
            failure_message(&content).as_deref(),
            Some("付款失败 功成款付")
        );
    }
}
