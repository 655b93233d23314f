//! `harness cloud`: this data directory's PKU harness Cloud account (DESIGN.md §12) — make one
//! (printing the recovery code, once), join one by its recovery code or another device's pairing
//! QR, see its status, back the app up and restore it.

use std::path::Path;
use std::sync::Arc;

use clap::Subcommand;
use harness_core::Engine;
use harness_core::cloud::backup;
use harness_core::settings::Language;

#[derive(Subcommand)]
pub enum CloudCommand {
    /// Make an account on the server with this device as its first, and print the recovery
    /// code once: it is kept nowhere, and another device joins with it.
    Setup {
        /// The cloud's address: https://…, or http://127.0.0.1:PORT for a development server.
        #[arg(long)]
        server: String,
    },
    /// Join the account whose recovery code was printed at setup, as a new device of it.
    Join {
        #[arg(long)]
        server: String,
        /// The recovery code, e.g. K7QF-2MXD-… (case, dashes and spaces as you like).
        #[arg(long)]
        code: String,
    },
    /// Print what the pairing QR carries (a one-time token for ten minutes and the account
    /// key), for another device's `harness cloud join-paired`.
    Pair,
    /// Join the account whose pairing QR (`harness cloud pair` on its device) was scanned.
    JoinPaired { payload: String },
    /// The server, the account, its devices and what it holds.
    Status,
    /// Write this app's backup to the cloud (settings, rules, approved memories, jobs,
    /// conversations with their titles, settings and rules, and their histories if chosen;
    /// sealed; never a password, session or key), replacing the one there.
    Backup {
        /// Turn the backup on first (its words are printed), then write it.
        #[arg(long, conflicts_with = "stop")]
        allow: bool,
        /// Turn the backup off; nothing is written.
        #[arg(long)]
        stop: bool,
        /// Include the conversations' histories (on) or not (off, the default); with the
        /// backup off, the choice is kept and nothing is written.
        #[arg(long, value_parser = ["on", "off"], conflicts_with = "stop")]
        histories: Option<String>,
    },
    /// The values restores left pending (looser than those in effect); `--apply KEY` makes
    /// one as your own change, `--dismiss KEY` leaves it unmade.
    Pending {
        #[arg(long, conflicts_with = "dismiss")]
        apply: Option<String>,
        #[arg(long)]
        dismiss: Option<String>,
    },
    /// Bring this account's backup to this data directory: a setting looser than the one in
    /// effect is not made, but printed with the command that makes it.
    Restore,
}

fn open(data_dir: &Path) -> Result<Engine, String> {
    crate::open::engine(data_dir, Arc::new(crate::tools::NoPrompts))
}

