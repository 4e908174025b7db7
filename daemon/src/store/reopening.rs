//! Opening the store's sled handle again: after a failed write (sled
//! refuses every write after one, until it is opened again), and to let go
//! of the memory sled keeps of every record read or written.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{Store, StoreError, open_trees};

/// How many times, and how far apart, [`Store::release_memory`] tries.
const RELEASE_TRIES: u32 = 50;
const RELEASE_RETRY: std::time::Duration = std::time::Duration::from_millis(100);

/// How many records written make the store reopen once the writes stop,
/// and for how long they must stop (see [`Store::write`]).
pub const RELEASE_AFTER_WRITES: usize = 10_000;
pub const RELEASE_WHEN_QUIET: std::time::Duration = std::time::Duration::from_secs(2);

impl Store {
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
    pub(super) async fn repair(&self) -> Result<(), StoreError> {
        if !self.is_broken() {
            return Ok(());
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.reopen())
            .await
            .map_err(|e| StoreError::Io { context: "reopening the store".into(), source: std::io::Error::other(e) })?
    }

    /// Waits until nothing was written for [`RELEASE_WHEN_QUIET`], then
    /// reopens the store to let go of what sled keeps of the writes.
    pub(super) async fn release_when_quiet(&self) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feedback::Thread;
    use crate::store::Write;
    use crate::store::records::tests::{review, thread};

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
}
