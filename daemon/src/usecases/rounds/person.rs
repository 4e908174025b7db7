//! Rounds a person answers: the round waits in the store (surviving daemon
//! restarts) while the person comments on either side of the diff, in an
//! editor or at the terminal; their drafts become a seed 004 review when they
//! submit a verdict, and the comments become threads on the code (those on
//! removed lines on the line now where they were), as a reviewer command's
//! findings do. The agent waits for it with
//! `await_review` exactly as for a slow reviewer command.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::pipeline::{self, Prepared};
use super::{Outcome, RoundError, Run, Step};
use crate::feedback::{Finding, Thread};
use crate::git::{self, Changes, Scope};
use crate::sessions::{Draft, FileStatus, FileVersions, PersonRound, Round, Session, SessionError, Side};
use crate::structured_review::{Assessment, ReviewComment, Severity, StructuredReview};
use crate::usecases::Context;
use crate::usecases::feedback as threads;
use crate::usecases::feedback::NewThread;
use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::{self as wire, Position, Range};

/// Progress a waiting round reports: the steps before the reviewer are done.
const WAITING_STEP: f64 = 4.0;

/// The person's verdict on a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Approve,
    RequestChanges,
    Comment,
}

impl Verdict {
    pub fn parse(name: &str) -> Result<Verdict, RoundError> {
        match name.trim() {
            "approve" | "approved" => Ok(Verdict::Approve),
            "request_changes" | "request-changes" | "changes" => Ok(Verdict::RequestChanges),
            "comment" => Ok(Verdict::Comment),
            other => {
                Err(RoundError::Invalid(format!("verdict must be approve, request_changes or comment, not {other:?}")))
            }
        }
    }

    /// The verdict's name, as [`Verdict::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Approve => "approve",
            Verdict::RequestChanges => "request_changes",
            Verdict::Comment => "comment",
        }
    }

    /// What a comment weighs when the person did not say.
    fn default_severity(self) -> Severity {
        match self {
            Verdict::RequestChanges => Severity::Major,
            Verdict::Comment => Severity::Minor,
            Verdict::Approve => Severity::Suggestion,
        }
    }

    /// Seed 004's assessment: approve is lgtm (with suggestions when comments
    /// remain), request changes is needs_changes, and a comment without a
    /// verdict asks for its comments to be addressed.
    fn assessment(self, commented: bool) -> Assessment {
        match (self, commented) {
            (Verdict::Approve, false) => Assessment::Lgtm,
            (Verdict::Approve, true) => Assessment::LgtmWithSuggestions,
            (Verdict::RequestChanges, _) | (Verdict::Comment, true) => Assessment::NeedsChanges,
            (Verdict::Comment, false) => Assessment::LgtmWithSuggestions,
        }
    }
}

/// The step a waiting round shows to whoever waits for it.
fn waiting_step(person: &str) -> Step {
    // The login name is unknown to a daemon started without USER.
    let person = if person == "human" { "a person" } else { person };
    Step {
        progress: WAITING_STEP,
        message: format!("waiting for {person} to review it (in the editor, or with `parley inbox` at a terminal)"),
    }
}

/// Whether a run is a round waiting on a person.
pub fn is_waiting(run: &Run) -> bool {
    is_waiting_step(&run.step())
}

/// Whether a round at `step` is waiting on a person.
pub fn is_waiting_step(step: &Step) -> bool {
    step.progress == WAITING_STEP && step.message.starts_with("waiting for")
}

/// Who reviews in person: the user the daemon runs as.
pub fn person() -> String {
    crate::config::user_name()
}

/// Stores round `run` as waiting on a person and tells the editor windows
/// on the repository; the run then waits (for `await_review`) until the
/// person's verdict, or a cancel, ends it.
pub(super) async fn open(
    cx: &Context,
    prepared: Prepared,
    run: &Arc<Run>,
    cancel: CancellationToken,
) -> Result<(), RoundError> {
    let changes = prepared.changes.clone();
    let files = tokio::task::spawn_blocking(move || git::versions(&changes))
        .await
        .map_err(|e| RoundError::Internal(e.to_string()))??;
    // Both versions of each file are kept and shown: they get the care the
    // diff's removed lines got.
    let allow = prepared.secret_allow_paths();
    let (files, redacted) = pipeline::redact_versions(files, allow, &prepared.redacted);
    let session = &prepared.session;
    let waiting = PersonRound {
        round: run.round,
        requested_at: crate::clock::now_rfc3339(),
        summary: prepared.ask.summary.clone(),
        focus_areas: prepared.ask.focus_areas.clone(),
        scope: prepared.scope.name(),
        asked_by: prepared.ask.asked_by.clone(),
        files,
        diff: prepared.changes.diff.clone(),
        redacted,
        drafts: Vec::new(),
        next_draft: 1,
    };
    let stored = Box::new(waiting);
    let (session, ()) = cx
        .state
        .edit_session(session.id.clone(), move |s: &mut Session| {
            if let Some(waiting) = &s.awaiting {
                return Err(SessionError::NotWaiting(format!(
                    "round {} of review {} is already waiting for a person's review",
                    waiting.round, s.id
                )));
            }
            s.awaiting = Some(stored);
            s.pending = None;
            Ok(())
        })
        .await?;
    let step = waiting_step(&person());
    run.report(step.progress, step.message);
    watch_for_cancel(cx, run.clone(), cancel);
    if let Some(waiting) = &session.awaiting {
        let requested = crate::views::waiting_round(&session, waiting);
        if let Ok(params) = serde_json::to_value(requested) {
            cx.state.publish_round(session.workspace.clone(), wire::ROUND_REQUESTED, params).await;
        }
    }
    Ok(())
}

