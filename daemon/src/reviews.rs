//! Reviews as documents: applying `present_review`'s three modes, finding the
//! sections of a markdown document, and finding and checking its file
//! references. Pure functions; the caller supplies file facts, so nothing here
//! touches the disk.

use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{BrokenLink, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// A review as the daemon holds it: one per base directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// The absolute directory references are resolved against.
    pub base: PathBuf,
    pub content: String,
    /// Counts the changes to this review, starting at 1.
    pub revision: u64,
    /// RFC 3339.
    pub updated_at: String,
    pub references: Vec<CheckedReference>,
    /// Who made this revision.
    pub source: Source,
}

/// Who made a revision of a review, so that a round's rendered review is
/// never mistaken for the walkthrough an agent presented before it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Source {
    /// An agent's `present_review`; `client` is the MCP client's own name
    /// when it gave one.
    Agent { client: Option<String> },
    /// A review round's rendered review.
    Round { review_id: String, round: u32 },
    /// A person, through a hub client.
    Person { name: Option<String> },
    /// Stored before Parley recorded sources.
    #[default]
    Unrecorded,
}

impl Source {
    /// The short kind name the wire and the store use.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Agent { .. } => "agent",
            Source::Round { .. } => "round",
            Source::Person { .. } => "person",
            Source::Unrecorded => "unrecorded",
        }
    }

    /// A phrase for people: "presented by claude-code", "round 2 of review
    /// 2026-11-21-001".
    pub fn label(&self) -> String {
        match self {
            Source::Agent { client: Some(client) } => format!("presented by {client}"),
            Source::Agent { client: None } => "presented by an agent".into(),
            Source::Round { review_id, round } => format!("round {round} of review {review_id}"),
            Source::Person { name: Some(name) } => format!("written by {name}"),
            Source::Person { name: None } => "written by a person".into(),
            Source::Unrecorded => "source not recorded".into(),
        }
    }
}

/// How many revisions of each folder's review the store keeps: enough for a
/// long review loop (a walkthrough and its updates, dozens of rounds), while
/// a folder that an agent presents to in a loop cannot grow without bound.
pub const KEPT_REVISIONS: u64 = 100;

/// The title of a review: its first heading, else its first non-empty line,
/// shortened for a list.
pub fn title(content: &str) -> String {
    let title = headings(content)
        .into_iter()
        .next()
        .map(|h| h.title)
        .or_else(|| content.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_owned))
        .unwrap_or_default();
    match title.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &title[..cut]),
        None => title,
    }
}

/// How `present_review` combines new content with the current review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Replace,
    UpdateSection,
    Append,
}

/// Why a `present_review` call was refused. The texts are the ones agents
/// already know from seed 000.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresentError {
    #[error("Content parameter is required")]
    ContentRequired,
    #[error("Mode must be 'replace', 'update-section', or 'append'")]
    InvalidMode,
    #[error("Section parameter required for update-section mode")]
    SectionRequired,
}

impl Mode {
    /// Parses the `mode` argument; absent means replace.
    pub fn parse(mode: Option<&str>) -> Result<Mode, PresentError> {
        match mode {
            None | Some("replace") => Ok(Mode::Replace),
            Some("update-section") => Ok(Mode::UpdateSection),
            Some("append") => Ok(Mode::Append),
            Some(_) => Err(PresentError::InvalidMode),
        }
    }
}

/// A validated `present_review` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Presentation {
    pub content: String,
    pub mode: Mode,
    pub section: Option<String>,
}

impl Presentation {
    /// Validates the raw arguments in the order seed 000 reports them.
    pub fn new(content: Option<String>, mode: Option<&str>, section: Option<String>) -> Result<Self, PresentError> {
        let content = content.filter(|c| !c.trim().is_empty()).ok_or(PresentError::ContentRequired)?;
        let mode = Mode::parse(mode)?;
        let section = section.filter(|s| !s.trim().is_empty());
        if mode == Mode::UpdateSection && section.is_none() {
            return Err(PresentError::SectionRequired);
        }
        Ok(Presentation { content, mode, section })
    }

