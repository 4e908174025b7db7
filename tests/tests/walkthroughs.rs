//! Walkthroughs through the real daemon and shim: `present_walkthrough`
//! placing comments as threads by the presenting agent (lines, a search, a
//! symbol found by the workspace search standing in for an editor), and
//! saying at once which it could not place and why (a missing file, a line
//! past the end, an ambiguous search with its candidates), a gitdiff range
//! git does not know, refusals of the XML form and of an unclosed fence;
//! the walkthrough read by an editor (`walkthrough/get`, `walkthrough/list`)
//! and after a restart; presenting again replacing the comments nobody
//! answered and keeping the answered; a click of an action reaching the
//! agent with its receipts moving on, and one waiting for an agent that has
//! gone sent to another, which it then follows.

use std::path::{Path, PathBuf};

use parley_tests::{Sandbox, git};
use serde_json::{Value, json};

const AUTH: &str = "fn login() {\n    let token = read_token();\n    let again = read_token();\n}\n";
const TOKEN: &str = "pub fn read_token() -> String {\n    String::from(\"t\")\n}\n";

fn project(sandbox: &Sandbox) -> PathBuf {
    let repo = sandbox.repo("shop", &[("src/auth.rs", AUTH)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("src/token.rs"), TOKEN).expect("write");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "token"]);
    repo
}

fn comment(location: &str, body: &str) -> String {
    format!("```comment\nlocation: {location}\n\n{body}\n```\n\n")
}

fn walkthrough(comments: &[(&str, &str)]) -> String {
    let mut doc = String::from(
        "# Token refactor\n\nThe token now comes from [`src/token.rs:1`][].\n\n```mermaid\nflowchart TD\n  login --> read_token\n```\n\n",
    );
    for (location, body) in comments {
        doc.push_str(&comment(location, body));
    }
    doc.push_str("```gitdiff\nrange: HEAD~1..HEAD\n```\n\n```gitdiff\nrange: nowhere..HEAD\n```\n\n```action\nbutton: Run the tests\n\nPlease run the tests and tell me what fails.\n```\n");
    doc
}

fn block(walkthrough: &Value, index: usize) -> Value {
    walkthrough["blocks"]
        .as_array()
        .expect("blocks")
        .iter()
        .find(|b| b["index"] == json!(index))
        .cloned()
        .expect("the block")
}

async fn get(editor: &mut parley_tests::Editor, repo: &Path) -> Value {
    editor.call("walkthrough/get", json!({"workspace": repo})).await["walkthrough"].clone()
}

