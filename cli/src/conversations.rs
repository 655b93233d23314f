//! `harness conversations`: the conversations of a data directory, newest first, and renaming
//! or deleting one — the conversation list's actions, from a terminal. A delete here is final:
//! the screen's undo lives only as long as the process that deleted.

use std::path::Path;
use std::sync::Arc;

use clap::Subcommand;

use crate::tools::NoPrompts;

#[derive(Subcommand)]
pub enum ConversationsCommand {
    /// Every conversation, the most recently active first: id, last activity, title, preview.
    List,
    /// Give a conversation a title.
    Rename { id: String, title: String },
    /// Delete a conversation: its history, documents, rules and scope (no undo here).
    Delete { id: String },
}

pub fn run(data_dir: &Path, command: ConversationsCommand) -> Result<(), String> {
    let engine = crate::open::engine(data_dir, Arc::new(NoPrompts))?;
    let conversations = engine.conversations();
    match command {
        ConversationsCommand::List => {
            let listed = conversations.list().map_err(|e| e.to_string())?;
            if listed.is_empty() {
                outln!("No conversations: `harness chat --conversation new` starts one.");
            }
            for c in listed {
                let when = chrono::DateTime::from_timestamp_millis(c.last_active_ms)
                    .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
                    .unwrap_or_default();
                let title = c.title.as_deref().unwrap_or("(untitled)");
                outln!("{}  {when}  {title}", c.id);
                if let Some(preview) = c.preview {
                    outln!("    {preview}");
                }
            }
        }
        ConversationsCommand::Rename { id, title } => {
            let title = conversations
                .rename(&id, &title)
                .map_err(|e| e.to_string())?;
            outln!("conversation {id} is now titled {title}");
        }
        ConversationsCommand::Delete { id } => {
            conversations.delete(&id).map_err(|e| e.to_string())?;
            outln!("conversation {id} deleted");
        }
    }
    Ok(())
}
