//! Feedback threads through the real daemon, shim and CLI: humans comment,
//! agents read, answer and resolve, and threads follow the text as files
//! change on disk.

use std::path::{Path, PathBuf};

use parley_tests::{Sandbox, text_of};
use serde_json::{Value, json};

const AUTH: &str = r#"import { sign } from './jwt';

export function validateToken(token: string) {
  if (!token) {
    throw new Error('missing');
  }
  return sign(token);
}

export function logout() {
  return null;
}
"#;

fn add(sandbox: &Sandbox, repo: &Path, location: &str, message: &str) -> String {
    let mut command = sandbox.command("parley");
    command.current_dir(repo).args(["feedback", "add", location, message, "--author", "dana", "--json"]);
    let out = command.output().expect("run parley feedback add");
    assert!(out.status.success(), "feedback add failed: {}", String::from_utf8_lossy(&out.stderr));
    let thread: Value = serde_json::from_slice(&out.stdout).expect("JSON thread");
    thread["id"].as_str().expect("id").to_owned()
}

fn cli_in(sandbox: &Sandbox, repo: &Path, args: &[&str]) -> (i32, String, String) {
    let out = sandbox.command("parley").current_dir(repo).args(args).output().expect("run parley");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn threads(result: &Value) -> Vec<Value> {
    result["threads"].as_array().expect("threads").clone()
}

/// A workspace with threads in more files than a summary lists: the agent
/// sees the files with the most threads, how many more there are, and how to
/// read them, in an answer that does not grow with the workspace.
#[tokio::test]
async fn a_summary_of_many_files_lists_those_with_the_most_threads_and_counts_the_rest() {
    let sandbox = Sandbox::new();
    let names: Vec<String> = (0..53).map(|k| format!("src/f{k:02}.rs")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "one\ntwo\n")).collect();
    let repo = sandbox.repo("many", &files);
    let _daemon = sandbox.start_daemon();
    for name in &names {
        add(&sandbox, &repo, &format!("{name}:1"), "Why one?");
    }
    // The last file by name has the most threads, so it comes first.
    add(&sandbox, &repo, "src/f52.rs:2", "Why two?");
    let agent = sandbox.agent(&repo).await;

    let summary = agent.call_ok("get_feedback_summary", json!({})).await;
    assert_eq!(summary["totalThreads"], json!(54), "{summary}");
    assert_eq!(summary["totalComments"], json!(54));
    assert_eq!(summary["fileCount"], json!(53), "every file with threads is counted");
    let listed = summary["files"].as_array().expect("files");
    assert_eq!(listed.len(), 50, "the 50 files with the most threads are listed");
    assert_eq!(listed[0], json!({"path": "src/f52.rs", "threadCount": 2}));
    assert_eq!(listed[1], json!({"path": "src/f00.rs", "threadCount": 1}), "then by path");
    assert_eq!(listed[49], json!({"path": "src/f48.rs", "threadCount": 1}));
    assert_eq!(summary["unlistedFileCount"], json!(3));
    assert_eq!(summary["unlistedThreadCount"], json!(3));
    let how = summary["unlisted"].as_str().expect("a sentence on the unlisted files");
    assert!(how.contains("3 more files") && how.contains("get_feedback"), "{how}");

    // An unlisted file's threads are one call away.
    let rest = agent.call_ok("get_feedback", json!({"filePath": "src/f51.rs"})).await;
    assert_eq!(threads(&rest).len(), 1, "{rest}");
}

