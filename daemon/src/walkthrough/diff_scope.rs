//! What a ```` ```gitdiff ```` block shows, as the scope Parley's diff review
//! takes (`all`, `staged`, `unstaged`, a commit or a range), its
//! `exclude_staged` and `exclude_unstaged` applied; or why they cannot be.
//!
//! `working` is the working tree against HEAD: it holds the staged change
//! and the unstaged one, so either can be left out. `staged` is the index
//! against HEAD. A single commit is the working tree against it: leaving
//! out both the staged and the unstaged change leaves its commits
//! (`commit..HEAD`); one alone cannot be left out of it. A range of commits
//! (`A..B`) holds neither, so the flags leave it as it is.

/// The scope the diff review shows for `range` with the flags applied.
pub fn scope(range: &str, exclude_staged: bool, exclude_unstaged: bool) -> Result<String, String> {
    let range = range.trim();
    if range.is_empty() {
        return Err("the gitdiff has no range: write `range: HEAD~1..HEAD`, `working` or `staged`".into());
    }
    let nothing = |what: &str| {
        Err(format!("`range: {range}` with {what} leaves nothing to show: drop one of them, or give another range"))
    };
    match (range, exclude_staged, exclude_unstaged) {
        ("working", true, true) => nothing("exclude_staged and exclude_unstaged"),
        ("working", true, false) => Ok("unstaged".into()),
        ("working", false, true) => Ok("staged".into()),
        ("working", false, false) => Ok("all".into()),
        ("staged", true, _) => nothing("exclude_staged"),
        ("staged", false, _) => Ok("staged".into()),
        (range, _, _) if range.contains("..") => Ok(range.to_owned()),
        (commit, false, false) => Ok(commit.to_owned()),
        (commit, true, true) => Ok(format!("{commit}..HEAD")),
        (commit, _, _) => Err(format!(
            "`range: {commit}` is the working tree against {commit}, from which Parley cannot leave out only the \
             staged or only the unstaged change: write `{commit}..HEAD` for its commits, or `working` with the flag \
             for the uncommitted change"
        )),
    }
}

/// The `git diff` command that shows `scope` at the terminal.
pub fn git_command(scope: &str) -> String {
    match scope {
        "all" => "git diff HEAD".into(),
        "staged" => "git diff --cached".into(),
        "unstaged" => "git diff".into(),
        other => format!("git diff {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_narrow_what_the_range_holds_or_say_why_they_cannot() {
        let cases = [
            ("working", false, false, Ok("all")),
            ("working", true, false, Ok("unstaged")),
            ("working", false, true, Ok("staged")),
            ("working", true, true, Err("leaves nothing to show")),
            ("staged", false, true, Ok("staged")),
            ("staged", true, false, Err("leaves nothing to show")),
            ("HEAD~2..HEAD", true, true, Ok("HEAD~2..HEAD")),
            ("main...HEAD", false, false, Ok("main...HEAD")),
            ("HEAD~2", false, false, Ok("HEAD~2")),
            ("HEAD~2", true, true, Ok("HEAD~2..HEAD")),
            ("HEAD~2", true, false, Err("write `HEAD~2..HEAD` for its commits")),
            (" ", false, false, Err("has no range")),
        ];
        for (range, staged, unstaged, want) in cases {
            match (scope(range, staged, unstaged), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{range} {staged} {unstaged}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{range}: {got}"),
                (got, want) => panic!("{range} {staged} {unstaged}: got {got:?}, want {want:?}"),
            }
        }
        assert_eq!(git_command("unstaged"), "git diff");
        assert_eq!(git_command("HEAD~1..HEAD"), "git diff HEAD~1..HEAD");
    }
}
