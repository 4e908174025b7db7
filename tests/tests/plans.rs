//! Plans reviewed in Parley: the real `parley hook` processes fed the exact
//! JSON Claude Code and Codex send (`tests/fixtures/hooks/`), the real daemon,
//! an editor window on the repository, and the person answering at the
//! terminal (`parley review comment|submit`). The hooks' outputs are kept as
//! golden files beside their inputs (`PARLEY_UPDATE_SNAPSHOTS=1` rewrites
//! them, for the diff to be reviewed). Also: a daemon restart while a hook
//! waits, a hook killed while it waits, bad input to every hook, and
//! `parley hooks install`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use parley_tests::{DEADLINE, Editor, Sandbox, bin, repo_root};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    repo_root().join("tests/fixtures/hooks")
}

/// A hook input fixture, its folder and transcript filled in.
fn input(name: &str, cwd: &Path, transcript: Option<&Path>) -> String {
    let text = std::fs::read_to_string(fixtures().join(name)).expect("fixture");
    let text = text.replace("@CWD@", &cwd.to_string_lossy());
    match transcript {
        Some(path) => text.replace("@TRANSCRIPT@", &path.to_string_lossy()),
        None => text,
    }
}

/// Compares a hook's output with its golden file (written when updating).
fn golden(name: &str, actual: &str) {
    let path = fixtures().join(name);
    if std::env::var_os("PARLEY_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} is missing", path.display()));
    assert_eq!(actual, want, "the output differs from {}", path.display());
}

/// Starts `parley hook NAME` with `stdin` written and closed.
fn start_hook(sandbox: &Sandbox, hook: &str, stdin: &str) -> Child {
    let mut child = sandbox
        .command("parley")
        .args(["hook", hook])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the hook");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write the hook's input");
    child
}

/// Waits for a hook to exit: (exit code, stdout, stderr).
async fn finish(child: Child) -> (i32, String, String) {
    let done = tokio::task::spawn_blocking(move || child.wait_with_output());
    let out = tokio::time::timeout(DEADLINE, done)
        .await
        .expect("the hook did not answer in time")
        .expect("join")
        .expect("wait for the hook");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn run_hook(sandbox: &Sandbox, hook: &str, stdin: &str) -> (i32, String, String) {
    finish(start_hook(sandbox, hook, stdin)).await
}

/// The next `round/requested` the window is told of.
async fn requested(window: &mut Editor) -> Value {
    loop {
        let event = window.next_notification().await;
        if event.method == "round/requested" {
            return event.params;
        }
    }
}

/// The next `round/changed` the window is told of, other than drafts.
async fn changed(window: &mut Editor) -> Value {
    loop {
        let event = window.next_notification().await;
        if event.method == "round/changed" && event.params["state"] != "drafts" {
            return event.params;
        }
    }
}

fn cli_ok(sandbox: &Sandbox, args: &[&str]) -> String {
    let (code, out, err) = sandbox.cli(args);
    assert_eq!(code, 0, "parley {args:?} failed: {out}{err}");
    out
}

/// The raw JSON of `tool_input` in a hook input, as written.
fn raw_tool_input(input: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Input<'a> {
        #[serde(borrow)]
        tool_input: &'a RawValue,
    }
    let parsed: Input = serde_json::from_str(input).expect("a hook input");
    parsed.tool_input.get().to_owned()
}

