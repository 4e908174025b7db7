//! Opening a file on Unix without waiting, and naming what it is when it is
//! not a regular file.

use std::fs::{File, FileType};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` non-blocking: a FIFO no one writes opens at once.
pub fn open_without_waiting(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new().read(true).custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32).open(path)
}

/// What a file that is not a regular file is.
pub fn kind_name(kind: FileType) -> &'static str {
    match () {
        _ if kind.is_fifo() => "a named pipe (FIFO)",
        _ if kind.is_char_device() || kind.is_block_device() => "a device",
        _ if kind.is_socket() => "a socket",
        _ if kind.is_dir() => "a folder",
        _ => "a special file",
    }
}
