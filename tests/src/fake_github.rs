//! A local fake of the GitHub API endpoints Parley uses, on loopback: it
//! serves what a real pull request holds (review threads on both sides,
//! their comments, the conversation, resolution, pages of 100), records
//! every request Parley sends, takes reviews the way GitHub does (a pending
//! review per person, threads and replies added to it, resolution, submitted
//! with an event), and fails on demand the way GitHub does (a revoked token,
//! a spent rate limit, an outage).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The token the fake accepts; any other is refused with 401.
pub const TOKEN: &str = "ghp_parleyTestToken0000000000000000000000";

/// The running fake; stopped when dropped.
pub struct FakeGitHub {
    /// The API root to give Parley as `PARLEY_GITHUB_API`.
    pub url: String,
    hub: Arc<Mutex<Hub>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<std::thread::JoinHandle<()>>,
}

/// Everything the fake holds and has seen.
#[derive(Debug, Default)]
pub struct Hub {
    pub pulls: Vec<FakePull>,
    /// Every request, in order.
    pub requests: Vec<Recorded>,
    /// Answers given instead of the real one, first to the next request.
    pub failures: VecDeque<Failure>,
    /// How many items a page holds (GitHub's 100 unless a test asks fewer).
    pub page_size: Option<usize>,
    /// Reviews made through the API (by the token's person).
    pub reviews: Vec<FakeReview>,
    /// Failures planned for a given operation's Nth request from now.
    pub planned: Vec<PlannedFailure>,
    /// Lines (path, 1-based line of the head) the pull request's diff does
    /// not show: GitHub refuses a review thread there.
    pub outside_diff: Vec<(String, u32)>,
    next_id: u64,
}

/// A failure served for the `nth` (1-based) request of `operation` the
/// fake receives after it was planned, either instead of doing it or
/// after doing it (GitHub made the change, but its answer never arrived).
#[derive(Debug, Clone)]
pub struct PlannedFailure {
    pub operation: String,
    pub nth: usize,
    pub failure: Failure,
    pub after_applying: bool,
    seen: usize,
}

/// The most characters GitHub takes in a comment's or a review's body.
pub const BODY_LIMIT: usize = 65_536;

/// The login the token belongs to: the author of what Parley sends.
pub const VIEWER: &str = "parley-person";

/// A review made through the API.
#[derive(Debug, Clone)]
pub struct FakeReview {
    pub id: String,
    pub number: u64,
    pub commit: String,
    /// `PENDING` until submitted, then the event's state (`APPROVED`,
    /// `COMMENTED`, `CHANGES_REQUESTED`).
    pub state: String,
    /// The body it was submitted with.
    pub body: Option<String>,
}

/// A pull request.
#[derive(Debug, Clone)]
pub struct FakePull {
    pub owner: String,
    pub repo: String,
    pub number: u64,
    /// `OPEN`, `CLOSED` or `MERGED`.
    pub state: String,
    pub head_oid: String,
    /// The base branch's commit (the left side's lines are its).
    pub base_oid: String,
    pub threads: Vec<FakeThread>,
    pub conversation: Vec<FakeComment>,
}

/// A review thread.
#[derive(Debug, Clone)]
pub struct FakeThread {
    pub id: String,
    pub path: String,
    pub line: Option<u32>,
    pub start_line: Option<u32>,
    pub original_line: Option<u32>,
    pub original_start_line: Option<u32>,
    /// `LEFT` or `RIGHT`.
    pub side: String,
    /// The commit its first comment was made on.
    pub original_commit: Option<String>,
    pub resolved: bool,
    pub outdated: bool,
    pub comments: Vec<FakeComment>,
    /// The review it was added in, for threads added through the API.
    pub review: Option<String>,
    /// The diff hunk its comments were made on, down to its last line.
    pub diff_hunk: Option<String>,
}

/// A comment of a thread or of the conversation.
#[derive(Debug, Clone)]
pub struct FakeComment {
    pub id: String,
    pub database_id: u64,
    pub body: String,
    pub author: String,
    pub created_at: String,
}

/// A request as the fake received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// A GraphQL document's operation name.
    pub operation: Option<String>,
    /// A GraphQL request's variables, or a REST request's body.
    pub body: Value,
    pub authorization: Option<String>,
}

/// A failure served instead of the next answer.
#[derive(Debug, Clone)]
pub enum Failure {
    /// GitHub's primary rate limit, spent until `reset_in` seconds from now.
    RateLimited { reset_in: u64 },
    /// Any status with its message (500, 502, 403, 422…).
    Status { status: u16, message: String },
}

