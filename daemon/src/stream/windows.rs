//! A client's connection on Windows: a connected named pipe instance.

use tokio::net::windows::named_pipe::NamedPipeServer;

/// A connection from a client.
pub type Stream = NamedPipeServer;
/// The reading half of a connection.
pub type ReadHalf = tokio::io::ReadHalf<NamedPipeServer>;
/// The writing half of a connection.
pub type WriteHalf = tokio::io::WriteHalf<NamedPipeServer>;

/// Splits a connection into its two halves.
pub fn split(stream: Stream) -> (ReadHalf, WriteHalf) {
    tokio::io::split(stream)
}
