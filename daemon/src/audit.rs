//! The audit trail of review sessions, as seed 004 lays it out:
//! `<dir>/sessions/<id>/request.json`, `changes.diff`, `round-N/review.json`
//! (with the round's own `changes.diff`), and `<dir>/latest.json`. Every file
//! is written atomically (a temporary file renamed into place).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::sessions::{Round, Session};

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().ok_or("the audit path has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let partial = dir.join(format!(".{}.partial", path.file_name().and_then(|n| n.to_str()).unwrap_or("file")));
    std::fs::write(&partial, bytes).map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
    std::fs::rename(&partial, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn pretty(value: &serde_json::Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("JSON values always serialize");
    bytes.push(b'\n');
    bytes
}

/// The folder of one session.
pub fn session_dir(audit_dir: &Path, id: &str) -> PathBuf {
    audit_dir.join("sessions").join(id)
}

/// Records a round: the request (first round), the diff, the review, and
/// `latest.json`. Returns the round's folder.
pub fn record_round(audit_dir: &Path, session: &Session, round: &Round, diff: &str) -> Result<PathBuf, String> {
    let dir = session_dir(audit_dir, &session.id);
    let request = json!({
        "review_id": session.id,
        "created_at": session.created_at,
        "workspace": session.workspace,
        "summary": session.request.summary,
        "relevant_docs": session.request.relevant_docs,
        "focus_areas": session.request.focus_areas,
        "scope": session.request.scope,
    });
    write_atomically(&dir.join("request.json"), &pretty(&request))?;
    write_atomically(&dir.join("changes.diff"), diff.as_bytes())?;
    let round_dir = dir.join(format!("round-{}", round.round));
    let mut review = serde_json::to_value(&round.review).expect("reviews always serialize");
    if let Some(object) = review.as_object_mut() {
        object.insert("review_id".into(), json!(session.id));
        object.insert("timestamp".into(), json!(round.at));
        object.insert("round".into(), json!(round.round));
        object.insert("status".into(), json!(session.status()));
        object.insert("verdict".into(), json!(round.verdict));
        object.insert("request_summary".into(), json!(round.summary));
        object.insert("changed_files".into(), json!(round.changed_files));
        object.insert("reviewer".into(), json!(round.reviewer));
    }
    write_atomically(&round_dir.join("review.json"), &pretty(&review))?;
    write_atomically(&round_dir.join("changes.diff"), diff.as_bytes())?;
    write_latest(audit_dir, session)?;
    Ok(round_dir)
}

/// Records how a session ended.
pub fn record_completion(audit_dir: &Path, session: &Session) -> Result<(), String> {
    let Some(done) = &session.completion else { return Ok(()) };
    let completion = json!({
        "review_id": session.id,
        "final_status": done.final_status,
        "notes": done.notes,
        "completed_at": done.at,
        "rounds": session.rounds.len(),
    });
    write_atomically(&session_dir(audit_dir, &session.id).join("completion.json"), &pretty(&completion))?;
    write_latest(audit_dir, session)
}

fn write_latest(audit_dir: &Path, session: &Session) -> Result<(), String> {
    let latest = json!({
        "review_id": session.id,
        "status": session.status(),
        "round": session.rounds.len(),
        "updated_at": session.updated_at,
        "path": format!("sessions/{}", session.id),
    });
    write_atomically(&audit_dir.join("latest.json"), &pretty(&latest))
}
