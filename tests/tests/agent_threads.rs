//! Agents and humans in one conversation, through the real shim and daemon:
//! an agent's `add_feedback` thread appears in an editor window and a
//! person's answer comes back to the agent; bad input is answered with what
//! to do; an agent subscribed to the resources is told of a human's comment,
//! reply and resolution without polling, and of nothing outside its
//! workspace. The rmcp client drives the legacy era here; the official
//! TypeScript SDK (legacy `initialize`) and Python SDK (the 2026-07-28
//! `subscriptions/listen`) run their own scenarios from `tests/clients/`,
//! which also check tool annotations and titles, and the prompts.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use parley_tests::{DEADLINE, Editor, Sandbox, bin, repo_root, review_args, test_dep, text_of};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, ReadResourceRequestParams,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

const SOURCE: &str = "fn main() {\n    println!(\"hi\");\n}\n";

/// An agent's MCP client that records the resources it is told changed.
#[derive(Clone)]
struct Listener {
    name: &'static str,
    /// Sent by rmcp's notification handler; received by the test.
    updates: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Listener {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.updates.send(params.uri);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new(self.name, "1.0.0"))
    }
}

/// An agent named `name` on the real shim started in `cwd`.
struct Agent {
    service: RunningService<RoleClient, Listener>,
    updates: mpsc::UnboundedReceiver<String>,
}

impl Agent {
    async fn start(sandbox: &Sandbox, cwd: &Path, name: &'static str) -> Agent {
        let mut command = tokio::process::Command::from(sandbox.command("parley-mcp"));
        command.current_dir(cwd);
        let (transport, _) =
            TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().expect("start parley-mcp");
        let (tx, updates) = mpsc::unbounded_channel();
        let service = tokio::time::timeout(DEADLINE, Listener { name, updates: tx }.serve(transport))
            .await
            .expect("MCP handshake within the deadline")
            .expect("MCP handshake");
        Agent { service, updates }
    }

    async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let Value::Object(arguments) = arguments else { panic!("tool arguments must be an object") };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        tokio::time::timeout(DEADLINE, self.service.call_tool(params))
            .await
            .expect("tool call within the deadline")
            .expect("tool call succeeds at the protocol level")
    }

    async fn call_ok(&self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments).await;
        assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text_of(&result));
        result.structured_content.expect("structured content")
    }

    // The legacy era's subscription, which hosts on 2025-11-25 use; the
    // modern one is the Python scenario's.
    #[allow(deprecated)]
    async fn subscribe(&self, uri: &str) {
        let request = SubscribeRequestParams::new(uri);
        tokio::time::timeout(DEADLINE, self.service.subscribe(request))
            .await
            .expect("subscribe answered in time")
            .expect("resources/subscribe succeeds");
    }

    #[allow(deprecated)] // See subscribe.
    async fn unsubscribe(&self, uri: &str) {
        let request = UnsubscribeRequestParams::new(uri);
        tokio::time::timeout(DEADLINE, self.service.unsubscribe(request))
            .await
            .expect("unsubscribe answered in time")
            .expect("resources/unsubscribe succeeds");
    }

    /// The next resource the agent is told changed; fails the test after the deadline.
    async fn next_update(&mut self) -> String {
        tokio::time::timeout(DEADLINE, self.updates.recv())
            .await
            .expect("the agent was told of a change in time")
            .expect("the client still runs")
    }

    async fn read(&self, uri: &str) -> String {
        let read = tokio::time::timeout(DEADLINE, self.service.read_resource(ReadResourceRequestParams::new(uri)))
            .await
            .expect("resources/read answered in time")
            .expect("resources/read succeeds");
        match &read.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("{uri} is not text: {other:?}"),
        }
    }
}

/// Runs the `parley` CLI in `cwd`; returns its stdout, failing the test when it fails.
fn cli_in(sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> String {
    let output = sandbox.command("parley").current_dir(cwd).args(args).output().expect("run parley");
    let (out, err) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "parley {args:?} failed: {out}{err}");
    out.into_owned()
}

/// The next `feedback/changed` event an editor receives, skipping others
/// and agents' readings (`seen`, which tests/tests/thread_standing.rs checks).
async fn next_thread_event(editor: &mut Editor) -> Value {
    loop {
        let event = editor.next_notification().await;
        // A thread read, or a message in it delivered: receipts, not changes.
        if event.method == "feedback/changed" && !matches!(event.params["change"].as_str(), Some("seen" | "delivery")) {
            return event.params;
        }
    }
}

