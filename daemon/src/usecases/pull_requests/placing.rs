//! Where a pull request's review thread goes in the files here: GitHub's
//! lines are the head's (or the base's, for the left side, or the commit a
//! thread was made on, once outdated), so they are carried across what
//! changed since, line by line, to the text on disk. A line removed since
//! lands on the line that now stands where it was.

use similar::{ChangeTag, TextDiff};

/// Lines `start..=end` (0-based) of `old`, as they are in `new`: the first
/// line kept at or after `start`, the last kept at or before `end` (or,
/// when none of them is kept, the line that stands where they were).
pub fn carry_lines(old: &str, new: &str, start: u32, end: u32) -> (u32, u32) {
    let new_count = new.lines().count().max(1) as u32;
    let diff = TextDiff::from_lines(old, new);
    // For each old line, the new line it became (kept) or stands before.
    let mut mapped: Vec<(u32, bool)> = Vec::new();
    let mut new_line = 0u32;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Equal => {
                mapped.push((new_line, true));
                new_line += 1;
            }
            ChangeTag::Delete => mapped.push((new_line, false)),
            ChangeTag::Insert => new_line += 1,
        }
    }
    let at = |line: u32| mapped.get(line as usize).copied();
    let kept: Vec<u32> = (start..=end).filter_map(|l| at(l).filter(|(_, kept)| *kept).map(|(n, _)| n)).collect();
    let clamp = |line: u32| line.min(new_count - 1);
    match (kept.first(), kept.last()) {
        (Some(first), Some(last)) => (clamp(*first), clamp(*last)),
        _ => {
            let line = at(start).map_or(start, |(n, _)| n);
            (clamp(line), clamp(line))
        }
    }
}

/// Lines `start..=end` (0-based) of `here`, as they are in `there`, when
/// every one of them is there unchanged: `None` when one was added or
/// changed here (its text is not in `there`). Pushing carries a thread's
/// lines back to the pull request's head this way.
pub fn carry_whole(here: &str, there: &str, start: u32, end: u32) -> Option<(u32, u32)> {
    let diff = TextDiff::from_lines(here, there);
    let mut mapped: Vec<Option<u32>> = Vec::new();
    let mut there_line = 0u32;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Equal => {
                mapped.push(Some(there_line));
                there_line += 1;
            }
            ChangeTag::Delete => mapped.push(None),
            ChangeTag::Insert => there_line += 1,
        }
    }
    let at = |line: u32| mapped.get(line as usize).copied().flatten();
    let lines: Option<Vec<u32>> = (start..=end).map(at).collect();
    let lines = lines?;
    Some((*lines.first()?, *lines.last()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_follow_what_was_inserted_above_and_removed_lines_land_where_they_were() {
        let old = "a\nb\nc\nd\n";
        let new = "new\na\nb\nc\nd\n";
        assert_eq!(carry_lines(old, new, 1, 2), (2, 3), "b..c moved down one");
        let removed = "a\nd\n";
        assert_eq!(carry_lines(old, removed, 1, 2), (1, 1), "b..c are gone: the line standing there, d");
        assert_eq!(carry_lines(old, old, 0, 3), (0, 3), "unchanged");
        assert_eq!(carry_lines(old, "a\n", 3, 3), (0, 0), "past the end is clamped");
        let edited = "a\nB\nc\nd\n";
        assert_eq!(carry_lines(old, edited, 1, 2), (2, 2), "the kept line of the range");
    }

    #[test]
    fn lines_carried_back_must_all_be_there() {
        let head = "a\nb\nc\n";
        let here = "new\na\nb\nc\n";
        assert_eq!(carry_whole(here, head, 2, 3), Some((1, 2)), "b..c are one line up in the head");
        assert_eq!(carry_whole(here, head, 0, 0), None, "a line added here is not in the head");
        assert_eq!(carry_whole("a\nB\nc\n", head, 0, 1), None, "a line changed here is not in the head");
    }
}
