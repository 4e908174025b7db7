//! Settings read from the environment and the config files: where state
//! lives, what to log, how reviews run and which repository configs the user
//! trusts. The only module that reads the environment and files for settings.

pub mod trust;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

pub use trust::Trust;

/// Overrides the directory holding Parley's store.
pub const DATA_DIR_ENV: &str = "PARLEY_DATA_DIR";
/// A `tracing` filter for the daemon's stderr log, e.g. `debug` or `parley=trace`.
pub const LOG_ENV: &str = "PARLEY_LOG";

/// The directory holding the store: `$PARLEY_DATA_DIR`, else the user's data
/// directory (`~/.local/share/parley` on Linux, `%LOCALAPPDATA%\parley\data`
/// on Windows: local, never roaming, app data).
pub fn data_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let dirs = directories::ProjectDirs::from("", "", "parley")
        .context("cannot find your home directory; set PARLEY_DATA_DIR to a folder for Parley's store")?;
    Ok(dirs.data_local_dir().to_owned())
}

/// The log filter: `$PARLEY_LOG`, else `info` (rmcp's per-session chatter at `warn`).
pub fn log_filter() -> String {
    std::env::var(LOG_ENV).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "info,rmcp=warn".to_owned())
}

/// systemd's readiness socket, when the daemon runs as a `Type=notify` unit.
/// Read before the runtime starts threads.
pub fn notify_socket() -> Option<PathBuf> {
    std::env::var_os("NOTIFY_SOCKET").filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The journal stream systemd connected the daemon's stderr to, as the
/// device and inode systemd names in `JOURNAL_STREAM`.
pub fn journal_stream() -> Option<(u64, u64)> {
    let value = std::env::var("JOURNAL_STREAM").ok()?;
    let (dev, ino) = value.split_once(':')?;
    Some((dev.parse().ok()?, ino.parse().ok()?))
}

/// Who "you" are: the login name of the user Parley runs as, from the
/// system's user database (what `id -un` prints), so that the command line,
/// the daemon, the comments editors send without an author and a person's
/// review rounds all name the same person, whatever the environment holds
/// (`$USER` is often unset in containers, cron and services). `$LOGNAME` or
/// `$USER` only when the database has no entry for the uid.
#[cfg(unix)]
pub fn user_name() -> String {
    let uid = nix::unistd::geteuid();
    if let Ok(Some(user)) = nix::unistd::User::from_uid(uid)
        && !user.name.is_empty()
    {
        return user.name;
    }
    std::env::var("LOGNAME")
        .or_else(|_| std::env::var("USER"))
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| format!("uid {uid}"))
}

/// The user's login name, from the system (what `whoami` prints without
/// its domain).
#[cfg(windows)]
pub fn user_name() -> String {
    parley_protocol::socket::current_user()
}

/// A reviewer (or test) command: a string runs through `sh -c`, a list runs
/// as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine {
    Shell(String),
    Argv(Vec<String>),
}

impl CommandLine {
    /// The program's name: `claude` for `claude -p --output-format json`.
    pub fn program_name(&self) -> String {
        let first = match self {
            CommandLine::Shell(line) => line.split_whitespace().next().unwrap_or("reviewer"),
            CommandLine::Argv(argv) => argv.first().map_or("reviewer", String::as_str),
        };
        Path::new(first).file_name().map_or_else(|| first.to_owned(), |n| n.to_string_lossy().into_owned())
    }
}

impl std::fmt::Display for CommandLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandLine::Shell(line) => f.write_str(line),
            CommandLine::Argv(argv) => f.write_str(&argv.join(" ")),
        }
    }
}
/// The per-repository config file, at the repository root.
pub const REPO_CONFIG: &str = ".parley.toml";