    /// The document that results from applying this to `current`.
    pub fn apply(&self, current: Option<&str>) -> String {
        let current = current.unwrap_or("");
        match (self.mode, self.section.as_deref()) {
            (Mode::Replace, _) => self.content.clone(),
            (Mode::Append, _) => append(current, &self.content),
            (Mode::UpdateSection, Some(section)) => update_section(current, section, &self.content),
            (Mode::UpdateSection, None) => append(current, &self.content),
        }
    }
}

fn append(current: &str, content: &str) -> String {
    if current.trim().is_empty() {
        return content.to_owned();
    }
    format!("{}\n\n{}", current.trim_end(), content.trim_start_matches(['\n', '\r']))
}

/// A markdown heading found in a document: ATX (`## Title`) or setext
/// (`Title` underlined with `===` or `---`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// Byte offset of the start of the heading's first line.
    pub start: usize,
    /// Byte offset just past the heading (its underline, for a setext one).
    pub end: usize,
    pub level: usize,
    /// The title as written, inline markup included, without the `#`s.
    pub title: String,
}

/// What markdown `reviews` reads: CommonMark with the GitHub extensions
/// reviews are written in (tables, strikethrough, task lists, footnotes).
const MARKDOWN: Options = Options::ENABLE_TABLES
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_TASKLISTS)
    .union(Options::ENABLE_FOOTNOTES);

/// The document's own headings: not those in code blocks, HTML blocks,
/// block quotes or list items, which are not sections of the document.
pub fn headings(doc: &str) -> Vec<Heading> {
    let mut found = Vec::new();
    // How deep inside block quotes, lists and footnotes the parser is.
    let mut nesting = 0usize;
    // The heading being read: where it starts, its level, and the span of
    // its inline content so far.
    let mut open: Option<(usize, usize, Option<Range<usize>>)> = None;
    for (event, range) in Parser::new_ext(doc, MARKDOWN).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_) | Tag::List(_) | Tag::Item | Tag::FootnoteDefinition(_)) => nesting += 1,
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item | TagEnd::FootnoteDefinition) => {
                nesting = nesting.saturating_sub(1);
            }
            Event::Start(Tag::Heading { level, .. }) if nesting == 0 => {
                let line_start = doc[..range.start].rfind('\n').map_or(0, |newline| newline + 1);
                open = Some((line_start, level as usize, None));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((start, level, title)) = open.take() {
                    let title = title.map_or("", |span| doc[span].trim());
                    let end = start + doc[start..range.end].trim_end().len();
                    found.push(Heading { start, end, level, title: title.to_owned() });
                }
            }
            _ => {
                if let Some((_, _, title)) = &mut open {
                    *title = Some(match title.take() {
                        Some(span) => span.start.min(range.start)..span.end.max(range.end),
                        None => range,
                    });
                }
            }
        }
    }
    found
}

fn normalize_title(title: &str) -> String {
    title.trim().trim_start_matches('#').trim().to_lowercase()
}

/// Replaces the section titled `section` (any level, up to the next heading
/// of the same or a higher level) with `content`, or appends it when no such
/// section exists. Content that starts with its own heading replaces the old
/// heading too; otherwise the old heading is kept.
pub fn update_section(doc: &str, section: &str, content: &str) -> String {
    let wanted = normalize_title(section);
    let all = headings(doc);
    let content_heading = headings(content.trim_start()).first().is_some_and(|h| h.start == 0);
    let Some(index) = all.iter().position(|h| normalize_title(&h.title) == wanted) else {
        let block = if content_heading {
            content.trim_start().to_owned()
        } else {
            format!("## {}\n\n{}", section.trim().trim_start_matches('#').trim(), content.trim_start())
        };
        return append(doc, &block);
    };
    let found = &all[index];
    let end = all[index + 1..].iter().find(|h| h.level <= found.level).map(|h| h.start);
    let mut replacement = if content_heading {
        content.trim().to_owned()
    } else {
        format!("{}\n\n{}", &doc[found.start..found.end], content.trim())
    };
    let mut out = String::with_capacity(doc.len() + content.len());
    out.push_str(&doc[..found.start]);
    match end {
        Some(end) => {
            replacement.push_str("\n\n");
            out.push_str(&replacement);
            out.push_str(&doc[end..]);
        }
        None => {
            replacement.push('\n');
            out.push_str(&replacement);
        }
    }
    out
}

/// A file reference as written in a review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundReference {
    /// The reference as written.
    pub text: String,
    /// Its path, `/`-separated ([`crate::wire_path`]).
    pub path: String,
    pub line: Option<u32>,
    pub end_line: Option<u32>,
}

