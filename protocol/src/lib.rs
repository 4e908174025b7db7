//! Parley's hub protocol: the wire types every client and the daemon share, the
//! newline-delimited framing with its line cap, and where the socket lives.
//!
//! This crate holds no sockets and no runtime: it is the contract, nothing more.

pub mod framing;
pub mod hello;
pub mod jsonrpc;
pub mod methods;
pub mod socket;

/// The hub protocol's major version. It is part of the socket's file name, so
/// builds that speak different majors never meet on one socket.
pub const PROTOCOL_VERSION: u32 = 1;

/// The version of this build of Parley, carried in every hello.
pub const BUILD_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Environment every starter of `parley daemon` gives it (the shim, the CLI,
/// the service files): mimalloc, the daemon's allocator, then commits memory
/// as it is used, even in a build made without the workspace's
/// `.cargo/config.toml`, whose C flags make that the default. Without it an
/// idle daemon holds about 40 MB more.
pub const DAEMON_ENV: &[(&str, &str)] = &[("MIMALLOC_ARENA_EAGER_COMMIT", "0")];
