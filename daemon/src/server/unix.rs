//! What the daemon's process needs of Unix: the socket systemd passed and
//! no other inherited descriptors, SIGTERM and SIGINT, systemd's readiness
//! notice, and where stderr goes.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::Context as _;
use parley_protocol::methods::LogDestination;

use crate::config;
use crate::hub::listener;
use crate::shutdown::Shutdown;

/// The listening socket systemd passed, if any.
pub type Activated = Option<std::os::unix::net::UnixListener>;

/// Takes the socket systemd passed and closes every other inherited
/// descriptor. Call it before the runtime starts threads.
pub fn take_inherited() -> anyhow::Result<Activated> {
    let activated = listener::activated_socket()?;
    let keep: Vec<std::os::fd::RawFd> = activated.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
    crate::inherited::close_inherited(&keep);
    Ok(activated)
}

pub fn spawn_signal_handler(shutdown: Shutdown) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received"),
            _ = int.recv() => tracing::info!("SIGINT received"),
        }
        shutdown.request_stop("signal");
    });
    Ok(())
}

/// Tells systemd the daemon is ready (`Type=notify` units).
pub fn notify_ready(path: &Path) {
    let socket = match std::os::unix::net::UnixDatagram::unbound() {
        Ok(socket) => socket,
        Err(e) => return tracing::warn!("cannot notify systemd: {e}"),
    };
    let sent = match path.to_str().and_then(|p| p.strip_prefix('@')) {
        #[cfg(target_os = "linux")]
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
                .and_then(|addr| socket.send_to_addr(b"READY=1", &addr))
        }
        _ => socket.send_to(b"READY=1", path),
    };
    if let Err(e) = sent {
        tracing::warn!("cannot notify systemd at {}: {e}", path.display());
    }
}

/// Where the log (stderr) goes, for `status`: the file beside the socket
/// that a client starting the daemon opens, the journal, the terminal, or
/// another file when the system can name it.
pub fn log_destination(socket_path: &Path) -> LogDestination {
    use std::os::unix::fs::MetadataExt;
    let stderr = std::io::stderr();
    if stderr.is_terminal() {
        return LogDestination::Terminal;
    }
    let Ok(stat) = rustix::fs::fstat(&stderr) else {
        return LogDestination::Elsewhere;
    };
    #[allow(clippy::unnecessary_cast)] // st_dev is an i32 on macOS.
    let same = |dev: u64, ino: u64| dev == stat.st_dev as u64 && ino == stat.st_ino as u64;
    if config::journal_stream().is_some_and(|(dev, ino)| same(dev, ino)) {
        return LogDestination::Journal;
    }
    let beside = parley_shim::connect::daemon_log_path(socket_path);
    if std::fs::metadata(&beside).is_ok_and(|m| same(m.dev(), m.ino())) {
        return LogDestination::File { path: beside };
    }
    // Linux names the file behind a descriptor.
    if let Ok(path) = std::fs::read_link("/proc/self/fd/2")
        && path.is_absolute()
        && std::fs::metadata(&path).is_ok_and(|m| m.is_file() && same(m.dev(), m.ino()))
    {
        return LogDestination::File { path };
    }
    LogDestination::Elsewhere
}
