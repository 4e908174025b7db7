//! The stream a client and the daemon talk over: a Unix socket, or a named
//! pipe on Windows. Both sides split it into a reading and a writing half.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
