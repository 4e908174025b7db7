//! Orderly shutdown: one token that stops accepting, a second that closes
//! connections once in-flight calls have had their chance to finish.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Shared by every task that must stop when the daemon stops.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    /// Cancelled by a signal or `daemon/shutdown`: stop accepting.
    pub stop: CancellationToken,
    /// Cancelled once in-flight calls are done (or waited for long enough):
    /// every connection closes.
    pub close: CancellationToken,
    busy: Arc<Busy>,
    /// Why the daemon stops, told to every client before it closes.
    reason: Arc<Mutex<Option<String>>>,
}

#[derive(Debug, Default)]
struct Busy {
    calls: AtomicUsize,
    idle: Notify,
}

/// Marks one call in flight until dropped.
#[derive(Debug)]
pub struct CallGuard(Arc<Busy>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        if self.0.calls.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Shutdown {
    /// Stops the daemon for `reason` (`requested`, `signal`, `handover`):
    /// stop accepting; clients are told why before their connections close.
    pub fn request_stop(&self, reason: &str) {
        if let Ok(mut slot) = self.reason.lock()
            && slot.is_none()
        {
            *slot = Some(reason.to_owned());
        }
        self.stop.cancel();
    }

    /// Why the daemon is stopping (`requested` when no reason was given).
    pub fn reason(&self) -> String {
        self.reason.lock().ok().and_then(|r| r.clone()).unwrap_or_else(|| "requested".into())
    }

    /// Counts a call as in flight for the guard's lifetime.
    pub fn call(&self) -> CallGuard {
        self.busy.calls.fetch_add(1, Ordering::AcqRel);
        CallGuard(self.busy.clone())
    }

    /// Waits until no call is in flight, or `limit` has passed; returns how
    /// many calls were still running.
    pub async fn wait_idle(&self, limit: Duration) -> usize {
        let wait = async {
            loop {
                let idle = self.busy.idle.notified();
                if self.busy.calls.load(Ordering::Acquire) == 0 {
                    return;
                }
                idle.await;
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
        self.busy.calls.load(Ordering::Acquire)
    }
}
