//! The review-round tools' arguments and results: seed 004's
//! `request_review`, `get_review_history` and `mark_review_complete`, and
//! `await_review` and `cancel_review` for rounds that outlast a call.

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
    /// Design docs or specs to follow, relative to the repository root; the reviewer reads them.
    pub relevant_docs: Option<Vec<String>>,
    /// Specific areas to focus the review on.
    pub focus_areas: Option<Vec<String>>,
    /// The review_id of the session this round follows up.
    pub previous_review_id: Option<String>,
    /// "all" (default: every change, new files too), "staged", "unstaged", or a base ref or range ("main", "main..HEAD").
    pub scope: Option<String>,
    /// Seconds to wait before answering "pending" (0 to 50, default 45); the round goes on.
    #[schemars(range(max = 50))]
    pub wait_seconds: Option<u32>,
    /// "human" (a person, in their editor or a terminal; same review format) or "command" (the configured reviewer); default: the config's.
    pub reviewer: Option<String>,
}

/// Arguments of `await_review`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AwaitArgs {
    /// The review_id request_review answered with.
    pub review_id: String,
    /// How long to wait before answering "pending" again (0 to 50 seconds, default 45).
    #[schemars(range(max = 50))]
    pub wait_seconds: Option<u32>,
}

/// Arguments of `cancel_review`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelArgs {
    /// The review whose running round to stop.
    pub review_id: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CancelResult {
    pub review_id: String,
    /// The round that was stopped.
    pub round: u32,
    pub cancelled: bool,
    pub message: String,
}

/// What `request_review` and `await_review` answer while the round runs on.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PendingReview {
    pub review_id: String,
    /// Always `pending`.
    pub status: String,
    /// The round that is running.
    pub round: u32,
    /// What the round is doing now.
    pub step: String,
    /// Steps done, of `total`.
    pub progress: f64,
    pub total: f64,
    pub elapsed_seconds: u64,
    /// What to do next: call await_review.
    pub message: String,
}

/// The output schema of `request_review` and `await_review`: a finished
/// round (seed 004's result) or a pending one. MCP wants an object at the
/// root, so it is the finished round's schema with only the fields both
/// share required, and the pending round's fields added.
pub fn round_output_schema() -> std::sync::Arc<rmcp::model::JsonObject> {
    let finished = rmcp::handler::server::tool::schema_for_output::<ReviewResult>();
    let pending = rmcp::handler::server::tool::schema_for_output::<PendingReview>();
    let mut schema = (*finished).clone();
    if let (Some(serde_json::Value::Object(properties)), Some(serde_json::Value::Object(extra))) =
        (schema.get_mut("properties"), pending.get("properties"))
    {
        for (name, property) in extra {
            properties.entry(name.clone()).or_insert_with(|| property.clone());
        }
    }
    schema.insert("required".into(), serde_json::json!(["review_id", "status", "round"]));
    std::sync::Arc::new(schema)
}

/// What `request_review` returns: the structured review (seed 004's format)
/// with its session facts.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReviewResult {
    pub review_id: String,
    pub timestamp: String,
    /// in_progress, needs_changes or approved; `pending` while the round runs (then see `message`).
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
    /// A round that has not finished (state `running`: await_review waits for it) or that failed (state `failed`, with the error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
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
    /// The review session.
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
        pending: session.pending.clone().or_else(|| {
            session.awaiting.as_ref().map(|waiting| crate::sessions::Pending {
                state: "awaiting_review".into(),
                since: waiting.requested_at.clone(),
                error: None,
            })
        }),
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
