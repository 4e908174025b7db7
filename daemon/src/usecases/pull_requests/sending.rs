//! Sending a push's plan to GitHub, one mutation at a time, each GitHub id
//! kept on its thread as soon as GitHub answers. Before a thread is added,
//! the pull request's threads are searched for one GitHub already has
//! (same path, lines, side and first comment, tied to no thread here: an
//! earlier push whose answer was lost) and that one is adopted instead, so
//! a push cut off anywhere resumes without duplicates. Replies to threads
//! of the pending review go into it.

use std::collections::{HashMap, HashSet};

use super::pushing::{self, NewThread, Reply, Resolution};
use super::{PullRequestError, on_github, record};
use crate::feedback::{GithubMark, SyncedComment, Thread};
use crate::github::linked::{LinkedPullRequest, PendingReview};
use crate::github::remote::{RemotePullRequest, RemoteThread};
use crate::github::review::{self, ReviewEvent};
use crate::github::{Api, GithubError};
use crate::usecases::Context;

/// One push's connection to the pull request and what it knows of it.
pub(super) struct Sender<'a> {
    pub cx: &'a Context,
    pub api: Api,
    pub remote: RemotePullRequest,
    pub name: String,
    pub now: String,
    /// GitHub's threads some thread here is tied to.
    claimed: HashSet<String>,
    /// The marks of this workspace's threads, kept up to date as they change.
    pub marks: HashMap<String, GithubMark>,
    /// The pending review as GitHub has it now, once asked.
    pending_now: Option<Option<String>>,
    /// Threads GitHub would not take (on a line the pull request's diff does
    /// not show, say), each with why: not sent, kept here, and the rest of
    /// the push goes on.
    pub refused: Vec<(String, String)>,
}

impl<'a> Sender<'a> {
    pub fn new(cx: &'a Context, api: Api, remote: RemotePullRequest, name: String, threads: &[Thread]) -> Self {
        let marks: HashMap<String, GithubMark> =
            threads.iter().filter_map(|t| t.standing.github.as_deref().map(|m| (t.id.clone(), m.clone()))).collect();
        let claimed = marks.values().map(|m| m.thread_id.clone()).filter(|id| !id.is_empty()).collect();
        Sender {
            cx,
            api,
            remote,
            name,
            now: crate::clock::now_rfc3339(),
            claimed,
            marks,
            pending_now: None,
            refused: Vec::new(),
        }
    }

    /// This person's pending review on the pull request, asked once.
    async fn pending(&mut self, linked: &mut LinkedPullRequest) -> Result<Option<String>, PullRequestError> {
        if let Some(known) = &self.pending_now {
            return Ok(known.clone());
        }
        let pr = linked.pull_request.clone();
        let pending = on_github(&self.api, move |api| review::pending_review(api, &pr)).await?;
        // Submitted or discarded on GitHub since: its threads are no
        // longer pending.
        if linked.pending_review.as_ref().is_some_and(|p| Some(&p.id) != pending.as_ref()) {
            linked.pending_review = None;
        }
        self.pending_now = Some(pending.clone());
        Ok(pending)
    }

    /// The pending review to add threads to: this person's open one (an
    /// earlier push's, or one begun on GitHub: GitHub allows one), else a
    /// new one on the head.
    pub async fn review(&mut self, linked: &mut LinkedPullRequest) -> Result<String, PullRequestError> {
        let id = match self.pending(linked).await? {
            Some(id) => id,
            None => {
                let (pr, head) = (self.remote.id.clone(), self.remote.head_oid.clone());
                let id = on_github(&self.api, move |api| review::start_review(api, &pr, &head)).await?;
                self.pending_now = Some(Some(id.clone()));
                id
            }
        };
        if linked.pending_review.as_ref().is_none_or(|p| p.id != id) {
            linked.pending_review = Some(PendingReview { id: id.clone(), threads: Vec::new() });
        }
        Ok(id)
    }

    /// A thread GitHub already has for `new`, tied to nothing here.
    fn adoptable(&self, new: &NewThread) -> Option<RemoteThread> {
        self.remote
            .threads
            .iter()
            .find(|t| !self.claimed.contains(&t.id) && pushing::is_made_from(&new.draft, t))
            .cloned()
    }

