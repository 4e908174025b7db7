//! The fenced blocks of a walkthrough: the info string names the block, a
//! `key: value` header follows, then a blank line and the body, exactly as
//! Symposium's agents write them:
//!
//! ````markdown
//! ```comment
//! location: findDefinition(`validateToken`)
//! icon: lightbulb
//!
//! Markdown explaining this location.
//! ```
//! ````
//!
//! A `mermaid` block has no header: its whole body is the diagram. The
//! older XML forms (`<comment location="…">`) are refused with an error that
//! shows the fenced form, since agents trained on Dialectic still write them.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// What a fenced block is, by its info string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Mermaid,
    Comment,
    GitDiff,
    Action,
}

impl BlockKind {
    fn from_info(info: &str) -> Option<BlockKind> {
        match info.split_whitespace().next()? {
            "mermaid" => Some(BlockKind::Mermaid),
            "comment" => Some(BlockKind::Comment),
            "gitdiff" => Some(BlockKind::GitDiff),
            "action" => Some(BlockKind::Action),
            _ => None,
        }
    }

    /// The info string that names it.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Mermaid => "mermaid",
            BlockKind::Comment => "comment",
            BlockKind::GitDiff => "gitdiff",
            BlockKind::Action => "action",
        }
    }

    /// The header keys it takes; a `mermaid` block takes none.
    fn keys(self) -> &'static [&'static str] {
        match self {
            BlockKind::Mermaid => &[],
            BlockKind::Comment => &["location", "icon"],
            BlockKind::GitDiff => &["range", "exclude_staged", "exclude_unstaged"],
            BlockKind::Action => &["button"],
        }
    }

    /// The header keys it cannot do without.
    fn required(self) -> &'static [&'static str] {
        match self {
            BlockKind::Mermaid => &[],
            BlockKind::Comment => &["location"],
            BlockKind::GitDiff => &["range"],
            BlockKind::Action => &["button"],
        }
    }
}

/// One of a walkthrough's blocks, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// 0-based, counting only Parley's four kinds of block.
    pub index: usize,
    pub kind: BlockKind,
    /// The whole fenced block in the document, fences included.
    pub span: Range<usize>,
    /// The header's keys and values, in the order written.
    pub header: Vec<(String, String)>,
    /// Everything after the header's blank line (the whole text for `mermaid`).
    pub body: String,
    /// What is wrong with this block alone (an unknown or missing key): it is
    /// reported and left out, and the other blocks still count.
    pub problem: Option<String>,
}

impl Block {
    /// The value of a header key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.header.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// A yes/no header key: absent is no.
    pub fn flag(&self, key: &str) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(false),
            Some("true" | "yes") => Ok(true),
            Some("false" | "no") => Ok(false),
            Some(other) => Err(format!("`{key}: {other}` must be true or false")),
        }
    }
}

/// Why a walkthrough could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlocksError {
    /// An XML element of Dialectic's first format.
    #[error("{found} is the old XML form, which Parley does not read; write it as a fenced block instead:\n\n{fenced}")]
    XmlForm { found: String, fenced: String },
}

/// Finds the walkthrough's blocks, or refuses the document when it uses the
/// XML forms.
pub fn find_blocks(doc: &str) -> Result<Vec<Block>, BlocksError> {
    let mut blocks = Vec::new();
    let mut open: Option<(BlockKind, usize, String)> = None;
    for (event, range) in Parser::new_ext(doc, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                if let Some(kind) = BlockKind::from_info(&info) {
                    open = Some((kind, range.start, String::new()));
                }
            }
            Event::Text(text) => {
                if let Some((_, _, body)) = open.as_mut() {
                    body.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((kind, start, text)) = open.take() {
                    blocks.push(read_block(blocks.len(), kind, start..range.end, &text));
                }
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                if let Some(refused) = xml_form(&html) {
                    return Err(refused);
                }
            }
            _ => {}
        }
    }
    Ok(blocks)
}

fn read_block(index: usize, kind: BlockKind, span: Range<usize>, text: &str) -> Block {
    let mut block = Block { index, kind, span, header: Vec::new(), body: String::new(), problem: None };
    if kind == BlockKind::Mermaid {
        block.body = text.to_owned();
        return block;
    }
    let mut rest = text;
    while let Some(line) = rest.split_inclusive('\n').next() {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim().is_empty() {
            rest = &rest[line.len()..];
            break;
        }
        let Some((key, value)) = header_line(bare) else { break };
        block.header.push((key.to_owned(), value.trim().to_owned()));
        rest = &rest[line.len()..];
    }
    block.body = rest.trim_end().to_owned();
    block.problem = header_problem(&block);
    block
}

/// `key: value` where the key is a lowercase word (`exclude_staged`,
/// `exclude-staged`).
fn header_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let word = !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c == '-');
    word.then_some((key, value))
}

fn header_problem(block: &Block) -> Option<String> {
    let name = block.kind.name();
    let known = block.kind.keys();
    for (key, _) in &block.header {
        let canonical = key.replace('-', "_");
        if !known.contains(&canonical.as_str()) {
            return Some(format!("a {name} block takes {}, not `{key}`", list(known)));
        }
    }
    for required in block.kind.required() {
        let given = block.header.iter().any(|(key, value)| key.replace('-', "_") == *required && !value.is_empty());
        if !given {
            return Some(format!(
                "a {name} block needs `{required}: …` on its first line, then a blank line before its text"
            ));
        }
    }
    None
}

