//! Setting Parley up: `parley doctor` checks everything Parley needs and says
//! how to fix what is wrong (`parley mcp-config` is in `mcp_config.rs`).

use std::path::{Path, PathBuf};

use parley_protocol::socket;
use serde::Serialize;
use serde_json::json;

use super::cli_opening;
use super::client::HubClient;
use crate::config::{self, CommandLine};

/// `parley-mcp` beside this binary, as an absolute path, and whether it is
/// there; otherwise the bare name, for the host's PATH.
pub(super) fn shim_path() -> (PathBuf, bool) {
    let name = format!("parley-mcp{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe().ok().map(|exe| exe.with_file_name(name));
    match beside {
        Some(path) if path.is_file() => (path, true),
        _ => match find_on_path("parley-mcp") {
            Some(path) => (path, true),
            None => (PathBuf::from("parley-mcp"), false),
        },
    }
}

/// Where `program` is found: as given when it names a path, else on PATH.
fn find_on_path(program: &str) -> Option<PathBuf> {
    let program = &format!("{program}{}", std::env::consts::EXE_SUFFIX);
    if program.contains(std::path::is_separator) {
        let path = PathBuf::from(program);
        return runnable(&path).then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(program)).find(|p| runnable(p))
}

/// Whether `path` is a file this user may run.
#[cfg(unix)]
fn runnable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `path` is a file (Windows runs any `.exe`).
#[cfg(not(unix))]
fn runnable(path: &Path) -> bool {
    path.is_file()
}

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    name: &'static str,
    outcome: Outcome,
    detail: String,
}

impl Check {
    fn new(name: &'static str, outcome: Outcome, detail: impl Into<String>) -> Check {
        Check { name, outcome, detail: detail.into() }
    }
}

/// Runs every check; exit code 1 when any failed.
pub async fn doctor(json: bool) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir()?;
    let mut checks = vec![shim_check(), socket_check()];
    let (daemon, answered) = daemon_check().await;
    checks.push(daemon);
    #[cfg(windows)]
    checks.push(lock_check(answered));
    #[cfg(not(windows))]
    let _ = answered;
    checks.extend(service_check());
    checks.push(editors_check().await);
    checks.push(data_dir_check());
    checks.extend(data_privacy_check());
    checks.extend(config_checks(&cwd));
    checks.extend(hook_checks(&cwd));
    checks.push(git_check());
    if let Some(check) = watch_limit_check() {
        checks.push(check);
    }
    let failed = checks.iter().any(|c| c.outcome == Outcome::Fail);
    if json {
        println!("{}", serde_json::to_string_pretty(&json!({ "ok": !failed, "checks": checks }))?);
    } else {
        for check in &checks {
            let label = match check.outcome {
                Outcome::Ok => "ok  ",
                Outcome::Warn => "warn",
                Outcome::Fail => "FAIL",
            };
            println!("{label}  {:<14} {}", check.name, check.detail);
        }
        let problems = checks.iter().filter(|c| c.outcome != Outcome::Ok).count();
        match (failed, problems) {
            (true, _) => println!("Parley will not work as it is: fix the FAIL lines above."),
            (false, 0) => println!("Everything Parley needs is in place."),
            (false, _) => println!("Parley works; the warn lines above say what would make it better."),
        }
    }
    Ok(if failed { 1 } else { 0 })
}

