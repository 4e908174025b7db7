//! Finding secrets in what is about to leave the machine: the added lines of
//! a diff, and whole texts such as a relevant document or the test output.
//!
//! `request_review` runs [`scan_diff`] on the diff it is about to hand to the
//! reviewer command and [`scan_text`] on everything else the prompt carries,
//! and any finding aborts the review with [`describe`]'s text (DESIGN §6). Pure: no IO, no async; the rules are compiled once.
//! A [`Finding`] names the file, the line and the rule, never the matched
//! text, so the error that guards a secret cannot leak it into a log, an
//! agent's transcript or the editor.
//!
//! # Rules
//!
//! | rule | catches | not reported |
//! | --- | --- | --- |
//! | `private-key` | a `-----BEGIN … PRIVATE KEY-----` armour line: RSA, EC, DSA, OPENSSH, ENCRYPTED, plain, and PGP's `PRIVATE KEY BLOCK` | public keys, certificates |
//! | `aws-access-key-id` | `AKIA`/`ASIA` + 16 uppercase letters or digits, as a whole word | AWS's documentation key `AKIAIOSFODNN7EXAMPLE` and other placeholders |
//! | `aws-secret-access-key` | 40 base64 characters assigned to `aws_secret_access_key`, `SecretAccessKey`, `aws_secret` … | placeholders such as AWS's `…EXAMPLEKEY` |
//! | `github-token` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 36 or more; `github_pat_` + 82 | |
//! | `gitlab-token` | `glpat-` (and `gldt-`, `glrt-`, `glptt-` …) + 20 or more | |
//! | `slack-token` | `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xoxe-`, `xoxo-` + digits + the rest | `xoxb-your-token` and the like, which have no digits |
//! | `slack-webhook` | `hooks.slack.com/services/…` (and `/workflows/`, `/triggers/`) | the docs' `T00000000/B00000000/XXXX…` |
//! | `google-api-key` | `AIza` + 35 | |
//! | `stripe-live-key` | `sk_live_`, `rk_live_` + 16 or more | test-mode keys (`sk_test_`), unless the generic rule sees one assigned |
//! | `openai-api-key` | `sk-proj-`, `sk-svcacct-`, `sk-admin-` + 20 or more; legacy `sk-` + 48 | |
//! | `anthropic-api-key` | `sk-ant-` + 32 or more | |
//! | `npm-token` | `npm_` + 36 | |
//! | `json-web-token` | `eyJ….eyJ….signature`: a signed JWT | unsigned JWTs (`alg: none`) carry no credential |
//! | `bearer-token` | a random-looking token after `Bearer ` | `Bearer ${TOKEN}`, `Bearer <token>` |
//! | `generic-secret` | a value of 16 or more characters with a digit and at least 3.5 bits of entropy per character (3.0 for hex), assigned (`=`, `:`, `:=`, `=>`) quoted or bare to a name containing secret, token, password, passwd, passphrase, credential, api_key/apikey, access_key, private_key (which covers client_secret), or ending in `_pass` | see below |
//!
//! Every rule but `private-key` skips obvious placeholders: values containing
//! example, dummy, placeholder, redacted, sample, changeme, replace (in any
//! case), your or fake (all lower or all upper case), `<…>`, `${…}`, `{{…}}`,
//! `$(…)`, `process.env`, `os.environ`,
//! `getenv`, `env::var`, `secrets.`, a run of six identical characters
//! (`xxxxxx`, `******`, `000000`), or `12345`/`abcdef`. Real tokens
//! contain these only by a chance too small to matter.
//!
//! The generic rule is the one that meets ordinary code, so it also skips
//! values that read as names rather than randomness (`my-app-tls-secret-v2`,
//! `SOME_CONSTANT_V2`, `self.api_key`: every `-`/`_`/`.`-separated part a
//! word with at most a short number), URLs, paths and `a::b` paths. An
//! unquoted value counts only outside source code (judged by extension: in
//! `.rs`, `.py`, `.ts` … a literal is quoted, and `token: TokenStream` is a
//! type), and not when a `(`, `[` or `{` follows it (a call or an index).
//! Without a secret-ish name nothing is reported at all, which is what keeps
//! lock-file hashes (`sha512-…`, Cargo.lock checksums), UUIDs, git SHAs,
//! base64 fixtures and CSS colours quiet. Over the 10,700 source files of
//! this workspace's dependencies (236 MB) the rules report three lines: two
//! PEM headers inside a regex corpus and one test fixture token.
//!
//! When rules overlap on a line, the first in the table wins and the rest are
//! not reported for that span: `GITHUB_TOKEN=ghp_…` is a `github-token`, not
//! also a `generic-secret`.
//!
//! # Judgement calls
//!
//! - `AKIAIOSFODNN7EXAMPLE` is not reported. It is the key AWS prints in its
//!   documentation, it grants nothing, and it is pasted into READMEs and
//!   tests everywhere; gitleaks and trufflehog skip it for the same reason.
//!   A realistic fake such as `AKIA` + 16 random characters is reported.
//! - Only added lines are scanned, as specified: the question is whether
//!   this change introduces a secret. Removed and context lines still travel
//!   to the reviewer inside the diff, so a secret that is already committed
//!   and sits next to a change is not caught here.
//! - The entropy floor is 3.5 bits per character as specified, but 3.0 for
//!   hexadecimal values, which cannot reach much more: at 3.5 one random
//!   32-digit hex key in five would pass unreported.
//! - A `-----BEGIN … PRIVATE KEY-----` line is reported even in code that
//!   only parses PEM; such a file is rare and is what `allow_paths` is for.
//! - The parser follows hunk line counts, so an added line that starts with
//!   `++` is content and a `+++ b/…` header is not; a hunk header it cannot
//!   read still has its `+` lines scanned, numbered from 1, because a
//!   malformed diff is no reason to let a secret through. ANSI colour codes
//!   (a user's `color.diff = always`) are stripped before parsing.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::glob;

