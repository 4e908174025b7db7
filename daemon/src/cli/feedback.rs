//! `parley feedback …`, `parley export` and `parley import`: threads from
//! the terminal, and JSON backups of everything.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use parley_protocol::jsonrpc::code;
use parley_protocol::methods::{self as wire, Position, Range};
use serde_json::json;

use super::cli_opening;
use super::client::{HubClient, Opening, Refused};
use super::shown::say;
use crate::feedback::FeedbackError;
use crate::workspace;

async fn client() -> anyhow::Result<HubClient> {
    HubClient::open(&cli_opening(true)).await?.context("no daemon is running")
}

/// What to add when a whole thread id names no thread.
const THREAD_ID_ADVICE: &str = "`parley feedback list --all` shows the threads with their ids \
     (a unique beginning of at least 4 characters is enough)";

/// A failed edit of thread `id`, with the advice the cause calls for. The
/// daemon words its refusals of an id that it cannot read, or that matches
/// no thread or several, by the one id rule already.
fn on_thread(id: &str, doing: &str, error: anyhow::Error) -> anyhow::Error {
    let unknown = error.downcast_ref::<Refused>().is_some_and(|r| r.message == FeedbackError::NotFound.to_string());
    if unknown {
        anyhow::anyhow!("cannot {doing} thread {id}: no thread has this id; {THREAD_ID_ADVICE}")
    } else {
        error.context(format!("cannot {doing} thread {id}"))
    }
}

/// Splits `FILE:LINE[-LINE]` into the file and 1-based lines.
pub(super) fn parse_location(location: &str) -> anyhow::Result<(PathBuf, u32, u32)> {
    let advice = "give the place as FILE:LINE or FILE:FIRST-LAST, e.g. src/auth.rs:14-21";
    let (file, lines) = location.rsplit_once(':').with_context(|| format!("{location:?} has no line: {advice}"))?;
    let (first, last) = match lines.split_once('-') {
        Some((a, b)) => (a, b),
        None => (lines, lines),
    };
    let parse = |n: &str| n.trim().parse::<u32>().ok().filter(|&n| n > 0);
    match (parse(first), parse(last)) {
        (Some(first), Some(last)) if first <= last => Ok((PathBuf::from(file), first, last)),
        _ => bail!("{location:?} has no valid line range: {advice}"),
    }
}

