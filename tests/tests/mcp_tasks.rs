//! Review rounds as MCP tasks (the `io.modelcontextprotocol/tasks`
//! extension), driven by the official Python SDK through the real shim
//! (`tests/clients/py_tasks.py`): a round longer than the SDK's own request
//! timeout comes back through the task; the same SDK without the extension
//! gets today's `pending`; cancelling a task; a daemon restart while a task
//! waits for a person. And a raw host on the `initialize` wire that declares
//! the extension there (the SDK claims task results on 2026-07-28 only),
//! whose tasks outlive a restart as their rounds do: one whose round ended
//! meanwhile ends with its review, one whose round was lost fails saying so.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use parley_tests::{RawShim, Sandbox, bin, git, repo_root, test_dep};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A repository with one commit and an uncommitted change, reviewed by the
/// stand-in reviewer in `mode`.
fn project(sandbox: &Sandbox, mode: &str) -> PathBuf {
    let repo = sandbox
        .repo("proj", &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"), (".gitignore", ".fake-reviewer/\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    let reviewer = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake_reviewer.py");
    let config =
        format!("[review]\nreviewer = [\"python3\", {:?}, {mode:?}]\ntimeout_secs = 120\n", reviewer.display());
    let dir = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), config).expect("config");
    std::fs::write(repo.join("src/lib.rs"), "pub fn answer() -> u32 {\n    41 + 1\n}\n").expect("edit");
    repo
}

/// `py_tasks.py SCENARIO` against the sandbox's daemon, stdin and stdout piped.
fn scenario(sandbox: &Sandbox, repo: &Path, name: &str) -> tokio::process::Child {
    tokio::process::Command::new(test_dep("py/bin/python"))
        .arg(repo_root().join("tests/clients/py_tasks.py"))
        .arg(name)
        .arg(bin("parley-mcp"))
        .arg(repo)
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("PARLEY_DAEMON", bin("parley"))
        .env("PARLEY_NO_SPAWN", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the Python SDK")
}

/// Waits for the scenario to end; every check must have passed.
async fn passed(child: tokio::process::Child, name: &str, before: &str) {
    let output = tokio::time::timeout(Duration::from_secs(150), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("the {name} scenario did not finish within 150 s"))
        .expect("wait for the Python SDK");
    let stdout = format!("{before}{}", String::from_utf8_lossy(&output.stdout));
    let totals = stdout.lines().rev().find(|line| line.ends_with(" failed")).unwrap_or("no totals line");
    assert!(
        output.status.success() && totals.ends_with(" passed, 0 failed") && !totals.starts_with("0 passed"),
        "the {name} scenario failed ({}, {totals}).\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn a_round_longer_than_the_sdks_timeout_comes_back_through_its_task() {
    let sandbox = Sandbox::new();
    // Three times the SDK's 2 s request timeout.
    let repo = project(&sandbox, "after:6");
    let _daemon = sandbox.start_daemon();
    passed(scenario(&sandbox, &repo, "long"), "long", "").await;
}

#[tokio::test]
async fn a_client_without_tasks_waits_and_gets_pending_as_before() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "after:6");
    let _daemon = sandbox.start_daemon();
    passed(scenario(&sandbox, &repo, "plain"), "plain", "").await;
}

#[tokio::test]
async fn cancelling_a_request_task_stops_its_round_and_an_await_task_only_its_wait() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "after:4");
    let _daemon = sandbox.start_daemon();
    passed(scenario(&sandbox, &repo, "cancel"), "cancel", "").await;
}

#[tokio::test]
async fn a_task_waiting_for_a_person_goes_on_across_a_daemon_restart() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good");
    let mut daemon = sandbox.start_daemon();
    let mut child = scenario(&sandbox, &repo, "restart");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut said = String::new();
    let id = loop {
        let line = next_line(&mut lines, &mut said).await;
        if let Some(id) = line.strip_prefix("task ") {
            break id.to_owned();
        }
        assert!(!line.is_empty() && !line.starts_with("FAIL"), "the round was not asked as a task:\n{said}");
    };
    // The round reaches the person (and the store) before the restart.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !sandbox.cli(&["inbox"]).1.contains(&id) {
        assert!(std::time::Instant::now() < deadline, "round {id} never reached the inbox");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    daemon.terminate();
    let _daemon = sandbox.start_daemon();
    stdin.write_all(b"go\n").await.expect("tell the scenario");
    loop {
        let line = next_line(&mut lines, &mut said).await;
        if line.starts_with("resumed ") {
            break;
        }
        assert!(!line.is_empty() && !line.starts_with("FAIL"), "the task did not go on:\n{said}");
    }
    let (code, out, err) = sandbox.cli(&["review", "submit", &id, "--approve"]);
    assert_eq!(code, 0, "{out}{err}");
    while !next_line(&mut lines, &mut said).await.is_empty() {}
    passed(child, "restart", &said).await;
}

/// The scenario's next line (empty at its end), also added to `said`.
async fn next_line(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>, said: &mut String) -> String {
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the scenario speaks within 60 s")
        .expect("read its output")
        .unwrap_or_default();
    said.push_str(&line);
    said.push('\n');
    line
}

/// The next answer to request `id`, passing over notifications.
async fn answer_to(shim: &mut RawShim, id: u64) -> Value {
    loop {
        let line = shim.recv().await;
        if line["id"] == json!(id) {
            return line;
        }
    }
}

