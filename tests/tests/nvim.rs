//! The Neovim plugin (`editors/nvim`) in a real headless Neovim against the
//! real daemon, shim and CLI. Each test runs one busted spec
//! (`editors/nvim/spec/*_spec.lua`) inside `nvim --headless` and plays the
//! other side: it presents reviews, answers threads and asks for human
//! reviews as an agent (rmcp on the real `parley-mcp`), reads threads with the
//! CLI, and restarts the daemon.
//!
//! The two sides meet at named marks on a Unix socket (one JSON object per
//! line, `{"mark": …, "data": …}`): Neovim says where it got to, the test says
//! what it did. Either side waits with a deadline and fails loudly; a failing
//! spec ends Neovim, and the test fails with busted's TAP report.
//!
//! Needs Debian's `neovim` and `lua-busted`; scripts/test installs them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use parley_tests::{DEADLINE, Sandbox, bin, git, review_args, test_dep};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::UnixListener;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

const INSTALL: &str = "run scripts/test (it installs neovim and lua-busted)";

/// Where the plugin lives.
fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/nvim").canonicalize().expect("editors/nvim exists")
}

/// The directory holding busted's Lua modules; fails the test when busted is missing.
fn busted_dir() -> PathBuf {
    let candidates = ["/usr/share/lua/5.1", "/usr/local/share/lua/5.1"];
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|dir| dir.join("busted/runner.lua").is_file())
        .unwrap_or_else(|| panic!("busted (Debian's lua-busted) is missing: {INSTALL}"))
}

fn check_nvim() {
    let works = std::process::Command::new("nvim")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(works, "nvim is missing: {INSTALL}");
}

/// A headless Neovim running one spec, and the test's end of the mark link.
struct Nvim {
    spec: &'static str,
    child: tokio::process::Child,
    listener: UnixListener,
    /// The mark link, once the spec has connected (at its first mark).
    link: Option<(Lines<BufReader<OwnedReadHalf>>, OwnedWriteHalf)>,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Nvim {
    /// Starts `nvim --headless` in `cwd` on `spec` (a file in editors/nvim/spec)
    /// with the sandbox's socket and `repo` in its environment.
    fn start(sandbox: &Sandbox, spec: &'static str, cwd: &Path, repo: &Path) -> Nvim {
        check_nvim();
        let busted = busted_dir();
        let plugin = plugin_dir();
        let dir = sandbox.dir.path();
        let link = dir.join(format!("{}.sock", spec.trim_end_matches(".lua")));
        let listener = UnixListener::bind(&link).expect("bind the mark socket");
        let stdout = dir.join(format!("{spec}.out"));
        let stderr = dir.join(format!("{spec}.err"));
        let home = dir.join("home");
        std::fs::create_dir_all(&home).expect("create a home for nvim");
        let mut command = tokio::process::Command::new("nvim");
        command
            .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
            .arg(format!("luafile {}", plugin.join("spec/run.lua").display()))
            .current_dir(cwd)
            .env("PARLEY_SPEC", plugin.join("spec").join(spec))
            .env("PARLEY_BUSTED_LUA", busted)
            .env("PARLEY_TEST_DRIVER", &link)
            .env("PARLEY_TEST_REPO", repo)
            .env("PARLEY_SOCKET", &sandbox.socket)
            .env("PARLEY_DATA_DIR", &sandbox.data)
            .env("PARLEY_BIN", bin("parley"))
            .env("PARLEY_TEST_TSLS", test_dep("node/node_modules/.bin/typescript-language-server"))
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env_remove("PARLEY_EDITOR_ID")
            .env_remove("PARLEY_NO_SPAWN")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).expect("nvim stdout file"))
            .stderr(std::fs::File::create(&stderr).expect("nvim stderr file"))
            .kill_on_drop(true);
        let child = command.spawn().expect("start nvim");
        Nvim { spec, child, listener, link: None, stdout, stderr }
    }

    /// The mark link, accepting the spec's connection if it has not come yet.
    async fn link(&mut self) -> &mut (Lines<BufReader<OwnedReadHalf>>, OwnedWriteHalf) {
        if self.link.is_none() {
            let accepted = tokio::select! {
                accepted = tokio::time::timeout(DEADLINE, self.listener.accept()) => Some(accepted),
                _ = self.child.wait() => None,
            };
            let Some(accepted) = accepted else {
                self.fail("nvim exited before its spec connected to the test".into()).await
            };
            let stream = match accepted {
                Ok(Ok((stream, _))) => stream,
                Ok(Err(e)) => panic!("accepting nvim's mark link: {e}"),
                Err(_) => self.fail(format!("nvim did not connect to the test within {DEADLINE:?}")).await,
            };
            let (read, writer) = stream.into_split();
            self.link = Some((BufReader::new(read).lines(), writer));
        }
        self.link.as_mut().expect("just connected")
    }

    fn report(spec: &str, stdout: &Path, stderr: &Path) -> String {
        let out = std::fs::read_to_string(stdout).unwrap_or_default();
        let err = std::fs::read_to_string(stderr).unwrap_or_default();
        format!("--- busted report for {spec} ---\n{out}\n--- nvim stderr ---\n{err}")
    }

    /// Fails the test with Neovim's report, after giving it a moment to finish writing it.
    async fn fail(&mut self, why: String) -> ! {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        let _ = self.child.start_kill();
        panic!("{}: {why}\n{}", self.spec, Nvim::report(self.spec, &self.stdout, &self.stderr));
    }

    /// Waits for the spec to reach `mark`; returns the data it sent with it.
    async fn reached(&mut self, mark: &str) -> Value {
        let (marks, _) = self.link().await;
        let next = tokio::time::timeout(DEADLINE, marks.next_line()).await;
        let line = match next {
            Ok(Ok(Some(line))) => line,
            Ok(_) => self.fail(format!("nvim stopped before reaching {mark:?}")).await,
            Err(_) => self.fail(format!("nvim did not reach {mark:?} within {DEADLINE:?}")).await,
        };
        let message: Value = serde_json::from_str(&line).expect("marks are JSON");
        if message["mark"] != json!(mark) {
            self.fail(format!("nvim reached {} where {mark:?} was expected", message["mark"])).await;
        }
        message["data"].clone()
    }

    /// Tells the spec that the test did `mark`.
    async fn tell(&mut self, mark: &str, data: Value) {
        let mut line = json!({ "mark": mark, "data": data }).to_string();
        line.push('\n');
        let (_, writer) = self.link().await;
        let written = writer.write_all(line.as_bytes()).await;
        if written.is_err() {
            self.fail(format!("nvim went away before it was told {mark:?}")).await;
        }
    }

    /// Waits for the spec to end and requires every test in it to pass.
    async fn finish(mut self) {
        let status = match tokio::time::timeout(DEADLINE, self.child.wait()).await {
            Ok(status) => status.expect("wait for nvim"),
            Err(_) => self.fail(format!("nvim did not exit within {DEADLINE:?}")).await,
        };
        let tap = std::fs::read_to_string(&self.stdout).unwrap_or_default();
        let passed = tap.lines().filter(|l| l.starts_with("ok ")).count();
        let failed = tap.lines().filter(|l| l.starts_with("not ok ")).count();
        let report = Nvim::report(self.spec, &self.stdout, &self.stderr);
        assert!(
            status.success() && failed == 0 && passed > 0,
            "{}: {passed} passed, {failed} failed ({status})\n{report}",
            self.spec
        );
        println!("{}: {passed} passed, {failed} failed", self.spec);
    }
}

