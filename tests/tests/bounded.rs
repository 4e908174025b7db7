//! Everything bounded: comments over 64 KiB are refused, listings stop at a
//! byte budget and say where to go on, a store over 16 MiB is exported and
//! imported, and special files (a FIFO, a device) neither hang a call nor
//! keep a stopped daemon alive.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use parley_tests::{DEADLINE, Editor, Sandbox};
use serde_json::{Value, json};

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

/// A file of `lines` numbered lines.
fn numbered(lines: usize) -> String {
    (1..=lines).map(|n| format!("line {n}\n")).collect()
}

/// Opens a thread on line `line` (0-based) of `file` from `editor`.
async fn create(editor: &mut Editor, file: &Path, line: u32, body: &str, author: &str) -> Value {
    let range = json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": 4}});
    let params = json!({"path": file, "range": range, "body": body, "author": author});
    editor.request("feedback/create", params).await.result.unwrap_or_else(|| panic!("feedback/create failed"))
}

#[tokio::test]
async fn comments_replies_and_notes_over_64_kib_are_refused_saying_the_limit() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.txt", &numbered(5))]);
    let _daemon = sandbox.start_daemon();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let agent = sandbox.agent(&repo).await;
    let huge = "x".repeat(MIB);
    let at_the_limit = "y".repeat(64 * KIB);

    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 4}});
    let refused =
        editor.request("feedback/create", json!({"path": repo.join("a.txt"), "range": range, "body": huge})).await;
    let message = refused.error.expect("a 1 MiB comment is refused").message;
    assert!(message.contains("the comment is 1024 KiB, over Parley's limit of 64 KiB"), "{message}");

    let made = create(&mut editor, &repo.join("a.txt"), 0, &at_the_limit, "ana").await;
    let id = made["thread"]["id"].as_str().expect("thread id").to_owned();
    let reply = editor.request("feedback/reply", json!({"thread_id": id, "body": huge})).await;
    let message = reply.error.expect("a 1 MiB reply is refused").message;
    assert!(message.contains("the reply is 1024 KiB, over Parley's limit of 64 KiB"), "{message}");

    let added = agent.call_err("add_feedback", json!({"filePath": "a.txt", "startLine": 2, "body": huge})).await;
    assert!(added.contains("over Parley's limit of 64 KiB"), "{added}");
    let replied = agent.call_err("reply_feedback", json!({"threadId": id, "body": huge})).await;
    assert!(replied.contains("the reply is 1024 KiB, over Parley's limit of 64 KiB"), "{replied}");
    let resolved = agent.call_err("resolve_feedback", json!({"threadId": id, "note": huge})).await;
    assert!(resolved.contains("the note is 1024 KiB, over Parley's limit of 64 KiB"), "{resolved}");

    // Nothing refused was kept; the comment at the limit is whole.
    let listed = editor.call("feedback/list", json!({"include_resolved": true})).await;
    assert_eq!(listed["total"], json!(1));
    assert_eq!(listed["threads"][0]["comments"].as_array().map(Vec::len), Some(1));
    assert_eq!(listed["threads"][0]["comments"][0]["body"], json!(at_the_limit));
    assert_eq!(listed["threads"][0]["resolved"], json!(false));
}

