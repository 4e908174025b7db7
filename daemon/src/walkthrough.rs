//! Walkthroughs as documents: an agent's markdown with Symposium's fenced
//! blocks (`mermaid`, `comment`, `gitdiff`, `action`) found and read, and the
//! locations its comments name parsed. Pure functions: resolving a location
//! against the files or an editor is the use case's work. `stored` is the
//! walkthrough as the daemon keeps it once presented; `diff_scope` what a
//! gitdiff block shows, its exclude flags applied.

pub mod blocks;
pub mod diff_scope;
pub mod location;
pub mod stored;

pub use blocks::{Block, BlockKind, BlocksError, find_blocks};
pub use location::{Location, parse_location};
pub use stored::{Click, ClickState, Part, Place, Resolved, Walkthrough};
