//! Watching the files that have threads, so that an agent's edit on disk
//! moves its threads (and editors see them move) without anyone asking.
//! The only module that imports notify.
//!
//! Parent directories are watched, not files: editors save by writing a new
//! file and renaming it over the old one, which ends a watch on the file
//! itself. Events are debounced; an overflow rescans every watched file.
//!
//! The watcher also tells reads which files they need to look at, by
//! marking them in `refresh`'s [`Freshness`]: a file whose folder is watched and which has had no event
//! since it was last checked is as it was, so a summary of 1,000 files does
//! not `stat` them all. Files whose folder could not be watched, and every
//! file after an overflow or when there is no watcher, are checked on every
//! read as before.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::{mpsc, oneshot};

use crate::refresh::{self, Freshness};
use crate::shutdown::Shutdown;
use crate::state::{StateHandle, Suspects};
use crate::store::Store;

/// Quiet time after the last event before files are re-checked.
const DEBOUNCE: Duration = Duration::from_millis(75);
/// Events buffered from the OS before the watcher falls back to a rescan.
const EVENT_QUEUE: usize = 4096;

/// Asks the watcher to follow more files, and tells reads which files may
/// have changed.
#[derive(Debug, Clone)]
pub struct WatchHandle {
    /// Sent by whoever creates threads; received by the watch task, which
    /// answers once the watch is in place; closed at shutdown.
    files: mpsc::UnboundedSender<(PathBuf, Option<oneshot::Sender<()>>)>,
    pub freshness: Freshness,
}

impl WatchHandle {
    /// Watches `file` from shortly on, without waiting.
    pub fn follow(&self, file: PathBuf) {
        self.freshness.followed(file.clone());
        let _ = self.files.send((file, None));
    }

    /// Watches `file` (through its directory); returns once the watch is in
    /// place, so a change made right after is seen.
    pub async fn add(&self, file: PathBuf) {
        self.freshness.followed(file.clone());
        let (done, placed) = oneshot::channel();
        if self.files.send((file, Some(done))).is_ok() {
            let _ = placed.await;
        }
    }
}

/// What the OS watcher reports to the watch task.
enum Seen {
    Changed(Vec<PathBuf>),
    /// Events were lost: every watched file must be re-checked.
    Overflow,
}

/// Starts watching every file that already has threads.
pub async fn spawn(state: StateHandle, store: Store, shutdown: Shutdown) -> WatchHandle {
    let (files_tx, files_rx) = mpsc::unbounded_channel();
    let (seen_tx, seen_rx) = mpsc::channel(EVENT_QUEUE);
    let overflow_tx = seen_tx.clone();
    let freshness = Freshness::default();
    let marks = freshness.clone();
    let watcher = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
        let gone = result.as_ref().is_ok_and(|event| {
            matches!(event.kind, EventKind::Remove(_) | EventKind::Modify(notify::event::ModifyKind::Name(_)))
        });
        let seen = match result {
            Ok(event) if event.need_rescan() => Seen::Overflow,
            Ok(event) if matches!(event.kind, EventKind::Access(_)) => return,
            Ok(event) => Seen::Changed(event.paths),
            Err(e) => {
                tracing::warn!("file watching: {e}; re-checking every watched file");
                Seen::Overflow
            }
        };
        match &seen {
            Seen::Changed(paths) => marks.changed(paths, gone),
            Seen::Overflow => marks.overflowed(),
        }
        if seen_tx.try_send(seen).is_err() {
            let _ = overflow_tx.try_send(Seen::Overflow);
        }
    });
    let watcher = match watcher {
        Ok(watcher) => Some(watcher),
        Err(e) => {
            tracing::warn!(
                "cannot watch files ({e}); threads are re-anchored when read, but editors will not see agents' edits live"
            );
            None
        }
    };
    freshness.set_watching(watcher.is_some());
    let existing = state.files_to_check(PathBuf::from("/"), None, Suspects::All).await.unwrap_or_default();
    let handle = WatchHandle { files: files_tx, freshness };
    for file in existing {
        handle.follow(file.file);
    }
    tokio::spawn(run(watcher, files_rx, seen_rx, state, store, handle.freshness.clone(), shutdown));
    handle
}

async fn run(
    mut watcher: Option<notify::RecommendedWatcher>,
    mut files: mpsc::UnboundedReceiver<(PathBuf, Option<oneshot::Sender<()>>)>,
    mut seen: mpsc::Receiver<Seen>,
    state: StateHandle,
    store: Store,
    freshness: Freshness,
    shutdown: Shutdown,
) {
    let mut watched_files: HashSet<PathBuf> = HashSet::new();
    let mut watched_dirs: HashMap<PathBuf, bool> = HashMap::new();
    let mut pending: HashSet<PathBuf> = HashSet::new();
    let mut rescan = false;
    loop {
        let quiet = tokio::time::sleep(DEBOUNCE);
        tokio::select! {
            _ = shutdown.stop.cancelled() => return,
            Some((file, done)) = files.recv() => {
                if let (Some(watcher), Some(dir)) = (watcher.as_mut(), file.parent())
                    && watch_dir(watcher, dir, &mut watched_dirs)
                {
                    freshness.watched(dir);
                }
                watched_files.insert(file);
                if let Some(done) = done {
                    let _ = done.send(());
                }
            }
            Some(event) = seen.recv() => match event {
                Seen::Overflow => rescan = true,
                Seen::Changed(paths) => pending.extend(paths.into_iter().filter(|p| watched_files.contains(p))),
            },
            _ = quiet, if rescan || !pending.is_empty() => {
                let files: Vec<PathBuf> = if rescan { watched_files.iter().cloned().collect() } else { pending.drain().collect() };
                rescan = false;
                pending.clear();
                for file in files {
                    let scope = file.parent().unwrap_or(Path::new("/")).to_owned();
                    if let Err(e) = refresh::refresh(&state, &store, &freshness, &scope, Some(&file)).await {
                        tracing::warn!("re-anchoring {} after a change: {e}", file.display());
                    }
                }
            }
        }
    }
}

/// Watches `dir` unless it was tried before; whether it is watched.
fn watch_dir(watcher: &mut notify::RecommendedWatcher, dir: &Path, watched: &mut HashMap<PathBuf, bool>) -> bool {
    if let Some(&ok) = watched.get(dir) {
        return ok;
    }
    let ok = match watcher.watch(dir, RecursiveMode::NonRecursive) {
        Ok(()) => true,
        Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
            tracing::warn!(
                "the OS limit on watched folders is reached (Linux: sysctl fs.inotify.max_user_watches); \
                 threads in {} are re-anchored when read but do not move live",
                dir.display()
            );
            false
        }
        Err(e) => {
            tracing::warn!("cannot watch {}: {e}; its threads are re-anchored when read", dir.display());
            false
        }
    };
    watched.insert(dir.to_owned(), ok);
    ok
}
