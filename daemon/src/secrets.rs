//! Finding secrets in what is about to leave the machine: every line of a
//! diff, and whole texts such as a relevant document or the test output.
//!
//! `request_review` runs [`redact_diff`] on the diff it is about to hand to
//! the reviewer command and [`scan_text`] on everything else the prompt
//! carries (DESIGN §6). Pure: no IO, no async; the rules are compiled once.
//! A [`Finding`] names the file, the line and the rule, never the matched
//! text, so the message that guards a secret cannot leak it into a log, an
//! agent's transcript or the editor.
//!
//! What happens to a secret depends on where it is:
//!
//! - On an added line, or anywhere in a whole text, it stops the round with
//!   [`describe`]'s text: the change under review would introduce it.
//! - On a removed or a context line it is already in the repository, and
//!   removing it is the fix, so it does not stop the round; it is redacted
//!   instead: the secret becomes `<redacted: RULE>` (a private key's whole
//!   armoured block, line by line, so hunk counts still hold) in the diff
//!   that is given to the reviewer and written to the audit tree, and
//!   [`describe_redacted`] says where in the round's warnings.
//! - The copies of changed files kept for a person's review are redacted
//!   the same way with [`redact_text`].
//!
//! [`diff`] reads a diff's files and lines; `rules` (in `secrets/rules.rs`,
//! whose module doc has the table of rules and the judgement calls about
//! them) decides what on one line is a secret. This module puts them
//! together: which files are allowed, which lines are marked, which lines
//! belong to a multi-line private key, and the messages.

pub mod diff;
mod rules;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;

use crate::glob::Globs;

/// Put on a line, usually in a comment, to say it holds no secret.
pub const ALLOW_MARKER: &str = "parley:allow-secret";

/// How many redactions a warning lists before it only counts the rest.
const LISTED: usize = 20;

/// A secret found on a line. Never holds the secret's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file, as the diff names it (`b/` side, without the prefix), or
    /// the name a whole text was scanned under.
    pub file: String,
    /// 1-based line: in the old file for a removed line, else in the new
    /// file or the text.
    pub line: u32,
    /// The rule's name, e.g. "aws-access-key-id".
    pub rule: &'static str,
    /// Where the line is.
    pub place: Place,
}

/// Where a line with a secret is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A line the diff adds.
    Added,
    /// A line the diff removes (numbered in the old file).
    Removed,
    /// A line the diff shows unchanged, numbered in the new file and, here,
    /// in the old one.
    Context { old_line: u32 },
    /// A line of a whole text.
    Text,
    /// A line of a file's version before the change.
    Before,
    /// A line of a file's version after the change.
    After,
}

impl Place {
    fn label(self) -> &'static str {
        match self {
            Place::Added | Place::Text => "",
            Place::Removed => " (removed line)",
            Place::Context { .. } => " (context line)",
            Place::Before => " (before the change)",
            Place::After => " (after the change)",
        }
    }
}

/// A diff after the scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedDiff {
    /// Secrets on added lines: the round stops.
    pub findings: Vec<Finding>,
    /// Secrets on removed and context lines, redacted in `diff`.
    pub redacted: Vec<Finding>,
    /// The diff with every secret of `redacted` replaced by
    /// `<redacted: RULE>`; the same lines, in the same order.
    pub diff: String,
}

/// The secrets on the ADDED lines of a unified git diff: what
/// [`redact_diff`] reports as stopping the round.
pub fn scan_diff(diff: &str, allow_paths: &[String]) -> Vec<Finding> {
    redact_diff(diff, allow_paths).findings
}

