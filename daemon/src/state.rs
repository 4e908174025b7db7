//! The single owner of the daemon's mutable state: connected clients, the
//! reviews, and the event log. Connections talk to it over a bounded channel
//! of commands (behind [`StateHandle`]'s methods) and get answers on
//! oneshots; it never awaits IO, so no client can stall it. A write is shown
//! and answered only once the store has made it durable (`state/durable.rs`).

mod agents;
mod durable;
mod sessions;
mod threads;
mod walkthroughs;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use parley_protocol::hello::{PositionEncoding, Role};
use parley_protocol::jsonrpc::{ErrorObject, Notification, to_line};
use parley_protocol::methods::{self as wire, Selection};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, oneshot};

pub use agents::{HostFacts, NewAgent, clean_given_name};
pub use threads::{FileStamp, FileToCheck, Suspects, ThreadEdit};

use crate::feedback::{FeedbackError as ThreadError, Summary, Thread};
use crate::reviews::Review;
use crate::routing::{self, Candidate, Reason};
use crate::sessions::{FinalStatus, Round, Session, SessionError, SessionRequest};
use crate::store::Store;
use crate::walkthrough::{Click, Walkthrough};
use crate::{views, workspace};

/// Events kept for `events/replay`: at most this many, and at most
/// [`EVENT_LOG_BYTES`] of reviews and threads between them (a client that
/// missed more fetches current state instead).
const EVENT_LOG_LEN: usize = 1024;
const EVENT_LOG_BYTES: usize = 16 * 1024 * 1024;
/// Messages queued for one editor before it counts as too slow and is dropped.
pub const OUTBOX_LEN: usize = 256;
/// Changes queued for each agent connection that listens for them; one that
/// falls further behind is told that everything may have changed.
const CHANGES_LEN: usize = 256;

/// What the daemon sends to an editor connection's task.
#[derive(Debug)]
pub enum Outbound {
    /// A ready-made notification line.
    Line(Arc<Vec<u8>>),
    /// A request to the editor; its answer comes back on `reply`.
    Request { method: &'static str, params: Value, reply: oneshot::Sender<Result<Value, ErrorObject>> },
}

/// A published change, as agents' MCP connections hear of it: they have no
/// outbox (rmcp writes to them), so they listen on [`StateHandle::changes`]
/// and tell agents that subscribed to the resource it touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// The review's base or the thread's file.
    pub path: PathBuf,
    pub what: ChangedWhat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangedWhat {
    /// A review was presented or a round shown.
    Review,
    /// A thread changed: the `change` of its `feedback/changed` event.
    Thread(&'static str),
}

/// What a client said of itself in hello.
#[derive(Debug, Clone)]
pub struct ClientFacts {
    pub role: Role,
    pub name: String,
    pub editor_id: Option<String>,
    /// For editors, the folders they have open; for agents, their workspace.
    pub workspaces: Vec<PathBuf>,
    pub encoding: PositionEncoding,
    /// The client's environment (agents and the CLI send theirs): review
    /// rounds it asks for run their commands with it.
    pub env: Arc<std::collections::BTreeMap<String, String>>,
}

/// An editor chosen to answer a selection request.
#[derive(Debug, Clone)]
pub struct PickedEditor {
    pub name: String,
    pub editor_id: Option<String>,
    pub encoding: PositionEncoding,
    pub reason: Reason,
    /// The folders the window has open.
    pub workspaces: Vec<PathBuf>,
    pub outbox: mpsc::Sender<Outbound>,
    /// The last selection the editor pushed, as a fallback.
    pub last_selection: Option<Selection>,
}

/// An editor a review was delivered to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub name: String,
    pub editor_id: Option<String>,
}

/// The result of committing a review.
#[derive(Debug, Clone)]
pub struct Committed {
    pub review: Review,
    pub delivered_to: Vec<Delivery>,
}

/// Why a commit was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitError {
    /// Another agent changed the review since it was read; read and retry.
    Raced,
    Store(String),
    Stopped,
}

impl From<Stopped> for CommitError {
    fn from(_: Stopped) -> Self {
        CommitError::Stopped
    }
}

