//! Reading a unified diff, as `git diff` prints it, for its lines: which
//! file each belongs to (the new side's name), whether the diff adds,
//! removes or only shows it as context, and its line number. Pure: no IO.
//!
//! Several files in one diff, `diff --git` and `---`/`+++` headers, new files
//! from `/dev/null`, deleted files, renames, binary files, quoted names,
//! `diff.mnemonicPrefix` and `diff.noprefix`, and a merge's combined diff
//! (`diff --cc`, `@@@ … @@@`: a line is added when it is in the result and
//! missing from at least one parent) are all read.
//!
//! The reader follows hunk line counts, so an added line that starts with
//! `++` is content and a `+++ b/…` header is not; a hunk header it cannot
//! read still has its `+` lines reported, numbered from 1, because for the
//! secret scan a malformed diff is no reason to let a line through. ANSI
//! colour codes (a user's `color.diff = always`) are stripped before
//! parsing, and a `\r` before the newline is dropped.

use std::borrow::Cow;

/// What the reader finds, in diff order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// The lines that follow belong to this file, named as on the new side
    /// without its `b/` prefix. A file can be named more than once (by its
    /// `diff --git` line, then exactly by its `+++` line).
    File(String),
    /// A line the diff adds: its 1-based number in the new file and its text,
    /// without the `+` marker.
    Added { line: u32, text: Cow<'a, str> },
    /// A line the diff removes: its 1-based number in the old file (the
    /// first parent that has it, in a merge) and its text, without the `-`.
    Removed { line: u32, text: Cow<'a, str> },
    /// A line shown unchanged around the changes: its 1-based number in the
    /// new file and in the old one, and its text without the leading space.
    Context { line: u32, old_line: u32, text: Cow<'a, str> },
    /// A hunk starts: the lines before it in the file are not shown.
    Hunk,
}

/// The files and lines of `diff`, in order.
pub fn read(diff: &str) -> Reader<'_> {
    Reader { lines: diff.split('\n'), index: None, new_prefix: "b/".to_string(), hunk: None }
}

/// The iterator [`read`] returns.
pub struct Reader<'a> {
    lines: std::str::Split<'a, char>,
    /// The 0-based number of the diff's line read last (the diff split on
    /// `\n`), so a caller can rewrite the line an event came from.
    index: Option<usize>,
    /// The prefix of new-side names (`b/`, or `w/` with `diff.mnemonicPrefix`,
    /// or none with `diff.noprefix`), read off the `diff --git` line.
    new_prefix: String,
    /// Inside a hunk, until its line counts run out.
    hunk: Option<Hunk>,
}

impl<'a> Iterator for Reader<'a> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        loop {
            let raw = self.lines.next()?;
            self.index = Some(self.index.map_or(0, |i| i + 1));
            let line = strip_ansi(raw.strip_suffix('\r').unwrap_or(raw));
            if let Some(event) = self.line(line) {
                return Some(event);
            }
        }
    }
}

impl<'a> Reader<'a> {
    /// The 0-based number, in the diff split on `\n`, of the line the last
    /// event came from (`0` before any).
    pub fn index(&self) -> usize {
        self.index.unwrap_or(0)
    }

    fn line(&mut self, line: Cow<'a, str>) -> Option<Event<'a>> {
        let Some(hunk) = &mut self.hunk else { return self.header(&line) };
        let event = match hunk.step(&line) {
            Step::Line { kind, column, number, old_number } => {
                let text = match line {
                    Cow::Borrowed(line) => Cow::Borrowed(line.get(column..).unwrap_or("")),
                    Cow::Owned(line) => Cow::Owned(line.get(column..).unwrap_or("").to_string()),
                };
                Some(match kind {
                    Kind::Added => Event::Added { line: number, text },
                    Kind::Removed => Event::Removed { line: old_number, text },
                    Kind::Context => Event::Context { line: number, old_line: old_number, text },
                })
            }
            Step::Other => None,
            Step::End => {
                // Not a hunk line: the hunk was shorter than its header
                // said. Read the line as a header instead.
                self.hunk = None;
                return self.header(&line);
            }
        };
        if hunk.done() {
            self.hunk = None;
        }
        event
    }

    fn header(&mut self, line: &str) -> Option<Event<'a>> {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (name, new_prefix) = names_from_diff_git(rest);
            self.new_prefix = new_prefix;
            return Some(Event::File(name));
        }
        if let Some(rest) = line.strip_prefix("diff --cc ").or_else(|| line.strip_prefix("diff --combined ")) {
            self.new_prefix = "b/".to_string();
            return Some(Event::File(header_path(rest)));
        }
        if let Some(rest) = line.strip_prefix("+++ ") {
            let path = header_path(rest);
            // A deleted file has no new side; its hunks add nothing, so the
            // name from `diff --git` can stay.
            if path == "/dev/null" {
                return None;
            }
            let name = match path.strip_prefix(self.new_prefix.as_str()) {
                Some(name) if !name.is_empty() => name.to_string(),
                _ => path,
            };
            return Some(Event::File(name));
        }
        if line.starts_with("@@") {
            let hunk = Hunk::parse(line).unwrap_or_else(|| Hunk::unreadable(line));
            if !hunk.done() {
                self.hunk = Some(hunk);
                return Some(Event::Hunk);
            }
        }
        // Everything else (index, mode, rename, similarity and `---` lines,
        // "Binary files … differ", a `GIT binary patch`) says nothing about
        // added text.
        None
    }
}