#[tokio::test]
async fn two_plans_of_one_claude_session_are_two_rounds_a_person_answers_at_the_terminal() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = sandbox.repo("shop", &[("README.md", "shop\n")]);
    let mut window = sandbox.editor("vscode", &[&repo]).await;

    // The first plan: one new file, named after the plan's file.
    let first = input("claude-plan-1.json", &repo.join("src"), None);
    std::fs::create_dir_all(repo.join("src")).expect("src");
    let hook = start_hook(&sandbox, "claude-plan", &first);
    let told = requested(&mut window).await;
    assert_eq!(told["plan"], true, "{told}");
    assert_eq!(told["files"], json!(["tax-in-cart-totals.md"]));
    assert_eq!(told["workspace"], json!(repo), "the repository holding cwd");
    assert_eq!(told["asked_by"], "claude-code");
    let id = told["review_id"].as_str().expect("an id").to_owned();
    let round = window.call("round/get", json!({ "review_id": id })).await;
    let file = &round["files"][0];
    assert_eq!(file["status"], "added");
    assert_eq!(file["before"], Value::Null);
    assert_eq!(
        file["after"],
        "# Tax in cart totals\n\n1. Add a `tax_rate` to `Cart`\n2. Drop the rounding in `total`\n3. Update the invoice template\n"
    );
    let inbox = cli_ok(&sandbox, &["inbox"]);
    assert!(inbox.contains(&format!("{id}  plan  round 1")), "{inbox}");
    let diff = cli_ok(&sandbox, &["review", "diff", &id, "--color", "never"]);
    assert!(diff.contains("tax-in-cart-totals.md · added") && diff.contains("4 │+2. Drop the rounding"), "{diff}");

    // A comment with a suggestion, and changes asked for: the hook denies.
    cli_ok(
        &sandbox,
        &[
            "review",
            "comment",
            &id,
            "tax-in-cart-totals.md:4",
            "--suggest",
            "2. Round once, in `total`",
            "Keep the rounding: invoices depend on it",
        ],
    );
    let sent = cli_ok(&sandbox, &["review", "submit", &id, "--request-changes", "-m", "Close, but keep the rounding"]);
    assert!(sent.contains("1 comment(s) stay with the plan"), "{sent}");
    let (code, out, err) = finish(hook).await;
    assert_eq!(code, 0, "{err}");
    golden("claude-plan-deny.golden.json", &out);
    let denied: Value = serde_json::from_str(&out).expect("JSON");
    let decision = &denied["hookSpecificOutput"]["decision"];
    assert_eq!(decision.as_object().map(|d| d.len()), Some(2), "behavior and message only: {decision}");
    assert_eq!(decision["behavior"], "deny");
    let message = decision["message"].as_str().expect("a message");
    assert!(message.starts_with("The person reviewing your plan in Parley asked for changes. Revise the plan"));
    assert!(message.contains("Summary: Close, but keep the rounding"), "{message}");
    assert!(message.contains("   > 2. Drop the rounding in `total`\n"), "the line quoted: {message}");
    assert!(message.contains("   > 2. Round once, in `total`\n"), "the suggestion: {message}");

    // The next plan of the same session is round 2: modified, with round 1's comment.
    let second = input("claude-plan-2.json", &repo.join("src"), None);
    let hook = start_hook(&sandbox, "claude-plan", &second);
    let told = requested(&mut window).await;
    assert_eq!((told["review_id"].as_str(), told["round"].as_u64()), (Some(id.as_str()), Some(2)));
    let round = window.call("round/get", json!({ "review_id": id })).await;
    let file = &round["files"][0];
    assert_eq!(file["status"], "modified");
    assert_eq!(file["before"], round_one_plan());
    assert!(file["after"].as_str().is_some_and(|a| a.contains("4. Test with the fixtures")), "{file}");
    let earlier = round["earlier"][0]["body"].as_str().expect("round 1's comment");
    assert!(earlier.starts_with("Keep the rounding: invoices depend on it"), "{round}");
    let diff = cli_ok(&sandbox, &["review", "diff", &id, "--color", "never"]);
    assert!(diff.contains("round 1") && diff.contains("Keep the rounding"), "earlier comments shown: {diff}");

    // Approved with a comment: allowed, with tool_input echoed exactly.
    cli_ok(&sandbox, &["review", "comment", &id, "tax-in-cart-totals.md:6", "Use the carts with discounts too"]);
    cli_ok(&sandbox, &["review", "submit", &id, "--approve"]);
    let (code, out, err) = finish(hook).await;
    assert_eq!(code, 0, "{err}");
    golden("claude-plan-allow.golden.json", &out);
    let want = format!(
        r#"{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"allow","updatedInput":{}}}}}}}"#,
        raw_tool_input(&second)
    );
    assert_eq!(out.trim_end(), want, "updatedInput is tool_input as received, key order too");

    // The notes reach the model after the tool ran.
    let (code, out, err) =
        run_hook(&sandbox, "claude-post-plan", &input("claude-post-plan.json", &repo.join("src"), None)).await;
    assert_eq!(code, 0, "{err}");
    golden("claude-post-plan.golden.json", &out);
    let notes: Value = serde_json::from_str(&out).expect("JSON");
    let context = notes["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
    assert_eq!(notes["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    assert!(context.contains("approved it with 1 comment"), "{context}");
    assert!(
        context.contains("   > 4. Test with the fixtures in `tests/carts`\n   Use the carts with discounts too"),
        "{context}"
    );
    let (_, nothing_waits, _) = sandbox.cli(&["inbox", "--json"]);
    assert_eq!(serde_json::from_str::<Value>(&nothing_waits).expect("JSON")["rounds"], json!([]));
}

fn round_one_plan() -> &'static str {
    "# Tax in cart totals\n\n1. Add a `tax_rate` to `Cart`\n2. Drop the rounding in `total`\n3. Update the invoice template\n"
}

#[tokio::test]
async fn a_daemon_restart_while_the_hook_waits_still_brings_it_the_verdict() {
    let sandbox = Sandbox::new();
    let mut daemon = sandbox.start_daemon();
    let repo = sandbox.repo("shop", &[("README.md", "shop\n")]);
    let plan = input("claude-plan-1.json", &repo, None);
    let hook = {
        let mut window = sandbox.editor("vscode", &[&repo]).await;
        let hook = start_hook(&sandbox, "claude-plan", &plan);
        requested(&mut window).await;
        hook
    };
    let first_pid = sandbox.status()["pid"].clone();
    assert_eq!(daemon.terminate(), Some(0), "the daemon stops cleanly");
    // The round is stored: whichever reaches the socket first (the waiting
    // hook, or this command) starts a daemon again, and the hook waits on it.
    let inbox: Value = serde_json::from_str(&cli_ok(&sandbox, &["inbox", "--json"])).expect("JSON");
    let id = inbox["rounds"][0]["review_id"].as_str().expect("the round is still waiting").to_owned();
    assert_ne!(sandbox.status()["pid"], first_pid, "another daemon answers");
    cli_ok(&sandbox, &["review", "submit", &id, "--approve"]);
    let (code, out, err) = finish(hook).await;
    assert_eq!(code, 0, "{err}");
    let allowed: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(allowed["hookSpecificOutput"]["decision"]["behavior"], "allow", "{out}");
    // Approved without comments: no notes.
    let (code, out, _) = run_hook(&sandbox, "claude-post-plan", &input("claude-post-plan.json", &repo, None)).await;
    assert_eq!((code, out.trim()), (0, "{}"));
}

#[tokio::test]
async fn a_hook_killed_while_it_waits_leaves_the_round_answered_in_the_host() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = sandbox.repo("shop", &[("README.md", "shop\n")]);
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let mut hook = start_hook(&sandbox, "claude-plan", &input("claude-plan-1.json", &repo, None));
    let told = requested(&mut window).await;
    let id = told["review_id"].as_str().expect("an id").to_owned();
    // The person answered in Claude Code's own dialog: Claude Code kills the hook.
    hook.kill().expect("kill the hook");
    let _ = hook.wait();
    let ended = changed(&mut window).await;
    assert_eq!((ended["review_id"].as_str(), ended["state"].as_str()), (Some(id.as_str()), Some("answered_elsewhere")));
    let inbox: Value = serde_json::from_str(&cli_ok(&sandbox, &["inbox", "--json"])).expect("JSON");
    assert_eq!(inbox["rounds"], json!([]), "the round left the inbox");
    let sessions = cli_ok(&sandbox, &["sessions", "list", "--workspace", &repo.to_string_lossy()]);
    assert!(sessions.contains(&format!("{id}  answered_in_host")), "{sessions}");
    let (code, _, err) = sandbox.cli(&["review", "submit", &id, "--approve"]);
    assert_eq!(code, 1, "nothing to submit any more");
    assert!(err.contains("has no round waiting for a person"), "{err}");

    // The session's next plan shows what changed since the one answered in the host.
    let hook = start_hook(&sandbox, "claude-plan", &input("claude-plan-2.json", &repo, None));
    let told = requested(&mut window).await;
    assert_eq!(told["review_id"].as_str(), Some(id.as_str()));
    let round = window.call("round/get", json!({ "review_id": id })).await;
    assert_eq!(
        (round["files"][0]["status"].as_str(), round["files"][0]["before"].as_str()),
        (Some("modified"), Some(round_one_plan()))
    );
    cli_ok(&sandbox, &["review", "comment", &id, "tax-in-cart-totals.md:6", "Use the carts with discounts too"]);
    cli_ok(&sandbox, &["review", "submit", &id, "--approve"]);
    let (code, out, _) = finish(hook).await;
    assert!(code == 0 && out.contains("\"behavior\":\"allow\""), "{out}");
    let post = input("claude-post-plan.json", &repo, None);
    let (_, notes, _) = run_hook(&sandbox, "claude-post-plan", &post).await;
    assert!(notes.contains("Use the carts with discounts too"), "{notes}");
    let (_, again, _) = run_hook(&sandbox, "claude-post-plan", &post).await;
    assert_eq!(again.trim(), "{}", "the notes are handed over once");

    // A third plan answered in Claude Code's dialog: the second one's notes are not handed over again.
    let mut third: Value = serde_json::from_str(&input("claude-plan-2.json", &repo, None)).expect("JSON");
    third["tool_input"]["plan"] = json!("# Tax in cart totals\n\n1. Ship it\n");
    let mut hook = start_hook(&sandbox, "claude-plan", &third.to_string());
    requested(&mut window).await;
    hook.kill().expect("kill the hook");
    let _ = hook.wait();
    assert_eq!(changed(&mut window).await["state"], "answered_elsewhere");
    let (code, notes, _) = run_hook(&sandbox, "claude-post-plan", &post).await;
    assert_eq!((code, notes.trim()), (0, "{}"));
}

