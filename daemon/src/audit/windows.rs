//! The audit folder on Windows: each folder on the way from the repository
//! root checked not to be a link (a symbolic link or a junction) before it
//! is used, and every file written to a fresh temporary name created
//! exclusively, then renamed over its name.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{AuditError, inside};

/// The audit folder, reached through no link from the repository root.
pub struct Tree {
    /// Where it is (the root followed by the checked folders).
    pub path: PathBuf,
}

impl Tree {
    /// Checks (making what is missing) the audit folder `audit_dir` of the
    /// repository at `root`, refusing one outside the repository or with a
    /// link on its way from the root.
    pub fn open(root: &Path, audit_dir: &Path) -> Result<Tree, AuditError> {
        let (root, relative) = inside(root, audit_dir)?;
        let mut path = root;
        for name in relative.components() {
            path.push(name);
            folder(&path)?;
        }
        Ok(Tree { path })
    }

    /// Writes `bytes` to `relative` (under the audit folder), making its
    /// folders, through a temporary file renamed into place.
    pub fn write(&self, relative: &Path, bytes: &[u8]) -> Result<(), AuditError> {
        let name = relative.file_name().ok_or_else(|| AuditError::NotAFolder { path: self.path.join(relative) })?;
        let mut path = self.path.clone();
        for folder_name in relative.parent().into_iter().flat_map(Path::components) {
            path.push(folder_name);
            folder(&path)?;
        }
        let target = path.join(name);
        let io = |source| AuditError::Io { path: target.clone(), source };
        let temporary = path.join(format!(".{}.{}.partial", name.to_string_lossy(), uuid::Uuid::new_v4().simple()));
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temporary).map_err(io)?;
        let written = file.write_all(bytes).map_err(io);
        drop(file);
        let renamed = written.and_then(|()| std::fs::rename(&temporary, &target).map_err(io));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        renamed
    }
}

/// Makes the folder at `path` when missing; refuses a link or anything that
/// is not a folder.
fn folder(path: &Path) -> Result<(), AuditError> {
    let io = |source| AuditError::Io { path: path.to_owned(), source };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(AuditError::Link { path: path.to_owned() }),
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(AuditError::NotAFolder { path: path.to_owned() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::create_dir(path) {
            Ok(()) => folder(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => folder(path),
            Err(e) => Err(io(e)),
        },
        Err(e) => Err(io(e)),
    }
}
