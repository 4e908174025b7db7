//! The review-session tools' arguments and results: seed 004's
//! `request_review`, `get_review_history` and `mark_review_complete`.

use rmcp::schemars;
use serde::{Deserialize, Serialize};

use crate::sessions::{FinalStatus, Pending, Round, Session};
use crate::structured_review::{Assessment, StructuredReview};

/// Arguments of `request_review`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestReviewArgs {
    /// Summary of work attempted and completed: what you were asked to do, what you did, design decisions and trade-offs.
    pub summary: String,
    /// Design docs or specs the implementation must follow, as paths relative to the repository root; their text goes to the reviewer.
    pub relevant_docs: Option<Vec<String>>,
    /// Specific areas to focus the review on.
    pub focus_areas: Option<Vec<String>>,
    /// ID of the previous review if this is a follow-up round in the same session.
    pub previous_review_id: Option<String>,
    /// What to review: "all" (default: staged and unstaged changes, plus new files), "staged", "unstaged", or a base ref or commit range such as "main" or "main..HEAD".
    pub scope: Option<String>,
}

/// What `request_review` returns: the structured review (seed 004's format)
/// with its session facts.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewResult {
    pub review_id: String,
    pub timestamp: String,
    /// in_progress, needs_changes or approved.
    pub status: String,
    pub round: u32,
    /// The reviewer's assessment made stricter by the configured severity thresholds; act on this.
    pub verdict: Assessment,
    #[serde(flatten)]
    pub review: StructuredReview,
    /// Files the review covered.
    pub changed_files: Vec<String>,
    /// Where the audit trail of this round is, when it is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit_path: Option<String>,
    /// How many editor windows show the review.
    pub shown_in_editors: usize,
    /// Problems after the review was stored (audit trail, editor).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Arguments of `get_review_history`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// Number of recent review sessions to return (default: 5).
    pub limit: Option<u32>,
    /// A specific review session to retrieve.
    pub review_id: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct HistoryResult {
    /// Newest first.
    pub reviews: Vec<SessionView>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SessionView {
    pub review_id: String,
    pub created_at: String,
    pub updated_at: String,
    /// in_progress, needs_changes, approved (from the last round), or the final status once complete.
    pub status: String,
    pub summary: String,
    pub scope: String,
    pub rounds: Vec<RoundView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_status: Option<FinalStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// A round started with start_review that has not finished (state `running`) or that failed (state `failed`, with the error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
}

/// What `start_review` returns at once.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct StartedReview {
    pub review_id: String,
    /// The round that is running.
    pub round: u32,
    /// Always `running`.
    pub status: String,
    pub message: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RoundView {
    pub round: u32,
    pub timestamp: String,
    pub summary: String,
    pub verdict: Assessment,
    pub changed_files: Vec<String>,
    pub review: StructuredReview,
}

/// Arguments of `mark_review_complete`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteArgs {
    /// Review session ID.
    pub review_id: String,
    /// Final status of the review: approved, abandoned or merged.
    #[schemars(extend("enum" = ["approved", "abandoned", "merged"]))]
    pub final_status: String,
    /// Final notes or summary.
    pub notes: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CompleteResult {
    pub review_id: String,
    pub final_status: FinalStatus,
    pub completed_at: String,
    pub rounds: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

pub fn view(session: &Session) -> SessionView {
    SessionView {
        review_id: session.id.clone(),
        created_at: session.created_at.clone(),
        updated_at: session.updated_at.clone(),
        status: session.status().into(),
        summary: session.request.summary.clone(),
        scope: session.request.scope.clone(),
        rounds: session.rounds.iter().map(round_view).collect(),
        final_status: session.completion.as_ref().map(|c| c.final_status),
        notes: session.completion.as_ref().and_then(|c| c.notes.clone()),
        completed_at: session.completion.as_ref().map(|c| c.at.clone()),
        pending: session.pending.clone(),
    }
}

fn round_view(round: &Round) -> RoundView {
    RoundView {
        round: round.round,
        timestamp: round.at.clone(),
        summary: round.summary.clone(),
        verdict: round.verdict,
        changed_files: round.changed_files.clone(),
        review: round.review.clone(),
    }
}
