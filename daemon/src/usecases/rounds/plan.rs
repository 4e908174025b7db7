//! Plan reviews: an agent's plan (Claude Code's `ExitPlanMode`, a Codex
//! `<proposed_plan>`) reviewed as a round a person answers, so it shows
//! wherever a person reviews an agent's change (the inbox, the editors,
//! `parley review diff|comment|submit`). The round's one file is the plan;
//! the next plan of the same host session is the next round of the same
//! session, the file then `modified` with the previous plan as its `before`.
//! Nothing runs git. The person's comments become threads on a copy of the
//! plan kept in the data directory (rewritten with each plan, so threads
//! follow their lines into the next one), because a plan is no file of the
//! repository. A round the person answers in the host's own dialog instead
//! is marked answered there and leaves the inbox.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::person;
use super::{RoundError, Run};
use crate::sessions::{
    FileStatus, FileVersions, PersonRound, PlanOrigin, Round, Session, SessionError, SessionRequest,
};
use crate::structured_review::Assessment;
use crate::usecases::Context;
use parley_protocol::methods as wire;

/// The file name a plan takes when the host names none.
pub const DEFAULT_NAME: &str = "plan.md";
/// The largest plan taken.
const MAX_PLAN_BYTES: usize = 1024 * 1024;
/// How many of a repository's sessions are looked through for a host session's plan review.
const SESSIONS_LOOKED_AT: usize = 1000;
/// What a round answered in the host ends with, for whoever waited on it.
const ANSWERED_IN_HOST: &str = "the person answered the plan in the agent's host";

/// A plan to review, as a host's hook sends it.
#[derive(Debug, Clone)]
pub struct PlanAsk {
    /// `claude` or `codex`.
    pub host: String,
    pub host_session: String,
    /// The agent's working directory (absolute).
    pub cwd: PathBuf,
    pub plan: String,
    /// The plan file's name (any path: its base name is taken).
    pub name: Option<String>,
    /// Open nothing when no round waits and the plan is the one the person
    /// last answered.
    pub new_only: bool,
}

/// The round a plan opened.
#[derive(Debug, Clone)]
pub struct Opened {
    pub review_id: String,
    pub round: u32,
    pub workspace: PathBuf,
    pub path: String,
    pub status: FileStatus,
    /// The plan was the one the person last answered (with `new_only`):
    /// nothing was opened, and `round` is the round that answered it.
    pub already_answered: bool,
}

