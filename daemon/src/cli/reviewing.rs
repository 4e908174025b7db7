//! The person's side of a review round at the terminal: `parley inbox`
//! (what waits on a person), `parley review diff` (a waiting round's diff
//! with the comments inline), `parley review comment` / `uncomment` (draft
//! comments on either side) and `parley review submit` (the verdict).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use parley_protocol::methods as wire;
use serde_json::json;

use super::cli_opening;
use super::client::HubClient;

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
        println!("Nothing waits on you: no review round asked of a person, and no thread waiting for an answer.");
        return Ok(0);
    }
    if !result.rounds.is_empty() {
        println!("Reviews asked of you ({}):", result.rounds.len());
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
            println!(
                "  {}  round {}  {}  asked by {}  {}  ({files}{drafts})",
                round.review_id,
                round.round,
                round.requested_at,
                round.asked_by,
                round.workspace.display()
            );
            println!("      {}", first_line(&round.summary));
        }
        println!("  Read one with `parley review diff ID`, then comment and submit (`parley review --help`).");
    }
    if !result.threads.is_empty() {
        if !result.rounds.is_empty() {
            println!();
        }
        println!("Threads waiting for your answer ({}):", result.threads.len());
        for thread in &result.threads {
            let last = thread.comments.last();
            println!(
                "  {}  {}:{}  {} said: {}",
                short_id(&thread.id),
                thread.file.display(),
                thread.range.start.line + 1,
                last.map_or("someone", |c| c.author.as_str()),
                first_line(last.map_or("", |c| c.body.as_str()))
            );
        }
        println!("  Answer with `parley feedback reply ID MESSAGE`, or `parley feedback resolve ID`.");
    }
    Ok(0)
}

/// `parley review diff ID`: the round's changes as a unified diff with
/// old and new line numbers (what `review comment` takes), the drafts and
/// earlier rounds' comments under the lines they are about.
pub async fn diff(id: &str, since_previous: bool, json: bool) -> anyhow::Result<i32> {
    let round: wire::RoundForReview = client().await?.call(wire::ROUND_GET, json!({ "review_id": id })).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&round)?);
        return Ok(0);
    }
    print!("{}", render_round(&round, since_previous));
    Ok(0)
}

/// The whole round as text for a terminal.
fn render_round(round: &wire::RoundForReview, since_previous: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "── review {} · round {} · asked by {} at {} ──",
        round.review_id, round.round, round.asked_by, round.requested_at
    );
    let _ = writeln!(out, "{}", round.summary.trim_end());
    for area in &round.focus_areas {
        let _ = writeln!(out, "  focus: {area}");
    }
    let since = match (since_previous, round.previous_round) {
        (true, Some(previous)) => {
            let _ = writeln!(out, "\nChanges since round {previous} (what the agent changed after your last review):");
            true
        }
        (true, None) => {
            let _ = writeln!(out, "\nThis is the first round: the whole change is shown.");
            false
        }
        (false, _) => false,
    };
    for file in &round.files {
        out.push('\n');
        let renamed = match &file.old_path {
            Some(old) if old != &file.path => format!(" (from {old})"),
            _ => String::new(),
        };
        let _ = writeln!(out, "{} · {}{renamed}", file.path, file.status);
        if file.binary || file.too_large {
            let _ = writeln!(out, "  ({} file: not shown)", if file.binary { "binary" } else { "too large a" });
            continue;
        }
        if since && !file.changed_since_previous {
            let _ = writeln!(out, "  (unchanged since round {})", round.previous_round.unwrap_or_default());
            continue;
        }
        let (old, new) = if since && file.previous.is_some() {
            (file.previous.as_deref().unwrap_or_default(), file.after.as_deref().unwrap_or_default())
        } else {
            (file.before.as_deref().unwrap_or_default(), file.after.as_deref().unwrap_or_default())
        };
        let drafts: Vec<&wire::Draft> = round.drafts.iter().filter(|d| d.path == file.path).collect();
        let earlier: Vec<&wire::EarlierComment> = round.earlier.iter().filter(|c| c.path == file.path).collect();
        // Comments are shown against the whole change's numbering.
        render_file(&mut out, old, new, if since { &[] } else { &drafts }, &earlier);
    }
    let _ = writeln!(out);
    match round.drafts.len() {
        0 => {
            let _ = writeln!(out, "No comments yet.");
        }
        n => {
            let _ = writeln!(out, "{n} draft comment(s), sent when you submit:");
            for draft in &round.drafts {
                let _ = writeln!(out, "  {}", draft_line(draft));
            }
        }
    }
    let id = &round.review_id;
    let _ = writeln!(
        out,
        "Comment: parley review comment {id} FILE:LINE[-LINE] [--side old] [--suggest TEXT] MESSAGE\n\
         Submit:  parley review submit {id} --approve | --request-changes | --comment [-m SUMMARY]"
    );
    out
}

