//! `docs/protocol.md` held to the code: every ```json block is marked with
//! what it shows, in an HTML comment on the line before it, and decodes as
//! that. The marks, `<!-- wire: NAME PART -->`:
//!
//! - `NAME request`, `NAME notification`: whole messages of the method or
//!   notification NAME; their params decode as its params type.
//! - `NAME result`: whole responses whose result decodes as NAME's result type.
//! - `NAME error`: whole error responses, with one of the codes of
//!   `protocol/src/jsonrpc.rs`.
//! - `part of NAME params`, `part of NAME result`: an object with some of
//!   the type's fields (the rest as in its snapshot).
//! - `NAME request (refused)`: a request whose params do not decode, as an
//!   example of what the daemon refuses.
//! - `mcp`: MCP messages, which the hub does not type; they must be JSON-RPC.
//!
//! A block may hold several messages, one after the other. A decoded value
//! must keep every field the doc shows: a field the type does not know is a
//! disagreement even where the type would ignore it. What the daemon sends
//! must also show every field the daemon always sends. The doc must show
//! each method and notification, and its table of them (section 5) must
//! agree with the code's list.

use parley_protocol::jsonrpc::{Message as JsonRpc, code};
use serde_json::Value;

use crate::registry::{Kind, WireType, message};

const DOC: &str = include_str!("../../../docs/protocol.md");

/// A ```json block: where it starts, its mark and its text.
struct Block {
    line: usize,
    mark: Option<String>,
    text: String,
}

fn blocks() -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = DOC.lines().enumerate();
    let mut previous: Option<&str> = None;
    while let Some((number, line)) = lines.next() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            let mut text = String::new();
            for (_, inner) in lines.by_ref() {
                if inner.trim_start().starts_with("```") {
                    break;
                }
                text.push_str(inner);
                text.push('\n');
            }
            if info.trim() == "json" {
                let mark = previous
                    .and_then(|p| p.trim().strip_prefix("<!-- wire:"))
                    .and_then(|p| p.strip_suffix("-->"))
                    .map(|m| m.trim().to_owned());
                blocks.push(Block { line: number + 1, mark, text });
            }
            previous = None;
        } else if !line.trim().is_empty() {
            previous = Some(line);
        }
    }
    blocks
}

/// The error codes `protocol/src/jsonrpc.rs` declares.
fn known_codes() -> Vec<i64> {
    let known = include_str!("../../src/jsonrpc.rs")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const ")?.split_once(": i64 = ")?.1.strip_suffix(';')?.parse().ok())
        .collect::<Vec<i64>>();
    assert!(known.contains(&code::WRONG_ROLE), "read the codes of jsonrpc.rs: {known:?}");
    known
}

/// Whether `decoded` holds every field of `shown` with the same value;
/// `missing` says what a field of `shown` absent from `decoded` means.
fn keeps(shown: &Value, decoded: &Value, at: &str, missing: &str) -> Result<(), String> {
    match (shown, decoded) {
        (Value::Object(shown), Value::Object(decoded)) => {
            for (key, value) in shown {
                let here = format!("{at}.{key}");
                match decoded.get(key) {
                    Some(again) => keeps(value, again, &here, missing)?,
                    None => return Err(format!("{here} {missing}")),
                }
            }
            Ok(())
        }
        (Value::Array(shown), Value::Array(decoded)) if shown.len() == decoded.len() => shown
            .iter()
            .zip(decoded)
            .enumerate()
            .try_for_each(|(i, (s, d))| keeps(s, d, &format!("{at}[{i}]"), missing)),
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => Ok(()),
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{at} is {a} in the doc but {b} once decoded")),
    }
}

const NOT_A_FIELD: &str = "is not a field of the type (or is left out when encoded)";

/// Decodes `value` as `wire` and checks that nothing it shows was lost; for
/// what the daemon sends (`whole`), also that it shows every field the type
/// always has.
fn decodes(value: &Value, wire: WireType, at: &str, whole: bool) -> Result<(), String> {
    let again = (wire.round_trip)(value).map_err(|e| format!("{at} does not decode as {}: {e}", wire.name))?;
    keeps(value, &again, at, NOT_A_FIELD)?;
    if whole { keeps(&again, value, at, "is always sent by the daemon but missing from the doc") } else { Ok(()) }
}

