//! Starting the daemon on Windows.

use std::fs::OpenOptions;
use std::os::windows::process::CommandExt;
use std::process::Command;

use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, DETACHED_PROCESS};

/// Runs the daemon with no console (no window opens, and closing the host's
/// console leaves it running), in its own process group, from the user's
/// profile folder, holding none of this process's standard handles.
pub fn detach(command: &mut Command) -> &mut Command {
    if let Some(home) = directories::BaseDirs::new() {
        command.current_dir(home.home_dir());
    }
    keep_own_stdio_from_children();
    command.creation_flags(CREATE_NO_WINDOW | DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP)
}

/// Windows gives a child every inheritable handle of its parent (Rust's
/// spawn asks for inheritance, to pass the child its own stdio), and the
/// standard handles a host gives this process are inheritable: the daemon
/// would hold the host's pipe from this process's stdout, and the host would
/// not see it end when this process does, for as long as the daemon runs.
/// The child's own stdio is unaffected: Rust duplicates the handles it is
/// given, inheritable, for it alone.
#[allow(unsafe_code)] // SetHandleInformation takes the raw handle.
fn keep_own_stdio_from_children() {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Foundation::{HANDLE_FLAG_INHERIT, SetHandleInformation};
    let handles =
        [std::io::stdin().as_raw_handle(), std::io::stdout().as_raw_handle(), std::io::stderr().as_raw_handle()];
    for handle in handles.into_iter().filter(|handle| !handle.is_null()) {
        // SAFETY: the handle is this process's own standard handle, or an
        // invalid one, which makes the call fail and change nothing; a
        // handle that cannot be changed stays as it was.
        unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0) };
    }
}

/// Files in the user's local app data are the user's alone already.
pub fn owner_only(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}
