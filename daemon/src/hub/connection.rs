//! One editor or CLI connection after hello: answers its hub requests, takes
//! its notifications, and writes the events and requests the daemon sends it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use parley_protocol::framing::{LineError, LineReader};
use parley_protocol::hello::{HELLO, Role};
use parley_protocol::jsonrpc::{ErrorObject, Id, Message, Notification, Request, Response, code, to_line};
use parley_protocol::methods as wire;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot};

use super::Context;
use crate::refresh::{self, NewThread};
use crate::state::{ClientFacts, Command, Outbound, ThreadEdit, ThreadError};
use crate::{feedback, views, workspace};

/// A client that cannot take a line within this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

type Pending = HashMap<i64, oneshot::Sender<Result<Value, ErrorObject>>>;

/// Serves the connection until the client leaves, the daemon closes it, or
/// the client proves too slow.
pub async fn serve(
    mut reader: LineReader<BufReader<OwnedReadHalf>>,
    mut writer: OwnedWriteHalf,
    id: u64,
    role: Role,
    facts: ClientFacts,
    (own, mut inbox): (Option<mpsc::Sender<Outbound>>, Option<mpsc::Receiver<Outbound>>),
    context: &Context,
) -> anyhow::Result<()> {
    let mut pending = Pending::new();
    let mut next_request: i64 = 0;
    // Work this connection started in the background (review/request) stops
    // when the connection closes: a human who pressed Ctrl-C wants it to.
    let connection_gone = context.shutdown.close.child_token();
    let _stop_background_work = connection_gone.clone().drop_guard();
    loop {
        let outbound = async {
            match inbox.as_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = context.shutdown.close.cancelled() => return Ok(()),
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
                if let (Some(own), Ok(Message::Request(request))) = (&own, Message::parse(&line))
                    && request.method == wire::REVIEW_REQUEST
                {
                    spawn_review(request, own.clone(), connection_gone.child_token(), context);
                    continue;
                }
                if let Some(response) = handle_line(&line, id, role, &facts, &mut pending, context).await {
                    write(&mut writer, &to_line(&response)).await?;
                }
            }
            outbound = outbound => match outbound {
                Some(Outbound::Line(line)) => write(&mut writer, &line).await?,
                Some(Outbound::Request { method, params, reply }) => {
                    next_request += 1;
                    pending.insert(next_request, reply);
                    write(&mut writer, &to_line(&Request::new(Id::Number(next_request), method, params))).await?;
                }
                None => anyhow::bail!("dropped: the client did not keep up with its events"),
            },
        }
    }
}

async fn write(writer: &mut OwnedWriteHalf, line: &[u8]) -> anyhow::Result<()> {
    match tokio::time::timeout(WRITE_TIMEOUT, writer.write_all(line)).await {
        Ok(result) => Ok(result?),
        Err(_) => anyhow::bail!("the client stopped reading for {WRITE_TIMEOUT:?}"),
    }
}

/// Handles one message; returns the response to send, if any.
async fn handle_line(
    line: &[u8],
    id: u64,
    role: Role,
    facts: &ClientFacts,
    pending: &mut Pending,
    context: &Context,
) -> Option<Response> {
    match Message::parse(line) {
        Err(invalid) => Some(Response::err(invalid.id, invalid.error)),
        Ok(Message::Request(request)) => {
            let request_id = request.id.clone();
            Some(match handle_request(request, id, role, facts, context).await {
                Ok(result) => Response::ok(request_id, result),
                Err(error) => Response::err(Some(request_id), error),
            })
        }
        Ok(Message::Notification(notification)) => {
            handle_notification(notification, id, context).await;
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
                None => tracing::debug!(connection = id, "response to no pending request: {:?}", response.id),
            }
            None
        }
    }
}

fn params<T: DeserializeOwned + Default>(request: &Request) -> Result<T, ErrorObject> {
    if request.params.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(request.params.clone())
        .map_err(|e| ErrorObject::new(code::INVALID_PARAMS, format!("invalid params for {}: {e}", request.method)))
}

