//! One editor or CLI connection after hello: decodes its hub requests, calls
//! the use case each names, and encodes the result or the error; takes its
//! notifications; and writes the events and requests the daemon sends it.
//! No feature logic lives here: that is `usecases`'.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::stream::{ReadHalf, WriteHalf};
use parley_protocol::framing::{LineError, LineReader, MAX_LINE_BYTES};
use parley_protocol::hello::{HELLO, Role};
use parley_protocol::jsonrpc::{ErrorObject, Id, Message, Notification, Request, Response, code, to_line};
use parley_protocol::methods::{self as wire, Method, NotificationMethod};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::{Peer, errors, person_rounds, plans, pull_requests, walkthroughs};
use crate::state::Outbound;
use crate::usecases::Context;
use crate::usecases::feedback::NewThread;
use crate::usecases::{agents, backup, feedback, reviews, rounds};
use crate::{views, workspace};

/// A client that cannot take a line within this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// Answers to this connection's own long requests waiting to be written.
const ANSWERS_QUEUE: usize = 64;

type Pending = HashMap<i64, oneshot::Sender<Result<Value, ErrorObject>>>;

/// Serves the connection until the client leaves, the daemon closes it, or
/// the client proves too slow. `events` is the queue the state owner fills
/// with this client's events (editors and CLI); when the owner drops the
/// client for falling behind, the queue ends and the connection closes once
/// what was queued is written, so the client knows to reconnect and resync.
pub async fn serve(
    mut reader: LineReader<BufReader<ReadHalf>>,
    mut writer: WriteHalf,
    peer: Peer<'_>,
    mut events: mpsc::Receiver<Outbound>,
) -> anyhow::Result<()> {
    let mut pending = Pending::new();
    let mut next_request: i64 = 0;
    // Answers to long requests (review/request) and their progress, written
    // by this task so lines never interleave.
    let (answers_tx, mut answers) = mpsc::channel::<Arc<Vec<u8>>>(ANSWERS_QUEUE);
    // Work this connection started in the background (review/request) stops
    // when the connection closes: a human who pressed Ctrl-C wants it to.
    let connection_gone = peer.cx.shutdown.close.child_token();
    let _stop_background_work = connection_gone.clone().drop_guard();
    let mut told_stopping = false;
    loop {
        tokio::select! {
            // Told once, as soon as the daemon stops accepting (and at the
            // latest as the connection closes), so a client waits for a
            // daemon to come back instead of starting one.
            _ = peer.cx.shutdown.close.cancelled() => {
                if !told_stopping {
                    write(&mut writer, &stopping_line(&peer)).await?;
                }
                return Ok(());
            }
            _ = peer.cx.shutdown.stop.cancelled(), if !told_stopping => {
                told_stopping = true;
                write(&mut writer, &stopping_line(&peer)).await?;
            }
            line = reader.next_line() => {
                let line = match line {
                    Ok(Some(line)) => line,
                    Ok(None) => return Ok(()),
                    Err(LineError::TooLong) => {
                        let error = ErrorObject::new(code::LINE_TOO_LONG, "message exceeds the 16 MiB line limit; closing the connection");
                        write(&mut writer, &to_line(&Response::err(None, error))).await?;
                        anyhow::bail!("client sent a line over the cap");
                    }
                    Err(LineError::Io(e)) => return Err(e.into()),
                };
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match Message::parse(&line) {
                    Ok(Message::Request(request)) if is_long(&request.method) => {
                        spawn_review(request, &peer, answers_tx.clone(), connection_gone.child_token());
                    }
                    message => {
                        if let Some(response) = handle_message(message, &peer, &mut pending).await {
                            write(&mut writer, &answer_line(&response)).await?;
                        }
                    }
                }
            }
            Some(answer) = answers.recv() => write(&mut writer, &answer).await?,
            outbound = events.recv() => match outbound {
                Some(Outbound::Line(line)) => write(&mut writer, &line).await?,
                Some(Outbound::Request { method, params, reply }) => {
                    next_request += 1;
                    pending.insert(next_request, reply);
                    write(&mut writer, &to_line(&Request::new(Id::Number(next_request), method, params))).await?;
                }
                None => anyhow::bail!("closed: the client did not keep up with its events and must resync"),
            },
        }
    }
}

