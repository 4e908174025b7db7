//! Opening files that others name (an editor's selection, a file to import)
//! so that one which is not a regular file can never block: opened without
//! waiting (a FIFO no one writes opens at once), checked on the descriptor
//! itself (nothing can be swapped in between), and read only up to a cap (a
//! device such as `/dev/zero` never ends). Callers on the runtime run these
//! on the blocking pool under a deadline.

use std::fs::File;
use std::io::Read;
use std::path::Path;

#[cfg(unix)]
#[path = "regular_file/unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "regular_file/windows.rs"]
mod platform;

/// Why a file could not be opened or read as a regular file.
#[derive(Debug, thiserror::Error)]
pub enum RegularFileError {
    /// A FIFO, a device, a socket or a directory; says which.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("it is {} MiB, over the {} MiB Parley reads", .len.div_ceil(1024 * 1024), .cap / (1024 * 1024))]
    TooLarge { len: u64, cap: u64 },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Opens `path` for reading, refusing anything but a regular file.
pub fn open(path: &Path) -> Result<File, RegularFileError> {
    let file = platform::open_without_waiting(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(RegularFileError::NotRegular(platform::kind_name(kind)))
}

/// The whole of the regular file at `path`, when it holds at most `cap`
/// bytes.
pub fn read(path: &Path, cap: u64) -> Result<Vec<u8>, RegularFileError> {
    let file = open(path)?;
    let len = file.metadata()?.len();
    if len > cap {
        return Err(RegularFileError::TooLarge { len, cap });
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // A file growing meanwhile is read only up to the cap.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(RegularFileError::TooLarge { len: bytes.len() as u64, cap });
    }
    Ok(bytes)
}

/// What [`read_capped`] read.
#[derive(Debug)]
pub struct Capped {
    /// The file's first bytes, at most the cap.
    pub bytes: Vec<u8>,
    /// The file holds more than the cap.
    pub cut: bool,
}

/// At most `cap` bytes of the regular file at `path`, and whether it holds
/// more: for texts that are cut rather than refused when long.
pub fn read_capped(path: &Path, cap: u64) -> Result<Capped, RegularFileError> {
    let file = open(path)?;
    let mut bytes = Vec::with_capacity(file.metadata()?.len().min(cap) as usize);
    // One byte past the cap tells a longer file from one of exactly the cap.
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    let cut = bytes.len() as u64 > cap;
    bytes.truncate(cap as usize);
    Ok(Capped { bytes, cut })
}

#[cfg(test)]
#[cfg(unix)] // FIFOs and devices
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "hello").expect("write");
        assert_eq!(read(&file, 5).expect("read"), b"hello");
        assert!(matches!(read(&file, 4), Err(RegularFileError::TooLarge { len: 5, cap: 4 })));
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600)).expect("mkfifo");
        // Answers at once, though no one writes the FIFO.
        let err = read(&fifo, 5).expect_err("a FIFO");
        assert_eq!(err.to_string(), "it is a named pipe (FIFO), not a regular file");
        assert_eq!(
            read(Path::new("/dev/zero"), 5).expect_err("a device").to_string(),
            "it is a device, not a regular file"
        );
        assert!(matches!(read(dir.path(), 5), Err(RegularFileError::NotRegular("a folder"))));
        assert!(matches!(read(&dir.path().join("missing"), 5), Err(RegularFileError::Io(_))));
    }
}
