//! Feedback threads as data: comment threads anchored to ranges of text,
//! their states, and the listings and summaries agents and editors read.
//! Pure: files are read elsewhere and their text handed in.

use std::path::Path;
use std::sync::Arc;

use crate::anchor::{self, Anchor, AnchorState, Reanchorer};
use crate::position::LineIndex;
use parley_protocol::hello::PositionEncoding;

/// Why a feedback operation failed. The first texts are seed 002's, which
/// agents already know; they are used for exactly those failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedbackError {
    /// A typed thread id that the one id rule (`ids`) cannot read, or that
    /// matches several threads; says what to give.
    #[error("{0}")]
    BadId(String),
    /// A well-formed thread id (or beginning of one) that names no thread.
    #[error("{0}")]
    UnknownId(String),
    #[error("Thread not found")]
    NotFound,
    #[error("Feedback store not initialized: {0}")]
    Store(String),
    #[error("Thread is already resolved")]
    AlreadyResolved,
    #[error("Thread is not resolved")]
    NotResolved,
    #[error("Thread is resolved; reopen it to reply")]
    ResolvedNoReply,
    /// The request cannot be done as asked; the text says what to change.
    #[error("{0}")]
    Invalid(String),
    /// A file could not be read.
    #[error("{0}")]
    Unreadable(String),
    /// A listing was asked for one file, and there is no such file in the
    /// workspace (nor threads on one by that name); the text names both.
    #[error("{0}")]
    NoSuchFile(String),
    #[error("the Parley daemon is shutting down; try again in a moment")]
    Stopped,
}

/// Where a thread is, as lines and columns of the text it was last found in.
/// Kept with the thread so listings need no file reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// 0-based.
    pub start_line: u32,
    pub end_line: u32,
    pub start: Columns,
    pub end: Columns,
}

/// One column counted the three ways clients count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Columns {
    pub bytes: u32,
    pub utf16: u32,
    pub chars: u32,
}

impl Columns {
    pub fn get(&self, encoding: PositionEncoding) -> u32 {
        match encoding {
            PositionEncoding::Utf8 => self.bytes,
            PositionEncoding::Utf16 => self.utf16,
            PositionEncoding::Utf32 => self.chars,
        }
    }
}

/// How well a thread is attached to its text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThreadState {
    Anchored,
    Moved,
    /// The text changed; how similar it still is to the original.
    Modified(f32),
    /// The text is gone; the thread is kept and comes back with its text.
    Orphaned,
    /// The file is not UTF-8 text (binary, another encoding) or cannot be read.
    Unreadable,
    /// The file changed and the text is not at its old place, but the file
    /// is too large to search for it within Parley's bound on re-anchoring
    /// work: the thread shows where its text was last seen.
    Stale,
}

impl ThreadState {
    pub fn name(&self) -> &'static str {
        match self {
            ThreadState::Anchored => "anchored",
            ThreadState::Moved => "moved",
            ThreadState::Modified(_) => "modified",
            ThreadState::Orphaned => "orphaned",
            ThreadState::Unreadable => "unreadable",
            ThreadState::Stale => "stale",
        }
    }

    /// True when the thread's text cannot be shown: seed 002's `orphaned`.
    pub fn is_orphaned(&self) -> bool {
        matches!(self, ThreadState::Orphaned | ThreadState::Unreadable | ThreadState::Stale)
    }

    /// The confidence to two decimals, as clients show it.
    pub fn rounded_confidence(&self) -> f64 {
        (f64::from(self.confidence()) * 100.0).round() / 100.0
    }

    pub fn confidence(&self) -> f32 {
        match self {
            ThreadState::Anchored | ThreadState::Moved => 1.0,
            ThreadState::Modified(similarity) => *similarity,
            ThreadState::Orphaned | ThreadState::Unreadable | ThreadState::Stale => 0.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    pub id: String,
    pub body: String,
    pub author: String,
    /// RFC 3339.
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    pub id: String,
    /// The workspace folder the thread belongs to; shared between the
    /// threads of a file in memory (the state owner holds 100,000 threads).
    pub workspace: Arc<Path>,
    /// Relative to the workspace, with `/` separators.
    pub path: String,
    pub anchor: Anchor,
    /// Whether the thread is on whole lines (as agents, the command line,
    /// findings and a person's round comments make them; an editor's
    /// selection of whole lines too): it then follows its lines, and a line
    /// that grows shows its new text. Derived from the text around the range
    /// when it was last anchored, so not stored.
    pub whole_lines: bool,
    /// Hash of the text `anchor.range` refers to (its snapshot is stored);
    /// shared, like `checked_against`, between the threads of a file that
    /// were checked against the same text.
    pub anchored_against: Arc<str>,
    /// Hash of the file text `state` was last decided against.
    pub checked_against: Arc<str>,
    pub span: Span,
    pub state: ThreadState,
    /// The quoted text when the thread was made: the anchor's own quote
    /// (one allocation for both) while the text has not changed.
    pub original_quote: Arc<str>,
    pub comments: Vec<Comment>,
    /// RFC 3339, like `updated_at`, which shares this one's text until the
    /// thread is first changed.
    pub created_at: Arc<str>,
    pub updated_at: Arc<str>,
    /// Resolved threads are hidden from listings but kept, so they can be reopened.
    pub resolved: bool,
    /// The reviewer's finding this thread was made from, for threads a
    /// review round opened.
    pub finding: Option<Box<Finding>>,
    /// Where the thread stands with the agents working for the human.
    pub standing: Standing,
}

/// Who did something to a thread, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The agent's name (its MCP client name), or `human`.
    pub by: String,
    /// RFC 3339.
    pub at: String,
    /// Whether an agent did it (through Parley's MCP tools), rather than a
    /// person at an editor or the CLI.
    pub agent: bool,
}

