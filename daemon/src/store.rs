//! Durable state in sled: the only module that imports it.
//!
//! Records on disk are their own versioned types (`store/records/versioned.rs`),
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
//!
//! This file is the handle and its one way to write; `records` holds what is
//! stored, `backups` exports, imports and backups, `recovery` rebuilding a
//! damaged store, `reopening` the handle opened again (after a failed write,
//! to release memory), `permissions` the data directory's, and `errors` the
//! disk's refusals in plain words.

mod backups;
mod errors;
mod permissions;
mod records;
mod recovery;
mod reopening;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

pub use backups::ExportCounts;
pub use errors::{DiskProblem, StoreError};
pub use permissions::{Loosened, check_writable, open_to_others, prepare_data_dir};
pub use records::{Export, Write};
pub use recovery::Recovery;
pub use reopening::{RELEASE_AFTER_WRITES, RELEASE_WHEN_QUIET};

/// How long opening waits for a store locked by a closing handle.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether sled failed to open because another handle holds its file lock
/// (sled says so only in its message).
fn is_locked(error: &sled::Error) -> bool {
    matches!(error, sled::Error::Io(e) if e.to_string().contains("could not acquire lock"))
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
    /// Every kept revision of each review, keyed by [`records::revision_key`].
    review_revisions: sled::Tree,
    threads: sled::Tree,
    /// File texts threads were anchored against, keyed by their hash.
    snapshots: sled::Tree,
    sessions: sled::Tree,
    /// The short names agents were given, by the key that finds the same
    /// agent again when its shim reconnects (`state/agents.rs`).
    agent_names: sled::Tree,
    /// Walkthroughs by id, and every kept revision of each, keyed by
    /// [`records::walkthrough_revision_key`].
    walkthroughs: sled::Tree,
    walkthrough_revisions: sled::Tree,
    /// Workspaces linked to their GitHub pull requests, by workspace.
    pull_requests: sled::Tree,
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
        agent_names: tree("agent_names")?,
        walkthroughs: tree("walkthroughs")?,
        walkthrough_revisions: tree("walkthrough_revisions")?,
        pull_requests: tree("pull_requests")?,
        db,
    };
    // sled creates its files with the process's umask: close them to others.
    if let Err(e) = permissions::tighten(path) {
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

    pub fn path(&self) -> &Path {
        &self.shared.path
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

    /// Makes every write so far durable. A store broken by an earlier
    /// failed write is reopened first (what it had not flushed is lost; it
    /// was never acknowledged).
    pub async fn flush(&self) -> Result<(), StoreError> {
        self.repair().await?;
        let trees = self.trees()?;
        trees.db.flush_async().await.map_err(|e| self.failed(e))?;
        Ok(())
    }
}
