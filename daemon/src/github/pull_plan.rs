//! What pulling a pull request changes in Parley, decided without touching
//! anything: new threads, replies made on GitHub, resolution and outdated
//! marks that changed there, threads deleted there, and the resolutions
//! changed on both sides since the last sync. A thread pulled twice is the
//! same thread: GitHub's ids are remembered on each Parley thread.

use std::collections::{BTreeSet, HashMap};

use super::remote::{RemoteComment, RemotePullRequest, RemoteThread};

/// What a Parley thread remembers of the GitHub thread it is synced with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    pub parley_thread: String,
    /// GitHub's thread id (`PRRT_…`).
    pub github_thread: String,
    /// GitHub's ids of the comments Parley already has (pulled or pushed).
    pub known_comments: BTreeSet<String>,
    /// GitHub's `isResolved` and `isOutdated` when last synced.
    pub github_resolved: bool,
    pub github_outdated: bool,
    /// Whether the Parley thread is resolved now, and whether it was when
    /// last synced.
    pub resolved_here: bool,
    pub resolved_here_at_sync: bool,
}

/// One change a pull makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullStep {
    /// A thread Parley does not have: made, with every comment.
    New(RemoteThread),
    /// Comments made on GitHub since the last sync, in order.
    Replies { parley_thread: String, comments: Vec<RemoteComment> },
    /// Resolved or reopened on GitHub since the last sync.
    Resolution { parley_thread: String, resolved: bool },
    /// The lines it was on changed on GitHub (a push moved or removed them).
    Outdated { parley_thread: String, outdated: bool },
    /// Resolved on one side and reopened on the other since the last sync.
    /// GitHub does not say when a thread was resolved, so its change is
    /// dated at the sync that sees it: the later, and so the one kept.
    ResolutionConflict { parley_thread: String, github_resolved: bool },
    /// Deleted on GitHub (its last comment deleted there).
    Gone { parley_thread: String },
}

