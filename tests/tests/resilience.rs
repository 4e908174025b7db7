//! The daemon and the shim under stress: crashes, restarts, races to start,
//! over-long lines, garbage, and clients that break the rules.

use std::time::Duration;

use parley_tests::{DEADLINE, RawShim, Sandbox, review_args, tool_names};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

#[tokio::test]
async fn agents_survive_a_daemon_killed_with_sigkill() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let mut daemon = sandbox.start_daemon();
    let first_pid = daemon.pid();
    let mut agents = Vec::new();
    for _ in 0..8 {
        agents.push(sandbox.agent(&repo).await);
    }
    agents[0].call_ok("present_review", review_args("# before the crash", &repo)).await;
    daemon.kill_hard();
    assert!(sandbox.socket.exists(), "kill -9 leaves a stale socket behind");

    // Every agent's next call succeeds: the shims start one new daemon
    // between them and replay each agent's handshake.
    let calls = agents.iter().enumerate().map(|(i, agent)| {
        let repo = repo.clone();
        async move { agent.call_ok("present_review", review_args(&format!("# after, from {i}"), &repo)).await }
    });
    let results = futures::future::join_all(calls).await;
    assert_eq!(results.len(), 8);
    let status = sandbox.status();
    assert_ne!(status["pid"], json!(first_pid), "a new daemon runs");
    assert_eq!(status["connections"]["mcp"], json!(8), "all eight agents reconnected to the one new daemon");
    // The review acknowledged before the crash was durable; the new daemon
    // built on it (revisions continue).
    let revisions: Vec<u64> = results.iter().filter_map(|r| r["revision"].as_u64()).collect();
    assert_eq!(revisions.iter().max(), Some(&9), "{revisions:?}");
}

#[tokio::test]
async fn a_call_in_flight_at_a_crash_fails_with_its_own_id_and_is_not_resent() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let mut daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("window", &[&repo]).await;
    let mut shim = RawShim::start(&sandbox, &repo, &[]);
    shim.handshake().await;
    shim.send(
        r#"{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"get_selection","arguments":{}}}"#,
    )
    .await;
    // The call is in the daemon, waiting for the window's answer: crash now.
    window.wait_request("selection/get").await;
    daemon.kill_hard();
    let failed = shim.recv().await;
    assert_eq!(failed["id"], json!("call-7"));
    assert_eq!(failed["error"]["code"], json!(-32000));
    let message = failed["error"]["message"].as_str().expect("message");
    assert!(message.contains("not retried"), "{message}");

    // A window on the new daemon must never see the old request again.
    let next = r##"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"present_review","arguments":{"content":"# back"}}}"##;
    shim.send(next).await;
    let answer = shim.recv().await;
    assert_eq!(answer["id"], json!(8), "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["success"], json!(true), "{answer}");
    let mut window = sandbox.editor("window", &[&repo]).await;
    let replay = window.call("events/replay", json!({"after": 0})).await;
    assert_eq!(replay["events"].as_array().map(Vec::len), Some(1), "exactly one call reached the new daemon");
    shim.close_stdin();
    assert_eq!(shim.exit_code().await, Some(0));
}

#[tokio::test]
async fn a_call_a_crashed_daemon_never_read_is_sent_to_the_new_one_and_runs_once() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let mut daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("window", &[&repo]).await;
    let mut shim = RawShim::start(&sandbox, &repo, &[]);
    shim.handshake().await;
    // One call the daemon has read: it waits for the window's answer.
    shim.send(
        r#"{"jsonrpc":"2.0","id":"read","method":"tools/call","params":{"name":"get_selection","arguments":{}}}"#,
    )
    .await;
    window.wait_request("selection/get").await;
    // The daemon hangs, a call is written that it never reads, and it dies:
    // the shim's connection is reset with that call unread.
    signal(daemon.pid(), "STOP");
    wait_until_stopped(daemon.pid());
    let unread = r##"{"jsonrpc":"2.0","id":"unread","method":"tools/call","params":{"name":"present_review","arguments":{"content":"# sent once"}}}"##;
    shim.send(unread).await;
    wait_for_unread_bytes(&sandbox.socket);
    daemon.kill_hard();

    let mut answers = [shim.recv().await, shim.recv().await];
    answers.sort_by_key(|a| a["id"].as_str().map(str::to_owned));
    let [read, moved] = answers;
    assert_eq!(read["id"], json!("read"), "{read}");
    assert_eq!(read["error"]["code"], json!(-32000), "the call the daemon had read is not run again: {read}");
    assert!(read["error"]["message"].as_str().is_some_and(|m| m.contains("not retried")), "{read}");
    assert_eq!(moved["id"], json!("unread"), "{moved}");
    assert_eq!(moved["result"]["structuredContent"]["success"], json!(true), "the unread call ran: {moved}");
    let mut window = sandbox.editor("window", &[&repo]).await;
    let replay = window.call("events/replay", json!({"after": 0})).await;
    let events = replay["events"].as_array().expect("events");
    assert_eq!(events.len(), 1, "the new daemon ran the unread call, once: {replay}");
    shim.close_stdin();
    assert_eq!(shim.exit_code().await, Some(0));
}

fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status();
    assert!(status.expect("run kill").success(), "kill -{signal} {pid} failed");
}

/// Waits until every thread of `pid` has stopped: a signal is delivered to a
/// running thread a moment after `kill` returns.
fn wait_until_stopped(pid: u32) {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("list the daemon's threads");
        let stopped = tasks.flatten().all(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            // The state follows the command name, which is in parentheses.
            stat.rfind(')').and_then(|end| stat[end + 1..].split_whitespace().next()) == Some("T")
        });
        if stopped {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the daemon did not stop");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Waits until a connection the daemon accepted on `socket` holds bytes it has
/// not read (`ss`, from iproute2, shows each Unix socket's receive queue).
fn wait_for_unread_bytes(socket: &std::path::Path) {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let out = std::process::Command::new("ss")
            .args(["-x", "-n"])
            .output()
            .expect("run ss: install iproute2 (scripts/test does)");
        let listing = String::from_utf8_lossy(&out.stdout);
        let queued = listing.lines().any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.len() > 4
                && fields[4] == socket.to_string_lossy()
                && fields[2].parse::<u64>().is_ok_and(|bytes| bytes > 0)
        });
        if queued {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the shim never wrote the call to the daemon ({}):\n{listing}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[tokio::test]
async fn two_shims_racing_to_start_the_daemon_end_with_one() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let (one, two, three) = tokio::join!(sandbox.agent(&repo), sandbox.agent(&repo), sandbox.agent(&repo));
    let status = sandbox.status();
    assert_eq!(status["connections"]["mcp"], json!(3), "all shims reached the same daemon: {status}");
    for agent in [&one, &two, &three] {
        agent.call_ok("get_selection", json!({})).await;
    }
    let log = std::fs::read_to_string(sandbox.socket.with_extension("log"))
        .expect("the started daemon logs beside its socket");
    assert_eq!(log.matches("listening on").count(), 1, "exactly one daemon started:\n{log}");
    // Started with the environment that keeps its allocator lean, whatever the build.
    let environ = std::fs::read(format!("/proc/{}/environ", status["pid"])).expect("the daemon's environment");
    let environ = String::from_utf8_lossy(&environ);
    for (key, value) in parley_protocol::DAEMON_ENV {
        assert!(environ.split('\0').any(|entry| entry == format!("{key}={value}")), "{key} is not {value}");
    }
}

#[tokio::test]
async fn the_shim_drops_a_line_over_the_cap_and_carries_on() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let _daemon = sandbox.start_daemon();
    let mut shim = RawShim::start(&sandbox, &repo, &[]);
    shim.handshake().await;
    let mut huge =
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"present_review","arguments":{"content":""#
            .to_vec();
    huge.resize(17 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}}}\n");
    shim.send_bytes(&huge).await;
    shim.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#).await;
    let dropped = shim.recv().await;
    assert_eq!(dropped["error"]["code"], json!(-32001), "{dropped}");
    assert!(dropped["error"]["message"].as_str().is_some_and(|m| m.contains("16 MiB")));
    let listed = shim.recv().await;
    assert_eq!(listed["id"], json!(3));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(parley_tests::tool_names().len()));
}