fn shim_check() -> Check {
    let (path, found) = shim_path();
    if !found {
        return Check::new(
            "parley-mcp",
            Outcome::Fail,
            "not found beside parley nor on PATH: agent hosts cannot start Parley; install it with `cargo install --locked --path shim`",
        );
    }
    match std::process::Command::new(&path).arg("--version").output() {
        Ok(out) if out.status.success() => {
            let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            let ours = format!("parley-mcp {}", parley_protocol::BUILD_VERSION);
            if version == ours {
                Check::new("parley-mcp", Outcome::Ok, format!("{} ({version})", path.display()))
            } else {
                Check::new(
                    "parley-mcp",
                    Outcome::Warn,
                    format!(
                        "{} is {version:?}, not {ours:?}: install both binaries from the same build",
                        path.display()
                    ),
                )
            }
        }
        Ok(out) => Check::new(
            "parley-mcp",
            Outcome::Warn,
            format!(
                "{} does not answer --version ({}): it may be an old build; reinstall it",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ),
        Err(e) => Check::new("parley-mcp", Outcome::Fail, format!("cannot run {}: {e}", path.display())),
    }
}

/// What the daemon listens on: a socket, or on Windows a named pipe.
const SOCKET_CHECK: &str = if cfg!(windows) { "pipe" } else { "socket" };

fn socket_check() -> Check {
    let path = match socket::socket_path() {
        Ok(path) => path,
        Err(e) => return Check::new(SOCKET_CHECK, Outcome::Fail, e.to_string()),
    };
    // A pipe has no folder: its lock and log files live in local app data.
    #[cfg(windows)]
    let folder = socket::side_dir().map_or_else(String::new, |dir| format!("; its lock and log in {}", dir.display()));
    #[cfg(not(windows))]
    let folder = String::new();
    match socket::check_socket_dir(&path) {
        Ok(true) => Check::new(SOCKET_CHECK, Outcome::Ok, format!("{}{folder}", path.display())),
        Ok(false) if cfg!(windows) => Check::new(
            SOCKET_CHECK,
            Outcome::Ok,
            format!("{}{folder} (created when the daemon starts)", path.display()),
        ),
        Ok(false) => Check::new(
            SOCKET_CHECK,
            Outcome::Ok,
            format!("{} (its folder is created private when the daemon starts)", path.display()),
        ),
        Err(e) => Check::new(SOCKET_CHECK, Outcome::Fail, e.to_string()),
    }
}

/// Whether the daemon's lock agrees with the pipe: held by the daemon that
/// answers, or free with none answering. A lock held with no daemon
/// answering is a daemon stuck starting or stopping, which keeps any other
/// from starting.
#[cfg(windows)]
fn lock_check(answered: bool) -> Check {
    let Ok(path) = socket::socket_path().map(|pipe| socket::daemon_lock_path(&pipe)) else {
        return Check::new("lock", Outcome::Fail, "no pipe name to find the lock by; see the pipe line");
    };
    let held = match std::fs::File::open(&path) {
        Ok(file) => match file.try_lock() {
            Ok(()) => false,
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(std::fs::TryLockError::Error(e)) => {
                return Check::new("lock", Outcome::Fail, format!("cannot lock {}: {e}", path.display()));
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Check::new("lock", Outcome::Fail, format!("cannot open {}: {e}", path.display())),
    };
    match (held, answered) {
        (true, true) => Check::new("lock", Outcome::Ok, format!("{} is held by the daemon", path.display())),
        (false, false) => Check::new("lock", Outcome::Ok, format!("{} is free: no daemon runs", path.display())),
        (true, false) => Check::new(
            "lock",
            Outcome::Fail,
            format!(
                "{} is held but no daemon answers on the pipe, so no other can start: end parley.exe in Task Manager (`taskkill /IM parley.exe /F`), then run `parley daemon` or let an agent start it",
                path.display()
            ),
        ),
        (false, true) => Check::new(
            "lock",
            Outcome::Warn,
            format!(
                "something answers on the pipe but does not hold {}: an older build or another program; run `parley stop` and let an agent start this one",
                path.display()
            ),
        ),
    }
}

/// How the daemon stands, and whether one answered.
async fn daemon_check() -> (Check, bool) {
    let client = match HubClient::open(&cli_opening(false)).await {
        Ok(client) => client,
        Err(e) => return (Check::new("daemon", Outcome::Fail, format!("{e:#}")), false),
    };
    let check = match &client {
        None => Check::new(
            "daemon",
            Outcome::Ok,
            "not running; an agent's parley-mcp starts it, or run `parley daemon` (or `parley service install`)",
        ),
        Some(client) => {
            let hello = client.hello();
            if hello.version == parley_protocol::BUILD_VERSION {
                Check::new("daemon", Outcome::Ok, format!("running, pid {}, version {}", hello.pid, hello.version))
            } else {
                Check::new(
                    "daemon",
                    Outcome::Warn,
                    format!(
                        "running version {} (pid {}), this parley is {}: run `parley stop`, and the next agent starts the new build",
                        hello.version,
                        hello.pid,
                        parley_protocol::BUILD_VERSION
                    ),
                )
            }
        }
    };
    (check, client.is_some())
}

/// The service `parley service install` wrote, when there is one: a file
/// the manager cannot reach, or does not run, starts nothing.
fn service_check() -> Option<Check> {
    Some(match super::service::health()? {
        Ok(detail) => Check::new("service", Outcome::Ok, detail),
        Err(detail) => Check::new("service", Outcome::Warn, detail),
    })
}

/// Where VS Code and its forks keep extensions, under the home folder.
const EXTENSION_DIRS: &[(&str, &str)] = &[
    (".vscode/extensions", "VS Code"),
    (".vscode-server/extensions", "VS Code (remote)"),
    (".vscode-insiders/extensions", "VS Code Insiders"),
    (".cursor/extensions", "Cursor"),
    (".cursor-server/extensions", "Cursor (remote)"),
    (".vscode-oss/extensions", "VSCodium"),
    (".windsurf/extensions", "Windsurf"),
    (".local/share/code-server/extensions", "code-server"),
];

/// Where Neovim plugin managers put plugins, under Neovim's data folder:
/// lazy.nvim, packer and native packages, vim-plug.
const NVIM_PLUGIN_DIRS: &[&str] = &["lazy", "site/pack/*/start", "site/pack/*/opt", "plugged"];

/// Where this user's Neovim gets the Parley plugin from, if anywhere: a
/// plugin manager's folder holding it, or the config that loads it (the
/// plugin README's `runtimepath:append` way).
fn nvim_plugin() -> Option<PathBuf> {
    let dirs = directories::BaseDirs::new()?;
    let data = dirs.data_dir().join("nvim");
    for pattern in NVIM_PLUGIN_DIRS {
        let mut folders = vec![data.clone()];
        for part in pattern.split('/') {
            folders = folders
                .into_iter()
                .flat_map(|folder| -> Vec<PathBuf> {
                    if part == "*" {
                        std::fs::read_dir(&folder).into_iter().flatten().flatten().map(|e| e.path()).collect()
                    } else {
                        vec![folder.join(part)]
                    }
                })
                .collect();
        }
        for folder in folders {
            for plugin in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                if plugin.path().join("lua/parley/init.lua").is_file() {
                    return Some(plugin.path());
                }
            }
        }
    }
    let config = dirs.config_dir().join("nvim");
    let loads = regex::Regex::new(r#"require\s*\(?\s*["']parley["']"#).expect("a valid pattern");
    let mut pending = vec![(config, 0)];
    let mut read = 0;
    while let Some((folder, depth)) = pending.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() && depth < 3 {
                pending.push((path, depth + 1));
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "lua" || e == "vim") && read < 200 {
                read += 1;
                if std::fs::read_to_string(&path).is_ok_and(|text| loads.is_match(&text)) {
                    return Some(path);
                }
            }
        }
    }
    None
}

/// The editor clients this user has: the VS Code extension installed in
/// VS Code or a fork, the Neovim plugin, and the editor windows connected
/// right now. One installed but not connected is said as such, with what
/// connects it.
async fn editors_check() -> Check {
    let mut found = Vec::new();
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_owned()));
    if let Some(home) = home {
        for (dir, editor) in EXTENSION_DIRS {
            let Ok(entries) = std::fs::read_dir(home.join(dir)) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_lowercase();
                if let Some(version) = name.strip_prefix("parley.parley-") {
                    found.push(format!("{editor} extension {version}"));
                }
            }
        }
    }
    let mut connected = Vec::new();
    if let Ok(Some(mut client)) = HubClient::open(&cli_opening(false)).await
        && let Ok(status) = client.call::<parley_protocol::methods::Status>("status", json!({})).await
    {
        connected.extend(status.editors.iter().map(|editor| editor.name.clone()));
    }
    if let Some(place) = nvim_plugin() {
        if connected.iter().any(|name| name == "nvim") {
            found.push(format!("Neovim plugin ({})", place.display()));
        } else {
            found.push(format!(
                "Neovim plugin installed ({}) but no Neovim is connected now: it connects when Neovim starts (`:ParleyConnect` in a running one; `:checkhealth parley` says what stops it)",
                place.display()
            ));
        }
    }
    found.extend(connected.iter().map(|name| format!("{name} connected")));
    if found.is_empty() {
        return Check::new(
            "editors",
            Outcome::Warn,
            "no Parley editor client found: install the VS Code extension (README, \"VS Code\") or the Neovim plugin (editors/nvim), or run `parley watch`, so reviews and threads show where you work",
        );
    }
    Check::new("editors", Outcome::Ok, found.join("; "))
}