#[tokio::test]
async fn a_comment_from_the_cli_reaches_the_agent_and_follows_edits_on_disk() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH), ("src/other.ts", "x\n")]);
    let _daemon = sandbox.start_daemon();
    let id = add(&sandbox, &repo, "src/auth.ts:3-8", "Handle expired tokens");
    add(&sandbox, &repo, "src/other.ts:1", "Why x?");
    let agent = sandbox.agent(&repo).await;

    let summary = agent.call_ok("get_feedback_summary", json!({})).await;
    assert_eq!(
        summary,
        json!({"totalThreads": 2, "totalComments": 2, "fileCount": 2, "orphanedCount": 0,
               "files": [{"path": "src/auth.ts", "threadCount": 1}, {"path": "src/other.ts", "threadCount": 1}]})
    );

    let result = agent.call("get_feedback", json!({"filePath": "src/auth.ts"})).await;
    let listed = result.structured_content.clone().expect("structured content");
    let thread = &listed["threads"][0];
    assert_eq!(thread["id"], json!(id));
    assert_eq!(thread["file"], json!("src/auth.ts"));
    // Whole lines: no characters, and what would say nothing is left out.
    assert_eq!(thread["range"], json!({"startLine": 3, "endLine": 8}));
    assert!(thread["selectedText"].as_str().is_some_and(|t| t.starts_with("export function validateToken")));
    assert_eq!((thread.get("orphaned"), thread.get("confidence")), (None, None), "{thread}");
    assert_eq!(thread["state"], json!("anchored"));
    assert_eq!(thread["comments"][0]["body"], json!("Handle expired tokens"));
    assert_eq!(thread["comments"][0]["author"], json!("dana"));
    // The text copy, for hosts that show an agent only the text, says the
    // same in a few lines.
    let text = text_of(&result);
    assert!(text.starts_with("Threads 1-1 of 1: place, thread id (standing); reply_feedback answers one."), "{text}");
    assert!(text.contains(&format!("\nsrc/auth.ts:3-8 {id} (")), "{text}");
    assert!(text.contains("\n  at: export function validateToken(token: string) {…\n"), "{text}");
    assert!(text.contains("\n  dana: Handle expired tokens"), "{text}");

    // An agent edits the file on disk: two lines above the function.
    std::fs::write(repo.join("src/auth.ts"), format!("// header\n// more\n{AUTH}")).expect("edit");
    let after = agent.call_ok("get_feedback", json!({"filePath": "src/auth.ts"})).await;
    assert_eq!(threads(&after)[0]["range"]["startLine"], json!(5), "{after}");
    assert_eq!(threads(&after)[0]["state"], json!("anchored"));

    // The function is deleted: the thread is orphaned, not lost.
    let without = AUTH.replace(
        &AUTH[AUTH.find("export function validateToken").expect("present")
            ..AUTH.find("\nexport function logout").expect("present")],
        "",
    );
    std::fs::write(repo.join("src/auth.ts"), &without).expect("delete");
    let orphaned = agent.call_ok("get_feedback", json!({"filePath": "src/auth.ts"})).await;
    assert_eq!(threads(&orphaned)[0]["orphaned"], json!(true), "{orphaned}");
    assert_eq!(threads(&orphaned)[0]["state"], json!("orphaned"));
    assert!(threads(&orphaned)[0]["originalQuote"].as_str().is_some_and(|q| q.contains("validateToken")));
    assert_eq!(agent.call_ok("get_feedback_summary", json!({})).await["orphanedCount"], json!(1));

    // The text comes back (a revert): so does the thread.
    std::fs::write(repo.join("src/auth.ts"), AUTH).expect("revert");
    let back = agent.call_ok("get_feedback", json!({"filePath": "src/auth.ts"})).await;
    assert_eq!(threads(&back)[0]["state"], json!("anchored"), "{back}");
    assert_eq!(threads(&back)[0]["range"]["startLine"], json!(3));
}

/// A thread on a whole line follows the line: when the line is fixed by
/// growing, the agent and the person see the fixed text as modified, not
/// the old one as anchored.
#[tokio::test]
async fn a_whole_line_thread_shows_its_line_as_it_is_now() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ttl", &[("a.py", "def expired(t, ttl):\n    return now() - t > ttl\n")]);
    let _daemon = sandbox.start_daemon();
    let id = add(&sandbox, &repo, "a.py:2", "ttl is undefined after the rename");
    std::fs::write(repo.join("a.py"), "def expired(t, ttl):\n    return now() - t > ttl_seconds\n").expect("fix");

    let agent = sandbox.agent(&repo).await;
    let listed = agent.call_ok("get_feedback", json!({"filePath": "a.py"})).await;
    let thread = &threads(&listed)[0];
    assert_eq!(thread["id"], json!(id));
    assert_eq!(thread["state"], json!("modified"), "{thread:#}");
    assert_eq!(thread["selectedText"], json!("    return now() - t > ttl_seconds"));
    assert_eq!(thread["originalQuote"], json!("    return now() - t > ttl"));
    let confidence = thread["confidence"].as_f64().expect("confidence");
    assert!(confidence > 0.5 && confidence < 1.0, "{thread:#}");
    assert_eq!(thread["range"], json!({"startLine": 2, "endLine": 2}));

    let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[modified") && out.contains("> ttl_seconds"), "the person sees the line as it is:\n{out}");
}

