//! A conversation's scope as the gates apply it to one call (seed 003: "Approving an operation
//! does not expand the conversation's file, network, or application scope"; DESIGN.md §3 steps
//! 6 and 8b). A plugin's grants say what it may ever reach; the scope narrows that to what the
//! calling conversation lets it reach. The invoke path builds one for each call from the
//! conversation's scope as it stands when the call is decided, hands it to the gates in the
//! call's `Services`, and reads back whether a gate refused for it.
//!
//! A list left empty does not narrow: the plugin's own grants bound it (docs/ARCHITECTURE.md,
//! "A conversation's scope").

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use url::Url;

use super::network::HostScope;

/// How a refusal for the scope ends: where the user, and only the user, widens it.
const WIDEN: &str = "Approving a call never widens the conversation's scope; the user widens \
                     it in the conversation's settings → Scope.";

/// The calling conversation's scope, for one call.
#[derive(Debug, Default)]
pub struct CallScope {
    /// The hosts and how the user wrote them; none when the conversation lists no host.
    hosts: Option<(HostScope, Vec<String>)>,
    /// The folders; none when the conversation lists no folder.
    roots: Option<Vec<PathBuf>>,
    // Apps (Copilot's scope) are not reached by any plugin yet: the gate that operates an app
    // will check the conversation's `apps` here, as hosts and folders are.
    /// The first refusal for the scope during the call, so the call ends `out_of_scope`.
    refused: Mutex<Option<String>>,
}

impl CallScope {
    /// Narrows nothing: a tap (DESIGN.md §3 step 7, never questioned).
    pub fn unbounded() -> Self {
        Self::default()
    }

    /// The scope of a conversation listing `hosts` (url_allowlist's spellings) and `roots`.
    pub fn new(hosts: &[String], roots: &[PathBuf]) -> Self {
        Self {
            hosts: (!hosts.is_empty()).then(|| (HostScope::new(hosts), hosts.to_vec())),
            roots: (!roots.is_empty()).then(|| roots.to_vec()),
            refused: Mutex::default(),
        }
    }

    /// Why `url`'s host is outside the scope, or none when it is inside.
    pub fn url_outside(&self, url: &Url) -> Option<String> {
        let (scope, listed) = self.hosts.as_ref()?;
        (!scope.admits(url)).then(|| {
            format!(
                "Host \"{}\" is outside this conversation's network scope ({}).",
                url.host_str().unwrap_or_default(),
                listed.join(", ")
            )
        })
    }

    /// The network gate's check, before anything is sent: `Ok`, or the `error: ` string.
    pub(crate) fn check_url(&self, url: &Url) -> Result<(), String> {
        match self.url_outside(url) {
            None => Ok(()),
            Some(reason) => Err(self.refuse(reason)),
        }
    }

    /// The fs gate's check of `resolved`, the canonical path of the file about to be read (as
    /// the plugin named it: `shown`), before a byte of it is read.
    pub(crate) fn check_path(&self, resolved: &Path, shown: &str) -> Result<(), String> {
        let Some(roots) = &self.roots else {
            return Ok(());
        };
        // A root is compared by its canonical path, as the file is; one that does not exist
        // holds nothing.
        let inside = roots
            .iter()
            .filter_map(|root| std::fs::canonicalize(root).ok())
            .any(|root| resolved.starts_with(root));
        if inside {
            return Ok(());
        }
        let listed: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        Err(self.refuse(format!(
            "Path \"{shown}\" is outside this conversation's folders ({}).",
            listed.join(", ")
        )))
    }

    fn refuse(&self, reason: String) -> String {
        let mut refused = crate::lock(&self.refused);
        let message = out_of_scope(&reason);
        refused.get_or_insert_with(|| message.clone());
        format!("error: {message}")
    }

    /// What a gate refused for the scope during the call, if it did: the agent's message.
    pub fn refusal(&self) -> Option<String> {
        crate::lock(&self.refused).clone()
    }
}

/// The agent's message for a call refused `out_of_scope`: what is outside, and where the scope
/// is widened.
pub fn out_of_scope(reason: &str) -> String {
    format!("{reason} {WIDEN}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn an_empty_scope_narrows_nothing() {
        let scope = CallScope::new(&[], &[]);
        assert_eq!(scope.check_url(&url("https://anything.example/")), Ok(()));
        assert_eq!(
            scope.check_path(Path::new("/anywhere/a.txt"), "a.txt"),
            Ok(())
        );
        assert_eq!(scope.refusal(), None);
    }

    #[test]
    fn hosts_match_as_url_allowlist_entries_do_at_a_dot_boundary() {
        let scope = CallScope::new(&["pku.edu.cn".into(), "10.0.0.1".into()], &[]);
        assert_eq!(scope.check_url(&url("https://pku.edu.cn/a")), Ok(()));
        assert_eq!(scope.check_url(&url("https://its.pku.edu.cn/a")), Ok(()));
        assert_eq!(scope.check_url(&url("http://10.0.0.1:8080/")), Ok(()));
        assert_eq!(scope.refusal(), None);
        assert_eq!(
            scope.check_url(&url("https://evilpku.edu.cn/")),
            Err(
                "error: Host \"evilpku.edu.cn\" is outside this conversation's network scope \
                 (pku.edu.cn, 10.0.0.1). Approving a call never widens the conversation's \
                 scope; the user widens it in the conversation's settings → Scope."
                    .into()
            )
        );
        assert!(
            scope
                .refusal()
                .unwrap()
                .starts_with("Host \"evilpku.edu.cn\" is outside")
        );
    }

    #[test]
    fn a_host_entry_in_no_spelling_matches_nothing() {
        let scope = CallScope::new(&["api.*.com".into()], &[]);
        assert!(scope.url_outside(&url("https://api.x.com/")).is_some());
    }

    #[test]
    fn a_path_is_inside_only_beneath_a_root_compared_by_components() {
        let tmp = tempfile::tempdir().unwrap();
        let notes = tmp.path().join("notes");
        std::fs::create_dir(&notes).unwrap();
        let notes = std::fs::canonicalize(notes).unwrap();
        let scope = CallScope::new(&[], std::slice::from_ref(&notes));
        assert_eq!(
            scope.check_path(&notes.join("a.txt"), "notes/a.txt"),
            Ok(())
        );
        let sibling = notes.with_file_name("notes-private").join("b.txt");
        assert!(scope.check_path(&sibling, "notes-private/b.txt").is_err());
        let missing = CallScope::new(&[], &[tmp.path().join("gone")]);
        assert!(missing.check_path(&notes.join("a.txt"), "a.txt").is_err());
    }
}
