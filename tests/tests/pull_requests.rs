//! Pull-request sync against a local fake of GitHub's API
//! (`parley_tests::fake_github`): what Parley reads of a pull request, every
//! page of it, and how each way GitHub fails is told.

use parley_daemon::github::{Api, GithubError, PullRequestRef, Token, remote};
use parley_tests::fake_github::{self, Failure, FakeGitHub};

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
    let documents = serde_json::to_vec(&remote::documents()).expect("the documents as JSON");
    assert!(remote::documents().len() >= 3);
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
    for (name, _) in remote::documents() {
        assert!(said.contains(&format!("valid: {name}")), "{name} was checked:\n{said}");
    }
}