/// Comments on lines of a file of `folder`, the workspace the thread is
/// filed under; `named` says whether the user chose it (`--workspace`) or it
/// is the one holding the current directory.
pub async fn add(
    location: &str,
    message: &str,
    author: Option<String>,
    folder: &Path,
    named: bool,
    json: bool,
) -> anyhow::Result<i32> {
    let (file, first, last) = parse_location(location)?;
    let cwd = std::env::current_dir()?;
    let given = workspace::absolute(&file, &cwd);
    if !given.is_file() {
        bail!("{} is not a file", given.display());
    }
    // The daemon files a thread by the real path, as every window and agent
    // sees it; a link out of the folder leads elsewhere.
    let (file, folder) = (workspace::real(&given, &cwd), workspace::real(folder, &cwd));
    if !workspace::holds(&folder, &file) {
        let shown = if file == given {
            file.display().to_string()
        } else {
            format!("{} (really {})", given.display(), file.display())
        };
        if named {
            bail!("{shown} is not inside the workspace {} you named; name a folder that holds it", folder.display());
        }
        let suggestion = workspace::root_of(file.parent().unwrap_or(Path::new("/")));
        bail!(
            "{shown} is outside this workspace ({}), so its thread would not be listed with this workspace's; \
             to comment on it anyway, name the workspace it belongs to: \
             `parley feedback add --workspace {} {location} …`",
            folder.display(),
            suggestion.display(),
        );
    }
    let range = Range {
        start: Position { line: first - 1, character: 0 },
        // Past the end of the line: the daemon clamps it to the line's end.
        end: Position { line: last - 1, character: u32::MAX },
    };
    let author = author.unwrap_or_else(crate::config::user_name);
    let params = json!({ "path": file, "range": range, "body": message, "author": author });
    // The daemon files a thread under the connection's workspace that holds
    // the file; without one, under the git root holding it.
    let opening = Opening { workspaces: vec![folder.clone()], ..cli_opening(true) };
    let mut client = HubClient::open(&opening).await?.context("no daemon is running")?;
    let result: wire::ThreadResult =
        client.call(wire::FEEDBACK_CREATE, params).await.with_context(|| format!("cannot comment on {location}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result.thread)?);
    } else {
        let t = &result.thread;
        say!(
            "Thread {} on {}:{}-{} in workspace {}",
            t.id,
            t.path,
            t.range.start.line + 1,
            t.range.end.line + 1,
            t.workspace.display()
        );
    }
    Ok(0)
}

/// How many threads `feedback list` asks the daemon for at a time.
const LIST_PAGE: usize = 500;

pub async fn list(file: Option<PathBuf>, folder: &Path, all: bool, json: bool) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir()?;
    let path = file.as_deref().map(|given| listed_file(given, &cwd, folder));
    // The daemon lists a file's threads only within the folder asked about;
    // a file elsewhere would read as one without feedback.
    if let Some(path) = &path
        && !workspace::holds(&workspace::real(folder, &cwd), &workspace::real(path, &cwd))
    {
        bail!(
            "{} is outside the workspace {}; name the one holding it with --workspace",
            path.display(),
            folder.display()
        );
    }
    // A page at a time: a large workspace's listing (100,000 threads) would
    // not fit one answer, and is printed as it comes.
    let mut client = client().await?;
    // Who is at work, to say of a message to an agent that has gone.
    let working: Vec<String> = match json {
        true => Vec::new(),
        false => at_work(&mut client).await?.agents.into_iter().map(|a| a.name).collect(),
    };
    let (mut offset, mut printed, mut orphaned, mut listed) = (0, 0, 0, Vec::new());
    loop {
        let params = json!({
            "workspace": folder, "path": path, "include_resolved": all, "offset": offset, "limit": LIST_PAGE,
        });
        let page: wire::FeedbackListResult = match client.call(wire::FEEDBACK_LIST, params).await {
            Ok(page) => page,
            Err(e)
                if e.downcast_ref::<Refused>().is_some_and(|r| r.code == code::NOT_FOUND)
                    && path.as_ref().is_some_and(|p| !p.exists())
                    && workspace::real(&cwd, &cwd) != workspace::real(folder, &cwd) =>
            {
                let given = file.as_deref().unwrap_or(Path::new("")).display();
                bail!(
                    "no such file: {given} is neither in the current folder ({}) nor under the workspace root ({}); \
                     give a file's path relative to either, or no file to list every thread",
                    cwd.display(),
                    folder.display()
                );
            }
            Err(e) => return Err(e.context(format!("cannot list the feedback of {}", folder.display()))),
        };
        let count = page.threads.len();
        if json {
            listed.extend(page.threads);
        } else {
            for thread in &page.threads {
                print_thread(thread, &working);
            }
            orphaned += page.threads.iter().filter(|t| t.state == "orphaned" || t.state == "unreadable").count();
            printed += count;
        }
        // Threads made or resolved meanwhile move the pages' bounds; the
        // listing ends when no page follows (a page of long threads is cut
        // short of LIST_PAGE, and says where the next begins).
        match page.next_offset {
            Some(next) if next > offset => offset = next,
            _ => break,
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&listed)?);
        return Ok(0);
    }
    if printed == 0 {
        say!("No feedback in {}.", folder.display());
        return Ok(0);
    }
    say!("{printed} thread(s), {orphaned} orphaned.");
    Ok(0)
}

/// The file `feedback list FILE` means: FILE relative to the current folder
/// when there is one there, else relative to the workspace root, else as
/// given from the current folder, for the daemon to list (a deleted file's
/// threads) or refuse. In a subfolder the two readings differ: stderr says
/// which was taken when the other was possible.
fn listed_file(given: &Path, cwd: &Path, folder: &Path) -> PathBuf {
    let here = workspace::absolute(given, cwd);
    let from_root = workspace::absolute(given, folder);
    if given.is_absolute() {
        return here;
    }
    if here.exists() {
        if from_root != here && from_root.exists() {
            eprintln!(
                "parley: listing {} (from the current folder); {} (from the workspace root) exists too",
                here.display(),
                from_root.display()
            );
        }
        return here;
    }
    if from_root.exists() {
        eprintln!(
            "parley: no {} in the current folder; listing {} (from the workspace root)",
            given.display(),
            from_root.display()
        );
        return from_root;
    }
    here
}

