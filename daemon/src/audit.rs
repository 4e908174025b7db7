//! The audit trail of review sessions, as seed 004 lays it out:
//! `<dir>/sessions/<id>/request.json`, `changes.diff`, `round-N/review.json`
//! (with the round's own `changes.diff`), and `<dir>/latest.json`.
//!
//! The tree lives inside a repository, which may be a stranger's: nothing
//! here follows a link. The audit folder must lie inside the repository; its
//! folders are opened (or made) one at a time from the repository root,
//! refusing any that is a symbolic link; every file is written to a fresh
//! temporary file created exclusively in its final folder, then renamed over
//! its name, so a link planted at either name is replaced, never written
//! through.

use std::path::{Component, Path, PathBuf};

use serde_json::json;

use crate::sessions::{Round, Session};

#[cfg(unix)]
#[path = "audit/unix.rs"]
mod tree;
#[cfg(windows)]
#[path = "audit/windows.rs"]
mod tree;
use tree::Tree;

/// Why the audit trail was not written; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error(
        "the audit folder {} is outside the repository {}: it must be a folder inside it; set audit_dir under [review] to one (the default is .reviews)",
        dir.display(), root.display()
    )]
    Outside { dir: PathBuf, root: PathBuf },
    #[error(
        "{} is a symbolic link, and the audit tree is never written through one (it could point anywhere): replace it with a folder, or set audit_dir under [review] to another folder inside the repository",
        path.display()
    )]
    Link { path: PathBuf },
    #[error(
        "{} is not a folder: move it away, or set audit_dir under [review] to another folder inside the repository",
        path.display()
    )]
    NotAFolder { path: PathBuf },
    #[error("{id:?} is not a review id (they look like 2026-11-21-001), so it has no folder in the audit tree")]
    NotASessionId { id: String },
    #[error("cannot write {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// The folder of one session, relative to the audit folder; refuses an id
/// that is not a session id (an imported one, say), which could name a
/// path anywhere.
pub fn session_dir(id: &str) -> Result<PathBuf, AuditError> {
    if !crate::sessions::is_session_id(id) {
        return Err(AuditError::NotASessionId { id: id.to_owned() });
    }
    Ok(Path::new("sessions").join(id))
}

/// Records a round: the request (first round), the diff, the review, and
/// `latest.json`, in the audit folder `audit_dir` of the session's
/// repository. Returns the round's folder as written, through no link.
pub fn record_round(audit_dir: &Path, session: &Session, round: &Round, diff: &str) -> Result<PathBuf, AuditError> {
    let tree = Tree::open(&session.workspace, audit_dir)?;
    let dir = session_dir(&session.id)?;
    let request = json!({
        "review_id": session.id,
        "created_at": session.created_at,
        "workspace": session.workspace,
        "summary": session.request.summary,
        "relevant_docs": session.request.relevant_docs,
        "focus_areas": session.request.focus_areas,
        "scope": session.request.scope,
    });
    tree.write(&dir.join("request.json"), &pretty(&request))?;
    tree.write(&dir.join("changes.diff"), diff.as_bytes())?;
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
    tree.write(&round_dir.join("review.json"), &pretty(&review))?;
    tree.write(&round_dir.join("changes.diff"), diff.as_bytes())?;
    write_latest(&tree, session)?;
    Ok(tree.path.join(round_dir))
}

/// Records how a session ended.
pub fn record_completion(audit_dir: &Path, session: &Session) -> Result<(), AuditError> {
    let Some(done) = &session.completion else { return Ok(()) };
    let tree = Tree::open(&session.workspace, audit_dir)?;
    let completion = json!({
        "review_id": session.id,
        "final_status": done.final_status,
        "notes": done.notes,
        "completed_at": done.at,
        "rounds": session.rounds.len(),
    });
    tree.write(&session_dir(&session.id)?.join("completion.json"), &pretty(&completion))?;
    write_latest(&tree, session)
}

fn write_latest(tree: &Tree, session: &Session) -> Result<(), AuditError> {
    let latest = json!({
        "review_id": session.id,
        "status": session.status(),
        "round": session.rounds.len(),
        "updated_at": session.updated_at,
        "path": format!("sessions/{}", session.id),
    });
    tree.write(Path::new("latest.json"), &pretty(&latest))
}

