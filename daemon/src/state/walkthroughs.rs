//! The walkthroughs half of the state owner: each walkthrough's current
//! revision by id (a new revision visible only once durable), and the
//! clicks of their actions as messages to the presenting agent (or the one
//! a person sent a click on to), indexed by that agent like a thread's
//! deliveries and moved on as it takes and reads them.

use std::collections::BTreeSet;
use std::path::PathBuf;

use tokio::sync::oneshot;

use super::durable::Effect;
use super::{ClickRefused, CommitError, Payload, State};
use crate::clock::now_rfc3339;
use crate::store::Write;
use crate::walkthrough::{Click, ClickState, Resolved, Walkthrough};

impl State {
    /// The newest version of a walkthrough: waiting for the disk, or in memory.
    pub(super) fn latest_walkthrough(&self, id: &str) -> Option<&Walkthrough> {
        self.staged_walkthroughs.get(id).or_else(|| self.walkthroughs.get(id))
    }

    /// The newest walkthrough of `workspace` titled `title`, to build the
    /// next revision on.
    pub(super) fn walkthrough_titled(&self, workspace: &std::path::Path, title: &str) -> Option<Walkthrough> {
        let found = self.walkthroughs.values().chain(self.staged_walkthroughs.values());
        let mut same: Vec<&Walkthrough> = found.filter(|w| w.workspace == workspace && w.title == title).collect();
        same.sort_by_key(|w| w.revision);
        same.last().map(|w| self.latest_walkthrough(&w.id).cloned().unwrap_or_else(|| (*w).clone()))
    }

    /// Stores a new revision if the newest stored one is still the one
    /// before it; it is kept, pushed and answered once durable.
    pub(super) fn commit_walkthrough(
        &mut self,
        mut walkthrough: Walkthrough,
        reply: oneshot::Sender<Result<Walkthrough, CommitError>>,
    ) {
        let newest = self.latest_walkthrough(&walkthrough.id).map_or(0, |w| w.revision);
        if walkthrough.revision != newest + 1 {
            let _ = reply.send(Err(CommitError::Raced));
            return;
        }
        walkthrough.updated_at = now_rfc3339();
        self.staged_walkthroughs.insert(walkthrough.id.clone(), walkthrough.clone());
        self.stage(
            Write::Walkthrough(Box::new(walkthrough.clone())),
            Effect::Walkthrough { walkthrough: Box::new(walkthrough), reply },
        );
    }

    /// Walkthroughs whose workspace lies in one of `folders` or holds one
    /// (all when `None`), newest first.
    pub(super) fn walkthroughs_in(&self, folders: Option<&[PathBuf]>) -> Vec<Walkthrough> {
        let concerned = |w: &Walkthrough| {
            folders.is_none_or(|folders| {
                folders
                    .iter()
                    .any(|f| crate::workspace::holds(f, &w.workspace) || crate::workspace::holds(&w.workspace, f))
            })
        };
        let mut found: Vec<Walkthrough> = self.walkthroughs.values().filter(|w| concerned(w)).cloned().collect();
        found.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
        found
    }

    /// A person clicks action `block_index` of walkthrough `id`: the click
    /// waits for the presenting agent once durable.
    pub(super) fn click(
        &mut self,
        id: &str,
        block_index: usize,
        click: Click,
        reply: oneshot::Sender<Result<Walkthrough, ClickRefused>>,
    ) {
        let Some(mut walkthrough) = self.latest_walkthrough(id).cloned() else {
            let _ = reply.send(Err(ClickRefused::NotFound(id.to_owned())));
            return;
        };
        let count = walkthrough.blocks.len();
        let mut click = click;
        click.agent.get_or_insert_with(|| walkthrough.presented_by.clone());
        let refusal = match walkthrough.blocks.iter_mut().find(|b| b.index() == block_index) {
            Some(Resolved::Action { problem: Some(problem), .. }) => {
                Some(format!("block {block_index} cannot be clicked: {problem}"))
            }
            Some(Resolved::Action { clicks, .. }) => {
                clicks.push(click);
                None
            }
            Some(_) => Some(format!(
                "block {block_index} of walkthrough {id} is not an action: give the index of an action block"
            )),
            None => Some(format!("walkthrough {id} has no block {block_index}: it has {count} blocks, counted from 0")),
        };
        if let Some(refusal) = refusal {
            let _ = reply.send(Err(ClickRefused::Invalid(refusal)));
            return;
        }
        walkthrough.updated_at = now_rfc3339();
        self.staged_walkthroughs.insert(walkthrough.id.clone(), walkthrough.clone());
        self.stage(
            Write::Walkthrough(Box::new(walkthrough.clone())),
            Effect::Click { walkthrough: Box::new(walkthrough), reply },
        );
    }

