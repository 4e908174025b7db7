//! A round asked of a person as `parley review diff` shows it: the numbered
//! diff of each file with the drafts and earlier rounds' comments under the
//! lines they are about, styled for colour; for a round already answered,
//! the verdict and the comments as they were sent.

use parley_protocol::methods as wire;

use super::screen::{Page, Style};

/// The whole round as a page for a terminal.
pub fn render_round(round: &wire::RoundForReview, since_previous: bool) -> Page {
    let mut page = Page::default();
    match &round.answered {
        None => page.line(
            Style::Heading,
            format!(
                "── review {} · round {} · asked by {} at {} ──",
                round.review_id, round.round, round.asked_by, round.requested_at
            ),
        ),
        Some(answered) => page.line(
            Style::Heading,
            format!(
                "── review {} · round {} · answered {} by {} at {} ──",
                round.review_id, round.round, answered.verdict, answered.reviewer, answered.at
            ),
        ),
    }
    page.line(Style::Plain, round.summary.trim_end());
    for area in &round.focus_areas {
        page.line(Style::Plain, format!("  focus: {area}"));
    }
    let since = match (since_previous, round.previous_round) {
        (true, Some(previous)) => {
            page.blank();
            page.line(
                Style::Plain,
                format!("Changes since round {previous} (what the agent changed after your last review):"),
            );
            true
        }
        (true, None) => {
            page.blank();
            page.line(Style::Plain, "This is the first round: the whole change is shown.");
            false
        }
        (false, _) => false,
    };
    for file in &round.files {
        page.blank();
        let renamed = match &file.old_path {
            Some(old) if old != &file.path => format!(" (from {old})"),
            _ => String::new(),
        };
        page.line(Style::Heading, format!("{} · {}{renamed}", file.path, file.status));
        if file.binary || file.too_large {
            page.line(
                Style::Plain,
                format!("  ({} file: not shown)", if file.binary { "binary" } else { "too large a" }),
            );
            continue;
        }
        let earlier: Vec<&wire::EarlierComment> = round.earlier.iter().filter(|c| c.path == file.path).collect();
        if since && !file.changed_since_previous {
            page.line(Style::Plain, format!("  (unchanged since round {})", round.previous_round.unwrap_or_default()));
            render_elsewhere(&mut page, &earlier);
            continue;
        }
        let (old, new) = if since && file.previous.is_some() {
            (file.previous.as_deref().unwrap_or_default(), file.after.as_deref().unwrap_or_default())
        } else {
            (file.before.as_deref().unwrap_or_default(), file.after.as_deref().unwrap_or_default())
        };
        let drafts: Vec<&wire::Draft> = round.drafts.iter().filter(|d| d.path == file.path).collect();
        // Comments are shown against the whole change's numbering.
        let shown = render_file(&mut page, old, new, if since { &[] } else { &drafts }, &earlier);
        let rest: Vec<&wire::EarlierComment> =
            earlier.into_iter().filter(|c| !shown.contains(&c.thread_id.as_str())).collect();
        render_elsewhere(&mut page, &rest);
    }
    // Earlier comments on files this round does not change (any more).
    let elsewhere: Vec<&wire::EarlierComment> =
        round.earlier.iter().filter(|c| !round.files.iter().any(|f| f.path == c.path)).collect();
    if !elsewhere.is_empty() {
        page.blank();
        page.line(Style::Plain, "Earlier rounds' comments on files this round does not change:");
        render_elsewhere(&mut page, &elsewhere);
    }
    page.blank();
    match &round.answered {
        Some(answered) => render_sent(&mut page, round, answered),
        None => render_drafts(&mut page, round),
    }
    page
}

/// The drafts of a waiting round, and how to comment and submit.
fn render_drafts(page: &mut Page, round: &wire::RoundForReview) {
    match round.drafts.len() {
        0 => page.line(Style::Plain, "No comments yet."),
        n => {
            page.line(Style::Plain, format!("{n} draft comment(s), sent when you submit:"));
            for draft in &round.drafts {
                page.line(Style::Comment, format!("  {}", draft_line(draft)));
            }
        }
    }
    let id = &round.review_id;
    page.line(
        Style::Hint,
        format!(
            "Comment: parley review comment {id} FILE:LINE[-LINE] [--side old] [--severity S] [--suggest TEXT] MESSAGE"
        ),
    );
    page.line(
        Style::Hint,
        format!("Submit:  parley review submit {id} --approve | --request-changes | --comment [-m SUMMARY]"),
    );
}

/// What the person sent for an answered round: their comments with their
/// severity, and their summary.
fn render_sent(page: &mut Page, round: &wire::RoundForReview, answered: &wire::AnsweredRound) {
    let comments = answered.review["comments"].as_array().map(Vec::as_slice).unwrap_or_default();
    match comments.len() {
        0 => page.line(Style::Plain, "Sent with no comments."),
        n => page.line(Style::Plain, format!("{n} comment(s) sent:")),
    }
    for comment in comments {
        let text = |key: &str| comment[key].as_str().unwrap_or_default();
        let place = match (comment["file"].as_str(), comment["line"].as_u64()) {
            (Some(file), Some(line)) => format!(" {file}:{line}"),
            (Some(file), None) => format!(" {file}"),
            _ => String::new(),
        };
        let fix = match comment["suggested_fix"].as_str() {
            Some(fix) => format!(" — suggests: {}", first_line(fix)),
            None => String::new(),
        };
        page.line(Style::Comment, format!("  [{}]{place}: {}{fix}", text("severity"), first_line(text("comment"))));
    }
    page.line(
        Style::Hint,
        format!(
            "This round was answered; `parley sessions show {} --round {}` prints the review as the agent got it.",
            round.review_id, round.round
        ),
    );
}

