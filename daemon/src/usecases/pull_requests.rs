//! Pull requests on GitHub: a workspace linked to its pull request (found
//! with `gh` or given), and pulled: the pull request's review threads come
//! in as Parley threads on the same lines (both sides, ranges, replies in
//! order, resolution, outdated ones by their original lines), the same
//! thread each time, with its conversation kept for `parley pr status`.
//! Pushed, the threads made here go to GitHub as one review, with replies
//! and resolutions, each GitHub id kept on its thread so nothing goes twice.
//! A sync runs one at a time; what it cannot do it says, and the next one
//! finishes the job. `schedule` pulls on its own while someone works in a
//! linked workspace.

mod placing;
pub mod pushing;
mod round_review;
pub mod schedule;
mod sending;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::{Position, Range};

use super::Context;
use super::feedback::{NewThread, SyncedThread};
use crate::feedback::{Comment, GithubMark, SyncedComment, Thread};
use crate::github::api::{API_ROOT_VARIABLE, DEFAULT_API_ROOT, web_host_of};
use crate::github::linked::{
    ConversationComment, LeftOpenThread, LinkedPullRequest, PullSummary, PushSummary, PushedRound, UnplacedThread,
};
use crate::github::pull_plan::{self, PullStep, Synced};
use crate::github::review::{self, ReviewEvent};
use crate::github::{Api, GithubError, PullRequestRef, RemotePullRequest, RemoteThread, Token, auth, link};
use crate::state::ThreadEdit;
use pushing::{PushOutcome, PushPlan};

/// What syncing keeps between calls: one sync at a time, and the tokens
/// commands handed over (in memory only).
#[derive(Debug, Default, Clone)]
pub struct Syncing {
    running: Arc<tokio::sync::Mutex<()>>,
    tokens: Arc<std::sync::Mutex<HashMap<PathBuf, Token>>>,
}

/// Why a pull-request command could not be done, each saying what to do.
#[derive(Debug, thiserror::Error)]
pub enum PullRequestError {
    #[error("{0}")]
    Invalid(String),
    #[error(
        "{0} is not linked to a pull request: run `parley pr link` in it (with `gh` logged in), or `parley pr link OWNER/REPO#NUMBER`"
    )]
    NotLinked(String),
    #[error("{0}")]
    NoToken(String),
    #[error(transparent)]
    Github(#[from] GithubError),
    #[error("the store failed: {0}")]
    Store(String),
}

/// The workspace holding `dir`: its git repository's root.
fn workspace_of(dir: &Path) -> PathBuf {
    crate::workspace::root_of(dir)
}

/// Links the workspace holding `dir` to a pull request: `given`
/// (`OWNER/REPO#N` or its URL), or the one `gh pr view` finds for the
/// branch. `api` is the API root the asking command names.
pub async fn link(
    cx: &Context,
    dir: &Path,
    given: Option<&str>,
    api: Option<&str>,
) -> Result<LinkedPullRequest, PullRequestError> {
    let workspace = workspace_of(dir);
    let api_root = api
        .map(str::to_owned)
        .or_else(|| std::env::var(API_ROOT_VARIABLE).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| DEFAULT_API_ROOT.to_owned());
    let (pull_request, url, found_by, head_oid) = match given {
        Some(given) => {
            let pull_request: PullRequestRef = given.parse().map_err(PullRequestError::Invalid)?;
            let host = web_host_of(&api_root);
            let url =
                format!("https://{host}/{}/{}/pull/{}", pull_request.owner, pull_request.repo, pull_request.number);
            (pull_request, url, "given", None)
        }
        None => {
            let found = link::find_with_gh(&workspace).await.map_err(|why| {
                PullRequestError::Invalid(format!(
                    "cannot find this branch's pull request: {why}; give it as `parley pr link OWNER/REPO#NUMBER`"
                ))
            })?;
            (found.pull_request, found.url, "gh", Some(found.head_oid))
        }
    };
    let earlier = find_linked(cx, &workspace).await?;
    let same = earlier.as_ref().filter(|e| e.pull_request == pull_request);
    let linked = LinkedPullRequest {
        workspace: workspace.clone(),
        pull_request: pull_request.clone(),
        url,
        api_root,
        found_by: found_by.into(),
        linked_at: crate::clock::now_rfc3339(),
        state: None,
        head_oid,
        // Linked again to the same pull request: what was synced stays.
        last_pull: same.and_then(|e| e.last_pull.clone()),
        last_error: None,
        conversation: Vec::new(),
        unplaced: Vec::new(),
        placed_by_line: Vec::new(),
        conflicts: Vec::new(),
        left_open: Vec::new(),
        last_push: same.and_then(|e| e.last_push.clone()),
        pending_review: same.and_then(|e| e.pending_review.clone()),
        pushed_rounds: same.map(|e| e.pushed_rounds.clone()).unwrap_or_default(),
    };
    cx.store.put_linked_pull_request(&linked).await.map_err(|e| PullRequestError::Store(e.to_string()))?;
    Ok(linked)
}

