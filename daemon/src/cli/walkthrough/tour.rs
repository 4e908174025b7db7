//! A walkthrough as a CodeTour `.tour` file (the `vsls-contrib/codetour`
//! schema): each placed comment a step on its lines, the text before it
//! that step's description; diagrams, diffs, buttons and comments that were
//! not placed kept as markdown in the step that follows them.

use parley_protocol::methods::{Walkthrough, WalkthroughBlock, WalkthroughPart, WalkthroughPlace};
use serde::Serialize;

/// A CodeTour tour.
#[derive(Debug, Serialize)]
pub struct Tour {
    #[serde(rename = "$schema")]
    schema: &'static str,
    title: String,
    description: String,
    /// The commit the walkthrough was presented on: CodeTour offers to
    /// check it out when the code has moved on.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
    steps: Vec<Step>,
}

/// One stop: on lines of a file, or (without `file`) text alone.
#[derive(Debug, Serialize)]
struct Step {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    /// 1-based: the line the step's text is shown under.
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    selection: Option<Selection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    description: String,
}

/// Lines highlighted, 1-based, from the start of the first to the start of
/// the line after the last (whole lines, without knowing their length).
#[derive(Debug, Serialize)]
struct Selection {
    start: Position,
    end: Position,
}

#[derive(Debug, Serialize)]
struct Position {
    line: u32,
    character: u32,
}

/// The walkthrough as a tour. Its steps follow the document: the markdown
/// before a placed comment (and any block that is not one) introduces it;
/// a comment on several places is a step on each; text after the last
/// comment ends the tour as a step of its own.
pub fn tour(walkthrough: &Walkthrough) -> Tour {
    let mut steps = Vec::new();
    let mut pending = String::new();
    for part in &walkthrough.parts {
        let block = match part {
            WalkthroughPart::Markdown { text } => {
                add(&mut pending, text);
                continue;
            }
            WalkthroughPart::Block { index } => walkthrough.blocks.iter().find(|b| b.index() == *index),
        };
        match block {
            Some(WalkthroughBlock::Comment { body, places, .. }) if !places.is_empty() => {
                for place in places {
                    let mut description = std::mem::take(&mut pending);
                    add(&mut description, body);
                    steps.push(on(place, description));
                }
            }
            Some(block) => add(&mut pending, &as_markdown(block)),
            None => {}
        }
    }
    if !pending.trim().is_empty() || steps.is_empty() {
        steps.push(Step {
            file: None,
            line: None,
            selection: None,
            title: Some(if steps.is_empty() { walkthrough.title.clone() } else { "Finally".to_owned() }),
            description: pending.trim().to_owned(),
        });
    }
    Tour {
        schema: "https://aka.ms/codetour-schema",
        title: walkthrough.title.clone(),
        description: format!(
            "Walkthrough {} (revision {}), presented by {} with Parley",
            walkthrough.id, walkthrough.revision, walkthrough.presented_by
        ),
        commit: walkthrough.head.clone(),
        steps,
    }
}

impl Tour {
    /// How many steps it has.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }
}

/// Appends a paragraph of markdown.
fn add(to: &mut String, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    if !to.is_empty() {
        to.push_str("\n\n");
    }
    to.push_str(text);
}

fn on(place: &WalkthroughPlace, description: String) -> Step {
    let (first, last) = (place.start_line + 1, place.end_line + 1);
    let selection = (last > first).then(|| Selection {
        start: Position { line: first, character: 1 },
        end: Position { line: last + 1, character: 1 },
    });
    Step { file: Some(place.path.clone()), line: Some(last), selection, title: None, description }
}

/// A block that is not a step, as markdown CodeTour shows.
fn as_markdown(block: &WalkthroughBlock) -> String {
    match block {
        WalkthroughBlock::Mermaid { source, .. } => format!("```mermaid\n{}\n```", source.trim_end()),
        WalkthroughBlock::Comment { location, body, problem, .. } => {
            let why = problem.as_deref().unwrap_or("it names no lines");
            format!("{body}\n\n*(This comment is about `{location}`, which was not placed: {why}.)*")
        }
        WalkthroughBlock::Gitdiff { range, problem: None, .. } => format!("*The change: `{range}`.*"),
        WalkthroughBlock::Gitdiff { range, problem: Some(why), .. } => {
            format!("*The change `{range}` (which cannot be shown: {why}).*")
        }
        WalkthroughBlock::Action { button, message, .. } => {
            format!("*In Parley, the button \"{button}\" asks the agent:* {message}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn walkthrough() -> Walkthrough {
        serde_json::from_value(json!({
            "id": "c0a3e1f2-5b7d-4e8a-9f10-2b3c4d5e6f70", "workspace": "/ws", "title": "Login", "base_uri": "/ws",
            "content": "", "revision": 2, "updated_at": "t", "presented_by": "claude-1", "head": "9f2c",
            "parts": [
                {"kind": "markdown", "text": "# Login\n\nWhy it changed.\n"},
                {"kind": "block", "index": 0},
                {"kind": "block", "index": 1},
                {"kind": "block", "index": 2},
                {"kind": "markdown", "text": "The end.\n"},
            ],
            "blocks": [
                {"kind": "mermaid", "index": 0, "source": "flowchart TD\n  a --> b\n"},
                {"kind": "comment", "index": 1, "location": "findReferences(read)", "body": "Read here.",
                 "places": [{"path": "src/a.rs", "start_line": 1, "end_line": 3}, {"path": "src/b.rs", "start_line": 0, "end_line": 0}]},
                {"kind": "comment", "index": 2, "location": "src/gone.rs:1", "body": "Gone.", "places": [],
                 "problem": "file src/gone.rs does not exist"},
            ],
            "references": [],
        }))
        .expect("a walkthrough")
    }

    #[test]
    fn comments_become_steps_on_their_lines_and_the_rest_their_text() {
        let tour = serde_json::to_value(tour(&walkthrough())).expect("json");
        assert_eq!(tour["ref"], "9f2c");
        assert_eq!(tour["title"], "Login");
        let steps = tour["steps"].as_array().expect("steps");
        assert_eq!(steps.len(), 3, "{tour:#}");
        assert_eq!(
            steps[0],
            json!({"file": "src/a.rs", "line": 4, "description":
                "# Login\n\nWhy it changed.\n\n```mermaid\nflowchart TD\n  a --> b\n```\n\nRead here.",
                "selection": {"start": {"line": 2, "character": 1}, "end": {"line": 5, "character": 1}}})
        );
        assert_eq!(steps[1], json!({"file": "src/b.rs", "line": 1, "description": "Read here."}));
        let last = steps[2]["description"].as_str().expect("text");
        assert!(last.starts_with("Gone.\n\n*(This comment is about `src/gone.rs:1`"), "{last}");
        assert!(last.ends_with("The end."), "{last}");
        assert!(steps[2].get("file").is_none());
    }
}
