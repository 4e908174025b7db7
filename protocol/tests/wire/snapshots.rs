//! The wire pinned: every type the hub carries has a JSON snapshot under
//! `protocol/tests/snapshots/types/`, and `snapshots/methods.json` lists
//! each method and notification with its types and roles. A changed type,
//! method or role shows as a changed snapshot; `PARLEY_UPDATE_SNAPSHOTS=1`
//! rewrites them, for the diff to be reviewed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::registry::{Kind, messages, types};

const UPDATE: &str = "PARLEY_UPDATE_SNAPSHOTS";

fn snapshots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

fn updating() -> bool {
    std::env::var_os(UPDATE).is_some_and(|v| v == "1")
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("JSON encodes") + "\n"
}

/// Compares `path` with `want`, or writes it when updating; a difference is
/// added to `failures`.
fn check_file(path: &Path, want: &str, failures: &mut Vec<String>) {
    let name = path.strip_prefix(snapshots()).unwrap_or(path).display().to_string();
    if updating() {
        std::fs::create_dir_all(path.parent().expect("a snapshot is in a folder")).expect("create the snapshot folder");
        std::fs::write(path, want).unwrap_or_else(|e| panic!("writing {name}: {e}"));
        return;
    }
    match std::fs::read_to_string(path) {
        Err(e) => failures.push(format!("{name}: {e} (no snapshot yet)")),
        Ok(have) if have != want => failures.push(format!("{name} differs from the code; it would now be:\n{want}")),
        Ok(_) => {}
    }
}

fn fail_on(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{}\n\n{} snapshot problem(s). When the change is meant, rewrite the snapshots with \
         `{UPDATE}=1 cargo test -p parley-protocol --test wire` and review their diff",
        failures.join("\n\n"),
        failures.len()
    );
}

/// The method table as a client needs it: names, kinds, types and roles.
fn method_table() -> Value {
    let rows: Vec<Value> = messages()
        .iter()
        .map(|m| {
            let mut row = json!({"name": m.name, "params": m.params.name});
            match m.kind {
                Kind::Request => {
                    row["kind"] = json!("request");
                    let roles: Vec<&str> =
                        [("editor", m.editors), ("cli", m.cli)].into_iter().filter(|r| r.1).map(|r| r.0).collect();
                    row["roles"] = json!(roles);
                }
                Kind::DaemonRequest => {
                    row["kind"] = json!("request from the daemon");
                    row["roles"] = json!(["editor"]);
                }
                Kind::Notification => row["kind"] = json!("notification"),
            }
            if let Some(result) = m.result {
                row["result"] = json!(result.name);
            }
            row
        })
        .collect();
    Value::Array(rows)
}

#[test]
fn every_method_and_notification_is_in_the_method_table_snapshot() {
    let mut failures = Vec::new();
    check_file(&snapshots().join("methods.json"), &pretty(&method_table()), &mut failures);
    fail_on(failures);
}

#[test]
fn every_wire_type_has_a_snapshot_that_decodes_back_to_it() {
    let dir = snapshots().join("types");
    let mut failures = Vec::new();
    let mut names = BTreeSet::new();
    for wire in types() {
        names.insert(format!("{}.json", wire.name));
        let path = dir.join(format!("{}.json", wire.name));
        let example = (wire.example)();
        check_file(&path, &pretty(&example), &mut failures);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        // The snapshot is the type: it decodes to the example, and encoding
        // it again keeps every field.
        if let Err(e) = (wire.matches_example)(&text) {
            failures.push(format!("types/{}.json {e}", wire.name));
        }
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        match (wire.round_trip)(&value) {
            Ok(again) if again == value => {}
            Ok(again) => failures.push(format!("types/{}.json loses fields in a round trip: {again}", wire.name)),
            Err(e) => failures.push(format!("types/{}.json does not decode: {e}", wire.name)),
        }
    }
    // A snapshot whose type the hub no longer carries.
    for entry in std::fs::read_dir(&dir).expect("read the snapshots").flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if !names.contains(&file) {
            if updating() {
                std::fs::remove_file(entry.path()).expect("remove a stale snapshot");
            } else {
                failures.push(format!("types/{file} is the snapshot of no type the hub carries"));
            }
        }
    }
    fail_on(failures);
}

/// The wire names `protocol/src/methods.rs` and `hello.rs` declare, from
/// their `pub const NAME: &str = "…";` lines.
fn declared_names() -> Vec<String> {
    let mut names = Vec::new();
    for source in [include_str!("../../src/methods.rs"), include_str!("../../src/hello.rs")] {
        for line in source.lines() {
            let Some(rest) = line.strip_prefix("pub const ") else { continue };
            let Some((_, value)) = rest.split_once(": &str = \"") else { continue };
            names.push(value.trim_end_matches("\";").to_owned());
        }
    }
    names
}

#[test]
fn every_declared_method_name_is_in_the_list_of_methods() {
    let listed: Vec<&str> = messages().iter().map(|m| m.name).collect();
    let declared = declared_names();
    assert!(declared.len() >= 30, "found only {declared:?}");
    let missing: Vec<&String> = declared.iter().filter(|n| !listed.contains(&n.as_str())).collect();
    assert!(
        missing.is_empty(),
        "{missing:?} are declared in protocol/src but missing from for_each_method! or for_each_notification! \
         (protocol/src/methods.rs), so nothing pins their types"
    );
    let mut seen = BTreeSet::new();
    for name in &listed {
        assert!(seen.insert(name), "{name} is listed twice");
    }
}
