//! GitHub pull requests: the API (GraphQL over HTTP), the token
//! (`gh`'s or `GITHUB_TOKEN`), which pull request a workspace's branch is,
//! what a pull request holds, and what Parley sends to it. Syncing it with Parley's threads is the
//! use case's work (`usecases::pull_requests`).

pub mod api;
pub mod auth;
pub mod link;
pub mod linked;
pub mod pull_plan;
pub mod remote;
pub mod review;

pub use api::{Api, GithubError, Token};
pub use link::PullRequestRef;
pub use remote::{DiffSide, RemoteComment, RemotePullRequest, RemoteThread};
