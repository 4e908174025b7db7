//! Which repository config files the user trusts: one record per repository,
//! keyed by the exact content of its `.parley.toml`, as direnv, mise and VS
//! Code's workspace trust keep theirs. A cloned repository's config can name
//! commands to run and switch guards off, so those settings take effect only
//! while the file is byte for byte what the user trusted; any change withdraws
//! the trust until the user looks again.
//!
//! The records live in Parley's data folder (`trusted-configs.json`), never in
//! the store: an export brought in with `parley import` cannot carry trust.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file holding the records, in the data folder.
pub const TRUST_FILE: &str = "trusted-configs.json";

/// Where a repository's config file stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The user trusted this exact content.
    Trusted,
    /// The user never trusted this repository's config.
    Untrusted,
    /// The user trusted an earlier content of the file; it changed since.
    Changed,
}

/// One trusted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The content hash the user trusted (see [`content_hash`]).
    pub hash: String,
    /// When, RFC 3339.
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    /// Keyed by the repository root, as an absolute path.
    #[serde(default)]
    repositories: BTreeMap<PathBuf, Record>,
}

/// The hash a record keys a file's content by.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("blake3:{}", blake3::hash(bytes).to_hex())
}

/// The records file, in the data folder.
pub fn trust_file() -> anyhow::Result<PathBuf> {
    Ok(super::data_dir()?.join(TRUST_FILE))
}

/// Where the config of the repository at `root`, whose content hashes to
/// `hash`, stands.
pub fn standing(root: &Path, hash: &str) -> Result<Trust, String> {
    let file = trust_file().map_err(|e| e.to_string())?;
    let records = read(&file)?;
    Ok(match records.repositories.get(&key(root)) {
        Some(record) if record.hash == hash => Trust::Trusted,
        Some(_) => Trust::Changed,
        None => Trust::Untrusted,
    })
}

/// Records that the user trusts the config of `root` whose content hashes to
/// `hash`. Returns the records file.
pub fn trust(root: &Path, hash: &str) -> Result<PathBuf, String> {
    let record = Record { hash: hash.to_owned(), trusted_at: crate::clock::now_rfc3339() };
    change(|records| {
        records.repositories.insert(key(root), record);
    })
}

/// Withdraws the trust in `root`'s config. Returns whether there was any.
pub fn revoke(root: &Path) -> Result<bool, String> {
    let mut had = false;
    change(|records| had = records.repositories.remove(&key(root)).is_some())?;
    Ok(had)
}

/// Repositories are keyed by their real path, so a link to one is the same.
fn key(root: &Path) -> PathBuf {
    dunce::canonicalize(root).unwrap_or_else(|_| root.to_owned())
}

fn read(file: &Path) -> Result<TrustFile, String> {
    match super::read_settings_file(file) {
        Ok(None) => Ok(TrustFile::default()),
        Ok(Some(bytes)) => serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{} is damaged ({e}): remove it and trust your repositories again with `parley trust`",
                file.display()
            )
        }),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}

/// Read, change and write the records under a lock, so two `parley trust`
/// at once both count; the new file replaces the old one whole.
fn change(edit: impl FnOnce(&mut TrustFile)) -> Result<PathBuf, String> {
    let file = trust_file().map_err(|e| e.to_string())?;
    let dir = file.parent().ok_or("the trust file has no folder")?;
    create_private_dir(dir)?;
    let lock_path = dir.join(format!("{TRUST_FILE}.lock"));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    lock.lock().map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    let mut records = read(&file)?;
    edit(&mut records);
    let mut bytes = serde_json::to_vec_pretty(&records).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    let mut temp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    temp.write_all(&bytes).and_then(|()| temp.as_file().sync_all()).map_err(|e| format!("cannot write: {e}"))?;
    temp.persist(&file).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(file)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}
