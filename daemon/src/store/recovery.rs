//! Recovering the store: one that cannot be opened or read is moved aside
//! and rebuilt from the newest automatic backup, and one that opens but
//! lacks records that backup holds gets them back.

use std::path::{Path, PathBuf};

use super::backups::newest_backup;
use super::records::{Export, ReviewRecord, SessionRecord, ThreadRecord, WalkthroughRecord};
use super::{Store, StoreError, Trees};
use crate::feedback::Thread;
use crate::reviews::Review;

/// What happened when a corrupt store was replaced.
#[derive(Debug, Clone)]
pub struct Recovery {
    pub moved_to: PathBuf,
    pub backup: Option<PathBuf>,
    pub cause: String,
}

impl Store {
    /// Opens the store in `dir`; when it is corrupt or unreadable, moves it
    /// aside, starts a fresh one and restores the newest automatic backup.
    /// A store locked by another daemon, or on a disk that refuses writes,
    /// is an error, never "corrupt".
    ///
    /// Parley never deletes a review or a thread (resolving keeps it), so a
    /// store that opens but lacks records the newest backup holds has lost
    /// data (sled drops a damaged log tail without an error): the missing
    /// records are restored from that backup.
    pub fn open_or_recover(dir: &Path) -> Result<(Store, Option<Recovery>), StoreError> {
        let cause = match Store::open(dir).and_then(|store| store.check().map(|()| store)) {
            Ok(store) => {
                let recovery = store.restore_missing(dir)?;
                return Ok((store, recovery));
            }
            Err(e @ (StoreError::Locked(_) | StoreError::Disk { .. })) => return Err(e),
            Err(StoreError::Open { source: sled::Error::Io(e), path })
                if e.kind() != std::io::ErrorKind::InvalidData =>
            {
                return Err(StoreError::Open { path, source: sled::Error::Io(e) });
            }
            Err(e) => e.to_string(),
        };
        let path = dir.join("store");
        let moved_to = dir.join(format!("store.corrupt-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ")));
        std::fs::rename(&path, &moved_to).map_err(|source| {
            StoreError::from_io(&path, format!("moving the corrupt store {} aside", path.display()), source)
        })?;
        let store = Store::open(dir)?;
        let backup = newest_backup(dir);
        if let Some(backup) = &backup {
            let text = std::fs::read(backup)
                .map_err(|source| StoreError::Io { context: format!("reading backup {}", backup.display()), source })?;
            store.import(serde_json::from_slice(&text)?)?;
        }
        Ok((store, Some(Recovery { moved_to, backup, cause })))
    }

    /// Restores the records of the newest backup that the store lacks.
    fn restore_missing(&self, dir: &Path) -> Result<Option<Recovery>, StoreError> {
        let Some(backup) = newest_backup(dir) else {
            return Ok(None);
        };
        // Most starts find every record: the keys alone, read from the file
        // as it streams, tell; the records are read only when some are
        // missing (100,000 threads are about 110 MB of JSON).
        let keys = std::fs::File::open(&backup)
            .ok()
            .and_then(|file| serde_json::from_reader::<_, BackupKeys>(std::io::BufReader::new(file)).ok());
        if let Some(keys) = keys
            && keys.all_in(&*self.trees()?)?
        {
            return Ok(None);
        }
        let Ok(text) = std::fs::read(&backup) else {
            return Ok(None);
        };
        let Ok(export) = serde_json::from_slice::<Export>(&text) else {
            tracing::warn!("the backup {} is unreadable; not comparing the store with it", backup.display());
            return Ok(None);
        };
        let trees = self.trees()?;
        let mut missing = Export::new(Vec::new(), Vec::new());
        for record in export.reviews {
            let review: Review = record.into();
            if !trees.reviews.contains_key(review.base.as_os_str().as_encoded_bytes())? {
                missing.reviews.push(ReviewRecord::from(&review));
            }
        }
        for record in export.threads {
            let thread: Thread = record.into();
            if !trees.threads.contains_key(thread.id.as_bytes())? {
                missing.threads.push(ThreadRecord::from(&thread));
            }
        }
        for SessionRecord::V1(session) in export.sessions {
            if !trees.sessions.contains_key(session.id.as_bytes())? {
                missing.sessions.push(SessionRecord::V1(session));
            }
        }
        for WalkthroughRecord::V1(walkthrough) in export.walkthroughs {
            if !trees.walkthroughs.contains_key(walkthrough.id.as_bytes())? {
                missing.walkthroughs.push(WalkthroughRecord::V1(walkthrough));
            }
        }
        if missing.reviews.is_empty()
            && missing.threads.is_empty()
            && missing.sessions.is_empty()
            && missing.walkthroughs.is_empty()
        {
            return Ok(None);
        }
        let cause = format!(
            "{} review(s), {} thread(s), {} session(s) and {} walkthrough(s) from the backup were missing",
            missing.reviews.len(),
            missing.threads.len(),
            missing.sessions.len(),
            missing.walkthroughs.len()
        );
        self.import(missing)?;
        trees.db.flush().map_err(|e| self.failed(e))?;
        Ok(Some(Recovery { moved_to: self.shared.path.clone(), backup: Some(backup), cause }))
    }

    /// Reads every record once, so corruption is found at start-up rather
    /// than in the middle of serving.
    fn check(&self) -> Result<(), StoreError> {
        self.reviews()?;
        self.each_thread(drop)?;
        self.sessions()?;
        Ok(())
    }
}

