//! The socket on Unix: a file in a private per-user folder (`/run/user/<uid>`
//! on Linux when it is there, else a `parley-<uid>` folder in the temp dir).

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::{SOCKET_ENV, SocketPathError, socket_file_name};

/// `$PARLEY_SOCKET` as given: any absolute path.
pub(super) fn checked_override(value: OsString) -> Result<PathBuf, SocketPathError> {
    let path = PathBuf::from(&value);
    if !path.is_absolute() {
        return Err(SocketPathError::NotAbsolute(value));
    }
    Ok(path)
}

/// The socket's path when `$PARLEY_SOCKET` is not set.
pub fn default_socket_path() -> PathBuf {
    default_socket_dir().join(socket_file_name())
}

/// The default directory holding the socket, decided without the environment.
pub fn default_socket_dir() -> PathBuf {
    let uid = current_uid();
    if cfg!(target_os = "linux") {
        let run_user = PathBuf::from(format!("/run/user/{uid}"));
        if is_private_dir_of(&run_user, uid) {
            return run_user.join("parley");
        }
    }
    if let Some(dir) = os_user_temp_dir() {
        return dir.join(format!("parley-{uid}"));
    }
    PathBuf::from(format!("/tmp/parley-{uid}"))
}

/// A file kept for the socket: beside it, under its name with `extension`.
pub fn socket_side_file(socket: &Path, extension: &str) -> PathBuf {
    socket.with_extension(extension)
}

/// The lock file a daemon holds for its whole life, beside the socket.
pub fn daemon_lock_path(socket: &Path) -> PathBuf {
    socket.with_extension("lock")
}

/// The lock file clients hold while they start a daemon, so that two clients
/// starting at once end with one daemon.
pub fn start_lock_path(socket: &Path) -> PathBuf {
    socket.with_extension("start.lock")
}

/// The effective uid of this process.
pub fn current_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn is_private_dir_of(dir: &Path, uid: u32) -> bool {
    match fs::symlink_metadata(dir) {
        Ok(meta) => meta.is_dir() && meta.uid() == uid && meta.mode() & 0o777 == 0o700,
        Err(_) => false,
    }
}

/// Why the socket's directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SocketDirError {
    #[error("the socket path {0} has no folder: set {SOCKET_ENV} to a path such as /tmp/parley-<uid>/parley.sock")]
    NoParent(PathBuf),
    #[error("cannot create socket directory {dir}: {source}")]
    Create { dir: PathBuf, source: io::Error },
    #[error("{dir} is a symbolic link; remove it so Parley can create a private directory there")]
    Symlink { dir: PathBuf },
    #[error("{dir} is not a directory; remove it or set {SOCKET_ENV}")]
    NotDir { dir: PathBuf },
    #[error(
        "{dir} belongs to uid {owner}, not to you (uid {uid}), so others could reach Parley's socket there: {advice}"
    )]
    Owner { dir: PathBuf, owner: u32, uid: u32, advice: String },
    #[error(
        "{dir} is open to other users (mode {mode:o}), and Parley never changes the mode of a folder it did not create: {advice}"
    )]
    Open { dir: PathBuf, mode: u32, advice: String },
}

/// Whether the socket's folder exists: `Ok(true)` when it is a real folder
/// of this user's that no one else can open, `Ok(false)` when it does not
/// exist yet, an error saying what to do otherwise. Changes nothing.
///
/// The folder is the security boundary: not every platform honours
/// permissions on the socket file itself, all honour them on its folder.
pub fn check_socket_dir(socket: &Path) -> Result<bool, SocketDirError> {
    let dir = socket
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .ok_or_else(|| SocketDirError::NoParent(socket.to_owned()))?;
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(source) => return Err(SocketDirError::Create { dir: dir.to_owned(), source }),
    };
    if meta.file_type().is_symlink() {
        return Err(SocketDirError::Symlink { dir: dir.to_owned() });
    }
    if !meta.is_dir() {
        return Err(SocketDirError::NotDir { dir: dir.to_owned() });
    }
    let uid = current_uid();
    let mode = meta.mode() & 0o7777;
    if meta.uid() != uid {
        return Err(SocketDirError::Owner {
            dir: dir.to_owned(),
            owner: meta.uid(),
            uid,
            advice: advice(socket, false),
        });
    }
    if mode & 0o077 != 0 {
        // A folder others may write in (or a sticky one, like /tmp) is shared
        // by nature: making it private is not advice to give.
        let shared = mode & 0o1002 != 0;
        return Err(SocketDirError::Open { dir: dir.to_owned(), mode, advice: advice(socket, !shared) });
    }
    Ok(true)
}

/// What to do about an unusable socket folder: a folder of the socket's own
/// (which Parley creates private), or making the folder private when it is
/// the user's alone.
fn advice(socket: &Path, may_chmod: bool) -> String {
    let dir = socket.parent().unwrap_or(Path::new("/"));
    let chmod =
        if may_chmod { format!(", or run `chmod 700 {}` if only you use it", dir.display()) } else { String::new() };
    if dir == default_socket_dir() {
        return format!("remove {} so Parley creates it private{chmod}, or set {SOCKET_ENV}", dir.display());
    }
    let name = socket.file_name().map_or_else(socket_file_name, |n| n.to_string_lossy().into_owned());
    let own = dir.join(format!("parley-{}", current_uid())).join(name);
    format!(
        "set {SOCKET_ENV} to a path in a folder of its own, such as {} (Parley creates a missing folder private){chmod}",
        own.display()
    )
}

/// Makes the socket's folder ready: creates it (and any missing parents)
/// with mode 0700 when it does not exist, then checks it as
/// [`check_socket_dir`] does. An existing folder is never changed: one that
/// others can open is refused with what to do.
pub fn prepare_socket_dir(socket: &Path) -> Result<(), SocketDirError> {
    if check_socket_dir(socket)? {
        return Ok(());
    }
    let dir = socket.parent().ok_or_else(|| SocketDirError::NoParent(socket.to_owned()))?;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| SocketDirError::Create { dir: dir.to_owned(), source })?;
    if check_socket_dir(socket)? {
        Ok(())
    } else {
        Err(SocketDirError::Create { dir: dir.to_owned(), source: io::ErrorKind::NotFound.into() })
    }
}

#[cfg(target_os = "macos")]
#[allow(unsafe_code)] // confstr is the only way to ask for the per-user temp dir without the environment.
fn os_user_temp_dir() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let mut buf = vec![0u8; 1024];
    // SAFETY: `buf` is valid for `buf.len()` bytes and confstr writes at most that many.
    let len = unsafe { libc::confstr(libc::_CS_DARWIN_USER_TEMP_DIR, buf.as_mut_ptr().cast(), buf.len()) };
    if len == 0 || len > buf.len() {
        return None;
    }
    buf.truncate(len - 1);
    Some(PathBuf::from(OsString::from_vec(buf)))
}

#[cfg(not(target_os = "macos"))]
fn os_user_temp_dir() -> Option<PathBuf> {
    None
}
