//! Pull-request sync against a local fake of GitHub's API
//! (`parley_tests::fake_github`): what Parley reads of a pull request, every
//! page of it, and how each way GitHub fails is told; then through the real
//! daemon and CLI, `parley pr link` and `parley pr pull` bringing review
//! threads in as threads on the same lines, once, for agents to read, and
//! `parley pr push` sending the threads made here as one review, with
//! replies and resolutions, once.

use std::path::Path;

use parley_daemon::github::{Api, GithubError, PullRequestRef, Token, remote, review};
use parley_tests::fake_github::{self, Failure, FakeGitHub};
use parley_tests::{Sandbox, git};
use serde_json::{Value, json};

fn api(fake: &FakeGitHub) -> Api {
    Api::new(&fake.url, Token::new(fake_github::TOKEN).expect("a token"))
}

fn pr(number: u64) -> PullRequestRef {
    format!("octo/app#{number}").parse().expect("a pull request")
}

#[test]
fn every_thread_and_comment_is_read_across_pages_with_sides_ranges_and_authors() {
    let fake = FakeGitHub::start();
    let ids = {
        let mut hub = fake.hub();
        hub.page_size = Some(2);
        hub.open_pull("octo", "app", 7, "abc123");
        let first = hub.add_thread(7, "src/lib.rs", 3..=5, "RIGHT", "this loop can end early", "mona");
        let second = hub.add_thread(7, "src/old.rs", 2..=2, "LEFT", "why remove this?", "hubot");
        for n in 0..4 {
            hub.reply(7, &first, &format!("reply {n}"), if n % 2 == 0 { "alice" } else { "mona" });
        }
        hub.add_thread(7, "README.md", 1..=1, "RIGHT", "typo", "mona");
        hub.converse(7, "looks good overall", "alice");
        hub.converse(7, "one more thing", "bob");
        hub.converse(7, "and another", "carol");
        (first, second)
    };
    let read = remote::fetch(&api(&fake), &pr(7)).expect("the pull request is read");
    assert_eq!(read.state, "OPEN");
    assert_eq!(read.head_oid, "abc123");
    assert_eq!(read.threads.len(), 3, "every page of threads: {:?}", read.threads);
    let first = read.threads.iter().find(|t| t.id == ids.0).expect("the first thread");
    assert_eq!((first.start_line, first.line, first.diff_side), (Some(3), Some(5), remote::DiffSide::Right));
    let bodies: Vec<&str> = first.comments.iter().map(|c| c.body.as_str()).collect();
    assert_eq!(bodies, ["this loop can end early", "reply 0", "reply 1", "reply 2", "reply 3"], "in order, every page");
    assert_eq!(first.comments[1].author, "alice");
    let second = read.threads.iter().find(|t| t.id == ids.1).expect("the left-side thread");
    assert_eq!((second.start_line, second.line, second.diff_side), (None, Some(2), remote::DiffSide::Left));
    let conversation: Vec<&str> = read.conversation.iter().map(|c| c.body.as_str()).collect();
    assert_eq!(conversation, ["looks good overall", "one more thing", "and another"]);
    let hub = fake.hub();
    assert!(
        hub.requests.iter().all(|r| r.authorization.as_deref() == Some(&format!("Bearer {}", fake_github::TOKEN))),
        "the token goes in the Authorization header of every request"
    );
    assert!(hub.operations().iter().any(|o| o == "ParleyThreadComments"), "a long thread's comments are paged");
}

#[test]
fn a_revoked_token_says_to_log_in_again() {
    let fake = FakeGitHub::start();
    fake.hub().open_pull("octo", "app", 7, "abc");
    let error = remote::fetch(&Api::new(&fake.url, Token::new("ghp_revoked").expect("a token")), &pr(7))
        .expect_err("a revoked token is refused");
    assert!(matches!(error, GithubError::Unauthorized { .. }), "{error:?}");
    assert!(error.to_string().contains("gh auth login"), "{error}");
    assert!(!error.to_string().contains("ghp_revoked"), "the token never shows: {error}");
}

#[test]
fn a_missing_pull_request_and_an_unreachable_api_are_told_apart() {
    let fake = FakeGitHub::start();
    let error = remote::fetch(&api(&fake), &pr(99)).expect_err("no such pull request");
    assert!(matches!(error, GithubError::NotFound(_)), "{error:?}");
    assert!(error.to_string().contains("octo/app#99"), "{error}");
    let gone = fake.url.clone();
    drop(fake);
    let error = remote::fetch(&Api::new(&gone, Token::new("t").expect("a token")), &pr(7)).expect_err("nobody answers");
    assert!(matches!(error, GithubError::Unreachable { .. }), "{error:?}");
    assert!(error.to_string().contains("check the network"), "{error}");
}

#[test]
fn a_rate_limit_that_resets_soon_is_waited_out_and_a_later_one_is_reported() {
    let fake = FakeGitHub::start();
    {
        let mut hub = fake.hub();
        hub.open_pull("octo", "app", 7, "abc");
        hub.add_thread(7, "a.rs", 1..=1, "RIGHT", "hello", "mona");
        hub.failures.push_back(Failure::RateLimited { reset_in: 1 });
    }
    let read = remote::fetch(&api(&fake), &pr(7)).expect("read after the reset");
    assert_eq!(read.threads.len(), 1);
    assert_eq!(
        fake.hub().operations().iter().filter(|o| *o == "ParleyPullRequestThreads").count(),
        2,
        "the refused request was sent again after the reset"
    );
    fake.hub().failures.push_back(Failure::RateLimited { reset_in: 3600 });
    let error = remote::fetch(&api(&fake), &pr(7)).expect_err("an hour away is not waited for");
    assert!(matches!(error, GithubError::RateLimited { .. }), "{error:?}");
    assert!(error.to_string().contains("rate limit is spent until"), "{error}");
    fake.hub().failures.push_back(Failure::Status { status: 502, message: "Bad Gateway".into() });
    let error = remote::fetch(&api(&fake), &pr(7)).expect_err("an outage");
    assert!(matches!(error, GithubError::Unavailable { status: 502 }), "{error:?}");
}

#[test]
fn every_graphql_document_parley_sends_is_valid_against_githubs_published_schema() {
    let modules = parley_tests::test_dep("node/node_modules/@octokit/graphql-schema/schema.json");
    let modules = modules.ancestors().nth(3).expect("the node_modules folder").to_owned();
    let all: Vec<(&str, String)> = remote::documents().into_iter().chain(review::documents()).collect();
    let documents = serde_json::to_vec(&all).expect("the documents as JSON");
    assert!(all.len() >= 10);
    let mut child = std::process::Command::new("node")
        .arg(parley_tests::repo_root().join("tests/clients/github_schema.mjs"))
        .env("PARLEY_TEST_NODE_MODULES", &modules)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run node");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), &documents).expect("write the documents");
    let output = child.wait_with_output().expect("node ends");
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "GitHub's schema refuses a document Parley sends:\n{said}");
    for (name, _) in &all {
        assert!(said.contains(&format!("valid: {name}")), "{name} was checked:\n{said}");
    }
}

/// The pull request's base, its head, and the checkout here: the head with
/// two lines added on top (not committed), so every line GitHub names has
/// moved down two.
const BASE: &str = "fn one() {}\nfn removed_later() {}\nfn two() {}\nfn three() {}\nfn four() {}\n";
const HEAD: &str = "fn one() {}\nfn two() {}\nfn three() {}\nfn four() {\n    todo!()\n}\n";

fn run_in(sandbox: &Sandbox, dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (bool, String) {
    let mut command = sandbox.command("parley");
    command.current_dir(dir).args(args).env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run parley");
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), said)
}

fn commit(repo: &Path) -> String {
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "change"]);
    let out = std::process::Command::new("git").arg("-C").arg(repo).args(["rev-parse", "HEAD"]).output().expect("git");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn threads(sandbox: &Sandbox, repo: &Path) -> Vec<Value> {
    let (ok, out) = run_in(sandbox, repo, &[], &["feedback", "list", "--all", "--json"]);
    assert!(ok, "{out}");
    serde_json::from_str::<Value>(&out).expect("JSON").as_array().cloned().expect("threads")
}