fn to_value<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).expect("wire types always serialize")
}

fn stopping() -> ErrorObject {
    ErrorObject::new(code::INTERNAL_ERROR, "the daemon is shutting down")
}

async fn handle_request(
    request: Request,
    id: u64,
    role: Role,
    facts: &ClientFacts,
    context: &Context,
) -> Result<Value, ErrorObject> {
    match request.method.as_str() {
        wire::REVIEW_GET => {
            let p: wire::ReviewGetParams = params(&request)?;
            let folders = match (p.workspace, role) {
                (Some(folder), _) => Some(vec![absolute_folder(&folder)?]),
                (None, Role::Editor) => Some(facts.workspaces.clone()),
                (None, _) => None,
            };
            let reviews =
                context.state.ask(|reply| Command::Reviews { folders, reply }).await.map_err(|_| stopping())?;
            Ok(to_value(wire::ReviewGetResult { reviews: reviews.iter().map(views::review).collect() }))
        }
        wire::EVENTS_REPLAY => {
            let p: EventsAfter = params(&request)?;
            let result = context
                .state
                .ask(|reply| Command::Replay { id, after: p.after, instance: p.instance, reply })
                .await
                .map_err(|_| stopping())?;
            Ok(to_value(result))
        }
        wire::STATUS => {
            let facts = context.state.ask(|reply| Command::Status { reply }).await.map_err(|_| stopping())?;
            let started = context.started;
            Ok(to_value(wire::Status {
                pid: std::process::id(),
                version: parley_protocol::BUILD_VERSION.into(),
                protocol: parley_protocol::PROTOCOL_VERSION,
                socket: context.socket.clone(),
                data_dir: context.data_dir.clone(),
                started_at: started.wall.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                uptime_secs: started.instant.elapsed().as_secs(),
                connections: facts.connections,
                editors: facts.editors,
                workspaces: facts.workspaces,
                reviews: facts.reviews,
                threads: facts.threads,
                store_notice: context.store_notice.clone(),
            }))
        }
        wire::SHUTDOWN => {
            let p: wire::ShutdownParams = params(&request)?;
            tracing::info!(connection = id, reason = ?p.reason, "shutdown requested");
            context.shutdown.stop.cancel();
            Ok(serde_json::json!({ "stopping": true }))
        }
        wire::FEEDBACK_LIST => {
            let p: wire::FeedbackListParams = params(&request)?;
            let scopes = scopes(p.workspace.as_deref(), role, facts)?;
            let mut threads = Vec::new();
            for scope in &scopes {
                let file = p.path.as_ref().map(|f| workspace::absolute(f, scope));
                if file.as_ref().is_some_and(|f| !workspace::holds(scope, f)) {
                    continue;
                }
                refresh::refresh(&context.state, &context.store, scope, file.as_deref()).await.map_err(failed)?;
                let scope = scope.clone();
                let include_resolved = p.include_resolved;
                let found = context
                    .state
                    .ask(|reply| Command::Threads { scope, file, include_resolved, reply })
                    .await
                    .map_err(|_| stopping())?;
                threads.extend(found.iter().map(|t| views::thread(t, facts.encoding)));
            }
            Ok(to_value(wire::FeedbackListResult { threads }))
        }
        wire::FEEDBACK_CREATE => {
            let p: wire::FeedbackCreateParams = params_required(&request)?;
            if !p.path.is_absolute() {
                let message = format!("path {} must be absolute", p.path.display());
                return Err(ErrorObject::new(code::INVALID_PARAMS, message));
            }
            let file = workspace::absolute(&p.path, Path::new("/"));
            // Watch first: once the thread is announced, an edit must move it.
            context.watch.add(file.clone()).await;
            let folder =
                facts.workspaces.iter().filter(|w| workspace::holds(w, &file)).max_by_key(|w| w.as_os_str().len());
            let new = NewThread {
                workspace: folder.cloned(),
                file,
                range: p.range,
                encoding: facts.encoding,
                expected_text: p.text,
                body: p.body,
                author: p.author.unwrap_or_else(|| facts.name.clone()),
            };
            let thread = refresh::create(&context.state, &context.store, new).await.map_err(failed)?;
            Ok(to_value(wire::ThreadResult { thread: views::thread(&thread, facts.encoding) }))
        }
        wire::FEEDBACK_REPLY => {
            let p: wire::FeedbackReplyParams = params_required(&request)?;
            if p.body.trim().is_empty() {
                return Err(ErrorObject::new(code::INVALID_PARAMS, "a reply needs a body"));
            }
            let comment = feedback::Comment {
                id: feedback::new_id(),
                body: p.body,
                author: p.author.unwrap_or_else(|| facts.name.clone()),
                created_at: crate::state::now_rfc3339(),
            };
            edit(context, &p.thread_id, ThreadEdit::Reply(comment), facts).await
        }
        wire::FEEDBACK_RESOLVE => {
            let p: wire::ThreadIdParams = params_required(&request)?;
            edit(context, &p.thread_id, ThreadEdit::Resolve, facts).await
        }
        wire::FEEDBACK_REOPEN => {
            let p: wire::ThreadIdParams = params_required(&request)?;
            edit(context, &p.thread_id, ThreadEdit::Reopen, facts).await
        }
        wire::BUFFER_CHANGED => {
            let p: wire::BufferChangedParams = params_required(&request)?;
            let file = workspace::absolute(&p.path, Path::new("/"));
            let threads = refresh::in_buffer(&context.state, &context.store, &file, p.text).await.map_err(failed)?;
            Ok(to_value(wire::FeedbackListResult {
                threads: threads.iter().map(|t| views::thread(t, facts.encoding)).collect(),
            }))
        }
        wire::SUBSCRIBE if role == Role::Editor => Err(ErrorObject::new(
            code::INVALID_REQUEST,
            "editors receive the events of the workspaces in their hello already; subscribe is for CLI connections",
        )),
        wire::SUBSCRIBE => {
            let p: wire::SubscribeParams = params(&request)?;
            if p.workspaces.is_empty() {
                return Err(ErrorObject::new(
                    code::INVALID_PARAMS,
                    "subscribe needs at least one folder in workspaces",
                ));
            }
            let workspaces = p.workspaces.iter().map(|w| absolute_folder(w)).collect::<Result<_, _>>()?;
            context.state.tell(Command::Subscribe { id, workspaces }).await;
            Ok(serde_json::json!({ "subscribed": true }))
        }
        wire::SESSIONS_LIST => {
            let p: wire::SessionsListParams = params(&request)?;
            let workspace = match p.workspace {
                Some(folder) => Some(repo_of(&absolute_folder(&folder)?).await?),
                None => None,
            };
            let limit = p.limit.unwrap_or(20).max(1);
            let sessions = context
                .state
                .ask(|reply| Command::Sessions { workspace, limit, reply })
                .await
                .map_err(|_| stopping())?;
            Ok(to_value(wire::SessionsResult { sessions: sessions.iter().map(session_value).collect() }))
        }
        wire::SESSIONS_GET => {
            let p: wire::SessionsGetParams = params_required(&request)?;
            let all = context
                .state
                .ask(|reply| Command::Sessions { workspace: None, limit: usize::MAX, reply })
                .await
                .map_err(|_| stopping())?;
            let session = all.iter().find(|s| s.id == p.review_id.trim()).ok_or_else(|| {
                ErrorObject::new(
                    code::NOT_FOUND,
                    crate::sessions::SessionError::NotFound(p.review_id.clone()).to_string(),
                )
            })?;
            Ok(to_value(wire::SessionsResult { sessions: vec![session_value(session)] }))
        }
        wire::STORE_EXPORT => {
            let export = context.store.export().map_err(|e| failed(e.to_string()))?;
            Ok(to_value(export))
        }
        wire::STORE_IMPORT => {
            let export: crate::store::Export = params_required(&request)?;
            if export.format != "parley-export" {
                return Err(ErrorObject::new(
                    code::INVALID_PARAMS,
                    "not a Parley export: \"format\" must be \"parley-export\"",
                ));
            }
            let (reviews, threads) = context.store.import(export).map_err(|e| failed(e.to_string()))?;
            context.store.flush().await.map_err(|e| failed(e.to_string()))?;
            let all_reviews = context.store.reviews().map_err(|e| failed(e.to_string()))?;
            let all_threads = context.store.threads().map_err(|e| failed(e.to_string()))?;
            let all_sessions = context.store.sessions().map_err(|e| failed(e.to_string()))?;
            for thread in all_threads.iter().filter(|t| !t.resolved) {
                context.watch.follow(views::file_of(thread));
            }
            let reload = Command::Reload { reviews: all_reviews, threads: all_threads, sessions: all_sessions };
            context.state.tell(reload).await;
            Ok(serde_json::json!({ "reviews": reviews, "threads": threads }))
        }
        HELLO => Err(ErrorObject::new(code::INVALID_REQUEST, "hello was already said on this connection")),
        other => Err(ErrorObject::new(
            code::METHOD_NOT_FOUND,
            format!("unknown method {other}; docs/protocol.md lists the hub methods"),
        )),
    }
}

