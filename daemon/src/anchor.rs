//! Keeping a feedback thread on its text while the file changes: capture an
//! anchor from a range, and re-anchor it against new text. Pure functions.
//!
//! Re-anchoring tries the cheapest evidence first and stops at the first hit
//! (DESIGN §5, notes §8): the same place; the place a line diff of the old
//! text maps it to; the exact quote elsewhere; the remembered context
//! bracketing what is left of it; a fuzzy match of whole lines near where it
//! was; an approximate substring search over the whole file. When all fail
//! the thread is orphaned, never dropped: re-anchoring the same anchor later
//! brings it back if its text returns.
//!
//! No IO, no async, no global state. The one effect is reading the clock, to
//! give the line diff a deadline.

mod fuzzy;
mod line_map;
mod lines;
mod similarity;
#[cfg(test)]
mod tests;
mod whole_lines;

pub use lines::{line_col, line_range, offset_of};
pub use whole_lines::{covers as covers_whole_lines, find_block, same_lines};

use std::cell::{Cell, OnceCell};
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use memchr::memmem;

use fuzzy::Fuzzy;
use line_map::{LineMap, Mapped};
use similarity::{similarity, similarity_at_least};

// Every threshold of the algorithm, in one place.

/// Context kept on each side of a range: this many whole lines...
const CONTEXT_LINES: usize = 2;
/// ...extended line by line while shorter than this, since two lines like
/// `}` and an empty one say nothing about where the range was...
const CONTEXT_MIN_BYTES: usize = 64;
/// ...and cut to this, so one long line cannot bloat every thread.
const CONTEXT_MAX_BYTES: usize = 200;
/// Past this the line diff settles for a coarser answer.
const DIFF_TIMEOUT: Duration = Duration::from_millis(50);
/// Candidates nearest the hint that are scored; in repetitive code a quote
/// can occur thousands of times, and scoring each costs a few edit distances.
const MAX_CANDIDATES: usize = 64;
/// Weights of quote similarity, context similarity and closeness to the hint
/// when ranking candidates (Hypothesis's 50/20/2): context decides between
/// copies, closeness only between copies with the same context.
const QUOTE_WEIGHT: f32 = 50.0;
const CONTEXT_WEIGHT: f32 = 20.0;
const PROXIMITY_WEIGHT: f32 = 2.0;
/// The bracket uses at most this much of the context next to the range...
const BRACKET_KEY_BYTES: usize = 32;
/// ...and its two ends may be at most `SPAN_PER_QUOTE_BYTE · |quote| + SLACK`
/// bytes apart.
const BRACKET_SPAN_PER_QUOTE_BYTE: usize = 3;
const BRACKET_SPAN_SLACK: usize = 64;
/// Bracket pairs nearest the hint whose contents are compared to the quote.
const BRACKET_MAX_PAIRS: usize = 16;
/// Below this the text inside an intact bracket is a rewrite, not an edit.
const BRACKET_MIN_SIMILARITY: f32 = 0.4;
/// The fuzzy search of whole lines looks this many lines either side of the
/// hint, fewer for long quotes so that `radius × |quote|` stays within
/// `LOCAL_WORK_BYTES` (each window costs about `|quote|²/4` cell updates)...
const LOCAL_RADIUS_LINES: usize = 200;
const LOCAL_MIN_RADIUS_LINES: usize = 20;
const LOCAL_WORK_BYTES: usize = 40_000;
/// ...and not at all for quotes longer than this; the whole-file search
/// looks for those by their head and tail.
const LOCAL_MAX_QUOTE_BYTES: usize = 16 * 1024;
/// A fuzzy match is taken only if no candidate at another place scores
/// within this of it: in repetitive code the text that was there can
/// be gone while a dozen neighbours stay 98% alike, which no similarity
/// floor can tell apart.
const FUZZY_AMBIGUITY_MARGIN: f32 = 0.02;
/// Exact edit distance costs about length × distance; past this length
/// similarity is estimated from a line diff instead.
const EDIT_DISTANCE_MAX_BYTES: usize = 1024;
/// Fuzzy matches must be at least this similar to the quote, whatever their
/// context: without a floor of its own, a near-identical neighbouring line
/// wins after the anchored text is deleted.
const QUOTE_SIMILARITY_FLOOR: f32 = 0.75;
/// The whole-file search allows `|quote| / ERRORS_DIVISOR` edits.
const GLOBAL_ERRORS_DIVISOR: usize = 4;
/// Longer quotes are searched by their head and tail: past this length
/// triple_accel leaves its 8-bit SIMD kernels (length + edits ≤ 255) and the
/// search becomes too slow for a whole file.
const GLOBAL_MAX_NEEDLE: usize = 192;
const GLOBAL_PIECE: usize = 128;
/// Head-and-tail candidates compared to a long quote; each comparison may
/// cost a line diff.
const GLOBAL_MAX_LONG_CANDIDATES: usize = 16;
/// The work one [`Reanchorer`] may do searching its text, in bytes scanned
/// by an exact search (memmem runs at gigabytes a second, so this is tens of
/// milliseconds). Steps 1 and 2 are free; every later step is charged what
/// it scans, and an anchor whose next step cannot be paid for is left
/// [`AnchorState::Unsearched`]. Without a bound, a shuffled file of tens of
/// megabytes took seconds per thread in the whole-file fuzzy search.
pub const SEARCH_BUDGET_BYTES: usize = 512 * 1024 * 1024;
/// How many bytes of exact search one byte of approximate search costs:
/// triple_accel's SIMD kernels scan a few hundred megabytes a second.
const APPROXIMATE_COST: usize = 32;