/// What agents have done with a thread since a human last spoke in it, so
/// the human can tell what is waiting. Standing is about agents acting for
/// the human: a reviewer's prompt or a thread an agent opens counts, a
/// reviewer's finding does not start as seen by its reviewer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Standing {
    /// The first agent that read the thread since a human last commented.
    /// The marks are boxed: most threads have none, and three inline marks
    /// made every thread in memory 144 bytes larger.
    pub seen: Option<Box<Mark>>,
    /// The last agent that replied to or resolved it since then.
    pub addressed: Option<Box<Mark>>,
    /// Who resolved it, while it is resolved.
    pub resolved: Option<Box<Mark>>,
    /// A person's messages in the thread addressed to an agent, oldest
    /// first, with where each stands (most threads have none).
    pub deliveries: Vec<Delivery>,
    /// The agent (its short name) that opened the thread (`add_feedback`):
    /// a person's answer in it is a message to that agent.
    pub opened_by: Option<String>,
    /// For a comment of a walkthrough: which, and which of its blocks.
    pub walkthrough: Option<Box<WalkthroughMark>>,
    /// For a thread synced with a pull request's review thread on GitHub:
    /// GitHub's ids and what it said at the last sync.
    pub github: Option<Box<GithubMark>>,
}

/// What ties a thread to a review thread of a GitHub pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GithubMark {
    /// `OWNER/REPO#NUMBER`.
    pub pull_request: String,
    /// GitHub's id of the review thread (`PRRT_…`).
    pub thread_id: String,
    /// The thread's first comment on GitHub, for a person to open.
    pub url: String,
    /// `LEFT` (the base's lines, removed ones) or `RIGHT` (the head's).
    pub side: String,
    /// GitHub's lines, 1-based (the original ones for an outdated thread).
    pub start_line: u32,
    pub end_line: u32,
    /// GitHub says the lines it was on have changed since.
    pub outdated: bool,
    /// Its text was gone from the file here when it was pulled in (after a
    /// force-push, say): placed on the nearest line, and shown as outdated
    /// while GitHub's own flag is kept in `outdated`.
    pub text_gone: bool,
    /// Each of the thread's comments GitHub also has: Parley's comment id
    /// and GitHub's.
    pub comments: Vec<SyncedComment>,
    /// Whether GitHub had it resolved, and whether Parley had, at the last sync.
    pub github_resolved: bool,
    pub resolved_at_sync: bool,
    /// RFC 3339.
    pub synced_at: String,
    /// Parley's ids of the comments agents made on the thread here (their
    /// replies and resolving notes): a push sends them as the agent's.
    pub agent_comments: Vec<String>,
}

/// One comment both Parley and GitHub have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncedComment {
    pub parley: String,
    pub github: String,
}

/// What makes a thread one of a walkthrough's comments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkthroughMark {
    pub id: String,
    pub title: String,
    pub block_index: usize,
}

/// A person's message to one agent (a comment of the thread), and where it
/// stands: waiting to be handed over, delivered (and how), read, answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub comment_id: String,
    /// The agent's short name.
    pub agent: String,
    pub state: DeliveryState,
    /// How it reached the agent, once delivered: `tool-answer`, `wait`,
    /// `channel` or `hook`.
    pub via: Option<String>,
    /// RFC 3339.
    pub asked_at: String,
    pub updated_at: String,
}

/// Where a message to an agent stands; each state follows the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeliveryState {
    Waiting,
    Delivered,
    Read,
    Answered,
}

