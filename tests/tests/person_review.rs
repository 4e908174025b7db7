//! A person as the reviewer, through the real daemon, shim and CLI on real
//! git repositories: an agent asks for a human review and waits; the person
//! comments on removed and added lines at the terminal and submits a
//! verdict; the agent gets it in seed 004's shape, fixes, and asks again.
//! Also: a daemon restart between request and verdict, two agents on two
//! worktrees, and bad input.

use std::path::PathBuf;
use std::time::Duration;

use parley_tests::{Agent, Sandbox, bin, git, repo_root, test_dep};
use serde_json::{Value, json};

const BEFORE: &str = "one\ntwo\nthree\nfour\n";
const AFTER: &str = "one\nthree\nfour point zero\nfive\n";

/// A repository with `notes.txt` committed, then changed: line 2 removed,
/// line 4 reworded, line 5 added.
fn project(sandbox: &Sandbox, name: &str) -> PathBuf {
    let repo = sandbox.repo(name, &[("notes.txt", BEFORE)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("notes.txt"), AFTER).expect("edit");
    repo
}

/// Asks for a human review; the answer must be `pending`, and the round
/// reach the person. Its review id.
async fn ask(agent: &Agent, previous: Option<&str>) -> String {
    let mut args = json!({ "summary": "Tidied the notes" });
    if let Some(previous) = previous {
        args["previous_review_id"] = json!(previous);
    }
    agent.ask_a_person(args).await
}

/// `await_review` until the person's verdict arrives.
async fn verdict(agent: &Agent, id: &str) -> Value {
    for _ in 0..20 {
        let answer = agent.call_ok("await_review", json!({ "review_id": id, "wait_seconds": 5 })).await;
        if answer["status"] != "pending" {
            return answer;
        }
    }
    panic!("the verdict never reached the agent");
}

fn cli_ok(sandbox: &Sandbox, args: &[&str]) -> String {
    let (code, out, err) = sandbox.cli(args);
    assert_eq!(code, 0, "parley {args:?} failed: {out}{err}");
    out
}

/// The short form of an id a person types: its number.
fn tail(id: &str) -> &str {
    id.rsplit('-').next().expect("an id has dashes")
}

#[tokio::test]
async fn a_person_reviews_at_the_terminal_and_the_agent_gets_the_verdict_round_after_round() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = project(&sandbox, "app");
    let elsewhere = project(&sandbox, "other");
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let mut other_window = sandbox.editor("vscode", &[&elsewhere]).await;
    let agent = sandbox.agent(&repo).await;

    let id = ask(&agent, None).await;
    let told = loop {
        let event = window.next_notification().await;
        if event.method == "round/requested" {
            break event.params;
        }
    };
    assert_eq!(told["review_id"], id.as_str());
    assert_eq!(told["files"], json!(["notes.txt"]));
    assert!(
        other_window.try_next_notification(Duration::from_millis(300)).await.is_none(),
        "a window on another repository is not told"
    );

    let inbox = cli_ok(&sandbox, &["inbox"]);
    assert!(inbox.contains(&id) && inbox.contains("Tidied the notes"), "{inbox}");

    let diff = cli_ok(&sandbox, &["review", "diff", tail(&id)]);
    assert!(diff.contains("   2      │-two"), "old numbering for the removed line:\n{diff}");
    assert!(diff.contains("        4 │+five"), "new numbering for the added line:\n{diff}");

    cli_ok(&sandbox, &["review", "comment", tail(&id), "notes.txt:2", "--side", "old", "Why drop two?"]);
    let out = cli_ok(&sandbox, &["review", "comment", tail(&id), "notes.txt:3", "--suggest", "four", "Keep it short"]);
    assert!(out.contains("d2 notes.txt:3"), "{out}");
    let drafts = loop {
        let event = window.next_notification().await;
        if event.method == "round/changed" {
            let params = event.params;
            if params["drafts"].as_array().is_some_and(|d| d.len() == 2) {
                break params;
            }
        }
    };
    assert_eq!(drafts["state"], "drafts");
    let diff = cli_ok(&sandbox, &["review", "diff", &id]);
    assert!(diff.contains("▸ d1 notes.txt:2 (old side): Why drop two?"), "{diff}");

    let out = cli_ok(&sandbox, &["review", "submit", tail(&id), "--request-changes", "-m", "Two things"]);
    assert!(out.contains("needs_changes"), "{out}");

    let first = verdict(&agent, &id).await;
    assert_eq!(first["verdict"], "needs_changes");
    // The review comes in seed 004's shape, as a reviewer command's does.
    let review = &first;
    assert_eq!(review["overall_assessment"], "needs_changes");
    let comments = review["comments"].as_array().expect("comments");
    let specific: Vec<&Value> = comments.iter().filter(|c| c["type"] == "specific").collect();
    assert_eq!(specific.len(), 2, "{review:#}");
    let removed = specific.iter().find(|c| c["comment"].as_str().unwrap_or("").contains("Why drop two?")).expect("old");
    assert_eq!(removed["file"], "notes.txt");
    assert_eq!(removed["line"], 2, "points where the removed line was: {removed}");
    assert!(removed["comment"].as_str().unwrap_or("").contains("`two`"), "quotes it: {removed}");
    let added = specific.iter().find(|c| c["suggested_fix"] == "four").expect("the suggestion");
    assert_eq!((added["line"].as_u64(), added["severity"].as_str()), (Some(3), Some("major")));
    assert!(comments.iter().any(|c| c["type"] == "general" && c["comment"] == "Two things"), "{review:#}");

    // As the editor shows it: the person's summary under the verdict, and no
    // empty sections a person does not fill in.
    let shown = cli_ok(&sandbox, &["sessions", "show", &id, "--round", "1"]);
    assert!(shown.contains("## Verdict: ❌ needs changes\n\n> Two things"), "{shown}");
    assert!(!shown.contains("Design compliance") && !shown.contains("Test results"), "{shown}");

    // The new-side comment became a thread on the code, linked to the round.
    let threads = agent.call_ok("get_feedback", json!({})).await;
    let thread = threads["threads"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["comments"][0]["body"].as_str().unwrap_or("").starts_with("Keep it short")))
        .cloned()
        .unwrap_or_else(|| panic!("no thread for the comment: {threads:#}"));
    assert_eq!(thread["finding"]["reviewId"], id.as_str(), "{thread:#}");

    // The agent fixes and asks again; the person sees what changed since.
    std::fs::write(repo.join("notes.txt"), "one\ntwo\nthree\nfour\nfive\n").expect("fix");
    assert_eq!(ask(&agent, Some(&id)).await, id);
    let since = cli_ok(&sandbox, &["review", "diff", tail(&id), "--since"]);
    assert!(since.contains("Changes since round 1"), "{since}");
    assert!(since.contains("   3 │-four point zero") || since.contains("│-four point zero"), "{since}");
    assert!(!since.contains("│-two"), "round 1's own change is not repeated:\n{since}");
    assert!(
        since.contains("◂ round 1 (addressed): Keep it short"),
        "the earlier comment, its suggestion found applied:\n{since}"
    );
    cli_ok(&sandbox, &["review", "submit", &id, "--approve"]);
    let second = verdict(&agent, &id).await;
    assert_eq!((second["round"].as_u64(), second["verdict"].as_str()), (Some(2), Some("lgtm")));
    assert_eq!(second["status"], "approved");

    let done = agent.call_ok("mark_review_complete", json!({ "review_id": id, "final_status": "approved" })).await;
    assert_eq!(done["rounds"], 2);
    let inbox = cli_ok(&sandbox, &["inbox"]);
    assert!(!inbox.contains(&format!("{id}  round")), "nothing waits any more: {inbox}");
}