#[tokio::test]
async fn a_pull_requests_review_threads_come_in_as_threads_on_the_same_lines_once_and_agents_read_them() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", BASE)]);
    let base = commit(&repo);
    std::fs::write(repo.join("src/lib.rs"), HEAD).expect("write the head");
    let head = commit(&repo);
    std::fs::write(repo.join("src/lib.rs"), format!("// added here\n// and here\n{HEAD}")).expect("edit");
    let fake = FakeGitHub::start();
    let (moved, removed) = {
        let mut hub = fake.hub();
        hub.open_pull("octo", "app", 7, &head);
        hub.pull(7).base_oid = base.clone();
        let moved = hub.add_thread(7, "src/lib.rs", 3..=4, "RIGHT", "three and four need tests", "mona");
        hub.reply(7, &moved, "agreed, and four panics", "alice");
        let removed = hub.add_thread(7, "src/lib.rs", 2..=2, "LEFT", "why remove this?", "hubot");
        hub.add_thread(7, "src/gone.rs", 1..=1, "RIGHT", "a file this checkout lacks", "mona");
        hub.converse(7, "Thanks! A few notes inline.", "mona");
        (moved, removed)
    };
    let _daemon = sandbox.start_daemon_with(|c| {
        c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    });
    let api = [("PARLEY_GITHUB_API", fake.url.as_str())];
    let token = [("PARLEY_GITHUB_API", fake.url.as_str()), ("GITHUB_TOKEN", fake_github::TOKEN)];

    // Not linked yet: said, with what to do.
    let (ok, said) = run_in(&sandbox, &repo, &api, &["pr", "pull"]);
    assert!(!ok && said.contains("is not linked to a pull request") && said.contains("parley pr link"), "{said}");
    let (ok, said) = run_in(&sandbox, &repo, &api, &["pr", "link", "octo/app"]);
    assert!(!ok && said.contains("OWNER/REPO#NUMBER"), "a malformed pull request is refused: {said}");
    let (ok, said) = run_in(&sandbox, &repo, &api, &["pr", "link", "octo/app#7"]);
    assert!(ok && said.contains("Linked") && said.contains("octo/app#7"), "{said}");

    // No token anywhere: said, nothing changed.
    let (ok, said) = run_in(&sandbox, &repo, &api, &["pr", "pull"]);
    assert!(!ok && said.contains("gh auth login") && said.contains("GITHUB_TOKEN"), "{said}");
    assert!(threads(&sandbox, &repo).is_empty());

    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "pull"]);
    assert!(ok, "{said}");
    assert!(said.contains("2 new threads"), "{said}");
    assert!(
        said.contains("src/gone.rs") && said.contains("not in this checkout"),
        "the unplaced thread is named: {said}"
    );
    assert!(!said.contains(fake_github::TOKEN), "the token never shows: {said}");

    let found = threads(&sandbox, &repo);
    assert_eq!(found.len(), 2, "{found:#?}");
    let on = |id: &str| {
        found.iter().find(|t| t["github"]["url"].is_string() && t["comments"][0]["body"] == json!(id)).cloned()
    };
    let right = on("three and four need tests").expect("the right-side thread");
    // GitHub's lines 3-4 of the head are lines 5-6 here (two added on top).
    assert_eq!(
        (right["range"]["start"]["line"].clone(), right["range"]["end"]["line"].clone()),
        (json!(4), json!(5)),
        "{right:#}"
    );
    assert_eq!(right["quote"], json!("fn three() {}\nfn four() {"), "{right:#}");
    let authors: Vec<&Value> = right["comments"].as_array().expect("comments").iter().map(|c| &c["author"]).collect();
    assert_eq!(authors, [&json!("mona"), &json!("alice")], "replies in order with their authors");
    assert_eq!(right["github"]["pull_request"], json!("octo/app#7"));
    let left = on("why remove this?").expect("the left-side thread");
    assert_eq!(left["github"]["side"], json!("LEFT"));
    // The removed line stood before `fn two() {}`: line 4 here.
    assert_eq!(left["range"]["start"]["line"], json!(3), "{left:#}");

    // An agent reads them like any thread.
    let agent = sandbox.agent(&repo).await;
    let told = agent.call_ok("get_feedback", json!({})).await.to_string();
    assert!(told.contains("three and four need tests") && told.contains("why remove this?"), "{told}");

    // On GitHub: a reply and a resolution. Pulled again: the same threads.
    {
        let mut hub = fake.hub();
        hub.reply(7, &moved, "done in the next push", "mona");
        hub.thread(7, &removed).resolved = true;
    }
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "pull"]);
    assert!(ok && said.contains("1 reply") && said.contains("1 resolved"), "{said}");
    let again = threads(&sandbox, &repo);
    assert_eq!(again.len(), 2, "a thread pulled twice is the same thread: {again:#?}");
    let right = again.iter().find(|t| t["id"] == right["id"]).expect("the same thread");
    assert_eq!(right["comments"].as_array().map(Vec::len), Some(3));
    assert_eq!(right["comments"][2]["body"], json!("done in the next push"));
    let left = again.iter().find(|t| t["id"] == left["id"]).expect("the same thread");
    assert_eq!(left["resolved"], json!(true), "resolved on GitHub, resolved here");
    fake.hub().pull(7).state = "MERGED".into();
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "pull"]);
    assert!(ok && said.contains("nothing new"), "{said}");
    assert!(said.contains("octo/app#7 is merged: its threads stay here"), "a merged pull request is said: {said}");

    // Status: the link, the last pull, the conversation.
    let (ok, said) = run_in(&sandbox, &repo, &[], &["pr", "status"]);
    assert!(ok && said.contains("octo/app#7") && said.contains("Thanks! A few notes inline."), "{said}");
    assert!(said.contains("src/gone.rs"), "{said}");

    // A revoked token: a clear message, kept for status, nothing lost.
    let revoked = [("PARLEY_GITHUB_API", fake.url.as_str()), ("GITHUB_TOKEN", "ghp_revoked")];
    let (ok, said) = run_in(&sandbox, &repo, &revoked, &["pr", "pull"]);
    assert!(!ok && said.contains("refused the token"), "{said}");
    assert_eq!(threads(&sandbox, &repo).len(), 2);
    let (_, said) = run_in(&sandbox, &repo, &[], &["pr", "status"]);
    assert!(said.contains("The last sync failed"), "{said}");
}

#[tokio::test]
async fn a_linked_workspace_someone_works_in_is_pulled_on_its_own() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", BASE)]);
    let head = commit(&repo);
    let fake = FakeGitHub::start();
    fake.hub().open_pull("octo", "app", 7, &head);
    let _daemon = sandbox.start_daemon_with(|c| {
        c.env("PARLEY_PR_PULL_SECONDS", "1").env("GITHUB_TOKEN", fake_github::TOKEN).env_remove("GH_TOKEN");
    });
    let (ok, said) =
        run_in(&sandbox, &repo, &[("PARLEY_GITHUB_API", fake.url.as_str())], &["pr", "link", "octo/app#7"]);
    assert!(ok, "{said}");
    // A window on the workspace: from now on it is pulled every second.
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    fake.hub().add_thread(7, "src/lib.rs", 3..=3, "RIGHT", "a teammate's comment on GitHub", "mona");
    loop {
        let event = window.next_notification().await;
        if event.method == "feedback/changed" && event.params.to_string().contains("a teammate's comment on GitHub") {
            break;
        }
    }
    let (ok, said) = run_in(&sandbox, &repo, &[], &["pr", "status"]);
    assert!(ok && said.contains("Last pulled") && !said.contains("failed"), "{said}");
    // Pulled every second since: still the one thread.
    assert_eq!(threads(&sandbox, &repo).len(), 1);
}

/// The GraphQL operations that change a pull request.
const MUTATIONS: [&str; 6] = [
    "ParleyStartReview",
    "ParleyAddThread",
    "ParleyReply",
    "ParleyResolveThread",
    "ParleyUnresolveThread",
    "ParleySubmitReview",
];

fn mutations(fake: &FakeGitHub) -> Vec<String> {
    fake.hub().operations().into_iter().filter(|o| MUTATIONS.contains(&o.as_str())).collect()
}

fn add_thread(sandbox: &Sandbox, repo: &Path, place: &str, body: &str) -> String {
    let (ok, out) = run_in(sandbox, repo, &[], &["feedback", "add", place, body, "--json"]);
    assert!(ok, "{out}");
    let made: Value = serde_json::from_str(&out).expect("JSON");
    made["id"].as_str().expect("the new thread's id").to_owned()
}