fn print_thread(t: &wire::Thread, at_work: &[String]) {
    let resolved = if t.resolved { ", resolved" } else { "" };
    say!(
        "{}:{}-{}  [{}{resolved}]  {}  {}",
        t.path,
        t.range.start.line + 1,
        t.range.end.line + 1,
        t.state,
        standing(t),
        t.id
    );
    if let Some(f) = &t.finding {
        say!("    finding: {} {}, round {} of review {}", f.severity, f.category, f.round, f.review_id);
    }
    let quote = t.quote.lines().next().unwrap_or("");
    say!("    > {quote}");
    if t.state != "anchored" && t.original_quote != t.quote {
        say!("    (was: {})", t.original_quote.lines().next().unwrap_or(""));
    }
    for c in &t.comments {
        say!("    {} ({}): {}", c.author, c.created_at, c.body);
        for d in t.deliveries.iter().filter(|d| d.comment_id == c.id) {
            let gone = match d.state != "waiting" || at_work.contains(&d.agent) {
                true => String::new(),
                false => format!(
                    "; {} is not at work: `parley ask --resend {} --agent NAME` sends it to another",
                    d.agent, t.id
                ),
            };
            say!("      to {}: {}{gone}", d.agent, delivery_words(d));
        }
    }
}

/// Where a thread stands, as a person reads it at a glance: `open`, `seen
/// by claude`, `addressed by claude`, `addressed: its suggestion is applied`,
/// `resolved by you` or `resolved by claude`.
fn standing(t: &wire::Thread) -> String {
    let who = |name: &Option<String>| name.as_deref().unwrap_or("an agent").to_owned();
    match (t.standing.as_str(), t.resolved_by.as_deref()) {
        ("seen", _) => format!("seen by {}", who(&t.seen_by)),
        ("addressed", _) if t.addressed_by.as_deref() == Some(crate::feedback::APPLIED) => {
            "addressed: its suggestion is applied".into()
        }
        ("addressed", _) => format!("addressed by {}", who(&t.addressed_by)),
        ("resolved", Some("agent")) => format!("resolved by {}", who(&t.addressed_by)),
        ("resolved", _) => "resolved by a human".into(),
        (other, _) => other.to_owned(),
    }
}

pub async fn reply(id: &str, message: &str, author: Option<String>) -> anyhow::Result<i32> {
    let author = author.unwrap_or_else(crate::config::user_name);
    let params = json!({ "thread_id": id, "body": message, "author": author });
    let result: wire::ThreadResult =
        client().await?.call(wire::FEEDBACK_REPLY, params).await.map_err(|e| on_thread(id, "reply to", e))?;
    say!("Replied to {} ({} comment(s)).", result.thread.id, result.thread.comments.len());
    Ok(0)
}

pub async fn set_resolved(id: &str, resolved: bool) -> anyhow::Result<i32> {
    let method = if resolved { wire::FEEDBACK_RESOLVE } else { wire::FEEDBACK_REOPEN };
    let doing = if resolved { "resolve" } else { "reopen" };
    let result: wire::ThreadResult =
        client().await?.call(method, json!({ "thread_id": id })).await.map_err(|e| on_thread(id, doing, e))?;
    say!("{} {}.", if resolved { "Resolved" } else { "Reopened" }, result.thread.id);
    Ok(0)
}

