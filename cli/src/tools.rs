//! `harness tools`: every plugin with its mode per effect and where each mode came from.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;

/// Inspecting and changing state from the terminal asks nobody anything.
pub struct NoPrompts;

#[async_trait]
impl ApprovalBroker for NoPrompts {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

pub fn run(data_dir: &Path) -> Result<(), String> {
    let engine = crate::open::engine(data_dir, Arc::new(NoPrompts))?;
    let plugins = engine.plugins();
    outln!("Plugins ({}) in {}", plugins.len(), data_dir.display());
    for view in &plugins {
        let plugin = &view.plugin;
        let state = if view.enabled { "enabled" } else { "disabled" };
        outln!("  {:<12} {} · {}", plugin.id, plugin.kind.as_str(), state);
        if !plugin.requires.is_empty() {
            let unmet = view
                .unmet
                .as_deref()
                .map_or(String::new(), |r| format!(" (not met: {r})"));
            outln!("    requires {}{unmet}", plugin.requires.join(", "));
        }
        let row: Vec<String> = view
            .modes
            .iter()
            .map(|(effect, mode, source)| format!("{effect} {mode} ({})", source.as_str()))
            .collect();
        outln!("    modes  {}", row.join(" · "));
        for tool in &plugin.tools {
            let mut flags = Vec::new();
            for (on, name) in [
                (tool.untrusted, "untrusted"),
                (tool.user_only, "userOnly"),
                (tool.grant, "grant"),
                (tool.always_ask, "alwaysAsk"),
            ] {
                if on {
                    flags.push(name);
                }
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            };
            outln!(
                "    {:<28} {:<6} {}{flags}",
                tool.id,
                tool.effect.as_str(),
                tool.title
            );
        }
    }
    // seed 001: a row for every plugin that loaded, "no grants" included, in a fixed order.
    let views = engine.plugins();
    outln!("Plugin grants ({} plugins)", views.len());
    for view in &views {
        outln!("  {}", view.grant_row);
    }
    for warning in views.iter().flat_map(|v| &v.warnings) {
        outln!("warning: {warning}");
    }
    for error in engine.load_errors() {
        outln!("  not loaded: {error}");
    }
    Ok(())
}
