//! A plan sent to Parley and the person's verdict waited for, however long
//! it takes: the daemon is started when none runs, and a daemon that stops
//! or restarts meanwhile is reconnected to and waited on again, for the same
//! round (a daemon stopped on purpose, with `parley stop`, is waited for,
//! not started again from here).

use std::path::PathBuf;
use std::time::Duration;

use parley_protocol::hello::Role;
use parley_protocol::jsonrpc::code;
use parley_protocol::methods as wire;
use serde_json::json;

use super::HookError;
use crate::cli::client::{HubClient, Opening, Refused};

/// A plan as a host's hook has it.
#[derive(Debug, Clone)]
pub struct Plan {
    /// `claude` or `codex`.
    pub host: &'static str,
    pub host_session: String,
    pub cwd: PathBuf,
    pub text: String,
    /// The plan's file, when the host names one.
    pub name: Option<String>,
    /// Open nothing when this plan is the one the person last answered.
    pub new_only: bool,
}

/// What came of a plan sent for review.
#[derive(Debug)]
pub enum Reviewed {
    /// The person's verdict (or how the round ended without one).
    Verdict(wire::PlanVerdict),
    /// The plan is the one the person already answered (`new_only`).
    AlreadyAnswered,
}

/// The longest pause between two attempts to reach the daemon again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

fn opening(spawn: bool) -> Opening {
    Opening { role: Role::Cli, name: "parley hook", workspaces: Vec::new(), spawn }
}

/// Connects, starting the daemon when none runs.
pub async fn connect() -> Result<HubClient, HookError> {
    match HubClient::open(&opening(true)).await? {
        Some(client) => Ok(client),
        None => Err(HookError::Failed(anyhow::anyhow!("no Parley daemon runs, and none could be started"))),
    }
}

/// Sends `plan` for review and waits for the person's verdict.
pub async fn review(plan: &Plan) -> Result<Reviewed, HookError> {
    let mut client = connect().await?;
    let params = json!({
        "host": plan.host,
        "host_session": plan.host_session,
        "cwd": plan.cwd,
        "plan": plan.text,
        "name": plan.name,
        "new_only": plan.new_only,
    });
    let opened: wire::PlanOpened = client.call(wire::PLAN_OPEN, params).await?;
    if opened.already_answered {
        return Ok(Reviewed::AlreadyAnswered);
    }
    let waited = json!({ "review_id": opened.review_id, "round": opened.round });
    let mut backoff = Duration::from_millis(100);
    loop {
        let mut stopping: Option<String> = None;
        let answer = client
            .call_with_events::<wire::PlanVerdict>(wire::PLAN_AWAIT, waited.clone(), |event| {
                if event.method == wire::DAEMON_STOPPING {
                    stopping =
                        serde_json::from_value::<wire::DaemonStopping>(event.params.clone()).ok().map(|s| s.reason);
                }
            })
            .await;
        match answer {
            Ok(verdict) => return Ok(Reviewed::Verdict(verdict)),
            Err(error) => match error.downcast_ref::<Refused>() {
                Some(refused) if refused.code != code::SHUTTING_DOWN => return Err(HookError::Failed(error)),
                _ => {}
            },
        }
        // The daemon went away: reach it again, and wait on the same round.
        // One stopped on purpose is waited for; any other is started again.
        let spawn = stopping.as_deref() != Some("requested");
        client = loop {
            match HubClient::open(&opening(spawn)).await {
                Ok(Some(client)) => break client,
                Ok(None) => {}
                Err(e) => eprintln!("parley hook: the daemon cannot be reached ({e:#}); trying again"),
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        };
        backoff = Duration::from_millis(100);
    }
}
