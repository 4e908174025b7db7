//! Walkthroughs as both front doors use them: presenting one (its blocks
//! read, each comment placed as threads by the presenting agent, its gitdiff
//! ranges and references checked, stored as the next revision of its title,
//! pushed to the windows on its workspace), reading them, a person's click
//! of an action (a message to the presenting agent), and sending a click on
//! to another agent (one that has gone leaves it waiting). `placing` says
//! where a comment goes.

mod placing;

use std::path::{Path, PathBuf};

use super::Context;
use super::feedback::{self as threads, AgentThread};
use crate::feedback::{FeedbackError, WalkthroughMark};
use crate::state::{ClickRefused, CommitError, Stopped};
use crate::walkthrough::{self, Block, BlockKind, Click, ClickState, Part, Place, Resolved, Walkthrough};
use placing::Placement;

/// The largest walkthrough document taken.
pub const MAX_CONTENT_BYTES: usize = 1024 * 1024;

/// Why a walkthrough could not be presented or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalkthroughError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("the walkthrough could not be stored: {0}")]
    Store(String),
    #[error("the Parley daemon is shutting down; call again in a moment")]
    Stopped,
}

impl From<Stopped> for WalkthroughError {
    fn from(_: Stopped) -> Self {
        WalkthroughError::Stopped
    }
}

impl From<super::ids::LookupError> for WalkthroughError {
    fn from(error: super::ids::LookupError) -> Self {
        match error {
            super::ids::LookupError::Id(e) if e.is_unknown() => WalkthroughError::NotFound(e.to_string()),
            super::ids::LookupError::Id(e) => WalkthroughError::Invalid(e.to_string()),
            super::ids::LookupError::Stopped(_) => WalkthroughError::Stopped,
        }
    }
}

impl From<ClickRefused> for WalkthroughError {
    fn from(refused: ClickRefused) -> Self {
        match refused {
            ClickRefused::NotFound(_) => WalkthroughError::NotFound(refused.to_string()),
            ClickRefused::Invalid(why) => WalkthroughError::Invalid(why),
            ClickRefused::Store(why) => WalkthroughError::Store(why),
            ClickRefused::Stopped => WalkthroughError::Stopped,
        }
    }
}

/// What an agent presents.
#[derive(Debug, Clone)]
pub struct Presenting {
    pub content: String,
    /// The absolute folder locations and references are relative to.
    pub base: PathBuf,
    /// The agent's workspace (the repository its threads belong to).
    pub workspace: PathBuf,
    pub title: Option<String>,
    /// The agent's short name, and the name its comments are written by.
    pub agent: String,
    pub author: String,
}

/// A comment that was not placed, for the agent to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unplaced {
    pub index: usize,
    pub location: String,
    pub reason: String,
    pub candidates: Vec<Place>,
}

/// A presented walkthrough, and what the agent should fix in it.
#[derive(Debug, Clone)]
pub struct Presented {
    pub walkthrough: Walkthrough,
    pub placed: usize,
    pub unplaced: Vec<Unplaced>,
    /// Other blocks' problems (a gitdiff range git does not know, an action
    /// without a button) and references that do not resolve.
    pub problems: Vec<String>,
}