/// The link of the workspace holding `dir`, if it has one.
pub async fn status(cx: &Context, dir: &Path) -> Result<Option<LinkedPullRequest>, PullRequestError> {
    find_linked(cx, &workspace_of(dir)).await
}

async fn find_linked(cx: &Context, workspace: &Path) -> Result<Option<LinkedPullRequest>, PullRequestError> {
    Ok(all_linked(cx).await?.into_iter().find(|l| l.workspace == workspace))
}

/// Every workspace's link.
async fn all_linked(cx: &Context) -> Result<Vec<LinkedPullRequest>, PullRequestError> {
    let store = cx.store.clone();
    tokio::task::spawn_blocking(move || store.linked_pull_requests())
        .await
        .map_err(|e| PullRequestError::Store(e.to_string()))?
        .map_err(|e| PullRequestError::Store(e.to_string()))
}

/// Pulls the pull request linked to the workspace holding `dir` into
/// Parley's threads. `asker_token` is the asking command's `GITHUB_TOKEN`,
/// used when neither `gh` nor the daemon's environment gives one.
pub async fn pull(
    cx: &Context,
    dir: &Path,
    asker_token: Option<String>,
) -> Result<(LinkedPullRequest, PullSummary), PullRequestError> {
    let workspace = workspace_of(dir);
    let _one_at_a_time = cx.github.running.lock().await;
    let mut linked = find_linked(cx, &workspace)
        .await?
        .ok_or_else(|| PullRequestError::NotLinked(workspace.display().to_string()))?;
    let outcome = pull_linked(cx, &mut linked, asker_token).await;
    if let Err(e) = &outcome {
        linked.last_error = Some(e.to_string());
    }
    cx.store.put_linked_pull_request(&linked).await.map_err(|e| PullRequestError::Store(e.to_string()))?;
    outcome.map(|summary| (linked, summary))
}

/// Pushes what this workspace holds and the linked pull request does not:
/// new threads as one review (left pending, or submitted with `event`),
/// replies, resolutions. `dry_run` sends nothing and says what would go.
pub async fn push(
    cx: &Context,
    dir: &Path,
    asker_token: Option<String>,
    dry_run: bool,
    event: Option<ReviewEvent>,
) -> Result<(LinkedPullRequest, PushOutcome), PullRequestError> {
    let workspace = workspace_of(dir);
    let _one_at_a_time = cx.github.running.lock().await;
    let mut linked = find_linked(cx, &workspace)
        .await?
        .ok_or_else(|| PullRequestError::NotLinked(workspace.display().to_string()))?;
    let outcome = push_linked(cx, &mut linked, asker_token, dry_run, event).await;
    match &outcome {
        Err(e) => linked.last_error = Some(e.to_string()),
        Ok(_) => linked.last_error = None,
    }
    cx.store.put_linked_pull_request(&linked).await.map_err(|e| PullRequestError::Store(e.to_string()))?;
    outcome.map(|pushed| (linked, pushed))
}

/// One call to GitHub, off the async threads.
async fn on_github<T: Send + 'static>(
    api: &Api,
    call: impl FnOnce(&Api) -> Result<T, GithubError> + Send + 'static,
) -> Result<T, PullRequestError> {
    let api = api.clone();
    tokio::task::spawn_blocking(move || call(&api))
        .await
        .map_err(|e| PullRequestError::Store(format!("internal error: {e}")))?
        .map_err(PullRequestError::from)
}

/// Keeps what GitHub now has of a thread on it, at once: a push after a
/// failure then skips it.
async fn record(cx: &Context, thread: &str, mark: &GithubMark) -> Result<(), PullRequestError> {
    let edit = ThreadEdit::Github { comments: Vec::new(), resolved: None, mark: Box::new(mark.clone()) };
    cx.state.edit_thread(thread.to_owned(), edit).await.map(|_| ()).map_err(|e| {
        PullRequestError::Store(format!(
            "GitHub has the thread, but its id could not be kept here ({e}); check the pull request before pushing again"
        ))
    })
}

