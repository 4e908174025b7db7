//! Starting the daemon on Windows.

use std::fs::OpenOptions;
use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::process::Command;

use windows_sys::Win32::Foundation::{HANDLE_FLAG_INHERIT, SetHandleInformation};
use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, DETACHED_PROCESS};

/// Runs the daemon with no console (no window opens, and closing the host's
/// console leaves it running), in its own process group, from the user's
/// profile folder, holding none of this process's standard handles.
pub fn detach(command: &mut Command) -> &mut Command {
    if let Some(home) = directories::BaseDirs::new() {
        command.current_dir(home.home_dir());
    }
    keep_stdio_from_children();
    command.creation_flags(CREATE_NO_WINDOW | DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP)
}

/// Makes this process's standard handles non-inheritable. Windows hands a
/// child every inheritable handle of its parent, whatever its own stdio is
/// set to, and the pipes a host gave the shim (or an editor gave `parley
/// attach`) are inheritable: the daemon would hold them open for its life,
/// and the host, reading the shim's output to its end, would wait forever
/// after the shim exits. Children that std starts with inherited stdio still
/// get them: std passes them a duplicate made inheritable for the child.
#[allow(unsafe_code)] // SetHandleInformation is a Win32 call.
fn keep_stdio_from_children() {
    for handle in
        [std::io::stdin().as_raw_handle(), std::io::stdout().as_raw_handle(), std::io::stderr().as_raw_handle()]
    {
        if !handle.is_null() {
            // SAFETY: a handle std holds for this process's standard stream;
            // a closed or invalid one only makes the call fail, which is harmless.
            unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0) };
        }
    }
}

/// Files in the user's local app data are the user's alone already.
pub fn owner_only(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}