/// A person's comment on removed lines lives on: it becomes a thread on the
/// line now where they were, quoting them, which the agent answers; the next
/// round shows it with its state, in the whole diff and in `--since` when
/// its file did not change again.
#[tokio::test]
async fn comments_on_removed_lines_become_threads_and_stay_in_later_rounds() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = sandbox.repo("app", &[("notes.txt", BEFORE), ("todo.txt", "buy milk\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("notes.txt"), AFTER).expect("edit");
    std::fs::write(repo.join("todo.txt"), "buy oat milk\n").expect("edit");
    let agent = sandbox.agent(&repo).await;

    let id = ask(&agent, None).await;
    cli_ok(
        &sandbox,
        &["review", "comment", tail(&id), "notes.txt:2", "--side", "old", "--severity", "critical", "Why drop two?"],
    );
    let out = cli_ok(&sandbox, &["review", "submit", tail(&id), "--request-changes", "-m", "Bring it back"]);
    assert!(out.contains("1 comment(s) became threads"), "{out}");
    assert_eq!(verdict(&agent, &id).await["verdict"], "needs_changes");

    // A thread the agent reads and answers, on the line that followed `two`.
    let listed = agent.call_ok("get_feedback", json!({ "filePath": "notes.txt" })).await;
    let thread = listed["threads"][0].clone();
    let body = thread["comments"][0]["body"].as_str().unwrap_or_default();
    assert!(body.contains("removed line 2") && body.contains("`two`") && body.contains("Why drop two?"), "{thread:#}");
    assert_eq!(thread["range"]["startLine"], 2, "on `three`, where `two` was: {thread:#}");
    assert_eq!(thread["finding"]["severity"], "critical", "{thread:#}");
    let thread_id = thread["id"].as_str().expect("id");
    agent.call_ok("reply_feedback", json!({ "threadId": thread_id, "body": "It was unused; see todo.txt" })).await;

    // Round 2 changes only todo.txt again.
    std::fs::write(repo.join("todo.txt"), "buy oat milk and bread\n").expect("edit");
    assert_eq!(ask(&agent, Some(&id)).await, id);
    let whole = cli_ok(&sandbox, &["review", "diff", tail(&id)]);
    assert!(
        whole.contains("◂ round 1 (addressed): On the removed line 2 of the old version (`two`): Why drop two?"),
        "under the line where `two` was:\n{whole}"
    );
    let since = cli_ok(&sandbox, &["review", "diff", tail(&id), "--since"]);
    assert!(since.contains("(unchanged since round 1)"), "{since}");
    assert!(
        since.contains("◂ round 1 (addressed) notes.txt:2: On the removed line 2"),
        "shown although its file did not change again:\n{since}"
    );
}

#[tokio::test]
async fn secrets_in_the_files_a_person_reviews_are_redacted_in_both_versions() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let token = concat!("ghs", "_rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsiVpz");
    // The token sits far from the change: not in the diff, but in both
    // versions of the file kept for the person.
    let before = format!("TOKEN={token}\n{}LOG=debug\n", "x=1\n".repeat(10));
    let repo = sandbox.repo("app", &[("settings.env", &before)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("settings.env"), before.replace("LOG=debug", "LOG=info")).expect("edit");
    let agent = sandbox.agent(&repo).await;
    let id = ask(&agent, None).await;

    // What the editor and the terminal are given: both versions, whole.
    let round = cli_ok(&sandbox, &["review", "diff", tail(&id), "--json"]);
    assert!(!round.contains(token), "the person's copy holds the token:\n{round}");
    assert_eq!(round.matches("TOKEN=<redacted: github-token>").count(), 2, "{round}");
    cli_ok(&sandbox, &["review", "submit", tail(&id), "--approve"]);
    let answer = verdict(&agent, &id).await;
    let warnings = answer["warnings"].to_string();
    assert!(warnings.contains("settings.env:1 (before the change): github-token"), "{warnings}");
    assert!(warnings.contains("settings.env:1 (after the change): github-token"), "{warnings}");
    assert!(!warnings.contains(token), "{warnings}");
}

#[tokio::test]
async fn a_waiting_round_and_its_drafts_survive_a_daemon_restart() {
    let sandbox = Sandbox::new();
    let mut daemon = sandbox.start_daemon();
    let repo = project(&sandbox, "app");
    let id = {
        let agent = sandbox.agent(&repo).await;
        let id = ask(&agent, None).await;
        cli_ok(&sandbox, &["review", "comment", &id, "notes.txt:4", "Say why five"]);
        id
    };
    daemon.terminate();
    let _daemon = sandbox.start_daemon();

    let inbox = cli_ok(&sandbox, &["inbox"]);
    assert!(inbox.contains(&id) && inbox.contains("1 draft comment"), "{inbox}");
    let shown = cli_ok(&sandbox, &["sessions", "show", &id]);
    assert!(shown.contains("awaiting_review") && shown.contains("asked of a person"), "{shown}");
    let agent = sandbox.agent(&repo).await;
    let history = agent.call_ok("get_review_history", json!({ "review_id": id })).await;
    let session = &history["reviews"][0];
    assert_eq!(
        (session["status"].as_str(), session["pending"]["state"].as_str()),
        (Some("awaiting_review"), Some("awaiting_review"))
    );
    let still = agent.call_ok("await_review", json!({ "review_id": id, "wait_seconds": 0 })).await;
    assert_eq!(still["status"], "pending", "{still:#}");
    cli_ok(&sandbox, &["review", "submit", &id, "--comment"]);
    let answer = verdict(&agent, &id).await;
    assert_eq!(answer["verdict"], "needs_changes", "a comment without a verdict asks for it to be addressed");
    let comments = answer["comments"].as_array().expect("comments").clone();
    assert_eq!(comments.len(), 1, "{answer:#}");
    assert_eq!((comments[0]["line"].as_u64(), comments[0]["comment"].as_str()), (Some(4), Some("Say why five")));
}

#[tokio::test]
async fn rounds_of_agents_on_two_worktrees_stay_apart() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let main = sandbox.repo("main", &[("notes.txt", BEFORE)]);
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-qm", "start"]);
    let tree = sandbox.dir.path().join("feature");
    git(&main, &["worktree", "add", "-q", "-b", "feature", tree.to_str().expect("utf-8")]);
    std::fs::write(main.join("notes.txt"), AFTER).expect("edit main");
    std::fs::write(tree.join("notes.txt"), "one\ntwo\nthree\nfour\nsix\n").expect("edit feature");
    let mut main_window = sandbox.editor("vscode", &[&main]).await;

    let on_main = ask(&sandbox.agent(&main).await, None).await;
    let on_tree = ask(&sandbox.agent(&tree).await, None).await;
    assert_ne!(on_main, on_tree);

    let told: Vec<String> = {
        let mut told = Vec::new();
        while let Some(event) = main_window.try_next_notification(Duration::from_millis(500)).await {
            if event.method == "round/requested" {
                told.push(event.params["review_id"].as_str().unwrap_or("").to_owned());
            }
        }
        told
    };
    assert_eq!(told, std::slice::from_ref(&on_main), "the main window hears only of its own worktree's round");

    let inbox: Value =
        serde_json::from_str(&cli_ok(&sandbox, &["inbox", "--json", "--workspace", tree.to_str().expect("utf-8")]))
            .expect("json");
    let ids: Vec<&str> =
        inbox["rounds"].as_array().expect("rounds").iter().filter_map(|r| r["review_id"].as_str()).collect();
    assert_eq!(ids, [on_tree.as_str()]);
    let diff = cli_ok(&sandbox, &["review", "diff", &on_tree]);
    assert!(diff.contains("│+six") && !diff.contains("five"), "the feature worktree's own change:\n{diff}");
    let everything = cli_ok(&sandbox, &["inbox"]);
    assert!(everything.contains(&on_main) && everything.contains(&on_tree), "{everything}");
}

#[tokio::test]
async fn bad_comments_and_submissions_are_refused_with_what_to_do() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = project(&sandbox, "app");
    std::fs::write(repo.join("new.txt"), "brand new\n").expect("new file");
    let agent = sandbox.agent(&repo).await;
    let id = ask(&agent, None).await;

    let refused = |args: &[&str], says: &str| {
        let (code, out, err) = sandbox.cli(args);
        assert_ne!(code, 0, "parley {args:?} should fail: {out}");
        assert!(err.contains(says), "parley {args:?} should say {says:?}: {err}");
        for internal in ["round/", "request_review", "await_review"] {
            assert!(!err.contains(internal), "no protocol words for a person: {err}");
        }
    };
    refused(&["review", "comment", &id, "notes.txt:9", "x"], "has 4 lines");
    refused(&["review", "comment", &id, "new.txt:1", "--side", "old", "x"], "it is a new file");
    refused(&["review", "comment", &id, "missing.txt:1", "x"], "is not in this round");
    refused(&["review", "comment", &id, "notes.txt", "x"], "FILE:LINE");
    refused(&["review", "comment", &id, "notes.txt:1", "  "], "needs a body");
    refused(&["review", "uncomment", &id, "d9"], "has no draft d9");
    refused(&["review", "diff", "2099-01-01-001"], "no review session");

    // The agent cannot start another round while a person is asked.
    let busy = agent
        .call_err(
            "request_review",
            json!({ "summary": "again", "previous_review_id": id, "reviewer": "human", "wait_seconds": 0 }),
        )
        .await;
    assert!(busy.contains("waiting for a person"), "{busy}");

    // An editor names the person as it knows them.
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let draft = window
        .call(
            "round/comment",
            json!({ "review_id": id, "path": "notes.txt", "start_line": 0, "body": "Fine start", "author": "Ana Lima" }),
        )
        .await;
    assert_eq!(draft["draft"]["author"], "Ana Lima");
    cli_ok(&sandbox, &["review", "submit", &id, "--approve"]);
    let threads = cli_ok(&sandbox, &["feedback", "list", "--workspace", repo.to_str().expect("utf-8")]);
    assert!(threads.contains("Ana Lima") && threads.contains("Fine start"), "{threads}");
    refused(&["review", "submit", &id, "--approve"], "has no round waiting for a person");
    let (code, _, err) = sandbox.cli(&["review", "submit", &id]);
    assert_eq!(code, 2, "a verdict is required: {err}");
    let answer = verdict(&agent, &id).await;
    assert_eq!(answer["verdict"], "lgtm_with_suggestions", "approved with a comment left");
}

