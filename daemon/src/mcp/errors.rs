//! Each use case's error as the `isError` text agents read: seed 002's JSON
//! shape (`{"error": …}`) for the feedback tools, a plain sentence saying
//! what to do for the others. Mapped here once for every tool: a tool
//! answers a [`ToolError`], which each use case's error becomes by `From`
//! (so a tool's `?` does it), and which only this door renders.

use rmcp::model::{ContentBlock, IntoContents};

use crate::feedback::FeedbackError;
use crate::state::Stopped;
use crate::usecases::reviews::PresentError;
use crate::usecases::rounds::RoundError;

/// A feedback tool's failure in plan-feedback's shape: `{"error": "..."}`.
pub fn error_text(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

/// Seed 002's answer for a thread that does not exist or is outside the
/// agent's workspace.
pub fn not_found() -> String {
    serde_json::json!({ "resolved": false, "error": "Thread not found" }).to_string()
}

/// A feedback failure for `get_feedback`, `get_feedback_summary` and `reply_feedback`.
pub fn feedback(error: FeedbackError) -> String {
    match error {
        // To an agent, a resolved thread is gone, as seed 002 has it.
        FeedbackError::NotFound | FeedbackError::ResolvedNoReply | FeedbackError::AlreadyResolved => {
            error_text(&FeedbackError::NotFound.to_string())
        }
        other => error_text(&other.to_string()),
    }
}

/// A failure of `resolve_feedback`, whose "not found" carries `resolved: false`.
pub fn resolve(error: FeedbackError) -> String {
    match error {
        FeedbackError::NotFound => not_found(),
        FeedbackError::UnknownId(why) => serde_json::json!({ "resolved": false, "error": why }).to_string(),
        other => feedback(other),
    }
}

pub fn round(error: RoundError) -> String {
    error.to_string()
}

pub fn present(error: PresentError) -> String {
    error.to_string()
}

pub fn stopped(error: Stopped) -> String {
    error.to_string()
}

/// A tool's failure, as the agent reads it (`isError: true` and this text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(String);

impl IntoContents for ToolError {
    fn into_contents(self) -> Vec<ContentBlock> {
        vec![ContentBlock::text(self.0)]
    }
}

/// A sentence a tool wrote itself (a bad argument, say).
impl From<String> for ToolError {
    fn from(text: String) -> Self {
        ToolError(text)
    }
}

impl From<&str> for ToolError {
    fn from(text: &str) -> Self {
        ToolError(text.to_owned())
    }
}

impl From<RoundError> for ToolError {
    fn from(error: RoundError) -> Self {
        ToolError(round(error))
    }
}

impl From<PresentError> for ToolError {
    fn from(error: PresentError) -> Self {
        ToolError(present(error))
    }
}

/// In seed 002's shape; `resolve_feedback`'s "not found" is [`resolve`].
impl From<FeedbackError> for ToolError {
    fn from(error: FeedbackError) -> Self {
        ToolError(feedback(error))
    }
}

impl From<Stopped> for ToolError {
    fn from(error: Stopped) -> Self {
        ToolError(stopped(error))
    }
}