fn data_dir_check() -> Check {
    let dir = match config::data_dir() {
        Ok(dir) => dir,
        Err(e) => return Check::new("data", Outcome::Fail, format!("{e:#}")),
    };
    let existing = dir.ancestors().find(|a| a.exists()).unwrap_or(Path::new("/"));
    let probe = existing.join(format!(".parley-doctor-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Check::new("data", Outcome::Ok, dir.display().to_string())
        }
        Err(e) => Check::new(
            "data",
            Outcome::Fail,
            format!("cannot write in {}: {e}; set PARLEY_DATA_DIR to a writable folder", existing.display()),
        ),
    }
}

/// Whether other users can read the store: it holds every comment. The
/// daemon makes the data directory private when it starts; this says so
/// before then, and when something loosened it since.
fn data_privacy_check() -> Option<Check> {
    let dir = config::data_dir().ok().filter(|dir| dir.exists())?;
    Some(match crate::store::open_to_others(&dir) {
        Ok(open) if open.is_empty() => Check::new("privacy", Outcome::Ok, "the store is readable by you alone"),
        Ok(open) => {
            let first = &open[0];
            Check::new(
                "privacy",
                Outcome::Warn,
                format!(
                    "{} item(s) in {} are open to other users (first: {}, mode {:o}); starting the daemon makes them private, or run `chmod -R go-rwx {}`",
                    open.len(),
                    dir.display(),
                    first.path.display(),
                    first.mode,
                    dir.display()
                ),
            )
        }
        Err(e) => Check::new("privacy", Outcome::Warn, format!("cannot read {}: {e}", dir.display())),
    })
}

