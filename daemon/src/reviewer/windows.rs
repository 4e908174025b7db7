//! The reviewer command's process group on Windows: it gets a new one (so a
//! Ctrl-C in the daemon's console does not reach it), and a timeout or a
//! cancel kills the command itself (`kill_on_drop`).

/// The started command (killed through its handle).
#[derive(Debug, Clone, Copy)]
pub struct Group;

/// The group a started command leads, from its pid.
pub fn led_by(_pid: u32) -> Option<Group> {
    Some(Group)
}

/// Starts the command in a new process group.
pub fn lead_own_group(command: &mut tokio::process::Command) {
    command.creation_flags(windows_sys::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP);
}

/// Dropping the child (`kill_on_drop`) kills the command.
pub fn kill(_group: Option<Group>) {}
