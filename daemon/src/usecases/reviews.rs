//! Reviews as both front doors use them: showing one (apply a presentation
//! to a folder's current review, check its references, store it, push it to
//! the editor windows on that folder, make it durable) and reading them.
//! `present_review` and review rounds show reviews through [`present`].

use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::reviews::{self, FileFacts, Presentation, Review};
use crate::state::{CommitError, Committed, Stopped};

/// Why a review could not be shown or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresentError {
    #[error("the Parley daemon is shutting down; call again in a moment")]
    Stopped,
    #[error("other agents kept changing this review at the same moment; call again")]
    Busy,
    #[error("the review could not be stored: {0}")]
    Store(String),
    #[error("{0}")]
    Internal(String),
}

impl From<Stopped> for PresentError {
    fn from(_: Stopped) -> Self {
        PresentError::Stopped
    }
}

/// How often a presentation is retried when another agent changed the same
/// review at the same moment.
const COMMIT_ATTEMPTS: usize = 16;

/// Presents `presentation` for the folder `base`; answers once it is durable.
pub async fn present(cx: &Context, base: &Path, presentation: &Presentation) -> Result<Committed, PresentError> {
    for _ in 0..COMMIT_ATTEMPTS {
        let current = cx.state.latest_review(base.to_owned()).await?;
        let content = presentation.apply(current.as_ref().map(|r| r.content.as_str()));
        let revision = current.map_or(1, |r| r.revision + 1);
        let check_base = base.to_owned();
        let check_content = content.clone();
        let references = tokio::task::spawn_blocking(move || {
            reviews::check_references(reviews::find_references(&check_content), &check_base, file_facts)
        })
        .await
        .map_err(|e| PresentError::Internal(format!("checking references failed: {e}")))?;
        let review = Review { base: base.to_owned(), content, revision, updated_at: String::new(), references };
        match cx.state.commit(review).await {
            Ok(committed) => return Ok(committed),
            Err(CommitError::Raced) => continue,
            Err(CommitError::Store(e)) => return Err(PresentError::Store(e)),
            Err(CommitError::Stopped) => return Err(PresentError::Stopped),
        }
    }
    Err(PresentError::Busy)
}

/// The reviews whose base lies in one of `folders` (every review when
/// `None`), newest first.
pub async fn list(cx: &Context, folders: Option<Vec<PathBuf>>) -> Result<Vec<Review>, PresentError> {
    Ok(cx.state.reviews(folders).await?)
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
