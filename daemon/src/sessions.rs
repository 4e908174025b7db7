//! Review sessions as data: what an agent asked for, the rounds a reviewer
//! answered, the round waiting on a person, and how the session ended; ids
//! of the form `YYYY-MM-DD-NNN`. Pure: the pipeline runs things, the state
//! owner keeps them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::structured_review::{Assessment, StructuredReview};

/// How a session ended (seed 004's `final_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinalStatus {
    Approved,
    Abandoned,
    Merged,
}

impl FinalStatus {
    pub fn parse(name: &str) -> Option<FinalStatus> {
        match name {
            "approved" => Some(FinalStatus::Approved),
            "abandoned" => Some(FinalStatus::Abandoned),
            "merged" => Some(FinalStatus::Merged),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            FinalStatus::Approved => "approved",
            FinalStatus::Abandoned => "abandoned",
            FinalStatus::Merged => "merged",
        }
    }
}

/// What the agent asked for when the session began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRequest {
    pub summary: String,
    pub relevant_docs: Vec<String>,
    pub focus_areas: Vec<String>,
    pub scope: String,
}

/// One reviewer answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1-based.
    pub round: u32,
    /// RFC 3339.
    pub at: String,
    /// The agent's summary for this round.
    pub summary: String,
    pub focus_areas: Vec<String>,
    pub scope: String,
    pub changed_files: Vec<String>,
    pub review: StructuredReview,
    /// The reviewer's assessment made stricter by the configured thresholds.
    pub verdict: Assessment,
    pub reviewer: String,
    pub elapsed_ms: u64,
    /// The files as the round reviewed them, so that a person reviewing the
    /// next round sees what changed since: both versions for a round a
    /// person answered, the reviewed version only for a reviewer command's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileVersions>,
    /// A person's verdict as they gave it (`approve`, `request_changes` or
    /// `comment`), for a round a person answered: the assessment alone
    /// cannot tell a comment from a request for changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person_verdict: Option<String>,
}

/// A round waiting for a person's verdict. Stored with its session, so it
/// survives daemon restarts until the person submits or the agent cancels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonRound {
    /// The round this will be, 1-based.
    pub round: u32,
    /// RFC 3339.
    pub requested_at: String,
    /// The agent's summary for this round.
    pub summary: String,
    pub focus_areas: Vec<String>,
    pub scope: String,
    /// The agent (its MCP client name) or `parley` for the terminal.
    pub asked_by: String,
    pub files: Vec<FileVersions>,
    /// The diff as captured (secrets on removed and context lines
    /// redacted), for the audit trail and the terminal.
    pub diff: String,
    /// What the secret scan redacted in the diff and the files, said once
    /// the round is answered (`None` when nothing was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
    /// The person's comments, kept until the review is submitted.
    #[serde(default)]
    pub drafts: Vec<Draft>,
    /// The number the next draft's id takes.
    #[serde(default)]
    pub next_draft: u32,
}

/// One changed file of a round, both sides as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileVersions {
    /// Relative to the repository root, with `/`.
    pub path: String,
    /// Differs from `path` on renames; `None` for an added file.
    pub old_path: Option<String>,
    pub status: FileStatus,
    /// The base version; `None` when added, binary or too large.
    pub before: Option<String>,
    /// The version under review; `None` when deleted, binary or too large.
    pub after: Option<String>,
    #[serde(default)]
    pub binary: bool,
    #[serde(default)]
    pub too_large: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
}

impl FileStatus {
    pub fn name(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
            FileStatus::Renamed => "renamed",
        }
    }
}

/// Which version of a file a person's comment is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The base version: removed lines live here.
    Old,
    /// The version under review.
    New,
}

impl Side {
    pub fn parse(name: &str) -> Option<Side> {
        match name {
            "old" => Some(Side::Old),
            "new" => Some(Side::New),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Side::Old => "old",
            Side::New => "new",
        }
    }
}

/// A person's comment on a waiting round, not yet sent to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draft {
    /// `d1`, `d2`, … within the round.
    pub id: String,
    pub path: String,
    pub side: Side,
    /// Zero-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub body: String,
    /// Replacement text for the lines, when the person suggests one.
    pub suggestion: Option<String>,
    /// `critical`, `major`, `minor` or `suggestion`; by default from the verdict.
    pub severity: Option<String>,
    pub author: String,
    /// RFC 3339.
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub final_status: FinalStatus,
    pub notes: Option<String>,
    pub at: String,
}

/// A round running in the background, or failed, and not stored.
/// Kept in memory only: a daemon restart ends the run it describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pending {
    /// `running`, or `failed` with the error; in the MCP history,
    /// `awaiting_review` while a person is asked.
    pub state: String,
    /// RFC 3339: when it started, or failed.
    pub since: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    /// The repository root.
    pub workspace: PathBuf,
    pub created_at: String,
    pub updated_at: String,
    pub request: SessionRequest,
    pub rounds: Vec<Round>,
    pub completion: Option<Completion>,
    /// The round waiting for a person's verdict, stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Box<PersonRound>>,
    /// A background round in progress or failed; never stored.
    #[serde(skip)]
    pub pending: Option<Pending>,
    /// Set when the session reviews an agent's plans rather than a change
    /// in the repository (absent in stores written before plans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Box<PlanOrigin>>,
}