#[tokio::test]
async fn resolving_from_one_agent_removes_the_thread_everywhere() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let id = add(&sandbox, &repo, "src/auth.ts:10-12", "Logout should clear the session");
    let created = window.next_notification().await;
    assert_eq!((created.method.as_str(), created.params["change"].clone()), ("feedback/changed", json!("created")));
    assert_eq!(created.params["thread"]["id"], json!(id));

    let first = sandbox.agent(&repo).await;
    let second = sandbox.agent(&repo).await;
    let reply =
        first.call_ok("reply_feedback", json!({"threadId": id, "body": "Done: it clears the session now."})).await;
    assert_eq!(reply["replied"], json!(true));
    let replied = window.next_notification().await;
    assert_eq!(replied.params["change"], json!("replied"));
    assert_eq!(replied.params["thread"]["comments"][1]["body"], json!("Done: it clears the session now."));

    assert_eq!(
        first.call_ok("resolve_feedback", json!({"threadId": id})).await,
        json!({"resolved": true, "threadId": id})
    );
    let resolved = window.next_notification().await;
    assert_eq!(
        (resolved.params["change"].clone(), resolved.params["thread"]["resolved"].clone()),
        (json!("resolved"), json!(true))
    );
    assert_eq!(threads(&second.call_ok("get_feedback", json!({})).await), Vec::<Value>::new());
    assert_eq!(second.call_ok("get_feedback_summary", json!({})).await["totalThreads"], json!(0));
    // Resolving again is no error (the tool is idempotent), and says so; by a
    // beginning of the id, as a person would type it, too.
    let again = second.call_ok("resolve_feedback", json!({"threadId": id})).await;
    assert_eq!(again, json!({"resolved": true, "threadId": id, "alreadyResolved": true}));
    let again = second.call_ok("resolve_feedback", json!({"threadId": &id[..8]})).await;
    assert_eq!(again["threadId"], json!(id), "{again}");
    let unknown =
        second.call_err("resolve_feedback", json!({"threadId": "7f1d1d6c-6f86-4a43-9d5e-0c3c1d9f0a11"})).await;
    assert_eq!(
        serde_json::from_str::<Value>(&unknown).expect("JSON"),
        json!({"resolved": false, "error": "Thread not found"})
    );

    // A human can bring it back from the CLI; agents see it again.
    let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "reopen", &id]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(threads(&second.call_ok("get_feedback", json!({})).await).len(), 1);
}

