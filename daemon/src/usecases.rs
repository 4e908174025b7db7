//! The features, written once for both front doors: `hub::connection`
//! (editors and the CLI) and `mcp` (agents) decode arguments, call a use case
//! here and encode its result or its error; they do nothing else.
//!
//! A use case refreshes what it reads (threads are re-anchored against the
//! files on disk first) and writes through the state owner, which answers a
//! write (and lets anyone see it) only once the store has flushed it, so no
//! front door can answer a write that is not on disk. Each module has one
//! error enum, which each door maps to its wire once.

pub mod agents;
pub mod backup;
mod context;
pub mod feedback;
pub mod ide;
pub mod ids;
pub mod pull_requests;
pub mod reviews;
pub mod rounds;
pub mod selection;
pub mod walkthroughs;

pub use context::Context;
