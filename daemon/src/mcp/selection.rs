//! The `get_selection` tool: which editor window to ask, asking it (with the
//! last selection it reported as the fallback), and its selection in the
//! agent's terms (1-based lines, columns counted in characters).

use std::path::Path;
use std::time::Duration;

use parley_protocol::methods::{SELECTION_GET, Selection};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::{ParleyMcp, errors};
use crate::position;
use crate::routing::Reason;
use crate::state::{Outbound, PickedEditor};

/// How long an editor has to answer a selection request.
const SELECTION_TIMEOUT: Duration = Duration::from_secs(2);

/// Arguments of `get_selection`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectionArgs {
    /// Also ask windows open on other projects than yours (default false).
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
        description = "Get the text selected in the editor window the human most likely looks at (the one this agent runs in, else the last focused one on this workspace). Null fields and a message when nothing is selected or no editor is open on your workspace (anyWorkspace: true also asks other projects' windows).",
        title = "Get editor selection",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_selection(&self, Parameters(args): Parameters<SelectionArgs>) -> Json<SelectionResult> {
        let _call = self.context.shutdown.call();
        Json(self.selection(args.any_workspace).await)
    }
}

impl ParleyMcp {
    async fn selection(&self, any_workspace: bool) -> SelectionResult {
        let folder = self.workspace().or_else(|| self.agent.cwd.clone());
        let editor_id = self.agent.editor_id.clone();
        let picked = match self.context.state.pick_editor(editor_id, folder.clone(), any_workspace).await {
            Ok(Some(picked)) => picked,
            Ok(None) => {
                return SelectionResult {
                    message: "No editor window is connected to Parley. Open the workspace in VS Code (or Cursor, VSCodium) with the Parley extension, or in Neovim with the Parley plugin (the README says how to install either).".into(),
                    ..SelectionResult::default()
                };
            }
            Err(stopped) => {
                return SelectionResult { message: errors::stopped(stopped), ..SelectionResult::default() };
            }
        };
        let yours = folder.map_or_else(|| "unknown".to_owned(), |f| f.display().to_string());
        let theirs = picked.workspaces.iter().map(|w| w.display().to_string()).collect::<Vec<_>>().join(", ");
        let name = picked.name.clone();
        let why = match picked.reason {
            Reason::NamedByEnvironment => "the window this agent runs in".to_owned(),
            Reason::FocusedInWorkspace => "the most recently focused window on this workspace".to_owned(),
            Reason::OtherWorkspace => format!(
                "a window on ANOTHER workspace ({theirs}), not yours ({yours}): you asked for any workspace, so check \
                 this is the code the human means"
            ),
            Reason::NotInWorkspace => {
                return SelectionResult {
                    message: format!(
                        "No editor window is open on your workspace ({yours}), so nothing was taken. The most recently \
                         focused window, {name}, is on another project ({theirs}): call get_selection with \
                         anyWorkspace: true only if the human means code there."
                    ),
                    ..SelectionResult::default()
                };
            }
        };
        let other_workspace = picked.reason == Reason::OtherWorkspace;
        let (selection, note) = ask_editor(&picked).await;
        match selection {
            Some(selection) if !selection.text.is_empty() => {
                let text = selection_file_text(&selection.path).await;
                let mut result =
                    selection_result(selection, text, &picked, format!("Selection from {name}, {why}{note}."));
                result.other_workspace = other_workspace;
                result
            }
            _ => SelectionResult {
                editor: Some(name.clone()),
                other_workspace,
                message: format!("Nothing is selected in {name} ({why}){note}."),
                ..SelectionResult::default()
            },
        }
    }
}

/// The text of the file an editor's selection is in, to count its columns
/// as characters; `None` (columns as the editor counted them) for a file
/// that is not a regular one (a FIFO, `/dev/fd/63` from `nvim <(cmd)`, a
/// device), too large, not UTF-8, or slow to read.
async fn selection_file_text(path: &Path) -> Option<String> {
    /// The largest file whose columns are converted.
    const MAX_BYTES: u64 = 32 * 1024 * 1024;
    const READ_TIMEOUT: Duration = Duration::from_secs(2);
    let path = path.to_owned();
    let read = tokio::task::spawn_blocking(move || crate::regular_file::read(&path, MAX_BYTES));
    let bytes = tokio::time::timeout(READ_TIMEOUT, read).await.ok()?.ok()?.ok()?;
    String::from_utf8(bytes).ok()
}

/// Asks the editor for its selection; falls back to the last one it pushed
/// when it does not answer in time.
async fn ask_editor(picked: &PickedEditor) -> (Option<Selection>, &'static str) {
    let (reply, answer) = oneshot::channel();
    let request = Outbound::Request { method: SELECTION_GET, params: serde_json::json!({}), reply };
    if picked.outbox.try_send(request).is_err() {
        return (picked.last_selection.clone(), "; the window is busy, so this is the last selection it reported");
    }
    match tokio::time::timeout(SELECTION_TIMEOUT, answer).await {
        Ok(Ok(Ok(value))) => match serde_json::from_value::<Option<Selection>>(value) {
            Ok(selection) => (selection, ""),
            Err(_) => (picked.last_selection.clone(), "; the window answered in an unknown shape"),
        },
        Ok(Ok(Err(_))) | Ok(Err(_)) => (picked.last_selection.clone(), "; the window could not answer"),
        Err(_) => (picked.last_selection.clone(), "; the window did not answer within 2 s"),
    }
}

/// Converts an editor's selection for the agent; `lines` is the file's text,
/// used to count the editor's columns as characters.
fn selection_result(
    selection: Selection,
    lines: Option<String>,
    picked: &PickedEditor,
    message: String,
) -> SelectionResult {
    let column = |line: u32, character: u32| {
        let text = lines.as_deref().and_then(|t| t.lines().nth(line as usize)).unwrap_or("");
        position::to_char_column(text, character, picked.encoding) + 1
    };
    SelectionResult {
        start_line: Some(selection.start.line + 1),
        start_column: Some(column(selection.start.line, selection.start.character)),
        end_line: Some(selection.end.line + 1),
        end_column: Some(column(selection.end.line, selection.end.character)),
        file_path: Some(selection.path.display().to_string()),
        document_language: selection.language_id,
        selected_text: Some(selection.text),
        editor: Some(picked.name.clone()),
        other_workspace: false,
        message,
    }
}
