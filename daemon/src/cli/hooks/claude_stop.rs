//! `parley hook claude-stop`: Claude Code's `Stop` hook. When a person's
//! message waits for this agent as it ends its turn, the turn goes on
//! (`{"decision":"block","reason":…}`) so the agent answers it first; when
//! the turn already goes on because of a Stop hook (`stop_hook_active`), or
//! nothing waits, `{}` lets it end.

use serde_json::json;

use super::{HookError, HookInput, delivery};

pub async fn answer(input: HookInput) -> Result<Option<String>, HookError> {
    input.expect_event("Stop")?;
    let cwd = input.cwd()?;
    if input.flag("stop_hook_active")? {
        return Ok(Some("{}".into()));
    }
    Ok(Some(match delivery::take(&cwd).await? {
        Some(messages) => json!({ "decision": "block", "reason": messages }).to_string(),
        None => "{}".into(),
    }))
}
