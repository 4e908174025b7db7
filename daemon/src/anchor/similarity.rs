//! Edit-distance similarity between byte strings and approximate search of a
//! needle in a haystack, on top of `triple_accel`'s SIMD Levenshtein code.
//!
//! Everything here works on bytes; callers move the ranges it returns onto
//! char boundaries.

use std::ops::Range;
use std::time::Instant;

use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};
use triple_accel::SearchType;
use triple_accel::levenshtein::{
    LEVENSHTEIN_COSTS, levenshtein_naive_k, levenshtein_search_simd_with_opts, levenshtein_simd_k,
};

use super::{DIFF_TIMEOUT, EDIT_DISTANCE_MAX_BYTES};

/// How alike two strings are: 1 − Levenshtein distance / the longer length,
/// so 1.0 for equal strings (two empty strings included) and 0.0 for strings
/// with nothing in common. Past `EDIT_DISTANCE_MAX_BYTES` an estimate that
/// errs low (see [`line_distance`]).
pub(super) fn similarity(a: &[u8], b: &[u8]) -> f32 {
    let longest = a.len().max(b.len());
    let distance = distance_within(a, b, longest).unwrap_or(longest);
    ratio(distance, longest)
}

/// [`similarity`], when it is at least `floor`. Bounding the distance lets
/// the SIMD code stop early, which is what makes scanning hundreds of
/// candidate windows affordable.
pub(super) fn similarity_at_least(a: &[u8], b: &[u8], floor: f32) -> Option<f32> {
    let longest = a.len().max(b.len());
    let allowed = ((1.0 - floor) * longest as f32).floor() as usize;
    let found = ratio(distance_within(a, b, allowed)?, longest);
    (found >= floor).then_some(found)
}

fn ratio(distance: usize, longest: usize) -> f32 {
    if longest == 0 { 1.0 } else { 1.0 - distance as f32 / longest as f32 }
}

/// The Levenshtein distance between `a` and `b`, when it is at most `k`;
/// for long strings an upper bound of it (see [`line_distance`]).
fn distance_within(a: &[u8], b: &[u8], k: usize) -> Option<usize> {
    // The distance is at least the difference in length: the cheapest
    // rejection there is, and it covers the empty strings too.
    if a.len().abs_diff(b.len()) > k {
        return None;
    }
    if a.is_empty() || b.is_empty() {
        return Some(a.len().max(b.len()));
    }
    if a.len().max(b.len()) > EDIT_DISTANCE_MAX_BYTES {
        return Some(line_distance(a, b)).filter(|&d| d <= k);
    }
    exact_distance_within(a, b, k)
}

fn exact_distance_within(a: &[u8], b: &[u8], k: usize) -> Option<usize> {
    let k = u32::try_from(k).unwrap_or(u32::MAX);
    // triple_accel's author documents that its SIMD kernels mishandle NUL
    // bytes (they pad vectors with zeros); the scalar version is exact.
    let distance = if has_nul(a) || has_nul(b) { levenshtein_naive_k(a, b, k) } else { levenshtein_simd_k(a, b, k) };
    distance.map(|d| d as usize)
}

/// An upper bound of the Levenshtein distance of long strings: a line diff,
/// with exact distances inside the changed hunks that are short enough.
/// Exact distance costs about length × distance, which for a whole file
/// selected and then edited runs to minutes.
fn line_distance(a: &[u8], b: &[u8]) -> usize {
    let old: Vec<&[u8]> = a.split_inclusive(|&c| c == b'\n').collect();
    let new: Vec<&[u8]> = b.split_inclusive(|&c| c == b'\n').collect();
    let bytes = |lines: &[&[u8]]| lines.iter().map(|line| line.len()).sum::<usize>();
    let deadline = Instant::now() + DIFF_TIMEOUT;
    capture_diff_slices_deadline(Algorithm::Histogram, &old, &new, Some(deadline))
        .iter()
        .map(|op| {
            let (tag, from, to) = op.as_tag_tuple();
            let (from, to) = (&old[from], &new[to]);
            match tag {
                DiffTag::Equal => 0,
                DiffTag::Delete => bytes(from),
                DiffTag::Insert => bytes(to),
                DiffTag::Replace => {
                    let (from, to) = (from.concat(), to.concat());
                    let longest = from.len().max(to.len());
                    if longest > EDIT_DISTANCE_MAX_BYTES {
                        longest
                    } else {
                        exact_distance_within(&from, &to, longest).unwrap_or(longest)
                    }
                }
            }
        })
        .sum()
}

/// Every place where `needle` matches a substring of `haystack` with the
/// fewest edits, when that is at most `k`; all of them have the same number
/// of edits. Empty when nothing is that close, and when either side holds a
/// NUL byte (see [`distance_within`]; the scalar search would be too slow
/// for a whole file).
pub(super) fn closest_matches(needle: &[u8], haystack: &[u8], k: usize) -> Vec<Range<usize>> {
    if needle.is_empty() || has_nul(needle) || has_nul(haystack) {
        return Vec::new();
    }
    let k = u32::try_from(k).unwrap_or(u32::MAX);
    levenshtein_search_simd_with_opts(needle, haystack, k, SearchType::Best, LEVENSHTEIN_COSTS, false)
        .map(|found| found.start..found.end)
        .collect()
}

fn has_nul(bytes: &[u8]) -> bool {
    memchr::memchr(0, bytes).is_some()
}