impl DeliveryState {
    pub fn name(self) -> &'static str {
        match self {
            DeliveryState::Waiting => "waiting",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Read => "read",
            DeliveryState::Answered => "answered",
        }
    }

    /// The state a stored name stands for (an unknown one reads as waiting,
    /// so nothing is lost).
    pub fn from_name(name: &str) -> DeliveryState {
        match name {
            "delivered" => DeliveryState::Delivered,
            "read" => DeliveryState::Read,
            "answered" => DeliveryState::Answered,
            _ => DeliveryState::Waiting,
        }
    }
}

impl Standing {
    /// Moves `agent`'s messages in the thread on to `state` (never back),
    /// noting `via` for those it delivers; answers whether any changed.
    pub fn advance(&mut self, agent: &str, state: DeliveryState, via: Option<&str>, at: &str) -> bool {
        let mut changed = false;
        for delivery in self.deliveries.iter_mut().filter(|d| d.agent == agent && d.state < state) {
            if delivery.state == DeliveryState::Waiting {
                delivery.via = via.map(str::to_owned);
            }
            delivery.state = state;
            delivery.updated_at = at.to_owned();
            changed = true;
        }
        changed
    }

    /// The agent a person's new word in the thread goes to: the one its
    /// newest message went to, else the one that opened it.
    pub fn asked_agent(&self) -> Option<&str> {
        self.deliveries.last().map(|d| d.agent.as_str()).or(self.opened_by.as_deref())
    }
}

impl Standing {
    /// `open`, `seen`, `addressed` or `resolved`.
    pub fn name(&self, resolved: bool) -> &'static str {
        match (resolved, &self.addressed, &self.seen) {
            (true, _, _) => "resolved",
            (false, Some(_), _) => "addressed",
            (false, None, Some(_)) => "seen",
            (false, None, None) => "open",
        }
    }

    /// Who resolved the thread: `human` or `agent` (the agent's name is in
    /// `addressed`). A thread resolved before standings were kept says `human`.
    pub fn resolver(&self, resolved: bool) -> Option<&'static str> {
        match (resolved, &self.resolved) {
            (false, _) => None,
            (true, Some(mark)) if mark.agent => Some("agent"),
            (true, _) => Some("human"),
        }
    }

    /// Records that `agent` read the thread; answers whether its standing
    /// changed. Only an open thread changes: the first reader is kept, so
    /// agents reading in turn do not keep changing it.
    pub fn see(&mut self, resolved: bool, agent: &str, at: &str) -> bool {
        if resolved || self.seen.is_some() || self.addressed.is_some() {
            return false;
        }
        self.seen = Some(Box::new(Mark { by: agent.to_owned(), at: at.to_owned(), agent: true }));
        true
    }
}

/// What a review round said at a thread's place: the thread is the finding,
/// so people and agents answer and resolve it like any other.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The review session and round that raised it (first).
    pub review_id: String,
    pub round: u32,
    /// `critical`, `major`, `minor` or `suggestion`.
    pub severity: String,
    pub category: String,
    pub suggested_fix: Option<String>,
}

/// The span of `range` in the text `index` is of. The index is built once
/// per text: building it scans the whole file.
pub fn span_of(index: &LineIndex<'_>, range: std::ops::Range<usize>) -> Span {
    let columns = |offset: usize| {
        let p8 = index.position(offset, PositionEncoding::Utf8);
        let p16 = index.position(offset, PositionEncoding::Utf16);
        let p32 = index.position(offset, PositionEncoding::Utf32);
        (p8.line, Columns { bytes: p8.character, utf16: p16.character, chars: p32.character })
    };
    let (start_line, start) = columns(range.start);
    let (end_line, end) = columns(range.end);
    Span { start_line, end_line, start, end }
}

