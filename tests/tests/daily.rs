//! The `parley` command line in daily use: piped into commands that stop
//! reading early, and writing agent hosts' config files.

use std::process::Stdio;

use parley_tests::{DEADLINE, Sandbox};
use serde_json::json;

/// Runs `parley args` with stdout a pipe whose reader has already gone, as
/// in `parley … | true`; returns (exit code, stderr).
async fn into_closed_pipe(sandbox: &Sandbox, cwd: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut command = tokio::process::Command::from(sandbox.command("parley"));
    command.current_dir(cwd).args(args).stdin(Stdio::null()).stdout(writer).stderr(Stdio::piped());
    command.kill_on_drop(true);
    // Not `output()`, which would pipe stdout itself.
    let child = command.spawn().expect("run parley");
    drop(command);
    let output = tokio::time::timeout(DEADLINE, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("parley {args:?} did not finish"))
        .expect("wait for parley");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[tokio::test]
async fn every_command_ends_quietly_when_its_reader_goes_away() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\nfn b() {}\n")]);
    // Without a daemon.
    for args in [&["socket-path"][..], &["mcp-config", "codex"]] {
        let (code, errors) = into_closed_pipe(&sandbox, &repo, args).await;
        assert_eq!((code, errors.as_str()), (Some(0), ""), "parley {args:?}");
    }
    let _daemon = sandbox.start_daemon();
    for line in 1..=2 {
        let (code, _, err) = sandbox.command_in(&repo, &["feedback", "add", &format!("a.rs:{line}"), "why?"]);
        assert_eq!(code, 0, "{err}");
    }
    let commands: [&[&str]; 6] = [
        &["feedback", "list"],
        &["feedback", "list", "--json"],
        &["sessions", "list"],
        &["status"],
        &["status", "--json"],
        &["export"],
    ];
    for args in commands {
        let (code, errors) = into_closed_pipe(&sandbox, &repo, args).await;
        assert_eq!((code, errors.as_str()), (Some(0), ""), "parley {args:?}");
    }
}

trait CommandIn {
    fn command_in(&self, cwd: &std::path::Path, args: &[&str]) -> (i32, String, String);
}