/// What a thread remembers of the text it was made on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// Byte range in the text it was last anchored against.
    pub range: Range<usize>,
    /// The anchored text itself; shared with the thread's original quote
    /// while they are the same text.
    pub quote: Arc<str>,
    /// The text around the range. `None` while it is held only in the
    /// store: the state owner keeps its threads without it, as only a
    /// re-anchoring that does not find the quote in place needs it (about
    /// 250 bytes a thread, 24 MiB for 100,000 threads).
    pub context: Option<Box<Context>>,
}

/// Up to about two lines (at most ~200 bytes) of text before and after an
/// anchor's range. ([`capture`] takes more lines while two come to under 64
/// bytes.)
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Context {
    pub prefix: String,
    pub suffix: String,
}

impl Anchor {
    /// An anchor that holds its context.
    pub fn new(range: Range<usize>, quote: String, prefix: String, suffix: String) -> Anchor {
        Anchor { range, quote: quote.into(), context: Some(Box::new(Context { prefix, suffix })) }
    }

    /// The text before the range, empty while the store holds it.
    pub fn prefix(&self) -> &str {
        self.context.as_ref().map_or("", |c| &c.prefix)
    }

    /// The text after the range, empty while the store holds it.
    pub fn suffix(&self) -> &str {
        self.context.as_ref().map_or("", |c| &c.suffix)
    }

    /// Whether the context is held only in the store.
    pub fn contexts_in_store(&self) -> bool {
        self.context.is_none()
    }

