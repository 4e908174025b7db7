//! Which files with threads may have changed since they were last read, as
//! the file watcher knows them: the watcher marks files as the OS reports
//! events, and reads take the list of files they must look at. A file whose
//! folder is watched and which had no event since it was last checked needs
//! no `stat` before a read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::state::Suspects;

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
    /// Whether there is a watcher at all; without one nothing is vouched for.
    pub(crate) fn set_watching(&self, watching: bool) {
        self.lock().watching = watching;
    }

    fn lock(&self) -> MutexGuard<'_, Vouched> {
        // The sections below cannot panic half-way; a poisoned lock still
        // holds consistent sets.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn followed(&self, file: PathBuf) {
        let mut v = self.lock();
        if v.followed.insert(file.clone()) {
            v.suspects.insert(file);
        }
    }

    pub(crate) fn changed(&self, paths: &[PathBuf], gone: bool) {
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

    pub(crate) fn overflowed(&self) {
        self.lock().everything = true;
    }

    pub(crate) fn watched(&self, dir: &Path) {
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
        freshness.set_watching(true);
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