fn list(keys: &[&str]) -> String {
    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
}

/// The refusal of a Dialectic XML element, showing its fenced form.
fn xml_form(html: &str) -> Option<BlocksError> {
    let trimmed = html.trim_start();
    let name = ["mermaid", "comment", "gitdiff", "action"].into_iter().find(|name| {
        trimmed
            .strip_prefix('<')
            .and_then(|rest| rest.strip_prefix(name))
            .is_some_and(|after| after.starts_with([' ', '>', '/', '\n', '\t']) || after.is_empty())
    })?;
    let found = trimmed.lines().next().unwrap_or(trimmed).trim().to_owned();
    let fenced = match name {
        "mermaid" => "```mermaid\nflowchart TD\n  A --> B\n```",
        "comment" => "```comment\nlocation: src/auth.rs:42\nicon: lightbulb\n\nWhat this code does.\n```",
        "gitdiff" => "```gitdiff\nrange: HEAD~1..HEAD\n```",
        _ => "```action\nbutton: Run the tests\n\nThe message you receive when the person clicks it.\n```",
    };
    Some(BlocksError::XmlForm { found: format!("`{found}`"), fenced: fenced.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYMPOSIUM: &str = "# The change\n\nIntro with [`src/lib.rs:3`][].\n\n```mermaid\nflowchart TD\n\n  A --> B\n```\n\n```comment\nlocation: findDefinition(`validateToken`)\nicon: lightbulb\n\nMarkdown **explaining** this.\n\nSecond paragraph.\n```\n\n```gitdiff\nrange: HEAD~2..HEAD\nexclude_unstaged: true\nexclude_staged: true\n```\n\n```action\nbutton: Run the tests\n\nPlease run the tests.\n```\n\n```rust\nfn not_a_block() {}\n```\n";

    #[test]
    fn reads_symposiums_four_blocks_in_order() {
        let blocks = find_blocks(SYMPOSIUM).expect("readable");
        let kinds: Vec<_> = blocks.iter().map(|b| b.kind).collect();
        assert_eq!(kinds, [BlockKind::Mermaid, BlockKind::Comment, BlockKind::GitDiff, BlockKind::Action]);
        assert_eq!(blocks[0].body, "flowchart TD\n\n  A --> B\n", "a blank line inside a diagram stays");
        assert_eq!(blocks[1].get("location"), Some("findDefinition(`validateToken`)"));
        assert_eq!(blocks[1].get("icon"), Some("lightbulb"));
        assert_eq!(blocks[1].body, "Markdown **explaining** this.\n\nSecond paragraph.");
        assert_eq!(blocks[2].get("range"), Some("HEAD~2..HEAD"));
        assert_eq!(blocks[2].flag("exclude_staged"), Ok(true));
        assert_eq!(blocks[3].get("button"), Some("Run the tests"));
        assert_eq!(blocks[3].body, "Please run the tests.");
        assert!(blocks.iter().all(|b| b.problem.is_none()), "{blocks:?}");
        assert!(
            SYMPOSIUM[blocks[3].span.clone()].starts_with("```action")
                && SYMPOSIUM[blocks[3].span.clone()].trim_end().ends_with("```")
        );
    }

    #[test]
    fn a_block_with_a_bad_header_is_reported_alone() {
        let doc = "```comment\nlocaton: src/a.rs:1\n\nText.\n```\n\n```action\nbutton: Go\n\nGo.\n```\n";
        let blocks = find_blocks(doc).expect("readable");
        assert!(blocks[0].problem.as_deref().is_some_and(|p| p.contains("`location`") && p.contains("`locaton`")));
        assert_eq!(blocks[1].problem, None);
        let doc = "```comment\n\nNo header.\n```\n";
        assert!(
            find_blocks(doc).expect("readable")[0]
                .problem
                .as_deref()
                .is_some_and(|p| p.contains("needs `location: …`"))
        );
    }

    #[test]
    fn crlf_headers_and_tildes_are_read() {
        let doc = "~~~comment\r\nlocation: src/a.rs:1-2\r\n\r\nText.\r\n~~~\r\n";
        let blocks = find_blocks(doc).expect("readable");
        assert_eq!(blocks[0].get("location"), Some("src/a.rs:1-2"));
        assert_eq!(blocks[0].body, "Text.");
    }

    #[test]
    fn the_xml_forms_are_refused_with_the_fenced_form() {
        for doc in [
            "Intro\n\n<comment location=\"src/a.rs:1\">Text</comment>\n",
            "<mermaid>\nflowchart TD\n</mermaid>\n",
            "See <gitdiff range=\"HEAD~1..HEAD\" /> here.\n",
            "<action button=\"Go\">go</action>\n",
        ] {
            let error = find_blocks(doc).expect_err(doc).to_string();
            assert!(error.contains("old XML form") && error.contains("```"), "{error}");
        }
        // Other HTML is markdown's business.
        assert!(find_blocks("<details><summary>More</summary>Text</details>\n").is_ok());
    }
}