/// The keys of a backup's records, read without the records themselves.
#[derive(serde::Deserialize)]
struct BackupKeys {
    #[serde(default)]
    reviews: Vec<RecordKey>,
    #[serde(default)]
    threads: Vec<RecordKey>,
    #[serde(default)]
    sessions: Vec<RecordKey>,
    #[serde(default)]
    walkthroughs: Vec<RecordKey>,
}

/// A review's `base`, or a thread's or a session's `id`.
#[derive(serde::Deserialize)]
struct RecordKey {
    #[serde(default)]
    base: Option<PathBuf>,
    #[serde(default)]
    id: Option<String>,
}

impl BackupKeys {
    /// Whether the store holds every record the backup holds, by key; a
    /// record without its key counts as missing (the full comparison then
    /// decides).
    fn all_in(&self, trees: &Trees) -> Result<bool, StoreError> {
        let holds = |tree: &sled::Tree, key: Option<&[u8]>| match key {
            Some(key) => tree.contains_key(key),
            None => Ok(false),
        };
        for review in &self.reviews {
            if !holds(&trees.reviews, review.base.as_ref().map(|b| b.as_os_str().as_encoded_bytes()))? {
                return Ok(false);
            }
        }
        let by_id = [
            (&self.threads, &trees.threads),
            (&self.sessions, &trees.sessions),
            (&self.walkthroughs, &trees.walkthroughs),
        ];
        for (records, tree) in by_id {
            for record in records {
                if !holds(tree, record.id.as_ref().map(String::as_bytes))? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::tests::{review, thread};

    #[tokio::test]
    async fn a_corrupt_store_is_rebuilt_from_the_newest_backup() {
        let dir = tempfile::tempdir().expect("tempdir");
        let thread = thread();
        {
            let store = Store::open(dir.path()).expect("open");
            store.put_thread(&thread).expect("put");
            store.flush().await.expect("flush");
            store.write_backup(dir.path()).expect("backup");
        }
        let db = dir.path().join("store/db");
        let mut bytes = std::fs::read(&db).expect("read db");
        for b in bytes.iter_mut().skip(64) {
            *b ^= 0xA5;
        }
        std::fs::write(&db, bytes).expect("corrupt db");
        let (store, recovery) = Store::open_or_recover(dir.path()).expect("recover");
        let recovery = recovery.expect("the store was recovered");
        assert!(recovery.moved_to.exists(), "the corrupt store is kept aside");
        assert!(recovery.backup.is_some());
        assert_eq!(store.threads().expect("read"), vec![thread]);
    }

    /// A store that opens but lacks records its newest backup holds gets
    /// them back; one holding them all is left as it is. The backup, written
    /// a record at a time, is an export `parley import` reads.
    #[tokio::test]
    async fn records_missing_from_the_store_come_back_from_the_backup() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (review, kept, lost) = (review(), thread(), thread());
        {
            let store = Store::open(dir.path()).expect("open");
            store.put_review(&review).expect("put");
            store.put_thread(&kept).expect("put");
            store.put_thread(&lost).expect("put");
            store.flush().await.expect("flush");
            let backup = store.write_backup(dir.path()).expect("backup");
            let export: Export = serde_json::from_slice(&std::fs::read(&backup).expect("read")).expect("an export");
            assert_eq!((export.reviews.len(), export.threads.len()), (1, 2));
        }
        let (store, recovery) = Store::open_or_recover(dir.path()).expect("open");
        assert!(recovery.is_none(), "nothing was missing");
        store.trees().expect("trees").threads.remove(lost.id.as_bytes()).expect("remove");
        store.flush().await.expect("flush");
        drop(store);
        let (store, recovery) = Store::open_or_recover(dir.path()).expect("open");
        assert!(recovery.is_some(), "the lost thread was noticed");
        let mut threads = store.threads().expect("read");
        threads.sort_by(|a, b| a.id.cmp(&b.id));
        let mut expected = vec![kept, lost];
        expected.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(threads, expected);
        assert_eq!(store.reviews().expect("read"), vec![review]);
    }
}