/// A thread made before Parley read `\r\n` as `\n` ([`crate::line_endings`])
/// holds its range in the file's raw text and a quote that may carry `\r`:
/// puts it on the same text as it is read now, so it is found in place
/// rather than as modified. `raw` is the text its range refers to (its
/// snapshot), when known; without it the quote is cleaned and the range,
/// only a hint then, is kept. Whether a thread needs it is for the caller
/// to say: its snapshot has `\r\n`, or its quote a `\r`.
pub fn read_endings_as_lf(thread: &mut Thread, raw: Option<&str>) {
    let without_cr = |quote: &str| {
        let lf = crate::line_endings::as_lf(quote);
        lf.strip_suffix('\r').unwrap_or(&lf).to_owned()
    };
    let original = without_cr(&thread.original_quote);
    let same = thread.original_quote == thread.anchor.quote;
    thread.original_quote = original.into();
    match raw {
        Some(raw) => {
            // An offset moves back by the `\r\n` pairs that start before
            // it; one between `\r` and `\n` lands on the `\n`.
            let pairs: Vec<usize> = memchr::memmem::find_iter(raw.as_bytes(), b"\r\n").collect();
            let lf_offset = |at: usize| at.min(raw.len()) - pairs.partition_point(|&p| p < at);
            let lf = crate::line_endings::as_lf(raw);
            let range = lf_offset(thread.anchor.range.start)..lf_offset(thread.anchor.range.end);
            thread.whole_lines = anchor::covers_whole_lines(&lf, &range);
            thread.anchor = anchor::capture(&lf, range);
        }
        None => {
            let quote = without_cr(&thread.anchor.quote);
            let context = thread.anchor.context.take();
            thread.anchor.quote = quote.into();
            thread.anchor.context = context.map(|c| {
                Box::new(anchor::Context {
                    prefix: crate::line_endings::into_lf(c.prefix),
                    suffix: crate::line_endings::into_lf(c.suffix),
                })
            });
        }
    }
    if same && thread.anchor.quote == thread.original_quote {
        thread.anchor.quote = thread.original_quote.clone();
    }
}

/// What changed when a thread was checked against a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing an editor or agent would notice.
    None,
    /// The range or the state changed.
    Moved,
}

/// Who a thread's `addressed` mark names when its suggested change was
/// found applied in the file: Parley sees the file change, not who changed it.
pub const APPLIED: &str = "applied";

/// Re-anchors `thread` against the new text `index` is of (whose hash is
/// `new_hash`). `reanchorer` was made from the snapshot
/// `thread.anchored_against` names (when known) and the new text; threads
/// sharing a snapshot share it, so the file is diffed (and indexed) once.
///
/// A thread on whole lines follows its lines ([`Reanchorer::reanchor_lines`]).
/// An open thread whose suggested change now stands where it was, and did
/// not before, is put on the changed lines and marked addressed by
/// [`APPLIED`] at `now`.
pub fn recheck(
    thread: &mut Thread,
    reanchorer: &Reanchorer<'_>,
    index: &LineIndex<'_>,
    new_hash: &Arc<str>,
    now: &str,
) -> Change {
    let new_text = index.text();
    let before = (thread.state, thread.span, thread.standing.addressed.is_some());
    let mut found = if thread.whole_lines {
        reanchorer.reanchor_lines(&thread.anchor)
    } else {
        reanchorer.reanchor(&thread.anchor)
    };
    let applied = applied_suggestion(thread, reanchorer, &found);
    if let Some(range) = &applied {
        found = anchor::Reanchored { state: AnchorState::Anchored, range: Some(range.clone()), confidence: 1.0 };
    }
    match (found.state, found.range) {
        // The anchor is kept as it was: the next change of the file searches
        // for it again from its last known place.
        (AnchorState::Unsearched, _) => thread.state = ThreadState::Stale,
        (AnchorState::Orphaned, _) | (_, None) => thread.state = ThreadState::Orphaned,
        (state, Some(range)) => {
            thread.anchor = anchor::capture(new_text, range.clone());
            thread.whole_lines = anchor::covers_whole_lines(new_text, &range);
            thread.anchored_against = new_hash.clone();
            thread.span = span_of(index, range);
            thread.state = if thread.anchor.quote == thread.original_quote {
                match state {
                    AnchorState::Moved => ThreadState::Moved,
                    _ => ThreadState::Anchored,
                }
            } else {
                ThreadState::Modified(quote_similarity(&thread.original_quote, &thread.anchor.quote))
            };
        }
    }
    if applied.is_some() {
        thread.standing.addressed = Some(Box::new(Mark { by: APPLIED.into(), at: now.into(), agent: false }));
    }
    thread.checked_against = new_hash.clone();
    let after = (thread.state, thread.span, thread.standing.addressed.is_some());
    if after == before { Change::None } else { Change::Moved }
}

/// Where an open thread's suggested change (a person's ```` ```suggestion ````
/// or a finding's fix) now stands, near where the thread was, when it did
/// not stand there before: the change was applied. Whitespace at the ends
/// of lines and blank lines do not count, as an agent applying it may
/// indent it differently.
fn applied_suggestion(
    thread: &Thread,
    reanchorer: &Reanchorer<'_>,
    found: &anchor::Reanchored,
) -> Option<std::ops::Range<usize>> {
    let fix = thread.finding.as_ref()?.suggested_fix.as_deref().filter(|f| !f.trim().is_empty())?;
    if thread.resolved || thread.standing.addressed.is_some() || anchor::same_lines(&thread.anchor.quote, fix) {
        return None;
    }
    let near = found.range.as_ref().map_or_else(|| reanchorer.place(&thread.anchor), |r| r.start);
    let radius = thread.anchor.quote.lines().count() + fix.lines().count() + 2;
    let range = anchor::find_block(reanchorer.new_text(), near, fix, radius)?;
    // Text that already stood there is not a change someone applied.
    let stood = reanchorer.old_text().and_then(|old| anchor::find_block(old, thread.anchor.range.start, fix, radius));
    stood.is_none().then_some(range)
}

