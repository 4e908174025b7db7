//! A stranger's repository and a crafted export, through the real daemon and
//! CLI: links planted in the audit tree are never followed, an audit folder
//! outside the repository is refused (the round still succeeds), Parley's
//! own untracked audit files cost no git process each, and an import with a
//! bad record imports nothing.

use std::path::{Path, PathBuf};

use parley_tests::{Sandbox, git};
use serde_json::{Value, json};

fn fake_reviewer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake_reviewer.py")
}

/// The user's own config: the stand-in reviewer, and `extra`.
fn configure(sandbox: &Sandbox, extra: &str) {
    let config = format!("[review]\nreviewer = [\"python3\", {:?}, \"good\"]\n{extra}", fake_reviewer().display());
    let dir = sandbox.dir.path().join("config/parley");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), config).expect("config");
}

/// A repository at `name` whose first commit holds `plant` (run in the
/// repository before committing), with an uncommitted change after it.
fn repository(sandbox: &Sandbox, name: &str, plant: impl FnOnce(&Path)) -> PathBuf {
    let repo = sandbox
        .repo(name, &[("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"), (".gitignore", ".fake-reviewer/\n")]);
    plant(&repo);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "start"]);
    std::fs::write(repo.join("src/lib.rs"), "pub fn answer() -> u32 {\n    41 + 1\n}\n").expect("edit");
    repo
}

/// Runs `parley` in `dir`: (exit code, stdout, stderr).
fn parley(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = sandbox.command("parley").current_dir(dir).args(args).output().expect("run parley");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `parley review request` in `repo`, its JSON result.
fn round(sandbox: &Sandbox, repo: &Path) -> Value {
    let (code, out, err) = parley(sandbox, repo, &["review", "request", "--summary", "Compute the answer", "--json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    serde_json::from_str(&out).expect("JSON")
}

/// Today's date as session ids start with it (the daemon's local time).
fn today() -> String {
    let out = std::process::Command::new("date").arg("+%Y-%m-%d").output().expect("run date");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Every file under `dir`, as paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).expect("read dir").flatten() {
            let path = entry.path();
            if entry.file_type().expect("file type").is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(dir).expect("under dir").display().to_string());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn links_planted_in_the_audit_tree_are_replaced_never_written_through() {
    let sandbox = Sandbox::new();
    configure(&sandbox, "");
    let victim = sandbox.dir.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").expect("victim");
    let date = today();
    let repo = repository(&sandbox, "proj", |repo| {
        // Links under the first session ids of the day, at every name the
        // writer used for its temporary files and at the final names.
        for n in 1..=3 {
            let dir = repo.join(format!(".reviews/sessions/{date}-{n:03}"));
            std::fs::create_dir_all(dir.join("round-1")).expect("mkdir");
            for name in [
                ".request.json.partial",
                "request.json",
                ".changes.diff.partial",
                "round-1/.review.json.partial",
                "round-1/review.json",
            ] {
                std::os::unix::fs::symlink(&victim, dir.join(name)).expect("plant");
            }
        }
        for name in [".latest.json.partial", "latest.json"] {
            std::os::unix::fs::symlink(&victim, repo.join(".reviews").join(name)).expect("plant");
        }
    });
    let _daemon = sandbox.start_daemon();
    let result = round(&sandbox, &repo);

    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "precious\n", "the file outside was written");
    let id = result["review_id"].as_str().expect("id");
    let dir = repo.join(".reviews/sessions").join(id);
    assert_eq!(result["audit_path"], json!(dir.join("round-1")), "{result}");
    assert!(result.get("warnings").is_none(), "{result}");
    for name in ["request.json", "changes.diff", "round-1/review.json", "round-1/changes.diff", "../../latest.json"] {
        let meta = std::fs::symlink_metadata(dir.join(name)).expect(name);
        assert!(meta.is_file(), "{name} is a file of its own, not the planted link");
    }
    let request: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("request.json")).expect("read")).expect("JSON");
    assert_eq!(request["summary"], json!("Compute the answer"));
}

#[test]
fn an_audit_folder_that_is_a_link_or_outside_the_repository_is_refused() {
    let sandbox = Sandbox::new();
    configure(&sandbox, "");
    let elsewhere = sandbox.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("elsewhere");
    let repo = repository(&sandbox, "linked", |repo| {
        std::os::unix::fs::symlink(&elsewhere, repo.join(".reviews")).expect("plant");
    });
    let _daemon = sandbox.start_daemon();
    let result = round(&sandbox, &repo);
    assert_eq!(result["verdict"], json!("lgtm_with_suggestions"), "the review itself is done: {result}");
    assert!(result.get("audit_path").is_none(), "{result}");
    let warnings = result["warnings"].to_string();
    for wanted in ["the audit trail was not written", ".reviews is a symbolic link", "set audit_dir under [review]"] {
        assert!(warnings.contains(wanted), "{wanted:?} is not in {warnings}");
    }
    assert_eq!(files_under(&elsewhere), Vec::<String>::new(), "written through the link");
    let (code, _, err) = parley(&sandbox, &repo, &["sessions", "show", result["review_id"].as_str().expect("id")]);
    assert_eq!(code, Some(0), "the review was stored: {err}");

    // The user's own config names a folder two levels above the repository:
    // refused before anything runs, saying what to write instead.
    configure(&sandbox, "audit_dir = \"../..\"\n");
    let nested = repository(&sandbox, "deep/down/proj", |_| {});
    let before = files_under(sandbox.dir.path());
    let (code, out, err) = parley(&sandbox, &nested, &["review", "request", "--summary", "Compute the answer"]);
    assert_eq!(code, Some(1), "{out}{err}");
    for wanted in ["review.audit_dir", "is not a folder inside the repository", ".reviews"] {
        assert!(err.contains(wanted), "{wanted:?} is not in {err}");
    }
    let written: Vec<String> = files_under(sandbox.dir.path())
        .into_iter()
        .filter(|f| !before.contains(f) && !["deep/down/proj/", "linked/", "data/"].iter().any(|d| f.starts_with(d)))
        .collect();
    assert_eq!(written, Vec::<String>::new(), "nothing is written outside the repository");
}

