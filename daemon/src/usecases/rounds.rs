//! Review rounds as both front doors use them: run a round and wait for it,
//! start one in the background, read sessions, and complete one. The steps
//! of a round are in `pipeline`; a round reaches them only through here.

mod pipeline;

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

pub use pipeline::{Outcome, Progress, ReviewAsk, STEPS};

use crate::context::Context;
use crate::git::GitError;
use crate::sessions::{FinalStatus, Pending, Session, SessionError};
use crate::state::Stopped;

/// Why a round (or a session operation) failed; each text says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoundError {
    /// The request cannot be done as asked.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    /// The session is complete or has used its rounds.
    #[error("{0}")]
    Conflict(String),
    /// Not a repository, no changes in scope, or git failed.
    #[error("{0}")]
    Git(String),
    /// A config file is wrong, or names no reviewer.
    #[error("{0}")]
    Config(String),
    /// The secret scan found something; nothing was sent.
    #[error("{0}")]
    Secrets(String),
    /// The reviewer or the test command failed, timed out or printed no review.
    #[error("{0}")]
    Reviewer(String),
    #[error("cancelled: {0}")]
    Cancelled(String),
    #[error("the review could not be stored: {0}")]
    Store(String),
    #[error("the Parley daemon is shutting down; call again in a moment")]
    Stopped,
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<Stopped> for RoundError {
    fn from(_: Stopped) -> Self {
        RoundError::Stopped
    }
}

impl From<SessionError> for RoundError {
    fn from(error: SessionError) -> Self {
        let text = error.to_string();
        match error {
            SessionError::NotFound(_) => RoundError::NotFound(text),
            SessionError::Completed { .. } | SessionError::TooManyRounds { .. } => RoundError::Conflict(text),
            SessionError::Store(e) => RoundError::Store(e),
            SessionError::Stopped => RoundError::Stopped,
        }
    }
}

impl From<GitError> for RoundError {
    fn from(error: GitError) -> Self {
        RoundError::Git(error.to_string())
    }
}

/// Runs one round and waits for it. `cancel` stops it (and kills the
/// reviewer's process group).
pub async fn request(
    cx: &Context,
    ask: ReviewAsk,
    progress: Progress<'_>,
    cancel: &CancellationToken,
) -> Result<Outcome, RoundError> {
    let prepared = pipeline::prepare(cx, ask, progress, cancel).await?;
    let opened = prepared.session.rounds.is_empty().then(|| prepared.session.id.clone());
    let outcome = pipeline::review(cx, prepared, progress, cancel).await;
    // A session whose first round failed holds nothing worth listing.
    if let (Err(_), Some(id)) = (&outcome, opened) {
        cx.state.discard_empty_session(id).await;
    }
    outcome
}

/// What [`start`] answers at once.
#[derive(Debug, Clone)]
pub struct Started {
    pub review_id: String,
    /// The round that is running.
    pub round: u32,
}

/// Checks and prepares a round (every refusal happens here, before this
/// returns), then runs its slow part in the background; the session's
/// `pending` says how it is getting on until the round is stored.
pub async fn start(cx: &Context, ask: ReviewAsk) -> Result<Started, RoundError> {
    let cancel = cx.shutdown.close.child_token();
    let prepared = pipeline::prepare(cx, ask, &|_, _| {}, &cancel).await?;
    let id = prepared.session.id.clone();
    let round = prepared.session.rounds.len() as u32 + 1;
    let running = Pending { state: "running".into(), since: crate::clock::now_rfc3339(), error: None };
    cx.state.set_pending(id.clone(), Some(running)).await;
    let background = cx.clone();
    let background_id = id.clone();
    tokio::spawn(async move {
        let _call = background.shutdown.call();
        if let Err(error) = pipeline::review(&background, prepared, &|_, _| {}, &cancel).await {
            let failed =
                Pending { state: "failed".into(), since: crate::clock::now_rfc3339(), error: Some(error.to_string()) };
            background.state.set_pending(background_id, Some(failed)).await;
        }
    });
    Ok(Started { review_id: id, round })
}

/// The git repository holding `folder`.
pub async fn repository(folder: &Path) -> Result<PathBuf, RoundError> {
    let folder = folder.to_owned();
    tokio::task::spawn_blocking(move || crate::git::repo_root(&folder))
        .await
        .map_err(|e| RoundError::Internal(e.to_string()))?
        .map_err(RoundError::from)
}

/// The newest `limit` sessions of `repository` (every repository when `None`).
pub async fn list(cx: &Context, repository: Option<PathBuf>, limit: usize) -> Result<Vec<Session>, RoundError> {
    Ok(cx.state.sessions(repository, limit.max(1)).await?)
}

/// One session. With `repository` (an agent's), a session of another one
/// counts as not found and the id must be whole; without (a person's), a
/// unique abbreviation of the id is enough (see [`unabbreviate`]).
pub async fn get(cx: &Context, id: &str, repository: Option<&Path>) -> Result<Session, RoundError> {
    let id = match repository {
        Some(_) => id.trim().to_owned(),
        None => unabbreviate(cx, id).await?,
    };
    let session = cx.state.session(id.clone()).await?;
    match session {
        Some(session) if repository.is_none_or(|r| session.workspace == r) => Ok(session),
        _ => Err(SessionError::NotFound(id).into()),
    }
}

/// The session id a person means by `given`: the id itself, a unique prefix
/// (`2026-11-23-0`), or its tail from a dash on (`003`).
pub async fn unabbreviate(cx: &Context, given: &str) -> Result<String, RoundError> {
    let given = given.trim();
    if crate::sessions::is_session_id(given) || given.is_empty() {
        return Ok(given.to_owned());
    }
    let mut found = cx.state.session_ids_matching(given.to_owned()).await?;
    match found.len() {
        0 => Err(RoundError::NotFound(format!(
            "no review session matches {given:?}; ids look like 2026-11-21-001, and `parley sessions list` shows them"
        ))),
        1 => Ok(found.remove(0)),
        n => Err(RoundError::Invalid(format!(
            "{given:?} matches {}{n} review sessions ({}); give more of the id",
            if n >= 6 { "at least " } else { "" },
            found.join(", ")
        ))),
    }
}

/// Completes a session with its final status; answers once it is durable.
/// The audit tree records it when the repository keeps one.
pub async fn complete(
    cx: &Context,
    id: &str,
    final_status: FinalStatus,
    notes: Option<String>,
    repository: Option<&Path>,
) -> Result<Session, RoundError> {
    let session = get(cx, id, repository).await?;
    let notes = notes.filter(|n| !n.trim().is_empty());
    let session = cx.state.complete_session(session.id, final_status, notes).await?;
    let root = session.workspace.clone();
    let recorded = session.clone();
    let _ = tokio::task::spawn_blocking(move || {
        if let Ok(settings) = crate::config::review_settings(&root)
            && settings.audit
            && let Err(e) = crate::audit::record_completion(&settings.audit_dir, &recorded)
        {
            tracing::warn!("audit trail: {e}");
        }
    })
    .await;
    Ok(session)
}
