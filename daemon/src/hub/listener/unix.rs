//! Binding the daemon's Unix socket safely: a private directory (created 0700, or
//! an existing one used only when it already is private), a lock held for
//! the daemon's whole life (one daemon per socket), stale sockets replaced,
//! the socket made 0600 — or serving the socket systemd passed (socket
//! activation), which systemd keeps after the daemon exits.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use parley_protocol::socket;

use crate::stream::Stream;
use tokio::net::UnixListener;

/// Whether the client on `stream` runs as this user (its uid, from the kernel).
pub fn same_user(stream: &Stream) -> anyhow::Result<bool> {
    let uid = socket::current_uid();
    let peer = stream.peer_cred()?;
    if peer.uid() != uid {
        tracing::warn!(peer_uid = peer.uid(), "refused a connection from another user");
    }
    Ok(peer.uid() == uid)
}

/// The listening socket.
#[derive(Debug)]
pub struct Listener(UnixListener);

impl Listener {
    /// The next client's connection.
    pub async fn accept(&mut self) -> io::Result<Stream> {
        self.0.accept().await.map(|(stream, _)| stream)
    }
}

/// A bound socket and the lock that makes this daemon the only one on it.
#[derive(Debug)]
pub struct BoundSocket {
    listener: UnixListener,
    guard: SocketGuard,
}

/// Owns the socket file and the daemon lock after the listener is handed out.
#[derive(Debug)]
pub struct SocketGuard {
    path: PathBuf,
    /// Held until the daemon exits; the OS releases it even on `kill -9`.
    _lock: File,
    /// The socket was passed by systemd, which owns its file.
    activated: bool,
}

impl BoundSocket {
    pub fn into_parts(self) -> (Listener, SocketGuard) {
        (Listener(self.listener), self.guard)
    }
}

impl SocketGuard {
    /// Removes the socket file; called last during shutdown, while the lock
    /// is still held so no new daemon can be binding the same path.
    pub fn remove(&self) {
        if self.activated {
            return;
        }
        if let Err(e) = fs::remove_file(&self.path)
            && e.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove socket {}: {e}", self.path.display());
        }
    }
}

/// The listening socket systemd passed (socket activation: `LISTEN_FDS`),
/// if any. Call it before the runtime starts threads: it reads and clears
/// the variables, so the reviewer and test commands do not inherit them.
pub fn activated_socket() -> anyhow::Result<Option<std::os::unix::net::UnixListener>> {
    let mut passed = listenfd::ListenFd::from_env();
    if passed.len() > 1 {
        tracing::warn!("systemd passed {} sockets; Parley serves the first", passed.len());
    }
    passed
        .take_unix_listener(0)
        .context("the socket systemd passed is not a Unix stream socket: check ListenStream= in parley.socket")
}

/// Takes the daemon lock and binds `path`, or serves `activated`, the
/// socket systemd passed.
pub async fn bind(path: &Path, activated: Option<std::os::unix::net::UnixListener>) -> anyhow::Result<BoundSocket> {
    socket::prepare_socket_dir(path)?;
    let lock = super::take_lock(&socket::daemon_lock_path(path)).await?;
    if let Some(passed) = activated {
        let at = passed.local_addr().ok().and_then(|a| a.as_pathname().map(Path::to_owned));
        if at.as_deref() == Some(path) {
            make_private(path);
            tracing::info!("serving the socket systemd passed, {}", path.display());
        } else {
            tracing::warn!(
                "systemd passed a socket at {}, but clients look for {}: set ListenStream= in parley.socket to it",
                at.map_or_else(|| "no path".to_owned(), |p| p.display().to_string()),
                path.display()
            );
        }
        passed.set_nonblocking(true).context("setting the passed socket non-blocking")?;
        let listener = UnixListener::from_std(passed).context("serving the passed socket")?;
        return Ok(BoundSocket {
            listener,
            guard: SocketGuard { path: path.to_owned(), _lock: lock, activated: true },
        });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => bail!("a process that does not hold the lock is listening on {}; stop it first", path.display()),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            tracing::info!("removing stale socket {}", path.display());
            fs::remove_file(path).with_context(|| format!("removing stale socket {}", path.display()))?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("probing existing socket {}", path.display())),
    }
    let listener = bind_private(path)?;
    Ok(BoundSocket { listener, guard: SocketGuard { path: path.to_owned(), _lock: lock, activated: false } })
}

/// Binds `path` so the socket is 0600 from the moment it exists: created
/// under a umask that clears group and other bits (some filesystems ignore a
/// later `chmod` on a socket), then set explicitly and checked.
fn bind_private(path: &Path) -> anyhow::Result<UnixListener> {
    use rustix::fs::Mode;
    let previous = rustix::process::umask(Mode::from_raw_mode(0o177));
    let bound = UnixListener::bind(path);
    rustix::process::umask(previous);
    let listener = bound.with_context(|| format!("binding {}", path.display()))?;
    make_private(path);
    Ok(listener)
}

/// Makes the socket file 0600, and says so when the filesystem keeps
/// another mode (the private directory and the peer uid check still hold).
fn make_private(path: &Path) {
    let _ = fs::set_permissions(path, fs::Permissions::from_mode(0o600));
    let mode = fs::metadata(path).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
    if mode & 0o077 != 0 {
        tracing::warn!(
            "{} is mode {mode:o} although 0600 was asked for; its directory is private and every peer's uid is checked",
            path.display()
        );
    }
}
