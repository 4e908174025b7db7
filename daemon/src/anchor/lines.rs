//! Converting between byte offsets and 0-based lines and byte columns.

use std::ops::Range;

/// The 0-based line and byte column of a byte offset (clamped to the text).
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = memchr::memchr_iter(b'\n', before).count();
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    (saturate(line), saturate(before.len() - line_start))
}

/// The byte offset of a 0-based line and byte column; `None` when the line
/// does not exist, the column is past its end, or not on a char boundary.
/// The end of a text that ends with a newline is line `n`, column 0.
pub fn offset_of(text: &str, line: u32, byte_col: u32) -> Option<usize> {
    let start = line_start(text, line as usize)?;
    let end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
    let at = start.checked_add(byte_col as usize)?;
    (at <= end && text.is_char_boundary(at)).then_some(at)
}

/// The byte range of whole 0-based lines `first_line..=last_line`, without
/// the last line's newline; `None` when a line does not exist. A final
/// newline does not start a line.
pub fn line_range(text: &str, first_line: u32, last_line: u32) -> Option<Range<usize>> {
    if first_line > last_line {
        return None;
    }
    let start = line_start(text, first_line as usize)?;
    let last_start = match (last_line - first_line).checked_sub(1) {
        None => start,
        Some(newlines) => start + 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[start..]).nth(newlines as usize)?,
    };
    if last_start == text.len() {
        return None;
    }
    let end = memchr::memchr(b'\n', &text.as_bytes()[last_start..]).map_or(text.len(), |i| last_start + i);
    Some(start..end)
}

fn line_start(text: &str, line: usize) -> Option<usize> {
    match line.checked_sub(1) {
        None => Some(0),
        Some(newlines) => memchr::memchr_iter(b'\n', text.as_bytes()).nth(newlines).map(|i| i + 1),
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
