//! Feedback threads as both front doors use them: list and summarise (after
//! re-anchoring against the files on disk), create (from an editor's range,
//! or from an agent's whole lines), reply, resolve, reopen, and position
//! threads in an editor's unsaved buffer.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::{Position, Range};

use super::Context;
pub use crate::feedback::FeedbackError;
use crate::feedback::{self, Comment, Page, Summary, Thread};
use crate::refresh;
use crate::state::ThreadEdit;
use crate::{limits, views, workspace};

mod new_thread;
pub use new_thread::{NewThread, SyncedThread};

/// Threads inside `scope` (or only `file`), re-anchored first, ordered by
/// file then line.
pub async fn list(
    cx: &Context,
    scope: &Path,
    file: Option<PathBuf>,
    include_resolved: bool,
) -> Result<Vec<Thread>, FeedbackError> {
    Ok(list_page(cx, scope, file, include_resolved, Page::ALL).await?.1)
}

/// One page of [`list`], and how many threads the whole listing holds.
pub async fn list_page(
    cx: &Context,
    scope: &Path,
    file: Option<PathBuf>,
    include_resolved: bool,
    page: Page,
) -> Result<(usize, Vec<Thread>), FeedbackError> {
    refresh::refresh(&cx.state, &cx.store, &cx.watch.freshness, scope, file.as_deref()).await?;
    let asked = file.clone();
    let (total, threads) = cx.state.threads_page(scope.to_owned(), file, include_resolved, page).await?;
    // A mistyped path would otherwise read as a file nobody commented on. A
    // file that is gone but still has threads (orphaned) is listed.
    if let Some(file) = asked
        && total == 0
    {
        let shown = file.strip_prefix(scope).unwrap_or(&file).display().to_string();
        let problem = match tokio::fs::symlink_metadata(&file).await {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Some(format!("no such file in this workspace: {shown}"))
            }
            Ok(meta) if meta.is_dir() => Some(format!("{shown} is a folder, not a file")),
            _ => None,
        };
        if let Some(problem) = problem {
            return Err(FeedbackError::NoSuchFile(format!(
                "{problem} (workspace {}); give a file's path relative to the workspace root, or none to list every thread",
                scope.display()
            )));
        }
    }
    Ok((total, threads))
}

/// How many threads an agent's listing (`get_feedback`) answers when not
/// told, and at most: a large workspace's feedback (100,000 threads, 100 MB)
/// would fit no message and no agent's context. 100 threads are about 50 KB
/// of JSON, about 13,000 tokens: under Claude Code's default limit on a
/// tool's output (25,000 tokens).
pub const AGENT_PAGE: usize = 100;
pub const AGENT_PAGE_MAX: usize = 1000;

/// The page of an agent's listing asked by `offset` (the `nextOffset` a
/// previous call gave) and `limit`, or what a page may be.
pub fn agent_page(offset: Option<u64>, limit: Option<u64>) -> Result<Page, FeedbackError> {
    let limit = match limit {
        None => AGENT_PAGE,
        Some(limit) if (1..=AGENT_PAGE_MAX as u64).contains(&limit) => limit as usize,
        Some(other) => {
            return Err(FeedbackError::Invalid(format!("limit must be from 1 to {AGENT_PAGE_MAX}, not {other}")));
        }
    };
    let skip = usize::try_from(offset.unwrap_or(0)).unwrap_or(usize::MAX);
    // Half the hub's budget: a tool's result carries the threads twice, as
    // structure and as text.
    Ok(Page { skip, limit: Some(limit), bytes: Some(limits::PAGE_BYTES / 2) })
}

/// One page of a listing: where it starts, its threads, how many the whole
/// listing holds, and where the next page starts when there is one.
#[derive(Debug, Default)]
pub struct Listing {
    pub offset: usize,
    pub threads: Vec<Thread>,
    pub total: usize,
    pub next_offset: Option<usize>,
}

impl Listing {
    fn of(skip: usize, total: usize, threads: Vec<Thread>) -> Listing {
        let next = skip.saturating_add(threads.len());
        Listing { offset: skip, threads, total, next_offset: (next < total).then_some(next) }
    }
}

