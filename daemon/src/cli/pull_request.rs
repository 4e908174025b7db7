//! `parley pr link|status|pull|push`: the workspace's GitHub pull request at the
//! terminal. The daemon talks to GitHub; this command hands it the API root
//! it names (`PARLEY_GITHUB_API`) and, for a pull or a push, its `GITHUB_TOKEN` (kept
//! in the daemon's memory only) for when the daemon has no token of its own.

use std::path::Path;

use anyhow::Context as _;
use parley_protocol::methods::{self as wire, LinkedPr, PrPullSummary};
use serde_json::json;

use super::cli_opening;
use super::client::HubClient;
use super::shown::say;
use crate::github::api::API_ROOT_VARIABLE;

async fn client() -> anyhow::Result<HubClient> {
    HubClient::open(&cli_opening(true)).await?.context("no daemon is running")
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `parley pr link [OWNER/REPO#N]`.
pub async fn link(given: Option<&str>, folder: &Path, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let mut params = json!({ "workspace": folder });
    if let Some(given) = given {
        params["pull_request"] = json!(given);
    }
    if let Some(api) = env(API_ROOT_VARIABLE) {
        params["api"] = json!(api);
    }
    let result: wire::PrStatusResult = client.call(wire::PR_LINK, params).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    if let Some(linked) = &result.linked {
        say!("Linked {} to {} ({}).", result.workspace.display(), linked.pull_request, linked.url);
        say!("Bring its review threads in with `parley pr pull`.");
    }
    Ok(0)
}

/// `parley pr status`.
pub async fn status(folder: &Path, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let result: wire::PrStatusResult = client.call(wire::PR_STATUS, json!({ "workspace": folder })).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    match &result.linked {
        None => say!(
            "{} is not linked to a pull request: `parley pr link` finds its branch's with gh, or give it as `parley pr link OWNER/REPO#NUMBER`.",
            result.workspace.display()
        ),
        Some(linked) => print_linked(&result.workspace, linked),
    }
    Ok(0)
}

/// `parley pr pull`.
pub async fn pull(folder: &Path, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let mut params = json!({ "workspace": folder });
    if let Some(token) = env("GITHUB_TOKEN") {
        params["token"] = json!(token);
    }
    let result: wire::PrStatusResult = client.call(wire::PR_PULL, params).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    if let (Some(linked), Some(pulled)) = (&result.linked, &result.pulled) {
        say!("Pulled {}: {}.", linked.pull_request, brought(pulled));
        if let Some(state @ ("MERGED" | "CLOSED")) = linked.state.as_deref() {
            say!(
                "{} is {}: its threads stay here; link the branch's next pull request with `parley pr link` when there is one.",
                linked.pull_request,
                state.to_lowercase()
            );
        }
        for unplaced in &linked.unplaced {
            say!("  not placed: {}{} ({}): {}", unplaced.path, line_of(unplaced.line), unplaced.url, unplaced.reason);
        }
        for moved in &linked.placed_by_line {
            say!("  outdated: {}{} ({}): {}", moved.path, line_of(moved.line), moved.url, moved.reason);
        }
        for conflict in &linked.conflicts {
            say!("  both changed: {conflict}");
        }
        say!("Agents read the threads with get_feedback; `parley feedback list` shows them here.");
    }
    Ok(0)
}

/// `parley pr push [--dry-run] [--event comment|approve|request-changes] [--review ID [--round N]]`.
pub async fn push(
    folder: &Path,
    dry_run: bool,
    event: Option<&str>,
    round: Option<(&str, Option<u32>)>,
    json: bool,
) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let mut params = json!({ "workspace": folder, "dry_run": dry_run });
    if let Some(event) = event {
        params["event"] = json!(event);
    }
    if let Some((review, number)) = round {
        params["review_id"] = json!(review);
        if let Some(number) = number {
            params["round"] = json!(number);
        }
    }
    if let Some(token) = env("GITHUB_TOKEN") {
        params["token"] = json!(token);
    }
    let result: wire::PrStatusResult = client.call(wire::PR_PUSH, params).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    let (Some(linked), Some(pushed)) = (&result.linked, &result.pushed) else { return Ok(0) };
    if pushed.round.is_some() {
        print_round(linked, pushed);
        return Ok(0);
    }
    let nothing = pushed.threads.is_empty() && pushed.replies.is_empty() && pushed.resolutions.is_empty();
    if pushed.dry_run {
        say!("Would push to {} (nothing is sent):", linked.pull_request);
    } else if nothing && pushed.review.is_none() {
        say!("Nothing new to push to {}.", linked.pull_request);
    } else {
        say!("Pushed to {}:", linked.pull_request);
    }
    for thread in &pushed.threads {
        let lines = if thread.start_line < thread.line {
            format!("{}-{}", thread.start_line, thread.line)
        } else {
            thread.line.to_string()
        };
        say!("  thread {}:{lines} ({}): {}", thread.path, thread.side, thread.body);
    }
    for reply in &pushed.replies {
        say!("  reply on {}: {}", reply.path, reply.body);
    }
    for resolution in &pushed.resolutions {
        say!("  {} {}", if resolution.resolved { "resolve" } else { "reopen" }, resolution.path);
    }
    if pushed.dry_run && nothing {
        say!("  nothing new");
    }
    for not_sent in &pushed.not_sent {
        say!("  not sent: {}{}: {}", not_sent.path, line_of(not_sent.line), not_sent.reason);
    }
    for left in &pushed.left_open {
        say!("  {}", left_open(left));
    }
    if pushed.adopted > 0 {
        say!(
            "  {} already on GitHub from a push cut off before its answer was kept: tied to it, not sent again",
            plural(pushed.adopted, "thread was", "threads were")
        );
    }
    for note in &pushed.notes {
        say!("  note: {note}");
    }
    match (pushed.review.as_deref(), pushed.event.as_deref()) {
        (Some("submitted"), Some(event)) => {
            say!(
                "The review was submitted ({event}){}.",
                pushed.review_url.as_deref().map(|u| format!(": {u}")).unwrap_or_default()
            )
        }
        (Some("pending"), _) => say!(
            "The review is pending on GitHub: submit it there, or push again with --event comment|approve|request-changes."
        ),
        (None, Some(event)) if pushed.dry_run => say!("The review would be submitted ({event})."),
        (None, Some(_)) => say!("No review to submit: nothing new was pushed and no review is pending."),
        _ => {}
    }
    Ok(0)
}

