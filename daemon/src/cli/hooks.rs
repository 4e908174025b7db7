//! `parley hook NAME`: the commands agent hosts run at points of their own
//! (Claude Code's `PermissionRequest`, `PostToolUse`, `Stop` and
//! `UserPromptSubmit`, Codex's `Stop` and `UserPromptSubmit`),
//! each reading the host's JSON on stdin and printing the host's answer on
//! stdout; and `parley hooks install`, which writes them into the hosts'
//! settings.
//!
//! The one rule every hook keeps lives here: input that is not what the
//! host sends (not JSON, a field missing) ends the hook with exit code 1, a
//! message on stderr and nothing on stdout, so the host goes on as if no
//! hook ran (its own dialog takes over) and the user is never blocked. A
//! hook is one small file in `hooks/`: it gets the parsed input and gives
//! what to print.

mod claude_plan;
mod claude_post_plan;
mod claude_post_tool;
mod claude_prompt;
mod claude_stop;
mod codex_prompt;
mod codex_stop;
mod delivery;
mod input;
pub mod install;
mod plan_message;
mod plan_wait;

use std::io::Read as _;

use clap::Subcommand;

pub use input::HookInput;

/// The hooks `parley hook` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Subcommand)]
pub enum Hook {
    /// Claude Code `PermissionRequest` hook for `ExitPlanMode`: the plan is
    /// reviewed in Parley, and the person's verdict allows or denies it.
    ClaudePlan,
    /// Claude Code `PostToolUse` hook for `ExitPlanMode`: hands the model the
    /// comments of a plan approved with comments.
    ClaudePostPlan,
    /// Claude Code `PostToolUse` hook for every tool: hands the model a
    /// person's messages waiting for this agent.
    ClaudePostTool,
    /// Claude Code `Stop` hook: a person's message waiting for this agent
    /// keeps the turn going until the agent has it.
    ClaudeStop,
    /// Claude Code `UserPromptSubmit` hook: adds a person's messages waiting
    /// for this agent to the prompt.
    ClaudePrompt,
    /// Codex `Stop` hook: a turn ending with a `<proposed_plan>` is reviewed
    /// in Parley, and changes asked for continue the turn; a person's
    /// message waiting for this agent continues it too.
    CodexStop,
    /// Codex `UserPromptSubmit` hook: adds the notes of a plan approved with
    /// comments, and a person's messages waiting for this agent, to the
    /// prompt.
    CodexPrompt,
}

impl Hook {
    pub fn name(self) -> &'static str {
        match self {
            Hook::ClaudePlan => "claude-plan",
            Hook::ClaudePostPlan => "claude-post-plan",
            Hook::ClaudePostTool => "claude-post-tool",
            Hook::ClaudeStop => "claude-stop",
            Hook::ClaudePrompt => "claude-prompt",
            Hook::CodexStop => "codex-stop",
            Hook::CodexPrompt => "codex-prompt",
        }
    }
}

/// Why a hook gives no answer: the host then goes on without it.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// What the host sent is not what this hook reads.
    #[error("{0}")]
    BadInput(String),
    /// Parley could not answer (no daemon, a refusal).
    #[error("{0:#}")]
    Failed(#[from] anyhow::Error),
}

/// The most a hook reads from stdin.
const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Runs `hook` on stdin; prints its answer on stdout. Exit code 0 with the
/// answer, 1 (stderr says why, stdout empty) without one.
pub async fn run(hook: Hook) -> anyhow::Result<i32> {
    let answer = match read_stdin() {
        Ok(text) => match HookInput::parse(&text) {
            Ok(input) => answer(hook, input).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    match answer {
        Ok(Some(output)) => {
            println!("{output}");
            Ok(0)
        }
        Ok(None) => Ok(0),
        Err(error) => {
            let what = match &error {
                HookError::BadInput(_) => "bad input from the host",
                HookError::Failed(_) => "no answer",
            };
            eprintln!(
                "parley hook {}: {what}: {}; the host goes on without Parley",
                hook.name(),
                super::shown::visible(&error.to_string())
            );
            Ok(1)
        }
    }
}

fn read_stdin() -> Result<String, HookError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| HookError::BadInput(format!("stdin could not be read: {e}")))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(HookError::BadInput("stdin holds more than 16 MiB; a host's hook input is far smaller".into()));
    }
    String::from_utf8(bytes).map_err(|_| HookError::BadInput("stdin is not UTF-8 text".into()))
}

/// What `hook` prints for `input`; `None` prints nothing.
async fn answer(hook: Hook, input: HookInput) -> Result<Option<String>, HookError> {
    match hook {
        Hook::ClaudePlan => claude_plan::answer(input).await,
        Hook::ClaudePostPlan => claude_post_plan::answer(input).await,
        Hook::ClaudePostTool => claude_post_tool::answer(input).await,
        Hook::ClaudeStop => claude_stop::answer(input).await,
        Hook::ClaudePrompt => claude_prompt::answer(input).await,
        Hook::CodexStop => codex_stop::answer(input).await,
        Hook::CodexPrompt => codex_prompt::answer(input).await,
    }
}