/// One listing over several folders, one after the other (an editor's
/// workspaces), paged as one: `limit` threads after `offset`, within
/// [`limits::PAGE_BYTES`]; once the byte budget is spent, the folders after
/// are only counted. `file`, when given, lists only that file, in the
/// folders that hold it.
pub async fn list_across(
    cx: &Context,
    folders: &[PathBuf],
    file: Option<&Path>,
    include_resolved: bool,
    offset: usize,
    limit: Option<usize>,
) -> Result<Listing, FeedbackError> {
    let mut threads = Vec::new();
    let mut total = 0;
    let (mut skip, mut room, mut used) = (offset, limit, 0usize);
    for scope in folders {
        let file = file.map(|f| workspace::real(f, scope));
        if file.as_ref().is_some_and(|f| !workspace::holds(scope, f)) {
            continue;
        }
        let mut page = Page::bounded(skip, room);
        page.bytes = Some(limits::PAGE_BYTES.saturating_sub(used));
        let (held, found) = list_page(cx, scope, file, include_resolved, page).await?;
        total += held;
        let offered = room.unwrap_or(usize::MAX).min(held.saturating_sub(skip));
        skip = skip.saturating_sub(held);
        room = match found.len() < offered {
            // Cut short by the byte budget: the page ends here.
            true => Some(0),
            false => room.map(|room| room - found.len()),
        };
        used += found.iter().map(feedback::listed_bytes).sum::<usize>();
        threads.extend(found);
    }
    Ok(Listing::of(offset, total, threads))
}

/// Threads an agent reads (`get_feedback`, the feedback resource), as
/// [`list`] gives them, recorded as seen by `agent`.
pub async fn list_for_agent(
    cx: &Context,
    scope: &Path,
    file: Option<PathBuf>,
    agent: &str,
) -> Result<Vec<Thread>, FeedbackError> {
    let (_, mut threads) = list_page(cx, scope, file, false, Page::ALL).await?;
    mark_seen(cx, &mut threads, agent).await;
    Ok(threads)
}

/// The page of [`list_for_agent`] asked by `offset` and `limit` (see
/// [`agent_page`]); only its threads become seen.
pub async fn list_page_for_agent(
    cx: &Context,
    scope: &Path,
    file: Option<PathBuf>,
    agent: &str,
    (offset, limit): (Option<u64>, Option<u64>),
) -> Result<Listing, FeedbackError> {
    let page = agent_page(offset, limit)?;
    let (total, mut threads) = list_page(cx, scope, file, false, page).await?;
    mark_seen(cx, &mut threads, agent).await;
    Ok(Listing::of(page.skip, total, threads))
}

/// Records that `agent` has read `threads` (a listing, or the threads a
/// review round's prompt quotes): the open ones become seen by it, in one
/// state command for them all, and `threads` are updated to match. Threads
/// already seen, addressed or resolved are left as they are, so reading
/// again writes and announces nothing.
pub async fn mark_seen(cx: &Context, threads: &mut [Thread], agent: &str) {
    let at = crate::clock::now_rfc3339();
    let ids: Vec<String> =
        threads.iter_mut().filter_map(|t| t.standing.see(t.resolved, agent, &at).then(|| t.id.clone())).collect();
    if !ids.is_empty() {
        cx.state.mark_seen(ids, agent.to_owned(), at).await;
    }
}

/// Counts for `scope`, re-anchored first.
pub async fn summary(cx: &Context, scope: &Path) -> Result<Summary, FeedbackError> {
    refresh::refresh(&cx.state, &cx.store, &cx.watch.freshness, scope, None).await?;
    Ok(cx.state.summary(scope.to_owned()).await?)
}

/// Makes a thread; answers once it is durable and its file is watched.
/// A comment over [`limits::MAX_TEXT_BYTES`] is refused.
pub async fn create(cx: &Context, new: NewThread) -> Result<Thread, FeedbackError> {
    limits::check("the comment", &new.body).map_err(FeedbackError::Invalid)?;
    // Watch first: once the thread is announced, an edit must move it.
    cx.watch.add(new.file.clone()).await;
    new_thread::make(cx, new).await
}

/// A thread an agent opens on whole lines of a file in its workspace.
#[derive(Debug, Clone)]
pub struct AgentThread {
    /// The agent's workspace: the file must be inside it.
    pub scope: PathBuf,
    /// The absolute file, already checked to be inside `scope`.
    pub file: PathBuf,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub body: String,
    pub author: String,
    /// The agent's short name, when it has one: a person's answer in the
    /// thread is a message to it.
    pub agent: Option<String>,
    /// The walkthrough whose comment the thread is.
    pub walkthrough: Option<Box<crate::feedback::WalkthroughMark>>,
}