/// The `daemon/stopping` notification, with the reason the daemon stops.
fn stopping_line(peer: &Peer<'_>) -> Vec<u8> {
    let params = wire::DaemonStopping { reason: peer.cx.shutdown.reason() };
    to_line(&Notification::new(wire::DaemonStoppingNotification::NAME, serde_json::json!(params)))
}

async fn write(writer: &mut WriteHalf, line: &[u8]) -> anyhow::Result<()> {
    match tokio::time::timeout(WRITE_TIMEOUT, writer.write_all(line)).await {
        Ok(result) => Ok(result?),
        Err(_) => anyhow::bail!("the client stopped reading for {WRITE_TIMEOUT:?}"),
    }
}

/// Handles one message; returns the response to send, if any.
async fn handle_message(
    message: Result<Message, parley_protocol::jsonrpc::Invalid>,
    peer: &Peer<'_>,
    pending: &mut Pending,
) -> Option<Response> {
    match message {
        Err(invalid) => Some(Response::err(invalid.id, invalid.error)),
        Ok(Message::Request(request)) => {
            let request_id = request.id.clone();
            Some(match dispatch(&request, peer).await {
                Ok(result) => Response::ok(request_id, result),
                Err(error) => Response::err(Some(request_id), error),
            })
        }
        Ok(Message::Notification(notification)) => {
            handle_notification(notification, peer).await;
            None
        }
        Ok(Message::Response(response)) => {
            let waiting = match &response.id {
                Some(Id::Number(n)) => pending.remove(n),
                _ => None,
            };
            match waiting {
                Some(reply) => {
                    let answer = match response.error {
                        Some(error) => Err(error),
                        None => Ok(response.result.unwrap_or(Value::Null)),
                    };
                    let _ = reply.send(answer);
                }
                None => tracing::debug!(connection = peer.id, "response to no pending request: {:?}", response.id),
            }
            None
        }
    }
}

/// A response as a line, or, when it would be longer than any peer reads
/// (16 MiB), an error saying so and what to ask for instead: a client would
/// drop the line, and its request would never be answered.
fn answer_line(response: &Response) -> Vec<u8> {
    let line = to_line(response);
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let message = format!(
        "the answer is {} MiB, over the {} MiB a message may hold: ask for less (one file, or a folder inside the workspace)",
        line.len() / (1024 * 1024),
        MAX_LINE_BYTES / (1024 * 1024)
    );
    to_line(&Response::err(response.id.clone(), ErrorObject::new(code::LINE_TOO_LONG, message)))
}

/// How the hub answers a method of protocol's one list of methods
/// (`for_each_method!`): dispatch is made from that list, so a method added
/// there without an answer here does not build.
trait Answer: Method {
    /// Answered when its work ends, with progress meanwhile, by
    /// `spawn_review`, while the connection goes on serving.
    const LONG: bool = false;

