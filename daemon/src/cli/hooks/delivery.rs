//! The person's messages waiting for the agent a hook runs for, taken for
//! the host to hand its model. The agent is found through the host process
//! the hook shares with that agent's shim (the host starts both: the hook's
//! ancestors hold the process the shim reported as its parent), else as the
//! only agent working on the repository holding the hook's `cwd`. Taken
//! messages are marked delivered by `hook`, so no other path repeats them.

use std::path::Path;

use parley_protocol::hello::Role;
use parley_protocol::methods as wire;
use serde_json::json;

use super::HookError;
use crate::cli::client::{HubClient, Opening};

/// How many processes up the hook looks for its host: the host may run a
/// hook through a shell or two.
const MAX_ANCESTORS: usize = 8;

/// The text of the messages waiting for the agent of the host running this
/// hook in `cwd`, one after the other; `None` when none wait (or no daemon
/// runs: a stopped daemon has no agent at work to deliver to).
pub async fn take(cwd: &Path) -> Result<Option<String>, HookError> {
    let opening = Opening { role: Role::Cli, name: "parley hook", workspaces: Vec::new(), spawn: false };
    let Some(mut client) = HubClient::open(&opening).await? else {
        return Ok(None);
    };
    let mut ancestors = ancestors();
    let host_pid = ancestors.remove(0);
    let params = json!({ "host_pid": host_pid, "ancestors": ancestors, "cwd": cwd });
    let took: wire::MessagesTakeResult = client.call(wire::MESSAGES_TAKE, params).await?;
    if took.messages.is_empty() {
        return Ok(None);
    }
    let texts: Vec<&str> = took.messages.iter().map(|message| message.text.as_str()).collect();
    Ok(Some(texts.join("\n\n")))
}

/// This process's ancestors, nearest first: its parent, the parent's
/// parent, and so on (read from `/proc` where there is one; elsewhere the
/// parent only).
fn ancestors() -> Vec<u32> {
    let mut found = vec![std::os::unix::process::parent_id()];
    while found.len() < MAX_ANCESTORS {
        let Some(&last) = found.last() else { break };
        match parent_of(last) {
            Some(parent) if parent > 1 && !found.contains(&parent) => found.push(parent),
            _ => break,
        }
    }
    found
}

/// The parent of process `pid`, from `/proc/PID/stat` (its fourth field,
/// after the command name in parentheses, which may itself hold spaces).
fn parent_of(pid: u32) -> Option<u32> {
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
    fn this_process_has_its_parent_first() {
        let found = ancestors();
        assert_eq!(found.first(), Some(&std::os::unix::process::parent_id()));
    }
}