/// Scans every line of a unified git diff (as `git diff` prints it,
/// possibly several files, with `diff --git`, `---`/`+++` headers and
/// `@@ -a,b +c,d @@` hunks; new files from `/dev/null`; binary files
/// "Binary files … differ" are skipped). Secrets on added lines are
/// `findings`; secrets on removed and context lines are `redacted` in the
/// returned diff. Files matching any of `allow_paths` (globs, see glob.rs)
/// are skipped, and so is any line containing the marker
/// `parley:allow-secret`. Findings are in diff order.
///
/// A private key spans lines of which only the first is marked: the lines
/// after a `-----BEGIN … PRIVATE KEY-----` (or a `.ppk` file's
/// `Private-Lines:`) on the same side of the diff belong to it while they
/// look like a key's body, up to its `-----END` line, and so do the body
/// lines shown before an `-----END` line whose start is outside the hunk.
/// An added line in a key is a finding; a removed or context line in one
/// is redacted whole.
///
/// Combined diffs of a merge (`diff --cc`, `@@@ … @@@`) are read too: a line is
/// added when it is in the result and missing from at least one parent.
pub fn redact_diff(diff: &str, allow_paths: &[String]) -> ScannedDiff {
    let allow = Globs::lenient(allow_paths);
    let mut file = FileState::named("(unknown file)".to_string(), &allow);
    let mut scan = Scan::default();
    // Lines of the old file (removed and context lines) and of the new one
    // (added and context lines) each hold their own keys.
    let (mut old, mut new) = (KeyBlock::default(), KeyBlock::default());
    let raw: Vec<&str> = diff.split('\n').collect();
    let mut reader = diff::read(diff);
    while let Some(event) = reader.next() {
        let index = reader.index();
        let (place, number, text) = match event {
            diff::Event::File(name) => {
                file = FileState::named(name, &allow);
                (old, new) = (KeyBlock::default(), KeyBlock::default());
                continue;
            }
            diff::Event::Hunk => {
                old.gap();
                new.gap();
                continue;
            }
            diff::Event::Added { line, text } => (Place::Added, line, text),
            diff::Event::Removed { line, text } => (Place::Removed, line, text),
            diff::Event::Context { line, old_line, text } => (Place::Context { old_line }, line, text),
        };
        if file.skips(&text) {
            continue;
        }
        let line = Line { index, prefix: marker_prefix(raw.get(index).copied().unwrap_or(""), &text), place, number };
        let hits = file.find(&text);
        scan.hits(&file.name, &line, &text, &hits);
        let mut keys = Vec::new();
        if place != Place::Added {
            keys.push((old.feed(&line, &text), true));
        }
        if place != Place::Removed {
            keys.push((new.feed(&line, &text), false));
        }
        for (lines, on_old_side) in keys {
            let block = if on_old_side { &mut old } else { &mut new };
            scan.key(&file.name, lines, block);
        }
    }
    let Scan { findings, redacted, replaced } = scan;
    ScannedDiff { findings, redacted, diff: rebuild(&raw, &replaced) }
}

/// Scans every line of `text`, a whole document named `name` (a relevant
/// document, the summary, the test command's output), the way [`scan_diff`]
/// scans added lines: `allow_paths` and the `parley:allow-secret` marker
/// apply, and line numbers are 1-based.
pub fn scan_text(name: &str, text: &str, allow_paths: &[String]) -> Vec<Finding> {
    let file = FileState::named(name.to_string(), &Globs::lenient(allow_paths));
    let mut findings = Vec::new();
    for (index, raw) in text.split('\n').enumerate() {
        let line = diff::strip_ansi(raw.strip_suffix('\r').unwrap_or(raw));
        if file.skips(&line) {
            continue;
        }
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let found = file.find(&line).into_iter().map(|(_, rule)| Finding {
            file: file.name.clone(),
            line: number,
            rule,
            place: Place::Text,
        });
        findings.extend(found);
    }
    findings
}

/// `text`, the version of the file `name` on one side of a change (`place`
/// is [`Place::Before`] or [`Place::After`]), with every secret in it
/// redacted as [`redact_diff`] redacts removed lines (a private key's block
/// whole), and what was redacted. `allow_paths` and the marker apply.
pub fn redact_text(name: &str, text: &str, allow_paths: &[String], place: Place) -> (String, Vec<Finding>) {
    let file = FileState::named(name.to_string(), &Globs::lenient(allow_paths));
    let mut scan = Scan::default();
    let mut block = KeyBlock::default();
    let raw: Vec<&str> = text.split('\n').collect();
    for (index, raw_line) in raw.iter().enumerate() {
        let stripped = raw_line.strip_suffix('\r').unwrap_or(raw_line);
        if file.skips(stripped) {
            continue;
        }
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let line = Line { index, prefix: String::new(), place, number };
        scan.hits(&file.name, &line, stripped, &file.find(stripped));
        let lines = block.feed(&line, stripped);
        scan.key(&file.name, lines, &mut block);
    }
    let Scan { redacted, replaced, .. } = scan;
    if replaced.is_empty() {
        return (text.to_string(), redacted);
    }
    (rebuild(&raw, &replaced), redacted)
}