    fn answer(peer: &Peer<'_>, params: Self::Params) -> impl Future<Output = Result<Self::Result, ErrorObject>> + Send;
}

/// Each hub method with the handler that answers it.
macro_rules! answers {
    ($($method:ident => $handler:path),* $(,)?) => {
        $(
            impl Answer for wire::$method {
                fn answer(
                    peer: &Peer<'_>,
                    params: Self::Params,
                ) -> impl Future<Output = Result<Self::Result, ErrorObject>> + Send {
                    $handler(peer, params)
                }
            }
        )*
    };
}

/// The methods `spawn_review` answers when their work ends.
macro_rules! long_answers {
    ($($method:ident),* $(,)?) => {
        $(
            impl Answer for wire::$method {
                const LONG: bool = true;

                fn answer(
                    _: &Peer<'_>,
                    _: Self::Params,
                ) -> impl Future<Output = Result<Self::Result, ErrorObject>> + Send {
                    std::future::ready(Err(errors::internal(concat!(stringify!($method), " is answered by spawn_review"))))
                }
            }
        )*
    };
}

long_answers!(ReviewRequest, ReviewAwait, PlanOpen, PlanAwait);

answers! {
    ReviewGet => review_get,
    ReviewHistory => review_history,
    EventsReplay => events_replay,
    StatusRequest => status,
    Shutdown => shutdown,
    FeedbackList => feedback_list,
    FeedbackCreate => feedback_create,
    FeedbackReply => feedback_reply,
    FeedbackResolve => feedback_resolve,
    FeedbackReopen => feedback_reopen,
    BufferChanged => buffer_changed,
    Subscribe => subscribe,
    StoreExport => store_export,
    StoreImport => store_import,
    StoreExportFile => store_export_file,
    StoreImportFile => store_import_file,
    SessionsList => sessions_list,
    SessionsGet => sessions_get,
    SessionsComplete => sessions_complete,
    ReviewCancel => review_cancel,
    Inbox => person_rounds::inbox,
    RoundGet => person_rounds::get,
    RoundComment => person_rounds::comment,
    RoundUncomment => person_rounds::uncomment,
    RoundSubmit => person_rounds::submit,
    PlanAnsweredElsewhere => plans::answered_elsewhere,
    PlanNotes => plans::notes,
    AgentsList => agents_list,
    AgentAsk => agent_ask,
    AgentResend => agent_resend,
    AgentTyped => agent_typed,
    MessagesTake => messages_take,
    WalkthroughList => walkthroughs::list,
    WalkthroughGet => walkthroughs::get,
    WalkthroughAct => walkthroughs::act,
    WalkthroughResend => walkthroughs::resend,
    PrLink => pull_requests::link,
    PrStatus => pull_requests::status,
    PrPull => pull_requests::pull,
    PrPush => pull_requests::push,
}

/// Answers one request by its method's [`Answer`], trying each method of
/// protocol's one list.
async fn dispatch(request: &Request, peer: &Peer<'_>) -> Result<Value, ErrorObject> {
    let name = request.method.as_str();
    macro_rules! answer_if_named {
        ($($method:path),* $(,)?) => {
            $(
                if name == <$method as Method>::NAME {
                    return on::<$method>(request, peer).await;
                }
            )*
        };
    }
    parley_protocol::for_each_method!(answer_if_named);
    if name == HELLO {
        return Err(ErrorObject::new(code::INVALID_REQUEST, "hello was already said on this connection"));
    }
    Err(ErrorObject::new(
        code::METHOD_NOT_FOUND,
        format!("unknown method {name}; docs/protocol.md lists the hub methods"),
    ))
}

/// Whether `name` is a method answered when its work ends (`spawn_review`).
fn is_long(name: &str) -> bool {
    macro_rules! any_long {
        ($($method:path),* $(,)?) => {
            false $(|| (name == <$method as Method>::NAME && <$method as Answer>::LONG))*
        };
    }
    parley_protocol::for_each_method!(any_long)
}

/// Checks the caller's role, decodes `M`'s params, answers them and
/// encodes the result.
async fn on<M: Answer>(request: &Request, peer: &Peer<'_>) -> Result<Value, ErrorObject> {
    allowed::<M>(peer.role)?;
    let params = decode::<M::Params>(M::NAME, &request.params)?;
    let result = M::answer(peer, params).await?;
    serde_json::to_value(result).map_err(errors::internal)
}

fn allowed<M: Method>(role: Role) -> Result<(), ErrorObject> {
    let (ok, who) = match role {
        Role::Editor => (M::FOR_EDITORS, "cli"),
        Role::Cli => (M::FOR_CLI, "editor"),
        Role::Mcp => (false, "editor or cli"),
    };
    if ok {
        return Ok(());
    }
    let message = format!(
        "{} is for {who} connections, not {role} ones; docs/protocol.md §5 says which role may call what",
        M::NAME
    );
    Err(ErrorObject::new(code::WRONG_ROLE, message))
}

/// Decodes params as every hub method does (the fuzz targets call it too);
/// absent or `null` params read as `{}`, so methods whose params are all
/// optional need none.
pub fn decode<T: DeserializeOwned>(method: &str, params: &Value) -> Result<T, ErrorObject> {
    let params = if params.is_null() { Value::Object(Default::default()) } else { params.clone() };
    serde_json::from_value(params).map_err(|e| errors::invalid(format!("invalid params for {method}: {e}")))
}

/// A folder or file from a client, which must be absolute (the daemon's
/// working directory means nothing to the client), made real.
fn absolute(path: &Path, what: &str) -> Result<PathBuf, ErrorObject> {
    if !path.is_absolute() {
        return Err(errors::invalid(format!("{what} {} must be an absolute path", path.display())));
    }
    Ok(workspace::real(path, Path::new("/")))
}

/// The folders a listing covers: the one asked for, else the editor's own.
fn scopes(asked: Option<&Path>, peer: &Peer<'_>) -> Result<Vec<PathBuf>, ErrorObject> {
    match (asked, peer.role) {
        (Some(folder), _) => Ok(vec![absolute(folder, "workspace")?]),
        (None, Role::Editor) if !peer.facts.workspaces.is_empty() => Ok(peer.facts.workspaces.clone()),
        _ => Err(errors::invalid("say which folder: pass \"workspace\"")),
    }
}

async fn review_get(peer: &Peer<'_>, p: wire::ReviewGetParams) -> Result<wire::ReviewGetResult, ErrorObject> {
    if let Some(revision) = p.revision {
        let Some(folder) = p.workspace else {
            return Err(errors::invalid("review/get with a revision needs the workspace whose review it is"));
        };
        let folder = absolute(&folder, "workspace")?;
        let found = reviews::revision(peer.cx, &folder, revision).await?;
        return Ok(wire::ReviewGetResult { reviews: vec![views::review(&found)] });
    }
    let found = reviews::list(peer.cx, review_folders(peer, p.workspace)?).await?;
    Ok(wire::ReviewGetResult { reviews: found.iter().map(views::review).collect() })
}

async fn review_history(
    peer: &Peer<'_>,
    p: wire::ReviewHistoryParams,
) -> Result<wire::ReviewHistoryResult, ErrorObject> {
    let found = reviews::history(peer.cx, review_folders(peer, p.workspace)?).await?;
    Ok(wire::ReviewHistoryResult { revisions: found.iter().map(views::review_revision).collect() })
}

/// The folders a review read covers: the one named, else an editor's
/// workspaces, else (the CLI) every folder.
fn review_folders(peer: &Peer<'_>, workspace: Option<PathBuf>) -> Result<Option<Vec<PathBuf>>, ErrorObject> {
    Ok(match (workspace, peer.role) {
        (Some(folder), _) => Some(vec![absolute(&folder, "workspace")?]),
        (None, Role::Editor) => Some(peer.facts.workspaces.clone()),
        (None, _) => None,
    })
}

async fn events_replay(peer: &Peer<'_>, p: wire::EventsReplayParams) -> Result<wire::EventsReplayResult, ErrorObject> {
    Ok(peer.cx.state.replay(peer.id, p.after, p.instance).await?)
}

async fn status(peer: &Peer<'_>, _: wire::NoParams) -> Result<wire::Status, ErrorObject> {
    let cx = peer.cx;
    let facts = cx.state.status().await?;
    Ok(wire::Status {
        pid: std::process::id(),
        version: parley_protocol::BUILD_VERSION.into(),
        protocol: parley_protocol::PROTOCOL_VERSION,
        socket: cx.socket.clone(),
        data_dir: cx.data_dir.clone(),
        started_at: cx.started.wall.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        uptime_secs: cx.started.instant.elapsed().as_secs(),
        connections: facts.connections,
        editors: facts.editors,
        workspaces: facts.workspaces,
        reviews: facts.reviews,
        threads: facts.threads,
        store_notice: cx.store_notice.clone(),
        log: Some(cx.log.clone()),
    })
}

async fn shutdown(peer: &Peer<'_>, p: wire::ShutdownParams) -> Result<wire::ShutdownResult, ErrorObject> {
    tracing::info!(connection = peer.id, reason = ?p.reason, "shutdown requested");
    let reason = match p.reason.as_deref() {
        Some("handover") => "handover",
        _ => "requested",
    };
    peer.cx.shutdown.request_stop(reason);
    Ok(wire::ShutdownResult { stopping: true })
}

async fn feedback_list(peer: &Peer<'_>, p: wire::FeedbackListParams) -> Result<wire::FeedbackListResult, ErrorObject> {
    let folders = scopes(p.workspace.as_deref(), peer)?;
    let listing =
        feedback::list_across(peer.cx, &folders, p.path.as_deref(), p.include_resolved, p.offset, p.limit).await?;
    Ok(wire::FeedbackListResult {
        threads: listing.threads.iter().map(|t| views::thread(t, peer.facts.encoding)).collect(),
        total: listing.total,
        next_offset: listing.next_offset,
    })
}

async fn feedback_create(peer: &Peer<'_>, p: wire::FeedbackCreateParams) -> Result<wire::ThreadResult, ErrorObject> {
    let file = absolute(&p.path, "path")?;
    let folder =
        peer.facts.workspaces.iter().filter(|w| workspace::holds(w, &file)).max_by_key(|w| w.as_os_str().len());
    let new = NewThread {
        workspace: folder.cloned(),
        file,
        range: p.range,
        encoding: peer.facts.encoding,
        expected_text: p.text,
        body: p.body,
        // Editors and the command line speak for the person the daemon runs as.
        author: p.author.unwrap_or_else(crate::config::user_name),
        finding: None,
        ask: None,
        opened_by: None,
        walkthrough: None,
        synced: None,
    };
    let thread = feedback::create(peer.cx, new).await?;
    Ok(wire::ThreadResult { thread: views::thread(&thread, peer.facts.encoding) })
}

async fn feedback_reply(peer: &Peer<'_>, p: wire::FeedbackReplyParams) -> Result<wire::ThreadResult, ErrorObject> {
    let author = p.author.unwrap_or_else(crate::config::user_name);
    let (thread, _) = feedback::reply(peer.cx, &p.thread_id, p.body, author, None).await?;
    Ok(wire::ThreadResult { thread: views::thread(&thread, peer.facts.encoding) })
}

async fn feedback_resolve(peer: &Peer<'_>, p: wire::ThreadIdParams) -> Result<wire::ThreadResult, ErrorObject> {
    let thread = feedback::resolve(peer.cx, &p.thread_id, None).await?;
    Ok(wire::ThreadResult { thread: views::thread(&thread, peer.facts.encoding) })
}

async fn feedback_reopen(peer: &Peer<'_>, p: wire::ThreadIdParams) -> Result<wire::ThreadResult, ErrorObject> {
    let thread = feedback::reopen(peer.cx, &p.thread_id, None).await?;
    Ok(wire::ThreadResult { thread: views::thread(&thread, peer.facts.encoding) })
}

async fn buffer_changed(
    peer: &Peer<'_>,
    p: wire::BufferChangedParams,
) -> Result<wire::FeedbackListResult, ErrorObject> {
    let file = absolute(&p.path, "path")?;
    let threads = feedback::in_buffer(peer.cx, &file, p.text).await?;
    let threads: Vec<wire::Thread> = threads.iter().map(|t| views::thread(t, peer.facts.encoding)).collect();
    Ok(wire::FeedbackListResult { total: threads.len(), threads, next_offset: None })
}

async fn subscribe(peer: &Peer<'_>, p: wire::SubscribeParams) -> Result<wire::SubscribeResult, ErrorObject> {
    if p.workspaces.is_empty() {
        return Err(errors::invalid("subscribe needs at least one folder in workspaces"));
    }
    let workspaces = p.workspaces.iter().map(|w| absolute(w, "workspace")).collect::<Result<_, _>>()?;
    peer.cx.state.subscribe(peer.id, workspaces).await;
    Ok(wire::SubscribeResult { subscribed: true })
}

async fn store_export(peer: &Peer<'_>, _: wire::NoParams) -> Result<wire::ExportDocument, ErrorObject> {
    Ok(backup::export(peer.cx).await?)
}

async fn store_export_file(peer: &Peer<'_>, p: wire::StoreFileParams) -> Result<wire::ExportFileResult, ErrorObject> {
    let written = backup::export_to(peer.cx, &p.path).await?;
    Ok(wire::ExportFileResult {
        path: written.path,
        bytes: written.bytes,
        reviews: written.counts.reviews,
        threads: written.counts.threads,
        sessions: written.counts.sessions,
        walkthroughs: written.counts.walkthroughs,
    })
}

async fn store_import_file(peer: &Peer<'_>, p: wire::StoreFileParams) -> Result<wire::ImportResult, ErrorObject> {
    let counts = backup::import_from(peer.cx, &p.path).await?;
    Ok(wire::ImportResult { reviews: counts.reviews, threads: counts.threads, walkthroughs: counts.walkthroughs })
}

async fn store_import(peer: &Peer<'_>, p: wire::ExportDocument) -> Result<wire::ImportResult, ErrorObject> {
    let counts = backup::import(peer.cx, p).await?;
    Ok(wire::ImportResult { reviews: counts.reviews, threads: counts.threads, walkthroughs: counts.walkthroughs })
}

async fn sessions_list(peer: &Peer<'_>, p: wire::SessionsListParams) -> Result<wire::SessionsResult, ErrorObject> {
    let repository = match p.workspace {
        Some(folder) => Some(rounds::repository(&absolute(&folder, "workspace")?).await?),
        None => None,
    };
    let found = rounds::list(peer.cx, repository, p.limit.unwrap_or(20)).await?;
    Ok(wire::SessionsResult { sessions: found.iter().map(views::session).collect() })
}

async fn sessions_get(peer: &Peer<'_>, p: wire::SessionsGetParams) -> Result<wire::SessionsResult, ErrorObject> {
    let session = rounds::get(peer.cx, &p.review_id, None).await?;
    Ok(wire::SessionsResult { sessions: vec![views::session(&session)] })
}

async fn sessions_complete(
    peer: &Peer<'_>,
    p: wire::SessionsCompleteParams,
) -> Result<wire::SessionsResult, ErrorObject> {
    let session = rounds::complete(peer.cx, &p.review_id, &p.final_status, p.notes, None).await?;
    Ok(wire::SessionsResult { sessions: vec![views::session(&session)] })
}

async fn review_cancel(peer: &Peer<'_>, p: wire::ReviewCancelParams) -> Result<wire::ReviewCancelResult, ErrorObject> {
    let id = rounds::session_id(peer.cx, &p.review_id, None).await?;
    let round = rounds::cancel(peer.cx, &id, None).await?;
    Ok(wire::ReviewCancelResult { review_id: id, round })
}

async fn agents_list(peer: &Peer<'_>, p: wire::AgentsListParams) -> Result<wire::AgentsListResult, ErrorObject> {
    let folder = p.workspace.map(|w| absolute(&w, "workspace")).transpose()?;
    Ok(agents::list_and_follow(peer.cx, folder.as_deref(), peer.id).await?)
}

async fn agent_ask(peer: &Peer<'_>, p: wire::AgentAskParams) -> Result<wire::AgentAskResult, ErrorObject> {
    let ask = agents::Ask {
        agent: p.agent,
        file: absolute(&p.path, "path")?,
        start_line: p.start_line,
        end_line: p.end_line.unwrap_or(p.start_line),
        message: p.message,
        author: p.author.unwrap_or_else(crate::config::user_name),
    };
    let (thread, agent, delivery) = agents::ask(peer.cx, ask).await?;
    Ok(wire::AgentAskResult {
        thread: views::thread(&thread, peer.facts.encoding),
        agent,
        delivery: views::delivery(&delivery),
    })
}

async fn agent_resend(peer: &Peer<'_>, p: wire::AgentResendParams) -> Result<wire::AgentAskResult, ErrorObject> {
    let (thread, delivery) = agents::resend(peer.cx, &p.thread_id, &p.agent).await?;
    Ok(wire::AgentAskResult {
        thread: views::thread(&thread, peer.facts.encoding),
        agent: delivery.agent.clone(),
        delivery: views::delivery(&delivery),
    })
}

async fn agent_typed(peer: &Peer<'_>, p: wire::AgentTypedParams) -> Result<wire::AgentTypedResult, ErrorObject> {
    let (thread, agent, text) = agents::typed(peer.cx, &p.thread_id, p.preview).await?;
    Ok(wire::AgentTypedResult { thread: views::thread(&thread, peer.facts.encoding), agent, text })
}

async fn messages_take(peer: &Peer<'_>, p: wire::MessagesTakeParams) -> Result<wire::MessagesTakeResult, ErrorObject> {
    let cwd = p.cwd.map(|c| absolute(&c, "cwd")).transpose()?;
    let hosts: Vec<u32> = p.host_pid.into_iter().chain(p.ancestors).collect();
    let (agent, messages) = agents::take_for_hook(peer.cx, &hosts, cwd.as_deref()).await?;
    let messages = messages
        .into_iter()
        .map(|m| wire::AgentMessage {
            thread_id: m.thread_id,
            comment_id: m.comment_id,
            walkthrough_id: m.walkthrough_id,
            click_id: m.click_id,
            text: m.text,
        })
        .collect();
    Ok(wire::MessagesTakeResult { agent, messages })
}

/// Runs `review/request` or `review/await` in the background: the
/// connection goes on serving (and writing progress) while the round runs.
fn spawn_review(
    request: Request,
    peer: &Peer<'_>,
    answers: mpsc::Sender<Arc<Vec<u8>>>,
    cancel: tokio_util::sync::CancellationToken,
) {
    let cx = peer.cx.clone();
    let peer_role = peer.role;
    if request.method == wire::PlanOpen::NAME || request.method == wire::PlanAwait::NAME {
        // A hook's plan round, held by its connection: the connection closing
        // while the daemon runs tells the plan review it was answered in the
        // host. A wait holds no call open (a stopping daemon does not wait
        // for it), however long it takes.
        tokio::spawn(async move {
            let id = request.id.clone();
            let outcome = if request.method == wire::PlanOpen::NAME {
                match allowed::<wire::PlanOpen>(peer_role)
                    .and_then(|()| decode::<wire::PlanOpenParams>(wire::PlanOpen::NAME, &request.params))
                {
                    Ok(p) => plans::open(&cx, p, cancel)
                        .await
                        .and_then(|o| serde_json::to_value(o).map_err(errors::internal)),
                    Err(error) => Err(error),
                }
            } else {
                match allowed::<wire::PlanAwait>(peer_role)
                    .and_then(|()| decode::<wire::PlanRoundParams>(wire::PlanAwait::NAME, &request.params))
                {
                    Ok(p) => plans::wait(&cx, p, &cancel)
                        .await
                        .and_then(|v| serde_json::to_value(v).map_err(errors::internal)),
                    Err(error) => Err(error),
                }
            };
            let answer = match outcome {
                Ok(value) => Response::ok(id, value),
                Err(error) => Response::err(Some(id), error),
            };
            let _ = answers.send(Arc::new(answer_line(&answer))).await;
        });
        return;
    }
    let env = peer.facts.env.clone();
    let asked = if request.method == wire::ReviewAwait::NAME {
        allowed::<wire::ReviewAwait>(peer.role)
            .and_then(|()| decode::<wire::ReviewAwaitParams>(wire::ReviewAwait::NAME, &request.params))
            .map(ReviewCall::Await)
    } else {
        allowed::<wire::ReviewRequest>(peer.role)
            .and_then(|()| decode::<wire::ReviewRequestParams>(wire::ReviewRequest::NAME, &request.params))
            .map(ReviewCall::Request)
    };
    tokio::spawn(async move {
        let _call = cx.shutdown.call();
        let id = request.id.clone();
        let progress = progress_writer(&id, &answers);
        let outcome = match asked {
            Err(error) => Err(error),
            Ok(ReviewCall::Request(p)) => review_request(&cx, p, env, &progress, &cancel).await,
            Ok(ReviewCall::Await(p)) => review_await(&cx, p, &progress, &cancel).await,
        };
        let answer =
            match outcome.and_then(|outcome| serde_json::to_value(review_result(outcome)).map_err(errors::internal)) {
                Ok(value) => Response::ok(id, value),
                Err(error) => Response::err(Some(id), error),
            };
        let _ = answers.send(Arc::new(answer_line(&answer))).await;
    });
}

enum ReviewCall {
    Request(wire::ReviewRequestParams),
    Await(wire::ReviewAwaitParams),
}

/// Writes `review/progress` notifications about request `id`.
fn progress_writer(id: &Id, answers: &mpsc::Sender<Arc<Vec<u8>>>) -> impl Fn(f64, String) + Send + Sync + use<> {
    let (request, out) = (id.clone(), answers.clone());
    move |step: f64, message: String| {
        let params = wire::ReviewProgress { request: request.clone(), progress: step, total: rounds::STEPS, message };
        if let Ok(params) = serde_json::to_value(params) {
            let line = to_line(&Notification::new(wire::ReviewProgressNotification::NAME, params));
            let _ = out.try_send(Arc::new(line));
        }
    }
}

async fn review_request(
    cx: &Context,
    p: wire::ReviewRequestParams,
    env: Arc<std::collections::BTreeMap<String, String>>,
    progress: rounds::Progress<'_>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<rounds::Outcome, ErrorObject> {
    let folder = absolute(&p.workspace, "workspace")?;
    // Resolved by the one id rule in the repository the round is for.
    let previous_review_id = p.previous_review_id;
    let ask = rounds::ReviewAsk {
        summary: p.summary,
        relevant_docs: p.relevant_docs,
        focus_areas: p.focus_areas,
        previous_review_id,
        scope: p.scope,
        folder,
        env,
        reviewer: p.reviewer,
        asked_by: "parley".into(),
    };
    Ok(rounds::request(cx, ask, progress, cancel).await?)
}

/// Waits for a running round to the end. A waiter that goes away (Ctrl-C)
/// leaves the round running: it belongs to whoever started it.
async fn review_await(
    cx: &Context,
    p: wire::ReviewAwaitParams,
    progress: rounds::Progress<'_>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<rounds::Outcome, ErrorObject> {
    let id = rounds::session_id(cx, &p.review_id, None).await?;
    let report = |step: &rounds::Step| progress(step.progress, step.message.clone());
    match rounds::wait(cx, &id, None, None, cancel, &report).await? {
        rounds::Waited::Finished(outcome) => Ok(*outcome),
        rounds::Waited::Pending(run) => Err(ErrorObject::from(rounds::RoundError::Cancelled(format!(
            "stopped waiting for round {} of review {id}; it goes on",
            run.round
        )))),
    }
}

fn review_result(outcome: rounds::Outcome) -> wire::ReviewRequestResult {
    let verdict = serde_json::to_value(outcome.round.verdict).ok().and_then(|v| v.as_str().map(str::to_owned));
    wire::ReviewRequestResult {
        review_id: outcome.session.id.clone(),
        round: outcome.round.round,
        status: outcome.session.status().into(),
        verdict: verdict.unwrap_or_default(),
        review: serde_json::to_value(&outcome.round.review).unwrap_or_default(),
        markdown: outcome.markdown,
        audit_path: outcome.audit,
        shown_in_editors: outcome.shown_in,
        warnings: outcome.warnings,
    }
}

async fn handle_notification(notification: Notification, peer: &Peer<'_>) {
    let id = peer.id;
    match notification.method.as_str() {
        wire::EditorFocus::NAME => match decode::<<wire::EditorFocus as NotificationMethod>::Params>(
            wire::EditorFocus::NAME,
            &notification.params,
        ) {
            Ok(p) => peer.cx.state.focus(id, p.focused).await,
            Err(e) => tracing::info!(connection = id, "ignoring malformed editor/focus: {}", e.message),
        },
        wire::SelectionChangedNotification::NAME => {
            match decode::<<wire::SelectionChangedNotification as NotificationMethod>::Params>(
                wire::SelectionChangedNotification::NAME,
                &notification.params,
            ) {
                Ok(p) => peer.cx.state.selection_changed(id, p.selection).await,
                Err(e) => tracing::info!(connection = id, "ignoring malformed selection/changed: {}", e.message),
            }
        }
        other => tracing::debug!(connection = id, "ignoring unknown notification {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_too_long_for_any_peer_becomes_an_error_saying_what_to_ask_instead() {
        let small = Response::ok(Id::Number(3), serde_json::json!({ "threads": [] }));
        assert_eq!(answer_line(&small), to_line(&small));

        let huge = Response::ok(Id::Number(4), Value::String("x".repeat(MAX_LINE_BYTES)));
        let line = answer_line(&huge);
        assert!(line.len() < 1024, "an error, not the answer");
        let sent: Response = serde_json::from_slice(&line).expect("a response");
        assert_eq!(sent.id, Some(Id::Number(4)));
        let error = sent.error.expect("an error");
        assert_eq!(error.code, code::LINE_TOO_LONG);
        assert!(error.message.contains("ask for less"), "{}", error.message);
    }
}
