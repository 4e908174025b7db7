//! Shell-style globs for repository paths (`*`, `**`, `?`, `[…]`), as config files write them.
//!
//! Pure string matching on relative, `/`-separated paths: nothing here looks
//! at the file system, so a pattern means the same thing whether or not the
//! file exists. The dialect is the part of `.gitignore` that a list of paths
//! needs (no negation, no escaping of trailing spaces):
//!
//! - `*` matches any run of characters inside one path segment, including a
//!   leading dot; `?` matches one character; `[abc]`, `[a-z]` and `[!abc]`
//!   (or `[^abc]`) match one character from (or not from) a set; `\` makes the
//!   next character literal. None of them ever matches `/`.
//! - A segment that is exactly `**` matches any number of whole segments,
//!   including none; `**` inside a segment (`a**b`) is just `*`.
//! - A pattern without a `/` matches the file name in any directory, so
//!   `*.generated.ts` matches `src/a.generated.ts`. A pattern with a `/`
//!   matches from the repository root; a leading `/` only says so explicitly
//!   (`/README.md` matches the top-level file alone).
//! - A trailing `/` means "everything inside this directory": `fixtures/`
//!   matches `tests/fixtures/key.pem`, and `tests/fixtures/` matches only
//!   under the top-level `tests`.
//!
//! Matching is case-sensitive, as git is on the systems Parley runs on.

/// Whether `path` (relative, `/`-separated) matches `pattern`: `*` matches within one
/// path segment, `**` any number of segments (including none), `?` one character;
/// a pattern without `/` matches the file name in any directory (like .gitignore),
/// e.g. "*.generated.ts" matches "src/a.generated.ts".
pub fn matches(pattern: &str, path: &str) -> bool {
    Glob::new(pattern).is_match(path)
}

/// Whether any pattern matches.
pub fn matches_any(patterns: &[String], path: &str) -> bool {
    patterns.iter().any(|pattern| matches(pattern, path))
}

/// A parsed pattern: one entry per `/`-separated segment.
struct Glob {
    segments: Vec<Segment>,
}

enum Segment {
    /// `**`: any number of whole segments.
    Globstar,
    /// Everything else, matched against exactly one path segment.
    Glob(Vec<Token>),
}

enum Token {
    Char(char),
    /// `?`
    Any,
    /// `*`
    Star,
    /// `[…]`: ranges are inclusive; a single character is a range of one.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Glob {
    fn new(pattern: &str) -> Glob {
        let (anchored, pattern) = match pattern.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let directory = pattern.ends_with('/');
        let pattern = pattern.trim_end_matches('/');
        if pattern.is_empty() {
            // "" and "/" name nothing; matching everything would be a
            // surprising reading of an empty config entry.
            return Glob { segments: Vec::new() };
        }
        let mut segments = Vec::new();
        if !anchored && !pattern.contains('/') {
            segments.push(Segment::Globstar);
        }
        // Empty segments ("a//b") carry no meaning in a path; drop them on
        // both sides so they cannot make a pattern unmatchable.
        segments.extend(
            pattern
                .split('/')
                .filter(|s| !s.is_empty())
                .map(|s| if s == "**" { Segment::Globstar } else { Segment::Glob(parse_segment(s)) }),
        );
        if directory {
            // At least one segment below the directory: `fixtures/` must not
            // match a file that is itself called `fixtures`.
            segments.push(Segment::Globstar);
            segments.push(Segment::Glob(vec![Token::Star]));
        }
        Glob { segments }
    }

    fn is_match(&self, path: &str) -> bool {
        if self.segments.is_empty() {
            return false;
        }
        let path = path.strip_prefix("./").unwrap_or(path);
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        wildcard_match(
            &self.segments,
            &parts,
            |s| matches!(s, Segment::Globstar),
            |segment, part| match segment {
                Segment::Globstar => false,
                Segment::Glob(tokens) => {
                    let chars: Vec<char> = part.chars().collect();
                    wildcard_match(tokens, &chars, |t| matches!(t, Token::Star), token_matches)
                }
            },
        )
    }
}

fn token_matches(token: &Token, c: &char) -> bool {
    match token {
        Token::Char(want) => want == c,
        Token::Any => true,
        Token::Star => false,
        Token::Class { negated, ranges } => ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(c)) != *negated,
    }
}

/// The classic wildcard match, at either level: `star` items match any run of
/// units, every other item exactly one unit for which `one` holds.
///
/// Only the most recent star is ever backtracked to: because every other item
/// consumes exactly one unit, letting an earlier star absorb more can never
/// succeed where the later one failed. That keeps the match O(items × units)
/// however many stars a pattern has, where naive recursion is exponential.
fn wildcard_match<P, U>(items: &[P], units: &[U], star: impl Fn(&P) -> bool, one: impl Fn(&P, &U) -> bool) -> bool {
    let (mut p, mut u) = (0, 0);
    // After the last star seen: the item following it, and the unit it would
    // resume from if the star absorbed one more unit.
    let mut resume: Option<(usize, usize)> = None;
    while u < units.len() {
        if let Some(item) = items.get(p) {
            if star(item) {
                resume = Some((p + 1, u));
                p += 1;
                continue;
            }
            if one(item, &units[u]) {
                p += 1;
                u += 1;
                continue;
            }
        }
        match resume {
            Some((after_star, from)) => {
                resume = Some((after_star, from + 1));
                p = after_star;
                u = from + 1;
            }
            None => return false,
        }
    }
    items[p..].iter().all(star)
}

fn parse_segment(segment: &str) -> Vec<Token> {
    let chars: Vec<char> = segment.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => match chars.get(i) {
                Some(&next) => {
                    tokens.push(Token::Char(next));
                    i += 1;
                }
                None => tokens.push(Token::Char('\\')),
            },
            '*' => {
                // Runs of stars inside a segment are one star.
                if !matches!(tokens.last(), Some(Token::Star)) {
                    tokens.push(Token::Star);
                }
            }
            '?' => tokens.push(Token::Any),
            '[' => match parse_class(&chars[i..]) {
                Some((token, used)) => {
                    tokens.push(token);
                    i += used;
                }
                // An unclosed `[` is an ordinary character, as in git.
                None => tokens.push(Token::Char('[')),
            },
            _ => tokens.push(Token::Char(c)),
        }
    }
    tokens
}

/// Parses a class after its `[`; returns it and how many characters it used,
/// including the closing `]`, or `None` when there is no closing `]`.
fn parse_class(chars: &[char]) -> Option<(Token, usize)> {
    let mut i = 0;
    let negated = matches!(chars.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let mut c = *chars.get(i)?;
        i += 1;
        // A `]` right after the opening (or its negation) is a member, so
        // `[]]` is a class of one.
        if c == ']' && !first {
            return Some((Token::Class { negated, ranges }, i));
        }
        first = false;
        if c == '\\' {
            c = *chars.get(i)?;
            i += 1;
        }
        let is_range = chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&end| end != ']');
        if is_range {
            let mut end = *chars.get(i + 1)?;
            i += 2;
            if end == '\\' {
                end = *chars.get(i)?;
                i += 1;
            }
            ranges.push((c, end));
        } else {
            ranges.push((c, c));
        }
    }
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
            ("?.txt", "é.txt", true),
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
