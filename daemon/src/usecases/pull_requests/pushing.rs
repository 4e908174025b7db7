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
use crate::github::remote::{RemotePullRequest, RemoteThread};
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
    pub not_sent: Vec<NotSent>,
    pub left_open: Vec<LeftOpen>,
    /// What GitHub cannot follow: synced threads whose lines moved here.
    pub notes: Vec<String>,
}

/// The most characters GitHub takes in one comment's body.
pub const GITHUB_BODY_LIMIT: usize = 65_536;

/// Why `body` cannot go to GitHub, when it is too long. It is not split:
/// a comment cut in parts reads as fragments on GitHub (a code block cut
/// in two shows as broken markdown), and one Parley comment would stand
/// for several of GitHub's.
pub fn too_long(body: &str) -> Option<String> {
    let length = body.chars().count();
    (length > GITHUB_BODY_LIMIT).then(|| {
        format!(
            "it is {} characters, over GitHub's limit of {} for a comment: it stays here, unsent; say it in shorter \
             replies, or put the long part in a file on the branch and point to it",
            thousands(length),
            thousands(GITHUB_BODY_LIMIT)
        )
    })
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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
    let remote_by_id: HashMap<&str, &RemoteThread> = remote.threads.iter().map(|t| (t.id.as_str(), t)).collect();
    for thread in threads {
        match thread.standing.github.as_deref() {
            None => new_thread(&mut plan, thread, texts),
            Some(mark) if mark.pull_request == name && !mark.thread_id.is_empty() => {
                let there = remote_by_id.get(mark.thread_id.as_str()).copied();
                synced_thread(&mut plan, thread, mark, there, texts, agents_may_resolve)
            }
            Some(_) => {}
        }
    }
    plan
}

/// The 0-based lines (first, last) of `thread` here.
fn lines_here(thread: &Thread) -> (u32, u32) {
    let start = thread.span.start_line;
    let end = if thread.span.end.bytes == 0 && thread.span.end_line > start {
        thread.span.end_line - 1
    } else {
        thread.span.end_line
    };
    (start, end)
}

/// The 1-based lines (first, last) of the pull request's head that
/// `thread` is on here, or why it cannot be put there.
pub fn head_lines(thread: &Thread, texts: &Texts) -> Result<(u32, u32), String> {
    let (start, end) = lines_here(thread);
    if !texts.has_head {
        return Err("this clone does not have the pull request's head commit: `git fetch` it".into());
    }
    let (Some(Some(here)), Some(head)) = (texts.here.get(&thread.path), texts.head.get(&thread.path)) else {
        return Err(format!("{} cannot be read here", thread.path));
    };
    let Some(head) = head else {
        return Err(format!("{} is not in the pull request's head (commit and push it first)", thread.path));
    };
    placing::carry_whole(here, head, start, end).map(|(s, e)| (s + 1, e + 1)).ok_or_else(|| {
        "its lines were changed here and are not in the pull request's head (commit and push them first)".into()
    })
}

fn new_thread(plan: &mut PushPlan, thread: &Thread, texts: &Texts) {
    // A walkthrough's comments explain a change to the person here; they
    // are not review comments.
    if thread.resolved || thread.standing.walkthrough.is_some() {
        return;
    }
    let Some(first) = thread.comments.first() else { return };
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
    let line = lines_here(thread).0 + 1;
    let (head_start, head_end) = match head_lines(thread, texts).and_then(|lines| match too_long(&first.body) {
        Some(why) => Err(format!("{why} (resolve it here and open a shorter thread on these lines)")),
        None => Ok(lines),
    }) {
        Ok(lines) => lines,
        Err(reason) => return plan.not_sent.push(NotSent { path: thread.path.clone(), line, reason }),
    };
    let mut later = Vec::new();
    for comment in thread.comments[1..].iter().map(as_sent) {
        match too_long(&comment.body) {
            Some(reason) => plan.not_sent.push(NotSent { path: thread.path.clone(), line, reason }),
            None => later.push(comment),
        }
    }
    plan.threads.push(NewThread {
        parley_thread: thread.id.clone(),
        draft: DraftThread {
            path: thread.path.clone(),
            side: "RIGHT".into(),
            start_line: head_start,
            line: head_end,
            body: first.body.clone(),
        },
        first,
        later,
    });
}

