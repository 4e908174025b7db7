//! The reviewer prompt: seed 004's template filled in, the exact JSON the reviewer must print, and the diff.

use std::fmt::Write as _;

use super::{StructuredReview, fence_for};

/// A comment thread the reviewer is shown, with what was said in it.
#[derive(Debug, Clone, Default)]
pub struct PromptThread {
    /// `path:line`, relative to the repository root.
    pub place: String,
    /// For a finding: `round 1, minor, style`.
    pub label: Option<String>,
    pub resolved: bool,
    /// (author, body), oldest first.
    pub comments: Vec<(String, String)>,
}

/// What goes into the reviewer prompt.
#[derive(Debug, Clone, Default)]
pub struct PromptInput {
    pub summary: String,
    /// (name or path, text) of each relevant document; text may be empty when unreadable.
    pub docs: Vec<(String, String)>,
    pub changed_files: Vec<String>,
    pub focus_areas: Vec<String>,
    /// Earlier rounds of the same session, oldest first.
    pub previous_rounds: Vec<(u32, StructuredReview)>,
    /// The threads earlier rounds' findings became, with what was said in
    /// them since and whether each is still open.
    pub finding_threads: Vec<PromptThread>,
    /// Open threads people (or agents) left on the changed files.
    pub open_threads: Vec<PromptThread>,
    pub diff: String,
    /// The output of the configured test command, when one ran.
    pub test_output: Option<String>,
}

const INTRO: &str = "You are a senior software engineer conducting a code review. Your primary goal is to ensure the implementation correctly follows the design documents and architectural decisions.";

const PRIORITIES: &str = "\
## Review Priorities (in order of importance)

1. **Design Compliance** (MOST CRITICAL)
   - Does the implementation follow the architecture described in design docs?
   - Are data models and schemas aligned with specifications?
   - Are the relationships between entities correct?
   - Does the code respect the intended boundaries and abstractions?

2. **Missing Requirements**
   - What required fields, methods, or features are missing?
   - Are all specified behaviors implemented?
   - Do data structures contain all necessary properties?

3. **Structural Issues**
   - Are interfaces and contracts properly defined?
   - Is the code organized according to the architectural patterns?
   - Are dependencies flowing in the right direction?

4. **Implementation Quality**
   - Bugs, security issues, and performance problems
   - Code modularity and SOLID principles
   - Test coverage and quality
   - Error handling and edge cases
";

const OUTPUT_FORMAT: &str = "\
## Review Output Format

Focus on high-level architectural issues first. Line-by-line nitpicks are less important than design compliance.

Provide:
1. Design compliance assessment with specific violations
2. List of missing requirements from the design docs
3. Critical implementation issues (if any)
4. Overall assessment (needs_changes/lgtm_with_suggestions/lgtm)

Feedback style: name the code, what it does, and what the design says instead. For example (the angle brackets stand for names from the change under review):
- \"<type> has <field>, but <design doc> says <what it specifies>\"
- \"<function> returns <shape>, but its caller in <file> expects <other shape>\"
- \"Missing from <design doc section>: <the fields or behaviours not implemented>\"
";

/// Seed 004's review format, less the fields the server fills in (id,
/// timestamp, status, round) and the summary counts, which it recomputes.
const JSON_FORMAT: &str = r#"{
  "design_compliance": {
    "follows_architecture": true,
    "major_violations": [
      {
        "issue": "<the departure from the design, in a few words>",
        "description": "<what the code does, where, and what the design doc says instead>",
        "impact": "critical",
        "recommendation": "<what to change>"
      }
    ]
  },
  "comments": [
    {
      "type": "specific",
      "file": "<path of a changed file>",
      "line": 42,
      "severity": "major",
      "category": "bug",
      "comment": "<the problem, and why it matters>",
      "suggested_fix": "<optional: code or guidance>"
    }
  ],
  "missing_requirements": [
    {
      "requirement": "<what the design docs require that the change does not do>",
      "design_doc_reference": "<doc path>#<section>",
      "severity": "major"
    }
  ],
  "test_results": {
    "passed": true,
    "summary": "<N passed, N failed, N skipped>",
    "failing_tests": [],
    "coverage": "<percent, when known>"
  },
  "overall_assessment": "needs_changes"
}"#;

