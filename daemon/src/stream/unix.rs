//! A client's connection on Unix: an accepted Unix socket.

/// A connection from a client.
pub type Stream = tokio::net::UnixStream;
/// The reading half of a connection.
pub type ReadHalf = tokio::net::unix::OwnedReadHalf;
/// The writing half of a connection.
pub type WriteHalf = tokio::net::unix::OwnedWriteHalf;

/// Splits a connection into its two halves.
pub fn split(stream: Stream) -> (ReadHalf, WriteHalf) {
    stream.into_split()
}
