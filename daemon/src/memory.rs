//! How the daemon gives memory it freed back to the system. With 100,000
//! threads a burst of work (an import, a workspace re-anchored, an agent
//! reading every file's feedback) frees tens of MiB; mimalloc, left to its
//! defaults, keeps much of it, spread over every thread that took part, long
//! after the daemon has gone idle.

use std::cell::Cell;
use std::time::{Duration, Instant};

use libmimalloc_sys::mi_option_t;

/// mimalloc's `purge_delay` option: its place in `mi_option_t`, the same in
/// mimalloc 2 and 3 (the crate does not name it).
const PURGE_DELAY: mi_option_t = 15;

/// How long a blocking-pool thread (store reads and writes, file hashing)
/// waits for more work before it exits. An exiting thread hands mimalloc
/// back its pages; an idle one keeps them. tokio's default is 10 s.
pub const BLOCKING_THREAD_KEEP_ALIVE: Duration = Duration::from_secs(1);

/// How often at most a worker thread tidies its pages as it goes idle.
const COLLECT_AT_MOST_EVERY: Duration = Duration::from_millis(10);

/// Has mimalloc give a page back to the system as soon as it is empty,
/// rather than a second later: an idle daemon allocates nothing, and a page
/// waiting for that second stays resident until the next burst of work.
/// A user's own `MIMALLOC_PURGE_DELAY` is kept. Called once, before the
/// runtime starts its threads.
pub fn configure_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: no pointer is passed; setting an option is a plain store,
    // made here before any other thread runs.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

/// The allocator's purge delay in milliseconds, as it is set now.
pub fn purge_delay_ms() -> std::ffi::c_long {
    // SAFETY: reads an option; no pointer is passed.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_get(PURGE_DELAY)
    }
}

/// Called by each runtime worker as it goes idle: hands the pages this
/// thread emptied back (mimalloc frees a thread's empty pages only when
/// that thread allocates or collects again, and an idle worker does
/// neither). Cheap, and done at most every 10 ms on a busy worker.
pub fn collect_on_idle() {
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let now = Instant::now();
    if LAST.get().is_some_and(|last| now.duration_since(last) < COLLECT_AT_MOST_EVERY) {
        return;
    }
    LAST.set(Some(now));
    // SAFETY: `mi_collect` takes no pointer and touches only this thread's
    // pages and the allocator's shared bookkeeping, which it guards.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_collect(false);
    }
}

/// Has the allocator give the system back the memory freed so far. mimalloc
/// keeps freed pages for a while to reuse them, and what sled lets go of on a
/// reopen (or the load's copies, once indexed) is 50 to 100 MiB that the
/// daemon does not need again soon: without this, freeing it does not lower
/// the daemon's resident memory. It costs a walk of the allocator's pages
/// (milliseconds), so it is called only after such a release.
pub fn return_freed_memory() {
    // SAFETY: `mi_collect` takes no pointer and touches only the allocator's
    // own bookkeeping; it is safe to call from any thread at any time, and
    // harmless when mimalloc is not the global allocator (tests).
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}