#[tokio::test]
async fn a_walkthrough_places_its_comments_as_threads_and_says_which_it_could_not() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let agent = sandbox.agent(&repo).await;
    let content = walkthrough(&[
        ("src/auth.rs:2-3", "Both reads happen here."),
        ("findDefinition(`read_token`)", "The one place the token is read."),
        ("search(\"src\", \"read_token\\(\\)\")", "Every use."),
        ("src/missing.rs:1", "Gone."),
        ("src/auth.rs:40", "Past the end."),
    ]);
    let answer = agent.call_ok("present_walkthrough", json!({"content": content})).await;
    assert_eq!(answer["placed"], 2, "{answer:#}");
    let unplaced = answer["unplaced"].as_array().expect("unplaced");
    let by_index = |i: usize| unplaced.iter().find(|u| u["index"] == json!(i)).cloned().unwrap_or_default();
    assert!(by_index(3)["reason"].as_str().unwrap_or("").contains("matches 3 places"), "{answer:#}");
    assert_eq!(by_index(3)["candidates"], json!(["src/auth.rs:2", "src/auth.rs:3", "src/token.rs:1"]));
    assert!(by_index(4)["reason"].as_str().unwrap_or("").contains("does not exist"), "{answer:#}");
    assert!(by_index(5)["reason"].as_str().unwrap_or("").contains("line 40 is past the end"), "{answer:#}");
    let problems = answer["problems"].to_string();
    assert!(problems.contains("block 7") && problems.contains("nowhere"), "{answer:#}");

    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let shown = get(&mut editor, &repo).await;
    assert_eq!(shown["id"], answer["walkthroughId"]);
    assert_eq!(shown["title"], "Token refactor");
    assert_eq!(shown["revision"], 1);
    assert!(shown["head"].as_str().is_some_and(|h| h.len() == 40), "{shown:#}");
    assert_eq!(block(&shown, 0)["kind"], "mermaid");
    let definition = block(&shown, 2);
    assert_eq!(definition["places"][0]["path"], "src/token.rs");
    assert_eq!(definition["places"][0]["start_line"], 0);
    assert!(block(&shown, 6)["problem"].is_null(), "HEAD~1..HEAD is known: {shown:#}");
    assert!(block(&shown, 7)["problem"].as_str().is_some_and(|p| p.contains("nowhere")));
    assert_eq!(shown["parts"][0]["kind"], "markdown");
    assert!(shown["references"][0]["problem"].is_null(), "{shown:#}");

    // The placed comments are threads by the agent, marked as the walkthrough's.
    let threads = editor.call("feedback/list", json!({"workspace": repo})).await["threads"].clone();
    let threads = threads.as_array().expect("threads");
    assert_eq!(threads.len(), 2, "{threads:#?}");
    let on_auth = threads.iter().find(|t| t["path"] == "src/auth.rs").expect("the thread on auth.rs");
    assert_eq!(on_auth["walkthrough"]["block_index"], 1);
    assert_eq!(on_auth["walkthrough"]["id"], answer["walkthroughId"]);
    assert_eq!(on_auth["comments"][0]["body"], "Both reads happen here.");
    assert_eq!((&on_auth["range"]["start"]["line"], &on_auth["range"]["end"]["line"]), (&json!(1), &json!(2)));
    let listed = editor.call("walkthrough/list", json!({})).await;
    assert_eq!(listed["walkthroughs"][0]["placed"], 2, "{listed:#}");
    assert_eq!(listed["walkthroughs"][0]["unplaced"], 3, "{listed:#}");

    // The same at the terminal: each comment where it is, or why it is not.
    let folder = repo.to_str().expect("a text path");
    let (code, shown, stderr) = sandbox.cli(&["walkthrough", "show", "--workspace", folder]);
    assert_eq!(code, 0, "{stderr}");
    assert!(shown.starts_with("Token refactor (walkthrough "), "{shown}");
    assert!(shown.contains("comment on src/auth.rs:2-3:\n    Both reads happen here."), "{shown}");
    assert!(shown.contains("comment on src/token.rs:1:"), "{shown}");
    assert!(
        shown.contains("NOT PLACED") && shown.contains("(could be src/auth.rs:2, src/auth.rs:3, src/token.rs:1)"),
        "{shown}"
    );
    assert!(shown.contains("diagram (mermaid):"), "{shown}");
    let (code, listed, stderr) = sandbox.cli(&["walkthrough", "list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(listed.contains("Token refactor") && listed.contains("2 placed, 3 not placed"), "{listed}");
}

#[tokio::test]
async fn the_xml_form_an_unclosed_fence_and_an_empty_walkthrough_are_refused_and_nothing_is_stored() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let agent = sandbox.agent(&repo).await;
    let error = agent
        .call_err(
            "present_walkthrough",
            json!({"content": "# T\n\n<comment location=\"src/auth.rs:1\">Hi</comment>\n"}),
        )
        .await;
    assert!(error.contains("old XML form") && error.contains("```comment"), "{error}");
    let error = agent
        .call_err(
            "present_walkthrough",
            json!({"content": "# T\n\n```comment\nlocation: src/auth.rs:1\n\nNever closed.\n"}),
        )
        .await;
    assert!(error.contains("not closed") && error.contains("line 3"), "{error}");
    let error = agent.call_err("present_walkthrough", json!({"content": "  "})).await;
    assert!(error.contains("empty"), "{error}");
    // Ordinary code blocks stay code.
    let answer =
        agent.call_ok("present_walkthrough", json!({"content": "# Code\n\n```rust\nfn main() {}\n```\n"})).await;
    assert_eq!((answer["placed"].clone(), answer["unplaced"].clone()), (json!(0), json!([])));
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let listed = editor.call("walkthrough/list", json!({})).await;
    assert_eq!(listed["walkthroughs"].as_array().map(Vec::len), Some(1), "only the good one: {listed:#}");
}

