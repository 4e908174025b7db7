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
    command(root, args).output().map_err(GitError::Missing)
}

/// A git command in `root`, its output plain, whatever the daemon's
/// environment says about repositories and pathspecs.
fn command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off", "-c", "color.ui=never"])
        .args(args)
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    // Parley writes its pathspecs with their magic spelled out.
    for variable in ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"] {
        command.env_remove(variable);
    }
    command
}

fn checked(root: &Path, args: &[&str], what: &str) -> Result<String, GitError> {
    Ok(String::from_utf8_lossy(&checked_bytes(command(root, args), what)?).into_owned())
}

/// Runs `command`, answering its output, or what git said when it failed.
fn checked_bytes(mut command: Command, what: &str) -> Result<Vec<u8>, GitError> {
    let out = command.output().map_err(GitError::Missing)?;
    if !out.status.success() {
        let message = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(GitError::Git { what: what.to_owned(), message });
    }
    Ok(out.stdout)
}

/// The commit checked out in the repository holding `dir`, if any.
pub fn head(dir: &Path) -> Option<String> {
    let out = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD"]).ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Checks that git knows `revision` as a commit of the repository holding
/// `dir`; what git said when it does not.
pub fn verify_commit(dir: &Path, revision: &str) -> Result<(), String> {
    if revision.starts_with('-') {
        return Err(format!("`{revision}` is not a revision: it starts with -"));
    }
    let commit = format!("{revision}^{{commit}}");
    match git(dir, &["rev-parse", "--verify", "--quiet", "--end-of-options", &commit]) {
        Ok(out) if out.status.success() => Ok(()),
        Ok(_) => Err(format!("git knows no commit `{revision}` in {}", dir.display())),
        Err(e) => Err(e.to_string()),
    }
}

/// The text of `path` (relative to the repository's root, `/`-separated)
/// at `commit`, when git has that commit and the file in it as UTF-8 text.
pub fn file_at(root: &Path, commit: &str, path: &str) -> Option<String> {
    if commit.starts_with('-') || commit.is_empty() {
        return None;
    }
    let out = git(root, &["cat-file", "blob", &format!("{commit}:{path}")]).ok()?;
    out.status.success().then_some(())?;
    String::from_utf8(out.stdout).ok()
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
        diff.push_str(&untracked(root, &exclusions(ignored))?);
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
/// A round keeps at most this much text in all; the files past it are shown
/// as "too large", so a huge change cannot swamp the store or an editor.
const MAX_ROUND_BYTES: usize = 32 * 1024 * 1024;

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
    let mut kept = 0usize;
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
            let size = old.len() + new.len();
            let over_budget = kept + size > MAX_ROUND_BYTES;
            if !over_budget {
                kept += size;
            }
            let too_large = old.is_too_large() || new.is_too_large() || over_budget;
            let (old, new) = if over_budget { (Text::TooLarge, Text::TooLarge) } else { (old, new) };
            let (before, after) = if binary { (None, None) } else { without_cr_noise(old.text(), new.text()) };
            Ok(FileVersions {
                path: paths.new.clone().or_else(|| paths.old.clone()).unwrap_or_default(),
                old_path: paths.old,
                status,
                before,
                after,
                binary,
                too_large,
            })
        })
        .collect()
}

