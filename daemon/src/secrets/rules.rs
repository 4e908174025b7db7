//! The rules of the secret scan: what each one catches on a line, and what
//! it lets through. Pure: no IO; the regexes are compiled once.
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
//! | `huggingface-token` | `hf_` + 30 or more letters and digits | `hf_hub_download` and other names, which break the run with `_` |
//! | `sendgrid-api-key` | `SG.` + 22 + `.` + 43 | |
//! | `azure-access-key` | a base64 value of 20 or more after `AccountKey=`, `SharedAccessKey=` or `SharedAccessSignature=sig…` in a connection string | the storage emulator's published key (`Eby8vdM02x…`) |
//! | `putty-private-key` | a `.ppk` file's `PuTTY-User-Key-File-N:` header and its `Private-Lines: N` line | |
//! | `url-password` | the password of a URL's userinfo: `postgres://user:PASSWORD@host`, `redis://:PASSWORD@host` | `https://user@host` (no password), placeholders (`user:password@`, `:${PW}@`, `{password}`, `example` hosts), the password repeating the user name (`postgres:postgres`), and common dev defaults (`root`, `admin`, `secret`, `test`, `guest`) |
//! | `netrc-password` | `.netrc` syntax: a line that is `password VALUE`, alone or after `machine HOST` and `login USER` | prose (`password is kept in the vault`: more words follow), source code, placeholders |
//! | `generic-secret` | a value of 16 or more characters with a digit and at least 3.5 bits of entropy per character (3.0 for hex), assigned (`=`, `:`, `:=`, `=>`) quoted or bare to a name containing secret, token, password, passwd, passphrase, credential, api_key/apikey, access_key, private_key (which covers client_secret), or ending in `_pass` | see below |
//! | `password` | a shorter value (8 or more characters) assigned to a password-like name (`password`, `passwd`, `passphrase`, `pwd`, or ending in `_pass`) when it mixes at least three of lowercase, uppercase, digits and symbols: `DB_PASSWORD=Tr0ub4dor&3x` | the same exclusions as `generic-secret`, so `password = get_password()`, `password: postgres`, `password = self.password` and `POSTGRES_PASSWORD=${PW}` stay quiet |
//!
//! Every rule but the two private-key ones skips obvious placeholders: values containing
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
//! base64 fixtures and CSS colours quiet. Over the 11,400 files of this
//! workspace's dependency sources (125 MB, every file scanned as a whole
//! text) the rules report two lines: PEM headers inside a regex corpus.
//! Before `url-password` and `password` learnt to skip URL parsers' test
//! data (`moz://foo:bar@servo`, percent-escaped passwords), they reported 23
//! more, all in the `url` crate's test suite.
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
//! - The entropy floor is 3.5 bits per character as specified, but 3.0 for
//!   hexadecimal values, which cannot reach much more: at 3.5 one random
//!   32-digit hex key in five would pass unreported.
//! - A `-----BEGIN … PRIVATE KEY-----` line is reported even in code that
//!   only parses PEM; such a file is rare and is what `allow_paths` is for.
//!   The lines of the key that follow it carry no mark of their own; the
//!   scan of a whole file or a diff (`secrets.rs`) follows the block to its
//!   `-----END` line (or a `.ppk` file's `Private-Lines:` to its
//!   `Private-MAC:`) with [`opens_key_block`], [`is_key_body`] and
//!   [`closes_key_block`].
//! - A URL's password is reported however short it is, but not when it is a
//!   word every tutorial and `docker-compose.yml` uses (`postgres:postgres`,
//!   `root:root`, `user:password`): those grant nothing anywhere that
//!   matters, and stopping every round over a local test database would
//!   teach people to switch the scan off.
//! - Passwords shorter than 16 characters cannot be told from code by
//!   entropy. The `password` rule asks instead for the mix a password
//!   policy asks for (three of lowercase, uppercase, digits, symbols, in 8
//!   or more characters) under a password-like name; identifiers
//!   (`userPassword1`, `self.password`) fail it by being names, calls by
//!   their parenthesis, and lowercase dev defaults by their single class.

