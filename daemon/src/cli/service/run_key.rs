//! `parley service` on Windows: the daemon started at logon through the value
//! `Parley` under the user's
//! `HKCU\Software\Microsoft\Windows\CurrentVersion\Run`, which needs no
//! administrator (Windows has no per-user service manager to ask; a real
//! Windows service would run as another account and need elevation). The
//! value runs this `parley.exe` as `daemon --logon`, which takes the
//! environment from the settings file `install` wrote beside it (see
//! `logon.rs`), leaves the console Windows opened for it and logs to the
//! file beside the pipe. Nothing restarts a daemon that stops: agents'
//! `parley-mcp` start one on demand, as everywhere.

use std::os::windows::io::IntoRawHandle;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use parley_protocol::socket;
use windows_registry::CURRENT_USER;

use super::logon::{self, LOGON_FLAG, Settings};
use super::{ServiceCommand, carried_env, wait_for_daemon, write_atomically};
use crate::cli::cli_opening;
use crate::cli::client::HubClient;

/// The user's `Run` key, below `HKEY_CURRENT_USER`.
pub const RUN_KEY: &str = r"Software\Microsoft\Windows\CurrentVersion\Run";
/// The value under it.
pub const RUN_VALUE: &str = "Parley";

/// `ERROR_FILE_NOT_FOUND` as an HRESULT: the key or value is not there.
const NOT_FOUND: i32 = 0x8007_0002_u32 as i32;

pub async fn run(command: ServiceCommand) -> anyhow::Result<i32> {
    match command {
        ServiceCommand::Install { no_start } => install(no_start).await,
        ServiceCommand::Uninstall => uninstall().await,
        ServiceCommand::Status => status().await,
    }
}

/// The settings file `install` writes, beside the pipe's lock and log.
fn settings_path() -> anyhow::Result<PathBuf> {
    let dir = socket::side_dir().context("cannot find your local app data folder; set LOCALAPPDATA")?;
    Ok(dir.join(logon::SETTINGS_FILE))
}

/// The `Run` value's text, or `None` when there is none.
pub fn run_value() -> anyhow::Result<Option<String>> {
    let key = match CURRENT_USER.open(RUN_KEY) {
        Ok(key) => key,
        Err(e) if e.code().0 == NOT_FOUND => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!(r"opening HKCU\{RUN_KEY}")),
    };
    match key.get_string(RUN_VALUE) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.code().0 == NOT_FOUND => Ok(None),
        Err(e) => Err(e).with_context(|| format!(r"reading {RUN_VALUE} under HKCU\{RUN_KEY}")),
    }
}

fn set_run_value(text: &str) -> anyhow::Result<()> {
    let key = CURRENT_USER.create(RUN_KEY).with_context(|| format!(r"opening HKCU\{RUN_KEY} for writing"))?;
    key.set_string(RUN_VALUE, text).with_context(|| format!(r"writing {RUN_VALUE} under HKCU\{RUN_KEY}"))
}

/// Removes the value; `false` when there was none.
fn remove_run_value() -> anyhow::Result<bool> {
    let key = match CURRENT_USER.create(RUN_KEY) {
        Ok(key) => key,
        Err(e) if e.code().0 == NOT_FOUND => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!(r"opening HKCU\{RUN_KEY} for writing")),
    };
    match key.remove_value(RUN_VALUE) {
        Ok(()) => Ok(true),
        Err(e) if e.code().0 == NOT_FOUND => Ok(false),
        Err(e) => Err(e).with_context(|| format!(r"removing {RUN_VALUE} under HKCU\{RUN_KEY}")),
    }
}

/// Where this `parley.exe` is, as Windows will be asked to run it (no
/// `\\?\` prefix, which a `Run` value does not take).
fn this_parley() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot tell where this parley.exe is")?;
    std::path::absolute(&exe).context("cannot tell where this parley.exe is")
}

/// The daemon already answering on this environment's pipe, if any.
async fn running() -> anyhow::Result<Option<parley_protocol::hello::HelloReply>> {
    Ok(HubClient::open(&cli_opening(false)).await?.map(|client| client.hello().clone()))
}

