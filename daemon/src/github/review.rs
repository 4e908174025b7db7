//! What Parley sends to a pull request on GitHub, with GraphQL mutations: a
//! pending review (this viewer's, reused when one is already open), review
//! threads added to it on their lines and side, replies, resolving and
//! reopening threads, and submitting the review with its event.

use serde_json::{Value, json};

use super::api::{Api, GithubError};
use super::link::PullRequestRef;

/// What a submitted review says: `COMMENT`, `APPROVE` or `REQUEST_CHANGES`
/// (GitHub's `PullRequestReviewEvent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewEvent {
    Comment,
    Approve,
    RequestChanges,
}

impl ReviewEvent {
    /// `comment`, `approve` or `request-changes` (as the command line and
    /// the wire name them).
    pub fn parse(given: &str) -> Result<ReviewEvent, String> {
        match given.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "comment" => Ok(ReviewEvent::Comment),
            "approve" => Ok(ReviewEvent::Approve),
            "request-changes" => Ok(ReviewEvent::RequestChanges),
            other => Err(format!("unknown review event `{other}`: use comment, approve or request-changes")),
        }
    }

    pub fn github_name(self) -> &'static str {
        match self {
            ReviewEvent::Comment => "COMMENT",
            ReviewEvent::Approve => "APPROVE",
            ReviewEvent::RequestChanges => "REQUEST_CHANGES",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ReviewEvent::Comment => "comment",
            ReviewEvent::Approve => "approve",
            ReviewEvent::RequestChanges => "request-changes",
        }
    }
}

/// A review thread to add: 1-based lines of the side's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftThread {
    pub path: String,
    /// `LEFT` or `RIGHT`.
    pub side: String,
    pub start_line: u32,
    pub line: u32,
    pub body: String,
}

/// A review thread GitHub made: its id, and its first comment's id and page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedThread {
    pub thread_id: String,
    pub comment_id: String,
    pub url: String,
}

const PENDING_REVIEW: &str = "query ParleyPendingReview($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviews(states: PENDING, first: 1) { nodes { id viewerDidAuthor } }
    }
  }
}";

const START_REVIEW: &str = "mutation ParleyStartReview($pullRequestId: ID!, $commitOID: GitObjectID!) {
  addPullRequestReview(input: { pullRequestId: $pullRequestId, commitOID: $commitOID }) {
    pullRequestReview { id }
  }
}";

const ADD_THREAD: &str = "mutation ParleyAddThread($pullRequestReviewId: ID!, $path: String!, $body: String!, $line: Int!, $side: DiffSide!, $startLine: Int, $startSide: DiffSide) {
  addPullRequestReviewThread(input: { pullRequestReviewId: $pullRequestReviewId, path: $path, body: $body, line: $line, side: $side, startLine: $startLine, startSide: $startSide }) {
    thread { id comments(first: 1) { nodes { id url } } }
  }
}";

const REPLY: &str = "mutation ParleyReply($pullRequestReviewThreadId: ID!, $pullRequestReviewId: ID, $body: String!) {
  addPullRequestReviewThreadReply(input: { pullRequestReviewThreadId: $pullRequestReviewThreadId, pullRequestReviewId: $pullRequestReviewId, body: $body }) {
    comment { id }
  }
}";

const RESOLVE: &str = "mutation ParleyResolveThread($threadId: ID!) {
  resolveReviewThread(input: { threadId: $threadId }) { thread { id isResolved } }
}";

const UNRESOLVE: &str = "mutation ParleyUnresolveThread($threadId: ID!) {
  unresolveReviewThread(input: { threadId: $threadId }) { thread { id isResolved } }
}";

const SUBMIT: &str =
    "mutation ParleySubmitReview($pullRequestReviewId: ID!, $event: PullRequestReviewEvent!, $body: String) {
  submitPullRequestReview(input: { pullRequestReviewId: $pullRequestReviewId, event: $event, body: $body }) {
    pullRequestReview { id state url }
  }
}";

const REVIEWS: &str = "query ParleyReviews($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviews(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id body state url viewerDidAuthor }
      }
    }
  }
}";

/// Every GraphQL document Parley sends to write to a pull request, by name
/// (the tests check each against GitHub's published schema).
pub fn documents() -> Vec<(&'static str, String)> {
    [
        ("ParleyPendingReview", PENDING_REVIEW),
        ("ParleyStartReview", START_REVIEW),
        ("ParleyAddThread", ADD_THREAD),
        ("ParleyReply", REPLY),
        ("ParleyResolveThread", RESOLVE),
        ("ParleyUnresolveThread", UNRESOLVE),
        ("ParleySubmitReview", SUBMIT),
        ("ParleyReviews", REVIEWS),
    ]
    .into_iter()
    .map(|(name, text)| (name, text.to_owned()))
    .collect()
}

/// This viewer's pending review on `pr`, when one is open (GitHub allows
/// one per person, and shows it to its author only).
pub fn pending_review(api: &Api, pr: &PullRequestRef) -> Result<Option<String>, GithubError> {
    let data = api.graphql(PENDING_REVIEW, json!({ "owner": pr.owner, "name": pr.repo, "number": pr.number }))?;
    let nodes = data.pointer("/repository/pullRequest/reviews/nodes").and_then(Value::as_array);
    Ok(nodes
        .into_iter()
        .flatten()
        .find(|n| n.get("viewerDidAuthor").and_then(Value::as_bool).unwrap_or(true))
        .and_then(|n| n.get("id").and_then(Value::as_str))
        .map(str::to_owned))
}

