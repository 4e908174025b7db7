//! A review as markdown, for the editor's review panel and the tool's text output; file references are written `` [`file:line`][] `` so the editor turns them into links.

use std::fmt::Write as _;

use super::{Assessment, ReviewComment, Severity, StructuredReview, fence_for};

/// Renders a review: a title with the review id and round, the verdict, design
/// compliance, missing requirements, comments grouped by severity (most severe
/// first), test results and the summary counts.
pub fn render_markdown(review_id: &str, round: u32, review: &StructuredReview, verdict: Assessment) -> String {
    render(review_id, round, review, verdict, false)
}

/// A review a person wrote: as [`render_markdown`], without the sections a
/// person does not fill in (design compliance, missing requirements, tests)
/// when they are empty.
pub fn render_persons_markdown(review_id: &str, round: u32, review: &StructuredReview, verdict: Assessment) -> String {
    render(review_id, round, review, verdict, true)
}

fn render(review_id: &str, round: u32, review: &StructuredReview, verdict: Assessment, by_person: bool) -> String {
    let mut out = format!("# Review {review_id}, round {round}\n\n## Verdict: {}\n", label(verdict));
    if verdict != review.overall_assessment {
        let _ = writeln!(
            out,
            "\nThe reviewer said {}; the severity thresholds or failing tests made the verdict stricter.",
            label(review.overall_assessment)
        );
    }
    for overall in review.comments.iter().filter(|c| c.is_overall()) {
        let _ = writeln!(out, "\n> {}", overall.comment.trim().replace('\n', "\n> "));
    }
    let compliance = &review.design_compliance;
    if !by_person || compliance.follows_architecture.is_some() || !compliance.major_violations.is_empty() {
        design_compliance(&mut out, review);
    }
    if !by_person || !review.missing_requirements.is_empty() {
        missing_requirements(&mut out, review);
    }
    comments(&mut out, review);
    if !by_person || review.test_results.is_some() {
        test_results(&mut out, review);
    }
    summary(&mut out, review);
    out
}

fn label(assessment: Assessment) -> &'static str {
    match assessment {
        Assessment::NeedsChanges => "❌ needs changes",
        Assessment::LgtmWithSuggestions => "⚠️ LGTM with suggestions",
        Assessment::Lgtm => "✅ LGTM",
    }
}

fn design_compliance(out: &mut String, review: &StructuredReview) {
    let compliance = &review.design_compliance;
    let violations = &compliance.major_violations;
    let status = match (violations.len(), compliance.follows_architecture) {
        (0, Some(true)) => "✅ follows the architecture".to_owned(),
        (0, Some(false)) => "❌ does not follow the architecture".to_owned(),
        (0, None) => "no violations reported".to_owned(),
        (1, _) => "❌ 1 major violation".to_owned(),
        (n, _) => format!("❌ {n} major violations"),
    };
    let _ = writeln!(out, "\n## Design compliance: {status}");
    for (i, violation) in violations.iter().enumerate() {
        let title = if violation.issue.trim().is_empty() { "Design violation" } else { violation.issue.trim() };
        let _ = writeln!(out, "\n### {}. {title}\n", i + 1);
        let impact =
            if violation.impact.trim().is_empty() { violation.severity().as_str() } else { violation.impact.trim() };
        let _ = writeln!(out, "**Impact**: {impact}");
        if !violation.description.trim().is_empty() {
            let _ = writeln!(out, "\n{}", violation.description.trim());
        }
        if !violation.recommendation.trim().is_empty() {
            let _ = writeln!(out, "\n**Fix**: {}", violation.recommendation.trim());
        }
    }
}

fn missing_requirements(out: &mut String, review: &StructuredReview) {
    out.push_str("\n## Missing requirements\n\n");
    if review.missing_requirements.is_empty() {
        out.push_str("None.\n");
        return;
    }
    let mut missing: Vec<_> = review.missing_requirements.iter().collect();
    missing.sort_by_key(|m| m.severity);
    for requirement in missing {
        let _ = write!(out, "- **{}**: {}", requirement.severity, indent(requirement.requirement.trim()));
        if let Some(reference) = &requirement.design_doc_reference {
            let _ = write!(out, " (see {})", code(reference.trim()));
        }
        out.push('\n');
    }
}

