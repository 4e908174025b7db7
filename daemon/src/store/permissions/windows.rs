//! The data directory's permissions on Windows: it lives in the user's local
//! app data, which only the user (and administrators) may open, so nothing
//! is checked or changed.

use std::path::Path;

use super::Loosened;
use crate::store::StoreError;

/// Creates the data directory.
pub fn prepare_data_dir(dir: &Path) -> Result<Vec<Loosened>, StoreError> {
    create_private_dir(dir)
        .map_err(|source| StoreError::from_io(dir, format!("creating the data directory {}", dir.display()), source))?;
    Ok(Vec::new())
}

/// Creates `dir` (and missing parents); it inherits local app data's access.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// A read-only store shows when the store opens.
pub fn check_writable(_dir: &Path) -> Result<(), StoreError> {
    Ok(())
}

/// Windows files carry no Unix modes to find open.
pub fn open_to_others(_dir: &Path) -> std::io::Result<Vec<Loosened>> {
    Ok(Vec::new())
}

/// Nothing to tighten (see the module comment).
pub fn tighten(_dir: &Path) -> Result<Vec<Loosened>, StoreError> {
    Ok(Vec::new())
}
