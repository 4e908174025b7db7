//! The terminal on Windows: output is not paged (there is no `less` to
//! assume), and Ctrl-C while a pager runs.

/// Unknown, so nothing is paged.
pub fn size(_stdout: &std::io::Stdout) -> Option<(u16, u16)> {
    None
}

/// Ctrl-C.
pub fn interrupts() -> std::io::Result<tokio::signal::windows::CtrlC> {
    tokio::signal::windows::ctrl_c()
}
