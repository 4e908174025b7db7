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

/// A person's click of an action: its message to the presenting agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Click {
    pub id: String,
    pub author: String,
    pub clicked_at: String,
    pub state: ClickState,
    pub via: Option<String>,
    pub updated_at: String,
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

    /// Moves the clicks in `state_from` on to `to` (noting `via` for those
    /// delivered); answers the ids of those that moved.
    pub fn advance_clicks(&mut self, from: ClickState, to: ClickState, via: Option<&str>, at: &str) -> Vec<String> {
        let mut moved = Vec::new();
        for block in &mut self.blocks {
            if let Resolved::Action { clicks, .. } = block {
                for click in clicks.iter_mut().filter(|c| c.state == from) {
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

    /// How many clicks wait to reach the agent.
    pub fn clicks_waiting(&self) -> usize {
        self.clicks().filter(|(_, _, _, c)| c.state == ClickState::Waiting).count()
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