/// What a push starts from: the pull request as GitHub has it now, this
/// workspace's threads, and the texts their lines are carried across.
async fn push_start(
    cx: &Context,
    linked: &mut LinkedPullRequest,
    asker_token: Option<String>,
) -> Result<(Api, RemotePullRequest, Vec<Thread>, pushing::Texts), PullRequestError> {
    let token = token_for(cx, linked, asker_token).await?;
    let api = Api::new(&linked.api_root, token);
    let pull_request = linked.pull_request.clone();
    let remote = on_github(&api, move |api| crate::github::remote::fetch(api, &pull_request)).await?;
    linked.state = Some(remote.state.clone());
    linked.head_oid = Some(remote.head_oid.clone());
    let threads = super::feedback::list(cx, &linked.workspace, None, true)
        .await
        .map_err(|e| PullRequestError::Store(e.to_string()))?;
    let paths: Vec<String> = threads.iter().map(|t| t.path.clone()).collect();
    let (root, head) = (linked.workspace.clone(), remote.head_oid.clone());
    let texts = tokio::task::spawn_blocking(move || pushing::read_texts(&root, &head, &paths))
        .await
        .map_err(|e| PullRequestError::Store(format!("internal error: {e}")))?;
    Ok((api, remote, threads, texts))
}

async fn push_linked(
    cx: &Context,
    linked: &mut LinkedPullRequest,
    asker_token: Option<String>,
    dry_run: bool,
    event: Option<ReviewEvent>,
) -> Result<PushOutcome, PullRequestError> {
    let (api, remote, threads, texts) = push_start(cx, linked, asker_token).await?;
    let name = linked.pull_request.to_string();
    let ours: Vec<&Thread> = threads.iter().collect();
    let (agents_may_resolve, note) = agents_may_resolve(&linked.workspace).await;
    let plan = pushing::plan(&name, &remote, &ours, &texts, agents_may_resolve);
    let mut outcome = PushOutcome {
        at: crate::clock::now_rfc3339(),
        dry_run,
        plan,
        event: None,
        settings_note: note,
        ..Default::default()
    };
    if dry_run {
        outcome.event = event;
        return Ok(outcome);
    }
    linked.left_open = outcome
        .plan
        .left_open
        .iter()
        .map(|l| LeftOpenThread { path: l.path.clone(), url: l.url.clone(), agent: l.agent.clone() })
        .collect();
    let plan: PushPlan = outcome.plan.clone();
    let mut sender = sending::Sender::new(cx, api, remote, name, &threads);
    let mut review_id: Option<String> = None;
    if !plan.threads.is_empty() {
        let id = sender.review(linked).await?;
        outcome.adopted = sender.add_threads(linked, &id, &plan.threads).await?;
        set_aside_refused(&mut outcome.plan, &sender.refused, &threads);
        review_id = Some(id);
    }
    sender.replies(linked, &plan.replies).await?;
    sender.resolutions(&plan.resolutions).await?;
    match event {
        Some(event) => {
            // An approval needs no comments; a comment or a request for
            // changes without any has nothing to say.
            let review_id = match review_id {
                Some(id) => Some(id),
                None => sender.review_to_submit(linked, event, false).await?,
            };
            if let Some(review_id) = review_id {
                let url = sender.submit(linked, review_id, event, None).await?;
                outcome.event = Some(event);
                outcome.review = Some("submitted");
                outcome.review_url = (!url.is_empty()).then_some(url);
            }
        }
        None if review_id.is_some() => outcome.review = Some("pending"),
        None => {}
    }
    linked.last_push = Some(summary_of_push(&outcome));
    Ok(outcome)
}

/// Whether the person lets agents resolve synced threads on GitHub (their
/// own config's `pull_requests.agents_may_resolve`), and what to tell them
/// when the repository's config tried to set it or a config is broken.
async fn agents_may_resolve(workspace: &Path) -> (bool, Option<String>) {
    const KEY: &str = "pull_requests.agents_may_resolve";
    let root = workspace.to_owned();
    match tokio::task::spawn_blocking(move || crate::config::review_settings(&root)).await {
        Ok(Ok(settings)) => {
            let refused = settings.repo_config.as_ref().filter(|repo| repo.ignored.contains(&KEY)).map(|repo| {
                format!(
                    "Parley ignored {KEY} of {}: only your own config ({}) may let agents resolve threads on GitHub",
                    repo.path.display(),
                    crate::config::user_config_file().map_or_else(|| "config.toml".into(), |f| f.display().to_string())
                )
            });
            (settings.agents_may_resolve, refused)
        }
        Ok(Err(e)) => (false, Some(format!("{e}: agents' resolutions stay here until it is fixed"))),
        Err(e) => (false, Some(format!("the settings could not be read ({e}): agents' resolutions stay here"))),
    }
}

