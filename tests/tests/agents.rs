//! Agents at work and a person's question delivered to a chosen one,
//! through the real daemon, shim and CLI. Each agent's host is a stand-in:
//! a shell that starts the real `parley-mcp` as its child (so each agent has
//! a host process of its own, as under Claude Code or Codex) and speaks raw
//! MCP lines to it. Covered: `parley agents` listing two hosts' agents by
//! name, host and workspace; one waiting in `await_review` shown waiting; the
//! names kept across a daemon restart; an agent that goes leaving the list
//! with `agents/changed`; `parley ask` reaching only the agent chosen, by
//! each path (the note at the end of its next tool answer, the answer of the
//! call it waits in, Claude Code's channel, a host hook's `messages/take`),
//! and the receipts `read` and `answered`; a person's reply reaching the
//! same agent; a message to a gone agent sent to another; bad input.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use parley_tests::{DEADLINE, Editor, Sandbox, bin, git};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const SOURCE: &str = "fn login() {\n    let token = read_token();\n    let again = read_token();\n}\n";

/// A repository with `src/auth.rs` committed (also the host hooks' tests').
pub(crate) fn project(sandbox: &Sandbox) -> PathBuf {
    let repo = sandbox.repo("shop", &[("src/auth.rs", SOURCE)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    repo
}

/// An agent's host stand-in: a shell running the real shim as its child.
struct Host {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// Notifications read while waiting for an answer.
    notifications: VecDeque<Value>,
    next_id: u64,
}

impl Host {
    /// Starts a host named `client` in `cwd` (declaring Claude Code's
    /// channel when `channel`), and says `initialize`.
    async fn start(sandbox: &Sandbox, cwd: &Path, client: &str, channel: bool) -> Host {
        let capabilities = if channel { json!({"experimental": {"claude/channel": {}}}) } else { json!({}) };
        Host::start_with(sandbox, cwd, client, capabilities).await
    }

    /// Like [`Host::start`], declaring `capabilities`.
    async fn start_with(sandbox: &Sandbox, cwd: &Path, client: &str, capabilities: Value) -> Host {
        Host::start_env(sandbox, cwd, client, capabilities, &[]).await
    }

    /// Like [`Host::start_with`], with `env` in the host's environment (as
    /// an editor's terminal gives its programs `PARLEY_EDITOR_ID`).
    async fn start_env(sandbox: &Sandbox, cwd: &Path, client: &str, capabilities: Value, env: &[(&str, &str)]) -> Host {
        // The shell waits for the shim (no exec): it is the shim's parent.
        let shim = sandbox.command("parley-mcp");
        let mut command = tokio::process::Command::new("sh");
        for (key, value) in shim.get_envs() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command.envs(env.iter().copied());
        command
            .args(["-c", "\"$0\"; exit $?"])
            .arg(bin("parley-mcp"))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("start the host stand-in");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let mut host = Host { child, stdin, lines, notifications: VecDeque::new(), next_id: 0 };
        let init = host
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                       "clientInfo": {"name": client, "version": "2.1.320"}}),
            )
            .await;
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        assert!(init["result"]["capabilities"]["experimental"]["claude/channel"].is_object(), "{init}");
        host.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        host
    }

    /// The host's process id: the shim's parent.
    fn pid(&self) -> u32 {
        self.child.id().expect("the host runs")
    }

    async fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(format!("{message}\n").as_bytes()).await.expect("write to the shim");
    }

    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(DEADLINE, self.lines.next_line())
            .await
            .expect("the shim wrote in time")
            .expect("read the shim")
            .expect("the shim's stdout is open");
        serde_json::from_str(&line).expect("the shim writes JSON")
    }

    /// Sends a request without waiting for its answer; its id.
    async fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        id
    }

    /// The answer to request `id`, keeping notifications read meanwhile.
    async fn answer(&mut self, id: u64) -> Value {
        loop {
            let message = self.read().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
            if message.get("method").is_some() && message.get("id").is_none() {
                self.notifications.push_back(message);
            }
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        self.answer(id).await
    }

    /// Calls a tool; its result (`content`, `structuredContent`, …).
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments})).await;
        answer["result"].clone()
    }

    /// The notification `method`, waiting for it.
    async fn notification(&mut self, method: &str) -> Value {
        if let Some(at) = self.notifications.iter().position(|n| n["method"] == method) {
            return self.notifications.remove(at).expect("found");
        }
        loop {
            let message = self.read().await;
            if message["method"] == method {
                return message;
            }
        }
    }

    /// Ends the host: the shim's stdin closes and it exits.
    async fn quit(mut self) {
        self.stdin = None;
        let _ = tokio::time::timeout(DEADLINE, self.child.wait()).await.expect("the host ends in time");
    }
}