/// Put on a line, usually in a comment, to say it holds no secret.
pub const ALLOW_MARKER: &str = "parley:allow-secret";

/// A secret found in an added line. Never holds the secret's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file, as the diff names it (`b/` side, without the prefix).
    pub file: String,
    /// 1-based line in the new file.
    pub line: u32,
    /// The rule's name, e.g. "aws-access-key-id".
    pub rule: &'static str,
}

/// Scans the ADDED lines of a unified git diff (as `git diff` prints it, possibly several
/// files, with `diff --git`, `---`/`+++` headers and `@@ -a,b +c,d @@` hunks; new files
/// from `/dev/null`; binary files "Binary files … differ" are skipped). Files matching any
/// of `allow_paths` (globs, see glob.rs) are skipped, and so is any line containing the
/// marker `parley:allow-secret`. Findings are in diff order.
///
/// Combined diffs of a merge (`diff --cc`, `@@@ … @@@`) are read too: a line is
/// added when it is in the result and missing from at least one parent.
pub fn scan_diff(diff: &str, allow_paths: &[String]) -> Vec<Finding> {
    let mut scan = Scan { allow_paths, file: FileState::unknown(allow_paths), hunk: None, findings: Vec::new() };
    for raw in diff.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let line = strip_ansi(line);
        scan.line(&line);
    }
    scan.findings
}

/// Scans every line of `text`, a whole document named `name` (a relevant
/// document, the summary, the test command's output), the way [`scan_diff`]
/// scans added lines: `allow_paths` and the `parley:allow-secret` marker
/// apply, and line numbers are 1-based.
pub fn scan_text(name: &str, text: &str, allow_paths: &[String]) -> Vec<Finding> {
    let file = FileState::named(name.to_string(), String::new(), allow_paths);
    if file.allowed {
        return Vec::new();
    }
    let mut findings = Vec::new();
    for (index, raw) in text.split('\n').enumerate() {
        let line = strip_ansi(raw.strip_suffix('\r').unwrap_or(raw));
        if line.contains(ALLOW_MARKER) {
            continue;
        }
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        findings.extend(scan_line(&line, !file.source).into_iter().map(|rule| Finding {
            file: name.to_string(),
            line: number,
            rule,
        }));
    }
    findings
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

/// Where the parser is in the diff.
struct Scan<'a> {
    allow_paths: &'a [String],
    file: FileState,
    /// Inside a hunk, until its line counts run out.
    hunk: Option<Hunk>,
    findings: Vec<Finding>,
}

struct FileState {
    name: String,
    /// Matches `allow_paths`: its lines are not scanned.
    allowed: bool,
    /// Source code, where an unquoted value is an expression, never a literal.
    source: bool,
    /// The prefix of new-side names (`b/`, or `w/` with `diff.mnemonicPrefix`,
    /// or none with `diff.noprefix`), read off the `diff --git` line.
    new_prefix: String,
}

impl FileState {
    fn unknown(allow_paths: &[String]) -> FileState {
        FileState::named("(unknown file)".to_string(), "b/".to_string(), allow_paths)
    }

    fn named(name: String, new_prefix: String, allow_paths: &[String]) -> FileState {
        let allowed = glob::matches_any(allow_paths, &name);
        let source = is_source_code(&name);
        FileState { name, allowed, source, new_prefix }
    }
}

impl Scan<'_> {
    fn line(&mut self, line: &str) {
        if let Some(hunk) = &mut self.hunk {
            match hunk.step(line) {
                Step::Added { content, number } => {
                    if !self.file.allowed && !content.contains(ALLOW_MARKER) {
                        let file = &self.file.name;
                        self.findings.extend(scan_line(content, !self.file.source).into_iter().map(|rule| Finding {
                            file: file.clone(),
                            line: number,
                            rule,
                        }));
                    }
                }
                Step::Other => {}
                Step::End => {
                    // Not a hunk line: the hunk was shorter than its header
                    // said. Read the line as a header instead.
                    self.hunk = None;
                    self.header(line);
                    return;
                }
            }
            if hunk.done() {
                self.hunk = None;
            }
            return;
        }
        self.header(line);
    }

    fn header(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (name, new_prefix) = names_from_diff_git(rest);
            self.file = FileState::named(name, new_prefix, self.allow_paths);
        } else if let Some(rest) = line.strip_prefix("diff --cc ").or_else(|| line.strip_prefix("diff --combined ")) {
            self.file = FileState::named(header_path(rest), "b/".to_string(), self.allow_paths);
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            let path = header_path(rest);
            // A deleted file has no new side; its hunks add nothing, so the
            // name from `diff --git` can stay.
            if path != "/dev/null" {
                let name = match path.strip_prefix(self.file.new_prefix.as_str()) {
                    Some(name) if !name.is_empty() => name.to_string(),
                    _ => path,
                };
                let new_prefix = std::mem::take(&mut self.file.new_prefix);
                self.file = FileState::named(name, new_prefix, self.allow_paths);
            }
        } else if line.starts_with("@@") {
            let hunk = Hunk::parse(line).unwrap_or_else(|| Hunk::unreadable(line));
            if !hunk.done() {
                self.hunk = Some(hunk);
            }
        }
        // Everything else (index, mode, rename, similarity and `---` lines,
        // "Binary files … differ", a `GIT binary patch`) says nothing about
        // added text.
    }
}

