//! The Parley daemon and the `parley` command line.
//!
//! One module per concern; see the README's Architecture section. `hub` alone
//! serves sockets, `store` alone imports sled, `mcp` alone imports rmcp,
//! `watch` alone imports notify, `config` alone reads settings from the
//! environment; `reviews`, `feedback`, `anchor`, `routing`, `position` and
//! `limits` do no IO, and `state` does none beyond handing records to `store`.

pub mod ancestry;
pub mod anchor;
pub mod audit;
pub mod cli;
pub mod clock;
pub mod config;
pub mod feedback;
pub mod git;
pub mod github;
pub mod glob;
pub mod hub;
pub mod ids;
#[cfg(unix)]
pub mod inherited;
pub mod limits;
pub mod line_endings;
pub mod mcp;
pub mod memory;
pub mod position;
pub mod refresh;
pub mod regular_file;
pub mod reviewer;
pub mod reviews;
pub mod routing;
pub mod secrets;
pub mod server;
pub mod sessions;
pub mod shutdown;
pub mod state;
pub mod store;
pub mod stream;
pub mod structured_review;
pub mod text_search;
pub mod usecases;
pub mod views;
pub mod walkthrough;
pub mod watch;
pub mod wire_path;
pub mod workspace;
