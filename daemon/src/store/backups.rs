//! Exports, imports and the automatic backups: an export written beside the
//! store a record at a time, so a store of any size fits, of which the
//! newest few are kept.

use std::path::{Path, PathBuf};

use parley_shim::daemon_start::owner_only;

use super::permissions::{create_private_dir, tighten};
use super::records::{Export, ReviewRecord, SessionRecord, ThreadRecord, WalkthroughRecord};
use super::{Store, StoreError};
use crate::feedback::Thread;
use crate::reviews::Review;

/// How many automatic backups are kept.
const BACKUPS_KEPT: usize = 5;

impl Store {
    /// Everything a user would want back: reviews, threads, sessions and
    /// walkthroughs (their current revisions; snapshots are a cache and are
    /// left out).
    pub fn export(&self) -> Result<Export, StoreError> {
        let trees = self.trees()?;
        let reviews =
            trees.reviews.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        let threads =
            trees.threads.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        let mut export = Export::new(reviews, threads);
        export.sessions =
            trees.sessions.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        export.walkthroughs =
            trees.walkthroughs.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        Ok(export)
    }

    /// Writes what [`Store::export`] gives, as JSON, to `out`, a record at a
    /// time: a backup of 100,000 threads (about 110 MB of JSON) is written
    /// without holding them all in memory twice more, beside the threads the
    /// state owner holds. Each record is read back into its type first, so
    /// an unreadable record fails the backup, as it fails an export.
    /// `failed` words a write's error.
    fn write_export(
        &self,
        out: &mut std::io::BufWriter<std::fs::File>,
        failed: &dyn Fn(std::io::Error) -> StoreError,
    ) -> Result<ExportCounts, StoreError> {
        let trees = self.trees()?;
        let mut write = |bytes: &[u8]| std::io::Write::write_all(out, bytes).map_err(failed);
        let exported_at = serde_json::to_string(&crate::clock::now_rfc3339())?;
        write(format!(r#"{{"format":"parley-export","version":1,"exported_at":{exported_at}"#).as_bytes())?;
        write(br#","reviews":["#)?;
        let reviews = copy_records::<ReviewRecord>(&trees.reviews, &mut write)?;
        write(br#"],"threads":["#)?;
        let threads = copy_records::<ThreadRecord>(&trees.threads, &mut write)?;
        write(br#"],"sessions":["#)?;
        let sessions = copy_records::<SessionRecord>(&trees.sessions, &mut write)?;
        write(br#"],"walkthroughs":["#)?;
        let walkthroughs = copy_records::<WalkthroughRecord>(&trees.walkthroughs, &mut write)?;
        write(b"]}")?;
        std::io::Write::flush(out).map_err(failed)?;
        out.get_ref().sync_all().map_err(failed)?;
        Ok(ExportCounts { reviews, threads, sessions, walkthroughs })
    }

    /// Writes what [`Store::export`] gives to `path`, a record at a time (so
    /// an export of any size is written), to a new file beside it first,
    /// renamed over `path` once whole: `path` is never left half written.
    /// The file is readable by the user alone. Answers what it holds and
    /// its size.
    pub fn export_to(&self, path: &Path) -> Result<(ExportCounts, u64), StoreError> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let partial = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
        let writing = |source| StoreError::Io { context: format!("writing {}", partial.display()), source };
        let file =
            owner_only(std::fs::OpenOptions::new().write(true).create_new(true)).open(&partial).map_err(writing)?;
        let written = self.write_export(&mut std::io::BufWriter::new(file), &writing).and_then(|counts| {
            let bytes = std::fs::metadata(&partial).map_err(writing)?.len();
            std::fs::rename(&partial, path).map_err(|source| StoreError::Io {
                context: format!("renaming {} to {}", partial.display(), path.display()),
                source,
            })?;
            Ok((counts, bytes))
        });
        if written.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        written
    }

    /// Adds (or replaces, by key) everything in an export; returns how many
    /// reviews and threads it held. A walkthrough imported is its current
    /// revision and a kept one.
    pub fn import(&self, export: Export) -> Result<(usize, usize), StoreError> {
        let counts = (export.reviews.len(), export.threads.len());
        for review in export.reviews {
            let review: Review = review.into();
            self.put_review(&review)?;
        }
        for thread in export.threads {
            let thread: Thread = thread.into();
            self.put_thread(&thread)?;
        }
        for SessionRecord::V1(session) in export.sessions {
            self.put_session(&session)?;
        }
        for WalkthroughRecord::V1(walkthrough) in export.walkthroughs {
            self.put_walkthrough(&walkthrough)?;
        }
        Ok(counts)
    }

    /// Writes an automatic backup beside the store (atomically, readable by
    /// the user alone) and keeps only the newest few.
    pub fn write_backup(&self, data_dir: &Path) -> Result<PathBuf, StoreError> {
        let dir = data_dir.join("backups");
        let io = |context: String| move |source| StoreError::from_io(data_dir, context, source);
        create_private_dir(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let name = format!("parley-backup-{}.json", chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ"));
        let path = dir.join(name);
        let partial = path.with_extension("json.partial");
        let file = owner_only(std::fs::OpenOptions::new().write(true).create(true).truncate(true))
            .open(&partial)
            .map_err(io(format!("writing {}", partial.display())))?;
        let failed = |source| StoreError::from_io(data_dir, format!("writing {}", partial.display()), source);
        if let Err(e) = self.write_export(&mut std::io::BufWriter::new(file), &failed) {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
        std::fs::rename(&partial, &path).map_err(io(format!("renaming {}", partial.display())))?;
        let mut all = backups(data_dir);
        while all.len() > BACKUPS_KEPT {
            let oldest = all.remove(0);
            let _ = std::fs::remove_file(oldest);
        }
        // sled adds files to the store as it runs; keep them private too.
        if let Err(e) = tighten(&self.shared.path) {
            tracing::debug!("cannot make the store's files private: {e}");
        }
        Ok(path)
    }
}

/// Automatic backups, oldest first (their names sort by time).
fn backups(data_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(data_dir.join("backups")) else {
        return Vec::new();
    };
    let mut all: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    all.sort();
    all
}

pub(super) fn newest_backup(data_dir: &Path) -> Option<PathBuf> {
    backups(data_dir).pop()
}

/// Writes the records of `tree`, comma-separated, each read back into `T`
/// and written again.
fn copy_records<T: serde::de::DeserializeOwned + serde::Serialize>(
    tree: &sled::Tree,
    write: &mut impl FnMut(&[u8]) -> Result<(), StoreError>,
) -> Result<usize, StoreError> {
    let mut count = 0;
    for (n, entry) in tree.iter().enumerate() {
        let (_, value) = entry?;
        let record: T = serde_json::from_slice(&value)?;
        if n > 0 {
            write(b",")?;
        }
        write(&serde_json::to_vec(&record)?)?;
        count += 1;
    }
    Ok(count)
}

/// How many records an export holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportCounts {
    pub reviews: usize,
    pub threads: usize,
    pub sessions: usize,
    pub walkthroughs: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn backups_are_pruned_to_the_newest_few() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        for _ in 0..BACKUPS_KEPT + 3 {
            store.write_backup(dir.path()).expect("backup");
        }
        assert_eq!(backups(dir.path()).len(), BACKUPS_KEPT);
    }
}