fn params_required<T: DeserializeOwned>(request: &Request) -> Result<T, ErrorObject> {
    serde_json::from_value(request.params.clone())
        .map_err(|e| ErrorObject::new(code::INVALID_PARAMS, format!("invalid params for {}: {e}", request.method)))
}

/// A folder from a client, which must be absolute: the daemon's working
/// directory means nothing to the client.
fn absolute_folder(folder: &Path) -> Result<PathBuf, ErrorObject> {
    if !folder.is_absolute() {
        let message = format!("workspace {} must be an absolute path", folder.display());
        return Err(ErrorObject::new(code::INVALID_PARAMS, message));
    }
    Ok(workspace::absolute(folder, Path::new("/")))
}

fn failed(message: String) -> ErrorObject {
    ErrorObject::new(code::INVALID_PARAMS, message)
}

/// The folders a listing covers: the one asked for, else the editor's own.
fn scopes(asked: Option<&Path>, role: Role, facts: &ClientFacts) -> Result<Vec<PathBuf>, ErrorObject> {
    match (asked, role) {
        (Some(folder), _) => Ok(vec![absolute_folder(folder)?]),
        (None, Role::Editor) if !facts.workspaces.is_empty() => Ok(facts.workspaces.clone()),
        _ => Err(ErrorObject::new(code::INVALID_PARAMS, "say which folder: pass \"workspace\"")),
    }
}