/// Marks a thread whose file is gone or unreadable.
pub fn lose_file(thread: &mut Thread, state: ThreadState, marker: &Arc<str>) -> Change {
    let before = thread.state;
    thread.state = state;
    thread.checked_against = marker.clone();
    if before == state { Change::None } else { Change::Moved }
}

fn quote_similarity(a: &str, b: &str) -> f32 {
    (strsim::normalized_levenshtein(a.trim(), b.trim()) as f32 * 100.0).round() / 100.0
}

/// How many files a summary lists by name: the ones with the most open
/// threads. An agent reads the summary to decide where to start; a list of
/// every file in a large workspace would fill its context and cost as much as
/// reading the threads, so the rest are counted instead.
pub const SUMMARY_FILES_LISTED: usize = 50;

/// Seed 002's summary of a workspace's threads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub total_threads: usize,
    pub total_comments: usize,
    /// How many files have open threads, listed or not.
    pub file_count: usize,
    /// The files with the most threads (at most [`SUMMARY_FILES_LISTED`]),
    /// with their thread counts, most threads first, then by path.
    pub files: Vec<(String, usize)>,
    /// Open threads in the files not listed.
    pub unlisted_threads: usize,
    pub orphaned: usize,
}

/// What one file's open threads add to a summary; kept per file by the
/// state owner, so a summary costs per file, not per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileCounts {
    pub threads: usize,
    pub comments: usize,
    pub orphaned: usize,
}

impl FileCounts {
    /// The counts of a file's threads (resolved ones do not count).
    pub fn of<'a>(threads: impl IntoIterator<Item = &'a Thread>) -> FileCounts {
        let mut counts = FileCounts::default();
        for thread in threads.into_iter().filter(|t| !t.resolved) {
            counts.threads += 1;
            counts.comments += thread.comments.len();
            counts.orphaned += usize::from(thread.state.is_orphaned());
        }
        counts
    }
}

/// Summarises files: each file's key (which orders files with as many
/// threads) and counts; `show` gives the path as listed, and is called only
/// for the files listed, so a large workspace's summary costs a walk of its
/// counts, not a string per file.
pub fn summarize<K: Ord>(files: impl IntoIterator<Item = (K, FileCounts)>, show: impl Fn(&K) -> String) -> Summary {
    let mut summary = Summary::default();
    let mut listed: Vec<(K, usize)> = Vec::new();
    for (key, counts) in files.into_iter().filter(|(_, c)| c.threads > 0) {
        summary.total_threads += counts.threads;
        summary.total_comments += counts.comments;
        summary.orphaned += counts.orphaned;
        summary.file_count += 1;
        listed.push((key, counts.threads));
    }
    let order = |a: &(K, usize), b: &(K, usize)| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0));
    if listed.len() > SUMMARY_FILES_LISTED {
        listed.select_nth_unstable_by(SUMMARY_FILES_LISTED - 1, order);
        listed.truncate(SUMMARY_FILES_LISTED);
    }
    listed.sort_by(order);
    summary.unlisted_threads = summary.total_threads - listed.iter().map(|(_, n)| n).sum::<usize>();
    summary.files = listed.into_iter().map(|(key, n)| (show(&key), n)).collect();
    summary
}

/// Orders threads as seed 002 lists them: by file path, then line.
pub fn sort_listing(threads: &mut [Thread]) {
    threads.sort_by(listing_order);
}

/// The order threads are listed in: by file, then line, then age.
pub fn listing_order(a: &Thread, b: &Thread) -> std::cmp::Ordering {
    a.path.cmp(&b.path).then(a.span.start_line.cmp(&b.span.start_line)).then(a.created_at.cmp(&b.created_at))
}

/// Which part of a listing to answer: `limit` threads (all when `None`)
/// after the first `skip`, stopping before the thread that would take the
/// page past `bytes` of JSON (see [`listed_bytes`]); a page holds at least
/// one thread, so a listing read page by page always ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub skip: usize,
    pub limit: Option<usize>,
    pub bytes: Option<usize>,
}

impl Page {
    /// The whole listing.
    pub const ALL: Page = Page { skip: 0, limit: None, bytes: None };

    /// `limit` threads after `skip`, within [`crate::limits::PAGE_BYTES`].
    pub fn bounded(skip: usize, limit: Option<usize>) -> Page {
        Page { skip, limit, bytes: Some(crate::limits::PAGE_BYTES) }
    }

