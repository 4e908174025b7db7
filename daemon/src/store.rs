//! Durable state in sled: the only module that imports it.
//!
//! Records on disk are their own versioned types (`store/records.rs`),
//! separate from domain and wire types, so the format can evolve without
//! touching either. A write is acknowledged only after [`Store::flush`] (or
//! [`Store::write`]) has made it durable. A store that cannot be opened or
//! read is moved aside and rebuilt from the newest automatic backup.
//!
//! sled refuses every write after its first failed one (a full or read-only
//! disk), until it is opened again. So a failed write marks the store broken,
//! and the next write reopens it first: once the disk takes writes again,
//! Parley does too, without a restart. The data directory and everything in
//! it are private to the user (0700 and 0600): they hold every comment.

mod records;

use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

pub use records::Export;
use records::{ReviewRecord, SessionRecord, ThreadRecord};

use crate::feedback::Thread;
use crate::reviews::{KEPT_REVISIONS, Review};
use crate::sessions::Session;

/// How many automatic backups are kept.
const BACKUPS_KEPT: usize = 5;

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
        use rustix::io::Errno;
        if let Some(errno) = error.raw_os_error().map(Errno::from_raw_os_error) {
            if errno == Errno::NOSPC || errno == Errno::DQUOT {
                return Some(DiskProblem::Full);
            }
            if errno == Errno::ROFS {
                return Some(DiskProblem::ReadOnly);
            }
            if errno == Errno::ACCESS || errno == Errno::PERM {
                return Some(DiskProblem::Denied);
            }
        }
        // sled copies IO errors by kind and text, dropping the OS code.
        match error.kind() {
            ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Some(DiskProblem::Full),
            ErrorKind::ReadOnlyFilesystem => Some(DiskProblem::ReadOnly),
            ErrorKind::PermissionDenied => Some(DiskProblem::Denied),
            _ => None,
        }
    }

    fn of_sled(error: &sled::Error) -> Option<DiskProblem> {
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
    fn from_sled(path: &Path, error: sled::Error) -> StoreError {
        match DiskProblem::of_sled(&error) {
            Some(problem) => StoreError::Disk { path: path.to_owned(), problem },
            None => StoreError::Sled(error),
        }
    }

    /// An IO error met at `context`, named as a disk problem when it is one.
    fn from_io(path: &Path, context: String, source: std::io::Error) -> StoreError {
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

/// How many times, and how far apart, [`Store::release_memory`] tries.
const RELEASE_TRIES: u32 = 50;
const RELEASE_RETRY: std::time::Duration = std::time::Duration::from_millis(100);

/// How many records written make the store reopen once the writes stop,
/// and for how long they must stop (see [`Store::write`]).
pub const RELEASE_AFTER_WRITES: usize = 10_000;
pub const RELEASE_WHEN_QUIET: std::time::Duration = std::time::Duration::from_secs(2);

/// How long opening waits for a store locked by a closing handle.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether sled failed to open because another handle holds its file lock
/// (sled says so only in its message).
fn is_locked(error: &sled::Error) -> bool {
    matches!(error, sled::Error::Io(e) if e.to_string().contains("could not acquire lock"))
}

/// One write the state owner hands to the store.
#[derive(Debug)]
pub enum Write {
    Review(Review),
    RemoveReview(PathBuf),
    Thread(Box<Thread>),
    RemoveThread(String),
    Session(Box<Session>),
    RemoveSession(String),
    RemoveSnapshot(String),
    Import(Box<Export>),
}

impl Write {
    /// How many records it writes.
    fn records(&self) -> usize {
        match self {
            Write::Import(export) => export.reviews.len() + export.threads.len() + export.sessions.len(),
            _ => 1,
        }
    }
}

/// The daemon's store: a handle shared by everyone who reads or writes it.
#[derive(Debug, Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// The `store` directory sled keeps its files in.
    path: PathBuf,
    /// The open database; `None` only while it is being reopened.
    open: RwLock<Option<Arc<Trees>>>,
    /// A write failed, so sled refuses every later one until reopened.
    broken: AtomicBool,
    /// Held while reopening, so two writers do not reopen at once.
    reopening: std::sync::Mutex<()>,
    /// Records written since the handle was opened: sled keeps each in
    /// memory until the next reopen.
    written_since_open: AtomicUsize,
    /// A release is waiting for the writes to stop (see [`Store::write`]).
    release_waiting: AtomicBool,
    /// How many times the handle was reopened.
    reopened: AtomicUsize,
}

#[derive(Debug)]
struct Trees {
    db: sled::Db,
    reviews: sled::Tree,
    /// Every kept revision of each review, keyed by [`revision_key`].
    review_revisions: sled::Tree,
    threads: sled::Tree,
    /// File texts threads were anchored against, keyed by their hash.
    snapshots: sled::Tree,
    sessions: sled::Tree,
}

/// What happened when a corrupt store was replaced.
#[derive(Debug, Clone)]
pub struct Recovery {
    pub moved_to: PathBuf,
    pub backup: Option<PathBuf>,
    pub cause: String,
}

/// Opens sled in `path`, waiting a moment for a lock a closing handle still
/// holds (sled's flusher thread lets go last).
fn open_trees(path: &Path) -> Result<Trees, StoreError> {
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    let db = loop {
        // sled 0.34 panics on some kinds of corruption instead of failing.
        // A 16 MiB page cache, not sled's default 1 GiB: the state owner
        // keeps every thread in memory, so the store is read only at start
        // and for snapshots, and a full cache held 100,000 threads twice.
        match std::panic::catch_unwind(|| sled::Config::new().path(path).cache_capacity(16 << 20).open()) {
            Ok(Ok(db)) => break db,
            Ok(Err(source)) if is_locked(&source) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Ok(Err(source)) if is_locked(&source) => return Err(StoreError::Locked(path.to_owned())),
            Ok(Err(source)) => {
                return Err(match DiskProblem::of_sled(&source) {
                    Some(problem) => StoreError::Disk { path: path.to_owned(), problem },
                    None => StoreError::Open { path: path.to_owned(), source },
                });
            }
            Err(_) => return Err(StoreError::Corrupt(path.to_owned())),
        }
    };
    let tree = |name: &str| db.open_tree(name).map_err(|e| StoreError::from_sled(path, e));
    let trees = Trees {
        reviews: tree("reviews")?,
        review_revisions: tree("review_revisions")?,
        threads: tree("threads")?,
        snapshots: tree("snapshots")?,
        sessions: tree("sessions")?,
        db,
    };
    // sled creates its files with the process's umask: close them to others.
    if let Err(e) = tighten(path) {
        tracing::warn!("cannot make the store's files private: {e}");
    }
    Ok(trees)
}

impl Store {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let path = dir.join("store");
        let trees = open_trees(&path)?;
        Ok(Store {
            shared: Arc::new(Shared {
                path,
                open: RwLock::new(Some(Arc::new(trees))),
                broken: AtomicBool::new(false),
                reopening: std::sync::Mutex::new(()),
                written_since_open: AtomicUsize::new(0),
                release_waiting: AtomicBool::new(false),
                reopened: AtomicUsize::new(0),
            }),
        })
    }

    /// The open trees, or the reason there are none (a reopen failed).
    fn trees(&self) -> Result<Arc<Trees>, StoreError> {
        let open = self.shared.open.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        open.clone().ok_or_else(|| StoreError::Io {
            context: format!("the store at {} is closed after a failed write", self.shared.path.display()),
            source: std::io::Error::other("it could not be opened again yet"),
        })
    }

    /// Notes a failed write: sled refuses every later one until reopened.
    fn failed(&self, error: sled::Error) -> StoreError {
        self.shared.broken.store(true, Ordering::SeqCst);
        let error = StoreError::from_sled(&self.shared.path, error);
        tracing::warn!("a write to the store failed: {error}");
        error
    }

    /// Has the next write reopen the store (after a write that panicked).
    pub fn mark_broken(&self) {
        self.shared.broken.store(true, Ordering::SeqCst);
    }

    /// Whether a write failed and the store has not been reopened since.
    pub fn is_broken(&self) -> bool {
        self.shared.broken.load(Ordering::SeqCst)
    }

    /// Reopens the store after a failed write. What sled held in memory and
    /// had not flushed is dropped: it was never acknowledged.
    fn reopen(&self) -> Result<(), StoreError> {
        let _one_at_a_time = self.shared.reopening.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !self.is_broken() {
            return Ok(());
        }
        // Let go of the old handle first: sled's file lock is released only
        // once every handle on it is gone.
        let old = self.shared.open.write().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        drop(old);
        let trees = open_trees(&self.shared.path)?;
        *self.shared.open.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(trees));
        self.shared.written_since_open.store(0, Ordering::SeqCst);
        self.shared.reopened.fetch_add(1, Ordering::SeqCst);
        self.shared.broken.store(false, Ordering::SeqCst);
        tracing::info!("the store at {} was reopened after a failed write", self.shared.path.display());
        Ok(())
    }

    /// Closes and opens the store again, to let go of what sled keeps in
    /// memory: once every record has been read (at start, by a backup, an
    /// export or an import), sled 0.34 holds about 110 MiB for 100,000
    /// threads whatever its cache size, and only a fresh handle lets go of it
    /// (it then holds about 30 MiB). Everything written so far is flushed
    /// first, so nothing is lost.
    ///
    /// It happens only when nobody is using the store at this moment: the
    /// slot is held for writing, so nobody can take the handle meanwhile, and
    /// a handle someone else still holds (a write or read in progress) would
    /// keep sled's file lock. Answers whether it was reopened; when not,
    /// [`Store::release_memory`] tries again a moment later. A reopen that fails leaves the store broken,
    /// so the next write tries again, as after a failed write.
    pub fn try_release_memory(&self) -> Result<bool, StoreError> {
        let _one_at_a_time = self.shared.reopening.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut open = self.shared.open.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(trees) = open.as_ref() else {
            return Ok(false);
        };
        if Arc::strong_count(trees) > 1 || self.is_broken() {
            return Ok(false);
        }
        trees.db.flush().map_err(|e| self.failed(e))?;
        drop(open.take());
        match open_trees(&self.shared.path) {
            Ok(trees) => {
                *open = Some(Arc::new(trees));
                self.shared.written_since_open.store(0, Ordering::SeqCst);
                self.shared.reopened.fetch_add(1, Ordering::SeqCst);
                crate::memory::return_freed_memory();
                Ok(true)
            }
            Err(e) => {
                self.mark_broken();
                Err(e)
            }
        }
    }

    /// [`Store::try_release_memory`], tried again while the store is in use
    /// for up to five seconds; if it stays in use, the memory is released
    /// after the next backup. A failure is logged: the next write reopens
    /// the store.
    pub async fn release_memory(&self) {
        for _ in 0..RELEASE_TRIES {
            let this = self.clone();
            match tokio::task::spawn_blocking(move || this.try_release_memory()).await {
                Ok(Ok(true)) => return tracing::debug!("the store was reopened to release memory"),
                Ok(Ok(false)) => tokio::time::sleep(RELEASE_RETRY).await,
                Ok(Err(e)) => return tracing::warn!("cannot reopen the store to release memory: {e}"),
                Err(e) => return tracing::warn!("cannot reopen the store to release memory: {e}"),
            }
        }
        tracing::debug!("the store stayed in use; its memory is released after the next backup");
    }

    /// How many times the handle was reopened since [`Store::open`].
    pub fn times_reopened(&self) -> usize {
        self.shared.reopened.load(Ordering::SeqCst)
    }

    /// Reopens the store if a write failed since it was opened.
    async fn repair(&self) -> Result<(), StoreError> {
        if !self.is_broken() {
            return Ok(());
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.reopen())
            .await
            .map_err(|e| StoreError::Io { context: "reopening the store".into(), source: std::io::Error::other(e) })?
    }

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

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Every stored review.
    pub fn reviews(&self) -> Result<Vec<Review>, StoreError> {
        let trees = self.trees()?;
        trees.reviews.iter().map(|entry| Ok(serde_json::from_slice::<ReviewRecord>(&entry?.1)?.into())).collect()
    }

    /// Writes a review as its folder's current one and as a kept revision;
    /// durable after the next [`Store::flush`]. Revisions newer than it are
    /// dropped (a failed write being undone puts the older one back), and so
    /// are those older than the last [`KEPT_REVISIONS`].
    pub fn put_review(&self, review: &Review) -> Result<(), StoreError> {
        let trees = self.trees()?;
        let key = review.base.as_os_str().as_encoded_bytes();
        let bytes = serde_json::to_vec(&ReviewRecord::from(review))?;
        trees.reviews.insert(key, bytes.clone()).map_err(|e| self.failed(e))?;
        let revisions = &trees.review_revisions;
        revisions.insert(revision_key(&review.base, review.revision), bytes).map_err(|e| self.failed(e))?;
        let oldest_kept = review.revision.saturating_sub(KEPT_REVISIONS - 1);
        let dropped = revisions
            .range(revision_key(&review.base, 0)..revision_key(&review.base, oldest_kept))
            .keys()
            .chain(
                revisions
                    .range(revision_key(&review.base, review.revision + 1)..=revision_key(&review.base, u64::MAX))
                    .keys(),
            )
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.failed(e))?;
        for key in dropped {
            revisions.remove(key).map_err(|e| self.failed(e))?;
        }
        Ok(())
    }

    /// The kept revisions of the review of `base`, oldest first. A review
    /// stored before revisions were kept has its current revision only.
    pub fn review_revisions(&self, base: &Path) -> Result<Vec<Review>, StoreError> {
        let trees = self.trees()?;
        let mut found: Vec<Review> = trees
            .review_revisions
            .range(revision_key(base, 0)..=revision_key(base, u64::MAX))
            .map(|entry| Ok(serde_json::from_slice::<ReviewRecord>(&entry?.1)?.into()))
            .collect::<Result<_, StoreError>>()?;
        if let Some(bytes) = trees.reviews.get(base.as_os_str().as_encoded_bytes())? {
            let current: Review = serde_json::from_slice::<ReviewRecord>(&bytes)?.into();
            if found.last().is_none_or(|last| last.revision < current.revision) {
                found.push(current);
            }
        }
        Ok(found)
    }

    /// One kept revision of the review of `base`.
    pub fn review_revision(&self, base: &Path, revision: u64) -> Result<Option<Review>, StoreError> {
        Ok(self.review_revisions(base)?.into_iter().find(|r| r.revision == revision))
    }

    /// Every stored thread as stored, context included: what tests check
    /// the store against (the daemon reads [`Store::threads_without_context`]).
    #[cfg(test)]
    pub fn threads(&self) -> Result<Vec<Thread>, StoreError> {
        self.read_threads(Thread::from)
    }

    /// Every stored thread as the state owner holds them: without their
    /// anchors' context, which stays in the store (see [`crate::anchor::Anchor`]).
    pub fn threads_without_context(&self) -> Result<Vec<Thread>, StoreError> {
        self.read_threads(ThreadRecord::into_thread_without_context)
    }

    /// One stored thread as the state owner holds it (see
    /// [`Store::threads_without_context`]).
    pub fn thread_without_context(&self, id: &str) -> Result<Option<Thread>, StoreError> {
        let Some(stored) = self.trees()?.threads.get(id.as_bytes())? else {
            return Ok(None);
        };
        Ok(Some(serde_json::from_slice::<ThreadRecord>(&stored)?.into_thread_without_context()))
    }

    /// Writes `thread` (as memory holds it) to `into` as the store would,
    /// for [`Store::decode_thread`] to read back: a copy of a thread outside
    /// the store.
    pub fn encode_thread(thread: &Thread, into: &mut Vec<u8>) -> Result<(), StoreError> {
        Ok(serde_json::to_writer(into, &ThreadRecord::from(thread))?)
    }

    /// A thread [`Store::encode_thread`] wrote, as memory holds it.
    pub fn decode_thread(bytes: &[u8]) -> Result<Thread, StoreError> {
        Ok(serde_json::from_slice::<ThreadRecord>(bytes)?.into_thread_without_context())
    }

    fn read_threads(&self, convert: fn(ThreadRecord) -> Thread) -> Result<Vec<Thread>, StoreError> {
        let mut threads = Vec::new();
        self.each_thread(|record| threads.push(convert(record)))?;
        Ok(threads)
    }

    /// Reads the stored threads one by one.
    fn each_thread(&self, mut visit: impl FnMut(ThreadRecord)) -> Result<(), StoreError> {
        for entry in self.trees()?.threads.iter() {
            visit(serde_json::from_slice(&entry?.1)?);
        }
        Ok(())
    }

    /// Writes a thread; durable after the next [`Store::flush`].
    /// A thread whose anchor's context is left in the store (as memory holds
    /// threads) keeps the stored context.
    pub fn put_thread(&self, thread: &Thread) -> Result<(), StoreError> {
        let trees = self.trees()?;
        let mut record = ThreadRecord::from(thread);
        if thread.anchor.contexts_in_store()
            && let Some(stored) = trees.threads.get(thread.id.as_bytes())?
        {
            record.keep_context_of(serde_json::from_slice(&stored)?);
        }
        let bytes = serde_json::to_vec(&record)?;
        trees.threads.insert(thread.id.as_bytes(), bytes).map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// The context before and after a thread's quote, as stored; `None`
    /// when there is no such thread.
    pub fn thread_contexts(&self, id: &str) -> Result<Option<crate::anchor::Context>, StoreError> {
        let Some(stored) = self.trees()?.threads.get(id.as_bytes())? else {
            return Ok(None);
        };
        Ok(Some(serde_json::from_slice::<ThreadRecord>(&stored)?.into_context()))
    }

    /// Every stored review session.
    pub fn sessions(&self) -> Result<Vec<Session>, StoreError> {
        let trees = self.trees()?;
        trees
            .sessions
            .iter()
            .map(|entry| {
                let SessionRecord::V1(session) = serde_json::from_slice(&entry?.1)?;
                Ok(session)
            })
            .collect()
    }

    /// Writes a session; durable after the next [`Store::flush`].
    pub fn put_session(&self, session: &Session) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(&SessionRecord::V1(session.clone()))?;
        self.trees()?.sessions.insert(session.id.as_bytes(), bytes).map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// Keeps a file text under its hash, for diffing old → new later.
    ///
    /// Snapshots are a cache (without one, re-anchoring falls back to a
    /// search), so a disk that refuses them is logged, not an error: reading
    /// threads goes on working on a full disk.
    pub fn put_snapshot(&self, hash: &str, text: &str) -> Result<(), StoreError> {
        let put = || -> Result<(), StoreError> {
            let trees = self.trees()?;
            if !trees.snapshots.contains_key(hash)? {
                trees.snapshots.insert(hash, text.as_bytes()).map_err(|e| self.failed(e))?;
            }
            Ok(())
        };
        if let Err(e) = put() {
            tracing::warn!("cannot keep a snapshot of a file's text: {e}");
        }
        Ok(())
    }

    /// A file text kept by [`Store::put_snapshot`]; `None` when it is not
    /// there or cannot be read (it is a cache).
    pub fn snapshot(&self, hash: &str) -> Result<Option<String>, StoreError> {
        match self.trees().and_then(|trees| Ok(trees.snapshots.get(hash)?)) {
            Ok(bytes) => Ok(bytes.and_then(|bytes| String::from_utf8(bytes.to_vec()).ok())),
            Err(e) => {
                tracing::warn!("cannot read a snapshot of a file's text: {e}");
                Ok(None)
            }
        }
    }

    /// Applies one write in memory; durable after the next flush.
    fn apply(&self, write: Write) -> Result<(), StoreError> {
        let trees = self.trees()?;
        let removed = match write {
            Write::Review(review) => return self.put_review(&review),
            Write::Thread(thread) => return self.put_thread(&thread),
            Write::Session(session) => return self.put_session(&session),
            Write::Import(export) => return self.import(*export).map(|_| ()),
            Write::RemoveReview(base) => {
                let kept = trees
                    .review_revisions
                    .range(revision_key(&base, 0)..=revision_key(&base, u64::MAX))
                    .keys()
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| self.failed(e))?;
                for key in kept {
                    trees.review_revisions.remove(key).map_err(|e| self.failed(e))?;
                }
                trees.reviews.remove(base.as_os_str().as_encoded_bytes())
            }
            Write::RemoveThread(id) => trees.threads.remove(id.as_bytes()),
            Write::RemoveSession(id) => trees.sessions.remove(id.as_bytes()),
            Write::RemoveSnapshot(hash) => trees.snapshots.remove(hash.as_bytes()),
        };
        removed.map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// Applies `writes` in order and, when `durable`, flushes them: the
    /// state owner's one way to write. A store broken by an earlier failed
    /// write is reopened first.
    ///
    /// sled keeps what it writes in memory until it is reopened: about
    /// 12 MiB for 25,000 threads (an agent reading a large workspace's
    /// feedback marks each thread seen). Once [`RELEASE_AFTER_WRITES`]
    /// records have been written, the store is reopened when the writes
    /// stop for [`RELEASE_WHEN_QUIET`].
    pub async fn write(&self, writes: Vec<Write>, durable: bool) -> Result<(), StoreError> {
        self.repair().await?;
        let count = writes.iter().map(Write::records).sum();
        for write in writes {
            self.apply(write)?;
        }
        if durable {
            self.flush().await?;
        }
        let written = self.shared.written_since_open.fetch_add(count, Ordering::SeqCst) + count;
        if written >= RELEASE_AFTER_WRITES && !self.shared.release_waiting.swap(true, Ordering::SeqCst) {
            let store = self.clone();
            tokio::spawn(async move {
                store.release_when_quiet().await;
                store.shared.release_waiting.store(false, Ordering::SeqCst);
            });
        }
        Ok(())
    }

    /// Waits until nothing was written for [`RELEASE_WHEN_QUIET`], then
    /// reopens the store to let go of what sled keeps of the writes.
    async fn release_when_quiet(&self) {
        let mut seen = self.shared.written_since_open.load(Ordering::SeqCst);
        loop {
            tokio::time::sleep(RELEASE_WHEN_QUIET).await;
            let now = self.shared.written_since_open.load(Ordering::SeqCst);
            if now < RELEASE_AFTER_WRITES {
                // Reopened meanwhile (a backup, an import).
                return;
            }
            if now == seen {
                break;
            }
            seen = now;
        }
        self.release_memory().await;
    }

    /// Makes every write so far durable. A store broken by an earlier
    /// failed write is reopened first (what it had not flushed is lost; it
    /// was never acknowledged).
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.repair().await?;
        let trees = self.trees()?;
        trees.db.flush_async().await.map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// Everything a user would want back: reviews and threads (snapshots are
    /// a cache and are left out).
    pub fn export(&self) -> Result<Export, StoreError> {
        let trees = self.trees()?;
        let reviews =
            trees.reviews.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        let threads =
            trees.threads.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
        let mut export = Export::new(reviews, threads);
        export.sessions =
            trees.sessions.iter().map(|e| Ok(serde_json::from_slice(&e?.1)?)).collect::<Result<_, StoreError>>()?;
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
        write(b"]}")?;
        std::io::Write::flush(out).map_err(failed)?;
        out.get_ref().sync_all().map_err(failed)?;
        Ok(ExportCounts { reviews, threads, sessions })
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
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&partial).map_err(writing)?;
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

    /// Writes an automatic backup beside the store (atomically, readable by
    /// the user alone) and keeps only the newest few.
    pub fn write_backup(&self, data_dir: &Path) -> Result<PathBuf, StoreError> {
        let dir = data_dir.join("backups");
        let io = |context: String| move |source| StoreError::from_io(data_dir, context, source);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(io(format!("creating {}", dir.display())))?;
        let name = format!("parley-backup-{}.json", chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ"));
        let path = dir.join(name);
        let partial = path.with_extension("json.partial");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
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

/// A file or directory other users could reach, and its mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loosened {
    pub path: PathBuf,
    pub mode: u32,
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
fn tighten(dir: &Path) -> Result<Vec<Loosened>, StoreError> {
    let io = |context: String| move |source| StoreError::from_io(dir, context, source);
    let loose = open_to_others(dir).map_err(io(format!("reading {}", dir.display())))?;
    for item in &loose {
        std::fs::set_permissions(&item.path, std::fs::Permissions::from_mode(item.mode & !0o077))
            .map_err(io(format!("making {} private", item.path.display())))?;
    }
    Ok(loose)
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

/// A revision's key: the folder, a NUL (no path holds one, so one folder's
/// keys never run into another's that begins the same) and the revision in
/// big-endian, so keys sort by revision.
fn revision_key(base: &Path, revision: u64) -> Vec<u8> {
    let mut key = base.as_os_str().as_encoded_bytes().to_vec();
    key.push(0);
    key.extend_from_slice(&revision.to_be_bytes());
    key
}

fn newest_backup(data_dir: &Path) -> Option<PathBuf> {
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
        for (records, tree) in [(&self.threads, &trees.threads), (&self.sessions, &trees.sessions)] {
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
    use crate::feedback::{Comment, Span, ThreadState};

    fn review() -> Review {
        Review {
            base: PathBuf::from("/ws"),
            content: "# R\n[`a.rs:1`][]".into(),
            revision: 3,
            updated_at: "2026-11-21T00:00:00Z".into(),
            source: crate::reviews::Source::Agent { client: Some("claude-code".into()) },
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
            workspace: Path::new("/ws").into(),
            path: "src/a.rs".into(),
            anchor: crate::anchor::capture("one\ntwo\nthree\n", 4..7),
            whole_lines: true,
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
            finding: None,
            standing: crate::feedback::Standing::default(),
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
    async fn many_writes_reopen_the_store_once_they_stop_and_lose_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let mut threads = Vec::new();
        for batch in 0..RELEASE_AFTER_WRITES / 500 {
            let batch: Vec<Thread> = (0..500)
                .map(|n| {
                    let mut t = thread();
                    t.path = format!("src/f{batch}_{n}.rs");
                    t
                })
                .collect();
            store
                .write(batch.iter().map(|t| Write::Thread(Box::new(t.clone()))).collect(), false)
                .await
                .expect("write");
            threads.extend(batch);
        }
        assert_eq!(store.times_reopened(), 0, "not while the writes go on");
        let waited = std::time::Instant::now();
        while store.times_reopened() == 0 {
            assert!(waited.elapsed() < RELEASE_WHEN_QUIET * 5, "the store was not reopened after the writes stopped");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(waited.elapsed() >= RELEASE_WHEN_QUIET / 2, "reopened before the writes were quiet");
        let mut read = store.threads().expect("read");
        read.sort_by(|a, b| a.id.cmp(&b.id));
        threads.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(read, threads, "every write, none of them flushed, is there after the reopen");

        store.write(vec![Write::Thread(Box::new(thread()))], false).await.expect("write");
        tokio::time::sleep(RELEASE_WHEN_QUIET * 2).await;
        assert_eq!(store.times_reopened(), 1, "a few writes more do not reopen it");
    }

    #[tokio::test]
    async fn releasing_memory_reopens_the_store_only_when_idle_and_keeps_every_write() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (review, first, second) = (review(), thread(), thread());
        let store = Store::open(dir.path()).expect("open");
        // Not flushed: a reopen must not lose it.
        store
            .write(vec![Write::Review(review.clone()), Write::Thread(Box::new(first.clone()))], false)
            .await
            .expect("write");

        let in_use = store.trees().expect("trees");
        assert!(!store.try_release_memory().expect("try"), "a handle in use keeps the store open");
        drop(in_use);
        assert!(store.try_release_memory().expect("try"), "an idle store is reopened");
        assert!(!store.is_broken());
        assert_eq!(store.reviews().expect("read"), vec![review.clone()]);
        assert_eq!(store.threads().expect("read"), vec![first.clone()]);

        store
            .write(vec![Write::Thread(Box::new(second.clone()))], true)
            .await
            .expect("the reopened store takes writes");
        store.release_memory().await;
        drop(store);
        let store = Store::open(dir.path()).expect("open again");
        assert_eq!(store.reviews().expect("read"), vec![review]);
        let mut threads = store.threads().expect("read");
        threads.sort_by(|a, b| a.id.cmp(&b.id));
        let mut want = vec![first, second];
        want.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(threads, want);
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

    #[test]
    fn a_review_keeps_its_last_revisions_and_an_undone_one_goes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let mut other = review();
        other.base = PathBuf::from("/ws2");
        store.put_review(&other).expect("put");
        for revision in 1..=KEPT_REVISIONS + 5 {
            let mut r = review();
            r.revision = revision;
            r.content = format!("# Revision {revision}");
            store.put_review(&r).expect("put");
        }
        let kept = store.review_revisions(Path::new("/ws")).expect("read");
        let numbers: Vec<u64> = kept.iter().map(|r| r.revision).collect();
        assert_eq!(numbers, (6..=KEPT_REVISIONS + 5).collect::<Vec<_>>());
        assert_eq!(kept[0].content, "# Revision 6");
        assert_eq!(kept[0].source, review().source);
        assert!(store.review_revision(Path::new("/ws"), 5).expect("read").is_none());
        // A failed write undone by putting the previous revision back.
        let mut previous = review();
        previous.revision = KEPT_REVISIONS + 4;
        store.put_review(&previous).expect("put");
        assert!(store.review_revision(Path::new("/ws"), KEPT_REVISIONS + 5).expect("read").is_none());
        // The other folder's review, a prefix of neither, is untouched.
        assert_eq!(store.review_revisions(Path::new("/ws2")).expect("read").len(), 1);
        store.apply(Write::RemoveReview(PathBuf::from("/ws"))).expect("remove");
        assert!(store.review_revisions(Path::new("/ws")).expect("read").is_empty());
    }

    #[tokio::test]
    async fn a_broken_store_is_reopened_by_the_next_write() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let (first, second) = (thread(), thread());
        store.write(vec![Write::Thread(Box::new(first.clone()))], true).await.expect("write");
        // As after a failed write: sled would refuse everything from now on.
        store.shared.broken.store(true, Ordering::SeqCst);
        store.write(vec![Write::Thread(Box::new(second.clone()))], true).await.expect("the store reopens");
        assert!(!store.is_broken());
        drop(store);
        let mut stored = Store::open(dir.path()).expect("reopen").threads().expect("read");
        stored.sort_by(|a, b| a.id.cmp(&b.id));
        let mut want = vec![first, second];
        want.sort_by(|a, b| a.id.cmp(&b.id));
        assert_eq!(stored, want);
    }

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