/// Requests to the state owner. Private: callers use [`StateHandle`]'s
/// methods, one per command. Every `reply` is answered exactly once.
#[derive(Debug)]
enum Command {
    Connected {
        id: u64,
        facts: ClientFacts,
        events: Option<mpsc::Sender<Outbound>>,
        reply: oneshot::Sender<(u64, String)>,
    },
    Disconnected {
        id: u64,
    },
    Focus {
        id: u64,
        focused: bool,
    },
    SelectionChanged {
        id: u64,
        selection: Option<Selection>,
    },
    LatestReview {
        base: PathBuf,
        reply: oneshot::Sender<Option<Review>>,
    },
    Commit {
        review: Review,
        reply: oneshot::Sender<Result<Committed, CommitError>>,
    },
    Reviews {
        folders: Option<Vec<PathBuf>>,
        reply: oneshot::Sender<Vec<Review>>,
    },
    PickEditor {
        editor_id: Option<String>,
        folder: Option<PathBuf>,
        any_workspace: bool,
        reply: oneshot::Sender<Option<PickedEditor>>,
    },
    EditorsOn {
        folder: PathBuf,
        reply: oneshot::Sender<Vec<PickedEditor>>,
    },
    Replay {
        id: u64,
        after: u64,
        instance: Option<String>,
        reply: oneshot::Sender<wire::EventsReplayResult>,
    },
    Status {
        reply: oneshot::Sender<StatusFacts>,
    },
    Subscribe {
        id: u64,
        workspaces: Vec<PathBuf>,
    },
    FilesToCheck {
        scope: PathBuf,
        file: Option<PathBuf>,
        suspects: Suspects,
        reply: oneshot::Sender<Vec<FileToCheck>>,
    },
    ThreadsOfFile {
        file: PathBuf,
        reply: oneshot::Sender<Vec<Thread>>,
    },
    ThreadsToRecheck {
        file: PathBuf,
        hash: Arc<str>,
        reply: oneshot::Sender<Vec<Thread>>,
    },
    Thread {
        id: String,
        reply: oneshot::Sender<Option<Thread>>,
    },
    ThreadIdsStartingWith {
        prefix: String,
        within: Option<PathBuf>,
        reply: oneshot::Sender<Vec<String>>,
    },
    SessionIdsMatching {
        abbreviation: String,
        repository: Option<PathBuf>,
        reply: oneshot::Sender<Vec<String>>,
    },
    Rechecked {
        file: PathBuf,
        stamp: Option<FileStamp>,
        updates: Vec<Thread>,
        reply: oneshot::Sender<Result<(), ThreadError>>,
    },
    Threads {
        scope: PathBuf,
        file: Option<PathBuf>,
        include_resolved: bool,
        page: crate::feedback::Page,
        reply: oneshot::Sender<(usize, Vec<Thread>)>,
    },
    Summary {
        scope: PathBuf,
        reply: oneshot::Sender<Summary>,
    },
    CreateThread {
        thread: Box<Thread>,
        reply: oneshot::Sender<Result<Thread, ThreadError>>,
    },
    EditThread {
        id: String,
        edit: ThreadEdit,
        reply: oneshot::Sender<Result<Thread, ThreadError>>,
    },
    MarkSeen {
        ids: Vec<String>,
        agent: String,
        at: String,
    },
    Import {
        export: Box<crate::store::Export>,
        reply: oneshot::Sender<Result<Imported, String>>,
    },
    StartSession {
        workspace: PathBuf,
        request: SessionRequest,
        reply: oneshot::Sender<Result<Session, SessionError>>,
    },
    CheckSession {
        id: String,
        max_rounds: u32,
        reply: oneshot::Sender<Result<Session, SessionError>>,
    },
    AddRound {
        id: String,
        round: Box<Round>,
        max_rounds: u32,
        reply: oneshot::Sender<Result<Session, SessionError>>,
    },
    Sessions {
        workspace: Option<PathBuf>,
        limit: usize,
        reply: oneshot::Sender<Vec<Session>>,
    },
    Session {
        id: String,
        reply: oneshot::Sender<Option<Session>>,
    },
    CompleteSession {
        id: String,
        final_status: FinalStatus,
        notes: Option<String>,
        reply: oneshot::Sender<Result<Session, SessionError>>,
    },
    #[cfg(test)]
    CompactThreads {
        now: bool,
        reply: oneshot::Sender<usize>,
    },
    DiscardEmptySession {
        id: String,
    },
    SetPending {
        id: String,
        pending: Option<crate::sessions::Pending>,
    },
    EditSession {
        id: String,
        edit: EditOfSession,
        reply: oneshot::Sender<Result<Session, SessionError>>,
    },
    AwaitingPerson {
        reply: oneshot::Sender<Vec<Session>>,
    },
    ThreadsWaitingOn {
        person: String,
        reply: oneshot::Sender<Vec<Thread>>,
    },
    PublishRound {
        root: PathBuf,
        method: &'static str,
        params: Value,
    },
    AgentConnected {
        agent: NewAgent,
    },
    AgentHost {
        id: u64,
        host: HostFacts,
        reply: oneshot::Sender<Option<String>>,
    },
    AgentWorkspace {
        id: u64,
        workspace: PathBuf,
    },
    AgentCall {
        id: u64,
        tool: Option<String>,
        waiting: bool,
    },
    AgentLeft {
        id: u64,
        daemon_stopping: bool,
    },
    Agents {
        folder: Option<PathBuf>,
        asker: Option<u64>,
        reply: oneshot::Sender<wire::AgentsListResult>,
    },
    TakeMessages {
        agent: String,
        via: &'static str,
        reply: oneshot::Sender<Taken>,
    },
    WalkthroughTitled {
        workspace: PathBuf,
        title: String,
        reply: oneshot::Sender<Option<Walkthrough>>,
    },
    CommitWalkthrough {
        walkthrough: Box<Walkthrough>,
        reply: oneshot::Sender<Result<Walkthrough, CommitError>>,
    },
    Walkthroughs {
        folders: Option<Vec<PathBuf>>,
        reply: oneshot::Sender<Vec<Walkthrough>>,
    },
    Click {
        id: String,
        block_index: usize,
        click: Box<Click>,
        reply: oneshot::Sender<Result<Walkthrough, ClickRefused>>,
    },
    ResendClick {
        id: String,
        click_id: Option<String>,
        agent: String,
        reply: oneshot::Sender<Result<(Walkthrough, String), ClickRefused>>,
    },
    TakeThreadMessages {
        agent: String,
        id: String,
        via: &'static str,
        reply: oneshot::Sender<Vec<(Thread, String)>>,
    },
    AdvanceDeliveries {
        agent: String,
        ids: Vec<String>,
        state: crate::feedback::DeliveryState,
        via: Option<&'static str>,
    },
}

/// Why a click was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClickRefused {
    #[error("there is no walkthrough {0}")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    #[error("the click could not be stored: {0}")]
    Store(String),
    #[error("the Parley daemon is shutting down; try again in a moment")]
    Stopped,
}

/// The messages handed to an agent: a person's words in threads (each with
/// its thread and comment id) and clicks of its walkthroughs' actions (each
/// with its walkthrough and click id).
#[derive(Debug, Default)]
pub struct Taken {
    pub comments: Vec<(Thread, String)>,
    pub clicks: Vec<(Walkthrough, String)>,
}

/// A change to one session, made by the state owner on its newest version
/// (what [`StateHandle::edit_session`] sends it).
type SessionEdit = Box<dyn FnOnce(&mut Session) -> Result<(), SessionError> + Send>;

/// A [`SessionEdit`] in a command (the edit itself has nothing to print).
struct EditOfSession(SessionEdit);

impl std::fmt::Debug for EditOfSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EditOfSession")
    }
}

/// What an import brought in, and every open thread's file (to watch).
#[derive(Debug, Clone)]
pub struct Imported {
    pub reviews: usize,
    pub threads: usize,
    pub walkthroughs: usize,
    pub files: Vec<PathBuf>,
}

/// What `status` reports from the state.
#[derive(Debug, Clone)]
pub struct StatusFacts {
    pub connections: wire::ConnectionCounts,
    pub editors: Vec<wire::EditorSummary>,
    pub workspaces: Vec<PathBuf>,
    pub reviews: usize,
    /// Open feedback threads.
    pub threads: usize,
}

/// A cloneable handle on the state owner: one method per query or command.
/// Each fails with [`Stopped`] (or an error made from it) only while the
/// daemon shuts down.
#[derive(Debug, Clone)]
pub struct StateHandle {
    /// Sent by every connection; received by [`run`]; closed when the daemon stops.
    tx: mpsc::Sender<Command>,
    /// Sent by the state owner for every published change; received by the
    /// MCP connections that asked through [`StateHandle::changes`]. Handles
    /// keep it open: a listener stops with its connection, not with this.
    changes: broadcast::Sender<Changed>,
}

/// The state owner stopped; only happens while the daemon shuts down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the Parley daemon is shutting down; try again in a moment")]
pub struct Stopped;

