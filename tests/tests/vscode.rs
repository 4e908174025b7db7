//! The VS Code extension (`editors/vscode`): its unit tests under `node --test`,
//! and its end-to-end runs in a real VS Code (code-server in headless Chromium,
//! driven by Playwright) against the real daemon and the real `parley-mcp`
//! played by the official MCP TypeScript SDK (`editors/vscode/test/e2e/run.mjs`,
//! `human.mjs`: a person reviewing an agent's rounds, `agents.mjs`: asking
//! a chosen agent and reviewing an agent's plans, `terminal.mjs`: a
//! question typed into the terminal an agent runs in, `walkthrough.mjs`: an
//! agent's walkthrough with its diagram, comments, diff and buttons,
//! `ide.mjs`: an agent's symbol queries and diagnostics answered by VS
//! Code's TypeScript, and `pullRequest.mjs`: pulling and pushing a GitHub
//! pull request, against the tests' fake GitHub).
//!
//! Needs what scripts/test installs: the extension's npm packages, the built
//! `.vsix`, Node 24, code-server, playwright-core and Debian's chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::SystemTime;

use parley_tests::fake_github::{self, FakeGitHub};
use parley_tests::{Sandbox, bin, git};

/// One code-server and Chromium at a time: two at once on a small machine make
/// both slow enough to miss their waits.
static IN_A_BROWSER: Mutex<()> = Mutex::new(());

const INSTALL: &str = "run scripts/test (it installs the extension's dependencies, Node 24, code-server, playwright-core and chromium, and packages the extension)";

fn extension_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/vscode").canonicalize().expect("editors/vscode exists")
}

/// The newest modification time of the files under `dir`.
fn newest(dir: &Path) -> SystemTime {
    let mut latest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).expect("read a source directory") {
        let entry = entry.expect("a directory entry");
        let path = entry.path();
        let modified =
            if path.is_dir() { newest(&path) } else { entry.metadata().and_then(|m| m.modified()).expect("mtime") };
        latest = latest.max(modified);
    }
    latest
}

fn report(what: &str, output: &Output) -> String {
    format!(
        "{what} failed ({})\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn node(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("node");
    command.args(args).current_dir(dir).env_remove("PARLEY_EDITOR_ID").env_remove("PARLEY_SOCKET");
    command
}

/// The pure modules (hub client and codec, reference links, range tracking, UTF-16 positions, thread views).
#[test]
fn extension_unit_tests_pass() {
    let dir = extension_dir();
    assert!(dir.join("node_modules/esbuild").is_dir(), "the extension's npm packages are missing: {INSTALL}");
    let build = node(&dir, &["build.mjs", "--tests"]).output().expect("run node");
    assert!(build.status.success(), "{}", report("building the unit tests", &build));
    let run = node(&dir, &["--test", "dist/test/unit/"]).output().expect("run node --test");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{}", report("node --test", &run));
    assert!(stdout.contains("# fail 0") && !stdout.contains("# pass 0"), "node --test ran no tests:\n{stdout}");
}

/// Runs the end-to-end scenario `script` (under `test/e2e/`) against the packaged extension.
fn run_scenario(script: &str) {
    run_scenario_with(script, &[]);
}

/// Runs the scenario `script` with `env` added to its environment (and so to the window's).
fn run_scenario_with(script: &str, env: &[(&str, &str)]) {
    let dir = extension_dir();
    let vsix = dir.join("parley.vsix");
    let built = std::fs::metadata(&vsix)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("{} is missing: {INSTALL}", vsix.display()));
    let sources = newest(&dir.join("src"))
        .max(newest(&dir.join("media")))
        .max(std::fs::metadata(dir.join("package.json")).and_then(|m| m.modified()).expect("package.json"));
    assert!(built >= sources, "{} is older than the extension's sources: {INSTALL}", vsix.display());
    run_packaged_scenario_with(script, &vsix, env);
}

/// Runs the end-to-end scenario `script` (under `test/e2e/`) against the extension package `vsix`
/// (tests/tests/packaging.rs passes a per-platform one).
pub(crate) fn run_packaged_scenario(script: &str, vsix: &Path) {
    run_packaged_scenario_with(script, vsix, &[]);
}

fn run_packaged_scenario_with(script: &str, vsix: &Path, env: &[(&str, &str)]) {
    let _one_at_a_time = IN_A_BROWSER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = extension_dir();
    let run = node(&dir, &[&format!("test/e2e/{script}")])
        .env("PARLEY_BIN", bin("parley"))
        .env("PARLEY_MCP_BIN", bin("parley-mcp"))
        .env("PARLEY_VSIX", vsix)
        .envs(env.iter().copied())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{}", report(&format!("the end-to-end run {script} in code-server"), &run));
    assert!(stdout.contains(" passed, 0 failed"), "the end-to-end run {script} printed no summary:\n{stdout}");
}

/// What a person and an agent do together in a real VS Code window.
#[test]
fn extension_works_in_a_real_vs_code() {
    run_scenario("run.mjs");
}