    /// Lets go of the context, which the store keeps.
    pub fn leave_contexts_in_store(&mut self) {
        self.context = None;
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnchorState {
    /// Found at the same place, or at the place a line diff maps it to.
    Anchored,
    /// The exact quote found elsewhere.
    Moved,
    /// Text similar to the quote found; `similarity` in 0..=1.
    Modified { similarity: f32 },
    /// The text is gone. The thread is kept; it comes back if the text does.
    Orphaned,
    /// Not at its old place, and the search for it elsewhere ran out of its
    /// budget (the text is too large to search for every anchor): whether it
    /// moved, changed or went is not known.
    Unsearched,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reanchored {
    pub state: AnchorState,
    /// The new byte range; `None` when orphaned.
    pub range: Option<Range<usize>>,
    /// 1.0 for anchored/moved, the similarity for modified, 0.0 for orphaned.
    pub confidence: f32,
}

impl Reanchored {
    fn anchored(range: Range<usize>) -> Self {
        Reanchored { state: AnchorState::Anchored, range: Some(range), confidence: 1.0 }
    }

    fn moved(range: Range<usize>) -> Self {
        Reanchored { state: AnchorState::Moved, range: Some(range), confidence: 1.0 }
    }

    fn modified(found: Found) -> Self {
        let similarity = found.similarity;
        Reanchored { state: AnchorState::Modified { similarity }, range: Some(found.range), confidence: similarity }
    }

    fn orphaned() -> Self {
        Reanchored { state: AnchorState::Orphaned, range: None, confidence: 0.0 }
    }

    fn unsearched() -> Self {
        Reanchored { state: AnchorState::Unsearched, range: None, confidence: 0.0 }
    }
}

/// Captures an anchor for `range` (byte offsets on char boundaries) in `text`.
///
/// A range past the end is clamped to it and one off a char boundary is
/// widened to the enclosing chars, rather than panicking on a stale offset.
/// The context is two lines each side, more while shorter than 64 bytes, at
/// most 200 bytes.
pub fn capture(text: &str, range: Range<usize>) -> Anchor {
    let start = floor_boundary(text, range.start);
    let end = ceil_boundary(text, range.end.max(start));
    let before = ceil_boundary(text, context_start(text.as_bytes(), start));
    let after = floor_boundary(text, context_end(text.as_bytes(), end));
    Anchor::new(start..end, text[start..end].to_owned(), text[before..start].to_owned(), text[end..after].to_owned())
}

/// Finds `anchor` in `new_text`. `old_text` is the text the anchor's range refers to
/// (a snapshot), when known: it enables the line-diff step; without it the old range
/// is only a hint.
///
/// Diffs `old_text` against `new_text` for this one anchor; to re-anchor
/// several anchors of one file, use [`Reanchorer`], which diffs once.
pub fn reanchor(anchor: &Anchor, old_text: Option<&str>, new_text: &str) -> Reanchored {
    Reanchorer::new(old_text, new_text).reanchor(anchor)
}

/// Re-anchors any number of anchors made on one old text against one new
/// text, computing the line diff (and the new text's line starts) at most
/// once, and only when some anchor needs it. Its searches share one budget
/// ([`SEARCH_BUDGET_BYTES`] unless [`Reanchorer::with_budget`] says
/// otherwise), so the work for a whole file is bounded however many anchors
/// it has and however large it is.
#[derive(Debug)]
pub struct Reanchorer<'a> {
    old_text: Option<&'a str>,
    new_text: &'a str,
    map: OnceCell<Option<LineMap>>,
    line_starts: OnceCell<Vec<usize>>,
    /// Bytes of exact search still allowed.
    budget: Cell<usize>,
    /// Which steps [`Reanchorer::reanchor`] runs.
    pass: Cell<Pass>,
}

/// Which steps of re-anchoring run, so that a caller with many anchors can
/// spend a limited budget on the cheap exact searches of all of them before
/// the costly fuzzy searches of any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Every step (the default).
    All,
    /// Steps 1 to 3 (same place, line diff, exact quote); an anchor they do
    /// not find is left [`AnchorState::Unsearched`].
    Exact,
    /// Steps 1, 2 and 4 to 6: for anchors an [`Pass::Exact`] pass of the
    /// same re-anchorer did not find, without searching for the exact quote
    /// again.
    Rest,
}

/// A candidate place for an anchor: its range, its similarity to the quote,
/// and the score it is ranked by.
#[derive(Debug, Clone)]
struct Found {
    range: Range<usize>,
    similarity: f32,
    score: f32,
}

/// What the prefix or the suffix pins down at one end of a bracket.
#[derive(Debug, Clone, Copy)]
enum Edge<'k> {
    /// The context holds nothing but whitespace: the range was at the start
    /// (or end) of the text, as far as we can tell.
    TextEnd,
    /// This text must come right before (or after) the range.
    Key(&'k str),
}

/// What the bracket step concluded.
#[derive(Debug)]
enum Bracketed {
    /// Text similar to the quote sits between the context's two ends.
    Found(Found),
    /// The context is intact but what it held is gone or rewritten.
    Gone,
}

impl<'a> Reanchorer<'a> {
    pub fn new(old_text: Option<&'a str>, new_text: &'a str) -> Self {
        Reanchorer::with_budget(old_text, new_text, SEARCH_BUDGET_BYTES)
    }

    /// A re-anchorer whose searches may scan `budget` bytes in all.
    pub fn with_budget(old_text: Option<&'a str>, new_text: &'a str, budget: usize) -> Self {
        Reanchorer {
            old_text,
            new_text,
            map: OnceCell::new(),
            line_starts: OnceCell::new(),
            budget: Cell::new(budget),
            pass: Cell::new(Pass::All),
        }
    }

