//! Parley's integration tests, one module per area, in one test binary (one
//! link instead of one per file): the real daemon, shim and CLI on temporary
//! sockets, driven by real clients. `cargo test -p parley-tests --test integration
//! <module>::` runs one area.

mod agent_threads;
mod agents;
mod attach;
mod bounded;
mod daily;
mod disk;
mod feedback;
mod host_hooks;
mod hostile_repo;
mod hub_contract;
mod ide;
mod line_endings;
mod mcp_tasks;
mod mcp_tools;
mod nvim;
mod packaging;
mod person_review;
mod plans;
mod pull_requests;
mod resilience;
mod review_history;
mod routing;
mod sdk_clients;
mod sessions;
mod setup;
mod stdio;
mod stopping;
mod terminal;
mod thread_standing;
mod tidy;
mod trust;
mod vscode;
mod walkthroughs;
mod windows;