fn comments(out: &mut String, review: &StructuredReview) {
    out.push_str("\n## Comments\n");
    if review.findings().next().is_none() {
        out.push_str("\nNone.\n");
        return;
    }
    for severity in Severity::ALL {
        let group: Vec<_> = review.findings().filter(|c| c.severity == severity).collect();
        if group.is_empty() {
            continue;
        }
        let heading = match severity {
            Severity::Critical => "Critical",
            Severity::Major => "Major",
            Severity::Minor => "Minor",
            Severity::Suggestion => "Suggestions",
        };
        let _ = writeln!(out, "\n### {heading} ({})\n", group.len());
        for comment in group {
            write_comment(out, comment);
        }
    }
}

fn write_comment(out: &mut String, comment: &ReviewComment) {
    out.push_str("- ");
    if let Some(file) = &comment.file {
        out.push_str(&reference(file, comment.line));
        out.push(' ');
    }
    if let Some(category) = &comment.category {
        let _ = write!(out, "_{}_: ", category.trim());
    }
    let _ = writeln!(out, "{}", indent(comment.comment.trim()));
    if let Some(fix) = &comment.suggested_fix {
        let fix = fix.trim_end_matches(['\n', '\r']);
        if fix.contains('\n') {
            let fence = fence_for(fix);
            let _ = writeln!(out, "\n  Suggested fix:\n\n  {fence}\n{}\n  {fence}\n", indent_all(fix));
        } else {
            let _ = writeln!(out, "\n  Suggested fix: {}\n", fix.trim());
        }
    }
}

/// `` [`file:line`][] ``, or `` [`file`][] `` without a line: the form the
/// editor makes a link. A path the form cannot carry is written as code.
fn reference(file: &str, line: Option<u32>) -> String {
    let target = match line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_owned(),
    };
    if target.contains('`') || (line.is_none() && target.contains(char::is_whitespace)) {
        code(&target)
    } else {
        format!("[`{target}`][]")
    }
}

