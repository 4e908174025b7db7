//! What an editor's language servers know, asked of every editor window
//! open on the workspace: where a symbol is defined or used (a
//! walkthrough's `findDefinition(name)` and `findReferences(name)`,
//! `symbols/find`) and the problems they report (`get_diagnostics`,
//! `diagnostics/get`, in `diagnostics`). A window that does not answer in
//! time is passed over. Of the windows' hits, those named exactly as asked
//! are kept. Without one, a search of the workspace for the name as a word
//! stands in: for a definition, the lines that look like one (`fn name`,
//! `class name`, `const name`, …) first. A language server's near names
//! (`readTokenCached` for `readToken`) are only ever offered as candidates,
//! never taken as the symbol.

mod diagnostics;

use std::path::Path;
use std::time::Duration;

use parley_protocol::methods::{SYMBOLS_FIND, SymbolPlace, SymbolsFindParams, SymbolsFindResult};
use serde_json::Value;
use tokio::sync::oneshot;

use super::Context;
use crate::state::{Outbound, PickedEditor};
use crate::walkthrough::Place;
use crate::{text_search, workspace};

pub use diagnostics::{DiagnosticsAnswer, DiagnosticsError, FileProblems, Problem, diagnostics};

/// How long a window has to answer `symbols/find` before it is passed over.
pub const SYMBOLS_TIMEOUT: Duration = Duration::from_millis(1500);

/// Which places of a symbol are wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    Definition,
    References,
}

impl SymbolKind {
    fn wire(self) -> &'static str {
        match self {
            SymbolKind::Definition => "definition",
            SymbolKind::References => "references",
        }
    }
}

/// The places found for a symbol, and whether they are named as asked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SymbolMatches {
    pub places: Vec<Place>,
    /// False when only names near the one asked were found (the language
    /// servers' fuzzy matches): candidates to offer, not the symbol.
    pub exact: bool,
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
/// path relative to it; empty when nowhere. For references, the
/// definitions come first when a window knows them.
pub async fn find_symbol(
    cx: &Context,
    workspace: &Path,
    name: &str,
    kind: SymbolKind,
) -> Result<SymbolMatches, IdeError> {
    let word = last_part(name).trim().to_owned();
    if word.is_empty() || !word.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return Err(IdeError::Invalid(format!(
            "`{name}` is not a symbol's name: give an identifier such as `validateToken`"
        )));
    }
    let windows = cx.state.editors_on(workspace.to_owned()).await.unwrap_or_default();
    let params = SymbolsFindParams { workspace: workspace.to_owned(), name: name.to_owned(), kind: kind.wire().into() };
    let params = serde_json::to_value(params).map_err(|e| IdeError::Internal(e.to_string()))?;
    let mut hits = Vec::new();
    for answer in ask_all(&windows, SYMBOLS_FIND, params, SYMBOLS_TIMEOUT).await {
        if let Some(Ok(found)) = answer.map(serde_json::from_value::<SymbolsFindResult>) {
            hits.extend(found.places);
        }
    }
    let from_windows = from_editors(workspace, name, kind, hits);
    if from_windows.exact && !from_windows.places.is_empty() {
        return Ok(from_windows);
    }
    let root = workspace.to_owned();
    let searched = tokio::task::spawn_blocking(move || search_fallback(&root, &word, kind))
        .await
        .map_err(|e| IdeError::Internal(e.to_string()))?;
    if !searched.is_empty() {
        return Ok(SymbolMatches { places: searched, exact: true });
    }
    // Only near names, from the language servers: offered, not taken (and
    // nothing at all is simply nothing found).
    Ok(SymbolMatches { exact: from_windows.places.is_empty(), ..from_windows })
}

/// Sends `method` to every window at once; each answer, or `None` for a
/// window that was busy, failed, or did not answer within `timeout`.
async fn ask_all(
    windows: &[PickedEditor],
    method: &'static str,
    params: Value,
    timeout: Duration,
) -> Vec<Option<Value>> {
    let asked: Vec<_> = windows
        .iter()
        .map(|window| {
            let (reply, answer) = oneshot::channel();
            let request = Outbound::Request { method, params: params.clone(), reply };
            let sent = window.outbox.try_send(request).is_ok();
            tokio::spawn(async move {
                if !sent {
                    return None;
                }
                match tokio::time::timeout(timeout, answer).await {
                    Ok(Ok(Ok(value))) => Some(value),
                    _ => None,
                }
            })
        })
        .collect();
    let mut answers = Vec::with_capacity(asked.len());
    for task in asked {
        answers.push(task.await.unwrap_or(None));
    }
    answers
}

/// A qualified name's last part: `Cart::total` and `auth.validate` are
/// looked for as `total` and `validate`.
fn last_part(name: &str) -> &str {
    name.rsplit(['.', ':', '#']).find(|part| !part.is_empty()).unwrap_or(name)
}

