//! A review's markdown, as `present_review` reads it: its file references
//! found and checked, its sections found and replaced.

use std::path::{Path, PathBuf};

use parley_daemon::reviews::{self, FileFacts, Presentation};

/// Any bytes as a review (tool arguments are JSON strings, so UTF-8).
///
/// Rules: each reference found is written in the document as found; a
/// checked reference either resolves inside the base or says why not; a
/// section replaced keeps the document's text before it.
pub fn review_references(data: &[u8]) {
    let Ok(doc) = std::str::from_utf8(data) else { return };
    let found = reviews::find_references(doc);
    for reference in &found {
        assert!(doc.contains(&reference.text), "{:?} is not in the document", reference.text);
    }
    let base = Path::new("/repo");
    // A file's facts from its name alone: some are missing, some are folders,
    // the rest have as many lines as their name has bytes.
    let facts = |path: &Path| match path.as_os_str().len() % 5 {
        0 => FileFacts::Missing,
        1 => FileFacts::NotAFile,
        n => FileFacts::Lines(u32::try_from(n * 7).expect("small")),
    };
    for checked in reviews::check_references(found, base, facts) {
        match (&checked.resolved, &checked.problem) {
            (Some(path), None) => assert!(path.starts_with(base), "{} resolved outside the base", path.display()),
            (None, Some(problem)) => assert!(!problem.is_empty()),
            other => panic!("a reference neither resolved nor said why: {other:?}"),
        }
    }
    for heading in reviews::headings(doc) {
        let replaced = reviews::update_section(doc, &heading.title, "replaced\n");
        assert!(replaced.contains("replaced\n"), "section {:?} was not replaced", heading.title);
    }
    let _ = reviews::title(doc);
    for mode in ["replace", "append", "update-section"] {
        let section = (mode == "update-section").then(|| doc.lines().next().unwrap_or("").to_owned());
        if let Ok(presentation) = Presentation::new(Some(doc.to_owned()), Some(mode), section) {
            let _ = presentation.apply(Some(doc));
        }
    }
    let _ = reviews::join_inside(base, &PathBuf::from(doc));
}
