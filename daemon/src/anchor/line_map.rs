//! Carrying byte offsets from an old text to a new one through a line diff:
//! the common head and tail are mapped by arithmetic, only the lines between
//! them are diffed.

use std::ops::Range;
use std::time::Instant;

use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};

use super::DIFF_TIMEOUT;

/// Where an old offset lands in the new text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mapped {
    /// On a line the diff kept: the same text is at this offset.
    Exact(usize),
    /// On a line the diff deleted or replaced: about here.
    Near(usize),
}

/// A line diff of an old text against a new one, computed once and shared by
/// every anchor of the file.
#[derive(Debug)]
pub(super) struct LineMap {
    /// Bytes both texts start with, cut back to a line start.
    head: usize,
    /// Where the common tail starts in each text (at line starts).
    old_tail: usize,
    new_tail: usize,
    /// Line starts of `old[head..old_tail]` and `new[head..new_tail]`,
    /// relative to `head`, one per line.
    old_starts: Vec<usize>,
    new_starts: Vec<usize>,
    /// The diff of those lines; ranges are line indexes into the starts.
    ops: Vec<(DiffTag, Range<usize>, Range<usize>)>,
}

impl LineMap {
    pub(super) fn new(old: &str, new: &str) -> Self {
        let (o, n) = (old.as_bytes(), new.as_bytes());
        // Most edits touch a few lines of a long file: skipping the common
        // head and tail with memcmp makes the diff itself tiny, so even one
        // diff per anchor stays cheap.
        let same = common_prefix(o, n);
        let head = memchr::memrchr(b'\n', &o[..same]).map_or(0, |i| i + 1);
        let same_tail = common_suffix(&o[head..], &n[head..]);
        let old_tail = tail_start(o, head, same_tail, n);
        let new_tail = n.len() - (o.len() - old_tail);

        let old_mid = &old[head..old_tail];
        let new_mid = &new[head..new_tail];
        let old_lines: Vec<&str> = old_mid.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new_mid.split_inclusive('\n').collect();
        // A deadline keeps a pathological diff from stalling the daemon; past
        // it `similar` returns a coarser but still valid diff.
        let deadline = Instant::now() + DIFF_TIMEOUT;
        let ops = capture_diff_slices_deadline(Algorithm::Histogram, &old_lines, &new_lines, Some(deadline))
            .iter()
            .map(|op| op.as_tag_tuple())
            .collect();
        LineMap { head, old_tail, new_tail, old_starts: starts(&old_lines), new_starts: starts(&new_lines), ops }
    }

    /// Where `offset` (into the old text) lands in the new text.
    pub(super) fn map(&self, offset: usize) -> Mapped {
        if offset >= self.old_tail {
            return Mapped::Exact(self.new_tail + (offset - self.old_tail));
        }
        if offset < self.head {
            return Mapped::Exact(offset);
        }
        let relative = offset - self.head;
        let line = self.old_starts.partition_point(|&s| s <= relative).saturating_sub(1);
        // The ops cover the old lines in order, so the first one ending past
        // `line` is the one holding it.
        let at = self.ops.partition_point(|(_, old, _)| old.end <= line);
        let Some((tag, old, new)) = self.ops.get(at) else {
            return Mapped::Near(self.new_tail);
        };
        let new_line_start = |index: usize| self.head + self.new_starts.get(index).copied().unwrap_or(self.new_len());
        if *tag == DiffTag::Equal {
            let column = relative - self.old_starts[line];
            Mapped::Exact(new_line_start(new.start + (line - old.start)) + column)
        } else {
            // Deleted or replaced: the matching line of the replacement, or
            // where the deleted lines were.
            let into = (line - old.start).min(new.len().saturating_sub(1));
            Mapped::Near(new_line_start(new.start + into))
        }
    }

    /// The length of the new text's middle part, relative to `head`.
    fn new_len(&self) -> usize {
        self.new_tail - self.head
    }
}

/// Where the common tail starts in `old`: a line start in both texts, no
/// earlier than `head`, within the `same_tail` bytes both texts end with.
fn tail_start(old: &[u8], head: usize, same_tail: usize, new: &[u8]) -> usize {
    let old_at = old.len() - same_tail;
    let new_at = new.len() - same_tail;
    let starts_line = |text: &[u8], at: usize| at == head || text[at - 1] == b'\n';
    if starts_line(old, old_at) && starts_line(new, new_at) {
        return old_at;
    }
    // The first newline inside the common tail is in both texts, so the line
    // after it starts a line in both.
    memchr::memchr(b'\n', &old[old_at..]).map_or(old.len(), |i| old_at + i + 1)
}

fn starts(lines: &[&str]) -> Vec<usize> {
    lines
        .iter()
        .scan(0, |next, line| {
            let start = *next;
            *next += line.len();
            Some(start)
        })
        .collect()
}

/// Compared a block at a time so that memcmp does the work.
const BLOCK: usize = 4096;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let limit = a.len().min(b.len());
    let mut done = 0;
    while done + BLOCK <= limit && a[done..done + BLOCK] == b[done..done + BLOCK] {
        done += BLOCK;
    }
    done + a[done..limit].iter().zip(&b[done..limit]).take_while(|(x, y)| x == y).count()
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let limit = a.len().min(b.len());
    let (a_end, b_end) = (a.len(), b.len());
    let mut done = 0;
    while done + BLOCK <= limit && a[a_end - done - BLOCK..a_end - done] == b[b_end - done - BLOCK..b_end - done] {
        done += BLOCK;
    }
    done + a[..a_end - done].iter().rev().zip(b[..b_end - done].iter().rev()).take_while(|(x, y)| x == y).count()
}
