//! Text as threads see it: a file's Windows line endings (`\r\n`) read as
//! `\n`, wherever text is read for anchoring (a file with threads, an
//! editor's unsaved buffer, the text an editor quotes, a suggested change).
//!
//! Done once, where the text comes in, so that everything after it (byte
//! ranges, quotes, context, columns in every encoding, line diffs, the hash
//! a file's threads were checked against) is the same for a CRLF file, an
//! LF file and one with mixed endings: a quote never carries a stray `\r`, a
//! column never counts one, and a file whose endings flip between LF and
//! CRLF has the same text, so its threads stay where they are.
//!
//! A lone `\r` (not followed by `\n`) is not a line ending here, as it is
//! not for git or for Rust's `str::lines`, and is kept.

use std::borrow::Cow;

/// `text` with every `\r\n` made `\n`; no copy when it has none.
pub fn as_lf(text: &str) -> Cow<'_, str> {
    if memchr::memmem::find(text.as_bytes(), b"\r\n").is_none() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace("\r\n", "\n"))
}

/// [`as_lf`] of an owned text, reusing it when it has no `\r\n`.
pub fn into_lf(text: String) -> String {
    match as_lf(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(lf) => lf,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_crlf_pairs_become_newlines() {
        let check = |text: &str, want: &str, copied: bool| {
            let got = as_lf(text);
            assert_eq!(got, want, "{text:?}");
            assert_eq!(matches!(got, Cow::Owned(_)), copied, "{text:?}");
            assert_eq!(into_lf(text.to_owned()), want, "{text:?}");
        };
        check("", "", false);
        check("one\ntwo\n", "one\ntwo\n", false);
        check("one\r\ntwo\r\n", "one\ntwo\n", true);
        check("mixed\r\nlf\ncrlf\r\nend", "mixed\nlf\ncrlf\nend", true);
        check("a lone \r stays\r\n", "a lone \r stays\n", true);
        check("\r\r\n\n", "\r\n\n", true);
        check("é\r\n𝄞", "é\n𝄞", true);
    }
}
