//! Files with Windows line endings (`\r\n`), and mixed endings, through the
//! real daemon, shim and CLI on real git repositories: threads quote and
//! count columns as on an LF file, follow edits and a flip of the endings,
//! a person's suggestion found applied in CRLF lines addresses its thread,
//! and review references count a CRLF file's lines.

use std::path::Path;

use parley_tests::{Agent, DEADLINE, Sandbox, git};
use serde_json::{Value, json};

/// A small Rust file; `crlf` gives it Windows line endings.
fn cart(crlf: bool) -> String {
    let lf = "fn total(price: f64) -> f64 {\n    let tax = 0.2; // é𝄞\n    price * (1.0 + tax)\n}\n\nfn main() {}\n";
    if crlf { lf.replace('\n', "\r\n") } else { lf.to_owned() }
}

fn threads(result: &Value) -> Vec<Value> {
    result["threads"].as_array().expect("threads").clone()
}

/// The thread `id` as the agent lists it.
async fn listed(agent: &Agent, id: &str) -> Value {
    let all = agent.call_ok("get_feedback", json!({"filePath": "src/cart.rs"})).await;
    threads(&all).into_iter().find(|t| t["id"] == id).unwrap_or_else(|| panic!("no thread {id}: {all:#}"))
}

#[tokio::test]
async fn threads_on_a_crlf_file_quote_count_and_follow_as_on_an_lf_file() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("shop", &[("src/cart.rs", &cart(true))]);
    let file = repo.join("src/cart.rs");
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let agent = sandbox.agent(&repo).await;

    // VS Code sends UTF-16 columns and the selected text with the document's
    // own endings: two lines, from "let" to the end of "tax)".
    let across = window
        .call(
            "feedback/create",
            json!({"path": file, "range": {"start": {"line": 1, "character": 4}, "end": {"line": 2, "character": 23}},
                   "text": "let tax = 0.2; // é𝄞\r\n    price * (1.0 + tax)", "body": "Name the rate"}),
        )
        .await;
    let across_id = across["thread"]["id"].as_str().expect("id").to_owned();
    assert_eq!(across["thread"]["quote"], json!("let tax = 0.2; // é𝄞\n    price * (1.0 + tax)"), "{across:#}");
    assert_eq!(across["thread"]["range"]["end"], json!({"line": 2, "character": 23}), "{across:#}");
    // A whole line selected as VS Code selects it: to the end of its text.
    let line = window
        .call(
            "feedback/create",
            json!({"path": file, "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 24}},
                   "text": "    let tax = 0.2; // é𝄞", "body": "Why 0.2?"}),
        )
        .await;
    let line_id = line["thread"]["id"].as_str().expect("id").to_owned();
    assert_eq!(line["thread"]["quote"], json!("    let tax = 0.2; // é𝄞"), "{line:#}");
    // An agent's thread on whole lines quotes them without their ending.
    let added =
        agent.call_ok("add_feedback", json!({"filePath": "src/cart.rs", "startLine": 6, "body": "Empty main?"})).await;
    let added_id = added["threadId"].as_str().expect("id").to_owned();
    assert_eq!(added["thread"]["selectedText"], json!("fn main() {}"), "{added:#}");

    // The agent sees character columns, the same as on an LF file, and the
    // whole-line thread as whole lines (no columns).
    let seen = listed(&agent, &across_id).await;
    assert_eq!(
        seen["range"],
        json!({"startLine": 2, "endLine": 3, "startCharacter": 4, "endCharacter": 23}),
        "{seen:#}"
    );
    assert_eq!(seen["selectedText"], json!("let tax = 0.2; // é𝄞\n    price * (1.0 + tax)"));
    let seen = listed(&agent, &line_id).await;
    assert_eq!(seen["range"], json!({"startLine": 2, "endLine": 2}), "a whole line: {seen:#}");

    // Two CRLF lines inserted above: the watcher moves the threads in the
    // window at once, and every thread follows its text.
    std::fs::write(&file, format!("// cart\r\n// totals\r\n{}", cart(true))).expect("edit");
    loop {
        let event = window.next_notification().await;
        if event.method == "feedback/changed"
            && event.params["thread"]["id"] == across_id.as_str()
            && event.params["change"] == "moved"
        {
            let range = &event.params["thread"]["range"];
            assert_eq!(
                (&range["start"], &range["end"]),
                (&json!({"line": 3, "character": 4}), &json!({"line": 4, "character": 23})),
                "{event:?}"
            );
            break;
        }
    }
    for (id, start, end) in [(&across_id, 4, 5), (&line_id, 4, 4), (&added_id, 8, 8)] {
        let seen = listed(&agent, id).await;
        assert_eq!(seen["state"], json!("anchored"), "{seen:#}");
        assert_eq!((seen["range"]["startLine"].as_u64(), seen["range"]["endLine"].as_u64()), (Some(start), Some(end)));
    }

    // The endings flip to LF (an editor or git's autocrlf rewrote the whole
    // file): the text is the same, so no thread moves, changes or is lost.
    std::fs::write(&file, format!("// cart\n// totals\n{}", cart(false))).expect("flip to LF");
    for (id, quote) in [
        (&across_id, "let tax = 0.2; // é𝄞\n    price * (1.0 + tax)"),
        (&line_id, "    let tax = 0.2; // é𝄞"),
        (&added_id, "fn main() {}"),
    ] {
        let seen = listed(&agent, id).await;
        assert_eq!(
            (seen["state"].as_str(), seen["selectedText"].as_str()),
            (Some("anchored"), Some(quote)),
            "{seen:#}"
        );
    }
    // And back to CRLF with a line removed above: still followed.
    std::fs::write(&file, format!("// cart\r\n{}", cart(true))).expect("flip to CRLF");
    let seen = listed(&agent, &across_id).await;
    assert_eq!((seen["state"].as_str(), seen["range"]["startLine"].as_u64()), (Some("anchored"), Some(3)), "{seen:#}");
    assert_eq!(seen["range"]["endCharacter"], json!(23), "{seen:#}");
}

