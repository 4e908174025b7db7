//! The shim's stdin and stdout, each driven the way its platform allows (see
//! `unix.rs` for the kinds of stream a Unix host hands over).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{Input, Output};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{Input, Output};
