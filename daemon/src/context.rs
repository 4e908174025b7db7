//! What every connection and every use case needs: the state owner, the
//! store, the file watcher, the shutdown signals, and the facts `status`
//! reports. Shared by `hub` (which hands it to each connection) and `mcp`,
//! so neither imports the other for it.

use std::path::PathBuf;

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
    pub socket: PathBuf,
    pub data_dir: PathBuf,
    pub started: StartTime,
    /// Said loudly in `status` when the store had to be recovered at start.
    pub store_notice: Option<String>,
    /// Where this daemon's log goes, for `status`.
    pub log: parley_protocol::methods::LogDestination,
    /// This daemon's executable and its identity at start.
    pub executable: Option<(PathBuf, String)>,
}
