//! The `get_diagnostics` tool: the problems the editor windows open on the
//! agent's workspace report (`usecases::ide::diagnostics`), in the shape
//! agents read.

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Serialize};

use super::{ParleyMcp, errors};
use crate::usecases::ide::{self, DiagnosticsAnswer, FileProblems, Problem};

/// Arguments of `get_diagnostics`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsArgs {
    /// One file; default: all.
    #[serde(rename = "filePath")]
    pub file_path: Option<String>,
}

/// What `get_diagnostics` returns: lines and columns 1-based, columns in characters.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DiagnosticsResult {
    pub files: Vec<DiagnosedFile>,
    /// What the answer means: counts, and files that were stale or differ from the disk.
    pub message: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosedFile {
    pub file_path: String,
    pub editor: String,
    /// The editor's version of the document the problems were computed on.
    pub version: i64,
    /// Unsaved edits in the editor.
    pub dirty: bool,
    /// The editor analysed other text than the file on disk (null: unknown).
    pub differs_from_disk: Option<bool>,
    /// The problems had not settled after a recent change: maybe old, not clean.
    pub stale: bool,
    pub diagnostics: Vec<ProblemResult>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProblemResult {
    pub severity: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

#[tool_router(router = diagnostics_tools, vis = "pub(super)")]
impl ParleyMcp {
    #[tool(
        description = "Problems (errors, warnings) the human's editor reports for your workspace or a file, once settled after your edits; stale ones marked.",
        title = "Get diagnostics",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_diagnostics(
        &self,
        Parameters(args): Parameters<DiagnosticsArgs>,
    ) -> Result<Json<DiagnosticsResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let workspace = self
            .workspace()
            .or_else(|| self.agent.cwd.clone())
            .ok_or("this agent's workspace is unknown: start the agent inside the project folder")?;
        let answer =
            ide::diagnostics(&self.context, &workspace, args.file_path.as_deref()).await.map_err(|e| e.to_string())?;
        Ok(Json(DiagnosticsResult::from(answer)))
    }
}

impl From<DiagnosticsAnswer> for DiagnosticsResult {
    fn from(answer: DiagnosticsAnswer) -> Self {
        DiagnosticsResult {
            files: answer.files.into_iter().map(DiagnosedFile::from).collect(),
            message: answer.message,
        }
    }
}

impl From<FileProblems> for DiagnosedFile {
    fn from(file: FileProblems) -> Self {
        DiagnosedFile {
            file_path: file.path.display().to_string(),
            editor: file.editor,
            version: file.version,
            dirty: file.dirty,
            differs_from_disk: file.differs_from_disk,
            stale: file.stale,
            diagnostics: file.problems.into_iter().map(ProblemResult::from).collect(),
        }
    }
}

impl From<Problem> for ProblemResult {
    fn from(p: Problem) -> Self {
        ProblemResult {
            severity: p.severity,
            source: p.source,
            code: p.code,
            message: p.message,
            line: p.line,
            column: p.column,
            end_line: p.end_line,
            end_column: p.end_column,
        }
    }
}