/// Opens the plan round for `ask`: the next round of the host session's
/// plan review, or its first. A hook asking again with the plan already
/// waiting (after a daemon restart) gets that round.
pub async fn open(cx: &Context, ask: PlanAsk) -> Result<Opened, RoundError> {
    let host = check_host(&ask.host)?;
    let host_session = ask.host_session.trim().to_owned();
    if host_session.is_empty() {
        return Err(RoundError::Invalid("the host's session id is empty: give the session_id the host sent".into()));
    }
    if ask.plan.trim().is_empty() {
        return Err(RoundError::Invalid("the plan is empty: there is nothing to review".into()));
    }
    if ask.plan.len() > MAX_PLAN_BYTES {
        return Err(RoundError::Invalid(format!(
            "the plan is {} KiB, over the {} KiB a plan review takes",
            ask.plan.len() / 1024,
            MAX_PLAN_BYTES / 1024
        )));
    }
    let root = plan_root(&ask.cwd).await?;
    let name = base_name(ask.name.as_deref());
    let existing = find(cx, &root, host, &host_session).await?;
    let session = match existing {
        Some(session) => {
            if let Some(waiting) = &session.awaiting {
                if waiting.files.first().and_then(|f| f.after.as_deref()) == Some(ask.plan.as_str()) {
                    // The same plan again: a hook waiting again after a restart.
                    person::run_for(cx, &session);
                    return Ok(opened(&session, waiting));
                }
                // The host moved on: the person answered it there.
                answered_elsewhere(cx, &session.id, waiting.round).await?;
            }
            if ask.new_only
                && session.awaiting.is_none()
                && session.plan.as_ref().is_some_and(|p| p.last_plan == ask.plan)
            {
                let origin = session.plan.as_deref();
                return Ok(Opened {
                    review_id: session.id.clone(),
                    round: session.rounds.last().map_or(1, |r| r.round),
                    workspace: session.workspace.clone(),
                    path: origin.map_or_else(|| DEFAULT_NAME.into(), |p| p.name.clone()),
                    status: if session.rounds.len() > 1 { FileStatus::Modified } else { FileStatus::Added },
                    already_answered: true,
                });
            }
            session
        }
        None => {
            let request = SessionRequest {
                summary: format!("Plan: {}", title(&ask.plan)),
                relevant_docs: Vec::new(),
                focus_areas: Vec::new(),
                scope: "plan".into(),
            };
            let session = cx.state.start_session(root.clone(), request).await?;
            let folder = plans_folder(&session.id)?;
            let origin = PlanOrigin {
                host: host.to_owned(),
                host_session: host_session.clone(),
                name: name.clone(),
                folder,
                last_plan: String::new(),
                answered_in_host: None,
                notes_given: None,
            };
            cx.state
                .edit_session(session.id.clone(), move |s: &mut Session| {
                    s.plan = Some(Box::new(origin));
                    Ok(())
                })
                .await?
                .0
        }
    };
    let origin = session.plan.clone().ok_or_else(|| RoundError::Internal("a plan review without its plan".into()))?;
    // The copy threads anchor to: the newest plan.
    let copy = origin.folder.join(&origin.name);
    let text = ask.plan.clone();
    tokio::task::spawn_blocking(move || write_copy(&copy, &text))
        .await
        .map_err(|e| RoundError::Internal(e.to_string()))??;
    let before = Some(origin.last_plan.clone()).filter(|p| !p.is_empty());
    let status = if before.is_some() { FileStatus::Modified } else { FileStatus::Added };
    let diff = unified_diff(&origin.name, before.as_deref(), &ask.plan);
    let waiting = PersonRound {
        round: session.rounds.len() as u32 + 1,
        requested_at: crate::clock::now_rfc3339(),
        summary: format!("Plan: {}", title(&ask.plan)),
        focus_areas: Vec::new(),
        scope: "plan".into(),
        asked_by: asked_by(host).into(),
        files: vec![FileVersions {
            path: origin.name.clone(),
            old_path: before.as_ref().map(|_| origin.name.clone()),
            status,
            before,
            after: Some(ask.plan.clone()),
            binary: false,
            too_large: false,
        }],
        diff,
        redacted: None,
        drafts: Vec::new(),
        next_draft: 1,
    };
    let plan = ask.plan.clone();
    let (session, ()) = cx
        .state
        .edit_session(session.id.clone(), move |s: &mut Session| {
            if s.awaiting.is_some() {
                return Err(SessionError::NotWaiting(format!("a plan of review {} is already waiting", s.id)));
            }
            if let Some(origin) = s.plan.as_deref_mut() {
                origin.last_plan = plan;
                origin.answered_in_host = None;
            }
            s.awaiting = Some(Box::new(waiting));
            Ok(())
        })
        .await?;
    person::run_for(cx, &session);
    let waiting =
        session.awaiting.as_deref().ok_or_else(|| RoundError::Internal("the plan round was just stored".into()))?;
    if let Ok(params) = serde_json::to_value(crate::views::waiting_round(&session, waiting)) {
        cx.state.publish_round(session.workspace.clone(), wire::ROUND_REQUESTED, params).await;
    }
    Ok(opened(&session, waiting))
}

fn opened(session: &Session, waiting: &PersonRound) -> Opened {
    let file = waiting.files.first();
    Opened {
        review_id: session.id.clone(),
        round: waiting.round,
        workspace: session.workspace.clone(),
        path: file.map(|f| f.path.clone()).unwrap_or_else(|| DEFAULT_NAME.into()),
        status: file.map_or(FileStatus::Added, |f| f.status),
        already_answered: false,
    }
}

