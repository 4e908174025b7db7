//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663) for
//! the waits: where the host declares the extension, `request_review` and
//! `await_review` answer at once with a task, and the host polls `tasks/get`
//! until the round ends, however long that takes (no time limit of the host
//! applies to a task). Hosts without the extension are answered as before.
//!
//! The tasks of one agent connection are held here, for that connection:
//! a running task is a wait (the round itself belongs to the daemon and
//! goes on whatever happens to the wait), and a finished one keeps its
//! result for [`KEEP_FINISHED`], at most [`MAX_FINISHED`] of them. A task's
//! id names its review and round, so a poll for a task this daemon does not
//! hold (it restarted since, or the result was dropped) is answered with
//! what to do: call `await_review` for that review.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use rmcp::service::{RequestContext, RoleServer};
use tokio_util::sync::CancellationToken;

/// How long a finished task's result is kept for the host to fetch.
pub const KEEP_FINISHED: Duration = Duration::from_secs(60 * 60);
/// The most finished tasks one connection keeps; the oldest go first.
pub const MAX_FINISHED: usize = 64;
/// The most tasks one connection runs at once; past it a call waits as a
/// plain call does (up to `wait_seconds`, then `pending`).
pub const MAX_RUNNING: usize = 32;
/// How often the host is asked to poll.
const POLL_INTERVAL_MS: u64 = 1_000;
/// What every task id starts with; the review id and round follow.
const ID_PREFIX: &str = "parley-review";

/// Whether this call's client declared the tasks extension (in the
/// request's `_meta` on the 2026-07-28 wire, at `initialize` before it).
pub fn declared(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().is_some_and(|capabilities| capabilities.supports_tasks())
}

/// What cancelling a task (`tasks/cancel`) stops besides the wait.
#[derive(Debug, Clone)]
pub enum OnCancel {
    /// The wait only (`await_review`: cancelling it never stops the round).
    WaitOnly,
    /// The round too (`request_review`: as a cancelled call does).
    StopRound(CancellationToken),
}

#[derive(Debug)]
struct Entry {
    task: Task,
    /// Set once the task has ended.
    payload: Option<TaskPayload>,
    created: Instant,
    finished: Option<Instant>,
    /// Ends the wait.
    stop: CancellationToken,
    on_cancel: OnCancel,
}

#[derive(Debug, Default)]
struct Held {
    tasks: HashMap<String, Entry>,
    /// Makes ids unique within the connection; `nonce` across daemons.
    next: u64,
}

/// The tasks of one agent connection.
#[derive(Debug, Clone)]
pub struct Tasks {
    held: Arc<Mutex<Held>>,
    /// Ends every wait when the connection closes.
    closed: CancellationToken,
    /// Distinguishes this daemon's ids from an earlier one's.
    nonce: String,
}

/// Lets a running task say where its round is (the task's status message).
#[derive(Debug, Clone)]
pub struct Reporter {
    held: Arc<Mutex<Held>>,
    id: String,
}

impl Reporter {
    pub fn say(&self, message: &str) {
        if let Some(entry) = lock(&self.held).tasks.get_mut(&self.id)
            && entry.payload.is_none()
            && entry.task.status_message.as_deref() != Some(message)
        {
            entry.task.status_message = Some(message.to_owned());
            entry.task.last_updated_at = crate::clock::now_rfc3339();
        }
    }
}

impl Tasks {
    pub fn new(closed: CancellationToken) -> Self {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        Tasks { held: Arc::default(), closed, nonce: nonce[..8].to_owned() }
    }