pub async fn run(data_dir: &Path, command: CloudCommand) -> Result<(), String> {
    let engine = open(data_dir)?;
    match command {
        CloudCommand::Setup { server } => {
            let code = engine
                .cloud_setup(&server)
                .await
                .map_err(|e| e.to_string())?;
            outln!("This device's account is on {server}.");
            outln!(
                "Recovery code (shown this once; write it down — another device joins with it):"
            );
            outln!("{code}");
        }
        CloudCommand::Join { server, code } => {
            engine
                .cloud_join(&server, &code)
                .await
                .map_err(|e| e.to_string())?;
            outln!("This device joined the account on {server}.");
        }
        CloudCommand::Pair => {
            let payload = engine.cloud_pairing().await.map_err(|e| e.to_string())?;
            outln!("{payload}");
        }
        CloudCommand::JoinPaired { payload } => {
            engine
                .cloud_join_paired(&payload)
                .await
                .map_err(|e| e.to_string())?;
            outln!("This device joined the account.");
        }
        CloudCommand::Status => match engine.cloud_status().await.map_err(|e| e.to_string())? {
            None => outln!(
                "No cloud set up: harness cloud setup --server URL, or join --server URL --code CODE"
            ),
            Some(s) => {
                outln!("server: {}", s.server);
                outln!("account: {}", s.account);
                outln!("devices: {}", s.devices.len());
                outln!("stored: {} of {} bytes", s.used_bytes, s.quota_bytes);
                let consent = engine.consent();
                let on = |yes: bool| if yes { "on" } else { "off" };
                outln!("backup: {}", on(consent.cloud_backup));
                outln!("histories: {}", on(consent.cloud_backup_histories));
            }
        },
        CloudCommand::Backup { stop: true, .. } => {
            engine.set_cloud_backup(false).map_err(|e| e.to_string())?;
            outln!(
                "The app's backup is off; the one in the cloud stays until another replaces it."
            );
        }
        CloudCommand::Pending { apply, dismiss } => {
            if let Some(key) = &apply {
                engine.apply_cloud_pending(key).map_err(|e| e.to_string())?;
                outln!("Made {key}.");
            }
            if let Some(key) = &dismiss {
                engine
                    .dismiss_cloud_pending(key)
                    .map_err(|e| e.to_string())?;
                outln!("Left {key} as it is here.");
            }
            let pending = engine.cloud_pending().map_err(|e| e.to_string())?;
            if pending.is_empty() {
                outln!("Nothing restored is pending.");
            }
            for (key, value) in pending {
                outln!("  {key} = {value}");
            }
        }
        CloudCommand::Backup {
            allow, histories, ..
        } => {
            if let Some(choice) = &histories {
                engine
                    .set_cloud_backup_histories(choice == "on")
                    .map_err(|e| e.to_string())?;
                let words = match engine.settings().language {
                    Language::Zh => backup::HISTORIES_DISCLOSURE_ZH,
                    Language::En => backup::HISTORIES_DISCLOSURE_EN,
                };
                if choice == "on" {
                    outln!("Conversation histories go in the backup: {words}");
                } else {
                    outln!("Conversation histories stay out of the backup.");
                }
                if !allow && !engine.consent().cloud_backup {
                    outln!(
                        "The app's backup is off: nothing written (harness cloud backup --allow)."
                    );
                    return Ok(());
                }
            }
            if allow {
                engine.set_cloud_backup(true).map_err(|e| e.to_string())?;
                outln!("The app's backup is on:");
                let words = match engine.settings().language {
                    Language::Zh => backup::DISCLOSURE_ZH,
                    Language::En => backup::DISCLOSURE_EN,
                };
                for line in words {
                    outln!("  {line}");
                }
            }
            let written = engine.cloud_backup().await.map_err(|e| e.to_string())?;
            outln!(
                "Backed up: {} bytes in {} part(s), sealed with the account key.",
                written.bytes,
                written.parts
            );
        }
        CloudCommand::Restore => restore(&engine).await?,
    }
    Ok(())
}

async fn restore(engine: &Engine) -> Result<(), String> {
    let restored = engine.cloud_restore().await.map_err(|e| e.to_string())?;
    outln!(
        "Restored {} setting(s), {} memory(ies), {} job(s), {} conversation title(s).",
        restored.applied.len(),
        restored.memories,
        restored.jobs,
        restored.conversations
    );
    for key in &restored.applied {
        outln!("  set {key}");
    }
    if restored.messages > 0 {
        outln!("Their histories: {} message(s).", restored.messages);
    }
    if restored.plugin_values > 0 {
        outln!(
            "Plugins' data: {} value(s) put back.",
            restored.plugin_values
        );
    }
    if !restored.pending.is_empty() {
        outln!("Not made: each would loosen a permission here. Make one yourself with:");
        for (key, _) in &restored.pending {
            outln!("  harness cloud pending --apply {key}");
        }
    }
    if !restored.cloud_consents_pending.is_empty() {
        outln!("Plugins that kept data in the cloud; allow each yourself with:");
        for plugin in &restored.cloud_consents_pending {
            outln!("  harness consent cloud {plugin} on");
        }
    }
    for (what, why) in &restored.refused {
        outln!("Not restored: {what}: {why}");
    }
    Ok(())
}