/// `events/replay`'s events carry notifications as they were sent.
fn check_events(result: &Value) -> Result<(), String> {
    for (i, event) in result["events"].as_array().into_iter().flatten().enumerate() {
        let method = event["method"].as_str().unwrap_or_default();
        let notification = message(method)
            .filter(|m| m.kind == Kind::Notification)
            .ok_or_else(|| format!("events[{i}] is a {method:?}, which is no notification"))?;
        decodes(&event["params"], notification.params, &format!("events[{i}].params"), true)?;
    }
    Ok(())
}

fn check_value(mark: &str, value: &Value) -> Result<(), String> {
    if mark == "mcp" {
        let line = serde_json::to_vec(value).expect("JSON encodes");
        return JsonRpc::parse(&line).map(|_| ()).map_err(|e| format!("not a JSON-RPC message: {}", e.error.message));
    }
    if let Some(mark) = mark.strip_suffix(" (refused)") {
        // An example of what the daemon refuses: its params must not decode.
        return match check_value(mark, value) {
            Ok(()) => Err("marked (refused) but its params decode: the daemon would take it".into()),
            Err(e) if e.contains("does not decode") => Ok(()),
            Err(e) => Err(e),
        };
    }
    let words: Vec<&str> = mark.split_whitespace().collect();
    let (part, name, what) = match words.as_slice() {
        ["part", "of", name, what] => (true, *name, *what),
        [name, what] => (false, *name, *what),
        _ => return Err(format!("cannot read the mark {mark:?}: write `NAME request|notification|result|error`")),
    };
    let found = message(name).ok_or_else(|| format!("{name} is no method or notification of the hub"))?;
    let wire = match what {
        "request" | "notification" | "params" => found.params,
        "result" | "error" => found.result.ok_or_else(|| format!("{name} is a notification: it has no {what}"))?,
        other => return Err(format!("cannot read {other:?} in the mark {mark:?}")),
    };
    if part {
        // Some fields: the rest as in the type's snapshot.
        let mut whole = (wire.example)();
        let fields = value.as_object().ok_or("a part must be an object")?;
        for (key, field) in fields {
            whole[key] = field.clone();
        }
        let again = (wire.round_trip)(&whole).map_err(|e| format!("does not decode as part of {}: {e}", wire.name))?;
        return keeps(value, &again, "", NOT_A_FIELD);
    }
    if value["jsonrpc"] != "2.0" {
        return Err("a whole message needs \"jsonrpc\": \"2.0\" (or mark it `part of …`)".into());
    }
    match what {
        "request" | "notification" => {
            if value["method"] != name {
                return Err(format!("marked {name} but its method is {}", value["method"]));
            }
            if (what == "request") != value.get("id").is_some() {
                return Err(format!("a {what} {}", if what == "request" { "needs an id" } else { "has no id" }));
            }
            let expected = if found.kind == Kind::Notification { what == "notification" } else { what == "request" };
            if !expected {
                return Err(format!("{name} is not a {what}"));
            }
            // Absent or null params are the empty object, as the daemon reads them.
            let params = match value.get("params") {
                None | Some(Value::Null) => Value::Object(Default::default()),
                Some(params) => params.clone(),
            };
            decodes(
                &params,
                wire,
                "params",
                found.kind == Kind::Notification && !matches!(name, "editor/focus" | "selection/changed"),
            )
        }
        "result" => {
            let result = value.get("result").ok_or("a result response needs a result")?;
            decodes(result, wire, "result", found.kind == Kind::Request)?;
            if name == "events/replay" { check_events(result) } else { Ok(()) }
        }
        "error" => {
            let error = value.get("error").ok_or("an error response needs an error")?;
            let code = error["code"].as_i64().ok_or("an error needs a numeric code")?;
            if !known_codes().contains(&code) {
                return Err(format!("{code} is none of the codes of protocol/src/jsonrpc.rs"));
            }
            if error["message"].as_str().is_none_or(str::is_empty) {
                return Err("an error needs a message".into());
            }
            Ok(())
        }
        _ => Err(format!("`{what}` needs `part of` (write `NAME request` or `NAME result` for whole messages)")),
    }
}

