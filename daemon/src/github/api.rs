//! GitHub's GraphQL API over HTTP (Parley sends no REST request: every read
//! and write is a GraphQL document, checked against GitHub's published
//! schema by the tests): the token sent in a header and nowhere else, a spent rate limit waited out when its reset is near, and
//! every failure told as what a person can do about it.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The API root Parley talks to when `PARLEY_GITHUB_API` is not set.
pub const DEFAULT_API_ROOT: &str = "https://api.github.com";

/// The environment variable naming another API root: a GitHub Enterprise
/// server's `https://HOST/api/v3`, or a local server.
pub const API_ROOT_VARIABLE: &str = "PARLEY_GITHUB_API";

/// How long a spent rate limit is waited out within one call; a later reset
/// is reported, and the next sync finishes the job.
const LONGEST_RATE_WAIT: Duration = Duration::from_secs(60);

/// How many times one call is tried again after a spent rate limit.
const RATE_RETRIES: usize = 3;

/// A token for GitHub's API. Shown as `***`: it is kept in memory only,
/// never logged, stored or written to `.reviews/`.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn new(token: impl Into<String>) -> Option<Token> {
        let token = token.into().trim().to_owned();
        (!token.is_empty()).then_some(Token(token))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// Why a call to GitHub failed, each saying what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GithubError {
    #[error("cannot reach GitHub at {root}: {detail}; check the network (or {API_ROOT_VARIABLE}) and sync again")]
    Unreachable { root: String, detail: String },
    #[error(
        "GitHub refused the token ({detail}): log in again with `gh auth login`, or set GITHUB_TOKEN to a token that can read and write the pull request"
    )]
    Unauthorized { detail: String },
    #[error("GitHub refused: {detail}; the token needs access to the repository and its pull requests")]
    Forbidden { detail: String },
    #[error("GitHub's rate limit is spent until {until}; sync again after it (the daemon does on its own)")]
    RateLimited {
        /// When GitHub said it resets, RFC 3339.
        until: String,
        /// The same, in seconds since the epoch.
        reset_at: u64,
    },
    #[error("{0}")]
    NotFound(String),
    #[error("GitHub did not accept the request ({status}): {message}")]
    Refused { status: u16, message: String },
    #[error("GitHub is unavailable ({status}); sync again in a while")]
    Unavailable { status: u16 },
    #[error("GitHub's answer could not be read ({0}); sync again, and report it if it keeps happening")]
    Garbled(String),
}

/// One GitHub API: its root, its GraphQL endpoint and the token.
#[derive(Debug, Clone)]
pub struct Api {
    root: String,
    graphql_url: String,
    token: Token,
    agent: ureq::Agent,
}

