//! An editor's selection, for an agent: which editor window to ask (the one
//! the agent runs in, else the last focused one on its workspace), asking it
//! (with the last selection it reported as the fallback), and the selection
//! in the agent's terms (1-based lines, columns counted in characters).

use std::path::{Path, PathBuf};
use std::time::Duration;

use parley_protocol::methods::{SELECTION_GET, Selection};
use tokio::sync::oneshot;

use super::Context;
use crate::position;
use crate::routing::Reason;
use crate::state::{Outbound, PickedEditor, Stopped};

/// How long an editor has to answer a selection request.
const SELECTION_TIMEOUT: Duration = Duration::from_secs(2);

/// Who asks: the agent's workspace (or working folder), the editor window
/// its environment names, and whether windows on other projects may answer.
#[derive(Debug, Clone)]
pub struct SelectionAsk {
    pub folder: Option<PathBuf>,
    pub editor_id: Option<String>,
    pub any_workspace: bool,
}

/// A selection as an agent reads it: lines 1-based, columns 1-based and
/// counted in characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Selected {
    pub text: String,
    pub file: PathBuf,
    pub start_line: u32,
    pub start_column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub language: Option<String>,
}

/// What asking gave: the selection, if any, the window that answered, and a
/// sentence saying why that window was asked, or why there is nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelectionAnswer {
    pub selected: Option<Selected>,
    pub editor: Option<String>,
    /// The window is on another workspace than the agent's (asked only with
    /// `any_workspace`).
    pub other_workspace: bool,
    pub message: String,
}

/// The selection in the window the person most likely looks at.
pub async fn current(cx: &Context, ask: SelectionAsk) -> Result<SelectionAnswer, Stopped> {
    let SelectionAsk { folder, editor_id, any_workspace } = ask;
    let Some(picked) = cx.state.pick_editor(editor_id, folder.clone(), any_workspace).await? else {
        return Ok(SelectionAnswer {
            message: "No editor window is connected to Parley. Open the workspace in VS Code (or Cursor, VSCodium) with the Parley extension, or in Neovim with the Parley plugin (the README says how to install either).".into(),
            ..SelectionAnswer::default()
        });
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
            return Ok(SelectionAnswer {
                message: format!(
                    "No editor window is open on your workspace ({yours}), so nothing was taken. The most recently \
                     focused window, {name}, is on another project ({theirs}): call get_selection with \
                     anyWorkspace: true only if the human means code there."
                ),
                ..SelectionAnswer::default()
            });
        }
    };
    let other_workspace = picked.reason == Reason::OtherWorkspace;
    let (selection, note) = ask_editor(&picked).await;
    Ok(match selection {
        Some(selection) if !selection.text.is_empty() => {
            let text = selection_file_text(&selection.path).await;
            SelectionAnswer {
                selected: Some(in_characters(selection, text.as_deref(), &picked)),
                editor: Some(name.clone()),
                other_workspace,
                message: format!("Selection from {name}, {why}{note}."),
            }
        }
        _ => SelectionAnswer {
            editor: Some(name.clone()),
            other_workspace,
            message: format!("Nothing is selected in {name} ({why}){note}."),
            ..SelectionAnswer::default()
        },
    })
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

/// An editor's selection in the agent's terms; `lines` is the file's text,
/// used to count the editor's columns as characters.
fn in_characters(selection: Selection, lines: Option<&str>, picked: &PickedEditor) -> Selected {
    let column = |line: u32, character: u32| {
        let text = lines.and_then(|t| t.lines().nth(line as usize)).unwrap_or("");
        position::to_char_column(text, character, picked.encoding) + 1
    };
    Selected {
        start_line: selection.start.line + 1,
        start_column: column(selection.start.line, selection.start.character),
        end_line: selection.end.line + 1,
        end_column: column(selection.end.line, selection.end.character),
        file: selection.path,
        language: selection.language_id,
        text: selection.text,
    }
}
