//! `parley trust`: show a repository's `.parley.toml` with what it would run,
//! trust its exact content, or withdraw that trust. Trust is recorded in
//! Parley's data folder by the content's hash (`config::trust`), so it ends
//! the moment the file changes.

use std::path::Path;

use serde_json::json;

use super::shown::visible as shown;
use crate::config::{self, RepoConfig, Trust};

/// What `parley trust` was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Show,
    Trust,
    Revoke,
}

pub fn run(folder: &Path, action: Action, json: bool) -> anyhow::Result<i32> {
    let root = crate::git::repo_root(folder).unwrap_or_else(|_| folder.to_owned());
    let described = config::repo_config(&root).map_err(|e| anyhow::anyhow!("{e}"))?;
    if action == Action::Revoke {
        let had = config::trust::revoke(&root).map_err(|e| anyhow::anyhow!("{e}"))?;
        if json {
            println!("{}", json!({ "repository": root, "revoked": had }));
        } else if had {
            println!(
                "no longer trusting {}: its commands and checks are ignored again",
                root.join(config::REPO_CONFIG).display()
            );
        } else {
            println!("{} was not trusted: nothing to withdraw", root.display());
        }
        return Ok(0);
    }
    let Some((repo, text)) = described else {
        if json {
            println!("{}", json!({ "repository": root, "file": null, "trusted": false }));
        } else {
            println!(
                "{} has no {}: nothing to trust (your own config applies as it is)",
                root.display(),
                config::REPO_CONFIG
            );
        }
        return Ok(0);
    };
    if action == Action::Trust {
        config::trust::trust(&root, &repo.hash).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let trusted = action == Action::Trust || repo.trust == Trust::Trusted;
    if json {
        let guarded: serde_json::Map<String, serde_json::Value> =
            repo.guarded.iter().map(|(key, value)| ((*key).to_owned(), json!(value))).collect();
        println!(
            "{}",
            json!({
                "repository": root,
                "file": repo.path,
                "hash": repo.hash,
                "trusted": trusted,
                "changedSinceTrusted": !trusted && repo.trust == Trust::Changed,
                "guarded": guarded,
                "text": if action == Action::Show { Some(&text) } else { None },
            })
        );
        return Ok(0);
    }
    print_summary(&repo, trusted);
    match action {
        Action::Show => {
            println!("\n--- {} ---", repo.path.display());
            print!("{}", shown(&text));
            if !text.ends_with('\n') {
                println!();
            }
            println!("--- end ---");
            if !trusted && !repo.guarded.is_empty() {
                println!("\nTo let these settings apply, run `parley trust` in {}.", root.display());
            }
        }
        Action::Trust => {
            if repo.guarded.is_empty() {
                println!("trusted {} (it sets nothing that runs or loosens a check)", repo.path.display());
            } else {
                println!(
                    "trusted {}: the settings above apply on review rounds until the file changes (`parley trust --revoke` withdraws it)",
                    repo.path.display()
                );
            }
        }
        Action::Revoke => {}
    }
    Ok(0)
}

/// What the file would run or loosen, and where it stands.
fn print_summary(repo: &RepoConfig, trusted: bool) {
    let standing = match (trusted, &repo.trust) {
        (true, _) => "trusted",
        (false, Trust::Changed) => "NOT trusted: it changed since you trusted it",
        (false, _) => "NOT trusted",
    };
    println!("{}: {standing} ({})", repo.path.display(), repo.hash);
    if repo.guarded.is_empty() {
        println!("  it sets nothing that runs a command or loosens a check");
        return;
    }
    println!("  settings that apply only while it is trusted:");
    for (key, value) in &repo.guarded {
        let what = match *key {
            "review.reviewer" => "runs as you on every review round, with the diff on its stdin",
            "review.test_command" => "runs as you before every review round",
            "review.ignored_files" => "files left out of what the reviewer sees",
            "review.block_on" | "review.warn_on" => "which findings hold a round back",
            "review.audit_dir" => "where the audit tree is written",
            "secrets.allow_paths" => "files the secret scan skips",
            _ => "",
        };
        println!("    {key} = {}    ({what})", shown(value));
    }
}
