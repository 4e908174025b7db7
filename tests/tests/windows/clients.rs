//! Windows clients under Wine against a daemon under Wine: an official MCP
//! SDK driving `parley-mcp.exe`, the CLI following a thread on a `\r\n` file
//! across an edit, `parley.exe attach --stdio` (and the daemon it starts),
//! and paths given with backslashes coming out forward-slashed and
//! workspace-relative in the CLI and in hub answers. (`.reviews/` is written
//! by review rounds, which run git: Wine here has no Git for Windows, so the
//! slashes there are held by the daemon's unit tests.)
//!
//! The repositories are made on Linux and reached from Wine as `Z:\…` (Wine
//! maps `/` to `Z:`).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use parley_tests::{Sandbox, git, repo_root, test_dep};
use serde_json::{Value, json};

use super::{WineDaemon, text, windows_bin, windows_bin_or_fail};

/// How long a Wine client may take to say what a test waits for.
const DEADLINE: Duration = Duration::from_secs(60);

/// A Linux path as Windows programs under Wine name it.
fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.to_str().expect("sandbox paths are UTF-8").replace('/', "\\"))
}

fn json_of(output: &Output) -> Value {
    assert!(output.status.success(), "{}", text(output));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(output)))
}

/// A committed repository holding `src/lib.rs` with `content`.
fn repo(sandbox: &Sandbox, content: &str) -> std::path::PathBuf {
    let repo = sandbox.repo("ws", &[("src/lib.rs", content)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    repo
}

/// The lines a child writes on stdout, read on a thread of their own so a
/// test waits for each with a bound.
struct Lines(mpsc::Receiver<String>);

impl Lines {
    fn of(child: &mut Child) -> Lines {
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Lines(receive)
    }

    /// The next line, or `None` once the child closed its stdout.
    fn next(&self, waiting_for: &str) -> Option<String> {
        match self.0.recv_timeout(DEADLINE) {
            Ok(line) => Some(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("nothing within {DEADLINE:?} while waiting for {waiting_for}")
            }
        }
    }

    /// Reads lines until one satisfies `wanted`; every line read on the way.
    fn until(&self, waiting_for: &str, wanted: impl Fn(&str) -> bool) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = self.next(waiting_for).unwrap_or_else(|| panic!("output ended before {waiting_for}: {seen:#?}"));
            let done = wanted(&line);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }
}

#[test]
fn the_python_sdk_drives_the_windows_shim_and_its_review_resolves_in_a_windows_folder() {
    let bin = windows_bin_or_fail!("an official MCP SDK driving parley-mcp.exe");
    let python = test_dep("py/bin/python");
    let daemon = WineDaemon::start(&bin);
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox, "fn a() {}\nfn b() {}\nfn c() {}\n");
    let workspace = windows_path(&repo);

    let out = Command::new(python)
        .arg(repo_root().join("tests/clients/py_wine_client.py"))
        .arg(&workspace)
        .args(["--", "wine"])
        .arg(bin.join("parley-mcp.exe"))
        .current_dir(&repo)
        .env("PARLEY_SOCKET", &daemon.pipe)
        .env("PARLEY_NO_SPAWN", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run the Python SDK scenario");
    let said = text(&out);
    let totals = said.lines().rev().find(|l| l.ends_with(" failed")).unwrap_or("no totals line");
    assert!(
        out.status.success() && totals.ends_with(" passed, 0 failed") && !totals.starts_with("0 passed"),
        "the Python SDK scenario under Wine failed ({totals}):\n{said}"
    );

    // As the Windows CLI shows it: the review in the Windows folder, both
    // references written `src/lib.rs`, resolved to the Windows file.
    let shown = json_of(&daemon.parley(&["review", "show", "--json", "--workspace", &workspace]));
    let reviews = shown["reviews"].as_array().expect("a list of reviews");
    assert_eq!(reviews.len(), 1, "{shown:#}");
    assert_eq!(reviews[0]["base_uri"], json!(workspace), "{shown:#}");
    let references = reviews[0]["references"].as_array().expect("references");
    let file = format!(r"{workspace}\src\lib.rs");
    for (i, line) in [(0, 2), (1, 3)] {
        assert_eq!(references[i]["path"], json!("src/lib.rs"), "{shown:#}");
        assert_eq!(references[i]["line"], json!(line), "{shown:#}");
        assert_eq!(references[i]["resolved_path"], json!(file), "{shown:#}");
    }
    assert!(references[2]["problem"].as_str().is_some_and(|p| p.contains("past the end of src/lib.rs")), "{shown:#}");
}

#[test]
fn a_thread_on_a_crlf_file_follows_lines_inserted_above_it_through_the_watcher() {
    let bin = windows_bin_or_fail!("a thread on a CRLF file followed across an edit");
    let daemon = WineDaemon::start(&bin);
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox, "fn a() {}\r\nfn b() {}\r\nfn c() {}\r\n");
    let workspace = windows_path(&repo);

    let made = json_of(
        &daemon
            .command("parley.exe")
            .args(["feedback", "add", r"src\lib.rs:2", "Why b?", "--json"])
            .current_dir(&repo)
            .stdin(Stdio::null())
            .output()
            .expect("wine runs parley.exe feedback add"),
    );
    assert_eq!((made["path"].as_str(), made["quote"].as_str()), (Some("src/lib.rs"), Some("fn b() {}")), "{made:#}");
    let id = made["id"].as_str().expect("an id").to_owned();

    // `parley watch` prints a thread as it changes; nothing reads the
    // threads meanwhile, so what moves it is the daemon's file watcher.
    let mut watch = daemon
        .command("parley.exe")
        .args(["watch", "--workspace", &workspace])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("wine runs parley.exe watch");
    let lines = Lines::of(&mut watch);
    // It says so once it has subscribed and read the folder's review.
    lines.until("parley watch to start", |l| l.contains("waiting for an agent"));

    std::fs::write(repo.join("src/lib.rs"), "// one\r\n// two\r\nfn a() {}\r\nfn b() {}\r\nfn c() {}\r\n")
        .expect("edit the file");
    let seen = lines.until("the thread to move", |l| l.contains(&id) && l.contains("moved"));
    let moved = seen.last().expect("a line");
    assert!(moved.contains("src/lib.rs:4"), "{seen:#?}");
    let _ = watch.kill();
    let _ = watch.wait();

    let listed = json_of(&daemon.parley(&["feedback", "list", "--json", "--workspace", &workspace]));
    let thread = &listed[0];
    assert_eq!(thread["id"], json!(id), "{listed:#}");
    assert_eq!(thread["path"], json!("src/lib.rs"), "{listed:#}");
    assert_eq!(thread["range"]["start"], json!({"line": 3, "character": 0}), "{listed:#}");
    assert_eq!(thread["range"]["end"], json!({"line": 3, "character": 9}), "a column never counts the \\r: {listed:#}");
    assert_eq!(thread["quote"], json!("fn b() {}"), "{listed:#}");
    assert_eq!(thread["state"], json!("anchored"), "{listed:#}");
}

