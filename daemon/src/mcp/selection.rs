//! The `get_selection` tool: the selection use case (`usecases::selection`)
//! answered in the shape agents read.

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Serialize};

use super::{ParleyMcp, errors};
use crate::usecases::selection::{self, SelectionAnswer, SelectionAsk};

/// Arguments of `get_selection`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectionArgs {
    /// Also ask other projects' windows.
    #[serde(rename = "anyWorkspace", default)]
    pub any_workspace: bool,
}

/// What `get_selection` returns. Lines and columns are 1-based; columns
/// count characters. Every field but `message` is null when nothing is selected.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectionResult {
    pub selected_text: Option<String>,
    pub file_path: Option<String>,
    pub start_line: Option<u32>,
    pub start_column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub document_language: Option<String>,
    /// The editor window that answered.
    pub editor: Option<String>,
    /// True when that window is on another workspace than yours (only with anyWorkspace).
    #[serde(rename = "otherWorkspace", skip_serializing_if = "std::ops::Not::not")]
    pub other_workspace: bool,
    /// Why this window was asked, or why there is no selection.
    pub message: String,
}

#[tool_router(router = selection_tools, vis = "pub(super)")]
impl ParleyMcp {
    #[tool(
        description = "Get the text selected in the editor window the human most likely looks at (the one you run in, else the last focused one on your workspace). Null fields and a message when there is none.",
        title = "Get editor selection",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_selection(&self, Parameters(args): Parameters<SelectionArgs>) -> Json<SelectionResult> {
        let _call = self.context.shutdown.call();
        let ask = SelectionAsk {
            folder: self.workspace().or_else(|| self.agent.cwd.clone()),
            editor_id: self.agent.editor_id.clone(),
            any_workspace: args.any_workspace,
        };
        Json(match selection::current(&self.context, ask).await {
            Ok(answer) => SelectionResult::from(answer),
            Err(stopped) => SelectionResult { message: errors::stopped(stopped), ..SelectionResult::default() },
        })
    }
}

impl From<SelectionAnswer> for SelectionResult {
    fn from(answer: SelectionAnswer) -> Self {
        let SelectionAnswer { selected, editor, other_workspace, message } = answer;
        match selected {
            Some(s) => SelectionResult {
                selected_text: Some(s.text),
                file_path: Some(s.file.display().to_string()),
                start_line: Some(s.start_line),
                start_column: Some(s.start_column),
                end_line: Some(s.end_line),
                end_column: Some(s.end_column),
                document_language: s.language,
                editor,
                other_workspace,
                message,
            },
            None => SelectionResult { editor, other_workspace, message, ..SelectionResult::default() },
        }
    }
}
