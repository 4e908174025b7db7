//! The review-round tools: `request_review`, `await_review`,
//! `cancel_review`, `get_review_history` and `mark_review_complete`. A
//! round runs in the daemon, not in the call: `request_review` and
//! `await_review` each wait at most `wait_seconds` (under the 60 s after
//! which common hosts give up on a call) and then answer `pending`. Where
//! the host runs MCP tasks, they answer with a task instead, which ends
//! with the round however long it takes (`tasks`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::tool::parse_json_object;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult, DetailedTask,
    IntoContents, ProgressNotificationParam,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::ParleyMcp;
use super::errors;
use super::sessions::{
    self, AwaitArgs, CancelArgs, CancelResult, CompleteArgs, CompleteResult, HistoryArgs, HistoryResult, PendingReview,
    RequestReviewArgs, ReviewResult,
};
use super::tasks::{self, Named, OnCancel, Reporter, Tool};
use crate::usecases::rounds::{self, Run, Step, Waited};

/// How long a call waits for a round when the agent does not say.
const DEFAULT_WAIT: u32 = 45;
/// The longest a call waits: under the 60 s the TypeScript SDK gives a call.
const MAX_WAIT: u32 = 50;
/// How long the host's user is asked for a verdict while a task waits on
/// a person (a task has no time limit of its own).
const TASK_ASK_LIMIT: Duration = Duration::from_secs(24 * 60 * 60);

#[tool_router(router = round_tools, vis = "pub(super)")]
impl ParleyMcp {
    #[tool(
        title = "Request a code review",
        description = "Have your current git changes reviewed by the configured reviewer command, or by a person (reviewer \"human\"; may take hours). Waits up to wait_seconds (default 45, at most 50): returns the structured review (comments with file, line, severity and suggested_fix; verdict), or status \"pending\" with review_id: the round goes on, and await_review returns it. A host that runs MCP tasks gets the call as a task that ends with the round, however long it takes (wait_seconds does not apply). After fixing, ask again with previous_review_id; finish with mark_review_complete. A diff adding secrets is refused.",
        output_schema = sessions::round_output_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true)
    )]
    async fn request_review(
        &self,
        Parameters(args): Parameters<RequestReviewArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let wait = wait_limit(args.wait_seconds)?;
        let ask = self.review_ask(args, super::author_of(&context))?;
        let (progress, forwarder) = progress_sink(&context);
        let started = rounds::start(&self.context, ask, &|step, message| progress(step, message)).await;
        let run = match started {
            Ok(run) => run,
            Err(error) => {
                drop(progress);
                finish_forwarding(forwarder).await;
                return Err(error.into());
            }
        };
        let report = |step: &Step| progress(step.progress, step.message.clone());
        let asking = self.ask_in_host(&run, wait, &context).await;
        let waited = run.wait(Some(wait), &context.ct, &report).await;
        if let Some(asking) = asking {
            asking.abort();
        }
        drop(progress);
        finish_forwarding(forwarder).await;
        match waited {
            Some(Ok(outcome)) => finished(outcome),
            Some(Err(error)) => Err(error.into()),
            // The call was cancelled while it waited. A client that went
            // away leaves the round running; a cancelled call (a person
            // interrupted the agent) stops it.
            None if context.ct.is_cancelled() && !self.agent.hung_up.is_cancelled() => {
                run.cancel_token().cancel();
                Err(errors::ToolError::from(rounds::RoundError::Cancelled(format!(
                    "round {} of review {} was stopped because the call was cancelled",
                    run.round, run.review_id
                ))))
            }
            None => pending(&run),
        }
    }

    #[tool(
        title = "Wait for a review round",
        description = "Wait for the round of review_id that request_review answered as pending, up to wait_seconds (default 45, at most 50): returns it as request_review does, or status \"pending\" again (call again). A host that runs MCP tasks gets the call as a task that ends with the round. Cancelling this call ends the wait, never the round.",
        output_schema = sessions::round_output_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn await_review(
        &self,
        Parameters(args): Parameters<AwaitArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let wait = wait_limit(args.wait_seconds)?;
        let root = self.repo_root().await?;
        let (progress, forwarder) = progress_sink(&context);
        let report = |step: &Step| progress(step.progress, step.message.clone());
        let id = &rounds::session_id(&self.context, &args.review_id, Some(&root)).await?;
        let asking = match rounds::get(&self.context, id, Some(&root)).await {
            Ok(session) if session.awaiting.is_some() => match rounds::person::run_for(&self.context, &session) {
                Some(run) => self.ask_in_host(&run, wait, &context).await,
                None => None,
            },
            _ => None,
        };
        let waited = rounds::wait(&self.context, id, Some(&root), Some(wait), &context.ct, &report).await;
        if let Some(asking) = asking {
            asking.abort();
        }
        drop(progress);
        finish_forwarding(forwarder).await;
        match waited? {
            Waited::Finished(outcome) => finished(*outcome),
            Waited::Pending(run) => pending(&run),
        }
    }

    #[tool(
        title = "Stop a review round",
        description = "Stop the running review round of review_id (started by request_review): the reviewer is killed and the round is not stored. The session stays open for another round.",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn cancel_review(
        &self,
        Parameters(args): Parameters<CancelArgs>,
    ) -> Result<Json<CancelResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let root = self.repo_root().await?;
        let id = &rounds::session_id(&self.context, &args.review_id, Some(&root)).await?;
        let round = rounds::cancel(&self.context, id, Some(&root)).await?;
        Ok(Json(CancelResult {
            review_id: id.to_owned(),
            round,
            cancelled: true,
            message: format!("Round {round} of review {id} was stopped; nothing of it was stored."),
        }))
    }

    #[tool(
        title = "Review history",
        description = "Get past review sessions: the newest `limit` (default 5) sessions of this repository, or one session by review_id, each with its rounds and reviews, and the round running now (`pending`).",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_review_history(
        &self,
        Parameters(args): Parameters<HistoryArgs>,
    ) -> Result<Json<HistoryResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let root = self.repo_root().await?;
        let sessions = match args.review_id.as_deref().map(str::trim).filter(|id| !id.is_empty()) {
            Some(id) => vec![rounds::get(&self.context, id, Some(&root)).await?],
            None => {
                let limit = args.limit.unwrap_or(5).max(1) as usize;
                rounds::list(&self.context, Some(root), limit).await?
            }
        };
        Ok(Json(HistoryResult { reviews: sessions.iter().map(sessions::view).collect() }))
    }

    #[tool(
        title = "Complete a review session",
        description = "Mark a review session as complete with its final status: approved, abandoned or merged. A session can be completed once.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn mark_review_complete(
        &self,
        Parameters(args): Parameters<CompleteArgs>,
    ) -> Result<Json<CompleteResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let root = self.repo_root().await?;
        let session =
            rounds::complete(&self.context, &args.review_id, &args.final_status, args.notes, Some(&root)).await?;
        let done = session.completion.clone().ok_or("internal error: the session was just completed")?;
        Ok(Json(CompleteResult {
            review_id: session.id.clone(),
            final_status: done.final_status,
            completed_at: done.at,
            rounds: session.rounds.len(),
            notes: done.notes,
        }))
    }
}

