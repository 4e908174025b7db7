//! `parley review request` and `parley sessions …`: review rounds from the
//! terminal, with the same pipeline agents use, and their history.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use parley_protocol::methods as wire;
use serde_json::{Value, json};

use super::cli_opening;
use super::client::HubClient;

async fn client() -> anyhow::Result<HubClient> {
    HubClient::open(&cli_opening(true)).await?.context("no daemon is running")
}

/// The exit code when the reviewer asks for changes (2 is taken by usage
/// errors, 1 by failures).
pub const NEEDS_CHANGES: i32 = 3;

/// Runs a review round; the exit code tells a script the verdict.
pub async fn request(params: Value, json: bool) -> anyhow::Result<i32> {
    follow(wire::REVIEW_REQUEST, params, json).await
}

/// Waits for a round started elsewhere; exits as [`request`] does.
pub async fn await_round(id: &str, json: bool) -> anyhow::Result<i32> {
    follow(wire::REVIEW_AWAIT, json!({ "review_id": id }), json).await
}

/// Stops a session's running round.
pub async fn cancel(id: &str) -> anyhow::Result<i32> {
    let result: wire::ReviewCancelResult =
        client().await?.call(wire::REVIEW_CANCEL, json!({ "review_id": id })).await?;
    println!("Stopped round {} of review {}; nothing of it was stored.", result.round, result.review_id);
    Ok(0)
}

/// Runs `method` (a round, or a wait for one) showing its progress, then
/// prints the review.
async fn follow(method: &str, params: Value, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let interactive = std::io::stderr().is_terminal();
    let mut piped = PipedProgress::default();
    let result: anyhow::Result<wire::ReviewRequestResult> = client
        .call_with_events(method, params, |event| {
            if event.method != wire::REVIEW_PROGRESS {
                return;
            }
            if let Ok(p) = serde_json::from_value::<wire::ReviewProgress>(event.params.clone()) {
                let step = p.progress.floor();
                let line = format!("[{:.0}/{:.0}] {}", step + 1.0, p.total, p.message);
                if interactive {
                    eprint!("\r\x1b[2K{line}");
                } else if piped.due(step as u64, Instant::now()) {
                    eprintln!("{line}");
                }
            }
        })
        .await;
    if interactive {
        eprintln!();
    }
    let result = match result {
        Ok(result) => result,
        Err(e) => {
            eprintln!("parley: {e:#}");
            return Ok(1);
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        println!("{}", result.markdown.trim_end());
        for warning in &result.warnings {
            eprintln!("warning: {warning}");
        }
        eprintln!("review {} round {}: {}", result.review_id, result.round, result.verdict);
    }
    Ok(if result.verdict == "needs_changes" { NEEDS_CHANGES } else { 0 })
}

/// How often a step still running is reported when progress goes to a log
/// rather than a terminal.
const PIPED_PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// Which progress lines a log gets: each new step at once, then a line every
/// [`PIPED_PROGRESS_EVERY`] while the step lasts (the daemon reports every
/// 2 s, which on a terminal rewrites one line but in a CI log would add 300
/// lines to a ten-minute review).
#[derive(Debug, Default)]
struct PipedProgress {
    /// The step last printed, and when.
    last: Option<(u64, Instant)>,
}

impl PipedProgress {
    fn due(&mut self, step: u64, now: Instant) -> bool {
        match self.last {
            Some((last, at)) if last == step && now.duration_since(at) < PIPED_PROGRESS_EVERY => false,
            _ => {
                self.last = Some((step, now));
                true
            }
        }
    }
}

pub async fn list(folder: &Path, limit: usize, json: bool) -> anyhow::Result<i32> {
    let result: wire::SessionsResult =
        client().await?.call(wire::SESSIONS_LIST, json!({ "workspace": folder, "limit": limit })).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result.sessions)?);
        return Ok(0);
    }
    if result.sessions.is_empty() {
        println!("No review sessions in this repository yet. Start one with `parley review request --summary …`.");
        return Ok(0);
    }
    for s in &result.sessions {
        let summary = s.request.summary.lines().next().unwrap_or("");
        println!("{}  {:<13}  {} round(s)  {summary}", s.id, s.status, s.rounds.len());
    }
    Ok(0)
}

pub async fn show(id: &str, json: bool) -> anyhow::Result<i32> {
    let result: wire::SessionsResult = client().await?.call(wire::SESSIONS_GET, json!({ "review_id": id })).await?;
    let session = result.sessions.first().context("the daemon returned no session")?;
    if json {
        println!("{}", serde_json::to_string_pretty(session)?);
        return Ok(0);
    }
    println!("Review session {} · {} · created {}", session.id, session.status, session.created_at);
    println!("Summary: {}", session.request.summary);
    for round in &session.rounds {
        let comments = round.review["comments"].as_array().map_or(0, Vec::len);
        println!(
            "  round {} · {} · verdict {} · {comments} comment(s) · reviewer said {}",
            round.round,
            round.at,
            round.verdict,
            round.review["overall_assessment"].as_str().unwrap_or("?"),
        );
    }
    if let Some(done) = &session.completion {
        println!("  completed {} as {}: {}", done.at, done.final_status, done.notes.as_deref().unwrap_or(""));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_gets_each_step_and_a_line_every_30_s_within_one() {
        let start = Instant::now();
        let mut piped = PipedProgress::default();
        // (seconds since the start, step) as the daemon reports, every 2 s while the reviewer runs.
        let reports = [(0, 0), (0, 1), (1, 2), (1, 3), (2, 4), (4, 4), (30, 4), (32, 4), (62, 4), (63, 5)];
        let printed: Vec<(u64, u64)> =
            reports.into_iter().filter(|&(at, step)| piped.due(step, start + Duration::from_secs(at))).collect();
        assert_eq!(printed, [(0, 0), (0, 1), (1, 2), (1, 3), (2, 4), (32, 4), (62, 4), (63, 5)]);
    }
}