/// The run of a round waiting on a person, registering it when this daemon
/// has none (it was asked before a restart). `None` when nothing waits.
pub fn run_for(cx: &Context, session: &Session) -> Option<Arc<Run>> {
    let waiting = session.awaiting.as_ref()?;
    if let Some(run) = cx.runs.get(&session.id).filter(|run| run.round == waiting.round && run.result().is_none()) {
        return Some(run);
    }
    let cancel = cx.shutdown.close.child_token();
    let run = cx
        .runs
        .begin(&session.id, &session.workspace, waiting.round, true, cancel.clone(), waiting_step(&person()))
        .ok()?;
    watch_for_cancel(cx, run.clone(), cancel);
    Some(run)
}

/// A waiting round ends when the agent cancels it (the round is dropped
/// from the store and the windows are told) or when the daemon stops (it
/// stays stored, to wait again after the restart).
fn watch_for_cancel(cx: &Context, run: Arc<Run>, cancel: CancellationToken) {
    let cx = cx.clone();
    tokio::spawn(async move {
        cancel.cancelled().await;
        if run.result().is_some() {
            return;
        }
        if cx.shutdown.close.is_cancelled() {
            run.finish(Err(RoundError::Stopped));
            return;
        }
        let round = run.round;
        let dropped = cx
            .state
            .edit_session(run.review_id.clone(), move |s: &mut Session| match &s.awaiting {
                Some(waiting) if waiting.round == round => {
                    s.awaiting = None;
                    Ok(())
                }
                _ => Err(SessionError::NotWaiting("the round is no longer waiting".into())),
            })
            .await
            .map(|(session, ())| session);
        match dropped {
            Ok(session) => {
                announce(&cx, &session, round, "cancelled", Vec::new(), None).await;
                if session.rounds.is_empty() && session.completion.is_none() {
                    cx.state.discard_empty_session(session.id.clone()).await;
                }
                run.finish(Err(RoundError::Cancelled("the round was cancelled before the person answered".into())));
            }
            // Submitted at the same moment: the submission finishes the run.
            Err(SessionError::NotWaiting(_)) => {}
            Err(error) => run.finish(Err(error.into())),
        }
    });
}

/// A waiting round the session's completion ended: whoever waits for it and
/// the windows showing it are told.
pub(super) async fn dropped(cx: &Context, session: &Session, round: u32) {
    if let Some(run) = cx.runs.get(&session.id).filter(|run| run.round == round && run.result().is_none()) {
        run.finish(Err(RoundError::Cancelled(format!(
            "review {} was completed before the person answered round {round}",
            session.id
        ))));
        run.cancel_token().cancel();
    }
    announce(cx, session, round, "cancelled", Vec::new(), None).await;
}

/// Tells the windows on the session's repository how a waiting round stands.
pub(super) async fn announce(
    cx: &Context,
    session: &Session,
    round: u32,
    state: &str,
    drafts: Vec<wire::Draft>,
    verdict: Option<Assessment>,
) {
    let changed = wire::RoundChanged {
        review_id: session.id.clone(),
        round,
        workspace: session.workspace.clone(),
        state: state.into(),
        drafts,
        verdict: verdict.map(|v| v.as_str().to_owned()),
    };
    if let Ok(params) = serde_json::to_value(changed) {
        cx.state.publish_round(session.workspace.clone(), wire::ROUND_CHANGED, params).await;
    }
}

/// The session `id` (a person may abbreviate it) and its waiting round.
async fn waiting(cx: &Context, id: &str) -> Result<(Session, Box<PersonRound>), RoundError> {
    let mut session = super::get(cx, id, None).await?;
    match session.awaiting.take() {
        Some(waiting) => Ok((session, waiting)),
        None => Err(not_waiting(&session)),
    }
}

