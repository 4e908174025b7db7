//! Where a pull request's review thread goes in the files here: GitHub's
//! lines are the head's (or the base's, for the left side, or the commit a
//! thread was made on, once outdated), so they are carried across what
//! changed since, line by line, to the text on disk. A line removed since
//! lands on the line that now stands where it was.
//!
//! When that commit is not here (the branch was force-pushed), or its lines
//! are gone from where the diff carries them (moved, or rewritten), the
//! thread is found by its text: the commit's lines, or the lines of the
//! diff hunk GitHub keeps with the comment, looked for in the file on disk
//! by Parley's own re-anchoring. Text that is gone leaves the thread on its
//! best line, marked outdated.

use similar::{ChangeTag, TextDiff};

use crate::anchor::{self, Anchor, AnchorState, Reanchorer};
use crate::github::DiffSide;

/// Where a review thread lands in the file here (0-based lines), and
/// whether its text is gone from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub start: u32,
    pub end: u32,
    /// The text GitHub's lines held is nowhere in the file: the thread is
    /// on its best line, and outdated.
    pub text_gone: bool,
}

/// What GitHub says a thread is on: its lines `start..=end` (0-based) in
/// `then` (the text of the commit they are lines of, when it is here), and
/// the diff hunk of its first comment (which ends on its last line).
#[derive(Debug, Clone, Copy)]
pub struct OnGithub<'a> {
    pub then: Option<&'a str>,
    pub hunk: Option<&'a str>,
    pub side: DiffSide,
    pub start: u32,
    pub end: u32,
}

/// Places a review thread in `current`, the file on disk: carried across
/// what changed since its commit when its lines are kept; else found by
/// its text; else on the line that stands where it was, its text gone.
/// Without the commit or a hunk, GitHub's lines are taken as they are.
pub fn place(github: OnGithub<'_>, current: &str) -> Placed {
    let last = current.lines().count().max(1) as u32 - 1;
    let (start, end) = (github.start.min(github.end), github.end);
    let (hint, text) = match github.then {
        Some(then) => {
            let carried = carry(then, current, start, end);
            if carried.kept {
                return Placed { start: carried.lines.0, end: carried.lines.1, text_gone: false };
            }
            (carried.lines.0, lines_of(then, start, end))
        }
        None => (start.min(last), github.hunk.and_then(|hunk| hunk_text(hunk, github.side, end - start + 1))),
    };
    let Some((above, quote)) = text else {
        return Placed { start: start.min(last), end: end.min(last), text_gone: false };
    };
    match by_text(current, &above, &quote, hint) {
        Some((start, end)) => Placed { start, end, text_gone: false },
        None => {
            let line = with_text(current, hint);
            Placed { start: line, end: line, text_gone: true }
        }
    }
}

/// `line`, or the nearest line with text after it, else before it: a thread
/// is on some text, never on a blank line.
fn with_text(current: &str, line: u32) -> u32 {
    let lines: Vec<&str> = current.lines().collect();
    let blank = |at: usize| lines.get(at).is_none_or(|l| l.trim().is_empty());
    let at = line as usize;
    let after = (at..lines.len()).find(|&l| !blank(l));
    let before = (0..at.min(lines.len())).rev().find(|&l| !blank(l));
    after.or(before).map_or(line, |l| l as u32)
}

/// Lines `start..=end` of `text`, and up to three lines above them.
fn lines_of(text: &str, start: u32, end: u32) -> Option<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = (start as usize, end as usize);
    if end >= lines.len() {
        return None;
    }
    let above = &lines[start.saturating_sub(3)..start];
    Some((above.iter().map(|l| format!("{l}\n")).collect(), lines[start..=end].join("\n")))
}

/// The last `count` lines of a diff hunk on `side` (a right-side comment's
/// lines are the hunk's kept and added lines, a left-side one's its kept
/// and removed ones), and up to three lines above them.
pub fn hunk_text(hunk: &str, side: DiffSide, count: u32) -> Option<(String, String)> {
    let lines: Vec<&str> = hunk
        .lines()
        .filter(|line| !line.starts_with("@@") && !line.starts_with('\\'))
        .filter_map(|line| match (line.as_bytes().first(), side) {
            (Some(b'-'), DiffSide::Right) | (Some(b'+'), DiffSide::Left) => None,
            (Some(b' ' | b'+' | b'-'), _) => Some(&line[1..]),
            _ => Some(line),
        })
        .collect();
    let count = (count as usize).min(lines.len());
    if count == 0 {
        return None;
    }
    let at = lines.len() - count;
    let above = &lines[at.saturating_sub(3)..at];
    Some((above.iter().map(|l| format!("{l}\n")).collect(), lines[at..].join("\n")))
}

/// Where `quote` (whole lines, `above` the lines before it) is in
/// `current`, looked for from line `hint` by Parley's re-anchoring: the
/// same place, the exact text elsewhere, then text like it.
fn by_text(current: &str, above: &str, quote: &str, hint: u32) -> Option<(u32, u32)> {
    if quote.trim().is_empty() {
        return None;
    }
    let at = anchor::line_range(current, hint, hint).map_or(0, |r| r.start);
    let end = (at + quote.len()).min(current.len());
    let anchor = Anchor::new(at..end, quote.to_owned(), above.to_owned(), String::new());
    let found = Reanchorer::new(None, current).reanchor_lines(&anchor);
    match (found.state, found.range) {
        (AnchorState::Anchored | AnchorState::Moved | AnchorState::Modified { .. }, Some(range)) => {
            let first = anchor::line_col(current, range.start).0;
            let last = anchor::line_col(current, range.end.saturating_sub(1).max(range.start)).0;
            Some((first, last.max(first)))
        }
        _ => None,
    }
}

