//! Threads on whole lines (the ones agents, the command line, reviewers'
//! findings and a person's round comments make): telling such a range from
//! a character range, widening what re-anchoring found to the whole lines it
//! is on, and finding a block of lines (a suggested change) near a place.

use std::ops::Range;

/// Whether `range` of `text` is whole lines: it starts at a line's start and
/// ends at a line's end (before its newline, or at the end of the text), or
/// just after a newline. An empty range is not.
pub fn covers(text: &str, range: &Range<usize>) -> bool {
    let bytes = text.as_bytes();
    if range.start >= range.end || range.end > bytes.len() {
        return false;
    }
    let starts_line = range.start == 0 || bytes[range.start - 1] == b'\n';
    let ends_line = range.end == bytes.len() || bytes[range.end] == b'\n' || bytes[range.end - 1] == b'\n';
    starts_line && ends_line
}

/// The whole lines `range` is on: from the start of its first line to the
/// end of its last, with that line's newline when `with_newline` (a quote
/// that ended with one), without it otherwise.
pub fn widen(text: &str, range: Range<usize>, with_newline: bool) -> Range<usize> {
    let bytes = text.as_bytes();
    let start = memchr::memrchr(b'\n', &bytes[..range.start]).map_or(0, |i| i + 1);
    // A range that already ends just after a newline ends its last line.
    let mut end = range.end;
    if end > start && bytes[end - 1] == b'\n' {
        end -= 1;
    } else {
        end = memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |i| end + i);
    }
    if with_newline && end < bytes.len() {
        end += 1;
    }
    start..end.max(start)
}

/// Where the lines of `block` stand in `text` as consecutive lines, ignoring
/// indentation, trailing space and blank lines, with the first one at most
/// `radius` lines from the line holding byte `near`; the nearest such place,
/// as the byte range of its lines (without the last newline).
pub fn find_block(text: &str, near: usize, block: &str, radius: usize) -> Option<Range<usize>> {
    let wanted: Vec<&str> = block.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if wanted.is_empty() {
        return None;
    }
    // The text's non-blank lines, trimmed, with their ranges and numbers.
    let mut lines: Vec<(usize, &str, Range<usize>)> = Vec::new();
    let mut at = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let body = line.strip_suffix('\n').unwrap_or(line);
        if !body.trim().is_empty() {
            lines.push((number, body.trim(), at..at + body.len()));
        }
        at += line.len();
    }
    let near_line = memchr::memchr_iter(b'\n', &text.as_bytes()[..near.min(text.len())]).count();
    (0..lines.len())
        .filter(|&i| lines[i].0.abs_diff(near_line) <= radius)
        .filter(|&i| {
            lines.get(i..i + wanted.len()).is_some_and(|run| run.iter().map(|(_, l, _)| *l).eq(wanted.iter().copied()))
        })
        .min_by_key(|&i| lines[i].0.abs_diff(near_line))
        .map(|i| lines[i].2.start..lines[i + wanted.len() - 1].2.end)
}

/// Whether two texts hold the same non-blank lines, ignoring indentation
/// and trailing space.
pub fn same_lines(a: &str, b: &str) -> bool {
    let lines = |s: &'_ str| s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n");
    lines(a) == lines(b)
}
