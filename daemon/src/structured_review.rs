//! The structured review of seed 004: its shape, lenient parsing of what a reviewer prints, the verdict, a markdown rendering, and the reviewer prompt.
//!
//! Pure functions over strings and values: nothing here runs the reviewer,
//! reads a file or spawns a task, so everything is tested without a runtime.
//! The serializable types are the review as the `request_review` tool returns
//! it and as the audit tree stores it; they derive `JsonSchema` so the tool can
//! publish an output schema.

mod lenient;
mod markdown;
mod parse;
mod prompt;
mod verdict;

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use markdown::{render_markdown, render_persons_markdown};
pub use parse::{ParseError, parse_reviewer_output};
pub use prompt::{PromptInput, PromptThread, build_prompt};
pub use verdict::{Thresholds, verdict};

/// A review in seed 004's format. Deserialization is lenient: every field but
/// the assessment may be missing, unknown fields are ignored, and severities
/// accept common spellings. [`parse_reviewer_output`] is more lenient still: it
/// also derives a missing assessment and recomputes the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StructuredReview {
    /// Whether the change follows the design documents, and how it does not.
    #[serde(default, deserialize_with = "lenient::design_compliance")]
    pub design_compliance: DesignCompliance,
    /// Review comments, on a file and line or on the change as a whole.
    #[serde(default, deserialize_with = "lenient::list")]
    pub comments: Vec<ReviewComment>,
    /// Requirements of the design documents the change does not meet.
    #[serde(default, deserialize_with = "lenient::list")]
    pub missing_requirements: Vec<MissingRequirement>,
    /// Counts of the findings, recomputed from the content after parsing.
    #[serde(default, deserialize_with = "lenient::summary")]
    pub summary: SummaryCounts,
    /// The outcome of the test suite, when one ran.
    #[serde(default, deserialize_with = "lenient::test_results", skip_serializing_if = "Option::is_none")]
    pub test_results: Option<TestResults>,
    /// The reviewer's own assessment, before the configured thresholds apply.
    pub overall_assessment: Assessment,
}

/// Whether the change follows the design documents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DesignCompliance {
    /// Absent when the reviewer did not say.
    #[serde(default, deserialize_with = "lenient::opt_bool", skip_serializing_if = "Option::is_none")]
    pub follows_architecture: Option<bool>,
    #[serde(default, deserialize_with = "lenient::list")]
    pub major_violations: Vec<Violation>,
}

/// A departure from the design documents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Violation {
    /// A short title, e.g. "Schema misalignment with design document".
    #[serde(default, deserialize_with = "lenient::string")]
    pub issue: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub description: String,
    /// How bad it is, e.g. "critical"; a violation counts as a critical
    /// finding when this says critical and as a major one otherwise.
    #[serde(default, deserialize_with = "lenient::string")]
    pub impact: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub recommendation: String,
}

/// One review comment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewComment {
    /// "specific" (about a file and line) or "general".
    #[serde(rename = "type", default, deserialize_with = "lenient::string")]
    pub r#type: String,
    /// The file, relative to the repository root.
    #[serde(
        default,
        alias = "path",
        deserialize_with = "lenient::opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub file: Option<String>,
    /// The line in the new version of the file, from 1.
    #[serde(default, deserialize_with = "lenient::line", skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default)]
    pub severity: Severity,
    /// e.g. architecture, design, bug, performance, style, security, missing_feature.
    #[serde(default, deserialize_with = "lenient::opt_string", skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default, alias = "message", alias = "body", deserialize_with = "lenient::string")]
    pub comment: String,
    /// A code suggestion or architectural guidance.
    #[serde(default, alias = "fix", deserialize_with = "lenient::opt_string", skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<String>,
}

/// A requirement of the design documents the change does not meet.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MissingRequirement {
    #[serde(default, deserialize_with = "lenient::string")]
    pub requirement: String,
    /// Where the design documents state it, e.g. "design.md#schema".
    #[serde(default, deserialize_with = "lenient::opt_string", skip_serializing_if = "Option::is_none")]
    pub design_doc_reference: Option<String>,
    #[serde(default)]
    pub severity: Severity,
}