#[tokio::test]
async fn an_agents_thread_shows_in_the_editor_and_a_persons_answer_comes_back() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("src/main.rs", SOURCE)]);
    let _daemon = sandbox.start_daemon();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let agent = Agent::start(&sandbox, &repo, "claude-code").await;

    let question = "Should this print to stderr instead?";
    let added =
        agent.call_ok("add_feedback", json!({"filePath": "src/main.rs", "startLine": 2, "body": question})).await;
    assert_eq!(added["created"], json!(true), "{added:#}");
    let thread = &added["thread"];
    assert_eq!(thread["file"], json!("src/main.rs"), "{added:#}");
    assert_eq!(thread["selectedText"], json!("    println!(\"hi\");"), "the line is quoted from the file");
    assert_eq!((thread["range"]["startLine"].clone(), thread["range"]["endLine"].clone()), (json!(2), json!(2)));
    assert_eq!(thread["comments"][0]["author"], json!("claude-code"), "the agent's client name is the author");
    assert_eq!(thread["comments"][0]["body"], json!(question));
    let id = added["threadId"].as_str().expect("a thread id").to_owned();
    assert_eq!(thread["id"], json!(id));

    // The editor window shows it on that line, like a person's thread.
    let event = next_thread_event(&mut editor).await;
    assert_eq!(event["change"], json!("created"), "{event:#}");
    let shown = &event["thread"];
    assert_eq!(shown["id"], json!(id));
    assert_eq!(shown["path"], json!("src/main.rs"));
    assert_eq!(shown["range"]["start"], json!({"line": 1, "character": 0}), "{shown:#}");
    assert_eq!(shown["quote"], json!("    println!(\"hi\");"));
    assert_eq!(shown["comments"][0]["author"], json!("claude-code"));
    assert_eq!(shown["comments"][0]["body"], json!(question));

    // The person answers in the editor; the agent reads the answer.
    let answer = "Yes: it is a diagnostic";
    editor.call("feedback/reply", json!({"thread_id": id, "body": answer, "author": "ana"})).await;
    let listed = agent.call_ok("get_feedback", json!({"filePath": "src/main.rs"})).await;
    let threads = listed["threads"].as_array().expect("threads");
    assert_eq!(threads.len(), 1, "{listed:#}");
    let comments: Vec<(&Value, &Value)> =
        threads[0]["comments"].as_array().expect("comments").iter().map(|c| (&c["author"], &c["body"])).collect();
    assert_eq!(comments, [(&json!("claude-code"), &json!(question)), (&json!("ana"), &json!(answer))]);

    // A range of lines quotes them whole; the CLI lists the thread too.
    let note = "The whole of main, for the record";
    let whole = agent
        .call_ok("add_feedback", json!({"filePath": "src/main.rs", "startLine": 1, "endLine": 3, "body": note}))
        .await;
    assert_eq!(whole["thread"]["selectedText"], json!(SOURCE.trim_end()), "{whole:#}");
    let replied = next_thread_event(&mut editor).await;
    assert_eq!((replied["change"].clone(), replied["thread"]["id"].clone()), (json!("replied"), json!(id)));
    let created = next_thread_event(&mut editor).await;
    assert_eq!(created["change"], json!("created"), "{created:#}");
    assert_eq!(created["thread"]["range"]["end"]["line"], json!(2), "{created:#}");
    let listed = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert!(listed.contains("claude-code ") && listed.contains(note), "{listed}");
    assert!(listed.contains("2 thread(s)"), "{listed}");
}

