//! Which file a stat is of, on Unix: its inode, so a file replaced by another
//! of the same size and time is still seen to have changed.

/// The file's inode number.
pub fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}