/// Counts of a review's findings. Design violations are counted on their own;
/// the issue counts are of comments and missing requirements together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SummaryCounts {
    pub design_violations: u32,
    pub critical_issues: u32,
    pub major_issues: u32,
    pub minor_issues: u32,
    pub suggestions: u32,
}

/// The outcome of the test suite.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestResults {
    #[serde(deserialize_with = "lenient::passed")]
    pub passed: bool,
    /// e.g. "87 tests passed, 0 failed, 3 skipped".
    #[serde(default, deserialize_with = "lenient::string")]
    pub summary: String,
    #[serde(default, deserialize_with = "lenient::string_list")]
    pub failing_tests: Vec<String>,
    /// e.g. "92%".
    #[serde(default, deserialize_with = "lenient::opt_string", skip_serializing_if = "Option::is_none")]
    pub coverage: Option<String>,
}

/// How bad a finding is, most severe first: the derived order sorts critical
/// findings before suggestions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Critical,
    Major,
    /// Also what an unrecognised or missing severity reads as.
    #[default]
    Minor,
    Suggestion,
}

/// A review's outcome, strictest first: the derived order makes the stricter
/// of two assessments the smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Assessment {
    NeedsChanges,
    LgtmWithSuggestions,
    Lgtm,
}

impl StructuredReview {
    /// The severity of every finding: comments, missing requirements, and
    /// design violations (critical or major by their impact).
    pub fn severities(&self) -> impl Iterator<Item = Severity> + '_ {
        let comments = self.findings().map(|c| c.severity);
        let missing = self.missing_requirements.iter().map(|m| m.severity);
        let violations = self.design_compliance.major_violations.iter().map(Violation::severity);
        comments.chain(missing).chain(violations)
    }

    /// The comments that are findings: all but the reviewer's overall words
    /// (see [`ReviewComment::is_overall`]).
    pub fn findings(&self) -> impl Iterator<Item = &ReviewComment> + '_ {
        self.comments.iter().filter(|c| !c.is_overall())
    }

    /// The counts of this review's content, whatever `summary` says.
    pub fn counts(&self) -> SummaryCounts {
        let mut counts = SummaryCounts {
            design_violations: count(self.design_compliance.major_violations.len()),
            ..SummaryCounts::default()
        };
        let severities =
            self.findings().map(|c| c.severity).chain(self.missing_requirements.iter().map(|m| m.severity));
        for severity in severities {
            let slot = match severity {
                Severity::Critical => &mut counts.critical_issues,
                Severity::Major => &mut counts.major_issues,
                Severity::Minor => &mut counts.minor_issues,
                Severity::Suggestion => &mut counts.suggestions,
            };
            *slot = slot.saturating_add(1);
        }
        counts
    }

    /// The assessment the findings call for, used when the reviewer gave none:
    /// any critical or major finding needs changes, any other finding makes it
    /// an LGTM with suggestions, and no finding an LGTM.
    pub fn assessment_from_findings(&self) -> Assessment {
        self.severities().fold(Assessment::Lgtm, |assessment, severity| {
            let called_for = match severity {
                Severity::Critical | Severity::Major => Assessment::NeedsChanges,
                Severity::Minor | Severity::Suggestion => Assessment::LgtmWithSuggestions,
            };
            assessment.min(called_for)
        })
    }
}