    /// Runs only the steps of `pass` from now on.
    pub fn set_pass(&self, pass: Pass) {
        self.pass.set(pass);
    }

    /// What is left of the search budget, to hand on to the next re-anchorer
    /// of the same file.
    pub fn budget_left(&self) -> usize {
        self.budget.get()
    }

    /// Replaces what is left of the search budget: re-anchorers of one file
    /// (one per old text) pass a shared budget between them.
    pub fn set_budget(&self, budget: usize) {
        self.budget.set(budget);
    }

    /// Takes `cost` from the budget; false, and nothing taken, when it is
    /// not there.
    fn charge(&self, cost: usize) -> bool {
        let left = self.budget.get();
        let paid = left >= cost;
        if paid {
            self.budget.set(left - cost);
        }
        paid
    }

    /// Whether [`Reanchorer::reanchor`] finds `anchor`'s quote where it was,
    /// or where the line diff carries it: the steps that need neither the
    /// context nor any search.
    pub fn in_place(&self, anchor: &Anchor) -> bool {
        let quote: &str = &anchor.quote;
        if quote.is_empty() {
            return false;
        }
        if self.new_text.get(anchor.range.clone()) == Some(quote) {
            return true;
        }
        matches!(self.map_offset(anchor.range.start),
            Some(Mapped::Exact(at)) if self.new_text.get(at..at + quote.len()) == Some(quote))
    }

    /// [`Reanchorer::reanchor`] for an anchor on whole lines: what is found
    /// is widened to the whole lines it is on, so a line that grew, or was
    /// indented, shows its new text as modified (with its similarity to the
    /// quote) rather than the part of it that still matches as anchored.
    pub fn reanchor_lines(&self, anchor: &Anchor) -> Reanchored {
        let found = self.reanchor(anchor);
        let Some(range) = found.range.clone() else { return found };
        let wide = whole_lines::widen(self.new_text, range, anchor.quote.ends_with('\n'));
        let text = &self.new_text[wide.clone()];
        if text == &*anchor.quote {
            return Reanchored { range: Some(wide), ..found };
        }
        let similarity = similarity(anchor.quote.as_bytes(), text.as_bytes());
        Reanchored { state: AnchorState::Modified { similarity }, range: Some(wide), confidence: similarity }
    }

    /// Where `anchor` was, in the new text: where the line diff carries its
    /// start, or its old start when there is no diff (on a char boundary).
    pub fn place(&self, anchor: &Anchor) -> usize {
        let at = match self.map_offset(anchor.range.start) {
            Some(Mapped::Exact(at) | Mapped::Near(at)) => at,
            None => anchor.range.start,
        };
        floor_boundary(self.new_text, at)
    }

    /// The text the anchors are looked for in.
    pub fn new_text(&self) -> &'a str {
        self.new_text
    }