/// Opens a thread on lines `start_line..=end_line` of a file, quoting them
/// as they are on disk; every failure says what to give instead.
pub async fn create_for_agent(cx: &Context, ask: AgentThread) -> Result<Thread, FeedbackError> {
    let shown = ask.file.strip_prefix(&ask.scope).unwrap_or(&ask.file).display().to_string();
    if ask.body.trim().is_empty() {
        return Err(FeedbackError::Invalid("body is required: write the question or note for the human".into()));
    }
    limits::check("the comment", &ask.body).map_err(FeedbackError::Invalid)?;
    if ask.start_line == 0 {
        return Err(FeedbackError::Invalid("startLine is 1-based: the first line of a file is 1".into()));
    }
    if ask.end_line < ask.start_line {
        return Err(FeedbackError::Invalid(format!(
            "endLine {} is before startLine {}: give an endLine at or after startLine, or leave it out for one line",
            ask.end_line, ask.start_line
        )));
    }
    let (file, first, last) = (ask.file.clone(), ask.start_line, ask.end_line);
    let lines = tokio::task::spawn_blocking(move || read_lines(&file, first, last))
        .await
        .map_err(|e| FeedbackError::Store(format!("reading the file failed: {e}")))?;
    match lines {
        Lines::Missing => {
            return Err(FeedbackError::Invalid(format!(
                "{shown} does not exist in your workspace {}; give the path of an existing file, relative to the workspace root",
                ask.scope.display()
            )));
        }
        Lines::NotAFile => {
            return Err(FeedbackError::Invalid(format!("{shown} is not a regular file; give the path of a text file")));
        }
        Lines::Unreadable(e) => return Err(FeedbackError::Unreadable(format!("cannot read {shown}: {e}"))),
        Lines::NotText => {
            return Err(FeedbackError::Invalid(format!("cannot comment on {shown}: it is not UTF-8 text")));
        }
        Lines::Short(count) => {
            let past = if ask.start_line as usize > count { ask.start_line } else { ask.end_line };
            return Err(FeedbackError::Invalid(format!(
                "line {past} is past the end of {shown}, which has {count} line(s); give lines between 1 and {count}"
            )));
        }
        Lines::Blank => {
            let which = match first == last {
                true => format!("line {first} of {shown} is blank"),
                false => format!("lines {first}-{last} of {shown} are blank"),
            };
            return Err(FeedbackError::Invalid(format!("{which}; put the thread on lines with text")));
        }
        Lines::Text => {}
    }
    let new = NewThread {
        file: ask.file,
        workspace: Some(ask.scope),
        range: Range {
            start: Position { line: ask.start_line - 1, character: 0 },
            // Past the end of the line: creating clamps it to the line's end.
            end: Position { line: ask.end_line - 1, character: u32::MAX },
        },
        encoding: PositionEncoding::Utf8,
        expected_text: None,
        body: ask.body,
        author: ask.author,
        finding: None,
        ask: None,
        opened_by: ask.agent,
        walkthrough: ask.walkthrough,
        synced: None,
    };
    let author = new.author.clone();
    let mut thread = create(cx, new).await?;
    // The agent knows its own question: it waits for the human, and their
    // reply makes it open again.
    mark_seen(cx, std::slice::from_mut(&mut thread), &author).await;
    Ok(thread)
}

/// What reading an agent's lines found.
#[derive(Debug, PartialEq, Eq)]
enum Lines {
    Missing,
    NotAFile,
    Unreadable(String),
    NotText,
    /// The file ends before the last line asked for; it has this many.
    Short(usize),
    /// Every line asked for is empty or whitespace.
    Blank,
    Text,
}

/// Reads a file only as far as line `last` (1-based), so a long file costs
/// no more than the lines asked for; creating the thread reads it whole.
fn read_lines(file: &Path, first: u32, last: u32) -> Lines {
    match std::fs::metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lines::Missing,
        Err(e) => return Lines::Unreadable(e.to_string()),
        // A FIFO or a device would block or never end.
        Ok(meta) if !meta.is_file() => return Lines::NotAFile,
        Ok(_) => {}
    }
    let mut reader = match std::fs::File::open(file) {
        Ok(f) => std::io::BufReader::new(f),
        Err(e) => return Lines::Unreadable(e.to_string()),
    };
    let mut line = Vec::new();
    let mut blank = true;
    for number in 1..=last {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => return Lines::Short(number as usize - 1),
            Ok(_) => {}
            Err(e) => return Lines::Unreadable(e.to_string()),
        }
        if number < first {
            continue;
        }
        match std::str::from_utf8(&line) {
            Ok(text) => blank &= text.trim().is_empty(),
            Err(_) => return Lines::NotText,
        }
    }
    if blank { Lines::Blank } else { Lines::Text }
}

/// Adds a comment by `author` to an open thread.
///
/// `within` says who asks, for this and the other edits: an agent (its
/// workspace: a thread outside it counts as not found), or, when `None`, a
/// person at an editor or the CLI. Either names the thread by the one id
/// rule (`ids`): its whole id or a unique beginning of at least 4 characters.
pub async fn reply(
    cx: &Context,
    thread_id: &str,
    body: String,
    author: String,
    within: Option<&Path>,
) -> Result<(Thread, Comment), FeedbackError> {
    if body.trim().is_empty() {
        return Err(FeedbackError::Invalid("a reply needs a body: write what you want to say".into()));
    }
    limits::check("the reply", &body).map_err(FeedbackError::Invalid)?;
    let comment = Comment { id: feedback::new_id(), body, author, created_at: crate::clock::now_rfc3339() };
    // An agent's reply addresses the thread; a person's makes it open again.
    let change = match within {
        Some(_) => ThreadEdit::AgentReply(comment.clone()),
        None => ThreadEdit::Reply(comment.clone()),
    };
    let thread = edit(cx, thread_id, change, within).await?;
    Ok((thread, comment))
}

