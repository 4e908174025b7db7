//! Reviews keep their history, through the real daemon, shim and CLI on a
//! real git repository: a walkthrough an agent presented and the review a
//! round rendered over it both stay readable through the hub, the CLI and
//! the MCP resources, each labelled with who made it, across a restart.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use parley_tests::{DEADLINE, Sandbox, git, text_of};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ReadResourceRequestParams,
    ResourceContents,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};

const WALKTHROUGH: &str = "# Walkthrough: the answer\n\nThe answer is computed in [`src/lib.rs:2`][].\n";

/// A repository with one commit and an uncommitted change, and the stand-in
/// reviewer configured in the user's config file.
fn project(sandbox: &Sandbox) -> PathBuf {
    let repo = sandbox.repo("proj", &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")]);
    std::fs::write(repo.join(".gitignore"), ".fake-reviewer/\n").expect("gitignore");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    let reviewer = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake_reviewer.py");
    let dir = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&dir).expect("config dir");
    let config = format!("[review]\nreviewer = [\"python3\", {:?}, \"good\"]\n", reviewer.display().to_string());
    std::fs::write(dir.join("config.toml"), config).expect("config");
    std::fs::write(repo.join("src/lib.rs"), "pub fn answer() -> u32 {\n    41 + 1\n}\n").expect("edit");
    std::fs::canonicalize(&repo).expect("real path")
}

/// An MCP client that introduces itself as `claude-code`.
#[derive(Clone)]
struct Named;

impl ClientHandler for Named {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("claude-code", "1.0.0"))
    }
}

async fn agent(sandbox: &Sandbox, cwd: &Path) -> RunningService<RoleClient, Named> {
    let mut command = tokio::process::Command::from(sandbox.command("parley-mcp"));
    command.current_dir(cwd);
    let (transport, _) =
        TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().expect("start parley-mcp");
    tokio::time::timeout(DEADLINE, Named.serve(transport)).await.expect("handshake in time").expect("handshake")
}

async fn call_ok(agent: &RunningService<RoleClient, Named>, tool: &str, arguments: Value) -> Value {
    let Value::Object(arguments) = arguments else { panic!("tool arguments must be an object") };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    let result = agent.call_tool(params).await.expect("tool call");
    assert_ne!(result.is_error, Some(true), "{tool} failed: {}", text_of(&result));
    result.structured_content.expect("structured content")
}

async fn read(agent: &RunningService<RoleClient, Named>, uri: &str) -> Result<String, String> {
    let read = agent.read_resource(ReadResourceRequestParams::new(uri)).await.map_err(|e| e.to_string())?;
    match &read.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => Ok(text.clone()),
        other => panic!("{uri} is not text: {other:?}"),
    }
}

fn cli(sandbox: &Sandbox, repo: &Path, args: &[&str]) -> (i32, String) {
    let out = sandbox.command("parley").current_dir(repo).args(args).output().expect("run parley");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// What the CLI shows of the history after the walkthrough and the round.
fn check_cli(sandbox: &Sandbox, repo: &Path, round_label: &str) {
    let (code, out) = cli(sandbox, repo, &["review", "show", "--history"]);
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with(['1', '2'])).collect();
    assert_eq!(lines.len(), 2, "two revisions, newest first: {out}");
    assert!(lines[0].trim_start().starts_with('2') && lines[0].contains(round_label), "{out}");
    assert!(lines[1].contains("presented by claude-code") && lines[1].contains("Walkthrough: the answer"), "{out}");

    let (code, out) = cli(sandbox, repo, &["review", "show", "--revision", "1"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("revision 1 · presented by claude-code"), "{out}");
    assert!(out.contains("The answer is computed in"), "the walkthrough itself: {out}");

    let (code, out) = cli(sandbox, repo, &["review", "show"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("revision 2 · {round_label}")), "the current review is the round's: {out}");

    let (code, out) = cli(sandbox, repo, &["review", "show", "--revision", "7"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("has no revision 7: revisions 1 to 2 are kept"), "{out}");
}

#[tokio::test]
async fn a_walkthrough_survives_the_round_that_replaced_it() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let mut daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let claude = agent(&sandbox, &repo).await;

    call_ok(&claude, "present_review", json!({"content": WALKTHROUGH, "baseUri": repo})).await;
    let round = call_ok(&claude, "request_review", json!({"summary": "Compute the answer"})).await;
    let id = round["review_id"].as_str().expect("review id").to_owned();
    let round_label = format!("round 1 of review {id}");

    // The hub: the history lists both, newest first, with their sources.
    let history = window.call("review/history", json!({"workspace": repo})).await;
    let revisions = history["revisions"].as_array().expect("revisions");
    assert_eq!(revisions.len(), 2, "{history}");
    assert_eq!(revisions[0]["revision"], json!(2));
    assert_eq!(revisions[0]["source"]["kind"], json!("round"));
    assert_eq!(revisions[0]["source"]["label"], json!(round_label));
    assert_eq!(revisions[0]["source"]["review_id"], json!(id));
    assert_eq!(revisions[1]["revision"], json!(1));
    assert_eq!(
        revisions[1]["source"],
        json!({"kind": "agent", "label": "presented by claude-code", "client": "claude-code"})
    );
    assert_eq!(revisions[1]["title"], json!("Walkthrough: the answer"));
    assert_eq!(revisions[1]["bytes"], json!(WALKTHROUGH.len()));

    let old = window.call("review/get", json!({"workspace": repo, "revision": 1})).await;
    assert_eq!(old["reviews"][0]["content"], json!(WALKTHROUGH));
    assert_eq!(old["reviews"][0]["source"]["kind"], json!("agent"));
    assert_eq!(old["reviews"][0]["references"][0]["line"], json!(2), "an old revision keeps its references");
    let current = window.call("review/get", json!({"workspace": repo})).await;
    assert_eq!(current["reviews"][0]["revision"], json!(2));
    assert_eq!(current["reviews"][0]["source"]["label"], json!(round_label));
    let missing = window.request("review/get", json!({"workspace": repo, "revision": 9})).await;
    let error = missing.error.expect("an unknown revision is an error");
    assert!(error.message.contains("revisions 1 to 2 are kept"), "{}", error.message);
    assert_eq!(error.code, -32005, "not found");

    // MCP: the latest stays parley://review; the older one is readable too.
    let latest = read(&claude, "parley://review").await.expect("read");
    assert!(latest.contains(&format!("# Review {id}, round 1")), "{latest}");
    assert_eq!(read(&claude, "parley://review/1").await.expect("read"), WALKTHROUGH);
    let listed: Value = serde_json::from_str(&read(&claude, "parley://review/history").await.expect("read"))
        .expect("the history is JSON");
    assert_eq!(listed[0]["source"]["label"], json!(round_label));
    assert_eq!(listed[1]["source"]["label"], json!("presented by claude-code"));
    let gone = read(&claude, "parley://review/5").await.expect_err("no revision 5");
    assert!(gone.contains("no revision 5"), "{gone}");
    let templates = claude.list_resource_templates(None).await.expect("templates");
    assert!(templates.resource_templates.iter().any(|t| t.uri_template == "parley://review/{revision}"));

    check_cli(&sandbox, &repo, &round_label);

    // A restart keeps both revisions and their sources.
    drop(claude);
    drop(window);
    assert_eq!(daemon.terminate(), Some(0), "the daemon stops cleanly");
    let _daemon = sandbox.start_daemon();
    check_cli(&sandbox, &repo, &round_label);
    let claude = agent(&sandbox, &repo).await;
    assert_eq!(read(&claude, "parley://review/1").await.expect("read"), WALKTHROUGH);
}
