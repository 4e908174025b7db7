//! The feedback-thread half of the state owner: the threads in memory, their
//! index by file, what was last read of each file, and the edits agents and
//! humans make.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::oneshot;

use super::durable::Effect;
use super::{Payload, State};
use crate::clock::now_rfc3339;
use crate::feedback::{self, Comment, FeedbackError as ThreadError, Mark, Summary, Thread};
use crate::store::{Store, Write};
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

/// From how many threads held [`State::compact_threads`] is worth its time.
pub(super) const COMPACT_FROM_THREADS: usize = 10_000;

/// How many thread changes (an import, a workspace re-anchored, an agent
/// reading a large workspace's feedback) leave the threads scattered enough
/// to compact them, once the changes stop for [`COMPACT_WHEN_QUIET`]: a
/// series of imports, or a re-anchoring's batches, is compacted once.
pub(super) const COMPACT_AFTER_CHANGES: usize = 10_000;
pub(super) const COMPACT_WHEN_QUIET: std::time::Duration = std::time::Duration::from_secs(2);

/// A thread's id as the state owner's maps hold it. Every id Parley makes is
/// a UUID: its 16 bytes are kept in place, where a `String` would be 24 bytes
/// and a 48-byte allocation, twice per thread (the thread map's key and the
/// per-file index), about 10 MiB for 100,000 threads. Any other id (an
/// import's) is kept as it is. Lower-case UUIDs order as their text does.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadKey {
    Uuid([u8; 16]),
    Other(Box<str>),
}

impl ThreadKey {
    pub fn of(id: &str) -> ThreadKey {
        // Upper-case digits would not come back the same from the bytes.
        if !feedback::is_thread_id(id) || id.bytes().any(|b| b.is_ascii_uppercase()) {
            return ThreadKey::Other(id.into());
        }
        let mut digits = id.bytes().filter(|b| *b != b'-').map(|b| match b {
            b'0'..=b'9' => b - b'0',
            _ => b - b'a' + 10,
        });
        let mut bytes = [0u8; 16];
        for byte in &mut bytes {
            let (high, low) = (digits.next().unwrap_or(0), digits.next().unwrap_or(0));
            *byte = (high << 4) | low;
        }
        ThreadKey::Uuid(bytes)
    }
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

/// A change to one thread. The plain variants are a person's (at an editor
/// or the CLI); the agent ones are made through the MCP tools and move the
/// thread's standing to addressed.
#[derive(Debug, Clone)]
pub enum ThreadEdit {
    Reply(Comment),
    Resolve,
    Reopen,
    AgentReply(Comment),
    /// Resolving, with a note kept as the thread's last comment.
    AgentResolve {
        agent: String,
        note: Option<Comment>,
    },
    /// The thread's newest message to an agent that is not yet answered,
    /// sent to `agent` instead (waiting again).
    Resend {
        agent: String,
    },
    /// What a pull from GitHub brings: comments made there (a person's
    /// word, as a reply here is), resolved or reopened there, and GitHub's
    /// ids and state as of this sync.
    Github {
        comments: Vec<Comment>,
        resolved: Option<bool>,
        mark: Box<feedback::GithubMark>,
    },
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
    pub(super) fn index_thread(&mut self, mut thread: Thread) {
        thread.anchor.leave_contexts_in_store();
        let ids = self.by_file.entry(views::file_of(&thread)).or_default();
        // A file's threads share their workspace and, once checked against
        // the same text, its hashes: one copy per file instead of one per
        // thread (a thread read from the store comes with its own).
        if let Some(other) = ids.first().and_then(|key| self.threads.get(key)) {
            share(&mut thread.workspace, &other.workspace);
            for hash in [&mut thread.anchored_against, &mut thread.checked_against] {
                if !share(hash, &other.anchored_against) {
                    share(hash, &other.checked_against);
                }
            }
        }
        let key = ThreadKey::of(&thread.id);
        ids.insert(key.clone());
        // Boxed: the map's table has room for a third more threads than it
        // holds, and an empty slot is then 8 bytes instead of a thread's 320.
        if !thread.standing.deliveries.is_empty() {
            self.note_deliveries(&thread);
        }
        self.threads.insert(key, Box::new(thread));
    }