impl CommandIn for Sandbox {
    /// Runs `parley args` in `cwd` to its end: (exit code, stdout, stderr).
    fn command_in(&self, cwd: &std::path::Path, args: &[&str]) -> (i32, String, String) {
        let out = self.command("parley").current_dir(cwd).args(args).stdin(Stdio::null()).output().expect("run");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Runs `parley mcp-config args…` with `home` as HOME: (exit code, stdout, stderr).
fn mcp_config(
    sandbox: &Sandbox,
    home: &std::path::Path,
    cwd: &std::path::Path,
    args: &[&str],
) -> (i32, String, String) {
    let out = sandbox
        .command("parley")
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .current_dir(cwd)
        .arg("mcp-config")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run parley mcp-config");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The backups `--write` left beside `file`.
fn backups(file: &std::path::Path) -> Vec<std::path::PathBuf> {
    let name = file.file_name().expect("a file name").to_string_lossy().into_owned();
    let mut found: Vec<_> = std::fs::read_dir(file.parent().expect("a folder"))
        .expect("list the folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            n.starts_with(&format!("{name}.")) && n.ends_with(".bak")
        })
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn mcp_config_write_merges_into_the_hosts_file_and_keeps_a_backup() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\n")]);
    let home = sandbox.dir.path().join("home");
    let socket = sandbox.socket.to_string_lossy().into_owned();
    let shim = std::fs::canonicalize(parley_tests::bin("parley-mcp")).expect("shim path");
    let shim = shim.to_string_lossy().into_owned();

    // Codex: the user's settings, comments and other servers stay; a backup holds the old file.
    let codex = home.join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().expect("folder")).expect("mkdir");
    let mine = "# my Codex settings\nmodel = \"o3\" # the fast one\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
    std::fs::write(&codex, mine).expect("write config.toml");
    let (code, out, err) = mcp_config(&sandbox, &home, &repo, &["codex", "--write"]);
    assert_eq!(code, 0, "{out}{err}");
    let merged = std::fs::read_to_string(&codex).expect("read config.toml");
    assert!(merged.starts_with(mine), "the user's text is kept as it was:\n{merged}");
    let parsed: toml::Value = toml::from_str(&merged).expect("still TOML");
    assert_eq!(parsed["mcp_servers"]["parley"]["command"].as_str(), Some(shim.as_str()));
    assert_eq!(parsed["mcp_servers"]["parley"]["env"]["PARLEY_SOCKET"].as_str(), Some(socket.as_str()));
    let saved = backups(&codex);
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(std::fs::read_to_string(&saved[0]).expect("backup"), mine);
    assert!(out.contains(&saved[0].display().to_string()), "the backup is named: {out}");
    // A second run finds the entry in place and touches nothing.
    let (code, out, _) = mcp_config(&sandbox, &home, &repo, &["codex", "--write"]);
    assert_eq!((code, backups(&codex).len()), (0, 1), "{out}");
    assert!(out.contains("already"), "{out}");

    // A file that does not parse is refused, naming the line, and left alone.
    let broken = "model = \"o3\"\n[mcp_servers\ncommand = 1\n";
    std::fs::write(&codex, broken).expect("write");
    let (code, _, err) = mcp_config(&sandbox, &home, &repo, &["codex", "--write"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("config.toml") && err.contains("line 2") && err.contains("left as it is"), "{err}");
    assert_eq!(std::fs::read_to_string(&codex).expect("read"), broken);
    assert_eq!(backups(&codex).len(), 1, "no backup of a file that was not changed");

    // Zed: settings with comments and trailing commas, as Zed writes them.
    let zed = sandbox.dir.path().join("config/zed/settings.json");
    std::fs::create_dir_all(zed.parent().expect("folder")).expect("mkdir");
    let settings = "// Zed settings\n{\n  \"theme\": \"One Dark\", // mine\n  \"vim_mode\": true,\n}\n";
    std::fs::write(&zed, settings).expect("write settings");
    let (code, out, err) = mcp_config(&sandbox, &home, &repo, &["zed", "--write"]);
    assert_eq!(code, 0, "{out}{err}");
    let merged = std::fs::read_to_string(&zed).expect("read settings");
    assert!(merged.contains("\"theme\": \"One Dark\", // mine") && merged.starts_with("// Zed settings"), "{merged}");
    let entry = jsonc(&merged)["context_servers"]["parley"].clone();
    assert_eq!(entry["command"].as_str(), Some(shim.as_str()), "{merged}");
    assert_eq!(entry["env"]["PARLEY_SOCKET"].as_str(), Some(socket.as_str()), "{merged}");

    // Missing files are created, with their folders, for each remaining host.
    let cases = [
        ("cursor", home.join(".cursor/mcp.json"), "/mcpServers/parley"),
        ("claude-desktop", sandbox.dir.path().join("config/Claude/claude_desktop_config.json"), "/mcpServers/parley"),
        ("windsurf", home.join(".codeium/windsurf/mcp_config.json"), "/mcpServers/parley"),
        ("gemini", home.join(".gemini/settings.json"), "/mcpServers/parley"),
    ];
    for (host, file, pointer) in cases {
        let (code, out, err) = mcp_config(&sandbox, &home, &repo, &[host, "--write"]);
        assert_eq!(code, 0, "{host}: {out}{err}");
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{host}: {e}")))
                .expect("JSON");
        let entry = written.pointer(pointer).unwrap_or_else(|| panic!("{host}: no {pointer} in {written}"));
        assert_eq!(entry["command"].as_str(), Some(shim.as_str()), "{host}");
        assert_eq!(entry["env"]["PARLEY_SOCKET"].as_str(), Some(socket.as_str()), "{host}");
        assert!(out.contains("Created"), "{host}: {out}");
    }

    // --file writes elsewhere; a JSON file that does not parse is refused with its line.
    let other = sandbox.dir.path().join("other.json");
    std::fs::write(&other, "{\n  \"mcpServers\": {}\n  \"x\": 1\n}\n").expect("write");
    let (code, _, err) = mcp_config(&sandbox, &home, &repo, &["cursor", "--write", "--file", &other.to_string_lossy()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("other.json") && err.contains("line 2"), "{err}");
}

/// Parses JSON with comments and trailing commas, as Zed writes it.
fn jsonc(text: &str) -> serde_json::Value {
    jsonc_parser::parse_to_serde_value(text, &Default::default())
        .unwrap_or_else(|e| panic!("not JSON with comments ({e}):\n{text}"))
}

#[tokio::test]
async fn piped_review_progress_prints_each_step_once_not_every_heartbeat() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("proj", &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n")]);
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&repo)
            .status()
            .expect("run git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["add", "-A"]);
    git(&["commit", "-qm", "start"]);
    std::fs::write(repo.join("src/lib.rs"), "pub fn answer() -> u32 {\n    41 + 1\n}\n").expect("edit");
    // A reviewer that takes 5 s: the daemon reports progress every 2 s meanwhile.
    let review = r#"{"design_compliance": {"follows_architecture": true, "major_violations": []}, "comments": [], "missing_requirements": [], "overall_assessment": "lgtm"}"#;
    let script = format!("import sys, time; sys.stdin.read(); time.sleep(5); print({review:?})");
    let config = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("config.toml"), format!("[review]\nreviewer = [\"python3\", \"-c\", {script:?}]\n"))
        .expect("config");
    let _daemon = sandbox.start_daemon();
    let out = sandbox
        .command("parley")
        .current_dir(&repo)
        .args(["review", "request", "--summary", "piped"])
        .stdin(Stdio::null())
        .output()
        .expect("run parley review request");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let steps: Vec<&str> =
        err.lines().filter(|l| l.starts_with('[')).map(|l| l.split(']').next().unwrap_or_default()).collect();
    let mut unique = steps.clone();
    unique.dedup();
    assert_eq!(steps, unique, "each step once in a log:\n{err}");
    assert!(err.contains("asking the reviewer") && !err.contains("waiting for the reviewer"), "{err}");
}

#[test]
fn the_readme_installs_the_tested_dependency_versions_in_one_shared_build() {
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
        .expect("read README.md");
    let commands: Vec<&str> = readme
        .lines()
        .flat_map(|line| line.split('`'))
        .map(str::trim)
        .filter(|text| {
            text.starts_with("cargo install") || text.starts_with("cargo build") || text.starts_with("cargo run")
        })
        // Whole commands, not the prose naming them.
        .filter(|text| text.contains("--path") || text.contains("--release"))
        .collect();
    assert!(commands.iter().any(|c| c.starts_with("cargo install")), "the README says how to install");
    for command in commands {
        assert!(command.contains("--locked"), "without --locked, cargo resolves untested versions: {command}");
        if command.starts_with("cargo install") {
            assert!(command.contains("--target-dir target"), "installs share the repository's build: {command}");
        }
    }
}

#[tokio::test]
async fn feedback_add_keeps_threads_in_this_workspace_unless_told_otherwise_and_says_where_each_went() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "fn a() {}\nfn b() {}\n")]);
    let outside = sandbox.dir.path().join("outside.txt");
    std::fs::write(&outside, "far away\n").expect("write outside.txt");
    std::os::unix::fs::symlink(&outside, repo.join("link.txt")).expect("symlink");
    let elsewhere = std::fs::canonicalize(sandbox.dir.path()).expect("real sandbox path");
    let here = std::fs::canonicalize(&repo).expect("real repository path").display().to_string();
    let _daemon = sandbox.start_daemon();
    let threads = |folder: &std::path::Path| -> Vec<serde_json::Value> {
        let folder = folder.to_string_lossy();
        let (code, out, err) = sandbox.command_in(&repo, &["feedback", "list", "--workspace", &folder, "--json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).expect("a JSON list")
    };

    // A file outside the repository, by a relative path, by an absolute one,
    // or through a link that leads out: refused, saying how to go ahead.
    let absolute = format!("{}:1", outside.display());
    for location in ["../outside.txt:1", absolute.as_str(), "link.txt:1"] {
        let (code, out, err) = sandbox.command_in(&repo, &["feedback", "add", location, "over there"]);
        assert_eq!(code, 1, "{location}: {out}{err}");
        assert!(err.contains("outside this workspace") && err.contains(&here), "{err}");
        assert!(err.contains(&format!("--workspace {}", elsewhere.display())), "the way to go ahead: {err}");
    }
    assert!(threads(&elsewhere).is_empty(), "nothing was filed anywhere");

    // Inside: the answer names the thread, its place and its workspace.
    let (code, out, err) = sandbox.command_in(&repo, &["feedback", "add", "a.rs:2", "why?"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("on a.rs:2-2 in workspace") && out.trim_end().ends_with(&here), "{out}");

    // Named, a workspace that holds the file takes the thread, and lists it.
    let folder = elsewhere.to_string_lossy();
    let (code, out, err) =
        sandbox.command_in(&repo, &["feedback", "add", "--workspace", &folder, "../outside.txt:1", "over there"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("on outside.txt:1-1 in workspace {}", elsewhere.display())), "{out}");
    let filed = threads(&elsewhere);
    assert_eq!(filed.len(), 2, "the repository's thread and this one: {filed:?}");
    assert!(filed.iter().any(|t| t["path"] == "outside.txt" && t["workspace"] == folder.as_ref()), "{filed:?}");
    // A named workspace that does not hold the file is refused.
    let (code, _, err) = sandbox.command_in(&repo, &["feedback", "add", "--workspace", ".", "../outside.txt:1", "no"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not inside the workspace") && err.contains("you named"), "{err}");
    assert_eq!(threads(&elsewhere).len(), 2);
    // Listing that file from the repository says where to look, rather than "no feedback".
    let (code, out, err) = sandbox.command_in(&repo, &["feedback", "list", "../outside.txt"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("outside the workspace") && err.contains("--workspace"), "{err}");
    let (code, out, err) =
        sandbox.command_in(&repo, &["feedback", "list", "../outside.txt", "--workspace", &folder, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&out).expect("JSON").as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_mistyped_file_filter_says_there_is_no_such_file_and_a_subfolder_finds_root_paths() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo(
        "shop",
        &[("src/cart.py", "total = 1\nrounded = 2\n"), ("README.md", "shop\n"), ("src/README.md", "src\n")],
    );
    let _daemon = sandbox.start_daemon();
    let (code, _, err) = sandbox.command_in(&repo, &["feedback", "add", "src/cart.py:2", "round it"]);
    assert_eq!(code, 0, "{err}");
    let agent = sandbox.agent(&repo).await;

    // The agent: a wrong path is an error naming the file, not an empty list;
    // a real file without threads is an empty list; a folder is not a file.
    let error = agent.call_err("get_feedback", json!({"filePath": "src/nope.py"})).await;
    assert!(error.contains("no such file in this workspace: src/nope.py"), "{error}");
    let none = agent.call_ok("get_feedback", json!({"filePath": "README.md"})).await;
    assert_eq!(none["total"], json!(0), "{none}");
    let error = agent.call_err("get_feedback", json!({"filePath": "src"})).await;
    assert!(error.contains("src is a folder, not a file"), "{error}");
    let found = agent.call_ok("get_feedback", json!({"filePath": "src/cart.py"})).await;
    assert_eq!(found["total"], json!(1), "{found}");

    // The command line, from a subfolder: a path from the root is found and
    // said so; one from the current folder works as before; a wrong one is an error.
    let src = repo.join("src");
    let (code, out, err) = sandbox.command_in(&src, &["feedback", "list", "src/cart.py"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("round it") && out.contains("1 thread(s)"), "{out}");
    assert!(err.contains("no src/cart.py in the current folder") && err.contains("from the workspace root"), "{err}");
    let (code, out, err) = sandbox.command_in(&src, &["feedback", "list", "cart.py"]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert!(out.contains("round it"), "{out}");
    // A name found both ways is taken from the current folder, and said so.
    let (code, out, err) = sandbox.command_in(&src, &["feedback", "list", "README.md"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("(from the current folder)") && err.contains("exists too"), "{err}");
    let (code, out, err) = sandbox.command_in(&src, &["feedback", "list", "nope.py"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("no such file: nope.py") && err.contains("current folder"), "{err}");
    let (code, out, err) = sandbox.command_in(&repo, &["feedback", "list", "src/nope.py"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("no such file in this workspace: src/nope.py"), "{err}");
}

#[tokio::test]
async fn mcp_config_writes_project_files_that_others_can_share_and_only_inside_a_repository() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("src/a.rs", "fn a() {}\n")]);
    let home = sandbox.dir.path().join("home");
    let home_text = home.to_string_lossy().into_owned();
    let socket = sandbox.socket.to_string_lossy().into_owned();

    // From a subfolder, each project file lands at the repository's root with
    // the command by name and nothing of this user's: no home, no socket.
    for (host, file, pointer) in [
        ("claude-code", repo.join(".mcp.json"), "/mcpServers/parley"),
        ("vscode", repo.join(".vscode/mcp.json"), "/servers/parley"),
    ] {
        let (code, out, err) = mcp_config(&sandbox, &home, &repo.join("src"), &[host, "--write"]);
        assert_eq!(code, 0, "{host}: {out}{err}");
        assert!(out.contains("Created"), "{host}: {out}");
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{host}: {e}"));
        let written: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let entry = written.pointer(pointer).unwrap_or_else(|| panic!("{host}: no {pointer} in {written}"));
        assert_eq!(entry["command"], json!("parley-mcp"), "{host}: {text}");
        assert_eq!(entry.get("env"), None, "{host}: {text}");
        assert!(!text.contains(&socket) && !text.contains(&home_text), "{host}: {text}");
        assert!(err.contains("PARLEY_SOCKET is set in this shell but left out"), "{host}: {err}");
    }
    // Asked for, the socket goes in.
    let (code, out, err) = mcp_config(&sandbox, &home, &repo, &["claude-code", "--write", "--socket"]);
    assert_eq!(code, 0, "{out}{err}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join(".mcp.json")).expect("read")).expect("JSON");
    assert_eq!(written["mcpServers"]["parley"]["env"]["PARLEY_SOCKET"], json!(socket), "{written}");

    // Outside a repository, a project file is refused and nothing is written.
    let loose = sandbox.dir.path().join("loose");
    std::fs::create_dir_all(&loose).expect("mkdir");
    for host in ["claude-code", "vscode"] {
        let (code, out, err) = mcp_config(&sandbox, &home, &loose, &[host, "--write"]);
        assert_eq!(code, 1, "{host}: {out}{err}");
        assert!(err.contains("not inside a git repository") && err.contains("--file"), "{host}: {err}");
    }
    let left: Vec<_> = std::fs::read_dir(&loose).expect("list").collect();
    assert!(left.is_empty(), "nothing was written outside a repository: {left:?}");
}
