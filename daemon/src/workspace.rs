//! Which folder a path belongs to: the git root (or the folder itself) that
//! holds an agent's working directory, whether one folder holds a path, and
//! paths made absolute and real (symlinks resolved) at the daemon's edge.

use std::path::{Path, PathBuf};

/// The workspace of `dir`: the nearest ancestor holding `.git`, else `dir`.
pub fn root_of(dir: &Path) -> PathBuf {
    dir.ancestors().find(|a| a.join(".git").exists()).unwrap_or(dir).to_owned()
}

/// Whether `folder` holds `path` (or is it), comparing whole components.
pub fn holds(folder: &Path, path: &Path) -> bool {
    path.starts_with(folder)
}

/// A path made absolute against `cwd` and stripped of `.` and `..`, without
/// touching the disk.
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() { path.to_owned() } else { cwd.join(path) };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A path as the daemon keys it: absolute, and with symlinks resolved, so a
/// folder opened through a link (macOS's `/tmp`, a linked checkout) and the
/// same folder reached by its real path are one workspace. The longest part
/// that exists is resolved; the rest (a file not yet written) is appended.
/// On Windows it keeps the form people and editors use (`Z:\repo`), not
/// the `\\?\Z:\repo` that std's `canonicalize` gives.
pub fn real(path: &Path, cwd: &Path) -> PathBuf {
    let absolute = absolute(path, cwd);
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = dunce::canonicalize(existing) {
            let mut out = resolved;
            out.extend(rest.iter().rev());
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// Where a path inside a folder really leads, once every symlink on the way
/// is resolved: what a check against reading outside the folder must look
/// at, since a link inside it can point anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Inside the folder, at this real path.
    Inside(PathBuf),
    /// Nothing is there (or a link on the way is broken).
    Missing,
    /// Outside the folder.
    Outside,
    /// Inside a `.git` folder (or file) within it: git's own data, whose
    /// config can hold credentials.
    Git,
}

/// Where the absolute `path` leads, seen from `folder`: both are resolved
/// (`canonicalize`) before the real path is checked to lie in the real
/// folder and outside any `.git` in it.
pub fn reach(folder: &Path, path: &Path) -> Reach {
    let Ok(real) = dunce::canonicalize(path) else { return Reach::Missing };
    let real_folder = dunce::canonicalize(folder).unwrap_or_else(|_| folder.to_owned());
    match real.strip_prefix(&real_folder) {
        Ok(inside) if inside.components().any(|c| c.as_os_str() == ".git") => Reach::Git,
        Ok(_) => Reach::Inside(real),
        Err(_) => Reach::Outside,
    }
}

/// Turns a `file://` URI (as MCP roots and some hosts send) into a path;
/// plain paths pass through.
pub fn path_from_uri(uri: &str) -> PathBuf {
    match uri.strip_prefix("file://") {
        Some(rest) => PathBuf::from(percent_decode(rest.strip_prefix("localhost").unwrap_or(rest))),
        None => PathBuf::from(uri),
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)] // symbolic links (Windows needs a privilege to make one)
    fn real_paths_resolve_links_and_keep_missing_tails() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real_dir = dir.path().join("real");
        std::fs::create_dir(&real_dir).expect("mkdir");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real_dir, &link).expect("symlink");
        let canonical = dunce::canonicalize(&real_dir).expect("canonicalize");
        assert_eq!(real(&link, Path::new("/")), canonical);
        assert_eq!(real(&link.join("new/file.rs"), Path::new("/")), canonical.join("new/file.rs"));
        assert_eq!(real(Path::new("link/../real"), dir.path()), canonical);
    }

    #[test]
    #[cfg(unix)] // symbolic links (Windows needs a privilege to make one)
    fn reach_resolves_links_before_it_checks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("docs")).expect("mkdir");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        std::fs::write(repo.join(".git/config"), "[core]\n").expect("write");
        std::fs::write(repo.join("docs/plan.md"), "# plan\n").expect("write");
        std::fs::write(dir.path().join("secret.txt"), "outside\n").expect("write");
        let link = |name: &str, to: &Path| std::os::unix::fs::symlink(to, repo.join(name)).expect("symlink");
        link("docs/design.md", &dir.path().join("secret.txt"));
        link("docs/linked.md", &repo.join("docs/plan.md"));
        link("docs/config", &repo.join(".git/config"));
        link("docs/dangling.md", &dir.path().join("gone"));
        let real_plan = dunce::canonicalize(repo.join("docs/plan.md")).expect("canonicalize");
        assert_eq!(reach(&repo, &repo.join("docs/plan.md")), Reach::Inside(real_plan.clone()));
        assert_eq!(reach(&repo, &repo.join("docs/linked.md")), Reach::Inside(real_plan));
        assert_eq!(reach(&repo, &repo.join("docs/design.md")), Reach::Outside);
        assert_eq!(reach(&repo, &repo.join(".git/config")), Reach::Git);
        assert_eq!(reach(&repo, &repo.join("docs/config")), Reach::Git);
        assert_eq!(reach(&repo, &repo.join("docs/dangling.md")), Reach::Missing);
        assert_eq!(reach(&repo, &repo.join("docs/none.md")), Reach::Missing);
    }

    #[test]
    fn holds_compares_components() {
        assert!(holds(Path::new("/ws"), Path::new("/ws/src/a.rs")));
        assert!(holds(Path::new("/ws"), Path::new("/ws")));
        assert!(!holds(Path::new("/ws"), Path::new("/ws2/a.rs")));
    }

    #[test]
    fn absolute_resolves_dots() {
        assert_eq!(absolute(Path::new("../b/./c"), Path::new("/ws/a")), PathBuf::from("/ws/b/c"));
        assert_eq!(absolute(Path::new("/x/y"), Path::new("/ws")), PathBuf::from("/x/y"));
    }

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(path_from_uri("file:///home/me/my%20proj"), PathBuf::from("/home/me/my proj"));
        assert_eq!(path_from_uri("/plain/path"), PathBuf::from("/plain/path"));
    }

    #[test]
    fn root_is_the_git_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("repo/.git")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("repo/src/deep")).expect("mkdir");
        assert_eq!(root_of(&dir.path().join("repo/src/deep")), dir.path().join("repo"));
        assert_eq!(root_of(dir.path()), dir.path());
    }
}