/// A line the daemon cannot read as JSON (not JSON, not UTF-8, nested too
/// deep) is answered with a parse error, under its id when that can be read,
/// and the lines after it are relayed as usual; a line nested as deep as the
/// daemon reads still reaches it.
#[tokio::test]
async fn the_shim_answers_a_line_that_is_not_json_with_a_parse_error_and_carries_on() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let _daemon = sandbox.start_daemon();
    let mut shim = RawShim::start(&sandbox, &repo, &[]);
    shim.handshake().await;
    // `arguments` nested `depth` deep inside the envelope's three objects.
    let call = |id: u32, depth: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_feedback","arguments":{{"x":{}{}}}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    shim.send("not json").await;
    shim.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\xff\"}\n").await;
    shim.send(&call(3, 100_000)).await;
    shim.send(&call(4, 127 - 3)).await;
    shim.send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#).await;
    for (id, what) in [(json!(null), "not JSON"), (json!(2), "not UTF-8"), (json!(3), "more than 127 deep")] {
        let answer = shim.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], json!(-32700), "{answer}");
        let message = answer["error"]["message"].as_str().expect("a message");
        assert!(message.starts_with("parse error: ") && message.contains(what), "{message}");
    }
    // Read by the daemon, which refuses the unknown argument itself; it
    // answers requests concurrently, so the ping may come first.
    let (first, second) = (shim.recv().await, shim.recv().await);
    let (deepest, pong) = if first["id"] == json!(4) { (first, second) } else { (second, first) };
    assert_eq!(deepest["id"], json!(4), "{deepest}");
    assert_eq!(deepest["result"]["isError"], json!(true), "{deepest}");
    assert!(
        deepest["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("unknown field `x`")),
        "{deepest}"
    );
    assert_eq!(pong["id"], json!(5), "{pong}");
    assert!(pong["result"].is_object(), "{pong}");
    shim.close_stdin();
    assert_eq!(shim.exit_code().await, Some(0));
}

#[tokio::test]
async fn replies_still_due_are_written_before_the_shim_exits() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let _daemon = sandbox.start_daemon();
    let mut shim = RawShim::start(&sandbox, &repo, &[]);
    // The whole conversation at once, then EOF, as `printf … | parley-mcp` does.
    let conversation = [
        RawShim::initialize(1),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        r##"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"present_review","arguments":{"content":"# piped"}}}"##.to_owned(),
    ];
    for line in &conversation {
        shim.send(line).await;
    }
    shim.close_stdin();
    assert_eq!(shim.recv().await["id"], json!(1));
    let call = shim.recv().await;
    assert_eq!(call["id"], json!(2));
    assert_eq!(call["result"]["structuredContent"]["success"], json!(true), "{call}");
    assert_eq!(shim.exit_code().await, Some(0));
}

#[tokio::test]
async fn with_spawning_forbidden_a_missing_daemon_is_a_clear_error() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let mut shim = RawShim::start(&sandbox, &repo, &[("PARLEY_NO_SPAWN", "1")]);
    shim.send(&RawShim::initialize(1)).await;
    let answer = shim.recv().await;
    assert_eq!(answer["id"], json!(1));
    assert_eq!(answer["error"]["code"], json!(-32000));
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(message.contains("PARLEY_NO_SPAWN is set") && message.contains("parley daemon"), "{message}");
    assert!(!sandbox.socket.exists(), "no daemon was started");
}

/// Sends raw lines on a fresh connection and reads what comes back.
async fn raw_connection(
    sandbox: &Sandbox,
) -> (BufReader<tokio::net::unix::OwnedReadHalf>, tokio::net::unix::OwnedWriteHalf) {
    let stream = UnixStream::connect(&sandbox.socket).await.expect("connect");
    let (read, write) = stream.into_split();
    (BufReader::new(read), write)
}

async fn read_json(reader: &mut BufReader<tokio::net::unix::OwnedReadHalf>) -> Option<Value> {
    let mut line = String::new();
    let n = tokio::time::timeout(DEADLINE, reader.read_line(&mut line)).await.expect("answer in time").expect("read");
    (n > 0).then(|| serde_json::from_str(&line).expect("the daemon sends JSON"))
}