#[tokio::test]
async fn threads_made_here_are_pushed_as_one_review_on_the_heads_lines_with_replies_and_resolutions_once() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", HEAD)]);
    let head = commit(&repo);
    // Here: two lines added on top and the first function renamed, none of
    // it pushed to the branch.
    let here = format!("// added here\n// and here\n{}", HEAD.replace("fn one()", "fn one_renamed()"));
    std::fs::write(repo.join("src/lib.rs"), here).expect("edit");
    let fake = FakeGitHub::start();
    let theirs = {
        let mut hub = fake.hub();
        hub.open_pull("octo", "app", 7, &head);
        hub.add_thread(7, "src/lib.rs", 6..=6, "RIGHT", "close this block", "mona")
    };
    let _daemon = sandbox.start_daemon_with(|c| {
        c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    });
    let token = [("PARLEY_GITHUB_API", fake.url.as_str()), ("GITHUB_TOKEN", fake_github::TOKEN)];
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "link", "octo/app#7"]);
    assert!(ok, "{said}");
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "pull"]);
    assert!(ok && said.contains("1 new thread"), "{said}");
    let pulled = threads(&sandbox, &repo)[0]["id"].as_str().expect("the pulled thread").to_owned();

    // Made here: a range, a thread with a reply, one on a line changed
    // here; a reply and a resolution on the pulled thread.
    add_thread(&sandbox, &repo, "src/lib.rs:4-5", "two and three need docs");
    let four = add_thread(&sandbox, &repo, "src/lib.rs:6", "four panics");
    let (ok, said) = run_in(&sandbox, &repo, &[], &["feedback", "reply", &four, "and it has no test"]);
    assert!(ok, "{said}");
    add_thread(&sandbox, &repo, "src/lib.rs:3", "rename it back");
    let (ok, said) = run_in(&sandbox, &repo, &[], &["feedback", "reply", &pulled, "fixed locally"]);
    assert!(ok, "{said}");
    let (ok, said) = run_in(&sandbox, &repo, &[], &["feedback", "resolve", &pulled]);
    assert!(ok, "{said}");

    // A dry run says exactly what would go, and sends nothing.
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "push", "--dry-run"]);
    assert!(ok, "{said}");
    assert!(said.contains("Would push to octo/app#7"), "{said}");
    assert!(said.contains("thread src/lib.rs:2-3 (RIGHT): two and three need docs"), "head lines, not ours: {said}");
    assert!(said.contains("thread src/lib.rs:4 (RIGHT): four panics"), "{said}");
    assert!(said.contains("reply on src/lib.rs: and it has no test"), "{said}");
    assert!(said.contains("reply on src/lib.rs: fixed locally"), "{said}");
    assert!(said.contains("resolve src/lib.rs"), "{said}");
    assert!(said.contains("not sent: src/lib.rs:3") && said.contains("not in the pull request's head"), "{said}");
    assert!(mutations(&fake).is_empty(), "a dry run sends nothing: {:?}", fake.hub().operations());
    assert!(fake.hub().pushed_threads(7).is_empty());

    // Pushed: one pending review, each thread on the head's lines.
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "push"]);
    assert!(ok, "{said}");
    assert!(said.contains("Pushed to octo/app#7") && said.contains("pending on GitHub"), "{said}");
    assert!(said.contains("not sent: src/lib.rs:3"), "the changed line is listed: {said}");
    {
        let hub = fake.hub();
        let pushed = hub.pushed_threads(7);
        assert_eq!(pushed.len(), 2, "{pushed:#?}");
        let range = pushed.iter().find(|t| t.comments[0].body == "two and three need docs").expect("the range");
        assert_eq!(
            (range.path.as_str(), range.start_line, range.line, range.side.as_str()),
            ("src/lib.rs", Some(2), Some(3), "RIGHT")
        );
        let single = pushed.iter().find(|t| t.comments[0].body == "four panics").expect("the single line");
        assert_eq!((single.start_line, single.line), (None, Some(4)));
        let replies: Vec<&str> = single.comments.iter().map(|c| c.body.as_str()).collect();
        assert_eq!(replies, ["four panics", "and it has no test"], "a later comment goes as a reply");
        assert_eq!(hub.reviews.len(), 1, "one review");
        assert_eq!(hub.reviews[0].state, "PENDING", "left pending without --event");
        assert_eq!(hub.reviews[0].commit, head, "on the pull request's head");
        let mona = hub.pulls[0].threads.iter().find(|t| t.id == theirs).expect("mona's thread");
        assert!(mona.resolved, "resolved here, resolved on GitHub");
        assert_eq!(mona.comments.last().map(|c| c.body.as_str()), Some("fixed locally"));
        assert_eq!(mona.comments.len(), 2);
    }

    // Pushed again: nothing goes twice; a pull finds nothing new either.
    let before = mutations(&fake).len();
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "push"]);
    assert!(ok && said.contains("Nothing new to push"), "{said}");
    assert_eq!(mutations(&fake).len(), before, "nothing is pushed twice: {:?}", mutations(&fake));
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "pull"]);
    assert!(ok && said.contains("nothing new"), "what was pushed is known: {said}");

    // Reopened here: reopened there. A new thread with --event approve joins
    // the pending review and submits it.
    let (ok, said) = run_in(&sandbox, &repo, &[], &["feedback", "reopen", &pulled]);
    assert!(ok, "{said}");
    add_thread(&sandbox, &repo, "src/lib.rs:8", "close the block");
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "push", "--event", "approve"]);
    assert!(ok, "{said}");
    assert!(said.contains("reopen src/lib.rs") && said.contains("submitted (approve)"), "{said}");
    let hub = fake.hub();
    assert_eq!(hub.reviews.len(), 1, "the pending review was added to, not a second one begun");
    assert_eq!(hub.reviews[0].state, "APPROVED");
    assert_eq!(hub.pushed_threads(7).len(), 3);
    assert!(!hub.pulls[0].threads.iter().find(|t| t.id == theirs).expect("mona's").resolved);
}

/// Runs `tests/clients/py_pull_request.py` (the official Python SDK as an
/// agent) in `repo` with the fake's token in its host's environment: it
/// syncs, finds the thread `comment`, resolves it with a note and pushes.
async fn python_agent_answers(sandbox: &Sandbox, repo: &Path, comment: &str, expect: &str) -> String {
    use parley_tests::{bin, repo_root, test_dep};
    let mut command = tokio::process::Command::new(test_dep("py/bin/python"));
    command
        .arg(repo_root().join("tests/clients/py_pull_request.py"))
        .arg(bin("parley-mcp"))
        .arg(repo)
        .args([comment, expect])
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("PARLEY_DAEMON", bin("parley"))
        .env("GITHUB_TOKEN", fake_github::TOKEN)
        // The script runs from the source tree, which must stay free of __pycache__.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), command.output())
        .await
        .expect("the Python agent finishes within 2 minutes")
        .expect("run the Python SDK script");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let totals = stdout.lines().rev().find(|l| l.ends_with(" failed")).unwrap_or("no totals line");
    assert!(
        output.status.success() && totals.ends_with(" passed, 0 failed") && !totals.starts_with("0 passed"),
        "the Python agent's scenario failed ({totals}):\n{stdout}\n{stderr}"
    );
    assert!(!stdout.contains(fake_github::TOKEN) && !stderr.contains(fake_github::TOKEN), "the token never shows");
    stdout
}

#[tokio::test]
async fn an_agent_syncs_the_pull_request_and_its_answer_goes_to_github_as_its_reply_resolved_only_when_allowed() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", HEAD)]);
    let head = commit(&repo);
    let fake = FakeGitHub::start();
    let first = {
        let mut hub = fake.hub();
        hub.open_pull("octo", "app", 7, &head);
        hub.converse(7, "Thanks! A few notes inline.", "mona");
        hub.add_thread(7, "src/lib.rs", 3..=4, "RIGHT", "three and four need tests", "mona")
    };
    // The daemon has no token of its own: the agent host's reaches it
    // through the shim.
    let _daemon = sandbox.start_daemon_with(|c| {
        c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN").env("PARLEY_GITHUB_API", &fake.url);
    });

    // Not linked: the agent is told what to do, and nothing is sent.
    let agent = sandbox.agent(&repo).await;
    let refused = agent.call_err("sync_pull_request", json!({})).await;
    assert!(refused.contains("not linked to a pull request") && refused.contains("parley pr link"), "{refused}");
    let refused = agent.call_err("sync_pull_request", json!({"direction": "sideways"})).await;
    assert!(refused.contains("unknown variant `sideways`"), "{refused}");
    drop(agent);
    let (ok, said) =
        run_in(&sandbox, &repo, &[("PARLEY_GITHUB_API", fake.url.as_str())], &["pr", "link", "octo/app#7"]);
    assert!(ok, "{said}");
    // No token anywhere, then GitHub failing: said, with what to do.
    let agent = sandbox.agent_with(&repo, &[("GITHUB_TOKEN", "")]).await;
    let refused = agent.call_err("sync_pull_request", json!({})).await;
    assert!(refused.contains("the pull failed") && refused.contains("gh auth login"), "{refused}");
    drop(agent);
    let agent = sandbox.agent_with(&repo, &[("GITHUB_TOKEN", fake_github::TOKEN)]).await;
    fake.hub().failures.push_back(Failure::Status { status: 502, message: "Bad Gateway".into() });
    let refused = agent.call_err("sync_pull_request", json!({})).await;
    assert!(refused.contains("the pull failed") && refused.contains("502"), "{refused}");
    assert!(!refused.contains(fake_github::TOKEN), "{refused}");
    drop(agent);
    assert!(threads(&sandbox, &repo).is_empty(), "nothing half-done");

    // A cloned repository's config tries to let agents resolve: ignored, and
    // the agent's push says so.
    std::fs::write(repo.join(".parley.toml"), "[pull_requests]\nagents_may_resolve = true\n").expect("repo config");
    let said = python_agent_answers(&sandbox, &repo, "three and four need tests", "left-open").await;
    assert!(said.contains("Parley ignored pull_requests.agents_may_resolve"), "{said}");
    let attributed = "**parley-py-sdk-test** (agent, via Parley): Covered both cases with tests in the last commit.";
    {
        let hub = fake.hub();
        let thread = hub.pulls[0].threads.iter().find(|t| t.id == first).expect("mona's thread");
        let bodies: Vec<&str> = thread.comments.iter().map(|c| c.body.as_str()).collect();
        assert_eq!(bodies, ["three and four need tests", attributed], "one reply, the agent's, named");
        assert!(!thread.resolved, "left open on GitHub for mona");
    }
    assert!(
        !mutations(&fake).iter().any(|m| m == "ParleyResolveThread"),
        "no resolve was sent: {:?}",
        mutations(&fake)
    );
    let (ok, said) = run_in(&sandbox, &repo, &[], &["pr", "status"]);
    assert!(ok && said.contains("left open on GitHub for its author: src/lib.rs"), "{said}");
    assert!(said.contains("agents_may_resolve = true"), "what would change it is said: {said}");
    assert!(said.contains("Nothing waits to be pushed"), "the thread left open does not wait: {said}");
    // Pushed again from the terminal: the reply is not sent twice.
    let token = [("PARLEY_GITHUB_API", fake.url.as_str()), ("GITHUB_TOKEN", fake_github::TOKEN)];
    let before = mutations(&fake).len();
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "push"]);
    assert!(ok && said.contains("left open on GitHub"), "{said}");
    assert_eq!(mutations(&fake).len(), before, "{:?}", mutations(&fake));

    // The person's own config lets agents resolve: the next answer resolves.
    std::fs::remove_file(repo.join(".parley.toml")).expect("rm");
    let config = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("config.toml"), "[pull_requests]\nagents_may_resolve = true\n").expect("user config");
    let second = fake.hub().add_thread(7, "src/lib.rs", 1..=1, "RIGHT", "rename one", "alice");
    python_agent_answers(&sandbox, &repo, "rename one", "resolved").await;
    {
        let hub = fake.hub();
        let thread = hub.pulls[0].threads.iter().find(|t| t.id == second).expect("alice's thread");
        assert!(thread.resolved, "resolved on GitHub by the agent, as the person allows");
        assert_eq!(thread.comments.len(), 2, "{:?}", thread.comments);
        assert!(thread.comments[1].body.starts_with("**parley-py-sdk-test** (agent, via Parley): "));
    }

    // An agent's plain reply is marked as the agent's; a person's is sent as
    // written; the agent having read a thread sends nothing.
    let third = fake.hub().add_thread(7, "src/lib.rs", 2..=2, "RIGHT", "why two?", "bob");
    let agent = sandbox.agent_with(&repo, &[("GITHUB_TOKEN", fake_github::TOKEN)]).await;
    let synced = agent.call_ok("sync_pull_request", json!({"direction": "pull"})).await;
    assert_eq!(synced["pulled"]["newThreads"], json!(1), "{synced:#}");
    let listed = agent.call_ok("get_feedback", json!({})).await;
    let id = listed["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .find(|t| t["comments"][0]["body"] == json!("why two?"))
        .and_then(|t| t["id"].as_str())
        .expect("bob's thread, read (seen) by the agent")
        .to_owned();
    let before = mutations(&fake).len();
    let synced = agent.call_ok("sync_pull_request", json!({"direction": "push"})).await;
    assert_eq!(synced["pushed"]["replies"], json!(0), "seen sends nothing: {synced:#}");
    assert_eq!(mutations(&fake).len(), before, "{:?}", mutations(&fake));
    agent.call_ok("reply_feedback", json!({"threadId": id, "body": "two is the base case"})).await;
    let (ok, said) = run_in(&sandbox, &repo, &[], &["feedback", "reply", &id, "fine by me"]);
    assert!(ok, "{said}");
    let synced = agent.call_ok("sync_pull_request", json!({})).await;
    assert_eq!(synced["pushed"]["replies"], json!(2), "{synced:#}");
    let hub = fake.hub();
    let thread = hub.pulls[0].threads.iter().find(|t| t.id == third).expect("bob's thread");
    let bodies: Vec<&str> = thread.comments.iter().map(|c| c.body.as_str()).collect();
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    assert!(
        bodies[1].starts_with("**") && bodies[1].ends_with("** (agent, via Parley): two is the base case"),
        "{bodies:?}"
    );
    assert_eq!(bodies[2], "fine by me", "a person's reply goes as written");
    assert!(!thread.resolved);
}

