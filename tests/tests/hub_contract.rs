//! The hub contract as a third-party client meets it: error codes per cause,
//! methods per role, ids that cannot be answered, folders reached through
//! symlinks, shared editor ids, who counts as a window, and a window that
//! falls behind.

use std::path::Path;
use std::time::Duration;

use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
use parley_protocol::jsonrpc::{Id, Request, code, to_line};
use parley_tests::{DEADLINE, Editor, Sandbox, review_args};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

fn hello_as(role: Role, name: &str, cwd: Option<&Path>, workspaces: &[&Path]) -> Hello {
    Hello {
        protocol: parley_protocol::PROTOCOL_VERSION,
        role,
        client: ClientInfo { name: name.into(), version: "test".into() },
        pid: Some(std::process::id()),
        cwd: cwd.map(Path::to_owned),
        workspaces: workspaces.iter().map(|w| w.to_path_buf()).collect(),
        editor_id: None,
        position_encoding: PositionEncoding::Utf16,
        parent_pid: None,
        agent_name: None,
        env: Default::default(),
    }
}

fn error_code(response: &parley_protocol::jsonrpc::Response) -> i64 {
    response.error.as_ref().map(|e| e.code).unwrap_or_else(|| panic!("expected an error, got {response:?}"))
}

async fn create_thread(window: &mut Editor, file: &Path, body: &str) -> String {
    let created = window
        .call(
            "feedback/create",
            json!({"path": file, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}, "body": body}),
        )
        .await;
    created["thread"]["id"].as_str().expect("thread id").to_owned()
}

#[tokio::test]
async fn each_failure_has_the_code_its_cause_is_documented_with() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("a.rs", "fn a() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let id = create_thread(&mut window, &repo.join("a.rs"), "Name it").await;
    window.call("feedback/resolve", json!({"thread_id": id})).await;

    // A reply to a resolved thread is a conflict of state, not bad params
    // and not a missing thread: the message says to reopen it.
    let reply = window.request("feedback/reply", json!({"thread_id": id, "body": "done?"})).await;
    assert_eq!(error_code(&reply), code::CONFLICT, "{reply:?}");
    assert!(reply.error.as_ref().is_some_and(|e| e.message.contains("reopen")), "{reply:?}");
    let again = window.request("feedback/resolve", json!({"thread_id": id})).await;
    assert_eq!(error_code(&again), code::CONFLICT);
    let unknown =
        window.request("feedback/resolve", json!({"thread_id": "7f1d1d6c-6f86-4a43-9d5e-0c3c1d9f0a11"})).await;
    assert_eq!(error_code(&unknown), code::NOT_FOUND);
    assert_eq!(unknown.error.as_ref().map(|e| e.message.as_str()), Some("Thread not found"));
    // People and agents alike may give a unique beginning of an id (4
    // characters or more); a shorter one or one that is not hex is refused
    // saying what to give, and one that matches nothing is not found.
    let second = create_thread(&mut window, &repo.join("a.rs"), "And this").await;
    let reopened = window.call("feedback/reopen", json!({"thread_id": id[..8]})).await;
    assert_eq!(reopened["thread"]["id"], json!(id));
    let agent = sandbox.agent(&repo).await;
    let resolved = agent.call_ok("resolve_feedback", json!({"threadId": second[..8]})).await;
    assert_eq!(resolved["threadId"], json!(second));
    let malformed = window.request("feedback/resolve", json!({"thread_id": "nope"})).await;
    assert_eq!(error_code(&malformed), code::INVALID_PARAMS);
    let said = malformed.error.as_ref().map(|e| e.message.clone()).unwrap_or_default();
    assert!(said.contains("\"nope\" is not a thread id") && said.contains("at least 4 characters"), "{said}");
    let short = window.request("feedback/resolve", json!({"thread_id": id[..3]})).await;
    assert_eq!(error_code(&short), code::INVALID_PARAMS);
    let unmatched = window.request("feedback/resolve", json!({"thread_id": "ffff0000"})).await;
    assert_eq!(error_code(&unmatched), code::NOT_FOUND, "{unmatched:?}");

    // Outside any git repository: a git failure.
    let plain = sandbox.dir.path().join("plain");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let sessions = window.request("sessions/list", json!({"workspace": plain})).await;
    assert_eq!(error_code(&sessions), code::GIT_FAILED, "{sessions:?}");
    let missing =
        window.request("sessions/complete", json!({"review_id": "2026-01-01-001", "final_status": "merged"})).await;
    assert_eq!(error_code(&missing), code::NOT_FOUND, "{missing:?}");
    let status =
        window.request("sessions/complete", json!({"review_id": "2026-01-01-001", "final_status": "done"})).await;
    assert_eq!(error_code(&status), code::INVALID_PARAMS, "{status:?}");

    // Methods without params take none, `null` or `{}`, and nothing else.
    assert!(window.request("status", Value::Null).await.error.is_none());
    assert!(window.request("status", json!({})).await.error.is_none());
    let extra = window.request("status", json!({"verbose": true})).await;
    assert_eq!(error_code(&extra), code::INVALID_PARAMS);
    let replay = window.request("events/replay", json!({})).await;
    assert!(replay.error.is_none(), "events/replay with no params replays everything kept: {replay:?}");
}

