//! Feedback threads as both front doors use them: list and summarise (after
//! re-anchoring against the files on disk), create, reply, resolve, reopen,
//! and position threads in an editor's unsaved buffer.

use std::path::{Path, PathBuf};

use crate::context::Context;
pub use crate::feedback::FeedbackError;
use crate::feedback::{self, Comment, Summary, Thread};
use crate::refresh::{self, NewThread};
use crate::state::ThreadEdit;
use crate::{views, workspace};

/// Threads inside `scope` (or only `file`), re-anchored first, ordered by
/// file then line.
pub async fn list(
    cx: &Context,
    scope: &Path,
    file: Option<PathBuf>,
    include_resolved: bool,
) -> Result<Vec<Thread>, FeedbackError> {
    refresh::refresh(&cx.state, &cx.store, &cx.watch.freshness, scope, file.as_deref()).await?;
    Ok(cx.state.threads(scope.to_owned(), file, include_resolved).await?)
}

/// Counts for `scope`, re-anchored first.
pub async fn summary(cx: &Context, scope: &Path) -> Result<Summary, FeedbackError> {
    refresh::refresh(&cx.state, &cx.store, &cx.watch.freshness, scope, None).await?;
    Ok(cx.state.summary(scope.to_owned()).await?)
}

/// Makes a thread; answers once it is durable and its file is watched.
pub async fn create(cx: &Context, new: NewThread) -> Result<Thread, FeedbackError> {
    // Watch first: once the thread is announced, an edit must move it.
    cx.watch.add(new.file.clone()).await;
    refresh::create(&cx.state, &cx.store, new).await
}

/// Adds a comment by `author` to an open thread.
///
/// `within` says who asks, for this and the other edits: an agent (its
/// workspace: a thread outside it counts as not found, and ids are whole, as
/// seed 002 has them), or, when `None`, a person at an editor or the CLI, who
/// may give a unique prefix of an id as `git` allows.
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
    let comment = Comment { id: feedback::new_id(), body, author, created_at: crate::clock::now_rfc3339() };
    let thread = edit(cx, thread_id, ThreadEdit::Reply(comment.clone()), within).await?;
    Ok((thread, comment))
}

/// Marks a thread addressed: hidden from listings, kept for reopening.
pub async fn resolve(cx: &Context, thread_id: &str, within: Option<&Path>) -> Result<Thread, FeedbackError> {
    edit(cx, thread_id, ThreadEdit::Resolve, within).await
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
    let thread_id = match thread_id.trim() {
        whole if feedback::is_thread_id(whole) => whole.to_owned(),
        prefix if within.is_none() && feedback::is_thread_id_prefix(prefix) => unabbreviate(cx, prefix).await?,
        _ => return Err(FeedbackError::InvalidId),
    };
    let thread_id = thread_id.as_str();
    if let Some(scope) = within {
        let thread = cx.state.thread(thread_id.to_owned()).await?.ok_or(FeedbackError::NotFound)?;
        if !workspace::holds(scope, &views::file_of(&thread)) {
            return Err(FeedbackError::NotFound);
        }
    }
    cx.state.edit_thread(thread_id.to_owned(), edit).await
}

/// The one thread id that starts with `prefix`.
async fn unabbreviate(cx: &Context, prefix: &str) -> Result<String, FeedbackError> {
    let prefix = prefix.to_ascii_lowercase();
    let mut found = cx.state.thread_ids_starting_with(prefix.clone()).await?;
    match found.len() {
        0 => Err(FeedbackError::NotFound),
        1 => Ok(found.remove(0)),
        n => Err(FeedbackError::Invalid(format!(
            "thread id {prefix} is ambiguous: it begins {}{} threads ({}{}); give more of it",
            if n >= 6 { "at least " } else { "" },
            n,
            found.join(", "),
            if n >= 6 { ", …" } else { "" }
        ))),
    }
}
