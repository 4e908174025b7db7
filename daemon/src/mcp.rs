//! The MCP server one agent talks to through its shim: one rmcp server per
//! `mcp` connection, serving both the 2026-07-28 handshake and `initialize`.
//! The only module that imports rmcp.
//!
//! This file is the server: what it tells agents (the instructions), the
//! agent it serves (its workspace), the tool router assembled from each
//! family's tools and the MCP methods besides tools. The tools sit with their
//! arguments and results: `reviews` (`present_review`), `selection`
//! (`get_selection`), `diagnostics` (`get_diagnostics`), `feedback` (the feedback tools),
//! `pull_requests` (`sync_pull_request`), `rounds` (review
//! rounds, with `sessions` their arguments and results; `tasks` holds the
//! MCP tasks their waits run as where the host runs tasks); `resources` reads
//! the resources, `subscriptions` tells of their changes.

mod agents;
mod diagnostics;
mod errors;
mod feedback;
mod hangup;
mod prompts;
mod pull_requests;
mod resources;
mod reviews;
mod rounds;
mod schema;
mod selection;
mod sessions;
mod subscriptions;
mod tasks;
mod walkthroughs;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::stream::{ReadHalf, WriteHalf};
use parley_protocol::hello::Hello;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetPromptRequestParams, GetPromptResponse,
    GetTaskParams, GetTaskResult, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ResourceUpdatedNotificationParam,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler, schemars, tool_handler};
use serde::Deserialize;
use tokio::io::BufReader;
use tokio_util::sync::CancellationToken;

use crate::state::ClientFacts;
use crate::usecases::Context;
use crate::workspace;
use errors::error_text;
use subscriptions::{RESOURCES, Subscriptions};

const INSTRUCTIONS: &str = "\
Parley connects you to the humans you work with: what you present appears in their editor windows, and you can read what they select.