async fn install(no_start: bool) -> anyhow::Result<i32> {
    let parley = this_parley()?;
    let settings_file = settings_path()?;
    let settings = Settings { environment: carried_env().into_iter().map(|(k, v)| (k.to_owned(), v)).collect() };
    write_atomically(&settings_file, &settings.render()?)?;
    let line = logon::command_line(&parley);
    if let Err(e) = set_run_value(&line) {
        let _ = std::fs::remove_file(&settings_file);
        return Err(e.context("Parley was not set to start at logon; nothing was changed"));
    }
    println!(r"Set HKCU\{RUN_KEY}\{RUN_VALUE} to {line}");
    println!("(its settings are in {}).", settings_file.display());
    if no_start {
        println!("Parley will start at your next logon.");
        return Ok(0);
    }
    if let Some(hello) = running().await? {
        println!(
            "A Parley daemon already runs (pid {}, version {}): it keeps running; the Run value starts one at your next logon.",
            hello.pid, hello.version
        );
        if hello.version != parley_protocol::BUILD_VERSION {
            println!(
                "It is not this build ({}): `parley stop` ends it, and the next agent starts this one.",
                parley_protocol::BUILD_VERSION
            );
        }
        return Ok(0);
    }
    start_detached(&parley)?;
    let pid = wait_for_daemon().await?;
    println!("Parley runs (pid {pid}) and will start at every logon.");
    Ok(0)
}

/// Starts `parley.exe daemon --logon` as the `Run` value would, with no
/// console window and none of this command's stdio.
fn start_detached(parley: &Path) -> anyhow::Result<()> {
    keep_our_stdio_to_ourselves();
    let mut command = Command::new(parley);
    parley_shim::daemon_start::detach(&mut command);
    command
        .arg("daemon")
        .arg(LOGON_FLAG)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {} daemon {LOGON_FLAG}", parley.display()))?;
    Ok(())
}

/// Makes this process's standard handles non-inheritable: Windows hands a
/// child every inheritable handle, whatever its own stdio is, and a daemon
/// holding the pipe `parley service install | more` reads from would keep
/// that reader waiting until the daemon exits.
#[allow(unsafe_code)]
fn keep_our_stdio_to_ourselves() {
    use windows_sys::Win32::Foundation::{HANDLE_FLAG_INHERIT, SetHandleInformation};
    use windows_sys::Win32::System::Console::{GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE};
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: plain calls; a missing or invalid handle makes them fail, which is harmless.
        unsafe {
            let handle = GetStdHandle(which);
            if !handle.is_null() {
                SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
            }
        }
    }
}

async fn uninstall() -> anyhow::Result<i32> {
    let removed = remove_run_value()?;
    let settings_file = settings_path()?;
    match std::fs::remove_file(&settings_file) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("removing {}", settings_file.display())),
    }
    if removed {
        println!(r"Removed HKCU\{RUN_KEY}\{RUN_VALUE}: Parley no longer starts at logon.");
    } else {
        println!(r"Parley was not set to start at logon (no {RUN_VALUE} under HKCU\{RUN_KEY}).");
    }
    match crate::cli::stop_daemon("parley service uninstall").await? {
        Some(pid) => println!("Stopped the daemon (pid {pid}); agents' parley-mcp start one on demand again."),
        None => println!("No daemon was running."),
    }
    Ok(0)
}

/// How the `Run` value stands.
enum Standing {
    Absent,
    /// It starts this program, which exists.
    Starts(PathBuf),
    /// It names a program that is not there, or nothing readable.
    Broken(String),
}

fn standing() -> anyhow::Result<(Standing, Option<String>)> {
    let Some(value) = run_value()? else { return Ok((Standing::Absent, None)) };
    let standing = match logon::program_of(&value) {
        Some(program) if program.is_file() => Standing::Starts(program),
        Some(program) => Standing::Broken(format!("{} does not exist", program.display())),
        None => Standing::Broken("it names no program".to_owned()),
    };
    Ok((standing, Some(value)))
}

async fn status() -> anyhow::Result<i32> {
    let (standing, value) = standing()?;
    let installed = match (&standing, value) {
        (Standing::Absent, _) => {
            println!("Parley does not start at logon; `parley service install` sets it to.");
            false
        }
        (Standing::Starts(_), Some(value)) => {
            println!(r"Parley starts at logon: HKCU\{RUN_KEY}\{RUN_VALUE} is {value}");
            true
        }
        (Standing::Broken(why), value) => {
            println!(
                r"HKCU\{RUN_KEY}\{RUN_VALUE} is {}, but {why}, so nothing starts at logon: run `parley service install` again from the parley.exe you use, or `parley service uninstall`.",
                value.unwrap_or_default()
            );
            false
        }
        (Standing::Starts(_), None) => false,
    };
    let running = running().await?;
    match &running {
        Some(hello) => println!("The daemon runs (pid {}, version {}).", hello.pid, hello.version),
        None => println!("No daemon runs now."),
    }
    Ok(if installed && running.is_some() { 0 } else { 3 })
}