#[tokio::test]
async fn codex_stop_reviews_a_proposed_plan_and_lets_a_turn_without_one_end() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = sandbox.repo("shop", &[("README.md", "shop\n")]);
    let transcript = fixtures().join("codex-transcript.jsonl");
    let mut window = sandbox.editor("vscode", &[&repo]).await;

    let (code, out, err) = run_hook(&sandbox, "codex-stop", &input("codex-stop-no-plan.json", &repo, None)).await;
    assert_eq!((code, out.trim(), err.as_str()), (0, "{}", ""), "a turn without a plan ends at once");

    // last_assistant_message is null: the plan is read from the transcript.
    let hook = start_hook(&sandbox, "codex-stop", &input("codex-stop-plan.json", &repo, Some(&transcript)));
    let told = requested(&mut window).await;
    assert_eq!((told["files"].clone(), told["asked_by"].clone()), (json!(["plan.md"]), json!("codex")));
    let id = told["review_id"].as_str().expect("an id").to_owned();
    cli_ok(&sandbox, &["review", "comment", &id, "plan.md:4", "Hourly is too slow for sales"]);
    cli_ok(&sandbox, &["review", "submit", &id, "--request-changes"]);
    let (code, out, err) = finish(hook).await;
    assert_eq!(code, 0, "{err}");
    golden("codex-stop-block.golden.json", &out);
    let blocked: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(blocked["decision"], "block");
    let reason = blocked["reason"].as_str().expect("a reason");
    assert!(reason.contains("   > 2. Refresh them every hour\n   Hourly is too slow for sales"), "{reason}");
    assert!(reason.contains("new <proposed_plan> block"), "{reason}");

    // Codex goes on because of the hook: the same plan again is answered at once.
    let (code, out, _) =
        run_hook(&sandbox, "codex-stop", &input("codex-stop-plan-again.json", &repo, Some(&transcript))).await;
    assert_eq!((code, out.trim()), (0, "{}"));

    // The revised plan is round 2 of the same review; approving ends the turn.
    let hook = start_hook(&sandbox, "codex-stop", &input("codex-stop-plan-revised.json", &repo, Some(&transcript)));
    let told = requested(&mut window).await;
    assert_eq!((told["review_id"].as_str(), told["round"].as_u64()), (Some(id.as_str()), Some(2)));
    cli_ok(&sandbox, &["review", "comment", &id, "plan.md:2", "Log each refresh"]);
    cli_ok(&sandbox, &["review", "submit", &id, "--approve"]);
    let (code, out, err) = finish(hook).await;
    assert_eq!((code, out.trim()), (0, "{}"), "{err}");

    // Approved with a comment: the person's next prompt carries it, once.
    let prompt = input("codex-prompt.json", &repo, None);
    let (code, out, err) = run_hook(&sandbox, "codex-prompt", &prompt).await;
    assert_eq!(code, 0, "{err}");
    let added: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(added["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit", "{out}");
    let context = added["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("Log each refresh"), "{out}");
    let (code, out, _) = run_hook(&sandbox, "codex-prompt", &prompt).await;
    assert_eq!((code, out.trim()), (0, "{}"), "the notes are handed over once");
}

#[tokio::test]
async fn a_folder_outside_any_repository_is_its_own_workspace() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let folder = sandbox.dir.path().join("scratch");
    std::fs::create_dir_all(&folder).expect("folder");
    let folder = std::fs::canonicalize(&folder).expect("real");
    let mut window = sandbox.editor("vscode", &[&folder]).await;
    let hook = start_hook(&sandbox, "claude-plan", &input("claude-plan-1.json", &folder, None));
    let told = requested(&mut window).await;
    assert_eq!(told["workspace"], json!(folder));
    let id = told["review_id"].as_str().expect("an id").to_owned();
    cli_ok(&sandbox, &["review", "submit", &id, "--approve"]);
    let (code, out, _) = finish(hook).await;
    assert!(code == 0 && out.contains("\"behavior\":\"allow\""), "{out}");
}

