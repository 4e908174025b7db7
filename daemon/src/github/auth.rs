//! Finding a token for GitHub: `gh auth token` for the API's host when `gh`
//! is installed and logged in, else `GITHUB_TOKEN` from the environment of
//! the process that talks to GitHub. The token stays in memory.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::api::Token;

/// How long `gh` may take to answer before it is passed over.
pub const GH_TIMEOUT: Duration = Duration::from_secs(15);

/// Where a token came from, for `parley pr status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// `gh auth token --hostname HOST`.
    Gh,
    /// `GITHUB_TOKEN` in the daemon's environment.
    Environment,
    /// `GITHUB_TOKEN` in the environment of the command that asked.
    Asker,
}

impl TokenSource {
    pub fn describe(self) -> &'static str {
        match self {
            TokenSource::Gh => "gh auth token",
            TokenSource::Environment => "GITHUB_TOKEN (the daemon's)",
            TokenSource::Asker => "GITHUB_TOKEN (the command's)",
        }
    }
}

/// The token for `host` (`github.com`, or an Enterprise host): `gh`'s,
/// else the daemon's `GITHUB_TOKEN`, else the one the asking command had.
pub async fn find_token(host: &str, asker: Option<&str>) -> Result<(Token, TokenSource), String> {
    if let Some(token) = token_from_gh(host).await {
        return Ok((token, TokenSource::Gh));
    }
    if let Some(token) = std::env::var("GITHUB_TOKEN").ok().and_then(Token::new) {
        return Ok((token, TokenSource::Environment));
    }
    if let Some(token) = asker.and_then(Token::new) {
        return Ok((token, TokenSource::Asker));
    }
    Err(format!(
        "no GitHub token for {host}: log in with `gh auth login{}`, or set GITHUB_TOKEN",
        if host == "github.com" { String::new() } else { format!(" --hostname {host}") }
    ))
}

/// `gh auth token --hostname HOST`, when `gh` is installed and logged in there.
async fn token_from_gh(host: &str) -> Option<Token> {
    let output = gh(&["auth", "token", "--hostname", host], None).await.ok()?;
    if !output.status.success() {
        return None;
    }
    Token::new(String::from_utf8(output.stdout).ok()?)
}

/// Runs `gh` with `args` (in `dir`), bounded by [`GH_TIMEOUT`]; why not, when
/// it is not installed or did not answer.
pub async fn gh(args: &[&str], dir: Option<&std::path::Path>) -> Result<std::process::Output, String> {
    let mut command = Command::new("gh");
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    // gh's own prompts and pager would wait for a person who is not there.
    command.env("GH_PROMPT_DISABLED", "1").env("GH_PAGER", "cat").env("NO_COLOR", "1");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    match tokio::time::timeout(GH_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Err("gh is not installed".into()),
        Ok(Err(e)) => Err(format!("gh could not run: {e}")),
        Err(_) => Err(format!("gh did not answer within {} s", GH_TIMEOUT.as_secs())),
    }
}