async fn edit(context: &Context, thread_id: &str, edit: ThreadEdit, facts: &ClientFacts) -> Result<Value, ErrorObject> {
    if !feedback::is_thread_id(thread_id) {
        return Err(ErrorObject::new(code::INVALID_PARAMS, "Invalid thread ID format"));
    }
    let id = thread_id.to_owned();
    let result = context.state.ask(|reply| Command::EditThread { id, edit, reply }).await.map_err(|_| stopping())?;
    let thread = result.map_err(|e| match e {
        ThreadError::NotFound => ErrorObject::new(code::NOT_FOUND, "Thread not found"),
        other => ErrorObject::new(code::INVALID_PARAMS, other.to_string()),
    })?;
    context.store.flush().await.map_err(|e| failed(format!("Feedback store not initialized: {e}")))?;
    Ok(to_value(wire::ThreadResult { thread: views::thread(&thread, facts.encoding) }))
}

/// A session as the hub shows it: its stored shape plus its status.
fn session_value(session: &crate::sessions::Session) -> Value {
    let mut value = to_value(session);
    if let Some(object) = value.as_object_mut() {
        object.insert("status".into(), Value::String(session.status().into()));
        if let Some(pending) = &session.pending {
            object.insert("pending".into(), to_value(pending));
        }
    }
    value
}

