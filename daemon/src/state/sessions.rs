//! The review-session half of the state owner: id allocation, rounds and
//! completion, each answered and visible only once durable.

use std::path::{Path, PathBuf};

use tokio::sync::oneshot;

use super::State;
use super::durable::Effect;
use crate::clock::now_rfc3339;
use crate::sessions::{
    self, Completion, FileVersions, FinalStatus, PersonRound, Round, Session, SessionError, SessionRequest,
};
use crate::store::Write;

type Reply = oneshot::Sender<Result<Session, SessionError>>;

impl State {
    /// The newest version of a session: waiting for the disk, or in memory.
    fn latest_session(&self, id: &str) -> Option<&Session> {
        match self.staged_sessions.get(id) {
            Some(waiting) => waiting.as_ref(),
            None => self.sessions.get(id),
        }
    }

    /// Hands a session's new version to the store; it is kept and answered
    /// once durable.
    fn stage_session(&mut self, session: Session, reply: Reply) {
        self.staged_sessions.insert(session.id.clone(), Some(session.clone()));
        self.stage(Write::Session(Box::new(session.clone())), Effect::Session { session: Box::new(session), reply });
    }

    pub(super) fn start_session(&mut self, workspace: PathBuf, request: SessionRequest, reply: Reply) {
        let now = now_rfc3339();
        let date = chrono::Local::now().format("%Y-%m-%d").to_string();
        // Ids waiting for the disk are taken too.
        let taken = self.sessions.keys().chain(self.staged_sessions.keys()).map(String::as_str);
        let id = sessions::next_id(&date, taken);
        let session = Session {
            id,
            workspace,
            created_at: now.clone(),
            updated_at: now,
            request,
            rounds: Vec::new(),
            completion: None,
            awaiting: None,
            pending: None,
            plan: None,
        };
        self.stage_session(session, reply);
    }

    pub(super) fn check_session(&self, id: &str, max_rounds: u32) -> Result<&Session, SessionError> {
        let session = self.latest_session(id).ok_or_else(|| SessionError::NotFound(id.to_owned()))?;
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

    pub(super) fn add_round(&mut self, id: &str, mut round: Round, max_rounds: u32, reply: Reply) {
        let mut session = match self.check_session(id, max_rounds) {
            Ok(session) => session.clone(),
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        round.round = session.rounds.len() as u32 + 1;
        session.rounds.push(round);
        // The round a person was asked for is answered (or replaced).
        session.awaiting = None;
        session.pending = None;
        session.updated_at = now_rfc3339();
        self.stage_session(session, reply);
    }

    /// Kept in memory only: what a background round is doing is not stored.
    pub(super) fn set_pending(&mut self, id: &str, pending: Option<crate::sessions::Pending>) {
        if let Some(Some(session)) = self.staged_sessions.get_mut(id) {
            session.pending = pending.clone();
        }
        if let Some(session) = self.sessions.get_mut(id) {
            session.pending = pending;
        }
    }

    pub(super) fn edit_session(&mut self, id: &str, edit: super::SessionEdit, reply: Reply) {
        let Some(mut session) = self.latest_session(id).cloned() else {
            let _ = reply.send(Err(SessionError::NotFound(id.to_owned())));
            return;
        };
        match edit(&mut session) {
            Ok(()) => {
                session.updated_at = now_rfc3339();
                self.stage_session(session, reply);
            }
            Err(refused) => {
                let _ = reply.send(Err(refused));
            }
        }
    }

    /// Sessions with a round waiting on a person, newest request first, as
    /// light copies (see [`StateHandle::awaiting_person`]).
    pub(super) fn awaiting_person(&self) -> Vec<Session> {
        let mut waiting: Vec<Session> = self.sessions.values().filter_map(light_copy).collect();
        let at = |s: &Session| s.awaiting.as_ref().map(|w| w.requested_at.as_str()).unwrap_or_default().to_owned();
        waiting.sort_by_cached_key(|s| std::cmp::Reverse((at(s), s.id.clone())));
        waiting
    }

    pub(super) fn discard_empty_session(&mut self, id: &str) {
        let empty = self.latest_session(id).is_some_and(|s| {
            s.rounds.is_empty() && s.completion.is_none() && s.pending.is_none() && s.awaiting.is_none()
        });
        if !empty {
            return;
        }
        self.staged_sessions.insert(id.to_owned(), None);
        self.stage(Write::RemoveSession(id.to_owned()), Effect::DiscardSession { id: id.to_owned() });
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
        reply: Reply,
    ) {
        let Some(mut session) = self.latest_session(id).cloned() else {
            let _ = reply.send(Err(SessionError::NotFound(id.to_owned())));
            return;
        };
        if let Some(done) = &session.completion {
            let _ = reply.send(Err(SessionError::Completed {
                id: id.to_owned(),
                status: done.final_status.name(),
                at: done.at.clone(),
            }));
            return;
        }
        let now = now_rfc3339();
        session.completion = Some(Completion { final_status, notes, at: now.clone() });
        // A round still waiting on a person is no longer wanted, and a
        // failed or cancelled one's note has nothing left to wait for.
        session.awaiting = None;
        session.pending = None;
        session.updated_at = now;
        self.stage_session(session, reply);
    }
}

/// A session with a waiting round, without what the inbox does not show:
/// the files' texts, the diff and the earlier rounds.
fn light_copy(session: &Session) -> Option<Session> {
    let waiting = session.awaiting.as_deref()?;
    let files = waiting.files.iter().map(|f| FileVersions { before: None, after: None, ..f.clone() }).collect();
    let light = PersonRound { files, diff: String::new(), ..waiting.clone() };
    Some(Session {
        id: session.id.clone(),
        workspace: session.workspace.clone(),
        created_at: session.created_at.clone(),
        updated_at: session.updated_at.clone(),
        request: session.request.clone(),
        rounds: Vec::new(),
        completion: session.completion.clone(),
        awaiting: Some(Box::new(light)),
        pending: None,
        plan: session
            .plan
            .as_ref()
            .map(|plan| Box::new(crate::sessions::PlanOrigin { last_plan: String::new(), ..(**plan).clone() })),
    })
}
