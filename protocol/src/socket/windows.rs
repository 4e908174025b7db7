//! The socket on Windows: a named pipe per user, `\\.\pipe\parley-<user>-v1`.
//! A pipe has no folder, so the files a Unix socket keeps beside it (the
//! daemon's lock, the start lock, the log) live in the user's local app data.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use super::{PROTOCOL_VERSION, SOCKET_ENV, SocketPathError};

/// Every local pipe name starts with this.
pub const PIPE_PREFIX: &str = r"\\.\pipe\";

/// Why the folder for the pipe's lock and log files cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SocketDirError {
    #[error("cannot find your local app data folder; set {SOCKET_ENV} and LOCALAPPDATA")]
    NoLocalAppData,
    #[error("cannot create {dir} for Parley's lock and log files: {source}")]
    Create { dir: PathBuf, source: io::Error },
    #[error("{dir} is not a folder; remove it so Parley can keep its lock and log files there")]
    NotDir { dir: PathBuf },
}

/// `$PARLEY_SOCKET` as given: it must name a local pipe.
pub(super) fn checked_override(value: OsString) -> Result<PathBuf, SocketPathError> {
    let is_pipe = value.to_str().is_some_and(|text| {
        text.len() > PIPE_PREFIX.len() && text[..PIPE_PREFIX.len()].eq_ignore_ascii_case(PIPE_PREFIX)
    });
    if !is_pipe {
        return Err(SocketPathError::NotAPipe(value));
    }
    Ok(PathBuf::from(value))
}

/// The pipe's name when `$PARLEY_SOCKET` is not set: per user and per
/// protocol major, so builds that speak different majors never meet.
pub fn default_socket_path() -> PathBuf {
    let user: String = current_user().chars().map(|c| if c == '\\' || c == '/' { '_' } else { c }).collect();
    PathBuf::from(format!("{PIPE_PREFIX}parley-{user}-v{PROTOCOL_VERSION}"))
}

/// Where the files for a pipe live: `%LOCALAPPDATA%\parley`.
pub fn side_dir() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "parley")?;
    Some(dirs.data_local_dir().parent().unwrap_or(dirs.data_local_dir()).to_owned())
}

/// A file kept for the pipe: its name and `extension`, in [`side_dir`].
pub fn socket_side_file(socket: &Path, extension: &str) -> PathBuf {
    let name = socket.file_name().map_or_else(|| "parley".into(), |n| n.to_string_lossy().into_owned());
    let dir = side_dir().unwrap_or_else(std::env::temp_dir);
    dir.join(format!("{name}.{extension}"))
}

/// The lock file a daemon holds for its whole life.
pub fn daemon_lock_path(socket: &Path) -> PathBuf {
    socket_side_file(socket, "lock")
}

/// The lock file clients hold while they start a daemon, so that two clients
/// starting at once end with one daemon.
pub fn start_lock_path(socket: &Path) -> PathBuf {
    socket_side_file(socket, "start.lock")
}

/// The user's login name, from the system rather than the environment.
#[allow(unsafe_code)] // GetUserNameW is the system's own answer; the environment may be scrubbed.
pub fn current_user() -> String {
    let mut buf = vec![0u16; 257];
    let mut len = buf.len() as u32;
    // SAFETY: `buf` holds `len` UTF-16 units and GetUserNameW writes at most that many.
    let ok = unsafe { windows_sys::Win32::System::WindowsProgramming::GetUserNameW(buf.as_mut_ptr(), &mut len) };
    if ok == 0 || len == 0 {
        return std::env::var("USERNAME").unwrap_or_else(|_| "user".to_owned());
    }
    buf.truncate(len as usize - 1);
    OsString::from_wide(&buf).to_string_lossy().into_owned()
}

/// Whether the folder for the pipe's files exists (`Ok(false)` when not yet).
pub fn check_socket_dir(_socket: &Path) -> Result<bool, SocketDirError> {
    let dir = side_dir().ok_or(SocketDirError::NoLocalAppData)?;
    match fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => Ok(true),
        Ok(_) => Err(SocketDirError::NotDir { dir }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(SocketDirError::Create { dir, source }),
    }
}

/// Creates the folder for the pipe's files when it is missing. Local app
/// data is already the user's alone, so no permissions are changed.
pub fn prepare_socket_dir(socket: &Path) -> Result<(), SocketDirError> {
    if check_socket_dir(socket)? {
        return Ok(());
    }
    let dir = side_dir().ok_or(SocketDirError::NoLocalAppData)?;
    fs::create_dir_all(&dir).map_err(|source| SocketDirError::Create { dir, source })
}
