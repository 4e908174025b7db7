//! Showing a review: apply a presentation to a folder's current review,
//! check its references, store it, push it to the editor windows on that
//! folder, and make it durable. Used by `present_review` and by review
//! sessions, so both show reviews the same way.

use std::path::Path;

use crate::reviews::{self, FileFacts, Presentation, Review};
use crate::state::{Command, CommitError, Committed, StateHandle};
use crate::store::Store;

/// How often a presentation is retried when another agent changed the same
/// review at the same moment.
const COMMIT_ATTEMPTS: usize = 16;

/// Presents `presentation` for the folder `base`; answers once it is durable.
pub async fn present(
    state: &StateHandle,
    store: &Store,
    base: &Path,
    presentation: &Presentation,
) -> Result<Committed, String> {
    let stopping = |_| "the Parley daemon is shutting down; call again in a moment".to_owned();
    for _ in 0..COMMIT_ATTEMPTS {
        let current = state.ask(|reply| Command::Review { base: base.to_owned(), reply }).await.map_err(stopping)?;
        let content = presentation.apply(current.as_ref().map(|r| r.content.as_str()));
        let revision = current.map_or(1, |r| r.revision + 1);
        let check_base = base.to_owned();
        let check_content = content.clone();
        let references = tokio::task::spawn_blocking(move || {
            reviews::check_references(reviews::find_references(&check_content), &check_base, file_facts)
        })
        .await
        .map_err(|e| format!("checking references failed: {e}"))?;
        let review = Review { base: base.to_owned(), content, revision, updated_at: String::new(), references };
        match state.ask(|reply| Command::Commit { review, reply }).await.map_err(stopping)? {
            Ok(committed) => {
                store.flush().await.map_err(|e| format!("the review is shown but could not be saved: {e}"))?;
                return Ok(committed);
            }
            Err(CommitError::Raced) => continue,
            Err(CommitError::Store(e)) => return Err(format!("the review could not be stored: {e}")),
        }
    }
    Err("other agents kept changing this review at the same moment; call again".into())
}

/// Looks a referenced file up on disk: its existence, kind and line count.
fn file_facts(path: &Path) -> FileFacts {
    use std::io::Read;
    let Ok(meta) = std::fs::metadata(path) else {
        return FileFacts::Missing;
    };
    if !meta.is_file() {
        return FileFacts::NotAFile;
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return FileFacts::Missing;
    };
    let mut buf = vec![0u8; 64 * 1024];
    let (mut newlines, mut last) = (0u32, b'\n');
    loop {
        match file.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                newlines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u32;
                last = buf[n - 1];
            }
        }
    }
    FileFacts::Lines((newlines + u32::from(last != b'\n')).max(1))
}