/// One hunk's remaining line counts.
struct Hunk {
    /// Lines still to come from each parent: one for a plain diff, one per
    /// parent for a merge's combined diff.
    parents: Vec<u32>,
    /// Lines still to come in the new file.
    new: u32,
    /// The new-file number of the next line that is in the new file.
    next_line: u32,
}

enum Step<'a> {
    Added { content: &'a str, number: u32 },
    Other,
    End,
}

impl Hunk {
    /// Reads `@@ -a,b +c,d @@ …`, or `@@@ -a,b -c,d +e,f @@@ …` for a merge.
    fn parse(line: &str) -> Option<Hunk> {
        let ats = line.bytes().take_while(|&b| b == b'@').count();
        let fence = line.get(..ats)?;
        let ranges = line.get(ats..)?.split(fence).next()?;
        let mut parents = Vec::new();
        let mut new = None;
        for range in ranges.split_whitespace() {
            if let Some(range) = range.strip_prefix('-') {
                parents.push(parse_range(range)?.1);
            } else if let Some(range) = range.strip_prefix('+') {
                new = Some(parse_range(range)?);
            } else {
                return None;
            }
        }
        let (start, count) = new?;
        (parents.len() == ats - 1).then_some(Hunk { parents, new: count, next_line: start })
    }

    /// A hunk whose header could not be read: its lines are still scanned,
    /// numbered from 1, until a line that cannot be part of a hunk.
    fn unreadable(line: &str) -> Hunk {
        let parents = line.bytes().take_while(|&b| b == b'@').count().saturating_sub(1).max(1);
        Hunk { parents: vec![u32::MAX; parents], new: u32::MAX, next_line: 1 }
    }

    fn done(&self) -> bool {
        self.new == 0 && self.parents.iter().all(|&n| n == 0)
    }

    fn step<'a>(&mut self, line: &'a str) -> Step<'a> {
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
        if removed {
            // In the parents marked `-`, not in the new file.
            for (i, remaining) in self.parents.iter_mut().enumerate() {
                if marker(i) == Some(b'-') {
                    *remaining = remaining.saturating_sub(1);
                }
            }
            return Step::Other;
        }
        // In the new file, and in the parents marked ` `.
        for (i, remaining) in self.parents.iter_mut().enumerate() {
            if marker(i) == Some(b' ') {
                *remaining = remaining.saturating_sub(1);
            }
        }
        self.new = self.new.saturating_sub(1);
        let number = self.next_line;
        self.next_line = self.next_line.saturating_add(1);
        if added { Step::Added { content: line.get(columns..).unwrap_or(""), number } } else { Step::Other }
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
fn strip_ansi(line: &str) -> Cow<'_, str> {
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

/// How a rule's regex match is confirmed.
#[derive(Clone, Copy)]
enum Confirm {
    /// The match is the evidence (a private key's armour line).
    Always,
    /// A vendor token with a distinctive prefix: reported unless its
    /// `secret` group is an obvious placeholder.
    NotPlaceholder,
    /// A value that only its context makes suspicious: reported when it
    /// looks random (see [`looks_random`]). The value is the `secret` or
    /// `quoted` group, or the `bare` group, which must also not be code.
    RandomValue,
}

struct Rule {
    name: &'static str,
    confirm: Confirm,
    regex: Regex,
}

/// Separators and quotes between a name and its value: `name = "…"`,
/// `"name": "…"`, `name: …`, `name := "…"`, `'name' => '…'`, and JSON inside
/// a string (`\"name\": \"…\"`).
macro_rules! assigned {
    () => {
        r#"\\?["']?\]?\s*(?::=|=>|=|:)\s*"#
    };
}

