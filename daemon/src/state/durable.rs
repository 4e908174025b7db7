//! Writes the state owner holds back until the store has made them durable.
//!
//! A command that changes a review, a thread or a session is checked against
//! the newest version of what it changes (stored or still waiting), handed to
//! the store, and made visible (kept in memory, published, answered) only
//! once the store has flushed it. Writes are sent in batches, one batch at a
//! time, so one flush covers every write that arrived meanwhile. When a batch
//! fails (a full or read-only disk), it and every write waiting behind it
//! (each was checked against the failed ones) are answered with the error and
//! never seen; the records they touched are written back as memory has them
//! with the next batch, so a write that reached the disk in part does not
//! come back at the next start.
//!
//! Re-anchoring's positions are derived data: they are visible at once and
//! written without waiting, in the same order as everything else.

use std::collections::BTreeSet;
use std::path::PathBuf;

use tokio::sync::oneshot;

use super::{CommitError, Committed, Imported, Payload, State, ThreadEdit};
use crate::feedback::{FeedbackError as ThreadError, Thread};
use crate::reviews::Review;
use crate::sessions::{Session, SessionError};
use crate::store::Write;
use crate::views;
use crate::walkthrough::Walkthrough;

/// What a record is stored under.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Key {
    Review(PathBuf),
    Thread(String),
    Session(String),
    Walkthrough(String),
}

fn key_of(write: &Write) -> Option<Key> {
    match write {
        Write::Review(review) => Some(Key::Review(review.base.clone())),
        Write::RemoveReview(base) => Some(Key::Review(base.clone())),
        Write::Thread(thread) => Some(Key::Thread(thread.id.clone())),
        Write::RemoveThread(id) => Some(Key::Thread(id.clone())),
        Write::Session(session) => Some(Key::Session(session.id.clone())),
        Write::RemoveSession(id) => Some(Key::Session(id.clone())),
        Write::Walkthrough(walkthrough) => Some(Key::Walkthrough(walkthrough.id.clone())),
        Write::RemoveWalkthrough(id) => Some(Key::Walkthrough(id.clone())),
        Write::RemoveSnapshot(_) | Write::Import(_) | Write::AgentName { .. } => None,
    }
}

/// What becomes visible once a write is durable, and who waits for it.
#[derive(Debug)]
pub(super) enum Effect {
    /// Derived data, already visible; nobody waits.
    Derived,
    CreateThread {
        thread: Box<Thread>,
        reply: oneshot::Sender<Result<Thread, ThreadError>>,
    },
    EditThread {
        id: String,
        edit: ThreadEdit,
        at: String,
        reply: oneshot::Sender<Result<Thread, ThreadError>>,
    },
    Commit {
        review: Box<Review>,
        reply: oneshot::Sender<Result<Committed, CommitError>>,
    },
    Session {
        session: Box<Session>,
        reply: oneshot::Sender<Result<Session, SessionError>>,
    },
    DiscardSession {
        id: String,
    },
    Walkthrough {
        walkthrough: Box<Walkthrough>,
        reply: oneshot::Sender<Result<Walkthrough, CommitError>>,
    },
    Click {
        walkthrough: Box<Walkthrough>,
        reply: oneshot::Sender<Result<Walkthrough, super::ClickRefused>>,
    },
    /// A click sent on to another agent: answered with the click's id.
    Resent {
        walkthrough: Box<Walkthrough>,
        click_id: String,
        reply: oneshot::Sender<Result<(Walkthrough, String), super::ClickRefused>>,
    },
    Import {
        reviews: usize,
        /// The ids of the threads imported.
        threads: Vec<String>,
        walkthroughs: usize,
        reply: oneshot::Sender<Result<Imported, String>>,
    },
}

/// A write waiting for its batch.
#[derive(Debug)]
pub(super) struct Staged {
    write: Write,
    effect: Effect,
}

/// A write in the batch the store is writing now.
#[derive(Debug)]
pub(super) struct InFlight {
    key: Option<Key>,
    effect: Effect,
}

impl State {
    /// Queues a write; it is sent with the next batch.
    pub(super) fn stage(&mut self, write: Write, effect: Effect) {
        match &write {
            Write::Thread(_) | Write::RemoveThread(_) => self.note_thread_changes(1),
            Write::Import(export) => self.note_thread_changes(export.threads.len()),
            _ => {}
        }
        self.queue.push_back(Staged { write, effect });
    }

