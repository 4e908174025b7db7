//! Starting the daemon on Unix.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Runs the daemon in its own process group, so a host's Ctrl-C (sent to
/// its foreground group) leaves it running, from the root folder.
pub fn detach(command: &mut Command) -> &mut Command {
    command.current_dir("/").process_group(0)
}

/// Files created only the user may open (mode 0600).
pub fn owner_only(options: &mut OpenOptions) -> &mut OpenOptions {
    options.mode(0o600)
}
