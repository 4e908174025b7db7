//! A walkthrough as the daemon keeps it: the document, its blocks as they
//! were resolved (comments placed as threads, or why not), its references
//! checked, and each action's clicks with where their message stands.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A presented walkthrough; `id` stays across its revisions (presenting
/// again under the same title on the same workspace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Walkthrough {
    pub id: String,
    pub workspace: PathBuf,
    pub title: String,
    pub base: PathBuf,
    pub content: String,
    pub revision: u64,
    pub updated_at: String,
    /// The presenting agent's short name.
    pub presented_by: String,
    pub head: Option<String>,
    pub parts: Vec<Part>,
    pub blocks: Vec<Resolved>,
    pub references: Vec<Reference>,
}

/// A piece of the document, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Part {
    Markdown(String),
    Block(usize),
}

/// A ``[`file:line`][]`` reference of the markdown, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub text: String,
    pub path: String,
    pub line: Option<u32>,
    pub end_line: Option<u32>,
    pub resolved: Option<PathBuf>,
    pub problem: Option<String>,
}

/// A block after resolving it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Resolved {
    Mermaid {
        index: usize,
        source: String,
    },
    Comment {
        index: usize,
        location: String,
        icon: Option<String>,
        body: String,
        places: Vec<Place>,
        problem: Option<String>,
        candidates: Vec<Place>,
    },
    GitDiff {
        index: usize,
        range: String,
        exclude_staged: bool,
        exclude_unstaged: bool,
        problem: Option<String>,
    },
    Action {
        index: usize,
        button: String,
        message: String,
        clicks: Vec<Click>,
        problem: Option<String>,
    },
}

impl Resolved {
    pub fn index(&self) -> usize {
        match self {
            Resolved::Mermaid { index, .. }
            | Resolved::Comment { index, .. }
            | Resolved::GitDiff { index, .. }
            | Resolved::Action { index, .. } => *index,
        }
    }
}

/// Lines of a file in the workspace: relative, `/`-separated, 0-based
/// inclusive lines, and the thread a comment became there.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Place {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub thread_id: Option<String>,
}

/// A person's click of an action: its message to the presenting agent,
/// or to the agent it was sent on to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Click {
    pub id: String,
    pub author: String,
    pub clicked_at: String,
    pub state: ClickState,
    pub via: Option<String>,
    pub updated_at: String,
    /// The agent the message is for; the presenting agent when absent
    /// (clicks stored before a click could be sent on).
    #[serde(default)]
    pub agent: Option<String>,
}

/// Where a click's message stands; each follows the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClickState {
    Waiting,
    Delivered,
    Read,
}

impl ClickState {
    pub fn name(self) -> &'static str {
        match self {
            ClickState::Waiting => "waiting",
            ClickState::Delivered => "delivered",
            ClickState::Read => "read",
        }
    }
}

impl Walkthrough {
    /// The clicks of its actions, with the action's index, button and message.
    pub fn clicks(&self) -> impl Iterator<Item = (usize, &str, &str, &Click)> {
        self.blocks.iter().flat_map(|block| match block {
            Resolved::Action { index, button, message, clicks, .. } => {
                clicks.iter().map(|c| (*index, button.as_str(), message.as_str(), c)).collect::<Vec<_>>()
            }
            _ => Vec::new(),
        })
    }

    /// The agent `click`'s message is for.
    pub fn agent_of<'a>(&'a self, click: &'a Click) -> &'a str {
        click.agent.as_deref().unwrap_or(&self.presented_by)
    }

    /// Moves `agent`'s clicks in state `from` on to `to` (noting `via` for
    /// those delivered); answers the ids of those that moved.
    pub fn advance_clicks(
        &mut self,
        agent: &str,
        from: ClickState,
        to: ClickState,
        via: Option<&str>,
        at: &str,
    ) -> Vec<String> {
        let mut moved = Vec::new();
        let presented_by = self.presented_by.clone();
        for block in &mut self.blocks {
            if let Resolved::Action { clicks, .. } = block {
                let theirs = |c: &&mut Click| c.state == from && c.agent.as_deref().unwrap_or(&presented_by) == agent;
                for click in clicks.iter_mut().filter(theirs) {
                    click.state = to;
                    if to == ClickState::Delivered {
                        click.via = via.map(str::to_owned);
                    }
                    click.updated_at = at.to_owned();
                    moved.push(click.id.clone());
                }
            }
        }
        moved
    }

    /// How many clicks wait to reach their agent.
    pub fn clicks_waiting(&self) -> usize {
        self.clicks().filter(|(_, _, _, c)| c.state == ClickState::Waiting).count()
    }

    /// The agents clicks wait for, each once, by name.
    pub fn agents_waited_for(&self) -> std::collections::BTreeSet<String> {
        self.clicks()
            .filter(|(_, _, _, c)| c.state == ClickState::Waiting)
            .map(|(_, _, _, c)| self.agent_of(c).to_owned())
            .collect()
    }

    /// Sends click `click_id` (the newest waiting one when `None`) on to
    /// `agent`: it waits for that agent, from now `at`. Answers the click's
    /// id, or why none could be sent.
    pub fn send_click_to(&mut self, click_id: Option<&str>, agent: &str, at: &str) -> Result<String, String> {
        let (id, title) = (self.id.clone(), self.title.clone());
        let mut clicks: Vec<&mut Click> = self
            .blocks
            .iter_mut()
            .flat_map(|b| match b {
                Resolved::Action { clicks, .. } => clicks.iter_mut().collect(),
                _ => Vec::new(),
            })
            .collect();
        let chosen = match click_id {
            Some(wanted) => {
                let wanted = wanted.trim();
                let mut found: Vec<&mut &mut Click> =
                    clicks.iter_mut().filter(|c| wanted.len() >= 4 && c.id.starts_with(wanted)).collect();
                if let Some(exact) = found.iter().position(|c| c.id == wanted) {
                    found.swap(0, exact);
                    found.truncate(1);
                }
                match found.len() {
                    0 => {
                        return Err(format!(
                            "walkthrough {id} has no click {wanted}: give a click's id (at least 4 characters) as \
                             `parley walkthrough show {id} --json` lists them, or leave it out for the newest waiting"
                        ));
                    }
                    1 => found.remove(0),
                    n => {
                        return Err(format!(
                            "{n} clicks of walkthrough {id} begin with {wanted}: give more of the click's id"
                        ));
                    }
                }
            }
            None => clicks
                .iter_mut()
                .filter(|c| c.state == ClickState::Waiting)
                .max_by(|a, b| a.clicked_at.cmp(&b.clicked_at))
                .ok_or_else(|| {
                    format!(
                        "no click of walkthrough {id} ({title}) waits for an agent: every one was delivered, so \
                         there is nothing to send on (name one with its click id to send it again)"
                    )
                })?,
        };
        chosen.agent = Some(agent.to_owned());
        chosen.state = ClickState::Waiting;
        chosen.via = None;
        chosen.updated_at = at.to_owned();
        Ok(chosen.id.clone())
    }

    /// How many comments were placed, and how many were not.
    pub fn placed_and_unplaced(&self) -> (usize, usize) {
        let comments = self.blocks.iter().filter_map(|b| match b {
            Resolved::Comment { places, .. } => Some(places.is_empty()),
            _ => None,
        });
        comments.fold(
            (0, 0),
            |(placed, unplaced), empty| if empty { (placed, unplaced + 1) } else { (placed + 1, unplaced) },
        )
    }
}
