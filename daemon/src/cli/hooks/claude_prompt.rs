//! `parley hook claude-prompt`: Claude Code's `UserPromptSubmit` hook. A
//! person's message waiting for this agent is added to the prompt the
//! person just sent, as `additionalContext`; otherwise `{}`.

use serde_json::json;

use super::{HookError, HookInput, delivery};

pub async fn answer(input: HookInput) -> Result<Option<String>, HookError> {
    input.expect_event("UserPromptSubmit")?;
    let cwd = input.cwd()?;
    let Some(messages) = delivery::take(&cwd).await? else {
        return Ok(Some("{}".into()));
    };
    let output = json!({
        "hookSpecificOutput": { "hookEventName": "UserPromptSubmit", "additionalContext": messages }
    });
    Ok(Some(output.to_string()))
}