#[tokio::test]
async fn presenting_again_replaces_unanswered_comments_keeps_answered_ones_and_survives_a_restart() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let mut daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let first = walkthrough(&[("src/auth.rs:2", "First read."), ("src/auth.rs:3", "Second read.")]);
    let answer = agent.call_ok("present_walkthrough", json!({"content": first, "title": "Tokens"})).await;
    let id = answer["walkthroughId"].as_str().expect("id").to_owned();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let threads = editor.call("feedback/list", json!({"workspace": repo})).await["threads"].clone();
    let second_read =
        threads.as_array().expect("threads").iter().find(|t| t["range"]["start"]["line"] == 2).expect("thread")["id"]
            .as_str()
            .expect("id")
            .to_owned();
    editor.call("feedback/reply", json!({"thread_id": second_read, "body": "Why twice?", "author": "ana"})).await;

    let again = walkthrough(&[("src/token.rs:1", "Where it is read now.")]);
    let answer = agent.call_ok("present_walkthrough", json!({"content": again, "title": "Tokens"})).await;
    assert_eq!((answer["walkthroughId"].as_str(), &answer["revision"]), (Some(id.as_str()), &json!(2)));
    let open = editor.call("feedback/list", json!({"workspace": repo})).await["threads"].clone();
    let mut open: Vec<(String, String)> = open
        .as_array()
        .expect("threads")
        .iter()
        .map(|t| {
            (t["path"].as_str().unwrap_or("").to_owned(), t["comments"][0]["body"].as_str().unwrap_or("").to_owned())
        })
        .collect();
    open.sort();
    assert_eq!(
        open,
        [
            ("src/auth.rs".to_owned(), "Second read.".to_owned()),
            ("src/token.rs".to_owned(), "Where it is read now.".to_owned())
        ],
        "the answered comment stays, the unanswered one went"
    );

    drop(editor);
    drop(agent);
    assert_eq!(daemon.terminate(), Some(0), "the daemon stops cleanly");
    let _daemon = sandbox.start_daemon();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let shown = get(&mut editor, &repo).await;
    assert_eq!((&shown["id"], &shown["revision"]), (&json!(id), &json!(2)), "{shown:#}");
    let old = editor.call("walkthrough/get", json!({"id": &id[..8], "revision": 1})).await["walkthrough"].clone();
    assert_eq!(block(&old, 1)["body"], "First read.", "{old:#}");
}

#[tokio::test]
async fn a_click_reaches_the_presenting_agent_and_its_receipt_moves_on() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let agent = sandbox.agent(&repo).await;
    let answer = agent.call_ok("present_walkthrough", json!({"content": walkthrough(&[])})).await;
    let id = answer["walkthroughId"].as_str().expect("id").to_owned();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let refused = editor.request("walkthrough/act", json!({"id": id, "block_index": 0})).await;
    assert!(refused.error.is_some_and(|e| e.message.contains("not an action")));
    let clicked = editor.call("walkthrough/act", json!({"id": id, "block_index": 3, "author": "ana"})).await;
    assert_eq!(clicked["click"]["state"], "waiting", "{clicked:#}");

    let told = agent.call("get_feedback_summary", json!({})).await;
    let texts: Vec<String> = told.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    let note = texts.last().cloned().unwrap_or_default();
    assert!(
        note.contains("ana clicked \"Run the tests\"") && note.contains("Please run the tests and tell me what fails."),
        "{texts:#?}"
    );
    let shown = get(&mut editor, &repo).await;
    let click = &block(&shown, 3)["clicks"][0];
    assert_eq!((&click["state"], &click["via"]), (&json!("delivered"), &json!("tool-answer")), "{shown:#}");
    agent.call("get_feedback_summary", json!({})).await;
    let shown = get(&mut editor, &repo).await;
    assert_eq!(block(&shown, 3)["clicks"][0]["state"], "read", "{shown:#}");
}