#[tokio::test]
async fn workspace_reads_see_edits_to_a_file_whose_thread_was_reopened_after_a_restart() {
    // Workspace reads look only at files the watcher reports changed; a file
    // whose threads were all resolved when the daemon started is not watched
    // until one is reopened.
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH)]);
    let mut daemon = sandbox.start_daemon();
    let id = add(&sandbox, &repo, "src/auth.ts:3-8", "Handle expired tokens");
    let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "resolve", &id]);
    assert_eq!(code, 0, "{out}{err}");
    daemon.terminate();
    let _daemon = sandbox.start_daemon();
    let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "reopen", &id]);
    assert_eq!(code, 0, "{out}{err}");
    let agent = sandbox.agent(&repo).await;
    let line = |listed: &Value| threads(listed)[0]["range"]["startLine"].clone();
    assert_eq!(line(&agent.call_ok("get_feedback", json!({})).await), json!(3));

    std::fs::write(repo.join("src/auth.ts"), format!("// header\n// more\n{AUTH}")).expect("edit");
    // The watcher reports the edit within milliseconds; a read of the whole
    // workspace must then show it. Wait for it with a deadline that fails.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let listed = agent.call_ok("get_feedback", json!({})).await;
        if line(&listed) == json!(5) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the workspace read never saw the edit: {listed}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn threads_are_scoped_to_the_agents_workspace() {
    let sandbox = Sandbox::new();
    let alpha = sandbox.repo("alpha", &[("a.rs", "fn a() {}\n")]);
    let beta = sandbox.repo("beta", &[("b.rs", "fn b() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let in_alpha = add(&sandbox, &alpha, "a.rs:1", "alpha comment");
    add(&sandbox, &beta, "b.rs:1", "beta comment");
    let agent = sandbox.agent(&beta).await;
    let listed = agent.call_ok("get_feedback", json!({})).await;
    assert_eq!(threads(&listed).len(), 1);
    assert_eq!(threads(&listed)[0]["file"], json!("b.rs"));
    let foreign = agent.call_err("resolve_feedback", json!({"threadId": in_alpha})).await;
    assert!(foreign.contains("Thread not found"), "{foreign}");

    let cases = [
        ("resolve_feedback", json!({"threadId": "a1b"}), "is too short; thread ids look like"),
        ("resolve_feedback", json!({"threadId": &in_alpha[..8]}), "no thread matches"),
        ("reply_feedback", json!({"threadId": "not-a-uuid", "body": "x"}), "is not a thread id"),
        ("reply_feedback", json!({"threadId": in_alpha, "body": "  "}), "body is required"),
        ("get_feedback", json!({"filePath": "../alpha/a.rs"}), "outside your workspace"),
        ("get_feedback", json!({"filePath": alpha.join("a.rs")}), "outside your workspace"),
        ("get_feedback", json!({"file": "b.rs"}), "unknown field `file`"),
        ("resolve_feedback", json!({}), "missing field `threadId`"),
    ];
    for (tool, args, want) in cases {
        let text = agent.call_err(tool, args.clone()).await;
        assert!(text.contains(want), "{tool} {args}: {text}");
    }
    // Still there for alpha's agent.
    let alpha_agent = sandbox.agent(&alpha).await;
    assert_eq!(alpha_agent.call_ok("get_feedback_summary", json!({})).await["totalThreads"], json!(1));
}

#[tokio::test]
async fn an_agents_edit_moves_threads_live_in_a_subscribed_editor() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("nvim", &[&repo]).await;
    add(&sandbox, &repo, "src/auth.ts:10-12", "Logout should clear the session");
    window.next_notification().await;
    // Save by writing a new file and renaming it over the old one, as editors do.
    let staged = repo.join("src/.auth.ts.tmp");
    std::fs::write(&staged, format!("// a\n// b\n// c\n{AUTH}")).expect("write");
    std::fs::rename(&staged, repo.join("src/auth.ts")).expect("rename");
    let moved = window.next_notification().await;
    assert_eq!(moved.params["change"], json!("moved"), "{moved:?}");
    assert_eq!(moved.params["thread"]["range"]["start"]["line"], json!(12), "0-based line 9 + 3");
}

#[tokio::test]
async fn editors_create_threads_on_selections_and_see_them_in_unsaved_buffers() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/i18n.rs", "let s = \"é𝄞\"; // greeting\nfn main() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    // VS Code counts UTF-16: "greeting" starts at unit 18 (character 17, byte 21).
    let created = window
        .call(
            "feedback/create",
            json!({"path": repo.join("src/i18n.rs"), "range": {"start": {"line": 0, "character": 18}, "end": {"line": 0, "character": 26}},
                   "text": "greeting", "body": "Translate this"}),
        )
        .await;
    let id = created["thread"]["id"].as_str().expect("id").to_owned();
    assert_eq!(created["thread"]["quote"], json!("greeting"));
    assert_eq!(created["thread"]["comments"][0]["author"], json!(login_name()), "a window speaks for its person");
    let agent = sandbox.agent(&repo).await;
    let listed = agent.call_ok("get_feedback", json!({})).await;
    assert_eq!(
        threads(&listed)[0]["range"],
        json!({"startLine": 1, "endLine": 1, "startCharacter": 17, "endCharacter": 25})
    );

    // Unsaved text with a line inserted above: positioned in the buffer, nothing stored.
    let buffer = "// new\nlet s = \"é𝄞\"; // greeting\nfn main() {}\n";
    let positioned = window.call("buffer/changed", json!({"path": repo.join("src/i18n.rs"), "text": buffer})).await;
    assert_eq!(positioned["threads"][0]["id"], json!(id));
    assert_eq!(positioned["threads"][0]["range"]["start"], json!({"line": 1, "character": 18}));
    let on_disk = agent.call_ok("get_feedback", json!({})).await;
    assert_eq!(threads(&on_disk)[0]["range"]["startLine"], json!(1), "the file on disk still rules");

    // A comment made in that unsaved buffer: its text is found on disk, a line up.
    let from_buffer = window
        .call(
            "feedback/create",
            json!({"path": repo.join("src/i18n.rs"), "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 12}},
                   "text": "fn main() {}", "body": "Say hello"}),
        )
        .await;
    assert_eq!(from_buffer["thread"]["range"]["start"], json!({"line": 1, "character": 0}), "{from_buffer}");
    let on_disk = agent.call_ok("get_feedback", json!({"filePath": "src/i18n.rs"})).await;
    assert_eq!(threads(&on_disk)[1]["range"]["startLine"], json!(2), "{on_disk}");
    // Text that exists only in the buffer cannot be anchored on disk.
    let unsaved = window
        .request(
            "feedback/create",
            json!({"path": repo.join("src/i18n.rs"), "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 6}},
                   "text": "// new", "body": "x"}),
        )
        .await;
    let message = unsaved.error.expect("refused").message;
    assert!(message.contains("not in") && message.contains("save the file"), "{message}");
    assert_eq!(threads(&agent.call_ok("get_feedback", json!({})).await).len(), 2, "nothing was stored");
}

/// The login name the system gives this user, as `id -un` prints it.
fn login_name() -> String {
    let out = std::process::Command::new("id").arg("-un").output().expect("run id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test]
async fn with_user_unset_you_are_your_login_name_everywhere_and_your_own_comments_wait_on_no_one() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/a.rs", "fn one() {}\nfn two() {}\nfn three() {}\n")]);
    let me = login_name();
    let _daemon = sandbox.start_daemon_with(|command| {
        command.env_remove("USER").env_remove("LOGNAME");
    });
    let unset = |args: &[&str]| {
        let out = sandbox
            .command("parley")
            .current_dir(&repo)
            .env_remove("USER")
            .env_remove("LOGNAME")
            .args(args)
            .output()
            .expect("run parley");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).expect("JSON")
    };

    // From the command line and from a window that names no author: one
    // name, the system's.
    let from_cli = unset(&["feedback", "add", "src/a.rs:1", "Rename one", "--json"]);
    assert_eq!(from_cli["comments"][0]["author"], json!(me), "{from_cli:#}");
    let mut window = sandbox.editor("nvim", &[&repo]).await;
    let from_window = window
        .call(
            "feedback/create",
            json!({"path": repo.join("src/a.rs"), "range": {"start": {"line": 1, "character": 3}, "end": {"line": 1, "character": 6}},
                   "text": "two", "body": "Does two need a test?"}),
        )
        .await;
    assert_eq!(from_window["thread"]["comments"][0]["author"], json!(me), "{from_window:#}");

    // Your own comments wait on the agent, not on you; an agent's answer
    // puts the thread in your inbox.
    let inbox = unset(&["inbox", "--json"]);
    assert_eq!(inbox["threads"], json!([]), "your own comments are not waiting for your answer: {inbox:#}");
    let agent = sandbox.agent(&repo).await;
    let id = from_window["thread"]["id"].as_str().expect("id");
    agent.call_ok("reply_feedback", json!({"threadId": id, "body": "Added one."})).await;
    let inbox = unset(&["inbox", "--json"]);
    let waiting: Vec<&str> =
        inbox["threads"].as_array().expect("threads").iter().filter_map(|t| t["id"].as_str()).collect();
    assert_eq!(waiting, [id], "{inbox:#}");
}

#[tokio::test]
async fn binary_files_get_a_clear_state() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("data.txt", "hello\nworld\n")]);
    let _daemon = sandbox.start_daemon();
    add(&sandbox, &repo, "data.txt:2", "check this");
    std::fs::write(repo.join("data.txt"), [0xff, 0xfe, 0x00, 0x01, b'\n']).expect("binary");
    let agent = sandbox.agent(&repo).await;
    let listed = agent.call_ok("get_feedback", json!({})).await;
    assert_eq!(
        (threads(&listed)[0]["state"].clone(), threads(&listed)[0]["orphaned"].clone()),
        (json!("unreadable"), json!(true))
    );
    let (code, _, err) = cli_in(&sandbox, &repo, &["feedback", "add", "data.txt:1", "x"]);
    assert_eq!(code, 1);
    assert!(err.contains("not UTF-8 text"), "{err}");
}

