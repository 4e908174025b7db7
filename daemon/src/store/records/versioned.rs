//! The on-disk shapes of Parley's records, versioned, with explicit
//! conversions to and from the domain types. The export file uses them too.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::anchor::{Anchor, Context};
use crate::feedback::{
    Columns, Comment, Delivery, DeliveryState, Finding, GithubMark, Mark, Span, Standing, SyncedComment, Thread,
    ThreadState, WalkthroughMark,
};
use crate::reviews::{CheckedReference, FoundReference, Review, Source};

/// A review as stored.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "v")]
pub enum ReviewRecord {
    #[serde(rename = "1")]
    V1(ReviewV1),
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ReviewV1 {
    base: PathBuf,
    content: String,
    revision: u64,
    updated_at: String,
    references: Vec<ReferenceV1>,
    /// Absent in reviews stored before sources were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<SourceV1>,
}

/// Who made a revision, as stored.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum SourceV1 {
    Agent {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
    Round {
        review_id: String,
        round: u32,
    },
    Person {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

#[derive(Debug, Serialize, Deserialize)]
struct ReferenceV1 {
    text: String,
    path: String,
    line: Option<u32>,
    end_line: Option<u32>,
    resolved: Option<PathBuf>,
    problem: Option<String>,
}

/// A feedback thread as stored: `{"v": "1", …}`, like the other records.
/// The version is a field of the record rather than serde's internal tag,
/// which would buffer every field of every record (a copy of each string)
/// before reading it: at start, 100,000 threads' worth of short-lived copies
/// left the daemon's heap full of holes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThreadRecord(ThreadV1);

/// The versions of [`ThreadRecord`] this daemon reads.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum ThreadVersion {
    #[serde(rename = "1")]
    V1,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ThreadV1 {
    /// First, so a record starts with its version as the tagged ones do.
    v: ThreadVersion,
    id: String,
    workspace: PathBuf,
    path: String,
    start: usize,
    end: usize,
    quote: String,
    prefix: String,
    suffix: String,
    anchored_against: String,
    checked_against: String,
    span: [u32; 8],
    state: String,
    similarity: Option<f32>,
    original_quote: String,
    comments: Vec<CommentV1>,
    created_at: String,
    updated_at: String,
    resolved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finding: Option<FindingV1>,
    /// Added later: records written before load as open threads (resolved
    /// ones as resolved by a human).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seen: Option<MarkV1>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    addressed: Option<MarkV1>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resolved_by: Option<MarkV1>,
    /// Added later: a person's messages to agents; none in older records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deliveries: Vec<DeliveryV1>,
    /// Added later: the agent that opened the thread, by its short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    opened_by: Option<String>,
    /// Added later: the walkthrough whose comment the thread is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    walkthrough: Option<WalkthroughMarkV1>,
    /// Added later: the pull request's review thread it is synced with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    github: Option<GithubMarkV1>,
}

#[derive(Debug, Serialize, Deserialize)]
struct GithubMarkV1 {
    pull_request: String,
    thread_id: String,
    url: String,
    side: String,
    start_line: u32,
    end_line: u32,
    outdated: bool,
    /// `[parley comment id, GitHub comment id]` pairs.
    comments: Vec<(String, String)>,
    github_resolved: bool,
    resolved_at_sync: bool,
    synced_at: String,
    /// Added later: the Parley ids of comments agents made on it here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    agent_comments: Vec<String>,
    /// Added later: placed by its nearest line, its text gone here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    text_gone: bool,
}

impl From<GithubMarkV1> for GithubMark {
    fn from(g: GithubMarkV1) -> Self {
        GithubMark {
            pull_request: g.pull_request,
            thread_id: g.thread_id,
            url: g.url,
            side: g.side,
            start_line: g.start_line,
            end_line: g.end_line,
            outdated: g.outdated,
            comments: g.comments.into_iter().map(|(parley, github)| SyncedComment { parley, github }).collect(),
            github_resolved: g.github_resolved,
            resolved_at_sync: g.resolved_at_sync,
            synced_at: g.synced_at,
            agent_comments: g.agent_comments,
            text_gone: g.text_gone,
        }
    }
}

impl From<&GithubMark> for GithubMarkV1 {
    fn from(g: &GithubMark) -> Self {
        GithubMarkV1 {
            pull_request: g.pull_request.clone(),
            thread_id: g.thread_id.clone(),
            url: g.url.clone(),
            side: g.side.clone(),
            start_line: g.start_line,
            end_line: g.end_line,
            outdated: g.outdated,
            comments: g.comments.iter().map(|c| (c.parley.clone(), c.github.clone())).collect(),
            github_resolved: g.github_resolved,
            resolved_at_sync: g.resolved_at_sync,
            synced_at: g.synced_at.clone(),
            agent_comments: g.agent_comments.clone(),
            text_gone: g.text_gone,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct WalkthroughMarkV1 {
    id: String,
    title: String,
    block_index: usize,
}

#[derive(Debug, Serialize, Deserialize)]
struct DeliveryV1 {
    comment_id: String,
    agent: String,
    state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    via: Option<String>,
    asked_at: String,
    updated_at: String,
}

impl From<DeliveryV1> for Delivery {
    fn from(d: DeliveryV1) -> Self {
        Delivery {
            comment_id: d.comment_id,
            agent: d.agent,
            state: DeliveryState::from_name(&d.state),
            via: d.via,
            asked_at: d.asked_at,
            updated_at: d.updated_at,
        }
    }
}

impl From<&Delivery> for DeliveryV1 {
    fn from(d: &Delivery) -> Self {
        DeliveryV1 {
            comment_id: d.comment_id.clone(),
            agent: d.agent.clone(),
            state: d.state.name().into(),
            via: d.via.clone(),
            asked_at: d.asked_at.clone(),
            updated_at: d.updated_at.clone(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct MarkV1 {
    by: String,
    at: String,
    agent: bool,
}

impl Mark {
    fn boxed(m: MarkV1) -> Box<Mark> {
        Box::new(Mark { by: m.by, at: m.at, agent: m.agent })
    }
}

impl From<&Mark> for MarkV1 {
    fn from(m: &Mark) -> Self {
        MarkV1 { by: m.by.clone(), at: m.at.clone(), agent: m.agent }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct FindingV1 {
    review_id: String,
    round: u32,
    severity: String,
    category: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    suggested_fix: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct CommentV1 {
    id: String,
    body: String,
    author: String,
    created_at: String,
}

/// A review session as stored. Sessions keep the shape of their audit-trail
/// JSON (seed 004's review format inside), itself a published format, so the
/// record wraps the domain type under a version tag.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "v")]
pub enum SessionRecord {
    #[serde(rename = "1")]
    V1(crate::sessions::Session),
}

/// A walkthrough as stored.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "v")]
pub enum WalkthroughRecord {
    #[serde(rename = "1")]
    V1(crate::walkthrough::Walkthrough),
}

/// A JSON backup of everything (`parley export`, automatic backups).
#[derive(Debug, Serialize, Deserialize)]
pub struct Export {
    /// Always `parley-export`.
    pub format: String,
    pub version: u32,
    pub exported_at: String,
    pub reviews: Vec<ReviewRecord>,
    pub threads: Vec<ThreadRecord>,
    #[serde(default)]
    pub sessions: Vec<SessionRecord>,
    /// Each walkthrough's current revision; none in earlier exports.
    #[serde(default)]
    pub walkthroughs: Vec<WalkthroughRecord>,
}

impl Export {
    pub fn new(reviews: Vec<ReviewRecord>, threads: Vec<ThreadRecord>) -> Self {
        Export {
            format: "parley-export".into(),
            version: 1,
            exported_at: crate::clock::now_rfc3339(),
            reviews,
            threads,
            sessions: Vec::new(),
            walkthroughs: Vec::new(),
        }
    }
}

/// The export as the hub's `store/export` answers it: each record in its
/// versioned format, as JSON.
impl TryFrom<Export> for parley_protocol::methods::ExportDocument {
    type Error = serde_json::Error;

    fn try_from(export: Export) -> Result<Self, Self::Error> {
        fn values<T: Serialize>(records: Vec<T>) -> Result<Vec<serde_json::Value>, serde_json::Error> {
            records.into_iter().map(serde_json::to_value).collect()
        }
        Ok(parley_protocol::methods::ExportDocument {
            format: export.format,
            version: export.version,
            exported_at: export.exported_at,
            reviews: values(export.reviews)?,
            threads: values(export.threads)?,
            sessions: values(export.sessions)?,
            walkthroughs: values(export.walkthroughs)?,
        })
    }
}

/// An export a client sent (`store/import`), each record read in its
/// versioned format; the error names the record that is not one.
impl TryFrom<parley_protocol::methods::ExportDocument> for Export {
    type Error = String;

    fn try_from(document: parley_protocol::methods::ExportDocument) -> Result<Self, Self::Error> {
        fn records<T: serde::de::DeserializeOwned>(
            kind: &str,
            values: Vec<serde_json::Value>,
        ) -> Result<Vec<T>, String> {
            values
                .into_iter()
                .enumerate()
                .map(|(index, value)| {
                    serde_json::from_value(value).map_err(|e| format!("{kind} record {} is not one: {e}", index + 1))
                })
                .collect()
        }
        Ok(Export {
            format: document.format,
            version: document.version,
            exported_at: document.exported_at,
            reviews: records("review", document.reviews)?,
            threads: records("thread", document.threads)?,
            sessions: records("session", document.sessions)?,
            walkthroughs: records("walkthrough", document.walkthroughs)?,
        })
    }
}

impl From<ReviewRecord> for Review {
    fn from(record: ReviewRecord) -> Self {
        let ReviewRecord::V1(r) = record;
        Review {
            base: r.base,
            content: r.content,
            revision: r.revision,
            updated_at: r.updated_at,
            source: match r.source {
                None => Source::Unrecorded,
                Some(SourceV1::Agent { client }) => Source::Agent { client },
                Some(SourceV1::Round { review_id, round }) => Source::Round { review_id, round },
                Some(SourceV1::Person { name }) => Source::Person { name },
            },
            references: r
                .references
                .into_iter()
                .map(|r| CheckedReference {
                    found: FoundReference { text: r.text, path: r.path, line: r.line, end_line: r.end_line },
                    resolved: r.resolved,
                    problem: r.problem,
                })
                .collect(),
        }
    }
}

impl From<&Review> for ReviewRecord {
    fn from(review: &Review) -> Self {
        ReviewRecord::V1(ReviewV1 {
            base: review.base.clone(),
            content: review.content.clone(),
            revision: review.revision,
            updated_at: review.updated_at.clone(),
            source: match &review.source {
                Source::Unrecorded => None,
                Source::Agent { client } => Some(SourceV1::Agent { client: client.clone() }),
                Source::Round { review_id, round } => {
                    Some(SourceV1::Round { review_id: review_id.clone(), round: *round })
                }
                Source::Person { name } => Some(SourceV1::Person { name: name.clone() }),
            },
            references: review
                .references
                .iter()
                .map(|r| ReferenceV1 {
                    text: r.found.text.clone(),
                    path: r.found.path.clone(),
                    line: r.found.line,
                    end_line: r.found.end_line,
                    resolved: r.resolved.clone(),
                    problem: r.problem.clone(),
                })
                .collect(),
        })
    }
}

impl From<ThreadRecord> for Thread {
    fn from(record: ThreadRecord) -> Self {
        let (mut thread, context) = record.into_parts();
        thread.anchor.context = Some(Box::new(context));
        thread
    }
}

impl ThreadRecord {
    /// The thread's id.
    pub fn id(&self) -> &str {
        &self.0.id
    }

    /// The thread as the state owner holds it: its anchor's context left
    /// in the store.
    pub fn into_thread_without_context(self) -> Thread {
        self.into_parts().0
    }

    fn into_parts(self) -> (Thread, Context) {
        let ThreadRecord(t) = self;
        let s = t.span;
        let quote: Arc<str> = t.quote.into();
        let created_at: Arc<str> = t.created_at.as_str().into();
        let state = match (t.state.as_str(), t.similarity) {
            ("anchored", _) => ThreadState::Anchored,
            ("moved", _) => ThreadState::Moved,
            ("modified", similarity) => ThreadState::Modified(similarity.unwrap_or(0.0)),
            ("unreadable", _) => ThreadState::Unreadable,
            ("stale", _) => ThreadState::Stale,
            _ => ThreadState::Orphaned,
        };
        // Whole lines: the text before ends a line and the text after
        // starts one (or the quote ends its last line itself).
        let whole_lines = !quote.is_empty()
            && (t.prefix.is_empty() || t.prefix.ends_with('\n'))
            && (t.suffix.is_empty() || t.suffix.starts_with('\n') || quote.ends_with('\n'));
        let thread = Thread {
            id: t.id,
            workspace: t.workspace.into(),
            path: t.path,
            anchor: Anchor { range: t.start..t.end, quote: quote.clone(), context: None },
            whole_lines,
            anchored_against: t.anchored_against.into(),
            checked_against: t.checked_against.into(),
            span: Span {
                start_line: s[0],
                end_line: s[1],
                start: Columns { bytes: s[2], utf16: s[3], chars: s[4] },
                end: Columns { bytes: s[5], utf16: s[6], chars: s[7] },
            },
            state,
            original_quote: if *t.original_quote == *quote { quote } else { t.original_quote.into() },
            comments: exactly(t.comments.into_iter().map(|c| Comment {
                id: c.id,
                body: c.body,
                author: c.author,
                created_at: c.created_at,
            })),
            updated_at: if t.updated_at == t.created_at { created_at.clone() } else { t.updated_at.into() },
            created_at,
            resolved: t.resolved,
            finding: t.finding.map(|f| {
                Box::new(Finding {
                    review_id: f.review_id,
                    round: f.round,
                    severity: f.severity,
                    category: f.category,
                    suggested_fix: f.suggested_fix,
                })
            }),
            standing: Standing {
                seen: t.seen.map(Mark::boxed),
                addressed: t.addressed.map(Mark::boxed),
                resolved: t.resolved_by.map(Mark::boxed),
                deliveries: t.deliveries.into_iter().map(Delivery::from).collect(),
                opened_by: t.opened_by,
                walkthrough: t
                    .walkthrough
                    .map(|w| Box::new(WalkthroughMark { id: w.id, title: w.title, block_index: w.block_index })),
                github: t.github.map(|g| Box::new(GithubMark::from(g))),
            },
        };
        (thread, Context { prefix: t.prefix, suffix: t.suffix })
    }

    /// The anchor's context before and after the quote.
    pub fn into_context(self) -> Context {
        let ThreadRecord(t) = self;
        Context { prefix: t.prefix, suffix: t.suffix }
    }

    /// Takes the context of `stored`, the record this one replaces: for a
    /// thread written from memory, which does not hold it.
    pub fn keep_context_of(&mut self, stored: ThreadRecord) {
        let ThreadRecord(t) = self;
        Context { prefix: t.prefix, suffix: t.suffix } = stored.into_context();
    }
}

/// The items in a vector of exactly their number. A vector read from JSON
/// has room for at least four (serde cannot know the length beforehand), and
/// collecting from it keeps its buffer: a thread's one comment held room for
/// four, 29 MiB for 100,000 threads kept in memory.
fn exactly<T>(items: impl ExactSizeIterator<Item = T>) -> Vec<T> {
    let mut exact = Vec::with_capacity(items.len());
    exact.extend(items);
    exact
}

impl From<&Thread> for ThreadRecord {
    fn from(t: &Thread) -> Self {
        let s = &t.span;
        let similarity = match t.state {
            ThreadState::Modified(similarity) => Some(similarity),
            _ => None,
        };
        ThreadRecord(ThreadV1 {
            v: ThreadVersion::V1,
            id: t.id.clone(),
            workspace: t.workspace.to_path_buf(),
            path: t.path.clone(),
            start: t.anchor.range.start,
            end: t.anchor.range.end,
            quote: t.anchor.quote.to_string(),
            prefix: t.anchor.prefix().to_owned(),
            suffix: t.anchor.suffix().to_owned(),
            anchored_against: t.anchored_against.to_string(),
            checked_against: t.checked_against.to_string(),
            span: [
                s.start_line,
                s.end_line,
                s.start.bytes,
                s.start.utf16,
                s.start.chars,
                s.end.bytes,
                s.end.utf16,
                s.end.chars,
            ],
            state: t.state.name().into(),
            similarity,
            original_quote: t.original_quote.to_string(),
            comments: t
                .comments
                .iter()
                .map(|c| CommentV1 {
                    id: c.id.clone(),
                    body: c.body.clone(),
                    author: c.author.clone(),
                    created_at: c.created_at.clone(),
                })
                .collect(),
            created_at: t.created_at.to_string(),
            updated_at: t.updated_at.to_string(),
            resolved: t.resolved,
            finding: t.finding.as_deref().map(|f| FindingV1 {
                review_id: f.review_id.clone(),
                round: f.round,
                severity: f.severity.clone(),
                category: f.category.clone(),
                suggested_fix: f.suggested_fix.clone(),
            }),
            seen: t.standing.seen.as_deref().map(MarkV1::from),
            addressed: t.standing.addressed.as_deref().map(MarkV1::from),
            resolved_by: t.standing.resolved.as_deref().map(MarkV1::from),
            deliveries: t.standing.deliveries.iter().map(DeliveryV1::from).collect(),
            opened_by: t.standing.opened_by.clone(),
            walkthrough: t.standing.walkthrough.as_deref().map(|w| WalkthroughMarkV1 {
                id: w.id.clone(),
                title: w.title.clone(),
                block_index: w.block_index,
            }),
            github: t.standing.github.as_deref().map(GithubMarkV1::from),
        })
    }
}

impl Export {
    /// Checks what an import would write before any of it is: session ids
    /// (the audit tree makes folders of them), workspaces (absolute) and
    /// thread paths (relative to their workspace, never leaving it). The
    /// error names the first bad record and what is wrong with it.
    pub fn check(&self) -> Result<(), String> {
        for (n, ReviewRecord::V1(review)) in self.reviews.iter().enumerate() {
            check_workspace(&review.base)
                .map_err(|e| format!("review {} (of {}): {e}", n + 1, review.base.display()))?;
        }
        for (n, ThreadRecord(thread)) in self.threads.iter().enumerate() {
            let what = || format!("thread {} (id {:?})", n + 1, thread.id);
            check_workspace(&thread.workspace).map_err(|e| format!("{}: {e}", what()))?;
            if !is_relative_inside(&thread.path) {
                return Err(format!(
                    "{}: its path {:?} must be relative to its workspace and stay inside it (no leading /, no ..)",
                    what(),
                    thread.path
                ));
            }
        }
        for (n, SessionRecord::V1(session)) in self.sessions.iter().enumerate() {
            if !crate::sessions::is_session_id(&session.id) {
                return Err(format!(
                    "session {}: its id {:?} is not a review id (they look like 2026-11-21-001)",
                    n + 1,
                    session.id
                ));
            }
            check_workspace(&session.workspace).map_err(|e| format!("session {} ({}): {e}", n + 1, session.id))?;
        }
        for (n, WalkthroughRecord::V1(walkthrough)) in self.walkthroughs.iter().enumerate() {
            let what = || format!("walkthrough {} (id {:?})", n + 1, walkthrough.id);
            if !crate::feedback::is_thread_id(&walkthrough.id) {
                return Err(format!(
                    "{}: its id is not a walkthrough id (they look like 970f5fa9-6d1e-4c7a-9a55-2f0c3b8e1d42)",
                    what()
                ));
            }
            check_workspace(&walkthrough.workspace).map_err(|e| format!("{}: {e}", what()))?;
            check_workspace(&walkthrough.base).map_err(|e| format!("{}: its base folder: {e}", what()))?;
            let places = walkthrough.blocks.iter().flat_map(|b| match b {
                crate::walkthrough::Resolved::Comment { places, candidates, .. } => {
                    places.iter().chain(candidates).collect::<Vec<_>>()
                }
                _ => Vec::new(),
            });
            if let Some(bad) = places.map(|p| &p.path).find(|path| !is_relative_inside(path)) {
                return Err(format!(
                    "{}: its comment's path {bad:?} must be relative to its workspace and stay inside it (no leading /, no ..)",
                    what()
                ));
            }
        }
        Ok(())
    }
}

fn check_workspace(workspace: &std::path::Path) -> Result<(), String> {
    let normal = workspace.components().all(|c| !matches!(c, std::path::Component::ParentDir));
    if workspace.is_absolute() && normal {
        Ok(())
    } else {
        Err(format!("its workspace {:?} must be an absolute path, without ..", workspace.display().to_string()))
    }
}

fn is_relative_inside(path: &str) -> bool {
    !path.is_empty()
        && std::path::Path::new(path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread record as Parley wrote them before standings were kept.
    const OLD: &str = r#"{"v":"1","id":"573dda29-f9f8-42f0-bf44-eb5690b0f283","workspace":"/ws","path":"a.rs",
        "start":0,"end":3,"quote":"one","prefix":"","suffix":"\ntwo","anchored_against":"h","checked_against":"h",
        "span":[0,0,0,0,0,0,3,3],"state":"anchored","similarity":null,"original_quote":"one",
        "comments":[{"id":"c1","body":"why?","author":"ana","created_at":"t"}],
        "created_at":"t","updated_at":"t","resolved":true}"#;

    #[test]
    fn old_records_load_with_no_standing_and_marks_round_trip() {
        let record: ThreadRecord = serde_json::from_str(OLD).expect("an old record loads");
        let mut thread = Thread::from(record);
        assert_eq!(thread.standing, Standing::default());
        assert_eq!(thread.standing.resolver(thread.resolved), Some("human"), "resolved before: by a person");

        let mark = |by: &str, agent| Box::new(Mark { by: by.into(), at: "t2".into(), agent });
        thread.standing = Standing {
            seen: Some(mark("claude", true)),
            addressed: None,
            resolved: Some(mark("human", false)),
            ..Standing::default()
        };
        let json = serde_json::to_string(&ThreadRecord::from(&thread)).expect("serializes");
        let back = Thread::from(serde_json::from_str::<ThreadRecord>(&json).expect("loads"));
        assert_eq!(back.standing, thread.standing);
        // Marks not set are not written, so records stay as small as before.
        assert!(!json.contains("addressed") && !json.contains("deliveries") && !json.contains("opened_by"), "{json}");

        // Messages to agents and the agent that opened it are kept too.
        thread.standing.opened_by = Some("claude-1".into());
        thread.standing.deliveries.push(crate::feedback::Delivery {
            comment_id: "c1".into(),
            agent: "claude-1".into(),
            state: DeliveryState::Read,
            via: Some("hook".into()),
            asked_at: "t1".into(),
            updated_at: "t2".into(),
        });
        let json = serde_json::to_string(&ThreadRecord::from(&thread)).expect("serializes");
        let back = Thread::from(serde_json::from_str::<ThreadRecord>(&json).expect("loads"));
        assert_eq!(back.standing, thread.standing);
    }

    #[test]
    fn records_start_with_their_version_and_a_newer_one_is_refused() {
        let thread = Thread::from(serde_json::from_str::<ThreadRecord>(OLD).expect("loads"));
        assert_eq!(thread.comments.capacity(), 1, "room for its one comment, not the four JSON gave");
        let json = serde_json::to_string(&ThreadRecord::from(&thread)).expect("serializes");
        assert!(json.starts_with(r#"{"v":"1","id":"573dda29"#), "{json}");
        let newer = OLD.replacen(r#""v":"1""#, r#""v":"2""#, 1);
        let error = serde_json::from_str::<ThreadRecord>(&newer).expect_err("a version this daemon does not know");
        assert!(error.to_string().contains("unknown variant `2`"), "{error}");
    }

    #[test]
    fn an_import_with_a_bad_record_names_it() {
        let thread = |workspace: &str, path: &str| {
            let record = OLD.replace(r#""workspace":"/ws""#, &format!(r#""workspace":{workspace:?}"#));
            let record = record.replace(r#""path":"a.rs""#, &format!(r#""path":{path:?}"#));
            serde_json::from_str::<ThreadRecord>(&record).expect("loads")
        };
        let check = |threads: Vec<ThreadRecord>| Export::new(Vec::new(), threads).check();
        assert_eq!(check(vec![thread("/w", "a.md"), thread("/w", "docs/./b.md")]), Ok(()));
        for (workspace, path, wanted) in [
            (
                "/w",
                "../../etc/passwd",
                "thread 2 (id \"573dda29-f9f8-42f0-bf44-eb5690b0f283\"): its path \"../../etc/passwd\" must be relative",
            ),
            ("/w", "/etc/passwd", "its path \"/etc/passwd\" must be relative"),
            ("/w", "", "its path \"\" must be relative"),
            ("w", "a.md", "its workspace \"w\" must be an absolute path"),
            ("/w/../..", "a.md", "must be an absolute path, without .."),
        ] {
            let err = check(vec![thread("/w", "a.md"), thread(workspace, path)]).expect_err(path);
            assert!(err.contains(wanted), "{err}");
        }
    }
}