impl StateHandle {
    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Command) -> Result<T, Stopped> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(make(reply)).await.map_err(|_| Stopped)?;
        answer.await.map_err(|_| Stopped)
    }

    /// Asks a command that can fail on its own; stopping becomes `E` too.
    async fn try_ask<T, E: From<Stopped>>(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<T, E>>) -> Command,
    ) -> Result<T, E> {
        self.ask(make).await.map_err(E::from)?
    }

    async fn tell(&self, command: Command) {
        // A send fails only while the daemon shuts down, when nothing matters.
        let _ = self.tx.send(command).await;
    }

    /// Registers a connection. `events` is present for clients that receive
    /// events (editors at once, CLI connections after `subscribe`). Answers
    /// the newest sequence number and the daemon instance.
    pub async fn connected(
        &self,
        id: u64,
        facts: ClientFacts,
        events: Option<mpsc::Sender<Outbound>>,
    ) -> Result<(u64, String), Stopped> {
        self.ask(|reply| Command::Connected { id, facts, events, reply }).await
    }

    /// Every change published from now on, for an agent connection to
    /// notify its subscribers; a receiver that lags is told how many it missed.
    pub fn changes(&self) -> broadcast::Receiver<Changed> {
        self.changes.subscribe()
    }

    pub async fn disconnected(&self, id: u64) {
        self.tell(Command::Disconnected { id }).await;
    }

    pub async fn focus(&self, id: u64, focused: bool) {
        self.tell(Command::Focus { id, focused }).await;
    }

    pub async fn selection_changed(&self, id: u64, selection: Option<Selection>) {
        self.tell(Command::SelectionChanged { id, selection }).await;
    }

    /// The newest review for `base`, if any, to build the next revision on:
    /// it may still be on its way to disk (a commit built on it then fails
    /// with it), so it is for writers, never shown to readers.
    pub async fn latest_review(&self, base: PathBuf) -> Result<Option<Review>, Stopped> {
        self.ask(|reply| Command::LatestReview { base, reply }).await
    }

    /// Stores `review` if the stored revision is still `review.revision - 1`,
    /// then pushes it to every editor whose workspace holds its base.
    pub async fn commit(&self, review: Review) -> Result<Committed, CommitError> {
        self.try_ask(|reply| Command::Commit { review, reply }).await
    }

    /// Reviews whose base lies in one of `folders` (all when `None`), newest first.
    pub async fn reviews(&self, folders: Option<Vec<PathBuf>>) -> Result<Vec<Review>, Stopped> {
        self.ask(|reply| Command::Reviews { folders, reply }).await
    }

    /// The editor window an agent named `editor_id` working in `folder` means
    /// (see `routing::choose`).
    pub async fn pick_editor(
        &self,
        editor_id: Option<String>,
        folder: Option<PathBuf>,
        any_workspace: bool,
    ) -> Result<Option<PickedEditor>, Stopped> {
        self.ask(|reply| Command::PickEditor { editor_id, folder, any_workspace, reply }).await
    }

    /// Every editor window open on `folder` (one of its folders holds it or
    /// lies inside it), the most recently focused first.
    pub async fn editors_on(&self, folder: PathBuf) -> Result<Vec<PickedEditor>, Stopped> {
        self.ask(|reply| Command::EditorsOn { folder, reply }).await
    }

    /// The events after `after` for connection `id`'s workspaces.
    pub async fn replay(
        &self,
        id: u64,
        after: u64,
        instance: Option<String>,
    ) -> Result<wire::EventsReplayResult, Stopped> {
        self.ask(|reply| Command::Replay { id, after, instance, reply }).await
    }

    pub async fn status(&self) -> Result<StatusFacts, Stopped> {
        self.ask(|reply| Command::Status { reply }).await
    }

    /// A CLI connection asks for the events of some folders.
    pub async fn subscribe(&self, id: u64, workspaces: Vec<PathBuf>) {
        self.tell(Command::Subscribe { id, workspaces }).await;
    }

    /// Files with open threads inside `scope` (or just `file`) that may have
    /// changed (see [`Suspects`]), with what was last known of them, so the
    /// caller can see which changed on disk.
    pub async fn files_to_check(
        &self,
        scope: PathBuf,
        file: Option<PathBuf>,
        suspects: Suspects,
    ) -> Result<Vec<FileToCheck>, Stopped> {
        self.ask(|reply| Command::FilesToCheck { scope, file, suspects, reply }).await
    }

    /// Has the state owner compact its threads now, and answers how many
    /// compactions it has made.
    #[cfg(test)]
    pub async fn compact_threads(&self) -> usize {
        self.ask(|reply| Command::CompactThreads { now: true, reply }).await.unwrap_or(0)
    }

    /// How many compactions the state owner has made.
    #[cfg(test)]
    pub async fn compactions(&self) -> usize {
        self.ask(|reply| Command::CompactThreads { now: false, reply }).await.unwrap_or(0)
    }

    /// Every thread (resolved ones too) on one file.
    pub async fn threads_of_file(&self, file: PathBuf) -> Result<Vec<Thread>, Stopped> {
        self.ask(|reply| Command::ThreadsOfFile { file, reply }).await
    }

    /// The open threads of one file not yet checked against its text of
    /// hash `hash`. Usually none: only those are copied out.
    pub async fn threads_to_recheck(&self, file: PathBuf, hash: Arc<str>) -> Result<Vec<Thread>, Stopped> {
        self.ask(|reply| Command::ThreadsToRecheck { file, hash, reply }).await
    }

    /// Thread ids that start with `prefix` (a few at most: enough to tell
    /// one from several), of threads on files inside `within` only when given.
    pub async fn thread_ids_starting_with(
        &self,
        prefix: String,
        within: Option<PathBuf>,
    ) -> Result<Vec<String>, Stopped> {
        self.ask(|reply| Command::ThreadIdsStartingWith { prefix, within, reply }).await
    }

    /// Session ids that `abbreviation` abbreviates (a few at most), of
    /// `repository` only when given.
    pub async fn session_ids_matching(
        &self,
        abbreviation: String,
        repository: Option<PathBuf>,
    ) -> Result<Vec<String>, Stopped> {
        self.ask(|reply| Command::SessionIdsMatching { abbreviation, repository, reply }).await
    }

    /// One thread by id, resolved or not.
    pub async fn thread(&self, id: String) -> Result<Option<Thread>, Stopped> {
        self.ask(|reply| Command::Thread { id, reply }).await
    }

    /// The outcome of re-anchoring a file's threads: their new positions and
    /// states, and the stamp of the text they were checked against.
    pub async fn rechecked(
        &self,
        file: PathBuf,
        stamp: Option<FileStamp>,
        updates: Vec<Thread>,
    ) -> Result<(), ThreadError> {
        self.try_ask(|reply| Command::Rechecked { file, stamp, updates, reply }).await
    }

    /// Threads inside `scope` (or just `file`), ordered by file then line.
    pub async fn threads(
        &self,
        scope: PathBuf,
        file: Option<PathBuf>,
        include_resolved: bool,
    ) -> Result<Vec<Thread>, Stopped> {
        let page = crate::feedback::Page::ALL;
        Ok(self.ask(|reply| Command::Threads { scope, file, include_resolved, page, reply }).await?.1)
    }

    /// One page of [`StateHandle::threads`], and how many threads the whole
    /// listing holds.
    pub async fn threads_page(
        &self,
        scope: PathBuf,
        file: Option<PathBuf>,
        include_resolved: bool,
        page: crate::feedback::Page,
    ) -> Result<(usize, Vec<Thread>), Stopped> {
        self.ask(|reply| Command::Threads { scope, file, include_resolved, page, reply }).await
    }

    pub async fn summary(&self, scope: PathBuf) -> Result<Summary, Stopped> {
        self.ask(|reply| Command::Summary { scope, reply }).await
    }

    pub async fn create_thread(&self, thread: Thread) -> Result<Thread, ThreadError> {
        self.try_ask(|reply| Command::CreateThread { thread: Box::new(thread), reply }).await
    }

    pub async fn edit_thread(&self, id: String, edit: ThreadEdit) -> Result<Thread, ThreadError> {
        self.try_ask(|reply| Command::EditThread { id, edit, reply }).await
    }

    /// Records that `agent` read these threads at `at` (one command for a
    /// whole listing); nobody waits for the write.
    pub async fn mark_seen(&self, ids: Vec<String>, agent: String, at: String) {
        self.tell(Command::MarkSeen { ids, agent, at }).await;
    }

    /// Writes an export into the store and replaces everything in memory
    /// with what the store then holds, in one step, so no write lands between.
    pub async fn import(&self, export: crate::store::Export) -> Result<Imported, ImportError> {
        let result = self.ask(|reply| Command::Import { export: Box::new(export), reply }).await?;
        result.map_err(ImportError::Store)
    }

    /// Opens a review session under a fresh id (ids are allocated by the
    /// owner, one at a time, so two agents never get the same one).
    pub async fn start_session(&self, workspace: PathBuf, request: SessionRequest) -> Result<Session, SessionError> {
        self.try_ask(|reply| Command::StartSession { workspace, request, reply }).await
    }

    /// Checks that a session can take another round.
    pub async fn check_session(&self, id: String, max_rounds: u32) -> Result<Session, SessionError> {
        self.try_ask(|reply| Command::CheckSession { id, max_rounds, reply }).await
    }

    /// Appends a round (numbered by the owner) to a session.
    pub async fn add_round(&self, id: String, round: Round, max_rounds: u32) -> Result<Session, SessionError> {
        self.try_ask(|reply| Command::AddRound { id, round: Box::new(round), max_rounds, reply }).await
    }

    /// Sessions of a workspace (all when `None`), newest first.
    pub async fn sessions(&self, workspace: Option<PathBuf>, limit: usize) -> Result<Vec<Session>, Stopped> {
        self.ask(|reply| Command::Sessions { workspace, limit, reply }).await
    }

    /// One session by id.
    pub async fn session(&self, id: String) -> Result<Option<Session>, Stopped> {
        self.ask(|reply| Command::Session { id, reply }).await
    }

    pub async fn complete_session(
        &self,
        id: String,
        final_status: FinalStatus,
        notes: Option<String>,
    ) -> Result<Session, SessionError> {
        self.try_ask(|reply| Command::CompleteSession { id, final_status, notes, reply }).await
    }

    /// Forgets a session whose first round failed: it has no round, no
    /// completion and nothing pending (a session with any of these stays).
    pub async fn discard_empty_session(&self, id: String) {
        self.tell(Command::DiscardEmptySession { id }).await;
    }

    /// Marks a session's background round as running or failed (or clears it).
    pub async fn set_pending(&self, id: String, pending: Option<crate::sessions::Pending>) {
        self.tell(Command::SetPending { id, pending }).await;
    }

    /// Changes a session (its round waiting on a person, say); answers the
    /// new version, with what `edit` computed, once it is durable, or the
    /// edit's refusal.
    pub async fn edit_session<T: Send + 'static>(
        &self,
        id: String,
        edit: impl FnOnce(&mut Session) -> Result<T, SessionError> + Send + 'static,
    ) -> Result<(Session, T), SessionError> {
        let (computed_tx, computed) = oneshot::channel();
        let edit: SessionEdit = Box::new(move |session| {
            let _ = computed_tx.send(edit(session)?);
            Ok(())
        });
        let session = self.try_ask(|reply| Command::EditSession { id, edit: EditOfSession(edit), reply }).await?;
        // The edit ran (the new version is stored), so what it computed is there.
        let computed = computed.await.map_err(|_| SessionError::Stopped)?;
        Ok((session, computed))
    }

    /// Every session with a round waiting on a person, newest request
    /// first, as light copies: the waiting round without its files' texts
    /// and diff, and no earlier rounds.
    pub async fn awaiting_person(&self) -> Result<Vec<Session>, Stopped> {
        self.ask(|reply| Command::AwaitingPerson { reply }).await
    }

    /// The open threads waiting on `person`'s answer (see
    /// [`crate::feedback::waits_on`]), newest change first.
    pub async fn threads_waiting_on(&self, person: String) -> Result<Vec<Thread>, Stopped> {
        self.ask(|reply| Command::ThreadsWaitingOn { person, reply }).await
    }

    /// Tells the editor windows (and subscribed terminals) on the repository
    /// at `root` about a round waiting on a person.
    pub async fn publish_round(&self, root: PathBuf, method: &'static str, params: Value) {
        self.tell(Command::PublishRound { root, method, params }).await;
    }

    /// Registers an agent's MCP connection; it is listed once its host
    /// says who it is ([`StateHandle::agent_host`]).
    pub async fn agent_connected(&self, agent: NewAgent) {
        self.tell(Command::AgentConnected { agent }).await;
    }

    /// The host of agent connection `id` said who it is; answers the
    /// agent's short name.
    pub async fn agent_host(&self, id: u64, host: HostFacts) -> Result<Option<String>, Stopped> {
        self.ask(|reply| Command::AgentHost { id, host, reply }).await
    }

    /// Agent connection `id` works in `workspace` (its host's roots said so).
    pub async fn agent_workspace(&self, id: u64, workspace: PathBuf) {
        self.tell(Command::AgentWorkspace { id, workspace }).await;
    }

    /// Agent `id` started the Parley tool call `tool` (`waiting`: one that
    /// waits), or (`None`) ended the call it waited in.
    pub async fn agent_call(&self, id: u64, tool: Option<String>, waiting: bool) {
        let command = Command::AgentCall { id, tool: tool.clone(), waiting };
        if tool.is_some() && !waiting {
            // Only the last call changes: a tool call never waits for the
            // owner to take it (it may be busy compacting threads).
            let _ = self.tx.try_send(command);
        } else {
            self.tell(command).await;
        }
    }

    /// Agent connection `id` ended; `daemon_stopping` keeps its name for its
    /// shim's return.
    pub async fn agent_left(&self, id: u64, daemon_stopping: bool) {
        self.tell(Command::AgentLeft { id, daemon_stopping }).await;
    }

    /// The agents at work, of `folder` only when given, by name. The
    /// connection `asker`, when given, is sent `agents/changed` from now on.
    pub async fn agents(&self, folder: Option<PathBuf>, asker: Option<u64>) -> Result<wire::AgentsListResult, Stopped> {
        self.ask(|reply| Command::Agents { folder, asker, reply }).await
    }

    /// Hands over the messages waiting for `agent`, marked delivered `via`:
    /// each with its thread and its comment's id, or its walkthrough and
    /// its click's id.
    pub async fn take_messages(&self, agent: String, via: &'static str) -> Result<Taken, Stopped> {
        self.ask(|reply| Command::TakeMessages { agent, via, reply }).await
    }

    /// The newest walkthrough of `workspace` titled `title`, to build the
    /// next revision on (it may still be on its way to disk).
    pub async fn walkthrough_titled(&self, workspace: PathBuf, title: String) -> Result<Option<Walkthrough>, Stopped> {
        self.ask(|reply| Command::WalkthroughTitled { workspace, title, reply }).await
    }

    /// Stores `walkthrough` if the stored revision is still the one before
    /// it, then pushes it to the windows on its workspace.
    pub async fn commit_walkthrough(&self, walkthrough: Walkthrough) -> Result<Walkthrough, CommitError> {
        self.try_ask(|reply| Command::CommitWalkthrough { walkthrough: Box::new(walkthrough), reply }).await
    }

    /// Walkthroughs of the workspaces in or around `folders` (all when
    /// `None`), newest first.
    pub async fn walkthroughs(&self, folders: Option<Vec<PathBuf>>) -> Result<Vec<Walkthrough>, Stopped> {
        self.ask(|reply| Command::Walkthroughs { folders, reply }).await
    }

    /// A person's click of action `block_index` of walkthrough `id`; answers
    /// the walkthrough with it once durable.
    pub async fn click(&self, id: String, block_index: usize, click: Click) -> Result<Walkthrough, ClickRefused> {
        let click = Box::new(click);
        self.ask(|reply| Command::Click { id, block_index, click, reply }).await.map_err(|_| ClickRefused::Stopped)?
    }

    /// Sends click `click_id` of walkthrough `id` (its newest waiting click
    /// when `None`) on to `agent`; answers the walkthrough and the click's
    /// id once durable.
    pub async fn resend_click(
        &self,
        id: String,
        click_id: Option<String>,
        agent: String,
    ) -> Result<(Walkthrough, String), ClickRefused> {
        self.ask(|reply| Command::ResendClick { id, click_id, agent, reply })
            .await
            .map_err(|_| ClickRefused::Stopped)?
    }

    /// Hands over the messages of thread `id` waiting for `agent`, marked
    /// delivered `via`: each with the thread and its comment's id.
    pub async fn take_thread_messages(
        &self,
        agent: String,
        id: String,
        via: &'static str,
    ) -> Result<Vec<(Thread, String)>, Stopped> {
        self.ask(|reply| Command::TakeThreadMessages { agent, id, via, reply }).await
    }

    /// Moves `agent`'s messages in threads `ids` on to `state` (read, answered).
    pub async fn advance_deliveries(
        &self,
        agent: String,
        ids: Vec<String>,
        state: crate::feedback::DeliveryState,
        via: Option<&'static str>,
    ) {
        self.tell(Command::AdvanceDeliveries { agent, ids, state, via }).await;
    }
}

