//! `parley review request` and `parley sessions …`: review rounds from the
//! terminal, with the same pipeline agents use, and their history.

use std::io::IsTerminal;
use std::path::Path;

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
    let mut client = client().await?;
    let interactive = std::io::stderr().is_terminal();
    let result: anyhow::Result<wire::ReviewRequestResult> = client
        .call_with_events(wire::REVIEW_REQUEST, params, |event| {
            if event.method != wire::REVIEW_PROGRESS {
                return;
            }
            if let Ok(p) = serde_json::from_value::<wire::ReviewProgress>(event.params.clone()) {
                let line = format!("[{:.0}/{:.0}] {}", p.progress.floor() + 1.0, p.total, p.message);
                if interactive {
                    eprint!("\r\x1b[2K{line}");
                } else {
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