const AUTH: &str = "fn main() {
    let café = \"naïve\";
    login();
}

fn validate(token: &str) -> bool {
    !token.is_empty()
}

fn logout() {
    println!(\"bye\");
}
";

#[tokio::test]
async fn nvim_connects_as_an_editor_and_reports_its_health() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    let mut daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "connect_spec.lua", &repo, &repo);

    let hello = nvim.reached("connected").await;
    let cwd = hello["cwd"].as_str().expect("nvim's cwd").to_owned();
    let status = sandbox.status();
    let mut window = status["editors"][0].clone();
    window.as_object_mut().expect("an editor entry").remove("connection_id");
    assert_eq!(status["editors"].as_array().map(Vec::len), Some(1), "{status}");
    assert_eq!(window, json!({"name": "nvim", "editor_id": "nvim-test", "workspaces": [cwd]}), "{status}");
    nvim.tell("seen", Value::Null).await;

    nvim.reached("check-without-daemon").await;
    assert_eq!(daemon.terminate(), Some(0));
    nvim.tell("daemon-stopped", Value::Null).await;
    nvim.finish().await;
}

#[tokio::test]
async fn nvim_shows_a_review_and_keeps_it_current() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "review_spec.lua", &repo, &repo);
    nvim.reached("connected").await;

    let agent = sandbox.agent(&repo).await;
    let presented = agent
        .call_ok("present_review", review_args("# Login refactor\n\nEntry point: [`src/auth.rs:3`][].\n", &repo))
        .await;
    assert_eq!(presented["delivered_to"], json!([{"editor": "nvim", "editorId": "nvim-test"}]), "{presented}");
    nvim.tell("presented", Value::Null).await;

    nvim.reached("shown").await;
    let updated = agent
        .call_ok(
            "present_review",
            json!({"content": "## Tests\n\nAll pass.\n", "baseUri": repo, "mode": "update-section", "section": "Tests"}),
        )
        .await;
    assert_eq!(updated["revision"], json!(2), "{updated}");
    nvim.tell("updated", Value::Null).await;
    nvim.finish().await;
}

#[tokio::test]
async fn nvim_jumps_from_review_references_to_the_code() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH), ("docs/notes.md", "# Notes\n")]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let content = "# Review\n\nEntry point: [`src/auth.rs:3`][], the check [`src/auth.rs:5-6`][].\n\
                   See [the logout](src/auth.rs#L9-L11), [the notes](docs/notes.md) and [`src/gone.rs:2`][].\n";
    let presented = agent.call_ok("present_review", review_args(content, &repo)).await;
    assert_eq!(presented["references"]["resolved"], json!(4), "{presented}");
    // Outside the repository: references resolve against the review's folder, not the cwd.
    let elsewhere = sandbox.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let nvim = Nvim::start(&sandbox, "jump_spec.lua", &elsewhere, &repo);
    nvim.finish().await;
}

#[tokio::test]
async fn nvim_opens_the_help_on_the_plugin_its_options_and_commands() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let nvim = Nvim::start(&sandbox, "help_spec.lua", &repo, &repo);
    nvim.finish().await;
}

#[tokio::test]
async fn nvim_warns_of_bad_options_and_keeps_the_defaults() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let nvim = Nvim::start(&sandbox, "config_spec.lua", &repo, &repo);
    nvim.finish().await;
}

/// `parley feedback list --json` for the repository, parsed.
fn cli_threads(sandbox: &Sandbox, repo: &Path) -> Vec<Value> {
    let workspace = repo.to_str().expect("utf-8 path");
    let (code, out, err) = sandbox.cli(&["feedback", "list", "--workspace", workspace, "--json"]);
    assert_eq!(code, 0, "parley feedback list failed: {out}{err}");
    serde_json::from_str::<Value>(&out).expect("feedback list prints JSON").as_array().cloned().unwrap_or_default()
}

/// `parley feedback add` in the repository; returns the thread id.
fn cli_add(sandbox: &Sandbox, repo: &Path, location: &str, message: &str) -> String {
    let out = sandbox
        .command("parley")
        .current_dir(repo)
        .args(["feedback", "add", location, message, "--author", "dana", "--json"])
        .output()
        .expect("run parley feedback add");
    assert!(out.status.success(), "feedback add failed: {}", String::from_utf8_lossy(&out.stderr));
    let thread: Value = serde_json::from_slice(&out.stdout).expect("JSON thread");
    thread["id"].as_str().expect("thread id").to_owned()
}