fn not_waiting(session: &Session) -> RoundError {
    let why = match (&session.completion, session.rounds.last()) {
        (Some(done), _) => format!("it was completed ({}) at {}", done.final_status.name(), done.at),
        (None, Some(last)) => format!("its round {} was answered at {} by {}", last.round, last.at, last.reviewer),
        (None, None) => "no round of it was asked of a person".into(),
    };
    RoundError::Conflict(format!(
        "review {} has no round waiting for a person: {why}. `parley inbox` lists what waits",
        session.id
    ))
}

/// Whether an editor window is open on the repository at `root` (a window
/// whose folder holds it or lies inside it): a person there can review.
pub async fn watched(cx: &Context, root: &Path) -> bool {
    match cx.state.status().await {
        Ok(facts) => facts.editors.iter().any(|editor| {
            editor.workspaces.iter().any(|w| crate::workspace::holds(w, root) || crate::workspace::holds(root, w))
        }),
        Err(_) => false,
    }
}

/// What the inbox holds: every waiting round, and one page of the threads.
#[derive(Debug, Default)]
pub struct Inbox {
    pub rounds: Vec<Session>,
    pub threads: Vec<Thread>,
    /// Where the next page of threads starts, when there is one.
    pub next_offset: Option<usize>,
}

/// The rounds waiting on a person and the open threads whose last word is
/// not the person's, for the repositories in (or holding) `folder`, or all;
/// the threads from the `offset`th on, within [`crate::limits::PAGE_BYTES`].
pub async fn inbox(cx: &Context, folder: Option<&Path>, offset: usize) -> Result<Inbox, RoundError> {
    let concerned =
        |root: &Path| folder.is_none_or(|f| crate::workspace::holds(f, root) || crate::workspace::holds(root, f));
    let rounds: Vec<Session> =
        cx.state.awaiting_person().await?.into_iter().filter(|s| concerned(&s.workspace)).collect();
    let waiting: Vec<Thread> =
        cx.state.threads_waiting_on(person()).await?.into_iter().filter(|t| concerned(&t.workspace)).collect();
    let total = waiting.len();
    let threads = crate::feedback::Page::bounded(offset, None).take(waiting);
    let next = offset.saturating_add(threads.len());
    Ok(Inbox { rounds, threads, next_offset: (next < total).then_some(next) })
}

/// A waiting round as a person reviews it: its files, the version of each
/// at the previous round, the drafts, and earlier rounds' comments.
pub struct ForReview {
    pub session: Session,
    pub waiting: Box<PersonRound>,
    /// The previous round's files, when a person reviewed it.
    pub previous: Option<(u32, Vec<FileVersions>)>,
    pub earlier: Vec<Thread>,
    /// The round as it was answered, when it is not the waiting one.
    pub answered: Option<Round>,
}

/// The round waiting on a person (`round` `None`, or its number), or round
/// `round` as the person answered it, to be read again.
pub async fn get(cx: &Context, id: &str, round: Option<u32>) -> Result<ForReview, RoundError> {
    let mut session = super::get(cx, id, None).await?;
    let waiting_now = session.awaiting.as_ref().map(|w| w.round);
    let (waiting, answered) = match round {
        None => (session.awaiting.take().ok_or_else(|| not_waiting(&session))?, None),
        Some(n) if Some(n) == waiting_now => (session.awaiting.take().ok_or_else(|| not_waiting(&session))?, None),
        Some(n) => {
            let answered = answered_round(&session, n)?.clone();
            (Box::new(as_shown(&answered)), Some(answered))
        }
    };
    let n = waiting.round;
    let previous = session.rounds.iter().rev().find(|r| r.round < n).map(|r| (r.round, r.files.clone()));
    // Re-anchored first: the agent has usually changed the files since, and
    // just now, so the round's files are checked whatever the watcher has
    // reported yet (an applied suggestion then shows its thread addressed).
    let threads_root = threads_root(&session).to_owned();
    for file in &waiting.files {
        let file = threads_root.join(&file.path);
        let refreshed = crate::refresh::refresh(&cx.state, &cx.store, &cx.watch.freshness, &threads_root, Some(&file));
        if let Err(e) = refreshed.await {
            tracing::debug!("checking {} for round {n} of {}: {e}", file.display(), session.id);
        }
    }
    let earlier: Vec<Thread> = threads::list(cx, &threads_root, None, true)
        .await
        .map_err(|e| RoundError::Store(e.to_string()))?
        .into_iter()
        .filter(|t| t.finding.as_deref().is_some_and(|f| f.review_id == session.id && f.round <= n))
        .collect();
    Ok(ForReview { session, waiting, previous, earlier, answered })
}

/// The folder the threads a round's comments become are in: the
/// repository, or, for a plan review, the folder keeping the plan's copy.
pub fn threads_root(session: &Session) -> &Path {
    session.plan.as_ref().map_or(&session.workspace, |plan| &plan.folder)
}

