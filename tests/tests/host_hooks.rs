//! A person's messages reaching an agent through its host's hooks, with the
//! hosts' own processes in their places: a host stand-in (the official
//! Python SDK, `tests/clients/py_host.py`) runs the real `parley-mcp` as its
//! child and runs `parley hook …` through a shell as its child too, fed the
//! JSON Claude Code and Codex send. Covered: `claude-post-tool` handing the
//! question to only the agent it was asked of (two agents of one host kind
//! on one repository), once; `claude-stop` keeping the turn going while a
//! message waits and not when the turn already goes on (`stop_hook_active`);
//! `claude-prompt` adding it to the next prompt; Codex's `codex-stop`
//! continuing a turn with no plan; each delivery recorded `hook`; bad input.

use std::path::Path;
use std::process::Stdio;

use parley_tests::{DEADLINE, Sandbox, bin, repo_root, test_dep};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::agents::project;

/// A host stand-in: the Python SDK running the shim, and hooks, as its children.
struct Host {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    pid: u32,
}

impl Host {
    async fn start(sandbox: &Sandbox, repo: &Path, client: &str) -> Host {
        let shim = sandbox.command("parley-mcp");
        let mut command = tokio::process::Command::new(test_dep("py/bin/python"));
        for (key, value) in shim.get_envs() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
            .arg(repo_root().join("tests/clients/py_host.py"))
            .arg(bin("parley-mcp"))
            .arg(bin("parley"))
            .arg(repo)
            .arg(client)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("start the Python host stand-in");
        let stdin = child.stdin.take().expect("piped stdin");
        let lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let mut host = Host { _child: child, stdin, lines, pid: 0 };
        let ready = host.next().await;
        assert_eq!(ready["ready"], true, "{ready}");
        host.pid = ready["pid"].as_u64().expect("the host's pid") as u32;
        host
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(DEADLINE, self.lines.next_line())
            .await
            .expect("the host stand-in did not answer in time")
            .expect("read the host stand-in")
            .expect("the host stand-in ended");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON from the host stand-in ({e}): {line}"))
    }

    async fn send(&mut self, command: Value) -> Value {
        self.stdin.write_all(format!("{command}\n").as_bytes()).await.expect("write to the host stand-in");
        self.next().await
    }

    /// Calls an MCP tool through the shim: the result's text.
    async fn call(&mut self, tool: &str, args: Value) -> String {
        let answer = self.send(json!({ "call": tool, "args": args })).await;
        assert_eq!(answer["is_error"], false, "{tool}: {answer}");
        answer["text"].as_str().unwrap_or_default().to_owned()
    }

    /// Runs `parley hook NAME` as the host does: (exit code, stdout, stderr).
    async fn hook(&mut self, name: &str, input: Value) -> (i64, String, String) {
        let answer = self.send(json!({ "hook": name, "input": input })).await;
        let text = |key: &str| answer[key].as_str().unwrap_or_default().to_owned();
        (answer["code"].as_i64().unwrap_or(-1), text("stdout"), text("stderr"))
    }

    /// Runs a hook that must answer with JSON on stdout.
    async fn hook_json(&mut self, name: &str, input: Value) -> Value {
        let (code, out, err) = self.hook(name, input).await;
        assert_eq!(code, 0, "parley hook {name}: {err}");
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("parley hook {name} printed no JSON ({e}): {out}"))
    }
}

/// Claude Code's `PostToolUse` input after a Bash call.
fn post_tool_use(repo: &Path) -> Value {
    json!({
        "session_id": "5d9c7a12-3b4e-4f60-9a8b-1c2d3e4f5a6b",
        "transcript_path": "/home/ana/.claude/projects/shop/5d9c7a12.jsonl",
        "cwd": repo,
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": { "command": "cargo test", "description": "Run the tests" },
        "tool_response": { "stdout": "ok", "stderr": "", "interrupted": false, "isImage": false },
        "tool_use_id": "toolu_01ABCdef"
    })
}

/// Claude Code's `Stop` input.
fn claude_stop(repo: &Path, active: bool) -> Value {
    json!({
        "session_id": "5d9c7a12-3b4e-4f60-9a8b-1c2d3e4f5a6b",
        "transcript_path": "/home/ana/.claude/projects/shop/5d9c7a12.jsonl",
        "cwd": repo,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": active
    })
}

