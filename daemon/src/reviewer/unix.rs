//! The reviewer command's process group on Unix: it leads its own, so a
//! timeout or a cancel kills everything it started.

/// A process group, named by its leader.
pub type Group = rustix::process::Pid;

/// A command written as one line, run by `sh -c`.
pub fn shell(line: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(line);
    command
}

/// Starts the command as the leader of a new process group.
pub fn lead_own_group(command: &mut tokio::process::Command) {
    command.process_group(0);
}

/// Kills the command and everything it started (it leads its own group).
pub fn kill(group: Option<Group>) {
    if let Some(group) = group {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
}

/// The group a started command leads.
pub fn led_by(child: &tokio::process::Child) -> Option<Group> {
    rustix::process::Pid::from_raw(child.id()? as i32)
}
