//! Review sessions through the real daemon, shim and CLI, on real git
//! repositories, with a reviewer that is a script printing canned reviews.

use std::path::{Path, PathBuf};
use std::time::Duration;

use parley_tests::{Agent, RawShim, Sandbox, git, test_dep, text_of};
use serde_json::{Value, json};

const LIB: &str = "pub fn answer() -> u32 {\n    42\n}\n";

fn fake_reviewer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake_reviewer.py")
}

/// A repository with one commit, then an uncommitted change, and a reviewer
/// configured in `.parley.toml` printing reviews of the given kind.
fn project(sandbox: &Sandbox, mode: &str, extra_config: &str) -> PathBuf {
    let repo = sandbox.repo(
        "proj",
        &[
            ("src/lib.rs", LIB),
            ("docs/design.md", "# Design\nAnswers are constants.\n"),
            // The stand-in reviewer records what it was given here.
            (".gitignore", ".fake-reviewer/\n"),
        ],
    );
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    configure(sandbox, mode, extra_config);
    std::fs::write(repo.join("src/lib.rs"), "pub fn answer() -> u32 {\n    41 + 1\n}\n").expect("edit");
    repo
}

/// Configures the reviewer in the user's config file (the sandbox's), so the
/// repository's own diff stays as the test made it.
fn configure(sandbox: &Sandbox, mode: &str, extra_config: &str) {
    let config = format!(
        "[review]\nreviewer = [\"python3\", {:?}, {mode:?}]\n{extra_config}",
        fake_reviewer().display().to_string()
    );
    let dir = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), config).expect("config");
}

fn prompts(repo: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for n in 1.. {
        match std::fs::read_to_string(repo.join(format!(".fake-reviewer/prompt-{n}.txt"))) {
            Ok(prompt) => found.push(prompt),
            Err(_) => return found,
        }
    }
    found
}

/// Waits for the stand-in reviewer to start; its pid.
async fn reviewer_started(repo: &Path) -> String {
    let pid_file = repo.join(".fake-reviewer/pid");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while !pid_file.exists() {
        assert!(std::time::Instant::now() < deadline, "the reviewer never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    std::fs::read_to_string(&pid_file).expect("pid").trim().to_owned()
}

/// The next review an editor window is shown (the threads a round's
/// findings open arrive as well).
async fn next_review(window: &mut parley_tests::Editor) -> parley_protocol::jsonrpc::Notification {
    loop {
        let event = window.next_notification().await;
        if event.method == "review/updated" {
            return event;
        }
    }
}

async fn request(agent: &Agent, args: Value) -> Value {
    agent.call_ok("request_review", args).await
}

#[tokio::test]
async fn a_review_round_runs_the_reviewer_and_leaves_an_audit_trail() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let agent = sandbox.agent(&repo).await;
    let args = json!({"summary": "Compute the answer", "relevant_docs": ["docs/design.md"], "focus_areas": ["naming"]});
    let result = agent.call("request_review", args).await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let review = result.structured_content.clone().expect("structured review");
    let id = review["review_id"].as_str().expect("id").to_owned();
    assert!(parley_tests_id(&id), "{id}");
    assert_eq!(review["round"], json!(1));
    assert_eq!(review["overall_assessment"], json!("lgtm_with_suggestions"));
    assert_eq!(review["verdict"], json!("lgtm_with_suggestions"));
    assert_eq!(review["comments"][0]["comment"], json!("Name the constant"));
    assert_eq!(review["changed_files"], json!(["src/lib.rs"]));
    assert_eq!(review["status"], json!("approved"));
    assert_eq!(review["shown_in_editors"], json!(1));
    assert!(
        text_of(&result).contains("[`src/lib.rs:2`][]"),
        "a readable rendering with references: {}",
        text_of(&result)
    );

    // The reviewer saw the summary, the design doc's text, the focus area and the diff.
    let prompt = &prompts(&repo)[0];
    for wanted in ["Compute the answer", "Answers are constants.", "naming", "src/lib.rs", "+    41 + 1"] {
        assert!(prompt.contains(wanted), "the prompt lacks {wanted:?}");
    }
    // The editor shows it.
    let shown = next_review(&mut window).await;
    assert!(shown.params["review"]["content"].as_str().is_some_and(|c| c.contains(&id)));

    // The audit trail, as seed 004 lays it out.
    let dir = repo.join(".reviews/sessions").join(&id);
    let request_json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("request.json")).expect("request.json")).expect("JSON");
    assert_eq!(request_json["summary"], json!("Compute the answer"));
    assert!(std::fs::read_to_string(dir.join("changes.diff")).expect("changes.diff").contains("+    41 + 1"));
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("round-1/review.json")).expect("review.json"))
            .expect("JSON");
    assert_eq!((stored["review_id"].clone(), stored["round"].clone()), (json!(id), json!(1)));
    let latest: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join(".reviews/latest.json")).expect("latest"))
            .expect("JSON");
    assert_eq!(latest["review_id"], json!(id));
}

fn parley_tests_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 14
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'-'
        && id.chars().filter(char::is_ascii_digit).count() == 11
}

#[tokio::test]
async fn reviewer_output_is_read_leniently_and_failures_are_explained() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "fenced", "timeout_secs = 2\n");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    for mode in ["fenced", "envelope"] {
        configure(&sandbox, mode, "");
        let review = request(&agent, json!({"summary": format!("mode {mode}")})).await;
        assert_eq!(review["comments"][0]["comment"], json!("Name the constant"), "{mode}");
    }
    let cases = [
        ("garbage", "", "not a review"),
        ("garbage", "", "Rate limited"),
        ("fail", "", "exit 3"),
        ("fail", "", "authentication failed"),
        ("slow", "timeout_secs = 1\n", "did not finish within 1.0 s"),
        ("slow", "timeout_secs = 1\n", "it printed: Reading the diff"),
    ];
    for (mode, extra, want) in cases {
        configure(&sandbox, mode, extra);
        let text = agent.call_err("request_review", json!({"summary": format!("mode {mode}")})).await;
        assert!(text.contains(want), "{mode}: {text}");
    }
    // The slow reviewer was killed, not left running.
    let pid = std::fs::read_to_string(repo.join(".fake-reviewer/pid")).expect("pid").trim().to_owned();
    wait_until_gone(&pid).await;
    // Failed first rounds leave no empty sessions behind; the two reviews do stay.
    let history = agent.call_ok("get_review_history", json!({"limit": 20})).await;
    let summaries: Vec<&str> =
        history["reviews"].as_array().expect("reviews").iter().filter_map(|r| r["summary"].as_str()).collect();
    assert_eq!(summaries, ["mode envelope", "mode fenced"], "{history}");
}

