//! What `parley service install` leaves for Windows's logon, and what the
//! daemon it starts reads back: the `Run` value's command line,
//! `"C:\…\parley.exe" daemon --logon`, and a small settings file holding the
//! environment the systemd unit and the launchd agent carry
//! (`%LOCALAPPDATA%\parley\service.toml`).
//!
//! The environment lives in a file rather than in flags on the command line
//! because a `Run` value cannot set variables, Windows runs only the first
//! 260 characters of one, and a pipe name or a data folder quoted into a
//! command line must survive Windows's argument-splitting rules (a folder
//! ending in `\` before the closing quote would not). The file is TOML,
//! read and written whole. Used on Windows; built and tested everywhere.
#![cfg_attr(not(windows), allow(dead_code))]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

/// The `daemon` flag the `Run` value passes.
pub const LOGON_FLAG: &str = "--logon";

/// The settings file's name, in the folder of the pipe's lock and log.
pub const SETTINGS_FILE: &str = "service.toml";

/// The `Run` value: this `parley.exe`, quoted, started as the logon daemon.
pub fn command_line(parley: &Path) -> String {
    format!("\"{}\" daemon {LOGON_FLAG}", parley.display())
}

/// The program a `Run` value starts: the quoted path, or the first word when
/// it is not quoted (as a person may have edited it).
pub fn program_of(value: &str) -> Option<PathBuf> {
    let value = value.trim_start();
    let program = match value.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => value.split_whitespace().next()?,
    };
    (!program.is_empty()).then(|| PathBuf::from(program))
}

/// The daemon's environment at logon, as `install` saw it.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Variables set in the daemon before it reads any.
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
}

impl Settings {
    pub fn render(&self) -> anyhow::Result<String> {
        let body = toml::to_string(self).context("writing the service settings")?;
        Ok(format!(
            "# Written by `parley service install`, read by the daemon it starts at logon\n\
             # (`parley daemon {LOGON_FLAG}`); `parley service uninstall` removes it.\n{body}"
        ))
    }

    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Settings> {
        toml::from_str(text).with_context(|| {
            format!(
                "{} is not as `parley service install` writes it; run `parley service install` again",
                path.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_value_quotes_the_program_and_reads_back() {
        let exe = Path::new(r"C:\Program Files\Parley\parley.exe");
        let line = command_line(exe);
        assert_eq!(line, r#""C:\Program Files\Parley\parley.exe" daemon --logon"#);
        assert_eq!(program_of(&line).as_deref(), Some(exe));
        assert_eq!(program_of(r"C:\tools\parley.exe daemon").as_deref(), Some(Path::new(r"C:\tools\parley.exe")));
        assert_eq!(program_of("  "), None);
        assert_eq!(program_of(r#""" daemon"#), None);
    }

    #[test]
    fn the_settings_round_trip_and_refuse_what_they_do_not_know() {
        let settings = Settings {
            environment: [("PARLEY_SOCKET".to_owned(), r"\\.\pipe\parley-a b\".to_owned())].into_iter().collect(),
        };
        let text = settings.render().expect("renders");
        assert!(text.starts_with("# Written by `parley service install`"), "{text}");
        assert_eq!(Settings::parse(&text, Path::new("s.toml")).expect("parses"), settings);
        let err = Settings::parse("[env]\nX = \"1\"\n", Path::new("s.toml")).expect_err("unknown table");
        assert!(format!("{err:#}").contains("run `parley service install` again"), "{err:#}");
    }
}