/// Earlier rounds' comments that sit on no line the diff shows (an
/// unchanged file, or lines far from any change), each with its place, so a
/// comment is never hidden from the person because its lines did not change.
fn render_elsewhere(page: &mut Page, earlier: &[&wire::EarlierComment]) {
    for comment in earlier {
        let lines = if comment.line == comment.end_line {
            format!("{}", comment.line + 1)
        } else {
            format!("{}-{}", comment.line + 1, comment.end_line + 1)
        };
        page.line(
            Style::Comment,
            format!(
                "            ◂ round {} ({}) {}:{}: {}",
                comment.round,
                comment.state,
                comment.path,
                lines,
                first_line(&comment.body)
            ),
        );
    }
}

/// One file's diff with three lines of context, numbered on both sides; the
/// ids of the threads of the earlier comments it showed under their lines.
fn render_file<'c>(
    page: &mut Page,
    old: &str,
    new: &str,
    drafts: &[&wire::Draft],
    earlier: &[&'c wire::EarlierComment],
) -> Vec<&'c str> {
    let mut shown = Vec::new();
    let diff = similar::TextDiff::from_lines(old, new);
    for (index, group) in diff.grouped_ops(3).iter().enumerate() {
        if index > 0 {
            page.line(Style::Gap, "  ⋯");
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let (old_no, new_no) = (change.old_index(), change.new_index());
                let number = |n: Option<usize>| n.map_or_else(|| "    ".to_owned(), |n| format!("{:>4}", n + 1));
                let (sign, style) = match change.tag() {
                    similar::ChangeTag::Delete => ('-', Style::Removed),
                    similar::ChangeTag::Insert => ('+', Style::Added),
                    similar::ChangeTag::Equal => (' ', Style::Plain),
                };
                let text = change.value().trim_end_matches(['\n', '\r']);
                page.line(style, format!("{} {} │{sign}{text}", number(old_no), number(new_no)));
                for draft in drafts.iter().filter(|d| ends_here(d, old_no, new_no)) {
                    page.line(Style::Comment, format!("            ▸ {}", draft_line(draft)));
                }
                for comment in earlier.iter().filter(|c| new_no == Some(c.end_line as usize)) {
                    shown.push(comment.thread_id.as_str());
                    page.line(
                        Style::Comment,
                        format!(
                            "            ◂ round {} ({}): {}",
                            comment.round,
                            comment.state,
                            first_line(&comment.body)
                        ),
                    );
                }
            }
        }
    }
    shown
}

/// Whether a draft is shown under this line: after the last line it covers.
fn ends_here(draft: &wire::Draft, old: Option<usize>, new: Option<usize>) -> bool {
    let at = if draft.side == "old" { old } else { new };
    at == Some(draft.end_line as usize)
}

/// A draft on one line: its id, place, side, severity when given, comment
/// and suggestion.
pub fn draft_line(draft: &wire::Draft) -> String {
    let lines = if draft.start_line == draft.end_line {
        format!("{}", draft.start_line + 1)
    } else {
        format!("{}-{}", draft.start_line + 1, draft.end_line + 1)
    };
    let side = if draft.side == "old" { " (old side)" } else { "" };
    let severity = match &draft.severity {
        Some(severity) => format!(" [{severity}]"),
        None => String::new(),
    };
    let suggestion = match &draft.suggestion {
        Some(text) => format!(" — suggests: {}", first_line(text)),
        None => String::new(),
    };
    format!("{} {}:{lines}{side}{severity}: {}{suggestion}", draft.id, draft.path, first_line(&draft.body))
}

/// The first line of `text` with something on it.
pub fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(side: &str, severity: Option<&str>) -> wire::Draft {
        wire::Draft {
            id: "d1".into(),
            path: "a.txt".into(),
            side: side.into(),
            start_line: 1,
            end_line: 1,
            body: "why remove this?".into(),
            suggestion: None,
            severity: severity.map(str::to_owned),
            author: "ana".into(),
            at: String::new(),
        }
    }

    #[test]
    fn a_draft_on_a_removed_line_shows_under_it() {
        let draft = draft("old", None);
        let mut page = Page::default();
        render_file(&mut page, "one\ntwo\nthree\n", "one\nthree\n", &[&draft], &[]);
        let out = page.text(false);
        let lines: Vec<&str> = out.lines().collect();
        let removed = lines.iter().position(|l| l.ends_with("│-two")).expect("the removed line");
        assert!(lines[removed + 1].contains("d1 a.txt:2 (old side): why remove this?"), "{out}");
    }

    #[test]
    fn a_drafts_severity_is_shown_when_given() {
        assert_eq!(draft_line(&draft("old", Some("critical"))), "d1 a.txt:2 (old side) [critical]: why remove this?");
        assert_eq!(draft_line(&draft("new", None)), "d1 a.txt:2: why remove this?");
    }

    #[test]
    fn added_and_removed_lines_are_coloured_and_context_is_not() {
        let mut page = Page::default();
        render_file(&mut page, "one\ntwo\n", "one\nthree\n", &[], &[]);
        let out = page.text(true);
        assert!(out.contains("   1    1 │ one\n"), "{out:?}");
        assert!(out.contains("\x1b[31m   2      │-two\x1b[0m\n"), "{out:?}");
        assert!(out.contains("\x1b[32m        2 │+three\x1b[0m\n"), "{out:?}");
    }
}