    /// Puts `threads` in memory in place of any held under their ids (as
    /// read back after an import). Their files are checked again at the next
    /// read, as the threads may not have been checked against them; answers
    /// the files with open threads among them.
    pub(super) fn replace_threads(&mut self, threads: impl Iterator<Item = Thread>) -> Vec<PathBuf> {
        let mut touched = BTreeSet::new();
        for thread in threads {
            let key = ThreadKey::of(&thread.id);
            if let Some(held) = self.threads.remove(&key) {
                let file = views::file_of(&held);
                if let Some(ids) = self.by_file.get_mut(&file) {
                    ids.remove(&key);
                    if ids.is_empty() {
                        self.by_file.remove(&file);
                    }
                }
                touched.insert(file);
            }
            touched.insert(views::file_of(&thread));
            self.index_thread(thread);
        }
        for file in &touched {
            self.stamps.remove(file);
            self.recount(file);
        }
        touched.into_iter().filter(|file| self.counts.get(file).is_some_and(|c| c.threads > 0)).collect()
    }

    /// Counts `count` threads changed now, towards a compaction.
    pub(super) fn note_thread_changes(&mut self, count: usize) {
        self.changed_since_compaction += count;
        self.last_change = std::time::Instant::now();
    }

    /// When to compact the threads, if enough changed: once the changes
    /// have been written and none came for [`COMPACT_WHEN_QUIET`].
    pub(super) fn compaction_due(&self) -> Option<std::time::Instant> {
        let writing = self.in_flight.is_some() || !self.queue.is_empty();
        (self.changed_since_compaction >= COMPACT_AFTER_CHANGES && !writing)
            .then(|| self.last_change + COMPACT_WHEN_QUIET)
    }

    /// Compacts the threads if they are due (see [`State::compaction_due`]).
    pub(super) fn compact_if_quiet(&mut self) {
        if self.compaction_due().is_some_and(|at| at <= std::time::Instant::now()) {
            self.changed_since_compaction = 0;
            if self.threads.len() >= COMPACT_FROM_THREADS {
                self.compact_threads();
                self.compactions += 1;
            }
        }
    }

    /// Writes every thread held out to one buffer, dropping each, and reads
    /// them back. After a change to many threads (an import, a re-anchoring
    /// of a whole workspace) they sit scattered among the holes of what the
    /// change allocated and freed around them, and the allocator can give
    /// back none of those pages: 60 to 80 MiB with 100,000 threads. Read
    /// back in one go they fill few pages. About a second for 100,000
    /// threads, in which the state owner answers nothing else.
    pub(super) fn compact_threads(&mut self) {
        if self.threads.len() < COMPACT_FROM_THREADS {
            return;
        }
        let started = std::time::Instant::now();
        let mut copies = Vec::new();
        let mut kept = Vec::new();
        for (_, thread) in std::mem::take(&mut self.threads) {
            let start = copies.len();
            if Store::encode_thread(&thread, &mut copies).is_ok() {
                copies.push(b'\n');
            } else {
                copies.truncate(start);
                kept.push(*thread);
            }
        }
        self.by_file.clear();
        crate::memory::return_freed_memory();
        let mut unreadable = 0;
        for copy in copies.split(|b| *b == b'\n').filter(|copy| !copy.is_empty()) {
            match Store::decode_thread(copy) {
                Ok(thread) => self.index_thread(thread),
                Err(_) => unreadable += 1,
            }
        }
        drop(copies);
        for thread in kept {
            self.index_thread(thread);
        }
        if unreadable > 0 {
            // Cannot happen (each was just written); were it to, memory is
            // read again from the store, which holds every thread.
            tracing::error!("{unreadable} threads did not read back while compacting; reading them from the store");
            match self.store.threads_without_context() {
                Ok(threads) => {
                    let reviews = std::mem::take(&mut self.reviews).into_values().collect();
                    self.load(reviews, threads);
                }
                Err(e) => tracing::error!("cannot read the threads from the store: {e}"),
            }
        }
        crate::memory::return_freed_memory();
        tracing::debug!("{} threads compacted in memory in {:?}", self.threads.len(), started.elapsed());
    }

