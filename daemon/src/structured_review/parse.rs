//! Reading a reviewer's stdout as a review: plain JSON, a fenced block in prose, an envelope (claude's `--output-format json`, a content array, JSON lines) around either, or the outermost object that parses.

use std::fmt;

use serde_json::{Map, Value};

use super::{Assessment, StructuredReview};

/// Fields an envelope may hold the review in, as text or as JSON.
const ENVELOPE_FIELDS: &[&str] = &[
    "result",
    "structured_output",
    "response",
    "content",
    "text",
    "output",
    "message",
    "review",
    "item",
    "msg",
    "choices",
];

/// An object with any of these fields is taken for a review.
const REVIEW_FIELDS: &[&str] = &["overall_assessment", "comments", "design_compliance", "missing_requirements"];

/// Where the assessment may be, first found wins; `status` is the stored
/// review's field in seed 004, which a reviewer copying that format fills in.
const ASSESSMENT_FIELDS: &[&str] = &["overall_assessment", "assessment", "verdict", "status"];

/// How many times text found inside JSON is searched again for JSON.
const MAX_TEXT_DEPTH: usize = 4;

/// How much of the output an error quotes.
const EXCERPT_CHARS: usize = 400;

/// Why a reviewer's output could not be read as a review. `Display` says so
/// and quotes the start of what it printed, so the agent sees what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub reason: String,
    /// The first ~400 characters of the output, trimmed, with an ellipsis when
    /// there was more.
    pub excerpt: String,
}

impl ParseError {
    pub fn new(reason: impl Into<String>, output: &str) -> ParseError {
        ParseError { reason: reason.into(), excerpt: excerpt(output) }
    }
}

fn excerpt(output: &str) -> String {
    let output = output.trim();
    match output.char_indices().nth(EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", output[..end].trim_end()),
        None => output.to_owned(),
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}; check that the reviewer command runs and prints the review JSON the prompt asks for",
            self.reason
        )?;
        if self.excerpt.is_empty() { Ok(()) } else { write!(f, "; it printed:\n{}", self.excerpt) }
    }
}

impl std::error::Error for ParseError {}

/// Reads a reviewer's stdout: plain JSON; JSON in a ```json (or bare ```)
/// fenced block anywhere in prose; a JSON envelope holding the review, as
/// JSON or as text holding either of those, in its `result`, `response`,
/// `content`, `text`, `output`, `message` or `review` field (recursively, and
/// in arrays such as a `content: [{type: "text", text}]` list or JSON lines);
/// else the outermost `{...}` that parses. When several objects look like a
/// review the last wins, as a model's final answer comes last.
///
/// A missing or unrecognised `overall_assessment` is derived from the
/// findings; the summary counts are recomputed from the content; a comment's
/// missing `type` is "specific" when it names a file and "general" otherwise.
pub fn parse_reviewer_output(stdout: &str) -> Result<StructuredReview, ParseError> {
    if stdout.trim().is_empty() {
        return Err(ParseError::new("the reviewer printed nothing", stdout));
    }
    let mut search = Search::default();
    search.text(stdout, 0);
    // The last review printed that reads wins; when none reads, the error is
    // the last one's, as that is the one the reviewer meant.
    let mut last_error = None;
    for candidate in search.reviews.iter().rev() {
        match to_review(candidate) {
            Ok(review) => return Ok(review),
            Err(e) => {
                last_error.get_or_insert(e);
            }
        }
    }
    let reason = match (last_error, search.reported_error) {
        (Some(e), _) => format!("the reviewer's review does not match the review format: {e}"),
        (None, true) => "the reviewer reported an error instead of a review".to_owned(),
        (None, false) => {
            format!("the reviewer's output holds no review (no JSON object with {})", REVIEW_FIELDS.join(", "))
        }
    };
    Err(ParseError::new(reason, stdout))
}

#[derive(Default)]
struct Search {
    /// Objects that look like a review, in the order they were printed.
    reviews: Vec<Map<String, Value>>,
    /// Whether an envelope said the run failed (claude's `is_error`, an
    /// `error` field), to explain an output with no review.
    reported_error: bool,
}