/// Waits (with a deadline) until a process has exited.
async fn wait_until_gone(pid: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z") {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the reviewer {pid} still runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn nothing_leaves_the_machine_when_the_diff_holds_a_secret() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    std::fs::write(repo.join("src/config.rs"), "pub const KEY: &str = \"AKIAZ7QX3M5N2PLWVKTR\";\n").expect("plant");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let text = agent.call_err("request_review", json!({"summary": "Add config"})).await;
    assert!(text.contains("src/config.rs:1") && text.contains("aws-access-key-id"), "{text}");
    assert!(!text.contains("AKIAZ7QX3M5N2PLWVKTR"), "the secret itself is never shown");
    assert!(prompts(&repo).is_empty(), "the reviewer never ran");
    // An allowlisted path passes.
    configure(&sandbox, "good", "[secrets]\nallow_paths = [\"src/config.rs\"]\n");
    request(&agent, json!({"summary": "Add config"})).await;
    assert_eq!(prompts(&repo).len(), 1);
    // The documents and the test output go into the prompt, so they are scanned too.
    std::fs::write(repo.join("docs/ops.md"), "# Operations\nexport AWS_ACCESS_KEY_ID=AKIAZ7QX3M5N2PLWVKTR\n")
        .expect("doc");
    git(&repo, &["add", "docs/ops.md"]);
    git(&repo, &["commit", "-qm", "ops notes"]);
    let text =
        agent.call_err("request_review", json!({"summary": "Add config", "relevant_docs": ["docs/ops.md"]})).await;
    assert!(text.contains("docs/ops.md:2: aws-access-key-id"), "{text}");
    let leaky_tests =
        "test_command = \"echo token=AKIAZ7QX3M5N2PLWVKTR\"\n[secrets]\nallow_paths = [\"src/config.rs\"]\n";
    configure(&sandbox, "good", leaky_tests);
    let text = agent.call_err("request_review", json!({"summary": "Add config"})).await;
    assert!(text.contains("(test output):1: aws-access-key-id"), "{text}");
    assert!(!text.contains("AKIAZ7QX3M5N2PLWVKTR"), "{text}");
    assert_eq!(prompts(&repo).len(), 1, "the reviewer never saw either");
}

const TOKEN: &str = concat!("ghs", "_rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsiVpz");
const KEY_BODY: &str = concat!("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "\n");

/// Every file under `dir` as (path, text), recursively.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push((path.clone(), std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
    found
}

#[tokio::test]
async fn secrets_already_committed_are_redacted_from_the_prompt_and_the_audit_tree_not_sent() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    // A key and a token that were committed before: the agent removes the
    // key (which is the fix) and changes the line next to the token.
    let key = format!(
        "{}\n{KEY_BODY}{}\n",
        concat!("-----BEGIN OPENSSH ", "PRIVATE KEY-----"),
        concat!("-----END OPENSSH ", "PRIVATE KEY-----")
    );
    std::fs::write(repo.join("id_ed25519"), &key).expect("key");
    std::fs::write(repo.join(".env"), format!("LOG=debug\nGITHUB_TOKEN={TOKEN}\nPORT=8080\n")).expect("env");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "oops"]);
    git(&repo, &["rm", "-q", "id_ed25519"]);
    std::fs::write(repo.join(".env"), format!("LOG=info\nGITHUB_TOKEN={TOKEN}\nPORT=8080\n")).expect("edit");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;

    let result = request(&agent, json!({"summary": "Remove the committed key"})).await;
    assert_eq!(result["round"], json!(1), "the round is not stopped: {result}");
    let warnings = result["warnings"].to_string();
    assert!(warnings.contains("2 possible secrets on removed or unchanged lines were redacted"), "{warnings}");
    assert!(warnings.contains("id_ed25519:1 (removed line): private-key"), "{warnings}");
    assert!(warnings.contains(".env:2 (context line): github-token"), "{warnings}");
    assert!(!warnings.contains(TOKEN) && !warnings.contains(KEY_BODY.trim()), "{warnings}");

    let prompt = &prompts(&repo)[0];
    for secret in [TOKEN, KEY_BODY.trim(), "PRIVATE KEY"] {
        assert!(!prompt.contains(secret), "the reviewer was given {secret:?}:\n{prompt}");
    }
    assert!(prompt.contains("-<redacted: private-key>"), "{prompt}");
    assert!(prompt.contains(" GITHUB_TOKEN=<redacted: github-token>"), "{prompt}");
    assert!(prompt.contains("+LOG=info"), "the change itself is there: {prompt}");

    let audit = files_under(&repo.join(".reviews"));
    assert!(audit.iter().any(|(path, _)| path.ends_with("changes.diff")), "{audit:?}");
    for (path, text) in &audit {
        assert!(!text.contains(TOKEN) && !text.contains(KEY_BODY.trim()), "{} holds a secret", path.display());
    }
    // An added secret still stops the round, before anything runs.
    std::fs::write(repo.join(".env"), format!("LOG=info\nGITHUB_TOKEN={TOKEN}\nPORT=8080\nNEW={TOKEN}\n"))
        .expect("add");
    let text = agent.call_err("request_review", json!({"summary": "Add another"})).await;
    assert!(text.contains(".env:4: github-token") && !text.contains(".env:2"), "{text}");
    assert_eq!(prompts(&repo).len(), 1);
}