/// The texts of a tool result's content blocks.
fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// `parley agents --json`.
fn agents(sandbox: &Sandbox) -> Vec<Value> {
    let (code, out, err) = sandbox.cli(&["agents", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let listed: Value = serde_json::from_str(&out).expect("agents --json prints JSON");
    listed["agents"].as_array().cloned().expect("a list of agents")
}

fn names(agents: &[Value]) -> Vec<String> {
    agents.iter().map(|a| a["name"].as_str().unwrap_or_default().to_owned()).collect()
}

/// Runs `parley` in `cwd`.
fn cli_in(sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = sandbox.command("parley").args(args).current_dir(cwd).stdin(Stdio::null()).output().expect("run parley");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `parley ask` in `repo`, which must succeed; the thread's id.
fn ask(sandbox: &Sandbox, repo: &Path, agent: Option<&str>, place: &str, question: &str) -> String {
    let mut args = vec!["ask", "--json"];
    if let Some(agent) = agent {
        args.extend(["--agent", agent]);
    }
    args.extend([place, question]);
    let (code, out, err) = cli_in(sandbox, repo, &args);
    assert_eq!(code, 0, "parley ask failed: {out}{err}");
    let asked: Value = serde_json::from_str(&out).expect("ask --json prints JSON");
    asked["thread"]["id"].as_str().expect("a thread id").to_owned()
}

/// The deliveries of thread `id`, as `parley feedback list --json` shows them.
fn deliveries(sandbox: &Sandbox, repo: &Path, id: &str) -> Vec<Value> {
    let (code, out, err) = cli_in(sandbox, repo, &["feedback", "list", "--all", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let threads: Vec<Value> = serde_json::from_str(&out).expect("feedback list --json prints a list");
    let thread = threads.iter().find(|t| t["id"] == id).unwrap_or_else(|| panic!("thread {id} in {threads:?}"));
    thread["deliveries"].as_array().cloned().unwrap_or_default()
}

/// Two agents of one host kind at work on `repo`, registered (each has
/// made a call), in order: `claude-1`, `claude-2`.
async fn two_claudes(sandbox: &Sandbox, repo: &Path) -> (Host, Host) {
    let mut first = Host::start(sandbox, repo, "claude-code", false).await;
    first.call("get_feedback_summary", json!({})).await;
    let mut second = Host::start(sandbox, repo, "claude-code", false).await;
    second.call("get_feedback_summary", json!({})).await;
    (first, second)
}

#[tokio::test]
async fn two_hosts_agents_are_listed_by_name_host_and_workspace() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let mut claude = Host::start(&sandbox, &repo.join("src"), "claude-code", false).await;
    claude.call("get_feedback_summary", json!({})).await;
    let mut codex = Host::start(&sandbox, &repo, "codex-mcp-client", false).await;
    codex.call("get_feedback_summary", json!({})).await;

    let listed = agents(&sandbox);
    assert_eq!(names(&listed), ["claude-1", "codex-1"], "{listed:#?}");
    let real = std::fs::canonicalize(&repo).expect("real path");
    for (agent, host, pid) in [(&listed[0], "claude-code", claude.pid()), (&listed[1], "codex-mcp-client", codex.pid())]
    {
        assert_eq!(agent["host"], host);
        assert_eq!(agent["host_version"], "2.1.320");
        assert_eq!(agent["workspace"], json!(real), "the repository, not the folder it started in");
        assert_eq!(agent["host_pid"], json!(pid), "the shim's parent is the host");
        assert_eq!(agent["last_call"], "get_feedback_summary");
        assert!(agent.get("waiting_in").is_none(), "{agent}");
    }
    let (code, table, _) = sandbox.cli(&["agents"]);
    assert_eq!(code, 0);
    assert!(
        table.contains("claude-1") && table.contains("codex-1") && table.contains("claude-code 2.1.320"),
        "{table}"
    );

    // A name given in the shim's environment is used instead.
    let mut command = tokio::process::Command::from(sandbox.command("parley-mcp"));
    command.current_dir(&repo).env("PARLEY_AGENT_NAME", "reviewer");
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start parley-mcp");
    let named = rmcp::ServiceExt::serve((), transport).await.expect("handshake");
    named.call_tool(rmcp::model::CallToolRequestParams::new("get_feedback_summary")).await.expect("call");
    assert_eq!(names(&agents(&sandbox)), ["claude-1", "codex-1", "reviewer"]);
}

#[tokio::test]
async fn an_agent_whose_host_offers_roots_works_in_its_first_root() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let elsewhere = sandbox.dir.path().join("home");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let mut host = Host::start_with(&sandbox, &elsewhere, "code", json!({"roots": {}})).await;
    let asked = host.read().await;
    assert_eq!(asked["method"], "roots/list", "{asked}");
    let mut editor = sandbox.editor("code", &[&repo]).await;
    editor.call("agents/list", json!({})).await;
    let root = format!("file://{}", repo.display());
    host.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": root}]}})).await;
    let real = std::fs::canonicalize(&repo).expect("real path");
    loop {
        let changed = next_agents_changed(&mut editor).await;
        if changed["agents"][0]["workspace"] == json!(real) {
            break;
        }
    }
    assert_eq!(agents(&sandbox)[0]["workspace"], json!(real));
}

#[tokio::test]
async fn a_gone_agent_leaves_the_list_and_editors_are_told() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let mut claude = Host::start(&sandbox, &repo, "claude-code", false).await;
    claude.call("get_feedback_summary", json!({})).await;
    let mut editor = sandbox.editor("code", &[&repo]).await;
    let listed = editor.call("agents/list", json!({})).await;
    assert_eq!(listed["agents"][0]["name"], "claude-1", "{listed}");

    claude.quit().await;
    let changed = next_agents_changed(&mut editor).await;
    assert_eq!(changed["agents"], json!([]), "{changed}");
    assert_eq!(agents(&sandbox), Vec::<Value>::new());
}

/// The next `agents/changed` an editor is sent; its params.
async fn next_agents_changed(editor: &mut Editor) -> Value {
    loop {
        let notification = editor.next_notification().await;
        if notification.method == "agents/changed" {
            return notification.params;
        }
    }
}

#[tokio::test]
async fn a_restarted_daemon_gives_each_agent_its_name_again() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let mut daemon = sandbox.start_daemon();
    let (mut first, mut second) = two_claudes(&sandbox, &repo).await;
    assert_eq!(names(&agents(&sandbox)), ["claude-1", "claude-2"]);
    let pids: Vec<Value> = agents(&sandbox).iter().map(|a| a["host_pid"].clone()).collect();

    assert_eq!(daemon.terminate(), Some(0));
    // The second reconnects first: a name given in order of arrival would
    // swap them. The shim starts a new daemon and replays its handshake.
    second.call("get_feedback_summary", json!({})).await;
    first.call("get_feedback_summary", json!({})).await;
    let listed = agents(&sandbox);
    assert_eq!(names(&listed), ["claude-1", "claude-2"], "{listed:#?}");
    assert_eq!(listed.iter().map(|a| a["host_pid"].clone()).collect::<Vec<_>>(), pids, "each kept its own name");
}

#[tokio::test]
async fn a_question_reaches_only_the_chosen_agent_at_the_end_of_its_next_tool_answer() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let (mut first, mut second) = two_claudes(&sandbox, &repo).await;
    let thread = ask(&sandbox, &repo, Some("claude-2"), "src/auth.rs:2-3", "Why is the token read twice?");
    assert_eq!(deliveries(&sandbox, &repo, &thread)[0]["state"], "waiting");

    let other = first.call("get_feedback_summary", json!({})).await;
    assert_eq!(texts(&other).len(), 1, "claude-1 was not asked: {other}");
    let told = second.call("get_feedback_summary", json!({})).await;
    let said = texts(&told);
    assert_eq!(said.len(), 2, "the tool's own text, then the note: {told}");
    let note = &said[1];
    for part in ["src/auth.rs:2-3", thread.as_str(), "Why is the token read twice?", "reply_feedback"] {
        assert!(note.contains(part), "the note names {part}: {note}");
    }
    assert!(told["structuredContent"].is_object(), "the tool's own answer is kept: {told}");
    let again = second.call("get_feedback_summary", json!({})).await;
    assert_eq!(texts(&again).len(), 1, "told once: {again}");
    let delivery = &deliveries(&sandbox, &repo, &thread)[0];
    assert_eq!(
        (&delivery["state"], &delivery["via"], &delivery["agent"]),
        (&json!("delivered"), &json!("tool-answer"), &json!("claude-2"))
    );
    let (_, listing, _) = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert!(listing.contains("to claude-2: delivered (tool-answer)"), "{listing}");

    // Reading the thread, then answering it, moves the receipt on.
    second.call("get_feedback", json!({})).await;
    assert_eq!(deliveries(&sandbox, &repo, &thread)[0]["state"], "read");
    let reply =
        second.call("reply_feedback", json!({"threadId": thread, "body": "One read was left over; removed"})).await;
    assert_ne!(reply["isError"], json!(true), "{reply}");
    assert_eq!(deliveries(&sandbox, &repo, &thread)[0]["state"], "answered");

    // The person's reply goes to the same agent.
    let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "reply", &thread, "Thanks, and the test?"]);
    assert_eq!(code, 0, "{out}{err}");
    let told = second.call("get_feedback_summary", json!({})).await;
    assert!(texts(&told).get(1).is_some_and(|n| n.contains("Thanks, and the test?")), "{told}");
    assert_eq!(texts(&first.call("get_feedback_summary", json!({})).await).len(), 1);
}

