//! The agents half of the state owner: the agents at work (each an MCP
//! host's `parley-mcp` connection), their short names (remembered in the
//! store under the host's and the shim's process ids, so a shim that
//! reconnects after a daemon restart keeps its own), and the person's
//! messages waiting for each, indexed by agent from the threads' deliveries.
//!
//! A live agent is told how many messages wait for it on a `watch` channel
//! its MCP connection holds, so a tool call looks at a number instead of
//! asking the owner, and a waiting call or a push channel wakes at once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parley_protocol::jsonrpc::{Notification, to_line};
use parley_protocol::methods::{self as wire, NotificationMethod};
use tokio::sync::watch;

use super::durable::Effect;
use super::{Outbound, Payload, State};
use crate::clock::now_rfc3339;
use crate::feedback::{DeliveryState, Thread};
use crate::store::Write;
use crate::{views, workspace};

/// How many names of agents that left are kept for their return.
const LEFT_KEPT: usize = 1024;

/// An agent's connection as its MCP server registers it.
#[derive(Debug)]
pub struct NewAgent {
    pub connection_id: u64,
    /// The host's process id (the shim's parent) and the shim's own.
    pub host_pid: Option<u32>,
    pub shim_pid: Option<u32>,
    /// The host's ancestors, nearest first (filled in when it registers).
    pub host_ancestors: Vec<u32>,
    /// The editor window whose terminal it runs in (`PARLEY_EDITOR_ID`).
    pub editor_id: Option<String>,
    /// The name a person gave it (`PARLEY_AGENT_NAME`).
    pub given_name: Option<String>,
    pub workspace: Option<PathBuf>,
    /// Sent by the state owner: how many messages wait for the agent;
    /// received by the agent's MCP connection.
    pub waiting: watch::Sender<usize>,
}

/// What the host says of itself, once it has (its `initialize`, or a
/// request's `_meta` on the 2026-07-28 wire).
#[derive(Debug, Clone)]
pub struct HostFacts {
    pub name: String,
    pub version: String,
    /// The host takes `notifications/claude/channel`.
    pub channel: bool,
    /// The agent's workspace as the connection knows it now (roots may
    /// have changed it since hello).
    pub workspace: Option<PathBuf>,
}

#[derive(Debug)]
struct Live {
    new: NewAgent,
    /// Given once the host says who it is; until then it is not listed.
    name: Option<String>,
    host: Option<HostFacts>,
    since: String,
    last_call: Option<(String, String)>,
    waiting_in: Option<String>,
}

/// The agents at work, the names given, and the messages waiting.
#[derive(Debug, Default)]
pub(super) struct Registry {
    /// By connection id.
    live: BTreeMap<u64, Live>,
    /// Names given, by [`key_of`] the agent: those of agents at work, and
    /// of agents that were at work when the daemon last stopped.
    remembered: HashMap<String, String>,
    /// Agent name → ids of the threads holding a message waiting for it.
    waiting: HashMap<String, BTreeSet<String>>,
    /// Agent name → ids of its walkthroughs with a click waiting for it.
    pub(super) waiting_clicks: HashMap<String, BTreeSet<String>>,
    /// Names of agents that left while this daemon ran, by key: a shim
    /// whose connection broke and came back gets its name again (and the
    /// messages waiting for it). Not stored, and not reserved for it.
    left: HashMap<String, String>,
}

impl Registry {
    pub(super) fn remember(names: Vec<(String, String)>) -> Registry {
        Registry { remembered: names.into_iter().collect(), ..Registry::default() }
    }
}

/// The key that finds an agent again when its shim reconnects: the host's
/// and the shim's process ids, which a reconnect keeps.
fn key_of(agent: &NewAgent) -> Option<String> {
    Some(format!("{}:{}", agent.host_pid?, agent.shim_pid?))
}

/// The word an agent's name starts with: the first word of its host's
/// client name, lowercase (`claude-code` → `claude`, `Codex CLI` → `codex`).
pub fn name_word(client: &str) -> String {
    let word: String = client
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .chars()
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    if word.is_empty() || word.chars().all(|c| c.is_ascii_digit()) { "agent".into() } else { word }
}

/// A name a person gave, kept to what a person can type in a shell: ASCII
/// letters, digits, `-`, `_` and `.`, at most 32; `None` when nothing is left.
pub fn clean_given_name(given: &str) -> Option<String> {
    let name: String =
        given.trim().chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).take(32).collect();
    (!name.is_empty()).then_some(name)
}

impl State {
    pub(super) fn agent_connected(&mut self, new: NewAgent) {
        let id = new.connection_id;
        let live = Live { new, name: None, host: None, since: now_rfc3339(), last_call: None, waiting_in: None };
        self.agents.live.insert(id, live);
    }