    /// The text the anchors were made on, when known.
    pub fn old_text(&self) -> Option<&'a str> {
        self.old_text
    }

    /// Finds `anchor`, which must refer to the `old_text` given to [`Reanchorer::new`]
    /// when one was; see [`reanchor`].
    pub fn reanchor(&self, anchor: &Anchor) -> Reanchored {
        let new = self.new_text;
        let quote: &str = &anchor.quote;
        if quote.is_empty() {
            return self.reanchor_empty(anchor);
        }
        // 1. Same place.
        if new.get(anchor.range.clone()) == Some(quote) {
            return Reanchored::anchored(anchor.range.clone());
        }
        // 2. Where the line diff carries the start; from here on the best
        // guess of where the text should be is `hint`.
        let mut hint = anchor.range.start;
        match self.map_offset(anchor.range.start) {
            Some(Mapped::Exact(at)) => {
                let range = at..at + quote.len();
                if new.get(range.clone()) == Some(quote) {
                    return Reanchored::anchored(range);
                }
                hint = at;
            }
            Some(Mapped::Near(at)) => hint = at,
            None => {}
        }
        let hint = floor_boundary(new, hint);
        // Steps 3 and 4 each scan the text once or twice; the fuzzy steps
        // look near the hint, then search the whole text approximately.
        let scan = new.len();
        // 3. The exact quote elsewhere.
        let pass = self.pass.get();
        if pass != Pass::Rest {
            if !self.charge(scan) {
                return Reanchored::unsearched();
            }
            if let Some(at) = self.exact_elsewhere(anchor, hint) {
                return Reanchored::moved(at..at + quote.len());
            }
        }
        if pass == Pass::Exact {
            return Reanchored::unsearched();
        }
        // 4. The context bracket: it can tell deleted from edited text.
        if !self.charge(2 * scan) {
            return Reanchored::unsearched();
        }
        match self.bracket(anchor, hint) {
            Some(Bracketed::Found(found)) => return Reanchored::modified(found),
            Some(Bracketed::Gone) => return Reanchored::orphaned(),
            None => {}
        }
        // 5 and 6. Fuzzy matches, near the hint first, then anywhere. Several
        // equally good places near the hint mean the text is not distinctive
        // enough to follow: searching further would find the same ones.
        if !self.charge(APPROXIMATE_COST * scan.min(2 * LOCAL_WORK_BYTES)) {
            return Reanchored::unsearched();
        }
        let fuzzy = match self.near_fuzzy(anchor, hint) {
            Fuzzy::Nothing if !self.charge(APPROXIMATE_COST * scan) => return Reanchored::unsearched(),
            Fuzzy::Nothing => self.global_fuzzy(anchor, hint),
            near => near,
        };
        match fuzzy {
            Fuzzy::Found(found) => Reanchored::modified(found),
            Fuzzy::Ambiguous | Fuzzy::Nothing => Reanchored::orphaned(),
        }
    }

    /// A zero-width anchor (a cursor position) has no text to look for: it
    /// follows the line diff, or stays put while its context is intact on
    /// both sides, or moves to where all of its context is.
    fn reanchor_empty(&self, anchor: &Anchor) -> Reanchored {
        let new = self.new_text;
        let mut at = anchor.range.start;
        match self.map_offset(at) {
            Some(Mapped::Exact(to)) if to <= new.len() && new.is_char_boundary(to) => {
                return Reanchored::anchored(to..to);
            }
            Some(Mapped::Exact(to) | Mapped::Near(to)) => at = to,
            None => {}
        }
        let bytes = new.as_bytes();
        let (prefix, suffix) = (anchor.prefix().as_bytes(), anchor.suffix().as_bytes());
        if at <= new.len()
            && new.is_char_boundary(at)
            && bytes[..at].ends_with(prefix)
            && bytes[at..].starts_with(suffix)
        {
            return Reanchored::anchored(at..at);
        }
        if !self.charge(new.len()) {
            return Reanchored::unsearched();
        }
        let context = [prefix, suffix].concat();
        let hits = nearest(occurrences(bytes, &context), at.saturating_sub(prefix.len()), 1);
        match hits.first() {
            Some(&start) if !context.is_empty() => {
                let to = start + prefix.len();
                Reanchored::moved(to..to)
            }
            _ => Reanchored::orphaned(),
        }
    }

    fn map_offset(&self, offset: usize) -> Option<Mapped> {
        let map = self.map.get_or_init(|| self.old_text.map(|old| LineMap::new(old, self.new_text)));
        map.as_ref().map(|map| map.map(offset))
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(memchr::memchr_iter(b'\n', self.new_text.as_bytes()).map(|i| i + 1));
            starts
        })
    }

    /// Step 3: the exact quote elsewhere; between several copies, the one
    /// whose surroundings look most like the remembered context, so that a
    /// copy pasted elsewhere does not steal the thread from the original.
    fn exact_elsewhere(&self, anchor: &Anchor, hint: usize) -> Option<usize> {
        let quote = anchor.quote.as_bytes();
        let hits = nearest(occurrences(self.new_text.as_bytes(), quote), hint, MAX_CANDIDATES);
        if hits.len() <= 1 {
            return hits.first().copied();
        }
        let score = |at: usize| {
            let range = at..at + quote.len();
            CONTEXT_WEIGHT * self.context_similarity(anchor, &range)
                + PROXIMITY_WEIGHT * proximity(at, hint, self.new_text.len())
        };
        best_by(hits.into_iter(), score)
    }

    /// Step 4: the end of the prefix and the start of the suffix, in order
    /// and close together. `None` when there is no such pair (or the context
    /// is no use), so later steps run.
    fn bracket(&self, anchor: &Anchor, hint: usize) -> Option<Bracketed> {
        let new = self.new_text;
        let bytes = new.as_bytes();
        let (left, right) = (left_edge(anchor.prefix()), right_edge(anchor.suffix()));
        let span = BRACKET_SPAN_PER_QUOTE_BYTE * anchor.quote.len() + BRACKET_SPAN_SLACK;
        let lefts = match left {
            Edge::TextEnd => vec![0],
            Edge::Key(key) => {
                nearest(occurrences(bytes, key.as_bytes()).map(|at| at + key.len()), hint, MAX_CANDIDATES)
            }
        };
        let mut pairs: Vec<Range<usize>> = lefts
            .into_iter()
            .filter_map(|start| {
                let end = match right {
                    Edge::TextEnd => (bytes.len() - start <= span).then_some(bytes.len())?,
                    Edge::Key(key) => {
                        let window = &bytes[start..bytes.len().min(start + span + key.len())];
                        start + memmem::find(window, key.as_bytes())?
                    }
                };
                Some(start..end)
            })
            .collect();
        if pairs.is_empty() {
            return None;
        }
        pairs.sort_by_key(|pair| pair.start.abs_diff(hint));
        pairs.truncate(BRACKET_MAX_PAIRS);

        let quote = anchor.quote.trim();
        let mut best: Option<Found> = None;
        for pair in pairs {
            // Trimmed, because deleting whole lines leaves one of the two
            // newlines around them behind.
            let core = trim_range(new, pair);
            if core.is_empty() {
                continue;
            }
            let Some(similarity) = similarity_at_least(quote.as_bytes(), &bytes[core.clone()], BRACKET_MIN_SIMILARITY)
            else {
                continue;
            };
            // The pairs are nearest first, so ties go to the nearest.
            if best.as_ref().is_none_or(|b| similarity > b.similarity) {
                best = Some(Found { range: fit(new, core, &anchor.quote), similarity, score: similarity });
            }
        }
        Some(best.map_or(Bracketed::Gone, Bracketed::Found))
    }

    /// The ranking of fuzzy candidates: mostly the quote, then the context,
    /// then closeness, scaled to 0..=1.
    fn score(&self, anchor: &Anchor, range: &Range<usize>, similarity: f32, near: f32) -> f32 {
        let context = self.context_similarity(anchor, range);
        (QUOTE_WEIGHT * similarity + CONTEXT_WEIGHT * context + PROXIMITY_WEIGHT * near)
            / (QUOTE_WEIGHT + CONTEXT_WEIGHT + PROXIMITY_WEIGHT)
    }

    /// How much the text around `range` looks like the remembered context.
    fn context_similarity(&self, anchor: &Anchor, range: &Range<usize>) -> f32 {
        let bytes = self.new_text.as_bytes();
        let (prefix, suffix) = (anchor.prefix(), anchor.suffix());
        let before = &bytes[range.start.saturating_sub(prefix.len())..range.start];
        let after = &bytes[range.end..bytes.len().min(range.end + suffix.len())];
        (similarity(prefix.as_bytes(), before) + similarity(suffix.as_bytes(), after)) / 2.0
    }
}