/// Presents a walkthrough; answers once it is durable. One bad block never
/// fails the whole: it is reported in the answer.
pub async fn present(cx: &Context, p: Presenting) -> Result<Presented, WalkthroughError> {
    let invalid = WalkthroughError::Invalid;
    if p.content.trim().is_empty() {
        return Err(invalid("content is empty: write the walkthrough in markdown".into()));
    }
    if p.content.len() > MAX_CONTENT_BYTES {
        return Err(invalid(format!(
            "the walkthrough is {} KiB, over the {} KiB Parley takes: split it into several walkthroughs",
            p.content.len().div_ceil(1024),
            MAX_CONTENT_BYTES / 1024
        )));
    }
    let blocks = walkthrough::find_blocks(&p.content).map_err(|e| invalid(e.to_string()))?;
    if let Some(open) = blocks.iter().find(|b| !closed(&p.content, b)) {
        let line = p.content[..open.span.start].lines().count() + 1;
        return Err(invalid(format!(
            "the ```{} block on line {line} is not closed: end it with a line of ``` before the text that follows",
            open.kind.name()
        )));
    }
    let title = p
        .title
        .clone()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| crate::reviews::title(&p.content));
    let title = if title.is_empty() { "Walkthrough".to_owned() } else { title };
    let previous = cx.state.walkthrough_titled(p.workspace.clone(), title.clone()).await?;
    let id = previous.as_ref().map_or_else(crate::feedback::new_id, |w| w.id.clone());
    let base = p.base.clone();
    let head = tokio::task::spawn_blocking(move || crate::git::head(&base)).await.unwrap_or(None);

    let mut kept = kept_threads(cx, previous.as_ref()).await;
    let mut resolved = Vec::new();
    let mut unplaced = Vec::new();
    let mut problems = Vec::new();
    let mut placed = 0;
    for block in &blocks {
        let block = resolve(cx, &p, &id, &title, block, &mut kept).await;
        match &block {
            Resolved::Comment { index, location, places, problem, candidates, .. } => match problem {
                Some(reason) if places.is_empty() => unplaced.push(Unplaced {
                    index: *index,
                    location: location.clone(),
                    reason: reason.clone(),
                    candidates: candidates.clone(),
                }),
                _ => placed += 1,
            },
            Resolved::GitDiff { index, problem: Some(problem), .. }
            | Resolved::Action { index, problem: Some(problem), .. } => {
                problems.push(format!("block {index}: {problem}"))
            }
            _ => {}
        }
        resolved.push(block);
    }
    let references = check_references(&p.content, &p.base).await;
    problems.extend(references.iter().filter_map(|r| r.problem.as_ref().map(|why| format!("{}: {why}", r.text))));

    // The previous revision's comments no person answered give way to these.
    let placed_now: Vec<String> = resolved
        .iter()
        .flat_map(|b| match b {
            Resolved::Comment { places, .. } => places.iter().filter_map(|p| p.thread_id.clone()).collect(),
            _ => Vec::new(),
        })
        .collect();
    for (thread_id, answered) in kept.iter().map(|k| (k.id.clone(), k.answered)) {
        if !answered && !placed_now.contains(&thread_id) {
            let _ = threads::resolve_for_agent(cx, &thread_id, &p.workspace, p.author.clone(), None).await;
        }
    }

    let mut walkthrough = Walkthrough {
        id,
        workspace: p.workspace.clone(),
        title,
        base: p.base.clone(),
        content: p.content.clone(),
        revision: 0,
        updated_at: String::new(),
        presented_by: p.agent.clone(),
        head,
        parts: parts(&p.content, &blocks),
        blocks: resolved,
        references,
    };
    for _ in 0..16 {
        let newest = cx.state.walkthrough_titled(p.workspace.clone(), walkthrough.title.clone()).await?;
        walkthrough.revision = newest.map_or(0, |w| w.revision) + 1;
        match cx.state.commit_walkthrough(walkthrough.clone()).await {
            Ok(stored) => return Ok(Presented { walkthrough: stored, placed, unplaced, problems }),
            Err(CommitError::Raced) => continue,
            Err(CommitError::Store(e)) => return Err(WalkthroughError::Store(e)),
            Err(CommitError::Stopped) => return Err(WalkthroughError::Stopped),
        }
    }
    Err(WalkthroughError::Store("other agents kept presenting this walkthrough at the same moment; call again".into()))
}

/// Whether a block's fence is closed (pulldown-cmark runs an open one to
/// the end of the document).
fn closed(doc: &str, block: &Block) -> bool {
    let text = doc[block.span.clone()].trim_end();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().trim_start();
    let fence: String = first.chars().take_while(|c| *c == '`' || *c == '~').collect();
    lines.next_back().is_some_and(|last| {
        let last = last.trim();
        last.starts_with(&fence) && last.chars().all(|c| c == fence.chars().next().unwrap_or('`'))
    })
}

/// A thread of the previous revision: whether a person answered it, and
/// where it is (to be taken again by the same comment).
struct Kept {
    id: String,
    answered: bool,
    path: String,
    start_line: u32,
    end_line: u32,
    body: String,
}

