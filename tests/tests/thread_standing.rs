//! Each thread tells the human where it stands, through the real daemon,
//! shim and CLI: a person's thread is open; an agent's `get_feedback` (or a
//! read of the parley://feedback resource) makes it seen by that agent, and
//! an editor window is told live, once; a reply makes it addressed; a
//! person's reply opens it again; `resolve_feedback` with a note keeps the
//! note as the last comment and shows as resolved by the agent; a person's
//! resolve shows as resolved by a human; `parley feedback list` shows each,
//! and the standings survive a restart of the daemon.

use std::path::Path;
use std::time::Duration;

use parley_tests::{Editor, Sandbox};
use serde_json::{Value, json};

const SOURCE: &str = "fn main() {\n    println!(\"hi\");\n    let x = 1;\n    let y = 2;\n}\n";

/// Runs the `parley` CLI in `cwd`; returns its stdout, failing the test when it fails.
fn cli_in(sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> String {
    let output = sandbox.command("parley").current_dir(cwd).args(args).output().expect("run parley");
    let (out, err) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "parley {args:?} failed: {out}{err}");
    out.into_owned()
}

/// The line `parley feedback list` prints for thread `id`.
fn listed_line(listing: &str, id: &str) -> String {
    listing.lines().find(|l| l.ends_with(id)).unwrap_or_else(|| panic!("{id} not listed:\n{listing}")).to_owned()
}

/// The next `feedback/changed` event an editor receives, skipping others.
async fn next_thread_event(editor: &mut Editor) -> Value {
    loop {
        let event = editor.next_notification().await;
        if event.method == "feedback/changed" {
            return event.params;
        }
    }
}

/// A person's thread on 1-based `line`, made from the editor window.
async fn human_thread(editor: &mut Editor, repo: &Path, line: u32, body: &str) -> String {
    let range = json!({"start": {"line": line - 1, "character": 0}, "end": {"line": line - 1, "character": 8}});
    let created = editor
        .call(
            "feedback/create",
            json!({"path": repo.join("src/main.rs"), "range": range, "body": body, "author": "ana"}),
        )
        .await;
    assert_eq!(created["thread"]["standing"], json!("open"), "a person's new thread is open: {created:#}");
    let event = next_thread_event(editor).await;
    assert_eq!((event["change"].clone(), event["thread"]["standing"].clone()), (json!("created"), json!("open")));
    created["thread"]["id"].as_str().expect("thread id").to_owned()
}

