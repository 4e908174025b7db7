//! `parley hook claude-post-plan`: Claude Code's `PostToolUse` hook for
//! `ExitPlanMode`. When the person approved the plan with comments, the
//! comments are handed to the model as `additionalContext`, so no note is
//! lost; otherwise it prints `{}`. A plan round still waiting was answered
//! in Claude Code's own dialog: the daemon is told so.

use parley_protocol::methods as wire;
use serde_json::json;

use super::plan_wait;
use super::{HookError, HookInput, plan_message};

pub async fn answer(input: HookInput) -> Result<Option<String>, HookError> {
    input.expect_event("PostToolUse")?;
    let session = input.text("session_id")?.to_owned();
    let cwd = input.cwd()?;
    if input.optional_text("tool_name")?.is_some_and(|tool| tool != "ExitPlanMode") {
        // Registered for every tool: only a plan has notes.
        return Ok(Some("{}".into()));
    }
    let mut client = plan_wait::connect().await?;
    let params = json!({ "host": "claude", "host_session": session, "cwd": cwd });
    let notes: wire::PlanNotesResult = client.call(wire::PLAN_NOTES, params).await?;
    if notes.comments.is_empty() {
        return Ok(Some("{}".into()));
    }
    let output = json!({
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": plan_message::notes(&notes.comments),
        }
    });
    Ok(Some(output.to_string()))
}