use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex};

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
    /// A value under a password-like name, shorter than `RandomValue`
    /// needs: reported when it mixes character classes as a password does
    /// (see [`looks_like_password`]).
    Password,
    /// A URL's userinfo password (the `secret` group, after the `user`
    /// group, before the `host` group), unless it is a placeholder or a
    /// well-known default.
    UrlPassword,
    /// A `.netrc` line: only where a bare value can be a literal (not in
    /// source code), and not a placeholder.
    Netrc,
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
    // Through the `-----END` line when the whole key is on one line (a
    // JSON `private_key` field), else to the end of the line: what follows
    // the armour is the key.
    (
        "private-key",
        Confirm::Always,
        r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*)",
    ),
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
    ("huggingface-token", Confirm::NotPlaceholder, r"(?-u:\b)(?P<secret>hf_[A-Za-z0-9]{30,})(?-u:\b)"),
    (
        "sendgrid-api-key",
        Confirm::NotPlaceholder,
        r"(?-u:\b)(?P<secret>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?:[^A-Za-z0-9_-]|$)",
    ),
    (
        "azure-access-key",
        Confirm::NotPlaceholder,
        r"(?i:(?-u:\b)(?:AccountKey|SharedAccessKey))\s*=\s*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
    ),
    ("putty-private-key", Confirm::Always, r"PuTTY-User-Key-File-[0-9]+:"),
    ("putty-private-key", Confirm::Always, r"^\s*Private-Lines:\s*[0-9]+"),
    (
        "url-password",
        Confirm::UrlPassword,
        r"(?i:(?-u:\b)[a-z][a-z0-9+.-]*)://(?P<user>[^\s:/@?#'\x22`]*):(?P<secret>[^\s:/@?#'\x22`]+)@(?P<host>[^\s/?#'\x22`]*)",
    ),
    (
        "netrc-password",
        Confirm::Netrc,
        concat!(
            r"^\s*(?:(?:machine\s+\S+|default|login\s+\S+|account\s+\S+)\s+)*password\s+(?P<secret>\S+)",
            r"(?:\s+(?:machine|login|account|default|macdef)(?:\s.*)?)?\s*$"
        ),
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
    (
        "password",
        Confirm::Password,
        concat!(
            // Only a name that ends as a password's does (`DB_PASSWORD`,
            // `adminPassword`, `smtp.pass`): `password_hint` and
            // `password_regex` hold something else.
            r"(?i:(?:(?:(?-u:\b)|[a-z0-9_.-])(?:passw(?:or)?d|passphrase)|(?:(?-u:\b)|[_.-])(?:pwd|pass))[0-9]?)",
            assigned!(),
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

/// Every secret on a line: its byte span (the secret alone, not the name
/// it is assigned to) and its rule, in the order they start, without
/// overlaps (on overlap the earlier rule in the table wins).
pub fn find(line: &str, bare_literals: bool) -> Vec<(Range<usize>, &'static str)> {
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
    hits
}

/// The armour and headers of the multi-line keys: where a key's block
/// starts and ends.
static KEY_BLOCK_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|^\s*Private-Lines:\s*[0-9]+")
        .expect("a fixed pattern")
});
static KEY_BLOCK_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|^\s*Private-MAC:").expect("a fixed pattern")
});

/// Whether the line opens a private key whose body follows on the next
/// lines: a `-----BEGIN … PRIVATE KEY-----` line without its `-----END`,
/// or a `.ppk` file's `Private-Lines: N`.
pub fn opens_key_block(line: &str) -> bool {
    KEY_BLOCK_START.find(line).is_some_and(|start| !KEY_BLOCK_END.is_match(&line[start.end()..]))
}

/// Whether the line ends a private key's block: its `-----END … PRIVATE
/// KEY-----` line, or a `.ppk` file's `Private-MAC:`.
pub fn closes_key_block(line: &str) -> bool {
    KEY_BLOCK_END.is_match(line)
}

/// Whether the line can be part of a key's body: base64 (possibly quoted,
/// indented or ending in `\n` inside a string), an encrypted PEM's
/// `Proc-Type:` and `DEK-Info:` headers, or empty.
pub fn is_key_body(line: &str) -> bool {
    let trimmed = line.trim().trim_matches(|c| matches!(c, '"' | '\'' | ',' | '+'));
    let trimmed = trimmed.strip_suffix("\\n").unwrap_or(trimmed).trim_matches(|c| matches!(c, '"' | '\''));
    trimmed.starts_with("Proc-Type:")
        || trimmed.starts_with("DEK-Info:")
        || trimmed.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
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
            Confirm::Password => {
                let value = literal_value(line, caps, bare_literals)?;
                looks_like_password(value.as_str()).then(|| value.range())
            }
            Confirm::UrlPassword => {
                let secret = caps.name("secret")?;
                let user = caps.name("user").map_or("", |m| m.as_str());
                let host = caps.name("host").map_or("", |m| m.as_str());
                let password = secret.as_str();
                let known = |word: &str| {
                    let lower = word.to_ascii_lowercase();
                    lower == user.to_ascii_lowercase() || WELL_KNOWN_PASSWORDS.contains(&lower.as_str())
                };
                let template = password.contains(['{', '}']) || password.starts_with('$');
                let reported = !is_placeholder(password)
                    && !template
                    && !known(password)
                    && looks_like_url_password(password)
                    && !host.to_ascii_lowercase().contains("example");
                reported.then(|| secret.range())
            }
            Confirm::Netrc => {
                let secret = caps.name("secret")?;
                let value = secret.as_str();
                let reported = bare_literals && !is_placeholder(value) && !WELL_KNOWN_PASSWORDS.contains(&value);
                reported.then(|| secret.range())
            }
        }
    }
}

