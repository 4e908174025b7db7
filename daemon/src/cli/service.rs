//! `parley service install|uninstall|status`: the daemon started at login, as
//! a systemd user service on Linux or a launchd agent on macOS, running this
//! very `parley` binary; on Windows through the user's `Run` key
//! (`service/run_key.rs`).
// The systemd and launchd code is built everywhere, and used off Windows.
#![cfg_attr(windows, allow(dead_code))]

mod logon;
#[cfg(windows)]
mod run_key;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Subcommand;

use super::cli_opening;
use super::client::HubClient;

#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Start the daemon at login (and now). On Linux and macOS it replaces a daemon started by hand or
    /// by an agent; on Windows one already running keeps running.
    Install {
        /// Write and enable the service without starting it now.
        #[arg(long)]
        no_start: bool,
    },
    /// Stop the service and remove it.
    Uninstall,
    /// Whether the service is installed and running.
    Status,
}

/// Environment variables that place the socket and the store: a service
/// installed while they are set keeps them, so it serves the same clients.
const CARRIED_ENV: &[&str] = &["PARLEY_SOCKET", "PARLEY_DATA_DIR", "PARLEY_LOG"];

const SYSTEMD_UNIT: &str = "parley.service";
const LAUNCHD_LABEL: &str = "dev.parley.daemon";

pub async fn run(command: ServiceCommand) -> anyhow::Result<i32> {
    #[cfg(windows)]
    return run_key::run(command).await;
    #[cfg(not(windows))]
    run_a_manager(command).await
}

async fn run_a_manager(command: ServiceCommand) -> anyhow::Result<i32> {
    let manager = Manager::of_this_system()?;
    match command {
        ServiceCommand::Install { no_start } => install(&manager, no_start).await,
        ServiceCommand::Uninstall => uninstall(&manager).await,
        ServiceCommand::Status => status(&manager),
    }
}

/// The environment a service keeps: the variables that place the socket and
/// the store, as set now, and the daemon's own (`DAEMON_ENV`).
fn carried_env() -> Vec<(&'static str, String)> {
    CARRIED_ENV
        .iter()
        .filter_map(|&key| Some((key, std::env::var(key).ok()?)))
        .chain(parley_protocol::DAEMON_ENV.iter().map(|&(key, value)| (key, value.to_owned())))
        .collect()
}

/// Readies this process to be the daemon Windows's `Run` value starts
/// (`parley daemon --logon`); call it before any thread starts.
pub fn prepare_logon_daemon() -> anyhow::Result<()> {
    #[cfg(windows)]
    return run_key::prepare_logon_daemon();
    #[cfg(not(windows))]
    bail!(
        "`parley daemon {}` is what `parley service install` has Windows run at logon; here run `parley daemon`",
        logon::LOGON_FLAG
    )
}

/// The service manager of this system and where its file for Parley goes.
enum Manager {
    Systemd { unit: PathBuf },
    Launchd { plist: PathBuf },
}

impl Manager {
    fn of_this_system() -> anyhow::Result<Manager> {
        let dirs = directories::BaseDirs::new().context("cannot find your home directory; set HOME")?;
        if cfg!(target_os = "macos") {
            Ok(Manager::Launchd {
                plist: dirs.home_dir().join("Library/LaunchAgents").join(format!("{LAUNCHD_LABEL}.plist")),
            })
        } else if cfg!(target_os = "linux") {
            Ok(Manager::Systemd { unit: dirs.config_dir().join("systemd/user").join(SYSTEMD_UNIT) })
        } else {
            bail!(
                "parley service supports systemd (Linux), launchd (macOS) and Windows; start `parley daemon` another way here (for example from your startup programs)"
            )
        }
    }

    fn file(&self) -> &Path {
        match self {
            Manager::Systemd { unit } => unit,
            Manager::Launchd { plist } => plist,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Manager::Systemd { .. } => "systemd user service",
            Manager::Launchd { .. } => "launchd agent",
        }
    }

    fn contents(&self, parley: &Path) -> String {
        let carried = carried_env();
        match self {
            Manager::Systemd { .. } => systemd_unit(parley, &carried),
            Manager::Launchd { .. } => launchd_plist(parley, &carried),
        }
    }

