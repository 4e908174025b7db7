//! The hub client the `parley` command line uses: open a connection (through
//! the same connect-or-start path as the shim), call methods, read events.
//!
//! What goes wrong is told in the command line's words: a terminal user never
//! sees a hub method's name, nor the name of a tool agents call.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::jsonrpc::{ErrorObject, Id, Message, Request, Response, code, to_line};
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
            parent_pid: None,
            agent_name: None,
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
        self.connection
            .writer
            .write_all(&to_line(&request))
            .await
            .context("the Parley daemon went away before it was asked; `parley status` says whether it runs")?;
        loop {
            match self.next_message().await? {
                Some(Message::Response(response)) if response.id.as_ref() == Some(&id) => {
                    if let Some(error) = response.error {
                        return Err(Refused::new(method, error, &self.connection.reply.version).into());
                    }
                    let result = response.result.unwrap_or(Value::Null);
                    return serde_json::from_value(result).with_context(|| {
                        format!(
                            "the daemon's answer was not understood (the daemon runs version {}, this parley is {BUILD_VERSION}); \
                             restart it with `parley stop` and run the command again",
                            self.connection.reply.version
                        )
                    });
                }
                Some(Message::Notification(notification)) => on_event(&notification),
                Some(_) => continue,
                None => bail!(
                    "the Parley daemon closed the connection before answering (it stopped or crashed); \
                     `parley status` says whether it runs, and its log says why"
                ),
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

/// A request the daemon refused: why, in the command line's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refused {
    /// The JSON-RPC error code (`parley_protocol::jsonrpc::code`), for
    /// commands that word some causes themselves.
    pub code: i64,
    pub message: String,
}

impl Refused {
    /// The daemon's `error` to a call of `method`, reworded for a terminal.
    fn new(method: &str, error: ErrorObject, daemon_version: &str) -> Refused {
        let message = if error.code == code::METHOD_NOT_FOUND {
            // Only a daemon older than this command line lacks a method it calls.
            format!(
                "the running Parley daemon (version {daemon_version}) is older than this parley ({BUILD_VERSION}) \
                 and cannot do this; restart it with `parley stop`, then run the command again"
            )
        } else {
            let reason =
                error.message.strip_prefix(&format!("invalid params for {method}: ")).unwrap_or(&error.message);
            in_cli_terms(reason).replace(method, "this command")
        };
        Refused { code: error.code, message }
    }
}

/// Words of the agents' tools in the daemon's messages, and what a person at
/// a terminal types instead, most specific first.
///
/// The daemon words the advice in its errors for agents, which call tools
/// with named arguments; the same causes reach the command line (a session
/// already completed, a design doc that does not exist), where the advice
/// must name commands and flags.
const IN_CLI_TERMS: &[(&str, &str)] = &[
    ("by calling request_review without previous_review_id", "by running `parley review request` without --previous"),
    ("request_review reviews git changes", "`parley review request` reviews git changes"),
    ("with mark_review_complete", "with `parley sessions complete ID --approved|--abandoned|--merged`"),
    ("get_review_history lists the sessions", "`parley sessions list` lists the sessions"),
    ("previous_review_id ", "--previous "),
    ("relevant_docs entry ", "--doc "),
    ("final_status must be", "the final status must be"),
    ("request_review", "`parley review request`"),
    ("start_review", "`parley review request`"),
    ("mark_review_complete", "`parley sessions complete`"),
    ("get_review_history", "`parley sessions list`"),
    ("get_feedback_summary", "`parley feedback list`"),
    ("get_feedback", "`parley feedback list`"),
];

/// `message` with the agents' words replaced by the command line's.
pub fn in_cli_terms(message: &str) -> String {
    IN_CLI_TERMS.iter().fold(message.to_owned(), |text, (agents, cli)| text.replace(agents, cli))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(method: &str, code: i64, daemon_says: &str, want: &str) {
        let refused = Refused::new(method, ErrorObject::new(code, daemon_says), "0.0.1");
        assert_eq!(refused.message, want, "{method}: {daemon_says}");
        assert_eq!(refused.code, code);
    }

    #[test]
    fn refusals_speak_of_commands_and_flags() {
        check(
            "review/request",
            code::CONFLICT,
            "review session 2026-11-21-001 was already marked merged at 2026-11-21T10:00:00Z; start a new session by calling request_review without previous_review_id",
            "review session 2026-11-21-001 was already marked merged at 2026-11-21T10:00:00Z; start a new session by running `parley review request` without --previous",
        );
        check(
            "review/request",
            code::CONFLICT,
            "review session 2026-11-21-001 has reached the maximum of 2 rounds; mark it complete with mark_review_complete, or start a new session",
            "review session 2026-11-21-001 has reached the maximum of 2 rounds; mark it complete with `parley sessions complete ID --approved|--abandoned|--merged`, or start a new session",
        );
        check(
            "sessions/get",
            code::NOT_FOUND,
            "no review session 2020-01-01-001; get_review_history lists the sessions of this repository",
            "no review session 2020-01-01-001; `parley sessions list` lists the sessions of this repository",
        );
        check(
            "review/request",
            code::INVALID_PARAMS,
            "relevant_docs entry docs/desing.md does not exist in /r: give a file path relative to the repository root",
            "--doc docs/desing.md does not exist in /r: give a file path relative to the repository root",
        );
        check(
            "review/request",
            code::INVALID_PARAMS,
            "previous_review_id \"x\" is not a review id (they look like 2026-11-21-001)",
            "--previous \"x\" is not a review id (they look like 2026-11-21-001)",
        );
        check(
            "review/request",
            code::GIT_FAILED,
            "not a git repository: /p; request_review reviews git changes, so run it inside a repository (or `git init`)",
            "not a git repository: /p; `parley review request` reviews git changes, so run it inside a repository (or `git init`)",
        );
        check(
            "feedback/create",
            code::INVALID_PARAMS,
            "invalid params for feedback/create: missing field `body`",
            "missing field `body`",
        );
        check(
            "sessions/complete",
            code::WRONG_ROLE,
            "sessions/complete is for cli connections, not mcp ones",
            "this command is for cli connections, not mcp ones",
        );
        check("feedback/resolve", code::INVALID_PARAMS, "Invalid thread ID format", "Invalid thread ID format");
        let unknown = Refused::new(
            "sessions/complete",
            ErrorObject::new(code::METHOD_NOT_FOUND, "unknown method sessions/complete"),
            "0.0.1",
        );
        assert!(unknown.message.contains("version 0.0.1") && unknown.message.contains("parley stop"), "{unknown}");
        assert!(!unknown.message.contains("sessions/complete"), "{unknown}");
    }
}
