//! Where the daemon's socket lives: one resolution shared by the daemon, the
//! shim, the CLI and the tests, so that every side meets at the same path.
//!
//! On Unix the socket is a file in a private per-user folder; on Windows it
//! is a named pipe, `\\.\pipe\parley-<user>-v1`, and the files that sit
//! beside a Unix socket (the daemon's lock, the start lock, the log) live in
//! the user's local app data instead.
//!
//! The default depends only on who the user is, never on environment
//! variables, because MCP hosts start the shim with a scrubbed environment (no
//! `XDG_RUNTIME_DIR`, no `TMPDIR`) while a daemon under systemd or launchd
//! sees a different one.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::PROTOCOL_VERSION;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// Overrides the socket path; both sides must be configured alike.
pub const SOCKET_ENV: &str = "PARLEY_SOCKET";

/// The longest socket path every platform accepts: macOS's `sun_path` holds
/// 104 bytes including the terminating NUL, Linux's 108. Node truncates longer
/// paths silently, so Parley refuses them up front. A Windows pipe name holds
/// up to 256 characters.
pub const MAX_SOCKET_PATH_BYTES: usize = if cfg!(windows) {
    256
} else if cfg!(target_os = "linux") {
    107
} else {
    103
};

/// Why no usable socket path could be decided.
#[derive(Debug, thiserror::Error)]
pub enum SocketPathError {
    #[error(
        "socket path {path} is {len} bytes, longer than the {max} this platform allows: set {SOCKET_ENV} to a shorter path"
    )]
    TooLong { path: PathBuf, len: usize, max: usize },
    #[error("{SOCKET_ENV} must be an absolute path, got {0:?}")]
    NotAbsolute(OsString),
    #[error("{SOCKET_ENV} must name a pipe such as \\\\.\\pipe\\parley-test, got {0:?}")]
    NotAPipe(OsString),
}

/// The socket's file name for this protocol major, e.g. `parley-v1.sock`.
pub fn socket_file_name() -> String {
    format!("parley-v{PROTOCOL_VERSION}.sock")
}

/// Decides the socket path: `$PARLEY_SOCKET` when set, else a per-user
/// path derived from who the user is (see the module comment).
pub fn socket_path() -> Result<PathBuf, SocketPathError> {
    let path = match std::env::var_os(SOCKET_ENV).filter(|v| !v.is_empty()) {
        Some(value) => checked_override(value)?,
        None => default_socket_path(),
    };
    check_length(path)
}

fn check_length(path: PathBuf) -> Result<PathBuf, SocketPathError> {
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH_BYTES {
        return Err(SocketPathError::TooLong { path, len, max: MAX_SOCKET_PATH_BYTES });
    }
    Ok(path)
}

#[cfg(all(test, unix))]
mod tests {
    use std::fs;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use super::*;

    #[test]
    fn lock_paths_sit_beside_the_socket() {
        let socket = Path::new("/tmp/parley-1000/parley-v1.sock");
        assert_eq!(daemon_lock_path(socket), Path::new("/tmp/parley-1000/parley-v1.lock"));
        assert_eq!(start_lock_path(socket), Path::new("/tmp/parley-1000/parley-v1.start.lock"));
    }

    #[test]
    fn too_long_paths_are_refused_with_advice() {
        let long = PathBuf::from(format!("/tmp/{}/x.sock", "d".repeat(120)));
        let err = check_length(long).expect_err("a 130-byte path must be refused");
        assert!(err.to_string().contains("set PARLEY_SOCKET to a shorter path"), "{err}");
    }

    #[test]
    fn default_dir_is_per_user() {
        let dir = default_socket_dir();
        let uid = current_uid().to_string();
        assert!(dir.to_string_lossy().contains(&uid), "{}", dir.display());
    }

    #[test]
    fn a_missing_folder_is_created_private_and_an_open_one_is_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile_dir("socket-dir");
        let socket = base.join("made/deeper/p.sock");
        prepare_socket_dir(&socket).expect("create");
        assert_eq!(fs::metadata(base.join("made")).expect("stat").mode() & 0o777, 0o700);
        assert_eq!(fs::metadata(base.join("made/deeper")).expect("stat").mode() & 0o777, 0o700);
        prepare_socket_dir(&socket).expect("a private folder is used as it is");

        let shared = base.join("shared");
        fs::create_dir(&shared).expect("mkdir");
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).expect("chmod");
        let err = prepare_socket_dir(&shared.join("p.sock")).expect_err("a shared folder is refused");
        assert_eq!(fs::metadata(&shared).expect("stat").mode() & 0o7777, 0o1777, "its mode is kept");
        let text = err.to_string();
        assert!(text.contains("mode 1777") && text.contains(&format!("parley-{}/p.sock", current_uid())), "{text}");
        assert!(!text.contains("chmod 700"), "a shared folder is not for making private: {text}");

        let mine = base.join("mine");
        fs::create_dir(&mine).expect("mkdir");
        fs::set_permissions(&mine, fs::Permissions::from_mode(0o755)).expect("chmod");
        let err = prepare_socket_dir(&mine.join("p.sock")).expect_err("an open folder is refused");
        assert_eq!(fs::metadata(&mine).expect("stat").mode() & 0o777, 0o755, "its mode is kept");
        assert!(err.to_string().contains(&format!("chmod 700 {}", mine.display())), "{err}");
        fs::remove_dir_all(&base).expect("cleanup");
    }

    fn tempfile_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("parley-proto-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).expect("mkdir");
        dir
    }
}