#[tokio::test]
async fn a_method_not_for_the_role_is_refused_and_changes_nothing() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("a.rs", "fn a() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let subscribe = window.request("subscribe", json!({"workspaces": [repo]})).await;
    assert_eq!(error_code(&subscribe), code::WRONG_ROLE, "{subscribe:?}");
    let mut cli = Editor::connect(&sandbox.socket, &hello_as(Role::Cli, "script", Some(&repo), &[])).await;
    let buffer = cli.request("buffer/changed", json!({"path": repo.join("a.rs"), "text": "fn b() {}\n"})).await;
    assert_eq!(error_code(&buffer), code::WRONG_ROLE, "{buffer:?}");
    assert!(cli.request("subscribe", json!({"workspaces": [repo]})).await.error.is_none());
}

#[tokio::test]
async fn requests_that_cannot_be_answered_by_their_id_are_refused_not_ignored() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[]);
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    for line in [r#"{"jsonrpc":"2.0","id":null,"method":"status"}"#, r#"{"jsonrpc":"2.0","id":2.5,"method":"status"}"#]
    {
        window.send_line(format!("{line}\n").as_bytes()).await;
        // The answer has a null id: read it as the next message.
        let answer = window.request("status", Value::Null).await;
        assert!(answer.error.is_none(), "the connection still serves after {line}");
    }
    // The refusals themselves came first, each with -32600.
    let mut raw = UnixStream::connect(&sandbox.socket).await.expect("connect");
    let hello = Request::new(
        Id::Number(0),
        "hello",
        serde_json::to_value(hello_as(Role::Cli, "raw", Some(&repo), &[])).expect("hello"),
    );
    raw.write_all(&to_line(&hello)).await.expect("hello");
    raw.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"status\"}\n").await.expect("write");
    let mut lines = BufReader::new(raw).lines();
    let _hello_reply = tokio::time::timeout(DEADLINE, lines.next_line()).await.expect("hello reply in time");
    let refusal = tokio::time::timeout(DEADLINE, lines.next_line())
        .await
        .expect("a request with a null id is answered, not left waiting")
        .expect("read")
        .expect("a line");
    let refusal: Value = serde_json::from_str(&refusal).expect("json");
    assert_eq!(refusal["error"]["code"], json!(code::INVALID_REQUEST), "{refusal}");
    assert_eq!(refusal["id"], Value::Null);
}

#[tokio::test]
async fn a_relative_workspace_without_a_cwd_is_refused_in_hello() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let mut raw = UnixStream::connect(&sandbox.socket).await.expect("connect");
    let hello = Request::new(
        Id::Number(1),
        "hello",
        serde_json::to_value(hello_as(Role::Editor, "vim", None, &[Path::new("src/app")])).expect("hello"),
    );
    raw.write_all(&to_line(&hello)).await.expect("hello");
    let mut lines = BufReader::new(raw).lines();
    let answer =
        tokio::time::timeout(DEADLINE, lines.next_line()).await.expect("answered").expect("read").expect("line");
    let answer: Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(answer["error"]["code"], json!(code::INVALID_PARAMS), "{answer}");
    assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("src/app")), "{answer}");
}

#[tokio::test]
async fn a_window_opened_through_a_symlink_meets_the_agent_in_the_real_folder() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("real-app", &[("a.rs", "fn a() {}\n")]);
    let link = sandbox.dir.path().join("linked-app");
    std::os::unix::fs::symlink(&repo, &link).expect("symlink");
    let _daemon = sandbox.start_daemon();
    let window = sandbox.editor("vscode", &[&link]).await;
    let _answering = window.answer_in_background();
    let agent = sandbox.agent(&repo).await;
    let presented = agent.call_ok("present_review", review_args("# Walkthrough", &repo)).await;
    assert_eq!(presented["delivered_to"].as_array().map(Vec::len), Some(1), "{presented}");
    // And the other way round: a thread the window makes through the link
    // is the agent's.
    let mut window = sandbox.editor("vscode-2", &[&link]).await;
    create_thread(&mut window, &link.join("a.rs"), "Through the link").await;
    let listed = agent.call_ok("get_feedback", json!({})).await;
    assert_eq!(listed["threads"][0]["file"], json!("a.rs"), "{listed}");
}

