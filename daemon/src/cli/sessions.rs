//! `parley review request` and `parley sessions …`: review rounds from the
//! terminal, with the same pipeline agents use, their history, a round as the
//! markdown an editor shows, and completing a session.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use parley_protocol::jsonrpc::code;
use parley_protocol::methods as wire;
use serde_json::{Value, json};

use super::cli_opening;
use super::client::{HubClient, Refused};
use super::shown::{say, visible};
use crate::structured_review::{Assessment, StructuredReview};

async fn client() -> anyhow::Result<HubClient> {
    HubClient::open(&cli_opening(true)).await?.context("no daemon is running")
}

/// The exit code when the reviewer asks for changes (2 is taken by usage
/// errors, 1 by failures).
pub const NEEDS_CHANGES: i32 = 3;

/// Runs a review round; the exit code tells a script the verdict.
/// `previous`, the session to continue, may be abbreviated.
pub async fn request(mut params: Value, previous: Option<String>, json: bool) -> anyhow::Result<i32> {
    let client = client().await?;
    if let Some(previous) = previous {
        // The daemon reads it by the one id rule, among this repository's sessions.
        params["previous_review_id"] = json!(previous.trim());
    }
    follow(client, wire::REVIEW_REQUEST, params, json).await
}

/// Waits for a round started elsewhere; exits as [`request`] does.
pub async fn await_round(id: &str, json: bool) -> anyhow::Result<i32> {
    follow(client().await?, wire::REVIEW_AWAIT, json!({ "review_id": id }), json).await
}

/// Stops a session's running round.
pub async fn cancel(id: &str) -> anyhow::Result<i32> {
    let result: wire::ReviewCancelResult =
        client().await?.call(wire::REVIEW_CANCEL, json!({ "review_id": id })).await?;
    say!("Stopped round {} of review {}; nothing of it was stored.", result.round, result.review_id);
    Ok(0)
}

