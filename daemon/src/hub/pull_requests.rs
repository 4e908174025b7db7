//! The hub methods of pull requests: `pr/link`, `pr/status`, `pr/pull` and
//! `pr/push`.

use std::path::Path;

use parley_protocol::jsonrpc::{ErrorObject, code};
use parley_protocol::methods as wire;

use super::{Peer, errors};
use crate::github::GithubError;
use crate::github::linked::{LinkedPullRequest, PullSummary};
use crate::github::review::ReviewEvent;
use crate::usecases::pull_requests::pushing::PushOutcome;
use crate::usecases::pull_requests::{self, PullRequestError};

impl From<PullRequestError> for ErrorObject {
    fn from(error: PullRequestError) -> Self {
        let code = match &error {
            PullRequestError::Invalid(_) | PullRequestError::NoToken(_) => code::INVALID_PARAMS,
            PullRequestError::NotLinked(_) => code::NOT_FOUND,
            PullRequestError::Github(GithubError::NotFound(_)) => code::NOT_FOUND,
            PullRequestError::Github(_) => code::GITHUB_FAILED,
            PullRequestError::Store(_) => code::STORE_FAILED,
        };
        ErrorObject::new(code, error.to_string())
    }
}

pub async fn link(peer: &Peer<'_>, p: wire::PrLinkParams) -> Result<wire::PrStatusResult, ErrorObject> {
    let dir = absolute(&p.workspace)?;
    let linked = pull_requests::link(peer.cx, dir, p.pull_request.as_deref(), p.api.as_deref()).await?;
    Ok(result(linked.workspace.clone(), Some(&linked), None))
}

pub async fn status(peer: &Peer<'_>, p: wire::PrStatusParams) -> Result<wire::PrStatusResult, ErrorObject> {
    let dir = absolute(&p.workspace)?;
    let linked = pull_requests::status_with_waiting(peer.cx, dir).await?;
    let workspace = linked.as_ref().map_or_else(|| crate::workspace::root_of(dir), |l| l.0.workspace.clone());
    let mut result = result(workspace, linked.as_ref().map(|l| &l.0), None);
    if let (Some(view), Some((_, waiting))) = (result.linked.as_mut(), linked) {
        view.waiting = Some(wire::PrWaiting {
            threads: waiting.threads,
            replies: waiting.replies,
            resolutions: waiting.resolutions,
        });
    }
    Ok(result)
}

pub async fn pull(peer: &Peer<'_>, p: wire::PrPullParams) -> Result<wire::PrStatusResult, ErrorObject> {
    let dir = absolute(&p.workspace)?;
    let (linked, pulled) = pull_requests::pull(peer.cx, dir, p.token).await?;
    Ok(result(linked.workspace.clone(), Some(&linked), Some(&pulled)))
}

pub async fn push(peer: &Peer<'_>, p: wire::PrPushParams) -> Result<wire::PrStatusResult, ErrorObject> {
    let dir = absolute(&p.workspace)?;
    let event = p.event.as_deref().map(ReviewEvent::parse).transpose().map_err(errors::invalid)?;
    let (linked, pushed) = match p.review_id.as_deref() {
        Some(review) => pull_requests::push_round(peer.cx, dir, p.token, review, p.round, event, p.dry_run).await?,
        None if p.round.is_some() => {
            return Err(errors::invalid("round needs review_id: the review session whose round to push"));
        }
        None => pull_requests::push(peer.cx, dir, p.token, p.dry_run, event).await?,
    };
    let mut result = result(linked.workspace.clone(), Some(&linked), None);
    result.pushed = Some(pushed_view(&pushed));
    Ok(result)
}