#[tokio::test]
async fn a_comment_made_in_nvim_reaches_the_cli_and_agents() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "comment_spec.lua", &repo, &repo);
    nvim.reached("connected").await;

    let created = nvim.reached("created").await;
    let id = created["id"].as_str().expect("the thread id").to_owned();
    let listed = cli_threads(&sandbox, &repo);
    assert_eq!(listed.len(), 1, "{listed:?}");
    let thread = &listed[0];
    assert_eq!(thread["id"], json!(id));
    assert_eq!(thread["path"], json!("src/auth.rs"));
    assert_eq!(thread["quote"], json!("\"naïve\""));
    // The CLI counts characters: `    let café = ` is 15 of them.
    assert_eq!(thread["range"], json!({"start": {"line": 1, "character": 15}, "end": {"line": 1, "character": 22}}));
    assert_eq!(thread["comments"][0]["body"], json!("Use an ASCII name"));
    assert_eq!(thread["comments"][0]["author"], json!("ana"));

    let agent = sandbox.agent(&repo).await;
    let feedback = agent.call_ok("get_feedback", json!({"filePath": "src/auth.rs"})).await;
    let seen = &feedback["threads"][0];
    assert_eq!(seen["id"], json!(id), "{feedback}");
    assert_eq!(seen["selectedText"], json!("\"naïve\""));
    assert_eq!((seen["range"]["startLine"].clone(), seen["range"]["endLine"].clone()), (json!(2), json!(2)));
    nvim.tell("seen", Value::Null).await;

    nvim.reached("replied").await;
    let feedback = agent.call_ok("get_feedback", json!({"filePath": "src/auth.rs"})).await;
    let mine = feedback["threads"].as_array().expect("threads").iter().find(|t| t["id"] == json!(id)).cloned();
    let mine = mine.expect("the first thread is still open");
    assert_eq!(mine["comments"][1]["body"], json!("Or keep it: it is valid UTF-8"), "{mine}");
    assert_eq!(mine["comments"][1]["author"], json!("ana"));
    nvim.tell("seen", Value::Null).await;

    nvim.reached("edited").await;
    agent.call_ok("reply_feedback", json!({"threadId": id, "body": "Kept it"})).await;
    nvim.tell("agent-replied", Value::Null).await;

    let ready = nvim.reached("ready-to-resolve").await;
    assert_eq!(ready["id"], json!(id), "the mark that followed the edit is the first thread's");
    let resolved = agent.call_ok("resolve_feedback", json!({"threadId": id})).await;
    assert_eq!(resolved, json!({"resolved": true, "threadId": id}));
    nvim.tell("resolved", Value::Null).await;
    nvim.finish().await;
    let open: Vec<Value> = cli_threads(&sandbox, &repo).into_iter().map(|t| t["quote"].clone()).collect();
    assert_eq!(
        open,
        vec![json!("    login();"), json!("fn logout() {\n    println!(\"bye\");\n}")],
        "the whole-line thread is left, and the one made in the unsaved buffer was anchored on disk"
    );
}

#[tokio::test]
async fn changes_to_threads_show_up_in_nvim_live() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    let _daemon = sandbox.start_daemon();
    let validate = cli_add(&sandbox, &repo, "src/auth.rs:6-8", "Handle empty tokens");
    let mut nvim = Nvim::start(&sandbox, "threads_spec.lua", &repo, &repo);
    nvim.tell("ids", json!({"validate": validate})).await;
    nvim.reached("shown").await;

    let logout = cli_add(&sandbox, &repo, "src/auth.rs:10-12", "Log out everywhere");
    nvim.tell("added", json!({"validate": validate, "logout": logout})).await;

    let agent = sandbox.agent(&repo).await;
    agent.call_ok("reply_feedback", json!({"threadId": validate, "body": "Done, empty tokens are refused now"})).await;
    nvim.tell("agent-replied", Value::Null).await;

    // An agent edits the file on disk, saving by rename as editors do.
    nvim.reached("ready-for-edit").await;
    let file = repo.join("src/auth.rs");
    let staged = repo.join("src/.auth.rs.tmp");
    std::fs::write(&staged, format!("// a\n// b\n{AUTH}")).expect("write");
    std::fs::rename(&staged, &file).expect("rename");
    nvim.tell("edited-on-disk", Value::Null).await;

    nvim.reached("ready-to-orphan").await;
    let function = "fn validate(token: &str) -> bool {\n    !token.is_empty()\n}\n\n";
    std::fs::write(&staged, format!("// a\n// b\n{}", AUTH.replace(function, ""))).expect("write");
    std::fs::rename(&staged, &file).expect("rename");
    nvim.tell("orphaned-on-disk", Value::Null).await;

    nvim.reached("ready-to-resolve").await;
    assert_eq!(
        agent.call_ok("resolve_feedback", json!({"threadId": logout})).await,
        json!({"resolved": true, "threadId": logout})
    );
    nvim.tell("resolved", Value::Null).await;

    nvim.reached("ready-to-reopen").await;
    let (code, out, err) = sandbox.cli(&["feedback", "reopen", &logout]);
    assert_eq!(code, 0, "{out}{err}");
    nvim.tell("reopened", Value::Null).await;

    nvim.reached("resolved-here").await;
    let open: Vec<Value> = cli_threads(&sandbox, &repo).into_iter().map(|t| t["id"].clone()).collect();
    assert_eq!(open, vec![json!(validate)], ":ParleyResolve resolved the thread in the daemon");
    nvim.finish().await;
}

