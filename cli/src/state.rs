//! `harness settings`, `harness memory`, `harness consent`, `harness audit` and
//! `harness secret`: see and change what the core keeps in a data directory, as the user would
//! from the app's screens.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use clap::Subcommand;
use harness_core::Engine;
use harness_core::consent::{Permission, PermissionState};
use harness_core::policy::Actor;
use harness_core::scheduler::schedule::parse_tz;
use harness_core::secrets::keys;
use harness_core::settings::parse_change;
use serde_json::Value;

use crate::tools::NoPrompts;

#[derive(Subcommand)]
pub enum SettingsCommand {
    /// Show every setting as `KEY = VALUE`, each key as `set` takes it.
    Show,
    /// Change one setting, as the settings screen does: `set timeZone Europe/London`,
    /// `set plugins.wallet.modes.money ask`. VALUE is JSON, or else a plain string.
    Set { key: String, value: String },
}

#[derive(Subcommand)]
pub enum MemoryCommand {
    /// Every memory with its state and the conversation and turn it came from.
    List,
    /// Approve a pending memory (the memory screen's Approve).
    Approve { id: i64 },
    /// Reject a pending memory.
    Reject { id: i64 },
}

#[derive(Subcommand)]
pub enum ConsentCommand {
    /// Show what was consented to.
    Show,
    /// Accept the first-run terms.
    AcceptTerms,
    /// A plugin's "Allow cloud" switch.
    Cloud { plugin: String, state: OnOff },
    /// Report a system permission's state, as the shell does.
    Permission {
        permission: PermissionArg,
        state: PermissionStateArg,
    },
}

#[derive(Subcommand)]
pub enum SecretCommand {
    /// Store a secret read from standard input (never from the command line, which the shell
    /// history keeps).
    Set { key: String },
    /// Whether a secret is stored (its value is never printed).
    Check { key: String },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum PermissionArg {
    Notifications,
    ExactAlarm,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum PermissionStateArg {
    Granted,
    Denied,
}

fn open(data_dir: &Path) -> Result<Engine, String> {
    crate::open::engine(data_dir, Arc::new(NoPrompts))
}

fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

pub fn settings(data_dir: &Path, command: SettingsCommand) -> Result<(), String> {
    let engine = open(data_dir)?;
    match command {
        SettingsCommand::Show => {
            for (key, value) in engine.setting_values() {
                outln!("{key} = {value}");
            }
        }
        // The core's words send the user to the app's screen; here the key has a command.
        SettingsCommand::Set { key, .. } if key == keys::MODEL_API_KEY => {
            return Err(format!(
                "{key} is a secret, not a setting: {}",
                crate::chat::API_KEY_HELP
            ));
        }
        SettingsCommand::Set { key, value } => {
            let value = serde_json::from_str(&value).unwrap_or(Value::String(value));
            let change = parse_change(&key, &value).map_err(|e| e.to_string())?;
            engine.change_setting(change).map_err(|e| e.to_string())?;
            outln!("{key} = {value}");
        }
    }
    Ok(())
}

pub fn memory(data_dir: &Path, command: MemoryCommand) -> Result<(), String> {
    let engine = open(data_dir)?;
    let decided = match command {
        MemoryCommand::List => {
            let memories = engine.memories().map_err(|e| e.to_string())?;
            if memories.is_empty() {
                outln!("No memories.");
            }
            for m in memories {
                let origin = match (&m.conversation, m.turn) {
                    (Some(c), Some(t)) => format!("conversation {c}, turn {t}"),
                    (Some(c), None) => format!("conversation {c}"),
                    _ => "the user".to_owned(),
                };
                outln!("{:>4}  {:<8}  {}  (from {origin})", m.id, m.state, m.text);
            }
            return Ok(());
        }
        MemoryCommand::Approve { id } => engine.decide_memory(id, true),
        MemoryCommand::Reject { id } => engine.decide_memory(id, false),
    };
    let memory = decided.map_err(|e| e.to_string())?;
    outln!("memory {} is now {}", memory.id, memory.state);
    Ok(())
}

pub fn consent(data_dir: &Path, command: ConsentCommand) -> Result<(), String> {
    let engine = open(data_dir)?;
    let done = match command {
        ConsentCommand::Show => {
            outln!("{}", pretty(&engine.consent()));
            for view in engine.plugins() {
                let p = &view.plugin;
                if !p.scopes.is_empty() || !p.disclosure.is_empty() {
                    outln!(
                        "{}: scopes {:?}, cloud disclosure {:?}",
                        p.id,
                        p.scopes,
                        p.disclosure
                    );
                }
            }
            return Ok(());
        }
        ConsentCommand::AcceptTerms => engine.accept_terms(),
        ConsentCommand::Cloud { plugin, state } => {
            engine.set_cloud_consent(&plugin, matches!(state, OnOff::On))
        }
        ConsentCommand::Permission { permission, state } => {
            let permission = match permission {
                PermissionArg::Notifications => Permission::Notifications,
                PermissionArg::ExactAlarm => Permission::ExactAlarm,
            };
            // The terminal is the user's own hands: this is a tap.
            engine
                .request_permission(permission, Actor::User)
                .map_err(|e| e.to_string())?;
            let state = match state {
                PermissionStateArg::Granted => PermissionState::Granted,
                PermissionStateArg::Denied => PermissionState::Denied,
            };
            engine.report_permission(permission, state)
        }
    };
    done.map_err(|e| e.to_string())?;
    outln!("{}", pretty(&engine.consent()));
    Ok(())
}

pub fn audit(data_dir: &Path, limit: usize) -> Result<(), String> {
    let engine = open(data_dir)?;
    // Local times in the settings zone, as the jobs print theirs.
    let zone = engine.settings().time_zone;
    let tz = parse_tz("timeZone", &zone).map_err(|e| e.to_string())?;
    outln!("Times are in {zone} (the settings time zone).");
    for row in engine.audit(limit).map_err(|e| e.to_string())? {
        let at = chrono::DateTime::from_timestamp_millis(row.at_ms).map_or(String::new(), |t| {
            t.with_timezone(&tz).format("%Y-%m-%d %H:%M:%S").to_string()
        });
        let mut line = format!(
            "{:>6} {at} {:<9} {:<26} {:<8}",
            row.seq, row.actor, row.tool, row.event
        );
        for part in [
            row.detail,
            row.step.map(|s| format!("step {s}")),
            row.rule.map(|r| format!("rule {r}")),
        ]
        .into_iter()
        .flatten()
        {
            line.push(' ');
            line.push_str(&part);
        }
        if let Some(digest) = row.input_digest {
            line.push_str(&format!(" inputs#{}", &digest[..8]));
        }
        outln!("{line}");
    }
    Ok(())
}

pub fn secret(data_dir: &Path, command: SecretCommand) -> Result<(), String> {
    let engine = open(data_dir)?;
    match command {
        SecretCommand::Set { key } => {
            let mut value = String::new();
            std::io::stdin()
                .read_to_string(&mut value)
                .map_err(|e| e.to_string())?;
            let value = value.trim_end_matches(['\r', '\n']);
            if value.is_empty() {
                return Err("no secret on standard input".into());
            }
            engine.set_secret(&key, value).map_err(|e| e.to_string())?;
            outln!("{key} stored in the keyring");
        }
        SecretCommand::Check { key } => {
            let stored = engine.has_secret(&key).map_err(|e| e.to_string())?;
            outln!("{key}: {}", if stored { "stored" } else { "not stored" });
        }
    }
    Ok(())
}