/// One file's diff with three lines of context, numbered on both sides.
fn render_file(out: &mut String, old: &str, new: &str, drafts: &[&wire::Draft], earlier: &[&wire::EarlierComment]) {
    let diff = similar::TextDiff::from_lines(old, new);
    for (index, group) in diff.grouped_ops(3).iter().enumerate() {
        if index > 0 {
            let _ = writeln!(out, "  ⋯");
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let (old_no, new_no) = (change.old_index(), change.new_index());
                let number = |n: Option<usize>| n.map_or_else(|| "    ".to_owned(), |n| format!("{:>4}", n + 1));
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                let text = change.value().trim_end_matches(['\n', '\r']);
                let _ = writeln!(out, "{} {} │{sign}{text}", number(old_no), number(new_no));
                for draft in drafts.iter().filter(|d| ends_here(d, old_no, new_no)) {
                    let _ = writeln!(out, "            ▸ {}", draft_line(draft));
                }
                for comment in earlier.iter().filter(|c| new_no == Some(c.end_line as usize)) {
                    let _ = writeln!(
                        out,
                        "            ◂ round {} ({}): {}",
                        comment.round,
                        comment.state,
                        first_line(&comment.body)
                    );
                }
            }
        }
    }
}

/// Whether a draft is shown under this line: after the last line it covers.
fn ends_here(draft: &wire::Draft, old: Option<usize>, new: Option<usize>) -> bool {
    let at = if draft.side == "old" { old } else { new };
    at == Some(draft.end_line as usize)
}

fn draft_line(draft: &wire::Draft) -> String {
    let lines = if draft.start_line == draft.end_line {
        format!("{}", draft.start_line + 1)
    } else {
        format!("{}-{}", draft.start_line + 1, draft.end_line + 1)
    };
    let side = if draft.side == "old" { " (old side)" } else { "" };
    let suggestion = match &draft.suggestion {
        Some(text) => format!(" — suggests: {}", first_line(text)),
        None => String::new(),
    };
    format!("{} {}:{lines}{side}: {}{suggestion}", draft.id, draft.path, first_line(&draft.body))
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
        println!("Draft {}. It is sent to the agent when you submit the review.", draft_line(&result.draft));
    }
    Ok(0)
}

/// `parley review uncomment ID DRAFT`.
pub async fn uncomment(id: &str, draft: &str) -> anyhow::Result<i32> {
    let result: wire::RoundUncommentResult =
        client().await?.call(wire::ROUND_UNCOMMENT, json!({ "review_id": id, "draft_id": draft })).await?;
    println!("Removed draft {}.", result.removed);
    Ok(0)
}

/// `parley review submit ID --approve | --request-changes | --comment`.
pub async fn submit(id: &str, verdict: &str, summary: Option<String>, json: bool) -> anyhow::Result<i32> {
    let result: wire::RoundSubmitResult = client()
        .await?
        .call(wire::ROUND_SUBMIT, json!({ "review_id": id, "verdict": verdict, "summary": summary }))
        .await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    println!(
        "Sent round {} of review {} to the agent: {}{}.",
        result.round,
        result.review_id,
        result.verdict,
        match result.threads.len() {
            0 => String::new(),
            n => format!("; {n} comment(s) on the new code became threads (`parley feedback list`)"),
        }
    );
    for warning in &result.warnings {
        eprintln!("warning: {warning}");
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

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
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

    #[test]
    fn a_draft_on_a_removed_line_shows_under_it() {
        let draft = wire::Draft {
            id: "d1".into(),
            path: "a.txt".into(),
            side: "old".into(),
            start_line: 1,
            end_line: 1,
            body: "why remove this?".into(),
            suggestion: None,
            severity: None,
            author: "ana".into(),
            at: String::new(),
        };
        let mut out = String::new();
        render_file(&mut out, "one\ntwo\nthree\n", "one\nthree\n", &[&draft], &[]);
        let lines: Vec<&str> = out.lines().collect();
        let removed = lines.iter().position(|l| l.ends_with("│-two")).expect("the removed line");
        assert!(lines[removed + 1].contains("d1 a.txt:2 (old side): why remove this?"), "{out}");
    }
}
