//! Why the store failed, and the disk's refusals (full, read-only, denied)
//! said in words a user acts on.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Why the disk refused a write, in the words a user acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskProblem {
    Full,
    ReadOnly,
    Denied,
}

impl DiskProblem {
    /// The problem behind an IO error, when it is one a user can fix.
    fn of_io(error: &std::io::Error) -> Option<DiskProblem> {
        if let Some(problem) = error.raw_os_error().and_then(Self::of_errno) {
            return Some(problem);
        }
        // sled copies IO errors by kind and text, dropping the OS code.
        match error.kind() {
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Some(DiskProblem::Full),
            ErrorKind::ReadOnlyFilesystem => Some(DiskProblem::ReadOnly),
            ErrorKind::PermissionDenied => Some(DiskProblem::Denied),
            _ => None,
        }
    }

    /// The problem behind a Unix error number.
    #[cfg(unix)]
    fn of_errno(code: i32) -> Option<DiskProblem> {
        use rustix::io::Errno;
        let errno = Errno::from_raw_os_error(code);
        if errno == Errno::NOSPC || errno == Errno::DQUOT {
            return Some(DiskProblem::Full);
        }
        if errno == Errno::ROFS {
            return Some(DiskProblem::ReadOnly);
        }
        if errno == Errno::ACCESS || errno == Errno::PERM {
            return Some(DiskProblem::Denied);
        }
        None
    }

    /// Windows error codes map to the kinds matched below.
    #[cfg(not(unix))]
    fn of_errno(_code: i32) -> Option<DiskProblem> {
        None
    }

    pub(super) fn of_sled(error: &sled::Error) -> Option<DiskProblem> {
        match error {
            sled::Error::Io(e) => DiskProblem::of_io(e),
            _ => None,
        }
    }
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the store at {0} is in use by another Parley daemon: stop that one (`parley stop`) or set PARLEY_DATA_DIR to another folder"
    )]
    Locked(PathBuf),
    #[error("cannot open the store at {path}: {source}")]
    Open { path: PathBuf, source: sled::Error },
    #[error("{}", disk_sentence(*problem, path))]
    Disk { path: PathBuf, problem: DiskProblem },
    #[error("the store at {0} is corrupt (sled panicked while opening it)")]
    Corrupt(PathBuf),
    #[error("store: {0}")]
    Sled(#[from] sled::Error),
    #[error("a stored record is unreadable: {0}")]
    Record(#[from] serde_json::Error),
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
}

/// What a user reads when the disk refuses the store's writes.
fn disk_sentence(problem: DiskProblem, path: &Path) -> String {
    let path = path.display();
    match problem {
        DiskProblem::Full => {
            format!("the disk holding Parley's store ({path}) is full: free some space, then try again")
        }
        DiskProblem::ReadOnly => format!(
            "Parley's store ({path}) is on a read-only file system: make it writable (or set PARLEY_DATA_DIR to a writable folder), then try again"
        ),
        DiskProblem::Denied => format!(
            "Parley may not write its store ({path}): give your user write access to it (or set PARLEY_DATA_DIR to a writable folder), then try again"
        ),
    }
}

impl StoreError {
    /// A sled error, named as a disk problem when it is one.
    pub(super) fn from_sled(path: &Path, error: sled::Error) -> StoreError {
        match DiskProblem::of_sled(&error) {
            Some(problem) => StoreError::Disk { path: path.to_owned(), problem },
            None => StoreError::Sled(error),
        }
    }

    /// An IO error met at `context`, named as a disk problem when it is one.
    pub(super) fn from_io(path: &Path, context: String, source: std::io::Error) -> StoreError {
        match DiskProblem::of_io(&source) {
            Some(problem) => StoreError::Disk { path: path.to_owned(), problem },
            None => StoreError::Io { context, source },
        }
    }

    /// The disk problem behind this error, if that is what it is.
    pub fn disk_problem(&self) -> Option<DiskProblem> {
        match self {
            StoreError::Disk { problem, .. } => Some(*problem),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How an IO error is told to the user, by OS code or (as sled hands
    /// them on) by kind alone.
    #[test]
    fn disk_errors_are_named_for_what_the_user_can_do() {
        use std::io::Error;
        let check = |error: Error, want: Option<DiskProblem>| assert_eq!(DiskProblem::of_io(&error), want, "{error}");
        check(Error::from_raw_os_error(28), Some(DiskProblem::Full));
        check(Error::from_raw_os_error(122), Some(DiskProblem::Full));
        check(Error::from_raw_os_error(30), Some(DiskProblem::ReadOnly));
        check(Error::from_raw_os_error(13), Some(DiskProblem::Denied));
        check(Error::from_raw_os_error(1), Some(DiskProblem::Denied));
        check(Error::from_raw_os_error(5), None);
        check(Error::new(ErrorKind::StorageFull, "Os { code: 28 }"), Some(DiskProblem::Full));
        check(Error::new(ErrorKind::ReadOnlyFilesystem, "Os { code: 30 }"), Some(DiskProblem::ReadOnly));
        check(Error::new(ErrorKind::InvalidData, "bad"), None);

        let said = |problem| StoreError::Disk { path: PathBuf::from("/d/store"), problem }.to_string();
        assert_eq!(
            said(DiskProblem::Full),
            "the disk holding Parley's store (/d/store) is full: free some space, then try again"
        );
        assert!(said(DiskProblem::ReadOnly).contains("read-only file system"));
        assert!(said(DiskProblem::Denied).contains("give your user write access"));
    }
}
