//! What the daemon lets go of its starter at start: open file descriptors
//! beyond stdio. A daemon started on demand inherits whatever its starter had
//! open — a shell's `$(…)` capture pipe, an agent host's extra pipes — and
//! holding one keeps the starter's reader waiting for an end that never comes,
//! and hands it on to every reviewer the daemon runs.

use std::os::fd::RawFd;

/// Closes every descriptor above stderr except `keep` (the listening socket
/// systemd passed). Call it before the runtime starts threads, while nothing
/// else in the process can open or own a descriptor.
pub fn close_inherited(keep: &[RawFd]) {
    for fd in open_descriptors() {
        if fd > 2 && !keep.contains(&fd) {
            // SAFETY: the kernel listed `fd` as open, and this runs before any
            // other thread exists: the only owners of descriptors at this
            // point are stdio, `keep`, and the listing (already closed), so
            // nothing in this process holds a handle to `fd`.
            #[allow(unsafe_code)]
            drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        }
    }
}

/// The descriptors open now, as the kernel lists them. The listing reads
/// through a descriptor of its own, closed once read: a number still listed
/// after that is open.
fn open_descriptors() -> Vec<RawFd> {
    for dir in ["/proc/self/fd", "/dev/fd"] {
        let Ok(listing) = std::fs::read_dir(dir) else { continue };
        let listed: Vec<RawFd> =
            listing.flatten().filter_map(|entry| entry.file_name().to_str()?.parse().ok()).collect();
        return listed
            .into_iter()
            .filter(|fd| std::path::Path::new(&format!("{dir}/{fd}")).symlink_metadata().is_ok())
            .collect();
    }
    Vec::new()
}