#[tokio::test]
async fn relevant_docs_are_read_by_their_real_path_and_never_from_special_files() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    let outside = sandbox.dir.path().join("outside.md");
    std::fs::write(&outside, "THE OUTSIDE MARKER\n").expect("outside");
    let link = |name: &str, to: &Path| std::os::unix::fs::symlink(to, repo.join(name)).expect("symlink");
    link("docs/linked.md", &outside);
    link("docs/config.md", &repo.join(".git/config"));
    link("docs/zero.md", Path::new("/dev/zero"));
    link("docs/same.md", &repo.join("docs/design.md"));
    let fifo = repo.join("docs/pipe.md");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let cases = [
        ("docs/linked.md", "is a link that leads outside the repository"),
        (".git/config", "is inside .git"),
        ("docs/config.md", "is inside .git"),
        ("docs/zero.md", "is a link that leads outside the repository"),
        // A FIFO inside the repository is refused at once, not waited on.
        ("docs/pipe.md", "docs/pipe.md is not a file"),
    ];
    for (doc, want) in cases {
        let text = agent.call_err("request_review", json!({"summary": "x", "relevant_docs": [doc]})).await;
        assert!(text.contains(want), "{doc}: {text}");
    }
    assert!(prompts(&repo).is_empty(), "nothing reached a reviewer");
    // A link that stays inside the repository is followed.
    request(&agent, json!({"summary": "x", "relevant_docs": ["docs/same.md"]})).await;
    let prompt = &prompts(&repo)[0];
    assert!(prompt.contains("Answers are constants.") && !prompt.contains("THE OUTSIDE MARKER"), "{prompt}");
}

#[tokio::test]
async fn rounds_link_into_sessions_that_end_once() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "needs_changes", "max_rounds = 2\n");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let first = request(&agent, json!({"summary": "First try"})).await;
    let id = first["review_id"].as_str().expect("id").to_owned();
    // The reviewer said lgtm, but a major comment blocks by default.
    assert_eq!(
        (first["overall_assessment"].clone(), first["verdict"].clone()),
        (json!("lgtm"), json!("needs_changes"))
    );
    assert_eq!(first["status"], json!("needs_changes"));

    configure(&sandbox, "good", "max_rounds = 2\n");
    std::fs::write(repo.join("src/lib.rs"), "pub const ANSWER: u32 = 42;\n").expect("fix");
    let second = request(&agent, json!({"summary": "Fixed the off-by-one", "previous_review_id": id})).await;
    assert_eq!((second["review_id"].clone(), second["round"].clone()), (json!(id), json!(2)));
    assert_eq!(second["changed_files"], json!(["src/lib.rs"]), "the audit trail of round 1 is not reviewed");
    let prompt = &prompts(&repo)[1];
    assert!(prompt.contains("Off by one"), "the second round's prompt carries the first round's comments");
    let third = agent.call_err("request_review", json!({"summary": "again", "previous_review_id": id})).await;
    assert!(third.contains("maximum of 2 rounds"), "{third}");

    let history = agent.call_ok("get_review_history", json!({})).await;
    assert_eq!(history["reviews"][0]["review_id"], json!(id));
    assert_eq!(history["reviews"][0]["rounds"].as_array().map(Vec::len), Some(2));
    let one = agent.call_ok("get_review_history", json!({"review_id": id})).await;
    assert_eq!(one["reviews"][0]["summary"], json!("First try"));

    let done = agent
        .call_ok("mark_review_complete", json!({"review_id": id, "final_status": "merged", "notes": "shipped"}))
        .await;
    assert_eq!((done["final_status"].clone(), done["rounds"].clone()), (json!("merged"), json!(2)));
    assert!(repo.join(".reviews/sessions").join(&id).join("completion.json").exists());
    let cases = [
        (json!({"review_id": id, "final_status": "approved"}), "already marked merged"),
        (json!({"review_id": "2020-01-01-001", "final_status": "approved"}), "no review session 2020-01-01-001"),
        (json!({"review_id": id, "final_status": "done"}), "final_status must be approved, abandoned or merged"),
        (json!({"review_id": id}), "missing field `final_status`"),
    ];
    for (args, want) in cases {
        let text = agent.call_err("mark_review_complete", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    let after = agent.call_err("request_review", json!({"summary": "more", "previous_review_id": id})).await;
    assert!(after.contains("already marked merged"), "{after}");
    let unknown = agent.call_err("get_review_history", json!({"review_id": "2020-01-01-009"})).await;
    assert!(unknown.contains("no review session"), "{unknown}");
}

#[tokio::test]
async fn two_agents_requesting_at_once_get_their_own_sessions() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    let _daemon = sandbox.start_daemon();
    let (one, two) = tokio::join!(sandbox.agent(&repo), sandbox.agent(&repo));
    let (a, b) = tokio::join!(request(&one, json!({"summary": "one"})), request(&two, json!({"summary": "two"})));
    assert_ne!(a["review_id"], b["review_id"]);
    let history = one.call_ok("get_review_history", json!({"limit": 10})).await;
    assert_eq!(history["reviews"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn parleys_own_config_stays_out_of_the_diff_and_the_first_round_says_where_the_audit_tree_went() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    std::fs::write(repo.join(".parley.toml"), "[review]\ntimeout_secs = 300\n").expect("config");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let first = request(&agent, json!({"summary": "Compute the answer"})).await;
    assert_eq!(first["changed_files"], json!(["src/lib.rs"]), "{first}");
    assert!(!prompts(&repo)[0].contains("timeout_secs"), "the reviewer was shown .parley.toml");
    let warnings = first["warnings"].to_string();
    assert!(warnings.contains(".reviews/") && warnings.contains("Commit it"), "{first}");
    // Said once: the second round is quiet about it.
    let second = request(&agent, json!({"summary": "Again", "previous_review_id": first["review_id"]})).await;
    assert!(second.get("warnings").is_none(), "{second}");
    // Asked for, the config is reviewed like any file.
    std::fs::write(repo.join(".parley.toml"), "[review]\ntimeout_secs = 300\nreview_config = true\n").expect("config");
    let third = request(&agent, json!({"summary": "With config"})).await;
    let files = third["changed_files"].as_array().cloned().unwrap_or_default();
    assert!(files.contains(&json!(".parley.toml")) && files.contains(&json!("src/lib.rs")), "{third}");
}

#[tokio::test]
async fn clear_errors_before_any_reviewer_runs() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    let plain = sandbox.dir.path().join("plain");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let cases = [
        (json!({"summary": "x", "scope": "staged"}), "no changes in scope staged"),
        (json!({"summary": "x", "scop": "all"}), "unknown field `scop`"),
        (json!({"summary": ""}), "summary is required"),
        (
            json!({"summary": "x", "previous_review_id": "nope"}),
            "previous_review_id: \"nope\" is not a review session id",
        ),
        (json!({"summary": "x", "relevant_docs": ["../../etc/passwd"]}), "outside the repository"),
        // A typo must not cost a review that checks against nothing.
        (json!({"summary": "x", "relevant_docs": ["docs/desing.md"]}), "docs/desing.md does not exist"),
        (json!({"summary": "x", "relevant_docs": ["docs"]}), "docs is not a file"),
    ];
    for (args, want) in cases {
        let text = agent.call_err("request_review", args.clone()).await;
        assert!(text.contains(want), "{args}: {text}");
    }
    std::fs::write(repo.join(".parley.toml"), "[review]\nreveiwer = \"claude -p\"\n").expect("config");
    let text = agent.call_err("request_review", json!({"summary": "x"})).await;
    assert!(text.contains(".parley.toml") && text.contains("reveiwer"), "{text}");
    std::fs::remove_file(repo.join(".parley.toml")).expect("rm");
    std::fs::remove_file(sandbox.dir.path().join("config/parley/config.toml")).expect("rm");
    let text = agent.call_err("request_review", json!({"summary": "x"})).await;
    assert!(text.contains("no reviewer is configured") && text.contains("reviewer = "), "{text}");
    let outsider = sandbox.agent(&plain).await;
    let text = outsider.call_err("request_review", json!({"summary": "x"})).await;
    assert!(text.contains("not a git repository"), "{text}");
    assert!(prompts(&repo).is_empty());
}

#[tokio::test]
async fn progress_is_reported_and_cancelling_kills_the_reviewer() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "slow", "timeout_secs = 120\n");
    let _daemon = sandbox.start_daemon();
    let mut shim = RawShim::start(&sandbox, &repo, &[]);
    shim.handshake().await;
    shim.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_review","arguments":{"summary":"slow one"},"_meta":{"progressToken":"p1"}}}"#).await;
    // Progress up to the reviewer step, then cancel.
    loop {
        let message = shim.recv().await;
        assert_eq!(message["method"], json!("notifications/progress"), "{message}");
        assert_eq!(message["params"]["progressToken"], json!("p1"));
        if message["params"]["message"].as_str().is_some_and(|m| m.starts_with("asking the reviewer")) {
            break;
        }
    }
    let pid = reviewer_started(&repo).await;
    shim.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user"}}"#).await;
    shim.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#).await;
    // The next answer is the tools list: the cancelled call gets no answer.
    loop {
        let message = shim.recv().await;
        if message["method"] == json!("notifications/progress") {
            continue;
        }
        assert_eq!(message["id"], json!(3), "{message}");
        break;
    }
    wait_until_gone(&pid).await;
}