#[tokio::test]
async fn the_cli_lists_replies_and_resolves() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let id = add(&sandbox, &repo, "src/auth.ts:3", "Rename this");
    let (code, out, _) = cli_in(&sandbox, &repo, &["feedback", "reply", &id, "Or keep it?"]);
    assert_eq!(code, 0, "{out}");
    let (_, out, _) = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert!(out.contains("src/auth.ts:3-3") && out.contains("[anchored]") && out.contains("Or keep it?"), "{out}");
    let (_, out, _) = cli_in(&sandbox, &repo, &["feedback", "list", "src/auth.ts", "--json"]);
    assert_eq!(serde_json::from_str::<Value>(&out).expect("JSON")[0]["comments"].as_array().map(Vec::len), Some(2));
    let (code, _, _) = cli_in(&sandbox, &repo, &["feedback", "resolve", &id]);
    assert_eq!(code, 0);
    let (_, out, _) = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert!(out.contains("No feedback"), "{out}");
    let cases: [(&[&str], &str); 3] = [
        (&["feedback", "resolve", "zzz"], "\"zzz\" is not a thread id"),
        (&["feedback", "add", "src/auth.ts", "x"], "FILE:LINE"),
        (&["feedback", "add", "src/auth.ts:99", "x"], "outside"),
    ];
    for (args, want) in cases {
        let (code, out, err) = cli_in(&sandbox, &repo, args);
        assert_eq!(code, 1, "{args:?}: {out}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[tokio::test]
async fn export_import_and_recovery_from_a_corrupt_store() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH)]);
    let mut daemon = sandbox.start_daemon();
    let id = add(&sandbox, &repo, "src/auth.ts:3", "Keep me");
    let backup = sandbox.dir.path().join("backup.json");
    let (code, _, err) = cli_in(&sandbox, &repo, &["export", backup.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&backup).expect("read")).expect("JSON");
    assert_eq!(export["format"], json!("parley-export"));

    // A clean stop writes an automatic backup; then the store is damaged.
    assert_eq!(daemon.terminate(), Some(0));
    let db = sandbox.data.join("store/db");
    let mut bytes = std::fs::read(&db).expect("read db");
    for b in bytes.iter_mut().skip(64) {
        *b ^= 0x5A;
    }
    std::fs::write(&db, bytes).expect("damage db");
    let _daemon = sandbox.start_daemon();
    let status = sandbox.status();
    let notice = status["store_notice"].as_str().expect("a loud notice");
    assert!(notice.contains("Feedback store corrupted, attempting recovery from backup"), "{notice}");
    let (_, out, _) = cli_in(&sandbox, &repo, &["feedback", "list", "--json"]);
    assert_eq!(serde_json::from_str::<Value>(&out).expect("JSON")[0]["id"], json!(id), "restored from the backup");

    // Import into a fresh daemon elsewhere.
    let other = Sandbox::new();
    let _other_daemon = other.start_daemon();
    let (code, out, err) = cli_in(&other, &repo, &["import", backup.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 thread(s)"), "{out}");
    let (_, out, _) = cli_in(&other, &repo, &["feedback", "list", "--json"]);
    assert_eq!(serde_json::from_str::<Value>(&out).expect("JSON")[0]["id"], json!(id));
}

/// An import into a daemon that holds some of its threads puts the exported
/// threads in place of the held ones, keeps the others, and checks the
/// imported ones against their files as they are now.
#[tokio::test]
async fn an_import_replaces_the_threads_it_brings_and_keeps_the_rest() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let exported = add(&sandbox, &repo, "src/auth.ts:3", "Exported while open");
    let backup = sandbox.dir.path().join("export.json");
    let (code, _, err) = cli_in(&sandbox, &repo, &["export", backup.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let later = add(&sandbox, &repo, "src/auth.ts:10", "Made after the export");
    let (code, _, err) = cli_in(&sandbox, &repo, &["feedback", "resolve", &exported]);
    assert_eq!(code, 0, "{err}");
    // Two lines above both threads; a read follows them and knows the file.
    std::fs::write(repo.join("src/auth.ts"), format!("// header\n// more\n{AUTH}")).expect("edit");
    let agent = sandbox.agent(&repo).await;
    let listed = agent.call_ok("get_feedback", json!({"filePath": "src/auth.ts"})).await;
    assert_eq!(threads(&listed).len(), 1, "the exported thread is resolved: {listed}");

    let (code, out, err) = cli_in(&sandbox, &repo, &["import", backup.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 thread(s)"), "{out}");
    let listed = agent.call_ok("get_feedback", json!({"filePath": "src/auth.ts"})).await;
    let by_id = |id: &str| threads(&listed).into_iter().find(|t| t["id"] == json!(id));
    let back = by_id(&exported).unwrap_or_else(|| panic!("open again, as exported: {listed}"));
    assert_eq!(back["range"]["startLine"], json!(5), "checked against the file as it is now: {back}");
    assert_eq!(by_id(&later).unwrap_or_else(|| panic!("kept: {listed}"))["range"]["startLine"], json!(12));
    let summary = agent.call_ok("get_feedback_summary", json!({})).await;
    assert_eq!((summary["totalThreads"].clone(), summary["fileCount"].clone()), (json!(2), json!(1)), "{summary}");
}

#[tokio::test]
async fn threads_and_the_review_are_mcp_resources() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    assert_eq!(
        agent.call_ok("get_feedback_summary", json!({})).await["totalThreads"],
        json!(0),
        "all zeros when empty"
    );
    add(&sandbox, &repo, "src/auth.ts:3", "Look");
    agent.call_ok("present_review", json!({"content": "# The review"})).await;
    let listed = agent.service.list_all_resources().await.expect("resources/list");
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["parley://review", "parley://feedback", "parley://review/history"]);
    let read = |uri: &'static str| {
        let service = &agent.service;
        async move {
            let result = service.read_resource(rmcp::model::ReadResourceRequestParams::new(uri)).await.expect("read");
            match &result.contents[0] {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
                other => panic!("{other:?}"),
            }
        }
    };
    assert_eq!(read("parley://review").await, "# The review");
    let feedback: Value = serde_json::from_str(&read("parley://feedback").await).expect("JSON");
    assert_eq!(feedback[0]["comments"][0]["body"], json!("Look"));
}

/// `n` lines of 67 bytes that look nothing alike (a deterministic
/// pseudo-random walk), so no line is a fuzzy match for another.
fn noise_lines(n: usize, seed: u64) -> Vec<String> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n).map(|_| format!("{:016x} {:016x} {:016x} {:016x}", next(), next(), next(), next())).collect()
}

