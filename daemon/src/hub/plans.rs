//! The hub methods of plan reviews, which `parley hook` calls for the
//! agent's host: `plan/open`, `plan/await` (answered by the connection's
//! long-request task), `plan/answered_elsewhere` and `plan/notes`.

use parley_protocol::jsonrpc::ErrorObject;
use parley_protocol::methods as wire;
use tokio_util::sync::CancellationToken;

use super::{Peer, errors};
use crate::usecases::Context;
use crate::usecases::rounds::RoundError;
use crate::usecases::rounds::plan::{self, PlanAsk};

/// `plan/open`, answered by the connection's long-request task: the round
/// is held by the connection (`gone` fires when it closes).
pub async fn open(
    cx: &Context,
    p: wire::PlanOpenParams,
    gone: CancellationToken,
) -> Result<wire::PlanOpened, ErrorObject> {
    let ask = PlanAsk {
        host: p.host,
        host_session: p.host_session,
        cwd: p.cwd,
        plan: p.plan,
        name: p.name,
        new_only: p.new_only,
    };
    let opened = plan::open(cx, ask).await?;
    if !opened.already_answered {
        plan::hold(cx, opened.review_id.clone(), opened.round, gone);
    }
    Ok(wire::PlanOpened {
        review_id: opened.review_id,
        round: opened.round,
        workspace: opened.workspace,
        path: opened.path,
        status: opened.status.name().into(),
        already_answered: opened.already_answered,
    })
}

/// `plan/await`, for as long as it takes; `gone` fires when the connection closes.
pub async fn wait(
    cx: &Context,
    p: wire::PlanRoundParams,
    gone: &CancellationToken,
) -> Result<wire::PlanVerdict, ErrorObject> {
    match plan::wait_for_hook(cx, &p.review_id, p.round, gone).await? {
        Some(verdict) => Ok(verdict),
        // Nobody reads this: the connection is closed.
        None => Err(RoundError::Cancelled("the waiting hook went away".into()).into()),
    }
}

pub async fn answered_elsewhere(peer: &Peer<'_>, p: wire::PlanRoundParams) -> Result<wire::PlanAnswered, ErrorObject> {
    let review_id = crate::usecases::rounds::session_id(peer.cx, &p.review_id, None).await?;
    let marked = plan::answered_elsewhere(peer.cx, &review_id, p.round).await?;
    let state = if marked { "answered_elsewhere" } else { "already_ended" };
    Ok(wire::PlanAnswered { review_id, round: p.round, state: state.into() })
}

pub async fn notes(peer: &Peer<'_>, p: wire::PlanNotesParams) -> Result<wire::PlanNotesResult, ErrorObject> {
    if !p.cwd.is_absolute() {
        return Err(errors::invalid(format!("cwd {} must be an absolute path", p.cwd.display())));
    }
    let (review_id, round, comments) = plan::notes(peer.cx, &p.host, &p.host_session, &p.cwd).await?;
    Ok(wire::PlanNotesResult { review_id, round, comments })
}
