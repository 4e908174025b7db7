//! What a push sends to the pull request: the open threads GitHub does not
//! have yet (on the head's lines, carried back from the text here), the
//! replies made here on synced threads, and resolutions changed here while
//! GitHub's stayed. Decided without side effects, then sent one mutation at
//! a time, each GitHub id recorded on its thread as soon as GitHub answers,
//! so a push after a failure or a crash sends only what is left.

use std::collections::HashMap;
use std::path::Path;

use super::placing;
use crate::feedback::{Comment, GithubMark, SyncedComment, Thread};
use crate::github::remote::RemotePullRequest;
use crate::github::review::DraftThread;

/// A thread GitHub does not have yet.
#[derive(Debug, Clone)]
pub struct NewThread {
    pub parley_thread: String,
    pub draft: DraftThread,
    /// Its first comment, sent as the thread's body.
    pub first: Comment,
    /// Its later comments, sent as replies.
    pub later: Vec<Comment>,
}

/// A comment made here on a synced thread.
#[derive(Debug, Clone)]
pub struct Reply {
    pub parley_thread: String,
    pub github_thread: String,
    pub path: String,
    pub comment: Comment,
}

/// A synced thread resolved or reopened here since the last sync.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub parley_thread: String,
    pub github_thread: String,
    pub path: String,
    pub resolved: bool,
}

/// A synced thread an agent resolved here, left open on GitHub for its
/// author to close (agents may not resolve there unless the person's own
/// config says `agents_may_resolve`).
#[derive(Debug, Clone)]
pub struct LeftOpen {
    pub parley_thread: String,
    pub path: String,
    /// The thread on GitHub.
    pub url: String,
    /// The agent that resolved it here.
    pub agent: String,
}

/// A thread not sent, and why.
#[derive(Debug, Clone)]
pub struct NotSent {
    pub path: String,
    /// 1-based, here.
    pub line: u32,
    pub reason: String,
}

/// Everything one push sends.
#[derive(Debug, Clone, Default)]
pub struct PushPlan {
    pub threads: Vec<NewThread>,
    pub replies: Vec<Reply>,
    pub resolutions: Vec<Resolution>,
    pub left_open: Vec<LeftOpen>,
    pub not_sent: Vec<NotSent>,
}

/// The texts a plan needs: each file as it is here, and as the pull
/// request's head has it (`None` when the head lacks it, or this clone
/// lacks the head).
pub struct Texts {
    pub here: HashMap<String, Option<String>>,
    pub head: HashMap<String, Option<String>>,
    /// Whether this clone has the head commit at all.
    pub has_head: bool,
}

/// Reads the texts of `paths` (relative to the workspace).
pub fn read_texts(workspace: &Path, head_oid: &str, paths: &[String]) -> Texts {
    let has_head = crate::git::verify_commit(workspace, head_oid).is_ok();
    let mut here = HashMap::new();
    let mut head = HashMap::new();
    for path in paths {
        if here.contains_key(path) {
            continue;
        }
        let on_disk = crate::reviews::join_inside(workspace, Path::new(path))
            .and_then(|file| std::fs::read(file).ok())
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .map(crate::line_endings::into_lf);
        here.insert(path.clone(), on_disk);
        let in_head = crate::git::file_at(workspace, head_oid, path).map(crate::line_endings::into_lf);
        head.insert(path.clone(), in_head);
    }
    Texts { here, head, has_head }
}

/// What to send for `threads` (this workspace's, resolved ones included) to
/// the pull request `name` as `remote` holds it now. An agent's comments go
/// as the agent's ([`attributed`]); an agent's resolution goes only when
/// `agents_may_resolve`.
pub fn plan(
    name: &str,
    remote: &RemotePullRequest,
    threads: &[&Thread],
    texts: &Texts,
    agents_may_resolve: bool,
) -> PushPlan {
    let mut plan = PushPlan::default();
    let remote_resolved: HashMap<&str, bool> = remote.threads.iter().map(|t| (t.id.as_str(), t.is_resolved)).collect();
    for thread in threads {
        match thread.standing.github.as_deref() {
            None => new_thread(&mut plan, thread, texts),
            Some(mark) if mark.pull_request == name && !mark.thread_id.is_empty() => {
                let github_resolved_now = remote_resolved.get(mark.thread_id.as_str()).copied();
                synced_thread(&mut plan, thread, mark, github_resolved_now, agents_may_resolve)
            }
            Some(_) => {}
        }
    }
    plan
}

