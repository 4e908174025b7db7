//! The store on a hostile disk, with real file systems: a full disk, a
//! read-only one, and a data directory other users could read.
//!
//! The full and read-only disks are small tmpfs mounts, so these tests need
//! root and `mount` (CI runs as root); without them they fail saying so.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use parley_tests::{Sandbox, review_args};
use serde_json::{Value, json};

/// A tmpfs mounted for one test, unmounted when dropped.
struct Mount {
    path: PathBuf,
}

impl Mount {
    /// Mounts a tmpfs of `size` (as `mount` reads it, e.g. `4m`) at `path`.
    fn tmpfs(path: &Path, size: &str) -> Mount {
        std::fs::create_dir_all(path).expect("mount point");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0755"), "tmpfs"])
            .arg(path)
            .output()
            .expect("this test needs the `mount` command (util-linux)");
        assert!(
            out.status.success(),
            "this test needs root to mount a small tmpfs at {} (CI runs as root): {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Mount { path: path.to_owned() }
    }

    /// Remounts it read-only (nothing may have a file on it open for writing).
    fn read_only(&self) {
        let out = Command::new("mount").args(["-o", "remount,ro"]).arg(&self.path).output().expect("run mount");
        assert!(out.status.success(), "remounting read-only failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Fills it: writes a file until the disk says it is full. Answers the file.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.path.join("filler");
        let mut file = std::fs::File::create(&filler).expect("create filler");
        let chunk = vec![0x5a_u8; 64 * 1024];
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => panic!("filling the disk failed with something else than a full disk: {e}"),
            }
        }
        // Byte by byte for the last partial chunk, so not a byte is left.
        while let Ok(1) = file.write(&[0x5a]) {}
        let _ = file.sync_all();
        filler
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

fn cli_in(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = sandbox.command("parley").current_dir(dir).args(args).stdin(Stdio::null()).output().expect("run parley");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `parley feedback add`; answers the exit code, the thread id (on success)
/// and stderr.
fn add(sandbox: &Sandbox, repo: &Path, location: &str, message: &str) -> (i32, Option<String>, String) {
    let (code, out, err) = cli_in(sandbox, repo, &["feedback", "add", location, message, "--json"]);
    let id = serde_json::from_str::<Value>(&out).ok().and_then(|t| t["id"].as_str().map(str::to_owned));
    (code, id, err)
}

/// The comment bodies of the repository's open threads, in listing order.
fn bodies(sandbox: &Sandbox, repo: &Path) -> Vec<String> {
    let (code, out, err) = cli_in(sandbox, repo, &["feedback", "list", "--json"]);
    assert_eq!(code, 0, "feedback list failed: {err}");
    let listed: Value = serde_json::from_str(&out).expect("feedback list --json prints JSON");
    let threads = listed.as_array().or_else(|| listed["threads"].as_array()).expect("a list of threads").clone();
    threads.iter().map(|t| t["comments"][0]["body"].as_str().expect("a body").to_owned()).collect()
}

#[tokio::test]
async fn a_full_disk_refuses_a_write_plainly_shows_nothing_of_it_and_heals_without_a_restart() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/a.rs", "one\ntwo\nthree\n")]);
    let disk = Mount::tmpfs(&sandbox.data, "8m");
    let mut daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("vscode", &[&repo]).await;

    let (code, _, err) = add(&sandbox, &repo, "src/a.rs:1", "before the disk filled");
    assert_eq!(code, 0, "{err}");
    assert_eq!(window.next_notification().await.params["change"], json!("created"));

    let filler = disk.fill();
    // Long enough to need pages the store's log has not touched yet.
    let long = format!("while the disk is full: {}", "x".repeat(60 * 1024));
    let (code, id, err) = add(&sandbox, &repo, "src/a.rs:2", &long);
    assert_ne!(code, 0, "a write the disk refused must not be acknowledged");
    assert_eq!(id, None);
    assert!(err.contains("is full") && err.contains("free some space"), "the error says the disk is full: {err}");
    assert_eq!(bodies(&sandbox, &repo), ["before the disk filled"], "a refused write is never shown");
    // A second write fails the same way, and reading still works.
    let (code, _, err) = add(&sandbox, &repo, "src/a.rs:3", &long.replace("while", "still"));
    assert_ne!(code, 0);
    assert!(err.contains("is full"), "{err}");
    // An agent presenting a review hears the same, and the window sees none.
    let agent = sandbox.agent(&repo).await;
    let review = format!("# Review\n\n{}", "A finding worth keeping. ".repeat(4096));
    let text = agent.call_err("present_review", review_args(&review, &repo)).await;
    assert!(text.contains("is full"), "{text}");
    assert_eq!(agent.call_ok("get_feedback_summary", json!({})).await["totalThreads"], json!(1));

    std::fs::remove_file(&filler).expect("free the disk");
    let (code, _, err) = add(&sandbox, &repo, "src/a.rs:3", "after space was freed");
    assert_eq!(code, 0, "once the disk has room, writes succeed without a restart: {err}");
    // The window heard of the two acknowledged threads only.
    let next = window.next_notification().await;
    assert_eq!(next.params["thread"]["comments"][0]["body"], json!("after space was freed"), "{next:?}");
    assert_eq!(bodies(&sandbox, &repo), ["before the disk filled", "after space was freed"]);

    assert_eq!(daemon.terminate(), Some(0), "the daemon stops cleanly");
    let _daemon = sandbox.start_daemon();
    assert_eq!(
        bodies(&sandbox, &repo),
        ["before the disk filled", "after space was freed"],
        "after a restart: every acknowledged write, and nothing that was refused"
    );
}

#[tokio::test]
async fn a_daemon_started_on_a_read_only_store_says_so() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/a.rs", "one\n")]);
    let disk = Mount::tmpfs(&sandbox.data, "8m");
    let mut daemon = sandbox.start_daemon();
    assert_eq!(add(&sandbox, &repo, "src/a.rs:1", "kept").0, 0);
    assert_eq!(daemon.terminate(), Some(0));
    disk.read_only();

    let out = sandbox
        .command("parley")
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .expect("run parley daemon");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a daemon cannot serve a store it cannot write");
    assert!(err.contains("read-only file system"), "the error says the store is read-only: {err}");
    assert!(!err.contains("another Parley daemon"), "and blames no other daemon: {err}");

    // A client starting the daemon hears that it exited, and how to see why.
    let (code, _, err) = cli_in(&sandbox, &repo, &["feedback", "list"]);
    assert_ne!(code, 0);
    assert!(err.contains("exited during start-up") && err.contains("parley daemon"), "{err}");
}

/// What the daemons of this sandbox logged.
fn logs(sandbox: &Sandbox) -> String {
    std::fs::read_dir(sandbox.dir.path())
        .expect("sandbox")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("daemon-")))
        .map(|p| std::fs::read_to_string(p).expect("log"))
        .collect()
}

