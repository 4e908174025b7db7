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
//! id names its review, round and tool, so a poll for a task this daemon
//! does not hold (it restarted since, or the result was dropped) is
//! answered from the round itself (`rounds`): the task goes on while the
//! round does (a person's round survives a restart), ends with the round's
//! review if it has one, and otherwise fails saying what became of it.

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
/// What every task id starts with; the review id, round and tool follow.
const ID_PREFIX: &str = "parley-review";

/// Whether this call's client declared the tasks extension (in the
/// request's `_meta` on the 2026-07-28 wire, at `initialize` before it).
pub fn declared(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().is_some_and(|capabilities| capabilities.supports_tasks())
}

/// The tool a task runs, as its id says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    RequestReview,
    AwaitReview,
}

impl Tool {
    const ALL: [Tool; 2] = [Tool::RequestReview, Tool::AwaitReview];

    fn tag(self) -> &'static str {
        match self {
            Tool::RequestReview => "request",
            Tool::AwaitReview => "await",
        }
    }
}

/// What a task id of ours names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named<'a> {
    pub review_id: &'a str,
    pub round: u32,
    pub tool: Tool,
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

    /// Starts `wait` as a task of `named.tool` for round `named.round` of
    /// review `named.review_id` and gives its first state, or `None` when
    /// this connection already runs [`MAX_RUNNING`] tasks. `wait` is dropped
    /// when the task is cancelled or the connection closes; what it gives is
    /// the task's result.
    pub fn spawn<F, W>(&self, named: Named<'_>, status: &str, on_cancel: OnCancel, wait: W) -> Option<Task>
    where
        W: FnOnce(Reporter) -> F,
        F: Future<Output = CallToolResult> + Send + 'static,
    {
        self.start(None, named, status, on_cancel, wait)
    }

    /// Takes up task `id`, one of ours this connection does not hold (it
    /// was started before a restart), as a new wait: polls of it go on as if
    /// it had never been lost. `None` when it is not one of ours, or
    /// [`MAX_RUNNING`] tasks run already.
    pub fn resume<F, W>(&self, id: &str, status: &str, on_cancel: OnCancel, wait: W) -> Option<Task>
    where
        W: FnOnce(Reporter) -> F,
        F: Future<Output = CallToolResult> + Send + 'static,
    {
        let named = names(id)?;
        self.start(Some(id), named, status, on_cancel, wait)
    }

    /// Holds task `id`, one of ours this connection does not hold, as ended
    /// with `result` (its round ended while the task was lost); its state.
    pub fn ended(&self, id: &str, result: &CallToolResult) -> Option<DetailedTask> {
        names(id)?;
        let mut held = lock(&self.held);
        if !held.tasks.contains_key(id) {
            let now = crate::clock::now_rfc3339();
            let entry = Entry {
                task: Task::new(id, TaskStatus::Working, now.clone(), now),
                payload: None,
                created: Instant::now(),
                finished: None,
                stop: CancellationToken::new(),
                on_cancel: OnCancel::WaitOnly,
            };
            held.tasks.insert(id.to_owned(), entry);
            finish(&mut held, id, completed(result));
        }
        held.tasks.get(id).map(detailed)
    }

    fn start<F, W>(
        &self,
        id: Option<&str>,
        named: Named<'_>,
        status: &str,
        on_cancel: OnCancel,
        wait: W,
    ) -> Option<Task>
    where
        W: FnOnce(Reporter) -> F,
        F: Future<Output = CallToolResult> + Send + 'static,
    {
        let stop = self.closed.child_token();
        let (id, task) = {
            let mut held = lock(&self.held);
            sweep(&mut held, Instant::now());
            if let Some(entry) = id.and_then(|id| held.tasks.get(id)) {
                // Taken up by another poll meanwhile.
                return Some(entry.task.clone());
            }
            if held.tasks.values().filter(|entry| entry.payload.is_none()).count() >= MAX_RUNNING {
                return None;
            }
            held.next += 1;
            let Named { review_id, round, tool } = named;
            let id = match id {
                Some(id) => id.to_owned(),
                None => format!("{ID_PREFIX}:{review_id}:{round}:{}:{}-{}", tool.tag(), self.nonce, held.next),
            };
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
            finish(&mut lock(&held), &id, completed(&result));
        });
        Some(task)
    }

    /// `tasks/get`: the task's state, with its result once it has ended;
    /// `None` for a task this connection does not hold.
    pub fn get(&self, id: &str) -> Option<DetailedTask> {
        let mut held = lock(&self.held);
        sweep(&mut held, Instant::now());
        held.tasks.get(id).map(detailed)
    }

    /// `tasks/cancel`: ends the wait (and, for `request_review`, the round).
    /// A task that has already ended is left as it is.
    pub fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        let mut held = lock(&self.held);
        sweep(&mut held, Instant::now());
        let Some(entry) = held.tasks.get(id) else {
            return Err(not_held(id));
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
            None => Err(not_held(id)),
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

/// What a task id of ours names; `None` for any other id.
pub fn names(id: &str) -> Option<Named<'_>> {
    let mut parts = id.strip_prefix(ID_PREFIX)?.strip_prefix(':')?.split(':');
    let (review_id, round, tool, _nonce) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let tool = Tool::ALL.into_iter().find(|known| known.tag() == tool)?;
    let round = round.parse().ok()?;
    (!review_id.is_empty() && parts.next().is_none()).then_some(Named { review_id, round, tool })
}

