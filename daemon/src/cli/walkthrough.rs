//! `parley walkthrough show|list|act|resend|export`: an agent's
//! walkthroughs at the terminal, each comment with the lines it was placed
//! on or why it was not; a click of one of their buttons, and sending a
//! click on to another agent; one written as a CodeTour `.tour` file
//! (`tour`).

mod tour;

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
    let at_work: Vec<String> = match walkthrough.blocks.iter().any(|b| matches!(b, WalkthroughBlock::Action { .. })) {
        true => super::feedback::at_work(&mut client).await?.agents.into_iter().map(|a| a.name).collect(),
        false => Vec::new(),
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
                    print_block(block, &walkthrough, &at_work);
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

fn print_block(block: &WalkthroughBlock, walkthrough: &wire::Walkthrough, at_work: &[String]) {
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
        WalkthroughBlock::Gitdiff { index, range, problem, scope, .. } => match (problem, scope) {
            (Some(why), _) => say!("[{index}] the change {range}: cannot be shown: {why}"),
            (None, Some(scope)) => {
                say!("[{index}] the change {range} (`{}`)", crate::walkthrough::diff_scope::git_command(scope))
            }
            (None, None) => say!("[{index}] the change {range}"),
        },
        WalkthroughBlock::Action { index, button, clicks, problem, .. } => {
            if let Some(why) = problem {
                say!("[{index}] action: {why}");
                return;
            }
            let clicked = match clicks.last() {
                Some(last) => {
                    let agent = last.agent.as_deref().unwrap_or(&walkthrough.presented_by);
                    let stands = match last.state.as_str() {
                        "waiting" => format!("waiting for {agent}"),
                        state => format!("{state} by {agent}"),
                    };
                    format!("clicked {} time(s), the last {stands}", clicks.len())
                }
                None => "not clicked".to_owned(),
            };
            say!("[{index}] button \"{button}\" ({clicked})");
            for click in clicks.iter().filter(|c| c.state == "waiting") {
                let agent = click.agent.as_deref().unwrap_or(&walkthrough.presented_by);
                if !at_work.iter().any(|a| a == agent) {
                    say!(
                        "    {agent} is not at work; {}'s click {} waits for it: \
                         `parley walkthrough resend {} --to AGENT --click {}` sends it to another",
                        click.author,
                        click.id,
                        walkthrough.id,
                        click.id
                    );
                }
            }
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

/// `parley walkthrough act ID INDEX`: a person clicks action block `INDEX`;
/// its message goes to the agent that presented the walkthrough.
pub async fn act(id: &str, index: usize, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let params = json!({ "id": id, "block_index": index, "author": crate::config::user_name() });
    let acted: wire::WalkthroughActResult = client
        .call(wire::WALKTHROUGH_ACT, params)
        .await
        .with_context(|| format!("cannot click block {index} of walkthrough {id}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&acted)?);
        return Ok(0);
    }
    let w = &acted.walkthrough;
    let button = w.blocks.iter().find_map(|b| match b {
        WalkthroughBlock::Action { index: i, button, .. } if *i == index => Some(button.as_str()),
        _ => None,
    });
    let stands = match acted.click.state.as_str() {
        "waiting" => format!(
            "its message waits for {} (`parley walkthrough show {}` shows where it stands)",
            w.presented_by, w.id
        ),
        state => format!("its message is {state} ({})", acted.click.via.as_deref().unwrap_or("")),
    };
    say!("Clicked \"{}\" in walkthrough {} ({}): {stands}.", button.unwrap_or("?"), w.id, w.title);
    Ok(0)
}

/// `parley walkthrough resend ID --to AGENT [--click CLICK_ID]`: a click
/// waiting for an agent (one that has gone) sent on to another at work.
pub async fn resend(id: &str, to: &str, click: Option<&str>, json: bool) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let mut params = json!({ "id": id, "agent": to });
    if let Some(click) = click {
        params["click_id"] = json!(click);
    }
    let resent: wire::WalkthroughActResult = client
        .call(wire::WALKTHROUGH_RESEND, params)
        .await
        .with_context(|| format!("cannot send a click of walkthrough {id} to {to}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&resent)?);
        return Ok(0);
    }
    let w = &resent.walkthrough;
    let button = w.blocks.iter().find_map(|b| match b {
        WalkthroughBlock::Action { button, clicks, .. } if clicks.iter().any(|c| c.id == resent.click.id) => {
            Some(button.as_str())
        }
        _ => None,
    });
    let agent = resent.click.agent.as_deref().unwrap_or(to);
    let stands = match resent.click.state.as_str() {
        "waiting" => format!("it waits for {agent} (`parley walkthrough show {}` shows where it stands)", w.id),
        state => format!("it is {state} to {agent} ({})", resent.click.via.as_deref().unwrap_or("")),
    };
    say!(
        "Sent {}'s click of \"{}\" in walkthrough {} ({}) to {agent}: {stands}.",
        resent.click.author,
        button.unwrap_or("?"),
        w.id,
        w.title
    );
    Ok(0)
}

/// `parley walkthrough export ID [--out FILE]`: the walkthrough as a
/// CodeTour `.tour` file, to FILE or standard output.
pub async fn export(id: &str, out: Option<&Path>) -> anyhow::Result<i32> {
    let mut client = client().await?;
    let result: wire::WalkthroughGetResult = client.call(wire::WALKTHROUGH_GET, json!({ "id": id })).await?;
    let walkthrough = result.walkthrough.with_context(|| format!("there is no walkthrough {id}"))?;
    let text = serde_json::to_string_pretty(&tour::tour(&walkthrough))? + "\n";
    let Some(out) = out else {
        print!("{text}");
        return Ok(0);
    };
    std::fs::write(out, &text).with_context(|| {
        format!("cannot write {}: give a file in a folder that exists (CodeTour reads .tours/*.tour)", out.display())
    })?;
    say!(
        "Wrote walkthrough {} ({}) to {} as a CodeTour tour of {} step(s).",
        walkthrough.id,
        walkthrough.title,
        out.display(),
        tour::tour(&walkthrough).steps()
    );
    Ok(0)
}