    /// Whether the manager answers at all: a user systemd needs a user
    /// session bus (absent in most containers, in WSL without systemd, and
    /// over SSH without lingering), launchd a login session. `Err` says why.
    fn reachable(&self) -> Result<(), String> {
        let probe = match self {
            Manager::Systemd { .. } => args(&["systemctl", "--user", "show-environment"]),
            Manager::Launchd { .. } => args(&["launchctl", "print", &gui_domain()]),
        };
        run_all(&[probe]).map_err(|e| format!("{e:#}"))
    }

    /// When the manager cannot be reached, and what to do about it.
    fn unreachable_advice(&self) -> &'static str {
        match self {
            Manager::Systemd { .. } => {
                "as happens in containers, in WSL without systemd and in SSH sessions without lingering: \
                 run `loginctl enable-linger \"$(id -un)\"`, log in again and run `parley service install` once more, \
                 or start `parley daemon &` from your shell profile instead (agents' parley-mcp also start it on demand)"
            }
            Manager::Launchd { .. } => {
                "as happens over SSH (launchd's per-user domain exists only in a login session at the Mac itself): \
                 run `parley service install` from a terminal in that session, \
                 or start `parley daemon &` from your shell profile instead (agents' parley-mcp also start it on demand)"
            }
        }
    }

    /// What the manager must read before it knows of a new or changed file.
    fn reload(&self) -> Vec<Vec<String>> {
        match self {
            Manager::Systemd { .. } => vec![args(&["systemctl", "--user", "daemon-reload"])],
            Manager::Launchd { .. } => Vec::new(),
        }
    }

    /// The commands that enable (and start) the service.
    fn enable(&self, start: bool) -> Vec<Vec<String>> {
        match self {
            Manager::Systemd { .. } => {
                let mut enable = vec!["systemctl", "--user", "enable"];
                if start {
                    enable.push("--now");
                }
                enable.push(SYSTEMD_UNIT);
                vec![args(&enable)]
            }
            // launchd starts an agent when it is bootstrapped (RunAtLoad); a
            // later login starts it from the file.
            Manager::Launchd { plist } if start => {
                vec![args(&["launchctl", "bootstrap", &gui_domain(), &plist.to_string_lossy()])]
            }
            Manager::Launchd { .. } => Vec::new(),
        }
    }

    fn disable(&self) -> Vec<Vec<String>> {
        match self {
            Manager::Systemd { .. } => vec![args(&["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT])],
            Manager::Launchd { .. } => {
                vec![args(&["launchctl", "bootout", &format!("{}/{LAUNCHD_LABEL}", gui_domain())])]
            }
        }
    }

    /// What the manager says of the service: (enabled and running, its words).
    fn state(&self) -> (bool, String) {
        match self {
            Manager::Systemd { .. } => {
                let enabled = quiet(&["systemctl", "--user", "is-enabled", SYSTEMD_UNIT]);
                let active = quiet(&["systemctl", "--user", "is-active", SYSTEMD_UNIT]);
                (enabled == "enabled" && active == "active", format!("{enabled}, {active}"))
            }
            Manager::Launchd { .. } => {
                let loaded = Command::new("launchctl")
                    .args(["print", &format!("{}/{LAUNCHD_LABEL}", gui_domain())])
                    .output()
                    .is_ok_and(|o| o.status.success());
                (loaded, if loaded { "loaded".into() } else { "not loaded".into() })
            }
        }
    }

    /// The command that would enable and start the service by hand.
    fn enable_by_hand(&self) -> String {
        match self {
            Manager::Systemd { .. } => format!("systemctl --user enable --now {SYSTEMD_UNIT}"),
            Manager::Launchd { plist } => format!("launchctl bootstrap {} {}", gui_domain(), plist.display()),
        }
    }
}

/// How the service stands, for `parley doctor`: `None` when it is not
/// installed (agents start the daemon on demand), `Ok` when the manager runs
/// it, `Err` when it is installed but does not run, with what to do.
pub(super) fn health() -> Option<Result<String, String>> {
    #[cfg(windows)]
    return Some(run_key::health());
    #[cfg(not(windows))]
    manager_health()
}

fn manager_health() -> Option<Result<String, String>> {
    let manager = Manager::of_this_system().ok()?;
    let file = manager.file();
    if !file.exists() {
        return None;
    }
    if let Err(why) = manager.reachable() {
        return Some(Err(format!(
            "{} is installed but its manager is not reachable ({why}), so it never starts, {}; or run `parley service uninstall` to remove it",
            file.display(),
            manager.unreachable_advice()
        )));
    }
    let (running, words) = manager.state();
    if running {
        return Some(Ok(format!("{} ({}): {words}", manager.name(), file.display())));
    }
    Some(Err(format!(
        "{} is installed but {words}, so Parley does not start with your session: run `{}`, or `parley service uninstall` to remove it",
        file.display(),
        manager.enable_by_hand()
    )))
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// launchd's domain for this user's agents, `gui/<uid>`.
fn gui_domain() -> String {
    format!("gui/{}", user_id())
}

#[cfg(unix)]
fn user_id() -> u32 {
    parley_protocol::socket::current_uid()
}

/// launchd exists on macOS only; this is never asked for elsewhere.
#[cfg(not(unix))]
fn user_id() -> u32 {
    0
}

/// A command's trimmed stdout, or what went wrong, for a status line.
fn quiet(words: &[&str]) -> String {
    match Command::new(words[0]).args(&words[1..]).output() {
        Ok(out) => {
            let said = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if said.is_empty() { String::from_utf8_lossy(&out.stderr).trim().to_owned() } else { said }
        }
        Err(e) => format!("cannot run {}: {e}", words[0]),
    }
}

/// Runs each command; the first failure is an error that quotes it.
fn run_all(commands: &[Vec<String>]) -> anyhow::Result<()> {
    for command in commands {
        let shown = command.join(" ");
        let out =
            Command::new(&command[0]).args(&command[1..]).output().with_context(|| format!("cannot run `{shown}`"))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            bail!("`{shown}` failed ({}): {}", out.status, said.trim());
        }
    }
    Ok(())
}

/// systemd's quoting: a word in double quotes, with `\` and `"` escaped and
/// `%` (a specifier) doubled.
fn systemd_quote(word: &str) -> String {
    format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\"").replace('%', "%%"))
}