#[tokio::test]
async fn at_the_terminal_a_person_clicks_a_button_and_exports_the_walkthrough_as_a_codetour() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let agent = sandbox.agent(&repo).await;
    let content = walkthrough(&[("src/auth.rs:2-3", "Both reads happen here."), ("src/token.rs:1", "The reader.")]);
    let answer = agent.call_ok("present_walkthrough", json!({"content": content})).await;
    let id = answer["walkthroughId"].as_str().expect("id").to_owned();

    // Ids are read by the rule every id follows.
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "act", "zz-top", "5"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("\"zz-top\" is not a walkthrough id"), "{stderr}");
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "act", "0000", "5"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("no walkthrough matches \"0000\"") && stderr.contains("parley walkthrough list"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "act", &id[..6], "0"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("block 0") && stderr.contains("not an action"), "{stderr}");

    let (code, clicked, stderr) = sandbox.cli(&["walkthrough", "act", &id[..6], "5"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        clicked.starts_with("Clicked \"Run the tests\" in walkthrough ") && clicked.contains("waits for"),
        "{clicked}"
    );
    let told = agent.call("get_feedback_summary", json!({})).await;
    let note: Vec<String> = told.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    let note = note.join("\n");
    assert!(note.contains("clicked \"Run the tests\"") && note.contains("tell me what fails"), "{note}");

    // The tour: each placed comment a step on its lines, in order.
    let (code, printed, stderr) = sandbox.cli(&["walkthrough", "export", &id]);
    assert_eq!(code, 0, "{stderr}");
    let tour: Value = serde_json::from_str(&printed).expect("a .tour is JSON");
    assert_eq!(tour["title"], "Token refactor");
    assert_eq!(tour["$schema"], "https://aka.ms/codetour-schema");
    assert!(tour["ref"].as_str().is_some_and(|r| r.len() == 40), "{tour:#}");
    let steps = tour["steps"].as_array().expect("steps");
    assert_eq!((&steps[0]["file"], &steps[0]["line"]), (&json!("src/auth.rs"), &json!(3)), "{tour:#}");
    assert_eq!(steps[0]["selection"]["start"]["line"], 2);
    let intro = steps[0]["description"].as_str().expect("text");
    assert!(intro.starts_with("# Token refactor") && intro.contains("```mermaid"), "{intro}");
    assert!(intro.ends_with("Both reads happen here."), "{intro}");
    assert_eq!((&steps[1]["file"], &steps[1]["line"]), (&json!("src/token.rs"), &json!(1)));
    assert!(steps[2]["description"].as_str().is_some_and(|d| d.contains("\"Run the tests\"")), "{tour:#}");

    let out = repo.join(".tours/tokens.tour");
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "export", &id, "--out", out.to_str().expect("utf-8")]);
    assert_ne!(code, 0, "no .tours folder yet");
    assert!(stderr.contains("cannot write") && stderr.contains("a folder that exists"), "{stderr}");
    std::fs::create_dir(repo.join(".tours")).expect("mkdir");
    let (code, said, stderr) = sandbox.cli(&["walkthrough", "export", &id, "--out", out.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(said.contains("as a CodeTour tour of 3 step(s)"), "{said}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("JSON");
    assert_eq!(written["steps"], tour["steps"]);
}

#[tokio::test]
async fn a_backup_carries_walkthroughs_with_their_waiting_clicks_and_refuses_a_bad_one_whole() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let content = walkthrough(&[("src/auth.rs:2", "The first read.")]);
    let answer = agent.call_ok("present_walkthrough", json!({"content": content})).await;
    let id = answer["walkthroughId"].as_str().expect("id").to_owned();
    let name = agent_name(&sandbox).await;
    drop(agent);
    // The agent has gone; the click waits for it.
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "act", &id, "4"]);
    assert_eq!(code, 0, "{stderr}");
    let backup = sandbox.dir.path().join("backup.json");
    let (code, _, stderr) = sandbox.cli(&["export", backup.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("and 1 walkthrough(s)"), "{stderr}");
    let text = std::fs::read_to_string(&backup).expect("read");
    let export: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(export["walkthroughs"][0]["id"], json!(id), "{export:#}");

    // A record whose comment leads outside its workspace refuses the whole file.
    let other = Sandbox::new();
    let _other_daemon = other.start_daemon();
    let bad = other.dir.path().join("bad.json");
    let (head, walkthroughs) = text.split_once("\"walkthroughs\":[").expect("the walkthroughs");
    let walkthroughs = walkthroughs.replacen("\"path\":\"src/auth.rs\"", "\"path\":\"../../etc/passwd\"", 1);
    std::fs::write(&bad, format!("{head}\"walkthroughs\":[{walkthroughs}")).expect("write");
    let (code, _, stderr) = other.cli(&["import", bad.to_str().expect("utf-8")]);
    assert_ne!(code, 0);
    assert!(stderr.contains("nothing was imported") && stderr.contains("walkthrough 1"), "{stderr}");
    let (_, listed, _) = other.cli(&["walkthrough", "list"]);
    assert!(listed.contains("No walkthrough yet"), "{listed}");

    let (code, said, stderr) = other.cli(&["import", backup.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(said.contains("1 thread(s) and 1 walkthrough(s)"), "{said}");
    let (code, shown, stderr) = other.cli(&["walkthrough", "show", &id[..8], "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let shown = serde_json::from_str::<Value>(&shown).expect("JSON")["walkthrough"].clone();
    assert_eq!(shown["title"], "Token refactor");
    assert_eq!(block(&shown, 4)["clicks"][0]["state"], "waiting", "{shown:#}");
    assert!(block(&shown, 1)["places"][0]["thread_id"].is_string(), "{shown:#}");

    // An agent at work in the other daemon is not given the name the click
    // waits for (nor the click); sent on to it, the click reaches it.
    let agent = other.agent(&repo).await;
    let told = agent.call("get_feedback_summary", json!({})).await;
    let note: Vec<String> = told.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    let there = agent_name(&other).await;
    assert_ne!(there, name, "a new agent does not take the name a click waits for");
    assert!(!note.join("\n").contains("clicked"), "{there} was told: {note:#?}");
    let (code, _, stderr) = other.cli(&["walkthrough", "resend", &id[..8], "--to", &there]);
    assert_eq!(code, 0, "{stderr}");
    let told = agent.call("get_feedback_summary", json!({})).await;
    let note: Vec<String> = told.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    assert!(note.join("\n").contains("clicked \"Run the tests\""), "{there} (was {name}) was told: {note:#?}");
}

async fn agent_name(sandbox: &Sandbox) -> String {
    let mut editor = sandbox.editor("vscode", &[]).await;
    let listed = editor.call("agents/list", json!({})).await;
    listed["agents"][0]["name"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_gitdiffs_exclude_flags_narrow_the_diff_it_shows_or_are_refused_saying_why() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    std::fs::write(repo.join("src/token.rs"), format!("{TOKEN}// unstaged\n")).expect("edit");
    let agent = sandbox.agent(&repo).await;
    let gitdiff = |range: &str, flags: &str| format!("```gitdiff\nrange: {range}\n{flags}```\n\n");
    let content = [
        "# Diffs\n\n".to_owned(),
        gitdiff("working", "exclude_staged: true\n"),
        gitdiff("working", "exclude_staged: true\nexclude_unstaged: true\n"),
        gitdiff("HEAD~1..HEAD", "exclude_staged: true\nexclude_unstaged: true\n"),
        gitdiff("HEAD~1", "exclude_unstaged: true\n"),
        gitdiff("HEAD~1", "exclude_staged: true\nexclude_unstaged: true\n"),
        gitdiff("working", "exclude_unstaged: true\n"),
    ]
    .concat();
    let answer = agent.call_ok("present_walkthrough", json!({"content": content})).await;
    let problems = answer["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 3, "{answer:#}");
    assert!(problems[0].as_str().is_some_and(|p| p.starts_with("block 1:") && p.contains("leaves nothing to show")));
    assert!(problems[1].as_str().is_some_and(|p| p.starts_with("block 3:") && p.contains("write `HEAD~1..HEAD`")));
    assert!(
        problems[2].as_str().is_some_and(|p| p.starts_with("block 5:") && p.contains("holds no change now")),
        "nothing is staged: {answer:#}"
    );

    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let shown = get(&mut editor, &repo).await;
    let scope = |i: usize| block(&shown, i)["scope"].clone();
    assert_eq!(scope(0), "unstaged", "{shown:#}");
    assert!(scope(1).is_null() && scope(3).is_null() && scope(5).is_null(), "{shown:#}");
    assert_eq!(scope(2), "HEAD~1..HEAD", "a range of commits holds neither: {shown:#}");
    assert_eq!(scope(4), "HEAD~1..HEAD", "a commit without both is its commits: {shown:#}");
    let folder = repo.to_str().expect("a text path");
    let (code, printed, stderr) = sandbox.cli(&["walkthrough", "show", "--workspace", folder]);
    assert_eq!(code, 0, "{stderr}");
    assert!(printed.contains("[0] the change working (`git diff`)"), "{printed}");
    assert!(printed.contains("[4] the change HEAD~1 (`git diff HEAD~1..HEAD`)"), "{printed}");
}

/// The Python SDK's scenario (tests/clients/py_walkthrough.py): every block
/// kind, good and bad locations, the comments read back as threads, and a
/// person's reply and click reaching the agent. The SDK is installed by
/// `scripts/test` into `.test-deps/`; when it is missing this test fails.
#[tokio::test]
async fn the_python_sdk_presents_a_walkthrough_and_hears_the_reply_and_the_click() {
    let sandbox = Sandbox::new();
    let main = "fn main() {\n    greet();\n}\n";
    let repo = sandbox.repo("ws", &[("src/main.rs", "fn main() {\n}\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("src/main.rs"), main).expect("write");
    std::fs::write(repo.join("src/greet.rs"), "pub fn greet() {\n    println!(\"greet\");\n}\n").expect("write");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "greet"]);
    let _daemon = sandbox.start_daemon();
    let mut command = tokio::process::Command::new(parley_tests::test_dep("py/bin/python"));
    command
        .arg(parley_tests::repo_root().join("tests/clients/py_walkthrough.py"))
        .arg(parley_tests::bin("parley-mcp"))
        .arg(&repo)
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("PARLEY_DAEMON", parley_tests::bin("parley"))
        // The script runs from the source tree, which must stay free of __pycache__.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let deadline = std::time::Duration::from_secs(120);
    let output = tokio::time::timeout(deadline, command.output())
        .await
        .unwrap_or_else(|_| panic!("the Python SDK scenario did not finish within {deadline:?}"))
        .expect("start the Python SDK's interpreter");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let totals = stdout.lines().rev().find(|line| line.ends_with(" failed")).unwrap_or("no totals line");
    assert!(
        output.status.success() && totals.ends_with(" passed, 0 failed") && !totals.starts_with("0 passed"),
        "the Python SDK scenario failed ({}, {totals}).\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        output.status,
    );
    // Its click, as the daemon keeps it: delivered to the agent with its tool answer.
    let (code, shown, stderr) =
        sandbox.cli(&["walkthrough", "show", "--json", "--workspace", repo.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stderr}");
    let shown = serde_json::from_str::<Value>(&shown).expect("JSON")["walkthrough"].clone();
    let click = &block(&shown, 8)["clicks"][0];
    assert_eq!(click["via"], "tool-answer", "{shown:#}");
}

/// The names of the agents at work, as `agents/changed` lists them.
fn names_in(changed: &Value) -> Vec<String> {
    changed["agents"]
        .as_array()
        .map(|agents| agents.iter().filter_map(|a| a["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// Waits for the editor to be told the agents at work are `want`.
async fn until_agents(editor: &mut parley_tests::Editor, want: &[&str]) {
    loop {
        let notification = editor.next_notification().await;
        if notification.method == "agents/changed" && names_in(&notification.params) == want {
            return;
        }
    }
}

fn clicks_of(sandbox: &Sandbox, id: &str) -> Vec<Value> {
    let (code, printed, stderr) = sandbox.cli(&["walkthrough", "show", id, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let shown: Value = serde_json::from_str(&printed).expect("show --json prints JSON");
    block(&shown["walkthrough"], 5)["clicks"].as_array().cloned().expect("clicks")
}

#[tokio::test]
async fn a_click_waiting_for_an_agent_that_has_gone_is_sent_to_another_and_follows_it() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let presenter = sandbox.agent(&repo).await;
    let content = walkthrough(&[("src/auth.rs:2-3", "Both reads happen here."), ("src/token.rs:1", "The reader.")]);
    let answer = presenter.call_ok("present_walkthrough", json!({"content": content})).await;
    let id = answer["walkthroughId"].as_str().expect("id").to_owned();
    let mut editor = sandbox.editor("vscode", &[&repo]).await;
    let listed = editor.call("agents/list", json!({})).await;
    let first = names_in(&listed).first().cloned().expect("the presenting agent is at work");

    // The presenting agent goes away; a person clicks twice.
    presenter.service.cancel().await.expect("the agent's session ends");
    until_agents(&mut editor, &[]).await;
    for _ in 0..2 {
        let (code, clicked, stderr) = sandbox.cli(&["walkthrough", "act", &id[..6], "5"]);
        assert_eq!(code, 0, "{stderr}");
        assert!(clicked.contains(&format!("waits for {first}")), "{clicked}");
    }
    let (older, newer) = match clicks_of(&sandbox, &id).as_slice() {
        [older, newer] => (older["id"].as_str().expect("id").to_owned(), newer["id"].as_str().expect("id").to_owned()),
        other => panic!("two clicks: {other:#?}"),
    };
    let (_, shown, _) = sandbox.cli(&["walkthrough", "show", &id]);
    assert!(shown.contains(&format!("the last waiting for {first}")), "{shown}");
    assert!(
        shown.contains(&format!("{first} is not at work;"))
            && shown.contains(&format!("parley walkthrough resend {id} --to AGENT --click {newer}")),
        "the person is told the click waits for an agent that has gone, and how to send it on: {shown}"
    );

    // Nobody to send it to yet, then an agent that is not at work.
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "resend", &id[..6], "--to", "codex-9"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("no agent named codex-9 is at work, nor any other"), "{stderr}");
    let second = sandbox.agent(&repo).await;
    second.call("get_feedback_summary", json!({})).await;
    let listed = editor.call("agents/list", json!({})).await;
    let other = names_in(&listed).first().cloned().expect("the second agent is at work");
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "resend", &id[..6], "--to", "codex-9"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains(&format!("the agents at work are {other}")) && stderr.contains("`parley agents`"),
        "{stderr}"
    );
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "resend", &id[..6], "--to", &other, "--click", "zzzz"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("has no click zzzz"), "{stderr}");
    assert!(clicks_of(&sandbox, &id).iter().all(|c| c["agent"] == json!(first)), "nothing was sent on");

    // The newest click goes to the second agent, which is told it.
    let (code, sent, stderr) = sandbox.cli(&["walkthrough", "resend", &id[..6], "--to", &other]);
    assert_eq!(code, 0, "{stderr}");
    assert!(sent.starts_with("Sent ") && sent.contains(&format!("to {other}: it waits for {other}")), "{sent}");
    // The window is told: the newest click now waits for the second agent.
    loop {
        let n = editor.next_notification().await;
        if n.method != "walkthrough/updated" {
            continue;
        }
        let clicks = block(&n.params["walkthrough"], 5)["clicks"].clone();
        if clicks[1]["agent"] == json!(other) {
            assert_eq!((&clicks[1]["id"], &clicks[1]["state"]), (&json!(newer), &json!("waiting")), "{clicks:#}");
            break;
        }
    }
    let told = second.call("get_feedback_summary", json!({})).await;
    let note: Vec<String> = told.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    let note = note.join("\n");
    assert!(
        note.contains(&format!(
            "clicked \"Run the tests\" in the walkthrough \"Token refactor\" {first} presented (sent on to you)"
        )) && note.contains("tell me what fails"),
        "{note}"
    );
    assert_eq!(note.matches("clicked \"Run the tests\"").count(), 1, "only the click sent on reaches it: {note}");

    // The button follows the second agent; the older click still waits for the first.
    let clicks = clicks_of(&sandbox, &id);
    assert_eq!(
        (&clicks[1]["state"], &clicks[1]["via"], &clicks[1]["agent"]),
        (&json!("delivered"), &json!("tool-answer"), &json!(other)),
        "{clicks:#?}"
    );
    assert_eq!((&clicks[0]["state"], &clicks[0]["agent"]), (&json!("waiting"), &json!(first)), "{clicks:#?}");
    second.call("get_feedback_summary", json!({})).await;
    let clicks = clicks_of(&sandbox, &id);
    assert_eq!(clicks[1]["state"], "read", "{clicks:#?}");
    assert_eq!(clicks[0]["state"], "waiting", "another agent's call moves none of the first's clicks: {clicks:#?}");

    // The older one, named by its id, follows; then nothing waits.
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "resend", &id, "--to", &other, "--click", &older[..8]]);
    assert_eq!(code, 0, "{stderr}");
    second.call("get_feedback_summary", json!({})).await;
    let (code, _, stderr) = sandbox.cli(&["walkthrough", "resend", &id, "--to", &other]);
    assert_ne!(code, 0);
    assert!(stderr.contains("no click of walkthrough") && stderr.contains("waits for an agent"), "{stderr}");
    let (_, shown, _) = sandbox.cli(&["walkthrough", "show", &id]);
    assert!(!shown.contains("is not at work"), "{shown}");
}