impl FakeGitHub {
    /// Starts the fake on a free loopback port.
    pub fn start() -> FakeGitHub {
        let hub = Arc::new(Mutex::new(Hub::default()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port for the fake GitHub");
        listener.set_nonblocking(true).expect("a non-blocking listener");
        let url = format!("http://{}", listener.local_addr().expect("the fake's address"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = hub.clone();
        let server = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                let app = axum::Router::new().fallback(answer).with_state(shared);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await
                    .expect("the fake GitHub serves");
            });
        });
        FakeGitHub { url, hub, stop: Some(stop), server: Some(server) }
    }

    /// The fake's state, to arrange a pull request or read what was sent.
    pub fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}

impl Hub {
    fn next(&mut self, prefix: &str) -> (String, u64) {
        self.next_id += 1;
        (format!("{prefix}_{}", self.next_id), 1000 + self.next_id)
    }

    /// Opens pull request `owner/repo#number` at `head_oid`.
    pub fn open_pull(&mut self, owner: &str, repo: &str, number: u64, head_oid: &str) {
        self.pulls.push(FakePull {
            owner: owner.into(),
            repo: repo.into(),
            number,
            state: "OPEN".into(),
            head_oid: head_oid.into(),
            base_oid: String::new(),
            threads: Vec::new(),
            conversation: Vec::new(),
        });
    }

    pub fn pull(&mut self, number: u64) -> &mut FakePull {
        self.pulls.iter_mut().find(|p| p.number == number).expect("the fake has that pull request")
    }

    fn comment(&mut self, body: &str, author: &str) -> FakeComment {
        let (id, database_id) = self.next("PRRC");
        let created_at = format!("2026-11-20T10:{:02}:{:02}Z", (database_id / 60) % 60, database_id % 60);
        FakeComment { id, database_id, body: body.into(), author: author.into(), created_at }
    }

    /// A person's review thread on `lines` (1-based, inclusive) of `path`,
    /// on `side` (`LEFT` or `RIGHT`); its id.
    pub fn add_thread(
        &mut self,
        number: u64,
        path: &str,
        lines: std::ops::RangeInclusive<u32>,
        side: &str,
        body: &str,
        author: &str,
    ) -> String {
        let comment = self.comment(body, author);
        let (id, _) = self.next("PRRT");
        let start = (lines.start() != lines.end()).then_some(*lines.start());
        self.pull(number).threads.push(FakeThread {
            id: id.clone(),
            path: path.into(),
            line: Some(*lines.end()),
            start_line: start,
            original_line: Some(*lines.end()),
            original_start_line: start,
            side: side.into(),
            original_commit: None,
            resolved: false,
            outdated: false,
            comments: vec![comment],
            review: None,
            diff_hunk: None,
        });
        id
    }

    /// A person's review thread on `lines` of `path` as it was at `commit`,
    /// with the diff hunk GitHub keeps for it (see [`hunk_of_new_file`]);
    /// its id.
    #[allow(clippy::too_many_arguments)]
    pub fn add_thread_at(
        &mut self,
        number: u64,
        path: &str,
        lines: std::ops::RangeInclusive<u32>,
        body: &str,
        author: &str,
        commit: &str,
        hunk: &str,
    ) -> String {
        let id = self.add_thread(number, path, lines, "RIGHT", body, author);
        let thread = self.thread(number, &id);
        thread.original_commit = Some(commit.into());
        thread.diff_hunk = Some(hunk.into());
        id
    }

    /// The pull request's branch force-pushed to `head_oid`: every thread
    /// on it is outdated, as GitHub marks a thread whose lines the new head
    /// no longer has (its `line` gone, its original lines and hunk kept).
    pub fn force_push(&mut self, number: u64, head_oid: &str) {
        let pull = self.pull(number);
        pull.head_oid = head_oid.into();
        for thread in &mut pull.threads {
            thread.outdated = true;
        }
    }

    /// `count` threads by `author`, one a line of `path` (cycling through
    /// `lines` lines), each with `replies` replies: a large pull request.
    pub fn add_many_threads(&mut self, number: u64, path: &str, lines: u32, count: usize, replies: usize) {
        for n in 0..count {
            let line = (n as u32 % lines) + 1;
            let id = self.add_thread(number, path, line..=line, "RIGHT", &format!("note {n}"), "mona");
            for r in 0..replies {
                self.reply(number, &id, &format!("reply {r} to note {n}"), "alice");
            }
        }
    }

