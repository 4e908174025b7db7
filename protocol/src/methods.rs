//! Hub methods after `hello`: their names and the shapes of their parameters
//! and results. `docs/protocol.md` documents each with a JSON example.
//!
//! Positions are 0-based lines and characters counted in the encoding the
//! client declared in its hello.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Editor → daemon notification: the window gained or lost focus.
pub const EDITOR_FOCUS: &str = "editor/focus";
/// Editor → daemon notification: the selection changed (optional; cached as a
/// fallback when the editor is slow to answer `selection/get`).
pub const SELECTION_CHANGED: &str = "selection/changed";
/// Daemon → editor request: the current selection, or null.
pub const SELECTION_GET: &str = "selection/get";
/// Client → daemon request: the reviews for a workspace.
pub const REVIEW_GET: &str = "review/get";
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
pub struct FocusParams {
    pub focused: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsReplayParams {
    /// The last sequence number the client saw.
    pub after: u64,
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
    /// False when events after `after` have been forgotten: the client should
    /// fetch current state (`review/get`) instead.
    pub complete: bool,
    pub seq: u64,
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
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShutdownParams {
    #[serde(default)]
    pub reason: Option<String>,
}