fn new_thread(plan: &mut PushPlan, thread: &Thread, texts: &Texts) {
    // A walkthrough's comments explain a change to the person here; they
    // are not review comments.
    if thread.resolved || thread.standing.walkthrough.is_some() {
        return;
    }
    let Some(first) = thread.comments.first() else { return };
    let start = thread.span.start_line;
    let end = if thread.span.end.bytes == 0 && thread.span.end_line > start {
        thread.span.end_line - 1
    } else {
        thread.span.end_line
    };
    let mut not_sent = |reason: String| {
        plan.not_sent.push(NotSent { path: thread.path.clone(), line: start + 1, reason });
    };
    if !texts.has_head {
        return not_sent("this clone does not have the pull request's head commit: `git fetch` it".into());
    }
    let (Some(Some(here)), Some(head)) = (texts.here.get(&thread.path), texts.head.get(&thread.path)) else {
        return not_sent(format!("{} cannot be read here", thread.path));
    };
    let Some(head) = head else {
        return not_sent(format!("{} is not in the pull request's head (commit and push it first)", thread.path));
    };
    let Some((head_start, head_end)) = placing::carry_whole(here, head, start, end) else {
        return not_sent(
            "its lines were changed here and are not in the pull request's head (commit and push them first)".into(),
        );
    };
    // A thread an agent opened: its first comment, and its later ones under
    // the same name, are the agent's.
    let as_sent = |comment: &Comment| {
        let by_agent = thread.standing.opened_by.is_some() && comment.author == first.author;
        Comment {
            body: if by_agent { attributed(&comment.author, &comment.body) } else { comment.body.clone() },
            ..comment.clone()
        }
    };
    let first = as_sent(first);
    plan.threads.push(NewThread {
        parley_thread: thread.id.clone(),
        draft: DraftThread {
            path: thread.path.clone(),
            side: "RIGHT".into(),
            start_line: head_start + 1,
            line: head_end + 1,
            body: first.body.clone(),
        },
        first,
        later: thread.comments[1..].iter().map(as_sent).collect(),
    });
}

fn synced_thread(
    plan: &mut PushPlan,
    thread: &Thread,
    mark: &GithubMark,
    github_resolved_now: Option<bool>,
    agents_may_resolve: bool,
) {
    let known: Vec<&str> = mark.comments.iter().map(|c| c.parley.as_str()).collect();
    for comment in thread.comments.iter().filter(|c| !known.contains(&c.id.as_str())) {
        let mut comment = comment.clone();
        if mark.agent_comments.contains(&comment.id) {
            comment.body = attributed(&comment.author, &comment.body);
        }
        plan.replies.push(Reply {
            parley_thread: thread.id.clone(),
            github_thread: mark.thread_id.clone(),
            path: thread.path.clone(),
            comment,
        });
    }
    // Resolved or reopened here since the last sync, while GitHub's stayed
    // as it was (a change on both sides is the pull's to settle).
    let Some(github_now) = github_resolved_now else { return };
    if thread.resolved != mark.resolved_at_sync && github_now == mark.github_resolved && github_now != thread.resolved {
        // An agent's "done" is its reply; closing a teammate's thread is
        // theirs unless the person here lets agents do it.
        let by_agent = thread.standing.resolved.as_deref().filter(|m| m.agent && thread.resolved);
        if let Some(agent) = by_agent.filter(|_| !agents_may_resolve) {
            plan.left_open.push(LeftOpen {
                parley_thread: thread.id.clone(),
                path: thread.path.clone(),
                url: mark.url.clone(),
                agent: agent.by.clone(),
            });
            return;
        }
        plan.resolutions.push(Resolution {
            parley_thread: thread.id.clone(),
            github_thread: mark.thread_id.clone(),
            path: thread.path.clone(),
            resolved: thread.resolved,
        });
    }
}

/// An agent's comment as GitHub shows it: the agent named first, in bold,
/// then the text, so a teammate tells at a glance who answered (the comment
/// itself is posted under the person's GitHub account). The name keeps only
/// what cannot break the markdown around it.
pub fn attributed(agent: &str, body: &str) -> String {
    let name: String =
        agent.chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | ' ' | '/')).take(40).collect();
    let name = if name.trim().is_empty() { "agent" } else { name.trim() };
    format!("**{name}** (agent, via Parley): {body}")
}

/// The mark a thread gets once GitHub has made its review thread.
pub fn mark_of_new(
    name: &str,
    thread: &NewThread,
    added: &crate::github::review::AddedThread,
    now: &str,
) -> GithubMark {
    GithubMark {
        pull_request: name.to_owned(),
        thread_id: added.thread_id.clone(),
        url: added.url.clone(),
        side: thread.draft.side.clone(),
        start_line: thread.draft.start_line,
        end_line: thread.draft.line,
        outdated: false,
        comments: vec![SyncedComment { parley: thread.first.id.clone(), github: added.comment_id.clone() }],
        github_resolved: false,
        resolved_at_sync: false,
        synced_at: now.to_owned(),
        agent_comments: Vec::new(),
    }
}

/// What a push did (or, dry, would do).
#[derive(Debug, Clone, Default)]
pub struct PushOutcome {
    /// RFC 3339.
    pub at: String,
    pub dry_run: bool,
    pub plan: PushPlan,
    /// The event the review was submitted with, when it was.
    pub event: Option<crate::github::review::ReviewEvent>,
    /// `pending` (left for the person to submit on GitHub), `submitted`,
    /// or none when no review was touched.
    pub review: Option<&'static str>,
    pub review_url: Option<String>,
    /// What the settings say that the person should know (a repository's
    /// config tried to let agents resolve threads).
    pub settings_note: Option<String>,
}