/// Lines carried across a diff, and whether any of them was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Carried {
    lines: (u32, u32),
    kept: bool,
}

/// Lines `start..=end` (0-based) of `old`, as they are in `new`: the first
/// line kept at or after `start`, the last kept at or before `end` (or,
/// when none of them is kept, the line that stands where they were).
fn carry(old: &str, new: &str, start: u32, end: u32) -> Carried {
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
        (Some(first), Some(last)) => Carried { lines: (clamp(*first), clamp(*last)), kept: true },
        _ => {
            let line = at(start).map_or(start, |(n, _)| n);
            Carried { lines: (clamp(line), clamp(line)), kept: false }
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
        assert_eq!(carry(old, new, 1, 2).lines, (2, 3), "b..c moved down one");
        let removed = "a\nd\n";
        assert_eq!(carry(old, removed, 1, 2).lines, (1, 1), "b..c are gone: the line standing there, d");
        assert_eq!(carry(old, old, 0, 3).lines, (0, 3), "unchanged");
        assert_eq!(carry(old, "a\n", 3, 3).lines, (0, 0), "past the end is clamped");
        let edited = "a\nB\nc\nd\n";
        assert_eq!(carry(old, edited, 1, 2).lines, (2, 2), "the kept line of the range");
    }

    #[test]
    fn lines_carried_back_must_all_be_there() {
        let head = "a\nb\nc\n";
        let here = "new\na\nb\nc\n";
        assert_eq!(carry_whole(here, head, 2, 3), Some((1, 2)), "b..c are one line up in the head");
        assert_eq!(carry_whole(here, head, 0, 0), None, "a line added here is not in the head");
        assert_eq!(carry_whole("a\nB\nc\n", head, 0, 1), None, "a line changed here is not in the head");
    }

    #[test]
    fn a_hunk_gives_the_lines_of_its_side_down_to_the_commented_one() {
        let hunk = "@@ -1,3 +1,3 @@\n fn one() {}\n-fn old() {}\n+fn two() {}\n+fn three() {}";
        assert_eq!(
            hunk_text(hunk, DiffSide::Right, 2),
            Some(("fn one() {}\n".into(), "fn two() {}\nfn three() {}".into()))
        );
        let left = "@@ -1,2 +1,1 @@\n fn one() {}\n-fn old() {}";
        assert_eq!(hunk_text(left, DiffSide::Left, 1), Some(("fn one() {}\n".into(), "fn old() {}".into())));
        let marked = "@@ -1 +1 @@\n-fn a() {}\n\\ No newline at end of file\n+fn a() {}\n\\ No newline at end of file";
        assert_eq!(
            hunk_text(marked, DiffSide::Right, 1).map(|t| t.1),
            Some("fn a() {}".into()),
            "markers are not lines"
        );
    }

    #[test]
    fn without_its_commit_a_thread_is_found_by_its_hunks_text_or_left_outdated_on_its_line() {
        let hunk = "@@ -0,0 +1,4 @@\n+fn one() {}\n+fn two() {}\n+fn three() {}\n+fn four() {}";
        let github = |start, end| OnGithub { then: None, hunk: Some(hunk), side: DiffSide::Right, start, end };
        // Rewritten: three and four moved to the top, a line added.
        let current = "fn three() {}\nfn four() {}\n// new\nfn one() {}\nfn two() {}\n";
        assert_eq!(place(github(2, 3), current), Placed { start: 0, end: 1, text_gone: false });
        let rewritten = "fn one() {}\nfn deux() { 2 }\n";
        let gone =
            OnGithub { hunk: Some("@@ -0,0 +1,2 @@\n+fn one() {}\n+fn two(x: u32) -> u32 { x * 2 }"), ..github(1, 1) };
        assert_eq!(place(gone, rewritten), Placed { start: 1, end: 1, text_gone: true });
        let blank_there = "fn one() {}\n\nfn deux() { 2 }\n";
        assert_eq!(place(gone, blank_there), Placed { start: 2, end: 2, text_gone: true }, "never a blank line");
        let nothing = OnGithub { hunk: None, ..github(7, 9) };
        assert_eq!(place(nothing, current), Placed { start: 4, end: 4, text_gone: false }, "as given, clamped");
    }

    #[test]
    fn lines_a_diff_cannot_carry_because_they_moved_are_found_by_their_text() {
        let then = "a();\nb();\nfn moved() {\n    body();\n}\nz();\n";
        let current = "fn moved() {\n    body();\n}\na();\nb();\nz();\n";
        let github = OnGithub { then: Some(then), hunk: None, side: DiffSide::Right, start: 2, end: 3 };
        assert_eq!(place(github, current), Placed { start: 0, end: 1, text_gone: false });
        let kept = OnGithub { start: 0, end: 0, ..github };
        assert_eq!(place(kept, current), Placed { start: 3, end: 3, text_gone: false }, "carried by the diff");
    }
}
