//! The stream on Windows: a named pipe. A pipe whose every instance is taken
//! (`ERROR_PIPE_BUSY`) is reported as `WouldBlock`, so callers retry it as
//! they retry a full accept queue on Unix.

use std::io;
use std::path::Path;

use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeClient};
use windows_sys::Win32::Foundation::ERROR_PIPE_BUSY;

/// A connection to the daemon.
pub type Stream = NamedPipeClient;
/// The reading half of a connection.
pub type ReadHalf = tokio::io::ReadHalf<NamedPipeClient>;
/// The writing half of a connection.
pub type WriteHalf = tokio::io::WriteHalf<NamedPipeClient>;

/// Splits a connection into its two halves.
pub fn split(stream: Stream) -> (ReadHalf, WriteHalf) {
    tokio::io::split(stream)
}

/// One connection attempt. Nobody listening is `NotFound`; every instance
/// busy is `WouldBlock`.
pub async fn connect(path: &Path) -> io::Result<Stream> {
    match ClientOptions::new().open(path) {
        Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) => Err(io::Error::new(io::ErrorKind::WouldBlock, e)),
        other => other,
    }
}