#[tokio::test]
async fn two_windows_with_one_editor_id_route_to_the_newer() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("a.rs", "fn a() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let mut old = sandbox.editor_with("old", Some("window-1"), &[&repo]).await;
    old.selection = json!({"path": repo.join("a.rs"), "text": "old", "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}});
    let _old = old.answer_in_background();
    let mut new = sandbox.editor_with("new", Some("window-1"), &[&repo]).await;
    new.selection = json!({"path": repo.join("a.rs"), "text": "new", "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}});
    let _new = new.answer_in_background();
    let agent = sandbox.agent_with(&repo, &[("PARLEY_EDITOR_ID", "window-1")]).await;
    for _ in 0..5 {
        let selection = agent.call_ok("get_selection", json!({})).await;
        assert_eq!(selection["selectedText"], json!("new"), "{selection}");
    }
}

#[tokio::test]
async fn only_editor_windows_count_as_showing_a_review() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("a.rs", "fn a() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let mut watcher = Editor::connect(&sandbox.socket, &hello_as(Role::Cli, "parley-watch", Some(&repo), &[])).await;
    watcher.call("subscribe", json!({"workspaces": [repo]})).await;
    let agent = sandbox.agent(&repo).await;
    let presented = agent.call_ok("present_review", review_args("# Nobody's window", &repo)).await;
    assert_eq!(presented["delivered_to"], json!([]), "{presented}");
    assert!(presented["message"].as_str().is_some_and(|m| m.contains("no editor window")), "{presented}");
    // The subscribed CLI still got the event.
    let event = watcher.next_notification().await;
    assert_eq!(event.method, "review/updated");
}

#[tokio::test]
async fn a_window_that_falls_behind_is_closed_so_it_knows_to_resync() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("a.rs", "fn a() {}\n")]);
    let _daemon = sandbox.start_daemon();
    // A window that reads slowly during the burst (a line every 50 ms, so
    // no write to it ever stalls for the 5 s that would close it anyway),
    // then as fast as it can.
    let mut raw = UnixStream::connect(&sandbox.socket).await.expect("connect");
    let hello = Request::new(
        Id::Number(0),
        "hello",
        serde_json::to_value(hello_as(Role::Editor, "slow", None, &[&repo])).expect("hello"),
    );
    raw.write_all(&to_line(&hello)).await.expect("hello");
    let burst_over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let slow = burst_over.clone();
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(raw).lines();
        let mut read = 0usize;
        loop {
            match lines.next_line().await {
                Ok(Some(_)) => read += 1,
                Ok(None) | Err(_) => return read,
            }
            if !slow.load(std::sync::atomic::Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });
    // A burst of events far beyond its queue of 256, from a connection
    // that reads its answers as they come: big comments fill the socket first.
    let cli = UnixStream::connect(&sandbox.socket).await.expect("connect");
    let (cli_read, mut cli_write) = cli.into_split();
    let hello = Request::new(
        Id::Number(0),
        "hello",
        serde_json::to_value(hello_as(Role::Cli, "burst", Some(&repo), &[])).expect("hello"),
    );
    cli_write.write_all(&to_line(&hello)).await.expect("hello");
    const BURST: usize = 600;
    let answers = tokio::spawn(async move {
        let mut lines = BufReader::new(cli_read).lines();
        let mut answered = 0usize;
        // The hello answer, then one answer per thread.
        while answered < BURST + 1 {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    assert!(!line.contains("\"error\""), "a create failed: {line}");
                    answered += 1;
                }
                _ => break,
            }
        }
        answered
    });
    let body = "x".repeat(16 * 1024);
    let file = repo.join("a.rs");
    for n in 0..BURST {
        let request = Request::new(
            Id::Number(n as i64 + 1),
            "feedback/create",
            json!({"path": file, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 2}}, "body": body}),
        );
        cli_write.write_all(&to_line(&request)).await.expect("send a create");
    }
    let answered =
        tokio::time::timeout(Duration::from_secs(120), answers).await.expect("creates answered").expect("task");
    assert_eq!(answered, BURST + 1);
    burst_over.store(true, std::sync::atomic::Ordering::Relaxed);
    let read = tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .expect("the dropped window's connection is closed once its queued lines are written")
        .expect("reader task");
    assert!(read > 1 && read < BURST + 1, "it read {read} lines before the end: some events, not all");
}