impl From<Stopped> for ThreadError {
    fn from(_: Stopped) -> Self {
        ThreadError::Stopped
    }
}

impl From<Stopped> for SessionError {
    fn from(_: Stopped) -> Self {
        SessionError::Stopped
    }
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Stopped(#[from] Stopped),
    #[error("{0}")]
    Store(String),
}

struct Client {
    facts: ClientFacts,
    outbox: Option<mpsc::Sender<Outbound>>,
    /// Receives events for its workspaces: editors always, CLI clients after `subscribe`.
    subscribed: bool,
    focus_rank: u64,
    last_selection: Option<Selection>,
    /// Sent `agents/changed`: it has listed the agents (`agents/list`).
    hears_agents: bool,
}

/// What an event was about, kept so a replay can render it in the
/// replaying client's position encoding.
#[derive(Debug, Clone)]
enum Payload {
    Review(Review),
    Thread {
        change: &'static str,
        thread: Box<Thread>,
    },
    /// A round waiting on a person: `round/requested` or `round/changed`.
    Round {
        method: &'static str,
        params: Value,
    },
    Walkthrough(Box<Walkthrough>),
}

impl Payload {
    /// Roughly what the payload holds in memory: its texts.
    fn approx_bytes(&self) -> usize {
        match self {
            Payload::Review(review) => {
                review.content.len()
                    + review.references.iter().map(|r| r.found.text.len() * 2 + 64).sum::<usize>()
                    + 256
            }
            Payload::Thread { thread, .. } => {
                thread.anchor.quote.len() * 2
                    + thread.original_quote.len()
                    + thread.comments.iter().map(|c| c.body.len() + c.author.len() + 96).sum::<usize>()
                    + 512
            }
            Payload::Round { params, .. } => params.to_string().len(),
            Payload::Walkthrough(walkthrough) => walkthrough.content.len() * 2 + 1024,
        }
    }
}

struct LoggedEvent {
    seq: u64,
    /// What `approx_bytes` said of the payload when it was logged.
    bytes: usize,
    /// The review's base or the thread's file, to filter replays by workspace.
    path: PathBuf,
    payload: Payload,
}

struct State {
    clients: HashMap<u64, Client>,
    reviews: BTreeMap<PathBuf, Review>,
    threads: HashMap<threads::ThreadKey, Box<Thread>>,
    /// Thread ids by absolute file; all of a folder's files are one range.
    by_file: BTreeMap<PathBuf, BTreeSet<threads::ThreadKey>>,
    /// What was last read of each file with threads.
    stamps: HashMap<PathBuf, FileStamp>,
    /// Each file's open-thread counts, kept current as threads change.
    counts: BTreeMap<PathBuf, crate::feedback::FileCounts>,
    /// The files with open threads and no stamp (never read, or reopened):
    /// a summary checks these and the watcher's suspects, and visits no
    /// other file.
    unstamped: BTreeMap<PathBuf, ()>,
    /// Review sessions by id (ids sort by date, then number).
    sessions: BTreeMap<String, Session>,
    events: VecDeque<LoggedEvent>,
    /// The sum of the logged events' `bytes`.
    event_bytes: usize,
    seq: u64,
    /// Names this run of the daemon; sequence numbers restart with it.
    instance: String,
    focus_counter: u64,
    store: Store,
    /// Writes waiting for the next batch, oldest first; none is visible yet.
    queue: VecDeque<durable::Staged>,
    /// The batch the store is writing now.
    in_flight: Option<Vec<durable::InFlight>>,
    /// Records to write back as memory has them, after a batch failed.
    restore: BTreeSet<durable::Key>,
    /// The newest versions of threads, reviews and sessions (`None`:
    /// removed) with writes waiting, which later commands build on.
    staged_threads: HashMap<String, Thread>,
    staged_reviews: HashMap<PathBuf, Review>,
    staged_sessions: BTreeMap<String, Option<Session>>,
    /// Walkthroughs by id (their current revisions), and those with writes
    /// waiting.
    walkthroughs: BTreeMap<String, Walkthrough>,
    staged_walkthroughs: HashMap<String, Walkthrough>,
    /// Sent by each batch's writing task with its outcome; received by [`run`].
    written: mpsc::Sender<Result<(), String>>,
    /// The sending side of [`StateHandle::changes`].
    changes: broadcast::Sender<Changed>,
    /// Threads changed since they were last compacted (see [`COMPACT_AFTER_CHANGES`]).
    changed_since_compaction: usize,
    /// When the last thread change was handed to the store.
    last_change: Instant,
    /// How many compactions were made.
    compactions: usize,
    /// The agents at work, their names, and the messages waiting for them.
    agents: agents::Registry,
}

/// Starts the state owner with the reviews and threads already in `store`.
pub fn spawn(
    store: Store,
    reviews: Vec<Review>,
    threads: Vec<Thread>,
    sessions: Vec<Session>,
    agent_names: Vec<(String, String)>,
) -> (StateHandle, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel(1024);
    // One batch is in flight at a time, so one outcome at most waits.
    let (written, written_rx) = mpsc::channel(1);
    let (changes, _) = broadcast::channel(CHANGES_LEN);
    let mut state = State {
        clients: HashMap::new(),
        reviews: BTreeMap::new(),
        threads: HashMap::new(),
        by_file: BTreeMap::new(),
        stamps: HashMap::new(),
        counts: BTreeMap::new(),
        unstamped: BTreeMap::new(),
        sessions: sessions.into_iter().map(|s| (s.id.clone(), s)).collect(),
        events: VecDeque::new(),
        event_bytes: 0,
        seq: 0,
        instance: crate::feedback::new_id(),
        focus_counter: 0,
        store,
        queue: VecDeque::new(),
        changed_since_compaction: 0,
        last_change: Instant::now(),
        compactions: 0,
        in_flight: None,
        restore: BTreeSet::new(),
        staged_threads: HashMap::new(),
        staged_reviews: HashMap::new(),
        staged_sessions: BTreeMap::new(),
        walkthroughs: BTreeMap::new(),
        staged_walkthroughs: HashMap::new(),
        written,
        changes: changes.clone(),
        agents: agents::Registry::remember(agent_names),
    };
    state.load(reviews, threads);
    match state.store.walkthroughs() {
        Ok(walkthroughs) => {
            for walkthrough in walkthroughs {
                state.note_clicks(&walkthrough);
                state.walkthroughs.insert(walkthrough.id.clone(), walkthrough);
            }
        }
        Err(e) => tracing::warn!("cannot read the stored walkthroughs: {e}"),
    }
    let task = tokio::spawn(run(state, rx, written_rx));
    (StateHandle { tx, changes }, task)
}

async fn run(mut state: State, mut rx: mpsc::Receiver<Command>, mut written: mpsc::Receiver<Result<(), String>>) {
    let mut open = true;
    // Once every handle is gone, the writes already handed over still finish.
    while open || state.in_flight.is_some() || !state.queue.is_empty() {
        let compact_at = state.compaction_due().map(tokio::time::Instant::from_std);
        tokio::select! {
            command = rx.recv(), if open => match command {
                Some(command) => state.handle(command),
                None => open = false,
            },
            Some(outcome) = written.recv() => state.written(outcome),
            () = tokio::time::sleep_until(compact_at.unwrap_or_else(tokio::time::Instant::now)), if compact_at.is_some() => {
                state.compact_if_quiet();
            }
        }
        state.dispatch();
    }
}

impl State {
    fn handle(&mut self, command: Command) {
        match command {
            Command::Connected { id, facts, events: outbox, reply } => {
                let seq = (self.seq, self.instance.clone());
                self.focus_counter += 1;
                let subscribed = facts.role == Role::Editor;
                let client = Client {
                    facts,
                    outbox,
                    subscribed,
                    focus_rank: self.focus_counter,
                    last_selection: None,
                    hears_agents: false,
                };
                self.clients.insert(id, client);
                let _ = reply.send(seq);
            }
            Command::Disconnected { id } => {
                self.clients.remove(&id);
            }
            Command::Focus { id, focused } => {
                if focused {
                    self.focus_counter += 1;
                    if let Some(client) = self.clients.get_mut(&id) {
                        client.focus_rank = self.focus_counter;
                    }
                }
            }
            Command::SelectionChanged { id, selection } => {
                if let Some(client) = self.clients.get_mut(&id) {
                    client.last_selection = selection;
                }
            }
            Command::LatestReview { base, reply } => {
                let newest = self.staged_reviews.get(&base).or_else(|| self.reviews.get(&base));
                let _ = reply.send(newest.cloned());
            }
            Command::Commit { review, reply } => self.commit(review, reply),
            Command::Reviews { folders, reply } => {
                let mut found: Vec<Review> = self
                    .reviews
                    .values()
                    .filter(|r| match &folders {
                        None => true,
                        Some(folders) => folders.iter().any(|f| in_workspace(f, &r.base)),
                    })
                    .cloned()
                    .collect();
                found.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
                let _ = reply.send(found);
            }
            Command::PickEditor { editor_id, folder, any_workspace, reply } => {
                let _ = reply.send(self.pick_editor(editor_id.as_deref(), folder.as_deref(), any_workspace));
            }
            Command::EditorsOn { folder, reply } => {
                let _ = reply.send(self.editors_on(&folder));
            }
            Command::Replay { id, after, instance, reply } => {
                let _ = reply.send(self.replay(id, after, instance.as_deref()));
            }
            Command::Status { reply } => {
                let _ = reply.send(self.status());
            }
            Command::Subscribe { id, workspaces } => {
                if let Some(client) = self.clients.get_mut(&id) {
                    client.subscribed = true;
                    client.facts.workspaces = workspaces;
                }
            }
            Command::FilesToCheck { scope, file, suspects, reply } => {
                let _ = reply.send(self.files_to_check(&scope, file.as_deref(), &suspects));
            }
            Command::ThreadsOfFile { file, reply } => {
                let _ = reply.send(self.threads_of_file(&file).cloned().collect());
            }
            Command::ThreadsToRecheck { file, hash, reply } => {
                let pending = self.threads_of_file(&file).filter(|t| !t.resolved && t.checked_against != hash);
                let _ = reply.send(pending.cloned().collect());
            }
            Command::Thread { id, reply } => {
                let _ = reply.send(self.thread(&id).cloned());
            }
            Command::ThreadIdsStartingWith { prefix, within, reply } => {
                let ids = self
                    .threads
                    .values()
                    .filter(|t| within.as_ref().is_none_or(|w| workspace::holds(w, &views::file_of(t))))
                    .map(|t| &t.id);
                let found = ids.filter(|id| id.starts_with(&prefix)).take(crate::ids::ABBREVIATION_MATCHES);
                let _ = reply.send(found.cloned().collect());
            }
            Command::SessionIdsMatching { abbreviation, repository, reply } => {
                let found = self
                    .sessions
                    .iter()
                    .filter(|(_, s)| repository.as_ref().is_none_or(|r| &s.workspace == r))
                    .map(|(id, _)| id)
                    .filter(|id| crate::ids::abbreviates_session(&abbreviation, id))
                    .take(crate::ids::ABBREVIATION_MATCHES);
                let _ = reply.send(found.cloned().collect());
            }
            Command::Rechecked { file, stamp, updates, reply } => {
                self.rechecked(file, stamp, updates);
                let _ = reply.send(Ok(()));
            }
            Command::Threads { scope, file, include_resolved, page, reply } => {
                let _ = reply.send(self.threads_in(&scope, file.as_deref(), include_resolved, page));
            }
            Command::Summary { scope, reply } => {
                let _ = reply.send(self.summary(&scope));
            }
            Command::CreateThread { thread, reply } => self.create_thread(*thread, reply),
            Command::EditThread { id, edit, reply } => self.edit_thread(id, edit, reply),
            Command::MarkSeen { ids, agent, at } => self.mark_seen(&ids, &agent, &at),
            Command::Import { export, reply } => self.import(export, reply),
            Command::StartSession { workspace, request, reply } => self.start_session(workspace, request, reply),
            Command::CheckSession { id, max_rounds, reply } => {
                let _ = reply.send(self.check_session(&id, max_rounds).cloned());
            }
            Command::AddRound { id, round, max_rounds, reply } => self.add_round(&id, *round, max_rounds, reply),
            Command::Sessions { workspace, limit, reply } => {
                let _ = reply.send(self.sessions_of(workspace.as_deref(), limit));
            }
            Command::Session { id, reply } => {
                let _ = reply.send(self.sessions.get(&id).cloned());
            }
            Command::CompleteSession { id, final_status, notes, reply } => {
                self.complete_session(&id, final_status, notes, reply);
            }
            Command::SetPending { id, pending } => self.set_pending(&id, pending),
            Command::EditSession { id, edit, reply } => self.edit_session(&id, edit.0, reply),
            Command::AwaitingPerson { reply } => {
                let _ = reply.send(self.awaiting_person());
            }
            Command::ThreadsWaitingOn { person, reply } => {
                let mut waiting: Vec<Thread> = self
                    .threads
                    .values()
                    .filter(|t| crate::feedback::waits_on(t, &person))
                    .map(|t| Thread::clone(t))
                    .collect();
                waiting.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
                let _ = reply.send(waiting);
            }
            Command::PublishRound { root, method, params } => {
                self.publish(root, Payload::Round { method, params });
            }
            Command::DiscardEmptySession { id } => self.discard_empty_session(&id),
            Command::AgentConnected { agent } => self.agent_connected(agent),
            Command::AgentHost { id, host, reply } => {
                let _ = reply.send(self.agent_host(id, host));
            }
            Command::AgentCall { id, tool, waiting } => self.agent_call(id, tool, waiting),
            Command::AgentWorkspace { id, workspace } => self.agent_workspace(id, workspace),
            Command::AgentLeft { id, daemon_stopping } => self.agent_left(id, daemon_stopping),
            Command::Agents { folder, asker, reply } => {
                if let Some(client) = asker.and_then(|id| self.clients.get_mut(&id)) {
                    client.hears_agents = true;
                }
                let agents = self.agents_at_work(folder.as_deref());
                let _ = reply.send(wire::AgentsListResult { agents, absent: self.absent_agents() });
            }
            Command::TakeMessages { agent, via, reply } => {
                let comments = self.take_messages(&agent, via);
                let clicks = self.take_clicks(&agent, via);
                let _ = reply.send(Taken { comments, clicks });
            }
            Command::WalkthroughTitled { workspace, title, reply } => {
                let _ = reply.send(self.walkthrough_titled(&workspace, &title));
            }
            Command::CommitWalkthrough { walkthrough, reply } => self.commit_walkthrough(*walkthrough, reply),
            Command::Walkthroughs { folders, reply } => {
                let _ = reply.send(self.walkthroughs_in(folders.as_deref()));
            }
            Command::Click { id, block_index, click, reply } => self.click(&id, block_index, *click, reply),
            Command::ResendClick { id, click_id, agent, reply } => {
                self.resend_click(&id, click_id.as_deref(), &agent, reply)
            }
            Command::TakeThreadMessages { agent, id, via, reply } => {
                let _ = reply.send(self.take_thread_messages(&agent, &id, via));
            }
            Command::AdvanceDeliveries { agent, ids, state, via } => {
                let at = crate::clock::now_rfc3339();
                for id in ids {
                    self.advance_deliveries(&id, &agent, state, via, &at);
                }
            }
            #[cfg(test)]
            Command::CompactThreads { now, reply } => {
                if now {
                    self.compact_threads();
                    self.compactions += 1;
                }
                let _ = reply.send(self.compactions);
            }
        }
    }

