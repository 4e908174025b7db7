//! What the store holds, record by record: reviews (with the last
//! revisions of each), threads (with the context of their anchors), review
//! sessions and snapshots of the texts threads were anchored against, each
//! written in its versioned shape (`records/versioned.rs`).

mod versioned;

use std::path::{Path, PathBuf};

pub use versioned::Export;
pub(super) use versioned::{ReviewRecord, SessionRecord, ThreadRecord, WalkthroughRecord};

use super::{Store, StoreError};
use crate::feedback::Thread;
use crate::github::linked::{LinkedPullRequest, LinkedRecord};
use crate::reviews::{KEPT_REVISIONS, Review};
use crate::sessions::Session;
use crate::walkthrough::Walkthrough;

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
    /// A walkthrough's current revision, kept as a revision too.
    Walkthrough(Box<Walkthrough>),
    /// A walkthrough and its revisions gone (a failed first write undone).
    RemoveWalkthrough(String),
    /// The short name an agent was given, under the key that finds it
    /// again after a restart; `None` forgets it.
    AgentName {
        key: String,
        name: Option<String>,
    },
}

impl Write {
    /// How many records it writes.
    pub(super) fn records(&self) -> usize {
        match self {
            Write::Import(export) => {
                export.reviews.len() + export.threads.len() + export.sessions.len() + export.walkthroughs.len()
            }
            _ => 1,
        }
    }
}

impl Store {
    /// Every workspace's link to its pull request (a record that cannot be
    /// read is skipped, with a warning: the workspace can be linked again).
    pub fn linked_pull_requests(&self) -> Result<Vec<LinkedPullRequest>, StoreError> {
        let trees = self.trees()?;
        let mut found = Vec::new();
        for entry in trees.pull_requests.iter() {
            let (_, bytes) = entry.map_err(|e| StoreError::from_sled(self.path(), e))?;
            match serde_json::from_slice::<LinkedRecord>(&bytes) {
                Ok(LinkedRecord::V1(linked)) => found.push(linked),
                Err(e) => tracing::warn!("a pull-request link in the store cannot be read ({e}); link it again"),
            }
        }
        Ok(found)
    }

    /// Writes a workspace's link, replacing any it had, and makes it durable.
    pub async fn put_linked_pull_request(&self, linked: &LinkedPullRequest) -> Result<(), StoreError> {
        {
            let trees = self.trees()?;
            let bytes = serde_json::to_vec(&LinkedRecord::V1(linked.clone()))?;
            let key = linked.workspace.as_os_str().as_encoded_bytes();
            trees.pull_requests.insert(key, bytes).map_err(|e| self.failed(e))?;
        }
        self.flush().await
    }

    /// The short names agents were given, by key (a name that is not UTF-8
    /// is skipped: the agent gets a new one).
    pub fn agent_names(&self) -> Result<Vec<(String, String)>, StoreError> {
        let trees = self.trees()?;
        let mut names = Vec::new();
        for entry in trees.agent_names.iter() {
            let (key, name) = entry.map_err(|e| StoreError::from_sled(self.path(), e))?;
            if let (Ok(key), Ok(name)) = (std::str::from_utf8(&key), std::str::from_utf8(&name)) {
                names.push((key.to_owned(), name.to_owned()));
            }
        }
        Ok(names)
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
    pub(super) fn each_thread(&self, mut visit: impl FnMut(ThreadRecord)) -> Result<(), StoreError> {
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

    /// Every stored walkthrough (its current revision).
    pub fn walkthroughs(&self) -> Result<Vec<Walkthrough>, StoreError> {
        let trees = self.trees()?;
        trees
            .walkthroughs
            .iter()
            .map(|entry| {
                let WalkthroughRecord::V1(walkthrough) = serde_json::from_slice(&entry?.1)?;
                Ok(walkthrough)
            })
            .collect()
    }

    /// Writes a walkthrough as its id's current one and as a kept revision;
    /// durable after the next [`Store::flush`]. Revisions older than the
    /// last [`KEPT_REVISIONS`] are dropped.
    pub fn put_walkthrough(&self, walkthrough: &Walkthrough) -> Result<(), StoreError> {
        let trees = self.trees()?;
        let bytes = serde_json::to_vec(&WalkthroughRecord::V1(walkthrough.clone()))?;
        trees.walkthroughs.insert(walkthrough.id.as_bytes(), bytes.clone()).map_err(|e| self.failed(e))?;
        let revisions = &trees.walkthrough_revisions;
        let key = |revision| walkthrough_revision_key(&walkthrough.id, revision);
        revisions.insert(key(walkthrough.revision), bytes).map_err(|e| self.failed(e))?;
        let oldest_kept = walkthrough.revision.saturating_sub(KEPT_REVISIONS - 1);
        let dropped = revisions.range(key(0)..key(oldest_kept)).keys().collect::<Result<Vec<_>, _>>();
        for old in dropped.map_err(|e| self.failed(e))? {
            revisions.remove(old).map_err(|e| self.failed(e))?;
        }
        Ok(())
    }

    /// The kept revisions of walkthrough `id`, oldest first.
    pub fn walkthrough_revisions(&self, id: &str) -> Result<Vec<Walkthrough>, StoreError> {
        let trees = self.trees()?;
        let range = walkthrough_revision_key(id, 0)..=walkthrough_revision_key(id, u64::MAX);
        trees
            .walkthrough_revisions
            .range(range)
            .map(|entry| {
                let WalkthroughRecord::V1(walkthrough) = serde_json::from_slice(&entry?.1)?;
                Ok(walkthrough)
            })
            .collect()
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
    pub(super) fn apply(&self, write: Write) -> Result<(), StoreError> {
        let trees = self.trees()?;
        let removed = match write {
            Write::Review(review) => return self.put_review(&review),
            Write::Thread(thread) => return self.put_thread(&thread),
            Write::Session(session) => return self.put_session(&session),
            Write::Walkthrough(walkthrough) => return self.put_walkthrough(&walkthrough),
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
            Write::RemoveWalkthrough(id) => {
                let range = walkthrough_revision_key(&id, 0)..=walkthrough_revision_key(&id, u64::MAX);
                let kept = trees.walkthrough_revisions.range(range).keys().collect::<Result<Vec<_>, _>>();
                for key in kept.map_err(|e| self.failed(e))? {
                    trees.walkthrough_revisions.remove(key).map_err(|e| self.failed(e))?;
                }
                trees.walkthroughs.remove(id.as_bytes())
            }
            Write::AgentName { key, name: Some(name) } => {
                trees.agent_names.insert(key.as_bytes(), name.as_bytes()).map_err(|e| self.failed(e))?;
                return Ok(());
            }
            Write::AgentName { key, name: None } => trees.agent_names.remove(key.as_bytes()),
        };
        removed.map_err(|e| self.failed(e))?;
        Ok(())
    }
}

/// A walkthrough revision's key: the id, a NUL and the revision in
/// big-endian, so keys sort by revision.
fn walkthrough_revision_key(id: &str, revision: u64) -> Vec<u8> {
    let mut key = id.as_bytes().to_vec();
    key.push(0);
    key.extend_from_slice(&revision.to_be_bytes());
    key
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::feedback::{Comment, Span, ThreadState};

    /// A review, for the store's tests.
    pub(in crate::store) fn review() -> Review {
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

    /// A thread, for the store's tests.
    pub(in crate::store) fn thread() -> Thread {
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
}
