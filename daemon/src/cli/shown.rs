//! Text the command line prints for a person, made safe for a terminal.
//!
//! Comments, summaries, reviews, client names, file names and file lines
//! come from agents, reviewers and repositories, none of them trusted. Raw,
//! their control characters would drive the terminal: OSC 52 writes the
//! clipboard, OSC 0 retitles the window, `CSI 2K` and a carriage return
//! overwrite a line, SGR 8 conceals text, and bidirectional overrides
//! reorder what a person reads (the "Trojan Source" trick). Every human
//! printer goes through [`visible`] (with [`say!`](say) for whole lines),
//! always, not only when stdout is a terminal: output piped into `less -R`,
//! or captured and `cat`-ed later, reaches a terminal just the same. `--json`
//! output is left exact: scripts get the bytes as they are.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every character that could steer a terminal written out as
/// a visible escape, as Rust writes them in strings: C0 controls other than
/// tab and newline, and DEL, as `\x1b`, `\x07`, `\x7f`; C1 controls
/// (U+0080–U+009F) and the invisible marks and overrides that change the
/// order text is shown in (U+061C, U+200E, U+200F, U+202A–U+202E,
/// U+2066–U+2069) as `\u{9b}`, `\u{202e}`. A carriage return that ends a
/// line (`\r\n`) is dropped, since it shows nothing; any other is `\x0d`.
/// Borrowed unchanged when there is nothing to escape.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(steers) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            c if steers(c) && c.is_ascii() => {
                let _ = write!(shown, "\\x{:02x}", c as u32);
            }
            c if steers(c) => {
                let _ = write!(shown, "\\u{{{:x}}}", c as u32);
            }
            c => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

/// Whether a character must not reach a terminal as it is.
fn steers(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `println!` for a person: the formatted line passed through [`visible`].
/// Every human printer of the command line prints with it.
macro_rules! say {
    () => {
        println!()
    };
    ($($arg:tt)*) => {
        println!("{}", $crate::cli::shown::visible(&format!($($arg)*)))
    };
}
pub(crate) use say;

#[cfg(test)]
mod tests {
    use super::*;

    fn check(raw: &str, shown: &str) {
        assert_eq!(visible(raw), shown, "{raw:?}");
    }

    #[test]
    fn what_could_steer_a_terminal_is_shown_and_the_rest_is_kept() {
        check("plain text, tabs\tand\nnewlines", "plain text, tabs\tand\nnewlines");
        check("héllo wörld — ✓ 日本 ▸", "héllo wörld — ✓ 日本 ▸");
        check("\u{1b}]52;c;cHduZWQ=\u{7}", "\\x1b]52;c;cHduZWQ=\\x07");
        check("\u{1b}]0;PWNED\u{7}", "\\x1b]0;PWNED\\x07");
        check("\u{1b}[2K\rfake", "\\x1b[2K\\x0dfake");
        check("\u{1b}[8mhidden\u{1b}[0m", "\\x1b[8mhidden\\x1b[0m");
        check("abc\u{202e}fed", "abc\\u{202e}fed");
        check("\u{2066}\u{2069}\u{200e}\u{200f}\u{61c}", "\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}");
        check("\u{9b}31m \u{85}", "\\u{9b}31m \\u{85}");
        check("nul\u{0} bell\u{7} del\u{7f} bs\u{8}", "nul\\x00 bell\\x07 del\\x7f bs\\x08");
        check("windows\r\nlines\r\n", "windows\nlines\n");
        check("trailing\r", "trailing\\x0d");
        check("", "");
    }

    #[test]
    fn clean_text_is_not_copied() {
        assert!(matches!(visible("nothing to do\n"), Cow::Borrowed(_)));
    }
}
