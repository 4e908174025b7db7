//! Shell-style globs for repository paths (`*`, `**`, `?`, `[…]`), as config files write them.
//!
//! Pure string matching on relative, `/`-separated paths: nothing here looks
//! at the file system, so a pattern means the same thing whether or not the
//! file exists. The dialect is the part of `.gitignore` that a list of paths
//! needs (no negation, no comments, no escaping of trailing spaces):
//!
//! - `*` matches any run of characters inside one path segment, including a
//!   leading dot; `?` matches one character; `[abc]`, `[a-z]` and `[!abc]`
//!   (or `[^abc]`) match one character from (or not from) a set; `\` makes the
//!   next character literal. None of them ever matches `/`. `{`, `}`, `!` and
//!   `#` are ordinary characters, as in git. Like git, `?` and a class count
//!   bytes, so they are for ASCII names: `?.txt` does not match `é.txt`,
//!   which `*.txt` or the name written out does.
//! - A segment that is exactly `**` matches any number of whole segments,
//!   including none; `**` inside a segment (`a**b`) is just `*`. A final
//!   `/**` matches everything inside a directory, not a file of its name.
//! - A pattern without a `/` matches the file name in any directory, so
//!   `*.generated.ts` matches `src/a.generated.ts`. A pattern with a `/`
//!   matches from the repository root; a leading `/` only says so explicitly
//!   (`/README.md` matches the top-level file alone).
//! - A trailing `/` means "everything inside this directory": `fixtures/`
//!   matches `tests/fixtures/key.pem`, and `tests/fixtures/` matches only
//!   under the top-level `tests`. Without it a pattern names the path itself,
//!   so `gen` matches a file called `gen` and not the files inside a folder
//!   of that name (where `.gitignore` would ignore the folder whole).
//!
//! Matching is case-sensitive, as git is on the systems Parley runs on.
//!
//! The matching itself is `globset`'s, the glob engine of ripgrep: this
//! module only turns the dialect's anchoring rules into plain globs
//! (`translate`) and compiles a list of them into one set.

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

/// Whether `path` (relative, `/`-separated) matches `pattern`: `*` matches within one
/// path segment, `**` any number of segments (including none), `?` one character;
/// a pattern without `/` matches the file name in any directory (like .gitignore),
/// e.g. "*.generated.ts" matches "src/a.generated.ts". A pattern that is not a glob
/// (see [`GlobError`]) matches nothing.
pub fn matches(pattern: &str, path: &str) -> bool {
    Globs::lenient(std::slice::from_ref(&pattern)).is_match(path)
}

/// Whether any pattern matches. To test many paths, compile the patterns once
/// with [`Globs::new`] instead.
pub fn matches_any(patterns: &[String], path: &str) -> bool {
    Globs::lenient(patterns).is_match(path)
}

/// A pattern that is not a glob: only a class whose range runs backwards,
/// such as `[z-a]`, is refused; everything else has a meaning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pattern:?} is not a glob: {reason}")]
pub struct GlobError {
    pub pattern: String,
    pub reason: String,
}

/// A list of patterns compiled once, matching a path when any of them does.
#[derive(Debug, Clone)]
pub struct Globs {
    set: GlobSet,
}