impl Api {
    /// The API at `root` (GitHub's API root, as `PARLEY_GITHUB_API` names
    /// it; GraphQL is found beside it as GitHub serves it: `/graphql` on api.github.com, `/api/graphql` for `/api/v3`).
    pub fn new(root: &str, token: Token) -> Api {
        let root = root.trim_end_matches('/').to_owned();
        let graphql_url = match root.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{root}/graphql"),
        };
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(60)))
            .timeout_connect(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .user_agent(concat!("parley/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Api { root, graphql_url, token, agent }
    }

    pub fn root(&self) -> &str {
        &self.root
    }

    /// The web host the API serves (`github.com` for api.github.com), which
    /// `gh auth token --hostname` knows it by.
    pub fn web_host(&self) -> String {
        web_host_of(&self.root)
    }

    /// A GraphQL query or mutation; its `data`, or the first error GitHub gave.
    pub fn graphql(&self, query: &str, variables: Value) -> Result<Value, GithubError> {
        let body = json!({ "query": query, "variables": variables });
        let answer = self.send(&body)?;
        if let Some(error) = answer.get("errors").and_then(Value::as_array).and_then(|errors| errors.first()) {
            let message = error.get("message").and_then(Value::as_str).unwrap_or("no message").to_owned();
            return Err(match error.get("type").and_then(Value::as_str) {
                Some("NOT_FOUND") => GithubError::NotFound(format!("GitHub: {message}")),
                Some("FORBIDDEN") => GithubError::Forbidden { detail: message },
                Some("RATE_LIMITED") => rate_limited(now_seconds() + 60),
                _ => GithubError::Refused { status: 200, message },
            });
        }
        answer.get("data").cloned().ok_or_else(|| GithubError::Garbled("a GraphQL answer without data".into()))
    }

    fn send(&self, body: &Value) -> Result<Value, GithubError> {
        let mut tries = 0;
        loop {
            match self.send_once(body) {
                Err(GithubError::RateLimited { reset_at, .. })
                    if tries < RATE_RETRIES
                        && reset_at.saturating_sub(now_seconds()) <= LONGEST_RATE_WAIT.as_secs() =>
                {
                    tries += 1;
                    let wait = reset_at.saturating_sub(now_seconds()).max(1);
                    tracing::info!(wait, "GitHub's rate limit is spent: waiting for its reset");
                    std::thread::sleep(Duration::from_secs(wait));
                }
                other => return other,
            }
        }
    }

    fn send_once(&self, body: &Value) -> Result<Value, GithubError> {
        let url = &self.graphql_url;
        let unreachable = |detail: String| GithubError::Unreachable { root: self.root.clone(), detail };
        let authorization = format!("Bearer {}", self.token.0);
        let answer = self
            .agent
            .post(url)
            .header("Authorization", &authorization)
            .header("Accept", "application/vnd.github+json")
            .send_json(body);
        let mut answer = answer.map_err(|e| unreachable(e.to_string()))?;
        let status = answer.status().as_u16();
        let header = |name: &str| answer.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let remaining = header("x-ratelimit-remaining");
        let reset = header("x-ratelimit-reset").and_then(|r| r.parse::<u64>().ok());
        let retry_after = header("retry-after").and_then(|r| r.parse::<u64>().ok());
        let text = answer
            .body_mut()
            .with_config()
            .limit(64 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| unreachable(format!("the answer broke off: {e}")))?;
        let parsed: Option<Value> =
            if text.trim().is_empty() { Some(Value::Null) } else { serde_json::from_str(&text).ok() };
        let message = || {
            parsed
                .as_ref()
                .and_then(|v| v.get("message"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| text.chars().take(200).collect())
        };
        match status {
            200..=299 => parsed.ok_or_else(|| {
                GithubError::Garbled(format!("not JSON: {}", text.chars().take(80).collect::<String>()))
            }),
            401 => Err(GithubError::Unauthorized { detail: message() }),
            403 | 429 if retry_after.is_some() => Err(rate_limited(now_seconds() + retry_after.unwrap_or(60))),
            403 | 429 if remaining.as_deref() == Some("0") => Err(rate_limited(reset.unwrap_or(now_seconds() + 60))),
            429 => Err(rate_limited(now_seconds() + 60)),
            403 => Err(GithubError::Forbidden { detail: message() }),
            404 | 410 => Err(GithubError::NotFound(format!("GitHub has no {url} ({})", message()))),
            500..=599 => Err(GithubError::Unavailable { status }),
            _ => Err(GithubError::Refused { status, message: message() }),
        }
    }
}

fn rate_limited(reset_at: u64) -> GithubError {
    let until = chrono::DateTime::from_timestamp(reset_at as i64, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| reset_at.to_string());
    GithubError::RateLimited { until, reset_at }
}

fn now_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// `github.com` for `https://api.github.com`, `HOST` for `https://HOST/api/v3`
/// or any other root.
pub fn web_host_of(root: &str) -> String {
    let without_scheme = root.split_once("://").map_or(root, |(_, rest)| rest);
    let host = without_scheme.split('/').next().unwrap_or(without_scheme);
    match host {
        "api.github.com" => "github.com".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphql_is_found_beside_the_rest_root() {
        let token = Token::new("t").expect("a token");
        assert_eq!(Api::new("https://api.github.com/", token.clone()).graphql_url, "https://api.github.com/graphql");
        assert_eq!(
            Api::new("https://ghe.example/api/v3", token.clone()).graphql_url,
            "https://ghe.example/api/graphql"
        );
        assert_eq!(Api::new("http://127.0.0.1:9/", token).graphql_url, "http://127.0.0.1:9/graphql");
    }

    #[test]
    fn the_web_host_is_the_one_gh_knows() {
        assert_eq!(web_host_of("https://api.github.com"), "github.com");
        assert_eq!(web_host_of("https://ghe.example/api/v3"), "ghe.example");
        assert_eq!(web_host_of("http://127.0.0.1:4000"), "127.0.0.1:4000");
    }

    #[test]
    fn a_token_never_shows() {
        let token = Token::new(" ghp_secret \n").expect("a token");
        assert_eq!(format!("{token:?}"), "Token(***)");
        assert!(Token::new("  ").is_none());
    }
}
