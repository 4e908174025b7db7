//! Each use case's error as a hub JSON-RPC error: one code per cause, the
//! table in docs/protocol.md §6. Mapped here once for every hub method.

use parley_protocol::jsonrpc::{ErrorObject, code};

use crate::feedback::FeedbackError;
use crate::state::Stopped;
use crate::usecases::backup::BackupError;
use crate::usecases::reviews::PresentError;
use crate::usecases::rounds::RoundError;

pub fn stopped(_: Stopped) -> ErrorObject {
    ErrorObject::new(code::SHUTTING_DOWN, Stopped.to_string())
}

pub fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(code::INVALID_PARAMS, message)
}

pub fn feedback(error: FeedbackError) -> ErrorObject {
    let code = match &error {
        FeedbackError::BadId(_) | FeedbackError::Invalid(_) => code::INVALID_PARAMS,
        FeedbackError::NotFound | FeedbackError::UnknownId(_) | FeedbackError::NoSuchFile(_) => code::NOT_FOUND,
        FeedbackError::AlreadyResolved | FeedbackError::NotResolved | FeedbackError::ResolvedNoReply => code::CONFLICT,
        FeedbackError::Store(_) => code::STORE_FAILED,
        FeedbackError::Unreadable(_) => code::FILE_UNREADABLE,
        FeedbackError::Stopped => code::SHUTTING_DOWN,
    };
    ErrorObject::new(code, error.to_string())
}

pub fn round(error: RoundError) -> ErrorObject {
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

pub fn present(error: PresentError) -> ErrorObject {
    let code = match &error {
        PresentError::Stopped => code::SHUTTING_DOWN,
        PresentError::Busy => code::CONFLICT,
        PresentError::Store(_) => code::STORE_FAILED,
        PresentError::Internal(_) => code::INTERNAL_ERROR,
        PresentError::NotFound(_) => code::NOT_FOUND,
    };
    ErrorObject::new(code, error.to_string())
}

pub fn backup(error: BackupError) -> ErrorObject {
    let code = match &error {
        BackupError::NotAnExport | BackupError::File(_) | BackupError::BadRecord(_) => code::INVALID_PARAMS,
        BackupError::Store(_) => code::STORE_FAILED,
        BackupError::Stopped => code::SHUTTING_DOWN,
    };
    ErrorObject::new(code, error.to_string())
}