impl Globs {
    /// Compiles `patterns`, or says which one is not a glob and why.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Globs, GlobError> {
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            let pattern = pattern.as_ref();
            if let Some(glob) = compile(pattern)? {
                builder.add(glob);
            }
        }
        let set = builder.build().map_err(|e| GlobError { pattern: patterns_text(patterns), reason: e.to_string() })?;
        Ok(Globs { set })
    }

    /// Compiles `patterns`, leaving out any that is not a glob, so it
    /// matches nothing, as a pattern naming no file would.
    pub fn lenient<S: AsRef<str>>(patterns: &[S]) -> Globs {
        let mut builder = GlobSetBuilder::new();
        for glob in patterns.iter().filter_map(|pattern| compile(pattern.as_ref()).ok().flatten()) {
            builder.add(glob);
        }
        // Building a set of globs that each compiled alone cannot fail; an
        // empty set is the safe reading if it ever did.
        Globs { set: builder.build().unwrap_or_else(|_| GlobSet::empty()) }
    }

    /// Whether `path` (relative, `/`-separated; a leading `./` and doubled
    /// slashes are ignored) matches any of the patterns.
    pub fn is_match(&self, path: &str) -> bool {
        if self.set.is_empty() {
            return false;
        }
        let path = path.strip_prefix("./").unwrap_or(path);
        // Empty segments ("a//b", "/a", "a/") carry no meaning in a path;
        // dropping them also keeps a leading `/` from defeating an anchored
        // pattern.
        if path.starts_with('/') || path.ends_with('/') || path.contains("//") {
            let normal: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
            return !normal.is_empty()
                && self.set.is_match_candidate(&Candidate::from_bytes(normal.join("/").as_bytes()));
        }
        !path.is_empty() && self.set.is_match_candidate(&Candidate::from_bytes(path.as_bytes()))
    }
}

fn patterns_text<S: AsRef<str>>(patterns: &[S]) -> String {
    patterns.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(", ")
}

/// One pattern as a compiled glob, or `None` for a pattern naming nothing.
fn compile(pattern: &str) -> Result<Option<globset::Glob>, GlobError> {
    let Some(glob) = translate(pattern) else { return Ok(None) };
    GlobBuilder::new(&glob)
        .literal_separator(true)
        .backslash_escape(true)
        .allow_unclosed_class(true)
        .build()
        .map(Some)
        .map_err(|e| GlobError { pattern: pattern.to_owned(), reason: e.kind().to_string() })
}

/// The dialect's pattern as a plain glob matched against the whole path:
/// anchored or not, a directory or not, braces and a trailing backslash made
/// literal. `None` for a pattern that names nothing (`""`, `/`).
fn translate(pattern: &str) -> Option<String> {
    let anchored = pattern.starts_with('/');
    let directory = pattern.ends_with('/');
    // Empty segments ("a//b") carry no meaning in a path; drop them so they
    // cannot make a pattern unmatchable.
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    if segments.is_empty() {
        // "" and "/" name nothing; matching everything would be a
        // surprising reading of an empty config entry.
        return None;
    }
    let mut glob = String::with_capacity(pattern.len() + 8);
    // Without a `/` (other than a trailing one) a pattern names a file or
    // directory in any folder.
    if !anchored && segments.len() == 1 && segments[0] != "**" {
        glob.push_str("**/");
    }
    glob.push_str(&escape_braces(&segments.join("/")));
    if directory {
        // At least one segment below the directory: `fixtures/` must not
        // match a file that is itself called `fixtures`.
        glob.push_str("/**/*");
    }
    Some(glob)
}

