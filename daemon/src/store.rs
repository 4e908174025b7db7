//! Durable state in sled: the only module that imports it.
//!
//! Records on disk are their own versioned types (`store/records.rs`),
//! separate from domain and wire types, so the format can evolve without
//! touching either. A write is acknowledged only after [`Store::flush`] has
//! made it durable. A store that cannot be opened or read is moved aside and
//! rebuilt from the newest automatic backup.

mod records;

use std::path::{Path, PathBuf};

pub use records::Export;
use records::{ReviewRecord, SessionRecord, ThreadRecord};

use crate::feedback::Thread;
use crate::reviews::Review;

/// How many automatic backups are kept.
const BACKUPS_KEPT: usize = 5;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot open the store at {path}: {source}; if another Parley daemon uses it, stop that one or set PARLEY_DATA_DIR"
    )]
    Open { path: PathBuf, source: sled::Error },
    #[error("the store at {0} is corrupt (sled panicked while opening it)")]
    Corrupt(PathBuf),
    #[error("store: {0}")]
    Sled(#[from] sled::Error),
    #[error("a stored record is unreadable: {0}")]
    Record(#[from] serde_json::Error),
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
}

/// How long opening waits for a store locked by a closing handle.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether sled failed to open because another handle holds its file lock
/// (sled says so only in its message).
fn is_locked(error: &sled::Error) -> bool {
    matches!(error, sled::Error::Io(e) if e.to_string().contains("could not acquire lock"))
}

/// The daemon's store.
#[derive(Debug, Clone)]
pub struct Store {
    db: sled::Db,
    reviews: sled::Tree,
    threads: sled::Tree,
    /// File texts threads were anchored against, keyed by their hash.
    snapshots: sled::Tree,
    sessions: sled::Tree,
    path: PathBuf,
}

/// What happened when a corrupt store was replaced.
#[derive(Debug, Clone)]
pub struct Recovery {
    pub moved_to: PathBuf,
    pub backup: Option<PathBuf>,
    pub cause: String,
}

impl Store {
    /// Opens (creating if needed) the store in `dir`.
    ///
    /// sled's file lock outlives a closed store by a moment (its flusher
    /// thread lets go last), so a lock held by someone else is retried for a
    /// few seconds before it is reported.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let path = dir.join("store");
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        let db = loop {
            // sled 0.34 panics on some kinds of corruption instead of failing.
            // A 16 MiB page cache, not sled's default 1 GiB: the state owner
            // keeps every thread in memory, so the store is read only at start
            // and for snapshots, and a full cache held 100,000 threads twice.
            match std::panic::catch_unwind(|| sled::Config::new().path(&path).cache_capacity(16 << 20).open()) {
                Ok(Ok(db)) => break db,
                Ok(Err(source)) if is_locked(&source) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Ok(Err(source)) => return Err(StoreError::Open { path, source }),
                Err(_) => return Err(StoreError::Corrupt(path)),
            }
        };
        Ok(Store {
            reviews: db.open_tree("reviews")?,
            threads: db.open_tree("threads")?,
            snapshots: db.open_tree("snapshots")?,
            sessions: db.open_tree("sessions")?,
            db,
            path,
        })
    }

    /// Opens the store in `dir`; when it is corrupt or unreadable, moves it
    /// aside, starts a fresh one and restores the newest automatic backup.
    /// A store locked by another daemon is an error, never "corrupt".
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
            Err(StoreError::Open { source: sled::Error::Io(e), path })
                if e.kind() != std::io::ErrorKind::InvalidData =>
            {
                return Err(StoreError::Open { path, source: sled::Error::Io(e) });
            }
            Err(e) => e.to_string(),
        };
        let path = dir.join("store");
        let moved_to = dir.join(format!("store.corrupt-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ")));
        std::fs::rename(&path, &moved_to).map_err(|source| StoreError::Io {
            context: format!("moving the corrupt store {} aside", path.display()),
            source,
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
        let Ok(text) = std::fs::read(&backup) else {
            return Ok(None);
        };
        let Ok(export) = serde_json::from_slice::<Export>(&text) else {
            tracing::warn!("the backup {} is unreadable; not comparing the store with it", backup.display());
            return Ok(None);
        };
        let mut missing = Export::new(Vec::new(), Vec::new());
        for record in export.reviews {
            let review: Review = record.into();
            if !self.reviews.contains_key(review.base.as_os_str().as_encoded_bytes())? {
                missing.reviews.push(ReviewRecord::from(&review));
            }
        }
        for record in export.threads {
            let thread: Thread = record.into();
            if !self.threads.contains_key(thread.id.as_bytes())? {
                missing.threads.push(ThreadRecord::from(&thread));
            }
        }
        for SessionRecord::V1(session) in export.sessions {
            if !self.sessions.contains_key(session.id.as_bytes())? {
                missing.sessions.push(SessionRecord::V1(session));
            }
        }
        if missing.reviews.is_empty() && missing.threads.is_empty() && missing.sessions.is_empty() {
            return Ok(None);
        }
        let cause = format!(
            "{} review(s), {} thread(s) and {} session(s) from the backup were missing",
            missing.reviews.len(),
            missing.threads.len(),
            missing.sessions.len()
        );
        self.import(missing)?;
        self.db.flush()?;
        Ok(Some(Recovery { moved_to: self.path.clone(), backup: Some(backup), cause }))
    }

    /// Reads every record once, so corruption is found at start-up rather
    /// than in the middle of serving.
    fn check(&self) -> Result<(), StoreError> {
        self.reviews()?;
        self.threads()?;
        self.sessions()?;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every stored review.
    pub fn reviews(&self) -> Result<Vec<Review>, StoreError> {
        self.reviews.iter().map(|entry| Ok(serde_json::from_slice::<ReviewRecord>(&entry?.1)?.into())).collect()
    }

    /// Writes a review; durable after the next [`Store::flush`].
    pub fn put_review(&self, review: &Review) -> Result<(), StoreError> {
        let key = review.base.as_os_str().as_encoded_bytes();
        self.reviews.insert(key, serde_json::to_vec(&ReviewRecord::from(review))?)?;
        Ok(())
    }

    /// Every stored thread, resolved ones included.
    pub fn threads(&self) -> Result<Vec<Thread>, StoreError> {
        self.threads.iter().map(|entry| Ok(serde_json::from_slice::<ThreadRecord>(&entry?.1)?.into())).collect()
    }

    /// Writes a thread; durable after the next [`Store::flush`].
    pub fn put_thread(&self, thread: &Thread) -> Result<(), StoreError> {
        self.threads.insert(thread.id.as_bytes(), serde_json::to_vec(&ThreadRecord::from(thread))?)?;
        Ok(())
    }

    /// Every stored review session.
    pub fn sessions(&self) -> Result<Vec<crate::sessions::Session>, StoreError> {
        self.sessions
            .iter()
            .map(|entry| {
                let SessionRecord::V1(session) = serde_json::from_slice(&entry?.1)?;
                Ok(session)
            })
            .collect()
    }

    /// Writes a session; durable after the next [`Store::flush`].
    pub fn put_session(&self, session: &crate::sessions::Session) -> Result<(), StoreError> {
        self.sessions.insert(session.id.as_bytes(), serde_json::to_vec(&SessionRecord::V1(session.clone()))?)?;
        Ok(())
    }

    /// Keeps a file text under its hash, for diffing old → new later.
    /// Removes a session; durable after the next [`Store::flush`].
    pub fn remove_session(&self, id: &str) -> Result<(), StoreError> {
        self.sessions.remove(id.as_bytes())?;
        Ok(())
    }

    pub fn put_snapshot(&self, hash: &str, text: &str) -> Result<(), StoreError> {
        if !self.snapshots.contains_key(hash)? {
            self.snapshots.insert(hash, text.as_bytes())?;
        }
        Ok(())
    }

    pub fn snapshot(&self, hash: &str) -> Result<Option<String>, StoreError> {
        Ok(self.snapshots.get(hash)?.and_then(|bytes| String::from_utf8(bytes.to_vec()).ok()))
    }

    /// Drops snapshots no thread refers to any more.
    pub fn remove_snapshot(&self, hash: &str) -> Result<(), StoreError> {
        self.snapshots.remove(hash)?;
        Ok(())
    }

    /// Makes every write so far durable.
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.db.flush_async().await?;
        Ok(())
    }

    /// Everything a user would want back: reviews and threads (snapshots are
    /// a cache and are left out).
    pub fn export(&self) -> Result<Export, StoreError> {
        let reviews =
            self.reviews.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        let threads =
            self.threads.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        let mut export = Export::new(reviews, threads);
        export.sessions =
            self.sessions.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        Ok(export)
    }

    /// Adds (or replaces, by key) everything in an export; returns how many
    /// reviews and threads it held.
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
        Ok(counts)
    }

    /// Writes an automatic backup beside the store (atomically) and keeps
    /// only the newest few.
    pub fn write_backup(&self, data_dir: &Path) -> Result<PathBuf, StoreError> {
        let dir = data_dir.join("backups");
        let io = |context: String| move |source| StoreError::Io { context, source };
        std::fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let name = format!("parley-backup-{}.json", chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ"));
        let path = dir.join(name);
        let partial = path.with_extension("json.partial");
        let bytes = serde_json::to_vec(&self.export()?)?;
        std::fs::write(&partial, bytes).map_err(io(format!("writing {}", partial.display())))?;
        std::fs::rename(&partial, &path).map_err(io(format!("renaming {}", partial.display())))?;
        let mut all = backups(data_dir);
        while all.len() > BACKUPS_KEPT {
            let oldest = all.remove(0);
            let _ = std::fs::remove_file(oldest);
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

fn newest_backup(data_dir: &Path) -> Option<PathBuf> {
    backups(data_dir).pop()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feedback::{Comment, Span, ThreadState};

    fn review() -> Review {
        Review {
            base: PathBuf::from("/ws"),
            content: "# R\n[`a.rs:1`][]".into(),
            revision: 3,
            updated_at: "2026-11-21T00:00:00Z".into(),
            references: crate::reviews::check_references(
                crate::reviews::find_references("[`a.rs:1`][]"),
                Path::new("/ws"),
                |_| crate::reviews::FileFacts::Lines(1),
            ),
        }
    }

    fn thread() -> Thread {
        Thread {
            id: crate::feedback::new_id(),
            workspace: PathBuf::from("/ws"),
            path: "src/a.rs".into(),
            anchor: crate::anchor::capture("one\ntwo\nthree\n", 4..7),
            anchored_against: "h1".into(),
            checked_against: "h1".into(),
            span: Span { start_line: 1, end_line: 1, ..Span::default() },
            state: ThreadState::Modified(0.5),
            original_quote: "two".into(),
            comments: vec![Comment {
                id: "c1".into(),
                body: "why?".into(),
                author: "me".into(),
                created_at: "t".into(),
            }],
            created_at: "t".into(),
            updated_at: "t".into(),
            resolved: false,
        }
    }

    #[tokio::test]
    async fn records_survive_reopening() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (review, thread) = (review(), thread());
        {
            let store = Store::open(dir.path()).expect("open");
            store.put_review(&review).expect("put");
            store.put_thread(&thread).expect("put");
            store.put_snapshot("h1", "one\ntwo\nthree\n").expect("put");
            store.flush().await.expect("flush");
        }
        let store = Store::open(dir.path()).expect("reopen");
        assert_eq!(store.reviews().expect("read"), vec![review]);
        assert_eq!(store.threads().expect("read"), vec![thread]);
        assert_eq!(store.snapshot("h1").expect("read").as_deref(), Some("one\ntwo\nthree\n"));
    }

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