/// Moves the threads GitHub would not take out of what was sent, into what
/// was not, with GitHub's reason.
fn set_aside_refused(plan: &mut PushPlan, refused: &[(String, String)], threads: &[Thread]) {
    for (id, reason) in refused {
        let Some(at) = plan.threads.iter().position(|t| &t.parley_thread == id) else { continue };
        let new = plan.threads.remove(at);
        let line = threads.iter().find(|t| &t.id == id).map_or(new.draft.start_line, |t| t.span.start_line + 1);
        plan.not_sent.push(pushing::NotSent { path: new.draft.path, line, reason: reason.clone() });
    }
}

/// What `pr status` keeps of a push.
fn summary_of_push(outcome: &PushOutcome) -> PushSummary {
    let plan = &outcome.plan;
    PushSummary {
        at: outcome.at.clone(),
        threads: plan.threads.len(),
        replies: plan.replies.len() + plan.threads.iter().map(|t| t.later.len()).sum::<usize>(),
        resolutions: plan.resolutions.len(),
        not_sent: plan.not_sent.len(),
        review: outcome.review.map(str::to_owned),
        event: outcome.event.map(|e| e.name().to_owned()),
        round: outcome.round.as_ref().map(|(id, round)| format!("{id} round {round}")),
    }
}

/// Pushes round `round` (the last without it) of the review session
/// `review` as a review of the linked pull request: its findings' threads
/// on their lines, the summary and what cannot be placed as the body,
/// submitted with `event` or the person's verdict. Once per round.
pub async fn push_round(
    cx: &Context,
    dir: &Path,
    asker_token: Option<String>,
    review: &str,
    round: Option<u32>,
    event: Option<ReviewEvent>,
    dry_run: bool,
) -> Result<(LinkedPullRequest, PushOutcome), PullRequestError> {
    let workspace = workspace_of(dir);
    let session = super::rounds::get(cx, review, Some(&workspace)).await.map_err(|e| match e {
        super::rounds::RoundError::Store(e) => PullRequestError::Store(e),
        other => PullRequestError::Invalid(other.to_string()),
    })?;
    let number = round.unwrap_or(session.rounds.len() as u32);
    let Some(round) = session.rounds.iter().find(|r| r.round == number).cloned() else {
        return Err(PullRequestError::Invalid(match session.rounds.len() {
            0 => format!("review {} has no answered round yet: push it once it is answered", session.id),
            n => format!("review {} has rounds 1 to {n}, not {number}", session.id),
        }));
    };
    if session.workspace != workspace {
        return Err(PullRequestError::Invalid(format!(
            "review {} is of {}, not of {}: run the push there",
            session.id,
            session.workspace.display(),
            workspace.display()
        )));
    }
    let _one_at_a_time = cx.github.running.lock().await;
    let mut linked = find_linked(cx, &workspace)
        .await?
        .ok_or_else(|| PullRequestError::NotLinked(workspace.display().to_string()))?;
    if let Some(done) = linked.pushed_rounds.iter().find(|p| p.review_id == session.id && p.round == round.round) {
        return Err(PullRequestError::Invalid(format!(
            "round {} of review {} was already pushed to {} at {} ({}{}): nothing was sent again",
            done.round,
            done.review_id,
            linked.pull_request,
            done.at,
            done.event,
            if done.url.is_empty() { String::new() } else { format!(", {}", done.url) }
        )));
    }
    let outcome = push_round_linked(cx, &mut linked, asker_token, &session, &round, event, dry_run).await;
    match &outcome {
        Err(e) => linked.last_error = Some(e.to_string()),
        Ok(_) => linked.last_error = None,
    }
    cx.store.put_linked_pull_request(&linked).await.map_err(|e| PullRequestError::Store(e.to_string()))?;
    outcome.map(|pushed| (linked, pushed))
}

