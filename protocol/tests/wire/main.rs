//! The hub's wire contract pinned by tests: a snapshot of every method's
//! params and result and of every notification, and every JSON example of
//! `docs/protocol.md` decoded into the type its block names.

mod doc;
mod examples;
mod registry;
mod snapshots;
