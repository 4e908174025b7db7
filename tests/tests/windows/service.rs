//! `parley service` and `parley doctor` under Wine: the `Run` value
//! install writes (read back with Wine's own `reg`), the daemon it starts,
//! the value's command run as logon would with none of the installer's
//! environment, uninstall, and doctor on a good setup and on a `Run` value
//! naming a missing `parley.exe`.
//!
//! The value `Parley` is one per user, so these tests take turns; each uses
//! a pipe and a data folder of its own, and removes the value when done.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use super::{text, windows_bin, windows_bin_or_fail};

const RUN_KEY: &str = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run";

/// The `Run` value is the user's one: one test at a time uses it.
static RUN_VALUE: Mutex<()> = Mutex::new(());

/// A pipe and a data folder for one test, and the CLI pointed at them. On
/// drop, the service is uninstalled (which stops its daemon) and the value
/// removed, whatever the test left.
struct Setup {
    bin: PathBuf,
    pipe: String,
    data: String,
    /// A folder holding `git.exe`, a stand-in for Git for Windows (which
    /// cannot be installed under Wine here) that answers `--version` only.
    git_dir: tempfile::TempDir,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Setup {
    fn new(bin: PathBuf, name: &str) -> Setup {
        let turn = RUN_VALUE.lock().unwrap_or_else(|e| e.into_inner());
        let id = format!("{}-{name}", std::process::id());
        let git_dir = tempfile::tempdir().expect("tempdir");
        build_a_git_stand_in(git_dir.path());
        Setup {
            bin,
            pipe: format!(r"\\.\pipe\parley-service-test-{id}"),
            data: format!(r"C:\users\parley-tests\service-{id}"),
            git_dir,
            _turn: turn,
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new("wine");
        command
            .arg(self.bin.join("parley.exe"))
            .env("PARLEY_SOCKET", &self.pipe)
            .env("PARLEY_DATA_DIR", &self.data)
            .env("PARLEY_NO_SPAWN", "1")
            .env("WINEPATH", windows_path(self.git_dir.path()))
            .stdin(Stdio::null());
        command
    }

    /// Runs the CLI, its output read from files: a daemon it starts must
    /// not be able to hold a pipe of ours open (Wine hands a child its
    /// parent's Unix descriptors), which would make reading to the end wait
    /// for the daemon to exit.
    fn parley(&self, args: &[&str]) -> Output {
        let out = tempfile::tempfile().expect("a file for stdout");
        let err = tempfile::tempfile().expect("a file for stderr");
        let status = self
            .command()
            .args(args)
            .stdout(out.try_clone().expect("dup"))
            .stderr(err.try_clone().expect("dup"))
            .status()
            .expect("wine runs parley.exe");
        Output { status, stdout: read_all(out), stderr: read_all(err) }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = self.parley(&["service", "uninstall"]);
        let _ = reg(&["delete", RUN_KEY, "/v", "Parley", "/f"]);
    }
}

/// Builds `git.exe` in `dir` with mingw (which scripts/test installs for
/// the cross-build): it prints a version for `--version` and fails
/// otherwise, as git does outside a repository.
fn build_a_git_stand_in(dir: &Path) {
    let source = dir.join("git.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\n#include <string.h>\n\
         int main(int argc, char **argv) {\n\
           if (argc == 2 && strcmp(argv[1], \"--version\") == 0) { puts(\"git version 2.47.0.windows.1\"); return 0; }\n\
           fputs(\"fatal: not a git repository\\n\", stderr); return 128;\n\
         }\n",
    )
    .expect("write git.c");
    let out = Command::new("x86_64-w64-mingw32-gcc")
        .arg("-o")
        .arg(dir.join("git.exe"))
        .arg(&source)
        .output()
        .expect("mingw's gcc runs (scripts/test installs it)");
    assert!(out.status.success(), "building the git stand-in: {}", text(&out));
}

/// The line of doctor's output for check `name`.
fn doctor_line<'a>(shown: &'a str, name: &str) -> &'a str {
    shown
        .lines()
        .find(|line| line.get(6..20).map(str::trim) == Some(name))
        .unwrap_or_else(|| panic!("no {name} line:\n{shown}"))
}

fn read_all(mut file: std::fs::File) -> Vec<u8> {
    use std::io::{Read, Seek};
    let mut bytes = Vec::new();
    file.rewind().expect("rewind");
    file.read_to_end(&mut bytes).expect("read the output");
    bytes
}

/// A host path as Wine shows it to Windows programs.
fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// Wine's `reg` on the prefix's registry.
fn reg(args: &[&str]) -> Output {
    Command::new("wine").arg("reg").args(args).stdin(Stdio::null()).output().expect("wine runs reg")
}

/// The `Parley` value's data, as `reg query` prints it, if there is one.
fn run_value() -> Option<String> {
    let out = reg(&["query", RUN_KEY, "/v", "Parley"]);
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = shown.lines().find(|line| line.trim_start().starts_with("Parley"))?;
    Some(line.split_once("REG_SZ")?.1.trim().to_owned())
}