impl Search {
    fn text(&mut self, text: &str, depth: usize) {
        if depth > MAX_TEXT_DEPTH {
            return;
        }
        let text = text.trim();
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            self.value(&value, depth);
            return;
        }
        let before = self.reviews.len();
        for block in json_fences(text) {
            if let Ok(value) = serde_json::from_str::<Value>(block) {
                self.value(&value, depth);
            }
        }
        if self.reviews.len() > before {
            return;
        }
        // The outermost `{...}` that parses; when it holds no review, the
        // objects inside it are tried in turn.
        let mut from = 0;
        while let Some(offset) = text[from..].find('{') {
            let start = from + offset;
            let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
            let before = self.reviews.len();
            match stream.next() {
                Some(Ok(object @ Value::Object(_))) => {
                    self.value(&object, depth);
                    // `{` is one byte, so `start + 1` is on a character.
                    from = if self.reviews.len() > before { start + stream.byte_offset() } else { start + 1 };
                }
                _ => from = start + 1,
            }
        }
    }

    fn value(&mut self, value: &Value, depth: usize) {
        match value {
            Value::Object(fields) if REVIEW_FIELDS.iter().any(|f| fields.contains_key(*f)) => {
                self.reviews.push(fields.clone());
            }
            Value::Object(fields) => {
                let failed = fields.get("is_error") == Some(&Value::Bool(true))
                    || fields.get("subtype").and_then(Value::as_str).is_some_and(|s| s.starts_with("error"))
                    || fields.get("error").is_some_and(|e| !e.is_null());
                self.reported_error |= failed;
                for field in ENVELOPE_FIELDS {
                    if let Some(inner) = fields.get(*field) {
                        self.value(inner, depth);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| self.value(item, depth)),
            Value::String(text) => self.text(text, depth + 1),
            _ => {}
        }
    }
}

/// The contents of fenced blocks marked json (or not marked at all), in order;
/// an unclosed fence runs to the end.
fn json_fences(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    // The open fence: its backtick count, where its content starts, and whether
    // it holds JSON.
    let mut open: Option<(usize, usize, bool)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let trimmed = line.trim();
        let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
        match open {
            None if ticks >= 3 => {
                let info = trimmed[ticks..].trim().to_lowercase();
                open = Some((ticks, at, info.is_empty() || info.starts_with("json")));
            }
            Some((need, content, is_json)) if ticks >= need && trimmed.len() == ticks => {
                if is_json {
                    blocks.push(&text[content..start]);
                }
                open = None;
            }
            _ => {}
        }
    }
    if let Some((_, content, true)) = open {
        blocks.push(&text[content..]);
    }
    blocks
}

fn to_review(fields: &Map<String, Value>) -> Result<StructuredReview, String> {
    let stated = ASSESSMENT_FIELDS
        .iter()
        .find_map(|field| fields.get(*field).and_then(Value::as_str).and_then(Assessment::from_name));
    let mut fields = fields.clone();
    // Stands in for a missing or unrecognised assessment until the findings
    // are read and can decide it.
    fields.insert("overall_assessment".into(), Value::String(Assessment::Lgtm.as_str().into()));
    let mut review: StructuredReview = serde_json::from_value(Value::Object(fields)).map_err(|e| e.to_string())?;
    for comment in &mut review.comments {
        tidy_comment(comment);
    }
    review.overall_assessment = stated.unwrap_or_else(|| review.assessment_from_findings());
    review.summary = review.counts();
    Ok(review)
}

