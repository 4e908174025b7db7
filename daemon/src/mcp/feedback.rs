//! The feedback tools, with their arguments and results, in the shapes of the
//! plan-feedback tools agents already know (seed 002), plus `reply_feedback`
//! and `add_feedback`. A field that would say nothing (`orphaned: false`, a
//! confidence of 1, the characters of a thread on whole lines, comment ids
//! and reading times no tool takes) is left out,
//! and `get_feedback`'s text copy is a short rendering, not the JSON again:
//! an agent pays for every byte at every call.
//! Lines are 1-based; characters are 0-based counts of Unicode characters.

use std::path::{Path, PathBuf};

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Serialize};

use super::errors::{self, error_text};
use super::{NoArgs, ParleyMcp, author_of};
use crate::feedback::{Summary, Thread, ThreadState};
use crate::usecases::feedback as threads;
use crate::views;
use crate::workspace;

/// Arguments of `get_feedback`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetFeedbackArgs {
    /// Workspace-relative file path to filter by. If omitted, returns all feedback.
    #[serde(rename = "filePath")]
    pub file_path: Option<String>,
    /// How many threads of the listing to skip: the nextOffset a previous call gave.
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// At most this many threads (default 100, at most 1000).
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
}

impl GetFeedbackArgs {
    /// The page asked for, as the use case reads it.
    pub fn page(&self) -> (Option<u64>, Option<u64>) {
        (self.offset, self.limit)
    }
}

/// Arguments of `resolve_feedback`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveFeedbackArgs {
    /// The thread to resolve.
    #[serde(rename = "threadId")]
    pub thread_id: String,
    /// Optional: what you did about it, plain text; kept as the thread's last comment.
    #[serde(default)]
    pub note: Option<String>,
}

/// Arguments of `reply_feedback`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyFeedbackArgs {
    /// The thread to answer.
    #[serde(rename = "threadId")]
    pub thread_id: String,
    /// The reply, plain text: what you changed, or a question back.
    pub body: String,
}

/// Arguments of `add_feedback`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddFeedbackArgs {
    /// The file, relative to your workspace root (or absolute, inside it).
    #[serde(rename = "filePath")]
    pub file_path: String,
    /// First line of the range, 1-based.
    // Signed, so a zero or negative line is answered by `line` below with
    // what to give, rather than by serde's "expected u32".
    #[serde(rename = "startLine")]
    #[schemars(range(min = 1))]
    pub start_line: i64,
    /// Last line of the range, 1-based and inclusive; defaults to startLine.
    #[serde(rename = "endLine")]
    #[schemars(range(min = 1))]
    pub end_line: Option<i64>,
    /// The comment, plain text: your question for the human, or the note.
    pub body: String,
}

/// What `add_feedback` returns.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddResult {
    pub created: bool,
    pub thread_id: String,
    /// The new thread as get_feedback lists it.
    pub thread: FeedbackItem,
}