    fn load(&mut self, reviews: Vec<Review>, threads: Vec<Thread>) {
        self.reviews = reviews.into_iter().map(|r| (r.base.clone(), r)).collect();
        self.threads.clear();
        self.by_file.clear();
        self.stamps.clear();
        for thread in threads {
            self.index_thread(thread);
        }
        let files: Vec<PathBuf> = self.by_file.keys().cloned().collect();
        self.counts.clear();
        self.unstamped.clear();
        for file in files {
            self.recount(&file);
        }
        // The records read from the store are freed now that they are
        // indexed: let the system have the pages back.
        crate::memory::return_freed_memory();
    }

    /// Hands an export to the store; once it is durable, what it brought is
    /// read back from the store into memory.
    fn import(&mut self, export: Box<crate::store::Export>, reply: oneshot::Sender<Result<Imported, String>>) {
        let reviews = export.reviews.len();
        let walkthroughs = export.walkthroughs.len();
        let threads = export.threads.iter().map(|t| t.id().to_owned()).collect();
        let effect = durable::Effect::Import { reviews, threads, walkthroughs, reply };
        self.stage(crate::store::Write::Import(export), effect);
    }

    /// Replaces the reviews, sessions and walkthroughs in memory with what
    /// the store holds (the walkthroughs' waiting clicks indexed again),
    /// and reads the threads `ids` from it (an import may have replaced
    /// threads memory held); answers their files that have open threads (to
    /// watch). Only the imported threads are read again: reading every thread
    /// once per import file would cost a workspace of 100,000 threads a
    /// reload of them all for each.
    fn reload_imported(&mut self, ids: &[String]) -> Result<Vec<PathBuf>, String> {
        let read = || -> Result<_, crate::store::StoreError> {
            let threads = ids.iter().map(|id| self.store.thread_without_context(id)).collect::<Result<Vec<_>, _>>()?;
            Ok((self.store.reviews()?, threads, self.store.sessions()?, self.store.walkthroughs()?))
        };
        let (all_reviews, threads, all_sessions, all_walkthroughs) = read().map_err(|e| e.to_string())?;
        self.reviews = all_reviews.into_iter().map(|r| (r.base.clone(), r)).collect();
        self.sessions = all_sessions.into_iter().map(|s| (s.id.clone(), s)).collect();
        self.walkthroughs = all_walkthroughs.into_iter().map(|w| (w.id.clone(), w)).collect();
        let walkthroughs: Vec<_> = self.walkthroughs.values().cloned().collect();
        for walkthrough in &walkthroughs {
            self.note_clicks(walkthrough);
        }
        let files = self.replace_threads(threads.into_iter().flatten());
        crate::memory::return_freed_memory();
        Ok(files)
    }