/// Waits for the verdict on round `round` of plan review `id` until `stop`
/// fires (`None` then). A round already answered is answered at once.
pub async fn wait(
    cx: &Context,
    id: &str,
    round: u32,
    stop: &CancellationToken,
) -> Result<Option<wire::PlanVerdict>, RoundError> {
    let session = plan_session(cx, id).await?;
    if let Some(answered) = session.rounds.iter().find(|r| r.round == round) {
        return Ok(Some(verdict_of(&session, answered)));
    }
    let waiting_now = session.awaiting.as_ref().is_some_and(|w| w.round == round);
    let run: Option<Arc<Run>> = if waiting_now { person::run_for(cx, &session) } else { None };
    let Some(run) = run else {
        return Ok(Some(ended(&session, round, why_not_waiting(&session))));
    };
    match run.wait(None, stop, &|_| {}).await {
        None => Ok(None),
        Some(Ok(outcome)) => Ok(Some(verdict_of(&outcome.session, &outcome.round))),
        Some(Err(RoundError::Stopped)) => Err(RoundError::Stopped),
        Some(Err(error)) => {
            let session = plan_session(cx, id).await.unwrap_or(session);
            if let Some(answered) = session.rounds.iter().find(|r| r.round == round) {
                return Ok(Some(verdict_of(&session, answered)));
            }
            let reason = match error {
                RoundError::Cancelled(why) => why,
                other => other.to_string(),
            };
            Ok(Some(ended(&session, round, reason)))
        }
    }
}

/// Waits as [`wait`] for a hook whose connection `gone` fires when it
/// closes: a hook that goes away while the daemon runs was killed by its
/// host, because the person answered the plan there, so the round is marked
/// answered in the host. `None` then; a daemon stopping marks nothing (the
/// round stays stored, and the hook waits on it again once reconnected).
pub async fn wait_for_hook(
    cx: &Context,
    id: &str,
    round: u32,
    gone: &CancellationToken,
) -> Result<Option<wire::PlanVerdict>, RoundError> {
    let waited = wait(cx, id, round, gone).await?;
    if waited.is_none() {
        if cx.shutdown.stop.is_cancelled() || cx.shutdown.close.is_cancelled() {
            return Err(RoundError::Stopped);
        }
        answered_elsewhere(cx, id, round).await?;
    }
    Ok(waited)
}

/// Holds round `round` of plan review `id` for a hook whose connection
/// `gone` fires when it closes: a hook that goes away while the daemon runs,
/// with the round still waiting, was killed by its host because the person
/// answered there (even before it began to wait), so the round is marked
/// answered in the host.
pub fn hold(cx: &Context, id: String, round: u32, gone: CancellationToken) {
    let cx = cx.clone();
    tokio::spawn(async move {
        gone.cancelled().await;
        if cx.shutdown.stop.is_cancelled() || cx.shutdown.close.is_cancelled() {
            return;
        }
        if let Err(error) = answered_elsewhere(&cx, &id, round).await {
            tracing::debug!("round {round} of plan review {id}, its hook gone: {error}");
        }
    });
}

fn why_not_waiting(session: &Session) -> String {
    if let Some(done) = &session.completion {
        return format!("review {} was completed ({})", session.id, done.final_status.name());
    }
    if session.plan.as_ref().is_some_and(|p| p.answered_in_host.is_some()) {
        return ANSWERED_IN_HOST.into();
    }
    "the round is no longer waiting".into()
}

fn ended(session: &Session, round: u32, reason: String) -> wire::PlanVerdict {
    wire::PlanVerdict {
        review_id: session.id.clone(),
        round,
        outcome: "ended".into(),
        summary: None,
        comments: Vec::new(),
        reason: Some(reason),
    }
}

/// Marks round `round` of plan review `id` answered in the host, when it
/// still waits: it leaves the inbox, and the windows and whoever waits are
/// told. `false` when it no longer waited.
pub async fn answered_elsewhere(cx: &Context, id: &str, round: u32) -> Result<bool, RoundError> {
    let session = plan_session(cx, id).await?;
    let edited = cx
        .state
        .edit_session(session.id.clone(), move |s: &mut Session| {
            if s.awaiting.as_ref().is_none_or(|w| w.round != round) {
                return Ok(false);
            }
            s.awaiting = None;
            if let Some(origin) = s.plan.as_deref_mut() {
                origin.answered_in_host = Some(crate::clock::now_rfc3339());
            }
            Ok(true)
        })
        .await;
    let (session, marked) = match edited {
        Ok(done) => done,
        Err(SessionError::NotWaiting(_)) => return Ok(false),
        Err(error) => return Err(error.into()),
    };
    if !marked {
        return Ok(false);
    }
    if let Some(run) = cx.runs.get(&session.id).filter(|run| run.round == round && run.result().is_none()) {
        run.finish(Err(RoundError::Cancelled(ANSWERED_IN_HOST.into())));
        run.cancel_token().cancel();
    }
    person::announce(cx, &session, round, "answered_elsewhere", Vec::new(), None).await;
    Ok(true)
}