#[tokio::test]
async fn garbage_and_unknown_methods_never_hurt_the_daemon() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;

    // No hello first: refused and closed.
    let (mut reader, mut writer) = raw_connection(&sandbox).await;
    writer.write_all(b"\x00\xff garbage\n").await.expect("write");
    let refused = read_json(&mut reader).await.expect("an error before closing");
    assert_eq!(refused["error"]["code"], json!(-32700));
    assert_eq!(read_json(&mut reader).await, None, "closed after a bad hello");

    // Protocol mismatch: refused with advice.
    let (mut reader, mut writer) = raw_connection(&sandbox).await;
    let hello = json!({"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":99,"role":"cli","client":{"name":"x","version":"0"}}});
    writer.write_all(format!("{hello}\n").as_bytes()).await.expect("write");
    let mismatch = read_json(&mut reader).await.expect("an error");
    assert_eq!(mismatch["error"]["code"], json!(-32003));
    assert!(mismatch["error"]["message"].as_str().is_some_and(|m| m.contains("upgrade")), "{mismatch}");

    // After a good hello, bad lines get errors and the connection lives on.
    let (mut reader, mut writer) = raw_connection(&sandbox).await;
    let hello = json!({"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":1,"role":"cli","client":{"name":"x","version":"0"}}});
    writer.write_all(format!("{hello}\n").as_bytes()).await.expect("write");
    assert!(read_json(&mut reader).await.expect("hello answer")["result"]["pid"].is_number());
    let cases: [(&[u8], Value, i64); 5] = [
        (b"{not json\n", Value::Null, -32700),
        (b"\xc3\x28\xff\xfe\n", Value::Null, -32700),
        (b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"no/such\"}\n", json!(5), -32601),
        (b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"review/get\",\"params\":{\"workspace\":7}}\n", json!(6), -32602),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"events/replay\",\"params\":{\"after\":0,\"extra\":1}}\n",
            json!(7),
            -32602,
        ),
    ];
    for (line, id, code) in cases {
        writer.write_all(line).await.expect("write");
        let answer = read_json(&mut reader).await.expect("an answer");
        assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (id, json!(code)), "{answer}");
    }
    writer.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"status\"}\n").await.expect("write");
    assert_eq!(read_json(&mut reader).await.expect("status")["result"]["connections"]["cli"], json!(1));

    // A line over the cap: an error, then the connection closes.
    let mut huge = vec![b'x'; 17 * 1024 * 1024];
    huge.push(b'\n');
    writer.write_all(&huge).await.expect("write");
    let over = read_json(&mut reader).await.expect("an error before closing");
    assert_eq!(over["error"]["code"], json!(-32001));
    assert_eq!(read_json(&mut reader).await, None);

    // Everyone else is still served.
    agent.call_ok("present_review", review_args("# still here", &repo)).await;
}

#[tokio::test]
async fn a_window_that_stops_reading_is_dropped_and_others_carry_on() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let _stuck = sandbox.editor("stuck", &[&repo]).await; // never reads again
    let mut healthy = sandbox.editor("healthy", &[&repo]).await;
    let big = format!("# big\n\n{}", "word ".repeat(200_000));
    let mut dropped = false;
    for round in 0..400 {
        let result = agent.call_ok("present_review", review_args(&big, &repo)).await;
        let update = healthy.next_notification().await;
        assert_eq!(update.params["review"]["revision"], result["revision"], "round {round}");
        if result["delivered_to"] == json!([{"editor": "healthy"}]) {
            dropped = true;
            break;
        }
    }
    assert!(dropped, "the stuck window was never dropped");
    assert_eq!(sandbox.status()["connections"]["editor"], json!(1), "the stuck window's connection was closed");
}

#[tokio::test]
async fn a_second_daemon_is_refused_and_a_stale_socket_replaced() {
    let sandbox = Sandbox::new();
    let mut daemon = sandbox.start_daemon();
    let (code, _, err) = sandbox.cli(&["daemon"]);
    assert_eq!(code, 1);
    assert!(err.contains("another Parley daemon") && err.contains("parley stop"), "{err}");
    daemon.kill_hard();
    assert!(sandbox.socket.exists());
    let _again = sandbox.start_daemon();
    assert!(sandbox.status()["pid"].is_number());
}

#[tokio::test]
async fn the_socket_and_its_directory_are_private() {
    let sandbox = Sandbox::new();
    let dir = sandbox.socket.parent().expect("socket dir").to_owned();
    assert!(!dir.exists());
    let _daemon = sandbox.start_daemon();
    assert_eq!(file_mode(&dir), 0o700, "the daemon created its directory private");
    let socket_mode = file_mode(&sandbox.socket);
    if socket_mode != 0o600 {
        // Acceptable only on a filesystem that keeps no mode on a socket,
        // and then the daemon must say so.
        assert!(!sockets_keep_their_mode(), "the socket is {socket_mode:o}, not 0600");
        let logs = daemon_logs(&sandbox);
        assert!(logs.contains("although 0600 was asked for"), "the daemon did not warn:\n{logs}");
    }
}

fn file_mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

/// Whether this filesystem keeps a mode set on a socket with chmod.
fn sockets_keep_their_mode() -> bool {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("probe.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&path).expect("bind a probe socket");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod the probe");
    file_mode(&path) == 0o600
}

