//! The terminal on Unix: its size, and Ctrl-C while a pager runs.

/// The terminal's rows and columns.
pub fn size(stdout: &std::io::Stdout) -> Option<(u16, u16)> {
    let size = rustix::termios::tcgetwinsize(stdout).ok()?;
    Some((size.ws_row, size.ws_col))
}

/// Ctrl-C, as SIGINT.
pub fn interrupts() -> std::io::Result<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
}
