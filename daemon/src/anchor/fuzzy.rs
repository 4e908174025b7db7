//! Steps 5 and 6 of re-anchoring: fuzzy matches of the quote, among whole
//! lines near the hint, then anywhere in the text; a match is refused when
//! another place fits about as well.

use std::ops::Range;

use super::similarity::{closest_matches, similarity_at_least};
use super::{
    Anchor, FUZZY_AMBIGUITY_MARGIN, Found, GLOBAL_ERRORS_DIVISOR, GLOBAL_MAX_LONG_CANDIDATES, GLOBAL_MAX_NEEDLE,
    GLOBAL_PIECE, LOCAL_MAX_QUOTE_BYTES, LOCAL_MIN_RADIUS_LINES, LOCAL_RADIUS_LINES, LOCAL_WORK_BYTES, MAX_CANDIDATES,
    QUOTE_SIMILARITY_FLOOR, Reanchorer, ceil_boundary, fit, floor_boundary, proximity, trim_range,
};

/// What a fuzzy step concluded.
#[derive(Debug)]
pub(super) enum Fuzzy {
    Found(Found),
    /// Several places fit about equally well: none is taken.
    Ambiguous,
    Nothing,
}

impl Reanchorer<'_> {
    /// Step 5: windows of whole lines, about as many as the quote has, within
    /// `LOCAL_RADIUS_LINES` of the hint (fewer for long quotes).
    pub(super) fn near_fuzzy(&self, anchor: &Anchor, hint: usize) -> Fuzzy {
        let new = self.new_text;
        let quote = anchor.quote.trim();
        if quote.is_empty() || quote.len() > LOCAL_MAX_QUOTE_BYTES {
            return Fuzzy::Nothing;
        }
        let starts = self.line_starts();
        let line_end = |line: usize| starts.get(line + 1).map_or(new.len(), |&next| next - 1);
        let quote_lines = memchr::memchr_iter(b'\n', quote.as_bytes()).count() + 1;
        let hint_line = starts.partition_point(|&s| s <= hint).saturating_sub(1);
        let radius = (LOCAL_WORK_BYTES / quote.len()).clamp(LOCAL_MIN_RADIUS_LINES, LOCAL_RADIUS_LINES);
        let first = hint_line.saturating_sub(radius);
        let last = (hint_line + radius).min(starts.len() - 1);

        // Scores by window size and top line. Rivals for the ambiguity check
        // are local peaks at least two lines from the best: windows sliding
        // off a match score a little less at each step and are no peak, a
        // repeat of the text is one.
        let mut peaks: Vec<(usize, Found)> = Vec::new();
        for size in [quote_lines - 1, quote_lines, quote_lines + 1] {
            // The last top line a window of `size` lines fits under.
            let Some(last_top) = starts.len().checked_sub(size).filter(|_| size > 0) else { continue };
            let row: Vec<Option<Found>> = (first..=last.min(last_top))
                .map(|top| {
                    let core = trim_range(new, starts[top]..line_end(top + size - 1));
                    if core.is_empty() {
                        return None;
                    }
                    let window = &new.as_bytes()[core.clone()];
                    let similarity = similarity_at_least(quote.as_bytes(), window, QUOTE_SIMILARITY_FLOOR)?;
                    let range = fit(new, core, &anchor.quote);
                    let near = 1.0 - top.abs_diff(hint_line) as f32 / (radius + 1) as f32;
                    let score = self.score(anchor, &range, similarity, near);
                    Some(Found { range, similarity, score })
                })
                .collect();
            let score_at = |i: Option<usize>| i.and_then(|i| row.get(i)?.as_ref()).map(|c| c.score);
            for (i, found) in row.iter().enumerate() {
                let Some(found) = found else { continue };
                let beaten = |other: Option<f32>| other.is_some_and(|other| other > found.score);
                if !beaten(score_at(i.checked_sub(1))) && !beaten(score_at(Some(i + 1))) {
                    peaks.push((first + i, found.clone()));
                }
            }
        }
        pick(peaks, |(a, _), (b, _)| a.abs_diff(*b) > 1)
    }

    /// Step 6: approximate substring search over the whole text, which also
    /// finds quotes that are parts of lines.
    pub(super) fn global_fuzzy(&self, anchor: &Anchor, hint: usize) -> Fuzzy {
        let new = self.new_text;
        let quote = anchor.quote.trim();
        let errors = quote.len() / GLOBAL_ERRORS_DIVISOR;
        if errors == 0 {
            // Too short to allow an edit: step 3 already looked for it exactly.
            return Fuzzy::Nothing;
        }
        let mut regions = if quote.len() <= GLOBAL_MAX_NEEDLE {
            closest_matches(quote.as_bytes(), new.as_bytes(), errors)
        } else {
            self.head_and_tail_matches(quote, hint)
        };
        regions.sort_by_key(|region| region.start.abs_diff(hint));
        regions.truncate(if quote.len() <= GLOBAL_MAX_NEEDLE { MAX_CANDIDATES } else { GLOBAL_MAX_LONG_CANDIDATES });

        let mut candidates = Vec::new();
        for region in regions {
            // The search works on bytes: move its ends out to char boundaries.
            let core = trim_range(new, floor_boundary(new, region.start)..ceil_boundary(new, region.end));
            if core.is_empty() {
                continue;
            }
            let Some(similarity) =
                similarity_at_least(quote.as_bytes(), &new.as_bytes()[core.clone()], QUOTE_SIMILARITY_FLOOR)
            else {
                continue;
            };
            let range = fit(new, core, &anchor.quote);
            let score = self.score(anchor, &range, similarity, proximity(range.start, hint, new.len()));
            candidates.push(((), Found { range, similarity, score }));
        }
        pick(candidates, |(_, a), (_, b)| a.range.end <= b.range.start || b.range.end <= a.range.start)
    }

    /// For quotes too long to search whole: places where the quote's head
    /// and its tail both match, about a quote's length apart.
    fn head_and_tail_matches(&self, quote: &str, hint: usize) -> Vec<Range<usize>> {
        let bytes = self.new_text.as_bytes();
        let head = &quote[..floor_boundary(quote, GLOBAL_PIECE)];
        let tail = &quote[ceil_boundary(quote, quote.len() - GLOBAL_PIECE)..];
        let search = |piece: &str, near: usize| {
            let mut found = closest_matches(piece.as_bytes(), bytes, piece.len() / GLOBAL_ERRORS_DIVISOR);
            found.sort_by_key(|region| region.start.abs_diff(near));
            found.truncate(GLOBAL_MAX_LONG_CANDIDATES);
            found
        };
        let heads = search(head, hint);
        let tails = search(tail, hint + quote.len());
        let slack = quote.len() / GLOBAL_ERRORS_DIVISOR;
        let lengths = quote.len() - slack..=quote.len() + slack;
        heads
            .iter()
            .flat_map(|head| tails.iter().map(move |tail| head.start..tail.end))
            .filter(|region| region.end > region.start && lengths.contains(&(region.end - region.start)))
            .collect()
    }
}

/// The best-scoring candidate (the first on ties), unless another one at a
/// `distinct` place scores about as well.
fn pick<T>(candidates: Vec<(T, Found)>, distinct: impl Fn(&(T, Found), &(T, Found)) -> bool) -> Fuzzy {
    let Some(best) = candidates.iter().reduce(|best, c| if c.1.score > best.1.score { c } else { best }) else {
        return Fuzzy::Nothing;
    };
    if candidates.iter().any(|c| distinct(c, best) && c.1.score > best.1.score - FUZZY_AMBIGUITY_MARGIN) {
        Fuzzy::Ambiguous
    } else {
        Fuzzy::Found(best.1.clone())
    }
}