/// A thread an agent resolved here that stays open on GitHub, said so.
fn left_open(left: &wire::PrLeftOpen) -> String {
    format!(
        "left open on GitHub for its author: {} ({}), resolved here by {}; `[pull_requests] agents_may_resolve = true` in your own config lets agents resolve there",
        left.path, left.url, left.agent
    )
}

/// A round pushed (or, dry, to be pushed) as a review.
fn print_round(linked: &LinkedPr, pushed: &wire::PrPushSummary) {
    let round = pushed.round.as_deref().unwrap_or_default();
    let event = pushed.event.as_deref().unwrap_or("comment");
    if pushed.dry_run {
        say!("Would push {round} to {} as a review ({event}); nothing is sent:", linked.pull_request);
    } else {
        say!(
            "Pushed {round} to {} as a review ({event}){}:",
            linked.pull_request,
            pushed.review_url.as_deref().map(|u| format!(": {u}")).unwrap_or_default()
        );
    }
    for thread in &pushed.threads {
        let lines = if thread.start_line < thread.line {
            format!("{}-{}", thread.start_line, thread.line)
        } else {
            thread.line.to_string()
        };
        say!("  comment {}:{lines}: {}", thread.path, thread.body.lines().next().unwrap_or_default());
    }
    for not_sent in &pushed.not_sent {
        say!("  in the body, not on a line: {}{}: {}", not_sent.path, line_of(not_sent.line), not_sent.reason);
    }
    if pushed.already_on_github > 0 {
        say!(
            "  {} already on GitHub (an earlier push sent them)",
            plural(pushed.already_on_github, "finding is", "findings are")
        );
    }
    if pushed.adopted > 0 {
        say!(
            "  {} already on GitHub from a push cut off: tied to it, not sent again",
            plural(pushed.adopted, "thread was", "threads were")
        );
    }
    if let Some(body) = &pushed.body {
        say!("  body:");
        for line in body.lines() {
            say!("    {line}");
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn line_of(line: Option<u32>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

fn brought(pulled: &PrPullSummary) -> String {
    let parts: Vec<String> = [
        (pulled.new_threads, "new thread", "new threads"),
        (pulled.replies, "reply", "replies"),
        (pulled.resolved, "resolved", "resolved"),
        (pulled.reopened, "reopened", "reopened"),
        (pulled.outdated, "outdated", "outdated"),
        (pulled.gone, "deleted on GitHub (kept here)", "deleted on GitHub (kept here)"),
        (
            pulled.tied,
            "thread made here found on GitHub from a push whose answer was lost (tied to it, not pulled twice)",
            "threads made here found on GitHub from a push whose answer was lost (tied to them, not pulled twice)",
        ),
    ]
    .iter()
    .filter(|(count, ..)| *count > 0)
    .map(|(count, one, many)| format!("{count} {}", if *count == 1 { one } else { many }))
    .collect();
    if parts.is_empty() { "nothing new".into() } else { parts.join(", ") }
}

fn sent(pushed: &wire::PrLastPush) -> String {
    let mut parts: Vec<String> = [
        (pushed.threads, "thread", "threads"),
        (pushed.replies, "reply", "replies"),
        (pushed.resolutions, "resolution", "resolutions"),
    ]
    .iter()
    .filter(|(count, ..)| *count > 0)
    .map(|(count, one, many)| plural(*count, one, many))
    .collect();
    if let Some(round) = &pushed.round {
        parts.insert(0, round.clone());
    }
    if parts.is_empty() {
        parts.push("nothing new".into());
    }
    if pushed.not_sent > 0 {
        parts.push(format!("{} not sent", pushed.not_sent));
    }
    let review = match (pushed.review.as_deref(), pushed.event.as_deref()) {
        (Some("submitted"), Some(event)) => format!("; the review was submitted ({event})"),
        (Some("pending"), _) => "; the review is left pending on GitHub".into(),
        _ => String::new(),
    };
    format!("{}{review}", parts.join(", "))
}

fn print_linked(workspace: &Path, linked: &LinkedPr) {
    let state = linked.state.as_deref().map(|s| format!(", {}", s.to_lowercase())).unwrap_or_default();
    let how = if linked.found_by == "gh" { "found with gh" } else { "linked by hand" };
    say!("{} is linked to {}{state} ({}), {how}.", workspace.display(), linked.pull_request, linked.url);
    match &linked.last_pull {
        Some(pulled) => say!("Last pulled {}: {}.", pulled.at, brought(pulled)),
        None => say!("Not pulled yet: `parley pr pull` brings its review threads in."),
    }
    match &linked.last_push {
        Some(pushed) => say!("Last pushed {}: {}.", pushed.at, sent(pushed)),
        None => say!("Not pushed yet."),
    }
    if let Some(waiting) = &linked.waiting {
        let parts: Vec<String> = [
            (waiting.threads, "new thread", "new threads"),
            (waiting.replies, "reply", "replies"),
            (waiting.resolutions, "resolution", "resolutions"),
        ]
        .iter()
        .filter(|(count, ..)| *count > 0)
        .map(|(count, one, many)| plural(*count, one, many))
        .collect();
        if parts.is_empty() {
            say!("Nothing waits to be pushed.");
        } else {
            say!("Waiting to be pushed: {} (`parley pr push --dry-run` shows them).", parts.join(", "));
        }
    }
    if let Some(error) = &linked.last_error {
        say!("The last sync failed: {error}");
    }
    for unplaced in &linked.unplaced {
        say!("Not placed: {}{} ({}): {}", unplaced.path, line_of(unplaced.line), unplaced.url, unplaced.reason);
    }
    for moved in &linked.placed_by_line {
        say!("Outdated: {}{} ({}): {}", moved.path, line_of(moved.line), moved.url, moved.reason);
    }
    for conflict in &linked.conflicts {
        say!("Both changed: {conflict}");
    }
    for left in &linked.left_open {
        say!("Thread {}", left_open(left));
    }
    if !linked.conversation.is_empty() {
        say!();
        say!("Conversation:");
        for comment in &linked.conversation {
            say!("  {} ({}): {}", comment.author, comment.created_at, comment.body.lines().next().unwrap_or(""));
        }
    }
}
