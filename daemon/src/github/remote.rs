//! What a pull request holds on GitHub, read with GraphQL: its review
//! threads (both sides, ranges, outdated ones by their original lines, every
//! comment in order) and its conversation, every page of each.

use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{Api, GithubError};
use super::link::PullRequestRef;

/// Which side of the diff a review comment is on: `Left` the base (removed
/// lines), `Right` the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum DiffSide {
    Left,
    Right,
}

/// A review thread as GitHub holds it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteThread {
    /// The thread's node id (`PRRT_…`).
    pub id: String,
    pub is_resolved: bool,
    pub is_outdated: bool,
    pub path: String,
    /// 1-based lines in the head (or base, for the left side); `None` once
    /// outdated.
    pub line: Option<u32>,
    pub start_line: Option<u32>,
    /// The lines when the thread was made.
    pub original_line: Option<u32>,
    pub original_start_line: Option<u32>,
    pub diff_side: DiffSide,
    #[serde(default, deserialize_with = "nodes")]
    pub comments: Vec<RemoteComment>,
}

/// One comment of a review thread or of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteComment {
    /// The node id.
    pub id: String,
    pub database_id: Option<u64>,
    pub body: String,
    #[serde(default, deserialize_with = "login")]
    pub author: String,
    pub created_at: String,
    #[serde(default)]
    pub url: String,
    /// The commit a review comment was made on (a thread's first comment's
    /// is where its original lines are).
    #[serde(default, deserialize_with = "oid", rename = "originalCommit")]
    pub original_commit: Option<String>,
    /// The diff hunk a review comment was made on, down to its last line:
    /// the text it is about, kept by GitHub when a force-push takes the
    /// commit away.
    #[serde(default)]
    pub diff_hunk: Option<String>,
}

/// A pull request with everything Parley reads of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePullRequest {
    /// The node id (`PR_…`).
    pub id: String,
    pub url: String,
    /// `OPEN`, `CLOSED` or `MERGED`.
    pub state: String,
    pub head_oid: String,
    /// The base branch's commit: the left side's lines are its.
    pub base_oid: String,
    pub threads: Vec<RemoteThread>,
    pub conversation: Vec<RemoteComment>,
}

const COMMENT_FIELDS: &str = "id databaseId body author { login } createdAt url";
const REVIEW_COMMENT_FIELDS: &str = "id databaseId body author { login } createdAt url originalCommit { oid } diffHunk";

fn threads_query() -> String {
    format!(
        "query ParleyPullRequestThreads($owner: String!, $name: String!, $number: Int!, $after: String) {{
  repository(owner: $owner, name: $name) {{
    pullRequest(number: $number) {{
      id url state headRefOid baseRefOid
      reviewThreads(first: 100, after: $after) {{
        pageInfo {{ hasNextPage endCursor }}
        nodes {{
          id isResolved isOutdated path line startLine originalLine originalStartLine diffSide
          comments(first: 100) {{ pageInfo {{ hasNextPage endCursor }} nodes {{ {REVIEW_COMMENT_FIELDS} }} }}
        }}
      }}
    }}
  }}
}}"
    )
}

fn thread_comments_query() -> String {
    format!(
        "query ParleyThreadComments($id: ID!, $after: String) {{
  node(id: $id) {{
    ... on PullRequestReviewThread {{
      comments(first: 100, after: $after) {{ pageInfo {{ hasNextPage endCursor }} nodes {{ {REVIEW_COMMENT_FIELDS} }} }}
    }}
  }}
}}"
    )
}

fn conversation_query() -> String {
    format!(
        "query ParleyPullRequestConversation($owner: String!, $name: String!, $number: Int!, $after: String) {{
  repository(owner: $owner, name: $name) {{
    pullRequest(number: $number) {{
      comments(first: 100, after: $after) {{ pageInfo {{ hasNextPage endCursor }} nodes {{ {COMMENT_FIELDS} }} }}
    }}
  }}
}}"
    )
}

/// Every GraphQL document Parley sends to read a pull request, by name (the
/// tests check each against GitHub's published schema).
pub fn documents() -> Vec<(&'static str, String)> {
    vec![
        ("ParleyPullRequestThreads", threads_query()),
        ("ParleyThreadComments", thread_comments_query()),
        ("ParleyPullRequestConversation", conversation_query()),
    ]
}

