//! The data directory's permissions: private to the user, as it holds every
//! comment. On Unix that is modes 0700 and 0600, checked and tightened; on
//! Windows the user's local app data is private to the user already.

use std::path::PathBuf;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// A file or directory other users could reach, and its mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loosened {
    pub path: PathBuf,
    pub mode: u32,
}
