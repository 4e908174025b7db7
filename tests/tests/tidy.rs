//! Rules of the code base that a reviewer would otherwise have to remember:
//! every Rust file says what it is for, the front doors leave durability and
//! state to the use cases, and the daemon's modules import no cycles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_owned()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name != "target" && name != "node_modules" && !name.to_string_lossy().starts_with('.') {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

#[test]
fn every_rust_file_opens_with_a_doc_line() {
    let mut files = Vec::new();
    for crate_dir in ["protocol", "daemon", "shim", "tests", "fuzz"] {
        rust_files(&repo().join(crate_dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} Rust files under {}", files.len(), repo().display());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !read(f).trim_start().starts_with("//!"))
        .map(|f| f.strip_prefix(repo()).unwrap_or(f).display().to_string())
        .collect();
    assert!(missing.is_empty(), "these files do not open with a `//!` line saying what they are for: {missing:?}");
}

/// The files that translate between a wire and the use cases.
const FRONT_DOORS: &[&str] = &[
    "daemon/src/hub/connection.rs",
    "daemon/src/hub/errors.rs",
    "daemon/src/mcp.rs",
    "daemon/src/mcp/feedback.rs",
    "daemon/src/mcp/sessions.rs",
    "daemon/src/mcp/errors.rs",
    "daemon/src/mcp/prompts.rs",
    "daemon/src/mcp/subscriptions.rs",
];

#[test]
fn front_doors_leave_durability_and_state_to_the_use_cases() {
    for door in FRONT_DOORS {
        let text = read(&repo().join(door));
        for forbidden in [".flush(", "Command::", "state::Command", "store::Store"] {
            assert!(
                !text.contains(forbidden),
                "{door} uses `{forbidden}`: a front door decodes, calls a use case (daemon/src/usecases/) and encodes; \
                 flushing and the state owner's commands belong to the use case"
            );
        }
    }
}

/// The daemon's top-level modules each file imports with `crate::…`.
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            found.insert(name);
        }
        // `use crate::{a, b::c}` names several.
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let item = item.trim();
                let name: String = item.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != "self" {
                    found.insert(name);
                }
            }
        }
    }
    found
}

#[test]
fn the_daemon_modules_import_no_cycles() {
    let src = repo().join("daemon/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // Module of a file: its first path component under src/, without `.rs`.
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative.components().next().expect("a component").as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = read(file);
        // Tests may reach anywhere.
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(imports(text).into_iter().filter(|m| *m != module));
    }
    // Depth-first search for a back edge.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        if let Some(cycle) = visit(module, &graph, &mut Vec::new(), &mut done) {
            panic!("the daemon's modules import each other in a cycle: {}", cycle.join(" → "));
        }
    }
}