/// Makes `{` and `}` literal outside classes, where `globset` would read
/// alternatives (`{a,b}`) that git does not have, and a final lone `\`
/// literal, where `globset` would refuse the pattern.
fn escape_braces(glob: &str) -> String {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::with_capacity(glob.len() + 2);
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => {
                out.push('\\');
                out.push(chars.get(i).copied().unwrap_or('\\'));
                i += 1;
            }
            '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '[' => {
                // Copy a closed class whole, so a brace inside it stays a
                // member; `globset` reads an unclosed `[` as itself.
                out.push('[');
                if let Some(len) = class_len(&chars[i..]) {
                    out.extend(&chars[i..i + len]);
                    i += len;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The length of a class after its `[`, up to and including its `]`, as
/// `globset` reads it: a `]` first (after `!` or `^`) is a member. `None`
/// when it never closes.
fn class_len(chars: &[char]) -> Option<usize> {
    let mut start = usize::from(matches!(chars.first(), Some('!' | '^')));
    if chars.get(start) == Some(&']') {
        start += 1;
    }
    chars[start..].iter().position(|&c| c == ']').map(|at| start + at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(pattern: &str, path: &str, want: bool) {
        assert_eq!(matches(pattern, path), want, "pattern {pattern:?} against path {path:?}");
    }

    #[test]
    fn globs() {
        let cases: &[(&str, &str, bool)] = &[
            // A pattern without `/` matches the file name in any directory.
            ("*.generated.ts", "src/a.generated.ts", true),
            ("*.generated.ts", "a.generated.ts", true),
            ("*.generated.ts", "src/deep/er/a.generated.ts", true),
            ("*.generated.ts", "src/a.generated.tsx", false),
            ("*.generated.ts", "src/a.generated.ts/b.rs", false),
            ("README.md", "docs/README.md", true),
            ("Cargo.lock", "Cargo.lock", true),
            ("*", "a/b/c", true),
            // A pattern with `/` is anchored at the root; a leading `/` says so.
            ("docs/README.md", "docs/README.md", true),
            ("docs/README.md", "x/docs/README.md", false),
            ("/README.md", "README.md", true),
            ("/README.md", "docs/README.md", false),
            // `*` stays inside one segment.
            ("src/*.rs", "src/main.rs", true),
            ("src/*.rs", "src/bin/main.rs", false),
            ("src/*/mod.rs", "src/a/mod.rs", true),
            ("src/*/mod.rs", "src/a/b/mod.rs", false),
            ("src/*", "src", false),
            ("a*b.txt", "a/b.txt", false),
            ("*.env", ".env", true),
            // `**` is any number of segments, including none.
            ("src/**/*.rs", "src/main.rs", true),
            ("src/**/*.rs", "src/a/b/c.rs", true),
            ("src/**/*.rs", "lib/a.rs", false),
            ("**/fixtures/**", "tests/fixtures/key.pem", true),
            ("**/fixtures/**", "fixtures/key.pem", true),
            ("**/fixtures/**", "tests/fixture/key.pem", false),
            ("a/**/b", "a/b", true),
            ("a/**/b", "a/x/y/b", true),
            ("a/**/b", "a/x/y/c", false),
            ("**", "a/b", true),
            ("src/**", "src/a/b.rs", true),
            // A trailing `/**` is everything inside, as in git, not the
            // directory's own name.
            ("src/**", "src", false),
            ("*/**", "src", false),
            ("**/*.pem", "a.pem", true),
            // `**` inside a segment is a plain `*`.
            ("a**b.txt", "axyzb.txt", true),
            ("a**b.txt", "ax/yb.txt", false),
            // A trailing `/` is everything inside the directory.
            ("fixtures/", "tests/fixtures/a/key.pem", true),
            ("fixtures/", "fixtures/key.pem", true),
            ("fixtures/", "fixtures", false),
            ("tests/fixtures/", "tests/fixtures/key.pem", true),
            ("tests/fixtures/", "other/tests/fixtures/key.pem", false),
            // `?` is exactly one character, never `/`.
            ("?.txt", "a.txt", true),
            ("?.txt", "ab.txt", false),
            ("?.txt", ".txt", false),
            // `?` and classes match one byte, as in git, so a character
            // outside ASCII is matched by `*` or written out.
            ("?.txt", "é.txt", false),
            ("*.txt", "é.txt", true),
            ("é.txt", "dir/é.txt", true),
            ("a?b", "a/b", false),
            ("key-??.pem", "certs/key-01.pem", true),
            // Dots are literal.
            ("*.env", "prod.env", true),
            ("*.env", "prodxenv", false),
            (".env", ".env", true),
            (".env", "x.env", false),
            (".env", "config/.env", true),
            ("a.b", "axb", false),
            // Classes and escapes.
            ("[abc].rs", "b.rs", true),
            ("[abc].rs", "d.rs", false),
            ("[!abc].rs", "b.rs", false),
            ("[!abc].rs", "d.rs", true),
            ("[^abc].rs", "d.rs", true),
            ("[a-c]x", "cx", true),
            ("[a-c]x", "dx", false),
            ("[]]", "]", true),
            ("[a-]", "-", true),
            ("[ab", "[ab", true),
            ("\\*.rs", "*.rs", true),
            ("\\*.rs", "a.rs", false),
            // Git has no alternatives, negation or comments in a pattern:
            // braces, a leading `!` and a leading `#` are characters.
            ("{a,b}.rs", "{a,b}.rs", true),
            ("{a,b}.rs", "a.rs", false),
            ("src/{", "src/{", true),
            ("[{]}", "{}", true),
            ("!a.rs", "src/!a.rs", true),
            ("!a.rs", "a.rs", false),
            ("#notes", "#notes", true),
            ("a\\", "a\\", true),
            // Case-sensitive, like git.
            ("*.RS", "a.rs", false),
            // Nothing names nothing.
            ("", "a", false),
            ("/", "a", false),
            // A `./` in front of the path and doubled slashes are not meaningful.
            ("src/*.rs", "./src/main.rs", true),
            ("src//*.rs", "src/main.rs", true),
        ];
        for &(pattern, path, want) in cases {
            check(pattern, path, want);
        }
    }

    #[test]
    fn a_backwards_range_is_refused_by_name() {
        let patterns = ["*.lock".to_string(), "[z-a].rs".to_string()];
        let error = Globs::new(&patterns).map(|_| ()).map_err(|e| e.to_string());
        assert_eq!(error, Err(r#""[z-a].rs" is not a glob: invalid range; 'z' > 'a'"#.to_string()));
        // Where no error can be shown, the bad pattern matches nothing and
        // the others still work.
        assert!(matches_any(&patterns, "Cargo.lock"));
        assert!(!matches_any(&patterns, "b.rs"));
        assert!(!matches("[z-a].rs", "[z-a].rs"));
    }

    #[test]
    fn compiled_once_matches_like_one_at_a_time() {
        let patterns = ["*.lock", "docs/**", "fixtures/", "/README.md"];
        let globs = Globs::new(&patterns).expect("valid globs");
        for path in ["Cargo.lock", "docs/a/b.md", "tests/fixtures/k.pem", "README.md", "a/README.md", "src/main.rs"] {
            let one_at_a_time = patterns.iter().any(|pattern| matches(pattern, path));
            assert_eq!(globs.is_match(path), one_at_a_time, "{path}");
        }
    }

    #[test]
    fn any_of_several() {
        let patterns = vec!["*.lock".to_string(), "docs/**".to_string()];
        assert!(matches_any(&patterns, "Cargo.lock"));
        assert!(matches_any(&patterns, "docs/a/b.md"));
        assert!(!matches_any(&patterns, "src/main.rs"));
        assert!(!matches_any(&[], "src/main.rs"));
    }

    #[test]
    fn many_stars_stay_fast() {
        // Exponential backtracking would take ages on this; the greedy match
        // answers at once.
        let pattern = format!("{}b", "**/".repeat(30));
        let path = format!("{}c", "a/".repeat(60));
        check(&pattern, &path, false);
        check(&format!("{}b", "*a".repeat(30)), &"a".repeat(200), false);
    }

    proptest! {
        #[test]
        fn never_panics(pattern in "[a-c*?/\\[\\]!^\\\\.-]{0,20}", path in "[a-c*?/.\\[\\]-]{0,20}") {
            let _ = matches(&pattern, &path);
        }

        #[test]
        fn a_literal_path_matches_itself(path in "[a-z0-9_][a-z0-9_.-]{0,7}(/[a-z0-9_][a-z0-9_.-]{0,7}){0,4}") {
            prop_assert!(matches(&path, &path));
            let (pattern, nested) = (format!("**/{path}"), format!("x/{path}"));
            prop_assert!(matches(&pattern, &nested));
        }
    }
}