const JSON_RULES: &str = "\
- `design_compliance.follows_architecture`: true or false. `major_violations`: one object per departure from the design; `impact` is \"critical\" or \"major\". Use an empty list when there are none.
- `comments[].type`: \"specific\" for a comment on a file and line, with `file` (relative to the repository root) and `line` (in the new version of the file); \"general\" for the change as a whole, without `file` and `line`.
- `severity`: one of \"critical\", \"major\", \"minor\", \"suggestion\".
- `category`: one of \"architecture\", \"design\", \"bug\", \"performance\", \"style\", \"security\", \"missing_feature\".
- `suggested_fix` is optional; `design_doc_reference` is optional.
- `missing_requirements`: one object per requirement of the design docs the change does not meet; an empty list when there are none.
- `test_results`: include it only if you ran the tests or were given their output; otherwise leave it out.
- `overall_assessment`: one of \"needs_changes\", \"lgtm_with_suggestions\", \"lgtm\".
";

/// How much of an earlier comment the prompt repeats.
const PREVIOUS_COMMENT_CHARS: usize = 300;

/// Seed 004's reviewer prompt template, filled in, followed by the exact JSON
/// the reviewer must print (and only that), then the diff in a fence longer
/// than any backtick run inside it.
pub fn build_prompt(input: &PromptInput) -> String {
    let mut out = format!("{INTRO}\n\n## Review Request\n{}\n", non_empty(&input.summary, "No summary given."));

    out.push_str("\n## Relevant Documentation\n");
    if input.docs.is_empty() {
        out.push_str("None provided.\n");
    }
    for (name, text) in &input.docs {
        let _ = writeln!(out, "\n### {}\n", name.trim());
        if text.trim().is_empty() {
            out.push_str("(This document could not be read.)\n");
        } else {
            let fence = fence_for(text);
            let _ = writeln!(out, "{fence}{}\n{}\n{fence}", language(name), text.trim_end());
        }
    }

    out.push_str("\n## Changed Files\n");
    list(&mut out, &input.changed_files, "None listed; see the diff below.");

    out.push_str("\n## Focus Areas\n");
    list(&mut out, &input.focus_areas, "None specified");

    let _ = write!(out, "\n{PRIORITIES}\n## Previous Review Rounds\n");
    previous_rounds(&mut out, &input.previous_rounds);
    if !input.finding_threads.is_empty() {
        out.push_str(
            "\n## What Became of Earlier Findings\nEach finding of an earlier round is a comment thread on the code, \
             which the author and people answer and resolve. Read the replies: a finding resolved with a good reason is \
             settled; repeat one only if the change still shows the problem, at the same file and line.\n",
        );
        threads(&mut out, &input.finding_threads);
    }
    if !input.open_threads.is_empty() {
        out.push_str(
            "\n## Open Comments on the Changed Files\nPeople left these comments on the code under review and they are \
             not resolved. Check whether the change addresses each; say so in your review when it does not.\n",
        );
        threads(&mut out, &input.open_threads);
    }

    if let Some(output) = &input.test_output {
        let fence = fence_for(output);
        let _ = write!(
            out,
            "\n## Test Output\nThe configured test command ran on this change and printed:\n\n{fence}text\n{}\n{fence}\n",
            output.trim_end()
        );
    }

    let _ = write!(out, "\n{OUTPUT_FORMAT}\n");
    out.push_str(match input.test_output {
        Some(_) => "Before giving LGTM, check the test output above and verify the implementation works as designed.\n",
        None => "Before giving LGTM, run the test suite and verify the implementation works as designed.\n",
    });

    let _ = write!(
        out,
        "\nPrint ONLY the following JSON object, filled in with your review: no prose before or after it and no \
         markdown. The values below are examples of the format.\n\n```json\n{JSON_FORMAT}\n```\n\n{JSON_RULES}"
    );

    let fence = fence_for(&input.diff);
    let diff = input.diff.trim_end_matches(['\n', '\r']);
    let _ = write!(out, "\n## Diff\n\n{fence}diff\n{diff}\n{fence}\n");
    if diff.trim().is_empty() {
        out.push_str("\nThe diff is empty.\n");
    }
    out.push_str("\nReview the diff above and print only the JSON object described in Review Output Format.\n");
    out
}