    /// Adds `threads` to the pending review `review_id`, with their later
    /// comments as replies in it; how many were adopted.
    pub async fn add_threads(
        &mut self,
        linked: &mut LinkedPullRequest,
        review_id: &str,
        threads: &[NewThread],
    ) -> Result<usize, PullRequestError> {
        let mut adopted = 0;
        for new in threads {
            let (mut mark, mut there) = match self.adoptable(new) {
                Some(found) => {
                    adopted += 1;
                    let first = found.comments.first().map(|c| (c.id.clone(), c.url.clone())).unwrap_or_default();
                    let added = review::AddedThread { thread_id: found.id.clone(), comment_id: first.0, url: first.1 };
                    (pushing::mark_of_new(&self.name, new, &added, &self.now), found.comments[1..].to_vec())
                }
                None => {
                    let (review, draft) = (review_id.to_owned(), new.draft.clone());
                    let added = match on_github(&self.api, move |api| review::add_thread(api, &review, &draft)).await {
                        Ok(added) => added,
                        Err(PullRequestError::Github(GithubError::Refused { message, .. })) => {
                            self.refused.push((
                                new.parley_thread.clone(),
                                format!(
                                    "GitHub would not take it ({message}): a review comment goes on lines the pull \
                                     request's diff shows; it stays here"
                                ),
                            ));
                            continue;
                        }
                        Err(other) => return Err(other),
                    };
                    (pushing::mark_of_new(&self.name, new, &added, &self.now), Vec::new())
                }
            };
            self.claimed.insert(mark.thread_id.clone());
            if let Some(pending) = linked.pending_review.as_mut().filter(|p| p.id == review_id)
                && !pending.threads.contains(&mark.thread_id)
            {
                pending.threads.push(mark.thread_id.clone());
            }
            record(self.cx, &new.parley_thread, &mark).await?;
            for comment in &new.later {
                // Already there when adopted: its replies, in order.
                let id = match there.first().filter(|c| c.body == comment.body) {
                    Some(_) => there.remove(0).id,
                    None => {
                        let (thread, review, body) =
                            (mark.thread_id.clone(), review_id.to_owned(), comment.body.clone());
                        on_github(&self.api, move |api| review::reply(api, &thread, Some(&review), &body)).await?
                    }
                };
                mark.comments.push(SyncedComment { parley: comment.id.clone(), github: id });
                record(self.cx, &new.parley_thread, &mark).await?;
            }
            self.marks.insert(new.parley_thread.clone(), mark);
        }
        Ok(adopted)
    }

    /// Sends `replies`: a reply to a thread of the pending review goes into
    /// it (GitHub takes no other reply to a thread not yet submitted).
    pub async fn replies(&mut self, linked: &mut LinkedPullRequest, replies: &[Reply]) -> Result<(), PullRequestError> {
        for reply in replies {
            let in_pending = linked.pending_review.as_ref().is_some_and(|p| p.threads.contains(&reply.github_thread));
            let review = match in_pending {
                true => {
                    let now = self.pending(linked).await?;
                    now.filter(|id| linked.pending_review.as_ref().is_some_and(|p| &p.id == id))
                }
                false => None,
            };
            let (thread, body) = (reply.github_thread.clone(), reply.comment.body.clone());
            let id = on_github(&self.api, move |api| review::reply(api, &thread, review.as_deref(), &body)).await?;
            let Some(mark) = self.marks.get_mut(&reply.parley_thread) else { continue };
            mark.comments.push(SyncedComment { parley: reply.comment.id.clone(), github: id });
            mark.synced_at = self.now.clone();
            record(self.cx, &reply.parley_thread, mark).await?;
        }
        Ok(())
    }

    pub async fn resolutions(&mut self, resolutions: &[Resolution]) -> Result<(), PullRequestError> {
        for resolution in resolutions {
            let (thread, resolved) = (resolution.github_thread.clone(), resolution.resolved);
            on_github(&self.api, move |api| review::set_resolved(api, &thread, resolved)).await?;
            let Some(mark) = self.marks.get_mut(&resolution.parley_thread) else { continue };
            mark.github_resolved = resolved;
            mark.resolved_at_sync = resolved;
            mark.synced_at = self.now.clone();
            record(self.cx, &resolution.parley_thread, mark).await?;
        }
        Ok(())
    }

    /// Submits the pending review `review_id` with `event` (and `body`);
    /// its page.
    pub async fn submit(
        &mut self,
        linked: &mut LinkedPullRequest,
        review_id: String,
        event: ReviewEvent,
        body: Option<String>,
    ) -> Result<String, PullRequestError> {
        let url = on_github(&self.api, move |api| review::submit(api, &review_id, event, body.as_deref())).await?;
        linked.pending_review = None;
        self.pending_now = Some(None);
        Ok(url)
    }

    /// The pending review to submit with `event`: the one open, else (for
    /// an approval, which needs no comment, or a body to say) a new one.
    pub async fn review_to_submit(
        &mut self,
        linked: &mut LinkedPullRequest,
        event: ReviewEvent,
        has_body: bool,
    ) -> Result<Option<String>, PullRequestError> {
        match self.pending(linked).await? {
            Some(id) => Ok(Some(id)),
            None if event == ReviewEvent::Approve || has_body => self.review(linked).await.map(Some),
            None => Ok(None),
        }
    }
}
