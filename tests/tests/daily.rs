//! The `parley` command line in daily use: piped into commands that stop
//! reading early, and writing agent hosts' config files.

use std::process::Stdio;

use parley_tests::{DEADLINE, Sandbox};

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
