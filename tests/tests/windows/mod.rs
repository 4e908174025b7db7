//! The Windows build under Wine: `parley.exe` as the daemon on its named
//! pipe, two clients at once, the CLI, the shim answering MCP through the
//! pipe, one daemon per user by its lock file, data under local app data;
//! `parley service` through the user's `Run` key and `parley doctor`
//! (`service.rs`); the reviewer's Job Object through the daemon's own unit
//! tests (`reviewer.rs`).
//!
//! scripts/test cross-builds the Windows binaries once, prepares a Wine
//! prefix (with the stand-in bcryptprimitives.dll Wine 8 lacks) and names
//! the folder in `PARLEY_WINDOWS_BIN`; without it these tests fail, saying
//! to run scripts/test. Wine does not enforce a pipe's security
//! descriptor nor `FILE_FLAG_FIRST_PIPE_INSTANCE`, so that only this user
//! may connect is not checked here (the lock file, which Wine does enforce,
//! is).

mod clients;
mod daemon;
mod reviewer;
mod service;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The folder holding `parley.exe` and `parley-mcp.exe`, when scripts/test built them.
pub(super) fn windows_bin() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PARLEY_WINDOWS_BIN").filter(|v| !v.is_empty())?);
    dir.join("parley.exe").is_file().then(|| {
        WINESERVER.call_once(start_a_detached_wineserver);
        dir
    })
}

static WINESERVER: std::sync::Once = std::sync::Once::new();

/// Starts Wine's server (and its services) with no stdio of ours: the first
/// `wine` of a prefix starts them, and they would inherit that command's
/// pipes and hold them open after it ends, so reading a command's output to
/// its end would never finish.
fn start_a_detached_wineserver() {
    let quiet = |program: &str, args: &[&str]| {
        let _ =
            Command::new(program).args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status();
    };
    quiet("wineserver", &["-p"]);
    quiet("wine", &["cmd", "/c", "exit"]);
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
pub(super) use windows_bin_or_fail;

/// A daemon under Wine on a pipe of its own, with its own data folder.
pub(super) struct WineDaemon {
    pub(super) bin: PathBuf,
    pub(super) pipe: String,
    /// The data folder it was given, or none for the default.
    pub(super) data: Option<String>,
    child: Child,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl WineDaemon {
    pub(super) fn start(bin: &std::path::Path) -> WineDaemon {
        let data = format!(r"C:\users\parley-tests\{}-{}", std::process::id(), NEXT.load(Ordering::Relaxed));
        WineDaemon::start_with(bin, Some(data))
    }

    pub(super) fn start_with(bin: &std::path::Path, data: Option<String>) -> WineDaemon {
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

    pub(super) fn command(&self, exe: &str) -> Command {
        let mut command = Command::new("wine");
        command.arg(self.bin.join(exe)).env("PARLEY_SOCKET", &self.pipe).env("PARLEY_NO_SPAWN", "1");
        command
    }

    pub(super) fn parley(&self, args: &[&str]) -> Output {
        self.command("parley.exe").args(args).stdin(Stdio::null()).output().expect("wine runs parley.exe")
    }
}

impl Drop for WineDaemon {
    fn drop(&mut self) {
        let _ = self.parley(&["stop"]);
        let _ = self.child.wait();
    }
}

pub(super) fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}