/// A file before and after its commit is amended and force-pushed: `parse`
/// moved to the end, `render` rewritten as `draw`, `teardown` moved up.
const BEFORE_FORCE_PUSH: &str = "fn setup() {}\n\nfn parse(input: &str) -> u32 {\n    input.len() as u32\n}\n\nfn render() {\n    println!(\"hi\");\n}\n\nfn teardown() {}\n";
const AFTER_FORCE_PUSH: &str = "fn setup() {}\n\nfn draw() {\n    eprintln!(\"drawn\");\n}\n\nfn teardown() {}\n\nfn parse(input: &str) -> u32 {\n    input.len() as u32\n}\n";

fn head_of(repo: &Path) -> String {
    let out = std::process::Command::new("git").arg("-C").arg(repo).args(["rev-parse", "HEAD"]).output().expect("git");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn lines_of(thread: &Value) -> (Value, Value) {
    (thread["range"]["start"]["line"].clone(), thread["range"]["end"]["line"].clone())
}

fn by_body<'a>(threads: &'a [Value], body: &str) -> &'a Value {
    threads.iter().find(|t| t["comments"][0]["body"] == json!(body)).unwrap_or_else(|| panic!("{body}: {threads:#?}"))
}

#[tokio::test]
async fn after_a_force_push_threads_are_placed_by_their_text_and_those_whose_text_is_gone_are_outdated() {
    let sandbox = Sandbox::new();
    // The author's branch, pushed: a teammate clones it.
    let author = sandbox.repo("app", &[("src/lib.rs", BEFORE_FORCE_PUSH)]);
    let first = commit(&author);
    let teammate = author.parent().expect("the sandbox").join("teammate");
    git(&author, &["clone", "-q", ".", teammate.to_str().expect("a UTF-8 path")]);
    let fake = FakeGitHub::start();
    let teardown = {
        let mut hub = fake.hub();
        hub.open_pull("octo", "app", 7, &first);
        let hunk = |line| fake_github::hunk_of_new_file(BEFORE_FORCE_PUSH, line);
        hub.add_thread_at(7, "src/lib.rs", 3..=4, "parse counts bytes", "mona", &first, &hunk(4));
        hub.add_thread_at(7, "src/lib.rs", 8..=8, "say more than hi", "mona", &first, &hunk(8));
        hunk(11)
    };
    let _daemon = sandbox.start_daemon_with(|c| {
        c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    });
    let token = [("PARLEY_GITHUB_API", fake.url.as_str()), ("GITHUB_TOKEN", fake_github::TOKEN)];
    let (ok, said) = run_in(&sandbox, &teammate, &token, &["pr", "link", "octo/app#7"]);
    assert!(ok, "{said}");
    // The teammate pulls a thread on teardown before the force-push.
    fake.hub().add_thread_at(7, "src/lib.rs", 11..=11, "teardown leaks", "alice", &first, &teardown);
    let (ok, said) = run_in(&sandbox, &teammate, &token, &["pr", "pull"]);
    assert!(ok && said.contains("3 new threads"), "{said}");
    let pulled = threads(&sandbox, &teammate);
    assert_eq!(lines_of(by_body(&pulled, "teardown leaks")), (json!(10), json!(10)));

    // The author rewrites history and force-pushes; GitHub marks the threads
    // outdated and keeps their original lines and hunks.
    std::fs::write(author.join("src/lib.rs"), AFTER_FORCE_PUSH).expect("rewrite");
    git(&author, &["add", "-A"]);
    git(&author, &["commit", "-q", "--amend", "-m", "rewritten"]);
    let rewritten = head_of(&author);
    assert_ne!(rewritten, first);
    fake.hub().force_push(7, &rewritten);

    // The teammate takes the rewritten branch and pulls: the thread pulled
    // before is on teardown's new line, outdated as GitHub says.
    git(&teammate, &["fetch", "-q", "origin"]);
    git(&teammate, &["reset", "-q", "--hard", &rewritten]);
    let (ok, said) = run_in(&sandbox, &teammate, &token, &["pr", "pull"]);
    assert!(ok && said.contains("3 outdated"), "{said}");
    let pulled = threads(&sandbox, &teammate);
    assert_eq!(pulled.len(), 3, "nothing pulled twice: {pulled:#?}");
    let moved = by_body(&pulled, "teardown leaks");
    assert_eq!(lines_of(moved), (json!(6), json!(6)), "on teardown's new line: {moved:#}");
    assert_eq!(moved["quote"], json!("fn teardown() {}"));
    assert_eq!(moved["github"]["outdated"], json!(true));

    // Someone who clones after the force-push has no trace of the first
    // commit: the threads land by the text of their hunks.
    let newcomer = author.parent().expect("the sandbox").join("newcomer");
    // (`--no-local`: fetched as from a server, only what the branch reaches.)
    git(&author, &["clone", "-q", "--no-local", ".", newcomer.to_str().expect("a UTF-8 path")]);
    let missing = std::process::Command::new("git")
        .arg("-C")
        .arg(&newcomer)
        .args(["cat-file", "-e", &first])
        .status()
        .expect("git");
    assert!(!missing.success(), "the first commit is not in the new clone");
    let (ok, said) = run_in(&sandbox, &newcomer, &token, &["pr", "link", "octo/app#7"]);
    assert!(ok, "{said}");
    let (ok, said) = run_in(&sandbox, &newcomer, &token, &["pr", "pull"]);
    assert!(ok && said.contains("3 new threads"), "{said}");
    assert!(
        said.contains("outdated: src/lib.rs:9") && said.contains("its text is no longer in the file"),
        "the thread whose text is gone is listed: {said}"
    );
    let placed = threads(&sandbox, &newcomer);
    let parse_thread = by_body(&placed, "parse counts bytes");
    assert_eq!(lines_of(parse_thread), (json!(8), json!(9)), "on parse where it moved: {parse_thread:#}");
    assert_eq!(parse_thread["quote"], json!("fn parse(input: &str) -> u32 {\n    input.len() as u32"));
    assert_eq!(parse_thread["github"]["outdated"], json!(true));
    assert_eq!(lines_of(by_body(&placed, "teardown leaks")), (json!(6), json!(6)));
    let gone = by_body(&placed, "say more than hi");
    // Line 8 is blank now: the line of text after it.
    assert_eq!(lines_of(gone), (json!(8), json!(8)), "near where it was: {gone:#}");
    assert_eq!(gone["github"]["outdated"], json!(true));
    let (_, said) = run_in(&sandbox, &newcomer, &[], &["pr", "status"]);
    assert!(said.contains("Outdated: src/lib.rs:9"), "status lists it too: {said}");

    // Pulled again: the same threads, nothing new.
    let (ok, said) = run_in(&sandbox, &newcomer, &token, &["pr", "pull"]);
    assert!(ok && said.contains("nothing new"), "{said}");
    assert_eq!(threads(&sandbox, &newcomer).len(), 3);
}