/// The name a language server gives, as it compares with the one asked:
/// without a signature (`total()`, `total(a, b)`) or a qualifier.
fn plain_name(given: &str) -> &str {
    let without_signature = given.split('(').next().unwrap_or(given).trim();
    last_part(without_signature)
}

/// The windows' hits as places: those inside the workspace, named exactly
/// `name` (when a qualifier is given and some hit's container carries it,
/// only those), else every hit, marked not exact; each line once.
fn from_editors(workspace: &Path, name: &str, kind: SymbolKind, hits: Vec<SymbolPlace>) -> SymbolMatches {
    let word = last_part(name).trim();
    let qualifier = name.trim().strip_suffix(word).map(|q| q.trim_end_matches(['.', ':', '#'])).unwrap_or("");
    let inside: Vec<SymbolPlace> = hits.into_iter().filter(|hit| workspace::holds(workspace, &hit.path)).collect();
    let mut exact: Vec<&SymbolPlace> = inside.iter().filter(|hit| plain_name(&hit.name) == word).collect();
    if !qualifier.is_empty() {
        let holder = last_part(qualifier);
        let held: Vec<&SymbolPlace> = exact
            .iter()
            .copied()
            .filter(|hit| hit.container.as_deref().is_some_and(|c| plain_name(c) == holder))
            .collect();
        if !held.is_empty() {
            exact = held;
        }
    }
    let is_exact = !exact.is_empty();
    let chosen: Vec<&SymbolPlace> = if is_exact { exact } else { inside.iter().collect() };
    let mut seen = std::collections::HashSet::new();
    let places = chosen
        .into_iter()
        .filter_map(|hit| {
            let start = hit.range.start.line;
            // A range ending at the start of a line ends on the line before.
            let end = if hit.range.end.character == 0 && hit.range.end.line > start {
                hit.range.end.line - 1
            } else {
                hit.range.end.line.max(start)
            };
            let path = hit.path.strip_prefix(workspace).unwrap_or(&hit.path).to_string_lossy().replace('\\', "/");
            let key = match kind {
                SymbolKind::Definition => (path.clone(), start, end),
                // One comment per line a symbol is used on.
                SymbolKind::References => (path.clone(), start, start),
            };
            seen.insert(key.clone()).then_some(Place { path, start_line: start, end_line: key.2, thread_id: None })
        })
        .collect();
    SymbolMatches { places, exact: is_exact }
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

#[cfg(test)]
mod tests {
    use super::*;
    use parley_protocol::methods::{Position, Range};
    use std::path::PathBuf;

    fn hit(path: &str, line: u32, end_line: u32, name: &str, container: Option<&str>) -> SymbolPlace {
        SymbolPlace {
            path: PathBuf::from(path),
            range: Range {
                start: Position { line, character: 4 },
                end: Position { line: end_line, character: if end_line > line { 0 } else { 9 } },
            },
            name: name.into(),
            container: container.map(Into::into),
        }
    }

    fn lines(found: &SymbolMatches) -> Vec<String> {
        found.places.iter().map(|p| format!("{}:{}-{}", p.path, p.start_line, p.end_line)).collect()
    }

    #[test]
    fn exact_names_win_over_fuzzy_ones_and_fuzzy_ones_stand_in_for_none() {
        let ws = Path::new("/ws");
        let hits = vec![
            hit("/ws/a.ts", 3, 3, "readTokenCached", None),
            hit("/ws/b.ts", 7, 10, "readToken()", Some("Auth")),
            hit("/elsewhere/lib.d.ts", 1, 1, "readToken", None),
        ];
        assert_eq!(lines(&from_editors(ws, "readToken", SymbolKind::Definition, hits.clone())), ["b.ts:7-9"]);
        assert!(from_editors(ws, "readToken", SymbolKind::Definition, hits.clone()).exact);
        let fuzzy = from_editors(ws, "readToken", SymbolKind::Definition, vec![hits[0].clone()]);
        assert_eq!((lines(&fuzzy), fuzzy.exact), (vec!["a.ts:3-3".to_owned()], false), "a near name is not exact");
        assert!(from_editors(ws, "readToken", SymbolKind::Definition, vec![hits[2].clone()]).places.is_empty());
    }

    #[test]
    fn a_qualifier_picks_the_holder_and_references_are_one_per_line() {
        let ws = Path::new("/ws");
        let hits = vec![hit("/ws/a.py", 1, 1, "total", Some("Cart")), hit("/ws/b.py", 2, 2, "total", Some("Order"))];
        assert_eq!(lines(&from_editors(ws, "Order.total", SymbolKind::Definition, hits.clone())), ["b.py:2-2"]);
        assert_eq!(lines(&from_editors(ws, "Shop::total", SymbolKind::Definition, hits.clone())).len(), 2);
        let twice = vec![hit("/ws/a.py", 1, 1, "total", None), hit("/ws/a.py", 1, 1, "total", None)];
        assert_eq!(lines(&from_editors(ws, "total", SymbolKind::References, twice)), ["a.py:1-1"]);
    }
}
