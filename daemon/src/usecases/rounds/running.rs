//! Rounds running in the background, by review id, so that whoever asks
//! can wait for one: the call that started it, an `await_review` from the
//! same or another agent, or `parley review await`. A round belongs to the
//! daemon, not to the call that started it; only a cancel stops it.
//! Finished rounds stay here for a while, so a late waiter gets the same
//! answer the first one got.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{Outcome, RoundError};

/// How long a finished round's answer is kept for late waiters.
const KEEP_FINISHED: Duration = Duration::from_secs(60 * 60);

/// Where a running round is: the last progress its steps reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Steps done so far, of [`super::STEPS`].
    pub progress: f64,
    pub message: String,
}

/// One round, running or lately finished.
#[derive(Debug)]
pub struct Run {
    pub review_id: String,
    /// The repository the session reviews.
    pub repository: PathBuf,
    pub round: u32,
    /// Whether a person answers it (rather than a reviewer command).
    pub for_person: bool,
    pub started: Instant,
    step: watch::Sender<Step>,
    finished: watch::Sender<Option<Result<Outcome, RoundError>>>,
    /// Stops the round (and kills the reviewer's process group).
    cancel: CancellationToken,
    finished_at: Mutex<Option<Instant>>,
}

impl Run {
    pub fn step(&self) -> Step {
        self.step.borrow().clone()
    }

    /// What the round ended with, once it has.
    pub fn result(&self) -> Option<Result<Outcome, RoundError>> {
        self.finished.borrow().clone()
    }

    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    pub(super) fn report(&self, progress: f64, message: String) {
        self.step.send_replace(Step { progress, message });
    }

    pub(super) fn finish(&self, result: Result<Outcome, RoundError>) {
        *lock(&self.finished_at) = Some(Instant::now());
        self.finished.send_replace(Some(result));
    }

    /// Waits until the round has finished, `limit` has passed, or `stop`
    /// fires, calling `on_step` with each progress report meanwhile. Gives
    /// the round's result when it finished in time.
    pub async fn wait(
        &self,
        limit: Option<Duration>,
        stop: &CancellationToken,
        on_step: &(dyn Fn(&Step) + Send + Sync),
    ) -> Option<Result<Outcome, RoundError>> {
        let mut steps = self.step.subscribe();
        let mut finished = self.finished.subscribe();
        let deadline = limit.map(|limit| tokio::time::Instant::now() + limit);
        on_step(&steps.borrow_and_update().clone());
        loop {
            if let Some(result) = finished.borrow_and_update().clone() {
                return Some(result);
            }
            let timeout = async {
                match deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = finished.changed() => {
                    if changed.is_err() {
                        return self.result();
                    }
                }
                changed = steps.changed() => {
                    if changed.is_ok() {
                        on_step(&steps.borrow_and_update().clone());
                    }
                }
                () = timeout => return self.result(),
                () = stop.cancelled() => return self.result(),
            }
        }
    }
    /// Waits up to `limit` until the round reaches a step `reached` holds
    /// for; false when it finished, or the time passed, first.
    pub async fn reaches(&self, limit: Duration, reached: impl Fn(&Step) -> bool) -> bool {
        let mut steps = self.step.subscribe();
        let mut finished = self.finished.subscribe();
        let deadline = tokio::time::sleep(limit);
        tokio::pin!(deadline);
        loop {
            if finished.borrow_and_update().is_some() {
                return false;
            }
            if reached(&steps.borrow_and_update()) {
                return true;
            }
            tokio::select! {
                changed = finished.changed() => if changed.is_err() { return false },
                changed = steps.changed() => if changed.is_err() { return false },
                () = &mut deadline => return false,
            }
        }
    }
}

