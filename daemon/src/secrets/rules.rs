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
//! - The entropy floor is 3.5 bits per character as specified, but 3.0 for
//!   hexadecimal values, which cannot reach much more: at 3.5 one random
//!   32-digit hex key in five would pass unreported.
//! - A `-----BEGIN … PRIVATE KEY-----` line is reported even in code that
//!   only parses PEM; such a file is rare and is what `allow_paths` is for.

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
pub fn scan_line(line: &str, bare_literals: bool) -> Vec<&'static str> {
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
