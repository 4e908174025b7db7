//! Keeping threads true to the files on disk: before threads are read, every
//! file with threads in scope that may have changed is checked (a `stat`,
//! and a hash when the stat changed) and its threads re-anchored when its
//! text changed. Which files may have changed is the watcher's to say
//! ([`Freshness`]); a read of one file always checks it. Also positions
//! threads in unsaved buffer text.
//!
//! Re-anchoring one file is bounded: its searches share one budget
//! ([`crate::anchor::SEARCH_BUDGET_BYTES`]), and files over
//! [`SNAPSHOT_MAX_BYTES`] keep no snapshot to diff against, so a huge file
//! that changed costs about a read of it and a few scans, and threads its
//! budget could not find are marked stale rather than holding up the read.
//!
//! Reads files (on blocking threads), with their `\r\n` endings read as
//! `\n` ([`crate::line_endings`]); decisions are `feedback` and `anchor`'s.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::anchor::{Pass, Reanchorer};
use crate::feedback::{self, Change, FeedbackError, Thread, ThreadState};
use crate::line_endings;
use crate::position::LineIndex;
use crate::state::{FileStamp, FileToCheck, StateHandle, Suspects};
use crate::store::Store;

#[cfg(unix)]
#[path = "refresh/unix.rs"]
mod file_id;
#[cfg(windows)]
#[path = "refresh/windows.rs"]
mod file_id;

mod freshness;
pub use freshness::Freshness;

/// Files larger than this are not anchored into (treated as unreadable).
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// Texts larger than this are not stored as snapshots, so their threads are
/// re-anchored without a line diff (by their text and context, within the
/// search budget): storing and loading a snapshot of tens of megabytes on
/// every change would cost more than the diff saves.
pub const SNAPSHOT_MAX_BYTES: usize = 4 * 1024 * 1024;

const MISSING: &str = "missing";

/// How many read files a check holds at most, waiting to be re-anchored.
const FILES_IN_FLIGHT: usize = 4;

type Failure = FeedbackError;

fn store_failed(e: impl std::fmt::Display) -> Failure {
    FeedbackError::Store(e.to_string())
}

fn internal(e: impl std::fmt::Display) -> Failure {
    FeedbackError::Unreadable(format!("internal error: {e}"))
}

/// What reading a file gave.
enum Content {
    Text(String),
    Missing,
    /// Not UTF-8, too large, or unreadable.
    Unreadable,
}

/// The hash Parley keys file texts by: of the text as threads see it, its
/// `\r\n` endings read as `\n`.
pub fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

fn stat_unchanged(meta: &std::fs::Metadata, stamp: &FileStamp) -> bool {
    meta.len() == stamp.len && meta.modified().ok() == stamp.modified && file_id::inode(meta) == stamp.inode
}

/// Reads a file unless its stat shows it unchanged since `known`.
fn read_if_changed(file: &Path, known: Option<&FileStamp>) -> Option<(FileStamp, Content)> {
    let meta = match std::fs::metadata(file) {
        Ok(meta) => meta,
        Err(_) => {
            let stamp = FileStamp { len: 0, modified: None, inode: 0, hash: MISSING.into() };
            return (known != Some(&stamp)).then_some((stamp, Content::Missing));
        }
    };
    if known.is_some_and(|k| k.hash != MISSING && stat_unchanged(&meta, k)) {
        return None;
    }
    let mut stamp = FileStamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        inode: file_id::inode(&meta),
        hash: String::new(),
    };
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        stamp.hash = format!("unreadable:{}", meta.len());
        return Some((stamp, Content::Unreadable));
    }
    let Ok(bytes) = std::fs::read(file) else {
        stamp.hash = "unreadable".into();
        return Some((stamp, Content::Unreadable));
    };
    match String::from_utf8(bytes) {
        Ok(text) => {
            // Threads see the text with `\r\n` read as `\n`, and are keyed
            // by its hash: a file whose endings only flipped has not changed
            // for them.
            let text = line_endings::into_lf(text);
            stamp.hash = hash(text.as_bytes());
            Some((stamp, Content::Text(text)))
        }
        Err(e) => {
            stamp.hash = format!("unreadable:{}", hash(e.as_bytes()));
            Some((stamp, Content::Unreadable))
        }
    }
}

/// Re-anchors the threads of every changed file in `scope` (or just `file`).
pub async fn refresh(
    state: &StateHandle,
    store: &Store,
    freshness: &Freshness,
    scope: &Path,
    file: Option<&Path>,
) -> Result<(), Failure> {
    let suspects = match file {
        Some(file) => {
            freshness.take_file(file);
            Suspects::All
        }
        None => freshness.take(scope),
    };
    let checked = check(state, store, scope, file, suspects).await;
    if checked.is_err() {
        // What was taken off the watcher's list was not looked at.
        freshness.unchecked();
    }
    checked
}

