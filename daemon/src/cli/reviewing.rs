//! The person's side of a review round at the terminal: `parley inbox`
//! (what waits on a person), `parley review diff` (a waiting round's diff
//! with the comments inline), `parley review comment` / `uncomment` (draft
//! comments on either side) and `parley review submit` (the verdict).

use std::path::Path;

use anyhow::Context as _;
use parley_protocol::jsonrpc::code;
use parley_protocol::methods as wire;
use serde_json::json;

use super::cli_opening;
use super::client::{HubClient, Refused};
use super::round_page::{draft_line, first_line, render_round};
use super::screen::ColorChoice;
use super::shown::{say, visible};

async fn client() -> anyhow::Result<HubClient> {
    HubClient::open(&cli_opening(true)).await?.context("no daemon is running")
}

/// `parley inbox`: the rounds waiting on a person and the threads waiting on
/// a person's answer, newest first, across every repository (or one).
pub async fn inbox(folder: Option<&Path>, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let mut result: wire::InboxResult = client.call(wire::INBOX, json!({ "workspace": folder })).await?;
    // Many long threads come in more than one answer.
    while let Some(offset) = result.next_offset.take() {
        let more: wire::InboxResult =
            client.call(wire::INBOX, json!({ "workspace": folder, "offset": offset })).await?;
        result.threads.extend(more.threads);
        result.next_offset = more.next_offset;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    if result.rounds.is_empty() && result.threads.is_empty() {
        say!("Nothing waits on you: no review round asked of a person, and no thread waiting for an answer.");
        return Ok(0);
    }
    if !result.rounds.is_empty() {
        say!("Reviews asked of you ({}):", result.rounds.len());
        for round in &result.rounds {
            let files = match round.files.len() {
                1 => "1 file".to_owned(),
                n => format!("{n} files"),
            };
            let drafts = match round.drafts {
                0 => String::new(),
                1 => ", 1 draft comment".to_owned(),
                n => format!(", {n} draft comments"),
            };
            let kind = if round.plan { "plan  " } else { "" };
            say!(
                "  {}  {kind}round {}  {}  asked by {}  {}  ({files}{drafts})",
                round.review_id,
                round.round,
                round.requested_at,
                round.asked_by,
                round.workspace.display()
            );
            say!("      {}", first_line(&round.summary));
        }
        say!("  Read one with `parley review diff ID`, then comment and submit (`parley review --help`).");
    }
    if !result.threads.is_empty() {
        if !result.rounds.is_empty() {
            say!();
        }
        say!("Threads waiting for your answer ({}):", result.threads.len());
        for thread in &result.threads {
            let last = thread.comments.last();
            say!(
                "  {}  {}:{}  {} said: {}",
                short_id(&thread.id),
                thread.file.display(),
                thread.range.start.line + 1,
                last.map_or("someone", |c| c.author.as_str()),
                first_line(last.map_or("", |c| c.body.as_str()))
            );
        }
        say!("  Answer with `parley feedback reply ID MESSAGE`, or `parley feedback resolve ID`.");
    }
    Ok(0)
}

/// `parley review diff ID`: the round's changes as a unified diff with
/// old and new line numbers (what `review comment` takes), the drafts and
/// earlier rounds' comments under the lines they are about. The round
/// waiting on a person, else the last one a person answered (or `round`),
/// to read again. Coloured and paged on a terminal.
pub async fn diff(
    id: &str,
    round: Option<u32>,
    since_previous: bool,
    json: bool,
    color: ColorChoice,
) -> anyhow::Result<i32> {
    let round = fetch_round(&mut client().await?, id, round).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&round)?);
        return Ok(0);
    }
    render_round(&round, since_previous).print(color.colours()).await?;
    Ok(0)
}