/// Inline code that survives backticks in `text`.
fn code(text: &str) -> String {
    let ticks = "`".repeat(text.split(|c| c != '`').map(str::len).max().unwrap_or(0) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// Indents the lines after the first, so text stays in its list item.
fn indent(text: &str) -> String {
    text.replace('\n', "\n  ")
}

fn indent_all(text: &str) -> String {
    text.lines()
        .map(|line| if line.is_empty() { String::new() } else { format!("  {line}") })
        .collect::<Vec<_>>()
        .join("\n")
}

fn test_results(out: &mut String, review: &StructuredReview) {
    out.push_str("\n## Test results\n\n");
    let Some(tests) = &review.test_results else {
        out.push_str("Not run.\n");
        return;
    };
    out.push_str(if tests.passed { "✅ passed" } else { "❌ failed" });
    if !tests.summary.trim().is_empty() {
        let _ = write!(out, ": {}", tests.summary.trim());
    }
    if let Some(coverage) = &tests.coverage {
        let _ = write!(out, " (coverage {})", coverage.trim());
    }
    out.push('\n');
    if !tests.failing_tests.is_empty() {
        out.push_str("\nFailing tests:\n\n");
        for test in &tests.failing_tests {
            let _ = writeln!(out, "- {}", code(test.trim()));
        }
    }
}

fn summary(out: &mut String, review: &StructuredReview) {
    let counts = review.counts();
    let _ = write!(
        out,
        "\n## Summary\n\n\
         | Design violations | Critical | Major | Minor | Suggestions |\n\
         | ---: | ---: | ---: | ---: | ---: |\n\
         | {} | {} | {} | {} | {} |\n",
        counts.design_violations, counts.critical_issues, counts.major_issues, counts.minor_issues, counts.suggestions
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Renders `review` with `verdict` and checks that each of `want` appears,
    /// in order, and that none of `absent` does.
    fn check(review: serde_json::Value, verdict: Assessment, want: &[&str], absent: &[&str]) {
        let read: StructuredReview = serde_json::from_value(review).expect("a review");
        let shown = render_markdown("2024-01-15-001", 2, &read, verdict);
        let mut rest = shown.as_str();
        for needle in want {
            let at = rest.find(needle).unwrap_or_else(|| panic!("{needle:?} missing or out of order in:\n{shown}"));
            rest = &rest[at + needle.len()..];
        }
        for needle in absent {
            assert!(!shown.contains(needle), "{needle:?} should not be in:\n{shown}");
        }
    }

    #[test]
    fn a_persons_review_leaves_out_the_sections_a_person_does_not_fill_in() {
        let review: StructuredReview = serde_json::from_value(json!({
            "overall_assessment": "lgtm",
            "comments": [{"type": "general", "category": "summary", "comment": "Ship it"}],
        }))
        .expect("a review");
        let shown = render_persons_markdown("2024-01-15-001", 1, &review, Assessment::Lgtm);
        assert!(shown.contains("> Ship it") && shown.contains("## Comments"), "{shown}");
        for absent in ["Design compliance", "Missing requirements", "Test results"] {
            assert!(!shown.contains(absent), "{absent}: {shown}");
        }
        assert!(render_markdown("2024-01-15-001", 1, &review, Assessment::Lgtm).contains("Design compliance"));
    }

    #[test]
    fn a_persons_summary_leads_the_review_and_is_no_finding() {
        let review = json!({
            "overall_assessment": "needs_changes",
            "comments": [
                {"type": "general", "category": "summary", "severity": "suggestion", "comment": "Close, two things"},
                {"type": "specific", "file": "cart.rs", "line": 6, "severity": "major", "comment": "Tax is 8%"},
            ],
        });
        check(
            review.clone(),
            Assessment::NeedsChanges,
            &["## Verdict: ❌ needs changes", "> Close, two things", "### Major (1)", "Tax is 8%"],
            &["### Suggestions"],
        );
        let read: StructuredReview = serde_json::from_value(review).expect("a review");
        assert_eq!((read.counts().major_issues, read.counts().suggestions), (1, 0));
    }

    #[test]
    fn renders() {
        let full = json!({
            "design_compliance": {"follows_architecture": false, "major_violations": [{
                "issue": "Schema misalignment", "description": "pools own exercises", "impact": "critical",
                "recommendation": "remove exercise_id",
            }]},
            "comments": [
                {"type": "general", "severity": "suggestion", "comment": "nice tests"},
                {"type": "specific", "file": "src/a.rs", "line": 42, "severity": "major", "category": "bug",
                 "comment": "unwrap on user input\nsecond line", "suggested_fix": "let x = y?;\nreturn ```fence```;"},
                {"type": "specific", "file": "src/b.rs", "severity": "critical", "comment": "races", "suggested_fix": "lock it"},
            ],
            "missing_requirements": [{"requirement": "display_name", "design_doc_reference": "design.md#pools", "severity": "major"}],
            "test_results": {"passed": false, "summary": "1 failed", "failing_tests": ["pool::creates"], "coverage": "92%"},
            "overall_assessment": "lgtm",
        });
        let cases: Vec<(serde_json::Value, Assessment, Vec<&str>, Vec<&str>)> = vec![
            (
                full,
                Assessment::NeedsChanges,
                vec![
                    "# Review 2024-01-15-001, round 2\n",
                    "## Verdict: ❌ needs changes",
                    "The reviewer said ✅ LGTM",
                    "## Design compliance: ❌ 1 major violation",
                    "### 1. Schema misalignment",
                    "**Impact**: critical",
                    "pools own exercises",
                    "**Fix**: remove exercise_id",
                    "## Missing requirements",
                    "- **major**: display_name (see `design.md#pools`)",
                    "## Comments",
                    "### Critical (1)",
                    "- [`src/b.rs`][] races",
                    "Suggested fix: lock it",
                    "### Major (1)",
                    "- [`src/a.rs:42`][] _bug_: unwrap on user input\n  second line",
                    "  ````\n  let x = y?;\n  return ```fence```;\n  ````",
                    "### Suggestions (1)",
                    "- nice tests",
                    "## Test results",
                    "❌ failed: 1 failed (coverage 92%)",
                    "- `pool::creates`",
                    "## Summary",
                    "| 1 | 1 | 2 | 0 | 1 |",
                ],
                vec!["### Minor"],
            ),
            (
                json!({"design_compliance": {"follows_architecture": true}, "overall_assessment": "lgtm"}),
                Assessment::Lgtm,
                vec![
                    "## Verdict: ✅ LGTM",
                    "## Design compliance: ✅ follows the architecture",
                    "## Missing requirements\n\nNone.",
                    "## Comments\n\nNone.",
                    "## Test results\n\nNot run.",
                    "| 0 | 0 | 0 | 0 | 0 |",
                ],
                vec!["The reviewer said", "###"],
            ),
            (
                json!({"comments": [{"file": "my file.rs", "severity": "minor", "comment": "spaces"}], "overall_assessment": "lgtm_with_suggestions"}),
                Assessment::LgtmWithSuggestions,
                vec![
                    "## Verdict: ⚠️ LGTM with suggestions",
                    "no violations reported",
                    "### Minor (1)",
                    "- `my file.rs` spaces",
                ],
                vec!["[`my file.rs`][]"],
            ),
        ];
        for (review, verdict, want, absent) in cases {
            check(review, verdict, &want, &absent);
        }
    }
}