#[tokio::test]
async fn an_agent_reads_the_nvim_selection() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH), ("src/other.rs", "one\ntwo\nthree\n")]);
    let _daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "selection_spec.lua", &repo, &repo);
    nvim.reached("connected").await;
    let agent = sandbox.agent(&repo).await;

    let empty = agent.call_ok("get_selection", json!({})).await;
    assert_eq!(empty["selectedText"], Value::Null, "{empty}");
    assert!(empty["message"].as_str().is_some_and(|m| m.contains("Nothing is selected in nvim")), "{empty}");
    nvim.tell("asked-empty", Value::Null).await;

    let file = repo.join("src/auth.rs");
    let naive = json!({"selectedText": "\"naïve\"", "filePath": file, "startLine": 2, "startColumn": 16,
                       "endLine": 2, "endColumn": 23, "documentLanguage": "rust", "editor": "nvim"});
    let fields = |selection: &Value| {
        let keys = [
            "selectedText",
            "filePath",
            "startLine",
            "startColumn",
            "endLine",
            "endColumn",
            "documentLanguage",
            "editor",
        ];
        keys.iter().map(|k| (k.to_string(), selection[k].clone())).collect::<serde_json::Map<_, _>>()
    };
    // Columns: Neovim sends bytes (`é` and `ï` are two each); agents get 1-based characters.
    nvim.reached("selecting").await;
    let live = agent.call_ok("get_selection", json!({})).await;
    assert_eq!(Value::Object(fields(&live)), naive, "the selection while in visual mode: {live}");
    nvim.tell("asked-live", Value::Null).await;

    nvim.reached("selected").await;
    let last = agent.call_ok("get_selection", json!({})).await;
    assert_eq!(Value::Object(fields(&last)), naive, "the last visual selection: {last}");
    nvim.tell("asked", Value::Null).await;

    nvim.reached("selected-lines").await;
    let lines = agent.call_ok("get_selection", json!({})).await;
    assert_eq!(lines["selectedText"], json!("one\ntwo"), "{lines}");
    assert_eq!(lines["filePath"], json!(repo.join("src/other.rs")));
    assert_eq!((lines["startLine"].clone(), lines["endLine"].clone()), (json!(1), json!(2)));
    nvim.tell("asked-lines", Value::Null).await;

    // Another window connects (connecting counts as focus): it answers now …
    let mut other = sandbox.editor("other", &[&repo]).await;
    other.selection = json!({"path": repo.join("src/auth.rs"), "text": "login();",
                             "start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 12}});
    let from_other = other.serve_while(agent.call_ok("get_selection", json!({}))).await;
    assert_eq!(from_other["editor"], json!("other"), "{from_other}");
    nvim.tell("other-window", Value::Null).await;

    // … until Neovim regains focus.
    nvim.reached("focused").await;
    let back = other.serve_while(agent.call_ok("get_selection", json!({}))).await;
    assert_eq!((back["editor"].clone(), back["selectedText"].clone()), (json!("nvim"), json!("one\ntwo")), "{back}");
    nvim.tell("asked-after-focus", Value::Null).await;
    nvim.finish().await;
}

#[tokio::test]
async fn nvim_catches_up_after_reconnects_and_daemon_restarts() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    let mut daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "reconnect_spec.lua", &repo, &repo);
    nvim.reached("connected").await;
    let agent = sandbox.agent(&repo).await;
    agent.call_ok("present_review", review_args("# Revision one\n", &repo)).await;
    let first = cli_add(&sandbox, &repo, "src/auth.rs:6-8", "Handle empty tokens");
    nvim.tell("first", json!({"first": first})).await;

    // Same daemon, Neovim away for a while: it replays what it missed.
    nvim.reached("offline").await;
    agent.call_ok("present_review", review_args("# Revision two\n", &repo)).await;
    agent.call_ok("reply_feedback", json!({"threadId": first, "body": "Done"})).await;
    cli_add(&sandbox, &repo, "src/auth.rs:10-12", "Log out everywhere");
    nvim.tell("changed-while-offline", Value::Null).await;
    nvim.reached("replayed").await;

    // A new daemon while Neovim was away: sequence numbers start over, so it refetches.
    nvim.reached("offline-again").await;
    drop(agent);
    assert_eq!(daemon.terminate(), Some(0));
    daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    agent.call_ok("present_review", review_args("# Revision three\n", &repo)).await;
    agent.call_ok("resolve_feedback", json!({"threadId": first})).await;
    nvim.tell("restarted", Value::Null).await;
    nvim.reached("refetched").await;

    // The daemon restarts under a connected Neovim: it reconnects by itself.
    drop(agent);
    assert_eq!(daemon.terminate(), Some(0));
    nvim.tell("stopped", Value::Null).await;
    nvim.reached("noticed").await;
    let _daemon = sandbox.start_daemon();
    nvim.tell("started", Value::Null).await;
    nvim.reached("reconnected").await;
    let agent = sandbox.agent(&repo).await;
    let presented = agent.call_ok("present_review", review_args("# Revision four\n", &repo)).await;
    assert_eq!(presented["delivered_to"], json!([{"editor": "nvim", "editorId": "nvim-test"}]), "{presented}");
    nvim.tell("presented", Value::Null).await;
    nvim.finish().await;
}

/// `AUTH` as the agent leaves it in the first round: the empty check trims
/// (a line removed, a line added) and logging out ends the session instead of
/// printing.
fn auth_round_1() -> String {
    AUTH.replace("!token.is_empty()", "!token.trim().is_empty()").replace("println!(\"bye\");", "session::end();")
}

/// The second round: the reviewer's suggestion taken, the goodbye back.
fn auth_round_2() -> String {
    AUTH.replace("!token.is_empty()", "!token.trim().is_empty() && token.len() < 4096")
        .replace("println!(\"bye\");", "println!(\"bye\");\n    session::end();")
}