/// Passwords that grant nothing anywhere that matters: the defaults of
/// tutorials, local databases and `docker-compose.yml` files.
const WELL_KNOWN_PASSWORDS: &[&str] =
    &["password", "pass", "passwd", "pwd", "secret", "root", "admin", "test", "guest", "user", "postgres", "mysql"];

/// Whether a URL's password (percent-escapes decoded) reads as a real one
/// rather than the `a:b@`, `foo:bar@` of URL parsers' test suites: 6 or more
/// characters mixing two kinds (letters, digits, symbols, case), or 12 or
/// more, and no brackets.
fn looks_like_url_password(password: &str) -> bool {
    let decoded = percent_decoded(password);
    let length = decoded.chars().count();
    let classes = [
        decoded.chars().any(|c| c.is_ascii_lowercase()),
        decoded.chars().any(|c| c.is_ascii_uppercase()),
        decoded.chars().any(|c| c.is_ascii_digit()),
        decoded.chars().any(|c| !c.is_ascii_alphanumeric()),
    ];
    let mixed = classes.iter().filter(|&&present| present).count() >= 2;
    (length >= 12 || (length >= 6 && mixed)) && !decoded.contains(['[', ']', '(', ')', '<', '>'])
}

/// `%XX` escapes decoded (lossily, as text).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|&b| (b as char).to_digit(16));
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) = (hex(i + 1), hex(i + 2))
        {
            out.push(u8::try_from(high * 16 + low).unwrap_or(b'?'));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The value of an assignment match (`quoted`, or `bare` where a bare value
/// can be a literal and is not followed by a call, an index or a block).
fn literal_value<'h>(line: &str, caps: &Captures<'h>, bare_literals: bool) -> Option<regex::Match<'h>> {
    match caps.name("bare") {
        Some(_) if !bare_literals => None,
        Some(bare) => {
            let next = line[bare.end()..].chars().next();
            (!matches!(next, Some('(' | '[' | '{' | '<' | '"' | '\'' | '`'))).then_some(bare)
        }
        None => caps.name("quoted"),
    }
}