#[tokio::test]
async fn a_pull_request_with_two_thousand_threads_is_pulled_whole_once() {
    let sandbox = Sandbox::new();
    let text: String = (1..=200).map(|n| format!("fn f{n}() {{}}\n")).collect();
    let repo = sandbox.repo("app", &[("src/lib.rs", &text)]);
    let head = commit(&repo);
    let fake = FakeGitHub::start();
    {
        let mut hub = fake.hub();
        hub.open_pull("octo", "app", 7, &head);
        hub.add_many_threads(7, "src/lib.rs", 200, 2_000, 1);
        // Three long discussions: their comments come in pages of 100 too.
        let long: Vec<String> = hub.pull(7).threads.iter().take(3).map(|t| t.id.clone()).collect();
        for id in &long {
            for n in 0..150 {
                hub.reply(7, id, &format!("more {n}"), "bob");
            }
        }
    }
    let _daemon = sandbox.start_daemon_with(|c| {
        c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    });
    let token = [("PARLEY_GITHUB_API", fake.url.as_str()), ("GITHUB_TOKEN", fake_github::TOKEN)];
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "link", "octo/app#7"]);
    assert!(ok, "{said}");
    let started = std::time::Instant::now();
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "pull"]);
    let took = started.elapsed();
    assert!(ok && said.contains("2000 new threads"), "{said}");
    println!("pulling 2,000 threads (4,450 comments) took {took:?}");
    {
        let hub = fake.hub();
        let pages = hub.operations().iter().filter(|o| *o == "ParleyPullRequestThreads").count();
        assert_eq!(pages, 20, "threads are read 100 at a time");
        let sizes: Vec<u64> = hub
            .requests
            .iter()
            .filter(|r| r.operation.as_deref() == Some("ParleyThreadComments"))
            .map(|r| r.body["after"].as_str().and_then(|a| a.parse().ok()).unwrap_or(0))
            .collect();
        assert_eq!(sizes, [100, 100, 100], "each long discussion's second page of comments is read");
    }
    let pulled = threads(&sandbox, &repo);
    assert_eq!(pulled.len(), 2_000, "each thread once");
    let note = by_body(&pulled, "note 1234");
    assert_eq!(lines_of(note), (json!(34), json!(34)), "on its line: {note:#}");
    let long = by_body(&pulled, "note 0");
    let comments = long["comments"].as_array().expect("comments");
    assert_eq!(comments.len(), 152, "every comment of a long discussion");
    assert_eq!(comments[151]["body"], json!("more 149"), "in order");

    let started = std::time::Instant::now();
    let (ok, said) = run_in(&sandbox, &repo, &token, &["pr", "pull"]);
    println!("pulling it again took {:?}", started.elapsed());
    assert!(ok && said.contains("nothing new"), "a second pull adds nothing: {said}");
    assert_eq!(threads(&sandbox, &repo).len(), 2_000);
}

/// What the real-repository test made on GitHub, deleted when it ends,
/// passed or failed: its review comments and any review left pending.
struct MadeOnGithub {
    api: Api,
    pull_request: PullRequestRef,
    body: String,
}

impl Drop for MadeOnGithub {
    fn drop(&mut self) {
        if let Ok(Some(review)) = review::pending_review(&self.api, &self.pull_request) {
            let deleted = self.api.graphql(
                "mutation ParleyE2eDeleteReview($id: ID!) { deletePullRequestReview(input: {pullRequestReviewId: $id}) { clientMutationId } }",
                json!({ "id": review }),
            );
            if let Err(e) = deleted {
                eprintln!("could not delete the pending review {review}: {e}; delete it on GitHub");
            }
        }
        let Ok(read) = remote::fetch(&self.api, &self.pull_request) else { return };
        for thread in read.threads.iter().filter(|t| t.comments.first().is_some_and(|c| c.body == self.body)) {
            for comment in &thread.comments {
                let deleted = self.api.graphql(
                    "mutation ParleyE2eDeleteComment($id: ID!) { deletePullRequestReviewComment(input: {id: $id}) { clientMutationId } }",
                    json!({ "id": comment.id }),
                );
                if let Err(e) = deleted {
                    eprintln!("could not delete the comment {}: {e}; delete it on GitHub", comment.url);
                }
            }
        }
    }
}

/// The first added line with text in `diff` (`git diff --unified=0`): its
/// path and 1-based line.
fn first_added_line(diff: &str) -> Option<(String, u32)> {
    let (mut path, mut line) = (None::<String>, 0u32);
    for text in diff.lines() {
        if let Some(name) = text.strip_prefix("+++ ") {
            path = name.strip_prefix("b/").map(str::to_owned);
        } else if let Some(header) = text.strip_prefix("@@ ") {
            let new = header.split(' ').nth(1)?.trim_start_matches('+');
            line = new.split(',').next()?.parse().ok()?;
        } else if let Some(added) = text.strip_prefix('+') {
            if !added.trim().is_empty() && path.is_some() {
                return Some((path?, line));
            }
            line += 1;
        }
    }
    None
}

/// Against a real repository, for a person to run (never in CI):
/// `PARLEY_E2E_GITHUB=owner/repo` (with `gh` logged in or `GITHUB_TOKEN`),
/// optionally `PARLEY_E2E_GITHUB_PR=N`. It links an open pull request,
/// pulls it, pushes one thread on an added line as a comment review, pulls
/// it back as the same thread, resolves it from here, and deletes what it
/// made on GitHub.
#[tokio::test]
async fn against_a_real_repository_a_thread_goes_there_comes_back_the_same_and_is_resolved() {
    let Some(repository) = std::env::var("PARLEY_E2E_GITHUB").ok().filter(|v| !v.trim().is_empty()) else {
        println!(
            "skipped: set PARLEY_E2E_GITHUB=owner/repo (with `gh auth login` done, or GITHUB_TOKEN set; \
             PARLEY_E2E_GITHUB_PR=N picks the pull request) to run this test against a real repository"
        );
        return;
    };
    let (owner, name) = repository.split_once('/').expect("PARLEY_E2E_GITHUB is owner/repo");
    let token = std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty()).or_else(|| {
        let out = std::process::Command::new("gh").args(["auth", "token"]).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    });
    let token = token.expect("no token: run `gh auth login`, or set GITHUB_TOKEN");
    let api_root = std::env::var("PARLEY_GITHUB_API").unwrap_or_else(|_| "https://api.github.com".into());
    let api = Api::new(&api_root, Token::new(token.clone()).expect("a token"));
    let number = match std::env::var("PARLEY_E2E_GITHUB_PR").ok() {
        Some(n) => n.parse::<u64>().expect("PARLEY_E2E_GITHUB_PR is a number"),
        None => {
            let open = api
                .graphql(
                    "query ParleyE2eOpen($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { pullRequests(states: OPEN, first: 1, orderBy: {field: UPDATED_AT, direction: DESC}) { nodes { number } } } }",
                    json!({ "owner": owner, "name": name }),
                )
                .expect("the repository's pull requests");
            let number = open.pointer("/repository/pullRequests/nodes/0/number").and_then(Value::as_u64);
            number.unwrap_or_else(|| {
                panic!("{repository} has no open pull request: open one, or set PARLEY_E2E_GITHUB_PR")
            })
        }
    };
    let pull_request: PullRequestRef = format!("{repository}#{number}").parse().expect("a pull request");
    let before = remote::fetch(&api, &pull_request).expect("the pull request is read");

    // A checkout of the pull request's head, fetched with the token given
    // to git in its environment only.
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("checkout", &[]);
    let host = parley_daemon::github::api::web_host_of(&api_root);
    let fetch = |refspec: &str| {
        let status = std::process::Command::new("git")
            .current_dir(&repo)
            .args(["-c", "credential.helper=", "-c"])
            .arg("credential.helper=!f() { echo username=x-access-token; echo \"password=$PARLEY_E2E_TOKEN\"; }; f")
            .args(["fetch", "-q", &format!("https://{host}/{repository}.git"), refspec])
            .env("PARLEY_E2E_TOKEN", &token)
            .env("GIT_TERMINAL_PROMPT", "0")
            .status()
            .expect("git fetch");
        assert!(status.success(), "git could not fetch {refspec} of {repository}");
    };
    fetch(&format!("+refs/pull/{number}/head:refs/parley/head"));
    fetch(&format!("+{}:refs/parley/base", before.base_oid));
    git(&repo, &["checkout", "-q", "refs/parley/head"]);
    let diff = std::process::Command::new("git")
        .current_dir(&repo)
        .args(["diff", "--unified=0", "refs/parley/base...refs/parley/head"])
        .output()
        .expect("git diff");
    let (path, line) = first_added_line(&String::from_utf8_lossy(&diff.stdout))
        .unwrap_or_else(|| panic!("{pull_request} adds no line with text: pick another with PARLEY_E2E_GITHUB_PR"));

    let _daemon = sandbox.start_daemon_with(|c| {
        c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    });
    let env = [("PARLEY_GITHUB_API", api_root.as_str()), ("GITHUB_TOKEN", token.as_str())];
    let (ok, said) = run_in(&sandbox, &repo, &env, &["pr", "link", &pull_request.to_string()]);
    assert!(ok, "{said}");
    let (ok, said) = run_in(&sandbox, &repo, &env, &["pr", "pull"]);
    assert!(ok, "{said}");
    let pulled = threads(&sandbox, &repo).len();

    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("the clock").as_nanos();
    let body = format!("Parley's end-to-end check {stamp}: deleted when the test ends");
    let _made = MadeOnGithub { api: api.clone(), pull_request: pull_request.clone(), body: body.clone() };
    let id = add_thread(&sandbox, &repo, &format!("{path}:{line}"), &body);
    let (ok, said) = run_in(&sandbox, &repo, &env, &["pr", "push", "--event", "comment"]);
    assert!(ok && said.contains("submitted (comment)"), "{said}");

    // Pulled back: the same thread, nothing doubled.
    let (ok, said) = run_in(&sandbox, &repo, &env, &["pr", "pull"]);
    assert!(ok, "{said}");
    let after = threads(&sandbox, &repo);
    assert_eq!(after.len(), pulled + 1, "the pushed thread came back as itself: {said}");
    let ours = after.iter().find(|t| t["id"] == json!(id)).expect("the thread made here");
    assert!(ours["github"]["url"].as_str().is_some_and(|u| u.contains(&host)), "{ours:#}");
    let read = remote::fetch(&api, &pull_request).expect("the pull request is read");
    let there = read.threads.iter().find(|t| t.comments[0].body == body).expect("the thread is on GitHub");
    assert_eq!((there.path.as_str(), there.line), (path.as_str(), Some(line)));

    // Resolved here, resolved there.
    let (ok, said) = run_in(&sandbox, &repo, &[], &["feedback", "resolve", &id]);
    assert!(ok, "{said}");
    let (ok, said) = run_in(&sandbox, &repo, &env, &["pr", "push"]);
    assert!(ok && said.contains("resolve"), "{said}");
    let read = remote::fetch(&api, &pull_request).expect("the pull request is read");
    assert!(read.threads.iter().any(|t| t.comments[0].body == body && t.is_resolved), "resolved on GitHub");
}