#[tokio::test]
async fn the_cli_runs_the_same_pipeline_and_gates_on_the_verdict() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "needs_changes", "");
    let _daemon = sandbox.start_daemon();
    let run = |args: &[&str]| {
        let out = sandbox.command("parley").current_dir(&repo).args(args).output().expect("run parley");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["review", "request", "--summary", "From the terminal"]);
    assert_eq!(code, Some(3), "needs_changes exits 3: {out}{err}");
    assert!(out.contains("Off by one"), "{out}");
    assert!(err.contains("asking the reviewer"), "progress is shown: {err}");
    configure(&sandbox, "good", "");
    let (code, out, _) = run(&["review", "request", "--summary", "Again", "--json"]);
    assert_eq!(code, Some(0));
    let result: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(result["verdict"], json!("lgtm_with_suggestions"));
    let (code, out, _) = run(&["sessions", "list"]);
    assert_eq!(code, Some(0));
    assert_eq!(out.lines().count(), 2, "{out}");
    let id = result["review_id"].as_str().expect("id");
    let (code, out, _) = run(&["sessions", "show", id]);
    assert_eq!(code, Some(0));
    assert!(out.contains("round 1") && out.contains("Again"), "{out}");
    // People abbreviate ids: by their number, or by a unique prefix.
    let number = id.rsplit('-').next().expect("a number");
    let (code, out, err) = run(&["sessions", "show", number]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(id), "{out}");
    let (code, _, err) = run(&["sessions", "show", &id[..4]]);
    assert_eq!(code, Some(1));
    assert!(err.contains("matches") && err.contains("give more of the id"), "{err}");
    let (code, _, err) = run(&["sessions", "show", "999"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no review session matches"), "{err}");
    // Over the hub, each progress notification names the request it is about.
    let mut window = sandbox.editor("window", &[&repo]).await;
    let answer = window.call("review/request", json!({"workspace": repo, "summary": "Over the hub"})).await;
    assert_eq!(answer["round"], json!(1), "{answer}");
    let mut steps = Vec::new();
    while let Some(event) = window.try_next_notification(Duration::from_millis(200)).await {
        if event.method == "review/progress" {
            assert_eq!(event.params["request"], json!("t1"), "{:?}", event.params);
            steps.push(event.params["message"].as_str().unwrap_or_default().to_owned());
        }
    }
    assert!(steps.iter().any(|s| s.starts_with("asking the reviewer")), "{steps:?}");
    let (code, _, err) = run(&["review", "request", "--summary", "x", "--scope", "staged"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no changes in scope staged"), "{err}");
}

#[tokio::test]
async fn a_round_longer_than_the_wait_is_pending_and_await_review_returns_it() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "after:3", "");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let pending = agent.call_ok("request_review", json!({"summary": "Takes a while", "wait_seconds": 1})).await;
    assert_eq!((pending["status"].clone(), pending["round"].clone()), (json!("pending"), json!(1)), "{pending}");
    let id = pending["review_id"].as_str().expect("review_id").to_owned();
    let message = pending["message"].as_str().expect("message");
    assert!(message.contains("await_review") && message.contains(&id), "{message}");
    assert!(pending["step"].as_str().is_some_and(|s| s.contains("reviewer")), "{pending}");
    // The history shows the round running meanwhile.
    let history = agent.call_ok("get_review_history", json!({"review_id": id})).await;
    assert_eq!(history["reviews"][0]["pending"]["state"], json!("running"), "{history}");
    // A wait of 0 s answers at once, still pending.
    let again = agent.call_ok("await_review", json!({"review_id": id, "wait_seconds": 0})).await;
    assert_eq!(again["status"], json!("pending"), "{again}");
    // Then the finished round, in request_review's shape.
    let done = agent.call("await_review", json!({"review_id": id})).await;
    assert_ne!(done.is_error, Some(true), "{}", text_of(&done));
    let round = done.structured_content.clone().expect("structured");
    assert_eq!(round["round"], json!(1));
    assert_eq!(round["comments"][0]["comment"], json!("Name the constant"), "{round}");
    assert!(round["verdict"].is_string(), "{round}");
    assert!(text_of(&done).contains("Name the constant"), "the text is the rendered review");
    assert_eq!(prompts(&repo).len(), 1, "the reviewer ran once");
    // Awaiting a finished round answers it again at once.
    let later = agent.call_ok("await_review", json!({"review_id": id, "wait_seconds": 0})).await;
    assert_eq!(later["round"], json!(1));
    assert_eq!(later["comments"][0]["comment"], json!("Name the constant"));
    // Bad waits are explained.
    let too_long = agent.call_err("request_review", json!({"summary": "x", "wait_seconds": 600})).await;
    assert!(too_long.contains("at most 50"), "{too_long}");
    let unknown = agent.call_err("await_review", json!({"review_id": "2020-01-01-001"})).await;
    assert!(unknown.contains("2020-01-01-001"), "{unknown}");
}

/// A diff that is slow to capture (here a real git textconv driver that
/// takes seconds per file, as a huge repository or a slow disk would): the
/// wait bounds it too, the round goes on, and a refusal found after the
/// answer (a secret the capture turns up) reaches `await_review`.
#[tokio::test]
async fn wait_seconds_covers_capturing_the_diff() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    git(&repo, &["config", "diff.slow.textconv", "sleep 4; cat"]);
    std::fs::write(repo.join(".git/info/attributes"), "*.rs diff=slow\n").expect("attributes");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;

    let asked = std::time::Instant::now();
    let pending = request(&agent, json!({"summary": "Slow to capture", "wait_seconds": 1})).await;
    assert!(asked.elapsed() < Duration::from_secs(3), "answered after {:?}", asked.elapsed());
    assert_eq!((pending["status"].clone(), pending["round"].clone()), (json!("pending"), json!(1)), "{pending}");
    assert!(pending["step"].as_str().is_some_and(|s| s.contains("capturing the diff")), "{pending}");
    let id = pending["review_id"].as_str().expect("review_id").to_owned();
    let done = agent.call_ok("await_review", json!({"review_id": id, "wait_seconds": 30})).await;
    assert_eq!((done["round"].clone(), done["verdict"].clone()), (json!(1), json!("lgtm_with_suggestions")), "{done}");
    assert!(prompts(&repo)[0].contains("41 + 1"), "the reviewer got the diff");

    // A secret found once the call has answered stops the round all the
    // same: nothing is sent, and the waiter is told why.
    std::fs::write(repo.join("src/lib.rs"), "pub const KEY: &str = \"AKIAZ7QX3M5N2PLWVKTR\";\n").expect("edit");
    let pending = request(&agent, json!({"summary": "A key", "previous_review_id": id, "wait_seconds": 1})).await;
    assert_eq!((pending["status"].clone(), pending["round"].clone()), (json!("pending"), json!(2)), "{pending}");
    let refused = agent.call_err("await_review", json!({"review_id": id, "wait_seconds": 30})).await;
    assert!(refused.contains("src/lib.rs:1") && refused.contains("aws-access-key-id"), "{refused}");
    assert_eq!(prompts(&repo).len(), 1, "the reviewer never saw the secret");
}