/// The error for an id that is not a task of Parley's.
pub fn foreign(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no task {id} here: it was not started by Parley"), None)
}

/// Task `id` (not held) as failed, with `message` saying what to do.
pub fn failed(id: &str, message: &str) -> DetailedTask {
    let now = crate::clock::now_rfc3339();
    DetailedTask::new(Task::new(id, TaskStatus::Failed, now.clone(), now), failure(message))
}

/// Cancelling or answering a task this connection does not hold.
fn not_held(id: &str) -> ErrorData {
    match names(id) {
        Some(Named { review_id, round, .. }) => ErrorData::invalid_params(
            format!(
                "Parley holds no running task {id} (it restarted since it began, or the task ended long ago): round \
                 {round} of review {review_id} is stopped with cancel_review and waited for with await_review"
            ),
            None,
        ),
        None => foreign(id),
    }
}

fn completed(result: &CallToolResult) -> TaskPayload {
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(result)) => TaskPayload::Completed { result },
        _ => failure("internal error: the round's answer could not be encoded"),
    }
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

    const REQUEST: Named<'static> = Named { review_id: "2026-01-01-001", round: 2, tool: Tool::RequestReview };
    const AWAIT: Named<'static> = Named { review_id: "2026-01-01-002", round: 1, tool: Tool::AwaitReview };

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
            .spawn(REQUEST, "reviewer running", OnCancel::WaitOnly, |report| async move {
                report.say("reviewer still running");
                let _ = rx.await;
                done("reviewed")
            })
            .expect("room");
        assert_eq!(names(&task.task_id), Some(REQUEST), "{}", task.task_id);
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
        let request =
            tasks.spawn(REQUEST, "x", OnCancel::StopRound(round.clone()), |_| std::future::pending()).expect("room");
        let wait = tasks.spawn(AWAIT, "x", OnCancel::WaitOnly, |_| std::future::pending()).expect("room");
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
    async fn a_lost_task_of_ours_can_be_taken_up_and_a_foreign_id_is_refused() {
        let tasks = Tasks::new(CancellationToken::new());
        let lost = "parley-review:2026-01-01-007:3:await:abcd1234-1";
        assert_eq!(names(lost), Some(Named { review_id: "2026-01-01-007", round: 3, tool: Tool::AwaitReview }));
        assert!(tasks.get(lost).is_none());
        let refused = tasks.cancel(lost).expect_err("not held");
        assert!(refused.message.contains("await_review") && refused.message.contains("2026-01-01-007"), "{refused:?}");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let resumed = tasks
            .resume(lost, "waiting", OnCancel::WaitOnly, |_| async move {
                let _ = rx.await;
                done("verdict")
            })
            .expect("room");
        assert_eq!(resumed.task_id, lost);
        // A second poll at the same moment finds it taken up.
        assert!(tasks.resume(lost, "waiting", OnCancel::WaitOnly, |_| std::future::pending()).is_some());
        tx.send(()).expect("send");
        assert_eq!(settled(&tasks, lost).await.status(), TaskStatus::Completed);

        let ended = "parley-review:2026-01-01-008:1:request:abcd1234-2";
        assert_eq!(tasks.ended(ended, &done("review")).expect("ours").status(), TaskStatus::Completed);
        assert!(tasks.ended("some-other-task", &done("x")).is_none());
        for foreign in ["some-other-task", "parley-review:x:1:sideways:n-1", "parley-review::1:await:n-1"] {
            assert!(names(foreign).is_none(), "{foreign}");
            let refused = tasks.cancel(foreign).expect_err("refused");
            assert!(refused.message.contains("not started by Parley"), "{}", refused.message);
        }
    }

    #[tokio::test]
    async fn finished_tasks_are_bounded_and_running_ones_too() {
        let tasks = Tasks::new(CancellationToken::new());
        let mut ids = Vec::new();
        for n in 0..MAX_FINISHED + 5 {
            let task = tasks.spawn(REQUEST, "x", OnCancel::WaitOnly, |_| std::future::pending()).expect("room");
            tasks.cancel(&task.task_id).expect("cancel");
            ids.push(task.task_id);
            assert!(lock(&tasks.held).tasks.len() <= MAX_FINISHED, "after {n}");
        }
        assert!(tasks.get(&ids[0]).is_none(), "the oldest were dropped");
        assert_eq!(tasks.get(&ids[ids.len() - 1]).expect("held").status(), TaskStatus::Cancelled);
        for _ in 0..MAX_RUNNING {
            tasks.spawn(REQUEST, "x", OnCancel::WaitOnly, |_| std::future::pending()).expect("room");
        }
        assert!(tasks.spawn(REQUEST, "x", OnCancel::WaitOnly, |_| std::future::pending()).is_none());
    }

    #[tokio::test]
    async fn a_closed_connection_ends_its_waits() {
        let closed = CancellationToken::new();
        let tasks = Tasks::new(closed.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tasks
            .spawn(REQUEST, "x", OnCancel::WaitOnly, |_| async move {
                let _guard = tx;
                std::future::pending::<CallToolResult>().await
            })
            .expect("room");
        closed.cancel();
        // The wait was dropped: its sender with it.
        assert!(rx.await.is_err());
    }
}