#[test]
fn every_json_example_of_the_protocol_doc_decodes_as_what_it_is_marked() {
    let blocks = blocks();
    assert!(blocks.len() > 100, "found only {} JSON blocks in docs/protocol.md", blocks.len());
    let mut failures = Vec::new();
    for block in &blocks {
        let Some(mark) = &block.mark else {
            failures.push(format!(
                "docs/protocol.md:{}: mark the block with what it shows, e.g. `<!-- wire: feedback/list result -->` \
                 on the line before it",
                block.line
            ));
            continue;
        };
        let mut values = serde_json::Deserializer::from_str(&block.text).into_iter::<Value>().peekable();
        if values.peek().is_none() {
            failures.push(format!("docs/protocol.md:{}: the block is empty", block.line));
        }
        for value in values {
            let result = value.map_err(|e| format!("not JSON: {e}")).and_then(|v| check_value(mark, &v));
            if let Err(e) = result {
                failures.push(format!("docs/protocol.md:{} ({mark}): {e}", block.line));
            }
        }
    }
    assert!(failures.is_empty(), "{} example(s) disagree with the code:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_mark_of_the_protocol_doc_stands_before_a_json_block() {
    let lines: Vec<&str> = DOC.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("<!-- wire:") {
            let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
            assert!(
                next.is_some_and(|l| l.trim() == "```json"),
                "docs/protocol.md:{}: the mark {line:?} stands before no ```json block",
                i + 1
            );
        }
    }
}

#[test]
fn the_protocol_docs_method_table_lists_every_message_with_its_kind_and_roles() {
    let start = DOC.find("## 5. Methods and notifications").expect("section 5 of docs/protocol.md");
    let end = start + DOC[start..].find("\n### ").expect("section 5 has subsections");
    let mut rows = Vec::new();
    for line in DOC[start..end].lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
        if let [direction, name, kind, roles] = cells.as_slice()
            && let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`'))
        {
            rows.push((*direction, name, *kind, *roles));
        }
    }
    assert!(rows.len() > 30, "read only {} rows of section 5's table", rows.len());
    let mut failures = Vec::new();
    for (direction, name, kind, roles) in &rows {
        let Some(found) = message(name) else {
            failures.push(format!("{name} is in the table but no method or notification of the hub"));
            continue;
        };
        let (want_direction, want_kind, want_roles) = match found.kind {
            Kind::Request => {
                let roles: Vec<&str> =
                    [("editor", found.editors), ("cli", found.cli)].into_iter().filter(|r| r.1).map(|r| r.0).collect();
                ("client → daemon", "request", Some(roles.join(", ")))
            }
            Kind::DaemonRequest => ("daemon → client", "request", Some("editor".to_owned())),
            // Who receives a notification is said in words.
            Kind::Notification => (*direction, "notification", None),
        };
        if *direction != want_direction || *kind != want_kind || want_roles.as_deref().is_some_and(|r| r != *roles) {
            failures.push(format!(
                "{name}: the table says {direction} {kind} for {roles}, the code {want_direction} {want_kind} for {}",
                want_roles.as_deref().unwrap_or(roles)
            ));
        }
    }
    for listed in crate::registry::messages() {
        if listed.name != parley_protocol::hello::HELLO && !rows.iter().any(|r| r.1 == listed.name) {
            failures.push(format!("{} is missing from the table of section 5", listed.name));
        }
    }
    assert!(failures.is_empty(), "docs/protocol.md's method table disagrees with the code:\n{}", failures.join("\n"));
}

/// Requests whose answer the doc shows as another's rather than again.
const RESULT_SHOWN_ELSEWHERE: &[&str] = &[
    // "answers exactly as review/request does"
    "review/await",
    // its fields in a table; the review it carries is round/get's `answered.review`
    "round/submit",
];

#[test]
fn every_method_and_notification_has_an_example_in_the_protocol_doc() {
    let marks: Vec<String> = blocks().into_iter().filter_map(|b| b.mark).collect();
    let has = |mark: String| marks.iter().any(|m| m.trim_end_matches(" (refused)") == mark);
    let mut missing = Vec::new();
    for listed in crate::registry::messages() {
        let parts: &[&str] = match listed.kind {
            Kind::Notification => &["notification"],
            _ if RESULT_SHOWN_ELSEWHERE.contains(&listed.name) => &["request"],
            _ => &["request", "result"],
        };
        missing.extend(parts.iter().map(|part| format!("{} {part}", listed.name)).filter(|m| !has(m.clone())));
    }
    assert!(missing.is_empty(), "docs/protocol.md has no example of {missing:?}");
}