/// Everything the sandbox's daemons wrote to their logs.
fn daemon_logs(sandbox: &Sandbox) -> String {
    let mut logs = String::new();
    for entry in std::fs::read_dir(sandbox.dir.path()).expect("sandbox dir").flatten() {
        if entry.file_name().to_string_lossy().starts_with("daemon-") {
            logs.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    logs
}

#[tokio::test]
async fn stop_and_status_report_what_happened() {
    let sandbox = Sandbox::new();
    let (code, out, _) = sandbox.cli(&["status"]);
    assert_eq!(code, 3, "status of a stopped daemon exits 3");
    assert!(out.contains("not running"), "{out}");
    let _daemon = sandbox.start_daemon();
    let (code, out, _) = sandbox.cli(&["status"]);
    assert_eq!(code, 0);
    assert!(out.contains("Parley daemon") && out.contains(&sandbox.socket.display().to_string()), "{out}");
    let (code, out, _) = sandbox.cli(&["stop"]);
    assert_eq!(code, 0);
    assert!(out.contains("stopped"), "{out}");
    assert!(!sandbox.socket.exists(), "stop removes the socket");
    let (_, out, _) = sandbox.cli(&["status", "--json"]);
    assert_eq!(serde_json::from_str::<Value>(&out).expect("json")["running"], json!(false));
}

#[tokio::test]
async fn status_says_where_the_daemon_logs() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    // A daemon an agent's shim started logs beside the socket, named after it.
    let agent = sandbox.agent(&repo).await;
    let beside = sandbox.socket.with_extension("log");
    let status = sandbox.status();
    assert_eq!(status["log"], json!({"to": "file", "path": beside}), "{status:#}");
    let text = std::fs::read_to_string(&beside).expect("the log is there");
    assert!(text.contains("listening on"), "{text}");
    let (code, out, _) = sandbox.cli(&["status"]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.starts_with("log:") && l.ends_with(&beside.display().to_string())), "{out}");
    drop(agent);
    assert_eq!(sandbox.cli(&["stop"]).0, 0);

    // Started with its stderr sent to a file of the caller's choosing.
    let _daemon = sandbox.start_daemon();
    let path = sandbox.status()["log"]["path"].as_str().map(std::path::PathBuf::from).expect("a log file");
    assert!(
        path.starts_with(sandbox.dir.path())
            && path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("daemon-")),
        "{}",
        path.display()
    );
}

#[tokio::test]
async fn the_socket_path_does_not_depend_on_the_environment() {
    let scrubbed = std::process::Command::new(parley_tests::bin("parley"))
        .arg("socket-path")
        .env_clear()
        .env("HOME", "/nonexistent")
        .env("PATH", "/usr/bin:/bin")
        .env("USER", "someone")
        .output()
        .expect("run parley");
    let full = std::process::Command::new(parley_tests::bin("parley"))
        .arg("socket-path")
        .env_remove("PARLEY_SOCKET")
        .env("XDG_RUNTIME_DIR", "/tmp/elsewhere")
        .env("TMPDIR", "/var/tmp/other")
        .output()
        .expect("run parley");
    assert!(scrubbed.status.success() && full.status.success());
    let path = String::from_utf8_lossy(&scrubbed.stdout).trim().to_owned();
    assert_eq!(path, String::from_utf8_lossy(&full.stdout).trim());
    assert!(path.ends_with("parley-v1.sock"), "{path}");
}