    /// A reply on GitHub to thread `id`.
    pub fn reply(&mut self, number: u64, thread: &str, body: &str, author: &str) {
        let comment = self.comment(body, author);
        self.thread(number, thread).comments.push(comment);
    }

    /// A comment in the pull request's conversation.
    pub fn converse(&mut self, number: u64, body: &str, author: &str) {
        let comment = self.comment(body, author);
        self.pull(number).conversation.push(comment);
    }

    pub fn thread(&mut self, number: u64, id: &str) -> &mut FakeThread {
        self.pull(number).threads.iter_mut().find(|t| t.id == id).expect("the fake has that thread")
    }

    /// The threads added through the API, in order.
    pub fn pushed_threads(&self, number: u64) -> Vec<FakeThread> {
        let pull = self.pulls.iter().find(|p| p.number == number).expect("the fake has that pull request");
        pull.threads.iter().filter(|t| t.review.is_some()).cloned().collect()
    }

    /// Fails the `nth` request of `operation` from now, without doing it.
    pub fn fail_nth(&mut self, operation: &str, nth: usize, failure: Failure) {
        self.planned.push(PlannedFailure { operation: operation.into(), nth, failure, after_applying: false, seen: 0 });
    }

    /// Does the `nth` request of `operation` from now, then answers it with
    /// `failure`: GitHub has the change, the asker never learns of it.
    pub fn fail_nth_after_applying(&mut self, operation: &str, nth: usize, failure: Failure) {
        self.planned.push(PlannedFailure { operation: operation.into(), nth, failure, after_applying: true, seen: 0 });
    }

    /// The planned failure due for this request of `operation`, if any.
    fn due(&mut self, operation: Option<&str>) -> Option<(Failure, bool)> {
        let operation = operation?;
        let mut due = None;
        for planned in self.planned.iter_mut().filter(|p| p.operation == operation) {
            planned.seen += 1;
            if planned.seen == planned.nth && due.is_none() {
                due = Some((planned.failure.clone(), planned.after_applying));
            }
        }
        self.planned.retain(|p| p.seen < p.nth);
        due
    }

    /// The GraphQL operations received, by name, in order.
    pub fn operations(&self) -> Vec<String> {
        self.requests.iter().filter_map(|r| r.operation.clone()).collect()
    }
}

/// Every request: recorded, checked for the token, then served.
async fn answer(
    State(hub): State<Arc<Mutex<Hub>>>,
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    let mut hub = hub.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let graphql = uri.path().ends_with("/graphql");
    let query = parsed.get("query").and_then(Value::as_str).unwrap_or_default().to_owned();
    let operation = graphql.then(|| operation_name(&query)).flatten();
    let authorization = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    hub.requests.push(Recorded {
        method: method.to_string(),
        path: uri.path().to_owned(),
        operation: operation.clone(),
        body: if graphql { parsed.get("variables").cloned().unwrap_or(Value::Null) } else { parsed.clone() },
        authorization: authorization.clone(),
    });
    if authorization.as_deref() != Some(&format!("Bearer {TOKEN}")) {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({ "message": "Bad credentials" }))).into_response();
    }
    if let Some(failure) = hub.failures.pop_front() {
        return failed(failure);
    }
    let planned = hub.due(operation.as_deref());
    if let Some((failure, false)) = &planned {
        return failed(failure.clone());
    }
    if !graphql {
        return (StatusCode::NOT_FOUND, axum::Json(json!({ "message": "Not Found" }))).into_response();
    }
    let variables = parsed.get("variables").cloned().unwrap_or(Value::Null);
    let data = match operation.as_deref() {
        Some("ParleyPullRequestThreads") => threads_page(&hub, &variables),
        Some("ParleyThreadComments") => thread_comments_page(&hub, &variables),
        Some("ParleyPullRequestConversation") => conversation_page(&hub, &variables),
        Some("ParleyPendingReview") => pending_review(&hub, &variables),
        Some("ParleyStartReview") => start_review(&mut hub, &variables),
        Some("ParleyAddThread") => add_review_thread(&mut hub, &variables),
        Some("ParleyReply") => reply_to_thread(&mut hub, &variables),
        Some("ParleyResolveThread") => set_resolved(&mut hub, &variables, true, "resolveReviewThread"),
        Some("ParleyUnresolveThread") => set_resolved(&mut hub, &variables, false, "unresolveReviewThread"),
        Some("ParleySubmitReview") => submit_review(&mut hub, &variables),
        Some("ParleyReviews") => reviews_page(&hub, &variables),
        other => {
            let message = format!("the fake GitHub does not serve the operation {other:?}");
            return axum::Json(json!({ "errors": [{ "type": "UNKNOWN", "message": message }] })).into_response();
        }
    };
    if let Some((failure, true)) = planned {
        return failed(failure);
    }
    match data {
        Ok(data) => axum::Json(json!({ "data": data })).into_response(),
        Err(message) => {
            // GitHub's types: an id it cannot find, else input it will not take.
            let kind = if message.starts_with("Could not resolve") { "NOT_FOUND" } else { "UNPROCESSABLE" };
            axum::Json(json!({ "data": null, "errors": [{ "type": kind, "message": message }] })).into_response()
        }
    }
}