#[tokio::test]
async fn a_huge_shuffled_file_marks_its_threads_stale_and_holds_up_no_other_file() {
    // 28 MiB of unlike lines: the size that took 12 to 27 seconds to
    // re-anchor before re-anchoring work per file was bounded.
    const LINES: usize = 420_000;
    let mut lines = noise_lines(LINES, 0x9e37_79b9_7f4a_7c15);
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.ts", AUTH)]);
    std::fs::write(repo.join("big.txt"), lines.join("\n") + "\n").expect("write the big file");
    let _daemon = sandbox.start_daemon();
    // Three threads on single lines, which an exact search finds wherever
    // they go, and six on three lines each, which a shuffle breaks up: more
    // than the budget can search for in every way, so the order it is spent
    // in shows.
    let single = [1_000, 150_000, 300_000];
    let multi = [50_000, 100_000, 200_000, 250_000, 350_000, 400_000];
    for line in single {
        add(&sandbox, &repo, &format!("big.txt:{}", line + 1), "one line");
    }
    for line in multi {
        add(&sandbox, &repo, &format!("big.txt:{}-{}", line + 1, line + 3), "three lines");
    }
    add(&sandbox, &repo, "src/auth.ts:3-8", "Handle expired tokens");
    let quotes: Vec<String> = single.iter().map(|&l| lines[l].clone()).collect();

    // Shuffle the big file's lines (Fisher-Yates on the same walk) twice,
    // reading in between: after the first, the threads were last anchored
    // against two different texts, and still every one-line thread must be
    // searched for before any other thread's fuzzy search. Edit the small
    // file at the same time.
    let mut order = noise_lines(2 * LINES, 0x2545_f491_4f6c_dd1d)
        .into_iter()
        .map(|l| u64::from_str_radix(&l[..16], 16).expect("hex"));
    let agent = sandbox.agent(&repo).await;
    for _ in 0..2 {
        for i in (1..LINES).rev() {
            let j = (order.next().expect("enough numbers") % (i as u64 + 1)) as usize;
            lines.swap(i, j);
        }
        std::fs::write(repo.join("big.txt"), lines.join("\n") + "\n").expect("shuffle the big file");
        agent.call_ok("get_feedback", json!({"filePath": "big.txt"})).await;
    }
    std::fs::write(repo.join("src/auth.ts"), format!("// header\n// more\n{AUTH}")).expect("edit");

    // The summary answers (within the harness's deadline, which fails loudly)
    // and counts the broken-up threads as not followed.
    let summary = agent.call_ok("get_feedback_summary", json!({})).await;
    assert_eq!((summary["totalThreads"].clone(), summary["orphanedCount"].clone()), (json!(10), json!(6)), "{summary}");

    // The small file's thread followed its edit.
    let small = agent.call_ok("get_feedback", json!({"filePath": "src/auth.ts"})).await;
    assert_eq!(
        (threads(&small)[0]["state"].clone(), threads(&small)[0]["range"]["startLine"].clone()),
        (json!("anchored"), json!(5))
    );

    // In the big file, single lines were found where the shuffle put them;
    // the others say they were not searched for, and keep what they showed.
    let big = agent.call_ok("get_feedback", json!({"filePath": "big.txt"})).await;
    let big = threads(&big);
    assert_eq!(big.len(), 9);
    for thread in &big {
        let text = thread["selectedText"].as_str().expect("selectedText");
        match thread["comments"][0]["body"].as_str() {
            Some("one line") => {
                assert_eq!(thread["state"], json!("moved"), "{thread}");
                let line = thread["range"]["startLine"].as_u64().expect("a line") as usize;
                assert_eq!(lines[line - 1], text, "the range holds the quote: {thread}");
                assert!(quotes.iter().any(|q| q == text));
            }
            _ => {
                assert_eq!(
                    (thread["state"].clone(), thread["orphaned"].clone()),
                    (json!("stale"), json!(true)),
                    "{thread}"
                );
                assert_eq!(text.lines().count(), 3, "the text last seen: {thread}");
            }
        }
    }
}