async fn kept_threads(cx: &Context, previous: Option<&Walkthrough>) -> Vec<Kept> {
    let mut kept = Vec::new();
    for block in previous.map(|w| w.blocks.as_slice()).unwrap_or_default() {
        let Resolved::Comment { places, .. } = block else { continue };
        for place in places {
            let Some(id) = &place.thread_id else { continue };
            let Ok(Some(thread)) = cx.state.thread(id.clone()).await else { continue };
            if thread.resolved {
                continue;
            }
            let author = thread.comments.first().map(|c| c.author.clone()).unwrap_or_default();
            kept.push(Kept {
                id: id.clone(),
                answered: thread.comments.iter().any(|c| c.author != author),
                path: thread.path.clone(),
                start_line: thread.span.start_line,
                end_line: thread.span.end_line,
                body: thread.comments.first().map(|c| c.body.clone()).unwrap_or_default(),
            });
        }
    }
    kept
}

/// One block resolved: a comment placed (or not), a range checked.
async fn resolve(cx: &Context, p: &Presenting, id: &str, title: &str, block: &Block, kept: &mut [Kept]) -> Resolved {
    let index = block.index;
    match block.kind {
        BlockKind::Mermaid => Resolved::Mermaid { index, source: block.body.clone() },
        BlockKind::Action => Resolved::Action {
            index,
            button: block.get("button").unwrap_or_default().to_owned(),
            message: block.body.clone(),
            clicks: Vec::new(),
            problem: block.problem.clone().or_else(|| {
                block.body.trim().is_empty().then(|| "the action has no message: write it after the blank line".into())
            }),
        },
        BlockKind::GitDiff => {
            let range = block.get("range").unwrap_or_default().to_owned();
            let flags = block.flag("exclude_staged").and_then(|s| Ok((s, block.flag("exclude_unstaged")?)));
            let (exclude_staged, exclude_unstaged) = flags.clone().unwrap_or_default();
            let problem = match (&block.problem, flags) {
                (Some(problem), _) => Some(problem.clone()),
                (None, Err(problem)) => Some(problem),
                (None, Ok((staged, unstaged))) => match walkthrough::diff_scope::scope(&range, staged, unstaged) {
                    Err(problem) => Some(problem),
                    Ok(scope) => check_diff(&p.base, &range, scope).await,
                },
            };
            Resolved::GitDiff { index, range, exclude_staged, exclude_unstaged, problem }
        }
        BlockKind::Comment => {
            let location = block.get("location").unwrap_or_default().to_owned();
            let mut comment = Resolved::Comment {
                index,
                location: location.clone(),
                icon: block.get("icon").map(str::to_owned),
                body: block.body.clone(),
                places: Vec::new(),
                problem: None,
                candidates: Vec::new(),
            };
            let Resolved::Comment { places, problem, candidates, body, .. } = &mut comment else { return comment };
            if let Some(header) = &block.problem {
                *problem = Some(header.clone());
                return comment;
            }
            if body.trim().is_empty() {
                *problem = Some("the comment has no text: write it after the blank line".into());
                return comment;
            }
            let parsed = match walkthrough::parse_location(&location) {
                Ok(parsed) => parsed,
                Err(why) => {
                    *problem = Some(why);
                    return comment;
                }
            };
            match placing::place(cx, &p.workspace, &p.base, &parsed).await {
                Placement::Unplaced { reason, candidates: found } => {
                    *problem = Some(reason);
                    *candidates = found;
                }
                Placement::Places(found) => {
                    let mark = WalkthroughMark { id: id.to_owned(), title: title.to_owned(), block_index: index };
                    let mut failures = Vec::new();
                    for mut place in found {
                        match thread_at(cx, p, &place, body, &mark, kept).await {
                            Ok(thread) => {
                                place.thread_id = Some(thread);
                                places.push(place);
                            }
                            Err(e) => failures.push(format!("{}:{}: {e}", place.path, place.start_line + 1)),
                        }
                    }
                    if !failures.is_empty() {
                        *problem = Some(failures.join("; "));
                    }
                }
            }
            comment
        }
    }
}