fn failed(failure: Failure) -> Response {
    match failure {
        Failure::RateLimited { reset_in } => {
            let reset =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
                    + reset_in;
            let headers = [
                ("x-ratelimit-remaining", "0".to_owned()),
                ("x-ratelimit-reset", reset.to_string()),
                ("x-ratelimit-limit", "5000".to_owned()),
            ];
            (StatusCode::FORBIDDEN, headers, axum::Json(json!({ "message": "API rate limit exceeded" })))
                .into_response()
        }
        Failure::Status { status, message } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (status, axum::Json(json!({ "message": message }))).into_response()
        }
    }
}

/// `query Name(…)` → `Name`.
fn operation_name(query: &str) -> Option<String> {
    let rest = query.trim_start().strip_prefix("query").or_else(|| query.trim_start().strip_prefix("mutation"))?;
    let name: String = rest.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

fn find_pull<'a>(hub: &'a Hub, variables: &Value) -> Result<&'a FakePull, String> {
    let owner = variables.get("owner").and_then(Value::as_str).unwrap_or_default();
    let name = variables.get("name").and_then(Value::as_str).unwrap_or_default();
    let number = variables.get("number").and_then(Value::as_u64).unwrap_or_default();
    hub.pulls
        .iter()
        .find(|p| p.owner == owner && p.repo == name && p.number == number)
        .ok_or_else(|| format!("Could not resolve to a PullRequest with the number of {number}."))
}

/// One page of `items` after the cursor in `variables.after`, as a
/// connection (cursors are the fake's own: the index after the page).
fn page<T>(hub: &Hub, items: &[T], variables: &Value, node: impl Fn(&T) -> Value) -> Value {
    let size = hub.page_size.unwrap_or(100);
    let start = variables.get("after").and_then(Value::as_str).and_then(|c| c.parse::<usize>().ok()).unwrap_or(0);
    let end = (start + size).min(items.len());
    let nodes: Vec<Value> = items.get(start..end).unwrap_or_default().iter().map(node).collect();
    json!({
        "pageInfo": { "hasNextPage": end < items.len(), "endCursor": end.to_string() },
        "nodes": nodes,
    })
}

fn comment_node(comment: &FakeComment) -> Value {
    json!({
        "id": comment.id,
        "databaseId": comment.database_id,
        "body": comment.body,
        "author": { "login": comment.author },
        "createdAt": comment.created_at,
        "url": format!("https://github.test/pull/comments/{}", comment.database_id),
    })
}

/// A review comment: a comment with the commit it was made on and its
/// diff hunk.
fn review_comment_node(thread: &FakeThread, comment: &FakeComment) -> Value {
    let mut node = comment_node(comment);
    node["originalCommit"] = match &thread.original_commit {
        Some(oid) => json!({ "oid": oid }),
        None => Value::Null,
    };
    node["diffHunk"] = json!(thread.diff_hunk);
    node
}

/// The diff hunk GitHub gives a comment on line `line` (1-based) of a file
/// the pull request adds: every line down to it, added.
pub fn hunk_of_new_file(text: &str, line: u32) -> String {
    let lines: Vec<&str> = text.lines().take(line as usize).collect();
    let mut hunk = format!("@@ -0,0 +1,{} @@", text.lines().count());
    for line in lines {
        hunk.push_str("\n+");
        hunk.push_str(line);
    }
    hunk
}