/// A file's two versions as a person reads them: with `\r\n` read as `\n`,
/// so a CRLF file's lines carry no `\r` in any editor's diff, and comments
/// on them quote none. A change of nothing but line endings is kept as it
/// is, or the diff would show no change at all where the endings were the
/// whole point of it.
fn without_cr_noise(before: Option<String>, after: Option<String>) -> (Option<String>, Option<String>) {
    use crate::line_endings::{as_lf, into_lf};
    if let (Some(old), Some(new)) = (&before, &after)
        && old != new
        && as_lf(old) == as_lf(new)
    {
        return (before, after);
    }
    (before.map(into_lf), after.map(into_lf))
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

    fn len(&self) -> usize {
        match self {
            Text::Utf8(text) => text.len(),
            _ => 0,
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

/// New files git does not track yet, as diffs against nothing, leaving out
/// the `excluded` pathspecs. Three git processes however many files there
/// are: the untracked files are listed (a folder that is untracked whole as
/// the folder), added with intent to add to a temporary index of their own,
/// and that index diffed against the working tree, which shows each as a new
/// file exactly as `git diff --no-index /dev/null FILE` would. The user's
/// index is never touched.
fn untracked(root: &Path, excluded: &[String]) -> Result<String, GitError> {
    // A file deleted between the listing and the adding fails the adding:
    // list again once.
    match untracked_once(root, excluded) {
        Err(GitError::Git { .. }) => untracked_once(root, excluded),
        done => done,
    }
}

fn untracked_once(root: &Path, excluded: &[String]) -> Result<String, GitError> {
    let mut list =
        vec!["ls-files", "--others", "--exclude-standard", "--directory", "--no-empty-directory", "-z", "--", "."];
    list.extend(excluded.iter().map(String::as_str));
    let listed = checked_bytes(command(root, &list), "the untracked files")?;
    let mut pathspecs = Vec::with_capacity(listed.len() * 2);
    for entry in listed.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        pathspecs.extend_from_slice(b":(literal)");
        pathspecs.extend_from_slice(entry);
        pathspecs.push(0);
    }
    if pathspecs.is_empty() {
        return Ok(String::new());
    }
    // Inside an untracked folder, the same files stay out.
    for exclusion in excluded {
        pathspecs.extend_from_slice(exclusion.as_bytes());
        pathspecs.push(0);
    }
    let index = tempfile::Builder::new().prefix("parley-untracked-").tempdir().map_err(|e| GitError::Git {
        what: "the untracked files".into(),
        message: format!("no temporary folder: {e}"),
    })?;
    let index_file = index.path().join("index");
    // `--ignore-errors`: a file git cannot add (a repository inside with no
    // commit yet) is left out, as `git diff --no-index` left it out, and the
    // rest are added; git then exits 1.
    let mut add = command(
        root,
        &[
            "-c",
            "advice.addEmbeddedRepo=false",
            "add",
            "--intent-to-add",
            "--ignore-errors",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ],
    );
    add.env("GIT_INDEX_FILE", &index_file).stdin(std::process::Stdio::piped());
    let mut adding = add
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(GitError::Missing)?;
    // git reads every pathspec before it adds anything, and says little.
    let fed = adding.stdin.take().map(|mut stdin| std::io::Write::write_all(&mut stdin, &pathspecs));
    let added = adding.wait_with_output().map_err(GitError::Missing)?;
    if !matches!(added.status.code(), Some(0 | 1)) || matches!(fed, Some(Err(_))) {
        let message = String::from_utf8_lossy(&added.stderr).trim().to_owned();
        return Err(GitError::Git { what: "the untracked files".into(), message });
    }
    let mut diff = command(root, &["diff", "--no-color", "--no-ext-diff"]);
    diff.env("GIT_INDEX_FILE", &index_file);
    let diff = String::from_utf8_lossy(&checked_bytes(diff, "the untracked files")?).into_owned();
    // A repository inside an untracked folder is added as a link to its
    // commit; it is not a file of this change.
    Ok(split_files(&diff).into_iter().filter(|chunk| !chunk.contains("\nnew file mode 160000\n")).collect())
}

/// The ignored globs that git can leave out itself, while listing untracked
/// files, as `:(exclude,glob)` pathspecs. Only the patterns that git's glob
/// pathspecs read exactly as [`crate::glob`] does are given (no classes, no
/// escapes, `**` only as a whole segment); the rest, like every ignored
/// file, are left out of the diff afterwards.
fn exclusions(ignored: &[String]) -> Vec<String> {
    ignored.iter().filter_map(|pattern| exclusion(pattern)).collect()
}

fn exclusion(pattern: &str) -> Option<String> {
    let anchored = pattern.starts_with('/');
    let directory = pattern.ends_with('/');
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    // git refuses a pathspec leaving the repository, where the glob
    // dialect's `..` is just a name matching nothing.
    let alike =
        |s: &&str| !s.contains(['[', ']', '\\']) && (!s.contains("**") || *s == "**") && !matches!(*s, "." | "..");
    if segments.is_empty() || !segments.iter().all(alike) {
        return None;
    }
    let mut glob = String::from(":(exclude,glob)");
    if !anchored && segments.len() == 1 && segments[0] != "**" {
        glob.push_str("**/");
    }
    glob.push_str(&segments.join("/"));
    if directory {
        glob.push_str("/**");
    }
    Some(glob)
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
    fn a_file_diff_names_both_sides() {
        let paths = |chunk: &str| {
            let found = ChunkPaths::of(chunk).expect("a file diff");
            (found.old, found.new, found.binary)
        };
        let some = |p: &str| Some(p.to_owned());
        assert_eq!(
            paths("diff --git a/a.rs b/a.rs\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-x\n+y\n"),
            (some("a.rs"), some("a.rs"), false)
        );
        assert_eq!(
            paths(
                "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"
            ),
            (None, some("new.txt"), false)
        );
        assert_eq!(
            paths("diff --git a/gone.rs b/gone.rs\ndeleted file mode 100644\n--- a/gone.rs\n+++ /dev/null\n"),
            (some("gone.rs"), None, false)
        );
        assert_eq!(
            paths("diff --git a/old.rs b/new.rs\nsimilarity index 100%\nrename from old.rs\nrename to new.rs\n"),
            (some("old.rs"), some("new.rs"), false)
        );
        assert_eq!(
            paths("diff --git a/logo.png b/logo.png\nBinary files a/logo.png and b/logo.png differ\n"),
            (some("logo.png"), some("logo.png"), true)
        );
    }

    /// Runs git in `repo` for a test, failing on an error.
    #[cfg(unix)] // only the test below uses it
    fn run(repo: &Path, args: &[&str]) {
        let out = command(repo, args).output().expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    #[cfg(unix)] // file names as bytes and symbolic links
    fn untracked_files_read_as_git_diff_no_index_shows_them_in_one_diff() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path();
        run(repo, &["init", "-q"]);
        std::fs::write(repo.join("tracked.txt"), "a\n").expect("write");
        run(repo, &["add", "tracked.txt"]);
        run(repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"]);
        std::fs::write(repo.join("tracked.txt"), "a\nchanged\n").expect("write");
        let write = |path: &str, bytes: &[u8]| {
            let file = repo.join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("mkdir");
            std::fs::write(file, bytes).expect("write");
        };
        write("new.txt", b"hello\nworld\n");
        write("empty.txt", b"");
        write("logo.bin", b"\x00\x01binary");
        write("deep/er/file.rs", b"fn main() {}\n");
        write("with space*.txt", b"odd name\n");
        write("gen/out.generated.ts", b"generated\n");
        write(".reviews/sessions/2026-01-01-001/request.json", b"{}\n");
        std::fs::write(repo.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")), "latin-1 name\n").expect("write");
        std::os::unix::fs::symlink("new.txt", repo.join("link")).expect("link");
        std::os::unix::fs::symlink("/nowhere", repo.join("dangling")).expect("link");
        // A repository of its own inside an untracked folder is not a file.
        std::fs::create_dir_all(repo.join("vendor/lib")).expect("mkdir");
        run(&repo.join("vendor/lib"), &["init", "-q"]);
        write("vendor/lib/x", b"x\n");
        write("vendor/keep.txt", b"kept\n");

        let ignored = ["/.reviews/".to_owned(), "*.generated.ts".to_owned()];
        let diff = untracked(repo, &exclusions(&ignored)).expect("diffs");

        // What one `git diff --no-index` per file printed before, for the
        // files not left out.
        let listed = command(repo, &["ls-files", "--others", "--exclude-standard", "-z"]).output().expect("lists");
        let mut expected = String::new();
        for file in listed.stdout.split(|&b| b == 0).filter(|f| !f.is_empty()) {
            if file.starts_with(b".reviews/") || file.ends_with(b".generated.ts") {
                continue;
            }
            let mut one = command(repo, &["diff", "--no-color", "--no-ext-diff", "--no-index", "--", "/dev/null"]);
            let out = one.arg(std::ffi::OsStr::from_bytes(file)).output().expect("diffs");
            expected.push_str(&String::from_utf8_lossy(&out.stdout));
        }
        assert_eq!(diff, expected);
        for wanted in ["b/new.txt", "b/empty.txt", "b/logo.bin", "b/deep/er/file.rs", "b/with space*.txt", "b/caf"] {
            assert!(diff.contains(wanted), "{wanted} is missing from\n{diff}");
        }
        for wanted in ["new file mode 120000", "+/nowhere", "b/vendor/keep.txt"] {
            assert!(diff.contains(wanted), "{wanted} is missing from\n{diff}");
        }
        for left_out in [".reviews", "generated", "tracked.txt", "Subproject", "vendor/lib"] {
            assert!(!diff.contains(left_out), "{left_out} is in\n{diff}");
        }
        // The user's own index is untouched.
        let status = command(repo, &["status", "--porcelain"]).output().expect("status");
        assert!(String::from_utf8_lossy(&status.stdout).contains("?? new.txt"));
    }

    #[test]
    fn ignored_globs_become_exclude_pathspecs_where_git_reads_them_alike() {
        let check = |pattern: &str| exclusion(pattern);
        assert_eq!(check("*.lock").as_deref(), Some(":(exclude,glob)**/*.lock"));
        assert_eq!(check("/.reviews/").as_deref(), Some(":(exclude,glob).reviews/**"));
        assert_eq!(check("fixtures/").as_deref(), Some(":(exclude,glob)**/fixtures/**"));
        assert_eq!(check("/.parley.toml").as_deref(), Some(":(exclude,glob).parley.toml"));
        assert_eq!(check("src/**/gen").as_deref(), Some(":(exclude,glob)src/**/gen"));
        for left_to_parley in ["[ab].txt", "a\\*b", "a**b", "", "/", "/../../", "./x"] {
            assert_eq!(check(left_to_parley), None, "{left_to_parley}");
        }
    }

    #[test]
    fn versions_read_crlf_as_lf_unless_the_endings_are_the_change() {
        let check = |before: Option<&str>, after: Option<&str>, want: (Option<&str>, Option<&str>)| {
            let got = without_cr_noise(before.map(Into::into), after.map(Into::into));
            assert_eq!((got.0.as_deref(), got.1.as_deref()), want, "{before:?} → {after:?}");
        };
        check(Some("a\r\nb\r\n"), Some("a\r\nc\r\n"), (Some("a\nb\n"), Some("a\nc\n")));
        check(None, Some("new\r\nfile\r\n"), (None, Some("new\nfile\n")));
        check(Some("gone\r\n"), None, (Some("gone\n"), None));
        check(Some("a\nb\r\n"), Some("a\r\nb\nc\n"), (Some("a\nb\n"), Some("a\nb\nc\n")));
        // Only the endings changed: shown as they are, a change.
        check(Some("a\nb\n"), Some("a\r\nb\r\n"), (Some("a\nb\n"), Some("a\r\nb\r\n")));
        check(Some("a\r\nb\r\n"), Some("a\r\nb\n"), (Some("a\r\nb\r\n"), Some("a\r\nb\n")));
        check(Some("same\r\n"), Some("same\r\n"), (Some("same\n"), Some("same\n")));
    }

    #[test]
    fn scopes_parse() {
        assert_eq!(Scope::parse(None), Scope::All);
        assert_eq!(Scope::parse(Some("staged")), Scope::Staged);
        assert_eq!(Scope::parse(Some("main..HEAD")), Scope::Base("main..HEAD".into()));
    }
}