/// The rules, most specific first: on overlap the earlier rule wins. A rule
/// name may have several patterns.
const RULES: &[(&str, Confirm, &str)] = &[
    ("private-key", Confirm::Always, r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
    ("aws-access-key-id", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>(?:AKIA|ASIA)[A-Z0-9]{16})(?-u:\b)"),
    (
        "aws-secret-access-key",
        Confirm::NotPlaceholder,
        concat!(
            r"(?i:aws[_.-]?secret(?:[_.-]?access)?(?:[_.-]?key)?|secret[_.-]?access[_.-]?key)",
            assigned!(),
            r#"\\?["'`]?(?P<secret>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#
        ),
    ),
    ("github-token", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>gh[pousr]_[A-Za-z0-9]{36,251})(?-u:\b)"),
    ("github-token", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>github_pat_[A-Za-z0-9_]{82})(?-u:\b)"),
    (
        "gitlab-token",
        Confirm::NotPlaceholder,
        r"(?-u:\b)(?P<secret>gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|agent|oas)-[A-Za-z0-9_-]{20,})",
    ),
    // Real Slack tokens have numeric ids after the prefix; requiring one
    // keeps `xoxb-your-token-here` quiet.
    ("slack-token", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>xox[abeoprs]-[0-9]+-[0-9A-Za-z-]{8,})"),
    (
        "slack-webhook",
        Confirm::NotPlaceholder,
        r"(?P<secret>hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,})",
    ),
    ("google-api-key", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>AIza[0-9A-Za-z_-]{35})(?:[^0-9A-Za-z_-]|$)"),
    ("stripe-live-key", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>[sr]k_live_[0-9A-Za-z]{16,})"),
    ("anthropic-api-key", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>sk-ant-[A-Za-z0-9_-]{32,})"),
    ("openai-api-key", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,})"),
    ("openai-api-key", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>sk-[A-Za-z0-9]{48})(?-u:\b)"),
    ("npm-token", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>npm_[A-Za-z0-9]{36})(?-u:\b)"),
    (
        "json-web-token",
        Confirm::NotPlaceholder,
        r"(?-u:\b)(?P<secret>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,})",
    ),
    ("bearer-token", Confirm::RandomValue, r"(?i:(?-u:\b)bearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
    (
        "generic-secret",
        Confirm::RandomValue,
        concat!(
            // The name: a keyword and the rest of the identifier after it,
            // or a name ending in `pass` (`DB_PASS`, `smtp.pass`).
            r"(?i:(?:secret|token|passw(?:or)?d|passphrase|credential|api[_.-]?key|access[_.-]?key|private[_.-]?key)",
            r"[a-z0-9_.-]*|(?-u:\b)pass|[_.-]pass)",
            assigned!(),
            // The value: the quoted text up to a quote, backslash or space,
            // or a bare word that does not start like a reference (`$VAR`,
            // `*alias`, `!tag`, `%VAR%`, `@file`, `&anchor`, `|`, `#`).
            r#"(?:\\?["'`](?P<quoted>[^"'`\\\s]*)|(?P<bare>[^\s"'`,;(){}\[\]<>:\\$&*!@%|#][^\s"'`,;(){}\[\]<>\\]*))"#
        ),
    ),
];

static COMPILED: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|&(name, confirm, pattern)| Rule {
            name,
            confirm,
            regex: Regex::new(pattern).expect("the rule patterns are fixed and compiled by every test"),
        })
        .collect()
});

/// The rules a line breaks, in the order their matches start on it, each
/// rule once. `bare_literals` says whether an unquoted value can be a
/// literal, as it can in `.env`, YAML or shell but not in source code.
fn scan_line(line: &str, bare_literals: bool) -> Vec<&'static str> {
    let mut hits: Vec<(Range<usize>, &'static str)> = Vec::new();
    for rule in COMPILED.iter() {
        for caps in rule.regex.captures_iter(line) {
            let Some(span) = rule.confirm(line, &caps, bare_literals) else { continue };
            if hits.iter().any(|(taken, _)| taken.start < span.end && span.start < taken.end) {
                continue;
            }
            hits.push((span, rule.name));
        }
    }
    hits.sort_by_key(|(span, _)| span.start);
    let mut rules: Vec<&'static str> = Vec::with_capacity(hits.len());
    for (_, name) in hits {
        if !rules.contains(&name) {
            rules.push(name);
        }
    }
    rules
}

impl Rule {
    /// The span of the secret when this match is reported, else `None`.
    fn confirm(&self, line: &str, caps: &Captures<'_>, bare_literals: bool) -> Option<Range<usize>> {
        match self.confirm {
            Confirm::Always => caps.get(0).map(|m| m.range()),
            Confirm::NotPlaceholder => {
                let secret = caps.name("secret")?;
                (!is_placeholder(secret.as_str())).then(|| secret.range())
            }
            Confirm::RandomValue => {
                let value = match caps.name("bare") {
                    Some(_) if !bare_literals => return None,
                    Some(bare) => {
                        // A bare word followed by a call, an index or a
                        // block is code, not a literal.
                        let next = line[bare.end()..].chars().next();
                        if matches!(next, Some('(' | '[' | '{' | '<' | '"' | '\'' | '`')) {
                            return None;
                        }
                        bare
                    }
                    None => caps.name("secret").or_else(|| caps.name("quoted"))?,
                };
                looks_random(value.as_str()).then(|| value.range())
            }
        }
    }
}

/// Whether a value assigned to a secret-ish name looks like a machine-made
/// secret rather than a word, a name, a reference or a placeholder.
fn looks_random(value: &str) -> bool {
    value.chars().count() >= 16
        && value.bytes().any(|b| b.is_ascii_digit())
        && !value.contains("://")
        && !value.contains("::")
        && !is_path(value)
        && !looks_like_name(value)
        && !is_placeholder(value)
        && entropy(value) >= entropy_floor(value)
}

/// 3.5 bits per character, except for hexadecimal: sixteen symbols cap it
/// at 4 bits, and a random 32-digit hex key falls under 3.5 about one time
/// in five, so hex needs only 3.0 (which one in three thousand misses).
fn entropy_floor(value: &str) -> f64 {
    if value.bytes().all(|b| b.is_ascii_hexdigit()) { 3.0 } else { 3.5 }
}

/// Whether the file is source code in a language where a string literal is
/// always quoted, judged by its extension. Config formats, shell, docs and
/// unknown files are not: a bare value there can be the secret itself.
fn is_source_code(file: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "c", "cc", "cjs", "clj", "cljs", "cpp", "cs", "cxx", "dart", "erl", "ex", "exs", "fs", "go", "h", "hh", "hpp",
        "hs", "java", "jl", "js", "jsx", "kt", "kts", "lua", "m", "ml", "mli", "mjs", "mm", "mts", "cts", "php", "py",
        "pyi", "rb", "rs", "scala", "sol", "svelte", "swift", "ts", "tsx", "vue", "zig",
    ];
    let name = file.rsplit('/').next().unwrap_or(file);
    name.rsplit_once('.').is_some_and(|(stem, extension)| !stem.is_empty() && EXTENSIONS.contains(&extension))
}

