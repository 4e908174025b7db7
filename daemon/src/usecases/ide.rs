//! What an editor's language servers know, for the daemon's own use: where
//! a symbol is defined or used (a walkthrough's `findDefinition(name)` and
//! `findReferences(name)`). Without an editor that answers, a search of the
//! workspace for the name as a word stands in: for a definition, the lines
//! that look like one (`fn name`, `class name`, `const name`, …) first.

use std::path::Path;

use super::Context;
use crate::text_search;
use crate::walkthrough::Place;

/// Which places of a symbol are wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    Definition,
    References,
}

/// Why a symbol could not be looked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdeError {
    #[error("{0}")]
    Invalid(String),
    #[error("searching the workspace failed: {0}")]
    Internal(String),
}

/// Where symbol `name` is defined or used in `workspace`, each place's
/// path relative to it; empty when nowhere.
pub async fn find_symbol(
    _cx: &Context,
    workspace: &Path,
    name: &str,
    kind: SymbolKind,
) -> Result<Vec<Place>, IdeError> {
    // A qualified name (`Cart::total`, `auth.validate`) is looked for by its last part.
    let word = name.rsplit(['.', ':']).find(|part| !part.is_empty()).unwrap_or(name).trim().to_owned();
    if word.is_empty() || !word.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return Err(IdeError::Invalid(format!(
            "`{name}` is not a symbol's name: give an identifier such as `validateToken`"
        )));
    }
    let root = workspace.to_owned();
    tokio::task::spawn_blocking(move || search_fallback(&root, &word, kind))
        .await
        .map_err(|e| IdeError::Internal(e.to_string()))
}

/// The word-boundary search standing in for the language servers.
fn search_fallback(root: &Path, word: &str, kind: SymbolKind) -> Vec<Place> {
    let escaped = regex::escape(word);
    let place = |hit: &text_search::Hit| Place {
        path: hit.file.strip_prefix(root).unwrap_or(&hit.file).to_string_lossy().replace('\\', "/"),
        start_line: hit.line,
        end_line: hit.line,
        thread_id: None,
    };
    if kind == SymbolKind::Definition {
        let definition = format!(
            r"\b(fn|def|class|struct|function|const|let|var|type|interface|enum|trait|impl|module|mod)\s+{escaped}\b"
        );
        if let Ok(regex) = regex::Regex::new(&definition) {
            let found = text_search::search(root, &regex, None);
            if !found.is_empty() {
                return found.iter().map(place).collect();
            }
        }
    }
    match regex::Regex::new(&format!(r"\b{escaped}\b")) {
        Ok(regex) => text_search::search(root, &regex, None).iter().map(place).collect(),
        Err(_) => Vec::new(),
    }
}
