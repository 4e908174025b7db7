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
//! [`diff`] reads a diff's files and added lines; `rules` (in `secrets/rules.rs`,
//! whose module doc has the table of rules and the judgement calls about
//! them) decides what on one line is a secret. This module puts them
//! together: which files are allowed, which lines are marked, and the
//! message.
//!
//! Only added lines are scanned, as specified: the question is whether this
//! change introduces a secret. Removed and context lines still travel to the
//! reviewer inside the diff, so a secret that is already committed and sits
//! next to a change is not caught here.

pub mod diff;
mod rules;

use std::fmt::Write as _;

use crate::glob::Globs;

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
    let allow = Globs::lenient(allow_paths);
    let mut file = FileState::named("(unknown file)".to_string(), &allow);
    let mut findings = Vec::new();
    for event in diff::read(diff) {
        match event {
            diff::Event::File(name) => file = FileState::named(name, &allow),
            diff::Event::Added { line, text } => file.scan(line, &text, &mut findings),
        }
    }
    findings
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
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        file.scan(number, &line, &mut findings);
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

    /// Adds the findings of `text`, line `line` of this file.
    fn scan(&self, line: u32, text: &str, findings: &mut Vec<Finding>) {
        if self.allowed || text.contains(ALLOW_MARKER) {
            return;
        }
        let found = rules::scan_line(text, !self.source);
        findings.extend(found.into_iter().map(|rule| Finding { file: self.name.clone(), line, rule }));
    }
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