    /// Sends the waiting writes to the store as one batch, unless a batch is
    /// being written already (its outcome comes back through [`State::written`]).
    pub(super) fn dispatch(&mut self) {
        if self.in_flight.is_some() || self.queue.is_empty() {
            return;
        }
        let mut writes = Vec::new();
        let mut batch = Vec::new();
        for key in std::mem::take(&mut self.restore) {
            writes.push(self.committed_write(&key));
            batch.push(InFlight { key: Some(key), effect: Effect::Derived });
        }
        let durable = !writes.is_empty() || self.queue.iter().any(|s| !matches!(s.effect, Effect::Derived));
        // Taken, not drained: a burst (a workspace re-anchored) would leave
        // the queue holding room for 100,000 writes.
        for Staged { write, effect } in std::mem::take(&mut self.queue) {
            batch.push(InFlight { key: key_of(&write), effect });
            writes.push(write);
        }
        self.in_flight = Some(batch);
        let answer = Answer { store: self.store.clone(), written: Some(self.written.clone()) };
        tokio::spawn(async move {
            let outcome = answer.store.write(writes, durable).await.map_err(|e| e.to_string());
            answer.send(outcome);
        });
    }

    /// The store finished the batch in flight.
    pub(super) fn written(&mut self, outcome: Result<(), String>) {
        let batch = self.in_flight.take().unwrap_or_default();
        if self.changed_since_compaction > 0 {
            // Quiet is counted from when the store is done with the changes.
            self.last_change = std::time::Instant::now();
        }
        match outcome {
            Ok(()) => {
                for item in batch {
                    self.settle(item.effect);
                }
                // What is still waiting keeps its newest versions; the rest
                // is now what memory holds.
                let waiting: BTreeSet<Key> = self.queue.iter().filter_map(|s| key_of(&s.write)).collect();
                self.staged_threads.retain(|id, _| waiting.contains(&Key::Thread(id.clone())));
                self.staged_reviews.retain(|base, _| waiting.contains(&Key::Review(base.clone())));
                self.staged_sessions.retain(|id, _| waiting.contains(&Key::Session(id.clone())));
                self.staged_walkthroughs.retain(|id, _| waiting.contains(&Key::Walkthrough(id.clone())));
                // Nor do the maps keep the room a burst of writes made.
                if self.staged_threads.capacity() > 4 * self.staged_threads.len().max(64) {
                    self.staged_threads.shrink_to_fit();
                }
                if self.staged_reviews.capacity() > 4 * self.staged_reviews.len().max(64) {
                    self.staged_reviews.shrink_to_fit();
                }
            }
            Err(error) => {
                let waiting: Vec<InFlight> = self
                    .queue
                    .drain(..)
                    .map(|Staged { write, effect }| InFlight { key: key_of(&write), effect })
                    .collect();
                for item in batch.into_iter().chain(waiting) {
                    if let Some(key) = item.key {
                        self.restore.insert(key);
                    }
                    fail(item.effect, &error);
                }
                self.staged_threads.clear();
                self.staged_reviews.clear();
                self.staged_sessions.clear();
                self.staged_walkthroughs.clear();
            }
        }
    }

    /// The record under `key` as memory holds it, as a write.
    fn committed_write(&self, key: &Key) -> Write {
        match key {
            Key::Review(base) => match self.reviews.get(base) {
                Some(review) => Write::Review(review.clone()),
                None => Write::RemoveReview(base.clone()),
            },
            Key::Thread(id) => match self.thread(id) {
                Some(thread) => Write::Thread(Box::new(thread.clone())),
                None => Write::RemoveThread(id.clone()),
            },
            Key::Session(id) => match self.sessions.get(id) {
                Some(session) => Write::Session(Box::new(session.clone())),
                None => Write::RemoveSession(id.clone()),
            },
            Key::Walkthrough(id) => match self.walkthroughs.get(id) {
                Some(walkthrough) => Write::Walkthrough(Box::new(walkthrough.clone())),
                None => Write::RemoveWalkthrough(id.clone()),
            },
        }
    }

    /// Makes a durable write visible and answers whoever waits for it.
    fn settle(&mut self, effect: Effect) {
        match effect {
            Effect::Derived => {}
            Effect::CreateThread { thread, reply } => {
                let file = views::file_of(&thread);
                self.index_thread((*thread).clone());
                self.recount(&file);
                self.publish(file, Payload::Thread { change: "created", thread: thread.clone() });
                let _ = reply.send(Ok(*thread));
            }
            Effect::EditThread { id, edit, at, reply } => {
                let _ = reply.send(self.apply_stored_edit(&id, &edit, &at));
            }
            Effect::Commit { review, reply } => {
                let delivered_to = self.publish(review.base.clone(), Payload::Review((*review).clone()));
                self.reviews.insert(review.base.clone(), (*review).clone());
                let _ = reply.send(Ok(Committed { review: *review, delivered_to }));
            }
            Effect::Session { session, reply } => {
                self.sessions.insert(session.id.clone(), (*session).clone());
                let _ = reply.send(Ok(*session));
            }
            Effect::DiscardSession { id } => {
                self.sessions.remove(&id);
            }
            Effect::Walkthrough { walkthrough, reply } => {
                self.settle_walkthrough(&walkthrough);
                let _ = reply.send(Ok(*walkthrough));
            }
            Effect::Click { walkthrough, reply } => {
                self.settle_walkthrough(&walkthrough);
                let _ = reply.send(Ok(*walkthrough));
            }
            Effect::Resent { walkthrough, click_id, reply } => {
                self.settle_walkthrough(&walkthrough);
                let _ = reply.send(Ok((*walkthrough, click_id)));
            }
            Effect::Import { reviews, threads, walkthroughs, reply } => {
                let imported = self.reload_imported(&threads);
                let _ =
                    reply.send(imported.map(|files| Imported { reviews, threads: threads.len(), walkthroughs, files }));
            }
        }
    }
}

