//! Binding the daemon's socket safely, one daemon per socket by a lock held
//! for its whole life: a private Unix socket, or on Windows a named pipe only
//! the user may open. Each side also names the stream a connection is and
//! checks the peer is this user.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use parley_shim::daemon_start::owner_only;

/// Whether a client whose user is `theirs` (or could not be told) may use
/// the daemon of user `ours`; `Err` says why not, for the log. Users are
/// compared as Windows's canonical SID strings.
#[cfg_attr(not(windows), allow(dead_code))]
pub(crate) fn admit(ours: &str, theirs: std::io::Result<String>) -> Result<(), String> {
    match theirs {
        Ok(theirs) if theirs == ours => Ok(()),
        Ok(theirs) => Err(format!("it runs as {theirs}, not as this daemon's user {ours}")),
        Err(e) => Err(format!("its user cannot be told ({e}), and only {ours} may connect")),
    }
}

/// How long a starting daemon waits for an old one to release the lock (the
/// old one may be draining during a hand-over).
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Takes the daemon lock at `path`, waiting a little for an old daemon to
/// let go, and writes who holds it.
pub(crate) async fn take_lock(path: &Path) -> anyhow::Result<File> {
    let mut file = owner_only(OpenOptions::new().create(true).truncate(false).read(true).write(true))
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

#[cfg(test)]
mod tests {
    use super::admit;

    #[test]
    fn only_a_client_of_the_same_user_is_admitted() {
        let ours = "S-1-5-21-1-2-3-1001";
        assert_eq!(admit(ours, Ok(ours.to_owned())), Ok(()));
        let other = admit(ours, Ok("S-1-5-21-1-2-3-1002".to_owned())).expect_err("another user");
        assert!(other.contains("runs as S-1-5-21-1-2-3-1002") && other.contains(ours), "{other}");
        let unknown =
            admit(ours, Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied))).expect_err("unknown");
        assert!(unknown.contains("cannot be told"), "{unknown}");
    }
}
