//! The 撤销 bar (issue 41.4): each public call waiting out its undo window, with the tap that
//! takes it back before anything is sent (`Action::UndoCall`).

use super::activity::tool_words;
use super::conversation_list::UndoBar;
use super::texts::tr;
use super::{Action, Button, ButtonRole};
use crate::engine::Engine;
use crate::settings::Language;

/// One bar per held call, oldest first. Only a shell that draws them holds calls at all
/// (`ApprovalBroker::shows_undo`).
pub(super) fn build(engine: &Engine, lang: Language) -> Vec<UndoBar> {
    engine
        .held_calls()
        .into_iter()
        .map(|held| {
            let tool = tool_words(engine, lang, &held.tool);
            UndoBar {
                text: match lang {
                    Language::Zh => format!("{tool} 即将发出"),
                    Language::En => format!("{tool} is about to be sent"),
                },
                undo: Button::new(
                    tr(lang, "撤销", "Undo").into(),
                    ButtonRole::Destructive,
                    Action::UndoCall { call: held.id },
                ),
                until_ms: held.until_ms,
            }
        })
        .collect()
}