/// One hunk's remaining line counts.
struct Hunk {
    /// Lines still to come from each parent: one for a plain diff, one per
    /// parent for a merge's combined diff.
    parents: Vec<u32>,
    /// The number of the next line of each parent.
    parent_lines: Vec<u32>,
    /// Lines still to come in the new file.
    new: u32,
    /// The new-file number of the next line that is in the new file.
    next_line: u32,
}

enum Step {
    /// A line of the hunk: its text starts at `column`, after the markers;
    /// `number` is its line in the new file (for added and context lines),
    /// `old_number` in the first parent holding it (removed and context).
    Line {
        kind: Kind,
        column: usize,
        number: u32,
        old_number: u32,
    },
    Other,
    End,
}

#[derive(Clone, Copy)]
enum Kind {
    Added,
    Removed,
    Context,
}

impl Hunk {
    /// Reads `@@ -a,b +c,d @@ …`, or `@@@ -a,b -c,d +e,f @@@ …` for a merge.
    fn parse(line: &str) -> Option<Hunk> {
        let ats = line.bytes().take_while(|&b| b == b'@').count();
        let fence = line.get(..ats)?;
        let ranges = line.get(ats..)?.split(fence).next()?;
        let mut parents = Vec::new();
        let mut parent_lines = Vec::new();
        let mut new = None;
        for range in ranges.split_whitespace() {
            if let Some(range) = range.strip_prefix('-') {
                let (start, count) = parse_range(range)?;
                parents.push(count);
                parent_lines.push(start.max(1));
            } else if let Some(range) = range.strip_prefix('+') {
                new = Some(parse_range(range)?);
            } else {
                return None;
            }
        }
        let (start, count) = new?;
        // Lines are numbered from 1: git writes `+0,0` for an empty new
        // side, and a malformed `+0,1` still numbers its first line 1.
        (parents.len() == ats - 1).then_some(Hunk { parents, parent_lines, new: count, next_line: start.max(1) })
    }

    /// A hunk whose header could not be read: its lines are still scanned,
    /// numbered from 1, until a line that cannot be part of a hunk.
    fn unreadable(line: &str) -> Hunk {
        let parents = line.bytes().take_while(|&b| b == b'@').count().saturating_sub(1).max(1);
        Hunk { parents: vec![u32::MAX; parents], parent_lines: vec![1; parents], new: u32::MAX, next_line: 1 }
    }

    fn done(&self) -> bool {
        self.new == 0 && self.parents.iter().all(|&n| n == 0)
    }

    fn step(&mut self, line: &str) -> Step {
        // "\ No newline at end of file" belongs to the line before it.
        if line.starts_with('\\') {
            return Step::Other;
        }
        let columns = self.parents.len();
        let bytes = line.as_bytes();
        // An empty line is a context line whose lone space was stripped on
        // the way (by an editor or a mail client).
        let marker = |i: usize| if line.is_empty() { Some(b' ') } else { bytes.get(i).copied() };
        let (mut removed, mut added) = (false, false);
        for i in 0..columns {
            match marker(i) {
                Some(b'-') => removed = true,
                Some(b'+') => added = true,
                Some(b' ') => {}
                _ => return Step::End,
            }
        }
        // The line is in the parents marked `-` (removed) or ` ` (kept):
        // count it there, and number it by the first of them.
        let in_parent = if removed { b'-' } else { b' ' };
        let mut old_number = None;
        for (i, (remaining, next)) in self.parents.iter_mut().zip(self.parent_lines.iter_mut()).enumerate() {
            if marker(i) == Some(in_parent) {
                *remaining = remaining.saturating_sub(1);
                old_number.get_or_insert(*next);
                *next = next.saturating_add(1);
            }
        }
        let old_number = old_number.unwrap_or(0);
        if removed {
            return Step::Line { kind: Kind::Removed, column: columns, number: 0, old_number };
        }
        self.new = self.new.saturating_sub(1);
        let number = self.next_line;
        self.next_line = self.next_line.saturating_add(1);
        let kind = if added { Kind::Added } else { Kind::Context };
        Step::Line { kind, column: columns, number, old_number }
    }
}