    /// Starts `wait` as a task for round `round` of review `review_id` and
    /// gives its first state, or `None` when this connection already runs
    /// [`MAX_RUNNING`] tasks. `wait` is dropped when the task is cancelled or
    /// the connection closes; what it gives is the task's result.
    pub fn spawn<F, W>(&self, review_id: &str, round: u32, status: &str, on_cancel: OnCancel, wait: W) -> Option<Task>
    where
        W: FnOnce(Reporter) -> F,
        F: Future<Output = CallToolResult> + Send + 'static,
    {
        let stop = self.closed.child_token();
        let (id, task) = {
            let mut held = lock(&self.held);
            sweep(&mut held, Instant::now());
            if held.tasks.values().filter(|entry| entry.payload.is_none()).count() >= MAX_RUNNING {
                return None;
            }
            held.next += 1;
            let id = format!("{ID_PREFIX}:{review_id}:{round}:{}-{}", self.nonce, held.next);
            let now = crate::clock::now_rfc3339();
            let mut task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now)
                .with_poll_interval_ms(POLL_INTERVAL_MS)
                .with_status_message(status);
            // No time limit while the round runs; set once it has ended.
            task.ttl_ms = None;
            let entry = Entry {
                task: task.clone(),
                payload: None,
                created: Instant::now(),
                finished: None,
                stop: stop.clone(),
                on_cancel,
            };
            held.tasks.insert(id.clone(), entry);
            (id, task)
        };
        let reporter = Reporter { held: self.held.clone(), id: id.clone() };
        let wait = wait(reporter);
        let held = self.held.clone();
        tokio::spawn(async move {
            let result = tokio::select! {
                result = wait => result,
                () = stop.cancelled() => return,
            };
            let payload = match serde_json::to_value(&result) {
                Ok(serde_json::Value::Object(result)) => TaskPayload::Completed { result },
                _ => failure("internal error: the round's answer could not be encoded"),
            };
            finish(&mut lock(&held), &id, payload);
        });
        Some(task)
    }

    /// `tasks/get`: the task's state, with its result once it has ended.
    pub fn get(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        let mut held = lock(&self.held);
        sweep(&mut held, Instant::now());
        match held.tasks.get(id) {
            Some(entry) => Ok(detailed(entry)),
            None => lost(id),
        }
    }

    /// `tasks/cancel`: ends the wait (and, for `request_review`, the round).
    /// A task that has already ended is left as it is.
    pub fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        let mut held = lock(&self.held);
        sweep(&mut held, Instant::now());
        let Some(entry) = held.tasks.get(id) else {
            return lost(id).map(drop);
        };
        if entry.payload.is_some() {
            return Ok(());
        }
        entry.stop.cancel();
        if let OnCancel::StopRound(round) = &entry.on_cancel {
            round.cancel();
        }
        finish(&mut held, id, TaskPayload::Cancelled);
        Ok(())
    }

    /// `tasks/update`: these tasks never ask the host for input.
    pub fn update(&self, id: &str) -> Result<(), ErrorData> {
        let mut held = lock(&self.held);
        sweep(&mut held, Instant::now());
        match held.tasks.get(id) {
            Some(_) => Err(ErrorData::invalid_params(
                format!("task {id} asks for no input: poll it with tasks/get, or cancel it with tasks/cancel"),
                None,
            )),
            None => lost(id).map(drop),
        }
    }
}

fn lock(held: &Mutex<Held>) -> MutexGuard<'_, Held> {
    held.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn detailed(entry: &Entry) -> DetailedTask {
    DetailedTask::new(entry.task.clone(), entry.payload.clone().unwrap_or(TaskPayload::Working))
}

/// Ends task `id` with `payload`, unless it has ended already, and from
/// then on keeps it for [`KEEP_FINISHED`].
fn finish(held: &mut Held, id: &str, payload: TaskPayload) {
    let Some(entry) = held.tasks.get_mut(id) else { return };
    if entry.payload.is_some() {
        return;
    }
    entry.task.status = payload.status();
    entry.task.status_message = None;
    entry.task.last_updated_at = crate::clock::now_rfc3339();
    let kept = entry.created.elapsed() + KEEP_FINISHED;
    entry.task.ttl_ms = Some(u64::try_from(kept.as_millis()).unwrap_or(u64::MAX));
    entry.payload = Some(payload);
    entry.finished = Some(Instant::now());
    sweep(held, Instant::now());
}

/// Drops finished tasks older than [`KEEP_FINISHED`], and the oldest past
/// [`MAX_FINISHED`].
fn sweep(held: &mut Held, now: Instant) {
    held.tasks.retain(|_, entry| entry.finished.is_none_or(|at| now.duration_since(at) < KEEP_FINISHED));
    let mut finished: Vec<(Instant, String)> =
        held.tasks.iter().filter_map(|(id, entry)| entry.finished.map(|at| (at, id.clone()))).collect();
    if finished.len() > MAX_FINISHED {
        finished.sort();
        for (_, id) in &finished[..finished.len() - MAX_FINISHED] {
            held.tasks.remove(id);
        }
    }
}

/// The review id and round a task id of ours names.
fn names(id: &str) -> Option<(&str, &str)> {
    let mut parts = id.strip_prefix(ID_PREFIX)?.strip_prefix(':')?.split(':');
    let (review, round, _) = (parts.next()?, parts.next()?, parts.next()?);
    (!review.is_empty() && round.parse::<u32>().is_ok() && parts.next().is_none()).then_some((review, round))
}

/// The answer for a task this connection does not hold: one of ours that
/// was lost (the daemon restarted, or its result was dropped) fails with
/// what to do, so the host is never left polling; any other id is unknown.
fn lost(id: &str) -> Result<DetailedTask, ErrorData> {
    let Some((review, round)) = names(id) else {
        return Err(ErrorData::invalid_params(format!("no task {id} here: it was not started by Parley"), None));
    };
    let now = crate::clock::now_rfc3339();
    let message = format!(
        "Parley no longer holds this wait for round {round} of review {review} (Parley restarted since it began, or \
         its result was dropped {} minutes after it ended): call await_review with review_id \"{review}\", which \
         gives the round's review, waits for it, or says what became of it.",
        KEEP_FINISHED.as_secs() / 60
    );
    let task = Task::new(id, TaskStatus::Failed, now.clone(), now);
    Ok(DetailedTask::new(task, failure(&message)))
}

