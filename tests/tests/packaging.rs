//! Parley installed the way MCP hosts start servers: the npm package from
//! `npm pack` run by `npx`, and the Python wheel run by `uvx`, both from the
//! local files `scripts/package` writes (no registry is reachable: npm's
//! points nowhere and uv runs offline), each answering `tools/list` and
//! starting the `parley` daemon it carries. `parley mcp-config HOST --via
//! npx|uvx` writes the entries these tests run. And the linux-x64 VS Code
//! extension package, installed into code-server with no `parley` on PATH,
//! starts the daemon it carries, connects and shows a review
//! (`editors/vscode/test/e2e/bundled.mjs`, run as tests/tests/vscode.rs runs
//! its scenarios).
//!
//! To keep the test command quick, the packages hold the debug binaries this
//! test run uses (`scripts/package --binaries target/debug`, stripped), not a
//! release build; the wheel's shim is compiled by maturin in the dev profile
//! in its own `target/wheel`. Needs npm, maturin and uv from `.test-deps/py`,
//! and vsce, code-server and Chromium, as scripts/test installs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use parley_tests::{RawShim, Sandbox, bin_dir, repo_root, test_dep, tool_names};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The folder `scripts/package --only linux-x64` wrote into, packaged once
/// per test run.
fn packaged() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let dist = bin_dir().join("package-tests");
        let _ = std::fs::remove_dir_all(&dist);
        let py = test_dep("py/bin");
        let path = format!("{}:{}", py.display(), std::env::var("PATH").unwrap_or_default());
        let out = Command::new(repo_root().join("scripts/package"))
            .args(["--only", "linux-x64", "--kinds", "npm,wheel,vsix", "--binaries"])
            .arg(bin_dir())
            .arg("--out")
            .arg(&dist)
            .env("PATH", path)
            .stdin(Stdio::null())
            .output()
            .expect("run scripts/package");
        assert!(
            out.status.success(),
            "scripts/package failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        dist
    })
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
fn file_in(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("read dist").path())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(found.len(), 1, "one {prefix}…{suffix} in {}: {found:?}", dir.display());
    found.into_iter().next().expect("one file")
}

/// `parley mcp-config HOST --via VIA`'s entry for a JSON host: (command, args).
fn entry_via(sandbox: &Sandbox, host: &str, via: &str) -> (String, Vec<String>) {
    let (code, out, err) = sandbox.cli(&["mcp-config", host, "--via", via]);
    assert_eq!(code, 0, "{err}");
    let config: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    let entry = &config["mcpServers"]["parley"];
    let args = entry["args"].as_array().expect("args").iter().map(|a| a.as_str().expect("text").to_owned()).collect();
    (entry["command"].as_str().expect("command").to_owned(), args)
}

/// Starts `command` as a host would (no `PARLEY_DAEMON`: the shim starts the
/// `parley` beside it), asks for its tools, and returns them with the
/// daemon's executable; stops the daemon.
async fn tools_through(sandbox: &Sandbox, mut command: tokio::process::Command) -> (Vec<String>, PathBuf) {
    let repo = sandbox.repo("app", &[("a.txt", "a\n")]);
    command
        .current_dir(&repo)
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("XDG_CONFIG_HOME", sandbox.dir.path().join("config"))
        .env_remove("PARLEY_DAEMON")
        .env_remove("PARLEY_NO_SPAWN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("start the packaged shim");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    // npx and uvx unpack the package first: allow for it.
    let deadline = std::time::Duration::from_secs(120);
    let mut ask = async |line: String, answered: bool| -> Option<Value> {
        stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write to the shim");
        if !answered {
            return None;
        }
        let answer = tokio::time::timeout(deadline, lines.next_line())
            .await
            .expect("the packaged shim answered in time")
            .expect("read the shim")
            .expect("the shim's stdout is open");
        Some(serde_json::from_str(&answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}")))
    };
    let hello = ask(RawShim::initialize(1), true).await.expect("an answer");
    assert_eq!(hello["result"]["serverInfo"]["name"], json!("parley"), "{hello}");
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(), false).await;
    let listed =
        ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string(), true).await.expect("an answer");
    let tools = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {listed}"))
        .iter()
        .map(|tool| tool["name"].as_str().expect("a tool's name").to_owned())
        .collect();
    let pid = sandbox.status()["pid"].as_u64().expect("the daemon's pid");
    let daemon = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the daemon's executable");
    drop(stdin);
    let (code, _, err) = sandbox.cli(&["stop"]);
    assert_eq!(code, 0, "{err}");
    (tools, daemon)
}