/// One hub connection through `parley.exe attach --stdio`: a window's hello
/// on the folder, then `feedback/list`. Both answers, once attach ended, and
/// what it said on stderr.
///
/// Its stderr goes to a file, not a pipe: a process Wine starts keeps its
/// starter's Unix stderr (for Wine's own messages), whatever handles it was
/// given, so a daemon attach starts would hold a pipe open for its life.
fn attach_and_list(command: &mut Command, workspace: &str, sandbox: &Sandbox) -> (Vec<Value>, Output) {
    let stderr_path = sandbox.dir.path().join("attach.stderr");
    let stderr = std::fs::File::create(&stderr_path).expect("create attach's stderr file");
    let mut child = command
        .args(["attach", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("wine runs parley.exe attach --stdio");
    let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "hello", "params": {
        "protocol": 1, "role": "editor", "client": {"name": "wine-window", "version": "1"}, "workspaces": [workspace]}});
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "feedback/list", "params": null});
    let mut stdin = child.stdin.take().expect("piped stdin");
    write!(stdin, "{hello}\n{list}\n").expect("write to attach");
    drop(stdin);
    let lines = Lines::of(&mut child);
    let mut answers = Vec::new();
    while let Some(line) = lines.next("attach's answers") {
        answers.push(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}")));
    }
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || send.send(child.wait_with_output()));
    let mut output = receive
        .recv_timeout(DEADLINE)
        .expect("attach ends once its stdin closed and the daemon answered")
        .expect("wait for attach");
    output.stderr = std::fs::read(&stderr_path).expect("read attach's stderr");
    (answers, output)
}