    /// Sends click `click_id` of walkthrough `id` (its newest waiting click
    /// when `None`) on to `agent`, waiting for it once durable.
    pub(super) fn resend_click(
        &mut self,
        id: &str,
        click_id: Option<&str>,
        agent: &str,
        reply: oneshot::Sender<Result<(Walkthrough, String), ClickRefused>>,
    ) {
        let Some(mut walkthrough) = self.latest_walkthrough(id).cloned() else {
            let _ = reply.send(Err(ClickRefused::NotFound(id.to_owned())));
            return;
        };
        let at = now_rfc3339();
        let click_id = match walkthrough.send_click_to(click_id, agent, &at) {
            Ok(click_id) => click_id,
            Err(why) => {
                let _ = reply.send(Err(ClickRefused::Invalid(why)));
                return;
            }
        };
        walkthrough.updated_at = at;
        self.staged_walkthroughs.insert(walkthrough.id.clone(), walkthrough.clone());
        self.stage(
            Write::Walkthrough(Box::new(walkthrough.clone())),
            Effect::Resent { walkthrough: Box::new(walkthrough), click_id, reply },
        );
    }

    /// Makes a durable revision (or click) visible: kept, indexed, pushed.
    pub(super) fn settle_walkthrough(&mut self, walkthrough: &Walkthrough) {
        self.walkthroughs.insert(walkthrough.id.clone(), walkthrough.clone());
        self.note_clicks(walkthrough);
        self.publish(walkthrough.workspace.clone(), Payload::Walkthrough(Box::new(walkthrough.clone())));
    }

    /// Keeps the index of waiting clicks true to `walkthrough` (each under
    /// the agent it waits for), and tells the agents whose count changed.
    pub(super) fn note_clicks(&mut self, walkthrough: &Walkthrough) {
        let waited_for = walkthrough.agents_waited_for();
        let mut touched = Vec::new();
        for (agent, ids) in &mut self.agents.waiting_clicks {
            if !waited_for.contains(agent) && ids.remove(&walkthrough.id) {
                touched.push(agent.clone());
            }
        }
        for agent in waited_for {
            if self.agents.waiting_clicks.entry(agent.clone()).or_default().insert(walkthrough.id.clone()) {
                touched.push(agent);
            }
        }
        self.agents.waiting_clicks.retain(|_, ids| !ids.is_empty());
        if touched.is_empty() {
            return;
        }
        for agent in &touched {
            self.signal_agent(agent);
        }
        if self.agents_at_work(None).iter().any(|a| touched.contains(&a.name)) {
            self.publish_agents();
        }
    }

    /// Moves `agent`'s clicks in walkthroughs `ids` from `from` on to `to`
    /// (clicks for another agent stay as they stand);
    /// answers each walkthrough that changed, as it now stands, with the
    /// clicks that moved. Written like a reading mark: visible at once, on
    /// disk with the next batch.
    pub(super) fn advance_clicks(
        &mut self,
        agent: &str,
        ids: &BTreeSet<String>,
        from: ClickState,
        to: ClickState,
        via: Option<&str>,
    ) -> Vec<(Walkthrough, Vec<String>)> {
        let at = now_rfc3339();
        let mut changed = Vec::new();
        for id in ids {
            let Some(walkthrough) = self.walkthroughs.get_mut(id) else { continue };
            let moved = walkthrough.advance_clicks(agent, from, to, via, &at);
            if moved.is_empty() {
                continue;
            }
            let walkthrough = walkthrough.clone();
            let write = match self.staged_walkthroughs.get_mut(id) {
                Some(waiting) => {
                    waiting.advance_clicks(agent, from, to, via, &at);
                    waiting.clone()
                }
                None => walkthrough.clone(),
            };
            self.stage(Write::Walkthrough(Box::new(write)), Effect::Derived);
            self.note_clicks(&walkthrough);
            self.publish(walkthrough.workspace.clone(), Payload::Walkthrough(Box::new(walkthrough.clone())));
            changed.push((walkthrough, moved));
        }
        changed
    }

    /// Hands over every click waiting for `agent`, marked delivered `via`:
    /// each with its walkthrough as it now stands and the click's id.
    pub(super) fn take_clicks(&mut self, agent: &str, via: &str) -> Vec<(Walkthrough, String)> {
        let ids = self.agents.waiting_clicks.get(agent).cloned().unwrap_or_default();
        let moved = self.advance_clicks(agent, &ids, ClickState::Waiting, ClickState::Delivered, Some(via));
        moved.into_iter().flat_map(|(w, clicks)| clicks.into_iter().map(move |c| (w.clone(), c))).collect()
    }

    /// `agent` made a Parley call: the clicks delivered to it before are read.
    pub(super) fn clicks_read(&mut self, agent: &str) {
        let delivered: BTreeSet<String> = self
            .walkthroughs
            .values()
            .filter(|w| w.clicks().any(|(_, _, _, c)| c.state == ClickState::Delivered && w.agent_of(c) == agent))
            .map(|w| w.id.clone())
            .collect();
        if !delivered.is_empty() {
            self.advance_clicks(agent, &delivered, ClickState::Delivered, ClickState::Read, None);
        }
    }
}