/// Round `n` of `session`, answered by a person, or why it cannot be shown.
fn answered_round(session: &Session, n: u32) -> Result<&Round, RoundError> {
    let Some(round) = session.rounds.iter().find(|r| r.round == n) else {
        let waiting = session.awaiting.as_ref().map(|w| format!(", and round {} waits for a person", w.round));
        return Err(RoundError::NotFound(match (session.rounds.len(), waiting) {
            (0, Some(waiting)) => format!("review {} has no answered round yet{waiting}", session.id),
            (0, None) => format!("review {} has no round yet", session.id),
            (1, waiting) => {
                format!(
                    "review {} has one answered round, round 1{}: there is no round {n}",
                    session.id,
                    waiting.unwrap_or_default()
                )
            }
            (k, waiting) => {
                format!(
                    "review {} has answered rounds 1 to {k}{}: there is no round {n}",
                    session.id,
                    waiting.unwrap_or_default()
                )
            }
        }));
    };
    if !round.by_person() {
        return Err(RoundError::Conflict(format!(
            "round {n} of review {} was answered by {}, not by a person, so only the version it reviewed was kept; \
             `parley sessions show {} --round {n}` prints its review, and the audit tree keeps its diff",
            session.id, round.reviewer, session.id
        )));
    }
    Ok(round)
}

/// An answered round in the shape of a waiting one, for reading again: what
/// was asked and the files, with no drafts (they were sent). When and by whom
/// it was asked is not kept once a round is answered.
fn as_shown(round: &Round) -> PersonRound {
    PersonRound {
        round: round.round,
        requested_at: String::new(),
        summary: round.summary.clone(),
        focus_areas: round.focus_areas.clone(),
        scope: round.scope.clone(),
        asked_by: String::new(),
        files: round.files.clone(),
        diff: String::new(),
        drafts: Vec::new(),
        next_draft: 0,
        redacted: None,
    }
}

/// A person's comment on a waiting round, as asked.
#[derive(Debug, Clone)]
pub struct NewDraft {
    pub path: String,
    /// `old` (the base version, removed lines) or `new` (the default).
    pub side: Option<String>,
    /// Zero-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub body: String,
    pub suggestion: Option<String>,
    pub severity: Option<String>,
    /// Replace this draft instead of adding one.
    pub replaces: Option<String>,
    /// Who writes it; by default [`person`].
    pub author: Option<String>,
}

/// Adds (or replaces) a draft; answers it once it is durable.
pub async fn comment(cx: &Context, id: &str, mut new: NewDraft) -> Result<(Session, Draft), RoundError> {
    // `src\lib.rs` typed at a Windows prompt is the round's `src/lib.rs`.
    new.path = crate::wire_path::slashed(&new.path);
    let side = match new.side.as_deref().map(str::trim) {
        None | Some("") => Side::New,
        Some(name) => Side::parse(name).ok_or_else(|| {
            RoundError::Invalid(format!(
                "side must be \"old\" (the base version, removed lines) or \"new\", not {name:?}"
            ))
        })?,
    };
    let (session, waiting) = waiting(cx, id).await?;
    check_place(&waiting, &new, side)?;
    if let Some(severity) = new.severity.as_deref()
        && Severity::from_name(severity).is_none()
    {
        return Err(RoundError::Invalid(format!(
            "severity must be critical, major, minor or suggestion, not {severity:?}"
        )));
    }
    let round = waiting.round;
    let author = new.author.clone().unwrap_or_else(person);
    let at = crate::clock::now_rfc3339();
    let (session, draft) = cx
        .state
        .edit_session(session.id.clone(), move |s: &mut Session| {
                let id = s.id.clone();
                let waiting = still_waiting(s, round)?;
                let draft_id = match &new.replaces {
                    Some(replaced) => {
                        let Some(index) = waiting.drafts.iter().position(|d| &d.id == replaced) else {
                            return Err(SessionError::Refused(format!(
                                "round {round} of review {id} has no draft {replaced}; `parley review diff {id}` shows the drafts"
                            )));
                        };
                        waiting.drafts.remove(index).id
                    }
                    None => {
                        waiting.next_draft = waiting.next_draft.max(1);
                        let next = format!("d{}", waiting.next_draft);
                        waiting.next_draft += 1;
                        next
                    }
                };
                let draft = Draft {
                    id: draft_id,
                    path: new.path,
                    side,
                    start_line: new.start_line,
                    end_line: new.end_line,
                    body: match new.body.trim() {
                        "" => "Suggested change".to_owned(),
                        body => body.to_owned(),
                    },
                    // Replacement lines, as the file's text reads for its
                    // threads: a Windows editor sends them in CRLF lines.
                    suggestion: new.suggestion.map(crate::line_endings::into_lf),
                    severity: new.severity,
                    author,
                    at,
                };
                waiting.drafts.push(draft.clone());
                waiting.drafts.sort_by(|a, b| {
                    (&a.path, a.side == Side::New, a.start_line).cmp(&(&b.path, b.side == Side::New, b.start_line))
                });
                Ok(draft)
            })
        .await?;
    announce_drafts(cx, &session).await;
    Ok((session, draft))
}