/// The steps that bring `remote` into Parley, given what Parley's threads
/// remember (`synced`), in the order of GitHub's threads, then the gone.
pub fn plan(remote: &RemotePullRequest, synced: &[Synced]) -> Vec<PullStep> {
    let by_github: HashMap<&str, &Synced> = synced.iter().map(|s| (s.github_thread.as_str(), s)).collect();
    let mut steps = Vec::new();
    for thread in &remote.threads {
        let Some(known) = by_github.get(thread.id.as_str()) else {
            if !thread.comments.is_empty() {
                steps.push(PullStep::New(thread.clone()));
            }
            continue;
        };
        let parley_thread = known.parley_thread.clone();
        let new: Vec<RemoteComment> =
            thread.comments.iter().filter(|c| !known.known_comments.contains(&c.id)).cloned().collect();
        if !new.is_empty() {
            steps.push(PullStep::Replies { parley_thread: parley_thread.clone(), comments: new });
        }
        let changed_there = thread.is_resolved != known.github_resolved;
        let changed_here = known.resolved_here != known.resolved_here_at_sync;
        if changed_there && changed_here && thread.is_resolved != known.resolved_here {
            steps.push(PullStep::ResolutionConflict {
                parley_thread: parley_thread.clone(),
                github_resolved: thread.is_resolved,
            });
        } else if changed_there && thread.is_resolved != known.resolved_here {
            steps.push(PullStep::Resolution { parley_thread: parley_thread.clone(), resolved: thread.is_resolved });
        }
        if thread.is_outdated != known.github_outdated {
            steps.push(PullStep::Outdated { parley_thread, outdated: thread.is_outdated });
        }
    }
    let present: BTreeSet<&str> = remote.threads.iter().map(|t| t.id.as_str()).collect();
    for known in synced {
        if !present.contains(known.github_thread.as_str()) {
            steps.push(PullStep::Gone { parley_thread: known.parley_thread.clone() });
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::remote::DiffSide;

    fn comment(id: &str, body: &str) -> RemoteComment {
        RemoteComment {
            id: id.into(),
            database_id: Some(1),
            body: body.into(),
            author: "mona".into(),
            created_at: "2026-11-20T10:00:00Z".into(),
            url: String::new(),
            original_commit: None,
            diff_hunk: None,
        }
    }

    fn thread(id: &str, comments: &[(&str, &str)], resolved: bool) -> RemoteThread {
        RemoteThread {
            id: id.into(),
            is_resolved: resolved,
            is_outdated: false,
            path: "src/lib.rs".into(),
            line: Some(3),
            start_line: None,
            original_line: Some(3),
            original_start_line: None,
            diff_side: DiffSide::Right,
            comments: comments.iter().map(|(id, body)| comment(id, body)).collect(),
        }
    }

    fn pull(threads: Vec<RemoteThread>) -> RemotePullRequest {
        RemotePullRequest {
            id: "PR_1".into(),
            url: String::new(),
            state: "OPEN".into(),
            head_oid: "abc".into(),
            base_oid: "base".into(),
            threads,
            conversation: Vec::new(),
        }
    }

    fn synced(github: &str, comments: &[&str], github_resolved: bool, here: (bool, bool)) -> Synced {
        Synced {
            parley_thread: format!("p-{github}"),
            github_thread: github.into(),
            known_comments: comments.iter().map(|c| c.to_string()).collect(),
            github_resolved,
            github_outdated: false,
            resolved_here: here.0,
            resolved_here_at_sync: here.1,
        }
    }

    #[test]
    fn a_thread_pulled_twice_is_the_same_thread_and_only_new_replies_come_in() {
        let remote = pull(vec![thread("T1", &[("C1", "first"), ("C2", "a reply on GitHub")], false)]);
        assert!(matches!(plan(&remote, &[])[..], [PullStep::New(_)]));
        let steps = plan(&remote, &[synced("T1", &["C1"], false, (false, false))]);
        assert_eq!(
            steps,
            [PullStep::Replies { parley_thread: "p-T1".into(), comments: vec![comment("C2", "a reply on GitHub")] }]
        );
        assert!(plan(&remote, &[synced("T1", &["C1", "C2"], false, (false, false))]).is_empty(), "nothing new");
    }

    #[test]
    fn resolution_follows_the_side_that_changed_and_a_conflict_is_named() {
        let resolved_there = pull(vec![thread("T1", &[("C1", "x")], true)]);
        assert_eq!(
            plan(&resolved_there, &[synced("T1", &["C1"], false, (false, false))]),
            [PullStep::Resolution { parley_thread: "p-T1".into(), resolved: true }]
        );
        // Resolved here since the sync, unchanged there: left for the push.
        let open_there = pull(vec![thread("T1", &[("C1", "x")], false)]);
        assert!(plan(&open_there, &[synced("T1", &["C1"], false, (true, false))]).is_empty());
        // Reopened there and resolved here since the sync.
        assert_eq!(
            plan(&open_there, &[synced("T1", &["C1"], true, (true, false))]),
            [PullStep::ResolutionConflict { parley_thread: "p-T1".into(), github_resolved: false }]
        );
        // Both resolved since the sync: they agree.
        assert!(plan(&resolved_there, &[synced("T1", &["C1"], false, (true, false))]).is_empty());
    }

    #[test]
    fn a_thread_deleted_on_github_is_gone_and_an_outdated_one_is_marked() {
        let mut outdated = thread("T2", &[("C2", "y")], false);
        outdated.is_outdated = true;
        let steps = plan(
            &pull(vec![outdated]),
            &[synced("T1", &["C1"], false, (false, false)), synced("T2", &["C2"], false, (false, false))],
        );
        assert_eq!(
            steps,
            [
                PullStep::Outdated { parley_thread: "p-T2".into(), outdated: true },
                PullStep::Gone { parley_thread: "p-T1".into() },
            ]
        );
    }
}
