//! Lenient readers for a review's fields: whatever shape a model is likely to print (a bare sentence for an object, a string for a number, null for anything) is read as the nearest value of seed 004's format.
//!
//! Each reader goes through `serde_json::Value`, so they serve JSON only,
//! which is all a reviewer prints and all the audit tree stores.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde_json::{Map, Value};

use super::{DesignCompliance, MissingRequirement, ReviewComment, SummaryCounts, TestResults, Violation};

/// An item of a list that a reviewer may write as a bare sentence instead of
/// an object.
pub(super) trait FromText: DeserializeOwned {
    /// What the item is, for error messages.
    const WHAT: &'static str;
    fn from_text(text: String) -> Self;
}

impl FromText for ReviewComment {
    const WHAT: &'static str = "comment";
    fn from_text(comment: String) -> Self {
        ReviewComment { comment, ..ReviewComment::default() }
    }
}

impl FromText for MissingRequirement {
    const WHAT: &'static str = "missing requirement";
    fn from_text(requirement: String) -> Self {
        MissingRequirement { requirement, ..MissingRequirement::default() }
    }
}

impl FromText for Violation {
    const WHAT: &'static str = "design violation";
    fn from_text(issue: String) -> Self {
        Violation { issue, ..Violation::default() }
    }
}

/// A list of objects, any of which may be a bare sentence; null is empty and a
/// single object is a list of one.
pub(super) fn list<'de, D: Deserializer<'de>, T: FromText>(deserializer: D) -> Result<Vec<T>, D::Error> {
    let items = match Value::deserialize(deserializer)? {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        one => vec![one],
    };
    items
        .into_iter()
        .filter_map(|item| match item {
            Value::Null => None,
            Value::String(text) if text.trim().is_empty() => None,
            Value::String(text) => Some(Ok(T::from_text(text))),
            other => Some(serde_json::from_value(other).map_err(|e| D::Error::custom(format!("a {}: {e}", T::WHAT)))),
        })
        .collect()
}

/// Text, from a string or any scalar; null is empty.
pub(super) fn string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(text(Value::deserialize(deserializer)?).unwrap_or_default())
}

/// Text, absent when null or blank.
pub(super) fn opt_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(text(Value::deserialize(deserializer)?).filter(|t| !t.trim().is_empty()))
}

/// Strings from a list of strings, numbers, or objects naming a test.
pub(super) fn string_list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let items = match Value::deserialize(deserializer)? {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        one => vec![one],
    };
    Ok(items
        .into_iter()
        .filter_map(|item| match item {
            Value::Object(mut fields) => ["name", "test"]
                .iter()
                .find_map(|key| fields.remove(*key).and_then(text))
                .or_else(|| Some(Value::Object(fields).to_string())),
            other => text(other),
        })
        .filter(|t| !t.trim().is_empty())
        .collect())
}

fn text(value: Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(text),
        Value::Array(items) => {
            let lines: Vec<String> = items.into_iter().filter_map(text).collect();
            Some(lines.join("\n"))
        }
        other => Some(other.to_string()),
    }
}

/// A line number from 42, 42.0, "42", "L42", "42-50" or [42, 50]; absent for
/// anything else, including 0.
pub(super) fn line<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    Ok(line_of(&Value::deserialize(deserializer)?))
}

fn line_of(value: &Value) -> Option<u32> {
    let line = match value {
        Value::Number(n) => match n.as_u64() {
            Some(n) => u32::try_from(n).ok(),
            None => n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= f64::from(u32::MAX)).map(|f| f as u32),
        },
        Value::String(s) => {
            let s = s.trim();
            let s = s.strip_prefix(['L', 'l']).unwrap_or(s);
            let digits = s.find(|c: char| !c.is_ascii_digit()).map_or(s, |end| &s[..end]);
            digits.parse().ok()
        }
        Value::Array(items) => items.first().and_then(line_of),
        _ => None,
    };
    line.filter(|&n| n > 0)
}

/// true, false, or their spellings as strings; absent for anything else.
pub(super) fn opt_bool<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    Ok(bool_of(&Value::deserialize(deserializer)?))
}

