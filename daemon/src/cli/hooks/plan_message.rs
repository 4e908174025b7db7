//! What a plan's verdict says to the model: the imperative to revise the
//! plan, with the person's summary and every comment with the lines it is
//! on (quoted) and any suggested replacement; or, for a plan approved with
//! comments, the notes to carry out with it.

use parley_protocol::methods as wire;

/// The instruction to revise a plan the person asked changes to; `again`
/// says how this host presents a revised plan.
pub fn revise(verdict: &wire::PlanVerdict, again: &str) -> String {
    let mut text = format!(
        "The person reviewing your plan in Parley asked for changes. Revise the plan: address every point below, \
         then {again}. Do not start implementing until the revised plan is approved.\n"
    );
    push_points(&mut text, verdict.summary.as_deref(), &verdict.comments);
    text
}

/// The notes of a plan approved with comments, to follow while carrying it out.
pub fn notes(comments: &[wire::PlanComment]) -> String {
    let count = match comments.len() {
        1 => "1 comment".to_owned(),
        n => format!("{n} comments"),
    };
    let mut text = format!(
        "The person reviewing your plan in Parley approved it with {count}. Carry out the plan taking each into \
         account:\n"
    );
    push_points(&mut text, None, comments);
    text
}

fn push_points(text: &mut String, summary: Option<&str>, comments: &[wire::PlanComment]) {
    if let Some(summary) = summary.map(str::trim).filter(|s| !s.is_empty()) {
        text.push_str(&format!("\nSummary: {summary}\n"));
    }
    for (n, comment) in comments.iter().enumerate() {
        let lines = if comment.start_line == comment.end_line {
            format!("line {}", comment.start_line)
        } else {
            format!("lines {}-{}", comment.start_line, comment.end_line)
        };
        text.push_str(&format!("\n{}. On {lines} of {}:\n", n + 1, comment.path));
        push_quoted(text, &comment.quote);
        text.push_str(&format!("   {}\n", comment.body.trim()));
        if let Some(suggestion) = &comment.suggestion {
            text.push_str("   Suggested replacement for those lines:\n");
            push_quoted(text, suggestion);
        }
    }
}

fn push_quoted(text: &mut String, quoted: &str) {
    for line in quoted.lines() {
        text.push_str(&format!("   > {line}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revision_quotes_each_comment_and_its_suggestion() {
        let verdict = wire::PlanVerdict {
            review_id: "2026-11-26-001".into(),
            round: 1,
            outcome: "changes_requested".into(),
            summary: Some("Close".into()),
            comments: vec![wire::PlanComment {
                path: "plan.md".into(),
                start_line: 3,
                end_line: 4,
                quote: "a\nb".into(),
                body: "Why?".into(),
                suggestion: Some("c".into()),
            }],
            reason: None,
        };
        let text = revise(&verdict, "present it again");
        assert!(text.starts_with("The person reviewing your plan in Parley asked for changes. Revise the plan"));
        assert!(text.contains("\nSummary: Close\n"), "{text}");
        assert!(
            text.contains(
                "\n1. On lines 3-4 of plan.md:\n   > a\n   > b\n   Why?\n   Suggested replacement for those lines:\n   > c\n"
            ),
            "{text}"
        );
    }
}