    /// The host of connection `id` said who it is: the agent gets its name
    /// (the remembered one, the given one, or its host's word and the next
    /// free number) and is listed. Answers its name.
    pub(super) fn agent_host(&mut self, id: u64, host: HostFacts) -> Option<String> {
        let taken: BTreeSet<String> = self
            .agents
            .live
            .iter()
            .filter(|(other, _)| **other != id)
            .filter_map(|(_, live)| live.name.clone())
            .collect();
        let live = self.agents.live.get_mut(&id)?;
        let changed = live.host.as_ref().is_none_or(|h| h.channel != host.channel || h.workspace != host.workspace);
        live.host = Some(host);
        if let Some(name) = &live.name {
            let name = name.clone();
            if changed {
                self.publish_agents();
            }
            return Some(name);
        }
        let key = key_of(&live.new);
        let given = live.new.given_name.clone();
        let word = name_word(&live.host.as_ref().map(|h| h.name.clone()).unwrap_or_default());
        let remembered = key
            .as_ref()
            .and_then(|k| self.agents.remembered.get(k).or_else(|| self.agents.left.get(k)))
            .filter(|n| !taken.contains(*n));
        let name = match (remembered, given) {
            (Some(name), _) => name.clone(),
            (None, Some(given)) => free_name(&given, true, &taken, &self.agents),
            (None, None) => free_name(&word, false, &taken, &self.agents),
        };
        if let Some(live) = self.agents.live.get_mut(&id) {
            live.name = Some(name.clone());
        }
        if let Some(key) = key
            && self.agents.remembered.get(&key) != Some(&name)
        {
            self.agents.remembered.insert(key.clone(), name.clone());
            self.stage(Write::AgentName { key, name: Some(name.clone()) }, Effect::Derived);
        }
        self.signal_agent(&name);
        self.publish_agents();
        Some(name)
    }

    /// Agent `id` works in `workspace` (its host's roots said so).
    pub(super) fn agent_workspace(&mut self, id: u64, workspace: PathBuf) {
        let Some(live) = self.agents.live.get_mut(&id) else { return };
        live.new.workspace = Some(workspace.clone());
        if let Some(host) = &mut live.host {
            host.workspace = Some(workspace);
        }
        if live.name.is_some() {
            self.publish_agents();
        }
    }

    /// Agent `id` started a Parley tool call (`waiting`: one that waits, such
    /// as `await_review`), or ended the one it was waiting in.
    pub(super) fn agent_call(&mut self, id: u64, tool: Option<String>, waiting: bool) {
        let tool_started = tool.is_some();
        let Some(live) = self.agents.live.get_mut(&id) else { return };
        let was = live.waiting_in.clone();
        match tool {
            Some(tool) => {
                live.last_call = Some((tool.clone(), now_rfc3339()));
                live.waiting_in = waiting.then_some(tool);
            }
            None => live.waiting_in = None,
        }
        let name = live.name.clone();
        if live.waiting_in != was && name.is_some() {
            self.publish_agents();
        }
        // A call made after a click was delivered: the agent took it in.
        if let Some(name) = name
            && tool_started
        {
            self.clicks_read(&name);
        }
    }

    /// Agent `id`'s connection ended. Unless the daemon is stopping (its
    /// shim will come back to the next daemon), its name is forgotten.
    pub(super) fn agent_left(&mut self, id: u64, daemon_stopping: bool) {
        let Some(live) = self.agents.live.remove(&id) else { return };
        if !daemon_stopping && let Some(key) = key_of(&live.new) {
            self.agents.remembered.remove(&key);
            self.stage(Write::AgentName { key: key.clone(), name: None }, Effect::Derived);
            if self.agents.left.len() >= LEFT_KEPT {
                self.agents.left.clear();
            }
            if let Some(name) = &live.name {
                self.agents.left.insert(key, name.clone());
            }
        }
        if live.name.is_some() {
            self.publish_agents();
        }
    }

    /// The agents at work whose workspace holds `folder` or lies inside it
    /// (all when `None`), by name.
    pub(super) fn agents_at_work(&self, folder: Option<&Path>) -> Vec<wire::AgentInfo> {
        let mut agents: Vec<wire::AgentInfo> = self
            .agents
            .live
            .values()
            .filter(|live| {
                let workspace = live.host.as_ref().and_then(|h| h.workspace.as_ref()).or(live.new.workspace.as_ref());
                folder.is_none_or(|f| workspace.is_some_and(|w| workspace::holds(w, f) || workspace::holds(f, w)))
            })
            .filter_map(|live| self.agent_info(live))
            .collect();
        agents.sort_by(|a, b| a.name.cmp(&b.name));
        agents
    }