/// Marks a thread done: hidden from listings, kept for reopening. An agent
/// (`within` given) resolves it as `agent`, with no note; see
/// [`resolve_for_agent`].
pub async fn resolve(cx: &Context, thread_id: &str, within: Option<&Path>) -> Result<Thread, FeedbackError> {
    let change = match within {
        Some(_) => ThreadEdit::AgentResolve { agent: "agent".into(), note: None },
        None => ThreadEdit::Resolve,
    };
    edit(cx, thread_id, change, within).await
}

/// An agent resolving a thread of its workspace `scope`, leaving `note`
/// (when given) as the thread's last comment, in the same write. Resolving a
/// thread already resolved changes nothing (the note is not added) and is no
/// error: the answer's flag says it was so already.
pub async fn resolve_for_agent(
    cx: &Context,
    thread_id: &str,
    scope: &Path,
    agent: String,
    note: Option<String>,
) -> Result<(Thread, bool), FeedbackError> {
    let note = note.filter(|n| !n.trim().is_empty());
    if let Some(note) = &note {
        limits::check("the note", note).map_err(FeedbackError::Invalid)?;
    }
    let note = note.map(|body| Comment {
        id: feedback::new_id(),
        body,
        author: agent.clone(),
        created_at: crate::clock::now_rfc3339(),
    });
    let id = super::ids::thread(cx, thread_id, Some(scope)).await?;
    match edit(cx, &id, ThreadEdit::AgentResolve { agent, note }, Some(scope)).await {
        Ok(thread) => Ok((thread, false)),
        Err(FeedbackError::AlreadyResolved) => {
            let thread = cx.state.thread(id).await?.ok_or(FeedbackError::NotFound)?;
            Ok((thread, true))
        }
        Err(other) => Err(other),
    }
}

/// Brings a resolved thread back.
pub async fn reopen(cx: &Context, thread_id: &str, within: Option<&Path>) -> Result<Thread, FeedbackError> {
    let thread = edit(cx, thread_id, ThreadEdit::Reopen, within).await?;
    // A file whose threads were all resolved when the daemon started is not
    // watched: reads would trust what they last saw of it.
    cx.watch.follow(views::file_of(&thread));
    Ok(thread)
}

/// The open threads of `file` positioned in an editor's unsaved `text`.
pub async fn in_buffer(cx: &Context, file: &Path, text: String) -> Result<Vec<Thread>, FeedbackError> {
    refresh::in_buffer(&cx.state, &cx.store, file, text).await
}

async fn edit(cx: &Context, thread_id: &str, edit: ThreadEdit, within: Option<&Path>) -> Result<Thread, FeedbackError> {
    let thread_id = super::ids::thread(cx, thread_id, within).await?;
    if let Some(scope) = within {
        let thread = cx.state.thread(thread_id.clone()).await?.ok_or(FeedbackError::NotFound)?;
        if !workspace::holds(scope, &views::file_of(&thread)) {
            return Err(FeedbackError::NotFound);
        }
    }
    cx.state.edit_thread(thread_id, edit).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads lines `first..=last` of a file holding `text`.
    fn check(text: &[u8], first: u32, last: u32) -> Lines {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("f.txt");
        std::fs::write(&file, text).expect("write");
        read_lines(&file, first, last)
    }

    #[test]
    fn lines_are_read_only_as_far_as_asked_and_judged() {
        let text = b"one\n\n  \nfour\nfive";
        let cases = [
            (1, 1, Lines::Text),
            (2, 3, Lines::Blank),
            (2, 4, Lines::Text),
            (5, 5, Lines::Text),
            (5, 6, Lines::Short(5)),
            (7, 9, Lines::Short(5)),
        ];
        for (first, last, expected) in cases {
            assert_eq!(check(text, first, last), expected, "lines {first}-{last}");
        }
        assert_eq!(check(b"", 1, 1), Lines::Short(0));
        assert_eq!(check(b"a\n\xff\xfe\n", 2, 2), Lines::NotText);
        // Bytes that are not UTF-8 after the lines asked for are not read.
        assert_eq!(check(b"a\n\xff\xfe\n", 1, 1), Lines::Text);
    }

    #[test]
    fn missing_files_and_directories_are_told_apart() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(read_lines(&dir.path().join("nope.rs"), 1, 1), Lines::Missing);
        assert_eq!(read_lines(dir.path(), 1, 1), Lines::NotAFile);
    }
}