/// The thread a comment is at `place`: the previous revision's, when it
/// said the same there, else a new one by the presenting agent.
async fn thread_at(
    cx: &Context,
    p: &Presenting,
    place: &Place,
    body: &str,
    mark: &WalkthroughMark,
    kept: &mut [Kept],
) -> Result<String, FeedbackError> {
    if let Some(same) = kept.iter_mut().find(|k| {
        k.path == place.path && k.start_line == place.start_line && k.end_line == place.end_line && k.body == body
    }) {
        // Taken again: it is neither answered away nor resolved.
        same.answered = true;
        return Ok(same.id.clone());
    }
    let ask = AgentThread {
        scope: p.workspace.clone(),
        file: p.workspace.join(&place.path),
        start_line: place.start_line + 1,
        end_line: place.end_line + 1,
        body: body.to_owned(),
        author: p.author.clone(),
        agent: Some(p.agent.clone()),
        walkthrough: Some(Box::new(mark.clone())),
    };
    Ok(threads::create_for_agent(cx, ask).await?.id)
}

/// Why the diff of `scope` (the block's `range`, its flags applied) cannot
/// be shown from the repository holding `base`, if it cannot: git does not
/// know the range, or the diff, computed now, holds no change.
async fn check_diff(base: &Path, range: &str, scope: String) -> Option<String> {
    let (base, range) = (base.to_owned(), range.trim().to_owned());
    tokio::task::spawn_blocking(move || {
        let Ok(root) = crate::git::repo_root(&base) else {
            return Some(format!("{} is not in a git repository, so there is no diff to show", base.display()));
        };
        if !matches!(scope.as_str(), "all" | "staged" | "unstaged") {
            let ends: Vec<&str> = match scope.split_once("...").or_else(|| scope.split_once("..")) {
                Some((from, to)) => vec![from, to],
                None => vec![scope.as_str()],
            };
            let unknown = ends
                .into_iter()
                .filter(|end| !end.is_empty())
                .find_map(|end| crate::git::verify_commit(&base, end).err());
            if let Some(why) = unknown {
                return Some(format!("{why}: write a range git knows, such as HEAD~1..HEAD, working or staged"));
            }
        }
        match crate::git::capture(&root, &crate::git::Scope::parse(Some(&scope)), &[]) {
            Ok(_) => None,
            Err(crate::git::GitError::NoChanges { .. }) => Some(format!(
                "`range: {range}` holds no change now (`{}` shows nothing): point at the change you made",
                walkthrough::diff_scope::git_command(&scope)
            )),
            Err(e) => Some(e.to_string()),
        }
    })
    .await
    .unwrap_or(None)
}

/// The document in order: the markdown between the blocks, and the blocks.
fn parts(content: &str, blocks: &[Block]) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut at = 0;
    for block in blocks {
        if block.span.start > at && !content[at..block.span.start].trim().is_empty() {
            parts.push(Part::Markdown(content[at..block.span.start].to_owned()));
        }
        parts.push(Part::Block(block.index));
        at = block.span.end;
    }
    if at < content.len() && !content[at..].trim().is_empty() {
        parts.push(Part::Markdown(content[at..].to_owned()));
    }
    parts
}