#[tokio::test]
async fn a_persons_answer_in_a_thread_an_agent_opened_reaches_that_agent() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let (mut first, mut second) = two_claudes(&sandbox, &repo).await;
    let opened = second
        .call("add_feedback", json!({"filePath": "src/auth.rs", "startLine": 2, "body": "Should the token be cached?"}))
        .await;
    let thread = opened["structuredContent"]["threadId"].as_str().expect("a thread id").to_owned();
    let (code, out, err) = cli_in(&sandbox, &repo, &["feedback", "reply", &thread, "Yes, for a minute"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(texts(&first.call("get_feedback_summary", json!({})).await).len(), 1, "claude-1 did not open it");
    let told = second.call("get_feedback_summary", json!({})).await;
    let note = texts(&told).get(1).cloned().unwrap_or_default();
    assert!(
        note.contains("Yes, for a minute") && note.contains(&thread) && note.contains("wrote in the thread"),
        "{told}"
    );
    let delivery = &deliveries(&sandbox, &repo, &thread)[0];
    assert_eq!((&delivery["agent"], &delivery["state"]), (&json!("claude-2"), &json!("delivered")));
}

#[tokio::test]
async fn an_agent_waiting_in_await_review_is_shown_waiting_and_told_in_that_calls_answer() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    std::fs::write(repo.join("src/auth.rs"), SOURCE.replace("again", "twice")).expect("edit");
    let (mut first, mut second) = two_claudes(&sandbox, &repo).await;
    let mut editor = sandbox.editor("code", &[&repo]).await;
    editor.call("agents/list", json!({})).await;
    let pending =
        second.call("request_review", json!({"summary": "Renamed", "reviewer": "human", "wait_seconds": 0})).await;
    let review = pending["structuredContent"]["review_id"].as_str().expect("a review id").to_owned();
    let waiting = second
        .send_request(
            "tools/call",
            json!({"name": "await_review", "arguments": {"review_id": review, "wait_seconds": 45}}),
        )
        .await;
    loop {
        let changed = next_agents_changed(&mut editor).await;
        let second_agent =
            changed["agents"].as_array().and_then(|a| a.iter().find(|a| a["name"] == "claude-2").cloned());
        if second_agent.is_some_and(|a| a["waiting_in"] == "await_review") {
            break;
        }
    }
    let (_, table, _) = sandbox.cli(&["agents"]);
    assert!(table.contains("waiting in await_review"), "{table}");

    let thread = ask(&sandbox, &repo, Some("claude-2"), "src/auth.rs:3", "Is twice right?");
    let answer = tokio::time::timeout(DEADLINE, second.answer(waiting)).await.expect("the wait ends at once");
    let result = &answer["result"];
    assert_eq!(result["structuredContent"]["status"], "pending", "the round goes on: {answer}");
    assert!(texts(result).iter().any(|t| t.contains("Is twice right?") && t.contains(&thread)), "{answer}");
    let delivery = &deliveries(&sandbox, &repo, &thread)[0];
    assert_eq!((&delivery["state"], &delivery["via"]), (&json!("delivered"), &json!("wait")));
    assert_eq!(texts(&first.call("get_feedback_summary", json!({})).await).len(), 1, "claude-1 was not asked");
    assert!(agents(&sandbox).iter().all(|a| a.get("waiting_in").is_none()));

    // A question asked between two waits ends the next one at once.
    let later = ask(&sandbox, &repo, Some("claude-2"), "src/auth.rs:1", "And the name?");
    let answer =
        tokio::time::timeout(DEADLINE, second.call("await_review", json!({"review_id": review, "wait_seconds": 45})))
            .await
            .expect("answered at once");
    assert_eq!(answer["structuredContent"]["status"], "pending", "{answer}");
    assert!(texts(&answer).iter().any(|t| t.contains("And the name?") && t.contains(&later)), "{answer}");
}