/// Settings for review sessions, resolved for one repository.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewSettings {
    /// `None` until the user configures one.
    pub reviewer: Option<CommandLine>,
    /// Who the reviewer's findings are from, as their threads show it
    /// (`reviewer_name`; by default the reviewer program's name).
    pub reviewer_name: Option<String>,
    pub timeout: std::time::Duration,
    /// Write the `.reviews/` audit tree.
    pub audit: bool,
    /// Absolute.
    pub audit_dir: PathBuf,
    /// Globs of files left out of the diff.
    pub ignored_files: Vec<String>,
    /// Review changes to `.parley.toml` itself (off: Parley's own config is
    /// left out of the diff).
    pub review_config: bool,
    pub test_command: Option<CommandLine>,
    pub test_timeout: std::time::Duration,
    pub max_rounds: u32,
    pub thresholds: crate::structured_review::Thresholds,
    /// Globs of files the secret scan skips.
    pub secret_allow_paths: Vec<String>,
    /// Variables of the asker's environment the reviewer and test command get
    /// besides [`CHILD_ENV`] (`pass_env`, from the user's own config only).
    pub pass_env: Vec<String>,
    /// Whether an agent's resolution of a thread synced with a pull request
    /// resolves it on GitHub too (`pull_requests.agents_may_resolve`, from
    /// the user's own config only); without it the thread is left open there
    /// for its author, with the agent's note as a reply.
    pub agents_may_resolve: bool,
    /// The config files that were read, most general first.
    pub sources: Vec<PathBuf>,
    /// The repository's `.parley.toml`, when it has one.
    pub repo_config: Option<RepoConfig>,
}

