//! The hub: accepts connections on the socket, checks who is calling, reads
//! `hello`, and routes each connection by role — `mcp` connections to the MCP
//! server, `editor` and `cli` connections to the hub protocol. The only module
//! that touches sockets.

pub mod connection;
mod errors;
pub mod listener;
mod person_rounds;
mod plans;
mod pull_requests;
mod walkthroughs;

use std::sync::Arc;
use std::time::Duration;

use parley_protocol::PROTOCOL_VERSION;
use parley_protocol::framing::{LineError, LineReader};
use parley_protocol::hello::{HELLO, Hello, HelloReply, Role};
use parley_protocol::jsonrpc::{ErrorObject, Id, Message, Response, code, to_line};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio_util::task::TaskTracker;

use crate::state::ClientFacts;
use crate::usecases::Context;
use crate::workspace;

/// Who is on the other end of a connection: what the hub's methods are
/// answered for.
pub struct Peer<'a> {
    pub id: u64,
    pub role: Role,
    pub facts: &'a ClientFacts,
    pub cx: &'a Context,
}

/// How long a new connection has to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until shutdown begins. A connection's failure ends
/// that connection only.
pub async fn accept_loop(mut listener: listener::Listener, context: Arc<Context>, tracker: TaskTracker) {
    let mut next_id: u64 = 0;
    loop {
        let accepted = tokio::select! {
            _ = context.shutdown.stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok(stream) => {
                next_id += 1;
                let id = next_id;
                let context = context.clone();
                tracker.spawn(async move {
                    if let Err(e) = serve_connection(stream, id, &context).await {
                        tracing::info!(connection = id, "connection ended: {e:#}");
                    }
                });
            }
            Err(e) => {
                // Out of file descriptors, or a connection reset before accept:
                // back off a little rather than spin.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn serve_connection(stream: crate::stream::Stream, id: u64, context: &Context) -> anyhow::Result<()> {
    if !listener::same_user(&stream)? {
        tracing::warn!(connection = id, "closed a connection from another user");
        return Ok(());
    }
    let (read, mut write) = crate::stream::split(stream);
    let mut reader = LineReader::new(BufReader::new(read));
    let hello = match tokio::time::timeout(HELLO_TIMEOUT, read_hello(&mut reader)).await {
        Ok(Ok(hello)) => hello,
        Ok(Err((id_seen, error))) => {
            let _ = write.write_all(&to_line(&Response::err(id_seen, error.clone()))).await;
            anyhow::bail!("bad hello: {}", error.message);
        }
        Err(_) => anyhow::bail!("no hello within {HELLO_TIMEOUT:?}"),
    };
    let (request_id, hello) = hello;
    let facts = match client_facts(&hello) {
        Ok(facts) => facts,
        Err(error) => {
            let _ = write.write_all(&to_line(&Response::err(Some(request_id), error.clone()))).await;
            anyhow::bail!("bad hello: {}", error.message);
        }
    };
    let role = hello.role;
    // Editors and CLI connections receive events (CLI ones after
    // `subscribe`); the state owner holds the only sender.
    let (events_tx, events_rx) = match role {
        Role::Editor | Role::Cli => {
            let (tx, rx) = tokio::sync::mpsc::channel(crate::state::OUTBOX_LEN);
            (Some(tx), Some(rx))
        }
        Role::Mcp => (None, None),
    };
    let (seq, instance) = context.state.connected(id, facts.clone(), events_tx).await?;
    tracing::info!(connection = id, %role, client = %hello.client.name, pid = ?hello.pid, "connected");
    let reply = HelloReply {
        protocol: PROTOCOL_VERSION,
        version: parley_protocol::BUILD_VERSION.into(),
        pid: std::process::id(),
        connection_id: id,
        seq,
        instance,
        executable: context.executable.as_ref().map(|(path, _)| path.clone()),
        build: context.executable.as_ref().map(|(_, build)| build.clone()),
    };
    let reply = serde_json::to_value(reply).expect("wire types always serialize");
    let result = match write.write_all(&to_line(&Response::ok(request_id, reply))).await {
        Ok(()) => match (role, events_rx) {
            (Role::Editor | Role::Cli, Some(events)) => {
                let peer = Peer { id, role, facts: &facts, cx: context };
                connection::serve(reader, write, peer, events).await
            }
            _ => crate::mcp::serve(reader.into_inner(), write, id, &hello, facts, context).await,
        },
        Err(e) => Err(e.into()),
    };
    context.state.disconnected(id).await;
    tracing::info!(connection = id, %role, "disconnected");
    result
}

type HelloError = (Option<Id>, ErrorObject);

async fn read_hello<R: tokio::io::AsyncBufRead + Unpin>(reader: &mut LineReader<R>) -> Result<(Id, Hello), HelloError> {
    let line = match reader.next_line().await {
        Ok(Some(line)) => line,
        Ok(None) => return Err((None, ErrorObject::new(code::HELLO_REQUIRED, "connection closed before hello"))),
        Err(LineError::TooLong) => {
            return Err((None, ErrorObject::new(code::LINE_TOO_LONG, "message exceeds the 16 MiB line limit")));
        }
        Err(LineError::Io(e)) => return Err((None, ErrorObject::new(code::HELLO_REQUIRED, e.to_string()))),
    };
    let request = match Message::parse(&line) {
        Ok(Message::Request(request)) if request.method == HELLO => request,
        Ok(Message::Request(request)) => {
            let message = format!("the first message must be hello, got {}", request.method);
            return Err((Some(request.id), ErrorObject::new(code::HELLO_REQUIRED, message)));
        }
        Ok(_) => {
            return Err((None, ErrorObject::new(code::HELLO_REQUIRED, "the first message must be a hello request")));
        }
        Err(invalid) => return Err((invalid.id, invalid.error)),
    };
    let hello: Hello = serde_json::from_value(request.params).map_err(|e| {
        (Some(request.id.clone()), ErrorObject::new(code::INVALID_PARAMS, format!("invalid hello: {e}")))
    })?;
    if hello.protocol != PROTOCOL_VERSION {
        let message = format!(
            "this Parley daemon speaks hub protocol {PROTOCOL_VERSION} but the client speaks {}; upgrade the older of the two",
            hello.protocol
        );
        return Err((Some(request.id), ErrorObject::new(code::PROTOCOL_MISMATCH, message)));
    }
    Ok((request.id, hello))
}

/// What the daemon keeps of a hello. Folders are made absolute against the
/// hello's `cwd` and real (symlinks resolved), so a window opened through a
/// link and an agent working in the real path meet; a relative folder with
/// no `cwd` to resolve it against is refused.
fn client_facts(hello: &Hello) -> Result<ClientFacts, ErrorObject> {
    let cwd = hello.cwd.as_deref().filter(|c| c.is_absolute());
    let workspaces = match hello.role {
        Role::Mcp => cwd.map(|c| workspace::root_of(&workspace::real(c, c))).into_iter().collect(),
        Role::Editor | Role::Cli => hello
            .workspaces
            .iter()
            .map(|w| match (w.is_absolute(), cwd) {
                (true, _) => Ok(workspace::real(w, std::path::Path::new("/"))),
                (false, Some(cwd)) => Ok(workspace::real(w, cwd)),
                (false, None) => Err(ErrorObject::new(
                    code::INVALID_PARAMS,
                    format!(
                        "workspace {} is relative and hello has no absolute cwd to resolve it against; send absolute folders",
                        w.display()
                    ),
                )),
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(ClientFacts {
        role: hello.role,
        name: hello.client.name.clone(),
        editor_id: hello.editor_id.clone(),
        workspaces,
        encoding: hello.position_encoding,
        env: Arc::new(hello.env.clone()),
    })
}