/// A repository with `src/lib.rs` committed as the pull request's head, a
/// daemon without a token of its own, linked to `octo/app#7` on the fake;
/// the environment that gives the CLI the fake and its token.
struct Linked {
    // Dropped in this order: the daemon stops before its folder goes.
    _daemon: parley_tests::DaemonProcess,
    fake: FakeGitHub,
    repo: std::path::PathBuf,
    sandbox: Sandbox,
}

impl Linked {
    fn env(&self) -> [(&str, &str); 2] {
        [("PARLEY_GITHUB_API", self.fake.url.as_str()), ("GITHUB_TOKEN", fake_github::TOKEN)]
    }

    fn run(&self, args: &[&str]) -> (bool, String) {
        run_in(&self.sandbox, &self.repo, &self.env(), args)
    }

    fn ok(&self, args: &[&str]) -> String {
        let (ok, said) = self.run(args);
        assert!(ok, "parley {args:?} failed: {said}");
        said
    }
}

fn linked_to_a_pull_request(files: &[(&str, &str)]) -> Linked {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", files);
    let head = commit(&repo);
    let fake = FakeGitHub::start();
    fake.hub().open_pull("octo", "app", 7, &head);
    let daemon = sandbox.start_daemon_with(|c| {
        c.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
    });
    let linked = Linked { _daemon: daemon, fake, repo, sandbox };
    linked.ok(&["pr", "link", "octo/app#7"]);
    linked
}

fn pr_status_json(linked: &Linked) -> Value {
    serde_json::from_str(&linked.ok(&["pr", "status", "--json"])).expect("JSON")
}

#[tokio::test]
async fn a_push_cut_off_halfway_resumes_into_the_same_review_and_adopts_what_github_already_took() {
    let linked = linked_to_a_pull_request(&[("src/lib.rs", HEAD)]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    let first = add_thread(sandbox, repo, "src/lib.rs:1", "one needs a doc");
    add_thread(sandbox, repo, "src/lib.rs:2", "two is unused");
    add_thread(sandbox, repo, "src/lib.rs:3", "three shadows two");
    fake.hub().fail_nth("ParleyAddThread", 2, Failure::Status { status: 502, message: "Bad Gateway".into() });

    // The second thread fails: a clear error; the first keeps GitHub's id.
    let (ok, said) = linked.run(&["pr", "push"]);
    assert!(!ok, "{said}");
    assert!(said.contains("502"), "the failure says what GitHub answered: {said}");
    assert_eq!(fake.hub().pushed_threads(7).len(), 1);
    let kept = threads(sandbox, repo).into_iter().find(|t| t["id"] == first.as_str()).expect("the first thread");
    let first_url = fake.hub().pushed_threads(7)[0].comments[0].database_id.to_string();
    assert!(kept["github"]["url"].as_str().is_some_and(|u| u.ends_with(&first_url)), "{kept:#}");
    let status = pr_status_json(&linked);
    assert!(status["linked"]["last_error"].as_str().is_some_and(|e| e.contains("502")), "{status:#}");
    assert_eq!(status["linked"]["waiting"]["threads"], 2, "two threads wait: {status:#}");
    let said = linked.ok(&["pr", "status"]);
    assert!(said.contains("Waiting to be pushed: 2 new threads"), "{said}");

    // The next push sends only the rest, into the same pending review.
    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("two is unused") && said.contains("three shadows two"), "{said}");
    assert!(!said.contains("one needs a doc"), "the first is not sent again: {said}");
    {
        let hub = fake.hub();
        let pushed = hub.pushed_threads(7);
        let bodies: Vec<&str> = pushed.iter().map(|t| t.comments[0].body.as_str()).collect();
        assert_eq!(bodies, ["one needs a doc", "two is unused", "three shadows two"], "exactly 3 threads");
        assert_eq!(hub.reviews.len(), 1, "one pending review");
        assert!(pushed.iter().all(|t| t.review.as_deref() == Some(hub.reviews[0].id.as_str())));
    }

    // GitHub takes the fourth thread but its answer is lost: the next push
    // finds it in the pull request and ties it to the thread here.
    add_thread(sandbox, repo, "src/lib.rs:4", "four has no test");
    fake.hub().fail_nth_after_applying(
        "ParleyAddThread",
        1,
        Failure::Status { status: 502, message: "Bad Gateway".into() },
    );
    let (ok, said) = linked.run(&["pr", "push"]);
    assert!(!ok, "{said}");
    assert_eq!(fake.hub().pushed_threads(7).len(), 4, "GitHub has it");
    let adds = |fake: &FakeGitHub| fake.hub().operations().iter().filter(|o| *o == "ParleyAddThread").count();
    let before = adds(fake);
    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("1 thread was already on GitHub"), "{said}");
    assert_eq!(adds(fake), before, "not sent again");
    assert_eq!(fake.hub().pushed_threads(7).len(), 4);
    let said = linked.ok(&["pr", "pull"]);
    assert!(said.contains("nothing new"), "the adopted thread is known: {said}");
    assert_eq!(threads(sandbox, repo).len(), 4);

    // A reply on a thread still in the pending review goes into it.
    linked.ok(&["feedback", "reply", &first, "and a test"]);
    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("reply on src/lib.rs: and a test"), "{said}");
    {
        let hub = fake.hub();
        let reply = hub.requests.iter().rev().find(|r| r.operation.as_deref() == Some("ParleyReply")).expect("sent");
        assert_eq!(reply.body["pullRequestReviewId"], hub.reviews[0].id.as_str(), "in the pending review");
        let one = &hub.pushed_threads(7)[0];
        assert_eq!(one.comments.iter().map(|c| c.body.as_str()).collect::<Vec<_>>(), ["one needs a doc", "and a test"]);
    }

    // `pr status` tells the last push and that nothing waits.
    let said = linked.ok(&["pr", "status"]);
    assert!(said.contains("Last pushed") && said.contains("1 reply"), "{said}");
    assert!(said.contains("Nothing waits to be pushed"), "{said}");
    let status = pr_status_json(&linked);
    assert_eq!(status["linked"]["last_push"]["replies"], 1, "{status:#}");
    assert_eq!(status["linked"]["waiting"], json!({ "threads": 0, "replies": 0, "resolutions": 0 }));

    // Submitted: the review's threads take replies on their own again.
    linked.ok(&["pr", "push", "--event", "comment"]);
    assert_eq!(fake.hub().reviews[0].state, "COMMENTED");
    let said = linked.ok(&["pr", "status"]);
    assert!(said.contains("submitted (comment)"), "{said}");
    linked.ok(&["feedback", "reply", &first, "done"]);
    linked.ok(&["pr", "push"]);
    let hub = fake.hub();
    let reply = hub.requests.iter().rev().find(|r| r.operation.as_deref() == Some("ParleyReply")).expect("sent");
    assert_eq!(reply.body["pullRequestReviewId"], Value::Null, "a submitted thread's reply stands alone");
    assert_eq!(hub.pushed_threads(7)[0].comments.len(), 3);
}