/// A raw host on the `initialize` wire (as Claude Code opens stdio servers
/// by default) that declares the tasks extension at `initialize`.
async fn tasks_host(sandbox: &Sandbox, repo: &Path) -> RawShim {
    let mut shim = RawShim::start(sandbox, repo, &[]);
    shim.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            "clientInfo": {"name": "tasks-host", "version": "1"}}})
        .to_string(),
    )
    .await;
    let initialized = answer_to(&mut shim, 1).await;
    assert_eq!(
        initialized["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "Parley declares the extension: {initialized}"
    );
    shim.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    shim
}

/// Calls `request_review` as request `id`; the task it answered with.
async fn request_task(shim: &mut RawShim, id: u64, summary: &str) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "request_review", "arguments": {"summary": summary, "wait_seconds": 1}}});
    shim.send(&call.to_string()).await;
    let created = answer_to(shim, id).await["result"].clone();
    assert_eq!(
        (created["resultType"].as_str(), created["status"].as_str()),
        (Some("task"), Some("working")),
        "{created}"
    );
    created
}

/// `tasks/get` as request `id`.
async fn task_state(shim: &mut RawShim, id: u64, task_id: &str) -> Value {
    let get = json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get", "params": {"taskId": task_id}});
    shim.send(&get.to_string()).await;
    answer_to(shim, id).await["result"].clone()
}

#[tokio::test]
async fn a_host_on_the_initialize_wire_that_declares_tasks_polls_its_round_to_the_end() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "after:3");
    let _daemon = sandbox.start_daemon();
    let mut shim = tasks_host(&sandbox, &repo).await;
    let created = request_task(&mut shim, 2, "Polled to the end").await;
    let task_id = created["taskId"].as_str().expect("a task id").to_owned();
    let interval = Duration::from_millis(created["pollIntervalMs"].as_u64().expect("a poll interval"));

    // Polled as a host does, past the call's own wait_seconds: the task ends with the round.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut id = 10;
    let ended = loop {
        id += 1;
        let task = task_state(&mut shim, id, &task_id).await;
        if task["status"] != "working" {
            break task;
        }
        assert!(std::time::Instant::now() < deadline, "the task never ended: {task}");
        tokio::time::sleep(interval).await;
    };
    assert_eq!(ended["status"], "completed", "{ended}");
    assert_eq!(ended["result"]["isError"], false, "{ended}");
    assert_eq!(ended["result"]["structuredContent"]["verdict"], "lgtm_with_suggestions", "{ended}");
    assert!(id > 11, "the round outlasted the first poll");

    // Other tools answer as ever; task methods refuse what they cannot do.
    shim.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_review_history","arguments":{}}}"#,
    )
    .await;
    let history = answer_to(&mut shim, 3).await["result"].clone();
    assert!(history.get("resultType").is_none_or(|kind| kind == "complete"), "{history}");
    assert_eq!(history["structuredContent"]["reviews"][0]["rounds"][0]["round"], 1, "{history}");
    shim.send(r#"{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"someone-elses"}}"#).await;
    let unknown = answer_to(&mut shim, 4).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(unknown["error"]["message"].as_str().is_some_and(|m| m.contains("not started by Parley")), "{unknown}");
    let update = json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/update",
        "params": {"taskId": task_id, "inputResponses": {}}});
    shim.send(&update.to_string()).await;
    let refused = answer_to(&mut shim, 5).await;
    assert!(refused["error"]["message"].as_str().is_some_and(|m| m.contains("asks for no input")), "{refused}");
}

#[tokio::test]
async fn a_task_whose_round_ended_while_parley_restarted_ends_with_its_review() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good");
    let mut daemon = sandbox.start_daemon();
    let mut shim = tasks_host(&sandbox, &repo).await;
    let created = request_task(&mut shim, 2, "Ended meanwhile").await;
    let task_id = created["taskId"].as_str().expect("a task id").to_owned();
    let review_id = task_id.split(':').nth(1).expect("the id names its review").to_owned();
    // The round is stored before the restart, and the host has not polled since.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while sandbox.cli(&["sessions", "show", &review_id, "--round", "1", "--json"]).0 != 0 {
        assert!(std::time::Instant::now() < deadline, "round 1 of {review_id} was never stored");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    daemon.terminate();
    let _daemon = sandbox.start_daemon();
    let ended = task_state(&mut shim, 3, &task_id).await;
    assert_eq!(ended["status"], "completed", "{ended}");
    assert_eq!(ended["result"]["structuredContent"]["review_id"], json!(review_id), "{ended}");
    assert_eq!(ended["result"]["structuredContent"]["verdict"], "lgtm_with_suggestions", "{ended}");
}

#[tokio::test]
async fn a_task_whose_round_was_lost_in_a_restart_fails_saying_to_ask_again() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "slow");
    let mut daemon = sandbox.start_daemon();
    let mut shim = tasks_host(&sandbox, &repo).await;
    let created = request_task(&mut shim, 2, "Lost in a restart").await;
    let task_id = created["taskId"].as_str().expect("a task id").to_owned();
    let pid = repo.join(".fake-reviewer/pid");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !pid.exists() {
        assert!(std::time::Instant::now() < deadline, "the reviewer never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    daemon.terminate();
    let _daemon = sandbox.start_daemon();
    let lost = task_state(&mut shim, 3, &task_id).await;
    assert_eq!(lost["status"], "failed", "never a task that polls forever: {lost}");
    let message = lost["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("was lost") && message.contains("request_review"), "{lost}");
}