/// `start,count` or `start` (a count of one).
fn parse_range(range: &str) -> Option<(u32, u32)> {
    match range.split_once(',') {
        Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
        None => Some((range.parse().ok()?, 1)),
    }
}

/// The new-side name and its prefix from what follows `diff --git `. Only a
/// fallback for the name, which the `+++` line states exactly; the prefix is
/// what matters, so `+++ w/src/a.rs` under `diff.mnemonicPrefix` still names
/// `src/a.rs`.
fn names_from_diff_git(rest: &str) -> (String, String) {
    // Unquoted and unrenamed, the line is `<p>NAME <q>NAME`: split it in the
    // middle, and the prefixes are what differs.
    if !rest.starts_with('"') && rest.len() % 2 == 1 {
        let middle = rest.len() / 2;
        if rest.as_bytes().get(middle) == Some(&b' ')
            && let (Some(old), Some(new)) = (rest.get(..middle), rest.get(middle + 1..))
        {
            if old == new {
                return (new.to_string(), String::new());
            }
            let one_letter = |s: &str| s.as_bytes().get(1) == Some(&b'/');
            if one_letter(old) && one_letter(new) && old.get(2..) == new.get(2..) {
                let (prefix, name) = new.split_at(2);
                return (name.to_string(), prefix.to_string());
            }
        }
    }
    let new = match rest.rfind(" \"b/") {
        Some(at) => header_path(&rest[at + 1..]),
        None => rest.rfind(" b/").map_or_else(|| rest.to_string(), |at| rest[at + 1..].to_string()),
    };
    let name = new.strip_prefix("b/").map(str::to_string).unwrap_or(new);
    (name, "b/".to_string())
}

/// A path as a `---`/`+++` header or `diff --cc` writes it: C-quoted when it
/// holds unusual characters, else followed by a tab when it holds a space
/// (git) or a tab and a timestamp (other diff tools).
fn header_path(text: &str) -> String {
    match text.strip_prefix('"') {
        Some(quoted) => unquote(quoted),
        None => text.split('\t').next().unwrap_or(text).to_string(),
    }
}