/// The official TypeScript SDK with its default 60 s request timeout, and a
/// reviewer taking 70 s: the round is answered pending in time and awaited to
/// its end, and nothing is killed.
#[tokio::test]
async fn a_70_second_round_outlasts_the_typescript_sdks_timeout() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "after:70", "timeout_secs = 300\n");
    let _daemon = sandbox.start_daemon();
    let root = parley_tests::repo_root();
    test_dep("node/node_modules/@modelcontextprotocol/sdk/package.json");
    let modules = test_dep("node/node_modules");
    let output = tokio::process::Command::new("node")
        .arg(root.join("tests/clients/ts_long_round.mjs"))
        .arg(parley_tests::bin("parley-mcp"))
        .arg(&repo)
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("PARLEY_DAEMON", parley_tests::bin("parley"))
        .env("PARLEY_TEST_NODE_MODULES", &modules)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(300), output)
        .await
        .expect("the scenario ends within 300 s")
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(" passed, 0 failed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn a_client_that_goes_away_leaves_its_round_running() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "after:3", "");
    let _daemon = sandbox.start_daemon();
    let mut shim = RawShim::start(&sandbox, &repo, &[]);
    shim.handshake().await;
    shim.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_review","arguments":{"summary":"left behind"}}}"#).await;
    reviewer_started(&repo).await;
    // The host dies while the call waits.
    drop(shim);
    let other = sandbox.agent(&repo).await;
    let history = other.call_ok("get_review_history", json!({})).await;
    let id = history["reviews"][0]["review_id"].as_str().expect("the session is listed").to_owned();
    let done = other.call_ok("await_review", json!({"review_id": id})).await;
    assert_eq!(done["comments"][0]["comment"], json!("Name the constant"), "{done}");
}

#[tokio::test]
async fn cancel_review_stops_a_pending_round_and_a_failed_round_says_why() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "slow", "timeout_secs = 120\n");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let pending = agent.call_ok("request_review", json!({"summary": "slow one", "wait_seconds": 0})).await;
    assert_eq!(pending["status"], json!("pending"), "{pending}");
    let id = pending["review_id"].as_str().expect("id").to_owned();
    let pid = reviewer_started(&repo).await;
    // A second round of the same session is refused while this one runs.
    let busy = agent.call_err("request_review", json!({"summary": "more", "previous_review_id": id})).await;
    assert!(busy.contains("still running") && busy.contains("await_review"), "{busy}");
    let cancelled = agent.call_ok("cancel_review", json!({"review_id": id})).await;
    assert_eq!((cancelled["cancelled"].clone(), cancelled["round"].clone()), (json!(true), json!(1)));
    wait_until_gone(&pid).await;
    let nothing = agent.call_err("cancel_review", json!({"review_id": id})).await;
    assert!(nothing.contains("no round"), "{nothing}");

    // A round that fails tells whoever awaits it why.
    configure(&sandbox, "garbage", "");
    let failing = agent.call_ok("request_review", json!({"summary": "Again", "wait_seconds": 0})).await;
    let id = failing["review_id"].as_str().expect("id").to_owned();
    let failed = agent.call_err("await_review", json!({"review_id": id})).await;
    assert!(failed.contains("not a review"), "{failed}");
    // Nothing to review is said by the call that asked, when it waits...
    let refused = agent.call_err("request_review", json!({"summary": "x", "scope": "staged"})).await;
    assert!(refused.contains("no changes in scope staged"), "{refused}");
    // ...and by the wait for the round, when the call did not wait for its diff.
    let pending = agent.call_ok("request_review", json!({"summary": "x", "scope": "staged", "wait_seconds": 0})).await;
    let id = pending["review_id"].as_str().expect("id").to_owned();
    let refused = agent.call_err("await_review", json!({"review_id": id})).await;
    assert!(refused.contains("no changes in scope staged"), "{refused}");
}

