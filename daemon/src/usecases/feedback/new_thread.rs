//! Making a thread on a range of a file on disk: the range checked against
//! the file (or, for an editor's unsaved buffer, the quoted text found on
//! disk nearest it), the anchor captured, the file's text kept as the
//! snapshot later edits are diffed against.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::Range;

use crate::feedback::{self, Comment, FeedbackError, Thread, ThreadState};
use crate::line_endings;
use crate::position::LineIndex;
use crate::refresh;
use crate::usecases::Context;

/// A request to make a thread.
#[derive(Debug, Clone)]
pub struct NewThread {
    /// The absolute file.
    pub file: PathBuf,
    /// The workspace it belongs to; defaults to the git root holding the file.
    pub workspace: Option<PathBuf>,
    pub range: Range,
    pub encoding: PositionEncoding,
    /// What the client sees at the range, checked against the file.
    pub expected_text: Option<String>,
    pub body: String,
    pub author: String,
    /// The reviewer's finding, for a thread a review round opens.
    pub finding: Option<Box<feedback::Finding>>,
    /// The agent a person asks with this thread: its first comment is a
    /// message waiting for that agent.
    pub ask: Option<String>,
    /// The agent opening the thread, by its short name: a person's answer
    /// in it goes to that agent.
    pub opened_by: Option<String>,
    /// The walkthrough whose comment the thread is.
    pub walkthrough: Option<Box<feedback::WalkthroughMark>>,
    /// A thread brought in from a pull request on GitHub: its comments
    /// (instead of `body` and `author`), whether it is resolved there, and
    /// GitHub's ids.
    pub synced: Option<Box<SyncedThread>>,
}

/// A review thread of a pull request, as it becomes a Parley thread.
#[derive(Debug, Clone)]
pub struct SyncedThread {
    /// Every comment, oldest first, with GitHub's authors and times.
    pub comments: Vec<Comment>,
    pub resolved: bool,
    pub mark: feedback::GithubMark,
}

