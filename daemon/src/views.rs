//! How domain values look on the hub wire: reviews, threads, sessions and
//! rounds waiting on a person converted to the protocol's types, with
//! positions in the client's encoding.

use std::path::Path;

use parley_protocol::hello::PositionEncoding;
use parley_protocol::methods::{self as wire, Position};

use crate::feedback::Thread;
use crate::reviews::{Review, Source};
use crate::sessions::{Draft, PersonRound, Session};

/// The wire form of a review.
pub fn review(review: &Review) -> wire::Review {
    wire::Review {
        base_uri: review.base.clone(),
        content: review.content.clone(),
        revision: review.revision,
        updated_at: review.updated_at.clone(),
        source: review_source(&review.source),
        references: review
            .references
            .iter()
            .map(|r| wire::Reference {
                text: r.found.text.clone(),
                path: r.found.path.clone(),
                line: r.found.line,
                end_line: r.found.end_line,
                resolved_path: r.resolved.clone(),
                problem: r.problem.clone(),
            })
            .collect(),
    }
}

/// The wire form of who made a revision.
pub fn review_source(source: &Source) -> wire::ReviewSource {
    let mut wire = wire::ReviewSource { kind: source.kind().into(), label: source.label(), ..Default::default() };
    match source {
        Source::Agent { client } => wire.client.clone_from(client),
        Source::Round { review_id, round } => {
            wire.review_id = Some(review_id.clone());
            wire.round = Some(*round);
        }
        Source::Person { name } => wire.name.clone_from(name),
        Source::Unrecorded => {}
    }
    wire
}

/// A revision as `review/history` lists it.
pub fn review_revision(review: &Review) -> wire::ReviewRevision {
    wire::ReviewRevision {
        base_uri: review.base.clone(),
        revision: review.revision,
        updated_at: review.updated_at.clone(),
        source: review_source(&review.source),
        title: crate::reviews::title(&review.content),
        bytes: review.content.len(),
    }
}

/// The wire form of a thread, positions counted in `encoding`.
pub fn thread(thread: &Thread, encoding: PositionEncoding) -> wire::Thread {
    let span = &thread.span;
    wire::Thread {
        id: thread.id.clone(),
        workspace: thread.workspace.to_path_buf(),
        path: thread.path.clone(),
        file: crate::wire_path::file_in(&thread.workspace, &thread.path),
        range: wire::Range {
            start: Position { line: span.start_line, character: span.start.get(encoding) },
            end: Position { line: span.end_line, character: span.end.get(encoding) },
        },
        quote: thread.anchor.quote.to_string(),
        original_quote: thread.original_quote.to_string(),
        state: thread.state.name().into(),
        confidence: thread.state.rounded_confidence(),
        resolved: thread.resolved,
        comments: thread.comments.iter().map(comment).collect(),
        created_at: thread.created_at.to_string(),
        updated_at: thread.updated_at.to_string(),
        finding: thread.finding.as_deref().map(|f| wire::ThreadFinding {
            review_id: f.review_id.clone(),
            round: f.round,
            severity: f.severity.clone(),
            category: f.category.clone(),
            suggested_fix: f.suggested_fix.as_deref().map(|fix| crate::limits::clip(fix).into_owned()),
        }),
        standing: thread.standing.name(thread.resolved).into(),
        seen_by: thread.standing.seen.as_ref().map(|m| m.by.clone()),
        seen_at: thread.standing.seen.as_ref().map(|m| m.at.clone()),
        addressed_by: thread.standing.addressed.as_ref().map(|m| m.by.clone()),
        addressed_at: thread.standing.addressed.as_ref().map(|m| m.at.clone()),
        resolved_by: thread.standing.resolver(thread.resolved).map(str::to_owned),
        resolved_at: thread.resolved.then(|| thread.standing.resolved.as_ref().map(|m| m.at.clone())).flatten(),
        deliveries: thread.standing.deliveries.iter().map(delivery).collect(),
        walkthrough: thread.standing.walkthrough.as_deref().map(|w| wire::ThreadWalkthrough {
            id: w.id.clone(),
            title: w.title.clone(),
            block_index: w.block_index,
        }),
        github: thread.standing.github.as_deref().map(|g| wire::ThreadGithub {
            pull_request: g.pull_request.clone(),
            url: g.url.clone(),
            side: g.side.clone(),
            start_line: g.start_line,
            end_line: g.end_line,
            outdated: g.outdated || g.text_gone,
        }),
    }
}