    /// The agents not at work that messages still wait for, by name.
    pub(super) fn absent_agents(&self) -> Vec<wire::AbsentAgent> {
        let mut absent: Vec<wire::AbsentAgent> = self
            .agents
            .waiting
            .iter()
            .filter(|(name, _)| !self.agents.live.values().any(|l| l.name.as_ref() == Some(*name)))
            .map(|(name, ids)| wire::AbsentAgent { name: name.clone(), threads: ids.iter().cloned().collect() })
            .collect();
        absent.sort_by(|a, b| a.name.cmp(&b.name));
        absent
    }

    fn agent_info(&self, live: &Live) -> Option<wire::AgentInfo> {
        let name = live.name.clone()?;
        let host = live.host.as_ref()?;
        Some(wire::AgentInfo {
            messages_waiting: self.messages_waiting(&name),
            name,
            host: host.name.clone(),
            host_version: host.version.clone(),
            host_pid: live.new.host_pid,
            shim_pid: live.new.shim_pid,
            host_ancestors: live.new.host_ancestors.clone(),
            editor_id: live.new.editor_id.clone(),
            workspace: host.workspace.clone().or_else(|| live.new.workspace.clone()),
            since: live.since.clone(),
            last_call: live.last_call.as_ref().map(|(tool, _)| tool.clone()),
            last_call_at: live.last_call.as_ref().map(|(_, at)| at.clone()),
            waiting_in: live.waiting_in.clone(),
            channel: host.channel,
        })
    }

    /// Keeps the index of waiting messages true to `thread`'s deliveries,
    /// and tells the agents whose count changed.
    pub(super) fn note_deliveries(&mut self, thread: &Thread) {
        let mut touched: Vec<String> = Vec::new();
        for (agent, ids) in &mut self.agents.waiting {
            if ids.remove(&thread.id) {
                touched.push(agent.clone());
            }
        }
        if !thread.resolved {
            for delivery in thread.standing.deliveries.iter().filter(|d| d.state == DeliveryState::Waiting) {
                self.agents.waiting.entry(delivery.agent.clone()).or_default().insert(thread.id.clone());
                touched.push(delivery.agent.clone());
            }
        }
        self.agents.waiting.retain(|_, ids| !ids.is_empty());
        touched.sort();
        touched.dedup();
        for agent in &touched {
            self.signal_agent(agent);
        }
        if !touched.is_empty()
            && self.agents.live.values().any(|l| l.name.as_ref().is_some_and(|n| touched.contains(n)))
        {
            self.publish_agents();
        }
    }

    /// How many threads and walkthroughs hold messages waiting for `name`.
    fn messages_waiting(&self, name: &str) -> usize {
        self.agents.waiting.get(name).map_or(0, BTreeSet::len)
            + self.agents.waiting_clicks.get(name).map_or(0, BTreeSet::len)
    }

    /// Tells the live agent named `name` how many messages wait for it.
    pub(super) fn signal_agent(&self, name: &str) {
        let count = self.messages_waiting(name);
        for live in self.agents.live.values().filter(|l| l.name.as_deref() == Some(name)) {
            live.new.waiting.send_if_modified(|held| std::mem::replace(held, count) != count);
        }
    }

    /// Hands over every message waiting for `agent`: each is marked
    /// delivered `via`, and answered with its thread (as it now stands) and
    /// its comment's id, oldest first.
    pub(super) fn take_messages(&mut self, agent: &str, via: &str) -> Vec<(Thread, String)> {
        let ids: Vec<String> =
            self.agents.waiting.get(agent).map(|ids| ids.iter().cloned().collect()).unwrap_or_default();
        let at = now_rfc3339();
        let mut taken = Vec::new();
        for id in ids {
            let Some(thread) = self.thread(&id) else { continue };
            let comments: Vec<String> = thread
                .standing
                .deliveries
                .iter()
                .filter(|d| d.agent == agent && d.state == DeliveryState::Waiting)
                .map(|d| d.comment_id.clone())
                .collect();
            if let Some(thread) = self.advance_deliveries(&id, agent, DeliveryState::Delivered, Some(via), &at) {
                taken.extend(comments.into_iter().map(|c| (thread.clone(), c)));
            }
        }
        taken.sort_by(|a, b| a.0.updated_at.cmp(&b.0.updated_at));
        taken
    }