/// Starts a pending review of `commit` on the pull request `pull_request_id`.
pub fn start_review(api: &Api, pull_request_id: &str, commit: &str) -> Result<String, GithubError> {
    let data = api.graphql(START_REVIEW, json!({ "pullRequestId": pull_request_id, "commitOID": commit }))?;
    text(&data, "/addPullRequestReview/pullRequestReview/id")
}

/// Adds a thread to the pending review `review`.
pub fn add_thread(api: &Api, review: &str, thread: &DraftThread) -> Result<AddedThread, GithubError> {
    let ranged = thread.start_line < thread.line;
    let variables = json!({
        "pullRequestReviewId": review,
        "path": thread.path,
        "body": thread.body,
        "line": thread.line,
        "side": thread.side,
        "startLine": ranged.then_some(thread.start_line),
        "startSide": ranged.then_some(thread.side.as_str()),
    });
    let data = api.graphql(ADD_THREAD, variables)?;
    Ok(AddedThread {
        thread_id: text(&data, "/addPullRequestReviewThread/thread/id")?,
        comment_id: text(&data, "/addPullRequestReviewThread/thread/comments/nodes/0/id")?,
        url: text(&data, "/addPullRequestReviewThread/thread/comments/nodes/0/url").unwrap_or_default(),
    })
}

/// Replies to the review thread `thread` (in the pending review `review`
/// when the thread is in it); the reply's id.
pub fn reply(api: &Api, thread: &str, review: Option<&str>, body: &str) -> Result<String, GithubError> {
    let data = api
        .graphql(REPLY, json!({ "pullRequestReviewThreadId": thread, "pullRequestReviewId": review, "body": body }))?;
    text(&data, "/addPullRequestReviewThreadReply/comment/id")
}

/// Resolves the review thread `thread`, or reopens it.
pub fn set_resolved(api: &Api, thread: &str, resolved: bool) -> Result<(), GithubError> {
    let document = if resolved { RESOLVE } else { UNRESOLVE };
    api.graphql(document, json!({ "threadId": thread })).map(|_| ())
}

/// Submits the pending review `review` with `event` and, when given, the
/// review's `body`; its page.
pub fn submit(api: &Api, review: &str, event: ReviewEvent, body: Option<&str>) -> Result<String, GithubError> {
    let variables = json!({ "pullRequestReviewId": review, "event": event.github_name(), "body": body });
    let data = api.graphql(SUBMIT, variables)?;
    Ok(text(&data, "/submitPullRequestReview/pullRequestReview/url").unwrap_or_default())
}

/// A submitted review of this viewer's whose body holds `marker`: its
/// event (as `ReviewEvent::name` gives it) and page. Every page is read.
pub fn submitted_with(
    api: &Api,
    pr: &PullRequestRef,
    marker: &str,
) -> Result<Option<(&'static str, String)>, GithubError> {
    let mut after: Option<String> = None;
    loop {
        let variables = json!({ "owner": pr.owner, "name": pr.repo, "number": pr.number, "after": after });
        let data = api.graphql(REVIEWS, variables)?;
        let reviews = data.pointer("/repository/pullRequest/reviews").cloned().unwrap_or(Value::Null);
        for node in reviews.get("nodes").and_then(Value::as_array).into_iter().flatten() {
            let field = |name: &str| node.get(name).and_then(Value::as_str).unwrap_or_default();
            let event = match field("state") {
                "APPROVED" => ReviewEvent::Approve,
                "CHANGES_REQUESTED" => ReviewEvent::RequestChanges,
                "COMMENTED" | "DISMISSED" => ReviewEvent::Comment,
                _ => continue,
            };
            let mine = node.get("viewerDidAuthor").and_then(Value::as_bool).unwrap_or(false);
            if mine && field("body").contains(marker) {
                return Ok(Some((event.name(), field("url").to_owned())));
            }
        }
        let info = reviews.get("pageInfo");
        match info.and_then(|i| i.get("hasNextPage")).and_then(Value::as_bool) {
            Some(true) => after = info.and_then(|i| i.get("endCursor")).and_then(Value::as_str).map(str::to_owned),
            _ => return Ok(None),
        }
        if after.is_none() {
            return Ok(None);
        }
    }
}

fn text(data: &Value, pointer: &str) -> Result<String, GithubError> {
    data.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| GithubError::Garbled(format!("an answer without {pointer}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn review_events_read_as_the_command_line_writes_them() {
        assert_eq!(ReviewEvent::parse("approve"), Ok(ReviewEvent::Approve));
        assert_eq!(ReviewEvent::parse("REQUEST_CHANGES"), Ok(ReviewEvent::RequestChanges));
        assert_eq!(ReviewEvent::parse("request-changes").map(ReviewEvent::github_name), Ok("REQUEST_CHANGES"));
        let error = ReviewEvent::parse("lgtm").expect_err("not an event");
        assert!(error.contains("comment, approve or request-changes"), "{error}");
    }
}