/// Renders findings for an error message: one "file:line: rule" per line, plus a
/// sentence saying how to proceed (remove the secret, or allow the path in .parley.toml
/// `[secrets] allow_paths`, or mark the line with `parley:allow-secret`).
pub fn describe(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "the secret scan found nothing".to_string();
    }
    let count = match findings.len() {
        1 => "a possible secret".to_string(),
        n => format!("{n} possible secrets"),
    };
    let mut text = format!("the secret scan found {count}, so nothing was sent to the reviewer:\n");
    for finding in findings {
        // Writing to a String cannot fail.
        let _ = writeln!(text, "{}:{}: {}", finding.file, finding.line, finding.rule);
    }
    text.push_str(
        "remove each secret (and rotate it if it was ever committed or shared); \
         if one is not a secret, allow its file in .parley.toml under `[secrets] allow_paths` \
         or put `parley:allow-secret` in a comment on its line",
    );
    text
}

/// The warning a round gives for what was redacted (`None` when nothing
/// was): how many, and where (`file:line (removed line): rule`, the first
/// 20), never the secrets themselves.
pub fn describe_redacted(redacted: &[Finding]) -> Option<String> {
    let count = match redacted.len() {
        0 => return None,
        1 => "1 possible secret".to_string(),
        n => format!("{n} possible secrets"),
    };
    let mut places: Vec<String> =
        redacted.iter().take(LISTED).map(|f| format!("{}:{}{}: {}", f.file, f.line, f.place.label(), f.rule)).collect();
    if redacted.len() > LISTED {
        places.push(format!("and {} more", redacted.len() - LISTED));
    }
    Some(format!(
        "{count} on removed or unchanged lines {} redacted before anything left the machine \
         (the reviewer, the audit tree and the stored round have `<redacted: RULE>` in {} place): {}. \
         Rotate any secret that was ever committed or shared: removing it from the code does not remove it from git history",
        if redacted.len() == 1 { "was" } else { "were" },
        if redacted.len() == 1 { "its" } else { "their" },
        places.join(", ")
    ))
}

/// The file being scanned, and what its name decides.
struct FileState {
    name: String,
    /// Matches `allow_paths`: its lines are not scanned.
    allowed: bool,
    /// Source code, where an unquoted value is an expression, never a literal.
    source: bool,
}

impl FileState {
    fn named(name: String, allow: &Globs) -> FileState {
        let allowed = allow.is_match(&name);
        let source = rules::is_source_code(&name);
        FileState { name, allowed, source }
    }

    /// Whether a line of this file is left alone: the file is allowed, or
    /// the line carries the marker.
    fn skips(&self, text: &str) -> bool {
        self.allowed || text.contains(ALLOW_MARKER)
    }

    /// The secrets on line `text` of this file, with their spans.
    fn find(&self, text: &str) -> Vec<(Range<usize>, &'static str)> {
        rules::find(text, !self.source)
    }
}

/// One line being scanned: where it is in the diff or text, and the markers
/// before its text (`-`, ` `, `+`, or several in a merge's diff).
#[derive(Debug, Clone)]
struct Line {
    index: usize,
    prefix: String,
    place: Place,
    number: u32,
}

impl Line {
    fn finding(&self, file: &str, rule: &'static str) -> Finding {
        Finding { file: file.to_string(), line: self.number, rule, place: self.place }
    }
}

/// What a scan has found so far, and the lines it rewrites.
#[derive(Default)]
struct Scan {
    findings: Vec<Finding>,
    redacted: Vec<Finding>,
    /// Redacted lines by their index, whole (markers included).
    replaced: BTreeMap<usize, String>,
}

