//! The verdict on a review: the reviewer's assessment made stricter, never laxer, by the configured severity thresholds and by failing tests.

use super::{Assessment, Severity, StructuredReview};

/// Severities that block (force needs changes) or warn (cap at an LGTM with
/// suggestions). A severity in both blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thresholds {
    pub block_on: Vec<Severity>,
    pub warn_on: Vec<Severity>,
}

/// Seed 004's example configuration: critical and major findings block, minor
/// ones warn, suggestions leave the reviewer's assessment alone.
impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { block_on: vec![Severity::Critical, Severity::Major], warn_on: vec![Severity::Minor] }
    }
}

/// The verdict: the reviewer's own assessment, made stricter by the
/// thresholds applied to every finding (comments and missing requirements by
/// their severity, design violations as critical or major by their impact) and
/// by failing tests.
pub fn verdict(review: &StructuredReview, thresholds: &Thresholds) -> Assessment {
    let mut verdict = review.overall_assessment;
    for severity in review.severities() {
        if thresholds.block_on.contains(&severity) {
            verdict = verdict.min(Assessment::NeedsChanges);
        } else if thresholds.warn_on.contains(&severity) {
            verdict = verdict.min(Assessment::LgtmWithSuggestions);
        }
    }
    if review.test_results.as_ref().is_some_and(|tests| !tests.passed) {
        verdict = Assessment::NeedsChanges;
    }
    verdict
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::structured_review::Severity::*;

    fn check(review: serde_json::Value, thresholds: &Thresholds, want: Assessment) {
        let read: StructuredReview = serde_json::from_value(review.clone()).expect("a review");
        assert_eq!(verdict(&read, thresholds), want, "{review} with {thresholds:?}");
    }

    #[test]
    fn verdicts() {
        let default = Thresholds::default();
        let lax = Thresholds { block_on: vec![], warn_on: vec![] };
        let strict = Thresholds { block_on: vec![Critical, Major, Minor, Suggestion], warn_on: vec![] };
        let comment = |severity: &str| json!({"comment": "c", "severity": severity});
        let cases = [
            (json!({"overall_assessment": "lgtm"}), &default, Assessment::Lgtm),
            (json!({"overall_assessment": "lgtm", "comments": [comment("major")]}), &default, Assessment::NeedsChanges),
            (
                json!({"overall_assessment": "lgtm", "comments": [comment("critical")]}),
                &default,
                Assessment::NeedsChanges,
            ),
            (
                json!({"overall_assessment": "lgtm", "comments": [comment("minor")]}),
                &default,
                Assessment::LgtmWithSuggestions,
            ),
            (json!({"overall_assessment": "lgtm", "comments": [comment("suggestion")]}), &default, Assessment::Lgtm),
            (
                json!({"overall_assessment": "lgtm_with_suggestions", "comments": [comment("suggestion")]}),
                &default,
                Assessment::LgtmWithSuggestions,
            ),
            (json!({"overall_assessment": "needs_changes"}), &default, Assessment::NeedsChanges),
            (json!({"overall_assessment": "needs_changes"}), &lax, Assessment::NeedsChanges),
            (
                json!({"overall_assessment": "lgtm", "missing_requirements": [{"requirement": "r", "severity": "major"}]}),
                &default,
                Assessment::NeedsChanges,
            ),
            (
                json!({"overall_assessment": "lgtm", "design_compliance": {"major_violations": [{"issue": "i", "impact": "high"}]}}),
                &default,
                Assessment::NeedsChanges,
            ),
            (
                json!({"overall_assessment": "lgtm", "design_compliance": {"major_violations": [{"issue": "i", "impact": "high"}]}}),
                &Thresholds { block_on: vec![Critical], warn_on: vec![Major] },
                Assessment::LgtmWithSuggestions,
            ),
            (
                json!({"overall_assessment": "lgtm", "design_compliance": {"major_violations": [{"issue": "i", "impact": "critical"}]}}),
                &Thresholds { block_on: vec![Critical], warn_on: vec![Major] },
                Assessment::NeedsChanges,
            ),
            (
                json!({"overall_assessment": "lgtm", "test_results": {"passed": false, "failing_tests": ["t"]}}),
                &lax,
                Assessment::NeedsChanges,
            ),
            (json!({"overall_assessment": "lgtm", "test_results": {"passed": true}}), &default, Assessment::Lgtm),
            (json!({"overall_assessment": "lgtm", "comments": [comment("critical")]}), &lax, Assessment::Lgtm),
            (json!({"overall_assessment": "lgtm", "comments": [comment("nit")]}), &strict, Assessment::NeedsChanges),
            (
                json!({"overall_assessment": "lgtm", "comments": [comment("major")]}),
                &Thresholds { block_on: vec![Major], warn_on: vec![Major] },
                Assessment::NeedsChanges,
            ),
        ];
        for (review, thresholds, want) in cases {
            check(review, thresholds, want);
        }
    }
}