/// A repository's `.parley.toml` and whether its guarded settings applied.
#[derive(Debug, Clone, PartialEq)]
pub struct RepoConfig {
    pub path: PathBuf,
    /// Its content hash, as trust records key it.
    pub hash: String,
    pub trust: Trust,
    /// The guarded settings it sets, each as `key = value`, in file order of
    /// [`GUARDED`]: what trusting it lets run or weaken.
    pub guarded: Vec<(&'static str, String)>,
    /// The keys it sets that were ignored: the guarded ones while the file is
    /// not trusted, and those only the user's own config may set.
    pub ignored: Vec<&'static str>,
}

/// The settings of a repository's `.parley.toml` that run a command or weaken
/// a guard: they apply only once the user trusts the file (`parley trust`).
pub const GUARDED: &[&str] = &[
    "review.reviewer",
    "review.test_command",
    "review.ignored_files",
    "review.block_on",
    "review.warn_on",
    "review.audit_dir",
    "secrets.allow_paths",
];

/// Settings only the user's own config may set, whatever a repository says.
const USER_ONLY: &[&str] = &["review.pass_env", "pull_requests.agents_may_resolve"];

impl ReviewSettings {
    /// What to tell the user when the repository's config was not (wholly)
    /// applied: which settings were ignored and how to trust the file.
    pub fn ignored_note(&self) -> Option<String> {
        let repo = self.repo_config.as_ref()?;
        let guarded: Vec<&str> = repo.ignored.iter().copied().filter(|k| GUARDED.contains(k)).collect();
        let user_only: Vec<&str> = repo.ignored.iter().copied().filter(|k| USER_ONLY.contains(k)).collect();
        let root = repo.path.parent().unwrap_or(&repo.path);
        let mut parts = Vec::new();
        if !guarded.is_empty() {
            let why = match repo.trust {
                Trust::Changed => "it changed since you trusted it",
                _ => "you have not trusted it",
            };
            parts.push(format!(
                "Parley ignored {} of {} because {why}: a repository's config can run commands and weaken checks. \
                 Read it with `parley trust --show` in {}, then trust it with `parley trust`",
                guarded.join(", "),
                repo.path.display(),
                root.display()
            ));
        }
        if !user_only.is_empty() {
            parts.push(format!(
                "Parley ignored {} of {}: only your own config ({}) may set it",
                user_only.join(", "),
                repo.path.display(),
                user_config_file().map_or_else(|| "config.toml".into(), |f| f.display().to_string())
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Why a config file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad config in {}: {message}", file.display())]
pub struct ConfigError {
    pub file: PathBuf,
    pub message: String,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    review: ReviewSection,
    #[serde(default)]
    secrets: SecretsSection,
    #[serde(default)]
    pull_requests: PullRequestsSection,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PullRequestsSection {
    agents_may_resolve: Option<bool>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewSection {
    reviewer: Option<CommandValue>,
    reviewer_name: Option<String>,
    timeout_secs: Option<u64>,
    audit: Option<bool>,
    audit_dir: Option<PathBuf>,
    ignored_files: Option<Vec<String>>,
    review_config: Option<bool>,
    test_command: Option<CommandValue>,
    test_timeout_secs: Option<u64>,
    max_rounds: Option<u32>,
    block_on: Option<Vec<String>>,
    warn_on: Option<Vec<String>>,
    pass_env: Option<Vec<String>>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretsSection {
    allow_paths: Option<Vec<String>>,
}

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
enum CommandValue {
    Shell(String),
    Argv(Vec<String>),
}

/// The user's own config file: `~/.config/parley/config.toml` on Linux.
pub fn user_config_file() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "parley").map(|dirs| dirs.config_dir().join("config.toml"))
}

/// Review settings for the repository at `root`: its `.parley.toml` over the
/// user's config file over the defaults. Read on every request, so edits apply
/// at once. The repository's guarded settings ([`GUARDED`]) apply only while
/// the user trusts the file's exact content.
pub fn review_settings(root: &Path) -> Result<ReviewSettings, ConfigError> {
    settings_from(root, user_config_file(), &trust::standing)
}

/// Where a repository's config stands: the trust records, or a test's stand-in.
type Standing<'a> = &'a dyn Fn(&Path, &str) -> Result<Trust, String>;

fn settings_from(
    root: &Path,
    user_file: Option<PathBuf>,
    standing: Standing<'_>,
) -> Result<ReviewSettings, ConfigError> {
    let mut settings = review_settings_defaults(root);
    if let Some(file) = user_file
        && let Some((text, _)) = read_config(&file)?
    {
        let parsed = parse(&text, &file)?;
        apply(&mut settings, parsed, &file, root, Origin::User)?;
        settings.sources.push(file);
    }
    if let Some((repo, parsed)) = read_repo_config(root, standing)? {
        apply(&mut settings, parsed, &repo.path, root, Origin::Repository { trusted: repo.trust == Trust::Trusted })?;
        settings.sources.push(repo.path.clone());
        settings.repo_config = Some(repo);
    }
    Ok(settings)
}

/// The repository's config file, parsed, with its standing and what it sets.
fn read_repo_config(root: &Path, standing: Standing<'_>) -> Result<Option<(RepoConfig, ConfigFile)>, ConfigError> {
    let Some((repo, text)) = describe_repo_config(root, standing)? else { return Ok(None) };
    let parsed = parse(&text, &repo.path)?;
    Ok(Some((repo, parsed)))
}

/// A repository's `.parley.toml` on its own, for `parley trust` and
/// `parley doctor`: the file, its hash, its standing and what it sets, with
/// its text. `None` when there is none.
pub fn repo_config(root: &Path) -> Result<Option<(RepoConfig, String)>, ConfigError> {
    describe_repo_config(root, &trust::standing)
}

fn describe_repo_config(root: &Path, standing: Standing<'_>) -> Result<Option<(RepoConfig, String)>, ConfigError> {
    let file = root.join(REPO_CONFIG);
    let Some((text, hash)) = read_config(&file)? else { return Ok(None) };
    let parsed = parse(&text, &file)?;
    let trust = standing(root, &hash).map_err(|message| ConfigError { file: file.clone(), message })?;
    let mut scratch = review_settings_defaults(root);
    let origin = Origin::Repository { trusted: trust == Trust::Trusted };
    let (guarded, ignored) = apply(&mut scratch, parsed, &file, root, origin)?;
    Ok(Some((RepoConfig { path: file, hash, trust, guarded, ignored }, text)))
}

fn review_settings_defaults(root: &Path) -> ReviewSettings {
    ReviewSettings {
        reviewer: None,
        reviewer_name: None,
        timeout: std::time::Duration::from_secs(600),
        audit: true,
        audit_dir: root.join(".reviews"),
        ignored_files: Vec::new(),
        review_config: false,
        test_command: None,
        test_timeout: std::time::Duration::from_secs(600),
        max_rounds: 5,
        thresholds: crate::structured_review::Thresholds::default(),
        secret_allow_paths: Vec::new(),
        pass_env: Vec::new(),
        agents_may_resolve: false,
        sources: Vec::new(),
        repo_config: None,
    }
}

/// Config files larger than this are refused: no real one comes near.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A config file's text and content hash; `None` when there is no file.
fn read_config(file: &Path) -> Result<Option<(String, String)>, ConfigError> {
    let bad = |message: String| ConfigError { file: file.to_owned(), message };
    let Some(bytes) = read_settings_file(file).map_err(|e| bad(e.to_string()))? else { return Ok(None) };
    let hash = trust::content_hash(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8 text".into()))?;
    Ok(Some((text, hash)))
}

/// Reads a settings file through [`crate::regular_file`]: a FIFO would block
/// the read forever and a device such as `/dev/zero` would never end. `None`
/// when there is no file.
pub(crate) fn read_settings_file(file: &Path) -> Result<Option<Vec<u8>>, crate::regular_file::RegularFileError> {
    use crate::regular_file::{self, RegularFileError};
    match regular_file::read(file, MAX_CONFIG_BYTES) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(RegularFileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn parse(text: &str, file: &Path) -> Result<ConfigFile, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError { file: file.to_owned(), message: describe_toml_error(text, &e) })
}

/// The variables a reviewer or test command gets from the asker's environment
/// (else the daemon's): enough to find programs, the user's home and their
/// logins there, and the locale. Anything else (an agent host's API keys) only
/// when the user's own config names it in `pass_env`.
pub const CHILD_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "TZ",
    "TMPDIR",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
];

/// On Windows, besides [`CHILD_ENV`]: what Windows programs need to run at
/// all (`SystemRoot`: without it sockets fail), to find programs and
/// scripts, and the user's profile and app data, where reviewers keep their
/// logins. Names are matched ignoring case there (`Path` is `PATH`).
#[cfg(windows)]
pub const WINDOWS_CHILD_ENV: &[&str] = &[
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "CommonProgramFiles",
];

/// Whether the variable `name` is `wanted` (a name, or `PREFIX_*`).
fn name_matches(name: &str, wanted: &str) -> bool {
    match wanted.strip_suffix('*') {
        Some(prefix) => name.get(..prefix.len()).is_some_and(|head| same_name(head, prefix)),
        None => same_name(name, wanted),
    }
}

/// Variable names compare exactly on Unix and ignoring case on Windows, as
/// each system has them.
fn same_name(a: &str, b: &str) -> bool {
    if cfg!(windows) { a.eq_ignore_ascii_case(b) } else { a == b }
}

/// The environment a reviewer or test command runs with: [`CHILD_ENV`] and
/// the names in `pass` (`NAME`, or `PREFIX_*`), each taken from the asker's
/// environment, else the daemon's own.
pub fn command_env(asker: &BTreeMap<String, String>, pass: &[String]) -> BTreeMap<String, String> {
    #[cfg(windows)]
    let names = CHILD_ENV.iter().chain(WINDOWS_CHILD_ENV).copied();
    #[cfg(not(windows))]
    let names = CHILD_ENV.iter().copied();
    let wanted = |name: &str| names.clone().chain(pass.iter().map(String::as_str)).any(|w| name_matches(name, w));
    let own = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    let mut env: BTreeMap<String, String> = own.filter(|(k, _)| wanted(k)).collect();
    for (name, value) in asker.iter().filter(|(k, _)| wanted(k)) {
        // The asker's `Path` replaces the daemon's `PATH` on Windows.
        env.retain(|own, _| own == name || !same_name(own, name));
        env.insert(name.clone(), value.clone());
    }
    env
}

/// A TOML error as one line naming the key and line it is about.
fn describe_toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim();
    let Some(span) = error.span() else {
        return message.to_owned();
    };
    let before = &text[..span.start.min(text.len())];
    let line_number = before.matches('\n').count() + 1;
    let line = text.lines().nth(line_number - 1).unwrap_or("").trim();
    let section = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(['[', ']']).trim().to_owned());
    match (line.split_once('=').map(|(key, _)| key.trim()), section) {
        (Some(key), Some(section)) => format!("key {section}.{key} (line {line_number}): {message}"),
        (Some(key), None) => format!("key {key} (line {line_number}): {message}"),
        (None, _) => format!("line {line_number}: {message}"),
    }
}

/// Which file a setting comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    User,
    Repository { trusted: bool },
}

/// Applies one file's settings over `settings`. Returns, for a repository's
/// file, the guarded settings it sets (`key`, value as shown) and the keys
/// that were ignored.
#[allow(clippy::type_complexity)]
fn apply(
    settings: &mut ReviewSettings,
    file: ConfigFile,
    path: &Path,
    root: &Path,
    origin: Origin,
) -> Result<(Vec<(&'static str, String)>, Vec<&'static str>), ConfigError> {
    let bad =
        |key: &str, message: String| ConfigError { file: path.to_owned(), message: format!("key {key}: {message}") };
    let command = |key: &str, value: CommandValue| match value {
        CommandValue::Shell(line) if !line.trim().is_empty() => Ok(CommandLine::Shell(line)),
        CommandValue::Argv(argv) if !argv.is_empty() => Ok(CommandLine::Argv(argv)),
        _ => Err(bad(key, "must not be empty".into())),
    };
    let mut guarded: Vec<(&'static str, String)> = Vec::new();
    let mut ignored: Vec<&'static str> = Vec::new();
    // Whether a guarded setting found in this file applies; every one found
    // in a repository's file is listed for `parley trust --show`.
    let mut allowed = |key: &'static str, shown: String| match origin {
        Origin::User => true,
        Origin::Repository { trusted } => {
            guarded.push((key, shown));
            if !trusted {
                ignored.push(key);
            }
            trusted
        }
    };
    let review = file.review;
    if let Some(value) = review.reviewer {
        let reviewer = command("review.reviewer", value)?;
        // A person reviewing runs nothing: a repository may ask for that.
        let runs_nothing = reviewer.to_string().trim() == "human";
        if runs_nothing || allowed("review.reviewer", format!("{reviewer}")) {
            settings.reviewer = Some(reviewer);
        }
    }
    if let Some(name) = review.reviewer_name {
        if name.trim().is_empty() {
            return Err(bad("review.reviewer_name", "must not be empty".into()));
        }
        settings.reviewer_name = Some(name.trim().to_owned());
    }
    if let Some(secs) = review.timeout_secs {
        if secs == 0 {
            return Err(bad("review.timeout_secs", "must be at least 1".into()));
        }
        settings.timeout = std::time::Duration::from_secs(secs);
    }
    if let Some(audit) = review.audit {
        settings.audit = audit;
    }
    if let Some(dir) = review.audit_dir {
        let inside = !dir.is_absolute() && dir.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside {
            return Err(bad(
                "review.audit_dir",
                format!(
                    "{} is not a folder inside the repository: give a relative path such as \".reviews\"",
                    dir.display()
                ),
            ));
        }
        if allowed("review.audit_dir", dir.display().to_string()) {
            settings.audit_dir = root.join(dir);
        }
    }
    if let Some(include) = review.review_config {
        settings.review_config = include;
    }
    if let Some(globs) = review.ignored_files {
        crate::glob::Globs::new(&globs).map_err(|e| bad("review.ignored_files", e.to_string()))?;
        if allowed("review.ignored_files", format!("{globs:?}")) {
            settings.ignored_files = globs;
        }
    }
    if let Some(value) = review.test_command {
        let test = command("review.test_command", value)?;
        if allowed("review.test_command", test.to_string()) {
            settings.test_command = Some(test);
        }
    }
    if let Some(secs) = review.test_timeout_secs {
        settings.test_timeout = std::time::Duration::from_secs(secs.max(1));
    }
    if let Some(rounds) = review.max_rounds {
        if rounds == 0 {
            return Err(bad("review.max_rounds", "must be at least 1".into()));
        }
        settings.max_rounds = rounds;
    }
    let severities = |key: &str, names: Vec<String>| {
        names
            .iter()
            .map(|name| {
                crate::structured_review::Severity::from_config(name).ok_or_else(|| {
                    bad(key, format!("unknown severity {name:?}; use critical, major, minor or suggestion"))
                })
            })
            .collect::<Result<Vec<_>, _>>()
    };
    if let Some(names) = review.block_on {
        let severities = severities("review.block_on", names.clone())?;
        if allowed("review.block_on", format!("{names:?}")) {
            settings.thresholds.block_on = severities;
        }
    }
    if let Some(names) = review.warn_on {
        let severities = severities("review.warn_on", names.clone())?;
        if allowed("review.warn_on", format!("{names:?}")) {
            settings.thresholds.warn_on = severities;
        }
    }
    if let Some(globs) = file.secrets.allow_paths {
        crate::glob::Globs::new(&globs).map_err(|e| bad("secrets.allow_paths", e.to_string()))?;
        if allowed("secrets.allow_paths", format!("{globs:?}")) {
            settings.secret_allow_paths = globs;
        }
    }
    if let Some(names) = review.pass_env {
        if let Some(name) =
            names.iter().find(|n| n.is_empty() || n.contains('=') || n.trim_end_matches('*').contains('*'))
        {
            return Err(bad(
                "review.pass_env",
                format!(
                    "{name:?} is not a variable name (use NAME, or PREFIX_* for every variable starting with PREFIX_)"
                ),
            ));
        }
        match origin {
            Origin::User => settings.pass_env = names,
            Origin::Repository { .. } => ignored.push("review.pass_env"),
        }
    }
    // Whether agents may close a teammate's thread is the person's own
    // choice: a cloned repository must not make it for them.
    if let Some(may) = file.pull_requests.agents_may_resolve {
        match origin {
            Origin::User => settings.agents_may_resolve = may,
            Origin::Repository { .. } => ignored.push("pull_requests.agents_may_resolve"),
        }
    }
    // Listed in one order whatever the file's, the commands first.
    let rank = |key: &str| GUARDED.iter().chain(USER_ONLY).position(|k| *k == key);
    guarded.sort_by_key(|(key, _)| rank(key));
    ignored.sort_by_key(|key| rank(key));
    Ok((guarded, ignored))
}

impl crate::structured_review::Severity {
    /// A severity as config files spell it, strictly.
    pub fn from_config(name: &str) -> Option<Self> {
        use crate::structured_review::Severity;
        match name {
            "critical" => Some(Severity::Critical),
            "major" => Some(Severity::Major),
            "minor" => Some(Severity::Minor),
            "suggestion" => Some(Severity::Suggestion),
            _ => None,
        }
    }
}

/// Parses and checks the text of a config file as [`review_settings`] does
/// with `.parley.toml`, touching no file: for fuzzing, and for tools that
/// check a file before it is written.
pub fn check_config_text(text: &str) -> Result<(), ConfigError> {
    let file = Path::new(REPO_CONFIG);
    let root = Path::new("/");
    let parsed = parse(text, file)?;
    // Both ways a repository's file can be read: trusted, and not.
    for trusted in [true, false] {
        let parsed = parse(text, file)?;
        apply(&mut review_settings_defaults(root), parsed, file, root, Origin::Repository { trusted })?;
    }
    apply(&mut review_settings_defaults(root), parsed, file, root, Origin::User).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository config the user trusts, read without the user's own file.
    fn check(file: &str, want: Result<&dyn Fn(&ReviewSettings) -> bool, &str>) {
        check_as(Trust::Trusted, file, want);
    }

    fn check_as(trust: Trust, file: &str, want: Result<&dyn Fn(&ReviewSettings) -> bool, &str>) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(REPO_CONFIG), file).expect("write");
        let standing = move |_: &Path, _: &str| Ok(trust.clone());
        match (settings_from(dir.path(), None, &standing), want) {
            (Ok(settings), Ok(holds)) => assert!(holds(&settings), "{file}: {settings:?}"),
            (Err(e), Err(wanted)) => {
                let text = e.to_string();
                assert!(text.contains(wanted) && text.contains(REPO_CONFIG), "{file}: {text}");
            }
            (got, _) => panic!("{file}: unexpected {got:?}"),
        }
    }

    #[test]
    fn repo_config_is_read_strictly() {
        use crate::structured_review::Severity;
        check("", Ok(&|s| s.reviewer.is_none() && s.audit && s.max_rounds == 5));
        check(
            "[review]\nreviewer = \"claude -p --output-format json\"\ntimeout_secs = 30\n",
            Ok(&|s| {
                s.reviewer == Some(CommandLine::Shell("claude -p --output-format json".into()))
                    && s.timeout.as_secs() == 30
            }),
        );
        check(
            "[review]\nreviewer = [\"codex\", \"exec\"]\n",
            Ok(&|s| s.reviewer == Some(CommandLine::Argv(vec!["codex".into(), "exec".into()]))),
        );
        check(
            "[review]\nblock_on = [\"critical\"]\nwarn_on = []\n",
            Ok(&|s| s.thresholds.block_on == vec![Severity::Critical]),
        );
        check("[review]\naudit_dir = \"audit\"\n", Ok(&|s| s.audit_dir.ends_with("audit")));
        check("[review]\naudit_dir = \"../../x\"\n", Err("is not a folder inside the repository"));
        check("[review]\naudit_dir = \"/tmp/x\"\n", Err("is not a folder inside the repository"));
        check("[review]\npass_env = [\"A=B\"]\n", Err("is not a variable name"));
        check("[review]\nrevewer = \"x\"\n", Err("unknown field `revewer`"));
        check("[reviews]\n", Err("unknown field `reviews`"));
        check("[review]\ntimeout_secs = \"ten\"\n", Err("review.timeout_secs"));
        check("[review]\nblock_on = [\"blocker\"]\n", Err("unknown severity \"blocker\""));
        check("[review]\nreviewer = \"\"\n", Err("must not be empty"));
        check("[review\n", Err("bad config"));
        check("[review]\nignored_files = [\"*.lock\", \"gen/\"]\n", Ok(&|s| s.ignored_files.len() == 2));
        check(
            "[review]\nignored_files = [\"[z-a].rs\"]\n",
            Err("key review.ignored_files: \"[z-a].rs\" is not a glob: invalid range"),
        );
        check("[secrets]\nallow_paths = [\"a[9-0]\"]\n", Err("key secrets.allow_paths: \"a[9-0]\" is not a glob"));
    }

    const HOSTILE: &str = "[review]\nreviewer = [\"sh\", \"-c\", \"id\"]\ntest_command = \"touch pwned\"\n\
        ignored_files = [\"**\"]\nblock_on = []\nwarn_on = []\naudit_dir = \"elsewhere\"\n\
        timeout_secs = 30\nmax_rounds = 2\npass_env = [\"AWS_*\"]\n\
        [secrets]\nallow_paths = [\"**\"]\n";

    #[test]
    fn an_untrusted_repository_config_runs_and_weakens_nothing_but_its_other_settings_apply() {
        use crate::structured_review::Thresholds;
        for trust in [Trust::Untrusted, Trust::Changed] {
            check_as(
                trust.clone(),
                HOSTILE,
                Ok(&|s| {
                    let repo = s.repo_config.as_ref().expect("the repository's file is described");
                    s.reviewer.is_none()
                        && s.test_command.is_none()
                        && s.ignored_files.is_empty()
                        && s.thresholds == Thresholds::default()
                        && s.audit_dir.ends_with(".reviews")
                        && s.secret_allow_paths.is_empty()
                        && s.pass_env.is_empty()
                        && s.timeout.as_secs() == 30
                        && s.max_rounds == 2
                        && repo.ignored.len() == GUARDED.len() + 1
                        && repo.guarded.iter().any(|(k, v)| *k == "review.reviewer" && v == "sh -c id")
                        && s.ignored_note().is_some_and(|n| {
                            n.contains("review.reviewer, review.test_command")
                                && n.contains("parley trust --show")
                                && n.contains("only your own config")
                        })
                }),
            );
        }
        check_as(
            Trust::Changed,
            HOSTILE,
            Ok(&|s| s.ignored_note().is_some_and(|n| n.contains("it changed since you trusted it"))),
        );
        check_as(
            Trust::Trusted,
            HOSTILE,
            Ok(&|s| {
                s.reviewer == Some(CommandLine::Argv(vec!["sh".into(), "-c".into(), "id".into()]))
                    && s.test_command.is_some()
                    && s.secret_allow_paths == vec!["**".to_owned()]
                    && s.audit_dir.ends_with("elsewhere")
                    && s.pass_env.is_empty()
                    && s.ignored_note().is_some_and(|n| !n.contains("trust --show") && n.contains("review.pass_env"))
            }),
        );
        // Asking a person runs nothing, so an untrusted file may.
        check_as(
            Trust::Untrusted,
            "[review]\nreviewer = \"human\"\n",
            Ok(&|s| s.reviewer == Some(CommandLine::Shell("human".into())) && s.ignored_note().is_none()),
        );
    }

    #[test]
    fn only_the_users_own_config_lets_agents_resolve_synced_threads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let user = dir.path().join("config.toml");
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).expect("mkdir");
        let trusted = |_: &Path, _: &str| Ok(Trust::Trusted);
        let settings = settings_from(&repo, Some(user.clone()), &trusted).expect("no files");
        assert!(!settings.agents_may_resolve, "off by default");
        std::fs::write(&user, "[pull_requests]\nagents_may_resolve = true\n").expect("write");
        assert!(settings_from(&repo, Some(user.clone()), &trusted).expect("read").agents_may_resolve);
        // A repository (even a trusted one) cannot turn it on, and is told so.
        std::fs::remove_file(&user).expect("rm");
        std::fs::write(repo.join(REPO_CONFIG), "[pull_requests]\nagents_may_resolve = true\n").expect("write");
        let settings = settings_from(&repo, Some(user), &trusted).expect("read");
        assert!(!settings.agents_may_resolve);
        let note = settings.ignored_note().expect("a note");
        assert!(note.contains("pull_requests.agents_may_resolve") && note.contains("only your own config"), "{note}");
        check("[pull_requests]\nagents_may_resolve = \"yes\"\n", Err("pull_requests.agents_may_resolve"));
    }