/// Splits a `file` written as "path:line" when no line is given, writes its
/// path `/`-separated (a reviewer on Windows may write `src\a.rs`), and
/// settles the comment's type.
fn tidy_comment(comment: &mut super::ReviewComment) {
    if let Some(file) = &mut comment.file {
        let trimmed = file.trim();
        if let (None, Some((path, line))) = (comment.line, trimmed.rsplit_once(':'))
            && !path.is_empty()
            && let Ok(line @ 1..) = line.parse::<u32>()
        {
            comment.line = Some(line);
            *file = crate::wire_path::slashed(path);
        } else {
            *file = crate::wire_path::slashed(trimmed);
        }
    }
    let kind = comment.r#type.trim().to_lowercase();
    comment.r#type = match kind.as_str() {
        "specific" | "general" => kind,
        _ if comment.file.is_some() => "specific".into(),
        _ => "general".into(),
    };
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The review most cases wrap, and what it reads as.
    const REVIEW: &str = r#"{"comments":[{"type":"specific","file":"src/a.rs","line":42,"severity":"major","comment":"unwrap on user input"}],"overall_assessment":"needs_changes"}"#;

    fn review_read() -> Value {
        json!({
            "design_compliance": {"major_violations": []},
            "comments": [{"type": "specific", "file": "src/a.rs", "line": 42, "severity": "major", "comment": "unwrap on user input"}],
            "missing_requirements": [],
            "summary": {"design_violations": 0, "critical_issues": 0, "major_issues": 1, "minor_issues": 0, "suggestions": 0},
            "overall_assessment": "needs_changes",
        })
    }

    enum Want {
        /// The review as it serializes; `null` parts are filled from an empty review.
        Review(Value),
        /// Substrings of the error's `Display`.
        Error(&'static [&'static str]),
    }

    fn check(name: &str, stdout: &str, want: Want) {
        let got = parse_reviewer_output(stdout);
        match (got, want) {
            (Ok(review), Want::Review(mut want)) => {
                let empty = json!({
                    "design_compliance": {"major_violations": []},
                    "comments": [],
                    "missing_requirements": [],
                    "summary": {"design_violations": 0, "critical_issues": 0, "major_issues": 0, "minor_issues": 0, "suggestions": 0},
                });
                for (key, value) in empty.as_object().expect("object") {
                    if want.get(key).is_none() {
                        want[key] = value.clone();
                    }
                }
                assert_eq!(serde_json::to_value(&review).expect("serializes"), want, "{name}");
            }
            (Err(e), Want::Error(needles)) => {
                let shown = e.to_string();
                for needle in needles {
                    assert!(shown.contains(needle), "{name}: {needle:?} not in {shown:?}");
                }
            }
            (Ok(review), Want::Error(_)) => panic!("{name}: expected an error, read {review:?}"),
            (Err(e), Want::Review(_)) => panic!("{name}: expected a review, got: {e}"),
        }
    }

    #[test]
    fn outputs() {
        let claude = |result: &str| {
            json!({"type": "result", "subtype": "success", "is_error": false, "result": result, "session_id": "s", "total_cost_usd": 0.1})
                .to_string()
        };
        let cases: Vec<(&str, String, Want)> = vec![
            ("plain", REVIEW.into(), Want::Review(review_read())),
            ("plain with whitespace", format!("\n\n  {REVIEW}\n"), Want::Review(review_read())),
            (
                "fenced in prose",
                format!("Here is my review.\n\n```json\n{REVIEW}\n```\n\nLet me know if you have questions."),
                Want::Review(review_read()),
            ),
            ("bare fence", format!("Review:\n```\n{REVIEW}\n```"), Want::Review(review_read())),
            ("unclosed fence", format!("Review:\n```json\n{REVIEW}\n"), Want::Review(review_read())),
            (
                "fence after a fence of another language",
                format!("```rust\nfn main() {{ }}\n```\nand\n````JSON\n{REVIEW}\n````"),
                Want::Review(review_read()),
            ),
            ("claude envelope", claude(REVIEW), Want::Review(review_read())),
            (
                "claude envelope with a fence",
                claude(&format!("I reviewed the diff.\n\n```json\n{REVIEW}\n```")),
                Want::Review(review_read()),
            ),
            (
                "content array",
                json!({"role": "assistant", "content": [{"type": "text", "text": "Thinking."}, {"type": "text", "text": format!("```json\n{REVIEW}\n```")}]}).to_string(),
                Want::Review(review_read()),
            ),
            (
                "review object in an envelope",
                json!({"response": {"review": serde_json::from_str::<Value>(REVIEW).expect("json")}}).to_string(),
                Want::Review(review_read()),
            ),
            (
                "json lines",
                format!(
                    "{}\n{}\n",
                    json!({"type": "thread.started"}),
                    json!({"type": "item.completed", "item": {"type": "agent_message", "text": REVIEW}})
                ),
                Want::Review(review_read()),
            ),
            ("trailing prose", format!("{REVIEW}\n\nI hope this helps."), Want::Review(review_read())),
            (
                "prose around an unfenced object",
                format!("Sure! {{not json}} Here it is: {REVIEW}. Done."),
                Want::Review(review_read()),
            ),
            (
                "the last review wins",
                format!("Draft:\n```json\n{{\"overall_assessment\": \"lgtm\"}}\n```\nFinal:\n```json\n{REVIEW}\n```"),
                Want::Review(review_read()),
            ),
            (
                "a review nested in an unknown wrapper",
                format!("Result: {{\"data\": {{\"attempt\": 1, \"payload\": {REVIEW}}}}}"),
                Want::Review(review_read()),
            ),
            (
                "a quoted object that is not a review is skipped",
                format!("The config is {{\"a\": 1}} and my review is {REVIEW}"),
                Want::Review(review_read()),
            ),
            (
                "missing assessment with a major comment",
                r#"{"comments":[{"file":"src/a.rs:42","severity":"high","comment":"unwrap on user input"}]}"#.into(),
                Want::Review(review_read()),
            ),
            (
                "missing assessment with a minor comment",
                r#"{"comments":[{"severity":"nit","comment":"rename"}]}"#.into(),
                Want::Review(json!({
                    "comments": [{"type": "general", "severity": "suggestion", "comment": "rename"}],
                    "summary": {"design_violations": 0, "critical_issues": 0, "major_issues": 0, "minor_issues": 0, "suggestions": 1},
                    "overall_assessment": "lgtm_with_suggestions",
                })),
            ),
            (
                "missing assessment with a critical violation",
                r#"{"design_compliance":{"follows_architecture":false,"major_violations":[{"issue":"pools own exercises","impact":"CRITICAL"}]}}"#.into(),
                Want::Review(json!({
                    "design_compliance": {"follows_architecture": false, "major_violations": [
                        {"issue": "pools own exercises", "description": "", "impact": "CRITICAL", "recommendation": ""},
                    ]},
                    "summary": {"design_violations": 1, "critical_issues": 0, "major_issues": 0, "minor_issues": 0, "suggestions": 0},
                    "overall_assessment": "needs_changes",
                })),
            ),
            ("missing assessment and no findings", r#"{"comments":[]}"#.into(), Want::Review(json!({"overall_assessment": "lgtm"}))),
            (
                "the template's alternatives as the assessment",
                r#"{"comments":[],"overall_assessment":"needs_changes|lgtm_with_suggestions|lgtm"}"#.into(),
                Want::Review(json!({"overall_assessment": "lgtm"})),
            ),
            (
                "lenient spellings",
                r#"{"comments":[{"type":"Specific","file":" src/a.rs ","line":"42","severity":"Major","comment":"unwrap on user input"}],"overall_assessment":"Changes Requested"}"#.into(),
                Want::Review(review_read()),
            ),
            ("assessment under another name", r#"{"comments":[],"verdict":"Approved"}"#.into(), Want::Review(json!({"overall_assessment": "lgtm"}))),
            (
                "unknown fields ignored",
                r#"{"review_id":"2024-01-15-001","round":3,"timestamp":"t","mood":"grumpy","comments":[{"type":"specific","file":"src/a.rs","line":42,"severity":"major","comment":"unwrap on user input","confidence":0.9}],"overall_assessment":"needs_changes"}"#.into(),
                Want::Review(review_read()),
            ),
            (
                "summary recomputed",
                r#"{"comments":[{"type":"specific","file":"src/a.rs","line":42,"severity":"major","comment":"unwrap on user input"}],"summary":{"design_violations":9,"critical_issues":9,"major_issues":9,"minor_issues":9,"suggestions":9},"overall_assessment":"needs_changes"}"#.into(),
                Want::Review(review_read()),
            ),
            (
                "missing requirements and tests",
                r#"{"missing_requirements":[{"requirement":"display_name","severity":"major"}],"test_results":{"passed":true,"summary":"3 passed","failing_tests":[],"coverage":"92%"},"overall_assessment":"lgtm_with_suggestions"}"#.into(),
                Want::Review(json!({
                    "missing_requirements": [{"requirement": "display_name", "severity": "major"}],
                    "summary": {"design_violations": 0, "critical_issues": 0, "major_issues": 1, "minor_issues": 0, "suggestions": 0},
                    "test_results": {"passed": true, "summary": "3 passed", "failing_tests": [], "coverage": "92%"},
                    "overall_assessment": "lgtm_with_suggestions",
                })),
            ),
            ("rate limited", "Error: rate limited".into(), Want::Error(&["holds no review", "it printed:\nError: rate limited"])),
            ("empty", "".into(), Want::Error(&["the reviewer printed nothing; check that the reviewer command runs"])),
            ("blank", " \n\t\n".into(), Want::Error(&["the reviewer printed nothing"])),
            ("not a review", r#"{"error": "x"}"#.into(), Want::Error(&["reported an error instead of a review", r#"{"error": "x"}"#])),
            (
                "claude error envelope",
                json!({"type": "result", "subtype": "error_max_turns", "is_error": true, "result": ""}).to_string(),
                Want::Error(&["reported an error instead of a review", "error_max_turns"]),
            ),
            ("a json object with no review", r#"{"hello": "world"}"#.into(), Want::Error(&["holds no review", "hello"])),
            (
                "a malformed review",
                r#"{"comments":[{"comment":"x"}],"design_compliance":{"major_violations":[42]}}"#.into(),
                Want::Error(&["does not match the review format: design_compliance: a design violation: invalid type"]),
            ),
        ];
        for (name, stdout, want) in cases {
            check(name, &stdout, want);
        }
    }

    #[test]
    fn excerpts_are_short_and_cut_on_characters() {
        let garbage = format!("{}{}", "x".repeat(400), "Q".repeat(5000));
        let shown = parse_reviewer_output(&garbage).expect_err("garbage").to_string();
        assert!(shown.ends_with(&format!("it printed:\n{}…", "x".repeat(400))), "{shown}");
        assert!(!shown.contains('Q'), "{shown}");
        let error = parse_reviewer_output(&"é".repeat(1000)).expect_err("garbage");
        assert_eq!(error.excerpt, format!("{}…", "é".repeat(400)));
        let error = parse_reviewer_output("  short  \n").expect_err("garbage");
        assert_eq!(error.excerpt, "short");
    }
}
