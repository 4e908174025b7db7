//! The `hello` exchange that opens every connection: who the client is, which
//! role it plays, and what the daemon answers.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The method name of the opening request.
pub const HELLO: &str = "hello";

/// What a connection is for; it decides what the rest of the connection carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// An agent's `parley-mcp` shim: after hello the connection carries MCP only.
    Mcp,
    /// An editor window: hub methods both ways.
    Editor,
    /// The `parley` command line: hub methods, requests from the client only.
    Cli,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Mcp => "mcp",
            Role::Editor => "editor",
            Role::Cli => "cli",
        })
    }
}

/// How a client counts characters within a line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PositionEncoding {
    /// UTF-16 code units, as VS Code and LSP count.
    #[default]
    #[serde(rename = "utf-16")]
    Utf16,
    /// Bytes of UTF-8, as Neovim counts.
    #[serde(rename = "utf-8")]
    Utf8,
    /// Unicode scalar values.
    #[serde(rename = "utf-32")]
    Utf32,
}

/// The client program's name and version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientInfo {
    pub name: String,
    pub version: String,
}

/// Parameters of `hello`, the first request on every connection. Unknown
/// fields are ignored, so newer clients can add optional ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The hub protocol major the client speaks.
    pub protocol: u32,
    pub role: Role,
    pub client: ClientInfo,
    #[serde(default)]
    pub pid: Option<u32>,
    /// The client's working directory: an agent's workspace is derived from it.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Absolute folders an editor window has open.
    #[serde(default)]
    pub workspaces: Vec<PathBuf>,
    /// An editor's own id; from an agent, the id of the editor it runs inside
    /// (taken from `PARLEY_EDITOR_ID`), used to route `get_selection`.
    #[serde(default)]
    pub editor_id: Option<String>,
    #[serde(default)]
    pub position_encoding: PositionEncoding,
    /// From an agent's shim: the process that started it, the agent's host
    /// (Claude Code, Codex, …). Hooks the host runs are its children too, so
    /// they find their agent by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_pid: Option<u32>,
    /// From an agent's shim: the short name a person gave the agent
    /// (`PARLEY_AGENT_NAME` in the shim's environment), used instead of one
    /// made from the host's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// The client's environment, for the `mcp` and `cli` roles: a review
    /// round one of them asks for runs its reviewer and test command with it
    /// (over the daemon's own), so they find the programs and keys the asker
    /// has. Held in memory for the connection only; never stored or logged.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
}

/// This process's environment as hello carries it: every variable that is
/// valid UTF-8, except the ones that only steer how Parley itself connects.
pub fn current_env() -> std::collections::BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "PARLEY_SOCKET" | "PARLEY_NO_SPAWN" | "PARLEY_DAEMON" | "PARLEY_EDITOR_ID" | "PARLEY_AGENT_NAME"
            )
        })
        .collect()
}

/// The daemon's answer to `hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloReply {
    pub protocol: u32,
    /// The daemon's build version.
    pub version: String,
    pub pid: u32,
    /// This connection's id, as it appears in the daemon's logs and `status`.
    pub connection_id: u64,
    /// The newest event sequence number: a client that later reconnects asks
    /// `events/replay` for what came after the last one it saw.
    pub seq: u64,
    /// Names this run of the daemon; sequence numbers start again when it
    /// changes, so a replay must name the instance its `after` came from.
    pub instance: String,
    /// The daemon's executable, and its identity when the daemon started (see
    /// [`executable_identity`]): a client whose `parley` is that file, changed
    /// since, knows the daemon runs an older build and asks it to hand over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable: Option<std::path::PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

/// Identifies the build in an executable file by its size and modification
/// time: an upgrade replaces the file, and a running process keeps the old one.
pub fn executable_identity(path: &std::path::Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(format!("{}-{}", meta.len(), modified.as_nanos()))
}