fn non_empty<'a>(text: &'a str, otherwise: &'a str) -> &'a str {
    if text.trim().is_empty() { otherwise } else { text.trim() }
}

fn list(out: &mut String, items: &[String], otherwise: &str) {
    let items: Vec<&str> = items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()).collect();
    if items.is_empty() {
        let _ = writeln!(out, "{otherwise}");
    }
    for item in items {
        let _ = writeln!(out, "- {item}");
    }
}

/// A fence's language for a document, from its extension.
fn language(name: &str) -> &str {
    let extension = name.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
    match extension {
        "md" | "markdown" => "markdown",
        "rs" => "rust",
        "ts" | "tsx" => "typescript",
        "js" => "javascript",
        "py" => "python",
        "json" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        _ => "",
    }
}

fn threads(out: &mut String, threads: &[PromptThread]) {
    for thread in threads {
        let state = if thread.resolved { "resolved" } else { "open" };
        let label = thread.label.as_deref().map(|l| format!(" ({l})")).unwrap_or_default();
        let _ = writeln!(out, "\n- `{}`{label}: {state}", thread.place);
        for (author, body) in &thread.comments {
            let body = body.trim().replace('\n', "\n    ");
            let _ = writeln!(out, "  - {author}: {body}");
        }
    }
}

fn previous_rounds(out: &mut String, rounds: &[(u32, StructuredReview)]) {
    if rounds.is_empty() {
        out.push_str("This is the first round.\n");
        return;
    }
    out.push_str(
        "Check whether each finding below was addressed by this change; repeat only those that still apply.\n",
    );
    for (round, review) in rounds {
        let _ = writeln!(out, "\n### Round {round}: {}", review.overall_assessment);
        for violation in &review.design_compliance.major_violations {
            let _ = writeln!(out, "- design violation ({}): {}", violation.severity(), shorten(&violation.issue));
        }
        for missing in &review.missing_requirements {
            let _ = writeln!(out, "- missing requirement ({}): {}", missing.severity, shorten(&missing.requirement));
        }
        for comment in &review.comments {
            let place = match (&comment.file, comment.line) {
                (Some(file), Some(line)) => format!(" {file}:{line}"),
                (Some(file), None) => format!(" {file}"),
                (None, _) => String::new(),
            };
            let _ = writeln!(out, "- {}{place}: {}", comment.severity, shorten(&comment.comment));
        }
        if review.severities().next().is_none() {
            out.push_str("- no findings\n");
        }
        if let Some(tests) = &review.test_results {
            let outcome = if tests.passed { "passed" } else { "failed" };
            let _ = writeln!(out, "- tests {outcome}: {}", shorten(&tests.summary));
        }
    }
}