#[tokio::test]
async fn a_claude_code_host_with_channels_is_sent_the_question_at_once() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let mut plain = Host::start(&sandbox, &repo, "claude-code", false).await;
    plain.call("get_feedback_summary", json!({})).await;
    let mut channel = Host::start(&sandbox, &repo, "claude-code", true).await;
    channel.call("get_feedback_summary", json!({})).await;
    let listed = agents(&sandbox);
    assert_eq!((&listed[0]["channel"], &listed[1]["channel"]), (&json!(false), &json!(true)), "{listed:#?}");

    let thread = ask(&sandbox, &repo, Some("claude-2"), "src/auth.rs:2", "Where does the token come from?");
    let pushed = channel.notification("notifications/claude/channel").await;
    let content = pushed["params"]["content"].as_str().expect("content");
    assert!(content.contains("Where does the token come from?") && content.contains("src/auth.rs:2"), "{pushed}");
    assert_eq!(pushed["params"]["meta"]["thread_id"], json!(thread));
    let delivery = &deliveries(&sandbox, &repo, &thread)[0];
    assert_eq!((&delivery["state"], &delivery["via"]), (&json!("delivered"), &json!("channel")));
    assert_eq!(texts(&plain.call("get_feedback_summary", json!({})).await).len(), 1, "claude-1 was not asked");
}