/// Finds `` [`path:line`][] ``, `` [`path:line-line`][] ``, `` [`path`][] ``
/// and links to local files (`[text](path#L10-L20)`, images and reference
/// links included) outside code.
///
/// A `` [`path:line`][] `` is a collapsed reference link with no definition,
/// which markdown renders as plain text; the parser reports it as a broken
/// link, and is told to read it as a link so its span comes out in order
/// with the others.
pub fn find_references(doc: &str) -> Vec<FoundReference> {
    let as_link = |broken: BrokenLink<'_>| {
        (broken.link_type == LinkType::Collapsed).then(|| (CowStr::from(""), CowStr::from("")))
    };
    let mut found = Vec::new();
    for (event, range) in Parser::new_with_broken_link_callback(doc, MARKDOWN, Some(as_link)).into_offset_iter() {
        let (Event::Start(Tag::Link { link_type, dest_url, .. })
        | Event::Start(Tag::Image { link_type, dest_url, .. })) = event
        else {
            continue;
        };
        // A collapsed link's span stops before its `[]`; the reference as
        // written includes it.
        let collapsed = matches!(link_type, LinkType::Collapsed | LinkType::CollapsedUnknown);
        let end = if collapsed && doc[range.end..].starts_with("[]") { range.end + 2 } else { range.end };
        let text = &doc[range.start..end];
        let reference = match link_type {
            LinkType::CollapsedUnknown => code_reference(text),
            LinkType::Inline | LinkType::Reference | LinkType::Collapsed | LinkType::Shortcut => {
                link_reference(text, &dest_url)
            }
            _ => None,
        };
        found.extend(reference);
    }
    found
}

/// `` [`path:line`][] ``, exactly: a code span alone between the brackets.
fn code_reference(text: &str) -> Option<FoundReference> {
    let target = text.strip_prefix("[`")?.strip_suffix("`][]")?;
    if target.is_empty() || target.contains('`') {
        return None;
    }
    let (path, line, end_line) = split_path_and_lines(target)?;
    Some(FoundReference { text: text.to_owned(), path, line, end_line })
}

fn split_path_and_lines(target: &str) -> Option<(String, Option<u32>, Option<u32>)> {
    if let Some((path, lines)) = target.rsplit_once(':')
        && !lines.is_empty()
        && lines.bytes().all(|b| b.is_ascii_digit() || b == b'-')
    {
        let (first, last) = match lines.split_once('-') {
            Some((a, b)) => (a.parse().ok()?, Some(b.parse().ok()?)),
            None => (lines.parse().ok()?, None),
        };
        return Some((crate::wire_path::slashed(path), Some(first), last));
    }
    if target.contains(char::is_whitespace) {
        return None;
    }
    Some((crate::wire_path::slashed(target), None, None))
}

/// A link to `target` (`path`, `path#L10`, `path#L10-L20`), written as
/// `text`, when it points at a local file.
fn link_reference(text: &str, target: &str) -> Option<FoundReference> {
    let target = target.trim();
    let is_url = target.contains("://") || target.starts_with("mailto:") || target.starts_with('#');
    if target.is_empty() || is_url {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let (line, end_line) = match anchor {
        None => (None, None),
        Some(anchor) => {
            let lines = anchor.strip_prefix('L')?;
            match lines.split_once('-') {
                Some((a, b)) => (Some(a.parse().ok()?), Some(b.trim_start_matches('L').parse().ok()?)),
                None => (Some(lines.parse().ok()?), None),
            }
        }
    };
    Some(FoundReference { text: text.to_owned(), path: crate::wire_path::slashed(path), line, end_line })
}

/// What the caller knows of a referenced file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFacts {
    Missing,
    NotAFile,
    /// It exists, but a symlink on the way leads outside the base.
    Outside,
    /// It really lies in a `.git` folder (through a symlink).
    InGit,
    /// A readable file with this many lines.
    Lines(u32),
}

/// A reference after checking it against the files under the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedReference {
    pub found: FoundReference,
    /// The absolute file, when the reference resolved.
    pub resolved: Option<PathBuf>,
    /// Why it did not resolve.
    pub problem: Option<String>,
}

