//! The changes a review covers, captured with the git command line: the
//! repository root, the diff for a scope (staged, unstaged, all, or against a
//! base), new untracked files, and the ignored files left out; and, for a
//! person reviewing, each changed file's two versions as text.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::sessions::{FileStatus, FileVersions};

/// What part of the changes to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The index against HEAD.
    Staged,
    /// The working tree against the index, plus untracked files.
    Unstaged,
    /// The working tree against HEAD, plus untracked files (the default).
    All,
    /// The working tree against a ref, or a commit range such as `main..HEAD`.
    Base(String),
}

impl Scope {
    pub fn parse(scope: Option<&str>) -> Scope {
        match scope.map(str::trim) {
            None | Some("") | Some("all") => Scope::All,
            Some("staged") => Scope::Staged,
            Some("unstaged") => Scope::Unstaged,
            Some(other) => Scope::Base(other.to_owned()),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Scope::Staged => "staged".into(),
            Scope::Unstaged => "unstaged".into(),
            Scope::All => "all".into(),
            Scope::Base(base) => base.clone(),
        }
    }
}

/// Why the changes could not be captured; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error(
        "not a git repository: {0}; request_review reviews git changes, so run it inside a repository (or `git init`)"
    )]
    NotARepository(PathBuf),
    #[error("no changes in scope {scope}: {advice}")]
    NoChanges { scope: String, advice: &'static str },
    #[error("git could not read {what}: {message}")]
    Git { what: String, message: String },
    #[error("cannot run git: {0}; install git")]
    Missing(std::io::Error),
}

/// A captured diff.
#[derive(Debug, Clone)]
pub struct Changes {
    pub root: PathBuf,
    pub scope: Scope,
    /// The unified diff, ignored files left out.
    pub diff: String,
    /// Changed files, relative to the root.
    pub files: Vec<String>,
}

fn git(root: &Path, args: &[&str]) -> Result<std::process::Output, GitError> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off", "-c", "color.ui=never"])
        .args(args)
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .map_err(GitError::Missing)
}

