//! `harness tools`: every plugin with its mode per effect and where each mode came from.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;

use crate::demo::sample_engine;

/// Listing asks nobody anything.
struct NoPrompts;

#[async_trait]
impl ApprovalBroker for NoPrompts {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

pub fn run(data_dir: &Path) -> Result<(), String> {
    let engine = sample_engine(data_dir, Arc::new(NoPrompts))?;
    let plugins = engine.plugins();
    println!("Plugins ({})", plugins.len());
    for (plugin, enabled) in plugins {
        let state = if enabled { "enabled" } else { "disabled" };
        println!("  {:<12} {} · {}", plugin.id, plugin.kind.as_str(), state);
        if !plugin.requires.is_empty() {
            println!("    requires {}", plugin.requires.join(", "));
        }
        let modes = engine.modes(&plugin.id).map_err(|e| e.to_string())?;
        let row: Vec<String> = modes.iter().map(|m| format!("{} {} ({})", m.effect, m.mode, m.source.as_str())).collect();
        println!("    modes  {}", row.join(" · "));
        for tool in &plugin.tools {
            let mut flags = Vec::new();
            for (on, name) in [(tool.untrusted, "untrusted"), (tool.user_only, "userOnly"), (tool.grant, "grant"), (tool.always_ask, "alwaysAsk")] {
                if on {
                    flags.push(name);
                }
            }
            let flags = if flags.is_empty() { String::new() } else { format!(" [{}]", flags.join(", ")) };
            println!("    {:<28} {:<6} {}{flags}", tool.id, tool.effect.as_str(), tool.title);
        }
    }
    Ok(())
}
