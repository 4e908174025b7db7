//! `parley-mcp`: the stdio shim an MCP host starts. It connects to the per-user
//! daemon (starting it if needed), says hello as an `mcp` client, then relays
//! MCP lines both ways. It speaks no MCP itself beyond what reconnecting needs.
//!
//! It must write nothing but protocol bytes to stdout; diagnostics go to stderr.

pub mod connect;
pub mod relay;

use std::path::PathBuf;

use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::{BUILD_VERSION, PROTOCOL_VERSION, socket};
use std::os::fd::AsFd;

use tokio::io::{BufReader, BufWriter};
use tokio::net::unix::pipe;

use crate::connect::{ConnectError, HubConnection};

/// Names the editor window an agent runs inside; editors export it into their
/// terminals so `get_selection` asks the right window.
pub const EDITOR_ID_ENV: &str = "PARLEY_EDITOR_ID";

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
    }
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
    // One write per line: the relay writes a line and its newline, then flushes.
    match stdio_pipes() {
        Some((stdin, stdout)) => relay::run(BufReader::new(stdin), BufWriter::new(stdout), connector).await,
        None => relay::run(BufReader::new(tokio::io::stdin()), BufWriter::new(tokio::io::stdout()), connector).await,
    }
}

/// The shim's stdin and stdout as pipes driven by the runtime's poller.
///
/// MCP hosts give a stdio server pipes. tokio's `Stdin` and `Stdout` hand
/// every read and write to a blocking thread, which costs several thread
/// hand-offs per message and limited 32 busy agents to about 12,000 calls/s;
/// pipes are read and written directly when ready. Anything else (a terminal,
/// a file) is `None` and takes the portable path.
fn stdio_pipes() -> Option<(pipe::Receiver, pipe::Sender)> {
    let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    Some((pipe::Receiver::from_owned_fd(stdin).ok()?, pipe::Sender::from_owned_fd(stdout).ok()?))
}