/// Claude Code's `UserPromptSubmit` input.
fn prompt_submit(repo: &Path) -> Value {
    json!({
        "session_id": "5d9c7a12-3b4e-4f60-9a8b-1c2d3e4f5a6b",
        "transcript_path": "/home/ana/.claude/projects/shop/5d9c7a12.jsonl",
        "cwd": repo,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "carry on"
    })
}

/// Codex's `Stop` input for a turn that ended without a plan.
fn codex_stop(repo: &Path) -> Value {
    json!({
        "session_id": "019a8f2c-4b7e-7d31-a0c2-5e9f1b3d7a64",
        "turn_id": "turn-7",
        "transcript_path": null,
        "cwd": repo,
        "hook_event_name": "Stop",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "stop_hook_active": false,
        "last_assistant_message": "The tests pass now."
    })
}

/// `parley agents --json`: the name of the agent whose host is `pid`.
fn name_of(sandbox: &Sandbox, pid: u32) -> String {
    let (code, out, err) = sandbox.cli(&["agents", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let listed: Value = serde_json::from_str(&out).expect("agents --json prints JSON");
    let agents = listed["agents"].as_array().cloned().unwrap_or_default();
    let agent = agents.iter().find(|a| a["host_pid"] == pid).unwrap_or_else(|| panic!("host {pid} in {agents:?}"));
    agent["name"].as_str().expect("a name").to_owned()
}

/// `parley ask --agent NAME` in `repo`: the thread's id.
fn ask(sandbox: &Sandbox, repo: &Path, agent: &str, question: &str) -> String {
    let out = sandbox
        .command("parley")
        .args(["ask", "--json", "--agent", agent, "src/auth.rs:2-3", question])
        .current_dir(repo)
        .stdin(Stdio::null())
        .output()
        .expect("run parley ask");
    assert!(out.status.success(), "parley ask: {}", String::from_utf8_lossy(&out.stderr));
    let asked: Value = serde_json::from_slice(&out.stdout).expect("ask --json prints JSON");
    asked["thread"]["id"].as_str().expect("a thread id").to_owned()
}

/// How thread `id`'s messages stand: (state, via) each.
fn deliveries(sandbox: &Sandbox, repo: &Path, id: &str) -> Vec<(String, String)> {
    let out = sandbox
        .command("parley")
        .args(["feedback", "list", "--all", "--json"])
        .current_dir(repo)
        .stdin(Stdio::null())
        .output()
        .expect("run parley feedback list");
    let threads: Vec<Value> = serde_json::from_slice(&out.stdout).expect("feedback list --json prints a list");
    let thread = threads.iter().find(|t| t["id"] == id).unwrap_or_else(|| panic!("thread {id} in {threads:?}"));
    let field = |d: &Value, key: &str| d[key].as_str().unwrap_or_default().to_owned();
    thread["deliveries"].as_array().into_iter().flatten().map(|d| (field(d, "state"), field(d, "via"))).collect()
}

#[tokio::test]
async fn a_question_reaches_only_the_chosen_claude_through_its_hooks() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = project(&sandbox);
    let mut first = Host::start(&sandbox, &repo, "claude-code").await;
    first.call("get_feedback_summary", json!({})).await;
    let mut second = Host::start(&sandbox, &repo, "claude-code").await;
    second.call("get_feedback_summary", json!({})).await;
    let chosen = name_of(&sandbox, second.pid);
    assert_ne!(chosen, name_of(&sandbox, first.pid));

    let id = ask(&sandbox, &repo, &chosen, "Why is the token read twice?");
    assert_eq!(deliveries(&sandbox, &repo, &id), [("waiting".to_owned(), String::new())]);

    // The other agent's host hears nothing, whichever of its hooks runs.
    assert_eq!(first.hook_json("claude-post-tool", post_tool_use(&repo)).await, json!({}));
    assert_eq!(first.hook_json("claude-stop", claude_stop(&repo, false)).await, json!({}));
    assert_eq!(deliveries(&sandbox, &repo, &id), [("waiting".to_owned(), String::new())]);

    // The chosen agent's next tool use hands the question to its model.
    let told = second.hook_json("claude-post-tool", post_tool_use(&repo)).await;
    assert_eq!(told["hookSpecificOutput"]["hookEventName"], "PostToolUse", "{told}");
    let context = told["hookSpecificOutput"]["additionalContext"].as_str().expect("the question as context");
    assert!(context.contains("Why is the token read twice?") && context.contains("src/auth.rs"), "{context}");
    assert!(context.contains(&id[..8]) && context.contains("reply_feedback"), "says how to answer: {context}");
    assert_eq!(deliveries(&sandbox, &repo, &id), [("delivered".to_owned(), "hook".to_owned())]);
    // Once: the next tool use has nothing more.
    assert_eq!(second.hook_json("claude-post-tool", post_tool_use(&repo)).await, json!({}));

    // A question waiting as the turn ends keeps it going, unless it already
    // goes on because of a Stop hook.
    let again = ask(&sandbox, &repo, &chosen, "And is read_token cached?");
    assert_eq!(second.hook_json("claude-stop", claude_stop(&repo, true)).await, json!({}));
    assert_eq!(deliveries(&sandbox, &repo, &again), [("waiting".to_owned(), String::new())]);
    let stop = second.hook_json("claude-stop", claude_stop(&repo, false)).await;
    assert_eq!(stop["decision"], "block", "{stop}");
    assert!(stop["reason"].as_str().is_some_and(|r| r.contains("is read_token cached?")), "{stop}");
    assert_eq!(stop.as_object().map(|o| o.len()), Some(2), "only decision and reason: {stop}");

    // The person's next prompt carries a question asked meanwhile.
    let third = ask(&sandbox, &repo, &chosen, "Could it take the token as an argument?");
    let prompt = second.hook_json("claude-prompt", prompt_submit(&repo)).await;
    assert_eq!(prompt["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit", "{prompt}");
    let context = prompt["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("take the token as an argument"), "{prompt}");
    assert_eq!(deliveries(&sandbox, &repo, &third), [("delivered".to_owned(), "hook".to_owned())]);

    // Answered through the agent's own tools as any thread.
    second.call("reply_feedback", json!({ "threadId": id, "body": "The second read was a leftover; removed." })).await;
    assert_eq!(deliveries(&sandbox, &repo, &id)[0].0, "answered");
}

#[tokio::test]
async fn a_codex_turn_without_a_plan_goes_on_with_a_waiting_question() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = project(&sandbox);
    let mut codex = Host::start(&sandbox, &repo, "codex-mcp-client").await;
    codex.call("get_feedback_summary", json!({})).await;
    let name = name_of(&sandbox, codex.pid);
    assert!(name.starts_with("codex"), "{name}");

    assert_eq!(codex.hook_json("codex-stop", codex_stop(&repo)).await, json!({}), "nothing waits: the turn ends");
    let id = ask(&sandbox, &repo, &name, "Why is the token read twice?");
    let stop = codex.hook_json("codex-stop", codex_stop(&repo)).await;
    assert_eq!(stop["decision"], "block", "{stop}");
    assert!(stop["reason"].as_str().is_some_and(|r| r.contains("token read twice")), "{stop}");
    assert_eq!(deliveries(&sandbox, &repo, &id), [("delivered".to_owned(), "hook".to_owned())]);
    let mut active = codex_stop(&repo);
    active["stop_hook_active"] = json!(true);
    ask(&sandbox, &repo, &name, "One more thing?");
    assert_eq!(codex.hook_json("codex-stop", active).await, json!({}), "a turn the hook continued may end");
}

#[tokio::test]
async fn bad_input_to_the_delivery_hooks_gives_the_host_nothing_to_read() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = project(&sandbox);
    let mut host = Host::start(&sandbox, &repo, "claude-code").await;
    let mut wrong_event = post_tool_use(&repo);
    wrong_event["hook_event_name"] = json!("Stop");
    let mut relative = claude_stop(&repo, false);
    relative["cwd"] = json!("shop");
    let cases = [
        ("claude-post-tool", json!("not an object"), "not an object"),
        ("claude-post-tool", wrong_event, "register it for PostToolUse"),
        ("claude-stop", relative, "cwd is not an absolute path"),
        ("claude-prompt", json!({ "hook_event_name": "UserPromptSubmit" }), "cwd is missing"),
    ];
    for (hook, input, why) in cases {
        let (code, out, err) = host.hook(hook, input).await;
        assert_eq!(code, 1, "{hook}: {err}");
        assert!(out.is_empty(), "{hook} printed {out}");
        assert!(err.contains(why) && err.contains("the host goes on without Parley"), "{hook}: {err}");
    }
}
