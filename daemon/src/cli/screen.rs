//! Long output on a terminal: whether it is coloured (`--color`,
//! `NO_COLOR`, whether stdout is a terminal at all) and the pager it goes
//! through when it is taller than the screen (`$PARLEY_PAGER`, `$PAGER`,
//! else `less` with `LESS=FRX`), as git does. Never a pager when stdout is
//! not a terminal.

use std::io::IsTerminal as _;
use std::process::Stdio;

use tokio::io::AsyncWriteExt as _;

#[cfg(unix)]
#[path = "screen/unix.rs"]
mod terminal;
#[cfg(windows)]
#[path = "screen/windows.rs"]
mod terminal;

/// `--color`: when to colour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set or `TERM` is `dumb`.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether output is coloured.
    pub fn colours(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
                let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
                std::io::stdout().is_terminal() && !no_color && !dumb
            }
        }
    }
}

/// How text is coloured: SGR sequences around a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    /// A heading: the round's title, a file's name.
    Heading,
    Added,
    Removed,
    /// Where a diff skips unchanged lines.
    Gap,
    /// A comment shown under the line it is about.
    Comment,
    /// What to type next.
    Hint,
}

impl Style {
    fn sgr(self) -> Option<&'static str> {
        match self {
            Style::Plain => None,
            Style::Heading => Some("\x1b[1m"),
            Style::Added => Some("\x1b[32m"),
            Style::Removed => Some("\x1b[31m"),
            Style::Gap => Some("\x1b[36m"),
            Style::Comment => Some("\x1b[33m"),
            Style::Hint => Some("\x1b[2m"),
        }
    }
}

/// The reset after a coloured line.
const RESET: &str = "\x1b[0m";

/// Lines, each with its style, put together as text for a terminal. Every
/// line goes through [`visible`](super::shown::visible) before it is
/// coloured, so only the colours added here reach the terminal raw.
#[derive(Debug, Default)]
pub struct Page {
    lines: Vec<(Style, String)>,
}

impl Page {
    /// Adds `text` (one line or several, without the final newline).
    pub fn line(&mut self, style: Style, text: impl Into<String>) {
        self.lines.push((style, text.into()));
    }

    pub fn blank(&mut self) {
        self.lines.push((Style::Plain, String::new()));
    }

    /// The page as text, coloured or not.
    pub fn text(&self, colour: bool) -> String {
        let mut out = String::new();
        for (style, line) in &self.lines {
            let shown = super::shown::visible(line);
            match style.sgr().filter(|_| colour && !shown.is_empty()) {
                Some(sgr) => {
                    // Each line of a multi-line entry coloured on its own, so
                    // a pager showing any one of them shows it coloured.
                    for part in shown.split('\n') {
                        out.push_str(sgr);
                        out.push_str(part);
                        out.push_str(RESET);
                        out.push('\n');
                    }
                }
                None => {
                    out.push_str(&shown);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// How many terminal rows the page takes at `columns` wide, long lines
    /// wrapping (each character counted one column wide, which errs on the
    /// side of paging).
    fn rows(&self, columns: usize) -> usize {
        let columns = columns.max(1);
        self.lines
            .iter()
            .flat_map(|(_, text)| text.split('\n'))
            .map(|line| line.chars().count().div_ceil(columns).max(1))
            .sum()
    }

    /// Prints the page: through the pager when stdout is a terminal and the
    /// page is taller than it, else straight to stdout.
    pub async fn print(&self, colour: bool) -> anyhow::Result<()> {
        let text = self.text(colour);
        let Some(pager) = self.pager() else {
            print!("{text}");
            return Ok(());
        };
        if let Err(e) = run_pager(&pager, &text).await {
            eprintln!("parley: {e}; printing without it (set PARLEY_PAGER or PAGER to a pager that works, or to cat)");
            print!("{text}");
        }
        Ok(())
    }

    /// The pager command to use, if any: only on a terminal the page does
    /// not fit.
    fn pager(&self) -> Option<String> {
        let stdout = std::io::stdout();
        if !stdout.is_terminal() {
            return None;
        }
        let (rows, cols) = terminal::size(&stdout)?;
        // A terminal that does not know its size (0 rows) is not paged.
        if rows == 0 || self.rows(usize::from(cols.max(1))) < usize::from(rows) {
            return None;
        }
        pager_command(std::env::var("PARLEY_PAGER").ok(), std::env::var("PAGER").ok())
    }
}

/// The pager `$PARLEY_PAGER` or `$PAGER` names (the first that is set), else
/// `less`; none when the one named is empty or `cat`.
fn pager_command(parley_pager: Option<String>, pager: Option<String>) -> Option<String> {
    let chosen = parley_pager.or(pager).unwrap_or_else(|| "less".to_owned());
    let chosen = chosen.trim();
    (!chosen.is_empty() && chosen != "cat").then(|| chosen.to_owned())
}

/// Runs `pager` (a shell command, as git runs `$PAGER`) with `text` on its
/// input, and waits for it. `LESS` defaults to `FRX`: quit when the text
/// fits, keep colours, leave the text on the screen. Ctrl-C goes to the
/// pager; this process waits for it rather than end under it.
async fn run_pager(pager: &str, text: &str) -> anyhow::Result<()> {
    let mut interrupts = terminal::interrupts()?;
    let mut command = tokio::process::Command::new("/bin/sh");
    command.arg("-c").arg(pager).stdin(Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        command.env("LESS", "FRX");
    }
    let mut child = command.spawn().map_err(|e| anyhow::anyhow!("cannot start the pager `{pager}`: {e}"))?;
    if let Some(mut input) = child.stdin.take() {
        // A pager quit before the end (`q` in less) closes its input: done.
        let _ = input.write_all(text.as_bytes()).await;
    }
    let status = loop {
        tokio::select! {
            status = child.wait() => break status?,
            _ = interrupts.recv() => {}
        }
    };
    // The shell's "command not found" and "cannot run": nothing was shown.
    if matches!(status.code(), Some(126 | 127)) {
        anyhow::bail!("the pager `{pager}` could not be run ({status})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pager_is_parleys_then_the_users_then_less_and_cat_means_none() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(pager_command(None, None), some("less"));
        assert_eq!(pager_command(None, some("most")), some("most"));
        assert_eq!(pager_command(some("less -S"), some("most")), some("less -S"));
        assert_eq!(pager_command(some(""), some("most")), None);
        assert_eq!(pager_command(None, some("cat")), None);
    }

    #[test]
    fn colour_wraps_each_line_and_never_an_escape_from_the_text() {
        let mut page = Page::default();
        page.line(Style::Added, "+new\u{1b}[8m");
        page.line(Style::Plain, "plain");
        page.blank();
        assert_eq!(page.text(true), "\x1b[32m+new\\x1b[8m\x1b[0m\nplain\n\n");
        assert_eq!(page.text(false), "+new\\x1b[8m\nplain\n\n");
    }

    #[test]
    fn long_lines_count_the_rows_they_wrap_to() {
        let mut page = Page::default();
        page.line(Style::Plain, "x".repeat(25));
        page.line(Style::Plain, "two\nlines");
        page.blank();
        assert_eq!(page.rows(10), 3 + 2 + 1);
    }
}
