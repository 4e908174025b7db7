//! `parley hook claude-post-tool`: Claude Code's `PostToolUse` hook for every
//! tool. A person's message waiting for this agent (a question asked with
//! `parley ask` or from an editor, a comment on a thread it is in) is handed
//! to the model after the tool's result, as `additionalContext`; otherwise
//! `{}`.

use serde_json::json;

use super::{HookError, HookInput, delivery};

pub async fn answer(input: HookInput) -> Result<Option<String>, HookError> {
    input.expect_event("PostToolUse")?;
    let cwd = input.cwd()?;
    let Some(messages) = delivery::take(&cwd).await? else {
        return Ok(Some("{}".into()));
    };
    let output = json!({
        "hookSpecificOutput": { "hookEventName": "PostToolUse", "additionalContext": messages }
    });
    Ok(Some(output.to_string()))
}
