//! `parley hook codex-prompt`: Codex's `UserPromptSubmit` hook. The person's
//! next prompt (typically "go ahead" after approving a plan) carries, as
//! `additionalContext`, the comments of the session's plan approved with
//! comments (once) and the person's messages waiting for this agent;
//! otherwise `{}`. Codex ends a planning turn without a tool to hook after,
//! so this is where an approved plan's notes reach it.

use parley_protocol::methods as wire;
use serde_json::json;

use super::{HookError, HookInput, delivery, plan_message, plan_wait};

pub async fn answer(input: HookInput) -> Result<Option<String>, HookError> {
    input.expect_event("UserPromptSubmit")?;
    let session = input.text("session_id")?.to_owned();
    let cwd = input.cwd()?;
    let mut parts = Vec::new();
    let mut client = plan_wait::connect().await?;
    let params = json!({ "host": "codex", "host_session": session, "cwd": cwd });
    let notes: wire::PlanNotesResult = client.call(wire::PLAN_NOTES, params).await?;
    if !notes.comments.is_empty() {
        parts.push(plan_message::notes(&notes.comments));
    }
    if let Some(messages) = delivery::take(&cwd).await? {
        parts.push(messages);
    }
    if parts.is_empty() {
        return Ok(Some("{}".into()));
    }
    let output = json!({
        "hookSpecificOutput": { "hookEventName": "UserPromptSubmit", "additionalContext": parts.join("\n\n") }
    });
    Ok(Some(output.to_string()))
}