async fn check(
    state: &StateHandle,
    store: &Store,
    scope: &Path,
    file: Option<&Path>,
    suspects: Suspects,
) -> Result<(), Failure> {
    let files = state.files_to_check(scope.to_owned(), file.map(Path::to_owned), suspects).await?;
    if files.is_empty() {
        return Ok(());
    }
    // One pass on a blocking thread stats every file (and reads the changed
    // ones), rather than a hand-off per file. It hands over what it read a
    // few files at a time: holding every changed file's text at once would
    // cost a read of a whole workspace its size in memory.
    let (read, mut changed) = tokio::sync::mpsc::channel(FILES_IN_FLIGHT);
    let reader = tokio::task::spawn_blocking(move || {
        for FileToCheck { file, stamp } in files {
            if let Some((stamp, content)) = read_if_changed(&file, stamp.as_ref())
                && read.blocking_send((file, stamp, content)).is_err()
            {
                // The check failed and stopped listening.
                return;
            }
        }
    });
    // Re-anchoring writes derived data and is not flushed here: a read does
    // not wait for the disk. sled writes it within half a second; after a
    // crash before that, the next read re-anchors again (a thread whose old
    // snapshot is gone is found without the line diff).
    while let Some((file, stamp, content)) = changed.recv().await {
        let new_hash: Arc<str> = stamp.hash.as_str().into();
        let pending = state.threads_to_recheck(file.clone(), new_hash.clone()).await?;
        let updates = if pending.is_empty() {
            // Its threads were checked against this very text (a start, or
            // a file touched without changing).
            Vec::new()
        } else {
            let store_for_task = store.clone();
            tokio::task::spawn_blocking(move || recheck_all(pending, content, &new_hash, &store_for_task, true))
                .await
                .map_err(internal)??
        };
        state.rechecked(file, Some(stamp), updates).await?;
    }
    reader.await.map_err(internal)?;
    // A read that re-anchors a whole workspace (the first after an import,
    // or a start on a changed workspace) writes every thread again: the
    // state owner compacts them, and the store reopens, once it is over.
    Ok(())
}

/// Re-anchors `threads` against a file's new content; returns every thread
/// whose anchoring data changed (position, state or the text checked against).
fn recheck_all(
    threads: Vec<Thread>,
    content: Content,
    new_hash: &Arc<str>,
    store: &Store,
    keep_snapshot: bool,
) -> Result<Vec<Thread>, Failure> {
    let mut updates = Vec::with_capacity(threads.len());
    let text = match &content {
        Content::Text(text) => text,
        Content::Missing | Content::Unreadable => {
            let state =
                if matches!(content, Content::Missing) { ThreadState::Orphaned } else { ThreadState::Unreadable };
            for mut thread in threads {
                feedback::lose_file(&mut thread, state, new_hash);
                updates.push(thread);
            }
            return Ok(updates);
        }
    };
    // Threads made against the same old text share one diff of it; in a
    // fixed order, so which threads a spent budget leaves stale does not
    // change from run to run.
    let mut by_snapshot: BTreeMap<Arc<str>, Vec<Thread>> = BTreeMap::new();
    for thread in threads {
        by_snapshot.entry(thread.anchored_against.clone()).or_default().push(thread);
    }
    let diffable = text.len() <= SNAPSHOT_MAX_BYTES;
    let index = LineIndex::new(text);
    let mut snapshots = Vec::with_capacity(by_snapshot.len());
    let mut groups = Vec::with_capacity(by_snapshot.len());
    for (snapshot, mut group) in by_snapshot {
        let mut old = if diffable { store.snapshot(&snapshot).map_err(store_failed)? } else { None };
        // Threads made before `\r\n` was read as `\n`: their snapshot
        // holds the raw text, or their quote a `\r`.
        let raw = old.as_deref().is_some_and(|old| old.contains("\r\n"));
        for thread in &mut group {
            if raw || thread.anchor.quote.contains('\r') || thread.original_quote.contains('\r') {
                feedback::read_endings_as_lf(thread, old.as_deref().filter(|_| raw));
            }
        }
        if raw {
            old = old.map(line_endings::into_lf);
        }
        snapshots.push(old);
        groups.push(group);
    }
    let reanchorers: Vec<Reanchorer<'_>> =
        snapshots.iter().map(|old| Reanchorer::with_budget(old.as_deref(), text, 0)).collect();
    // Exact searches for every thread first, of every group, then fuzzy ones
    // for those left: a budget that runs out leaves stale the threads that
    // cost most, never one whose text only moved.
    let mut budget = crate::anchor::SEARCH_BUDGET_BYTES;
    let mut anchored_here = false;
    let now = crate::clock::now_rfc3339();
    for pass in [Pass::Exact, Pass::Rest] {
        for (reanchorer, group) in reanchorers.iter().zip(&mut groups) {
            reanchorer.set_pass(pass);
            reanchorer.set_budget(budget);
            for mut thread in std::mem::take(group) {
                // Memory holds threads without their context; only one that
                // is not where it was needs it, to be looked for elsewhere.
                if thread.anchor.contexts_in_store()
                    && !reanchorer.in_place(&thread.anchor)
                    && let Some(context) = store.thread_contexts(&thread.id).map_err(store_failed)?
                {
                    thread.anchor.context = Some(Box::new(context));
                }
                let _: Change = feedback::recheck(&mut thread, reanchorer, &index, new_hash, &now);
                if pass == Pass::Exact && thread.state == ThreadState::Stale {
                    group.push(thread);
                } else {
                    anchored_here |= thread.anchored_against == *new_hash;
                    updates.push(thread);
                }
            }
            budget = reanchorer.budget_left();
        }
    }
    if keep_snapshot && anchored_here && diffable {
        store.put_snapshot(new_hash, text).map_err(store_failed)?;
    }
    Ok(updates)
}