/// Removes a draft; answers once that is durable.
pub async fn uncomment(cx: &Context, id: &str, draft_id: &str) -> Result<Session, RoundError> {
    let (session, waiting) = waiting(cx, id).await?;
    let round = waiting.round;
    let wanted = draft_id.trim().to_owned();
    let (session, ()) = cx
        .state
        .edit_session(session.id.clone(), move |s: &mut Session| {
            let id = s.id.clone();
            let waiting = still_waiting(s, round)?;
            let before = waiting.drafts.len();
            waiting.drafts.retain(|d| d.id != wanted);
            if waiting.drafts.len() == before {
                return Err(SessionError::Refused(format!(
                    "round {round} of review {id} has no draft {wanted}; `parley review diff {id}` shows the drafts"
                )));
            }
            Ok(())
        })
        .await?;
    announce_drafts(cx, &session).await;
    Ok(session)
}

/// The session's waiting round `round`, to edit; refused once it was
/// submitted or cancelled.
fn still_waiting(session: &mut Session, round: u32) -> Result<&mut PersonRound, SessionError> {
    let id = session.id.clone();
    session.awaiting.as_deref_mut().filter(|w| w.round == round).ok_or_else(|| {
        SessionError::NotWaiting(format!(
            "round {round} of review {id} is no longer waiting: it was submitted or cancelled"
        ))
    })
}

async fn announce_drafts(cx: &Context, session: &Session) {
    if let Some(waiting) = &session.awaiting {
        let drafts = waiting.drafts.iter().map(crate::views::draft).collect();
        announce(cx, session, waiting.round, "drafts", drafts, None).await;
    }
}

/// Refuses a comment on a file, side or lines the round does not have.
fn check_place(waiting: &PersonRound, new: &NewDraft, side: Side) -> Result<(), RoundError> {
    if new.body.trim().is_empty() && new.suggestion.as_deref().is_none_or(|s| s.trim().is_empty()) {
        return Err(RoundError::Invalid("a comment needs a body: say what should change".into()));
    }
    crate::limits::check("the comment", &new.body).map_err(RoundError::Invalid)?;
    if let Some(suggestion) = &new.suggestion {
        crate::limits::check("the suggested change", suggestion).map_err(RoundError::Invalid)?;
    }
    let Some(file) = waiting.files.iter().find(|f| f.path == new.path || f.old_path.as_deref() == Some(&new.path))
    else {
        let listed: Vec<&str> = waiting.files.iter().take(8).map(|f| f.path.as_str()).collect();
        return Err(RoundError::Invalid(format!(
            "{} is not in this round; its files are {}{}",
            new.path,
            listed.join(", "),
            if waiting.files.len() > listed.len() { ", …" } else { "" }
        )));
    };
    let text = match side {
        Side::Old => file.before.as_deref(),
        Side::New => file.after.as_deref(),
    };
    let Some(text) = text else {
        let why = match (side, file.status) {
            (Side::Old, FileStatus::Added) => "it is a new file: comment on the new side".to_owned(),
            (Side::New, FileStatus::Deleted) => "the file was deleted: comment on the old side".to_owned(),
            _ if file.binary => "it is a binary file".to_owned(),
            _ => "it is too large to show".to_owned(),
        };
        return Err(RoundError::Invalid(format!("{} has no {} side to comment on: {why}", file.path, side.name())));
    };
    let lines = text.lines().count().max(1) as u32;
    if new.end_line < new.start_line || new.end_line >= lines {
        let asked = if new.start_line == new.end_line {
            format!("line {}", new.start_line + 1)
        } else {
            format!("lines {}-{}", new.start_line + 1, new.end_line + 1)
        };
        return Err(RoundError::Invalid(format!(
            "{asked} is not in the {} side of {}, which has {lines} lines (1-{lines})",
            side.name(),
            file.path
        )));
    }
    Ok(())
}

/// What a submission gave.
#[derive(Debug)]
pub struct Submitted {
    pub outcome: Outcome,
    pub threads: Vec<String>,
}