/// A message to an agent as the hub wire shows it.
pub fn delivery(delivery: &crate::feedback::Delivery) -> wire::Delivery {
    wire::Delivery {
        comment_id: delivery.comment_id.clone(),
        agent: delivery.agent.clone(),
        state: delivery.state.name().into(),
        via: delivery.via.clone(),
        asked_at: delivery.asked_at.clone(),
        updated_at: delivery.updated_at.clone(),
    }
}

/// The wire form of a thread's comment, its body clipped to Parley's limit
/// (a store written before the limit may hold longer ones).
pub fn comment(comment: &crate::feedback::Comment) -> wire::Comment {
    wire::Comment {
        id: comment.id.clone(),
        body: crate::limits::clip(&comment.body).into_owned(),
        author: comment.author.clone(),
        created_at: comment.created_at.clone(),
    }
}

/// A thread's absolute file.
pub fn file_of(thread: &Thread) -> std::path::PathBuf {
    crate::wire_path::file_in(&thread.workspace, &thread.path)
}

/// A thread's path relative to `scope` when inside it, else its own.
pub fn path_within(thread: &Thread, scope: &Path) -> String {
    let file = file_of(thread);
    match file.strip_prefix(scope) {
        Ok(relative) => relative.to_string_lossy().replace('\\', "/"),
        Err(_) => thread.path.clone(),
    }
}

/// The wire form of a review session.
pub fn session(session: &Session) -> wire::Session {
    let text = |value: serde_json::Result<serde_json::Value>| {
        value.ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
    };
    wire::Session {
        id: session.id.clone(),
        workspace: session.workspace.clone(),
        created_at: session.created_at.clone(),
        updated_at: session.updated_at.clone(),
        status: session.status().into(),
        request: wire::SessionRequest {
            summary: session.request.summary.clone(),
            relevant_docs: session.request.relevant_docs.clone(),
            focus_areas: session.request.focus_areas.clone(),
            scope: session.request.scope.clone(),
        },
        rounds: session
            .rounds
            .iter()
            .map(|r| wire::Round {
                round: r.round,
                at: r.at.clone(),
                summary: r.summary.clone(),
                focus_areas: r.focus_areas.clone(),
                scope: r.scope.clone(),
                changed_files: r.changed_files.clone(),
                review: serde_json::to_value(&r.review).unwrap_or_default(),
                verdict: text(serde_json::to_value(r.verdict)),
                reviewer: r.reviewer.clone(),
                elapsed_ms: r.elapsed_ms,
            })
            .collect(),
        completion: session.completion.as_ref().map(|c| wire::Completion {
            final_status: c.final_status.name().into(),
            notes: c.notes.clone(),
            at: c.at.clone(),
        }),
        awaiting: session.awaiting.as_deref().map(|waiting| waiting_round(session, waiting)),
        pending: session.pending.as_ref().map(|p| wire::Pending {
            state: p.state.clone(),
            since: p.since.clone(),
            error: p.error.clone(),
        }),
    }
}

/// A round waiting on a person, in brief (`round/requested`, `inbox`).
pub fn waiting_round(session: &Session, waiting: &PersonRound) -> wire::WaitingRound {
    wire::WaitingRound {
        review_id: session.id.clone(),
        round: waiting.round,
        workspace: session.workspace.clone(),
        summary: waiting.summary.clone(),
        focus_areas: waiting.focus_areas.clone(),
        asked_by: waiting.asked_by.clone(),
        requested_at: waiting.requested_at.clone(),
        files: waiting.files.iter().map(|f| f.path.clone()).collect(),
        drafts: waiting.drafts.len(),
        plan: session.plan.is_some(),
    }
}