    /// Checks a review against the newest revision of its folder's review
    /// and hands it to the store; it is kept, pushed and answered once durable.
    fn commit(&mut self, mut review: Review, reply: oneshot::Sender<Result<Committed, CommitError>>) {
        let newest = self.staged_reviews.get(&review.base).or_else(|| self.reviews.get(&review.base));
        if review.revision != newest.map_or(0, |r| r.revision) + 1 {
            let _ = reply.send(Err(CommitError::Raced));
            return;
        }
        review.updated_at = crate::clock::now_rfc3339();
        self.staged_reviews.insert(review.base.clone(), review.clone());
        self.stage(
            crate::store::Write::Review(review.clone()),
            durable::Effect::Commit { review: Box::new(review), reply },
        );
    }

    /// Logs an event and queues it for every subscribed client whose
    /// workspace holds its path. A client whose queue is full is too slow: it
    /// is dropped, and its connection closes when its task sees the queue end.
    fn publish(&mut self, path: PathBuf, payload: Payload) -> Vec<Delivery> {
        let what = match &payload {
            Payload::Review(_) => Some(ChangedWhat::Review),
            Payload::Thread { change, .. } => Some(ChangedWhat::Thread(change)),
            // Agents hear of rounds through await_review, not resources;
            // of their walkthroughs' clicks through their messages.
            Payload::Round { .. } | Payload::Walkthrough(_) => None,
        };
        if let Some(what) = what {
            // Fails only when no agent listens, which is nothing to report.
            let _ = self.changes.send(Changed { path: path.clone(), what });
        }
        // A round is about a whole repository: a window open on a folder
        // inside it is told too.
        let round = matches!(payload, Payload::Round { .. });
        self.seq += 1;
        let seq = self.seq;
        let mut lines: HashMap<PositionEncoding, Arc<Vec<u8>>> = HashMap::new();
        let mut delivered = Vec::new();
        let mut too_slow = Vec::new();
        for (id, client) in &self.clients {
            let Some(outbox) = &client.outbox else { continue };
            let concerned = |w: &PathBuf| in_workspace(w, &path) || (round && in_workspace(&path, w));
            if !client.subscribed || !client.facts.workspaces.iter().any(concerned) {
                continue;
            }
            let line = lines
                .entry(client.facts.encoding)
                .or_insert_with(|| {
                    let event = render(seq, &payload, client.facts.encoding);
                    Arc::new(to_line(&Notification::new(&event.method, event.params)))
                })
                .clone();
            match outbox.try_send(Outbound::Line(line)) {
                // Delivered to a window only: a subscribed CLI is not one.
                Ok(()) if client.facts.role == Role::Editor => delivered
                    .push(Delivery { name: client.facts.name.clone(), editor_id: client.facts.editor_id.clone() }),
                Ok(()) => {}
                Err(_) => too_slow.push(*id),
            }
        }
        for id in too_slow {
            // Dropping its queue's only sender closes the connection once the
            // lines already queued are written, so the client knows to resync.
            tracing::warn!(connection = id, "client is not reading its events; closing its connection");
            if let Some(client) = self.clients.get_mut(&id) {
                client.outbox = None;
                client.subscribed = false;
            }
        }
        delivered.sort_by(|a, b| a.name.cmp(&b.name));
        let bytes = payload.approx_bytes();
        self.events.push_back(LoggedEvent { seq, path, payload, bytes });
        self.event_bytes += bytes;
        while self.events.len() > EVENT_LOG_LEN || (self.event_bytes > EVENT_LOG_BYTES && self.events.len() > 1) {
            if let Some(old) = self.events.pop_front() {
                self.event_bytes -= old.bytes;
            }
        }
        delivered
    }

