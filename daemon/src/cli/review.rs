//! `parley review show`: print a workspace's review, one of its kept
//! revisions, or the list of them.

use std::path::Path;

use parley_protocol::methods as wire;
use serde_json::json;

use super::cli_opening;
use super::client::HubClient;
use super::shown::say;

pub async fn show(folder: &Path, json: bool) -> anyhow::Result<i32> {
    let Some(mut client) = HubClient::open(&cli_opening(true)).await? else {
        anyhow::bail!("no daemon is running");
    };
    let result: wire::ReviewGetResult = client.call(wire::REVIEW_GET, json!({ "workspace": folder })).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    if result.reviews.is_empty() {
        say!(
            "No review for {} yet. An agent working there shows one when it presents a review; `parley review request` runs a reviewer round.",
            folder.display()
        );
        return Ok(0);
    }
    for review in &result.reviews {
        print_review(review);
    }
    Ok(0)
}

/// `parley review show --revision N`.
pub async fn show_revision(folder: &Path, revision: u64, json: bool) -> anyhow::Result<i32> {
    let mut client = open().await?;
    let result: wire::ReviewGetResult =
        client.call(wire::REVIEW_GET, json!({ "workspace": folder, "revision": revision })).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    for review in &result.reviews {
        print_review(review);
    }
    Ok(0)
}

/// `parley review show --history`: the kept revisions, newest first.
pub async fn history(folder: &Path, json: bool) -> anyhow::Result<i32> {
    let mut client = open().await?;
    let result: wire::ReviewHistoryResult = client.call(wire::REVIEW_HISTORY, json!({ "workspace": folder })).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(0);
    }
    if result.revisions.is_empty() {
        say!("No review for {} yet, so no revisions.", folder.display());
        return Ok(0);
    }
    let several_bases = result.revisions.iter().any(|r| r.base_uri != result.revisions[0].base_uri);
    for revision in &result.revisions {
        let title = if revision.title.is_empty() { "(untitled)" } else { revision.title.as_str() };
        let base = if several_bases { format!("  ({})", revision.base_uri.display()) } else { String::new() };
        say!("{:>4}  {}  {:<40}  {title}{base}", revision.revision, revision.updated_at, revision.source.label);
    }
    say!("\nRead one with `parley review show --revision N`.");
    Ok(0)
}

async fn open() -> anyhow::Result<HubClient> {
    match HubClient::open(&cli_opening(true)).await? {
        Some(client) => Ok(client),
        None => anyhow::bail!("no daemon is running"),
    }
}

/// Prints a review for a terminal: a header, the markdown, and the references
/// that did not resolve.
pub fn print_review(review: &wire::Review) {
    say!(
        "── review of {} · revision {} · {} · {} ──",
        review.base_uri.display(),
        review.revision,
        review.source.label,
        review.updated_at
    );
    say!("{}", review.content.trim_end());
    let broken: Vec<&wire::Reference> = review.references.iter().filter(|r| r.problem.is_some()).collect();
    if !broken.is_empty() {
        say!("── {} reference(s) do not resolve ──", broken.len());
        for reference in broken {
            say!("  {}: {}", reference.text, reference.problem.as_deref().unwrap_or(""));
        }
    }
    say!();
}