#[tokio::test]
async fn a_shared_socket_folder_keeps_its_mode_and_the_refusal_names_a_folder_that_works() {
    use std::os::unix::fs::PermissionsExt;
    let mut sandbox = Sandbox::new();
    // A stand-in for /tmp: sticky and open to everyone.
    let shared = sandbox.dir.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod 1777");
    let mode = |dir: &std::path::Path| std::fs::metadata(dir).expect("stat").permissions().mode() & 0o7777;
    sandbox.socket = shared.join("p.sock");
    let own = shared.join(format!("parley-{}", parley_protocol::socket::current_uid())).join("p.sock");

    let mut daemon = tokio::process::Command::from(sandbox.command("parley"));
    daemon.arg("daemon").stdin(std::process::Stdio::null()).kill_on_drop(true);
    let out = tokio::time::timeout(DEADLINE, daemon.output()).await.expect("the daemon refuses at once").expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the daemon must not serve from a shared folder: {err}");
    assert!(err.contains("mode 1777") && err.contains("never changes the mode"), "{err}");
    assert!(
        err.contains(&format!("PARLEY_SOCKET to a path in a folder of its own, such as {}", own.display())),
        "{err}"
    );
    assert_eq!(mode(&shared), 0o1777, "the shared folder keeps its mode, sticky bit included");

    // A client that would start a daemon refuses the same way, before it
    // writes a log or a lock into the shared folder.
    let (code, _, err) = sandbox.cli(&["inbox"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("never changes the mode") && err.contains(&own.display().to_string()), "{err}");
    assert_eq!(std::fs::read_dir(&shared).expect("list").count(), 0, "nothing was written into the shared folder");
    assert_eq!(mode(&shared), 0o1777);

    // The folder the refusal names works: Parley creates it private, and the
    // shared folder around it stays as it was.
    sandbox.socket = own.clone();
    let _daemon = sandbox.start_daemon();
    assert_eq!(sandbox.status()["socket"], json!(own));
    assert_eq!(mode(own.parent().expect("folder")), 0o700, "the folder Parley made is private");
    assert_eq!(mode(&shared), 0o1777);
}

#[tokio::test]
async fn a_shim_with_a_scrubbed_environment_meets_a_daemon_started_with_a_full_one() {
    // Uses the real default socket path: the daemon runs without PARLEY_SOCKET.
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let mut daemon = std::process::Command::new(parley_tests::bin("parley"))
        .arg("daemon")
        .env_remove("PARLEY_SOCKET")
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("XDG_RUNTIME_DIR", "/tmp/not-the-runtime-dir")
        .env("TMPDIR", "/var/tmp")
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start daemon");
    let default_socket = String::from_utf8(
        std::process::Command::new(parley_tests::bin("parley"))
            .arg("socket-path")
            .env_clear()
            .output()
            .expect("socket-path")
            .stdout,
    )
    .expect("utf-8");
    let default_socket = std::path::PathBuf::from(default_socket.trim());
    let deadline = std::time::Instant::now() + DEADLINE;
    while std::os::unix::net::UnixStream::connect(&default_socket).is_err() {
        assert!(std::time::Instant::now() < deadline, "daemon did not listen on {}", default_socket.display());
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "printf '%s\\n%s\\n%s\\n' '{}' '{}' '{}' | env -i HOME=/nonexistent PATH=/usr/bin:/bin USER=someone PARLEY_NO_SPAWN=1 {}",
            RawShim::initialize(1),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            parley_tests::bin("parley-mcp").display()
        ))
        .current_dir(&repo)
        .output()
        .expect("run shim");
    let _ = daemon.kill();
    let _ = daemon.wait();
    let _ = std::fs::remove_file(&default_socket);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"tools\""),
        "the scrubbed shim reached the daemon: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_daemon_under_systemd_says_when_it_is_ready() {
    let sandbox = Sandbox::new();
    let notify_path = sandbox.dir.path().join("notify.sock");
    let notify = std::os::unix::net::UnixDatagram::bind(&notify_path).expect("bind the notify socket");
    notify.set_read_timeout(Some(DEADLINE)).expect("timeout");
    let mut daemon = sandbox
        .command("parley")
        .arg("daemon")
        .env("NOTIFY_SOCKET", &notify_path)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start parley daemon");
    let mut message = [0u8; 64];
    let received = notify.recv(&mut message);
    let listening = std::os::unix::net::UnixStream::connect(&sandbox.socket).is_ok();
    let _ = daemon.kill();
    let _ = daemon.wait();
    let n = received.expect("the daemon notified systemd in time");
    assert_eq!(&message[..n], b"READY=1");
    assert!(listening, "READY=1 comes only once the socket accepts connections");
}

#[tokio::test]
async fn a_daemon_running_a_replaced_binary_hands_over_to_the_new_build() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    // An installation of our own: parley and parley-mcp side by side.
    let install = sandbox.dir.path().join("bin");
    std::fs::create_dir_all(&install).expect("mkdir");
    for name in ["parley", "parley-mcp"] {
        std::fs::copy(parley_tests::bin(name), install.join(name)).expect("install");
    }
    let shim_env = |command: &mut tokio::process::Command| {
        command
            .env("PARLEY_SOCKET", &sandbox.socket)
            .env("PARLEY_DATA_DIR", &sandbox.data)
            .env("XDG_CONFIG_HOME", sandbox.dir.path().join("config"))
            .env_remove("PARLEY_DAEMON")
            .current_dir(&repo);
    };
    let old_agent = rmcp::ServiceExt::serve(
        (),
        rmcp::transport::TokioChildProcess::new(first_command(&install, &shim_env)).expect("spawn"),
    )
    .await
    .expect("handshake");
    let old_pid = sandbox.status()["pid"].clone();

    // An upgrade replaces the binary while the daemon runs.
    std::fs::remove_file(install.join("parley")).expect("remove");
    std::fs::copy(parley_tests::bin("parley"), install.join("parley")).expect("reinstall");
    let new_agent = rmcp::ServiceExt::serve(
        (),
        rmcp::transport::TokioChildProcess::new(first_command(&install, &shim_env)).expect("spawn"),
    )
    .await
    .expect("handshake with the new daemon");
    let new_pid = sandbox.status()["pid"].clone();
    assert_ne!(old_pid, new_pid, "the old daemon handed over to a new one");
    // Both agents carry on with the new daemon.
    for agent in [&old_agent, &new_agent] {
        let params = rmcp::model::CallToolRequestParams::new("get_selection").with_arguments(serde_json::Map::new());
        let result = agent.call_tool(params).await.expect("a call after the hand-over succeeds");
        assert_ne!(result.is_error, Some(true));
    }
    assert_eq!(sandbox.status()["pid"], new_pid);
}