/// Sends a batch's outcome to the owner once. Dropped unsent (the store
/// panicked while writing), it still answers, so later writes do not wait
/// forever, and has the next write reopen the store.
struct Answer {
    store: crate::store::Store,
    written: Option<tokio::sync::mpsc::Sender<Result<(), String>>>,
}

impl Answer {
    fn send(mut self, outcome: Result<(), String>) {
        if let Some(written) = self.written.take() {
            // One batch is in flight at a time, so there is room; the owner
            // is gone only when the daemon stops.
            let _ = written.try_send(outcome);
        }
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        if let Some(written) = self.written.take() {
            self.store.mark_broken();
            let _ = written.try_send(Err("the store failed while writing; try again".to_owned()));
        }
    }
}

/// Answers a write that did not become durable with why.
fn fail(effect: Effect, error: &str) {
    match effect {
        Effect::Derived => {}
        Effect::CreateThread { reply, .. } | Effect::EditThread { reply, .. } => {
            let _ = reply.send(Err(ThreadError::Store(error.to_owned())));
        }
        Effect::Commit { reply, .. } => {
            let _ = reply.send(Err(CommitError::Store(error.to_owned())));
        }
        Effect::Session { reply, .. } => {
            let _ = reply.send(Err(SessionError::Store(error.to_owned())));
        }
        Effect::DiscardSession { id } => tracing::warn!("cannot remove the empty session {id}: {error}"),
        Effect::Walkthrough { reply, .. } => {
            let _ = reply.send(Err(CommitError::Store(error.to_owned())));
        }
        Effect::Click { reply, .. } => {
            let _ = reply.send(Err(super::ClickRefused::Store(error.to_owned())));
        }
        Effect::Resent { reply, .. } => {
            let _ = reply.send(Err(super::ClickRefused::Store(error.to_owned())));
        }
        Effect::Import { reply, .. } => {
            let _ = reply.send(Err(error.to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::feedback::{Comment, Span, Thread, ThreadState};
    use crate::state::{self, ThreadEdit};
    use crate::store::Store;

    fn thread() -> Thread {
        Thread {
            id: crate::feedback::new_id(),
            workspace: Path::new("/ws").into(),
            path: "a.rs".into(),
            anchor: crate::anchor::capture("one\ntwo\n", 0..3),
            whole_lines: true,
            anchored_against: "h".into(),
            checked_against: "h".into(),
            span: Span { start_line: 0, end_line: 0, ..Span::default() },
            state: ThreadState::Anchored,
            original_quote: "one".into(),
            comments: Vec::new(),
            created_at: "t".into(),
            updated_at: "t".into(),
            resolved: false,
            finding: None,
            standing: crate::feedback::Standing::default(),
        }
    }

    fn comment(body: String) -> Comment {
        Comment { id: crate::feedback::new_id(), body, author: "me".into(), created_at: "t".into() }
    }

    /// Edits racing on one thread each build on the one before, though none
    /// is visible until its batch is flushed: none is lost to another.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn racing_edits_all_land() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let (handle, _task) = state::spawn(store.clone(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let created = handle.create_thread(thread()).await.expect("create");
        let replies: Vec<_> = (0..20)
            .map(|i| {
                let handle = handle.clone();
                let id = created.id.clone();
                tokio::spawn(
                    async move { handle.edit_thread(id, ThreadEdit::Reply(comment(format!("reply {i}")))).await },
                )
            })
            .collect();
        for reply in replies {
            reply.await.expect("task").expect("reply");
        }
        let shown = handle.thread(created.id.clone()).await.expect("state").expect("thread");
        assert_eq!(shown.comments.len(), 20, "no reply was lost to another");
        let mut stored = store.threads().expect("read");
        // Memory holds the anchor's context only in the store: every write
        // from memory kept the one the thread was made with.
        assert_eq!(stored.len(), 1);
        assert!(!created.anchor.prefix().is_empty() || !created.anchor.suffix().is_empty(), "the test has a context");
        assert_eq!(stored[0].anchor.context, created.anchor.context);
        stored[0].anchor.leave_contexts_in_store();
        assert_eq!(stored, vec![shown]);
    }
}
