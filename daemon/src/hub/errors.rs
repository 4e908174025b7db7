//! Each use case's error as a hub JSON-RPC error: one code per cause, the
//! table in docs/protocol.md §6. Mapped here once, by type, for every hub
//! method: a handler's `?` turns a use case's error into its wire error.

use parley_protocol::jsonrpc::{ErrorObject, code};

use crate::feedback::FeedbackError;
use crate::state::Stopped;
use crate::usecases::backup::BackupError;
use crate::usecases::reviews::PresentError;
use crate::usecases::rounds::RoundError;

impl From<Stopped> for ErrorObject {
    fn from(_: Stopped) -> Self {
        ErrorObject::new(code::SHUTTING_DOWN, Stopped.to_string())
    }
}

pub fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(code::INVALID_PARAMS, message)
}

/// What cannot happen unless Parley is wrong (a value that will not encode).
pub fn internal(error: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(code::INTERNAL_ERROR, error.to_string())
}

impl From<FeedbackError> for ErrorObject {
    fn from(error: FeedbackError) -> Self {
        let code = match &error {
            FeedbackError::BadId(_) | FeedbackError::Invalid(_) => code::INVALID_PARAMS,
            FeedbackError::NotFound | FeedbackError::UnknownId(_) | FeedbackError::NoSuchFile(_) => code::NOT_FOUND,
            FeedbackError::AlreadyResolved | FeedbackError::NotResolved | FeedbackError::ResolvedNoReply => {
                code::CONFLICT
            }
            FeedbackError::Store(_) => code::STORE_FAILED,
            FeedbackError::Unreadable(_) => code::FILE_UNREADABLE,
            FeedbackError::Stopped => code::SHUTTING_DOWN,
        };
        ErrorObject::new(code, error.to_string())
    }
}

impl From<RoundError> for ErrorObject {
    fn from(error: RoundError) -> Self {
        let code = match &error {
            RoundError::Invalid(_) => code::INVALID_PARAMS,
            RoundError::NotFound(_) => code::NOT_FOUND,
            RoundError::Conflict(_) => code::CONFLICT,
            RoundError::Git(_) => code::GIT_FAILED,
            RoundError::Config(_) => code::CONFIG_INVALID,
            RoundError::Secrets(_) => code::SECRET_FOUND,
            RoundError::Reviewer(_) => code::REVIEWER_FAILED,
            RoundError::Cancelled(_) => code::CANCELLED,
            RoundError::Store(_) => code::STORE_FAILED,
            RoundError::Stopped => code::SHUTTING_DOWN,
            RoundError::Internal(_) => code::INTERNAL_ERROR,
        };
        ErrorObject::new(code, error.to_string())
    }
}

impl From<PresentError> for ErrorObject {
    fn from(error: PresentError) -> Self {
        let code = match &error {
            PresentError::Stopped => code::SHUTTING_DOWN,
            PresentError::Busy => code::CONFLICT,
            PresentError::Store(_) => code::STORE_FAILED,
            PresentError::Internal(_) => code::INTERNAL_ERROR,
            PresentError::NotFound(_) => code::NOT_FOUND,
            PresentError::Invalid(_) => code::INVALID_PARAMS,
        };
        ErrorObject::new(code, error.to_string())
    }
}

impl From<BackupError> for ErrorObject {
    fn from(error: BackupError) -> Self {
        let code = match &error {
            BackupError::NotAnExport | BackupError::File(_) | BackupError::BadRecord(_) => code::INVALID_PARAMS,
            BackupError::Store(_) => code::STORE_FAILED,
            BackupError::Stopped => code::SHUTTING_DOWN,
        };
        ErrorObject::new(code, error.to_string())
    }
}