/// How the `Run` value stands, for `parley doctor`: `Ok` when it is absent
/// (agents start the daemon on demand) or starts an existing `parley.exe`,
/// `Err` with what to do when it names a missing one.
pub fn health() -> Result<String, String> {
    let (standing, value) = match standing() {
        Ok(found) => found,
        Err(e) => return Err(format!("{e:#}")),
    };
    let value = value.unwrap_or_default();
    match standing {
        Standing::Absent => Ok(format!(
            r"not set to start at logon (no {RUN_VALUE} under HKCU\{RUN_KEY}); agents' parley-mcp start it on demand, and `parley service install` starts it at every logon"
        )),
        Standing::Starts(program) => {
            let here = this_parley().ok();
            if here.as_deref().is_some_and(|here| same_file(here, &program)) {
                Ok(format!(r"starts at logon (HKCU\{RUN_KEY}\{RUN_VALUE}: {value})"))
            } else {
                Ok(format!(
                    r"starts at logon another parley.exe than this one ({value}); `parley service install` from this one points it here"
                ))
            }
        }
        Standing::Broken(why) => Err(format!(
            r"HKCU\{RUN_KEY}\{RUN_VALUE} is {value}, but {why}, so nothing starts at logon: run `parley service install` from the parley.exe you use, or `parley service uninstall` to remove it"
        )),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a.as_os_str().eq_ignore_ascii_case(b.as_os_str())
}

/// Readies this process to be the daemon the `Run` value starts: the saved
/// environment set before anything reads it, the console Windows opened for
/// it closed, and its log (stderr) sent to the file beside the pipe. Call it
/// before any thread starts.
pub fn prepare_logon_daemon() -> anyhow::Result<()> {
    let path = settings_path()?;
    let missing = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let settings = Settings::parse(&text, &path)?;
            for (key, value) in &settings.environment {
                // SAFETY: called first thing in `main`, before the runtime or
                // anything else has started a thread that could read the
                // environment meanwhile.
                #[allow(unsafe_code)]
                unsafe {
                    std::env::set_var(key, value);
                }
            }
            false
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    leave_a_console_of_our_own();
    let socket_path = socket::socket_path()?;
    socket::prepare_socket_dir(&socket_path)?;
    let log_path = parley_shim::connect::daemon_log_path(&socket_path);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("opening the log {}", log_path.display()))?;
    send_output_to(log);
    if missing {
        eprintln!(
            "parley: {} is missing, so the daemon runs with the environment it was started with; run `parley service install` again",
            path.display()
        );
    }
    Ok(())
}

/// Frees the console when it was opened for this process alone (started
/// from the `Run` value, a console program gets a window of its own); one
/// shared with a terminal is left alone.
#[allow(unsafe_code)]
fn leave_a_console_of_our_own() {
    use windows_sys::Win32::System::Console::{FreeConsole, GetConsoleProcessList};
    let mut processes = [0u32; 2];
    // SAFETY: the buffer holds 2 ids and its length is passed.
    let attached = unsafe { GetConsoleProcessList(processes.as_mut_ptr(), processes.len() as u32) };
    if attached == 1 {
        // SAFETY: no argument; detaching from a console has no other effect here.
        unsafe { FreeConsole() };
    }
}

/// Makes `log` this process's stdout and stderr for its whole life: the
/// standard library looks the handles up on every write, so the daemon's
/// log goes there.
#[allow(unsafe_code)]
fn send_output_to(log: std::fs::File) {
    use windows_sys::Win32::System::Console::{STD_ERROR_HANDLE, STD_OUTPUT_HANDLE, SetStdHandle};
    let handle = log.into_raw_handle();
    // SAFETY: `handle` is an open file handle, never closed (it stays the
    // process's standard output and error until it exits).
    unsafe {
        SetStdHandle(STD_OUTPUT_HANDLE, handle);
        SetStdHandle(STD_ERROR_HANDLE, handle);
    }
}
