//! Review rounds as MCP tasks (the `io.modelcontextprotocol/tasks`
//! extension), driven by the official Python SDK through the real shim
//! (`tests/clients/py_tasks.py`): a round longer than the SDK's own request
//! timeout comes back through the task; the same SDK without the extension
//! gets today's `pending`; cancelling a task; a daemon restart while a task
//! waits for a person.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use parley_tests::{Sandbox, bin, git, repo_root, test_dep};
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
async fn after_a_daemon_restart_a_waiting_task_says_to_await_its_review() {
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
        if line.starts_with("awaiting ") {
            break;
        }
        assert!(!line.is_empty() && !line.starts_with("FAIL"), "the lost task was not told:\n{said}");
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