async fn push_round_linked(
    cx: &Context,
    linked: &mut LinkedPullRequest,
    asker_token: Option<String>,
    session: &crate::sessions::Session,
    round: &crate::sessions::Round,
    event: Option<ReviewEvent>,
    dry_run: bool,
) -> Result<PushOutcome, PullRequestError> {
    let (api, remote, threads, texts) = push_start(cx, linked, asker_token).await?;
    // Submitted by a push whose answer never came back: kept as pushed.
    let (pr, marker) = (linked.pull_request.clone(), round_review::marker(&session.id, round.round));
    if let Some((event, url)) = on_github(&api, move |api| review::submitted_with(api, &pr, &marker)).await? {
        linked.pushed_rounds.push(PushedRound {
            review_id: session.id.clone(),
            round: round.round,
            at: crate::clock::now_rfc3339(),
            event: event.to_owned(),
            url: url.clone(),
        });
        return Err(PullRequestError::Invalid(format!(
            "round {} of review {} is already on {} ({event}, {url}), from a push whose answer was lost: kept as pushed, nothing was sent again",
            round.round, session.id, linked.pull_request
        )));
    }
    let event = event.unwrap_or_else(|| round_review::default_event(round));
    let ours: Vec<&Thread> = threads.iter().collect();
    let planned = round_review::plan(session, round, &ours, &texts);
    let plan =
        PushPlan { threads: planned.threads.clone(), not_sent: planned.not_placed.clone(), ..PushPlan::default() };
    let mut outcome = PushOutcome {
        at: crate::clock::now_rfc3339(),
        dry_run,
        plan,
        event: Some(event),
        round: Some((session.id.clone(), round.round)),
        body: Some(planned.body.clone()),
        already_on_github: planned.already,
        ..Default::default()
    };
    if dry_run {
        return Ok(outcome);
    }
    let mut sender = sending::Sender::new(cx, api, remote, linked.pull_request.to_string(), &threads);
    let review_id = sender.review(linked).await?;
    outcome.adopted = sender.add_threads(linked, &review_id, &planned.threads).await?;
    if !sender.refused.is_empty() {
        // What GitHub would not take on a line goes in the body instead.
        set_aside_refused(&mut outcome.plan, &sender.refused, &threads);
        outcome.body = Some(round_review::body(session, round, &ours, &outcome.plan.not_sent));
    }
    let body = outcome.body.clone().unwrap_or_default();
    let url = sender.submit(linked, review_id, event, Some(body)).await?;
    outcome.review = Some("submitted");
    outcome.review_url = (!url.is_empty()).then_some(url.clone());
    linked.pushed_rounds.push(PushedRound {
        review_id: session.id.clone(),
        round: round.round,
        at: outcome.at.clone(),
        event: event.name().to_owned(),
        url,
    });
    linked.last_push = Some(summary_of_push(&outcome));
    Ok(outcome)
}

/// What waits to be pushed, counted without asking GitHub: open threads
/// made here, comments made here on synced threads, resolutions changed here
/// (an agent's only when `agents_may_resolve`: else it stays open on GitHub).
pub fn waiting(linked: &LinkedPullRequest, threads: &[Thread], agents_may_resolve: bool) -> PushWaiting {
    let name = linked.pull_request.to_string();
    let mut waiting = PushWaiting::default();
    for thread in threads {
        match thread.standing.github.as_deref() {
            None if !thread.resolved && thread.standing.walkthrough.is_none() && !thread.comments.is_empty() => {
                waiting.threads += 1;
                waiting.replies += thread.comments.len() - 1;
            }
            Some(mark) if mark.pull_request == name && !mark.thread_id.is_empty() => {
                waiting.replies +=
                    thread.comments.iter().filter(|c| !mark.comments.iter().any(|s| s.parley == c.id)).count();
                let by_agent = thread.resolved && thread.standing.resolved.as_deref().is_some_and(|m| m.agent);
                if thread.resolved != mark.resolved_at_sync && (agents_may_resolve || !by_agent) {
                    waiting.resolutions += 1;
                }
            }
            _ => {}
        }
    }
    waiting
}

/// Counts of what waits to be pushed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushWaiting {
    pub threads: usize,
    pub replies: usize,
    pub resolutions: usize,
}

/// The link of the workspace holding `dir` with what waits to be pushed.
pub async fn status_with_waiting(
    cx: &Context,
    dir: &Path,
) -> Result<Option<(LinkedPullRequest, PushWaiting)>, PullRequestError> {
    let Some(linked) = status(cx, dir).await? else { return Ok(None) };
    let threads = super::feedback::list(cx, &linked.workspace, None, true)
        .await
        .map_err(|e| PullRequestError::Store(e.to_string()))?;
    let (agents_may_resolve, _) = agents_may_resolve(&linked.workspace).await;
    let waiting = waiting(&linked, &threads, agents_may_resolve);
    Ok(Some((linked, waiting)))
}

async fn token_for(cx: &Context, linked: &LinkedPullRequest, asker: Option<String>) -> Result<Token, PullRequestError> {
    let remembered = {
        let mut tokens = cx.github.tokens.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(token) = asker.as_deref().and_then(Token::new) {
            tokens.insert(linked.workspace.clone(), token);
        }
        tokens.get(&linked.workspace).cloned()
    };
    let host = web_host_of(&linked.api_root);
    match auth::find_token(&host, None).await {
        Ok((token, _)) => Ok(token),
        Err(why) => remembered.ok_or(PullRequestError::NoToken(why)),
    }
}