/// Sends the person's review: the drafts and the summary become a seed 004
/// review, stored as the round (answered once durable); the comments
/// become threads; the agent waiting for it gets it.
pub async fn submit(
    cx: &Context,
    id: &str,
    verdict: Verdict,
    summary: Option<String>,
    author: Option<String>,
) -> Result<Submitted, RoundError> {
    if let Some(summary) = &summary {
        crate::limits::check("the summary", summary).map_err(RoundError::Invalid)?;
    }
    let reviewer = author.unwrap_or_else(person);
    let (session, waiting) = waiting(cx, id).await?;
    let run = run_for(cx, &Session { awaiting: Some(waiting.clone()), ..session.clone() });
    let settings = {
        let root = session.workspace.clone();
        tokio::task::spawn_blocking(move || crate::config::review_settings(&root))
            .await
            .map_err(|e| RoundError::Internal(e.to_string()))?
            .map_err(|e| RoundError::Config(e.to_string()))?
    };
    let review = review_of(&waiting, verdict, summary.as_deref());
    let elapsed_ms = chrono::DateTime::parse_from_rfc3339(&waiting.requested_at)
        .map(|at| (chrono::Utc::now() - at.with_timezone(&chrono::Utc)).num_milliseconds().max(0) as u64)
        .unwrap_or(0);
    let round = Round {
        round: waiting.round,
        at: crate::clock::now_rfc3339(),
        summary: waiting.summary.clone(),
        focus_areas: waiting.focus_areas.clone(),
        scope: waiting.scope.clone(),
        changed_files: waiting.files.iter().map(|f| f.path.clone()).collect(),
        verdict: review.overall_assessment,
        review,
        reviewer: format!("{reviewer}{}", crate::sessions::IN_PERSON),
        elapsed_ms,
        files: waiting.files.clone(),
        person_verdict: Some(verdict.name().to_owned()),
    };
    let number = waiting.round;
    let stored = round.clone();
    let (session, round) = cx
        .state
        .edit_session(session.id.clone(), move |s: &mut Session| {
            if s.awaiting.as_ref().is_none_or(|w| w.round != number) {
                return Err(SessionError::NotWaiting(format!(
                    "round {number} of review {} was already submitted or cancelled",
                    s.id
                )));
            }
            let mut round = stored;
            round.round = s.rounds.len() as u32 + 1;
            s.rounds.push(round.clone());
            s.awaiting = None;
            s.pending = None;
            Ok(round)
        })
        .await?;
    let (opened, mut warnings) = open_threads(cx, &session, &round, &waiting).await;
    if session.plan.is_some() {
        // A plan is no change to the repository: no audit tree, no review
        // shown in place of the repository's.
        let markdown = round.markdown(&session.id);
        let outcome =
            Outcome { session: session.clone(), round: round.clone(), markdown, shown_in: 0, audit: None, warnings };
        announce(cx, &session, round.round, "submitted", Vec::new(), Some(round.verdict)).await;
        if let Some(run) = run {
            run.finish(Ok(outcome.clone()));
        }
        return Ok(Submitted { outcome, threads: opened });
    }
    let changes = Changes {
        root: session.workspace.clone(),
        scope: Scope::parse(Some(&waiting.scope)),
        diff: waiting.diff.clone(),
        files: round.changed_files.clone(),
    };
    let redacted = waiting.redacted.iter().cloned().collect();
    let outcome = pipeline::finish(cx, &settings, session.clone(), round.clone(), &changes, redacted).await;
    warnings.extend(outcome.warnings.iter().cloned());
    let outcome = Outcome { warnings, ..outcome };
    announce(cx, &session, round.round, "submitted", Vec::new(), Some(round.verdict)).await;
    if let Some(run) = run {
        run.finish(Ok(outcome.clone()));
    }
    Ok(Submitted { outcome, threads: opened })
}

/// The review the agent receives: the summary first, then every draft in
/// order of file and line.
fn review_of(waiting: &PersonRound, verdict: Verdict, summary: Option<&str>) -> StructuredReview {
    let mut comments = Vec::new();
    if let Some(summary) = summary.map(str::trim).filter(|s| !s.is_empty()) {
        comments.push(ReviewComment {
            r#type: "general".into(),
            file: None,
            line: None,
            severity: Severity::Suggestion,
            category: Some("summary".into()),
            comment: summary.to_owned(),
            suggested_fix: None,
        });
    }
    let commented = !waiting.drafts.is_empty();
    for draft in &waiting.drafts {
        let file = waiting.files.iter().find(|f| f.path == draft.path || f.old_path.as_deref() == Some(&draft.path));
        let (line, comment) = placed_comment(draft, file);
        comments.push(ReviewComment {
            r#type: "specific".into(),
            file: Some(file.map_or_else(|| draft.path.clone(), |f| f.path.clone())),
            line: Some(line),
            severity: draft.severity.as_deref().and_then(Severity::from_name).unwrap_or(verdict.default_severity()),
            category: Some("review".into()),
            comment,
            suggested_fix: draft.suggestion.clone(),
        });
    }
    let mut review = StructuredReview {
        design_compliance: Default::default(),
        comments,
        missing_requirements: Vec::new(),
        summary: Default::default(),
        test_results: None,
        overall_assessment: verdict.assessment(commented),
    };
    review.summary = review.counts();
    review
}