    pub(super) fn thread(&self, id: &str) -> Option<&Thread> {
        self.threads.get(&ThreadKey::of(id)).map(|t| &**t)
    }

    pub(super) fn thread_mut(&mut self, id: &str) -> Option<&mut Thread> {
        self.threads.get_mut(&ThreadKey::of(id)).map(|t| &mut **t)
    }

    /// Recomputes one file's counts after its threads changed.
    pub(super) fn recount(&mut self, file: &Path) {
        let counts = feedback::FileCounts::of(self.threads_of_file(file));
        self.counts.insert(file.to_owned(), counts);
        self.note_stamp(file);
    }

    /// Keeps `unstamped` true for `file` after its counts or stamp changed.
    fn note_stamp(&mut self, file: &Path) {
        let open = self.counts.get(file).is_some_and(|c| c.threads > 0);
        if open && !self.stamps.contains_key(file) {
            self.unstamped.insert(file.to_owned(), ());
        } else {
            self.unstamped.remove(file);
        }
    }

    pub(super) fn threads_of_file<'a>(&'a self, file: &Path) -> impl Iterator<Item = &'a Thread> + 'a {
        self.by_file.get(file).into_iter().flatten().filter_map(|key| self.threads.get(key).map(|t| &**t))
    }

    /// Files with threads under `scope`, in order.
    fn files_in<'a>(&'a self, scope: &'a Path) -> impl Iterator<Item = (&'a PathBuf, &'a BTreeSet<ThreadKey>)> + 'a {
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
            // The watcher's suspects and the files never stamped: no other
            // file is visited, however many the scope holds.
            (None, Suspects::Only(suspects)) => {
                let suspected = suspects.iter().filter(|f| f.starts_with(scope) && open(f));
                let files: std::collections::BTreeSet<&PathBuf> =
                    suspected.chain(under(&self.unstamped, scope).map(|(f, _)| f)).collect();
                files.into_iter().map(check).collect()
            }
        }
    }

    /// Applies re-anchoring's outcome at once (positions are derived data,
    /// visible before they are durable) and hands the store its writes.
    pub(super) fn rechecked(&mut self, file: PathBuf, stamp: Option<FileStamp>, updates: Vec<Thread>) {
        if let Some(stamp) = stamp {
            self.stamps.insert(file.clone(), stamp);
            self.note_stamp(&file);
        }
        let mut dropped_snapshots = std::collections::BTreeSet::new();
        for update in updates {
            let Some(current) = self.thread_mut(&update.id) else { continue };
            // Comments and resolution may have changed meanwhile: take only
            // what re-anchoring decides.
            let old_snapshot = std::mem::replace(&mut current.anchored_against, update.anchored_against.clone());
            let moved = (current.state, current.span) != (update.state, update.span);
            // Re-anchoring's one say in a thread's standing: its suggested
            // change was found applied (an agent's reply meanwhile wins).
            let applied = !current.resolved
                && current.standing.addressed.is_none()
                && update.standing.addressed.as_ref().is_some_and(|m| m.by == feedback::APPLIED);
            if applied {
                current.standing.addressed = update.standing.addressed.clone();
            }
            current.whole_lines = update.whole_lines;
            // The quote is usually the same text: the one held is kept, as
            // replacing it with the copy re-anchoring made would scatter a
            // mass re-check's threads across memory it then frees around them.
            let crate::anchor::Anchor { range, quote, context } = update.anchor;
            if current.anchor.quote != quote {
                current.anchor.quote = quote;
            }
            // Changed only for a thread made before `\r\n` was read as `\n`.
            if current.original_quote != update.original_quote {
                current.original_quote = update.original_quote;
            }
            (current.anchor.range, current.anchor.context) = (range, context);
            current.checked_against = update.checked_against;
            current.span = update.span;
            current.state = update.state;
            // Written with the context re-anchoring captured; kept without.
            let thread = current.clone();
            current.anchor.leave_contexts_in_store();
            if let Some(waiting) = self.staged_threads.get_mut(&thread.id) {
                // An edit waiting for the disk builds on these positions too.
                take_positions(waiting, &thread);
            }
            self.stage(Write::Thread(Box::new(thread.clone())), Effect::Derived);
            if old_snapshot != thread.anchored_against {
                dropped_snapshots.insert(old_snapshot);
            }
            if (moved || applied) && !thread.resolved {
                self.publish(file.clone(), Payload::Thread { change: "moved", thread: Box::new(thread) });
            }
        }
        self.recount(&file);
        for hash in dropped_snapshots {
            if !self.threads_of_file(&file).any(|t| t.anchored_against == hash) {
                self.stage(Write::RemoveSnapshot(hash.to_string()), Effect::Derived);
            }
        }
    }

    /// The threads inside `scope` (or just `file`) in listing order, and
    /// how many there are in all: only the page asked for is copied, so a
    /// page of a 100,000-thread workspace copies a page's threads.
    pub(super) fn threads_in(
        &self,
        scope: &Path,
        file: Option<&Path>,
        include_resolved: bool,
        page: feedback::Page,
    ) -> (usize, Vec<Thread>) {
        let mut found: Vec<&Thread> = match file {
            Some(file) => self.threads_of_file(file).collect(),
            None => self
                .files_in(scope)
                .flat_map(|(_, ids)| ids.iter().filter_map(|key| self.threads.get(key)))
                .map(|t| &**t)
                .collect(),
        };
        found.retain(|t| include_resolved || !t.resolved);
        found.sort_by(|a, b| feedback::listing_order(a, b));
        let total = found.len();
        let page = page.take(found).into_iter().cloned().collect();
        (total, page)
    }

    pub(super) fn summary(&self, scope: &Path) -> Summary {
        // Files with as many threads are ordered by their paths' bytes (as
        // the listed paths, which share the scope, order as strings), which
        // compares faster than paths component by component; only the
        // listed files' paths are made into strings.
        let show = |(_, file): &(&[u8], &PathBuf)| {
            let shown = file.strip_prefix(scope).unwrap_or(file).to_string_lossy();
            if shown.contains('\\') { shown.replace('\\', "/") } else { shown.into_owned() }
        };
        let files =
            under(&self.counts, scope).map(|(file, counts)| ((file.as_os_str().as_encoded_bytes(), file), *counts));
        feedback::summarize(files, show)
    }

    /// Hands a new thread to the store; it is kept, published and answered
    /// once durable.
    pub(super) fn create_thread(&mut self, thread: Thread, reply: oneshot::Sender<Result<Thread, ThreadError>>) {
        self.staged_threads.insert(thread.id.clone(), thread.clone());
        self.stage(Write::Thread(Box::new(thread.clone())), Effect::CreateThread { thread: Box::new(thread), reply });
    }

    /// Checks an edit against the newest version of its thread and hands the
    /// result to the store; it is applied, published and answered once durable.
    pub(super) fn edit_thread(
        &mut self,
        id: String,
        edit: ThreadEdit,
        reply: oneshot::Sender<Result<Thread, ThreadError>>,
    ) {
        let Some(mut thread) = self.staged_threads.get(&id).or_else(|| self.thread(&id)).cloned() else {
            let _ = reply.send(Err(ThreadError::NotFound));
            return;
        };
        let at = now_rfc3339();
        if let Err(e) = apply_edit(&mut thread, &edit, &at) {
            let _ = reply.send(Err(e));
            return;
        }
        self.staged_threads.insert(id.clone(), thread.clone());
        self.stage(Write::Thread(Box::new(thread)), Effect::EditThread { id, edit, at, reply });
    }

    /// Records that `agent` read the threads `ids` at `at`, in one step for
    /// a whole listing. Only threads whose standing changes (open ones) are
    /// written and announced: reading again changes nothing.
    pub(super) fn mark_seen(&mut self, ids: &[String], agent: &str, at: &str) {
        for id in ids {
            let Some(thread) = self.thread_mut(id) else { continue };
            if !thread.standing.see(thread.resolved, agent, at) {
                continue;
            }
            let thread = thread.clone();
            // An edit waiting for the disk is written after this: it must
            // carry the mark too, or its write would drop it.
            let write = match self.staged_threads.get_mut(id) {
                Some(waiting) => {
                    waiting.standing.see(waiting.resolved, agent, at);
                    waiting.clone()
                }
                None => thread.clone(),
            };
            self.stage(Write::Thread(Box::new(write)), Effect::Derived);
            self.publish(views::file_of(&thread), Payload::Thread { change: "seen", thread: Box::new(thread) });
        }
    }

    /// Applies an edit the store has made durable to the thread in memory.
    pub(super) fn apply_stored_edit(&mut self, id: &str, edit: &ThreadEdit, at: &str) -> Result<Thread, ThreadError> {
        let thread = self.thread_mut(id).ok_or(ThreadError::NotFound)?;
        let change = apply_edit(thread, edit, at)?;
        let thread = thread.clone();
        if !thread.standing.deliveries.is_empty() {
            self.note_deliveries(&thread);
        }
        let file = views::file_of(&thread);
        self.recount(&file);
        if change == "reopened" {
            self.stamps.remove(&file);
            self.note_stamp(&file);
        }
        self.publish(file, Payload::Thread { change, thread: Box::new(thread.clone()) });
        Ok(thread)
    }
}