fn systemd_unit(parley: &Path, env: &[(&str, String)]) -> String {
    let exe = systemd_quote(&parley.to_string_lossy());
    let mut unit = format!(
        "# Written by `parley service install`; `parley service uninstall` removes it.\n\
         [Unit]\n\
         Description=Parley daemon (reviews and feedback shared by coding agents and editors)\n\
         \n\
         [Service]\n\
         Type=notify\n\
         NotifyAccess=main\n\
         ExecStart={exe} daemon\n\
         ExecStop={exe} stop\n\
         Restart=on-failure\n\
         RestartSec=1\n"
    );
    for (key, value) in env {
        unit.push_str(&format!("Environment={}\n", systemd_quote(&format!("{key}={value}"))));
    }
    unit.push_str("\n[Install]\nWantedBy=default.target\n");
    unit
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn launchd_plist(parley: &Path, env: &[(&str, String)]) -> String {
    let mut variables = String::new();
    for (key, value) in env {
        variables.push_str(&format!(
            "    <key>{}</key>\n    <string>{}</string>\n",
            xml_escape(key),
            xml_escape(value)
        ));
    }
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by `parley service install`; `parley service uninstall` removes it. -->
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
    <string>{}</string>
    <string>daemon</string>
  </array>
  <key>EnvironmentVariables</key>
  <dict>
{variables}  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
</dict>
</plist>
"#,
        xml_escape(&parley.to_string_lossy())
    )
}

/// Writes `text` to `path` whole: a temporary file renamed over it.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().context("the service file has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
}

async fn install(manager: &Manager, no_start: bool) -> anyhow::Result<i32> {
    // Nothing is written or stopped unless the manager can take over.
    if let Err(why) = manager.reachable() {
        bail!(
            "the {} cannot be installed, so nothing was changed: its manager is not reachable ({why}), {}",
            manager.name(),
            manager.unreachable_advice()
        );
    }
    let parley =
        std::env::current_exe().and_then(std::fs::canonicalize).context("cannot tell where this parley binary is")?;
    let file = manager.file();
    let before = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    write_atomically(file, &manager.contents(&parley))?;
    if let Err(e) = run_all(&manager.reload()) {
        put_back(manager, before.as_deref());
        return Err(e.context(format!("the {} was not installed; nothing was changed", manager.name())));
    }
    let mut stopped = None;
    if !no_start {
        // One daemon per socket: the service's would find this one's lock.
        stopped = super::stop_daemon("parley service install").await?;
    }
    if let Err(e) = run_all(&manager.enable(!no_start)) {
        put_back(manager, before.as_deref());
        let daemon = match stopped {
            Some(pid) => format!(
                "; the daemon that was running (pid {pid}) was stopped: agents' parley-mcp start one again on demand, or run `parley daemon`"
            ),
            None => String::new(),
        };
        return Err(e.context(format!(
            "the {} could not be enabled, so {} was put back as it was{daemon}",
            manager.name(),
            file.display()
        )));
    }
    println!("Wrote {} (runs {} daemon).", file.display(), parley.display());
    if let Some(pid) = stopped {
        println!("Stopped the daemon that was running (pid {pid}) so the service can take over.");
    }
    if no_start {
        println!("Parley will start at your next login (as a {}).", manager.name());
        return Ok(0);
    }
    let pid = wait_for_daemon().await?;
    println!("Parley runs as a {} (pid {pid}) and will start at every login.", manager.name());
    Ok(0)
}