    /// The threads of `listing` this page holds, in order.
    pub fn take<'a, T: std::borrow::Borrow<Thread> + 'a>(self, listing: impl IntoIterator<Item = T>) -> Vec<T> {
        let mut used = 0usize;
        let mut page = Vec::new();
        for thread in listing.into_iter().skip(self.skip).take(self.limit.unwrap_or(usize::MAX)) {
            if let Some(budget) = self.bytes {
                used = used.saturating_add(listed_bytes(thread.borrow()));
                if used > budget && !page.is_empty() {
                    break;
                }
            }
            page.push(thread);
        }
        page
    }
}

/// About how many bytes of JSON a thread takes in a listing (its comments as
/// listings clip them, its quotes, and room for its other fields): what a
/// page's byte budget counts.
pub fn listed_bytes(thread: &Thread) -> usize {
    use crate::limits::{clip, json_len};
    const FIELDS: usize = 1024;
    const PER_COMMENT: usize = 160;
    let comments: usize =
        thread.comments.iter().map(|c| json_len(&clip(&c.body)) + json_len(&c.author) + PER_COMMENT).sum();
    let fix = thread.finding.as_ref().and_then(|f| f.suggested_fix.as_deref()).map_or(0, |fix| json_len(&clip(fix)));
    FIELDS
        + comments
        + fix
        + json_len(&thread.anchor.quote)
        + json_len(&thread.original_quote)
        + 2 * json_len(&thread.path)
        + 2 * json_len(&thread.workspace.to_string_lossy())
}