/// Makes `mine` share `theirs` when they are equal; answers whether they are.
fn share<T: ?Sized + PartialEq>(mine: &mut Arc<T>, theirs: &Arc<T>) -> bool {
    let equal = **mine == **theirs;
    if equal && !Arc::ptr_eq(mine, theirs) {
        *mine = theirs.clone();
    }
    equal
}

/// Applies an edit to a thread made at `at`; answers the change's name.
fn apply_edit(thread: &mut Thread, edit: &ThreadEdit, at: &str) -> Result<&'static str, ThreadError> {
    let by_agent = |agent: &str| Box::new(Mark { by: agent.to_owned(), at: at.to_owned(), agent: true });
    let standing = &mut thread.standing;
    let change = match edit {
        ThreadEdit::Reply(_) | ThreadEdit::AgentReply(_) if thread.resolved => {
            return Err(ThreadError::ResolvedNoReply);
        }
        ThreadEdit::Resolve | ThreadEdit::AgentResolve { .. } if thread.resolved => {
            return Err(ThreadError::AlreadyResolved);
        }
        ThreadEdit::Reply(comment) => {
            thread.comments.push(comment.clone());
            heard_from_a_person(standing, comment, at);
            "replied"
        }
        ThreadEdit::Github { comments, resolved, mark } => {
            for comment in comments {
                thread.comments.push(comment.clone());
                heard_from_a_person(standing, comment, at);
            }
            let change = match resolved {
                Some(true) if !thread.resolved => {
                    thread.resolved = true;
                    standing.resolved = Some(Box::new(Mark { by: "human".into(), at: at.to_owned(), agent: false }));
                    "resolved"
                }
                Some(false) if thread.resolved => {
                    thread.resolved = false;
                    thread.checked_against = "".into();
                    standing.resolved = None;
                    "reopened"
                }
                _ if !comments.is_empty() => "replied",
                _ => "synced",
            };
            // Agents' comments made since the syncer read the thread are
            // kept; those GitHub now has need no more remembering.
            let mut mark = mark.clone();
            let earlier = standing.github.take().map(|g| g.agent_comments).unwrap_or_default();
            for id in earlier {
                if !mark.agent_comments.contains(&id) {
                    mark.agent_comments.push(id);
                }
            }
            let pushed: Vec<&str> = mark.comments.iter().map(|c| c.parley.as_str()).collect();
            let still: Vec<String> =
                mark.agent_comments.iter().filter(|id| !pushed.contains(&id.as_str())).cloned().collect();
            mark.agent_comments = still;
            standing.github = Some(mark);
            change
        }
        ThreadEdit::Resend { agent } => {
            let open = standing.deliveries.iter_mut().rev().find(|d| d.state != feedback::DeliveryState::Answered);
            let Some(delivery) = open else {
                return Err(ThreadError::Invalid(
                    "this thread has no unanswered message to an agent; ask again with a new question".into(),
                ));
            };
            delivery.agent = agent.clone();
            delivery.state = feedback::DeliveryState::Waiting;
            delivery.via = None;
            delivery.updated_at = at.to_owned();
            "delivery"
        }
        ThreadEdit::AgentReply(comment) => {
            thread.comments.push(comment.clone());
            standing.addressed = Some(by_agent(&comment.author));
            // On a thread synced with GitHub, a push sends it as the agent's.
            if let Some(github) = standing.github.as_mut() {
                github.agent_comments.push(comment.id.clone());
            }
            "replied"
        }
        ThreadEdit::Resolve => {
            thread.resolved = true;
            standing.resolved = Some(Box::new(Mark { by: "human".into(), at: at.to_owned(), agent: false }));
            "resolved"
        }
        ThreadEdit::AgentResolve { agent, note } => {
            thread.comments.extend(note.iter().cloned());
            if let (Some(github), Some(note)) = (standing.github.as_mut(), note) {
                github.agent_comments.push(note.id.clone());
            }
            thread.resolved = true;
            standing.addressed = Some(by_agent(agent));
            standing.resolved = Some(by_agent(agent));
            "resolved"
        }
        ThreadEdit::Reopen if !thread.resolved => return Err(ThreadError::NotResolved),
        ThreadEdit::Reopen => {
            // Its file was not followed while it was resolved: check it afresh.
            thread.resolved = false;
            thread.checked_against = "".into();
            // A person brought it back: it waits for an agent again (its
            // messages to agents stay as they stand).
            let deliveries = std::mem::take(&mut standing.deliveries);
            let opened_by = standing.opened_by.take();
            let walkthrough = standing.walkthrough.take();
            let github = standing.github.take();
            *standing =
                feedback::Standing { deliveries, opened_by, walkthrough, github, ..feedback::Standing::default() };
            "reopened"
        }
    };
    thread.updated_at = at.into();
    Ok(change)
}

