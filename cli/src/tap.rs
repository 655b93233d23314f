//! A tap from the terminal (`harness call`): what the phone's screens and system dialogs do for
//! a tool the student tapped, done on the terminal or by the command's flags.

use std::path::PathBuf;

use harness_core::consent::{Permission, PermissionState};
use harness_core::invoke::{ApprovalBroker, Elicitation, ElicitationAnswer, Prompt};
use harness_core::picked::{FILE_BYTES, FilePick, PickedFile};
use harness_core::policy::Answer;

use crate::state::PermissionStateArg;

/// A tap's answers: no approval prompt is answered yes (a tap from the terminal asks for
/// nothing more); a remote server's question, the file picker and a permission's dialog are
/// answered by the flags given, else asked on the terminal.
pub struct TapAnswers {
    pub elicitation: Option<crate::elicit::Reply>,
    /// `--pick FILE`: the file picked when the tool opens the picker.
    pub pick: Option<PathBuf>,
    /// `--permission granted|denied`: the dialog's answer when the tool asks for a permission.
    pub permission: Option<PermissionStateArg>,
}

#[async_trait::async_trait]
impl ApprovalBroker for TapAnswers {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }

    async fn elicit(&self, request: Elicitation) -> ElicitationAnswer {
        crate::elicit::on_terminal(&request, self.elicitation)
    }

    async fn pick_file(&self, request: FilePick) -> Option<PickedFile> {
        outln!(
            "    ┌ {} asks you to pick a file (text, Markdown or PDF)",
            request.plugin_title
        );
        let path = match &self.pick {
            Some(path) => {
                outln!("    └ {} (--pick)", path.display());
                path.clone()
            }
            None => {
                let line = answered("its path (nothing: pick none) ?")?;
                PathBuf::from(line)
            }
        };
        read_picked(&path)
    }

    async fn request_permission(&self, permission: Permission) -> PermissionState {
        let what = match permission {
            Permission::Notifications => "show notifications",
            Permission::ExactAlarm => "set exact alarms",
        };
        outln!("    ┌ the app asks to {what}");
        let granted = match self.permission {
            Some(answer) => {
                let granted = matches!(answer, PermissionStateArg::Granted);
                let word = if granted { "granted" } else { "denied" };
                outln!("    └ {word} (--permission)");
                granted
            }
            None => match answered("allow? [y/n]").as_deref() {
                Some("y" | "Y" | "yes") => true,
                Some(_) => false,
                // No answer (end of input) leaves it as it was: nothing was answered.
                None => return PermissionState::Unknown,
            },
        };
        if granted {
            PermissionState::Granted
        } else {
            PermissionState::Denied
        }
    }
}

/// What was typed on the terminal; `None` for an empty line or the end of input.
fn answered(question: &str) -> Option<String> {
    crate::elicit::line(question).filter(|line| !line.is_empty())
}

/// The picked file, at most `FILE_BYTES` and one byte more read (the core refuses a larger
/// one by its size); none when it cannot be read, said on the terminal.
fn read_picked(path: &std::path::Path) -> Option<PickedFile> {
    use std::io::Read;
    let name = path.file_name()?.to_string_lossy().into_owned();
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path)
        .and_then(|file| file.take(FILE_BYTES as u64 + 1).read_to_end(&mut bytes));
    match read {
        Ok(_) => Some(PickedFile { name, bytes }),
        Err(e) => {
            outln!("    (cannot read {}: {e}; nothing picked)", path.display());
            None
        }
    }
}