async fn pull_linked(
    cx: &Context,
    linked: &mut LinkedPullRequest,
    asker_token: Option<String>,
) -> Result<PullSummary, PullRequestError> {
    let token = token_for(cx, linked, asker_token).await?;
    let api = Api::new(&linked.api_root, token);
    let pull_request = linked.pull_request.clone();
    let remote = tokio::task::spawn_blocking(move || crate::github::remote::fetch(&api, &pull_request))
        .await
        .map_err(|e| PullRequestError::Store(format!("internal error: {e}")))??;
    let threads = super::feedback::list(cx, &linked.workspace, None, true)
        .await
        .map_err(|e| PullRequestError::Store(e.to_string()))?;
    let name = linked.pull_request.to_string();
    let ours: Vec<&Thread> =
        threads.iter().filter(|t| t.standing.github.as_ref().is_some_and(|g| g.pull_request == name)).collect();
    let synced: Vec<Synced> = ours.iter().filter_map(|t| synced_of(t)).collect();
    let by_id: HashMap<&str, &Thread> = ours.iter().map(|t| (t.id.as_str(), *t)).collect();
    let remote_by_id: HashMap<&str, &RemoteThread> = remote.threads.iter().map(|t| (t.id.as_str(), t)).collect();
    let now = crate::clock::now_rfc3339();
    let mut summary = PullSummary { at: now.clone(), ..PullSummary::default() };
    let mut unplaced = Vec::new();
    let mut placed_by_line = Vec::new();
    let mut commits = CommitTexts::new();
    let mut conflicts = Vec::new();
    // Every change to one thread goes in one edit.
    let mut edits: HashMap<String, (Vec<Comment>, Option<bool>)> = HashMap::new();
    let steps = pull_plan::plan(&remote, &synced);
    let mut sent_unanswered = if steps.iter().any(|s| matches!(s, PullStep::New(_))) {
        unanswered_pushes(linked, &remote, &threads).await
    } else {
        Vec::new()
    };
    for step in steps {
        if let PullStep::New(thread) = &step
            && let Some(at) = sent_unanswered.iter().position(|n| pushing::is_made_from(&n.draft, thread))
        {
            let new = sent_unanswered.swap_remove(at);
            tie_to_github(cx, linked, &new, thread, &now).await?;
            summary.tied += 1;
            continue;
        }
        match step {
            PullStep::New(thread) => match place_new(cx, linked, &remote, &thread, &now, &mut commits).await {
                Ok(placed) => {
                    summary.new_threads += 1;
                    if placed.text_gone {
                        placed_by_line.push(UnplacedThread {
                            path: thread.path.clone(),
                            line: Some(placed.start + 1),
                            url: thread.comments.first().map(|c| c.url.clone()).unwrap_or_default(),
                            reason: "its text is no longer in the file: placed on the line that stands where it was, outdated".into(),
                        });
                    }
                }
                Err(reason) => unplaced.push(UnplacedThread {
                    path: thread.path.clone(),
                    line: thread.line.or(thread.original_line),
                    url: thread.comments.first().map(|c| c.url.clone()).unwrap_or_default(),
                    reason,
                }),
            },
            PullStep::Replies { parley_thread, comments } => {
                summary.replies += comments.len();
                edits.entry(parley_thread).or_default().0.extend(comments.iter().map(comment_of));
            }
            PullStep::Resolution { parley_thread, resolved } => {
                if resolved {
                    summary.resolved += 1
                } else {
                    summary.reopened += 1
                }
                edits.entry(parley_thread).or_default().1 = Some(resolved);
            }
            PullStep::ResolutionConflict { parley_thread, github_resolved } => {
                let path = by_id.get(parley_thread.as_str()).map_or("", |t| t.path.as_str());
                conflicts.push(format!(
                    "a thread on {path} was {} on GitHub and {} here since the last sync: GitHub's, seen later, is kept",
                    if github_resolved { "resolved" } else { "reopened" },
                    if github_resolved { "reopened" } else { "resolved" },
                ));
                if github_resolved {
                    summary.resolved += 1
                } else {
                    summary.reopened += 1
                }
                edits.entry(parley_thread).or_default().1 = Some(github_resolved);
            }
            PullStep::Outdated { parley_thread, .. } => {
                summary.outdated += 1;
                edits.entry(parley_thread).or_default();
            }
            PullStep::Gone { parley_thread } => {
                summary.gone += 1;
                edits.entry(parley_thread).or_default();
            }
        }
    }
    for (id, (comments, resolved)) in edits {
        let Some(thread) = by_id.get(id.as_str()) else { continue };
        let Some(mark) = thread.standing.github.as_deref() else { continue };
        let mut mark = mark.clone();
        match remote_by_id.get(mark.thread_id.as_str()) {
            Some(there) => {
                mark.github_resolved = there.is_resolved;
                mark.outdated = there.is_outdated;
                let known: Vec<&str> = mark.comments.iter().map(|c| c.github.as_str()).collect();
                let new_ids: Vec<String> =
                    there.comments.iter().filter(|c| !known.contains(&c.id.as_str())).map(|c| c.id.clone()).collect();
                mark.comments.extend(
                    comments.iter().zip(new_ids).map(|(c, github)| SyncedComment { parley: c.id.clone(), github }),
                );
            }
            // Deleted on GitHub: kept here, no longer tied to it.
            None => mark.thread_id.clear(),
        }
        mark.resolved_at_sync = resolved.unwrap_or(thread.resolved);
        mark.synced_at = now.clone();
        let edit = ThreadEdit::Github { comments, resolved, mark: Box::new(mark) };
        if let Err(e) = cx.state.edit_thread(id.clone(), edit).await {
            tracing::warn!("a pulled change to thread {id} could not be made: {e}");
        }
    }
    linked.state = Some(remote.state.clone());
    linked.head_oid = Some(remote.head_oid.clone());
    linked.url = remote.url.clone();
    linked.conversation = remote
        .conversation
        .iter()
        .map(|c| ConversationComment {
            author: c.author.clone(),
            body: c.body.clone(),
            created_at: c.created_at.clone(),
            url: c.url.clone(),
        })
        .collect();
    linked.unplaced = unplaced;
    linked.placed_by_line = placed_by_line;
    linked.conflicts = conflicts;
    linked.last_error = None;
    linked.last_pull = Some(summary.clone());
    Ok(summary)
}

