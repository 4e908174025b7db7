//! The Windows build under Wine: `parley.exe` as the daemon on its named
//! pipe, two clients at once, the CLI, the shim answering MCP through the
//! pipe, one daemon per user by its lock file, data under local app data.
//!
//! scripts/test cross-builds the Windows binaries once, prepares a Wine
//! prefix (with the stand-in bcryptprimitives.dll Wine 8 lacks) and names
//! the folder in `PARLEY_WINDOWS_BIN`; without it these tests fail, saying
//! to run scripts/test. Wine does not enforce a pipe's security
//! descriptor nor `FILE_FLAG_FIRST_PIPE_INSTANCE`, so that only this user
//! may connect is not checked here (the lock file, which Wine does enforce,
//! is).

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The folder holding `parley.exe` and `parley-mcp.exe`, when scripts/test built them.
fn windows_bin() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PARLEY_WINDOWS_BIN").filter(|v| !v.is_empty())?);
    dir.join("parley.exe").is_file().then_some(dir)
}

macro_rules! windows_bin_or_fail {
    ($what:expr) => {
        match windows_bin() {
            Some(dir) => dir,
            None => panic!(
                "cannot check {} under Wine: PARLEY_WINDOWS_BIN does not name a folder with parley.exe; \
                 run scripts/test, which cross-builds it and prepares Wine",
                $what
            ),
        }
    };
}

/// A daemon under Wine on a pipe of its own, with its own data folder.
struct WineDaemon {
    bin: PathBuf,
    pipe: String,
    /// The data folder it was given, or none for the default.
    data: Option<String>,
    child: Child,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl WineDaemon {
    fn start(bin: &std::path::Path) -> WineDaemon {
        let data = format!(r"C:\users\parley-tests\{}-{}", std::process::id(), NEXT.load(Ordering::Relaxed));
        WineDaemon::start_with(bin, Some(data))
    }

    fn start_with(bin: &std::path::Path, data: Option<String>) -> WineDaemon {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pipe = format!(r"\\.\pipe\parley-test-{}-{n}", std::process::id());
        let mut command = Command::new("wine");
        command.arg(bin.join("parley.exe")).arg("daemon").env("PARLEY_SOCKET", &pipe).env_remove("PARLEY_DATA_DIR");
        if let Some(data) = &data {
            command.env("PARLEY_DATA_DIR", data);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("wine starts parley.exe daemon");
        let daemon = WineDaemon { bin: bin.to_owned(), pipe, data, child };
        // The daemon is up once a client that may not start one gets an answer.
        for _ in 0..300 {
            if daemon.parley(&["status"]).status.success() {
                return daemon;
            }
        }
        panic!("the daemon under Wine did not answer on {}", daemon.pipe);
    }

    fn command(&self, exe: &str) -> Command {
        let mut command = Command::new("wine");
        command.arg(self.bin.join(exe)).env("PARLEY_SOCKET", &self.pipe).env("PARLEY_NO_SPAWN", "1");
        command
    }

    fn parley(&self, args: &[&str]) -> Output {
        self.command("parley.exe").args(args).stdin(Stdio::null()).output().expect("wine runs parley.exe")
    }
}

impl Drop for WineDaemon {
    fn drop(&mut self) {
        let _ = self.parley(&["stop"]);
        let _ = self.child.wait();
    }
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn socket_path_is_a_per_user_pipe() {
    let bin = windows_bin_or_fail!("the default pipe name");
    let out = Command::new("wine")
        .arg(bin.join("parley.exe"))
        .arg("socket-path")
        .env_remove("PARLEY_SOCKET")
        .stdin(Stdio::null())
        .output()
        .expect("wine runs parley.exe");
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(printed.starts_with(r"\\.\pipe\parley-") && printed.ends_with("-v1"), "{}", text(&out));
}

#[test]
fn the_daemon_serves_its_pipe_to_two_clients_at_once() {
    let bin = windows_bin_or_fail!("two clients on the daemon's pipe");
    let daemon = WineDaemon::start(&bin);
    let spawn = || daemon.command("parley.exe").arg("status").stdin(Stdio::null()).stdout(Stdio::piped()).spawn();
    let (first, second) = (spawn().expect("first client"), spawn().expect("second client"));
    for client in [first, second] {
        let out = client.wait_with_output().expect("client ends");
        let shown = text(&out);
        assert!(out.status.success(), "{shown}");
        assert!(shown.contains(&format!("socket:      {}", daemon.pipe)), "{shown}");
        let data = daemon.data.as_deref().expect("given");
        assert!(shown.contains(&format!("data:        {data}")), "{shown}");
    }
}

#[test]
fn a_second_daemon_for_the_same_pipe_is_refused_by_the_lock() {
    let bin = windows_bin_or_fail!("one daemon per pipe");
    let daemon = WineDaemon::start(&bin);
    let out = daemon.command("parley.exe").arg("daemon").stdin(Stdio::null()).output().expect("second daemon");
    assert!(!out.status.success(), "a second daemon must not run: {}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("another Parley daemon") && shown.contains(r"AppData\Local\parley"), "{shown}");
    eprintln!(
        "not checked under Wine: that the pipe admits only this user and refuses remote clients (Wine enforces neither a pipe's DACL nor remote rejection)"
    );
}

#[test]
fn the_shim_answers_tools_list_through_the_pipe() {
    let bin = windows_bin_or_fail!("the shim on the daemon's pipe");
    let daemon = WineDaemon::start(&bin);
    let mut shim = daemon
        .command("parley-mcp.exe")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wine starts parley-mcp.exe");
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wine-test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ];
    let mut stdin = shim.stdin.take().expect("piped");
    let mut stdout = std::io::BufReader::new(shim.stdout.take().expect("piped"));
    use std::io::{BufRead, Write};
    for line in lines {
        writeln!(stdin, "{line}").expect("write to the shim");
    }
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).expect("read from the shim") > 0, "the shim ended: {answers:?}");
        answers.push(line);
    }
    drop(stdin);
    let _ = shim.wait();
    assert!(answers[0].contains(r#""id":1"#) && answers[0].contains("protocolVersion"), "{}", answers[0]);
    assert!(answers[1].contains(r#""id":2"#) && answers[1].contains(r#""name":"present_review""#), "{}", answers[1]);
}

#[test]
fn the_store_and_the_pipes_files_live_under_local_app_data() {
    let bin = windows_bin_or_fail!("data under local app data");
    let daemon = WineDaemon::start_with(&bin, None);
    let out = daemon.parley(&["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    let data = status["data_dir"].as_str().expect("data_dir");
    assert!(data.ends_with(r"\AppData\Local\parley\data"), "{status}");
}