#[tokio::test]
async fn an_agent_cancelling_the_round_tells_the_windows_and_empties_the_inbox() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = project(&sandbox, "app");
    let mut window = sandbox.editor("nvim", &[&repo]).await;
    let agent = sandbox.agent(&repo).await;
    let id = ask(&agent, None).await;
    agent.call_ok("cancel_review", json!({ "review_id": id })).await;
    let cancelled = loop {
        let event = window.next_notification().await;
        if event.method == "round/changed" {
            break event.params;
        }
    };
    assert_eq!(cancelled["state"], "cancelled");
    let inbox = cli_ok(&sandbox, &["inbox"]);
    assert!(inbox.contains("Nothing waits on you"), "{inbox}");
    let gone = agent.call_err("await_review", json!({ "review_id": id, "wait_seconds": 0 })).await;
    assert!(gone.contains("cancel"), "{gone}");
}

/// Runs `tests/clients/py_elicit.py` (the official Python SDK, whose client
/// answers elicitation) against the sandbox's daemon in `repo`.
async fn python_host(sandbox: &Sandbox, repo: &std::path::Path, expect: &str) {
    let output = tokio::process::Command::new(test_dep("py/bin/python"))
        .arg(repo_root().join("tests/clients/py_elicit.py"))
        .args(["--expect", expect])
        .arg(bin("parley-mcp"))
        .arg(repo)
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("PARLEY_DAEMON", bin("parley"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(90), output)
        .await
        .expect("the Python host finishes")
        .expect("start the Python SDK");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(" passed, 0 failed"),
        "{expect}:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn with_no_editor_open_the_person_answers_in_the_agents_host() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = project(&sandbox, "app");
    python_host(&sandbox, &repo, "asked").await;
    let inbox = cli_ok(&sandbox, &["inbox"]);
    assert!(inbox.contains("Nothing waits on you"), "the answer was taken: {inbox}");

    // With a window open on the repository, the person reviews there instead.
    let other = project(&sandbox, "watched");
    let _window = sandbox.editor("vscode", &[&other]).await;
    python_host(&sandbox, &other, "not-asked").await;
    let inbox = cli_ok(&sandbox, &["inbox"]);
    assert!(inbox.contains("Added a helper"), "the round still waits for the window: {inbox}");
}

#[tokio::test]
async fn after_a_reviewer_commands_round_the_person_sees_what_changed_since() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = project(&sandbox, "app");
    // The stand-in reviewer records its prompts in the repository: keep them out of the diff.
    std::fs::write(repo.join(".git/info/exclude"), ".fake-reviewer/\n.reviews/\n").expect("exclude");
    let reviewer = repo_root().join("tests/fixtures/fake_reviewer.py");
    let config =
        format!("[review]\nreviewer = [\"python3\", {:?}, \"needs_changes\"]\n", reviewer.display().to_string());
    let dir = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), config).expect("config");
    let agent = sandbox.agent(&repo).await;
    let first = agent.call_ok("request_review", json!({ "summary": "First try", "wait_seconds": 50 })).await;
    assert_eq!(first["round"], 1, "{first:#}");
    let id = first["review_id"].as_str().expect("id").to_owned();

    std::fs::write(repo.join("notes.txt"), "one\nthree\nfour point five\nfive\n").expect("fix");
    assert_eq!(ask(&agent, Some(&id)).await, id);
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let round = window.call("round/get", json!({ "review_id": id })).await;
    assert_eq!(round["previous_round"], 1, "{round:#}");
    let file = &round["files"][0];
    assert_eq!(file["previous"], AFTER, "the version the reviewer command saw");
    assert_eq!(file["changed_since_previous"], true);
    let since = cli_ok(&sandbox, &["review", "diff", &id, "--since"]);
    assert!(since.contains("│-four point zero") && since.contains("│+four point five"), "{since}");
    // Asked by number, the waiting round is the same; the reviewer command's
    // round kept only the version it reviewed, so it has no diff to show again.
    let by_number = window.call("round/get", json!({ "review_id": id, "round": 2 })).await;
    assert_eq!(by_number, round);
    let (code, _, err) = sandbox.cli(&["review", "diff", &id, "--round", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not by a person") && err.contains(&format!("sessions show {id} --round 1")), "{err}");
}
