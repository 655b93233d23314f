//! The approval sheet: what the user is asked, about which call, and exactly the answers the
//! decision offers (DESIGN.md §3 8c and 8i: a tainted turn's prompt offers no "Always allow").

use serde_json::Value;

use super::ButtonRole;
use super::texts::{answer_words, effect_words, title, tr};
use crate::engine::Engine;
use crate::invoke::Prompt;
use crate::policy::{Answer, PromptKind};
use crate::registry::{Effect, PluginKind};
use crate::settings::Language;

/// One answer the sheet offers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct AnswerButton {
    pub answer: Answer,
    pub label: String,
    pub role: ButtonRole,
}

/// One top-level input field of the call, as shown.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct InputRow {
    pub name: String,
    /// The value as JSON text (a string without its quotes).
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct ApprovalSheet {
    pub kind: PromptKind,
    /// The sheet's question.
    pub title: String,
    /// The target for alwaysAsk and targeted tools; the tool's title otherwise.
    pub headline: String,
    pub plugin_title: String,
    pub tool_title: String,
    pub effect: Effect,
    pub effect_label: String,
    /// The call's exact inputs, field by field, and whole (pretty JSON).
    pub inputs: Vec<InputRow>,
    pub input_json: String,
    pub reason_label: String,
    /// Why the user is asked, in their language.
    pub reason: String,
    /// Exactly the answers the decision offers, in order.
    pub answers: Vec<AnswerButton>,
    /// The tool's title comes from a remote (MCP) server, third-party text (DESIGN.md §5): the
    /// sheet shows `words_from_server_label` beside it.
    pub words_from_server: bool,
    pub words_from_server_label: String,
}

pub(super) fn build(engine: &Engine, lang: Language, prompt: &Prompt) -> ApprovalSheet {
    let tool = engine.tool(&prompt.tool);
    // One lookup in the registry: a prompt needs its plugin's titles, not every plugin's view.
    let plugin = engine
        .installed()
        .read(|s| s.registry.plugin(&prompt.plugin).cloned());
    let words_from_server = plugin
        .as_ref()
        .map_or(prompt.plugin.starts_with("mcp-"), |p| {
            p.kind == PluginKind::Remote
        });
    let plugin_title = plugin.map_or(prompt.plugin_title.clone(), |p| {
        title(lang, &p.title, p.title_en.as_deref())
    });
    let tool_title = tool.as_ref().map_or(prompt.tool_title.clone(), |t| {
        title(lang, &t.title, t.title_en.as_deref())
    });
    // A target is the call's own words; otherwise the headline is the tool's title.
    let headline = if prompt.headline == prompt.tool_title {
        tool_title.clone()
    } else {
        prompt.headline.clone()
    };
    let inputs = match &prompt.input {
        Value::Object(fields) => fields
            .iter()
            .map(|(name, value)| InputRow {
                name: name.clone(),
                value: match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
            })
            .collect(),
        _ => Vec::new(),
    };
    let question = match prompt.kind {
        PromptKind::Grant | PromptKind::GrantOnce => {
            tr(lang, "要授予这项访问吗？", "Grant this access?")
        }
        _ => tr(lang, "允许这次操作吗？", "Allow this action?"),
    };
    ApprovalSheet {
        kind: prompt.kind,
        title: question.into(),
        headline,
        plugin_title,
        tool_title,
        effect: prompt.effect,
        effect_label: effect_words(lang, prompt.effect).into(),
        inputs,
        input_json: serde_json::to_string_pretty(&prompt.input).unwrap_or_default(),
        reason_label: tr(lang, "为什么询问你", "Why you are asked").into(),
        reason: prompt.why.text(lang),
        answers: prompt
            .offers
            .iter()
            .map(|&answer| AnswerButton {
                answer,
                label: answer_words(lang, answer).into(),
                role: match answer {
                    Answer::Deny | Answer::DontAllow => ButtonRole::Normal,
                    Answer::AlwaysAllow => ButtonRole::Normal,
                    Answer::Allow | Answer::AllowOnce => ButtonRole::Primary,
                },
            })
            .collect(),
        words_from_server,
        words_from_server_label: tr(
            lang,
            "以下文字来自服务器",
            "These words come from the server",
        )
        .into(),
    }
}
