//! What the editor windows' language servers know, through the real daemon
//! and shim: a walkthrough's `findDefinition`/`findReferences` answered by
//! the windows open on the workspace (`symbols/find`), exact names kept
//! over fuzzy ones (which are only offered), a window that does not answer passed over, the
//! workspace search standing in when no window knows the name; and
//! `get_diagnostics` (`diagnostics/get`): the problems in the agent's terms
//! (1-based, columns in characters), whether the editor analysed the file on
//! disk, stale answers said so, and a clear error without a window.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use parley_tests::{Editor, Sandbox, git};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const AUTH: &str = "fn login() {\n    let token = read_token();\n    let again = read_token();\n}\n";
const TOKEN: &str = "pub fn read_token() -> String {\n    String::from(\"t\")\n}\n\npub fn read_token_cached() {}\n";

fn project(sandbox: &Sandbox) -> PathBuf {
    let repo = sandbox.repo("shop", &[("src/auth.rs", AUTH), ("src/token.rs", TOKEN)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    repo
}

fn hit(path: &Path, lines: (u32, u32), name: &str) -> Value {
    json!({"path": path, "name": name,
        "range": {"start": {"line": lines.0, "character": 0}, "end": {"line": lines.1, "character": 1}}})
}

fn walkthrough(location: &str) -> Value {
    json!({"content": format!("# Tokens\n\n```comment\nlocation: {location}\n\nHere.\n```\n"), "title": "Tokens"})
}

/// The places of the walkthrough's one comment, as `path:start-end` (0-based).
async fn places(editor: &mut Editor, repo: &Path) -> Vec<String> {
    let got = editor.call("walkthrough/get", json!({"workspace": repo})).await;
    let block = got["walkthrough"]["blocks"][0].clone();
    let places = block["places"].as_array().cloned().unwrap_or_default();
    places
        .iter()
        .map(|p| format!("{}:{}-{}", p["path"].as_str().unwrap_or(""), p["start_line"], p["end_line"]))
        .collect()
}

#[tokio::test]
async fn symbols_come_from_the_windows_on_the_workspace_exact_names_first_and_a_silent_window_is_passed_over() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    // A window that never reads what the daemon sends it.
    let _silent = sandbox.editor("frozen", &[&repo]).await;
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let (token, auth) = (repo.join("src/token.rs"), repo.join("src/auth.rs"));
    // The server's hits as they come: a fuzzy one first, the exact one as a
    // whole declaration (lines 0-2, which the workspace search, finding
    // line 0 alone, could not give), and one outside the workspace.
    window.answers.insert(
        "symbols/find".into(),
        json!({"places": [hit(&token, (4, 4), "read_token_cached"), hit(&token, (0, 2), "read_token()"),
            hit(Path::new("/usr/lib/rust/token.rs"), (9, 9), "read_token")]}),
    );
    let started = Instant::now();
    let answer =
        window.serve_while(agent.call_ok("present_walkthrough", walkthrough("findDefinition(read_token)"))).await;
    let took = started.elapsed();
    assert_eq!(answer["placed"], 1, "{answer:#}");
    assert_eq!(places(&mut window, &repo).await, ["src/token.rs:0-2"]);
    // The silent window cost at most its 1.5 s, not the test's deadline.
    assert!(took < Duration::from_secs(5), "present_walkthrough took {took:?}");
    let (method, params) = window.asked.last().cloned().expect("the window was asked");
    assert_eq!(method, "symbols/find");
    assert_eq!(params, json!({"workspace": repo, "name": "read_token", "kind": "definition"}));

    // References: the definition first, then each line it is used on once
    // (two hits on one line are one place).
    window.answers.insert(
        "symbols/find".into(),
        json!({"places": [hit(&token, (0, 0), "read_token"), hit(&auth, (1, 1), "read_token"),
            hit(&auth, (1, 1), "read_token"), hit(&auth, (2, 2), "read_token")]}),
    );
    let answer =
        window.serve_while(agent.call_ok("present_walkthrough", walkthrough("findReferences(read_token)"))).await;
    assert_eq!(answer["placed"], 1, "one comment, on three places: {answer:#}");
    assert_eq!(places(&mut window, &repo).await, ["src/token.rs:0-0", "src/auth.rs:1-1", "src/auth.rs:2-2"]);
    assert_eq!(window.asked.last().map(|(_, p)| p["kind"].clone()), Some(json!("references")));

    // Only a near name, and no line of the workspace defines `read_tok`:
    // never taken as the symbol, offered as a candidate for the agent to name.
    window.answers.insert("symbols/find".into(), json!({"places": [hit(&token, (4, 4), "read_token_cached")]}));
    let answer =
        window.serve_while(agent.call_ok("present_walkthrough", walkthrough("findDefinition(read_tok)"))).await;
    assert_eq!(answer["placed"], 0, "a near name is not the symbol: {answer:#}");
    let unplaced = &answer["unplaced"][0];
    assert!(unplaced["reason"].as_str().unwrap_or("").contains("no symbol is named exactly `read_tok`"), "{answer:#}");
    assert_eq!(unplaced["candidates"], json!(["src/token.rs:5"]), "the near name is offered: {answer:#}");
    assert!(places(&mut window, &repo).await.is_empty());
}

#[tokio::test]
async fn without_a_window_that_knows_the_name_the_workspace_search_stands_in() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    // A window without a language server for the file answers no hits; one
    // without the feature answers "not supported".
    let mut window = sandbox.editor("nvim", &[&repo]).await;
    window.answers.insert("symbols/find".into(), json!({"places": []}));
    let _old = sandbox.editor("old-vscode", &[&repo]).await.answer_in_background();
    let answer =
        window.serve_while(agent.call_ok("present_walkthrough", walkthrough("findDefinition(read_token)"))).await;
    assert_eq!(answer["placed"], 1, "{answer:#}");
    assert_eq!(places(&mut window, &repo).await, ["src/token.rs:0-0"]);
    let answer = window.serve_while(agent.call_ok("present_walkthrough", walkthrough("findDefinition(nowhere)"))).await;
    let reason = answer["unplaced"][0]["reason"].as_str().unwrap_or("").to_owned();
    assert!(reason.contains("no definition of `nowhere` was found"), "{answer:#}");
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

const APP: &str = "const a = 1;\nconst s = \"😀\"; let x: number = s;\n";

#[tokio::test]
async fn diagnostics_come_in_the_agents_terms_and_say_what_text_they_were_computed_on() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("web", &[("src/app.ts", APP), ("src/util.ts", "export {};\n")]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;

    // No window on the workspace: say what to do, not "clean".
    let text = agent.call_err("get_diagnostics", json!({})).await;
    assert!(text.contains("no editor window is open on your workspace"), "{text}");
    assert!(text.contains("VS Code") && text.contains("Neovim"), "{text}");

    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let (app, util) = (repo.join("src/app.ts"), repo.join("src/util.ts"));
    // `x` after the emoji: UTF-16 character 20 is the 19th character.
    let problem = json!({"severity": "error", "source": "ts", "code": "2322",
        "message": "Type 'string' is not assignable to type 'number'.",
        "range": {"start": {"line": 1, "character": 20}, "end": {"line": 1, "character": 21}}});
    window.answers.insert(
        "diagnostics/get".into(),
        json!({"files": [
            {"path": app, "version": 3, "dirty": false, "sha256": sha256(APP), "diagnostics": [problem]},
            {"path": util, "version": 7, "dirty": true, "stale": true, "sha256": sha256("export {}; oops\n"),
             "diagnostics": []},
            {"path": "/elsewhere/lib.ts", "version": 1, "dirty": false, "diagnostics": [problem]},
        ]}),
    );
    let got = window.serve_while(agent.call_ok("get_diagnostics", json!({}))).await;
    let files = got["files"].as_array().expect("files");
    assert_eq!(files.len(), 2, "{got:#}");
    assert_eq!(
        files[0],
        json!({"filePath": app, "editor": "vscode", "version": 3, "dirty": false, "differsFromDisk": false,
            "stale": false, "diagnostics": [{"severity": "error", "source": "ts", "code": "2322",
            "message": "Type 'string' is not assignable to type 'number'.",
            "line": 2, "column": 20, "endLine": 2, "endColumn": 21}]})
    );
    assert_eq!(files[1]["differsFromDisk"], json!(true), "{got:#}");
    assert_eq!(files[1]["stale"], json!(true), "{got:#}");
    let message = got["message"].as_str().unwrap_or("");
    assert!(message.contains("1 error(s)") && message.contains("STALE"), "{message}");
    assert!(message.contains("differs from the file on disk"), "{message}");
    assert_eq!(window.asked.last().map(|(_, p)| p.clone()), Some(json!({"workspace": repo})));

    // One file, named relative to the workspace: the window is asked for it
    // by its absolute path, and only its problems come back.
    let got = window.serve_while(agent.call_ok("get_diagnostics", json!({"filePath": "src/app.ts"}))).await;
    assert_eq!(got["files"].as_array().map(Vec::len), Some(1), "{got:#}");
    assert_eq!(window.asked.last().map(|(_, p)| p["path"].clone()), Some(json!(app)));

    // Bad paths are refused before any window is asked.
    let asked = window.asked.len();
    let text = agent.call_err("get_diagnostics", json!({"filePath": "../other/x.ts"})).await;
    assert!(text.contains("outside your workspace"), "{text}");
    let text = agent.call_err("get_diagnostics", json!({"filePath": "src/gone.ts"})).await;
    assert!(text.contains("is not a file"), "{text}");
    assert_eq!(window.asked.len(), asked);
}

#[tokio::test]
async fn a_window_that_cannot_report_problems_is_not_read_as_clean() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("web", &[("src/app.ts", APP)]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    // An extension from before diagnostics/get answers "not supported".
    let mut window = sandbox.editor("old-vscode", &[&repo]).await;
    let text = window.serve_while(agent.call_err("get_diagnostics", json!({}))).await;
    assert!(text.contains("no editor window on your workspace answered") && text.contains("old-vscode"), "{text}");
}