/// The comments of the host session's last plan round, when the person
/// approved it with comments, handed over once: asked again, there are
/// none. A round of it still waiting was answered in the host (the host ran
/// its next step): it is marked so first.
pub async fn notes(
    cx: &Context,
    host: &str,
    host_session: &str,
    cwd: &Path,
) -> Result<(Option<String>, Option<u32>, Vec<wire::PlanComment>), RoundError> {
    let host = check_host(host)?;
    let root = plan_root(cwd).await?;
    let Some(session) = find(cx, &root, host, host_session.trim()).await? else {
        return Ok((None, None, Vec::new()));
    };
    if let Some(waiting) = &session.awaiting {
        answered_elsewhere(cx, &session.id, waiting.round).await?;
        return Ok((Some(session.id), None, Vec::new()));
    }
    if session.plan.as_ref().is_some_and(|p| p.answered_in_host.is_some()) {
        // The newest plan was answered in the host: the person left no notes on it.
        return Ok((Some(session.id), None, Vec::new()));
    }
    match session.rounds.last() {
        Some(last) if last.verdict == Assessment::LgtmWithSuggestions => {
            let round = last.round;
            if session.plan.as_ref().is_some_and(|p| p.notes_given == Some(round)) {
                return Ok((Some(session.id), None, Vec::new()));
            }
            let verdict = verdict_of(&session, last);
            // Marked before they are answered: a host that loses the answer
            // loses the notes, but no host is handed them twice.
            cx.state
                .edit_session(session.id.clone(), move |s: &mut Session| {
                    if let Some(origin) = s.plan.as_deref_mut() {
                        origin.notes_given = Some(round);
                    }
                    Ok(())
                })
                .await?;
            Ok((Some(session.id.clone()), Some(round), verdict.comments))
        }
        _ => Ok((Some(session.id), None, Vec::new())),
    }
}

/// The person's verdict on an answered plan round, with their comments on
/// the plan's lines (quoted from the plan they commented on).
pub fn verdict_of(session: &Session, round: &Round) -> wire::PlanVerdict {
    let plan = round.files.first().and_then(|f| f.after.clone()).unwrap_or_default();
    let lines: Vec<&str> = plan.lines().collect();
    let mut summary = None;
    let mut comments = Vec::new();
    for comment in &round.review.comments {
        if comment.r#type != "specific" {
            if comment.category.as_deref() == Some("summary") {
                summary = Some(comment.comment.clone());
            }
            continue;
        }
        let start = comment.line.unwrap_or(1).max(1);
        // A comment on several lines says which, in front of its text.
        let (end, body) = match spanned(&comment.comment) {
            Some((from, to, rest)) if from == start => (to.max(start), rest.to_owned()),
            _ => (start, comment.comment.clone()),
        };
        let quote =
            lines.get((start - 1) as usize..(end as usize).min(lines.len())).map(|l| l.join("\n")).unwrap_or_default();
        comments.push(wire::PlanComment {
            path: comment.file.clone().unwrap_or_else(|| DEFAULT_NAME.into()),
            start_line: start,
            end_line: end,
            quote,
            body,
            suggestion: comment.suggested_fix.clone().filter(|s| !s.trim().is_empty()),
        });
    }
    let outcome = match round.verdict {
        Assessment::NeedsChanges => "changes_requested",
        Assessment::LgtmWithSuggestions if !comments.is_empty() => "approved_with_comments",
        Assessment::Lgtm | Assessment::LgtmWithSuggestions => "approved",
    };
    wire::PlanVerdict {
        review_id: session.id.clone(),
        round: round.round,
        outcome: outcome.into(),
        summary,
        comments,
        reason: None,
    }
}

/// `(lines 3-5) text` as the person's round writes a comment on several lines.
fn spanned(text: &str) -> Option<(u32, u32, &str)> {
    let rest = text.strip_prefix("(lines ")?;
    let (span, body) = rest.split_once(") ")?;
    let (from, to) = span.split_once('-')?;
    Some((from.parse().ok()?, to.parse().ok()?, body))
}

/// The session `id` (abbreviated as people may), which must be a plan review.
async fn plan_session(cx: &Context, id: &str) -> Result<Session, RoundError> {
    let session = super::get(cx, id, None).await?;
    if session.plan.is_none() {
        return Err(RoundError::Invalid(format!(
            "review {} reviews a change, not a plan; `parley inbox` lists the plans waiting",
            session.id
        )));
    }
    Ok(session)
}

