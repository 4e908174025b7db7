//! A review round as a pull request review: the person's summary (or the
//! reviewer's assessment) as the review's body, each finding's thread on
//! its line of the head as a review comment, the findings that cannot be
//! placed listed in the body, and the event from the person's verdict.
//! Decided without side effects; `pushing` places the threads.

use super::pushing::{self, GITHUB_BODY_LIMIT, NewThread, NotSent, Texts};
use crate::feedback::Thread;
use crate::github::review::{DraftThread, ReviewEvent};
use crate::sessions::{Round, Session};
use crate::structured_review::Assessment;

/// What pushing a round sends.
#[derive(Debug, Clone)]
pub struct RoundReview {
    /// The review's body.
    pub body: String,
    /// The findings' threads GitHub does not have yet, on the head's lines.
    pub threads: Vec<NewThread>,
    /// Findings' threads that could not be placed (listed in the body).
    pub not_placed: Vec<NotSent>,
    /// Findings' threads already on GitHub (an earlier `pr push` sent them).
    pub already: usize,
}

/// The event a round's review goes with when none is given: a person's
/// verdict as they gave it; a reviewer command's findings as a comment, as
/// an approval or a request for changes on GitHub is the person's to give,
/// not a program's.
pub fn default_event(round: &Round) -> ReviewEvent {
    match round.person_verdict.as_deref() {
        Some("approve") => return ReviewEvent::Approve,
        Some("request_changes") => return ReviewEvent::RequestChanges,
        Some("comment") => return ReviewEvent::Comment,
        _ => {}
    }
    // A round answered before the verdict itself was kept: by its assessment.
    match (round.by_person(), round.verdict) {
        (false, _) => ReviewEvent::Comment,
        (true, Assessment::NeedsChanges) => ReviewEvent::RequestChanges,
        (true, Assessment::Lgtm | Assessment::LgtmWithSuggestions) => ReviewEvent::Approve,
    }
}

/// The review for `round` of `session`: its findings' threads among
/// `threads` (this workspace's).
pub fn plan(session: &Session, round: &Round, threads: &[&Thread], texts: &Texts) -> RoundReview {
    let mut review = RoundReview { body: String::new(), threads: Vec::new(), not_placed: Vec::new(), already: 0 };
    let ours = threads.iter().filter(|t| {
        t.finding.as_deref().is_some_and(|f| f.review_id == session.id && f.round == round.round)
            && t.standing.walkthrough.is_none()
    });
    for thread in ours {
        if thread.standing.github.is_some() {
            review.already += 1;
            continue;
        }
        let Some(first) = thread.comments.first() else { continue };
        let line = thread.span.start_line + 1;
        let placed = pushing::head_lines(thread, texts).and_then(|lines| match pushing::too_long(&first.body) {
            Some(why) => Err(why),
            None => Ok(lines),
        });
        match placed {
            Ok((start, end)) => review.threads.push(NewThread {
                parley_thread: thread.id.clone(),
                draft: DraftThread {
                    path: thread.path.clone(),
                    side: "RIGHT".into(),
                    start_line: start,
                    line: end,
                    body: first.body.clone(),
                },
                first: first.clone(),
                later: thread.comments[1..].iter().filter(|c| pushing::too_long(&c.body).is_none()).cloned().collect(),
            }),
            Err(reason) => review.not_placed.push(NotSent { path: thread.path.clone(), line, reason }),
        }
    }
    review.body = body(session, round, threads, &review.not_placed);
    review
}

/// What a round's review body ends with, to find it on GitHub again (an
/// HTML comment: GitHub does not show it).
pub fn marker(review_id: &str, round: u32) -> String {
    format!("<!-- parley review {review_id} round {round} -->")
}