/// A repository of `files` files of `per_file` lines, with a thread on
/// every line (made with `parley import`): thread `n` of file `f` says
/// `Comment f/n`.
fn big_workspace(sandbox: &Sandbox, files: usize, per_file: usize) -> PathBuf {
    let text: String = (0..per_file).map(|n| format!("let line_{n:04} = {n};\n")).collect();
    let paths: Vec<String> = (0..files).map(|f| format!("src/f{f}.rs")).collect();
    let repo = sandbox.repo("big", &paths.iter().map(|p| (p.as_str(), text.as_str())).collect::<Vec<_>>());
    let mut records = Vec::new();
    for (f, path) in paths.iter().enumerate() {
        let mut start = 0;
        for (n, line) in text.lines().enumerate() {
            let id = format!("{:08x}-0000-4000-8000-{:012x}", f, n);
            records.push(json!({
                "v": "1", "id": id, "workspace": repo, "path": path,
                "start": start, "end": start + line.len(), "quote": line, "prefix": "", "suffix": "",
                "anchored_against": "", "checked_against": "",
                "span": [n, n, 0, 0, 0, line.len(), line.len(), line.len()],
                "state": "anchored", "similarity": null, "original_quote": line,
                "comments": [{"id": format!("c-{f}-{n}"), "body": format!("Comment {f}/{n}"), "author": "dana",
                              "created_at": "2026-11-21T00:00:00.000Z"}],
                "created_at": "2026-11-21T00:00:00.000Z", "updated_at": "2026-11-21T00:00:00.000Z", "resolved": false,
            }));
            start += line.len() + 1;
        }
    }
    let export = json!({"format": "parley-export", "version": 1, "exported_at": "2026-11-21T00:00:00.000Z",
                        "reviews": [], "threads": records});
    let file = sandbox.dir.path().join("big.json");
    std::fs::write(&file, serde_json::to_vec(&export).expect("JSON")).expect("write the export");
    let (code, _, err) = cli_in(sandbox, &repo, &["import", file.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    repo
}

/// `parley feedback list` reads a large workspace a page at a time (a whole
/// listing of 100,000 threads would not fit one answer): every thread comes
/// once, in order, and the count at the end is the whole workspace's.
#[tokio::test]
async fn the_cli_lists_a_large_workspace_a_page_at_a_time() {
    const FILES: usize = 3;
    const PER_FILE: usize = 420;
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = big_workspace(&sandbox, FILES, PER_FILE);
    // A page holds what was asked for, and says how many there are in all.
    let total = FILES * PER_FILE;
    let mut editor = sandbox.editor("nvim", &[&repo]).await;
    let page = editor.call("feedback/list", json!({"offset": PER_FILE - 2, "limit": 5})).await;
    let paths: Vec<(&str, u64)> = page["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| (t["path"].as_str().unwrap_or(""), t["range"]["start"]["line"].as_u64().unwrap_or(0)))
        .collect();
    let near_the_end = (PER_FILE - 2) as u64;
    let want = [
        ("src/f0.rs", near_the_end),
        ("src/f0.rs", near_the_end + 1),
        ("src/f1.rs", 0),
        ("src/f1.rs", 1),
        ("src/f1.rs", 2),
    ];
    assert_eq!((paths.as_slice(), page["total"].as_u64()), (want.as_slice(), Some(total as u64)), "{page}");

    let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.trim_end().ends_with(&format!("{total} thread(s), 0 orphaned.")), "{}", &out[out.len() - 200..]);
    let comments: Vec<&str> = out.lines().filter_map(|l| l.trim().strip_prefix("dana (")).collect();
    let want: Vec<String> = (0..FILES).flat_map(|f| (0..PER_FILE).map(move |n| format!("Comment {f}/{n}"))).collect();
    let got: Vec<&str> = comments.iter().map(|c| c.rsplit("): ").next().unwrap_or("")).collect();
    assert_eq!(got, want, "every thread once, by file and line");

    let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let listed: Vec<Value> = serde_json::from_str(&out).expect("a JSON array");
    let ids: std::collections::BTreeSet<&str> = listed.iter().filter_map(|t| t["id"].as_str()).collect();
    assert_eq!((listed.len(), ids.len()), (total, total), "no thread twice, none left out");
}

/// An agent's `get_feedback` answers a page (100 threads unless it asks
/// for more, up to 1,000), says how many there are and where the next page
/// starts, and marks only what it answered as seen: a large workspace's
/// whole feedback fits no message and no agent's context.
#[tokio::test]
async fn an_agent_reads_a_large_workspace_a_page_at_a_time() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = big_workspace(&sandbox, 2, 130);
    let agent = sandbox.agent(&repo).await;
    let bodies = |listed: &Value| -> Vec<String> {
        threads(listed).iter().map(|t| t["comments"][0]["body"].as_str().unwrap_or("").to_owned()).collect()
    };

    let first = agent.call("get_feedback", json!({})).await;
    let listed = first.structured_content.clone().expect("structured content");
    let want: Vec<String> = (0..100).map(|n| format!("Comment 0/{n}")).collect();
    assert_eq!(bodies(&listed), want, "the first 100, in order");
    assert_eq!((listed["total"].clone(), listed["nextOffset"].clone()), (json!(260), json!(100)));
    let text = text_of(&first);
    assert!(text.starts_with("Threads 1-100 of 260") && text.ends_with("call get_feedback again with offset 100, or with filePath for one file (get_feedback_summary lists the files with the most threads)."), "{text}");

    let seen_by_the_agent = || {
        let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "list"]);
        assert_eq!(code, 0, "{err}");
        out.lines().filter(|l| l.contains("seen by")).count()
    };
    assert_eq!(seen_by_the_agent(), 100, "only the threads answered are marked seen");

    let rest = agent.call_ok("get_feedback", json!({"offset": 100, "limit": 1000})).await;
    let want: Vec<String> =
        (100..130).map(|n| format!("Comment 0/{n}")).chain((0..130).map(|n| format!("Comment 1/{n}"))).collect();
    assert_eq!(bodies(&rest), want);
    assert!(rest.get("nextOffset").is_none(), "the last page: {rest}");

    let one_file = agent.call_ok("get_feedback", json!({"filePath": "src/f1.rs", "limit": 5})).await;
    assert_eq!((threads(&one_file).len(), one_file["total"].clone()), (5, json!(130)));

    let refused = agent.call_err("get_feedback", json!({"limit": 5000})).await;
    assert!(refused.contains("limit must be from 1 to 1000"), "{refused}");

    assert_eq!(seen_by_the_agent(), 260, "all were read, in two pages");
}