/// Restores the service file as it was before `install` (absent, or its old
/// text) after the manager refused the new one, and lets the manager know.
fn put_back(manager: &Manager, before: Option<&str>) {
    let file = manager.file();
    let restored = match before {
        Some(text) => write_atomically(file, text),
        None => std::fs::remove_file(file).with_context(|| format!("removing {}", file.display())),
    };
    if let Err(e) = restored {
        eprintln!("parley: cannot put {} back as it was: {e:#}", file.display());
    }
    let _ = run_all(&manager.reload());
}

async fn uninstall(manager: &Manager) -> anyhow::Result<i32> {
    let file = manager.file();
    if !file.exists() {
        println!("Parley is not installed as a {} (no {}).", manager.name(), file.display());
        return Ok(0);
    }
    // The file goes in any case: with no manager to ask, nothing can be
    // running from it, and a file left behind would only confuse.
    let disabled = match manager.reachable() {
        Ok(()) => run_all(&manager.disable()).map_err(|e| format!("{e:#}")),
        Err(why) => {
            println!(
                "The {}'s manager is not reachable ({why}), so there was nothing to stop or disable.",
                manager.name()
            );
            Ok(())
        }
    };
    std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
    if disabled.is_ok() {
        let _ = run_all(&manager.reload());
    }
    println!(
        "Removed the {} ({}); agents' parley-mcp start the daemon on demand again.",
        manager.name(),
        file.display()
    );
    if let Err(why) = disabled {
        bail!(
            "the {} was removed, but stopping and disabling it failed ({why}): a daemon it started may still run; `parley stop` stops it",
            manager.name()
        );
    }
    Ok(0)
}

fn status(manager: &Manager) -> anyhow::Result<i32> {
    let file = manager.file();
    if !file.exists() {
        println!("Parley is not installed as a {}; `parley service install` does it.", manager.name());
        return Ok(3);
    }
    if let Err(why) = manager.reachable() {
        println!(
            "Parley is installed as a {} ({}), but its manager is not reachable ({why}), so it does not start, {}; or `parley service uninstall` removes it.",
            manager.name(),
            file.display(),
            manager.unreachable_advice()
        );
        return Ok(3);
    }
    let (running, words) = manager.state();
    println!("Parley is installed as a {} ({}): {words}.", manager.name(), file.display());
    Ok(if running { 0 } else { 3 })
}

/// Waits until the service's daemon answers; its pid.
async fn wait_for_daemon() -> anyhow::Result<u32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(client) = HubClient::open(&cli_opening(false)).await? {
            return Ok(client.hello().pid);
        }
        if tokio::time::Instant::now() > deadline {
            bail!(
                "the service was enabled but no daemon answered within 15 s; see `parley service status` and its logs"
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_runs_this_binary_with_the_carried_environment() {
        let unit = systemd_unit(Path::new("/opt/my tools/parley"), &[("PARLEY_SOCKET", "/tmp/a 100%/p.sock".into())]);
        assert!(unit.contains("ExecStart=\"/opt/my tools/parley\" daemon\n"), "{unit}");
        assert!(unit.contains("ExecStop=\"/opt/my tools/parley\" stop\n"), "{unit}");
        assert!(unit.contains("Environment=\"PARLEY_SOCKET=/tmp/a 100%%/p.sock\"\n"), "{unit}");
        assert!(unit.contains("Type=notify") && unit.ends_with("WantedBy=default.target\n"), "{unit}");
    }

    #[test]
    fn the_plist_escapes_what_it_quotes() {
        let plist = launchd_plist(Path::new("/Users/a&b/parley"), &[("PARLEY_LOG", "debug".into())]);
        assert!(plist.contains("<string>/Users/a&amp;b/parley</string>"), "{plist}");
        assert!(plist.contains("<key>PARLEY_LOG</key>\n    <string>debug</string>"), "{plist}");
    }
}
