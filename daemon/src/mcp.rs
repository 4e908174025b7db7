//! The MCP server one agent talks to through its shim: one rmcp server per
//! `mcp` connection, serving both the 2026-07-28 handshake and `initialize`.
//! The only module that imports rmcp.

mod errors;
mod feedback;
mod hangup;
mod prompts;
mod rounds;
mod schema;
mod sessions;
mod subscriptions;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use parley_protocol::hello::Hello;
use parley_protocol::methods::{SELECTION_GET, Selection};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolResult, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use tokio::io::BufReader;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::context::Context;
use crate::reviews::{Presentation, Review};
use crate::routing::Reason;
use crate::state::{ClientFacts, Outbound, PickedEditor};
use crate::usecases::{feedback as threads, reviews};
use crate::{position, workspace};
use errors::error_text;
use feedback::{
    AddFeedbackArgs, AddResult, FeedbackList, GetFeedbackArgs, ReplyFeedbackArgs, ReplyResult, ResolveFeedbackArgs,
    ResolveResult, SummaryResult,
};
use sessions::RequestReviewArgs;
use subscriptions::{FEEDBACK_RESOURCE, RESOURCES, REVIEW_RESOURCE, Subscriptions};

/// The kept revisions of the workspace's review, newest first, as JSON.
const REVIEW_HISTORY_RESOURCE: &str = "parley://review/history";
/// One kept revision of the workspace's review, as markdown.
const REVIEW_REVISION_TEMPLATE: &str = "parley://review/{revision}";

/// How long an editor has to answer a selection request.
const SELECTION_TIMEOUT: Duration = Duration::from_secs(2);

const INSTRUCTIONS: &str = "\
Parley connects you to the humans you work with: what you present appears in their editor windows, and you can read what they select.