/// What `get_feedback` returns as structured content; its text copy (for
/// hosts that show an agent only the text) is [`list_text`].
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FeedbackList {
    /// Ordered by file path, then line.
    pub threads: Vec<FeedbackItem>,
    /// How many threads the whole listing holds.
    pub total: usize,
    /// When more threads follow: the offset to call get_feedback with next.
    #[serde(rename = "nextOffset", skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackItem {
    /// Thread ID.
    pub id: String,
    /// Workspace-relative path.
    pub file: String,
    pub range: FeedbackRange,
    /// The text the thread is on now (the last text seen, when orphaned).
    pub selected_text: String,
    /// Present, true, when the anchored text was deleted (or the file is gone or unreadable).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub orphaned: bool,
    pub comments: Vec<FeedbackComment>,
    /// anchored, moved, modified, orphaned or unreadable.
    pub state: String,
    /// When modified: the similarity to the original text (0 to 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// The text when the thread was made, when it is not simply anchored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_quote: Option<String>,
    /// For a thread a review round opened: the reviewer's finding (reply to and resolve it like any thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<FindingView>,
    /// Where the thread stands for the human: open (no agent has read it since a human last commented), seen (an agent has read it), addressed (an agent replied).
    pub standing: String,
    /// The agent that first read it since a human last commented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen_by: Option<String>,
    /// The agent that last replied to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addressed_by: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindingView {
    /// The review session (request_review's review_id) and the round that raised it.
    pub review_id: String,
    pub round: u32,
    /// critical, major, minor or suggestion.
    pub severity: String,
    pub category: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackRange {
    pub start_line: u32,
    pub end_line: u32,
    /// Present when the thread is on part of a line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_character: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_character: Option<u32>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackComment {
    /// Plain text.
    pub body: String,
    pub author: String,
    /// ISO 8601.
    pub created_at: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolveResult {
    pub resolved: bool,
    pub thread_id: String,
    /// True when the thread was resolved before this call, which changed nothing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_resolved: bool,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplyResult {
    pub replied: bool,
    pub thread_id: String,
    pub comment: FeedbackComment,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryResult {
    pub total_threads: usize,
    pub total_comments: usize,
    /// How many files have open threads, listed or not.
    pub file_count: usize,
    /// Files sorted by thread count, most first: at most 50, the ones with the
    /// most threads.
    pub files: Vec<SummaryFile>,
    pub orphaned_count: usize,
    /// Present when some files are not listed: how many.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlisted_file_count: Option<usize>,
    /// Present when some files are not listed: their open threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlisted_thread_count: Option<usize>,
    /// Present when some files are not listed: how to read their threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlisted: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryFile {
    pub path: String,
    pub thread_count: usize,
}

/// Resolves `filePath` inside `scope`; anything outside is refused.
pub fn file_in_scope(scope: &Path, file_path: &str) -> Result<PathBuf, String> {
    let path = workspace::path_from_uri(file_path.trim());
    let absolute = workspace::real(&path, scope);
    if !workspace::holds(scope, &absolute) {
        return Err(error_text(&format!(
            "filePath {file_path} is outside your workspace {}; give a path inside it",
            scope.display()
        )));
    }
    Ok(absolute)
}

/// A thread as `get_feedback` lists it; takes the thread, so its texts move
/// into the item rather than being copied.
pub fn item(mut thread: Thread, scope: &Path) -> FeedbackItem {
    let marks = std::mem::take(&mut thread.standing);
    let standing = marks.name(thread.resolved).to_owned();
    let seen_by = marks.seen.map(|m| m.by);
    let addressed_by = marks.addressed.map(|m| m.by);
    let span = &thread.span;
    let characters = |at: u32| (!thread.whole_lines).then_some(at);
    FeedbackItem {
        standing,
        seen_by,
        addressed_by,
        file: views::path_within(&thread, scope),
        range: FeedbackRange {
            start_line: span.start_line + 1,
            end_line: span.end_line + 1,
            start_character: characters(span.start.chars),
            end_character: characters(span.end.chars),
        },
        orphaned: thread.state.is_orphaned(),
        state: thread.state.name().into(),
        confidence: matches!(thread.state, ThreadState::Modified(_)).then(|| thread.state.rounded_confidence()),
        original_quote: (thread.state != ThreadState::Anchored).then(|| thread.original_quote.to_string()),
        comments: thread.comments.into_iter().map(owned_comment).collect(),
        selected_text: thread.anchor.quote.to_string(),
        id: thread.id,
        finding: thread.finding.map(|f| FindingView {
            review_id: f.review_id,
            round: f.round,
            severity: f.severity,
            category: f.category,
            suggested_fix: f.suggested_fix.map(|fix| crate::limits::clip(&fix).into_owned()),
        }),
    }
}

/// A 1-based line number an agent gave as `name`; lines past any file's
/// end stay past it.
pub fn line(name: &str, given: i64) -> Result<u32, String> {
    if given < 1 {
        return Err(error_text(&format!(
            "{name} is a 1-based line number: the first line of a file is 1, not {given}"
        )));
    }
    Ok(u32::try_from(given).unwrap_or(u32::MAX))
}

/// `add_feedback`'s answer for a thread just made.
pub fn added(thread: Thread, scope: &Path) -> AddResult {
    AddResult { created: true, thread_id: thread.id.clone(), thread: item(thread, scope) }
}

/// A comment as agents read it, its body clipped to Parley's limit (a store
/// written before the limit may hold longer ones).
fn owned_comment(c: crate::feedback::Comment) -> FeedbackComment {
    let body = match crate::limits::clip(&c.body) {
        std::borrow::Cow::Borrowed(_) => c.body,
        std::borrow::Cow::Owned(clipped) => clipped,
    };
    FeedbackComment { body, author: c.author, created_at: c.created_at }
}

pub fn comment(c: &crate::feedback::Comment) -> FeedbackComment {
    FeedbackComment {
        body: crate::limits::clip(&c.body).into_owned(),
        author: c.author.clone(),
        created_at: c.created_at.clone(),
    }
}

/// `get_feedback_summary`'s result. Seed 002's fields, and, when the
/// workspace has more files with threads than are listed, how many more and
/// how to read them: an agent starts with the files with the most threads,
/// and a file's threads are one `get_feedback {filePath}` away.
pub fn summary(summary: Summary) -> SummaryResult {
    let unlisted_files = summary.file_count - summary.files.len();
    let more = (unlisted_files > 0).then(|| {
        format!(
            "{} more files hold {} open threads and are not listed here; \
             call get_feedback with a filePath for one file's threads",
            unlisted_files, summary.unlisted_threads
        )
    });
    SummaryResult {
        total_threads: summary.total_threads,
        total_comments: summary.total_comments,
        file_count: summary.file_count,
        files: summary.files.into_iter().map(|(path, thread_count)| SummaryFile { path, thread_count }).collect(),
        orphaned_count: summary.orphaned,
        unlisted_file_count: (unlisted_files > 0).then_some(unlisted_files),
        unlisted_thread_count: (unlisted_files > 0).then_some(summary.unlisted_threads),
        unlisted: more,
    }
}

/// `get_feedback`'s result: the list as structured content, the bare array
/// as text.
/// When more threads follow, a second text block says how to read them.
pub fn list_result(list: FeedbackList, offset: usize) -> CallToolResult {
    let text = list_text(&list, offset);
    let mut result = CallToolResult::structured(serde_json::to_value(&list).expect("feedback items always serialize"));
    result.content = vec![ContentBlock::text(text)];
    result
}

/// The threads as text: every field an agent acts on, each thread in a few
/// short lines, about a third of the JSON's bytes.
///
/// ```text
/// Threads 1-1 of 1: place, thread id (standing); reply_feedback answers one.
///
/// src/lib.rs:3 6f1d2c9a-0b6c-4f7e-9a51-3c2e8d4b70e1 (open)
///   at: pub fn answer() -> u32 {
///   ana: Should this return a u64?
/// ```
pub fn list_text(list: &FeedbackList, offset: usize) -> String {
    use std::fmt::Write;
    if list.threads.is_empty() {
        return match list.total {
            0 => "No feedback threads.".to_owned(),
            total => format!("No threads from offset {offset}: the listing has {total}."),
        };
    }
    let shown = format!("{}-{}", offset + 1, offset + list.threads.len());
    let mut text =
        format!("Threads {shown} of {}: place, thread id (standing); reply_feedback answers one.\n", list.total);
    for thread in &list.threads {
        let range = &thread.range;
        let lines = match range.end_line {
            end if end != range.start_line => format!("{}-{end}", range.start_line),
            _ => range.start_line.to_string(),
        };
        let standing = match (&thread.addressed_by, &thread.seen_by) {
            (Some(by), _) => format!("addressed by {by}"),
            (None, Some(by)) if thread.standing == "seen" => format!("seen by {by}"),
            _ => thread.standing.clone(),
        };
        let _ = write!(text, "\n{}:{lines} {} ({standing}", thread.file, thread.id);
        if thread.state != "anchored" {
            let _ = write!(text, ", {}", thread.state);
            if let Some(confidence) = thread.confidence {
                let _ = write!(text, " {confidence}");
            }
        }
        text.push_str(")\n");
        if let Some(quote) = &thread.original_quote {
            let _ = writeln!(text, "  was: {}", first_line(quote));
        }
        if !thread.orphaned && !thread.selected_text.trim().is_empty() {
            let _ = writeln!(text, "  at: {}", first_line(&thread.selected_text));
        }
        if let Some(finding) = &thread.finding {
            let _ = writeln!(
                text,
                "  finding of review {} round {}: {} {}",
                finding.review_id, finding.round, finding.severity, finding.category
            );
            if let Some(fix) = &finding.suggested_fix {
                let _ = writeln!(text, "  suggested fix:\n    {}", indented(fix, "    "));
            }
        }
        for comment in &thread.comments {
            let _ = writeln!(text, "  {}: {}", comment.author, indented(&comment.body, "    ").trim_start());
        }
    }
    if let Some(next) = list.next_offset {
        let _ = write!(
            text,
            "\nMore follow: call get_feedback again with offset {next}, or with filePath for one file \
             (get_feedback_summary lists the files with the most threads)."
        );
    }
    text
}

/// The first line of `text`, trimmed and cut to 80 characters, with `…`
/// where something was left out.
fn first_line(text: &str) -> String {
    let trimmed = text.trim_matches(['\n', '\r']);
    let line = trimmed.lines().next().unwrap_or("").trim();
    let cut: String = line.chars().take(80).collect();
    let more = cut.len() < line.len() || trimmed.lines().nth(1).is_some();
    if more { format!("{cut}…") } else { cut }
}

/// `text` with every line after the first indented by `indent`.
fn indented(text: &str, indent: &str) -> String {
    let text = text.trim_end();
    text.lines().enumerate().fold(String::with_capacity(text.len()), |mut out, (n, line)| {
        if n > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        out.push_str(line);
        out
    })
}

#[tool_router(router = feedback_tools, vis = "pub(super)")]
impl ParleyMcp {
    #[tool(
        description = "Read the feedback threads on the workspace's files (or on filePath), re-anchored to the files on disk, by file and line (1-based; 0-based characters only on part of a line): comments, the text now at the thread (selectedText) and its state: anchored, moved, modified (see originalQuote, confidence), or orphaned: true. standing: open, seen (reading marks open threads seen by you), addressed. Up to limit threads (default 100); call again with nextOffset while present.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<FeedbackList>(),
        title = "Get feedback threads",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_feedback(
        &self,
        Parameters(args): Parameters<GetFeedbackArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let scope = self.scope()?;
        let file = match args.file_path.as_deref().filter(|p| !p.trim().is_empty()) {
            Some(path) => Some(file_in_scope(&scope, path)?),
            None => None,
        };
        let listing =
            threads::list_page_for_agent(&self.context, &scope, file, &author_of(&context), args.page()).await?;
        let items = listing.threads.into_iter().map(|t| item(t, &scope)).collect();
        let list = FeedbackList { threads: items, total: listing.total, next_offset: listing.next_offset };
        Ok(list_result(list, listing.offset))
    }

    #[tool(
        description = "Resolve a thread you addressed: it leaves the editor and get_feedback, shown resolved by you; note (what you did) is kept as its last comment. Returns {resolved, threadId}, with alreadyResolved: true when it was; an unknown thread gives an error.",
        title = "Resolve feedback thread",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn resolve_feedback(
        &self,
        Parameters(args): Parameters<ResolveFeedbackArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<ResolveResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let scope = self.scope()?;
        let (thread, already_resolved) =
            threads::resolve_for_agent(&self.context, &args.thread_id, &scope, author_of(&context), args.note)
                .await
                .map_err(errors::resolve)?;
        Ok(Json(ResolveResult { resolved: true, thread_id: thread.id, already_resolved }))
    }

    #[tool(
        description = "Get a workspace-wide overview of feedback: total threads and comments, files sorted by thread count, and how many threads are orphaned. All zeros when there is no feedback.",
        title = "Get feedback summary",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_feedback_summary(
        &self,
        Parameters(_): Parameters<NoArgs>,
    ) -> Result<Json<SummaryResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let scope = self.scope()?;
        let summary = threads::summary(&self.context, &scope).await?;
        Ok(Json(self::summary(summary)))
    }

    #[tool(
        description = "Answer a feedback thread: say what you changed, or ask the human a question. The reply appears in the editor under the thread.",
        title = "Reply to feedback thread",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn reply_feedback(
        &self,
        Parameters(args): Parameters<ReplyFeedbackArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<ReplyResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        if args.body.trim().is_empty() {
            return Err(error_text("body is required: write the reply").into());
        }
        let scope = self.scope()?;
        let (thread, comment) =
            threads::reply(&self.context, &args.thread_id, args.body, author_of(&context), Some(&scope)).await?;
        Ok(Json(ReplyResult { replied: true, thread_id: thread.id, comment: self::comment(&comment) }))
    }

    #[tool(
        description = "Open a thread on lines of a file to ask the human about that code or leave a note: it shows in their editor, and get_feedback shows their replies. Lines are 1-based, inclusive (endLine defaults to startLine); the thread follows them as the file changes. Returns the thread (as in get_feedback).",
        title = "Add feedback thread",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn add_feedback(
        &self,
        Parameters(args): Parameters<AddFeedbackArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<AddResult>, errors::ToolError> {
        let _call = self.context.shutdown.call();
        let scope = self.scope()?;
        let file = file_in_scope(&scope, &args.file_path)?;
        let ask = threads::AgentThread {
            file,
            start_line: line("startLine", args.start_line)?,
            end_line: line("endLine", args.end_line.unwrap_or(args.start_line))?,
            body: args.body,
            author: author_of(&context),
            scope: scope.clone(),
            agent: self.agent.name.get().cloned(),
            walkthrough: None,
        };
        let thread = threads::create_for_agent(&self.context, ask).await?;
        Ok(Json(added(thread, &scope)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(state: &str) -> FeedbackItem {
        FeedbackItem {
            id: "6f1d2c9a-0b6c-4f7e-9a51-3c2e8d4b70e1".into(),
            file: "src/cart.rs".into(),
            range: FeedbackRange { start_line: 4, end_line: 6, start_character: None, end_character: None },
            selected_text: "let total = compute_total(items, tax);\nlet due = total;\n".into(),
            orphaned: state == "orphaned",
            comments: vec![FeedbackComment {
                body: "Round the tax.\nTo cents.".into(),
                author: "ana".into(),
                created_at: "2026-11-21T06:28:40.860Z".into(),
            }],
            state: state.into(),
            confidence: (state == "modified").then_some(0.5),
            original_quote: (state != "anchored").then(|| "let total = compute_total(items, tax_rate);".into()),
            finding: None,
            standing: "addressed".into(),
            seen_by: Some("codex".into()),
            addressed_by: Some("claude-code".into()),
        }
    }

    #[test]
    fn the_text_copy_says_where_each_thread_is_what_it_was_and_what_was_said() {
        let mut finding = thread("modified");
        finding.finding = Some(FindingView {
            review_id: "2026-11-21-001".into(),
            round: 2,
            severity: "major".into(),
            category: "bug".into(),
            suggested_fix: Some("let total = round(compute_total(items, tax));\nlet due = total;".into()),
        });
        let list = FeedbackList { threads: vec![finding, thread("orphaned")], total: 7, next_offset: Some(5) };
        assert_eq!(
            list_text(&list, 3),
            "Threads 4-5 of 7: place, thread id (standing); reply_feedback answers one.\n\
             \n\
             src/cart.rs:4-6 6f1d2c9a-0b6c-4f7e-9a51-3c2e8d4b70e1 (addressed by claude-code, modified 0.5)\n  \
             was: let total = compute_total(items, tax_rate);\n  \
             at: let total = compute_total(items, tax);…\n  \
             finding of review 2026-11-21-001 round 2: major bug\n  \
             suggested fix:\n    \
             let total = round(compute_total(items, tax));\n    \
             let due = total;\n  \
             ana: Round the tax.\n    \
             To cents.\n\
             \n\
             src/cart.rs:4-6 6f1d2c9a-0b6c-4f7e-9a51-3c2e8d4b70e1 (addressed by claude-code, orphaned)\n  \
             was: let total = compute_total(items, tax_rate);\n  \
             ana: Round the tax.\n    \
             To cents.\n\
             \n\
             More follow: call get_feedback again with offset 5, or with filePath for one file \
             (get_feedback_summary lists the files with the most threads)."
        );
    }

    #[test]
    fn an_empty_page_says_whether_there_is_nothing_or_it_is_past_the_end() {
        let empty = |total| FeedbackList { threads: Vec::new(), total, next_offset: None };
        assert_eq!(list_text(&empty(0), 0), "No feedback threads.");
        assert_eq!(list_text(&empty(3), 10), "No threads from offset 10: the listing has 3.");
    }

    #[test]
    fn a_long_line_is_cut_to_80_characters() {
        let long = "x".repeat(100);
        assert_eq!(first_line(&long), format!("{}…", "x".repeat(80)));
        assert_eq!(first_line("  one line  \n"), "one line");
    }
}