/// The rounds the daemon is running, and those finished within the last hour.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    inner: Arc<Mutex<HashMap<String, Arc<Run>>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while these locks are held; a poisoned one still holds
    // consistent data.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Runs {
    /// Registers round `round` of `review_id` (answered by a person when
    /// `for_person`), unless one of that session is still running (its
    /// number is given back then).
    pub(super) fn begin(
        &self,
        review_id: &str,
        repository: &Path,
        round: u32,
        for_person: bool,
        cancel: CancellationToken,
        first: Step,
    ) -> Result<Arc<Run>, u32> {
        let mut runs = lock(&self.inner);
        runs.retain(|_, run| lock(&run.finished_at).is_none_or(|at| at.elapsed() < KEEP_FINISHED));
        if let Some(running) = runs.get(review_id)
            && running.result().is_none()
        {
            return Err(running.round);
        }
        let run = Arc::new(Run {
            review_id: review_id.to_owned(),
            repository: repository.to_owned(),
            round,
            for_person,
            started: Instant::now(),
            step: watch::Sender::new(first),
            finished: watch::Sender::new(None),
            cancel,
            finished_at: Mutex::new(None),
        });
        runs.insert(review_id.to_owned(), run.clone());
        Ok(run)
    }

    /// The session's latest round known here (running or lately finished).
    pub fn get(&self, review_id: &str) -> Option<Arc<Run>> {
        lock(&self.inner).get(review_id).cloned()
    }

    /// Whether a round of this session is running now.
    pub fn is_running(&self, review_id: &str) -> bool {
        self.get(review_id).is_some_and(|run| run.result().is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(message: &str) -> Step {
        Step { progress: 3.0, message: message.into() }
    }

    #[tokio::test]
    async fn a_second_round_of_a_running_session_is_refused_until_the_first_ends() {
        let runs = Runs::default();
        let first = runs
            .begin("2026-11-23-001", Path::new("/r"), 1, false, CancellationToken::new(), step("a"))
            .expect("registered");
        assert_eq!(
            runs.begin("2026-11-23-001", Path::new("/r"), 2, false, CancellationToken::new(), step("b"))
                .expect_err("refused"),
            1
        );
        assert!(runs.is_running("2026-11-23-001"));
        first.finish(Err(RoundError::Cancelled("stopped".into())));
        assert!(!runs.is_running("2026-11-23-001"));
        let second = runs
            .begin("2026-11-23-001", Path::new("/r"), 2, false, CancellationToken::new(), step("b"))
            .expect("registered");
        assert_eq!(runs.get("2026-11-23-001").expect("known").round, second.round);
    }

    #[tokio::test]
    async fn a_wait_ends_at_its_limit_with_the_steps_seen_and_the_round_running_on() {
        let runs = Runs::default();
        let run = runs
            .begin("2026-11-23-002", Path::new("/r"), 1, false, CancellationToken::new(), step("first"))
            .expect("registered");
        let reporter = run.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            reporter.report(4.0, "second".into());
        });
        let seen = Mutex::new(Vec::new());
        let waited = run
            .wait(Some(Duration::from_secs(2)), &CancellationToken::new(), &|s| lock(&seen).push(s.message.clone()))
            .await;
        assert!(waited.is_none(), "the round has not finished");
        assert_eq!(*lock(&seen), ["first", "second"]);
        assert!(!run.cancel_token().is_cancelled(), "a wait that ends does not stop the round");
    }

    #[tokio::test]
    async fn a_waiter_gets_the_result_when_the_round_finishes() {
        let runs = Runs::default();
        let run = runs
            .begin("2026-11-23-003", Path::new("/r"), 1, false, CancellationToken::new(), step("first"))
            .expect("registered");
        let finisher = run.clone();
        tokio::spawn(async move { finisher.finish(Err(RoundError::Reviewer("exit 1".into()))) });
        let waited = run.wait(None, &CancellationToken::new(), &|_| {}).await;
        assert!(matches!(waited, Some(Err(RoundError::Reviewer(text))) if text == "exit 1"));
    }
}