present_review shows a markdown review in every editor window open on its folder, and keeps it there across restarts.
- Structure: start with a short summary of what was implemented (fit for a commit message), then sections such as Context, Changes Made, Implementation Details, and end with design decisions and their rationale.
- References: write [`path:line`][] or [`path:start-end`][] (rustdoc style), or [text](path#L10-L20), with paths relative to baseUri (your workspace root by default). They become clickable links. Reference the most important lines — entry points of functions and types, not every change — and group related references. The result lists references that did not resolve (missing file, line past the end, path outside baseUri): fix them and present again.
- Modes: replace (default) for a new review; append to add context or answer a question; update-section, sparingly, to rewrite one section (matched by heading, any level) in place. Keep each call focused.

get_selection returns what the human has selected in the editor window you most likely mean (the window you run inside, else the one most recently focused on your workspace; a window on another project only when you pass anyWorkspace: true). Call it when the human says \"this\", \"here\" or \"the selected code\".

Feedback threads are comments on ranges of your workspace's files, left by humans (in their editor, or with `parley feedback add`) or by agents. They stay attached to their text while files change.
- Read them before you start a task on this workspace, after you are told they changed (a notification that parley://feedback was updated), and before you say your work is done: call get_feedback_summary to see whether there is feedback, then get_feedback (optionally for one file).
- Each thread has a state: anchored, moved, modified (the text changed since the comment; originalQuote shows what it was), orphaned (the text is gone), stale (the file changed and the text was not found again within Parley's bound on that work: the range is where it was last seen) or unreadable (the file is not UTF-8 text or cannot be read). For the last three, judge from originalQuote and the comments whether the comment still applies.
- Address a thread in the code, then reply_feedback to say what you did, and resolve_feedback once it is done. Ask with reply_feedback when a comment is unclear instead of guessing.
- add_feedback opens a thread on lines of a file: ask the human about that code there, or leave a note where it matters. Their answer arrives in the thread.
- The current review and the threads are also the resources parley://review and parley://feedback. Subscribe to them to be told when a human comments, replies or resolves, or a review is presented, without asking again and again. Earlier revisions of the review (a walkthrough a review round replaced, each round's review) stay readable: parley://review/history lists them, parley://review/{revision} reads one.
- The prompts address-feedback and review-loop walk through the two usual loops.

Review sessions: when you finish a significant piece of work, call request_review with a clear summary (what you were asked to do, what you did, design decisions and trade-offs), the design docs it must follow (relevant_docs) and any focus_areas. Parley captures your git diff (scope: all changes by default), checks it for secrets, runs the configured reviewer and returns its structured review, which also appears in the editor. Address the feedback (act on `verdict`), then call request_review again with previous_review_id to start the next round of the same session. When the review is approved (or you stop), call mark_review_complete. get_review_history shows past sessions. Reviews can take minutes: request_review waits up to wait_seconds (default 45) and, if the round is not done by then, answers status \"pending\" with the review_id; the round goes on in Parley whatever happens to the call. Then call await_review with that review_id (again if it answers pending) to get the finished round. cancel_review stops a round you no longer want. Each finding with a file and line also becomes a feedback thread there (with `finding` in get_feedback): reply to it saying what you did, or why not, and resolve it when done; the next round's reviewer reads those replies, and the open comments people left on the files you changed. When the user wants to review your change themselves, pass reviewer \"human\": they review the diff in their editor (or at a terminal) and their verdict comes back through await_review in the same format, which can take minutes or hours; keep calling await_review (or do other work and come back to it).

Ids: a threadId or review_id may be the whole id, a review's number such as 001, or a unique beginning of at least 4 characters.";

/// Arguments of `present_review`.
// Field docs are the schema descriptions agents read, written in the review
// reference format itself (`[`path:line`][]`), which rustdoc takes for links.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PresentReviewArgs {
    /// The review in markdown: a summary fit for a commit message, findings with file references ([`src/auth.rs:45`][]), and specific suggestions.
    #[schemars(required)]
    pub content: Option<String>,
    /// The folder references are relative to (a path or file:// URI); default: your workspace root.
    #[serde(rename = "baseUri")]
    pub base_uri: Option<String>,
    /// replace (default: the whole review), update-section (one section) or append (at the end).
    #[schemars(extend("enum" = ["replace", "update-section", "append"], "default" = "replace"))]
    pub mode: Option<String>,
    /// Section heading for update-section mode (e.g. "Summary", "Security Issues", "Performance").
    pub section: Option<String>,
}

/// What `present_review` reports back.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PresentReviewResult {
    /// Whether the review was stored and shown (or queued for windows that open later).
    pub success: bool,
    pub message: String,
    /// The folder the review belongs to and references resolve against.
    #[serde(rename = "baseUri")]
    pub base_uri: String,
    /// Counts this review's changes.
    pub revision: u64,
    /// The editor windows now showing it.
    pub delivered_to: Vec<DeliveredTo>,
    pub references: ReferenceReport,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DeliveredTo {
    pub editor: String,
    #[serde(rename = "editorId", skip_serializing_if = "Option::is_none")]
    pub editor_id: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReferenceReport {
    /// How many references resolved to an existing file and line.
    pub resolved: usize,
    /// References that point nowhere, with the reason.
    pub unresolved: Vec<UnresolvedReference>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct UnresolvedReference {
    /// The reference as written.
    pub reference: String,
    pub problem: String,
}

/// Arguments of a tool that takes none.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Arguments of `get_selection`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectionArgs {
    /// Also ask windows open on other projects than yours (default false).
    #[serde(rename = "anyWorkspace", default)]
    pub any_workspace: bool,
}

/// What `get_selection` returns. Lines and columns are 1-based; columns
/// count characters. Every field but `message` is null when nothing is selected.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelectionResult {
    pub selected_text: Option<String>,
    pub file_path: Option<String>,
    pub start_line: Option<u32>,
    pub start_column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub document_language: Option<String>,
    /// The editor window that answered.
    pub editor: Option<String>,
    /// True when that window is on another workspace than yours (only with anyWorkspace).
    #[serde(rename = "otherWorkspace", skip_serializing_if = "std::ops::Not::not")]
    pub other_workspace: bool,
    /// Why this window was asked, or why there is no selection.
    pub message: String,
}

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
}

/// The MCP server for one agent connection.
#[derive(Clone)]
pub struct ParleyMcp {
    context: Context,
    agent: Arc<Agent>,
    /// Built once per process: rmcp would otherwise rebuild it on every call.
    tool_router: Arc<ToolRouter<Self>>,
}

fn shared_router() -> Arc<ToolRouter<ParleyMcp>> {
    static ROUTER: std::sync::OnceLock<Arc<ToolRouter<ParleyMcp>>> = std::sync::OnceLock::new();
    ROUTER
        .get_or_init(|| {
            let mut router = ParleyMcp::tool_router() + ParleyMcp::round_tools();
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
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    id: u64,
    hello: &Hello,
    facts: ClientFacts,
    context: &Context,
) -> anyhow::Result<()> {
    let agent = Agent {
        connection_id: id,
        cwd: hello.cwd.clone(),
        editor_id: hello.editor_id.clone(),
        workspace: RwLock::new(facts.workspaces.first().cloned()),
        env: facts.env.clone(),
        hung_up: tokio_util::sync::CancellationToken::new(),
        subscriptions: Subscriptions::default(),
        closed: CancellationToken::new(),
    };
    let reader = hangup::HangupReader::new(reader, agent.hung_up.clone());
    let closed = agent.closed.clone();
    let server = ParleyMcp { context: context.clone(), agent: Arc::new(agent), tool_router: shared_router() };
    let ct = context.shutdown.close.child_token();
    match rmcp::service::serve_server_with_ct(server, (reader, writer), ct).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => tracing::debug!(connection = id, "MCP session ended before it began: {e}"),
    }
    closed.cancel();
    Ok(())
}

#[tool_router]
impl ParleyMcp {
    #[tool(
        description = "Show a markdown review in the review panel of every editor window on its folder (and of windows that open later). Write clear sections and actionable points; reference code as [`filename:line`][] (rustdoc-style): the result lists references that do not resolve.",
        title = "Present review",
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn present_review(
        &self,
        Parameters(args): Parameters<PresentReviewArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<PresentReviewResult>, String> {
        let _call = self.context.shutdown.call();
        let presentation =
            Presentation::new(args.content, args.mode.as_deref(), args.section).map_err(|e| e.to_string())?;
        let base = self.base_dir(args.base_uri.as_deref())?;
        let client = context.client_info().map(|info| info.name).filter(|name| !name.trim().is_empty());
        let source = crate::reviews::Source::Agent { client };
        let committed = reviews::present(&self.context, &base, &presentation, source).await.map_err(errors::present)?;
        Ok(Json(present_result(committed.review, committed.delivered_to)))
    }

    #[tool(
        description = "Get the text selected in the editor window the human most likely looks at (the one this agent runs in, else the last focused one on this workspace). Null fields and a message when nothing is selected or no editor is open on your workspace (anyWorkspace: true also asks other projects' windows).",
        title = "Get editor selection",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_selection(&self, Parameters(args): Parameters<SelectionArgs>) -> Json<SelectionResult> {
        let _call = self.context.shutdown.call();
        Json(self.selection(args.any_workspace).await)
    }

    #[tool(
        description = "Read the feedback threads on the workspace's files (or on filePath), re-anchored to the files on disk, by file and line (1-based; 0-based characters only on part of a line): comments, the text now at the thread (selectedText) and its state: anchored, moved, modified (see originalQuote, confidence), or orphaned: true. standing: open, seen (reading marks open threads seen by you), addressed. Up to limit threads (default 100); call again with nextOffset while present.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<FeedbackList>(),
        title = "Get feedback threads",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_feedback(
        &self,
        Parameters(args): Parameters<GetFeedbackArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        let _call = self.context.shutdown.call();
        let scope = self.scope()?;
        let file = match args.file_path.as_deref().filter(|p| !p.trim().is_empty()) {
            Some(path) => Some(feedback::file_in_scope(&scope, path)?),
            None => None,
        };
        let page = args.page()?;
        let (total, threads) = threads::list_page_for_agent(&self.context, &scope, file, &author_of(&context), page)
            .await
            .map_err(errors::feedback)?;
        let next = page.skip.saturating_add(threads.len());
        let next_offset = (next < total).then_some(next);
        let items = threads.into_iter().map(|t| feedback::item(t, &scope)).collect();
        Ok(feedback::list_result(FeedbackList { threads: items, total, next_offset }, page.skip))
    }

    #[tool(
        description = "Resolve a thread you addressed: it leaves the editor and get_feedback, shown resolved by you; note (what you did) is kept as its last comment. Returns {resolved, threadId}, with alreadyResolved: true when it was; an unknown thread gives an error.",
        title = "Resolve feedback thread",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn resolve_feedback(
        &self,
        Parameters(args): Parameters<ResolveFeedbackArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<ResolveResult>, String> {
        let _call = self.context.shutdown.call();
        let scope = self.scope()?;
        let (thread, already_resolved) =
            threads::resolve_for_agent(&self.context, &args.thread_id, &scope, author_of(&context), args.note)
                .await
                .map_err(errors::resolve)?;
        Ok(Json(ResolveResult { resolved: true, thread_id: thread.id, already_resolved }))
    }

    #[tool(
        description = "Get a workspace-wide overview of feedback: total threads and comments, files sorted by thread count, and how many threads are orphaned. All zeros when there is no feedback.",
        title = "Get feedback summary",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_feedback_summary(&self, Parameters(_): Parameters<NoArgs>) -> Result<Json<SummaryResult>, String> {
        let _call = self.context.shutdown.call();
        let scope = self.scope()?;
        let summary = threads::summary(&self.context, &scope).await.map_err(errors::feedback)?;
        Ok(Json(feedback::summary(summary)))
    }

    #[tool(
        description = "Answer a feedback thread: say what you changed, or ask the human a question. The reply appears in the editor under the thread.",
        title = "Reply to feedback thread",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn reply_feedback(
        &self,
        Parameters(args): Parameters<ReplyFeedbackArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<ReplyResult>, String> {
        let _call = self.context.shutdown.call();
        if args.body.trim().is_empty() {
            return Err(error_text("body is required: write the reply"));
        }
        let scope = self.scope()?;
        let (thread, comment) =
            threads::reply(&self.context, &args.thread_id, args.body, author_of(&context), Some(&scope))
                .await
                .map_err(errors::feedback)?;
        Ok(Json(ReplyResult { replied: true, thread_id: thread.id, comment: feedback::comment(&comment) }))
    }

    #[tool(
        description = "Open a thread on lines of a file to ask the human about that code or leave a note: it shows in their editor, and get_feedback shows their replies. Lines are 1-based, inclusive (endLine defaults to startLine); the thread follows them as the file changes. Returns the thread (as in get_feedback).",
        title = "Add feedback thread",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn add_feedback(
        &self,
        Parameters(args): Parameters<AddFeedbackArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<AddResult>, String> {
        let _call = self.context.shutdown.call();
        let scope = self.scope()?;
        let file = feedback::file_in_scope(&scope, &args.file_path)?;
        let ask = threads::AgentThread {
            file,
            start_line: feedback::line("startLine", args.start_line)?,
            end_line: feedback::line("endLine", args.end_line.unwrap_or(args.start_line))?,
            body: args.body,
            author: author_of(&context),
            scope: scope.clone(),
        };
        let thread = threads::create_for_agent(&self.context, ask).await.map_err(errors::feedback)?;
        Ok(Json(feedback::added(thread, &scope)))
    }
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
        // resources are the same for the whole connection.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("parley", parley_protocol::BUILD_VERSION))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(REVIEW_RESOURCE, "review")
                .with_title("Current review")
                .with_description("The review presented for this workspace, as markdown")
                .with_mime_type("text/markdown"),
            Resource::new(FEEDBACK_RESOURCE, "feedback")
                .with_title("Feedback threads")
                .with_description("The open feedback threads of this workspace, as get_feedback returns them")
                .with_mime_type("application/json"),
            Resource::new(REVIEW_HISTORY_RESOURCE, "review-history")
                .with_title("Review history")
                .with_description(
                    "The kept revisions of this workspace's review (the last 100), newest first: each one's revision, \
                     time, title and who made it (an agent's present_review, or a review round). Read one as \
                     parley://review/{revision}.",
                )
                .with_mime_type("application/json"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(REVIEW_REVISION_TEMPLATE, "review-revision")
                .with_title("Review revision")
                .with_description(
                    "One kept revision of this workspace's review, as markdown, e.g. an agent's walkthrough that a \
                     review round's review replaced; parley://review/history lists them",
                )
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let scope = self.scope().map_err(|e| ErrorData::internal_error(e, None))?;
        let text = match request.uri.as_str() {
            REVIEW_RESOURCE => {
                let found = reviews::list(&self.context, Some(vec![scope.clone()]))
                    .await
                    .map_err(|e| ErrorData::internal_error(errors::present(e), None))?;
                let review = found.into_iter().next();
                let markdown =
                    review.map_or_else(|| "No review has been presented for this workspace.".to_owned(), |r| r.content);
                ResourceContents::text(markdown, REVIEW_RESOURCE).with_mime_type("text/markdown")
            }
            FEEDBACK_RESOURCE => {
                let found = threads::list_for_agent(&self.context, &scope, None, &author_of(&context))
                    .await
                    .map_err(|e| ErrorData::internal_error(errors::feedback(e), None))?;
                let items: Vec<_> = found.into_iter().map(|t| feedback::item(t, &scope)).collect();
                let json = serde_json::to_string_pretty(&items).expect("feedback items always serialize");
                ResourceContents::text(json, FEEDBACK_RESOURCE).with_mime_type("application/json")
            }
            REVIEW_HISTORY_RESOURCE => {
                let found = reviews::history(&self.context, Some(vec![scope.clone()]))
                    .await
                    .map_err(|e| ErrorData::internal_error(errors::present(e), None))?;
                let revisions: Vec<_> = found.iter().map(crate::views::review_revision).collect();
                let json = serde_json::to_string_pretty(&revisions).map_err(|e| {
                    ErrorData::internal_error(format!("the review history did not serialize: {e}"), None)
                })?;
                ResourceContents::text(json, REVIEW_HISTORY_RESOURCE).with_mime_type("application/json")
            }
            other => {
                let Some(revision) = other.strip_prefix("parley://review/").and_then(|n| n.parse::<u64>().ok()) else {
                    return Err(ErrorData::resource_not_found(
                        format!(
                            "no resource {other}; Parley offers {REVIEW_RESOURCE}, {FEEDBACK_RESOURCE}, \
                             {REVIEW_HISTORY_RESOURCE} and {REVIEW_REVISION_TEMPLATE}"
                        ),
                        None,
                    ));
                };
                let review = reviews::revision(&self.context, &scope, revision).await.map_err(|e| match e {
                    reviews::PresentError::NotFound(text) => ErrorData::resource_not_found(text, None),
                    e => ErrorData::internal_error(errors::present(e), None),
                })?;
                ResourceContents::text(review.content, other.to_owned()).with_mime_type("text/markdown")
            }
        };
        Ok(ReadResourceResult::new(vec![text]).into())
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
        let uri = offered(&request.uri)?;
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
        self.agent.subscriptions.unsubscribe(offered(&request.uri)?);
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
        let offers_roots = context.peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
        if !offers_roots {
            return;
        }
        let agent = self.agent.clone();
        let peer = context.peer.clone();
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
                            *workspace = Some(path);
                        }
                    }
                }
                Ok(Err(e)) => tracing::debug!(connection = agent.connection_id, "roots/list failed: {e}"),
                Err(_) => tracing::debug!(connection = agent.connection_id, "roots/list timed out"),
            }
        });
    }
}