async fn check_references(content: &str, base: &Path) -> Vec<walkthrough::stored::Reference> {
    let (content, base) = (content.to_owned(), base.to_owned());
    tokio::task::spawn_blocking(move || {
        let found = crate::reviews::find_references(&content);
        let facts = |path: &Path| super::reviews::file_facts(&base, path);
        crate::reviews::check_references(found, &base, facts)
            .into_iter()
            .map(|r| walkthrough::stored::Reference {
                text: r.found.text,
                path: r.found.path,
                line: r.found.line,
                end_line: r.found.end_line,
                resolved: r.resolved,
                problem: r.problem,
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// The walkthroughs of the workspaces in or around `folders` (all when
/// `None`), newest first.
pub async fn list(cx: &Context, folders: Option<Vec<PathBuf>>) -> Result<Vec<Walkthrough>, WalkthroughError> {
    Ok(cx.state.walkthroughs(folders).await?)
}

/// Walkthrough `id` (whole, or a unique beginning of 4 characters or more),
/// or without one the latest of `folders`; a kept `revision` when given.
pub async fn get(
    cx: &Context,
    id: Option<&str>,
    folders: Option<Vec<PathBuf>>,
    revision: Option<u64>,
) -> Result<Option<Walkthrough>, WalkthroughError> {
    let current = match id {
        Some(id) => Some(find(cx, id).await?),
        None => list(cx, folders).await?.into_iter().next(),
    };
    let (Some(current), Some(revision)) = (current.clone(), revision) else { return Ok(current) };
    if current.revision == revision {
        return Ok(Some(current));
    }
    let store = cx.store.clone();
    let lookup = current.id.clone();
    let kept = tokio::task::spawn_blocking(move || store.walkthrough_revisions(&lookup))
        .await
        .map_err(|e| WalkthroughError::Store(e.to_string()))?
        .map_err(|e| WalkthroughError::Store(e.to_string()))?;
    kept.into_iter().find(|w| w.revision == revision).map(Some).ok_or_else(|| {
        WalkthroughError::NotFound(format!(
            "walkthrough {} has no revision {revision}: its current one is {}",
            current.id, current.revision
        ))
    })
}

/// The walkthrough an id or a unique beginning of one names, by the rule
/// every id follows (`crate::ids`).
async fn find(cx: &Context, id: &str) -> Result<Walkthrough, WalkthroughError> {
    let id = super::ids::walkthrough(cx, id).await?;
    list(cx, None).await?.into_iter().find(|w| w.id == id).ok_or_else(|| {
        WalkthroughError::NotFound(
            crate::ids::IdError::Unknown { kind: crate::ids::Kind::Walkthrough, given: id }.to_string(),
        )
    })
}

/// A person clicks action `block_index` of walkthrough `id`: its message
/// waits for the presenting agent. Answers the walkthrough and the click.
pub async fn act(
    cx: &Context,
    id: &str,
    block_index: usize,
    author: String,
) -> Result<(Walkthrough, Click), WalkthroughError> {
    let found = find(cx, id).await?;
    let now = crate::clock::now_rfc3339();
    let click = Click {
        id: crate::feedback::new_id(),
        author,
        clicked_at: now.clone(),
        state: ClickState::Waiting,
        via: None,
        updated_at: now,
        agent: None,
    };
    let click_id = click.id.clone();
    let walkthrough = cx.state.click(found.id.clone(), block_index, click).await?;
    let click = walkthrough
        .clicks()
        .find(|(_, _, _, c)| c.id == click_id)
        .map(|(_, _, _, c)| c.clone())
        .ok_or_else(|| WalkthroughError::NotFound("the click is gone".into()))?;
    Ok((walkthrough, click))
}

/// Sends click `click_id` of walkthrough `id` (its newest waiting click
/// when `None`) on to `agent`, an agent at work: it waits for that agent,
/// as a thread's message sent on with `agent/resend` does. Answers the
/// walkthrough and the click as they stand.
pub async fn resend(
    cx: &Context,
    id: &str,
    click_id: Option<&str>,
    agent: &str,
) -> Result<(Walkthrough, Click), WalkthroughError> {
    let agent = agent.trim();
    let at_work = super::agents::list(cx, None).await?;
    if !at_work.iter().any(|a| a.name == agent) {
        let names = at_work.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(", ");
        return Err(WalkthroughError::Invalid(match at_work.is_empty() {
            true => {
                format!("no agent named {agent} is at work, nor any other: start an agent, then send the click to it")
            }
            false => format!(
                "no agent named {agent} is at work; the agents at work are {names} (`parley agents` lists them): name one of them"
            ),
        }));
    }
    let found = find(cx, id).await?;
    let (walkthrough, click_id) =
        cx.state.resend_click(found.id.clone(), click_id.map(str::to_owned), agent.to_owned()).await?;
    let click = walkthrough
        .clicks()
        .find(|(_, _, _, c)| c.id == click_id)
        .map(|(_, _, _, c)| c.clone())
        .ok_or_else(|| WalkthroughError::NotFound("the click is gone".into()))?;
    Ok((walkthrough, click))
}