fn threads_page(hub: &Hub, variables: &Value) -> Result<Value, String> {
    let pull = find_pull(hub, variables)?;
    let threads = page(hub, &pull.threads, variables, |t| {
        json!({
            "id": t.id,
            "isResolved": t.resolved,
            "isOutdated": t.outdated,
            "path": t.path,
            "line": if t.outdated { None } else { t.line },
            "startLine": if t.outdated { None } else { t.start_line },
            "originalLine": t.original_line,
            "originalStartLine": t.original_start_line,
            "diffSide": t.side,
            "comments": page(hub, &t.comments, &Value::Null, |c| review_comment_node(t, c)),
        })
    });
    Ok(json!({ "repository": { "pullRequest": {
        "id": format!("PR_{}", pull.number),
        "url": format!("https://github.test/{}/{}/pull/{}", pull.owner, pull.repo, pull.number),
        "state": pull.state,
        "headRefOid": pull.head_oid,
        "baseRefOid": pull.base_oid,
        "reviewThreads": threads,
    } } }))
}

fn thread_comments_page(hub: &Hub, variables: &Value) -> Result<Value, String> {
    let id = variables.get("id").and_then(Value::as_str).unwrap_or_default();
    let thread = hub
        .pulls
        .iter()
        .flat_map(|p| p.threads.iter())
        .find(|t| t.id == id)
        .ok_or_else(|| format!("Could not resolve to a node with the global id of '{id}'"))?;
    Ok(json!({ "node": { "comments": page(hub, &thread.comments, variables, |c| review_comment_node(thread, c)) } }))
}

fn conversation_page(hub: &Hub, variables: &Value) -> Result<Value, String> {
    let pull = find_pull(hub, variables)?;
    Ok(json!({ "repository": { "pullRequest": {
        "comments": page(hub, &pull.conversation, variables, comment_node),
    } } }))
}

fn text<'a>(variables: &'a Value, name: &str) -> Result<&'a str, String> {
    variables.get(name).and_then(Value::as_str).ok_or_else(|| format!("Variable ${name} was not given"))
}

fn pending_review(hub: &Hub, variables: &Value) -> Result<Value, String> {
    let pull = find_pull(hub, variables)?;
    let nodes: Vec<Value> = hub
        .reviews
        .iter()
        .filter(|r| r.number == pull.number && r.state == "PENDING")
        .take(1)
        .map(|r| json!({ "id": r.id, "viewerDidAuthor": true }))
        .collect();
    Ok(json!({ "repository": { "pullRequest": { "reviews": { "nodes": nodes } } } }))
}

fn pull_by_id(hub: &Hub, id: &str) -> Result<u64, String> {
    hub.pulls
        .iter()
        .find(|p| format!("PR_{}", p.number) == id)
        .map(|p| p.number)
        .ok_or_else(|| format!("Could not resolve to a node with the global id of '{id}'"))
}

fn start_review(hub: &mut Hub, variables: &Value) -> Result<Value, String> {
    let number = pull_by_id(hub, text(variables, "pullRequestId")?)?;
    if hub.reviews.iter().any(|r| r.number == number && r.state == "PENDING") {
        return Err("User can only have one pending review per pull request".into());
    }
    let commit = text(variables, "commitOID")?.to_owned();
    let (id, _) = hub.next("PRR");
    hub.reviews.push(FakeReview { id: id.clone(), number, commit, state: "PENDING".into(), body: None });
    Ok(json!({ "addPullRequestReview": { "pullRequestReview": { "id": id } } }))
}

fn pending(hub: &Hub, review: &str) -> Result<u64, String> {
    hub.reviews
        .iter()
        .find(|r| r.id == review && r.state == "PENDING")
        .map(|r| r.number)
        .ok_or_else(|| format!("Could not resolve to a pending PullRequestReview with the id of '{review}'"))
}

