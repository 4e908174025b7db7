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

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde_json::json;

use crate::sessions::{Round, Session};

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

/// The audit folder, opened through no link from the repository root.
struct Tree {
    /// The folder itself: everything below is reached from it.
    dir: OwnedFd,
    /// Where it is (the root followed by the checked folders), for messages
    /// and for the path reported.
    path: PathBuf,
}

impl Tree {
    /// Opens (making what is missing) the audit folder `audit_dir` of the
    /// repository at `root`, refusing one outside the repository or with a
    /// link on its way from the root.
    fn open(root: &Path, audit_dir: &Path) -> Result<Tree, AuditError> {
        let (root, relative) = inside(root, audit_dir)?;
        let io = |path: &Path| {
            let path = path.to_owned();
            move |errno: Errno| AuditError::Io { path, source: errno.into() }
        };
        // The root is the repository as git named it: trusted, links and all.
        let mut dir = rustix::fs::open(&root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(io(&root))?;
        let mut path = root;
        for name in relative.components() {
            path.push(name);
            dir = folder(&dir, name.as_os_str(), &path)?;
        }
        Ok(Tree { dir, path })
    }

    /// Writes `bytes` to `relative` (under the audit folder), making its
    /// folders, through a temporary file renamed into place.
    fn write(&self, relative: &Path, bytes: &[u8]) -> Result<(), AuditError> {
        let name = relative.file_name().ok_or_else(|| AuditError::NotAFolder { path: self.path.join(relative) })?;
        let mut dir = None;
        let mut path = self.path.clone();
        for folder_name in relative.parent().into_iter().flat_map(Path::components) {
            path.push(folder_name);
            let parent = dir.as_ref().unwrap_or(&self.dir);
            dir = Some(folder(parent, folder_name.as_os_str(), &path)?);
        }
        let dir = dir.as_ref().unwrap_or(&self.dir);
        let target = path.join(name);
        let io = |errno: Errno| AuditError::Io { path: target.clone(), source: errno.into() };
        // A fresh name, created exclusively: a link planted under any name
        // the writer could pick is never opened.
        let temporary = format!(".{}.{}.partial", name.to_string_lossy(), uuid::Uuid::new_v4().simple());
        let file = rustix::fs::openat(
            dir,
            temporary.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(io)?;
        let written = std::fs::File::from(file)
            .write_all(bytes)
            .map_err(|source| AuditError::Io { path: target.clone(), source });
        // Renaming replaces whatever has the name, a link included, and
        // follows nothing.
        let renamed = written.and_then(|()| rustix::fs::renameat(dir, temporary.as_str(), dir, name).map_err(io));
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(dir, temporary.as_str(), AtFlags::empty());
        }
        renamed
    }
}

/// The repository root and the audit folder relative to it, checked to be
/// inside it: relative, with no `..`. An absolute `audit_dir` that names the
/// repository by another path (through a linked home folder, say) is
/// compared as the file system resolves both.
fn inside(root: &Path, audit_dir: &Path) -> Result<(PathBuf, PathBuf), AuditError> {
    let outside = || AuditError::Outside { dir: audit_dir.to_owned(), root: root.to_owned() };
    let normal = |relative: &Path| {
        !relative.as_os_str().is_empty() && relative.components().all(|c| matches!(c, Component::Normal(_)))
    };
    if let Ok(relative) = audit_dir.strip_prefix(root) {
        return if normal(relative) { Ok((root.to_owned(), relative.to_owned())) } else { Err(outside()) };
    }
    let (Ok(real_root), Ok(real_dir)) = (std::fs::canonicalize(root), std::fs::canonicalize(audit_dir)) else {
        return Err(outside());
    };
    match real_dir.strip_prefix(&real_root) {
        Ok(relative) if normal(relative) => Ok((real_root.clone(), relative.to_owned())),
        _ => Err(outside()),
    }
}

/// Opens the folder `name` inside `parent`, making it when missing;
/// refuses a link or anything that is not a folder.
fn folder(parent: &impl AsFd, name: &std::ffi::OsStr, path: &Path) -> Result<OwnedFd, AuditError> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let io = |errno: Errno| AuditError::Io { path: path.to_owned(), source: errno.into() };
    // Two tries: a folder made by someone else between the open and the
    // mkdir is opened on the second.
    for _ in 0..2 {
        match rustix::fs::openat(parent, name, flags, Mode::empty()) {
            Ok(dir) => return Ok(dir),
            Err(Errno::NOENT) => match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => continue,
                Err(errno) => return Err(io(errno)),
            },
            Err(errno @ (Errno::LOOP | Errno::NOTDIR | Errno::MLINK)) => {
                return Err(match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
                        AuditError::Link { path: path.to_owned() }
                    }
                    Ok(_) => AuditError::NotAFolder { path: path.to_owned() },
                    Err(_) => io(errno),
                });
            }
            Err(errno) => return Err(io(errno)),
        }
    }
    Err(io(Errno::NOENT))
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
