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
    let Some(parent) = crate::ancestry::parent() else {
        return Vec::new();
    };
    let mut found = vec![parent];
    found.extend(crate::ancestry::of(parent).into_iter().take(crate::ancestry::MAX_ANCESTORS - 1));
    found
}

#[cfg(test)]
#[cfg(unix)] // the parent pid as the standard library gives it on Unix
mod tests {
    use super::*;

    #[test]
    fn this_process_has_its_parent_first() {
        let found = ancestors();
        assert_eq!(found.first(), Some(&std::os::unix::process::parent_id()));
    }
}
