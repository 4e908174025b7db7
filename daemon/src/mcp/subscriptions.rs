//! Telling an agent that a resource it subscribed to has changed, so a host
//! hears of a human's comment without polling. Both eras feed on the state
//! owner's changes: the legacy `resources/subscribe` (a set of URIs per
//! connection, one notifier task) and the 2026-07-28 `subscriptions/listen`
//! (one stream per request). Only changes inside the agent's workspace
//! count, and a burst (a round's findings becoming threads) is told once per
//! resource.
//!
//! The set of resources never changes (the review and the threads of the
//! agent's workspace), so there is no `resources/list_changed` to send.

use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};

use crate::state::{Changed, ChangedWhat};
use crate::workspace;

pub const REVIEW_RESOURCE: &str = "parley://review";
pub const FEEDBACK_RESOURCE: &str = "parley://feedback";
/// Every resource Parley offers.
pub const RESOURCES: [&str; 2] = [REVIEW_RESOURCE, FEEDBACK_RESOURCE];

/// How long changes that follow the first are gathered before the agent is
/// told: a burst of changes (a round's findings, a batch of replies) becomes
/// one notification per resource rather than one per change.
const GATHER: Duration = Duration::from_millis(50);

/// The resource named `uri`, if Parley offers it.
pub fn resource(uri: &str) -> Option<&'static str> {
    RESOURCES.into_iter().find(|r| *r == uri)
}

/// The resource a change touches for an agent working in `workspace`.
/// Threads moving with edits are not told: the agent that edits the file
/// moves them, and every read re-anchors them anyway. Nor is an agent's read
/// marking threads seen: nothing in them changed, and telling would have
/// agents reading again because another one read.
pub fn touched(change: &Changed, workspace: &Path) -> Option<&'static str> {
    if !workspace::holds(workspace, &change.path) {
        return None;
    }
    match change.what {
        ChangedWhat::Review => Some(REVIEW_RESOURCE),
        ChangedWhat::Thread("moved" | "seen" | "delivery") => None,
        ChangedWhat::Thread(_) => Some(FEEDBACK_RESOURCE),
    }
}

/// Listen streams whose receivers wait to be taken: at most this many (a
/// stream refused after its filter was accepted leaves one behind).
const EARLY_RECEIVERS: usize = 4;

/// The resources one legacy connection subscribed to with
/// `resources/subscribe`, and whether its notifier runs; and for the modern
/// era, receivers made before a listen stream is acknowledged.
#[derive(Debug, Default)]
pub struct Subscriptions {
    uris: Mutex<BTreeSet<&'static str>>,
    notifying: AtomicBool,
    early: Mutex<VecDeque<broadcast::Receiver<Changed>>>,
}

impl Subscriptions {
    /// Adds `uri`; answers true the first time, when the caller must start
    /// the notifier.
    pub fn subscribe(&self, uri: &'static str) -> bool {
        if let Ok(mut uris) = self.uris.lock() {
            uris.insert(uri);
        }
        !self.notifying.swap(true, Ordering::AcqRel)
    }

    pub fn unsubscribe(&self, uri: &'static str) {
        if let Ok(mut uris) = self.uris.lock() {
            uris.remove(uri);
        }
    }

    pub fn current(&self) -> BTreeSet<&'static str> {
        self.uris.lock().map(|uris| uris.clone()).unwrap_or_default()
    }

    /// Keeps a receiver made while a listen stream's filter is accepted,
    /// before rmcp acknowledges the stream, so no change after the
    /// acknowledgement is missed.
    pub fn keep_early(&self, changes: broadcast::Receiver<Changed>) {
        if let Ok(mut early) = self.early.lock() {
            if early.len() == EARLY_RECEIVERS {
                early.pop_front();
            }
            early.push_back(changes);
        }
    }

    /// The oldest receiver kept, which was made before this stream's
    /// acknowledgement (streams are accepted, then listened to, in turn).
    pub fn take_early(&self) -> Option<broadcast::Receiver<Changed>> {
        self.early.lock().ok().and_then(|mut early| early.pop_front())
    }
}