/// The open plan review of a host session in `root`.
async fn find(cx: &Context, root: &Path, host: &str, host_session: &str) -> Result<Option<Session>, RoundError> {
    let sessions = cx.state.sessions(Some(root.to_owned()), SESSIONS_LOOKED_AT).await?;
    Ok(sessions.into_iter().find(|s| {
        s.completion.is_none() && s.plan.as_ref().is_some_and(|p| p.host == host && p.host_session == host_session)
    }))
}

fn check_host(host: &str) -> Result<&'static str, RoundError> {
    match host.trim() {
        "claude" => Ok("claude"),
        "codex" => Ok("codex"),
        other => Err(RoundError::Invalid(format!("the host must be claude or codex, not {other:?}"))),
    }
}

/// Who asked, as the inbox names the agent.
fn asked_by(host: &str) -> &'static str {
    match host {
        "codex" => "codex",
        _ => "claude-code",
    }
}

/// The repository a plan is for: the git root holding `cwd`, or, outside
/// any repository, the folder itself (the person looks for it where the
/// agent works).
async fn plan_root(cwd: &Path) -> Result<PathBuf, RoundError> {
    if !cwd.is_absolute() {
        return Err(RoundError::Invalid(format!("cwd must be an absolute folder, not {}", cwd.display())));
    }
    let cwd = cwd.to_owned();
    tokio::task::spawn_blocking(move || {
        let real = dunce::canonicalize(&cwd)
            .map_err(|e| RoundError::Invalid(format!("the agent's folder {} cannot be used: {e}", cwd.display())))?;
        if !real.is_dir() {
            return Err(RoundError::Invalid(format!("the agent's folder {} is not a folder", cwd.display())));
        }
        Ok(crate::workspace::root_of(&real))
    })
    .await
    .map_err(|e| RoundError::Internal(e.to_string()))?
}

/// The base name of the plan's file, or [`DEFAULT_NAME`].
fn base_name(given: Option<&str>) -> String {
    given
        .map(str::trim)
        .and_then(|g| Path::new(g).file_name())
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty() && !n.starts_with('.'))
        .unwrap_or(DEFAULT_NAME)
        .to_owned()
}

/// The plan's first line with text, without its heading marks, cut short.
fn title(plan: &str) -> String {
    let line = plan.lines().map(|l| l.trim().trim_start_matches('#').trim()).find(|l| !l.is_empty()).unwrap_or("");
    let mut title: String = line.chars().take(100).collect();
    if line.chars().count() > 100 {
        title.push('…');
    }
    title
}

/// Where a plan review keeps its plan's copy.
fn plans_folder(review_id: &str) -> Result<PathBuf, RoundError> {
    let data = crate::config::data_dir().map_err(|e| RoundError::Config(e.to_string()))?;
    Ok(data.join("plans").join(review_id))
}

fn write_copy(file: &Path, text: &str) -> Result<(), RoundError> {
    let fail = |e: std::io::Error| RoundError::Store(format!("the plan could not be kept in {}: {e}", file.display()));
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder).map_err(fail)?;
    }
    std::fs::write(file, text).map_err(fail)
}

fn unified_diff(name: &str, before: Option<&str>, after: &str) -> String {
    let diff = similar::TextDiff::from_lines(before.unwrap_or(""), after);
    let old = if before.is_some() { format!("a/{name}") } else { "/dev/null".into() };
    diff.unified_diff().header(&old, &format!("b/{name}")).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_named_after_its_file() {
        assert_eq!(base_name(Some("/home/ana/.claude/plans/tax-in-totals.md")), "tax-in-totals.md");
        assert_eq!(base_name(None), DEFAULT_NAME);
        assert_eq!(base_name(Some("")), DEFAULT_NAME);
        assert_eq!(base_name(Some("/")), DEFAULT_NAME);
    }

    #[test]
    fn a_plan_is_titled_by_its_first_line() {
        assert_eq!(title("\n# Tax in totals\n\n1. Add it\n"), "Tax in totals");
        assert_eq!(title(&"x".repeat(150)).chars().count(), 101);
    }

    #[test]
    fn comments_on_several_lines_say_which() {
        assert_eq!(spanned("(lines 3-5) Keep it"), Some((3, 5, "Keep it")));
        assert_eq!(spanned("Keep it"), None);
    }
}
