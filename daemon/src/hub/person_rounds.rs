//! The hub methods of rounds a person answers: `inbox`, `round/get`,
//! `round/comment`, `round/uncomment` and `round/submit`, for editors and
//! the terminal alike.

use parley_protocol::jsonrpc::ErrorObject;
use parley_protocol::methods as wire;

use super::{Peer, errors};
use crate::usecases::rounds::person::{self, ForReview, NewDraft, Verdict};
use crate::views;

pub async fn inbox(peer: &Peer<'_>, p: wire::InboxParams) -> Result<wire::InboxResult, ErrorObject> {
    let folder = match &p.workspace {
        Some(folder) if !folder.is_absolute() => {
            return Err(errors::invalid(format!("workspace {} must be an absolute path", folder.display())));
        }
        Some(folder) => Some(crate::workspace::real(folder, std::path::Path::new("/"))),
        None => None,
    };
    let found = person::inbox(peer.cx, folder.as_deref(), p.offset).await?;
    Ok(wire::InboxResult {
        rounds: found
            .rounds
            .iter()
            .filter_map(|s| s.awaiting.as_deref().map(|waiting| views::waiting_round(s, waiting)))
            .collect(),
        threads: found.threads.iter().map(|t| views::thread(t, peer.facts.encoding)).collect(),
        next_offset: found.next_offset,
    })
}

pub async fn get(peer: &Peer<'_>, p: wire::RoundGetParams) -> Result<wire::RoundForReview, ErrorObject> {
    let found = person::get(peer.cx, &p.review_id, p.round).await?;
    Ok(round_for_review(&found))
}

pub async fn comment(peer: &Peer<'_>, p: wire::RoundCommentParams) -> Result<wire::RoundCommentResult, ErrorObject> {
    let new = NewDraft {
        path: p.path.trim().trim_start_matches("./").to_owned(),
        side: p.side,
        start_line: p.start_line,
        end_line: p.end_line.unwrap_or(p.start_line),
        body: p.body,
        suggestion: p.suggestion,
        severity: p.severity.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()),
        replaces: p.draft_id,
        author: p.author.map(|a| a.trim().to_owned()).filter(|a| !a.is_empty()),
    };
    let (_, draft) = person::comment(peer.cx, &p.review_id, new).await?;
    Ok(wire::RoundCommentResult { draft: views::draft(&draft) })
}

pub async fn uncomment(
    peer: &Peer<'_>,
    p: wire::RoundUncommentParams,
) -> Result<wire::RoundUncommentResult, ErrorObject> {
    person::uncomment(peer.cx, &p.review_id, &p.draft_id).await?;
    Ok(wire::RoundUncommentResult { removed: p.draft_id.trim().to_owned() })
}

pub async fn submit(peer: &Peer<'_>, p: wire::RoundSubmitParams) -> Result<wire::RoundSubmitResult, ErrorObject> {
    let verdict = Verdict::parse(&p.verdict)?;
    let author = p.author.map(|a| a.trim().to_owned()).filter(|a| !a.is_empty());
    let submitted = person::submit(peer.cx, &p.review_id, verdict, p.summary, author).await?;
    let outcome = &submitted.outcome;
    Ok(wire::RoundSubmitResult {
        review_id: outcome.session.id.clone(),
        round: outcome.round.round,
        verdict: outcome.round.verdict.as_str().into(),
        status: outcome.session.status().into(),
        review: serde_json::to_value(&outcome.round.review).unwrap_or_default(),
        markdown: outcome.markdown.clone(),
        threads: submitted.threads,
        warnings: outcome.warnings.clone(),
    })
}

/// A waiting round as a person reviews it, or an answered one as they read
/// it again (`round/get`).
fn round_for_review(found: &ForReview) -> wire::RoundForReview {
    let (session, waiting) = (&found.session, &found.waiting);
    let previous_files = found.previous.as_ref().map(|(_, files)| files.as_slice()).unwrap_or_default();
    let files = waiting
        .files
        .iter()
        .map(|file| {
            let before_this = previous_files.iter().find(|p| p.path == file.path);
            let previous = before_this.and_then(|p| p.after.clone());
            wire::RoundFile {
                path: file.path.clone(),
                old_path: file.old_path.clone(),
                status: file.status.name().into(),
                before: file.before.clone(),
                after: file.after.clone(),
                changed_since_previous: before_this.is_none_or(|p| p.after != file.after),
                previous,
                binary: file.binary,
                too_large: file.too_large,
            }
        })
        .collect();
    let earlier = found
        .earlier
        .iter()
        .filter_map(|thread| {
            let finding = thread.finding.as_deref()?;
            Some(wire::EarlierComment {
                round: finding.round,
                path: views::path_within(thread, &session.workspace),
                line: thread.span.start_line,
                end_line: thread.span.end_line,
                body: thread.comments.first().map(|c| c.body.clone()).unwrap_or_default(),
                state: thread.standing.name(thread.resolved).into(),
                thread_id: thread.id.clone(),
                comments: thread.comments.iter().map(views::comment).collect(),
            })
        })
        .collect();
    wire::RoundForReview {
        review_id: session.id.clone(),
        round: waiting.round,
        workspace: session.workspace.clone(),
        summary: waiting.summary.clone(),
        focus_areas: waiting.focus_areas.clone(),
        asked_by: waiting.asked_by.clone(),
        requested_at: waiting.requested_at.clone(),
        scope: waiting.scope.clone(),
        previous_round: found.previous.as_ref().map(|(round, _)| *round),
        files,
        drafts: waiting.drafts.iter().map(views::draft).collect(),
        earlier,
        answered: found.answered.as_ref().map(|round| wire::AnsweredRound {
            at: round.at.clone(),
            reviewer: round.reviewer.clone(),
            verdict: round.verdict.as_str().into(),
            review: serde_json::to_value(&round.review).unwrap_or_default(),
        }),
    }
}