fn first_command(install: &std::path::Path, env: &dyn Fn(&mut tokio::process::Command)) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(install.join("parley-mcp"));
    env(&mut command);
    command
}

/// A small deterministic generator of odd JSON, so a failure can be replayed.
struct OddJson(u64);

impl OddJson {
    fn next(&mut self) -> u64 {
        // xorshift64
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }

    /// Any JSON value, nested at most `depth` deep.
    fn value(&mut self, depth: u32) -> Value {
        match self.next() % if depth == 0 { 6 } else { 8 } {
            0 => Value::Null,
            1 => json!(self.next().is_multiple_of(2)),
            2 => json!(self.next() as i64 % 2_000_000 - 1_000_000),
            3 => json!(-1.5e300),
            4 => json!(self.pick(&["", "../../etc/passwd", "file:///nope", "2026-01-01-001", "\u{0}", "é𝄞", "x"])),
            5 => json!("y".repeat((self.next() % 5000) as usize)),
            6 => Value::Array((0..self.next() % 4).map(|_| self.value(depth - 1)).collect()),
            _ => self.arguments(depth - 1),
        }
    }

    /// An object whose keys are mostly the tools' real argument names.
    fn arguments(&mut self, depth: u32) -> Value {
        const KEYS: &[&str] = &[
            "content",
            "baseUri",
            "mode",
            "title",
            "section",
            "filePath",
            "threadId",
            "body",
            "summary",
            "scope",
            "relevant_docs",
            "focus_areas",
            "previous_review_id",
            "review_id",
            "limit",
            "final_status",
            "notes",
            "unknown",
            "",
        ];
        let mut object = serde_json::Map::new();
        for _ in 0..self.next() % 5 {
            object.insert(self.pick(KEYS).to_owned(), self.value(depth));
        }
        Value::Object(object)
    }
}

#[tokio::test]
async fn odd_tool_arguments_always_get_an_answer() {
    // Every pinned tool, and one that does not exist.
    let names = tool_names();
    let tools: Vec<&str> = names.iter().map(String::as_str).chain(["no_such_tool"]).collect();
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let mut shim = RawShim::start(&sandbox, &repo, &[]);
    shim.send(&RawShim::initialize(0)).await;
    assert!(shim.recv().await["result"]["serverInfo"].is_object());
    shim.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    let mut odd = OddJson(0x5eed_1234_abcd_0001);
    for id in 1..=400u64 {
        let name = odd.pick(&tools);
        let arguments = if odd.next().is_multiple_of(10) { odd.value(2) } else { odd.arguments(2) };
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
        shim.send(&call.to_string()).await;
        let answer = shim.recv().await;
        assert_eq!(answer["id"], json!(id), "{call} got {answer}");
        let understood = answer["error"]["message"].as_str().is_some_and(|m| !m.is_empty())
            || answer["result"]["content"].is_array();
        assert!(understood, "{call} got {answer}");
    }
    // And the daemon still serves.
    shim.send(
        r#"{"jsonrpc":"2.0","id":1000,"method":"tools/call","params":{"name":"get_feedback_summary","arguments":{}}}"#,
    )
    .await;
    let answer = shim.recv().await;
    assert_eq!(answer["result"]["structuredContent"]["totalThreads"], json!(0), "{answer}");
}

#[tokio::test]
async fn odd_hub_requests_always_get_an_answer() {
    const METHODS: &[&str] = &[
        "editor/focus",
        "selection/changed",
        "review/get",
        "events/replay",
        "status",
        "feedback/list",
        "feedback/create",
        "feedback/reply",
        "feedback/resolve",
        "feedback/reopen",
        "buffer/changed",
        "subscribe",
        "store/export",
        "store/import",
        "review/request",
        "sessions/list",
        "sessions/get",
        "hello",
        "no/such",
    ];
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let (mut reader, mut writer) = raw_connection(&sandbox).await;
    let hello = json!({"jsonrpc":"2.0","id":0,"method":"hello","params":{"protocol":1,"role":"editor",
        "client":{"name":"fuzz","version":"0"},"workspaces":[repo]}});
    writer.write_all(format!("{hello}\n").as_bytes()).await.expect("write");
    assert!(read_json(&mut reader).await.expect("hello answer")["result"]["pid"].is_number());
    let mut odd = OddJson(0x000d_d1e5_f00d_0002);
    for id in 1..=400u64 {
        let method = odd.pick(METHODS);
        let params = if odd.next().is_multiple_of(10) { odd.value(2) } else { odd.arguments(2) };
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writer.write_all(format!("{request}\n").as_bytes()).await.expect("write");
        let answer = loop {
            let message = read_json(&mut reader).await.unwrap_or_else(|| panic!("closed after {request}"));
            if message.get("id").is_some() && message.get("method").is_none() {
                break message;
            }
        };
        assert_eq!(answer["id"], json!(id), "{request} got {answer}");
        let understood =
            answer["error"]["message"].as_str().is_some_and(|m| !m.is_empty()) || answer.get("result").is_some();
        assert!(understood, "{request} got {answer}");
    }
    writer.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1000,\"method\":\"status\"}\n").await.expect("write");
    let status = loop {
        let message = read_json(&mut reader).await.expect("status");
        if message["id"] == json!(1000) {
            break message;
        }
    };
    assert_eq!(status["result"]["connections"]["editor"], json!(1), "{status}");
}