present_review shows a markdown review in every editor window open on its folder, and keeps it there across restarts.
- Structure: start with a short summary of what was implemented (fit for a commit message), then sections such as Context, Changes Made, Implementation Details, and end with design decisions and their rationale.
- References: write [`path:line`][] or [`path:start-end`][] (rustdoc style), or [text](path#L10-L20), with paths relative to baseUri (your workspace root by default). They become clickable links. Reference the most important lines — entry points of functions and types, not every change — and group related references. The result lists references that did not resolve (missing file, line past the end, path outside baseUri): fix them and present again.
- Modes: replace (default) for a new review; append to add context or answer a question; update-section, sparingly, to rewrite one section (matched by heading, any level) in place. Keep each call focused.

get_selection returns what the human has selected in the editor window you most likely mean (the window you run inside, else the one most recently focused on your workspace; a window on another project only when you pass anyWorkspace: true). Call it when the human says \"this\", \"here\" or \"the selected code\".

get_diagnostics returns the problems (errors, warnings) the human's editor reports for your workspace or one file, from its language servers and linters, once they have settled after your edits. A file marked stale had not settled: call again rather than reading it as clean.

Feedback threads are comments on ranges of your workspace's files, left by humans (in their editor, or with `parley feedback add`) or by agents. They stay attached to their text while files change.
- Read them before you start a task on this workspace, after you are told they changed (a notification that parley://feedback was updated), and before you say your work is done: call get_feedback_summary to see whether there is feedback, then get_feedback (optionally for one file).
- Each thread has a state: anchored, moved, modified (the text changed since the comment; originalQuote shows what it was), orphaned (the text is gone), stale (the file changed and the text was not found again within Parley's bound on that work: the range is where it was last seen) or unreadable (the file is not UTF-8 text or cannot be read). For the last three, judge from originalQuote and the comments whether the comment still applies.
- Address a thread in the code, then reply_feedback to say what you did, and resolve_feedback once it is done. Ask with reply_feedback when a comment is unclear instead of guessing.
- add_feedback opens a thread on lines of a file: ask the human about that code there, or leave a note where it matters. Their answer arrives in the thread.
- The current review and the threads are also the resources parley://review and parley://feedback. Subscribe to them to be told when a human comments, replies or resolves, or a review is presented, without asking again and again. Earlier revisions of the review (a walkthrough a review round replaced, each round's review) stay readable: parley://review/history lists them, parley://review/{revision} reads one.
- The prompts address-feedback and review-loop walk through the two usual loops.
- When your workspace is linked to a GitHub pull request, call sync_pull_request before you start, to bring the team's review comments in as threads, and again when you are done, to push your replies (your replies and notes go under your name; the thread's author closes it on GitHub unless the person lets agents resolve).
- A person may ask you about lines of a file while you work: the question is a thread addressed to you, and it reaches you as a note at the end of one of your Parley tool answers (or ends an await_review wait early). Answer it with reply_feedback on that thread, then go on with your task.

Review sessions: when you finish a significant piece of work, call request_review with a clear summary (what you were asked to do, what you did, design decisions and trade-offs), the design docs it must follow (relevant_docs) and any focus_areas. Parley captures your git diff (scope: all changes by default), checks it for secrets, runs the configured reviewer and returns its structured review, which also appears in the editor. Address the feedback (act on `verdict`), then call request_review again with previous_review_id to start the next round of the same session. When the review is approved (or you stop), call mark_review_complete. get_review_history shows past sessions. Reviews can take minutes: request_review waits up to wait_seconds (default 45) and, if the round is not done by then, answers status \"pending\" with the review_id; the round goes on in Parley whatever happens to the call. Then call await_review with that review_id (again if it answers pending) to get the finished round. cancel_review stops a round you no longer want. Each finding with a file and line also becomes a feedback thread there (with `finding` in get_feedback): reply to it saying what you did, or why not, and resolve it when done; the next round's reviewer reads those replies, and the open comments people left on the files you changed. When the user wants to review your change themselves, pass reviewer \"human\": they review the diff in their editor (or at a terminal) and their verdict comes back through await_review in the same format, which can take minutes or hours; keep calling await_review (or do other work and come back to it).

Ids: a threadId or review_id may be the whole id, a review's number such as 001, or a unique beginning of at least 4 characters.";

/// Arguments of a tool that takes none.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Facts about the agent on the other end of this connection.
#[derive(Debug)]
struct Agent {
    connection_id: u64,
    cwd: Option<PathBuf>,
    editor_id: Option<String>,
    /// The workspace: the client's first root when it offers roots, else the
    /// git root (or folder) holding the shim's working directory.
    workspace: RwLock<Option<PathBuf>>,
    /// The environment the host started the shim with: review rounds run
    /// their commands with it.
    env: Arc<std::collections::BTreeMap<String, String>>,
    /// Cancelled when the client's input ends: calls cancelled after that
    /// were not cancelled by the agent (see `hangup`).
    hung_up: tokio_util::sync::CancellationToken,
    /// What the agent subscribed to with `resources/subscribe`.
    subscriptions: Subscriptions,
    /// Cancelled when the connection ends: stops its resource notifier.
    closed: CancellationToken,
    /// The agent's short name, once its host has said who it is.
    name: std::sync::OnceLock<String>,
    /// How many of a person's messages wait for this agent; sent by the
    /// state owner, read before each answer and watched while a call waits.
    waiting: tokio::sync::watch::Receiver<usize>,
}

/// The MCP server for one agent connection.
#[derive(Clone)]
pub struct ParleyMcp {
    context: Context,
    agent: Arc<Agent>,
    /// Built once per process: rmcp would otherwise rebuild it on every call.
    tool_router: Arc<ToolRouter<Self>>,
    /// The MCP tasks this connection's waits run as.
    tasks: tasks::Tasks,
}

fn shared_router() -> Arc<ToolRouter<ParleyMcp>> {
    static ROUTER: std::sync::OnceLock<Arc<ToolRouter<ParleyMcp>>> = std::sync::OnceLock::new();
    ROUTER
        .get_or_init(|| {
            let mut router = ParleyMcp::review_tools()
                + ParleyMcp::selection_tools()
                + ParleyMcp::feedback_tools()
                + ParleyMcp::round_tools()
                + ParleyMcp::walkthrough_tools()
                + ParleyMcp::diagnostics_tools()
                + ParleyMcp::pull_request_tools();
            for route in router.map.values_mut() {
                // Hosts from before 2025-06-18 read the title from the annotations.
                let title = route.attr.title.clone();
                if let Some(annotations) = route.attr.annotations.as_mut() {
                    annotations.title = annotations.title.take().or(title);
                }
                schema::make_portable(Arc::make_mut(&mut route.attr.input_schema));
                schema::drop_dialect(Arc::make_mut(&mut route.attr.input_schema));
                if let Some(output) = route.attr.output_schema.as_mut() {
                    schema::make_portable(Arc::make_mut(output));
                    schema::compact_output(Arc::make_mut(output));
                }
            }
            Arc::new(router)
        })
        .clone()
}

/// Serves MCP on a connection whose hello said `mcp`, until it closes.
pub async fn serve(
    reader: BufReader<ReadHalf>,
    writer: WriteHalf,
    id: u64,
    hello: &Hello,
    facts: ClientFacts,
    context: &Context,
) -> anyhow::Result<()> {
    let (waiting_tx, waiting) = tokio::sync::watch::channel(0);
    crate::usecases::agents::connected(
        context,
        crate::state::NewAgent {
            connection_id: id,
            host_pid: hello.parent_pid,
            shim_pid: hello.pid,
            host_ancestors: Vec::new(),
            editor_id: hello.editor_id.clone(),
            given_name: hello.agent_name.as_deref().and_then(crate::state::clean_given_name),
            workspace: facts.workspaces.first().cloned(),
            waiting: waiting_tx,
        },
    )
    .await;
    let agent = Agent {
        connection_id: id,
        cwd: hello.cwd.clone(),
        editor_id: hello.editor_id.clone(),
        workspace: RwLock::new(facts.workspaces.first().cloned()),
        env: facts.env.clone(),
        hung_up: tokio_util::sync::CancellationToken::new(),
        subscriptions: Subscriptions::default(),
        closed: CancellationToken::new(),
        name: std::sync::OnceLock::new(),
        waiting,
    };
    let reader = hangup::HangupReader::new(reader, agent.hung_up.clone());
    let closed = agent.closed.clone();
    let tasks = tasks::Tasks::new(closed.clone());
    let server = ParleyMcp { context: context.clone(), agent: Arc::new(agent), tool_router: shared_router(), tasks };
    let ct = context.shutdown.close.child_token();
    match rmcp::service::serve_server_with_ct(server, (reader, writer), ct).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => tracing::debug!(connection = id, "MCP session ended before it began: {e}"),
    }
    closed.cancel();
    crate::usecases::agents::left(context, id).await;
    Ok(())
}

/// The name an agent's comments go under: the client's own name, as its
/// `initialize` or (2026-07-28) each request's `_meta` gives it.
pub(crate) fn author_of(context: &RequestContext<RoleServer>) -> String {
    context.client_info().map(|info| info.name).filter(|name| !name.trim().is_empty()).unwrap_or_else(|| "agent".into())
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ParleyMcp {
    fn get_info(&self) -> ServerConfig {
        // No listChanged anywhere: the tools, the prompts and the two
        // resources are the same for the whole connection. The tasks
        // extension: the waits run as tasks for hosts that declare it.
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tasks()
            .build();
        // A Claude Code started with channels takes a person's messages
        // pushed at once (`notifications/claude/channel`).
        capabilities.experimental = Some([(agents::CHANNEL.to_owned(), Default::default())].into());
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("parley", parley_protocol::BUILD_VERSION))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if tasks::declared(&context)
            && let Some(answer) = self.call_as_task(&request, &context).await
        {
            return Ok(answer);
        }
        self.call_tool_delivering(request, context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.task_state(&request.task_id, &context).await?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update(&request.task_id)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(&request.task_id)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.resource_contents(&request.uri, &context).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Ok(prompts::get(&request.name, request.arguments.as_ref())?.into())
    }

    #[allow(deprecated)] // resources/subscribe is the legacy era's; listen below is the modern one's.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = resources::offered(&request.uri)?;
        // Listen before answering, so no change after the answer is missed.
        let changes = self.context.state.changes();
        if !self.agent.subscriptions.subscribe(uri) {
            return Ok(());
        }
        let agent = self.agent.clone();
        let peer = context.peer.clone();
        tokio::spawn(async move {
            let wanted = {
                let agent = agent.clone();
                move || (agent.workspace.read().ok().and_then(|w| w.clone()), agent.subscriptions.current())
            };
            let send = |uri: &'static str| {
                let peer = peer.clone();
                async move { peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_ok() }
            };
            tokio::select! {
                () = agent.closed.cancelled() => {}
                () = subscriptions::forward(changes, wanted, send) => {}
            }
        });
        Ok(())
    }

    #[allow(deprecated)] // See subscribe.
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.agent.subscriptions.unsubscribe(resources::offered(&request.uri)?);
        Ok(())
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        // rmcp acknowledges the stream between this and `listen`: listen
        // here, so a change right after the acknowledgement is told too.
        self.agent.subscriptions.keep_early(self.context.state.changes());
        // rmcp keeps what was both asked for and offered here.
        Some(SubscriptionFilter::builder().resource_subscriptions(RESOURCES).build())
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let changes = self.agent.subscriptions.take_early().unwrap_or_else(|| self.context.state.changes());
        let accepted: std::collections::BTreeSet<&'static str> = subscription
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .filter_map(|uri| subscriptions::resource(uri))
            .collect();
        let agent = self.agent.clone();
        let wanted = move || (agent.workspace.read().ok().and_then(|w| w.clone()), accepted.clone());
        let sink = subscription.sink().clone();
        let send = |uri: &'static str| {
            let sink = sink.clone();
            async move { sink.notify_resource_updated(uri).await.is_ok() }
        };
        tokio::select! {
            () = subscription.cancelled() => {}
            () = self.agent.closed.cancelled() => {}
            () = subscriptions::forward(changes, wanted, send) => {}
        }
        Ok(())
    }

    #[allow(deprecated)] // Roots are deprecated in 2026-07-28 but legacy hosts still offer them.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(info) = context.peer.peer_info() {
            self.host_known(&info.client_info, Some(&info.capabilities), &context.peer).await;
        }
        let offers_roots = context.peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
        if !offers_roots {
            return;
        }
        let agent = self.agent.clone();
        let peer = context.peer.clone();
        let cx = self.context.clone();
        // Asked in the background: the client answers only after it has seen
        // this notification handled.
        tokio::spawn(async move {
            match tokio::time::timeout(Duration::from_secs(5), peer.list_roots()).await {
                Ok(Ok(roots)) => {
                    if let Some(root) = roots.roots.first() {
                        let path = workspace::real(&workspace::path_from_uri(&root.uri), std::path::Path::new("/"));
                        tracing::debug!(
                            connection = agent.connection_id,
                            "agent workspace from roots: {}",
                            path.display()
                        );
                        if let Ok(mut workspace) = agent.workspace.write() {
                            *workspace = Some(path.clone());
                        }
                        crate::usecases::agents::workspace_known(&cx, agent.connection_id, path).await;
                    }
                }
                Ok(Err(e)) => tracing::debug!(connection = agent.connection_id, "roots/list failed: {e}"),
                Err(_) => tracing::debug!(connection = agent.connection_id, "roots/list timed out"),
            }
        });
    }
}