#[tokio::test]
async fn bad_input_to_every_hook_exits_1_with_a_message_and_nothing_on_stdout() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = sandbox.repo("shop", &[("README.md", "shop\n")]);
    let mut no_plan: Value = serde_json::from_str(&input("claude-plan-1.json", &repo, None)).expect("JSON");
    no_plan["tool_input"].as_object_mut().expect("object").remove("plan");
    let mut wrong_event: Value = serde_json::from_str(&input("codex-stop-no-plan.json", &repo, None)).expect("JSON");
    wrong_event["hook_event_name"] = json!("PostToolUse");
    let mut relative: Value = serde_json::from_str(&input("claude-post-plan.json", &repo, None)).expect("JSON");
    relative["cwd"] = json!("src");
    let cases: Vec<(&str, String, &str)> = vec![
        ("claude-plan", "not json".into(), "stdin is not JSON"),
        ("claude-plan", "".into(), "stdin is empty"),
        ("claude-plan", "[1]".into(), "not an object"),
        ("claude-plan", no_plan.to_string(), "tool_input.plan is missing"),
        ("claude-plan", json!({"hook_event_name": "PermissionRequest"}).to_string(), "the field session_id is missing"),
        ("claude-post-plan", "{".into(), "stdin is not JSON"),
        ("claude-post-plan", relative.to_string(), "the field cwd is not an absolute path"),
        ("codex-stop", wrong_event.to_string(), "this hook answers Stop"),
        (
            "codex-stop",
            json!({"hook_event_name": "Stop", "session_id": 7}).to_string(),
            "the field session_id is a number",
        ),
    ];
    for (hook, stdin, why) in cases {
        let (code, out, err) = run_hook(&sandbox, hook, &stdin).await;
        assert_eq!(code, 1, "{hook} on {stdin:?}: {out}{err}");
        assert_eq!(out, "", "{hook} on {stdin:?} prints nothing");
        assert!(err.starts_with(&format!("parley hook {hook}: bad input from the host: ")), "{err}");
        assert!(err.contains(why), "{hook} on {stdin:?}: {err}");
    }
    let inbox: Value = serde_json::from_str(&cli_ok(&sandbox, &["inbox", "--json"])).expect("JSON");
    assert_eq!(inbox["rounds"], json!([]), "no round was opened");
}