#[tokio::test]
async fn bad_add_feedback_input_says_what_to_give_instead() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("src/main.rs", SOURCE), ("notes.txt", "first\n\n   \nlast\n")]);
    let outside = sandbox.repo("elsewhere", &[("secret.rs", "fn s() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let agent = Agent::start(&sandbox, &repo, "claude-code").await;
    let outside_file = outside.join("secret.rs").display().to_string();
    let body = "Is this right?";
    let cases: [(Value, &str); 14] = [
        (json!({"filePath": "../elsewhere/secret.rs", "startLine": 1, "body": body}), "is outside your workspace"),
        (json!({"filePath": outside_file, "startLine": 1, "body": body}), "is outside your workspace"),
        (
            json!({"filePath": "src/nope.rs", "startLine": 1, "body": body}),
            "src/nope.rs does not exist in your workspace",
        ),
        (json!({"filePath": "src", "startLine": 1, "body": body}), "src is not a regular file"),
        (
            json!({"filePath": "src/main.rs", "startLine": 9, "body": body}),
            "line 9 is past the end of src/main.rs, which has 3 line(s); give lines between 1 and 3",
        ),
        (json!({"filePath": "src/main.rs", "startLine": 2, "endLine": 7, "body": body}), "line 7 is past the end"),
        (json!({"filePath": "src/main.rs", "startLine": 0, "body": body}), "startLine is a 1-based line number"),
        (
            json!({"filePath": "src/main.rs", "startLine": 2, "endLine": -1, "body": body}),
            "endLine is a 1-based line number: the first line of a file is 1, not -1",
        ),
        (
            json!({"filePath": "src/main.rs", "startLine": 3, "endLine": 2, "body": body}),
            "endLine 2 is before startLine 3",
        ),
        (json!({"filePath": "src/main.rs", "startLine": 2, "body": "  \n"}), "body is required"),
        (
            json!({"filePath": "notes.txt", "startLine": 2, "endLine": 3, "body": body}),
            "lines 2-3 of notes.txt are blank",
        ),
        (json!({"filePath": "src/main.rs", "startLine": 2}), "missing field `body`"),
        (json!({"filePath": "src/main.rs", "startLine": 1.5, "body": body}), "floating point `1.5`"),
        (
            json!({"filePath": "src/main.rs", "startLine": 4294967296_u64, "body": body}),
            "line 4294967295 is past the end",
        ),
    ];
    for (arguments, expected) in cases {
        let result = agent.call("add_feedback", arguments.clone()).await;
        let text = text_of(&result);
        assert_eq!(result.is_error, Some(true), "{arguments} should fail: {text}");
        assert!(text.contains(expected), "{arguments}: expected {expected:?} in {text}");
    }
    // The tool's own refusals keep the feedback tools' JSON shape.
    let refused =
        text_of(&agent.call("add_feedback", json!({"filePath": "src/main.rs", "startLine": 0, "body": body})).await);
    let refused: Value = serde_json::from_str(&refused).expect("a JSON error");
    assert!(refused["error"].is_string(), "{refused}");
    let summary = agent.call_ok("get_feedback_summary", json!({})).await;
    assert_eq!(summary["totalThreads"], json!(0), "nothing was made: {summary:#}");
}

#[tokio::test]
async fn a_subscribed_agent_is_told_of_a_humans_comment_reply_and_resolution_in_its_workspace_only() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("src/main.rs", SOURCE)]);
    let elsewhere = sandbox.repo("elsewhere", &[("other.rs", "fn other() {}\n")]);
    let _daemon = sandbox.start_daemon();
    let mut agent = Agent::start(&sandbox, &repo, "claude-code").await;
    let presenter = Agent::start(&sandbox, &repo, "another-agent").await;
    let mut editor = sandbox.editor("vscode", &[&repo]).await;

    let capabilities = agent.service.peer_info().expect("server info").capabilities.clone();
    let resources = capabilities.resources.expect("resources are offered");
    assert_eq!(resources.subscribe, Some(true), "subscriptions are advertised");
    assert_eq!(resources.list_changed, None, "the set of resources never changes");
    agent.subscribe("parley://feedback").await;
    agent.subscribe("parley://review").await;

    // A comment in another repository is not this agent's business: the
    // first thing it hears of is the review presented in its own.
    cli_in(&sandbox, &elsewhere, &["feedback", "add", "other.rs:1", "Elsewhere", "--author", "ana"]);
    presenter.call_ok("present_review", review_args("# Walkthrough\n", &repo)).await;
    assert_eq!(agent.next_update().await, "parley://review");

    // A person comments from the terminal: the agent hears of it and reads it.
    let comment = "Use a logger here";
    cli_in(&sandbox, &repo, &["feedback", "add", "src/main.rs:2", comment, "--author", "ana"]);
    assert_eq!(agent.next_update().await, "parley://feedback");
    let feedback = agent.read("parley://feedback").await;
    assert!(feedback.contains(comment), "{feedback}");
    let threads: Value = serde_json::from_str(&feedback).expect("the resource is JSON");
    let id = threads[0]["id"].as_str().expect("a thread id").to_owned();

    // The same person replies in the editor, then resolves from the terminal.
    editor.call("feedback/reply", json!({"thread_id": id, "body": "Any logger will do", "author": "ana"})).await;
    assert_eq!(agent.next_update().await, "parley://feedback");
    cli_in(&sandbox, &repo, &["feedback", "resolve", &id]);
    assert_eq!(agent.next_update().await, "parley://feedback");

    // Unsubscribed from the threads, the agent hears only of the review.
    agent.unsubscribe("parley://feedback").await;
    cli_in(&sandbox, &repo, &["feedback", "add", "src/main.rs:1", "Another comment", "--author", "ana"]);
    presenter.call_ok("present_review", review_args("# Walkthrough, revised\n", &repo)).await;
    assert_eq!(agent.next_update().await, "parley://review");

    // A resource Parley does not offer is refused with the ones it does.
    #[allow(deprecated)] // See Agent::subscribe.
    let refused = agent.service.subscribe(SubscribeRequestParams::new("parley://nothing")).await;
    let error = refused.expect_err("an unknown resource is refused").to_string();
    assert!(error.contains("parley://review and parley://feedback"), "{error}");
}