fn bool_of(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_lowercase().as_str() {
            "true" | "yes" | "pass" | "passed" | "passing" | "ok" | "success" => Some(true),
            "false" | "no" | "fail" | "failed" | "failing" | "failure" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the tests passed: required, so a stored result keeps its outcome.
pub(super) fn passed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    bool_of(&Value::deserialize(deserializer)?)
        .ok_or_else(|| D::Error::custom("test_results.passed must be true or false"))
}

/// Test results: absent when null or not an object. A missing or unreadable
/// `passed` is read from whether any test is listed as failing.
pub(super) fn test_results<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<TestResults>, D::Error> {
    let Value::Object(mut fields) = Value::deserialize(deserializer)? else {
        return Ok(None);
    };
    if fields.get("passed").and_then(bool_of).is_none() {
        let failing = match fields.get("failing_tests") {
            Some(Value::Array(tests)) => !tests.is_empty(),
            Some(Value::String(test)) => !test.trim().is_empty(),
            _ => false,
        };
        fields.insert("passed".into(), Value::Bool(!failing));
    }
    serde_json::from_value(Value::Object(fields)).map(Some).map_err(D::Error::custom)
}

/// Design compliance from an object, a bare true or false, or a bare list of
/// violations; anything else says nothing.
pub(super) fn design_compliance<'de, D: Deserializer<'de>>(deserializer: D) -> Result<DesignCompliance, D::Error> {
    let fields = match Value::deserialize(deserializer)? {
        Value::Object(fields) => fields,
        Value::Bool(follows) => {
            return Ok(DesignCompliance { follows_architecture: Some(follows), ..Default::default() });
        }
        violations @ Value::Array(_) => Map::from_iter([("major_violations".to_owned(), violations)]),
        _ => return Ok(DesignCompliance::default()),
    };
    serde_json::from_value(Value::Object(fields)).map_err(|e| D::Error::custom(format!("design_compliance: {e}")))
}

/// The reviewer's counts, or zeros when they are unreadable: the parser
/// recomputes them anyway.
pub(super) fn summary<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SummaryCounts, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(deserializer)?).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::StructuredReview;

    /// Reads `review` (with an assessment added) and compares what it
    /// serializes to with `want` (with the same assessment and empty parts
    /// added).
    fn check(review: serde_json::Value, want: serde_json::Value) {
        let mut input = review.clone();
        input["overall_assessment"] = json!("lgtm");
        let read: StructuredReview = serde_json::from_value(input).expect("reads");
        let mut full = json!({
            "design_compliance": {"major_violations": []},
            "comments": [],
            "missing_requirements": [],
            "summary": {"design_violations": 0, "critical_issues": 0, "major_issues": 0, "minor_issues": 0, "suggestions": 0},
            "overall_assessment": "lgtm",
        });
        for (key, value) in want.as_object().expect("want is an object") {
            full[key] = value.clone();
        }
        assert_eq!(serde_json::to_value(&read).expect("serializes"), full, "reading {review}");
    }

    #[test]
    fn shapes() {
        let cases = [
            (json!({}), json!({})),
            (json!({"comments": null, "design_compliance": null, "test_results": null}), json!({})),
            (
                json!({"comments": ["just a sentence", "", null]}),
                json!({"comments": [{"type": "", "severity": "minor", "comment": "just a sentence"}]}),
            ),
            (
                json!({"comments": {"comment": "one", "severity": "HIGH", "line": "L12-14", "path": "a.rs", "extra": 1}}),
                json!({"comments": [{"type": "", "file": "a.rs", "line": 12, "severity": "major", "comment": "one"}]}),
            ),
            (
                json!({"comments": [{"message": "m", "line": 7.0, "fix": ["a", "b"], "category": "", "file": null}]}),
                json!({"comments": [{"type": "", "line": 7, "severity": "minor", "comment": "m", "suggested_fix": "a\nb"}]}),
            ),
            (
                json!({"comments": [{"comment": "zero", "line": 0, "severity": 3}]}),
                json!({"comments": [{"type": "", "severity": "minor", "comment": "zero"}]}),
            ),
            (
                json!({"missing_requirements": ["display_name", {"requirement": "created_at", "severity": "blocker", "design_doc_reference": "d.md#x"}]}),
                json!({"missing_requirements": [
                    {"requirement": "display_name", "severity": "minor"},
                    {"requirement": "created_at", "design_doc_reference": "d.md#x", "severity": "critical"},
                ]}),
            ),
            (
                json!({"design_compliance": false}),
                json!({"design_compliance": {"follows_architecture": false, "major_violations": []}}),
            ),
            (
                json!({"design_compliance": ["pools own exercises"]}),
                json!({"design_compliance": {"major_violations": [{"issue": "pools own exercises", "description": "", "impact": "", "recommendation": ""}]}}),
            ),
            (
                json!({"design_compliance": {"follows_architecture": "yes"}}),
                json!({"design_compliance": {"follows_architecture": true, "major_violations": []}}),
            ),
            (
                json!({"test_results": {"summary": "2 failed", "failing_tests": ["a", {"name": "b"}], "coverage": 92}}),
                json!({"test_results": {"passed": false, "summary": "2 failed", "failing_tests": ["a", "b"], "coverage": "92"}}),
            ),
            (
                json!({"test_results": {"passed": "passed"}}),
                json!({"test_results": {"passed": true, "summary": "", "failing_tests": []}}),
            ),
            (json!({"test_results": "not run"}), json!({})),
            (json!({"summary": "three issues"}), json!({})),
            (
                json!({"summary": {"critical_issues": 2}}),
                json!({"summary": {"design_violations": 0, "critical_issues": 2, "major_issues": 0, "minor_issues": 0, "suggestions": 0}}),
            ),
        ];
        for (review, want) in cases {
            check(review, want);
        }
    }
}