fn pretty(value: &serde_json::Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("JSON values always serialize");
    bytes.push(b'\n');
    bytes
}

/// The repository root and the audit folder relative to it, checked to be
/// inside it: relative, with no `..`. An absolute `audit_dir` that names the
/// repository by another path (through a linked home folder, say) is
/// compared as the file system resolves both.
pub(crate) fn inside(root: &Path, audit_dir: &Path) -> Result<(PathBuf, PathBuf), AuditError> {
    let outside = || AuditError::Outside { dir: audit_dir.to_owned(), root: root.to_owned() };
    let normal = |relative: &Path| {
        !relative.as_os_str().is_empty() && relative.components().all(|c| matches!(c, Component::Normal(_)))
    };
    if let Ok(relative) = audit_dir.strip_prefix(root) {
        return if normal(relative) { Ok((root.to_owned(), relative.to_owned())) } else { Err(outside()) };
    }
    let (Ok(real_root), Ok(real_dir)) = (dunce::canonicalize(root), dunce::canonicalize(audit_dir)) else {
        return Err(outside());
    };
    match real_dir.strip_prefix(&real_root) {
        Ok(relative) if normal(relative) => Ok((real_root.clone(), relative.to_owned())),
        _ => Err(outside()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_audit_folder_must_be_inside_the_repository() {
        let root = Path::new("/work/repo");
        let check = |dir: &str| inside(root, Path::new(dir)).map(|(_, relative)| relative);
        assert_eq!(check("/work/repo/.reviews").expect("inside"), Path::new(".reviews"));
        assert_eq!(check("/work/repo/docs/reviews").expect("inside"), Path::new("docs/reviews"));
        for outside in ["/work/repo/../../x", "/work/repo/..", "/work/repo", "/elsewhere/.reviews", "/work/repo2/x"] {
            let err = check(outside).expect_err(outside);
            assert!(matches!(err, AuditError::Outside { .. }), "{outside}: {err}");
            assert!(err.to_string().contains("set audit_dir under [review]"), "{err}");
        }
    }

    #[test]
    fn only_session_ids_have_folders() {
        assert_eq!(session_dir("2026-11-21-001").expect("an id"), Path::new("sessions/2026-11-21-001"));
        for bad in ["../../../../tmp/x", "2026-11-21-001/../../x", "", "/etc"] {
            assert!(matches!(session_dir(bad), Err(AuditError::NotASessionId { .. })), "{bad}");
        }
    }

    #[test]
    #[cfg(unix)] // symbolic links (Windows needs a privilege to make one)
    fn files_replace_planted_links_and_folders_refuse_them() {
        let repo = tempfile::tempdir().expect("repo");
        let outside = tempfile::tempdir().expect("outside");
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, "precious").expect("victim");
        let audit = repo.path().join(".reviews");
        std::fs::create_dir_all(audit.join("sessions")).expect("sessions");
        // Links at the final name and at the name the old writer used.
        std::os::unix::fs::symlink(&victim, audit.join("latest.json")).expect("link");
        std::os::unix::fs::symlink(&victim, audit.join(".latest.json.partial")).expect("link");
        let tree = Tree::open(repo.path(), &audit).expect("opens");
        tree.write(Path::new("latest.json"), b"{}\n").expect("writes");
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "precious");
        let written = std::fs::symlink_metadata(audit.join("latest.json")).expect("written");
        assert!(written.is_file(), "the link was replaced by a file");
        assert_eq!(std::fs::read_to_string(audit.join("latest.json")).expect("read"), "{}\n");

        // A linked folder on the way is refused, whether the audit folder
        // itself or one below it.
        std::os::unix::fs::symlink(outside.path(), audit.join("sessions/2026-01-01-001")).expect("link");
        let err = tree.write(Path::new("sessions/2026-01-01-001/request.json"), b"x").expect_err("refused");
        assert!(matches!(err, AuditError::Link { .. }), "{err}");
        let linked = repo.path().join("linked");
        std::os::unix::fs::symlink(outside.path(), &linked).expect("link");
        let err = Tree::open(repo.path(), &linked.join("deeper")).err().expect("refused");
        assert!(matches!(err, AuditError::Link { .. }), "{err}");
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(outside.path()).expect("outside").count(), 1, "only the victim is outside");
    }
}