/// One line of at most [`PREVIOUS_COMMENT_CHARS`] characters.
fn shorten(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(PREVIOUS_COMMENT_CHARS) {
        Some((end, _)) => format!("{}…", line[..end].trim_end()),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structured_review::parse_reviewer_output;

    /// Builds the prompt for `input` and checks that each of `want` appears, in
    /// order, and that none of `absent` does.
    fn check(name: &str, input: &PromptInput, want: &[&str], absent: &[&str]) {
        let prompt = build_prompt(input);
        let mut rest = prompt.as_str();
        for needle in want {
            let at =
                rest.find(needle).unwrap_or_else(|| panic!("{name}: {needle:?} missing or out of order in:\n{prompt}"));
            rest = &rest[at + needle.len()..];
        }
        for needle in absent {
            assert!(!prompt.contains(needle), "{name}: {needle:?} should not be in:\n{prompt}");
        }
    }

    #[test]
    fn prompts() {
        let earlier = parse_reviewer_output(
            r#"{"comments":[{"file":"src/a.rs","line":42,"severity":"major","comment":"unwrap on\nuser input"}],
                "missing_requirements":["display_name"],"overall_assessment":"needs_changes"}"#,
        )
        .expect("a review");
        let full = PromptInput {
            summary: "Added case pools".into(),
            docs: vec![
                ("docs/design.md".into(), "# Design\nPools are independent.\n```\ncode\n```".into()),
                ("docs/missing.md".into(), String::new()),
            ],
            changed_files: vec!["src/a.rs".into(), "src/b.rs".into()],
            focus_areas: vec!["schema".into()],
            previous_rounds: vec![(1, earlier)],
            diff: "--- a/README.md\n+++ b/README.md\n@@ -1 +1,3 @@\n+```rust\n+fn x() {}\n+```\n".into(),
            test_output: Some("test pools ... ok\ntest result: ok. 1 passed".into()),
            ..PromptInput::default()
        };
        let empty = PromptInput::default();
        let cases: Vec<(&str, PromptInput, Vec<&str>, Vec<&str>)> = vec![
            (
                "every input",
                full,
                vec![
                    "You are a senior software engineer conducting a code review.",
                    "## Review Request\nAdded case pools\n",
                    "## Relevant Documentation\n",
                    "### docs/design.md\n\n````markdown\n# Design\nPools are independent.\n```\ncode\n```\n````\n",
                    "### docs/missing.md\n\n(This document could not be read.)\n",
                    "## Changed Files\n- src/a.rs\n- src/b.rs\n",
                    "## Focus Areas\n- schema\n",
                    "## Review Priorities (in order of importance)",
                    "## Previous Review Rounds\n",
                    "### Round 1: needs_changes\n",
                    "- missing requirement (minor): display_name\n",
                    "- major src/a.rs:42: unwrap on user input\n",
                    "## Test Output\n",
                    "```text\ntest pools ... ok\ntest result: ok. 1 passed\n```\n",
                    "## Review Output Format",
                    "check the test output above",
                    "Print ONLY the following JSON object",
                    "```json\n{\n  \"design_compliance\": {",
                    "\"overall_assessment\": \"needs_changes\"\n}\n```",
                    "\"critical\", \"major\", \"minor\", \"suggestion\"",
                    "## Diff\n\n````diff\n--- a/README.md\n+++ b/README.md\n@@ -1 +1,3 @@\n+```rust\n+fn x() {}\n+```\n````\n",
                    "print only the JSON object",
                ],
                vec!["This is the first round.", "None specified", "run the test suite", "The diff is empty."],
            ),
            (
                "nothing given",
                empty,
                vec![
                    "## Review Request\nNo summary given.\n",
                    "## Relevant Documentation\nNone provided.\n",
                    "## Changed Files\nNone listed; see the diff below.\n",
                    "## Focus Areas\nNone specified\n",
                    "## Previous Review Rounds\nThis is the first round.\n",
                    "Before giving LGTM, run the test suite and verify the implementation works as designed.",
                    "## Diff\n\n```diff\n\n```\n",
                    "The diff is empty.",
                ],
                vec!["## Test Output"],
            ),
        ];
        for (name, input, want, absent) in cases {
            check(name, &input, &want, &absent);
        }
    }

    /// The JSON the prompt shows is itself a review the parser reads.
    #[test]
    fn the_examples_name_no_project_of_their_own() {
        // Concrete names from some other code base bias a reviewer towards
        // them; the examples are placeholders for the change at hand.
        let prompt = build_prompt(&PromptInput::default());
        for name in ["CasePool", "exercise", "pool_info", "display_name", "src/utils.ts"] {
            assert!(!prompt.contains(name), "{name:?} is in the prompt");
        }
        assert!(prompt.contains("the change under review"), "{prompt}");
    }

    #[test]
    fn the_format_shown_parses() {
        let review = parse_reviewer_output(JSON_FORMAT).expect("the format parses");
        assert_eq!(review.comments.len(), 1);
        assert_eq!(review.missing_requirements.len(), 1);
        assert_eq!(review.design_compliance.major_violations.len(), 1);
    }
}