#[tokio::test]
async fn the_cli_awaits_a_round_an_agent_started() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "after:2", "");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let pending = agent.call_ok("request_review", json!({"summary": "From the agent", "wait_seconds": 0})).await;
    let id = pending["review_id"].as_str().expect("id").to_owned();
    let number = id.rsplit('-').next().expect("number").to_owned();
    let out = sandbox.command("parley").current_dir(&repo).args(["review", "await", &number]).output().expect("run");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("Name the constant"), "{stdout}");
    assert!(stderr.contains(&format!("review {id} round 1")), "{stderr}");
    let out = sandbox.command("parley").current_dir(&repo).args(["review", "cancel", &number]).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no round"), "{stderr}");
}

#[tokio::test]
async fn measured_test_results_count_whatever_the_reviewer_says() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "test_command = \"echo 1 test failed: answer_is_42; exit 1\"\n");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let review = request(&agent, json!({"summary": "Tests fail"})).await;
    assert_eq!(review["test_results"]["passed"], json!(false), "{review}");
    assert!(review["test_results"]["summary"].as_str().is_some_and(|s| s.contains("answer_is_42")));
    assert_eq!(review["verdict"], json!("needs_changes"), "failing tests block");
    assert!(prompts(&repo)[0].contains("answer_is_42"), "the reviewer saw the test output");
}

#[tokio::test]
async fn stopping_the_cli_stops_its_reviewer() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "slow", "timeout_secs = 120\n");
    let _daemon = sandbox.start_daemon();
    let mut cli = sandbox
        .command("parley")
        .current_dir(&repo)
        .args(["review", "request", "--summary", "slow"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run parley review request");
    let pid = reviewer_started(&repo).await;
    cli.kill().expect("stop the CLI");
    cli.wait().expect("reap the CLI");
    wait_until_gone(&pid).await;
}

#[tokio::test]
async fn the_reviewer_runs_with_the_environment_of_whoever_asked_as_far_as_the_user_passes_it_on() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    // A reviewer only the agent's PATH has, which needs a key only the agent's
    // environment carries, as `claude` installed in a user's own folder would.
    let bin = sandbox.dir.path().join("agent-bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let script = bin.join("my-reviewer");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$REVIEW_API_KEY\" = sesame ] || {{ echo 'REVIEW_API_KEY is not set' >&2; exit 7; }}\n\
             [ -z \"$HOST_SECRET\" ] || {{ echo \"HOST_SECRET leaked: $HOST_SECRET\" >&2; exit 8; }}\n\
             exec python3 {:?} good\n",
            fake_reviewer().display().to_string()
        ),
    )
    .expect("write reviewer");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let dir = sandbox.dir.path().join("config/parley");
    // The user passes on the one key the reviewer needs, and nothing else.
    std::fs::write(dir.join("config.toml"), "[review]\nreviewer = \"my-reviewer\"\npass_env = [\"REVIEW_*\"]\n")
        .expect("config");
    // The daemon runs with a bare PATH and no key (as a service would).
    let _daemon = sandbox.start_daemon_with(|c| {
        c.env("PATH", "/usr/bin:/bin").env_remove("REVIEW_API_KEY");
    });
    let agent_path = format!("{}:/usr/bin:/bin", bin.display());
    let agent = sandbox
        .agent_with(
            &repo,
            &[("PATH", agent_path.as_str()), ("REVIEW_API_KEY", "sesame"), ("HOST_SECRET", "the-hosts-own-key")],
        )
        .await;
    let review = request(&agent, json!({"summary": "With my own reviewer"})).await;
    assert_eq!(review["comments"][0]["comment"], json!("Name the constant"), "{review}");
    // An agent without the key gets the reviewer's own complaint.
    let keyless = sandbox.agent_with(&repo, &[("PATH", agent_path.as_str())]).await;
    let text = keyless.call_err("request_review", json!({"summary": "Without the key"})).await;
    assert!(text.contains("REVIEW_API_KEY is not set"), "{text}");
    // And the CLI, from a shell with both, is heard the same way.
    let out = sandbox
        .command("parley")
        .current_dir(&repo)
        .env("PATH", &agent_path)
        .env("REVIEW_API_KEY", "sesame")
        .args(["review", "request", "--summary", "From my shell"])
        .output()
        .expect("run parley");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // Without `pass_env`, the key stays with whoever asked.
    std::fs::write(dir.join("config.toml"), "[review]\nreviewer = \"my-reviewer\"\n").expect("config");
    let text = agent.call_err("request_review", json!({"summary": "Keys stay home"})).await;
    assert!(text.contains("REVIEW_API_KEY is not set"), "{text}");
}