/// A scenario script of an official SDK client, as `tests/tests/sdk_clients.rs` runs them.
struct Script {
    name: &'static str,
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
}

/// Runs a script against the sandbox's daemon with the shim and the
/// workspace as its arguments; fails the test unless every check passed.
async fn run(script: Script, sandbox: &Sandbox, workspace: &Path) -> String {
    let mut command = tokio::process::Command::new(&script.program);
    command
        .args(&script.args)
        .arg(bin("parley-mcp"))
        .arg(workspace)
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("PARLEY_DAEMON", bin("parley"))
        .envs(script.env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let deadline = Duration::from_secs(120);
    let output = tokio::time::timeout(deadline, command.output())
        .await
        .unwrap_or_else(|_| panic!("the {} scenario did not finish within {deadline:?}", script.name))
        .unwrap_or_else(|e| panic!("could not start {} for the {}: {e}", script.program.display(), script.name));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let totals = stdout.lines().rev().find(|line| line.ends_with(" failed")).unwrap_or("no totals line");
    assert!(
        output.status.success() && totals.ends_with(" passed, 0 failed") && !totals.starts_with("0 passed"),
        "the {} scenario failed ({}, {totals}).\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        script.name,
        output.status,
    );
    stdout
}

#[tokio::test]
async fn the_typescript_sdk_agent_hears_of_a_humans_comment_and_opens_a_thread_an_editor_shows() {
    test_dep("node/node_modules/@modelcontextprotocol/sdk/package.json");
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("src/main.rs", SOURCE)]);
    let _daemon = sandbox.start_daemon();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let script = Script {
        name: "TypeScript SDK",
        program: PathBuf::from("node"),
        args: vec![repo_root().join("tests/clients/ts_threads.mjs").into()],
        env: vec![("PARLEY_TEST_NODE_MODULES", test_dep("node/node_modules").into())],
    };
    run(script, &sandbox, &repo).await;

    // The human's comment the script made through the CLI, then the agent's
    // thread, each shown in the editor as it was made.
    let human = next_thread_event(&mut editor).await;
    assert_eq!(human["change"], json!("created"), "{human:#}");
    assert_eq!(human["thread"]["comments"][0]["author"], json!("ana"), "{human:#}");
    let mut agents = next_thread_event(&mut editor).await;
    while agents["thread"]["id"] == human["thread"]["id"] {
        agents = next_thread_event(&mut editor).await;
    }
    assert_eq!(agents["change"], json!("created"), "{agents:#}");
    let thread = &agents["thread"];
    assert_eq!(thread["comments"][0]["author"], json!("parley-ts-sdk-test"), "{thread:#}");
    assert_eq!(thread["comments"][0]["body"], json!("Should this go to stderr?"), "{thread:#}");
    assert_eq!(thread["path"], json!("src/main.rs"));
    assert_eq!(thread["range"]["start"]["line"], json!(1), "line 2, 0-based on the hub");
    assert_eq!(thread["quote"], json!("    println!(\"hi\");"));
}

#[tokio::test]
async fn the_python_sdk_in_the_stateless_era_listens_and_hears_of_a_humans_comment() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("src/main.rs", SOURCE)]);
    let _daemon = sandbox.start_daemon();
    let script = Script {
        name: "Python SDK (auto)",
        program: test_dep("py/bin/python"),
        args: vec![repo_root().join("tests/clients/py_threads.py").into()],
        // The script runs from the source tree, which must stay free of __pycache__.
        env: vec![("PYTHONDONTWRITEBYTECODE", "1".into())],
    };
    run(script, &sandbox, &repo).await;
    // The agent's thread is stored under the name its requests carried.
    let listed = cli_in(&sandbox, &repo, &["feedback", "list", "--json"]);
    let threads: Value = serde_json::from_str(&listed).expect("feedback list --json prints JSON");
    let authors: Vec<&Value> =
        threads.as_array().expect("threads").iter().map(|t| &t["comments"][0]["author"]).collect();
    assert!(authors.contains(&&json!("parley-py-sdk-test")), "{threads:#}");
}