/// Runs `method` (a round, or a wait for one) showing its progress, then
/// prints the review.
async fn follow(mut client: HubClient, method: &str, params: Value, json: bool) -> anyhow::Result<i32> {
    let interactive = std::io::stderr().is_terminal();
    let mut piped = PipedProgress::default();
    let result: anyhow::Result<wire::ReviewRequestResult> = client
        .call_with_events(method, params, |event| {
            if event.method != wire::REVIEW_PROGRESS {
                return;
            }
            if let Ok(p) = serde_json::from_value::<wire::ReviewProgress>(event.params.clone()) {
                let step = p.progress.floor();
                let line = format!("[{:.0}/{:.0}] {}", step + 1.0, p.total, visible(&p.message));
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
            eprintln!("parley: {}", visible(&format!("{e:#}")));
            return Ok(1);
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        say!("{}", result.markdown.trim_end());
        for warning in &result.warnings {
            eprintln!("warning: {}", visible(warning));
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
    let result: wire::SessionsResult = client()
        .await?
        .call(wire::SESSIONS_LIST, json!({ "workspace": folder, "limit": limit }))
        .await
        .with_context(|| format!("cannot list the review sessions of {}", folder.display()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result.sessions)?);
        return Ok(0);
    }
    if result.sessions.is_empty() {
        say!("No review sessions in this repository yet. Start one with `parley review request --summary …`.");
        return Ok(0);
    }
    for s in &result.sessions {
        let summary = s.request.summary.lines().next().unwrap_or("");
        say!("{}  {:<13}  {} round(s)  {summary}", s.id, s.status, s.rounds.len());
    }
    Ok(0)
}

/// The session a person means by `given`: its id, a unique beginning of it,
/// or its number (`003`).
async fn session(client: &mut HubClient, given: &str) -> anyhow::Result<wire::Session> {
    let result: wire::SessionsResult =
        client.call(wire::SESSIONS_GET, json!({ "review_id": given })).await.map_err(|e| no_session(given, e))?;
    result.sessions.into_iter().next().context("the daemon answered with no session")
}

/// A refusal about a session id, with what an id looks like when the daemon
/// found none.
fn no_session(given: &str, error: anyhow::Error) -> anyhow::Error {
    if error.downcast_ref::<Refused>().is_some_and(|r| r.code == code::NOT_FOUND) {
        anyhow::anyhow!(
            "no review session matches {given:?}; ids look like 2026-11-21-001 (its number, 001, or a unique \
             beginning of at least 4 characters is enough), and `parley sessions list` shows them"
        )
    } else {
        error
    }
}

pub async fn show(id: &str, round: Option<u32>, json: bool) -> anyhow::Result<i32> {
    let session = session(&mut client().await?, id).await?;
    if let Some(n) = round {
        return show_round(&session, n, json);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&session)?);
        return Ok(0);
    }
    say!("Review session {} · {} · created {}", session.id, session.status, session.created_at);
    say!("Summary: {}", session.request.summary);
    for round in &session.rounds {
        let comments = round.review["comments"].as_array().map_or(0, Vec::len);
        say!(
            "  round {} · {} · verdict {} · {comments} comment(s) · reviewer said {}",
            round.round,
            round.at,
            round.verdict,
            round.review["overall_assessment"].as_str().unwrap_or("?"),
        );
    }
    if let Some(done) = &session.completion {
        say!("  completed {} as {}: {}", done.at, done.final_status, done.notes.as_deref().unwrap_or(""));
    }
    if let Some(waiting) = &session.awaiting {
        say!(
            "  round {} · asked of a person by {} at {} · waiting ({} draft comment(s)): `parley review diff {}`",
            waiting.round,
            waiting.asked_by,
            waiting.requested_at,
            waiting.drafts,
            session.id
        );
    }
    if let Some(last) = session.rounds.last() {
        say!("`parley sessions show {} --round {}` prints a round's review.", session.id, last.round);
    }
    Ok(0)
}

/// Prints round `n` of a session: as the review markdown an editor shows, or
/// as JSON.
fn show_round(session: &wire::Session, n: u32, json: bool) -> anyhow::Result<i32> {
    let Some(round) = session.rounds.iter().find(|r| r.round == n) else {
        match session.rounds.len() {
            0 => bail!("review session {} has no finished round yet", session.id),
            1 => bail!("review session {} has one round, round 1: there is no round {n}", session.id),
            k => bail!("review session {} has rounds 1 to {k}: there is no round {n}", session.id),
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(round)?);
    } else {
        say!("{}", round_markdown(&session.id, round)?.trim_end());
    }
    Ok(0)
}

/// A round rendered as the daemon rendered it for the editor when the round
/// ended: the same function, from the stored review and verdict.
fn round_markdown(session_id: &str, round: &wire::Round) -> anyhow::Result<String> {
    let review: StructuredReview = serde_json::from_value(round.review.clone()).with_context(|| {
        format!(
            "round {} of review session {session_id} is stored in a form this parley cannot read; \
             `--json` prints it as it is",
            round.round
        )
    })?;
    let verdict = Assessment::from_name(&round.verdict).unwrap_or(review.overall_assessment);
    Ok(crate::sessions::markdown_of(
        session_id,
        round.round,
        &review,
        verdict,
        round.reviewer.ends_with(crate::sessions::IN_PERSON),
    ))
}

/// Completes a session with its final status (`approved`, `abandoned` or
/// `merged`).
pub async fn complete(id: &str, final_status: &str, notes: Option<String>, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    // Read first: the id may be abbreviated, and a session already complete
    // is explained with what it ended as.
    let found = session(&mut client, id).await?;
    if let Some(done) = &found.completion {
        let notes = done.notes.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
        bail!(
            "review session {} was already marked {} at {}{notes}, and a session is completed once; \
             to review further changes, start a new one with `parley review request`",
            found.id,
            done.final_status,
            done.at
        );
    }
    let params = json!({ "review_id": found.id, "final_status": final_status, "notes": notes });
    let result: wire::SessionsResult = client
        .call(wire::SESSIONS_COMPLETE, params)
        .await
        .with_context(|| format!("cannot complete review session {}", found.id))?;
    let done = result.sessions.into_iter().next().context("the daemon answered with no session")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&done)?);
        return Ok(0);
    }
    say!("Review session {} marked {final_status} after {} round(s).", done.id, done.rounds.len());
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