/// Shannon entropy in bits per character.
fn entropy(value: &str) -> f64 {
    let mut chars: Vec<char> = value.chars().collect();
    if chars.is_empty() {
        return 0.0;
    }
    chars.sort_unstable();
    let len = chars.len() as f64;
    chars
        .chunk_by(|a, b| a == b)
        .map(|run| {
            let p = run.len() as f64 / len;
            -p * p.log2()
        })
        .sum()
}

fn is_path(value: &str) -> bool {
    ["./", "../", "~/"].iter().any(|start| value.starts_with(start))
        || value.strip_prefix('/').is_some_and(|rest| rest.contains('/'))
}

/// Whether every `-`/`_`/`.`-separated part is a word with at most a short
/// number (`tls`, `v2`, `2024`): an identifier, a resource name, a member
/// path. Random text almost never splits that way.
fn looks_like_name(value: &str) -> bool {
    let parts: Vec<&str> = value.split(['-', '_', '.']).collect();
    parts.len() >= 2
        && parts.iter().all(|part| {
            let letters = part.bytes().take_while(u8::is_ascii_alphabetic).count();
            let digits = &part[letters..];
            !part.is_empty() && digits.len() <= 4 && digits.bytes().all(|b| b.is_ascii_digit())
        })
}

fn is_placeholder(value: &str) -> bool {
    // Matched in any case: long enough that a random token holds one by
    // chance less than once in ten million.
    const WORDS: &[&str] = &[
        "example",
        "dummy",
        "placeholder",
        "redacted",
        "sample",
        "changeme",
        "change_me",
        "change-me",
        "replace",
        "process.env",
        "os.environ",
        "getenv",
        "env::var",
        "secrets.",
        "12345",
        "abcdef",
    ];
    // Four letters in any case turn up in one random token in ten thousand;
    // all lower or all upper case, in one in a million.
    const SHORT_WORDS: &[&str] = &["your", "YOUR", "fake", "FAKE"];
    const MARKS: &[&str] = &["<", ">", "${", "{{", "}}", "$(", "%("];
    let lower = value.to_ascii_lowercase();
    WORDS.iter().any(|word| lower.contains(word))
        || SHORT_WORDS.iter().any(|word| value.contains(word))
        || MARKS.iter().any(|mark| value.contains(mark))
        // `$NAME`, `%NAME%`: a reference to where the secret really lives.
        || value.strip_prefix(['$', '%']).is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        || has_run(value, 6)
}