/// `git`, as the daemon finds it, logging each run to `log`.
fn logging_git(sandbox: &Sandbox) -> (PathBuf, PathBuf) {
    let path = std::env::var_os("PATH").expect("PATH");
    let real = std::env::split_paths(&path).map(|dir| dir.join("git")).find(|git| git.is_file()).expect("git");
    let bin = sandbox.dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let log = sandbox.dir.path().join("git.log");
    let script = format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n", log.display(), real.display());
    std::fs::write(bin.join("git"), script).expect("script");
    std::process::Command::new("chmod").arg("+x").arg(bin.join("git")).status().expect("chmod");
    let mut dirs = vec![bin.clone()];
    dirs.extend(std::env::split_paths(&path));
    (std::env::join_paths(dirs).expect("PATH").into(), log)
}

#[test]
fn parleys_own_untracked_audit_files_are_not_diffed_and_new_files_cost_no_process_each() {
    let sandbox = Sandbox::new();
    configure(&sandbox, "ignored_files = [\"build/\"]\n");
    let repo = repository(&sandbox, "proj", |_| {});
    // Earlier rounds' audit tree, neither committed nor ignored, and an
    // untracked build folder the config leaves out.
    for n in 1..=150 {
        let dir = repo.join(format!(".reviews/sessions/2026-01-01-{n:03}/round-1"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("review.json"), "{}\n").expect("write");
        std::fs::write(dir.join("changes.diff"), "+x\n").expect("write");
        std::fs::create_dir_all(repo.join("build")).expect("mkdir");
        std::fs::write(repo.join(format!("build/out-{n}.o")), "object\n").expect("write");
    }
    // And new files that belong to the change.
    for n in 1..=40 {
        std::fs::create_dir_all(repo.join("src/new")).expect("mkdir");
        std::fs::write(repo.join(format!("src/new/mod{n}.rs")), format!("pub const N: u32 = {n};\n")).expect("write");
    }
    let (path, log) = logging_git(&sandbox);
    let _daemon = sandbox.start_daemon_with(|daemon| {
        daemon.env("PATH", &path);
    });
    let result = round(&sandbox, &repo);
    let audit = PathBuf::from(result["audit_path"].as_str().expect("the audit trail was written"));
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(audit.join("review.json")).expect("read")).expect("JSON");
    let mut changed: Vec<String> = serde_json::from_value(stored["changed_files"].clone()).expect("changed files");
    changed.sort();
    let mut wanted: Vec<String> = (1..=40).map(|n| format!("src/new/mod{n}.rs")).collect();
    wanted.push("src/lib.rs".into());
    wanted.sort();
    assert_eq!(changed, wanted, "{stored}");
    let diff = std::fs::read_to_string(audit.join("changes.diff")).expect("read");
    assert!(diff.contains("+++ b/src/new/mod40.rs\n@@ -0,0 +1 @@\n+pub const N: u32 = 40;\n"), "{diff}");
    let runs = std::fs::read_to_string(&log).expect("git ran");
    let runs: Vec<&str> = runs.lines().collect();
    assert!(!runs.iter().any(|r| r.contains(".reviews/sessions") || r.contains("build/out")), "{runs:#?}");
    // Listing, adding to a temporary index and diffing it: not one per file.
    assert!(runs.len() < 20, "{} git processes for one round: {runs:#?}", runs.len());
}

#[test]
fn an_import_with_a_bad_record_is_refused_whole_and_names_it() {
    let sandbox = Sandbox::new();
    configure(&sandbox, "");
    let repo = repository(&sandbox, "proj", |_| {});
    let _daemon = sandbox.start_daemon();
    let first = round(&sandbox, &repo);
    let file = sandbox.dir.path().join("export.json");
    let (code, _, err) = sandbox.cli(&["export", file.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("JSON");
    let session = export["sessions"][0].clone();
    let outside = sandbox.dir.path().join("outside/IMPORTED");
    let check = |change: &dyn Fn(&mut Value), wanted: &str| {
        // A good new session first, then the bad one: neither may land.
        let mut good = session.clone();
        good["id"] = json!("2020-01-01-001");
        let mut bad = session.clone();
        change(&mut bad);
        let mut crafted = export.clone();
        crafted["sessions"] = json!([good, bad]);
        std::fs::write(&file, crafted.to_string()).expect("write");
        let (code, out, err) = sandbox.cli(&["import", file.to_str().expect("utf-8")]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(err.contains(wanted) && err.contains("nothing was imported"), "{wanted:?} is not in {err}");
        let (code, _, _) = parley(&sandbox, &repo, &["sessions", "show", "2020-01-01-001"]);
        assert_eq!(code, Some(1), "part of the file was imported");
    };
    let escape = format!("../../../../../../../..{}", outside.display());
    check(&|s| s["id"] = json!(escape), "session 2: its id");
    check(&|s| s["workspace"] = json!("relative/repo"), "its workspace \"relative/repo\" must be an absolute path");
    assert!(!outside.exists());
    let (code, _, err) = parley(&sandbox, &repo, &["sessions", "show", first["review_id"].as_str().expect("id")]);
    assert_eq!(code, Some(0), "{err}");
}