/// The resource `uri` names, or an error listing those Parley offers.
fn offered(uri: &str) -> Result<&'static str, ErrorData> {
    subscriptions::resource(uri).ok_or_else(|| {
        ErrorData::resource_not_found(
            format!("no resource {uri}; Parley offers {REVIEW_RESOURCE} and {FEEDBACK_RESOURCE}"),
            None,
        )
    })
}

impl ParleyMcp {
    fn workspace(&self) -> Option<PathBuf> {
        self.agent.workspace.read().ok().and_then(|w| w.clone())
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

    /// The folder feedback is scoped to: the agent's workspace.
    fn scope(&self) -> Result<PathBuf, String> {
        self.workspace()
            .ok_or_else(|| error_text("this agent's workspace is unknown: start the agent inside the project folder"))
    }

    /// The folder references resolve against: `baseUri` when given (relative
    /// to the agent's working directory), else the agent's workspace.
    fn base_dir(&self, base_uri: Option<&str>) -> Result<PathBuf, String> {
        let base = match base_uri.filter(|b| !b.trim().is_empty()) {
            Some(uri) => {
                let path = workspace::path_from_uri(uri.trim());
                let cwd = self.agent.cwd.clone().unwrap_or_else(|| PathBuf::from("/"));
                workspace::real(&path, &cwd)
            }
            None => self.workspace().ok_or(
                "baseUri is required here: this agent's working directory is unknown. Pass the absolute folder your references are relative to",
            )?,
        };
        if !base.is_dir() {
            return Err(format!(
                "baseUri {} is not a directory; pass the folder your file references are relative to",
                base.display()
            ));
        }
        Ok(base)
    }

    async fn selection(&self, any_workspace: bool) -> SelectionResult {
        let folder = self.workspace().or_else(|| self.agent.cwd.clone());
        let editor_id = self.agent.editor_id.clone();
        let picked = match self.context.state.pick_editor(editor_id, folder.clone(), any_workspace).await {
            Ok(Some(picked)) => picked,
            Ok(None) => {
                return SelectionResult {
                    message: "No editor window is connected to Parley. Open the workspace in VS Code (or Cursor, VSCodium) with the Parley extension, or in Neovim with the Parley plugin (the README says how to install either).".into(),
                    ..SelectionResult::default()
                };
            }
            Err(stopped) => {
                return SelectionResult { message: errors::stopped(stopped), ..SelectionResult::default() };
            }
        };
        let yours = folder.map_or_else(|| "unknown".to_owned(), |f| f.display().to_string());
        let theirs = picked.workspaces.iter().map(|w| w.display().to_string()).collect::<Vec<_>>().join(", ");
        let name = picked.name.clone();
        let why = match picked.reason {
            Reason::NamedByEnvironment => "the window this agent runs in".to_owned(),
            Reason::FocusedInWorkspace => "the most recently focused window on this workspace".to_owned(),
            Reason::OtherWorkspace => format!(
                "a window on ANOTHER workspace ({theirs}), not yours ({yours}): you asked for any workspace, so check \
                 this is the code the human means"
            ),
            Reason::NotInWorkspace => {
                return SelectionResult {
                    message: format!(
                        "No editor window is open on your workspace ({yours}), so nothing was taken. The most recently \
                         focused window, {name}, is on another project ({theirs}): call get_selection with \
                         anyWorkspace: true only if the human means code there."
                    ),
                    ..SelectionResult::default()
                };
            }
        };
        let other_workspace = picked.reason == Reason::OtherWorkspace;
        let (selection, note) = ask_editor(&picked).await;
        match selection {
            Some(selection) if !selection.text.is_empty() => {
                let text = selection_file_text(&selection.path).await;
                let mut result =
                    selection_result(selection, text, &picked, format!("Selection from {name}, {why}{note}."));
                result.other_workspace = other_workspace;
                result
            }
            _ => SelectionResult {
                editor: Some(name.clone()),
                other_workspace,
                message: format!("Nothing is selected in {name} ({why}){note}."),
                ..SelectionResult::default()
            },
        }
    }
}

/// The text of the file an editor's selection is in, to count its columns
/// as characters; `None` (columns as the editor counted them) for a file
/// that is not a regular one (a FIFO, `/dev/fd/63` from `nvim <(cmd)`, a
/// device), too large, not UTF-8, or slow to read.
async fn selection_file_text(path: &Path) -> Option<String> {
    /// The largest file whose columns are converted.
    const MAX_BYTES: u64 = 32 * 1024 * 1024;
    const READ_TIMEOUT: Duration = Duration::from_secs(2);
    let path = path.to_owned();
    let read = tokio::task::spawn_blocking(move || crate::regular_file::read(&path, MAX_BYTES));
    let bytes = tokio::time::timeout(READ_TIMEOUT, read).await.ok()?.ok()?.ok()?;
    String::from_utf8(bytes).ok()
}

/// Asks the editor for its selection; falls back to the last one it pushed
/// when it does not answer in time.
async fn ask_editor(picked: &PickedEditor) -> (Option<Selection>, &'static str) {
    let (reply, answer) = oneshot::channel();
    let request = Outbound::Request { method: SELECTION_GET, params: serde_json::json!({}), reply };
    if picked.outbox.try_send(request).is_err() {
        return (picked.last_selection.clone(), "; the window is busy, so this is the last selection it reported");
    }
    match tokio::time::timeout(SELECTION_TIMEOUT, answer).await {
        Ok(Ok(Ok(value))) => match serde_json::from_value::<Option<Selection>>(value) {
            Ok(selection) => (selection, ""),
            Err(_) => (picked.last_selection.clone(), "; the window answered in an unknown shape"),
        },
        Ok(Ok(Err(_))) | Ok(Err(_)) => (picked.last_selection.clone(), "; the window could not answer"),
        Err(_) => (picked.last_selection.clone(), "; the window did not answer within 2 s"),
    }
}

/// Converts an editor's selection for the agent; `lines` is the file's text,
/// used to count the editor's columns as characters.
fn selection_result(
    selection: Selection,
    lines: Option<String>,
    picked: &PickedEditor,
    message: String,
) -> SelectionResult {
    let column = |line: u32, character: u32| {
        let text = lines.as_deref().and_then(|t| t.lines().nth(line as usize)).unwrap_or("");
        position::to_char_column(text, character, picked.encoding) + 1
    };
    SelectionResult {
        start_line: Some(selection.start.line + 1),
        start_column: Some(column(selection.start.line, selection.start.character)),
        end_line: Some(selection.end.line + 1),
        end_column: Some(column(selection.end.line, selection.end.character)),
        file_path: Some(selection.path.display().to_string()),
        document_language: selection.language_id,
        selected_text: Some(selection.text),
        editor: Some(picked.name.clone()),
        other_workspace: false,
        message,
    }
}

fn present_result(review: Review, delivered: Vec<crate::state::Delivery>) -> PresentReviewResult {
    let unresolved: Vec<UnresolvedReference> = review
        .references
        .iter()
        .filter_map(|r| {
            r.problem
                .as_ref()
                .map(|problem| UnresolvedReference { reference: r.found.text.clone(), problem: problem.clone() })
        })
        .collect();
    let resolved = review.references.len() - unresolved.len();
    let shown = match delivered.len() {
        0 => format!(
            "Review stored for {}, but no editor window on that folder is connected, so nobody is looking at it yet; it appears when one connects (or run `parley watch`).",
            review.base.display()
        ),
        1 => "Review displayed in 1 editor window.".to_owned(),
        n => format!("Review displayed in {n} editor windows."),
    };
    let message = match unresolved.len() {
        0 => shown,
        n => format!("{shown} {n} reference(s) did not resolve; see references.unresolved."),
    };
    PresentReviewResult {
        success: true,
        message,
        base_uri: review.base.display().to_string(),
        revision: review.revision,
        delivered_to: delivered.into_iter().map(|d| DeliveredTo { editor: d.name, editor_id: d.editor_id }).collect(),
        references: ReferenceReport { resolved, unresolved },
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
        "present_review" => decode::<PresentReviewArgs>(arguments).and_then(|args| {
            Presentation::new(args.content, args.mode.as_deref(), args.section).map(drop).map_err(|e| e.to_string())
        }),
        "get_selection" | "get_feedback_summary" => decode::<NoArgs>(arguments).map(drop),
        "get_feedback" => decode::<GetFeedbackArgs>(arguments).and_then(|args| args.page().map(drop)),
        "resolve_feedback" => decode::<ResolveFeedbackArgs>(arguments).map(drop),
        "reply_feedback" => decode::<ReplyFeedbackArgs>(arguments).map(drop),
        "add_feedback" => decode::<AddFeedbackArgs>(arguments).and_then(|args| {
            feedback::line("startLine", args.start_line)?;
            feedback::line("endLine", args.end_line.unwrap_or(args.start_line)).map(drop)
        }),
        "request_review" => decode::<RequestReviewArgs>(arguments).map(drop),
        "await_review" => decode::<sessions::AwaitArgs>(arguments).map(drop),
        "cancel_review" => decode::<sessions::CancelArgs>(arguments).map(drop),
        "get_review_history" => decode::<sessions::HistoryArgs>(arguments).map(drop),
        "mark_review_complete" => decode::<sessions::CompleteArgs>(arguments).map(drop),
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
        assert_eq!(tools.len(), 12, "{:?}", tools.iter().map(|(name, _)| name).collect::<Vec<_>>());
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
