//! `parley attach --stdio`: a hub client that cannot reach the socket speaks
//! the same protocol through a child process relaying its stdin and stdout.

use std::process::Stdio;
use std::time::Duration;

use parley_tests::{Editor, Sandbox, editor_hello, review_args};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr};

const DEADLINE: Duration = Duration::from_secs(20);

/// A `parley attach --stdio` child, its stdio piped.
fn attach(sandbox: &Sandbox) -> Child {
    tokio::process::Command::from(sandbox.command("parley"))
        .args(["attach", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start parley attach --stdio")
}

/// A raw editor window speaking through an attach child.
async fn attached_editor(child: &mut Child, name: &str, workspace: &std::path::Path) -> Editor {
    let stdout = child.stdout.take().expect("piped stdout");
    let stdin = child.stdin.take().expect("piped stdin");
    Editor::over(Box::new(stdout), Box::new(stdin), &editor_hello(name, None, &[workspace])).await
}

/// Waits for the child to exit; its code and everything it said on stderr.
async fn ended(mut child: Child) -> (Option<i32>, String) {
    let mut stderr: ChildStderr = child.stderr.take().expect("piped stderr");
    let status = tokio::time::timeout(DEADLINE, child.wait())
        .await
        .expect("parley attach exits in time")
        .expect("wait for parley attach");
    let mut said = String::new();
    stderr.read_to_string(&mut said).await.expect("read stderr");
    (status.code(), said)
}

#[tokio::test]
async fn a_window_speaks_through_attach_which_starts_the_daemon() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", "fn main() {}\nfn helper() {}\n")]);
    assert!(!sandbox.socket.exists(), "no daemon runs before the window attaches");
    let mut child = attach(&sandbox);
    let mut window = attached_editor(&mut child, "vscode", &repo).await;
    assert_eq!(window.reply.protocol, parley_protocol::PROTOCOL_VERSION);

    let created = window
        .call(
            "feedback/create",
            json!({"path": repo.join("src/lib.rs"), "range": {"start": {"line": 1, "character": 3}, "end": {"line": 1, "character": 9}},
                   "text": "helper", "body": "Who calls this?"}),
        )
        .await;
    assert_eq!(created["thread"]["quote"], json!("helper"));

    // What the daemon pushes reaches the window through the relay too.
    let agent = sandbox.agent(&repo).await;
    let listed = agent.call_ok("get_feedback", json!({})).await;
    assert!(listed.to_string().contains("Who calls this?"), "the agent sees the window's thread: {listed}");
    agent.call_ok("present_review", review_args("# Through the relay", &repo)).await;
    let mut update = window.next_notification().await;
    assert_eq!(update.method, "feedback/changed", "the thread's change comes first");
    while update.method == "feedback/changed" {
        update = window.next_notification().await;
    }
    assert_eq!(update.method, "review/updated");
    assert_eq!(update.params["review"]["content"], json!("# Through the relay"));

    let status = window.call("status", json!({})).await;
    assert_eq!(status["connections"]["editor"], json!(1), "{status}");
    assert_eq!(status["connections"]["mcp"], json!(1), "{status}");
}

#[tokio::test]
async fn two_windows_attach_at_once() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("a.rs", "x\n")]);
    let mut first_child = attach(&sandbox);
    let mut second_child = attach(&sandbox);
    let (mut first, mut second) = tokio::join!(
        attached_editor(&mut first_child, "first", &repo),
        attached_editor(&mut second_child, "second", &repo)
    );
    let agent = sandbox.agent(&repo).await;
    let sent = agent.call_ok("present_review", review_args("# Both", &repo)).await;
    assert_eq!(sent["delivered_to"].as_array().map(Vec::len), Some(2), "{sent}");
    for window in [&mut first, &mut second] {
        let update = window.next_notification().await;
        assert_eq!(update.params["review"]["content"], json!("# Both"));
    }
    assert_eq!(sandbox.status()["connections"]["editor"], json!(2));
}

#[tokio::test]
async fn closing_stdin_ends_attach_after_the_daemon_answered() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("a.rs", "x\n")]);
    let _daemon = sandbox.start_daemon();
    let mut child = attach(&sandbox);
    let mut stdin = child.stdin.take().expect("piped stdin");
    let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "hello", "params": editor_hello("vim", None, &[&repo])});
    let status = json!({"jsonrpc": "2.0", "id": 1, "method": "status"});
    stdin.write_all(format!("{hello}\n{status}\n").as_bytes()).await.expect("write to attach");
    drop(stdin);

    // Both answers arrive after stdin closed, byte for byte what the daemon wrote, then the end.
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let mut answers = Vec::new();
    while let Some(line) =
        tokio::time::timeout(DEADLINE, lines.next_line()).await.expect("attach writes in time").expect("read stdout")
    {
        answers.push(serde_json::from_str::<serde_json::Value>(&line).expect("a JSON line"));
    }
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["id"], json!(0));
    assert!(answers[0]["result"]["protocol"].is_number(), "{}", answers[0]);
    assert_eq!(answers[1]["id"], json!(1));
    assert_eq!(answers[1]["result"]["connections"]["editor"], json!(1), "{}", answers[1]);
    let (code, said) = ended(child).await;
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(said, "", "a client that closes its end is no error");
}

#[tokio::test]
async fn the_daemon_stopping_ends_attach_with_a_clear_line() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("a.rs", "x\n")]);
    let _daemon = sandbox.start_daemon();
    let mut child = attach(&sandbox);
    let mut window = attached_editor(&mut child, "vscode", &repo).await;
    let (code, out, err) = sandbox.cli(&["stop"]);
    assert_eq!(code, 0, "{out}{err}");
    let stopping = window.next_notification().await;
    assert_eq!(stopping.method, "daemon/stopping");
    let (code, said) = ended(child).await;
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("the Parley daemon closed the connection"), "{said}");
    assert!(said.contains("parley attach --stdio"), "it says how to reconnect: {said}");
}

#[tokio::test]
async fn attach_without_stdio_or_on_a_terminal_says_what_it_is_for() {
    let sandbox = Sandbox::new();
    let (code, out, err) = sandbox.cli(&["attach"]);
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert!(err.contains("attach needs --stdio") && err.contains("hub protocol"), "{err}");

    let (_master, terminal) = parley_tests::pty(None);
    let out = sandbox
        .command("parley")
        .args(["attach", "--stdio"])
        .stdin(std::fs::File::from(terminal))
        .output()
        .expect("run parley attach");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("standard input is a terminal"), "{err}");
    assert!(!sandbox.socket.exists(), "no daemon was started for a person at a terminal");
}