#[tokio::test]
async fn an_unsaved_crlf_buffer_places_threads_by_its_lines_and_columns() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("shop", &[("src/cart.rs", &cart(true))]);
    let file = repo.join("src/cart.rs");
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let made = window
        .call(
            "feedback/create",
            json!({"path": file, "range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 23}},
                   "text": "price * (1.0 + tax)", "body": "Round it"}),
        )
        .await;
    assert_eq!(made["thread"]["quote"], json!("price * (1.0 + tax)"));
    // A buffer with a line typed above, in the document's CRLF endings.
    let buffer = format!("// note\r\n{}", cart(true));
    let placed = window.call("buffer/changed", json!({"path": file, "text": buffer})).await;
    assert_eq!(
        placed["threads"][0]["range"],
        json!({"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 23}}),
        "{placed:#}"
    );
    // A comment made in that buffer, quoting two of its lines with their
    // CRLF ending: found on disk a line up.
    let from_buffer = window
        .call(
            "feedback/create",
            json!({"path": file, "range": {"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 1}},
                   "text": "    price * (1.0 + tax)\r\n}", "body": "Split this"}),
        )
        .await;
    assert_eq!(from_buffer["thread"]["quote"], json!("    price * (1.0 + tax)\n}"), "{from_buffer:#}");
    assert_eq!(from_buffer["thread"]["range"]["start"], json!({"line": 2, "character": 0}), "{from_buffer:#}");
}

fn cli_ok(sandbox: &Sandbox, repo: &Path, args: &[&str]) -> String {
    let out = sandbox.command("parley").current_dir(repo).args(args).output().expect("run parley");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "parley {args:?} failed: {stdout}{stderr}");
    stdout.into_owned()
}

#[tokio::test]
async fn a_person_reviews_a_crlf_change_and_the_suggestion_applied_in_crlf_addresses_its_thread() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = sandbox.repo("app", &[("notes.txt", "one\r\ntwo\r\nthree\r\nfour\r\n"), ("unix.txt", "a\nb\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("notes.txt"), "one\r\nthree\r\nfour point zero\r\nfive\r\n").expect("edit");
    // A change of nothing but the endings.
    std::fs::write(repo.join("unix.txt"), "a\r\nb\r\n").expect("to CRLF");
    let mut window = sandbox.editor("nvim", &[&repo]).await;
    let agent = sandbox.agent(&repo).await;
    let id = agent.ask_a_person(json!({"summary": "Tidied the notes"})).await;
    let number = id.rsplit('-').next().expect("an id has dashes");

    // The versions an editor diffs: lines without \r, except where the
    // endings were the whole change.
    let round = window.call("round/get", json!({"review_id": id})).await;
    let file = |path: &str| {
        round["files"].as_array().and_then(|f| f.iter().find(|f| f["path"] == path).cloned()).expect("the file")
    };
    let notes = file("notes.txt");
    assert_eq!(
        (notes["before"].as_str(), notes["after"].as_str()),
        (Some("one\ntwo\nthree\nfour\n"), Some("one\nthree\nfour point zero\nfive\n")),
        "{notes:#}"
    );
    let unix = file("unix.txt");
    assert_eq!((unix["before"].as_str(), unix["after"].as_str()), (Some("a\nb\n"), Some("a\r\nb\r\n")), "{unix:#}");
    let diff = cli_ok(&sandbox, &repo, &["review", "diff", number]);
    assert!(diff.contains("│+four point zero\n"), "lines without their \\r:\n{diff}");
    assert!(!diff.contains('\r'), "{diff:?}");
    assert!(diff.contains("│-a\n") && diff.contains("│+a\n"), "the endings' change is a change:\n{diff}");
    // A suggestion as a Windows editor sends it, in CRLF lines.
    cli_ok(&sandbox, &repo, &["review", "comment", number, "notes.txt:3", "--suggest", "four\r\n", "Keep it short"]);
    cli_ok(&sandbox, &repo, &["review", "submit", number, "--request-changes", "-m", "One thing"]);
    let verdict = loop {
        let answer = agent.call_ok("await_review", json!({"review_id": id, "wait_seconds": 5})).await;
        if answer["status"] != "pending" {
            break answer;
        }
    };
    let comment = verdict["comments"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "specific").cloned())
        .unwrap_or_else(|| panic!("{verdict:#}"));
    assert_eq!(comment["suggested_fix"], json!("four\n"), "the suggestion carries no \\r: {comment:#}");

    let all = agent.call_ok("get_feedback", json!({})).await;
    let thread = threads(&all).into_iter().next().unwrap_or_else(|| panic!("{all:#}"));
    assert_eq!(thread["selectedText"], json!("four point zero"), "{thread:#}");
    assert_eq!(thread["range"], json!({"startLine": 3, "endLine": 3}), "{thread:#}");

    // The agent applies the suggestion, keeping the file's CRLF endings.
    std::fs::write(repo.join("notes.txt"), "one\r\nthree\r\nfour\r\nfive\r\n").expect("apply");
    // Read until the watcher has reported the edit (a read may come first).
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let thread = loop {
        let all = agent.call_ok("get_feedback", json!({})).await;
        let thread = threads(&all).into_iter().next().unwrap_or_else(|| panic!("{all:#}"));
        if thread["standing"] == "addressed" || tokio::time::Instant::now() > deadline {
            break thread;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(
        (thread["standing"].as_str(), thread["addressedBy"].as_str(), thread["selectedText"].as_str()),
        (Some("addressed"), Some("applied"), Some("four")),
        "{thread:#}"
    );
}

#[tokio::test]
async fn review_references_count_the_lines_of_a_crlf_file() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("shop", &[("src/cart.rs", &cart(true)), ("src/mixed.rs", "a\r\nb\nc\r\n")]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let content = "# R\n\n[`src/cart.rs:6`][], [`src/cart.rs:2-3`][], [`src/mixed.rs:3`][], [`src/cart.rs:7`][], [`src/mixed.rs:4`][]\n";
    let result = agent.call_ok("present_review", json!({"content": content, "baseUri": repo})).await;
    assert_eq!(result["references"]["resolved"], json!(3), "{result:#}");
    let problems: Vec<&str> = result["references"]["unresolved"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|u| u["problem"].as_str())
        .collect();
    assert_eq!(
        problems,
        ["line 7 is past the end of src/cart.rs (6 lines)", "line 4 is past the end of src/mixed.rs (3 lines)"],
        "{result:#}"
    );
}