#[tokio::test]
async fn a_human_reviews_an_agents_change_in_nvim_round_after_round() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH), ("docs/notes.md", "# Notes\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("src/auth.rs"), auth_round_1()).expect("edit");
    std::fs::write(repo.join("docs/notes.md"), "# Notes\n\nTokens are trimmed.\n").expect("edit");
    std::fs::write(repo.join("src/retry.rs"), "pub fn retry() {}\n").expect("add");
    let mut daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;

    // The agent asks before Neovim is open: the round waits for it.
    let question = agent
        .call_ok("add_feedback", json!({"filePath": "src/auth.rs", "startLine": 2, "body": "Is the accent intended?"}))
        .await;
    let summary = "Trim tokens before checking them";
    let pending =
        agent.call_ok("request_review", json!({"summary": summary, "reviewer": "human", "wait_seconds": 0})).await;
    assert_eq!((pending["status"].clone(), pending["round"].clone()), (json!("pending"), json!(1)), "{pending}");
    let id = pending["review_id"].as_str().expect("review_id").to_owned();
    let mut nvim = Nvim::start(&sandbox, "human_review_spec.lua", &repo, &repo);
    nvim.tell("requested", json!({"id": id, "summary": summary, "thread": question["threadId"]})).await;

    // The person drafts; the daemon restarts (the drafts are kept); a draft
    // added at the terminal shows up in Neovim, and the person removes it there.
    nvim.reached("drafted").await;
    drop(agent);
    assert_eq!(daemon.terminate(), Some(0));
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let (code, out, err) = sandbox.cli(&["review", "comment", &id, "docs/notes.md:3", "Say why", "--json"]);
    assert_eq!(code, 0, "parley review comment: {out}{err}");
    let added: Value = serde_json::from_str(&out).expect("parley review comment --json prints JSON");
    nvim.tell("drafted-elsewhere", json!({"draft": added["draft"]["id"]})).await;

    // Changes requested: the agent gets both comments, as a reviewer's findings.
    nvim.reached("submitted").await;
    let review = agent.call_ok("await_review", json!({"review_id": id, "wait_seconds": 10})).await;
    assert_eq!(review["overall_assessment"], json!("needs_changes"), "{review}");
    assert_eq!(review["verdict"], json!("needs_changes"), "{review}");
    let comments = review["comments"].as_array().expect("comments");
    let general: Vec<&Value> = comments.iter().filter(|c| c["type"] == json!("general")).collect();
    assert_eq!(general.len(), 1, "the summary: {review}");
    assert_eq!(general[0]["comment"], json!("Two things to fix"), "{review}");
    let specific: Vec<&Value> = comments.iter().filter(|c| c["type"] == json!("specific")).collect();
    assert_eq!(specific.len(), 2, "the removed draft is not sent: {review}");
    let goodbye = specific
        .iter()
        .find(|c| c["comment"].as_str().is_some_and(|c| c.ends_with("Keep saying goodbye")))
        .expect("the removed line's comment");
    assert_eq!((goodbye["file"].clone(), goodbye["line"].clone()), (json!("src/auth.rs"), json!(11)), "{goodbye}");
    assert_eq!(goodbye["severity"], json!("major"), "given in Neovim as [major]: {goodbye}");
    let quoted = goodbye["comment"].as_str().unwrap_or_default();
    assert!(quoted.contains("removed line 11") && quoted.contains("println!(\"bye\");"), "{goodbye}");
    let bound = specific.iter().find(|c| c["comment"] == json!("Bound the length too")).expect("the added line's");
    assert_eq!((bound["file"].clone(), bound["line"].clone()), (json!("src/auth.rs"), json!(7)), "{bound}");
    assert!(
        bound["suggested_fix"]
            .as_str()
            .is_some_and(|fix| fix.contains("!token.trim().is_empty() && token.len() < 4096")),
        "{bound}"
    );

    // The agent takes the suggestion and asks again.
    std::fs::write(repo.join("src/auth.rs"), auth_round_2()).expect("edit");
    let again = agent
        .call_ok(
            "request_review",
            json!({"summary": "Bounded the length, kept the goodbye", "reviewer": "human",
                   "previous_review_id": id, "wait_seconds": 0}),
        )
        .await;
    assert_eq!((again["status"].clone(), again["round"].clone()), (json!("pending"), json!(2)), "{again}");
    nvim.tell("requested-again", Value::Null).await;

    nvim.reached("approved").await;
    let review = agent.call_ok("await_review", json!({"review_id": id, "wait_seconds": 10})).await;
    assert_eq!(review["round"], json!(2), "{review}");
    assert!(
        review["overall_assessment"] == json!("lgtm") || review["overall_assessment"] == json!("lgtm_with_suggestions"),
        "{review}"
    );
    assert_eq!(review["verdict"], json!("lgtm"), "{review}");
    let done = agent.call_ok("mark_review_complete", json!({"review_id": id, "final_status": "approved"})).await;
    assert_eq!(done["rounds"], json!(2), "{done}");
    nvim.finish().await;
}

#[tokio::test]
async fn a_human_review_the_agent_cancels_closes_in_nvim() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("src/auth.rs"), auth_round_1()).expect("edit");
    let _daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "human_cancel_spec.lua", &repo, &repo);
    nvim.reached("connected").await;

    let agent = sandbox.agent(&repo).await;
    let pending = agent
        .call_ok("request_review", json!({"summary": "Log out quietly", "reviewer": "human", "wait_seconds": 0}))
        .await;
    let id = pending["review_id"].as_str().expect("review_id").to_owned();
    nvim.tell("requested", json!({"id": id})).await;

    nvim.reached("drafted").await;
    let cancelled = agent.call_ok("cancel_review", json!({"review_id": id})).await;
    assert_eq!(cancelled["cancelled"], json!(true), "{cancelled}");
    nvim.tell("cancelled", Value::Null).await;
    nvim.finish().await;
    let (code, out, err) = sandbox.cli(&["inbox", "--json"]);
    assert_eq!(code, 0, "parley inbox: {out}{err}");
    let inbox: Value = serde_json::from_str(&out).expect("parley inbox --json prints JSON");
    assert_eq!(inbox["rounds"], json!([]), "nothing waits any more: {inbox}");
}