impl ParleyMcp {
    fn workspace(&self) -> Option<PathBuf> {
        self.agent.workspace.read().ok().and_then(|w| w.clone())
    }

    /// The folder feedback is scoped to: the agent's workspace.
    fn scope(&self) -> Result<PathBuf, String> {
        self.workspace()
            .ok_or_else(|| error_text("this agent's workspace is unknown: start the agent inside the project folder"))
    }
}

/// Decodes a tool call's arguments as the tool does when it is called
/// (rmcp's `Parameters`: absent arguments read as `{}`, unknown ones refused)
/// and makes the checks of them that need no state, with no connection: the
/// fuzz targets reach every tool's argument types through it. `None` for a
/// tool this server does not have; `Err` is what the agent would read.
pub fn check_tool_arguments(tool: &str, arguments: Option<rmcp::model::JsonObject>) -> Option<Result<(), String>> {
    fn decode<T: serde::de::DeserializeOwned>(arguments: rmcp::model::JsonObject) -> Result<T, String> {
        rmcp::handler::server::tool::parse_json_object::<T>(arguments).map_err(|e| e.message.into_owned())
    }
    let arguments = arguments.unwrap_or_default();
    Some(match tool {
        "present_review" => decode::<reviews::PresentReviewArgs>(arguments)
            .and_then(|mut args| args.presentation().map(drop).map_err(errors::present)),
        "get_selection" | "get_feedback_summary" => decode::<NoArgs>(arguments).map(drop),
        "get_feedback" => decode::<feedback::GetFeedbackArgs>(arguments).and_then(|args| {
            let (offset, limit) = args.page();
            crate::usecases::feedback::agent_page(offset, limit).map(drop).map_err(errors::feedback)
        }),
        "resolve_feedback" => decode::<feedback::ResolveFeedbackArgs>(arguments).map(drop),
        "reply_feedback" => decode::<feedback::ReplyFeedbackArgs>(arguments).map(drop),
        "add_feedback" => decode::<feedback::AddFeedbackArgs>(arguments).and_then(|args| {
            feedback::line("startLine", args.start_line)?;
            feedback::line("endLine", args.end_line.unwrap_or(args.start_line)).map(drop)
        }),
        "request_review" => decode::<sessions::RequestReviewArgs>(arguments).map(drop),
        "await_review" => decode::<sessions::AwaitArgs>(arguments).map(drop),
        "cancel_review" => decode::<sessions::CancelArgs>(arguments).map(drop),
        "get_review_history" => decode::<sessions::HistoryArgs>(arguments).map(drop),
        "mark_review_complete" => decode::<sessions::CompleteArgs>(arguments).map(drop),
        "present_walkthrough" => decode::<walkthroughs::PresentWalkthroughArgs>(arguments).map(drop),
        "get_diagnostics" => decode::<diagnostics::DiagnosticsArgs>(arguments).map(drop),
        "sync_pull_request" => decode::<pull_requests::SyncArgs>(arguments).map(drop),
        _ => return None,
    })
}

/// Every tool's name and input schema, as `tools/list` shows them.
pub fn tool_input_schemas() -> Vec<(String, serde_json::Value)> {
    shared_router()
        .list_all()
        .into_iter()
        .map(|tool| (tool.name.into_owned(), serde_json::Value::Object((*tool.input_schema).clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tool's arguments are checked, and each refuses an argument its
    /// schema does not name.
    #[test]
    fn every_tool_checks_its_arguments_and_refuses_unknown_ones() {
        let tools = tool_input_schemas();
        assert_eq!(tools.len(), 15, "{:?}", tools.iter().map(|(name, _)| name).collect::<Vec<_>>());
        for (name, schema) in tools {
            assert!(check_tool_arguments(&name, None).is_some(), "check_tool_arguments does not know {name}");
            let mut unknown = rmcp::model::JsonObject::new();
            unknown.insert("notAnArgument".into(), serde_json::json!(1));
            let refused = check_tool_arguments(&name, Some(unknown)).expect("known").expect_err("refused");
            assert!(refused.contains("unknown field `notAnArgument`"), "{name}: {refused}");
            assert!(schema["properties"].get("notAnArgument").is_none());
        }
        assert_eq!(check_tool_arguments("no_such_tool", None), None);
    }
}