#[tokio::test]
async fn threads_stand_open_seen_addressed_and_resolved_by_whom() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("src/main.rs", SOURCE)]);
    let mut daemon = sandbox.start_daemon();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let agent = sandbox.agent(&repo).await;

    let first = human_thread(&mut editor, &repo, 2, "Print to stderr?").await;
    let listing = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert!(listed_line(&listing, &first).contains("]  open  "), "{listing}");

    // The agent reads the feedback: the thread is seen by it, and the
    // editor window is told so without asking.
    let listed = agent.call_ok("get_feedback", json!({})).await;
    let item = &listed["threads"][0];
    assert_eq!(item["standing"], json!("seen"), "{listed:#}");
    let agent_name = item["seenBy"].as_str().expect("seenBy names the agent").to_owned();
    assert!(!agent_name.is_empty(), "{listed:#}");
    let event = next_thread_event(&mut editor).await;
    assert_eq!(event["change"], json!("seen"), "{event:#}");
    assert_eq!(event["thread"]["id"], json!(first));
    assert_eq!(event["thread"]["standing"], json!("seen"));
    assert_eq!(event["thread"]["seen_by"], json!(agent_name));
    assert_eq!(event["thread"]["comments"].as_array().map(Vec::len), Some(1), "seeing adds no comment");
    let listing = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert!(listed_line(&listing, &first).contains(&format!("seen by {agent_name}")), "{listing}");

    // Reading again changes nothing, so the window hears nothing more.
    let again = agent.call_ok("get_feedback", json!({"filePath": "src/main.rs"})).await;
    assert_eq!(again["threads"][0]["seenBy"], json!(agent_name), "the first reading is kept");
    let quiet = editor.try_next_notification(Duration::from_millis(400)).await;
    assert!(quiet.is_none(), "no event for a reading that changed nothing: {quiet:?}");

    // The agent answers: addressed.
    agent.call_ok("reply_feedback", json!({"threadId": first, "body": "Moved it to eprintln!"})).await;
    let event = next_thread_event(&mut editor).await;
    assert_eq!((event["change"].clone(), event["thread"]["standing"].clone()), (json!("replied"), json!("addressed")));
    assert_eq!(event["thread"]["addressed_by"], json!(agent_name));
    let listing = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert!(listed_line(&listing, &first).contains(&format!("addressed by {agent_name}")), "{listing}");

    // The person answers back: the thread waits for an agent again.
    editor
        .call("feedback/reply", json!({"thread_id": first, "body": "Thanks; and the exit code?", "author": "ana"}))
        .await;
    let event = next_thread_event(&mut editor).await;
    assert_eq!((event["change"].clone(), event["thread"]["standing"].clone()), (json!("replied"), json!("open")));
    assert!(event["thread"].get("seen_by").is_none(), "{event:#}");

    // The agent resolves it with a note: kept as the last comment, and the
    // thread shows resolved by the agent.
    let note = "Exits with 2 now";
    let resolved = agent.call_ok("resolve_feedback", json!({"threadId": first, "note": note})).await;
    assert_eq!(resolved, json!({"resolved": true, "threadId": first}), "seed 002's shape is kept");
    let event = next_thread_event(&mut editor).await;
    assert_eq!(event["change"], json!("resolved"), "{event:#}");
    let thread = &event["thread"];
    assert_eq!((thread["standing"].clone(), thread["resolved_by"].clone()), (json!("resolved"), json!("agent")));
    assert_eq!(thread["addressed_by"], json!(agent_name));
    let last = thread["comments"].as_array().and_then(|c| c.last()).expect("comments");
    assert_eq!((last["body"].clone(), last["author"].clone()), (json!(note), json!(agent_name)), "{thread:#}");

    // A person resolves a thread: resolved by a human.
    let second = human_thread(&mut editor, &repo, 3, "Name this better").await;
    editor.call("feedback/resolve", json!({"thread_id": second})).await;
    let event = next_thread_event(&mut editor).await;
    assert_eq!(event["thread"]["resolved_by"], json!("human"), "{event:#}");

    // Reading the resource counts as reading the feedback.
    let third = human_thread(&mut editor, &repo, 4, "Is y used?").await;
    let read = agent
        .service
        .read_resource(rmcp::model::ReadResourceRequestParams::new("parley://feedback"))
        .await
        .expect("resources/read succeeds");
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("the feedback resource is text")
    };
    let items: Value = serde_json::from_str(text).expect("the resource is JSON");
    assert_eq!(items[0]["standing"], json!("seen"), "{items:#}");
    let event = next_thread_event(&mut editor).await;
    assert_eq!((event["change"].clone(), event["thread"]["id"].clone()), (json!("seen"), json!(third)));

    // The CLI shows each, and so does a daemon started afresh.
    let check = |listing: &str| {
        assert!(listed_line(listing, &first).contains(&format!("resolved by {agent_name}")), "{listing}");
        assert!(listed_line(listing, &second).contains("resolved by a human"), "{listing}");
        assert!(listed_line(listing, &third).contains(&format!("seen by {agent_name}")), "{listing}");
    };
    check(&cli_in(&sandbox, &repo, &["feedback", "list", "--all"]));
    drop(agent);
    drop(editor);
    daemon.terminate();
    let _daemon = sandbox.start_daemon();
    check(&cli_in(&sandbox, &repo, &["feedback", "list", "--all"]));
    let json: Value = serde_json::from_str(&cli_in(&sandbox, &repo, &["feedback", "list", "--all", "--json"]))
        .expect("--json is JSON");
    let standings: Vec<&Value> = json.as_array().expect("threads").iter().map(|t| &t["standing"]).collect();
    assert_eq!(standings, [&json!("resolved"), &json!("resolved"), &json!("seen")], "{json:#}");
}