/// The wire form of a person's draft comment.
pub fn draft(draft: &Draft) -> wire::Draft {
    wire::Draft {
        id: draft.id.clone(),
        path: draft.path.clone(),
        side: draft.side.name().into(),
        start_line: draft.start_line,
        end_line: draft.end_line,
        body: draft.body.clone(),
        suggestion: draft.suggestion.clone(),
        severity: draft.severity.clone(),
        author: draft.author.clone(),
        at: draft.at.clone(),
    }
}

/// The wire form of a walkthrough.
pub fn walkthrough(w: &crate::walkthrough::Walkthrough) -> wire::Walkthrough {
    use crate::walkthrough::{Part, Place, Resolved};
    let place = |p: &Place| wire::WalkthroughPlace {
        path: p.path.clone(),
        start_line: p.start_line,
        end_line: p.end_line,
        thread_id: p.thread_id.clone(),
    };
    let blocks = w
        .blocks
        .iter()
        .map(|block| match block {
            Resolved::Mermaid { index, source } => {
                wire::WalkthroughBlock::Mermaid { index: *index, source: source.clone() }
            }
            Resolved::Comment { index, location, icon, body, places, problem, candidates } => {
                wire::WalkthroughBlock::Comment {
                    index: *index,
                    location: location.clone(),
                    icon: icon.clone(),
                    body: body.clone(),
                    places: places.iter().map(place).collect(),
                    problem: problem.clone(),
                    candidates: candidates.iter().map(place).collect(),
                }
            }
            Resolved::GitDiff { index, range, exclude_staged, exclude_unstaged, problem } => {
                wire::WalkthroughBlock::Gitdiff {
                    index: *index,
                    range: range.clone(),
                    exclude_staged: *exclude_staged,
                    exclude_unstaged: *exclude_unstaged,
                    scope: problem
                        .is_none()
                        .then(|| crate::walkthrough::diff_scope::scope(range, *exclude_staged, *exclude_unstaged).ok())
                        .flatten(),
                    problem: problem.clone(),
                }
            }
            Resolved::Action { index, button, message, clicks, problem } => wire::WalkthroughBlock::Action {
                index: *index,
                button: button.clone(),
                message: message.clone(),
                clicks: clicks.iter().map(|c| click(w, c)).collect(),
                problem: problem.clone(),
            },
        })
        .collect();
    wire::Walkthrough {
        id: w.id.clone(),
        workspace: w.workspace.clone(),
        title: w.title.clone(),
        base_uri: w.base.clone(),
        content: w.content.clone(),
        revision: w.revision,
        updated_at: w.updated_at.clone(),
        presented_by: w.presented_by.clone(),
        head: w.head.clone(),
        parts: w
            .parts
            .iter()
            .map(|part| match part {
                Part::Markdown(text) => wire::WalkthroughPart::Markdown { text: text.clone() },
                Part::Block(index) => wire::WalkthroughPart::Block { index: *index },
            })
            .collect(),
        blocks,
        references: w
            .references
            .iter()
            .map(|r| wire::Reference {
                text: r.text.clone(),
                path: r.path.clone(),
                line: r.line,
                end_line: r.end_line,
                resolved_path: r.resolved.clone(),
                problem: r.problem.clone(),
            })
            .collect(),
    }
}

/// The wire form of an action's click of walkthrough `w`, with the agent
/// it is for.
pub fn click(w: &crate::walkthrough::Walkthrough, c: &crate::walkthrough::Click) -> wire::ActionClick {
    wire::ActionClick {
        agent: Some(w.agent_of(c).to_owned()),
        id: c.id.clone(),
        author: c.author.clone(),
        clicked_at: c.clicked_at.clone(),
        state: c.state.name().into(),
        via: c.via.clone(),
        updated_at: c.updated_at.clone(),
    }
}

/// A walkthrough in brief.
pub fn walkthrough_summary(w: &crate::walkthrough::Walkthrough) -> wire::WalkthroughSummary {
    let (placed, unplaced) = w.placed_and_unplaced();
    wire::WalkthroughSummary {
        id: w.id.clone(),
        workspace: w.workspace.clone(),
        title: w.title.clone(),
        revision: w.revision,
        updated_at: w.updated_at.clone(),
        presented_by: w.presented_by.clone(),
        placed,
        unplaced,
        clicks_waiting: w.clicks_waiting(),
    }
}
