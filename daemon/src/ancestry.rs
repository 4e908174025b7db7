//! A process's ancestors, read from `/proc/PID/stat` where there is a
//! `/proc` (none elsewhere): how a hook finds the host it runs under, and
//! how an editor tells which of its terminals runs an agent's host.

/// How many processes up a chain is followed: a host may run a hook through
/// a shell or two, and a terminal's shell may start the host through a few.
pub const MAX_ANCESTORS: usize = 8;

/// `pid`'s ancestors, nearest first: its parent, the parent's parent, and
/// so on, up to [`MAX_ANCESTORS`], stopping before `init` (pid 1). Empty
/// when `pid`'s parent cannot be read (no `/proc`, or the process is gone).
pub fn of(pid: u32) -> Vec<u32> {
    let mut found: Vec<u32> = Vec::new();
    let mut current = pid;
    while found.len() < MAX_ANCESTORS {
        match parent_of(current) {
            Some(parent) if parent > 1 && parent != pid && !found.contains(&parent) => {
                found.push(parent);
                current = parent;
            }
            _ => break,
        }
    }
    found
}

/// This process's parent, when the system says.
#[cfg(unix)]
pub fn parent() -> Option<u32> {
    Some(std::os::unix::process::parent_id())
}

/// This process's parent: Windows' standard library does not say.
#[cfg(not(unix))]
pub fn parent() -> Option<u32> {
    None
}

/// The parent of process `pid`, from `/proc/PID/stat` (its fourth field,
/// after the command name in parentheses, which may itself hold spaces).
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parent_in_stat(&stat)
}

fn parent_in_stat(stat: &str) -> Option<u32> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_is_read_after_a_command_name_with_spaces_and_parentheses() {
        assert_eq!(parent_in_stat("4242 (my (odd) host) S 17 4242 4242 0 -1"), Some(17));
        assert_eq!(parent_in_stat("garbage"), None);
    }

    #[test]
    #[cfg(unix)] // the parent pid as the standard library gives it on Unix
    fn this_process_s_ancestors_start_with_its_parent() {
        let found = of(std::process::id());
        if std::path::Path::new("/proc/self/stat").exists() {
            assert_eq!(found.first(), Some(&std::os::unix::process::parent_id()));
            assert!(found.len() <= MAX_ANCESTORS && !found.contains(&1), "{found:?}");
        } else {
            assert!(found.is_empty());
        }
    }

    #[test]
    fn a_process_that_is_gone_has_no_ancestors() {
        assert_eq!(of(u32::MAX), Vec::<u32>::new());
    }
}
