//! `parley-mcp`: the stdio shim an MCP host starts. It connects to the per-user
//! daemon (starting it if needed), says hello as an `mcp` client, then relays
//! MCP lines both ways. It speaks no MCP itself beyond what reconnecting needs.
//!
//! It must write nothing but protocol bytes to stdout; diagnostics go to stderr.

pub mod connect;
pub mod daemon_start;
pub mod relay;
pub mod stdio;
pub mod transport;

use std::path::PathBuf;

use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::{BUILD_VERSION, PROTOCOL_VERSION, socket};
use tokio::io::{BufReader, BufWriter};

use crate::connect::{ConnectError, HubConnection};

/// Names the editor window an agent runs inside; editors export it into their
/// terminals so `get_selection` asks the right window.
pub const EDITOR_ID_ENV: &str = "PARLEY_EDITOR_ID";
/// A short name a person gives this agent, to ask it by (`parley ask --agent
/// NAME`); without it the daemon names the agent after its host (`claude-1`).
pub const AGENT_NAME_ENV: &str = "PARLEY_AGENT_NAME";

/// Connects to the daemon on a fixed socket with this process's hello.
pub struct DaemonConnector {
    pub socket: PathBuf,
    pub spawn: bool,
    pub hello: Hello,
}

impl relay::Connector for DaemonConnector {
    async fn connect(&mut self) -> Result<HubConnection, ConnectError> {
        connect::open(&self.socket, self.spawn, &self.hello).await
    }
}

/// The hello an agent's shim sends.
pub fn agent_hello() -> Hello {
    Hello {
        protocol: PROTOCOL_VERSION,
        role: Role::Mcp,
        client: ClientInfo { name: "parley-mcp".into(), version: BUILD_VERSION.into() },
        pid: Some(std::process::id()),
        cwd: std::env::current_dir().ok(),
        workspaces: Vec::new(),
        editor_id: std::env::var(EDITOR_ID_ENV).ok().filter(|v| !v.is_empty()),
        position_encoding: PositionEncoding::Utf32,
        parent_pid: host_pid(),
        agent_name: std::env::var(AGENT_NAME_ENV).ok().filter(|v| !v.trim().is_empty()),
        env: parley_protocol::hello::current_env(),
    }
}

/// The process that started the shim: the agent's host.
#[cfg(unix)]
fn host_pid() -> Option<u32> {
    Some(std::os::unix::process::parent_id())
}

#[cfg(not(unix))]
fn host_pid() -> Option<u32> {
    None
}

/// Runs the shim on this process's stdio; returns the exit code.
pub async fn run() -> i32 {
    let socket = match socket::socket_path() {
        Ok(path) => path,
        Err(e) => {
            eprintln!("parley-mcp: {e}");
            return 2;
        }
    };
    let connector = DaemonConnector { socket, spawn: connect::spawn_allowed(), hello: agent_hello() };
    let stdout = match stdio::Output::stdout() {
        Ok(stdout) => stdout,
        Err(e) => {
            eprintln!("parley-mcp: cannot use stdout: {e}");
            return 2;
        }
    };
    // One write per line: the relay writes a line and its newline, then flushes.
    relay::run(BufReader::new(stdio::Input::stdin()), BufWriter::new(stdout), connector).await
}
