//! Ids as people and agents type them, resolved by the one rule of `ids`
//! against the sessions, threads and walkthroughs the daemon holds: the command line, the
//! editors and the MCP tools all come here.

use std::path::Path;

use super::Context;
use crate::feedback::FeedbackError;
use crate::ids::{self, ABBREVIATION_MATCHES, Given, IdError, Kind};
use crate::state::Stopped;

/// Why a typed id could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error(transparent)]
    Id(#[from] IdError),
    #[error(transparent)]
    Stopped(#[from] Stopped),
}

/// The thread `given` names: a whole id, or a unique beginning of one;
/// among the threads on files inside `within` only, when given (an agent's
/// workspace).
pub async fn thread(cx: &Context, given: &str, within: Option<&Path>) -> Result<String, LookupError> {
    match ids::read(Kind::Thread, given)? {
        Given::Whole(id) => Ok(id),
        Given::Abbreviated(prefix) => {
            let found = cx.state.thread_ids_starting_with(prefix.clone(), within.map(Path::to_owned)).await?;
            Ok(ids::pick(Kind::Thread, &prefix, found)?)
        }
    }
}

/// The review session `given` names: a whole id, its number, or a unique
/// beginning; among the sessions of `repository` only, when given (an
/// agent's repository).
pub async fn session(cx: &Context, given: &str, repository: Option<&Path>) -> Result<String, LookupError> {
    match ids::read(Kind::Session, given)? {
        Given::Whole(id) => Ok(id),
        Given::Abbreviated(abbreviation) => {
            let found = cx.state.session_ids_matching(abbreviation.clone(), repository.map(Path::to_owned)).await?;
            Ok(ids::pick(Kind::Session, &abbreviation, found)?)
        }
    }
}

/// The walkthrough `given` names: a whole id, or a unique beginning of one.
/// A whole id is answered as it is; the caller finds it (or says it is gone).
pub async fn walkthrough(cx: &Context, given: &str) -> Result<String, LookupError> {
    match ids::read(Kind::Walkthrough, given)? {
        Given::Whole(id) => Ok(id),
        Given::Abbreviated(prefix) => {
            let all = cx.state.walkthroughs(None).await?;
            let found =
                all.into_iter().map(|w| w.id).filter(|id| id.starts_with(&prefix)).take(ABBREVIATION_MATCHES).collect();
            Ok(ids::pick(Kind::Walkthrough, &prefix, found)?)
        }
    }
}

impl From<LookupError> for FeedbackError {
    fn from(error: LookupError) -> Self {
        match error {
            LookupError::Id(e) if e.is_unknown() => FeedbackError::UnknownId(e.to_string()),
            LookupError::Id(e) => FeedbackError::BadId(e.to_string()),
            LookupError::Stopped(_) => FeedbackError::Stopped,
        }
    }
}
