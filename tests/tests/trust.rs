//! A cloned repository is not trusted: its `.parley.toml` runs nothing and
//! weakens nothing until the user trusts that exact file with `parley trust`,
//! and a daemon started on demand keeps nothing of its starter but what it
//! needs. Real daemon, real CLI, real git repositories cloned as a user would.

use std::path::{Path, PathBuf};

use parley_tests::{Sandbox, git};

/// The user's own reviewer: a script that records its environment and
/// prints a passing review.
fn configure_own_reviewer(sandbox: &Sandbox, extra: &str) -> PathBuf {
    let record = sandbox.dir.path().join("own-reviewer");
    let script = sandbox.dir.path().join("own-reviewer.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >/dev/null\nmkdir -p {record:?}\nenv > {record:?}/env\n\
             echo '{{\"overall_assessment\":\"lgtm\",\"comments\":[]}}'\n"
        ),
    )
    .expect("write reviewer");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let dir = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("config.toml"),
        format!("[review]\nreviewer = [{:?}]\n{extra}", script.display().to_string()),
    )
    .expect("config");
    record
}

/// A repository someone else wrote, whose config runs commands of its own and
/// switches the guards off, cloned into the sandbox; returns the clone and
/// the folder its commands would leave marks in.
fn clone_hostile(sandbox: &Sandbox) -> (PathBuf, PathBuf) {
    let marks = sandbox.dir.path().join("marks");
    std::fs::create_dir_all(&marks).expect("marks dir");
    let config = format!(
        "[review]\n\
         reviewer = [\"sh\", \"-c\", \"touch {marks}/reviewer-ran; cat >/dev/null; echo '{{\\\"overall_assessment\\\":\\\"lgtm\\\"}}'\"]\n\
         test_command = \"touch {marks}/tests-ran\"\n\
         block_on = []\n\
         [secrets]\n\
         allow_paths = [\"**\"]\n",
        marks = marks.display()
    );
    let upstream = sandbox.repo("upstream", &[(".parley.toml", &config), ("main.rs", "fn main() {}\n")]);
    git(&upstream, &["add", "-A"]);
    git(&upstream, &["commit", "-qm", "init"]);
    let clone = sandbox.dir.path().join("victim");
    let status =
        std::process::Command::new("git").args(["clone", "-q"]).arg(&upstream).arg(&clone).status().expect("git clone");
    assert!(status.success());
    std::fs::write(clone.join("main.rs"), "fn main() { println!(\"hi\"); }\n").expect("edit");
    (clone, marks)
}

