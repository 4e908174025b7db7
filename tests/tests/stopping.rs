//! Stopping the daemon while clients are open: each is told the daemon is
//! stopping on purpose, waits for one to come back instead of starting one,
//! and `parley stop` reports what really happened.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use parley_protocol::jsonrpc::{Id, Request, to_line};
use parley_tests::{DEADLINE, Sandbox};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// Lines `parley watch` writes to stderr, as they come.
fn watch_lines(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("stderr is piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

fn wait_for(lines: &mpsc::Receiver<String>, want: &str) -> String {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(want) => return line,
            Ok(_) => continue,
            Err(_) => panic!("parley watch never said {want:?}"),
        }
    }
}

#[tokio::test]
async fn an_open_watch_does_not_bring_a_stopped_daemon_back() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[]);
    // No daemon yet: `parley watch` starts one, as an editor plugin would.
    let mut watch = sandbox
        .command("parley")
        .args(["watch"])
        .current_dir(&repo)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start parley watch");
    let lines = watch_lines(&mut watch);
    let first = wait_for(&lines, "watching");

    let (code, out, err) = sandbox.cli(&["stop"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("stopped"), "{out}");
    wait_for(&lines, "the daemon stopped (requested); waiting for it to come back");
    // Well after its back-off would have started one: still nothing.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        std::os::unix::net::UnixStream::connect(&sandbox.socket).is_err(),
        "a daemon is running again after parley stop"
    );
    let (code, out, _) = sandbox.cli(&["status"]);
    assert_ne!(code, 0, "parley status finds no daemon: {out}");

    // A daemon started on purpose is reconnected to.
    let daemon = sandbox.start_daemon();
    let again = wait_for(&lines, "watching");
    assert!(again.contains(&format!("pid {}", daemon.pid())), "{again} (first: {first})");
    let _ = watch.kill();
    let _ = watch.wait();
}

#[tokio::test]
async fn a_client_is_told_why_the_daemon_stops_before_its_connection_closes() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[]);
    let mut daemon = sandbox.start_daemon();
    let stream = tokio::net::UnixStream::connect(&sandbox.socket).await.expect("connect");
    let (read, mut write) = stream.into_split();
    let hello = json!({"protocol": parley_protocol::PROTOCOL_VERSION, "role": "editor", "client": {"name": "raw", "version": "1"}, "workspaces": [repo]});
    write.write_all(&to_line(&Request::new(Id::Number(1), "hello", hello))).await.expect("hello");
    let mut lines = tokio::io::BufReader::new(read).lines();
    let _reply = lines.next_line().await.expect("read").expect("hello reply");
    // A service manager stops the daemon with SIGTERM.
    assert_eq!(daemon.terminate(), Some(0));
    let mut told = None;
    while let Ok(Ok(Some(line))) = tokio::time::timeout(DEADLINE, lines.next_line()).await {
        told = Some(line);
    }
    let told: serde_json::Value = serde_json::from_str(&told.expect("a last line before the end")).expect("json");
    assert_eq!(told["method"], json!("daemon/stopping"), "{told}");
    assert_eq!(told["params"]["reason"], json!("signal"), "{told}");
}
