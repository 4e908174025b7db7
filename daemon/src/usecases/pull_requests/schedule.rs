//! Pulling on its own: every few minutes, each linked workspace that has an
//! editor window or an agent on it is pulled, so a teammate's comment on the
//! pull request reaches the agent at work without anyone asking. A failed
//! pull is kept as the link's `last_error` (`parley pr status`); a spent rate
//! limit is waited out before the next try.

use std::time::Duration;

use super::{PullRequestError, pull};
use crate::github::GithubError;
use crate::usecases::Context;

/// How often linked workspaces are pulled when nothing says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(180);

/// Seconds between scheduled pulls (at least 1): `PARLEY_PR_PULL_SECONDS`.
pub const INTERVAL_VARIABLE: &str = "PARLEY_PR_PULL_SECONDS";

/// The interval the daemon's environment asks for.
pub fn interval() -> Duration {
    std::env::var(INTERVAL_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|seconds| *seconds >= 1)
        .map_or(DEFAULT_INTERVAL, Duration::from_secs)
}

/// Pulls every linked workspace someone works in, every `every`, until the
/// task is aborted.
pub async fn pull_linked_workspaces(cx: Context, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    // No call before GitHub's reset, once it said the limit is spent.
    let mut not_before: Option<u64> = None;
    loop {
        ticks.tick().await;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if not_before.is_some_and(|at| now < at) {
            continue;
        }
        not_before = None;
        let linked = match super::all_linked(&cx).await {
            Ok(linked) => linked,
            Err(e) => {
                tracing::warn!("scheduled pull: cannot read the links: {e}");
                continue;
            }
        };
        for link in linked {
            if !worked_in(&cx, &link.workspace).await {
                continue;
            }
            match pull(&cx, &link.workspace, None).await {
                Ok((_, pulled)) => tracing::debug!(
                    workspace = %link.workspace.display(),
                    new = pulled.new_threads,
                    replies = pulled.replies,
                    "scheduled pull of {}",
                    link.pull_request
                ),
                Err(PullRequestError::Github(GithubError::RateLimited { reset_at, .. })) => {
                    not_before = Some(reset_at);
                    break;
                }
                Err(e) => tracing::info!("scheduled pull of {} failed: {e}", link.pull_request),
            }
        }
    }
}

/// Whether an editor window or an agent is on `workspace` now.
async fn worked_in(cx: &Context, workspace: &std::path::Path) -> bool {
    let windows = cx.state.editors_on(workspace.to_owned()).await.map(|w| !w.is_empty()).unwrap_or(false);
    windows
        || cx
            .state
            .agents(Some(workspace.to_owned()), None)
            .await
            .map(|listed| !listed.agents.is_empty())
            .unwrap_or(false)
}