/// Makes a thread on a range of a file on disk; answers once it is durable.
pub(super) async fn make(cx: &Context, new: NewThread) -> Result<Thread, FeedbackError> {
    let invalid = FeedbackError::Invalid;
    if new.body.trim().is_empty() {
        return Err(invalid("a comment needs a body: say what should change".into()));
    }
    let file = new.file.clone();
    let text = tokio::task::spawn_blocking(move || read_regular_file(&file))
        .await
        .map_err(|e| FeedbackError::Unreadable(format!("internal error: {e}")))??;
    let text = String::from_utf8(text)
        .map_err(|_| invalid(format!("cannot comment on {}: it is not UTF-8 text", new.file.display())))?;
    // The thread is made on the text as re-anchoring reads it: `\r\n` as
    // `\n`, in the file and in the text the editor quotes (VS Code gives a
    // CRLF document's text with its CRLF endings).
    let text = line_endings::into_lf(text);
    let expected_text = new.expected_text.clone().map(line_endings::into_lf);
    let index = LineIndex::new(&text);
    let lines = index.line_count();
    let outside = || {
        format!(
            "lines {}-{} are outside {} ({lines} lines)",
            new.range.start.line + 1,
            new.range.end.line + 1,
            new.file.display()
        )
    };
    let given = (index.offset(new.range.start, new.encoding), index.offset(new.range.end, new.encoding));
    let (start, end) = match (&expected_text, given) {
        (Some(expected), (start, end)) if start.zip(end).is_none_or(|(s, e)| text.get(s..e) != Some(expected)) => {
            // The editor's buffer has unsaved edits: the text it quotes is
            // looked for on disk, nearest the place it gave.
            if expected.is_empty() {
                return Err(invalid("select some text to comment on: the range is empty".into()));
            }
            nearest_occurrence(&text, expected, start.unwrap_or(text.len())).ok_or_else(|| {
                invalid(format!(
                    "the selected text is not in {} on disk (it is unsaved there); save the file and try again",
                    new.file.display()
                ))
            })?
        }
        (_, (Some(start), Some(end))) => (start, end),
        _ => return Err(invalid(outside())),
    };
    if end <= start {
        return Err(invalid("select some text to comment on: the range is empty".into()));
    }
    let workspace = match new.workspace {
        Some(w) => w,
        None => crate::workspace::root_of(new.file.parent().unwrap_or(Path::new("/"))),
    };
    let relative =
        crate::wire_path::of(new.file.strip_prefix(&workspace).map_err(|_| {
            invalid(format!("{} is outside the workspace {}", new.file.display(), workspace.display()))
        })?);
    let file_hash: Arc<str> = refresh::hash(text.as_bytes()).into();
    if text.len() <= refresh::SNAPSHOT_MAX_BYTES {
        cx.store.put_snapshot(&file_hash, &text).map_err(|e| FeedbackError::Store(e.to_string()))?;
    }
    let now = crate::clock::now_rfc3339();
    let anchor = crate::anchor::capture(&text, start..end);
    let synced = new.synced.map(|synced| *synced);
    let comment = match synced.as_ref().and_then(|synced| synced.comments.first()) {
        Some(first) => first.clone(),
        None => Comment { id: feedback::new_id(), body: new.body, author: new.author, created_at: now.clone() },
    };
    let deliveries = match new.ask {
        Some(agent) => vec![feedback::Delivery {
            comment_id: comment.id.clone(),
            agent,
            state: feedback::DeliveryState::Waiting,
            via: None,
            asked_at: now.clone(),
            updated_at: now.clone(),
        }],
        None => Vec::new(),
    };
    let mut comments = vec![comment];
    let mut resolved = None;
    let mut github = None;
    if let Some(synced) = synced {
        comments.extend(synced.comments.into_iter().skip(1));
        resolved =
            synced.resolved.then(|| Box::new(feedback::Mark { by: "human".into(), at: now.clone(), agent: false }));
        github = Some(Box::new(synced.mark));
    }
    let thread = Thread {
        id: feedback::new_id(),
        workspace: workspace.into(),
        path: relative,
        original_quote: anchor.quote.clone(),
        span: feedback::span_of(&index, start..end),
        whole_lines: crate::anchor::covers_whole_lines(&text, &anchor.range),
        anchor,
        anchored_against: file_hash.clone(),
        checked_against: file_hash,
        state: ThreadState::Anchored,
        comments,
        created_at: now.as_str().into(),
        updated_at: now.into(),
        resolved: resolved.is_some(),
        finding: new.finding,
        standing: feedback::Standing {
            deliveries,
            opened_by: new.opened_by,
            walkthrough: new.walkthrough,
            resolved,
            github,
            ..feedback::Standing::default()
        },
    };
    cx.state.create_thread(thread).await
}

/// Reads a file for a new thread, refusing anything but a regular file
/// within [`refresh::MAX_FILE_BYTES`]: a FIFO would block the read forever and a
/// device such as `/dev/zero` would never end.
fn read_regular_file(file: &Path) -> Result<Vec<u8>, FeedbackError> {
    use crate::regular_file::{self, RegularFileError};
    let shown = file.display();
    match regular_file::read(file, refresh::MAX_FILE_BYTES) {
        Ok(bytes) => Ok(bytes),
        Err(RegularFileError::TooLarge { len, .. }) => Err(FeedbackError::Invalid(format!(
            "cannot comment on {shown}: it is {} MiB, over Parley's limit of {} MiB for files with threads",
            len / (1024 * 1024),
            refresh::MAX_FILE_BYTES / (1024 * 1024)
        ))),
        Err(RegularFileError::NotRegular(_)) => {
            Err(FeedbackError::Invalid(format!("cannot comment on {shown}: it is not a regular file")))
        }
        Err(e) => Err(FeedbackError::Unreadable(format!("cannot read {shown}: {e}"))),
    }
}

/// Where `quote` occurs in `text` nearest to byte `near`, as a byte range.
fn nearest_occurrence(text: &str, quote: &str, near: usize) -> Option<(usize, usize)> {
    text.match_indices(quote).map(|(at, _)| at).min_by_key(|at| at.abs_diff(near)).map(|at| (at, at + quote.len()))
}