fn config_checks(cwd: &Path) -> Vec<Check> {
    let root = crate::git::repo_root(cwd).unwrap_or_else(|_| cwd.to_owned());
    let settings = match config::review_settings(&root) {
        Ok(settings) => settings,
        Err(e) => return vec![Check::new("config", Outcome::Fail, e.to_string())],
    };
    let mut files: Vec<String> = config::user_config_file()
        .into_iter()
        .chain(std::iter::once(root.join(config::REPO_CONFIG)))
        .filter(|f| f.is_file())
        .map(|f| f.display().to_string())
        .collect();
    if files.is_empty() {
        files.push("no config file; the defaults apply".into());
    }
    let mut checks = vec![Check::new("config", Outcome::Ok, files.join(", "))];
    if let Some(repo) = &settings.repo_config {
        checks.push(match settings.ignored_note() {
            Some(note) => Check::new("trust", Outcome::Warn, note),
            None if repo.guarded.is_empty() => Check::new(
                "trust",
                Outcome::Ok,
                format!("{} sets nothing that runs a command or loosens a check", repo.path.display()),
            ),
            None => Check::new(
                "trust",
                Outcome::Ok,
                format!(
                    "{} is trusted: {} apply (`parley trust --revoke` withdraws it)",
                    repo.path.display(),
                    repo.guarded.iter().map(|(key, _)| *key).collect::<Vec<_>>().join(", ")
                ),
            ),
        });
    }
    checks.push(match &settings.reviewer {
        None => Check::new(
            "reviewer",
            Outcome::Warn,
            format!(
                "none configured, so no review can run (from `parley review request` or an agent): add `reviewer = \"claude -p --output-format json\"` under [review] in {}",
                config::user_config_file().unwrap_or_else(|| root.join(config::REPO_CONFIG)).display()
            ),
        ),
        Some(command) => match program_of(command) {
            Some(program) if find_on_path(&program).is_none() => Check::new(
                "reviewer",
                Outcome::Fail,
                format!("`{command}`: {program} is not on PATH; install it or fix `reviewer` under [review]"),
            ),
            _ => Check::new("reviewer", Outcome::Ok, format!("`{command}`")),
        },
    });
    checks
}

