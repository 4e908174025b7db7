//! Settings read from the environment: where state lives and what to log.
//! The only module that reads the environment for settings.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Overrides the directory holding Parley's store.
pub const DATA_DIR_ENV: &str = "PARLEY_DATA_DIR";
/// A `tracing` filter for the daemon's stderr log, e.g. `debug` or `parley=trace`.
pub const LOG_ENV: &str = "PARLEY_LOG";

/// The directory holding the store: `$PARLEY_DATA_DIR`, else the user's data
/// directory (`~/.local/share/parley` on Linux).
pub fn data_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let dirs = directories::ProjectDirs::from("", "", "parley")
        .context("cannot find your home directory; set PARLEY_DATA_DIR to a folder for Parley's store")?;
    Ok(dirs.data_dir().to_owned())
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

/// Who a human's comments are from by default: the login name.
pub fn user_name() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "human".into())
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
    /// The config files that were read, most general first.
    pub sources: Vec<PathBuf>,
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
/// at once.
pub fn review_settings(root: &Path) -> Result<ReviewSettings, ConfigError> {
    let mut settings = ReviewSettings {
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
        sources: Vec::new(),
    };
    let files = user_config_file().into_iter().chain(std::iter::once(root.join(REPO_CONFIG)));
    for file in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(ConfigError { file, message: format!("cannot read it: {e}") }),
        };
        let parsed: ConfigFile = toml::from_str(&text)
            .map_err(|e| ConfigError { file: file.clone(), message: describe_toml_error(&text, &e) })?;
        apply(&mut settings, parsed, &file, root)?;
        settings.sources.push(file);
    }
    Ok(settings)
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

fn apply(settings: &mut ReviewSettings, file: ConfigFile, path: &Path, root: &Path) -> Result<(), ConfigError> {
    let bad =
        |key: &str, message: String| ConfigError { file: path.to_owned(), message: format!("key {key}: {message}") };
    let command = |key: &str, value: CommandValue| match value {
        CommandValue::Shell(line) if !line.trim().is_empty() => Ok(CommandLine::Shell(line)),
        CommandValue::Argv(argv) if !argv.is_empty() => Ok(CommandLine::Argv(argv)),
        _ => Err(bad(key, "must not be empty".into())),
    };
    let review = file.review;
    if let Some(value) = review.reviewer {
        settings.reviewer = Some(command("review.reviewer", value)?);
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
        settings.audit_dir = if dir.is_absolute() { dir } else { root.join(dir) };
    }
    if let Some(include) = review.review_config {
        settings.review_config = include;
    }
    if let Some(globs) = review.ignored_files {
        crate::glob::Globs::new(&globs).map_err(|e| bad("review.ignored_files", e.to_string()))?;
        settings.ignored_files = globs;
    }
    if let Some(value) = review.test_command {
        settings.test_command = Some(command("review.test_command", value)?);
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
        settings.thresholds.block_on = severities("review.block_on", names)?;
    }
    if let Some(names) = review.warn_on {
        settings.thresholds.warn_on = severities("review.warn_on", names)?;
    }
    if let Some(globs) = file.secrets.allow_paths {
        crate::glob::Globs::new(&globs).map_err(|e| bad("secrets.allow_paths", e.to_string()))?;
        settings.secret_allow_paths = globs;
    }
    Ok(())
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
    let parsed: ConfigFile = toml::from_str(text)
        .map_err(|e| ConfigError { file: file.to_owned(), message: describe_toml_error(text, &e) })?;
    let mut settings = ReviewSettings {
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
        sources: Vec::new(),
    };
    apply(&mut settings, parsed, file, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(file: &str, want: Result<&dyn Fn(&ReviewSettings) -> bool, &str>) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(REPO_CONFIG), file).expect("write");
        match (review_settings(dir.path()), want) {
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
}
