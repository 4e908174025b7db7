//! Searching text files line by line: one file, or every file under a
//! folder with `.gitignore` (and `.git`) respected, through the `ignore`
//! crate. What walkthrough locations (`search(path, regex)`) and the
//! fallback for symbol queries read. Files over [`MAX_FILE_BYTES`] and files
//! that are not UTF-8 are passed over; at most [`MAX_HITS`] hits are found.

use std::path::{Path, PathBuf};

use regex::Regex;

/// The largest file searched.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// The most hits one search answers.
pub const MAX_HITS: usize = 1000;

/// A matching line: the absolute file and its 0-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hit {
    pub file: PathBuf,
    pub line: u32,
}

/// Every line matching `regex` in `path` (a file, or the files under a
/// folder, only those ending in `.extension` when given), by file then line.
pub fn search(path: &Path, regex: &Regex, extension: Option<&str>) -> Vec<Hit> {
    let mut hits = Vec::new();
    let walker = ignore::WalkBuilder::new(path).hidden(false).filter_entry(|e| e.file_name() != ".git").build();
    let mut files: Vec<PathBuf> = walker
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .filter(|file| extension.is_none_or(|ext| file.extension().is_some_and(|e| e == ext)))
        .collect();
    files.sort();
    for file in files {
        if file.metadata().is_ok_and(|m| m.len() > MAX_FILE_BYTES) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for (line, content) in text.lines().enumerate() {
            if regex.is_match(content) {
                hits.push(Hit { file: file.clone(), line: line as u32 });
                if hits.len() >= MAX_HITS {
                    return hits;
                }
            }
        }
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lines_under_a_folder_without_what_git_ignores() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(".git")).expect("git dir");
        std::fs::create_dir_all(dir.path().join("src")).expect("src");
        std::fs::write(dir.path().join(".gitignore"), "target/\n").expect("write");
        std::fs::create_dir_all(dir.path().join("target")).expect("target");
        std::fs::write(dir.path().join("src/a.rs"), "fn main() {}\nfn other() {}\n").expect("write");
        std::fs::write(dir.path().join("src/b.txt"), "fn main in text\n").expect("write");
        std::fs::write(dir.path().join("target/gen.rs"), "fn main() {}\n").expect("write");
        let regex = Regex::new(r"fn main").expect("regex");
        let hits = search(dir.path(), &regex, None);
        let found: Vec<_> =
            hits.iter().map(|h| (h.file.strip_prefix(dir.path()).expect("inside").to_owned(), h.line)).collect();
        assert_eq!(found, [(PathBuf::from("src/a.rs"), 0), (PathBuf::from("src/b.txt"), 0)]);
        assert_eq!(search(dir.path(), &regex, Some("rs")).len(), 1);
    }
}