/// The open threads of `file` positioned in `text`, an editor's unsaved
/// buffer. Nothing is stored: the file on disk stays the reference.
pub async fn in_buffer(state: &StateHandle, store: &Store, file: &Path, text: String) -> Result<Vec<Thread>, Failure> {
    let threads = state.threads_of_file(file.to_owned()).await?;
    let open: Vec<Thread> = threads.into_iter().filter(|t| !t.resolved).collect();
    let store = store.clone();
    let text = line_endings::into_lf(text);
    tokio::task::spawn_blocking(move || {
        let buffer_hash: Arc<str> = hash(text.as_bytes()).into();
        let mut threads = recheck_all(open, Content::Text(text), &buffer_hash, &store, false)?;
        feedback::sort_listing(&mut threads);
        Ok(threads)
    })
    .await
    .map_err(internal)?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state;

    /// A file is read as its threads see it: CRLF, LF and mixed endings give
    /// one text and one hash, so a flip of the endings changes nothing for
    /// them, while a real edit does.
    #[test]
    fn crlf_lf_and_mixed_endings_read_as_one_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let read = |name: &str, bytes: &str| {
            let file = dir.path().join(name);
            std::fs::write(&file, bytes).expect("write");
            match read_if_changed(&file, None) {
                Some((stamp, Content::Text(text))) => (text, stamp.hash),
                _ => panic!("{name} was not read as text"),
            }
        };
        let lf = read("lf.rs", "fn a() {}\nfn b() {}\n");
        assert_eq!(read("crlf.rs", "fn a() {}\r\nfn b() {}\r\n"), lf);
        assert_eq!(read("mixed.rs", "fn a() {}\r\nfn b() {}\n"), lf);
        let edited = read("edited.rs", "fn a() {}\r\nfn c() {}\r\n");
        assert_eq!(edited.0, "fn a() {}\nfn c() {}\n");
        assert_ne!(edited.1, lf.1);
    }

    /// A thread made by an older Parley on a CRLF file: its range in the raw
    /// text, its quote with `\r`, its snapshot the raw text.
    fn raw_thread(workspace: &Path, raw: &str, range: std::ops::Range<usize>, snapshot: &str) -> Thread {
        let anchor = crate::anchor::capture(raw, range);
        Thread {
            id: feedback::new_id(),
            workspace: workspace.into(),
            path: "a.rs".into(),
            original_quote: anchor.quote.clone(),
            span: feedback::span_of(&LineIndex::new(raw), anchor.range.clone()),
            whole_lines: crate::anchor::covers_whole_lines(raw, &anchor.range),
            anchor,
            anchored_against: snapshot.into(),
            checked_against: snapshot.into(),
            state: ThreadState::Anchored,
            comments: Vec::new(),
            created_at: "t".into(),
            updated_at: "t".into(),
            resolved: false,
            finding: None,
            standing: feedback::Standing::default(),
        }
    }

    /// Threads an older Parley made on a CRLF file, quoting `\r`, are put on
    /// the text as it is read now, in place (not modified), whether their
    /// snapshot is known or not.
    #[tokio::test]
    async fn threads_made_on_raw_crlf_text_are_found_in_place() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("store")).expect("open");
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).expect("mkdir");
        let file = workspace.join("a.rs");
        let raw = "fn a() {\r\n    one();\r\n    two();\r\n}\r\n";
        std::fs::write(&file, raw).expect("write");
        let raw_hash = hash(raw.as_bytes());
        store.put_snapshot(&raw_hash, raw).expect("snapshot");
        let line = raw.find("    one").expect("line");
        let across = raw.find("one").expect("one");
        let end = raw.find("two()").expect("two") + "two()".len();
        let threads = [
            // A whole line as add_feedback quoted it: with its `\r`.
            raw_thread(&workspace, raw, line..raw.find("\n    two").expect("eol"), &raw_hash),
            // Across two lines, with a snapshot and without one.
            raw_thread(&workspace, raw, across..end, &raw_hash),
            raw_thread(&workspace, raw, across..end, "no snapshot"),
        ];
        let (handle, _task) = state::spawn(store.clone(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut ids = Vec::new();
        for thread in threads {
            ids.push(handle.create_thread(thread).await.expect("create").id);
        }
        refresh(&handle, &store, &Freshness::default(), &workspace, Some(&file)).await.expect("refresh");
        // Without a snapshot its range was only a hint: found by its text.
        let want = [
            ("    one();", 1, 1, true, ThreadState::Anchored),
            ("one();\n    two()", 1, 2, false, ThreadState::Anchored),
            ("one();\n    two()", 1, 2, false, ThreadState::Moved),
        ];
        for (id, (quote, start_line, end_line, whole, state)) in ids.into_iter().zip(want) {
            let found = handle.thread(id).await.expect("state").expect("thread");
            assert_eq!(
                (&*found.anchor.quote, &*found.original_quote, found.state, found.whole_lines),
                (quote, quote, state, whole)
            );
            let end_column = if whole { 10 } else { 9 };
            assert_eq!(
                (found.span.start_line, found.span.end_line, found.span.end.utf16),
                (start_line, end_line, end_column)
            );
        }
    }

    /// The state owner holds threads without their context; a thread whose
    /// text moved, with a copy of it nearer its old place, is still told
    /// from the copy by the context read back from the store.
    #[tokio::test]
    async fn a_moved_thread_is_found_by_its_stored_context() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("store")).expect("open");
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).expect("mkdir");
        let file = workspace.join("a.rs");
        let old = "// alpha: the one\ntarget();\n// beta: the one\n";
        std::fs::write(&file, old).expect("write");
        let start = old.find("target").expect("quote");
        let anchor = crate::anchor::capture(old, start..start + "target();".len());
        let thread = Thread {
            id: feedback::new_id(),
            workspace: workspace.as_path().into(),
            path: "a.rs".into(),
            original_quote: anchor.quote.clone(),
            span: feedback::span_of(&LineIndex::new(old), anchor.range.clone()),
            whole_lines: false,
            anchor,
            // No snapshot of the old text: no line diff to follow, so the
            // quote is looked for by its text and context.
            anchored_against: "no snapshot".into(),
            checked_against: "no snapshot".into(),
            state: ThreadState::Anchored,
            comments: Vec::new(),
            created_at: "t".into(),
            updated_at: "t".into(),
            resolved: false,
            finding: None,
            standing: feedback::Standing::default(),
        };
        let (handle, _task) = state::spawn(store.clone(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let created = handle.create_thread(thread).await.expect("create");
        let held = handle.thread(created.id.clone()).await.expect("state").expect("thread");
        assert!(held.anchor.contexts_in_store() && held.anchor.prefix().is_empty(), "memory holds no context");
        // A copy lands where the thread was; the original moves two lines down.
        let new = "target();\n// gamma\n// alpha: the one\ntarget();\n// beta: the one\n";
        std::fs::write(&file, new).expect("write");
        refresh(&handle, &store, &Freshness::default(), &workspace, Some(&file)).await.expect("refresh");
        let found = handle.thread(created.id.clone()).await.expect("state").expect("thread");
        assert_eq!((found.span.start_line, found.state), (3, ThreadState::Moved), "the original, not the copy");
        // The write kept a context in the store: the one around the new place.
        store.flush().await.expect("flush");
        let stored = store.threads().expect("read");
        let at = new.rfind("target").expect("quote");
        assert_eq!(stored[0].anchor, crate::anchor::capture(new, at..at + "target();".len()));
    }
}
