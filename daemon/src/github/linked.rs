//! A workspace's link to its pull request as the daemon keeps it: which
//! pull request, how it was found, what the last sync brought and what it
//! could not place, the conversation as last read. Never a token.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::link::PullRequestRef;

/// A workspace linked to a pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedPullRequest {
    pub workspace: PathBuf,
    pub pull_request: PullRequestRef,
    /// The pull request's page.
    pub url: String,
    /// The API root it is read from (`PARLEY_GITHUB_API` when it was linked).
    pub api_root: String,
    /// `gh` (found with `gh pr view`) or `given` (`parley pr link OWNER/REPO#N`).
    pub found_by: String,
    /// RFC 3339.
    pub linked_at: String,
    /// `OPEN`, `CLOSED` or `MERGED`, as last read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The head commit as last read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_oid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_pull: Option<PullSummary>,
    /// Why the last sync failed, until one succeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The pull request's conversation, as last read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversation: Vec<ConversationComment>,
    /// Review threads the last pull could not put on a file here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unplaced: Vec<UnplacedThread>,
    /// Review threads the last pull placed whose text is gone from the file
    /// here (after a force-push, say): each on its best line, outdated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placed_by_line: Vec<UnplacedThread>,
    /// Threads resolved on one side and reopened on the other since the
    /// sync before the last: what was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// Threads an agent resolved here that the last push left open on
    /// GitHub for their author.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_open: Vec<LeftOpenThread>,
    /// What the last push sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_push: Option<PushSummary>,
    /// This person's pending review on GitHub as Parley left it: threads
    /// added to it take their replies in it until it is submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_review: Option<PendingReview>,
    /// Review rounds pushed as reviews: each goes once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pushed_rounds: Vec<PushedRound>,
}

/// A thread an agent resolved here, left open on GitHub.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOpenThread {
    pub path: String,
    pub url: String,
    pub agent: String,
}

/// What a push sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSummary {
    /// RFC 3339.
    pub at: String,
    pub threads: usize,
    pub replies: usize,
    pub resolutions: usize,
    /// Threads and replies left unsent, each with its reason.
    pub not_sent: usize,
    /// `pending` or `submitted`, when a review was touched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// The event a submitted review went with (`comment`, `approve`,
    /// `request-changes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The review round pushed, as `SESSION round N`, when it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<String>,
}

/// A pending review Parley added threads to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingReview {
    pub id: String,
    /// GitHub's ids of the threads added to it.
    pub threads: Vec<String>,
}

/// A review round pushed as a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushedRound {
    /// The review session's id.
    pub review_id: String,
    pub round: u32,
    /// RFC 3339.
    pub at: String,
    pub event: String,
    pub url: String,
}

/// What a pull brought.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullSummary {
    /// RFC 3339.
    pub at: String,
    pub new_threads: usize,
    pub replies: usize,
    pub resolved: usize,
    pub reopened: usize,
    pub outdated: usize,
    /// Threads deleted on GitHub since (kept here, marked so).
    pub gone: usize,
    /// Threads a push made here sent while its answer was lost, found on
    /// GitHub and tied to theirs rather than pulled in twice.
    #[serde(default)]
    pub tied: usize,
}

/// A comment of the pull request's conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationComment {
    pub author: String,
    pub body: String,
    pub created_at: String,
    pub url: String,
}

/// A review thread that could not become a Parley thread, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnplacedThread {
    pub path: String,
    pub line: Option<u32>,
    pub url: String,
    pub reason: String,
}

/// The stored shape, versioned.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "v")]
pub enum LinkedRecord {
    #[serde(rename = "1")]
    V1(LinkedPullRequest),
}