/// `parley export [FILE]`. The daemon writes the export to a file itself, a
/// record at a time, so a store of any size is exported (no one message
/// could hold it); for stdout, or a pipe or device named as FILE, it writes
/// a private temporary file, copied from here.
pub async fn export(file: Option<PathBuf>) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let named = file.as_ref().map(|f| cwd.join(f));
    if let Some(path) = named.as_ref().filter(|path| std::fs::metadata(path).is_ok_and(|m| m.is_dir())) {
        bail!("cannot export to {}: it is a folder; name a file to write", path.display());
    }
    let regular = named.as_ref().filter(|path| std::fs::metadata(path).map_or(true, |m| m.is_file()));
    if let Some(path) = regular {
        let written: wire::ExportFileResult =
            client().await?.call(wire::STORE_EXPORT_FILE, json!({ "path": path })).await.context("cannot export")?;
        eprintln!(
            "Exported {} review(s), {} thread(s), {} session(s) and {} walkthrough(s) to {} ({}).",
            written.reviews,
            written.threads,
            written.sessions,
            written.walkthroughs,
            file.as_deref().unwrap_or(path).display(),
            size(written.bytes)
        );
        return Ok(0);
    }
    let dir = tempfile::tempdir().context("making a temporary folder for the export")?;
    let temporary = dir.path().join("export.json");
    let _: wire::ExportFileResult =
        client().await?.call(wire::STORE_EXPORT_FILE, json!({ "path": temporary })).await.context("cannot export")?;
    let mut from = std::fs::File::open(&temporary).with_context(|| format!("reading {}", temporary.display()))?;
    let copied = match &named {
        Some(path) => std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut to| std::io::copy(&mut from, &mut to))
            .with_context(|| format!("writing {}", path.display())),
        None => std::io::copy(&mut from, &mut std::io::stdout().lock()).map_err(anyhow::Error::from),
    };
    match copied {
        Ok(_) => Ok(0),
        // The reader stopped early (`parley export | head`): as every command does.
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) => {
            Ok(0)
        }
        Err(e) => Err(e),
    }
}

/// A size as people read it.
fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

/// `parley import FILE`. The daemon reads the file itself as it parses it,
/// so an export of any size is restored; a pipe (`parley import <(…)`,
/// `/dev/stdin`) is first copied to a private temporary file.
pub async fn import(file: &Path) -> anyhow::Result<i32> {
    let path = std::env::current_dir().context("reading the current directory")?.join(file);
    let meta = std::fs::metadata(&path).with_context(|| format!("cannot import {}", file.display()))?;
    if meta.is_dir() {
        bail!("cannot import {}: it is a folder; give the path of an export file", file.display());
    }
    let dir;
    let readable = match meta.is_file() {
        true => path,
        false => {
            dir = tempfile::tempdir().context("making a temporary folder for the import")?;
            let copy = dir.path().join("import.json");
            std::fs::File::open(&path)
                .and_then(|mut from| std::io::copy(&mut from, &mut std::fs::File::create(&copy)?))
                .with_context(|| format!("reading {}", file.display()))?;
            copy
        }
    };
    let counts: wire::ImportResult = client()
        .await?
        .call(wire::STORE_IMPORT_FILE, json!({ "path": readable }))
        .await
        .with_context(|| format!("cannot import {}", file.display()))?;
    say!(
        "Imported {} review(s), {} thread(s) and {} walkthrough(s) from {}.",
        counts.reviews,
        counts.threads,
        counts.walkthroughs,
        file.display()
    );
    Ok(0)
}

/// The agents at work, as the daemon lists them.
pub(super) async fn at_work(client: &mut HubClient) -> anyhow::Result<wire::AgentsListResult> {
    client.call(wire::AGENTS_LIST, json!({})).await
}

/// Where a message stands, in words: `waiting`, `delivered (tool-answer)`, …
pub(super) fn delivery_words(delivery: &wire::Delivery) -> String {
    match &delivery.via {
        Some(via) if delivery.state != "waiting" => format!("{} ({via})", delivery.state),
        _ => delivery.state.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_or_explain() {
        assert_eq!(parse_location("src/a.rs:14-21").expect("ok"), (PathBuf::from("src/a.rs"), 14, 21));
        assert_eq!(parse_location("a.rs:3").expect("ok"), (PathBuf::from("a.rs"), 3, 3));
        for bad in ["a.rs", "a.rs:0", "a.rs:9-3", "a.rs:x"] {
            let err = parse_location(bad).expect_err(bad).to_string();
            assert!(err.contains("FILE:LINE"), "{err}");
        }
    }
}