fn synced_thread(
    plan: &mut PushPlan,
    thread: &Thread,
    mark: &GithubMark,
    there: Option<&RemoteThread>,
    texts: &Texts,
    agents_may_resolve: bool,
) {
    let github_resolved_now = there.map(|t| t.is_resolved);
    let known: Vec<&str> = mark.comments.iter().map(|c| c.parley.as_str()).collect();
    for comment in thread.comments.iter().filter(|c| !known.contains(&c.id.as_str())) {
        let mut comment = comment.clone();
        if mark.agent_comments.contains(&comment.id) {
            comment.body = attributed(&comment.author, &comment.body);
        }
        if let Some(reason) = too_long(&comment.body) {
            plan.not_sent.push(NotSent { path: thread.path.clone(), line: lines_here(thread).0 + 1, reason });
            continue;
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
        match by_agent.filter(|_| !agents_may_resolve) {
            Some(agent) => plan.left_open.push(LeftOpen {
                parley_thread: thread.id.clone(),
                path: thread.path.clone(),
                url: mark.url.clone(),
                agent: agent.by.clone(),
            }),
            None => plan.resolutions.push(Resolution {
                parley_thread: thread.id.clone(),
                github_thread: mark.thread_id.clone(),
                path: thread.path.clone(),
                resolved: thread.resolved,
            }),
        }
    }
    if let Some(there) = there {
        moved(plan, thread, there, texts);
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

/// Says so when a synced thread's lines moved here: GitHub cannot move a
/// review thread, so it stays on the lines it has on the head.
fn moved(plan: &mut PushPlan, thread: &Thread, there: &RemoteThread, texts: &Texts) {
    if there.diff_side != crate::github::DiffSide::Right || there.is_outdated || thread.resolved {
        return;
    }
    let Some(line) = there.line else { return };
    let github = (there.start_line.unwrap_or(line).min(line), line);
    // Lines changed here (an agent's fix) are not a move: the thread
    // becomes outdated on GitHub once the change is pushed.
    let Ok(ours) = head_lines(thread, texts) else { return };
    if ours == github {
        return;
    }
    let span =
        |(start, end): (u32, u32)| if start < end { format!("lines {start}-{end}") } else { format!("line {end}") };
    plan.notes.push(format!(
        "the thread on {} was moved here to {} of the head; GitHub cannot move a thread: it stays on {}{}",
        thread.path,
        span(ours),
        span(github),
        there.comments.first().map(|c| format!(" ({})", c.url)).unwrap_or_default()
    ));
}

/// Whether GitHub's `there` is the review thread `draft` makes: the same
/// path, side, lines and first comment (a push whose answer was lost).
pub fn is_made_from(draft: &crate::github::review::DraftThread, there: &RemoteThread) -> bool {
    there.path == draft.path
        && there.diff_side == crate::github::DiffSide::Right
        && draft.side == "RIGHT"
        && there.line == Some(draft.line)
        && there.start_line.unwrap_or(draft.line) == draft.start_line
        && there.comments.first().is_some_and(|c| c.body == draft.body)
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
        text_gone: false,
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
    /// Threads GitHub already had from an earlier push cut off before its
    /// answer was kept: tied to theirs, not sent again.
    pub adopted: usize,
    /// For a round pushed as a review: which, and the review's body.
    pub round: Option<(String, u32)>,
    pub body: Option<String>,
    /// A round's findings an earlier push already sent as threads.
    pub already_on_github: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn githubs_limit_counts_characters_and_says_what_to_do() {
        assert_eq!(too_long(&"x".repeat(GITHUB_BODY_LIMIT)), None);
        // 65,536 characters of three bytes each: within GitHub's limit.
        assert_eq!(too_long(&"€".repeat(GITHUB_BODY_LIMIT)), None);
        let why = too_long(&"x".repeat(GITHUB_BODY_LIMIT + 1)).expect("one over");
        assert!(why.starts_with("it is 65,537 characters, over GitHub's limit of 65,536"), "{why}");
        assert!(why.contains("shorter replies"), "{why}");
    }
}
