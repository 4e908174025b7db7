//! A round's findings as feedback threads, and the threads a reviewer reads.
//! Each finding that names a file and line becomes a thread there, authored
//! by the reviewer and linked to its session and round, so people and agents
//! answer and resolve it like any comment and every editor shows it. The
//! next round's prompt carries those threads with their replies, and the open
//! threads people left on the changed files. A finding repeated on the place
//! of an earlier one of the same session continues that thread.

use std::path::Path;

use crate::feedback::{Finding, Thread};
use crate::sessions::Round;
use crate::structured_review::{PromptThread, ReviewComment};
use crate::usecases::feedback as threads;
use crate::usecases::feedback::NewThread;
use crate::workspace;
use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::{Position, Range};

/// What the reviewer is shown of the threads on the code.
#[derive(Debug, Default)]
pub(super) struct Discussion {
    /// The threads earlier rounds of this session opened.
    pub findings: Vec<PromptThread>,
    /// Open threads (not findings) on the files under review.
    pub open: Vec<PromptThread>,
}

/// The threads of the repository at `root` a round of session `session_id`
/// over `changed` files should know about; the open ones it quotes count as
/// seen by `reader`, the reviewer. Listing them re-anchors them; a failure
/// leaves the prompt without them rather than failing the round.
pub(super) async fn discussion(
    cx: &crate::usecases::Context,
    root: &Path,
    session_id: &str,
    changed: &[String],
    reader: &str,
) -> Discussion {
    let found = match threads::list(cx, root, None, true).await {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!("the review prompt goes without the threads: {e}");
            return Discussion::default();
        }
    };
    let mut discussion = Discussion::default();
    let mut quoted = Vec::new();
    for thread in found {
        let Some(relative) = relative_path(&thread, root) else { continue };
        match thread.finding.as_deref() {
            Some(finding) if finding.review_id == session_id => {
                let label = format!("round {}, {}, {}", finding.round, finding.severity, finding.category);
                discussion.findings.push(prompt_thread(&thread, &relative, Some(label)));
            }
            Some(_) => {}
            None if !thread.resolved && changed.contains(&relative) => {
                discussion.open.push(prompt_thread(&thread, &relative, None));
                quoted.push(thread);
            }
            None => {}
        }
    }
    threads::mark_seen(cx, &mut quoted, reader).await;
    discussion
}

fn relative_path(thread: &Thread, root: &Path) -> Option<String> {
    let file = thread.workspace.join(&thread.path);
    file.strip_prefix(root).ok().map(crate::wire_path::of)
}

fn prompt_thread(thread: &Thread, relative: &str, label: Option<String>) -> PromptThread {
    PromptThread {
        place: format!("{relative}:{}", thread.span.start_line + 1),
        label,
        resolved: thread.resolved,
        comments: thread.comments.iter().map(|c| (c.author.clone(), c.body.clone())).collect(),
    }
}

/// Makes a thread of every finding of `round` that names a file and line,
/// or continues the thread an earlier round of the session opened at that
/// place (reopening it when it was resolved). Gives a warning for each
/// finding that could not become a thread.
pub(super) async fn open_threads(
    cx: &crate::usecases::Context,
    root: &Path,
    session_id: &str,
    round: &Round,
    reviewer: &str,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let placed: Vec<&ReviewComment> =
        round.review.comments.iter().filter(|c| c.file.is_some() && c.line.is_some_and(|l| l > 0)).collect();
    if placed.is_empty() {
        return warnings;
    }
    let earlier: Vec<Thread> = match threads::list(cx, root, None, true).await {
        Ok(found) => {
            found.into_iter().filter(|t| t.finding.as_deref().is_some_and(|f| f.review_id == session_id)).collect()
        }
        Err(e) => {
            warnings.push(format!("the findings did not become threads: {e}"));
            return warnings;
        }
    };
    for comment in placed {
        let (Some(path), Some(line)) = (comment.file.as_deref(), comment.line) else { continue };
        let file = workspace::absolute(Path::new(path), root);
        let said = |e: String| format!("the finding at {path}:{line} did not become a thread: {e}");
        if !workspace::holds(root, &file) {
            warnings.push(said(format!("{path} is outside the repository")));
            continue;
        }
        let zero_based = line - 1;
        let same_place = earlier.iter().find(|t| {
            t.workspace.join(&t.path) == file && t.span.start_line <= zero_based && zero_based <= t.span.end_line
        });
        let result = match same_place {
            Some(thread) => continue_thread(cx, thread, round.round, comment, reviewer).await,
            None => {
                let new = NewThread {
                    file,
                    workspace: Some(root.to_owned()),
                    range: Range {
                        start: Position { line: zero_based, character: 0 },
                        // Past the end of the line: creating clamps it to the line's end.
                        end: Position { line: zero_based, character: u32::MAX },
                    },
                    encoding: PositionEncoding::Utf8,
                    expected_text: None,
                    body: body(comment),
                    author: reviewer.to_owned(),
                    finding: Some(Box::new(Finding {
                        review_id: session_id.to_owned(),
                        round: round.round,
                        severity: comment.severity.to_string(),
                        category: comment.category.clone().unwrap_or_else(|| "general".into()),
                        suggested_fix: comment.suggested_fix.clone(),
                    })),
                    ask: None,
                    opened_by: None,
                    walkthrough: None,
                    synced: None,
                };
                threads::create(cx, new).await.map(drop).map_err(|e| e.to_string())
            }
        };
        if let Err(e) = result {
            warnings.push(said(e));
        }
    }
    warnings
}

/// A finding raised again where an earlier round's thread is: said in that
/// thread, which is reopened if it was resolved.
async fn continue_thread(
    cx: &crate::usecases::Context,
    thread: &Thread,
    round: u32,
    comment: &ReviewComment,
    reviewer: &str,
) -> Result<(), String> {
    if thread.resolved {
        threads::reopen(cx, &thread.id, None).await.map_err(|e| e.to_string())?;
    }
    let text = format!("Round {round}: {}", body(comment));
    threads::reply(cx, &thread.id, text, reviewer.to_owned(), None).await.map(drop).map_err(|e| e.to_string())
}

/// The thread's text: the finding, then its suggested fix, cut to Parley's
/// limit on a comment (with a marker saying so) rather than fail the round.
fn body(comment: &ReviewComment) -> String {
    let mut text = comment.comment.trim().to_owned();
    if text.is_empty() {
        text = "(the reviewer gave no text)".into();
    }
    if let Some(fix) = comment.suggested_fix.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
        let fence = if fix.contains("```") { "````" } else { "```" };
        text.push_str(&format!("\n\nSuggested fix:\n{fence}\n{fix}\n{fence}"));
    }
    // Room for the "Round N: " a repeated finding begins with.
    crate::limits::cut_to(&text, crate::limits::MAX_TEXT_BYTES - 32).into_owned()
}
