//! The problems the editor windows open on a workspace report
//! (`diagnostics/get`), for an agent's `get_diagnostics`: each window asked
//! at once, a file's problems taken from the most recently focused window
//! that reports it, lines and columns made 1-based (columns counted in
//! characters of the file on disk), and whether the text the editor
//! analysed is the file on disk (its SHA-256 compared with the disk's, with
//! the line endings and byte-order mark editors drop allowed for).

use std::path::{Path, PathBuf};
use std::time::Duration;

use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::{DIAGNOSTICS_GET, DiagnosticsGetParams, DiagnosticsGetResult, FileDiagnostics};
use sha2::{Digest, Sha256};

use super::ask_all;
use crate::usecases::Context;
use crate::{position, workspace};

/// How long a window has to answer: it waits up to 5 s for its language
/// servers to settle after a recent change before it answers `stale`.
pub const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(8);
/// The largest file whose text is compared and whose columns are counted.
const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// One problem as an agent reads it: lines and columns 1-based, columns in
/// characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub severity: String,
    pub source: Option<String>,
    pub code: Option<String>,
    pub message: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

/// The problems of one file, and what text they were computed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblems {
    pub path: PathBuf,
    /// The window that reported them.
    pub editor: String,
    pub version: i64,
    pub dirty: bool,
    /// Whether the text the editor analysed differs from the file on disk;
    /// `None` when the editor did not say what it analysed.
    pub differs_from_disk: Option<bool>,
    pub stale: bool,
    pub problems: Vec<Problem>,
}

/// What asking gave, and a sentence saying what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticsAnswer {
    pub files: Vec<FileProblems>,
    pub message: String,
}

/// Why no window's problems could be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiagnosticsError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NoEditor(String),
}

/// The problems the windows open on `workspace` report for `file` (relative
/// to `workspace` or absolute), or for every file they have problems for.
pub async fn diagnostics(
    cx: &Context,
    workspace: &Path,
    file: Option<&str>,
) -> Result<DiagnosticsAnswer, DiagnosticsError> {
    let file = match file.map(str::trim) {
        None | Some("") => None,
        Some(given) => Some(checked_file(workspace, given)?),
    };
    let windows = cx.state.editors_on(workspace.to_owned()).await.unwrap_or_default();
    if windows.is_empty() {
        return Err(DiagnosticsError::NoEditor(format!(
            "no editor window is open on your workspace ({}), so no language server's problems can be read: ask \
             the person to open it in VS Code (or Cursor, VSCodium) with the Parley extension or in Neovim with the \
             Parley plugin, then call get_diagnostics again; meanwhile run the project's own checks (its compiler, \
             linter or tests)",
            workspace.display()
        )));
    }
    let params = DiagnosticsGetParams { workspace: workspace.to_owned(), path: file.clone() };
    let params = serde_json::to_value(params).map_err(|e| DiagnosticsError::Invalid(e.to_string()))?;
    let answers = ask_all(&windows, DIAGNOSTICS_GET, params, DIAGNOSTICS_TIMEOUT).await;
    let mut answered = Vec::new();
    let mut files: Vec<(FileDiagnostics, String, PositionEncoding)> = Vec::new();
    for (window, answer) in windows.iter().zip(answers) {
        let Some(Ok(result)) = answer.map(serde_json::from_value::<DiagnosticsGetResult>) else { continue };
        answered.push(window.name.clone());
        for reported in result.files {
            let wanted = file.as_ref().is_none_or(|f| *f == reported.path);
            let first = !files.iter().any(|(f, _, _)| f.path == reported.path);
            if wanted && first && workspace::holds(workspace, &reported.path) {
                files.push((reported, window.name.clone(), window.encoding));
            }
        }
    }
    if answered.is_empty() {
        let names = windows.iter().map(|w| w.name.as_str()).collect::<Vec<_>>().join(", ");
        return Err(DiagnosticsError::NoEditor(format!(
            "no editor window on your workspace answered within {} s ({names}): it may be busy or its Parley \
             extension too old to report problems; ask the person to reload it, or run the project's own checks",
            DIAGNOSTICS_TIMEOUT.as_secs()
        )));
    }
    let files = tokio::task::spawn_blocking(move || {
        let mut out: Vec<FileProblems> = files.into_iter().map(|(f, editor, enc)| compared(f, editor, enc)).collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    })
    .await
    .unwrap_or_default();
    let message = summary(&files, file.as_deref(), &answered);
    Ok(DiagnosticsAnswer { files, message })
}

/// `given` as an absolute file inside `workspace` that exists.
fn checked_file(workspace: &Path, given: &str) -> Result<PathBuf, DiagnosticsError> {
    let path = workspace::absolute(Path::new(given), workspace);
    if !workspace::holds(workspace, &path) {
        return Err(DiagnosticsError::Invalid(format!(
            "filePath {given} is outside your workspace {}: give a file inside it",
            workspace.display()
        )));
    }
    if !path.is_file() {
        return Err(DiagnosticsError::Invalid(format!(
            "filePath {given} is not a file under {}: give an existing file, or no filePath for the whole workspace",
            workspace.display()
        )));
    }
    Ok(path)
}

