//! The Parley daemon and the `parley` command line.
//!
//! One module per concern; see the README's Architecture section. `hub` alone
//! touches sockets, `store` alone imports sled, `mcp` alone imports rmcp,
//! `config` alone reads settings from the environment; `reviews`, `routing`,
//! `position` and `state` do no IO.

pub mod anchor;
pub mod cli;
pub mod client;
pub mod config;
pub mod hub;
pub mod mcp;
pub mod position;
pub mod reviews;
pub mod routing;
pub mod server;
pub mod shutdown;
pub mod state;
pub mod store;
pub mod workspace;
