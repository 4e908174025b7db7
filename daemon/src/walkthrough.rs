//! Walkthroughs as documents: an agent's markdown with Symposium's fenced
//! blocks (`mermaid`, `comment`, `gitdiff`, `action`) found and read, and the
//! locations its comments name parsed. Pure functions: resolving a location
//! against the files or an editor is the use case's work.

pub mod blocks;
pub mod location;

pub use blocks::{Block, BlockKind, BlocksError, find_blocks};
pub use location::{Location, parse_location};