#[tokio::test]
async fn a_persons_round_is_pushed_once_as_a_review_with_its_verdict_its_findings_on_their_lines_and_the_rest_in_the_body()
 {
    let linked = linked_to_a_pull_request(&[("notes.txt", "one\ntwo\nthree\nfour\n")]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    std::fs::write(repo.join("notes.txt"), "one\nthree\nfour point zero\nfive\n").expect("edit");
    let agent = sandbox.agent(repo).await;
    let id = agent.ask_a_person(json!({ "summary": "Tidied the notes" })).await;
    let number = id.rsplit('-').next().expect("an id has dashes").to_owned();
    linked.ok(&["review", "comment", &number, "notes.txt:3", "Keep it short"]);
    linked.ok(&["review", "comment", &number, "notes.txt:4", "Five needs a test"]);
    linked.ok(&["review", "submit", &number, "--request-changes", "-m", "Two things"]);
    // The change is pushed to the branch; then line 4 is changed again here.
    let head = commit(repo);
    fake.hub().pull(7).head_oid = head.clone();
    std::fs::write(repo.join("notes.txt"), "one\nthree\nfour point zero\nfive!\n").expect("edit again");

    let said = linked.ok(&["pr", "push", "--review", &number, "--dry-run"]);
    assert!(said.contains(&format!("Would push {id} round 1 to octo/app#7 as a review (request-changes)")), "{said}");
    assert!(said.contains("comment notes.txt:3: Keep it short"), "{said}");
    assert!(said.contains("in the body, not on a line: notes.txt:4"), "{said}");
    assert!(said.contains("Two things"), "the summary is the body: {said}");
    assert!(mutations(fake).is_empty(), "a dry run sends nothing: {:?}", mutations(fake));

    let said = linked.ok(&["pr", "push", "--review", &number]);
    assert!(said.contains(&format!("Pushed {id} round 1 to octo/app#7 as a review (request-changes)")), "{said}");
    {
        let hub = fake.hub();
        assert_eq!(hub.reviews.len(), 1);
        let review = &hub.reviews[0];
        assert_eq!((review.state.as_str(), review.commit.as_str()), ("CHANGES_REQUESTED", head.as_str()));
        let body = review.body.as_deref().unwrap_or_default();
        assert!(body.starts_with("Two things"), "{body}");
        assert!(body.contains("`notes.txt:4`") && body.contains("Five needs a test"), "the unplaced finding: {body}");
        assert!(!body.contains("Keep it short"), "a finding on a line is not repeated in the body: {body}");
        let pushed = hub.pushed_threads(7);
        assert_eq!(pushed.len(), 1, "{pushed:#?}");
        assert_eq!((pushed[0].path.as_str(), pushed[0].line, pushed[0].side.as_str()), ("notes.txt", Some(3), "RIGHT"));
        assert_eq!(pushed[0].comments[0].body, "Keep it short");
    }

    // Asked again: said, and nothing sent.
    let before = mutations(fake).len();
    let (ok, said) = linked.run(&["pr", "push", "--review", &number]);
    assert!(!ok && said.contains("already pushed") && said.contains("nothing was sent again"), "{said}");
    assert_eq!(mutations(fake).len(), before);
    let said = linked.ok(&["pr", "status"]);
    assert!(
        said.contains(&format!("{id} round 1, 1 thread, 1 not sent; the review was submitted (request-changes)")),
        "{said}"
    );
    let status = pr_status_json(&linked);
    assert_eq!(status["linked"]["last_push"]["round"], format!("{id} round 1"), "{status:#}");
    assert_eq!(status["linked"]["last_push"]["event"], "request-changes");
    // The finding's thread is synced: an ordinary push does not send it again.
    linked.ok(&["pr", "push"]);
    assert_eq!(fake.hub().pushed_threads(7).len(), 1);

    let (ok, said) = linked.run(&["pr", "push", "--review", &number, "--round", "4"]);
    assert!(!ok && said.contains("has rounds 1 to 1, not 4"), "{said}");

    // A person's comment, with a comment of their own on a line, goes to
    // GitHub as a comment: neither an approval nor a request for changes.
    let again = agent.ask_a_person(json!({ "summary": "Shorter", "previous_review_id": id })).await;
    assert_eq!(again, id, "the same review, round 2");
    linked.ok(&["review", "comment", &number, "notes.txt:1", "One is fine"]);
    linked.ok(&["review", "submit", &number, "--comment", "-m", "A thought"]);
    let said = linked.ok(&["pr", "push", "--review", &number]);
    assert!(said.contains(&format!("Pushed {id} round 2 to octo/app#7 as a review (comment)")), "{said}");
    let hub = fake.hub();
    assert_eq!(hub.reviews.len(), 2);
    assert_eq!(hub.reviews[1].state, "COMMENTED");
}

#[tokio::test]
async fn a_comment_over_githubs_size_limit_is_listed_as_not_sent_and_the_rest_goes() {
    let linked = linked_to_a_pull_request(&[("src/lib.rs", HEAD)]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    fake.hub().add_thread(7, "src/lib.rs", 1..=1, "RIGHT", "close this", "mona");
    linked.ok(&["pr", "pull"]);
    let mona = threads(sandbox, repo)[0]["id"].as_str().expect("the pulled thread").to_owned();
    linked.ok(&["feedback", "reply", &mona, "will be long"]);
    linked.ok(&["feedback", "reply", &mona, "short after it"]);
    add_thread(sandbox, repo, "src/lib.rs:2", "will be long too");
    add_thread(sandbox, repo, "src/lib.rs:3", "fine");
    // A store written before Parley's own limit, or a comment grown on its
    // way out: put back through an export, 70,000 characters each.
    let work = sandbox.dir.path();
    linked.ok(&["export", &work.join("out.json").display().to_string()]);
    let mut export: Value =
        serde_json::from_slice(&std::fs::read(work.join("out.json")).expect("exported")).expect("JSON");
    let long = "x".repeat(70_000);
    for thread in export["threads"].as_array_mut().expect("threads") {
        for comment in thread["comments"].as_array_mut().expect("comments") {
            if comment["body"] == "will be long" || comment["body"] == "will be long too" {
                comment["body"] = json!(long);
            }
        }
    }
    std::fs::write(work.join("long.json"), serde_json::to_vec(&export).expect("JSON")).expect("write");
    linked.ok(&["import", &work.join("long.json").display().to_string()]);

    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("not sent: src/lib.rs:2: it is 70,000 characters, over GitHub's limit of 65,536"), "{said}");
    assert!(said.contains("not sent: src/lib.rs:1: it is 70,000 characters"), "the long reply: {said}");
    assert!(said.contains("shorter"), "it says what to do: {said}");
    assert!(said.contains("thread src/lib.rs:3 (RIGHT): fine"), "{said}");
    assert!(said.contains("reply on src/lib.rs: short after it"), "{said}");
    {
        let hub = fake.hub();
        let bodies: Vec<&str> = hub.pulls[0].threads[0].comments.iter().map(|c| c.body.as_str()).collect();
        assert_eq!(bodies, ["close this", "short after it"], "nothing half-sent");
        let pushed = hub.pushed_threads(7);
        assert_eq!(pushed.len(), 1, "{pushed:#?}");
        assert_eq!(pushed[0].comments[0].body, "fine");
    }
    // Pushed again: said again, nothing sent, nothing lost here.
    let before = mutations(fake).len();
    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("not sent: src/lib.rs:2") && said.contains("not sent: src/lib.rs:1"), "{said}");
    assert_eq!(mutations(fake).len(), before);
    linked.ok(&["export", &work.join("again.json").display().to_string()]);
    let kept = std::fs::read_to_string(work.join("again.json")).expect("exported");
    assert_eq!(kept.matches(&long).count(), 2, "both long comments are kept here whole");

    // GitHub shows the pushed thread on another line than it is here: it
    // cannot be moved there, and the push says so.
    let fine = fake.hub().pushed_threads(7)[0].id.clone();
    fake.hub().thread(7, &fine).line = Some(5);
    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("GitHub cannot move a thread: it stays on line 5"), "{said}");
    assert!(said.contains("line 3 of the head"), "{said}");
}