    /// Hands over the messages of thread `id` waiting for `agent`, marked
    /// delivered `via`: each with the thread as it now stands and its
    /// comment's id, oldest first. Empty when none waits.
    pub(super) fn take_thread_messages(&mut self, agent: &str, id: &str, via: &str) -> Vec<(Thread, String)> {
        let Some(thread) = self.thread(id) else { return Vec::new() };
        let comments: Vec<String> = thread
            .standing
            .deliveries
            .iter()
            .filter(|d| d.agent == agent && d.state == DeliveryState::Waiting)
            .map(|d| d.comment_id.clone())
            .collect();
        match self.advance_deliveries(id, agent, DeliveryState::Delivered, Some(via), &now_rfc3339()) {
            Some(thread) => comments.into_iter().map(|c| (thread.clone(), c)).collect(),
            None => Vec::new(),
        }
    }

    /// Moves `agent`'s messages in thread `id` on to `state`; answers the
    /// thread when any changed. Written like a reading mark: visible at once,
    /// on disk with the next batch.
    pub(super) fn advance_deliveries(
        &mut self,
        id: &str,
        agent: &str,
        state: DeliveryState,
        via: Option<&str>,
        at: &str,
    ) -> Option<Thread> {
        let thread = self.thread_mut(id)?;
        if !thread.standing.advance(agent, state, via, at) {
            return None;
        }
        let thread = thread.clone();
        // An edit waiting for the disk is written after this: it must carry
        // the change too, or its write would drop it.
        let write = match self.staged_threads.get_mut(id) {
            Some(waiting) => {
                waiting.standing.advance(agent, state, via, at);
                waiting.clone()
            }
            None => thread.clone(),
        };
        self.stage(Write::Thread(Box::new(write)), Effect::Derived);
        self.note_deliveries(&thread);
        self.publish(views::file_of(&thread), Payload::Thread { change: "delivery", thread: Box::new(thread.clone()) });
        Some(thread)
    }

    /// Sends the agents at work to every client that has listed them. A
    /// client whose queue is full misses it and is resynced like any slow
    /// client (the next event it cannot take drops it).
    pub(super) fn publish_agents(&mut self) {
        let params = wire::AgentsChanged { agents: self.agents_at_work(None) };
        let params = serde_json::to_value(params).expect("wire types always serialize");
        let line = Arc::new(to_line(&Notification::new(wire::AgentsChangedNotification::NAME, params)));
        for client in self.clients.values().filter(|c| c.hears_agents) {
            if let Some(outbox) = &client.outbox {
                let _ = outbox.try_send(Outbound::Line(line.clone()));
            }
        }
    }
}

/// The first free name: `word` itself when `bare_first` (a given name),
/// then `word-1`, `word-2`, … A name is taken by a live agent, by an agent
/// expected back after a restart, or by messages (or clicks) still waiting
/// for it.
fn free_name(word: &str, bare_first: bool, taken: &BTreeSet<String>, registry: &Registry) -> String {
    let free = |name: &str| {
        !taken.contains(name)
            && !registry.remembered.values().any(|n| n == name)
            && !registry.waiting.contains_key(name)
            && !registry.waiting_clicks.contains_key(name)
    };
    if bare_first && free(word) {
        return word.to_owned();
    }
    let first = if bare_first { 2 } else { 1 };
    (first..).map(|n| format!("{word}-{n}")).find(|name| free(name)).expect("some number is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_name_becomes_a_short_word_a_person_can_type() {
        for (client, word) in [
            ("claude-code", "claude"),
            ("Codex CLI", "codex"),
            ("codex-mcp-client", "codex"),
            ("Visual Studio Code", "visual"),
            ("", "agent"),
            ("---", "agent"),
            ("123", "agent"),
            ("gemini_cli", "gemini"),
        ] {
            assert_eq!(name_word(client), word, "{client:?}");
        }
        assert_eq!(clean_given_name("  my agent! "), Some("myagent".into()));
        assert_eq!(clean_given_name(" ?? "), None);
    }

    #[test]
    fn names_skip_those_taken_expected_back_or_with_messages_or_clicks_waiting() {
        let mut registry = Registry::remember(vec![("1:2".into(), "claude-1".into())]);
        registry.waiting.insert("claude-2".into(), ["t".to_string()].into());
        registry.waiting_clicks.insert("claude-4".into(), ["w".to_string()].into());
        let taken: BTreeSet<String> = ["claude-3".to_string()].into();
        assert_eq!(free_name("claude", false, &taken, &registry), "claude-5");
        assert_eq!(free_name("reviewer", true, &taken, &registry), "reviewer");
        let taken: BTreeSet<String> = ["reviewer".to_string()].into();
        assert_eq!(free_name("reviewer", true, &taken, &registry), "reviewer-2");
    }
}