    fn pick_editor(&self, editor_id: Option<&str>, folder: Option<&Path>, any_workspace: bool) -> Option<PickedEditor> {
        let candidates: Vec<Candidate<'_>> = self
            .clients
            .iter()
            .filter(|(_, c)| c.facts.role == Role::Editor && c.outbox.is_some())
            .map(|(id, c)| Candidate {
                connection_id: *id,
                editor_id: c.facts.editor_id.as_deref(),
                workspaces: &c.facts.workspaces,
                focus_rank: c.focus_rank,
            })
            .collect();
        let (id, reason) = routing::choose(&candidates, editor_id, folder, any_workspace)?;
        let client = self.clients.get(&id)?;
        Some(PickedEditor {
            name: client.facts.name.clone(),
            editor_id: client.facts.editor_id.clone(),
            encoding: client.facts.encoding,
            reason,
            workspaces: client.facts.workspaces.clone(),
            outbox: client.outbox.clone()?,
            last_selection: client.last_selection.clone(),
        })
    }

    fn editors_on(&self, folder: &Path) -> Vec<PickedEditor> {
        let mut on: Vec<(u64, PickedEditor)> = self
            .clients
            .values()
            .filter(|c| c.facts.role == Role::Editor)
            .filter(|c| c.facts.workspaces.iter().any(|w| workspace::holds(w, folder) || workspace::holds(folder, w)))
            .filter_map(|c| {
                let picked = PickedEditor {
                    name: c.facts.name.clone(),
                    editor_id: c.facts.editor_id.clone(),
                    encoding: c.facts.encoding,
                    reason: Reason::FocusedInWorkspace,
                    workspaces: c.facts.workspaces.clone(),
                    outbox: c.outbox.clone()?,
                    last_selection: c.last_selection.clone(),
                };
                Some((c.focus_rank, picked))
            })
            .collect();
        on.sort_by_key(|(rank, _)| std::cmp::Reverse(*rank));
        on.into_iter().map(|(_, picked)| picked).collect()
    }

