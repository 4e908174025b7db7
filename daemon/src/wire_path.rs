//! Workspace-relative paths as Parley hands them out (on the wire, in the
//! store, in `.reviews/`): `/`-separated on every OS, so a thread made on
//! Windows as `src\lib.rs` is `src/lib.rs` to every client and file.
//!
//! A `\` separates folders only on Windows; elsewhere it is a character a
//! file name may hold, and is kept.

use std::path::{Path, PathBuf};

/// Whether `\` separates folders where this daemon runs, as `/` does everywhere.
const BACKSLASH_SEPARATES: bool = cfg!(windows);

/// A relative path the daemon made (stripping a workspace off a file), as text.
pub fn of(relative: &Path) -> String {
    slashed(&relative.to_string_lossy())
}

/// A relative path as someone wrote it (an agent's review reference, a
/// person's `src\lib.rs` at a Windows prompt, a reviewer's finding).
pub fn slashed(written: &str) -> String {
    slashed_where(written, BACKSLASH_SEPARATES)
}

/// The file a `/`-separated relative path names in `workspace`, in the OS's
/// own form (`Z:\repo\src\lib.rs` on Windows, not `Z:\repo\src/lib.rs`).
pub fn file_in(workspace: &Path, relative: &str) -> PathBuf {
    let mut file = workspace.to_owned();
    file.extend(relative.split('/').filter(|part| !part.is_empty()));
    file
}

fn slashed_where(written: &str, backslash_separates: bool) -> String {
    if backslash_separates { written.replace('\\', "/") } else { written.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_windows_backslashes_become_slashes() {
        assert_eq!(slashed_where(r"src\lib.rs", true), "src/lib.rs");
        assert_eq!(slashed_where(r"src\nested/mixed\mod.rs", true), "src/nested/mixed/mod.rs");
        assert_eq!(slashed_where("src/lib.rs", true), "src/lib.rs");
        assert_eq!(slashed_where(r"docs\design.md:12", true), "docs/design.md:12");
    }

    #[test]
    fn elsewhere_a_backslash_is_part_of_a_name() {
        assert_eq!(slashed_where(r"odd\name.rs", false), r"odd\name.rs");
        assert_eq!(slashed_where("src/lib.rs", false), "src/lib.rs");
    }

    #[test]
    fn what_this_os_separates_is_what_its_paths_split_on() {
        // The choice agrees with how std splits paths here.
        let parts = Path::new(r"src\lib.rs").components().count();
        assert_eq!(BACKSLASH_SEPARATES, parts == 2);
        assert_eq!(of(&Path::new("src").join("lib.rs")), "src/lib.rs");
        let file = file_in(Path::new("/repo"), "src/nested/lib.rs");
        assert_eq!(file, Path::new("/repo").join("src").join("nested").join("lib.rs"));
        assert_eq!(file.to_str(), Some("/repo/src/nested/lib.rs"));
    }
}