fn add_review_thread(hub: &mut Hub, variables: &Value) -> Result<Value, String> {
    let review = text(variables, "pullRequestReviewId")?.to_owned();
    let number = pending(hub, &review)?;
    let line = variables.get("line").and_then(Value::as_u64).ok_or("Variable $line was not given")? as u32;
    let start_line = variables.get("startLine").and_then(Value::as_u64).map(|l| l as u32);
    let side = text(variables, "side")?.to_owned();
    if start_line.is_some() && variables.get("startSide").and_then(Value::as_str) != Some(side.as_str()) {
        return Err("startSide must be given with startLine".into());
    }
    if text(variables, "body")?.chars().count() > BODY_LIMIT {
        return Err("Body is too long (maximum is 65536 characters)".into());
    }
    let path = text(variables, "path")?.to_owned();
    if hub.outside_diff.iter().any(|(p, l)| *p == path && (start_line.unwrap_or(line)..=line).contains(l)) {
        return Err("Pull request review thread line must be part of the diff".into());
    }
    let comment = hub.comment(text(variables, "body")?, VIEWER);
    let (id, _) = hub.next("PRRT");
    let node = json!({ "thread": { "id": id, "comments": { "nodes": [{
        "id": comment.id,
        "url": format!("https://github.test/pull/comments/{}", comment.database_id),
    }] } } });
    hub.pull(number).threads.push(FakeThread {
        id,
        path,
        line: Some(line),
        start_line,
        original_line: Some(line),
        original_start_line: start_line,
        side,
        original_commit: None,
        resolved: false,
        outdated: false,
        comments: vec![comment],
        review: Some(review),
        diff_hunk: None,
    });
    Ok(json!({ "addPullRequestReviewThread": node }))
}

fn thread_number(hub: &Hub, id: &str) -> Result<u64, String> {
    hub.pulls
        .iter()
        .find(|p| p.threads.iter().any(|t| t.id == id))
        .map(|p| p.number)
        .ok_or_else(|| format!("Could not resolve to a node with the global id of '{id}'"))
}

fn reply_to_thread(hub: &mut Hub, variables: &Value) -> Result<Value, String> {
    let id = text(variables, "pullRequestReviewThreadId")?.to_owned();
    let number = thread_number(hub, &id)?;
    // A thread of a review not yet submitted takes replies in that review only.
    let review = hub.thread(number, &id).review.clone();
    let pending = review.as_ref().filter(|r| hub.reviews.iter().any(|x| &x.id == *r && x.state == "PENDING"));
    if let Some(pending) = pending
        && variables.get("pullRequestReviewId").and_then(Value::as_str) != Some(pending.as_str())
    {
        return Err("A reply to a pending review comment must be part of that pending review".into());
    }
    if text(variables, "body")?.chars().count() > BODY_LIMIT {
        return Err("Body is too long (maximum is 65536 characters)".into());
    }
    let comment = hub.comment(text(variables, "body")?, VIEWER);
    let answer = json!({ "addPullRequestReviewThreadReply": { "comment": { "id": comment.id } } });
    hub.thread(number, &id).comments.push(comment);
    Ok(answer)
}

fn set_resolved(hub: &mut Hub, variables: &Value, resolved: bool, field: &str) -> Result<Value, String> {
    let id = text(variables, "threadId")?.to_owned();
    let number = thread_number(hub, &id)?;
    hub.thread(number, &id).resolved = resolved;
    Ok(json!({ field: { "thread": { "id": id, "isResolved": resolved } } }))
}

fn review_url(review: &FakeReview) -> String {
    format!("https://github.test/pull/{}#{}", review.number, review.id)
}

fn reviews_page(hub: &Hub, variables: &Value) -> Result<Value, String> {
    let pull = find_pull(hub, variables)?;
    let reviews: Vec<&FakeReview> = hub.reviews.iter().filter(|r| r.number == pull.number).collect();
    let page = page(
        hub,
        &reviews,
        variables,
        |r| json!({ "id": r.id, "body": r.body.clone().unwrap_or_default(), "state": r.state, "url": review_url(r), "viewerDidAuthor": true }),
    );
    Ok(json!({ "repository": { "pullRequest": { "reviews": page } } }))
}

fn submit_review(hub: &mut Hub, variables: &Value) -> Result<Value, String> {
    let id = text(variables, "pullRequestReviewId")?.to_owned();
    pending(hub, &id)?;
    let state = match text(variables, "event")? {
        "APPROVE" => "APPROVED",
        "COMMENT" => "COMMENTED",
        "REQUEST_CHANGES" => "CHANGES_REQUESTED",
        other => return Err(format!("Unknown event {other}")),
    };
    let body = variables.get("body").and_then(Value::as_str).map(str::to_owned);
    if body.as_ref().is_some_and(|b| b.chars().count() > BODY_LIMIT) {
        return Err("Body is too long (maximum is 65536 characters)".into());
    }
    let review = hub.reviews.iter_mut().find(|r| r.id == id).ok_or("no such review")?;
    review.state = state.into();
    review.body = body;
    let url = review_url(review);
    Ok(json!({ "submitPullRequestReview": { "pullRequestReview": { "id": id, "state": state, "url": url } } }))
}