/// The 1-based line of the new version a draft is about, and its text. A
/// comment on removed lines points at where they were, and quotes them.
fn placed_comment(draft: &Draft, file: Option<&FileVersions>) -> (u32, String) {
    let lines = if draft.start_line == draft.end_line {
        format!("line {}", draft.start_line + 1)
    } else {
        format!("lines {}-{}", draft.start_line + 1, draft.end_line + 1)
    };
    match (draft.side, file) {
        (Side::New, _) | (Side::Old, None) => {
            let text = if draft.start_line == draft.end_line {
                draft.body.clone()
            } else {
                format!("({lines}) {}", draft.body)
            };
            (draft.start_line + 1, text)
        }
        (Side::Old, Some(file)) => {
            let before = file.before.as_deref().unwrap_or_default();
            let quoted: Vec<&str> = before
                .lines()
                .skip(draft.start_line as usize)
                .take((draft.end_line - draft.start_line + 1) as usize)
                .collect();
            let shown = quoted.iter().take(3).map(|l| l.trim()).collect::<Vec<_>>().join(" / ");
            let more = if quoted.len() > 3 { " / …" } else { "" };
            let text = format!("On the removed {lines} of the old version (`{shown}{more}`): {}", draft.body);
            let line = match file.after.as_deref() {
                Some(after) => new_line_of_old(before, after, draft.start_line) + 1,
                None => 1,
            };
            (line, text)
        }
    }
}

/// Where zero-based line `old` of `before` is, or would be, in `after`:
/// for a removed line, the line that now follows the removal.
fn new_line_of_old(before: &str, after: &str, old: u32) -> u32 {
    // By their text, whatever their endings: a change that also turned LF
    // into CRLF does not move every line.
    let (before, after) = (crate::line_endings::as_lf(before), crate::line_endings::as_lf(after));
    let diff = similar::TextDiff::from_lines(&*before, &*after);
    let old = old as usize;
    for op in diff.ops() {
        let (tag, olds, news) = op.as_tag_tuple();
        if olds.contains(&old) || (olds.is_empty() && olds.start == old) {
            return match tag {
                similar::DiffTag::Equal => (news.start + (old - olds.start)) as u32,
                _ => news.start as u32,
            };
        }
    }
    after.lines().count() as u32
}

