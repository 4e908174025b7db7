//! Starting the daemon on Windows.

use std::fs::OpenOptions;
use std::os::windows::process::CommandExt;
use std::process::Command;

use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, DETACHED_PROCESS};

/// Runs the daemon with no console (no window opens, and closing the host's
/// console leaves it running), in its own process group, from the user's
/// profile folder.
pub fn detach(command: &mut Command) -> &mut Command {
    if let Some(home) = directories::BaseDirs::new() {
        command.current_dir(home.home_dir());
    }
    command.creation_flags(CREATE_NO_WINDOW | DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP)
}

/// Files in the user's local app data are the user's alone already.
pub fn owner_only(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}