/// Round `round` of session `id`; by default the one waiting on a person,
/// or, when none waits, the last one a person answered.
async fn fetch_round(client: &mut HubClient, id: &str, round: Option<u32>) -> anyhow::Result<wire::RoundForReview> {
    if let Some(n) = round {
        return client.call(wire::ROUND_GET, json!({ "review_id": id, "round": n })).await;
    }
    let nothing_waits = match client.call(wire::ROUND_GET, json!({ "review_id": id })).await {
        Ok(round) => return Ok(round),
        Err(e) if e.downcast_ref::<Refused>().is_some_and(|r| r.code == code::CONFLICT) => e,
        Err(e) => return Err(e),
    };
    let sessions: wire::SessionsResult = client.call(wire::SESSIONS_GET, json!({ "review_id": id })).await?;
    let last = sessions.sessions.first().and_then(|s| s.rounds.last());
    match last {
        Some(last) if last.reviewer.ends_with(crate::sessions::IN_PERSON) => {
            client.call(wire::ROUND_GET, json!({ "review_id": id, "round": last.round })).await
        }
        _ => Err(nothing_waits),
    }
}

/// `parley review comment ID FILE:LINE[-LINE] …`: a draft comment.
pub async fn comment(
    id: &str,
    place: &str,
    side: &str,
    suggestion: Option<String>,
    severity: Option<String>,
    message: &str,
    json: bool,
) -> anyhow::Result<i32> {
    let (path, start, end) = parse_place(place)?;
    let params = json!({
        "review_id": id,
        "path": path,
        "side": side,
        "start_line": start - 1,
        "end_line": end - 1,
        "body": message,
        "suggestion": suggestion,
        "severity": severity,
    });
    let result: wire::RoundCommentResult = client().await?.call(wire::ROUND_COMMENT, params).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        say!("Draft {}. It is sent to the agent when you submit the review.", draft_line(&result.draft));
    }
    Ok(0)
}

/// `parley review uncomment ID DRAFT`.
pub async fn uncomment(id: &str, draft: &str) -> anyhow::Result<i32> {
    let result: wire::RoundUncommentResult =
        client().await?.call(wire::ROUND_UNCOMMENT, json!({ "review_id": id, "draft_id": draft })).await?;
    say!("Removed draft {}.", result.removed);
    Ok(0)
}

/// `parley review submit ID --approve | --request-changes | --comment`.
pub async fn submit(id: &str, verdict: &str, summary: Option<String>, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let result: wire::RoundSubmitResult =
        client.call(wire::ROUND_SUBMIT, json!({ "review_id": id, "verdict": verdict, "summary": summary })).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    let threads = match result.threads.len() {
        0 => String::new(),
        n => {
            // A plan's comments are threads on the plan, not on the repository's files.
            let asked = json!({ "review_id": result.review_id, "round": result.round });
            let answered: Option<wire::RoundForReview> = client.call(wire::ROUND_GET, asked).await.ok();
            if answered.is_some_and(|round| round.scope == "plan") {
                format!("; {n} comment(s) stay with the plan, shown again with its next round")
            } else {
                format!("; {n} comment(s) became threads (`parley feedback list`)")
            }
        }
    };
    say!("Sent round {} of review {} to the agent: {}{threads}.", result.round, result.review_id, result.verdict);
    for warning in &result.warnings {
        eprintln!("warning: {}", visible(warning));
    }
    Ok(0)
}

/// `FILE:LINE` or `FILE:LINE-LINE`, 1-based.
fn parse_place(place: &str) -> anyhow::Result<(String, u32, u32)> {
    let wrong = || {
        anyhow::anyhow!(
            "{place:?} is not a place: give FILE:LINE or FILE:START-END, with the path relative to the repository root \
             and the line numbers `parley review diff` shows (old-side numbers with --side old)"
        )
    };
    let (path, lines) = place.rsplit_once(':').ok_or_else(wrong)?;
    let (start, end) = match lines.split_once('-') {
        Some((start, end)) => (start, end),
        None => (lines, lines),
    };
    let start: u32 = start.trim().parse().map_err(|_| wrong())?;
    let end: u32 = end.trim().parse().map_err(|_| wrong())?;
    if path.is_empty() || start == 0 || end < start {
        return Err(wrong());
    }
    Ok((path.to_owned(), start, end))
}

fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_file_and_one_based_lines() {
        assert_eq!(parse_place("src/a.rs:4").expect("one line"), ("src/a.rs".into(), 4, 4));
        assert_eq!(parse_place("a:b.txt:2-5").expect("range"), ("a:b.txt".into(), 2, 5));
        for wrong in ["a.rs", "a.rs:0", "a.rs:5-2", ":3", "a.rs:x"] {
            assert!(parse_place(wrong).is_err(), "{wrong}");
        }
    }
}