/// The bracket's left end: the last few bytes of the prefix, trimmed, since
/// whitespace next to the range is the first thing edits change.
fn left_edge(prefix: &str) -> Edge<'_> {
    let trimmed = prefix.trim_end();
    let key = trimmed[ceil_boundary(trimmed, trimmed.len().saturating_sub(BRACKET_KEY_BYTES))..].trim_start();
    if key.is_empty() { Edge::TextEnd } else { Edge::Key(key) }
}

/// The bracket's right end: the first few bytes of the suffix, trimmed.
fn right_edge(suffix: &str) -> Edge<'_> {
    let trimmed = suffix.trim_start();
    let key = trimmed[..floor_boundary(trimmed, BRACKET_KEY_BYTES)].trim_end();
    if key.is_empty() { Edge::TextEnd } else { Edge::Key(key) }
}

/// Every place `needle` occurs in `haystack`, ascending, overlapping ones
/// included (memmem's own iterator skips those: `"  "` in `"   "` must be
/// found at both places, or the one the anchor was at can be missed). A
/// valid UTF-8 needle only matches at char boundaries.
fn occurrences<'h>(haystack: &'h [u8], needle: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
    let finder = memmem::Finder::new(needle);
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + finder.find(haystack.get(from..)?)?;
        from = at + 1;
        Some(at)
    })
}