/// Tells the agent of every change to a resource it wants, until `send`
/// fails (the connection is gone) or `changes` closes. `wanted` answers, at
/// each change, the agent's workspace and the resources it wants: both may
/// change while the connection lasts. A receiver that lagged has missed
/// changes it cannot name, so everything wanted is told.
pub async fn forward<W, S, F>(mut changes: broadcast::Receiver<Changed>, wanted: W, mut send: S)
where
    W: Fn() -> (Option<PathBuf>, BTreeSet<&'static str>),
    S: FnMut(&'static str) -> F,
    F: Future<Output = bool>,
{
    let gather = |told: &mut BTreeSet<&'static str>, received: Result<Changed, RecvError>| -> bool {
        let (workspace, wanted) = wanted();
        match received {
            Ok(change) => {
                if let Some(uri) = workspace.and_then(|w| touched(&change, &w)).filter(|uri| wanted.contains(uri)) {
                    told.insert(uri);
                }
                true
            }
            Err(RecvError::Lagged(_)) => {
                told.extend(wanted);
                true
            }
            Err(RecvError::Closed) => false,
        }
    };
    loop {
        let mut told = BTreeSet::new();
        if !gather(&mut told, changes.recv().await) {
            return;
        }
        if told.is_empty() {
            continue;
        }
        let until = tokio::time::Instant::now() + GATHER;
        while let Ok(received) = tokio::time::timeout_at(until, changes.recv()).await {
            if !gather(&mut told, received) {
                break;
            }
        }
        for uri in told {
            if !send(uri).await {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn change(path: &str, what: ChangedWhat) -> Changed {
        Changed { path: PathBuf::from(path), what }
    }

    #[test]
    fn changes_touch_the_resource_of_their_kind_inside_the_workspace() {
        let ws = Path::new("/w/app");
        let cases = [
            (change("/w/app", ChangedWhat::Review), Some(REVIEW_RESOURCE)),
            (change("/w/app/sub", ChangedWhat::Review), Some(REVIEW_RESOURCE)),
            (change("/w/other", ChangedWhat::Review), None),
            (change("/w/app-2/a.rs", ChangedWhat::Thread("created")), None),
            (change("/w/app/a.rs", ChangedWhat::Thread("created")), Some(FEEDBACK_RESOURCE)),
            (change("/w/app/a.rs", ChangedWhat::Thread("replied")), Some(FEEDBACK_RESOURCE)),
            (change("/w/app/a.rs", ChangedWhat::Thread("resolved")), Some(FEEDBACK_RESOURCE)),
            (change("/w/app/a.rs", ChangedWhat::Thread("moved")), None),
        ];
        for (change, expected) in cases {
            assert_eq!(touched(&change, ws), expected, "{change:?}");
        }
    }

    #[test]
    fn early_receivers_are_taken_oldest_first_and_bounded() {
        let (tx, _) = broadcast::channel(4);
        let subscriptions = Subscriptions::default();
        for n in 0..=EARLY_RECEIVERS {
            subscriptions.keep_early(tx.subscribe());
            tx.send(change(&format!("/w/app/{n}.rs"), ChangedWhat::Thread("created"))).expect("receivers exist");
        }
        // The first receiver was dropped to keep the bound; the second saw every change but the first.
        let mut oldest = subscriptions.take_early().expect("a receiver was kept");
        assert_eq!(oldest.try_recv().expect("a change").path, PathBuf::from("/w/app/1.rs"));
        let kept = std::iter::from_fn(|| subscriptions.take_early()).count();
        assert_eq!(kept, EARLY_RECEIVERS - 1);
    }

    #[test]
    fn the_notifier_starts_once() {
        let subscriptions = Subscriptions::default();
        assert!(subscriptions.subscribe(FEEDBACK_RESOURCE));
        assert!(!subscriptions.subscribe(REVIEW_RESOURCE));
        subscriptions.unsubscribe(REVIEW_RESOURCE);
        assert_eq!(subscriptions.current(), BTreeSet::from([FEEDBACK_RESOURCE]));
    }

    /// Runs `forward` for an agent in /w/app wanting `wanted`, sends
    /// `changes`, closes the channel and answers what the agent was told.
    async fn told(wanted: &[&'static str], changes: Vec<Changed>, capacity: usize) -> Vec<&'static str> {
        let (tx, rx) = broadcast::channel(capacity);
        for change in changes {
            tx.send(change).expect("a receiver exists");
        }
        drop(tx);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let wanted: BTreeSet<&'static str> = wanted.iter().copied().collect();
        let record = sent.clone();
        forward(
            rx,
            move || (Some(PathBuf::from("/w/app")), wanted.clone()),
            move |uri| {
                record.lock().expect("not poisoned").push(uri);
                std::future::ready(true)
            },
        )
        .await;
        sent.lock().expect("not poisoned").clone()
    }

    #[tokio::test]
    async fn a_burst_is_told_once_per_wanted_resource() {
        let burst = vec![
            change("/w/app/a.rs", ChangedWhat::Thread("created")),
            change("/w/app/b.rs", ChangedWhat::Thread("created")),
            change("/w/app", ChangedWhat::Review),
            change("/w/app/a.rs", ChangedWhat::Thread("replied")),
        ];
        assert_eq!(told(&RESOURCES, burst.clone(), 16).await, vec![FEEDBACK_RESOURCE, REVIEW_RESOURCE]);
        assert_eq!(told(&[FEEDBACK_RESOURCE], burst.clone(), 16).await, vec![FEEDBACK_RESOURCE]);
        assert_eq!(told(&[], burst, 16).await, Vec::<&str>::new());
    }

    #[tokio::test]
    async fn changes_elsewhere_and_moves_are_not_told() {
        let quiet = vec![
            change("/w/other/a.rs", ChangedWhat::Thread("created")),
            change("/w/app/a.rs", ChangedWhat::Thread("moved")),
        ];
        assert_eq!(told(&RESOURCES, quiet, 16).await, Vec::<&str>::new());
    }

    #[tokio::test]
    async fn a_lagging_listener_is_told_everything_it_wants() {
        // Three changes into a channel of two: the first is lost, and the
        // receiver cannot know which resource it touched.
        let changes = vec![
            change("/w/app", ChangedWhat::Review),
            change("/w/other/a.rs", ChangedWhat::Thread("created")),
            change("/w/other/b.rs", ChangedWhat::Thread("created")),
        ];
        assert_eq!(told(&RESOURCES, changes, 2).await, vec![FEEDBACK_RESOURCE, REVIEW_RESOURCE]);
    }
}
