//! What the daemon's process needs of Windows: Ctrl-C and Ctrl-Break stop
//! it, and its log is the file a starting client opened. There is no socket
//! activation and no readiness notice to give.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::Context as _;
use parley_protocol::methods::LogDestination;

use crate::shutdown::Shutdown;

/// Windows passes no listening pipe: never anything.
pub type Activated = Option<std::convert::Infallible>;

/// Nothing is inherited that needs closing: Windows handles are not
/// inherited unless a parent asks.
pub fn take_inherited() -> anyhow::Result<Activated> {
    Ok(None)
}

/// Stops the daemon on Ctrl-C or Ctrl-Break in its console, if it has one.
pub fn spawn_signal_handler(shutdown: Shutdown) -> anyhow::Result<()> {
    let mut int = tokio::signal::windows::ctrl_c().context("listening for Ctrl-C")?;
    let mut brk = tokio::signal::windows::ctrl_break().context("listening for Ctrl-Break")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => tracing::info!("Ctrl-C received"),
            _ = brk.recv() => tracing::info!("Ctrl-Break received"),
        }
        shutdown.request_stop("signal");
    });
    Ok(())
}

/// There is no service manager to tell.
pub fn notify_ready(_path: &Path) {}

/// Where the log (stderr) goes, for `status`: the terminal, else the file a
/// client starting the daemon opens, when it exists.
pub fn log_destination(socket_path: &Path) -> LogDestination {
    if std::io::stderr().is_terminal() {
        return LogDestination::Terminal;
    }
    let beside = parley_shim::connect::daemon_log_path(socket_path);
    if beside.is_file() {
        return LogDestination::File { path: beside };
    }
    LogDestination::Elsewhere
}