/// Every item in `dir` whose mode lets group or others in.
fn open_to_others(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).expect("stat");
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            found.push((path.clone(), mode));
        }
        if meta.is_dir() {
            pending.extend(std::fs::read_dir(&path).expect("read dir").map(|e| e.expect("entry").path()));
        }
    }
    found
}

#[tokio::test]
async fn the_store_is_private_to_its_user() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("app", &[("src/a.rs", "one\n")]);
    let mut daemon = sandbox.start_daemon();
    assert_eq!(add(&sandbox, &repo, "src/a.rs:1", "a secret opinion").0, 0);
    assert_eq!(daemon.terminate(), Some(0), "stopping writes a backup too: {}", logs(&sandbox));
    assert!(sandbox.data.join("backups").read_dir().expect("backups").next().is_some());
    assert_eq!(open_to_others(&sandbox.data), [], "a new data directory is 0700 and its files 0600");

    // A data directory an older Parley left open, as doctor and the daemon see it.
    for (path, mode) in [(&sandbox.data, 0o755), (&sandbox.data.join("store"), 0o755)] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let db = sandbox.data.join("store/db");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let (_, out, _) = sandbox.cli(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&out).expect("doctor --json prints JSON");
    let privacy = report["checks"].as_array().expect("checks").iter().find(|c| c["name"] == "privacy").cloned();
    let privacy = privacy.expect("doctor checks who can read the store");
    assert_eq!(privacy["outcome"], json!("warn"), "{privacy}");
    assert!(privacy["detail"].as_str().is_some_and(|d| d.contains("open to other users")), "{privacy}");

    let mut daemon = sandbox.start_daemon();
    // Answering status, it has opened the store and handles signals.
    sandbox.status();
    assert_eq!(open_to_others(&sandbox.data), [], "the daemon makes an old data directory private at start");
    assert_eq!(daemon.terminate(), Some(0), "{}", logs(&sandbox));
    let logs = logs(&sandbox);
    assert!(
        logs.contains(&format!("{} was open to other users (mode 644)", db.display())),
        "the daemon says what it changed: {logs}"
    );
    let (_, out, _) = sandbox.cli(&["doctor", "--json"]);
    assert!(out.contains("readable by you alone"), "{out}");
}
