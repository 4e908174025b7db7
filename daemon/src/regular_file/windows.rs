//! Opening a file on Windows, and naming what it is when it is not a regular
//! file: opening never waits there.

use std::fs::{File, FileType};
use std::path::Path;

/// Opens `path` for reading.
pub fn open_without_waiting(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// What a file that is not a regular file is.
pub fn kind_name(kind: FileType) -> &'static str {
    if kind.is_dir() { "a folder" } else { "a special file" }
}