/// A person's verdict given in the agent's host (MCP elicitation).
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct HostVerdict {
    /// approve, or request_changes.
    verdict: HostChoice,
    /// What should change, or a note with the approval.
    #[serde(default)]
    message: String,
}

/// Elicitation forms take flat fields only: the choice is inlined.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
enum HostChoice {
    Approve,
    RequestChanges,
}

rmcp::elicit_safe!(HostVerdict);

impl ParleyMcp {
    /// When a round waits on a person, no editor window is open on its
    /// repository and the agent's host can ask its user (form elicitation),
    /// asks there for a verdict while the call waits; an answer is submitted
    /// as the person's review. The task ends with the wait (abort it then).
    async fn ask_in_host(
        &self,
        run: &Arc<Run>,
        wait: Duration,
        context: &RequestContext<RoleServer>,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let can_ask = context.peer.supported_elicitation_modes().contains(&rmcp::service::ElicitationMode::Form);
        if wait.is_zero() || !can_ask {
            return None;
        }
        // A round for a person waits for them once its diff is captured.
        let began = tokio::time::Instant::now();
        if !run.reaches(wait, rounds::person::is_waiting_step).await {
            return None;
        }
        let wait = wait.saturating_sub(began.elapsed());
        if rounds::person::watched(&self.context, &run.repository).await {
            return None;
        }
        let session = rounds::get(&self.context, &run.review_id, None).await.ok()?;
        let waiting = session.awaiting.as_deref()?;
        let message = format!(
            "Review round {} of {} in {}: {}\n\nChanged: {}.\n\nNo editor is open on it: approve or request changes here, \
             or review the diff in your editor (or with `parley review diff {}`).",
            waiting.round,
            session.id,
            session.workspace.display(),
            waiting.summary.trim(),
            waiting.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", "),
            session.id
        );
        let (peer, cx, id) = (context.peer.clone(), self.context.clone(), session.id.clone());
        Some(tokio::spawn(async move {
            match peer.elicit_with_timeout::<HostVerdict>(message, Some(wait)).await {
                Ok(Some(answer)) => {
                    let verdict = match answer.verdict {
                        HostChoice::Approve => rounds::person::Verdict::Approve,
                        HostChoice::RequestChanges => rounds::person::Verdict::RequestChanges,
                    };
                    if let Err(e) = rounds::person::submit(&cx, &id, verdict, Some(answer.message), None).await {
                        tracing::warn!("the verdict given in the agent's host was not taken: {e}");
                    }
                }
                // Declined, dismissed or timed out: the round waits on.
                Ok(None) => {}
                Err(e) => tracing::debug!("no verdict from the agent's host: {e}"),
            }
        }))
    }

    /// What a review tool's arguments ask for, in this agent's workspace.
    fn review_ask(
        &self,
        args: RequestReviewArgs,
        asked_by: String,
    ) -> Result<crate::usecases::rounds::ReviewAsk, String> {
        let folder = self
            .workspace()
            .or_else(|| self.agent.cwd.clone())
            .ok_or("this agent's working directory is unknown: start the agent inside the repository to review")?;
        Ok(crate::usecases::rounds::ReviewAsk {
            summary: args.summary,
            relevant_docs: args.relevant_docs.unwrap_or_default(),
            focus_areas: args.focus_areas.unwrap_or_default(),
            previous_review_id: args.previous_review_id,
            scope: args.scope,
            folder,
            env: self.agent.env.clone(),
            reviewer: args.reviewer,
            asked_by,
        })
    }

    /// The git repository holding this agent's workspace.
    async fn repo_root(&self) -> Result<PathBuf, String> {
        let folder =
            self.workspace().or_else(|| self.agent.cwd.clone()).ok_or("this agent's working directory is unknown")?;
        crate::usecases::rounds::repository(&folder).await.map_err(errors::round)
    }
}