/// Runs `parley args` in `dir`: (exit code, stdout, stderr).
fn parley(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = sandbox.command("parley").current_dir(dir).args(args).output().expect("run parley");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What a terminal user must never read: hub methods, agents' tools and their
/// argument names.
const NOT_CLI_WORDS: [&str; 11] = [
    "request_review",
    "start_review",
    "get_review_history",
    "mark_review_complete",
    "previous_review_id",
    "relevant_docs",
    "final_status",
    "sessions/",
    "review/",
    "feedback/",
    " failed: ",
];

#[tokio::test]
async fn people_read_a_round_as_the_editor_showed_it_and_complete_sessions_from_the_terminal() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "needs_changes", "max_rounds = 2\n");
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("window", &[&repo]).await;
    let (code, markdown, err) = parley(&sandbox, &repo, &["review", "request", "--summary", "First try", "--json"]);
    assert_eq!(code, Some(3), "{err}");
    let first: Value = serde_json::from_str(&markdown).expect("JSON");
    let id = first["review_id"].as_str().expect("an id").to_owned();
    let shown = next_review(&mut window).await;
    let in_the_editor = shown.params["review"]["content"].as_str().expect("the review's markdown").to_owned();
    assert!(in_the_editor.contains("Off by one") && in_the_editor.contains("The reviewer said"), "{in_the_editor}");

    // The round, by the session's number, exactly as the editor showed it.
    let number = id.rsplit('-').next().expect("a number").to_owned();
    let (code, out, err) = parley(&sandbox, &repo, &["sessions", "show", &number, "--round", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim_end(), in_the_editor.trim_end());
    let (code, out, _) = parley(&sandbox, &repo, &["sessions", "show", &id, "--round", "1", "--json"]);
    assert_eq!(code, Some(0));
    let round: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!((round["round"].clone(), round["verdict"].clone()), (json!(1), json!("needs_changes")));
    let (code, _, err) = parley(&sandbox, &repo, &["sessions", "show", &id, "--round", "2"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("one round") && err.contains("no round 2"), "{err}");

    // A second round continues the session by its number; then it is marked merged.
    configure(&sandbox, "good", "max_rounds = 2\n");
    let (code, _, err) = parley(&sandbox, &repo, &["review", "request", "--summary", "Fixed", "--previous", &number]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) =
        parley(&sandbox, &repo, &["sessions", "complete", &number, "--merged", "--notes", "shipped in 1.2"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&id) && out.contains("merged") && out.contains("2 round(s)"), "{out}");
    let (_, out, _) = parley(&sandbox, &repo, &["sessions", "show", &id]);
    assert!(out.contains("as merged: shipped in 1.2"), "{out}");
    assert!(repo.join(".reviews/sessions").join(&id).join("completion.json").exists(), "the audit tree records it");
    let (_, out, _) = parley(&sandbox, &repo, &["sessions", "list"]);
    assert!(out.contains(&id) && out.contains("merged"), "{out}");

    // A session is completed once, and a final status is required.
    let (code, _, err) = parley(&sandbox, &repo, &["sessions", "complete", &id, "--approved"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("already marked merged") && err.contains("shipped in 1.2"), "{err}");
    let (code, _, err) = parley(&sandbox, &repo, &["sessions", "complete", &id]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--approved") && err.contains("--abandoned") && err.contains("--merged"), "{err}");
}

#[tokio::test]
async fn cli_errors_name_commands_and_flags_never_hub_methods_or_agent_tools() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let id = request(&agent, json!({"summary": "Done soon"})).await["review_id"].as_str().expect("an id").to_owned();
    agent.call_ok("mark_review_complete", json!({"review_id": id, "final_status": "merged"})).await;
    let plain = sandbox.dir.path().join("plain");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let cases: [(&Path, &[&str], &[&str]); 7] = [
        (
            &repo,
            &["review", "request", "--summary", "More", "--previous", &id],
            &["already marked merged", "--previous"],
        ),
        (
            &repo,
            &["review", "request", "--summary", "x", "--doc", "docs/desing.md"],
            &["--doc docs/desing.md does not exist"],
        ),
        (&repo, &["review", "request", "--summary", "x", "--previous", "2020-01-01-001"], &["parley sessions list"]),
        (&plain, &["review", "request", "--summary", "x"], &["not a git repository", "`parley review request`"]),
        (&repo, &["sessions", "show", "2020-01-01-001"], &["no review session matches", "parley sessions list"]),
        (&repo, &["feedback", "reply", "0000", "hello"], &["cannot reply to thread 0000", "parley feedback list"]),
        (&repo, &["feedback", "resolve", "zzz"], &["is not a thread id", "at least 4 characters"]),
    ];
    for (dir, args, wanted) in cases {
        let (code, out, err) = parley(&sandbox, dir, args);
        assert_eq!(code, Some(1), "{args:?}: {out}{err}");
        for want in wanted {
            assert!(err.contains(want), "{args:?}: {err}");
        }
        for word in NOT_CLI_WORDS {
            assert!(!err.contains(word), "{args:?} speaks of {word:?}: {err}");
        }
    }
}

/// Findings become threads every client sees; the next round reads what was
/// said in them, and people's open threads; a repeated finding keeps its thread.
#[tokio::test]
async fn findings_become_threads_and_the_next_round_hears_what_was_said_in_them() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "reviewer_name = \"claude\"\n");
    let _daemon = sandbox.start_daemon();
    let added = sandbox
        .command("parley")
        .current_dir(&repo)
        .args(["feedback", "add", "src/lib.rs:1", "Document this"])
        .output();
    assert!(added.expect("run parley").status.success());
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let agent = sandbox.agent(&repo).await;
    let first = request(&agent, json!({"summary": "Round one"})).await;
    let id = first["review_id"].as_str().expect("id").to_owned();
    assert!(!first.to_string().contains("did not become a thread"), "{first}");
    // The person's open thread on a changed file reached the reviewer.
    let prompt = &prompts(&repo)[0];
    assert!(prompt.contains("## Open Comments on the Changed Files") && prompt.contains("Document this"), "{prompt}");

    // The finding is a thread at its line, from the reviewer, for every client.
    let created = loop {
        let event = window.next_notification().await;
        if event.method == "feedback/changed" && event.params["thread"]["finding"].is_object() {
            break event.params["thread"].clone();
        }
    };
    assert_eq!(created["range"]["start"]["line"], json!(1), "{created}");
    assert_eq!(created["comments"][0]["author"], json!("claude"), "{created}");
    assert_eq!(created["finding"]["review_id"], json!(id));
    let other = sandbox.agent(&repo).await;
    let listed = other.call_ok("get_feedback", json!({})).await;
    let human = listed["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .find(|t| t["comments"][0]["body"] == json!("Document this"))
        .expect("the person's thread")
        .clone();
    assert_eq!((human["standing"].clone(), human["seenBy"].clone()), (json!("seen"), json!("claude")), "{human}");
    let finding = listed["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .find(|t| t["finding"].is_object())
        .expect("the finding is listed")
        .clone();
    assert_eq!(finding["range"]["startLine"], json!(2), "{finding}");
    assert_eq!(
        (
            finding["finding"]["severity"].clone(),
            finding["finding"]["category"].clone(),
            finding["finding"]["round"].clone()
        ),
        (json!("minor"), json!("style"), json!(1)),
        "{finding}"
    );
    let body = finding["comments"][0]["body"].as_str().expect("body");
    assert!(body.starts_with("Name the constant") && body.contains("const ANSWER: u32 = 42;"), "{body}");

    // The agent answers and resolves it; the next round reads that.
    let thread_id = finding["id"].as_str().expect("id").to_owned();
    other.call_ok("reply_feedback", json!({"threadId": thread_id, "body": "Kept inline on purpose"})).await;
    other.call_ok("resolve_feedback", json!({"threadId": thread_id})).await;
    std::fs::write(repo.join("src/lib.rs"), "pub fn answer() -> u32 {\n    40 + 2\n}\n").expect("edit");
    let second = request(&agent, json!({"summary": "Round two", "previous_review_id": id})).await;
    assert_eq!(second["round"], json!(2));
    let prompt = &prompts(&repo)[1];
    let section = prompt.split("## What Became of Earlier Findings").nth(1).expect("the findings section");
    assert!(section.contains("src/lib.rs:2") && section.contains("resolved"), "{section}");
    assert!(section.contains("Kept inline on purpose"), "{section}");

    // The reviewer said it again at the same place: the same thread, reopened.
    let listed = other.call_ok("get_feedback", json!({})).await;
    let findings: Vec<&Value> =
        listed["threads"].as_array().expect("threads").iter().filter(|t| t["finding"].is_object()).collect();
    assert_eq!(findings.len(), 1, "{listed}");
    assert_eq!(findings[0]["id"], json!(thread_id));
    let last = findings[0]["comments"].as_array().and_then(|c| c.last()).expect("comments");
    assert!(last["body"].as_str().is_some_and(|b| b.starts_with("Round 2: Name the constant")), "{last}");
    assert_eq!(last["author"], json!("claude"));
    // A person at the terminal sees which threads are findings, and of which round.
    let out = sandbox.command("parley").current_dir(&repo).args(["feedback", "list"]).output().expect("run");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains(&format!("finding: minor style, round 1 of review {id}")), "{listed}");
}

#[tokio::test]
async fn agents_name_sessions_by_the_same_id_rule_as_the_command_line() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let first = request(&agent, json!({"summary": "Compute the answer"})).await;
    let id = first["review_id"].as_str().expect("id").to_owned();
    let number = id.rsplit('-').next().expect("a number").to_owned();
    assert_eq!(number.len(), 3, "{id}");

    // Its number, and a beginning of 4 characters or more, name it in every tool.
    let awaited = agent.call_ok("await_review", json!({"review_id": number, "wait_seconds": 0})).await;
    assert_eq!(awaited["review_id"], json!(id), "{awaited}");
    let history = agent.call_ok("get_review_history", json!({"review_id": &id[..8]})).await;
    assert_eq!(history["reviews"][0]["review_id"], json!(id), "{history}");
    let second = request(&agent, json!({"summary": "Again", "previous_review_id": number})).await;
    assert_eq!((second["review_id"].clone(), second["round"].clone()), (json!(id), json!(2)), "{second}");

    // Shorter beginnings, strangers' ids and unknown ids are refused, each saying what to give.
    let short = agent.call_err("await_review", json!({"review_id": &id[..2]})).await;
    assert!(short.contains("no review session matches") && short.contains("at least 4 characters"), "{short}");
    let bad = agent.call_err("get_review_history", json!({"review_id": "abc"})).await;
    assert!(bad.contains("is not a review session id") && bad.contains("its number (001)"), "{bad}");
    // An id that never existed is unknown, not a session whose rounds finished.
    let unknown = agent.call_err("cancel_review", json!({"review_id": "2026-11-26-999"})).await;
    assert!(unknown.contains("no review session 2026-11-26-999"), "{unknown}");
    assert!(!unknown.contains("running") && !unknown.contains("rounds have finished"), "{unknown}");
    let unknown = agent.call_err("cancel_review", json!({"review_id": "999"})).await;
    assert!(unknown.contains("no review session matches \"999\""), "{unknown}");
    // A known session with nothing running says that instead.
    let idle = agent.call_err("cancel_review", json!({"review_id": number})).await;
    assert!(idle.contains(&format!("no round of review {id} is running")), "{idle}");

    let done = agent.call_ok("mark_review_complete", json!({"review_id": number, "final_status": "approved"})).await;
    assert_eq!(done["review_id"], json!(id), "{done}");

    // The command line says the same rule in every --help that takes an id.
    for args in [
        &["sessions", "show"][..],
        &["sessions", "complete"],
        &["review", "await"],
        &["review", "cancel"],
        &["review", "diff"],
        &["review", "comment"],
        &["review", "uncomment"],
        &["review", "submit"],
        &["feedback", "reply"],
        &["feedback", "resolve"],
        &["feedback", "reopen"],
    ] {
        let (code, out, err) = parley(&sandbox, &repo, &[args, &["--help"]].concat());
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(out.contains("unique beginning of at least 4 characters"), "{args:?}:\n{out}");
    }
}

