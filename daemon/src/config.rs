//! Settings read from the environment: where state lives and what to log.
//! The only module that reads the environment for settings.

use std::path::PathBuf;

use anyhow::Context;

/// Overrides the directory holding Parley's store.
pub const DATA_DIR_ENV: &str = "PARLEY_DATA_DIR";
/// A `tracing` filter for the daemon's stderr log, e.g. `debug` or `parley=trace`.
pub const LOG_ENV: &str = "PARLEY_LOG";

/// The directory holding the store: `$PARLEY_DATA_DIR`, else the user's data
/// directory (`~/.local/share/parley` on Linux).
pub fn data_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let dirs = directories::ProjectDirs::from("", "", "parley")
        .context("cannot find your home directory; set PARLEY_DATA_DIR to a folder for Parley's store")?;
    Ok(dirs.data_dir().to_owned())
}

/// The log filter: `$PARLEY_LOG`, else `info` (rmcp's per-session chatter at `warn`).
pub fn log_filter() -> String {
    std::env::var(LOG_ENV).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "info,rmcp=warn".to_owned())
}

/// systemd's readiness socket, when the daemon runs as a `Type=notify` unit.
/// Read before the runtime starts threads.
pub fn notify_socket() -> Option<PathBuf> {
    std::env::var_os("NOTIFY_SOCKET").filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// Who a human's comments are from by default: the login name.
pub fn user_name() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "human".into())
}
