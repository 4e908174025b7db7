//! Rules of the code base that a reviewer would otherwise have to remember:
//! every Rust file says what it is for, the front doors leave durability and
//! state to the use cases, and neither the daemon's modules nor its files
//! import each other in a cycle.

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

/// The files that translate between a wire and the use cases: the MCP
/// server and every file of the hub's and the MCP server's folders (the
/// hub's own file accepts connections and reads `hello`).
fn front_doors() -> Vec<PathBuf> {
    let src = repo().join("daemon/src");
    let mut doors = vec![src.join("mcp.rs")];
    rust_files(&src.join("hub"), &mut doors);
    rust_files(&src.join("mcp"), &mut doors);
    // Binding the socket (its lock file, its permissions) translates no wire.
    doors.retain(|door| !door.ends_with("hub/listener.rs"));
    doors
}

#[test]
fn front_doors_leave_durability_and_state_to_the_use_cases() {
    let doors = front_doors();
    assert!(doors.len() > 8, "found only {} front-door files", doors.len());
    for door in &doors {
        let text = read(door);
        let door = door.strip_prefix(repo()).unwrap_or(door).display();
        for forbidden in [".flush(", "Command::", "state::Command", "store::Store", "crate::store"] {
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

/// A cycle in `graph`, found by a depth-first search for a back edge.
fn first_cycle<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Option<Vec<N>> {
    fn visit<N: Ord + Clone>(
        node: &N,
        graph: &BTreeMap<N, BTreeSet<N>>,
        path: &mut Vec<N>,
        done: &mut BTreeSet<N>,
    ) -> Option<Vec<N>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.clone());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
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
    if let Some(cycle) = first_cycle(&graph) {
        panic!("the daemon's modules import each other in a cycle: {}", cycle.join(" → "));
    }
}

/// A file's module path under `daemon/src`: `hub/connection.rs` is
/// `["hub", "connection"]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut path: Vec<String> = relative.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    if let Some(last) = path.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
        if last == "mod" {
            path.pop();
        }
    }
    path
}

/// `text` without its comments and the insides of its string literals, so
/// that a path in a doc example or a message is not taken for an import.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("//") {
            rest = rest.find('\n').map_or("", |i| &rest[i..]);
        } else if let Some(raw) = rest.strip_prefix("r#\"") {
            rest = raw.find("\"#").map_or("", |i| &raw[i + 2..]);
            out.push_str("\"\"");
        } else if let Some(string) = rest.strip_prefix('"') {
            let mut escaped = false;
            let end = string.char_indices().find(|&(_, c)| {
                let closes = !escaped && c == '"';
                escaped = !escaped && c == '\\';
                closes
            });
            rest = end.map_or("", |(i, _)| &string[i + 1..]);
            out.push_str("\"\"");
        } else if rest.starts_with("'\"'") {
            rest = &rest[3..];
        } else if rest.starts_with("'\\\"'") {
            rest = &rest[4..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Every path written from the start of `text` on, after `head::`
/// (`a::{b, c::d}` gives `head::a::b` and `head::a::c::d`), as segments.
fn expand(head: &str, text: &str) -> Vec<Vec<String>> {
    /// Reads one path (with its groups) from `text` onto `prefix`; how many
    /// bytes it took.
    fn read_path(text: &str, mut path: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let mut at = 0;
        loop {
            at += text[at..].len() - text[at..].trim_start().len();
            if text[at..].starts_with('{') {
                at += 1;
                loop {
                    at += read_path(&text[at..], path.clone(), out);
                    at += text[at..].len() - text[at..].trim_start().len();
                    match text[at..].chars().next() {
                        Some(',') => at += 1,
                        Some('}') => return at + 1,
                        _ => return at,
                    }
                }
            }
            let name: String = text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            at += name.len();
            let ended = name.is_empty() || !text[at..].starts_with("::");
            if !name.is_empty() && name != "self" {
                path.push(name);
            }
            if ended {
                out.push(path);
                return at;
            }
            at += 2;
        }
    }
    let mut out = Vec::new();
    read_path(text, vec![head.to_owned()], &mut out);
    out
}

#[test]
fn the_daemon_files_import_no_cycles() {
    let src = repo().join("daemon/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> =
        files.iter().map(|f| module_path(f.strip_prefix(&src).expect("under src"))).collect();
    // Edges between files: a file names another through `crate::`,
    // `super::` or `self::`, or a child module of its own by name. A child
    // naming its parent (or any ancestor) is not counted: a module is its
    // file and its children, and Rust lets children use their parent's items.
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let here = module_path(file.strip_prefix(&src).expect("under src"));
        if here == ["lib"] || here == ["main"] {
            continue;
        }
        let text = read(file);
        let text = code_only(text.split("#[cfg(test)]").next().unwrap_or(""));
        let children: BTreeSet<&str> = modules
            .iter()
            .filter(|m| m.len() == here.len() + 1 && m.starts_with(&here))
            .map(|m| m[here.len()].as_str())
            .collect();
        let mut named = Vec::new();
        let bytes = text.as_bytes();
        for (at, _) in text.match_indices("::") {
            // The identifier just before `::`, when it begins a path.
            let start = text[..at].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let head = &text[start..at];
            if head.is_empty() || (start >= 2 && &bytes[start - 2..start] == b"::") {
                continue;
            }
            let base: Vec<String> = match head {
                "crate" => Vec::new(),
                "super" => here[..here.len() - 1].to_vec(),
                "self" => here.clone(),
                child if children.contains(child) => here.clone(),
                _ => continue,
            };
            for path in expand(head, &text[at + 2..]) {
                let mut absolute = base.clone();
                absolute.extend(path.into_iter().skip(if matches!(head, "crate" | "super" | "self") { 1 } else { 0 }));
                named.push(absolute);
            }
        }
        let edges = graph.entry(here.clone()).or_default();
        for absolute in named {
            let target = (1..=absolute.len()).rev().map(|n| absolute[..n].to_vec()).find(|p| modules.contains(p));
            if let Some(target) = target
                && target != here
                && !here.starts_with(&target)
            {
                edges.insert(target);
            }
        }
    }
    assert!(graph.values().map(BTreeSet::len).sum::<usize>() > 100, "the import graph looks empty: {graph:?}");
    if let Some(cycle) = first_cycle(&graph) {
        let names: Vec<String> = cycle.iter().map(|m| format!("{}.rs", m.join("/"))).collect();
        panic!("the daemon's files import each other in a cycle: {}", names.join(" → "));
    }
}
