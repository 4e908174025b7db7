//! The data directory's permissions on Unix: it and everything in it are private to
//! the user (0700 and 0600), as they hold every comment; and the check that
//! it is writable before the daemon takes the socket.

use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

use super::Loosened;
use crate::store::{DiskProblem, StoreError};

/// Creates the data directory readable by the user alone, and closes to
/// other users whatever an older Parley left open in it. Answers what was
/// changed, to be logged; failing to change it is logged, not fatal (the
/// store may still open, and `parley doctor` reports it).
pub fn prepare_data_dir(dir: &Path) -> Result<Vec<Loosened>, StoreError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| StoreError::from_io(dir, format!("creating the data directory {}", dir.display()), source))?;
    match tighten(dir) {
        Ok(changed) => Ok(changed),
        Err(e) => {
            tracing::warn!("cannot make the data directory private: {e}");
            Ok(Vec::new())
        }
    }
}

/// Creates `dir` (and missing parents) readable by the user alone.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Fails when the data directory is on a read-only file system: checked
/// before the daemon takes the socket, so a client that starts it hears that
/// it exited and how to see why, instead of a reset connection.
pub fn check_writable(dir: &Path) -> Result<(), StoreError> {
    match rustix::fs::statvfs(dir) {
        Ok(facts) if facts.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY) => {
            Err(StoreError::Disk { path: dir.join("store"), problem: DiskProblem::ReadOnly })
        }
        // Anything else shows when the store opens.
        _ => Ok(()),
    }
}

/// Everything in `dir` (and `dir` itself) that other users may read, write
/// or enter. Symbolic links inside are not followed (their modes mean
/// nothing, and what they point at is not Parley's); `dir` itself may be one.
pub fn open_to_others(dir: &Path) -> std::io::Result<Vec<Loosened>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(path) = pending.pop() {
        let meta = if path == dir { std::fs::metadata(&path) } else { std::fs::symlink_metadata(&path) };
        let meta = match meta {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound && path != dir => continue,
            Err(e) => return Err(e),
        };
        if meta.file_type().is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            found.push(Loosened { path: path.clone(), mode });
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                pending.push(entry?.path());
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// Takes every permission of group and others off `dir` and what it holds;
/// answers what was changed.
pub fn tighten(dir: &Path) -> Result<Vec<Loosened>, StoreError> {
    let io = |context: String| move |source| StoreError::from_io(dir, context, source);
    let loose = open_to_others(dir).map_err(io(format!("reading {}", dir.display())))?;
    for item in &loose {
        std::fs::set_permissions(&item.path, std::fs::Permissions::from_mode(item.mode & !0o077))
            .map_err(io(format!("making {} private", item.path.display())))?;
    }
    Ok(loose)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::store::Store;

    #[test]
    fn the_data_directory_and_its_files_are_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        assert_eq!(prepare_data_dir(&data).expect("create"), []);
        let store = Store::open(&data).expect("open");
        store.write_backup(&data).expect("backup");
        assert_eq!(open_to_others(&data).expect("read"), [], "created private");

        let loose = data.join("store/db");
        std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let changed = prepare_data_dir(&data).expect("tighten");
        let changed: Vec<(PathBuf, u32)> = changed.into_iter().map(|l| (l.path, l.mode)).collect();
        assert_eq!(changed, [(data.clone(), 0o755), (loose, 0o644)]);
        assert_eq!(open_to_others(&data).expect("read"), []);
    }
}