#[tokio::test]
async fn pages_of_long_threads_stop_at_a_byte_budget_and_say_where_to_go_on() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.txt", &numbered(100))]);
    let _daemon = sandbox.start_daemon();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    // 100 threads with comments at the limit: 6.4 MiB, more than one page holds.
    for line in 0..100 {
        create(&mut editor, &repo.join("a.txt"), line, &format!("{line:03}").repeat(64 * KIB / 3), "agent").await;
    }

    let first = editor.call("feedback/list", json!({"limit": 100})).await;
    let shown = first["threads"].as_array().expect("threads").len();
    assert!((1..100).contains(&shown), "a page of 6.4 MiB of threads is cut short: {shown} threads");
    assert!(serde_json::to_vec(&first).expect("json").len() <= 5 * MIB, "the page keeps to its budget");
    assert_eq!(first["total"], json!(100));
    assert_eq!(first["next_offset"], json!(shown));
    // Following next_offset reads every thread once.
    let mut ids: Vec<String> = Vec::new();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let page = editor.call("feedback/list", json!({"offset": at})).await;
        ids.extend(
            page["threads"].as_array().expect("threads").iter().map(|t| t["id"].as_str().expect("id").to_owned()),
        );
        offset = page["next_offset"].as_u64();
    }
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!((count, ids.len()), (100, 100));

    // The command line pages through them all.
    let folder = repo.display().to_string();
    let (code, out, err) = sandbox.cli(&["feedback", "list", "--workspace", &folder]);
    assert_eq!(code, 0, "{err}");
    assert!(out.trim_end().ends_with("100 thread(s), 0 orphaned."), "{}", &out[out.len().saturating_sub(200)..]);

    // An agent's page is cut too, and says where the next begins.
    let agent = sandbox.agent(&repo).await;
    let page = agent.call_ok("get_feedback", json!({})).await;
    let given = page["threads"].as_array().expect("threads").len();
    assert!((1..100).contains(&given), "{given} threads");
    assert_eq!(page["nextOffset"], json!(given));

    // The inbox (these threads wait on the person) keeps to a page too, and
    // the command line reads every page.
    let inbox = editor.call("inbox", json!({})).await;
    let waiting = inbox["threads"].as_array().expect("threads").len();
    assert!((1..100).contains(&waiting), "{waiting} threads");
    assert_eq!(inbox["next_offset"], json!(waiting));
    let (code, out, err) = sandbox.cli(&["inbox"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Threads waiting for your answer (100):"), "{}", &out[..out.len().min(300)]);
}

/// Runs `parley` in the sandbox with `stdin` and answers (code, stdout, stderr).
fn cli_in(sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = sandbox.command("parley").args(args).current_dir(cwd).stdin(Stdio::null()).output().expect("run parley");
    (out.status.code().unwrap_or(-1), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn a_store_over_16_mib_with_huge_old_comments_lists_exports_and_imports() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.txt", &numbered(5))]);
    let _daemon = sandbox.start_daemon();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    for line in 0..3 {
        create(&mut editor, &repo.join("a.txt"), line, "short for now", "agent").await;
    }
    // A store written before the limit: the same threads with 15 MiB
    // comments, put back through an export file of 45 MiB.
    let work = sandbox.dir.path();
    let (code, _, err) = cli_in(&sandbox, work, &["export", "small.json"]);
    assert_eq!(code, 0, "{err}");
    let mut export: Value =
        serde_json::from_slice(&std::fs::read(work.join("small.json")).expect("export")).expect("json");
    for thread in export["threads"].as_array_mut().expect("threads") {
        thread["comments"][0]["body"] = json!("z".repeat(15 * MIB));
    }
    std::fs::write(work.join("old.json"), serde_json::to_vec(&export).expect("json")).expect("write");
    let (code, out, err) = cli_in(&sandbox, work, &["import", "old.json"]);
    assert_eq!(code, 0, "a 45 MiB import: {err}");
    assert!(String::from_utf8_lossy(&out).contains("Imported 0 review(s), 3 thread(s) and 0 walkthrough(s)"), "{err}");

    // Every listing still answers, each comment cut to the limit with a marker.
    let listed = editor.call("feedback/list", json!({"limit": 10})).await;
    assert_eq!(listed["total"], json!(3));
    let body = listed["threads"][0]["comments"][0]["body"].as_str().expect("body");
    assert!(
        body.len() <= 64 * KIB && body.ends_with("the whole text is 15360 KiB, over its limit of 64 KiB]"),
        "{}",
        &body[body.len() - 100..]
    );
    let (code, out, err) = cli_in(&sandbox, &repo, &["inbox"]);
    assert_eq!(code, 0, "parley inbox: {err}");
    assert!(String::from_utf8_lossy(&out).contains("Threads waiting for your answer (3):"));
    let agent = sandbox.agent(&repo).await;
    let page = agent.call_ok("get_feedback", json!({})).await;
    assert_eq!(page["total"], json!(3));

    // Exported whole to a file and to stdout, both over 16 MiB.
    let (code, _, err) = cli_in(&sandbox, work, &["export", "big.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Exported 0 review(s), 3 thread(s), 0 session(s) and 0 walkthrough(s)"), "{err}");
    let size = std::fs::metadata(work.join("big.json")).expect("exported").len() as usize;
    assert!(size > 45 * MIB, "{size} bytes");
    let (code, stdout, err) = cli_in(&sandbox, work, &["export"]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.len() > 45 * MIB, "{} bytes on stdout", stdout.len());
    let printed: Value = serde_json::from_slice(&stdout).expect("stdout is the export");
    assert_eq!(printed["threads"].as_array().map(Vec::len), Some(3));

    // And restored into another daemon, whole.
    let other = Sandbox::new();
    let _other_daemon = other.start_daemon();
    let big = work.join("big.json").display().to_string();
    let (code, out, err) = cli_in(&other, work, &["import", &big]);
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8_lossy(&out).contains("3 thread(s)"));
    let (code, stdout, err) = cli_in(&other, work, &["export"]);
    assert_eq!(code, 0, "{err}");
    let again: Value = serde_json::from_slice(&stdout).expect("json");
    let bodies: Vec<usize> = again["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| t["comments"][0]["body"].as_str().map_or(0, str::len))
        .collect();
    assert_eq!(bodies, [15 * MIB; 3]);
}

/// Makes a FIFO at `path`.
fn fifo(path: &Path) -> PathBuf {
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("run mkfifo");
    assert!(status.success());
    path.to_owned()
}

#[tokio::test]
async fn import_and_export_name_what_is_wrong_with_the_file() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let work = sandbox.dir.path();
    std::fs::write(work.join("not.json"), "{\"format\": \"something else\"").expect("write");
    let (code, _, err) = cli_in(&sandbox, work, &["import", "not.json"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot import not.json") && err.contains("is not a Parley export"), "{err}");
    let (code, _, err) = cli_in(&sandbox, work, &["import", "missing.json"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot import missing.json"), "{err}");
    assert!(!err.contains("crashed") && !err.contains("closed the connection"), "{err}");
    // A FIFO named as the file is read by the command, not by the daemon.
    let pipe = fifo(&work.join("pipe.json"));
    let (code, _, err) = cli_in(&sandbox, work, &["export", "--", "folder-that-is-missing/x.json"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot export"), "{err}");
    let writer = std::thread::spawn(move || {
        std::fs::write(
            pipe,
            "{\"format\":\"parley-export\",\"version\":1,\"exported_at\":\"2026-01-01T00:00:00Z\",\"reviews\":[],\"threads\":[]}",
        )
    });
    let (code, out, err) = cli_in(&sandbox, work, &["import", "pipe.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8_lossy(&out).contains("Imported 0 review(s), 0 thread(s) and 0 walkthrough(s)"));
    writer.join().expect("writer").expect("write the FIFO");
}

#[tokio::test]
async fn a_selection_in_a_fifo_or_a_device_answers_at_once() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let mut editor = sandbox.editor("nvim", &[&repo]).await;
    // `nvim <(cmd)` shows /dev/fd/63; a named pipe opened in an editor.
    for path in [fifo(&repo.join("pipe")), PathBuf::from("/dev/zero"), PathBuf::from("/dev/fd/63")] {
        editor.selection = json!({
            "path": path, "text": "x", "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}
        });
        let started = Instant::now();
        let got = tokio::time::timeout(DEADLINE, editor.serve_while(agent.call_ok("get_selection", json!({}))))
            .await
            .unwrap_or_else(|_| panic!("get_selection on {} never answered", path.display()));
        assert_eq!(got["selectedText"], json!("x"), "{}", path.display());
        assert_eq!((got["startColumn"].clone(), got["endColumn"].clone()), (json!(1), json!(2)));
        assert!(started.elapsed() < Duration::from_secs(5), "{} took {:?}", path.display(), started.elapsed());
    }
}

#[tokio::test]
async fn a_daemon_stopped_while_a_read_is_stuck_exits() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.txt", "one\n")]);
    // A `git` that never answers (a hung network file system, an fsmonitor
    // hook that waits): the round's first git call blocks a worker for good.
    let bin = sandbox.dir.path().join("stuck-bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let started = sandbox.dir.path().join("git-started");
    std::fs::write(bin.join("git"), format!("#!/bin/sh\ntouch {:?}\nexec sleep 60\n", started.display().to_string()))
        .expect("write git");
    std::fs::set_permissions(bin.join("git"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut daemon = sandbox.start_daemon_with(|c| {
        c.env("PATH", &path);
    });
    let agent = sandbox.agent(&repo).await;
    let asked = tokio::spawn(async move {
        let _ = agent.call("request_review", json!({"summary": "t", "wait_seconds": 1})).await;
        agent
    });
    let deadline = Instant::now() + DEADLINE;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the daemon never ran git");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (code, out, err) = sandbox.cli(&["stop"]);
    assert_eq!(code, 0, "{out}{err}");
    let deadline = Instant::now() + DEADLINE;
    while daemon.child.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < deadline, "the daemon did not exit after `parley stop` with a read stuck");
        std::thread::sleep(Duration::from_millis(20));
    }
    asked.abort();
}