/// Whether a thread id has the UUID shape Parley gives them.
pub fn is_thread_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// A new thread id.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Whether an open thread waits on `person`'s answer: someone else wrote
/// last (an agent, a reviewer). A finding nobody has answered yet waits on
/// the agent, not on the person.
pub fn waits_on(thread: &Thread, person: &str) -> bool {
    let fresh_finding = thread.finding.is_some() && thread.comments.len() == 1;
    !thread.resolved && !fresh_finding && thread.comments.last().is_some_and(|c| c.author != person)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn thread(path: &str, line: u32, state: ThreadState, comments: usize) -> Thread {
        Thread {
            id: new_id(),
            workspace: Path::new("/ws").into(),
            path: path.into(),
            anchor: anchor::capture("x", 0..1),
            whole_lines: false,
            anchored_against: "".into(),
            checked_against: "".into(),
            span: Span { start_line: line, end_line: line, ..Span::default() },
            state,
            original_quote: "x".into(),
            comments: (0..comments)
                .map(|i| Comment { id: i.to_string(), body: "b".into(), author: "a".into(), created_at: String::new() })
                .collect(),
            created_at: "".into(),
            updated_at: "".into(),
            resolved: false,
            finding: None,
            standing: Standing::default(),
        }
    }

    #[test]
    fn standing_follows_what_agents_did_last() {
        let mut standing = Standing::default();
        assert_eq!(standing.name(false), "open");
        assert!(standing.see(false, "claude", "t1"));
        assert_eq!(standing.name(false), "seen");
        // A second reader does not replace the first.
        assert!(!standing.see(false, "codex", "t2"));
        assert_eq!(standing.seen.as_ref().map(|m| m.by.as_str()), Some("claude"));
        standing.addressed = Some(Box::new(Mark { by: "claude".into(), at: "t3".into(), agent: true }));
        assert_eq!(standing.name(false), "addressed");
        assert_eq!(standing.name(true), "resolved");
        assert_eq!(standing.resolver(true), Some("human"));
        standing.resolved = standing.addressed.clone();
        assert_eq!(standing.resolver(true), Some("agent"));
        assert_eq!(standing.resolver(false), None);
        // A resolved thread is not marked seen.
        assert!(!Standing::default().see(true, "claude", "t"));
    }

    #[test]
    fn summary_counts_and_orders_files_by_thread_count() {
        let mut resolved = thread("gone.rs", 1, ThreadState::Anchored, 4);
        resolved.resolved = true;
        let threads = [
            thread("b.rs", 1, ThreadState::Anchored, 1),
            thread("a.rs", 3, ThreadState::Orphaned, 2),
            thread("b.rs", 9, ThreadState::Modified(0.8), 1),
            thread("c.rs", 1, ThreadState::Unreadable, 1),
            resolved,
        ];
        let mut by_file: BTreeMap<String, Vec<&Thread>> = BTreeMap::new();
        for thread in &threads {
            by_file.entry(thread.path.clone()).or_default().push(thread);
        }
        let summary = summarize(by_file.into_iter().map(|(path, ts)| (path, FileCounts::of(ts))), String::clone);
        assert_eq!(summary.total_threads, 4);
        assert_eq!(summary.total_comments, 5);
        assert_eq!(summary.orphaned, 2);
        assert_eq!(summary.file_count, 3);
        assert_eq!(summary.files, vec![("b.rs".into(), 2), ("a.rs".into(), 1), ("c.rs".into(), 1)]);
        assert_eq!(summary.unlisted_threads, 0);
        assert_eq!(summarize(Vec::<(String, FileCounts)>::new(), String::clone), Summary::default());
    }

    #[test]
    fn a_summary_lists_the_files_with_the_most_threads_and_counts_the_rest() {
        // File k has k % 7 + 1 threads: many files share each count.
        let files: Vec<(String, FileCounts)> = (0..300)
            .map(|k| (format!("f{k:03}.rs"), FileCounts { threads: k % 7 + 1, comments: 1, orphaned: 0 }))
            .collect();
        let all: usize = files.iter().map(|(_, c)| c.threads).sum();
        let mut expected: Vec<(String, usize)> = files.iter().map(|(p, c)| (p.clone(), c.threads)).collect();
        expected.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        expected.truncate(SUMMARY_FILES_LISTED);
        let summary = summarize(files, |path| format!("src/{path}"));
        assert_eq!(summary.file_count, 300);
        assert_eq!(summary.total_threads, all);
        let shown: Vec<(String, usize)> = expected.iter().map(|(p, n)| (format!("src/{p}"), *n)).collect();
        assert_eq!(summary.files, shown, "the most threads first, ties by path");
        let listed: usize = shown.iter().map(|(_, n)| n).sum();
        assert_eq!(summary.unlisted_threads, all - listed);
    }

    #[test]
    fn listing_is_ordered_by_path_then_line() {
        let mut threads = vec![
            thread("b.rs", 1, ThreadState::Anchored, 1),
            thread("a.rs", 7, ThreadState::Anchored, 1),
            thread("a.rs", 2, ThreadState::Anchored, 1),
        ];
        sort_listing(&mut threads);
        let order: Vec<(&str, u32)> = threads.iter().map(|t| (t.path.as_str(), t.span.start_line)).collect();
        assert_eq!(order, [("a.rs", 2), ("a.rs", 7), ("b.rs", 1)]);
    }

    #[test]
    fn thread_ids_are_uuids() {
        assert!(is_thread_id(&new_id()));
        assert!(!is_thread_id("a1b2"));
        assert!(!is_thread_id("zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"));
    }

    #[test]
    fn spans_count_columns_three_ways() {
        let text = "aé𝄞 x\nnext";
        let start = text.find('x').expect("x");
        let span = span_of(&LineIndex::new(text), start..text.len());
        assert_eq!((span.start_line, span.end_line), (0, 1));
        assert_eq!(span.start, Columns { bytes: 8, utf16: 5, chars: 4 });
        assert_eq!(span.end, Columns { bytes: 4, utf16: 4, chars: 4 });
    }

    #[test]
    fn a_rewritten_quote_is_modified_relative_to_the_original() {
        let old = "fn a() {}\nfn buggy(x: usize) -> usize {\n    x + 1\n}\n";
        let start = old.find("fn buggy").expect("present");
        let end = old.find("x + 1").expect("present") + "x + 1".len();
        let mut t = thread("a.rs", 1, ThreadState::Anchored, 1);
        t.anchor = anchor::capture(old, start..end);
        t.original_quote = t.anchor.quote.clone();
        t.anchored_against = "old".into();
        let new = "fn a() {}\nfn buggy(x: usize) -> usize {\n    x.saturating_add(1)\n}\n";
        assert_eq!(
            recheck(&mut t, &Reanchorer::new(Some(old), new), &LineIndex::new(new), &"new".into(), "t"),
            Change::Moved
        );
        assert!(matches!(t.state, ThreadState::Modified(s) if s > 0.4 && s < 1.0), "{:?}", t.state);
        assert_eq!(&*t.anchored_against, "new");
        // Checking the same text again changes nothing and stays modified.
        assert_eq!(
            recheck(&mut t, &Reanchorer::new(Some(new), new), &LineIndex::new(new), &"new".into(), "t"),
            Change::None
        );
        assert!(matches!(t.state, ThreadState::Modified(_)));
        // Restoring the original text brings it back to anchored.
        recheck(&mut t, &Reanchorer::new(Some(new), old), &LineIndex::new(old), &"old".into(), "t");
        assert_eq!(t.state, ThreadState::Anchored);
    }

    /// A whole-line thread made on the marked lines of `before`, with
    /// `suggestion` as its suggested change, rechecked against `after` with
    /// and without a snapshot: its state, whether it is addressed as applied,
    /// and the text it is on.
    fn recheck_suggestion(before: &str, suggestion: Option<&str>, after: &str) -> Vec<(&'static str, bool, String)> {
        let start = before.find('«').expect("«");
        let old = before.replacen('«', "", 1);
        let end = old.find('»').expect("»");
        let old = old.replacen('»', "", 1);
        [true, false]
            .into_iter()
            .map(|snapshot| {
                let mut t = thread("a.py", 0, ThreadState::Anchored, 1);
                t.anchor = anchor::capture(&old, start..end);
                t.whole_lines = anchor::covers_whole_lines(&old, &t.anchor.range);
                t.original_quote = t.anchor.quote.clone();
                t.finding = suggestion.map(|fix| {
                    Box::new(Finding {
                        review_id: "r".into(),
                        round: 1,
                        severity: "major".into(),
                        category: "review".into(),
                        suggested_fix: Some(fix.into()),
                    })
                });
                let reanchorer = Reanchorer::new(snapshot.then_some(old.as_str()), after);
                recheck(&mut t, &reanchorer, &LineIndex::new(after), &"new".into(), "t9");
                let applied = t.standing.addressed.as_ref().is_some_and(|m| m.by == APPLIED && m.at == "t9");
                (t.state.name(), applied, t.anchor.quote.to_string())
            })
            .collect()
    }

    #[test]
    fn whole_line_threads_follow_their_line_and_applied_suggestions_address_them() {
        /// A name, the text before with the thread's lines marked, the
        /// suggestion, the text after, and the state, addressed and quote.
        type Case<'a> = (&'a str, &'a str, Option<&'a str>, &'a str, (&'a str, bool, &'a str));
        let cases: &[Case] = &[
            (
                "the line grew: modified, quoting it as it is now",
                "def expired(t, ttl):\n«    return now() - t > ttl»\n",
                None,
                "def expired(t, ttl):\n    return now() - t > ttl_seconds\n",
                ("modified", false, "    return now() - t > ttl_seconds"),
            ),
            (
                "a suggestion applied word for word, too different to be found as an edit",
                "def total(items, percent):\n    total = sum(items)\n«    return total * (100 - percent) / 100»\n\n\ndef tax():\n    pass\n",
                Some("    discounted = total * (100 - Decimal(percent)) / 100\n    return discounted.quantize(CENT)"),
                "def total(items, percent):\n    total = sum(items)\n    discounted = total * (100 - Decimal(percent)) / 100\n    return discounted.quantize(CENT)\n\n\ndef tax():\n    pass\n",
                (
                    "modified",
                    true,
                    "    discounted = total * (100 - Decimal(percent)) / 100\n    return discounted.quantize(CENT)",
                ),
            ),
            (
                "a suggestion applied with other indentation",
                "class Cart:\n    def add(self, x):\n«        self.items.append(x)»\n",
                Some("if x is not None:\n    self.items.append(x)"),
                "class Cart:\n    def add(self, x):\n        if x is not None:\n            self.items.append(x)\n",
                ("modified", true, "        if x is not None:\n            self.items.append(x)"),
            ),
            (
                "the line changed, but not to the suggestion",
                "fn a() {\n«    x + 1»\n}\n",
                Some("    x.saturating_add(1)"),
                "fn a() {\n    x + 2\n}\n",
                ("modified", false, "    x + 2"),
            ),
            (
                "an edit elsewhere: the thread stays, not applied",
                "fn a() {\n«    x + 1»\n}\n",
                Some("    x.saturating_add(1)"),
                "// top\nfn a() {\n    x + 1\n}\n",
                ("anchored", false, "    x + 1"),
            ),
        ];
        for (name, before, suggestion, after, want) in cases {
            for (got, snapshot) in recheck_suggestion(before, *suggestion, after).into_iter().zip(["with", "without"]) {
                let want = (want.0, want.1, want.2.to_owned());
                // Without the snapshot a thread that moved lines is found moved.
                let got = if snapshot == "without" && got.0 == "moved" { ("anchored", got.1, got.2) } else { got };
                assert_eq!(got, want, "{name} ({snapshot} a snapshot)");
            }
        }
    }

    #[test]
    fn text_that_already_stood_there_is_not_an_applied_suggestion() {
        // The suggested line was already below the thread's; the thread's own
        // line is deleted: orphaned, not addressed.
        let before = "fn a() {\n«    x + 1»\n    x.saturating_add(1)\n}\n";
        let after = "fn a() {\n    x.saturating_add(1)\n}\n";
        let got = recheck_suggestion(before, Some("    x.saturating_add(1)"), after);
        assert!(!got[0].1, "{got:?}");
    }
}