impl ParleyMcp {
    /// A call of `request_review` or `await_review` from a host that runs
    /// MCP tasks, answered with a task that ends with the round (or at once,
    /// when there is nothing to wait for). `None` for any other tool, and
    /// for arguments the tool refuses: the tool itself answers those, as it
    /// does for every host.
    pub(super) async fn call_as_task(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<CallToolResponse> {
        let arguments = request.arguments.clone().unwrap_or_default();
        match request.name.as_ref() {
            "request_review" => {
                let args = parse_json_object::<RequestReviewArgs>(arguments).ok()?;
                wait_limit(args.wait_seconds).ok()?;
                Some(self.request_review_task(args, context).await)
            }
            "await_review" => {
                let args = parse_json_object::<AwaitArgs>(arguments).ok()?;
                wait_limit(args.wait_seconds).ok()?;
                Some(self.await_review_task(&args.review_id, context).await)
            }
            _ => None,
        }
    }

    /// Starts the round as `request_review` does (every refusal is answered
    /// at once, as to any host), then waits for it in a task. Cancelling the
    /// task stops the round, as cancelling the call does.
    async fn request_review_task(
        &self,
        args: RequestReviewArgs,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let started = {
            let _call = self.context.shutdown.call();
            match self.review_ask(args, super::author_of(context)) {
                Ok(ask) => rounds::start(&self.context, ask, &|_, _| {}).await.map_err(errors::ToolError::from),
                Err(refused) => Err(errors::ToolError::from(refused)),
            }
        };
        match started {
            Ok(run) => self.wait_as_task(run, Tool::RequestReview, context),
            Err(error) => CallToolResult::error(error.into_contents()).into(),
        }
    }

    /// `await_review` as a task: a round that has ended is answered at once;
    /// a running one is waited for in a task, whose cancelling ends only the
    /// wait.
    async fn await_review_task(&self, review_id: &str, context: &RequestContext<RoleServer>) -> CallToolResponse {
        let now = async {
            let root = self.repo_root().await?;
            let id = rounds::session_id(&self.context, review_id, Some(&root)).await?;
            let never = CancellationToken::new();
            Ok::<_, errors::ToolError>(
                rounds::wait(&self.context, &id, Some(&root), Some(Duration::ZERO), &never, &|_| {}).await?,
            )
        };
        match now.await {
            Ok(Waited::Pending(run)) => self.wait_as_task(run, Tool::AwaitReview, context),
            Ok(Waited::Finished(outcome)) => answer(finished(*outcome)).into(),
            Err(error) => CallToolResult::error(error.into_contents()).into(),
        }
    }

    /// A task of `tool` waiting for `run` to end, with no time limit. When
    /// this connection runs too many tasks already, the round is answered
    /// `pending` at once, as a call's wait that ended.
    fn wait_as_task(&self, run: Arc<Run>, tool: Tool, context: &RequestContext<RoleServer>) -> CallToolResponse {
        let named = Named { review_id: &run.review_id, round: run.round, tool };
        let (server, context, waited) = (self.clone(), context.clone(), run.clone());
        let waiting = move |reporter| wait_for(server, waited, context, reporter);
        match self.tasks.spawn(named, &run.step().message, on_cancel(tool, &run), waiting) {
            Some(task) => CreateTaskResult::new(task).into(),
            None => answer(pending(&run)).into(),
        }
    }

    /// `tasks/get`. A task of ours this connection does not hold (Parley
    /// restarted since it began, or its result was dropped) is answered from
    /// its round: taken up again while the round runs or waits for a person,
    /// ended with the round's answer once it has one, and otherwise failed
    /// with what became of the round. Never a task that polls forever.
    pub(super) async fn task_state(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<DetailedTask, rmcp::ErrorData> {
        if let Some(task) = self.tasks.get(id) {
            return Ok(task);
        }
        let Some(Named { review_id, round, tool }) = tasks::names(id) else {
            return Err(tasks::foreign(id));
        };
        let root = match self.repo_root().await {
            Ok(root) => root,
            Err(why) => return Ok(tasks::failed(id, &why)),
        };
        let again = if round > 1 { format!(" (previous_review_id \"{review_id}\")") } else { String::new() };
        let lost = format!(
            "Round {round} of review {review_id} was lost: Parley restarted while it ran, before its review was \
             stored. Ask for the review again with request_review{again}."
        );
        let never = CancellationToken::new();
        let now = rounds::wait(&self.context, review_id, Some(&root), Some(Duration::ZERO), &never, &|_| {}).await;
        let ended = |result: CallToolResult| self.tasks.ended(id, &result).unwrap_or_else(|| tasks::failed(id, &lost));
        Ok(match now {
            Ok(Waited::Pending(run)) if run.round == round => {
                let (server, context, waited) = (self.clone(), context.clone(), run.clone());
                let waiting = move |reporter| wait_for(server, waited, context, reporter);
                match self.tasks.resume(id, &run.step().message, on_cancel(tool, &run), waiting) {
                    Some(_) => self.tasks.get(id).unwrap_or_else(|| tasks::failed(id, &lost)),
                    None => tasks::failed(
                        id,
                        &format!("too many waits run at once here: call await_review with review_id \"{review_id}\""),
                    ),
                }
            }
            Ok(Waited::Finished(outcome)) if outcome.round.round == round => ended(answer(finished(*outcome))),
            Ok(_) | Err(rounds::RoundError::NotFound(_)) => tasks::failed(id, &lost),
            Err(error) => ended(CallToolResult::error(errors::ToolError::from(error).into_contents())),
        })
    }
}

/// What cancelling a task of `tool` stops besides its wait: the round, for
/// `request_review` (as cancelling the call does).
fn on_cancel(tool: Tool, run: &Run) -> OnCancel {
    match tool {
        Tool::RequestReview => OnCancel::StopRound(run.cancel_token().clone()),
        Tool::AwaitReview => OnCancel::WaitOnly,
    }
}

/// A task's wait for `run` to end, with no time limit; while it waits on a
/// person, the host's user may be asked for the verdict, as in a call.
async fn wait_for(
    server: ParleyMcp,
    run: Arc<Run>,
    context: RequestContext<RoleServer>,
    reporter: Reporter,
) -> CallToolResult {
    let report = |step: &Step| reporter.say(&step.message);
    let never = CancellationToken::new();
    // The question is stopped when the wait ends, and when the task is
    // dropped mid-wait too: the guard is held from the start.
    let asking = async { server.ask_in_host(&run, TASK_ASK_LIMIT, &context).await.map(AbortOnDrop) };
    let (_asking, waited) = tokio::join!(asking, run.wait(None, &never, &report));
    answer(match waited {
        Some(Ok(outcome)) => finished(outcome),
        Some(Err(error)) => Err(error.into()),
        None => pending(&run),
    })
}

/// A tool's answer or failure as the result the agent reads.
fn answer(result: Result<CallToolResult, errors::ToolError>) -> CallToolResult {
    result.unwrap_or_else(|error| CallToolResult::error(error.into_contents()))
}

/// Stops the question put to the host's user once the wait it belongs to
/// ends, however it ends (a cancelled task drops its wait).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn wait_limit(given: Option<u32>) -> Result<Duration, String> {
    let seconds = given.unwrap_or(DEFAULT_WAIT);
    if seconds > MAX_WAIT {
        return Err(format!(
            "wait_seconds is at most {MAX_WAIT} (hosts give up on calls after about a minute), not {seconds}: \
             a longer round answers pending, and await_review waits for the rest"
        ));
    }
    Ok(Duration::from_secs(seconds.into()))
}

type Forwarder = Option<tokio::task::JoinHandle<()>>;

/// Sends progress as MCP progress notifications when the caller asked for
/// them (a `progressToken`); the returned task ends once the sink is dropped.
fn progress_sink(context: &RequestContext<RoleServer>) -> (impl Fn(f64, String) + Send + Sync + use<>, Forwarder) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(f64, String)>();
    let forwarder = context.meta.get_progress_token().map(|token| {
        let peer = context.peer.clone();
        tokio::spawn(async move {
            let mut last = None;
            while let Some((step, message)) = rx.recv().await {
                // The same report twice (a waiter joining) is said once.
                if last.as_ref() == Some(&(step, message.clone())) {
                    continue;
                }
                last = Some((step, message.clone()));
                let param =
                    ProgressNotificationParam::new(token.clone(), step).with_total(rounds::STEPS).with_message(message);
                let _ = peer.notify_progress(param).await;
            }
        })
    });
    (move |step: f64, message: String| drop(tx.send((step, message))), forwarder)
}

