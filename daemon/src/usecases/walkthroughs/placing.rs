//! Where a walkthrough comment goes: its location resolved against the
//! files (`path:line`, `lines`, `search`) or the language servers
//! (`findDefinition`, `findReferences`, through `usecases::ide`), to the
//! places it is put on, or why it cannot be, with the candidates of an
//! ambiguous one.

use std::path::Path;

use crate::reviews::FileFacts;
use crate::usecases::Context;
use crate::usecases::ide::{self, SymbolKind};
use crate::usecases::reviews::file_facts;
use crate::walkthrough::{Location, Place};
use crate::{text_search, workspace};

/// The most candidates an ambiguous location lists, and the most places a
/// `findReferences` comment is put on.
pub const MAX_CANDIDATES: usize = 20;
pub const MAX_REFERENCES: usize = 50;

/// A location resolved: the places to put the comment on, or why none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    Places(Vec<Place>),
    Unplaced { reason: String, candidates: Vec<Place> },
}

fn unplaced(reason: impl Into<String>) -> Placement {
    Placement::Unplaced { reason: reason.into(), candidates: Vec::new() }
}

/// Resolves `location`: paths are relative to `base`, places relative to
/// `workspace`.
pub async fn place(cx: &Context, workspace: &Path, base: &Path, location: &Location) -> Placement {
    match location {
        Location::Lines { path, start, end } => {
            let (base, path, (start, end)) = (base.to_owned(), path.clone(), (*start, *end));
            let root = workspace.to_owned();
            tokio::task::spawn_blocking(move || lines(&root, &base, &path, start, end))
                .await
                .unwrap_or_else(|e| unplaced(format!("checking the file failed: {e}")))
        }
        Location::Search { path, regex, extension } => {
            let Some(under) = crate::reviews::join_inside(base, Path::new(path)) else {
                return unplaced(format!("{path} is outside {}: search a folder inside it", base.display()));
            };
            if !under.exists() {
                return unplaced(format!("{path} does not exist under {}", base.display()));
            }
            let Ok(compiled) = regex::Regex::new(regex) else { return unplaced("the regex does not compile") };
            let (root, extension) = (workspace.to_owned(), extension.clone());
            let hits = tokio::task::spawn_blocking(move || {
                let hits = text_search::search(&under, &compiled, extension.as_deref());
                hits.iter().map(|hit| place_of(&root, &hit.file, hit.line)).collect::<Vec<_>>()
            })
            .await
            .unwrap_or_default();
            one_of(hits, || format!("no line under {path} matches `{regex}`"))
        }
        Location::Definition { name } => match ide::find_symbol(cx, workspace, name, SymbolKind::Definition).await {
            Ok(found) if !found.exact => near_names(name, found.places),
            Ok(found) => one_of(found.places, || {
                format!(
                    "no definition of `{name}` was found (by an editor's language server or a search of the workspace)"
                )
            }),
            Err(e) => unplaced(e.to_string()),
        },
        Location::References { name } => match ide::find_symbol(cx, workspace, name, SymbolKind::References).await {
            Ok(found) if !found.exact => near_names(name, found.places),
            Ok(found) if found.places.is_empty() => unplaced(format!("no reference to `{name}` was found")),
            Ok(found) if found.places.len() > MAX_REFERENCES => Placement::Unplaced {
                reason: format!(
                    "`{name}` is used in {} places, more than the {MAX_REFERENCES} one comment is put on: point at fewer (search in one folder, or lines)",
                    found.places.len()
                ),
                candidates: found.places.into_iter().take(MAX_CANDIDATES).collect(),
            },
            Ok(found) => Placement::Places(found.places),
            Err(e) => unplaced(e.to_string()),
        },
    }
}

/// A symbol no language server or search knows by that exact name: never
/// placed on a near name, which are offered instead.
fn near_names(name: &str, mut near: Vec<Place>) -> Placement {
    if near.is_empty() {
        return unplaced(format!(
            "no symbol named `{name}` was found (by an editor's language server or a search of the workspace)"
        ));
    }
    near.truncate(MAX_CANDIDATES);
    Placement::Unplaced {
        reason: format!(
            "no symbol is named exactly `{name}`; the language server knows near names (the candidates): name the one you mean with path:line"
        ),
        candidates: near,
    }
}

/// One place, or why not: none, or several (the candidates).
fn one_of(mut found: Vec<Place>, none: impl FnOnce() -> String) -> Placement {
    match found.len() {
        0 => unplaced(none()),
        1 => Placement::Places(found),
        n => {
            found.truncate(MAX_CANDIDATES);
            Placement::Unplaced {
                reason: format!("the location matches {n} places: name the one you mean with path:line"),
                candidates: found,
            }
        }
    }
}

fn place_of(workspace: &Path, file: &Path, line: u32) -> Place {
    let path = file.strip_prefix(workspace).unwrap_or(file).to_string_lossy().replace('\\', "/");
    Place { path, start_line: line, end_line: line, thread_id: None }
}

/// `path:start-end` checked: a file inside `base`, the lines in it.
fn lines(workspace: &Path, base: &Path, path: &str, start: u32, end: u32) -> Placement {
    let Some(file) = crate::reviews::join_inside(base, Path::new(path)) else {
        return unplaced(format!("{path} is outside {}", base.display()));
    };
    if !workspace::holds(workspace, &file) {
        return unplaced(format!("{path} is outside the workspace {}", workspace.display()));
    }
    match file_facts(base, &file) {
        FileFacts::Missing => unplaced(format!("file {path} does not exist under {}", base.display())),
        FileFacts::NotAFile => unplaced(format!("{path} is not a file")),
        FileFacts::Outside => unplaced(format!("{path} leads outside {} through a symbolic link", base.display())),
        FileFacts::InGit => unplaced(format!("{path} is inside .git")),
        FileFacts::Lines(count) if end > count => {
            unplaced(format!("line {end} is past the end of {path}, which has {count} line(s)"))
        }
        FileFacts::Lines(_) => {
            let mut place = place_of(workspace, &file, start - 1);
            place.end_line = end - 1;
            Placement::Places(vec![place])
        }
    }
}