/// Whether a value under a password-like name reads as a person's password:
/// 8 to 64 characters mixing at least three of lowercase, uppercase, digits
/// and symbols, with a digit, and not a name, a path, a URL, a pattern or
/// a placeholder. `Tr0ub4dor&3x` is one; `get_password`, `postgres`,
/// `Password:` and `^[A-Za-z0-9]{8,}$` are not.
fn looks_like_password(value: &str) -> bool {
    let length = value.chars().count();
    let classes = [
        value.bytes().any(|b| b.is_ascii_lowercase()),
        value.bytes().any(|b| b.is_ascii_uppercase()),
        value.bytes().any(|b| b.is_ascii_digit()),
        value.chars().any(|c| !c.is_ascii_alphanumeric()),
    ];
    // Spelled out the way test fixtures dress up the word: `P@ssw0rd`.
    let plain: String = value
        .to_ascii_lowercase()
        .chars()
        .map(|c| match c {
            '@' | '4' => 'a',
            '0' => 'o',
            '$' | '5' => 's',
            '1' | '!' => 'i',
            '3' => 'e',
            other => other,
        })
        .collect();
    (8..=64).contains(&length)
        && classes[2]
        && classes.iter().filter(|&&present| present).count() >= 3
        && !value.contains(['[', ']', '{', '}', '(', ')', '\\', '<', '>'])
        // Percent-escaped: URL test data, not something a person typed.
        && percent_decoded(value) == value
        && !["pass", "word", "secret", "admin", "qwerty", "letmein"].iter().any(|w| plain.contains(w))
        && !value.contains("://")
        && !value.contains("::")
        && !is_path(value)
        && !looks_like_name(value)
        && !is_placeholder(value)
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
pub fn is_source_code(file: &str) -> bool {
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
    // Credentials published for everyone to use: Azure's storage emulator
    // (Azurite) key.
    const PUBLISHED: &[&str] = &["Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq"];
    let lower = value.to_ascii_lowercase();
    WORDS.iter().any(|word| lower.contains(word))
        || PUBLISHED.iter().any(|key| value.starts_with(key))
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
    use crate::secrets::tests::{check, new_file};
    use crate::secrets::{describe, scan_diff};

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
        ("huggingface-token", ".env", "HF_TOKEN={}", concat!("hf", "_KqzXbWvTcNpLmRtYsUoPaIeQwErTyUiOpAs")),
        (
            "sendgrid-api-key",
            "src/mail.py",
            "sg = SendGridAPIClient('{}')",
            concat!("SG", ".ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"),
        ),
        (
            "azure-access-key",
            "appsettings.json",
            r#"  "Storage": "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net","#,
            concat!("q3Xv9Lb2Kd8Rt5Wn1Mz7Hc4Pf6Gs0Jy", "AeBuCoDiEtFqGrHsIwJxKyLzMa0Nb1Oc2Pd3Qe4Rf5Sg=="),
        ),
        (
            "azure-access-key",
            ".env",
            "SERVICEBUS=Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={}",
            concat!("Zq8vK2mP9xLw4Rt7Yb3Nc6Hd", "1Fg5Js0Ua2Ve="),
        ),
        ("putty-private-key", "keys/deploy.ppk", "{} ssh-ed25519", concat!("PuTTY-User-", "Key-File-3:")),
        ("putty-private-key", "keys/deploy.ppk", "{} 1", concat!("Private-", "Lines:")),
        (
            "url-password",
            ".env",
            "DATABASE_URL=postgres://admin:{}@db.internal:5432/app",
            concat!("Zq8vK2mP", "9xLw4Rt7"),
        ),
        ("url-password", "config/cache.yaml", "  url: redis://:{}@cache:6379/0", concat!("s3cr", "etRedis!")),
        ("netrc-password", ".netrc", "machine api.github.com login octocat password {}", concat!("hunt", "er2xyz")),
        ("netrc-password", "home/.netrc", "  password {}", concat!("Zq8v", "K2mP")),
        ("password", ".env", "DB_PASSWORD={}", concat!("Tr0ub4", "dor&3x")),
        ("password", "src/db.py", r#"conn = connect(user="app", password="{}")"#, concat!("Zq8vK2", "mP9x!")),
        ("password", "config/app.yaml", "  adminPassword: {}", concat!("Winter", "2024#")),
    ];

    /// The kinds the scan learnt last, each with lines it must report and
    /// lines it must leave alone: (file, line, the rule it breaks or `None`).
    const NEW_KINDS: &[(&str, &str, Option<&str>)] = &[
        // Database URLs and other userinfo passwords.
        (".env", concat!("DATABASE_URL=postgres://admin:Zq8vK2mP", "9xLw4Rt7@db:5432/app"), Some("url-password")),
        ("src/db.rs", concat!(r#"let url = "mysql://app:s3cr3t-"#, r#"Pw@db/app";"#), Some("url-password")),
        ("README.md", concat!("amqp://guest:Xk2", "-pQ9z@rabbit:5672"), Some("url-password")),
        ("README.md", "git clone https://alice@github.com/o/r.git", None),
        ("README.md", "see https://github.com/o/r and ssh://git@host:22/o/r", None),
        (".env", "DATABASE_URL=postgres://postgres:postgres@localhost:5432/app", None),
        (".env", "DATABASE_URL=postgres://user:password@localhost/app", None),
        (".env", "DATABASE_URL=postgres://app:${DB_PASSWORD}@db/app", None),
        ("src/db.py", r#"url = f"postgres://{user}:{password}@{host}/db""#, None),
        ("src/db.py", r#"url = "postgres://%(user)s:%(password)s@%(host)s/db""#, None),
        ("docs/setup.md", "postgres://admin:Zq8vK2mP9xLw@db.example.com/app", None),
        ("docs/setup.md", "mongodb://root:root@mongo:27017", None),
        ("docs/api.md", "http://localhost:8080/path@v2", None),
        // URL parsers' test data (the url crate's suite is all of what the
        // rule met in this workspace's dependencies before these cases).
        ("tests/unit.rs", r#"let base: Url = "moz://foo:bar@servo/baz".parse().unwrap();"#, None),
        ("tests/data.json", r#""input": "http://&a:foo(b]c@d:2/","#, None),
        ("tests/data.json", r#""href": "http://:%3A%40c@d:2/","#, None),
        ("tests/data.json", r#""input": "http://%25DOMAIN:foobar@foodomain.com/","#, None),
        ("tests/data.json", r#""password": "%60%7B%7D%3C","#, None),
        (".env", concat!("REDIS_URL=redis://:Zq8v%40K2", "mP9@cache:6379"), Some("url-password")),
        // .netrc.
        (".netrc", concat!("machine api.github.com login octocat password hunt", "er2xyz"), Some("netrc-password")),
        (".netrc", concat!("password Zq8v", "K2mP"), Some("netrc-password")),
        ("docs/ops.md", "password is kept in the team vault", None),
        (".netrc", "machine example.com login me password <your-password>", None),
        ("src/login.rs", concat!("password hunt", "er2xyz"), None),
        // Azure connection strings.
        (
            "appsettings.json",
            concat!("AccountName=a;AccountKey=q3Xv9Lb2Kd8Rt5Wn1M", "z7Hc4Pf6Gs0JyAeBu=="),
            Some("azure-access-key"),
        ),
        (".env", concat!("SharedAccessKey=Zq8vK2mP9xLw4Rt7Yb3Nc6Hd", "1Fg5Js0Ua2Ve="), Some("azure-access-key")),
        (
            "local.settings.json",
            "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
            None,
        ),
        ("appsettings.json", "AccountKey=<your-storage-key>;", None),
        ("src/azure.ts", "const accountKey = process.env.AZURE_STORAGE_KEY;", None),
        // Hugging Face and SendGrid.
        (".env", concat!("HF_TOKEN=hf", "_KqzXbWvTcNpLmRtYsUoPaIeQwErTyUiOpAs"), Some("huggingface-token")),
        ("src/model.py", "from huggingface_hub import hf_hub_download, hf_api_token_path", None),
        ("src/model.py", "HF_TOKEN = os.environ['HF_TOKEN']", None),
        (
            "src/mail.ts",
            concat!("const key = 'SG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoT", "f-09kqeF8tAmbihYzrnopKc-1s5cr';"),
            Some("sendgrid-api-key"),
        ),
        ("src/mail.ts", "import SG from '@sendgrid/mail'; SG.setApiKey(key);", None),
        // PuTTY keys.
        ("id.ppk", "PuTTY-User-Key-File-3: ssh-ed25519", Some("putty-private-key")),
        ("id.ppk", "Private-Lines: 1", Some("putty-private-key")),
        ("id.ppk", "Public-Lines: 2", None),
        ("docs/putty.md", "PuTTY key files (.ppk) hold a private key", None),
        // Short passwords under password-like names.
        (".env", concat!("DB_PASSWORD=Tr0ub4", "dor&3x"), Some("password")),
        (".env", concat!("SMTP_PASS=Winter", "2024#"), Some("password")),
        (
            "src/db.go",
            concat!(r#"	db, err := sql.Open("pg", dsn); password := "Zq8vK2"#, r#"mP9x!""#),
            Some("password"),
        ),
        ("src/auth.py", "password = get_password()", None),
        ("src/auth.py", "password = self.password", None),
        ("src/auth.ts", "const password = await prompt('Password: ');", None),
        ("config/app.yaml", "password: postgres", None),
        ("docker-compose.yml", "  POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}", None),
        (".env", "DB_PASSWORD=changeme", None),
        ("src/forms.py", r#"password_regex = "^[a-z0-9]{8}$""#, None),
        ("src/forms.py", r#"password_label = "Password1:""#, None),
        ("tests/test_login.py", r#"client.login(password="P@ssw0rd1")"#, None),
        ("src/user.rs", r#"let password = String::from("x");"#, None),
        ("src/user.rs", "let password_len = 12;", None),
        ("config/app.yaml", "  min_password_length: 12", None),
        ("src/ui.ts", r#"<input type="password" placeholder="Password (8+ chars)">"#, None),
    ];

    #[test]
    fn the_new_kinds_are_caught_and_their_look_alikes_are_not() {
        let mut wrong = Vec::new();
        for &(file, line, rule) in NEW_KINDS {
            let found: Vec<&str> = scan_diff(&new_file(file, &[line]), &[]).into_iter().map(|f| f.rule).collect();
            let want: Vec<&str> = rule.into_iter().collect();
            if found != want {
                wrong.push(format!("{file}: {line}\n  found {found:?}, want {want:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

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
        let doc = include_str!("rules.rs");
        for &(name, _, _) in RULES {
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{name}");
            assert!(doc.contains(&format!("//! | `{name}` |")), "{name} is missing from the rule table");
            assert!(PLANTED.iter().any(|&(rule, ..)| rule == name), "{name} has no planted secret");
        }
        assert!(!COMPILED.is_empty());
    }

    const AWS: &str = concat!("AKIA", "Z7QX3M5N2PLWVKTR");
    const GHS: &str = concat!("ghs", "_rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsiVpz");

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
}
