//! Watching the files that have threads, so that an agent's edit on disk
//! moves its threads (and editors see them move) without anyone asking.
//! The only module that imports notify.
//!
//! Parent directories are watched, not files: editors save by writing a new
//! file and renaming it over the old one, which ends a watch on the file
//! itself. Events are debounced; an overflow rescans every watched file.
//!
//! The watcher also tells reads which files they need to look at
//! ([`Freshness`]): a file whose folder is watched and which has had no event
//! since it was last checked is as it was, so a summary of 1,000 files does
//! not `stat` them all. Files whose folder could not be watched, and every
//! file after an overflow or when there is no watcher, are checked on every
//! read as before.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::{mpsc, oneshot};

use crate::refresh;
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

/// Which files with threads may differ from what was last read of them.
/// Shared by the OS watcher's thread (which marks files as events arrive,
/// before the debounce, so a read right after an edit sees it), the watch
/// task (which records the folders watched) and every read.
#[derive(Debug, Clone, Default)]
pub struct Freshness {
    inner: Arc<Mutex<Vouched>>,
}

#[derive(Debug, Default)]
struct Vouched {
    /// False when there is no watcher: nothing is vouched for.
    watching: bool,
    /// Every file followed.
    followed: HashSet<PathBuf>,
    /// Folders whose watch is in place.
    watched_dirs: HashSet<PathBuf>,
    /// Followed files to check at the next read: never checked since they
    /// were followed, changed since, or in a folder that is not watched.
    suspects: HashSet<PathBuf>,
    /// Events were lost: every file is to be checked.
    everything: bool,
}

impl Freshness {
    fn lock(&self) -> MutexGuard<'_, Vouched> {
        // The sections below cannot panic half-way; a poisoned lock still
        // holds consistent sets.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn followed(&self, file: PathBuf) {
        let mut v = self.lock();
        if v.followed.insert(file.clone()) {
            v.suspects.insert(file);
        }
    }

    fn changed(&self, paths: &[PathBuf], gone: bool) {
        let mut v = self.lock();
        let Vouched { followed, watched_dirs, suspects, .. } = &mut *v;
        for path in paths {
            if followed.contains(path) {
                suspects.insert(path.clone());
            }
            // A watched folder that is deleted or moved ends its watch: its
            // files are checked on every read from now on.
            if gone && watched_dirs.remove(path) {
                suspects.extend(followed.iter().filter(|f| f.parent() == Some(path.as_path())).cloned());
            }
        }
    }

    fn overflowed(&self) {
        self.lock().everything = true;
    }

    fn watched(&self, dir: &Path) {
        self.lock().watched_dirs.insert(dir.to_owned());
    }

    /// The files under `scope` a read must check, taken off the list: those
    /// in watched folders are vouched for again from now until their next
    /// event. A read that fails to check them hands them back with
    /// [`Freshness::unchecked`].
    pub fn take(&self, scope: &Path) -> Suspects {
        let mut v = self.lock();
        if !v.watching || v.everything {
            v.everything = !v.watching;
            return Suspects::All;
        }
        let Vouched { suspects, watched_dirs, .. } = &mut *v;
        let mut taken = HashSet::new();
        suspects.retain(|file| {
            if !file.starts_with(scope) {
                return true;
            }
            taken.insert(file.clone());
            // Checked now; vouched for only while its folder is watched.
            !file.parent().is_some_and(|dir| watched_dirs.contains(dir))
        });
        Suspects::Only(taken)
    }

    /// Takes `file` off the list: it is about to be checked.
    pub fn take_file(&self, file: &Path) {
        let mut v = self.lock();
        if file.parent().is_some_and(|dir| v.watched_dirs.contains(dir)) {
            v.suspects.remove(file);
        }
    }

    /// A read failed before it checked what it took: check everything next.
    pub fn unchecked(&self) {
        self.lock().everything = true;
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
    freshness.lock().watching = watcher.is_some();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn only(suspects: Suspects) -> Vec<PathBuf> {
        match suspects {
            Suspects::All => panic!("expected a list, got all"),
            Suspects::Only(files) => {
                let mut files: Vec<PathBuf> = files.into_iter().collect();
                files.sort();
                files
            }
        }
    }

    #[test]
    fn reads_check_only_what_the_watcher_cannot_vouch_for() {
        let freshness = Freshness::default();
        freshness.lock().watching = true;
        let (a, b) = (PathBuf::from("/ws/src/a.rs"), PathBuf::from("/ws/lib/b.rs"));
        freshness.followed(a.clone());
        freshness.followed(b.clone());
        freshness.watched(Path::new("/ws/src"));
        // Never checked: both, once; then only the one whose folder is not
        // watched, on every read.
        assert_eq!(only(freshness.take(Path::new("/ws"))), [b.clone(), a.clone()]);
        assert_eq!(only(freshness.take(Path::new("/ws"))), vec![b.clone()]);
        // An event makes a file suspect again, for a read of its scope only.
        freshness.changed(std::slice::from_ref(&a), false);
        assert_eq!(only(freshness.take(Path::new("/ws/lib"))), vec![b.clone()]);
        assert_eq!(only(freshness.take(Path::new("/ws"))), [b.clone(), a.clone()]);
        // Events on files nobody follows change nothing.
        freshness.changed(&[PathBuf::from("/ws/src/target.o")], false);
        assert_eq!(only(freshness.take(Path::new("/ws/src"))), Vec::<PathBuf>::new());
        // Lost events, or a failed read: everything once.
        freshness.overflowed();
        assert!(matches!(freshness.take(Path::new("/ws")), Suspects::All));
        freshness.unchecked();
        assert!(matches!(freshness.take(Path::new("/ws")), Suspects::All));
        assert_eq!(only(freshness.take(Path::new("/ws"))), vec![b.clone()]);
        // The watched folder goes away: its files are checked on every read.
        freshness.changed(&[PathBuf::from("/ws/src")], true);
        assert_eq!(only(freshness.take(Path::new("/ws/src"))), vec![a.clone()]);
        assert_eq!(only(freshness.take(Path::new("/ws/src"))), [a]);
    }

    #[test]
    fn without_a_watcher_every_read_checks_everything() {
        let freshness = Freshness::default();
        freshness.followed(PathBuf::from("/ws/a.rs"));
        freshness.watched(Path::new("/ws"));
        assert!(matches!(freshness.take(Path::new("/ws")), Suspects::All));
        assert!(matches!(freshness.take(Path::new("/ws")), Suspects::All));
    }
}