/// A person reviews an agent's change round after round while the agent waits
/// for the verdict: comments on both sides of the diff, a suggestion, request
/// changes, the changes since round 1, approve.
#[test]
fn a_person_reviews_an_agents_rounds_in_vs_code() {
    run_scenario("human.mjs");
}

/// A person asks a chosen one of two agents about selected lines and sees
/// where the question stands (waiting, delivered, read, answered; an agent
/// that left, and the question sent to another), then reviews Claude Code's
/// plans through the real plan hook: changes requested with a suggestion,
/// the revision approved with comments, and a plan answered in the host.
#[test]
fn a_person_asks_agents_and_reviews_plans_in_vs_code() {
    run_scenario("agents.mjs");
}

/// A question waiting for an agent whose host runs in the window's integrated
/// terminal is typed there only once the person confirms the line shown; an
/// agent running elsewhere is never offered it.
#[test]
fn a_person_types_a_question_into_the_agents_terminal_in_vs_code() {
    run_scenario("terminal.mjs");
}

/// An agent's walkthrough finds a TypeScript function's declaration and its
/// uses through the window's language server, and get_diagnostics reads
/// TypeScript's errors (for a file the window had not opened too), fresh
/// after the agent fixes the file on disk.
#[test]
fn an_agents_symbols_and_diagnostics_come_from_vs_codes_language_server() {
    run_scenario("ide.mjs");
}

/// A window whose extension cannot reach the socket (its PARLEY_SOCKET points
/// nowhere) reaches the daemon through `parley.attach`, the real
/// `parley attach --stdio` (which starts the daemon), shows a review an agent
/// presents, and after `parley stop` reconnects through a new child to the
/// daemon the agent starts.
#[test]
fn the_extension_reaches_its_daemon_through_parley_attach() {
    run_scenario("attach.mjs");
}

/// An agent presents a walkthrough: the panel shows it in order with its
/// diagram drawn as an SVG by the bundled mermaid (no request leaves the
/// machine, the panel's policy stays strict), a comment that could not be
/// placed with its reason, each comment's icon a codicon drawn from the font
/// the extension ships, the placed comments as threads in the editor
/// reached step by step (and a step taken while the panel shows a review
/// bringing the walkthrough back at that step), the gitdiff's files opening their diff, and a button
/// whose message reaches the agent while the panel shows it waiting,
/// delivered, then read.
#[test]
fn an_agent_walks_a_person_through_its_change_in_vs_code() {
    run_scenario("walkthrough.mjs");
}

/// A person on a linked pull request in VS Code: the status bar names it,
/// Pull Review Comments from GitHub brings a teammate's thread onto its line
/// in the editor, and Push to GitHub Pull Request shows what would go (the
/// person's new thread on its line, with its first line) and, with "Push and
/// comment", sends it as a submitted review. A daemon without a token
/// first: the window's pull says what to do (code-server hides its
/// GITHUB_TOKEN from extensions, so the window has none to hand over).
#[test]
fn a_person_pulls_and_pushes_a_pull_request_in_vs_code() {
    let sandbox = Sandbox::new();
    let lib = "//! The app.\n\npub fn login(user: &str) -> bool {\n    !user.is_empty()\n}\n\npub fn logout() {}\n";
    let repo = sandbox.repo("app", &[("src/lib.rs", lib)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "the pull request's head"]);
    let head = Command::new("git").arg("-C").arg(&repo).args(["rev-parse", "HEAD"]).output().expect("git rev-parse");
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let fake = FakeGitHub::start();
    fake.hub().open_pull("octo", "app", 7, &head);
    fake.hub().add_thread(7, "src/lib.rs", 3..=3, "RIGHT", "Rename this to login_user", "mona");

    let workspace = repo.to_str().expect("a UTF-8 path");
    run_scenario_with(
        "pullRequest.mjs",
        &[("PARLEY_E2E_WORKSPACE", workspace), ("PARLEY_GITHUB_API", &fake.url), ("GITHUB_TOKEN", fake_github::TOKEN)],
    );

    let hub = fake.hub();
    let pushed = hub.pushed_threads(7);
    assert_eq!(pushed.len(), 1, "one thread pushed: {pushed:#?}");
    let thread = &pushed[0];
    assert_eq!(
        (thread.path.as_str(), thread.line, thread.start_line, thread.side.as_str()),
        ("src/lib.rs", Some(7), None, "RIGHT")
    );
    assert_eq!(thread.comments[0].body, "logout needs a test\nSee the other tests for the pattern");
    assert_eq!(hub.reviews.len(), 1, "one review: {:#?}", hub.reviews);
    assert_eq!(hub.reviews[0].state, "COMMENTED", "submitted with Push and comment");
    assert!(
        hub.requests.iter().all(|r| r.authorization.as_deref() == Some(&format!("Bearer {}", fake_github::TOKEN))),
        "every request carried the window's token"
    );
}
