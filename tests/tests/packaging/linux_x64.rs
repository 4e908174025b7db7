//! linux-x64, this machine's own platform: the npm package from `npm pack`
//! run by `npx`, and the Python wheel run by `uvx`, both from the local
//! files (no registry is reachable: npm's points nowhere and uv runs
//! offline), each answering `tools/list` and starting the `parley` daemon
//! it carries. `parley mcp-config HOST --via npx|uvx` writes the entries
//! these tests run. And the extension package, installed into code-server
//! with no `parley` on PATH, starts the daemon it carries, connects and
//! shows a review (`editors/vscode/test/e2e/bundled.mjs`, run as
//! tests/tests/vscode.rs runs its scenarios).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use parley_tests::{Sandbox, bin_dir, test_dep, tool_names};
use serde_json::{Value, json};

use super::{StdioServer, file_in, package};

/// The folder `scripts/package --only linux-x64` wrote into, packaged once
/// per test run.
fn packaged() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| package("linux-x64", &bin_dir(), Some("npm,wheel,vsix")))
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
        .env_remove("PARLEY_NO_SPAWN");
    // npx and uvx unpack the package first: allow for it.
    let mut server = StdioServer::start(command, Duration::from_secs(120));
    let tools = server.tools().await;
    let pid = sandbox.status()["pid"].as_u64().expect("the daemon's pid");
    let daemon = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the daemon's executable");
    server.finish().await;
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