/// Waits until the daemon on the setup's pipe answers; its status.
fn wait_for_status(setup: &Setup) -> serde_json::Value {
    for _ in 0..300 {
        let out = setup.parley(&["status", "--json"]);
        if out.status.success() {
            return serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
        }
    }
    panic!("no daemon answered on {}", setup.pipe);
}

#[test]
fn install_sets_the_run_value_and_starts_the_daemon_and_uninstall_undoes_both() {
    let bin = windows_bin_or_fail!("parley service under Wine");
    let setup = Setup::new(bin.clone(), "install");
    let out = setup.parley(&["service", "install"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Parley runs (pid"), "{}", text(&out));

    let value = run_value().expect("install wrote the Run value");
    let exe = windows_path(&bin.join("parley.exe"));
    assert!(value.eq_ignore_ascii_case(&format!("\"{exe}\" daemon --logon")), "{value} vs {exe}");
    let status = wait_for_status(&setup);
    assert_eq!(status["socket"], setup.pipe.as_str(), "{status}");
    assert_eq!(status["data_dir"], setup.data.as_str(), "{status}");

    let out = setup.parley(&["service", "status"]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("Parley starts at logon") && shown.contains("The daemon runs (pid"), "{shown}");

    let out = setup.parley(&["service", "uninstall"]);
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("no longer starts at logon") && shown.contains("Stopped the daemon"), "{shown}");
    assert_eq!(run_value(), None, "uninstall removes the Run value");
    assert_eq!(setup.parley(&["status"]).status.code(), Some(3), "the daemon is stopped");

    let out = setup.parley(&["service", "status"]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(shown.contains("does not start at logon") && shown.contains("No daemon runs now"), "{shown}");
}

#[test]
fn the_run_values_command_serves_the_installed_pipe_without_the_installers_environment() {
    let bin = windows_bin_or_fail!("the Run value's command under Wine");
    let setup = Setup::new(bin, "logon");
    let out = setup.parley(&["service", "install", "--no-start"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(setup.parley(&["status"]).status.code(), Some(3), "--no-start starts nothing");

    // Run the value's command as logon would: its program and arguments,
    // and nothing of the environment `install` ran in.
    let value = run_value().expect("install wrote the Run value");
    let (program, arguments) = value.strip_prefix('"').and_then(|rest| rest.split_once('"')).expect("quoted");
    let mut logon = Command::new("wine")
        .arg(program)
        .args(arguments.split_whitespace())
        .env_remove("PARLEY_SOCKET")
        .env_remove("PARLEY_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("wine runs the Run value's command");
    let status = wait_for_status(&setup);
    assert_eq!(status["data_dir"], setup.data.as_str(), "the saved data folder: {status}");
    let log = status["log"]["path"].as_str().unwrap_or_else(|| panic!("its log goes to a file: {status}"));
    assert!(log.ends_with(".log") && log.contains(r"AppData\Local\parley"), "{status}");

    let out = setup.parley(&["service", "uninstall"]);
    assert!(text(&out).contains("Stopped the daemon"), "{}", text(&out));
    assert!(logon.wait().expect("the logon daemon ends").success());
}

#[test]
fn doctor_passes_on_a_good_setup_and_says_what_to_do_when_the_run_value_names_a_missing_exe() {
    let bin = windows_bin_or_fail!("parley doctor under Wine");
    let setup = Setup::new(bin, "doctor");
    let out = setup.parley(&["service", "install"]);
    assert!(out.status.success(), "{}", text(&out));

    let out = setup.parley(&["doctor"]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "doctor passes: {shown}");
    for (check, detail) in [
        ("pipe", setup.pipe.as_str()),
        ("daemon", "running"),
        ("lock", ""),
        ("service", "starts at logon"),
        ("data", setup.data.as_str()),
        ("git", "git version"),
        ("parley-mcp", ""),
    ] {
        let line = format!("ok    {check:<14} {detail}");
        assert!(shown.lines().any(|l| l.starts_with(&line)), "no line starting {line:?}:\n{shown}");
    }

    let missing = r"C:\nowhere\parley.exe";
    let out =
        reg(&["add", RUN_KEY, "/v", "Parley", "/t", "REG_SZ", "/d", &format!("\"{missing}\" daemon --logon"), "/f"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = setup.parley(&["doctor"]);
    let shown = text(&out);
    let line = doctor_line(&shown, "service");
    assert!(line.starts_with("warn"), "{line}");
    assert!(
        line.contains(&format!("{missing} does not exist")) && line.contains("run `parley service install`"),
        "{line}"
    );
}

#[test]
fn doctor_says_how_to_install_when_there_is_no_run_value() {
    let bin = windows_bin_or_fail!("parley doctor under Wine");
    let setup = Setup::new(bin, "absent");
    let _ = reg(&["delete", RUN_KEY, "/v", "Parley", "/f"]);
    let out = setup.parley(&["doctor"]);
    let shown = text(&out);
    let line = doctor_line(&shown, "service");
    assert!(line.starts_with("ok") && line.contains("`parley service install` starts it at every logon"), "{line}");
    let lock = doctor_line(&shown, "lock");
    assert!(lock.starts_with("ok") && lock.contains("no daemon runs"), "{lock}");
}