async fn finish_forwarding(forwarder: Forwarder) {
    if let Some(forwarder) = forwarder {
        let _ = forwarder.await;
    }
}

fn finished(outcome: rounds::Outcome) -> Result<CallToolResult, errors::ToolError> {
    let result = ReviewResult {
        review_id: outcome.session.id.clone(),
        timestamp: outcome.round.at.clone(),
        status: outcome.session.status().into(),
        round: outcome.round.round,
        verdict: outcome.round.verdict,
        review: outcome.round.review.clone(),
        changed_files: outcome.round.changed_files.clone(),
        audit_path: outcome.audit.as_ref().map(|p| p.display().to_string()),
        shown_in_editors: outcome.shown_in,
        warnings: outcome.warnings.clone(),
    };
    let mut answer = CallToolResult::structured(serde_json::to_value(&result).map_err(|e| e.to_string())?);
    answer.content = vec![ContentBlock::text(outcome.markdown)];
    Ok(answer)
}

fn pending(run: &Arc<Run>) -> Result<CallToolResult, errors::ToolError> {
    let step = run.step();
    let elapsed = run.started.elapsed().as_secs();
    let (id, round) = (&run.review_id, run.round);
    let message = if rounds::person::is_waiting(run) {
        format!(
            "Round {round} of review {id} is {} ({elapsed} s so far). A person's review can take minutes or hours, and it \
             is kept in Parley whatever happens to this conversation: call await_review with review_id \"{id}\" to wait \
             for it (each call waits up to {MAX_WAIT} s), now or after other work. cancel_review withdraws the request.",
            step.message
        )
    } else if run.for_person {
        format!(
            "Round {round} of review {id} is getting ready for a person to review it ({}, {elapsed} s so far). A person's \
             review can take minutes or hours, and it is kept in Parley whatever happens to this conversation: call \
             await_review with review_id \"{id}\" to wait for it (each call waits up to {MAX_WAIT} s), now or after other \
             work. cancel_review withdraws the request.",
            step.message
        )
    } else {
        format!(
            "Round {round} of review {id} is still running ({}, {elapsed} s so far). It goes on in Parley whatever happens to \
             this conversation: call await_review with review_id \"{id}\" to wait for it (each call waits up to {MAX_WAIT} s), \
             now or after other work. cancel_review stops it.",
            step.message
        )
    };
    let result = PendingReview {
        review_id: id.clone(),
        status: "pending".into(),
        round,
        step: step.message,
        progress: step.progress,
        total: rounds::STEPS,
        elapsed_seconds: elapsed,
        message: message.clone(),
    };
    let mut answer = CallToolResult::structured(serde_json::to_value(&result).map_err(|e| e.to_string())?);
    answer.content = vec![ContentBlock::text(message)];
    Ok(answer)
}