    fn replay(&self, id: u64, after: u64, instance: Option<&str>) -> wire::EventsReplayResult {
        let client = self.clients.get(&id);
        let other_run = instance.is_some_and(|i| i != self.instance) || after > self.seq;
        let (Some(client), false) = (client, other_run) else {
            let instance = self.instance.clone();
            return wire::EventsReplayResult { events: Vec::new(), complete: false, seq: self.seq, instance };
        };
        let folders = &client.facts.workspaces;
        let oldest = self.events.front().map_or(self.seq + 1, |e| e.seq);
        let complete = after + 1 >= oldest || after >= self.seq;
        let events = self
            .events
            .iter()
            .filter(|e| e.seq > after && folders.iter().any(|f| in_workspace(f, &e.path)))
            .map(|e| render(e.seq, &e.payload, client.facts.encoding))
            .collect();
        wire::EventsReplayResult { events, complete, seq: self.seq, instance: self.instance.clone() }
    }

    fn status(&self) -> StatusFacts {
        let mut connections = wire::ConnectionCounts { mcp: 0, editor: 0, cli: 0 };
        let mut editors = Vec::new();
        let mut workspaces: Vec<PathBuf> = self.reviews.keys().cloned().collect();
        workspaces.extend(self.threads.values().map(|t| t.workspace.to_path_buf()));
        for (id, client) in &self.clients {
            match client.facts.role {
                Role::Mcp => connections.mcp += 1,
                Role::Editor => connections.editor += 1,
                Role::Cli => connections.cli += 1,
            }
            if client.facts.role != Role::Cli {
                workspaces.extend(client.facts.workspaces.iter().cloned());
            }
            if client.facts.role == Role::Editor {
                editors.push(wire::EditorSummary {
                    connection_id: *id,
                    name: client.facts.name.clone(),
                    editor_id: client.facts.editor_id.clone(),
                    workspaces: client.facts.workspaces.clone(),
                });
            }
        }
        editors.sort_by_key(|e| e.connection_id);
        workspaces.sort();
        workspaces.dedup();
        let threads = self.threads.values().filter(|t| !t.resolved).count();
        StatusFacts { connections, editors, workspaces, reviews: self.reviews.len(), threads }
    }
}

/// Whether a review based at `base` belongs to an editor with workspace
/// `folder`: the folder holds the base.
fn in_workspace(folder: &Path, base: &Path) -> bool {
    workspace::holds(folder, base)
}

/// An event as a client sees it.
fn render(seq: u64, payload: &Payload, encoding: PositionEncoding) -> wire::Event {
    let (method, params) = match payload {
        Payload::Review(review) => {
            (wire::REVIEW_UPDATED, serde_json::to_value(wire::ReviewUpdated { seq, review: views::review(review) }))
        }
        Payload::Thread { change, thread } => (
            wire::FEEDBACK_CHANGED,
            serde_json::to_value(wire::FeedbackChanged {
                seq,
                change: (*change).into(),
                thread: views::thread(thread, encoding),
            }),
        ),
        Payload::Round { method, params } => (*method, Ok(params.clone())),
        Payload::Walkthrough(walkthrough) => (
            wire::WALKTHROUGH_UPDATED,
            serde_json::to_value(wire::WalkthroughUpdated { seq, walkthrough: views::walkthrough(walkthrough) }),
        ),
    };
    wire::Event { seq, method: method.into(), params: params.expect("wire types always serialize") }
}

/// When the daemon started, for `status`.
#[derive(Debug, Clone, Copy)]
pub struct StartTime {
    pub instant: Instant,
    pub wall: chrono::DateTime<chrono::Utc>,
}