#[tokio::test]
async fn a_socket_passed_by_systemd_is_served_and_left_to_it() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\n")]);
    let dir = sandbox.socket.parent().expect("socket dir");
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    // systemd's own tool for this: it listens, and on the first connection
    // execs the daemon with the listening socket as fd 3 (LISTEN_FDS=1).
    let log = std::fs::File::create(sandbox.dir.path().join("daemon-activated.log")).expect("log");
    let lender = sandbox.command("parley");
    let parley = lender.get_program().to_owned();
    let mut command = std::process::Command::new("systemd-socket-activate");
    command.arg("-l").arg(&sandbox.socket);
    for (key, value) in lender.get_envs() {
        if let Some(value) = value {
            command.arg("-E").arg(format!("{}={}", key.to_string_lossy(), value.to_string_lossy()));
        }
    }
    let mut activated = command
        .arg(&parley)
        .arg("daemon")
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("systemd-socket-activate runs (Debian's systemd package)");
    let deadline = std::time::Instant::now() + DEADLINE;
    while !sandbox.socket.exists() {
        assert!(std::time::Instant::now() < deadline, "systemd-socket-activate did not listen");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // The agent's shim connects to systemd's socket: no daemon of its own.
    let agent = sandbox.agent_with(&repo, &[("PARLEY_NO_SPAWN", "1")]).await;
    let summary = agent.call_ok("get_feedback_summary", json!({})).await;
    assert_eq!(summary["totalThreads"], json!(0));
    let status = sandbox.status();
    assert_eq!(status["pid"], json!(activated.id()), "the daemon is the process systemd started");
    let mode = std::fs::metadata(&sandbox.socket).expect("stat").permissions().mode() & 0o777;
    assert!(mode == 0o600 || daemon_logs(&sandbox).contains("although 0600"), "mode {mode:o}");
    assert!(daemon_logs(&sandbox).contains("serving the socket systemd passed"), "{}", daemon_logs(&sandbox));

    // Stopped, it leaves the socket file to systemd, which owns it.
    drop(agent);
    let (code, out, _) = sandbox.cli(&["stop"]);
    assert_eq!(code, 0, "{out}");
    let exit = tokio::time::timeout(DEADLINE, async {
        loop {
            if let Some(status) = activated.try_wait().expect("wait") {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the daemon exited");
    assert!(exit.success(), "{exit}");
    assert!(sandbox.socket.exists(), "the socket file is systemd's to remove");
}

/// The daemon has the allocator give pages back as soon as they are empty
/// (an idle daemon otherwise keeps tens of MiB after a burst), unless the
/// user set mimalloc's own `MIMALLOC_PURGE_DELAY`, which is then kept. The
/// log says what the allocator reads back, so a mimalloc whose options are
/// numbered differently fails here.
#[test]
fn the_allocator_gives_memory_back_at_once_unless_the_user_says_otherwise() {
    for (setting, said) in [(None, "after 0 ms"), (Some("7"), "after 7 ms")] {
        let sandbox = Sandbox::new();
        let _daemon = sandbox.start_daemon_with(|command| {
            command.env("PARLEY_LOG", "info,parley_daemon::server=debug").env_remove("MIMALLOC_PURGE_DELAY");
            if let Some(setting) = setting {
                command.env("MIMALLOC_PURGE_DELAY", setting);
            }
        });
        let logs = daemon_logs(&sandbox);
        let line = logs
            .lines()
            .find(|l| l.contains("the allocator purges freed pages"))
            .unwrap_or_else(|| panic!("the daemon did not say how the allocator purges; its log:\n{logs}"));
        assert!(line.ends_with(said), "with MIMALLOC_PURGE_DELAY={setting:?}: {line}");
    }
}