/// Up to `limit` of `positions` (ascending) nearest `hint`, ascending.
/// Stops reading once positions only get farther, so a quote with a
/// thousand copies costs little when the nearest ones come early.
fn nearest(positions: impl Iterator<Item = usize>, hint: usize, limit: usize) -> Vec<usize> {
    let mut kept: VecDeque<usize> = VecDeque::with_capacity(limit);
    for at in positions {
        if kept.len() < limit {
            kept.push_back(at);
            continue;
        }
        let Some(&farthest) = kept.front() else { break };
        if at.abs_diff(hint) < farthest.abs_diff(hint) {
            kept.pop_front();
            kept.push_back(at);
        } else if at >= hint {
            break;
        }
    }
    kept.into()
}

/// The item with the highest score; the first one on ties.
fn best_by(items: impl Iterator<Item = usize>, score: impl Fn(usize) -> f32) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for item in items {
        let s = score(item);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((item, s));
        }
    }
    best.map(|(item, _)| item)
}

/// 1.0 at the hint, falling to 0.0 at `scale` bytes from it.
fn proximity(at: usize, hint: usize, scale: usize) -> f32 {
    1.0 - (at.abs_diff(hint) as f32 / scale.max(1) as f32).min(1.0)
}

/// `range` (on char boundaries) without whitespace at either end; empty at
/// its start when it holds only whitespace.
fn trim_range(text: &str, range: Range<usize>) -> Range<usize> {
    let inner = text[range.clone()].trim_start();
    let start = range.end - inner.len();
    start..start + inner.trim_end().len()
}

/// Gives a trimmed match back as much whitespace at each end as the quote
/// had there (its indentation, its final newline), without crossing a line
/// break the quote did not have.
fn fit(text: &str, core: Range<usize>, quote: &str) -> Range<usize> {
    let lead = &quote[..quote.len() - quote.trim_start().len()];
    let trail = &quote[quote.trim_end().len()..];
    let mut start = core.start;
    for c in text[..core.start].chars().rev() {
        let grown = core.start - start + c.len_utf8();
        if !c.is_whitespace() || grown > lead.len() || (c == '\n' && !lead.contains('\n')) {
            break;
        }
        start -= c.len_utf8();
    }
    let mut end = core.end;
    for c in text[core.end..].chars() {
        let grown = end - core.end + c.len_utf8();
        if !c.is_whitespace() || grown > trail.len() || (c == '\n' && !trail.contains('\n')) {
            break;
        }
        end += c.len_utf8();
    }
    start..end
}

/// Where the prefix starts: `CONTEXT_LINES` whole lines before the line of
/// `start`, more while shorter than `CONTEXT_MIN_BYTES`, within
/// `CONTEXT_MAX_BYTES` (possibly off a char boundary).
fn context_start(text: &[u8], start: usize) -> usize {
    let floor = start.saturating_sub(CONTEXT_MAX_BYTES);
    for (passed, newline) in memchr::memrchr_iter(b'\n', &text[floor..start]).enumerate() {
        let cut = floor + newline + 1;
        if passed >= CONTEXT_LINES && start - cut >= CONTEXT_MIN_BYTES {
            return cut;
        }
    }
    floor
}

/// Where the suffix ends: the rest of the line of `end` and `CONTEXT_LINES`
/// more, more while shorter than `CONTEXT_MIN_BYTES`, within
/// `CONTEXT_MAX_BYTES` (possibly off a char boundary).
fn context_end(text: &[u8], end: usize) -> usize {
    let ceiling = text.len().min(end + CONTEXT_MAX_BYTES);
    for (passed, newline) in memchr::memchr_iter(b'\n', &text[end..ceiling]).enumerate() {
        let cut = end + newline;
        if passed >= CONTEXT_LINES && cut - end >= CONTEXT_MIN_BYTES {
            return cut;
        }
    }
    ceiling
}

/// The nearest char boundary at or before `at`, within the text.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The nearest char boundary at or after `at`, within the text.
fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
