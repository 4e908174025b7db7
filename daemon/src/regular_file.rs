//! Reading a file that must be a regular file, without ever blocking on or
//! draining a special one: the path is opened non-blocking (a FIFO with no
//! writer opens at once instead of waiting for one), the file opened is
//! checked with `fstat` (so a path swapped between a check and the open
//! changes nothing), and no more than a cap is read (so a file that grows,
//! or a device that never ends, costs at most the cap).
//!
//! Blocking IO: call it from a blocking thread.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed (`NotFound` when there is no such file).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A directory, a FIFO, a socket or a device.
    #[error("it is not a regular file")]
    NotRegular,
    /// Over the cap [`read_whole`] was given: `len` bytes, or more.
    #[error("it is {len} bytes, over the limit")]
    TooLarge { len: u64 },
}

impl ReadError {
    /// Whether the path names nothing.
    pub fn is_missing(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// What [`read_capped`] read.
#[derive(Debug)]
pub struct Capped {
    /// The file's first bytes, at most the cap.
    pub bytes: Vec<u8>,
    /// The file holds more than the cap.
    pub cut: bool,
}

/// Opens `path` (following links) for reading, refusing anything but a
/// regular file before a byte is read. Also answers the file's metadata,
/// taken from the open file.
pub fn open(path: &Path) -> Result<(File, Metadata), ReadError> {
    let flags = i32::try_from(rustix::fs::OFlags::NONBLOCK.bits()).expect("O_NONBLOCK fits an int");
    let file = std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    Ok((file, meta))
}

/// Reads at most `cap` bytes of the regular file at `path`, and says
/// whether it holds more.
pub fn read_capped(path: &Path, cap: u64) -> Result<Capped, ReadError> {
    let (file, meta) = open(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(cap)).unwrap_or(0));
    // One byte past the cap tells a file that is longer from one that is
    // exactly the cap, whatever its size said a moment ago.
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    let cut = bytes.len() as u64 > cap;
    bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    Ok(Capped { bytes, cut })
}

/// Reads the whole regular file at `path`, refusing one over `cap` bytes
/// before reading it (and one that grows past `cap` while it is read).
pub fn read_whole(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = open(path)?;
    if meta.len() > cap {
        return Err(ReadError::TooLarge { len: meta.len() });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge { len: bytes.len() as u64 });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_up_to_the_cap() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "0123456789").expect("write");
        let whole = read_capped(&file, 10).expect("read");
        assert_eq!((whole.bytes.as_slice(), whole.cut), (b"0123456789".as_slice(), false));
        let cut = read_capped(&file, 4).expect("read");
        assert_eq!((cut.bytes.as_slice(), cut.cut), (b"0123".as_slice(), true));
        assert_eq!(read_whole(&file, 10).expect("read"), b"0123456789");
        assert!(matches!(read_whole(&file, 9), Err(ReadError::TooLarge { len: 10 })));
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&file, &link).expect("symlink");
        assert_eq!(read_capped(&link, 100).expect("through a link").bytes, b"0123456789");
    }

    #[test]
    fn special_files_are_refused_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A FIFO with no writer: a blocking open would wait forever.
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600)).expect("mkfifo");
        assert!(matches!(read_capped(&fifo, 10), Err(ReadError::NotRegular)));
        assert!(matches!(read_capped(Path::new("/dev/zero"), 10), Err(ReadError::NotRegular)));
        assert!(matches!(read_capped(dir.path(), 10), Err(ReadError::NotRegular)));
        assert!(matches!(read_whole(&fifo, 10), Err(ReadError::NotRegular)));
        let missing = read_capped(&dir.path().join("gone"), 10).expect_err("missing");
        assert!(missing.is_missing(), "{missing}");
        assert!(!ReadError::NotRegular.is_missing());
    }
}