impl ReviewComment {
    /// Whether this is the reviewer's overall word on the change (a general
    /// comment of category `summary`, as a person's review summary is): not
    /// a finding, so not counted, and shown above the findings.
    pub fn is_overall(&self) -> bool {
        self.r#type == "general" && self.category.as_deref() == Some("summary") && self.file.is_none()
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Violation {
    /// Critical when the impact says critical (or blocker), major otherwise.
    pub fn severity(&self) -> Severity {
        match Severity::from_name(&self.impact) {
            Some(Severity::Critical) => Severity::Critical,
            _ => Severity::Major,
        }
    }
}

impl Severity {
    pub const ALL: [Severity; 4] = [Severity::Critical, Severity::Major, Severity::Minor, Severity::Suggestion];

    /// The name seed 004 uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Major => "major",
            Severity::Minor => "minor",
            Severity::Suggestion => "suggestion",
        }
    }

    /// Reads the spellings reviewers use, case-insensitively: blocker is
    /// critical, high and error are major, low, medium and warning are minor,
    /// nit, info and style are suggestions. `None` for anything else.
    pub fn from_name(name: &str) -> Option<Severity> {
        let name = normalise(name);
        let name = name.as_str();
        let severity = match name {
            "critical" | "blocker" | "blocking" | "crit" | "fatal" | "severe" => Severity::Critical,
            "major" | "high" | "error" | "important" | "serious" => Severity::Major,
            "minor" | "low" | "warning" | "warn" | "medium" | "moderate" => Severity::Minor,
            "suggestion" | "nit" | "nitpick" | "info" | "style" | "optional" | "trivial" | "note" => {
                Severity::Suggestion
            }
            _ => match name.strip_suffix('s') {
                Some(singular) if !singular.ends_with('s') => return Severity::from_name(singular),
                _ => return None,
            },
        };
        Some(severity)
    }

    /// Like [`Severity::from_name`], reading an unrecognised name as minor.
    pub fn lenient(name: &str) -> Severity {
        Severity::from_name(name).unwrap_or_default()
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Strict, for configuration: an unknown name is an error.
impl FromStr for Severity {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Severity::from_name(name)
            .ok_or_else(|| format!("unknown severity `{name}`; use critical, major, minor or suggestion"))
    }
}

/// Lenient: an unrecognised or missing severity reads as minor, so one odd
/// word from a reviewer does not lose its whole review.
impl<'de> Deserialize<'de> for Severity {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(name) => Severity::lenient(&name),
            _ => Severity::default(),
        })
    }
}

impl Assessment {
    /// The name seed 004 uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Assessment::NeedsChanges => "needs_changes",
            Assessment::LgtmWithSuggestions => "lgtm_with_suggestions",
            Assessment::Lgtm => "lgtm",
        }
    }

    /// Reads the spellings reviewers use, case-insensitively, with spaces or
    /// dashes for underscores: "changes requested" and "reject" need changes,
    /// "approve with suggestions" is an LGTM with suggestions, "approved" and
    /// "looks good" are an LGTM. `None` for anything else.
    pub fn from_name(name: &str) -> Option<Assessment> {
        let assessment = match normalise(name).as_str() {
            "needs_changes" | "needs_change" | "changes_needed" | "changes_requested" | "request_changes"
            | "requested_changes" | "requires_changes" | "needs_work" | "needs_revision" | "reject" | "rejected"
            | "block" | "blocked" => Assessment::NeedsChanges,
            "lgtm_with_suggestions"
            | "lgtm_with_suggestion"
            | "lgtm_with_comments"
            | "lgtm_with_nits"
            | "approve_with_suggestions"
            | "approved_with_suggestions"
            | "approve_with_comments"
            | "approved_with_comments" => Assessment::LgtmWithSuggestions,
            "lgtm" | "approve" | "approved" | "looks_good" | "looks_good_to_me" | "accept" | "accepted" | "ship_it" => {
                Assessment::Lgtm
            }
            _ => return None,
        };
        Some(assessment)
    }
}

impl fmt::Display for Assessment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Assessment {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Assessment::from_name(name)
            .ok_or_else(|| format!("unknown assessment `{name}`; use needs_changes, lgtm_with_suggestions or lgtm"))
    }
}