/// Reads the pull request `pr`: its threads and conversation, every page.
pub fn fetch(api: &Api, pr: &PullRequestRef) -> Result<RemotePullRequest, GithubError> {
    let variables =
        |after: Option<&str>| json!({ "owner": pr.owner, "name": pr.repo, "number": pr.number, "after": after });
    let missing = || GithubError::NotFound(format!("GitHub has no pull request {pr} (or the token cannot see it)"));
    let mut threads = Vec::new();
    let mut after: Option<String> = None;
    let mut head = None;
    loop {
        let data = api.graphql(&threads_query(), variables(after.as_deref())).map_err(|e| named(e, pr))?;
        let pull = data.pointer("/repository/pullRequest").filter(|p| !p.is_null()).ok_or_else(missing)?;
        if head.is_none() {
            head = Some((
                text_at(pull, "id")?,
                text_at(pull, "url")?,
                text_at(pull, "state")?,
                text_at(pull, "headRefOid")?,
                text_at(pull, "baseRefOid")?,
            ));
        }
        let page = pull.get("reviewThreads").ok_or_else(|| garbled("reviewThreads"))?;
        for node in page.get("nodes").and_then(Value::as_array).into_iter().flatten() {
            let mut thread: RemoteThread = serde_json::from_value(node.clone()).map_err(|e| garbled(&e.to_string()))?;
            if let Some(cursor) = next_cursor(node.get("comments")) {
                thread.comments.extend(rest_of_thread(api, &thread.id, cursor)?);
            }
            threads.push(thread);
        }
        match next_cursor(Some(page)) {
            Some(cursor) => after = Some(cursor),
            None => break,
        }
    }
    let mut conversation = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let data = api.graphql(&conversation_query(), variables(after.as_deref())).map_err(|e| named(e, pr))?;
        let page = data.pointer("/repository/pullRequest/comments").ok_or_else(missing)?;
        conversation.extend(comments_of(page)?);
        match next_cursor(Some(page)) {
            Some(cursor) => after = Some(cursor),
            None => break,
        }
    }
    let (id, url, state, head_oid, base_oid) = head.ok_or_else(missing)?;
    Ok(RemotePullRequest { id, url, state, head_oid, base_oid, threads, conversation })
}

/// GitHub's "could not resolve" said with the pull request's name.
fn named(error: GithubError, pr: &PullRequestRef) -> GithubError {
    match error {
        GithubError::NotFound(said) => {
            GithubError::NotFound(format!("GitHub has no pull request {pr} (or the token cannot see it): {said}"))
        }
        other => other,
    }
}

fn rest_of_thread(api: &Api, thread: &str, first: String) -> Result<Vec<RemoteComment>, GithubError> {
    let mut comments = Vec::new();
    let mut after = Some(first);
    while let Some(cursor) = after {
        let data = api.graphql(&thread_comments_query(), json!({ "id": thread, "after": cursor }))?;
        let page = data
            .pointer("/node/comments")
            .ok_or_else(|| GithubError::NotFound(format!("the review thread {thread} is gone from GitHub")))?;
        comments.extend(comments_of(page)?);
        after = next_cursor(Some(page));
    }
    Ok(comments)
}

fn comments_of(page: &Value) -> Result<Vec<RemoteComment>, GithubError> {
    let nodes = page.get("nodes").cloned().unwrap_or(Value::Array(Vec::new()));
    serde_json::from_value(nodes).map_err(|e| garbled(&e.to_string()))
}

/// The cursor of the next page of a connection, when there is one.
fn next_cursor(connection: Option<&Value>) -> Option<String> {
    let info = connection?.get("pageInfo")?;
    if info.get("hasNextPage")?.as_bool()? { info.get("endCursor")?.as_str().map(str::to_owned) } else { None }
}

fn text_at(value: &Value, field: &str) -> Result<String, GithubError> {
    value.get(field).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| garbled(field))
}

fn garbled(what: &str) -> GithubError {
    GithubError::Garbled(format!("a pull request's {what}"))
}

fn nodes<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<RemoteComment>, D::Error> {
    #[derive(Deserialize)]
    struct Connection {
        #[serde(default)]
        nodes: Vec<RemoteComment>,
    }
    Ok(Option::<Connection>::deserialize(deserializer)?.map(|c| c.nodes).unwrap_or_default())
}

/// An author's login; a deleted account (`author: null`) reads as `ghost`,
/// as GitHub shows it.
fn login<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    struct Author {
        login: String,
    }
    Ok(Option::<Author>::deserialize(deserializer)?.map_or_else(|| "ghost".to_owned(), |a| a.login))
}

/// A commit's `oid` (`originalCommit: {oid}`), absent or null as none.
fn oid<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    struct Commit {
        oid: String,
    }
    Ok(Option::<Commit>::deserialize(deserializer)?.map(|c| c.oid))
}