/// Every text block of a tool's answer (a note for the agent comes after the result).
fn all_text(result: &rmcp::model::CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn a_person_asks_a_chosen_agent_in_nvim() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    let _daemon = sandbox.start_daemon();
    let alpha = sandbox.agent_with(&repo, &[("PARLEY_AGENT_NAME", "alpha")]).await;
    let beta = sandbox.agent_with(&repo, &[("PARLEY_AGENT_NAME", "beta")]).await;
    // Both are listed once their hosts said who they are.
    alpha.call_ok("get_feedback_summary", json!({})).await;
    beta.call_ok("get_feedback_summary", json!({})).await;
    let mut nvim = Nvim::start(&sandbox, "ask_spec.lua", &repo, &repo);
    nvim.reached("connected").await;

    // Asked in Neovim, beta's next tool answer carries the question; alpha's does not.
    let asked = nvim.reached("asked").await;
    let thread = asked["thread"].as_str().expect("thread id").to_owned();
    let other = all_text(&alpha.call("get_review_history", json!({})).await);
    assert!(!other.contains("Why check the token here?"), "alpha was told: {other}");
    let told = all_text(&beta.call("get_review_history", json!({})).await);
    assert!(told.contains("Why check the token here?") && told.contains(&thread), "beta was not told: {told}");
    nvim.tell("delivered", Value::Null).await;
    nvim.reached("saw-delivered").await;
    beta.call_ok("get_feedback", json!({})).await;
    nvim.tell("read", Value::Null).await;
    nvim.reached("saw-read").await;
    beta.call_ok("reply_feedback", json!({"threadId": thread, "body": "It may be empty"})).await;
    nvim.tell("answered", Value::Null).await;
    nvim.reached("saw-answered").await;

    // A question to alpha, which then leaves: resent to beta from Neovim.
    let asked = nvim.reached("asked-alpha").await;
    let second = asked["thread"].as_str().expect("thread id").to_owned();
    drop(alpha);
    nvim.tell("alpha-gone", Value::Null).await;
    nvim.reached("resent").await;
    let told = all_text(&beta.call("get_review_history", json!({})).await);
    assert!(
        told.contains("Does anyone call this?") && told.contains(&second),
        "beta was not given alpha's question: {told}"
    );
    nvim.finish().await;
}

#[tokio::test]
async fn a_waiting_message_is_typed_into_the_agents_nvim_terminal() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    let _daemon = sandbox.start_daemon();
    // An agent that does not run in Neovim's terminals.
    let outside = sandbox.agent_with(&repo, &[("PARLEY_AGENT_NAME", "outside")]).await;
    outside.call_ok("get_feedback_summary", json!({})).await;
    let mut nvim = Nvim::start(&sandbox, "type_spec.lua", &repo, &repo);

    let typed = sandbox.dir.path().join("typed.txt");
    let script = parley_tests::repo_root().join("tests/fixtures/terminal_host.sh");
    let paths = json!({"script": script, "shim": bin("parley-mcp"), "typed": typed});
    nvim.tell("start-host", paths).await;
    let running = nvim.reached("host-running").await;
    let name = running["name"].as_str().expect("the agent's name").to_owned();
    assert!(name.starts_with("claude-"), "{running}");

    let ask = |agent: &str, place: &str, question: &str| {
        let out = sandbox
            .command("parley")
            .args(["ask", "--agent", agent, place, question])
            .current_dir(&repo)
            .output()
            .expect("run parley ask");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    ask("outside", "src/auth.rs:1", "Who calls main?");
    ask(&name, "src/auth.rs:3", "Why login here?");
    nvim.tell("asked-both", Value::Null).await;
    nvim.reached("refused").await;

    let done = nvim.reached("typed").await;
    let shown = done["shown"].as_str().expect("the confirmation's text").to_owned();
    // The spec saw the host echo the line, which it writes to the file first.
    let got = std::fs::read_to_string(&typed).expect("the host wrote what was typed");
    let line = got.strip_suffix('\n').unwrap_or(&got);
    assert!(!line.contains('\n'), "one line typed: {got:?}");
    assert!(line.contains("Why login here?") && line.contains("reply_feedback"), "{got:?}");
    assert!(shown.ends_with(line), "the person was shown the very line typed: {shown:?} / {line:?}");
    let listed = sandbox
        .command("parley")
        .args(["feedback", "list", "--all", "--json"])
        .current_dir(&repo)
        .output()
        .expect("run parley feedback list");
    let threads: Value = serde_json::from_slice(&listed.stdout).expect("feedback list --json prints JSON");
    let thread = threads.as_array().and_then(|all| all.iter().find(|t| t["id"] == done["thread"])).expect("the thread");
    assert_eq!(
        (&thread["deliveries"][0]["state"], &thread["deliveries"][0]["via"]),
        (&json!("delivered"), &json!("terminal"))
    );
    // The agent elsewhere still has its message waiting: nothing typed for it.
    let told = all_text(&outside.call("get_feedback_summary", json!({})).await);
    assert!(told.contains("Who calls main?") && !told.contains("Why login here?"), "{told}");
    nvim.finish().await;
}

