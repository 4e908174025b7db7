//! What every use case needs, built once by the server: the state owner,
//! the store, the file watcher, the shutdown signals, the review rounds
//! running now, and the facts `status` reports. Both front doors (`hub`,
//! which hands it to each connection, and `mcp`) pass it to the use cases.

use std::path::PathBuf;

use super::rounds::Runs;
use crate::shutdown::Shutdown;
use crate::state::{StartTime, StateHandle};
use crate::store::Store;
use crate::watch::WatchHandle;

/// The daemon's shared services.
#[derive(Debug, Clone)]
pub struct Context {
    pub state: StateHandle,
    pub watch: WatchHandle,
    pub store: Store,
    pub shutdown: Shutdown,
    /// The review rounds running now, and those lately finished.
    pub runs: Runs,
    pub socket: PathBuf,
    pub data_dir: PathBuf,
    pub started: StartTime,
    /// Said loudly in `status` when the store had to be recovered at start.
    pub store_notice: Option<String>,
    /// Where this daemon's log goes, for `status`.
    pub log: parley_protocol::methods::LogDestination,
    /// This daemon's executable and its identity at start.
    pub executable: Option<(PathBuf, String)>,
    /// Pull-request syncs: one at a time, with the tokens commands gave.
    pub github: super::pull_requests::Syncing,
}
