//! Binding the daemon's socket safely: a private directory, a lock held for
//! the daemon's whole life (one daemon per socket), stale sockets replaced,
//! the socket made 0600.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use parley_protocol::socket;
use tokio::net::UnixListener;

/// How long a starting daemon waits for an old one to release the lock (the
/// old one may be draining during a hand-over).
const LOCK_WAIT: Duration = Duration::from_secs(5);

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
}

impl BoundSocket {
    pub fn into_parts(self) -> (UnixListener, SocketGuard) {
        (self.listener, self.guard)
    }
}

impl SocketGuard {
    /// Removes the socket file; called last during shutdown, while the lock
    /// is still held so no new daemon can be binding the same path.
    pub fn remove(&self) {
        if let Err(e) = fs::remove_file(&self.path)
            && e.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove socket {}: {e}", self.path.display());
        }
    }
}

/// Takes the daemon lock and binds `path`.
pub async fn bind(path: &Path) -> anyhow::Result<BoundSocket> {
    let dir = path.parent().context("the socket path has no directory")?;
    socket::ensure_private_dir(dir)?;
    let lock = take_lock(&socket::daemon_lock_path(path)).await?;
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
    Ok(BoundSocket { listener, guard: SocketGuard { path: path.to_owned(), _lock: lock } })
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
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .with_context(|| format!("making {} private", path.display()))?;
    let mode = fs::metadata(path).with_context(|| format!("checking {}", path.display()))?.permissions().mode();
    if mode & 0o077 != 0 {
        tracing::warn!(
            "{} is mode {:o} although 0600 was asked for; its directory is private and every peer's uid is checked",
            path.display(),
            mode & 0o777
        );
    }
    Ok(listener)
}

async fn take_lock(path: &Path) -> anyhow::Result<File> {
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("opening lock file {}", path.display()))?;
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                bail!(
                    "another Parley daemon ({}) holds {}; stop it with `parley stop` first",
                    holder.trim(),
                    path.display()
                );
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()));
            }
        }
    }
    file.set_len(0)?;
    file.rewind()?;
    write!(file, "pid {} version {}", std::process::id(), parley_protocol::BUILD_VERSION)?;
    file.flush()?;
    Ok(file)
}