/// Makes a thread of every draft, linked to the session and round as
/// findings are. A comment on the new side is on its lines as they are now
/// in the file (found again by their text when the file changed since the
/// request). A comment on removed lines (the old side) is on the line that
/// now stands where they were (the first line with text from there on), and
/// its first comment names and quotes them, as the agent's review does: so
/// it is answered, resolved and shown in later rounds like any other. Only
/// a comment on a file the change deletes has no place to go; a warning
/// says so.
async fn open_threads(
    cx: &Context,
    session: &Session,
    round: &Round,
    waiting: &PersonRound,
) -> (Vec<String>, Vec<String>) {
    let mut opened = Vec::new();
    let mut warnings = Vec::new();
    let comments = round.review.comments.iter().filter(|c| c.r#type == "specific");
    for (draft, comment) in waiting.drafts.iter().zip(comments) {
        let file = waiting.files.iter().find(|f| f.path == draft.path || f.old_path.as_deref() == Some(&draft.path));
        let Some(file) = file else { continue };
        let absolute = threads_root(session).join(&file.path);
        let place = match draft.side {
            Side::New => Some((draft.start_line, draft.end_line)),
            Side::Old => file.after.as_deref().and_then(|after| {
                let at = removed_lines_place(file.before.as_deref().unwrap_or_default(), after, draft.start_line)?;
                Some((at, at))
            }),
        };
        let Some((start, end)) = place else {
            warnings.push(format!(
                "the comment on the removed lines {}:{} did not become a thread: the change deletes the file",
                draft.path,
                draft.start_line + 1
            ));
            continue;
        };
        let (start, end) = current_lines(&absolute, file.after.as_deref(), start, end);
        let mut body = match draft.side {
            Side::New => draft.body.clone(),
            // The review's text: it names and quotes the removed lines.
            Side::Old => comment.comment.clone(),
        };
        if let Some(fix) = draft.suggestion.as_deref().filter(|f| !f.trim().is_empty()) {
            let fence = if fix.contains("```") { "````" } else { "```" };
            body.push_str(&format!("\n\nSuggested change:\n{fence}suggestion\n{fix}\n{fence}"));
        }
        let new = NewThread {
            file: absolute,
            workspace: Some(threads_root(session).to_owned()),
            range: Range {
                start: Position { line: start, character: 0 },
                end: Position { line: end, character: u32::MAX },
            },
            encoding: PositionEncoding::Utf8,
            expected_text: None,
            body,
            author: draft.author.clone(),
            ask: None,
            opened_by: None,
            walkthrough: None,
            synced: None,
            finding: Some(Box::new(Finding {
                review_id: session.id.clone(),
                round: round.round,
                severity: comment.severity.to_string(),
                category: comment.category.clone().unwrap_or_else(|| "review".into()),
                // A suggestion for removed lines is text to bring back, not
                // a replacement of the line the thread is on.
                suggested_fix: draft.suggestion.clone().filter(|_| draft.side == Side::New),
            })),
        };
        match threads::create(cx, new).await {
            Ok(thread) => opened.push(thread.id),
            Err(e) => warnings.push(format!(
                "the comment on {}:{} did not become a thread: {e}",
                draft.path,
                draft.start_line + 1
            )),
        }
    }
    (opened, warnings)
}

/// The zero-based line of `after` a thread about removed line `old` of
/// `before` is put on: the line that now stands where it was, or the
/// nearest line with text after it (before it at the end of the file);
/// `None` when `after` has no line with text.
fn removed_lines_place(before: &str, after: &str, old: u32) -> Option<u32> {
    let lines: Vec<&str> = after.lines().collect();
    let at = (new_line_of_old(before, after, old) as usize).min(lines.len());
    let has_text = |i: &usize| lines.get(*i).is_some_and(|l| !l.trim().is_empty());
    let found = (at..lines.len()).find(has_text).or_else(|| (0..at).rev().find(has_text))?;
    u32::try_from(found).ok()
}

/// Lines `start..=end` of the reviewed version, where they are in the file
/// now: the same numbers when they still hold the same text, else where that
/// text is found, else the same numbers.
fn current_lines(file: &Path, reviewed: Option<&str>, start: u32, end: u32) -> (u32, u32) {
    let Some(reviewed) = reviewed else { return (start, end) };
    let wanted: Vec<&str> = reviewed.lines().skip(start as usize).take((end - start + 1) as usize).collect();
    let Ok(now) = std::fs::read_to_string(file) else { return (start, end) };
    let lines: Vec<&str> = now.lines().collect();
    let holds = |at: usize| lines.get(at..at + wanted.len()).is_some_and(|got| got == wanted.as_slice());
    if wanted.is_empty() || holds(start as usize) {
        return (start, end);
    }
    let span = end - start;
    (0..lines.len())
        .filter(|&at| holds(at))
        .min_by_key(|&at| at.abs_diff(start as usize))
        .map_or((start, end), |at| (at as u32, at as u32 + span))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_lines_point_where_they_were() {
        let before = "a\nb\nc\nd\n";
        let after = "a\nd\ne\n";
        assert_eq!(new_line_of_old(before, after, 0), 0, "kept line");
        assert_eq!(new_line_of_old(before, after, 1), 1, "removed b: where d now is");
        assert_eq!(new_line_of_old(before, after, 3), 1, "d moved up");
    }

    #[test]
    fn removed_lines_are_placed_on_the_line_with_text_where_they_were() {
        let cases = [
            ("a\nb\nc\n", "a\nc\n", 1, Some(1), "on the line that follows"),
            ("a\nb\n\nc\n", "a\n\nc\n", 1, Some(2), "past a blank line"),
            ("a\nb\nc\n", "a\nb\n", 2, Some(1), "at the end: the last line"),
            ("a\nb\n", "\n\n", 0, None, "nothing with text"),
            ("a\nb\n", "a\nB\n", 1, Some(1), "replaced: on its replacement"),
            ("a\r\nb\r\nc\r\n", "a\r\nc\r\n", 1, Some(1), "CRLF lines"),
            ("x\na\nb\nc\n", "x\r\na\r\nc\r\n", 2, Some(2), "the change also turned LF into CRLF"),
            ("x\r\na\nb\r\nc\n", "x\na\r\nc\n", 2, Some(2), "mixed endings"),
        ];
        for (before, after, old, want, name) in cases {
            assert_eq!(removed_lines_place(before, after, old), want, "{name}");
        }
    }

    #[test]
    fn verdicts_map_to_seed_assessments() {
        assert_eq!(Verdict::Approve.assessment(false), Assessment::Lgtm);
        assert_eq!(Verdict::Approve.assessment(true), Assessment::LgtmWithSuggestions);
        assert_eq!(Verdict::RequestChanges.assessment(false), Assessment::NeedsChanges);
        assert_eq!(Verdict::Comment.assessment(true), Assessment::NeedsChanges);
        assert_eq!(Verdict::Comment.assessment(false), Assessment::LgtmWithSuggestions);
        assert!(Verdict::parse("lgtm").is_err());
    }
}