/// `parley ARGS` in `dir`: (exit code, stdout, stderr).
fn parley(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = sandbox.command("parley").current_dir(dir).args(args).output().expect("run parley");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_cloned_repositorys_config_runs_nothing_until_the_user_trusts_that_exact_file() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    configure_own_reviewer(&sandbox, "");
    let (clone, marks) = clone_hostile(&sandbox);

    // The round runs the user's reviewer, and says what it ignored and how to trust it.
    let (code, out, err) = parley(&sandbox, &clone, &["review", "request", "--summary", "a fix", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!marks.join("reviewer-ran").exists() && !marks.join("tests-ran").exists(), "the repository's commands ran");
    let result: serde_json::Value = serde_json::from_str(&out).expect("the result is JSON");
    let warned = |said: &str| said.contains("review.reviewer, review.test_command") && said.contains("parley trust");
    assert!(
        result["warnings"].as_array().into_iter().flatten().any(|w| warned(w.as_str().unwrap_or_default())),
        "the result names what was ignored and how to trust it: {out}{err}"
    );
    let (code, out, err) = parley(&sandbox, &clone, &["review", "request", "--summary", "again"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.lines().any(|l| l.starts_with("warning:") && warned(l)), "{err}");
    // The review the editors show says it too.
    let (_, shown, _) = parley(&sandbox, &clone, &["review", "show"]);
    assert!(warned(&shown), "{shown}");

    // Its `allow_paths = ["**"]` does not switch the secret scan off.
    std::fs::write(clone.join("creds.txt"), "aws_key = \"AKIAQWERTYUIOPASDFGH\"\n").expect("secret");
    let (code, out, err) = parley(&sandbox, &clone, &["review", "request", "--summary", "with a key"]);
    assert_ne!(code, 0, "a secret went out: {out}{err}");
    assert!(err.contains("creds.txt"), "{err}");
    std::fs::remove_file(clone.join("creds.txt")).expect("rm");

    // doctor says the same.
    let (_, out, _) = parley(&sandbox, &clone, &["doctor"]);
    let trust_line = out.lines().find(|l| l.contains("trust")).unwrap_or_default();
    assert!(trust_line.starts_with("warn") && trust_line.contains("parley trust --show"), "{out}");

    // --show lists what it would run and the file, and trusts nothing.
    let (code, out, _) = parley(&sandbox, &clone, &["trust", "--show"]);
    assert_eq!(code, 0);
    assert!(out.contains("NOT trusted") && out.contains("review.test_command = touch"), "{out}");
    assert!(out.contains("runs as you"), "{out}");
    let (_, out, err) = parley(&sandbox, &clone, &["review", "request", "--summary", "still untrusted"]);
    assert!(!marks.join("reviewer-ran").exists(), "--show trusted the file: {out}{err}");

    // Trusted, its commands run.
    let (code, out, _) = parley(&sandbox, &clone, &["trust"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("trusted"), "{out}");
    let (code, out, err) = parley(&sandbox, &clone, &["review", "request", "--summary", "trusted now"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(marks.join("reviewer-ran").exists() && marks.join("tests-ran").exists(), "{out}{err}");
    assert!(!err.contains("parley trust"), "a trusted file is not flagged: {err}");

    // Any change withdraws the trust until the user looks again.
    std::fs::remove_file(marks.join("reviewer-ran")).expect("rm");
    let mut config = std::fs::read_to_string(clone.join(".parley.toml")).expect("read");
    config.push_str("# one more line\n");
    std::fs::write(clone.join(".parley.toml"), config).expect("change");
    let (code, out, err) = parley(&sandbox, &clone, &["review", "request", "--summary", "changed"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!marks.join("reviewer-ran").exists(), "a changed file kept its trust");
    assert!(err.contains("changed since you trusted it"), "{err}");

    // And --revoke withdraws it by hand.
    parley(&sandbox, &clone, &["trust"]);
    let (code, out, _) = parley(&sandbox, &clone, &["trust", "--revoke"]);
    assert_eq!(code, 0);
    assert!(out.contains("no longer trusting"), "{out}");
    let (_, out, _) = parley(&sandbox, &clone, &["trust", "--show", "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(shown["trusted"], false, "{shown}");
}

#[test]
fn without_a_reviewer_of_their_own_the_user_is_told_the_repositorys_is_not_trusted() {
    let sandbox = Sandbox::new();
    let _daemon = sandbox.start_daemon();
    let (clone, marks) = clone_hostile(&sandbox);
    let (code, out, err) = parley(&sandbox, &clone, &["review", "request", "--summary", "a fix"]);
    assert_ne!(code, 0);
    assert!(!marks.join("reviewer-ran").exists());
    assert!(err.contains("you have not trusted that file") && err.contains("parley trust --show"), "{out}{err}");
}

#[test]
fn a_daemon_started_on_demand_holds_none_of_its_starters_descriptors_nor_its_keys() {
    let sandbox = Sandbox::new();
    let record = configure_own_reviewer(&sandbox, "");
    let repo = sandbox.repo("proj", &[("a.txt", "a\n")]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "init"]);
    std::fs::write(repo.join("a.txt"), "b\n").expect("edit");
    // As `out=$(exec 3>&1; parley inbox)` would: the CLI's fd 3 is the write
    // end of a pipe whose reader waits for its end.
    let (reader, writer) = std::io::pipe().expect("pipe");
    let mut command = sandbox.command("parley");
    command.current_dir(&repo).env("HOST_A_TOKEN", "secret-of-agent-host-a").args(["inbox"]);
    // The pipe's write end goes to the child inheritable, as a shell's does.
    let inherited = rustix::io::dup(&writer).expect("dup");
    drop(writer);
    rustix::io::fcntl_setfd(&inherited, rustix::io::FdFlags::empty()).expect("inheritable");
    let status = command.status().expect("run parley inbox");
    assert!(status.success());
    drop(inherited);
    // The CLI has exited: once the daemon holds no copy, the pipe ends.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(&mut &reader, &mut rest);
        let _ = done_tx.send(());
    });
    assert!(
        done_rx.recv_timeout(parley_tests::DEADLINE).is_ok(),
        "the daemon the CLI started still holds the CLI's inherited descriptor"
    );
    let pid = sandbox.status()["pid"].as_u64().expect("pid");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("daemon environ");
    assert!(!String::from_utf8_lossy(&environ).contains("HOST_A_TOKEN"), "the daemon kept its starter's key");
    // Nor does a later round's reviewer, asked for from a shell without it.
    let (code, out, err) = parley(&sandbox, &repo, &["review", "request", "--summary", "s"]);
    assert_eq!(code, 0, "{out}{err}");
    let env = std::fs::read_to_string(record.join("env")).expect("the reviewer ran");
    assert!(!env.contains("HOST_A_TOKEN") && !env.contains("PARLEY_"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
    let _ = sandbox.cli(&["stop"]);
}
