//! The stream on Unix: a Unix socket.

use std::io;
use std::path::Path;

/// A connection to the daemon.
pub type Stream = tokio::net::UnixStream;
/// The reading half of a connection.
pub type ReadHalf = tokio::net::unix::OwnedReadHalf;
/// The writing half of a connection.
pub type WriteHalf = tokio::net::unix::OwnedWriteHalf;

/// Splits a connection into its two halves.
pub fn split(stream: Stream) -> (ReadHalf, WriteHalf) {
    stream.into_split()
}

/// One connection attempt. Nobody listening is `NotFound` or
/// `ConnectionRefused`; a full accept queue is `WouldBlock`.
pub async fn connect(path: &Path) -> io::Result<Stream> {
    Stream::connect(path).await
}
