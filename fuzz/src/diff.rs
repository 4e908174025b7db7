//! A git diff, read as the secret scan reads it: its files and added lines.

use parley_daemon::secrets::{self, diff};

/// Any bytes as `git diff` output (read as text, as the daemon reads git's
/// output).
///
/// Rules: added lines are numbered from 1, and the scan's findings name
/// lines the reader reported.
pub fn git_diff(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut added = Vec::new();
    for event in diff::read(&text) {
        if let diff::Event::Added { line, .. } = event {
            assert!(line >= 1, "an added line numbered 0");
            added.push(line);
        }
    }
    for finding in secrets::scan_diff(&text, &[]) {
        assert!(added.contains(&finding.line), "a finding on line {} that no added line has", finding.line);
    }
}
