//! The hub methods of pull requests: `pr/link`, `pr/status` and `pr/pull`.

use std::path::Path;

use parley_protocol::jsonrpc::{ErrorObject, code};
use parley_protocol::methods as wire;

use super::{Peer, errors};
use crate::github::GithubError;
use crate::github::linked::{LinkedPullRequest, PullSummary};
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
    let linked = pull_requests::status(peer.cx, dir).await?;
    let workspace = linked.as_ref().map_or_else(|| crate::workspace::root_of(dir), |l| l.workspace.clone());
    Ok(result(workspace, linked.as_ref(), None))
}

pub async fn pull(peer: &Peer<'_>, p: wire::PrPullParams) -> Result<wire::PrStatusResult, ErrorObject> {
    let dir = absolute(&p.workspace)?;
    let (linked, pulled) = pull_requests::pull(peer.cx, dir, p.token).await?;
    Ok(result(linked.workspace.clone(), Some(&linked), Some(&pulled)))
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
    wire::PrStatusResult { workspace, linked: linked.map(linked_view), pulled: pulled.map(summary_view) }
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
        unplaced: l
            .unplaced
            .iter()
            .map(|u| wire::PrUnplaced {
                path: u.path.clone(),
                line: u.line,
                url: u.url.clone(),
                reason: u.reason.clone(),
            })
            .collect(),
        conflicts: l.conflicts.clone(),
    }
}