async fn repo_of(folder: &Path) -> Result<PathBuf, ErrorObject> {
    let folder = folder.to_owned();
    tokio::task::spawn_blocking(move || crate::git::repo_root(&folder))
        .await
        .map_err(|e| failed(e.to_string()))?
        .map_err(|e| failed(e.to_string()))
}

/// Runs `review/request` in the background: the connection goes on serving
/// (and writing progress) while the reviewer works.
fn spawn_review(
    request: Request,
    own: mpsc::Sender<Outbound>,
    cancel: tokio_util::sync::CancellationToken,
    context: &Context,
) {
    let context = context.clone();
    tokio::spawn(async move {
        let _call = context.shutdown.call();
        let id = request.id.clone();
        let answer = match params_required::<wire::ReviewRequestParams>(&request) {
            Err(error) => Response::err(Some(id), error),
            Ok(p) if !p.workspace.is_absolute() => Response::err(
                Some(id),
                ErrorObject::new(
                    code::INVALID_PARAMS,
                    format!("workspace {} must be an absolute path", p.workspace.display()),
                ),
            ),
            Ok(p) => {
                let progress_out = own.clone();
                let request = id.clone();
                let progress = move |step: f64, message: String| {
                    let params = to_value(wire::ReviewProgress {
                        request: request.clone(),
                        progress: step,
                        total: crate::pipeline::STEPS,
                        message,
                    });
                    let line = to_line(&Notification::new(wire::REVIEW_PROGRESS, params));
                    let _ = progress_out.try_send(Outbound::Line(std::sync::Arc::new(line)));
                };
                let ask = crate::pipeline::ReviewAsk {
                    summary: p.summary,
                    relevant_docs: p.relevant_docs,
                    focus_areas: p.focus_areas,
                    previous_review_id: p.previous_review_id,
                    scope: p.scope,
                    folder: p.workspace,
                };
                match crate::pipeline::run(&context.state, &context.store, ask, &progress, &cancel).await {
                    Ok(outcome) => Response::ok(
                        id,
                        to_value(wire::ReviewRequestResult {
                            review_id: outcome.session.id.clone(),
                            round: outcome.round.round,
                            status: outcome.session.status().into(),
                            verdict: to_value(outcome.round.verdict).as_str().unwrap_or_default().to_owned(),
                            review: to_value(&outcome.round.review),
                            markdown: outcome.markdown,
                            audit_path: outcome.audit,
                            shown_in_editors: outcome.shown_in,
                            warnings: outcome.warnings,
                        }),
                    ),
                    Err(message) => Response::err(Some(id), ErrorObject::new(code::INVALID_PARAMS, message)),
                }
            }
        };
        let _ = own.send(Outbound::Line(std::sync::Arc::new(to_line(&answer)))).await;
    });
}

/// `events/replay` parameters, defaulting to "everything kept".
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsAfter {
    #[serde(default)]
    after: u64,
    #[serde(default)]
    instance: Option<String>,
}

async fn handle_notification(notification: Notification, id: u64, context: &Context) {
    match notification.method.as_str() {
        wire::EDITOR_FOCUS => match serde_json::from_value::<wire::FocusParams>(notification.params) {
            Ok(p) => context.state.tell(Command::Focus { id, focused: p.focused }).await,
            Err(e) => tracing::info!(connection = id, "ignoring malformed editor/focus: {e}"),
        },
        wire::SELECTION_CHANGED => match serde_json::from_value::<wire::SelectionChangedParams>(notification.params) {
            Ok(p) => context.state.tell(Command::SelectionChanged { id, selection: p.selection }).await,
            Err(e) => tracing::info!(connection = id, "ignoring malformed selection/changed: {e}"),
        },
        other => tracing::debug!(connection = id, "ignoring unknown notification {other}"),
    }
}