impl Scan {
    /// Records the secrets `hits` on `line`: findings on an added line,
    /// else redacted in place.
    fn hits(&mut self, file: &str, line: &Line, text: &str, hits: &[(Range<usize>, &'static str)]) {
        if hits.is_empty() {
            return;
        }
        // Each rule once per line: the line is what a person looks at.
        let mut rules: Vec<&'static str> = Vec::with_capacity(hits.len());
        for &(_, rule) in hits {
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
        let found = rules.into_iter().map(|rule| line.finding(file, rule));
        if line.place == Place::Added {
            self.findings.extend(found);
            return;
        }
        self.redacted.extend(found);
        let mut out = line.prefix.clone();
        let mut at = 0;
        for (span, rule) in hits {
            out.push_str(text.get(at..span.start).unwrap_or(""));
            let _ = write!(out, "<redacted: {rule}>");
            at = span.end;
        }
        out.push_str(text.get(at..).unwrap_or(""));
        self.replaced.insert(line.index, out);
    }

    /// Records `lines`, found to belong to a private key of `block`: an
    /// added one is a finding, the others are redacted whole; each block is
    /// reported once of each kind (its first line, when no rule marked it).
    fn key(&mut self, file: &str, lines: Vec<Line>, block: &mut KeyBlock) {
        for line in lines {
            if line.place == Place::Added {
                if !block.added_reported {
                    block.added_reported = true;
                    self.findings.push(line.finding(file, KEY_RULE));
                }
                continue;
            }
            if !block.redacted_reported {
                block.redacted_reported = true;
                // A context line is on both sides: report it once.
                let finding = line.finding(file, KEY_RULE);
                if self.redacted.last() != Some(&finding) {
                    self.redacted.push(finding);
                }
            }
            self.replaced.insert(line.index, format!("{}<redacted: {KEY_RULE}>", line.prefix));
        }
    }
}

/// The rule a key's body lines are reported under.
const KEY_RULE: &str = "private-key";

/// The private key a side of a file is in, if any.
#[derive(Default)]
struct KeyBlock {
    /// Inside a key's armour, after its first line.
    open: bool,
    /// Body-like lines seen since the last line that was not: a key whose
    /// first line is outside the hunk, should an `-----END` line follow.
    run: Vec<Line>,
    /// The key was reported as a finding (on an added line).
    added_reported: bool,
    /// The key was reported as redacted.
    redacted_reported: bool,
}

impl KeyBlock {
    /// Feeds the next line of this side; answers the lines now known to be
    /// part of a key: this one, and the body lines before an `-----END`
    /// whose start was not seen.
    fn feed(&mut self, line: &Line, text: &str) -> Vec<Line> {
        if self.open {
            if rules::closes_key_block(text) {
                self.open = false;
                return vec![line.clone()];
            }
            if rules::is_key_body(text) {
                return vec![line.clone()];
            }
            self.open = false;
        }
        if rules::opens_key_block(text) {
            // The line is marked by its rule, reported with the others.
            self.open = true;
            self.run.clear();
            self.added_reported = line.place == Place::Added;
            self.redacted_reported = line.place != Place::Added;
            return vec![line.clone()];
        }
        if rules::closes_key_block(text) {
            let mut run = std::mem::take(&mut self.run);
            if run.is_empty() {
                return run;
            }
            self.added_reported = false;
            self.redacted_reported = false;
            run.push(line.clone());
            return run;
        }
        // A key's body lines are long (64 to 76 characters); a short word
        // such as `else` is not one.
        if text.trim().len() >= 16 && rules::is_key_body(text) {
            self.run.push(line.clone());
        } else {
            self.run.clear();
        }
        Vec::new()
    }

    /// Lines of the file are skipped (between hunks): a key can only go on
    /// with body lines, and a run of them is broken.
    fn gap(&mut self) {
        self.run.clear();
    }
}

/// The markers before `text` on `raw`, the diff line it was read from.
fn marker_prefix(raw: &str, text: &str) -> String {
    let line = diff::strip_ansi(raw.strip_suffix('\r').unwrap_or(raw));
    let markers = line.len().saturating_sub(text.len());
    match line.get(..markers) {
        // An empty context line whose space was stripped on the way.
        Some("") if text.is_empty() => " ".to_string(),
        Some(markers) => markers.to_string(),
        None => String::new(),
    }
}

/// `raw` joined again with `replaced` lines put in, keeping each line's `\r`.
fn rebuild(raw: &[&str], replaced: &BTreeMap<usize, String>) -> String {
    let mut out = String::with_capacity(raw.iter().map(|l| l.len() + 1).sum());
    for (index, line) in raw.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        match replaced.get(&index) {
            Some(new) => {
                out.push_str(new);
                if line.ends_with('\r') {
                    out.push('\r');
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A diff adding `lines` as the new file `path`, the way `git diff` prints it.
    pub(crate) fn new_file(path: &str, lines: &[&str]) -> String {
        let mut diff = format!(
            "diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..8f3c2d1\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
            lines.len()
        );
        for line in lines {
            diff.push('+');
            diff.push_str(line);
            diff.push('\n');
        }
        diff
    }

    pub(crate) fn check(diff: &str, allow: &[&str], want: &[(&str, u32, &str)]) {
        let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
        let found = scan_diff(diff, &allow);
        let got: Vec<(&str, u32, &str)> = found.iter().map(|f| (f.file.as_str(), f.line, f.rule)).collect();
        assert_eq!(got, want, "scanning\n{diff}");
    }

    const AWS: &str = concat!("AKIA", "Z7QX3M5N2PLWVKTR");
    const GHS: &str = concat!("ghs", "_rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsiVpz");
    const NPM: &str = concat!("npm", "_iM0OGr4hTxoF54Fzbka8FRCztUjAwyuh1vau");
    const SLACK: &str = concat!("xoxb", "-7774121547280-3852808414852-wXoIIXGvOoNZYW2mZp0zVZom");

    #[test]
    fn line_numbers_follow_hunks_across_files() {
        let diff = [
            "diff --git a/src/config.rs b/src/config.rs",
            "index 3b18e51..a9c2f0d 100644",
            "--- a/src/config.rs",
            "+++ b/src/config.rs",
            "@@ -1,4 +1,5 @@",
            " //! Settings.",
            &format!("-const OLD: &str = \"{AWS}\";"),
            &format!("+const KEY_ID: &str = \"{AWS}\";"),
            "+// loaded once",
            &format!(" const LEGACY: &str = \"{GHS}\";"),
            " const B: u32 = 2;",
            "@@ -40,5 +41,6 @@ fn load() -> Config {",
            "     let a = 1;",
            &format!("-    let token = \"{GHS}\";"),
            // A removed line that looks like a `---` header, and an added
            // line that looks like a `+++` one: both are content.
            &format!("--- {AWS}"),
            "+    let token = env(\"T\");",
            &format!("+++i; // {SLACK}"),
            &format!("+    let npm = \"{NPM}\";"),
            "     let b = 2;",
            "     let c = 3;",
            "\\ No newline at end of file",
            "diff --git a/.env b/.env",
            "new file mode 100644",
            "index 0000000..8f3c2d1",
            "--- /dev/null",
            "+++ b/.env",
            "@@ -0,0 +1,3 @@",
            "+APP_ENV=production",
            &format!("+GITHUB_TOKEN={GHS}"),
            "+LOG=info",
            "diff --git a/logo.png b/logo.png",
            "new file mode 100644",
            "index 0000000..3c4a1f2",
            "Binary files /dev/null and b/logo.png differ",
            "diff --git a/old.pem b/old.pem",
            "deleted file mode 100644",
            "index 1234567..0000000",
            "--- a/old.pem",
            "+++ /dev/null",
            "@@ -1,2 +0,0 @@",
            concat!("------BEGIN RSA ", "PRIVATE KEY-----"),
            "-MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
            // The header names a path that looks like a key; only content counts.
            &format!("diff --git a/notes/{AWS}.txt b/notes/{AWS}.txt"),
            "index 1111111..2222222 100644",
            &format!("--- a/notes/{AWS}.txt"),
            &format!("+++ b/notes/{AWS}.txt"),
            "@@ -1 +1 @@",
            "-hello",
            "+hello, world",
            "",
        ]
        .join("\n");
        check(
            &diff,
            &[],
            &[
                ("src/config.rs", 2, "aws-access-key-id"),
                ("src/config.rs", 43, "slack-token"),
                ("src/config.rs", 44, "npm-token"),
                (".env", 2, "github-token"),
            ],
        );
        let described = describe(&scan_diff(&diff, &[]));
        assert!(described.starts_with("the secret scan found 4 possible secrets"), "{described}");
        assert!(described.contains("\nsrc/config.rs:43: slack-token\n"), "{described}");
        assert!(described.contains("[secrets] allow_paths") && described.contains(ALLOW_MARKER), "{described}");
        for secret in [AWS, GHS, NPM, SLACK] {
            assert!(!described.contains(secret), "{described}");
        }
    }

    #[test]
    fn allowed_paths_and_marked_lines_are_skipped() {
        let env = new_file(".env", &["APP_ENV=production", &format!("GITHUB_TOKEN={GHS}")]);
        let fixture = new_file("tests/fixtures/aws.txt", &[AWS]);
        check(&env, &[], &[(".env", 2, "github-token")]);
        check(&env, &["*.env", ".env"], &[]);
        check(&env, &["config/.env"], &[(".env", 2, "github-token")]);
        check(&fixture, &["tests/fixtures/**"], &[]);
        check(&fixture, &["fixtures/"], &[]);
        check(&fixture, &["*.rs"], &[("tests/fixtures/aws.txt", 1, "aws-access-key-id")]);
        let marked = new_file("src/a.rs", &[&format!("const K: &str = \"{AWS}\"; // parley:allow-secret"), AWS]);
        check(&marked, &[], &[("src/a.rs", 2, "aws-access-key-id")]);
    }

    #[test]
    fn describing_nothing() {
        assert_eq!(describe(&[]), "the secret scan found nothing");
        let one = [Finding { file: "a.rs".into(), line: 3, rule: "npm-token", place: Place::Added }];
        assert!(describe(&one).starts_with("the secret scan found a possible secret, so nothing was sent"));
    }

    #[test]
    fn whole_texts_are_scanned_line_by_line() {
        let doc = format!("# Deploying\n\nUse the key below.\n\nexport AWS_ACCESS_KEY_ID={AWS}\n");
        assert_eq!(
            scan_text("docs/deploy.md", &doc, &[]),
            [Finding { file: "docs/deploy.md".into(), line: 5, rule: "aws-access-key-id", place: Place::Text }]
        );
        assert!(scan_text("docs/deploy.md", &doc, &["docs/*.md".to_string()]).is_empty(), "allowed by path");
        let marked = format!("export AWS_ACCESS_KEY_ID={AWS} # {ALLOW_MARKER}\n");
        assert!(scan_text("docs/deploy.md", &marked, &[]).is_empty(), "allowed by the marker");
        let output = format!("running 3 tests\r\n\x1b[31mGITHUB_TOKEN={GHS}\x1b[0m\r\n");
        assert_eq!(
            scan_text("(test output)", &output, &[]),
            [Finding { file: "(test output)".into(), line: 2, rule: "github-token", place: Place::Text }]
        );
    }

    const KEY_BEGIN: &str = concat!("-----BEGIN OPENSSH ", "PRIVATE KEY-----");
    const KEY_BODY: &[&str] = &[
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "QyNTUxOQAAACDc7x8Yw2pQ4ljFZqHc0Z3bM6yT0jv6bKxH6WQ6jJxZqwAAAJiJq3sGiat7",
        "BgAAAAtzc2gtZWQyNTUxOQAAACDc7x8Yw2pQ4ljFZqHc0Z3bM6yT0jv6bKxH6WQ6jJxZqw",
    ];
    const KEY_END: &str = concat!("-----END OPENSSH ", "PRIVATE KEY-----");

    /// A finding or redaction as (file, line, rule, place label).
    fn places(findings: &[Finding]) -> Vec<(String, u32, &'static str, &'static str)> {
        findings.iter().map(|f| (f.file.clone(), f.line, f.rule, f.place.label())).collect()
    }

    fn owned(want: &[(&str, u32, &'static str, &'static str)]) -> Vec<(String, u32, &'static str, &'static str)> {
        want.iter().map(|&(file, line, rule, label)| (file.to_string(), line, rule, label)).collect()
    }

    /// Asserts that none of `secrets` is left in `text`.
    fn assert_gone(text: &str, secrets: &[&str]) {
        for secret in secrets {
            assert!(!text.contains(secret), "{secret} is still in\n{text}");
        }
    }

    #[test]
    fn a_removed_private_key_is_redacted_whole_and_does_not_stop_the_round() {
        let mut diff = String::from(
            "diff --git a/id_ed25519 b/id_ed25519\ndeleted file mode 100600\nindex 1234567..0000000\n\
             --- a/id_ed25519\n+++ /dev/null\n@@ -1,5 +0,0 @@\n",
        );
        for line in [KEY_BEGIN].iter().chain(KEY_BODY).chain([KEY_END].iter()) {
            diff.push_str(&format!("-{line}\n"));
        }
        let scanned = redact_diff(&diff, &[]);
        assert_eq!(scanned.findings, []);
        assert_eq!(places(&scanned.redacted), owned(&[("id_ed25519", 1, "private-key", " (removed line)")]));
        assert_gone(&scanned.diff, KEY_BODY);
        assert!(!scanned.diff.contains("PRIVATE KEY"), "{}", scanned.diff);
        // The same lines, each redacted: the hunk still counts right.
        let redacted: Vec<&str> = scanned.diff.lines().skip(6).collect();
        assert_eq!(redacted, ["-<redacted: private-key>"; 5]);
        assert_eq!(scanned.diff.lines().count(), diff.lines().count());
        // Allowed paths are left as they are.
        assert_eq!(redact_diff(&diff, &["id_*".to_string()]).diff, diff);
    }

    #[test]
    fn secrets_on_context_lines_are_redacted_in_place() {
        let diff = [
            "diff --git a/.env b/.env",
            "--- a/.env",
            "+++ b/.env",
            "@@ -1,3 +1,3 @@",
            "-LOG=debug",
            "+LOG=info",
            &format!(" GITHUB_TOKEN={GHS}"),
            &format!(" AWS={AWS}\r"),
            "",
        ]
        .join("\n");
        let scanned = redact_diff(&diff, &[]);
        assert_eq!(scanned.findings, []);
        assert_eq!(
            places(&scanned.redacted),
            owned(&[
                (".env", 2, "github-token", " (context line)"),
                (".env", 3, "aws-access-key-id", " (context line)")
            ])
        );
        assert!(scanned.diff.contains("\n GITHUB_TOKEN=<redacted: github-token>\n"), "{}", scanned.diff);
        assert!(scanned.diff.contains("\n AWS=<redacted: aws-access-key-id>\r\n"), "{}", scanned.diff);
        assert_gone(&scanned.diff, &[GHS, AWS]);
        // An added line with a secret still stops the round.
        let added = diff.replace(" GITHUB_TOKEN", "+GITHUB_TOKEN").replace("-LOG=debug\n", "");
        let added = added.replace("@@ -1,3 +1,3 @@", "@@ -1,1 +1,3 @@");
        let scanned = redact_diff(&added, &[]);
        assert_eq!(places(&scanned.findings), owned(&[(".env", 2, "github-token", "")]));
        assert_eq!(places(&scanned.redacted), owned(&[(".env", 3, "aws-access-key-id", " (context line)")]));
        assert_eq!(scan_diff(&added, &[]), scanned.findings);
    }

    #[test]
    fn a_key_follows_its_lines_on_each_side_of_the_diff() {
        // The armour is unchanged context, the body replaced: the new body
        // is a secret being added, the old one is redacted.
        let diff = [
            "diff --git a/deploy/key.pem b/deploy/key.pem",
            "--- a/deploy/key.pem",
            "+++ b/deploy/key.pem",
            "@@ -1,3 +1,3 @@",
            &format!(" {KEY_BEGIN}"),
            &format!("-{}", KEY_BODY[0]),
            &format!("+{}", KEY_BODY[1]),
            &format!(" {KEY_END}"),
            "",
        ]
        .join("\n");
        let scanned = redact_diff(&diff, &[]);
        assert_eq!(places(&scanned.findings), owned(&[("deploy/key.pem", 2, "private-key", "")]));
        assert_eq!(places(&scanned.redacted), owned(&[("deploy/key.pem", 1, "private-key", " (context line)")]));
        assert!(!scanned.diff.contains(KEY_BODY[0]) && !scanned.diff.contains("PRIVATE KEY"), "{}", scanned.diff);

        // A hunk that starts inside a key: its body lines before the
        // `-----END` are the key's, and the code after it is not.
        let diff = [
            "diff --git a/src/fixtures.py b/src/fixtures.py",
            "--- a/src/fixtures.py",
            "+++ b/src/fixtures.py",
            "@@ -40,5 +40,5 @@ KEY = '''",
            &format!(" {}", KEY_BODY[1]),
            &format!(" {}", KEY_BODY[2]),
            &format!(" {KEY_END}"),
            " '''",
            "-USER = 'a'",
            "+USER = 'b'",
            "",
        ]
        .join("\n");
        let scanned = redact_diff(&diff, &[]);
        assert_eq!(scanned.findings, []);
        assert_eq!(places(&scanned.redacted), owned(&[("src/fixtures.py", 40, "private-key", " (context line)")]));
        assert_gone(&scanned.diff, KEY_BODY);
        assert!(scanned.diff.contains("\n '''\n-USER = 'a'\n+USER = 'b'\n"), "{}", scanned.diff);
        // An `-----END` after ordinary code hides nothing.
        let code = new_file("src/pem.rs", &["fn parse() {", "    else_branch();", &format!("    // {KEY_END}"), "}"]);
        assert_eq!(redact_diff(&code, &[]), ScannedDiff { findings: vec![], redacted: vec![], diff: code.clone() });
    }

    #[test]
    fn a_files_versions_are_redacted_like_removed_lines() {
        let before = format!("{KEY_BEGIN}\n{}\n{KEY_END}\nAPP=1\nGITHUB_TOKEN={GHS}\n", KEY_BODY.join("\n"));
        let (text, redacted) = redact_text("keys/all.txt", &before, &[], Place::Before);
        assert_eq!(
            places(&redacted),
            owned(&[
                ("keys/all.txt", 1, "private-key", " (before the change)"),
                ("keys/all.txt", 7, "github-token", " (before the change)")
            ])
        );
        let want = "<redacted: private-key>\n".repeat(5) + "APP=1\nGITHUB_TOKEN=<redacted: github-token>\n";
        assert_eq!(text, want);
        let (same, none) = redact_text("a.txt", "nothing here\n", &[], Place::After);
        assert_eq!((same.as_str(), none), ("nothing here\n", vec![]));
        let (kept, none) = redact_text("keys/all.txt", &before, &["keys/**".to_string()], Place::Before);
        assert_eq!((kept, none), (before, vec![]));
    }

    #[test]
    fn redactions_are_described_without_the_secrets() {
        assert_eq!(describe_redacted(&[]), None);
        let one = Finding { file: ".env".into(), line: 2, rule: "github-token", place: Place::Context { old_line: 2 } };
        let text = describe_redacted(std::slice::from_ref(&one)).expect("one redaction");
        assert!(text.starts_with("1 possible secret on removed or unchanged lines was redacted"), "{text}");
        assert!(text.contains(": .env:2 (context line): github-token."), "{text}");
        let many: Vec<Finding> = (1..=25).map(|line| Finding { line, place: Place::Removed, ..one.clone() }).collect();
        let text = describe_redacted(&many).expect("redactions");
        assert!(text.starts_with("25 possible secrets on removed or unchanged lines were redacted"), "{text}");
        assert!(text.contains(".env:20 (removed line): github-token, and 5 more."), "{text}");
    }

    proptest! {
        #[test]
        fn never_panics_on_any_text(diff in "(?s).{0,400}") {
            let _ = scan_diff(&diff, &["*.x".to_string()]);
        }

        #[test]
        fn redacting_keeps_every_line_and_leaves_clean_diffs_alone(lines in prop::collection::vec(prop_oneof![
            Just("diff --git a/x b/x".to_string()),
            Just("@@ -1,3 +1,3 @@".to_string()),
            Just(format!(" {KEY_BEGIN}")),
            Just(format!("-{}", KEY_BODY[0])),
            Just(format!("+{KEY_END}")),
            Just(format!(" TOKEN={GHS}")),
            "[-+ ]{0,2}[a-z =]{0,20}",
        ], 0..30)) {
            let diff = lines.join("\n");
            let scanned = redact_diff(&diff, &[]);
            prop_assert_eq!(scanned.diff.split('\n').count(), diff.split('\n').count());
            if scanned.redacted.is_empty() {
                prop_assert_eq!(&scanned.diff, &diff);
            }
        }

        #[test]
        fn never_panics_on_diff_shaped_text(lines in prop::collection::vec(prop_oneof![
            Just("diff --git a/x b/x".to_string()),
            Just("diff --cc x".to_string()),
            Just("+++ b/x".to_string()),
            Just("+++ \"b/\\30".to_string()),
            Just("--- /dev/null".to_string()),
            "@{1,4} ?[-+]?[0-9,]{0,6} ?[-+]?[0-9,]{0,6} ?[-+]?[0-9,]{0,6} @{0,4}.{0,4}",
            "[-+ \\\\]{0,3}.{0,40}",
            "[-+ ]{0,2}(token|AKIA|ghp_|sk-|eyJ|-----BEGIN)[=: \"'$a-zA-Z0-9./_-]{0,60}",
            "\x1b\\[[0-9;]{0,4}.{0,10}",
        ], 0..40)) {
            let _ = scan_diff(&lines.join("\n"), &["*.x".to_string()]);
        }
    }
}
