//! The feedback-thread half of the state owner: the threads in memory, their
//! index by file, what was last read of each file, and the edits agents and
//! humans make.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Payload, State};
use crate::clock::now_rfc3339;
use crate::feedback::{self, Comment, FeedbackError as ThreadError, Summary, Thread};
use crate::views;

/// What was last read of a file: enough to tell from `stat` alone that it
/// has not changed since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    pub len: u64,
    pub modified: Option<SystemTime>,
    pub inode: u64,
    /// Hash of the whole content, or a marker (`missing`, `unreadable`).
    pub hash: String,
}

/// A file whose threads may need re-anchoring.
#[derive(Debug, Clone)]
pub struct FileToCheck {
    pub file: PathBuf,
    pub stamp: Option<FileStamp>,
}

/// Which files a read must look at, as the file watcher knows them.
#[derive(Debug, Clone)]
pub enum Suspects {
    /// Any file may have changed (no watcher, or events were lost).
    All,
    /// Only these may have changed since they were last read; every other
    /// file that was read before is watched and had no event since.
    Only(HashSet<PathBuf>),
}

/// A change to one thread.
#[derive(Debug, Clone)]
pub enum ThreadEdit {
    Reply(Comment),
    Resolve,
    Reopen,
}

/// The entries of `map` under `scope` (the folder itself included), in
/// order. Paths order component by component, so everything under `/a/b`
/// sorts before `/a/b` with a NUL appended to its last component: the range
/// between them is exactly the folder's, found without comparing each path's
/// components to the scope's.
fn under<'a, V>(map: &'a BTreeMap<PathBuf, V>, scope: &'a Path) -> impl Iterator<Item = (&'a PathBuf, &'a V)> + 'a {
    let end = scope.file_name().map(|name| {
        let mut past = name.to_os_string();
        past.push("\0");
        scope.with_file_name(past)
    });
    let range = match &end {
        Some(end) => map.range::<Path, _>((Bound::Included(scope), Bound::Excluded(end.as_path()))),
        None => map.range::<Path, _>((Bound::Included(scope), Bound::Unbounded)),
    };
    // Without a last component (`/`, or a path ending in `..`) the range has
    // no end of its own: stop at the first path outside.
    range.take_while(move |(file, _)| end.is_some() || file.starts_with(scope))
}

impl State {
    pub(super) fn index_thread(&mut self, thread: Thread) {
        self.by_file.entry(views::file_of(&thread)).or_default().insert(thread.id.clone());
        self.threads.insert(thread.id.clone(), thread);
    }

    /// Recomputes one file's counts after its threads changed.
    pub(super) fn recount(&mut self, file: &Path) {
        let counts = feedback::FileCounts::of(self.threads_of_file(file));
        self.counts.insert(file.to_owned(), counts);
    }

