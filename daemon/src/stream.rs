//! The stream a client's connection is, on the daemon's side: an accepted
//! Unix socket, or a named pipe instance on Windows, split into a reading and
//! a writing half.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