/// Starts `parley hook claude-plan` fed the fixture `name` (its folder filled
/// in, and `edit` applied), as Claude Code runs it.
fn plan_hook(sandbox: &Sandbox, repo: &Path, name: &str, edit: impl Fn(String) -> String) -> std::process::Child {
    use std::io::Write as _;
    let fixture = parley_tests::repo_root().join("tests/fixtures/hooks").join(name);
    let text = std::fs::read_to_string(fixture).expect("the plan fixture");
    let input = edit(text.replace("@CWD@", &repo.to_string_lossy()));
    let mut child = sandbox
        .command("parley")
        .args(["hook", "claude-plan"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the plan hook");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write the hook's input");
    child
}

/// What a plan hook printed, once it exited 0.
async fn hook_output(child: std::process::Child) -> Value {
    let done = tokio::task::spawn_blocking(move || child.wait_with_output());
    let out = tokio::time::timeout(DEADLINE, done).await.expect("the hook answers").expect("join").expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the plan hook failed: {stderr}");
    serde_json::from_slice(&out.stdout).expect("the plan hook prints JSON")
}

/// The plan round waiting on the person, once the hook opened it.
async fn waiting_plan(sandbox: &Sandbox, round: u64) -> String {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let (code, out, err) = sandbox.cli(&["inbox", "--json"]);
        assert_eq!(code, 0, "parley inbox: {out}{err}");
        let inbox: Value = serde_json::from_str(&out).expect("parley inbox --json prints JSON");
        if let Some(found) = inbox["rounds"].as_array().and_then(|r| r.iter().find(|r| r["round"] == json!(round))) {
            return found["review_id"].as_str().expect("review id").to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "plan {round} never waited on the person: {inbox}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_person_reviews_an_agents_plans_in_nvim() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH)]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    let _daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "plan_spec.lua", &repo, &repo);
    nvim.reached("connected").await;

    // Plan 1: changes requested with a suggestion; the hook denies it, quoting both.
    let hook = plan_hook(&sandbox, &repo, "claude-plan-1.json", |t| t);
    let id = waiting_plan(&sandbox, 1).await;
    nvim.tell("plan-1", json!({"id": id})).await;
    nvim.reached("changes-requested").await;
    let out = hook_output(hook).await;
    let decision = &out["hookSpecificOutput"]["decision"];
    assert_eq!(decision["behavior"], json!("deny"), "{out}");
    let message = decision["message"].as_str().unwrap_or_default();
    assert!(message.contains("Keep the rounding: invoices depend on it"), "{out}");
    assert!(message.contains("2. Round once, in `total`"), "the suggestion: {out}");

    // Plan 2, the same session: approved with a comment; the hook allows it, its input echoed.
    let hook = plan_hook(&sandbox, &repo, "claude-plan-2.json", |t| t);
    assert_eq!(waiting_plan(&sandbox, 2).await, id, "the revised plan is the next round of the same review");
    nvim.tell("plan-2", Value::Null).await;
    nvim.reached("approved").await;
    let out = hook_output(hook).await;
    let decision = &out["hookSpecificOutput"]["decision"];
    assert_eq!(decision["behavior"], json!("allow"), "{out}");
    let sent: Value = serde_json::from_str(
        &std::fs::read_to_string(parley_tests::repo_root().join("tests/fixtures/hooks/claude-plan-2.json"))
            .expect("fixture"),
    )
    .expect("fixture JSON");
    assert_eq!(decision["updatedInput"], sent["tool_input"], "{out}");

    // Plan 3, answered in Claude Code: the hook is killed, and Neovim says so.
    let mut hook = plan_hook(&sandbox, &repo, "claude-plan-2.json", |t| t.replace("4. Test", "4. Ship it, then test"));
    waiting_plan(&sandbox, 3).await;
    nvim.tell("plan-3", Value::Null).await;
    nvim.reached("told-3").await;
    hook.kill().expect("kill the hook");
    hook.wait().expect("reap the hook");
    nvim.tell("killed", Value::Null).await;
    nvim.finish().await;
}

/// The walkthrough the agent presents in `a_walkthrough_is_read_stepped_through_and_answered_in_nvim`,
/// its comment on src/token.rs on `token_line`.
fn token_walkthrough(token_line: u32) -> String {
    format!(
        "# Token checks\n\nThe check is in [`src/auth.rs:6`][].\n\n\
         ```mermaid\nflowchart TD\n  main --> validate\n```\n\n\
         ```comment\nlocation: src/auth.rs:6-8\n\n`validate` now trims the token.\n```\n\n\
         ```comment\nlocation: search(\"src\", \"^(pub )?fn \")\n\nEvery function.\n```\n\n\
         ```comment\nlocation: src/token.rs:{token_line}\n\nWhere tokens come from.\n```\n\n\
         ```comment\nlocation: src/missing.rs:1\n\nGone.\n```\n\n\
         ```gitdiff\nrange: HEAD~1..HEAD\n```\n\n\
         ```action\nbutton: Run the tests\n\nPlease run the tests and tell me what fails.\n```\n\n\
         ```gitdiff\nrange: working\nexclude_staged: true\n```\n"
    )
}

#[tokio::test]
async fn a_walkthrough_is_read_stepped_through_and_answered_in_nvim() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/auth.rs", AUTH), ("notes.md", "one\n"), ("todo.md", "a\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("src/auth.rs"), AUTH.replace("!token.is_empty()", "!token.trim().is_empty()"))
        .expect("edit");
    std::fs::write(repo.join("src/token.rs"), "pub fn read_token() -> String {\n    String::from(\"t\")\n}\n")
        .expect("write");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "trim tokens"]);
    // Uncommitted: a staged change to notes.md, an unstaged one to todo.md.
    std::fs::write(repo.join("notes.md"), "one\nstaged\n").expect("edit");
    git(&repo, &["add", "notes.md"]);
    std::fs::write(repo.join("todo.md"), "a\nunstaged\n").expect("edit");
    let _daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "walkthrough_spec.lua", &repo, &repo);
    nvim.reached("connected").await;

    let agent = sandbox.agent_with(&repo, &[("PARLEY_AGENT_NAME", "guide")]).await;
    let answer = agent.call_ok("present_walkthrough", json!({"content": token_walkthrough(2)})).await;
    assert_eq!(answer["placed"], json!(2), "{answer:#}");
    let id = answer["walkthroughId"].as_str().expect("the walkthrough's id").to_owned();
    nvim.tell("presented", json!({"id": id})).await;

    // The button pressed in Neovim reaches the agent in its next tool answer, then counts as read.
    let clicked = nvim.reached("clicked").await;
    assert_eq!(clicked["agent"], json!("guide"), "the walkthrough names the agent that presented it");
    let told = all_text(&agent.call("get_feedback_summary", json!({})).await);
    assert!(told.contains("Please run the tests and tell me what fails."), "the agent was not told: {told}");
    nvim.tell("delivered", Value::Null).await;
    nvim.reached("saw-delivered").await;
    agent.call_ok("get_feedback_summary", json!({})).await;
    nvim.tell("read", Value::Null).await;

    // A reply made in Neovim to a walkthrough's comment reaches the agent too.
    nvim.reached("replied").await;
    let told = all_text(&agent.call("get_feedback_summary", json!({})).await);
    assert!(told.contains("Why trim here and not in the caller?"), "the agent was not told the reply: {told}");

    // Presented again: the answered comment stays, the other moves.
    let again = agent.call_ok("present_walkthrough", json!({"content": token_walkthrough(3)})).await;
    assert_eq!(again["revision"], json!(2), "{again:#}");
    nvim.tell("presented-again", Value::Null).await;
    nvim.finish().await;
}