/// Checks each reference: inside `base` (lexically here; where its links
/// lead is for `facts` to say) and not in its `.git`, an existing file,
/// lines in range.
pub fn check_references(
    found: Vec<FoundReference>,
    base: &Path,
    mut facts: impl FnMut(&Path) -> FileFacts,
) -> Vec<CheckedReference> {
    found
        .into_iter()
        .map(|reference| {
            let outcome = check_one(&reference, base, &mut facts);
            let (resolved, problem) = match outcome {
                Ok(path) => (Some(path), None),
                Err(problem) => (None, Some(problem)),
            };
            CheckedReference { found: reference, resolved, problem }
        })
        .collect()
}

fn check_one(r: &FoundReference, base: &Path, facts: &mut impl FnMut(&Path) -> FileFacts) -> Result<PathBuf, String> {
    let outside = || format!("{} is outside the review's baseUri {}", r.path, base.display());
    let in_git = || format!("{} is inside .git, git's own data, which a review does not show", r.path);
    let path = join_inside(base, Path::new(&r.path)).ok_or_else(outside)?;
    if path.strip_prefix(base).is_ok_and(|inside| inside.components().any(|c| c.as_os_str() == ".git")) {
        return Err(in_git());
    }
    let lines = match facts(&path) {
        FileFacts::Missing => return Err(format!("file {} does not exist under {}", r.path, base.display())),
        FileFacts::NotAFile => return Err(format!("{} is not a file", r.path)),
        FileFacts::Outside => return Err(format!("{} (through a symbolic link)", outside())),
        FileFacts::InGit => return Err(in_git()),
        FileFacts::Lines(n) => n,
    };
    if let Some(line) = r.line {
        if line == 0 {
            return Err("line numbers start at 1".into());
        }
        if line > lines {
            return Err(format!("line {line} is past the end of {} ({lines} lines)", r.path));
        }
        if let Some(end) = r.end_line {
            if end < line {
                return Err(format!("range {line}-{end} ends before it starts"));
            }
            if end > lines {
                return Err(format!("line {end} is past the end of {} ({lines} lines)", r.path));
            }
        }
    }
    Ok(path)
}