/// What a Parley thread remembers of its GitHub thread, for the plan.
fn synced_of(thread: &Thread) -> Option<Synced> {
    let mark = thread.standing.github.as_deref()?;
    (!mark.thread_id.is_empty()).then(|| Synced {
        parley_thread: thread.id.clone(),
        github_thread: mark.thread_id.clone(),
        known_comments: mark.comments.iter().map(|c| c.github.clone()).collect(),
        github_resolved: mark.github_resolved,
        github_outdated: mark.outdated,
        resolved_here: thread.resolved,
        resolved_here_at_sync: mark.resolved_at_sync,
    })
}

fn comment_of(remote: &crate::github::RemoteComment) -> Comment {
    Comment {
        id: crate::feedback::new_id(),
        body: if remote.body.trim().is_empty() { "(no text)".into() } else { remote.body.clone() },
        author: remote.author.clone(),
        created_at: remote.created_at.clone(),
    }
}

/// The review threads pushes would make of this workspace's threads not
/// tied to GitHub yet: one GitHub already has was sent by a push whose
/// answer was lost (a crash between GitHub's answer and the id kept here).
async fn unanswered_pushes(
    linked: &LinkedPullRequest,
    remote: &RemotePullRequest,
    threads: &[Thread],
) -> Vec<pushing::NewThread> {
    let unsynced: Vec<&Thread> = threads.iter().filter(|t| t.standing.github.is_none()).collect();
    if unsynced.is_empty() {
        return Vec::new();
    }
    let paths: Vec<String> = unsynced.iter().map(|t| t.path.clone()).collect();
    let (root, head) = (linked.workspace.clone(), remote.head_oid.clone());
    let Ok(texts) = tokio::task::spawn_blocking(move || pushing::read_texts(&root, &head, &paths)).await else {
        return Vec::new();
    };
    pushing::plan(&linked.pull_request.to_string(), remote, &unsynced, &texts, false).threads
}

/// Ties the thread made here that `new` stands for to GitHub's `there`, with
/// the comments GitHub has of it in order; the rest go at the next push.
async fn tie_to_github(
    cx: &Context,
    linked: &mut LinkedPullRequest,
    new: &pushing::NewThread,
    there: &RemoteThread,
    now: &str,
) -> Result<(), PullRequestError> {
    let first = there.comments.first().map(|c| (c.id.clone(), c.url.clone())).unwrap_or_default();
    let added = crate::github::review::AddedThread { thread_id: there.id.clone(), comment_id: first.0, url: first.1 };
    let mut mark = pushing::mark_of_new(&linked.pull_request.to_string(), new, &added, now);
    mark.github_resolved = there.is_resolved;
    mark.outdated = there.is_outdated;
    let mut theirs = there.comments.iter().skip(1).peekable();
    for comment in &new.later {
        match theirs.peek() {
            Some(c) if c.body == comment.body => {
                mark.comments.push(SyncedComment { parley: comment.id.clone(), github: c.id.clone() });
                theirs.next();
            }
            _ => break,
        }
    }
    if let Some(pending) = linked.pending_review.as_mut()
        && !pending.threads.contains(&there.id)
    {
        pending.threads.push(there.id.clone());
    }
    record(cx, &new.parley_thread, &mark).await
}