    pub(super) fn threads_of_file<'a>(&'a self, file: &Path) -> impl Iterator<Item = &'a Thread> + 'a {
        self.by_file.get(file).into_iter().flatten().filter_map(|id| self.threads.get(id))
    }

    /// Files with threads under `scope`, in order.
    fn files_in<'a>(&'a self, scope: &'a Path) -> impl Iterator<Item = (&'a PathBuf, &'a BTreeSet<String>)> + 'a {
        under(&self.by_file, scope)
    }

    /// Files under `scope` (or just `file`) with open threads that may have
    /// changed, and what was last seen of each: a file never read (or whose
    /// thread was reopened, which forgets what was read) always may; one
    /// read before only if `suspects` names it. A single `file` is always
    /// returned, so a read of one file looks at it whatever the watcher says.
    pub(super) fn files_to_check(&self, scope: &Path, file: Option<&Path>, suspects: &Suspects) -> Vec<FileToCheck> {
        let open = |f: &Path| self.counts.get(f).is_some_and(|c| c.threads > 0);
        let check = |f: &PathBuf| FileToCheck { file: f.clone(), stamp: self.stamps.get(f).cloned() };
        match (file, suspects) {
            (Some(file), _) => {
                self.by_file.get_key_value(file).filter(|(f, _)| open(f)).map(|(f, _)| check(f)).into_iter().collect()
            }
            (None, Suspects::All) => self.files_in(scope).filter(|(f, _)| open(f)).map(|(f, _)| check(f)).collect(),
            // The counts are per file and the stamps a hash lookup: no thread
            // is visited, nothing is copied for a file that needs no look.
            (None, Suspects::Only(suspects)) => under(&self.counts, scope)
                .filter(|(f, c)| c.threads > 0 && (suspects.contains(*f) || !self.stamps.contains_key(*f)))
                .map(|(f, _)| check(f))
                .collect(),
        }
    }

    pub(super) fn rechecked(
        &mut self,
        file: PathBuf,
        stamp: Option<FileStamp>,
        updates: Vec<Thread>,
    ) -> Result<(), ThreadError> {
        if let Some(stamp) = stamp {
            self.stamps.insert(file.clone(), stamp);
        }
        let mut dropped_snapshots = std::collections::BTreeSet::new();
        for update in updates {
            let Some(current) = self.threads.get_mut(&update.id) else { continue };
            // Comments and resolution may have changed meanwhile: take only
            // what re-anchoring decides.
            let old_snapshot = std::mem::replace(&mut current.anchored_against, update.anchored_against.clone());
            let moved = (current.state, current.span) != (update.state, update.span);
            current.anchor = update.anchor;
            current.checked_against = update.checked_against;
            current.span = update.span;
            current.state = update.state;
            let thread = current.clone();
            self.store.put_thread(&thread).map_err(|e| ThreadError::Store(e.to_string()))?;
            if old_snapshot != thread.anchored_against {
                dropped_snapshots.insert(old_snapshot);
            }
            if moved && !thread.resolved {
                self.publish(file.clone(), Payload::Thread { change: "moved", thread: Box::new(thread) });
            }
        }
        self.recount(&file);
        for hash in dropped_snapshots {
            if !self.threads_of_file(&file).any(|t| t.anchored_against == hash) {
                self.store.remove_snapshot(&hash).map_err(|e| ThreadError::Store(e.to_string()))?;
            }
        }
        Ok(())
    }

    pub(super) fn threads_in(&self, scope: &Path, file: Option<&Path>, include_resolved: bool) -> Vec<Thread> {
        let mut found: Vec<Thread> = match file {
            Some(file) => self.threads_of_file(file).cloned().collect(),
            None => self
                .files_in(scope)
                .flat_map(|(_, ids)| ids.iter().filter_map(|id| self.threads.get(id)))
                .cloned()
                .collect(),
        };
        found.retain(|t| include_resolved || !t.resolved);
        feedback::sort_listing(&mut found);
        found
    }

    pub(super) fn summary(&self, scope: &Path) -> Summary {
        let files = under(&self.counts, scope).map(|(file, counts)| {
            let shown = file.strip_prefix(scope).unwrap_or(file).to_string_lossy();
            let shown = if shown.contains('\\') { shown.replace('\\', "/") } else { shown.into_owned() };
            (shown, *counts)
        });
        feedback::summarize(files)
    }

    pub(super) fn create_thread(&mut self, thread: Thread) -> Result<Thread, ThreadError> {
        self.store.put_thread(&thread).map_err(|e| ThreadError::Store(e.to_string()))?;
        let file = views::file_of(&thread);
        self.index_thread(thread.clone());
        self.recount(&file);
        self.publish(file, Payload::Thread { change: "created", thread: Box::new(thread.clone()) });
        Ok(thread)
    }

    pub(super) fn edit_thread(&mut self, id: &str, edit: ThreadEdit) -> Result<Thread, ThreadError> {
        let thread = self.threads.get_mut(id).ok_or(ThreadError::NotFound)?;
        let change = match edit {
            ThreadEdit::Reply(_) | ThreadEdit::Resolve if thread.resolved => {
                return Err(match edit {
                    ThreadEdit::Resolve => ThreadError::AlreadyResolved,
                    _ => ThreadError::ResolvedNoReply,
                });
            }
            ThreadEdit::Reply(comment) => {
                thread.comments.push(comment);
                "replied"
            }
            ThreadEdit::Resolve => {
                thread.resolved = true;
                "resolved"
            }
            ThreadEdit::Reopen if !thread.resolved => return Err(ThreadError::NotResolved),
            ThreadEdit::Reopen => {
                // Its file was not followed while it was resolved: check it afresh.
                thread.resolved = false;
                thread.checked_against.clear();
                "reopened"
            }
        };
        thread.updated_at = now_rfc3339();
        let thread = thread.clone();
        self.recount(&views::file_of(&thread));
        if change == "reopened" {
            self.stamps.remove(&views::file_of(&thread));
        }
        self.store.put_thread(&thread).map_err(|e| ThreadError::Store(e.to_string()))?;
        self.publish(views::file_of(&thread), Payload::Thread { change, thread: Box::new(thread.clone()) });
        Ok(thread)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folders_range_holds_exactly_the_paths_under_it() {
        let paths =
            ["/a", "/a/b", "/a/b/c.rs", "/a/b/d/e.rs", "/a/b.rs", "/a/b0/x.rs", "/a/ba/x.rs", "/a/c/x.rs", "/z"];
        let map: BTreeMap<PathBuf, ()> = paths.iter().map(|p| (PathBuf::from(p), ())).collect();
        let check = |scope: &str| {
            let got: Vec<&str> = under(&map, Path::new(scope)).map(|(p, _)| p.to_str().expect("UTF-8")).collect();
            let want: Vec<&str> = paths.iter().copied().filter(|p| Path::new(p).starts_with(scope)).collect();
            assert_eq!(got, want, "under {scope}");
        };
        for scope in ["/a/b", "/a/b/", "/a", "/", "/a/b/d", "/a/b/..", "/q", "/a/b.rs"] {
            check(scope);
        }
    }
}