    #[test]
    #[cfg(unix)] // FIFOs and devices
    fn special_files_are_refused_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join(REPO_CONFIG);
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::RWXU, 0)
            .expect("mkfifo");
        let err = review_settings(dir.path()).expect_err("a FIFO is refused");
        assert!(err.to_string().contains("named pipe (FIFO), not a regular file"), "{err}");
        std::fs::remove_file(&fifo).expect("rm");
        std::os::unix::fs::symlink("/dev/zero", &fifo).expect("link");
        let err = review_settings(dir.path()).expect_err("a device is refused");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn reviewers_get_a_built_environment_not_the_askers_keys() {
        let asker: BTreeMap<String, String> = [
            ("PATH", "/asker/bin"),
            ("HOME", "/home/ana"),
            ("LC_ALL", "C.UTF-8"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("PARLEY_SOCKET", "/tmp/s"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let env = command_env(&asker, &[]);
        assert_eq!(env.get("PATH").map(String::as_str), Some("/asker/bin"));
        assert_eq!(env.get("LC_ALL").map(String::as_str), Some("C.UTF-8"));
        assert!(!env.contains_key("ANTHROPIC_API_KEY") && !env.contains_key("AWS_SECRET_ACCESS_KEY"), "{env:?}");
        assert!(!env.contains_key("PARLEY_SOCKET"), "{env:?}");
        let env = command_env(&asker, &["ANTHROPIC_API_KEY".into(), "AWS_*".into()]);
        assert_eq!(env.get("ANTHROPIC_API_KEY").map(String::as_str), Some("sk-ant-secret"));
        assert_eq!(env.get("AWS_SECRET_ACCESS_KEY").map(String::as_str), Some("secret"));
    }
}
