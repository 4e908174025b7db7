//! The hub client the `parley` command line uses: open a connection (through
//! the same connect-or-start path as the shim), call methods, read events.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::jsonrpc::{Id, Message, Request, Response, to_line};
use parley_protocol::{BUILD_VERSION, PROTOCOL_VERSION, socket};
use parley_shim::connect::{self, HubConnection};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

/// A connection to the daemon speaking the hub protocol.
#[derive(Debug)]
pub struct HubClient {
    connection: HubConnection,
    next_id: i64,
}

/// How a client opens its connection.
#[derive(Debug, Clone)]
pub struct Opening {
    pub role: Role,
    pub name: &'static str,
    pub workspaces: Vec<PathBuf>,
    /// Start a daemon when none runs.
    pub spawn: bool,
}

impl HubClient {
    /// Connects; `Ok(None)` when no daemon runs and `spawn` was false.
    pub async fn open(opening: &Opening) -> anyhow::Result<Option<HubClient>> {
        let socket_path = socket::socket_path()?;
        let hello = Hello {
            protocol: PROTOCOL_VERSION,
            role: opening.role,
            client: ClientInfo { name: opening.name.into(), version: BUILD_VERSION.into() },
            pid: Some(std::process::id()),
            cwd: std::env::current_dir().ok(),
            workspaces: opening.workspaces.clone(),
            editor_id: None,
            position_encoding: PositionEncoding::Utf32,
            env: parley_protocol::hello::current_env(),
        };
        let spawn = opening.spawn && connect::spawn_allowed();
        let stream = match connect::connect_or_start(&socket_path, spawn).await {
            Ok(stream) => stream,
            Err(connect::ConnectError::NotRunning(_)) if !opening.spawn => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let connection = connect::say_hello(stream, &hello).await?;
        Ok(Some(HubClient { connection, next_id: 0 }))
    }

    /// The daemon's hello answer.
    pub fn hello(&self) -> &parley_protocol::hello::HelloReply {
        &self.connection.reply
    }

    /// Calls `method` and waits for its result; events arriving meanwhile are
    /// passed to `on_event`.
    pub async fn call<T: DeserializeOwned>(&mut self, method: &str, params: Value) -> anyhow::Result<T> {
        self.call_with_events(method, params, |_| {}).await
    }

    /// Like [`HubClient::call`], handing notifications that arrive meanwhile to `on_event`.
    pub async fn call_with_events<T: DeserializeOwned>(
        &mut self,
        method: &str,
        params: Value,
        mut on_event: impl FnMut(&parley_protocol::jsonrpc::Notification),
    ) -> anyhow::Result<T> {
        self.next_id += 1;
        let id = Id::Number(self.next_id);
        let request = Request::new(id.clone(), method, params);
        self.connection.writer.write_all(&to_line(&request)).await.context("sending to the daemon")?;
        loop {
            match self.next_message().await? {
                Some(Message::Response(response)) if response.id.as_ref() == Some(&id) => {
                    if let Some(error) = response.error {
                        bail!("{method} failed: {}", error.message);
                    }
                    let result = response.result.unwrap_or(Value::Null);
                    return serde_json::from_value(result).with_context(|| format!("reading the answer to {method}"));
                }
                Some(Message::Notification(notification)) => on_event(&notification),
                Some(_) => continue,
                None => bail!("the daemon closed the connection while answering {method}"),
            }
        }
    }

    /// The next message from the daemon, `None` when it closed the connection.
    pub async fn next_message(&mut self) -> anyhow::Result<Option<Message>> {
        loop {
            let Some(line) = self.connection.reader.next_line().await? else {
                return Ok(None);
            };
            match Message::parse(&line) {
                Ok(message) => return Ok(Some(message)),
                Err(invalid) => tracing::debug!("ignoring a message from the daemon: {}", invalid.error.message),
            }
        }
    }

    /// Answers a request the daemon sent.
    pub async fn respond(&mut self, response: Response) -> anyhow::Result<()> {
        self.connection.writer.write_all(&to_line(&response)).await.context("answering the daemon")
    }
}
