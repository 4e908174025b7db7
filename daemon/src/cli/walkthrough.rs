//! `parley walkthrough show|list`: an agent's walkthroughs at the terminal,
//! each comment with the lines it was placed on or why it was not.

use std::path::Path;

use anyhow::Context as _;
use parley_protocol::methods::{self as wire, WalkthroughBlock, WalkthroughPart, WalkthroughPlace};
use serde_json::json;

use super::cli_opening;
use super::client::HubClient;
use super::shown::say;

async fn client() -> anyhow::Result<HubClient> {
    HubClient::open(&cli_opening(true)).await?.context("no daemon is running")
}

/// `parley walkthrough show [ID]`: one walkthrough, the folder's latest
/// without an id.
pub async fn show(id: Option<&str>, folder: &Path, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let params = match id {
        Some(id) => json!({ "id": id }),
        None => json!({ "workspace": folder }),
    };
    let result: wire::WalkthroughGetResult = client.call(wire::WALKTHROUGH_GET, params).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    let Some(walkthrough) = result.walkthrough else {
        say!(
            "No walkthrough for {} yet: an agent working there presents one with its present_walkthrough tool.",
            folder.display()
        );
        return Ok(0);
    };
    say!(
        "{} (walkthrough {}, revision {}, by {}, {})",
        walkthrough.title,
        walkthrough.id,
        walkthrough.revision,
        walkthrough.presented_by,
        walkthrough.updated_at
    );
    for part in &walkthrough.parts {
        say!();
        match part {
            WalkthroughPart::Markdown { text } => say!("{}", text.trim_end()),
            WalkthroughPart::Block { index } => {
                if let Some(block) = walkthrough.blocks.iter().find(|b| b.index() == *index) {
                    print_block(block);
                }
            }
        }
    }
    Ok(0)
}

fn lines(place: &WalkthroughPlace) -> String {
    if place.start_line == place.end_line {
        format!("{}:{}", place.path, place.start_line + 1)
    } else {
        format!("{}:{}-{}", place.path, place.start_line + 1, place.end_line + 1)
    }
}

fn print_block(block: &WalkthroughBlock) {
    match block {
        WalkthroughBlock::Mermaid { index, source } => {
            say!("[{index}] diagram (mermaid):");
            for line in source.lines() {
                say!("    {line}");
            }
        }
        WalkthroughBlock::Comment { index, location, body, places, problem, candidates, .. } => {
            match problem {
                Some(why) => {
                    let could = candidates.iter().map(lines).collect::<Vec<_>>().join(", ");
                    let could = if could.is_empty() { String::new() } else { format!(" (could be {could})") };
                    say!("[{index}] comment at {location}, NOT PLACED: {why}{could}");
                }
                None => {
                    let on = places.iter().map(lines).collect::<Vec<_>>().join(", ");
                    say!("[{index}] comment on {on}:");
                }
            }
            for line in body.lines() {
                say!("    {line}");
            }
        }
        WalkthroughBlock::Gitdiff { index, range, problem, .. } => match problem {
            Some(why) => say!("[{index}] the change {range}: cannot be shown: {why}"),
            None => say!("[{index}] the change {range} (`git diff {range}`)"),
        },
        WalkthroughBlock::Action { index, button, clicks, problem, .. } => {
            if let Some(why) = problem {
                say!("[{index}] action: {why}");
                return;
            }
            let clicked = match clicks.last() {
                Some(last) => format!("clicked {} time(s), the last {}", clicks.len(), last.state),
                None => "not clicked".to_owned(),
            };
            say!("[{index}] button \"{button}\" ({clicked})");
        }
    }
}

/// `parley walkthrough list`: every walkthrough, newest first.
pub async fn list(json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let result: wire::WalkthroughListResult = client.call(wire::WALKTHROUGH_LIST, json!({})).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    if result.walkthroughs.is_empty() {
        say!("No walkthrough yet: an agent presents one with its present_walkthrough tool.");
        return Ok(0);
    }
    for w in &result.walkthroughs {
        say!(
            "{}  {}  revision {}, by {}, {} placed, {} not placed, {}",
            w.id,
            w.title,
            w.revision,
            w.presented_by,
            w.placed,
            w.unplaced,
            w.workspace.display()
        );
    }
    Ok(0)
}