/// A window's report made an agent's: compared with the disk, positions
/// 1-based in characters of the disk's text.
fn compared(reported: FileDiagnostics, editor: String, encoding: PositionEncoding) -> FileProblems {
    let disk = crate::regular_file::read(&reported.path, MAX_FILE_BYTES).ok();
    let differs_from_disk = reported.sha256.as_deref().map(|analysed| match &disk {
        Some(bytes) => !same_text(analysed, bytes),
        None => true,
    });
    let text = disk.as_deref().and_then(|b| std::str::from_utf8(b).ok()).unwrap_or("");
    let lines: Vec<&str> = text.lines().collect();
    let column = |line: u32, character: u32| {
        let text = lines.get(line as usize).copied().unwrap_or("");
        position::to_char_column(text, character, encoding) + 1
    };
    let problems = reported
        .diagnostics
        .into_iter()
        .map(|d| Problem {
            line: d.range.start.line + 1,
            column: column(d.range.start.line, d.range.start.character),
            end_line: d.range.end.line + 1,
            end_column: column(d.range.end.line, d.range.end.character),
            severity: d.severity,
            source: d.source,
            code: d.code,
            message: d.message,
        })
        .collect();
    FileProblems {
        path: reported.path,
        editor,
        version: reported.version,
        dirty: reported.dirty,
        differs_from_disk,
        stale: reported.stale,
        problems,
    }
}

/// Whether `analysed` (lowercase hex SHA-256) is the hash of `disk`, as it
/// is or as editors hold it: without a UTF-8 byte-order mark, with CRLF
/// line endings as LF.
fn same_text(analysed: &str, disk: &[u8]) -> bool {
    let hex = |bytes: &[u8]| Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let analysed = analysed.to_ascii_lowercase();
    let unmarked = disk.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(disk);
    if hex(disk) == analysed || hex(unmarked) == analysed {
        return true;
    }
    let as_lf: Vec<u8> = {
        let mut out = Vec::with_capacity(unmarked.len());
        let mut bytes = unmarked.iter().peekable();
        while let Some(&b) = bytes.next() {
            if b == b'\r' && bytes.peek() == Some(&&b'\n') {
                continue;
            }
            out.push(b);
        }
        out
    };
    as_lf.len() != unmarked.len() && hex(&as_lf) == analysed
}

/// One sentence for the agent: how many problems, from which windows, and
/// what to distrust.
fn summary(files: &[FileProblems], file: Option<&Path>, answered: &[String]) -> String {
    let count = |severity: &str| files.iter().flat_map(|f| &f.problems).filter(|p| p.severity == severity).count();
    let (errors, warnings) = (count("error"), count("warning"));
    let others = files.iter().map(|f| f.problems.len()).sum::<usize>() - errors - warnings;
    let from = answered.join(", ");
    let any_stale = files.iter().any(|f| f.stale);
    let mut message = match (file, files.iter().all(|f| f.problems.is_empty())) {
        (Some(file), true) if any_stale => format!("{from} reported no problems for {} yet.", file.display()),
        (Some(file), true) if !files.is_empty() => format!("No problems in {} (from {from}).", file.display()),
        (Some(file), _) if files.is_empty() => {
            format!(
                "{from} reported nothing for {} (it may have no language server for this kind of file).",
                file.display()
            )
        }
        (None, true) => format!(
            "No problems reported by {from} (files a window has not analysed, such as ones never opened, may not be counted)."
        ),
        _ => format!(
            "{errors} error(s), {warnings} warning(s), {others} other(s) in {} file(s), from {from}.",
            files.len()
        ),
    };
    let stale: Vec<String> = files.iter().filter(|f| f.stale).map(|f| f.path.display().to_string()).collect();
    if !stale.is_empty() {
        message.push_str(&format!(
            " STALE: the problems of {} had not settled after a recent change; they may be old, not clean: call again shortly.",
            stale.join(", ")
        ));
    }
    let differs: Vec<String> =
        files.iter().filter(|f| f.differs_from_disk == Some(true)).map(|f| f.path.display().to_string()).collect();
    if !differs.is_empty() {
        message.push_str(&format!(
            " The editor analysed text that differs from the file on disk for {} (unsaved edits, or the file changed since).",
            differs.join(", ")
        ));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(bytes: &[u8]) -> String {
        Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn the_disk_matches_what_an_editor_holds_without_its_bom_and_crlf() {
        let disk = b"\xEF\xBB\xBFa\r\nb\r\n";
        assert!(same_text(&sha(disk), disk));
        assert!(same_text(&sha(b"a\r\nb\r\n"), disk));
        assert!(same_text(&sha(b"a\nb\n"), disk));
        assert!(!same_text(&sha(b"a\nc\n"), disk));
        assert!(!same_text(&sha(b"a\nb\n"), b"a\nb\n\n"));
    }
}