#[tokio::test]
async fn a_host_hook_takes_the_messages_of_the_agent_under_the_same_host() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let (first, mut second) = two_claudes(&sandbox, &repo).await;
    let thread = ask(&sandbox, &repo, Some("claude-2"), "src/auth.rs:2-3", "Why twice?");
    let mut hook = sandbox.editor("hook", &[]).await;

    let none = hook.call("messages/take", json!({"host_pid": first.pid()})).await;
    assert_eq!((&none["agent"], &none["messages"]), (&json!("claude-1"), &json!([])), "{none}");
    let ambiguous = hook.call("messages/take", json!({"cwd": repo})).await;
    assert_eq!(ambiguous, json!({"messages": []}), "two agents work there: neither is guessed");
    // Run through a shell, a hook's parent is not the host: its ancestors are tried.
    let taken =
        hook.call("messages/take", json!({"host_pid": 1, "ancestors": [second.pid(), first.pid()], "cwd": repo})).await;
    assert_eq!(taken["agent"], "claude-2", "{taken}");
    let messages = taken["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "{taken}");
    assert_eq!(messages[0]["thread_id"], json!(thread));
    assert!(messages[0]["text"].as_str().is_some_and(|t| t.contains("Why twice?") && t.contains("reply_feedback")));
    let delivery = &deliveries(&sandbox, &repo, &thread)[0];
    assert_eq!((&delivery["state"], &delivery["via"]), (&json!("delivered"), &json!("hook")));
    let again = hook.call("messages/take", json!({"host_pid": second.pid()})).await;
    assert_eq!(again["messages"], json!([]), "taken once");
    // Reading the feedback resource reads the thread.
    let read = second.request("resources/read", json!({"uri": "parley://feedback"})).await;
    assert!(read["result"]["contents"][0]["text"].as_str().is_some_and(|t| t.contains(&thread)), "{read}");
    assert_eq!(deliveries(&sandbox, &repo, &thread)[0]["state"], "read");

    // With one agent left on the repository, the workspace finds it.
    second.quit().await;
    ask(&sandbox, &repo, None, "src/auth.rs:1", "And this?");
    let by_cwd = hook.call("messages/take", json!({"cwd": repo.join("src")})).await;
    assert_eq!(by_cwd["agent"], "claude-1", "{by_cwd}");
    assert_eq!(by_cwd["messages"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_message_to_an_agent_that_has_gone_waits_and_can_be_sent_to_another() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let (mut first, second) = two_claudes(&sandbox, &repo).await;
    let thread = ask(&sandbox, &repo, Some("claude-2"), "src/auth.rs:2", "Still needed?");
    second.quit().await;
    let (_, listing, _) = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert!(listing.contains("to claude-2: waiting; claude-2 is not at work"), "{listing}");
    assert!(listing.contains(&format!("parley ask --resend {thread} --agent NAME")), "{listing}");
    let (_, table, _) = sandbox.cli(&["agents"]);
    assert!(
        table.contains(&format!("claude-2 is not at work; your message waits for it in thread(s) {thread}")),
        "{table}"
    );
    // A new agent is not given the name a message still waits for.
    let mut third = Host::start(&sandbox, &repo, "claude-code", false).await;
    third.call("get_feedback_summary", json!({})).await;
    assert_eq!(names(&agents(&sandbox)), ["claude-1", "claude-3"]);

    let (code, out, err) = cli_in(&sandbox, &repo, &["ask", "--resend", &thread[..8], "--agent", "claude-1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Asked claude-1"), "{out}");
    let told = first.call("get_feedback_summary", json!({})).await;
    assert!(texts(&told).get(1).is_some_and(|n| n.contains("Still needed?")), "{told}");
}

#[tokio::test]
async fn a_message_typed_into_the_agents_terminal_is_one_line_delivered_by_terminal() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    // The host runs in an editor's terminal: its environment names the window.
    let mut host =
        Host::start_env(&sandbox, &repo, "claude-code", json!({}), &[("PARLEY_EDITOR_ID", "vscode-test-1")]).await;
    host.call("get_feedback_summary", json!({})).await;
    let listed = agents(&sandbox);
    assert_eq!(listed[0]["editor_id"], "vscode-test-1", "{listed:#?}");
    // The host stand-in is this test's child: its ancestry starts with this process.
    let ancestors: Vec<u64> =
        listed[0]["host_ancestors"].as_array().expect("host_ancestors").iter().filter_map(Value::as_u64).collect();
    assert_eq!(ancestors.first(), Some(&u64::from(std::process::id())), "{listed:#?}");

    let mut editor = sandbox.editor_with("vscode", Some("vscode-test-1"), &[&repo]).await;
    let refused = editor.request("agent/typed", json!({"thread_id": "zzzz"})).await;
    assert!(refused.error.is_some_and(|e| e.message.contains("zzzz")), "an unknown thread is named");
    let missing = editor.request("agent/typed", json!({})).await;
    assert!(missing.error.is_some_and(|e| e.message.contains("thread_id")), "a missing id is named");

    let thread = ask(&sandbox, &repo, None, "src/auth.rs:2-3", "Why twice?\nAnd is \u{1b}[31mthis\u{7} safe?");
    let preview = editor.call("agent/typed", json!({"thread_id": &thread[..8], "preview": true})).await;
    assert_eq!(deliveries(&sandbox, &repo, &thread)[0]["state"], "waiting", "a preview marks nothing");
    let typed = editor.call("agent/typed", json!({"thread_id": &thread[..8]})).await;
    assert_eq!(preview["text"], typed["text"], "the person confirms the very line typed");
    assert_eq!(typed["agent"], "claude-1", "{typed}");
    let text = typed["text"].as_str().expect("text");
    assert!(!text.chars().any(char::is_control), "one line, nothing a terminal would act on: {text:?}");
    assert!(
        text.contains("asks you about src/auth.rs:2-3") && text.contains("Why twice? And is [31mthis safe?"),
        "{text}"
    );
    assert!(text.contains(&format!("reply_feedback (threadId {thread})")), "{text}");
    let delivery = &deliveries(&sandbox, &repo, &thread)[0];
    assert_eq!((&delivery["state"], &delivery["via"]), (&json!("delivered"), &json!("terminal")));
    assert_eq!(typed["thread"]["deliveries"][0]["via"], "terminal", "{typed}");
    // Typed once: the agent is not told again at the end of its tool answers.
    assert_eq!(texts(&host.call("get_feedback_summary", json!({})).await).len(), 1);
    let again = editor.request("agent/typed", json!({"thread_id": thread})).await;
    let again = again.error.expect("nothing waits any more");
    assert!(again.message.contains("no message in thread") && again.message.contains("ask the agent"), "{again:?}");

    // A message for an agent that has gone is not typed anywhere.
    let second = ask(&sandbox, &repo, None, "src/auth.rs:1", "And this?");
    // Listing subscribes the window to agents/changed: the daemon has seen
    // the host go once it says so (the process ending is not enough).
    editor.call("agents/list", json!({})).await;
    host.quit().await;
    while next_agents_changed(&mut editor).await["agents"].as_array().is_some_and(|a| !a.is_empty()) {}
    let gone = editor.request("agent/typed", json!({"thread_id": second})).await;
    let gone = gone.error.expect("the agent has gone");
    assert!(gone.message.contains("claude-1 is not at work") && gone.message.contains("another agent"), "{gone:?}");
    assert_eq!(deliveries(&sandbox, &repo, &second)[0]["state"], "waiting");
}

#[tokio::test]
async fn bad_questions_say_what_to_do() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let elsewhere = sandbox.repo("elsewhere", &[("notes.txt", "hello\n")]);
    let internal = ["agent/ask", "agents/list", "get_feedback", "messages/take"];
    let refused = |args: &[&str], cwd: &Path, expected: &[&str]| {
        let (code, out, err) = cli_in(&sandbox, cwd, args);
        assert_ne!(code, 0, "{args:?} should fail: {out}");
        for part in expected {
            assert!(err.contains(part), "{args:?}: {err:?} should say {part:?}");
        }
        for name in internal {
            assert!(!err.contains(name), "{args:?}: {err:?} names {name}");
        }
    };
    refused(&["ask", "src/auth.rs:2", "Why?"], &repo, &["no agent is at work", "start one in", "parley-mcp"]);
    let (_, _, err) = cli_in(&sandbox, &repo, &["ask", "src/auth.rs:2", "Why?"]);
    assert!(!err.contains("--agent"), "no agent to choose from: {err}");
    let (mut first, mut second) = two_claudes(&sandbox, &repo).await;
    refused(&["ask", "src/auth.rs:2", "Why?"], &repo, &["2 agents are at work", "claude-1, claude-2", "--agent"]);
    refused(
        &["ask", "--agent", "codex-9", "src/auth.rs:2", "Why?"],
        &repo,
        &["no agent named codex-9", "claude-1, claude-2"],
    );
    refused(&["ask", "--agent", "claude-1", "src/auth.rs", "Why?"], &repo, &["FILE:LINE"]);
    refused(&["ask", "--agent", "claude-1", "src/auth.rs:0", "Why?"], &repo, &["FILE:LINE"]);
    refused(&["ask", "--agent", "claude-1", "src/nope.rs:2", "Why?"], &repo, &["not a file"]);
    refused(&["ask", "--agent", "claude-1", "src/auth.rs:2", "  "], &repo, &["the question is empty"]);
    refused(&["ask", "--agent", "claude-1", "src/auth.rs:2-1", "Why?"], &repo, &["FILE:LINE"]);
    refused(&["ask", "--agent", "claude-1", "src/auth.rs:40", "Why?"], &repo, &["outside"]);
    let outside = elsewhere.join("notes.txt");
    refused(
        &["ask", "--agent", "claude-1", &format!("{}:1", outside.display()), "Why?"],
        &repo,
        &["outside claude-1's workspace"],
    );
    refused(&["ask", "--resend", "zzzz", "--agent", "claude-1"], &repo, &["zzzz"]);
    // Nothing was asked of either agent.
    assert_eq!(texts(&first.call("get_feedback_summary", json!({})).await).len(), 1);
    assert_eq!(texts(&second.call("get_feedback_summary", json!({})).await).len(), 1);
}