#[test]
fn attach_relays_a_window_through_the_pipe_and_its_answers_name_files_forward_slashed() {
    let bin = windows_bin_or_fail!("parley.exe attach --stdio through the pipe");
    let daemon = WineDaemon::start(&bin);
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox, "fn a() {}\nfn b() {}\n");
    let workspace = windows_path(&repo);
    let made = daemon
        .command("parley.exe")
        .args(["feedback", "add", r"src\lib.rs:2", "Why b?", "--workspace", &workspace])
        .current_dir(&repo)
        .stdin(Stdio::null())
        .output()
        .expect("wine runs parley.exe feedback add");
    assert!(made.status.success(), "{}", text(&made));
    // One file, named the Windows way from inside the repository.
    let listed = json_of(
        &daemon
            .command("parley.exe")
            .args(["feedback", "list", r"src\lib.rs", "--json"])
            .current_dir(&repo)
            .stdin(Stdio::null())
            .output()
            .expect("wine runs parley.exe feedback list"),
    );
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed:#}");
    assert_eq!(listed[0]["path"], json!("src/lib.rs"), "{listed:#}");

    let (answers, ended) = attach_and_list(&mut daemon.command("parley.exe"), &workspace, &sandbox);
    assert!(ended.status.success(), "{}", text(&ended));
    assert_eq!(answers.len(), 2, "{answers:#?}");
    assert_eq!(answers[0]["result"]["protocol"], json!(parley_protocol::PROTOCOL_VERSION), "{answers:#?}");
    let threads = answers[1]["result"]["threads"].as_array().expect("threads");
    assert_eq!(threads.len(), 1, "{answers:#?}");
    assert_eq!(threads[0]["path"], json!("src/lib.rs"), "{answers:#?}");
    assert_eq!(threads[0]["workspace"], json!(workspace), "no \\\\?\\ prefix: {answers:#?}");
    assert_eq!(threads[0]["file"], json!(format!(r"{workspace}\src\lib.rs")), "{answers:#?}");
}

/// Stops the daemon on a pipe when dropped, for a daemon a client started.
struct StopsOnDrop<'a> {
    bin: &'a Path,
    pipe: &'a str,
}

impl StopsOnDrop<'_> {
    fn parley(&self, args: &[&str]) -> Output {
        Command::new("wine")
            .arg(self.bin.join("parley.exe"))
            .args(args)
            .env("PARLEY_SOCKET", self.pipe)
            .env("PARLEY_NO_SPAWN", "1")
            .stdin(Stdio::null())
            .output()
            .expect("wine runs parley.exe")
    }
}

impl Drop for StopsOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.parley(&["stop"]);
    }
}

#[test]
fn attach_starts_the_daemon_when_none_runs() {
    let bin = windows_bin_or_fail!("parley.exe attach --stdio starting the daemon");
    let pipe = format!(r"\\.\pipe\parley-test-attach-{}", std::process::id());
    let data = format!(r"C:\users\parley-tests\attach-{}", std::process::id());
    let daemon = StopsOnDrop { bin: &bin, pipe: &pipe };
    assert_eq!(daemon.parley(&["status"]).status.code(), Some(3), "no daemon runs on {pipe} yet");
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox, "fn a() {}\n");

    let mut command = Command::new("wine");
    command
        .arg(bin.join("parley.exe"))
        .env("PARLEY_SOCKET", &pipe)
        .env("PARLEY_DATA_DIR", &data)
        .env_remove("PARLEY_NO_SPAWN");
    let (answers, ended) = attach_and_list(&mut command, &windows_path(&repo), &sandbox);
    assert!(ended.status.success(), "{}", text(&ended));
    assert_eq!(answers.len(), 2, "{answers:#?}");
    assert!(answers[0]["result"]["protocol"].is_number(), "{answers:#?}");
    assert_eq!(answers[1]["result"]["threads"], json!([]), "{answers:#?}");

    let status = json_of(&daemon.parley(&["status", "--json"]));
    assert_eq!(status["data_dir"], json!(data), "the daemon attach started runs on {pipe}: {status:#}");
    let stopped = daemon.parley(&["stop"]);
    assert!(stopped.status.success() && text(&stopped).contains("stopped"), "{}", text(&stopped));
    assert_eq!(daemon.parley(&["status"]).status.code(), Some(3), "it stopped");
}

#[test]
fn mcp_config_via_npx_goes_through_cmd_on_windows() {
    let bin = windows_bin_or_fail!("mcp-config's npx form on Windows");
    let out = Command::new("wine")
        .arg(bin.join("parley.exe"))
        .args(["mcp-config", "claude-code", "--via", "npx"])
        .env_remove("PARLEY_SOCKET")
        .stdin(Stdio::null())
        .output()
        .expect("wine runs parley.exe");
    let shown = String::from_utf8_lossy(&out.stdout);
    let entry = shown.contains(r#""command": "cmd""#) && shown.contains(r#""args": ["/c", "npx", "-y", "parley-mcp"]"#);
    assert!(out.status.success() && entry, "{}", text(&out));
}
