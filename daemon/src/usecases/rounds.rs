//! Review rounds as both front doors use them: start a round (it runs in
//! the background, owned by the daemon), wait for it, cancel it, read
//! sessions, and complete one. The steps of a round are in `pipeline`, the
//! rounds running now in `running`; a round reaches them only through here.

mod findings;
pub mod person;
mod pipeline;
pub mod plan;
mod running;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use pipeline::{Outcome, Progress, ReviewAsk, STEPS};
pub use running::{Run, Runs, Step};

use super::Context;
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
            SessionError::Refused(e) => RoundError::Invalid(e),
            SessionError::NotWaiting(e) => RoundError::Conflict(e),
            SessionError::Store(e) => RoundError::Store(e),
            SessionError::Stopped => RoundError::Stopped,
        }
    }
}

impl From<super::ids::LookupError> for RoundError {
    fn from(error: super::ids::LookupError) -> Self {
        match error {
            super::ids::LookupError::Id(e) if e.is_unknown() => RoundError::NotFound(e.to_string()),
            super::ids::LookupError::Id(e) => RoundError::Invalid(e.to_string()),
            super::ids::LookupError::Stopped(_) => RoundError::Stopped,
        }
    }
}

impl From<GitError> for RoundError {
    fn from(error: GitError) -> Self {
        RoundError::Git(error.to_string())
    }
}

/// Runs one round and waits for it to end. `cancel` firing while it waits
/// stops the round (and kills the reviewer's process group): the person who
/// asked has interrupted it.
pub async fn request(
    cx: &Context,
    ask: ReviewAsk,
    progress: Progress<'_>,
    cancel: &CancellationToken,
) -> Result<Outcome, RoundError> {
    let run = start(cx, ask, progress).await?;
    let report = |step: &Step| progress(step.progress, step.message.clone());
    match run.wait(None, cancel, &report).await {
        Some(result) => result,
        None => stop(&run).await,
    }
}

/// Checks a round and opens its session (the quick refusals happen here,
/// before this returns), then runs the rest in the background, where it
/// goes on whatever becomes of the caller: capturing and scanning the diff,
/// then the tests and the reviewer, or waiting for the person. Only
/// [`cancel`] (or the daemon stopping) stops it. Wait for it with
/// [`Run::wait`] or [`wait`]: a wait bounds every step after this one.
pub async fn start(cx: &Context, mut ask: ReviewAsk, progress: Progress<'_>) -> Result<Arc<Run>, RoundError> {
    // Kept as the session's request and in `.reviews/`: `/`-separated everywhere.
    ask.relevant_docs = ask.relevant_docs.iter().map(|doc| crate::wire_path::slashed(doc)).collect();
    if let Some(previous) = ask.previous_review_id.as_deref().map(str::trim)
        && let Some(run) = cx.runs.get(previous).filter(|run| run.result().is_none())
    {
        if person::is_waiting(&run) {
            return Err(RoundError::Conflict(format!(
                "round {} of review {previous} is waiting for a person's review: wait for it with await_review \
                 (or cancel it with cancel_review) before asking for the next round",
                run.round
            )));
        }
        return Err(still_running(previous, run.round));
    }
    let opened = pipeline::open(cx, ask, progress).await?;
    let id = opened.session.id.clone();
    let round = opened.session.rounds.len() as u32 + 1;
    let first_round = opened.session.rounds.is_empty();
    let cancel = cx.shutdown.close.child_token();
    let first = Step { progress: 1.0, message: "capturing the diff".into() };
    let for_person = opened.reviewer == pipeline::Reviewer::Person;
    let run = match cx.runs.begin(&id, &opened.root, round, for_person, cancel.clone(), first) {
        Ok(run) => run,
        Err(running) => {
            if first_round {
                cx.state.discard_empty_session(id.clone()).await;
            }
            return Err(still_running(&id, running));
        }
    };
    let running = Pending { state: "running".into(), since: crate::clock::now_rfc3339(), error: None };
    cx.state.set_pending(id.clone(), Some(running)).await;
    let background = cx.clone();
    let background_run = run.clone();
    tokio::spawn(async move {
        let _call = background.shutdown.call();
        let report = |step: f64, message: String| background_run.report(step, message);
        let result = async {
            let prepared = pipeline::capture(opened, &report, &cancel).await?;
            match prepared.reviewer {
                // The round now waits for the person's verdict, which ends it.
                pipeline::Reviewer::Person => person::open(&background, prepared, &background_run, cancel).await,
                pipeline::Reviewer::Command(_) => {
                    pipeline::review(&background, prepared, &report, &cancel).await.map(|outcome| {
                        background_run.finish(Ok(outcome));
                    })
                }
            }
        }
        .await;
        if let Err(error) = result {
            if first_round {
                // A session whose first round failed holds nothing worth listing.
                background.state.set_pending(id.clone(), None).await;
                background.state.discard_empty_session(id).await;
            } else {
                let failed = Pending {
                    state: "failed".into(),
                    since: crate::clock::now_rfc3339(),
                    error: Some(error.to_string()),
                };
                background.state.set_pending(id, Some(failed)).await;
            }
            background_run.finish(Err(error));
        }
    });
    Ok(run)
}

pub(super) fn still_running(id: &str, round: u32) -> RoundError {
    RoundError::Conflict(format!(
        "round {round} of review {id} is still running: wait for it with await_review (or `parley review await {id}`), \
         or stop it with cancel_review, before asking for the next round"
    ))
}

/// What waiting for a round gave.
#[derive(Debug)]
pub enum Waited {
    Finished(Box<Outcome>),
    /// Still running when the wait ended.
    Pending(Arc<Run>),
}