fn failure(message: &str) -> TaskPayload {
    let mut error = JsonObject::new();
    error.insert("code".into(), serde_json::json!(-32603));
    error.insert("message".into(), serde_json::json!(message));
    TaskPayload::Failed { error }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(text: &str) -> CallToolResult {
        CallToolResult::success(vec![rmcp::model::ContentBlock::text(text)])
    }

    async fn settled(tasks: &Tasks, id: &str) -> DetailedTask {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let task = tasks.get(id).expect("held");
            if task.status().is_terminal() {
                return task;
            }
            assert!(Instant::now() < deadline, "task {id} never ended");
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_task_ends_with_its_waits_answer_and_keeps_it() {
        let tasks = Tasks::new(CancellationToken::new());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tasks
            .spawn("2026-01-01-001", 2, "reviewer running", OnCancel::WaitOnly, |report| async move {
                report.say("reviewer still running");
                let _ = rx.await;
                done("reviewed")
            })
            .expect("room");
        assert!(names(&task.task_id) == Some(("2026-01-01-001", "2")), "{}", task.task_id);
        assert_eq!(task.ttl_ms, None, "no time limit while the round runs");
        let working = tasks.get(&task.task_id).expect("held");
        assert_eq!(working.status(), TaskStatus::Working);
        tx.send(()).expect("send");
        let ended = settled(&tasks, &task.task_id).await;
        assert_eq!(ended.status(), TaskStatus::Completed);
        let TaskPayload::Completed { result } = &ended.payload else { panic!("{ended:?}") };
        assert_eq!(result["content"][0]["text"], "reviewed");
        assert!(ended.task.ttl_ms.is_some_and(|ms| ms >= KEEP_FINISHED.as_millis() as u64));
    }

    #[tokio::test]
    async fn cancelling_a_request_stops_its_round_and_an_await_only_its_wait() {
        let tasks = Tasks::new(CancellationToken::new());
        let round = CancellationToken::new();
        let request = tasks
            .spawn("2026-01-01-001", 1, "x", OnCancel::StopRound(round.clone()), |_| std::future::pending())
            .expect("room");
        let wait = tasks.spawn("2026-01-01-002", 1, "x", OnCancel::WaitOnly, |_| std::future::pending()).expect("room");
        tasks.cancel(&wait.task_id).expect("cancel");
        assert!(!round.is_cancelled(), "an await's cancel touched another round");
        tasks.cancel(&request.task_id).expect("cancel");
        assert!(round.is_cancelled());
        assert_eq!(tasks.get(&request.task_id).expect("held").status(), TaskStatus::Cancelled);
        assert_eq!(tasks.get(&wait.task_id).expect("held").status(), TaskStatus::Cancelled);
        // Cancelling an ended task changes nothing.
        tasks.cancel(&request.task_id).expect("cancel again");
        assert_eq!(tasks.get(&request.task_id).expect("held").status(), TaskStatus::Cancelled);
    }

    #[tokio::test]
    async fn a_lost_task_says_which_review_to_await_and_a_foreign_id_is_refused() {
        let tasks = Tasks::new(CancellationToken::new());
        let lost = tasks.get("parley-review:2026-01-01-007:3:abcd1234-1").expect("answered");
        assert_eq!(lost.status(), TaskStatus::Failed);
        let TaskPayload::Failed { error } = &lost.payload else { panic!("{lost:?}") };
        let message = error["message"].as_str().expect("message");
        assert!(message.contains("await_review") && message.contains("2026-01-01-007"), "{message}");
        let foreign = tasks.get("some-other-task").expect_err("refused");
        assert!(foreign.message.contains("not started by Parley"), "{}", foreign.message);
        assert!(tasks.cancel("some-other-task").is_err());
    }

    #[tokio::test]
    async fn finished_tasks_are_bounded_and_running_ones_too() {
        let tasks = Tasks::new(CancellationToken::new());
        let mut ids = Vec::new();
        for n in 0..MAX_FINISHED + 5 {
            let task =
                tasks.spawn("2026-01-01-001", 1, "x", OnCancel::WaitOnly, |_| std::future::pending()).expect("room");
            tasks.cancel(&task.task_id).expect("cancel");
            ids.push(task.task_id);
            assert!(lock(&tasks.held).tasks.len() <= MAX_FINISHED, "after {n}");
        }
        // The oldest were dropped: a poll for one says what to do.
        assert_eq!(tasks.get(&ids[0]).expect("answered").status(), TaskStatus::Failed);
        assert_eq!(tasks.get(&ids[ids.len() - 1]).expect("held").status(), TaskStatus::Cancelled);
        for _ in 0..MAX_RUNNING {
            tasks.spawn("2026-01-01-001", 1, "x", OnCancel::WaitOnly, |_| std::future::pending()).expect("room");
        }
        assert!(tasks.spawn("2026-01-01-001", 1, "x", OnCancel::WaitOnly, |_| std::future::pending()).is_none());
    }

    #[tokio::test]
    async fn a_closed_connection_ends_its_waits() {
        let closed = CancellationToken::new();
        let tasks = Tasks::new(closed.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tasks
            .spawn("2026-01-01-001", 1, "x", OnCancel::WaitOnly, |_| async move {
                let _guard = tx;
                std::future::pending::<CallToolResult>().await
            })
            .expect("room");
        closed.cancel();
        // The wait was dropped: its sender with it.
        assert!(rx.await.is_err());
    }
}
