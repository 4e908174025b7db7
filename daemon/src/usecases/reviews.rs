//! Reviews as both front doors use them: showing one (apply a presentation
//! to a folder's current review, check its references, store it, push it to
//! the editor windows on that folder, make it durable) and reading them.
//! `present_review` and review rounds show reviews through [`present`].

use std::path::{Path, PathBuf};

use super::Context;
use crate::reviews::{self, FileFacts, Presentation, Review, Source};
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
    /// A read named something that is not there; the text says what is.
    #[error("{0}")]
    NotFound(String),
    /// What was asked to be shown is not a presentation (no content, an
    /// unknown mode, a section missing).
    #[error(transparent)]
    Invalid(#[from] reviews::PresentError),
}

impl From<Stopped> for PresentError {
    fn from(_: Stopped) -> Self {
        PresentError::Stopped
    }
}

/// How often a presentation is retried when another agent changed the same
/// review at the same moment.
const COMMIT_ATTEMPTS: usize = 16;

/// Reads what an agent asks to show (`present_review`'s `content`, `mode`
/// and `section`), in the order seed 000 reports what is wrong with it.
pub fn presentation(
    content: Option<String>,
    mode: Option<&str>,
    section: Option<String>,
) -> Result<Presentation, PresentError> {
    Ok(Presentation::new(content, mode, section)?)
}

/// Presents `presentation` for the folder `base` as a new revision made by
/// `source`; answers once it is durable.
pub async fn present(
    cx: &Context,
    base: &Path,
    presentation: &Presentation,
    source: Source,
) -> Result<Committed, PresentError> {
    for _ in 0..COMMIT_ATTEMPTS {
        let current = cx.state.latest_review(base.to_owned()).await?;
        let content = presentation.apply(current.as_ref().map(|r| r.content.as_str()));
        let revision = current.map_or(1, |r| r.revision + 1);
        let check_base = base.to_owned();
        let check_content = content.clone();
        let references = tokio::task::spawn_blocking(move || {
            let facts = |path: &Path| file_facts(&check_base, path);
            reviews::check_references(reviews::find_references(&check_content), &check_base, facts)
        })
        .await
        .map_err(|e| PresentError::Internal(format!("checking references failed: {e}")))?;
        let review = Review {
            base: base.to_owned(),
            content,
            revision,
            updated_at: String::new(),
            references,
            source: source.clone(),
        };
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

/// The kept revisions of the reviews whose base lies in one of `folders`
/// (every review when `None`), newest first.
pub async fn history(cx: &Context, folders: Option<Vec<PathBuf>>) -> Result<Vec<Review>, PresentError> {
    let bases: Vec<PathBuf> = list(cx, folders).await?.into_iter().map(|r| r.base).collect();
    let store = cx.store.clone();
    let mut all = tokio::task::spawn_blocking(move || {
        let mut all = Vec::new();
        for base in bases {
            all.extend(store.review_revisions(&base)?);
        }
        Ok::<_, crate::store::StoreError>(all)
    })
    .await
    .map_err(|e| PresentError::Internal(format!("reading the review history failed: {e}")))?
    .map_err(|e| PresentError::Store(e.to_string()))?;
    all.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.revision.cmp(&a.revision)));
    Ok(all)
}

/// Revision `revision` of the one review under `folder` (the review whose
/// base is `folder` when several lie under it).
pub async fn revision(cx: &Context, folder: &Path, revision: u64) -> Result<Review, PresentError> {
    let found = list(cx, Some(vec![folder.to_owned()])).await?;
    let base = match found.iter().find(|r| r.base == folder) {
        Some(exact) => exact.base.clone(),
        None => match found.as_slice() {
            [] => return Err(PresentError::NotFound(format!("there is no review under {}", folder.display()))),
            [one] => one.base.clone(),
            several => {
                let bases: Vec<String> = several.iter().map(|r| r.base.display().to_string()).collect();
                return Err(PresentError::NotFound(format!(
                    "{} reviews lie under {} ({}): name the one you mean as the workspace",
                    several.len(),
                    folder.display(),
                    bases.join(", ")
                )));
            }
        },
    };
    let store = cx.store.clone();
    let lookup = base.clone();
    let kept = tokio::task::spawn_blocking(move || store.review_revisions(&lookup))
        .await
        .map_err(|e| PresentError::Internal(format!("reading the review history failed: {e}")))?
        .map_err(|e| PresentError::Store(e.to_string()))?;
    if let Some(found) = kept.iter().find(|r| r.revision == revision) {
        return Ok(found.clone());
    }
    let (first, last) = (kept.first().map_or(0, |r| r.revision), kept.last().map_or(0, |r| r.revision));
    Err(PresentError::NotFound(format!(
        "the review of {} has no revision {revision}: revisions {first} to {last} are kept (the last {} of each review)",
        base.display(),
        reviews::KEPT_REVISIONS
    )))
}

/// Looks a referenced file under `base` up on disk: where it really leads
/// (a symlink out of `base` or into its `.git` is not followed further),
/// its kind and its line count. A FIFO or a device is not a file, and is
/// never opened in a way that could block.
pub(crate) fn file_facts(base: &Path, path: &Path) -> FileFacts {
    use crate::regular_file::{self, RegularFileError};
    use crate::workspace::{self, Reach};
    use std::io::Read;
    let path = match workspace::reach(base, path) {
        Reach::Inside(real) => real,
        Reach::Missing => return FileFacts::Missing,
        Reach::Outside => return FileFacts::Outside,
        Reach::Git => return FileFacts::InGit,
    };
    let mut file = match regular_file::open(&path) {
        Ok(file) => file,
        Err(RegularFileError::NotRegular(_)) => return FileFacts::NotAFile,
        Err(_) => return FileFacts::Missing,
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
