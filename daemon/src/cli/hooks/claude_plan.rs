//! `parley hook claude-plan`: Claude Code's `PermissionRequest` hook for
//! `ExitPlanMode`. The plan is reviewed in Parley; approving allows the
//! tool with `tool_input` echoed as `updatedInput` exactly as received
//! (Claude Code ignores an allow without it), asking for changes denies it
//! with a message telling the model what to revise. A round that ends
//! without a verdict prints nothing, leaving the choice to Claude Code's
//! own dialog.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::plan_wait::{self, Plan, Reviewed};
use super::{HookError, HookInput, plan_message};

pub async fn answer(input: HookInput) -> Result<Option<String>, HookError> {
    input.expect_event("PermissionRequest")?;
    if let Some(tool) = input.optional_text("tool_name")?
        && tool != "ExitPlanMode"
    {
        return Err(HookError::BadInput(format!(
            "tool_name is {tool:?}: this hook reviews plans, so register it with the matcher ExitPlanMode"
        )));
    }
    let session = input.text("session_id")?.to_owned();
    let cwd = input.cwd()?;
    let tool_input = input.object("tool_input")?;
    let plan = match tool_input.get("plan") {
        Some(Value::String(plan)) if !plan.trim().is_empty() => plan.clone(),
        Some(Value::String(_)) => {
            return Err(HookError::BadInput("tool_input.plan is empty: no plan to review".into()));
        }
        _ => return Err(HookError::BadInput("tool_input.plan is missing: no plan to review".into())),
    };
    let name = tool_input.get("planFilePath").and_then(Value::as_str).map(str::to_owned);
    let echoed = input.raw("tool_input")?;
    let plan = Plan { host: "claude", host_session: session, cwd, text: plan, name, new_only: false };
    let verdict = match plan_wait::review(&plan).await? {
        Reviewed::Verdict(verdict) => verdict,
        Reviewed::AlreadyAnswered => return Ok(None),
    };
    let decision = match verdict.outcome.as_str() {
        "approved" | "approved_with_comments" => Decision::Allow { updated_input: &echoed },
        "changes_requested" => Decision::Deny {
            message: plan_message::revise(&verdict, "present the revised plan for review again (ExitPlanMode)"),
        },
        _ => {
            eprintln!(
                "parley hook claude-plan: round {} of review {} ended without a verdict ({}); Claude Code decides",
                verdict.round,
                verdict.review_id,
                verdict.reason.as_deref().unwrap_or("no reason given")
            );
            return Ok(None);
        }
    };
    let output = Output { hook_specific_output: Specific { hook_event_name: "PermissionRequest", decision } };
    serde_json::to_string(&output).map(Some).map_err(|e| HookError::Failed(e.into()))
}

#[derive(Serialize)]
struct Output<'a> {
    #[serde(rename = "hookSpecificOutput")]
    hook_specific_output: Specific<'a>,
}

#[derive(Serialize)]
struct Specific<'a> {
    #[serde(rename = "hookEventName")]
    hook_event_name: &'static str,
    decision: Decision<'a>,
}

#[derive(Serialize)]
#[serde(tag = "behavior", rename_all = "lowercase")]
enum Decision<'a> {
    Allow {
        #[serde(rename = "updatedInput")]
        updated_input: &'a RawValue,
    },
    Deny {
        message: String,
    },
}