#[tokio::test]
async fn a_completed_session_no_longer_shows_its_cancelled_round_as_pending() {
    let sandbox = Sandbox::new();
    let repo = project(&sandbox, "good", "");
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let first = request(&agent, json!({"summary": "first"})).await;
    let id = first["review_id"].as_str().expect("id").to_owned();
    configure(&sandbox, "slow", "timeout_secs = 120\n");
    let second = agent
        .call_ok("request_review", json!({"summary": "second", "previous_review_id": id, "wait_seconds": 0}))
        .await;
    assert_eq!(second["status"], json!("pending"), "{second}");
    let pid = reviewer_started(&repo).await;
    agent.call_ok("cancel_review", json!({"review_id": id})).await;
    wait_until_gone(&pid).await;
    let history = agent.call_ok("get_review_history", json!({"review_id": id})).await;
    assert_eq!(history["reviews"][0]["pending"]["state"], json!("failed"), "{history}");

    agent.call_ok("mark_review_complete", json!({"review_id": id, "final_status": "abandoned"})).await;
    let history = agent.call_ok("get_review_history", json!({"review_id": id})).await;
    assert_eq!(history["reviews"][0].get("pending"), None, "{history}");
    assert_eq!(history["reviews"][0]["final_status"], json!("abandoned"), "{history}");
}