/// The review's body: the person's summary, or the reviewer's assessment;
/// then what could not go on a line: general findings, missing
/// requirements, findings that could not be placed; cut to GitHub's limit
/// with a pointer to the whole review.
pub fn body(session: &Session, round: &Round, threads: &[&Thread], not_placed: &[NotSent]) -> String {
    let review = &round.review;
    let overall: Vec<&str> =
        review.comments.iter().filter(|c| c.is_overall()).map(|c| c.comment.trim()).filter(|c| !c.is_empty()).collect();
    let reviewer = round.reviewer.trim_end_matches(crate::sessions::IN_PERSON);
    let verdict = format!("Review round {} by {reviewer}: {}.", round.round, round.verdict);
    let head = match (round.by_person(), overall.is_empty()) {
        (_, true) => verdict,
        (true, false) => overall.join("\n\n"),
        (false, false) => format!("{verdict}\n\n{}", overall.join("\n\n")),
    };
    let mut items: Vec<String> = Vec::new();
    let threaded = |path: &str| {
        threads.iter().any(|t| {
            t.path == path && t.finding.as_deref().is_some_and(|f| f.review_id == session.id && f.round <= round.round)
        })
    };
    // A line each: the review's body is no place for a whole finding.
    let short = |text: &str| {
        let first = text.trim().lines().next().unwrap_or_default();
        let cut: String = first.chars().take(300).collect();
        if cut.len() < text.trim().len() { format!("{cut}…") } else { cut }
    };
    for finding in review.findings() {
        let text = short(&finding.comment);
        match (finding.file.as_deref(), finding.line) {
            (Some(path), Some(line)) if line > 0 && threaded(path) => {}
            (Some(path), Some(line)) if line > 0 => {
                items.push(format!("- `{path}:{line}` ({}): {text}", finding.severity))
            }
            (Some(path), _) => items.push(format!("- `{path}` ({}): {text}", finding.severity)),
            _ => items.push(format!("- ({}) {text}", finding.severity)),
        }
    }
    for missing in &review.missing_requirements {
        items.push(format!("- missing ({}): {}", missing.severity, short(&missing.requirement)));
    }
    for violation in &review.design_compliance.major_violations {
        items.push(format!("- design: {}: {}", short(&violation.issue), short(&violation.description)));
    }
    for thread in not_placed {
        let text = threads
            .iter()
            .find(|t| t.path == thread.path && t.span.start_line + 1 == thread.line)
            .and_then(|t| t.comments.first())
            .map(|c| short(&c.body))
            .unwrap_or_default();
        items.push(format!(
            "- `{}:{}` (not on the pull request's lines: {}): {text}",
            thread.path, thread.line, thread.reason
        ));
    }
    let marker = format!("\n\n{}", marker(&session.id, round.round));
    let mut text = head;
    if !items.is_empty() {
        text.push_str("\n\nNot on a line:\n");
    }
    let room = GITHUB_BODY_LIMIT.saturating_sub(marker.chars().count() + 200);
    let total = items.len();
    for (shown, item) in items.into_iter().enumerate() {
        if text.chars().count() + item.chars().count() + 1 > room {
            text.push_str(&format!(
                "\n- and {} more: `parley sessions show {} --round {}` shows the whole review",
                total - shown,
                session.id,
                round.round
            ));
            break;
        }
        text.push('\n');
        text.push_str(&item);
    }
    if text.chars().count() > room {
        text = text.chars().take(room).collect::<String>() + "…";
    }
    text.push_str(&marker);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(reviewer: &str, assessment: &str) -> Round {
        serde_json::from_value(serde_json::json!({
            "round": 1, "at": "2026-11-26T10:00:00Z", "summary": "s", "focus_areas": [], "scope": "all",
            "changed_files": [], "review": { "overall_assessment": assessment }, "verdict": assessment,
            "reviewer": reviewer, "elapsed_ms": 1,
        }))
        .expect("a round")
    }

    #[test]
    fn a_persons_verdict_is_the_reviews_event_and_a_reviewer_commands_is_a_comment() {
        assert_eq!(default_event(&round("ana (in person)", "needs_changes")), ReviewEvent::RequestChanges);
        assert_eq!(default_event(&round("ana (in person)", "lgtm")), ReviewEvent::Approve);
        assert_eq!(default_event(&round("ana (in person)", "lgtm_with_suggestions")), ReviewEvent::Approve);
        // A program's verdict does not approve or block in the person's name.
        assert_eq!(default_event(&round("claude", "lgtm")), ReviewEvent::Comment);
        assert_eq!(default_event(&round("claude", "needs_changes")), ReviewEvent::Comment);
        // A person's comment stays a comment, with comments (stored as
        // needs_changes) or without (lgtm_with_suggestions).
        for assessment in ["needs_changes", "lgtm_with_suggestions"] {
            let commented = Round { person_verdict: Some("comment".into()), ..round("ana (in person)", assessment) };
            assert_eq!(default_event(&commented), ReviewEvent::Comment);
        }
        let approved = Round { person_verdict: Some("approve".into()), ..round("ana (in person)", "lgtm") };
        assert_eq!(default_event(&approved), ReviewEvent::Approve);
    }
}