fn checked(root: &Path, args: &[&str], what: &str) -> Result<String, GitError> {
    let out = git(root, args)?;
    if !out.status.success() {
        let message = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(GitError::Git { what: what.to_owned(), message });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The root of the repository holding `dir`.
pub fn repo_root(dir: &Path) -> Result<PathBuf, GitError> {
    let out = git(dir, &["rev-parse", "--show-toplevel"])?;
    if !out.status.success() {
        return Err(GitError::NotARepository(dir.to_owned()));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Captures the diff of `scope` in the repository at `root`, leaving out
/// files matching `ignored`.
pub fn capture(root: &Path, scope: &Scope, ignored: &[String]) -> Result<Changes, GitError> {
    let has_head = git(root, &["rev-parse", "--verify", "--quiet", "HEAD"])?.status.success();
    let base = ["diff", "--no-color", "--no-ext-diff", "--find-renames"];
    let mut diff = match scope {
        Scope::Staged => checked(root, &[&base[..], &["--cached"]].concat(), "the staged changes")?,
        Scope::Unstaged => checked(root, &base, "the unstaged changes")?,
        Scope::All if has_head => checked(root, &[&base[..], &["HEAD"]].concat(), "the changes since HEAD")?,
        // No commit yet: everything staged plus everything not.
        Scope::All => {
            checked(root, &[&base[..], &["--cached"]].concat(), "the staged changes")?
                + &checked(root, &base, "the unstaged changes")?
        }
        Scope::Base(reference) => {
            if reference.starts_with('-') {
                return Err(GitError::Git { what: reference.clone(), message: "a scope cannot start with '-'".into() });
            }
            checked(root, &[&base[..], &[reference.as_str()]].concat(), &format!("the changes against {reference}"))?
        }
    };
    if matches!(scope, Scope::Unstaged | Scope::All) {
        diff.push_str(&untracked(root)?);
    }
    let (diff, files) = without_ignored(&diff, ignored);
    if files.is_empty() {
        let advice = match scope {
            Scope::Staged => "stage your changes with `git add`, or pass scope \"all\"",
            Scope::Unstaged => "everything is staged or committed; pass scope \"staged\" or a base ref like \"main\"",
            Scope::All => {
                "the working tree matches HEAD; pass a base ref (e.g. \"main\" or \"HEAD~1\") to review commits"
            }
            Scope::Base(_) => "nothing differs from that ref",
        };
        return Err(GitError::NoChanges { scope: scope.name(), advice });
    }
    Ok(Changes { root: root.to_owned(), scope: scope.clone(), diff, files })
}

/// Files bigger than this are shown to a person as "too large", not as text.
const MAX_VERSION_BYTES: usize = 1024 * 1024;

/// Both versions of every file in `changes`, as a person reviews them: the
/// base version (where the scope's diff starts) and the version under review.
pub fn versions(changes: &Changes) -> Result<Vec<FileVersions>, GitError> {
    let root = &changes.root;
    let has_head = git(root, &["rev-parse", "--verify", "--quiet", "HEAD"])?.status.success();
    let (before, after) = match &changes.scope {
        Scope::Staged => (has_head.then(|| Version::Rev("HEAD".into())), Version::Index),
        Scope::Unstaged => (Some(Version::Index), Version::WorkTree),
        Scope::All => (has_head.then(|| Version::Rev("HEAD".into())), Version::WorkTree),
        Scope::Base(reference) => match reference.split_once("..") {
            Some((from, to)) => {
                let to = to.trim_start_matches('.');
                let or_head = |r: &str| if r.is_empty() { "HEAD".to_owned() } else { r.to_owned() };
                let from = if reference.contains("...") {
                    checked(root, &["merge-base", &or_head(from), &or_head(to)], "the merge base")?.trim().to_owned()
                } else {
                    or_head(from)
                };
                (Some(Version::Rev(from)), Version::Rev(or_head(to)))
            }
            None => (Some(Version::Rev(reference.clone())), Version::WorkTree),
        },
    };
    split_files(&changes.diff)
        .into_iter()
        .filter_map(ChunkPaths::of)
        .map(|paths| {
            let old = match (&paths.old, &before) {
                (Some(old), Some(version)) => version.read(root, old)?,
                _ => Text::Absent,
            };
            let new = match &paths.new {
                Some(new) => after.read(root, new)?,
                None => Text::Absent,
            };
            let status = match (&paths.old, &paths.new) {
                (None, _) => FileStatus::Added,
                (_, None) => FileStatus::Deleted,
                (Some(old), Some(new)) if old != new => FileStatus::Renamed,
                _ => FileStatus::Modified,
            };
            let binary = paths.binary || old.is_binary() || new.is_binary();
            let too_large = old.is_too_large() || new.is_too_large();
            Ok(FileVersions {
                path: paths.new.clone().or_else(|| paths.old.clone()).unwrap_or_default(),
                old_path: paths.old,
                status,
                before: if binary { None } else { old.text() },
                after: if binary { None } else { new.text() },
                binary,
                too_large,
            })
        })
        .collect()
}

/// Where one side of a file is read from.
enum Version {
    Rev(String),
    Index,
    WorkTree,
}

/// One side of a file as read.
enum Text {
    Absent,
    Binary,
    TooLarge,
    Utf8(String),
}

impl Text {
    fn of(bytes: Vec<u8>) -> Text {
        if bytes.len() > MAX_VERSION_BYTES {
            return Text::TooLarge;
        }
        if bytes.contains(&0) {
            return Text::Binary;
        }
        String::from_utf8(bytes).map_or(Text::Binary, Text::Utf8)
    }

    fn text(self) -> Option<String> {
        match self {
            Text::Utf8(text) => Some(text),
            _ => None,
        }
    }

    fn is_binary(&self) -> bool {
        matches!(self, Text::Binary)
    }

    fn is_too_large(&self) -> bool {
        matches!(self, Text::TooLarge)
    }
}

impl Version {
    fn read(&self, root: &Path, path: &str) -> Result<Text, GitError> {
        let object = match self {
            Version::Rev(rev) => format!("{rev}:{path}"),
            Version::Index => format!(":{path}"),
            Version::WorkTree => {
                let file = root.join(path);
                // Only regular files: a FIFO or a device is not a version of anything.
                let Ok(meta) = std::fs::symlink_metadata(&file) else { return Ok(Text::Absent) };
                if !meta.is_file() {
                    return Ok(if meta.file_type().is_symlink() { Text::Binary } else { Text::Absent });
                }
                if meta.len() > MAX_VERSION_BYTES as u64 {
                    return Ok(Text::TooLarge);
                }
                return Ok(std::fs::read(&file).map_or(Text::Absent, Text::of));
            }
        };
        let out = git(root, &["cat-file", "blob", &object])?;
        Ok(if out.status.success() { Text::of(out.stdout) } else { Text::Absent })
    }
}

/// A file diff's paths: `None` on the side where the file does not exist.
struct ChunkPaths {
    old: Option<String>,
    new: Option<String>,
    binary: bool,
}

impl ChunkPaths {
    fn of(chunk: &str) -> Option<ChunkPaths> {
        let header = chunk.lines().next()?.strip_prefix("diff --git ")?;
        // Without ---/+++ lines (renames, binaries, mode changes) the header
        // names both sides.
        let (mut old, mut new) = match header.strip_prefix("a/").and_then(|h| h.split_once(" b/")) {
            Some((a, b)) => (Some(a.to_owned()), Some(b.to_owned())),
            None => (None, None),
        };
        let mut binary = false;
        for line in chunk.lines().skip(1) {
            if line.starts_with("@@") {
                break;
            }
            if line.starts_with("new file mode") {
                old = None;
            } else if line.starts_with("deleted file mode") {
                new = None;
            } else if let Some(path) = line.strip_prefix("rename from ") {
                old = Some(path.to_owned());
            } else if let Some(path) = line.strip_prefix("rename to ") {
                new = Some(path.to_owned());
            } else if line == "--- /dev/null" {
                old = None;
            } else if let Some(path) = line.strip_prefix("--- a/") {
                old = Some(path.to_owned());
            } else if line == "+++ /dev/null" {
                new = None;
            } else if let Some(path) = line.strip_prefix("+++ b/") {
                new = Some(path.to_owned());
            } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
                binary = true;
            }
        }
        (old.is_some() || new.is_some()).then_some(ChunkPaths { old, new, binary })
    }
}

/// New files git does not track yet, as diffs against nothing.
fn untracked(root: &Path) -> Result<String, GitError> {
    let listed = checked(root, &["ls-files", "--others", "--exclude-standard", "-z"], "the untracked files")?;
    let mut out = String::new();
    for file in listed.split('\0').filter(|f| !f.is_empty()) {
        // `git diff --no-index` exits 1 when the files differ, which they do.
        let diff = git(root, &["diff", "--no-color", "--no-ext-diff", "--no-index", "--", "/dev/null", file])?;
        out.push_str(&String::from_utf8_lossy(&diff.stdout));
    }
    Ok(out)
}

/// Splits a diff into its files, drops the ignored ones, and lists the rest.
fn without_ignored(diff: &str, ignored: &[String]) -> (String, Vec<String>) {
    let mut kept = String::with_capacity(diff.len());
    let mut files = Vec::new();
    // Compiled once: compiling the globs again for every file would cost
    // more than matching them.
    let ignored = crate::glob::Globs::lenient(ignored);
    for chunk in split_files(diff) {
        let Some(path) = chunk_path(chunk) else { continue };
        if ignored.is_match(&path) {
            continue;
        }
        kept.push_str(chunk);
        if !files.contains(&path) {
            files.push(path);
        }
    }
    (kept, files)
}

fn split_files(diff: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = diff
        .match_indices("diff --git ")
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || diff.as_bytes()[i - 1] == b'\n')
        .collect();
    starts.push(diff.len());
    starts.windows(2).map(|w| &diff[w[0]..w[1]]).collect()
}

/// The path a file's diff is about: the new side, or the old one for a deletion.
fn chunk_path(chunk: &str) -> Option<String> {
    let mut old = None;
    for line in chunk.lines().take(8) {
        if let Some(path) = line.strip_prefix("+++ b/") {
            return Some(path.to_owned());
        }
        if let Some(path) = line.strip_prefix("--- a/") {
            old = Some(path.to_owned());
        }
        if let Some(path) = line.strip_prefix("rename to ") {
            return Some(path.to_owned());
        }
    }
    // Binary files and pure mode changes have no ---/+++ lines.
    old.or_else(|| {
        let header = chunk.lines().next()?;
        header.rsplit_once(" b/").map(|(_, path)| path.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_files_are_left_out_of_the_diff() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\n\
                    diff --git a/gen/b.generated.ts b/gen/b.generated.ts\n--- a/gen/b.generated.ts\n+++ b/gen/b.generated.ts\n@@ -1 +1 @@\n-x\n+y\n\
                    diff --git a/gone.rs b/gone.rs\ndeleted file mode 100644\n--- a/gone.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        let (kept, files) = without_ignored(diff, &["*.generated.ts".to_owned()]);
        assert_eq!(files, ["src/a.rs", "gone.rs"]);
        assert!(!kept.contains("generated"));
        assert!(kept.contains("+++ /dev/null"));
    }

    #[test]
    fn scopes_parse() {
        assert_eq!(Scope::parse(None), Scope::All);
        assert_eq!(Scope::parse(Some("staged")), Scope::Staged);
        assert_eq!(Scope::parse(Some("main..HEAD")), Scope::Base("main..HEAD".into()));
    }
}
