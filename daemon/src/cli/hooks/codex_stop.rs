//! `parley hook codex-stop`: Codex's `Stop` hook. When the turn's last
//! assistant message (or, when Codex gives none, the transcript's last
//! assistant message) holds a `<proposed_plan>` block, the plan is reviewed
//! in Parley: `{}` lets the turn end on approval, `{"decision":"block",
//! "reason":…}` continues it with what to revise. A turn with no plan, and a
//! plan already answered when Codex continues because of this hook
//! (`stop_hook_active`), print `{}` at once, unless a person's message
//! waits for this agent: the turn then goes on with it (once: not when
//! `stop_hook_active`).

use std::io::Read as _;
use std::path::Path;

use serde_json::{Value, json};

use super::plan_wait::{self, Plan, Reviewed};
use super::{HookError, HookInput, delivery, plan_message};

const OPEN: &str = "<proposed_plan>";
const CLOSE: &str = "</proposed_plan>";
/// The most of a transcript read, from its end.
const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;

pub async fn answer(input: HookInput) -> Result<Option<String>, HookError> {
    input.expect_event("Stop")?;
    let session = input.text("session_id")?.to_owned();
    let cwd = input.cwd()?;
    let active = input.flag("stop_hook_active")?;
    let message = match input.optional_text("last_assistant_message")? {
        Some(message) => Some(message.to_owned()),
        None => match input.optional_text("transcript_path")? {
            Some(path) => last_assistant_message(Path::new(path)),
            None => None,
        },
    };
    let Some(plan) = message.as_deref().and_then(proposed_plan) else {
        return end_turn(active, &cwd).await;
    };
    let plan_cwd = cwd.clone();
    let plan = Plan { host: "codex", host_session: session, cwd: plan_cwd, text: plan, name: None, new_only: active };
    let verdict = match plan_wait::review(&plan).await? {
        Reviewed::Verdict(verdict) => verdict,
        Reviewed::AlreadyAnswered => return end_turn(active, &cwd).await,
    };
    if verdict.outcome != "changes_requested" {
        if verdict.outcome == "ended" {
            eprintln!(
                "parley hook codex-stop: round {} of review {} ended without a verdict ({})",
                verdict.round,
                verdict.review_id,
                verdict.reason.as_deref().unwrap_or("no reason given")
            );
        }
        return end_turn(active, &cwd).await;
    }
    let reason = plan_message::revise(&verdict, "present the revised plan in a new <proposed_plan> block");
    Ok(Some(json!({ "decision": "block", "reason": reason }).to_string()))
}

/// The turn ends (`{}`), unless a person's message waits for this agent
/// and the turn does not already go on because of this hook: it then goes
/// on with the message.
async fn end_turn(active: bool, cwd: &Path) -> Result<Option<String>, HookError> {
    if active {
        return Ok(Some("{}".into()));
    }
    Ok(Some(match delivery::take(cwd).await? {
        Some(messages) => json!({ "decision": "block", "reason": messages }).to_string(),
        None => "{}".into(),
    }))
}

/// The text of the last `<proposed_plan>` block in `message`, trimmed.
pub fn proposed_plan(message: &str) -> Option<String> {
    let start = message.rfind(OPEN)? + OPEN.len();
    let end = message[start..].find(CLOSE).map_or(message.len(), |at| start + at);
    let plan = message[start..end].trim_matches(['\n', '\r']);
    (!plan.trim().is_empty()).then(|| plan.to_owned())
}

/// The last assistant message of a transcript (JSON lines): Codex's
/// `response_item` messages and `agent_message` events, or Claude-style
/// `assistant` entries. `None` when it cannot be read or holds none.
fn last_assistant_message(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    if size > MAX_TRANSCRIPT_BYTES {
        use std::io::Seek as _;
        file.seek(std::io::SeekFrom::Start(size - MAX_TRANSCRIPT_BYTES)).ok()?;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    text.lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|entry| assistant_text(&entry))
}

fn assistant_text(entry: &Value) -> Option<String> {
    let payload = entry.get("payload").unwrap_or(entry);
    let texts = |content: &Value| -> Option<String> {
        match content {
            Value::String(text) => Some(text.clone()),
            Value::Array(parts) => {
                let joined: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
                (!joined.is_empty()).then(|| joined.join("\n"))
            }
            _ => None,
        }
    };
    match payload.get("type").and_then(Value::as_str) {
        Some("message") if payload.get("role").and_then(Value::as_str) == Some("assistant") => {
            texts(payload.get("content")?)
        }
        Some("agent_message") => payload.get("message").and_then(Value::as_str).map(str::to_owned),
        Some("assistant") => texts(payload.get("message")?.get("content")?),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_proposed_plan_is_found() {
        let message = "Here it is.\n<proposed_plan>\n# Old\n</proposed_plan>\nbetter:\n<proposed_plan>\n# Plan\n1. a\n</proposed_plan>\n";
        assert_eq!(proposed_plan(message).as_deref(), Some("# Plan\n1. a"));
        assert_eq!(proposed_plan("no plan here"), None);
        assert_eq!(proposed_plan("<proposed_plan>\n\n</proposed_plan>"), None);
    }

    #[test]
    fn assistant_messages_are_read_from_each_transcript_shape() {
        let codex = json!({"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}});
        assert_eq!(assistant_text(&codex).as_deref(), Some("hi"));
        let event = json!({"type":"event_msg","payload":{"type":"agent_message","message":"yo"}});
        assert_eq!(assistant_text(&event).as_deref(), Some("yo"));
        let user = json!({"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"no"}]}});
        assert_eq!(assistant_text(&user), None);
    }
}
