//! Which editor window an agent most likely means when it asks for "the
//! selection": the window its environment names, else the most recently
//! focused window whose workspace holds the agent's folder. A window on
//! another workspace is given only when the agent asks for any workspace;
//! otherwise it is named, not asked, so the agent never acts on another
//! project's code by mistake.

use std::path::Path;

use crate::workspace;

/// What routing needs to know of a connected editor.
#[derive(Debug, Clone)]
pub struct Candidate<'a> {
    pub connection_id: u64,
    pub editor_id: Option<&'a str>,
    pub workspaces: &'a [std::path::PathBuf],
    /// Higher is more recent.
    pub focus_rank: u64,
}

/// Why a window was chosen, for the agent's benefit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    NamedByEnvironment,
    FocusedInWorkspace,
    /// The most recently focused window, on another workspace: the agent
    /// asked for any workspace.
    OtherWorkspace,
    /// The most recently focused window is on another workspace and the
    /// agent did not ask for any: it is not to be asked.
    NotInWorkspace,
}

/// Picks a window for an agent with `editor_id` (from `PARLEY_EDITOR_ID`)
/// working in `folder` (unknown: every window is on another workspace);
/// `any_workspace` when the agent asked for a window on any workspace.
pub fn choose(
    candidates: &[Candidate<'_>],
    editor_id: Option<&str>,
    folder: Option<&Path>,
    any_workspace: bool,
) -> Option<(u64, Reason)> {
    // Two windows may claim one id (a reloaded window whose old connection
    // lingers): the more recently focused or connected one is meant.
    if let Some(wanted) = editor_id
        && let Some(c) = candidates.iter().filter(|c| c.editor_id == Some(wanted)).max_by_key(|c| c.focus_rank)
    {
        return Some((c.connection_id, Reason::NamedByEnvironment));
    }
    let latest = |filter: &dyn Fn(&Candidate<'_>) -> bool| {
        candidates.iter().filter(|c| filter(c)).max_by_key(|c| c.focus_rank).map(|c| c.connection_id)
    };
    if let Some(folder) = folder
        && let Some(id) =
            latest(&|c| c.workspaces.iter().any(|w| workspace::holds(w, folder) || workspace::holds(folder, w)))
    {
        return Some((id, Reason::FocusedInWorkspace));
    }
    let elsewhere = if any_workspace { Reason::OtherWorkspace } else { Reason::NotInWorkspace };
    latest(&|_| true).map(|id| (id, elsewhere))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn prefers_named_then_workspace_then_recent() {
        let a = [PathBuf::from("/a")];
        let b = [PathBuf::from("/b")];
        let editors = [
            Candidate { connection_id: 1, editor_id: Some("one"), workspaces: &a, focus_rank: 1 },
            Candidate { connection_id: 2, editor_id: Some("two"), workspaces: &b, focus_rank: 3 },
            Candidate { connection_id: 3, editor_id: None, workspaces: &a, focus_rank: 2 },
        ];
        let check = |id: Option<&str>, folder: Option<&str>, any: bool, want: Option<(u64, Reason)>| {
            assert_eq!(choose(&editors, id, folder.map(Path::new), any), want, "{id:?} {folder:?} {any}");
        };
        check(Some("one"), Some("/b"), false, Some((1, Reason::NamedByEnvironment)));
        check(Some("gone"), Some("/a/src"), false, Some((3, Reason::FocusedInWorkspace)));
        check(None, Some("/b"), false, Some((2, Reason::FocusedInWorkspace)));
        check(None, Some("/b"), true, Some((2, Reason::FocusedInWorkspace)));
        check(None, Some("/elsewhere"), false, Some((2, Reason::NotInWorkspace)));
        check(None, Some("/elsewhere"), true, Some((2, Reason::OtherWorkspace)));
        check(None, None, false, Some((2, Reason::NotInWorkspace)));
        check(None, None, true, Some((2, Reason::OtherWorkspace)));
        assert_eq!(choose(&[], None, None, true), None);
    }

    #[test]
    fn a_shared_editor_id_means_the_most_recent_window() {
        let a = [PathBuf::from("/a")];
        let editors = [
            Candidate { connection_id: 1, editor_id: Some("same"), workspaces: &a, focus_rank: 5 },
            Candidate { connection_id: 2, editor_id: Some("same"), workspaces: &a, focus_rank: 9 },
            Candidate { connection_id: 3, editor_id: Some("same"), workspaces: &a, focus_rank: 7 },
        ];
        assert_eq!(choose(&editors, Some("same"), None, false), Some((2, Reason::NamedByEnvironment)));
    }
}