#[tokio::test]
async fn npx_runs_the_npm_package_from_its_tarballs() {
    let dist = packaged().join("npm");
    let main = file_in(&dist, "parley-mcp-0", ".tgz");
    let platform = file_in(&dist, "parley-mcp-linux-x64-", ".tgz");
    let sandbox = Sandbox::new();
    let (command, args) = entry_via(&sandbox, "claude-code", "npx");
    assert_eq!((command.as_str(), args.as_slice()), ("npx", &["-y".to_owned(), "parley-mcp".to_owned()][..]));

    // The entry's own command, with the package taken from the local
    // tarballs instead of the registry (which is unreachable).
    let npm_home = sandbox.dir.path().join("npm");
    let mut npx = tokio::process::Command::new(&command);
    npx.args(&args[..args.len() - 1])
        .arg("--offline")
        .arg(format!("--package={}", main.display()))
        .arg(format!("--package={}", platform.display()))
        .arg(&args[args.len() - 1])
        .env("npm_config_cache", npm_home.join("cache"))
        .env("npm_config_userconfig", npm_home.join("npmrc"))
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_update_notifier", "false");
    let (tools, daemon) = tools_through(&sandbox, npx).await;
    assert_eq!(tools, tool_names(), "the npm package serves Parley's tools");
    assert!(
        daemon.starts_with(npm_home.join("cache")) && daemon.ends_with("parley-mcp-linux-x64/bin/parley"),
        "the shim started the parley from the platform package, not {}",
        daemon.display()
    );
}

#[tokio::test]
async fn uvx_runs_the_wheel_from_its_file() {
    let wheel = file_in(&packaged().join("wheels"), "parley_mcp-", "_x86_64.whl");
    let sandbox = Sandbox::new();
    let (command, args) = entry_via(&sandbox, "cursor", "uvx");
    assert_eq!((command.as_str(), args.as_slice()), ("uvx", &["parley-mcp".to_owned()][..]));

    let uv_home = sandbox.dir.path().join("uv");
    let mut uvx = tokio::process::Command::new(test_dep("py/bin").join(&command));
    uvx.arg("--offline")
        .arg("--from")
        .arg(&wheel)
        .args(&args)
        .env("UV_CACHE_DIR", uv_home.join("cache"))
        .env("UV_TOOL_DIR", uv_home.join("tools"))
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env("UV_NO_CONFIG", "1");
    let (tools, daemon) = tools_through(&sandbox, uvx).await;
    assert_eq!(tools, tool_names(), "the wheel serves Parley's tools");
    assert!(
        daemon.starts_with(uv_home.join("cache")) && daemon.ends_with("bin/parley"),
        "the shim started the parley from the wheel, not {}",
        daemon.display()
    );
}

#[test]
fn mcp_config_writes_the_npx_and_uvx_forms_for_every_format() {
    let sandbox = Sandbox::new();
    let (code, out, err) = sandbox.cli(&["mcp-config", "vscode", "--via", "npx"]);
    assert_eq!(code, 0, "{err}");
    let config: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(config["servers"]["parley"], json!({"type": "stdio", "command": "npx", "args": ["-y", "parley-mcp"]}));
    let (code, out, err) = sandbox.cli(&["mcp-config", "codex", "--via", "uvx"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("[mcp_servers.parley]\ncommand = \"uvx\"\nargs = [\"parley-mcp\"]\n"), "{out}");
    let (code, _, err) = sandbox.cli(&["mcp-config", "claude-code", "--via", "npx", "--socket"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("claude mcp add parley -e 'PARLEY_SOCKET="), "{err}");
    assert!(err.contains(" -- npx -y parley-mcp"), "the claude line carries the arguments: {err}");
    let (code, _, err) = sandbox.cli(&["mcp-config", "cursor", "--via", "pip"]);
    assert_eq!(code, 2, "an unknown way is a usage error: {err}");
    assert!(err.contains("npx") && err.contains("uvx"), "the error lists the ways: {err}");
}

#[test]
fn the_linux_x64_extension_package_runs_the_parley_it_carries_in_vs_code() {
    let vsix = file_in(&packaged().join("vscode"), "parley-linux-x64-", ".vsix");
    crate::vscode::run_packaged_scenario("bundled.mjs", &vsix);
}