fn pushed_view(o: &PushOutcome) -> wire::PrPushSummary {
    let mut replies = Vec::new();
    for new in &o.plan.threads {
        replies.extend(
            new.later.iter().map(|c| wire::PrPushedReply { path: new.draft.path.clone(), body: c.body.clone() }),
        );
    }
    replies.extend(
        o.plan.replies.iter().map(|r| wire::PrPushedReply { path: r.path.clone(), body: r.comment.body.clone() }),
    );
    wire::PrPushSummary {
        at: o.at.clone(),
        dry_run: o.dry_run,
        threads: o
            .plan
            .threads
            .iter()
            .map(|t| wire::PrPushedThread {
                path: t.draft.path.clone(),
                side: t.draft.side.clone(),
                start_line: t.draft.start_line,
                line: t.draft.line,
                body: t.draft.body.clone(),
            })
            .collect(),
        replies,
        resolutions: o
            .plan
            .resolutions
            .iter()
            .map(|r| wire::PrPushedResolution { path: r.path.clone(), resolved: r.resolved })
            .collect(),
        not_sent: o
            .plan
            .not_sent
            .iter()
            .map(|n| wire::PrUnplaced {
                path: n.path.clone(),
                line: Some(n.line),
                url: String::new(),
                reason: n.reason.clone(),
            })
            .collect(),
        left_open: o.plan.left_open.iter().map(|l| left_open_view(&l.path, &l.url, &l.agent)).collect(),
        review: o.review.map(str::to_owned),
        event: o.event.map(|e| e.name().to_owned()),
        review_url: o.review_url.clone(),
        adopted: o.adopted,
        notes: o.settings_note.iter().chain(&o.plan.notes).cloned().collect(),
        round: o.round.as_ref().map(|(id, round)| format!("{id} round {round}")),
        body: o.body.clone(),
        already_on_github: o.already_on_github,
    }
}

fn absolute(dir: &Path) -> Result<&Path, ErrorObject> {
    if dir.is_absolute() {
        Ok(dir)
    } else {
        Err(errors::invalid(format!("workspace must be an absolute folder, not {}", dir.display())))
    }
}

fn result(
    workspace: std::path::PathBuf,
    linked: Option<&LinkedPullRequest>,
    pulled: Option<&PullSummary>,
) -> wire::PrStatusResult {
    wire::PrStatusResult { workspace, linked: linked.map(linked_view), pulled: pulled.map(summary_view), pushed: None }
}

fn summary_view(s: &PullSummary) -> wire::PrPullSummary {
    wire::PrPullSummary {
        at: s.at.clone(),
        new_threads: s.new_threads,
        replies: s.replies,
        resolved: s.resolved,
        reopened: s.reopened,
        outdated: s.outdated,
        gone: s.gone,
        tied: s.tied,
    }
}

fn linked_view(l: &LinkedPullRequest) -> wire::LinkedPr {
    wire::LinkedPr {
        pull_request: l.pull_request.to_string(),
        url: l.url.clone(),
        api: l.api_root.clone(),
        found_by: l.found_by.clone(),
        linked_at: l.linked_at.clone(),
        state: l.state.clone(),
        head_oid: l.head_oid.clone(),
        last_pull: l.last_pull.as_ref().map(summary_view),
        last_error: l.last_error.clone(),
        conversation: l
            .conversation
            .iter()
            .map(|c| wire::PrComment {
                author: c.author.clone(),
                body: c.body.clone(),
                created_at: c.created_at.clone(),
                url: c.url.clone(),
            })
            .collect(),
        unplaced: l.unplaced.iter().map(unplaced_view).collect(),
        placed_by_line: l.placed_by_line.iter().map(unplaced_view).collect(),
        conflicts: l.conflicts.clone(),
        left_open: l.left_open.iter().map(|t| left_open_view(&t.path, &t.url, &t.agent)).collect(),
        last_push: l.last_push.as_ref().map(|p| wire::PrLastPush {
            at: p.at.clone(),
            threads: p.threads,
            replies: p.replies,
            resolutions: p.resolutions,
            not_sent: p.not_sent,
            review: p.review.clone(),
            event: p.event.clone(),
            round: p.round.clone(),
        }),
        waiting: None,
    }
}

fn left_open_view(path: &str, url: &str, agent: &str) -> wire::PrLeftOpen {
    wire::PrLeftOpen { path: path.to_owned(), url: url.to_owned(), agent: agent.to_owned() }
}

fn unplaced_view(u: &crate::github::linked::UnplacedThread) -> wire::PrUnplaced {
    wire::PrUnplaced { path: u.path.clone(), line: u.line, url: u.url.clone(), reason: u.reason.clone() }
}