/// The program a command line runs: the first word that is not a variable
/// assignment.
fn program_of(command: &CommandLine) -> Option<String> {
    match command {
        CommandLine::Argv(argv) => argv.first().cloned(),
        CommandLine::Shell(line) => line.split_whitespace().find(|word| !word.contains('=')).map(str::to_owned),
    }
}

/// Whether each host's plan hooks are installed: a note, not a problem,
/// when they are not (they are optional).
fn hook_checks(cwd: &Path) -> Vec<Check> {
    use super::hooks::install::{HookHost, installed};
    let root = crate::workspace::root_of(cwd);
    let project = root.join(".git").exists().then_some(root.as_path());
    [(HookHost::Claude, "claude hooks"), (HookHost::Codex, "codex hooks")]
        .into_iter()
        .map(|(host, name)| match installed(host, project) {
            Ok(detail) | Err(detail) => Check::new(name, Outcome::Ok, detail),
        })
        .collect()
}

fn git_check() -> Check {
    match std::process::Command::new("git").arg("--version").output() {
        Ok(out) if out.status.success() => {
            Check::new("git", Outcome::Ok, String::from_utf8_lossy(&out.stdout).trim().to_owned())
        }
        _ if cfg!(windows) => Check::new(
            "git",
            Outcome::Fail,
            "git is not on PATH: review sessions need it to capture diffs; install Git for Windows (`winget install Git.Git`) and open a new terminal",
        ),
        _ => Check::new("git", Outcome::Fail, "git is not on PATH: review sessions need it to capture diffs"),
    }
}

/// Linux only: how many files can be watched, which bounds how many files
/// with threads are followed live.
fn watch_limit_check() -> Option<Check> {
    let text = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches").ok()?;
    let limit: u64 = text.trim().parse().ok()?;
    Some(if limit < 8192 {
        Check::new(
            "file watching",
            Outcome::Warn,
            format!(
                "the inotify limit is {limit} watches; raise it (sysctl fs.inotify.max_user_watches=524288) so edits are seen live"
            ),
        )
    } else {
        Check::new("file watching", Outcome::Ok, format!("up to {limit} watched folders"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_of_a_command_line() {
        let shell = |s: &str| CommandLine::Shell(s.into());
        assert_eq!(program_of(&shell("claude -p --output-format json")).as_deref(), Some("claude"));
        assert_eq!(program_of(&shell("NO_COLOR=1 codex exec")).as_deref(), Some("codex"));
        assert_eq!(program_of(&CommandLine::Argv(vec!["python3".into(), "r.py".into()])).as_deref(), Some("python3"));
        assert_eq!(program_of(&shell("   ")), None);
    }
}