#[tokio::test]
async fn a_round_github_took_without_answering_is_found_by_its_mark_and_not_submitted_twice() {
    let linked = linked_to_a_pull_request(&[("notes.txt", "one\ntwo\n")]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    std::fs::write(repo.join("notes.txt"), "one\ntwo\nthree\n").expect("edit");
    let agent = sandbox.agent(repo).await;
    let id = agent.ask_a_person(json!({ "summary": "Added three" })).await;
    let number = id.rsplit('-').next().expect("an id has dashes").to_owned();
    linked.ok(&["review", "comment", &number, "notes.txt:3", "Three what?"]);
    linked.ok(&["review", "submit", &number, "--approve", "-m", "Fine by me"]);
    fake.hub().pull(7).head_oid = commit(repo);

    fake.hub().fail_nth_after_applying(
        "ParleySubmitReview",
        1,
        Failure::Status { status: 502, message: "Bad Gateway".into() },
    );
    let (ok, said) = linked.run(&["pr", "push", "--review", &number]);
    assert!(!ok && said.contains("502"), "{said}");
    assert_eq!(fake.hub().reviews[0].state, "APPROVED", "GitHub took it");
    let before = mutations(fake).len();
    let (ok, said) = linked.run(&["pr", "push", "--review", &number]);
    assert!(!ok && said.contains("already on octo/app#7 (approve"), "{said}");
    assert!(said.contains("nothing was sent again"), "{said}");
    assert_eq!(mutations(fake).len(), before, "nothing sent: {:?}", mutations(fake));
    let (ok, said) = linked.run(&["pr", "push", "--review", &number]);
    assert!(!ok && said.contains("was already pushed to octo/app#7"), "kept as pushed: {said}");
    assert_eq!(fake.hub().reviews.len(), 1, "one review");
}

#[tokio::test]
async fn a_thread_whose_text_was_changed_here_is_shown_outdated_and_stays_so_at_the_next_pull() {
    let linked = linked_to_a_pull_request(&[("notes.txt", "alpha\nbravo\ncharlie\n")]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    fake.hub().add_thread(7, "notes.txt", 2..=2, "RIGHT", "bravo is vague", "mona");
    // Changed here and not pushed: GitHub still has the thread current.
    std::fs::write(repo.join("notes.txt"), "alpha\nsomething else\ncharlie\n").expect("edit");
    let said = linked.ok(&["pr", "pull"]);
    assert!(said.contains("1 new thread") && said.contains("outdated: notes.txt:2"), "{said}");
    let pulled = threads(sandbox, repo);
    assert_eq!(pulled[0]["github"]["outdated"], json!(true), "shown outdated here: {:#}", pulled[0]);

    let said = linked.ok(&["pr", "pull"]);
    assert!(said.contains("nothing new"), "GitHub's flag did not change: {said}");
    let pulled = threads(sandbox, repo);
    assert_eq!(pulled[0]["github"]["outdated"], json!(true), "still shown outdated: {:#}", pulled[0]);
}

#[tokio::test]
async fn a_thread_github_took_without_answering_is_tied_by_the_next_pull_not_pulled_in_twice() {
    let linked = linked_to_a_pull_request(&[("src/lib.rs", HEAD)]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    let mine = add_thread(sandbox, repo, "src/lib.rs:2", "two is unused");
    linked.ok(&["feedback", "reply", &mine, "or rename it"]);
    fake.hub().fail_nth_after_applying(
        "ParleyAddThread",
        1,
        Failure::Status { status: 502, message: "Bad Gateway".into() },
    );
    let (ok, said) = linked.run(&["pr", "push"]);
    assert!(!ok, "{said}");
    assert_eq!(fake.hub().pushed_threads(7).len(), 1, "GitHub has it");

    // The daemon's own pull comes before the next push: the thread is found
    // as the one made here, not pulled in beside it.
    let said = linked.ok(&["pr", "pull"]);
    assert!(said.contains("1 thread made here found on GitHub from a push whose answer was lost"), "{said}");
    assert!(!said.contains("new thread"), "{said}");
    let here = threads(sandbox, repo);
    assert_eq!(here.len(), 1, "one thread, not two: {here:#?}");
    assert!(here[0]["github"]["url"].as_str().is_some_and(|u| !u.is_empty()), "tied: {:#}", here[0]);

    // The push then sends only the reply GitHub lacks.
    let adds = fake.hub().operations().iter().filter(|o| *o == "ParleyAddThread").count();
    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("reply on src/lib.rs: or rename it"), "{said}");
    assert_eq!(fake.hub().operations().iter().filter(|o| *o == "ParleyAddThread").count(), adds, "not sent again");
    let pushed = fake.hub().pushed_threads(7);
    assert_eq!(pushed.len(), 1);
    let bodies: Vec<&str> = pushed[0].comments.iter().map(|c| c.body.as_str()).collect();
    assert_eq!(bodies, ["two is unused", "or rename it"]);
    assert!(linked.ok(&["pr", "pull"]).contains("nothing new"));
}

#[tokio::test]
async fn a_thread_github_will_not_take_is_listed_as_not_sent_and_the_rest_of_the_push_goes() {
    let linked = linked_to_a_pull_request(&[("src/lib.rs", HEAD)]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    add_thread(sandbox, repo, "src/lib.rs:1", "one needs a doc");
    let outside = add_thread(sandbox, repo, "src/lib.rs:2", "two is unused");
    linked.ok(&["feedback", "reply", &outside, "or rename it"]);
    add_thread(sandbox, repo, "src/lib.rs:3", "three shadows two");
    fake.hub().outside_diff.push(("src/lib.rs".into(), 2));

    let said = linked.ok(&["pr", "push"]);
    assert!(
        said.contains("not sent: src/lib.rs:2: GitHub would not take it (Pull request review thread line must be part of the diff)"),
        "{said}"
    );
    assert!(said.contains("thread src/lib.rs:1") && said.contains("thread src/lib.rs:3"), "{said}");
    assert!(!said.contains("thread src/lib.rs:2 "), "not said as sent: {said}");
    let bodies = |fake: &FakeGitHub| -> Vec<String> {
        fake.hub().pushed_threads(7).iter().map(|t| t.comments[0].body.clone()).collect()
    };
    assert_eq!(bodies(fake), ["one needs a doc", "three shadows two"]);
    let status = pr_status_json(&linked);
    assert_eq!(status["linked"]["last_push"]["threads"], 2, "{status:#}");
    assert_eq!(status["linked"]["waiting"]["threads"], 1, "it waits, kept here: {status:#}");
    assert_eq!(threads(sandbox, repo).len(), 3, "nothing lost");

    // Pushed again: the two sent stay sent once; the refused one is tried
    // again, and goes once the diff shows its line.
    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("not sent: src/lib.rs:2"), "{said}");
    assert_eq!(bodies(fake).len(), 2);
    fake.hub().outside_diff.clear();
    let said = linked.ok(&["pr", "push"]);
    assert!(said.contains("thread src/lib.rs:2 (RIGHT): two is unused"), "{said}");
    let pushed = fake.hub().pushed_threads(7);
    assert_eq!(pushed.len(), 3);
    assert_eq!(
        pushed[2].comments.iter().map(|c| c.body.as_str()).collect::<Vec<_>>(),
        ["two is unused", "or rename it"]
    );
}

#[tokio::test]
async fn a_rounds_finding_github_will_not_take_on_its_line_goes_in_the_reviews_body() {
    let linked = linked_to_a_pull_request(&[("notes.txt", "one\ntwo\nthree\nfour\n")]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    std::fs::write(repo.join("notes.txt"), "one\ntwo\nthree\nfour\nfive\n").expect("edit");
    let agent = sandbox.agent(repo).await;
    let id = agent.ask_a_person(json!({ "summary": "Added five" })).await;
    let number = id.rsplit('-').next().expect("an id has dashes").to_owned();
    linked.ok(&["review", "comment", &number, "notes.txt:1", "One is not in this change"]);
    linked.ok(&["review", "comment", &number, "notes.txt:5", "Five needs a test"]);
    linked.ok(&["review", "submit", &number, "--request-changes", "-m", "Nearly"]);
    let head = commit(repo);
    fake.hub().pull(7).head_oid = head;
    fake.hub().outside_diff.push(("notes.txt".into(), 1));

    let said = linked.ok(&["pr", "push", "--review", &number]);
    assert!(said.contains("comment notes.txt:5: Five needs a test"), "{said}");
    assert!(said.contains("in the body, not on a line: notes.txt:1: GitHub would not take it"), "{said}");
    let hub = fake.hub();
    let pushed = hub.pushed_threads(7);
    assert_eq!(pushed.len(), 1, "{pushed:#?}");
    let body = hub.reviews[0].body.as_deref().unwrap_or_default();
    assert!(body.contains("`notes.txt:1`") && body.contains("One is not in this change"), "in the body: {body}");
    assert_eq!(hub.reviews[0].state, "CHANGES_REQUESTED");
}

#[tokio::test]
async fn a_thread_deleted_on_github_stays_here_and_is_never_sent_back() {
    let linked = linked_to_a_pull_request(&[("src/lib.rs", HEAD)]);
    let (sandbox, repo, fake) = (&linked.sandbox, &linked.repo, &linked.fake);
    let deleted = fake.hub().add_thread(7, "src/lib.rs", 1..=1, "RIGHT", "one could be const", "mona");
    linked.ok(&["pr", "pull"]);
    fake.hub().pull(7).threads.retain(|t| t.id != deleted);

    let said = linked.ok(&["pr", "pull"]);
    assert!(said.contains("1 deleted on GitHub (kept here)"), "{said}");
    let here = threads(sandbox, repo);
    assert_eq!(here.len(), 1, "kept: {here:#?}");
    assert_eq!(here[0]["comments"][0]["body"], json!("one could be const"));
    // A teammate deleted it: a push does not post it again under your name.
    let said = linked.ok(&["pr", "push", "--dry-run"]);
    assert!(said.contains("nothing new"), "{said}");
    linked.ok(&["pr", "push"]);
    assert!(fake.hub().pushed_threads(7).is_empty());
    assert!(mutations(fake).is_empty(), "{:?}", mutations(fake));
    assert!(linked.ok(&["pr", "pull"]).contains("nothing new"), "said once");
}