/// Joins `relative` onto `base` lexically; `None` when the result leaves `base`.
pub fn join_inside(base: &Path, relative: &Path) -> Option<PathBuf> {
    let mut joined = if relative.is_absolute() { PathBuf::new() } else { base.to_owned() };
    for component in relative.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => joined.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                joined.pop();
            }
            Component::Normal(part) => joined.push(part),
        }
    }
    joined.starts_with(base).then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_apply(current: &str, content: &str, mode: &str, section: Option<&str>, want: &str) {
        let p = Presentation::new(Some(content.into()), Some(mode), section.map(Into::into)).expect("valid");
        assert_eq!(p.apply(Some(current)), want, "mode {mode} section {section:?}");
    }

    #[test]
    fn sources_and_titles_read_well() {
        assert_eq!(Source::Agent { client: Some("claude-code".into()) }.label(), "presented by claude-code");
        assert_eq!(
            Source::Round { review_id: "2026-11-21-001".into(), round: 2 }.label(),
            "round 2 of review 2026-11-21-001"
        );
        assert_eq!(Source::default().kind(), "unrecorded");
        assert_eq!(title("intro\n\n# Login refactor\n\nbody"), "Login refactor");
        assert_eq!(title("\n  just text\nmore"), "just text");
        assert_eq!(title(""), "");
        assert_eq!(title(&"x".repeat(100)).chars().count(), 81);
    }

    #[test]
    fn modes() {
        check_apply("# Old\n", "# New\n", "replace", None, "# New\n");
        check_apply("# R\n\nbody\n", "\n## More\n\nx\n", "append", None, "# R\n\nbody\n\n## More\n\nx\n");
        check_apply("", "# First\n", "append", None, "# First\n");
        // Section replaced up to the next heading of the same level; the
        // nested heading inside it goes too.
        check_apply(
            "# R\n\n## A\n\na\n\n### A.1\n\na1\n\n## B\n\nb\n",
            "new a",
            "update-section",
            Some("A"),
            "# R\n\n## A\n\nnew a\n\n## B\n\nb\n",
        );
        // Content with its own heading replaces the old heading.
        check_apply(
            "# R\n\n## Implementation Details\n\nold\n",
            "## Updated Implementation Details\n\nnew",
            "update-section",
            Some("Implementation Details"),
            "# R\n\n## Updated Implementation Details\n\nnew\n",
        );
        // Any level, case-insensitive; the last section runs to the end.
        check_apply("# R\n\n### notes ###\n\nx\n", "y", "update-section", Some("Notes"), "# R\n\n### notes ###\n\ny\n");
        // Missing section: appended under a heading of its name.
        check_apply("# R\n\nbody\n", "text", "update-section", Some("Security"), "# R\n\nbody\n\n## Security\n\ntext");
        // A heading-like line inside a code fence is not a section.
        check_apply(
            "# R\n\n```\n## A\n```\n\n## A\n\nreal\n",
            "new",
            "update-section",
            Some("A"),
            "# R\n\n```\n## A\n```\n\n## A\n\nnew\n",
        );
    }

    #[test]
    fn argument_errors_use_the_seed_texts() {
        let err = |c: Option<&str>, m: Option<&str>, s: Option<&str>| {
            Presentation::new(c.map(Into::into), m, s.map(Into::into)).map(|_| ()).map_err(|e| e.to_string())
        };
        assert_eq!(err(None, None, None), Err("Content parameter is required".into()));
        assert_eq!(err(Some("  "), None, None), Err("Content parameter is required".into()));
        assert_eq!(
            err(Some("x"), Some("merge"), None),
            Err("Mode must be 'replace', 'update-section', or 'append'".into())
        );
        assert_eq!(
            err(Some("x"), Some("update-section"), None),
            Err("Section parameter required for update-section mode".into())
        );
        assert_eq!(err(Some("x"), Some("append"), None), Ok(()));
    }

    #[test]
    fn a_fence_closes_only_with_its_own_marker() {
        let doc = "~~~\n```\n## not a heading\n[`in/code.rs:1`][]\n~~~\n## Heading\n[`real.rs:2`][]\n";
        let titles: Vec<String> = headings(doc).into_iter().map(|h| h.title).collect();
        assert_eq!(titles, ["Heading"]);
        let paths: Vec<String> = find_references(doc).into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["real.rs"]);
    }

    #[test]
    fn sections_are_markdown_headings() {
        // Setext headings are sections, and keep their underline.
        check_apply(
            "Review\n======\n\nSecurity\n--------\n\nold\n\nNext\n----\n\nn\n",
            "new",
            "update-section",
            Some("Security"),
            "Review\n======\n\nSecurity\n--------\n\nnew\n\nNext\n----\n\nn\n",
        );
        // Content that starts with a setext heading brings its own.
        check_apply(
            "# R\n\n## A\n\nold\n",
            "Better A\n---\n\nnew",
            "update-section",
            Some("A"),
            "# R\n\nBetter A\n---\n\nnew\n",
        );
        // Not headings: indented code, a longer fence that a shorter one
        // does not close, an HTML block, a block quote, a list item, and a
        // `#` with no space after it.
        let doc = "# R\n\n    ## A\n\n````\n```\n## A\n```\n````\n\n<details>\n## A\n</details>\n\n\
                   > ## A\n\n- ## A\n\n#A\n\n## A\n\nreal\n";
        let found: Vec<(usize, String)> = headings(doc).into_iter().map(|h| (h.level, h.title)).collect();
        assert_eq!(found, [(1, "R".to_owned()), (2, "A".to_owned())]);
        let want = doc.replace("## A\n\nreal\n", "## A\n\nnew\n");
        check_apply(doc, "new", "update-section", Some("A"), &want);
        // A title keeps its inline markup and loses its closing `#`s.
        let titles: Vec<String> = headings("## The *big* `one` ##\n").into_iter().map(|h| h.title).collect();
        assert_eq!(titles, ["The *big* `one`"]);
    }

    #[test]
    fn references_only_where_markdown_has_links() {
        let doc = "In a code span: `` [`span.rs:1`][] ``; escaped: \\[`escaped.rs:1`][].\n\n\
                   \x20   [`indented.rs:1`][]\n\n\
                   <div>\n[`html.rs:1`][]\n</div>\n\n\
                   ````\n```\n[`fenced.rs:1`][]\n```\n````\n\n\
                   > Quoted [`quoted.rs:2`][], in a [table](t.rs#L3) | x |\n\n\
                   | a | b |\n| - | - |\n| [`cell.rs:4`][] | [titled](titled.rs#L5 \"a title\") |\n\n\
                   ![diagram](docs/arch.png) [spaced](<my file.rs#L6>) [ref][r] <https://example.com/a.rs>\n\n\
                   [r]: defined.rs#L7\n";
        let got: Vec<(String, Option<u32>)> = find_references(doc).into_iter().map(|r| (r.path, r.line)).collect();
        let want = [
            ("quoted.rs", Some(2)),
            ("t.rs", Some(3)),
            ("cell.rs", Some(4)),
            ("titled.rs", Some(5)),
            ("docs/arch.png", None),
            ("my file.rs", Some(6)),
            ("defined.rs", Some(7)),
        ];
        let want: Vec<(String, Option<u32>)> = want.into_iter().map(|(p, l)| (p.to_owned(), l)).collect();
        assert_eq!(got, want);
        // The text is the reference as written, for clients to find it.
        let texts: Vec<String> = find_references(doc).into_iter().map(|r| r.text).collect();
        assert_eq!(texts[0], "[`quoted.rs:2`][]");
        assert_eq!(texts[3], "[titled](titled.rs#L5 \"a title\")");
        assert_eq!(texts[6], "[ref][r]");
    }

    #[test]
    fn finds_references_in_every_form() {
        let doc = "See [`src/auth.ts:23`][] and [`src/a.rs:3-9`][], [`README.md`][].\n\
                   Also [login](src/login.ts#L10-L20), [x](lib.rs#L4) and [docs](docs/plan.md).\n\
                   Not [web](https://example.com/a.rs#L1), not [anchor](#top).\n\
                   ```\n[`in/code.rs:1`][]\n```\n";
        let got: Vec<(String, Option<u32>, Option<u32>)> =
            find_references(doc).into_iter().map(|r| (r.path, r.line, r.end_line)).collect();
        let want = vec![
            ("src/auth.ts".to_owned(), Some(23), None),
            ("src/a.rs".to_owned(), Some(3), Some(9)),
            ("README.md".to_owned(), None, None),
            ("src/login.ts".to_owned(), Some(10), Some(20)),
            ("lib.rs".to_owned(), Some(4), None),
            ("docs/plan.md".to_owned(), None, None),
        ];
        assert_eq!(got, want);
        assert_eq!(find_references("[`src/auth.ts:23`][]")[0].text, "[`src/auth.ts:23`][]");
    }

    #[test]
    fn checks_references_against_files() {
        let base = Path::new("/ws");
        let facts = |p: &Path| match p.to_str() {
            Some("/ws/src/a.rs") => FileFacts::Lines(10),
            Some("/ws/src") => FileFacts::NotAFile,
            Some("/ws/link/secret.txt") => FileFacts::Outside,
            Some("/ws/docs/config") => FileFacts::InGit,
            Some("/ws/.git/config") => FileFacts::Lines(8),
            _ => FileFacts::Missing,
        };
        let doc = "[`src/a.rs:3`][] [`src/a.rs:11`][] [`src/a.rs:4-12`][] [`nope.rs:1`][] \
                   [`../etc/passwd:1`][] [`src:1`][] [`src/a.rs:0`][] [`/ws/src/a.rs:2`][] \
                   [`link/secret.txt:1`][] [`docs/config:1`][] [`.git/config:1`][] [`src/../.git/config:1`][]";
        let problems: Vec<Option<String>> =
            check_references(find_references(doc), base, facts).into_iter().map(|r| r.problem).collect();
        assert_eq!(
            problems,
            vec![
                None,
                Some("line 11 is past the end of src/a.rs (10 lines)".into()),
                Some("line 12 is past the end of src/a.rs (10 lines)".into()),
                Some("file nope.rs does not exist under /ws".into()),
                Some("../etc/passwd is outside the review's baseUri /ws".into()),
                Some("src is not a file".into()),
                Some("line numbers start at 1".into()),
                None,
                Some("link/secret.txt is outside the review's baseUri /ws (through a symbolic link)".into()),
                Some("docs/config is inside .git, git's own data, which a review does not show".into()),
                Some(".git/config is inside .git, git's own data, which a review does not show".into()),
                Some("src/../.git/config is inside .git, git's own data, which a review does not show".into()),
            ]
        );
    }
}