/// `parley hooks install` with HOME in the sandbox.
fn install(sandbox: &Sandbox, home: &Path, cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = sandbox
        .command("parley")
        .args(["hooks", "install"])
        .args(args)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("run parley hooks install");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn backups(folder: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .expect("folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".bak"))
        .collect();
    found.sort();
    found
}

#[test]
fn hooks_install_merges_the_entries_keeping_everything_else_once_with_a_backup() {
    let sandbox = Sandbox::new();
    let home = sandbox.dir.path().join("home");
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("folder")).expect("folder");
    let old = "{\n  // my settings\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PostToolUse\": [\n      { \"matcher\": \"Write\", \"hooks\": [{ \"type\": \"command\", \"command\": \"cargo fmt\" }] }\n    ]\n  }\n}\n";
    std::fs::write(&settings, old).expect("settings");
    let parley = std::fs::canonicalize(bin("parley")).expect("real");

    // Printed, nothing written.
    let (code, out, err) = install(&sandbox, &home, &home, &["claude"]);
    assert_eq!(code, 0, "{err}");
    let printed: Value = serde_json::from_str(&out).expect("the entries as JSON");
    assert_eq!(printed["hooks"]["PermissionRequest"][0]["matcher"], "ExitPlanMode");
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), old);

    let (code, out, err) = install(&sandbox, &home, &home, &["claude", "--write"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Added Parley's claude hooks to"), "{out}");
    let new = std::fs::read_to_string(&settings).expect("read");
    assert!(new.contains("// my settings") && new.contains("\"command\": \"cargo fmt\""), "{new}");
    let merged: Value = serde_json::from_str(&strip_comment(&new)).expect("JSON");
    assert_eq!(merged["model"], "opus");
    let plan = &merged["hooks"]["PermissionRequest"][0];
    assert_eq!(plan["matcher"], "ExitPlanMode");
    assert_eq!(plan["hooks"][0]["command"], format!("{} hook claude-plan", parley.display()));
    assert!(plan["hooks"][0]["timeout"].as_u64().is_some_and(|t| t >= 86_400), "{plan}");
    let post = merged["hooks"]["PostToolUse"].as_array().expect("array");
    assert_eq!(post.len(), 3, "the user's own hook kept beside Parley's two: {post:?}");
    assert_eq!(post[1]["hooks"][0]["command"], format!("{} hook claude-post-plan", parley.display()));
    // A person's messages reach the agent after any tool, at the end of its
    // turn and with the person's next prompt.
    assert!(post[2].get("matcher").is_none(), "every tool: {post:?}");
    assert_eq!(post[2]["hooks"][0]["command"], format!("{} hook claude-post-tool", parley.display()));
    assert_eq!(merged["hooks"]["Stop"][0]["hooks"][0]["command"], format!("{} hook claude-stop", parley.display()));
    assert_eq!(
        merged["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        format!("{} hook claude-prompt", parley.display())
    );
    let saved = backups(settings.parent().expect("folder"));
    assert_eq!(saved.len(), 1);
    assert_eq!(std::fs::read_to_string(&saved[0]).expect("backup"), old);

    // Again: left alone, no second backup.
    let (code, out, _) = install(&sandbox, &home, &home, &["claude", "--write"]);
    assert!(code == 0 && out.contains("already has Parley's claude hooks"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), new);
    assert_eq!(backups(settings.parent().expect("folder")).len(), 1);

    // Codex: a new ~/.codex/hooks.json.
    let (code, _, err) = install(&sandbox, &home, &home, &["codex", "--write"]);
    assert_eq!(code, 0, "{err}");
    let codex: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".codex/hooks.json")).expect("created")).expect("JSON");
    assert_eq!(codex["hooks"]["Stop"][0]["hooks"][0]["command"], format!("{} hook codex-stop", parley.display()));
    assert_eq!(
        codex["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        format!("{} hook codex-prompt", parley.display())
    );
    assert!(codex["hooks"]["Stop"][0]["hooks"][0]["timeout"].as_u64().is_some_and(|t| t >= 86_400));

    // doctor says so.
    let out =
        sandbox.command("parley").args(["doctor"]).env("HOME", &home).current_dir(&home).output().expect("doctor");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("claude hooks") && said.contains("runs claude-plan and claude-post-plan"), "{said}");
    assert!(said.contains("codex hooks") && said.contains("runs codex-stop"), "{said}");
}