/// Waits up to `limit` (forever when `None`) for the latest round of
/// session `id`, or until `stop` fires, which ends only the wait. A round
/// that finished earlier is answered at once: from memory for an hour, then
/// from the store (without the editor and audit facts of the moment it ended).
pub async fn wait(
    cx: &Context,
    id: &str,
    repository: Option<&Path>,
    limit: Option<Duration>,
    stop: &CancellationToken,
    on_step: &(dyn Fn(&Step) + Send + Sync),
) -> Result<Waited, RoundError> {
    let id = &session_id(cx, id, repository).await?;
    let known = match known_run(cx, id, repository) {
        Some(run) => Some(run),
        // A round waiting on a person since before a restart.
        None => match get(cx, id, repository).await {
            Ok(session) => person::run_for(cx, &session),
            Err(_) => None,
        },
    };
    if let Some(run) = known {
        return match run.wait(limit, stop, on_step).await {
            Some(Ok(outcome)) => Ok(Waited::Finished(Box::new(outcome))),
            Some(Err(error)) => Err(error),
            None => Ok(Waited::Pending(run)),
        };
    }
    let session = get(cx, id, repository).await?;
    if let Some(Pending { error: Some(error), .. }) = &session.pending {
        return Err(RoundError::Reviewer(error.clone()));
    }
    let Some(round) = session.rounds.last().cloned() else {
        return Err(RoundError::NotFound(format!(
            "review {} has no round, and none is running: start one with request_review",
            session.id
        )));
    };
    let markdown = round.markdown(&session.id);
    Ok(Waited::Finished(Box::new(Outcome { session, round, markdown, shown_in: 0, audit: None, warnings: Vec::new() })))
}

/// Stops the running round of session `id` and waits for it to end.
pub async fn cancel(cx: &Context, id: &str, repository: Option<&Path>) -> Result<u32, RoundError> {
    let id = &session_id(cx, id, repository).await?;
    let known = match known_run(cx, id, repository) {
        Some(run) if run.result().is_none() => Some(run),
        known => match get(cx, id, repository).await {
            Ok(session) => person::run_for(cx, &session).or(known),
            // No such session, and no round of one ever ran here: say so,
            // rather than speak of its rounds.
            Err(error @ RoundError::NotFound(_)) if known.is_none() => return Err(error),
            Err(_) => known,
        },
    };
    let run = match known {
        Some(run) if run.result().is_none() => run,
        known => {
            let what = match known.map(|run| run.result()) {
                Some(Some(Err(RoundError::Cancelled(_)))) => "its last round was cancelled",
                Some(Some(Err(_))) => "its last round failed",
                _ => "its rounds have finished",
            };
            let id = get(cx, id, repository).await.map_or_else(|_| id.trim().to_owned(), |s| s.id);
            return Err(RoundError::Conflict(format!(
                "no round of review {id} is running ({what}); nothing was stopped"
            )));
        }
    };
    match stop(&run).await {
        Err(RoundError::Cancelled(_)) => Ok(run.round),
        Err(other) => Err(other),
        Ok(_) => Err(RoundError::Conflict(format!(
            "round {} of review {} finished before it could be stopped; its review is stored",
            run.round, run.review_id
        ))),
    }
}

/// The latest round of session `id` this daemon ran, if it belongs to
/// `repository` (any, when `None`). It outlives a session whose only round
/// failed or was cancelled, so whoever waits for it learns what happened.
fn known_run(cx: &Context, id: &str, repository: Option<&Path>) -> Option<Arc<Run>> {
    cx.runs.get(id.trim()).filter(|run| repository.is_none_or(|r| run.repository == r))
}

/// Cancels a round and gives what it ended with.
async fn stop(run: &Run) -> Result<Outcome, RoundError> {
    run.cancel_token().cancel();
    match run.wait(None, &CancellationToken::new(), &|_| {}).await {
        Some(result) => result,
        None => Err(RoundError::Cancelled("the round was cancelled".into())),
    }
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

/// One session, named by the one id rule (`ids`: its whole id, its number
/// or a unique beginning). With `repository` (an agent's), only that
/// repository's sessions are looked at: another one's counts as not found.
pub async fn get(cx: &Context, id: &str, repository: Option<&Path>) -> Result<Session, RoundError> {
    let id = session_id(cx, id, repository).await?;
    let session = cx.state.session(id.clone()).await?;
    match session {
        Some(session) if repository.is_none_or(|r| session.workspace == r) => Ok(session),
        _ => Err(SessionError::NotFound(id).into()),
    }
}

/// The session id `given` names by the one id rule, among the sessions of
/// `repository` when given. A whole id is taken as it is, without looking.
pub async fn session_id(cx: &Context, given: &str, repository: Option<&Path>) -> Result<String, RoundError> {
    Ok(super::ids::session(cx, given, repository).await?)
}

/// Completes a session with its final status (`approved`, `abandoned` or
/// `merged`); answers once it is durable.
/// The audit tree records it when the repository keeps one.
pub async fn complete(
    cx: &Context,
    id: &str,
    final_status: &str,
    notes: Option<String>,
    repository: Option<&Path>,
) -> Result<Session, RoundError> {
    let final_status = FinalStatus::parse(final_status.trim()).ok_or_else(|| {
        RoundError::Invalid(format!("final_status must be approved, abandoned or merged, not {final_status:?}"))
    })?;
    let session = get(cx, id, repository).await?;
    let notes = notes.filter(|n| !n.trim().is_empty());
    let waiting = session.awaiting.as_ref().map(|w| w.round);
    let session = cx.state.complete_session(session.id, final_status, notes).await?;
    if let Some(round) = waiting {
        person::dropped(cx, &session, round).await;
    }
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
