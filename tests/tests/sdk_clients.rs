//! The official MCP SDK clients driving the real shim and daemon: the
//! TypeScript SDK 1.32 (legacy `initialize`, what Claude Code and Cursor
//! speak) and the Python SDK 2.3 in `auto` mode (the modern stateless era,
//! 2026-07-28) and `legacy` mode. The scenarios live in `tests/clients/`; this
//! file runs them against a sandboxed daemon and checks through the daemon
//! that what they presented was stored.
//!
//! The SDKs are installed by `scripts/test` into `.test-deps/`; when they are
//! missing these tests fail, they never skip.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use parley_tests::{Sandbox, bin, repo_root, test_dep};
use serde_json::{Value, json};

const SOURCE: &str = "fn main() {\n    println!(\"hi\");\n}\n";

/// A whole scenario: starting Node or Python, the shim, and about a dozen
/// calls, each of which the script itself gives 10 s.
const SCENARIO_DEADLINE: Duration = Duration::from_secs(120);

/// One official client and what it presents.
struct Case {
    /// What the failure messages call it.
    name: &'static str,
    /// The interpreter and the script's arguments before SHIM and WORKSPACE.
    program: PathBuf,
    args: Vec<OsString>,
    /// Environment the script needs besides the sandbox's.
    env: Vec<(&'static str, OsString)>,
    /// The review content the script presents, verbatim.
    review: &'static str,
}

fn typescript() -> Case {
    test_dep("node/node_modules/@modelcontextprotocol/sdk/package.json");
    Case {
        name: "TypeScript SDK",
        program: PathBuf::from("node"),
        args: vec![repo_root().join("tests/clients/ts_client.mjs").into()],
        env: vec![("PARLEY_TEST_NODE_MODULES", test_dep("node/node_modules").into())],
        review: "# Review from the TypeScript SDK\n\nGood: [`src/main.rs:1`][]\nBroken: [`src/main.rs:99`][]\n",
    }
}

/// The comment each client finds; the scripts look for this text.
const FEEDBACK: &str = "Print something kinder";

fn python(mode: &str, review: &'static str) -> Case {
    Case {
        name: if mode == "auto" { "Python SDK (auto)" } else { "Python SDK (legacy)" },
        program: test_dep("py/bin/python"),
        args: vec![repo_root().join("tests/clients/py_client.py").into(), "--mode".into(), mode.into()],
        // The script runs from the source tree, which must stay free of __pycache__.
        env: vec![("PYTHONDONTWRITEBYTECODE", "1".into())],
        review,
    }
}

/// Runs one client's scenario against a fresh daemon, then reads the stored
/// review back through the CLI.
async fn check(case: Case) {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("src/main.rs", SOURCE)]);
    let _daemon = sandbox.start_daemon();
    // A human's comment for the client to read, answer and resolve.
    let added =
        sandbox.command("parley").current_dir(&repo).args(["feedback", "add", "src/main.rs:2", FEEDBACK]).output();
    assert!(added.expect("run parley feedback add").status.success(), "parley feedback add failed");

    let mut command = tokio::process::Command::new(&case.program);
    command
        .args(&case.args)
        .arg(bin("parley-mcp"))
        .arg(&repo)
        .env("PARLEY_SOCKET", &sandbox.socket)
        .env("PARLEY_DATA_DIR", &sandbox.data)
        .env("PARLEY_DAEMON", bin("parley"))
        .env("PARLEY_LOG", "debug")
        .envs(case.env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(SCENARIO_DEADLINE, command.output())
        .await
        .unwrap_or_else(|_| panic!("the {} scenario did not finish within {SCENARIO_DEADLINE:?}", case.name))
        .unwrap_or_else(|e| panic!("could not start {} for the {}: {e}", case.program.display(), case.name));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let totals = stdout.lines().rev().find(|line| line.ends_with(" failed")).unwrap_or("no totals line");
    assert!(
        output.status.success() && totals.ends_with(" passed, 0 failed") && !totals.starts_with("0 passed"),
        "the {} scenario failed ({}, {totals}).\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        case.name,
        output.status,
    );

    // Strict validators (the TypeScript SDK's ajv) read every schema without a warning.
    assert!(!stderr.contains("unknown format"), "{}: a tool schema has a non-standard format:\n{stderr}", case.name);

    // The failed calls stored nothing: the one review is the first presentation.
    let workspace = repo.to_str().expect("sandbox paths are UTF-8");
    let (code, out, err) = sandbox.cli(&["review", "show", "--json", "--workspace", workspace]);
    assert_eq!(code, 0, "parley review show failed: {out}{err}");
    let shown: Value = serde_json::from_str(&out).expect("review show --json prints JSON");
    let reviews = shown["reviews"].as_array().expect("a list of reviews");
    assert_eq!(reviews.len(), 1, "{shown:#}");
    let review = &reviews[0];
    assert_eq!(review["content"], json!(case.review), "{}: {shown:#}", case.name);
    assert_eq!(review["revision"], json!(1), "{shown:#}");
    assert_eq!(review["base_uri"], json!(repo), "{shown:#}");
    let references = review["references"].as_array().expect("a list of references");
    assert_eq!(references.len(), 2, "{shown:#}");
    assert_eq!(references[0]["resolved_path"], json!(repo.join("src/main.rs")), "{shown:#}");
    assert!(references[1]["problem"].as_str().is_some_and(|p| p.contains("line 99 is past the end")), "{shown:#}");
}

#[tokio::test]
async fn the_typescript_sdk_connects_with_initialize_and_uses_both_tools() {
    check(typescript()).await;
}

#[tokio::test]
async fn the_python_sdk_in_auto_mode_reaches_the_stateless_era_and_uses_both_tools() {
    check(python(
        "auto",
        "# Review from the Python SDK (auto)\n\nGood: [`src/main.rs:1`][]\nBroken: [`src/main.rs:99`][]\n",
    ))
    .await;
}

#[tokio::test]
async fn the_python_sdk_in_legacy_mode_connects_with_initialize_and_uses_both_tools() {
    check(python(
        "legacy",
        "# Review from the Python SDK (legacy)\n\nGood: [`src/main.rs:1`][]\nBroken: [`src/main.rs:99`][]\n",
    ))
    .await;
}
