//! The audit folder on Unix: every folder opened relative to its parent's
//! descriptor, refusing links, and every file created exclusively there.

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{AuditError, inside};

/// The audit folder, opened through no link from the repository root.
pub struct Tree {
    /// The folder itself: everything below is reached from it.
    dir: OwnedFd,
    /// Where it is (the root followed by the checked folders), for messages
    /// and for the path reported.
    pub path: PathBuf,
}

impl Tree {
    /// Opens (making what is missing) the audit folder `audit_dir` of the
    /// repository at `root`, refusing one outside the repository or with a
    /// link on its way from the root.
    pub fn open(root: &Path, audit_dir: &Path) -> Result<Tree, AuditError> {
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
    pub fn write(&self, relative: &Path, bytes: &[u8]) -> Result<(), AuditError> {
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