impl<'de> Deserialize<'de> for Assessment {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// Lowercase, trimmed of punctuation, with runs of spaces and dashes as one
/// underscore: "Needs Changes." and "needs-changes" both read "needs_changes".
fn normalise(name: &str) -> String {
    let name = name.trim().trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c == ' ' || c == '-' || c == '_' { '_' } else { c };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    out
}

/// A backtick fence longer than any run of backticks in `text`, so the text
/// cannot close it early.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value, the severity or assessment it should read as (`None`: not a
    /// known name), and for severities what the lenient reading gives.
    fn check(name: &str, severity: Option<Severity>, assessment: Option<Assessment>) {
        assert_eq!(Severity::from_name(name), severity, "severity {name:?}");
        assert_eq!(Assessment::from_name(name), assessment, "assessment {name:?}");
        let lenient: Severity =
            serde_json::from_value(serde_json::Value::String(name.into())).expect("severity always reads");
        assert_eq!(lenient, severity.unwrap_or(Severity::Minor), "lenient severity {name:?}");
        let strict = serde_json::from_value::<Assessment>(serde_json::Value::String(name.into()));
        assert_eq!(strict.ok(), assessment, "deserialized assessment {name:?}");
    }

    #[test]
    fn names() {
        use Assessment::*;
        use Severity::*;
        let cases: &[(&str, Option<Severity>, Option<Assessment>)] = &[
            ("critical", Some(Critical), None),
            ("BLOCKER", Some(Critical), None),
            ("Major", Some(Major), None),
            ("high", Some(Major), None),
            ("error", Some(Major), None),
            ("important", Some(Major), None),
            ("minor", Some(Minor), None),
            ("low", Some(Minor), None),
            ("Warning", Some(Minor), None),
            ("medium", Some(Minor), None),
            ("suggestion", Some(Suggestion), None),
            ("suggestions", Some(Suggestion), None),
            ("nit", Some(Suggestion), None),
            ("info", Some(Suggestion), None),
            ("style", Some(Suggestion), None),
            ("optional", Some(Suggestion), None),
            ("whatever", None, None),
            ("critical|major|minor|suggestion", None, None),
            ("needs_changes", None, Some(NeedsChanges)),
            ("Needs Changes", None, Some(NeedsChanges)),
            ("needs-changes.", None, Some(NeedsChanges)),
            ("changes_requested", None, Some(NeedsChanges)),
            ("REQUEST_CHANGES", None, Some(NeedsChanges)),
            ("reject", None, Some(NeedsChanges)),
            ("lgtm_with_suggestions", None, Some(LgtmWithSuggestions)),
            ("approve_with_suggestions", None, Some(LgtmWithSuggestions)),
            ("LGTM", None, Some(Lgtm)),
            ("approve", None, Some(Lgtm)),
            ("Approved", None, Some(Lgtm)),
            ("looks good", None, Some(Lgtm)),
            ("needs_changes|lgtm_with_suggestions|lgtm", None, None),
        ];
        for &(name, severity, assessment) in cases {
            check(name, severity, assessment);
        }
    }

    #[test]
    fn strict_names_say_what_to_use() {
        let err = "urgent".parse::<Severity>().expect_err("unknown");
        assert_eq!(err, "unknown severity `urgent`; use critical, major, minor or suggestion");
        let err = "maybe".parse::<Assessment>().expect_err("unknown");
        assert_eq!(err, "unknown assessment `maybe`; use needs_changes, lgtm_with_suggestions or lgtm");
    }

    #[test]
    fn the_output_schema_is_an_object() {
        let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
        let schema = serde_json::to_value(generator.into_root_schema_for::<StructuredReview>()).expect("serializes");
        assert_eq!(schema["type"], "object", "{schema:#}");
        let required = schema["required"].as_array().expect("required fields");
        for field in ["design_compliance", "comments", "missing_requirements", "summary", "overall_assessment"] {
            assert!(required.contains(&field.into()), "{field} is always written: {schema:#}");
        }
        let severity = &schema["$defs"]["Severity"];
        assert!(severity.to_string().contains("suggestion"), "{severity:#}");
    }
}
