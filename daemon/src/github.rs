//! GitHub pull requests: the API (REST and GraphQL over HTTP), the token
//! (`gh`'s or `GITHUB_TOKEN`), which pull request a workspace's branch is,
//! and what a pull request holds. Syncing it with Parley's threads is the
//! use case's work (`usecases::pull_requests`).

pub mod api;
pub mod auth;
pub mod link;
pub mod linked;
pub mod pull_plan;
pub mod remote;

pub use api::{Api, GithubError, Token};
pub use link::PullRequestRef;
pub use remote::{DiffSide, RemoteComment, RemotePullRequest, RemoteThread};