/// Undoes git's C-style quoting, after the opening quote.
fn unquote(quoted: &str) -> String {
    let mut bytes = Vec::with_capacity(quoted.len());
    let mut rest = quoted.bytes();
    while let Some(b) = rest.next() {
        match b {
            b'"' => break,
            b'\\' => match rest.next() {
                Some(b'n') => bytes.push(b'\n'),
                Some(b't') => bytes.push(b'\t'),
                Some(b'r') => bytes.push(b'\r'),
                Some(b'a') => bytes.push(0x07),
                Some(b'b') => bytes.push(0x08),
                Some(b'f') => bytes.push(0x0c),
                Some(b'v') => bytes.push(0x0b),
                Some(d @ b'0'..=b'7') => {
                    // Three octal digits: one byte of a UTF-8 name.
                    let mut value = u32::from(d - b'0');
                    for _ in 0..2 {
                        match rest.clone().next() {
                            Some(d @ b'0'..=b'7') => {
                                value = value * 8 + u32::from(d - b'0');
                                rest.next();
                            }
                            _ => break,
                        }
                    }
                    bytes.push(u8::try_from(value & 0xff).unwrap_or(b'?'));
                }
                Some(other) => bytes.push(other),
                None => bytes.push(b'\\'),
            },
            other => bytes.push(other),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Removes ANSI escape sequences, so a diff captured with colour on parses.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    if !line.contains('\x1b') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        // CSI: `ESC [`, parameters, then a final byte in `@`..=`~`.
        if chars.clone().next() == Some('[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The added lines of `diff` as (file, line, text), the file being the
    /// last one named ("?" before any).
    fn added(diff: &str) -> Vec<(String, u32, String)> {
        let mut file = "?".to_string();
        let mut lines = Vec::new();
        for event in read(diff) {
            match event {
                Event::File(name) => file = name,
                Event::Added { line, text } => lines.push((file.clone(), line, text.into_owned())),
                Event::Removed { .. } | Event::Context { .. } | Event::Hunk => {}
            }
        }
        lines
    }

    /// Every line of `diff` as (kind, new line, old line, text, index of the
    /// diff line it came from); 0 stands for "not on that side".
    fn lines(diff: &str) -> Vec<(char, u32, u32, String, usize)> {
        let mut reader = read(diff);
        let mut lines = Vec::new();
        while let Some(event) = reader.next() {
            let index = reader.index();
            match event {
                Event::Added { line, text } => lines.push(('+', line, 0, text.into_owned(), index)),
                Event::Removed { line, text } => lines.push(('-', 0, line, text.into_owned(), index)),
                Event::Context { line, old_line, text } => lines.push((' ', line, old_line, text.into_owned(), index)),
                Event::File(_) | Event::Hunk => {}
            }
        }
        lines
    }

    #[test]
    fn removed_and_context_lines_are_numbered_on_their_side() {
        let diff = [
            "diff --git a/a.rs b/a.rs",
            "--- a/a.rs",
            "+++ b/a.rs",
            "@@ -10,4 +20,3 @@ fn f() {",
            " keep",
            "-gone",
            "-gone too",
            "+new",
            "",
            "\\ No newline at end of file",
            "diff --git a/k.pem b/k.pem",
            "deleted file mode 100644",
            "--- a/k.pem",
            "+++ /dev/null",
            "@@ -1,2 +0,0 @@",
            "-one",
            "-two",
            "",
        ]
        .join("\n");
        let got = lines(&diff);
        let want = [
            (' ', 20, 10, "keep", 4),
            ('-', 0, 11, "gone", 5),
            ('-', 0, 12, "gone too", 6),
            ('+', 21, 0, "new", 7),
            (' ', 22, 13, "", 8),
            ('-', 0, 1, "one", 15),
            ('-', 0, 2, "two", 16),
        ];
        let want: Vec<_> = want.iter().map(|&(k, n, o, t, i)| (k, n, o, t.to_string(), i)).collect();
        assert_eq!(got, want);
        // A merge numbers a removed line by the first parent holding it.
        let merge =
            "diff --cc m.rs\n--- a/m.rs\n+++ b/m.rs\n@@@ -5,2 -8,2 +5,2 @@@\n  both\n- first\n -second\n++new\n";
        let got: Vec<_> = lines(merge).into_iter().map(|(k, n, o, t, _)| (k, n, o, t)).collect();
        let want = [(' ', 5, 5, "both"), ('-', 0, 6, "first"), ('-', 0, 9, "second"), ('+', 6, 0, "new")];
        let want: Vec<_> = want.iter().map(|&(k, n, o, t)| (k, n, o, t.to_string())).collect();
        assert_eq!(got, want);
    }

    fn check(diff: &str, want: &[(&str, u32, &str)]) {
        let want: Vec<(String, u32, String)> =
            want.iter().map(|&(file, line, text)| (file.to_string(), line, text.to_string())).collect();
        assert_eq!(added(diff), want, "reading\n{diff}");
    }

    #[test]
    fn added_lines_follow_hunks_across_files() {
        let diff = [
            "diff --git a/src/config.rs b/src/config.rs",
            "index 3b18e51..a9c2f0d 100644",
            "--- a/src/config.rs",
            "+++ b/src/config.rs",
            "@@ -1,3 +1,4 @@",
            " //! Settings.",
            "-const OLD: u32 = 1;",
            "+const NEW: u32 = 2;",
            "+// loaded once",
            " const B: u32 = 2;",
            "@@ -40,3 +41,3 @@ fn load() -> Config {",
            "     let a = 1;",
            // A removed line that looks like a `---` header, and an added
            // line that looks like a `+++` one: both are content.
            "--- removed",
            "+++i;",
            "     let b = 2;",
            "\\ No newline at end of file",
            "diff --git a/logo.png b/logo.png",
            "new file mode 100644",
            "index 0000000..3c4a1f2",
            "Binary files /dev/null and b/logo.png differ",
            "diff --git a/old.txt b/old.txt",
            "deleted file mode 100644",
            "index 1234567..0000000",
            "--- a/old.txt",
            "+++ /dev/null",
            "@@ -1,2 +0,0 @@",
            "-gone",
            "-too",
            "diff --git a/.env b/.env",
            "new file mode 100644",
            "--- /dev/null",
            "+++ b/.env",
            "@@ -0,0 +1,2 @@",
            "+APP_ENV=production",
            "+",
            "",
        ]
        .join("\n");
        check(
            &diff,
            &[
                ("src/config.rs", 2, "const NEW: u32 = 2;"),
                ("src/config.rs", 3, "// loaded once"),
                ("src/config.rs", 42, "++i;"),
                (".env", 1, "APP_ENV=production"),
                (".env", 2, ""),
            ],
        );
    }

    #[test]
    fn names_and_prefixes() {
        let diff = |git: &str, plus: &str| {
            format!("diff --git {git}\nindex 1..2 100644\n--- x\n+++ {plus}\n@@ -0,0 +1 @@\n+x\n")
        };
        let found =
            |git: &str, plus: &str| added(&diff(git, plus)).into_iter().map(|(file, ..)| file).collect::<Vec<_>>();
        assert_eq!(found("a/src/a.rs b/src/a.rs", "b/src/a.rs"), ["src/a.rs"]);
        // git appends a tab to a name with a space; other tools a timestamp.
        assert_eq!(found("a/my file.rs b/my file.rs", "b/my file.rs\t"), ["my file.rs"]);
        assert_eq!(found("a/x.rs b/x.rs", "b/x.rs\t2024-01-01 00:00:00"), ["x.rs"]);
        assert_eq!(found(r#""a/caf\303\251.rs" "b/caf\303\251.rs""#, r#""b/caf\303\251.rs""#), ["café.rs"]);
        // diff.mnemonicPrefix and diff.noprefix.
        assert_eq!(found("i/src/a.rs w/src/a.rs", "w/src/a.rs"), ["src/a.rs"]);
        assert_eq!(found("b/a.rs b/a.rs", "b/a.rs"), ["b/a.rs"]);
        // A rename.
        assert_eq!(found("a/old.rs b/new.rs", "b/new.rs"), ["new.rs"]);
    }

    #[test]
    fn merges_colour_line_endings_and_broken_headers() {
        // A merge's combined diff: `++` is new in the merge, ` +` comes from
        // the first parent only; `- ` and ` -` are gone from the result.
        let merge = [
            "diff --cc src/lib.rs",
            "index 1111111,2222222..3333333",
            "--- a/src/lib.rs",
            "+++ b/src/lib.rs",
            "@@@ -1,4 -1,3 +1,4 @@@",
            "  fn a() {}",
            "- const X: u8 = 1;",
            " -const Y: u8 = 2;",
            "++const Z: u8 = 3;",
            " +const W: u8 = 4;",
            "  fn b() {}",
        ]
        .join("\n");
        check(&merge, &[("src/lib.rs", 2, "const Z: u8 = 3;"), ("src/lib.rs", 3, "const W: u8 = 4;")]);

        let plain = "--- a/a.rs\n+++ b/a.rs\n@@ -1,2 +1,2 @@\n ok\n-old\n+new\n";
        check(plain, &[("a.rs", 2, "new")]);
        check(&plain.replace('\n', "\r\n"), &[("a.rs", 2, "new")]);
        let coloured = "\x1b[1mdiff --git a/a.rs b/a.rs\x1b[m\n\x1b[1m--- a/a.rs\x1b[m\n\x1b[1m+++ b/a.rs\x1b[m\n\
             \x1b[36m@@ -1,2 +1,2 @@\x1b[m\n ok\n\x1b[31m-old\x1b[m\n\x1b[32m+new\x1b[m\n";
        check(coloured, &[("a.rs", 2, "new")]);
        // A hunk header that cannot be read still has its lines read,
        // numbered from 1.
        check("+++ b/a.rs\n@@ what @@\n ok\n+new\n", &[("a.rs", 2, "new")]);
        // Lines outside any hunk are not content.
        check("+new\nold\n", &[]);
        // A new side said to start at line 0 (found by the git_diff fuzz
        // target) still numbers its lines from 1.
        check("+++ b/a.rs\n@@ -0,0 +0,1 @@\n+new\n", &[("a.rs", 1, "new")]);
    }

    proptest! {
        #[test]
        fn never_panics(diff in "(?s).{0,400}") {
            let _ = read(&diff).count();
        }
    }
}