/// Whether some character repeats `n` times in a row.
fn has_run(value: &str, n: usize) -> bool {
    let mut run = 0;
    let mut last = None;
    for c in value.chars() {
        run = if Some(c) == last { run + 1 } else { 1 };
        if run >= n {
            return true;
        }
        last = Some(c);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One fake secret per rule and shape: the rule, the file, the added line
    /// with `{}` where the secret goes, and the secret. Each secret is split with
    /// `concat!` so that this file itself trips no scanner (GitHub's push
    /// protection, or Parley reviewing its own diff).
    const PLANTED: &[(&str, &str, &str, &str)] = &[
        ("private-key", "src/settings.py", "{}", concat!("-----BEGIN RSA ", "PRIVATE KEY-----")),
        ("private-key", "src/settings.py", "{}", concat!("-----BEGIN EC ", "PRIVATE KEY-----")),
        ("private-key", "src/settings.py", "{}", concat!("-----BEGIN DSA ", "PRIVATE KEY-----")),
        ("private-key", "src/settings.py", "{}", concat!("-----BEGIN OPENSSH ", "PRIVATE KEY-----")),
        ("private-key", "src/settings.py", "{}", concat!("-----BEGIN PGP ", "PRIVATE KEY BLOCK-----")),
        ("private-key", "src/settings.py", "{}", concat!("-----BEGIN ENCRYPTED ", "PRIVATE KEY-----")),
        ("private-key", "src/settings.py", "{}", concat!("-----BEGIN ", "PRIVATE KEY-----")),
        (
            "private-key",
            "config/service-account.json",
            r#"  "private_key": "{}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n","#,
            concat!("-----BEGIN ", "PRIVATE KEY-----"),
        ),
        ("aws-access-key-id", "credentials", "aws_access_key_id = {}", concat!("AKIA", "Z7QX3M5N2PLWVKTR")),
        ("aws-access-key-id", "sts.json", r#"  "AccessKeyId": "{}","#, concat!("ASIA", "UJZDE8GXD6NCF10E")),
        (
            "aws-secret-access-key",
            "credentials",
            "aws_secret_access_key = {}",
            concat!("El2hpChYgCfrL1spNxny", "VmihA+2O76UMFxFkM+R5"),
        ),
        (
            "aws-secret-access-key",
            "scripts/ci.sh",
            r#"export AWS_SECRET_ACCESS_KEY="{}""#,
            concat!("El2hpChYgCfrL1spNxny", "VmihA+2O76UMFxFkM+R5"),
        ),
        (
            "aws-secret-access-key",
            "infra/stack.yaml",
            r#"  SecretAccessKey: '{}'"#,
            concat!("El2hpChYgCfrL1spNxny", "VmihA+2O76UMFxFkM+R5"),
        ),
        ("github-token", ".env", "GITHUB_TOKEN={}", concat!("ghp", "_sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8")),
        (
            "github-token",
            "src/gh.ts",
            r#"const TOKEN = "{}";"#,
            concat!("ghs", "_rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsiVpz"),
        ),
        (
            "github-token",
            "README.md",
            "git clone https://x-access-token:{}@github.com/o/r",
            concat!("gho", "_rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsiVpz"),
        ),
        (
            "github-token",
            ".github/config.yml",
            "token: {}",
            concat!(
                "github",
                "_pat_z63FfkCzJr4i0B3JrTAwR4_y9ojfljoQoaF1LlqsajAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOzdmenCk"
            ),
        ),
        ("gitlab-token", "ci/gitlab.yml", r#"private_token: "{}""#, concat!("glpat", "-oRgnatmUdjAWtGSU8po-")),
        (
            "slack-token",
            ".env",
            "SLACK_BOT_TOKEN={}",
            concat!("xoxb", "-7774121547280-3852808414852-wXoIIXGvOoNZYW2mZp0zVZom"),
        ),
        (
            "slack-webhook",
            "src/settings.py",
            r#"webhook_url = "{}""#,
            concat!("https://hooks.slack", ".com/services/T75WBBR4QMW/B2WXFOGO4MV/nEN5N1aE6PwZPf1Qh6yYTWmE"),
        ),
        (
            "google-api-key",
            "web/index.html",
            r#"<script src="https://maps.googleapis.com/maps/api/js?key={}"></script>"#,
            concat!("AIza", "w3QlY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1q"),
        ),
        (
            "stripe-live-key",
            "src/settings.py",
            "Stripe.api_key = '{}'",
            concat!("sk_live", "_d6Vw5DQL05HA064GiIjHGb3C"),
        ),
        ("stripe-live-key", ".env", "STRIPE_RESTRICTED={}", concat!("rk_live", "_XlMaXZjljENUhJduRHHJEYXg")),
        (
            "openai-api-key",
            "src/settings.py",
            r#"client = OpenAI(api_key="{}")"#,
            concat!("sk-proj", "-hFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptUsGr7CmY-uCu3ZR1zTOlUcR64cXQLioDnkHIfxIq2"),
        ),
        (
            "openai-api-key",
            ".env",
            "OPENAI_API_KEY={}",
            concat!("sk-", "MpSscDlkrCaqx9vJupc9T3BlbkFJ4tnwlavyfErGPmpGXafq"),
        ),
        (
            "anthropic-api-key",
            ".env",
            "ANTHROPIC_API_KEY={}",
            concat!(
                "sk-ant",
                "-api03-lsZfYcMMDktXP_tKsf2rcDkdfrUnW5gcF-Ha6ili8GjHEAD6_Wj9KfzjsQGMrb9h-ImB-LK777pzNk8cL6j5IXAAjlsHUAA"
            ),
        ),
        (
            "npm-token",
            ".npmrc",
            "//registry.npmjs.org/:_authToken={}",
            concat!("npm", "_iM0OGr4hTxoF54Fzbka8FRCztUjAwyuh1vau"),
        ),
        (
            "json-web-token",
            "src/session.ts",
            r#"const session = "{}";"#,
            concat!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
                ".eyJzdWIiOiJwYXJsZXktY2kiLCJpYXQiOjE3MzU2ODk2MDB9",
                ".RYpzbLGViYXjU2JgJngKtFI3OyV2dZAkg05rK-gqv81"
            ),
        ),
        (
            "bearer-token",
            "docs/api.md",
            r#"curl -H "Authorization: Bearer {}" https://api.internal.dev/v1/jobs"#,
            concat!("HOBSWhgetH8Lmyqo", "YMaaItDr9uP14pEHpJpb9ATP"),
        ),
        ("generic-secret", ".env", "DB_PASSWORD={}", concat!("52ryFlwRlOEV", "Hzc0X0&AWIRh")),
        // Hex, at 3.34 bits per character: under 3.5, over hex's 3.0.
        ("generic-secret", ".env", "MAILGUN_API_KEY={}", concat!("9a50f8a8e9bb8bdb", "5eba456bf92d5d98")),
        ("generic-secret", "deploy/.env.production", "SMTP_PASS={}", concat!("52ryFlwRlOEV", "Hzc0X0&AWIRh")),
        (
            "generic-secret",
            "config/oauth.json",
            r#"  "client_secret": "{}","#,
            concat!("vstqVVPqzPptEJQz", "hkPkenG5ZFJoC6vW"),
        ),
        (
            "generic-secret",
            "config/app.php",
            "'api_key' => '{}',",
            concat!("f8b46287cced9041dff0", "2cee737443e210471948"),
        ),
        ("generic-secret", "internal/db.go", r#"	password := "{}""#, concat!("Tq8#vLz2", "!mWx9Rk4pYs")),
        ("generic-secret", "config/app.yaml", "  secret: {}", concat!("vstqVVPqzPptEJQz", "hkPkenG5ZFJoC6vW")),
        ("generic-secret", "src/client.ts", "  apiKey: '{}',", concat!("vstqVVPqzPptEJQz", "hkPkenG5ZFJoC6vW")),
        (
            "generic-secret",
            "src/settings.py",
            r#"os.environ["SESSION_SECRET"] = "{}""#,
            concat!("vstqVVPqzPptEJQz", "hkPkenG5ZFJoC6vW"),
        ),
        (
            "generic-secret",
            "src/settings.py",
            r#"{\"access_token\": \"{}\"}"#,
            concat!("vstqVVPqzPptEJQz", "hkPkenG5ZFJoC6vW"),
        ),
        (
            "generic-secret",
            "scripts/deploy.sh",
            "./server --api-key={} --port 8080",
            concat!("vstqVVPqzPptEJQz", "hkPkenG5ZFJoC6vW"),
        ),
    ];

    /// Added lines that are not secrets, from lock files, manifests and code.
    const HARMLESS: &[&str] = &[
        // package-lock.json, yarn.lock, Cargo.lock, go.sum.
        r#"      "integrity": "sha512-4lY3ASiPKbPXP2rCtp7dLBnyZL7kYqW68g/Sfs8UwBHtIB+DYyCtuYurFoaijZgBIQx3NvPuxYDc/EP+XQSbTQ==","#,
        r#"      "resolved": "https://registry.npmjs.org/js-tokens/-/js-tokens-4.0.0.tgz","#,
        r#"    "node_modules/js-tokens": {"#,
        "  integrity sha512-4lY3ASiPKbPXP2rCtp7dLBnyZL7kYqW68g/Sfs8UwBHtIB+DYyCtuYurFoaijZgBIQx3NvPuxYDc/EP+XQSbTQ==",
        r#"checksum = "9106fd287db7f1adbc60926f6967e7893f57fd14c1604d115cea325a65e19cba""#,
        "github.com/golang-jwt/jwt/v5 v5.2.1 h1:OuVbFODueb089Lh128TAcimifWaLhJwVflnrgM17wHk=",
        // A UUID, a git SHA, a base64 fixture, CSS colours.
        r#"const SESSION_ID: &str = "3fa85f64-5717-4562-b3fc-2c963f66afa6";"#,
        "// Regressed in 7aaeb26c57d21fa5d328263dfe574de739988b88; see the revert.",
        r#"const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";"#,
        "  color: #1e90ff; background: #fafafa;",
        // References to where a secret lives.
        r#"password = os.environ["DB_PASSWORD"]"#,
        "          token: ${{ secrets.GITHUB_TOKEN }}",
        "const token = process.env.GITHUB_TOKEN;",
        r#"let api_key = std::env::var("PARLEY_API_KEY").expect("PARLEY_API_KEY is set");"#,
        r#"export GITHUB_TOKEN="$(gh auth token)""#,
        "Authorization: Bearer ${API_TOKEN}",
        "DATABASE_PASSWORD_FILE=/run/secrets/db_password_2024",
        "  secret_key_base: <%= ENV[\"SECRET_KEY_BASE\"] %>",
        // Placeholders, including AWS's documented example pair.
        r#"api_key = "changeme""#,
        r#"api_key = "<your-api-key>""#,
        r#"password: "********************""#,
        r#"SECRET_KEY = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx""#,
        "STRIPE_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "SLACK_WEBHOOK=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "SLACK_BOT_TOKEN=xoxb-your-bot-token-here",
        // Code and config that merely mention secrets.
        "tokenizer = AutoTokenizer.from_pretrained(\"bert-base-uncased\")",
        "accessToken: this.tokenService.issueAccessToken(user, 3600),",
        "        secretName: my-app-tls-secret-v2",
        "secret = SOME_CONSTANT_V2_NAME",
        r#"token_url = "https://oauth2.googleapis.com/token""#,
        r#"password_hint = "Use at least sixteen characters, with 2 digits""#,
        r#"if token == "" { return Err(Error::MissingToken) }"#,
        r#"<input type="password" name="password" autocomplete="current-password">"#,
        "let token: Token<'a> = lexer.next_token(); // max_tokens = 4096",
        "use crate::token::{Token, TokenKind};",
        "    POSTGRES_PASSWORD: postgres",
        "const CSRF_TOKEN_HEADER = 'X-CSRF-Token';",
        r#"        "access_token": "m2m-access-token-12345","#,
    ];

    /// A diff adding `lines` as the new file `path`, the way `git diff` prints it.
    fn new_file(path: &str, lines: &[&str]) -> String {
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

    fn check(diff: &str, allow: &[&str], want: &[(&str, u32, &str)]) {
        let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
        let found = scan_diff(diff, &allow);
        let got: Vec<(&str, u32, &str)> = found.iter().map(|f| (f.file.as_str(), f.line, f.rule)).collect();
        assert_eq!(got, want, "scanning\n{diff}");
    }

    #[test]
    fn each_rule_catches_its_secret_and_never_repeats_it() {
        for &(rule, file, template, secret) in PLANTED {
            let line = template.replace("{}", secret);
            let diff = new_file(file, &[&line]);
            check(&diff, &[], &[(file, 1, rule)]);
            let findings = scan_diff(&diff, &[]);
            let described = describe(&findings);
            assert!(!described.contains(secret), "{rule}: the description repeats the secret:\n{described}");
            assert!(!format!("{findings:?}").contains(secret), "{rule}: the finding holds the secret");
            assert!(described.contains(&format!("{file}:1: {rule}\n")), "{described}");
        }
    }

    #[test]
    fn ordinary_code_is_not_a_secret() {
        // In source code, and where a bare value could be a literal.
        for line in HARMLESS {
            for file in ["src/app.ts", "config/app.yaml"] {
                check(&new_file(file, &[line]), &[], &[]);
            }
        }
    }

    #[test]
    fn bare_values_are_literals_only_outside_source_code() {
        let line = concat!("secret: vstqVVPqzPptEJQz", "hkPkenG5ZFJoC6vW");
        check(&new_file("config/app.yaml", &[line]), &[], &[("config/app.yaml", 1, "generic-secret")]);
        check(&new_file("Procfile", &[line]), &[], &[("Procfile", 1, "generic-secret")]);
        check(&new_file("src/lib.rs", &[line]), &[], &[]);
        // Types and paths, which read like values after `name:` or `name =`.
        let code = [
            "pub type TokenStream2 = proc_macro2::TokenStream;",
            "    item_tokens: proc_macro2::TokenStream,",
            "pub const PrivateKeyAttestMask: X509CertificateTemplatePrivateKeyFlag = 12288i32;",
            "type OAuthRevocableToken = oauth2::StandardRevocableToken;",
            "    pub Token: D3DKMT_PRESENTHISTORYTOKEN_0,",
        ];
        for line in code {
            check(&new_file("src/lib.rs", &[line]), &[], &[]);
            check(&new_file("web/types.d.ts", &[line]), &[], &[]);
        }
    }

    #[test]
    fn every_rule_name_is_kebab_case_and_documented() {
        let doc = include_str!("secrets.rs");
        for &(name, _, _) in RULES {
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{name}");
            assert!(doc.contains(&format!("//! | `{name}` |")), "{name} is missing from the rule table");
            assert!(PLANTED.iter().any(|&(rule, ..)| rule == name), "{name} has no planted secret");
        }
        assert!(!COMPILED.is_empty());
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
    fn names_and_prefixes() {
        let diff = |git: &str, plus: &str| {
            format!("diff --git {git}\nindex 1..2 100644\n--- x\n+++ {plus}\n@@ -0,0 +1 @@\n+{AWS}\n")
        };
        let found =
            |git: &str, plus: &str| scan_diff(&diff(git, plus), &[]).into_iter().map(|f| f.file).collect::<Vec<_>>();
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
            &format!("- const X: &str = \"{AWS}\";"),
            &format!(" -const Y: &str = \"{AWS}\";"),
            &format!("++const Z: &str = \"{AWS}\";"),
            &format!(" +const W: &str = \"{NPM}\";"),
            "  fn b() {}",
        ]
        .join("\n");
        check(&merge, &[], &[("src/lib.rs", 2, "aws-access-key-id"), ("src/lib.rs", 3, "npm-token")]);

        let plain = format!("--- a/a.rs\n+++ b/a.rs\n@@ -1,2 +1,2 @@\n ok\n-old\n+{AWS}\n");
        check(&plain, &[], &[("a.rs", 2, "aws-access-key-id")]);
        check(&plain.replace('\n', "\r\n"), &[], &[("a.rs", 2, "aws-access-key-id")]);
        let coloured = format!(
            "\x1b[1mdiff --git a/a.rs b/a.rs\x1b[m\n\x1b[1m--- a/a.rs\x1b[m\n\x1b[1m+++ b/a.rs\x1b[m\n\
             \x1b[36m@@ -1,2 +1,2 @@\x1b[m\n ok\n\x1b[31m-old\x1b[m\n\x1b[32m+{AWS}\x1b[m\n"
        );
        check(&coloured, &[], &[("a.rs", 2, "aws-access-key-id")]);
        // A hunk header that cannot be read is no reason to let a secret by.
        check(&format!("+++ b/a.rs\n@@ what @@\n ok\n+{AWS}\n"), &[], &[("a.rs", 2, "aws-access-key-id")]);
        // Lines outside any hunk are not content.
        check(&format!("+{AWS}\n{AWS}\n"), &[], &[]);
    }

    #[test]
    fn several_secrets_on_one_line_in_order() {
        let secret = concat!("El2hpChYgCfrL1spNxny", "VmihA+2O76UMFxFkM+R5");
        let line = format!("AWS_ACCESS_KEY_ID={AWS} AWS_SECRET_ACCESS_KEY={secret} GH={GHS} GH2={GHS}");
        check(
            &new_file("deploy.sh", &[&line]),
            &[],
            &[
                ("deploy.sh", 1, "aws-access-key-id"),
                ("deploy.sh", 1, "aws-secret-access-key"),
                ("deploy.sh", 1, "github-token"),
            ],
        );
    }

    #[test]
    fn describing_nothing() {
        assert_eq!(describe(&[]), "the secret scan found nothing");
        let one = [Finding { file: "a.rs".into(), line: 3, rule: "npm-token" }];
        assert!(describe(&one).starts_with("the secret scan found a possible secret, so nothing was sent"));
    }

    #[test]
    fn whole_texts_are_scanned_line_by_line() {
        let doc = format!("# Deploying\n\nUse the key below.\n\nexport AWS_ACCESS_KEY_ID={AWS}\n");
        assert_eq!(
            scan_text("docs/deploy.md", &doc, &[]),
            [Finding { file: "docs/deploy.md".into(), line: 5, rule: "aws-access-key-id" }]
        );
        assert!(scan_text("docs/deploy.md", &doc, &["docs/*.md".to_string()]).is_empty(), "allowed by path");
        let marked = format!("export AWS_ACCESS_KEY_ID={AWS} # {ALLOW_MARKER}\n");
        assert!(scan_text("docs/deploy.md", &marked, &[]).is_empty(), "allowed by the marker");
        let output = format!("running 3 tests\r\n\x1b[31mGITHUB_TOKEN={GHS}\x1b[0m\r\n");
        assert_eq!(
            scan_text("(test output)", &output, &[]),
            [Finding { file: "(test output)".into(), line: 2, rule: "github-token" }]
        );
    }

    proptest! {
        #[test]
        fn never_panics_on_any_text(diff in "(?s).{0,400}") {
            let _ = scan_diff(&diff, &["*.x".to_string()]);
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
