//! The bodies of Parley's fuzz targets, one per way text reaches the daemon
//! from outside: a hub line, an agent's tool arguments, a config file, an
//! import file, a review's markdown and a git diff.
//!
//! Each takes the fuzzer's bytes, runs them through the daemon's own code
//! and panics only when that code breaks a rule it keeps: a crash, an answer
//! that does not read back, a reference that is not in its document. The
//! libFuzzer binaries in `fuzz_targets/` call these (built by `cargo fuzz`
//! with the `libfuzzer` feature); `tests/seeds.rs` replays the seeds in
//! `seeds/` through them on every `cargo test`, so the targets cannot rot.

mod config;
mod diff;
mod hub;
mod import;
mod references;
mod tools;

pub use config::config_file;
pub use diff::git_diff;
pub use hub::hub_request;
pub use import::import_file;
pub use references::review_references;
pub use tools::tool_arguments;

/// A target's body: it takes the fuzzer's bytes and panics on a bug.
pub type Target = fn(&[u8]);

/// Every target by name, as `cargo fuzz` and `seeds/` name them.
pub const TARGETS: &[(&str, Target)] = &[
    ("hub_request", hub_request),
    ("tool_arguments", tool_arguments),
    ("config_file", config_file),
    ("import_file", import_file),
    ("review_references", review_references),
    ("git_diff", git_diff),
];
