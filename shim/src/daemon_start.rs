//! What starting the daemon needs of the platform: a command detached from
//! the client (its own process group on Unix; no console window on
//! Windows), and files only the user may open.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
