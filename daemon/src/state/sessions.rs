//! The review-session half of the state owner: id allocation, rounds and
//! completion, each stored before it is answered.

use std::path::{Path, PathBuf};

use super::State;
use crate::clock::now_rfc3339;
use crate::sessions::{self, Completion, FinalStatus, Round, Session, SessionError, SessionRequest};

impl State {
    pub(super) fn start_session(
        &mut self,
        workspace: PathBuf,
        request: SessionRequest,
    ) -> Result<Session, SessionError> {
        let now = now_rfc3339();
        let date = chrono::Local::now().format("%Y-%m-%d").to_string();
        let id = sessions::next_id(&date, self.sessions.keys().map(String::as_str));
        let session = Session {
            id: id.clone(),
            workspace,
            created_at: now.clone(),
            updated_at: now,
            request,
            rounds: Vec::new(),
            completion: None,
            pending: None,
        };
        self.store.put_session(&session).map_err(|e| SessionError::Store(e.to_string()))?;
        self.sessions.insert(id, session.clone());
        Ok(session)
    }

    pub(super) fn check_session(&self, id: &str, max_rounds: u32) -> Result<&Session, SessionError> {
        let session = self.sessions.get(id).ok_or_else(|| SessionError::NotFound(id.to_owned()))?;
        if let Some(done) = &session.completion {
            return Err(SessionError::Completed {
                id: id.to_owned(),
                status: done.final_status.name(),
                at: done.at.clone(),
            });
        }
        if session.rounds.len() as u32 >= max_rounds {
            return Err(SessionError::TooManyRounds { id: id.to_owned(), max: max_rounds });
        }
        Ok(session)
    }

    pub(super) fn add_round(&mut self, id: &str, mut round: Round, max_rounds: u32) -> Result<Session, SessionError> {
        self.check_session(id, max_rounds)?;
        let session = self.sessions.get_mut(id).ok_or_else(|| SessionError::NotFound(id.to_owned()))?;
        round.round = session.rounds.len() as u32 + 1;
        session.rounds.push(round);
        session.pending = None;
        session.updated_at = now_rfc3339();
        let session = session.clone();
        self.store.put_session(&session).map_err(|e| SessionError::Store(e.to_string()))?;
        Ok(session)
    }

    pub(super) fn set_pending(&mut self, id: &str, pending: Option<crate::sessions::Pending>) {
        if let Some(session) = self.sessions.get_mut(id) {
            session.pending = pending;
        }
    }

    pub(super) fn discard_empty_session(&mut self, id: &str) {
        let empty =
            self.sessions.get(id).is_some_and(|s| s.rounds.is_empty() && s.completion.is_none() && s.pending.is_none());
        if !empty {
            return;
        }
        match self.store.remove_session(id) {
            Ok(()) => {
                self.sessions.remove(id);
            }
            Err(e) => tracing::warn!("cannot remove the empty session {id}: {e}"),
        }
    }

    pub(super) fn sessions_of(&self, workspace: Option<&Path>, limit: usize) -> Vec<Session> {
        self.sessions
            .values()
            .rev()
            .filter(|s| workspace.is_none_or(|w| s.workspace == w))
            .take(limit)
            .cloned()
            .collect()
    }

    pub(super) fn complete_session(
        &mut self,
        id: &str,
        final_status: FinalStatus,
        notes: Option<String>,
    ) -> Result<Session, SessionError> {
        let session = self.sessions.get_mut(id).ok_or_else(|| SessionError::NotFound(id.to_owned()))?;
        if let Some(done) = &session.completion {
            return Err(SessionError::Completed {
                id: id.to_owned(),
                status: done.final_status.name(),
                at: done.at.clone(),
            });
        }
        let now = now_rfc3339();
        session.completion = Some(Completion { final_status, notes, at: now.clone() });
        session.updated_at = now;
        let session = session.clone();
        self.store.put_session(&session).map_err(|e| SessionError::Store(e.to_string()))?;
        Ok(session)
    }
}