/// Files as they were at a commit (`git cat-file`), each read once a pull:
/// a pull request's threads are many on few files.
type CommitTexts = HashMap<(String, String), Option<String>>;

/// Makes a Parley thread of a review thread Parley does not have yet, and
/// says where it went; why not, when its file is not here.
async fn place_new(
    cx: &Context,
    linked: &LinkedPullRequest,
    remote: &RemotePullRequest,
    thread: &RemoteThread,
    now: &str,
    commits: &mut CommitTexts,
) -> Result<placing::Placed, String> {
    let workspace = &linked.workspace;
    let Some(file) = crate::reviews::join_inside(workspace, Path::new(&thread.path)) else {
        return Err(format!("{} is outside the workspace", thread.path));
    };
    let current = match tokio::fs::read(&file).await {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", thread.path))?,
        Err(_) => return Err(format!("{} is not in this checkout (check out the pull request's branch)", thread.path)),
    };
    let current = crate::line_endings::into_lf(current);
    let (github_start, github_end) = if thread.is_outdated {
        (thread.original_start_line.or(thread.original_line), thread.original_line)
    } else {
        (thread.start_line.or(thread.line), thread.line)
    };
    let Some(github_end) = github_end.or(thread.original_line) else {
        return Err("GitHub gives the thread no line (a comment on the whole file)".into());
    };
    let github_start = github_start.unwrap_or(github_end).min(github_end);
    // The text the lines are of: the base's for the left side, the commit
    // the thread was made on once outdated, else the head's.
    let commit = match (thread.diff_side, thread.is_outdated) {
        (crate::github::DiffSide::Left, _) => Some(remote.base_oid.clone()),
        (_, true) => thread.comments.first().and_then(|c| c.original_commit.clone()),
        _ => Some(remote.head_oid.clone()),
    };
    let then = match commit {
        Some(commit) => {
            let key = (commit, thread.path.clone());
            match commits.get(&key) {
                Some(known) => known.clone(),
                None => {
                    let (root, (commit, path)) = (workspace.clone(), key.clone());
                    let read = tokio::task::spawn_blocking(move || crate::git::file_at(&root, &commit, &path))
                        .await
                        .ok()
                        .flatten();
                    commits.insert(key, read.clone());
                    read
                }
            }
        }
        None => None,
    };
    let hunk = thread.comments.first().and_then(|c| c.diff_hunk.as_deref());
    let github = placing::OnGithub {
        then: then.as_deref(),
        hunk,
        side: thread.diff_side,
        start: github_start - 1,
        end: github_end - 1,
    };
    let placed = placing::place(github, &current);
    let (start, end) = (placed.start, placed.end);
    let comments: Vec<Comment> = thread.comments.iter().map(comment_of).collect();
    let mark = GithubMark {
        pull_request: linked.pull_request.to_string(),
        thread_id: thread.id.clone(),
        url: thread.comments.first().map(|c| c.url.clone()).unwrap_or_default(),
        side: match thread.diff_side {
            crate::github::DiffSide::Left => "LEFT".into(),
            crate::github::DiffSide::Right => "RIGHT".into(),
        },
        start_line: github_start,
        end_line: github_end,
        outdated: thread.is_outdated,
        text_gone: placed.text_gone,
        comments: comments
            .iter()
            .zip(&thread.comments)
            .map(|(ours, theirs)| SyncedComment { parley: ours.id.clone(), github: theirs.id.clone() })
            .collect(),
        github_resolved: thread.is_resolved,
        resolved_at_sync: thread.is_resolved,
        synced_at: now.to_owned(),
        agent_comments: Vec::new(),
    };
    let first = comments.first().cloned().ok_or("the thread has no comment")?;
    let new = NewThread {
        file: file.clone(),
        workspace: Some(workspace.clone()),
        range: Range {
            start: Position { line: start, character: 0 },
            end: Position { line: end, character: u32::MAX },
        },
        encoding: PositionEncoding::Utf8,
        expected_text: None,
        body: first.body,
        author: first.author,
        finding: None,
        ask: None,
        opened_by: None,
        walkthrough: None,
        synced: Some(Box::new(SyncedThread { comments, resolved: thread.is_resolved, mark })),
    };
    super::feedback::create(cx, new).await.map(|_| placed).map_err(|e| format!("it could not be made here: {e}"))
}