/// Where a plan review's plans come from, and what it keeps between them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanOrigin {
    /// The agent's host: `claude` or `codex`.
    pub host: String,
    /// The host's session id: its next plan is this session's next round.
    pub host_session: String,
    /// The plan's file name in the rounds.
    pub name: String,
    /// The folder holding the plan's copy that threads on it anchor to
    /// (in the data directory, apart from the repository).
    pub folder: PathBuf,
    /// The newest plan sent: the next round's `before`.
    pub last_plan: String,
    /// When the newest round was answered in the host's own dialog
    /// instead (RFC 3339); cleared by the next plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_in_host: Option<String>,
    /// The round whose notes (a plan approved with comments) the host was
    /// handed: they are handed over once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes_given: Option<u32>,
}

/// The status of a plan review whose last round was answered in the host.
pub const ANSWERED_IN_HOST: &str = "answered_in_host";

/// What a round's `reviewer` ends with when a person answered it.
pub const IN_PERSON: &str = " (in person)";

impl Round {
    /// Whether a person answered this round (not a reviewer command).
    pub fn by_person(&self) -> bool {
        self.reviewer.ends_with(IN_PERSON)
    }

    /// The round's review as markdown, as the editor shows it.
    pub fn markdown(&self, review_id: &str) -> String {
        markdown_of(review_id, self.round, &self.review, self.verdict, self.by_person())
    }
}

/// A review as markdown: a person's without the sections they do not fill in.
pub fn markdown_of(
    review_id: &str,
    round: u32,
    review: &StructuredReview,
    verdict: Assessment,
    by_person: bool,
) -> String {
    if by_person {
        crate::structured_review::render_persons_markdown(review_id, round, review, verdict)
    } else {
        crate::structured_review::render_markdown(review_id, round, review, verdict)
    }
}

impl Session {
    /// Seed 004's status: `in_progress` until a round, then the last round's
    /// verdict (`needs_changes` or `approved`), then the final status; while
    /// a person is asked, `awaiting_review`.
    pub fn status(&self) -> &'static str {
        if let Some(done) = &self.completion {
            return done.final_status.name();
        }
        if self.awaiting.is_some() {
            return "awaiting_review";
        }
        if self.plan.as_ref().is_some_and(|p| p.answered_in_host.is_some()) {
            return ANSWERED_IN_HOST;
        }
        match self.rounds.last().map(|r| r.verdict) {
            None => "in_progress",
            Some(Assessment::NeedsChanges) => "needs_changes",
            Some(Assessment::Lgtm | Assessment::LgtmWithSuggestions) => "approved",
        }
    }
}

/// The next free id for `date` (`YYYY-MM-DD`) given the ids already taken.
pub fn next_id<'a>(date: &str, taken: impl IntoIterator<Item = &'a str>) -> String {
    let highest = taken
        .into_iter()
        .filter_map(|id| id.strip_prefix(date)?.strip_prefix('-')?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    format!("{date}-{:03}", highest + 1)
}

/// Whether a string has the shape of a session id.
pub fn is_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() >= 14
        && b[..10].iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
        && b[10] == b'-'
        && b[11..].iter().all(u8::is_ascii_digit)
}

/// Why a session could not take a new round or be completed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("no review session {0}; get_review_history lists the sessions of this repository")]
    NotFound(String),
    #[error(
        "review session {id} was already marked {status} at {at}; start a new session by calling request_review without previous_review_id"
    )]
    Completed { id: String, status: &'static str, at: String },
    #[error(
        "review session {id} has reached the maximum of {max} rounds; mark it complete with mark_review_complete, or start a new session"
    )]
    TooManyRounds { id: String, max: u32 },
    /// A change to the session that cannot be made as asked; says why.
    #[error("{0}")]
    Refused(String),
    /// The session has no round waiting on a person (anymore); says why.
    #[error("{0}")]
    NotWaiting(String),
    #[error("the review could not be stored: {0}")]
    Store(String),
    #[error("the Parley daemon is shutting down; try again in a moment")]
    Stopped,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_up_per_day() {
        let taken = ["2026-11-20-007", "2026-11-21-001", "2026-11-21-012", "junk"];
        assert_eq!(next_id("2026-11-21", taken), "2026-11-21-013");
        assert_eq!(next_id("2026-11-22", taken), "2026-11-22-001");
        assert!(is_session_id("2026-11-21-013"));
        assert!(!is_session_id("2026-11-21"));
        assert!(!is_session_id("../etc/passwd"));
    }
}