fn strip_comment(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

#[test]
fn hooks_install_refuses_bad_settings_and_a_project_outside_a_repository() {
    let sandbox = Sandbox::new();
    let home = sandbox.dir.path().join("home");
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("folder")).expect("folder");
    let broken = "{\n  \"model\": \"opus\"\n  \"hooks\": {}\n}\n";
    std::fs::write(&settings, broken).expect("settings");
    let (code, out, err) = install(&sandbox, &home, &home, &["claude", "--write"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains(&settings.display().to_string()) && err.contains("line 2"), "the line at fault: {err}");
    assert!(err.contains("was left as it is"), "{err}");
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), broken, "unchanged");
    assert!(backups(settings.parent().expect("folder")).is_empty());

    let (code, _, err) = install(&sandbox, &home, &home, &["claude", "--project", "--write"]);
    assert_eq!(code, 1);
    assert!(err.contains("is not inside a git repository"), "{err}");

    // In a repository: the shared file names parley, not this machine's path.
    let repo = sandbox.repo("shop", &[("README.md", "shop\n")]);
    let (code, _, err) = install(&sandbox, &home, &repo, &["claude", "--project", "--write"]);
    assert_eq!(code, 0, "{err}");
    let shared: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join(".claude/settings.json")).expect("written"))
            .expect("JSON");
    assert_eq!(shared["hooks"]["PermissionRequest"][0]["hooks"][0]["command"], "parley hook claude-plan");
}