const TOKEN_TS: &str = "export function readToken(): string {\n  return 'secret';\n}\n\nexport function readTokenCached(): string {\n  return readToken();\n}\n";
const APP_TS: &str = "import { readToken } from './token';\n\nconst first = readToken();\nconst count: number = first;\nexport const second = readToken() + count;\n";
const TSCONFIG: &str =
    r#"{"compilerOptions": {"strict": true, "target": "es2022", "module": "commonjs"}, "include": ["src"]}"#;

/// The places of the latest walkthrough's one comment, as `path:start-end` (0-based).
fn comment_places(sandbox: &Sandbox, repo: &Path) -> Vec<String> {
    let (code, out, err) = sandbox.cli(&["walkthrough", "show", "--json", "--workspace", &repo.display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
    let shown: Value = serde_json::from_str(&out).expect("walkthrough show --json");
    let places = shown["walkthrough"]["blocks"][0]["places"].as_array().cloned().unwrap_or_default();
    places
        .iter()
        .map(|p| format!("{}:{}-{}", p["path"].as_str().unwrap_or(""), p["start_line"], p["end_line"]))
        .collect()
}

fn comment_on(location: &str) -> Value {
    json!({"content": format!("# Tokens\n\n```comment\nlocation: {location}\n\nHere.\n```\n"), "title": "Tokens"})
}

#[tokio::test]
async fn an_agents_symbols_and_diagnostics_come_from_nvims_language_server() {
    let tsls = test_dep("node/node_modules/.bin/typescript-language-server");
    assert!(tsls.exists(), "{} is missing: run scripts/test (it installs tests/clients)", tsls.display());
    let sandbox = Sandbox::new();
    let repo = sandbox.repo(
        "web",
        &[
            ("src/token.ts", TOKEN_TS),
            ("src/app.ts", APP_TS),
            ("src/broken.ts", "export const broken: string = 42;\n"),
            ("tsconfig.json", TSCONFIG),
        ],
    );
    let _daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "ide_spec.lua", &repo, &repo);
    nvim.reached("connected").await;
    nvim.reached("ready").await;
    let agent = sandbox.agent(&repo).await;

    // The whole declaration, as the server reports it: a search of the
    // workspace would give line 0 alone.
    let answer = agent.call_ok("present_walkthrough", comment_on("findDefinition(readToken)")).await;
    assert_eq!(answer["placed"], 1, "{answer:#}");
    assert_eq!(comment_places(&sandbox, &repo), ["src/token.ts:0-2"]);
    let answer = agent.call_ok("present_walkthrough", comment_on("findReferences(readToken)")).await;
    assert_eq!(answer["placed"], 1, "{answer:#}");
    let places = comment_places(&sandbox, &repo);
    assert_eq!(places.first().map(String::as_str), Some("src/token.ts:0-0"), "{places:?}");
    for want in ["src/app.ts:0-0", "src/app.ts:2-2", "src/app.ts:4-4", "src/token.ts:5-5"] {
        assert!(places.iter().any(|p| p == want), "{want} in {places:?}");
    }

    // TypeScript's error, in the agent's terms, on the text on disk.
    let got = agent.call_ok("get_diagnostics", json!({"filePath": "src/app.ts"})).await;
    let file = &got["files"][0];
    assert_eq!(file["filePath"], json!(repo.join("src/app.ts")), "{got:#}");
    let error = file["diagnostics"].as_array().and_then(|d| d.iter().find(|d| d["code"] == json!("2322"))).cloned();
    let error = error.unwrap_or_else(|| panic!("TS2322 in {got:#}"));
    assert_eq!(
        (error["severity"].clone(), error["line"].clone(), error["column"].clone()),
        (json!("error"), json!(4), json!(7))
    );
    assert_eq!(
        (file["differsFromDisk"].clone(), file["dirty"].clone(), file["stale"].clone()),
        (json!(false), json!(false), json!(false)),
        "{got:#}"
    );

    // A file Neovim has not opened is loaded and analysed first.
    let got = agent.call_ok("get_diagnostics", json!({"filePath": "src/broken.ts"})).await;
    let codes: Vec<Value> = got["files"][0]["diagnostics"]
        .as_array()
        .map(|d| d.iter().map(|d| d["code"].clone()).collect())
        .unwrap_or_default();
    assert!(codes.contains(&json!("2322")), "{got:#}");

    // The agent fixes app.ts on disk: the buffer is reloaded and the
    // problems are the new text's.
    std::fs::write(repo.join("src/app.ts"), APP_TS.replace("count: number", "count: string")).expect("write");
    let got = agent.call_ok("get_diagnostics", json!({"filePath": "src/app.ts"})).await;
    let file = &got["files"][0];
    assert_eq!(file["diagnostics"], json!([]), "{got:#}");
    assert_eq!((file["stale"].clone(), file["differsFromDisk"].clone()), (json!(false), json!(false)), "{got:#}");
    nvim.tell("done", Value::Null).await;
    nvim.finish().await;
}

#[tokio::test]
async fn a_pull_requests_threads_show_their_origin_in_nvim() {
    use parley_tests::fake_github::{self, FakeGitHub};
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/lib.rs", "fn one() {}\nfn two() {}\nfn three() {}\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    let fake = FakeGitHub::start();
    {
        let mut hub = fake.hub();
        hub.open_pull("octo", "app", 7, "0000000000000000000000000000000000000000");
        hub.add_thread(7, "src/lib.rs", 3..=3, "RIGHT", "three needs a test", "mona");
        hub.add_thread(7, "src/lib.rs", 2..=2, "LEFT", "why remove this?", "hubot");
    }
    let _daemon = sandbox.start_daemon();
    let mut nvim = Nvim::start(&sandbox, "pull_request_spec.lua", &repo, &repo);
    nvim.reached("editing").await;
    for args in [&["pr", "link", "octo/app#7"][..], &["pr", "pull"][..]] {
        let output = sandbox
            .command("parley")
            .current_dir(&repo)
            .args(args)
            .env("PARLEY_GITHUB_API", &fake.url)
            .env("GITHUB_TOKEN", fake_github::TOKEN)
            .output()
            .expect("run parley");
        assert!(output.status.success(), "parley {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
    nvim.tell("pulled", Value::Null).await;
    nvim.finish().await;
}
