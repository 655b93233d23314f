//! The conversation list (DESIGN.md §13): each conversation by its title, last activity and a
//! one-line preview, the most recently active first; a new chat; a rename and a delete per row;
//! and, for a few seconds after a delete, its undo.

use super::texts::{local_time, tr};
use super::{Action, Button, ButtonRole};
use crate::engine::{Engine, EngineError};
use crate::settings::Language;

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ConversationRowView {
    pub conversation: String,
    /// Its title, or "新对话" before its first message.
    pub title: String,
    /// When it was last active, on the student's clock.
    pub last_active: String,
    /// The newest of the student's or the agent's words, on one line; empty before any.
    pub preview: String,
    /// Open it in the chat.
    pub open: Action,
    /// The rename field's label; its action is `Action::RenameConversation` with the typed
    /// title.
    pub rename_label: String,
    pub delete: Button,
    /// What its turns cost this month ("本月 3 轮 · 0.12 元"); empty when none ran.
    pub spend: String,
}

/// The bar shown for [`crate::conversations::UNDO_MS`] after a delete.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct UndoBar {
    /// "已删除“…”".
    pub text: String,
    pub undo: Button,
    /// When the undo ends (ms since the epoch): the shell hides the bar then and reads the
    /// screen again.
    pub until_ms: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ConversationListScreen {
    pub title: String,
    pub new_chat: Button,
    pub rows: Vec<ConversationRowView>,
    /// Said when there is no conversation yet.
    pub empty: Option<String>,
    pub undo: Option<UndoBar>,
}

/// What a conversation is called on screens: its title, or "新对话" before it has one.
pub(super) fn title_of(engine: &Engine, lang: Language, conversation: &str) -> String {
    engine
        .conversations()
        .title(conversation)
        .unwrap_or_else(|| untitled(lang))
}

fn untitled(lang: Language) -> String {
    tr(lang, "新对话", "New chat").into()
}

pub(super) fn new_chat(lang: Language) -> Button {
    Button::new(
        tr(lang, "新对话", "New chat").into(),
        ButtonRole::Primary,
        Action::NewConversation,
    )
}

pub(super) fn build(
    engine: &Engine,
    lang: Language,
) -> Result<ConversationListScreen, EngineError> {
    let settings = engine.settings();
    let zone = settings.time_zone.clone();
    let conversations = engine.conversations();
    let spent = engine.agent().month_spend_by_conversation(&settings)?;
    let rows: Vec<ConversationRowView> = conversations
        .list()?
        .into_iter()
        .map(|c| ConversationRowView {
            title: c.title.unwrap_or_else(|| untitled(lang)),
            last_active: local_time(&zone, c.last_active_ms),
            preview: c.preview.unwrap_or_default(),
            open: Action::OpenConversation {
                conversation: c.id.clone(),
            },
            rename_label: tr(lang, "重命名", "Rename").into(),
            delete: Button::new(
                tr(lang, "删除", "Delete").into(),
                ButtonRole::Destructive,
                Action::DeleteConversation {
                    conversation: c.id.clone(),
                },
            ),
            spend: spent
                .iter()
                .find(|(id, _)| *id == c.id)
                .map(|(_, s)| spend_line(lang, s))
                .unwrap_or_default(),
            conversation: c.id,
        })
        .collect();
    let undo = conversations.undoable().map(|(_, until_ms)| UndoBar {
        text: tr(lang, "对话已删除", "Chat deleted").into(),
        undo: Button::new(
            tr(lang, "撤销", "Undo").into(),
            ButtonRole::Normal,
            Action::UndoDeleteConversation,
        ),
        until_ms,
    });
    Ok(ConversationListScreen {
        title: tr(lang, "对话列表", "Chats").into(),
        new_chat: new_chat(lang),
        empty: rows.is_empty().then(|| {
            tr(
                lang,
                "还没有对话。点“新对话”开始。",
                "No chats yet. Tap New chat to start one.",
            )
            .into()
        }),
        rows,
        undo,
    })
}

/// A month's spend in a line: "本月 3 轮 · 0.12 元" / "This month: 3 turns · 0.12 元".
pub(super) fn spend_line(lang: Language, spend: &crate::agent::prices::Spend) -> String {
    match lang {
        Language::Zh => format!("本月 {} 轮 · {:.2} 元", spend.turns, spend.yuan),
        Language::En => format!("This month: {} turns · {:.2} 元", spend.turns, spend.yuan),
    }
}