#[tokio::test]
async fn a_round_said_answered_in_the_host_ends_the_waiting_hook_without_a_decision() {
    use parley_protocol::hello::{ClientInfo, Hello, PositionEncoding, Role};
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let repo = sandbox.repo("shop", &[("README.md", "shop\n")]);
    let mut window = sandbox.editor("vscode", &[&repo]).await;
    let hook = start_hook(&sandbox, "claude-plan", &input("claude-plan-1.json", &repo, None));
    let told = requested(&mut window).await;
    let id = told["review_id"].as_str().expect("an id").to_owned();
    let params = json!({ "review_id": id, "round": 1 });

    // Plan methods are for the hooks' (cli) connections, not editors.
    let refused = window.request("plan/answered_elsewhere", params.clone()).await;
    assert_eq!(refused.error.map(|e| e.code), Some(-32015), "an editor may not end a plan round");

    let hello = Hello {
        protocol: parley_protocol::PROTOCOL_VERSION,
        role: Role::Cli,
        client: ClientInfo { name: "parley hook".into(), version: "test".into() },
        pid: Some(std::process::id()),
        cwd: None,
        workspaces: Vec::new(),
        editor_id: None,
        position_encoding: PositionEncoding::Utf32,
        env: Default::default(),
        parent_pid: None,
        agent_name: None,
    };
    let mut cli = Editor::connect(&sandbox.socket, &hello).await;
    let answered = cli.call("plan/answered_elsewhere", params.clone()).await;
    assert_eq!(answered["state"], "answered_elsewhere");
    assert_eq!(changed(&mut window).await["state"], "answered_elsewhere");
    // The waiting hook gives no decision: Claude Code's own dialog decides.
    let (code, out, err) = finish(hook).await;
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("ended without a verdict") && err.contains("answered the plan in the agent's host"), "{err}");
    let again = cli.call("plan/answered_elsewhere", params).await;
    assert_eq!(again["state"], "already_ended");
}