/// A person said something new in a thread: no agent has read it yet, and
/// on a thread a person asked an agent about (or one an agent opened), the
/// new word goes to that agent too.
fn heard_from_a_person(standing: &mut feedback::Standing, comment: &Comment, at: &str) {
    standing.seen = None;
    standing.addressed = None;
    if let Some(agent) = standing.asked_agent().map(str::to_owned) {
        standing.deliveries.push(feedback::Delivery {
            comment_id: comment.id.clone(),
            agent,
            state: feedback::DeliveryState::Waiting,
            via: None,
            asked_at: at.to_owned(),
            updated_at: at.to_owned(),
        });
    }
}

/// Copies re-anchoring's outcome from `from` into `to`.
fn take_positions(to: &mut Thread, from: &Thread) {
    to.anchor = from.anchor.clone();
    // Changed only for a thread made before `\r\n` was read as `\n`.
    to.original_quote = from.original_quote.clone();
    to.anchored_against = from.anchored_against.clone();
    to.checked_against = from.checked_against.clone();
    to.span = from.span;
    to.state = from.state;
    to.whole_lines = from.whole_lines;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread() -> Thread {
        Thread {
            id: feedback::new_id(),
            workspace: std::path::Path::new("/ws").into(),
            path: "a.rs".into(),
            anchor: crate::anchor::capture("one\n", 0..3),
            whole_lines: true,
            anchored_against: "h".into(),
            checked_against: "h".into(),
            span: feedback::Span::default(),
            state: feedback::ThreadState::Anchored,
            original_quote: "one".into(),
            comments: vec![comment("ana", "Why?")],
            created_at: "t".into(),
            updated_at: "t".into(),
            resolved: false,
            finding: None,
            standing: feedback::Standing::default(),
        }
    }

    fn comment(author: &str, body: &str) -> Comment {
        Comment { id: feedback::new_id(), body: body.into(), author: author.into(), created_at: "t".into() }
    }

    /// A person's new word in a thread asked of an agent (or opened by one)
    /// waits for that agent; receipts only move on; a resend readdresses
    /// the message still unanswered; reopening keeps the receipts.
    #[test]
    fn a_persons_messages_to_an_agent_wait_move_on_and_can_be_sent_to_another() {
        let waiting = |agent: &str, comment: &Comment| feedback::Delivery {
            comment_id: comment.id.clone(),
            agent: agent.into(),
            state: feedback::DeliveryState::Waiting,
            via: None,
            asked_at: "t".into(),
            updated_at: "t".into(),
        };
        let mut asked = thread();
        asked.standing.deliveries.push(waiting("claude-2", &asked.comments[0].clone()));
        assert!(asked.standing.advance("claude-2", feedback::DeliveryState::Delivered, Some("channel"), "t1"));
        assert!(!asked.standing.advance("claude-2", feedback::DeliveryState::Delivered, Some("hook"), "t2"));
        assert!(asked.standing.advance("claude-2", feedback::DeliveryState::Read, Some("feedback"), "t3"));
        let first = &asked.standing.deliveries[0];
        assert_eq!((first.state, first.via.as_deref()), (feedback::DeliveryState::Read, Some("channel")));

        let again = comment("ana", "And the test?");
        apply_edit(&mut asked, &ThreadEdit::Reply(again.clone()), "t4").expect("reply");
        assert_eq!(asked.standing.deliveries.len(), 2);
        assert_eq!(
            asked.standing.deliveries[1],
            feedback::Delivery { asked_at: "t4".into(), updated_at: "t4".into(), ..waiting("claude-2", &again) }
        );

        apply_edit(&mut asked, &ThreadEdit::Resend { agent: "codex-1".into() }, "t5").expect("resend");
        assert_eq!(asked.standing.deliveries[1].agent, "codex-1", "the newest unanswered message");
        assert_eq!(asked.standing.deliveries[0].agent, "claude-2", "the read one stays");

        let mut opened = thread();
        opened.standing.opened_by = Some("claude-1".into());
        apply_edit(&mut opened, &ThreadEdit::Reply(comment("ana", "Yes")), "t6").expect("reply");
        assert_eq!(opened.standing.deliveries[0].agent, "claude-1");
        apply_edit(&mut opened, &ThreadEdit::Resolve, "t7").expect("resolve");
        apply_edit(&mut opened, &ThreadEdit::Reopen, "t8").expect("reopen");
        assert_eq!((opened.standing.deliveries.len(), opened.standing.opened_by.as_deref()), (1, Some("claude-1")));

        let mut plain = thread();
        apply_edit(&mut plain, &ThreadEdit::Reply(comment("ana", "Hm")), "t9").expect("reply");
        assert!(plain.standing.deliveries.is_empty(), "nobody was asked");
        let refused = apply_edit(&mut plain, &ThreadEdit::Resend { agent: "codex-1".into() }, "t10");
        assert!(matches!(refused, Err(ThreadError::Invalid(message)) if message.contains("no unanswered message")));
    }

    /// Compacting rewrites every thread in memory: each must come back as
    /// it was, in its file, counted as before.
    #[tokio::test]
    async fn compacting_gives_back_every_thread_as_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let threads: Vec<Thread> = (0..COMPACT_FROM_THREADS)
            .map(|n| {
                let mut t = thread();
                t.path = format!("src/f{}.rs", n % 7);
                t.span.start_line = n as u32;
                t.resolved = n % 5 == 0;
                if n % 3 == 0 {
                    t.state = feedback::ThreadState::Modified(0.73);
                    t.standing.see(t.resolved, "claude", "t1");
                    t.comments.push(comment("claude", &format!("Reply {n} with \"quotes\"\nand a newline")));
                }
                if n % 11 == 0 {
                    t.finding = Some(Box::new(feedback::Finding {
                        review_id: "r1".into(),
                        round: 2,
                        severity: "major".into(),
                        category: "bug".into(),
                        suggested_fix: Some("fix".into()),
                    }));
                }
                t
            })
            .collect();
        let ids: Vec<String> = threads.iter().map(|t| t.id.clone()).collect();
        let (handle, _task) = crate::state::spawn(store, Vec::new(), threads, Vec::new(), Vec::new());
        let held = async || {
            let mut all = Vec::new();
            for id in &ids {
                all.push(handle.thread(id.clone()).await.expect("state").expect("held"));
            }
            all
        };
        let (before, summary) = (held().await, handle.summary("/ws".into()).await.expect("summary"));
        assert_eq!(handle.compact_threads().await, 1);
        assert_eq!(held().await, before);
        assert_eq!(handle.summary("/ws".into()).await.expect("summary"), summary);
        let file = handle.threads_of_file("/ws/src/f3.rs".into()).await.expect("state");
        assert_eq!(file.len(), before.iter().filter(|t| t.path == "src/f3.rs").count());
    }

    /// Many threads changed at once (here an import) are compacted once the
    /// changes stop, not while they go on; what was held and what came in
    /// is all there after.
    #[tokio::test]
    async fn many_changed_threads_are_compacted_once_the_changes_stop() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let held: Vec<Thread> = (0..COMPACT_FROM_THREADS).map(|_| thread()).collect();
        store.write(held.iter().map(|t| Write::Thread(Box::new(t.clone()))).collect(), true).await.expect("write");
        let (handle, _task) = crate::state::spawn(store, Vec::new(), held, Vec::new(), Vec::new());
        let imported: Vec<Thread> = (0..COMPACT_AFTER_CHANGES)
            .map(|n| {
                let mut t = thread();
                t.path = format!("src/f{}.rs", n % 7);
                t
            })
            .collect();
        let export = crate::store::Export::new(Vec::new(), imported.iter().map(Into::into).collect());
        handle.import(export).await.expect("import");
        assert_eq!(handle.compactions().await, 0, "not while changes may still come");
        let waited = std::time::Instant::now();
        while handle.compactions().await == 0 {
            assert!(
                waited.elapsed() < COMPACT_WHEN_QUIET * 5,
                "the threads were not compacted once the import was over"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let summary = handle.summary("/ws".into()).await.expect("summary");
        assert_eq!(summary.total_threads, COMPACT_FROM_THREADS + COMPACT_AFTER_CHANGES);
        for t in imported.iter().step_by(97) {
            let back = handle.thread(t.id.clone()).await.expect("state").expect("held");
            assert_eq!((back.path.as_str(), &back.comments), (t.path.as_str(), &t.comments));
        }
        tokio::time::sleep(COMPACT_WHEN_QUIET * 2).await;
        assert_eq!(handle.compactions().await, 1, "one compaction answers every change before it");
    }

    #[test]
    fn agents_address_threads_and_people_open_them_again() {
        let mut t = thread();
        assert!(t.standing.see(t.resolved, "claude", "t1"));
        apply_edit(&mut t, &ThreadEdit::AgentReply(comment("claude", "Done")), "t2").expect("reply");
        assert_eq!(t.standing.name(t.resolved), "addressed");
        assert_eq!(t.standing.addressed.as_ref().map(|m| (m.by.as_str(), m.at.as_str())), Some(("claude", "t2")));
        apply_edit(&mut t, &ThreadEdit::Reply(comment("ana", "And the tests?")), "t3").expect("reply");
        assert_eq!(t.standing.name(t.resolved), "open", "a person's reply is for the agents to read");

        let note = comment("claude", "Added them");
        let resolve = ThreadEdit::AgentResolve { agent: "claude".into(), note: Some(note.clone()) };
        assert_eq!(apply_edit(&mut t, &resolve, "t4"), Ok("resolved"));
        assert_eq!(t.comments.last(), Some(&note), "the note is the last comment");
        assert_eq!((t.standing.name(t.resolved), t.standing.resolver(t.resolved)), ("resolved", Some("agent")));
        assert_eq!(apply_edit(&mut t, &resolve, "t5"), Err(ThreadError::AlreadyResolved));
        assert_eq!(t.comments.last(), Some(&note), "a refused resolve adds no note");

        apply_edit(&mut t, &ThreadEdit::Reopen, "t6").expect("reopen");
        assert_eq!((t.standing.name(t.resolved), t.standing.resolver(t.resolved)), ("open", None));
        apply_edit(&mut t, &ThreadEdit::Resolve, "t7").expect("resolve");
        assert_eq!(t.standing.resolver(t.resolved), Some("human"));
    }

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
