//! Hub methods after `hello`: their names and the shapes of their parameters
//! and results. `docs/protocol.md` documents each with a JSON example.
//!
//! Every request a client sends is a [`Method`]: a name tied to its params
//! and result types, so the daemon's dispatch and a client cannot drift from
//! them. Every params type rejects unknown fields; a method without params
//! takes [`NoParams`] (absent, `null` or `{}`).
//!
//! Positions are 0-based lines and characters counted in the encoding the
//! client declared in its hello.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A client → daemon request: its name, its params and its result.
pub trait Method {
    const NAME: &'static str;
    type Params: Serialize + DeserializeOwned;
    type Result: Serialize + DeserializeOwned;
    /// Whether `editor` connections may call it.
    const FOR_EDITORS: bool = true;
    /// Whether `cli` connections may call it.
    const FOR_CLI: bool = true;
}

/// A notification: its name and its params.
pub trait NotificationMethod {
    const NAME: &'static str;
    type Params: Serialize + DeserializeOwned;
}

/// The params of a method that takes none: absent, `null` or `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

macro_rules! method {
    ($(#[$doc:meta])* $name:ident = $wire:expr, $params:ty => $result:ty $(, $flag:ident = $value:expr)*) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}
        impl Method for $name {
            const NAME: &'static str = $wire;
            type Params = $params;
            type Result = $result;
            $(const $flag: bool = $value;)*
        }
    };
}

macro_rules! notification {
    ($(#[$doc:meta])* $name:ident = $wire:expr, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}
        impl NotificationMethod for $name {
            const NAME: &'static str = $wire;
            type Params = $params;
        }
    };
}

method!(
    /// The reviews of a workspace.
    ReviewGet = REVIEW_GET, ReviewGetParams => ReviewGetResult
);
method!(
    /// The kept revisions of a workspace's reviews.
    ReviewHistory = REVIEW_HISTORY, ReviewHistoryParams => ReviewHistoryResult
);
method!(
    /// The events after a sequence number.
    EventsReplay = EVENTS_REPLAY, EventsReplayParams => EventsReplayResult
);
method!(
    /// The daemon's state.
    StatusRequest = STATUS, NoParams => Status
);
method!(
    /// Stop the daemon cleanly.
    Shutdown = SHUTDOWN, ShutdownParams => ShutdownResult
);
method!(
    /// The threads of a workspace or one file.
    FeedbackList = FEEDBACK_LIST, FeedbackListParams => FeedbackListResult
);
method!(
    /// A new thread with its first comment.
    FeedbackCreate = FEEDBACK_CREATE, FeedbackCreateParams => ThreadResult
);
method!(
    /// A comment added to an open thread.
    FeedbackReply = FEEDBACK_REPLY, FeedbackReplyParams => ThreadResult
);
method!(
    /// A thread marked addressed.
    FeedbackResolve = FEEDBACK_RESOLVE, ThreadIdParams => ThreadResult
);
method!(
    /// A resolved thread brought back.
    FeedbackReopen = FEEDBACK_REOPEN, ThreadIdParams => ThreadResult
);
method!(
    /// An editor's unsaved buffer; answered with the file's threads in it.
    BufferChanged = BUFFER_CHANGED, BufferChangedParams => FeedbackListResult, FOR_CLI = false
);
method!(
    /// A CLI connection asks for the events of some folders.
    Subscribe = SUBSCRIBE, SubscribeParams => SubscribeResult, FOR_EDITORS = false
);
method!(
    /// Everything, as a JSON backup.
    StoreExport = STORE_EXPORT, NoParams => ExportDocument
);
method!(
    /// Restore a JSON backup.
    StoreImport = STORE_IMPORT, ExportDocument => ImportResult
);
method!(
    /// Everything, as a JSON backup the daemon writes to a file.
    StoreExportFile = STORE_EXPORT_FILE, StoreFileParams => ExportFileResult
);
method!(
    /// Restore a JSON backup the daemon reads from a file.
    StoreImportFile = STORE_IMPORT_FILE, StoreFileParams => ImportResult
);
method!(
    /// Run a review round; answered when it is done.
    ReviewRequest = REVIEW_REQUEST, ReviewRequestParams => ReviewRequestResult
);
method!(
    /// Wait for a session's running round; answered when it is done.
    ReviewAwait = REVIEW_AWAIT, ReviewAwaitParams => ReviewRequestResult, FOR_EDITORS = false
);
method!(
    /// Stop a session's running round.
    ReviewCancel = REVIEW_CANCEL, ReviewCancelParams => ReviewCancelResult, FOR_EDITORS = false
);
method!(
    /// Review sessions, newest first.
    SessionsList = SESSIONS_LIST, SessionsListParams => SessionsResult
);
method!(
    /// One review session.
    SessionsGet = SESSIONS_GET, SessionsGetParams => SessionsResult
);
method!(
    /// Complete a review session with its final status.
    SessionsComplete = SESSIONS_COMPLETE, SessionsCompleteParams => SessionsResult
);

notification!(
    /// The window gained or lost focus.
    EditorFocus = EDITOR_FOCUS, FocusParams
);
notification!(
    /// The editor's selection changed.
    SelectionChangedNotification = SELECTION_CHANGED, SelectionChangedParams
);
notification!(
    /// A review was presented or updated.
    ReviewUpdatedNotification = REVIEW_UPDATED, ReviewUpdated
);
notification!(
    /// A thread was created, changed, moved or resolved.
    FeedbackChangedNotification = FEEDBACK_CHANGED, FeedbackChanged
);
notification!(
    /// How a `review/request` is getting on.
    ReviewProgressNotification = REVIEW_PROGRESS, ReviewProgress
);
notification!(
    /// The daemon is stopping on purpose: wait for one to come back rather
    /// than start one.
    DaemonStoppingNotification = DAEMON_STOPPING, DaemonStopping
);

/// The one list of hub methods: every request a client sends after `hello`,
/// as the paths of their [`Method`] types, in the order `docs/protocol.md`
/// documents them, handed to `$callback!` as one comma-separated list.
/// Whatever must cover every method iterates it (the wire snapshots and the
/// doc's examples in `protocol/tests`), so a method added to it without its
/// types' examples fails to build, and one left out of it fails those tests.
#[macro_export]
macro_rules! for_each_method {
    ($callback:ident) => {
        $callback!(
            $crate::methods::ReviewGet,
            $crate::methods::ReviewHistory,
            $crate::methods::FeedbackList,
            $crate::methods::FeedbackCreate,
            $crate::methods::FeedbackReply,
            $crate::methods::FeedbackResolve,
            $crate::methods::FeedbackReopen,
            $crate::methods::BufferChanged,
            $crate::methods::ReviewRequest,
            $crate::methods::ReviewAwait,
            $crate::methods::ReviewCancel,
            $crate::methods::SessionsList,
            $crate::methods::SessionsGet,
            $crate::methods::SessionsComplete,
            $crate::methods::Inbox,
            $crate::methods::RoundGet,
            $crate::methods::RoundComment,
            $crate::methods::RoundUncomment,
            $crate::methods::RoundSubmit,
            $crate::methods::PlanOpen,
            $crate::methods::PlanAwait,
            $crate::methods::PlanAnsweredElsewhere,
            $crate::methods::PlanNotes,
            $crate::methods::Subscribe,
            $crate::methods::EventsReplay,
            $crate::methods::AgentsList,
            $crate::methods::AgentAsk,
            $crate::methods::AgentResend,
            $crate::methods::AgentTyped,
            $crate::methods::MessagesTake,
            $crate::methods::WalkthroughList,
            $crate::methods::WalkthroughGet,
            $crate::methods::WalkthroughAct,
            $crate::methods::WalkthroughResend,
            $crate::methods::PrLink,
            $crate::methods::PrStatus,
            $crate::methods::PrPull,
            $crate::methods::PrPush,
            $crate::methods::StatusRequest,
            $crate::methods::StoreExport,
            $crate::methods::StoreImport,
            $crate::methods::StoreExportFile,
            $crate::methods::StoreImportFile,
            $crate::methods::Shutdown
        )
    };
}

/// The one list of hub notifications, both ways, as [`for_each_method!`]
/// lists the requests.
#[macro_export]
macro_rules! for_each_notification {
    ($callback:ident) => {
        $callback!(
            $crate::methods::EditorFocus,
            $crate::methods::SelectionChangedNotification,
            $crate::methods::ReviewUpdatedNotification,
            $crate::methods::FeedbackChangedNotification,
            $crate::methods::ReviewProgressNotification,
            $crate::methods::DaemonStoppingNotification,
            $crate::methods::RoundRequestedNotification,
            $crate::methods::RoundChangedNotification,
            $crate::methods::AgentsChangedNotification,
            $crate::methods::WalkthroughUpdatedNotification
        )
    };
}

macro_rules! method_names {
    ($($method:path),* $(,)?) => {
        &[$(<$method as Method>::NAME),*]
    };
}

macro_rules! notification_names {
    ($($notification:path),* $(,)?) => {
        &[$(<$notification as NotificationMethod>::NAME),*]
    };
}

/// The name of every method of [`for_each_method!`], in its order.
pub const METHOD_NAMES: &[&str] = crate::for_each_method!(method_names);

/// The name of every notification of [`for_each_notification!`], in its order.
pub const NOTIFICATION_NAMES: &[&str] = crate::for_each_notification!(notification_names);

/// Daemon → client notification: the daemon stops accepting and will close
/// every connection shortly.
pub const DAEMON_STOPPING: &str = "daemon/stopping";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonStopping {
    /// `requested` (`parley stop`, `daemon/shutdown`), `signal` (SIGTERM or
    /// SIGINT, as a service manager sends) or `handover` (a newer build of
    /// Parley takes over at once).
    pub reason: String,
}

/// Editor → daemon notification: the window gained or lost focus.
pub const EDITOR_FOCUS: &str = "editor/focus";
/// Editor → daemon notification: the selection changed (optional; cached as a
/// fallback when the editor is slow to answer `selection/get`).
pub const SELECTION_CHANGED: &str = "selection/changed";
/// Daemon → editor request: the current selection, or null.
pub const SELECTION_GET: &str = "selection/get";
/// Client → daemon request: the reviews for a workspace.
pub const REVIEW_GET: &str = "review/get";
/// Client → daemon request: the kept revisions of the reviews for a workspace.
pub const REVIEW_HISTORY: &str = "review/history";
/// Daemon → editor notification: a review was presented or updated.
pub const REVIEW_UPDATED: &str = "review/updated";
/// Client → daemon request: the events after a sequence number.
pub const EVENTS_REPLAY: &str = "events/replay";
/// Client → daemon request: the daemon's state.
pub const STATUS: &str = "status";
/// Client → daemon request: stop the daemon cleanly.
pub const SHUTDOWN: &str = "daemon/shutdown";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

/// A selection as an editor reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Absolute path of the file (or the buffer's name when it has no file).
    pub path: PathBuf,
    pub text: String,
    pub start: Position,
    pub end: Position,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FocusParams {
    pub focused: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectionChangedParams {
    pub selection: Option<Selection>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewGetParams {
    /// A folder: reviews whose base is inside it. Defaults to the connection's
    /// workspaces (editors) or to every review (CLI).
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// One kept revision instead of the current review: `workspace` is then
    /// required and must hold exactly one review (or be its base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewHistoryParams {
    /// A folder: the reviews whose base is inside it. Defaults as for
    /// `review/get`.
    #[serde(default)]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewHistoryResult {
    /// Newest first.
    pub revisions: Vec<ReviewRevision>,
}

/// One kept revision of a review, without its content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRevision {
    pub base_uri: PathBuf,
    pub revision: u64,
    /// RFC 3339.
    pub updated_at: String,
    pub source: ReviewSource,
    /// The first heading (or first line) of the document.
    pub title: String,
    /// The document's length in bytes.
    pub bytes: usize,
}

/// Who made a revision of a review.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReviewSource {
    /// `agent` (`present_review`), `round` (a review round's rendered
    /// review), `person`, or `unrecorded` (stored before sources were kept).
    pub kind: String,
    /// For people: "presented by claude-code", "round 2 of review 2026-11-21-001".
    pub label: String,
    /// The agent's MCP client name, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The review session of a round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The person who wrote it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewGetResult {
    /// Newest first.
    pub reviews: Vec<Review>,
}

/// A review as shown in editors: one per base directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// The absolute directory references are resolved against.
    pub base_uri: PathBuf,
    /// The whole markdown document.
    pub content: String,
    /// Counts the changes to this review, starting at 1.
    pub revision: u64,
    /// RFC 3339.
    pub updated_at: String,
    /// Every file reference in the document, in order.
    pub references: Vec<Reference>,
    /// Who made this revision.
    #[serde(default)]
    pub source: ReviewSource,
}

/// A file reference found in a review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The reference as written, e.g. `` [`src/auth.ts:23`][] ``.
    pub text: String,
    /// The path as written.
    pub path: String,
    /// 1-based first line, when the reference names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based last line of a range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// The absolute file, when the reference resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_path: Option<PathBuf>,
    /// Why it did not resolve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewUpdated {
    pub seq: u64,
    pub review: Review,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsReplayParams {
    /// The last sequence number the client saw; 0 (the default) for every
    /// event still kept.
    #[serde(default)]
    pub after: u64,
    /// The daemon instance `after` came from (from hello); when it is not the
    /// running one, the replay is incomplete and the client must refetch.
    #[serde(default)]
    pub instance: Option<String>,
}

/// One event as it was sent, for replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub seq: u64,
    pub method: String,
    pub params: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsReplayResult {
    pub events: Vec<Event>,
    /// False when events after `after` have been forgotten, or came from
    /// another run of the daemon: the client should fetch current state
    /// (`review/get`, `feedback/list`) instead.
    pub complete: bool,
    pub seq: u64,
    pub instance: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectionCounts {
    pub mcp: usize,
    pub editor: usize,
    pub cli: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditorSummary {
    pub connection_id: u64,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_id: Option<String>,
    pub workspaces: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub pid: u32,
    pub version: String,
    pub protocol: u32,
    pub socket: PathBuf,
    pub data_dir: PathBuf,
    /// RFC 3339.
    pub started_at: String,
    pub uptime_secs: u64,
    pub connections: ConnectionCounts,
    pub editors: Vec<EditorSummary>,
    /// Every folder the daemon knows of: editor workspaces, agent workspaces
    /// and review bases.
    pub workspaces: Vec<PathBuf>,
    pub reviews: usize,
    /// Open feedback threads.
    pub threads: usize,
    /// Set when the store was found corrupt at start and recovered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_notice: Option<String>,
    /// Where the daemon's log goes (absent from daemons older than this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogDestination>,
}

/// Where a daemon's log (its stderr) goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum LogDestination {
    /// A file: for a daemon a client started, the one beside the socket.
    File { path: PathBuf },
    /// systemd's journal: the daemon runs as a service.
    Journal,
    /// The terminal `parley daemon` was started from.
    Terminal,
    /// Somewhere that cannot be named (a pipe, `/dev/null`).
    Elsewhere,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShutdownParams {
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShutdownResult {
    /// Always true: the daemon stops accepting, finishes its calls, and exits.
    pub stopping: bool,
}

/// Client → daemon request: the open threads of a workspace or one file.
pub const FEEDBACK_LIST: &str = "feedback/list";
/// Client → daemon request: a new thread on a range, with its first comment.
pub const FEEDBACK_CREATE: &str = "feedback/create";
/// Client → daemon request: a comment added to a thread.
pub const FEEDBACK_REPLY: &str = "feedback/reply";
/// Client → daemon request: a thread marked addressed (hidden, kept).
pub const FEEDBACK_RESOLVE: &str = "feedback/resolve";
/// Client → daemon request: a resolved thread brought back.
pub const FEEDBACK_REOPEN: &str = "feedback/reopen";
/// Editor → daemon request: unsaved text of a buffer; answered with the
/// file's threads positioned in that text.
pub const BUFFER_CHANGED: &str = "buffer/changed";
/// Daemon → client notification: a thread was created, changed or resolved.
pub const FEEDBACK_CHANGED: &str = "feedback/changed";
/// CLI → daemon request: receive events for some folders, as editors do.
pub const SUBSCRIBE: &str = "subscribe";
/// CLI → daemon request: everything, as a JSON backup.
pub const STORE_EXPORT: &str = "store/export";
/// CLI → daemon request: restore a JSON backup.
pub const STORE_IMPORT: &str = "store/import";
/// CLI → daemon request: write the JSON backup to a file, however large.
pub const STORE_EXPORT_FILE: &str = "store/export_file";
/// CLI → daemon request: restore the JSON backup in a file, however large.
pub const STORE_IMPORT_FILE: &str = "store/import_file";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

/// A feedback thread as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    pub id: String,
    /// The workspace folder it belongs to.
    pub workspace: PathBuf,
    /// Relative to `workspace`, `/`-separated.
    pub path: String,
    /// The absolute file.
    pub file: PathBuf,
    /// Where the text is now (or was last seen, when orphaned), 0-based, in
    /// the client's position encoding.
    pub range: Range,
    /// The text at `range`.
    pub quote: String,
    /// The text when the thread was made.
    pub original_quote: String,
    /// `anchored`, `moved`, `modified`, `orphaned` or `unreadable`.
    pub state: String,
    /// 1 for anchored and moved, the similarity for modified, 0 otherwise.
    pub confidence: f64,
    pub resolved: bool,
    pub comments: Vec<Comment>,
    pub created_at: String,
    pub updated_at: String,
    /// For a thread a review round opened: the reviewer's finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<ThreadFinding>,
    /// Where the thread stands with the agents working for the human:
    /// `open` (no agent has read it since a human last commented), `seen`,
    /// `addressed` (an agent replied or resolved it) or `resolved`.
    #[serde(default = "open")]
    pub standing: String,
    /// The agent that first read it since a human last commented, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_at: Option<String>,
    /// The agent that last replied to or resolved it, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addressed_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addressed_at: Option<String>,
    /// While resolved: `human` or `agent` (named in `addressed_by`), and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
    /// The thread's messages to agents (a person's question or comment
    /// addressed to one), each with where it stands, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deliveries: Vec<Delivery>,
    /// For a comment of a walkthrough: which, and which of its blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walkthrough: Option<ThreadWalkthrough>,
    /// For a thread synced with a pull request's review thread on GitHub:
    /// where it is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<ThreadGithub>,
}

/// Where a thread is on GitHub: the pull request, a link for a person, and
/// how GitHub sees its lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadGithub {
    /// `OWNER/REPO#NUMBER`.
    pub pull_request: String,
    /// The thread's first comment on GitHub.
    pub url: String,
    /// `LEFT` (on the base's lines: removed ones) or `RIGHT`.
    pub side: String,
    /// GitHub's lines, 1-based (the original ones for an outdated thread).
    pub start_line: u32,
    pub end_line: u32,
    /// The lines it was made on have changed since on GitHub.
    pub outdated: bool,
}

/// A person's message to an agent (the thread's comment `comment_id`), and
/// where it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub comment_id: String,
    /// The agent's short name (`agents/list`).
    pub agent: String,
    /// `waiting` (not yet handed to the agent), `delivered`, `read` (the
    /// agent fetched the thread) or `answered` (the agent replied).
    pub state: String,
    /// Once delivered: how it reached the agent. `tool-answer` (a note at
    /// the end of its next Parley tool answer), `wait` (the answer of a
    /// Parley call it was waiting in), `channel` (pushed to the host at
    /// once) or `hook` (handed to a host hook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// RFC 3339: when it was asked, and when its state last changed.
    pub asked_at: String,
    pub updated_at: String,
}

fn open() -> String {
    "open".into()
}

/// What a reviewer said at a thread's place (the first round that said it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadFinding {
    /// The review session, and the round that raised it.
    pub review_id: String,
    pub round: u32,
    /// `critical`, `major`, `minor` or `suggestion`.
    pub severity: String,
    pub category: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comment {
    pub id: String,
    pub body: String,
    pub author: String,
    pub created_at: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackListParams {
    /// A folder; defaults to the connection's workspaces (editors) or, for
    /// the CLI, the git root holding its working directory.
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// One file (absolute, or relative to the workspace).
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// Include resolved threads.
    #[serde(default)]
    pub include_resolved: bool,
    /// How many threads of the listing to skip (with `limit`, to read a
    /// large workspace a page at a time).
    #[serde(default)]
    pub offset: usize,
    /// At most this many threads; all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackListResult {
    /// Ordered by file, then line.
    pub threads: Vec<Thread>,
    /// How many threads the whole listing holds, whatever `offset` and
    /// `limit` let through.
    #[serde(default)]
    pub total: usize,
    /// When more threads follow (past `limit`, or past the bytes one answer
    /// carries, about 4 MiB): the `offset` to ask for next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackCreateParams {
    /// The absolute file.
    pub path: PathBuf,
    pub range: Range,
    /// The text the client sees at `range`; when given and the file on disk
    /// differs there, the request fails rather than anchor the wrong text.
    #[serde(default)]
    pub text: Option<String>,
    pub body: String,
    #[serde(default)]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackReplyParams {
    pub thread_id: String,
    pub body: String,
    #[serde(default)]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadIdParams {
    pub thread_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    pub thread: Thread,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferChangedParams {
    /// The absolute file the buffer shows.
    pub path: PathBuf,
    /// The buffer's whole unsaved text.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackChanged {
    pub seq: u64,
    /// `created`, `replied`, `resolved`, `reopened` or `moved`.
    pub change: String,
    pub thread: Thread,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscribeParams {
    /// Folders whose events to receive.
    pub workspaces: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscribeResult {
    pub subscribed: bool,
}

/// The JSON backup `store/export` answers and `store/import` takes. Each
/// record is in the versioned export format of docs/protocol.md ("The export
/// format"), which is its own boundary: records are kept as they are here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportDocument {
    /// Always `parley-export`.
    pub format: String,
    pub version: u32,
    /// RFC 3339.
    pub exported_at: String,
    pub reviews: Vec<serde_json::Value>,
    pub threads: Vec<serde_json::Value>,
    #[serde(default)]
    pub sessions: Vec<serde_json::Value>,
    /// Each walkthrough's current revision (absent from earlier exports).
    #[serde(default)]
    pub walkthroughs: Vec<serde_json::Value>,
}

/// The file `store/export_file` writes or `store/import_file` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreFileParams {
    /// Absolute. An export replaces the file once it is whole (readable by
    /// the user alone); an import reads only a regular file.
    pub path: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportFileResult {
    pub path: PathBuf,
    /// The size of the file written.
    pub bytes: u64,
    pub reviews: usize,
    pub threads: usize,
    pub sessions: usize,
    /// Absent from earlier daemons.
    #[serde(default)]
    pub walkthroughs: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportResult {
    /// How many reviews and threads the document held.
    pub reviews: usize,
    pub threads: usize,
    /// How many walkthroughs it held (absent from earlier daemons).
    #[serde(default)]
    pub walkthroughs: usize,
}

/// CLI → daemon request: run a review round (the same pipeline as the
/// `request_review` MCP tool). Answered when the reviewer is done; meanwhile
/// the daemon sends `review/progress` notifications on the same connection.
pub const REVIEW_REQUEST: &str = "review/request";
/// Daemon → client notification: how a `review/request` (or a
/// `review/await`) is getting on.
pub const REVIEW_PROGRESS: &str = "review/progress";
/// CLI → daemon request: wait for the running round of a session (started
/// by an agent or another terminal); answered as `review/request` is, or at
/// once when the round has already finished.
pub const REVIEW_AWAIT: &str = "review/await";
/// CLI → daemon request: stop the running round of a session.
pub const REVIEW_CANCEL: &str = "review/cancel";
/// Client → daemon request: review sessions, newest first.
pub const SESSIONS_LIST: &str = "sessions/list";
/// Client → daemon request: one review session.
pub const SESSIONS_GET: &str = "sessions/get";
/// Client → daemon request: complete a review session.
pub const SESSIONS_COMPLETE: &str = "sessions/complete";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewRequestParams {
    /// An absolute folder inside the repository to review.
    pub workspace: PathBuf,
    pub summary: String,
    #[serde(default)]
    pub relevant_docs: Vec<String>,
    #[serde(default)]
    pub focus_areas: Vec<String>,
    #[serde(default)]
    pub previous_review_id: Option<String>,
    /// `all` (default), `staged`, `unstaged`, or a base ref / commit range.
    #[serde(default)]
    pub scope: Option<String>,
    /// `human` (a person answers) or `command` (the configured reviewer
    /// command); by default what the repository's config names.
    #[serde(default)]
    pub reviewer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewAwaitParams {
    /// The session, whole or abbreviated as `sessions/get` takes it.
    pub review_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewCancelParams {
    /// The session, whole or abbreviated as `sessions/get` takes it.
    pub review_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewCancelResult {
    pub review_id: String,
    /// The round that was stopped.
    pub round: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewProgress {
    /// The id of the `review/request` (or `review/await`) this is about.
    pub request: crate::jsonrpc::Id,
    /// Steps done so far, of `total`.
    pub progress: f64,
    pub total: f64,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRequestResult {
    pub review_id: String,
    pub round: u32,
    /// `needs_changes` or `approved` (from this round's verdict).
    pub status: String,
    /// `needs_changes`, `lgtm_with_suggestions` or `lgtm`.
    pub verdict: String,
    /// The structured review (seed 004's format).
    pub review: serde_json::Value,
    /// The review rendered as markdown.
    pub markdown: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_path: Option<PathBuf>,
    pub shown_in_editors: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionsListParams {
    /// An absolute folder: sessions of the repository holding it. All when absent.
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// At most this many (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionsGetParams {
    pub review_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionsCompleteParams {
    pub review_id: String,
    /// `approved`, `abandoned` or `merged`.
    pub final_status: String,
    #[serde(default)]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionsResult {
    /// Newest first.
    pub sessions: Vec<Session>,
}

/// A review session as the hub shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// `YYYY-MM-DD-NNN`.
    pub id: String,
    /// The repository root.
    pub workspace: PathBuf,
    pub created_at: String,
    pub updated_at: String,
    /// `in_progress`, `needs_changes` or `approved` (from the last round),
    /// or the final status once complete.
    pub status: String,
    pub request: SessionRequest,
    pub rounds: Vec<Round>,
    pub completion: Option<Completion>,
    /// A round started in the background that is `running`, or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// The round waiting on a person, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<WaitingRound>,
}

/// What the agent asked for when the session began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRequest {
    pub summary: String,
    pub relevant_docs: Vec<String>,
    pub focus_areas: Vec<String>,
    pub scope: String,
}

/// One round of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1-based.
    pub round: u32,
    /// RFC 3339.
    pub at: String,
    pub summary: String,
    pub focus_areas: Vec<String>,
    pub scope: String,
    pub changed_files: Vec<String>,
    /// The structured review (seed 004's format).
    pub review: serde_json::Value,
    /// `needs_changes`, `lgtm_with_suggestions` or `lgtm`.
    pub verdict: String,
    /// The reviewer command that answered.
    pub reviewer: String,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// `approved`, `abandoned` or `merged`.
    pub final_status: String,
    pub notes: Option<String>,
    /// RFC 3339.
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// `running` or `failed`.
    pub state: String,
    /// RFC 3339: when it started, or failed.
    pub since: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Client → daemon request: the rounds waiting on a person and the threads
/// waiting on a person's answer.
pub const INBOX: &str = "inbox";
/// Client → daemon request: a round waiting on a person (or one a person
/// answered, to read again), with both versions of its files, the person's
/// drafts and earlier rounds' comments.
pub const ROUND_GET: &str = "round/get";
/// Client → daemon request: add (or edit) a draft comment on a waiting round.
pub const ROUND_COMMENT: &str = "round/comment";
/// Client → daemon request: remove a draft comment.
pub const ROUND_UNCOMMENT: &str = "round/uncomment";
/// Client → daemon request: send the person's review with a verdict.
pub const ROUND_SUBMIT: &str = "round/submit";
/// Daemon → client notification: an agent asks a person to review.
pub const ROUND_REQUESTED: &str = "round/requested";
/// Daemon → client notification: a waiting round's drafts changed, or it was
/// submitted or cancelled.
pub const ROUND_CHANGED: &str = "round/changed";

method!(
    /// Rounds and threads waiting on a person.
    Inbox = INBOX, InboxParams => InboxResult
);
method!(
    /// A round waiting on a person, or one a person answered, whole.
    RoundGet = ROUND_GET, RoundGetParams => RoundForReview
);
method!(
    /// A draft comment on a waiting round.
    RoundComment = ROUND_COMMENT, RoundCommentParams => RoundCommentResult
);
method!(
    /// A draft comment removed.
    RoundUncomment = ROUND_UNCOMMENT, RoundUncommentParams => RoundUncommentResult
);
method!(
    /// The person's review sent, with a verdict.
    RoundSubmit = ROUND_SUBMIT, RoundSubmitParams => RoundSubmitResult
);
notification!(
    /// An agent asks a person to review.
    RoundRequestedNotification = ROUND_REQUESTED, WaitingRound
);
notification!(
    /// A waiting round changed.
    RoundChangedNotification = ROUND_CHANGED, RoundChanged
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InboxParams {
    /// An absolute folder: only what concerns the repository holding it (or
    /// the repositories inside it). Everything when absent.
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// How many of the waiting threads to skip: the `next_offset` an earlier
    /// answer gave.
    #[serde(default)]
    pub offset: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxResult {
    /// Newest request first.
    pub rounds: Vec<WaitingRound>,
    /// Open threads whose last word is not the person's, newest first, as
    /// many as one answer carries (about 4 MiB).
    pub threads: Vec<Thread>,
    /// When more threads wait: the `offset` to ask for next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// A round waiting on a person, in brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitingRound {
    pub review_id: String,
    pub round: u32,
    /// The repository root.
    pub workspace: PathBuf,
    /// What the agent says it did.
    pub summary: String,
    pub focus_areas: Vec<String>,
    /// The agent that asked (its MCP client name), or `parley` for a terminal.
    pub asked_by: String,
    /// RFC 3339.
    pub requested_at: String,
    /// Relative to `workspace`.
    pub files: Vec<String>,
    /// How many draft comments the person has written so far.
    pub drafts: usize,
    /// Whether the round reviews an agent's plan (one file, the plan's
    /// text) rather than a change in the repository.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundGetParams {
    /// Whole, or a unique prefix, or its `-NNN` tail.
    pub review_id: String,
    /// The round: by default the one waiting on a person; an answered one
    /// (a person's) to read it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundForReview {
    pub review_id: String,
    pub round: u32,
    pub workspace: PathBuf,
    pub summary: String,
    pub focus_areas: Vec<String>,
    pub asked_by: String,
    pub requested_at: String,
    pub scope: String,
    /// The round before this one, when there is one.
    pub previous_round: Option<u32>,
    pub files: Vec<RoundFile>,
    pub drafts: Vec<Draft>,
    /// Comments of earlier rounds of this session that became threads.
    pub earlier: Vec<EarlierComment>,
    /// How the round was answered, when it is not waiting any more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered: Option<AnsweredRound>,
}

/// How a person answered a round (`round/get` with an answered `round`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnsweredRound {
    /// RFC 3339.
    pub at: String,
    /// `NAME (in person)`.
    pub reviewer: String,
    /// `needs_changes`, `lgtm_with_suggestions` or `lgtm`.
    pub verdict: String,
    /// The review the agent received (seed 004), the person's comments in it.
    pub review: serde_json::Value,
}

/// One changed file of a waiting round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundFile {
    pub path: String,
    /// `None` for an added file.
    pub old_path: Option<String>,
    /// `added`, `modified`, `deleted` or `renamed`.
    pub status: String,
    /// The base version; `None` when added, binary or too large.
    pub before: Option<String>,
    /// The version under review; `None` when deleted, binary or too large.
    pub after: Option<String>,
    /// The version the person saw in the previous round, when they did.
    pub previous: Option<String>,
    /// Whether the file differs from the previous round (true on the first).
    pub changed_since_previous: bool,
    pub binary: bool,
    pub too_large: bool,
}

/// A person's draft comment on a waiting round. Lines are zero-based.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    pub id: String,
    pub path: String,
    /// `old` (the base version: removed lines) or `new`.
    pub side: String,
    pub start_line: u32,
    pub end_line: u32,
    pub body: String,
    pub suggestion: Option<String>,
    pub severity: Option<String>,
    pub author: String,
    pub at: String,
}

/// A comment of an earlier round that became a thread, with how it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlierComment {
    pub round: u32,
    pub path: String,
    /// Zero-based: where the thread is now.
    pub line: u32,
    pub end_line: u32,
    pub body: String,
    /// `open`, `seen`, `addressed` or `resolved`.
    pub state: String,
    pub thread_id: String,
    /// Every comment of the thread, oldest first.
    pub comments: Vec<Comment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundCommentParams {
    pub review_id: String,
    pub path: String,
    /// `old` or `new` (default).
    #[serde(default)]
    pub side: Option<String>,
    /// Zero-based, inclusive.
    pub start_line: u32,
    #[serde(default)]
    pub end_line: Option<u32>,
    pub body: String,
    #[serde(default)]
    pub suggestion: Option<String>,
    #[serde(default)]
    pub severity: Option<String>,
    /// Replace this draft instead of adding one.
    #[serde(default)]
    pub draft_id: Option<String>,
    /// Who writes it, as the editor knows the person; by default the login
    /// name the daemon runs under.
    #[serde(default)]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundCommentResult {
    pub draft: Draft,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundUncommentParams {
    pub review_id: String,
    pub draft_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundUncommentResult {
    pub removed: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundSubmitParams {
    pub review_id: String,
    /// `approve`, `request_changes` or `comment`.
    pub verdict: String,
    #[serde(default)]
    pub summary: Option<String>,
    /// Who reviewed, as the editor knows the person; by default the login
    /// name the daemon runs under.
    #[serde(default)]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundSubmitResult {
    pub review_id: String,
    pub round: u32,
    /// `needs_changes`, `lgtm_with_suggestions` or `lgtm`.
    pub verdict: String,
    /// The session's status after it.
    pub status: String,
    /// The review as the agent receives it (seed 004's format).
    pub review: serde_json::Value,
    pub markdown: String,
    /// The threads the new-side comments became.
    pub threads: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundChanged {
    pub review_id: String,
    pub round: u32,
    pub workspace: PathBuf,
    /// `drafts`, `submitted` or `cancelled`.
    pub state: String,
    pub drafts: Vec<Draft>,
    /// Once submitted: `needs_changes`, `lgtm_with_suggestions` or `lgtm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

/// Client → daemon request: open (or continue) the plan review of a host
/// session, with the plan as the round's one file.
pub const PLAN_OPEN: &str = "plan/open";
/// Client → daemon request: wait for the person's verdict on a plan round.
pub const PLAN_AWAIT: &str = "plan/await";
/// Client → daemon request: the plan round was answered in the host.
pub const PLAN_ANSWERED_ELSEWHERE: &str = "plan/answered_elsewhere";
/// Client → daemon request: the notes of a plan approved with comments.
pub const PLAN_NOTES: &str = "plan/notes";

method!(
    /// A plan review round opened for a host session (the next round of
    /// its review when it has one).
    PlanOpen = PLAN_OPEN, PlanOpenParams => PlanOpened, FOR_EDITORS = false
);
method!(
    /// The person's verdict on a plan round, answered only once there is
    /// one or the round ends.
    PlanAwait = PLAN_AWAIT, PlanRoundParams => PlanVerdict, FOR_EDITORS = false
);
method!(
    /// A waiting plan round marked answered in the host: it leaves the inbox.
    PlanAnsweredElsewhere = PLAN_ANSWERED_ELSEWHERE, PlanRoundParams => PlanAnswered, FOR_EDITORS = false
);
method!(
    /// The open comments of a host session's last plan, approved with comments.
    PlanNotes = PLAN_NOTES, PlanNotesParams => PlanNotesResult, FOR_EDITORS = false
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanOpenParams {
    /// The host: `claude` or `codex`.
    pub host: String,
    /// The host's session id: the next plan of the same session is the
    /// next round of the same review.
    pub host_session: String,
    /// The agent's working directory: the plan belongs to the git
    /// repository holding it (or, outside any, to the folder itself).
    pub cwd: PathBuf,
    /// The plan's text (markdown).
    pub plan: String,
    /// The plan's file name in the round; `plan.md` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Open nothing when no round waits and this plan is the one the
    /// person last answered (a host asking again about a plan it was
    /// already answered on).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub new_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanOpened {
    pub review_id: String,
    pub round: u32,
    /// The repository (or folder) the plan is for.
    pub workspace: PathBuf,
    /// The plan's file name in the round.
    pub path: String,
    /// `added` on the first plan, `modified` after.
    pub status: String,
    /// Set (with `new_only`) when the plan was already answered: no round
    /// was opened, and `round` is the one that answered it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub already_answered: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanRoundParams {
    /// Whole, or a unique prefix, or its `-NNN` tail.
    pub review_id: String,
    pub round: u32,
}

/// How a plan round ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanVerdict {
    pub review_id: String,
    pub round: u32,
    /// `approved`, `approved_with_comments`, `changes_requested`, or
    /// `ended` (no verdict: answered in the host, cancelled, or the review
    /// was completed; `reason` says which).
    pub outcome: String,
    /// The person's summary, when they wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub comments: Vec<PlanComment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A person's comment on lines of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanComment {
    /// The plan's file name.
    pub path: String,
    /// 1-based, inclusive, in the plan the person commented on.
    pub start_line: u32,
    pub end_line: u32,
    /// Those lines as they were.
    pub quote: String,
    pub body: String,
    /// Replacement text for those lines, when the person suggested one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanAnswered {
    pub review_id: String,
    pub round: u32,
    /// `answered_elsewhere` (it was waiting, and leaves the inbox), or
    /// `already_ended` (the person had answered it, or it ended before).
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanNotesParams {
    /// `claude` or `codex`.
    pub host: String,
    pub host_session: String,
    /// The agent's working directory, as for `plan/open`.
    pub cwd: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanNotesResult {
    /// The session's plan review, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_id: Option<String>,
    /// The last answered round, when it was approved with comments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// Its comments still open; empty when there are none.
    pub comments: Vec<PlanComment>,
}

/// Client → daemon request: the agents at work (connected through `parley-mcp`).
pub const AGENTS_LIST: &str = "agents/list";
/// Daemon → client notification: an agent came or went, or started or
/// stopped waiting in a Parley call.
pub const AGENTS_CHANGED: &str = "agents/changed";
/// Client → daemon request: a person asks a chosen agent about lines of a file.
pub const AGENT_ASK: &str = "agent/ask";
/// Client → daemon request: a thread's waiting message sent to another agent.
pub const AGENT_RESEND: &str = "agent/resend";
/// Editor → daemon request: a thread's waiting message is typed into the
/// terminal its agent runs in, as the person confirmed.
pub const AGENT_TYPED: &str = "agent/typed";
/// Client → daemon request (a host hook): the messages waiting for the
/// agent of a host process, marked delivered.
pub const MESSAGES_TAKE: &str = "messages/take";

method!(
    /// The agents at work.
    AgentsList = AGENTS_LIST, AgentsListParams => AgentsListResult
);
method!(
    /// A person asks a chosen agent about lines of a file.
    AgentAsk = AGENT_ASK, AgentAskParams => AgentAskResult
);
method!(
    /// A thread's message sent to another agent.
    AgentResend = AGENT_RESEND, AgentResendParams => AgentAskResult
);
method!(
    /// A thread's waiting message, typed into its agent's terminal.
    AgentTyped = AGENT_TYPED, AgentTypedParams => AgentTypedResult, FOR_CLI = false
);
method!(
    /// The messages waiting for a host's agent, taken by a hook.
    MessagesTake = MESSAGES_TAKE, MessagesTakeParams => MessagesTakeResult
);
notification!(
    /// The agents at work changed.
    AgentsChangedNotification = AGENTS_CHANGED, AgentsChanged
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsListParams {
    /// An absolute folder: only the agents whose workspace holds it or lies
    /// inside it. Every agent when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentsListResult {
    /// By name.
    pub agents: Vec<AgentInfo>,
    /// Agents no longer at work that a person's messages still wait for,
    /// by name (`agent/resend` sends them to another).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<AbsentAgent>,
}

/// An agent no longer at work, with the threads whose messages wait for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbsentAgent {
    pub name: String,
    /// Oldest first.
    pub threads: Vec<String>,
}

/// One agent at work: an MCP host's `parley-mcp`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// The short name a person types: the host's name and a number
    /// (`claude-1`), or the one given in `PARLEY_AGENT_NAME`.
    pub name: String,
    /// The host's MCP client name and version, as its `initialize` says.
    pub host: String,
    pub host_version: String,
    /// The host's process id (the shim's parent), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_pid: Option<u32>,
    /// The shim's process id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shim_pid: Option<u32>,
    /// The host's ancestors, nearest first (its parent, that one's parent,
    /// …), read when the agent came; empty where the daemon cannot read
    /// them. An editor's terminal whose shell is the host or one of these
    /// runs the agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_ancestors: Vec<u32>,
    /// The editor window whose terminal the agent runs in, as its
    /// environment says (`PARLEY_EDITOR_ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_id: Option<String>,
    /// The repository (or folder) it works in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<PathBuf>,
    /// RFC 3339: when it connected.
    pub since: String,
    /// Its last Parley tool call and when it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_call: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_call_at: Option<String>,
    /// The Parley call it is waiting in now (`await_review`,
    /// `request_review`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_in: Option<String>,
    /// Whether its host takes messages pushed at once (Claude Code's channels).
    #[serde(default)]
    pub channel: bool,
    /// How many messages wait to be delivered to it.
    #[serde(default)]
    pub messages_waiting: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentsChanged {
    /// Every agent at work now, by name.
    pub agents: Vec<AgentInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentAskParams {
    /// The agent's name; by default the only agent working on the file's
    /// repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The absolute file.
    pub path: PathBuf,
    /// Zero-based, inclusive.
    pub start_line: u32,
    /// Zero-based, inclusive; `start_line` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// The question.
    pub message: String,
    /// Who asks, as the editor knows the person; by default the login name
    /// the daemon runs under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentAskResult {
    /// The thread the question is in, with its deliveries.
    pub thread: Thread,
    /// The agent it was sent to.
    pub agent: String,
    /// The question's delivery, as it stands when answered (`delivered`
    /// already when a channel or a waiting call took it).
    pub delivery: Delivery,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentResendParams {
    /// Whole, or a unique beginning of at least 4 characters.
    pub thread_id: String,
    /// The agent to send the thread's waiting message to instead.
    pub agent: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentTypedParams {
    /// Whole, or a unique beginning of at least 4 characters.
    pub thread_id: String,
    /// Only answer the line, changing nothing: what the editor shows the
    /// person to confirm.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preview: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentTypedResult {
    /// The thread, its message now delivered by `terminal` (still waiting
    /// on a preview).
    pub thread: Thread,
    /// The agent the message was for.
    pub agent: String,
    /// The line to type into the agent's terminal (and submit): the note
    /// the other paths give, on one line, with no control characters.
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessagesTakeParams {
    /// The host process the hook runs under (the hook's parent): the
    /// agent whose shim has the same parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_pid: Option<u32>,
    /// The hook's further ancestors, nearest first, tried in turn after
    /// `host_pid`: a host may run its hooks through a shell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ancestors: Vec<u32>,
    /// The hook's working directory: when no agent has `host_pid`, the
    /// only agent working on the repository holding it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesTakeResult {
    /// The agent found, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Its waiting messages, oldest first, now marked delivered by `hook`.
    pub messages: Vec<AgentMessage>,
}

/// A message for an agent, as it is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentMessage {
    /// A person's word in a thread: the thread and the comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_id: Option<String>,
    /// A click of a walkthrough's action: the walkthrough and the click.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walkthrough_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub click_id: Option<String>,
    /// The note the agent reads: the place, the thread, the question, and
    /// how to answer (or the action's message).
    pub text: String,
}

/// Client → daemon request: the walkthroughs of a workspace, newest first.
pub const WALKTHROUGH_LIST: &str = "walkthrough/list";
/// Client → daemon request: one walkthrough, or a workspace's latest.
pub const WALKTHROUGH_GET: &str = "walkthrough/get";
/// Client → daemon request: a person clicks a walkthrough's action.
pub const WALKTHROUGH_ACT: &str = "walkthrough/act";
/// Client → daemon request: a click waiting for an agent (one that has
/// gone, say) sent on to another.
pub const WALKTHROUGH_RESEND: &str = "walkthrough/resend";
/// Daemon → client notification: a walkthrough was presented, or one of
/// its actions' clicks moved on.
pub const WALKTHROUGH_UPDATED: &str = "walkthrough/updated";
/// Daemon → editor request: where a symbol is defined or used, as the
/// window's language servers know it.
pub const SYMBOLS_FIND: &str = "symbols/find";
/// Daemon → editor request: the problems the window's language servers
/// report for a workspace or one file.
pub const DIAGNOSTICS_GET: &str = "diagnostics/get";

method!(
    /// The walkthroughs of a workspace, newest first.
    WalkthroughList = WALKTHROUGH_LIST, WalkthroughListParams => WalkthroughListResult
);
method!(
    /// One walkthrough (a kept revision of it), or a workspace's latest.
    WalkthroughGet = WALKTHROUGH_GET, WalkthroughGetParams => WalkthroughGetResult
);
method!(
    /// A person clicks an action: its message goes to the presenting agent.
    WalkthroughAct = WALKTHROUGH_ACT, WalkthroughActParams => WalkthroughActResult
);
method!(
    /// A click's message sent on to another agent, as `agent/resend` does a
    /// thread's.
    WalkthroughResend = WALKTHROUGH_RESEND, WalkthroughResendParams => WalkthroughActResult
);
notification!(
    /// A walkthrough was presented or changed.
    WalkthroughUpdatedNotification = WALKTHROUGH_UPDATED, WalkthroughUpdated
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkthroughListParams {
    /// An absolute folder: the walkthroughs of the workspaces inside it or
    /// holding it. Defaults to the connection's workspaces (editors) or to
    /// every walkthrough (CLI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkthroughListResult {
    /// Newest first.
    pub walkthroughs: Vec<WalkthroughSummary>,
}

/// A walkthrough in brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkthroughSummary {
    pub id: String,
    pub workspace: PathBuf,
    pub title: String,
    pub revision: u64,
    /// RFC 3339.
    pub updated_at: String,
    /// The presenting agent's short name.
    pub presented_by: String,
    /// How many comments were placed, and how many were not.
    pub placed: usize,
    pub unplaced: usize,
    /// How many action clicks wait to reach the agent.
    pub clicks_waiting: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkthroughGetParams {
    /// Whole, or a unique beginning of at least 4 characters; without it,
    /// the latest walkthrough of `workspace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// An absolute folder; defaults as for `walkthrough/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<PathBuf>,
    /// A kept revision instead of the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkthroughGetResult {
    /// `null` when the workspace has none.
    pub walkthrough: Option<Walkthrough>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkthroughActParams {
    /// Whole, or a unique beginning of at least 4 characters.
    pub id: String,
    /// The action block's `index`.
    pub block_index: usize,
    /// Who clicks, as the editor knows the person; by default the login
    /// name the daemon runs under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkthroughResendParams {
    /// Whole, or a unique beginning of at least 4 characters.
    pub id: String,
    /// The click to send on (whole, or a unique beginning of at least 4
    /// characters); the walkthrough's newest waiting click when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub click_id: Option<String>,
    /// The agent at work to send it to.
    pub agent: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkthroughActResult {
    /// The walkthrough with the click added to its action.
    pub walkthrough: Walkthrough,
    /// The click, as it stands when answered.
    pub click: ActionClick,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkthroughUpdated {
    pub seq: u64,
    pub walkthrough: Walkthrough,
}

/// An agent's guided tour of its change: its markdown in parts, its blocks
/// (diagrams, comments placed on the code, diffs, actions) and its file
/// references.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Walkthrough {
    pub id: String,
    /// The repository (or folder) it is about.
    pub workspace: PathBuf,
    /// The `title` given, else the document's first heading.
    pub title: String,
    /// The absolute directory locations and references are resolved
    /// against (`baseUri`, by default the workspace).
    pub base_uri: PathBuf,
    /// The whole markdown document as the agent wrote it.
    pub content: String,
    /// Counts the presentations under this title, starting at 1.
    pub revision: u64,
    /// RFC 3339.
    pub updated_at: String,
    /// The presenting agent's short name (`agents/list`).
    pub presented_by: String,
    /// The commit checked out when it was presented, in a git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The document in order: markdown between the blocks, and the blocks.
    pub parts: Vec<WalkthroughPart>,
    /// The blocks, by `index`.
    pub blocks: Vec<WalkthroughBlock>,
    /// Every ``[`file:line`][]`` reference in the markdown, in order.
    pub references: Vec<Reference>,
}

/// A piece of a walkthrough's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WalkthroughPart {
    /// Markdown to render as it is.
    Markdown { text: String },
    /// The block of `blocks` with this `index`.
    Block { index: usize },
}

/// A fenced block of a walkthrough, by its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WalkthroughBlock {
    /// A diagram, in mermaid's language.
    Mermaid { index: usize, source: String },
    /// A comment on the code: one thread per place.
    Comment {
        index: usize,
        /// The location as written.
        location: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        icon: Option<String>,
        /// Markdown.
        body: String,
        /// Where it was placed, each a thread; empty when it was not.
        places: Vec<WalkthroughPlace>,
        /// Why it was not placed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        problem: Option<String>,
        /// For an ambiguous location: the places it could mean.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        candidates: Vec<WalkthroughPlace>,
    },
    /// The change of a range of commits (`HEAD~2..HEAD`), or of the working
    /// tree (`working`) or the index (`staged`).
    Gitdiff {
        index: usize,
        range: String,
        #[serde(default)]
        exclude_staged: bool,
        #[serde(default)]
        exclude_unstaged: bool,
        /// What Parley's diff review shows for it, the exclude flags
        /// applied: `all` (the working tree against HEAD), `staged`,
        /// `unstaged`, a commit (the working tree against it) or a range.
        /// Absent when it cannot be shown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<String>,
        /// Why the range cannot be shown (git does not know it, the flags
        /// leave nothing of it, it holds no change).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        problem: Option<String>,
    },
    /// A button: clicking it sends `message` to the presenting agent.
    Action {
        index: usize,
        button: String,
        message: String,
        /// Every click, oldest first, with where its message stands.
        clicks: Vec<ActionClick>,
        /// What is wrong with the block (no `button:`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        problem: Option<String>,
    },
}

impl WalkthroughBlock {
    /// The block's place among the walkthrough's blocks.
    pub fn index(&self) -> usize {
        match self {
            WalkthroughBlock::Mermaid { index, .. }
            | WalkthroughBlock::Comment { index, .. }
            | WalkthroughBlock::Gitdiff { index, .. }
            | WalkthroughBlock::Action { index, .. } => *index,
        }
    }
}

/// Lines a comment is on (or could be on).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkthroughPlace {
    /// Relative to the walkthrough's workspace, `/`-separated.
    pub path: String,
    /// 0-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// The thread the comment became there (placed comments only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// One click of an action, and where its message to the agent stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionClick {
    pub id: String,
    /// The person who clicked.
    pub author: String,
    /// RFC 3339.
    pub clicked_at: String,
    /// `waiting`, `delivered` or `read` (the agent made a Parley call after
    /// it was delivered).
    pub state: String,
    /// Once delivered: how, as for a thread's deliveries (`tool-answer`,
    /// `wait`, `channel`, `hook`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    pub updated_at: String,
    /// The agent the message is for: the presenting agent, or the one it
    /// was sent on to (`walkthrough/resend`). Absent from earlier daemons:
    /// then the presenting agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// What makes a thread part of a walkthrough: one of its comment's places.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadWalkthrough {
    pub id: String,
    pub title: String,
    /// The comment block's `index`.
    pub block_index: usize,
}

/// `symbols/find`'s params: the daemon asks every window open on the
/// workspace, passing over one that does not answer within about 1.5 s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SymbolsFindParams {
    /// The absolute workspace folder.
    pub workspace: PathBuf,
    /// The symbol's name as the agent wrote it.
    pub name: String,
    /// `definition` or `references`.
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymbolsFindResult {
    /// The language servers' hits as they are (fuzzy ones too): the daemon
    /// keeps exact names first.
    pub places: Vec<SymbolPlace>,
}

/// Where a symbol is, as an editor's language server says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymbolPlace {
    /// The absolute file.
    pub path: PathBuf,
    /// In the window's position encoding.
    pub range: Range,
    /// The symbol's name there.
    pub name: String,
    /// What holds it (a class, a module), when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsGetParams {
    /// The absolute workspace folder.
    pub workspace: PathBuf,
    /// One absolute file; every file the window has problems for when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticsGetResult {
    pub files: Vec<FileDiagnostics>,
}

/// The problems of one file, and what text they were computed on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileDiagnostics {
    /// The absolute file.
    pub path: PathBuf,
    /// The editor's version of the document the problems were computed on.
    pub version: i64,
    /// Whether the document has edits not saved to disk.
    pub dirty: bool,
    /// SHA-256 (lowercase hex) of the document's text the problems were
    /// computed on: the daemon compares it with the file on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The problems did not settle in time after a recent change: they may
    /// be old rather than clean.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    pub diagnostics: Vec<Diagnostic>,
}

/// One problem a language server reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `error`, `warning`, `information` or `hint`.
    pub severity: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    /// In the window's position encoding.
    pub range: Range,
}

/// Client → daemon request: link a workspace to its GitHub pull request.
pub const PR_LINK: &str = "pr/link";
/// Client → daemon request: what a workspace's pull request link holds.
pub const PR_STATUS: &str = "pr/status";
/// Client → daemon request: bring a pull request's review threads in.
pub const PR_PULL: &str = "pr/pull";
/// Client → daemon request: send what Parley holds and the pull request
/// does not (new threads as one review, replies, resolutions).
pub const PR_PUSH: &str = "pr/push";

method!(
    /// Links a workspace to its pull request: the one given, or the one
    /// `gh pr view` finds for its branch.
    PrLink = PR_LINK, PrLinkParams => PrStatusResult
);
method!(
    /// A workspace's pull request: what is linked, what was last synced,
    /// what could not be placed, the conversation.
    PrStatus = PR_STATUS, PrStatusParams => PrStatusResult
);
method!(
    /// Brings the linked pull request's review threads in as threads.
    PrPull = PR_PULL, PrPullParams => PrStatusResult
);
method!(
    /// Sends the workspace's new threads to the linked pull request as one
    /// review, with replies and resolutions; `dry_run` sends nothing.
    PrPush = PR_PUSH, PrPushParams => PrStatusResult
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrPushParams {
    pub workspace: PathBuf,
    /// Say what would be sent, and send nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// `comment`, `approve` or `request-changes`: submit the review with it;
    /// without it the review is left pending for the person to submit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// As for `pr/pull`: the command's `GITHUB_TOKEN`, kept in memory only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Push this review session's round as a review instead (its id, its
    /// number or a unique beginning): the findings' threads on their lines,
    /// the summary as the body, submitted with `event` or the person's
    /// verdict. Once per round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_id: Option<String>,
    /// With `review_id`: the round (1-based); the last without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
}

/// What a push sent (or, dry, would send).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrPushSummary {
    pub at: String,
    pub dry_run: bool,
    /// New review threads, each on the pull request head's lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<PrPushedThread>,
    /// Replies made here on synced threads (and the later comments of new
    /// threads).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replies: Vec<PrPushedReply>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolutions: Vec<PrPushedResolution>,
    /// Threads not sent, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_sent: Vec<PrUnplaced>,
    /// Threads an agent resolved here, left open on GitHub for their author
    /// (agents resolve there only when the person's own config says
    /// `agents_may_resolve`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_open: Vec<PrLeftOpen>,
    /// `pending` (left for the person to submit on GitHub) or `submitted`;
    /// absent when no review was touched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// The event the review was (or, dry, would be) submitted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_url: Option<String>,
    /// Threads GitHub already had (an earlier push cut off before its
    /// answer was kept): tied to GitHub's, not sent again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub adopted: usize,
    /// What the person should know: what GitHub cannot follow (a synced
    /// thread moved here), and the settings the push went by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// For a round pushed as a review: `SESSION round N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<String>,
    /// For a round pushed as a review: the review's body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// For a round: its findings' threads an earlier push already sent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub already_on_github: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What the last push sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrLastPush {
    pub at: String,
    pub threads: usize,
    pub replies: usize,
    pub resolutions: usize,
    /// Threads and replies left unsent (each said why at the push).
    pub not_sent: usize,
    /// `pending` or `submitted`, when a review was touched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// The event a submitted review went with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The review round pushed, as `SESSION round N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<String>,
}

/// What waits to be pushed, counted here without asking GitHub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrWaiting {
    /// Open threads made here.
    pub threads: usize,
    /// Comments made here not yet on GitHub (later comments of new threads included).
    pub replies: usize,
    /// Threads resolved or reopened here since the last sync.
    pub resolutions: usize,
}

/// A review thread a push adds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrPushedThread {
    pub path: String,
    /// `RIGHT` (the head's lines).
    pub side: String,
    /// 1-based lines of the pull request's head.
    pub start_line: u32,
    pub line: u32,
    pub body: String,
}

/// A reply a push sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrPushedReply {
    pub path: String,
    pub body: String,
}

/// A thread an agent resolved here that stays open on GitHub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrLeftOpen {
    pub path: String,
    /// The thread on GitHub.
    pub url: String,
    /// The agent that resolved it here.
    pub agent: String,
}

/// A thread a push resolves (or reopens) on GitHub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrPushedResolution {
    pub path: String,
    pub resolved: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrLinkParams {
    /// A folder of the workspace (its git root is linked).
    pub workspace: PathBuf,
    /// `OWNER/REPO#NUMBER` or the pull request's URL; without it, `gh pr
    /// view` finds the branch's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<String>,
    /// The API root to use (the command's `PARLEY_GITHUB_API`); the
    /// daemon's, else `https://api.github.com`, without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrStatusParams {
    pub workspace: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrPullParams {
    pub workspace: PathBuf,
    /// The command's `GITHUB_TOKEN`, used when neither `gh` nor the
    /// daemon's environment gives a token; kept in memory only, never
    /// stored or logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrStatusResult {
    /// The workspace (a git root).
    pub workspace: PathBuf,
    /// Its link, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked: Option<LinkedPr>,
    /// For `pr/pull`: what this pull brought.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pulled: Option<PrPullSummary>,
    /// For `pr/push`: what this push sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed: Option<PrPushSummary>,
}

/// A workspace's pull request, as last synced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkedPr {
    /// `OWNER/REPO#NUMBER`.
    pub pull_request: String,
    pub url: String,
    /// The API root it is synced through.
    pub api: String,
    /// `gh` or `given`.
    pub found_by: String,
    pub linked_at: String,
    /// `OPEN`, `CLOSED` or `MERGED`, as last read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_oid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pull: Option<PrPullSummary>,
    /// Why the last sync failed, until one succeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The pull request's conversation, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversation: Vec<PrComment>,
    /// Review threads the last pull could not put on a file here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unplaced: Vec<PrUnplaced>,
    /// Review threads the last pull placed although their text is gone from
    /// the file here (a force-push rewrote it): each on the line that
    /// stands where it was, marked outdated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placed_by_line: Vec<PrUnplaced>,
    /// Resolutions changed on both sides, and which was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// Threads an agent resolved here that the last push left open on
    /// GitHub for their author.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_open: Vec<PrLeftOpen>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_push: Option<PrLastPush>,
    /// For `pr/status`: what waits to be pushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<PrWaiting>,
}

/// What a pull brought.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrPullSummary {
    pub at: String,
    pub new_threads: usize,
    pub replies: usize,
    pub resolved: usize,
    pub reopened: usize,
    pub outdated: usize,
    /// Deleted on GitHub since the last pull (kept here).
    pub gone: usize,
    /// Threads made here that an earlier push sent while its answer was
    /// lost: found on GitHub and tied to theirs, not pulled in twice.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tied: usize,
}

/// A comment of a pull request's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrComment {
    pub author: String,
    pub body: String,
    pub created_at: String,
    pub url: String,
}

/// A review thread that could not become a thread here, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrUnplaced {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub url: String,
    pub reason: String,
}
